//! Scoring one window: predicted handover steps against the true ones, per second and at the slot
//! boundaries, summed per predictor and location.

use super::report::{Predictor, Row, ratio, ratio_or_zero};
use crate::dish::{Score, score_handovers};
use crate::forecast::{HORIZON_STEPS, HandoverSteps};
use crate::sky::{SLOT_LENGTH_S, next_slot_boundary};
use chrono::{DateTime, Duration as ChronoDuration, Utc};

/// Tolerance of the per-second F1 and of the boundary decisions, seconds (+/- 1 s: a handover
/// dated one step early or late by a rounding of the decision instant still counts).
pub const TOLERANCE_S: i64 = 1;

/// Everything scored for one predictor at one location.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Tally {
    windows: usize,
    tp: usize,
    fp: usize,
    fn_: usize,
    abs_count_error: usize,
    boundaries: usize,
    boundaries_right: usize,
    first_boundaries: usize,
    first_boundaries_right: usize,
    true_handovers: usize,
    predicted_handovers: usize,
    /// Windows without a forecast (counted by the caller, scored as all-zero forecasts).
    pub(super) unavailable: usize,
}

impl Tally {
    pub(super) fn add(&mut self, other: &Tally) {
        self.windows += other.windows;
        self.tp += other.tp;
        self.fp += other.fp;
        self.fn_ += other.fn_;
        self.abs_count_error += other.abs_count_error;
        self.boundaries += other.boundaries;
        self.boundaries_right += other.boundaries_right;
        self.first_boundaries += other.first_boundaries;
        self.first_boundaries_right += other.first_boundaries_right;
        self.true_handovers += other.true_handovers;
        self.predicted_handovers += other.predicted_handovers;
        self.unavailable += other.unavailable;
    }

    pub(super) fn score(
        &mut self,
        t0: DateTime<Utc>,
        predicted: &HandoverSteps,
        truth: &HandoverSteps,
    ) {
        let instants = |steps: &HandoverSteps| -> Vec<DateTime<Utc>> {
            (0..HORIZON_STEPS)
                .filter(|&k| steps.is_handover(k))
                .map(|k| t0 + ChronoDuration::seconds(k as i64 + 1))
                .collect()
        };
        let score = score_handovers(
            &instants(predicted),
            &instants(truth),
            ChronoDuration::seconds(TOLERANCE_S),
        );
        self.windows += 1;
        self.tp += score.true_positives;
        self.fp += score.false_positives;
        self.fn_ += score.false_negatives;
        self.abs_count_error += predicted.count().abs_diff(truth.count());
        self.true_handovers += truth.count();
        self.predicted_handovers += predicted.count();
        for (i, step) in boundary_steps(t0).into_iter().enumerate() {
            let near = |steps: &HandoverSteps| {
                let lo = step.saturating_sub(TOLERANCE_S as usize);
                (lo..=step + TOLERANCE_S as usize).any(|k| steps.is_handover(k))
            };
            let right = near(predicted) == near(truth);
            self.boundaries += 1;
            self.boundaries_right += usize::from(right);
            if i == 0 {
                self.first_boundaries += 1;
                self.first_boundaries_right += usize::from(right);
            }
        }
    }

    pub(super) fn row(&self, predictor: Predictor, location: &str) -> Row {
        let score = Score {
            true_positives: self.tp,
            false_positives: self.fp,
            false_negatives: self.fn_,
        };
        let per_window = |x: usize| ratio_or_zero(x, self.windows);
        Row {
            predictor,
            location: location.to_owned(),
            windows: self.windows,
            f1: score.f1(),
            precision: score.precision(),
            recall: score.recall(),
            true_positives: self.tp,
            false_positives: self.fp,
            false_negatives: self.fn_,
            mae_handovers_per_window: per_window(self.abs_count_error),
            boundary_accuracy: ratio(self.boundaries_right, self.boundaries),
            boundaries: self.boundaries,
            first_boundary_accuracy: ratio(self.first_boundaries_right, self.first_boundaries),
            mean_true_handovers: per_window(self.true_handovers),
            mean_predicted_handovers: per_window(self.predicted_handovers),
            unavailable: self.unavailable,
        }
    }
}

/// The forecast steps that contain a slot boundary of `(t0, t0 + 120 s]`: a boundary at
/// `t0 + d` lies in step `ceil(d) - 1` (docs/architecture.md, "The forecast contract").
fn boundary_steps(t0: DateTime<Utc>) -> Vec<usize> {
    let end = t0 + ChronoDuration::seconds(HORIZON_STEPS as i64);
    let mut steps = Vec::new();
    let mut b = next_slot_boundary(t0);
    while b <= end {
        if let Some(nanos) = (b - t0).num_nanoseconds()
            && nanos > 0
        {
            steps.push(((nanos - 1) / 1_000_000_000) as usize);
        }
        b += ChronoDuration::seconds(SLOT_LENGTH_S);
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use std::time::Duration;

    #[test]
    fn boundary_steps_follow_the_forecast_step_convention() {
        // 12:00:05 -> boundaries at :12 (7 s, step 6), :27, :42, :57, then 12:01:12 ... up to
        // 12:02:05: 8 boundaries.
        let t0 = Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 5).unwrap();
        let steps = boundary_steps(t0);
        assert_eq!(steps, vec![6, 21, 36, 51, 66, 81, 96, 111]);
        // A decision exactly on a boundary: the next boundary is 15 s later, step 14.
        let t0 = Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 12).unwrap();
        assert_eq!(boundary_steps(t0)[0], 14);
        assert_eq!(boundary_steps(t0).len(), 8);
    }

    #[test]
    fn a_perfect_forecast_scores_one_and_an_empty_one_zero() {
        let t0 = Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 5).unwrap();
        let truth = HandoverSteps::from_offsets([Duration::from_secs(7)]).unwrap();
        let mut perfect = Tally::default();
        perfect.score(t0, &truth, &truth);
        let row = perfect.row(Predictor::Orbital, "x");
        assert_eq!((row.f1, row.boundary_accuracy), (1.0, 1.0));
        let mut empty = Tally::default();
        empty.score(t0, &HandoverSteps::NONE, &truth);
        let row = empty.row(Predictor::Mirror, "x");
        assert_eq!(row.f1, 0.0);
        assert_eq!(row.boundary_accuracy, 7.0 / 8.0);
        assert_eq!(row.mae_handovers_per_window, 1.0);
        // One step late is within the tolerance.
        let late = HandoverSteps::from_offsets([Duration::from_secs(8)]).unwrap();
        let mut t = Tally::default();
        t.score(t0, &late, &truth);
        assert_eq!(t.row(Predictor::Hybrid, "x").f1, 1.0);
    }
}

//! The result of an evaluation: the predictors compared, their figures per location and overall,
//! the hybrid's identifications, every window, and the text table.

use crate::orbit::ServingPolicy;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::fmt;
use std::fmt::Write as _;

/// The location name of the rows that aggregate all locations.
pub const OVERALL: &str = "all";

/// The predictors compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Predictor {
    /// [`Mirror`](crate::predict::Mirror): the last 120 s repeated (paper section III-D).
    Mirror,
    /// [`Orbital`](crate::predict::Orbital): the catalogue and the assumed policy.
    Orbital,
    /// [`Hybrid`](crate::predict::Hybrid): the observed serving satellite, then the orbital model.
    Hybrid,
}

impl Predictor {
    /// All three, in report order.
    pub const ALL: [Predictor; 3] = [Predictor::Mirror, Predictor::Orbital, Predictor::Hybrid];

    /// The source tag.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mirror => "mirror",
            Self::Orbital => "orbital",
            Self::Hybrid => "hybrid",
        }
    }

    /// The predictor's place in [`Predictor::ALL`] (and in per-predictor arrays).
    pub(super) fn index(self) -> usize {
        match self {
            Self::Mirror => 0,
            Self::Orbital => 1,
            Self::Hybrid => 2,
        }
    }
}

impl fmt::Display for Predictor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One predictor's figures at one location (or over all of them, location [`OVERALL`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The predictor.
    pub predictor: Predictor,
    /// The location's name, or [`OVERALL`].
    pub location: String,
    /// Windows scored.
    pub windows: usize,
    /// Per-second F1, +/- [`TOLERANCE_S`](crate::eval::TOLERANCE_S) s, over all windows' counts.
    pub f1: f64,
    /// TP / (TP + FP).
    pub precision: f64,
    /// TP / (TP + FN).
    pub recall: f64,
    /// Predicted handovers matched to a true one.
    pub true_positives: usize,
    /// Predicted handovers with no true one nearby.
    pub false_positives: usize,
    /// True handovers no prediction matched.
    pub false_negatives: usize,
    /// Mean |predicted - true| handovers per window.
    pub mae_handovers_per_window: f64,
    /// Share of slot boundaries where "handover or not" was predicted right.
    pub boundary_accuracy: f64,
    /// Slot boundaries judged.
    pub boundaries: usize,
    /// Boundary accuracy at the first boundary after the decision instant only: where knowing
    /// the current serving satellite matters most (the keep rule decides it from the current
    /// satellite, [`crate::orbit::StarlinkConfig`]).
    pub first_boundary_accuracy: f64,
    /// Mean true handovers per window.
    pub mean_true_handovers: f64,
    /// Mean predicted handovers per window.
    pub mean_predicted_handovers: f64,
    /// Windows where the predictor had no forecast (scored as an all-zero forecast).
    pub unavailable: usize,
}

/// How often the hybrid identified the serving satellite, and how often rightly.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdentificationRow {
    /// The location's name, or [`OVERALL`].
    pub location: String,
    /// Forecasts made.
    pub forecasts: usize,
    /// Forecasts based on an identified satellite.
    pub identified: usize,
    /// Identifications that named the truth's serving satellite of the matched slot.
    pub correct: usize,
    /// Fallbacks because no recent slot had enough observed points.
    pub no_observation: usize,
    /// Fallbacks because no satellite matched within the threshold.
    pub no_match: usize,
}

impl IdentificationRow {
    /// Correct identifications over identifications (1 when none was made).
    pub fn accuracy(&self) -> f64 {
        ratio(self.correct, self.identified)
    }

    /// Identifications over forecasts (1 when no forecast was made).
    pub fn coverage(&self) -> f64 {
        ratio(self.identified, self.forecasts)
    }
}

/// One window: the true and predicted handover counts (what the CLI plots).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowRecord {
    /// The location's name.
    pub location: String,
    /// Index of the window at its location, from 0.
    pub index: usize,
    /// The decision instant (UTC dish time).
    pub start: DateTime<Utc>,
    /// True handovers in the window.
    pub truth: usize,
    /// Handovers the mirror predicted.
    pub mirror: usize,
    /// Handovers the orbital predictor predicted.
    pub orbital: usize,
    /// Handovers the hybrid predicted.
    pub hybrid: usize,
    /// The hybrid's basis: `identified`, `no-observation` or `no-match`.
    pub hybrid_basis: &'static str,
    /// The NORAD number the hybrid identified, if it did.
    pub hybrid_norad_id: Option<u64>,
    /// Whether that identification was the truth's serving satellite.
    pub hybrid_correct: Option<bool>,
}

impl WindowRecord {
    /// The count `predictor` predicted.
    pub fn predicted(&self, predictor: Predictor) -> usize {
        match predictor {
            Predictor::Mirror => self.mirror,
            Predictor::Orbital => self.orbital,
            Predictor::Hybrid => self.hybrid,
        }
    }
}

/// What was evaluated, in words and numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// The truth catalogue's origin.
    pub truth_catalogue: String,
    /// Its number of propagatable satellites.
    pub truth_satellites: usize,
    /// The predictors' catalogue, described.
    pub predictor_catalogue: String,
    /// The truth policy, described.
    pub truth_policy: String,
    /// The predictors' policy, described.
    pub predictor_policy: String,
    /// Dish time at the start of the run.
    pub start: DateTime<Utc>,
    /// Windows per location.
    pub windows_per_location: usize,
    /// Window length, s (the forecast horizon).
    pub window_s: u64,
    /// Time between decision instants, s.
    pub spacing_s: f64,
    /// Time before the first decision instant, s.
    pub warmup_s: f64,
    /// Tolerance of the F1 and boundary metrics, s.
    pub tolerance_s: i64,
}

/// The result of [`evaluate`](crate::eval::evaluate).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    /// What was evaluated.
    pub scenario: Scenario,
    /// Per predictor: one row per location, then the [`OVERALL`] row.
    pub rows: Vec<Row>,
    /// The hybrid's identifications per location, then overall.
    pub identification: Vec<IdentificationRow>,
    /// Every window, location by location.
    pub series: Vec<WindowRecord>,
}

impl EvalReport {
    /// The row of `predictor` at `location` (or [`OVERALL`]).
    pub fn row(&self, predictor: Predictor, location: &str) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.predictor == predictor && r.location == location)
    }

    /// The overall row of `predictor`.
    pub fn overall(&self, predictor: Predictor) -> Option<&Row> {
        self.row(predictor, OVERALL)
    }

    /// The report as an aligned text table: the scenario, one line per predictor and location,
    /// and the hybrid's identification figures.
    pub fn table(&self) -> String {
        let s = &self.scenario;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "truth: {} ({} satellites), policy {}",
            s.truth_catalogue, s.truth_satellites, s.truth_policy
        );
        let _ = writeln!(
            out,
            "predictors: {}, policy {}",
            s.predictor_catalogue, s.predictor_policy
        );
        let _ = writeln!(
            out,
            "{} windows of {} s per location from {} (warm-up {} s, one every {} s), tolerance +/- {} s",
            s.windows_per_location,
            s.window_s,
            s.start.format("%Y-%m-%d %H:%M:%S UTC"),
            s.warmup_s,
            s.spacing_s,
            s.tolerance_s
        );
        let location_width = self
            .rows
            .iter()
            .map(|r| r.location.len())
            .max()
            .unwrap_or(0)
            .max("location".len());
        let _ = writeln!(
            out,
            "{:<9} {:<lw$} {:>7} {:>6} {:>9} {:>6} {:>9} {:>8} {:>8} {:>10} {:>10} {:>5}",
            "predictor",
            "location",
            "windows",
            "F1",
            "precision",
            "recall",
            "MAE/win",
            "boundary",
            "1st bdry",
            "true/win",
            "pred/win",
            "n/a",
            lw = location_width
        );
        for r in &self.rows {
            let _ = writeln!(
                out,
                "{:<9} {:<lw$} {:>7} {:>6.3} {:>9.3} {:>6.3} {:>9.2} {:>8.3} {:>8.3} {:>10.2} {:>10.2} {:>5}",
                r.predictor.as_str(),
                r.location,
                r.windows,
                r.f1,
                r.precision,
                r.recall,
                r.mae_handovers_per_window,
                r.boundary_accuracy,
                r.first_boundary_accuracy,
                r.mean_true_handovers,
                r.mean_predicted_handovers,
                r.unavailable,
                lw = location_width
            );
        }
        let _ = writeln!(
            out,
            "hybrid identification: {:<lw$} {:>9} {:>10} {:>7} {:>8} {:>8} {:>8} {:>8}",
            "location",
            "forecasts",
            "identified",
            "correct",
            "accuracy",
            "coverage",
            "no-obs",
            "no-match",
            lw = location_width
        );
        for r in &self.identification {
            let _ = writeln!(
                out,
                "                       {:<lw$} {:>9} {:>10} {:>7} {:>8.3} {:>8.3} {:>8} {:>8}",
                r.location,
                r.forecasts,
                r.identified,
                r.correct,
                r.accuracy(),
                r.coverage(),
                r.no_observation,
                r.no_match,
                lw = location_width
            );
        }
        out
    }
}

/// A short description of a policy for reports.
pub fn describe_policy(policy: &ServingPolicy) -> String {
    match policy {
        ServingPolicy::Starlink(c) => format!(
            "starlink (min elevation {}, target {}, pole-ward weight {}, GSO exclusion {}, keep margin {})",
            c.min_elevation_deg,
            c.target_elevation_deg,
            c.poleward_weight_deg,
            c.gso_exclusion_deg,
            c.keep_margin_deg
        ),
        ServingPolicy::Delay(c) => format!(
            "delay (min elevation {}, margin {} ms)",
            c.min_elevation_deg, c.margin_ms
        ),
    }
}

/// `num / den`, or 1 when there is nothing to count (no error made).
pub(super) fn ratio(num: usize, den: usize) -> f64 {
    if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    }
}

/// `num / den`, or 0 when there is nothing to count.
pub(super) fn ratio_or_zero(num: usize, den: usize) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

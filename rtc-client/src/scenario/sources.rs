//! Handover forecasts derived from a scenario's truth, for the policy of a call over the
//! scenario's links (`sim --handover`, and `call --handover mirror` with `--link`).
//!
//! - `oracle`: the scenario's ground truth for the next 120 s (evaluation only: no deployment
//!   knows the future exactly).
//! - `mirror`: the paper's live predictor (section III-D), the last 120 s repeated, fed with the
//!   ground-truth handovers as virtual time passes them, as a perfect detector would see them.
//! - `orbital`: SGP4 over the scenario's own constellation at both ends of the path (where the
//!   scenario has orbits), with the scenario's serving policy; a step is a handover if either
//!   end changes satellite in it, as the oracle counts them.
//! - `calibrated`: every boundary of the scenario's slot grid (or, on a path without slots, the
//!   orbital instants) with the switch rate learned from the boundaries virtual time has passed,
//!   as a detector would judge them (docs/architecture.md, "The calibrated predictor").

use super::orbit::OrbitPredictorInputs;
use super::timeline::HandoverTimeline;
use chrono::{DateTime, Utc};
use handover_predictor::predict::{Calibrated, Mirror, Orbital, SLOT};
use handover_predictor::{
    Forecast, ForecastSource, HORIZON, HORIZON_STEPS, HandoverSource, HandoverSteps, NoHandovers,
    STEP, SourceError,
};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A [`Mirror`] fed with the ground truth up to each decision instant.
pub struct TruthMirror {
    mirror: Mirror,
    epoch: Instant,
    /// Handovers not yet seen, as offsets from the epoch, ascending.
    pending: VecDeque<Duration>,
}

impl TruthMirror {
    /// A mirror over `timeline`, with the call starting at `epoch`. On a slotted path the
    /// default forecast (before 120 s were watched) puts its 8 handovers on the slot grid.
    pub fn new(timeline: &HandoverTimeline, epoch: Instant) -> Self {
        let mut mirror = Mirror::new(epoch);
        if timeline.slotted
            && let Some(&first) = timeline.boundaries_ms.first()
        {
            let phase = Duration::from_millis(first % 15_000);
            if !phase.is_zero() {
                mirror = mirror.with_default_phase(phase);
            }
        }
        Self {
            mirror,
            epoch,
            pending: timeline
                .instants_ms()
                .into_iter()
                .map(Duration::from_millis)
                .collect(),
        }
    }
}

impl HandoverSource for TruthMirror {
    fn name(&self) -> &str {
        "mirror"
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        let seen = now.saturating_duration_since(self.epoch);
        while self.pending.front().is_some_and(|&h| h <= seen) {
            if let Some(h) = self.pending.pop_front() {
                self.mirror.observe(self.epoch + h);
            }
        }
        self.mirror.forecast(now)
    }
}

/// Orbital forecasts at both ends of an orbit path, merged.
pub struct BothEnds {
    local: Orbital,
    peer: Orbital,
    epoch: Instant,
    update: Duration,
}

impl BothEnds {
    /// Predictors for both ends of the path `inputs` describe, for a call that starts at `epoch`
    /// (virtual) and `start` (UTC).
    pub fn new(inputs: &OrbitPredictorInputs, epoch: Instant, start: DateTime<Utc>) -> Self {
        let at = |observer| {
            Orbital::new(
                Arc::clone(&inputs.catalogue),
                observer,
                inputs.policy,
                epoch,
                start,
            )
        };
        Self {
            local: at(inputs.local),
            peer: at(inputs.peer),
            epoch,
            update: inputs.update,
        }
    }
}

impl HandoverSource for BothEnds {
    fn name(&self) -> &str {
        "orbital"
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        let local = self.local.forecast(now)?;
        let peer = self.peer.forecast(now)?;
        let (a, b) = (local.handover(), peer.handover());
        let merged: Vec<u8> = a.iter().zip(b.iter()).map(|(x, y)| x | y).collect();
        let failed = |e| SourceError::Failed {
            source_name: "orbital".into(),
            error: Box::new(e),
        };
        let steps = HandoverSteps::from_bits(&merged).map_err(failed)?;
        if self.update <= Duration::from_secs(1) {
            return Ok(Forecast::new(ForecastSource::Orbital, now, steps));
        }
        Forecast::from_instants(
            ForecastSource::Orbital,
            now,
            on_update_grid(&steps, now, self.epoch, self.update),
        )
        .map_err(failed)
    }
}

/// Where the handovers of `steps` (forecast at `now`) take effect when the topology is
/// recomputed every `update` from `epoch`: the first update at or after each step's right edge,
/// within the horizon. The grid is the emulator's, so these instants are exact.
fn on_update_grid(
    steps: &HandoverSteps,
    now: Instant,
    epoch: Instant,
    update: Duration,
) -> Vec<Instant> {
    let horizon = now + HORIZON;
    let update_ns = update.as_nanos().max(1);
    let mut instants: Vec<Instant> = (0..HORIZON_STEPS)
        .filter(|&k| steps.is_handover(k))
        .filter_map(|k| {
            let edge = now + STEP * (k as u32 + 1);
            let since = edge.saturating_duration_since(epoch).as_nanos();
            let snapped = since.div_ceil(update_ns) * update_ns;
            let at = epoch + Duration::from_nanos(u64::try_from(snapped).ok()?);
            (at > now && at <= horizon).then_some(at)
        })
        .collect();
    instants.dedup();
    instants
}

/// How long after a boundary its verdict is known: a handover within 1 s of a boundary counts
/// for it (the +-1 s of the evaluation's F1, docs/architecture.md, "The calibrated predictor"),
/// so the verdict waits until that second has passed.
const VERDICT_DELAY: Duration = Duration::from_secs(1);

/// A [`Calibrated`] predictor fed the scenario's boundaries, and whether each switched, as
/// virtual time passes them (strictly causal: a boundary is judged 1 s after it).
pub struct TruthCalibrated {
    calibrated: Calibrated,
    epoch: Instant,
    /// Boundaries not yet judged: offset from the epoch, and whether a handover fell within 1 s.
    pending: VecDeque<(Duration, bool)>,
}

impl TruthCalibrated {
    /// The predictor for `timeline`, with the call starting at `epoch`: on a slotted path the
    /// grid through its boundaries; otherwise the orbital instants of `orbits` (both ends of
    /// the path, as `orbital` forecasts them); with neither, no boundary at all.
    pub fn new(
        timeline: &HandoverTimeline,
        orbits: Option<(&OrbitPredictorInputs, DateTime<Utc>)>,
        epoch: Instant,
    ) -> Self {
        let grid = match timeline.boundaries_ms.as_slice() {
            [first, second, ..] if timeline.slotted => Some((*first, second - first)),
            [first] if timeline.slotted => Some((*first, SLOT.as_millis() as u64)),
            _ => None,
        };
        let calibrated = match (grid, orbits) {
            (Some((first, period)), _) => Calibrated::grid(
                epoch + Duration::from_millis(first),
                Duration::from_millis(period.max(1)),
            )
            .unwrap_or_else(|_| Calibrated::over(Box::new(NoHandovers))),
            (None, Some((inputs, start))) => {
                Calibrated::over(Box::new(BothEnds::new(inputs, epoch, start)))
            }
            (None, None) => Calibrated::over(Box::new(NoHandovers)),
        };
        let instants = timeline.instants_ms();
        let pending = timeline
            .boundaries_ms
            .iter()
            .map(|&b| {
                let switched = instants.iter().any(|&h| h.abs_diff(b) <= 1000);
                (Duration::from_millis(b), switched)
            })
            .collect();
        Self {
            calibrated,
            epoch,
            pending,
        }
    }
}

impl HandoverSource for TruthCalibrated {
    fn name(&self) -> &str {
        "calibrated"
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        let seen = now.saturating_duration_since(self.epoch);
        while let Some(&(b, switched)) = self.pending.front() {
            if b + VERDICT_DELAY > seen {
                break;
            }
            self.pending.pop_front();
            self.calibrated.observe(self.epoch + b, switched);
        }
        self.calibrated.forecast(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::orbit::End;
    use crate::scenario::timeline::Handover;

    fn slots(switch: &[bool]) -> HandoverTimeline {
        let boundaries_ms: Vec<u64> = (0..switch.len() as u64)
            .map(|k| 7_000 + 15_000 * k)
            .collect();
        let handovers = boundaries_ms
            .iter()
            .zip(switch)
            .filter(|(_, s)| **s)
            .map(|(&at_ms, _)| Handover {
                at_ms,
                end: End::Local,
                from: None,
                to: None,
            })
            .collect();
        HandoverTimeline {
            source: "slots",
            slotted: true,
            boundaries_ms,
            handovers,
            outages_ms: Vec::new(),
        }
    }

    #[test]
    fn the_calibrated_source_learns_only_the_boundaries_already_past() {
        let epoch = Instant::now();
        // 16 boundaries, none switching: the rate falls from the prior as they pass.
        let timeline = slots(&[false; 16]);
        let mut source = TruthCalibrated::new(&timeline, None, epoch);
        let f = source.forecast(epoch).unwrap();
        assert_eq!(f.source(), ForecastSource::Calibrated);
        let offsets: Vec<u64> = f.handovers().iter().map(|h| h.offset.as_secs()).collect();
        assert_eq!(offsets, vec![7, 22, 37, 52, 67, 82, 97, 112]);
        assert!(f.handovers().iter().all(|h| h.probability == 0.74));
        // At 7.5 s the first boundary's second has not passed yet: nothing learned.
        let f = source
            .forecast(epoch + Duration::from_millis(7_500))
            .unwrap();
        assert!(f.handovers().iter().all(|h| h.probability == 0.74));
        // At 120 s, 8 boundaries (7 ... 112 s) have been judged: 14 x 0.74 / 22.
        let f = source.forecast(epoch + Duration::from_secs(120)).unwrap();
        let p = (14.0 * 0.74 / 22.0) as f32;
        assert!(f.handovers().iter().all(|h| h.probability == p), "{f:?}");
        assert_eq!(f.handover_count(), 0);
    }
}

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

use super::orbit::OrbitPredictorInputs;
use super::timeline::HandoverTimeline;
use chrono::{DateTime, Utc};
use handover_predictor::predict::{Mirror, Orbital};
use handover_predictor::{Forecast, ForecastSource, HandoverSource, HandoverSteps, SourceError};
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
        let steps = HandoverSteps::from_bits(&merged).map_err(|e| SourceError::Failed {
            source_name: "orbital".into(),
            error: Box::new(e),
        })?;
        Ok(Forecast::new(ForecastSource::Orbital, now, steps))
    }
}

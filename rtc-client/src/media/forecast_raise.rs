//! The receiver's own playout raise: a receiver that knows when its path hands over (it sits
//! behind the dish and reads the dish's or the calibrated forecast) raises its own minimum
//! playout delay around each predicted handover, whatever the sender does, so that a packet
//! lost at the boundary is repaired before its frame is due (docs/architecture.md,
//! "Handover-timed actions", the receiver's own raise).
//!
//! It follows the sender's raise ([`pacer::playout`]) with what the receiver measures itself:
//!
//! - *How much*: one repair round, the [`REPAIR_QUANTILE`] of the receiver's own repair samples
//!   (from the arrival before a gap to the arrival that filled it, [`super::recovery`]) of the
//!   packets that were due within [`BOUNDARY_SPAN`] of a predicted instant; before there are
//!   enough of those, of all its repair samples; before those, the RTCP round-trip time plus
//!   [`NACK_ALLOWANCE`]. Plus [`RENDER_MARGIN`], at most the sender raise's cap. With no
//!   measurement the receiver does not raise. Boundary repairs are slower than the rest: on
//!   starlink (seed 9500, 120 s)
//!   the receiver's 0.9 quantile over all repairs was 130-150 ms while frames lost at the
//!   boundaries completed about 250 ms after they were due, and a raise sized from all repairs
//!   left the starlink freeze rate 42 % above the sender's raise's (docs/experiments/receiver-raise-2026-12-04.md).
//! - *For which frames*: those whose expected completion (the local instant the playout
//!   timing's extrapolator maps the capture instant to) falls in the sender raise's window
//!   around a predicted instant, widened after it by half a repair round. The receiver does not
//!   know where on its path the satellite hop is: behind the dish the lost packets are those
//!   that would have arrived just after the instant; with the dish at the sender's end they
//!   left just after it and arrive one transit later. Half a repair round (about half a round
//!   trip) covers that transit on either end.
//! - *How it ramps*: [`raise_at`], so the bounds that keep the sender's ramps from stalling
//!   hold here too (the ramps run on expected completion, which is capture time shifted by the
//!   learned transit).

use super::recovery::{REPAIR_SAMPLES, repair_quantile};
use crate::link::Time;
use pacer::actions::PlayoutRaiseConfig;
use pacer::playout::{NACK_ALLOWANCE, RENDER_MARGIN, raise_at};
use std::collections::VecDeque;
use std::time::Duration;

pub use pacer::playout::REPAIR_QUANTILE;

/// How long a predicted instant is kept after it passed: frames expected to complete around it
/// may still be decoding (late by a repair or two) when the next forecast arrives.
///
/// Chosen: 10 s, far beyond the largest raise (4 s, [`pacer::actions::MAX_PLAYOUT_RAISE_MS`]) and
/// one decision interval of the sender's policies.
pub const PAST_RETENTION: Duration = Duration::from_secs(10);

/// How long after a predicted instant a lost packet counts as a boundary loss, for the raise's
/// size (the window's start, [`PlayoutRaiseConfig::offset_ms`], is the other end).
///
/// Chosen: 500 ms: the two lossy 100-ms rows after a Starlink boundary (47.5 % and 20 % of the
/// uplink's packets lost, docs/architecture.md, "Handover-timed actions") plus up to 300 ms of
/// transit between the satellite hop and this receiver.
pub const BOUNDARY_SPAN: Duration = Duration::from_millis(500);

/// The most predicted instants kept (a forecast holds 120 s; a Starlink slot grid puts one
/// every 15 s).
///
/// Chosen: 256, a bound against a source that predicts absurdly often, far above the 18 that 120 s
/// of 15-s slots plus [`PAST_RETENTION`] hold.
pub const MAX_INSTANTS: usize = 256;

/// A receiver's own raise around its predicted handovers (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct ForecastRaise {
    config: PlayoutRaiseConfig,
    min_probability: f32,
    /// Predicted instants whose probability reaches `min_probability`, sorted.
    instants: Vec<Time>,
    /// The last [`REPAIR_SAMPLES`] repairs of packets due near a predicted instant.
    boundary_repairs: VecDeque<Duration>,
}

impl ForecastRaise {
    /// A raise shaped like the sender's `config` (its window, its cap), applied at predictions
    /// whose probability reaches `min_probability` (the sender's actions use 0.5,
    /// `pacer::ActionConfig::min_probability`). Nothing is predicted yet.
    pub fn new(config: PlayoutRaiseConfig, min_probability: f32) -> Self {
        Self {
            config,
            min_probability,
            instants: Vec::new(),
            boundary_repairs: VecDeque::new(),
        }
    }

    /// The sender raise's default window and cap, at the sender actions' default threshold.
    pub fn with_defaults() -> Self {
        Self::new(
            PlayoutRaiseConfig::default(),
            pacer::ActionConfig::default().min_probability,
        )
    }

    /// Replaces the predictions after `now` with `predictions` (`(instant, probability)` in any
    /// order; a NaN probability or one below the threshold triggers nothing); instants that
    /// passed within [`PAST_RETENTION`] are kept.
    pub fn set_predictions(&mut self, now: Time, predictions: &[(Time, f32)]) {
        let kept_from = now - PAST_RETENTION;
        self.instants.retain(|&t| t >= kept_from && t <= now);
        self.instants.extend(
            predictions
                .iter()
                .filter(|&&(t, p)| t > now && p >= self.min_probability)
                .map(|&(t, _)| t),
        );
        self.instants.sort_unstable();
        self.instants.dedup();
        if self.instants.len() > MAX_INSTANTS {
            let excess = self.instants.len() - MAX_INSTANTS;
            self.instants.drain(..excess);
        }
    }

    /// The predicted instants held now, sorted.
    pub fn instants(&self) -> &[Time] {
        &self.instants
    }

    /// A packet due at `expected` arrived `delay` later, repaired: kept when it was due within
    /// [`BOUNDARY_SPAN`] of a predicted instant (from the window's start before it).
    pub fn on_repair(&mut self, expected: Time, delay: Duration) {
        let before = Duration::from_millis(self.config.offset_ms.min(0).unsigned_abs());
        let near = self
            .instants
            .iter()
            .any(|&t| expected >= t - before && expected < t.saturating_add(BOUNDARY_SPAN));
        if !near {
            return;
        }
        if self.boundary_repairs.len() == REPAIR_SAMPLES {
            self.boundary_repairs.pop_front();
        }
        self.boundary_repairs.push_back(delay);
    }

    /// The [`REPAIR_QUANTILE`] of the boundary repairs; `None` before
    /// [`super::recovery::MIN_REPAIR_SAMPLES`] of them.
    pub fn boundary_repair_delay(&self) -> Option<Duration> {
        repair_quantile(&self.boundary_repairs, REPAIR_QUANTILE)
    }

    /// The minimum playout delay a frame expected to complete at `expected_completion` gets,
    /// given the receiver's measured `repair_delay` over all its repairs (their
    /// [`REPAIR_QUANTILE`]) and its RTCP round-trip time, if it has them; the boundary repairs
    /// come first when there are enough.
    pub fn raise(
        &self,
        expected_completion: Time,
        repair_delay: Option<Duration>,
        rtt: Option<Duration>,
    ) -> Duration {
        if !self.config.enabled || self.instants.is_empty() {
            return Duration::ZERO;
        }
        let Some(repair) = self
            .boundary_repair_delay()
            .or(repair_delay)
            .or(rtt.map(|r| r + NACK_ALLOWANCE))
        else {
            return Duration::ZERO;
        };
        let amount = (repair + RENDER_MARGIN).min(Duration::from_millis(self.config.max_raise_ms));
        let widened = Duration::from_millis(self.config.duration_ms) + repair / 2;
        let offset = Duration::from_millis(self.config.offset_ms.unsigned_abs());
        // One window at a time: this runs for every decoded frame, so nothing is collected.
        self.instants
            .iter()
            .map(|&t| {
                let start = if self.config.offset_ms < 0 {
                    t - offset
                } else {
                    t.saturating_add(offset)
                };
                raise_at(
                    expected_completion,
                    &[(start, start.saturating_add(widened), amount)],
                )
            })
            .max()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: u64) -> Time {
        Time::from_millis(v)
    }

    fn d(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn nothing_is_raised_without_a_prediction_or_a_measurement() {
        let mut r = ForecastRaise::with_defaults();
        assert_eq!(r.raise(t(10_000), Some(d(200)), None), Duration::ZERO);
        r.set_predictions(t(0), &[(t(10_000), 1.0)]);
        assert_eq!(r.raise(t(10_000), None, None), Duration::ZERO);
        assert_eq!(r.raise(t(10_000), None, Some(d(100))), d(130));
    }

    #[test]
    fn the_window_starts_before_the_instant_and_is_widened_by_half_a_repair_round() {
        let mut r = ForecastRaise::with_defaults();
        r.set_predictions(t(0), &[(t(10_000), 0.9)]);
        let repair = Some(d(200));
        // Full raise: repair + render margin, from t - 50 ms to t + 150 ms + 100 ms.
        assert_eq!(r.raise(t(9_950), repair, None), d(210));
        assert_eq!(r.raise(t(10_249), repair, None), d(210));
        // Ramps: up at half a ms per ms before, down at one after.
        assert_eq!(r.raise(t(9_850), repair, None), d(160));
        assert_eq!(r.raise(t(10_350), repair, None), d(110));
        assert_eq!(r.raise(t(9_000), repair, None), Duration::ZERO);
        assert_eq!(r.raise(t(11_000), repair, None), Duration::ZERO);
    }

    #[test]
    fn repairs_of_packets_due_near_a_predicted_instant_size_the_raise_once_there_are_enough() {
        let mut r = ForecastRaise::with_defaults();
        r.set_predictions(t(0), &[(t(10_000), 1.0)]);
        // Far from the instant: not a boundary repair.
        for _ in 0..20 {
            r.on_repair(t(5_000), d(400));
        }
        for k in 0..7 {
            r.on_repair(t(9_950 + k * 70), d(240));
        }
        assert_eq!(r.boundary_repair_delay(), None);
        assert_eq!(r.raise(t(10_000), Some(d(100)), None), d(110));
        r.on_repair(t(10_499), d(240));
        assert_eq!(r.boundary_repair_delay(), Some(d(240)));
        assert_eq!(r.raise(t(10_000), Some(d(100)), None), d(250));
        r.on_repair(t(10_500), d(900));
        assert_eq!(r.boundary_repair_delay(), Some(d(240)));
    }

    #[test]
    fn the_raise_is_capped_like_the_senders_at_a_boundary_without_a_hold() {
        let mut r = ForecastRaise::with_defaults();
        r.set_predictions(t(0), &[(t(10_000), 1.0)]);
        let cap = d(PlayoutRaiseConfig::default().max_raise_ms);
        assert_eq!(cap, d(500));
        assert_eq!(r.raise(t(10_000), Some(d(900)), None), cap);
    }

    #[test]
    fn unlikely_predictions_trigger_nothing_and_past_ones_are_kept_for_a_while() {
        let mut r = ForecastRaise::with_defaults();
        r.set_predictions(
            t(0),
            &[(t(5_000), 0.2), (t(10_000), f32::NAN), (t(15_000), 0.5)],
        );
        assert_eq!(r.instants(), &[t(15_000)]);
        // A newer forecast replaces the future part and keeps the instant that passed.
        r.set_predictions(t(16_000), &[(t(30_000), 1.0), (t(30_000), 1.0)]);
        assert_eq!(r.instants(), &[t(15_000), t(30_000)]);
        r.set_predictions(t(26_000), &[(t(45_000), 1.0)]);
        assert_eq!(r.instants(), &[t(45_000)]);
    }

    #[test]
    fn a_forecast_that_predicts_absurdly_often_is_bounded() {
        let mut r = ForecastRaise::with_defaults();
        let many: Vec<(Time, f32)> = (1..=10_000).map(|i| (t(i), 1.0)).collect();
        r.set_predictions(t(0), &many);
        assert_eq!(r.instants().len(), MAX_INSTANTS);
    }
}

//! The forecast-blind control: another forecast's predicted handovers, each moved to a random
//! instant, so that an action applied at them costs what it costs without being timed to the
//! path (the ablation's control, docs/architecture.md, "Handover-timed actions").

use handover_predictor::{Forecast, HandoverSource, PredictedHandover, SourceError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

/// How far an instant may move either way: half a Starlink slot (15 s), so that the moved
/// instants fall anywhere in the slot, as many as the inner forecast predicts.
pub const MAX_SHIFT: Duration = Duration::from_millis(7_500);

/// Moves each instant the inner source predicts by its own uniform draw in
/// `[-MAX_SHIFT, MAX_SHIFT)`. The draw is keyed by the call's seed and the instant's offset
/// from the call's start, to the millisecond, so an instant predicted again by a later forecast
/// moves to the same place.
pub struct Blind {
    inner: Box<dyn HandoverSource>,
    epoch: Instant,
    seed: u64,
}

impl Blind {
    /// `inner`'s instants, moved; `epoch` is the call's start, `seed` the call's seed.
    pub fn new(inner: Box<dyn HandoverSource>, epoch: Instant, seed: u64) -> Self {
        Self { inner, epoch, seed }
    }

    fn moved(&self, at: Instant) -> Instant {
        let key = at.saturating_duration_since(self.epoch).as_millis() as u64;
        let mut rng =
            ChaCha8Rng::seed_from_u64(self.seed ^ key.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let span = MAX_SHIFT.as_millis() as i64;
        let shift = rng.random_range(-span..span);
        if shift >= 0 {
            at + Duration::from_millis(shift as u64)
        } else {
            at.checked_sub(Duration::from_millis(shift.unsigned_abs()))
                .unwrap_or(at)
        }
    }
}

impl HandoverSource for Blind {
    fn name(&self) -> &str {
        "blind"
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        let forecast = self.inner.forecast(now)?;
        let t0 = forecast.t0();
        let moved: Vec<PredictedHandover> = forecast
            .handovers()
            .iter()
            .filter_map(|h| {
                let at = self.moved(t0 + h.offset);
                let offset = at.checked_duration_since(t0)?;
                PredictedHandover::new(offset, h.probability).ok()
            })
            .collect();
        Ok(Forecast::with_handovers(
            forecast.source(),
            t0,
            moved,
            forecast.timing(),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handover_predictor::{ForecastSource, HandoverTiming};

    struct Every15s;

    impl HandoverSource for Every15s {
        fn name(&self) -> &str {
            "grid"
        }

        fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
            let offsets = (1..=8).map(|k| Duration::from_secs(15 * k) - Duration::from_millis(500));
            Ok(Forecast::from_offsets(
                ForecastSource::Oracle,
                now,
                offsets,
                HandoverTiming::SubSecond,
            )?)
        }
    }

    #[test]
    fn instants_move_within_half_a_slot_the_same_way_every_time_and_by_seed() {
        let epoch = Instant::now();
        let instants = |seed, at: Instant| -> Vec<Instant> {
            let mut blind = Blind::new(Box::new(Every15s), epoch, seed);
            let f = blind.forecast(at).unwrap();
            f.handovers().iter().map(|h| f.t0() + h.offset).collect()
        };
        let first = instants(1, epoch);
        assert!(first.len() >= 6, "{}", first.len());
        for (k, at) in first.iter().enumerate() {
            let grid = epoch + Duration::from_millis(15_000 * (k as u64 + 1) - 500);
            let apart = if *at > grid { *at - grid } else { grid - *at };
            assert!(apart < MAX_SHIFT + Duration::from_secs(15), "{apart:?}");
        }
        let shifts: Vec<i128> = first
            .iter()
            .map(|at| at.duration_since(epoch).as_millis() as i128 % 15_000)
            .collect();
        assert!(
            shifts.windows(2).any(|w| w[0] != w[1]),
            "each instant draws its own shift"
        );
        assert_eq!(
            first,
            instants(1, epoch),
            "the same seed moves them the same way"
        );
        assert_ne!(first, instants(2, epoch));
    }
}

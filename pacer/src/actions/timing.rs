//! The forecast's timing error, as a simulation adds it to the predicted handover instants the
//! actions see (docs/architecture.md, "Handover-timed actions": what the actions tolerate).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

/// Salt that separates the timing-error draws from the other streams of a call seed.
const TIMING_SEED_SALT: u64 = 0x5449_4D49_4E47_0001;

/// An error in the forecast's timing, added to every predicted handover instant before the
/// actions see it: a fixed offset and a uniform jitter in `[-jitter, +jitter]`, drawn per
/// instant from the call seed. In a real call the host clock is the reference and the forecast
/// can be off by both; a simulation adds them to show what the actions tolerate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimingError {
    /// Added to every predicted instant, ms (negative: the forecast is early).
    pub offset_ms: i64,
    /// Half-width of the uniform jitter, ms.
    pub jitter_ms: u64,
}

/// Moves predicted instants by a [`TimingError`], its jitter drawn from a stream of the seed.
#[derive(Debug)]
pub(crate) struct TimingShift {
    error: TimingError,
    rng: ChaCha8Rng,
}

impl TimingShift {
    pub(crate) fn new(error: TimingError, seed: u64) -> Self {
        Self {
            error,
            rng: ChaCha8Rng::seed_from_u64(seed ^ TIMING_SEED_SALT),
        }
    }

    pub(crate) fn shift(&mut self, at: Instant) -> Instant {
        let jitter = self.error.jitter_ms as i64;
        let drawn = if jitter > 0 {
            self.rng.random_range(-jitter..=jitter)
        } else {
            0
        };
        let moved_ms = self.error.offset_ms.saturating_add(drawn);
        let by = Duration::from_millis(moved_ms.unsigned_abs());
        if moved_ms >= 0 {
            at + by
        } else {
            at.checked_sub(by).unwrap_or(at)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timing_error_moves_each_instant_by_the_offset_and_at_most_the_jitter() {
        let at = Instant::now() + Duration::from_secs(100);
        let mut early = TimingShift::new(
            TimingError {
                offset_ms: -50,
                jitter_ms: 0,
            },
            1,
        );
        assert_eq!(early.shift(at), at - Duration::from_millis(50));
        let jittery_error = TimingError {
            offset_ms: 10,
            jitter_ms: 30,
        };
        let mut jittery = TimingShift::new(jittery_error, 1);
        let moved: Vec<Instant> = (0..200).map(|_| jittery.shift(at)).collect();
        let ms: Vec<i64> = moved
            .iter()
            .map(|&t| {
                if t >= at {
                    (t - at).as_millis() as i64
                } else {
                    -((at - t).as_millis() as i64)
                }
            })
            .collect();
        assert!(ms.iter().all(|&m| (-20..=40).contains(&m)), "{ms:?}");
        assert!(ms.iter().any(|&m| m < 0) && ms.iter().any(|&m| m > 20));
        let mut again = TimingShift::new(jittery_error, 1);
        let replay: Vec<Instant> = (0..200).map(|_| again.shift(at)).collect();
        assert_eq!(replay, moved, "the same seed draws the same jitter");
    }
}

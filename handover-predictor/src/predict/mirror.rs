//! The paper's live predictor: the next 120 s repeat the last observed 120 s (source `mirror`).
//!
//! Paper section III-D: "the handover events logged by our handover detector in the previous
//! interval serve as the estimate for the upcoming one. For the initial interval, where prior data
//! is unavailable, we default to an estimate of 8 equally-spaced handovers."

use crate::forecast::{Forecast, ForecastSource, HORIZON, HandoverTiming};
use crate::source::{HandoverSource, SourceError};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Spacing of the default handovers: Starlink's 15-s slot (reference C1; 8 x 15 s = 120 s).
pub const DEFAULT_SPACING: Duration = Duration::from_secs(15);

/// Repeats the last 120 s of observed handovers as the next 120 s.
///
/// Feed it handovers as the detector sees them ([`Mirror::observe`] or per-second bits with
/// [`Mirror::observe_steps`]); ask it at decision instants with non-decreasing `now`. Until it
/// has watched a full 120 s (`now >= observing_since + 120 s`) it forecasts 8 equally spaced
/// handovers: at `phase`, `phase + 15 s`, ..., `phase + 105 s` after `now`. The default phase is
/// 15 s, so they fall at the end of each 15-s period: steps 14, 29, 44, ..., 119. A dish whose
/// slot grid is known can align them with [`Mirror::with_default_phase`].
#[derive(Debug, Clone)]
pub struct Mirror {
    observing_since: Instant,
    observed: VecDeque<Instant>,
    phase: Duration,
    on_grid: bool,
}

impl Mirror {
    /// A mirror that starts watching at `observing_since`.
    pub fn new(observing_since: Instant) -> Self {
        Self {
            observing_since,
            observed: VecDeque::new(),
            phase: DEFAULT_SPACING,
            on_grid: false,
        }
    }

    /// Places the default handovers at `phase` (clamped to (0, 15 s]) after the decision instant
    /// and every 15 s after that: the slot grid, when the caller knows it. Its forecasts then
    /// say [`HandoverTiming::SubSecond`]: the defaults lie on the grid, and so do the observed
    /// handovers it repeats (a detector dates them at the slot boundary, and 120 s is 8 slots).
    /// Without a grid the timing is [`HandoverTiming::Step`].
    pub fn with_default_phase(mut self, phase: Duration) -> Self {
        self.phase = phase.clamp(Duration::from_nanos(1), DEFAULT_SPACING);
        self.on_grid = true;
        self
    }

    /// The observed handovers in `(now - 120 s, now]`, oldest first.
    pub fn history(&self, now: Instant) -> impl Iterator<Item = Instant> + '_ {
        let window_start = now.checked_sub(HORIZON);
        self.observed
            .iter()
            .copied()
            .filter(move |&h| h <= now && window_start.is_none_or(|s| h > s))
    }

    fn timing(&self) -> HandoverTiming {
        if self.on_grid {
            HandoverTiming::SubSecond
        } else {
            HandoverTiming::Step
        }
    }

    /// A handover seen at `at`.
    pub fn observe(&mut self, at: Instant) {
        let index = self.observed.partition_point(|&h| h <= at);
        if index > 0 && self.observed[index - 1] == at {
            return;
        }
        self.observed.insert(index, at);
        // Keep memory bounded: a forecast looks back 120 s from its `now`, which does not
        // precede the newest observation by much; 240 s is plenty.
        while let Some(&oldest) = self.observed.front() {
            match self
                .observed
                .back()
                .and_then(|b| b.checked_duration_since(oldest))
            {
                Some(span) if span > 2 * HORIZON => {
                    self.observed.pop_front();
                }
                _ => break,
            }
        }
    }

    /// Per-second detector output: `bits[k]` is 1 when a handover was seen in
    /// `(start + k s, start + (k+1) s]`, recorded as a handover at `start + (k+1) s` (the forecast
    /// contract's step convention: docs/architecture.md, "The forecast contract").
    pub fn observe_steps(&mut self, start: Instant, bits: &[u8]) {
        for (k, &bit) in bits.iter().enumerate() {
            if bit != 0 {
                self.observe(start + Duration::from_secs(k as u64 + 1));
            }
        }
    }

    /// Whether a forecast at `now` mirrors observations (a full 120 s watched) rather than the
    /// 8-handover default.
    pub fn has_history(&self, now: Instant) -> bool {
        now.checked_duration_since(self.observing_since)
            .is_some_and(|watched| watched >= HORIZON)
    }

    fn default_offsets(&self) -> impl Iterator<Item = Duration> + '_ {
        (0..8u32).map(|k| self.phase + DEFAULT_SPACING * k)
    }
}

impl HandoverSource for Mirror {
    fn name(&self) -> &str {
        "mirror"
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        if !self.has_history(now) {
            return Ok(Forecast::from_offsets(
                ForecastSource::Mirror,
                now,
                self.default_offsets(),
                self.timing(),
            )?);
        }
        let window_start = now - HORIZON;
        while self.observed.front().is_some_and(|&h| h <= window_start) {
            self.observed.pop_front();
        }
        // A handover at window_start + d (d in (0, 120 s]) repeats at now + d.
        let offsets: Vec<Duration> = self
            .observed
            .iter()
            .take_while(|&&h| h <= now)
            .map(|&h| h - window_start)
            .collect();
        Ok(Forecast::from_offsets(
            ForecastSource::Mirror,
            now,
            offsets,
            self.timing(),
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(f: &Forecast) -> Vec<usize> {
        (0..120).filter(|&k| f.steps().is_handover(k)).collect()
    }

    #[test]
    fn without_history_it_forecasts_eight_handovers_at_the_end_of_each_15_s_period() {
        let start = Instant::now();
        let mut mirror = Mirror::new(start);
        let f = mirror.forecast(start).unwrap();
        assert_eq!(f.source(), ForecastSource::Mirror);
        assert_eq!(steps(&f), vec![14, 29, 44, 59, 74, 89, 104, 119]);
        let f = mirror.forecast(start + Duration::from_secs(119)).unwrap();
        assert_eq!(
            f.handover_count(),
            8,
            "119 s watched is not yet a full interval"
        );
    }

    #[test]
    fn the_default_phase_can_follow_the_slot_grid() {
        let start = Instant::now();
        let mut mirror = Mirror::new(start).with_default_phase(Duration::from_millis(2500));
        let f = mirror.forecast(start).unwrap();
        assert_eq!(steps(&f), vec![2, 17, 32, 47, 62, 77, 92, 107]);
    }

    #[test]
    fn the_next_120_s_repeat_the_last_120_s() {
        let start = Instant::now();
        let mut mirror = Mirror::new(start);
        for s in [5u64, 20, 121, 130, 239, 240, 250] {
            mirror.observe(start + Duration::from_secs(s));
        }
        // At 240 s the window is (120 s, 240 s]: 121, 130, 239, 240 -> offsets 1, 10, 119, 120.
        let f = mirror.forecast(start + Duration::from_secs(240)).unwrap();
        assert_eq!(steps(&f), vec![0, 9, 118, 119]);
        // The one at 250 s is in the future of that forecast and not lost.
        let f = mirror.forecast(start + Duration::from_secs(260)).unwrap();
        // Window (140 s, 260 s]: 239, 240, 250 -> offsets 99, 100, 110.
        assert_eq!(steps(&f), vec![98, 99, 109]);
    }

    #[test]
    fn per_second_bits_land_in_the_same_steps_a_forecast_would_use() {
        let start = Instant::now();
        let mut mirror = Mirror::new(start);
        let mut bits = [0u8; 120];
        bits[0] = 1;
        bits[14] = 1;
        bits[119] = 1;
        mirror.observe_steps(start, &bits);
        let f = mirror.forecast(start + HORIZON).unwrap();
        assert_eq!(steps(&f), vec![0, 14, 119]);
    }

    #[test]
    fn a_quiet_interval_with_history_forecasts_no_handover() {
        let start = Instant::now();
        let mut mirror = Mirror::new(start);
        mirror.observe(start + Duration::from_secs(3));
        let f = mirror.forecast(start + Duration::from_secs(300)).unwrap();
        assert_eq!(f.handover_count(), 0);
    }

    #[test]
    fn memory_stays_bounded_however_long_it_observes() {
        let start = Instant::now();
        let mut mirror = Mirror::new(start);
        for s in 0..100_000u64 {
            mirror.observe(start + Duration::from_secs(s));
        }
        assert!(mirror.observed.len() <= 241);
        mirror.observe(start + Duration::from_secs(99_990));
        assert!(mirror.observed.len() <= 241);
    }
}

//! When a frame is expected to be complete here: libwebrtc's `TimestampExtrapolator`
//! (`modules/video_coding/timing/timestamp_extrapolator.cc`).
//!
//! The receiver maps a frame's capture instant (its RTP timestamp) to the local instant it
//! expects the frame to be complete, and renders it a playout delay after that
//! ([`super::playout`]). libwebrtc learns the map from the frames that needed no retransmission:
//!
//! - a recursive least-squares fit (a Kalman filter with forgetting factor `kLambda` = 1, that is
//!   no forgetting) of the RTP timestamp, in 90-kHz ticks, against the arrival time in
//!   milliseconds since the filter started: a slope (ticks per millisecond, the peers' clock rate
//!   ratio times 90) and an offset;
//! - a two-sided CUSUM detector on the fit's residual: a residual is clipped to `kAccMaxError`
//!   ticks and less `kAccDrift` ticks is accumulated; when either sum passes `kAlarmThreshold`
//!   ticks, the offset's uncertainty is reset to `kP11`, so the next frames move the offset
//!   at once. The detector is not armed during the first `kStartUpFilterDelayInPackets` frames;
//! - during those frames a frame is expected at the previous frame's arrival plus the timestamp
//!   difference;
//! - after 10 s without a frame the filter starts again.
//!
//! So the fit follows a change of the path delay of more than about 73 ms (`kAccDrift`, 6600
//! ticks) after the detector has summed its excess for a while (at most 400 ticks a frame, so at
//! least 150 frames, 5 s at 30 fps), and a smaller one only as fast as an ever-growing
//! least-squares fit moves: slowly once a call is minutes old. After a delay spike drains,
//! frames arrive early against that fit and wait in the jitter buffer; Chromium's
//! `jitterBufferDelay` shows the same waits (docs/experiments/extrapolator-2026-12-04.md).
//!
//! The constants are those of the libwebrtc source named above (no reference sheet of this
//! project covers it); the comparison with Chromium 156 on the same packets in the note above is
//! what they were checked against. Time is this crate's [`Time`]; a capture instant is converted
//! to ticks of the 90-kHz RTP video clock (RFC 3551, section 5), with no wrap-around to undo.

use crate::time::Time;

/// The forgetting factor of the fit: 1, none (`kLambda`).
const LAMBDA: f64 = 1.0;
/// Frames before the detector may fire and the fit is used (`kStartUpFilterDelayInPackets`).
const STARTUP_FRAMES: u32 = 2;
/// The CUSUM detector's alarm level, 90-kHz ticks (`kAlarmThreshold`).
const ALARM_THRESHOLD: f64 = 60e3;
/// Subtracted from every clipped residual before it is summed, ticks (`kAccDrift`).
const ACC_DRIFT: f64 = 6600.0;
/// A residual is clipped to this many ticks before it is summed (`kAccMaxError`).
const ACC_MAX_ERROR: f64 = 7000.0;
/// The offset's variance at the start and after an alarm (`kP11`).
const P11: f64 = 1e10;
/// Ticks of the RTP video clock per millisecond (RFC 3551, section 5: 90 kHz).
const TICKS_PER_MS: f64 = 90.0;
/// The filter restarts when no frame has updated it for this long, ns (the 10 s of
/// `TimestampExtrapolator::Update`).
const RESTART_AFTER_NS: u64 = 10_000_000_000;

/// The map from capture instants to expected local completion instants (module documentation).
#[derive(Debug, Clone)]
pub struct TimestampExtrapolator {
    /// The filter's time origin, local.
    start: Time,
    /// The last update's local instant.
    previous: Time,
    /// The first frame's timestamp, ticks (the fit's timestamp origin).
    first_ticks: Option<f64>,
    /// The last frame's timestamp, ticks.
    previous_ticks: Option<f64>,
    /// Slope (ticks per ms) and offset (ticks) of the fit.
    w: [f64; 2],
    /// The fit's covariance.
    p: [[f64; 2]; 2],
    frames: u32,
    accumulator_positive: f64,
    accumulator_negative: f64,
    alarms: u64,
}

impl Default for TimestampExtrapolator {
    fn default() -> Self {
        Self::new()
    }
}

impl TimestampExtrapolator {
    /// A filter that has seen no frame.
    pub fn new() -> Self {
        let mut filter = Self {
            start: Time::ZERO,
            previous: Time::ZERO,
            first_ticks: None,
            previous_ticks: None,
            w: [0.0; 2],
            p: [[0.0; 2]; 2],
            frames: 0,
            accumulator_positive: 0.0,
            accumulator_negative: 0.0,
            alarms: 0,
        };
        filter.reset(Time::ZERO);
        filter
    }

    fn reset(&mut self, start: Time) {
        self.start = start;
        self.previous = start;
        self.first_ticks = None;
        self.previous_ticks = None;
        self.w = [TICKS_PER_MS, 0.0];
        self.p = [[1.0, 0.0], [0.0, P11]];
        self.frames = 0;
        self.accumulator_positive = 0.0;
        self.accumulator_negative = 0.0;
    }

    /// A frame captured at `capture` (sender's clock) that needed no retransmission was complete
    /// here at `now`.
    pub fn update(&mut self, now: Time, capture: Time) {
        if self.first_ticks.is_none()
            || now.saturating_duration_since(self.previous).as_nanos()
                > u128::from(RESTART_AFTER_NS)
        {
            self.reset(now);
        } else {
            self.previous = now;
        }
        let t_ms = signed_ms(now, self.start);
        let ticks = to_ticks(capture);
        let first = *self.first_ticks.get_or_insert_with(|| {
            self.w[1] = -self.w[0] * t_ms;
            ticks
        });
        let residual = (ticks - first) - t_ms * self.w[0] - self.w[1];
        if self.delay_change_detected(residual) && self.frames >= STARTUP_FRAMES {
            self.p[1][1] = P11;
            self.alarms += 1;
        }
        if self.previous_ticks.is_some_and(|previous| ticks < previous) {
            return;
        }
        let p = self.p;
        let mut k = [p[0][0] * t_ms + p[0][1], p[1][0] * t_ms + p[1][1]];
        let tpt = LAMBDA + t_ms * k[0] + k[1];
        k[0] /= tpt;
        k[1] /= tpt;
        self.w[0] += k[0] * residual;
        self.w[1] += k[1] * residual;
        self.p = [
            [
                (p[0][0] - (k[0] * t_ms * p[0][0] + k[0] * p[1][0])) / LAMBDA,
                (p[0][1] - (k[0] * t_ms * p[0][1] + k[0] * p[1][1])) / LAMBDA,
            ],
            [
                (p[1][0] - (k[1] * t_ms * p[0][0] + k[1] * p[1][0])) / LAMBDA,
                (p[1][1] - (k[1] * t_ms * p[0][1] + k[1] * p[1][1])) / LAMBDA,
            ],
        ];
        self.previous_ticks = Some(ticks);
        if self.frames < STARTUP_FRAMES {
            self.frames += 1;
        }
    }

    /// The local instant a frame captured at `capture` is expected to be complete; `None` before
    /// the first frame. Whole milliseconds from the filter's start, as libwebrtc rounds them.
    pub fn expected_completion(&self, capture: Time) -> Option<Time> {
        let first = self.first_ticks?;
        let ticks = to_ticks(capture);
        if self.frames < STARTUP_FRAMES {
            let previous = self.previous_ticks.unwrap_or(first);
            let diff_ms = ((ticks - previous) / TICKS_PER_MS).trunc();
            return Some(offset_ms(self.previous, diff_ms));
        }
        if self.w[0] < 1e-3 {
            return Some(self.start);
        }
        let diff_ms = ((ticks - first - self.w[1]) / self.w[0] + 0.5).trunc();
        Some(offset_ms(self.start, diff_ms))
    }

    /// How often the delay-change detector has fired.
    pub fn alarms(&self) -> u64 {
        self.alarms
    }

    /// The two-sided CUSUM of `DelayChangeDetection`: true, and both sums cleared, when either
    /// passes the alarm level.
    fn delay_change_detected(&mut self, residual: f64) -> bool {
        let error = residual.clamp(-ACC_MAX_ERROR, ACC_MAX_ERROR);
        self.accumulator_positive = (self.accumulator_positive + error - ACC_DRIFT).max(0.0);
        self.accumulator_negative = (self.accumulator_negative + error + ACC_DRIFT).min(0.0);
        if self.accumulator_positive > ALARM_THRESHOLD
            || self.accumulator_negative < -ALARM_THRESHOLD
        {
            self.accumulator_positive = 0.0;
            self.accumulator_negative = 0.0;
            return true;
        }
        false
    }
}

/// `capture` in ticks of the 90-kHz clock.
fn to_ticks(capture: Time) -> f64 {
    capture.as_nanos() as f64 * TICKS_PER_MS / 1e6
}

/// `a - b` in milliseconds, signed.
fn signed_ms(a: Time, b: Time) -> f64 {
    (a.as_nanos() as f64 - b.as_nanos() as f64) / 1e6
}

/// `base` moved by `ms` whole milliseconds (either way), never before the epoch.
fn offset_ms(base: Time, ms: f64) -> Time {
    let ns = base.as_nanos() as f64 + ms * 1e6;
    Time::from_nanos(ns.max(0.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time::from_millis(v)
    }

    fn fed(frames: std::ops::Range<u64>, transit: impl Fn(u64) -> u64) -> TimestampExtrapolator {
        let mut filter = TimestampExtrapolator::new();
        for i in frames {
            filter.update(ms(i * 33 + transit(i)), ms(i * 33));
        }
        filter
    }

    fn expected_transit_ms(filter: &TimestampExtrapolator, capture_ms: u64) -> i64 {
        filter
            .expected_completion(ms(capture_ms))
            .unwrap()
            .as_millis() as i64
            - capture_ms as i64
    }

    #[test]
    fn nothing_is_expected_before_the_first_frame_and_the_first_frames_extrapolate_from_the_last() {
        let mut filter = TimestampExtrapolator::new();
        assert_eq!(filter.expected_completion(ms(0)), None);
        filter.update(ms(1080), ms(1000));
        assert_eq!(filter.expected_completion(ms(1033)), Some(ms(1113)));
    }

    #[test]
    fn a_steady_path_is_learned_exactly() {
        let filter = fed(0..300, |_| 80);
        assert_eq!(expected_transit_ms(&filter, 300 * 33), 80);
        assert_eq!(filter.alarms(), 0);
    }

    #[test]
    fn a_step_above_the_drift_is_followed_once_the_detector_fires() {
        let filter = fed(0..1800, |i| if i < 1500 { 50 } else { 200 });
        assert!(filter.alarms() >= 1);
        let transit = expected_transit_ms(&filter, 1800 * 33);
        assert!((190..=205).contains(&transit), "{transit}");
    }

    #[test]
    fn a_step_below_the_drift_is_followed_only_slowly_after_minutes_of_history() {
        // 60 s at 50 ms, then 10 s at 110 ms: the residual stays under kAccDrift, no alarm, and the
        // least-squares fit has moved only part of the way.
        let filter = fed(0..2100, |i| if i < 1800 { 50 } else { 110 });
        assert_eq!(filter.alarms(), 0);
        let transit = expected_transit_ms(&filter, 2100 * 33);
        assert!(transit < 100, "{transit}");
        assert!(transit > 50, "{transit}");
    }

    #[test]
    fn a_brief_spike_moves_the_fit_little() {
        let filter = fed(
            0..1830,
            |i| if (1800..1806).contains(&i) { 250 } else { 60 },
        );
        let transit = expected_transit_ms(&filter, 1830 * 33);
        assert!((59..=63).contains(&transit), "{transit}");
    }

    #[test]
    fn ten_seconds_without_a_frame_start_the_fit_again() {
        let mut filter = fed(0..300, |_| 50);
        filter.update(ms(20_000 + 300), ms(20_000));
        assert_eq!(expected_transit_ms(&filter, 20_033), 300);
    }

    #[test]
    fn reordered_frames_teach_nothing() {
        let mut filter = fed(0..300, |_| 50);
        let before = expected_transit_ms(&filter, 300 * 33);
        filter.update(ms(300 * 33 + 500), ms(100 * 33));
        assert_eq!(expected_transit_ms(&filter, 300 * 33), before);
    }
}

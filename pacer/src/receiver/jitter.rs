//! The receiver's jitter estimate: how much playout delay covers the arrival jitter of frames.
//!
//! A model of libwebrtc's `JitterEstimator` (`modules/video_coding/timing/jitter_estimator.cc`
//! with its `FrameDelayVariationKalmanFilter` in
//! `modules/video_coding/timing/frame_delay_variation_kalman_filter.cc`), which sets the video
//! jitter buffer's delay:
//!
//! - Each frame that arrived without retransmission contributes its *frame delay variation*
//!   `d = (arrival_i - arrival_prev) - (capture_i - capture_prev)` and its size. A two-state
//!   Kalman filter fits `d = slope x (size_i - size_prev) + offset`: the slope is the inverse of
//!   the path's bandwidth as frames see it (a large frame arrives late because it takes longer
//!   to cross), the offset the mean queueing drift.
//! - The residual of that fit is the random jitter; its variance is an exponential average over
//!   up to 400 frames (faster at the start).
//! - The estimate is `slope x (max frame size - mean frame size)` (room for the largest frame
//!   lately seen) plus `2.33 x sd(noise) - 30 ms` (at least 1 ms), plus 10 ms of operating-system
//!   jitter; once three frames needed a retransmission (within the last 60 s), the round-trip
//!   term `min(0.9 x RTT, 200 ms)` is added, so that most retransmitted packets arrive before
//!   their frame is due without the delay growing with a long path (the constants `kRttMult`
//!   and `kRttMultAddCap` that `video/video_stream_buffer_controller.cc` passes to
//!   `GetJitterEstimate` in every protection mode; older versions added the whole RTT with NACK
//!   alone and none with NACK+FEC).
//! - The RTT is the RTCP round-trip time. A receive-only endpoint has none: it sends no sender
//!   reports of its own, so no report block comes back to time, and RTCP XR's receiver reference
//!   time is not negotiated by browsers. Chromium 156 receiving our video over the starlink links
//!   kept its `jitterBufferTargetDelay` at 12-13 ms through calls with hundreds of
//!   retransmissions (docs/experiments/playout-2026-12-03.md): no round-trip term. Until
//!   [`JitterEstimator::set_rtt`] is called the term is zero.
//!
//! Differences from libwebrtc, numbered:
//! 1. The frame-rate scaling of the noise average uses the receive intervals of the frames the
//!    estimator saw (libwebrtc's `fps_counter_` does the same over processing times).
//! 2. The round-trip time is whatever the caller hands [`JitterEstimator::set_rtt`], smoothed by
//!    the caller (the simulator hands the RTT each RTCP report would carry), not by libwebrtc's
//!    `RttFilter`.
//! 3. The low-frame-rate scaling (below 5 fps the estimate is scaled towards zero) is left out:
//!    the synthetic encoder runs at 30 fps and drops frames only while the pacer is congested.

use crate::time::Time;
use std::collections::VecDeque;
use std::time::Duration;

/// Weight of the old value in the frame-size averages (`kPhi`, jitter_estimator.cc).
const PHI: f64 = 0.97;
/// Per-frame decay of the maximum frame size (`kPsi`, jitter_estimator.cc).
const PSI: f64 = 0.9999;
/// The noise average's memory grows to this many frames (`kAlphaCountMax`, jitter_estimator.cc).
const ALPHA_COUNT_MAX: u32 = 400;
/// Frames before the estimate is published (`kStartupDelaySamples`, jitter_estimator.cc).
const STARTUP_DELAY_SAMPLES: u32 = 30;
/// Frames whose sizes seed the mean frame size (`kFsAccuStartupSamples`, jitter_estimator.cc).
const FRAME_SIZE_STARTUP_SAMPLES: u32 = 5;
/// Initial mean and maximum frame size, bytes (`kInitialAvgAndMaxFrameSizeBytes`).
const INITIAL_FRAME_SIZE: f64 = 500.0;
/// Initial frame-size variance, bytes squared (jitter_estimator.cc `Reset`).
const INITIAL_FRAME_SIZE_VARIANCE: f64 = 100.0;
/// Initial noise variance, ms squared (jitter_estimator.cc `Reset`).
const INITIAL_NOISE_VARIANCE: f64 = 4.0;
/// Retransmitted frames before the round-trip time joins the estimate (`kNackLimit`).
const NACK_LIMIT: u32 = 3;
/// The retransmission count is forgotten this long after the last one (`kNackCountTimeout`).
const NACK_COUNT_TIMEOUT: Duration = Duration::from_secs(60);
/// The share of the RTT added once retransmissions are common (`kRttMult`,
/// video_stream_buffer_controller.cc).
const RTT_MULTIPLIER: f64 = 0.9;
/// The most the round-trip term adds (`kRttMultAddCap`, video_stream_buffer_controller.cc).
const RTT_TERM_CAP: Duration = Duration::from_millis(200);
/// A frame-delay deviation beyond this many noise deviations is an outlier
/// (`kNumStdDevDelayOutlier`).
const DELAY_OUTLIER_STD_DEVS: f64 = 15.0;
/// A frame larger than the mean by this many size deviations is always used
/// (`kNumStdDevSizeOutlier`).
const SIZE_OUTLIER_STD_DEVS: f64 = 3.0;
/// Noise deviations the estimate covers (`kNoiseStdDevs`).
const NOISE_STD_DEVS: f64 = 2.33;
/// Subtracted from the noise term, ms (`kNoiseStdDevOffset`).
const NOISE_STD_DEV_OFFSET_MS: f64 = 30.0;
/// Frame delays are clamped to this many noise deviations (the default
/// `time_deviation_upper_bound` of `JitterEstimator::Config`).
const TIME_DEVIATION_UPPER_BOUND: f64 = 3.5;
/// Added to every estimate, ms (`OPERATING_SYSTEM_JITTER`).
const OPERATING_SYSTEM_JITTER_MS: f64 = 10.0;
/// The largest estimate, ms (`JitterEstimator::CalculateEstimate` caps it at 10 000 ms).
const MAX_ESTIMATE_MS: f64 = 10_000.0;
/// The frame-rate estimate's window, frames (`kFrameProcessingStartupCount`).
const FPS_WINDOW: usize = 30;
/// The largest frame-rate estimate (`kMaxFramerateEstimate`).
const MAX_FPS: f64 = 200.0;
/// The frame rate the noise average's memory is tuned for.
const REFERENCE_FPS: f64 = 30.0;
/// Smallest slope, ms per byte (`kMaxBandwidth` of the Kalman filter: 8 Gbit/s).
const MIN_SLOPE: f64 = 0.000_001;
/// Initial slope, ms per byte: the inverse of 512 kbit/s (`FrameDelayVariationKalmanFilter`).
const INITIAL_SLOPE: f64 = 1.0 / (512e3 / 8.0);
/// Initial estimate covariance, diagonal (slope, offset).
const INITIAL_COVARIANCE: [f64; 2] = [1e-4, 1e2];
/// Process noise, diagonal (slope, offset).
const PROCESS_NOISE: [f64; 2] = [2.5e-10, 1e-10];

/// libwebrtc's Kalman filter of frame delay against frame-size change.
#[derive(Debug, Clone)]
struct DelayVariationFilter {
    /// `[ms per byte, ms]`.
    estimate: [f64; 2],
    covariance: [[f64; 2]; 2],
}

impl DelayVariationFilter {
    fn new() -> Self {
        Self {
            estimate: [INITIAL_SLOPE, 0.0],
            covariance: [[INITIAL_COVARIANCE[0], 0.0], [0.0, INITIAL_COVARIANCE[1]]],
        }
    }

    fn predicted(&self, size_delta: f64) -> f64 {
        self.estimate[0] * size_delta + self.estimate[1]
    }

    fn update(&mut self, delay_ms: f64, size_delta: f64, max_frame_size: f64, noise_var: f64) {
        if max_frame_size < 1.0 {
            return;
        }
        let c = &mut self.covariance;
        c[0][0] += PROCESS_NOISE[0];
        c[1][1] += PROCESS_NOISE[1];
        let mh = [
            c[0][0] * size_delta + c[0][1],
            c[1][0] * size_delta + c[1][1],
        ];
        // Small size changes say little about the slope: weigh them as noisier.
        let sigma = ((300.0 * (-size_delta.abs() / max_frame_size).exp() + 1.0) * noise_var.sqrt())
            .max(1.0);
        let h_m_h_sigma = size_delta * mh[0] + mh[1] + sigma;
        if h_m_h_sigma.abs() < 1e-9 {
            return;
        }
        let gain = [mh[0] / h_m_h_sigma, mh[1] / h_m_h_sigma];
        let residual = delay_ms - (self.estimate[0] * size_delta + self.estimate[1]);
        self.estimate[0] = (self.estimate[0] + gain[0] * residual).max(MIN_SLOPE);
        self.estimate[1] += gain[1] * residual;
        let (t00, t01) = (c[0][0], c[0][1]);
        c[0][0] = (1.0 - gain[0] * size_delta) * t00 - gain[0] * c[1][0];
        c[0][1] = (1.0 - gain[0] * size_delta) * t01 - gain[0] * c[1][1];
        c[1][0] = c[1][0] * (1.0 - gain[1]) - gain[1] * size_delta * t00;
        c[1][1] = c[1][1] * (1.0 - gain[1]) - gain[1] * size_delta * t01;
    }
}

/// The jitter estimate of one video stream (see the module documentation).
#[derive(Debug, Clone)]
pub struct JitterEstimator {
    filter: DelayVariationFilter,
    noise_mean: f64,
    noise_var: f64,
    alpha_count: u32,
    frame_size_mean: f64,
    frame_size_var: f64,
    frame_size_max: f64,
    previous_size: Option<f64>,
    startup_size_sum: f64,
    startup_size_count: u32,
    startup_count: u32,
    published_ms: Option<f64>,
    previous_update: Option<Time>,
    update_intervals: VecDeque<f64>,
    nack_count: u32,
    latest_nack: Option<Time>,
    rtt: Duration,
}

impl Default for JitterEstimator {
    fn default() -> Self {
        Self::new()
    }
}

impl JitterEstimator {
    /// An estimator that has seen no frame.
    pub fn new() -> Self {
        Self {
            filter: DelayVariationFilter::new(),
            noise_mean: 0.0,
            noise_var: INITIAL_NOISE_VARIANCE,
            alpha_count: 1,
            frame_size_mean: INITIAL_FRAME_SIZE,
            frame_size_var: INITIAL_FRAME_SIZE_VARIANCE,
            frame_size_max: INITIAL_FRAME_SIZE,
            previous_size: None,
            startup_size_sum: 0.0,
            startup_size_count: 0,
            startup_count: 0,
            published_ms: None,
            previous_update: None,
            update_intervals: VecDeque::with_capacity(FPS_WINDOW),
            nack_count: 0,
            latest_nack: None,
            rtt: Duration::ZERO,
        }
    }

    /// One frame that arrived without retransmission, at `now`: its delay variation against the
    /// previous such frame (ms, may be negative) and its size.
    pub fn on_frame(&mut self, now: Time, delay_variation_ms: f64, frame_bytes: u32) {
        let size = f64::from(frame_bytes);
        if self.startup_size_count < FRAME_SIZE_STARTUP_SAMPLES {
            self.startup_size_sum += size;
            self.startup_size_count += 1;
        } else if self.startup_size_count == FRAME_SIZE_STARTUP_SAMPLES {
            self.frame_size_mean = self.startup_size_sum / f64::from(self.startup_size_count);
            self.startup_size_count += 1;
        }
        let mean = PHI * self.frame_size_mean + (1.0 - PHI) * size;
        // A key frame would drag the mean up for seconds: only ordinary frames move it.
        if size < self.frame_size_mean + 2.0 * self.frame_size_var.sqrt() {
            self.frame_size_mean = mean;
        }
        let deviation = size - self.frame_size_mean;
        self.frame_size_var =
            (PHI * self.frame_size_var + (1.0 - PHI) * deviation * deviation).max(1.0);
        self.frame_size_max = (PSI * self.frame_size_max).max(size);

        let Some(previous) = self.previous_size.replace(size) else {
            return;
        };
        let size_delta = size - previous;
        let bound = TIME_DEVIATION_UPPER_BOUND * self.noise_var.sqrt() + 0.5;
        let delay = delay_variation_ms.clamp(-bound, bound);
        let deviation = delay - self.filter.predicted(size_delta);
        let noise_sd = self.noise_var.sqrt();
        if deviation.abs() < DELAY_OUTLIER_STD_DEVS * noise_sd
            || size > self.frame_size_mean + SIZE_OUTLIER_STD_DEVS * self.frame_size_var.sqrt()
        {
            self.update_noise(now, deviation);
            // A normal frame right behind a delayed large one arrives with it; its negative
            // size change would teach the filter a wrong slope.
            if size_delta > -0.25 * self.frame_size_max {
                self.filter
                    .update(delay, size_delta, self.frame_size_max, self.noise_var);
            }
        } else {
            let clipped = DELAY_OUTLIER_STD_DEVS * noise_sd * deviation.signum();
            self.update_noise(now, clipped);
        }
        if self.startup_count >= STARTUP_DELAY_SAMPLES {
            self.published_ms = Some(self.calculate(self.published_ms));
        } else {
            self.startup_count += 1;
        }
    }

    /// A frame needed a retransmission (it does not feed the delay filter).
    pub fn on_frame_retransmitted(&mut self, now: Time) {
        self.nack_count = (self.nack_count + 1).min(NACK_LIMIT);
        self.latest_nack = Some(now);
    }

    /// The RTCP round-trip time, of which `min(0.9 x RTT, 200 ms)` is added once
    /// retransmissions are common.
    pub fn set_rtt(&mut self, rtt: Duration) {
        self.rtt = rtt;
    }

    /// The jitter delay to add to the playout delay at `now`.
    pub fn estimate(&self, now: Time) -> Duration {
        let mut ms = self.published_ms.unwrap_or(0.0) + OPERATING_SYSTEM_JITTER_MS;
        let nacking = self.nack_count >= NACK_LIMIT
            && self
                .latest_nack
                .is_some_and(|t| now.saturating_duration_since(t) <= NACK_COUNT_TIMEOUT);
        if nacking {
            ms += self
                .rtt
                .mul_f64(RTT_MULTIPLIER)
                .min(RTT_TERM_CAP)
                .as_secs_f64()
                * 1000.0;
        }
        Duration::from_secs_f64(ms.clamp(0.0, MAX_ESTIMATE_MS) / 1000.0)
    }

    /// The published estimate before the operating-system jitter and the RTT, ms; `None` during
    /// the first frames.
    pub fn filtered_ms(&self) -> Option<f64> {
        self.published_ms
    }

    fn update_noise(&mut self, now: Time, deviation: f64) {
        if let Some(previous) = self.previous_update.replace(now) {
            if self.update_intervals.len() == FPS_WINDOW {
                self.update_intervals.pop_front();
            }
            self.update_intervals
                .push_back(now.saturating_duration_since(previous).as_secs_f64());
        }
        let mut alpha = f64::from(self.alpha_count - 1) / f64::from(self.alpha_count);
        self.alpha_count = (self.alpha_count + 1).min(ALPHA_COUNT_MAX);
        if let Some(fps) = self.frame_rate() {
            let mut scale = REFERENCE_FPS / fps;
            if self.alpha_count < STARTUP_DELAY_SAMPLES {
                let n = f64::from(self.alpha_count);
                let startup = f64::from(STARTUP_DELAY_SAMPLES);
                scale = (n * scale + (startup - n)) / startup;
            }
            alpha = alpha.powf(scale);
        }
        let mean = alpha * self.noise_mean + (1.0 - alpha) * deviation;
        let var = alpha * self.noise_var
            + (1.0 - alpha) * (deviation - self.noise_mean) * (deviation - self.noise_mean);
        self.noise_mean = mean;
        self.noise_var = var.max(1.0);
    }

    fn frame_rate(&self) -> Option<f64> {
        if self.update_intervals.is_empty() {
            return None;
        }
        let mean = self.update_intervals.iter().sum::<f64>() / self.update_intervals.len() as f64;
        (mean > 0.0).then(|| (1.0 / mean).min(MAX_FPS))
    }

    fn noise_threshold(&self) -> f64 {
        (NOISE_STD_DEVS * self.noise_var.sqrt() - NOISE_STD_DEV_OFFSET_MS).max(1.0)
    }

    fn calculate(&self, previous: Option<f64>) -> f64 {
        let estimate = self.filter.estimate[0] * (self.frame_size_max - self.frame_size_mean)
            + self.noise_threshold();
        if estimate < 1.0 {
            // libwebrtc keeps the last estimate rather than dropping to nothing.
            return match previous {
                Some(p) if p > 0.01 => p,
                _ => 1.0,
            };
        }
        estimate.min(MAX_ESTIMATE_MS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time::from_millis(v)
    }

    #[test]
    fn before_thirty_frames_the_estimate_is_the_operating_system_jitter_alone() {
        let mut j = JitterEstimator::new();
        for i in 0..30u64 {
            j.on_frame(ms(i * 33), 0.0, 5_000);
        }
        assert_eq!(j.filtered_ms(), None);
        assert_eq!(j.estimate(ms(1_000)), Duration::from_millis(10));
    }

    #[test]
    fn a_steady_stream_of_equal_frames_settles_at_the_floor_of_one_ms_plus_ten() {
        let mut j = JitterEstimator::new();
        for i in 0..600u64 {
            j.on_frame(ms(i * 33), 0.0, 5_000);
        }
        // Noise variance floors at 1 ms^2: 2.33 - 30 < 1, so the noise term is 1 ms; the size
        // term is slope x (5000 - 5000) after the maximum decays onto the mean.
        let filtered = j.filtered_ms().unwrap();
        assert!((1.0..1.1).contains(&filtered), "{filtered}");
        let total = j.estimate(ms(20_000)).as_secs_f64() * 1000.0;
        assert!((11.0..11.1).contains(&total), "{total}");
    }

    #[test]
    fn alternating_twenty_ms_jitter_raises_the_estimate_by_about_two_point_three_deviations() {
        let mut j = JitterEstimator::new();
        for i in 0..2_000u64 {
            let d = if i % 2 == 0 { 20.0 } else { -20.0 };
            j.on_frame(ms(i * 33), d, 5_000);
        }
        // The filter's offset absorbs nothing of a zero-mean alternation; the residual's
        // deviation is close to 20 ms, so the noise term is near 2.33 x 20 - 30 = 16.6 ms
        // (the clamp at 3.5 sd + 0.5 never binds once the variance has grown).
        let filtered = j.filtered_ms().unwrap();
        assert!((14.0..19.0).contains(&filtered), "{filtered}");
    }

    #[test]
    fn three_retransmitted_frames_add_nine_tenths_of_the_rtt_for_sixty_seconds() {
        let mut j = JitterEstimator::new();
        j.set_rtt(Duration::from_millis(120));
        j.on_frame_retransmitted(ms(0));
        j.on_frame_retransmitted(ms(100));
        assert_eq!(j.estimate(ms(200)), Duration::from_millis(10));
        j.on_frame_retransmitted(ms(200));
        assert_eq!(j.estimate(ms(200)), Duration::from_millis(118));
        assert_eq!(j.estimate(ms(60_200)), Duration::from_millis(118));
        assert_eq!(j.estimate(ms(60_201)), Duration::from_millis(10));
    }

    #[test]
    fn the_round_trip_term_stops_at_200_ms() {
        let mut j = JitterEstimator::new();
        j.set_rtt(Duration::from_millis(600));
        for t in 0..3 {
            j.on_frame_retransmitted(ms(t));
        }
        assert_eq!(j.estimate(ms(10)), Duration::from_millis(210));
    }

    #[test]
    fn without_an_rtt_retransmissions_add_nothing() {
        let mut j = JitterEstimator::new();
        for t in 0..10 {
            j.on_frame_retransmitted(ms(t));
        }
        assert_eq!(j.estimate(ms(10)), Duration::from_millis(10));
    }

    #[test]
    fn a_size_linked_delay_is_learned_only_as_far_as_the_clamp_lets_it() {
        let mut j = JitterEstimator::new();
        // 1 Mbit/s: 125 bytes per ms. Every 10th frame is 20 kB instead of 4 kB and arrives
        // 16 000 / 125 = 128 ms later relative to its neighbours. With no other noise the
        // variance stays at its 1 ms^2 floor, so each delay is clamped to 3.5 x 1 + 0.5 = 4 ms:
        // the filter learns 4 ms per 16 kB, as libwebrtc's would.
        for i in 0..3_000u64 {
            let (size, d) = match i % 10 {
                0 => (20_000, 128.0),
                1 => (4_000, -128.0),
                _ => (4_000, 0.0),
            };
            j.on_frame(ms(i * 33), d, size);
        }
        let slope = j.filter.estimate[0];
        assert!((slope - 4.0 / 16_000.0).abs() < 1e-6, "{slope}");
        // slope x (max - mean) + 1 ms noise floor = 4 + 1.
        let filtered = j.filtered_ms().unwrap();
        assert!((4.9..5.1).contains(&filtered), "{filtered}");
    }
}

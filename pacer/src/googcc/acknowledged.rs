//! The acknowledged-bitrate estimator: a Bayesian estimate of the rate at which acknowledged
//! bytes arrive at the receiver.
//!
//! Port of libwebrtc `modules/congestion_controller/goog_cc/bitrate_estimator.cc`
//! (`BitrateEstimator`) and `acknowledged_bitrate_estimator.cc`
//! (`AcknowledgedBitrateEstimator`), with the default field-trial values. Arithmetic is `f32`,
//! as in libwebrtc.

/// Window of the first sample (ms). libwebrtc `goog_cc/bitrate_estimator.cc`,
/// `kInitialRateWindowMs`.
pub(super) const INITIAL_RATE_WINDOW_MS: i64 = 500;

/// Window of later samples (ms). libwebrtc `goog_cc/bitrate_estimator.cc`, `kRateWindowMs`.
pub(super) const RATE_WINDOW_MS: i64 = 150;

/// Sample uncertainty scale. libwebrtc `goog_cc/bitrate_estimator.cc`, `uncertainty_scale`
/// (10.0; `scale_alr` and `scale_small` default to the same value).
pub(super) const UNCERTAINTY_SCALE: f32 = 10.0;

/// Initial estimate variance. libwebrtc `goog_cc/bitrate_estimator.cc`,
/// `bitrate_estimate_var_(50.0f)`.
pub(super) const INITIAL_VARIANCE: f32 = 50.0;

/// Variance added before each update, modelling a changing rate. libwebrtc
/// `goog_cc/bitrate_estimator.cc`, `Update` (`bitrate_estimate_var_ + 5.f`).
pub(super) const PROCESS_VARIANCE: f32 = 5.0;

/// Variance added when ALR ends. libwebrtc `goog_cc/bitrate_estimator.cc`,
/// `ExpectFastRateChange` (`+= 200`).
pub(super) const FAST_CHANGE_VARIANCE: f32 = 200.0;

/// libwebrtc's `BitrateEstimator`.
#[derive(Debug, Clone)]
pub(super) struct BitrateEstimator {
    sum: i64,
    current_window_ms: i64,
    prev_time_ms: Option<i64>,
    estimate_kbps: Option<f32>,
    variance: f32,
}

impl Default for BitrateEstimator {
    fn default() -> Self {
        Self {
            sum: 0,
            current_window_ms: 0,
            prev_time_ms: None,
            estimate_kbps: None,
            variance: INITIAL_VARIANCE,
        }
    }
}

impl BitrateEstimator {
    /// One acknowledged packet of `bytes`, received at `at_ms` (receiver clock).
    pub(super) fn update(&mut self, at_ms: i64, bytes: i64) {
        let window = if self.estimate_kbps.is_none() {
            INITIAL_RATE_WINDOW_MS
        } else {
            RATE_WINDOW_MS
        };
        let Some(sample) = self.update_window(at_ms, bytes, window) else {
            return;
        };
        let Some(estimate) = self.estimate_kbps else {
            self.estimate_kbps = Some(sample);
            return;
        };
        // uncertainty_symmetry_cap defaults to 0, so the denominator is the estimate alone.
        let uncertainty = UNCERTAINTY_SCALE * (estimate - sample).abs() / estimate;
        let sample_var = uncertainty * uncertainty;
        let pred_var = self.variance + PROCESS_VARIANCE;
        let new = (sample_var * estimate + pred_var * sample) / (sample_var + pred_var);
        // estimate_floor defaults to 0.
        self.estimate_kbps = Some(new.max(0.0));
        self.variance = sample_var * pred_var / (sample_var + pred_var);
    }

    fn update_window(&mut self, now_ms: i64, bytes: i64, window_ms: i64) -> Option<f32> {
        if self.prev_time_ms.is_some_and(|prev| now_ms < prev) {
            self.prev_time_ms = None;
            self.sum = 0;
            self.current_window_ms = 0;
        }
        if let Some(prev) = self.prev_time_ms {
            self.current_window_ms += now_ms - prev;
            if now_ms - prev > window_ms {
                self.sum = 0;
                self.current_window_ms %= window_ms;
            }
        }
        self.prev_time_ms = Some(now_ms);
        let mut sample = None;
        if self.current_window_ms >= window_ms {
            sample = Some(8.0 * self.sum as f32 / window_ms as f32);
            self.current_window_ms -= window_ms;
            self.sum = 0;
        }
        self.sum += bytes;
        sample
    }

    /// The estimate, bps.
    pub(super) fn bitrate_bps(&self) -> Option<f64> {
        self.estimate_kbps.map(|k| f64::from(k) * 1000.0)
    }

    /// Raises the variance so the next samples move the estimate fast.
    pub(super) fn expect_fast_rate_change(&mut self) {
        self.variance += FAST_CHANGE_VARIANCE;
    }
}

/// libwebrtc's `AcknowledgedBitrateEstimator`.
#[derive(Debug, Clone, Default)]
pub(super) struct AcknowledgedBitrateEstimator {
    estimator: BitrateEstimator,
    alr_ended_us: Option<i64>,
}

impl AcknowledgedBitrateEstimator {
    /// One received packet: send time (µs, this side), receive time (ms, receiver clock), size.
    pub(super) fn on_packet(&mut self, send_us: i64, receive_ms: i64, bytes: i64) {
        if self.alr_ended_us.is_some_and(|ended| send_us > ended) {
            self.estimator.expect_fast_rate_change();
            self.alr_ended_us = None;
        }
        self.estimator.update(receive_ms, bytes);
    }

    /// ALR ended at `at_us`.
    pub(super) fn set_alr_ended(&mut self, at_us: i64) {
        self.alr_ended_us = Some(at_us);
    }

    /// The acknowledged rate, bps.
    pub(super) fn bitrate_bps(&self) -> Option<f64> {
        self.estimator.bitrate_bps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_stream_gives_its_rate_after_the_first_500_ms_window() {
        // 1000 bytes every 10 ms = 800 kbit/s.
        let mut e = BitrateEstimator::default();
        for i in 0..50 {
            e.update(i * 10, 1000);
            assert_eq!(None, e.bitrate_bps(), "packet {i}");
        }
        // At 500 ms the window holds the 50 packets sent at 0..490 ms: 8 * 50000 / 500.
        e.update(500, 1000);
        assert_eq!(Some(800_000.0), e.bitrate_bps());
        // Later samples come every 150 ms and agree exactly: the estimate does not move.
        for i in 51..200 {
            e.update(i * 10, 1000);
        }
        assert_eq!(Some(800_000.0), e.bitrate_bps());
    }

    #[test]
    fn a_sample_is_weighted_by_its_distance_from_the_estimate() {
        let mut e = BitrateEstimator::default();
        for i in 0..=50 {
            e.update(i * 10, 1000);
        }
        // Next 150-ms window at double rate: 2000 bytes per 10 ms = 1600 kbit/s.
        for i in 51..66 {
            e.update(i * 10, 2000);
        }
        // The sample closes at 650 ms: sum = 1000 (at 500) + 14 * 2000 = 29000 B -> 1546.67 kbit/s.
        let sample: f32 = 8.0 * 29_000.0 / 150.0;
        let unc: f32 = 10.0 * (800.0 - sample).abs() / 800.0;
        let sv = unc * unc;
        let pv: f32 = 55.0;
        let want = (sv * 800.0 + pv * sample) / (sv + pv);
        e.update(660, 2000);
        assert_eq!(Some(f64::from(want) * 1000.0), e.bitrate_bps());
        // 9.33 of uncertainty: variance 87.1 against 55, so the estimate moves 39 % of the way.
        assert!((want - 1088.976).abs() < 1e-2, "{want}");
    }
}

//! The overuse detector with libwebrtc's adaptive threshold.
//!
//! Port of the detector half of libwebrtc
//! `modules/congestion_controller/goog_cc/trendline_estimator.cc` (`TrendlineEstimator::Detect`,
//! `UpdateThreshold`): the modified trend `min(num_deltas, 60) x trend x 4` is compared against a
//! threshold that follows `|modified trend|` up slowly and down fast.

/// What the delay detector currently concludes about the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BandwidthUsage {
    /// Delay is stable.
    #[default]
    Normal,
    /// Delay is growing: the path is overused.
    Overusing,
    /// Delay is shrinking: queues are draining.
    Underusing,
}

/// Gain applied to the trend. libwebrtc `goog_cc/trendline_estimator.cc`,
/// `kDefaultTrendlineThresholdGain`.
pub(super) const THRESHOLD_GAIN: f64 = 4.0;

/// The number of deltas the trend is multiplied by is capped here.
/// libwebrtc `goog_cc/trendline_estimator.cc`, `kMinNumDeltas`.
pub(super) const MIN_NUM_DELTAS: u32 = 60;

/// Overuse must last longer than this (ms). libwebrtc `goog_cc/trendline_estimator.cc`,
/// `kOverUsingTimeThreshold`.
pub(super) const OVERUSING_TIME_THRESHOLD_MS: f64 = 10.0;

/// Initial threshold (ms). libwebrtc `goog_cc/trendline_estimator.cc`, `threshold_(12.5)`.
pub(super) const INITIAL_THRESHOLD_MS: f64 = 12.5;

/// Threshold gain when `|modified trend|` is above it. libwebrtc
/// `goog_cc/trendline_estimator.cc`, `k_up_(0.0087)`.
pub(super) const K_UP: f64 = 0.0087;

/// Threshold gain when `|modified trend|` is below it. libwebrtc
/// `goog_cc/trendline_estimator.cc`, `k_down_(0.039)`.
pub(super) const K_DOWN: f64 = 0.039;

/// No adaptation when `|modified trend|` exceeds the threshold by more than this (ms).
/// libwebrtc `goog_cc/trendline_estimator.cc`, `kMaxAdaptOffsetMs`.
pub(super) const MAX_ADAPT_OFFSET_MS: f64 = 15.0;

/// Threshold clamp (ms). libwebrtc `goog_cc/trendline_estimator.cc`,
/// `SafeClamp(threshold_, 6.f, 600.f)`.
pub(super) const THRESHOLD_MIN_MS: f64 = 6.0;
/// See [`THRESHOLD_MIN_MS`].
pub(super) const THRESHOLD_MAX_MS: f64 = 600.0;

/// Longest time step of one threshold update (ms). libwebrtc
/// `goog_cc/trendline_estimator.cc`, `kMaxTimeDeltaMs`.
pub(super) const MAX_TIME_DELTA_MS: i64 = 100;

/// The detector.
#[derive(Debug, Clone)]
pub(super) struct OveruseDetector {
    threshold_ms: f64,
    last_update_ms: Option<i64>,
    time_over_using_ms: Option<f64>,
    overuse_counter: u32,
    prev_trend: f64,
    prev_modified_trend: f64,
    hypothesis: BandwidthUsage,
}

impl Default for OveruseDetector {
    fn default() -> Self {
        Self::new()
    }
}

impl OveruseDetector {
    /// A detector in the normal state with the initial threshold.
    pub(super) fn new() -> Self {
        Self {
            threshold_ms: INITIAL_THRESHOLD_MS,
            last_update_ms: None,
            time_over_using_ms: None,
            overuse_counter: 0,
            prev_trend: 0.0,
            prev_modified_trend: 0.0,
            hypothesis: BandwidthUsage::Normal,
        }
    }

    /// The current hypothesis.
    pub(super) fn state(&self) -> BandwidthUsage {
        self.hypothesis
    }

    /// The current threshold, ms.
    pub(super) fn threshold_ms(&self) -> f64 {
        self.threshold_ms
    }

    /// The last modified trend, ms.
    pub(super) fn modified_trend(&self) -> f64 {
        self.prev_modified_trend
    }

    /// `TrendlineEstimator::Detect`: one trend sample, the group's send delta (ms) and arrival
    /// time (ms).
    pub(super) fn detect(
        &mut self,
        trend: f64,
        num_deltas: u32,
        send_delta_ms: f64,
        now_ms: i64,
    ) -> BandwidthUsage {
        if num_deltas < 2 {
            self.hypothesis = BandwidthUsage::Normal;
            return self.hypothesis;
        }
        let modified = f64::from(num_deltas.min(MIN_NUM_DELTAS)) * trend * THRESHOLD_GAIN;
        self.prev_modified_trend = modified;
        if modified > self.threshold_ms {
            let over = match self.time_over_using_ms {
                // Assume overuse for half the time since the previous sample.
                None => send_delta_ms / 2.0,
                Some(t) => t + send_delta_ms,
            };
            self.time_over_using_ms = Some(over);
            self.overuse_counter += 1;
            if over > OVERUSING_TIME_THRESHOLD_MS
                && self.overuse_counter > 1
                && trend >= self.prev_trend
            {
                self.time_over_using_ms = Some(0.0);
                self.overuse_counter = 0;
                self.hypothesis = BandwidthUsage::Overusing;
            }
        } else if modified < -self.threshold_ms {
            self.time_over_using_ms = None;
            self.overuse_counter = 0;
            self.hypothesis = BandwidthUsage::Underusing;
        } else {
            self.time_over_using_ms = None;
            self.overuse_counter = 0;
            self.hypothesis = BandwidthUsage::Normal;
        }
        self.prev_trend = trend;
        self.update_threshold(modified, now_ms);
        self.hypothesis
    }

    fn update_threshold(&mut self, modified: f64, now_ms: i64) {
        let last = *self.last_update_ms.get_or_insert(now_ms);
        if modified.abs() > self.threshold_ms + MAX_ADAPT_OFFSET_MS {
            // A big latency spike (e.g. a sudden capacity drop): do not adapt to it.
            self.last_update_ms = Some(now_ms);
            return;
        }
        let k = if modified.abs() < self.threshold_ms {
            K_DOWN
        } else {
            K_UP
        };
        let dt = (now_ms - last).min(MAX_TIME_DELTA_MS) as f64;
        self.threshold_ms += k * (modified.abs() - self.threshold_ms) * dt;
        self.threshold_ms = self.threshold_ms.clamp(THRESHOLD_MIN_MS, THRESHOLD_MAX_MS);
        self.last_update_ms = Some(now_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_falls_with_k_down_and_rises_with_k_up() {
        let mut d = OveruseDetector::new();
        // First sample only starts the clock.
        d.detect(0.0, 2, 5.0, 0);
        assert_eq!(12.5, d.threshold_ms());
        // 10 ms later, |m| = 0 < 12.5: 12.5 + 0.039 * (0 - 12.5) * 10 = 7.625.
        d.detect(0.0, 3, 5.0, 10);
        assert!((d.threshold_ms() - 7.625).abs() < 1e-12);
        // 20 ms later, m = 60 * 0.05 * 4 = 12 > 7.625 (by less than 15):
        // 7.625 + 0.0087 * (12 - 7.625) * 20 = 8.38625.
        d.detect(0.05, 60, 5.0, 30);
        assert!((d.threshold_ms() - 8.386_25).abs() < 1e-12);
        // 500 ms later the step is capped at 100 ms; m = 0 gives 8.38625 * (1 - 3.9) < 6: clamp.
        d.detect(0.0, 60, 5.0, 530);
        assert_eq!(THRESHOLD_MIN_MS, d.threshold_ms());
    }

    #[test]
    fn a_spike_more_than_15_ms_above_the_threshold_does_not_adapt_it() {
        let mut d = OveruseDetector::new();
        d.detect(0.0, 2, 5.0, 0);
        // m = 60 * 0.12 * 4 = 28.8 > 12.5 + 15.
        d.detect(0.12, 60, 5.0, 50);
        assert_eq!(12.5, d.threshold_ms());
        // m = 60 * 0.1 * 4 = 24 <= 27.5: adapts, 12.5 + 0.0087 * 11.5 * 50 = 17.5025.
        d.detect(0.1, 60, 5.0, 100);
        assert!((d.threshold_ms() - 17.5025).abs() < 1e-12);
    }

    #[test]
    fn overuse_needs_more_than_10_ms_two_samples_and_a_non_falling_trend() {
        let mut d = OveruseDetector::new();
        // m = 60 * 0.1 * 4 = 24 > 12.5 each time; threshold rises only slowly.
        assert_eq!(BandwidthUsage::Normal, d.detect(0.1, 60, 5.0, 0)); // 2.5 ms, 1 sample
        assert_eq!(BandwidthUsage::Normal, d.detect(0.1, 60, 5.0, 5)); // 7.5 ms
        // The third crosses 10 ms (12.5) with a counter of 3 and a trend equal to the last.
        assert_eq!(BandwidthUsage::Overusing, d.detect(0.1, 60, 5.0, 10));
    }

    #[test]
    fn overuse_is_declared_on_the_sample_that_crosses_10_ms() {
        let mut d = OveruseDetector::new();
        assert_eq!(BandwidthUsage::Normal, d.detect(0.1, 60, 8.0, 0)); // 4 ms
        assert_eq!(BandwidthUsage::Overusing, d.detect(0.1, 60, 8.0, 8)); // 12 ms, 2 samples
        // A falling trend keeps the detector from re-declaring, but does not clear it.
        assert_eq!(BandwidthUsage::Overusing, d.detect(0.09, 60, 8.0, 16));
        assert_eq!(BandwidthUsage::Underusing, d.detect(-0.2, 60, 8.0, 24));
        assert_eq!(BandwidthUsage::Normal, d.detect(0.0, 60, 8.0, 32));
    }
}

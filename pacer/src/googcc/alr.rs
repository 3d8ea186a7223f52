//! Application-limited region (ALR) detection: an interval budget refilled at 65% of the
//! estimate and drained by what is sent; the sender is application-limited while the budget
//! stays high.
//!
//! Port of libwebrtc `modules/congestion_controller/goog_cc/alr_detector.cc` (`AlrDetector`) and
//! `modules/pacing/interval_budget.cc` (`IntervalBudget`), integer arithmetic as there.

/// Budget window (ms). libwebrtc `modules/pacing/interval_budget.cc`, `kWindowMs`.
pub(super) const BUDGET_WINDOW_MS: i64 = 500;

/// Fraction of the estimate the budget refills at. libwebrtc `goog_cc/alr_detector.cc`,
/// `AlrDetectorConfig::bandwidth_usage_ratio` (0.65).
pub(super) const BANDWIDTH_USAGE_RATIO: f64 = 0.65;

/// ALR starts above this budget level. libwebrtc `goog_cc/alr_detector.cc`,
/// `AlrDetectorConfig::start_budget_level_ratio` (0.80).
pub(super) const START_BUDGET_LEVEL_RATIO: f64 = 0.80;

/// ALR ends below this budget level. libwebrtc `goog_cc/alr_detector.cc`,
/// `AlrDetectorConfig::stop_budget_level_ratio` (0.50).
pub(super) const STOP_BUDGET_LEVEL_RATIO: f64 = 0.50;

/// libwebrtc's `IntervalBudget` with `can_build_up_underuse = true`.
#[derive(Debug, Clone, Default)]
pub(super) struct IntervalBudget {
    target_kbps: i64,
    max_bytes: i64,
    remaining: i64,
}

impl IntervalBudget {
    /// Sets the refill rate.
    pub(super) fn set_target_rate_kbps(&mut self, kbps: i64) {
        self.target_kbps = kbps;
        self.max_bytes = BUDGET_WINDOW_MS * kbps / 8;
        self.remaining = self.remaining.max(-self.max_bytes).min(self.max_bytes);
    }

    /// Refills for `delta_ms`.
    pub(super) fn increase(&mut self, delta_ms: i64) {
        let bytes = self.target_kbps * delta_ms / 8;
        self.remaining = (self.remaining + bytes).min(self.max_bytes);
    }

    /// Spends `bytes`.
    pub(super) fn use_budget(&mut self, bytes: i64) {
        self.remaining = (self.remaining - bytes).max(-self.max_bytes);
    }

    /// Remaining over maximum.
    pub(super) fn ratio(&self) -> f64 {
        if self.max_bytes == 0 {
            0.0
        } else {
            self.remaining as f64 / self.max_bytes as f64
        }
    }
}

/// libwebrtc's `AlrDetector`.
#[derive(Debug, Clone, Default)]
pub(super) struct AlrDetector {
    budget: IntervalBudget,
    last_send_ms: Option<i64>,
    alr_started_ms: Option<i64>,
}

impl AlrDetector {
    /// `OnBytesSent`: `bytes` left at `send_ms`.
    pub(super) fn on_bytes_sent(&mut self, bytes: i64, send_ms: i64) {
        let Some(last) = self.last_send_ms.replace(send_ms) else {
            return;
        };
        self.budget.use_budget(bytes);
        self.budget.increase(send_ms - last);
        let ratio = self.budget.ratio();
        if ratio > START_BUDGET_LEVEL_RATIO && self.alr_started_ms.is_none() {
            self.alr_started_ms = Some(send_ms);
        } else if ratio < STOP_BUDGET_LEVEL_RATIO && self.alr_started_ms.is_some() {
            self.alr_started_ms = None;
        }
    }

    /// `SetEstimatedBitrate`.
    pub(super) fn set_estimated_bitrate(&mut self, bps: f64) {
        self.budget
            .set_target_rate_kbps((bps * BANDWIDTH_USAGE_RATIO / 1000.0) as i64);
    }

    /// When the current ALR started (send clock, ms), if in ALR.
    pub(super) fn alr_start_ms(&self) -> Option<i64> {
        self.alr_started_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sending_well_under_the_estimate_enters_alr_and_sending_at_it_leaves() {
        let mut a = AlrDetector::default();
        a.set_estimated_bitrate(1_000_000.0); // 650 kbit/s budget, 40 625 bytes max
        a.on_bytes_sent(812, 0);
        // 812 bytes per 10 ms is exactly the refill (650 * 10 / 8): the budget stays at 0.
        for i in 1..=100 {
            a.on_bytes_sent(812, i * 10);
        }
        assert_eq!(None, a.alr_start_ms());
        // 100 bytes per 10 ms = 80 kbit/s: the budget grows by 812 - 100 per 10 ms and passes
        // 80 % of 40 625 = 32 500 bytes after 46 packets (46 x 712 = 32 752).
        for i in 1..=46 {
            a.on_bytes_sent(100, 1000 + i * 10);
        }
        assert_eq!(Some(1460), a.alr_start_ms());
        // Back at 1.6 Mbit/s: the budget falls by 2000 - 812 per 10 ms to below 50 %.
        for i in 1..=20 {
            a.on_bytes_sent(2000, 1460 + i * 10);
        }
        assert_eq!(None, a.alr_start_ms());
    }
}

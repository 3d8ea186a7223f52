//! The loss-based estimator (v1) and the combination with the delay-based limit: the
//! `current_target_` of libwebrtc's send-side bandwidth estimation.
//!
//! Port of libwebrtc `modules/congestion_controller/goog_cc/send_side_bandwidth_estimation.cc`
//! (`SendSideBandwidthEstimation::UpdatePacketsLost`, `UpdateEstimate`, `UpdateMinHistory`,
//! `UpdateTargetBitrate`, `UpdateDelayBasedEstimate`, `SetSendBitrate`), classic path only (no
//! `LossBasedBweV2`, no RTT back-off, no receiver limit). Rates are bps, times µs.

use std::collections::VecDeque;

/// Below this loss fraction the estimate increases.
/// libwebrtc `goog_cc/send_side_bandwidth_estimation.cc`, `kDefaultLowLossThreshold`.
pub(super) const LOW_LOSS_THRESHOLD: f32 = 0.02;

/// Above this loss fraction the estimate decreases.
/// libwebrtc `goog_cc/send_side_bandwidth_estimation.cc`, `kDefaultHighLossThreshold`.
pub(super) const HIGH_LOSS_THRESHOLD: f32 = 0.1;

/// Base spacing of loss-based decreases (µs), plus the RTT.
/// libwebrtc `goog_cc/send_side_bandwidth_estimation.cc`, `kBweDecreaseInterval` (300 ms).
pub(super) const DECREASE_INTERVAL_US: i64 = 300_000;

/// Window of the minimum-bitrate history the increase starts from (µs).
/// libwebrtc `goog_cc/send_side_bandwidth_estimation.cc`, `kBweIncreaseInterval` (1000 ms).
pub(super) const INCREASE_INTERVAL_US: i64 = 1_000_000;

/// Packets a loss fraction must be based on.
/// libwebrtc `goog_cc/send_side_bandwidth_estimation.cc`, `kLimitNumPackets`.
pub(super) const LIMIT_NUM_PACKETS: i64 = 20;

/// During this long after the first loss report, with no loss, the delay-based estimate is
/// trusted outright (µs). libwebrtc `goog_cc/send_side_bandwidth_estimation.cc`, `kStartPhase`
/// (2 s).
pub(super) const START_PHASE_US: i64 = 2_000_000;

/// A loss report older than 1.2 x this no longer drives decisions (µs).
/// libwebrtc `goog_cc/send_side_bandwidth_estimation.cc`, `kMaxRtcpFeedbackInterval` (5 s).
pub(super) const MAX_RTCP_FEEDBACK_INTERVAL_US: i64 = 5_000_000;

/// Increase factor over the minimum of the last second, plus 1 kbit/s.
/// libwebrtc `goog_cc/send_side_bandwidth_estimation.cc`, `UpdateEstimate` (`* 1.08 + 0.5`,
/// `+ 1000`).
pub(super) const INCREASE_FACTOR: f64 = 1.08;
/// See [`INCREASE_FACTOR`].
pub(super) const INCREASE_OFFSET_BPS: f64 = 1_000.0;

/// libwebrtc's classic `SendSideBandwidthEstimation`.
#[derive(Debug, Clone)]
pub(super) struct SendSideBandwidthEstimation {
    min_bps: f64,
    max_bps: f64,
    current_bps: f64,
    delay_based_limit_bps: f64,
    min_history: VecDeque<(i64, f64)>,
    lost_since_update: i64,
    expected_since_update: i64,
    last_fraction_loss: u8,
    has_decreased_since_last_fraction_loss: bool,
    last_loss_report_us: Option<i64>,
    first_report_us: Option<i64>,
    time_last_decrease_us: Option<i64>,
    last_rtt_us: i64,
    loss_based_bps: f64,
}

impl SendSideBandwidthEstimation {
    /// Starts at `start_bps`, bounded by `[min_bps, max_bps]`.
    pub(super) fn new(start_bps: f64, min_bps: f64, max_bps: f64) -> Self {
        Self {
            min_bps,
            max_bps,
            current_bps: start_bps,
            delay_based_limit_bps: f64::INFINITY,
            min_history: VecDeque::new(),
            lost_since_update: 0,
            expected_since_update: 0,
            last_fraction_loss: 0,
            has_decreased_since_last_fraction_loss: false,
            last_loss_report_us: None,
            first_report_us: None,
            time_last_decrease_us: None,
            last_rtt_us: 0,
            loss_based_bps: start_bps,
        }
    }

    /// The target: the loss-based state capped by the delay-based limit and the bounds.
    pub(super) fn target_bps(&self) -> f64 {
        self.current_bps
    }

    /// The last rate the loss rule itself proposed, before the delay-based cap.
    pub(super) fn loss_based_bps(&self) -> f64 {
        self.loss_based_bps
    }

    /// The last loss fraction, in 1/256.
    pub(super) fn fraction_loss_q8(&self) -> u8 {
        self.last_fraction_loss
    }

    /// `UpdateRtt` (the feedback minimum RTT), µs.
    pub(super) fn update_rtt(&mut self, rtt_us: i64) {
        if rtt_us > 0 {
            self.last_rtt_us = rtt_us;
        }
    }

    /// `UpdateDelayBasedEstimate`.
    pub(super) fn update_delay_based_estimate(&mut self, at_us: i64, bps: f64) {
        self.delay_based_limit_bps = if bps == 0.0 { f64::INFINITY } else { bps };
        self.apply_target_limits(at_us);
    }

    /// `SetSendBitrate` (a probe result).
    pub(super) fn set_send_bitrate(&mut self, bps: f64, at_us: i64) {
        self.delay_based_limit_bps = f64::INFINITY;
        self.update_target(bps, at_us);
        self.min_history.clear();
    }

    /// `UpdatePacketsLost`: `lost` of `expected` packets, reported at `at_us`.
    pub(super) fn update_packets_lost(&mut self, lost: i64, expected: i64, at_us: i64) {
        self.first_report_us.get_or_insert(at_us);
        if expected <= 0 {
            return;
        }
        let total = self.expected_since_update + expected;
        if total < LIMIT_NUM_PACKETS {
            self.expected_since_update = total;
            self.lost_since_update += lost;
            return;
        }
        self.has_decreased_since_last_fraction_loss = false;
        let lost_q8 = (self.lost_since_update + lost).max(0) << 8;
        self.last_fraction_loss = u8::try_from((lost_q8 / total).min(255)).unwrap_or(255);
        self.lost_since_update = 0;
        self.expected_since_update = 0;
        self.last_loss_report_us = Some(at_us);
        self.update_estimate(at_us);
    }

    fn in_start_phase(&self, at_us: i64) -> bool {
        self.first_report_us
            .is_none_or(|first| at_us - first < START_PHASE_US)
    }

    /// `UpdateEstimate`: the periodic (and per-loss-report) decision.
    pub(super) fn update_estimate(&mut self, at_us: i64) {
        if self.last_fraction_loss == 0 && self.in_start_phase(at_us) {
            let mut new = self.current_bps;
            if self.delay_based_limit_bps.is_finite() {
                new = new.max(self.delay_based_limit_bps);
            }
            if new != self.current_bps {
                self.min_history.clear();
                self.min_history.push_back((at_us, new));
                self.loss_based_bps = new;
                self.update_target(new, at_us);
                return;
            }
        }
        self.update_min_history(at_us);
        if self.last_loss_report_us.is_none() {
            self.apply_target_limits(at_us);
            return;
        }
        let since_report = at_us - self.last_loss_report_us.unwrap_or(at_us);
        if (since_report as f64) < 1.2 * MAX_RTCP_FEEDBACK_INTERVAL_US as f64 {
            let loss = f32::from(self.last_fraction_loss) / 256.0;
            if loss <= LOW_LOSS_THRESHOLD {
                let base = self.min_history.front().map_or(self.current_bps, |m| m.1);
                let new = (base * INCREASE_FACTOR + 0.5).floor() + INCREASE_OFFSET_BPS;
                self.loss_based_bps = new;
                self.update_target(new, at_us);
                return;
            } else if loss > HIGH_LOSS_THRESHOLD
                && !self.has_decreased_since_last_fraction_loss
                && self
                    .time_last_decrease_us
                    .is_none_or(|t| at_us - t >= DECREASE_INTERVAL_US + self.last_rtt_us)
            {
                self.time_last_decrease_us = Some(at_us);
                let new = (self.current_bps * f64::from(512 - i32::from(self.last_fraction_loss))
                    / 512.0)
                    .floor();
                self.has_decreased_since_last_fraction_loss = true;
                self.loss_based_bps = new;
                self.update_target(new, at_us);
                return;
            }
        }
        self.apply_target_limits(at_us);
    }

    fn update_min_history(&mut self, at_us: i64) {
        while self
            .min_history
            .front()
            .is_some_and(|&(t, _)| at_us - t + 1_000 > INCREASE_INTERVAL_US)
        {
            self.min_history.pop_front();
        }
        while self
            .min_history
            .back()
            .is_some_and(|&(_, bps)| self.current_bps <= bps)
        {
            self.min_history.pop_back();
        }
        self.min_history.push_back((at_us, self.current_bps));
    }

    fn apply_target_limits(&mut self, at_us: i64) {
        self.update_target(self.current_bps, at_us);
    }

    fn update_target(&mut self, bps: f64, _at_us: i64) {
        let upper = self.delay_based_limit_bps.min(self.max_bps);
        self.current_bps = bps.min(upper).max(self.min_bps);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn past_start_phase() -> SendSideBandwidthEstimation {
        let mut s = SendSideBandwidthEstimation::new(1_000_000.0, 10_000.0, 10e6);
        // A first clean report at 0 starts the 2-s start phase.
        s.update_packets_lost(0, 20, 0);
        s
    }

    #[test]
    fn below_two_percent_loss_the_rate_rises_8_percent_over_the_last_seconds_minimum() {
        let mut s = past_start_phase();
        assert_eq!(
            (1_000_000.0f64 * 1.08 + 0.5).floor() + 1_000.0,
            s.target_bps()
        );
        assert_eq!(1_081_000.0, s.target_bps());
        s.update_estimate(2_100_000);
        // The minimum of the last second is the 1 081 000 recorded at 2.1 s (older values aged
        // out): floor(1 081 000 * 1.08 + 0.5) + 1000.
        assert_eq!(
            (1_081_000.0f64 * 1.08 + 0.5).floor() + 1_000.0,
            s.target_bps()
        );
    }

    #[test]
    fn between_2_and_10_percent_the_rate_holds() {
        let mut s = past_start_phase();
        let before = s.target_bps();
        // 1 of 20 = 5 %: q8 = 256 / 20 = 12.
        s.update_packets_lost(1, 20, 3_000_000);
        assert_eq!(12, s.fraction_loss_q8());
        assert_eq!(before, s.target_bps());
    }

    #[test]
    fn above_10_percent_the_rate_drops_by_half_the_loss_once_per_300_ms_plus_rtt() {
        let mut s = past_start_phase();
        s.update_rtt(100_000);
        let before = s.target_bps(); // 1 081 000
        // 4 of 20 = 20 %: q8 = 1024 / 20 = 51; rate * (512 - 51) / 512.
        s.update_packets_lost(4, 20, 3_000_000);
        let once = (before * 461.0 / 512.0).floor();
        assert_eq!(once, s.target_bps());
        // Same report again 300 ms later: 300 < 300 + 100, no decrease.
        s.update_packets_lost(4, 20, 3_300_000);
        assert_eq!(once, s.target_bps());
        s.update_packets_lost(4, 20, 3_400_000);
        assert_eq!((once * 461.0 / 512.0).floor(), s.target_bps());
    }

    #[test]
    fn fewer_than_20_packets_accumulate_into_the_next_report() {
        let mut s = past_start_phase();
        s.update_packets_lost(5, 10, 3_000_000);
        assert_eq!(0, s.fraction_loss_q8(), "10 packets are not enough");
        s.update_packets_lost(0, 10, 3_100_000);
        assert_eq!(64, s.fraction_loss_q8(), "5 of 20 = 25 % = 64/256");
    }

    #[test]
    fn the_target_never_exceeds_the_delay_based_limit() {
        let mut s = past_start_phase();
        s.update_delay_based_estimate(3_000_000, 500_000.0);
        assert_eq!(500_000.0, s.target_bps());
        s.update_estimate(3_100_000);
        assert_eq!(500_000.0, s.target_bps());
    }

    #[test]
    fn in_the_start_phase_the_delay_based_estimate_is_taken_outright() {
        let mut s = SendSideBandwidthEstimation::new(300_000.0, 10_000.0, 10e6);
        s.update_packets_lost(0, 20, 0);
        s.update_delay_based_estimate(100_000, 900_000.0);
        s.update_estimate(100_000);
        assert_eq!(900_000.0, s.target_bps());
    }
}

//! The delay-based estimator: inter-arrival grouping, trendline, overuse detector and AIMD.
//!
//! Port of libwebrtc `modules/congestion_controller/goog_cc/delay_based_bwe.cc`
//! (`DelayBasedBwe::IncomingPacketFeedbackVector`, `IncomingPacketFeedback`,
//! `MaybeUpdateEstimate`), one detector for all packets (the separate-audio trial is off by
//! default there too).

use super::aimd::AimdRateControl;
use super::inter_arrival::InterArrival;
use super::overuse::{BandwidthUsage, OveruseDetector};
use super::rtt::round_ms;
use super::trendline::Trendline;

/// Without feedback for this long the grouping and detector restart (µs).
/// libwebrtc `goog_cc/delay_based_bwe.cc`, `kStreamTimeOut` (2 s).
pub(super) const STREAM_TIMEOUT_US: i64 = 2_000_000;

/// One received packet, as the delay-based estimator sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Received {
    /// Send time on this side, µs.
    pub send_us: i64,
    /// Receive time on the receiver's clock, µs.
    pub recv_us: i64,
    /// Size, bytes.
    pub size: i64,
    /// Packets before this one were left out (sent inside a guard window): its group starts a
    /// new grouping rather than being compared across the gap, as after libwebrtc's
    /// `kStreamTimeOut`, but the trendline and detector keep their history.
    pub regroup: bool,
}

/// What one feedback did to the delay-based estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct DelayResult {
    /// Whether the estimate was (re)computed.
    pub updated: bool,
    /// Whether it came from a probe.
    pub probe: bool,
    /// The estimate, bps.
    pub target_bps: f64,
    /// Whether the detector went from underusing to normal in this feedback.
    pub recovered_from_overuse: bool,
    /// The detector state after this feedback.
    pub state: BandwidthUsage,
}

/// libwebrtc's `DelayBasedBwe`.
#[derive(Debug, Clone)]
pub(super) struct DelayBasedBwe {
    inter_arrival: InterArrival,
    trendline: Trendline,
    detector: OveruseDetector,
    last_seen_us: Option<i64>,
    rate_control: AimdRateControl,
}

impl DelayBasedBwe {
    /// Starts at `start_bps` within `[min_bps, max_bps]`.
    pub(super) fn new(start_bps: f64, min_bps: f64, max_bps: f64) -> Self {
        Self {
            inter_arrival: InterArrival::new(),
            trendline: Trendline::new(),
            detector: OveruseDetector::new(),
            last_seen_us: None,
            rate_control: AimdRateControl::new(start_bps, min_bps, max_bps),
        }
    }

    /// The detector.
    pub(super) fn detector(&self) -> &OveruseDetector {
        &self.detector
    }

    /// The rate controller.
    pub(super) fn rate_control(&self) -> &AimdRateControl {
        &self.rate_control
    }

    /// `OnRttUpdate` (µs).
    pub(super) fn on_rtt_update(&mut self, rtt_us: i64) {
        self.rate_control.set_rtt(rtt_us);
    }

    /// `IncomingPacketFeedbackVector`: `packets` sorted by receive time.
    pub(super) fn incoming_feedback(
        &mut self,
        feedback_us: i64,
        packets: &[Received],
        acked_bps: Option<f64>,
        probe_bps: Option<f64>,
    ) -> DelayResult {
        let state = self.detector.state();
        if packets.is_empty() {
            return DelayResult {
                updated: false,
                probe: false,
                target_bps: self.rate_control.latest_estimate(),
                recovered_from_overuse: false,
                state,
            };
        }
        let mut prev = state;
        let mut recovered = false;
        for p in packets {
            self.incoming_packet(p, feedback_us);
            let now = self.detector.state();
            if prev == BandwidthUsage::Underusing && now == BandwidthUsage::Normal {
                recovered = true;
            }
            prev = now;
        }
        self.maybe_update(acked_bps, probe_bps, recovered, feedback_us)
    }

    fn incoming_packet(&mut self, p: &Received, at_us: i64) {
        if self
            .last_seen_us
            .is_none_or(|t| at_us - t > STREAM_TIMEOUT_US)
        {
            self.inter_arrival = InterArrival::new();
            self.trendline = Trendline::new();
            self.detector = OveruseDetector::new();
        }
        self.last_seen_us = Some(at_us);
        if p.regroup {
            self.inter_arrival = InterArrival::new();
        }
        if let Some(d) = self
            .inter_arrival
            .compute_deltas(p.send_us, p.recv_us, at_us, p.size)
        {
            let recv_delta_ms = d.arrival_delta_us as f64 / 1000.0;
            let send_delta_ms = d.send_delta_us as f64 / 1000.0;
            let arrival_ms = round_ms(p.recv_us);
            let trend = self
                .trendline
                .update(recv_delta_ms, send_delta_ms, arrival_ms);
            self.detector.detect(
                trend,
                self.trendline.num_deltas(),
                send_delta_ms,
                arrival_ms,
            );
        }
    }

    fn maybe_update(
        &mut self,
        acked_bps: Option<f64>,
        probe_bps: Option<f64>,
        recovered: bool,
        at_us: i64,
    ) -> DelayResult {
        let state = self.detector.state();
        let mut result = DelayResult {
            updated: false,
            probe: false,
            target_bps: self.rate_control.latest_estimate(),
            recovered_from_overuse: false,
            state,
        };
        if state == BandwidthUsage::Overusing {
            match acked_bps {
                Some(acked) if self.rate_control.time_to_reduce_further(at_us, acked) => {
                    result.target_bps = self.rate_control.update(state, Some(acked), at_us);
                    result.updated = self.rate_control.valid_estimate();
                }
                None if self.rate_control.initial_time_to_reduce_further(at_us) => {
                    // Overusing before any acknowledged rate: halve every 200 ms.
                    let half = self.rate_control.latest_estimate() / 2.0;
                    self.rate_control.set_estimate(half, at_us);
                    result.updated = true;
                    result.target_bps = self.rate_control.latest_estimate();
                }
                _ => {}
            }
        } else if let Some(probe) = probe_bps {
            self.rate_control.set_estimate(probe, at_us);
            result.probe = true;
            result.updated = true;
            result.target_bps = self.rate_control.latest_estimate();
        } else {
            result.target_bps = self.rate_control.update(state, acked_bps, at_us);
            result.updated = self.rate_control.valid_estimate();
            result.recovered_from_overuse = recovered;
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One packet every 10 ms that arrives 15 ms after the previous one: the path drains at two
    /// thirds of the send rate.
    fn overdriven(from: i64, count: i64) -> Vec<Received> {
        (from..from + count)
            .map(|i| Received {
                send_us: i * 10_000,
                recv_us: 1_000_000 + i * 15_000,
                size: 1000,
                regroup: false,
            })
            .collect()
    }

    #[test]
    fn overuse_before_any_acknowledged_rate_halves_the_estimate_at_every_feedback() {
        let mut d = DelayBasedBwe::new(300_000.0, 10_000.0, 10e6);
        // 25 groups: the window of 20 deltas fills at the 21st group; from then on
        // m = 20 x slope x 4 > 12.5 ms, and two samples later overuse has lasted > 10 ms.
        let r = d.incoming_feedback(400_000, &overdriven(0, 25), None, None);
        assert_eq!(BandwidthUsage::Overusing, r.state);
        assert!(r.updated && !r.probe);
        assert_eq!(150_000.0, r.target_bps);
        // libwebrtc's `InitialTimeToReduceFurther` compares half the estimate minus 1 bit/s with
        // half the estimate, so it is always time: halved again 100 ms later.
        let r = d.incoming_feedback(500_000, &overdriven(25, 10), None, None);
        assert_eq!(BandwidthUsage::Overusing, r.state);
        assert_eq!(75_000.0, r.target_bps);
    }

    #[test]
    fn overuse_with_an_acknowledged_rate_backs_off_to_085_of_it_once_per_rtt() {
        let mut d = DelayBasedBwe::new(300_000.0, 10_000.0, 10e6);
        d.on_rtt_update(100_000);
        let r = d.incoming_feedback(400_000, &overdriven(0, 25), Some(200_000.0), None);
        assert_eq!(0.85 * 200_000.0 - 5_000.0, r.target_bps);
        // 50 ms later: not yet (100 ms RTT), and 180 k is not below half of 165 k.
        let r = d.incoming_feedback(450_000, &overdriven(25, 5), Some(180_000.0), None);
        assert!(!r.updated);
        assert_eq!(165_000.0, r.target_bps);
        let r = d.incoming_feedback(500_000, &overdriven(30, 5), Some(180_000.0), None);
        assert_eq!(0.85 * 180_000.0 - 5_000.0, r.target_bps);
    }

    #[test]
    fn a_steady_path_keeps_the_detector_normal_and_the_estimate_rising() {
        let mut d = DelayBasedBwe::new(300_000.0, 10_000.0, 10e6);
        let steady: Vec<Received> = (0..30)
            .map(|i| Received {
                send_us: i * 10_000,
                recv_us: 1_000_000 + i * 10_000,
                size: 1000,
                regroup: false,
            })
            .collect();
        let r = d.incoming_feedback(400_000, &steady, Some(800_000.0), None);
        assert_eq!(BandwidthUsage::Normal, r.state);
        // Hold -> Increase starts the clock: the first step is the 1 kbit/s floor.
        assert_eq!(301_000.0, r.target_bps);
    }
}

//! Probing on the controller side: when to probe (`ProbeController`,
//! `goog_cc/probe_controller.cc`) and what a probe found (`ProbeBitrateEstimator`,
//! `goog_cc/probe_bitrate_estimator.cc`).
//!
//! Times are microseconds on the estimator's clock, rates bits per second.

use crate::pacing::{MIN_PROBE_DURATION, MIN_PROBE_PACKETS_SENT, ProbeClusterConfig};
use std::collections::BTreeMap;

/// First initial probe, as a multiple of the start rate. libwebrtc `probe_controller.cc`,
/// `ProbeControllerConfig::first_exponential_probe_scale` (3.0).
pub(super) const FIRST_EXPONENTIAL_PROBE_SCALE: f64 = 3.0;

/// Second initial probe, as a multiple of the start rate. libwebrtc `probe_controller.cc`,
/// `ProbeControllerConfig::second_exponential_probe_scale` (6.0).
pub(super) const SECOND_EXPONENTIAL_PROBE_SCALE: f64 = 6.0;

/// A further probe is at this multiple of the estimate. libwebrtc `probe_controller.cc`,
/// `ProbeControllerConfig::further_exponential_probe_scale` (2.0).
pub(super) const FURTHER_EXPONENTIAL_PROBE_SCALE: f64 = 2.0;

/// A further probe follows when the estimate exceeds this fraction of the last probe rate.
/// libwebrtc `probe_controller.cc`, `ProbeControllerConfig::further_probe_threshold` (0.7).
pub(super) const FURTHER_PROBE_THRESHOLD: f64 = 0.7;

/// How long a probe result is waited for (µs). libwebrtc `probe_controller.cc`,
/// `kMaxWaitingTimeForProbingResult` (1 s).
pub(super) const MAX_WAITING_TIME_FOR_PROBING_RESULT_US: i64 = 1_000_000;

/// An estimate under this fraction of the previous one is a large drop. libwebrtc
/// `probe_controller.cc`, `kBitrateDropThreshold` (0.66).
pub(super) const BITRATE_DROP_THRESHOLD: f64 = 0.66;

/// A recovery probe after a large drop is at this fraction of the rate before it. libwebrtc
/// `probe_controller.cc`, `kProbeFractionAfterDrop` (0.85).
pub(super) const PROBE_FRACTION_AFTER_DROP: f64 = 0.85;

/// The recovery probe is sent only if `(1 - this) x` its rate exceeds the estimate. libwebrtc
/// `probe_controller.cc`, `kProbeUncertainty` (0.05).
pub(super) const PROBE_UNCERTAINTY: f64 = 0.05;

/// A recovery probe only within this long of the drop (µs). libwebrtc `probe_controller.cc`,
/// `kBitrateDropTimeout` (5 s).
pub(super) const BITRATE_DROP_TIMEOUT_US: i64 = 5_000_000;

/// At most one recovery probe this often (µs). libwebrtc `probe_controller.cc`,
/// `kMinTimeBetweenAlrProbes` (5 s).
pub(super) const MIN_TIME_BETWEEN_ALR_PROBES_US: i64 = 5_000_000;

/// ALR counts as just ended for this long (µs). libwebrtc `probe_controller.cc`,
/// `kAlrEndedTimeout` (3 s).
pub(super) const ALR_ENDED_TIMEOUT_US: i64 = 3_000_000;

/// Probes go up to this multiple of the encoders' total maximum bitrate when it is known.
/// libwebrtc `probe_controller.cc`, `InitiateProbing`: "If a max allocated bitrate has been
/// configured, allow probing up to 2x that rate" (`max_total_allocated_bitrate_ * 2`).
pub(super) const ALLOCATED_BITRATE_PROBE_SCALE: f64 = 2.0;

/// Where [`ProbeController`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ProbeState {
    /// No probe asked for yet.
    Init,
    /// Probes sent; a result above the threshold asks for a further one.
    WaitingForProbingResult,
    /// Nothing further to probe.
    ProbingComplete,
}

/// libwebrtc's `ProbeController`, with the default configuration and without ALR periodic
/// probing (off by default) or network-estimate caps.
#[derive(Debug, Clone)]
pub(super) struct ProbeController {
    state: ProbeState,
    max_bps: f64,
    max_total_allocated_bps: Option<f64>,
    estimated_bps: f64,
    min_bitrate_to_probe_further: f64,
    time_last_probing_initiated_us: i64,
    time_of_last_large_drop_us: i64,
    bitrate_before_last_large_drop: f64,
    last_bwe_drop_probing_time_us: i64,
    alr_start_us: Option<i64>,
    alr_end_us: Option<i64>,
    next_cluster_id: i32,
}

impl ProbeController {
    /// A controller probing up to `max_bps`.
    pub(super) fn new(max_bps: f64) -> Self {
        Self {
            state: ProbeState::Init,
            max_bps,
            max_total_allocated_bps: None,
            estimated_bps: 0.0,
            min_bitrate_to_probe_further: f64::INFINITY,
            time_last_probing_initiated_us: 0,
            time_of_last_large_drop_us: i64::MIN / 2,
            bitrate_before_last_large_drop: 0.0,
            last_bwe_drop_probing_time_us: i64::MIN / 2,
            alr_start_us: None,
            alr_end_us: None,
            next_cluster_id: 1,
        }
    }

    /// `SetMaxTotalAllocatedBitrate`: the sum of the encoders' maximum bitrates (libwebrtc's
    /// `BitrateAllocator` reports it). From then on no probe exceeds
    /// [`ALLOCATED_BITRATE_PROBE_SCALE`] times it, so an application-limited call does not
    /// probe a fast path up to the configured maximum. `None` or a non-positive rate removes the
    /// cap. libwebrtc's allocation probe in ALR (`OnMaxTotalAllocatedBitrate`) is not modelled.
    pub(super) fn set_max_total_allocated_bitrate(&mut self, bps: Option<f64>) {
        self.max_total_allocated_bps = bps.filter(|b| b.is_finite() && *b > 0.0);
    }

    /// The highest rate a probe may have now.
    pub(super) fn max_probe_bitrate(&self) -> f64 {
        match self.max_total_allocated_bps {
            Some(allocated) => self.max_bps.min(ALLOCATED_BITRATE_PROBE_SCALE * allocated),
            None => self.max_bps,
        }
    }

    /// The state.
    #[cfg(test)]
    pub(super) fn state(&self) -> ProbeState {
        self.state
    }

    /// `InitiateExponentialProbing`: clusters at 3x and 6x `start_bps`.
    pub(super) fn initiate_exponential_probing(
        &mut self,
        at_us: i64,
        start_bps: f64,
    ) -> Vec<ProbeClusterConfig> {
        self.estimated_bps = start_bps;
        self.initiate_probing(
            at_us,
            &[
                FIRST_EXPONENTIAL_PROBE_SCALE * start_bps,
                SECOND_EXPONENTIAL_PROBE_SCALE * start_bps,
            ],
            true,
        )
    }

    /// `SetEstimatedBitrate`: records large drops, and probes further while waiting for a
    /// result when the estimate exceeds 0.7 of the last probe.
    pub(super) fn set_estimated_bitrate(
        &mut self,
        at_us: i64,
        bps: f64,
    ) -> Vec<ProbeClusterConfig> {
        if bps < BITRATE_DROP_THRESHOLD * self.estimated_bps {
            self.time_of_last_large_drop_us = at_us;
            self.bitrate_before_last_large_drop = self.estimated_bps;
        }
        self.estimated_bps = bps;
        if self.state == ProbeState::WaitingForProbingResult
            && bps > self.min_bitrate_to_probe_further
        {
            return self.initiate_probing(at_us, &[FURTHER_EXPONENTIAL_PROBE_SCALE * bps], true);
        }
        Vec::new()
    }

    /// `SetAlrStartTimeMs`.
    pub(super) fn set_alr_start(&mut self, alr_start_us: Option<i64>) {
        self.alr_start_us = alr_start_us;
    }

    /// `SetAlrEndedTimeMs`.
    pub(super) fn set_alr_ended(&mut self, at_us: i64) {
        self.alr_end_us = Some(at_us);
    }

    /// `RequestProbe`: after recovering from a large drop while in (or just out of) ALR, one
    /// probe at 0.85 of the rate before the drop.
    pub(super) fn request_probe(&mut self, at_us: i64) -> Vec<ProbeClusterConfig> {
        let in_alr = self.alr_start_us.is_some();
        let alr_ended_recently = self
            .alr_end_us
            .is_some_and(|end| at_us - end < ALR_ENDED_TIMEOUT_US);
        if (in_alr || alr_ended_recently) && self.state == ProbeState::ProbingComplete {
            let suggested = PROBE_FRACTION_AFTER_DROP * self.bitrate_before_last_large_drop;
            let min_expected = (1.0 - PROBE_UNCERTAINTY) * suggested;
            if min_expected > self.estimated_bps
                && at_us - self.time_of_last_large_drop_us < BITRATE_DROP_TIMEOUT_US
                && at_us - self.last_bwe_drop_probing_time_us > MIN_TIME_BETWEEN_ALR_PROBES_US
            {
                self.last_bwe_drop_probing_time_us = at_us;
                return self.initiate_probing(at_us, &[suggested], false);
            }
        }
        Vec::new()
    }

    /// `Process`: gives up waiting for a result after 1 s.
    pub(super) fn process(&mut self, at_us: i64) {
        if self.state == ProbeState::WaitingForProbingResult
            && at_us - self.time_last_probing_initiated_us > MAX_WAITING_TIME_FOR_PROBING_RESULT_US
        {
            self.state = ProbeState::ProbingComplete;
            self.min_bitrate_to_probe_further = f64::INFINITY;
        }
    }

    /// `InitiateProbing`: one cluster per rate, capped at [`Self::max_probe_bitrate`] (a capped
    /// probe ends the exponential search).
    fn initiate_probing(
        &mut self,
        at_us: i64,
        rates: &[f64],
        mut probe_further: bool,
    ) -> Vec<ProbeClusterConfig> {
        let mut clusters = Vec::new();
        let max_probe = self.max_probe_bitrate();
        for &rate in rates {
            let mut rate = rate;
            if rate > max_probe {
                rate = max_probe;
                probe_further = false;
            }
            if rate <= 0.0 || !rate.is_finite() {
                continue;
            }
            let id = self.next_cluster_id;
            self.next_cluster_id = self.next_cluster_id.wrapping_add(1).max(1);
            clusters.push(ProbeClusterConfig {
                id,
                target_bps: rate.round() as u64,
                target_duration: MIN_PROBE_DURATION,
                target_probe_count: MIN_PROBE_PACKETS_SENT,
            });
        }
        self.time_last_probing_initiated_us = at_us;
        if probe_further {
            self.state = ProbeState::WaitingForProbingResult;
            self.min_bitrate_to_probe_further =
                rates.last().copied().unwrap_or(f64::INFINITY) * FURTHER_PROBE_THRESHOLD;
        } else {
            self.state = ProbeState::ProbingComplete;
            self.min_bitrate_to_probe_further = f64::INFINITY;
        }
        clusters
    }
}

/// At least this fraction of a cluster's probes must be acknowledged. libwebrtc
/// `probe_bitrate_estimator.cc`, `kMinReceivedProbesRatio` (0.80).
pub(super) const MIN_RECEIVED_PROBES_RATIO: f64 = 0.80;

/// At least this fraction of a cluster's bytes must be acknowledged. libwebrtc
/// `probe_bitrate_estimator.cc`, `kMinReceivedBytesRatio` (0.80).
pub(super) const MIN_RECEIVED_BYTES_RATIO: f64 = 0.80;

/// Send and receive intervals longer than this invalidate a cluster (µs). libwebrtc
/// `probe_bitrate_estimator.cc`, `kMaxProbeInterval` (1 s).
pub(super) const MAX_PROBE_INTERVAL_US: i64 = 1_000_000;

/// A receive rate over this multiple of the send rate invalidates a cluster. libwebrtc
/// `probe_bitrate_estimator.cc`, `kMaxValidRatio` (2.0).
pub(super) const MAX_VALID_RATIO: f64 = 2.0;

/// Receiving under this fraction of the send rate means the link is saturated. libwebrtc
/// `probe_bitrate_estimator.cc`, `kMinRatioForUnsaturatedLink` (0.9).
pub(super) const MIN_RATIO_FOR_UNSATURATED_LINK: f64 = 0.9;

/// On a saturated link the result is this fraction of the receive rate. libwebrtc
/// `probe_bitrate_estimator.cc`, `kTargetUtilizationFraction` (0.95).
pub(super) const TARGET_UTILIZATION_FRACTION: f64 = 0.95;

/// Clusters whose last packet arrived longer ago than this are forgotten (µs). libwebrtc
/// `probe_bitrate_estimator.cc`, `kMaxClusterHistory` (1 s).
pub(super) const MAX_CLUSTER_HISTORY_US: i64 = 1_000_000;

/// A probe result never drops the estimate below this fraction of the acknowledged rate (when
/// that is lower than the delay-based estimate). libwebrtc `goog_cc_network_control.cc`,
/// `kProbeDropThroughputFraction` (0.85), with `limit_probes_lower_than_throughput_estimate`.
pub(super) const PROBE_DROP_THROUGHPUT_FRACTION: f64 = 0.85;

#[derive(Debug, Clone, Copy)]
struct Aggregated {
    num_probes: u32,
    first_send_us: i64,
    last_send_us: i64,
    first_receive_us: i64,
    last_receive_us: i64,
    size_last_send: i64,
    size_first_receive: i64,
    size_total: i64,
}

/// One acknowledged probe packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ProbePacket {
    /// The cluster it was sent in.
    pub cluster_id: i32,
    /// The cluster's `target_probe_count`.
    pub min_probes: u32,
    /// The cluster's `min_bytes`.
    pub min_bytes: i64,
    /// Send time, µs.
    pub send_us: i64,
    /// Receive time, µs (receiver clock).
    pub recv_us: i64,
    /// Bytes.
    pub size: i64,
}

/// libwebrtc's `ProbeBitrateEstimator`.
#[derive(Debug, Clone, Default)]
pub(super) struct ProbeBitrateEstimator {
    clusters: BTreeMap<i32, Aggregated>,
    estimate: Option<f64>,
}

impl ProbeBitrateEstimator {
    /// `HandleProbeAndEstimateBitrate`: adds an acknowledged probe packet; returns the
    /// cluster's rate once enough of it has been acknowledged.
    pub(super) fn handle_probe(&mut self, p: ProbePacket) -> Option<f64> {
        self.clusters
            .retain(|_, c| p.recv_us - c.last_receive_us < MAX_CLUSTER_HISTORY_US);
        let c = self.clusters.entry(p.cluster_id).or_insert(Aggregated {
            num_probes: 0,
            first_send_us: i64::MAX,
            last_send_us: i64::MIN,
            first_receive_us: i64::MAX,
            last_receive_us: i64::MIN,
            size_last_send: 0,
            size_first_receive: 0,
            size_total: 0,
        });
        if p.send_us < c.first_send_us {
            c.first_send_us = p.send_us;
        }
        if p.send_us > c.last_send_us {
            c.last_send_us = p.send_us;
            c.size_last_send = p.size;
        }
        if p.recv_us < c.first_receive_us {
            c.first_receive_us = p.recv_us;
            c.size_first_receive = p.size;
        }
        if p.recv_us > c.last_receive_us {
            c.last_receive_us = p.recv_us;
        }
        c.size_total += p.size;
        c.num_probes += 1;

        let min_probes = f64::from(p.min_probes) * MIN_RECEIVED_PROBES_RATIO;
        let min_size = p.min_bytes as f64 * MIN_RECEIVED_BYTES_RATIO;
        if f64::from(c.num_probes) < min_probes.trunc() || (c.size_total as f64) < min_size {
            return None;
        }
        let send_interval = c.last_send_us - c.first_send_us;
        let receive_interval = c.last_receive_us - c.first_receive_us;
        if send_interval <= 0
            || send_interval > MAX_PROBE_INTERVAL_US
            || receive_interval <= 0
            || receive_interval > MAX_PROBE_INTERVAL_US
        {
            return None;
        }
        // The last packet sent and the first received take no time inside their intervals.
        let send_bps = (c.size_total - c.size_last_send) as f64 * 8e6 / send_interval as f64;
        let receive_bps =
            (c.size_total - c.size_first_receive) as f64 * 8e6 / receive_interval as f64;
        if receive_bps / send_bps > MAX_VALID_RATIO {
            return None;
        }
        let mut result = send_bps.min(receive_bps);
        if receive_bps < MIN_RATIO_FOR_UNSATURATED_LINK * send_bps {
            result = TARGET_UTILIZATION_FRACTION * receive_bps;
        }
        self.estimate = Some(result);
        Some(result)
    }

    /// `FetchAndResetLastEstimatedBitrate`.
    pub(super) fn fetch_and_reset(&mut self) -> Option<f64> {
        self.estimate.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates(c: &[ProbeClusterConfig]) -> Vec<(i32, u64)> {
        c.iter().map(|c| (c.id, c.target_bps)).collect()
    }

    #[test]
    fn initial_probes_are_900k_and_1_8m_from_a_300k_start() {
        let mut p = ProbeController::new(100e6);
        let c = p.initiate_exponential_probing(0, 300_000.0);
        assert_eq!(vec![(1, 900_000), (2, 1_800_000)], rates(&c));
        assert_eq!(1687, c[0].min_bytes());
        assert_eq!(5, c[0].target_probe_count);
        assert_eq!(ProbeState::WaitingForProbingResult, p.state());
    }

    #[test]
    fn a_result_over_0_7_of_the_last_probe_asks_for_twice_it_and_one_under_does_not() {
        let mut p = ProbeController::new(100e6);
        p.initiate_exponential_probing(0, 300_000.0);
        // 0.7 x 1.8 M = 1.26 M: 1.2 M is not enough, 1.7 M is.
        assert!(p.set_estimated_bitrate(200_000, 1_200_000.0).is_empty());
        let c = p.set_estimated_bitrate(300_000, 1_700_000.0);
        assert_eq!(vec![(3, 3_400_000)], rates(&c));
        // Next threshold 0.7 x 3.4 M = 2.38 M.
        assert!(p.set_estimated_bitrate(400_000, 2_300_000.0).is_empty());
        // After 1 s without a result the search is over.
        p.process(1_300_001);
        assert_eq!(ProbeState::ProbingComplete, p.state());
        assert!(p.set_estimated_bitrate(1_400_000, 3_000_000.0).is_empty());
    }

    #[test]
    fn probes_are_capped_at_the_maximum_and_a_capped_probe_ends_the_search() {
        let mut p = ProbeController::new(1_000_000.0);
        let c = p.initiate_exponential_probing(0, 300_000.0);
        assert_eq!(vec![(1, 900_000), (2, 1_000_000)], rates(&c));
        assert_eq!(ProbeState::ProbingComplete, p.state());
        assert!(p.set_estimated_bitrate(100_000, 1_000_000.0).is_empty());
    }

    #[test]
    fn with_a_2_5_mbit_allocation_the_search_stops_at_5_mbit() {
        let mut p = ProbeController::new(100e6);
        p.set_max_total_allocated_bitrate(Some(2_500_000.0));
        assert_eq!(5_000_000.0, p.max_probe_bitrate());
        p.initiate_exponential_probing(0, 300_000.0);
        // 1.8 M -> 3.6 M (under the cap, the search goes on) -> 7.2 M capped at 5 M (it ends).
        let c = p.set_estimated_bitrate(300_000, 1_800_000.0);
        assert_eq!(vec![(3, 3_600_000)], rates(&c));
        assert_eq!(ProbeState::WaitingForProbingResult, p.state());
        let c = p.set_estimated_bitrate(600_000, 3_600_000.0);
        assert_eq!(vec![(4, 5_000_000)], rates(&c));
        assert_eq!(ProbeState::ProbingComplete, p.state());
        p.set_max_total_allocated_bitrate(Some(f64::NAN));
        assert_eq!(100e6, p.max_probe_bitrate());
    }

    #[test]
    fn after_a_large_drop_in_alr_one_probe_at_0_85_of_the_old_rate() {
        let mut p = ProbeController::new(100e6);
        p.initiate_exponential_probing(0, 300_000.0);
        p.process(1_000_001);
        p.set_estimated_bitrate(2_000_000, 2_000_000.0);
        // 1.2 M < 0.66 x 2 M: a large drop.
        p.set_estimated_bitrate(3_000_000, 1_200_000.0);
        assert!(p.request_probe(3_100_000).is_empty(), "not in ALR");
        p.set_alr_start(Some(2_500_000));
        let c = p.request_probe(3_200_000);
        assert_eq!(vec![(3, 1_700_000)], rates(&c));
        assert!(p.request_probe(3_300_000).is_empty(), "one per 5 s");
    }

    #[test]
    fn a_hand_computed_cluster_gives_the_lower_of_send_and_receive_rates() {
        // Five 1000-byte probes sent 4 ms apart (0..16 ms), received 5 ms apart (100..120 ms).
        // send: 4000 B over 16 ms = 2.0 Mbit/s; receive: 4000 B over 20 ms = 1.6 Mbit/s,
        // under 0.9 x 2.0, so the result is 0.95 x 1.6 = 1.52 Mbit/s.
        let mut e = ProbeBitrateEstimator::default();
        let mut last = None;
        for k in 0..5i64 {
            last = e.handle_probe(ProbePacket {
                cluster_id: 1,
                min_probes: 5,
                min_bytes: 3750,
                send_us: k * 4000,
                recv_us: 100_000 + k * 5000,
                size: 1000,
            });
            if k < 3 {
                assert_eq!(
                    None,
                    last,
                    "{} packets, {} bytes: too few",
                    k + 1,
                    (k + 1) * 1000
                );
            }
        }
        let r = last.expect("a result");
        assert!((r - 1_520_000.0).abs() < 1e-6, "{r}");
        assert_eq!(Some(r), e.fetch_and_reset());
        assert_eq!(None, e.fetch_and_reset());
    }

    #[test]
    fn an_unsaturated_cluster_gives_the_send_rate() {
        let mut e = ProbeBitrateEstimator::default();
        let mut last = None;
        for k in 0..5i64 {
            last = e.handle_probe(ProbePacket {
                cluster_id: 7,
                min_probes: 5,
                min_bytes: 1000,
                send_us: k * 4000,
                recv_us: 50_000 + k * 4100,
                size: 500,
            });
        }
        // send 2000 B / 16 ms = 1.0 Mbit/s; receive 2000 B / 16.4 ms = 975 609.76 bit/s > 0.9 x.
        let r = last.expect("a result");
        assert!((r - 2000.0 * 8e6 / 16_400.0).abs() < 1e-6, "{r}");
    }
}

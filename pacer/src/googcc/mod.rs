//! `GoogCc`: libwebrtc's GoogCC send-side bandwidth estimator, one file per component. What a user
//! needs (the components, the differences from libwebrtc, probing) is documented on [`GoogCc`].

mod acknowledged;
mod aimd;
mod alr;
mod delay_based;
mod handle;
mod inter_arrival;
mod loss_based;
mod overuse;
mod probe;
pub(crate) mod rtt;
mod trendline;

pub use handle::{GoogCcHandle, GoogCcSnapshot};
pub use overuse::BandwidthUsage;

use crate::actions::{Action, ActionsHandle};
use crate::nack::NackResponderHandle;
use crate::pacing::ProbeChannel;
use acknowledged::AcknowledgedBitrateEstimator;
use alr::AlrDetector;
use delay_based::{DelayBasedBwe, Received};
use loss_based::SendSideBandwidthEstimation;
use probe::{ProbeBitrateEstimator, ProbeController, ProbePacket};
use rtc_interceptor::{BandwidthEstimator, EstimatorStats, PacketReport};
use rtt::RttEstimator;
use rustc_hash::FxHashMap;
use std::time::{Duration, Instant};

/// Start rate (bps): libwebrtc `api/transport/bitrate_settings.h` / `call/call_config`
/// `kDefaultStartBitrateBps` (300 kbit/s), equal to webrtc-rs `GCC_INITIAL_BITRATE`.
pub(crate) const DEFAULT_START_BPS: f64 = 300_000.0;

/// Minimum rate (bps): webrtc-rs `GCC_MIN_BITRATE` (100 kbit/s), so both estimators are bounded
/// alike; libwebrtc's floor is `congestion_controller::GetMinBitrate()` (5 kbit/s).
pub(crate) const DEFAULT_MIN_BPS: f64 = 100_000.0;

/// Maximum rate (bps): webrtc-rs `GCC_MAX_BITRATE` (100 Mbit/s); libwebrtc leaves it unbounded.
pub(crate) const DEFAULT_MAX_BPS: f64 = 100_000_000.0;

/// Process interval (µs). libwebrtc `call/rtp_transport_controller_send.cc`, the
/// `process_interval` of goog_cc's `NetworkControllerConfig` (25 ms,
/// `GoogCcNetworkControllerFactory::GetProcessInterval`).
pub(crate) const PROCESS_INTERVAL_US: i64 = 25_000;

/// Loss is handed to the loss-based estimator at most this often (µs). libwebrtc
/// `goog_cc/goog_cc_network_control.cc`, `kLossUpdateInterval` (1000 ms).
pub(crate) const LOSS_UPDATE_INTERVAL_US: i64 = 1_000_000;

/// Start, minimum and maximum rates of a [`GoogCc`].
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GoogCcConfig {
    /// Start rate, bps.
    pub start_bps: f64,
    /// Floor, bps.
    pub min_bps: f64,
    /// Ceiling, bps.
    pub max_bps: f64,
    /// The sum of the encoders' maximum bitrates, bps, when the application knows it (libwebrtc's
    /// `BitrateAllocator` hands it to `ProbeController::SetMaxTotalAllocatedBitrate`). Probes
    /// then stop at twice it (libwebrtc's `max_total_allocated_bitrate_ * 2`), so an
    /// application-limited call on a fast path does not probe its estimate up to `max_bps`.
    /// `None` (the default) probes up to `max_bps`.
    #[serde(default)]
    pub max_total_allocated_bps: Option<f64>,
}

impl Default for GoogCcConfig {
    fn default() -> Self {
        Self {
            start_bps: DEFAULT_START_BPS,
            min_bps: DEFAULT_MIN_BPS,
            max_bps: DEFAULT_MAX_BPS,
            max_total_allocated_bps: None,
        }
    }
}

/// A libwebrtc-faithful GoogCC send-side bandwidth estimator for webrtc-rs.
///
/// `GoogCc` implements webrtc-rs's [`BandwidthEstimator`], so it plugs into
/// `CongestionControlBuilder::new(GoogCc::new(GoogCcConfig::default())).build()` (or
/// `configure_congestion_control`) in place of webrtc-rs's own `Gcc`. It follows libwebrtc's
/// `modules/congestion_controller/goog_cc/` (a 2025 tree) component by component:
///
/// - `googcc/inter_arrival.rs`: 5-ms send-time groups (`InterArrivalDelta`);
/// - `googcc/trendline.rs` and `googcc/overuse.rs`: the trendline filter (window 20, smoothing
///   0.9) and the detector on `min(num_deltas, 60) x trend x 4` with the adaptive threshold
///   (`TrendlineEstimator`);
/// - `googcc/acknowledged.rs`: the Bayesian acknowledged-bitrate estimator (`BitrateEstimator`);
/// - `googcc/aimd.rs`: AIMD with the link-capacity estimate (`AimdRateControl`,
///   `LinkCapacityEstimator`);
/// - `googcc/delay_based.rs`: their composition (`DelayBasedBwe`);
/// - `googcc/loss_based.rs`: the classic loss-based estimator, which also combines the two halves
///   into the target (`SendSideBandwidthEstimation`);
/// - `googcc/rtt.rs`: RTT from feedback (`GoogCcNetworkController::OnTransportPacketsFeedback`);
/// - `googcc/alr.rs`: the budget-based `AlrDetector`;
/// - `googcc/probe.rs`: `ProbeController` and `ProbeBitrateEstimator`, with the pacer's
///   `BitrateProber` in `prober.rs` (see [Probing](#probing)).
///
/// It is sans-I/O: the only time it knows is the `now` it is handed and the instants in the
/// reports. Everything is deterministic. A [`GoogCcHandle`] taken before the estimator is boxed
/// into the chain shows its state to the application.
///
/// The target is announced by webrtc-rs's `CongestionControlInterceptor` after each feedback;
/// the 25-ms process interval of libwebrtc (where the loss-based estimator ramps) runs from
/// [`BandwidthEstimator::handle_timeout`] when the chain drives it, and otherwise at the next
/// feedback.
///
/// # Differences from libwebrtc that remain
///
/// 1. Padding goes on a dedicated padding SSRC with its own sequence numbers
///    ([`PacingConfig::padding_ssrc`](crate::PacingConfig::padding_ssrc)), where libwebrtc sends
///    it on the RTX SSRC (`RTPSender::GeneratePadding`: resent history packets as payload
///    padding, or padding-only packets of at most 224 bytes). webrtc-rs numbers RTP before the
///    chain, so a pacer cannot insert packets into a sequence space that the NACK responder also
///    uses. Padding packets carry a zero filler payload with the padding bit set (rtc-rtp
///    marshals the padding field only to the next 4-byte boundary), up to 1200 bytes.
/// 2. Loss-based estimation is the classic v1 (`SendSideBandwidthEstimation` with 2%/10%), not
///    `LossBasedBweV2`, which recent libwebrtc enables by default.
/// 3. RTT and loss come from transport feedback only (libwebrtc's `packet_feedback_only` mode);
///    RTCP receiver reports are not used. The RTT-based back-off (`RttBasedBackoff`, 3-s limit)
///    and the receiver (REMB) limit are not implemented.
/// 4. The ALR detector sees packets when their feedback arrives (send times are exact, but ALR
///    state lags by one feedback interval), because a `BandwidthEstimator` is not told about
///    sends.
/// 5. `prior_unacked_data` is not known (webrtc-rs reports do not carry it), so the
///    acknowledged-bitrate estimator counts each packet's own size only.
/// 6. Receive times are used on the receiver's clock directly instead of through
///    `TransportFeedbackAdapter`'s offset mapping (only differences of them are used, so the
///    result is the same except across the adapter's wrap handling).
/// 7. Rates are `f64` bits per second, where libwebrtc rounds `DataRate` to whole bits per second
///    at each step; trajectories agree to within a few bits per second.
/// 8. The configured maximum caps AIMD increases as older libwebrtc trees did; the modern tree
///    applies it only in `SendSideBandwidthEstimation`.
/// 9. The congestion window / pushback controller, network-state predictor, separate audio
///    detector, and the `WebRTC-*` field trials (all at their defaults) are not implemented.
/// 10. Pacing and padding rates (`GetPacingRates`) are not computed here: the pacer derives its
///     rate from the target.
/// 11. The process interval runs only after the first feedback, and only through
///     `handle_timeout` or folded into the next `on_reports`; libwebrtc's task queue runs it
///     every 25 ms from construction.
/// 12. Probe packets are matched to their cluster through a shared [`ProbeChannel`]: the pacer
///     records `(SSRC, RTP sequence number) -> cluster id` at release and the estimator looks
///     each `PacketReport` up, where libwebrtc carries `PacedPacketInfo` with the packet through
///     `SentPacket` into the feedback adapter. Cluster requests reach the pacer at its next
///     event; the initial probes are posted at construction ([`GoogCc::with_probing`]) and start
///     with the first media packet of 200 bytes or more, as `BitrateProber` does.
/// 13. Of the prober: no 1-byte padding packet opening each cluster, no
///     `abort_delayed_probes` / `max_probe_delay`; padding is charged to the media debt (as
///     libwebrtc does) but not counted in the pacer's stats.
/// 14. Of the probe controller: only the initial exponential probes, the further probes and
///     the recovery probe after a large drop in (or just after) ALR. Periodic ALR probing (off
///     by default in libwebrtc too), probing on a change of the allocated maximum
///     (`OnMaxTotalAllocatedBitrate`), network-estimate-driven probing and re-probing on a route
///     change are not implemented, and the maximum probe rate is the configured maximum (100
///     Mbit/s by default) rather than libwebrtc's 5 Mbit/s `kDefaultMaxProbingBitrate` for an
///     unbounded maximum.
/// 15. No padding outside probes (`GetPacingRates`' padding rate, keep-alive padding).
///
/// # Probing
///
/// [`GoogCc::with_probing`] shares a [`ProbeChannel`] with the pacer
/// ([`HandoverAwarePacerBuilder::probe_channel`](crate::pacing::HandoverAwarePacerBuilder::probe_channel));
/// `googcc/probe.rs` holds the `ProbeController` and `ProbeBitrateEstimator`, `prober.rs` the
/// pacer's `BitrateProber`. A caller wires it as follows:
///
/// - sender: `GoogCc::with_probing(config, channel.clone())` in `CongestionControl`, the pacer
///   built with `PacingConfig { padding_ssrc: Some(P), padding_payload_type: PT, .. }` and
///   `.probe_channel(channel)`, and the padding SSRC `P` bound with `bind_local_stream` as a
///   stream carrying the transport-wide-cc header extension (same id as the media streams):
///   without that binding `TwccSender` does not number padding and `CongestionControl` does not
///   record it, so the estimator never hears of it;
/// - receiver: `TwccReceiver` records padding by the transport-wide extension id of any bound
///   stream, so binding `P` there is optional but harmless (do bind it, with the same
///   extension, if other receive-side interceptors should know the stream); the application
///   discards packets of SSRC `P` / payload type `PT`.
///
/// Without a padding SSRC, probes carry queued media only.
///
/// # The estimator guard
///
/// Built with [`GoogCc::guarded_by`], the estimator leaves out what packets sent inside a guard
/// window of an [`ActionsHandle`] say about congestion (docs/architecture.md, "Handover-timed
/// actions"): a predicted handover's delay spike and loss burst are the satellite's, not a queue
/// the sender built. A report's packet is matched by its send instant (the pacer's release, which
/// is what webrtc-rs's TWCC records as `departure`). Such packets give no delay sample to the
/// trendline and detector, no RTT sample, and count neither as lost nor as expected in the loss
/// fraction; the first packet after them starts a new inter-arrival grouping instead of being
/// compared across the gap. They still count as sent for ALR and, when they arrived, as
/// acknowledged bytes, since the path did carry them. Outside the windows nothing changes.
///
/// The same handle receives every report's send instant and fate
/// ([`ActionsHandle::record_outcomes`]), which its hold gate reads to tell a path that loses
/// packets at boundaries from one that does not.
#[derive(Debug)]
pub struct GoogCc {
    epoch: Option<Instant>,
    delay: DelayBasedBwe,
    ssbe: SendSideBandwidthEstimation,
    acked: AcknowledgedBitrateEstimator,
    alr: AlrDetector,
    previously_in_alr: bool,
    rtt: RttEstimator,
    aimd_rtt_ms: Option<i64>,
    lost_since_loss_update: i64,
    expected_since_loss_update: i64,
    next_loss_update_us: Option<i64>,
    next_process_us: Option<i64>,
    last_state: BandwidthUsage,
    updates: u64,
    handle: GoogCcHandle,
    probing: Option<Probing>,
    guard: Option<ActionsHandle>,
    arrivals: Option<NackResponderHandle>,
    /// A guarded packet was left out and no packet after it has been fed yet.
    guard_gap: bool,
}

/// The probing half: what to probe, what the probes found, and the channel to the pacer.
#[derive(Debug)]
struct Probing {
    channel: ProbeChannel,
    controller: ProbeController,
    estimator: ProbeBitrateEstimator,
    /// `(min probes, min bytes)` of every cluster asked for, by id.
    clusters: FxHashMap<i32, (u32, i64)>,
    /// The target last handed to the probe controller.
    last_target_bps: Option<f64>,
    started: bool,
}

impl Probing {
    fn post(&mut self, clusters: Vec<crate::pacing::ProbeClusterConfig>) {
        for c in clusters {
            self.clusters.insert(
                c.id,
                (
                    c.target_probe_count,
                    i64::try_from(c.min_bytes()).unwrap_or(i64::MAX),
                ),
            );
            self.channel.request(c);
        }
    }
}

impl Default for GoogCc {
    fn default() -> Self {
        Self::new(GoogCcConfig::default())
    }
}

impl GoogCc {
    /// An estimator at `config.start_bps` (clamped to `[min, max]`).
    pub fn new(config: GoogCcConfig) -> Self {
        let min = config.min_bps.max(0.0);
        let max = config.max_bps.max(min);
        let start = config.start_bps.clamp(min, max);
        let mut alr = AlrDetector::default();
        alr.set_estimated_bitrate(start);
        let cc = Self {
            epoch: None,
            delay: DelayBasedBwe::new(start, min, max),
            ssbe: SendSideBandwidthEstimation::new(start, min, max),
            acked: AcknowledgedBitrateEstimator::default(),
            alr,
            previously_in_alr: false,
            rtt: RttEstimator::default(),
            aimd_rtt_ms: None,
            lost_since_loss_update: 0,
            expected_since_loss_update: 0,
            next_loss_update_us: None,
            next_process_us: None,
            last_state: BandwidthUsage::Normal,
            updates: 0,
            handle: GoogCcHandle::default(),
            probing: None,
            guard: None,
            arrivals: None,
            guard_gap: false,
        };
        cc.publish();
        cc
    }

    /// An estimator that probes (libwebrtc's `ProbeController` and `ProbeBitrateEstimator`): its
    /// probe clusters go to the pacer through `channel`, which the pacer must share
    /// ([`HandoverAwarePacerBuilder::probe_channel`](crate::pacing::HandoverAwarePacerBuilder::probe_channel)).
    /// The initial probes, at 3x and 6x the start rate, are posted at once; the pacer sends them
    /// with the first media.
    pub fn with_probing(config: GoogCcConfig, channel: ProbeChannel) -> Self {
        let mut cc = Self::new(config);
        let start = cc.ssbe.target_bps();
        let max = config.max_bps.max(config.min_bps.max(0.0));
        let mut controller = ProbeController::new(max);
        controller.set_max_total_allocated_bitrate(config.max_total_allocated_bps);
        let mut probing = Probing {
            channel,
            controller,
            estimator: ProbeBitrateEstimator::default(),
            clusters: FxHashMap::default(),
            last_target_bps: Some(start),
            started: false,
        };
        // libwebrtc probes when the network becomes available, at construction; the time of
        // the request is the estimator's epoch, 0.
        let initial = probing.controller.initiate_exponential_probing(0, start);
        probing.post(initial);
        cc.probing = Some(probing);
        cc
    }

    /// Guards the estimate with the guard windows of `actions` (see [the estimator
    /// guard](#the-estimator-guard)).
    pub fn guarded_by(mut self, actions: ActionsHandle) -> Self {
        self.guard = Some(actions);
        self
    }

    /// Hands every report's packet and arrival to `nack`, whose responder matches them to the
    /// frames it sent (`NackResponderHandle::take_frame_lateness`).
    pub fn reporting_arrivals_to(mut self, nack: NackResponderHandle) -> Self {
        self.arrivals = Some(nack);
        self
    }

    /// Whether this estimator probes.
    pub fn probes(&self) -> bool {
        self.probing.is_some()
    }

    /// Hands the target to the probe controller when it changed
    /// (`MaybeTriggerOnNetworkChanged` -> `ProbeController::SetEstimatedBitrate`).
    fn update_probe_controller(&mut self, now_us: i64) {
        let target = self.ssbe.target_bps();
        let alr_start = self.alr.alr_start_ms().map(|ms| ms * 1000);
        let Some(p) = self.probing.as_mut() else {
            return;
        };
        p.started = true;
        p.controller.set_alr_start(alr_start);
        p.controller.process(now_us);
        if p.last_target_bps != Some(target) {
            p.last_target_bps = Some(target);
            let clusters = p.controller.set_estimated_bitrate(now_us, target);
            p.post(clusters);
        }
    }

    /// Feeds the acknowledged probe packets of a feedback to the probe estimator; the result,
    /// if any (`FetchAndResetLastEstimatedBitrate`).
    fn probe_result(&mut self, reports: &[PacketReport]) -> Option<f64> {
        let mut probes = Vec::new();
        {
            let p = self.probing.as_ref()?;
            for r in reports {
                let Some(cluster_id) = p.channel.take_probe_cluster(r.ssrc, r.rtp_sequence_number)
                else {
                    continue;
                };
                let (Some(arrival), true) = (r.arrival, r.arrived) else {
                    continue;
                };
                let Some(&(min_probes, min_bytes)) = p.clusters.get(&cluster_id) else {
                    continue;
                };
                probes.push(ProbePacket {
                    cluster_id,
                    min_probes,
                    min_bytes,
                    send_us: self.micros(r.departure),
                    recv_us: i64::try_from(arrival.as_micros()).unwrap_or(i64::MAX),
                    size: i64::try_from(r.size).unwrap_or(i64::MAX),
                });
            }
        }
        // `SortedByReceiveTime`.
        probes.sort_by_key(|p| (p.recv_us, p.send_us));
        let p = self.probing.as_mut()?;
        for probe in probes {
            p.estimator.handle_probe(probe);
        }
        p.estimator.fetch_and_reset()
    }

    /// A read-only handle on this estimator's state; take it before boxing the estimator.
    pub fn handle(&self) -> GoogCcHandle {
        self.handle.clone()
    }

    /// The state as a snapshot (what the handle shows).
    pub fn snapshot(&self) -> GoogCcSnapshot {
        let detector = self.delay.detector();
        GoogCcSnapshot {
            updates: self.updates,
            target_bps: self.ssbe.target_bps(),
            delay_based_bps: self.delay.rate_control().latest_estimate(),
            loss_based_bps: self.ssbe.loss_based_bps(),
            acknowledged_bps: self.acked.bitrate_bps(),
            rtt: self
                .rtt
                .min_rtt_us()
                .map(|us| Duration::from_micros(us.max(0).unsigned_abs())),
            aimd_rtt: self
                .aimd_rtt_ms
                .map(|ms| Duration::from_millis(ms.max(0).unsigned_abs())),
            state: self.last_state,
            threshold_ms: detector.threshold_ms(),
            modified_trend_ms: detector.modified_trend(),
            loss_fraction: f64::from(self.ssbe.fraction_loss_q8()) / 256.0,
            link_capacity_bps: self.delay.rate_control().link_capacity().estimate(),
            in_alr: self.alr.alr_start_ms().is_some(),
        }
    }

    fn publish(&self) {
        self.handle.publish(self.snapshot());
    }

    /// Microseconds since the epoch (negative before it).
    fn micros(&self, at: Instant) -> i64 {
        let Some(epoch) = self.epoch else { return 0 };
        match at.checked_duration_since(epoch) {
            Some(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
            None => -i64::try_from(epoch.duration_since(at).as_micros()).unwrap_or(i64::MAX),
        }
    }

    fn on_process_interval(&mut self, at_us: i64) {
        self.ssbe.update_estimate(at_us);
        self.alr.set_estimated_bitrate(self.ssbe.target_bps());
        self.update_probe_controller(at_us);
        self.updates += 1;
    }

    fn run_due_process(&mut self, now_us: i64) {
        if let Some(next) = self.next_process_us
            && now_us >= next
        {
            self.on_process_interval(now_us);
            let mut next = next;
            while next <= now_us {
                next += PROCESS_INTERVAL_US;
            }
            self.next_process_us = Some(next);
        }
    }

    fn on_feedback(&mut self, now_us: i64, reports: &[PacketReport]) {
        // What was sent, in send order (libwebrtc feeds the ALR detector at send time).
        for r in reports {
            let send_ms = rtt::round_ms(self.micros(r.departure));
            self.alr
                .on_bytes_sent(i64::try_from(r.size).unwrap_or(i64::MAX), send_ms);
        }
        // Which reports the guard leaves out, in report order.
        let guarded: Vec<bool> = match &self.guard {
            Some(actions) => reports
                .iter()
                .map(|r| actions.is_active(Action::Guard, r.departure))
                .collect(),
            None => vec![false; reports.len()],
        };
        let mut received: Vec<(Received, u64, bool)> = reports
            .iter()
            .zip(&guarded)
            .filter(|(r, _)| r.arrived)
            .filter_map(|(r, &guarded)| {
                let arrival = r.arrival?;
                Some((
                    Received {
                        send_us: self.micros(r.departure),
                        recv_us: i64::try_from(arrival.as_micros()).unwrap_or(i64::MAX),
                        size: i64::try_from(r.size).unwrap_or(i64::MAX),
                        regroup: false,
                    },
                    r.id,
                    guarded,
                ))
            })
            .collect();
        // `TransportPacketsFeedback::SortedByReceiveTime`: receive time, then send time, then
        // sequence.
        received.sort_by_key(|(p, id, _)| (p.recv_us, p.send_us, *id));
        // Every packet that arrived is acknowledged bytes; only unguarded ones are delay and
        // RTT samples, the first after a guarded one regrouping.
        let acknowledged: Vec<Received> = received.iter().map(|(p, _, _)| *p).collect();
        let mut unguarded = Vec::with_capacity(received.len());
        for (mut p, _, guarded) in received {
            if guarded {
                self.guard_gap = true;
                continue;
            }
            p.regroup = std::mem::take(&mut self.guard_gap);
            unguarded.push(p);
        }
        if reports.iter().zip(&guarded).any(|(r, &g)| g && !r.arrived) {
            // A guarded loss is a gap in the sequence too.
            self.guard_gap = true;
        }
        let received = unguarded;

        let pairs: Vec<(i64, i64)> = received.iter().map(|p| (p.send_us, p.recv_us)).collect();
        if let Some(update) = self.rtt.on_feedback(now_us, &pairs) {
            self.aimd_rtt_ms = Some(update.mean_max_rtt_ms);
            self.delay.on_rtt_update(update.mean_max_rtt_ms * 1000);
            self.ssbe.update_rtt(update.min_rtt_us);
        }

        let counted = || reports.iter().zip(&guarded).filter(|(_, g)| !**g);
        self.expected_since_loss_update += i64::try_from(counted().count()).unwrap_or(i64::MAX);
        self.lost_since_loss_update +=
            i64::try_from(counted().filter(|(r, _)| !r.arrived).count()).unwrap_or(i64::MAX);
        if self.next_loss_update_us.is_none_or(|next| now_us > next) {
            self.next_loss_update_us = Some(now_us + LOSS_UPDATE_INTERVAL_US);
            self.ssbe.update_packets_lost(
                self.lost_since_loss_update,
                self.expected_since_loss_update,
                now_us,
            );
            self.lost_since_loss_update = 0;
            self.expected_since_loss_update = 0;
        }

        let in_alr = self.alr.alr_start_ms().is_some();
        if self.previously_in_alr && !in_alr {
            self.acked.set_alr_ended(now_us);
            if let Some(p) = self.probing.as_mut() {
                p.controller.set_alr_ended(now_us);
            }
        }
        self.previously_in_alr = in_alr;
        for p in &acknowledged {
            self.acked
                .on_packet(p.send_us, rtt::round_ms(p.recv_us), p.size);
        }

        let mut probe_bps = self.probe_result(reports);
        if let (Some(probe), Some(acked)) = (probe_bps, self.acked.bitrate_bps()) {
            // `limit_probes_lower_than_throughput_estimate`: a probe result never pulls the
            // estimate below 0.85 x the acknowledged rate (nor raises it by that rule).
            let limit = self
                .delay
                .rate_control()
                .latest_estimate()
                .min(acked * probe::PROBE_DROP_THROUGHPUT_FRACTION);
            probe_bps = Some(probe.max(limit));
        }
        let result =
            self.delay
                .incoming_feedback(now_us, &received, self.acked.bitrate_bps(), probe_bps);
        if !received.is_empty() {
            self.last_state = result.state;
        }
        if result.updated {
            if result.probe {
                self.ssbe.set_send_bitrate(result.target_bps, now_us);
            }
            self.ssbe
                .update_delay_based_estimate(now_us, result.target_bps);
            self.alr.set_estimated_bitrate(self.ssbe.target_bps());
        }
        if result.recovered_from_overuse
            && let Some(p) = self.probing.as_mut()
        {
            p.controller
                .set_alr_start(self.alr.alr_start_ms().map(|ms| ms * 1000));
            let clusters = p.controller.request_probe(now_us);
            p.post(clusters);
        }
        self.update_probe_controller(now_us);
        self.updates += 1;
    }
}

impl BandwidthEstimator for GoogCc {
    fn on_reports(&mut self, now: Instant, reports: &[PacketReport]) {
        let epoch = *self.epoch.get_or_insert(now);
        let _ = epoch;
        let now_us = self.micros(now);
        self.run_due_process(now_us);
        if reports.is_empty() {
            self.publish();
            return;
        }
        if let Some(actions) = &self.guard {
            actions.record_outcomes(now, reports.iter().map(|r| (r.departure, r.arrived)));
        }
        if let Some(nack) = &self.arrivals {
            nack.record_arrivals(reports.iter().map(|r| {
                (
                    r.ssrc,
                    r.rtp_sequence_number,
                    r.arrival.filter(|_| r.arrived),
                )
            }));
        }
        self.on_feedback(now_us, reports);
        if self.next_process_us.is_none() {
            self.next_process_us = Some(now_us + PROCESS_INTERVAL_US);
        }
        self.publish();
    }

    fn target_bitrate(&self) -> f64 {
        self.ssbe.target_bps()
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.epoch.is_none() {
            return;
        }
        let now_us = self.micros(now);
        let before = self.next_process_us;
        self.run_due_process(now_us);
        if before != self.next_process_us {
            self.publish();
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let epoch = self.epoch?;
        let next = self.next_process_us?;
        Some(epoch + Duration::from_micros(next.max(0).unsigned_abs()))
    }

    fn stats(&self) -> EstimatorStats {
        let mut stats = EstimatorStats::default();
        stats.delay_based_bitrate = Some(self.delay.rate_control().latest_estimate());
        stats.loss_based_bitrate = Some(self.ssbe.loss_based_bps());
        stats.packet_loss = Some(f64::from(self.ssbe.fraction_loss_q8()) / 256.0);
        stats.round_trip_time = self
            .rtt
            .min_rtt_us()
            .map(|us| Duration::from_micros(us.max(0).unsigned_abs()));
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimator_is_send_sync_and_starts_at_the_start_rate() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<GoogCc>();
        assert_send_sync::<GoogCcHandle>();
        let cc = GoogCc::default();
        assert_eq!(300_000.0, cc.target_bitrate());
        assert_eq!(300_000.0, cc.handle().target_bps());
        assert_eq!(None, cc.poll_timeout(), "idle before the first feedback");
    }

    fn report(id: u64, epoch: Instant, send_ms: u64, arrived: bool) -> PacketReport {
        PacketReport {
            ssrc: 1,
            id,
            rtp_sequence_number: id as u16,
            is_twcc: true,
            twcc_sequence_number: id as u16,
            size: 1000,
            arrived,
            departure: epoch + Duration::from_millis(send_ms),
            arrival: arrived.then(|| Duration::from_millis(5_000 + send_ms + 30)),
            ecn: Default::default(),
        }
    }

    #[test]
    fn in_the_start_phase_the_target_follows_the_delay_based_estimate_at_the_next_process_tick() {
        let epoch = Instant::now();
        let mut cc = GoogCc::default();
        // The first feedback, at 130 ms, about 10 packets sent every 10 ms from 0.
        let reports: Vec<_> = (0..10).map(|i| report(i, epoch, i * 10, true)).collect();
        let fb = epoch + Duration::from_millis(130);
        cc.on_reports(fb, &reports);
        // AIMD went Hold -> Increase (+1 kbit/s floor); 10 packets are too few for a loss
        // fraction, and the target is the loss-based state (300 k) under that limit.
        assert_eq!(Some(301_000.0), cc.stats().delay_based_bitrate);
        assert_eq!(300_000.0, cc.target_bitrate());
        assert_eq!(Some(fb + Duration::from_millis(25)), cc.poll_timeout());
        // The process tick: no loss, first 2 s: the delay-based estimate is taken outright.
        cc.handle_timeout(fb + Duration::from_millis(25));
        assert_eq!(301_000.0, cc.target_bitrate());
        assert_eq!(301_000.0, cc.handle().target_bps());
        assert_eq!(Some(fb + Duration::from_millis(50)), cc.poll_timeout());
        // RTT: 130 - 90 - 0 (the newest packet) = 40 ms; the older ones waited at the receiver.
        assert_eq!(Some(Duration::from_millis(40)), cc.stats().round_trip_time);
    }

    #[test]
    fn packets_sent_inside_a_guard_window_count_neither_as_lost_nor_as_expected() {
        let epoch = Instant::now();
        let actions = ActionsHandle::default();
        // The default guard window around a handover at 250 ms: [200, 650) ms.
        actions.set_predictions(epoch, [(epoch + Duration::from_millis(250), 1.0)]);
        let loss_after = |guard: Option<ActionsHandle>| {
            let mut cc = match guard {
                Some(actions) => GoogCc::default().guarded_by(actions),
                None => GoogCc::default(),
            };
            // 20 packets 10 ms apart from 0 ms arrive; 20 from 200 ms, every other one lost;
            // 20 from 400 ms arrive. One feedback at 700 ms, the first, so the loss is counted.
            let reports: Vec<_> = (0..60)
                .map(|i| report(i, epoch, i * 10, !(20..40).contains(&i) || i % 2 == 0))
                .collect();
            cc.on_reports(epoch + Duration::from_millis(700), &reports);
            cc.snapshot().loss_fraction
        };
        // Unguarded: 10 of 60 lost, 42/256 as libwebrtc's Q8 loss.
        assert_eq!(loss_after(None), 42.0 / 256.0);
        // Guarded: the 40 packets sent from 200 ms on are left out; 0 of 20 lost.
        assert_eq!(loss_after(Some(actions)), 0.0);
    }

    #[test]
    fn empty_feedback_changes_nothing() {
        let epoch = Instant::now();
        let mut cc = GoogCc::default();
        cc.on_reports(epoch, &[]);
        assert_eq!(300_000.0, cc.target_bitrate());
        assert_eq!(None, cc.poll_timeout());
    }
}

//! One call in virtual time through the real webrtc-rs interceptor chain (issue 5, section 2).
//!
//! [`run_call`] simulates a single call as a discrete-event loop in integer virtual time
//! ([`Time`], ns since the call start):
//!
//! - **Sender**: the synthetic [`Encoder`] and [`Packetizer`] feed a webrtc-rs [`Registry`] with
//!   `CongestionControl` (webrtc-rs's `Gcc`, wrapped to publish its target), `TwccSender`, this
//!   project's [`HandoverAwarePacer`] at `Slot::Pacer` and a NACK responder. The encoder
//!   follows the pacer's target every frame and drops frames while the pacer asks for a pause.
//! - **Congestion window** ([`CallConfig::cwnd`], issue 8): the pacer records what it releases
//!   and the estimator wrapper hands every feedback's reports and every 25-ms tick to a
//!   [`CwndChannel`]; with `pushback` (the default) the encoder drops frames as the window fills,
//!   with `pacer` the pacer holds media and sends keep-alives on the padding stream (bound for
//!   that even without GoogCC probing). [`CallConfig::keyframe_flush`] lets a key frame flush the
//!   pacer's video backlog (read from the synthetic payload header).
//! - **Receiver**: a second registry with the stock `TwccReceiver` and a NACK generator; RTP that
//!   comes out of it goes to the media [`Receiver`] and the [`QoeMeter`]. A PLI the media
//!   receiver asks for is written into the receiver chain as RTCP and crosses the reverse link
//!   like the TWCC feedback and the NACKs; the sender answers it with a key frame. A registry's
//!   terminus ends inbound RTCP, so the PLI is picked off as it arrives from the link, as a peer
//!   connection's RTCP reader would (a simplification of webrtc-rs's RTCP delivery).
//!   RFC 3550 receiver reports are not simulated (they change no timing here).
//! - **Loss recovery** ([`NackChoice`], issue 10): by default the libwebrtc-like pair of
//!   [`crate::nack`] with RTX negotiated (`video/rtx`, SSRC [`VIDEO_RTX_SSRC`], payload type
//!   [`VIDEO_RTX_PAYLOAD_TYPE`], `apt` = [`VIDEO_PAYLOAD_TYPE`]): retransmissions go on the RTX
//!   SSRC through the pacer (ahead of video) and the forward link, are numbered by the TWCC
//!   sender and recorded by the TWCC receiver, and are turned back into the original packet
//!   before the NACK generator and the media receiver. RTT: receiver reports are not exchanged,
//!   so the call stands in for them: every [`RTCP_INTERVAL`] it gives both the generator and the
//!   responder the RTT an RTCP round trip would measure now (the one-way delay, queueing
//!   included, of the latest packet sent on each link). PLIs: the media receiver stays the
//!   one source of key-frame requests for frames it cannot complete (a NACK give-up ends as
//!   such a frame); the generator's own key-frame request (its list overflowed) becomes a PLI
//!   only when the media receiver is not already asking and the last PLI is at least the
//!   receiver's PLI interval old. `stock` is webrtc-rs's pair as it was wired before (no RTX);
//!   `off` has no NACK at all.
//! - **Links**: the forward and reverse [`Link`]s of the scenario carry every packet (size = its
//!   marshalled size).
//! - **Policy**: a [`PolicyController`] decides the queue time limit at each decision boundary
//!   from a forecast ([`sources`]: the scenario's ground truth, the mirror of the truth seen so
//!   far, or SGP4 over the scenario's orbits); each interval ends in one telemetry
//!   [`IntervalRecord`] (DESIGN section 5) with that forecast and the ground truth as observed.
//!
//! The next event is the earliest of the next frame, either chain's `poll_timeout`, the media
//! receiver's timeout, the next decision and the next arrival on either link. As in the
//! webrtc-rs driver, a deadline that is not in the future is served 1 ms later (reference 3.1:
//! `MIN_IMMEDIATE_TIMEOUT_INTERVAL`).
//!
//! **Clock**: none is read. The chains take [`Instant`]s, so the caller hands [`run_call`] an
//! epoch and every instant given to the chains is that epoch plus a virtual offset; nothing the
//! call produces depends on the epoch.
//!
//! **Determinism**: every random component has its own seed (the links theirs from the scenario
//! builder, the encoder and the random policy theirs from the call seed), so the same
//! [`CallConfig`] gives the same telemetry. The only other randomness is webrtc-rs's
//! `rand::random()` SSRCs of the TWCC feedback and NACK packets, which do not change any size or
//! timing.

pub mod sender;
pub mod sources;

use crate::link::{LinkConfig, LinkConfigError, Time};
use crate::media::encoder::{Encoder, EncoderConfig};
use crate::media::packetizer::{DEFAULT_MAX_PAYLOAD, MediaPacket, Packetizer};
use crate::media::payload::PayloadHeader;
use crate::media::qoe::{QoeMeter, QoeReport};
use crate::media::receiver::{Receiver, ReceiverConfig};
use crate::nack::{
    NackGenerator, NackGeneratorHandle, NackResponder, NackResponderHandle, RTX_RECEIVER_SLOT,
    RtxReceiver, TAP_SLOT,
};
use crate::scenario::build::Realization;
use crate::scenario::orbit::OrbitPredictorInputs;
use crate::scenario::timeline::HandoverTimeline;
use chrono::{DateTime, Utc};
pub use sender::{SenderNames, SenderOptions, SenderOverrides};
pub use sources::HandoverChoice;

use crate::link::Link;
use handover_predictor::{ForecastSource, HandoverSource};
use pacer::cwnd::{CwndSnapshot, frame_drop_interval};
use pacer::policy::DEFAULT_DECISION_INTERVAL;
use pacer::telemetry::{
    Bwe, CwndMode, ForecastRecord, GccRecord, IntervalRecord, NackMode, ObservedRecord,
    PacerRecord, SCHEMA, SenderRecord,
};
use pacer::{
    CwndChannel, CwndConfig, Decision, Fixed, FrameInfo, GoogCc, GoogCcConfig, HandoverAwarePacer,
    Heuristic, OnnxPolicy, PacerHandle, PacerStats, PacingConfig, PolicyController, ProbeChannel,
    QueuePolicy, Random,
};
use rtc_interceptor::{
    Attribute, AttributedPacket, BandwidthEstimator, CongestionControlBuilder, Gcc, Interceptor,
    NackGeneratorBuilder, NackResponderBuilder, Packet, PacketReport, RTCPFeedback,
    RTPHeaderExtension, Registry, Slot, StreamInfo, TaggedPacket, TwccReceiverBuilder,
    TwccSenderBuilder,
};
use rtc_rtcp::payload_feedbacks::picture_loss_indication::PictureLossIndication;
use rtc_rtcp::transport_feedbacks::transport_layer_nack::TransportLayerNack;
use rtc_shared::TransportContext;
use rtc_shared::marshal::MarshalSize;
use sansio::Protocol;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const TRANSPORT_CC_URI: &str =
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01";
/// The video stream's SSRC.
pub const VIDEO_SSRC: u32 = 0x5A7E_111E;
/// The video stream's RTP payload type.
pub const VIDEO_PAYLOAD_TYPE: u8 = 96;
/// The SSRC of GoogCC's probe padding ([`BweChoice::GoogCc`]).
pub const PADDING_SSRC: u32 = 0x5A7E_BAD0;
/// The padding stream's RTP payload type.
pub const PADDING_PAYLOAD_TYPE: u8 = 127;
/// The video stream's RTX SSRC (RFC 4588), negotiated with [`NackChoice::Libwebrtc`].
pub const VIDEO_RTX_SSRC: u32 = 0x5A7E_111F;
/// The video stream's RTX payload type (`video/rtx`, `apt` = [`VIDEO_PAYLOAD_TYPE`]).
pub const VIDEO_RTX_PAYLOAD_TYPE: u8 = 97;
/// The receiver's SSRC (the sender of its PLIs).
pub(crate) const RECEIVER_SSRC: u32 = 0x0000_0E11;
/// At most this many NACKs per missing packet: libwebrtc's `kMaxNackRetries` = 10
/// (reference PART 5).
pub const MAX_NACKS_PER_PACKET: u16 = 10;
/// How often the simulated call hands the NACK pair the RTT, as RTCP receiver reports would
/// (libwebrtc's video RTCP report interval, 1 s).
pub const RTCP_INTERVAL: Duration = Duration::from_secs(1);
/// The webrtc-rs driver serves a deadline that is not in the future this much later
/// (reference 3.1: `MIN_IMMEDIATE_TIMEOUT_INTERVAL`).
const MIN_IMMEDIATE_TIMEOUT: Duration = Duration::from_millis(1);
/// Salt that separates the encoder's seed from the call seed.
pub(crate) const ENCODER_SEED_SALT: u64 = 0x454E_434F_4445_5231;
/// Salt that separates the random policy's seed from the call seed.
const POLICY_SEED_SALT: u64 = 0x504F_4C49_4359_0001;

/// Which queue policy decides the pacer's limit.
#[derive(Debug, Clone)]
pub enum PolicyChoice {
    /// WebRTC's fixed 2000 ms ([`Fixed::webrtc_default`]).
    Default,
    /// The design table on the forecast handover count ([`Heuristic`]).
    Heuristic,
    /// A uniformly drawn action each interval ([`Random`]), seeded from the call seed.
    Random,
    /// A fixed limit.
    Fixed(Duration),
    /// The learned ONNX policy, loaded and checked against its card.
    Learned(Arc<OnnxPolicy>),
}

impl PartialEq for PolicyChoice {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl PolicyChoice {
    /// The policy's name as telemetry writes it (`learned:<sha256 prefix>` for a model).
    pub fn name(&self) -> String {
        match self {
            Self::Default => "default".into(),
            Self::Heuristic => "heuristic".into(),
            Self::Random => "random".into(),
            Self::Fixed(limit) => format!("fixed:{}", limit.as_millis()),
            Self::Learned(model) => QueuePolicy::name(model.as_ref()),
        }
    }
}

impl PolicyChoice {
    pub(crate) fn build(&self, seed: u64) -> Box<dyn QueuePolicy> {
        match self {
            Self::Default => Box::new(Fixed::webrtc_default()),
            Self::Heuristic => Box::new(Heuristic),
            Self::Random => Box::new(Random::new(seed ^ POLICY_SEED_SALT)),
            Self::Fixed(limit) => Box::new(Fixed::new(*limit)),
            Self::Learned(model) => Box::new(model.as_ref().clone()),
        }
    }
}

/// Which send-side bandwidth estimator the call runs (issue 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BweChoice {
    /// This project's libwebrtc-faithful [`GoogCc`] (the default: it is what the paper's
    /// client ran).
    #[default]
    GoogCc,
    /// webrtc-rs's own `Gcc`.
    WebrtcRs,
}

impl BweChoice {
    /// The name `--bwe` takes and telemetry writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GoogCc => "googcc",
            Self::WebrtcRs => "webrtc-rs",
        }
    }

    /// The telemetry value.
    pub fn telemetry(self) -> Bwe {
        match self {
            Self::GoogCc => Bwe::GoogCc,
            Self::WebrtcRs => Bwe::WebrtcRs,
        }
    }
}

/// Which NACK generator and responder the call runs (issue 10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NackChoice {
    /// webrtc-rs's stock pair, as wired before issue 10:
    /// `NackGeneratorBuilder::new().with_max_nacks_per_packet(MAX_NACKS_PER_PACKET)` and
    /// `NackResponderBuilder::new()`, no RTX.
    Stock,
    /// The libwebrtc-like pair of [`crate::nack`], with RTX (the default).
    #[default]
    Libwebrtc,
    /// No NACK: losses are left to the media receiver's PLIs.
    Off,
}

impl NackChoice {
    /// The name `--nack` takes and telemetry writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stock => "stock",
            Self::Libwebrtc => "libwebrtc",
            Self::Off => "off",
        }
    }

    /// The telemetry value.
    pub fn mode(self) -> NackMode {
        match self {
            Self::Stock => NackMode::Stock,
            Self::Libwebrtc => NackMode::Libwebrtc,
            Self::Off => NackMode::Off,
        }
    }
}

/// Everything one simulated call needs.
#[derive(Debug, Clone)]
pub struct CallConfig {
    /// Unique per call; copied into every telemetry record.
    pub call_id: String,
    /// The scenario's name, for telemetry.
    pub scenario: String,
    /// The forward (media) link.
    pub forward: LinkConfig,
    /// The forward link's seed.
    pub forward_seed: u64,
    /// The reverse (feedback) link.
    pub reverse: LinkConfig,
    /// The reverse link's seed.
    pub reverse_seed: u64,
    /// The ground-truth handover timeline: what the oracle forecast reads and what telemetry
    /// records as observed.
    pub timeline: HandoverTimeline,
    /// The call seed: the encoder's and the random policy's seeds derive from it.
    pub seed: u64,
    /// How long the call lasts (virtual time).
    pub duration: Duration,
    /// The queue policy.
    pub policy: PolicyChoice,
    /// The decision interval (default [`DEFAULT_DECISION_INTERVAL`], 120 s).
    pub decision_interval: Duration,
    /// Where the policy's forecast comes from (default: the oracle).
    pub handover: HandoverChoice,
    /// The scenario's orbits and the call's UTC start, for the orbital forecast.
    pub orbits: Option<(OrbitPredictorInputs, DateTime<Utc>)>,
    /// Which NACK pair recovers losses (default: [`NackChoice::Libwebrtc`]).
    pub nack: NackChoice,
    /// Which bandwidth estimator runs (default: [`BweChoice::GoogCc`]).
    pub bwe: BweChoice,
    /// Where libwebrtc's congestion window acts (issue 8; default: [`CwndMode::Pushback`], as
    /// in libwebrtc since about M80).
    pub cwnd: CwndMode,
    /// Whether a new key frame flushes the video stream's queued packets from the pacer
    /// (issue 8; default off).
    pub keyframe_flush: bool,
}

impl CallConfig {
    /// A call over the given links with no handover timeline, the default policy and the
    /// default decision interval.
    pub fn over_links(
        scenario: impl Into<String>,
        forward: LinkConfig,
        reverse: LinkConfig,
        seed: u64,
        duration: Duration,
    ) -> Self {
        Self {
            call_id: format!("sim-{seed}"),
            scenario: scenario.into(),
            forward,
            forward_seed: seed.wrapping_mul(2).wrapping_add(1),
            reverse,
            reverse_seed: seed.wrapping_mul(2).wrapping_add(2),
            timeline: HandoverTimeline::none(),
            seed,
            duration,
            policy: PolicyChoice::Default,
            decision_interval: DEFAULT_DECISION_INTERVAL,
            handover: HandoverChoice::Oracle,
            orbits: None,
            nack: NackChoice::default(),
            bwe: BweChoice::default(),
            cwnd: CwndMode::Pushback,
            keyframe_flush: false,
        }
    }

    /// A call drawn from a realised scenario: its links, their seeds, its timeline, its seed, its
    /// duration and its sender options (the scenario file's `[sender]` table over the defaults,
    /// [`Realization::sender`]; lay a command line over them with [`Self::set_sender`]).
    pub fn from_realization(realization: &Realization, policy: PolicyChoice) -> Self {
        let sender = realization.sender;
        Self {
            call_id: format!("{}-{}", realization.name, realization.seed),
            scenario: realization.name.clone(),
            forward: realization.forward.clone(),
            forward_seed: realization.forward_seed,
            reverse: realization.reverse.clone(),
            reverse_seed: realization.reverse_seed,
            timeline: realization.timeline.clone(),
            seed: realization.seed,
            duration: realization.duration,
            policy,
            decision_interval: DEFAULT_DECISION_INTERVAL,
            handover: HandoverChoice::Oracle,
            orbits: realization
                .orbit
                .as_ref()
                .map(|o| (o.predictor.clone(), o.start)),
            nack: sender.nack,
            bwe: sender.bwe,
            cwnd: sender.cwnd,
            keyframe_flush: sender.keyframe_flush,
        }
    }

    /// The call's sender options.
    pub fn sender(&self) -> SenderOptions {
        SenderOptions {
            bwe: self.bwe,
            nack: self.nack,
            cwnd: self.cwnd,
            keyframe_flush: self.keyframe_flush,
        }
    }

    /// Sets every sender option.
    pub fn set_sender(&mut self, options: SenderOptions) {
        self.bwe = options.bwe;
        self.nack = options.nack;
        self.cwnd = options.cwnd;
        self.keyframe_flush = options.keyframe_flush;
    }
}

/// Why a call could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A link configuration is invalid.
    #[error("invalid {direction} link: {source}")]
    Link {
        /// `forward` or `reverse`.
        direction: &'static str,
        /// What is wrong with it.
        source: LinkConfigError,
    },
    /// An interceptor chain refused a packet or a timeout.
    #[error("{side} interceptor chain failed: {message}")]
    Chain {
        /// `sender` or `receiver`.
        side: &'static str,
        /// The chain's error.
        message: String,
    },
    /// `--handover orbital` over a scenario without orbits.
    #[error(
        "the scenario {0} has no orbits to propagate (its handovers are drawn, not computed): \
         use the oracle or mirror forecast"
    )]
    NoOrbits(String),
    /// The call is too long to represent as an [`Instant`] offset.
    #[error("call duration {0:?} is out of range")]
    Duration(Duration),
}

/// What one call produced.
#[derive(Debug, Clone)]
pub struct CallResult {
    /// One record per decision interval (the last may be shorter).
    pub telemetry: Vec<IntervalRecord>,
    /// QoE over the whole call.
    pub qoe: QoeReport,
    /// Frames rendered in each whole second of the call.
    pub rendered_per_second: Vec<u32>,
    /// The policy decisions, in order.
    pub decisions: Vec<Decision>,
    /// Frames the encoder produced.
    pub frames_encoded: u64,
    /// Key frames among them.
    pub key_frames: u64,
    /// PLIs the receiver sent.
    pub plis_sent: u64,
    /// RTP packets the packetizer produced (retransmissions not included).
    pub media_packets: u64,
    /// RTP packets put on the forward link, retransmissions included.
    pub rtp_packets_sent: u64,
    /// Deadlines that were not in the future when served (each was served 1 ms later).
    pub stale_deadlines: u64,
    /// Loss recovery over the call.
    pub recovery: RecoveryCounts,
    /// What the congestion window and key-frame flushing did over the call (issue 8).
    pub sender: SenderCounts,
}

/// What the sender's congestion window and key-frame flushing did over a call (issue 8).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SenderCounts {
    /// The mode that ran.
    pub cwnd: Option<CwndMode>,
    /// Frames the encoder dropped for congestion-window pushback.
    pub frames_dropped_by_pushback: u64,
    /// Time the pacer was congested (pacer mode).
    pub congested: Duration,
    /// Keep-alives the congested pacer sent.
    pub keepalives: u64,
    /// Packets key frames flushed from the pacer queue.
    pub packets_flushed: u64,
    /// The smallest pushback ratio seen at a frame (1 without pushback).
    pub min_pushback_ratio: f64,
    /// The largest outstanding data seen at a frame, bytes.
    pub max_outstanding_bytes: u64,
}

/// What loss recovery did over a call (issue 10).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RecoveryCounts {
    /// The NACK pair that ran.
    pub nack: NackChoice,
    /// Original media packets the forward link lost.
    pub media_packets_lost: u64,
    /// Retransmissions put on the forward link.
    pub retransmissions_sent: u64,
    /// Retransmissions the forward link lost.
    pub retransmissions_lost: u64,
    /// Sequence numbers requested in the NACKs the receiver sent, repeats included.
    pub nack_requests: u64,
    /// Distinct sequence numbers NACKed at least once.
    pub nacked_packets: u64,
    /// Packets the NACK generator gave up after its last try (libwebrtc pair only).
    pub give_ups: u64,
    /// Key frames the NACK generator asked for (its list overflowed; libwebrtc pair only).
    pub nack_key_frame_requests: u64,
    /// Of those, the ones sent as a PLI (the media receiver was not already asking).
    pub nack_plis: u64,
    /// The generator's RTT at the end of the call, ms (libwebrtc pair only).
    pub rtt_ms: Option<f64>,
    /// Requests the responder ignored: the packet's retransmission was still in the pacer or
    /// left less than one RTT ago (libwebrtc pair only).
    pub resends_suppressed: u64,
    /// Requests the responder dropped: the packet was no longer in its history (libwebrtc pair
    /// only).
    pub not_in_history: u64,
    /// Requests the responder dropped for its byte budget (libwebrtc pair only).
    pub over_budget: u64,
}

/// The chosen estimator, with its target readable from outside the chain, and the congestion
/// window fed from its feedback and process ticks (the estimator is boxed inside webrtc-rs's
/// congestion-control interceptor, which is the only place the feedback reports exist).
pub(crate) struct ObservedEstimator {
    pub(crate) estimator: Estimator,
    pub(crate) target: Arc<AtomicU64>,
    pub(crate) cwnd: CwndChannel,
}

pub(crate) enum Estimator {
    GoogCc(Box<GoogCc>),
    WebrtcRs(Box<Gcc>),
}

impl ObservedEstimator {
    fn inner(&self) -> &dyn BandwidthEstimator {
        match &self.estimator {
            Estimator::GoogCc(e) => e.as_ref(),
            Estimator::WebrtcRs(e) => e.as_ref(),
        }
    }

    fn inner_mut(&mut self) -> &mut dyn BandwidthEstimator {
        match &mut self.estimator {
            Estimator::GoogCc(e) => e.as_mut(),
            Estimator::WebrtcRs(e) => e.as_mut(),
        }
    }

    fn publish(&self) {
        self.target
            .store(self.inner().target_bitrate().to_bits(), Ordering::Relaxed);
    }
}

impl BandwidthEstimator for ObservedEstimator {
    fn on_reports(&mut self, now: Instant, reports: &[PacketReport]) {
        self.inner_mut().on_reports(now, reports);
        self.publish();
        let target = self.inner().target_bitrate().max(0.0) as u64;
        self.cwnd.on_feedback(
            now,
            reports
                .iter()
                .map(|r| (r.ssrc, r.rtp_sequence_number, r.departure, r.arrived)),
            target,
        );
    }

    fn target_bitrate(&self) -> f64 {
        self.inner().target_bitrate()
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.inner_mut().handle_timeout(now);
        self.publish();
        let target = self.inner().target_bitrate().max(0.0) as u64;
        self.cwnd.on_process(now, target);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let ticks = (self.cwnd.config().mode == CwndMode::Pushback)
            .then(|| self.cwnd.poll_timeout())
            .flatten();
        match (self.inner().poll_timeout(), ticks) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn stats(&self) -> rtc_interceptor::EstimatorStats {
        self.inner().stats()
    }
}

/// The pacing half of a call's sender, built the same way for simulated and real calls.
pub(crate) struct PacedSender {
    /// The interceptor for `Slot::Pacer`.
    pub(crate) pacer: HandoverAwarePacer,
    /// Its handle (stats, queue time limit).
    pub(crate) handle: PacerHandle,
    /// The estimator for `Slot::CongestionControl`, publishing its target and feeding the window.
    pub(crate) estimator: ObservedEstimator,
    /// The estimator's latest target, bps, as f64 bits.
    pub(crate) target: Arc<AtomicU64>,
    /// The congestion window shared by the estimator and the pacer.
    pub(crate) cwnd: CwndChannel,
    /// Whether the pacer sends padding (probes, keep-alives) on [`PADDING_SSRC`], a stream both
    /// ends must bind.
    pub(crate) padding: bool,
}

/// Builds the pacer and the estimator of a sender: GoogCC ([`googcc_config`]) probes through
/// the pacer, or webrtc-rs's `Gcc`; the congestion window in `cwnd` mode; padding (probes and
/// pacer-mode keep-alives) on [`PADDING_SSRC`] with `padding_payload_type`.
pub(crate) fn paced_sender(
    bwe: BweChoice,
    cwnd: CwndMode,
    keyframe_flush: bool,
    padding_payload_type: u8,
) -> PacedSender {
    let probing = bwe == BweChoice::GoogCc;
    // The padding stream also carries the pacer-mode keep-alives.
    let padding = probing || cwnd == CwndMode::Pacer;
    let pacing = PacingConfig {
        padding_ssrc: padding.then_some(PADDING_SSRC),
        padding_payload_type,
        keyframe_flush,
        ..PacingConfig::default()
    };
    let cwnd = CwndChannel::new(CwndConfig::with_mode(cwnd));
    let target = Arc::new(AtomicU64::new(
        (pacing.initial_target_bitrate_bps as f64).to_bits(),
    ));
    let probes = ProbeChannel::new();
    let estimator = ObservedEstimator {
        estimator: match bwe {
            BweChoice::GoogCc => Estimator::GoogCc(Box::new(GoogCc::with_probing(
                googcc_config(),
                probes.clone(),
            ))),
            BweChoice::WebrtcRs => Estimator::WebrtcRs(Box::default()),
        },
        target: target.clone(),
        cwnd: cwnd.clone(),
    };
    let mut pacer = HandoverAwarePacer::builder(pacing)
        .congestion_window(cwnd.clone())
        .frame_info(frame_info);
    if probing {
        pacer = pacer.probe_channel(probes);
    }
    let (pacer, handle) = pacer.build();
    PacedSender {
        pacer,
        handle,
        estimator,
        target,
        cwnd,
        padding,
    }
}

/// Hands the encoder the pacer's target and the congestion window's pushback (libwebrtc
/// `MaybeTriggerOnNetworkChanged`): in pushback mode with DropFrame the encoder keeps the target
/// and drops one frame in [`frame_drop_interval`] of the reduce ratio; without DropFrame the
/// target becomes the pushback target. In the other modes (or before the window has a target)
/// the encoder just follows the pacer's target.
pub(crate) fn steer_encoder(
    encoder: &mut Encoder,
    now: Time,
    target_bps: u64,
    window: &CwndSnapshot,
    cwnd_config: &CwndConfig,
) {
    let pushback = cwnd_config.mode == CwndMode::Pushback && window.target_bps > 0;
    let encoder_target = if pushback && !cwnd_config.drop_frame {
        target_bps.min(window.pushback_target_bps)
    } else {
        target_bps
    };
    encoder.set_target(now, encoder_target);
    encoder.set_frame_drop_interval(
        (pushback && cwnd_config.drop_frame)
            .then(|| frame_drop_interval(window.cwnd_reduce_ratio))
            .flatten(),
    );
}

/// GoogCC as the call's sender configures it: libwebrtc's defaults, told the encoder's maximum
/// bitrate as the total allocation (what libwebrtc's `BitrateAllocator` reports), so probing
/// stops at twice it.
pub(crate) fn googcc_config() -> GoogCcConfig {
    GoogCcConfig {
        max_total_allocated_bps: Some(EncoderConfig::default().max_bps as f64),
        ..GoogCcConfig::default()
    }
}

/// What the synthetic codec's payload header says about a packet's frame (for key-frame
/// flushing in the pacer).
pub(crate) fn frame_info(rtp: &rtc_rtp::Packet) -> FrameInfo {
    match PayloadHeader::read(&rtp.payload) {
        Ok(header) => FrameInfo {
            key_frame: header.key_frame,
            first_packet_of_frame: header.index == 0,
        },
        Err(_) => FrameInfo::default(),
    }
}

/// The video stream as negotiated; with `rtx` it names its RTX stream.
fn video_stream(rtx: bool) -> StreamInfo {
    StreamInfo {
        ssrc: VIDEO_SSRC,
        ssrc_rtx: rtx.then_some(VIDEO_RTX_SSRC),
        payload_type_rtx: rtx.then_some(VIDEO_RTX_PAYLOAD_TYPE),
        clock_rate: 90_000,
        mime_type: "video/VP8".to_owned(),
        payload_type: VIDEO_PAYLOAD_TYPE,
        rtcp_feedback: vec![
            RTCPFeedback {
                typ: "transport-cc".to_owned(),
                parameter: String::new(),
            },
            RTCPFeedback {
                typ: "nack".to_owned(),
                parameter: String::new(),
            },
        ],
        rtp_header_extensions: vec![RTPHeaderExtension {
            uri: TRANSPORT_CC_URI.to_owned(),
            id: 5,
        }],
        ..Default::default()
    }
}

/// The RTX stream bound on its own, so the TWCC sender numbers and the congestion controller and
/// the TWCC receiver record its packets (transport-cc, no NACK of its own).
/// The padding stream that carries GoogCC's probe padding (negotiated only with
/// [`BweChoice::GoogCc`]): bound on both chains with the transport-wide-cc extension so that its
/// packets are numbered and acknowledged; the receiver drops them before the media receiver.
fn padding_stream() -> StreamInfo {
    StreamInfo {
        ssrc: PADDING_SSRC,
        clock_rate: 90_000,
        mime_type: "video/VP8".to_owned(),
        payload_type: PADDING_PAYLOAD_TYPE,
        rtcp_feedback: vec![RTCPFeedback {
            typ: "transport-cc".to_owned(),
            parameter: String::new(),
        }],
        rtp_header_extensions: vec![RTPHeaderExtension {
            uri: TRANSPORT_CC_URI.to_owned(),
            id: 5,
        }],
        ..Default::default()
    }
}

fn rtx_stream() -> StreamInfo {
    StreamInfo {
        ssrc: VIDEO_RTX_SSRC,
        clock_rate: 90_000,
        mime_type: "video/rtx".to_owned(),
        payload_type: VIDEO_RTX_PAYLOAD_TYPE,
        sdp_fmtp_line: format!("apt={VIDEO_PAYLOAD_TYPE}"),
        rtcp_feedback: vec![RTCPFeedback {
            typ: "transport-cc".to_owned(),
            parameter: String::new(),
        }],
        rtp_header_extensions: vec![RTPHeaderExtension {
            uri: TRANSPORT_CC_URI.to_owned(),
            id: 5,
        }],
        ..Default::default()
    }
}

/// The sequence numbers a NACK packet asks for.
fn nacked_sequence_numbers(packet: &Packet) -> Vec<u16> {
    let Packet::Rtcp(rtcp) = packet else {
        return Vec::new();
    };
    rtcp.iter()
        .filter_map(|p| p.as_any().downcast_ref::<TransportLayerNack>())
        .flat_map(|nack| nack.nacks.iter().flat_map(|pair| pair.packet_list()))
        .collect()
}

fn tagged(now: Instant, packet: Packet) -> TaggedPacket {
    TaggedPacket {
        now,
        transport: TransportContext::default(),
        message: AttributedPacket::new(packet),
    }
}

fn rtp_of(packet: MediaPacket) -> Packet {
    Packet::Rtp(rtc_rtp::Packet {
        header: rtc_rtp::Header {
            version: 2,
            payload_type: packet.payload_type,
            sequence_number: packet.sequence_number,
            timestamp: packet.timestamp,
            ssrc: packet.ssrc,
            marker: packet.marker,
            ..Default::default()
        },
        payload: packet.payload.into(),
    })
}

fn wire_size(packet: &Packet) -> u32 {
    let bytes = match packet {
        Packet::Rtp(rtp) => rtp.marshal_size(),
        Packet::Rtcp(rtcp) => rtcp.iter().map(|p| p.marshal_size()).sum(),
        _ => 0,
    };
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

/// The samples one interval's pacer and gcc records are built from.
#[derive(Default)]
pub(crate) struct IntervalSamples {
    max_queue: Duration,
    queue_sum: Duration,
    target_sum_bps: f64,
    target_min_bps: f64,
    samples: u32,
    paused: Duration,
    drain_boost_start: Duration,
    pub(crate) frames_dropped_start: u64,
    pub(crate) packets_flushed_start: u64,
    /// Sum of the congestion window over the samples that had one, bytes.
    window_sum_bytes: u128,
    /// Samples that had a window.
    window_samples: u32,
    /// Smallest pushback ratio among the samples that had a window (pushback mode).
    pub(crate) pushback_min: Option<f64>,
}

impl IntervalSamples {
    pub(crate) fn new(stats: &PacerStats, frames_dropped: u64) -> Self {
        Self {
            target_min_bps: f64::INFINITY,
            drain_boost_start: stats.drain_boost_time,
            frames_dropped_start: frames_dropped,
            packets_flushed_start: stats.packets_flushed,
            ..Self::default()
        }
    }

    pub(crate) fn sample(
        &mut self,
        stats: &PacerStats,
        target_bps: f64,
        paused_for: Option<Duration>,
    ) {
        self.max_queue = self.max_queue.max(stats.oldest_queue_time);
        self.queue_sum += stats.average_queue_time;
        self.target_sum_bps += target_bps;
        self.target_min_bps = self.target_min_bps.min(target_bps);
        self.samples += 1;
        if let Some(d) = paused_for {
            self.paused += d;
        }
    }

    /// Samples the congestion window as the encoder reads it at a frame: the window if one has
    /// been computed, and with pushback its ratio.
    pub(crate) fn sample_window(&mut self, window: &pacer::cwnd::CwndSnapshot) {
        if window.mode == CwndMode::Off {
            return;
        }
        let Some(bytes) = window.window_bytes else {
            return;
        };
        self.window_sum_bytes += u128::from(bytes);
        self.window_samples += 1;
        if window.mode == CwndMode::Pushback && window.pushback_ratio.is_finite() {
            let ratio = window.pushback_ratio;
            self.pushback_min = Some(self.pushback_min.map_or(ratio, |m| m.min(ratio)));
        }
    }

    /// The mean window over the samples that had one, bytes (rounded).
    pub(crate) fn mean_window_bytes(&self) -> Option<u64> {
        (self.window_samples > 0).then(|| {
            let n = u128::from(self.window_samples);
            u64::try_from((self.window_sum_bytes + n / 2) / n).unwrap_or(u64::MAX)
        })
    }

    pub(crate) fn pacer(&self, stats: &PacerStats) -> PacerRecord {
        PacerRecord {
            max_queue_ms: ms(self.max_queue),
            mean_queue_ms: ms(self.queue_sum) / f64::from(self.samples.max(1)),
            drain_boost_ms: ms(stats
                .drain_boost_time
                .saturating_sub(self.drain_boost_start)),
            encoder_paused_ms: ms(self.paused),
        }
    }

    pub(crate) fn gcc(&self) -> GccRecord {
        if self.samples == 0 {
            return GccRecord::default();
        }
        GccRecord {
            mean_target_kbps: self.target_sum_bps / f64::from(self.samples) / 1000.0,
            min_target_kbps: self.target_min_bps / 1000.0,
        }
    }
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The interval in progress: the decision that opened it and its samples.
struct OpenInterval {
    decision: Decision,
    start: Time,
    samples: IntervalSamples,
}

/// Runs one call (see the module documentation).
///
/// `epoch` is the `Instant` that virtual time zero maps to: the interceptor chains speak
/// `Instant`s, so every instant handed to them is `epoch` plus a virtual offset. Any instant will
/// do (the caller usually passes `Instant::now()` once); nothing in the result depends on it, since
/// the telemetry holds only offsets. The simulator itself never reads a clock.
///
/// # Errors
///
/// [`SimError::Link`] for an invalid link configuration, [`SimError::Duration`] for a duration
/// beyond what an [`Instant`] offset can hold, [`SimError::Chain`] if an interceptor chain
/// refuses a packet.
pub fn run_call(config: &CallConfig, epoch: Instant) -> Result<CallResult, SimError> {
    let mut forward_link =
        Link::new(config.forward.clone(), config.forward_seed).map_err(|source| {
            SimError::Link {
                direction: "forward",
                source,
            }
        })?;
    let mut reverse_link =
        Link::new(config.reverse.clone(), config.reverse_seed).map_err(|source| {
            SimError::Link {
                direction: "reverse",
                source,
            }
        })?;
    if epoch.checked_add(config.duration * 2).is_none() {
        return Err(SimError::Duration(config.duration));
    }
    let at = |t: Time| epoch + t.since_epoch();
    let time_of = |i: Instant| Time::from_instant(epoch, i);
    let sender_err = |e: rtc_shared::error::Error| SimError::Chain {
        side: "sender",
        message: e.to_string(),
    };
    let receiver_err = |e: rtc_shared::error::Error| SimError::Chain {
        side: "receiver",
        message: e.to_string(),
    };

    // Sender chain.
    let PacedSender {
        pacer,
        handle,
        estimator,
        target,
        cwnd,
        padding,
    } = paced_sender(
        config.bwe,
        config.cwnd,
        config.keyframe_flush,
        PADDING_PAYLOAD_TYPE,
    );
    let mut sender = Registry::new()
        .with(
            Slot::CongestionControl,
            CongestionControlBuilder::new(estimator).build(),
        )
        .with(Slot::TwccSender, TwccSenderBuilder::new().build())
        .with(Slot::Pacer, pacer);
    let mut receiver = Registry::new().with(Slot::TwccReceiver, TwccReceiverBuilder::new().build());
    let mut nack_handles: Option<(NackGeneratorHandle, NackResponderHandle)> = None;
    match config.nack {
        NackChoice::Stock => {
            sender = sender.with(Slot::NackResponder, NackResponderBuilder::new().build());
            receiver = receiver.with(
                Slot::NackGenerator,
                NackGeneratorBuilder::new()
                    .with_max_nacks_per_packet(MAX_NACKS_PER_PACKET)
                    .build(),
            );
        }
        NackChoice::Libwebrtc => {
            let (responder, responder_handle, tap) = NackResponder::new();
            sender = sender
                .with(TAP_SLOT, tap)
                .with(Slot::NackResponder, responder);
            let (generator, generator_handle) = NackGenerator::new();
            receiver = receiver
                .with(RTX_RECEIVER_SLOT, RtxReceiver::new())
                .with(Slot::NackGenerator, generator);
            nack_handles = Some((generator_handle, responder_handle));
        }
        NackChoice::Off => {}
    }
    let rtx = config.nack == NackChoice::Libwebrtc;
    let mut sender = sender.build();
    let mut receiver = receiver.build();
    // The RTX stream first: the pacer classifies by the last binding of an SSRC, and the video
    // stream's binding marks its RTX SSRC as retransmissions.
    if rtx {
        sender.bind_local_stream(&rtx_stream());
        receiver.bind_remote_stream(&rtx_stream());
    }
    if padding {
        sender.bind_local_stream(&padding_stream());
        receiver.bind_remote_stream(&padding_stream());
    }
    sender.bind_local_stream(&video_stream(rtx));
    receiver.bind_remote_stream(&video_stream(rtx));
    let mut recovery = RecoveryCounts {
        nack: config.nack,
        ..RecoveryCounts::default()
    };
    let mut nacked: HashSet<i64> = HashSet::new();
    let mut last_pli: Option<Time> = None;
    // The one-way delays of the latest packets sent on each link, and the next RTT report.
    let mut forward_delay: Option<Duration> = None;
    let mut reverse_delay: Option<Duration> = None;
    let mut next_rtt_report = Time::ZERO.saturating_add(RTCP_INTERVAL);

    // Media.
    let mut encoder = Encoder::new(
        EncoderConfig {
            seed: config.seed ^ ENCODER_SEED_SALT,
            ..EncoderConfig::default()
        },
        Time::ZERO,
    );
    let mut packetizer = Packetizer::new(VIDEO_SSRC, VIDEO_PAYLOAD_TYPE, DEFAULT_MAX_PAYLOAD, 0);
    let mut media_receiver = Receiver::new(ReceiverConfig::default());
    let mut meter = QoeMeter::new();
    let frame_interval = Duration::from_nanos(1_000_000_000 / u64::from(encoder.config().fps));

    // Policy and truth.
    let source: Box<dyn HandoverSource> = match config.handover {
        HandoverChoice::Oracle => Box::new(config.timeline.oracle(epoch)),
        HandoverChoice::Mirror => Box::new(sources::TruthMirror::new(&config.timeline, epoch)),
        HandoverChoice::Orbital => match &config.orbits {
            Some((inputs, start)) => Box::new(sources::BothEnds::new(inputs, epoch, *start)),
            None => return Err(SimError::NoOrbits(config.scenario.clone())),
        },
    };
    let mut controller = PolicyController::new(
        epoch,
        config.decision_interval,
        source,
        config.policy.build(config.seed),
        handle.clone(),
    );
    let mut truth = config.timeline.oracle(epoch);

    let end = Time::ZERO.saturating_add(config.duration);
    let seconds = usize::try_from(config.duration.as_secs()).unwrap_or(usize::MAX);
    let mut rendered_per_second = vec![0u32; seconds.min(1 << 24)];
    let mut forward: BTreeMap<(Time, u64), TaggedPacket> = BTreeMap::new();
    let mut reverse: BTreeMap<(Time, u64), TaggedPacket> = BTreeMap::new();
    let mut in_flight_id = 0u64;
    let mut telemetry = Vec::new();
    let mut decisions = Vec::new();
    let mut open: Option<OpenInterval> = None;
    let mut rtp_packets_sent = 0u64;
    let mut stale_deadlines = 0u64;
    let mut media = Vec::new();
    let mut now = Time::ZERO;
    let mut first = true;
    let mut sender_counts = SenderCounts {
        cwnd: Some(config.cwnd),
        min_pushback_ratio: 1.0,
        ..SenderCounts::default()
    };

    let close = |open: &mut Option<OpenInterval>,
                 now: Time,
                 meter: &mut QoeMeter,
                 media_receiver: &Receiver,
                 packets_sent: u64,
                 frames_dropped: u64,
                 truth: &mut dyn HandoverSource,
                 telemetry: &mut Vec<IntervalRecord>| {
        let Some(interval) = open.take() else {
            return;
        };
        meter.on_packet_counts(packets_sent, media_receiver.stats().packets_received);
        let qoe = meter.take_interval();
        let stats = handle.stats();
        let observed = truth
            .forecast(at(interval.start))
            .map(|f| *f.steps())
            .unwrap_or_default();
        let frames_dropped_in =
            frames_dropped.saturating_sub(interval.samples.frames_dropped_start);
        telemetry.push(IntervalRecord {
            schema: SCHEMA.to_owned(),
            call_id: config.call_id.clone(),
            scenario: config.scenario.clone(),
            seed: Some(config.seed),
            interval_index: interval.decision.index,
            start_ms: interval.start.as_millis(),
            duration_ms: now.as_millis().saturating_sub(interval.start.as_millis()),
            policy: interval.decision.policy.clone(),
            action_ms: u64::try_from(interval.decision.queue_time_limit.as_millis())
                .unwrap_or(u64::MAX),
            forecast: ForecastRecord::from_forecast(&interval.decision.forecast),
            observed: ObservedRecord {
                source: ForecastSource::Oracle,
                handover: observed,
            },
            qoe: qoe.to_record(),
            pacer: interval.samples.pacer(&stats),
            gcc: interval.samples.gcc(),
            sender: Some(SenderRecord {
                bwe: config.bwe.telemetry(),
                cwnd_mode: config.cwnd,
                keyframe_flush: config.keyframe_flush,
                frames_dropped: frames_dropped_in,
                packets_flushed: stats
                    .packets_flushed
                    .saturating_sub(interval.samples.packets_flushed_start),
                nack: Some(config.nack.mode()),
                window_bytes: interval.samples.mean_window_bytes(),
                pushback_ratio: interval.samples.pushback_min,
            }),
        });
    };

    loop {
        let frame_due = Some(encoder.next_frame_time()).filter(|&t| t < end);
        let sender_due = sender.poll_timeout().map(time_of);
        let receiver_due = receiver.poll_timeout().map(time_of);
        let candidates = [
            frame_due,
            sender_due,
            receiver_due,
            media_receiver.poll_timeout(),
            controller.poll_timeout().map(time_of),
            forward.keys().next().map(|k| k.0),
            reverse.keys().next().map(|k| k.0),
        ];
        let next = candidates.into_iter().flatten().min().unwrap_or(end);
        let next = if next <= now && !first {
            stale_deadlines += 1;
            now.saturating_add(MIN_IMMEDIATE_TIMEOUT)
        } else {
            next
        };
        first = false;
        if next >= end {
            break;
        }
        now = next;
        let instant = at(now);
        // A chain is woken when its own deadline has come or something was handed to it at this
        // instant, as the webrtc-rs driver does; waking it on every event of the other side
        // would only repeat its per-wake work (the congestion controller scans its whole send
        // history on each).
        let mut sender_touched = sender_due.is_some_and(|t| t <= now);
        let mut receiver_touched = receiver_due.is_some_and(|t| t <= now);

        // Decision boundary: close the interval, open the next one.
        if let Some(decision) = controller.handle_timeout(instant) {
            close(
                &mut open,
                now,
                &mut meter,
                &media_receiver,
                packetizer.packets_sent(),
                encoder.frames_dropped(),
                &mut truth,
                &mut telemetry,
            );
            decisions.push(decision.clone());
            open = Some(OpenInterval {
                decision,
                start: now,
                samples: IntervalSamples::new(&handle.stats(), encoder.frames_dropped()),
            });
        }

        // The camera.
        if frame_due.is_some_and(|t| t <= now) {
            let stats = handle.stats();
            let window = cwnd.snapshot();
            let cwnd_config = cwnd.config();
            sender_counts.min_pushback_ratio =
                sender_counts.min_pushback_ratio.min(window.pushback_ratio);
            sender_counts.max_outstanding_bytes = sender_counts
                .max_outstanding_bytes
                .max(window.outstanding_bytes);
            steer_encoder(
                &mut encoder,
                now,
                stats.target_bitrate_bps,
                &window,
                &cwnd_config,
            );
            let pause = stats.encoder_should_pause;
            let gcc_target = f64::from_bits(target.load(Ordering::Relaxed));
            if let Some(interval) = &mut open {
                interval
                    .samples
                    .sample(&stats, gcc_target, pause.then_some(frame_interval));
                interval.samples.sample_window(&window);
            }
            if let Some(frame) = encoder.poll_frame(now, pause) {
                sender_touched = true;
                media.clear();
                packetizer.packetize_into(&frame, &mut media);
                for packet in media.drain(..) {
                    sender
                        .handle_write(tagged(instant, rtp_of(packet)))
                        .map_err(sender_err)?;
                }
            }
        }

        // The RTT an RTCP report would carry, to both ends of the NACK pair.
        if now >= next_rtt_report {
            next_rtt_report = now.saturating_add(RTCP_INTERVAL);
            if let (Some((generator, responder)), Some(f), Some(r)) =
                (&nack_handles, forward_delay, reverse_delay)
            {
                generator.set_rtt(Some(f + r));
                responder.set_rtt(f + r);
            }
        }

        // Feedback reaching the sender.
        while let Some(entry) = reverse.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let mut packet = entry.remove();
            packet.now = instant;
            sender_touched = true;
            // The chain ends inbound RTCP at its terminus, so the PLI is picked off as it
            // arrives, as a peer connection's RTCP reader for the sending track would.
            if let Packet::Rtcp(rtcp) = &packet.message.packet
                && rtcp
                    .iter()
                    .any(|p| p.as_any().is::<PictureLossIndication>())
            {
                encoder.request_key_frame();
            }
            sender.handle_read(packet).map_err(sender_err)?;
            while sender.poll_read().is_some() {}
        }
        if sender_touched {
            sender.handle_timeout(instant).map_err(sender_err)?;
        }
        while let Some(packet) = sender.poll_write() {
            let is_rtp = matches!(packet.message.packet, Packet::Rtp(_));
            let resent = is_rtp && packet.message.has(&Attribute::Retransmission);
            if is_rtp {
                rtp_packets_sent += 1;
            }
            if resent {
                recovery.retransmissions_sent += 1;
            }
            if let Some(arrival) = forward_link
                .send(now, wire_size(&packet.message.packet))
                .delivered_at()
            {
                forward_delay = Some(arrival.saturating_duration_since(now));
                in_flight_id += 1;
                forward.insert((arrival, in_flight_id), packet);
            } else if resent {
                recovery.retransmissions_lost += 1;
            } else if is_rtp {
                recovery.media_packets_lost += 1;
            }
        }

        // Media reaching the receiver.
        while let Some(entry) = forward.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let mut packet = entry.remove();
            packet.now = instant;
            receiver_touched = true;
            receiver.handle_read(packet).map_err(receiver_err)?;
            while let Some(read) = receiver.poll_read() {
                if let Packet::Rtp(rtp) = &read.message.packet
                    && rtp.header.ssrc == VIDEO_SSRC
                {
                    media_receiver.on_packet(now, rtp.header.sequence_number, &rtp.payload);
                }
            }
        }
        media_receiver.handle_timeout(now);
        while let Some(frame) = media_receiver.poll_rendered() {
            let second = usize::try_from(frame.rendered.as_nanos() / 1_000_000_000).ok();
            if let Some(count) = second.and_then(|s| rendered_per_second.get_mut(s)) {
                *count += 1;
            }
            meter.on_rendered(&frame);
        }
        let mut pli_due = media_receiver.poll_pli(now);
        // The NACK generator's key-frame request (its list overflowed): one PLI source only,
        // so it is sent only if the media receiver is not asking already and the last PLI is
        // at least the receiver's PLI spacing old.
        if let Some((generator, _)) = &nack_handles
            && generator.take_key_frame_request()
        {
            recovery.nack_key_frame_requests += 1;
            let spaced = last_pli.is_none_or(|t| {
                now.saturating_duration_since(t) >= media_receiver.config().pli_interval
            });
            if !pli_due && !media_receiver.waiting_for_key_frame() && spaced {
                recovery.nack_plis += 1;
                pli_due = true;
            }
        }
        if pli_due {
            last_pli = Some(now);
            let pli = PictureLossIndication {
                sender_ssrc: RECEIVER_SSRC,
                media_ssrc: VIDEO_SSRC,
            };
            receiver
                .handle_write(tagged(instant, Packet::Rtcp(vec![Box::new(pli)])))
                .map_err(receiver_err)?;
            receiver_touched = true;
        }
        if receiver_touched {
            receiver.handle_timeout(instant).map_err(receiver_err)?;
        }
        while let Some(packet) = receiver.poll_write() {
            let sent = i64::try_from(packetizer.packets_sent()).unwrap_or(i64::MAX);
            for seq in nacked_sequence_numbers(&packet.message.packet) {
                recovery.nack_requests += 1;
                nacked.insert(crate::nack::unwrap_seq(sent, seq));
            }
            if let Some(arrival) = reverse_link
                .send(now, wire_size(&packet.message.packet))
                .delivered_at()
            {
                reverse_delay = Some(arrival.saturating_duration_since(now));
                in_flight_id += 1;
                reverse.insert((arrival, in_flight_id), packet);
            }
        }
    }

    close(
        &mut open,
        end,
        &mut meter,
        &media_receiver,
        packetizer.packets_sent(),
        encoder.frames_dropped(),
        &mut truth,
        &mut telemetry,
    );
    recovery.nacked_packets = nacked.len() as u64;
    if let Some((generator, responder)) = &nack_handles {
        let stats = generator.stats();
        recovery.give_ups = stats.give_ups;
        recovery.rtt_ms = Some(ms(stats.rtt));
        let stats = responder.stats();
        recovery.resends_suppressed = stats.ignored_pending + stats.ignored_recent;
        recovery.not_in_history = stats.not_in_history;
        recovery.over_budget = stats.over_budget;
    }
    let stats = handle.stats();
    sender_counts.frames_dropped_by_pushback = encoder.frames_dropped_by_pushback();
    sender_counts.congested = stats.congested_time;
    sender_counts.keepalives = stats.keepalives_sent;
    sender_counts.packets_flushed = stats.packets_flushed;
    Ok(CallResult {
        sender: sender_counts,
        telemetry,
        qoe: meter.total(),
        rendered_per_second,
        decisions,
        frames_encoded: encoder.frames_encoded(),
        key_frames: encoder.key_frames(),
        plis_sent: media_receiver.stats().plis_sent + recovery.nack_plis,
        media_packets: packetizer.packets_sent(),
        rtp_packets_sent,
        stale_deadlines,
        recovery,
    })
}

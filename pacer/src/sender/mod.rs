//! The whole handover-aware sender in one install: the pacer at `Slot::Pacer`, the estimator
//! (GoogCC or webrtc-rs's `Gcc`) in webrtc-rs's congestion controller, the congestion window
//! they share, loss protection below the TWCC sender ([`FEC_GENERATOR_SLOT`]) whose repair
//! packets go back to the pacer's queue, the NACK/RTX responder with its tap, and one schedule
//! of handover-timed actions that the pacer (hold), GoogCC (guard) and the protection (boost)
//! apply (docs/architecture.md, "The plugin's install").
//!
//! [`SenderConfig::install`] puts every interceptor into a webrtc-rs `Registry` and returns a
//! [`HandoverAwareSender`]: the one handle through which an application reads the sender and
//! lets a policy run it. [`HandoverAwareSender::set_policy`] gives it a forecast source and a
//! [`QueuePolicy`]; from then on every decision sets the queue time limit, applies a joint
//! policy's action profile and hands the forecast's predicted handovers to the action schedule
//! itself, so a [`Decision`] is a record of what happened, not an instruction to carry out.

mod bind_also;
mod estimator;
mod streams;

pub use streams::{fec_stream, padding_stream, rtx_stream};

use crate::actions::{ActionConfigError, TimingError};
use crate::cwnd::{CwndChannel, CwndConfig};
use crate::googcc::GoogCcHandle;
use crate::nack::{NackResponder, NackResponderHandle, TAP_SLOT};
use crate::pacing::{FrameInfoFn, ProbeChannel, RepairQueue, SequenceCounter};
use crate::playout::{PlayoutDelayStamper, PlayoutStamperHandle, STAMPER_SLOT};
use crate::policy::CallFeedback;
use crate::protection::ProtectionHandle;
use crate::telemetry::{Bwe, NackMode};
use crate::{
    ActionConfig, ActionsHandle, CwndMode, Decision, FEC_GENERATOR_SLOT, FecMode, GoogCc,
    GoogCcConfig, HandoverAwarePacer, LossProtection, PacerHandle, PacerStats, PacingConfig,
    PolicyController, QueuePolicy,
};
use bind_also::BindAlso;
use estimator::{Estimator, ObservedEstimator};
use handover_predictor::HandoverSource;
use rtc_interceptor::{
    CongestionControlBuilder, NackResponderBuilder, ReceiverReportBuilder, Registry,
    SenderReportBuilder, Slot, TwccSenderBuilder,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where the sender's padding (GoogCC's probes, the pacer-mode congestion window's keep-alives)
/// goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaddingRoute {
    /// No padding: probes carry queued media only.
    None,
    /// A stream of padding only, which both ends bind (between this project's own peers).
    Own {
        /// Its SSRC.
        ssrc: u32,
        /// Its payload type.
        payload_type: u8,
    },
    /// The negotiated RTX stream, as libwebrtc pads (`RTPSender::GeneratePadding` with
    /// redundant payloads): each padding packet re-sends the latest media packet in RTX,
    /// numbered from one sequence shared with the NACK responder's retransmissions (two counters
    /// on one SSRC would repeat numbers, which SRTP's replay check drops). What a browser
    /// accepts: Chromium 156 stopped decoding when packets of an SSRC it was never told of
    /// arrived in the video payload type.
    Rtx {
        /// The RTX SSRC.
        ssrc: u32,
        /// The RTX payload type.
        payload_type: u8,
    },
}

/// Which chain the sender goes into: what only a real peer connection needs is added for
/// [`ChainKind::PeerConnection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainKind {
    /// A chain driven directly (a simulation), whose driver binds every stream itself.
    Direct,
    /// A webrtc-rs peer connection: RTCP sender and receiver reports, and the congestion
    /// controller and the TWCC sender wrapped so that binding the video stream also binds the
    /// RTX, repair and padding streams it implies (a peer connection binds one stream per
    /// encoding).
    PeerConnection,
}

/// How the handover-aware sender is built. The defaults are what a browser runs (GoogCC,
/// libwebrtc's congestion window in pushback mode, adaptive FlexFEC, libwebrtc's NACK with RTX)
/// with no padding stream and no handover-timed actions.
#[derive(Debug, Clone)]
pub struct SenderConfig {
    /// The bandwidth estimator.
    pub bwe: Bwe,
    /// GoogCC's configuration (with [`Bwe::GoogCc`]); its `start_bps` is also the pacer's
    /// starting target, which an encoder reads until the first feedback.
    pub googcc: GoogCcConfig,
    /// The congestion window's mode.
    pub cwnd: CwndMode,
    /// Whether a new key frame flushes its stream's queued packets from the pacer.
    pub keyframe_flush: bool,
    /// The loss protection.
    pub fec: FecMode,
    /// The NACK responder: libwebrtc's (with RTX when negotiated), webrtc-rs's stock one, or
    /// none.
    pub nack: NackMode,
    /// Where padding goes.
    pub padding: PaddingRoute,
    /// The handover-timed actions, if the sender applies any.
    pub actions: Option<ActionConfig>,
    /// How to read key frames and frame starts from a video payload (key-frame flushing and the
    /// protection's key-frame boost); `None`: every packet reads as a delta frame's.
    pub frame_info: Option<FrameInfoFn>,
    /// The video's resolution, which sets the protection's small-frame threshold.
    pub resolution: (u32, u32),
}

impl Default for SenderConfig {
    fn default() -> Self {
        Self {
            bwe: Bwe::GoogCc,
            googcc: GoogCcConfig::default(),
            cwnd: CwndMode::Pushback,
            keyframe_flush: false,
            fec: FecMode::Libwebrtc,
            nack: NackMode::Libwebrtc,
            padding: PaddingRoute::None,
            actions: None,
            frame_info: None,
            resolution: (1280, 720),
        }
    }
}

impl SenderConfig {
    /// Puts the sender into `registry` (replacing what its slots held) for a chain of `kind`,
    /// and returns the registry and the sender's handle.
    ///
    /// For a peer connection, register the codecs and the transport-wide congestion control
    /// feedback and header extension in the media engine first (webrtc-rs's
    /// `configure_congestion_control` does, and its placeholder slots are replaced here), and
    /// NACK feedback (`configure_nack`) unless `nack` is off.
    ///
    /// While the call runs, the application tells the sender what only it measures, as
    /// libwebrtc's `RtpTransportControllerSend` is told: before each frame the target and the
    /// RTT (`handles.protection.set_network`: without it the protection has no rate to spend
    /// and sends no FEC), and about once a second the RTT to the NACK responder
    /// (`handles.nack.set_rtt`) and the retransmission rate of the last second
    /// (`handles.protection.set_nack_rate`), which the media target leaves room for
    /// (`pacer/examples/embed.rs` does all three).
    ///
    /// # Errors
    ///
    /// [`ActionConfigError`] if `actions` is not a valid configuration.
    pub fn install(
        self,
        registry: Registry,
        kind: ChainKind,
    ) -> Result<(Registry, HandoverAwareSender), ActionConfigError> {
        let actions = self.actions.map(ActionsHandle::new).transpose()?;
        let repair = RepairQueue::new();
        let (protection, protection_handle) = self.protection(&repair, actions.as_ref());
        let probing = self.bwe == Bwe::GoogCc;
        let pads = probing || self.cwnd == CwndMode::Pacer;
        let (padding_stream, rtx_padding) = match self.padding {
            PaddingRoute::None => (None, None),
            PaddingRoute::Own { ssrc, payload_type } => (Some((ssrc, payload_type)), None),
            PaddingRoute::Rtx { ssrc, payload_type } => {
                (Some((ssrc, payload_type)), Some(SequenceCounter::new()))
            }
        };
        let defaults = PacingConfig::default();
        let pacing = PacingConfig {
            padding_ssrc: padding_stream.filter(|_| pads).map(|(ssrc, _)| ssrc),
            padding_payload_type: padding_stream.map_or(0, |(_, pt)| pt),
            keyframe_flush: self.keyframe_flush,
            // The pacer (and whoever reads its target before the first feedback) starts where
            // GoogCC starts; webrtc-rs's `Gcc` starts at the pacer's default, 300 kbit/s.
            initial_target_bitrate_bps: match self.bwe {
                Bwe::GoogCc => {
                    googcc_start_bps(&self.googcc).unwrap_or(defaults.initial_target_bitrate_bps)
                }
                Bwe::WebrtcRs => defaults.initial_target_bitrate_bps,
            },
            ..defaults
        };
        let cwnd = CwndChannel::new(CwndConfig::with_mode(self.cwnd));
        let target = Arc::new(AtomicU64::new(
            (pacing.initial_target_bitrate_bps as f64).to_bits(),
        ));
        let (registry, nack) = self.with_nack(registry, rtx_padding.clone());
        let (estimator, googcc, probes) =
            self.estimator(actions.as_ref(), nack.as_ref(), &target, &cwnd);
        let mut pacer = HandoverAwarePacer::builder(pacing)
            .congestion_window(cwnd.clone())
            .repair_queue(repair);
        if let Some(read) = self.frame_info {
            pacer = pacer.frame_info(read);
        }
        if let Some(sequence) = &rtx_padding {
            pacer = pacer.rtx_padding(sequence.clone());
        }
        if let Some(probes) = probes {
            pacer = pacer.probe_channel(probes);
        }
        if let Some(actions) = &actions {
            pacer = pacer.actions(actions.clone());
        }
        let (pacer, pacer_handle) = pacer.build();
        let registry = self
            .with_estimator(registry, kind, estimator)
            .with(Slot::Pacer, pacer)
            .with(FEC_GENERATOR_SLOT, protection);
        let (registry, playout) = match &actions {
            Some(actions) => {
                let (stamper, handle) = PlayoutDelayStamper::new(actions.clone(), nack.clone());
                (registry.with(STAMPER_SLOT, stamper), Some(handle))
            }
            None => (registry, None),
        };
        let handles = SenderHandles {
            pacer: pacer_handle,
            target,
            cwnd,
            protection: protection_handle,
            actions,
            nack,
            googcc,
            playout,
        };
        Ok((
            registry,
            HandoverAwareSender {
                pads: padding_stream.is_some() && pads,
                handles,
                policy: None,
                decisions: Vec::new(),
                interval_loss_pct: None,
                timing_error: (TimingError::default(), 0),
            },
        ))
    }

    /// The loss protection, its repair packets going back to the pacer through `repair`, with
    /// the boost when the sender applies actions.
    fn protection(
        &self,
        repair: &RepairQueue,
        actions: Option<&ActionsHandle>,
    ) -> (LossProtection, ProtectionHandle) {
        let mut protection = LossProtection::builder(self.fec)
            .nack_enabled(self.nack != NackMode::Off)
            .repair_queue(repair.clone());
        if let Some(read) = self.frame_info {
            protection = protection.frame_info(read);
        }
        if let Some(actions) = actions {
            protection = protection.actions(actions.clone());
        }
        let (protection, handle) = protection.build();
        let (width, height) = self.resolution;
        handle.set_resolution(width, height);
        (protection, handle)
    }

    /// The estimator the congestion controller holds: GoogCC (with the guard when the sender
    /// applies actions, reporting arrivals to the libwebrtc NACK responder when there is one) or
    /// webrtc-rs's `Gcc`, publishing into `target` and feeding `cwnd`; and, with GoogCC, its
    /// handle and the probe channel it shares with the pacer.
    fn estimator(
        &self,
        actions: Option<&ActionsHandle>,
        nack: Option<&NackResponderHandle>,
        target: &Arc<AtomicU64>,
        cwnd: &CwndChannel,
    ) -> (
        ObservedEstimator,
        Option<GoogCcHandle>,
        Option<ProbeChannel>,
    ) {
        let (estimator, googcc) = match self.bwe {
            Bwe::GoogCc => {
                let probes = ProbeChannel::new();
                let googcc = GoogCc::with_probing(self.googcc, probes.clone());
                let handle = googcc.handle();
                let googcc = match actions {
                    Some(actions) => googcc.guarded_by(actions.clone()),
                    None => googcc,
                };
                let googcc = match nack {
                    Some(nack) => googcc.reporting_arrivals_to(nack.clone()),
                    None => googcc,
                };
                (Estimator::GoogCc(Box::new(googcc)), Some((handle, probes)))
            }
            Bwe::WebrtcRs => (Estimator::WebrtcRs(Box::default()), None),
        };
        let (handle, probes) = googcc.unzip();
        (
            ObservedEstimator::new(estimator, target.clone(), cwnd.clone()),
            handle,
            probes,
        )
    }

    /// The congestion controller over `estimator` and the TWCC sender; for a peer connection
    /// wrapped so that binding the video stream binds the streams it implies, with the RTCP
    /// reports beside them.
    fn with_estimator(
        &self,
        registry: Registry,
        kind: ChainKind,
        estimator: ObservedEstimator,
    ) -> Registry {
        let congestion_control = CongestionControlBuilder::new(estimator).build();
        let twcc_sender = TwccSenderBuilder::new().build();
        match kind {
            ChainKind::Direct => registry
                .with(Slot::CongestionControl, congestion_control)
                .with(Slot::TwccSender, twcc_sender),
            ChainKind::PeerConnection => {
                let own_padding = match self.padding {
                    PaddingRoute::Own { ssrc, payload_type } => Some((ssrc, payload_type)),
                    _ => None,
                };
                registry
                    .with(Slot::ReceiverReport, ReceiverReportBuilder::new().build())
                    .with(Slot::SenderReport, SenderReportBuilder::new().build())
                    .with(
                        Slot::CongestionControl,
                        BindAlso::new(congestion_control, own_padding),
                    )
                    .with(Slot::TwccSender, BindAlso::new(twcc_sender, own_padding))
            }
        }
    }

    /// The NACK responder (with its tap, numbering RTX from the padding's counter when padding
    /// is RTX), webrtc-rs's stock one, or none; and the libwebrtc responder's handle.
    fn with_nack(
        &self,
        registry: Registry,
        rtx_padding: Option<SequenceCounter>,
    ) -> (Registry, Option<NackResponderHandle>) {
        match self.nack {
            NackMode::Stock => (
                registry.with(Slot::NackResponder, NackResponderBuilder::new().build()),
                None,
            ),
            NackMode::Libwebrtc => {
                let (responder, handle, tap) = NackResponder::new();
                let responder = match rtx_padding {
                    Some(sequence) => responder.with_rtx_sequence(sequence),
                    None => responder,
                };
                let registry = registry
                    .with(TAP_SLOT, tap)
                    .with(Slot::NackResponder, responder);
                (registry, Some(handle))
            }
            NackMode::Off => (registry, None),
        }
    }
}

/// Where GoogCC starts, as it clamps it (`[min_bps, max_bps]`), in whole bits per second; `None`
/// for a start that is not a positive finite rate.
fn googcc_start_bps(config: &GoogCcConfig) -> Option<u64> {
    if !config.start_bps.is_finite() {
        return None;
    }
    let start = config.start_bps.max(config.min_bps).min(config.max_bps);
    (start.is_finite() && start >= 1.0).then_some(start as u64)
}

/// The handles into a running sender's interceptors, for any thread: the pacer's (stats, queue
/// time limit), the estimator's latest target, the congestion window, the loss protection, the
/// action schedule and the NACK responder.
#[derive(Clone)]
pub struct SenderHandles {
    /// The pacer's handle.
    pub pacer: PacerHandle,
    /// The estimator's latest target, bps, as f64 bits.
    target: Arc<AtomicU64>,
    /// The congestion window shared by the estimator and the pacer.
    pub cwnd: CwndChannel,
    /// The loss protection's handle (network inputs in, FEC counters out). Present in every
    /// mode: without FEC it still measures the video rate for the media target.
    pub protection: ProtectionHandle,
    /// The handover-timed actions' schedule, shared by the pacer (hold), GoogCC (guard) and the
    /// loss protection (boost); `None` when the sender applies no actions.
    pub actions: Option<ActionsHandle>,
    /// The libwebrtc NACK responder's handle (its counters; the RTT in), with
    /// [`NackMode::Libwebrtc`].
    pub nack: Option<NackResponderHandle>,
    /// GoogCC's state (its estimates, RTT, ALR), with [`Bwe::GoogCc`].
    pub googcc: Option<GoogCcHandle>,
    /// The playout raise's stamper (present whenever the sender applies actions; it stamps only
    /// streams that negotiated the playout-delay extension, and only with the raise on).
    pub playout: Option<PlayoutStamperHandle>,
}

impl SenderHandles {
    /// The estimator's latest target, bps.
    pub fn target_bps(&self) -> f64 {
        f64::from_bits(self.target.load(Ordering::Relaxed))
    }
}

/// The installed sender: its handles and, once given one, the policy that runs it (sans-I/O: the
/// driver calls [`poll_timeout`](Self::poll_timeout) and [`handle_timeout`](Self::handle_timeout)
/// with the current real or virtual time).
pub struct HandoverAwareSender {
    handles: SenderHandles,
    /// Whether the pacer sends padding on a stream the receiver must bind.
    pads: bool,
    policy: Option<PolicyController>,
    decisions: Vec<Decision>,
    /// The packet loss of the last interval the driver closed, % (a joint policy reads it).
    interval_loss_pct: Option<f64>,
    /// The timing error added to the predictions, and the seed of its jitter.
    timing_error: (TimingError, u64),
}

impl HandoverAwareSender {
    /// The handles into the interceptors.
    pub fn handles(&self) -> &SenderHandles {
        &self.handles
    }

    /// Whether the pacer pads on a stream of its own ([`PaddingRoute::Own`]) that the far end
    /// must bind: with GoogCC's probes or the pacer-mode congestion window.
    pub fn pads(&self) -> bool {
        self.pads
    }

    /// The pacer's statistics now (target, queue, the encoder-pause signal).
    pub fn stats(&self) -> PacerStats {
        self.handles.pacer.stats()
    }

    /// Sets the queue time limit (clamped to [50 ms, 10 s]) until the policy's next decision.
    pub fn set_queue_time_limit(&self, limit: Duration) -> Duration {
        self.handles.pacer.set_queue_time_limit(limit)
    }

    /// Lets `policy` run the sender from `start`, deciding every `interval` from `source`'s
    /// forecast (docs/architecture.md, "Queue policies and decisions"). Each decision sets the
    /// limit and, when the sender applies handover-timed actions, applies a joint policy's
    /// profile and hands the forecast's predicted handovers to the schedule.
    pub fn set_policy(
        &mut self,
        start: Instant,
        interval: Duration,
        source: impl HandoverSource + 'static,
        policy: impl QueuePolicy + 'static,
    ) {
        let mut controller =
            PolicyController::new(start, interval, source, policy, self.handles.pacer.clone());
        if let Some(actions) = &self.handles.actions {
            let (error, seed) = self.timing_error;
            controller = controller.applying(actions.clone(), error, seed);
        }
        self.policy = Some(controller);
    }

    /// Moves every predicted handover instant the actions see by `error`, its jitter drawn from
    /// `seed` (a simulation's test of what the actions tolerate; a real call has none). Applies
    /// to a policy set after it.
    pub fn set_timing_error(&mut self, error: TimingError, seed: u64) {
        self.timing_error = (error, seed);
    }

    /// Replaces the policy's forecast source from its next decision on (no effect without a
    /// policy).
    pub fn set_forecast_source(&mut self, source: impl HandoverSource + 'static) {
        if let Some(policy) = &mut self.policy {
            policy.set_source(source);
        }
    }

    /// The policy's next decision instant, if a policy runs the sender.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.policy
            .as_ref()
            .and_then(PolicyController::poll_timeout)
    }

    /// Whether [`Self::handle_timeout`] at `now` makes a decision (the driver closes its
    /// telemetry interval first, so that a joint policy reads the interval that just ended).
    pub fn is_due(&self, now: Instant) -> bool {
        self.policy.as_ref().is_some_and(|p| p.is_due(now))
    }

    /// Tells a joint policy the packet loss of the interval that just closed, %.
    pub fn observe_interval_loss(&mut self, loss_pct: f64) {
        self.interval_loss_pct = Some(loss_pct);
    }

    /// Makes the policy's decision if one is due at `now`, applies it, and returns it.
    pub fn handle_timeout(&mut self, now: Instant) -> Option<&Decision> {
        let policy = self.policy.as_mut().filter(|p| p.is_due(now))?;
        let feedback = if policy.controls_actions() {
            let actions = self.handles.actions.as_ref();
            let nack = self.handles.nack.as_ref();
            let target = self.handles.target_bps();
            CallFeedback {
                boundary_excess_loss_pct: actions.and_then(ActionsHandle::boundary_excess_loss_pct),
                previous_loss_pct: self.interval_loss_pct,
                outside_loss_pct: actions.and_then(ActionsHandle::outside_loss_pct),
                row_loss_pct: actions.map_or([None; 3], ActionsHandle::row_loss_pct),
                phase_excess_losses: actions.and_then(ActionsHandle::phase_excess_losses),
                rtt_ms: nack
                    .and_then(NackResponderHandle::rtt)
                    .map(|rtt| rtt.as_secs_f64() * 1e3),
                repair_delay_ms: nack
                    .and_then(|n| n.repair_delay(crate::playout::REPAIR_QUANTILE))
                    .map(|d| d.as_secs_f64() * 1e3),
                target_kbps: (target > 0.0).then_some(target / 1e3),
            }
        } else {
            CallFeedback::default()
        };
        let decision = policy.handle_timeout_with(now, feedback)?;
        self.decisions.push(decision);
        self.decisions.last()
    }

    /// Every decision so far, oldest first.
    pub fn decisions(&self) -> &[Decision] {
        &self.decisions
    }

    /// The policy's controller (its failure counts, its interval), if one runs the sender.
    pub fn policy(&self) -> Option<&PolicyController> {
        self.policy.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pacer_starts_where_googcc_starts() {
        let (_, sender) = SenderConfig::default()
            .install(Registry::new(), ChainKind::Direct)
            .unwrap();
        assert_eq!(sender.handles().target_bps(), 300_000.0);
        let config = SenderConfig {
            googcc: GoogCcConfig {
                start_bps: 1_500_000.0,
                ..GoogCcConfig::default()
            },
            ..SenderConfig::default()
        };
        let (_, sender) = config.install(Registry::new(), ChainKind::Direct).unwrap();
        assert_eq!(sender.handles().target_bps(), 1_500_000.0);
        let nonsense = GoogCcConfig {
            start_bps: f64::NAN,
            ..GoogCcConfig::default()
        };
        assert_eq!(googcc_start_bps(&nonsense), None);
    }
}

//! The sending half of a call, built the same way for simulated and real calls: the pacer at
//! `Slot::Pacer`, the bandwidth estimator in the congestion controller, the congestion window
//! they share, the loss protection below the TWCC sender ([`FEC_GENERATOR_SLOT`]) whose repair
//! packets go back to the pacer's queue, and how the encoder follows them.

use super::choices::{BweChoice, FecChoice};
use super::streams::{PADDING_SSRC, frame_info};
use crate::link::Time;
use crate::media::encoder::{Encoder, EncoderConfig, NOMINAL_RESOLUTION};
use pacer::CwndMode;
#[cfg(doc)]
use pacer::FEC_GENERATOR_SLOT;
use pacer::{
    ActionConfig, ActionConfigError, ActionsHandle, CwndChannel, CwndConfig, GoogCc, GoogCcConfig,
    HandoverAwarePacer, LossProtection, PacerHandle, PacingConfig, ProbeChannel, ProtectionHandle,
    RepairQueue, SequenceCounter,
};
use pacer::{CwndSnapshot, frame_drop_interval};
use rtc_interceptor::{BandwidthEstimator, Gcc, PacketReport};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The handles through which a call reads its sender while it runs: the pacer's (stats, queue
/// time limit), the estimator's latest target, the congestion window and the loss protection.
#[derive(Clone)]
pub struct SenderHandles {
    /// The pacer's handle.
    pub pacer: PacerHandle,
    /// The estimator's latest target, bps, as f64 bits.
    pub target: Arc<AtomicU64>,
    /// The congestion window shared by the estimator and the pacer.
    pub cwnd: CwndChannel,
    /// The loss protection's handle (network inputs in, FEC counters out). Present in every
    /// mode: without FEC it still measures the video rate for the media target.
    pub protection: ProtectionHandle,
    /// The handover-timed actions' schedule, shared by the pacer (hold), GoogCC (guard) and the
    /// loss protection (boost); `None` when the call applies no actions.
    pub actions: Option<ActionsHandle>,
}

impl SenderHandles {
    /// The estimator's latest target, bps.
    pub fn target_bps(&self) -> f64 {
        f64::from_bits(self.target.load(Ordering::Relaxed))
    }
}

/// The chosen estimator, with its target readable from outside the chain, and the congestion
/// window fed from its feedback and process ticks (the estimator is boxed inside webrtc-rs's
/// congestion-control interceptor, which is the only place the feedback reports exist).
pub struct ObservedEstimator {
    estimator: Estimator,
    target: Arc<AtomicU64>,
    cwnd: CwndChannel,
}

enum Estimator {
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

/// The pacing half of a call's sender: the interceptors for `Slot::Pacer`,
/// [`FEC_GENERATOR_SLOT`] and `Slot::CongestionControl` (this one still to be wrapped in
/// webrtc-rs's congestion-control builder) and the handles into them.
pub struct PacedSender {
    /// The interceptor for [`FEC_GENERATOR_SLOT`], between the congestion controller and the
    /// TWCC sender: it protects media as it leaves the pacer, transport-wide sequence number
    /// included, and hands its FlexFEC-03 repair packets back to the pacer, which paces them as
    /// video (libwebrtc `RtpSenderEgress::SendPacket` and `PacketRouter::FetchFec`;
    /// docs/architecture.md, "The data path").
    pub protection: LossProtection,
    /// The interceptor for `Slot::Pacer`.
    pub pacer: HandoverAwarePacer,
    /// The estimator for `Slot::CongestionControl`, publishing its target and feeding the window.
    pub estimator: ObservedEstimator,
    /// The handles into both.
    pub handles: SenderHandles,
    /// Whether the pacer sends padding (probes, keep-alives) on [`PADDING_SSRC`], a stream both
    /// ends must bind.
    pub padding: bool,
}

/// Where a sender's padding (probes, pacer-mode keep-alives) goes.
#[derive(Debug, Clone)]
pub struct PaddingStream {
    /// Its SSRC.
    pub ssrc: u32,
    /// Its payload type.
    pub payload_type: u8,
    /// For an RTX stream: the sequence counter the pacer's padding shares with the NACK
    /// responder's retransmissions; `None` for a stream of padding only.
    pub rtx_sequence: Option<SequenceCounter>,
}

/// Builds the loss protection, the pacer and the estimator of a sender: `fec` protects the
/// streams bound with a repair SSRC as their packets leave (hybrid NACK/FEC when `nack` runs),
/// the repair packets going back to the pacer through a shared [`RepairQueue`]; GoogCC
/// ([`googcc_config`]) probes through the pacer, or webrtc-rs's `Gcc`; the congestion window in
/// `cwnd` mode; padding (probes and pacer-mode keep-alives) on `padding_stream` ([`PADDING_SSRC`]
/// in calls between this project's peers), or none (`None`: probes are filled with media only);
/// with an `rtx_sequence`, the padding stream is an RTX stream and padding is RTX payload padding
/// numbered from that counter, which the NACK responder shares (towards a
/// browser, as libwebrtc pads: Chromium drops the video when packets of an SSRC it was never told
/// of arrive); with `actions`, one schedule of handover-timed actions that the pacer,
/// GoogCC and the loss protection apply (docs/architecture.md, "Handover-timed actions").
///
/// # Errors
///
/// [`ActionConfigError`] if `actions` is not a valid configuration.
pub fn paced_sender(
    bwe: BweChoice,
    cwnd: CwndMode,
    keyframe_flush: bool,
    fec: FecChoice,
    nack: bool,
    padding_stream: Option<PaddingStream>,
    actions: Option<ActionConfig>,
) -> Result<PacedSender, ActionConfigError> {
    let actions = actions.map(ActionsHandle::new).transpose()?;
    let repair = RepairQueue::new();
    let mut protection = LossProtection::builder(fec.mode())
        .frame_info(frame_info)
        .nack_enabled(nack)
        .repair_queue(repair.clone());
    if let Some(actions) = &actions {
        protection = protection.actions(actions.clone());
    }
    let (protection, protection_handle) = protection.build();
    let (width, height) = NOMINAL_RESOLUTION;
    protection_handle.set_resolution(width, height);
    let probing = bwe == BweChoice::GoogCc;
    // The padding stream also carries the pacer-mode keep-alives.
    let padding = padding_stream.is_some() && (probing || cwnd == CwndMode::Pacer);
    let (padding_ssrc, padding_payload_type, rtx_padding) = match padding_stream {
        Some(stream) => (stream.ssrc, stream.payload_type, stream.rtx_sequence),
        None => (PADDING_SSRC, 0, None),
    };
    let pacing = PacingConfig {
        padding_ssrc: padding.then_some(padding_ssrc),
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
            BweChoice::GoogCc => {
                let googcc = GoogCc::with_probing(googcc_config(), probes.clone());
                Estimator::GoogCc(Box::new(match &actions {
                    Some(actions) => googcc.guarded_by(actions.clone()),
                    None => googcc,
                }))
            }
            BweChoice::WebrtcRs => Estimator::WebrtcRs(Box::default()),
        },
        target: target.clone(),
        cwnd: cwnd.clone(),
    };
    let mut pacer = HandoverAwarePacer::builder(pacing)
        .congestion_window(cwnd.clone())
        .frame_info(frame_info)
        .repair_queue(repair);
    if let Some(sequence) = rtx_padding {
        pacer = pacer.rtx_padding(sequence);
    }
    if probing {
        pacer = pacer.probe_channel(probes);
    }
    if let Some(actions) = &actions {
        pacer = pacer.actions(actions.clone());
    }
    let (pacer, handle) = pacer.build();
    Ok(PacedSender {
        protection,
        pacer,
        estimator,
        handles: SenderHandles {
            pacer: handle,
            target,
            cwnd,
            protection: protection_handle,
            actions,
        },
        padding,
    })
}

/// Hands the encoder the pacer's target less the protection overhead, and the congestion
/// window's pushback (libwebrtc `MaybeTriggerOnNetworkChanged`, then
/// `FecControllerDefault::UpdateFecRates`, which leaves the media the target less the share
/// NACK and FEC took over the last second, at most half: [`ProtectionHandle::media_target_bps`]).
/// In pushback mode with DropFrame the encoder keeps that target and drops one frame in
/// [`frame_drop_interval`] of the reduce ratio; without DropFrame the target becomes the
/// pushback target. In the other modes (or before the window has a target) the encoder just
/// follows the media target.
pub fn steer_encoder(
    encoder: &mut Encoder,
    now: Time,
    target_bps: u64,
    protection: &ProtectionHandle,
    window: &CwndSnapshot,
    cwnd_config: &CwndConfig,
) {
    let media_target_bps = protection.media_target_bps(target_bps);
    let pushback = cwnd_config.mode == CwndMode::Pushback && window.target_bps > 0;
    let encoder_target = if pushback && !cwnd_config.drop_frame {
        media_target_bps.min(window.pushback_target_bps)
    } else {
        media_target_bps
    };
    encoder.set_target(now, encoder_target);
    encoder.set_frame_drop_interval(
        (pushback && cwnd_config.drop_frame)
            .then(|| frame_drop_interval(window.cwnd_reduce_ratio))
            .flatten(),
    );
}

/// bitrate as the total allocation (what libwebrtc's `BitrateAllocator` reports), so probing
/// stops at twice it.
pub fn googcc_config() -> GoogCcConfig {
    GoogCcConfig {
        max_total_allocated_bps: Some(EncoderConfig::default().max_bps as f64),
        ..GoogCcConfig::default()
    }
}

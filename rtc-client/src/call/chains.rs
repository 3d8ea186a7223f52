//! Both interceptor chains of a call, written once for simulated and real calls
//! (docs/architecture.md, "The call engine"): the sender's is the plugin's install
//! ([`pacer::sender`]) configured from the [`SenderOptions`]; the receiver's is the receive
//! side that pairs with it. A [`ChainKind`] adds what only a peer connection needs (RTCP
//! reports, the implied streams' binding); the media engine's codecs and feedback registrations
//! are the real call's (`live::peer`).

use super::NackChoice;
use super::options::SenderOptions;
use super::sender::googcc_config;
use super::streams::{
    MAX_NACKS_PER_PACKET, PADDING_PAYLOAD_TYPE, PADDING_SSRC, VIDEO_PAYLOAD_TYPE,
    VIDEO_RTX_PAYLOAD_TYPE, VIDEO_RTX_SSRC, frame_info,
};
use crate::fec::{
    FEC_RECEIVER_SLOT, FecReceiver, FecReceiverHandle, OrderedReceiverReports,
    RECEIVER_REPORT_SLOT, TWCC_RECEIVER_SLOT,
};
use crate::media::encoder::NOMINAL_RESOLUTION;
use crate::nack::{NackGenerator, NackGeneratorHandle, RTX_RECEIVER_SLOT, RtxReceiver};
use pacer::ActionConfig;
use pacer::sender::{ChainKind, HandoverAwareSender, PaddingRoute, SenderConfig};
use rtc_interceptor::{
    NackGeneratorBuilder, Registry, SenderReportBuilder, Slot, TwccReceiverBuilder,
};

/// Where the sender's padding goes in a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallPadding {
    /// On [`PADDING_SSRC`], a stream of its own, between this project's peers (in the
    /// simulator's padding payload type, or in the negotiated VP8 one over a peer connection).
    Own,
    /// On the negotiated RTX stream, as libwebrtc pads towards a browser; no padding without
    /// RTX (probes then carry media only).
    Rtx,
}

/// The sender's configuration for `options`: the plugin's defaults with this call's choices,
/// the synthetic and VP8 frame reader, the encoder's nominal resolution, and GoogCC told the
/// encoder's maximum as its allocation.
pub fn sender_config(
    options: SenderOptions,
    actions: Option<ActionConfig>,
    padding: CallPadding,
    kind: ChainKind,
) -> SenderConfig {
    let rtx = options.nack == NackChoice::Libwebrtc;
    SenderConfig {
        bwe: options.bwe.telemetry(),
        googcc: googcc_config(),
        cwnd: options.cwnd,
        keyframe_flush: options.keyframe_flush,
        fec: options.fec.mode(),
        nack: options.nack.mode(),
        padding: match (padding, kind) {
            (CallPadding::Own, ChainKind::Direct) => PaddingRoute::Own {
                ssrc: PADDING_SSRC,
                payload_type: PADDING_PAYLOAD_TYPE,
            },
            (CallPadding::Own, ChainKind::PeerConnection) => PaddingRoute::Own {
                ssrc: PADDING_SSRC,
                payload_type: VIDEO_PAYLOAD_TYPE,
            },
            (CallPadding::Rtx, _) if rtx => PaddingRoute::Rtx {
                ssrc: VIDEO_RTX_SSRC,
                payload_type: VIDEO_RTX_PAYLOAD_TYPE,
            },
            (CallPadding::Rtx, _) => PaddingRoute::None,
        },
        actions,
        frame_info: Some(frame_info),
        resolution: NOMINAL_RESOLUTION,
    }
}

/// The sender chain of a call with `options` in `registry`, and the sender's handle.
///
/// # Errors
///
/// [`pacer::actions::ActionConfigError`] if `actions` is not a valid configuration.
pub fn sender_chain(
    registry: Registry,
    options: SenderOptions,
    actions: Option<ActionConfig>,
    padding: CallPadding,
    kind: ChainKind,
) -> Result<(Registry, HandoverAwareSender), pacer::actions::ActionConfigError> {
    sender_config(options, actions, padding, kind).install(registry, kind)
}

/// The handles into a receiver chain.
pub struct ReceiverHandles {
    /// The libwebrtc-like NACK generator's handle ([`NackChoice::Libwebrtc`]).
    pub generator: Option<NackGeneratorHandle>,
    /// The FlexFEC receiver's counters.
    pub fec: FecReceiverHandle,
}

/// The receiver chain matching a sender with `nack`: the receiver reports (sent in SSRC order)
/// and the TWCC receiver wire-ward of the FEC receiver, so both see the network as it was
/// (repair packets arrive, rebuilt packets do not count), then the NACK generator matching the
/// caller's (the libwebrtc-like one behind the RTX receiver, webrtc-rs's stock one, or none); a
/// peer connection adds webrtc-rs's sender reports.
pub fn receiver_chain(nack: NackChoice, kind: ChainKind) -> (Registry, ReceiverHandles) {
    let (fec_receiver, fec) = FecReceiver::new();
    let mut registry = Registry::new()
        .with(RECEIVER_REPORT_SLOT, OrderedReceiverReports::default())
        .with(TWCC_RECEIVER_SLOT, TwccReceiverBuilder::new().build())
        .with(FEC_RECEIVER_SLOT, fec_receiver);
    if kind == ChainKind::PeerConnection {
        registry = registry.with(Slot::SenderReport, SenderReportBuilder::new().build());
    }
    let mut generator = None;
    match nack {
        NackChoice::Stock => {
            registry = registry.with(
                Slot::NackGenerator,
                NackGeneratorBuilder::new()
                    .with_max_nacks_per_packet(MAX_NACKS_PER_PACKET)
                    .build(),
            );
        }
        NackChoice::Libwebrtc => {
            let (nack_generator, handle) = NackGenerator::new();
            registry = registry
                .with(RTX_RECEIVER_SLOT, RtxReceiver::new())
                .with(Slot::NackGenerator, nack_generator);
            generator = Some(handle);
        }
        NackChoice::Off => {}
    }
    (registry, ReceiverHandles { generator, fec })
}

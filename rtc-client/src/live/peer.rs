//! Peer-connection set-up shared by both sides of a real call: the media engine, the two
//! interceptor chains, the event handler and non-trickle ICE.
//!
//! # The sender chain (the caller)
//!
//! As the simulator builds it ([`crate::call::sender`]), in webrtc-rs's slots:
//! `configure_rtcp_reports` (sender and receiver reports), then `configure_congestion_control`
//! with transport-wide feedback (it registers `transport-cc` and the TWCC header extension in the
//! media engine), whose slots are then filled with this project's pieces: the congestion
//! controller over the estimator wrapper that publishes the target and feeds the congestion
//! window ([`crate::call::sender::ObservedEstimator`]), the TWCC sender, the [`HandoverAwarePacer`](pacer::HandoverAwarePacer) at
//! `Slot::Pacer` with its congestion window, probe channel and key-frame flushing, and the NACK
//! pair ([`NackChoice`]): the libwebrtc-like responder with its tap and RTX, webrtc-rs's stock
//! pair (`configure_nack`), or none.
//!
//! A peer connection binds one stream per encoding: the video stream, naming its RTX SSRC. The
//! simulator also binds the RTX and the probe-padding streams on their own so that the TWCC
//! sender numbers their packets and the congestion controller records them; [`BindAlso`] does
//! the same here around those two interceptors, so retransmissions and probes are acknowledged
//! and counted by the estimator as in the simulator.
//!
//! # The receiver chain (the answerer)
//!
//! `configure_rtcp_reports`, `configure_twcc_receiver_only`, and the NACK generator matching the
//! caller's: the libwebrtc-like generator behind the RTX receiver, webrtc-rs's stock generator
//! (`configure_nack`), or none.

use super::LiveError;
use crate::call::sender::{PacedSender, PaddingStream, SenderHandles, paced_sender};
use crate::call::streams::{
    MAX_NACKS_PER_PACKET, PADDING_SSRC, VIDEO_FEC_PAYLOAD_TYPE, VIDEO_FEC_SSRC, VIDEO_PAYLOAD_TYPE,
    VIDEO_RTX_PAYLOAD_TYPE, VIDEO_RTX_SSRC, VIDEO_SSRC, fec_stream, padding_stream, rtx_stream,
};
use crate::call::{NackChoice, SenderOptions};
use crate::fec::{
    FEC_RECEIVER_SLOT, FecReceiver, FecReceiverHandle, OrderedReceiverReports,
    RECEIVER_REPORT_SLOT, TWCC_RECEIVER_SLOT,
};
use crate::nack::{
    NackGenerator, NackGeneratorHandle, NackResponder, NackResponderHandle, RTX_RECEIVER_SLOT,
    RtxReceiver, TAP_SLOT,
};
use pacer::FEC_GENERATOR_SLOT;
use rtc::ice::mdns::MulticastDnsMode;
use rtc::interceptor::{
    CongestionControlBuilder, Gcc, Interceptor, NackGeneratorBuilder, NackResponderBuilder,
    SenderReportBuilder, StreamInfo, TaggedPacket, TwccReceiverBuilder, TwccSenderBuilder,
};
use rtc::media_stream::MediaStreamTrack;
use rtc::peer_connection::configuration::media_engine::{
    MIME_TYPE_FLEX_FEC03, MIME_TYPE_RTX, MIME_TYPE_VP8,
};
use rtc::rtcp::payload_feedbacks::full_intra_request::FullIntraRequest;
use rtc::rtcp::payload_feedbacks::picture_loss_indication::PictureLossIndication;
use rtc::rtp_transceiver::rtp_sender::{
    RTCPFeedback as SdpFeedback, RTCRtpCodec, RTCRtpCodecParameters, RTCRtpCodingParameters,
    RTCRtpEncodingParameters, RTCRtpFecParameters, RTCRtpRtxParameters, RtpCodecKind,
};
use rtc::sansio::Protocol;
use rtc::shared::error::Error as RtcError;
use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, mpsc, watch};
use webrtc::media_stream::track_local::static_rtp::TrackLocalStaticRTP;
use webrtc::media_stream::track_remote::TrackRemote;
use webrtc::peer_connection::{
    CongestionFeedback, MediaEngine, PeerConnection, PeerConnectionBuilder,
    PeerConnectionEventHandler, RTCIceGatheringState, RTCPeerConnectionState,
    RTCSessionDescription, Registry, SettingEngineBuilder, Slot, configure_congestion_control,
    configure_nack, configure_rtcp_reports, configure_twcc_receiver_only,
};

/// Where [`PliTap`] sits on the sender: past every webrtc-rs slot (the last is
/// `Slot::JitterBuffer` = 13000), so it sees inbound RTCP before the chain's terminus drops it.
pub const PLI_TAP_SLOT: Slot = Slot::Custom(14_000);

/// How long ICE gathering may take: host candidates on one socket gather at once; this bounds a
/// broken set-up rather than a slow one.
pub const GATHER_TIMEOUT: Duration = Duration::from_secs(5);

/// The VP8 codec as both sides register it (the synthetic payload rides in it; nothing decodes
/// it).
pub fn vp8(feedback: Vec<SdpFeedback>) -> RTCRtpCodecParameters {
    RTCRtpCodecParameters {
        rtp_codec: RTCRtpCodec {
            mime_type: MIME_TYPE_VP8.to_owned(),
            clock_rate: 90_000,
            rtcp_feedback: feedback,
            ..Default::default()
        },
        payload_type: VIDEO_PAYLOAD_TYPE,
    }
}

/// RTX for VP8 (RFC 4588, `apt` = the VP8 payload type).
fn rtx_codec() -> RTCRtpCodecParameters {
    RTCRtpCodecParameters {
        rtp_codec: RTCRtpCodec {
            mime_type: MIME_TYPE_RTX.to_owned(),
            clock_rate: 90_000,
            sdp_fmtp_line: format!("apt={VIDEO_PAYLOAD_TYPE}"),
            ..Default::default()
        },
        payload_type: VIDEO_RTX_PAYLOAD_TYPE,
    }
}

/// FlexFEC-03 (`video/flexfec-03`, as browsers name it), with libwebrtc's repair window.
fn flexfec_codec() -> RTCRtpCodecParameters {
    RTCRtpCodecParameters {
        rtp_codec: RTCRtpCodec {
            mime_type: MIME_TYPE_FLEX_FEC03.to_owned(),
            clock_rate: 90_000,
            sdp_fmtp_line: "repair-window=10000000".to_owned(),
            ..Default::default()
        },
        payload_type: VIDEO_FEC_PAYLOAD_TYPE,
    }
}

/// A media engine with VP8 and, with `rtx`, its RTX codec, with `fec` FlexFEC-03.
///
/// # Errors
///
/// [`LiveError::Webrtc`] if webrtc-rs refuses a codec.
pub fn media_engine(rtx: bool, fec: bool) -> Result<MediaEngine, LiveError> {
    let mut media = MediaEngine::default();
    media
        .register_codec(vp8(Vec::new()), RtpCodecKind::Video)
        .map_err(LiveError::webrtc)?;
    if rtx {
        media
            .register_codec(rtx_codec(), RtpCodecKind::Video)
            .map_err(LiveError::webrtc)?;
    }
    if fec {
        media
            .register_codec(flexfec_codec(), RtpCodecKind::Video)
            .map_err(LiveError::webrtc)?;
    }
    Ok(media)
}

/// What the caller keeps of its chain: the handles into it.
#[derive(Clone)]
pub struct CallerHandles {
    /// The pacer's, the estimator's and the congestion window's.
    pub sender: SenderHandles,
    /// The libwebrtc-like responder's handle ([`NackChoice::Libwebrtc`]).
    pub responder: Option<NackResponderHandle>,
    /// Set when a PLI arrives; the encoder takes it.
    pub pli: Arc<AtomicBool>,
}

/// The caller's media engine and interceptor registry (see the module documentation), and the
/// handles into the chain.
///
/// # Errors
///
/// [`LiveError::Webrtc`] if webrtc-rs refuses the configuration.
pub fn sender_chain(
    setup: SenderOptions,
    actions: Option<pacer::ActionConfig>,
    padding: bool,
) -> Result<(MediaEngine, Registry, CallerHandles), LiveError> {
    let rtx = setup.nack == NackChoice::Libwebrtc;
    let mut media = media_engine(rtx, setup.fec.is_on())?;
    // Between our own peers the padding stream rides in the negotiated VP8 payload type: the
    // pacer's probes and keep-alives are padding-only packets that the receiver's TWCC records
    // and then drops. Without `padding` (towards a browser: Chromium 156 stopped decoding the
    // video when packets of an SSRC it was never told of arrived in its payload type) padding
    // goes on the negotiated RTX stream, as libwebrtc sends it (`RTPSender::GeneratePadding`):
    // RTX payload padding numbered from one sequence that the pacer and the NACK responder's
    // retransmissions share (SRTP's replay check would drop packets of a second counter on the
    // same SSRC). Without RTX, probes carry media only.
    let rtx_padding = (!padding && rtx).then(pacer::SequenceCounter::new);
    let padding_stream = match &rtx_padding {
        Some(sequence) => Some(PaddingStream {
            ssrc: VIDEO_RTX_SSRC,
            payload_type: VIDEO_RTX_PAYLOAD_TYPE,
            rtx_sequence: Some(sequence.clone()),
        }),
        None => padding.then_some(PaddingStream {
            ssrc: PADDING_SSRC,
            payload_type: VIDEO_PAYLOAD_TYPE,
            rtx_sequence: None,
        }),
    };
    let PacedSender {
        protection,
        pacer,
        estimator,
        handles,
        ..
    } = paced_sender(
        setup.bwe,
        setup.cwnd,
        setup.keyframe_flush,
        setup.fec,
        setup.nack != NackChoice::Off,
        padding_stream,
        actions,
    )
    .map_err(|e| LiveError::Config(format!("the handover-timed actions: {e}")))?;

    let mut registry = configure_rtcp_reports(Registry::new());
    // Registers transport-cc and the TWCC header extension; its placeholder slots are replaced
    // just below.
    registry = configure_congestion_control(
        registry,
        Gcc::default(),
        CongestionFeedback::Twcc,
        &mut media,
    )
    .map_err(LiveError::webrtc)?;
    registry = registry
        .with(
            Slot::CongestionControl,
            BindAlso::new(CongestionControlBuilder::new(estimator).build()),
        )
        .with(
            Slot::TwccSender,
            BindAlso::new(TwccSenderBuilder::new().build()),
        )
        .with(Slot::Pacer, pacer)
        .with(FEC_GENERATOR_SLOT, protection);
    let pli = Arc::new(AtomicBool::new(false));
    let mut responder_handle = None;
    match setup.nack {
        NackChoice::Stock => {
            registry = configure_nack(registry, &mut media)
                .with(Slot::NackResponder, NackResponderBuilder::new().build());
        }
        NackChoice::Libwebrtc => {
            register_nack_feedback(&mut media);
            let (responder, handle, tap) = NackResponder::new();
            let responder = match &rtx_padding {
                Some(sequence) => responder.with_rtx_sequence(sequence.clone()),
                None => responder,
            };
            registry = registry
                .with(TAP_SLOT, tap)
                .with(Slot::NackResponder, responder);
            responder_handle = Some(handle);
        }
        NackChoice::Off => {}
    }
    // The receiver-side pieces the helpers place (TWCC receiver, stock NACK generator) idle on
    // a send-only peer.
    let registry = registry.with(
        PLI_TAP_SLOT,
        PliTap {
            flag: pli.clone(),
            ..PliTap::default()
        },
    );
    Ok((
        media,
        registry,
        CallerHandles {
            sender: handles,
            responder: responder_handle,
            pli,
        },
    ))
}

/// `a=rtcp-fb:* nack` and `nack pli` for video, as `configure_nack` registers them.
fn register_nack_feedback(media: &mut MediaEngine) {
    media.register_feedback(
        SdpFeedback {
            typ: "nack".to_owned(),
            parameter: String::new(),
        },
        RtpCodecKind::Video,
    );
    media.register_feedback(
        SdpFeedback {
            typ: "nack".to_owned(),
            parameter: "pli".to_owned(),
        },
        RtpCodecKind::Video,
    );
}

/// The answerer's chain, and the handles into it.
pub struct ReceiverChain {
    /// The media engine (VP8, RTX with libwebrtc's NACK, FlexFEC-03 when offered).
    pub media: MediaEngine,
    /// The interceptors.
    pub registry: Registry,
    /// The libwebrtc-like NACK generator's handle.
    pub generator: Option<NackGeneratorHandle>,
    /// The FlexFEC receiver's counters.
    pub fec: FecReceiverHandle,
}

/// The answerer's media engine and registry for the caller's NACK choice, with FlexFEC-03 when
/// `fec` (an answerer without it answers a FEC offer without FEC, and the call runs without).
/// The receiver reports and the TWCC receiver sit wire-ward of the FEC receiver, as in the
/// simulator ([`crate::fec`]).
///
/// # Errors
///
/// [`LiveError::Webrtc`] if webrtc-rs refuses the configuration.
pub fn receiver_chain(nack: NackChoice, fec: bool) -> Result<ReceiverChain, LiveError> {
    let mut media = media_engine(nack == NackChoice::Libwebrtc, fec)?;
    // The transport-cc feedback and header extension as webrtc-rs registers them; its TWCC
    // receiver goes at this project's slot instead of the default one.
    configure_twcc_receiver_only(Registry::new(), &mut media).map_err(LiveError::webrtc)?;
    let (fec_receiver, fec_handle) = FecReceiver::new();
    let mut registry = Registry::new()
        .with(RECEIVER_REPORT_SLOT, OrderedReceiverReports::default())
        .with(Slot::SenderReport, SenderReportBuilder::new().build())
        .with(TWCC_RECEIVER_SLOT, TwccReceiverBuilder::new().build())
        .with(FEC_RECEIVER_SLOT, fec_receiver);
    let mut handle = None;
    match nack {
        NackChoice::Stock => {
            registry = configure_nack(registry, &mut media).with(
                Slot::NackGenerator,
                NackGeneratorBuilder::new()
                    .with_max_nacks_per_packet(MAX_NACKS_PER_PACKET)
                    .build(),
            );
        }
        NackChoice::Libwebrtc => {
            register_nack_feedback(&mut media);
            let (generator, generator_handle) = NackGenerator::new();
            registry = registry
                .with(RTX_RECEIVER_SLOT, RtxReceiver::new())
                .with(Slot::NackGenerator, generator);
            handle = Some(generator_handle);
        }
        NackChoice::Off => {}
    }
    Ok(ReceiverChain {
        media,
        registry,
        generator: handle,
        fec: fec_handle,
    })
}

/// The caller's video track: raw RTP from the project's packetizer on [`VIDEO_SSRC`], with the
/// RTX SSRC when RTX is negotiated and the FlexFEC-03 repair SSRC ([`VIDEO_FEC_SSRC`]) when the
/// sender protects.
pub fn video_track(rtx: bool, fec: bool) -> Arc<TrackLocalStaticRTP> {
    Arc::new(TrackLocalStaticRTP::new(MediaStreamTrack::new(
        "leopace".to_owned(),
        "video".to_owned(),
        "synthetic video".to_owned(),
        RtpCodecKind::Video,
        vec![RTCRtpEncodingParameters {
            rtp_coding_parameters: RTCRtpCodingParameters {
                ssrc: Some(VIDEO_SSRC),
                rtx: rtx.then_some(RTCRtpRtxParameters {
                    ssrc: VIDEO_RTX_SSRC,
                }),
                fec: fec.then_some(RTCRtpFecParameters {
                    ssrc: VIDEO_FEC_SSRC,
                }),
                ..Default::default()
            },
            codec: vp8(Vec::new()).rtp_codec,
            ..Default::default()
        }],
    )))
}

/// One peer's events: ICE gathering, the connection state, and incoming tracks.
pub struct Events {
    gathered: Notify,
    state: watch::Sender<RTCPeerConnectionState>,
    tracks: mpsc::UnboundedSender<Arc<dyn TrackRemote>>,
}

impl Events {
    /// A handler, the receiving end of its connection state, and of its incoming tracks.
    pub fn new() -> (
        Arc<Self>,
        watch::Receiver<RTCPeerConnectionState>,
        mpsc::UnboundedReceiver<Arc<dyn TrackRemote>>,
    ) {
        let (state, state_rx) = watch::channel(RTCPeerConnectionState::New);
        let (tracks, tracks_rx) = mpsc::unbounded_channel();
        (
            Arc::new(Self {
                gathered: Notify::new(),
                state,
                tracks,
            }),
            state_rx,
            tracks_rx,
        )
    }
}

#[async_trait::async_trait]
impl PeerConnectionEventHandler for Events {
    async fn on_ice_gathering_state_change(&self, state: RTCIceGatheringState) {
        if state == RTCIceGatheringState::Complete {
            self.gathered.notify_one();
        }
    }

    async fn on_connection_state_change(&self, state: RTCPeerConnectionState) {
        let _ = self.state.send(state);
    }

    async fn on_track(&self, track: Arc<dyn TrackRemote>) {
        let _ = self.tracks.send(track);
    }
}

/// A peer connection with mDNS off (multicast is neither needed nor allowed here), no STUN or
/// TURN servers, and one UDP socket on `ip`: exactly one host candidate.
///
/// # Errors
///
/// [`LiveError::Webrtc`] if webrtc-rs cannot build it.
pub async fn build_peer(
    media: MediaEngine,
    registry: Registry,
    events: &Arc<Events>,
    ip: IpAddr,
) -> Result<Box<dyn PeerConnection>, LiveError> {
    let settings = SettingEngineBuilder::new()
        .with_multicast_dns_mode(MulticastDnsMode::Disabled)
        .build();
    let peer = PeerConnectionBuilder::new()
        .with_media_engine(media)
        .with_setting_engine(settings)
        .with_interceptor_registry(registry)
        .with_handler(events.clone())
        .with_udp_addrs(vec![format!("{ip}:0")])
        .build()
        .await
        .map_err(LiveError::webrtc)?;
    Ok(Box::new(peer))
}

/// Sets `description` as the local one and waits for ICE gathering to complete (non-trickle):
/// the returned description holds every candidate.
///
/// # Errors
///
/// [`LiveError::Webrtc`] if webrtc-rs refuses it, [`LiveError::Signalling`] if gathering does
/// not complete within [`GATHER_TIMEOUT`].
pub async fn set_local_and_gather(
    peer: &dyn PeerConnection,
    events: &Events,
    description: RTCSessionDescription,
) -> Result<RTCSessionDescription, LiveError> {
    peer.set_local_description(description)
        .await
        .map_err(LiveError::webrtc)?;
    tokio::time::timeout(GATHER_TIMEOUT, events.gathered.notified())
        .await
        .map_err(|_| {
            LiveError::Signalling(format!(
                "ICE gathering did not complete within {GATHER_TIMEOUT:?}"
            ))
        })?;
    peer.local_description()
        .await
        .ok_or_else(|| LiveError::Signalling("no local description after gathering".into()))
}

/// The extra streams a video binding implies: its RTX stream, its FlexFEC-03 repair stream and
/// the probe-padding stream, with the video stream's header extensions and transport-wide
/// feedback only, as the simulator binds them ([`rtx_stream`], [`fec_stream`],
/// [`padding_stream`]); the padding rides in the video payload type.
fn implied_streams(video: &StreamInfo) -> Vec<StreamInfo> {
    let mut out: Vec<StreamInfo> = [rtx_stream(video), fec_stream(video)]
        .into_iter()
        .flatten()
        .collect();
    out.push(padding_stream(video, video.payload_type));
    out
}

/// An interceptor that, when the video stream is bound, also binds the streams it implies
/// (`implied_streams`) on the interceptor it wraps, first (see the module documentation).
pub struct BindAlso<I> {
    inner: I,
}

impl<I> BindAlso<I> {
    /// Wraps `inner`.
    pub fn new(inner: I) -> Self {
        Self { inner }
    }
}

impl<I: Interceptor> Protocol<TaggedPacket, TaggedPacket, ()> for BindAlso<I> {
    type Rout = TaggedPacket;
    type Wout = TaggedPacket;
    type Eout = ();
    type Error = RtcError;
    type Time = Instant;

    fn handle_read(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        self.inner.handle_read(msg)
    }

    fn poll_read(&mut self) -> Option<Self::Rout> {
        self.inner.poll_read()
    }

    fn handle_write(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        self.inner.handle_write(msg)
    }

    fn poll_write(&mut self) -> Option<Self::Wout> {
        self.inner.poll_write()
    }

    fn handle_event(&mut self, evt: ()) -> Result<(), Self::Error> {
        self.inner.handle_event(evt)
    }

    fn poll_event(&mut self) -> Option<Self::Eout> {
        self.inner.poll_event()
    }

    fn handle_timeout(&mut self, now: Instant) -> Result<(), Self::Error> {
        self.inner.handle_timeout(now)
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        self.inner.poll_timeout()
    }

    fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close()
    }
}

impl<I: Interceptor> Interceptor for BindAlso<I> {
    fn bind_local_stream(&mut self, info: &StreamInfo) {
        if info.ssrc == VIDEO_SSRC {
            for extra in implied_streams(info) {
                self.inner.bind_local_stream(&extra);
            }
        }
        self.inner.bind_local_stream(info);
    }

    fn unbind_local_stream(&mut self, info: &StreamInfo) {
        self.inner.unbind_local_stream(info);
        if info.ssrc == VIDEO_SSRC {
            for extra in implied_streams(info) {
                self.inner.unbind_local_stream(&extra);
            }
        }
    }

    fn bind_remote_stream(&mut self, info: &StreamInfo) {
        self.inner.bind_remote_stream(info);
    }

    fn unbind_remote_stream(&mut self, info: &StreamInfo) {
        self.inner.unbind_remote_stream(info);
    }
}

/// Picks PLIs and FIRs (RFC 4585 section 6.3.1, RFC 5104 section 4.3.1: both ask for a key
/// frame) off the sender's inbound RTCP (the chain's terminus would drop them) and raises a
/// flag the encoder takes: the shared-state channel of reference 3.4.
#[derive(Default)]
pub struct PliTap {
    flag: Arc<AtomicBool>,
    reads: VecDeque<TaggedPacket>,
    writes: VecDeque<TaggedPacket>,
}

impl Protocol<TaggedPacket, TaggedPacket, ()> for PliTap {
    type Rout = TaggedPacket;
    type Wout = TaggedPacket;
    type Eout = ();
    type Error = RtcError;
    type Time = Instant;

    fn handle_read(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        if let rtc::interceptor::Packet::Rtcp(rtcp) = &msg.message.packet
            && rtcp.iter().any(|p| {
                p.as_any().is::<PictureLossIndication>() || p.as_any().is::<FullIntraRequest>()
            })
        {
            self.flag.store(true, Ordering::Relaxed);
        }
        self.reads.push_back(msg);
        Ok(())
    }

    fn poll_read(&mut self) -> Option<Self::Rout> {
        self.reads.pop_front()
    }

    fn handle_write(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        self.writes.push_back(msg);
        Ok(())
    }

    fn poll_write(&mut self) -> Option<Self::Wout> {
        self.writes.pop_front()
    }
}

impl Interceptor for PliTap {
    fn bind_local_stream(&mut self, _info: &StreamInfo) {}

    fn unbind_local_stream(&mut self, _info: &StreamInfo) {}

    fn bind_remote_stream(&mut self, _info: &StreamInfo) {}

    fn unbind_remote_stream(&mut self, _info: &StreamInfo) {}
}

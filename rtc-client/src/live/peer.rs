//! Peer-connection set-up shared by both sides of a real call: the media engine, the two
//! interceptor chains, the event handler and non-trickle ICE.
//!
//! # The sender chain (the caller)
//!
//! The call's sender chain ([`crate::call::chains`]): the plugin's install for a peer
//! connection ([`pacer::sender`]), which adds webrtc-rs's RTCP sender and receiver reports and
//! binds the RTX, repair and padding streams with the video stream (a peer connection binds one
//! stream per encoding), after webrtc-rs's `configure_congestion_control` has registered
//! transport-wide feedback and its header extension in the media engine; then the PLI tap.
//!
//! # The receiver chain (the answerer)
//!
//! The call's receiver chain ([`crate::call::chains::receiver_chain`]) with webrtc-rs's sender
//! reports, and the media engine's codecs and feedback for the caller's choices.

use super::LiveError;
use super::shadow::{SENT_TAP_SLOT, SentLog, SentTap};
use crate::call::chains::{self, CallPadding, ReceiverHandles};
use crate::call::streams::{
    PLAYOUT_DELAY_URI, VIDEO_FEC_PAYLOAD_TYPE, VIDEO_FEC_SSRC, VIDEO_PAYLOAD_TYPE,
    VIDEO_RTX_PAYLOAD_TYPE, VIDEO_RTX_SSRC, VIDEO_SSRC,
};
use crate::call::{NackChoice, SenderOptions};
use crate::fec::FecReceiverHandle;
use crate::nack::NackGeneratorHandle;
use pacer::sender::{ChainKind, HandoverAwareSender};
use rtc::ice::mdns::MulticastDnsMode;
use rtc::interceptor::{Gcc, Interceptor, StreamInfo, TaggedPacket};
use rtc::media_stream::MediaStreamTrack;
use rtc::peer_connection::configuration::media_engine::{
    MIME_TYPE_FLEX_FEC03, MIME_TYPE_RTX, MIME_TYPE_VP8,
};
use rtc::rtcp::payload_feedbacks::full_intra_request::FullIntraRequest;
use rtc::rtcp::payload_feedbacks::picture_loss_indication::PictureLossIndication;
use rtc::rtp_transceiver::rtp_sender::{
    RTCPFeedback as SdpFeedback, RTCRtpCodec, RTCRtpCodecParameters, RTCRtpCodingParameters,
    RTCRtpEncodingParameters, RTCRtpFecParameters, RTCRtpHeaderExtensionCapability,
    RTCRtpRtxParameters, RtpCodecKind,
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
    PeerConnectionEventHandler, RTCIceConnectionState, RTCIceGatheringState,
    RTCPeerConnectionState, RTCSessionDescription, Registry, SettingEngineBuilder, Slot,
    configure_congestion_control, configure_nack, configure_twcc_receiver_only,
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

/// A media engine with VP8 and, with `rtx`, its RTX codec, with `fec` FlexFEC-03; and the
/// playout-delay header extension for video, which the sender's playout raise writes and the
/// receiver honours (a browser offers it too).
///
/// # Errors
///
/// [`LiveError::Webrtc`] if webrtc-rs refuses a codec or the extension.
pub fn media_engine(rtx: bool, fec: bool) -> Result<MediaEngine, LiveError> {
    let mut media = MediaEngine::default();
    media
        .register_header_extension(
            RTCRtpHeaderExtensionCapability {
                uri: PLAYOUT_DELAY_URI.to_owned(),
            },
            RtpCodecKind::Video,
            None,
        )
        .map_err(LiveError::webrtc)?;
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

/// The caller's media engine, interceptor registry, installed sender and PLI flag.
pub struct CallerChain {
    /// VP8, RTX with libwebrtc's NACK, FlexFEC-03 with FEC on; transport-cc feedback.
    pub media: MediaEngine,
    /// The interceptors.
    pub registry: Registry,
    /// The installed sender (its handles, and the policy once given one).
    pub sender: HandoverAwareSender,
    /// Set when a PLI arrives; the encoder takes it.
    pub pli: Arc<AtomicBool>,
    /// What the sender sent, in the clear, once activated (for [`super::shadow`]).
    pub sent: SentLog,
}

/// The caller's media engine and interceptor registry (see the module documentation): the
/// call's sender chain ([`crate::call::chains`], the plugin's install for a peer connection)
/// and the PLI tap. With `padding`, the pacer pads on a stream of its own in the negotiated VP8
/// payload type: padding-only packets that the receiver's TWCC records and then drops. Without
/// it (towards a browser: Chromium 156 stopped decoding the video when packets of an SSRC it was
/// never told of arrived in its payload type) padding goes on the negotiated RTX stream, as
/// libwebrtc sends it; without RTX, probes carry media only.
///
/// # Errors
///
/// [`LiveError::Webrtc`] if webrtc-rs refuses the configuration, [`LiveError::Config`] if the
/// handover-timed actions are not a valid configuration.
pub fn sender_chain(
    setup: SenderOptions,
    actions: Option<pacer::ActionConfig>,
    padding: bool,
) -> Result<CallerChain, LiveError> {
    let rtx = setup.nack == NackChoice::Libwebrtc;
    let mut media = media_engine(rtx, setup.fec.is_on())?;
    // Registers transport-cc and the TWCC header extension; the install replaces its
    // placeholder slots.
    let mut registry = configure_congestion_control(
        Registry::new(),
        Gcc::default(),
        CongestionFeedback::Twcc,
        &mut media,
    )
    .map_err(LiveError::webrtc)?;
    match setup.nack {
        NackChoice::Stock => registry = configure_nack(registry, &mut media),
        NackChoice::Libwebrtc => register_nack_feedback(&mut media),
        NackChoice::Off => {}
    }
    let padding = if padding {
        CallPadding::Own
    } else {
        CallPadding::Rtx
    };
    let (registry, sender) =
        chains::sender_chain(registry, setup, actions, padding, ChainKind::PeerConnection)
            .map_err(|e| LiveError::Config(format!("the handover-timed actions: {e}")))?;
    let pli = Arc::new(AtomicBool::new(false));
    let sent = SentLog::new();
    // The receiver-side pieces the helpers place (TWCC receiver, stock NACK generator) idle on
    // a send-only peer.
    let registry = registry
        .with(
            PLI_TAP_SLOT,
            PliTap {
                flag: pli.clone(),
                ..PliTap::default()
            },
        )
        .with(SENT_TAP_SLOT, SentTap::new(sent.clone()));
    Ok(CallerChain {
        media,
        registry,
        sender,
        pli,
        sent,
    })
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
/// `fec` (an answerer without it answers a FEC offer without FEC, and the call runs without):
/// the call's receiver chain ([`crate::call::chains::receiver_chain`]) for a peer connection.
///
/// # Errors
///
/// [`LiveError::Webrtc`] if webrtc-rs refuses the configuration.
pub fn receiver_chain(nack: NackChoice, fec: bool) -> Result<ReceiverChain, LiveError> {
    let mut media = media_engine(nack == NackChoice::Libwebrtc, fec)?;
    // The transport-cc feedback and header extension as webrtc-rs registers them; its TWCC
    // receiver goes at this project's slot instead of the default one.
    configure_twcc_receiver_only(Registry::new(), &mut media).map_err(LiveError::webrtc)?;
    match nack {
        // The stock pair's feedback registrations (its interceptors are replaced).
        NackChoice::Stock => drop(configure_nack(Registry::new(), &mut media)),
        NackChoice::Libwebrtc => register_nack_feedback(&mut media),
        NackChoice::Off => {}
    }
    let (registry, ReceiverHandles { generator, fec }) =
        chains::receiver_chain(nack, ChainKind::PeerConnection);
    Ok(ReceiverChain {
        media,
        registry,
        generator,
        fec,
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

/// One peer's events: ICE gathering, the connection state, when ICE connected, and incoming
/// tracks.
pub struct Events {
    gathered: Notify,
    state: watch::Sender<RTCPeerConnectionState>,
    ice_connected: std::sync::Mutex<Option<Instant>>,
    tracks: mpsc::UnboundedSender<Arc<dyn TrackRemote>>,
}

impl Events {
    /// When ICE first connected (a candidate pair answered its checks), if it has: a connection
    /// that is still not up long after it has stalled in the DTLS handshake.
    pub fn ice_connected_at(&self) -> Option<Instant> {
        *self.ice_connected.lock().unwrap_or_else(|e| e.into_inner())
    }

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
                ice_connected: std::sync::Mutex::new(None),
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

    async fn on_ice_connection_state_change(&self, state: RTCIceConnectionState) {
        if state == RTCIceConnectionState::Connected {
            self.ice_connected
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert_with(Instant::now);
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

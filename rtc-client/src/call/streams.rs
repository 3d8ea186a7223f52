//! The streams a call negotiates and how media packets become RTP.
//!
//! One video stream (VP8 payload type, transport-wide congestion control and NACK feedback), its
//! RTX stream (RFC 4588) when libwebrtc's NACK pair runs, its FlexFEC-03 repair stream when the
//! sender protects it (`a=ssrc-group:FEC-FR`), and a padding stream for GoogCC's probes and the
//! congestion window's keep-alives. The SSRCs are fixed so that telemetry and the relay's
//! counters name the same streams in simulated and real calls.

use crate::media::packetizer::MediaPacket;
use crate::media::payload::PayloadHeader;
use crate::media::vp8::descriptor;
use pacer::pacing::FrameInfo;
use rtc_interceptor::{RTCPFeedback, RTPHeaderExtension, StreamInfo};

/// The streams a video stream implies, bound on their own (the plugin's, [`pacer::sender`]).
pub use pacer::sender::{fec_stream, padding_stream, rtx_stream};

/// The transport-wide congestion control header extension (draft-holmer-rmcat-transport-wide-cc-
/// extensions-01).
pub const TRANSPORT_CC_URI: &str =
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01";
/// The playout-delay header extension (libwebrtc
/// `docs/native-code/rtp-hdrext/playout-delay/README.md`), the plugin's playout raise on the wire.
pub use pacer::playout::PLAYOUT_DELAY_URI;
/// The video stream's SSRC.
pub const VIDEO_SSRC: u32 = 0x5A7E_111E;
/// The video stream's RTP payload type.
pub const VIDEO_PAYLOAD_TYPE: u8 = 96;
/// The SSRC of GoogCC's probe padding (`BweChoice::GoogCc`).
pub const PADDING_SSRC: u32 = 0x5A7E_BAD0;
/// The padding stream's RTP payload type.
pub const PADDING_PAYLOAD_TYPE: u8 = 127;
/// The video stream's RTX SSRC (RFC 4588), negotiated with libwebrtc's NACK pair.
pub const VIDEO_RTX_SSRC: u32 = 0x5A7E_111F;
/// The video stream's RTX payload type (`video/rtx`, `apt` = [`VIDEO_PAYLOAD_TYPE`]).
pub const VIDEO_RTX_PAYLOAD_TYPE: u8 = 97;
/// The video stream's FlexFEC-03 repair SSRC (`a=ssrc-group:FEC-FR`), when FEC is on.
pub const VIDEO_FEC_SSRC: u32 = 0x5A7E_1FEC;
/// The repair stream's RTP payload type (`video/flexfec-03`).
pub const VIDEO_FEC_PAYLOAD_TYPE: u8 = 98;
/// The id of the transport-wide sequence number header extension on every stream.
pub const TRANSPORT_CC_EXTENSION_ID: u8 = 5;
/// The id of the playout-delay header extension on the video stream (what Chromium 156 offers
/// is 5 and 6 in some order; any id 1 to 14 serves a one-byte header).
pub const PLAYOUT_DELAY_EXTENSION_ID: u8 = 6;
/// The receiver's SSRC (the sender of its PLIs).
pub const RECEIVER_SSRC: u32 = 0x0000_0E11;
/// At most this many NACKs per missing packet: libwebrtc's `kMaxNackRetries` = 10
/// (libwebrtc `modules/video_coding/nack_requester.cc`).
pub const MAX_NACKS_PER_PACKET: u16 = 10;

/// What a video packet's payload says about its frame (for key-frame flushing in the pacer and
/// the loss protection): the synthetic codec's payload header, or for real VP8 the payload
/// descriptor (a frame's first packet has S = 1 and PID = 0, and there the VP8 header's P bit
/// tells a key frame; RFC 7741 section 4). The two cannot be confused: the synthetic header
/// sets a bit VP8 reserves.
pub fn frame_info(rtp: &rtc_rtp::Packet) -> FrameInfo {
    if let Ok(header) = PayloadHeader::read(&rtp.payload) {
        return FrameInfo {
            key_frame: header.key_frame,
            first_packet_of_frame: header.index == 0,
        };
    }
    match descriptor::parse(&rtp.payload) {
        Ok(d) if d.starts_frame() => FrameInfo {
            key_frame: d.key_frame.unwrap_or(false),
            first_packet_of_frame: true,
        },
        _ => FrameInfo::default(),
    }
}

/// A media packet as RTP (version 2, no CSRCs or extensions: the chain adds the transport-wide
/// sequence number).
pub fn rtp_of(packet: MediaPacket) -> rtc_rtp::Packet {
    rtc_rtp::Packet {
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
    }
}

fn transport_cc() -> RTCPFeedback {
    RTCPFeedback {
        typ: "transport-cc".to_owned(),
        parameter: String::new(),
    }
}

/// The video stream as the simulated call negotiates it (VP8 on [`VIDEO_PAYLOAD_TYPE`],
/// transport-cc and NACK feedback, the transport-wide sequence number as header extension
/// [`TRANSPORT_CC_EXTENSION_ID`]); with `rtx` it names its RTX stream, with `fec` its repair
/// stream.
pub fn video_stream(rtx: bool, fec: bool) -> StreamInfo {
    StreamInfo {
        ssrc: VIDEO_SSRC,
        ssrc_rtx: rtx.then_some(VIDEO_RTX_SSRC),
        payload_type_rtx: rtx.then_some(VIDEO_RTX_PAYLOAD_TYPE),
        ssrc_fec: fec.then_some(VIDEO_FEC_SSRC),
        payload_type_fec: fec.then_some(VIDEO_FEC_PAYLOAD_TYPE),
        clock_rate: 90_000,
        mime_type: "video/VP8".to_owned(),
        payload_type: VIDEO_PAYLOAD_TYPE,
        rtcp_feedback: vec![
            transport_cc(),
            RTCPFeedback {
                typ: "nack".to_owned(),
                parameter: String::new(),
            },
        ],
        rtp_header_extensions: vec![
            RTPHeaderExtension {
                uri: TRANSPORT_CC_URI.to_owned(),
                id: u16::from(TRANSPORT_CC_EXTENSION_ID),
            },
            RTPHeaderExtension {
                uri: PLAYOUT_DELAY_URI.to_owned(),
                id: u16::from(PLAYOUT_DELAY_EXTENSION_ID),
            },
        ],
        ..Default::default()
    }
}

/// The minimum playout delay a packet's playout-delay extension (header extension `id`) asks
/// for; `None` without the extension, or when it cannot be read (a receiver ignores a malformed
/// extension, as libwebrtc's parser does).
pub fn playout_minimum(header: &rtc_rtp::Header, id: u8) -> Option<std::time::Duration> {
    use rtc_shared::marshal::Unmarshal;
    let mut data = header.get_extension(id)?;
    let extension =
        rtc_rtp::extension::playout_delay_extension::PlayoutDelayExtension::unmarshal(&mut data)
            .ok()?;
    Some(pacer::playout::UNIT * u32::from(extension.min_delay))
}

//! The streams a bound video stream implies on the sender: its RTX stream (RFC 4588), its
//! FlexFEC-03 repair stream, and the padding stream, each bound on its own so that the TWCC
//! sender numbers their packets and the congestion controller and the TWCC receiver record
//! them.

use rtc_interceptor::{RTCPFeedback, StreamInfo};

fn transport_cc() -> RTCPFeedback {
    RTCPFeedback {
        typ: "transport-cc".to_owned(),
        parameter: String::new(),
    }
}

/// The RTX stream a video stream names (none if it names none): `video/rtx` with `apt` = the
/// video payload type, the video stream's header extensions, transport-cc feedback and no NACK
/// of its own.
pub fn rtx_stream(video: &StreamInfo) -> Option<StreamInfo> {
    let (ssrc, payload_type) = (video.ssrc_rtx?, video.payload_type_rtx?);
    Some(StreamInfo {
        ssrc,
        clock_rate: video.clock_rate,
        mime_type: "video/rtx".to_owned(),
        payload_type,
        sdp_fmtp_line: format!("apt={}", video.payload_type),
        rtcp_feedback: vec![transport_cc()],
        rtp_header_extensions: video.rtp_header_extensions.clone(),
        ..Default::default()
    })
}

/// The repair stream a video stream names (none if it names none), bound on its own as the RTX
/// stream is: `video/flexfec-03` with the video stream's header extensions and transport-cc
/// feedback. Bound before the video stream, so that the pacer classes it as FEC.
pub fn fec_stream(video: &StreamInfo) -> Option<StreamInfo> {
    let (ssrc, payload_type) = (video.ssrc_fec?, video.payload_type_fec?);
    Some(StreamInfo {
        ssrc,
        clock_rate: video.clock_rate,
        mime_type: "video/flexfec-03".to_owned(),
        payload_type,
        sdp_fmtp_line: "repair-window=10000000".to_owned(),
        rtcp_feedback: vec![transport_cc()],
        rtp_header_extensions: video.rtp_header_extensions.clone(),
        ..Default::default()
    })
}

/// The padding stream `ssrc` that carries GoogCC's probes and the congestion window's
/// keep-alives, in `payload_type`: the video stream's codec and header extensions with
/// transport-cc feedback, so that its packets are numbered and acknowledged; the receiver drops
/// them before its media receiver.
pub fn padding_stream(video: &StreamInfo, ssrc: u32, payload_type: u8) -> StreamInfo {
    StreamInfo {
        ssrc,
        clock_rate: video.clock_rate,
        mime_type: video.mime_type.clone(),
        payload_type,
        rtcp_feedback: vec![transport_cc()],
        rtp_header_extensions: video.rtp_header_extensions.clone(),
        ..Default::default()
    }
}

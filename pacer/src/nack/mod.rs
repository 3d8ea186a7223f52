//! The send side of libwebrtc's loss recovery: the NACK responder with its packet history and
//! resend rules, the tap that tells it when a retransmission really left, and RTX (RFC 4588).
//!
//! webrtc-rs 0.21's stock responder resends every request, even of a packet whose previous
//! retransmission still waits in the pacer, which turns one congestion event into a
//! retransmission storm. [`NackResponder`] is libwebrtc's `RtpPacketHistory` and
//! `RTPSender::ReSendPacket` (reference PART 5) as a webrtc-rs interceptor (sans-I/O, `Instant`s
//! handed in, no clock read): a history kept max(1000 ms, 3 x RTT), no resend of a packet whose
//! retransmission is still in the pacer or left less than one RTT (+ 5 ms) ago, a retransmission
//! byte budget (the target rate over 500 ms), retransmissions marked `Attribute::Retransmission`
//! and sent on the RTX stream when one is negotiated. A [`RetransmissionTap`] below the pacer
//! tells it when a retransmission really left.
//!
//! Slots: the responder at `Slot::NackResponder` (4000), its tap at [`TAP_SLOT`] (2500, between
//! the TWCC sender and the pacer, so it sees packets as the pacer releases them). The receive
//! side (the NACK generator and the RTX receiver) belongs to the receiving application; the
//! helpers it shares with this side, [`supports_nack`] and [`unwrap_seq`], are public.

mod completion;
mod responder;
mod rtx;
mod sequence_map;

pub use completion::{FrameLateness, MIN_REFERENCE_FRAMES, REFERENCE_FRAMES};
pub use responder::{
    CULLING_DELAY_FACTOR, DEFAULT_RTT, DEFAULT_TARGET_BPS, HISTORY_TARGET_PACKETS,
    MAX_HISTORY_PACKETS, MIN_PACKET_DURATION, MIN_PACKET_DURATION_RTT, MIN_REPAIR_DELAY_SAMPLES,
    NackResponder, NackResponderConfig, NackResponderHandle, NackResponderStats,
    REPAIR_DELAY_SAMPLES, RESEND_RTT_MARGIN, RETRANSMIT_BUDGET_SHARE, RETRANSMIT_WINDOW,
    RetransmissionTap,
};
pub use rtx::{rtx_decapsulate, rtx_encapsulate};

use rtc_interceptor::{Slot, StreamInfo};

/// Where [`RetransmissionTap`] sits: between `Slot::TwccSender` (2000) and `Slot::Pacer` (3000),
/// so that it sees every packet at the instant the pacer releases it.
pub const TAP_SLOT: Slot = Slot::Custom(2500);

/// Whether a stream negotiated generic NACK feedback (`a=rtcp-fb:<pt> nack`), as webrtc-rs's
/// own check.
pub fn supports_nack(info: &StreamInfo) -> bool {
    info.rtcp_feedback
        .iter()
        .any(|fb| fb.typ == "nack" && fb.parameter.is_empty())
}

/// `seq` unwrapped against `reference` (an already-unwrapped sequence number): the unwrapped
/// value closest to `reference`.
pub fn unwrap_seq(reference: i64, seq: u16) -> i64 {
    // Truncation intended: the low 16 bits of the reference.
    let delta = seq.wrapping_sub(reference as u16) as i16;
    reference + i64::from(delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_unwrap_across_the_wrap_both_ways() {
        assert_eq!(unwrap_seq(65_535, 0), 65_536);
        assert_eq!(unwrap_seq(65_536, 65_535), 65_535);
        assert_eq!(unwrap_seq(10, 5), 5);
        assert_eq!(unwrap_seq(131_072 + 3, 65_534), 131_070);
    }
}

//! Loss recovery like libwebrtc's: an RTT-aware NACK generator and a NACK responder
//! with limits, and RTX (RFC 4588).
//!
//! webrtc-rs 0.21's stock pair turns one congestion event into a retransmission storm: its
//! generator re-requests every missing packet every 100 ms without limit or RTT awareness, and
//! its responder resends every request, even of a packet whose previous retransmission still
//! waits in the pacer. This module is the libwebrtc behaviour (reference PART 5), as webrtc-rs
//! interceptors (sans-I/O, `Instant`s handed in, no clock read):
//!
//! - [`NackGenerator`] for `Slot::NackGenerator`: libwebrtc's `NackRequester`. A missing packet is
//!   NACKed once the reordering tolerance has passed, re-NACKed only after one RTT since its last
//!   NACK, given up after 10 tries; entries older than 10 000 sequence numbers are dropped and an
//!   overflowing list (1000) is cleared with a key-frame request. Its [`NackGeneratorHandle`]
//!   publishes the counters and the give-ups, and takes an RTT from outside.
//! - [`NackResponder`] for `Slot::NackResponder`: libwebrtc's `RtpPacketHistory` and
//!   `RTPSender::ReSendPacket`. A history kept max(1000 ms, 3 x RTT), no resend of a packet whose
//!   retransmission is still in the pacer or left less than one RTT (+ 5 ms) ago, a retransmission
//!   byte budget (the target rate over 500 ms), retransmissions marked
//!   `Attribute::Retransmission` and sent on the RTX stream when one is negotiated. A
//!   [`RetransmissionTap`] below the pacer tells it when a retransmission really left.
//! - [`RtxReceiver`] for the receive side: turns an RTX packet back into the original one (and
//!   marks it `Attribute::Retransmission`) before the generator and the application see it.
//!
//! Slots: the responder at `Slot::NackResponder` (4000), its tap at [`TAP_SLOT`] (2500, between
//! the TWCC sender and the pacer, so it sees packets as the pacer releases them), the RTX
//! receiver at [`RTX_RECEIVER_SLOT`] (6500, just before the generator at 7000).

pub mod generator;
pub mod responder;
pub mod rtx;
mod sequence_map;

pub use generator::{NackGenerator, NackGeneratorConfig, NackGeneratorHandle, NackGeneratorStats};
pub use responder::{
    NackResponder, NackResponderConfig, NackResponderHandle, NackResponderStats, RetransmissionTap,
};
pub use rtx::{RtxReceiver, rtx_decapsulate, rtx_encapsulate};

use rtc_interceptor::{Slot, StreamInfo};

/// Where [`RetransmissionTap`] sits: between `Slot::TwccSender` (2000) and `Slot::Pacer` (3000),
/// so that it sees every packet at the instant the pacer releases it.
pub const TAP_SLOT: Slot = Slot::Custom(2500);

/// Where [`RtxReceiver`] sits: between `Slot::FecDecoder` (6000) and `Slot::NackGenerator`
/// (7000), so the generator and everything after it see the restored packet; the TWCC receiver
/// (8000) records it with the transport-wide sequence number the RTX packet carried.
pub const RTX_RECEIVER_SLOT: Slot = Slot::Custom(6500);

/// Whether a stream negotiated generic NACK feedback (`a=rtcp-fb:<pt> nack`), as webrtc-rs's
/// own check.
pub(crate) fn supports_nack(info: &StreamInfo) -> bool {
    info.rtcp_feedback
        .iter()
        .any(|fb| fb.typ == "nack" && fb.parameter.is_empty())
}

/// `seq` unwrapped against `reference` (an already-unwrapped sequence number): the unwrapped
/// value closest to `reference`.
pub(crate) fn unwrap_seq(reference: i64, seq: u16) -> i64 {
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

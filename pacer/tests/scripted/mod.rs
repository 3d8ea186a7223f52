//! Scripted input for tests that drive the pacer by hand: RTP packets of a given stream and
//! size, handed to the chain at a given instant.

use rtc_interceptor::{AttributedPacket, Packet, TaggedPacket};
use rtc_shared::TransportContext;
use std::time::Instant;

/// An RTP packet of `ssrc` with `payload` zero bytes, handed to the chain at `now`.
pub fn rtp(now: Instant, ssrc: u32, sequence_number: u16, payload: usize) -> TaggedPacket {
    TaggedPacket {
        now,
        transport: TransportContext::default(),
        message: AttributedPacket::new(Packet::Rtp(rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                ssrc,
                sequence_number,
                ..Default::default()
            },
            payload: vec![0; payload].into(),
        })),
    }
}

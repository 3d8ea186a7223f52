//! What a receiver must do to a media packet before FlexFEC recovery can use it.
//!
//! A repair packet is the XOR of its media packets as the encoder saw them, header extensions
//! included. At `Slot::FecEncoder` a packet does not yet carry the transport-wide sequence number:
//! the TWCC sender adds that extension below, at `Slot::TwccSender`, when the pacer releases it.
//! The packet that arrives therefore differs from the one that was protected, and XORing it back
//! out of a repair packet rebuilds garbage. Removing the extension first restores the protected
//! bytes. (libwebrtc does not meet this: it generates FEC after the pacer, in
//! `RtpSenderEgress::SendPacket`, once the transport-wide sequence number is set; webrtc-rs
//! places its FEC encoder above the pacer.)

/// `packet` without the header extension `id` (for example the transport-wide-cc extension), as
/// the FEC encoder saw it; with no extensions left, the extension bit is cleared too. A packet
/// without that extension comes back unchanged.
pub fn without_header_extension(packet: &rtc_rtp::Packet, id: u8) -> rtc_rtp::Packet {
    let mut packet = packet.clone();
    if packet.header.get_extension(id).is_some() {
        let _ = packet.header.del_extension(id);
        if packet.header.extensions.is_empty() {
            packet.header.extension = false;
            packet.header.extension_profile = 0;
            packet.header.extensions_padding = 0;
        }
    }
    packet
}

/// The header extensions libwebrtc treats as mutable: set by the pacer or on the way, so a FlexFEC
/// sender and receiver zero their values before XORing (`RtpPacket::ZeroMutableExtensions`, used
/// by `FlexfecReceiver::AddReceivedPacket` on every media packet it keeps): the transport-wide
/// sequence number (both drafts), the transmission time offset and the absolute send time.
pub const MUTABLE_EXTENSION_URIS: [&str; 4] = [
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
    "http://www.webrtc.org/experiments/rtp-hdrext/transport-wide-cc-02",
    "urn:ietf:params:rtp-hdrext:toffset",
    "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time",
];

/// `packet` with the values of the header extensions `ids` set to zeros of the same length (the
/// layout unchanged), as libwebrtc's `RtpPacket::ZeroMutableExtensions` leaves a packet before it
/// enters FlexFEC encoding or decoding. Extensions not present are left alone.
pub fn with_zeroed_extensions(packet: &rtc_rtp::Packet, ids: &[u8]) -> rtc_rtp::Packet {
    /// The longest extension value RFC 8285 allows (two-byte form), as static zeros: zeroing
    /// borrows them instead of allocating for every packet.
    static ZEROS: [u8; 255] = [0; 255];
    let mut packet = packet.clone();
    for &id in ids {
        if let Some(value) = packet.header.get_extension(id) {
            let zeros = match ZEROS.get(..value.len()) {
                Some(zeros) => zeros.into(),
                None => vec![0; value.len()].into(),
            };
            let _ = packet.header.set_extension(id, zeros);
        }
    }
    packet
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtc_shared::marshal::{Marshal, MarshalSize};

    fn bytes(packet: &rtc_rtp::Packet) -> Vec<u8> {
        let mut buffer = vec![0; packet.marshal_size()];
        let written = packet.marshal_to(&mut buffer).expect("marshals");
        buffer.truncate(written);
        buffer
    }

    #[test]
    fn removing_the_only_extension_restores_the_packet_without_it() {
        let original = rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                sequence_number: 7,
                ssrc: 9,
                ..Default::default()
            },
            payload: vec![1, 2, 3].into(),
        };
        let mut sent = original.clone();
        sent.header
            .set_extension(5, vec![0x12, 0x34].into())
            .expect("a one-byte extension");
        assert_ne!(bytes(&sent), bytes(&original));
        assert_eq!(bytes(&without_header_extension(&sent, 5)), bytes(&original));
        assert_eq!(
            bytes(&without_header_extension(&original, 5)),
            bytes(&original)
        );
    }

    #[test]
    fn other_extensions_stay() {
        let mut original = rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                ..Default::default()
            },
            payload: vec![1].into(),
        };
        original
            .header
            .set_extension(3, vec![0xAA].into())
            .expect("mid");
        let mut sent = original.clone();
        sent.header
            .set_extension(5, vec![0x12, 0x34].into())
            .expect("transport-cc");
        assert_eq!(bytes(&without_header_extension(&sent, 5)), bytes(&original));
    }
}

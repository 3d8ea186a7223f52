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

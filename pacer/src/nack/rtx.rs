//! RTX (RFC 4588): retransmissions on their own SSRC, payload type and sequence space.
//!
//! An RTX packet carries the original packet's payload prefixed by its 2-byte original sequence
//! number (OSN, big-endian), with the RTX SSRC and payload type (`video/rtx` with
//! `apt=<original payload type>`), the original timestamp and marker, and the next number of the
//! RTX stream's own sequence. [`rtx_encapsulate`] builds one on the sender, [`rtx_decapsulate`]
//! restores the original on the receiver.

/// The RTX packet for `original`: RFC 4588 section 4 (OSN prefix, RTX SSRC, RTX payload type,
/// `rtx_sequence_number` from the RTX stream's own sequence), with the original's header
/// extensions, as libwebrtc's `RtpSender::BuildRtxPacket` copies them: the packet a receiver
/// restores must be the one the FlexFEC sender protected (the playout-delay extension among
/// them), or XORing it out of a repair packet rebuilds another packet wrongly. The stored original
/// has no transport-wide sequence number yet: the TWCC sender, below the responder, numbers the
/// RTX packet itself when the RTX stream is bound there.
pub fn rtx_encapsulate(
    original: &rtc_rtp::Packet,
    rtx_ssrc: u32,
    rtx_payload_type: u8,
    rtx_sequence_number: u16,
) -> rtc_rtp::Packet {
    let mut payload = Vec::with_capacity(2 + original.payload.len());
    payload.extend_from_slice(&original.header.sequence_number.to_be_bytes());
    payload.extend_from_slice(&original.payload);
    rtc_rtp::Packet {
        header: rtc_rtp::Header {
            version: 2,
            ssrc: rtx_ssrc,
            payload_type: rtx_payload_type,
            sequence_number: rtx_sequence_number,
            timestamp: original.header.timestamp,
            marker: original.header.marker,
            extension: original.header.extension,
            extension_profile: original.header.extension_profile,
            extensions: original.header.extensions.clone(),
            extensions_padding: original.header.extensions_padding,
            ..Default::default()
        },
        payload: payload.into(),
    }
}

/// The original packet inside an RTX packet: the OSN becomes the sequence number, `media_ssrc`
/// and `media_payload_type` replace the RTX ones, the header extensions (the transport-wide
/// sequence number among them) are kept. `None` when the payload is shorter than the OSN.
pub fn rtx_decapsulate(
    rtx: &rtc_rtp::Packet,
    media_ssrc: u32,
    media_payload_type: u8,
) -> Option<rtc_rtp::Packet> {
    let osn = rtx.payload.get(..2)?;
    let mut header = rtx.header.clone();
    header.ssrc = media_ssrc;
    header.payload_type = media_payload_type;
    header.sequence_number = u16::from_be_bytes([osn[0], osn[1]]);
    Some(rtc_rtp::Packet {
        header,
        payload: rtx.payload.slice(2..),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn original(seq: u16) -> rtc_rtp::Packet {
        rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                ssrc: 1,
                payload_type: 96,
                sequence_number: seq,
                timestamp: 9000,
                marker: true,
                ..Default::default()
            },
            payload: vec![7u8, 8, 9].into(),
        }
    }

    #[test]
    fn an_rtx_packet_carries_the_osn_first_and_restores_to_the_original() {
        let rtx = rtx_encapsulate(&original(0xABCD), 2, 97, 5);
        assert_eq!(rtx.header.ssrc, 2);
        assert_eq!(rtx.header.payload_type, 97);
        assert_eq!(rtx.header.sequence_number, 5);
        assert_eq!(rtx.header.timestamp, 9000);
        assert!(rtx.header.marker);
        assert_eq!(&rtx.payload[..], &[0xAB, 0xCD, 7, 8, 9]);
        let back = rtx_decapsulate(&rtx, 1, 96).expect("an OSN");
        assert_eq!(back, original(0xABCD));
        let mut short = rtx.clone();
        short.payload = vec![1u8].into();
        assert!(rtx_decapsulate(&short, 1, 96).is_none());
    }

    #[test]
    fn the_original_s_header_extensions_travel_in_the_rtx_packet_and_come_back() {
        let mut with_extension = original(7);
        with_extension
            .header
            .set_extension(6, vec![0x00, 0x0A, 0x3E].into())
            .expect("a one-byte extension");
        let rtx = rtx_encapsulate(&with_extension, 2, 97, 5);
        assert_eq!(
            rtx.header.get_extension(6).as_deref(),
            Some(&[0x00, 0x0A, 0x3E][..])
        );
        let back = rtx_decapsulate(&rtx, 1, 96).expect("an OSN");
        assert_eq!(back, with_extension);
    }
}

//! Which media packets a FlexFEC-03 repair packet protects, read off its header, so that the
//! sender can tell from transport feedback when the receiver could rebuild a lost packet
//! (`crate::nack`'s frame completion).
//!
//! The header (draft-ietf-payload-flexible-fec-scheme-03, section 4.2, with the single protected
//! stream of the flexible mask that libwebrtc and webrtc-rs's `FlexFec03Encoder` write): after
//! 8 bytes of recovery fields, the SSRC count (1) and 3 reserved bytes, the protected SSRC
//! (bytes 12-15), the base sequence number (16-17) and the mask. The mask is 15 bits after a
//! k-bit, then, while the k-bit is 0, 31 more bits after a k-bit, then 63 more after one: bit `i`
//! set means packet `base + i` is protected, 109 packets at most.

/// The protected SSRC, the base sequence number and the mask (bit `i`: `base + i` protected) of
/// the FlexFEC-03 repair `payload`; `None` for a payload too short for the mask it declares or
/// that protects more than one stream.
pub fn protected_packets(payload: &[u8]) -> Option<(u32, u16, u128)> {
    let header = payload.get(..20)?;
    if header[8] != 1 {
        return None;
    }
    let ssrc = u32::from_be_bytes([header[12], header[13], header[14], header[15]]);
    let base = u16::from_be_bytes([header[16], header[17]]);
    let mut mask = 0u128;
    let first = u16::from_be_bytes([header[18] & 0x7f, header[19]]);
    for bit in 0..15 {
        if first & (1 << (14 - bit)) != 0 {
            mask |= 1 << bit;
        }
    }
    if header[18] & 0x80 != 0 {
        return Some((ssrc, base, mask));
    }
    let second = payload.get(20..24)?;
    let k = second[0] & 0x80 != 0;
    let second = u32::from_be_bytes([second[0] & 0x7f, second[1], second[2], second[3]]);
    for bit in 0..31 {
        if second & (1 << (30 - bit)) != 0 {
            mask |= 1 << (15 + bit);
        }
    }
    if k {
        return Some((ssrc, base, mask));
    }
    let third = payload.get(24..32)?;
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(third);
    bytes[0] &= 0x7f;
    let third = u64::from_be_bytes(bytes);
    for bit in 0..63 {
        if third & (1 << (62 - bit)) != 0 {
            mask |= 1 << (46 + bit);
        }
    }
    Some((ssrc, base, mask))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtc_interceptor::FlexFec03Encoder;

    fn media(seq: u16) -> rtc_rtp::Packet {
        rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                ssrc: 0x1234,
                payload_type: 96,
                sequence_number: seq,
                ..Default::default()
            },
            payload: vec![seq as u8; 100].into(),
        }
    }

    #[test]
    fn the_mask_read_back_names_the_packets_the_encoder_protected() {
        for count in [3usize, 15, 16, 46, 47, 100] {
            let packets: Vec<_> = (0..count as u16)
                .map(|i| media(65_500u16.wrapping_add(i)))
                .collect();
            let mut encoder = FlexFec03Encoder::new(100, 0x9999);
            let repair = encoder.encode(&packets, 1);
            let (ssrc, base, mask) = protected_packets(&repair[0].payload).unwrap();
            assert_eq!((ssrc, base), (0x1234, 65_500), "{count} packets");
            let named: Vec<u16> = (0..128)
                .filter(|&bit| mask & (1u128 << bit) != 0)
                .map(|bit| base.wrapping_add(bit as u16))
                .collect();
            let sent: Vec<u16> = packets.iter().map(|p| p.header.sequence_number).collect();
            assert_eq!(named, sent, "{count} packets");
        }
    }

    #[test]
    fn a_short_or_multi_stream_header_is_refused() {
        assert_eq!(protected_packets(&[0; 19]), None);
        let mut header = [0u8; 20];
        header[8] = 2;
        assert_eq!(protected_packets(&header), None);
        header[8] = 1;
        assert_eq!(
            protected_packets(&header),
            None,
            "the mask continues past the end"
        );
        header[18] = 0x80 | 0x40;
        assert_eq!(protected_packets(&header), Some((0, 0, 1)));
    }
}

//! Shows webrtc-rs's FlexFEC-03 decoder only the packets that can change what it rebuilds.
//!
//! `FlexFec03Decoder` (rtc-interceptor 0.21, `flexfec/draft03/decoder.rs`) keeps every media
//! packet it is offered in a vector it re-sorts and trims on each insert, and copies the ones a
//! repair packet names when that repair packet arrives. Offering it every media packet made it a
//! quarter of a simulated call's time, while it only ever rebuilds a packet for a repair packet
//! that names one that has not arrived. [`GatedDecoder`] therefore holds media packets back and
//! hands them over only when such a repair packet comes, then feeds the decoder every media
//! packet until the stream has moved a decoder window past everything that repair packet names
//! (a packet that late would have left the decoder's window anyway). What the decoder rebuilds is
//! the same as when it sees everything (docs/architecture.md, "The call engine": the sim's
//! telemetry was checked byte for byte against the ungated decoder).

use pacer::protection::with_zeroed_extensions;
use rtc_interceptor::FlexFec03Decoder;
use rtc_rtp::Packet;
use std::collections::VecDeque;

/// How many media packets the decoder keeps to rebuild from: rtc-interceptor 0.21's
/// `RETAINED_RECOVERED_PACKETS` (`flexfec/draft03/decoder.rs`). Held-back packets beyond it would
/// have been trimmed by the decoder before any repair packet could use them.
const DECODER_WINDOW: u16 = 192;

/// A `FlexFec03Decoder` that sees media packets only while a repair packet may need them.
pub(super) struct GatedDecoder {
    decoder: FlexFec03Decoder,
    /// The ids of the media stream's mutable header extensions, zeroed before a media packet is
    /// decoded (as the sender protected it); held-back packets keep theirs until then.
    mutable_extensions: Vec<u8>,
    /// Media packets not yet offered to the decoder, oldest first, at most [`DECODER_WINDOW`].
    held_back: VecDeque<Packet>,
    /// While the highest arrived sequence number has not passed this one, every media packet
    /// goes to the decoder at once.
    live_until: Option<u16>,
}

impl GatedDecoder {
    /// A decoder for `media_ssrc`, protected by the repair stream on `repair_ssrc`, whose
    /// sender zeroed the header extensions `mutable_extensions` before protecting a packet.
    pub(super) fn new(repair_ssrc: u32, media_ssrc: u32, mutable_extensions: Vec<u8>) -> Self {
        Self {
            decoder: FlexFec03Decoder::new(repair_ssrc, media_ssrc),
            mutable_extensions,
            held_back: VecDeque::new(),
            live_until: None,
        }
    }

    /// A media packet arrived; `highest` is the highest sequence number arrived so far, this one
    /// included. Returns what it made recoverable.
    pub(super) fn media(&mut self, packet: &Packet, highest: u16) -> Vec<Packet> {
        match self.live_until {
            Some(until) if !is_newer(until, highest) => self
                .decoder
                .decode(with_zeroed_extensions(packet, &self.mutable_extensions)),
            _ => {
                self.live_until = None;
                if self.held_back.len() >= usize::from(DECODER_WINDOW) {
                    self.held_back.pop_front();
                }
                self.held_back.push_back(packet.clone());
                Vec::new()
            }
        }
    }

    /// A repair packet arrived; `missing` says whether a media sequence number has neither
    /// arrived nor been rebuilt. Returns what it made recoverable.
    pub(super) fn repair(&mut self, packet: Packet, missing: impl Fn(u16) -> bool) -> Vec<Packet> {
        let protected = protected_sequence_numbers(&packet.payload);
        let newest = match &protected {
            Some(numbers) if !numbers.iter().any(|&s| missing(s)) => return Vec::new(),
            Some(numbers) => numbers
                .iter()
                .copied()
                .reduce(|a, b| if is_newer(a, b) { b } else { a }),
            // Not a repair header this gate reads: the decoder judges it.
            None => None,
        };
        let mut rebuilt = Vec::new();
        for media in self.held_back.drain(..) {
            let media = with_zeroed_extensions(&media, &self.mutable_extensions);
            rebuilt.extend(self.decoder.decode(media));
        }
        if let Some(newest) = newest {
            let until = newest.wrapping_add(DECODER_WINDOW);
            self.live_until = Some(match self.live_until {
                Some(current) if is_newer(until, current) => current,
                _ => until,
            });
        }
        rebuilt.extend(self.decoder.decode(packet));
        rebuilt
    }
}

/// The media sequence numbers a FlexFEC-03 repair payload protects, read from its packet masks
/// (draft-ietf-payload-flexible-fec-scheme-03 section 4.2.2.1, flexible mask: a 15-bit mask, then
/// 31 and 63 more bits while the k-bit is clear), or `None` if the header is not one the
/// decoder would use.
fn protected_sequence_numbers(payload: &[u8]) -> Option<Vec<u16>> {
    /// The masks' widths and where each starts: (byte offset, bytes, bits, offset from the base).
    const MASKS: [(usize, usize, u32, u16); 3] = [(18, 2, 15, 0), (20, 4, 31, 15), (24, 8, 63, 46)];
    let header = payload.get(..20)?;
    // R and F clear (flexible mask, no retransmission), exactly one protected SSRC.
    if header[0] & 0xC0 != 0 || header[8] != 1 {
        return None;
    }
    let base = u16::from_be_bytes([header[16], header[17]]);
    let mut numbers = Vec::new();
    for (offset, bytes, bits, from_base) in MASKS {
        let field = payload.get(offset..offset + bytes)?;
        let mut word = [0u8; 8];
        word[8 - bytes..].copy_from_slice(field);
        let mask = u64::from_be_bytes(word) & ((1u64 << bits) - 1);
        for bit in 0..bits {
            if (mask >> (bits - 1 - bit)) & 1 == 1 {
                numbers.push(base.wrapping_add(from_base).wrapping_add(bit as u16));
            }
        }
        if field[0] & 0x80 != 0 {
            return Some(numbers);
        }
    }
    None
}

/// Whether `value` is later than `previous` in the wrapping 16-bit sequence space (RFC 3550
/// section A.1's half-space rule).
pub(super) fn is_newer(previous: u16, value: u16) -> bool {
    let forward = value.wrapping_sub(previous);
    forward != 0 && forward < 0x8000
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repair payload with the given masks after a 16-byte header naming `base`.
    fn repair_payload(base: u16, masks: &[u8]) -> Vec<u8> {
        let mut payload = vec![0u8; 16];
        payload[8] = 1;
        payload.extend_from_slice(&base.to_be_bytes());
        payload.extend_from_slice(masks);
        payload.extend_from_slice(&[0xAA; 8]);
        payload
    }

    #[test]
    fn the_short_mask_names_its_bits_from_the_base() {
        // k-bit set, then bits 0 and 14 of the 15-bit mask.
        let payload = repair_payload(100, &[0x80 | 0x40, 0x01]);
        assert_eq!(protected_sequence_numbers(&payload), Some(vec![100, 114]));
    }

    #[test]
    fn the_second_mask_continues_fifteen_past_the_base_and_wraps() {
        // First mask: k clear, bit 0. Second: k set, its first bit (base + 15).
        let payload = repair_payload(65_530, &[0x40, 0x00, 0x80 | 0x40, 0, 0, 0]);
        assert_eq!(
            protected_sequence_numbers(&payload),
            Some(vec![65_530, 65_530u16.wrapping_add(15)])
        );
    }

    #[test]
    fn headers_the_decoder_refuses_are_not_read() {
        let mut retransmission = repair_payload(1, &[0xC0, 0x00]);
        retransmission[0] = 0x80;
        assert_eq!(protected_sequence_numbers(&retransmission), None);
        let mut two_ssrcs = repair_payload(1, &[0xC0, 0x00]);
        two_ssrcs[8] = 2;
        assert_eq!(protected_sequence_numbers(&two_ssrcs), None);
        // No k-bit anywhere: the mask list never ends.
        let unterminated = repair_payload(1, &[0x40, 0, 0x40, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(protected_sequence_numbers(&unterminated), None);
        assert_eq!(protected_sequence_numbers(&[0u8; 19]), None);
    }

    #[test]
    fn newer_follows_the_half_space_rule() {
        assert!(is_newer(10, 11));
        assert!(is_newer(65_535, 2));
        assert!(!is_newer(11, 10));
        assert!(!is_newer(7, 7));
    }
}

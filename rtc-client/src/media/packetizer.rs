//! The RTP packetizer of the synthetic codec: splits an [`EncodedFrame`] into packets whose
//! payloads start with a [`PayloadHeader`].
//!
//! A frame of `size` bytes (headers included, as [`PayloadHeader::frame_bytes`] counts them)
//! becomes `ceil(size / max_payload)` packets whose payloads are split about equally, larger ones
//! first, as libwebrtc's `RtpPacketizer::SplitAboutEqually` does: equal packets pace more evenly
//! than full packets plus a runt, and no payload is ever shorter than the header. Every packet
//! carries the frame's 90 kHz timestamp; the last one carries the marker bit (RFC 3550 §5.1,
//! RFC 7741 §4.1: the marker is set on a frame's last packet). Sequence numbers are consecutive
//! across frames and wrap after 65535.
//!
//! The packets are plain structs, not `rtc_rtp` types, so the media engine has no wire-format
//! dependency; a real call's transport copies the fields into its RTP header.

use super::encoder::EncodedFrame;
use super::payload::{HEADER_LEN, LAYERED_HEADER_LEN, PayloadHeader};
use crate::link::Time;

/// The default largest payload, bytes (about 1200: libwebrtc keeps RTP packets near 1200 bytes
/// so that they fit a 1280-byte IPv6 minimum MTU with SRTP, UDP, IP and TURN overheads).
pub const DEFAULT_MAX_PAYLOAD: usize = 1200;

/// The smallest `max_payload` accepted: a header and one filler byte.
pub const MIN_MAX_PAYLOAD: usize = HEADER_LEN + 1;

/// One RTP packet of the synthetic video stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaPacket {
    /// The stream's synchronization source.
    pub ssrc: u32,
    /// The RTP payload type (7 bits; higher bits are cleared).
    pub payload_type: u8,
    /// The RTP sequence number (wrapping).
    pub sequence_number: u16,
    /// The frame's 90 kHz RTP timestamp.
    pub timestamp: u32,
    /// Set on the frame's last packet.
    pub marker: bool,
    /// The payload: a [`PayloadHeader`] (written with [`PayloadHeader::write`]) then zero
    /// filler, `HEADER_LEN..=max_payload` bytes in all.
    pub payload: Vec<u8>,
    /// The frame's id (also in the payload header).
    pub frame_id: u32,
    /// Whether the frame is a key frame (also in the payload header).
    pub key_frame: bool,
    /// The frame's capture instant (also in the payload header), for sender-side statistics.
    pub capture: Time,
}

/// Splits frames into [`MediaPacket`]s. See the module documentation.
#[derive(Debug, Clone)]
pub struct Packetizer {
    ssrc: u32,
    payload_type: u8,
    max_payload: usize,
    next_sequence: u16,
    packets: u64,
}

impl Packetizer {
    /// A packetizer for stream `ssrc` with `payload_type` (masked to 7 bits), payloads of at
    /// most `max_payload` bytes (raised to [`MIN_MAX_PAYLOAD`] if smaller), and the first
    /// sequence number `initial_sequence` (RFC 3550 §5.1 recommends a random one).
    pub fn new(ssrc: u32, payload_type: u8, max_payload: usize, initial_sequence: u16) -> Self {
        Self {
            ssrc,
            payload_type: payload_type & 0x7F,
            max_payload: max_payload.max(MIN_MAX_PAYLOAD),
            next_sequence: initial_sequence,
            packets: 0,
        }
    }

    /// The sequence number the next packet will get.
    pub fn next_sequence_number(&self) -> u16 {
        self.next_sequence
    }

    /// The largest payload, bytes.
    pub fn max_payload(&self) -> usize {
        self.max_payload
    }

    /// Packets produced so far.
    pub fn packets_sent(&self) -> u64 {
        self.packets
    }

    /// The frame's packets, in order.
    pub fn packetize(&mut self, frame: &EncodedFrame) -> Vec<MediaPacket> {
        let mut out = Vec::new();
        self.packetize_into(frame, &mut out);
        out
    }

    /// Appends the frame's packets to `out` (which the caller may reuse between frames).
    ///
    /// A frame smaller than one header is sent as one header-only payload; a frame that would
    /// need more than 65535 packets (the header's packet count is a `u16`) is cut to 65535 full
    /// packets. In both cases the header's `frame_bytes` is the size actually sent.
    pub fn packetize_into(&mut self, frame: &EncodedFrame, out: &mut Vec<MediaPacket>) {
        let max = self.max_payload as u64;
        let header_len = if frame.temporal.is_some() {
            LAYERED_HEADER_LEN
        } else {
            HEADER_LEN
        };
        let size = u64::from(frame.size_bytes)
            .max(header_len as u64)
            .min(u64::from(u16::MAX) * max);
        let count = size.div_ceil(max); // 1..=65535
        let base = size / count;
        let larger = size % count; // the first `larger` payloads get one byte more
        let mut header = PayloadHeader {
            key_frame: frame.key_frame,
            frame_id: frame.id,
            index: 0,
            packets_in_frame: count as u16,
            capture_ns: frame.capture.as_nanos(),
            frame_bytes: size as u32,
            temporal: frame.temporal,
        };
        out.reserve(count as usize);
        for i in 0..count {
            let len = (base + u64::from(i < larger)) as usize;
            let mut payload = vec![0u8; len];
            header.index = i as u16;
            header.write(&mut payload);
            out.push(MediaPacket {
                ssrc: self.ssrc,
                payload_type: self.payload_type,
                sequence_number: self.next_sequence,
                timestamp: frame.rtp_timestamp,
                marker: i + 1 == count,
                payload,
                frame_id: frame.id,
                key_frame: frame.key_frame,
                capture: frame.capture,
            });
            self.next_sequence = self.next_sequence.wrapping_add(1);
        }
        self.packets += count;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::encoder::{Encoder, EncoderConfig, rtp_timestamp};

    fn frame(id: u32, size_bytes: u32, capture: Time) -> EncodedFrame {
        EncodedFrame {
            id,
            capture,
            size_bytes,
            key_frame: id == 0,
            rtp_timestamp: rtp_timestamp(capture, 0),
            temporal: None,
        }
    }

    #[test]
    fn a_3000_byte_frame_becomes_three_1000_byte_packets_marked_on_the_last() {
        let mut p = Packetizer::new(0x1234, 96, DEFAULT_MAX_PAYLOAD, 10);
        let f = frame(0, 3000, Time::from_secs(1));
        let packets = p.packetize(&f);
        let lens: Vec<_> = packets.iter().map(|p| p.payload.len()).collect();
        assert_eq!(lens, [1000, 1000, 1000]);
        let markers: Vec<_> = packets.iter().map(|p| p.marker).collect();
        assert_eq!(markers, [false, false, true]);
        let seqs: Vec<_> = packets.iter().map(|p| p.sequence_number).collect();
        assert_eq!(seqs, [10, 11, 12]);
        assert!(
            packets
                .iter()
                .all(|p| p.timestamp == 90_000 && p.ssrc == 0x1234)
        );
        assert!(packets.iter().all(|p| p.payload_type == 96 && p.key_frame));
        for (i, pk) in packets.iter().enumerate() {
            let h = PayloadHeader::read(&pk.payload).unwrap();
            assert_eq!(
                h,
                PayloadHeader {
                    key_frame: true,
                    frame_id: 0,
                    index: i as u16,
                    packets_in_frame: 3,
                    capture_ns: 1_000_000_000,
                    frame_bytes: 3000,
                    temporal: None,
                }
            );
            assert!(pk.payload[HEADER_LEN..].iter().all(|&b| b == 0));
        }
        assert_eq!(p.next_sequence_number(), 13);
    }

    #[test]
    fn uneven_frames_split_about_equally_larger_packets_first_and_never_over_1200() {
        let mut p = Packetizer::new(1, 96, 1200, 0);
        let lens = |p: &mut Packetizer, size| {
            p.packetize(&frame(1, size, Time::ZERO))
                .iter()
                .map(|p| p.payload.len())
                .collect::<Vec<_>>()
        };
        assert_eq!(lens(&mut p, 1200), [1200]);
        assert_eq!(lens(&mut p, 1201), [601, 600]);
        assert_eq!(lens(&mut p, 2402), [801, 801, 800]);
        assert_eq!(lens(&mut p, 24), [24]);
        assert_eq!(lens(&mut p, 0), [24]);
        for size in [1, 999, 1200, 1225, 5000, 52_083, 1_000_000] {
            let packets = p.packetize(&frame(1, size, Time::ZERO));
            let total: usize = packets.iter().map(|p| p.payload.len()).sum();
            assert_eq!(total, (size as usize).max(24));
            assert!(
                packets
                    .iter()
                    .all(|p| (24..=1200).contains(&p.payload.len()))
            );
            assert_eq!(packets.len(), (size as usize).max(24).div_ceil(1200));
        }
    }

    #[test]
    fn sequence_numbers_wrap_after_65535() {
        let mut p = Packetizer::new(1, 96, 1200, 65_534);
        let seqs: Vec<_> = p
            .packetize(&frame(3, 4000, Time::ZERO))
            .iter()
            .map(|p| p.sequence_number)
            .collect();
        assert_eq!(seqs, [65_534, 65_535, 0, 1]);
        assert_eq!(p.packets_sent(), 4);
    }

    #[test]
    fn a_huge_frame_is_cut_to_65535_packets_and_odd_settings_are_repaired() {
        let mut p = Packetizer::new(1, 0xFF, 0, 0);
        assert_eq!(p.max_payload(), MIN_MAX_PAYLOAD);
        let packets = p.packetize(&frame(0, u32::MAX, Time::ZERO));
        assert_eq!(packets.len(), 65_535);
        assert_eq!(packets[0].payload_type, 0x7F);
        let h = PayloadHeader::read(&packets[65_534].payload).unwrap();
        assert_eq!(h.frame_bytes, 65_535 * 25);
        assert_eq!(h.index, 65_534);
        assert!(packets[65_534].marker);
    }

    #[test]
    fn an_encoded_call_round_trips_through_payload_headers() {
        let mut enc = Encoder::new(EncoderConfig::default(), Time::ZERO);
        enc.set_target(Time::ZERO, 2_500_000);
        let mut p = Packetizer::new(7, 96, DEFAULT_MAX_PAYLOAD, 0);
        let mut out = Vec::new();
        while enc.next_frame_time() < Time::from_secs(5) {
            let t = enc.next_frame_time();
            let f = enc.poll_frame(t, false).unwrap();
            out.clear();
            p.packetize_into(&f, &mut out);
            let bytes: usize = out.iter().map(|p| p.payload.len()).sum();
            assert_eq!(bytes, f.size_bytes as usize);
            for pk in &out {
                let h = PayloadHeader::read(&pk.payload).unwrap();
                assert_eq!(h.frame_id, f.id);
                assert_eq!(h.capture_ns, f.capture.as_nanos());
                assert_eq!(pk.timestamp, rtp_timestamp(f.capture, 0));
            }
        }
    }
}

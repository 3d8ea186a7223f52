//! Frames from a real VP8 RTP stream, described for the
//! [`Receiver`].
//!
//! The receiver and the QoE meter were written for the synthetic codec, whose payloads carry
//! their frame's id, packet count and capture instant. A real sender's VP8 (a browser's) carries
//! none of that, so this depacketizer works it out from RTP and the VP8 payload descriptor
//! (RFC 7741), the way libwebrtc's `RtpVideoStreamReceiver2` and packet buffer do:
//!
//! - a frame is the packets of one RTP timestamp, from the packet with S = 1 and PID = 0 (its
//!   first) to the packet with the marker bit (its last), with consecutive sequence numbers
//!   (RFC 7741 section 4.1); it is complete when every sequence number between the two arrived;
//! - a key frame is one whose first packet's VP8 payload header has P = 0 (RFC 6386 section
//!   9.1);
//! - the frame id is the picture id of the descriptor (7 or 15 bits, unwrapped), which a VP8
//!   sender increments once per frame, so a frame lost whole shows as a gap, as the synthetic
//!   codec's ids do. A stream without picture ids gets ids in completion order (a frame lost
//!   whole is then not seen);
//! - the capture instant is the RTP timestamp on the receiver's clock, anchored at the first
//!   packet's arrival (the receiver has no sender report mapping here): delays are measured from
//!   the first frame's transit, which is what a jitter buffer needs (libwebrtc's timing also
//!   works from RTP timestamp differences).
//!
//! A frame is handed on when it completes: all its packets at once, each with the
//! [`PayloadHeader`] the synthetic codec would have carried (index, packet count, the frame's
//! bytes). An incomplete frame (waiting for a retransmission) is held; if it never completes,
//! the receiver sees its id missing and declares it lost after its loss timeout, as for the
//! synthetic codec. Sans-I/O: arrival instants come from the caller.

use super::super::payload::PayloadHeader;
use super::super::receiver::Receiver;
use super::descriptor::{self, Descriptor};
use crate::link::Time;
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// The RTP video clock, ticks per second (RFC 7741 section 4.1).
const CLOCK_HZ: u64 = 90_000;
/// Frames held at once (complete or not); the oldest go first.
const MAX_FRAMES: usize = 128;
/// The most packets one frame may have: a 4 MB key frame at 1200-byte payloads; more is a
/// broken stream, not a frame.
const MAX_PACKETS_PER_FRAME: u16 = 4096;

/// What the framer counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FramerStats {
    /// Packets handed in.
    pub packets: u64,
    /// Packets whose payload is not VP8 (no valid descriptor).
    pub malformed: u64,
    /// Copies of packets already held, or of frames already handed on.
    pub duplicates: u64,
    /// Frames completed and handed on.
    pub frames: u64,
    /// Of those, key frames.
    pub key_frames: u64,
    /// Frames given up unfinished to bound memory (the receiver declares them lost).
    pub evicted: u64,
}

#[derive(Debug, Clone, Default)]
struct Assembly {
    /// Payload bytes by sequence number.
    packets: BTreeMap<u16, u32>,
    first: Option<(u16, Descriptor)>,
    last: Option<u16>,
    done: bool,
}

/// The depacketizer (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Vp8Framer {
    frames: BTreeMap<i64, Assembly>,
    last_timestamp: Option<i64>,
    /// (unwrapped RTP timestamp, arrival) of the first packet.
    anchor: Option<(i64, Time)>,
    last_picture: Option<i64>,
    next_fallback_id: u32,
    out: VecDeque<(u16, PayloadHeader)>,
    stats: FramerStats,
}

impl Vp8Framer {
    /// A framer that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// The counters so far.
    pub fn stats(&self) -> FramerStats {
        self.stats
    }

    /// Handles one RTP packet of the VP8 stream that arrived at `now`.
    pub fn on_packet(
        &mut self,
        now: Time,
        sequence: u16,
        timestamp: u32,
        marker: bool,
        payload: &[u8],
    ) {
        self.stats.packets += 1;
        let Ok(d) = descriptor::parse(payload) else {
            self.stats.malformed += 1;
            return;
        };
        let ts = unwrap(self.last_timestamp, i64::from(timestamp), 1 << 32);
        self.last_timestamp = Some(self.last_timestamp.map_or(ts, |l| l.max(ts)));
        self.anchor.get_or_insert((ts, now));
        let frame = self.frames.entry(ts).or_default();
        if frame.done || frame.packets.contains_key(&sequence) {
            self.stats.duplicates += 1;
            return;
        }
        frame
            .packets
            .insert(sequence, u32::try_from(payload.len()).unwrap_or(u32::MAX));
        if d.starts_frame() {
            frame.first = Some((sequence, d));
        }
        if marker {
            frame.last = Some(sequence);
        }
        self.try_complete(ts);
        while self.frames.len() > MAX_FRAMES {
            if let Some((_, old)) = self.frames.pop_first()
                && !old.done
            {
                self.stats.evicted += 1;
            }
        }
    }

    /// Hands one RTP payload of the video stream, arrived at `now`, to `receiver`: a synthetic
    /// codec's payload as it is, a VP8 one through this framer (its frame's packets reach the
    /// receiver when the frame completes). `playout` is the packet's playout-delay minimum.
    pub fn deliver(
        &mut self,
        receiver: &mut Receiver,
        now: Time,
        rtp: (u16, u32, bool),
        payload: &[u8],
        playout: Option<Duration>,
    ) {
        let (sequence, timestamp, marker) = rtp;
        if PayloadHeader::read(payload).is_ok() {
            receiver.on_packet_with_playout_delay(now, sequence, payload, playout);
            return;
        }
        self.on_packet(now, sequence, timestamp, marker, payload);
        while let Some((sequence, header)) = self.poll_packet() {
            receiver.on_described_packet(now, sequence, &header, playout);
        }
    }

    /// The next packet to hand to the receiver, with its description.
    pub fn poll_packet(&mut self) -> Option<(u16, PayloadHeader)> {
        self.out.pop_front()
    }

    fn try_complete(&mut self, ts: i64) {
        let Some(frame) = self.frames.get(&ts) else {
            return;
        };
        let (Some((first, d)), Some(last)) = (frame.first, frame.last) else {
            return;
        };
        let count = last.wrapping_sub(first).wrapping_add(1);
        if count == 0 || count > MAX_PACKETS_PER_FRAME {
            return;
        }
        let sequences: Vec<u16> = (0..count).map(|i| first.wrapping_add(i)).collect();
        if !sequences.iter().all(|s| frame.packets.contains_key(s)) {
            return;
        }
        let bytes: u32 = sequences
            .iter()
            .filter_map(|s| frame.packets.get(s))
            .fold(0u32, |a, b| a.saturating_add(*b));
        let frame_id = match d.picture_id {
            Some(p) => {
                let modulus = if d.long_picture_id { 1 << 15 } else { 1 << 7 };
                let unwrapped = unwrap(self.last_picture, i64::from(p), modulus);
                self.last_picture = Some(self.last_picture.map_or(unwrapped, |l| l.max(unwrapped)));
                unwrapped as u32
            }
            None => {
                self.next_fallback_id = self.next_fallback_id.wrapping_add(1);
                self.next_fallback_id
            }
        };
        let capture = self.capture_of(ts);
        let key_frame = d.key_frame.unwrap_or(false);
        for (index, sequence) in sequences.into_iter().enumerate() {
            self.out.push_back((
                sequence,
                PayloadHeader {
                    key_frame,
                    frame_id,
                    index: index as u16,
                    packets_in_frame: count,
                    capture_ns: capture.as_nanos(),
                    frame_bytes: bytes,
                    temporal: None,
                },
            ));
        }
        self.stats.frames += 1;
        self.stats.key_frames += u64::from(key_frame);
        if let Some(frame) = self.frames.get_mut(&ts) {
            frame.done = true;
            frame.packets.clear();
        }
    }

    /// The capture instant of RTP timestamp `ts` on the receiver's clock (see the module
    /// documentation); never before time zero.
    fn capture_of(&self, ts: i64) -> Time {
        let Some((ts0, at)) = self.anchor else {
            return Time::ZERO;
        };
        let offset_ns = (ts - ts0).saturating_mul(1_000_000_000) / CLOCK_HZ as i64;
        Time::from_nanos(at.as_nanos().saturating_add_signed(offset_ns))
    }
}

/// `value` (modulo `modulus`) unwrapped to the 64-bit value nearest to `last`.
fn unwrap(last: Option<i64>, value: i64, modulus: i64) -> i64 {
    let Some(last) = last else {
        // One cycle up, so values just below the first stay positive; for picture ids at least
        // the 15-bit cycle, a multiple of the 7-bit one: a sender may switch widths mid-stream
        // (webrtc-rs's `Vp8Payloader` writes 7-bit ids below 128 and 15-bit ones from there),
        // and the count must go on across the switch.
        return value + modulus.max(1 << 15);
    };
    let delta = (value - last).rem_euclid(modulus);
    if delta >= modulus / 2 {
        last + delta - modulus
    } else {
        last + delta
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A packet: descriptor with a 15-bit picture id, S on the first, then `data`.
    fn packet(picture: u16, first: bool, key: bool) -> Vec<u8> {
        let mut p = vec![
            0x80 | if first { 0x10 } else { 0 },
            0x80,
            0x80 | (picture >> 8) as u8,
            picture as u8,
        ];
        p.push(if key { 0x10 } else { 0x11 });
        p.extend_from_slice(&[0xAA; 95]);
        p
    }

    #[test]
    fn frames_complete_in_any_order_and_lost_ones_leave_gaps() {
        let mut f = Vp8Framer::new();
        let t = Time::from_millis;
        // Frame 1 (key, picture 32767 so the next wraps): packets 10, 11, 12, arriving 12, 10, 11.
        f.on_packet(t(10), 12, 3000, true, &packet(32767, false, true));
        f.on_packet(t(11), 10, 3000, false, &packet(32767, true, true));
        assert!(f.poll_packet().is_none());
        f.on_packet(t(12), 11, 3000, false, &packet(32767, false, true));
        let out: Vec<_> = std::iter::from_fn(|| f.poll_packet()).collect();
        assert_eq!(out.len(), 3);
        assert!(
            out.iter()
                .all(|(_, h)| h.key_frame && h.packets_in_frame == 3 && h.frame_bytes == 300)
        );
        assert_eq!(
            out.iter().map(|(s, h)| (*s, h.index)).collect::<Vec<_>>(),
            vec![(10, 0), (11, 1), (12, 2)]
        );
        let first_id = out[0].1.frame_id;
        assert_eq!(out[0].1.capture_ns, t(10).as_nanos());
        // Frame 2 (picture 0 after the wrap) is lost whole; frame 3 (picture 1) is one packet.
        f.on_packet(t(80), 15, 9000, true, &{
            let mut p = packet(1, true, false);
            p.truncate(50);
            p
        });
        let (seq, h) = f.poll_packet().unwrap();
        assert_eq!(seq, 15);
        assert_eq!(h.frame_id, first_id.wrapping_add(2));
        assert!(!h.key_frame);
        // 6000 ticks after the anchor: 66.7 ms.
        assert_eq!(h.capture_ns, t(10).as_nanos() + 66_666_666);
        // A copy of a handed-on frame is a duplicate; garbage is malformed.
        f.on_packet(t(81), 15, 9000, true, &packet(1, true, false));
        f.on_packet(t(82), 16, 12000, true, &[0x4C, 0x50, 1]);
        assert!(f.poll_packet().is_none());
        let stats = f.stats();
        assert_eq!(
            (
                stats.frames,
                stats.key_frames,
                stats.duplicates,
                stats.malformed
            ),
            (2, 1, 1, 1)
        );
    }

    #[test]
    fn unwrapping_follows_the_nearest_cycle() {
        assert_eq!(unwrap(None, 5, 128), 5 + (1 << 15));
        assert_eq!(unwrap(Some(133), 127, 128), 127);
        assert_eq!(unwrap(Some(255), 0, 128), 256);
        assert_eq!(unwrap(Some(1 << 32), 0xFFFF_FFFF, 1 << 32), (1 << 32) - 1);
    }

    #[test]
    fn picture_ids_that_widen_from_7_to_15_bits_keep_counting() {
        let mut last = None;
        let mut out = Vec::new();
        for (picture, modulus) in [(126, 1 << 7), (127, 1 << 7), (128, 1 << 15), (129, 1 << 15)] {
            let u = unwrap(last, picture, modulus);
            last = Some(u);
            out.push(u - 126 - (1 << 15));
        }
        assert_eq!(out, vec![0, 1, 2, 3]);
    }
}

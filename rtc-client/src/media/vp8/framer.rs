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
//! - the frame id is the picture id of the descriptor (7 or 15 bits, unwrapped; of the first
//!   packet of the frame that arrived), which a VP8
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
//!
//! # References
//!
//! What a frame references follows libwebrtc's choice of reference finder
//! (`modules/video_coding/rtp_frame_reference_finder.cc`): VP8 frames whose descriptor carries
//! a picture id, TL0PICIDX and TID go to `RtpVp8RefFinder`
//! (`modules/video_coding/rtp_vp8_ref_finder.cc`), every other VP8 frame is a link in a chain,
//! depending on the frame before it. With the temporal fields, the [`PayloadHeader`] gets the
//! [`Temporal`] description the synthetic codec's version-2 header gives, so the
//! [`Receiver`] applies the same rules to both:
//!
//! - a key frame references nothing (no temporal description); one above the base layer
//!   (TID > 0) is dropped, as `RtpVp8RefFinder::ManageFrameInternal` drops it;
//! - a TID 0 frame is a base frame referencing the previous base frame: the TID 0 frame whose
//!   TL0PICIDX is one less (8 bits, unwrapped);
//! - a TID > 0 frame with Y (layer sync) is discardable and references the TID 0 frame of its
//!   own TL0PICIDX;
//! - a TID > 0 frame without Y references, in libwebrtc, the last frame of every layer up to
//!   its own, which the receiver's one-reference model cannot say: it stays a link in the
//!   chain (it decodes when the frame before it did). Our sender never sends one.
//!
//! The base frame of each TL0PICIDX is known from the first packet of a TID 0 frame that
//! arrives (every packet carries the descriptor), so a base frame still waiting for a
//! retransmission can already be referenced. A complete frame whose base frame has shown no
//! packet is held until one does (libwebrtc stashes it the same way): a base frame lost whole,
//! or a TL0PICIDX that jumps, leaves the frames that need it held, so the receiver sees their
//! ids missing, declares the loss after its timeout and asks for a key frame, as Chromium
//! does. Held frames count in the bound on frames held ([`FramerStats::evicted`] when pushed
//! out). A frame whose base frame's picture id is not before its own contradicts itself and
//! is dropped ([`FramerStats::inconsistent`]).
//!
//! A sender writes the same picture id and temporal fields on every packet of a frame
//! (libwebrtc's `RtpPacketizerVp8` writes one descriptor for all of them, S aside). The first
//! packet of a frame to arrive fixes them; a later packet that differs (a corrupted copy, such
//! as a packet a repair packet recovered wrongly) still counts towards the frame's completion,
//! since a packet of that sequence number arrived, but says nothing else: not its start (S), not
//! its end (the marker), not a base frame ([`FramerStats::mismatched`]); a correct copy that
//! arrives later takes its place. Of two packets that claim to start the frame, the earlier
//! sequence number wins. So one bad packet that arrives after a good one of its frame can
//! change neither the frame's id nor the record of base frames that later frames reference.
//! (One that arrives before any good one fixes its frame's fields; a frame's fields are then
//! as wrong as its first packet.)

use super::super::payload::{PayloadHeader, Temporal};
use super::super::receiver::Receiver;
use super::descriptor::{self, Descriptor, TemporalLayer};
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
/// Base frames remembered by TL0PICIDX: far more than the base frames between two frames that
/// reference each other; libwebrtc keeps 50 (`kMaxLayerInfo`, `rtp_vp8_ref_finder.h`).
const MAX_BASES: usize = 64;

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
    /// Frames given up unfinished (or complete but held for their base frame) to bound memory
    /// (the receiver declares them lost).
    pub evicted: u64,
    /// Complete frames held until a packet of the base frame they reference arrived.
    pub held_for_base: u64,
    /// Frames dropped because their temporal fields contradict themselves (a key frame above
    /// the base layer, a base frame whose picture id is not before the frame's).
    pub inconsistent: u64,
    /// Packets whose picture id or temporal fields differ from those of the first packet of
    /// their frame that arrived (a corrupted copy): they count towards the frame's completion,
    /// their fields are ignored.
    pub mismatched: u64,
}

#[derive(Debug, Clone, Default)]
struct Assembly {
    /// Payload bytes by sequence number, and whether the packet agreed with the frame's
    /// descriptor fields.
    packets: BTreeMap<u16, (u32, bool)>,
    first: Option<(u16, Descriptor)>,
    /// The descriptor fields of the first packet of the frame that arrived, which every other
    /// packet of it must repeat.
    fields: Option<Fields>,
    /// Those fields' picture id and TL0PICIDX, unwrapped when that packet arrived.
    picture: Option<i64>,
    tl0: Option<i64>,
    last: Option<u16>,
    done: bool,
    /// Complete, and waiting for a packet of the base frame it references.
    held: bool,
}

/// The descriptor fields every packet of a frame carries alike (libwebrtc's
/// `RtpPacketizerVp8` writes one descriptor, S aside, on all the packets of a frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fields {
    picture_id: Option<u16>,
    long_picture_id: bool,
    tl0_pic_idx: Option<u8>,
    layer: Option<TemporalLayer>,
}

impl Fields {
    fn of(d: &Descriptor) -> Self {
        Self {
            picture_id: d.picture_id,
            long_picture_id: d.long_picture_id,
            tl0_pic_idx: d.tl0_pic_idx,
            layer: d.layer,
        }
    }
}

/// Where a complete frame stands in the temporal layers.
enum Place {
    /// No temporal description: a key frame, or a link in the chain.
    Chain,
    /// Its temporal description.
    Layered(Temporal),
    /// Its base frame has shown no packet yet.
    Hold,
    /// Its temporal fields contradict themselves.
    Drop,
}

/// The depacketizer (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Vp8Framer {
    frames: BTreeMap<i64, Assembly>,
    last_timestamp: Option<i64>,
    /// (unwrapped RTP timestamp, arrival) of the first packet.
    anchor: Option<(i64, Time)>,
    last_picture: Option<i64>,
    last_tl0: Option<i64>,
    /// The picture id of the base (TID 0) frame of each TL0PICIDX, both unwrapped.
    bases: BTreeMap<i64, i64>,
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
        let fields = Fields::of(&d);
        let consistent = frame.fields.is_none_or(|known| known == fields);
        // A copy of a packet held is a duplicate, unless the copy held contradicted its frame
        // and this one does not: then this one takes its place.
        let held_copy = frame.packets.get(&sequence).map(|&(_, ok)| ok);
        if frame.done || held_copy.is_some_and(|ok| ok || !consistent) {
            self.stats.duplicates += 1;
            return;
        }
        frame.packets.insert(
            sequence,
            (u32::try_from(payload.len()).unwrap_or(u32::MAX), consistent),
        );
        if frame.fields.is_none() {
            frame.fields = Some(fields);
            frame.picture = d.picture_id.map(|p| {
                let modulus = if d.long_picture_id { 1 << 15 } else { 1 << 7 };
                let unwrapped = unwrap(self.last_picture, i64::from(p), modulus);
                self.last_picture = Some(self.last_picture.map_or(unwrapped, |l| l.max(unwrapped)));
                unwrapped
            });
            frame.tl0 = d.tl0_pic_idx.map(|t| {
                let unwrapped = unwrap(self.last_tl0, i64::from(t), 1 << 8);
                self.last_tl0 = Some(self.last_tl0.map_or(unwrapped, |l| l.max(unwrapped)));
                unwrapped
            });
        }
        if !consistent {
            // A packet of this sequence number arrived, so it counts towards the frame's
            // completion; but a copy that contradicts its frame's descriptor (a corrupted one)
            // says nothing else about the frame, neither its start nor its end.
            self.stats.mismatched += 1;
        } else {
            if marker {
                frame.last = Some(sequence);
            }
            if d.starts_frame()
                && frame
                    .first
                    .is_none_or(|(known, _)| (sequence.wrapping_sub(known) as i16) < 0)
            {
                frame.first = Some((sequence, d));
            }
        }
        let new_base = match (frame.picture, frame.tl0, fields.layer) {
            (Some(picture), Some(tl0), Some(layer)) if consistent && layer.id == 0 => {
                self.note_base(tl0, picture)
            }
            _ => false,
        };
        self.try_complete(ts);
        if new_base {
            let held: Vec<i64> = self
                .frames
                .iter()
                .filter(|(_, f)| f.held && !f.done)
                .map(|(&ts, _)| ts)
                .collect();
            for ts in held {
                self.try_complete(ts);
            }
        }
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

    /// Remembers `picture` as the base frame of `tl0` (the later one, should two claim it);
    /// whether that is news.
    fn note_base(&mut self, tl0: i64, picture: i64) -> bool {
        if self.bases.get(&tl0).is_some_and(|&known| known >= picture) {
            return false;
        }
        self.bases.insert(tl0, picture);
        while self.bases.len() > MAX_BASES {
            self.bases.pop_first();
        }
        true
    }

    fn try_complete(&mut self, ts: i64) {
        let Some(frame) = self.frames.get(&ts) else {
            return;
        };
        if frame.done {
            return;
        }
        let (Some((first, d)), Some(last)) = (frame.first, frame.last) else {
            return;
        };
        let (picture, tl0) = (frame.picture, frame.tl0);
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
            .fold(0u32, |a, &(b, _)| a.saturating_add(b));
        let key_frame = d.key_frame.unwrap_or(false);
        let layer = frame.fields.and_then(|f| f.layer);
        let temporal = match self.place(layer, tl0, picture, key_frame) {
            Place::Chain => None,
            Place::Layered(t) => Some(t),
            Place::Hold => {
                if let Some(frame) = self.frames.get_mut(&ts)
                    && !frame.held
                {
                    frame.held = true;
                    self.stats.held_for_base += 1;
                }
                return;
            }
            Place::Drop => {
                self.stats.inconsistent += 1;
                if let Some(frame) = self.frames.get_mut(&ts) {
                    frame.done = true;
                    frame.packets.clear();
                }
                return;
            }
        };
        let frame_id = match picture {
            Some(unwrapped) => unwrapped as u32,
            None => {
                self.next_fallback_id = self.next_fallback_id.wrapping_add(1);
                self.next_fallback_id
            }
        };
        let capture = self.capture_of(ts);
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
                    temporal,
                },
            ));
        }
        self.stats.frames += 1;
        self.stats.key_frames += u64::from(key_frame);
        if let Some(frame) = self.frames.get_mut(&ts) {
            frame.done = true;
            frame.held = false;
            frame.packets.clear();
        }
    }

    /// Where a complete frame on temporal `layer` stands (see the module documentation,
    /// "References"); `tl0` and `picture` are its unwrapped TL0PICIDX and picture id.
    fn place(
        &self,
        layer: Option<TemporalLayer>,
        tl0: Option<i64>,
        picture: Option<i64>,
        key: bool,
    ) -> Place {
        let (Some(layer), Some(tl0), Some(picture)) = (layer, tl0, picture) else {
            return Place::Chain;
        };
        if key {
            return if layer.id == 0 {
                Place::Chain
            } else {
                Place::Drop
            };
        }
        let (base_tl0, discardable) = match layer {
            l if l.id == 0 => (tl0 - 1, false),
            l if l.sync => (tl0, true),
            _ => return Place::Chain,
        };
        match self.bases.get(&base_tl0) {
            None => Place::Hold,
            Some(&reference) if reference < picture => Place::Layered(Temporal {
                discardable,
                reference: reference as u32,
            }),
            Some(_) => Place::Drop,
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

    use super::super::payloader::{Layer, Vp8Payloader};
    use crate::media::receiver::{Playout, ReceiverConfig};

    /// A sender of layered VP8: frames of `len` bytes through our payloader, 33 ms apart.
    struct Sender {
        payloader: Vp8Payloader,
        sequence: u16,
        frames: u32,
    }

    /// One frame's packets: (sequence, timestamp, marker, payload).
    type Packets = Vec<(u16, u32, bool, Vec<u8>)>;

    impl Sender {
        fn new() -> Self {
            Self {
                payloader: Vp8Payloader::new(32_766, 254),
                sequence: 65_530,
                frames: 0,
            }
        }

        fn frame(&mut self, key: bool, layer: Layer, packets: usize) -> Packets {
            // The VP8 payload header's first byte: P = 0 on a key frame (RFC 6386 section 9.1).
            let mut data = vec![0xAB; packets * 100];
            data[0] = if key { 0x10 } else { 0x11 };
            let (_, payloads) = self.payloader.packetize(&data, layer, 106).unwrap();
            assert_eq!(payloads.len(), packets);
            let timestamp = self.frames * 3_000;
            self.frames += 1;
            let last = payloads.len() - 1;
            payloads
                .into_iter()
                .enumerate()
                .map(|(i, p)| {
                    let sequence = self.sequence;
                    self.sequence = self.sequence.wrapping_add(1);
                    (sequence, timestamp, i == last, p)
                })
                .collect()
        }
    }

    fn feed(f: &mut Vp8Framer, now: Time, packets: &[(u16, u32, bool, Vec<u8>)]) {
        for (sequence, timestamp, marker, payload) in packets {
            f.on_packet(now, *sequence, *timestamp, *marker, payload);
        }
    }

    /// The (frame id, temporal description) of each frame handed on, in order.
    fn handed_on(f: &mut Vp8Framer) -> Vec<(u32, Option<Temporal>)> {
        let mut out: Vec<(u32, Option<Temporal>)> = Vec::new();
        while let Some((_, h)) = f.poll_packet() {
            if h.index == 0 {
                out.push((h.frame_id, h.temporal));
            }
        }
        out
    }

    #[test]
    fn temporal_fields_give_base_frames_the_previous_base_and_discardable_ones_their_base() {
        let mut s = Sender::new();
        let mut f = Vp8Framer::new();
        let t = Time::from_millis;
        // Key, base, three discardable, base, base: the picture id wraps at the third frame,
        // TL0PICIDX at the sixth, the sequence number at the seventh packet.
        let frames = [
            s.frame(true, Layer::Base, 2),
            s.frame(false, Layer::Base, 1),
            s.frame(false, Layer::Discardable, 1),
            s.frame(false, Layer::Discardable, 3),
            s.frame(false, Layer::Discardable, 1),
            s.frame(false, Layer::Base, 2),
            s.frame(false, Layer::Base, 1),
        ];
        for (i, packets) in frames.iter().enumerate() {
            feed(&mut f, t(i as u64 * 33), packets);
        }
        let out = handed_on(&mut f);
        let key = out[0].0;
        let ids: Vec<u32> = out.iter().map(|(id, _)| id.wrapping_sub(key)).collect();
        assert_eq!(ids, vec![0, 1, 2, 3, 4, 5, 6]);
        let base = |reference: u32| {
            Some(Temporal {
                discardable: false,
                reference: key.wrapping_add(reference),
            })
        };
        let discardable = |reference: u32| {
            Some(Temporal {
                discardable: true,
                reference: key.wrapping_add(reference),
            })
        };
        let temporal: Vec<Option<Temporal>> = out.iter().map(|(_, t)| *t).collect();
        assert_eq!(
            temporal,
            vec![
                None,
                base(0),
                discardable(1),
                discardable(1),
                discardable(1),
                base(1),
                base(5)
            ]
        );
        assert_eq!(f.stats().frames, 7);
        assert_eq!(f.stats().held_for_base, 0);
    }

    /// Runs `frames` (some packets left out by `lose(frame, packet)`) through the framer into a
    /// receiver that renders at once and gives up a frame after 500 ms; returns the receiver
    /// after 2 s.
    fn receive(frames: &[Packets], lose: impl Fn(usize, usize) -> bool) -> Receiver {
        let mut f = Vp8Framer::new();
        let mut rx = Receiver::new(ReceiverConfig {
            playout: Playout::Immediate,
            loss_timeout: Duration::from_millis(500),
            ..ReceiverConfig::default()
        });
        let t = Time::from_millis;
        for (i, packets) in frames.iter().enumerate() {
            let now = t(i as u64 * 33);
            for (j, (sequence, timestamp, marker, payload)) in packets.iter().enumerate() {
                if !lose(i, j) {
                    f.deliver(
                        &mut rx,
                        now,
                        (*sequence, *timestamp, *marker),
                        payload,
                        None,
                    );
                }
            }
            rx.handle_timeout(now);
        }
        rx.handle_timeout(t(2_000));
        rx
    }

    fn window_stream() -> Vec<Packets> {
        let mut s = Sender::new();
        let mut frames = vec![
            s.frame(true, Layer::Base, 2),
            s.frame(false, Layer::Base, 2),
        ];
        for _ in 0..3 {
            frames.push(s.frame(false, Layer::Discardable, 2));
        }
        for _ in 0..4 {
            frames.push(s.frame(false, Layer::Base, 2));
        }
        frames
    }

    #[test]
    fn a_lost_discardable_frame_is_skipped_and_the_next_base_frame_decodes() {
        let frames = window_stream();
        let complete = receive(&frames, |_, _| false);
        assert_eq!(complete.stats().frames_rendered, 9);
        // Frame 3 (the second discardable one) loses a packet for good.
        let mut rx = receive(&frames, |frame, packet| frame == 3 && packet == 1);
        let stats = rx.stats();
        assert_eq!(stats.frames_rendered, 8);
        assert_eq!((stats.frames_skipped, stats.frames_dropped), (1, 1));
        assert!(!rx.waiting_for_key_frame());
        assert!(!rx.poll_pli(Time::from_millis(2_000)));
        // Frame 4 (the last discardable one) is lost whole: the base frame after it decodes.
        let mut rx = receive(&frames, |frame, _| frame == 4);
        assert_eq!(rx.stats().frames_rendered, 8);
        assert_eq!(rx.stats().frames_skipped, 1);
        assert!(!rx.poll_pli(Time::from_millis(2_000)));
    }

    #[test]
    fn a_lost_base_frame_stalls_until_a_key_frame_is_asked_for() {
        let frames = window_stream();
        // Frame 5, the base frame after the window, loses a packet for good: the base frames
        // after it wait, then the loss is declared and a key frame asked for.
        let mut rx = receive(&frames, |frame, packet| frame == 5 && packet == 0);
        let stats = rx.stats();
        assert_eq!(stats.frames_rendered, 5);
        assert_eq!(stats.frames_skipped, 0);
        assert!(rx.waiting_for_key_frame());
        assert!(rx.poll_pli(Time::from_millis(2_000)));
        // Lost whole, the same: the frames after it are held by the framer for their base.
        let mut rx = receive(&frames, |frame, _| frame == 5);
        assert_eq!(rx.stats().frames_rendered, 5);
        assert!(rx.waiting_for_key_frame());
        assert!(rx.poll_pli(Time::from_millis(2_000)));
    }

    #[test]
    fn a_frame_whose_base_has_not_shown_a_packet_is_held_until_one_does() {
        let mut s = Sender::new();
        let mut f = Vp8Framer::new();
        let t = Time::from_millis;
        let key = s.frame(true, Layer::Base, 1);
        let late = s.frame(false, Layer::Base, 2);
        let after = s.frame(false, Layer::Base, 1);
        let window = s.frame(false, Layer::Discardable, 1);
        feed(&mut f, t(0), &key);
        feed(&mut f, t(66), &after);
        feed(&mut f, t(70), &window);
        // The base frame `after` references `late`, which has shown no packet: held. The
        // discardable frame references `after`, whose picture id its packet named: on.
        let first = handed_on(&mut f);
        let k = first[0].0;
        let layered = |id: u32, discardable: bool, reference: u32| {
            (
                k + id,
                Some(Temporal {
                    discardable,
                    reference: k + reference,
                }),
            )
        };
        assert_eq!(first, vec![(k, None), layered(3, true, 2)]);
        assert_eq!(f.stats().held_for_base, 1);
        // One packet of the late base frame names its picture id: the held frame goes on,
        // before the late frame itself completes.
        feed(&mut f, t(300), &late[1..]);
        assert_eq!(handed_on(&mut f), vec![layered(2, false, 1)]);
        feed(&mut f, t(310), &late[..1]);
        assert_eq!(handed_on(&mut f), vec![layered(1, false, 0)]);
        assert_eq!((f.stats().frames, f.stats().held_for_base), (4, 1));
    }

    /// A one-packet frame with a hand-written descriptor: 15-bit `picture`, TL0PICIDX `tl0`,
    /// the T/K byte `tk`.
    fn layered(picture: u16, tl0: u8, tk: u8, key: bool) -> Vec<u8> {
        let [high, low] = picture.to_be_bytes();
        vec![
            0x90,
            0xE0,
            0x80 | high,
            low,
            tl0,
            tk,
            if key { 0x10 } else { 0x11 },
            0,
        ]
    }

    #[test]
    fn contradictory_temporal_fields_drop_the_frame_and_never_panic() {
        let mut f = Vp8Framer::new();
        let t = Time::from_millis;
        // A key frame on layer 1: dropped.
        f.on_packet(t(0), 1, 0, true, &layered(10, 5, 0x60, true));
        // A key frame, then a base frame of the same TL0PICIDX + 1 whose picture id is older
        // than the key frame's: its reference is not before it.
        f.on_packet(t(33), 2, 3_000, true, &layered(20, 7, 0x00, true));
        f.on_packet(t(66), 3, 6_000, true, &layered(19, 8, 0x00, false));
        // A layer-2 frame without Y: a link in the chain.
        f.on_packet(t(99), 4, 9_000, true, &layered(21, 7, 0x80, false));
        // A TL0PICIDX that jumps: held for a base frame that never comes.
        f.on_packet(t(132), 5, 12_000, true, &layered(22, 40, 0x00, false));
        // Truncated temporal fields: malformed.
        f.on_packet(t(165), 6, 15_000, true, &[0x90, 0xE0, 0x80, 23, 41]);
        let out = handed_on(&mut f);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].1, None, "the key frame references nothing");
        assert_eq!((out[1].0.wrapping_sub(out[0].0), out[1].1), (1, None));
        let stats = f.stats();
        assert_eq!(
            (stats.inconsistent, stats.held_for_base, stats.malformed),
            (2, 1, 1)
        );
    }

    #[test]
    fn a_corrupted_copy_of_a_packet_changes_neither_the_frame_nor_the_record_of_base_frames() {
        let mut s = Sender::new();
        let mut f = Vp8Framer::new();
        let t = Time::from_millis;
        let key = s.frame(true, Layer::Base, 1);
        let base = s.frame(false, Layer::Base, 3);
        let next = s.frame(false, Layer::Base, 1);
        feed(&mut f, t(0), &key);
        // The base frame's middle packet first arrives as a corrupted copy: S set and one bit
        // of TL0PICIDX flipped, as a wrong repair gave it; then the first packet, then a second,
        // correct copy of the middle one (a duplicate now), then the last.
        let (sequence, timestamp, marker, payload) = &base[1];
        let mut bad = payload.clone();
        bad[0] |= 0x10;
        bad[4] ^= 0x10;
        f.on_packet(t(33), base[0].0, base[0].1, base[0].2, &base[0].3);
        f.on_packet(t(34), *sequence, *timestamp, *marker, &bad);
        f.on_packet(t(35), *sequence, *timestamp, *marker, payload);
        f.on_packet(t(36), base[2].0, base[2].1, base[2].2, &base[2].3);
        feed(&mut f, t(66), &next);
        let out = handed_on(&mut f);
        let k = out[0].0;
        let base_of = |reference: u32| {
            Some(Temporal {
                discardable: false,
                reference: k + reference,
            })
        };
        assert_eq!(
            out,
            vec![(k, None), (k + 1, base_of(0)), (k + 2, base_of(1))]
        );
        let stats = f.stats();
        // The correct copy replaced the corrupted one: no duplicate.
        assert_eq!((stats.mismatched, stats.duplicates), (1, 0));
        assert_eq!((stats.inconsistent, stats.held_for_base), (0, 0));
        // The first packet is missing and a corrupted copy of it (S kept, TL0PICIDX wrong)
        // arrives after the others: the frame waits for a correct copy, then completes as sent.
        let mut f = Vp8Framer::new();
        feed(&mut f, t(0), &key);
        let (first_sequence, timestamp, marker, first) = &base[0];
        let mut bad_first = first.clone();
        bad_first[4] ^= 0x10;
        f.on_packet(t(33), base[1].0, base[1].1, base[1].2, &base[1].3);
        f.on_packet(t(34), base[2].0, base[2].1, base[2].2, &base[2].3);
        f.on_packet(t(35), *first_sequence, *timestamp, *marker, &bad_first);
        assert_eq!(handed_on(&mut f).len(), 1, "only the key frame");
        f.on_packet(t(36), *first_sequence, *timestamp, *marker, first);
        let packets: Vec<u16> = std::iter::from_fn(|| f.poll_packet())
            .filter(|(_, h)| h.packets_in_frame == 3)
            .map(|(s, _)| s)
            .collect();
        assert_eq!(packets, vec![base[0].0, base[1].0, base[2].0]);
        assert_eq!(f.stats().mismatched, 1);
    }

    #[test]
    fn a_stream_without_temporal_fields_stays_a_chain() {
        let mut f = Vp8Framer::new();
        let t = Time::from_millis;
        for i in 0..5u16 {
            f.on_packet(
                t(u64::from(i) * 33),
                i,
                u32::from(i) * 3_000,
                true,
                &packet(i, true, i == 0),
            );
        }
        let out = handed_on(&mut f);
        assert_eq!(out.len(), 5);
        assert!(out.iter().all(|(_, t)| t.is_none()));
        assert_eq!((f.stats().held_for_base, f.stats().inconsistent), (0, 0));
    }
}

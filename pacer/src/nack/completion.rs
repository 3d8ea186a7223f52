//! When each frame became whole at the receiver, as transport feedback shows it: the sender's
//! view of how late a frame was for its playout (docs/architecture.md, "Handover-timed actions",
//! the followed raise cap).
//!
//! Transport-wide feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01) reports the
//! receiver's arrival instant of every packet that carries a transport sequence number, media
//! and RTX alike, on the receiver's clock. A frame can be decoded once each of its packets has
//! arrived in some copy, the original or a retransmission, so its completion is the latest of
//! those first arrivals. Less the frame's capture (the instant the sender wrote its first
//! packet), that is the frame's transit, the receiver's clock offset included. The receiver's
//! playout timing expects each frame at about the usual transit (libwebrtc's
//! `TimestampExtrapolator` maps capture time to local time from the frames it has seen), so a
//! frame's lateness is its transit less the median of the last [`REFERENCE_FRAMES`] frames'
//! transits: the offset cancels, and so does any fixed part of the path's delay.
//!
//! What the sender cannot see: a packet the receiver rebuilt from FlexFEC repair packets never
//! arrives in a copy, so its frame never completes here and gives no lateness; nor does a frame
//! whose packets the history culled before their feedback came.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How many completed frames the reference transit is the median of: 64, about two seconds at
/// 30 fps, so that one boundary's late frames (a few hundred milliseconds of them) cannot move
/// it, while a path whose base delay changes (a new satellite, a longer ground path) moves it
/// within seconds.
pub const REFERENCE_FRAMES: usize = 64;

/// The fewest completed frames a lateness is measured against.
pub const MIN_REFERENCE_FRAMES: usize = 8;

/// How many frames are followed at once: beyond it the oldest is given up. 1 024 frames are
/// 34 s at 30 fps, far longer than the responder's history keeps their packets (at least one
/// second, at most 9 600 packets).
const MAX_TRACKED_FRAMES: usize = 1_024;

/// The most packets one frame is followed over: a key frame of 4K video at 1 200 bytes a packet
/// is some 200. A frame beyond this is not followed.
const MAX_FRAME_PACKETS: usize = 1_024;

/// One frame's lateness at the receiver, from transport feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameLateness {
    /// The media SSRC.
    pub ssrc: u32,
    /// When the sender wrote the frame's first packet: its capture, give or take the encoder.
    pub captured: Instant,
    /// How much later than the usual transit the frame became whole at the receiver (zero when
    /// earlier).
    pub lateness: Duration,
}

#[derive(Debug)]
struct Tracked {
    timestamp: u32,
    first_seq: i64,
    captured: Instant,
    /// Whether each packet, from `first_seq` on, arrived in some copy.
    arrived: Vec<bool>,
    missing: usize,
    /// The latest first arrival so far, on the receiver's clock.
    completion: Duration,
}

/// One stream's frames between their first packet's write and their completion (see the module
/// documentation).
#[derive(Debug, Default)]
pub(super) struct FrameCompletion {
    frames: VecDeque<Tracked>,
    /// The transits of the last [`REFERENCE_FRAMES`] completed frames, microseconds.
    transits: VecDeque<i64>,
    epoch: Option<Instant>,
}

impl FrameCompletion {
    /// A media packet written at `at`: the next packet of the newest frame when it carries that
    /// frame's timestamp and follows its last packet, else the first of a new frame. A packet
    /// older than the newest frame's is not followed.
    pub(super) fn on_packet(&mut self, seq: i64, timestamp: u32, at: Instant) {
        self.epoch.get_or_insert(at);
        if let Some(newest) = self.frames.back_mut() {
            let next = newest.first_seq + newest.arrived.len() as i64;
            if seq < next {
                return;
            }
            if newest.timestamp == timestamp && seq == next {
                if newest.arrived.len() < MAX_FRAME_PACKETS {
                    newest.arrived.push(false);
                    newest.missing += 1;
                }
                return;
            }
        }
        if self.frames.len() == MAX_TRACKED_FRAMES {
            self.frames.pop_front();
        }
        self.frames.push_back(Tracked {
            timestamp,
            first_seq: seq,
            captured: at,
            arrived: vec![false],
            missing: 1,
            completion: Duration::ZERO,
        });
    }

    /// The packet `seq` (unwrapped, the original's number for a retransmission) arrived at
    /// `arrival` on the receiver's clock: the frame's lateness if that made its frame whole
    /// (`None` too before [`MIN_REFERENCE_FRAMES`] frames completed).
    pub(super) fn on_arrival(
        &mut self,
        seq: i64,
        arrival: Duration,
    ) -> Option<(Instant, Duration)> {
        let after = self.frames.partition_point(|f| f.first_seq <= seq);
        let frame = self.frames.get_mut(after.checked_sub(1)?)?;
        let index = usize::try_from(seq - frame.first_seq).ok()?;
        let seen = frame.arrived.get_mut(index)?;
        if *seen {
            return None;
        }
        *seen = true;
        frame.missing -= 1;
        frame.completion = frame.completion.max(arrival);
        if frame.missing > 0 {
            return None;
        }
        let epoch = self.epoch?;
        let transit =
            micros(frame.completion) - micros(frame.captured.saturating_duration_since(epoch));
        let captured = frame.captured;
        let reference = median(&self.transits);
        if self.transits.len() == REFERENCE_FRAMES {
            self.transits.pop_front();
        }
        self.transits.push_back(transit);
        let reference = reference.filter(|_| self.transits.len() > MIN_REFERENCE_FRAMES)?;
        let late = u64::try_from(transit.saturating_sub(reference)).unwrap_or(0);
        Some((captured, Duration::from_micros(late)))
    }

    /// Stops following frames whose packets all lie before `seq` (the history dropped them).
    pub(super) fn forget_before(&mut self, seq: i64) {
        while self
            .frames
            .front()
            .is_some_and(|f| f.first_seq + (f.arrived.len() as i64) <= seq)
        {
            self.frames.pop_front();
        }
    }
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// The median of `values` (the lower of the middle two), `None` when empty.
fn median(values: &VecDeque<i64>) -> Option<i64> {
    let mut sorted: Vec<i64> = values.iter().copied().collect();
    sorted.sort_unstable();
    sorted.get(sorted.len().checked_sub(1)? / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// Frames of three packets every 33 ms from `t0`, each packet arriving 60 ms after its frame
    /// was written plus the receiver clock's offset of 5 s, except as `late` says.
    fn feed(
        c: &mut FrameCompletion,
        t0: Instant,
        frames: u64,
        late: impl Fn(u64) -> u64,
    ) -> Vec<(u64, Duration)> {
        let mut out = Vec::new();
        for f in 0..frames {
            for p in 0..3 {
                c.on_packet((f * 3 + p) as i64, f as u32 * 3000, t0 + ms(33 * f));
            }
        }
        for f in 0..frames {
            for p in 0..3 {
                let arrival = ms(5_000 + 33 * f + 60) + if p == 1 { ms(late(f)) } else { ms(0) };
                if let Some((captured, lateness)) = c.on_arrival((f * 3 + p) as i64, arrival) {
                    assert_eq!(captured, t0 + ms(33 * f));
                    out.push((f, lateness));
                }
            }
        }
        out
    }

    #[test]
    fn a_frame_is_as_late_as_its_last_packet_beyond_the_usual_transit() {
        let t0 = Instant::now();
        let mut c = FrameCompletion::default();
        let out = feed(&mut c, t0, 40, |f| if f == 30 { 250 } else { 0 });
        // Nothing before enough frames completed; then every frame on time but the 30th.
        assert_eq!(out.first().map(|&(f, _)| f), Some(8));
        for &(f, lateness) in &out {
            let expected = if f == 30 { ms(250) } else { ms(0) };
            assert_eq!(lateness, expected, "frame {f}");
        }
    }

    #[test]
    fn a_frame_missing_a_packet_never_completes_and_duplicates_count_once() {
        let t0 = Instant::now();
        let mut c = FrameCompletion::default();
        feed(&mut c, t0, 20, |_| 0);
        c.on_packet(60, 20 * 3000, t0 + ms(660));
        c.on_packet(61, 20 * 3000, t0 + ms(660));
        assert_eq!(c.on_arrival(60, ms(5_000 + 660 + 60)), None);
        assert_eq!(
            c.on_arrival(60, ms(5_000 + 660 + 60)),
            None,
            "a second copy"
        );
        let done = c.on_arrival(61, ms(5_000 + 660 + 460));
        assert_eq!(done, Some((t0 + ms(660), ms(400))));
        // Unknown packets and frames given up give nothing.
        assert_eq!(c.on_arrival(1_000, ms(9_000)), None);
        c.on_packet(62, 21 * 3000, t0 + ms(693));
        c.forget_before(63);
        assert_eq!(c.on_arrival(62, ms(5_000 + 693 + 60)), None);
    }

    #[test]
    fn a_packet_that_does_not_follow_the_frame_starts_a_new_one() {
        let t0 = Instant::now();
        let mut c = FrameCompletion::default();
        c.on_packet(0, 1, t0);
        c.on_packet(2, 1, t0);
        assert_eq!(c.frames.len(), 2, "a gap in the sequence");
        c.on_packet(1, 1, t0);
        assert_eq!(c.frames.len(), 2, "an older packet is not followed");
    }
}

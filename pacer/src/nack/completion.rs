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
//! A packet the receiver rebuilds from a FlexFEC repair packet counts as arrived when the repair
//! packet and all the others it protects have: the receiver's XOR recovery. What the sender
//! cannot see: a frame whose packets the history culled before their feedback came gives no
//! lateness.

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
    /// When it became whole, on the receiver's clock as transport feedback reports it (offset
    /// from the sender's by a constant the sender does not know).
    pub completed: Duration,
    /// Its packets' payload bytes.
    pub bytes: u32,
    /// Whether a retransmission or a FlexFEC repair made it whole: libwebrtc's receiver counts
    /// such a frame delayed by retransmission and leaves it out of its jitter estimate
    /// ([`crate::receiver::jitter`]).
    pub repaired: bool,
}

/// A frame made whole: [`FrameLateness`] but for the stream, which the responder knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Completed {
    pub(super) captured: Instant,
    pub(super) lateness: Duration,
    pub(super) completed: Duration,
    pub(super) bytes: u32,
    pub(super) repaired: bool,
}

impl Completed {
    /// As a [`FrameLateness`] of the stream `ssrc`.
    pub(super) fn of(self, ssrc: u32) -> FrameLateness {
        FrameLateness {
            ssrc,
            captured: self.captured,
            lateness: self.lateness,
            completed: self.completed,
            bytes: self.bytes,
            repaired: self.repaired,
        }
    }
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
    /// The payload bytes of its packets written.
    bytes: u32,
    /// Whether a retransmission or a repair packet made part of it arrive.
    repaired: bool,
}

/// One stream's frames between their first packet's write and their completion (see the module
/// documentation).
#[derive(Debug, Default)]
pub(super) struct FrameCompletion {
    frames: VecDeque<Tracked>,
    /// The transits of the last [`REFERENCE_FRAMES`] completed frames, microseconds.
    transits: VecDeque<i64>,
    epoch: Option<Instant>,
    /// Repair packets that arrived while two or more of their packets had not.
    repairs: VecDeque<Repair>,
}

/// A FlexFEC repair packet that arrived: the packets it protects and when.
#[derive(Debug, Clone, Copy)]
struct Repair {
    base: i64,
    mask: u128,
    arrival: Duration,
}

/// The most repair packets waiting for all but one of their packets: about two seconds of a
/// heavily protected 2.5-Mbit/s stream; beyond it the oldest is dropped.
const MAX_PENDING_REPAIRS: usize = 128;

impl FrameCompletion {
    /// A media packet of `bytes` payload bytes written at `at`: the next packet of the newest
    /// frame when it carries that frame's timestamp and follows its last packet, else the first
    /// of a new frame. A packet older than the newest frame's is not followed.
    pub(super) fn on_packet(&mut self, seq: i64, timestamp: u32, at: Instant, bytes: u32) {
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
                    newest.bytes = newest.bytes.saturating_add(bytes);
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
            bytes,
            repaired: false,
        });
    }

    /// The packet `seq` (unwrapped, the original's number for a retransmission, which
    /// `retransmitted` tells) arrived at `arrival` on the receiver's clock; each frame that made
    /// whole, directly or through a repair packet waiting for it, goes to `done` (none before
    /// [`MIN_REFERENCE_FRAMES`] frames completed).
    pub(super) fn on_arrival(
        &mut self,
        seq: i64,
        arrival: Duration,
        retransmitted: bool,
        done: &mut Vec<Completed>,
    ) {
        if self.mark(seq, arrival, retransmitted, done) {
            self.recover(arrival, done);
        }
    }

    /// A FlexFEC repair packet protecting the packets `base + i` for each bit `i` of `mask`
    /// arrived at `arrival`: once all but one of them have arrived, the receiver rebuilds that
    /// one (draft-ietf-payload-flexible-fec-scheme-03, section 6.3.2, the XOR of the repair
    /// packet and the others). Frames made whole go to `done`, as in
    /// [`on_arrival`](Self::on_arrival).
    pub(super) fn on_repair_arrival(
        &mut self,
        base: i64,
        mask: u128,
        arrival: Duration,
        done: &mut Vec<Completed>,
    ) {
        if self.repairs.len() == MAX_PENDING_REPAIRS {
            self.repairs.pop_front();
        }
        self.repairs.push_back(Repair {
            base,
            mask,
            arrival,
        });
        self.recover(arrival, done);
    }

    /// Rebuilds what the waiting repair packets can, as of `now` (the latest arrival applied),
    /// until none can rebuild more; drops those with nothing left to rebuild or that name a
    /// packet no longer followed.
    fn recover(&mut self, now: Duration, done: &mut Vec<Completed>) {
        loop {
            let mut rebuilt = None;
            let mut k = 0;
            while k < self.repairs.len() {
                let repair = self.repairs[k];
                let mut missing = Vec::new();
                let mut unknown = false;
                for bit in (0..128).filter(|&bit| repair.mask & (1u128 << bit) != 0) {
                    match self.arrived(repair.base + bit) {
                        Some(true) => {}
                        Some(false) => missing.push(repair.base + bit),
                        None => unknown = true,
                    }
                }
                if unknown || missing.len() <= 1 {
                    self.repairs.remove(k);
                    if !unknown && let [seq] = missing[..] {
                        rebuilt = Some((seq, repair.arrival.max(now)));
                        break;
                    }
                } else {
                    k += 1;
                }
            }
            match rebuilt {
                Some((seq, at)) => {
                    self.mark(seq, at, true, done);
                }
                None => return,
            }
        }
    }

    /// Whether packet `seq` arrived; `None` when it is not followed.
    fn arrived(&self, seq: i64) -> Option<bool> {
        let after = self.frames.partition_point(|f| f.first_seq <= seq);
        let frame = self.frames.get(after.checked_sub(1)?)?;
        let index = usize::try_from(seq - frame.first_seq).ok()?;
        frame.arrived.get(index).copied()
    }

    /// Marks `seq` arrived at `arrival`, by a retransmission or a repair where `repaired`; false
    /// when it is not followed or had arrived.
    fn mark(
        &mut self,
        seq: i64,
        arrival: Duration,
        repaired: bool,
        done: &mut Vec<Completed>,
    ) -> bool {
        let after = self.frames.partition_point(|f| f.first_seq <= seq);
        let Some(frame) = after.checked_sub(1).and_then(|i| self.frames.get_mut(i)) else {
            return false;
        };
        let Some(seen) = usize::try_from(seq - frame.first_seq)
            .ok()
            .and_then(|index| frame.arrived.get_mut(index))
        else {
            return false;
        };
        if *seen {
            return false;
        }
        *seen = true;
        frame.missing -= 1;
        frame.completion = frame.completion.max(arrival);
        frame.repaired |= repaired;
        if frame.missing > 0 {
            return true;
        }
        let (captured, completion) = (frame.captured, frame.completion);
        let (bytes, repaired) = (frame.bytes, frame.repaired);
        let Some(epoch) = self.epoch else {
            return true;
        };
        let transit = micros(completion) - micros(captured.saturating_duration_since(epoch));
        let reference = median(&self.transits);
        if self.transits.len() == REFERENCE_FRAMES {
            self.transits.pop_front();
        }
        self.transits.push_back(transit);
        if let Some(reference) = reference.filter(|_| self.transits.len() > MIN_REFERENCE_FRAMES) {
            let late = u64::try_from(transit.saturating_sub(reference)).unwrap_or(0);
            done.push(Completed {
                captured,
                lateness: Duration::from_micros(late),
                completed: completion,
                bytes,
                repaired,
            });
        }
        true
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
                c.on_packet((f * 3 + p) as i64, f as u32 * 3000, t0 + ms(33 * f), 1_000);
            }
        }
        for f in 0..frames {
            for p in 0..3 {
                let arrival = ms(5_000 + 33 * f + 60) + if p == 1 { ms(late(f)) } else { ms(0) };
                let mut done = Vec::new();
                c.on_arrival((f * 3 + p) as i64, arrival, false, &mut done);
                for frame in done {
                    assert_eq!(frame.captured, t0 + ms(33 * f));
                    out.push((f, frame.lateness));
                }
            }
        }
        out
    }

    fn arrive(c: &mut FrameCompletion, seq: i64, arrival: Duration) -> Vec<Completed> {
        let mut done = Vec::new();
        c.on_arrival(seq, arrival, false, &mut done);
        done
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
        c.on_packet(60, 20 * 3000, t0 + ms(660), 1_200);
        c.on_packet(61, 20 * 3000, t0 + ms(660), 300);
        assert!(arrive(&mut c, 60, ms(5_000 + 660 + 60)).is_empty());
        assert!(
            arrive(&mut c, 60, ms(5_000 + 660 + 60)).is_empty(),
            "a second copy"
        );
        let done = arrive(&mut c, 61, ms(5_000 + 660 + 460));
        assert_eq!(
            done,
            vec![Completed {
                captured: t0 + ms(660),
                lateness: ms(400),
                completed: ms(5_000 + 660 + 460),
                bytes: 1_500,
                repaired: false,
            }]
        );
        // Unknown packets and frames given up give nothing.
        assert!(arrive(&mut c, 1_000, ms(9_000)).is_empty());
        c.on_packet(62, 21 * 3000, t0 + ms(693), 1_000);
        c.forget_before(63);
        assert!(arrive(&mut c, 62, ms(5_000 + 693 + 60)).is_empty());
    }

    #[test]
    fn a_repair_packet_rebuilds_the_one_packet_its_others_leave_missing() {
        let t0 = Instant::now();
        let mut c = FrameCompletion::default();
        feed(&mut c, t0, 20, |_| 0);
        // Frame 20 of packets 60-62, frame 21 of 63-65; one repair packet protects 60-65.
        for seq in 60..66 {
            c.on_packet(
                seq,
                (seq as u32 / 3) * 3000,
                t0 + ms(33 * (seq as u64 / 3)),
                1_000,
            );
        }
        let mut done = Vec::new();
        // It arrives first, with 61 and 64 both missing: it waits.
        c.on_repair_arrival(60, 0b11_1111, ms(5_000 + 700), &mut done);
        for seq in [60, 62, 63, 65] {
            c.on_arrival(
                seq,
                ms(5_000 + 33 * (seq as u64 / 3) + 60),
                false,
                &mut done,
            );
        }
        assert!(done.is_empty());
        // 64 is retransmitted and arrives at 900 ms: frame 21 is whole, and the repair packet
        // rebuilds 61 then, so frame 20 is whole at 900 ms too.
        c.on_arrival(64, ms(5_000 + 900), true, &mut done);
        let late: Vec<_> = done
            .iter()
            .map(|f| (f.captured, f.lateness, f.completed, f.repaired))
            .collect();
        assert_eq!(
            late,
            vec![
                (t0 + ms(693), ms(900 - 693 - 60), ms(5_900), true),
                (t0 + ms(660), ms(900 - 660 - 60), ms(5_900), true),
            ]
        );
        // A repair packet with nothing to rebuild, or naming packets not followed, is dropped.
        c.on_repair_arrival(60, 0b11, ms(5_000 + 950), &mut done);
        c.on_repair_arrival(5_000, 0b1, ms(5_000 + 950), &mut done);
        assert!(c.repairs.is_empty());
        assert_eq!(done.len(), 2);
    }

    #[test]
    fn a_packet_that_does_not_follow_the_frame_starts_a_new_one() {
        let t0 = Instant::now();
        let mut c = FrameCompletion::default();
        c.on_packet(0, 1, t0, 100);
        c.on_packet(2, 1, t0, 100);
        assert_eq!(c.frames.len(), 2, "a gap in the sequence");
        c.on_packet(1, 1, t0, 100);
        assert_eq!(c.frames.len(), 2, "an older packet is not followed");
    }
}

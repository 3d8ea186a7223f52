//! Where in the slot, away from the predicted instants, the path loses packets: the evidence
//! that places the phase raise (docs/architecture.md, "Handover-timed actions", the phase raise).
//!
//! Not every path loses at the reconfiguration. The mmsys24 Lagos trace (Starlink via
//! inter-satellite links) loses 5 % of its pings 4-5 s after each one and 0-0.3 % elsewhere, and
//! 91 % of a call's freezes over its replay begin 4-6 s after a predicted instant, where no
//! window is (docs/experiments/mmsys24-2026-12-06.md, sections 4-5). The sender sees where its
//! losses fall: each packet reported by transport feedback is binned by how long after the
//! latest predicted instant it was sent, in half-second bins over a 15-s slot, and a bin that
//! loses significantly more than the rest of the slot is a lossy phase of this path.

use std::time::Instant;

/// The width of one bin, ms: half a second, about four pings of the traces that showed the
/// phase, and some 100 packets a slot at video rates.
pub(crate) const PHASE_BIN_MS: u64 = 500;

/// How far after a predicted instant packets are binned, ms: Starlink's 15-s slot, the next
/// instant's distance on its grid.
pub(crate) const PHASE_SPAN_MS: u64 = 15_000;

const BINS: usize = (PHASE_SPAN_MS / PHASE_BIN_MS) as usize;

/// The bins tested: not the half second after the instant, which is the receiver gate's (its
/// spans cover the first 300 ms) and the boundary windows' (they reach to 150-200 ms, ramping
/// down after), nor the half second before the next instant, whose packets meet the next
/// boundary in the bottleneck queue (the lead's rows).
const TESTED: std::ops::Range<usize> = 1..BINS - 1;

/// How many slots a bin remembers (exponential forgetting): 20, five minutes of 15-s slots, so
/// a verdict follows a path that changes over minutes.
const SLOT_MEMORY: f64 = 20.0;

/// How many slots must have been seen before any bin is tested: 8, two minutes.
const MIN_SLOTS: u64 = 8;

/// The most lost packets one bin of one slot counts for: 3. The evidence is counted per slot,
/// not per packet: a path's congestion bursts (a capacity drop, a probe) lose tens of packets in
/// one bin of one slot, and counted in full they make any bin look lossy for minutes (the
/// starlink and sparse-leo scenarios: bins across the slot, a different one each call); a lossy
/// phase loses a few packets in most slots (the Lagos ISL trace's 4-5 s bins, 2-5 of some 100
/// packets a slot).
const SLOT_CAP: u32 = 3;

/// The fewest capped losses a slot a lossy bin must average: 1.
const MIN_PER_SLOT: f64 = 1.0;

/// How many times the median bin's capped losses a slot a lossy bin's must be: 3. On a path that
/// loses everywhere (the Seattle bent-pipe trace: 2.5 %, two or three packets of every bin of
/// every slot) no bin stands out, and raising a few bins of every slot there costs more P95
/// delay than it spares freezes (docs/experiments/mmsys24-2026-12-06.md, section 6).
const MIN_RATIO: f64 = 3.0;

/// The losses of each bin in the recent slots, each slot's capped, and the bins found lossy.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SlotPhaseLoss {
    /// Per bin, the capped losses of the slots, forgotten per slot.
    losses: [f64; BINS],
    /// The slots seen, forgotten alike.
    slots: f64,
    slots_seen: u64,
    /// The instant of the slot being counted, and each bin's losses in it.
    current: Option<(Instant, [u32; BINS])>,
    /// Bit `b` set: bin `b` is a lossy phase.
    lossy: u32,
}

impl Default for SlotPhaseLoss {
    fn default() -> Self {
        Self {
            losses: [0.0; BINS],
            slots: 0.0,
            slots_seen: 0,
            current: None,
            lossy: 0,
        }
    }
}

impl SlotPhaseLoss {
    /// One packet's fate: sent `after_ms` after the predicted instant `at`, the latest before it;
    /// offsets past the slot are not binned. Feedback comes in send order, so a later instant
    /// closes the slot before it.
    pub(crate) fn record(&mut self, at: Instant, after_ms: u64, lost: bool) {
        let bin = (after_ms / PHASE_BIN_MS) as usize;
        if bin >= BINS {
            return;
        }
        match &mut self.current {
            Some((slot, _)) if *slot > at => {}
            Some((slot, counts)) if *slot == at => counts[bin] += u32::from(lost),
            _ => {
                self.close_slot();
                let mut counts = [0; BINS];
                counts[bin] = u32::from(lost);
                self.current = Some((at, counts));
            }
        }
    }

    /// Counts the slot being recorded.
    fn close_slot(&mut self) {
        let Some((_, counts)) = self.current.take() else {
            return;
        };
        let keep = 1.0 - 1.0 / SLOT_MEMORY;
        self.slots = self.slots * keep + 1.0;
        self.slots_seen += 1;
        for (sum, count) in self.losses.iter_mut().zip(counts) {
            *sum = *sum * keep + f64::from(count.min(SLOT_CAP));
        }
    }

    /// Tests every bin against the slot's median bin; returns whether the lossy bins changed.
    pub(crate) fn update(&mut self) -> bool {
        let before = self.lossy;
        if self.slots_seen < MIN_SLOTS || self.slots <= 0.0 {
            return false;
        }
        let per_slot = self.per_slot();
        let median = sorted(per_slot.clone())[per_slot.len() / 2];
        self.lossy = 0;
        for (&losses, b) in per_slot.iter().zip(TESTED) {
            if losses >= MIN_PER_SLOT && losses >= MIN_RATIO * median {
                self.lossy |= 1 << b;
            }
        }
        self.lossy != before
    }

    /// How many more lost packets a slot the lossiest tested bin averages than the median
    /// tested bin, each slot's count capped at [`SLOT_CAP`]: from 0 (no bin stands out) to 3 (a
    /// bin that loses its cap in every slot where the others lose nothing); `None` before a slot
    /// closed. Unlike the verdict of [`Self::update`] it is read from the first slot on, for a
    /// policy that weighs it with the rest of a short measuring window (docs/architecture.md,
    /// "The model and its card", path cards).
    pub(crate) fn excess_per_slot(&self) -> Option<f64> {
        if self.slots_seen == 0 || self.slots <= 0.0 {
            return None;
        }
        let per_slot = sorted(self.per_slot());
        let median = per_slot[per_slot.len() / 2];
        let worst = per_slot[per_slot.len() - 1];
        Some(worst - median)
    }

    /// Each tested bin's capped losses a slot, in bin order.
    fn per_slot(&self) -> Vec<f64> {
        self.losses[TESTED]
            .iter()
            .map(|&sum| sum / self.slots)
            .collect()
    }

    /// The lossy phases, merged, as `(from_ms, to_ms)` after the predicted instant.
    pub(crate) fn lossy_spans(&self) -> Vec<(u64, u64)> {
        let mut spans: Vec<(u64, u64)> = Vec::new();
        for b in TESTED.filter(|b| self.lossy & (1 << b) != 0) {
            let (from, to) = (b as u64 * PHASE_BIN_MS, (b as u64 + 1) * PHASE_BIN_MS);
            match spans.last_mut() {
                Some(last) if last.1 == from => last.1 = to,
                _ => spans.push((from, to)),
            }
        }
        spans
    }
}

/// `values`, ascending.
fn sorted(mut values: Vec<f64>) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `slots` slots of packets every 5 ms, those sent in `[lossy_from, lossy_to)` ms after the
    /// instant lost one in `every_lossy`, the others one in `every`.
    fn fed(slots: usize, lossy: (u64, u64), every_lossy: usize, every: usize) -> SlotPhaseLoss {
        let mut phase = SlotPhaseLoss::default();
        feed(
            &mut phase,
            1,
            Instant::now(),
            slots,
            lossy,
            every_lossy,
            every,
        );
        phase
    }

    /// Packets every 5 ms over `slots` slots from `start`, lost at random (xorshift from `seed`), one
    /// in `every_lossy` of those sent in `[lossy.0, lossy.1)` ms after the instant and one in
    /// `every` of the others; returns the next slot's instant.
    fn feed(
        phase: &mut SlotPhaseLoss,
        seed: u64,
        start: Instant,
        slots: usize,
        lossy: (u64, u64),
        every_lossy: usize,
        every: usize,
    ) -> Instant {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ seed;
        let mut lost = |every: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state.is_multiple_of(every as u64)
        };
        let mut at = start;
        for _ in 0..slots {
            for after_ms in (0..PHASE_SPAN_MS).step_by(5) {
                let n = if (lossy.0..lossy.1).contains(&after_ms) {
                    every_lossy
                } else {
                    every
                };
                phase.record(at, after_ms, lost(n));
            }
            phase.update();
            at += std::time::Duration::from_millis(PHASE_SPAN_MS);
        }
        at
    }

    #[test]
    fn a_path_that_loses_4_to_5_s_after_each_instant_has_that_phase_found() {
        let phase = fed(10, (4_000, 5_000), 20, 400);
        assert_eq!(phase.lossy_spans(), vec![(4_000, 5_000)]);
    }

    #[test]
    fn uniform_loss_and_loss_at_the_instant_find_no_phase() {
        assert!(fed(40, (0, 0), 1, 40).lossy_spans().is_empty());
        // A phase that loses 5 % on a path that loses 2.5 % everywhere is the background's.
        assert!(fed(40, (4_000, 5_000), 20, 40).lossy_spans().is_empty());
        // The half second before the next instant is the lead's.
        assert!(fed(40, (14_500, 15_000), 2, 400).lossy_spans().is_empty());
        // The first half second is the boundary windows' and the receiver gate's.
        assert!(fed(40, (0, 300), 2, 400).lossy_spans().is_empty());
    }

    #[test]
    fn too_few_slots_find_nothing_and_a_phase_that_stops_losing_is_dropped() {
        assert!(fed(5, (4_000, 5_000), 20, 400).lossy_spans().is_empty());
        let mut phase = SlotPhaseLoss::default();
        let at = feed(&mut phase, 1, Instant::now(), 10, (4_000, 5_000), 20, 400);
        assert_eq!(phase.lossy_spans(), vec![(4_000, 5_000)]);
        feed(&mut phase, 2, at, 30, (0, 0), 1, 400);
        assert!(phase.lossy_spans().is_empty());
    }

    #[test]
    fn the_excess_reads_a_phase_from_the_first_slot_and_little_from_uniform_loss() {
        assert_eq!(SlotPhaseLoss::default().excess_per_slot(), None);
        // A phase that loses one packet in five: its bins reach the cap in every slot.
        let phase = fed(3, (4_000, 5_000), 5, 400);
        let excess = phase.excess_per_slot().unwrap();
        assert!(excess > 2.0, "{excess}");
        // One packet in 100 everywhere: about one loss a bin a slot, none standing out by much.
        let uniform = fed(3, (0, 0), 1, 100).excess_per_slot().unwrap();
        assert!(uniform < excess / 2.0, "{uniform} against {excess}");
    }

    #[test]
    fn a_burst_in_one_slot_is_not_a_phase() {
        // Background loss everywhere one packet in 400; in one slot of ten, a burst loses every
        // other packet of the 6-7 s bin.
        let mut phase = SlotPhaseLoss::default();
        let mut at = Instant::now();
        for slot in 0..10 {
            let burst = if slot == 3 { (6_000, 6_500) } else { (0, 0) };
            at = feed(&mut phase, slot, at, 1, burst, 2, 400);
        }
        assert!(phase.lossy_spans().is_empty());
    }
}

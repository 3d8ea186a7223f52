//! The followed raise cap: the raise may grow past its cap, up to a higher one, on a path whose
//! boundaries show frames that the lower cap lets freeze and the higher one would not
//! (docs/architecture.md, "Handover-timed actions", the followed raise cap).
//!
//! Why: the cap that pays differs between paths the sender cannot tell apart when the call
//! begins. On starlink a raise above 300 ms buys no freezes and costs P95 delay; on lagos-trace
//! 500 ms cuts freezes 11 % against 300 (90 calls each, docs/experiments/path-card-neighbours-2026-12-05.md,
//! section 5). What separates them is how late the boundaries' frames complete, which transport
//! feedback shows the sender ([`crate::nack::FrameLateness`]).
//!
//! A frame rendered `d` after its due instant stretches the gap before it from the frame
//! interval `T` to `T + d`; WebRTC counts a gap of `max(3 T, T + 150 ms)` or more as a freeze,
//! so at 30 fps a frame freezes the video when it completes more than [`FREEZE_SLACK`] after
//! its raised playout delay. A discardable frame freezes nothing (the receiver skips it, and no
//! later frame waits for it), so the stamper passes only the others. A boundary's frame is
//! *savable* when its lateness lies above the
//! raise the lower cap gives it plus that slack and at most the raise the higher cap would give
//! plus the slack. While at least `follow_min_windows` playout windows within the last
//! `follow_memory_ms` had a savable frame, the windows use the higher cap.
//!
//! Measured, it does not pay: on starlink and lagos-trace the savable windows come about as
//! often, so the rule raises the cap on both, and over 90 calls a fixed 350-ms cap does better
//! on both than any rule tried (docs/experiments/raise-follow-2026-12-05.md). It is off by
//! default and kept for paths where the two kinds of boundary differ.
//!
//! The measure does not depend on the cap in force (lateness is measured against the usual
//! transit, not against the raise the frame got), so raising the cap does not hide the evidence
//! that raised it.

use super::raise_at;
use crate::nack::FrameLateness;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How much later than its playout delay a frame may complete before the gap it leaves counts
/// as a freeze, at 30 fps: WebRTC's freeze rule, a rendered-frame gap of at least
/// `max(3 T, T + 150 ms)` (webrtc-stats `freezeCount`, libwebrtc `VideoQualityObserver`), less
/// the frame interval `T` (33 ms) the gap has anyway.
pub const FREEZE_SLACK: Duration = Duration::from_millis(150);

/// The most savable windows remembered (a bound; a 15-s slot grid puts eight in two minutes).
const MAX_SAVABLE: usize = 64;

/// The savable windows seen (their start instants, oldest first; see the module documentation).
#[derive(Debug, Default, Clone)]
pub(crate) struct CapFollower {
    savable: VecDeque<Instant>,
}

impl CapFollower {
    /// Judges `frames` against the raise each cap gives: `low` and `high` are the playout
    /// windows `(start, end, amount)` under the lower and the higher cap, in the same order.
    pub(crate) fn observe(
        &mut self,
        frames: &[FrameLateness],
        low: &[(Instant, Instant, Duration)],
        high: &[(Instant, Instant, Duration)],
    ) {
        for frame in frames {
            let Some((window, low_raise)) = low
                .iter()
                .map(|&w| (w.0, raise_at(frame.captured, &[w])))
                .max_by_key(|&(_, raise)| raise)
                .filter(|&(_, raise)| !raise.is_zero())
            else {
                continue;
            };
            let high_raise = raise_at(frame.captured, high);
            let savable = frame.lateness > low_raise + FREEZE_SLACK
                && frame.lateness <= high_raise + FREEZE_SLACK;
            if savable && !self.savable.contains(&window) {
                if self.savable.len() == MAX_SAVABLE {
                    self.savable.pop_front();
                }
                self.savable.push_back(window);
            }
        }
    }

    /// Whether the higher cap is in force at `now`: at least `min_windows` savable windows
    /// started within `memory` before it.
    pub(crate) fn raised(&self, now: Instant, memory: Duration, min_windows: u32) -> bool {
        let since = now.checked_sub(memory);
        let recent = self
            .savable
            .iter()
            .filter(|&&start| since.is_none_or(|since| start >= since) && start <= now)
            .count();
        min_windows > 0 && recent >= min_windows as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn late(captured: Instant, lateness: u64) -> FrameLateness {
        FrameLateness {
            ssrc: 1,
            captured,
            lateness: ms(lateness),
        }
    }

    #[test]
    fn only_frames_the_higher_cap_would_save_count_and_a_window_counts_once() {
        let t0 = Instant::now();
        let window = |k: u64| (t0 + ms(15_000 * k), t0 + ms(15_000 * k + 200));
        let low: Vec<_> = (1..=4)
            .map(|k| (window(k).0, window(k).1, ms(300)))
            .collect();
        let high: Vec<_> = (1..=4)
            .map(|k| (window(k).0, window(k).1, ms(500)))
            .collect();
        let mut f = CapFollower::default();
        let inside = |k: u64| window(k).0 + ms(100);
        f.observe(
            &[
                late(inside(1), 440),          // within the lower cap's slack
                late(inside(2), 700),          // beyond the higher cap's too
                late(t0 + ms(7_000), 600),     // away from every window
                late(inside(3), 600),          // savable
                late(inside(3) + ms(33), 620), // the same window again
            ],
            &low,
            &high,
        );
        let now = t0 + ms(61_000);
        assert!(f.raised(now, ms(120_000), 1));
        assert!(!f.raised(now, ms(120_000), 2), "one window, counted once");
        f.observe(&[late(inside(4), 520)], &low, &high);
        assert!(f.raised(now, ms(120_000), 2));
        assert!(
            !f.raised(now, ms(10_000), 2),
            "the first one is past the memory"
        );
        assert!(!f.raised(now, ms(120_000), 0), "zero windows: never");
    }

    #[test]
    fn on_a_ramp_the_raise_each_cap_gives_there_decides() {
        let t0 = Instant::now();
        let (start, end) = (t0 + ms(10_000), t0 + ms(10_200));
        let mut f = CapFollower::default();
        // 250 ms after the window: the lower cap's ramp has 50 ms left, the higher one's 250.
        let at = end + ms(250);
        f.observe(
            &[late(at, 300)],
            &[(start, end, ms(300))],
            &[(start, end, ms(500))],
        );
        assert!(f.raised(at, ms(120_000), 1));
    }
}

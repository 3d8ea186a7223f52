//! The followed raise cap: the raise grows past its cap, up to a higher one, on a path whose
//! boundaries show frames that complete too late for the lower cap (docs/architecture.md,
//! "Handover-timed actions", the followed raise cap).
//!
//! Why: the cap that pays differs between paths the sender cannot tell apart when the call
//! begins. On starlink a raise above 300 ms buys no freezes and costs P95 delay; on lagos-trace
//! 500 ms cuts freezes 11 % against 300 (90 calls each, docs/experiments/path-card-neighbours-2026-12-05.md,
//! section 5). What separates them is how late the boundaries' frames complete, which transport
//! feedback shows the sender ([`crate::nack::FrameLateness`]): once FlexFEC recovery is counted,
//! of the boundaries' frames that are not discardable 1 in 5 510 completed more than 400 ms late
//! on starlink and 158 in 5 387 on lagos-trace, in each of six calls
//! (docs/experiments/raise-follow-2026-12-05.md, section 2).
//!
//! A frame rendered `d` after its due instant stretches the gap before it from the frame
//! interval `T` to `T + d`; WebRTC counts a gap of `max(3 T, T + 150 ms)` or more as a freeze,
//! so a frame that completes more than [`FREEZE_SLACK`] after its window's raise freezes the
//! video. A discardable frame freezes nothing (the receiver skips it, and no later frame waits
//! for it), so the stamper passes only the others. A playout window is *late* when one of its
//! frames (captured where the window's raise, ramps included, reaches) completed more than the
//! window's full raise under the lower cap plus that slack after the usual transit. While at
//! least `follow_min_windows` late windows started within the last `follow_memory_ms`, the
//! windows use the higher cap.
//!
//! The measure does not depend on the cap in force (lateness is measured against the usual
//! transit, not against the raise the frame got), so raising the cap does not hide the evidence
//! that raised it.

use super::raise_at;
use crate::nack::FrameLateness;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How much later than its raised playout delay a frame may complete before it freezes the
/// video: WebRTC's freeze rule, a rendered-frame gap of at least `max(3 T, T + 150 ms)`
/// (webrtc-stats `freezeCount`, libwebrtc `VideoQualityObserver`), less the frame interval `T`
/// the gap has anyway, at up to 75 ms frame intervals (13 fps and more).
pub const FREEZE_SLACK: Duration = Duration::from_millis(150);

/// The most late windows remembered (a bound; a 15-s slot grid puts 40 in ten minutes).
const MAX_LATE_WINDOWS: usize = 64;

/// The late windows seen (their start instants, oldest first; see the module documentation).
#[derive(Debug, Default, Clone)]
pub(crate) struct CapFollower {
    late: VecDeque<Instant>,
}

impl CapFollower {
    /// Judges `frames` against the playout windows `(start, end, amount)` under the lower cap.
    pub(crate) fn observe(
        &mut self,
        frames: &[FrameLateness],
        windows: &[(Instant, Instant, Duration)],
    ) {
        for frame in frames {
            let Some(&(start, _, amount)) = windows
                .iter()
                .map(|w| (w, raise_at(frame.captured, &[*w])))
                .filter(|&(_, raise)| !raise.is_zero())
                .max_by_key(|&(_, raise)| raise)
                .map(|(w, _)| w)
            else {
                continue;
            };
            if frame.lateness > amount + FREEZE_SLACK && !self.late.contains(&start) {
                if self.late.len() == MAX_LATE_WINDOWS {
                    self.late.pop_front();
                }
                self.late.push_back(start);
            }
        }
    }

    /// Whether the higher cap is in force at `now`: at least `min_windows` late windows started
    /// within `memory` before it.
    pub(crate) fn raised(&self, now: Instant, memory: Duration, min_windows: u32) -> bool {
        let since = now.checked_sub(memory);
        let recent = self
            .late
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
            completed: Duration::ZERO,
            bytes: 0,
            repaired: false,
        }
    }

    #[test]
    fn only_frames_later_than_the_lower_raise_and_the_slack_count_and_a_window_counts_once() {
        let t0 = Instant::now();
        let window = |k: u64| (t0 + ms(15_000 * k), t0 + ms(15_000 * k + 200), ms(300));
        let windows: Vec<_> = (1..=4).map(window).collect();
        let inside = |k: u64| window(k).0 + ms(100);
        let mut f = CapFollower::default();
        f.observe(
            &[
                late(inside(1), 440),          // within the raise and the slack
                late(t0 + ms(7_000), 900),     // away from every window
                late(inside(3), 460),          // late
                late(inside(3) + ms(33), 900), // the same window again
            ],
            &windows,
        );
        let now = t0 + ms(61_000);
        assert!(f.raised(now, ms(120_000), 1));
        assert!(!f.raised(now, ms(120_000), 2), "one window, counted once");
        f.observe(&[late(inside(4), 2_000)], &windows);
        assert!(f.raised(now, ms(120_000), 2), "however late");
        assert!(
            !f.raised(now, ms(10_000), 2),
            "the first one is past the memory"
        );
        assert!(!f.raised(now, ms(120_000), 0), "zero windows: never");
    }

    #[test]
    fn a_frame_on_a_ramp_is_its_window_s_and_judged_against_the_full_raise() {
        let t0 = Instant::now();
        let (start, end) = (t0 + ms(10_000), t0 + ms(10_200));
        let mut f = CapFollower::default();
        // 250 ms after the window the raise has 50 ms left, but the frame is judged against
        // the window's 300.
        let at = end + ms(250);
        f.observe(&[late(at, 400)], &[(start, end, ms(300))]);
        assert!(!f.raised(at, ms(120_000), 1));
        f.observe(&[late(at, 451)], &[(start, end, ms(300))]);
        assert!(f.raised(at, ms(120_000), 1));
        // Past the ramp it belongs to no window.
        f = CapFollower::default();
        f.observe(&[late(end + ms(301), 900)], &[(start, end, ms(300))]);
        assert!(!f.raised(at, ms(120_000), 1));
    }
}

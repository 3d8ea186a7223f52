//! The weighed floor: the playout floor applies while the sender's replay of the receiver's
//! playout says that, over the last stretch of the call, it would have spared more freezes than
//! it would have cost in delay (docs/architecture.md, "Handover-timed actions", the weighed
//! floor).
//!
//! Why: a 100-ms floor for every frame cuts lagos-trace's freezes by a quarter at a few per cent
//! of P95 delay, and costs starlink, sparse-leo and the terrestrial paths P95 delay without a
//! freeze to show for it (docs/experiments/playout-floor-2026-12-06.md, section 4). Whether it
//! pays follows two things a receiver sees: how often frames come too late for a receiver that
//! expects them at the usual transit, and how far the floor lifts the delay of the frames that
//! set the 95th percentile. The sender replays both from transport feedback.
//!
//! The replay is a *shadow receiver*, run twice: without the floor and with it. Transport
//! feedback gives each frame's completion on the receiver's clock, FlexFEC recovery and
//! retransmissions counted, its size and whether a repair made it whole ([`FrameLateness`]).
//! Each shadow receiver runs the receiver's own timing model on them ([`crate::receiver`], as
//! rtc-client's receiver does): the expected completion learned from the frames that needed no
//! repair, libwebrtc's jitter estimate, and the current delay that grows when frames come late
//! and falls with the estimate; the minimum playout delay is the raise the frame asked for (the
//! windows' raise; with the floor, at least the floor). Frames decode in capture order, none
//! before the frame ahead of it; a discardable frame that completes after its render time is
//! skipped, holding up nothing. Where a frame renders more than [`FREEZE_SLACK`] later, relative
//! to the frame ahead of it, than their captures are apart, WebRTC counts a freeze as long as
//! that gap (`max(3 T, T + 150 ms)` at the frame intervals of 13 fps and more). A frame's delay
//! from capture to render is its render time less its capture on the receiver's clock, the
//! unknown offset between the clocks taken as the median over the call's first frames of their
//! transit less half the round trip ([`OFFSET_FRAMES`]).
//!
//! The floor is weighed for the frames of the last `memory` against the call so far, because
//! that is what a call's figures read: the freezes a minute it would have spared in those frames,
//! over the minutes of the call, against ten times the relative rise it would have brought the
//! call's 95th percentile delay, the earlier frames counted as they were played (with the floor
//! where it applied). That is the utility the path-aware policy's labels use
//! (docs/architecture.md, "The model and its card", a 10 % P95 rise weighs one freeze a minute);
//! the floor is *worth* it when the spared freezes weigh more and the rise is at most
//! [`MAX_P95_RISE`]. A 95th percentile is not additive, so the call's matters, not the minute's:
//! a minute with few late frames can read as a steep rise alone while the call's P95, set by its
//! late minutes, does not move; and on the training family's bursty paths, minutes each worth a
//! floor by their own P95 lifted the call's 12.5 %
//! (docs/experiments/weighed-floor-2026-12-06.md, sections 3 and 6). Where the floor would have
//! spared nothing and cost nothing (the frames that set the 95th percentile are late with or
//! without it), it stays as it was: such a minute is no evidence either way. Neither replay
//! depends on whether the floor is in force (the arrivals are the same either way), so
//! applying it does not hide the evidence that put it there, as with the followed cap
//! ([`super::follow`]).
//!
//! Frames are replayed in capture order once every frame captured up to them has had time to
//! report ([`SETTLE`]): a frame completed late by a retransmission reports after the frames
//! behind it, and it is the one that held them up.

use super::FREEZE_SLACK;
use crate::nack::FrameLateness;
use crate::receiver::jitter::JitterEstimator;
use crate::receiver::playout::{PlayoutConfig, PlayoutTiming};
use crate::time::Time;
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// How long after its capture a frame is replayed: by then a frame has completed, through a
/// second repair round at the 600-ms round trips of the slowest shipped paths, or never will
/// (the responder's history keeps packets at least one second).
const SETTLE: Duration = Duration::from_secs(2);

/// How many of the first replayed frames the clocks' offset is the median over: 64, two seconds
/// at 30 fps, so that neither the first key frame, which completes late for its size, nor a
/// boundary's late frames set it.
const OFFSET_FRAMES: usize = 64;

/// How often the floor's worth is weighed again: once a second, 30 frames.
const REWEIGH: Duration = Duration::from_secs(1);

/// The least span of replayed frames a weighed floor is weighed over: 30 s, 900 frames at 30 fps,
/// so that the 95th percentile rests on 45 of them and the call's first seconds (the estimate's
/// ramp, the first boundaries before any repair was measured) cannot decide alone.
pub const MIN_SPAN: Duration = Duration::from_secs(30);

/// How many freezes a minute a P95 rise of 100 % weighs: 10, so that a 10 % rise weighs one
/// freeze a minute, as in the path-aware policy's utility (docs/architecture.md, "The model and
/// its card").
const P95_WEIGHT: f64 = 10.0;

/// The largest rise of the call's 95th percentile delay the floor may bring, whatever it
/// spares: the project's goal allows at most 10 % more P95 delay than libwebrtc's sender
/// (docs/results.md, the goal). Early in a call the call is the minute: on sparse-leo, whose P95
/// delay sits 16 ms above its median (tuning seeds, 30 calls), the first minutes of some calls
/// spared 9-12 freezes and frozen seconds a minute at a 67-95 % rise, and without this bound the
/// floored minutes set those calls' P95 for good: +11 % over the 30 calls
/// (docs/experiments/weighed-floor-2026-12-06.md, section 3).
const MAX_P95_RISE: f64 = 0.10;

/// The most frames waiting to settle, or remembered with their raise (a bound: two seconds at
/// 60 fps is 120).
const MAX_PENDING: usize = 512;

/// The most replayed frames remembered: the call so far, up to ten minutes at 60 fps (beyond,
/// the oldest are forgotten).
const MAX_REPLAYED: usize = 36_000;

/// One frame waiting to be replayed.
#[derive(Debug, Clone, Copy)]
struct Reported {
    /// When it became whole, on the receiver's clock.
    completed: Duration,
    bytes: u32,
    repaired: bool,
    discardable: bool,
}

/// One frame on the shadow receivers' clock: the receiver's, from [`FloorWeigher::origin`].
#[derive(Debug, Clone, Copy)]
struct Arrived {
    captured: Time,
    completed: Time,
    bytes: u32,
    repaired: bool,
    discardable: bool,
}

/// What the two shadow receivers share: the arrivals, and so the expected completion and the
/// jitter estimate, which the playout delay does not change.
#[derive(Debug, Clone)]
struct Arrivals {
    jitter: JitterEstimator,
    /// The last frame that needed no repair: its capture and completion.
    previous_clean: Option<(Time, Time)>,
}

impl Arrivals {
    /// Takes a frame into the jitter estimate, as the receiver does when it decodes it at `now`
    /// (rtc-client `media::receiver`); whether it teaches the expected completion.
    fn take(&mut self, now: Time, frame: &Arrived) -> bool {
        if frame.repaired {
            self.jitter.on_frame_retransmitted(now);
            return false;
        }
        if let Some((capture, completed)) = self.previous_clean
            && frame.captured > capture
        {
            let arrival = frame.completed.as_nanos() as f64 - completed.as_nanos() as f64;
            let media = frame.captured.as_nanos() as f64 - capture.as_nanos() as f64;
            self.jitter
                .on_frame(frame.completed, (arrival - media) / 1e6, frame.bytes);
        }
        self.previous_clean = Some((frame.captured, frame.completed));
        true
    }
}

/// One shadow receiver's playout: its timing, when it last decoded, and the last frame it
/// rendered (its capture and render time).
#[derive(Debug, Clone)]
struct Shadow {
    timing: PlayoutTiming,
    decoded: Time,
    last: Option<(Time, Time)>,
}

/// What one shadow receiver did with one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rendered {
    /// From its capture to its render time.
    delay: Duration,
    /// The gap before it, if it was a freeze.
    freeze: Option<Duration>,
}

impl Shadow {
    fn new() -> Self {
        Self {
            timing: PlayoutTiming::new(PlayoutConfig::default()),
            decoded: Time::ZERO,
            last: None,
        }
    }

    /// Decodes and renders `frame` with the minimum playout delay `minimum` and the `jitter`
    /// estimate; `None` for a discardable frame that completed after its render time, which is
    /// skipped.
    fn render(&mut self, frame: &Arrived, jitter: Duration, minimum: Duration) -> Option<Rendered> {
        let now = frame.completed.max(self.decoded);
        if frame.discardable
            && now
                > self
                    .timing
                    .render_time(now, frame.captured, jitter, minimum)
        {
            return None;
        }
        self.decoded = now;
        let mut rendered = self.timing.schedule(now, frame.captured, jitter, minimum);
        let mut freeze = None;
        if let Some((previous, previous_rendered)) = self.last {
            rendered = rendered.max(previous_rendered);
            let gap = rendered - previous_rendered;
            if gap.saturating_sub(frame.captured - previous) >= FREEZE_SLACK {
                freeze = Some(gap);
            }
        }
        self.last = Some((frame.captured, rendered));
        Some(Rendered {
            delay: rendered - frame.captured,
            freeze,
        })
    }
}

/// One replayed frame: its capture and what each shadow receiver did with it (without the
/// floor, with it).
#[derive(Debug, Clone, Copy)]
struct Replayed {
    captured: Instant,
    /// Whether the floor was applied to it.
    applied: bool,
    shadows: [Option<Rendered>; 2],
}

/// The two shadow receivers and what they rendered (module documentation).
#[derive(Debug, Clone)]
pub(crate) struct FloorWeigher {
    floor: Duration,
    /// The sender's instant the shadows' clock counts from: the first frame's.
    origin: Instant,
    /// Each of the first [`OFFSET_FRAMES`] replayed frames' transit less half the round trip,
    /// nanoseconds: the receiver's clock less the sender's, give or take the path's asymmetry.
    offsets: Vec<i128>,
    /// Their median once all [`OFFSET_FRAMES`] are in: the offset for the rest of the call.
    offset: Option<i128>,
    /// The windows' raise each recent frame asked for, by capture instant, oldest first.
    asked: VecDeque<(Instant, Duration, bool)>,
    /// Frames reported and not yet replayed, by capture instant.
    reported: BTreeMap<Instant, Reported>,
    /// The last frame replayed.
    replayed_to: Option<Instant>,
    arrivals: Arrivals,
    shadows: [Shadow; 2],
    /// The replayed frames of the call, oldest first (at most [`MAX_REPLAYED`]).
    replayed: VecDeque<Replayed>,
    /// When the worth was last weighed, and what it came to.
    weighed: Option<(Instant, bool)>,
}

impl FloorWeigher {
    /// A follower weighing a floor of `floor`, from the first frame, captured at `origin`.
    pub(crate) fn new(floor: Duration, origin: Instant) -> Self {
        Self {
            floor,
            origin,
            offsets: Vec::new(),
            offset: None,
            asked: VecDeque::new(),
            reported: BTreeMap::new(),
            replayed_to: None,
            arrivals: Arrivals {
                jitter: JitterEstimator::new(),
                previous_clean: None,
            },
            shadows: [Shadow::new(), Shadow::new()],
            replayed: VecDeque::new(),
            weighed: None,
        }
    }

    /// The floor it weighs.
    pub(crate) fn floor(&self) -> Duration {
        self.floor
    }

    /// Notes the raise (the windows', without the floor) a frame captured at `captured` asked
    /// for.
    pub(crate) fn asked(&mut self, captured: Instant, raise: Duration) {
        if self.asked.len() == MAX_PENDING {
            self.asked.pop_front();
        }
        self.asked.push_back((captured, raise, false));
    }

    /// Takes the frames transport feedback completed (`discardable` tells which the receiver
    /// may skip), then replays those that have settled by `now`; `one_way` is half the round
    /// trip now. Frames captured before the weigher began are not weighed: where a call turns a
    /// weighed floor on mid-call (the path card after a window under libwebrtc's sender), the
    /// frames completed in that window wait to be taken, and on the shadows' clock, which starts
    /// at the weigher's first frame, they would all have been captured at once.
    pub(crate) fn observe(
        &mut self,
        now: Instant,
        frames: &[FrameLateness],
        discardable: impl Fn(Instant) -> bool,
        one_way: Duration,
    ) {
        for frame in frames {
            if frame.captured < self.origin
                || self.replayed_to.is_some_and(|at| frame.captured <= at)
            {
                continue;
            }
            if self.reported.len() == MAX_PENDING {
                self.reported.pop_first();
            }
            self.reported.insert(
                frame.captured,
                Reported {
                    completed: frame.completed,
                    bytes: frame.bytes,
                    repaired: frame.repaired,
                    discardable: discardable(frame.captured),
                },
            );
        }
        let Some(settled) = now.checked_sub(SETTLE) else {
            return;
        };
        while let Some(entry) = self.reported.first_entry() {
            if *entry.key() > settled {
                break;
            }
            let (captured, frame) = entry.remove_entry();
            self.replay(captured, frame, one_way);
        }
        while self.asked.front().is_some_and(|&(at, _, _)| at <= settled) {
            self.asked.pop_front();
        }
    }

    /// The frame captured at `captured` on the shadows' clock.
    fn arrived(&mut self, captured: Instant, frame: Reported, one_way: Duration) -> Arrived {
        let captured = Time::from_instant(self.origin, captured);
        let transit = frame.completed.as_nanos() as i128 - i128::from(captured.as_nanos());
        let offset = match self.offset {
            Some(offset) => offset,
            None => {
                self.offsets.push(transit - one_way.as_nanos() as i128);
                let mut sorted = self.offsets.clone();
                let middle = (sorted.len() - 1) / 2;
                let offset = *sorted.select_nth_unstable(middle).1;
                if self.offsets.len() == OFFSET_FRAMES {
                    self.offset = Some(offset);
                }
                offset
            }
        };
        let completed = u64::try_from(transit - offset)
            .map_or(captured, |transit| captured + Duration::from_nanos(transit));
        Arrived {
            captured,
            completed,
            bytes: frame.bytes,
            repaired: frame.repaired,
            discardable: frame.discardable,
        }
    }

    fn replay(&mut self, captured: Instant, frame: Reported, one_way: Duration) {
        let (raise, applied) = self
            .asked
            .iter()
            .find(|&&(at, _, _)| at == captured)
            .map_or((Duration::ZERO, false), |&(_, raise, applied)| {
                (raise, applied)
            });
        let arrived = self.arrived(captured, frame, one_way);
        let now = arrived.completed.max(self.shadows[0].decoded);
        if self.arrivals.take(now, &arrived) {
            for shadow in &mut self.shadows {
                shadow
                    .timing
                    .on_frame_complete(arrived.captured, arrived.completed);
            }
        }
        let jitter = self.arrivals.jitter.estimate(now);
        let [without, with] = &mut self.shadows;
        let shadows = [
            without.render(&arrived, jitter, raise),
            with.render(&arrived, jitter, raise.max(self.floor)),
        ];
        if self.replayed.len() == MAX_REPLAYED {
            self.replayed.pop_front();
        }
        self.replayed.push_back(Replayed {
            captured,
            applied,
            shadows,
        });
        self.replayed_to = Some(captured);
    }

    /// Whether the floor is worth it at `now` for the frames captured within `memory` before it
    /// (module documentation), and so for the frame captured at `now`, which is noted as floored
    /// or not. Weighed again at most every [`REWEIGH`]; not worth it before [`MIN_SPAN`] of those
    /// frames has been replayed.
    pub(crate) fn worth(&mut self, now: Instant, memory: Duration) -> bool {
        let previous = self.weighed.is_some_and(|(_, worth)| worth);
        let worth = match self.weighed {
            Some((at, worth)) if now.saturating_duration_since(at) < REWEIGH => worth,
            _ => {
                let worth = self.weigh(now.checked_sub(memory)).unwrap_or(previous);
                self.weighed = Some((now, worth));
                worth
            }
        };
        if let Some(last) = self.asked.back_mut()
            && last.0 == now
        {
            last.2 = worth;
        }
        worth
    }

    /// Whether the floor is worth it for the frames captured from `since` on, against the call
    /// so far; `None` where there is nothing to weigh: it would have spared no freeze and cost no
    /// delay.
    fn weigh(&self, since: Option<Instant>) -> Option<bool> {
        let recent = |f: &Replayed| since.is_none_or(|since| f.captured >= since);
        let (Some(call_start), Some(first), Some(last)) = (
            self.replayed.front(),
            self.replayed.iter().find(|f| recent(f)),
            self.replayed.back(),
        ) else {
            return Some(false);
        };
        if last.captured - first.captured < MIN_SPAN {
            return Some(false);
        }
        let minutes = (last.captured - call_start.captured).as_secs_f64() / 60.0;
        let mut spared = 0.0;
        let mut delays = [
            Vec::with_capacity(self.replayed.len()),
            Vec::with_capacity(self.replayed.len()),
        ];
        for f in &self.replayed {
            if recent(f) {
                // Without the floor a freeze costs, with it one is spared.
                let signs = [1.0, -1.0];
                for ((sign, delays), rendered) in signs.iter().zip(&mut delays).zip(f.shadows) {
                    let Some(rendered) = rendered else {
                        continue;
                    };
                    delays.push(rendered.delay);
                    if let Some(gap) = rendered.freeze {
                        spared += sign * (1.0 + gap.as_secs_f64());
                    }
                }
            } else if let Some(r) = f.shadows[usize::from(f.applied)] {
                delays[0].push(r.delay);
                delays[1].push(r.delay);
            }
        }
        let spared = spared / minutes;
        let p95 = delays.map(|mut d| percentile(&mut d, 0.95).as_secs_f64());
        let rise = if p95[0] > 0.0 {
            (p95[1] / p95[0] - 1.0).max(0.0)
        } else {
            0.0
        };
        if spared <= 0.0 && rise == 0.0 {
            return None;
        }
        Some(rise <= MAX_P95_RISE && spared > P95_WEIGHT * rise)
    }
}

/// The `q` quantile of `values` (nearest rank); zero for none.
fn percentile(values: &mut [Duration], q: f64) -> Duration {
    if values.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1;
    *values.select_nth_unstable(rank).1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// Frames of 1 000 bytes every 33 ms from `t0` for `n` frames, each completing 60 ms after
    /// its capture plus `late(i)`, on a receiver clock that reads 5 s at `origin`; a late frame
    /// was repaired.
    fn frames_from(
        origin: Instant,
        t0: Instant,
        n: u64,
        late: impl Fn(u64) -> u64,
    ) -> Vec<FrameLateness> {
        let offset = (t0 - origin) + ms(5_060);
        (0..n)
            .map(|i| FrameLateness {
                ssrc: 1,
                captured: t0 + ms(33 * i),
                lateness: ms(late(i)),
                completed: offset + ms(33 * i + late(i)),
                bytes: 1_000,
                repaired: late(i) > 0,
            })
            .collect()
    }

    /// [`frames_from`] a call that starts at `t0`.
    fn frames(t0: Instant, n: u64, late: impl Fn(u64) -> u64) -> Vec<FrameLateness> {
        frames_from(t0, t0, n, late)
    }

    /// Hands `frames` over as transport feedback would, each 100 ms after its capture, then lets
    /// them all settle; the instant after.
    fn feed(
        f: &mut FloorWeigher,
        frames: &[FrameLateness],
        discardable: impl Fn(Instant) -> bool,
    ) -> Instant {
        for frame in frames {
            f.observe(
                frame.captured + ms(100),
                std::slice::from_ref(frame),
                &discardable,
                ms(150),
            );
        }
        let end = frames.last().map_or_else(Instant::now, |f| f.captured) + SETTLE;
        f.observe(end, &[], &discardable, ms(150));
        end
    }

    fn freezes(f: &FloorWeigher, shadow: usize) -> usize {
        f.replayed
            .iter()
            .filter(|r| r.shadows[shadow].is_some_and(|s| s.freeze.is_some()))
            .count()
    }

    #[test]
    fn a_frame_late_past_the_slack_freezes_unless_the_floor_covers_it_and_a_drift_never() {
        let t0 = Instant::now();
        let mut f = FloorWeigher::new(ms(100), t0);
        // Frame 50 completes 200 ms late, frame 70 300 ms: both freeze without the floor, the
        // first is spared with it. Frames 100-199 grow 5 ms later each: no gap reaches the slack.
        let late = |i: u64| match i {
            50 => 200,
            70 => 300,
            100..200 => (i - 100) * 5,
            _ => 0,
        };
        feed(&mut f, &frames(t0, 300, late), |_| false);
        assert_eq!((freezes(&f, 0), freezes(&f, 1)), (2, 1));
    }

    #[test]
    fn the_raise_asked_for_and_a_skipped_discardable_frame_spare_a_freeze() {
        let t0 = Instant::now();
        let late = |i: u64| if i == 50 { 200 } else { 0 };
        let mut raised = FloorWeigher::new(ms(100), t0);
        for i in 40..60 {
            raised.asked(t0 + ms(33 * i), ms(100));
        }
        feed(&mut raised, &frames(t0, 100, late), |_| false);
        assert_eq!(freezes(&raised, 0), 0, "200 ms late against a 100-ms raise");
        let mut alone = FloorWeigher::new(ms(100), t0);
        alone.asked(t0 + ms(33 * 50), ms(100));
        feed(&mut alone, &frames(t0, 100, late), |_| false);
        assert_eq!(freezes(&alone, 0), 1, "the frame ahead rendered at once");
        let mut skipped = FloorWeigher::new(ms(100), t0);
        let discardable = |at: Instant| at == t0 + ms(33 * 50);
        feed(&mut skipped, &frames(t0, 100, late), discardable);
        assert_eq!(freezes(&skipped, 0), 0);
    }

    /// The no-floor shadow's median delay from capture to render over `frames`, fed with a
    /// one-way transit of 150 ms.
    fn median_delay(t0: Instant, frames: &[FrameLateness]) -> Duration {
        let mut f = FloorWeigher::new(ms(100), t0);
        feed(&mut f, frames, |_| false);
        let mut delays: Vec<_> = f
            .replayed
            .iter()
            .filter_map(|r| r.shadows[0].map(|s| s.delay))
            .collect();
        percentile(&mut delays, 0.5)
    }

    #[test]
    fn a_late_first_frame_does_not_set_the_clocks_offset() {
        let t0 = Instant::now();
        // The key frame completes 300 ms late for its size; the frames after it take the
        // one-way transit the feedback reads (150 ms) plus the receiver's small delay.
        let late_key = frames(t0, 300, |i| if i == 0 { 300 } else { 0 });
        let delay = median_delay(t0, &late_key);
        assert!((ms(150)..ms(180)).contains(&delay), "{delay:?}");
    }

    #[test]
    fn arrival_jitter_raises_the_shadow_s_delay_as_the_receiver_s_jitter_estimate_does() {
        let t0 = Instant::now();
        let steady = median_delay(t0, &frames(t0, 900, |_| 0));
        // Every other frame arrives 40 ms late, none repaired: the jitter estimate grows past
        // the 40 ms and the receiver waits for it, on time frames too.
        let mut jittery = frames(t0, 900, |i| if i % 2 == 1 { 40 } else { 0 });
        for frame in &mut jittery {
            frame.repaired = false;
        }
        let waiting = median_delay(t0, &jittery);
        assert!(waiting >= steady + ms(40), "{steady:?} {waiting:?}");
    }

    #[test]
    fn frames_wait_to_settle_and_replay_in_capture_order() {
        let t0 = Instant::now();
        let all = frames(t0, 100, |i| if i == 50 { 400 } else { 0 });
        let mut f = FloorWeigher::new(ms(100), t0);
        f.observe(t0 + ms(33 * 60), &all[..50], |_| false, ms(150));
        f.observe(t0 + ms(33 * 60), &all[51..60], |_| false, ms(150));
        // The late frame reports after the frames behind it, before it settles.
        f.observe(t0 + ms(33 * 60 + 100), &all[50..51], |_| false, ms(150));
        assert_eq!(freezes(&f, 0), 0, "nothing has settled");
        f.observe(t0 + ms(33 * 60) + SETTLE, &[], |_| false, ms(150));
        assert_eq!(freezes(&f, 0), 1);
    }

    #[test]
    fn the_call_s_p95_not_the_minute_s_is_what_the_floor_lifts() {
        let t0 = Instant::now();
        // Two minutes in which every tenth frame completes 300 ms late set the call's P95;
        // then a minute whose only late frames are six freezes the floor spares. Read alone,
        // that minute's P95 would rise 56 % with the floor; the call's does not move.
        let rough = frames(t0, 3_600, |i| if i % 10 == 0 { 300 } else { 0 });
        let calm = frames_from(t0, t0 + ms(120_000), 1_800, |i| {
            if i % 300 == 150 { 200 } else { 0 }
        });
        let mut f = FloorWeigher::new(ms(100), t0);
        feed(&mut f, &rough, |_| false);
        let end = feed(&mut f, &calm, |_| false);
        assert!(f.worth(end, ms(60_000)));
        let mut alone = FloorWeigher::new(ms(100), t0);
        let end = feed(&mut alone, &calm, |_| false);
        assert!(!alone.worth(end, ms(60_000)));
    }

    #[test]
    fn frames_captured_before_the_weigher_began_are_not_weighed() {
        let t0 = Instant::now();
        let start = t0 + ms(30_000);
        // 30 s of frames completed under another profile wait to be taken when a call turns the
        // weighed floor on; then a steady minute in which the floor would only cost delay.
        let before = frames_from(t0, t0, 900, |i| if i % 100 == 50 { 250 } else { 0 });
        let after = frames_from(t0, start, 1_800, |i| if i % 600 == 150 { 200 } else { 0 });
        let mut fresh = FloorWeigher::new(ms(100), start);
        let end = feed(&mut fresh, &after, |_| false);
        let mut switched = FloorWeigher::new(ms(100), start);
        switched.observe(start, &before, |_| false, ms(150));
        assert_eq!(feed(&mut switched, &after, |_| false), end);
        assert_eq!(
            (freezes(&switched, 0), freezes(&switched, 1)),
            (freezes(&fresh, 0), freezes(&fresh, 1))
        );
        assert_eq!(switched.replayed.len(), fresh.replayed.len());
        assert!(!switched.worth(end, ms(60_000)));
    }

    #[test]
    fn the_floor_is_worth_it_where_it_spares_freezes_the_p95_delay_does_not_pay_for() {
        let t0 = Instant::now();
        let minute = 1_800;
        // Every 300th frame 200 ms late (six freezes a minute, all spared by the floor), and
        // every tenth frame 120 ms late, so that the floor moves the P95 delay not at all.
        let lossy = frames(t0, minute, |i| match i % 300 {
            150 => 200,
            _ if i % 10 == 0 => 120,
            _ => 0,
        });
        let mut f = FloorWeigher::new(ms(100), t0);
        let end = feed(&mut f, &lossy, |_| false);
        assert!(f.worth(end, ms(600_000)));
        // Half as many freezes on a steady path: the floor lifts P95 from 160 to 250 ms, 56 %,
        // which outweighs three freezes and 0.7 frozen seconds a minute.
        let steady = frames(t0, minute, |i| if i % 600 == 150 { 200 } else { 0 });
        let mut f = FloorWeigher::new(ms(100), t0);
        let end = feed(&mut f, &steady, |_| false);
        assert!(!f.worth(end, ms(600_000)));
        // Six freezes and 1.3 frozen seconds a minute would outweigh it, but no floor may lift
        // P95 by more than 10 %.
        let steady = frames(t0, minute, |i| if i % 300 == 150 { 200 } else { 0 });
        let mut f = FloorWeigher::new(ms(100), t0);
        let end = feed(&mut f, &steady, |_| false);
        assert!(!f.worth(end, ms(600_000)));
        // A minute with nothing to weigh (no freeze to spare, late frames setting P95 with or
        // without the floor) keeps the floor as it was.
        let quiet = |from| frames_from(t0, from, minute, |i| if i % 10 == 0 { 120 } else { 0 });
        let mut f = FloorWeigher::new(ms(100), t0);
        let end = feed(&mut f, &lossy, |_| false);
        assert!(f.worth(end, ms(60_000)));
        let end = feed(&mut f, &quiet(end), |_| false);
        assert!(f.worth(end, ms(60_000)), "kept on");
        let mut f = FloorWeigher::new(ms(100), t0);
        let end = feed(&mut f, &quiet(t0), |_| false);
        assert!(!f.worth(end, ms(60_000)), "kept off");
        // Too little replayed yet.
        let mut f = FloorWeigher::new(ms(100), t0);
        let end = feed(&mut f, &lossy[..150], |_| false);
        assert!(!f.worth(end, ms(600_000)));
    }
}

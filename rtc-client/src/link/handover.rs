//! Handover events and how they are layered over the link's base processes.

use super::LinkConfigError;
use super::loss_profile::LossProfile;
use super::series::{check_probability, threshold};
use super::time::{Time, duration_nanos};
use std::time::Duration;

/// One handover effect at one instant.
///
/// A timeline is a list of [`HandoverEvent`]s, each an instant and one [`HandoverEffect`]. A
/// handover that does several things at once (Starlink's slot change: a short outage, a step in
/// the delay and a burst of losses, reference C2) is several events at the same instant. The
/// link compiles the timeline once, at construction, into piecewise-constant step functions
/// (outage state, capacity regime, delay adjustment, burst-loss probability), read with
/// forward-only cursors on the hot path. Every event instant is a handover instant of the link
/// ([`super::Link::handover_instants`]); loss at a slot boundary without a handover goes in
/// [`super::LinkConfig::boundary_losses`] instead.
///
/// Overlaps are resolved per kind:
/// - outages: any [`OutageMode::Drop`] outage in force wins over a [`OutageMode::Hold`] one;
///   the bottleneck serves nothing while either is in force;
/// - capacity changes: the one that started last (ties: the later in the list) is in force;
///   an outage overrides it;
/// - delay steps: [`DelayChange::Set`] replaces the base delay (the last started wins) and
///   every [`DelayChange::Add`] / [`DelayChange::Subtract`] in force is added to the result,
///   which is floored at zero;
/// - loss bursts and the steps of loss profiles: independent, so `p = 1 - prod(1 - p_i)` over
///   those in force.
///
/// Effects without a duration last until the end of time.
#[derive(Debug, Clone, PartialEq)]
pub struct HandoverEvent {
    /// When the effect starts.
    pub at: Time,
    /// What happens.
    pub effect: HandoverEffect,
}

impl HandoverEvent {
    /// `effect` starting at `at`.
    pub fn new(at: Time, effect: HandoverEffect) -> HandoverEvent {
        HandoverEvent { at, effect }
    }
}

/// What a handover does to the link.
#[derive(Debug, Clone, PartialEq)]
pub enum HandoverEffect {
    /// The link carries nothing for `duration`: the bottleneck serves nothing; what happens to
    /// packets entering the link meanwhile depends on `mode`.
    Outage {
        /// How long the link is down.
        duration: Duration,
        /// What happens to packets entering during the outage.
        mode: OutageMode,
    },
    /// The one-way propagation delay changes (e.g. the new satellite and ground station give a
    /// longer path, reference C2: steps of 10-50 ms at slot boundaries).
    DelayStep {
        /// How the delay changes.
        change: DelayChange,
        /// How long the change lasts; `None` = for good.
        duration: Option<Duration>,
    },
    /// Packets leaving the bottleneck during `duration` are lost with `probability`, on top of
    /// the link's random loss (reported as [`super::DropReason::BurstLoss`]).
    LossBurst {
        /// How long the burst lasts.
        duration: Duration,
        /// Loss probability in [0, 1].
        probability: f64,
    },
    /// Packets leaving the bottleneck in the `k`-th step after the handover are lost with the
    /// profile's `k`-th probability, on top of the link's random loss (reported as
    /// [`super::DropReason::BurstLoss`]): Starlink's loss at a slot boundary, falling from row to
    /// row (`traces/scenarios/starlink.toml`).
    LossProfile(LossProfile),
    /// The capacity changes (a new satellite, a new beam, a new modulation).
    CapacityChange {
        /// How the capacity changes.
        change: CapacityChange,
        /// How long the change lasts; `None` = until the end of time (or an overriding change).
        duration: Option<Duration>,
    },
}

/// What happens to a packet that enters the link during an outage (a scenario file's
/// `outage_mode`, `drop` or `hold`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum OutageMode {
    /// It is dropped ([`super::DropReason::Outage`]). Packets already queued wait.
    #[default]
    Drop,
    /// It is queued (drop-tail permitting) and served when the outage ends.
    Hold,
}

/// How a [`HandoverEffect::DelayStep`] changes the one-way delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayChange {
    /// The delay grows by this much.
    Add(Duration),
    /// The delay shrinks by this much (floored at zero).
    Subtract(Duration),
    /// The base delay is replaced by this value (steps in force still apply on top).
    Set(Duration),
}

/// How a [`HandoverEffect::CapacityChange`] changes the capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CapacityChange {
    /// The base capacity process scaled by a factor >= 0: a fluid rate is multiplied, a trace's
    /// opportunities carry `factor` times their bytes.
    Scale(f64),
    /// A constant rate in bit/s replaces the base process (fluid service).
    Rate(u64),
}

/// The capacity regime in force: what the bottleneck's server follows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum CapKind {
    /// Nothing is served (an outage).
    Off,
    /// The base process, scaled.
    Base(f64),
    /// A constant fluid rate, bit/s.
    Rate(u64),
}

/// The delay adjustment in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct DelayAdjust {
    /// Replacement for the base delay, ns.
    pub(crate) set: Option<u64>,
    /// Sum of the shifts in force, ns.
    pub(crate) shift: i64,
}

impl DelayAdjust {
    #[inline]
    pub(crate) fn apply(&self, base_ns: u64) -> u64 {
        let v = self.set.unwrap_or(base_ns);
        if self.shift >= 0 {
            v.saturating_add(self.shift as u64)
        } else {
            v.saturating_sub(self.shift.unsigned_abs())
        }
    }
}

/// The burst-loss probability in force and its draw threshold (see `series::threshold`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Burst {
    pub(crate) probability: f64,
    pub(crate) threshold: u128,
}

/// A piecewise-constant function of time: `values[i]` holds on `[starts[i], starts[i+1])`,
/// `starts[0] = 0`, the last value holds forever.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Steps<T> {
    starts: Vec<Time>,
    values: Vec<T>,
}

impl<T: Copy + PartialEq> Steps<T> {
    /// One value forever.
    #[cfg(test)]
    pub(crate) fn constant(value: T) -> Steps<T> {
        Steps {
            starts: vec![Time::ZERO],
            values: vec![value],
        }
    }

    /// The value at `t` and the end of its piece ([`Time::MAX`] for the last).
    pub(crate) fn at(&self, t: Time) -> (T, Time) {
        let i = self.starts.partition_point(|&s| s <= t).saturating_sub(1);
        (self.values[i], self.end_of(i))
    }

    #[inline]
    fn end_of(&self, i: usize) -> Time {
        self.starts.get(i + 1).copied().unwrap_or(Time::MAX)
    }

    /// [`Steps::at`] for non-decreasing `t` across calls: `cursor` remembers the piece.
    #[inline]
    pub(crate) fn at_cursor(&self, cursor: &mut usize, t: Time) -> (T, Time) {
        let mut i = *cursor;
        if self.starts[i] > t {
            i = self.starts.partition_point(|&s| s <= t).saturating_sub(1);
        }
        while i + 1 < self.starts.len() && self.starts[i + 1] <= t {
            i += 1;
        }
        *cursor = i;
        (self.values[i], self.end_of(i))
    }

    /// The pieces as (start, value).
    #[cfg(test)]
    pub(crate) fn pieces(&self) -> impl Iterator<Item = (Time, T)> + '_ {
        self.starts.iter().copied().zip(self.values.iter().copied())
    }
}

/// An effect's interval `[start, end)` and payload.
struct Interval<P> {
    start: Time,
    end: Time,
    payload: P,
}

/// The step function of `f(active payloads)` over time, active payloads ordered by start (ties
/// by list order). `f(&[])` is the value where nothing is in force.
fn sweep<P, T: Copy + PartialEq>(intervals: Vec<Interval<P>>, f: impl Fn(&[&P]) -> T) -> Steps<T> {
    let mut order: Vec<usize> = (0..intervals.len())
        .filter(|&i| intervals[i].end > intervals[i].start)
        .collect();
    order.sort_by_key(|&i| (intervals[i].start, i));
    let mut bounds: Vec<Time> = Vec::with_capacity(2 * order.len() + 1);
    bounds.push(Time::ZERO);
    for &i in &order {
        bounds.push(intervals[i].start);
        if intervals[i].end < Time::MAX {
            bounds.push(intervals[i].end);
        }
    }
    bounds.sort_unstable();
    bounds.dedup();
    let mut steps = Steps {
        starts: Vec::new(),
        values: Vec::new(),
    };
    let mut active: Vec<usize> = Vec::new();
    let mut next = 0;
    let mut refs: Vec<&P> = Vec::new();
    for b in bounds {
        active.retain(|&i| intervals[i].end > b);
        while next < order.len() && intervals[order[next]].start <= b {
            let i = order[next];
            if intervals[i].end > b {
                active.push(i);
            }
            next += 1;
        }
        refs.clear();
        refs.extend(active.iter().map(|&i| &intervals[i].payload));
        let value = f(&refs);
        if steps.values.last() != Some(&value) {
            steps.starts.push(b);
            steps.values.push(value);
        }
    }
    steps
}

/// A timeline compiled for the link.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    /// Distinct event instants, increasing: the ground-truth handover instants.
    pub(crate) instants: Vec<Time>,
    /// Outage state at link entry.
    pub(crate) outage: Steps<Option<OutageMode>>,
    /// Capacity regime of the bottleneck.
    pub(crate) capacity: Steps<CapKind>,
    /// Delay adjustment.
    pub(crate) delay: Steps<DelayAdjust>,
    /// Burst loss.
    pub(crate) burst: Steps<Burst>,
}

fn end_of(at: Time, duration: Option<Duration>) -> Time {
    match duration {
        Some(d) => at.saturating_add(d),
        None => Time::MAX,
    }
}

/// Validates and compiles a timeline (any order; sorted stably by instant here) and the loss
/// profiles at instants that are not handovers (`boundary_losses`: they add to the burst loss
/// but not to the handover instants).
pub(crate) fn compile(
    events: &[HandoverEvent],
    boundary_losses: &[(Time, LossProfile)],
) -> Result<Compiled, LinkConfigError> {
    let mut outages = Vec::new();
    let mut capacities = Vec::new();
    let mut delays = Vec::new();
    let mut bursts = Vec::new();
    let mut sorted: Vec<&HandoverEvent> = events.iter().collect();
    sorted.sort_by_key(|e| e.at);
    for (i, e) in sorted.iter().enumerate() {
        match e.effect {
            HandoverEffect::LossProfile(ref profile) => {
                bursts.extend(profile.bursts(e.at).map(|(start, end, p)| Interval {
                    start,
                    end,
                    payload: p,
                }));
            }
            HandoverEffect::Outage { duration, mode } => outages.push(Interval {
                start: e.at,
                end: e.at.saturating_add(duration),
                payload: mode,
            }),
            HandoverEffect::CapacityChange { change, duration } => {
                if let CapacityChange::Scale(f) = change
                    && !(f.is_finite() && f >= 0.0)
                {
                    return Err(LinkConfigError::Handover {
                        index: i,
                        at: e.at,
                        problem: format!("capacity factor {f} is not a finite number >= 0"),
                    });
                }
                capacities.push(Interval {
                    start: e.at,
                    end: end_of(e.at, duration),
                    payload: change,
                });
            }
            HandoverEffect::DelayStep { change, duration } => delays.push(Interval {
                start: e.at,
                end: end_of(e.at, duration),
                payload: change,
            }),
            HandoverEffect::LossBurst {
                duration,
                probability,
            } => {
                check_probability(probability, "loss burst probability").map_err(|_| {
                    LinkConfigError::Handover {
                        index: i,
                        at: e.at,
                        problem: format!("loss burst probability {probability} is outside [0, 1]"),
                    }
                })?;
                bursts.push(Interval {
                    start: e.at,
                    end: e.at.saturating_add(duration),
                    payload: probability,
                });
            }
        }
    }
    for (at, profile) in boundary_losses {
        bursts.extend(profile.bursts(*at).map(|(start, end, p)| Interval {
            start,
            end,
            payload: p,
        }));
    }
    let mut instants: Vec<Time> = sorted.iter().map(|e| e.at).collect();
    instants.dedup();

    let outage_kind = |active: &[&OutageMode]| -> Option<OutageMode> {
        if active.iter().any(|m| **m == OutageMode::Drop) {
            Some(OutageMode::Drop)
        } else if active.is_empty() {
            None
        } else {
            Some(OutageMode::Hold)
        }
    };
    // Capacity: outages override changes. Merge both kinds into one sweep.
    enum CapPayload {
        Outage,
        Change(CapacityChange),
    }
    let mut cap_intervals: Vec<Interval<CapPayload>> = Vec::new();
    for o in &outages {
        cap_intervals.push(Interval {
            start: o.start,
            end: o.end,
            payload: CapPayload::Outage,
        });
    }
    for c in capacities {
        cap_intervals.push(Interval {
            start: c.start,
            end: c.end,
            payload: CapPayload::Change(c.payload),
        });
    }
    let capacity = sweep(cap_intervals, |active| {
        if active.iter().any(|p| matches!(p, CapPayload::Outage)) {
            return CapKind::Off;
        }
        match active.iter().rev().find_map(|p| match p {
            CapPayload::Change(c) => Some(*c),
            CapPayload::Outage => None,
        }) {
            Some(CapacityChange::Scale(f)) => CapKind::Base(f),
            Some(CapacityChange::Rate(r)) => CapKind::Rate(r),
            None => CapKind::Base(1.0),
        }
    });
    let outage = sweep(outages, outage_kind);
    let delay = sweep(delays, |active| {
        let mut adjust = DelayAdjust::default();
        for change in active {
            match change {
                DelayChange::Set(d) => adjust.set = Some(duration_nanos(*d)),
                DelayChange::Add(d) => {
                    adjust.shift = adjust
                        .shift
                        .saturating_add(i64::try_from(duration_nanos(*d)).unwrap_or(i64::MAX));
                }
                DelayChange::Subtract(d) => {
                    adjust.shift = adjust
                        .shift
                        .saturating_sub(i64::try_from(duration_nanos(*d)).unwrap_or(i64::MAX));
                }
            }
        }
        adjust
    });
    let burst = sweep(bursts, |active| {
        let keep: f64 = active.iter().map(|p| 1.0 - **p).product();
        let p = if active.is_empty() { 0.0 } else { 1.0 - keep };
        Burst {
            probability: p,
            threshold: threshold(p),
        }
    });
    Ok(Compiled {
        instants,
        outage,
        capacity,
        delay,
        burst,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time::from_millis(v)
    }

    #[test]
    fn overlapping_outages_merge_and_drop_wins_over_hold() {
        let events = [
            HandoverEvent::new(
                ms(10),
                HandoverEffect::Outage {
                    duration: Duration::from_millis(20),
                    mode: OutageMode::Hold,
                },
            ),
            HandoverEvent::new(
                ms(15),
                HandoverEffect::Outage {
                    duration: Duration::from_millis(5),
                    mode: OutageMode::Drop,
                },
            ),
        ];
        let c = compile(&events, &[]).unwrap();
        let pieces: Vec<_> = c.outage.pieces().collect();
        assert_eq!(
            pieces,
            vec![
                (ms(0), None),
                (ms(10), Some(OutageMode::Hold)),
                (ms(15), Some(OutageMode::Drop)),
                (ms(20), Some(OutageMode::Hold)),
                (ms(30), None),
            ]
        );
        let cap: Vec<_> = c.capacity.pieces().collect();
        assert_eq!(
            cap,
            vec![
                (ms(0), CapKind::Base(1.0)),
                (ms(10), CapKind::Off),
                (ms(30), CapKind::Base(1.0))
            ]
        );
        assert_eq!(c.instants, vec![ms(10), ms(15)]);
    }

    #[test]
    fn delay_shifts_add_up_and_a_set_replaces_the_base() {
        let events = [
            HandoverEvent::new(
                ms(0),
                HandoverEffect::DelayStep {
                    change: DelayChange::Add(Duration::from_millis(10)),
                    duration: None,
                },
            ),
            HandoverEvent::new(
                ms(5),
                HandoverEffect::DelayStep {
                    change: DelayChange::Set(Duration::from_millis(40)),
                    duration: Some(Duration::from_millis(5)),
                },
            ),
            HandoverEvent::new(
                ms(7),
                HandoverEffect::DelayStep {
                    change: DelayChange::Subtract(Duration::from_millis(100)),
                    duration: Some(Duration::from_millis(1)),
                },
            ),
        ];
        let c = compile(&events, &[]).unwrap();
        let base = 20_000_000;
        assert_eq!(c.delay.at(ms(1)).0.apply(base), 30_000_000);
        assert_eq!(c.delay.at(ms(6)).0.apply(base), 50_000_000);
        assert_eq!(c.delay.at(ms(7)).0.apply(base), 0);
        assert_eq!(c.delay.at(ms(10)).0.apply(base), 30_000_000);
    }

    #[test]
    fn the_latest_capacity_change_wins() {
        let events = [
            HandoverEvent::new(
                ms(0),
                HandoverEffect::CapacityChange {
                    change: CapacityChange::Rate(5),
                    duration: Some(Duration::from_millis(10)),
                },
            ),
            HandoverEvent::new(
                ms(2),
                HandoverEffect::CapacityChange {
                    change: CapacityChange::Scale(0.5),
                    duration: Some(Duration::from_millis(3)),
                },
            ),
        ];
        let c = compile(&events, &[]).unwrap();
        let cap: Vec<_> = c.capacity.pieces().collect();
        assert_eq!(
            cap,
            vec![
                (ms(0), CapKind::Rate(5)),
                (ms(2), CapKind::Base(0.5)),
                (ms(5), CapKind::Rate(5)),
                (ms(10), CapKind::Base(1.0)),
            ]
        );
    }

    #[test]
    fn overlapping_bursts_combine_as_independent_losses() {
        let burst = |at| {
            HandoverEvent::new(
                ms(at),
                HandoverEffect::LossBurst {
                    duration: Duration::from_millis(10),
                    probability: 0.5,
                },
            )
        };
        let c = compile(&[burst(0), burst(5)], &[]).unwrap();
        assert_eq!(c.burst.at(ms(6)).0.probability, 0.75);
        assert_eq!(c.burst.at(ms(12)).0.probability, 0.5);
        assert_eq!(c.burst.at(ms(15)).0.probability, 0.0);
    }

    #[test]
    fn a_loss_profile_steps_down_row_by_row_and_combines_with_a_burst() {
        let profile = LossProfile::new(Duration::from_millis(100), vec![0.5, 0.25]).unwrap();
        let events = [
            HandoverEvent::new(ms(1_000), HandoverEffect::LossProfile(profile)),
            HandoverEvent::new(
                ms(1_150),
                HandoverEffect::LossBurst {
                    duration: Duration::from_millis(100),
                    probability: 0.5,
                },
            ),
        ];
        let c = compile(&events, &[]).unwrap();
        let p = |t| c.burst.at(ms(t)).0.probability;
        assert_eq!(p(999), 0.0);
        assert_eq!(p(1_000), 0.5);
        assert_eq!(p(1_099), 0.5);
        assert_eq!(p(1_100), 0.25);
        assert_eq!(p(1_150), 0.625);
        assert_eq!(p(1_200), 0.5);
        assert_eq!(p(1_250), 0.0);
        assert_eq!(c.instants, vec![ms(1_000), ms(1_150)]);
    }

    #[test]
    fn a_boundary_loss_adds_to_the_burst_loss_but_is_no_handover_instant() {
        let profile = LossProfile::new(Duration::from_millis(100), vec![0.25]).unwrap();
        let c = compile(&[], &[(ms(500), profile)]).unwrap();
        assert_eq!(c.burst.at(ms(550)).0.probability, 0.25);
        assert_eq!(c.burst.at(ms(600)).0.probability, 0.0);
        assert!(c.instants.is_empty());
    }

    #[test]
    fn invalid_effects_are_refused_with_their_index() {
        let bad = HandoverEvent::new(
            ms(3),
            HandoverEffect::LossBurst {
                duration: Duration::from_millis(1),
                probability: 2.0,
            },
        );
        let err = compile(&[bad], &[]).unwrap_err();
        assert!(err.to_string().contains("probability 2"), "{err}");
    }
}

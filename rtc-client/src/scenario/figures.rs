//! The figures a scenario is fitted to and checked against, computed the same way on real
//! traces and on emulated links, and the per-second view of a link the CLI prints and plots.
//!
//! - [`boundary_change`]: mean |RTT change| between consecutive pings whose later ping falls in
//!   a slot-boundary second (UTC second 12, 27, 42 or 57) and in any other second, and their
//!   ratio (the data README: 2-4x in the mmsys24 traces). A lost ping breaks the chain.
//! - [`slot_means`]: mean capacity of each whole slot between consecutive boundaries.
//! - [`Summary`]: mean, quantiles and extremes.
//! - [`link_seconds`]: what a link offers each second (capacity, propagation delay, expected
//!   loss, outage time, handovers), read from its configuration without sending traffic.

use crate::link::readers::PingTrace;
use crate::link::{Link, Loss, MAHIMAHI_OPPORTUNITY_BYTES, MahimahiTrace, OutageMode, Time};
use handover_predictor::sky::SLOT_BOUNDARY_SECONDS;
use serde::Serialize;
use std::time::Duration;

/// Mean, extremes and quantiles of a set of values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// Smallest.
    pub min: f64,
    /// 5th percentile.
    pub p5: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Largest.
    pub max: f64,
}

impl Summary {
    /// The summary of `values` (NaNs ignored); `None` when there are none.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Summary> {
        let mut v: Vec<f64> = values.into_iter().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| v[((p * v.len() as f64) as usize).min(v.len() - 1)];
        Some(Summary {
            n: v.len(),
            mean: v.iter().sum::<f64>() / v.len() as f64,
            min: v[0],
            p5: q(0.05),
            p50: q(0.5),
            p95: q(0.95),
            max: v[v.len() - 1],
        })
    }
}

/// Mean |RTT change| at slot-boundary seconds and at other seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BoundaryChange {
    /// Mean |change| between consecutive replies whose later one was sent in a boundary second,
    /// ms.
    pub boundary_ms: f64,
    /// The same at every other second, ms.
    pub other_ms: f64,
    /// `boundary_ms / other_ms`.
    pub ratio: f64,
    /// Pairs in boundary seconds.
    pub boundary_pairs: usize,
    /// Pairs in other seconds.
    pub other_pairs: usize,
}

/// [`BoundaryChange`] of a sequence of `(whether the ping was sent in a boundary second, RTT ms
/// or None when lost)`, in sending order. `None` when either group is empty or the other
/// seconds show no change at all.
pub fn boundary_change(
    samples: impl IntoIterator<Item = (bool, Option<f64>)>,
) -> Option<BoundaryChange> {
    let (mut bs, mut bn, mut os, mut on) = (0.0, 0usize, 0.0, 0usize);
    let mut previous: Option<f64> = None;
    for (boundary, rtt) in samples {
        if let (Some(p), Some(r)) = (previous, rtt) {
            if boundary {
                bs += (r - p).abs();
                bn += 1;
            } else {
                os += (r - p).abs();
                on += 1;
            }
        }
        previous = rtt;
    }
    if bn == 0 || on == 0 || os == 0.0 {
        return None;
    }
    let (b, o) = (bs / bn as f64, os / on as f64);
    Some(BoundaryChange {
        boundary_ms: b,
        other_ms: o,
        ratio: b / o,
        boundary_pairs: bn,
        other_pairs: on,
    })
}

/// Whether a UTC second of the minute is a Starlink slot boundary (12, 27, 42 or 57).
pub fn is_slot_boundary_second(second_of_minute: u64) -> bool {
    SLOT_BOUNDARY_SECONDS
        .iter()
        .any(|&s| u64::from(s) == second_of_minute % 60)
}

/// [`boundary_change`] of a real ping trace (boundary seconds from its Unix times).
pub fn ping_boundary_change(trace: &PingTrace) -> Option<BoundaryChange> {
    boundary_change(trace.samples().iter().map(|s| {
        (
            is_slot_boundary_second((s.unix_s.floor() as i64).rem_euclid(60) as u64),
            s.rtt.map(|d| d.as_secs_f64() * 1e3),
        )
    }))
}

/// [`boundary_change`] of pings through a realised call: a ping is in a boundary second when a
/// slot boundary of the call's timeline falls in the whole second it was sent in.
pub fn probe_boundary_change(
    realization: &super::Realization,
    probes: &[super::build::ProbeSample],
) -> Option<BoundaryChange> {
    let seconds = realization.boundary_seconds();
    boundary_change(
        probes
            .iter()
            .map(|p| (seconds.binary_search(&(p.sent_ms / 1000)).is_ok(), p.rtt_ms)),
    )
}

/// Mean of `per_second` over each whole slot `[b_i, b_{i+1})` of `boundaries_s`.
pub fn slot_means(per_second: &[f64], boundaries_s: &[u64]) -> Vec<f64> {
    boundaries_s
        .windows(2)
        .filter(|w| w[1] as usize <= per_second.len() && w[1] > w[0])
        .map(|w| {
            let s = &per_second[w[0] as usize..w[1] as usize];
            s.iter().sum::<f64>() / s.len() as f64
        })
        .collect()
}

/// Capacity of a Mahimahi trace per second over one pass, Mbit/s.
pub fn mahimahi_mbps_per_second(trace: &MahimahiTrace) -> Vec<f64> {
    let seconds = trace.period().as_secs();
    (0..seconds)
        .map(|s| {
            let n = trace.opportunities_between(Time::from_secs(s), Time::from_secs(s + 1));
            n as f64 * f64::from(MAHIMAHI_OPPORTUNITY_BYTES) * 8.0 / 1e6
        })
        .collect()
}

/// One second of a link, as its configuration defines it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinkSecond {
    /// Second from the call start.
    pub second: u64,
    /// Capacity offered in the second, Mbit/s (outages included).
    pub capacity_mbps: f64,
    /// Mean propagation delay over the second (sampled every 10 ms), ms.
    pub delay_ms: f64,
    /// Smallest sampled delay, ms.
    pub delay_min_ms: f64,
    /// Largest sampled delay, ms.
    pub delay_max_ms: f64,
    /// Probability that a packet entering in this second is lost (random loss, handover
    /// bursts, drop outages), averaged over the second.
    pub loss: f64,
    /// Time in an outage (drop or hold), ms.
    pub outage_ms: u64,
    /// Whether a handover falls in the second.
    pub handover: bool,
}

/// Samples per second for [`link_seconds`]: one every 10 ms.
const SAMPLES_PER_SECOND: u64 = 100;

/// The link's processes second by second for `seconds` seconds (no traffic is sent).
pub fn link_seconds(link: &Link, seconds: u64) -> Vec<LinkSecond> {
    let step = Duration::from_millis(1000 / SAMPLES_PER_SECOND);
    (0..seconds)
        .map(|s| {
            let from = Time::from_secs(s);
            let to = Time::from_secs(s + 1);
            let (mut sum, mut lo, mut hi, mut loss, mut outage) =
                (0.0, f64::INFINITY, 0.0f64, 0.0, 0u64);
            for k in 0..SAMPLES_PER_SECOND {
                let t = from + step * k as u32;
                let d = link.delay_at(t).as_secs_f64() * 1e3;
                sum += d;
                lo = lo.min(d);
                hi = hi.max(d);
                let o = link.outage_at(t);
                if o.is_some() {
                    outage += 1;
                }
                let p = if o == Some(OutageMode::Drop) {
                    1.0
                } else {
                    let random = random_loss_at(&link.config().loss, t);
                    1.0 - (1.0 - random) * (1.0 - link.burst_loss_probability_at(t))
                };
                loss += p;
            }
            let n = SAMPLES_PER_SECOND as f64;
            LinkSecond {
                second: s,
                capacity_mbps: link.offered_bps(from, to) / 1e6,
                delay_ms: sum / n,
                delay_min_ms: lo,
                delay_max_ms: hi,
                loss: loss / n,
                outage_ms: outage * (1000 / SAMPLES_PER_SECOND),
                handover: !link.handover_instants_between(from, to).is_empty(),
            }
        })
        .collect()
}

/// The random-loss probability in force at `t` (the stationary rate for Gilbert-Elliott).
fn random_loss_at(loss: &Loss, t: Time) -> f64 {
    match loss {
        Loss::None => 0.0,
        Loss::Bernoulli { probability } => *probability,
        Loss::GilbertElliott(ge) => ge.stationary_loss_rate(),
        Loss::Series(s) => s.at(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_change_groups_by_the_later_pings_second_and_breaks_at_losses() {
        let samples = [
            (false, Some(50.0)),
            (false, Some(52.0)), // other: 2
            (true, Some(72.0)),  // boundary: 20
            (true, None),
            (false, Some(10.0)), // chain broken: nothing
            (false, Some(14.0)), // other: 4
        ];
        let b = boundary_change(samples).unwrap();
        assert_eq!(b.boundary_pairs, 1);
        assert_eq!(b.other_pairs, 2);
        assert_eq!(b.boundary_ms, 20.0);
        assert_eq!(b.other_ms, 3.0);
    }

    #[test]
    fn slot_means_cover_whole_slots_only() {
        let v: Vec<f64> = (0..40).map(f64::from).collect();
        assert_eq!(slot_means(&v, &[12, 27, 42]), vec![19.0]);
    }

    #[test]
    fn a_summary_has_ordered_quantiles() {
        let s = Summary::of((1..=100).map(f64::from)).unwrap();
        assert_eq!((s.min, s.p50, s.max, s.n), (1.0, 51.0, 100.0, 100));
        assert!(Summary::of([]).is_none());
    }
}

//! From a scenario file and a seed to the two links of one call.
//!
//! [`realize`] draws, in this order and each from its own seeded stream ([`crate::rng`]): the
//! handover timeline, each direction's capacity, the delays, and derives the links' handover
//! events. Generated series cover the whole call at 1 s (capacity) or 10 ms (delay) and hold
//! their last value after it; replayed traces loop as Mahimahi and LeoReplayer do.
//!
//! What a handover does to a direction, besides the delay process's own step and spike:
//! an outage (`handover.outage_ms`, drop or hold) and a loss burst (`handover.loss_burst_rate`
//! for `handover.loss_burst_ms`) or a loss profile (`handover.boundary_loss_profile`, one
//! probability per 100-ms row). A slot boundary without a handover gets
//! `handover.no_handover_loss_profile`, or the same profile when that is not given, as a
//! boundary loss of the link (not a handover instant). Seconds without a satellite at either end
//! of an orbit path are drop outages on both directions.

use super::orbit::{self, End, OrbitPath};
use super::process::{self, DELAY_STEP_MS};
use super::schema::{
    CallSpec, CapacitySpec, DelaySpec, DirectionSpec, HandoverSpec, LOSS_PROFILE_ROW_MS, LossSpec,
    OrbitPolicy, ReplayOffset, ReplaySpec, ScenarioFile,
};
use super::timeline::{self, Handover, HandoverTimeline};
use super::{Scenario, ScenarioError};
use crate::call::SenderOptions;
use crate::link::readers::{LagosTrace, PingLossModel, PingReplay, PingTrace};
use crate::link::{
    Buffer, Capacity, Delay, DelaySeries, GilbertElliott, HandoverEffect, HandoverEvent,
    Interpolation, Link, LinkConfig, Loss, LossProfile, LossSeries, OutageMode, RateSeries,
    SeriesEnd, Time, Verdict,
};
use crate::rng;
use chrono::{DateTime, Timelike, Utc};
use handover_predictor::orbit::SPEED_OF_LIGHT_KM_PER_S;
use serde::Serialize;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// One call drawn from a scenario.
#[derive(Debug, Clone)]
pub struct Realization {
    /// The scenario's name.
    pub name: String,
    /// The seed it was drawn with.
    pub seed: u64,
    /// Call length.
    pub duration: Duration,
    /// UTC instant of virtual time zero (orbit scenarios: with the seeded offset).
    pub start: DateTime<Utc>,
    /// The video path's link.
    pub forward: LinkConfig,
    /// The feedback path's link.
    pub reverse: LinkConfig,
    /// Seed of the forward link's random processes (derived from `seed`).
    pub forward_seed: u64,
    /// Seed of the reverse link's random processes.
    pub reverse_seed: u64,
    /// The ground-truth handover timeline.
    pub timeline: HandoverTimeline,
    /// The orbit path, for orbit scenarios.
    pub orbit: Option<OrbitPath>,
    /// Where the call starts in the `lagos.csv` or ping series it replays (`[replay]`); `None` without
    /// a `[replay]` table (every call from the file's first row).
    pub replay_offset: Option<Duration>,
    /// The call's encoder limits.
    pub call: CallSpec,
    /// The sender options the scenario file's `[sender]` table sets, over the defaults (a
    /// command line lays its flags over these: [`SenderOptions::overridden_by`]).
    pub sender: SenderOptions,
}

impl Realization {
    /// A fresh forward link (empty, at time zero).
    pub fn forward_link(&self) -> Result<Link, ScenarioError> {
        Link::new(self.forward.clone(), self.forward_seed).map_err(|e| ScenarioError::Link {
            direction: "forward",
            message: e.to_string(),
        })
    }

    /// A fresh reverse link.
    pub fn reverse_link(&self) -> Result<Link, ScenarioError> {
        Link::new(self.reverse.clone(), self.reverse_seed).map_err(|e| ScenarioError::Link {
            direction: "reverse",
            message: e.to_string(),
        })
    }

    /// The whole seconds of the call that contain a slot boundary, ascending.
    pub fn boundary_seconds(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .timeline
            .boundaries_ms
            .iter()
            .map(|ms| ms / 1000)
            .collect();
        v.dedup();
        v
    }

    /// Milliseconds into the UTC minute at virtual time `t_ms` (for the slot-boundary figures).
    pub fn ms_of_minute(&self, t_ms: u64) -> u64 {
        let base = u64::from(self.start.second()) * 1000
            + u64::from(self.start.nanosecond() / 1_000_000).min(999);
        (base + t_ms) % 60_000
    }
}

/// Seconds the call covers (whole seconds, rounded up).
fn call_seconds(duration: Duration) -> usize {
    duration.as_millis().div_ceil(1000).max(1) as usize
}

/// Draws one call: see the module documentation.
pub fn realize(
    scenario: &Scenario,
    seed: u64,
    duration: Duration,
) -> Result<Realization, ScenarioError> {
    let file = &scenario.file;
    let invalid = |field: &str, message: String| ScenarioError::Invalid {
        origin: scenario.origin.clone(),
        field: field.to_owned(),
        message,
    };
    let mut start: DateTime<Utc> = DateTime::parse_from_rfc3339(&file.start)
        .map_err(|e| invalid("start", e.to_string()))?
        .with_timezone(&Utc);
    let sender = SenderOptions::default().overridden_by(
        &file
            .sender_overrides()
            .map_err(|e| invalid(&e.field, e.message))?,
    );
    let seconds = call_seconds(duration);
    let duration_ms = duration.as_millis().min(u128::from(u64::MAX)) as u64;
    let resolve = |field: &str, f: &str| scenario.paths.resolve(field, f);

    // 1. The handover timeline.
    let mut orbit_path = None;
    let timeline = match &file.handovers {
        HandoverSpec::None => HandoverTimeline::none(),
        HandoverSpec::Slots { probability } => {
            let boundaries = timeline::slot_boundaries_ms(start, duration_ms);
            let mut r = rng::stream(seed, "handovers");
            let handovers = boundaries
                .iter()
                .filter(|_| rng::chance(&mut r, *probability))
                .map(|&at_ms| Handover {
                    at_ms,
                    end: End::Local,
                    from: None,
                    to: None,
                })
                .collect();
            HandoverTimeline {
                source: "slots",
                slotted: true,
                boundaries_ms: boundaries,
                handovers,
                outages_ms: Vec::new(),
            }
        }
        HandoverSpec::Grid {
            first_ms,
            period_ms,
        } => {
            let boundaries = timeline::grid_ms(*first_ms, *period_ms, duration_ms);
            HandoverTimeline {
                source: "grid",
                slotted: true,
                handovers: boundaries
                    .iter()
                    .map(|&at_ms| Handover {
                        at_ms,
                        end: End::Local,
                        from: None,
                        to: None,
                    })
                    .collect(),
                boundaries_ms: boundaries,
                outages_ms: Vec::new(),
            }
        }
        HandoverSpec::Orbit(spec) => {
            let geometry = [&file.forward, &file.reverse].iter().any(|d| {
                matches!(d.delay, DelaySpec::Geometry { .. })
                    || matches!(d.loss, LossSpec::PerLink { .. })
            });
            let path = orbit::realize(
                spec,
                start,
                seed,
                u32::try_from(seconds).unwrap_or(u32::MAX),
                geometry,
                &resolve,
            )?;
            start = path.start;
            let handovers: Vec<Handover> = path
                .changes
                .iter()
                .filter(|c| c.at_s * 1000 < duration_ms)
                .map(|c| Handover {
                    at_ms: c.at_s * 1000,
                    end: c.end,
                    from: Some(c.from),
                    to: Some(c.to),
                })
                .collect();
            let boundaries = match spec.policy {
                OrbitPolicy::Starlink => timeline::slot_boundaries_ms(start, duration_ms),
                OrbitPolicy::Delay => {
                    let mut v: Vec<u64> = handovers.iter().map(|h| h.at_ms).collect();
                    v.dedup();
                    v
                }
            };
            let outages_ms = merge_seconds(&path.outage_seconds());
            orbit_path = Some(path);
            HandoverTimeline {
                source: "orbit",
                slotted: spec.policy == OrbitPolicy::Starlink,
                boundaries_ms: boundaries,
                handovers,
                outages_ms,
            }
        }
    };
    let instants = timeline.instants_ms();
    let boundaries_s: Vec<u64> = timeline.boundaries_ms.iter().map(|ms| ms / 1000).collect();

    // 2. Capacity, delay, loss, buffer, events per direction.
    let delay_samples = (duration_ms.div_ceil(DELAY_STEP_MS) as usize).max(1);
    let replayed = ReplayCache::new(file.replay.as_ref(), seed);
    let delays = delays(
        file,
        seed,
        &instants,
        delay_samples,
        orbit_path.as_ref(),
        &resolve,
        &replayed,
    )?;
    let mut configs = Vec::with_capacity(2);
    for ((name, dir), delay) in ["forward", "reverse"]
        .into_iter()
        .zip([&file.forward, &file.reverse])
        .zip(delays)
    {
        let (capacity, median_bps) =
            capacity(dir, name, seed, seconds, &boundaries_s, &resolve, &replayed)?;
        let buffer = match (dir.buffer_bytes, dir.buffer_ms) {
            (Some(b), _) => Buffer::Bytes(b),
            (None, Some(ms)) => Buffer::Bytes(
                ((median_bps * f64::from(ms) / 8_000.0).round() as u64).max(MIN_BUFFER_BYTES),
            ),
            (None, None) => Buffer::Unlimited,
        };
        let loss = loss(dir, name, &resolve, &replayed, orbit_path.as_ref())?;
        let profile_error = |e: crate::link::LinkConfigError| ScenarioError::Link {
            direction: name,
            message: e.to_string(),
        };
        let events = events(dir, &instants, &timeline.outages_ms).map_err(profile_error)?;
        let boundary_losses =
            boundary_losses(dir, &timeline.boundaries_ms, &instants).map_err(profile_error)?;
        configs.push(
            LinkConfig::new(capacity)
                .with_buffer(buffer)
                .with_delay(delay)
                .with_loss(loss)
                .with_handovers(events)
                .with_boundary_losses(boundary_losses),
        );
    }
    let reverse = configs
        .pop()
        .unwrap_or_else(|| LinkConfig::new(Capacity::constant(1)));
    let forward = configs
        .pop()
        .unwrap_or_else(|| LinkConfig::new(Capacity::constant(1)));

    // The reported timeline is the call's.
    let realization = Realization {
        name: file.name.clone(),
        seed,
        duration,
        start,
        forward,
        reverse,
        forward_seed: rng::fnv1a(&format!("link/forward/{seed}")),
        reverse_seed: rng::fnv1a(&format!("link/reverse/{seed}")),
        timeline,
        orbit: orbit_path,
        replay_offset: replayed.offset.get().map(Duration::from_millis),
        call: file.call.clone(),
        sender,
    };
    // Fail now rather than when a caller first builds a link.
    realization.forward_link()?;
    realization.reverse_link()?;
    Ok(realization)
}

/// Smallest buffer a `buffer_ms` turns into: four 1500-byte packets, so that a slow link still
/// holds a frame's first packets.
pub const MIN_BUFFER_BYTES: u64 = 6_000;

/// Merges sorted seconds into `[from, to)` ms intervals.
fn merge_seconds(seconds: &[u64]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &s in seconds {
        match out.last_mut() {
            Some((_, to)) if *to == s * 1000 => *to += 1000,
            _ => out.push((s * 1000, s * 1000 + 1000)),
        }
    }
    out
}

type Resolve<'a> = dyn Fn(&str, &str) -> Result<PathBuf, ScenarioError> + 'a;

/// The loss model a ping trace is replayed with where only its delay is used (the delay does
/// not depend on it).
const PING_DELAY_ONLY: PingLossModel = PingLossModel {
    window: Duration::from_secs(60),
    slot: None,
};

/// The replayed files (`lagos.csv`, ping traces) read once per call even when several fields
/// name them, and replayed from the call's offset into them (`[replay]`).
struct ReplayCache<'a> {
    lagos: RefCell<HashMap<PathBuf, Arc<LagosTrace>>>,
    pings: RefCell<HashMap<PathBuf, Arc<PingTrace>>>,
    replay: Option<&'a ReplaySpec>,
    seed: u64,
    /// The offset the call replays from, ms into the file, once a file was read.
    offset: Cell<Option<u64>>,
}

impl<'a> ReplayCache<'a> {
    fn new(replay: Option<&'a ReplaySpec>, seed: u64) -> Self {
        Self {
            lagos: RefCell::default(),
            pings: RefCell::default(),
            replay,
            seed,
            offset: Cell::new(None),
        }
    }

    /// The offset into a file `length` long and the field that decided it, recorded as the
    /// call's; `None` without a `[replay]` table.
    fn offset(&self, length: Duration) -> Option<(Duration, &'static str)> {
        let (offset, field) = replay_offset_ms(self.replay?, self.seed, length);
        self.offset.set(Some(offset));
        Some((Duration::from_millis(offset), field))
    }

    fn lagos(&self, field: &str, path: &std::path::Path) -> Result<Arc<LagosTrace>, ScenarioError> {
        if let Some(t) = self.lagos.borrow().get(path) {
            return Ok(Arc::clone(t));
        }
        let mut t = super::data::load_lagos(field, path)?;
        if let Some((offset, field)) = self.offset(t.duration()) {
            t = t
                .starting_at(offset)
                .map_err(|e| super::data::data_error(field, path, e))?;
        }
        let t = Arc::new(t);
        self.lagos
            .borrow_mut()
            .insert(path.to_path_buf(), Arc::clone(&t));
        Ok(t)
    }

    /// A ping trace's replay under `model`, from the call's offset.
    fn ping(
        &self,
        field: &str,
        path: &std::path::Path,
        model: PingLossModel,
    ) -> Result<PingReplay, ScenarioError> {
        let cached = self.pings.borrow().get(path).cloned();
        let trace = match cached {
            Some(t) => t,
            None => {
                let t = Arc::new(super::data::load_ping(field, path)?);
                self.pings
                    .borrow_mut()
                    .insert(path.to_path_buf(), Arc::clone(&t));
                t
            }
        };
        let mut replay = trace
            .replay(model)
            .map_err(|e| super::data::data_error(field, path, e))?;
        if let Some((offset, field)) = self.offset(replay.duration()) {
            replay = replay
                .starting_at(offset)
                .map_err(|e| super::data::data_error(field, path, e))?;
        }
        Ok(replay)
    }
}

/// Where a call starts in a replayed file `length` long, ms, and the field that decided it: a
/// fixed offset (taken modulo the length), or one of the file's whole multiples of `align_ms`,
/// drawn uniformly from the call's seed.
fn replay_offset_ms(spec: &ReplaySpec, seed: u64, length: Duration) -> (u64, &'static str) {
    let length_ms = (length.as_millis().min(u128::from(u64::MAX)) as u64).max(1);
    match spec.offset {
        ReplayOffset::Fixed(ms) => (ms % length_ms, "replay.offset"),
        ReplayOffset::Seeded => {
            let starts = (length_ms / spec.align_ms).max(1);
            let mut r = rng::stream(seed, "replay/offset");
            let k = ((rng::open01(&mut r) * starts as f64) as u64).min(starts - 1);
            (k * spec.align_ms, "replay.align_ms")
        }
    }
}

/// The capacity of one direction and its median rate (bit/s, for `buffer_ms`).
fn capacity(
    dir: &DirectionSpec,
    name: &str,
    seed: u64,
    seconds: usize,
    boundaries_s: &[u64],
    resolve: &Resolve<'_>,
    replayed: &ReplayCache,
) -> Result<(Capacity, f64), ScenarioError> {
    let series_error = |e: crate::link::LinkConfigError| ScenarioError::Link {
        direction: if name == "forward" {
            "forward"
        } else {
            "reverse"
        },
        message: e.to_string(),
    };
    Ok(match &dir.capacity {
        CapacitySpec::Constant { mbps } => {
            let bps = process::mbps_to_bps(*mbps);
            (Capacity::constant(bps), bps as f64)
        }
        CapacitySpec::Lognormal(spec) => {
            let mut r = rng::stream(seed, &format!("{name}.capacity"));
            let values = process::lognormal_capacity(spec, &mut r, seconds, boundaries_s);
            let series = RateSeries::new(Duration::from_secs(1), values, SeriesEnd::Hold)
                .map_err(series_error)?;
            (Capacity::series(series), spec.median_mbps * 1e6)
        }
        CapacitySpec::Mahimahi { file } => {
            let field = format!("{name}.capacity.file");
            let path = resolve(&field, file)?;
            let trace = super::data::load_mahimahi(&field, &path)?;
            let mean = trace.mean_rate_bps(crate::link::MAHIMAHI_OPPORTUNITY_BYTES);
            (Capacity::mahimahi(Arc::new(trace)), mean)
        }
        CapacitySpec::Lagos { file, column } => {
            let field = format!("{name}.capacity.file");
            let path = resolve(&field, file)?;
            let series = replayed
                .lagos(&field, &path)?
                .capacity(super::data::lagos_direction(*column));
            let median = median_of(series.values().iter().map(|&v| v as f64));
            (Capacity::series(series), median)
        }
    })
}

fn median_of(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// The delays of both directions (the slotted process draws them together).
fn delays(
    file: &ScenarioFile,
    seed: u64,
    instants: &[u64],
    samples: usize,
    orbit: Option<&OrbitPath>,
    resolve: &Resolve<'_>,
    replayed: &ReplayCache,
) -> Result<Vec<Delay>, ScenarioError> {
    let step = Duration::from_millis(DELAY_STEP_MS);
    let to_delay = |ms: Vec<f64>, direction: &'static str| -> Result<Delay, ScenarioError> {
        let nanos = ms
            .iter()
            .map(|&m| (m * 1e6).round().max(0.0) as u64)
            .collect();
        DelaySeries::from_nanos(step, nanos, SeriesEnd::Hold, Interpolation::Step)
            .map(Delay::series)
            .map_err(|e| ScenarioError::Link {
                direction,
                message: e.to_string(),
            })
    };
    // Slotted delays drawn jointly.
    let mut slotted: Vec<Option<Vec<f64>>> = vec![None, None];
    if let (DelaySpec::Slotted(f), DelaySpec::Slotted(r)) =
        (&file.forward.delay, &file.reverse.delay)
    {
        let mut base = rng::stream(seed, "delay.base");
        let mut nf = rng::stream(seed, "forward.delay");
        let mut nr = rng::stream(seed, "reverse.delay");
        let mut out = process::slotted_delays(
            &[f, r],
            &mut base,
            &mut [&mut nf, &mut nr],
            instants,
            samples,
        );
        slotted[1] = out.pop();
        slotted[0] = out.pop();
    } else {
        for (i, (name, dir)) in ["forward", "reverse"]
            .into_iter()
            .zip([&file.forward, &file.reverse])
            .enumerate()
        {
            if let DelaySpec::Slotted(s) = &dir.delay {
                let mut base = rng::stream(seed, &format!("{name}.delay.base"));
                let mut n = rng::stream(seed, &format!("{name}.delay"));
                slotted[i] =
                    process::slotted_delays(&[s], &mut base, &mut [&mut n], instants, samples)
                        .pop();
            }
        }
    }
    let mut out = Vec::with_capacity(2);
    for (i, (name, dir)) in [("forward", &file.forward), ("reverse", &file.reverse)]
        .into_iter()
        .enumerate()
    {
        let delay = match &dir.delay {
            DelaySpec::Constant {
                ms,
                jitter_ms,
                jitter_rho,
            } => {
                if *jitter_ms == 0.0 {
                    Delay::constant(Duration::from_nanos((ms * 1e6).round() as u64))
                } else {
                    let mut r = rng::stream(seed, &format!("{name}.delay"));
                    to_delay(
                        process::constant_delay(*ms, *jitter_ms, *jitter_rho, &mut r, samples),
                        name,
                    )?
                }
            }
            DelaySpec::Slotted(_) => to_delay(slotted[i].take().unwrap_or_default(), name)?,
            DelaySpec::Geometry { extra_ms } => {
                let path = orbit.ok_or_else(|| {
                    ScenarioError::Orbit("a geometry delay needs an orbit handover source".into())
                })?;
                // A call with no second served at both ends is one long outage: nothing is
                // delivered, so the delay it would have had is never seen; it is given the
                // great-circle propagation delay between the endpoints, a bound every path has.
                let first = path
                    .one_way_ms
                    .iter()
                    .flatten()
                    .next()
                    .copied()
                    .unwrap_or(path.separation_km / SPEED_OF_LIGHT_KM_PER_S * 1000.0);
                let mut last = first;
                let nanos: Vec<u64> = path
                    .one_way_ms
                    .iter()
                    .map(|d| {
                        if let Some(d) = d {
                            last = *d;
                        }
                        ((last + extra_ms) * 1e6).round() as u64
                    })
                    .collect();
                DelaySeries::from_nanos(
                    Duration::from_secs(1),
                    nanos,
                    SeriesEnd::Hold,
                    Interpolation::Linear,
                )
                .map(Delay::series)
                .map_err(|e| ScenarioError::Link {
                    direction: name,
                    message: e.to_string(),
                })?
            }
            DelaySpec::Leoreplayer { file } => {
                let field = format!("{name}.delay.file");
                let path = resolve(&field, file)?;
                Delay::series(super::data::load_leoreplayer(&field, &path)?)
            }
            DelaySpec::Lagos { file, column } => {
                let field = format!("{name}.delay.file");
                let path = resolve(&field, file)?;
                Delay::series(
                    replayed
                        .lagos(&field, &path)?
                        .delay(super::data::lagos_direction(*column)),
                )
            }
            DelaySpec::Ping { file } => {
                let field = format!("{name}.delay.file");
                let path = resolve(&field, file)?;
                Delay::series(replayed.ping(&field, &path, PING_DELAY_ONLY)?.delay())
            }
        };
        out.push(delay);
    }
    Ok(out)
}

/// The random loss of one direction.
fn loss(
    dir: &DirectionSpec,
    name: &'static str,
    resolve: &Resolve<'_>,
    replayed: &ReplayCache,
    orbit: Option<&OrbitPath>,
) -> Result<Loss, ScenarioError> {
    Ok(match &dir.loss {
        LossSpec::None => Loss::None,
        LossSpec::Bernoulli { rate } => Loss::Bernoulli { probability: *rate },
        LossSpec::PerLink { rate } => {
            let path = orbit.ok_or_else(|| {
                ScenarioError::Orbit("a per-link loss needs an orbit handover source".into())
            })?;
            Loss::Series(Arc::new(per_link_loss(*rate, &path.isl_hops).map_err(
                |e| ScenarioError::Link {
                    direction: name,
                    message: e.to_string(),
                },
            )?))
        }
        LossSpec::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_good,
            loss_bad,
        } => Loss::GilbertElliott(GilbertElliott {
            p_good_to_bad: *p_good_to_bad,
            p_bad_to_good: *p_bad_to_good,
            loss_good: *loss_good,
            loss_bad: *loss_bad,
        }),
        LossSpec::Lagos { file, column } => {
            let field = format!("{name}.loss.file");
            let path = resolve(&field, file)?;
            Loss::Series(Arc::new(
                replayed
                    .lagos(&field, &path)?
                    .loss(super::data::lagos_direction(*column)),
            ))
        }
        LossSpec::Ping {
            file,
            window_ms,
            slot_ms,
        } => {
            let field = format!("{name}.loss.file");
            let path = resolve(&field, file)?;
            let model = PingLossModel {
                window: Duration::from_millis(*window_ms),
                slot: (*slot_ms > 0).then(|| Duration::from_millis(*slot_ms)),
            };
            Loss::Series(Arc::new(replayed.ping(&field, &path, model)?.loss()))
        }
    })
}

/// The loss probability of an orbit path, second by second, when each of its links loses a
/// packet independently with `rate`: up link, `hops` inter-satellite links, down link. A second
/// without a path (an outage, dropped anyway) repeats the last second that had one.
fn per_link_loss(
    rate: f64,
    isl_hops: &[Option<u32>],
) -> Result<LossSeries, crate::link::LinkConfigError> {
    let mut last = isl_hops.iter().flatten().next().copied().unwrap_or(0);
    let probabilities = isl_hops
        .iter()
        .map(|hops| {
            if let Some(h) = hops {
                last = *h;
            }
            1.0 - (1.0 - rate).powi(last as i32 + 2)
        })
        .collect();
    LossSeries::new(Duration::from_secs(1), probabilities, SeriesEnd::Hold)
}

/// A boundary loss profile of 100-ms rows, or `None` when it is empty.
fn loss_profile(rows: &[f64]) -> Result<Option<LossProfile>, crate::link::LinkConfigError> {
    if rows.is_empty() {
        return Ok(None);
    }
    LossProfile::new(Duration::from_millis(LOSS_PROFILE_ROW_MS), rows.to_vec()).map(Some)
}

/// The link events of one direction: the handover effects at each instant, and the orbit gaps.
fn events(
    dir: &DirectionSpec,
    instants: &[u64],
    outages_ms: &[(u64, u64)],
) -> Result<Vec<HandoverEvent>, crate::link::LinkConfigError> {
    let h = &dir.handover;
    let profile = loss_profile(&h.boundary_loss_profile)?;
    let mut events = Vec::new();
    for &at in instants {
        let at = Time::from_millis(at);
        if h.outage_ms > 0 {
            events.push(HandoverEvent::new(
                at,
                HandoverEffect::Outage {
                    duration: Duration::from_millis(u64::from(h.outage_ms)),
                    mode: h.outage,
                },
            ));
        }
        if h.loss_burst_rate > 0.0 && h.loss_burst_ms > 0 {
            events.push(HandoverEvent::new(
                at,
                HandoverEffect::LossBurst {
                    duration: Duration::from_millis(u64::from(h.loss_burst_ms)),
                    probability: h.loss_burst_rate,
                },
            ));
        }
        if let Some(profile) = &profile {
            events.push(HandoverEvent::new(
                at,
                HandoverEffect::LossProfile(profile.clone()),
            ));
        }
    }
    for &(from, to) in outages_ms {
        events.push(HandoverEvent::new(
            Time::from_millis(from),
            HandoverEffect::Outage {
                duration: Duration::from_millis(to - from),
                mode: OutageMode::Drop,
            },
        ));
    }
    events.sort_by_key(|e| e.at);
    Ok(events)
}

/// The loss profiles of one direction at the slot boundaries that are not handover instants
/// (both lists ascending).
fn boundary_losses(
    dir: &DirectionSpec,
    boundaries_ms: &[u64],
    instants: &[u64],
) -> Result<Vec<(Time, LossProfile)>, crate::link::LinkConfigError> {
    let Some(profile) = loss_profile(dir.handover.no_handover_profile())? else {
        return Ok(Vec::new());
    };
    Ok(boundaries_ms
        .iter()
        .filter(|at| instants.binary_search(at).is_err())
        .map(|&at| (Time::from_millis(at), profile.clone()))
        .collect())
}

/// One probe of [`probe_rtt`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProbeSample {
    /// When it was sent, ms after the call start.
    pub sent_ms: u64,
    /// Round-trip time, ms (`None`: lost on either direction).
    pub rtt_ms: Option<f64>,
}

/// Pings through fresh copies of the two links: a `bytes`-byte probe every `interval` on the
/// forward link, echoed on the reverse link when it arrives, as `ping` does (the mmsys24 traces
/// ping every 0.15-0.22 s). The probes are light enough not to queue behind each other.
pub fn probe_rtt(
    realization: &Realization,
    interval: Duration,
    bytes: u32,
) -> Result<Vec<ProbeSample>, ScenarioError> {
    let mut forward = realization.forward_link()?;
    let mut reverse = realization.reverse_link()?;
    let end = Time::ZERO + realization.duration;
    let step = interval.max(Duration::from_millis(1));
    let mut out = Vec::new();
    let mut t = Time::ZERO;
    while t < end {
        let rtt = match forward.send(t, bytes) {
            Verdict::Delivered { at } => match reverse.send(at, bytes) {
                Verdict::Delivered { at: back } => Some((back - t).as_secs_f64() * 1e3),
                Verdict::Dropped { .. } => None,
            },
            Verdict::Dropped { .. } => None,
        };
        out.push(ProbeSample {
            sent_ms: t.as_millis(),
            rtt_ms: rtt,
        });
        t += step;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outage_seconds_merge_into_intervals() {
        assert_eq!(
            merge_seconds(&[3, 4, 5, 9]),
            vec![(3_000, 6_000), (9_000, 10_000)]
        );
        assert!(merge_seconds(&[]).is_empty());
    }
}

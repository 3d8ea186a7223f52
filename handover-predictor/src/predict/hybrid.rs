//! The hybrid predictor: the dish's observed track identifies the serving satellite, the orbit
//! model continues from it (source `hybrid`).
//!
//! The orbital predictor ([`Orbital`]) has to *guess* which satellite serves now: it re-runs the
//! serving policy from the catalogue alone, and any difference between its catalogue or its
//! policy and the real ones shows up as a wrong current satellite and wrong next handovers. The
//! mirror predictor (paper section III-D, the paper's live predictor) knows only that handovers
//! happened, not to which satellite, and repeats the last interval (the limitation the paper's
//! section V names). The hybrid takes what the dish shows (the serving satellite's track in the
//! obstruction map, one point per second, [`crate::dish::HandoverDetector`]) and what the
//! catalogue knows:
//!
//! 1. **Identify** (reference B6 of `../shared/reference/starlink-dish-and-orbits.md`, the
//!    SatInView/LEOViz matching): take the observed sky directions of the latest slot with at
//!    least [`DEFAULT_MIN_POINTS`] fresh points; for every operational satellite compute where it
//!    was at the same UTC instants; drop those at or below [`DEFAULT_MIN_MATCH_ELEVATION_DEG`] at
//!    any sample (B6 step 4); cost = sum of the great-circle separations between observed and
//!    predicted points + the difference of the initial bearings of the observed and predicted
//!    tracks, first point to last (B6 step 5, FRAME_EARTH). The minimum-cost satellite is the
//!    serving one (B6 step 6) if its mean separation is at most
//!    [`DEFAULT_MAX_MEAN_SEPARATION_DEG`]; otherwise nothing matched.
//! 2. **Continue**: run the serving policy forward from the identified slot with the identified
//!    satellite as the previous slot's choice (the Starlink keep rule,
//!    [`StarlinkConfig`](crate::orbit::StarlinkConfig), is the only memory the policy has), up
//!    to the end of the 120-s horizon: the serving engine's seeded entry point,
//!    [`serving_timeline_seeded`].
//! 3. **Fall back**: with no usable observation, or no satellite within the threshold, forecast
//!    exactly as [`Orbital`] does, and say so ([`Hybrid::last_basis`], [`Hybrid::last_match`]).
//!
//! Like every source it reads no clock: observations carry their UTC instant (the dish's time),
//! and forecasts map the monotonic decision instant to UTC with the pair given at construction,
//! as [`Orbital`] does.

use super::orbital::{DEFAULT_MAX_CATALOGUE_AGE, Orbital};
use crate::forecast::{Forecast, ForecastSource, HORIZON, HORIZON_STEPS, HandoverTiming};
use crate::orbit::{
    Catalogue, Observer, Satellite, ServingPolicy, TimelineError, reachable, serving_timeline,
    serving_timeline_seeded,
};
use crate::sky::{SLOT_LENGTH_S, SkyPosition, slot_start};
use crate::source::{HandoverSource, SourceError};
use chrono::{DateTime, Duration as ChronoDuration, DurationRound, Utc};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Largest mean separation (degrees) between the observed track and a satellite's predicted one
/// for the satellite to be taken as the serving one. Reference B7: after calibrating the map's
/// frame, pixel-derived directions of real maps differ from the matched satellite's by a median
/// of 2.4-4.1 degrees and a 90th percentile of 4.7-6.9 degrees; 6 degrees accepts a real dish's
/// typical slot and refuses a track that no catalogued satellite follows (a satellite missing
/// from the catalogue, a map in an uncalibrated frame). Telling close neighbours apart is the
/// minimum cost's job, not the threshold's: two satellites can fly 2 degrees apart, within the
/// map's pixel size (reference B5; the runner-up in [`Match::runner_up`] shows such slots).
pub const DEFAULT_MAX_MEAN_SEPARATION_DEG: f64 = 6.0;

/// Satellites at or below this elevation at any sample are not candidates for a match:
/// reference B6 step 4 (the matching tools discard them; C3: nothing below 25 degrees serves).
pub const DEFAULT_MIN_MATCH_ELEVATION_DEG: f64 = 20.0;

/// Fewest observed points a slot needs to be matched: SatInView matches on 3 samples per slot
/// (first, middle, second-to-last, reference B6 step 3).
pub const DEFAULT_MIN_POINTS: usize = 3;

/// Where in time a detector's track point shows the satellite, relative to the point's instant,
/// when the map was cleared since the previous poll, seconds: -0.5. All pixels lit since the
/// clear are new, so their centroid is the middle of the second's footprints (reference B4).
/// Measured on the simulated dish: the separation from the truth is least at -0.4 s (median
/// 0.3 degrees; `tests/hybrid_identification.rs` checks the calibration).
pub const DEFAULT_RESET_POINT_OFFSET_S: f64 = -0.5;

/// The same for a point whose map was not cleared, seconds: +1.0. Only the pixels new since the
/// previous poll count (reference B4's XOR), and those are the *leading edge* of the beam's
/// footprint, about one beam radius ahead of the satellite: with the simulated dish's 1-px beam
/// (1.3 degrees) and 0.5-1 degree/s of motion, about a second ahead. Measured on the simulated
/// dish: least separation at +1.1 s (median 0.5 degrees, against 1.2 degrees at -0.5 s). A real
/// dish's footprint differs; calibrate against a TLE-predicted pass as reference B2 advises.
pub const DEFAULT_EDGE_POINT_OFFSET_S: f64 = 1.0;

/// How many slots back the identified slot may lie from the decision instant's slot: the
/// current one or the one before (right after a boundary the current slot has no fresh point
/// yet, reference B3-B5). Older tracks are not used: the keep rule's memory is one slot.
pub const DEFAULT_MAX_OBSERVATION_AGE_SLOTS: u32 = 1;

/// The observed arc (degrees, first to last point) below which the bearing term of the B6 cost
/// is left out: over a shorter arc the map's 1.29-degree pixels (reference B2) make the observed
/// bearing noise. B6's tools match whole 13-15-s tracks, about 10 degrees long (B4).
pub const MIN_BEARING_ARC_DEG: f64 = 3.0;

/// A candidate whose predicted direction at the middle sample is further than this (degrees)
/// from the observed one is rejected before its other samples are propagated. Far above any
/// acceptable mean separation, so it never rejects a satellite the full cost would accept.
const QUICK_REJECT_DEG: f64 = 25.0;

/// Settings of the identification step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridConfig {
    /// See [`DEFAULT_MAX_MEAN_SEPARATION_DEG`].
    pub max_mean_separation_deg: f64,
    /// See [`DEFAULT_MIN_MATCH_ELEVATION_DEG`].
    pub min_match_elevation_deg: f64,
    /// See [`DEFAULT_MIN_POINTS`].
    pub min_points: usize,
    /// See [`DEFAULT_RESET_POINT_OFFSET_S`].
    pub reset_point_offset_s: f64,
    /// See [`DEFAULT_EDGE_POINT_OFFSET_S`].
    pub edge_point_offset_s: f64,
    /// See [`DEFAULT_MAX_OBSERVATION_AGE_SLOTS`].
    pub max_observation_age_slots: u32,
}

impl Default for HybridConfig {
    fn default() -> Self {
        Self {
            max_mean_separation_deg: DEFAULT_MAX_MEAN_SEPARATION_DEG,
            min_match_elevation_deg: DEFAULT_MIN_MATCH_ELEVATION_DEG,
            min_points: DEFAULT_MIN_POINTS,
            reset_point_offset_s: DEFAULT_RESET_POINT_OFFSET_S,
            edge_point_offset_s: DEFAULT_EDGE_POINT_OFFSET_S,
            max_observation_age_slots: DEFAULT_MAX_OBSERVATION_AGE_SLOTS,
        }
    }
}

/// One observed direction of the serving satellite at a UTC instant (the dish's time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// When the dish pointed there.
    pub at: DateTime<Utc>,
    /// Degrees clockwise from true north.
    pub azimuth_deg: f64,
    /// Degrees above the horizon.
    pub elevation_deg: f64,
}

/// An observation as stored: the sample, when it was seen and the slot it belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Observed {
    slot: DateTime<Utc>,
    seen_at: DateTime<Utc>,
    sample: Sample,
}

/// The satellite an observed track was matched to, and how well (reference B6).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Match {
    /// The matched satellite's NORAD number.
    pub norad_id: u64,
    /// Start of the slot whose track was matched.
    pub slot: DateTime<Utc>,
    /// The B6 cost: sum of separations plus the bearing difference, degrees.
    pub cost: f64,
    /// Mean great-circle separation between observed and predicted points, degrees.
    pub mean_separation_deg: f64,
    /// Difference of the initial bearings of the observed and predicted tracks, degrees (0 when
    /// the observed arc is shorter than [`MIN_BEARING_ARC_DEG`]).
    pub bearing_difference_deg: f64,
    /// Observed points matched.
    pub points: usize,
    /// The second-best satellite and its cost, if any: a close runner-up means an ambiguous
    /// slot (B5: consecutive satellites can be near each other).
    pub runner_up: Option<(u64, f64)>,
}

/// What a hybrid forecast was based on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Basis {
    /// The serving satellite was identified; the forecast continues from it.
    Identified(Match),
    /// No slot within [`HybridConfig::max_observation_age_slots`] had
    /// [`HybridConfig::min_points`] observed points: the plain orbital forecast.
    NoObservation,
    /// No satellite matched within [`HybridConfig::max_mean_separation_deg`]: the plain orbital
    /// forecast. `best` is the closest satellite, if any was above the elevation limit.
    NoMatch {
        /// The minimum-cost satellite that was refused.
        best: Option<Match>,
    },
}

/// The hybrid predictor (see the module documentation).
#[derive(Debug, Clone)]
pub struct Hybrid {
    catalogue: Arc<Catalogue>,
    observer: Observer,
    policy: ServingPolicy,
    config: HybridConfig,
    epoch_instant: Instant,
    epoch_utc: DateTime<Utc>,
    observed: VecDeque<Observed>,
    last_basis: Option<Basis>,
    fallback: Orbital,
}

impl Hybrid {
    /// A predictor for `observer` under `policy` (the policy it *assumes* the network follows),
    /// with `epoch_instant` corresponding to `epoch_utc`. Refuses a policy with parameters out of
    /// range.
    pub fn new(
        catalogue: Arc<Catalogue>,
        observer: Observer,
        policy: ServingPolicy,
        epoch_instant: Instant,
        epoch_utc: DateTime<Utc>,
    ) -> Result<Self, TimelineError> {
        // The parameter check of the serving policy, on an empty catalogue (no propagation).
        serving_timeline(&Catalogue::default(), &observer, &policy, epoch_utc, 1)?;
        let fallback = Orbital::new(
            catalogue.clone(),
            observer,
            policy,
            epoch_instant,
            epoch_utc,
        );
        Ok(Self {
            catalogue,
            observer,
            policy,
            config: HybridConfig::default(),
            epoch_instant,
            epoch_utc,
            observed: VecDeque::new(),
            last_basis: None,
            fallback,
        })
    }

    /// The same predictor with other identification settings.
    pub fn with_config(mut self, config: HybridConfig) -> Self {
        self.config = config;
        self
    }

    /// Its identification settings.
    pub fn config(&self) -> &HybridConfig {
        &self.config
    }

    /// The UTC instant of `at`; `None` if it is out of chrono's range.
    pub fn utc(&self, at: Instant) -> Option<DateTime<Utc>> {
        let shift = |d: Duration| ChronoDuration::from_std(d).ok();
        match at.checked_duration_since(self.epoch_instant) {
            Some(after) => self.epoch_utc.checked_add_signed(shift(after)?),
            None => self
                .epoch_utc
                .checked_sub_signed(shift(self.epoch_instant.duration_since(at))?),
        }
    }

    /// An observed direction of the serving satellite, seen at `sample.at` and belonging to
    /// the slot containing it. Samples may come in any order; those more than a few slots older
    /// than the newest are forgotten; non-finite directions are ignored.
    pub fn observe_sample(&mut self, sample: Sample) {
        if !representable(sample.at) {
            return;
        }
        self.record(Observed {
            slot: slot_start(sample.at),
            seen_at: sample.at,
            sample,
        });
    }

    fn record(&mut self, observed: Observed) {
        let s = observed.sample;
        let valid = representable(s.at)
            && representable(observed.seen_at)
            && s.azimuth_deg.is_finite()
            && s.elevation_deg.is_finite()
            && (-90.0..=90.0).contains(&s.elevation_deg);
        if !valid {
            return;
        }
        let index = self
            .observed
            .partition_point(|o| o.seen_at <= observed.seen_at);
        self.observed.insert(index, observed);
        let keep = ChronoDuration::seconds(
            SLOT_LENGTH_S * (i64::from(self.config.max_observation_age_slots) + 3),
        );
        if let Some(oldest_kept) = self
            .observed
            .back()
            .and_then(|o| o.seen_at.checked_sub_signed(keep))
        {
            while self
                .observed
                .front()
                .is_some_and(|o| o.seen_at < oldest_kept)
            {
                self.observed.pop_front();
            }
        }
    }

    /// A point of the detector's track. Only [`PointKind::Fresh`](crate::dish::PointKind)
    /// points are used: a held point repeats an old position and a straddling one may mix two
    /// satellites (reference B4, B5). The direction is dated
    /// [`HybridConfig::reset_point_offset_s`] or [`HybridConfig::edge_point_offset_s`] from the
    /// point's instant, depending on whether the map had been cleared since the previous poll.
    #[cfg(feature = "dish")]
    pub fn observe(&mut self, point: &crate::dish::TrackPoint) {
        if point.kind != crate::dish::PointKind::Fresh {
            return;
        }
        let offset_s = if point.map_reset {
            self.config.reset_point_offset_s
        } else {
            self.config.edge_point_offset_s
        };
        if !offset_s.is_finite() || offset_s.abs() > 60.0 || !representable(point.at) {
            return;
        }
        let offset = ChronoDuration::milliseconds((offset_s * 1000.0).round() as i64);
        // The point belongs to its own slot even when its direction is dated into the next
        // one (an edge point 1 s before a boundary).
        self.record(Observed {
            slot: point.slot,
            seen_at: point.at,
            sample: Sample {
                at: point.at + offset,
                azimuth_deg: point.direction.azimuth_deg,
                elevation_deg: point.direction.elevation_deg,
            },
        });
    }

    /// Forgets every observation (e.g. after the dish moved).
    pub fn clear_observations(&mut self) {
        self.observed.clear();
    }

    /// What the last forecast was based on; `None` before the first forecast.
    pub fn last_basis(&self) -> Option<&Basis> {
        self.last_basis.as_ref()
    }

    /// The match the last forecast continued from; `None` when it fell back to the plain
    /// orbital forecast (or before the first forecast).
    pub fn last_match(&self) -> Option<&Match> {
        match &self.last_basis {
            Some(Basis::Identified(m)) => Some(m),
            _ => None,
        }
    }

    /// Identifies the satellite that served the slot starting at `slot` (rounded down to a slot
    /// boundary) from the observations of that slot.
    pub fn identify_slot(&self, slot: DateTime<Utc>) -> Basis {
        let slot = slot_start(slot);
        let samples = self.samples_of(slot, None);
        if samples.len() < self.config.min_points.max(1) {
            return Basis::NoObservation;
        }
        self.judge(slot, &samples)
    }

    /// The latest slot, at most [`HybridConfig::max_observation_age_slots`] before the one
    /// containing `at`, with enough observations at or before `at`, identified.
    pub fn identify_latest(&self, at: DateTime<Utc>) -> Basis {
        let current = slot_start(at);
        for age in 0..=i64::from(self.config.max_observation_age_slots) {
            let slot = current - ChronoDuration::seconds(SLOT_LENGTH_S * age);
            let samples = self.samples_of(slot, Some(at));
            if samples.len() >= self.config.min_points.max(1) {
                return self.judge(slot, &samples);
            }
        }
        Basis::NoObservation
    }

    /// The samples of `slot` (seen no later than `seen_by`, if given), in time order.
    fn samples_of(&self, slot: DateTime<Utc>, seen_by: Option<DateTime<Utc>>) -> Vec<Sample> {
        let mut samples: Vec<Sample> = self
            .observed
            .iter()
            .filter(|o| o.slot == slot && seen_by.is_none_or(|by| o.seen_at <= by))
            .map(|o| o.sample)
            .collect();
        samples.sort_by_key(|s| s.at);
        samples
    }

    fn judge(&self, slot: DateTime<Utc>, samples: &[Sample]) -> Basis {
        let best = self.match_samples(slot, samples);
        match best {
            Some(m) if m.mean_separation_deg <= self.config.max_mean_separation_deg => {
                Basis::Identified(m)
            }
            best => Basis::NoMatch { best },
        }
    }

    /// The minimum-cost satellite for `samples` (reference B6), whatever its cost.
    fn match_samples(&self, slot: DateTime<Utc>, samples: &[Sample]) -> Option<Match> {
        let first = samples.first()?;
        let last = samples.last()?;
        let middle = samples[samples.len() / 2];
        let mask = self.config.min_match_elevation_deg;
        // The satellites the policy may choose that can be above the mask during the track.
        let eligible = self.policy.eligible(&self.catalogue);
        let candidates = reachable(&eligible, &self.observer, mask, first.at, last.at);
        let observed_arc = separation_deg(
            (first.azimuth_deg, first.elevation_deg),
            (last.azimuth_deg, last.elevation_deg),
        );
        let observed_bearing = (observed_arc >= MIN_BEARING_ARC_DEG).then(|| {
            bearing_deg(
                (first.azimuth_deg, first.elevation_deg),
                (last.azimuth_deg, last.elevation_deg),
            )
        });
        let mut scored: Vec<Match> = Vec::new();
        for satellite in candidates {
            let Some(m) = look(satellite, &self.observer, middle.at) else {
                continue;
            };
            let quick = separation_deg(
                (m.azimuth_deg, m.elevation_deg),
                (middle.azimuth_deg, middle.elevation_deg),
            );
            if quick > QUICK_REJECT_DEG {
                continue;
            }
            let mut predicted = Vec::with_capacity(samples.len());
            for s in samples {
                match look(satellite, &self.observer, s.at) {
                    Some(p) if p.elevation_deg > mask => predicted.push(p),
                    _ => break,
                }
            }
            if predicted.len() != samples.len() {
                continue;
            }
            let sum: f64 = samples
                .iter()
                .zip(&predicted)
                .map(|(s, p)| {
                    separation_deg(
                        (s.azimuth_deg, s.elevation_deg),
                        (p.azimuth_deg, p.elevation_deg),
                    )
                })
                .sum();
            let bearing_difference_deg =
                match (observed_bearing, predicted.first(), predicted.last()) {
                    (Some(observed), Some(a), Some(b)) => {
                        let predicted_bearing = bearing_deg(
                            (a.azimuth_deg, a.elevation_deg),
                            (b.azimuth_deg, b.elevation_deg),
                        );
                        angle_difference_deg(observed, predicted_bearing)
                    }
                    _ => 0.0,
                };
            scored.push(Match {
                norad_id: satellite.norad_id(),
                slot,
                cost: sum + bearing_difference_deg,
                mean_separation_deg: sum / samples.len() as f64,
                bearing_difference_deg,
                points: samples.len(),
                runner_up: None,
            });
        }
        scored.sort_by(|a, b| a.cost.total_cmp(&b.cost).then(a.norad_id.cmp(&b.norad_id)));
        let mut best = *scored.first()?;
        best.runner_up = scored.get(1).map(|m| (m.norad_id, m.cost));
        Some(best)
    }

    /// The serving timeline (NORAD numbers, one entry per second from `slot`, `seconds`
    /// entries) if `norad_id` serves the slot starting at `slot` (rounded down to a boundary):
    /// the policy's choices from the next slot on, with `norad_id` as the previous choice.
    ///
    /// Under the delay policy the satellite is taken to serve at `slot` itself (truncated to the
    /// whole second) and the per-second choice continues from the next second.
    ///
    /// This is the serving engine's [`serving_timeline_seeded`]; the seed's own entries are
    /// `None` if the catalogue has no satellite `norad_id` (or cannot propagate it).
    pub fn continue_from(
        &self,
        slot: DateTime<Utc>,
        norad_id: u64,
        seconds: u32,
    ) -> Vec<Option<u64>> {
        serving_timeline_seeded(
            &self.catalogue,
            &self.observer,
            &self.policy,
            slot,
            norad_id,
            seconds,
        )
        .map(|timeline| timeline.iter().map(|s| s.map(|s| s.norad_id)).collect())
        // The only error is a policy out of range, which `new` refused.
        .unwrap_or_default()
    }

    fn catalogue_usable(&self, at: DateTime<Utc>) -> bool {
        if self.catalogue.is_empty() {
            return false;
        }
        self.catalogue.newest_epoch().is_none_or(|newest| {
            (at - newest)
                .abs()
                .to_std()
                .is_ok_and(|age| age <= DEFAULT_MAX_CATALOGUE_AGE)
        })
    }

    fn unavailable(&self, reason: &str) -> SourceError {
        SourceError::Unavailable {
            source_name: "hybrid".into(),
            reason: reason.to_owned(),
        }
    }
}

impl HandoverSource for Hybrid {
    fn name(&self) -> &str {
        "hybrid"
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        let at = self
            .utc(now)
            .ok_or_else(|| self.unavailable("the instant is out of range"))?;
        let basis = if representable(at) && self.catalogue_usable(at) {
            self.identify_latest(at)
        } else {
            Basis::NoObservation
        };
        self.last_basis = Some(basis);
        let Basis::Identified(m) = basis else {
            // The plain orbital forecast (which also reports an empty or stale catalogue).
            let orbital = self.fallback.forecast(now)?;
            return Ok(Forecast::with_handovers(
                ForecastSource::Hybrid,
                now,
                orbital.handovers().iter().copied(),
                orbital.timing(),
            )?);
        };
        // The timeline from the identified slot through the end of the horizon.
        let from = match self.policy {
            ServingPolicy::Starlink(_) => m.slot,
            // Under the delay policy the match says who served at the last observed second.
            ServingPolicy::Delay(_) => {
                let last = self
                    .samples_of(m.slot, Some(at))
                    .last()
                    .map_or(m.slot, |s| s.at);
                last.duration_trunc(ChronoDuration::seconds(1))
                    .unwrap_or(last)
            }
        };
        let lead = (at - from).num_seconds().max(0);
        let seconds = u32::try_from(lead + HORIZON_STEPS as i64 + 2).unwrap_or(u32::MAX);
        let ids = self.continue_from(from, m.norad_id, seconds);
        let mut last: Option<u64> = None;
        let mut offsets = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            let Some(id) = *id else { continue };
            if last.is_some_and(|l| l != id) {
                let instant = from + ChronoDuration::seconds(i as i64);
                if let Ok(offset) = (instant - at).to_std()
                    && !offset.is_zero()
                    && offset <= HORIZON
                {
                    offsets.push(offset);
                }
            }
            last = Some(id);
        }
        // The orbit model's instants are whole UTC seconds: on the slot grid under the Starlink
        // policy, exact under the delay policy's per-second choice.
        Ok(Forecast::from_offsets(
            ForecastSource::Hybrid,
            now,
            offsets,
            HandoverTiming::SubSecond,
        )?)
    }
}

/// Whether `t` is at least a day inside chrono's range, so that the slot and window arithmetic
/// around it (minutes at most) cannot overflow.
fn representable(t: DateTime<Utc>) -> bool {
    let day = ChronoDuration::days(1);
    t.checked_sub_signed(day).is_some() && t.checked_add_signed(day).is_some()
}

fn look(satellite: &Satellite, observer: &Observer, at: DateTime<Utc>) -> Option<SkyPosition> {
    satellite.sky_position(observer, at).ok()
}

/// Great-circle angle between two (azimuth, elevation) directions, degrees.
fn separation_deg(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (a1, e1) = (a.0.to_radians(), a.1.to_radians());
    let (a2, e2) = (b.0.to_radians(), b.1.to_radians());
    let cos = e1.sin() * e2.sin() + e1.cos() * e2.cos() * (a1 - a2).cos();
    cos.clamp(-1.0, 1.0).acos().to_degrees()
}

/// Initial bearing of the great circle from `a` to `b` on the sky sphere (azimuth as longitude,
/// elevation as latitude), degrees in (-180, 180].
fn bearing_deg(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (a1, e1) = (a.0.to_radians(), a.1.to_radians());
    let (a2, e2) = (b.0.to_radians(), b.1.to_radians());
    let d = a2 - a1;
    let y = d.sin() * e2.cos();
    let x = e1.cos() * e2.sin() - e1.sin() * e2.cos() * d.cos();
    y.atan2(x).to_degrees()
}

/// Absolute difference of two angles, degrees in [0, 180].
fn angle_difference_deg(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearings_and_angle_differences_wrap() {
        assert!((bearing_deg((0.0, 40.0), (0.0, 50.0)) - 0.0).abs() < 1e-9);
        assert!((bearing_deg((10.0, 0.0), (20.0, 0.0)) - 90.0).abs() < 1e-9);
        assert!((angle_difference_deg(170.0, -170.0) - 20.0).abs() < 1e-9);
        assert!((angle_difference_deg(10.0, 350.0) - 20.0).abs() < 1e-9);
        assert!((separation_deg((0.0, 90.0), (123.0, 80.0)) - 10.0).abs() < 1e-9);
    }
}

//! Serving-satellite selection: which satellite serves the dish, second by second.
//!
//! Two policies, each a pure function of the catalogue, the observer and the instant:
//!
//! - [`ServingPolicy::Starlink`]: the assignment changes only at Starlink's slot boundaries (seconds
//!   12, 27, 42, 57 of each UTC minute, reference C1). The satellite for a slot is chosen from those
//!   above the minimum elevation for the whole slot by a score, with a keep rule for the previous
//!   slot's satellite (see [`StarlinkConfig`]). The keep rule's memory restarts on a fixed UTC
//!   grid, so a slot's satellite is a function of the catalogue, the observer and the slot only:
//!   any window of the timeline agrees with every other window that overlaps it (the orbital
//!   predictor's forecast and the oracle's ground truth never disagree about a slot).
//! - [`ServingPolicy::Delay`]: StarryNet's delay-based policy, which the paper's emulation used
//!   (paper section III-B: "initiating a handover once a lower candidate delay is detected"): every
//!   second, switch to the visible satellite with the lowest propagation delay when it beats the
//!   current one by more than a margin, or when the current one drops below the minimum elevation.
//!
//! [`serving_timeline`] starts each policy's chain of choices at its last memory restart;
//! [`serving_timeline_seeded`] starts it at a given slot (or second) from a satellite known to
//! serve it (the hybrid predictor's continuation from the dish's observed track). Both run the
//! same engine.
//!
//! The search is prefiltered: for each window of up to 120 s, every satellite is propagated once at
//! the window's middle, and only those that could reach the elevation mask within the window (a
//! bound from their Earth-fixed speed, see [`Search`]) are propagated second by second. The bound
//! is conservative, so the prefiltered timeline equals the exhaustive one (tested).

use super::catalogue::{Catalogue, Satellite};
use super::geometry::{
    EARTH_ROTATION_RAD_PER_S, Observer, gmst_rad, max_slant_range_km, propagation_delay_ms,
    teme_to_ecef,
};
use crate::sky::{SLOT_LENGTH_S, Serving, SkyPosition, slot_start};
use chrono::{DateTime, Duration as ChronoDuration, DurationRound, Utc};

/// Default minimum elevation, degrees: 25, the lowest elevation Starlink user terminals use
/// since the FCC's April-2021 modification and the value Tanveer et al. use (reference C1, C3).
pub const DEFAULT_MIN_ELEVATION_DEG: f64 = 25.0;

/// Default lowest mean altitude of a Starlink serving satellite, km: satellites below 450 km are
/// raising their orbit or deorbiting (reference C4 counts operational satellites as those with a
/// mean altitude of at least 450 km: 5,380 of 6,937 in the January-2025 snapshot).
pub const DEFAULT_MIN_ALTITUDE_KM: f64 = 450.0;

/// Default staleness limit, days: a satellite whose element set is more than 7 days older than the
/// catalogue's newest is left out. Starlink sets are refreshed several times a day (reference D2:
/// they manoeuvre often), so a set weeks older than the snapshot belongs to an object that is no
/// longer tracked, in practice one that re-entered (the May-2025 snapshot carries hundreds of
/// such sets, some a year old). Generated catalogues share one epoch and are not affected.
pub const DEFAULT_MAX_STALENESS_DAYS: f64 = 7.0;

/// Longest window one prefilter pass covers, seconds. Shorter windows keep fewer candidates;
/// 120 s (8 slots) is one forecast.
const PREFILTER_WINDOW_S: i64 = 120;

/// Configuration of the Starlink slot policy.
///
/// Starlink's scheduler is not public; this policy is built to reproduce what has been measured
/// about its choices (reference C3, C5: serving satellites from SatInView's July-2024 data at
/// Brisbane, Kanazawa and Louvain). At each slot:
///
/// 1. Candidates: satellites of operational altitude ([`DEFAULT_MIN_ALTITUDE_KM`]) with a fresh
///    element set, at or above `min_elevation_deg` at the slot's start, middle and end (a pass's
///    elevation has a single maximum, so that is the whole slot), and not within
///    `gso_exclusion_deg` of the geostationary arc as seen from the dish.
/// 2. Score at the slot's middle, in degrees:
///    `-|elevation - target_elevation_deg| + poleward_weight_deg * cos(azimuth - pole-ward azimuth)`.
/// 3. The previous slot's satellite keeps the slot if it is still a candidate and scores within
///    `keep_margin_deg` of the best; otherwise the best serves (ties to the lower NORAD number).
///
/// Why each part, against the three measured figures:
///
/// - *pole-ward half of the sky 74-88 % of the time* (C5, "consistent with geostationary-arc
///   avoidance"): the geostationary arc lies equator-ward, high in the sky at low latitudes
///   (Brisbane) and low at high ones (Louvain). Excluding directions near the arc pushes the
///   choice pole-ward where the arc is high; the small cosine term does the rest where it is low.
///   The pole-ward weight alone over-shoots at high latitudes (99 % at Louvain with a weight of 4)
///   while under-shooting at low ones; the exclusion alone leaves Louvain at 65 %.
/// - *median serving elevation 47-60 degrees* (C3): the scheduler does not pick the highest
///   satellite; the elevation term pulls towards a target in the middle of that range.
/// - *the satellite changes at 59-86 % of boundaries* (C5) with a typical tenure of one slot and at
///   most 4-7: a satellite drifts 5-10 degrees in one slot, so without memory a new one nearly
///   always scores best (90-96 % changes at Kanazawa and Louvain); the keep margin lets a satellite
///   that is still nearly the best stay.
///
/// The defaults were calibrated on the real May-2025 catalogue, 2 h at each of the three sites;
/// `tests/orbit_starlink_policy.rs` measures the three figures and asserts them. The
/// geostationary exclusion angle and the weights are fitted values, not published ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StarlinkConfig {
    /// Candidates must stay at or above this elevation for the whole slot (degrees).
    pub min_elevation_deg: f64,
    /// Candidates must have at least this mean altitude (km), see [`DEFAULT_MIN_ALTITUDE_KM`].
    pub min_altitude_km: f64,
    /// The elevation the score prefers (degrees).
    pub target_elevation_deg: f64,
    /// Weight of the pole-ward term (degrees of elevation a fully pole-ward azimuth is worth).
    pub poleward_weight_deg: f64,
    /// Candidates whose direction is closer than this (degrees) to the geostationary arc as seen
    /// from the observer are excluded; 0 turns the rule off.
    pub gso_exclusion_deg: f64,
    /// The previous slot's satellite keeps the next slot if it is still a candidate and its score
    /// is within this many degrees of the best one's.
    pub keep_margin_deg: f64,
    /// The keep rule's memory restarts every this many slots (at slots whose index since the Unix
    /// epoch is a multiple of it), so that a slot's satellite depends only on the slots since the
    /// last restart and every window of the timeline agrees with every other (the orbital
    /// predictor's forecasts and the oracle's truth never disagree). A window computes from the
    /// last restart, up to this many slots earlier. 40 slots = 10 minutes, well past the longest
    /// observed tenure (7 slots, reference C5). 1 = memoryless.
    pub memory_slots: u32,
    /// Satellites whose element set is older than the catalogue's newest by more than this many
    /// days are left out ([`DEFAULT_MAX_STALENESS_DAYS`]).
    pub max_staleness_days: f64,
}

impl Default for StarlinkConfig {
    fn default() -> Self {
        Self {
            min_elevation_deg: DEFAULT_MIN_ELEVATION_DEG,
            min_altitude_km: DEFAULT_MIN_ALTITUDE_KM,
            target_elevation_deg: 55.0,
            poleward_weight_deg: 0.6,
            gso_exclusion_deg: 12.0,
            keep_margin_deg: 1.75,
            memory_slots: 40,
            max_staleness_days: DEFAULT_MAX_STALENESS_DAYS,
        }
    }
}

/// Configuration of the delay-based (StarryNet) policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelayConfig {
    /// A satellite is visible at or above this elevation (degrees).
    pub min_elevation_deg: f64,
    /// Switch only when another satellite's one-way propagation delay is lower than the current
    /// one's by more than this (ms). 0 is the paper's "once a lower candidate delay is detected";
    /// a positive margin adds hysteresis.
    pub margin_ms: f64,
    /// Satellites below this mean altitude (km) are ignored; 0 keeps all.
    pub min_altitude_km: f64,
    /// With a positive margin the choice depends on the past; that memory restarts every this
    /// many seconds of UTC (at Unix times that are multiples of it), so that every window of the
    /// timeline agrees with every other. A window then computes from the last restart, up to this
    /// many seconds earlier. Unused with a zero margin (the choice is then memoryless).
    pub memory_s: u32,
    /// Satellites whose element set is older than the catalogue's newest by more than this many
    /// days are left out ([`DEFAULT_MAX_STALENESS_DAYS`]).
    pub max_staleness_days: f64,
}

impl Default for DelayConfig {
    fn default() -> Self {
        Self {
            min_elevation_deg: DEFAULT_MIN_ELEVATION_DEG,
            margin_ms: 0.0,
            min_altitude_km: 0.0,
            memory_s: 600,
            max_staleness_days: DEFAULT_MAX_STALENESS_DAYS,
        }
    }
}

/// How the serving satellite is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ServingPolicy {
    /// Starlink's 15-s slots and a documented score ([`StarlinkConfig`]).
    Starlink(StarlinkConfig),
    /// StarryNet's per-second lowest-delay policy ([`DelayConfig`]).
    Delay(DelayConfig),
}

impl Default for ServingPolicy {
    fn default() -> Self {
        Self::Starlink(StarlinkConfig::default())
    }
}

impl ServingPolicy {
    fn check(&self) -> Result<(), TimelineError> {
        let (min_el, min_alt, staleness) = match self {
            Self::Starlink(c) => {
                let valid = (0.0..=90.0).contains(&c.target_elevation_deg)
                    && c.poleward_weight_deg.is_finite()
                    && (0.0..=90.0).contains(&c.gso_exclusion_deg)
                    && (0.0..f64::INFINITY).contains(&c.keep_margin_deg);
                if !valid {
                    return Err(TimelineError::Policy(
                        "the target elevation and the geostationary exclusion must be within \
                         0-90 degrees, the pole-ward weight finite and the keep margin at least 0"
                            .into(),
                    ));
                }
                (c.min_elevation_deg, c.min_altitude_km, c.max_staleness_days)
            }
            Self::Delay(c) => {
                if !(c.margin_ms >= 0.0 && c.margin_ms.is_finite()) {
                    return Err(TimelineError::Policy(
                        "the delay margin must be a finite number of ms, at least 0".into(),
                    ));
                }
                (c.min_elevation_deg, c.min_altitude_km, c.max_staleness_days)
            }
        };
        if staleness.is_nan() || staleness < 0.0 {
            return Err(TimelineError::Policy(
                "the staleness limit must be at least 0 days".into(),
            ));
        }
        if !(0.0..90.0).contains(&min_el) {
            return Err(TimelineError::Policy(format!(
                "the minimum elevation must be within [0, 90) degrees, got {min_el}"
            )));
        }
        if !min_alt.is_finite() {
            return Err(TimelineError::Policy(
                "the minimum altitude must be finite".into(),
            ));
        }
        Ok(())
    }

    fn min_elevation_deg(&self) -> f64 {
        match self {
            Self::Starlink(c) => c.min_elevation_deg,
            Self::Delay(c) => c.min_elevation_deg,
        }
    }

    fn min_altitude_km(&self) -> f64 {
        match self {
            Self::Starlink(c) => c.min_altitude_km,
            Self::Delay(c) => c.min_altitude_km,
        }
    }

    fn max_staleness_days(&self) -> f64 {
        match self {
            Self::Starlink(c) => c.max_staleness_days,
            Self::Delay(c) => c.max_staleness_days,
        }
    }

    /// The satellites of `catalogue` this policy may choose from: operational altitude, fresh
    /// element set.
    pub(crate) fn eligible<'a>(&self, catalogue: &'a Catalogue) -> Vec<&'a Satellite> {
        let min_altitude = self.min_altitude_km();
        let staleness_s = self.max_staleness_days() * 86_400.0;
        let newest = catalogue.newest_epoch();
        catalogue
            .iter()
            .filter(|s| s.mean_altitude_km() >= min_altitude)
            .filter(|s| {
                newest.is_none_or(|newest| (newest - s.epoch()).as_seconds_f64() <= staleness_s)
            })
            .collect()
    }
}

/// Why a serving timeline could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TimelineError {
    /// A policy parameter out of range.
    #[error("invalid serving policy: {0}")]
    Policy(String),
}

/// How [`serving_timeline_with`] searches the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Search {
    /// Propagate every satellite once per window of up to 120 s and keep those whose distance
    /// from the observer, minus the distance their Earth-fixed speed can cover in half the window,
    /// is within the slant range of the elevation mask. Exact (same result as exhaustive).
    #[default]
    Prefiltered,
    /// Propagate every satellite at every instant: the baseline the prefilter is measured
    /// against (`benches/orbital.rs`) and checked against (tests).
    Exhaustive,
}

/// The serving satellite at `from`, `from + 1 s`, ..., `seconds` entries; `None` where no
/// satellite qualifies. Prefiltered search ([`Search::Prefiltered`]).
pub fn serving_timeline(
    catalogue: &Catalogue,
    observer: &Observer,
    policy: &ServingPolicy,
    from: DateTime<Utc>,
    seconds: u32,
) -> Result<Vec<Option<Serving>>, TimelineError> {
    serving_timeline_with(
        catalogue,
        observer,
        policy,
        from,
        seconds,
        Search::Prefiltered,
    )
}

/// [`serving_timeline`] with a choice of search.
pub fn serving_timeline_with(
    catalogue: &Catalogue,
    observer: &Observer,
    policy: &ServingPolicy,
    from: DateTime<Utc>,
    seconds: u32,
    search: Search,
) -> Result<Vec<Option<Serving>>, TimelineError> {
    timeline(catalogue, observer, policy, from, seconds, search, None)
}

/// The serving satellite from the decision period containing `slot` on, when `seed_norad_id` is
/// known to serve that period: one entry per second, `seconds` entries, prefiltered search
/// ([`Search::Prefiltered`]).
///
/// The selection chain starts at `slot` with the seed as the current choice, instead of at the
/// last memory restart with no choice (as [`serving_timeline`] does): the policy's only memory
/// is the previous choice, so knowing it (e.g. from the dish's observed track) is enough to
/// continue. Memory restarts after `slot` are honoured as usual, so a seed that is the policy's
/// own choice reproduces [`serving_timeline`] exactly (tested).
///
/// - [`ServingPolicy::Starlink`]: the timeline starts at `slot` rounded down to a slot boundary;
///   the seed serves that slot, the keep rule decides the next one with the seed as the
///   previous slot's satellite, and so on.
/// - [`ServingPolicy::Delay`]: the timeline starts at `slot` truncated to the whole second; the
///   seed serves that second, and the per-second choice continues with it as the current one.
///
/// The seed's entries carry its position whether or not it qualifies under the policy; they are
/// `None` where the catalogue has no satellite with that number or cannot propagate it (the
/// chain then continues as if nothing had served).
pub fn serving_timeline_seeded(
    catalogue: &Catalogue,
    observer: &Observer,
    policy: &ServingPolicy,
    slot: DateTime<Utc>,
    seed_norad_id: u64,
    seconds: u32,
) -> Result<Vec<Option<Serving>>, TimelineError> {
    serving_timeline_seeded_with(
        catalogue,
        observer,
        policy,
        slot,
        seed_norad_id,
        seconds,
        Search::Prefiltered,
    )
}

/// [`serving_timeline_seeded`] with a choice of search.
pub fn serving_timeline_seeded_with(
    catalogue: &Catalogue,
    observer: &Observer,
    policy: &ServingPolicy,
    slot: DateTime<Utc>,
    seed_norad_id: u64,
    seconds: u32,
    search: Search,
) -> Result<Vec<Option<Serving>>, TimelineError> {
    timeline(
        catalogue,
        observer,
        policy,
        slot,
        seconds,
        search,
        Some(seed_norad_id),
    )
}

/// The engine behind every entry point: anchored at the last memory restart without `seed`,
/// started from `seed` at `from`'s decision period with it.
fn timeline(
    catalogue: &Catalogue,
    observer: &Observer,
    policy: &ServingPolicy,
    from: DateTime<Utc>,
    seconds: u32,
    search: Search,
    seed: Option<u64>,
) -> Result<Vec<Option<Serving>>, TimelineError> {
    policy.check()?;
    let engine = Engine {
        observer,
        eligible: policy.eligible(catalogue),
        min_elevation_deg: policy.min_elevation_deg(),
        search,
    };
    // The seed is looked up in the whole catalogue: it serves its period by assumption, whether
    // or not the policy would have chosen it.
    let seed = seed.map(|norad_id| Seed {
        norad_id,
        satellite: catalogue.get(norad_id),
    });
    Ok(match policy {
        ServingPolicy::Starlink(config) => engine.starlink(config, from, seconds, seed),
        ServingPolicy::Delay(config) => engine.delay(config, from, seconds, seed),
    })
}

/// Indices `i` of `timeline` at which a handover happens: entry `i` is served by a satellite and
/// the last served entry before it (looking back past any `None` gap) by another one.
///
/// A gap (`None`, no satellite qualifies) is an outage, not a handover: losing the link counts
/// nothing, and regaining it counts one handover only if a different satellite comes back. The
/// first served entry of the slice counts nothing (what served before the slice is unknown). For a
/// timeline starting at `t`, index `i` is a handover at `t + i s`, i.e. in the forecast step
/// `(t + (i-1) s, t + i s]`.
pub fn handovers(timeline: &[Option<Serving>]) -> Vec<usize> {
    let mut last: Option<u64> = None;
    let mut at = Vec::new();
    for (i, entry) in timeline.iter().enumerate() {
        if let Some(serving) = entry {
            if last.is_some_and(|id| id != serving.norad_id) {
                at.push(i);
            }
            last = Some(serving.norad_id);
        }
    }
    at
}

/// The satellites of `satellites` that may be at or above `mask_deg` in `observer`'s sky at some
/// instant of `[start, end]`: each is propagated once, at the middle, and kept if its distance
/// from the observer, minus the distance its Earth-fixed speed can cover in half the window, is
/// within the slant range of the mask. Conservative: it never drops a satellite that reaches
/// the mask. Shared by the serving engine and the hybrid predictor's track matching.
pub(crate) fn reachable<'a>(
    satellites: &[&'a Satellite],
    observer: &Observer,
    mask_deg: f64,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Vec<&'a Satellite> {
    let half_s = (end - start).as_seconds_f64().max(0.0) / 2.0;
    let middle = start + ChronoDuration::milliseconds((half_s * 1000.0).round() as i64);
    let theta = gmst_rad(middle);
    let observer_ecef = observer.ecef_km();
    let observer_radius = norm(observer_ecef);
    // The ellipsoid normal differs from the geocentric radius by up to 0.19 degrees; half a
    // degree of slack keeps the spherical bound conservative.
    let mask = (mask_deg - 0.5).max(0.0);
    satellites
        .iter()
        .copied()
        .filter(|satellite| {
            let Ok(state) = satellite.propagate(middle) else {
                // No position to bound: keep it, the per-instant look skips it where it fails.
                return true;
            };
            let p = teme_to_ecef(state.position, theta);
            let r = norm(p);
            let speed = norm(state.velocity);
            let radial_speed = dot(state.position, state.velocity).abs() / r.max(1.0);
            let r_max = r + radial_speed * half_s + 10.0;
            let ground_speed = 1.05 * speed + EARTH_ROTATION_RAD_PER_S * r_max;
            let reach =
                max_slant_range_km(observer_radius, r_max, mask) + ground_speed * half_s + 10.0;
            let d = [
                p[0] - observer_ecef[0],
                p[1] - observer_ecef[1],
                p[2] - observer_ecef[2],
            ];
            norm(d) <= reach
        })
        .collect()
}

struct Engine<'a> {
    observer: &'a Observer,
    eligible: Vec<&'a Satellite>,
    min_elevation_deg: f64,
    search: Search,
}

/// The satellite a seeded timeline starts from ([`serving_timeline_seeded`]).
#[derive(Clone, Copy)]
struct Seed<'a> {
    norad_id: u64,
    /// `None` when the catalogue has no such satellite.
    satellite: Option<&'a Satellite>,
}

impl<'a> Engine<'a> {
    /// The satellites that may be above the mask at some instant of `[start, end]`.
    fn candidates(&self, start: DateTime<Utc>, end: DateTime<Utc>) -> Vec<&'a Satellite> {
        if self.search == Search::Exhaustive {
            return self.eligible.clone();
        }
        reachable(
            &self.eligible,
            self.observer,
            self.min_elevation_deg,
            start,
            end,
        )
    }

    /// Sky positions of `satellites` at `at` (`None` where SGP4 fails).
    fn look_all(&self, satellites: &[&Satellite], at: DateTime<Utc>) -> Vec<Option<SkyPosition>> {
        let theta = gmst_rad(at);
        satellites
            .iter()
            .map(|s| {
                s.propagate(at)
                    .ok()
                    .map(|p| self.observer.look_ecef(teme_to_ecef(p.position, theta)))
            })
            .collect()
    }

    /// The Starlink slot policy ([`StarlinkConfig`]) at `from`, `from + 1 s`, ... Without a seed
    /// the chain starts at the memory anchor at or before `from`; with one it starts at the slot
    /// containing `from` (and so does the timeline), which the seed serves.
    fn starlink(
        &self,
        config: &StarlinkConfig,
        from: DateTime<Utc>,
        seconds: u32,
        seed: Option<Seed<'a>>,
    ) -> Vec<Option<Serving>> {
        let slot = ChronoDuration::seconds(SLOT_LENGTH_S);
        let half_slot = ChronoDuration::milliseconds(SLOT_LENGTH_S * 500);
        let from = if seed.is_some() {
            slot_start(from)
        } else {
            from
        };
        let end = from + ChronoDuration::seconds(i64::from(seconds));
        let mut timeline = Vec::with_capacity(seconds as usize);
        let pole = self.observer.poleward_azimuth_deg();
        let gso = if config.gso_exclusion_deg > 0.0 {
            gso_arc_enu(self.observer)
        } else {
            Vec::new()
        };
        let max_cos_gso = config.gso_exclusion_deg.to_radians().cos();
        let memory = i64::from(config.memory_slots.max(1));
        let (mut chunk_start, mut previous) = match seed {
            // Start at the anchor slot at or before the window, so that the chain of keep
            // decisions is the same whichever window asks (see `StarlinkConfig::memory_slots`).
            None => {
                let first = slot_start(from);
                let index = slot_index(first);
                (first - slot * (index.rem_euclid(memory) as i32), None)
            }
            // The seed serves its slot and is the previous choice of the next one.
            Some(seed) => {
                self.push_slot(&mut timeline, seed.satellite, from, from, end);
                (from + slot, Some(seed.norad_id))
            }
        };
        while chunk_start < end {
            let left_ms = (end - chunk_start).num_milliseconds();
            let slots_left = left_ms.div_euclid(SLOT_LENGTH_S * 1000)
                + i64::from(left_ms % (SLOT_LENGTH_S * 1000) != 0);
            let slots = slots_left.clamp(1, PREFILTER_WINDOW_S / SLOT_LENGTH_S);
            let chunk_end = chunk_start + slot * slots as i32;
            let candidates = self.candidates(chunk_start, chunk_end);
            let mut at_start = self.look_all(&candidates, chunk_start);
            for k in 0..slots {
                let s = chunk_start + slot * k as i32;
                if slot_index(s).rem_euclid(memory) == 0 {
                    previous = None;
                }
                let at_middle = self.look_all(&candidates, s + half_slot);
                let at_end = self.look_all(&candidates, s + slot);
                let mut best: Option<(f64, u64, usize)> = None;
                let mut previous_score: Option<(f64, usize)> = None;
                for (i, satellite) in candidates.iter().enumerate() {
                    let (Some(a), Some(m), Some(b)) = (at_start[i], at_middle[i], at_end[i]) else {
                        continue;
                    };
                    let lowest = a.elevation_deg.min(m.elevation_deg).min(b.elevation_deg);
                    if lowest < config.min_elevation_deg {
                        continue;
                    }
                    if !gso.is_empty() {
                        let u = enu_unit(&m);
                        let closest = gso
                            .iter()
                            .map(|g| g[0] * u[0] + g[1] * u[1] + g[2] * u[2])
                            .fold(f64::NEG_INFINITY, f64::max);
                        if closest > max_cos_gso {
                            continue;
                        }
                    }
                    let score = -(m.elevation_deg - config.target_elevation_deg).abs()
                        + config.poleward_weight_deg * (m.azimuth_deg - pole).to_radians().cos();
                    let id = satellite.norad_id();
                    if previous == Some(id) {
                        previous_score = Some((score, i));
                    }
                    let better = match best {
                        None => true,
                        Some((best_score, best_id, _)) => {
                            score > best_score || (score == best_score && id < best_id)
                        }
                    };
                    if better {
                        best = Some((score, id, i));
                    }
                }
                let chosen_index = match (previous_score, best) {
                    (Some((kept, i)), Some((top, _, _)))
                        if kept + config.keep_margin_deg >= top =>
                    {
                        Some(i)
                    }
                    (_, best) => best.map(|(_, _, i)| i),
                };
                let chosen = chosen_index.map(|i| candidates[i]);
                previous = chosen.map(Satellite::norad_id);
                self.push_slot(&mut timeline, chosen, from, s, end);
                at_start = at_end;
            }
            chunk_start = chunk_end;
        }
        timeline.truncate(seconds as usize);
        timeline
    }

    /// Appends the entries `from + n s` that fall in the slot starting at `s` and before `end`,
    /// served by `chosen`.
    fn push_slot(
        &self,
        timeline: &mut Vec<Option<Serving>>,
        chosen: Option<&Satellite>,
        from: DateTime<Utc>,
        s: DateTime<Utc>,
        end: DateTime<Utc>,
    ) {
        let slot_end = (s + ChronoDuration::seconds(SLOT_LENGTH_S)).min(end);
        let mut t = if s <= from {
            from
        } else {
            let offset_ms = (s - from).num_milliseconds();
            from + ChronoDuration::seconds((offset_ms + 999) / 1000)
        };
        while t < slot_end {
            timeline.push(self.serving(chosen, t));
            t += ChronoDuration::seconds(1);
        }
    }

    /// `satellite` serving at `at`, with its position there (`None` where it has none).
    fn serving(&self, satellite: Option<&Satellite>, at: DateTime<Utc>) -> Option<Serving> {
        let satellite = satellite?;
        let position = satellite.sky_position(self.observer, at).ok()?;
        Some(Serving {
            norad_id: satellite.norad_id(),
            position,
        })
    }

    /// The delay policy ([`DelayConfig`]) at `from`, `from + 1 s`, ... Without a seed the chain
    /// starts at the last memory restart (with hysteresis, else at `from`); with one it starts
    /// at the whole second containing `from` (and so does the timeline), which the seed serves.
    fn delay(
        &self,
        config: &DelayConfig,
        from: DateTime<Utc>,
        seconds: u32,
        seed: Option<Seed<'a>>,
    ) -> Vec<Option<Serving>> {
        if let Some(seed) = seed {
            if seconds == 0 {
                return Vec::new();
            }
            let from = from
                .duration_trunc(ChronoDuration::seconds(1))
                .unwrap_or(from);
            let mut timeline = Vec::with_capacity(seconds as usize);
            timeline.push(self.serving(seed.satellite, from));
            timeline.extend(self.delay_from(
                config,
                from + ChronoDuration::seconds(1),
                seconds - 1,
                Some(seed.norad_id),
            ));
            return timeline;
        }
        // With hysteresis, start at the last memory restart and drop the warm-up.
        let warmup = if config.margin_ms > 0.0 && config.memory_s > 0 {
            from.timestamp().rem_euclid(i64::from(config.memory_s)) as u32
        } else {
            0
        };
        let start = from - ChronoDuration::seconds(i64::from(warmup));
        let mut timeline = self.delay_from(config, start, seconds + warmup, None);
        timeline.drain(..warmup as usize);
        timeline
    }

    /// The delay policy's chain from `from`, with `current` serving just before it.
    fn delay_from(
        &self,
        config: &DelayConfig,
        from: DateTime<Utc>,
        seconds: u32,
        mut current: Option<u64>,
    ) -> Vec<Option<Serving>> {
        let mut timeline = Vec::with_capacity(seconds as usize);
        let mut done: u32 = 0;
        while done < seconds {
            let chunk = (seconds - done).min(PREFILTER_WINDOW_S as u32);
            let chunk_start = from + ChronoDuration::seconds(i64::from(done));
            let chunk_end = chunk_start + ChronoDuration::seconds(i64::from(chunk) - 1);
            let candidates = self.candidates(chunk_start, chunk_end);
            for k in 0..chunk {
                let t = chunk_start + ChronoDuration::seconds(i64::from(k));
                if config.memory_s > 0 && t.timestamp().rem_euclid(i64::from(config.memory_s)) == 0
                {
                    current = None;
                }
                let looks = self.look_all(&candidates, t);
                let visible =
                    |i: usize| looks[i].filter(|p| p.elevation_deg >= config.min_elevation_deg);
                let mut best: Option<(f64, usize)> = None;
                let mut current_delay: Option<(f64, usize)> = None;
                for (i, satellite) in candidates.iter().enumerate() {
                    let Some(p) = visible(i) else { continue };
                    let d = propagation_delay_ms(p.range_km);
                    if current == Some(satellite.norad_id()) {
                        current_delay = Some((d, i));
                    }
                    let better = match best {
                        None => true,
                        Some((best_d, best_i)) => {
                            d < best_d
                                || (d == best_d
                                    && satellite.norad_id() < candidates[best_i].norad_id())
                        }
                    };
                    if better {
                        best = Some((d, i));
                    }
                }
                let serving = match (current_delay, best) {
                    (Some((cd, ci)), Some((bd, bi))) => {
                        if bd + config.margin_ms < cd {
                            bi
                        } else {
                            ci
                        }
                    }
                    (None, Some((_, bi))) => bi,
                    (_, None) => {
                        current = None;
                        timeline.push(None);
                        continue;
                    }
                };
                let satellite = candidates[serving];
                current = Some(satellite.norad_id());
                timeline.push(looks[serving].map(|position| Serving {
                    norad_id: satellite.norad_id(),
                    position,
                }));
            }
            done += chunk;
        }
        timeline
    }
}

/// Index of the slot starting at `slot_start` since the Unix epoch (slot 0 starts at
/// 1970-01-01 00:00:12 UTC).
fn slot_index(slot_start: DateTime<Utc>) -> i64 {
    (slot_start.timestamp() - i64::from(crate::sky::SLOT_BOUNDARY_SECONDS[0]))
        .div_euclid(SLOT_LENGTH_S)
}

/// Geostationary radius, km (42,164 km from the Earth's centre).
const GSO_RADIUS_KM: f64 = 42_164.0;

/// Unit vectors (east, north, up) from the observer to the points of the geostationary arc above
/// its horizon, every 0.25 degree of longitude.
fn gso_arc_enu(observer: &Observer) -> Vec<[f64; 3]> {
    (0..1440)
        .filter_map(|k| {
            let lon = (f64::from(k) * 0.25).to_radians();
            let point = [GSO_RADIUS_KM * lon.cos(), GSO_RADIUS_KM * lon.sin(), 0.0];
            let look = observer.look_ecef(point);
            (look.elevation_deg >= 0.0).then(|| enu_unit(&look))
        })
        .collect()
}

/// The (east, north, up) unit vector of a sky position.
fn enu_unit(p: &SkyPosition) -> [f64; 3] {
    let (se, ce) = p.elevation_deg.to_radians().sin_cos();
    let (sa, ca) = p.azimuth_deg.to_radians().sin_cos();
    [ce * sa, ce * ca, se]
}

fn norm(v: [f64; 3]) -> f64 {
    dot(v, v).sqrt()
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serving(id: u64) -> Option<Serving> {
        Some(Serving {
            norad_id: id,
            position: SkyPosition {
                azimuth_deg: 0.0,
                elevation_deg: 50.0,
                range_km: 700.0,
            },
        })
    }

    #[test]
    fn a_handover_is_a_change_of_satellite_between_seconds() {
        let t = [serving(1), serving(1), serving(2), serving(2), serving(3)];
        assert_eq!(handovers(&t), vec![2, 4]);
    }

    #[test]
    fn a_gap_counts_one_handover_only_if_another_satellite_comes_back() {
        let same = [serving(1), None, None, serving(1)];
        assert_eq!(handovers(&same), Vec::<usize>::new());
        let other = [serving(1), None, serving(2)];
        assert_eq!(handovers(&other), vec![2]);
        let leading_gap = [None, serving(7), serving(8)];
        assert_eq!(handovers(&leading_gap), vec![2]);
        assert!(handovers(&[]).is_empty());
    }

    #[test]
    fn out_of_range_policies_are_refused() {
        let catalogue = Catalogue::default();
        let observer = Observer::new(0.0, 0.0, 0.0).unwrap();
        let from = chrono::DateTime::<Utc>::UNIX_EPOCH;
        for policy in [
            ServingPolicy::Starlink(StarlinkConfig {
                min_elevation_deg: 95.0,
                ..StarlinkConfig::default()
            }),
            ServingPolicy::Starlink(StarlinkConfig {
                target_elevation_deg: f64::NAN,
                ..StarlinkConfig::default()
            }),
            ServingPolicy::Delay(DelayConfig {
                margin_ms: -1.0,
                ..DelayConfig::default()
            }),
        ] {
            assert!(matches!(
                serving_timeline(&catalogue, &observer, &policy, from, 10),
                Err(TimelineError::Policy(_))
            ));
        }
    }

    /// One 528-satellite shell: continuous coverage at mid-latitudes, with choices to make.
    fn shell() -> Catalogue {
        let shells = [super::super::walker::Shell::delta(
            "T", 550.0, 53.0, 24, 22, 1,
        )];
        let epoch = super::super::walker::shipped_epoch();
        let text = super::super::walker::generate(&shells, epoch).unwrap();
        Catalogue::parse(&text, "shell").unwrap()
    }

    fn ids(timeline: &[Option<Serving>]) -> Vec<Option<u64>> {
        timeline.iter().map(|s| s.map(|s| s.norad_id)).collect()
    }

    #[test]
    fn seeded_with_the_anchored_choice_the_timeline_is_the_anchored_one_from_there() {
        use chrono::TimeZone;
        let catalogue = shell();
        let observer = Observer::new(50.67, 4.61, 0.0).unwrap();
        // A slot boundary; the 420 s cross the keep rule's memory restart at 12:10:12 and the
        // delay policy's at 12:10:00.
        let from = Utc.with_ymd_and_hms(2025, 5, 12, 12, 5, 12).unwrap();
        let cases = [
            // Seeds at every slot (the restart's own and the one before it included), given 7 s
            // into the slot: the timeline starts at the slot's start.
            (
                ServingPolicy::default(),
                (0..420).step_by(15).collect(),
                7_000,
            ),
            // Seeds at seconds (the one before the restart, the restart's own), 400 ms in.
            (
                ServingPolicy::Delay(DelayConfig {
                    margin_ms: 0.3,
                    ..DelayConfig::default()
                }),
                vec![0, 37, 287, 288],
                400,
            ),
        ];
        for (policy, offsets, into_ms) in cases {
            let anchored = serving_timeline(&catalogue, &observer, &policy, from, 420).unwrap();
            let anchored = ids(&anchored);
            for (n, offset) in offsets.into_iter().enumerate() {
                let at =
                    from + ChronoDuration::seconds(offset) + ChronoDuration::milliseconds(into_ms);
                let seed = anchored[offset as usize].expect("the shell serves");
                let seconds = 420 - offset as u32;
                let seeded =
                    serving_timeline_seeded(&catalogue, &observer, &policy, at, seed, seconds)
                        .unwrap();
                assert_eq!(
                    ids(&seeded),
                    anchored[offset as usize..],
                    "{policy:?} seeded at {at}"
                );
                if n % 8 != 0 {
                    continue;
                }
                let exhaustive = serving_timeline_seeded_with(
                    &catalogue,
                    &observer,
                    &policy,
                    at,
                    seed,
                    seconds,
                    Search::Exhaustive,
                )
                .unwrap();
                assert_eq!(exhaustive, seeded, "{policy:?} seeded at {at}");
            }
            // Another seed serves its own period, and one the catalogue lacks serves nothing.
            let period = match policy {
                ServingPolicy::Starlink(_) => SLOT_LENGTH_S as usize,
                ServingPolicy::Delay(_) => 1,
            };
            let other = catalogue
                .iter()
                .map(Satellite::norad_id)
                .find(|&id| Some(id) != anchored[0])
                .unwrap();
            let seeded =
                serving_timeline_seeded(&catalogue, &observer, &policy, from, other, 60).unwrap();
            assert_eq!(ids(&seeded)[..period], vec![Some(other); period]);
            let seeded =
                serving_timeline_seeded(&catalogue, &observer, &policy, from, 1, 60).unwrap();
            assert_eq!(seeded.len(), 60);
            assert!(seeded[..period].iter().all(Option::is_none));
        }
    }

    #[test]
    fn a_seeded_timeline_refuses_what_the_anchored_one_refuses() {
        let policy = ServingPolicy::Delay(DelayConfig {
            margin_ms: -1.0,
            ..DelayConfig::default()
        });
        let observer = Observer::new(0.0, 0.0, 0.0).unwrap();
        let from = chrono::DateTime::<Utc>::UNIX_EPOCH;
        assert!(matches!(
            serving_timeline_seeded(&Catalogue::default(), &observer, &policy, from, 1, 10),
            Err(TimelineError::Policy(_))
        ));
    }

    #[test]
    fn the_slot_index_counts_from_the_first_boundary_of_the_epoch() {
        let first = DateTime::<Utc>::from_timestamp(12, 0).unwrap();
        let slot = ChronoDuration::seconds(SLOT_LENGTH_S);
        assert_eq!(slot_index(first), 0);
        assert_eq!(slot_index(first + slot), 1);
        assert_eq!(slot_index(first - slot), -1);
    }

    #[test]
    fn an_empty_catalogue_serves_nothing_for_every_second() {
        let catalogue = Catalogue::default();
        let observer = Observer::new(0.0, 0.0, 0.0).unwrap();
        let from = chrono::DateTime::<Utc>::UNIX_EPOCH;
        for policy in [
            ServingPolicy::default(),
            ServingPolicy::Delay(DelayConfig::default()),
        ] {
            let t = serving_timeline(&catalogue, &observer, &policy, from, 37).unwrap();
            assert_eq!(t.len(), 37);
            assert!(t.iter().all(Option::is_none));
        }
    }
}

//! A serving-satellite truth whose switches are drawn at a site-specific rate: what real
//! per-second logs look like (docs/architecture.md, "The calibrated predictor").
//!
//! Real logs show every handover on a slot boundary, a share of switching boundaries that is a
//! property of the site, and a keep-or-switch choice that geometry barely predicts. The fitted
//! Starlink policy ([`crate::orbit::StarlinkConfig`]) decides keep or switch by a deterministic
//! score, so a predictor that knows the policy knows every switch. This truth keeps the policy's
//! choice of *which* satellite, but draws *whether* the slot switches: at each boundary the
//! serving satellite changes with probability `rate` (seeded), and is kept otherwise, as long
//! as it stays above the minimum elevation for the whole slot (a satellite that sets forces a
//! switch, as it does for a real dish, so the realised share is a little above `rate`: by the
//! share of kept boundaries whose satellite sets). A switch goes to the policy's (memoryless)
//! choice for the slot; when that is the current satellite itself, to the best-scoring other
//! candidate by the policy's score (its geostationary-arc exclusion left out).

use super::orbital_truth::OrbitalTruth;
use super::sim::SkyTruth;
use crate::orbit::{Catalogue, Observer, ServingPolicy, StarlinkConfig, TimelineError};
use crate::rng::SplitMix64;
use crate::sky::{SLOT_LENGTH_S, Serving, slot_start};
use chrono::{DateTime, Duration as ChronoDuration, DurationRound, Utc};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

/// Slots between restarts of the keep chain: 40 slots (10 minutes), the fitted policy's memory
/// ([`StarlinkConfig::memory_slots`]), so a slot's satellite depends only on the slots since
/// the last restart and every window of the truth agrees with every other.
const RESTART_SLOTS: i64 = 40;

/// Restart blocks kept in memory; a truth is read forward in time.
const MAX_CACHED_BLOCKS: usize = 8;

/// Multiplier that spreads slot indices over the seed space before the generator mixes them
/// (the odd constant of Vigna's `splitmix64.c` stream-splitting example).
const SLOT_MIX: u64 = 0xD6E8_FEB8_6659_FD93;

/// Why a drawn truth could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DrawnTruthError {
    /// A rate outside [0, 1].
    #[error("switch rate {0} is outside [0, 1]")]
    Rate(f64),
    /// The Starlink policy's parameters are out of range.
    #[error(transparent)]
    Policy(#[from] TimelineError),
}

/// The serving satellite with switches drawn at `rate` per slot boundary (see the module
/// documentation). `Send + Sync`, shareable behind an [`Arc`] like [`OrbitalTruth`].
pub struct DrawnTruth {
    choice: OrbitalTruth,
    config: StarlinkConfig,
    min_elevation_deg: f64,
    rate: f64,
    seed: u64,
    cache: Mutex<BlockCache>,
}

/// The satellites of each cached restart block by block index, and the blocks oldest first.
type BlockCache = (HashMap<i64, Arc<[Option<u64>]>>, VecDeque<i64>);

impl std::fmt::Debug for DrawnTruth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DrawnTruth")
            .field("choice", &self.choice)
            .field("rate", &self.rate)
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

impl DrawnTruth {
    /// The truth of `catalogue` seen by `observer`: the Starlink policy `config` chooses a
    /// satellite per slot without its keep rule (memoryless), and a switch happens at each
    /// boundary with probability `rate`, drawn from `seed`.
    pub fn new(
        catalogue: Arc<Catalogue>,
        observer: Observer,
        config: StarlinkConfig,
        rate: f64,
        seed: u64,
    ) -> Result<Self, DrawnTruthError> {
        if !(rate.is_finite() && (0.0..=1.0).contains(&rate)) {
            return Err(DrawnTruthError::Rate(rate));
        }
        let memoryless = StarlinkConfig {
            memory_slots: 1,
            ..config
        };
        Ok(Self {
            choice: OrbitalTruth::new(catalogue, observer, ServingPolicy::Starlink(memoryless))?,
            config,
            min_elevation_deg: config.min_elevation_deg,
            rate,
            seed,
            cache: Mutex::default(),
        })
    }

    /// The switch rate the draws use.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The catalogue.
    pub fn catalogue(&self) -> &Arc<Catalogue> {
        self.choice.catalogue()
    }

    /// The NORAD number of the satellite serving at `at`.
    pub fn serving_id(&self, at: DateTime<Utc>) -> Option<u64> {
        let slot = slot_index(at);
        let block = slot.div_euclid(RESTART_SLOTS);
        let ids = self.block(block);
        ids.get(slot.rem_euclid(RESTART_SLOTS) as usize)
            .copied()
            .flatten()
    }

    /// The true handover instants in `(from, to]`: whole seconds at which a satellite serves and
    /// the last one that served before it (looking back past gaps, up to one slot before `from`)
    /// is another, the rule of [`OrbitalTruth::handovers`].
    pub fn handovers(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<DateTime<Utc>> {
        let second = ChronoDuration::seconds(1);
        let mut t =
            from.duration_trunc(second).unwrap_or(from) - ChronoDuration::seconds(SLOT_LENGTH_S);
        let mut last: Option<u64> = None;
        let mut out = Vec::new();
        while t <= to {
            if let Some(id) = self.serving_id(t) {
                if last.is_some_and(|l| l != id) && t > from {
                    out.push(t);
                }
                last = Some(id);
            }
            t += second;
        }
        out
    }

    fn block(&self, block: i64) -> Arc<[Option<u64>]> {
        let lock = || self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(ids) = lock().0.get(&block) {
            return ids.clone();
        }
        let computed = self.compute(block);
        let mut cache = lock();
        cache.0.insert(block, computed.clone());
        cache.1.push_back(block);
        while cache.1.len() > MAX_CACHED_BLOCKS {
            if let Some(old) = cache.1.pop_front() {
                cache.0.remove(&old);
            }
        }
        computed
    }

    /// The satellites of the 40 slots of restart block `block`.
    fn compute(&self, block: i64) -> Arc<[Option<u64>]> {
        let mut ids = Vec::with_capacity(RESTART_SLOTS as usize);
        let mut previous: Option<u64> = None;
        for j in 0..RESTART_SLOTS {
            let slot = block * RESTART_SLOTS + j;
            let Some(start) = slot_instant(slot) else {
                ids.push(None);
                continue;
            };
            let middle = start + ChronoDuration::milliseconds(SLOT_LENGTH_S * 500);
            let best = self.choice.serving_id(middle);
            let switch = SplitMix64::new(self.seed ^ (slot as u64).wrapping_mul(SLOT_MIX)).unit()
                < self.rate;
            let id = match previous {
                Some(kept) if j > 0 && !switch && self.stays_up(kept, start) => Some(kept),
                Some(current) if j > 0 && switch && best == Some(current) => {
                    self.runner_up(current, start).or(best)
                }
                _ => best,
            };
            ids.push(id);
            previous = id;
        }
        ids.into()
    }

    /// The best-scoring candidate for the slot starting at `start` other than `current`, by the
    /// fitted policy's score (see [`StarlinkConfig`]): up for the whole slot, of operational
    /// altitude, with a fresh element set.
    fn runner_up(&self, current: u64, start: DateTime<Utc>) -> Option<u64> {
        let catalogue = self.catalogue();
        let observer = self.choice.observer();
        let newest = catalogue.newest_epoch()?;
        let pole = observer.poleward_azimuth_deg();
        let middle = start + ChronoDuration::milliseconds(SLOT_LENGTH_S * 500);
        let mut best: Option<(f64, u64)> = None;
        for satellite in catalogue.iter() {
            let id = satellite.norad_id();
            let stale = (newest - satellite.epoch()).num_seconds() as f64
                > self.config.max_staleness_days * 86_400.0;
            if id == current || stale || satellite.mean_altitude_km() < self.config.min_altitude_km
            {
                continue;
            }
            let Ok(m) = satellite.sky_position(observer, middle) else {
                continue;
            };
            if m.elevation_deg < self.min_elevation_deg || !self.stays_up(id, start) {
                continue;
            }
            let score = -(m.elevation_deg - self.config.target_elevation_deg).abs()
                + self.config.poleward_weight_deg * (m.azimuth_deg - pole).to_radians().cos();
            if best.is_none_or(|(s, b)| score > s || (score == s && id < b)) {
                best = Some((score, id));
            }
        }
        best.map(|(_, id)| id)
    }

    /// Whether satellite `id` stays at or above the minimum elevation over the slot starting at
    /// `start` (its start, middle and end: a pass has a single maximum).
    fn stays_up(&self, id: u64, start: DateTime<Utc>) -> bool {
        [0, SLOT_LENGTH_S * 500, SLOT_LENGTH_S * 1000 - 1]
            .into_iter()
            .all(|ms| {
                let at = start + ChronoDuration::milliseconds(ms);
                matches!(
                    self.catalogue().sky_position(id, self.choice.observer(), at),
                    Some(Ok(p)) if p.elevation_deg >= self.min_elevation_deg
                )
            })
    }
}

/// The index of the slot containing `t`, counted from the first slot boundary after the Unix
/// epoch (second 12).
fn slot_index(t: DateTime<Utc>) -> i64 {
    (slot_start(t).timestamp() - 12).div_euclid(SLOT_LENGTH_S)
}

fn slot_instant(slot: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp(slot.checked_mul(SLOT_LENGTH_S)?.checked_add(12)?, 0)
}

impl SkyTruth for DrawnTruth {
    fn serving(&self, at: DateTime<Utc>) -> Option<Serving> {
        let norad_id = self.serving_id(at)?;
        let position = self
            .catalogue()
            .sky_position(norad_id, self.choice.observer(), at)?
            .ok()?;
        Some(Serving { norad_id, position })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orbit::walker;
    use crate::sky::is_slot_boundary;

    fn gen1_like() -> Arc<Catalogue> {
        let shells = [walker::Shell::delta("T", 550.0, 53.0, 72, 22, 39)];
        let text = walker::generate(&shells, walker::shipped_epoch()).unwrap();
        Arc::new(Catalogue::parse(&text, "walker").unwrap())
    }

    #[test]
    fn switches_fall_on_boundaries_at_the_drawn_rate_and_repeat_with_the_seed() {
        let observer = Observer::new(50.67, 4.61, 0.0).unwrap();
        let start = walker::shipped_epoch();
        let end = start + ChronoDuration::hours(1);
        let truth = |rate, seed| {
            DrawnTruth::new(gen1_like(), observer, StarlinkConfig::default(), rate, seed).unwrap()
        };
        let a = truth(0.5, 7).handovers(start, end);
        assert!(a.iter().all(|&h| is_slot_boundary(h)));
        assert_eq!(
            a,
            truth(0.5, 7).handovers(start, end),
            "same seed, same truth"
        );
        assert_ne!(a, truth(0.5, 8).handovers(start, end));
        // 240 boundaries in an hour; forced switches (a setting satellite) add a few.
        let share = a.len() as f64 / 240.0;
        assert!((0.42..0.65).contains(&share), "{share}");
        let high = truth(0.9, 7).handovers(start, end).len() as f64 / 240.0;
        assert!(high > share + 0.2, "{high} vs {share}");
    }
}

//! The orbit model as the simulated dish's truth: which satellite serves the dish, and where it
//! is, at any instant, from a TLE catalogue, an observer and a serving policy.
//!
//! The serving satellite comes from [`serving_timeline`] (one entry per whole UTC second), so the
//! simulated dish paints exactly the satellites the orbital predictor and the oracle reason about.
//! The *position* is propagated at the instant asked for, not at the whole second, so the track
//! the simulator paints every 200 ms is continuous (a satellite moves 0.5-1 degree per second,
//! reference B4; holding it for a second would paint steps).
//!
//! A simulated dish running 20-40 times faster than real time asks about five instants per dish
//! second; recomputing the serving timeline for each would cost a catalogue search every time.
//! The timeline is therefore computed in chunks of [`CHUNK_S`] seconds on first use and kept
//! behind a [`Mutex`] (the last [`MAX_CACHED_CHUNKS`] chunks), which makes the truth `Send + Sync`
//! for the tonic server and cheap to ask: a cache look-up and one SGP4 propagation per call.
//! A missing chunk is computed outside the lock, so a request that finds its chunk cached never
//! waits for another request's search; [`OrbitalTruth::prefetch`] computes chunks ahead of use.

use super::sim::SkyTruth;
use crate::orbit::{Catalogue, Observer, ServingPolicy, TimelineError, serving_timeline};
use crate::sky::Serving;
use chrono::{DateTime, Duration as ChronoDuration, DurationRound, Utc};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Length of one cached chunk of the serving timeline, seconds: 10 minutes, which is also the
/// keep rule's default memory (40 slots, [`crate::orbit::StarlinkConfig::memory_slots`]), so a
/// chunk costs one memory period of work. Chunks start at Unix times that are multiples of it.
pub const CHUNK_S: u32 = 600;

/// Number of chunks kept: 8 x 10 minutes. A simulator moves forward in time, so old chunks are
/// evicted first; 80 minutes covers any look-back an evaluation or a detector makes.
pub const MAX_CACHED_CHUNKS: usize = 8;

/// How far [`OrbitalTruth::handovers`] looks back before its window for the last serving
/// satellite, seconds: one slot, so a gap at the window's start does not hide a handover
/// (gaps count as in [`crate::orbit::handovers`]).
const HANDOVER_LOOKBACK_S: i64 = 15;

/// The orbit model's serving satellite as a [`SkyTruth`].
///
/// Cloning is not offered: share it behind an [`Arc`] (the simulator takes
/// `Arc<dyn SkyTruth>`), so the cache is shared too.
pub struct OrbitalTruth {
    catalogue: Arc<Catalogue>,
    observer: Observer,
    policy: ServingPolicy,
    cache: Mutex<ChunkCache>,
}

impl std::fmt::Debug for OrbitalTruth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrbitalTruth")
            .field("catalogue", &self.catalogue.origin())
            .field("satellites", &self.catalogue.len())
            .field("observer", &self.observer)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// The serving satellite's NORAD number per second of each chunk, keyed by chunk index.
#[derive(Default)]
struct ChunkCache {
    chunks: HashMap<i64, Arc<[Option<u64>]>>,
    order: VecDeque<i64>,
}

impl OrbitalTruth {
    /// The truth of `catalogue` seen by `observer` under `policy`. Refuses a policy with
    /// parameters out of range (the same check [`serving_timeline`] makes), so that every later
    /// question has an answer.
    pub fn new(
        catalogue: Arc<Catalogue>,
        observer: Observer,
        policy: ServingPolicy,
    ) -> Result<Self, TimelineError> {
        // Validate the policy on an empty catalogue: no propagation, only the parameter check.
        serving_timeline(
            &Catalogue::default(),
            &observer,
            &policy,
            DateTime::<Utc>::UNIX_EPOCH,
            1,
        )?;
        Ok(Self {
            catalogue,
            observer,
            policy,
            cache: Mutex::new(ChunkCache::default()),
        })
    }

    /// The catalogue the truth propagates.
    pub fn catalogue(&self) -> &Arc<Catalogue> {
        &self.catalogue
    }

    /// The observer (the dish's position).
    pub fn observer(&self) -> &Observer {
        &self.observer
    }

    /// The serving policy.
    pub fn policy(&self) -> &ServingPolicy {
        &self.policy
    }

    /// The NORAD number of the satellite serving at `at`: the timeline entry of the whole second
    /// containing `at` (both policies choose once per second, the Starlink one once per slot).
    pub fn serving_id(&self, at: DateTime<Utc>) -> Option<u64> {
        let index = at.timestamp().rem_euclid(i64::from(CHUNK_S)) as usize;
        self.chunk(chunk_index(at)).get(index).copied().flatten()
    }

    /// The serving satellite's NORAD number at `from`, `from + 1 s`, ..., `seconds` entries
    /// (`None` past the end of chrono's range).
    pub fn timeline(&self, from: DateTime<Utc>, seconds: u32) -> Vec<Option<u64>> {
        (0..i64::from(seconds))
            .map(|k| {
                from.checked_add_signed(ChronoDuration::seconds(k))
                    .and_then(|t| self.serving_id(t))
            })
            .collect()
    }

    /// The true handover instants in `(from, to]`: whole seconds at which a satellite serves and
    /// the last satellite that served before it (looking back past gaps, up to one slot before
    /// `from`) is another one. The same rule as [`crate::orbit::handovers`], so the truth and the
    /// orbital predictor count alike. The work is one look-up per second of the window.
    pub fn handovers(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<DateTime<Utc>> {
        let mut handovers = Vec::new();
        let second = ChronoDuration::seconds(1);
        let Some(mut t) =
            whole_second(from).checked_sub_signed(ChronoDuration::seconds(HANDOVER_LOOKBACK_S))
        else {
            return handovers;
        };
        let mut last: Option<u64> = None;
        while t <= to {
            if let Some(id) = self.serving_id(t) {
                if last.is_some_and(|l| l != id) && t > from {
                    handovers.push(t);
                }
                last = Some(id);
            }
            match t.checked_add_signed(second) {
                Some(next) => t = next,
                None => break,
            }
        }
        handovers
    }

    /// Computes the chunks covering `[from, to]` that are not cached yet, so that later
    /// questions about that time do not wait for a catalogue search (a simulator can call it for
    /// the next chunk ahead of time, from another thread). At most [`MAX_CACHED_CHUNKS`] chunks
    /// from `from` on, all the cache holds; nothing if `to` is before `from`.
    pub fn prefetch(&self, from: DateTime<Utc>, to: DateTime<Utc>) {
        let first = chunk_index(from);
        let last = chunk_index(to).min(first.saturating_add(MAX_CACHED_CHUNKS as i64 - 1));
        for chunk in first..=last {
            self.chunk(chunk);
        }
    }

    /// The chunk with index `chunk`, computed on first use.
    ///
    /// The search runs without the lock held, so requests for cached chunks go on meanwhile.
    /// Two threads missing the same chunk both compute it; the chunk is a pure function of its
    /// index, so they compute the same entries and the first to finish is kept.
    fn chunk(&self, chunk: i64) -> Arc<[Option<u64>]> {
        if let Some(ids) = self.lock().chunks.get(&chunk) {
            return ids.clone();
        }
        let computed = self.compute(chunk);
        let mut cache = self.lock();
        if let Some(ids) = cache.chunks.get(&chunk) {
            return ids.clone();
        }
        cache.chunks.insert(chunk, computed.clone());
        cache.order.push_back(chunk);
        while cache.order.len() > MAX_CACHED_CHUNKS {
            if let Some(old) = cache.order.pop_front() {
                cache.chunks.remove(&old);
            }
        }
        computed
    }

    /// The serving timeline of chunk `chunk` (empty past the end of chrono's range).
    fn compute(&self, chunk: i64) -> Arc<[Option<u64>]> {
        DateTime::<Utc>::from_timestamp(chunk.saturating_mul(i64::from(CHUNK_S)), 0)
            .and_then(|from| {
                serving_timeline(&self.catalogue, &self.observer, &self.policy, from, CHUNK_S).ok()
            })
            .map(|timeline| timeline.iter().map(|s| s.map(|s| s.norad_id)).collect())
            .unwrap_or_else(|| Arc::from(Vec::new()))
    }

    fn lock(&self) -> MutexGuard<'_, ChunkCache> {
        // A panic elsewhere while the lock was held cannot leave the cache half-updated in a
        // way that gives wrong answers (entries are whole chunks), so a poisoned lock is used.
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Index of the chunk containing the whole second of `t`.
fn chunk_index(t: DateTime<Utc>) -> i64 {
    t.timestamp().div_euclid(i64::from(CHUNK_S))
}

impl SkyTruth for OrbitalTruth {
    fn serving(&self, at: DateTime<Utc>) -> Option<Serving> {
        let norad_id = self.serving_id(at)?;
        let position = self
            .catalogue
            .sky_position(norad_id, &self.observer, at)?
            .ok()?;
        Some(Serving { norad_id, position })
    }
}

/// `t` truncated to the whole second.
fn whole_second(t: DateTime<Utc>) -> DateTime<Utc> {
    t.duration_trunc(ChronoDuration::seconds(1)).unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orbit::{StarlinkConfig, walker};
    use chrono::TimeZone;

    fn tiny() -> Arc<Catalogue> {
        let shells = [walker::Shell::delta("T", 550.0, 53.0, 12, 20, 1)];
        let text = walker::generate(&shells, walker::shipped_epoch()).unwrap();
        Arc::new(Catalogue::parse(&text, "tiny").unwrap())
    }

    fn noon() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 0).unwrap()
    }

    #[test]
    fn the_truth_agrees_with_the_serving_timeline_across_chunk_edges() {
        let observer = Observer::new(10.0, 20.0, 0.0).unwrap();
        let policy = ServingPolicy::default();
        let truth = OrbitalTruth::new(tiny(), observer, policy).unwrap();
        // 11:59:00 to 12:01:00 crosses the chunk edge at 12:00:00 (a multiple of 600 s).
        let from = noon() - ChronoDuration::minutes(1);
        let expected = serving_timeline(truth.catalogue(), &observer, &policy, from, 120).unwrap();
        let ids: Vec<Option<u64>> = expected.iter().map(|s| s.map(|s| s.norad_id)).collect();
        assert_eq!(truth.timeline(from, 120), ids);
        // Within a second the satellite is the same, the position moves.
        let t = ids
            .iter()
            .position(Option::is_some)
            .map(|i| from + ChronoDuration::seconds(i as i64))
            .expect("the tiny shell serves at some point in two minutes");
        let a = truth.serving(t).unwrap();
        let b = truth
            .serving(t + ChronoDuration::milliseconds(600))
            .unwrap();
        assert_eq!(a.norad_id, b.norad_id);
        assert_ne!(a.position, b.position);
    }

    #[test]
    fn an_invalid_policy_is_refused_up_front() {
        let observer = Observer::new(0.0, 0.0, 0.0).unwrap();
        let policy = ServingPolicy::Starlink(StarlinkConfig {
            min_elevation_deg: 95.0,
            ..StarlinkConfig::default()
        });
        assert!(OrbitalTruth::new(tiny(), observer, policy).is_err());
    }

    #[test]
    fn the_cache_keeps_a_bounded_number_of_chunks() {
        let observer = Observer::new(0.0, 0.0, 0.0).unwrap();
        let truth = OrbitalTruth::new(Arc::new(Catalogue::default()), observer, Default::default())
            .unwrap();
        for k in 0..20 {
            assert_eq!(
                truth.serving(noon() + ChronoDuration::minutes(10 * k)),
                None
            );
        }
        let cache = truth.cache.lock().unwrap();
        assert_eq!(cache.chunks.len(), MAX_CACHED_CHUNKS);
        assert_eq!(cache.order.len(), MAX_CACHED_CHUNKS);
    }

    #[test]
    fn the_truth_is_shareable_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<OrbitalTruth>();
    }

    #[test]
    fn two_threads_asking_for_the_same_instant_get_the_same_answer() {
        let observer = Observer::new(10.0, 20.0, 0.0).unwrap();
        let policy = ServingPolicy::default();
        let truth = OrbitalTruth::new(tiny(), observer, policy).unwrap();
        let from = noon() - ChronoDuration::minutes(1);
        let expected = serving_timeline(truth.catalogue(), &observer, &policy, from, 120).unwrap();
        let instants: Vec<DateTime<Utc>> = (0..120)
            .map(|k| from + ChronoDuration::milliseconds(1000 * k + 300))
            .collect();
        // Both threads start on the same uncached chunks at once.
        let barrier = std::sync::Barrier::new(2);
        let ask = || {
            barrier.wait();
            instants
                .iter()
                .map(|&t| truth.serving(t))
                .collect::<Vec<_>>()
        };
        let (a, b) = std::thread::scope(|scope| {
            let a = scope.spawn(ask);
            let b = scope.spawn(ask);
            (a.join().unwrap(), b.join().unwrap())
        });
        assert_eq!(a, b);
        let ids: Vec<Option<u64>> = a.iter().map(|s| s.map(|s| s.norad_id)).collect();
        let expected: Vec<Option<u64>> = expected.iter().map(|s| s.map(|s| s.norad_id)).collect();
        assert_eq!(ids, expected);
        assert!(ids.iter().any(Option::is_some));
        // Each chunk is cached once, whichever thread computed it.
        let cache = truth.cache.lock().unwrap();
        assert_eq!(cache.chunks.len(), 2);
        assert_eq!(cache.order.len(), 2);
    }

    #[test]
    fn prefetching_fills_the_cache_with_the_same_entries() {
        let observer = Observer::new(10.0, 20.0, 0.0).unwrap();
        let policy = ServingPolicy::default();
        let prefetched = OrbitalTruth::new(tiny(), observer, policy).unwrap();
        let lazy = OrbitalTruth::new(tiny(), observer, policy).unwrap();
        // 11:59:00 to 12:10:00: the chunks starting at 11:50, 12:00 and 12:10.
        let from = noon() - ChronoDuration::minutes(1);
        let to = noon() + ChronoDuration::minutes(10);
        prefetched.prefetch(from, to);
        assert_eq!(prefetched.cache.lock().unwrap().chunks.len(), 3);
        assert_eq!(prefetched.timeline(from, 660), lazy.timeline(from, 660));
        assert_eq!(prefetched.cache.lock().unwrap().chunks.len(), 3);
        // A backwards range prefetches nothing; a long one no more than the cache holds.
        let empty = OrbitalTruth::new(Arc::new(Catalogue::default()), observer, policy).unwrap();
        empty.prefetch(to, from);
        assert!(empty.cache.lock().unwrap().chunks.is_empty());
        empty.prefetch(from, from + ChronoDuration::days(1));
        let cache = empty.cache.lock().unwrap();
        assert_eq!(cache.chunks.len(), MAX_CACHED_CHUNKS);
        assert!(cache.chunks.contains_key(&chunk_index(from)));
    }
}

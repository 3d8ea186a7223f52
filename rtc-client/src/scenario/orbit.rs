//! Orbit-driven paths: a constellation propagated with SGP4, a serving satellite at each ground
//! endpoint, and the propagation delay of the path between them over inter-satellite links.
//!
//! This is what the paper's emulation did with StarryNet (paper-dynamic-pacing, section III-B):
//! sparse constellations of 80-100 satellites from TLEs with perturbed altitude and phasing,
//! user terminals at major cities, a delay-based handover policy ("initiating a handover once a
//! lower candidate delay is detected"), and delays from the geometry. Here:
//!
//! - the constellation is a Walker shell generated per call (`handover_predictor::orbit::walker`)
//!   with a seeded altitude offset and phasing factor, or a TLE file;
//! - each endpoint's serving satellite comes from `handover_predictor::orbit::serving_timeline`
//!   (policy and elevation mask from the scenario), one entry per second;
//! - the path is terminal -> serving satellite -> inter-satellite links -> the peer's serving
//!   satellite -> peer. The ISL topology is the usual "+grid" of Walker constellations: each
//!   satellite links to its two in-plane neighbours and to the satellite with the same slot in
//!   each adjacent plane; a Walker star (node spread below 360 degrees) has no links across its
//!   seam, where neighbouring planes counter-rotate. The ISL length is the shortest path over
//!   that graph (Dijkstra on straight-line link lengths), recomputed every second;
//! - one-way delay = (up range + ISL path + down range) / c, per second.
//!
//! A second with no satellite at either end is an outage (the delay is held from the last
//! second that had one).

use super::ScenarioError;
use super::cities::{CITIES, City, distance_km};
use super::schema::{OrbitPolicy, OrbitSpec, WalkerShellSpec};
use crate::rng;
use chrono::{DateTime, Duration as ChronoDuration, Utc};
use handover_predictor::orbit::{
    Catalogue, DelayConfig, Observer, SPEED_OF_LIGHT_KM_PER_S, ServingPolicy, StarlinkConfig,
    handovers, serving_timeline, walker,
};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::Path;
use std::sync::Arc;

/// Which end of the path a handover happened at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum End {
    /// The local terminal (the video sender's side).
    Local,
    /// The far peer.
    Peer,
}

/// A change of serving satellite at one end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SatelliteChange {
    /// Seconds after the call start.
    pub at_s: u64,
    /// Which end.
    pub end: End,
    /// Satellite before (NORAD number).
    pub from: u64,
    /// Satellite after.
    pub to: u64,
}

/// A realised orbit path for one call.
#[derive(Debug, Clone, Serialize)]
pub struct OrbitPath {
    /// UTC instant of the call start (the scenario's start plus the seeded offset).
    pub start: DateTime<Utc>,
    /// What the constellation is: a realised Walker shell or a TLE file.
    pub constellation: String,
    /// Number of satellites.
    pub satellites: usize,
    /// The local terminal's city.
    pub local: String,
    /// The far peer's city.
    pub peer: String,
    /// Great-circle distance between the endpoints, km.
    pub separation_km: f64,
    /// Serving satellite at the local end, per second (`None`: no satellite above the mask).
    pub local_serving: Vec<Option<u64>>,
    /// Serving satellite at the peer, per second.
    pub peer_serving: Vec<Option<u64>>,
    /// Changes of serving satellite at either end, in time order (local first on a tie).
    pub changes: Vec<SatelliteChange>,
    /// Propagation one-way delay of the path per second, ms (`None`: an end has no satellite).
    /// Empty when the geometry was not asked for.
    pub one_way_ms: Vec<Option<f64>>,
    /// ISL hops of the path per second.
    pub isl_hops: Vec<Option<u32>>,
    /// What an orbital predictor needs to forecast this path's handovers: the realised
    /// constellation (as TLEs would describe it), both endpoints and the serving policy.
    #[serde(skip)]
    pub predictor: OrbitPredictorInputs,
}

/// The inputs of an orbital handover predictor for one realised orbit path.
#[derive(Debug, Clone)]
pub struct OrbitPredictorInputs {
    /// The constellation the path was computed from.
    pub catalogue: Arc<Catalogue>,
    /// The local terminal.
    pub local: Observer,
    /// The far peer.
    pub peer: Observer,
    /// How each end picks its serving satellite.
    pub policy: ServingPolicy,
    /// How often the topology is recomputed (the scenario's `update_s`): a change of serving
    /// satellite takes effect at the next update after the orbits call for it.
    pub update: std::time::Duration,
}

impl OrbitPath {
    /// Seconds at which either end has no satellite.
    pub fn outage_seconds(&self) -> Vec<u64> {
        (0..self.local_serving.len())
            .filter(|&s| self.local_serving[s].is_none() || self.peer_serving[s].is_none())
            .map(|s| s as u64)
            .collect()
    }
}

/// Computes the path for `seconds` seconds of a call at `start` (before the seeded offset).
///
/// `root` resolves a workspace-relative TLE file, `data` a `data:` one. With `geometry` false the
/// per-second delay is not computed (it propagates every satellite every second).
pub fn realize(
    spec: &OrbitSpec,
    start: DateTime<Utc>,
    seed: u64,
    seconds: u32,
    geometry: bool,
    resolve: &dyn Fn(&str, &str) -> Result<std::path::PathBuf, ScenarioError>,
) -> Result<OrbitPath, ScenarioError> {
    let mut r = rng::stream(seed, "orbit");
    let offset = if spec.start_spread_s > 0 {
        (rng::open01(&mut r) * spec.start_spread_s as f64) as i64
    } else {
        0
    };
    let start = start + ChronoDuration::seconds(offset);

    let (catalogue, description, star) = match &spec.constellation.tle {
        Some(file) => {
            let path = resolve("handovers.constellation.tle", file)?;
            let catalogue = Catalogue::load(&path).map_err(|e| ScenarioError::Data {
                field: "handovers.constellation.tle".into(),
                path: path.clone(),
                message: e.to_string(),
            })?;
            let star = infer_star(&catalogue);
            (catalogue, format!("TLE {}", display_path(&path)), star)
        }
        None => {
            let shells = &spec.constellation.walker;
            let pick = ((rng::open01(&mut r) * shells.len() as f64) as usize).min(shells.len() - 1);
            let shell = realize_shell(
                &shells[pick],
                spec.constellation.altitude_jitter_km,
                spec.constellation.random_phasing,
                &mut r,
            );
            let text = walker::generate(std::slice::from_ref(&shell), walker::shipped_epoch())
                .map_err(|e| ScenarioError::Orbit(e.to_string()))?;
            let catalogue = Catalogue::parse(&text, &shell.name)
                .map_err(|e| ScenarioError::Orbit(e.to_string()))?;
            let description = format!(
                "Walker {} {}: {} planes x {}, {:.1} km, {:.1} deg, phasing {}",
                if shell.raan_spread_deg < 359.0 {
                    "star"
                } else {
                    "delta"
                },
                shell.name,
                shell.planes,
                shell.satellites_per_plane,
                shell.altitude_km,
                shell.inclination_deg,
                shell.phasing
            );
            (catalogue, description, shell.raan_spread_deg < 359.0)
        }
    };
    if catalogue.is_empty() {
        return Err(ScenarioError::Orbit(format!(
            "the constellation {description} has no propagatable satellite"
        )));
    }

    let (local, peer) = endpoints(spec, &mut r)?;
    let observer = |c: &City| {
        Observer::new(c.latitude_deg, c.longitude_deg, 0.0)
            .map_err(|e| ScenarioError::Orbit(format!("{}: {e}", c.name)))
    };
    let (local_obs, peer_obs) = (observer(local)?, observer(peer)?);
    let policy = match spec.policy {
        OrbitPolicy::Delay => ServingPolicy::Delay(DelayConfig {
            min_elevation_deg: spec.min_elevation_deg,
            margin_ms: spec.margin_ms,
            ..DelayConfig::default()
        }),
        OrbitPolicy::Starlink => ServingPolicy::Starlink(StarlinkConfig {
            min_elevation_deg: spec.min_elevation_deg,
            ..StarlinkConfig::default()
        }),
    };
    let timeline = |o: &Observer| {
        serving_timeline(&catalogue, o, &policy, start, seconds)
            .map_err(|e| ScenarioError::Orbit(e.to_string()))
    };
    let update = spec.update_s.max(1) as usize;
    let mut local_timeline = timeline(&local_obs)?;
    let mut peer_timeline = timeline(&peer_obs)?;
    hold_between_updates(&mut local_timeline, update);
    hold_between_updates(&mut peer_timeline, update);

    let mut changes = Vec::new();
    for (end, tl) in [(End::Local, &local_timeline), (End::Peer, &peer_timeline)] {
        for i in handovers(tl) {
            let to = tl[i].map(|s| s.norad_id).unwrap_or_default();
            let from = tl[..i]
                .iter()
                .rev()
                .find_map(|e| e.map(|s| s.norad_id))
                .unwrap_or_default();
            changes.push(SatelliteChange {
                at_s: i as u64,
                end,
                from,
                to,
            });
        }
    }
    changes.sort_by_key(|c| (c.at_s, c.end == End::Peer));

    let (mut one_way_ms, mut isl_hops) = if geometry {
        path_delays(
            &catalogue,
            star,
            start,
            &local_timeline,
            &peer_timeline,
            update,
        )?
    } else {
        (Vec::new(), Vec::new())
    };
    hold_between_updates(&mut one_way_ms, update);
    hold_between_updates(&mut isl_hops, update);

    Ok(OrbitPath {
        start,
        constellation: description,
        satellites: catalogue.len(),
        local: local.name.to_owned(),
        peer: peer.name.to_owned(),
        separation_km: distance_km(local, peer),
        local_serving: local_timeline
            .iter()
            .map(|e| e.map(|s| s.norad_id))
            .collect(),
        peer_serving: peer_timeline
            .iter()
            .map(|e| e.map(|s| s.norad_id))
            .collect(),
        changes,
        one_way_ms,
        isl_hops,
        predictor: OrbitPredictorInputs {
            catalogue: Arc::new(catalogue),
            local: local_obs,
            peer: peer_obs,
            policy,
            update: std::time::Duration::from_secs(update as u64),
        },
    })
}

/// Makes every second between two topology updates repeat the update's value: what an emulator
/// that recomputes its topology every `update` seconds (StarryNet's `update_time`) shows.
fn hold_between_updates<T: Clone>(per_second: &mut [T], update: usize) {
    if update <= 1 {
        return;
    }
    for second in 0..per_second.len() {
        let last_update = second - second % update;
        if last_update != second {
            per_second[second] = per_second[last_update].clone();
        }
    }
}

fn display_path(path: &Path) -> String {
    path.display().to_string()
}

/// The shell for this call: the spec with a seeded altitude offset and phasing factor.
fn realize_shell(
    spec: &WalkerShellSpec,
    altitude_jitter_km: f64,
    random_phasing: bool,
    r: &mut impl rand::Rng,
) -> walker::Shell {
    let altitude_km = if altitude_jitter_km > 0.0 {
        spec.altitude_km + rng::uniform(r, -altitude_jitter_km, altitude_jitter_km)
    } else {
        spec.altitude_km
    };
    let phasing = if random_phasing {
        ((rng::open01(r) * f64::from(spec.planes)) as u32).min(spec.planes - 1)
    } else {
        spec.phasing
    };
    walker::Shell {
        name: spec.name.clone(),
        altitude_km,
        inclination_deg: spec.inclination_deg,
        planes: spec.planes,
        satellites_per_plane: spec.per_plane,
        phasing,
        raan_offset_deg: 0.0,
        raan_spread_deg: spec.raan_spread_deg,
    }
}

/// The two endpoints: fixed by the spec, or sampled (local first, then a peer at least
/// `min_separation_km` away, in a seeded order of the list).
fn endpoints(
    spec: &OrbitSpec,
    r: &mut impl rand::Rng,
) -> Result<(&'static City, &'static City), ScenarioError> {
    let e = &spec.endpoints;
    let named =
        |name: &Option<String>, field: &str| -> Result<Option<&'static City>, ScenarioError> {
            match name {
                None => Ok(None),
                Some(n) => super::cities::find(n)
                    .map(Some)
                    .ok_or_else(|| ScenarioError::Invalid {
                        origin: "scenario".into(),
                        field: format!("handovers.endpoints.{field}"),
                        message: format!("unknown city {n:?}"),
                    }),
            }
        };
    let local = match named(&e.local, "local")? {
        Some(c) => c,
        None => &CITIES[((rng::open01(r) * CITIES.len() as f64) as usize).min(CITIES.len() - 1)],
    };
    let peer = match named(&e.peer, "peer")? {
        Some(c) => c,
        None => {
            // A seeded permutation (Fisher-Yates), first city far enough away.
            let mut order: Vec<usize> = (0..CITIES.len()).collect();
            for i in (1..order.len()).rev() {
                let j = ((rng::open01(r) * (i + 1) as f64) as usize).min(i);
                order.swap(i, j);
            }
            order
                .into_iter()
                .map(|i| &CITIES[i])
                .find(|c| c.name != local.name && distance_km(local, c) >= e.min_separation_km)
                .ok_or_else(|| {
                    ScenarioError::Orbit(format!(
                        "no city is at least {} km from {}",
                        e.min_separation_km, local.name
                    ))
                })?
        }
    };
    Ok((local, peer))
}

/// Whether a TLE catalogue's planes span less than 360 degrees of node (a Walker star): the
/// largest gap between consecutive plane nodes is then well above the typical spacing.
fn infer_star(catalogue: &Catalogue) -> bool {
    let mut nodes: Vec<f64> = catalogue
        .iter()
        .map(|s| s.elements().right_ascension.rem_euclid(360.0))
        .collect();
    nodes.sort_by(f64::total_cmp);
    nodes.dedup_by(|a, b| (*a - *b).abs() < 0.5);
    if nodes.len() < 2 {
        return false;
    }
    let mut gaps: Vec<f64> = nodes.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.push(nodes[0] + 360.0 - nodes[nodes.len() - 1]);
    let max = gaps.iter().copied().fold(0.0, f64::max);
    let typical = 360.0 / nodes.len() as f64;
    max > 1.5 * typical
}

/// Plane and slot of a satellite from a Walker name `NAME-PP-SS`.
fn plane_slot(name: &str) -> Option<(u32, u32)> {
    let mut parts = name.rsplitn(3, '-');
    let slot = parts.next()?.trim().parse().ok()?;
    let plane = parts.next()?.trim().parse().ok()?;
    parts.next()?;
    Some((plane, slot))
}

/// The +grid ISL graph: adjacency lists by catalogue index.
fn isl_graph(catalogue: &Catalogue, star: bool) -> Result<Vec<Vec<usize>>, ScenarioError> {
    let mut at: HashMap<(u32, u32), usize> = HashMap::new();
    let mut planes = 0;
    let mut per_plane = 0;
    for (i, s) in catalogue.iter().enumerate() {
        let (p, k) = s.name().and_then(plane_slot).ok_or_else(|| {
            ScenarioError::Orbit(format!(
                "ISL routing needs Walker satellite names NAME-PP-SS; satellite {} is named {:?}",
                s.norad_id(),
                s.name()
            ))
        })?;
        planes = planes.max(p);
        per_plane = per_plane.max(k);
        at.insert((p, k), i);
    }
    let mut adjacency = vec![Vec::new(); catalogue.len()];
    for (&(p, k), &i) in &at {
        let in_plane = [
            (p, if k == 1 { per_plane } else { k - 1 }),
            (p, if k == per_plane { 1 } else { k + 1 }),
        ];
        let mut cross = Vec::new();
        if p > 1 {
            cross.push((p - 1, k));
        } else if !star {
            cross.push((planes, k));
        }
        if p < planes {
            cross.push((p + 1, k));
        } else if !star {
            cross.push((1, k));
        }
        for key in in_plane.into_iter().chain(cross) {
            if let Some(&j) = at.get(&key)
                && j != i
                && !adjacency[i].contains(&j)
            {
                adjacency[i].push(j);
            }
        }
    }
    for list in &mut adjacency {
        list.sort_unstable();
    }
    Ok(adjacency)
}

type PathDelays = (Vec<Option<f64>>, Vec<Option<u32>>);

/// Propagation delay of the path, per second.
fn path_delays(
    catalogue: &Catalogue,
    star: bool,
    start: DateTime<Utc>,
    local: &[Option<handover_predictor::orbit::Serving>],
    peer: &[Option<handover_predictor::orbit::Serving>],
    update: usize,
) -> Result<PathDelays, ScenarioError> {
    let graph = isl_graph(catalogue, star)?;
    let index: HashMap<u64, usize> = catalogue
        .iter()
        .enumerate()
        .map(|(i, s)| (s.norad_id(), i))
        .collect();
    let mut delays = Vec::with_capacity(local.len());
    let mut hops = Vec::with_capacity(local.len());
    for (second, (l, p)) in local.iter().zip(peer).enumerate() {
        // Seconds between updates repeat the update's path (`hold_between_updates`).
        let (Some(l), Some(p), true) = (l, p, second % update.max(1) == 0) else {
            delays.push(None);
            hops.push(None);
            continue;
        };
        let at = start + ChronoDuration::seconds(second as i64);
        let (Some(&a), Some(&b)) = (index.get(&l.norad_id), index.get(&p.norad_id)) else {
            return Err(ScenarioError::Orbit(format!(
                "serving satellite {} or {} is not in the catalogue",
                l.norad_id, p.norad_id
            )));
        };
        let positions: Vec<Option<[f64; 3]>> = catalogue
            .iter()
            .map(|s| s.teme_position_km(at).ok())
            .collect();
        match shortest(&graph, &positions, a, b) {
            Some((km, n)) => {
                let total = l.position.range_km + km + p.position.range_km;
                delays.push(Some(total / SPEED_OF_LIGHT_KM_PER_S * 1000.0));
                hops.push(Some(n));
            }
            None => {
                delays.push(None);
                hops.push(None);
            }
        }
    }
    Ok((delays, hops))
}

fn distance(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Dijkstra from `a` to `b`: path length (km) and hop count. Distances are non-negative, so
/// their IEEE bit patterns order like the values (a total order without a float wrapper).
fn shortest(
    graph: &[Vec<usize>],
    positions: &[Option<[f64; 3]>],
    a: usize,
    b: usize,
) -> Option<(f64, u32)> {
    if a == b {
        return Some((0.0, 0));
    }
    let n = graph.len();
    let mut best = vec![f64::INFINITY; n];
    let mut hops = vec![0u32; n];
    let mut heap = BinaryHeap::new();
    best[a] = 0.0;
    heap.push(Reverse((0.0f64.to_bits(), a)));
    while let Some(Reverse((bits, u))) = heap.pop() {
        let d = f64::from_bits(bits);
        if d > best[u] {
            continue;
        }
        if u == b {
            return Some((d, hops[u]));
        }
        let Some(pu) = positions[u] else { continue };
        for &v in &graph[u] {
            let Some(pv) = positions[v] else { continue };
            let nd = d + distance(pu, pv);
            if nd < best[v] {
                best[v] = nd;
                hops[v] = hops[u] + 1;
                heap.push(Reverse((nd.to_bits(), v)));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walker_names_give_plane_and_slot() {
        assert_eq!(plane_slot("SPARSE80-03-07"), Some((3, 7)));
        assert_eq!(plane_slot("STARLINK-1234"), None);
    }

    #[test]
    fn a_star_has_no_links_across_its_seam_and_a_delta_does() {
        let shell = |spread: f64| walker::Shell {
            raan_spread_deg: spread,
            ..walker::Shell::delta("T", 780.0, 86.4, 4, 5, 1)
        };
        for (spread, star) in [(180.0, true), (360.0, false)] {
            let text = walker::generate(&[shell(spread)], walker::shipped_epoch()).unwrap();
            let c = Catalogue::parse(&text, "t").unwrap();
            assert_eq!(infer_star(&c), star);
            let g = isl_graph(&c, star).unwrap();
            // Plane 1 slot 1 is index 0; plane 4 slot 1 is index 15.
            assert_eq!(g[0].contains(&15), !star);
            // In-plane neighbours wrap: slot 1 links to slot 5 (index 4) and slot 2 (index 1).
            assert!(g[0].contains(&1) && g[0].contains(&4));
            let degree = g.iter().map(Vec::len).min().unwrap();
            assert_eq!(degree, if star { 3 } else { 4 });
        }
    }

    #[test]
    fn dijkstra_finds_the_shortest_chain() {
        // A chain 0 - 1 - 2 and a detour 0 - 3 - 2.
        let graph = vec![vec![1, 3], vec![0, 2], vec![1, 3], vec![0, 2]];
        let positions = vec![
            Some([0.0, 0.0, 0.0]),
            Some([1.0, 0.0, 0.0]),
            Some([2.0, 0.0, 0.0]),
            Some([1.0, 5.0, 0.0]),
        ];
        assert_eq!(shortest(&graph, &positions, 0, 2), Some((2.0, 2)));
        assert_eq!(shortest(&graph, &positions, 1, 1), Some((0.0, 0)));
    }
}

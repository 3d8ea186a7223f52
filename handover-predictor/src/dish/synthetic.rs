//! A synthetic sky for tests and demos: satellites crossing in straight arcs, one serving the
//! dish at a time, changing only at slot boundaries, and sometimes staying for several slots.
//!
//! It stands in for the orbit model's serving-satellite timeline wherever the point is to test
//! the dish pipeline (simulator -> gRPC -> detector) rather than orbital mechanics. Pure and
//! deterministic: a seed fixes every pass. References are to
//! `../shared/reference/starlink-dish-and-orbits.md`.

use super::map::normalise_deg;
use super::sim::SkyTruth;
use crate::rng::SplitMix64;
use crate::sky::{SLOT_LENGTH_S, Serving, SkyPosition, slot_start};
use chrono::{DateTime, Duration as ChronoDuration, Utc};

/// Altitude of the synthetic shell, km (Starlink's ~550 km shells, reference B4).
pub const SHELL_ALTITUDE_KM: f64 = 550.0;

/// Slowest apparent angular speed of a serving satellite, degrees/s.
pub const MIN_SPEED_DEG_S: f64 = 0.6;

/// Fastest apparent angular speed, degrees/s (about 0.8 degrees/s near zenith at 550 km,
/// reference B4; "15 s ~ 11 degrees of arc", C2).
pub const MAX_SPEED_DEG_S: f64 = 1.0;

/// Largest zenith angle of the middle of a pass, degrees. With at most four slots of tenure at
/// [`MAX_SPEED_DEG_S`] the track stays above 30 degrees of elevation, inside the >= 25 degrees
/// Starlink serves at (reference C1, C3).
pub const MAX_MID_ZENITH_DEG: f64 = 30.0;

/// Least angle between where one satellite's tenure ends and the next one's begins, degrees
/// (about 9 px). Consecutive satellites close together in the sky are not separable from the
/// map alone (B5 says to confirm with TLE matching), so the synthetic sky keeps them apart: it
/// tests the pipeline, not that ambiguity.
pub const MIN_HANDOVER_SEPARATION_DEG: f64 = 12.0;

/// Tenure length in slots and its weight: mostly one slot, sometimes up to four (C5: the
/// serving satellite changed at 59-86 % of boundaries; typical tenure one slot, longest 4-7).
/// The mean tenure is 1.6 slots, i.e. a handover at ~62 % of boundaries.
pub const TENURE_WEIGHTS: [(u32, u32); 4] = [(1, 60), (2, 25), (3, 10), (4, 5)];

/// Mean Earth radius, km.
const EARTH_RADIUS_KM: f64 = 6371.0;

/// First synthetic NORAD id (an unused range, so ids never collide with a real catalogue's
/// Starlink satellites in logs).
const FIRST_NORAD_ID: u64 = 900_000;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Tenure {
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    norad_id: u64,
    /// Position in the sky plane at the middle of the tenure: (east, north) in degrees of zenith
    /// angle (the FRAME_EARTH map's axes).
    mid: (f64, f64),
    /// Velocity in that plane, degrees/s.
    velocity: (f64, f64),
}

impl Tenure {
    fn plane_at(&self, at: DateTime<Utc>) -> (f64, f64) {
        let mid_time = self.from + (self.to - self.from) / 2;
        let dt = (at - mid_time).as_seconds_f64();
        (
            self.mid.0 + self.velocity.0 * dt,
            self.mid.1 + self.velocity.1 * dt,
        )
    }
}

/// A deterministic synthetic sky over `[start, start + duration)`, `start` rounded down to a
/// slot boundary (reference C1). Outside that window no satellite serves.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticSky {
    tenures: Vec<Tenure>,
}

impl SyntheticSky {
    /// The sky for `seed`, starting at the slot containing `start`.
    pub fn new(seed: u64, start: DateTime<Utc>, duration: ChronoDuration) -> Self {
        let mut rng = SplitMix64::new(seed);
        let first = slot_start(start);
        let end = start + duration;
        let slot = ChronoDuration::seconds(SLOT_LENGTH_S);
        let mut tenures: Vec<Tenure> = Vec::new();
        let mut from = first;
        while from < end {
            let slots = pick_tenure(rng.unit());
            let to = from + slot * slots as i32;
            let previous_end = tenures.last().map(|t| t.plane_at(t.to));
            let mut tenure = random_tenure(&mut rng, from, to, 0);
            for _ in 0..1000 {
                let Some(prev) = previous_end else { break };
                let start_point = tenure.plane_at(from);
                let gap = (start_point.0 - prev.0).hypot(start_point.1 - prev.1);
                if gap >= MIN_HANDOVER_SEPARATION_DEG {
                    break;
                }
                tenure = random_tenure(&mut rng, from, to, 0);
            }
            tenure.norad_id = FIRST_NORAD_ID + tenures.len() as u64;
            tenures.push(tenure);
            from = to;
        }
        Self { tenures }
    }

    /// The instants at which the serving satellite changes (tenure boundaries).
    pub fn handovers(&self) -> Vec<DateTime<Utc>> {
        self.tenures.iter().skip(1).map(|t| t.from).collect()
    }

    /// Number of satellites that serve during the window.
    pub fn satellites(&self) -> usize {
        self.tenures.len()
    }
}

impl SkyTruth for SyntheticSky {
    fn serving(&self, at: DateTime<Utc>) -> Option<Serving> {
        let i = self.tenures.partition_point(|t| t.to <= at);
        let tenure = self.tenures.get(i).filter(|t| t.from <= at)?;
        let (east, north) = tenure.plane_at(at);
        let zenith_deg = east.hypot(north);
        let elevation_deg = 90.0 - zenith_deg;
        let azimuth_deg = normalise_deg(east.atan2(north).to_degrees());
        Some(Serving {
            norad_id: tenure.norad_id,
            position: SkyPosition {
                azimuth_deg,
                elevation_deg,
                range_km: slant_range_km(elevation_deg),
            },
        })
    }
}

fn pick_tenure(u: f64) -> u32 {
    let total: u32 = TENURE_WEIGHTS.iter().map(|(_, w)| w).sum();
    let mut x = u * f64::from(total);
    for (slots, weight) in TENURE_WEIGHTS {
        if x < f64::from(weight) {
            return slots;
        }
        x -= f64::from(weight);
    }
    1
}

fn random_tenure(
    rng: &mut SplitMix64,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    norad_id: u64,
) -> Tenure {
    // Uniform over the disc of radius MAX_MID_ZENITH_DEG.
    let r = MAX_MID_ZENITH_DEG * rng.unit().sqrt();
    let a = rng.unit() * std::f64::consts::TAU;
    let heading = rng.unit() * std::f64::consts::TAU;
    let speed = MIN_SPEED_DEG_S + (MAX_SPEED_DEG_S - MIN_SPEED_DEG_S) * rng.unit();
    Tenure {
        from,
        to,
        norad_id,
        mid: (r * a.sin(), r * a.cos()),
        velocity: (speed * heading.sin(), speed * heading.cos()),
    }
}

/// Slant range to a satellite of the synthetic shell seen at `elevation_deg`, km.
pub fn slant_range_km(elevation_deg: f64) -> f64 {
    let e = elevation_deg.to_radians();
    let orbit = EARTH_RADIUS_KM + SHELL_ALTITUDE_KM;
    let along = EARTH_RADIUS_KM * e.sin();
    (orbit * orbit - (EARTH_RADIUS_KM * e.cos()).powi(2)).sqrt() - along
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dish::sim::truth_handovers;
    use crate::sky::is_slot_boundary;
    use chrono::TimeZone;

    fn start() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 5, 12, 10, 0, 20).unwrap()
    }

    #[test]
    fn satellites_change_only_at_slot_boundaries_and_not_at_every_one() {
        let sky = SyntheticSky::new(7, start(), ChronoDuration::minutes(30));
        let handovers = sky.handovers();
        assert!(handovers.iter().all(|&h| is_slot_boundary(h)));
        let boundaries = 30 * 4;
        let share = handovers.len() as f64 / boundaries as f64;
        assert!((0.5..0.8).contains(&share), "{share}");
        let end = start() + ChronoDuration::minutes(30);
        let truth = truth_handovers(&sky, slot_start(start()), end - ChronoDuration::seconds(1));
        assert_eq!(truth, handovers);
    }

    #[test]
    fn serving_satellites_stay_high_and_move_like_leo_satellites() {
        let sky = SyntheticSky::new(3, start(), ChronoDuration::minutes(30));
        let mut t = slot_start(start());
        let mut previous: Option<Serving> = None;
        while t < start() + ChronoDuration::minutes(30) {
            let s = sky.serving(t).unwrap();
            assert!(s.position.elevation_deg >= 25.0, "{s:?}");
            assert!((550.0..1100.0).contains(&s.position.range_km), "{s:?}");
            if let Some(p) = previous.filter(|p| p.norad_id == s.norad_id) {
                let step = crate::dish::SkyDirection::of(&p.position)
                    .separation_deg(crate::dish::SkyDirection::of(&s.position));
                assert!(step <= MAX_SPEED_DEG_S + 1e-6, "{step}");
            }
            previous = Some(s);
            t += ChronoDuration::seconds(1);
        }
        assert_eq!(
            sky.serving(slot_start(start()) - ChronoDuration::seconds(1)),
            None
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_sky() {
        let a = SyntheticSky::new(11, start(), ChronoDuration::minutes(5));
        let b = SyntheticSky::new(11, start(), ChronoDuration::minutes(5));
        let c = SyntheticSky::new(12, start(), ChronoDuration::minutes(5));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn slant_range_is_the_altitude_at_zenith_and_longer_lower_down() {
        assert!((slant_range_km(90.0) - 550.0).abs() < 1e-6);
        assert!(slant_range_km(25.0) > 1000.0);
    }
}

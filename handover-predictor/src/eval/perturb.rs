//! The predictors' catalogue as the truth's with noise: a stand-in for the error of an old TLE.

use crate::orbit::{Catalogue, walker};
use crate::rng::SplitMix64;
use serde::Serialize;
use std::fmt;

/// Noise added to the truth catalogue to make the predictors' catalogue (see the
/// [`eval`](crate::eval) module documentation). Each satellite gets its own draws from a generator
/// seeded by `seed` and its NORAD number, so the perturbed catalogue does not depend on the order
/// of the file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Perturbation {
    /// Standard deviation of the along-track position error, km (applied to the mean anomaly as
    /// `error / semi-major axis`).
    pub along_track_sigma_km: f64,
    /// Standard deviation of the cross-track position error, km (split evenly between the
    /// inclination and the right ascension of the ascending node).
    pub cross_track_sigma_km: f64,
    /// Seed of the draws.
    pub seed: u64,
}

impl Perturbation {
    /// Along-track noise only: the dominant error of a TLE (drag and manoeuvres move a satellite
    /// along its orbit, reference D2).
    pub fn along_track(sigma_km: f64, seed: u64) -> Self {
        Self {
            along_track_sigma_km: sigma_km,
            cross_track_sigma_km: 0.0,
            seed,
        }
    }
}

impl fmt::Display for Perturbation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "perturbed (along-track sigma {} km, cross-track sigma {} km, seed {})",
            self.along_track_sigma_km, self.cross_track_sigma_km, self.seed
        )
    }
}

/// The truth catalogue with `perturbation`'s noise on every satellite's elements (see
/// [`Perturbation`]). Satellites the noise makes unpropagatable are skipped, as in any
/// catalogue.
pub fn perturb(catalogue: &Catalogue, perturbation: &Perturbation) -> Catalogue {
    let elements = catalogue.iter().map(|satellite| {
        let mut e = satellite.elements().clone();
        let mut rng =
            SplitMix64::new(perturbation.seed ^ e.norad_id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let a_km = walker::semi_major_axis_km(e.mean_motion).max(1.0);
        let along = rng.normal() * perturbation.along_track_sigma_km / a_km;
        let cross = perturbation.cross_track_sigma_km / a_km / std::f64::consts::SQRT_2;
        let d_inclination = rng.normal() * cross;
        let sin_i = e.inclination.to_radians().sin().abs().max(0.1);
        let d_node = rng.normal() * cross / sin_i;
        e.mean_anomaly = (e.mean_anomaly + along.to_degrees()).rem_euclid(360.0);
        e.inclination = (e.inclination + d_inclination.to_degrees()).clamp(0.0, 180.0);
        e.right_ascension = (e.right_ascension + d_node.to_degrees()).rem_euclid(360.0);
        e
    });
    Catalogue::from_elements(
        &format!("{} {perturbation}", catalogue.origin()),
        elements.collect::<Vec<_>>(),
    )
}

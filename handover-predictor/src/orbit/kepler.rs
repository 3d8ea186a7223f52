//! The WGS72 constants that SGP4 uses with element sets (Hoots & Roehrich, Spacetrack Report #3,
//! 1980; Vallado et al. 2006, "Revisiting Spacetrack Report #3", AIAA 2006-6753, table of WGS72
//! constants: mu = 398600.8 km^3/s^2, a_e = 6378.135 km), and Kepler's third law between a
//! circular orbit's mean motion and its semi-major axis.
//!
//! The catalogue (a satellite's mean altitude from its mean motion) and the Walker generator (a
//! shell's mean motion from its altitude) both need them, so they live in neither; the generator
//! re-exports them as `orbit::walker::*`, their public path.

/// WGS72 gravitational parameter, km^3/s^2 (Vallado et al. 2006, WGS72 constants used with TLEs;
/// the `sgp4` crate's `WGS72.ke` is the same value in Earth radii^1.5 per minute).
pub const WGS72_MU_KM3_S2: f64 = 398_600.8;

/// WGS72 equatorial radius, km (same source; `sgp4::WGS72.ae`).
pub const WGS72_EQUATORIAL_RADIUS_KM: f64 = 6378.135;

/// Mean motion, rev/day, of a circular orbit `altitude_km` above the WGS72 equatorial radius:
/// Kepler's third law, `n = sqrt(mu / a^3)`, with [`WGS72_MU_KM3_S2`] and `a` =
/// [`WGS72_EQUATORIAL_RADIUS_KM`] + altitude (Vallado et al. 2006, "Revisiting Spacetrack Report
/// #3", AIAA 2006-6753). SGP4 reads this as a Kozai mean motion and applies its J2 correction, so
/// the propagated mean radius sits a few km from `a` (measured in `tests/orbit_walker.rs`).
pub fn mean_motion_rev_per_day(altitude_km: f64) -> f64 {
    let a = WGS72_EQUATORIAL_RADIUS_KM + altitude_km;
    let n_rad_per_s = (WGS72_MU_KM3_S2 / (a * a * a)).sqrt();
    n_rad_per_s * 86_400.0 / std::f64::consts::TAU
}

/// Semi-major axis, km, of an orbit with mean motion `rev_per_day`: the inverse of
/// [`mean_motion_rev_per_day`].
pub fn semi_major_axis_km(rev_per_day: f64) -> f64 {
    let n_rad_per_s = rev_per_day * std::f64::consts::TAU / 86_400.0;
    (WGS72_MU_KM3_S2 / (n_rad_per_s * n_rad_per_s)).cbrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_550_km_orbit_makes_15_05_revolutions_a_day() {
        // a = 6928.135 km; n = sqrt(398600.8 / a^3) = 1.09488e-3 rad/s = 15.0549 rev/day, close to
        // the 15.05-15.06 of real Starlink satellites at 550 km.
        let n = mean_motion_rev_per_day(550.0);
        assert!((n - 15.0549).abs() < 1e-3, "{n}");
        assert!((semi_major_axis_km(n) - 6928.135).abs() < 1e-6);
    }
}

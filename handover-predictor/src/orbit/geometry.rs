//! Observer geometry: TEME -> Earth-fixed -> topocentric azimuth, elevation and range.
//!
//! This is recipe D4 of `../shared/reference/starlink-dish-and-orbits.md`: rotate SGP4's TEME
//! position by Greenwich mean sidereal time into the pseudo-Earth-fixed frame (polar motion
//! ignored), subtract the WGS84 observer, project onto east/north/up. The error budget of D4 step 6
//! (UT1-UTC <= 0.9 s, polar motion) is far below anything a serving-satellite choice can notice.

use crate::sky::SkyPosition;
use chrono::{DateTime, Utc};

/// WGS84 equatorial radius, km (reference D4 step 4).
pub const EARTH_EQUATORIAL_RADIUS_KM: f64 = 6378.137;

/// WGS84 flattening (reference D4 step 4).
pub const EARTH_FLATTENING: f64 = 1.0 / 298.257_223_563;

/// Earth's rotation rate, rad/s (reference D4 step 3).
pub const EARTH_ROTATION_RAD_PER_S: f64 = 7.292_115e-5;

/// Speed of light in vacuum, km/s: turns a slant range into a propagation delay.
pub const SPEED_OF_LIGHT_KM_PER_S: f64 = 299_792.458;

/// Why an observer was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ObserverError {
    /// Latitude outside [-90, 90] degrees or not a number.
    #[error("latitude {0} is outside [-90, 90] degrees")]
    Latitude(f64),
    /// Longitude outside [-180, 360] degrees or not a number.
    #[error("longitude {0} is outside [-180, 360] degrees")]
    Longitude(f64),
    /// Altitude outside [-500 m, 100 km] or not a number: a ground terminal, an aircraft at most.
    #[error("altitude {0} m is outside [-500, 100000] m")]
    Altitude(f64),
}

/// A ground observer (the dish) on the WGS84 ellipsoid.
///
/// Holds the Earth-fixed position and the east/north/up basis, computed once, so that looking at
/// thousands of satellites per second costs a few multiplications each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observer {
    latitude_deg: f64,
    longitude_deg: f64,
    altitude_m: f64,
    ecef_km: [f64; 3],
    sin_lat: f64,
    cos_lat: f64,
    sin_lon: f64,
    cos_lon: f64,
}

impl Observer {
    /// An observer at geodetic latitude and longitude (degrees, north and east positive) and
    /// altitude above the ellipsoid (metres). Refuses values outside the Earth or not numbers.
    pub fn new(
        latitude_deg: f64,
        longitude_deg: f64,
        altitude_m: f64,
    ) -> Result<Self, ObserverError> {
        if !(-90.0..=90.0).contains(&latitude_deg) {
            return Err(ObserverError::Latitude(latitude_deg));
        }
        if !(-180.0..=360.0).contains(&longitude_deg) {
            return Err(ObserverError::Longitude(longitude_deg));
        }
        if !(-500.0..=100_000.0).contains(&altitude_m) {
            return Err(ObserverError::Altitude(altitude_m));
        }
        let (sin_lat, cos_lat) = latitude_deg.to_radians().sin_cos();
        let (sin_lon, cos_lon) = longitude_deg.to_radians().sin_cos();
        Ok(Self {
            latitude_deg,
            longitude_deg,
            altitude_m,
            ecef_km: geodetic_to_ecef_km(latitude_deg, longitude_deg, altitude_m / 1000.0),
            sin_lat,
            cos_lat,
            sin_lon,
            cos_lon,
        })
    }

    /// Geodetic latitude, degrees.
    pub fn latitude_deg(&self) -> f64 {
        self.latitude_deg
    }

    /// Longitude, degrees.
    pub fn longitude_deg(&self) -> f64 {
        self.longitude_deg
    }

    /// Altitude above the WGS84 ellipsoid, metres.
    pub fn altitude_m(&self) -> f64 {
        self.altitude_m
    }

    /// Earth-fixed position, km.
    pub fn ecef_km(&self) -> [f64; 3] {
        self.ecef_km
    }

    /// Azimuth of the pole-ward direction: 0 (north) in the northern hemisphere and on the
    /// equator, 180 (south) in the southern. Starlink serves from the pole-ward half of the sky
    /// most of the time (reference C5).
    pub fn poleward_azimuth_deg(&self) -> f64 {
        if self.latitude_deg < 0.0 { 180.0 } else { 0.0 }
    }

    /// Where a satellite at `teme_position_km` (SGP4's output) is in this observer's sky at `at`
    /// (reference D4 steps 2-5).
    pub fn look(&self, teme_position_km: [f64; 3], at: DateTime<Utc>) -> SkyPosition {
        self.look_ecef(teme_to_ecef(teme_position_km, gmst_rad(at)))
    }

    /// Where an Earth-fixed point is in this observer's sky (reference D4 step 5).
    pub fn look_ecef(&self, ecef_km: [f64; 3]) -> SkyPosition {
        let dx = ecef_km[0] - self.ecef_km[0];
        let dy = ecef_km[1] - self.ecef_km[1];
        let dz = ecef_km[2] - self.ecef_km[2];
        let east = -self.sin_lon * dx + self.cos_lon * dy;
        let north = -self.sin_lat * self.cos_lon * dx - self.sin_lat * self.sin_lon * dy
            + self.cos_lat * dz;
        let up =
            self.cos_lat * self.cos_lon * dx + self.cos_lat * self.sin_lon * dy + self.sin_lat * dz;
        let range_km = (dx * dx + dy * dy + dz * dz).sqrt();
        // atan2 rather than D4's asin(U/|d|): the same angle, but well conditioned near the zenith.
        let elevation_deg = up.atan2(east.hypot(north)).to_degrees();
        let azimuth_deg = east.atan2(north).to_degrees().rem_euclid(360.0);
        // rem_euclid can return exactly 360.0 for tiny negative inputs.
        let azimuth_deg = if azimuth_deg >= 360.0 {
            0.0
        } else {
            azimuth_deg
        };
        SkyPosition {
            azimuth_deg,
            elevation_deg,
            range_km,
        }
    }

    /// The Earth-fixed point at `east`, `north`, `up` km from this observer: the inverse of
    /// [`Observer::look_ecef`]'s projection, for building test geometry.
    pub fn enu_to_ecef(&self, east: f64, north: f64, up: f64) -> [f64; 3] {
        let (sl, cl, so, co) = (self.sin_lat, self.cos_lat, self.sin_lon, self.cos_lon);
        [
            self.ecef_km[0] - so * east - sl * co * north + cl * co * up,
            self.ecef_km[1] + co * east - sl * so * north + cl * so * up,
            self.ecef_km[2] + cl * north + sl * up,
        ]
    }
}

/// Greenwich mean sidereal time at `at`, radians in [0, 2pi): the IAU-82 expression of the `sgp4`
/// crate with UTC standing in for UT1 (reference D3, D4 step 2).
pub fn gmst_rad(at: DateTime<Utc>) -> f64 {
    sgp4::iau_epoch_to_sidereal_time(sgp4::julian_years_since_j2000(&at.naive_utc()))
}

/// Rotates a TEME vector into the Earth-fixed frame by the sidereal angle `gmst_rad`
/// (reference D4 step 3; polar motion ignored).
pub fn teme_to_ecef(teme_km: [f64; 3], gmst_rad: f64) -> [f64; 3] {
    let (s, c) = gmst_rad.sin_cos();
    [
        c * teme_km[0] + s * teme_km[1],
        -s * teme_km[0] + c * teme_km[1],
        teme_km[2],
    ]
}

/// Earth-fixed position of a geodetic point on WGS84 (reference D4 step 4).
pub fn geodetic_to_ecef_km(latitude_deg: f64, longitude_deg: f64, altitude_km: f64) -> [f64; 3] {
    let e2 = EARTH_FLATTENING * (2.0 - EARTH_FLATTENING);
    let (sin_lat, cos_lat) = latitude_deg.to_radians().sin_cos();
    let (sin_lon, cos_lon) = longitude_deg.to_radians().sin_cos();
    let n = EARTH_EQUATORIAL_RADIUS_KM / (1.0 - e2 * sin_lat * sin_lat).sqrt();
    [
        (n + altitude_km) * cos_lat * cos_lon,
        (n + altitude_km) * cos_lat * sin_lon,
        (n * (1.0 - e2) + altitude_km) * sin_lat,
    ]
}

/// Largest slant range (km) at which a satellite at geocentric radius `satellite_radius_km` is
/// still at or above `min_elevation_deg` for an observer at geocentric radius
/// `observer_radius_km` (law of cosines in the observer-centre-satellite triangle). Beyond it
/// the satellite is below the elevation mask; the prefilter of the serving timeline uses it.
pub fn max_slant_range_km(
    observer_radius_km: f64,
    satellite_radius_km: f64,
    min_elevation_deg: f64,
) -> f64 {
    let (s, c) = min_elevation_deg.to_radians().sin_cos();
    let root = satellite_radius_km.powi(2) - (observer_radius_km * c).powi(2);
    if root <= 0.0 {
        return 0.0;
    }
    root.sqrt() - observer_radius_km * s
}

/// One-way propagation delay over a slant range, ms.
pub fn propagation_delay_ms(range_km: f64) -> f64 {
    range_km / SPEED_OF_LIGHT_KM_PER_S * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn an_observer_outside_the_earth_is_refused() {
        assert_eq!(
            Observer::new(91.0, 0.0, 0.0),
            Err(ObserverError::Latitude(91.0))
        );
        assert!(matches!(
            Observer::new(f64::NAN, 0.0, 0.0),
            Err(ObserverError::Latitude(_))
        ));
        assert!(matches!(
            Observer::new(0.0, 400.0, 0.0),
            Err(ObserverError::Longitude(_))
        ));
        assert!(matches!(
            Observer::new(0.0, 0.0, 2.0e5),
            Err(ObserverError::Altitude(_))
        ));
        assert!(Observer::new(-90.0, 359.0, 8848.0).is_ok());
    }

    #[test]
    fn a_point_straight_up_the_ellipsoid_normal_is_at_elevation_90_and_its_height_away() {
        let observer = Observer::new(47.37, 8.54, 400.0).unwrap();
        let above = geodetic_to_ecef_km(47.37, 8.54, 550.4);
        let look = observer.look_ecef(above);
        assert!(close(look.elevation_deg, 90.0, 1e-9), "{look:?}");
        assert!(close(look.range_km, 550.0, 1e-6), "{look:?}");
    }

    #[test]
    fn east_north_up_offsets_come_back_as_their_azimuth_elevation_and_range() {
        let observer = Observer::new(-27.47, 153.03, 30.0).unwrap();
        for (e, n, u, az, el) in [
            (0.0, 100.0, 0.0, 0.0, 0.0),
            (100.0, 0.0, 0.0, 90.0, 0.0),
            (0.0, -100.0, 0.0, 180.0, 0.0),
            (-100.0, 0.0, 100.0, 270.0, 45.0),
        ] {
            let look = observer.look_ecef(observer.enu_to_ecef(e, n, u));
            let az_error = (look.azimuth_deg - az + 180.0).rem_euclid(360.0) - 180.0;
            assert!(close(az_error, 0.0, 1e-9), "{look:?} vs {az}");
            assert!((0.0..360.0).contains(&look.azimuth_deg));
            assert!(close(look.elevation_deg, el, 1e-9), "{look:?} vs {el}");
            let range = (e * e + n * n + u * u).sqrt();
            assert!(close(look.range_km, range, 1e-9));
        }
    }

    #[test]
    fn the_observer_sits_on_the_wgs84_ellipsoid() {
        // At the equator the ECEF radius is the equatorial radius, at the pole the polar radius
        // a (1 - f) = 6356.752 km.
        let equator = geodetic_to_ecef_km(0.0, 0.0, 0.0);
        assert!(close(equator[0], EARTH_EQUATORIAL_RADIUS_KM, 1e-9));
        let pole = geodetic_to_ecef_km(90.0, 0.0, 0.0);
        assert!(close(pole[2], 6_356.752_314, 1e-6), "{pole:?}");
    }

    #[test]
    fn sidereal_time_at_j2000_is_280_46_degrees() {
        let j2000 = Utc.with_ymd_and_hms(2000, 1, 1, 12, 0, 0).unwrap();
        assert!(close(gmst_rad(j2000).to_degrees(), 280.460_618_4, 1e-6));
    }

    #[test]
    fn teme_to_ecef_rotates_about_the_pole_by_minus_gmst() {
        let r = teme_to_ecef([7000.0, 0.0, 100.0], std::f64::consts::FRAC_PI_2);
        assert!(close(r[0], 0.0, 1e-9) && close(r[1], -7000.0, 1e-9) && r[2] == 100.0);
    }

    #[test]
    fn the_slant_range_at_the_mask_grows_with_altitude_and_shrinks_with_elevation() {
        let re = EARTH_EQUATORIAL_RADIUS_KM;
        // Directly overhead, the slant range is the height.
        assert!(close(max_slant_range_km(re, re + 550.0, 90.0), 550.0, 1e-9));
        // At 25 degrees for a 550 km shell, about 1,123 km (a textbook value for Starlink).
        let r25 = max_slant_range_km(re, re + 550.0, 25.0);
        assert!(close(r25, 1123.0, 2.0), "{r25}");
        assert!(max_slant_range_km(re, re + 1200.0, 25.0) > r25);
        assert!(max_slant_range_km(re, re + 550.0, 40.0) < r25);
        assert_eq!(max_slant_range_km(re, re - 10.0, 0.0), 0.0);
    }

    #[test]
    fn light_takes_a_millisecond_per_299_792_km() {
        assert!(close(propagation_delay_ms(299_792.458), 1000.0, 1e-9));
        assert!(close(propagation_delay_ms(550.0), 1.834_6, 1e-4));
    }
}

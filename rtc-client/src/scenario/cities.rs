//! Major cities, for the ground endpoints of orbit scenarios.
//!
//! The paper's sparse-constellation evaluation "randomly sampled pairs of locations from major
//! cities around the globe to represent geographically separated peers" (paper-dynamic-pacing,
//! section IV-C) without listing them. This list is the largest metropolitan areas of each
//! inhabited continent plus the sites of the measurements the project calibrates against (Austin
//! and Salt Lake City: the paper's live Starlink call; Seattle and Lagos: the mmsys24 pings and
//! `lagos.csv`). Coordinates are city-centre WGS84 degrees, rounded to 0.01 degree (about 1 km,
//! far below what changes a satellite's elevation).

/// A city: name and WGS84 position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct City {
    /// Name as written in scenario files (matched case-insensitively).
    pub name: &'static str,
    /// Latitude, degrees north.
    pub latitude_deg: f64,
    /// Longitude, degrees east.
    pub longitude_deg: f64,
}

const fn city(name: &'static str, latitude_deg: f64, longitude_deg: f64) -> City {
    City {
        name,
        latitude_deg,
        longitude_deg,
    }
}

/// The built-in list.
pub const CITIES: [City; 36] = [
    city("Tokyo", 35.68, 139.65),
    city("Delhi", 28.61, 77.21),
    city("Shanghai", 31.23, 121.47),
    city("Sao Paulo", -23.55, -46.63),
    city("Mexico City", 19.43, -99.13),
    city("Cairo", 30.04, 31.24),
    city("Mumbai", 19.08, 72.88),
    city("Beijing", 39.90, 116.41),
    city("Dhaka", 23.81, 90.41),
    city("Osaka", 34.69, 135.50),
    city("New York", 40.71, -74.01),
    city("Karachi", 24.86, 67.00),
    city("Buenos Aires", -34.60, -58.38),
    city("Istanbul", 41.01, 28.98),
    city("Kolkata", 22.57, 88.36),
    city("Lagos", 6.52, 3.38),
    city("Manila", 14.60, 120.98),
    city("Rio de Janeiro", -22.91, -43.17),
    city("Los Angeles", 34.05, -118.24),
    city("Moscow", 55.76, 37.62),
    city("Paris", 48.86, 2.35),
    city("London", 51.51, -0.13),
    city("Jakarta", -6.21, 106.85),
    city("Seoul", 37.57, 126.98),
    city("Lima", -12.05, -77.04),
    city("Bangkok", 13.76, 100.50),
    city("Johannesburg", -26.20, 28.05),
    city("Sydney", -33.87, 151.21),
    city("Nairobi", -1.29, 36.82),
    city("Toronto", 43.65, -79.38),
    city("Chicago", 41.88, -87.63),
    city("Singapore", 1.35, 103.82),
    city("Melbourne", -37.81, 144.96),
    city("Austin", 30.27, -97.74),
    city("Salt Lake City", 40.76, -111.89),
    city("Seattle", 47.61, -122.33),
];

/// The city called `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static City> {
    CITIES
        .iter()
        .find(|c| c.name.eq_ignore_ascii_case(name.trim()))
}

/// Mean Earth radius for great-circle distances, km (IUGG mean radius R1).
pub const MEAN_EARTH_RADIUS_KM: f64 = 6371.0;

/// Great-circle distance between two cities, km (haversine on the mean sphere).
pub fn distance_km(a: &City, b: &City) -> f64 {
    let (la1, la2) = (a.latitude_deg.to_radians(), b.latitude_deg.to_radians());
    let dla = la2 - la1;
    let dlo = (b.longitude_deg - a.longitude_deg).to_radians();
    let h = (dla / 2.0).sin().powi(2) + la1.cos() * la2.cos() * (dlo / 2.0).sin().powi(2);
    2.0 * MEAN_EARTH_RADIUS_KM * h.sqrt().min(1.0).asin()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_case_insensitively() {
        for (i, a) in CITIES.iter().enumerate() {
            assert!(
                CITIES[i + 1..]
                    .iter()
                    .all(|b| !b.name.eq_ignore_ascii_case(a.name))
            );
        }
        assert_eq!(find("new york").map(|c| c.name), Some("New York"));
        assert!(find("Atlantis").is_none());
    }

    #[test]
    fn london_to_new_york_is_about_5570_km() {
        let d = distance_km(find("London").unwrap(), find("New York").unwrap());
        assert!((d - 5570.0).abs() < 20.0, "{d}");
    }
}

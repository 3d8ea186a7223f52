//! The catalogue loader and the observer geometry against real TLE files and an independent
//! implementation (Skyfield 1.55 with the Python `sgp4` 2.27 package, WGS72, run once to produce
//! the check values below).
//!
//! The data lives outside the repository in `../shared/data/tle/` (never copied in); each test
//! says so and returns when the directory is absent.

use chrono::{DateTime, TimeZone, Utc};
use handover_predictor::orbit::{
    Catalogue, DelayConfig, Observer, Search, ServingPolicy, serving_timeline_with,
};
use std::path::PathBuf;

fn tle_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/tle");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipping: {} is absent (the shared reference data is not checked out)",
            dir.display()
        );
        None
    }
}

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
}

#[test]
fn the_may_2025_starlink_snapshot_loads_every_object() {
    let Some(dir) = tle_dir() else { return };
    let c = Catalogue::load(dir.join("starryNet/Starlink_May_2025.tle")).unwrap();
    assert_eq!(c.len() + c.skipped(), 7999);
    assert_eq!(c.skipped(), 0, "{:?}", c.skipped_objects());
    let first = c.satellites().first().unwrap();
    assert_eq!(
        (first.norad_id(), first.name()),
        (55768, Some("Starlink-55768"))
    );
    assert_eq!(
        c.newest_epoch().unwrap().format("%Y-%m-%d").to_string(),
        "2025-05-12"
    );
    assert!(c.origin().ends_with("Starlink_May_2025.tle"));
}

#[test]
fn the_iridium_file_with_crlf_and_padded_flagged_names_loads() {
    let Some(dir) = tle_dir() else { return };
    let c = Catalogue::load(dir.join("iridium-toolkit/iridium.txt")).unwrap();
    assert_eq!(c.len() + c.skipped(), 92);
    assert_eq!(c.get(24792).unwrap().name(), Some("IRIDIUM 8 [+]"));
}

#[test]
fn the_oneweb_file_loads() {
    let Some(dir) = tle_dir() else { return };
    let c = Catalogue::load(dir.join("starryNet/OneWeb.tle")).unwrap();
    assert_eq!(c.len() + c.skipped(), 426);
    assert_eq!(c.get(44057).unwrap().name(), Some("ONEWEB-0012"));
}

#[test]
fn a_missing_file_is_an_io_error_naming_the_path() {
    let err = Catalogue::load("/nonexistent/starlink.tle").unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/starlink.tle"),
        "{err}"
    );
}

/// Skyfield `(sat - wgs84.latlon(...)).at(t).altaz()` for the May-2025 snapshot:
/// `(norad, elevation deg, azimuth deg, range km)`.
const LOUVAIN_2025_05_12T12_00_00: [(u64, f64, f64, f64); 3] = [
    (52129, 69.325392, 10.262291, 579.3529),
    (53548, 37.810061, 58.072989, 837.8072),
    (52451, -89.285721, 194.330872, 13287.5535),
];
const BRISBANE_2025_05_12T18_30_15: [(u64, f64, f64, f64); 2] = [
    (46556, 30.207952, 238.268048, 1000.0458),
    (52365, 76.226312, 12.416620, 562.9080),
];

#[test]
fn azimuth_elevation_and_range_match_skyfield_to_a_hundredth_of_a_degree() {
    let Some(dir) = tle_dir() else { return };
    let c = Catalogue::load(dir.join("starryNet/Starlink_May_2025.tle")).unwrap();
    let cases = [
        (
            Observer::new(50.67, 4.61, 100.0).unwrap(),
            utc(2025, 5, 12, 12, 0, 0),
            &LOUVAIN_2025_05_12T12_00_00[..],
        ),
        (
            Observer::new(-27.47, 153.03, 30.0).unwrap(),
            utc(2025, 5, 12, 18, 30, 15),
            &BRISBANE_2025_05_12T18_30_15[..],
        ),
    ];
    for (observer, at, expected) in cases {
        for &(id, el, az, range) in expected {
            let p = c.sky_position(id, &observer, at).unwrap().unwrap();
            let daz = (p.azimuth_deg - az + 180.0).rem_euclid(360.0) - 180.0;
            assert!(
                (p.elevation_deg - el).abs() < 0.01 && daz.abs() < 0.01,
                "{id}: {p:?} vs el {el} az {az}"
            );
            assert!(
                (p.range_km - range).abs() < 0.05,
                "{id}: {p:?} vs {range} km"
            );
        }
    }
}

#[test]
fn the_prefiltered_search_finds_exactly_what_the_exhaustive_one_finds() {
    let Some(dir) = tle_dir() else { return };
    let c = Catalogue::load(dir.join("starryNet/Starlink_May_2025.tle")).unwrap();
    let from = utc(2025, 5, 12, 12, 3, 4);
    for (lat, lon) in [(50.67, 4.61), (-27.47, 153.03), (0.0, -60.0)] {
        let observer = Observer::new(lat, lon, 0.0).unwrap();
        for policy in [
            ServingPolicy::default(),
            ServingPolicy::Delay(DelayConfig::default()),
        ] {
            let fast =
                serving_timeline_with(&c, &observer, &policy, from, 150, Search::Prefiltered)
                    .unwrap();
            let slow = serving_timeline_with(&c, &observer, &policy, from, 150, Search::Exhaustive)
                .unwrap();
            assert_eq!(fast.len(), 150);
            assert_eq!(fast, slow, "{lat} {lon} {policy:?}");
            assert!(
                fast.iter().all(Option::is_some),
                "dense Starlink always serves"
            );
        }
    }
}

//! The Walker generator and the catalogues the project ships in `traces/tle/`.

use chrono::{Duration, TimeZone, Utc};
use handover_predictor::orbit::walker::{self, Shell};
use handover_predictor::orbit::{
    Catalogue, DelayConfig, Observer, ServingPolicy, handovers, serving_timeline,
};
use std::path::PathBuf;

fn shipped_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../traces/tle")
}

/// Run with `cargo test -p handover-predictor --test orbit_walker -- --ignored` to rewrite the
/// shipped catalogues after changing the generator (the CLI will offer the same).
#[test]
#[ignore]
fn regenerate_the_shipped_catalogues() {
    let written = walker::write_shipped(&shipped_dir()).unwrap();
    assert_eq!(written.len(), 3);
}

#[test]
fn the_shipped_catalogues_are_exactly_what_the_generator_writes() {
    for (file, shells) in walker::shipped() {
        let path = shipped_dir().join(file);
        let shipped =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let generated = walker::generate(&shells, walker::shipped_epoch()).unwrap();
        assert!(
            shipped == generated,
            "{file} differs from the generator's output; regenerate it with \
             `cargo test -p handover-predictor --test orbit_walker -- --ignored`"
        );
    }
}

#[test]
fn the_shipped_catalogues_load_back_with_their_shell_parameters() {
    for (file, shells) in walker::shipped() {
        let c = Catalogue::load(shipped_dir().join(file)).unwrap();
        let expected: usize = shells.iter().map(Shell::satellites).sum();
        assert_eq!((c.len(), c.skipped()), (expected, 0), "{file}");
        assert_eq!(c.newest_epoch(), Some(walker::shipped_epoch()));
        let mut satellites = c.iter();
        for shell in &shells {
            let n = walker::mean_motion_rev_per_day(shell.altitude_km);
            for satellite in satellites.by_ref().take(shell.satellites()) {
                let e = satellite.elements();
                assert_eq!(e.inclination, shell.inclination_deg);
                assert!((e.mean_motion - n).abs() < 1e-8);
                assert_eq!(e.eccentricity, 0.0);
                assert!(satellite.name().unwrap().starts_with(&shell.name));
            }
        }
    }
}

#[test]
fn a_generated_orbit_propagates_at_its_altitude_through_sgp4() {
    // SGP4 treats the TLE mean motion as Kozai's and removes J2's secular part, so the mean radius
    // it propagates is a few km off Kepler's a; over one orbit the mean altitude must still be
    // the shell's within 10 km, and the orbit circular within 25 km (J2 short-period terms).
    let epoch = walker::shipped_epoch();
    for (altitude, inclination) in [(550.0, 53.0), (560.0, 97.6), (780.0, 86.4), (1200.0, 87.9)] {
        let shells = [Shell::delta("T", altitude, inclination, 1, 1, 0)];
        let c = Catalogue::parse(&walker::generate(&shells, epoch).unwrap(), "t").unwrap();
        let satellite = &c.satellites()[0];
        let period_s = 86_400.0 / walker::mean_motion_rev_per_day(altitude);
        let radii: Vec<f64> = (0..360)
            .map(|k| {
                let at =
                    epoch + Duration::milliseconds((period_s * 1000.0 * k as f64 / 360.0) as i64);
                let p = satellite.teme_position_km(at).unwrap();
                (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt()
            })
            .collect();
        let mean =
            radii.iter().sum::<f64>() / radii.len() as f64 - walker::WGS72_EQUATORIAL_RADIUS_KM;
        let spread = radii.iter().copied().fold(f64::MIN, f64::max)
            - radii.iter().copied().fold(f64::MAX, f64::min);
        eprintln!(
            "{altitude} km, {inclination} deg: SGP4 mean altitude {mean:.2} km, radius spread {spread:.2} km"
        );
        assert!((mean - altitude).abs() < 10.0, "{altitude}: {mean}");
        assert!(spread < 25.0, "{altitude}: {spread}");
        // The plane: the highest latitude reached is the inclination (or 180 - it).
        let max_lat = (0..360)
            .map(|k| {
                let at =
                    epoch + Duration::milliseconds((period_s * 1000.0 * k as f64 / 360.0) as i64);
                let p = satellite.teme_position_km(at).unwrap();
                (p[2] / (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt())
                    .asin()
                    .to_degrees()
            })
            .fold(f64::MIN, f64::max);
        let expected = if inclination > 90.0 {
            180.0 - inclination
        } else {
            inclination
        };
        assert!((max_lat - expected).abs() < 0.2, "{max_lat} vs {expected}");
    }
}

const CITIES: [(&str, f64, f64); 6] = [
    ("New York", 40.71, -74.0),
    ("London", 51.5, -0.12),
    ("Tokyo", 35.68, 139.69),
    ("Sydney", -33.87, 151.2),
    ("Singapore", 1.35, 103.8),
    ("Sao Paulo", -23.55, -46.63),
];

#[test]
fn the_sparse_catalogues_hand_over_zero_to_one_times_a_minute_like_the_papers_emulation() {
    // Paper section IV-C: "handovers occurred infrequently, at a rate of approximately 0-1 per
    // minute". Delay policy (StarryNet), 10-degree mask (Iridium's own is 8.2), six cities, 1 h.
    let from = walker::shipped_epoch() + Duration::hours(12);
    let policy = ServingPolicy::Delay(DelayConfig {
        min_elevation_deg: 10.0,
        ..DelayConfig::default()
    });
    for (file, shells) in [
        ("sparse-80", walker::sparse_80()),
        ("sparse-100", walker::sparse_100()),
    ] {
        let c = Catalogue::parse(
            &walker::generate(&shells, walker::shipped_epoch()).unwrap(),
            file,
        )
        .unwrap();
        let (mut count, mut seconds, mut outage) = (0, 0, 0);
        for (_, lat, lon) in CITIES {
            let observer = Observer::new(lat, lon, 0.0).unwrap();
            let timeline = serving_timeline(&c, &observer, &policy, from, 3600).unwrap();
            count += handovers(&timeline).len();
            seconds += timeline.len();
            outage += timeline.iter().filter(|s| s.is_none()).count();
        }
        let per_minute = count as f64 * 60.0 / seconds as f64;
        let outage_pct = 100.0 * outage as f64 / seconds as f64;
        eprintln!(
            "{file}: {per_minute:.2} handovers per minute, no satellite {outage_pct:.1} % of the time"
        );
        assert!(
            per_minute > 0.0 && per_minute <= 1.0,
            "{file}: {per_minute}"
        );
        assert!(outage_pct < 2.0, "{file}: {outage_pct}");
    }
}

#[test]
fn the_generated_starlink_catalogue_serves_under_the_starlink_policy() {
    let shells = walker::starlink_gen1();
    let c = Catalogue::parse(
        &walker::generate(&shells, walker::shipped_epoch()).unwrap(),
        "gen1",
    )
    .unwrap();
    let observer = Observer::new(50.67, 4.61, 0.0).unwrap();
    let from = Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 0).unwrap();
    let timeline = serving_timeline(&c, &observer, &ServingPolicy::default(), from, 600).unwrap();
    assert!(timeline.iter().all(Option::is_some));
    let at = handovers(&timeline);
    eprintln!("generation 1 at Louvain: {} handovers in 600 s", at.len());
    assert!((20..=40).contains(&at.len()), "{}", at.len());
    for i in at {
        assert!(handover_predictor::sky::is_slot_boundary(
            from + Duration::seconds(i as i64)
        ));
    }
}

//! The hybrid predictor against the orbit model's truth: it identifies the serving satellite from
//! the simulated dish's track (reference B6 matching), continues the serving policy exactly as the
//! serving engine would, and falls back to the orbital forecast when nothing matches.

#![cfg(feature = "dish")]

use chrono::{DateTime, Duration as ChronoDuration, TimeZone, Utc};
use handover_predictor::dish::{
    DetectorConfig, HandoverDetector, OrbitalTruth, PointKind, SimConfig, SimDish, SkyDirection,
    TrackPoint,
};
use handover_predictor::orbit::{
    Catalogue, DelayConfig, Observer, ServingPolicy, serving_timeline, walker,
};
use handover_predictor::predict::{Basis, Hybrid, HybridConfig, Orbital, Sample};
use handover_predictor::sky::{SLOT_LENGTH_S, slot_start};
use handover_predictor::{ForecastSource, HandoverSource};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

fn gen1() -> Arc<Catalogue> {
    let text = walker::generate(&walker::starlink_gen1(), walker::shipped_epoch()).unwrap();
    Arc::new(Catalogue::parse(&text, "starlink-gen1").unwrap())
}

fn may_2025() -> Option<Arc<Catalogue>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/data/tle/starryNet/Starlink_May_2025.tle");
    if !path.is_file() {
        eprintln!("skipping: {} is absent", path.display());
        return None;
    }
    Some(Arc::new(Catalogue::load(path).unwrap()))
}

/// 12:00:05 UTC on the catalogues' epoch day, 7 s before a slot boundary.
fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 5).unwrap()
}

/// Kanazawa, Louvain-la-Neuve, Brisbane (reference C5's sites).
fn sites() -> [Observer; 3] {
    [
        Observer::new(36.56, 136.65, 0.0).unwrap(),
        Observer::new(50.67, 4.61, 0.0).unwrap(),
        Observer::new(-27.47, 153.03, 0.0).unwrap(),
    ]
}

/// The simulated dish and the detector in virtual time over `seconds` from `start()`: polls
/// 250 ms after each second, a clear after each slot's first poll (the driver's schedule).
fn track(truth: &OrbitalTruth, seconds: i64) -> Vec<TrackPoint> {
    let mut dish = SimDish::new(SimConfig::new(start()));
    let mut detector = HandoverDetector::new(DetectorConfig::default());
    let mut points = Vec::new();
    dish.clear(truth, start());
    let mut cleared = slot_start(start());
    let mut at = start() + ChronoDuration::milliseconds(250);
    let end = start() + ChronoDuration::seconds(seconds);
    while at <= end {
        let map = dish.map_at(truth, at);
        if let Some(point) = detector.observe(at, &map).point {
            points.push(point);
        }
        if slot_start(at) > cleared {
            dish.clear(truth, at);
            cleared = slot_start(at);
        }
        at += ChronoDuration::seconds(1);
    }
    points
}

/// Identifies every complete slot of the track and returns (identified, correct, slots).
fn identify_all(
    catalogue: Arc<Catalogue>,
    observer: Observer,
    seconds: i64,
) -> (usize, usize, usize) {
    let policy = ServingPolicy::default();
    let truth = OrbitalTruth::new(catalogue.clone(), observer, policy).unwrap();
    let points = track(&truth, seconds);
    let mut hybrid = Hybrid::new(catalogue, observer, policy, Instant::now(), start()).unwrap();
    let first = slot_start(start()) + ChronoDuration::seconds(SLOT_LENGTH_S);
    let last = slot_start(start() + ChronoDuration::seconds(seconds));
    let (mut identified, mut correct, mut slots) = (0, 0, 0);
    let mut slot = first;
    let mut fed = 0;
    while slot < last {
        let slot_end = slot + ChronoDuration::seconds(SLOT_LENGTH_S);
        while fed < points.len() && points[fed].at < slot_end + ChronoDuration::seconds(1) {
            hybrid.observe(&points[fed]);
            fed += 1;
        }
        slots += 1;
        let served = truth.serving_id(slot + ChronoDuration::seconds(7));
        if let Basis::Identified(m) = hybrid.identify_slot(slot) {
            identified += 1;
            if Some(m.norad_id) == served {
                correct += 1;
            }
        }
        slot = slot_end;
    }
    (identified, correct, slots)
}

#[test]
fn the_hybrid_identifies_the_truths_serving_satellite_on_the_generated_catalogue() {
    let catalogue = gen1();
    for observer in sites() {
        let (identified, correct, slots) = identify_all(catalogue.clone(), observer, 300);
        assert!(slots >= 18, "{slots}");
        assert!(
            identified * 10 >= slots * 9,
            "{identified} of {slots} slots identified"
        );
        assert!(
            correct * 10 >= slots * 9,
            "{correct} of {slots} slots right at {observer:?}"
        );
    }
}

#[test]
fn the_hybrid_identifies_the_truths_serving_satellite_on_the_real_may_2025_catalogue() {
    let Some(catalogue) = may_2025() else { return };
    for observer in sites() {
        let (identified, correct, slots) = identify_all(catalogue.clone(), observer, 300);
        assert!(slots >= 18, "{slots}");
        assert!(
            identified * 10 >= slots * 9,
            "{identified} of {slots} slots identified"
        );
        assert!(
            correct * 10 >= slots * 9,
            "{correct} of {slots} slots right at {observer:?}"
        );
    }
}

#[test]
fn seeded_with_the_engines_own_choice_the_continuation_is_the_serving_timeline() {
    let catalogue = gen1();
    let policies = [
        ServingPolicy::default(),
        ServingPolicy::Delay(DelayConfig {
            margin_ms: 0.3,
            ..DelayConfig::default()
        }),
    ];
    for policy in policies {
        for observer in sites() {
            let hybrid =
                Hybrid::new(catalogue.clone(), observer, policy, Instant::now(), start()).unwrap();
            // Slots starting at 12:00:12 and 12:04:57 (the latter crosses the keep rule's memory
            // restart at 12:10:12 within 400 s).
            for from in [
                Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 12).unwrap(),
                Utc.with_ymd_and_hms(2025, 5, 12, 12, 4, 57).unwrap(),
            ] {
                let expected: Vec<Option<u64>> =
                    serving_timeline(&catalogue, &observer, &policy, from, 400)
                        .unwrap()
                        .iter()
                        .map(|s| s.map(|s| s.norad_id))
                        .collect();
                let seed = expected[0].expect("gen1 always serves");
                let continued = hybrid.continue_from(from, seed, 400);
                assert_eq!(
                    continued, expected,
                    "{policy:?} at {observer:?} from {from}"
                );
            }
        }
    }
}

#[test]
fn without_observations_the_hybrid_is_the_orbital_forecast_and_says_so() {
    let catalogue = gen1();
    let observer = sites()[0];
    let policy = ServingPolicy::default();
    let epoch = Instant::now();
    let mut hybrid = Hybrid::new(catalogue.clone(), observer, policy, epoch, start()).unwrap();
    let mut orbital = Orbital::new(catalogue, observer, policy, epoch, start());
    assert!(hybrid.last_basis().is_none());
    let f = hybrid.forecast(epoch).unwrap();
    assert_eq!(f.source(), ForecastSource::Hybrid);
    assert_eq!(hybrid.name(), "hybrid");
    assert_eq!(f.steps(), orbital.forecast(epoch).unwrap().steps());
    assert_eq!(hybrid.last_basis(), Some(&Basis::NoObservation));
    assert!(hybrid.last_match().is_none());
}

#[test]
fn a_track_no_satellite_follows_is_refused_and_the_forecast_falls_back() {
    let catalogue = gen1();
    let observer = sites()[1];
    let policy = ServingPolicy::default();
    let epoch = Instant::now();
    let mut hybrid = Hybrid::new(catalogue.clone(), observer, policy, epoch, start()).unwrap();
    let mut orbital = Orbital::new(catalogue, observer, policy, epoch, start());
    // A "satellite" standing still at the zenith for a whole slot, then moving backwards
    // across the sky at 5 degrees/s: nothing in orbit does either.
    let slot = slot_start(start());
    for k in 0..14 {
        hybrid.observe_sample(Sample {
            at: slot + ChronoDuration::seconds(k),
            azimuth_deg: 200.0,
            elevation_deg: 30.0 + 4.0 * k as f64,
        });
    }
    let now = epoch + std::time::Duration::from_secs(6);
    let f = hybrid.forecast(now).unwrap();
    match hybrid.last_basis() {
        Some(Basis::NoMatch { best }) => {
            if let Some(best) = best {
                assert!(best.mean_separation_deg > hybrid.config().max_mean_separation_deg);
            }
        }
        other => panic!("expected no match, got {other:?}"),
    }
    assert!(hybrid.last_match().is_none());
    assert_eq!(f.steps(), orbital.forecast(now).unwrap().steps());
}

#[test]
fn fed_the_truths_own_track_the_hybrid_forecast_equals_the_truth() {
    let catalogue = gen1();
    let observer = sites()[2];
    let policy = ServingPolicy::default();
    let truth = OrbitalTruth::new(catalogue.clone(), observer, policy).unwrap();
    let epoch = Instant::now();
    let mut hybrid = Hybrid::new(catalogue, observer, policy, epoch, start()).unwrap();
    for point in track(&truth, 40) {
        assert!(point.at <= start() + ChronoDuration::seconds(40));
        hybrid.observe(&point);
    }
    let now = epoch + std::time::Duration::from_secs(40);
    let at = start() + ChronoDuration::seconds(40);
    let f = hybrid.forecast(now).unwrap();
    let m = *hybrid.last_match().expect("identified");
    assert_eq!(truth.serving_id(m.slot), Some(m.norad_id));
    assert!(m.mean_separation_deg < 3.0, "{m:?}");
    let expected: Vec<usize> = truth
        .handovers(at, at + ChronoDuration::seconds(120))
        .iter()
        .map(|h| ((*h - at).num_milliseconds() as usize).div_ceil(1000) - 1)
        .collect();
    let got: Vec<usize> = (0..120).filter(|&k| f.steps().is_handover(k)).collect();
    assert_eq!(got, expected);
}

/// Mean separation (degrees) between fresh track points dated `offset_ms` from their instant and
/// the truth's serving satellite at that time, for points after a clear or not.
fn mean_error(truth: &OrbitalTruth, points: &[TrackPoint], reset: bool, offset_ms: i64) -> f64 {
    let errors: Vec<f64> = points
        .iter()
        .filter(|p| p.kind == PointKind::Fresh && p.map_reset == reset)
        .filter_map(|p| {
            let id = truth.serving_id(p.at - ChronoDuration::milliseconds(500))?;
            let at = p.at + ChronoDuration::milliseconds(offset_ms);
            let s = truth
                .catalogue()
                .sky_position(id, truth.observer(), at)?
                .ok()?;
            Some(p.direction.separation_deg(SkyDirection::of(&s)))
        })
        .collect();
    assert!(errors.len() >= 15, "{}", errors.len());
    errors.iter().sum::<f64>() / errors.len() as f64
}

#[test]
fn the_default_point_offsets_are_where_the_simulated_track_meets_the_truth() {
    let truth = OrbitalTruth::new(gen1(), sites()[1], ServingPolicy::default()).unwrap();
    let points = track(&truth, 600);
    let defaults = HybridConfig::default();
    for (reset, default_s) in [
        (true, defaults.reset_point_offset_s),
        (false, defaults.edge_point_offset_s),
    ] {
        let at_default = mean_error(&truth, &points, reset, (default_s * 1000.0) as i64);
        let best = (-8..=8)
            .map(|k| mean_error(&truth, &points, reset, k * 250))
            .fold(f64::INFINITY, f64::min);
        assert!(
            at_default <= best + 0.05,
            "reset {reset}: {at_default} at the default, {best} at best"
        );
        assert!(at_default < 0.8, "{at_default}");
    }
    // Dating every point half a second back, as the centroid of a whole second would be, is
    // clearly worse for the points whose map was not cleared (the leading edge of the beam).
    assert!(
        mean_error(&truth, &points, false, -500) > 1.5 * mean_error(&truth, &points, false, 1000)
    );
}

#[test]
fn samples_at_the_ends_of_the_calendar_or_not_numbers_are_ignored_without_panicking() {
    let catalogue = gen1();
    let epoch = Instant::now();
    let mut hybrid = Hybrid::new(
        catalogue,
        sites()[0],
        ServingPolicy::default(),
        epoch,
        start(),
    )
    .unwrap();
    for at in [DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC] {
        hybrid.observe_sample(Sample {
            at,
            azimuth_deg: 10.0,
            elevation_deg: 50.0,
        });
    }
    for (azimuth_deg, elevation_deg) in [(f64::NAN, 50.0), (10.0, f64::INFINITY), (10.0, 95.0)] {
        hybrid.observe_sample(Sample {
            at: start(),
            azimuth_deg,
            elevation_deg,
        });
    }
    assert_eq!(hybrid.identify_slot(start()), Basis::NoObservation);
    assert!(hybrid.forecast(epoch).is_ok());
    assert_eq!(hybrid.last_basis(), Some(&Basis::NoObservation));
}

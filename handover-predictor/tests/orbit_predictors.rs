//! The orbital, oracle and mirror predictors over one orbital scenario.

use chrono::{DateTime, TimeZone, Utc};
use handover_predictor::orbit::{Catalogue, Observer, ServingPolicy, walker};
use handover_predictor::predict::{Mirror, Oracle, Orbital};
use handover_predictor::{ForecastSource, HandoverSource};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn gen1() -> Arc<Catalogue> {
    let text = walker::generate(&walker::starlink_gen1(), walker::shipped_epoch()).unwrap();
    Arc::new(Catalogue::parse(&text, "starlink-gen1").unwrap())
}

fn noon() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 0).unwrap()
}

#[test]
fn the_orbital_forecast_equals_the_oracles_truth_for_the_same_orbits() {
    let catalogue = gen1();
    let observer = Observer::new(36.56, 136.65, 0.0).unwrap();
    let policy = ServingPolicy::default();
    let epoch = Instant::now();
    let mut orbital = Orbital::new(catalogue.clone(), observer, policy, epoch, noon());
    let mut oracle =
        Oracle::from_orbits(&catalogue, &observer, &policy, epoch, noon(), 600).unwrap();
    for offset_ms in [15_000u64, 100_500, 247_999, 480_000] {
        let now = epoch + Duration::from_millis(offset_ms);
        let predicted = orbital.forecast(now).unwrap();
        let truth = oracle.forecast(now).unwrap();
        assert_eq!(predicted.source(), ForecastSource::Orbital);
        assert_eq!(truth.source(), ForecastSource::Oracle);
        assert_eq!(predicted.steps(), truth.steps(), "at +{offset_ms} ms");
        assert!(
            (1..=8).contains(&predicted.handover_count()),
            "{}",
            predicted.handover_count()
        );
    }
}

#[test]
fn starlink_handovers_fall_on_the_slot_grid_whatever_the_decision_instant() {
    // Decision at 12:00:05.250 UTC: boundaries at :12, :27, :42, :57 are 6.75 s, 21.75 s, ...
    // after it, i.e. in steps 6, 21, 36, ... (step k covers (k s, k+1 s]).
    let epoch = Instant::now();
    let mut orbital = Orbital::new(
        gen1(),
        Observer::new(50.67, 4.61, 0.0).unwrap(),
        ServingPolicy::default(),
        epoch,
        noon(),
    );
    let f = orbital
        .forecast(epoch + Duration::from_millis(5250))
        .unwrap();
    let steps: Vec<usize> = (0..120).filter(|&k| f.steps().is_handover(k)).collect();
    assert!(!steps.is_empty());
    assert!(steps.iter().all(|k| k % 15 == 6), "{steps:?}");
}

#[test]
fn the_mirror_fed_by_the_truth_repeats_the_last_interval() {
    let catalogue = gen1();
    let observer = Observer::new(-27.47, 153.03, 0.0).unwrap();
    let policy = ServingPolicy::default();
    let epoch = Instant::now();
    let mut oracle =
        Oracle::from_orbits(&catalogue, &observer, &policy, epoch, noon(), 600).unwrap();
    let mut mirror = Mirror::new(epoch);
    assert_eq!(mirror.forecast(epoch).unwrap().handover_count(), 8);
    // A live detector reports each handover as it happens, up to the decision instant.
    for &h in oracle
        .handovers()
        .iter()
        .filter(|&&h| h <= Duration::from_secs(240))
    {
        mirror.observe(epoch + h);
    }
    let now = epoch + Duration::from_secs(240);
    let last = oracle.forecast(epoch + Duration::from_secs(120)).unwrap();
    let mirrored = mirror.forecast(now).unwrap();
    assert_eq!(mirrored.steps(), last.steps());
    assert_eq!(mirrored.source(), ForecastSource::Mirror);
}

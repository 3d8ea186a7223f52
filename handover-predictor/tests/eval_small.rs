//! The evaluation on small configurations (a few windows, seconds in debug mode): sane numbers,
//! the expected order of the predictors, the realism knobs wired, and refused settings. The full
//! evaluation is `tests/eval_report.rs` (ignored).

#![cfg(feature = "dish")]

use chrono::{DateTime, TimeZone, Utc};
use handover_predictor::eval::{
    EvalConfig, EvalError, Location, OVERALL, Perturbation, Predictor, PredictorCatalogue,
    evaluate, perturb,
};
use handover_predictor::orbit::{Catalogue, ServingPolicy, StarlinkConfig, walker};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

fn gen1() -> Arc<Catalogue> {
    static GEN1: OnceLock<Arc<Catalogue>> = OnceLock::new();
    GEN1.get_or_init(|| {
        let text = walker::generate(&walker::starlink_gen1(), walker::shipped_epoch()).unwrap();
        Arc::new(Catalogue::parse(&text, "starlink-gen1").unwrap())
    })
    .clone()
}

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 5, 12, 6, 0, 5).unwrap()
}

fn small(windows: usize, locations: Vec<Location>) -> EvalConfig {
    let mut config = EvalConfig::new(gen1(), start(), Instant::now());
    config.windows = windows;
    config.locations = locations;
    config
}

#[test]
fn on_the_same_catalogue_the_orbital_predictor_is_exact_and_the_mirror_is_not() {
    let config = small(
        5,
        vec![
            Location::new("kanazawa", 36.56, 136.65),
            Location::new("brisbane", -27.47, 153.03),
        ],
    );
    let mut calls = Vec::new();
    let report = evaluate(&config, |done, total| calls.push((done, total))).unwrap();
    assert_eq!(calls.len(), 10);
    assert_eq!(calls.last(), Some(&(10, 10)));

    // One row per predictor and location, plus the overall rows.
    assert_eq!(report.rows.len(), 3 * 3);
    assert_eq!(report.series.len(), 10);
    for row in &report.rows {
        for x in [
            row.f1,
            row.precision,
            row.recall,
            row.boundary_accuracy,
            row.first_boundary_accuracy,
        ] {
            assert!((0.0..=1.0).contains(&x), "{row:?}");
        }
        assert!(row.mae_handovers_per_window >= 0.0);
        assert_eq!(row.unavailable, 0);
    }
    let orbital = report.overall(Predictor::Orbital).unwrap();
    let mirror = report.overall(Predictor::Mirror).unwrap();
    let hybrid = report.overall(Predictor::Hybrid).unwrap();
    assert_eq!(orbital.windows, 10);
    assert_eq!((orbital.f1, orbital.boundary_accuracy), (1.0, 1.0));
    assert_eq!(orbital.mae_handovers_per_window, 0.0);
    assert!(mirror.f1 < orbital.f1, "{mirror:?}");
    assert!(mirror.boundary_accuracy < 1.0);
    assert_eq!(hybrid.f1, 1.0, "{hybrid:?}");
    // Starlink hands over at most once per slot boundary: 8 per window (reference C1).
    assert!(
        (1.0..=8.0).contains(&orbital.mean_true_handovers),
        "{orbital:?}"
    );
    for w in &report.series {
        assert!(w.truth <= 8 && w.orbital == w.truth, "{w:?}");
    }
    let ids = report.identification.last().unwrap();
    assert_eq!(ids.location, OVERALL);
    assert_eq!(ids.forecasts, 10);
    assert!(ids.accuracy() >= 0.9 && ids.coverage() >= 0.9, "{ids:?}");

    let table = report.table();
    for needle in [
        "mirror", "orbital", "hybrid", "kanazawa", "brisbane", "all", "F1",
    ] {
        assert!(table.contains(needle), "{table}");
    }
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["rows"][0]["predictor"], "mirror");
    assert_eq!(json["series"].as_array().unwrap().len(), 10);
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

#[test]
fn on_a_perturbed_catalogue_the_hybrid_forecasts_at_least_as_well_as_the_orbital_predictor() {
    let config = small(
        8,
        vec![
            Location::new("kanazawa", 36.56, 136.65),
            Location::new("louvain", 50.67, 4.61),
        ],
    );
    hybrid_at_least_as_good_when_perturbed(config);
}

#[test]
fn on_the_real_may_2025_catalogue_perturbed_the_hybrid_is_at_least_as_good_too() {
    let Some(catalogue) = may_2025() else { return };
    let mut config = small(
        8,
        vec![
            Location::new("brisbane", -27.47, 153.03),
            Location::new("louvain", 50.67, 4.61),
        ],
    );
    config.truth_catalogue = catalogue;
    hybrid_at_least_as_good_when_perturbed(config);
}

fn hybrid_at_least_as_good_when_perturbed(mut config: EvalConfig) {
    config.predictor_catalogue = PredictorCatalogue::Perturbed(Perturbation {
        along_track_sigma_km: 20.0,
        cross_track_sigma_km: 2.0,
        seed: 1,
    });
    let report = evaluate(&config, |_, _| {}).unwrap();
    let orbital = report.overall(Predictor::Orbital).unwrap();
    let hybrid = report.overall(Predictor::Hybrid).unwrap();
    let mirror = report.overall(Predictor::Mirror).unwrap();
    assert!(
        orbital.f1 < 1.0,
        "the perturbation must matter: {orbital:?}"
    );
    assert!(hybrid.f1 >= orbital.f1, "{hybrid:?} vs {orbital:?}");
    assert!(
        hybrid.first_boundary_accuracy >= orbital.first_boundary_accuracy,
        "{hybrid:?} vs {orbital:?}"
    );
    assert!(orbital.f1 > mirror.f1, "{orbital:?} vs {mirror:?}");
    let ids = report.identification.last().unwrap();
    assert!(ids.accuracy() >= 0.9, "{ids:?}");
    assert!(report.scenario.predictor_catalogue.contains("perturbed"));
}

#[test]
fn a_truth_policy_the_predictors_do_not_assume_costs_the_orbital_predictor_its_exactness() {
    let mut config = small(4, vec![Location::new("louvain", 50.67, 4.61)]);
    config.truth_policy = ServingPolicy::Starlink(StarlinkConfig {
        target_elevation_deg: 50.0,
        poleward_weight_deg: 1.5,
        keep_margin_deg: 3.0,
        ..StarlinkConfig::default()
    });
    let report = evaluate(&config, |_, _| {}).unwrap();
    let orbital = report.overall(Predictor::Orbital).unwrap();
    assert!(orbital.f1 < 1.0, "{orbital:?}");
    assert!(report.scenario.truth_policy.contains("keep margin 3"));
}

#[test]
fn the_perturbation_moves_satellites_by_about_its_sigma_and_is_reproducible() {
    let catalogue = gen1();
    let p = Perturbation::along_track(10.0, 3);
    let a = perturb(&catalogue, &p);
    let b = perturb(&catalogue, &p);
    assert_eq!(a.len(), catalogue.len());
    let at = start();
    let mut squares = 0.0;
    for (original, moved) in catalogue.iter().zip(a.iter()).take(500) {
        assert_eq!(original.norad_id(), moved.norad_id());
        let x = original.teme_position_km(at).unwrap();
        let y = moved.teme_position_km(at).unwrap();
        let z = b
            .get(moved.norad_id())
            .unwrap()
            .teme_position_km(at)
            .unwrap();
        assert_eq!(y, z);
        squares += (0..3).map(|i| (x[i] - y[i]).powi(2)).sum::<f64>();
    }
    let rms = (squares / 500.0).sqrt();
    assert!((8.0..12.0).contains(&rms), "rms displacement {rms} km");
}

#[test]
fn settings_out_of_range_are_refused_with_a_reason() {
    let no_windows = small(0, vec![Location::new("x", 0.0, 0.0)]);
    assert!(matches!(
        evaluate(&no_windows, |_, _| {}),
        Err(EvalError::Config(_))
    ));
    let nowhere = small(1, Vec::new());
    assert!(matches!(
        evaluate(&nowhere, |_, _| {}),
        Err(EvalError::Config(_))
    ));
    let off_earth = small(1, vec![Location::new("mars", 123.0, 0.0)]);
    let err = evaluate(&off_earth, |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("\"mars\""), "{err}");
    let mut bad_policy = small(1, vec![Location::new("x", 0.0, 0.0)]);
    bad_policy.predictor_policy = ServingPolicy::Starlink(StarlinkConfig {
        keep_margin_deg: -1.0,
        ..StarlinkConfig::default()
    });
    assert!(matches!(
        evaluate(&bad_policy, |_, _| {}),
        Err(EvalError::Policy {
            which: "predictor",
            ..
        })
    ));
    let mut far = small(3, vec![Location::new("x", 0.0, 0.0)]);
    far.start = DateTime::<Utc>::MAX_UTC - chrono::Duration::hours(1);
    assert!(matches!(
        evaluate(&far, |_, _| {}),
        Err(EvalError::Config(_))
    ));
    let mut empty = small(1, vec![Location::new("x", 0.0, 0.0)]);
    empty.truth_catalogue = Arc::new(Catalogue::default());
    assert!(matches!(
        evaluate(&empty, |_, _| {}),
        Err(EvalError::EmptyCatalogue(_))
    ));
}

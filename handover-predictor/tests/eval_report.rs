//! The full evaluation: mirror vs orbital vs hybrid on the generated starlink-gen1 catalogue and
//! on the real May-2025 catalogue, at the three sites of reference C5, 30+ windows each, in four
//! scenarios (same catalogue, perturbed catalogue, a truth policy weighted differently, the delay
//! policy as truth).
//!
//! Ignored by default (about 40 s in release mode once built, 20 s per catalogue):
//!
//! ```text
//! cargo test --release -p handover-predictor --test eval_report -- --ignored --nocapture
//! ```

#![cfg(feature = "dish")]

use chrono::{TimeZone, Utc};
use handover_predictor::eval::{EvalConfig, Perturbation, Predictor, PredictorCatalogue, evaluate};
use handover_predictor::orbit::{Catalogue, DelayConfig, ServingPolicy, StarlinkConfig, walker};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

fn gen1() -> Arc<Catalogue> {
    let text = walker::generate(&walker::starlink_gen1(), walker::shipped_epoch()).unwrap();
    Arc::new(Catalogue::parse(&text, "traces/tle/starlink-gen1.tle (generated)").unwrap())
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

/// The scenarios: (name, predictor catalogue, truth policy).
fn scenarios() -> Vec<(&'static str, PredictorCatalogue, ServingPolicy)> {
    let reweighted = ServingPolicy::Starlink(StarlinkConfig {
        target_elevation_deg: 50.0,
        poleward_weight_deg: 1.5,
        keep_margin_deg: 3.0,
        ..StarlinkConfig::default()
    });
    vec![
        (
            "same catalogue, same policy",
            PredictorCatalogue::SameAsTruth,
            ServingPolicy::default(),
        ),
        (
            "perturbed catalogue (5 km along, 1 km cross)",
            PredictorCatalogue::Perturbed(Perturbation {
                along_track_sigma_km: 5.0,
                cross_track_sigma_km: 1.0,
                seed: 1,
            }),
            ServingPolicy::default(),
        ),
        (
            "perturbed catalogue (20 km along, 2 km cross)",
            PredictorCatalogue::Perturbed(Perturbation {
                along_track_sigma_km: 20.0,
                cross_track_sigma_km: 2.0,
                seed: 1,
            }),
            ServingPolicy::default(),
        ),
        (
            "truth re-weighted (target 50, pole-ward 1.5, keep 3.0)",
            PredictorCatalogue::SameAsTruth,
            reweighted,
        ),
        (
            "truth = delay policy",
            PredictorCatalogue::SameAsTruth,
            ServingPolicy::Delay(DelayConfig::default()),
        ),
    ]
}

fn run(catalogue: Arc<Catalogue>) {
    let start = Utc.with_ymd_and_hms(2025, 5, 12, 6, 0, 5).unwrap();
    for (name, predictor_catalogue, truth_policy) in scenarios() {
        let mut config = EvalConfig::new(catalogue.clone(), start, Instant::now());
        config.windows = 40;
        config.predictor_catalogue = predictor_catalogue;
        config.truth_policy = truth_policy;
        let began = Instant::now();
        let report = evaluate(&config, |_, _| {}).unwrap();
        println!(
            "=== {name} ({:.1} s)\n{}",
            began.elapsed().as_secs_f64(),
            report.table()
        );
        for p in Predictor::ALL {
            let row = report.overall(p).unwrap();
            assert!((0.0..=1.0).contains(&row.f1));
        }
    }
}

#[test]
#[ignore = "the full evaluation: about 20 s in release mode"]
fn evaluation_on_the_generated_starlink_gen1_catalogue() {
    run(gen1());
}

#[test]
#[ignore = "the full evaluation: about 20 s in release mode"]
fn evaluation_on_the_real_may_2025_catalogue() {
    let Some(catalogue) = may_2025() else { return };
    run(catalogue);
}

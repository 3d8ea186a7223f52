//! One orbital forecast (120 s of serving satellites -> `Forecast`) from a full Starlink
//! catalogue, prefiltered against the exhaustive baseline that propagates every satellite at every
//! instant. The goal: under 100 ms per forecast on one core for 8,000 satellites.
//!
//! Uses the real May-2025 snapshot (7,999 satellites) from `../shared/data/tle/` when present,
//! else the shipped `traces/tle/starlink-gen1.tle` (4,408).

#![allow(missing_docs)] // criterion_group!/criterion_main! generate undocumented functions

use chrono::{TimeZone, Utc};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use handover_predictor::HandoverSource;
use handover_predictor::orbit::{Catalogue, DelayConfig, Observer, Search, ServingPolicy};
use handover_predictor::predict::Orbital;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn catalogue() -> Arc<Catalogue> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let real = root.join("../../shared/data/tle/starryNet/Starlink_May_2025.tle");
    let path = if real.is_file() {
        real
    } else {
        eprintln!(
            "{} is absent; using the shipped generation-1 catalogue",
            real.display()
        );
        root.join("../traces/tle/starlink-gen1.tle")
    };
    let catalogue = Catalogue::load(&path).expect("catalogue loads");
    eprintln!("{}: {} satellites", path.display(), catalogue.len());
    Arc::new(catalogue)
}

fn forecast(c: &mut Criterion) {
    let catalogue = catalogue();
    let observer = Observer::new(50.67, 4.61, 100.0).expect("valid observer");
    let epoch = Instant::now();
    let utc = Utc
        .with_ymd_and_hms(2025, 5, 12, 12, 0, 0)
        .single()
        .expect("valid date");
    let mut group = c.benchmark_group("orbital_forecast");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for (policy_name, policy) in [
        ("starlink", ServingPolicy::default()),
        ("delay", ServingPolicy::Delay(DelayConfig::default())),
    ] {
        for (search_name, search) in [
            ("prefiltered", Search::Prefiltered),
            ("exhaustive", Search::Exhaustive),
        ] {
            let mut orbital =
                Orbital::new(catalogue.clone(), observer, policy, epoch, utc).with_search(search);
            let mut k = 0u64;
            group.bench_function(BenchmarkId::new(policy_name, search_name), |b| {
                b.iter(|| {
                    // A new decision instant each time (a new window to propagate).
                    k = (k + 37) % 3600;
                    orbital
                        .forecast(epoch + Duration::from_secs(k))
                        .expect("forecast")
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, forecast);
criterion_main!(benches);

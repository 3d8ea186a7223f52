//! Shared harness for the scenario tests: paths, the shared-data guard, and the figures of
//! realised links.

#![allow(dead_code)]

use rtc_client::scenario::figures::{self, BoundaryChange, LinkSecond};
use rtc_client::scenario::{Realization, Scenario, ScenarioPaths, probe_rtt};
use std::time::Duration;

/// The shipped scenarios, by file stem.
pub const SHIPPED: [&str; 8] = [
    "lagos-trace",
    "leocc-trace",
    "sparse-leo",
    "starlink",
    "starrynet-sparse",
    "terrestrial-5g",
    "terrestrial-broadband",
    "terrestrial-lte",
];

/// Scenarios that replay `../shared/data` files.
pub const NEEDS_DATA: [&str; 2] = ["lagos-trace", "leocc-trace"];

/// The workspace's paths.
pub fn paths() -> ScenarioPaths {
    ScenarioPaths::workspace()
}

/// The shared data directory, or `None` after printing why the test is skipped.
pub fn shared_data(test: &str) -> Option<std::path::PathBuf> {
    let data = paths().data;
    if data.is_dir() {
        Some(data)
    } else {
        eprintln!(
            "SKIPPED {test}: the shared data directory {} is absent (it holds the real traces \
             the scenarios are calibrated to; see ../shared/data/README.md)",
            data.display()
        );
        None
    }
}

/// Loads a shipped scenario, panicking with the error.
pub fn load(name: &str) -> Scenario {
    Scenario::load(name, &paths()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Realises `name` for `seed` over `seconds`.
pub fn realize(name: &str, seed: u64, seconds: u64) -> Realization {
    load(name)
        .realize(seed, Duration::from_secs(seconds))
        .unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"))
}

/// The forward and reverse links' per-second processes.
pub fn seconds(r: &Realization) -> (Vec<LinkSecond>, Vec<LinkSecond>) {
    let n = r.duration.as_secs();
    (
        figures::link_seconds(&r.forward_link().unwrap(), n),
        figures::link_seconds(&r.reverse_link().unwrap(), n),
    )
}

/// Pings through the realised links every 200 ms (the mmsys24 spacing is 0.15-0.22 s), as
/// `(sent in a boundary second, RTT)` pairs for [`figures::boundary_change`].
pub fn pings(r: &Realization) -> Vec<(bool, Option<f64>)> {
    let boundaries = r.boundary_seconds();
    probe_rtt(r, Duration::from_millis(200), 64)
        .unwrap()
        .into_iter()
        .map(|p| {
            (
                boundaries.binary_search(&(p.sent_ms / 1000)).is_ok(),
                p.rtt_ms,
            )
        })
        .collect()
}

/// The boundary-vs-other RTT change of several realisations pooled.
pub fn pooled_boundary_change(rs: &[Realization]) -> BoundaryChange {
    // Pool by concatenating with a lost ping between calls, so no pair spans two calls.
    let mut all = Vec::new();
    for r in rs {
        all.extend(pings(r));
        all.push((false, None));
    }
    figures::boundary_change(all).expect("pings in both groups")
}

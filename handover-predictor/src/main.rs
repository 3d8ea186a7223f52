//! `handover-predictor`: the command-line face of the handover-predictor crate.
//!
//! It forecasts Starlink satellite handovers from TLE orbits, detects them live from a Starlink
//! dish's obstruction map, runs a simulated dish driven by SGP4 orbits, generates the shipped
//! Walker-constellation catalogues, evaluates the predictors against the truth, and renders
//! obstruction maps. Every subcommand has `--json` for machine-readable output on stdout; logs go
//! to stderr (`RUST_LOG` or `-v`/`-q` choose how much).
//!
//! # Examples
//!
//! ```text
//! # The next 120 s of handovers over Louvain-la-Neuve, from the shipped catalogue, as a picture:
//! handover-predictor forecast --tle traces/tle/starlink-gen1.tle --lat 50.67 --lon 4.61 \
//!     --at 2025-05-12T12:00:00Z --plot forecast.png
//!
//! # A simulated dish whose clock runs 20x faster, and 10 dish minutes of detection against it
//! # (30 s of real time), with the simulator's truth written for comparison:
//! handover-predictor dish-sim --tle traces/tle/starlink-gen1.tle --lat 50.67 --lon 4.61 \
//!     --time-scale 20 --truth-out truth.jsonl &
//! handover-predictor detect --dish 127.0.0.1:9200 --time-scale 20 --duration 10m --out det.jsonl
//!
//! # Rewrite the shipped catalogues, and evaluate the predictors at the default sites:
//! handover-predictor tle-gen --all --dir traces/tle
//! handover-predictor eval --windows 20 --plot eval.png
//!
//! # Render the dish's obstruction map with 30 s of detected track:
//! handover-predictor render-map --dish 192.168.100.1:9200 --track --seconds 30 --out map.png
//! ```

#![forbid(unsafe_code)]

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}

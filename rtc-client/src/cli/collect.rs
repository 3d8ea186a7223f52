//! `rtc-client collect`: the paper's data-collection run. Calls under the random policy (one
//! queue limit drawn per decision interval; with `--explore-actions` also one action profile)
//! until the requested hours of call time are filled,
//! every call's telemetry kept for training, with a manifest that names each file and its
//! sha256 so a training run can say exactly what it learnt from.

use super::args::{RunArgs, policy_name};
use anyhow::{Result, bail};
use clap::Args;
use rtc_client::call::{PolicyChoice, SenderNames};
use rtc_client::experiment::batch::{display_path, load_scenarios, prepare_out, senders};
use rtc_client::experiment::run::CellCall;
use serde::Serialize;
use std::io::Write;
use std::time::Instant;

/// Most calls one collection may plan.
const MAX_CALLS: f64 = 100_000.0;

/// `rtc-client collect` arguments.
#[derive(Debug, Args)]
pub struct CollectArgs {
    /// Hours of call time IN TOTAL over all scenarios (the paper collected 65 h in total):
    /// ceil(HOURS x 3600 / DURATION) calls, dealt to the scenarios in turn, so each gets an equal
    /// share (the first ones one more when it does not divide). Fractions are fine (0.5).
    #[arg(long, value_name = "HOURS", value_parser = parse_hours)]
    hours: f64,
    /// Explore the handover-timed actions too: each interval draws one of the 15 limits AND one
    /// profile of the action menu (none, guard, guard+boost, hold160+guard+boost,
    /// hold180+guard+boost) uniformly, seeded from the call seed (policy `random-joint`); the
    /// telemetry records the profile and what the call had measured (`profile`, `inputs`).
    /// Training data for a joint policy (models/README.md, "The joint model").
    #[arg(long)]
    explore_actions: bool,
    #[command(flatten)]
    run: RunArgs,
}

/// Parses `--hours`: a positive, finite number.
fn parse_hours(text: &str) -> Result<f64, String> {
    let hours: f64 = text
        .parse()
        .map_err(|_| format!("--hours needs a number of hours, e.g. 60 or 0.5, got {text:?}"))?;
    if !(hours.is_finite() && hours > 0.0) {
        return Err(format!("--hours must be more than 0, got {text}"));
    }
    Ok(hours)
}

/// One telemetry file in the manifest.
#[derive(Debug, Serialize)]
struct ManifestFile {
    /// Relative to the output directory, with forward slashes.
    path: String,
    scenario: String,
    seed: u64,
    intervals: usize,
    bytes: usize,
    sha256: String,
}

/// Per scenario: its calls and seeds.
#[derive(Debug, Serialize)]
struct ManifestScenario {
    name: String,
    file: String,
    calls: usize,
    seeds: Vec<u64>,
    /// The sender of its calls (flags over the file's `[sender]` table over the defaults).
    sender: SenderNames,
}

/// DIR/manifest.json: what was collected. No wall-clock figure, so the same arguments give the
/// same manifest.
#[derive(Debug, Serialize)]
struct Manifest {
    schema: &'static str,
    policy: String,
    handover: String,
    hours_requested: f64,
    duration_s: f64,
    interval_s: f64,
    seed_base: u64,
    calls: usize,
    intervals: usize,
    simulated_hours: f64,
    scenarios: Vec<ManifestScenario>,
    files: Vec<ManifestFile>,
}

/// Runs `rtc-client collect`; `epoch` is the instant every simulated call's clock starts at.
pub fn run(args: CollectArgs, epoch: Instant) -> Result<()> {
    let started = Instant::now();
    let run = &args.run;
    let wanted = (args.hours * 3600.0 / run.duration.as_secs_f64()).ceil();
    if wanted > MAX_CALLS {
        bail!(
            "--hours {} at --duration {} s plans {wanted} calls; at most {MAX_CALLS} per run",
            args.hours,
            run.duration.as_secs()
        );
    }
    let total = wanted as usize;
    let scenarios = load_scenarios(&run.scenarios, &run.paths.resolve())?;
    prepare_out(&run.out, run.force, &["telemetry", "manifest.json"])?;
    // Call j goes to scenario j mod S with seed BASE + j div S: every scenario's seeds are
    // consecutive from BASE.
    let count = scenarios.len();
    let mut specs: Vec<CellCall> = (0..total)
        .map(|j| CellCall {
            scenario: j % count,
            policy: 0,
            seed: run.seed.wrapping_add((j / count) as u64),
        })
        .collect();
    specs.sort_by_key(|s| (s.scenario, s.seed));
    let policy = if args.explore_actions {
        PolicyChoice::RandomJoint
    } else {
        PolicyChoice::Random
    };
    let finished = run.run_calls(&scenarios, std::slice::from_ref(&policy), &specs, epoch)?;

    let intervals: usize = finished.iter().map(|f| f.intervals).sum();
    let manifest = Manifest {
        schema: "leopace.collect.v1",
        policy: policy_name(&policy),
        handover: run.handover_name(),
        hours_requested: args.hours,
        duration_s: run.duration.as_secs_f64(),
        interval_s: run.interval.as_secs_f64(),
        seed_base: run.seed,
        calls: finished.len(),
        intervals,
        simulated_hours: finished.len() as f64 * run.duration.as_secs_f64() / 3600.0,
        scenarios: scenarios
            .iter()
            .zip(senders(&scenarios, &run.sender.overrides())?)
            .enumerate()
            .map(|(i, (s, sender))| {
                let seeds: Vec<u64> = specs
                    .iter()
                    .filter(|c| c.scenario == i)
                    .map(|c| c.seed)
                    .collect();
                ManifestScenario {
                    name: s.name().to_owned(),
                    file: s.origin.clone(),
                    calls: seeds.len(),
                    seeds,
                    sender,
                }
            })
            .collect(),
        files: specs
            .iter()
            .zip(&finished)
            .map(|(spec, f)| ManifestFile {
                path: display_path(&f.file),
                scenario: scenarios[spec.scenario].name().to_owned(),
                seed: f.seed,
                intervals: f.intervals,
                bytes: f.bytes,
                sha256: f.sha256.clone(),
            })
            .collect(),
    };
    let json = serde_json::to_string_pretty(&manifest)? + "\n";
    let path = run.out.join("manifest.json");
    std::fs::write(&path, &json)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;

    let wall_s = started.elapsed().as_secs_f64();
    let mut stdout = std::io::stdout().lock();
    if run.json {
        serde_json::to_writer_pretty(
            &mut stdout,
            &serde_json::json!({
                "manifest": display_path(&path),
                "calls": manifest.calls,
                "intervals": manifest.intervals,
                "simulated_hours": manifest.simulated_hours,
                "wall_s": wall_s,
            }),
        )?;
        writeln!(stdout)?;
    } else {
        writeln!(
            stdout,
            "collected {} calls, {} intervals, {:.2} simulated hours in {:.1} s wall time; \
             manifest {}",
            manifest.calls,
            manifest.intervals,
            manifest.simulated_hours,
            wall_s,
            path.display()
        )?;
    }
    stdout.flush()?;
    Ok(())
}

//! `rtc-client collect`: the paper's data-collection run. Calls under the random policy (one
//! queue limit drawn per decision interval; with `--explore-actions` also one action profile)
//! until the requested hours of call time are filled,
//! every call's telemetry kept for training, with a manifest that names each file and its
//! sha256 so a training run can say exactly what it learnt from.

use super::args::{RunArgs, policy_name};
use super::sweep::{self, Done, Sweep, command_args};
use anyhow::{Result, bail};
use clap::Args;
use rtc_client::call::{PolicyChoice, SenderNames};
use rtc_client::durable;
use rtc_client::experiment::batch::{FinishedCall, display_path, load_scenarios, senders};
use rtc_client::experiment::ledger::CellDone;
use rtc_client::experiment::merge::Source;
use rtc_client::experiment::run::CellCall;
use rtc_client::scenario::Scenario;
use serde::Serialize;
use serde_json::{Value, json};
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
    pub(super) run: RunArgs,
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

/// What the output directory holds besides the ledger (for `--force`).
const OWNED: [&str; 2] = ["telemetry", "manifest.json"];

/// The collection's plan, resolved from its arguments.
struct Setup {
    scenarios: Vec<Scenario>,
    policy: PolicyChoice,
    specs: Vec<CellCall>,
    config: Value,
}

impl Setup {
    /// Checks the arguments, loads the scenarios and deals the calls: call j goes to scenario
    /// j mod S with seed BASE + j div S, so every scenario's seeds are consecutive from BASE;
    /// the plan is ordered by scenario, then seed.
    fn new(args: &CollectArgs) -> Result<Self> {
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
        let mut config = run.config(&scenarios)?;
        config.insert("command".into(), json!("collect"));
        config.insert("policy".into(), json!(policy.name()));
        config.insert("hours".into(), json!(args.hours));
        config.insert("calls".into(), json!(total));
        Ok(Self {
            scenarios,
            policy,
            specs,
            config: Value::Object(config),
        })
    }

    /// The plan as a sweep, with the arguments `merge` rebuilds it from.
    fn sweep(&self, argv: Vec<String>) -> Sweep<'_> {
        Sweep {
            command: "collect",
            args: argv,
            config: self.config.clone(),
            scenarios: &self.scenarios,
            policies: std::slice::from_ref(&self.policy),
            specs: &self.specs,
            owned: &OWNED,
        }
    }
}

/// Runs `rtc-client collect`; `epoch` is the instant every simulated call's clock starts at.
pub fn run(args: CollectArgs, epoch: Instant) -> Result<()> {
    let started = Instant::now();
    let setup = Setup::new(&args)?;
    let sweep = setup.sweep(command_args("collect"));
    let done = sweep::execute(&args.run, &sweep, epoch)?;
    if !done.is_whole() {
        return done.close_part(&args.run, started);
    }
    finish(&args, &setup, done, started)
}

/// Writes the merged shards into `args.run.out` (`rtc-client merge`): the shards' calls, then
/// manifest.json exactly as [`run`] writes it.
pub fn merged(
    args: CollectArgs,
    argv: Vec<String>,
    sources: &[Source],
    calls: Vec<(usize, CellDone)>,
) -> Result<()> {
    let started = Instant::now();
    let setup = Setup::new(&args)?;
    let sweep = setup.sweep(argv);
    let done = sweep::gather(&args.run, &sweep, sources, calls)?;
    finish(&args, &setup, done, started)
}

/// Writes manifest.json from the whole plan's calls, closes the directory, and prints the
/// summary line (or JSON).
fn finish(args: &CollectArgs, setup: &Setup, done: Done, started: Instant) -> Result<()> {
    let run = &args.run;
    let finished = done.calls();
    let manifest = manifest(args, setup, &finished)?;
    let json = serde_json::to_string_pretty(&manifest)? + "\n";
    let path = run.out.join("manifest.json");
    durable::write_atomic(&path, json.as_bytes())
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    done.close(run)?;

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

/// manifest.json's content for the plan's calls (in plan order).
fn manifest(args: &CollectArgs, setup: &Setup, finished: &[FinishedCall]) -> Result<Manifest> {
    let run = &args.run;
    let scenarios = &setup.scenarios;
    let specs = &setup.specs;
    Ok(Manifest {
        schema: "leopace.collect.v1",
        policy: policy_name(&setup.policy),
        handover: run.handover_name(),
        hours_requested: args.hours,
        duration_s: run.duration.as_secs_f64(),
        interval_s: run.interval.as_secs_f64(),
        seed_base: run.seed,
        calls: finished.len(),
        intervals: finished.iter().map(|f| f.intervals).sum(),
        simulated_hours: finished.len() as f64 * run.duration.as_secs_f64() / 3600.0,
        scenarios: scenarios
            .iter()
            .zip(senders(scenarios, &run.sender.overrides())?)
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
            .zip(finished)
            .map(|(spec, f)| ManifestFile {
                path: display_path(&f.file),
                scenario: scenarios[spec.scenario].name().to_owned(),
                seed: f.seed,
                intervals: f.intervals,
                bytes: f.bytes,
                sha256: f.sha256.clone(),
            })
            .collect(),
    })
}

//! `rtc-client experiment`: an A/B comparison of queue policies over many simulated calls.

use super::args::{RunArgs, parse_policy, policy_name};
use super::sweep::{self, Done, Sweep, command_args};
use anyhow::{Context, Result, bail};
use clap::Args;
use rtc_client::call::PolicyChoice;
use rtc_client::durable;
use rtc_client::experiment::batch::{load_scenarios, senders};
use rtc_client::experiment::ledger::CellDone;
use rtc_client::experiment::merge::Source;
use rtc_client::experiment::plots;
use rtc_client::experiment::report::{CallOutcome, Plan, Report};
use rtc_client::experiment::run::CellCall;
use rtc_client::scenario::Scenario;
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// Most calls one run may plan: beyond this a typo (`--calls 50000`) would run for days.
const MAX_CALLS: usize = 100_000;

/// `rtc-client experiment` arguments.
#[derive(Debug, Args)]
pub struct ExperimentArgs {
    /// Policies, comma-separated, as `sim --policy`: default, random, heuristic, fixed:<ms>,
    /// gated:<ms>[/<ms>], learned:<card>, timed[:<actions>|:<file.toml>][@<policy>], path-arm:<profile>@<limit> (the
    /// path-aware menu's arms, for `policy-train counterfactual`). With `default` among them, the
    /// others are compared with it.
    #[arg(
        long,
        value_name = "POLICY,...",
        value_delimiter = ',',
        default_value = "default,heuristic,random",
        value_parser = parse_policy
    )]
    policies: Vec<PolicyChoice>,
    /// Calls per scenario and policy (seeds BASE .. BASE+N-1, the same for every policy).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = parse_calls)]
    calls: u64,
    #[command(flatten)]
    pub(super) run: RunArgs,
}

/// What the output directory holds besides the ledger (for `--force`).
const OWNED: [&str; 4] = ["telemetry", "plots", "report.json", "report.md"];

/// The experiment's plan, resolved from its arguments.
struct Setup {
    scenarios: Vec<Scenario>,
    names: Vec<String>,
    specs: Vec<CellCall>,
    config: Value,
}

impl Setup {
    /// Checks the arguments, loads the scenarios and lays out every call (scenario-major, then
    /// policy, then seed).
    fn new(args: &ExperimentArgs) -> Result<Self> {
        let names: Vec<String> = args.policies.iter().map(policy_name).collect();
        for (i, name) in names.iter().enumerate() {
            if names[..i].contains(name) {
                bail!("--policies names {name} twice");
            }
        }
        let calls = args.calls as usize;
        let planned = args.run.scenarios.len() * names.len() * calls;
        if planned > MAX_CALLS {
            bail!("the experiment plans {planned} calls; at most {MAX_CALLS} per run");
        }
        let run = &args.run;
        let scenarios = load_scenarios(&run.scenarios, &run.paths.resolve())?;
        let mut specs = Vec::with_capacity(planned);
        for scenario in 0..scenarios.len() {
            for policy in 0..names.len() {
                for i in 0..calls as u64 {
                    specs.push(CellCall {
                        scenario,
                        policy,
                        seed: run.seed.wrapping_add(i),
                    });
                }
            }
        }
        let mut config = run.config(&scenarios)?;
        config.insert("command".into(), json!("experiment"));
        config.insert("calls".into(), json!(calls));
        let policies: Vec<Value> = args
            .policies
            .iter()
            .map(|p| json!({"name": p.name(), "actions": p.actions().map(|a| format!("{a:?}"))}))
            .collect();
        config.insert("policies".into(), Value::Array(policies));
        Ok(Self {
            scenarios,
            names,
            specs,
            config: Value::Object(config),
        })
    }

    /// The plan as a sweep, with the arguments `merge` rebuilds it from.
    fn sweep<'a>(&'a self, args: &'a ExperimentArgs, argv: Vec<String>) -> Sweep<'a> {
        Sweep {
            command: "experiment",
            args: argv,
            config: self.config.clone(),
            scenarios: &self.scenarios,
            policies: &args.policies,
            specs: &self.specs,
            owned: &OWNED,
        }
    }
}

/// Runs `rtc-client experiment`; `epoch` is the instant every simulated call's clock starts at.
pub fn run(args: ExperimentArgs, epoch: Instant) -> Result<()> {
    let started = Instant::now();
    let setup = Setup::new(&args)?;
    let sweep = setup.sweep(&args, command_args("experiment"));
    let done = sweep::execute(&args.run, &sweep, epoch)?;
    if !done.is_whole() {
        return done.close_part(&args.run, started);
    }
    finish(&args, &setup, done, started)
}

/// Writes the merged shards into `args.run.out` (`rtc-client merge`): the shards' calls, then
/// the report exactly as [`run`] writes it.
pub fn merged(
    args: ExperimentArgs,
    argv: Vec<String>,
    sources: &[Source],
    calls: Vec<(usize, CellDone)>,
) -> Result<()> {
    let started = Instant::now();
    let setup = Setup::new(&args)?;
    let sweep = setup.sweep(&args, argv);
    let done = sweep::gather(&args.run, &sweep, sources, calls)?;
    finish(&args, &setup, done, started)
}

/// Writes report.json, report.md and the plots from the whole plan's calls, closes the
/// directory, and prints the markdown table (or report.json).
fn finish(args: &ExperimentArgs, setup: &Setup, done: Done, started: Instant) -> Result<()> {
    let run = &args.run;
    let finished = done.calls();
    let outcomes: Vec<CallOutcome> = finished
        .iter()
        .map(|f| CallOutcome {
            seed: f.seed,
            qoe: f.qoe,
            fec_share_pct: f.fec_share_pct,
            intervals: f.intervals,
        })
        .collect();
    let scenarios = &setup.scenarios;
    let plan = Plan {
        scenarios: scenarios.iter().map(|s| s.name().to_owned()).collect(),
        policies: setup.names.clone(),
        calls: args.calls as usize,
        seed_base: run.seed,
        duration_s: run.duration.as_secs_f64(),
        interval_s: run.interval.as_secs_f64(),
        handover: run.handover_name(),
        senders: senders(scenarios, &run.sender.overrides())?,
    };
    let report = Report::build(plan, &outcomes)?;
    let json = serde_json::to_string_pretty(&report)? + "\n";
    let markdown = report.markdown();
    let write = |name: &str, text: &str| {
        let path = run.out.join(name);
        durable::write_atomic(&path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
    };
    write("report.json", &json)?;
    write("report.md", &markdown)?;
    let figures = draw_plots(&report, &run.out)?;
    done.close(run)?;
    tracing::info!(
        out = %run.out.display(),
        calls = finished.len(),
        plots = figures,
        wall_s = format!("{:.1}", started.elapsed().as_secs_f64()),
        "experiment done: report.md, report.json, telemetry/, plots/"
    );

    let mut stdout = std::io::stdout().lock();
    if run.json {
        stdout.write_all(json.as_bytes())?;
    } else {
        stdout.write_all(markdown.as_bytes())?;
    }
    stdout.flush()?;
    Ok(())
}

/// Draws the plots into a hidden directory beside `out/plots` and renames it into place, so a
/// run killed while drawing leaves no half-drawn plots; returns how many.
fn draw_plots(report: &Report, out: &Path) -> Result<usize> {
    let plot_dir = out.join("plots");
    let partial = durable::partial_path(&plot_dir);
    if partial.exists() {
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("cannot remove {}", partial.display()))?;
    }
    std::fs::create_dir_all(&partial)
        .with_context(|| format!("cannot create {}", partial.display()))?;
    let figures = plots::draw_all(report, &partial)?;
    if plot_dir.exists() {
        std::fs::remove_dir_all(&plot_dir)
            .with_context(|| format!("cannot replace {}", plot_dir.display()))?;
    }
    std::fs::rename(&partial, &plot_dir)
        .with_context(|| format!("cannot move the plots into {}", plot_dir.display()))?;
    durable::sync_dir(out).with_context(|| format!("cannot sync {}", out.display()))?;
    Ok(figures.len())
}

/// `--calls`: at least one call per scenario and policy.
fn parse_calls(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("at least 1 call per scenario and policy is needed".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("a whole number of calls, got {text:?}")),
    }
}

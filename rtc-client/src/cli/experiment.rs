//! `rtc-client experiment`: an A/B comparison of queue policies over many simulated calls.

use super::args::{RunArgs, parse_policy, policy_name};
use anyhow::{Context, Result, bail};
use clap::Args;
use rtc_client::call::PolicyChoice;
use rtc_client::experiment::batch::{load_scenarios, prepare_out, senders};
use rtc_client::experiment::plots;
use rtc_client::experiment::report::{CallOutcome, Plan, Report};
use rtc_client::experiment::run::CellCall;
use std::io::Write;
use std::time::Instant;

/// Most calls one run may plan: beyond this a typo (`--calls 50000`) would run for days.
const MAX_CALLS: usize = 100_000;

/// `rtc-client experiment` arguments.
#[derive(Debug, Args)]
pub struct ExperimentArgs {
    /// Policies, comma-separated, as `sim --policy`: default, random, heuristic, fixed:<ms>,
    /// learned:<card>, timed[:<actions>|:<file.toml>][@<policy>]. With `default` among them, the others are
    /// compared with it.
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
    run: RunArgs,
}

/// Runs `rtc-client experiment`; `epoch` is the instant every simulated call's clock starts at.
pub fn run(args: ExperimentArgs, epoch: Instant) -> Result<()> {
    let started = Instant::now();
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
    let scenarios = load_scenarios(&args.run.scenarios, &args.run.paths.resolve())?;
    let run = &args.run;
    prepare_out(
        &run.out,
        run.force,
        &["telemetry", "plots", "report.json", "report.md"],
    )?;

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
    let finished = run.run_calls(&scenarios, &args.policies, &specs, epoch)?;
    let outcomes: Vec<CallOutcome> = finished
        .iter()
        .map(|f| CallOutcome {
            seed: f.seed,
            qoe: f.qoe,
            fec_share_pct: f.fec_share_pct,
            intervals: f.intervals,
        })
        .collect();
    let plan = Plan {
        scenarios: scenarios.iter().map(|s| s.name().to_owned()).collect(),
        policies: names,
        calls,
        seed_base: run.seed,
        duration_s: run.duration.as_secs_f64(),
        interval_s: run.interval.as_secs_f64(),
        handover: run.handover_name(),
        senders: senders(&scenarios, &run.sender.overrides())?,
    };
    let report = Report::build(plan, &outcomes)?;
    let json = serde_json::to_string_pretty(&report)? + "\n";
    let markdown = report.markdown();
    let write = |name: &str, text: &str| {
        let path = run.out.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    };
    write("report.json", &json)?;
    write("report.md", &markdown)?;
    let plot_dir = run.out.join("plots");
    std::fs::create_dir_all(&plot_dir)
        .with_context(|| format!("cannot create {}", plot_dir.display()))?;
    let figures = plots::draw_all(&report, &plot_dir)?;
    tracing::info!(
        out = %run.out.display(),
        calls = finished.len(),
        plots = figures.len(),
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

/// `--calls`: at least one call per scenario and policy.
fn parse_calls(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("at least 1 call per scenario and policy is needed".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("a whole number of calls, got {text:?}")),
    }
}

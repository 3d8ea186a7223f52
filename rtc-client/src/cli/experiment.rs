//! `rtc-client experiment`: an A/B comparison of queue policies over many simulated calls, and
//! the plumbing `rtc-client collect` shares with it (output directory, scenarios, the parallel
//! run with its progress bar and telemetry files).

use super::PathArgs;
use super::link::parse_duration;
use super::sim::{HandoverArg, SenderArgs, parse_interval, parse_policy, policy_name};
use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pacer::telemetry::QoeRecord;
use rtc_client::call::{PolicyChoice, SenderNames, SenderOptions};
use rtc_client::experiment::plots;
use rtc_client::experiment::report::{CallOutcome, Plan, Report};
use rtc_client::experiment::run::{
    CallSettings, CallSpec, parallel_map, simulate, telemetry_bytes,
};
use rtc_client::experiment::telemetry_path;
use rtc_client::scenario::Scenario;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Most calls one run may plan: beyond this a typo (`--calls 50000`) would run for days.
const MAX_CALLS: usize = 100_000;

/// What experiment and collect share: scenarios, call shape, seeds, parallelism, output.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenarios, comma-separated: shipped names or .toml paths.
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        required = true,
        num_args = 1..
    )]
    pub scenarios: Vec<String>,
    /// Call length of every call, e.g. 20s, 2m, 10m.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub duration: Duration,
    /// Seed of call 0; call i of a scenario uses seed BASE+i.
    #[arg(long, value_name = "BASE", default_value_t = 1)]
    pub seed: u64,
    /// Calls simulated at once (one per thread) [default: the number of cores]. The output is
    /// the same for every value.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub jobs: Option<u64>,
    /// Decision interval, 1 s to 120 s, e.g. 30s, 2m.
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = parse_interval)]
    pub interval: Duration,
    /// Handover forecast the policies read (as `sim --handover`).
    #[arg(long, value_enum, default_value_t = HandoverArg::Oracle)]
    pub handover: HandoverArg,
    /// The sender of every call (as `sim`'s flags, recorded in the telemetry): each flag given
    /// beats the scenario file's `[sender]` table, which beats the default.
    #[command(flatten)]
    pub sender: SenderArgs,
    /// Output directory; it must not exist or be empty (see --force).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Write into a non-empty --out, replacing the telemetry, plots and reports a previous run
    /// left there.
    #[arg(long)]
    pub force: bool,
    /// Print JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub paths: PathArgs,
}

impl RunArgs {
    /// The worker threads to use.
    pub fn threads(&self) -> usize {
        self.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |j| j as usize,
        )
    }

    /// `--handover` as written on the command line.
    pub fn handover_name(&self) -> String {
        self.handover.choice().as_str().to_owned()
    }

    /// What every call shares.
    pub fn settings(&self) -> CallSettings {
        CallSettings {
            duration: self.duration,
            interval: self.interval,
            handover: self.handover.choice(),
            sender: self.sender.overrides(),
        }
    }
}

/// `rtc-client experiment` arguments.
#[derive(Debug, Args)]
pub struct ExperimentArgs {
    /// Policies, comma-separated, as `sim --policy`: default, random, heuristic, fixed:<ms>.
    /// With `default` among them, the others are compared with it.
    #[arg(
        long,
        value_name = "POLICY,...",
        value_delimiter = ',',
        default_value = "default,heuristic,random",
        value_parser = parse_policy
    )]
    policies: Vec<PolicyChoice>,
    /// Calls per scenario and policy (seeds BASE .. BASE+N-1, the same for every policy).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    calls: u64,
    #[command(flatten)]
    run: RunArgs,
}

/// One call's files and figures, as both commands keep them.
#[derive(Debug, Clone)]
pub struct FinishedCall {
    /// The call's seed.
    pub seed: u64,
    /// Whole-call QoE.
    pub qoe: QoeRecord,
    /// Telemetry lines.
    pub intervals: usize,
    /// The telemetry file, relative to the output directory.
    pub file: PathBuf,
    /// Its size, bytes.
    pub bytes: usize,
    /// Its sha256, hex.
    pub sha256: String,
}

/// Refuses an existing, non-empty `out` unless `force`; creates it. With `force`, removes the
/// `owned` entries a previous run wrote (and nothing else).
pub fn prepare_out(out: &Path, force: bool, owned: &[&str]) -> Result<()> {
    if out.exists() && !out.is_dir() {
        bail!("--out {} exists and is not a directory", out.display());
    }
    let non_empty = out.is_dir()
        && std::fs::read_dir(out)
            .with_context(|| format!("cannot read the output directory {}", out.display()))?
            .next()
            .is_some();
    if non_empty {
        if !force {
            bail!(
                "the output directory {} is not empty; choose another --out or give --force to \
                 replace its results",
                out.display()
            );
        }
        for name in owned {
            let path = out.join(name);
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else if path.exists() {
                std::fs::remove_file(&path)
            } else {
                Ok(())
            };
            removed.with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create the output directory {}", out.display()))
}

/// The sender of each scenario's calls, by name: `run`'s flags over the file's `[sender]` table
/// over the defaults, as every call resolves it.
pub fn senders(scenarios: &[Scenario], run: &RunArgs) -> Result<Vec<SenderNames>> {
    let cli = run.sender.overrides();
    scenarios
        .iter()
        .map(|s| Ok(SenderOptions::resolve(&s.sender_overrides()?, &cli).names()))
        .collect()
}

/// Loads the named scenarios, refusing duplicates.
pub fn load_scenarios(names: &[String], paths: &PathArgs) -> Result<Vec<Scenario>> {
    let paths = paths.resolve();
    let mut scenarios: Vec<Scenario> = Vec::with_capacity(names.len());
    for name in names {
        let scenario = Scenario::load(name.trim(), &paths)?;
        if scenarios.iter().any(|s| s.name() == scenario.name()) {
            bail!("--scenarios names {} twice", scenario.name());
        }
        scenarios.push(scenario);
    }
    if scenarios.is_empty() {
        bail!("--scenarios is empty");
    }
    Ok(scenarios)
}

/// Runs every call of `specs` on `run.jobs` threads with a progress bar, writing each call's
/// telemetry under `run.out` (see [`telemetry_path`]); the result is in `specs` order.
pub fn run_calls(
    scenarios: &[Scenario],
    policies: &[PolicyChoice],
    specs: &[CallSpec],
    run: &RunArgs,
    epoch: Instant,
) -> Result<Vec<FinishedCall>> {
    let (threads, out, settings) = (run.threads(), run.out.as_path(), run.settings());
    tracing::info!(
        calls = specs.len(),
        threads,
        duration_s = run.duration.as_secs(),
        "simulating"
    );
    let names: Vec<String> = policies.iter().map(policy_name).collect();
    let file_of = |spec: &CallSpec| {
        telemetry_path(
            scenarios[spec.scenario].name(),
            &names[spec.policy],
            spec.seed,
        )
    };
    // Directories first, so workers only write files.
    for spec in specs {
        if let Some(dir) = out.join(file_of(spec)).parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
    }
    let bar = ProgressBar::with_draw_target(Some(specs.len() as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{bar:40}] {pos}/{len} calls ({elapsed}, ETA {eta}) {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(format!("on {threads} threads"));
    bar.enable_steady_tick(Duration::from_millis(200));
    let finished = parallel_map(
        specs,
        threads,
        |_, spec| -> Result<FinishedCall> {
            let scenario = &scenarios[spec.scenario];
            let result = simulate(
                scenario,
                policies[spec.policy].clone(),
                spec.seed,
                settings,
                epoch,
            )?;
            let bytes = telemetry_bytes(scenario, spec.seed, &result)?;
            let file = file_of(spec);
            let path = out.join(&file);
            std::fs::write(&path, &bytes)
                .with_context(|| format!("cannot write the telemetry file {}", path.display()))?;
            Ok(FinishedCall {
                seed: spec.seed,
                qoe: result.qoe.to_record(),
                intervals: result.telemetry.len(),
                file,
                bytes: bytes.len(),
                sha256: hex(&Sha256::digest(&bytes)),
            })
        },
        |_| bar.inc(1),
    );
    bar.finish_and_clear();
    finished
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A path for messages: forward slashes, so reports read the same on every system.
pub fn display_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
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
    let scenarios = load_scenarios(&args.run.scenarios, &args.run.paths)?;
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
                specs.push(CallSpec {
                    scenario,
                    policy,
                    seed: run.seed.wrapping_add(i),
                });
            }
        }
    }
    let finished = run_calls(&scenarios, &args.policies, &specs, run, epoch)?;
    let outcomes: Vec<CallOutcome> = finished
        .iter()
        .map(|f| CallOutcome {
            seed: f.seed,
            qoe: f.qoe,
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
        senders: senders(&scenarios, run)?,
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

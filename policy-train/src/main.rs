//! `policy-train`: telemetry -> expert -> transformer -> ONNX -> model card (see the library).

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pacer::telemetry::IntervalRecord;
use policy_train::expert::{Expert, LabelRule, features};
use policy_train::logs::{self, LogFile, Logs};
use policy_train::train::{Dataset, Hyper, TrainReport, Trained};
use policy_train::{card, export, plot, verify};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Intervals shorter than this are left out of clustering and training: the last interval of a
/// call may be cut short, and a few seconds of video say little about a 120-s decision.
const MIN_INTERVAL_MS: u64 = 60_000;

/// Train the learned queue policy from call telemetry.
///
/// The usual run is `policy-train all --logs 'runs/train/telemetry/**/*.jsonl' --out models/`;
/// the stages can also run one by one (cluster, train, export) and `verify` checks a model as the
/// pacer loads it.
#[derive(Debug, Parser)]
#[command(name = "policy-train", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Count the logs: intervals per scenario, policy and limit; handovers per 120-s window;
    /// rejected lines with their reasons.
    #[command(
        after_help = "Example:\n  policy-train inspect --logs 'runs/train/telemetry/**/*.jsonl'"
    )]
    Inspect(InspectArgs),
    /// Build the expert: k-means over observed handover patterns (k = 2..8 reported), each cluster
    /// labelled with a limit by its mean reward 2X - F (see --label-rule). Writes OUT/expert.json.
    #[command(
        after_help = "Example:\n  policy-train cluster --logs 'runs/train/telemetry/**/*.jsonl' --k 5 --out /tmp/m"
    )]
    Cluster(ClusterArgs),
    /// Train the transformer on the expert's labels (5-fold cross-validation, then a final fit).
    /// Writes OUT/weights.ot, OUT/training.json and OUT/training-curve.png.
    #[command(
        after_help = "Example:\n  policy-train train --logs 'runs/train/telemetry/**/*.jsonl' --expert /tmp/m/expert.json --out /tmp/m"
    )]
    Train(TrainArgs),
    /// Export trained weights as ONNX with its model card (golden vectors, sha256).
    /// Writes OUT/policy.onnx and OUT/policy.json.
    #[command(after_help = "Example:\n  policy-train export --dir /tmp/m")]
    Export(ExportArgs),
    /// Load a model as the pacer does and check it: sha256, golden vectors, tract against tch on
    /// random inputs, and the all-zero forecast.
    #[command(after_help = "Example:\n  policy-train verify --model models/policy.json")]
    Verify(VerifyArgs),
    /// The whole pipeline: cluster, train, export, verify, into OUT.
    #[command(
        after_help = "Example:\n  policy-train all --logs 'runs/train/telemetry/**/*.jsonl' --out models/"
    )]
    All(AllArgs),
    /// Train the path-aware policy on counterfactual labels: every call run under each of the
    /// four path-menu outputs (`rtc-client experiment --policies path-arm:...`), labelled with
    /// the least intrusive output within --margin of the best utility, the transformer trained
    /// on the forecast and the measurements at the end of the 60-s measuring window, exported
    /// with a path card, compared in a regret table with each fixed output and the paper's
    /// K-means expert, and verified.
    ///
    /// Utility of an output on a call, relative to its none@2000 arm: `-freezes_per_min -
    /// frozen_s_per_min - 10 max(0, p95 / p95_ref - 1) + W max(0, 1 - p95 / p95_ref) - 20 max(0,
    /// 0.95 - bitrate / bitrate_ref)`, W being --p95-fall-weight (the shipped card: 1).
    ///
    /// Writes OUT/policy.onnx, OUT/policy.json, OUT/labels.json, OUT/training.json,
    /// OUT/training-curve.png and OUT/counterfactual.json.
    #[command(after_help = COUNTERFACTUAL_EXAMPLE)]
    Counterfactual(CounterfactualArgs),
}

const COUNTERFACTUAL_EXAMPLE: &str = "Example (every call under each of the four outputs, then training):
  G=playout300-follow500+discardable+floor100-weighed+phase100+gate-open
  rtc-client experiment --policies path-arm:none@2000,path-arm:none@500,path-arm:$G@gated:200,path-arm:$G@200 \\
      --scenarios starlink,terrestrial-lte,leocc-trace --calls 10 --seed 20000 --handover calibrated --out runs/cf-train
  policy-train counterfactual --runs runs/cf-train --out models/path";

#[derive(Debug, Args)]
struct LogArgs {
    /// Telemetry files: glob patterns (quote them), comma-separated or repeated.
    #[arg(long, required = true, num_args = 1.., value_name = "GLOB")]
    logs: Vec<String>,
}

#[derive(Debug, Args)]
struct InspectArgs {
    #[command(flatten)]
    logs: LogArgs,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ClusterArgs {
    #[command(flatten)]
    logs: LogArgs,
    /// Clusters of the expert.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(2..=12))]
    k: u64,
    /// How each cluster's limit is chosen: one-se, the smallest limit whose mean reward is within
    /// one standard error of the best (ties go to less latency); best-mean, the paper's best mean
    /// reward.
    #[arg(long, value_enum, default_value_t = LabelRule::OneSe)]
    label_rule: LabelRule,
    /// Seed of the k-means restarts.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Directory for expert.json.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(Debug, Args)]
struct HyperArgs {
    /// Epochs per fit.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    epochs: u64,
    /// Cross-validation folds (0: none).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(0..=20))]
    folds: u64,
    /// Batch size.
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    batch: u64,
    /// Seed (initialisation, dropout, shuffles).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads libtorch may use (on the same machine, the same count reproduces the same
    /// weights).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: u64,
}

impl HyperArgs {
    fn hyper(&self) -> Hyper {
        Hyper {
            epochs: self.epochs as usize,
            folds: self.folds as usize,
            batch: self.batch as usize,
            seed: self.seed,
            ..Hyper::default()
        }
    }
}

#[derive(Debug, Args)]
struct TrainArgs {
    #[command(flatten)]
    logs: LogArgs,
    /// The expert (from `cluster`).
    #[arg(long, value_name = "FILE")]
    expert: PathBuf,
    #[command(flatten)]
    hyper: HyperArgs,
    /// Directory for weights.ot, training.json and training-curve.png.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(Debug, Args)]
struct ExportArgs {
    /// Directory holding expert.json, weights.ot and training.json; policy.onnx and policy.json
    /// are written there.
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
}

#[derive(Debug, Args)]
struct VerifyArgs {
    /// The model card (policy.json); the ONNX file it names sits beside it.
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct AllArgs {
    #[command(flatten)]
    logs: LogArgs,
    /// Clusters of the expert.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(2..=12))]
    k: u64,
    /// How each cluster's limit is chosen: one-se, the smallest limit whose mean reward is within
    /// one standard error of the best (ties go to less latency); best-mean, the paper's best mean
    /// reward.
    #[arg(long, value_enum, default_value_t = LabelRule::OneSe)]
    label_rule: LabelRule,
    #[command(flatten)]
    hyper: HyperArgs,
    /// Output directory.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(Debug, Args)]
struct CounterfactualArgs {
    /// Experiment directories (`rtc-client experiment --out`) that ran the path arms: each holds
    /// report.json and telemetry/. Repeat the flag or list several.
    #[arg(long, required = true, num_args = 1.., value_name = "DIR")]
    runs: Vec<PathBuf>,
    /// The labelling margin in utility units (freezes a minute): the label is the lowest-index
    /// output whose utility is within it of the best.
    #[arg(long, default_value_t = policy_train::counterfactual::DEFAULT_MARGIN, value_parser = non_negative)]
    margin: f64,
    /// Clusters of the K-means expert the model is compared with.
    #[arg(long, default_value_t = policy_train::counterfactual::DEFAULT_K as u64, value_parser = clap::value_parser!(u64).range(1..=12))]
    k: u64,
    /// Skip a call that lacks an arm (with a warning) instead of stopping.
    #[arg(long)]
    skip_incomplete: bool,
    /// Train on the labels' cross-entropy instead of the default, each output's regret on each
    /// call (clipped at 5 freezes a minute): the expected regret under the network's choice.
    #[arg(long)]
    cross_entropy: bool,
    /// The calls whose mean P95 and bitrate ratios the utility's hinges read: the call's
    /// nearest in the decision's inputs and forecast handovers, itself included. 1, the
    /// default, reads each call's own ratios, which charges an output for its calls' spread
    /// around libwebrtc's as well as for its mean; more estimate the expected ratio given what
    /// the policy measures (docs/architecture.md, "The model and its card").
    #[arg(long, value_name = "CALLS", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    neighbours: u64,
    /// The weight of the label's cross-entropy added to each call's expected regret (0: the
    /// regret alone). The regret alone barely moves an output the network has all but excluded
    /// early, even where it is the better one; the label's pull does not fade that way.
    /// Ignored with --cross-entropy.
    #[arg(long, value_name = "WEIGHT", default_value_t = 0.0, value_parser = non_negative)]
    label_weight: f64,
    /// What a fall in P95 delay earns, per unit of ratio to libwebrtc's: the utility adds
    /// WEIGHT x max(0, 1 - p95 / p95_ref). 0, the default, gives a fall nothing (a rise costs
    /// 10 per unit either way); 1 makes a 10 % fall worth a tenth of a freeze a minute, which
    /// breaks ties between outputs of about equal freezes towards less delay.
    #[arg(long, value_name = "WEIGHT", default_value_t = 0.0, value_parser = non_negative)]
    p95_fall_weight: f64,
    #[command(flatten)]
    hyper: HyperArgs,
    /// Output directory.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// A margin or a weight: a finite number, 0 or more.
fn non_negative(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(v) => Err(format!("{v} is not a finite number of 0 or more")),
        Err(e) => Err(format!("{text:?} is not a number: {e}")),
    }
}

/// What `train` leaves for `export`.
#[derive(Debug, Serialize, Deserialize)]
struct TrainingFile {
    report: TrainReport,
    logs: Vec<LogFile>,
    actions_ms: Vec<u64>,
    wall_s: f64,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Inspect(a) => inspect(&a),
        Command::Cluster(a) => {
            let logs = read_logs(&a.logs)?;
            let usable = usable(&logs.records);
            let expert = cluster(&usable, a.k as usize, a.seed, a.label_rule)?;
            write_json(&a.out.join("expert.json"), &expert)?;
            print_expert(&expert);
            Ok(())
        }
        Command::Train(a) => {
            let logs = read_logs(&a.logs)?;
            let expert: Expert = read_json(&a.expert)?;
            let usable = usable(&logs.records);
            let (trained, file) = train(&usable, &expert, &a.hyper, &logs.files)?;
            save_training(&a.out, &trained, &file)?;
            print_training(&file.report, &expert);
            Ok(())
        }
        Command::Export(a) => {
            let expert: Expert = read_json(&a.dir.join("expert.json"))?;
            let file: TrainingFile = read_json(&a.dir.join("training.json"))?;
            let trained = load_weights(&a.dir.join("weights.ot"), expert.actions_ms.len())?;
            export_model(&a.dir, &trained, &expert, &file)?;
            Ok(())
        }
        Command::Verify(a) => {
            let v = verify::verify(&a.model, a.seed)
                .with_context(|| format!("{} does not verify", a.model.display()))?;
            if a.json {
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                print_verification(&v);
            }
            Ok(())
        }
        Command::All(a) => all(&a),
        Command::Counterfactual(a) => counterfactual(&a),
    }
}

fn counterfactual(a: &CounterfactualArgs) -> Result<()> {
    let hyper = Hyper {
        label_weight: a.label_weight,
        ..a.hyper.hyper()
    };
    let options = policy_train::counterfactual::Options {
        runs: a.runs.clone(),
        out: a.out.clone(),
        hyper,
        threads: a.hyper.threads as usize,
        margin: a.margin,
        k: a.k as usize,
        skip_incomplete: a.skip_incomplete,
        cross_entropy: a.cross_entropy,
        neighbours: a.neighbours as usize,
        p95_fall_weight: a.p95_fall_weight,
    };
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} epochs ({elapsed}, eta {eta})")
    {
        bar.set_style(style);
    }
    bar.set_message("training");
    let finished = policy_train::counterfactual::run(&options, |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    print!(
        "{}",
        policy_train::counterfactual::format_summary(&finished.summary)
    );
    println!(
        "\nwrote {} (sha256 {}) with its card {}, labels.json, training.json, training-curve.png and counterfactual.json",
        a.out.join("policy.onnx").display(),
        finished.summary.onnx_sha256,
        finished.card.display()
    );
    let v = verify::verify(&finished.card, 7).context("the exported model does not verify")?;
    print_verification(&v);
    Ok(())
}

fn read_logs(args: &LogArgs) -> Result<Logs> {
    let started = Instant::now();
    let logs = logs::read(&args.logs)?;
    tracing::info!(
        files = logs.files.len(),
        records = logs.records.len(),
        rejected = logs.rejected.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "logs read"
    );
    for r in logs.rejected.iter().take(5) {
        tracing::warn!("{}:{}: skipped: {}", r.file, r.line, r.reason);
    }
    Ok(logs)
}

fn usable(records: &[IntervalRecord]) -> Vec<IntervalRecord> {
    records
        .iter()
        .filter(|r| r.duration_ms >= MIN_INTERVAL_MS)
        .cloned()
        .collect()
}

fn inspect(args: &InspectArgs) -> Result<()> {
    let logs = read_logs(&args.logs)?;
    let mut per_scenario: BTreeMap<&str, usize> = BTreeMap::new();
    let mut per_policy: BTreeMap<&str, usize> = BTreeMap::new();
    let mut per_action: BTreeMap<u64, usize> = BTreeMap::new();
    let mut per_count: BTreeMap<u64, usize> = BTreeMap::new();
    let mut short = 0;
    for r in &logs.records {
        *per_scenario.entry(&r.scenario).or_default() += 1;
        *per_policy.entry(&r.policy).or_default() += 1;
        *per_action.entry(r.action_ms).or_default() += 1;
        *per_count
            .entry(features(&r.observed.handover.bits())[0] as u64)
            .or_default() += 1;
        if r.duration_ms < MIN_INTERVAL_MS {
            short += 1;
        }
    }
    if args.json {
        let v = serde_json::json!({
            "files": logs.files,
            "intervals": logs.records.len(),
            "shorter_than_60s": short,
            "per_scenario": per_scenario,
            "per_policy": per_policy,
            "per_action_ms": per_action,
            "observed_handovers_per_window": per_count,
            "rejected": logs.rejected,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} files, {} intervals ({} shorter than 60 s, left out of training), {} lines rejected",
        logs.files.len(),
        logs.records.len(),
        short,
        logs.rejected.len()
    )?;
    let table = |out: &mut dyn Write, title: &str, rows: Vec<(String, usize)>| -> Result<()> {
        writeln!(out, "\n{title}")?;
        let total: usize = rows.iter().map(|r| r.1).sum::<usize>().max(1);
        for (k, n) in rows {
            let bar = "#".repeat((n * 40).div_ceil(total));
            writeln!(out, "  {k:>16} {n:>7}  {bar}")?;
        }
        Ok(())
    };
    table(
        &mut out,
        "intervals per scenario",
        per_scenario
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
    )?;
    table(
        &mut out,
        "intervals per policy",
        per_policy
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
    )?;
    table(
        &mut out,
        "intervals per queue limit (ms)",
        per_action
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
    )?;
    table(
        &mut out,
        "observed handovers per 120-s window (the paper's figure 3b)",
        per_count.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    )?;
    if !logs.rejected.is_empty() {
        writeln!(out, "\nrejected lines")?;
        for r in &logs.rejected {
            writeln!(out, "  {}:{}: {}", r.file, r.line, r.reason)?;
        }
    }
    Ok(())
}

fn cluster(records: &[IntervalRecord], k: usize, seed: u64, rule: LabelRule) -> Result<Expert> {
    let started = Instant::now();
    let expert = Expert::build(records, k, seed, rule).context("cannot build the expert")?;
    tracing::info!(
        intervals = records.len(),
        k,
        actions = ?expert.actions_ms,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "expert built"
    );
    Ok(expert)
}

fn train(
    records: &[IntervalRecord],
    expert: &Expert,
    hyper_args: &HyperArgs,
    files: &[LogFile],
) -> Result<(Trained, TrainingFile)> {
    if records.is_empty() {
        bail!("no usable interval (60 s or longer) to train on");
    }
    tch::set_num_threads(hyper_args.threads as i32);
    let hyper = hyper_args.hyper();
    let data = Dataset::new(records, expert);
    let started = Instant::now();
    let total = ((if hyper.folds >= 2 { hyper.folds } else { 0 }) + 1) * hyper.epochs;
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} epochs ({elapsed}, eta {eta})")
    {
        bar.set_style(style);
    }
    bar.set_message("training");
    let (trained, report) =
        policy_train::train::train(&data, expert.actions_ms.len(), &hyper, |done, _| {
            bar.set_position(done as u64)
        })
        .context("training failed")?;
    bar.finish_and_clear();
    let wall_s = started.elapsed().as_secs_f64();
    tracing::info!(
        samples = data.len(),
        accuracy = report.accuracy_mean,
        wall_s,
        "trained"
    );
    Ok((
        trained,
        TrainingFile {
            report,
            logs: files.to_vec(),
            actions_ms: expert.actions_ms.clone(),
            wall_s,
        },
    ))
}

fn save_training(dir: &Path, trained: &Trained, file: &TrainingFile) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let weights = dir.join("weights.ot");
    trained
        .vs
        .save(&weights)
        .with_context(|| format!("cannot write {}", weights.display()))?;
    write_json(&dir.join("training.json"), file)?;
    plot::training_curve(&dir.join("training-curve.png"), &file.report)?;
    Ok(())
}

/// The trained network in `path` (a `weights.ot` of `train`). Its telemetry width is read from
/// the file's first layer (`tok1.weight`, `[64, 2 + F]`), so a network trained with any number
/// of measurement features loads as it was trained.
fn load_weights(path: &Path, actions: usize) -> Result<Trained> {
    let stored = tch::Tensor::load_multi(path)
        .with_context(|| format!("cannot load the weights {}", path.display()))?;
    let first = stored
        .iter()
        .find(|(name, _)| name == "tok1.weight")
        .map(|(_, t)| t.size())
        .with_context(|| format!("{} has no tok1.weight", path.display()))?;
    let telemetry = match first.as_slice() {
        [_, width] if *width >= 2 => (*width - 2) as usize,
        other => bail!(
            "{}: tok1.weight has shape {other:?}, expected [64, 2 + F]",
            path.display()
        ),
    };
    let mut vs = tch::nn::VarStore::new(tch::Device::Cpu);
    let net = policy_train::model::PolicyNet::with_telemetry(&vs.root(), actions, 0.0, telemetry);
    vs.load(path)
        .with_context(|| format!("cannot load the weights {}", path.display()))?;
    Ok(Trained { vs, net })
}

fn export_model(dir: &Path, trained: &Trained, expert: &Expert, file: &TrainingFile) -> Result<()> {
    let started = Instant::now();
    let weights: HashMap<String, export::Weight> = export::weights_of_net(&trained.net)?;
    let bytes =
        export::onnx_bytes_with(&weights, expert.actions_ms.len(), trained.net.telemetry())?;
    let onnx = dir.join("policy.onnx");
    std::fs::write(&onnx, &bytes).with_context(|| format!("cannot write {}", onnx.display()))?;
    let sha = logs::hex_sha256(&bytes);
    let card = card::build(
        &trained.net,
        expert,
        &file.report,
        &file.logs,
        "policy.onnx",
        &sha,
    );
    card.validate()
        .context("the card built does not validate")?;
    write_json(&dir.join("policy.json"), &card)?;
    tracing::info!(
        onnx = %onnx.display(),
        bytes = bytes.len(),
        sha256 = %sha,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "exported"
    );
    println!(
        "wrote {} ({} bytes, sha256 {sha}) and its card policy.json",
        onnx.display(),
        bytes.len()
    );
    Ok(())
}

fn all(a: &AllArgs) -> Result<()> {
    let t = Instant::now();
    let logs = read_logs(&a.logs)?;
    let read_s = t.elapsed().as_secs_f64();
    let records = usable(&logs.records);
    let t = Instant::now();
    let expert = cluster(&records, a.k as usize, a.hyper.seed, a.label_rule)?;
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create {}", a.out.display()))?;
    write_json(&a.out.join("expert.json"), &expert)?;
    let cluster_s = t.elapsed().as_secs_f64();
    print_expert(&expert);
    let (trained, file) = train(&records, &expert, &a.hyper, &logs.files)?;
    save_training(&a.out, &trained, &file)?;
    print_training(&file.report, &expert);
    let t = Instant::now();
    export_model(&a.out, &trained, &expert, &file)?;
    let export_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let v = verify::verify(&a.out.join("policy.json"), 7)
        .context("the exported model does not verify")?;
    let verify_s = t.elapsed().as_secs_f64();
    print_verification(&v);
    let stages = serde_json::json!({
        "read_s": read_s, "cluster_s": cluster_s, "train_s": file.wall_s,
        "export_s": export_s, "verify_s": verify_s,
    });
    write_json(&a.out.join("stages.json"), &stages)?;
    println!(
        "\nstages: read {read_s:.1} s, cluster {cluster_s:.1} s, train {:.1} s, export {export_s:.1} s, verify {verify_s:.1} s",
        file.wall_s
    );
    Ok(())
}

fn print_expert(e: &Expert) {
    println!(
        "k-means over {} intervals (features: {})",
        e.intervals,
        e.features.join(", ")
    );
    println!("   k     inertia  silhouette");
    for c in &e.k_choice {
        println!("  {:>2} {:>11.1} {:>11.3}", c.k, c.inertia, c.silhouette);
    }
    println!(
        "\nexpert (reward 2X - F; X: bitrate / {:.0} kbit/s, F: freezes per min / {:.2})",
        e.max_bitrate_kbps, e.max_freezes_per_min
    );
    let rule = match e.label_rule {
        LabelRule::BestMean => "the best mean reward",
        LabelRule::OneSe => "the smallest limit within one standard error of the best mean",
    };
    println!("limit per cluster: {rule}");
    println!(
        "  handovers  mean gap s   size  limit ms   mean reward +- standard error per limit tried (n)"
    );
    for c in &e.clusters {
        let rewards: Vec<String> = c
            .rewards
            .iter()
            .map(|(a, s)| format!("{a}:{:.3}+-{:.3}({})", s.mean, s.se, s.n))
            .collect();
        println!(
            "  {:>9.2} {:>11.1} {:>6} {:>9}   {}",
            c.center[0],
            c.center[1],
            c.size,
            c.action_ms,
            rewards.join(" ")
        );
        if let Some(profile) = &c.profile {
            let best = c
                .joint_rewards
                .iter()
                .filter(|r| r.stat.n >= policy_train::expert::MIN_SAMPLES_PER_ACTION)
                .max_by(|a, b| a.stat.mean.total_cmp(&b.stat.mean));
            println!(
                "            boundary excess loss {:.1} points: {} ms + {profile} (best mean: {})",
                c.center.get(2).copied().unwrap_or(0.0),
                c.action_ms,
                best.map_or("none".to_owned(), |b| format!(
                    "{} ms + {} {:.3}+-{:.3} ({})",
                    b.limit_ms, b.profile, b.stat.mean, b.stat.se, b.stat.n
                )),
            );
        }
    }
    println!("deployed limits: {:?} ms", e.actions_ms);
    if e.is_joint() {
        let pairs: Vec<String> = e
            .joint_actions
            .iter()
            .map(|a| format!("{} ms + {}", a.limit_ms, a.profile))
            .collect();
        println!("deployed joint actions: {}", pairs.join(", "));
    }
}

fn print_training(r: &TrainReport, e: &Expert) {
    println!(
        "\ntrained on {} intervals ({} parameters), labels per limit: {}",
        r.samples,
        r.parameters,
        e.actions_ms
            .iter()
            .zip(&r.class_counts)
            .map(|(a, n)| format!("{a} ms: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !r.folds.is_empty() {
        let accs: Vec<String> = r
            .folds
            .iter()
            .map(|f| format!("{:.3}", f.accuracy))
            .collect();
        println!(
            "{}-fold cross-validation accuracy {:.3} +- {:.3} (folds: {})",
            r.folds.len(),
            r.accuracy_mean,
            r.accuracy_std,
            accs.join(", ")
        );
        println!(
            "confusion (rows: expert, columns: model), limits {:?} ms",
            e.actions_ms
        );
        for row in &r.confusion {
            println!(
                "  {}",
                row.iter().map(|n| format!("{n:>6}")).collect::<String>()
            );
        }
    }
    if let Some(last) = r.final_curve.last() {
        println!(
            "final fit: loss {:.4}, training accuracy {:.3}",
            last.loss, last.train_accuracy
        );
    }
}

fn print_verification(v: &verify::Verification) {
    if let Some(profile) = &v.all_zero_profile {
        println!(
            "{}: outputs {:?} ms; {} golden vectors match tract; {} random inputs: max |tract - tch| = {:.2e} ({} argmax disagreements); all-zero forecast with nothing measured -> {} ms + {profile}",
            v.policy,
            v.actions_ms,
            v.golden,
            v.random_inputs,
            v.max_difference,
            v.argmax_disagreements,
            v.all_zero_ms,
        );
        print_reference(v);
        return;
    }
    println!(
        "{}: limits {:?} ms; {} golden vectors match tract; {} random inputs: max |tract - tch| = {:.2e} ({} argmax disagreements); all-zero forecast -> {} ms ({})",
        v.policy,
        v.actions_ms,
        v.golden,
        v.random_inputs,
        v.max_difference,
        v.argmax_disagreements,
        v.all_zero_ms,
        if v.all_zero_is_smallest {
            "the smallest limit, as the paper's terrestrial behaviour"
        } else {
            "NOT the smallest limit"
        }
    );
    print_reference(v);
}

fn print_reference(v: &verify::Verification) {
    match &v.onnx_reference {
        Some(r) => println!("onnx checker and onnxruntime: {r}"),
        None => println!(
            "onnx checker and onnxruntime: not run ({} is unset; scripts/setup-libtorch.sh sets it)",
            verify::ONNX_PYTHON_ENV
        ),
    }
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not valid", path.display()))
}

//! The command line: argument parsing, logging, one module per subcommand.

mod answer;
mod args;
mod browser;
mod call;
mod collect;
mod compare;
mod demo;
mod experiment;
mod link;
mod merge;
mod paths;
mod plot;
mod sim;
mod sweep;

use anyhow::Result;
use args::PathArgs;
use clap::{ArgAction, Args, Parser, Subcommand};
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

/// Calls over emulated LEO links.
///
/// Logs go to stderr (more with -v, less with -q, or set RUST_LOG); results go to stdout, as
/// text or, with --json, as JSON.
#[derive(Debug, Parser)]
#[command(name = "rtc-client", version, propagate_version = true)]
struct Cli {
    /// More log output on stderr (-v: debug, -vv: trace).
    #[arg(short, long, global = true, action = ArgAction::Count, display_order = 100)]
    verbose: u8,
    /// Less log output on stderr (-q: warnings and errors only, -qq: errors only).
    #[arg(short, long, global = true, action = ArgAction::Count, conflicts_with = "verbose", display_order = 101)]
    quiet: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show what the product does: the same emulated Starlink calls with WebRTC's default and
    /// with the shipped handover-aware policy, side by side.
    ///
    /// Runs --seeds calls of --duration over the starlink scenario once with WebRTC's fixed
    /// 2000-ms queue limit and once with the shipped learned policy (or --policy), on identical
    /// links, and prints bitrate, freezes per minute, seconds frozen, stalls per minute, P50 and
    /// P95 delay and loss for both, what the policy chose around the handovers, and the path of
    /// a timeline picture (frames per second, frame delay, and each freeze with its length).
    #[command(after_help = "Examples:\n  \
        rtc-client demo\n  \
        rtc-client demo --duration 10m --seeds 5\n  \
        rtc-client demo --policy fixed:200 --out runs/demo-fixed")]
    Demo(demo::DemoArgs),
    /// Emulate a scenario's two links and report what they do, second by second.
    ///
    /// Draws one call from the scenario (file + seed), then reports each direction's capacity,
    /// one-way propagation delay and expected loss per second, the handover times, and the RTT
    /// that pings every 200 ms see (with the |RTT change| at slot-boundary seconds against other
    /// seconds, the figure the starlink scenario is fitted to). --plot draws it; --compare puts
    /// a real trace beside it.
    #[command(after_help = "Examples:\n  \
        rtc-client link --scenario starlink --duration 10m --seed 1 --json\n  \
        rtc-client link --scenario starlink --plot starlink.png \
        --compare ../shared/data/starlink/lagos/lagos.csv\n  \
        rtc-client link --scenario sparse-leo --seed 3 --plot sparse.svg\n  \
        rtc-client link --scenario my-scenario.toml --table")]
    Link(link::LinkArgs),
    /// Simulate one call over a scenario and report its QoE, interval by interval.
    ///
    /// Draws the call's links and handovers from the scenario (file + seed), runs the sender,
    /// pacer, queue policy and receiver over them in virtual time, and prints the QoE of the
    /// whole call and of each decision interval (queue limit, handovers forecast and observed,
    /// bitrate, freezes, stalls, P95 delay; for the call also the freeze time and P50 delay).
    /// --telemetry writes one JSON line per interval.
    #[command(after_help = "Examples:\n  \
        rtc-client sim --scenario starlink --policy default --handover oracle --duration 10m \
        --seed 7\n  \
        rtc-client sim --scenario starlink --policy fixed:900 --telemetry out.jsonl\n  \
        rtc-client sim --scenario sparse-leo --policy heuristic --interval 60s --json")]
    Sim(sim::SimArgs),
    /// Compare queue policies over many simulated calls: means, 95% CIs, paired tests, plots.
    ///
    /// Runs --calls calls per scenario and policy in parallel (call i uses seed BASE+i for every
    /// policy, so policies meet identical links), writes every call's telemetry to
    /// OUT/telemetry/<scenario>/<policy>/seed-<n>.jsonl (what `sim --telemetry` writes for that
    /// seed), and a report: per scenario and policy, each QoE metric's mean with a 95% percentile
    /// bootstrap interval, its change against `default` and a paired sign-flip permutation test
    /// against `default` (OUT/report.md, OUT/report.json), and one bar chart per metric
    /// (OUT/plots/*.png). Prints the markdown table (or, with --json, report.json). The output is
    /// identical whatever --jobs. OUT/run.json records the engine, the configuration's sha256
    /// and every call's; --shard K/N runs a part of the plan for `merge`, and --resume finishes
    /// a run that was killed, with the same result.
    #[command(after_help = "Examples:
          rtc-client experiment --scenarios starlink,sparse-leo,terrestrial-lte         --policies default,heuristic,random --calls 50 --duration 10m --seed 1 --out runs/ab
          rtc-client experiment --scenarios starlink --policies default,fixed:900 --calls 4         --duration 2m --jobs 2 --out /tmp/ab --force
          rtc-client experiment --scenarios sparse-leo --calls 20 --interval 60s --out runs/sparse         --json")]
    Experiment(experiment::ExperimentArgs),
    /// Collect training telemetry: random-policy calls filling --hours of call time.
    ///
    /// The paper's data-collection run: calls under the random policy (one queue limit drawn per
    /// decision interval), dealt to the scenarios in turn with seeds BASE, BASE+1, ... per
    /// scenario, until --hours of call time in total are filled. Writes each call's telemetry to
    /// OUT/telemetry/<scenario>/random/seed-<n>.jsonl and OUT/manifest.json (scenarios, seeds,
    /// calls, intervals, each file's sha256), then one summary line. --shard and --resume as for
    /// `experiment`.
    #[command(after_help = "Examples:
          rtc-client collect --scenarios starlink,sparse-leo --hours 60 --duration 10m --seed 1         --out runs/train
          rtc-client collect --scenarios starlink --hours 0.5 --duration 2m --jobs 4 --out /tmp/c         --json")]
    Collect(collect::CollectArgs),
    /// Join the shard directories of one experiment or collect sweep into what one run writes.
    ///
    /// Each SHARD_DIR is the --out of an `experiment` or `collect` run with --shard K/N. Merge
    /// checks they come from the same engine (binary) and configuration and hold every call of
    /// the plan exactly once, copies every call's telemetry (checked against its recorded
    /// sha256), and writes the report and plots (experiment) or manifest.json (collect) that the
    /// sweep run unsharded writes, byte for byte, with run.json listing every call. Run it with
    /// the binary that made the shards, from the directory they ran in (scenario paths in their
    /// arguments resolve from there).
    #[command(after_help = "Examples:
          rtc-client experiment --scenarios starlink --calls 40 --shard 1/4 --out runs/ab/1
          ... (shards 2/4, 3/4, 4/4, on any machines)
          rtc-client merge --out runs/ab/all runs/ab/1 runs/ab/2 runs/ab/3 runs/ab/4")]
    Merge(merge::MergeArgs),
    /// Answer real calls: HTTP signalling, the receiver and QoE meter, a report per second.
    #[command(
        after_help = "Examples:\n  rtc-client answer\n  rtc-client answer --listen 127.0.0.1:9000 --once"
    )]
    Answer(answer::AnswerArgs),
    /// Make one real call to `rtc-client answer`, optionally over an emulated link.
    ///
    /// webrtc-rs peer connection with GoogCC, TWCC, NACK/RTX and the handover-aware pacer at
    /// Slot::Pacer; the synthetic encoder follows the estimator's target; a status line each
    /// second, a summary at the end, and the simulator's telemetry with --telemetry.
    #[command(after_help = "Examples:\n  \
        rtc-client call --peer http://127.0.0.1:8443 --link starlink --duration 30s\n  \
        rtc-client call --link starlink --policy heuristic --handover scenario \
        --decision-interval 10s --telemetry call.jsonl\n  \
        rtc-client call --policy heuristic --handover dish:127.0.0.1:9200")]
    Call(call::CallArgs),
    /// One call between rtc-client and headless Chromium (the browser's own WebRTC), optionally
    /// over an emulated link: --direction receive sends our real VP8 (pacer, GoogCC, NACK/RTX)
    /// to the browser, --direction send has the browser send its fake camera to our receiver.
    /// Prints both sides' frames, freezes and bitrate side by side and writes the browser's
    /// getStats samples, our telemetry, a screenshot and summary.json to --out. Needs Chromium
    /// (scripts/setup-browser.sh installs Debian's), and --direction receive a build with the
    /// `vp8` feature (libvpx).
    #[command(after_help = "Examples:\n  \
        rtc-client browser --seconds 30 --direction receive --scenario starlink\n  \
        rtc-client browser --seconds 20 --direction send --out runs/browser-send")]
    Browser(browser::BrowserArgs),
    /// Write a family of training paths: N scenario files drawn from ranges around the measured
    /// Starlink, LeoCC and terrestrial figures, never the shipped evaluation scenarios.
    ///
    /// Draws --count paths from six families (weights): leo-lossy 0.20 (Starlink-like slot
    /// boundaries that lose packets), leo-phased 0.10 (Starlink over inter-satellite links:
    /// loss at a phase of the slot seconds after each boundary), leo-spiky 0.20 (LeoCC-like boundaries with delay spikes,
    /// no loss), leo-bursty 0.20 (lagos.csv-like Gilbert-Elliott bursts and capacity dips),
    /// leo-sparse 0.10 (rare handovers with an outage each) and terrestrial 0.20 (LTE-, 5G- and
    /// broadband-like, no handovers). Every number is drawn from a range built around a figure
    /// measured on ../shared/data and widened (docs/path-family.md). The files use generated
    /// kinds only, so they read no data file; they load wherever a scenario is taken
    /// (`experiment --scenarios OUT/path-0000.toml,...`, `collect`, `sim --scenario`), and the
    /// calibrated forecast works on every one. Writes OUT/path-0000.toml ... and OUT/family.json
    /// (the generator version, the seed and every path's draws). The same seed writes the same
    /// bytes, and path i is the same whatever --count.
    #[command(after_help = "Examples:\n  \
        rtc-client paths --count 200 --seed 1 --out runs/paths\n  \
        rtc-client paths --count 40 --seed 7 --duration 2m --out /tmp/fam --force\n  \
        rtc-client experiment --scenarios /tmp/fam/path-0000.toml,/tmp/fam/path-0001.toml \
        --policies default,fixed:200 --calls 2 --duration 60s --handover calibrated --out /tmp/run")]
    Paths(paths::PathsArgs),
    /// List the shipped scenarios with their descriptions.
    #[command(after_help = "Examples:\n  rtc-client scenarios\n  rtc-client scenarios --json")]
    Scenarios(ScenariosArgs),
}

/// `rtc-client scenarios`.
#[derive(Debug, Args)]
struct ScenariosArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    paths: PathArgs,
}

/// Parses the arguments, sets up logging, runs the subcommand; reports errors on stderr.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    let result = match cli.command {
        Command::Demo(args) => demo::run(args, std::time::Instant::now()),
        Command::Link(args) => link::run(args),
        Command::Sim(args) => sim::run(args, std::time::Instant::now()),
        Command::Experiment(args) => experiment::run(args, std::time::Instant::now()),
        Command::Collect(args) => collect::run(args, std::time::Instant::now()),
        Command::Merge(args) => merge::run(args),
        Command::Answer(args) => answer::run(args),
        Command::Call(args) => call::run(args),
        Command::Browser(args) => browser::run(args),
        Command::Paths(args) => paths::run(args),
        Command::Scenarios(args) => scenarios(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Whether the error is stdout closed early (`rtc-client ... | head`): not a failure.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn init_logging(verbose: u8, quiet: u8) {
    let level = match (verbose, quiet) {
        (0, 0) => "info",
        (1, _) => "debug",
        (v, _) if v >= 2 => "trace",
        (_, 1) => "warn",
        _ => "error",
    };
    // RUST_LOG wins when set; otherwise the -v/-q level for this binary, warnings for the rest.
    // webrtc-rs logs through the `log` crate: its records join ours only when RUST_LOG asks, as
    // its warnings are noise in a normal call (every Chromium ClientHello brings three about
    // extensions it does not know); `RUST_LOG=info,rtc_dtls=debug` shows each handshake flight
    // (docs/real-calls.md, "When a call does not connect").
    let filter = match EnvFilter::try_from_default_env() {
        Ok(filter) => {
            // A second logger (a test harness's) keeps its own: nothing is lost but these.
            let _ = tracing_log::LogTracer::init();
            filter
        }
        Err(_) => EnvFilter::new(format!("warn,rtc_client={level}")),
    };
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_target(false)
        .compact()
        .init();
}

/// One line of `rtc-client scenarios --json`.
#[derive(Debug, serde::Serialize)]
struct ScenarioLine {
    name: String,
    kind: rtc_client::scenario::schema::ScenarioKind,
    handovers: &'static str,
    description: String,
    file: String,
}

fn scenarios(args: ScenariosArgs) -> Result<()> {
    use std::io::Write;
    let paths = args.paths.resolve();
    let names = paths.shipped();
    if names.is_empty() {
        anyhow::bail!(
            "no scenario files in {}; give --root or set LEOPACE_ROOT to the workspace",
            paths
                .root
                .join(rtc_client::scenario::SCENARIO_DIR)
                .display()
        );
    }
    let mut lines = Vec::new();
    for name in names {
        let s = rtc_client::scenario::Scenario::load(&name, &paths)?;
        lines.push(ScenarioLine {
            handovers: match s.file.handovers {
                rtc_client::scenario::schema::HandoverSpec::None => "none",
                rtc_client::scenario::schema::HandoverSpec::Slots { .. } => "slots",
                rtc_client::scenario::schema::HandoverSpec::Grid { .. } => "grid",
                rtc_client::scenario::schema::HandoverSpec::Orbit(_) => "orbit",
            },
            name,
            kind: s.file.kind,
            description: s.file.description.clone(),
            file: s.origin.clone(),
        });
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &lines)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{:<22} {:<9} {:<9} description",
            "name", "kind", "handovers"
        )?;
        for l in &lines {
            writeln!(
                out,
                "{:<22} {:<9} {:<9} {}",
                l.name,
                l.kind.as_str(),
                l.handovers,
                l.description
            )?;
        }
    }
    Ok(())
}

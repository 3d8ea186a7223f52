//! `rtc-client sim`: run one simulated call over a scenario and report its QoE.

use super::args::{
    PathArgs, SenderArgs, TimingArgs, parse_duration, parse_interval, parse_policy,
    parse_sim_forecast, policy_name,
};
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pacer::telemetry::{IntervalRecord, QoeRecord, TelemetryWriter};
use rtc_client::call::PolicyChoice;
use rtc_client::durable::AtomicFile;
use rtc_client::forecast::ForecastSpec;
use rtc_client::media::qoe::Freeze;
use rtc_client::scenario::Scenario;
use rtc_client::sim::{CallConfig, CallResult, run_call};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the call runs before a spinner appears on stderr.
const PROGRESS_AFTER: Duration = Duration::from_secs(2);

/// `rtc-client sim` arguments.
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Scenario: a shipped name (traces/scenarios/NAME.toml) or a path to a .toml file.
    #[arg(long, value_name = "NAME|FILE")]
    scenario: String,
    /// Queue policy: default (WebRTC's fixed 2000 ms), random, heuristic, fixed:<ms> with 50 to
    /// 10000 ms, gated:<ms>[/<ms>] (the first limit while the forecast holds a handover, the second,
    /// the paper's 500 ms unless named, while it holds none), learned:<card> (a model card such as models/policy.json, with its ONNX file
    /// beside it; checked at load), or timed (the pacer hold, the estimator guard and the
    /// protection boost and the playout raise (frames around the handover ask the receiver for
    /// one repair round of playout delay) at each predicted handover, over the heuristic's limit;
    /// timed:hold+guard picks some actions (hold, guard, boost, playout, duplicate: the window's
    /// video sent again when it ends, off in plain timed), timed:<file.toml> reads every window
    /// from an action configuration
    /// such as traces/actions/default.toml, timed@fixed:200 takes another policy's limit), or
    /// path-arm:<profile>@<limit> (the path-aware menu's 60-s measuring window, then one output
    /// of the menu, e.g. path-arm:none@500; learned:models/path/policy.json
    /// chooses it).
    #[arg(long, value_name = "POLICY", default_value = "default", value_parser = parse_policy)]
    policy: PolicyChoice,
    /// Handover forecast the policy reads: oracle (the scenario's ground truth for the next 120
    /// s, evaluation only), mirror (the paper's predictor: the last 120 s of handovers,
    /// repeated), orbital (SGP4 over the scenario's own constellation, at both ends; orbit
    /// scenarios such as sparse-leo), calibrated (every slot boundary with the switch rate
    /// learned from the boundaries already passed), blind (calibrated's instants each moved at
    /// random within half a slot: the forecast-blind control) or none.
    #[arg(long, value_name = "SOURCE", default_value = "oracle", value_parser = parse_sim_forecast)]
    handover: ForecastSpec,
    #[command(flatten)]
    timing: TimingArgs,
    #[command(flatten)]
    sender: SenderArgs,
    /// Call length, e.g. 90s, 10m, 1h [default: the scenario's call.duration_s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true)]
    duration: Option<Duration>,
    /// Seed: the same scenario, seed and policy always give the same call.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Decision interval, 1 s to 120 s, e.g. 30s, 2m.
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = parse_interval)]
    interval: Duration,
    /// Write the telemetry (one JSON line per decision interval) to FILE.
    #[arg(long, value_name = "FILE")]
    telemetry: Option<PathBuf>,
    /// Print one JSON object instead of the text summary (the call's and each interval's QoE, and
    /// every freeze: `freezes`, each with `from_ms`, when the last frame before it rendered, and
    /// `duration_ms`).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    paths: PathArgs,
}

/// One decision interval in the report.
#[derive(Debug, Serialize)]
struct IntervalLine {
    index: u64,
    start_s: f64,
    duration_s: f64,
    action_ms: u64,
    handovers_forecast: usize,
    handovers_observed: usize,
    video_bitrate_kbps: f64,
    freeze_count: u64,
    stall_count: u64,
    e2e_delay_p95_ms: f64,
}

impl IntervalLine {
    fn new(r: &IntervalRecord) -> Self {
        Self {
            index: r.interval_index,
            start_s: r.start_ms as f64 / 1000.0,
            duration_s: r.duration_ms as f64 / 1000.0,
            action_ms: r.action_ms,
            handovers_forecast: r.forecast.handover.count(),
            handovers_observed: r.observed.handover.count(),
            video_bitrate_kbps: r.qoe.video_bitrate_kbps,
            freeze_count: r.qoe.freeze_count,
            stall_count: r.qoe.stall_count,
            e2e_delay_p95_ms: r.qoe.e2e_delay_p95_ms,
        }
    }
}

/// What the call did, counted.
#[derive(Debug, Serialize)]
struct Counts {
    intervals: usize,
    handovers_observed: usize,
    frames_encoded: u64,
    key_frames: u64,
    frames_rendered: u64,
    plis_sent: u64,
    media_packets: u64,
    rtp_packets_sent: u64,
    stale_deadlines: u64,
    retransmissions_sent: u64,
    retransmissions_lost: u64,
    media_packets_lost: u64,
    nack_requests: u64,
    nacked_packets: u64,
    nack_give_ups: u64,
    fec_packets_sent: u64,
    fec_packets_received: u64,
    fec_recovered: u64,
    fec_share_pct: f64,
}

impl Counts {
    fn new(result: &CallResult) -> Self {
        Self {
            intervals: result.telemetry.len(),
            handovers_observed: result
                .telemetry
                .iter()
                .map(|r| r.observed.handover.count())
                .sum(),
            frames_encoded: result.frames_encoded,
            key_frames: result.key_frames,
            frames_rendered: result.qoe.frames_rendered,
            plis_sent: result.plis_sent,
            media_packets: result.media_packets,
            rtp_packets_sent: result.rtp_packets_sent,
            stale_deadlines: result.stale_deadlines,
            retransmissions_sent: result.recovery.retransmissions_sent,
            retransmissions_lost: result.recovery.retransmissions_lost,
            media_packets_lost: result.recovery.media_packets_lost,
            nack_requests: result.recovery.nack_requests,
            nacked_packets: result.recovery.nacked_packets,
            nack_give_ups: result.recovery.give_ups,
            fec_packets_sent: result.recovery.fec_packets_sent,
            fec_packets_received: result.recovery.fec_packets_received,
            fec_recovered: result.recovery.fec_recovered,
            fec_share_pct: result.recovery.fec_share_pct,
        }
    }
}

/// The whole `--json` document.
#[derive(Debug, Serialize)]
struct SimReport<'a> {
    schema: &'static str,
    scenario: &'a str,
    file: &'a str,
    call_id: &'a str,
    seed: u64,
    policy: String,
    handover: String,
    nack: &'static str,
    bwe: &'static str,
    cwnd: &'static str,
    keyframe_flush: bool,
    fec: String,
    duration_s: f64,
    interval_s: f64,
    qoe: QoeRecord,
    /// Every freeze of the call, in render order: the timeline a plot or a trace lookup needs.
    freezes: Vec<FreezeLine>,
    counts: Counts,
    intervals: Vec<IntervalLine>,
    telemetry: Option<String>,
}

/// One freeze in `sim --json`: when the last frame before it rendered, and how long the picture
/// stayed, both in ms of call time.
#[derive(Debug, Serialize)]
struct FreezeLine {
    from_ms: f64,
    duration_ms: f64,
}

impl FreezeLine {
    fn new(freeze: &Freeze) -> Self {
        Self {
            from_ms: freeze.from.as_nanos() as f64 / 1e6,
            duration_ms: freeze.duration.as_secs_f64() * 1e3,
        }
    }
}

/// Runs `rtc-client sim`; `epoch` is the instant the simulated call's clock starts at.
pub fn run(args: SimArgs, epoch: Instant) -> Result<()> {
    let paths = args.paths.resolve();
    tracing::debug!(root = %paths.root.display(), data = %paths.data.display(), "paths");
    let scenario = Scenario::load(&args.scenario, &paths)?;
    let duration = args.duration.unwrap_or_else(|| scenario.default_duration());
    // Open the telemetry file first: a bad path fails before any work. It is written beside its
    // name and renamed into place once whole (docs/architecture.md, "Sweeps, shards and
    // resume"), so a killed run leaves no telemetry file that looks complete.
    let telemetry = match &args.telemetry {
        Some(path) => Some(TelemetryWriter::new(
            AtomicFile::create(path)
                .with_context(|| format!("cannot create the telemetry file {}", path.display()))?,
        )),
        None => None,
    };
    let realization = scenario
        .realize(args.seed, duration)
        .with_context(|| format!("cannot build the scenario {}", scenario.origin))?;
    let mut config = CallConfig::from_realization(&realization, args.policy.clone());
    config.decision_interval = args.interval;
    config.handover = args.handover.clone();
    config.timing_error = args.timing.error();
    config.playout_floor = args.timing.playout_floor();
    config.receiver_rtt = args.timing.receiver_rtt;
    config.receiver_raise = args.timing.receiver_raise;
    config.completion = args.timing.completion_model.model();
    // The flags over the scenario file's [sender] table (already in the realisation) over the
    // defaults.
    config.set_sender(realization.sender.overridden_by(&args.sender.overrides()));

    let started = Instant::now();
    let result = with_progress(
        format!(
            "simulating a {} s call over {}",
            duration.as_secs(),
            scenario.name()
        ),
        || run_call(&config, epoch),
    )
    .with_context(|| format!("the call over {} failed", scenario.name()))?;
    tracing::info!(
        scenario = scenario.name(),
        seed = args.seed,
        intervals = result.telemetry.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "call simulated"
    );

    if let (Some(mut writer), Some(path)) = (telemetry, &args.telemetry) {
        write_telemetry(&mut writer, &result.telemetry, path)?;
        writer
            .into_inner()
            .commit()
            .with_context(|| format!("cannot write the telemetry file {}", path.display()))?;
        tracing::info!(file = %path.display(), lines = result.telemetry.len(), "telemetry written");
    }

    let report = SimReport {
        schema: "leopace.sim.v1",
        scenario: scenario.name(),
        file: &scenario.origin,
        call_id: &config.call_id,
        seed: args.seed,
        policy: policy_name(&args.policy),
        handover: args.handover.name(),
        nack: config.nack.as_str(),
        bwe: config.bwe.as_str(),
        cwnd: config.sender().cwnd_name(),
        keyframe_flush: config.keyframe_flush,
        fec: config.fec.name(),
        duration_s: duration.as_secs_f64(),
        interval_s: args.interval.as_secs_f64(),
        qoe: result.qoe.to_record(),
        freezes: result.qoe.freezes.iter().map(FreezeLine::new).collect(),
        counts: Counts::new(&result),
        intervals: result.telemetry.iter().map(IntervalLine::new).collect(),
        telemetry: args.telemetry.as_ref().map(|p| p.display().to_string()),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        text(&mut out, &report)?;
    }
    out.flush()?;
    Ok(())
}

/// Writes every record and flushes, naming `path` on failure.
fn write_telemetry<W: Write>(
    writer: &mut TelemetryWriter<W>,
    records: &[IntervalRecord],
    path: &Path,
) -> Result<()> {
    let context = || format!("cannot write the telemetry file {}", path.display());
    for record in records {
        writer.write(record).with_context(context)?;
    }
    writer.flush().with_context(context)
}

/// Runs `work`, showing a spinner on stderr only once it has taken longer than
/// [`PROGRESS_AFTER`].
fn with_progress<T>(message: String, work: impl FnOnce() -> T) -> T {
    let (done, wait) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            if wait.recv_timeout(PROGRESS_AFTER) != Err(mpsc::RecvTimeoutError::Timeout) {
                return;
            }
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
                bar.set_style(style);
            }
            bar.set_message(message);
            bar.enable_steady_tick(Duration::from_millis(120));
            let _ = wait.recv();
            bar.finish_and_clear();
        });
        let value = work();
        drop(done);
        value
    })
}

fn text(out: &mut impl Write, r: &SimReport<'_>) -> Result<()> {
    writeln!(
        out,
        "sim {} ({}), seed {}, {:.0} s, policy {}, handovers {}, interval {:.0} s, nack {}, bwe {}, \
         cwnd {}, keyframe flush {}, fec {}",
        r.scenario,
        r.file,
        r.seed,
        r.duration_s,
        r.policy,
        r.handover,
        r.interval_s,
        r.nack,
        r.bwe,
        r.cwnd,
        if r.keyframe_flush { "on" } else { "off" },
        r.fec
    )?;
    writeln!(
        out,
        "{:>8} {:>8} {:>9} {:>12} {:>12} {:>12} {:>7} {:>6} {:>12}",
        "interval",
        "start_s",
        "action_ms",
        "ho_forecast",
        "ho_observed",
        "bitrate_kbps",
        "freezes",
        "stalls",
        "p95_delay_ms"
    )?;
    for i in &r.intervals {
        writeln!(
            out,
            "{:>8} {:>8.0} {:>9} {:>12} {:>12} {:>12.1} {:>7} {:>6} {:>12.1}",
            i.index,
            i.start_s,
            i.action_ms,
            i.handovers_forecast,
            i.handovers_observed,
            i.video_bitrate_kbps,
            i.freeze_count,
            i.stall_count,
            i.e2e_delay_p95_ms
        )?;
    }
    let q = &r.qoe;
    writeln!(
        out,
        "call: {:.1} kbit/s, {} freezes ({:.2} per minute, {:.2} s frozen, {:.2} s per minute), \
         {} stalls ({:.2} per minute), {:.1} fps",
        q.video_bitrate_kbps,
        q.freeze_count,
        q.freezes_per_min,
        q.total_freeze_ms as f64 / 1000.0,
        q.frozen_s_per_min,
        q.stall_count,
        q.stalls_per_min,
        q.frame_rate
    )?;
    writeln!(
        out,
        "  delay p50 {:.1} ms, p95 {:.1} ms; packet loss {:.2} %",
        q.e2e_delay_p50_ms, q.e2e_delay_p95_ms, q.packet_loss_pct
    )?;
    let c = &r.counts;
    writeln!(
        out,
        "  {} intervals, {} handovers observed; frames {} encoded ({} key), {} rendered; \
         {} PLIs; {} RTP packets sent ({} media)",
        c.intervals,
        c.handovers_observed,
        c.frames_encoded,
        c.key_frames,
        c.frames_rendered,
        c.plis_sent,
        c.rtp_packets_sent,
        c.media_packets
    )?;
    writeln!(
        out,
        "  loss recovery ({}): {} media packets lost on the link, {} NACKed ({} requests), \
         {} retransmissions ({} lost), {} given up",
        r.nack,
        c.media_packets_lost,
        c.nacked_packets,
        c.nack_requests,
        c.retransmissions_sent,
        c.retransmissions_lost,
        c.nack_give_ups
    )?;
    if r.fec != "off" {
        writeln!(
            out,
            "  loss protection ({}): {} repair packets ({:.1} % of the video bytes), {} received, \
             {} media packets recovered",
            r.fec, c.fec_packets_sent, c.fec_share_pct, c.fec_packets_received, c.fec_recovered
        )?;
    }
    if let Some(path) = &r.telemetry {
        writeln!(out, "telemetry: {path} ({} lines)", c.intervals)?;
    }
    Ok(())
}

//! `rtc-client sim`: run one simulated call over a scenario and report its QoE.

use super::PathArgs;
use super::link::parse_duration;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pacer::OnnxPolicy;
use pacer::telemetry::{CwndMode, IntervalRecord, QoeRecord, TelemetryWriter};
use rtc_client::call::{BweChoice, NackChoice, PolicyChoice, SenderOverrides};
use rtc_client::scenario::Scenario;
use rtc_client::sim::{CallConfig, CallResult, HandoverChoice, run_call};
use serde::Serialize;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// Shortest fixed queue limit `--policy fixed:<ms>` accepts, ms.
const FIXED_MIN_MS: u64 = 50;
/// Longest fixed queue limit `--policy fixed:<ms>` accepts, ms.
const FIXED_MAX_MS: u64 = 10_000;
/// Longest decision interval: the forecast and the observed record cover 120 s.
const MAX_INTERVAL: Duration = Duration::from_secs(120);
/// How long the call runs before a spinner appears on stderr.
const PROGRESS_AFTER: Duration = Duration::from_secs(2);

/// `rtc-client sim` arguments.
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Scenario: a shipped name (traces/scenarios/NAME.toml) or a path to a .toml file.
    #[arg(long, value_name = "NAME|FILE")]
    scenario: String,
    /// Queue policy: default (WebRTC's fixed 2000 ms), random, heuristic, fixed:<ms> with 50 to
    /// 10000 ms, or learned:<card> (a model card such as models/policy.json, with its ONNX file
    /// beside it; checked at load).
    #[arg(long, value_name = "POLICY", default_value = "default", value_parser = parse_policy)]
    policy: PolicyChoice,
    /// Handover forecast the policy reads.
    #[arg(long, value_enum, default_value_t = HandoverArg::Oracle)]
    handover: HandoverArg,
    #[command(flatten)]
    sender: SenderArgs,
    /// Call length, e.g. 90s, 10m, 1h [default: the scenario's call.duration_s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
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
    /// Print one JSON object instead of the text summary.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    paths: PathArgs,
}

/// The sender's options on the command line. Each flag is optional: a flag given beats the
/// scenario file's `[sender]` table, which beats the default
/// ([`rtc_client::call::options`]).
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct SenderArgs {
    /// Loss recovery: libwebrtc (RTT-aware NACK with limits, RTX), stock (webrtc-rs's NACK pair)
    /// or off [default: the scenario file's sender.nack, else libwebrtc].
    #[arg(long, value_enum)]
    pub nack: Option<NackArg>,
    /// Bandwidth estimator: googcc (this project's libwebrtc-faithful GoogCC) or webrtc-rs
    /// (webrtc-rs's own Gcc) [default: the scenario file's sender.bwe, else googcc].
    #[arg(long, value_enum)]
    pub bwe: Option<BweArg>,
    /// Congestion window (libwebrtc's WebRTC-CongestionWindow): pushback (libwebrtc's default:
    /// the encoder drops frames while outstanding data fills the window), pacer (the pacer holds
    /// media while it does, AlphaRTC-style) or off [default: the scenario file's sender.cwnd,
    /// else pushback].
    #[arg(long, value_enum)]
    pub cwnd: Option<CwndArg>,
    /// Flush the video stream's queued packets from the pacer when a new key frame is queued
    /// (modern libwebrtc's WebRTC-Pacer-KeyframeFlushing). `--keyframe-flush` alone turns it on,
    /// `--keyframe-flush=off` off (also true/false, yes/no, 1/0) [default: the scenario file's
    /// sender.keyframe_flush, else off].
    #[arg(
        long,
        value_name = "on|off",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "on",
        hide_possible_values = true,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub keyframe_flush: Option<bool>,
}

impl SenderArgs {
    /// What the flags set (what they leave out comes from the scenario file or the default).
    pub fn overrides(&self) -> SenderOverrides {
        SenderOverrides {
            bwe: self.bwe.map(BweArg::choice),
            nack: self.nack.map(NackArg::choice),
            cwnd: self.cwnd.map(CwndArg::choice),
            keyframe_flush: self.keyframe_flush,
        }
    }
}

/// Where the policy's handover forecast comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HandoverArg {
    /// The scenario's ground-truth handover timeline for the next 120 s (evaluation only).
    Oracle,
    /// The paper's live predictor: the last 120 s of handovers, repeated (8 evenly spaced ones
    /// before 120 s were seen).
    Mirror,
    /// SGP4 over the scenario's own constellation, at both ends (orbit scenarios only, such as
    /// sparse-leo).
    Orbital,
}

impl HandoverArg {
    /// The simulator's choice.
    pub fn choice(self) -> HandoverChoice {
        match self {
            Self::Oracle => HandoverChoice::Oracle,
            Self::Mirror => HandoverChoice::Mirror,
            Self::Orbital => HandoverChoice::Orbital,
        }
    }

    fn as_str(self) -> &'static str {
        self.choice().as_str()
    }
}

/// Which bandwidth estimator the call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BweArg {
    /// libwebrtc's GoogCC: trendline delay detector, AIMD, loss-based, acknowledged rate.
    Googcc,
    /// webrtc-rs's own Gcc.
    #[value(name = "webrtc-rs")]
    WebrtcRs,
}

impl BweArg {
    /// The simulator's choice.
    pub fn choice(self) -> BweChoice {
        match self {
            Self::Googcc => BweChoice::GoogCc,
            Self::WebrtcRs => BweChoice::WebrtcRs,
        }
    }
}

/// Where the congestion window acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CwndArg {
    /// Encoder pushback: frames dropped in proportion as the window fills (libwebrtc's default).
    Pushback,
    /// The pacer holds everything but audio and a 500-ms keep-alive while the window is full.
    Pacer,
    /// No congestion window.
    Off,
}

impl CwndArg {
    /// The simulator's choice.
    pub fn choice(self) -> CwndMode {
        match self {
            Self::Pushback => CwndMode::Pushback,
            Self::Pacer => CwndMode::Pacer,
            Self::Off => CwndMode::Off,
        }
    }
}

/// Which NACK generator and responder the call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NackArg {
    /// webrtc-rs's stock NACK generator (10 NACKs per packet at most) and responder, no RTX.
    Stock,
    /// libwebrtc's behaviour: re-NACK after one RTT, 10 tries, bounded list, resend suppression,
    /// a retransmission budget, RTX.
    Libwebrtc,
    /// No NACK.
    Off,
}

impl NackArg {
    /// The simulator's choice.
    pub fn choice(self) -> NackChoice {
        match self {
            Self::Stock => NackChoice::Stock,
            Self::Libwebrtc => NackChoice::Libwebrtc,
            Self::Off => NackChoice::Off,
        }
    }
}

/// Parses `default`, `random`, `heuristic` or `fixed:<ms>` (50..=10000 ms).
pub(crate) fn parse_policy(text: &str) -> Result<PolicyChoice, String> {
    match text {
        "default" => return Ok(PolicyChoice::Default),
        "random" => return Ok(PolicyChoice::Random),
        "heuristic" => return Ok(PolicyChoice::Heuristic),
        _ => {}
    }
    if let Some(ms) = text.strip_prefix("fixed:") {
        let ms: u64 = ms
            .trim_end_matches("ms")
            .parse()
            .map_err(|_| format!("fixed:<ms> needs a whole number of ms, got {ms:?}"))?;
        if !(FIXED_MIN_MS..=FIXED_MAX_MS).contains(&ms) {
            return Err(format!(
                "the fixed queue limit must be {FIXED_MIN_MS} to {FIXED_MAX_MS} ms, got {ms} ms"
            ));
        }
        return Ok(PolicyChoice::Fixed(Duration::from_millis(ms)));
    }
    if let Some(card) = text.strip_prefix("learned:") {
        // A model that does not load is an error here, not the pacer's silent 2000-ms fallback:
        // an experiment asked for this model, and a run of something else would mislead.
        let model = OnnxPolicy::load(card).map_err(|e| format!("cannot use {card}: {e}"))?;
        return Ok(PolicyChoice::Learned(Arc::new(model)));
    }
    Err(
        "use default, random, heuristic, fixed:<ms> (e.g. fixed:900) or learned:<card> (e.g. \
         learned:models/policy.json)"
            .into(),
    )
}

/// Parses the decision interval: 1 s to 120 s.
pub(crate) fn parse_interval(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d > MAX_INTERVAL {
        return Err("the decision interval may be at most 120 s (the forecast horizon)".into());
    }
    Ok(d)
}

/// The policy's name as telemetry writes it.
pub(crate) fn policy_name(policy: &PolicyChoice) -> String {
    policy.name()
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
    handover: &'static str,
    nack: &'static str,
    bwe: &'static str,
    cwnd: &'static str,
    keyframe_flush: bool,
    duration_s: f64,
    interval_s: f64,
    qoe: QoeRecord,
    counts: Counts,
    intervals: Vec<IntervalLine>,
    telemetry: Option<String>,
}

/// Runs `rtc-client sim`; `epoch` is the instant the simulated call's clock starts at.
pub fn run(args: SimArgs, epoch: Instant) -> Result<()> {
    let paths = args.paths.resolve();
    tracing::debug!(root = %paths.root.display(), data = %paths.data.display(), "paths");
    let scenario = Scenario::load(&args.scenario, &paths)?;
    let duration = args.duration.unwrap_or_else(|| scenario.default_duration());
    // Open the telemetry file first: a bad path fails before any work.
    let mut telemetry = match &args.telemetry {
        Some(path) => Some(TelemetryWriter::new(BufWriter::new(
            File::create(path)
                .with_context(|| format!("cannot create the telemetry file {}", path.display()))?,
        ))),
        None => None,
    };
    let realization = scenario
        .realize(args.seed, duration)
        .with_context(|| format!("cannot build the scenario {}", scenario.origin))?;
    let mut config = CallConfig::from_realization(&realization, args.policy.clone());
    config.decision_interval = args.interval;
    config.handover = args.handover.choice();
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

    if let (Some(writer), Some(path)) = (telemetry.as_mut(), &args.telemetry) {
        write_telemetry(writer, &result.telemetry, path)?;
        tracing::info!(file = %path.display(), lines = result.telemetry.len(), "telemetry written");
    }

    let report = SimReport {
        schema: "leopace.sim.v1",
        scenario: scenario.name(),
        file: &scenario.origin,
        call_id: &config.call_id,
        seed: args.seed,
        policy: policy_name(&args.policy),
        handover: args.handover.as_str(),
        nack: config.nack.as_str(),
        bwe: config.bwe.as_str(),
        cwnd: config.sender().cwnd_name(),
        keyframe_flush: config.keyframe_flush,
        duration_s: duration.as_secs_f64(),
        interval_s: args.interval.as_secs_f64(),
        qoe: result.qoe.to_record(),
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
         cwnd {}, keyframe flush {}",
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
        if r.keyframe_flush { "on" } else { "off" }
    )?;
    writeln!(
        out,
        "{:>8} {:>8} {:>9} {:>12} {:>12} {:>12} {:>7} {:>12}",
        "interval",
        "start_s",
        "action_ms",
        "ho_forecast",
        "ho_observed",
        "bitrate_kbps",
        "freezes",
        "p95_delay_ms"
    )?;
    for i in &r.intervals {
        writeln!(
            out,
            "{:>8} {:>8.0} {:>9} {:>12} {:>12} {:>12.1} {:>7} {:>12.1}",
            i.index,
            i.start_s,
            i.action_ms,
            i.handovers_forecast,
            i.handovers_observed,
            i.video_bitrate_kbps,
            i.freeze_count,
            i.e2e_delay_p95_ms
        )?;
    }
    let q = &r.qoe;
    writeln!(
        out,
        "call: {:.1} kbit/s, {} freezes ({:.2} per minute, {} ms frozen), {:.1} fps",
        q.video_bitrate_kbps, q.freeze_count, q.freezes_per_min, q.total_freeze_ms, q.frame_rate
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
    if let Some(path) = &r.telemetry {
        writeln!(out, "telemetry: {path} ({} lines)", c.intervals)?;
    }
    Ok(())
}

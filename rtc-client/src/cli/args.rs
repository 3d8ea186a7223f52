//! The argument types and parsers several commands share: where the scenarios are, durations,
//! queue policies, decision intervals, the sender's flags, and the options `experiment` and
//! `collect` both take.

use anyhow::Result;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pacer::OnnxPolicy;
use pacer::{CwndMode, Gated};
use rtc_client::call::{
    ActionSet, BweChoice, FecChoice, NackChoice, PolicyChoice, SenderOverrides, TimedActions,
    TimingError,
};
use rtc_client::experiment::batch::{self, BatchError, FinishedCall};
use rtc_client::experiment::run::{CallSettings, CellCall};
use rtc_client::experiment::shard::Shard;
use rtc_client::forecast::{ForecastError, ForecastSpec};
use rtc_client::live::auth::Token;
use rtc_client::media::playout::CompletionModel;
use rtc_client::scenario::{Scenario, ScenarioPaths};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Shortest queue limit `--policy fixed:<ms>` and `gated:<ms>[/<ms>]` accept, ms.
const LIMIT_MIN_MS: u64 = 50;
/// Longest queue limit `--policy fixed:<ms>` and `gated:<ms>[/<ms>]` accept, ms.
const LIMIT_MAX_MS: u64 = 10_000;
/// Longest decision interval: the forecast and the observed record cover 120 s.
const MAX_INTERVAL: Duration = Duration::from_secs(120);
/// Longest call the commands accept: 24 h.
const MAX_DURATION: Duration = Duration::from_secs(86_400);

/// Where scenarios and the shared data are.
#[derive(Debug, Clone, Args)]
pub struct PathArgs {
    /// Workspace root holding traces/scenarios/ [default: $LEOPACE_ROOT, else the nearest
    /// ancestor of the current directory holding traces/scenarios, else the build checkout].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Shared data directory that `data:` files resolve against [default: $LEOPACE_DATA, else
    /// ROOT/../shared/data].
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
}

impl PathArgs {
    /// The paths, from the arguments, the environment and the current directory.
    pub fn resolve(&self) -> ScenarioPaths {
        let env = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        ScenarioPaths::discover(
            self.root.clone().or_else(|| env("LEOPACE_ROOT")),
            self.data.clone().or_else(|| env("LEOPACE_DATA")),
            &cwd,
        )
    }
}

/// Parses `10m`, `90s`, `1h30m` (humantime), refusing zero and more than a day.
pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    if text.starts_with('-') {
        return Err(format!(
            "a duration cannot be negative, got {text} (use e.g. 90s, 10m, 1h)"
        ));
    }
    let d = humantime::parse_duration(text).map_err(|e| format!("{e} (use e.g. 90s, 10m, 1h)"))?;
    if d < Duration::from_secs(1) {
        return Err("the call must last at least 1 s".into());
    }
    if d > MAX_DURATION {
        return Err("the call may last at most 24 h".into());
    }
    Ok(d)
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
    /// Loss protection: libwebrtc (adaptive FlexFEC, hybrid NACK/FEC from the receiver reports'
    /// loss, the RTT and the target, as a browser runs it), off, or fixed:<media>/<repair> (e.g.
    /// fixed:10/2: every 10 media packets get 2 repair packets) [default: the scenario file's
    /// sender.fec, else libwebrtc].
    #[arg(long, value_name = "MODE", value_parser = parse_fec)]
    pub fec: Option<FecChoice>,
}

/// The forecast timing error a simulation adds to every predicted handover instant the timed
/// actions see (`timed` policies only).
#[derive(Debug, Clone, Copy, Args)]
pub struct TimingArgs {
    /// Moves every predicted handover instant by MS milliseconds (negative: the forecast is
    /// early), as a real call's clock offset would.
    #[arg(long, value_name = "MS", default_value_t = 0, allow_hyphen_values = true, value_parser = clap::value_parser!(i64).range(-10_000..=10_000))]
    pub timing_offset: i64,
    /// Adds a uniform jitter of up to +-MS milliseconds to each predicted instant, drawn from the
    /// call seed.
    #[arg(long, value_name = "MS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=10_000))]
    pub timing_jitter: u64,
    /// The receiver's base minimum playout delay, ms: every frame renders at least this long
    /// after its expected completion (libwebrtc's `base_minimum_playout_delay`, a browser's
    /// `jitterBufferTarget`). 0, the default, is what a browser does unless told otherwise.
    #[arg(long, value_name = "MS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=10_000))]
    pub playout_floor: u64,
    /// The receiver also sends (a two-way call), so it knows the RTCP round-trip time and its
    /// jitter delay covers min(0.9 x RTT, 200 ms) once retransmissions are common, as
    /// libwebrtc's does. Without it the receiver is receive-only, as Chromium receiving our
    /// video: no round-trip term.
    #[arg(long)]
    pub receiver_rtt: bool,
    /// The receiver raises its own minimum playout delay around the handovers its own forecast
    /// (the --handover source) predicts, by the sender's playout-raise rule sized from its own
    /// repair measurements: a receiver behind the dish does this with any sender, a browser's
    /// included. Needs a --handover source other than none.
    #[arg(long)]
    pub receiver_raise: bool,
    /// How the receiver learns when a frame is expected to be complete, the instant its playout
    /// delay counts from (docs/architecture.md, "The receiver as Chromium runs it").
    #[arg(long, value_enum, default_value_t = CompletionChoice::Average)]
    pub completion_model: CompletionChoice,
}

/// `--completion-model`: a [`CompletionModel`] by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum CompletionChoice {
    /// Capture plus a 64-frame average of the transit: the closer to Chromium 156's playout delay
    /// over starlink and lagos-trace.
    #[default]
    Average,
    /// libwebrtc's TimestampExtrapolator (a least-squares fit of arrival against timestamp with
    /// a delay-change detector): the closer over terrestrial-lte.
    Extrapolator,
}

impl CompletionChoice {
    /// The model this name stands for.
    pub fn model(self) -> CompletionModel {
        match self {
            Self::Average => CompletionModel::default(),
            Self::Extrapolator => CompletionModel::Extrapolator,
        }
    }
}

impl TimingArgs {
    /// `--playout-floor`.
    pub fn playout_floor(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.playout_floor)
    }

    /// The timing error the flags ask for.
    pub fn error(&self) -> TimingError {
        TimingError {
            offset_ms: self.timing_offset,
            jitter_ms: self.timing_jitter,
        }
    }
}

/// `--fec`: a [`FecChoice`] by name.
/// The bearer token given as `--token TEXT` or `--token-file FILE` (clap keeps them apart),
/// checked ([`Token::parse`]).
///
/// # Errors
///
/// Naming the flag, when the file cannot be read or the token is too weak.
pub fn given_token(text: Option<&str>, file: Option<&Path>) -> Result<Option<Token>> {
    use anyhow::Context;
    Ok(match (text, file) {
        (Some(text), _) => Some(Token::parse(text).context("--token")?),
        (None, Some(path)) => Some(Token::read_file(path).context("--token-file")?),
        (None, None) => None,
    })
}

fn parse_fec(text: &str) -> Result<FecChoice, String> {
    FecChoice::parse(text).map_err(|e| e.to_string())
}

impl SenderArgs {
    /// What the flags set (what they leave out comes from the scenario file or the default).
    pub fn overrides(&self) -> SenderOverrides {
        SenderOverrides {
            bwe: self.bwe.map(BweArg::choice),
            nack: self.nack.map(NackArg::choice),
            cwnd: self.cwnd.map(CwndArg::choice),
            keyframe_flush: self.keyframe_flush,
            fec: self.fec,
        }
    }
}

/// A forecast spec for a simulated call ([`ForecastSpec::parse`], refusing the sources only a
/// real call has).
pub fn parse_sim_forecast(text: &str) -> Result<ForecastSpec, String> {
    let spec = ForecastSpec::parse(text)?;
    if spec.needs_real_time() {
        return Err(ForecastError::NotInSimulation(spec.name()).to_string());
    }
    Ok(spec)
}

/// A forecast spec for a real call ([`ForecastSpec::parse`]).
pub fn parse_forecast(text: &str) -> Result<ForecastSpec, String> {
    ForecastSpec::parse(text)
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

/// Parses `default`, `random`, `random-joint`, `heuristic`, `fixed:<ms>` (50..=10000 ms),
/// `gated:<ms>[/<ms>]`, `timed...`, `path-arm:<output>` or `learned:<card>`.
pub(crate) fn parse_policy(text: &str) -> Result<PolicyChoice, String> {
    match text {
        "default" => return Ok(PolicyChoice::Default),
        "random" => return Ok(PolicyChoice::Random),
        "random-joint" => return Ok(PolicyChoice::RandomJoint),
        "heuristic" => return Ok(PolicyChoice::Heuristic),
        _ => {}
    }
    if let Some(ms) = text.strip_prefix("fixed:") {
        return parse_limit_ms(ms, "fixed:<ms>", "fixed").map(PolicyChoice::Fixed);
    }
    if let Some(limits) = text.strip_prefix("gated:") {
        let gated = match limits.split_once('/') {
            Some((busy, quiet)) => Gated::with_quiet(
                parse_limit_ms(busy, "gated:<ms>/<ms>", "gated")?,
                parse_limit_ms(quiet, "gated:<ms>/<ms>", "gated quiet")?,
            ),
            None => Gated::new(parse_limit_ms(limits, "gated:<ms>", "gated")?),
        };
        return Ok(PolicyChoice::Gated(gated));
    }
    if let Some(timed) = text.strip_prefix("timed") {
        let (actions, limit) = match timed.split_once('@') {
            Some((actions, limit)) => (actions, Some(limit)),
            None => (timed, None),
        };
        let actions = match actions {
            "" => TimedActions::all(),
            _ => match actions.strip_prefix(':') {
                Some(file) if file.to_ascii_lowercase().ends_with(".toml") => {
                    TimedActions::from_file(Path::new(file))?
                }
                Some(names) => TimedActions::from_set(ActionSet::parse(names)?),
                None => return Err(format!("unknown policy {text:?}: {POLICY_NAMES}")),
            },
        };
        let limit = match limit {
            Some(limit) if limit.starts_with("timed") => {
                return Err(format!(
                    "timed@<policy> takes the queue limit of a policy without actions, got {limit}"
                ));
            }
            Some(limit) => {
                let limit = parse_policy(limit)?;
                if limit.controls_actions() {
                    return Err(format!(
                        "timed@<policy> takes the queue limit of a policy without actions, but \
                         {} chooses the actions itself; run it on its own",
                        limit.name()
                    ));
                }
                Some(Box::new(limit))
            }
            None => None,
        };
        return Ok(PolicyChoice::Timed { actions, limit });
    }
    if text.starts_with(pacer::policy::ARM_PREFIX) {
        return pacer::policy::PathArm::parse(text).map(PolicyChoice::PathArm);
    }
    if let Some(card) = text.strip_prefix("learned:") {
        if card.is_empty() {
            return Err(
                "learned:<card> needs the path of a model card, e.g. learned:models/policy.json"
                    .into(),
            );
        }
        if card.to_ascii_lowercase().ends_with(".onnx") {
            return Err(format!(
                "{card} is the ONNX graph; learned: takes its model card, the .json file beside \
                 it (e.g. learned:{})",
                Path::new(card).with_extension("json").display()
            ));
        }
        // A model that does not load is an error here, not the pacer's silent 2000-ms fallback:
        // an experiment asked for this model, and a run of something else would mislead.
        let model = OnnxPolicy::load(card).map_err(|e| format!("cannot use {card}: {e}"))?;
        return Ok(PolicyChoice::Learned(Arc::new(model)));
    }
    Err(format!("unknown policy {text:?}: {POLICY_NAMES}"))
}

/// One queue limit of a `fixed:` or `gated:` policy: whole ms (an `ms` suffix allowed), 50 to
/// 10 000. `form` is the policy's syntax and `what` the limit's name, for the errors.
fn parse_limit_ms(text: &str, form: &str, what: &str) -> Result<Duration, String> {
    let ms: u64 = text
        .trim_end_matches("ms")
        .parse()
        .map_err(|_| format!("{form} needs a whole number of ms, got {text:?}"))?;
    if !(LIMIT_MIN_MS..=LIMIT_MAX_MS).contains(&ms) {
        return Err(format!(
            "the {what} queue limit must be {LIMIT_MIN_MS} to {LIMIT_MAX_MS} ms, got {ms} ms"
        ));
    }
    Ok(Duration::from_millis(ms))
}

/// What `--policy` accepts, for its errors.
const POLICY_NAMES: &str = "use default, random, random-joint, heuristic, fixed:<ms> (e.g. fixed:900), \
     gated:<ms>[/<ms>] (e.g. gated:200: 200 ms where a handover is forecast, 500 where none \
     is), \
     learned:<card> (e.g. learned:models/policy.json), timed[:<actions>|:<file.toml>][@<policy>] \
     (e.g. timed, timed:hold+guard, timed:traces/actions/default.toml@fixed:200), or \
     path-arm:<profile>@<limit> (an arm of the path-aware menu, e.g. path-arm:none@500)";

/// Parses the decision interval: 1 s to 120 s.
pub(crate) fn parse_interval(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d > MAX_INTERVAL {
        return Err("the decision interval may be at most 120 s (the forecast horizon)".into());
    }
    Ok(d)
}

/// `--shard`: `K/N`.
fn parse_shard(text: &str) -> Result<Shard, String> {
    Shard::parse(text).map_err(|e| e.to_string())
}

/// The policy's name as telemetry writes it.
pub(crate) fn policy_name(policy: &PolicyChoice) -> String {
    policy.name()
}

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
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration, allow_hyphen_values = true)]
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
    #[arg(long, value_name = "SOURCE", default_value = "oracle", value_parser = parse_sim_forecast)]
    pub handover: ForecastSpec,
    #[command(flatten)]
    pub timing: TimingArgs,
    /// The sender of every call (as `sim`'s flags, recorded in the telemetry): each flag given
    /// beats the scenario file's `[sender]` table, which beats the default.
    #[command(flatten)]
    pub sender: SenderArgs,
    /// Output directory; it must not exist or be empty (see --force and --resume).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Write into a non-empty --out, replacing the telemetry, plots and reports a previous run
    /// left there.
    #[arg(long, conflicts_with = "resume")]
    pub force: bool,
    /// Run only shard K of N: the calls whose index in the plan (scenario, then policy, then
    /// seed) is K-1 modulo N. A shard writes its calls' telemetry and run.json; `rtc-client
    /// merge` joins the N shard directories into what one run writes.
    #[arg(long, value_name = "K/N", default_value = "1/1", value_parser = parse_shard)]
    pub shard: Shard,
    /// Finish the run that --out holds (killed, or stopped by a failure) with the same
    /// arguments: calls recorded as done are kept, the others run. An empty or missing --out
    /// starts afresh, so a job can always pass it.
    #[arg(long)]
    pub resume: bool,
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
        self.handover.name()
    }

    /// What every call shares.
    pub fn settings(&self) -> CallSettings {
        CallSettings {
            duration: self.duration,
            interval: self.interval,
            handover: self.handover.clone(),
            sender: self.sender.overrides(),
            timing_error: self.timing.error(),
            playout_floor: self.timing.playout_floor(),
            receiver_rtt: self.timing.receiver_rtt,
            receiver_raise: self.timing.receiver_raise,
            completion: self.timing.completion_model.model(),
        }
    }

    /// Runs every call of `specs` on `--jobs` threads with a progress bar on stderr, writing each
    /// call's telemetry under `--out` and handing it to `on_call` (see [`batch::run_calls`]); the
    /// result is in `specs` order.
    pub fn run_calls(
        &self,
        scenarios: &[Scenario],
        policies: &[PolicyChoice],
        specs: &[CellCall],
        epoch: Instant,
        on_call: impl Fn(usize, &FinishedCall) -> Result<(), BatchError> + Sync,
    ) -> Result<Vec<FinishedCall>> {
        let threads = self.threads();
        tracing::info!(
            calls = specs.len(),
            threads,
            duration_s = self.duration.as_secs(),
            "simulating"
        );
        let bar =
            ProgressBar::with_draw_target(Some(specs.len() as u64), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} [{bar:40}] {pos}/{len} calls ({elapsed}, ETA {eta}) {msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(format!("on {threads} threads"));
        bar.enable_steady_tick(Duration::from_millis(200));
        let finished = batch::run_calls(
            scenarios,
            policies,
            specs,
            threads,
            &self.out,
            self.settings(),
            epoch,
            |index, call| {
                on_call(index, call)?;
                bar.inc(1);
                Ok(())
            },
        );
        bar.finish_and_clear();
        Ok(finished?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_and_out_of_range_ones_are_refused() {
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("2d").is_err());
        assert!(parse_duration("ten").is_err());
    }

    #[test]
    fn a_gated_policy_parses_its_limits_and_names_what_is_wrong() {
        assert_eq!(parse_policy("gated:200").unwrap().name(), "gated:200");
        assert_eq!(
            parse_policy("gated:200ms/2000").unwrap().name(),
            "gated:200/2000"
        );
        assert_eq!(parse_policy("gated:200/500").unwrap().name(), "gated:200");
        assert_eq!(
            parse_policy("timed@gated:200").unwrap().name(),
            "timed@gated:200"
        );
        let bad = parse_policy("gated:fast").unwrap_err();
        assert!(
            bad.contains("gated:<ms> needs a whole number of ms"),
            "{bad}"
        );
        let bad = parse_policy("gated:200/20").unwrap_err();
        assert!(
            bad.contains("the gated quiet queue limit must be 50 to 10000 ms, got 20 ms"),
            "{bad}"
        );
        let bad = parse_policy("fixed:20000").unwrap_err();
        assert!(
            bad.contains("the fixed queue limit must be 50 to 10000 ms"),
            "{bad}"
        );
    }
}

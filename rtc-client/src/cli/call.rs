//! `rtc-client call`: one real call to an `rtc-client answer`, optionally over an emulated link.

use super::args::{PathArgs, SenderArgs, parse_duration, parse_interval, parse_policy};
use anyhow::{Context, Result};
use clap::Args;
use pacer::telemetry::TelemetryWriter;
use rtc_client::call::{PolicyChoice, SenderOptions, VideoChoice};
use rtc_client::durable::SyncedFile;
use rtc_client::forecast::ForecastSpec;
use rtc_client::live::call::{
    LinkSetup, LiveCallConfig, LiveCallOutcome, StatusEvent, run as run_call,
};
use rtc_client::live::status::{process_cpu_time, summary};
use rtc_client::scenario::Scenario;
use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// `rtc-client call` arguments.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The answerer's signalling URL, http:// or https:// (then with --ca).
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8443")]
    peer: String,
    /// The answerer's bearer token (what `answer` printed at start; needed beyond loopback).
    /// Visible to other users in the process list: prefer --token-file.
    #[arg(long, value_name = "TOKEN", conflicts_with = "token_file")]
    token: Option<String>,
    /// Like --token, read from FILE (its only content).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// For an https:// peer: the PEM certificates its certificate is checked against (its
    /// CA's, or its own if self-signed).
    #[arg(long, value_name = "PEM")]
    ca: Option<PathBuf>,
    /// Call length, e.g. 30s, 10m.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration, allow_hyphen_values = true)]
    duration: Duration,
    /// Queue policy: default (WebRTC's fixed 2000 ms), random, heuristic, fixed:<ms>,
    /// gated:<ms>[/<ms>] (the first limit where a handover is forecast, the second, 500 ms unless
    /// named, where none is), learned:<card>, or timed[:<actions>|:<file.toml>][@<policy>] (handover-timed actions over the
    /// heuristic's limit or the named policy's).
    #[arg(long, value_name = "POLICY", default_value = "default", value_parser = parse_policy)]
    policy: PolicyChoice,
    /// Handover source: none, mirror, calibrated (every slot boundary with a switch
    /// probability, learned from the --link scenario's past), calibrated:dish:ADDR (learned from
    /// the dish detector's verdicts), orbital:TLE@LAT,LON, dish:ADDR (a dish's gRPC API, real or
    /// simulated) or scenario (the --link scenario's truth). A source that fails falls back to
    /// 2000 ms and the call goes on.
    #[arg(long, value_name = "SOURCE", default_value = "none", value_parser = super::args::parse_forecast)]
    handover: ForecastSpec,
    /// Emulate this scenario's links between the peers (a shipped name or a .toml file): an
    /// in-process UDP relay applies its forward link to the media and its reverse link to the
    /// feedback, in real time.
    #[arg(long, value_name = "NAME|FILE")]
    link: Option<String>,
    /// Decision interval, 1 s to 120 s.
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = parse_interval)]
    decision_interval: Duration,
    /// Write the telemetry (one JSON line per decision interval, the simulator's schema) to FILE.
    #[arg(long, value_name = "FILE")]
    telemetry: Option<PathBuf>,
    /// Seed of the link draw, the encoder and the random policy.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The IP the caller's peer connection and the relay bind.
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    bind: IpAddr,
    /// The video sent: synthetic (the simulator's codec model; only rtc-client's receiver reads
    /// it) or vp8 (a moving test pattern with its frame number, encoded by libvpx at the
    /// congestion controller's target: what a browser decodes; needs a build with the `vp8`
    /// feature, which links libvpx).
    #[arg(
        long,
        value_name = "VIDEO",
        default_value = "synthetic",
        value_parser = VideoChoice::parse
    )]
    video: VideoChoice,
    #[command(flatten)]
    sender: SenderArgs,
    #[command(flatten)]
    paths: PathArgs,
}

/// Runs `rtc-client call`.
pub fn run(args: CallArgs) -> Result<()> {
    // Everything that can fail before the network does so first.
    args.video.available().map_err(anyhow::Error::msg)?;
    let mut options = SenderOptions::default();
    let link = match &args.link {
        Some(name) => {
            let paths = args.paths.resolve();
            let scenario = Scenario::load(name, &paths)?;
            let realization = scenario
                .realize(args.seed, args.duration)
                .with_context(|| format!("cannot build the scenario {}", scenario.origin))?;
            options = realization.sender;
            Some(LinkSetup::from_realization(&realization))
        }
        None => None,
    };
    let options = options.overridden_by(&args.sender.overrides());
    let mut telemetry = match &args.telemetry {
        // Each record is committed (one write, then fsync) as its interval closes: a call that
        // dies keeps every interval before it (docs/architecture.md, "Sweeps, shards and
        // resume").
        Some(path) => Some(TelemetryWriter::new(
            SyncedFile::create(path)
                .with_context(|| format!("cannot create the telemetry file {}", path.display()))?,
        )),
        None => None,
    };
    let token = super::args::given_token(args.token.as_deref(), args.token_file.as_deref())?;
    let config = LiveCallConfig {
        peer: args.peer.clone(),
        token,
        ca: args.ca.clone(),
        duration: args.duration,
        policy: args.policy.clone(),
        handover: args.handover.clone(),
        link,
        decision_interval: args.decision_interval,
        sender: options,
        seed: args.seed,
        local_ip: args.bind,
        video: args.video,
        shadow: None,
        shadow_compared: None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut telemetry_error = None;
    let cpu_start = process_cpu_time();
    let outcome = runtime.block_on(async {
        let cancel = async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        run_call(
            &config,
            |event| {
                let mut out = std::io::stdout().lock();
                let _ = match event {
                    StatusEvent::Connected { call_id, setup } => writeln!(
                        out,
                        "connected: call {call_id} to {} in {} ms{}",
                        config.peer,
                        setup.as_millis(),
                        config
                            .link
                            .as_ref()
                            .map_or(String::new(), |l| format!(" over the {} link", l.scenario))
                    ),
                    StatusEvent::Status(line) => writeln!(out, "{line}"),
                    StatusEvent::Decision(d) => writeln!(out, "decision {d}"),
                    StatusEvent::Interval(record) => {
                        if let Some(writer) = telemetry.as_mut()
                            && let Err(e) = writer.write(record).and_then(|()| writer.flush())
                        {
                            telemetry_error.get_or_insert(e);
                        }
                        Ok(())
                    }
                };
                let _ = out.flush();
            },
            cancel,
        )
        .await
    });
    let outcome: LiveCallOutcome = outcome.context("the call failed")?;
    report(&args, &config, &outcome, cpu_start, telemetry_error)
}

/// The call's summary, and the telemetry file's fate.
fn report(
    args: &CallArgs,
    config: &LiveCallConfig,
    outcome: &LiveCallOutcome,
    cpu_start: Option<Duration>,
    telemetry_error: Option<pacer::telemetry::TelemetryError>,
) -> Result<()> {
    let options = config.sender;
    let mut out = std::io::stdout().lock();
    for line in summary(
        &outcome.call_id,
        outcome.setup_time,
        outcome.duration,
        &outcome.qoe,
        &outcome.decisions,
        &outcome.ended_by,
    ) {
        writeln!(out, "{line}")?;
    }
    writeln!(
        out,
        "  sender: {} frames encoded ({} key, {} PLIs), {} RTP media packets; target {:.0} to {:.0} kbit/s",
        outcome.frames_encoded,
        outcome.key_frames,
        outcome.plis_received,
        outcome.media_packets,
        outcome.target_range_bps.0 / 1000.0,
        outcome.target_range_bps.1 / 1000.0
    )?;
    if let (Some(before), Some(after)) = (cpu_start, process_cpu_time()) {
        let cpu = after.saturating_sub(before);
        writeln!(
            out,
            "  cpu: {:.2} s over {:.1} s = {:.1} % of a core (this process: caller{})",
            cpu.as_secs_f64(),
            outcome.duration.as_secs_f64(),
            100.0 * cpu.as_secs_f64() / outcome.duration.as_secs_f64().max(1e-9),
            if outcome.relay.is_some() {
                " and relay"
            } else {
                ""
            }
        )?;
    }
    if options.fec.is_on() {
        let fec = &outcome.fec;
        writeln!(
            out,
            "  loss protection: {} repair packets ({:.1} % of the video bytes), {} received, {} media \
             packets recovered{}",
            fec.packets_sent,
            fec.share_pct(),
            fec.packets_received,
            fec.packets_recovered,
            if fec.packets_sent == 0 && fec.packets_received == 0 {
                " (none sent: no loss reported, or the answerer did not negotiate FlexFEC)"
            } else {
                ""
            }
        )?;
    }
    if let Some(relay) = &outcome.relay {
        writeln!(
            out,
            "  relay: forward {} datagrams delivered, {} dropped; reverse {} delivered, {} dropped",
            relay.forward.delivered,
            relay.forward.dropped,
            relay.reverse.delivered,
            relay.reverse.dropped
        )?;
    }
    if let Some(path) = &args.telemetry {
        if let Some(e) = telemetry_error {
            return Err(e)
                .with_context(|| format!("cannot write the telemetry file {}", path.display()));
        }
        writeln!(
            out,
            "telemetry: {} ({} lines)",
            path.display(),
            outcome.telemetry.len()
        )?;
    }
    Ok(())
}

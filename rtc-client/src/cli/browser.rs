//! `rtc-client browser`: one call between rtc-client and headless Chromium on loopback,
//! optionally over an emulated link, with both sides' statistics side by side.

use super::args::{
    CompletionChoice, PathArgs, SenderArgs, parse_duration, parse_interval, parse_policy,
};
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use pacer::telemetry::TelemetryWriter;
use rtc_client::call::{PolicyChoice, SenderOptions, VideoChoice};
use rtc_client::durable::SyncedFile;
use rtc_client::forecast::ForecastSpec;
use rtc_client::live::answer::{AnswerConfig, AnswerEvent, AnswerServer, ReceiverRaiseSetup};
use rtc_client::live::call::{LinkSetup, LiveCallConfig, StatusEvent, run as run_call};
use rtc_client::live::chromium::{self, Chromium};
use rtc_client::live::http::{Peer, request};
use rtc_client::live::shadow::ShadowSummary;
use rtc_client::live::signal::{QoeQuery, QoeSnapshot};
use rtc_client::live::web::{WebConfig, WebHandle, WebLink};
use rtc_client::scenario::Scenario;
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Which way the video goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Direction {
    /// rtc-client sends (pacer, GoogCC, NACK/RTX, real VP8) and the browser receives; needs a
    /// build with the `vp8` feature, which links libvpx.
    Receive,
    /// The browser sends its fake camera and rtc-client receives (our NACK generator, TWCC
    /// feedback and jitter buffer under libwebrtc's sender).
    Send,
}

/// `rtc-client browser` arguments.
#[derive(Debug, Args)]
pub struct BrowserArgs {
    /// Call length: seconds (30) or a duration (30s, 2m), counted from the moment Chromium's page
    /// is ready (it has up to 60 s to load).
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = parse_seconds)]
    seconds: Duration,
    /// receive: the browser receives our video; send: the browser sends its fake camera to us.
    #[arg(long, value_enum, default_value = "receive")]
    direction: Direction,
    /// Emulate this scenario's links between rtc-client and the browser (a shipped name or a
    /// .toml file): its forward link carries the video, its reverse link the feedback.
    #[arg(long, value_name = "NAME|FILE")]
    scenario: Option<String>,
    /// Queue policy of our sender (receive direction), as `call --policy`.
    #[arg(long, value_name = "POLICY", default_value = "default", value_parser = parse_policy)]
    policy: PolicyChoice,
    /// Handover source of our sender's policy (receive direction) or of our receiver's own
    /// raise (send direction, --receiver-raise), as `call --handover`.
    #[arg(long, value_name = "SOURCE", default_value = "none", value_parser = super::args::parse_forecast)]
    handover: ForecastSpec,
    /// Send direction: our receiver raises its own minimum playout delay around the handovers
    /// the --handover source predicts for the --scenario's link, with the browser's unchanged
    /// sender (docs/architecture.md, "Handover-timed actions", the receiver's own raise).
    #[arg(long)]
    receiver_raise: bool,
    /// Receive direction, over a --scenario: how our shadow receiver learns when a frame is
    /// expected to be complete, as `sim --completion-model` [default: average].
    #[arg(long, value_enum, value_name = "MODEL")]
    completion_model: Option<CompletionChoice>,
    /// Receive direction, over a --scenario: also run a second shadow receiver with this model on
    /// the same datagrams, so the two models meet the browser on one call (summary.json's
    /// `receiver_compared`).
    #[arg(long, value_enum, value_name = "MODEL")]
    compare_completion_model: Option<CompletionChoice>,
    /// Decision interval of our sender's policy, 1 s to 120 s.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_interval)]
    decision_interval: Duration,
    /// Where the browser's stats (browser-stats.jsonl), our telemetry (telemetry.jsonl), a
    /// screenshot taken halfway (browser-call.png), Chromium's log and summary.json go.
    #[arg(long, value_name = "DIR", default_value = "runs/browser")]
    out: PathBuf,
    /// Seed of the link draw and the test pattern's noise.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Our sender's options (receive direction), as `call`'s: with FEC on (the default) the
    /// offer carries FlexFEC-03 and Chromium is started with the field trials that make it
    /// negotiate and decode it.
    #[command(flatten)]
    sender: SenderArgs,
    #[command(flatten)]
    paths: PathArgs,
}

/// Parses `30` as 30 s, or any duration `parse_duration` takes; at least one second.
fn parse_seconds(text: &str) -> Result<Duration, String> {
    let duration = match text.parse::<u64>() {
        Ok(s) => Duration::from_secs(s),
        Err(_) => parse_duration(text)?,
    };
    if duration < Duration::from_secs(1) {
        return Err(format!("{text:?} is shorter than a second"));
    }
    Ok(duration)
}

/// Runs `rtc-client browser`.
pub fn run(args: BrowserArgs) -> Result<()> {
    // Everything that can fail before the network does so first.
    if args.direction == Direction::Receive {
        VideoChoice::Vp8.available().map_err(anyhow::Error::msg)?;
    }
    let binary = chromium::find()?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let mut options = SenderOptions::default();
    let link = match &args.scenario {
        Some(name) => {
            let scenario = Scenario::load(name, &args.paths.resolve())?;
            let realization = scenario
                .realize(args.seed, args.seconds + Duration::from_secs(30))
                .with_context(|| format!("cannot build the scenario {}", scenario.origin))?;
            options = realization.sender;
            Some(LinkSetup::from_realization(&realization))
        }
        None => None,
    };
    let options = options.overridden_by(&args.sender.overrides());
    if args.receiver_raise {
        if args.direction != Direction::Send {
            bail!(
                "--receiver-raise is for --direction send: it raises our receiver's playout delay"
            );
        }
        if link.is_none() {
            bail!(
                "--receiver-raise needs a --scenario: its link's handovers are what it forecasts"
            );
        }
        if args.handover == ForecastSpec::None {
            bail!("--receiver-raise needs a --handover source (calibrated, oracle, ...), not none");
        }
    }
    for (flag, given) in [
        ("--completion-model", args.completion_model.is_some()),
        (
            "--compare-completion-model",
            args.compare_completion_model.is_some(),
        ),
    ] {
        if given && args.direction != Direction::Receive {
            bail!("{flag} is for --direction receive: it sets our shadow receiver's model");
        }
        if given && link.is_none() {
            bail!("{flag} needs a --scenario: our shadow receiver runs on the relay's datagrams");
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(drive(&args, binary, options, link))
}

async fn drive(
    args: &BrowserArgs,
    binary: PathBuf,
    options: SenderOptions,
    link: Option<LinkSetup>,
) -> Result<()> {
    let events: Arc<Mutex<Vec<AnswerEvent>>> = Arc::default();
    let sink = Arc::clone(&events);
    let web_link = match (args.direction, &link) {
        (Direction::Send, Some(l)) => Some(WebLink {
            forward: l.forward.clone(),
            forward_seed: l.forward_seed,
            reverse: l.reverse.clone(),
            reverse_seed: l.reverse_seed,
        }),
        _ => None,
    };
    let server = AnswerServer::start(
        AnswerConfig {
            listen: "127.0.0.1:0".parse().context("loopback")?,
            allow_non_loopback: false,
            fec: false,
            web: Some(WebConfig {
                stats_out: Some(args.out.join("browser-stats.jsonl")),
                link: web_link,
                ip: None,
            }),
            token: None,
            tls: None,
            receiver_raise: match (args.receiver_raise, &link) {
                (true, Some(l)) => Some(ReceiverRaiseSetup {
                    handover: args.handover.clone(),
                    scenario: l.scenario.clone(),
                    timeline: l.timeline.clone(),
                    seed: args.seed,
                }),
                _ => None,
            },
        },
        move |event| {
            if let AnswerEvent::Second { line, .. } = &event {
                println!("receiver {line}");
            }
            if let Ok(mut e) = sink.lock() {
                e.push(event);
            }
        },
    )
    .await?;
    let addr = server.local_addr();
    let web = server
        .web()
        .cloned()
        .context("the browser bridge is missing")?;
    let mode = match args.direction {
        Direction::Receive => "receive",
        Direction::Send => "send",
    };
    let url = format!("http://{addr}/?mode={mode}");
    println!("chromium {} at {url}", binary.display());
    // Chromium receives FlexFEC-03 only behind its field trials (reference part 6); they are set
    // only when our sender protects, so a call without FEC runs the browser as it ships.
    let fec = args.direction == Direction::Receive && options.fec.is_on();
    let trials: &[&str] = if fec {
        &[chromium::FLEXFEC_TRIALS]
    } else {
        &[]
    };
    let mut browser =
        Chromium::launch(&binary, &url, Some(&args.out.join("chromium.log")), trials)?;
    let launched = tokio::time::Instant::now();
    wait_for_page(&web, &mut browser, &args.out).await?;
    println!(
        "the page is ready {} ms after launch",
        launched.elapsed().as_millis()
    );
    let started = tokio::time::Instant::now();
    let snapshot_at = args.seconds / 2 + Duration::from_secs(1);
    let snapshot = {
        let web = web.clone();
        let at = snapshot_at;
        tokio::spawn(async move {
            tokio::time::sleep(at).await;
            web.snapshot(Duration::from_secs(5)).await
        })
    };
    let result = match args.direction {
        Direction::Receive => receive(args, options, link, addr).await,
        Direction::Send => send(args, &events, addr).await,
    };
    // A call that ended before the snapshot was due (Ctrl-C, a failure) does not wait for it.
    let png = if snapshot.is_finished() || started.elapsed() >= snapshot_at {
        snapshot.await.ok().flatten()
    } else {
        snapshot.abort();
        None
    };
    // One more sample from the page after our side stopped, so its counters cover the call.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    drop(browser);
    let relays = web.stop_relays().await;
    server.shutdown().await;
    let mut summary = result?;
    if let Some(png) = png {
        let path = args.out.join("browser-call.png");
        std::fs::write(&path, png).with_context(|| format!("cannot write {}", path.display()))?;
        summary["screenshot"] = json!(path.display().to_string());
    }
    if let Some(relay) = relays.first() {
        summary["relay"] = json!({
            "forward_delivered": relay.forward.delivered, "forward_dropped": relay.forward.dropped,
            "reverse_delivered": relay.reverse.delivered, "reverse_dropped": relay.reverse.dropped,
        });
    }
    let browser_stats = browser_summary(&web);
    summary["browser"] = browser_stats;
    print_summary(&summary);
    let path = args.out.join("summary.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&summary)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("summary: {}", path.display());
    Ok(())
}

/// How long Chromium has to load the page before the call is given up: a cold start on a
/// loaded 2-core machine has been seen to take more than 8 s.
const PAGE_LOAD_LIMIT: Duration = Duration::from_secs(60);

/// Waits until the page asks the bridge for work, so that `--seconds` counts from a page that
/// is ready; fails at once if Chromium exits first, and after [`PAGE_LOAD_LIMIT`].
async fn wait_for_page(
    web: &WebHandle,
    browser: &mut Chromium,
    out: &std::path::Path,
) -> Result<()> {
    let deadline = tokio::time::Instant::now() + PAGE_LOAD_LIMIT;
    while tokio::time::Instant::now() < deadline {
        if web.wait_for_page(Duration::from_millis(200)).await {
            return Ok(());
        }
        if !browser.running() {
            bail!(
                "Chromium exited before its page loaded: see {}",
                out.join("chromium.log").display()
            );
        }
    }
    bail!(
        "Chromium's page did not load within {PAGE_LOAD_LIMIT:?}: see {}",
        out.join("chromium.log").display()
    )
}

/// Our sender to the browser: `rtc-client call` against the bridge.
async fn receive(
    args: &BrowserArgs,
    options: SenderOptions,
    link: Option<LinkSetup>,
    addr: std::net::SocketAddr,
) -> Result<Value> {
    let config = LiveCallConfig {
        peer: format!("http://{addr}/web"),
        token: None,
        ca: None,
        duration: args.seconds,
        policy: args.policy.clone(),
        handover: args.handover.clone(),
        link,
        decision_interval: args.decision_interval,
        sender: options,
        seed: args.seed,
        local_ip: "127.0.0.1".parse().context("loopback")?,
        video: VideoChoice::Vp8,
        shadow: Some(args.completion_model.unwrap_or_default().model()),
        shadow_compared: args.compare_completion_model.map(CompletionChoice::model),
    };
    let path = args.out.join("telemetry.jsonl");
    // One record committed per interval, as `call --telemetry` does.
    let mut telemetry = TelemetryWriter::new(
        SyncedFile::create(&path).with_context(|| format!("cannot create {}", path.display()))?,
    );
    let mut decisions = Vec::new();
    let mut targets = Vec::new();
    let cancel = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let outcome = run_call(
        &config,
        |event| match event {
            StatusEvent::Connected { setup, .. } => {
                println!("connected to the browser in {} ms", setup.as_millis());
            }
            StatusEvent::Status(line) => {
                targets.push(json!([
                    line.elapsed.as_secs_f64(),
                    line.target_kbps,
                    line.bitrate_kbps,
                    line.limit_ms
                ]));
                println!("{line}");
            }
            StatusEvent::Decision(d) => {
                decisions.push(
                    json!({"index": d.index, "limit_ms": d.queue_time_limit.as_millis() as u64}),
                );
                println!("decision {d}");
            }
            StatusEvent::Interval(record) => {
                let _ = telemetry.write(record).and_then(|()| telemetry.flush());
            }
        },
        cancel,
    )
    .await
    .context("the call to the browser failed")?;
    Ok(json!({
        "direction": "receive",
        "seconds": outcome.duration.as_secs_f64(),
        "ended_by": outcome.ended_by,
        "setup_ms": outcome.setup_time.as_millis() as u64,
        "ours": {
            "frames_sent": outcome.frames_encoded,
            "key_frames": outcome.key_frames,
            "discardable_frames": outcome.frames_discardable,
            "plis_received": outcome.plis_received,
            "nack_requests": outcome.nack_responder.map(|n| n.requests),
            "retransmissions": outcome.nack_responder.map(|n| n.retransmissions),
            "media_packets": outcome.media_packets,
            "fec_packets_sent": outcome.fec.packets_sent,
            "target_kbps_min": outcome.target_range_bps.0 / 1000.0,
            "target_kbps_max": outcome.target_range_bps.1 / 1000.0,
            "qoe_frames_rendered": outcome.qoe.frames_rendered,
            "qoe_freeze_count": outcome.qoe.freeze_count,
            "qoe_total_freeze_ms": outcome.qoe.total_freeze_ms,
            "qoe_bitrate_kbps": outcome.qoe.video_bitrate_kbps,
            "qoe_delay_p95_ms": outcome.qoe.e2e_delay_p95_ms,
            "decisions": decisions,
            "per_second": targets,
        },
        "receiver": outcome.shadow.as_ref().map(shadow_json),
        "receiver_compared": outcome
            .shadow
            .as_ref()
            .and_then(|s| s.compared.as_deref())
            .map(shadow_json),
        "telemetry": path.display().to_string(),
    }))
}

/// The browser to our receiver: wait out the call, then read our receiver's QoE.
async fn send(
    args: &BrowserArgs,
    events: &Mutex<Vec<AnswerEvent>>,
    addr: std::net::SocketAddr,
) -> Result<Value> {
    let started = tokio::time::Instant::now();
    tokio::select! {
        () = tokio::time::sleep(args.seconds) => {}
        _ = tokio::signal::ctrl_c() => println!("interrupted"),
    }
    let call_id = events.lock().ok().and_then(|e| {
        e.iter().find_map(|event| match event {
            AnswerEvent::Started { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
    });
    let Some(call_id) = call_id else {
        bail!(
            "the browser never called: see {}",
            args.out.join("chromium.log").display()
        );
    };
    let peer = Peer::plain(&format!("http://{addr}"))?;
    let response = request(
        &peer,
        "POST",
        &format!("/calls/{call_id}/qoe"),
        Some(&QoeQuery {
            packets_sent: 0,
            take_interval: false,
        }),
        Duration::from_secs(2),
    )
    .await?;
    let snapshot: QoeSnapshot = response.json()?;
    Ok(json!({
        "direction": "send",
        "seconds": started.elapsed().as_secs_f64(),
        "ours": {
            "qoe_frames_rendered": snapshot.total.frames_rendered,
            "qoe_freeze_count": snapshot.total.freeze_count,
            "qoe_total_freeze_ms": snapshot.total.total_freeze_ms,
            "qoe_bitrate_kbps": snapshot.total.video_bitrate_kbps,
            "qoe_delay_p95_ms": snapshot.total.e2e_delay_p95_ms,
            "plis_sent": snapshot.plis_sent,
            "fps_last_second": snapshot.fps_last_second,
            "receiver_raise": args.receiver_raise.then(|| args.handover.name()),
            "frames_raised_by_forecast": snapshot.frames_raised_by_forecast,
        },
    }))
}

/// The browser's last sample, and the availableOutgoingBitrate / targetBitrate series.
fn browser_summary(web: &WebHandle) -> Value {
    let samples = web.samples();
    let last = samples
        .iter()
        .rev()
        .find(|s| s.get("framesDecoded").is_some() || s.get("framesSent").is_some())
        .cloned()
        .unwrap_or(Value::Null);
    let t0 = samples
        .first()
        .and_then(|s| s.get("t_unix_ms"))
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let series: Vec<Value> = samples
        .iter()
        .filter_map(|s| {
            let t = s.get("t_unix_ms")?.as_f64()?;
            Some(json!([
                ((t - t0) / 1000.0 * 10.0).round() / 10.0,
                s.get("availableOutgoingBitrate").and_then(Value::as_f64),
                s.get("targetBitrate").and_then(Value::as_f64),
                s.get("bytesSent")
                    .or_else(|| s.get("bytesReceived"))
                    .and_then(Value::as_u64),
            ]))
        })
        .collect();
    // The browser's video bitrate over its samples, from the byte counter.
    let bytes: Vec<(f64, u64)> = samples
        .iter()
        .filter_map(|s| {
            let t = s.get("t_unix_ms")?.as_f64()?;
            let b = s
                .get("bytesSent")
                .or_else(|| s.get("bytesReceived"))?
                .as_u64()?;
            Some((t, b))
        })
        .filter(|(_, b)| *b > 0)
        .collect();
    let bitrate_kbps = match (bytes.first(), bytes.last()) {
        (Some((t0, b0)), Some((t1, b1))) if t1 > t0 => {
            Some(b1.saturating_sub(*b0) as f64 * 8.0 / (t1 - t0))
        }
        _ => None,
    };
    let frozen_ms = last
        .get("totalFreezesDuration")
        .and_then(Value::as_f64)
        .map(|s| (s * 1000.0).round());
    // Chromium leaves the figure out of some samples: the latest one that has it.
    let available_kbps_last = samples
        .iter()
        .rev()
        .find_map(|s| s.get("availableOutgoingBitrate").and_then(Value::as_f64))
        .map(|b| (b / 1000.0).round());
    // W3C webrtc-stats: the mean time frames spent in the jitter buffer.
    let mean_playout_delay_ms = match (
        last.get("jitterBufferDelay").and_then(Value::as_f64),
        last.get("jitterBufferEmittedCount").and_then(Value::as_f64),
    ) {
        (Some(delay), Some(count)) if count > 0.0 => Some(delay / count * 1000.0),
        _ => None,
    };
    json!({
        "samples": samples.len(),
        "last": last,
        "mean_playout_delay_ms": mean_playout_delay_ms,
        "series": series,
        "bitrate_kbps": bitrate_kbps,
        "frozen_ms": frozen_ms,
        "available_kbps_last": available_kbps_last,
    })
}

fn print_summary(summary: &Value) {
    let get = |path: &[&str]| {
        let mut v = summary;
        for key in path {
            v = &v[*key];
        }
        match v {
            Value::Null => "-".to_owned(),
            Value::Number(n) => n.as_f64().map_or_else(
                || n.to_string(),
                |f| format!("{}", (f * 10.0).round() / 10.0),
            ),
            Value::String(text) => text.clone(),
            other => other.to_string(),
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "\n{:<34} {:>14} {:>14}", "", "rtc-client", "chromium");
    let rows: [(&str, Vec<&str>, Vec<&str>); 8] = [
        (
            "frames sent",
            vec!["ours", "frames_sent"],
            vec!["browser", "last", "framesSent"],
        ),
        (
            "frames decoded (ours: rendered)",
            vec!["ours", "qoe_frames_rendered"],
            vec!["browser", "last", "framesDecoded"],
        ),
        (
            "freezes",
            vec!["ours", "qoe_freeze_count"],
            vec!["browser", "last", "freezeCount"],
        ),
        (
            "frozen, ms",
            vec!["ours", "qoe_total_freeze_ms"],
            vec!["browser", "frozen_ms"],
        ),
        (
            "key frames",
            vec!["ours", "key_frames"],
            vec!["browser", "last", "keyFramesDecoded"],
        ),
        (
            "PLIs (ours: received)",
            vec!["ours", "plis_received"],
            vec!["browser", "last", "pliCount"],
        ),
        (
            "NACKs (ours: received)",
            vec!["ours", "nack_requests"],
            vec!["browser", "last", "nackCount"],
        ),
        (
            "retransmissions",
            vec!["ours", "retransmissions"],
            vec!["browser", "last", "retransmittedPacketsSent"],
        ),
    ];
    for (label, ours, theirs) in rows {
        let _ = writeln!(out, "{label:<34} {:>14} {:>14}", get(&ours), get(&theirs));
    }
    let _ = writeln!(
        out,
        "{:<34} {:>14} {:>14}",
        "video bitrate, kbit/s",
        get(&["ours", "qoe_bitrate_kbps"]),
        get(&["browser", "bitrate_kbps"]),
    );
    if !summary["receiver"].is_null() {
        let _ = writeln!(
            out,
            "\n{:<34} {:>14} {:>14}",
            "the same packets, two receivers", "rtc-client", "chromium"
        );
        let rows: [(&str, &str, Vec<&str>); 4] = [
            (
                "frames rendered / decoded",
                "frames_rendered",
                vec!["browser", "last", "framesDecoded"],
            ),
            (
                "freezes",
                "freeze_count",
                vec!["browser", "last", "freezeCount"],
            ),
            ("frozen, ms", "frozen_ms", vec!["browser", "frozen_ms"]),
            (
                "mean playout delay, ms",
                "mean_playout_delay_ms",
                vec!["browser", "mean_playout_delay_ms"],
            ),
        ];
        for (label, ours, theirs) in rows {
            let _ = writeln!(
                out,
                "{label:<34} {:>14} {:>14}",
                get(&["receiver", ours]),
                get(&theirs)
            );
        }
        if !summary["receiver_compared"].is_null() {
            let _ = writeln!(
                out,
                "{:<34} {:>14} {:>14}",
                "the same, our two completion models",
                get(&["receiver", "completion_model"]),
                get(&["receiver_compared", "completion_model"])
            );
            for (label, key) in [
                ("freezes", "freeze_count"),
                ("frozen, ms", "frozen_ms"),
                ("mean playout delay, ms", "mean_playout_delay_ms"),
            ] {
                let _ = writeln!(
                    out,
                    "{label:<34} {:>14} {:>14}",
                    get(&["receiver", key]),
                    get(&["receiver_compared", key])
                );
            }
        }
    }
    if summary["direction"] == "send" {
        let _ = writeln!(
            out,
            "{:<34} {:>14} {:>14}",
            "availableOutgoingBitrate, kbit/s",
            "-",
            get(&["browser", "available_kbps_last"]),
        );
    }
}

/// What a shadow receiver measured, for summary.json.
fn shadow_json(s: &ShadowSummary) -> serde_json::Value {
    json!({
        "completion_model": s.completion.name(),
        "frames_rendered": s.qoe.frames_rendered,
        "freeze_count": s.qoe.freeze_count,
        "frozen_ms": s.qoe.total_freeze.as_millis() as u64,
        "stall_count": s.qoe.stall_count,
        "mean_playout_delay_ms": s.mean_playout_delay_ms,
        "delay_p50_ms": s.qoe.delay_percentile(50.0).map(|d| d.as_millis() as u64),
        "delay_p95_ms": s.qoe.delay_percentile(95.0).map(|d| d.as_millis() as u64),
        "frames_retransmitted": s.frames_retransmitted,
        "frames_dropped": s.frames_dropped,
        "frames_skipped": s.frames_skipped,
        "framer_mismatched_packets": s.framer.mismatched,
        "framer_held_frames": s.framer.held_for_base,
        "framer_inconsistent_frames": s.framer.inconsistent,
        "packets": s.packets,
        "unknown_packets": s.unknown,
        "freezes": s.qoe.freezes.iter()
            .map(|f| json!([f.from.as_secs_f64(), f.duration.as_millis() as u64]))
            .collect::<Vec<_>>(),
    })
}

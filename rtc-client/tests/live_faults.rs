//! Faults in real calls over loopback: either peer vanishes (SIGKILL) mid-call, a 10-s total
//! outage on the relay, the dish's gRPC server stops and restarts, and Ctrl-C (SIGINT) during
//! `call` and `collect`. Each checks what is left behind with pacer's telemetry reader, which
//! refuses a truncated last line. None needs Chromium.

#![cfg(feature = "live")]

mod cli_support;
mod live_support;

use chrono::Utc;
use handover_predictor::ForecastSource;
use handover_predictor::dish::{SimConfig, SkyTruth, SyntheticSky, serve};
use live_support::{Answerer, Seen, config, parse_and_validate};
use pacer::telemetry::{IntervalRecord, read_intervals_file};
use rtc_client::call::PolicyChoice;
use rtc_client::forecast::ForecastSpec;
use rtc_client::link::{
    Capacity, Delay, HandoverEffect, HandoverEvent, LinkConfig, OutageMode, Time,
};
use rtc_client::live::call::{LinkSetup, run};
use rtc_client::scenario::timeline::HandoverTimeline;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// The most either end may take to stop once its peer vanished.
const STOP_WITHIN: Duration = Duration::from_secs(10);

/// A child process killed (SIGKILL) and reaped when dropped, so a failing test leaves none.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The built binary with `args`, its stdout read line by line into a channel.
fn spawn(args: &[&str]) -> (Proc, Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rtc-client"))
        .args(args)
        .current_dir(cli_support::root())
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let stdout = child.stdout.take().expect("a piped stdout");
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (Proc(child), rx)
}

/// Every line received within `wait`, until one contains `needle` (it is the last).
fn lines_until(rx: &Receiver<String>, needle: &str, wait: Duration) -> Vec<String> {
    let deadline = Instant::now() + wait;
    let mut lines = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) => {
                let found = line.contains(needle);
                lines.push(line);
                if found {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    lines
}

/// Waits (at most `wait`) for `child` to exit; how long it took, or `None`.
fn exited_within(
    child: &mut Child,
    wait: Duration,
) -> Option<(Duration, std::process::ExitStatus)> {
    let started = Instant::now();
    while started.elapsed() < wait {
        if let Some(status) = child.try_wait().expect("the child can be polled") {
            return Some((started.elapsed(), status));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Blocks until the telemetry file at `path` holds `lines` whole lines (at most `wait`).
fn telemetry_lines(path: &Path, lines: usize, wait: Duration) {
    let started = Instant::now();
    loop {
        let text = std::fs::read(path).unwrap_or_default();
        if text.iter().filter(|&&b| b == b'\n').count() >= lines {
            return;
        }
        assert!(
            started.elapsed() < wait,
            "{} never held {lines} lines",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every record of the file, read with pacer's reader (a cut last line is an error) and
/// validated.
fn valid_telemetry(path: &Path) -> Vec<IntervalRecord> {
    let records = read_intervals_file(path)
        .unwrap_or_else(|e| panic!("{} does not read whole: {e}", path.display()));
    for record in &records {
        record.validate().expect("every record validates");
    }
    records
}

/// Sends `signal` (`-INT`, ...) to the child, by its id.
fn signal(child: &Proc, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &child.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {signal} failed");
}

/// `rtc-client call` to `peer` for 40 s, deciding every 2 s, its telemetry to `telemetry`.
fn spawn_call(peer: &str, telemetry: &Path) -> (Proc, Receiver<String>) {
    spawn(&[
        "call",
        "--peer",
        peer,
        "--duration",
        "40s",
        "--decision-interval",
        "2s",
        "--telemetry",
        telemetry.to_str().unwrap(),
    ])
}

#[test]
fn when_the_answerer_vanishes_the_caller_stops_within_10_s_with_valid_telemetry() {
    let dir = cli_support::scratch("live_faults", "answerer_vanishes");
    let (mut answerer, answers) = spawn(&["answer", "--listen", "127.0.0.1:0"]);
    let first = lines_until(&answers, "answering on", Duration::from_secs(20));
    let url = first
        .last()
        .and_then(|l| l.split_whitespace().find(|w| w.starts_with("http://")))
        .expect("the answerer says where it listens")
        .to_owned();
    let telemetry = dir.join("call.jsonl");
    let (mut caller, said) = spawn_call(&url, &telemetry);
    telemetry_lines(&telemetry, 2, Duration::from_secs(30));

    answerer.0.kill().expect("SIGKILL");
    let _ = answerer.0.wait();
    let killed = Instant::now();
    let (took, status) =
        exited_within(&mut caller.0, STOP_WITHIN).expect("the caller stopped within 10 s");
    eprintln!("the caller stopped {took:?} after the answerer was killed");
    assert!(status.success(), "the caller ended normally: {status:?}");
    assert!(killed.elapsed() <= STOP_WITHIN + Duration::from_millis(100));
    let out: Vec<String> = said.try_iter().collect();
    assert!(
        out.iter().any(|l| l.contains("the answerer is gone")),
        "{out:#?}"
    );
    let records = valid_telemetry(&telemetry);
    assert!(records.len() >= 2, "{} records", records.len());
    assert!(records[0].qoe.frames_rendered > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_caller_vanishes_the_answerer_ends_the_call_within_10_s() {
    let dir = cli_support::scratch("live_faults", "caller_vanishes");
    let answerer = Answerer::start().await;
    let telemetry = dir.join("call.jsonl");
    let (mut caller, _said) = spawn_call(&answerer.url(), &telemetry);
    let wait_for = telemetry.clone();
    tokio::task::spawn_blocking(move || telemetry_lines(&wait_for, 2, Duration::from_secs(30)))
        .await
        .unwrap();
    assert_eq!(answerer.server.calls(), 1);

    caller.0.kill().expect("SIGKILL");
    let _ = caller.0.wait();
    let killed = Instant::now();
    let ended = answerer.saw_end(STOP_WITHIN).await;
    eprintln!(
        "the answerer ended the call {:?} after the caller was killed: {ended:?}",
        killed.elapsed()
    );
    let ended = ended.expect("the answerer ended the call within 10 s");
    assert!(ended.contains("the caller is gone"), "{ended}");
    assert_eq!(answerer.server.calls(), 0);
    // Each interval was committed as it closed: what the killed caller left reads whole.
    let records = valid_telemetry(&telemetry);
    assert!(records.len() >= 2, "{} records", records.len());
    answerer.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_10_s_total_outage_on_the_relay_frames_flow_within_3_s_and_a_key_frame_is_asked() {
    const OUTAGE_START_S: u64 = 8;
    const OUTAGE_END_S: u64 = 18;
    let answerer = Answerer::start().await;
    // 4 Mbit/s, 20 ms each way, and nothing at all either way from 8 s to 18 s.
    let down = |at| {
        vec![HandoverEvent::new(
            Time::from_secs(at),
            HandoverEffect::Outage {
                duration: Duration::from_secs(OUTAGE_END_S - OUTAGE_START_S),
                mode: OutageMode::Drop,
            },
        )]
    };
    let link = || {
        LinkConfig::new(Capacity::constant(4_000_000))
            .with_delay(Delay::constant(Duration::from_millis(20)))
            .with_handovers(down(OUTAGE_START_S))
    };
    let setup = LinkSetup {
        scenario: "outage".into(),
        forward: link(),
        forward_seed: 1,
        reverse: link(),
        reverse_seed: 2,
        timeline: HandoverTimeline::none(),
    };
    let call = config(
        answerer.url(),
        Duration::from_secs(26),
        Duration::from_secs(2),
        PolicyChoice::Default,
        ForecastSpec::None,
        Some(setup),
    );
    let mut seen = Seen::default();
    let outcome = run(&call, |e| seen.record(e), std::future::pending())
        .await
        .expect("the call runs");
    let fps = &outcome.rendered_per_second;
    eprintln!(
        "frames rendered per second: {fps:?}; relay {:?}",
        outcome.relay
    );
    assert_eq!(outcome.ended_by, "completed", "the outage ended nothing");
    let second = |s: u64| fps.get(s as usize).copied().unwrap_or(0);
    // Video before, none during (a second of slack for frames the jitter buffer held).
    assert!((3..OUTAGE_START_S).all(|s| second(s) > 10), "{fps:?}");
    assert!(
        (OUTAGE_START_S + 1..OUTAGE_END_S).all(|s| second(s) == 0),
        "{fps:?}"
    );
    // Frames again within 3 s of the end, and the call recovered its frame rate.
    let back = (OUTAGE_END_S..OUTAGE_END_S + 3).find(|&s| second(s) > 0);
    assert!(
        back.is_some(),
        "no frame within 3 s of the outage's end: {fps:?}"
    );
    assert!(
        (OUTAGE_END_S + 4..24).all(|s| second(s) > 15),
        "the frame rate did not recover: {fps:?}"
    );
    // The receiver lost frames and asked for a key frame; the encoder made one.
    assert!(outcome.plis_received >= 1, "no PLI reached the encoder");
    assert!(outcome.key_frames >= 2, "{} key frames", outcome.key_frames);
    let relay = outcome.relay.expect("relay counters");
    assert!(relay.forward.dropped > 100, "{relay:?}");
    parse_and_validate(&seen.lines);
    answerer.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dish_whose_grpc_server_restarts_mid_call_gives_the_fallback_then_forecasts_again() {
    let start = Utc::now();
    let sky: Arc<dyn SkyTruth> =
        Arc::new(SyntheticSky::new(5, start, chrono::Duration::minutes(10)));
    let dish = serve(
        "127.0.0.1:0".parse().unwrap(),
        SimConfig::new(start),
        Arc::clone(&sky),
    )
    .await
    .expect("the simulated dish starts");
    let addr = dish.local_addr();
    let answerer = Answerer::start().await;
    let call = config(
        answerer.url(),
        Duration::from_secs(30),
        Duration::from_secs(2),
        PolicyChoice::Heuristic,
        ForecastSpec::Dish(addr.to_string()),
        None,
    );
    let began = Instant::now();
    // Down from 8 s to 16 s of the test's clock, then back on the same address, its clock
    // going on where it stopped.
    let restart = async move {
        tokio::time::sleep(Duration::from_secs(8)).await;
        dish.shutdown().await.expect("the dish stops");
        let down_at = began.elapsed();
        tokio::time::sleep(Duration::from_secs(8)).await;
        let resumed = start + chrono::Duration::from_std(began.elapsed()).unwrap();
        let dish = serve(addr, SimConfig::new(resumed), sky)
            .await
            .expect("the dish restarts on its address");
        (dish, down_at, began.elapsed())
    };
    let mut seen = Seen::default();
    let (outcome, (dish, down_at, up_at)) = tokio::join!(
        run(&call, |e| seen.record(e), std::future::pending()),
        restart
    );
    let outcome = outcome.expect("the call runs");
    assert_eq!(outcome.ended_by, "completed");
    let records = parse_and_validate(&seen.lines);
    assert_eq!(records.len(), outcome.decisions.len());
    let described: Vec<String> = records
        .iter()
        .zip(&outcome.decisions)
        .map(|(r, d)| {
            format!(
                "{} ms {:?} {} ms: {d}",
                r.start_ms, r.forecast.source, r.action_ms
            )
        })
        .collect();
    eprintln!(
        "dish down {down_at:?} .. {up_at:?}:\n{}",
        described.join("\n")
    );
    let is_dish = |r: &IntervalRecord| r.forecast.source == ForecastSource::Mirror;
    // Before: the dish's forecast; while it is down: the 2000-ms fallback in the record, with
    // the reason in the decision; after: the dish's forecast again.
    let first_dish = records
        .iter()
        .position(is_dish)
        .expect("the dish's forecast");
    let fallback = records
        .iter()
        .zip(&outcome.decisions)
        .skip(first_dish)
        .position(|(r, d)| {
            r.forecast.source == ForecastSource::None
                && r.action_ms == 2000
                && d.fallback
                    .as_deref()
                    .is_some_and(|why| why.contains("dish"))
        })
        .map(|i| i + first_dish)
        .expect("a decision fell back while the dish was down");
    let fell_at = Duration::from_millis(records[fallback].start_ms);
    assert!(
        fell_at >= down_at && fell_at <= down_at + Duration::from_secs(6),
        "the fallback came at {fell_at:?}, the dish stopped at {down_at:?}: {described:#?}"
    );
    let again = records[fallback..]
        .iter()
        .position(is_dish)
        .map(|i| i + fallback)
        .expect("the dish's forecast came back");
    let again_at = Duration::from_millis(records[again].start_ms);
    assert!(
        again_at >= up_at && again_at <= up_at + Duration::from_secs(6),
        "the forecast came back at {again_at:?}, the dish at {up_at:?}: {described:#?}"
    );
    assert!(outcome.decisions[again].fallback.is_none());
    answerer.server.shutdown().await;
    dish.shutdown().await.expect("the dish stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_call_closes_the_last_interval_and_leaves_valid_telemetry() {
    let dir = cli_support::scratch("live_faults", "ctrl_c_call");
    let answerer = Answerer::start().await;
    let telemetry = dir.join("call.jsonl");
    let (mut caller, said) = spawn_call(&answerer.url(), &telemetry);
    let wait_for = telemetry.clone();
    tokio::task::spawn_blocking(move || telemetry_lines(&wait_for, 2, Duration::from_secs(30)))
        .await
        .unwrap();
    // Half-way through the third interval.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    signal(&caller, "-INT");
    let (took, status) = tokio::task::spawn_blocking(move || {
        let exited = exited_within(&mut caller.0, Duration::from_secs(10));
        exited.expect("the caller stopped within 10 s of Ctrl-C")
    })
    .await
    .unwrap();
    eprintln!("the caller stopped {took:?} after SIGINT");
    assert!(status.success(), "{status:?}");
    let out: Vec<String> = said.try_iter().collect();
    assert!(
        out.iter().any(|l| l.contains("interrupted after")),
        "{out:#?}"
    );
    assert!(out.iter().any(|l| l.starts_with("telemetry: ")), "{out:#?}");
    let records = valid_telemetry(&telemetry);
    assert!(records.len() >= 3, "{} records", records.len());
    // The last interval was closed at the interruption: shorter than the 2-s decision interval.
    let last = records.last().unwrap();
    assert!(last.duration_ms < 2000, "{last:?}");
    let end = answerer.saw_end(Duration::from_secs(3)).await;
    assert!(
        end.is_some_and(|s| s.contains("hung up")),
        "the caller hung up"
    );
    answerer.server.shutdown().await;
}

/// Every file under `dir` but the hidden ones a kill leaves (`.NAME.partial-PID`).
fn visible_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            out.extend(visible_files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn ctrl_c_during_collect_leaves_only_valid_files_and_resume_finishes() {
    let dir = cli_support::scratch("live_faults", "ctrl_c_collect");
    let out = dir.join("out");
    let args = [
        "collect",
        "--scenarios",
        "starlink,terrestrial-lte",
        "--hours",
        "0.05",
        "--duration",
        "20s",
        "--seed",
        "3",
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ];
    let (mut collect, _said) = spawn(&args);
    // Once two calls are committed (journal lines), in the middle of the next ones.
    let started = Instant::now();
    loop {
        let journal = std::fs::read(out.join("cells.jsonl")).unwrap_or_default();
        if journal.iter().filter(|&&b| b == b'\n').count() >= 2 {
            break;
        }
        assert!(
            collect.0.try_wait().unwrap().is_none(),
            "collect ended before two calls were done"
        );
        assert!(started.elapsed() < Duration::from_secs(300));
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    signal(&collect, "-INT");
    let (_, status) =
        exited_within(&mut collect.0, Duration::from_secs(10)).expect("collect stopped on Ctrl-C");
    assert!(
        !status.success(),
        "it was interrupted, not finished: {status:?}"
    );

    // Every file in view reads whole: the telemetry with pacer's reader, the JSON as JSON, the
    // journal line by line (all but a last line cut short).
    let files = visible_files(&out);
    let mut telemetry = 0;
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy();
        if name == "cells.jsonl" {
            let text = std::fs::read_to_string(path).unwrap();
            let whole = text.rsplit_once('\n').map_or("", |(whole, _)| whole);
            for line in whole.lines() {
                serde_json::from_str::<serde_json::Value>(line).expect("a whole journal line");
            }
        } else if name.ends_with(".jsonl") {
            assert!(!valid_telemetry(path).is_empty(), "{}", path.display());
            telemetry += 1;
        } else if name.ends_with(".json") {
            let text = std::fs::read_to_string(path).unwrap();
            serde_json::from_str::<serde_json::Value>(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
    assert!(telemetry >= 2, "{files:?}");
    assert!(
        !std::fs::read_to_string(out.join("run.json"))
            .unwrap_or_default()
            .contains("\"complete\": true")
    );
    // And the run finishes from there.
    let o = cli_support::run(&[&args[..], &["--resume"]].concat());
    assert!(o.status.success(), "{}", cli_support::stderr(&o));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let listed = manifest["files"].as_array().expect("the manifest's files");
    assert_eq!(listed.len(), 9, "ceil(0.05 h / 20 s) calls");
    for file in listed {
        valid_telemetry(&out.join(file["path"].as_str().unwrap()));
    }
}

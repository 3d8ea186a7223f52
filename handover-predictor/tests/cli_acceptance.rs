//! Acceptance test of the command-line tool: `dish-sim` serving the shipped Starlink
//! generation-1 catalogue over loopback with a clock 40 times faster than real time, `detect`
//! following it for 10 dish minutes, and the detected handovers scored against the simulator's
//! `--truth-out` (F1 >= 0.95 within +/- 1 s), all within 30 s of wall time.

#![cfg(feature = "cli")]

mod cli_support;

use chrono::{DateTime, Duration as ChronoDuration, Utc};
use cli_support::{ChildGuard, bin, run_with_limit, scratch, shipped_gen1, stderr, stdout};
use serde_json::Value;
use std::time::{Duration, Instant};

fn instant(value: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(value.as_str().expect("an RFC 3339 string"))
        .expect("an RFC 3339 instant")
        .with_timezone(&Utc)
}

/// Each true handover matched to the earliest unmatched detection within +/- 1 s.
fn f1(detected: &[DateTime<Utc>], truth: &[DateTime<Utc>]) -> (f64, usize) {
    let mut used = vec![false; detected.len()];
    let mut tp = 0;
    for t in truth {
        if let Some(i) = (0..detected.len())
            .find(|&i| !used[i] && (detected[i] - *t).abs() <= ChronoDuration::seconds(1))
        {
            used[i] = true;
            tp += 1;
        }
    }
    let precision = if detected.is_empty() {
        1.0
    } else {
        tp as f64 / detected.len() as f64
    };
    let recall = if truth.is_empty() {
        1.0
    } else {
        tp as f64 / truth.len() as f64
    };
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    (f1, tp)
}

#[test]
fn detect_against_dish_sim_finds_the_true_handovers_of_ten_dish_minutes_with_f1_of_at_least_0_95() {
    let wall = Instant::now();
    let dir = scratch("acceptance");
    let truth_file = dir.join("truth.jsonl");
    let detections_file = dir.join("detections.jsonl");

    let mut sim_command = bin();
    sim_command.args(["dish-sim", "--listen", "127.0.0.1:0", "--tle"]);
    sim_command.arg(shipped_gen1());
    sim_command.args(["--lat", "50.67", "--lon", "4.61", "--time-scale", "40"]);
    // A safety net: the simulator stops by itself even if this test is torn down abruptly.
    sim_command.args(["--duration", "13m", "--json", "--truth-out"]);
    sim_command.arg(&truth_file);
    let mut sim = ChildGuard::spawn("dish-sim", sim_command, &dir.join("dish-sim.stderr"));
    let lines = sim.stdout_lines();
    let listening: Value = serde_json::from_str(
        &lines
            .recv_timeout(Duration::from_secs(10))
            .expect("dish-sim prints its address within 10 s"),
    )
    .unwrap();
    assert_eq!(listening["event"], "listening", "{listening}");
    let addr = listening["addr"].as_str().unwrap().to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");

    let mut detect = bin();
    detect.args([
        "detect",
        "--dish",
        &addr,
        "--time-scale",
        "40",
        "--duration",
        "10m",
    ]);
    detect.arg("--json").arg("--out").arg(&detections_file);
    let (output, detect_wall) = run_with_limit(detect, Duration::from_secs(28));
    assert!(
        output.status.success(),
        "detect failed: {}\n{}",
        stderr(&output),
        std::fs::read_to_string(dir.join("dish-sim.stderr")).unwrap_or_default()
    );
    let text = stdout(&output);
    let summary: Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "summary")
        .unwrap_or_else(|| panic!("no summary line in detect's output:\n{text}"));
    let started = instant(&summary["started_at"]);
    let ended = instant(&summary["ended_at"]);
    assert_eq!(summary["clock"], "reported");
    assert!(summary["polls"].as_u64().unwrap() >= 480, "{summary}");
    // The --out file ends with the same summary, after the track and the verdicts.
    let written = std::fs::read_to_string(&detections_file).unwrap();
    let written: Vec<Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(written.last().unwrap()["handovers"], summary["handovers"]);
    assert!(written.iter().filter(|v| v["type"] == "point").count() >= 480);
    let bits = summary["bits"].as_array().unwrap();
    assert_eq!(
        bits.iter().filter(|b| b.as_u64() == Some(1)).count(),
        summary["handover_count"].as_u64().unwrap() as usize
    );

    // The simulator writes its truth every 200 ms of real time: wait until it covers the run.
    let deadline = Instant::now() + Duration::from_secs(5);
    let truth: Vec<Value> = loop {
        let text = std::fs::read_to_string(&truth_file).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .filter(|v: &Value| v["type"] == "second")
            .collect();
        if lines.last().is_some_and(|v| instant(&v["t"]) >= ended) || Instant::now() > deadline {
            break lines;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        truth.last().is_some_and(|v| instant(&v["t"]) >= ended),
        "the truth stops before the end of the detection"
    );
    drop(sim);

    // A handover is judged once a clean point of the new slot exists, from 2 s after it.
    let judged_until = ended - ChronoDuration::seconds(2);
    let in_window = |t: &DateTime<Utc>| *t > started && *t <= judged_until;
    let true_handovers: Vec<DateTime<Utc>> = truth
        .iter()
        .filter(|v| v["handover"] == 1)
        .map(|v| instant(&v["t"]))
        .filter(in_window)
        .collect();
    let detected: Vec<DateTime<Utc>> = summary["handovers"]
        .as_array()
        .unwrap()
        .iter()
        .map(instant)
        .filter(in_window)
        .collect();
    let (f1, tp) = f1(&detected, &true_handovers);
    let elapsed = wall.elapsed();
    eprintln!(
        "cli acceptance: {} true handovers, {} detected, {tp} matched, F1 {f1:.3}; detect took \
         {:.1} s, the whole test {:.1} s",
        true_handovers.len(),
        detected.len(),
        detect_wall.as_secs_f64(),
        elapsed.as_secs_f64()
    );
    // 10 minutes = 40 slots; the policy changes satellite at 59-86 % of them.
    assert!(true_handovers.len() >= 15, "{}", true_handovers.len());
    assert!(
        f1 >= 0.95,
        "F1 {f1:.3}: detected {detected:?}, truth {true_handovers:?}"
    );
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
}

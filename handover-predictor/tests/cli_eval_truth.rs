//! `eval --truth` through the built binary: a hand-written SatInView-format log with known
//! figures, logs `dish-sim` generates with switches drawn at a fixed rate (the binomial floor
//! reproduced), and the errors a bad log or bad arguments get.

#![cfg(feature = "cli")]

mod cli_support;

use cli_support::{bin, run_with_limit, scratch, shipped_gen1, stderr, stdout};
use handover_predictor::eval::binomial_floor;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(300);

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/satinview-small.csv")
}

fn row<'a>(report: &'a Value, source: &str) -> &'a Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["source"] == source)
        .unwrap_or_else(|| panic!("no row for {source}: {report}"))
}

fn eval_truth(truth: &Path, lat: &str, lon: &str, extra: &[&str]) -> Value {
    let mut command = bin();
    command
        .args(["eval", "--truth"])
        .arg(truth)
        .args(["--lat", lat, "--lon", lon, "--tle"])
        .arg(shipped_gen1())
        .arg("--json")
        .args(extra);
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

#[test]
fn the_hand_written_log_gives_the_figures_worked_out_by_hand() {
    // The fixture: 12:00:00 to 12:06:00, 24 slot boundaries, switches at 18 of them in the
    // pattern 11011101 | 10111110 | 11010111 (rows with no satellite in between, which are not
    // handovers). Windows start at 12:02:00 and 12:04:00, 6 handovers each.
    let dir = scratch("eval-truth-fixture");
    let plot = dir.join("fixture.svg");
    let report = eval_truth(
        &fixture(),
        "50.67",
        "4.61",
        &["--plot", plot.to_str().unwrap()],
    );
    assert_eq!(report["handovers"], 18);
    assert_eq!(report["boundaries"], 24);
    assert_eq!(report["switching_boundaries"], 18);
    assert_eq!(report["off_boundary_handovers"], 0);
    assert_eq!(report["switch_rate"], 0.75);
    assert_eq!(report["windows"], 2);
    let floor = report["floor_mae"].as_f64().unwrap();
    assert!((floor - binomial_floor(8, 0.75)).abs() < 1e-12, "{floor}");
    let truths: Vec<u64> = report["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["truth"].as_u64().unwrap())
        .collect();
    assert_eq!(truths, vec![6, 6]);

    // Every boundary, certain: 16 predicted, 12 right, 8 per window against 6.
    let grid = row(&report, "slot-grid");
    assert_eq!(grid["precision"], 0.75);
    assert_eq!(grid["recall"], 1.0);
    assert_eq!(grid["mae_handovers_per_window"], 2.0);
    // The mirror repeats the previous window's pattern: 4 of 6 right in each window.
    let mirror = row(&report, "mirror");
    assert_eq!(mirror["precision"], 4.0 / 6.0);
    assert_eq!(mirror["recall"], 4.0 / 6.0);
    assert_eq!(mirror["mae_handovers_per_window"], 0.0);
    // Calibrated: 6 of 8 and 12 of 16 boundaries seen switching, shrunk toward 0.74: about
    // 0.744, whose median count of 8 is 6; bits on every boundary (p >= 0.5).
    let calibrated = row(&report, "calibrated");
    assert_eq!(calibrated["mae_handovers_per_window"], 0.0);
    assert_eq!(calibrated["recall"], 1.0);
    assert_eq!(calibrated["f1"], grid["f1"]);
    let p = report["series"][0]["calibrated_probability"]
        .as_f64()
        .unwrap();
    assert!((p - (6.0 + 14.0 * 0.74) / 22.0).abs() < 1e-12, "{p}");
    // The catalogue is of the log's day: the orbital source answers every window.
    assert_eq!(row(&report, "orbital")["unavailable"], 0);

    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.contains("satinview-small.csv"));
    assert!(svg.contains("calibrated (F1"));
}

#[test]
fn the_text_report_prints_the_table_of_every_source_and_the_floor() {
    let mut command = bin();
    command
        .args(["eval", "--truth"])
        .arg(fixture())
        .args(["--lat", "50.67", "--lon", "4.61", "--tle"])
        .arg(shipped_gen1());
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("18 of 24 slot boundaries switched (rate 0.750)"),
        "{text}"
    );
    assert!(text.contains(
        "| site | orbital F1 / MAE | mirror F1 / MAE | slot grid F1 / MAE | calibrated F1 / MAE | count noise floor |"
    ));
    assert!(text.contains("| 0.86 / 2.00 |"), "{text}");
}

#[test]
fn a_bad_log_or_missing_site_is_refused_naming_what_is_wrong() {
    let dir = scratch("eval-truth-errors");
    let bad = dir.join("bad.csv");
    std::fs::write(
        &bad,
        "Timestamp,Connected_Satellite\n2025-05-12 12:00:00,A\n12:00:01 yesterday,B\n",
    )
    .unwrap();
    let mut command = bin();
    command
        .args(["eval", "--truth"])
        .arg(&bad)
        .args(["--lat", "50.67", "--lon", "4.61", "--tle"])
        .arg(shipped_gen1());
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(!output.status.success());
    let err = stderr(&output);
    assert!(
        err.contains("bad.csv, line 3, column Timestamp") && err.contains("12:00:01 yesterday"),
        "{err}"
    );

    let no_column = dir.join("no-column.csv");
    std::fs::write(&no_column, "Time,Satellite\n2025-05-12 12:00:00,A\n").unwrap();
    let mut command = bin();
    command
        .args(["eval", "--truth"])
        .arg(&no_column)
        .args(["--lat", "50.67", "--lon", "4.61", "--tle"])
        .arg(shipped_gen1());
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("no Timestamp column (it has: Time, Satellite)"),
        "{}",
        stderr(&output)
    );

    let mut command = bin();
    command
        .args(["eval", "--truth"])
        .arg(fixture())
        .arg("--tle")
        .arg(shipped_gen1());
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(!output.status.success());
    assert!(stderr(&output).contains("--lat"), "{}", stderr(&output));
}

/// Writes `duration` of drawn truth at Kanazawa with `dish-sim --offline`.
fn generate(dir: &Path, name: &str, rate: &str, seed: &str, duration: &str) -> PathBuf {
    let csv = dir.join(format!("{name}.csv"));
    let mut command = bin();
    command.args(["-q", "dish-sim", "--offline", "--tle"]);
    command.arg(shipped_gen1()).args([
        "--lat",
        "36.56",
        "--lon",
        "136.65",
        "--start",
        "2025-05-12T00:00:00Z",
        "--switch-rate",
        rate,
        "--seed",
        seed,
        "--duration",
        duration,
        "--truth-csv",
    ]);
    command.arg(&csv);
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("s simulated"),
        "{}",
        stdout(&output)
    );
    csv
}

#[test]
fn a_generated_log_with_a_fixed_switch_rate_reproduces_the_binomial_floor() {
    let dir = scratch("eval-truth-floor");
    let csv = generate(&dir, "kanazawa", "0.6", "3", "6h");
    let report = eval_truth(&csv, "36.56", "136.65", &[]);
    // Every handover on a boundary, and the realised rate near the drawn one (a satellite that
    // sets forces a switch where a keep was drawn, so it is a little above).
    assert_eq!(report["off_boundary_handovers"], 0);
    let rate = report["switch_rate"].as_f64().unwrap();
    assert!((0.58..0.7).contains(&rate), "{rate}");
    // The floor at the file's rate is the floor of the drawn process within 0.05 ...
    let floor = report["floor_mae"].as_f64().unwrap();
    assert!((floor - binomial_floor(8, 0.6)).abs() < 0.05, "{floor}");
    // ... and the counts behave like draws at that rate: the best constant in hindsight does
    // about as well as the floor says, and the calibrated source, which learned the rate from
    // the past only, is near it.
    let truths: Vec<f64> = report["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["truth"].as_f64().unwrap())
        .collect();
    let best_constant = (0..=8)
        .map(|c| truths.iter().map(|t| (t - f64::from(c)).abs()).sum::<f64>() / truths.len() as f64)
        .fold(f64::INFINITY, f64::min);
    assert!(
        (best_constant - floor).abs() < 0.1,
        "{best_constant} vs {floor}"
    );
    let calibrated = row(&report, "calibrated")["mae_handovers_per_window"]
        .as_f64()
        .unwrap();
    assert!(
        calibrated - floor < 0.12,
        "calibrated {calibrated} vs floor {floor}"
    );
    // Counting every boundary is much worse at this rate; the calibrated source times every
    // switch (recall 1) as the grid does.
    let grid = row(&report, "slot-grid");
    assert!(grid["mae_handovers_per_window"].as_f64().unwrap() > calibrated + 1.0);
    assert_eq!(row(&report, "calibrated")["recall"], 1.0);
    println!(
        "rate {rate:.3}: floor {floor:.3}, best constant {best_constant:.3}, calibrated \
         {calibrated:.3}, slot grid {}",
        grid["mae_handovers_per_window"]
    );
}

#[test]
fn the_same_seed_writes_the_same_log_and_another_seed_another() {
    let dir = scratch("eval-truth-seed");
    let a = std::fs::read(generate(&dir, "a", "kanazawa", "5", "20m")).unwrap();
    let b = std::fs::read(generate(&dir, "b", "kanazawa", "5", "20m")).unwrap();
    let c = std::fs::read(generate(&dir, "c", "kanazawa", "6", "20m")).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    let text = String::from_utf8(a).unwrap();
    assert!(text.starts_with("Timestamp,Connected_Satellite,"));
    // The header, then every whole second from the start through the end, both included.
    assert_eq!(text.lines().count(), 1 + 1201);
}

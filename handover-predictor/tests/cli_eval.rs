//! `eval` through the built binary: the table, the JSON report and the per-window plot.

#![cfg(feature = "cli")]

mod cli_support;

use cli_support::{bin, run_with_limit, scratch, shipped_gen1, stderr, stdout};
use serde_json::Value;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn eval_reports_every_predictor_per_location_as_json_and_plots_the_windows() {
    let dir = scratch("eval");
    let plot = dir.join("windows.svg");
    let mut command = bin();
    command.arg("eval").arg("--tle").arg(shipped_gen1());
    command.args([
        "--locations",
        "louvain:50.67,4.61",
        "brisbane:-27.47,153.03",
    ]);
    command
        .args(["--windows", "2", "--json", "--plot"])
        .arg(&plot);
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let reports = json["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 1);
    let report = &reports[0];
    assert_eq!(report["scenario"]["windows_per_location"], 2);
    // Three predictors x (two locations + all).
    assert_eq!(report["rows"].as_array().unwrap().len(), 9);
    let series = report["series"].as_array().unwrap();
    assert_eq!(series.len(), 4);
    assert_eq!(series[0]["location"], "louvain");
    assert_eq!(series[3]["location"], "brisbane");
    // Same catalogue and policy for the truth and the orbital predictor: it is exact.
    let orbital = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["predictor"] == "orbital" && r["location"] == "all")
        .unwrap();
    assert_eq!(orbital["f1"], 1.0, "{orbital}");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.contains("handovers per 120-s window"));
    assert!(svg.contains("brisbane"));
}

#[test]
fn eval_prints_the_library_table_and_refuses_a_bad_location() {
    let mut command = bin();
    command.arg("eval").arg("--tle").arg(shipped_gen1());
    command.args(["--locations", "kanazawa:36.56,136.65", "--windows", "1"]);
    command.args(["--perturb-km", "2", "--policy", "delay"]);
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = stdout(&output);
    for needle in [
        "predictor",
        "mirror",
        "orbital",
        "hybrid",
        "kanazawa",
        "perturbed",
        "delay",
    ] {
        assert!(table.contains(needle), "{needle}: {table}");
    }

    let mut command = bin();
    command.args(["eval", "--locations", "nowhere:95,10"]);
    let (output, _) = run_with_limit(command, LIMIT);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("latitude 95"),
        "{}",
        stderr(&output)
    );
}

//! `render-map` through the built binary: a map with its track fetched from `dish-sim`, saved,
//! and rendered again from the saved file.

#![cfg(feature = "cli")]

mod cli_support;

use cli_support::{ChildGuard, bin, run_with_limit, scratch, shipped_gen1, stderr, stdout};
use serde_json::Value;
use std::time::Duration;

#[test]
fn a_map_fetched_with_its_track_renders_and_round_trips_through_its_json_file() {
    let dir = scratch("render-map");
    let mut sim_command = bin();
    sim_command.args(["dish-sim", "--listen", "127.0.0.1:0", "--tle"]);
    sim_command.arg(shipped_gen1());
    sim_command.args(["--lat", "-27.47", "--lon", "153.03", "--time-scale", "20"]);
    sim_command.args(["--duration", "10m", "--json"]);
    let mut sim = ChildGuard::spawn("dish-sim", sim_command, &dir.join("dish-sim.stderr"));
    let lines = sim.stdout_lines();
    let listening: Value =
        serde_json::from_str(&lines.recv_timeout(Duration::from_secs(10)).unwrap()).unwrap();
    let addr = listening["addr"].as_str().unwrap().to_owned();

    let png = dir.join("map.png");
    let saved = dir.join("map.json");
    let mut command = bin();
    command.args([
        "render-map",
        "--dish",
        &addr,
        "--time-scale",
        "20",
        "--track",
    ]);
    command
        .args(["--seconds", "40", "--json", "--out"])
        .arg(&png);
    command.arg("--save-map").arg(&saved);
    let (output, _) = run_with_limit(command, Duration::from_secs(30));
    assert!(output.status.success(), "{}", stderr(&output));
    drop(sim);
    let summary: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(summary["rows"], 123);
    assert_eq!(summary["frame"], "earth");
    assert!(summary["track_points"].as_u64().unwrap() >= 30, "{summary}");
    // 40 s of an unclear map: two or three slots of track, each a dozen pixels or more.
    assert!(summary["lit_pixels"].as_u64().unwrap() >= 20, "{summary}");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");

    let again = dir.join("again.svg");
    let mut command = bin();
    command.args(["render-map", "--json", "--map"]).arg(&saved);
    command.arg("--out").arg(&again);
    let (output, _) = run_with_limit(command, Duration::from_secs(30));
    assert!(output.status.success(), "{}", stderr(&output));
    let reread: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(reread["lit_pixels"], summary["lit_pixels"]);
    assert_eq!(reread["dish_time"], summary["dish_time"]);
    let svg = std::fs::read_to_string(&again).unwrap();
    for letter in ["N", "E", "S", "W"] {
        assert!(
            svg.contains(&format!(">\n{letter}\n</text>")),
            "no {letter} in the SVG"
        );
    }
}

#[test]
fn a_bare_array_of_rows_renders_with_no_data_pixels() {
    let dir = scratch("render-rows");
    let mut rows = vec![vec![-1.0_f32; 123]; 123];
    for (k, row) in rows.iter_mut().enumerate().skip(40).take(20) {
        row[60 + k % 3] = 1.0;
    }
    let path = dir.join("rows.json");
    std::fs::write(&path, serde_json::to_string(&rows).unwrap()).unwrap();
    let out = dir.join("rows.png");
    let mut command = bin();
    command
        .args(["render-map", "--map"])
        .arg(&path)
        .arg("--out")
        .arg(&out);
    let (output, _) = run_with_limit(command, Duration::from_secs(30));
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("20 pixels with data"),
        "{}",
        stdout(&output)
    );
    assert!(std::fs::metadata(&out).unwrap().len() > 5_000);
}

//! `forecast` and `tle-gen` through the built binary: the JSON forecast equals the library's
//! orbital forecast, the mirror gives the paper's default, plots are written, and the generated
//! catalogues are the shipped ones.

#![cfg(feature = "cli")]

mod cli_support;

use chrono::{DateTime, TimeZone, Utc};
use cli_support::{bin, run_with_limit, scratch, shipped_gen1, stderr, stdout};
use handover_predictor::orbit::{Catalogue, Observer, ServingPolicy};
use handover_predictor::predict::Orbital;
use handover_predictor::{HORIZON_STEPS, HandoverSource};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(60);

fn forecast_json(args: &[&str]) -> (Value, String) {
    let mut command = bin();
    command.arg("forecast").arg("--tle").arg(shipped_gen1());
    command.args(args).arg("--json");
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(output.status.success(), "{}", stderr(&output));
    let value = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&output)));
    (value, stderr(&output))
}

fn bits(value: &Value) -> Vec<u8> {
    value["handover"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap() as u8)
        .collect()
}

#[test]
fn the_json_forecast_has_120_steps_and_equals_the_library_orbital_forecast() {
    let at = Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 0).unwrap();
    let (json, _) = forecast_json(&[
        "--lat",
        "36.56",
        "--lon",
        "136.66",
        "--at",
        "2025-05-12T12:00:00Z",
    ]);
    assert_eq!(json["source"], "orbital");
    assert_eq!(json["policy"], "starlink");
    let cli_bits = bits(&json);
    assert_eq!(cli_bits.len(), HORIZON_STEPS);
    assert_eq!(json["cumulative"].as_array().unwrap().len(), HORIZON_STEPS);

    let catalogue = Arc::new(Catalogue::load(shipped_gen1()).unwrap());
    let observer = Observer::new(36.56, 136.66, 0.0).unwrap();
    let epoch = Instant::now();
    let expected = Orbital::new(catalogue, observer, ServingPolicy::default(), epoch, at)
        .forecast(epoch)
        .unwrap();
    assert_eq!(cli_bits, expected.handover().to_vec());
    assert_eq!(
        json["handover_count"].as_u64().unwrap() as usize,
        expected.handover_count()
    );
    assert!(expected.handover_count() >= 1);

    // The timeline agrees with the steps: each handover instant starts a new segment, and the
    // segments cover the horizon end to end.
    let timeline = json["timeline"].as_array().unwrap();
    assert_eq!(timeline.first().unwrap()["from_offset_s"], 0.0);
    assert_eq!(timeline.last().unwrap()["to_offset_s"], 120.0);
    let handovers_at = json["handovers_at"].as_array().unwrap();
    assert_eq!(handovers_at.len(), expected.handover_count());
    for pair in timeline.windows(2) {
        assert_eq!(pair[0]["to"], pair[1]["from"]);
        assert!(
            handovers_at.contains(&pair[1]["from"]),
            "{}",
            pair[1]["from"]
        );
    }
}

#[test]
fn the_default_instant_is_the_catalogues_newest_epoch_and_a_distant_one_is_warned_about() {
    let (json, _) = forecast_json(&["--lat", "50.67", "--lon", "4.61"]);
    let at: DateTime<Utc> = serde_json::from_value(json["at"].clone()).unwrap();
    assert_eq!(at, Utc.with_ymd_and_hms(2025, 5, 12, 0, 0, 0).unwrap());
    assert!(json["warnings"].as_array().unwrap().is_empty());

    let (json, log) = forecast_json(&[
        "--lat",
        "50.67",
        "--lon",
        "4.61",
        "--at",
        "2025-05-20T00:00:00Z",
    ]);
    let warning = json["warnings"][0].as_str().unwrap();
    assert!(warning.contains("8.0 days"), "{warning}");
    assert!(log.contains("WARN") && log.contains("stale"), "{log}");

    let mut command = bin();
    command.arg("forecast").arg("--tle").arg(shipped_gen1());
    command.args([
        "--lat",
        "50.67",
        "--lon",
        "4.61",
        "--at",
        "2025-08-01T00:00:00Z",
    ]);
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(!output.status.success());
    assert!(stderr(&output).contains("days from"), "{}", stderr(&output));
}

#[test]
fn the_mirror_without_history_forecasts_eight_equally_spaced_handovers() {
    let mut command = bin();
    command.args(["forecast", "--source", "mirror", "--json"]);
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["source"], "mirror");
    let steps: Vec<u64> = json["handover_steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(steps, vec![14, 29, 44, 59, 74, 89, 104, 119]);
}

#[test]
fn forecast_plots_are_written_as_png_or_svg_and_the_text_output_lists_the_satellites() {
    let dir = scratch("forecast-plot");
    for name in ["timeline.png", "timeline.svg"] {
        let path = dir.join(name);
        let mut command = bin();
        command.arg("forecast").arg("--tle").arg(shipped_gen1());
        command.args(["--lat", "-27.47", "--lon", "153.03", "--policy", "delay"]);
        command.arg("--plot").arg(&path);
        let (output, _) = run_with_limit(command, LIMIT);
        assert!(output.status.success(), "{}", stderr(&output));
        let text = stdout(&output);
        assert!(
            text.contains("orbital forecast, t0 = 2025-05-12T00:00:00Z"),
            "{text}"
        );
        assert!(text.contains("NORAD"), "{text}");
        let bytes = std::fs::read(&path).unwrap();
        if name.ends_with(".png") {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
            assert!(bytes.len() > 10_000, "{} bytes", bytes.len());
        } else {
            let svg = String::from_utf8(bytes).unwrap();
            assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
            assert!(svg.contains("seconds after t0"));
        }
    }
}

#[test]
fn tle_gen_writes_exactly_the_shipped_catalogues() {
    let dir = scratch("tle-gen");
    let mut command = bin();
    command
        .args(["tle-gen", "--all", "--json", "--dir"])
        .arg(&dir);
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["written"].as_array().unwrap().len(), 3);
    let shipped = shipped_gen1().parent().unwrap().to_path_buf();
    for name in ["starlink-gen1.tle", "sparse-80.tle", "sparse-100.tle"] {
        assert_eq!(
            std::fs::read(dir.join(name)).unwrap(),
            std::fs::read(shipped.join(name)).unwrap(),
            "{name}"
        );
    }

    let out = dir.join("sparse-80-later.tle");
    let mut command = bin();
    command.args(["tle-gen", "--constellation", "sparse-80"]);
    command
        .args(["--epoch", "2025-06-01T00:00:00Z", "--out"])
        .arg(&out);
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(output.status.success(), "{}", stderr(&output));
    let catalogue = Catalogue::load(&out).unwrap();
    assert_eq!(catalogue.len(), 80);
    assert_eq!(
        catalogue.newest_epoch(),
        Some(Utc.with_ymd_and_hms(2025, 6, 1, 0, 0, 0).unwrap())
    );
}

#[test]
fn the_calibrated_forecast_puts_the_prior_on_every_slot_boundary() {
    let (json, _) = forecast_json(&[
        "--source",
        "calibrated",
        "--lat",
        "36.56",
        "--lon",
        "136.66",
        "--at",
        "2025-05-12T12:00:05Z",
        "--prior-rate",
        "kanazawa",
    ]);
    assert_eq!(json["source"], "calibrated");
    assert_eq!(json["timing"], "sub-second");
    let predicted = json["predicted"].as_array().unwrap();
    let offsets: Vec<f64> = predicted
        .iter()
        .map(|p| p["offset_s"].as_f64().unwrap())
        .collect();
    // 12:00:05 -> :12, :27, :42, :57, then 12:01:12 ... 12:01:57.
    assert_eq!(
        offsets,
        vec![7.0, 22.0, 37.0, 52.0, 67.0, 82.0, 97.0, 112.0]
    );
    assert!(
        predicted
            .iter()
            .all(|p| (p["probability"].as_f64().unwrap() - 0.576).abs() < 1e-6)
    );
    // Bits where p >= 0.5, the cumulative channel the expected count over 8.
    let on: Vec<usize> = (0..HORIZON_STEPS)
        .filter(|&k| bits(&json)[k] == 1)
        .collect();
    assert_eq!(on, vec![6, 21, 36, 51, 66, 81, 96, 111]);
    let last = json["cumulative"][119].as_f64().unwrap();
    assert!((last - 8.0 * 0.576 / 8.0).abs() < 1e-5, "{last}");
    // Below one half the bits go, the expected count stays.
    let (json, _) = forecast_json(&[
        "--source",
        "calibrated",
        "--at",
        "2025-05-12T12:00:05Z",
        "--prior-rate",
        "0.3",
    ]);
    assert!(bits(&json).iter().all(|&b| b == 0));
    assert!((json["expected_count"].as_f64().unwrap() - 2.4).abs() < 1e-5);
    let mut command = bin();
    command.args([
        "forecast",
        "--source",
        "calibrated",
        "--prior-rate",
        "sydney",
    ]);
    let (output, _) = run_with_limit(command, LIMIT);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("\"sydney\""),
        "{}",
        stderr(&output)
    );
}

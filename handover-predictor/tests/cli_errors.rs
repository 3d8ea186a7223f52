//! Bad input to the command-line tool: a non-zero exit, a message that names the culprit (file,
//! line, argument), within a short time, and never a panic.

#![cfg(feature = "cli")]

mod cli_support;

use cli_support::{bin, run_with_limit, scratch, shipped_gen1, stderr};
use std::net::TcpListener;
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// Runs the binary, expects failure, returns stderr (checked for panics).
fn fails(command: Command) -> (Option<i32>, String) {
    let (output, _) = run_with_limit(command, LIMIT);
    let err = stderr(&output);
    assert!(
        !output.status.success(),
        "expected a failure, stderr: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    (output.status.code(), err)
}

fn forecast_with(tle: &std::path::Path, extra: &[&str]) -> Command {
    let mut command = bin();
    command.arg("forecast").arg("--tle").arg(tle);
    command.args(extra);
    command
}

#[test]
fn a_corrupted_tle_file_is_refused_with_its_name_and_line() {
    let dir = scratch("corrupted-tle");
    let text = std::fs::read_to_string(shipped_gen1()).unwrap();
    let mut lines: Vec<String> = text.lines().take(30).map(str::to_owned).collect();
    // Line 6 is the second element set's line 2: break its checksum digit.
    let line = &mut lines[5];
    assert!(line.starts_with("2 "), "{line}");
    let last = line.pop().unwrap();
    line.push(if last == '0' { '1' } else { '0' });
    let path = dir.join("corrupted.tle");
    std::fs::write(&path, lines.join("\n")).unwrap();

    let (code, err) = fails(forecast_with(&path, &["--lat", "50.67", "--lon", "4.61"]));
    assert_eq!(code, Some(1));
    assert!(err.contains("corrupted.tle"), "{err}");
    assert!(err.contains("line 6"), "{err}");
    assert!(err.contains("checksum"), "{err}");

    // The simulated dish refuses it the same way.
    let mut command = bin();
    command.args([
        "dish-sim",
        "--listen",
        "127.0.0.1:0",
        "--lat",
        "1",
        "--lon",
        "2",
    ]);
    command.arg("--tle").arg(&path);
    let (_, err) = fails(command);
    assert!(
        err.contains("corrupted.tle") && err.contains("line 6"),
        "{err}"
    );
}

#[test]
fn a_missing_file_is_named_once() {
    let dir = scratch("missing-file");
    let missing = dir.join("no-such-catalogue.tle");
    let (code, err) = fails(forecast_with(
        &missing,
        &["--lat", "50.67", "--lon", "4.61"],
    ));
    assert_eq!(code, Some(1));
    assert!(err.contains("no-such-catalogue.tle"), "{err}");
    assert_eq!(err.matches("No such file").count(), 1, "{err}");

    let mut command = bin();
    command
        .args(["render-map", "--out"])
        .arg(dir.join("map.png"));
    command.arg("--map").arg(dir.join("no-such-map.json"));
    let (_, err) = fails(command);
    assert!(err.contains("no-such-map.json"), "{err}");
}

#[test]
fn detecting_against_a_closed_port_fails_within_the_client_budget() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let addr = format!("127.0.0.1:{port}");
    let mut command = bin();
    command.args(["detect", "--dish", &addr, "--duration", "120s"]);
    let (output, took) = run_with_limit(command, LIMIT);
    let err = stderr(&output);
    assert!(!output.status.success(), "{err}");
    assert!(err.contains(&addr) && err.contains("unreachable"), "{err}");
    // The default client gives up after 3 attempts of at most 2 s plus 0.3 s of backoff.
    assert!(took < Duration::from_secs(8), "{took:?}");
}

#[test]
fn out_of_range_and_malformed_arguments_are_usage_errors_naming_the_argument() {
    let tle = shipped_gen1();
    for (args, needle) in [
        (vec!["--lat", "200", "--lon", "4.61"], "--lat"),
        (vec!["--lat", "50", "--lon", "-400"], "--lon"),
        (vec!["--lat", "north", "--lon", "4.61"], "--lat"),
        (
            vec!["--lat", "50", "--lon", "4", "--at", "yesterday"],
            "--at",
        ),
        (
            vec!["--lat", "50", "--lon", "4", "--min-elevation", "95"],
            "--min-elevation",
        ),
        (
            vec!["--lat", "50", "--lon", "4", "--source", "crystal-ball"],
            "--source",
        ),
    ] {
        let (code, err) = fails(forecast_with(&tle, &args));
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let (_, err) = fails(forecast_with(&tle, &["--lat", "200", "--lon", "4.61"]));
    assert!(err.contains("latitude 200 is outside [-90, 90]"), "{err}");

    let mut command = bin();
    command.args([
        "detect",
        "--dish",
        "127.0.0.1:1",
        "--duration",
        "ten minutes",
    ]);
    let (code, err) = fails(command);
    assert_eq!(code, Some(2));
    assert!(err.contains("--duration"), "{err}");
}

#[test]
fn missing_or_unsafe_choices_are_explained() {
    let tle = shipped_gen1();
    // No --tle for the orbital predictor.
    let mut command = bin();
    command.args(["forecast", "--lat", "50", "--lon", "4"]);
    let (_, err) = fails(command);
    assert!(err.contains("--tle"), "{err}");
    // No position.
    let (_, err) = fails(forecast_with(&tle, &[]));
    assert!(err.contains("--lat and --lon"), "{err}");
    // A picture format plotters cannot write.
    let (_, err) = fails(forecast_with(
        &tle,
        &["--lat", "50", "--lon", "4", "--plot", "x.jpg"],
    ));
    assert!(
        err.contains("x.jpg") && err.contains(".png or .svg"),
        "{err}"
    );
    // The hybrid needs a dish to watch.
    let (_, err) = fails(forecast_with(&tle, &["--source", "hybrid"]));
    assert!(err.contains("--dish"), "{err}");
    // The simulator stays on loopback unless told otherwise.
    let mut command = bin();
    command.args([
        "dish-sim",
        "--listen",
        "0.0.0.0:0",
        "--lat",
        "1",
        "--lon",
        "2",
    ]);
    command.arg("--tle").arg(&tle);
    let (_, err) = fails(command);
    assert!(err.contains("not a loopback address"), "{err}");
    assert!(err.contains("--allow-non-loopback"), "{err}");
}

#[test]
fn a_map_file_that_is_not_a_map_is_refused_with_the_reason() {
    let dir = scratch("bad-map");
    for (content, reason) in [
        ("not json", "not valid JSON"),
        (r#"{"snr": [1, 2]}"#, "\"rows\""),
        (r#"{"rows": 2, "cols": 2, "snr": [1, 2, 3]}"#, "snr"),
        (r#"[[0.5, 1.0], [0.5]]"#, "row 1"),
        (r#"[[0.5, "x"]]"#, "snr value 1"),
    ] {
        let path = dir.join("map.json");
        std::fs::write(&path, content).unwrap();
        let mut command = bin();
        command
            .args(["render-map", "--out"])
            .arg(dir.join("map.png"));
        command.arg("--map").arg(&path);
        let (code, err) = fails(command);
        assert_eq!(code, Some(1));
        assert!(err.contains("map.json"), "{content}: {err}");
        assert!(err.contains(reason), "{content}: {err}");
    }
}

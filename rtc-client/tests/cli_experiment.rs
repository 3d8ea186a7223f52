//! The `rtc-client experiment` and `rtc-client collect` binaries on short calls: the files they
//! promise exist, report.json has every cell, each telemetry file equals what `sim` writes for
//! the same seed, the output does not depend on `--jobs`, and bad arguments fail clearly.

mod cli_support;

use cli_support::{assert_clear_failure, run, stderr};
use std::path::{Path, PathBuf};

/// A fresh directory for this test's files.
fn scratch_in(test: &str) -> PathBuf {
    cli_support::scratch("cli_experiment", test)
}

/// An output directory that a failing run must not create.
fn never_created(test: &str) -> String {
    scratch_in(test)
        .join("never")
        .to_string_lossy()
        .into_owned()
}

/// Runs `command` (its own arguments first) on 20-s calls from `seed` into `out` with `jobs`
/// threads, then `extra`.
fn short_calls(
    command: &[&str],
    seed: &str,
    out: &Path,
    jobs: &str,
    extra: &[&str],
) -> std::process::Output {
    let out = out.to_str().unwrap();
    let common = [
        "--duration",
        "20s",
        "--seed",
        seed,
        "--jobs",
        jobs,
        "--out",
        out,
    ];
    run(&[command, &common, extra].concat())
}

/// Runs a 2-scenario, 2-policy, 2-call experiment from seed 5.
fn small_experiment(out: &Path, jobs: &str, extra: &[&str]) -> std::process::Output {
    let command = [
        "experiment",
        "--scenarios",
        "starlink,terrestrial-lte",
        "--policies",
        "default,fixed:900",
        "--calls",
        "2",
    ];
    short_calls(&command, "5", out, jobs, extra)
}

/// Collects 0.025 h (90 s) of calls over starlink and sparse-leo from seed 10.
fn small_collect(out: &Path, jobs: &str, extra: &[&str]) -> std::process::Output {
    let command = [
        "collect",
        "--scenarios",
        "starlink,sparse-leo",
        "--hours",
        "0.025",
    ];
    short_calls(&command, "10", out, jobs, extra)
}

fn read_json(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

#[test]
fn an_experiment_writes_report_plots_and_telemetry_for_every_call() {
    let dir = scratch_in("files");
    let out = dir.join("ab");
    let o = small_experiment(&out, "2", &[]);
    assert!(o.status.success(), "failed: {}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("## starlink"), "{stdout}");
    assert!(
        stdout.contains("| metric | default | fixed:900 |"),
        "{stdout}"
    );

    let report = read_json(&out.join("report.json"));
    assert_eq!(report["schema"], "leopace.experiment.v1");
    assert_eq!(report["plan"]["calls"], 2);
    assert_eq!(report["plan"]["seed_base"], 5);
    assert_eq!(report["method"]["resamples"], 10_000);
    let cells = report["cells"].as_array().unwrap();
    let names: Vec<(String, String)> = cells
        .iter()
        .map(|c| {
            (
                c["scenario"].as_str().unwrap().to_owned(),
                c["policy"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("starlink", "default"),
        ("starlink", "fixed:900"),
        ("terrestrial-lte", "default"),
        ("terrestrial-lte", "fixed:900"),
    ]
    .iter()
    .map(|(s, p)| (s.to_string(), p.to_string()))
    .collect();
    assert_eq!(names, expected);
    for cell in cells {
        assert_eq!(cell["seeds"], serde_json::json!([5, 6]));
        let metrics = cell["metrics"].as_array().unwrap();
        let keys: Vec<&str> = metrics
            .iter()
            .map(|m| m["metric"].as_str().unwrap())
            .collect();
        assert_eq!(
            keys,
            [
                "video_bitrate_kbps",
                "freezes_per_min",
                "total_freeze_ms",
                "frozen_s_per_min",
                "stalls_per_min",
                "frame_rate",
                "e2e_delay_p50_ms",
                "e2e_delay_p95_ms",
                "packet_loss_pct",
                "fec_share_pct"
            ]
        );
        for m in metrics {
            let values = m["values"].as_array().unwrap();
            assert_eq!(values.len(), 2);
            let mean = m["mean"].as_f64().unwrap();
            let (low, high) = (
                m["ci_low"].as_f64().unwrap(),
                m["ci_high"].as_f64().unwrap(),
            );
            assert!(low <= mean && mean <= high, "{m}");
            let is_default = cell["policy"] == "default";
            assert_eq!(m["p_value"].is_null(), is_default, "{m}");
        }
        let bitrate = metrics[0]["mean"].as_f64().unwrap();
        assert!(bitrate > 50.0, "implausible bitrate {bitrate}");
    }
    // The calls ran with libwebrtc's adaptive FEC: it protects starlink's lossy slot
    // boundaries (about 30 % of the video bytes on these seeds) and spends nothing on a clean
    // LTE link.
    for cell in cells {
        let fec = cell["metrics"][9]["mean"].as_f64().unwrap();
        let starlink = cell["scenario"] == "starlink";
        assert_eq!(fec > 5.0, starlink, "FEC share {fec} in {cell}");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## terrestrial-lte"), "{md}");
    assert!(md.contains("permutation test"), "{md}");
    // Every row, each with a CI for both policies and a paired test for fixed:900, in both
    // scenarios' tables.
    for label in [
        "| Video bitrate (kbit/s) ↑ |",
        "| Freeze rate (freezes/min) ↓ |",
        "| Total freeze time (ms) ↓ |",
        "| Freeze time per minute (s/min) ↓ |",
        "| Stall rate (stalls/min) ↓ |",
        "| E2E delay P50 (ms) ↓ |",
        "| E2E delay P95 (ms) ↓ |",
        "| FEC share (% of video bytes) |",
    ] {
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with(label)).collect();
        assert_eq!(rows.len(), 2, "{label} in\n{md}");
        for row in rows {
            assert_eq!(row.matches(" [").count(), 2, "{row}");
            assert_eq!(row.matches(", p=").count(), 1, "{row}");
        }
    }

    for plot in [
        "video_bitrate_kbps",
        "freezes_per_min",
        "frame_rate",
        "e2e_delay_p95_ms",
        "packet_loss_pct",
    ] {
        let png = std::fs::read(out.join("plots").join(format!("{plot}.png"))).unwrap();
        assert_eq!(&png[1..4], b"PNG", "{plot}");
    }
    for scenario in ["starlink", "terrestrial-lte"] {
        for policy in ["default", "fixed-900"] {
            for seed in [5, 6] {
                let file = out
                    .join("telemetry")
                    .join(scenario)
                    .join(policy)
                    .join(format!("seed-{seed}.jsonl"));
                let records: Vec<_> =
                    pacer::telemetry::read_intervals(std::fs::read(&file).unwrap().as_slice())
                        .collect::<Result<_, _>>()
                        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                assert_eq!(records.len(), 1, "{}", file.display());
                assert_eq!(records[0].seed, Some(seed));
            }
        }
    }
}

#[test]
fn experiment_telemetry_equals_what_sim_writes_for_the_same_seed() {
    let dir = scratch_in("same-as-sim");
    let out = dir.join("ab");
    let o = run(&[
        "experiment",
        "--scenarios",
        "starlink",
        "--policies",
        "heuristic,fixed:900",
        "--calls",
        "2",
        "--duration",
        "30s",
        "--interval",
        "10s",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "failed: {}", stderr(&o));
    // --json prints report.json itself.
    let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(printed, read_json(&out.join("report.json")));
    // No default among the policies: nothing to compare with.
    assert!(printed["method"]["baseline"].is_null());

    for (policy, folder) in [("heuristic", "heuristic"), ("fixed:900", "fixed-900")] {
        let seed = "4";
        let sim_file = dir.join(format!("sim-{folder}.jsonl"));
        let s = run(&[
            "sim",
            "--scenario",
            "starlink",
            "--policy",
            policy,
            "--seed",
            seed,
            "--duration",
            "30s",
            "--interval",
            "10s",
            "--telemetry",
            sim_file.to_str().unwrap(),
        ]);
        assert!(s.status.success(), "sim failed: {}", stderr(&s));
        let from_sim = std::fs::read(&sim_file).unwrap();
        let from_experiment = std::fs::read(
            out.join("telemetry/starlink")
                .join(folder)
                .join("seed-4.jsonl"),
        )
        .unwrap();
        assert_eq!(from_sim.split(|&b| b == b'\n').count(), 4, "3 intervals");
        assert!(
            from_sim == from_experiment,
            "{policy}: experiment telemetry differs from sim's"
        );
    }
}

#[test]
fn the_handover_source_reaches_every_call() {
    let dir = scratch_in("handover");
    let out = dir.join("ab");
    let common = [
        "--policy",
        "heuristic",
        "--seed",
        "4",
        "--duration",
        "30s",
        "--interval",
        "10s",
        "--handover",
        "mirror",
    ];
    let mut args = vec!["experiment", "--scenarios", "starlink", "--calls", "1"];
    // `--policy` is `sim`'s spelling; experiment takes `--policies`.
    args.extend(
        common
            .iter()
            .map(|a| if *a == "--policy" { "--policies" } else { a }),
    );
    args.extend(["--out", out.to_str().unwrap()]);
    let o = run(&args);
    assert!(o.status.success(), "failed: {}", stderr(&o));
    assert_eq!(
        read_json(&out.join("report.json"))["plan"]["handover"],
        "mirror"
    );
    let sim_file = dir.join("sim.jsonl");
    let mut args = vec!["sim", "--scenario", "starlink"];
    args.extend(common);
    args.extend(["--telemetry", sim_file.to_str().unwrap()]);
    let s = run(&args);
    assert!(s.status.success(), "sim failed: {}", stderr(&s));
    let from_sim = std::fs::read(&sim_file).unwrap();
    let from_experiment =
        std::fs::read(out.join("telemetry/starlink/heuristic/seed-4.jsonl")).unwrap();
    assert!(
        from_sim == from_experiment,
        "--handover mirror did not reach the call"
    );
    let text = String::from_utf8(from_experiment).unwrap();
    assert!(text.contains(r#""source":"mirror""#), "{text}");
}

#[test]
fn the_report_is_identical_with_one_or_two_jobs() {
    let dir = scratch_in("jobs");
    let one = dir.join("one");
    let two = dir.join("two");
    for (out, jobs) in [(&one, "1"), (&two, "2")] {
        let o = small_experiment(out, jobs, &[]);
        assert!(o.status.success(), "--jobs {jobs} failed: {}", stderr(&o));
    }
    for file in ["report.json", "report.md"] {
        assert!(
            std::fs::read(one.join(file)).unwrap() == std::fs::read(two.join(file)).unwrap(),
            "{file} differs between --jobs 1 and --jobs 2"
        );
    }
}

#[test]
fn a_non_empty_out_is_refused_unless_forced() {
    let dir = scratch_in("force");
    let out = dir.join("ab");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "keep me").unwrap();
    let o = small_experiment(&out, "2", &[]);
    assert_clear_failure(&o, "not empty");
    assert!(!out.join("report.json").exists());

    let o = small_experiment(&out, "2", &["--force"]);
    assert!(o.status.success(), "--force failed: {}", stderr(&o));
    assert!(out.join("report.json").exists());
    // --force replaces the run's own results, nothing else.
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "keep me"
    );
}

#[test]
fn bad_experiment_arguments_fail_clearly() {
    let out = never_created("bad");
    let out = out.as_str();
    let base = |extra: &[&str]| {
        let mut args = vec!["experiment", "--duration", "20s", "--out", out];
        args.extend_from_slice(extra);
        run(&args)
    };
    assert_clear_failure(
        &base(&["--scenarios", "starlink,no-such-scenario"]),
        "no-such-scenario",
    );
    assert_clear_failure(
        &base(&["--scenarios", "starlink", "--policies", "default,bogus"]),
        "fixed:<ms>",
    );
    assert_clear_failure(
        &base(&["--scenarios", "starlink", "--policies", "fixed:5"]),
        "50 to 10000 ms",
    );
    assert_clear_failure(
        &base(&["--scenarios", "starlink", "--calls", "0"]),
        "--calls",
    );
    assert_clear_failure(&base(&["--scenarios", "starlink", "--jobs", "0"]), "--jobs");
    assert_clear_failure(
        &base(&["--scenarios", "starlink", "--policies", "default,default"]),
        "twice",
    );
    assert_clear_failure(&base(&["--scenarios", "starlink,starlink"]), "twice");
    assert_clear_failure(
        &run(&[
            "experiment",
            "--scenarios",
            "starlink",
            "--duration",
            "ten minutes",
            "--out",
            out,
        ]),
        "--duration",
    );
    assert_clear_failure(
        &base(&["--scenarios", "starlink", "--interval", "5m"]),
        "120 s",
    );
    assert_clear_failure(&run(&["experiment", "--scenarios", "starlink"]), "--out");
    assert!(!Path::new(out).exists(), "a failed run left {out}");
}

#[test]
fn collect_fills_the_hours_with_random_calls_and_a_manifest() {
    let dir = scratch_in("collect");
    let out = dir.join("train");
    // 0.025 h = 90 s of calls at 20 s each: ceil(4.5) = 5 calls, dealt starlink, sparse-leo,
    // starlink, sparse-leo, starlink.
    let o = small_collect(&out, "2", &[]);
    assert!(o.status.success(), "failed: {}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("collected 5 calls, 5 intervals"),
        "{stdout}"
    );

    let manifest = read_json(&out.join("manifest.json"));
    assert_eq!(manifest["schema"], "leopace.collect.v1");
    assert_eq!(manifest["policy"], "random");
    assert_eq!(manifest["calls"], 5);
    assert_eq!(manifest["intervals"], 5);
    assert_eq!(manifest["scenarios"][0]["name"], "starlink");
    assert_eq!(
        manifest["scenarios"][0]["seeds"],
        serde_json::json!([10, 11, 12])
    );
    assert_eq!(
        manifest["scenarios"][1]["seeds"],
        serde_json::json!([10, 11])
    );
    for s in 0..2 {
        assert_eq!(
            manifest["scenarios"][s]["sender"],
            serde_json::json!({"bwe": "googcc", "nack": "libwebrtc", "cwnd": "pushback",
                "keyframe_flush": false, "fec": "libwebrtc"})
        );
    }
    let files = manifest["files"].as_array().unwrap();
    assert_eq!(files.len(), 5);
    assert_eq!(files[0]["path"], "telemetry/starlink/random/seed-10.jsonl");
    for f in files {
        let bytes = std::fs::read(out.join(f["path"].as_str().unwrap())).unwrap();
        assert_eq!(f["bytes"], bytes.len());
        let sha = f["sha256"].as_str().unwrap();
        assert_eq!(sha.len(), 64);
        assert!(sha.chars().all(|c| c.is_ascii_hexdigit()));
        let records: Vec<_> = pacer::telemetry::read_intervals(bytes.as_slice())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(records[0].policy, "random");
    }
    // The same hashes for the same call: the manifest is reproducible.
    let again = dir.join("again");
    let o = small_collect(&again, "1", &["--json"]);
    assert!(o.status.success(), "failed: {}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["calls"], 5);
    assert!(
        std::fs::read(out.join("manifest.json")).unwrap()
            == std::fs::read(again.join("manifest.json")).unwrap(),
        "the manifest depends on --jobs"
    );
}

#[test]
fn bad_collect_arguments_fail_clearly() {
    let out = never_created("collect-bad");
    let out = out.as_str();
    for (hours, needle) in [
        ("--hours=0", "more than 0"),
        ("--hours=-1", "more than 0"),
        ("--hours=inf", "more than 0"),
        ("--hours=lots", "number"),
    ] {
        assert_clear_failure(
            &run(&["collect", "--scenarios", "starlink", hours, "--out", out]),
            needle,
        );
    }
    assert_clear_failure(
        &run(&[
            "collect",
            "--scenarios",
            "starlink",
            "--hours",
            "100000",
            "--duration",
            "1s",
            "--out",
            out,
        ]),
        "at most",
    );
    assert_clear_failure(
        &run(&[
            "collect",
            "--scenarios",
            "nowhere",
            "--hours",
            "1",
            "--out",
            out,
        ]),
        "nowhere",
    );
    assert!(!Path::new(out).exists(), "a failed run left {out}");
}

#[test]
fn the_scenario_files_sender_table_reaches_every_call_and_a_flag_overrides_it() {
    use pacer::CwndMode;
    use pacer::telemetry::read_intervals_file;
    let dir = scratch_in("sender-table");
    let text =
        std::fs::read_to_string(cli_support::root().join("traces/scenarios/terrestrial-lte.toml"))
            .unwrap();
    let scenario = dir.join("lte-pacer.toml");
    std::fs::write(
        &scenario,
        format!("{text}\n[sender]\ncwnd = \"pacer\"\nkeyframe_flush = true\n"),
    )
    .unwrap();
    // (extra flags, expected cwnd mode, expected flush) of every call.
    for (name, extra, cwnd, flush) in [
        ("file", &[][..], CwndMode::Pacer, true),
        ("flag", &["--cwnd", "off"][..], CwndMode::Off, true),
    ] {
        let out = dir.join(name);
        let command = [
            "experiment",
            "--scenarios",
            scenario.to_str().unwrap(),
            "--policies",
            "default",
            "--calls",
            "2",
        ];
        let o = short_calls(&command, "1", &out, "2", extra);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        for seed in [1, 2] {
            let file = out
                .join("telemetry/terrestrial-lte/default")
                .join(format!("seed-{seed}.jsonl"));
            for record in read_intervals_file(&file).unwrap() {
                let sender = record.sender.unwrap();
                assert_eq!(
                    (sender.cwnd_mode, sender.keyframe_flush),
                    (cwnd, flush),
                    "{name} seed {seed}"
                );
            }
        }
        // The report says so too.
        let cwnd_name = if cwnd == CwndMode::Pacer {
            "pacer"
        } else {
            "off"
        };
        let report = read_json(&out.join("report.json"));
        assert_eq!(
            report["plan"]["senders"],
            serde_json::json!([{"bwe": "googcc", "nack": "libwebrtc", "cwnd": cwnd_name,
                "keyframe_flush": flush, "fec": "libwebrtc"}]),
            "{name}"
        );
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        assert!(
            md.contains(&format!(
                "Sender: bwe googcc, nack libwebrtc, cwnd {cwnd_name}, keyframe_flush {flush}, fec libwebrtc."
            )),
            "{name}: {md}"
        );
    }
}

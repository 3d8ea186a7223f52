//! Sweeps split into shards (`--shard K/N`) and joined (`rtc-client merge`): the merged
//! directory is byte for byte what one unsharded run writes (report, plots, telemetry, manifest,
//! run.json), for `experiment` and `collect`; merge refuses a missing or repeated shard,
//! overlapping calls, another configuration or engine, an unfinished shard and a damaged file;
//! and `--resume` reports a journal line cut short and refuses another run's directory.

mod cli_support;

use cli_support::{assert_clear_failure, assert_same_tree, run, stderr};
use std::path::{Path, PathBuf};

fn scratch_in(test: &str) -> PathBuf {
    cli_support::scratch("cli_shards", test)
}

/// The experiment every test here shards: 2 scenarios x 2 policies x 2 calls of 20 s.
const EXPERIMENT: [&str; 13] = [
    "experiment",
    "--scenarios",
    "starlink,terrestrial-lte",
    "--policies",
    "default,fixed:900",
    "--calls",
    "2",
    "--duration",
    "20s",
    "--seed",
    "5",
    "--interval",
    "10s",
];

/// A tiny experiment for the refusals: 1 scenario x 1 policy x 2 calls of 5 s.
const TINY: [&str; 11] = [
    "experiment",
    "--scenarios",
    "terrestrial-lte",
    "--policies",
    "default",
    "--calls",
    "2",
    "--duration",
    "5s",
    "--seed",
    "1",
];

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs `command` into `out` with `extra` arguments; asserts success.
fn ok(command: &[&str], out: &Path, extra: &[&str]) -> String {
    let o = run(&[command, &["--out", path(out)], extra].concat());
    assert!(
        o.status.success(),
        "{command:?} {extra:?} failed: {}",
        stderr(&o)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs `rtc-client merge --out out shards...`.
fn merge(out: &Path, shards: &[&Path]) -> std::process::Output {
    let mut args = vec!["merge", "--out", path(out)];
    args.extend(shards.iter().map(|s| path(s)));
    run(&args)
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn three_experiment_shards_merged_are_byte_identical_to_one_run() {
    let dir = scratch_in("experiment");
    let whole = dir.join("whole");
    ok(&EXPERIMENT, &whole, &["--jobs", "2"]);
    let shards: Vec<PathBuf> = (1..=3).map(|k| dir.join(format!("shard-{k}"))).collect();
    for (k, shard) in shards.iter().enumerate() {
        let spec = format!("{}/3", k + 1);
        let stdout = ok(&EXPERIMENT, shard, &["--shard", &spec, "--jobs", "1"]);
        assert!(stdout.starts_with(&format!("shard {spec}: ")), "{stdout}");
        // A shard writes its calls and its ledger, no report: only merge can summarise.
        assert!(!shard.join("report.json").exists());
        let manifest = read_json(&shard.join("run.json"));
        assert_eq!(manifest["shard"]["index"], k + 1);
        assert_eq!(manifest["complete"], true);
        // Shard K holds the calls whose plan index is K-1 modulo 3.
        let indices: Vec<u64> = manifest["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["index"].as_u64().unwrap())
            .collect();
        let expected: Vec<u64> = (0..8).filter(|i| i % 3 == k as u64).collect();
        assert_eq!(indices, expected);
    }
    let merged = dir.join("merged");
    // The shards in any order.
    let o = merge(&merged, &[&shards[2], &shards[0], &shards[1]]);
    assert!(o.status.success(), "merge failed: {}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("## starlink"));
    let files = assert_same_tree(&whole, &merged);
    // 8 telemetry files, 2 reports, 5 plots, run.json; no journal left.
    assert_eq!(files, 16);
    let manifest = read_json(&merged.join("run.json"));
    assert_eq!(manifest["cells"].as_array().unwrap().len(), 8);
}

#[test]
fn two_collect_shards_merged_are_byte_identical_to_one_run() {
    let dir = scratch_in("collect");
    let collect = [
        "collect",
        "--scenarios",
        "starlink,sparse-leo",
        "--hours",
        "0.025",
        "--duration",
        "20s",
        "--seed",
        "10",
    ];
    let whole = dir.join("whole");
    ok(&collect, &whole, &["--jobs", "2"]);
    let first = dir.join("first");
    let second = dir.join("second");
    ok(&collect, &first, &["--shard", "1/2", "--jobs", "1"]);
    ok(&collect, &second, &["--shard", "2/2", "--jobs", "1"]);
    assert!(!first.join("manifest.json").exists());
    let merged = dir.join("merged");
    let o = merge(&merged, &[&first, &second]);
    assert!(o.status.success(), "merge failed: {}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("collected 5 calls"));
    // 5 telemetry files, manifest.json, run.json.
    assert_eq!(assert_same_tree(&whole, &merged), 7);
}

#[test]
fn merge_refuses_missing_repeated_and_overlapping_shards() {
    let dir = scratch_in("refusals");
    let one = dir.join("one");
    let two = dir.join("two");
    ok(&TINY, &one, &["--shard", "1/2"]);
    ok(&TINY, &two, &["--shard", "2/2"]);
    let never = dir.join("never");

    assert_clear_failure(
        &merge(&never, &[&one]),
        "shard 2/2 of the sweep is missing (no directory given holds it)",
    );
    assert_clear_failure(
        &merge(&never, &[&one, &one, &two]),
        &format!(
            "shard 1/2 is given twice: {} and {}",
            one.display(),
            one.display()
        ),
    );
    // Shard 1 of 4 holds call 0 again, which shard 1 of 2 already holds.
    let quarter = dir.join("quarter");
    ok(&TINY, &quarter, &["--shard", "1/4"]);
    assert_clear_failure(
        &merge(&never, &[&one, &two, &quarter]),
        &format!(
            "call 0 (terrestrial-lte / default / seed 1) is in both {} and {}",
            one.display(),
            quarter.display()
        ),
    );
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert_clear_failure(&merge(&never, &[&one, &empty]), "holds no run.json");
    assert_clear_failure(&merge(&one, &[&one, &two]), "is one of the shards");
    assert!(!never.exists(), "a refused merge wrote its --out");
}

#[test]
fn merge_refuses_another_configuration_engine_an_unfinished_shard_and_a_damaged_file() {
    let dir = scratch_in("mismatch");
    let one = dir.join("one");
    let two = dir.join("two");
    ok(&TINY, &one, &["--shard", "1/2"]);
    ok(&TINY, &two, &["--shard", "2/2"]);
    let never = dir.join("never");

    let longer = dir.join("longer");
    let mut tiny = TINY.to_vec();
    tiny[8] = "6s";
    ok(&tiny, &longer, &["--shard", "2/2"]);
    let o = merge(&never, &[&one, &longer]);
    assert_clear_failure(
        &o,
        &format!(
            "{} cannot be merged with {}: configuration ",
            longer.display(),
            one.display()
        ),
    );
    assert_clear_failure(&o, "(differing: duration_ms)");

    // The same shard as made by another build of the engine.
    let edit = |dir: &Path, from: &str, to: &str| {
        let file = dir.join("run.json");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains(from), "{from} not in {}", file.display());
        std::fs::write(&file, text.replacen(from, to, 1)).unwrap();
    };
    let other = dir.join("other-engine");
    ok(&TINY, &other, &["--shard", "2/2"]);
    edit(&other, "\"binary_sha256\": \"", "\"binary_sha256\": \"00");
    assert_clear_failure(&merge(&never, &[&one, &other]), "cannot be merged with");
    assert_clear_failure(&merge(&never, &[&one, &other]), ": engine rtc-client ");

    let unfinished = dir.join("unfinished");
    ok(&TINY, &unfinished, &["--shard", "2/2"]);
    edit(&unfinished, "\"complete\": true", "\"complete\": false");
    assert_clear_failure(
        &merge(&never, &[&one, &unfinished]),
        &format!(
            "{} (shard 2/2) is not finished: run its command again with --resume",
            unfinished.display()
        ),
    );

    let damaged = dir.join("damaged");
    ok(&TINY, &damaged, &["--shard", "2/2"]);
    let file = damaged.join("telemetry/terrestrial-lte/default/seed-2.jsonl");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[10] ^= 1;
    std::fs::write(&file, bytes).unwrap();
    assert_clear_failure(
        &merge(&never, &[&one, &damaged]),
        &format!("{} is not the file its run.json records", file.display()),
    );
    assert!(!never.join("report.json").exists());
}

#[test]
fn a_journal_line_cut_short_is_reported_and_its_call_runs_again() {
    let dir = scratch_in("torn");
    let whole = dir.join("whole");
    ok(&TINY, &whole, &[]);
    // The state a run killed while writing its second journal line leaves: run.json not yet
    // complete, the first call's line whole, the second one's cut short, no report yet.
    let out = dir.join("killed");
    ok(&TINY, &out, &[]);
    let manifest = read_json(&out.join("run.json"));
    let mut lines = Vec::new();
    for cell in manifest["cells"].as_array().unwrap() {
        lines.push(serde_json::to_string(cell).unwrap());
    }
    let mut unfinished = manifest.clone();
    unfinished["complete"] = serde_json::json!(false);
    unfinished["cells"] = serde_json::json!([]);
    std::fs::write(
        out.join("run.json"),
        serde_json::to_string_pretty(&unfinished).unwrap() + "\n",
    )
    .unwrap();
    let torn = format!("{}\n{}", lines[0], &lines[1][..lines[1].len() / 2]);
    std::fs::write(out.join("cells.jsonl"), torn).unwrap();
    for report in ["report.json", "report.md"] {
        std::fs::remove_file(out.join(report)).unwrap();
    }
    let o = run(&[&TINY[..], &["--out", path(&out), "--resume"]].concat());
    assert!(o.status.success(), "--resume failed: {}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{} line 2 was cut short when the run stopped; it is not read and its call runs again",
            out.join("cells.jsonl").display()
        )),
        "{err}"
    );
    assert_same_tree(&whole, &out);
}

#[test]
fn resume_refuses_another_runs_directory() {
    let dir = scratch_in("resume-refusals");
    let out = dir.join("run");
    ok(&TINY, &out, &["--shard", "1/2"]);
    let o = run(&[
        &TINY[..],
        &["--out", path(&out), "--resume", "--shard", "2/2"],
    ]
    .concat());
    assert_clear_failure(
        &o,
        "holds another run than this command's (shard 1/2 vs 2/2)",
    );
    let mut tiny = TINY.to_vec();
    tiny[6] = "3";
    let o = run(&[
        &tiny[..],
        &["--out", path(&out), "--resume", "--shard", "1/2"],
    ]
    .concat());
    assert_clear_failure(&o, "holds another run than this command's (configuration ");

    let foreign = dir.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "keep me").unwrap();
    let o = run(&[&TINY[..], &["--out", path(&foreign), "--resume"]].concat());
    assert_clear_failure(&o, "holds no run.json, so no run of this version to resume");
    assert_eq!(std::fs::read_dir(&foreign).unwrap().count(), 1);

    let o = run(&[&TINY[..], &["--out", path(&out), "--resume", "--force"]].concat());
    assert_clear_failure(&o, "--force");
    let o = run(&[&TINY[..], &["--out", path(&out), "--shard", "3/2"]].concat());
    assert_clear_failure(&o, "shard 3/2 does not exist");
    // --resume on a directory not yet made starts the run.
    let fresh = dir.join("fresh");
    ok(&TINY, &fresh, &["--resume"]);
    assert!(fresh.join("report.json").exists());
}

//! The subcommands that need no training: `inspect` and `cluster` on generated logs, and the
//! inputs every subcommand must refuse clearly.

mod support;

use policy_train::expert::{Expert, LabelRule};
use support::{FILES, GROUPS, INTERVALS, Scratch, USABLE};

fn inspect_json(logs: &str) -> serde_json::Value {
    support::json(&support::policy_train_ok(&[
        "inspect", "--logs", logs, "--json",
    ]))
}

#[test]
fn inspect_counts_intervals_per_scenario_policy_limit_and_handover_count() {
    let scratch = Scratch::new("inspect");
    let logs = support::write_logs(scratch.path(), 1);
    let v = inspect_json(&logs);
    assert_eq!(v["intervals"], INTERVALS);
    assert_eq!(v["files"].as_array().map(Vec::len), Some(FILES));
    assert_eq!(
        v["shorter_than_60s"], FILES,
        "one short interval ends each call"
    );
    assert_eq!(v["rejected"], serde_json::json!([]));
    let per_call = INTERVALS / FILES;
    assert_eq!(
        v["per_scenario"],
        serde_json::json!({
            "sparse-leo": 4 * per_call,
            "starlink": 4 * per_call,
            "terrestrial-lte": 2 * per_call,
        })
    );
    assert_eq!(v["per_policy"], serde_json::json!({ "random": INTERVALS }));
    let per_action = v["per_action_ms"].as_object().expect("counts per limit");
    assert_eq!(per_action.len(), 15, "{per_action:?}");
    let total: u64 = per_action.values().filter_map(|n| n.as_u64()).sum();
    assert_eq!(total, INTERVALS as u64);
    // Every full interval tried each limit 4 times per group: at least 20 per limit.
    assert!(
        per_action.values().all(|n| n.as_u64() >= Some(20)),
        "{per_action:?}"
    );
    let per_count = &v["observed_handovers_per_window"];
    let group_size = 2 * per_call;
    assert_eq!(per_count["0"], group_size);
    assert_eq!(per_count["1"], group_size);
    assert_eq!(per_count["2"], group_size);
    assert_eq!(per_count["8"], group_size);
    let few: u64 = ["3", "4", "5"]
        .iter()
        .filter_map(|k| per_count[*k].as_u64())
        .sum();
    assert_eq!(few, group_size as u64);
    assert!(per_count["4"].as_u64() > per_count["3"].as_u64());
}

#[test]
fn inspect_prints_tables_for_a_person() {
    let scratch = Scratch::new("inspect-human");
    let logs = support::write_logs(scratch.path(), 1);
    let out = support::policy_train_ok(&["inspect", "--logs", &logs]);
    assert!(
        out.starts_with(&format!(
            "{FILES} files, {INTERVALS} intervals ({FILES} shorter than 60 s, left out of training), 0 lines rejected"
        )),
        "{out}"
    );
    assert!(out.contains("observed handovers per 120-s window"), "{out}");
}

#[test]
fn a_corrupted_line_is_reported_with_its_file_and_line_and_skipped() {
    let scratch = Scratch::new("corrupt");
    let logs = support::write_logs(scratch.path(), 1);
    let file = scratch.path().join("telemetry/starlink/slots-0.jsonl");
    let text = std::fs::read_to_string(&file).expect("a generated file");
    let mut lines: Vec<&str> = text.lines().collect();
    let whole = lines.len();
    // Line 3 becomes truncated JSON, line 5 a record of another schema.
    let truncated = &lines[2][..lines[2].len() / 2].to_owned();
    let other_schema = lines[4].replace("leopace.interval.v1", "leopace.interval.v0");
    lines[2] = truncated;
    lines[4] = &other_schema;
    std::fs::write(&file, lines.join("\n") + "\n").expect("corrupt the file");

    let v = inspect_json(&logs);
    assert_eq!(v["intervals"], INTERVALS - 2);
    let rejected = v["rejected"].as_array().expect("rejected lines");
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    assert!(
        rejected[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("slots-0.jsonl")
    );
    assert_eq!(rejected[0]["line"], 3);
    assert!(
        rejected[0]["reason"]
            .as_str()
            .unwrap()
            .contains("not valid JSON"),
        "{rejected:?}"
    );
    assert_eq!(rejected[1]["line"], 5);
    assert!(
        rejected[1]["reason"]
            .as_str()
            .unwrap()
            .contains("\"leopace.interval.v0\", expected \"leopace.interval.v1\""),
        "{rejected:?}"
    );
    let files = v["files"].as_array().expect("files");
    let slots = files
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("slots-0.jsonl"))
        .expect("the corrupted file is still read");
    assert_eq!(slots["records"], whole - 2);

    // The human form names the file and the line too.
    let out = support::policy_train_ok(&["inspect", "--logs", &logs]);
    assert!(out.contains("2 lines rejected"), "{out}");
    assert!(out.contains("slots-0.jsonl:3: not valid JSON"), "{out}");

    // cluster skips them and goes on (with a warning on stderr).
    let out_dir = scratch.path().join("expert");
    let run = support::policy_train(&[
        "cluster",
        "--logs",
        &logs,
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("slots-0.jsonl:3: skipped"), "{stderr}");
}

#[test]
fn cluster_alone_writes_the_expert_with_the_designed_limits() {
    let scratch = Scratch::new("cluster");
    let logs = support::write_logs(scratch.path(), 1);
    let out_dir = scratch.path().join("expert");
    let out = support::policy_train_ok(&[
        "cluster",
        "--logs",
        &logs,
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        out.contains("deployed limits: [500, 600, 900, 4000] ms"),
        "{out}"
    );
    assert!(out.contains("k     inertia  silhouette"), "{out}");
    let text = std::fs::read_to_string(out_dir.join("expert.json")).expect("expert.json");
    let expert: Expert = serde_json::from_str(&text).expect("an expert");
    assert_eq!(expert.intervals, USABLE);
    assert_eq!(
        expert
            .clusters
            .iter()
            .map(|c| c.action_ms)
            .collect::<Vec<_>>(),
        GROUPS.map(|g| g.best_ms).to_vec()
    );
    // The five generated patterns are well separated at k = 5 (higher ks split "few" by its
    // integer count, so they score as well or better: the silhouette is a guide, not the rule).
    assert_eq!(expert.label_rule, LabelRule::OneSe);
    assert!(
        out.contains("limit per cluster: the smallest limit within one standard error"),
        "{out}"
    );
    for c in &expert.clusters {
        let best = &c.rewards[&c.action_ms];
        assert!(best.n >= 3 && best.se > 0.0, "{c:?}");
    }
    let five = expert.k_choice.iter().find(|c| c.k == 5).expect("k = 5");
    assert!(five.silhouette > 0.9, "{:?}", expert.k_choice);
    // Inertia falls as k grows.
    assert!(
        expert
            .k_choice
            .windows(2)
            .all(|w| w[1].inertia <= w[0].inertia + 1e-9),
        "{:?}",
        expert.k_choice
    );
}

/// Limits tried in a cluster whose rewards are within noise of each other go to the smallest
/// under the default rule and to the best mean under `--label-rule best-mean`.
#[test]
fn the_label_rule_decides_statistical_ties() {
    let scratch = Scratch::new("rule");
    let logs = support::write_tied_logs(scratch.path());
    let labels = |rule: Option<&str>| {
        let out_dir = scratch.path().join(rule.unwrap_or("default"));
        let mut args = vec!["cluster", "--logs", &logs];
        if let Some(r) = rule {
            args.extend(["--label-rule", r]);
        }
        args.extend(["--out", out_dir.to_str().unwrap()]);
        support::policy_train_ok(&args);
        let text = std::fs::read_to_string(out_dir.join("expert.json")).expect("expert.json");
        let expert: Expert = serde_json::from_str(&text).expect("an expert");
        let zero = &expert.clusters[0];
        assert!(zero.center[0].abs() < 1e-9, "{:?}", expert.clusters);
        (expert.label_rule, zero.action_ms, zero.rewards.clone())
    };
    let (rule, one_se, rewards) = labels(None);
    assert_eq!(rule, LabelRule::OneSe);
    let (rule, best, _) = labels(Some("best-mean"));
    assert_eq!(rule, LabelRule::BestMean);
    let best_stat = rewards[&best];
    assert!(
        rewards.values().all(|s| s.mean <= best_stat.mean),
        "{rewards:?}"
    );
    assert_eq!(one_se, 100, "{rewards:?}");
    assert_ne!(
        best, 100,
        "the generated noise makes another limit's mean the best"
    );
    assert!(
        rewards[&100].mean >= best_stat.mean - best_stat.se,
        "{rewards:?}"
    );
    let err = support::policy_train_fails(&[
        "cluster",
        "--logs",
        &logs,
        "--label-rule",
        "median",
        "--out",
        "/tmp/unused",
    ]);
    assert!(
        err.contains("invalid value 'median' for '--label-rule"),
        "{err}"
    );
}

#[test]
fn logs_that_match_no_file_are_a_clear_error() {
    let scratch = Scratch::new("nofiles");
    let pattern = format!("{}/nothing/**/*.jsonl", scratch.path().display());
    for command in ["inspect", "all"] {
        let mut args = vec![command, "--logs", &pattern];
        let out = scratch.path().join("out");
        if command == "all" {
            args.extend(["--out", out.to_str().unwrap()]);
        }
        let err = support::policy_train_fails(&args);
        assert!(
            err.contains(&format!("error: no telemetry file matches {pattern}")),
            "{command}: {err}"
        );
    }
}

#[test]
fn an_invalid_glob_is_a_clear_error() {
    let err = support::policy_train_fails(&["inspect", "--logs", "logs/[oops"]);
    assert!(err.contains("is not a valid glob pattern"), "{err}");
}

#[test]
fn one_cluster_is_refused_at_argument_parsing() {
    let scratch = Scratch::new("k1");
    let logs = support::write_logs(scratch.path(), 1);
    let out = scratch.path().join("out");
    for command in ["cluster", "all"] {
        let out = support::policy_train(&[
            command,
            "--logs",
            &logs,
            "--k",
            "1",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(2), "clap's usage error");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("invalid value '1' for '--k <K>'"), "{err}");
        assert!(err.contains("2..=12"), "{err}");
    }
    assert!(!out.exists(), "nothing was written");
}

#[test]
fn too_few_intervals_for_the_clusters_is_a_clear_error() {
    let scratch = Scratch::new("toofew");
    let logs = support::write_logs(scratch.path(), 1);
    // Keep three full intervals of one file and drop every other file.
    let keep = scratch.path().join("telemetry/starlink/slots-0.jsonl");
    let text = std::fs::read_to_string(&keep).expect("a generated file");
    let few: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    std::fs::remove_dir_all(scratch.path().join("telemetry")).expect("clear the logs");
    std::fs::create_dir_all(keep.parent().unwrap()).expect("recreate");
    std::fs::write(&keep, few).expect("write three intervals");
    let out = scratch.path().join("out");
    let err =
        support::policy_train_fails(&["cluster", "--logs", &logs, "--out", out.to_str().unwrap()]);
    assert!(
        err.contains("3 usable intervals cannot make 8 clusters"),
        "{err}"
    );
}

#[test]
fn verify_of_a_missing_card_names_the_file() {
    let scratch = Scratch::new("nocard");
    let card = scratch.path().join("policy.json");
    let err = support::policy_train_fails(&["verify", "--model", card.to_str().unwrap()]);
    assert!(err.contains("does not verify"), "{err}");
    assert!(
        err.contains(&format!("cannot read {}", card.display())),
        "{err}"
    );
}

#[test]
fn the_generated_logs_read_back_as_written() {
    let scratch = Scratch::new("roundtrip");
    support::write_logs(scratch.path(), 1);
    for (path, records) in support::generate(1) {
        let read = pacer::telemetry::read_intervals_file(scratch.path().join(&path))
            .expect("valid telemetry");
        assert_eq!(read, records, "{}", path.display());
    }
    assert_ne!(support::generate(1), support::generate(2));
}

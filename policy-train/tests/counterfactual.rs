//! `policy-train counterfactual` on experiment directories written in code: two kinds of path
//! whose best output differs by what the call measured (lossy boundaries: the gate-open profile
//! over the gated limit; clean ones: libwebrtc's sender), a near tie that the margin settles, calls that
//! lack an arm or whose arms measured differently, and the whole run through the binary, whose
//! card loads as the pacer loads it and decides by the rule once the measuring window ends.

mod support;

use pacer::forecast::{ForecastSource, HORIZON_STEPS, HandoverSteps};
use pacer::policy::{CallFeedback, PATH_FEATURES, PATH_MEASURE, PATH_MENU};

/// The menu's measuring window, ms: where each arm's measured decision is recorded.
const WINDOW_MS: u64 = PATH_MEASURE.seconds * 1000;
use pacer::telemetry::{
    ForecastRecord, GccRecord, InputsRecord, IntervalRecord, ObservedRecord, PacerRecord,
    QoeRecord, SCHEMA, TelemetryWriter,
};
use pacer::{Forecast, OnnxPolicy, QueuePolicy};
use policy_train::counterfactual::{self, Outcome, read_runs};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::Scratch;

/// The output lossy paths are made best with: `<gate-open>@gated:200`.
const LOSSY_BEST: usize = 2;

/// A kind of path: its scenario, forecast and measurements, and what each output does on it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// Starlink-like slots whose boundaries lose packets.
    Lossy,
    /// No handovers and nothing lost at boundaries.
    Clean,
    /// Clean, but `<gate-open>@gated:200` (output 2) saves 0.05 freezes a minute.
    Tie,
}

impl Kind {
    fn scenario(self) -> &'static str {
        match self {
            Kind::Lossy => "lossy",
            Kind::Clean => "clean",
            Kind::Tie => "tie",
        }
    }

    /// The handover steps of the forecast at the decision.
    fn handovers(self) -> Vec<usize> {
        match self {
            Kind::Lossy => (0..8).map(|i| 11 + 15 * i).collect(),
            Kind::Clean | Kind::Tie => Vec::new(),
        }
    }

    /// What the call measured by the decision; the seed varies it a little, so that no two
    /// calls are the same sample.
    fn inputs(self, seed: u64) -> InputsRecord {
        let s = seed as f64;
        match self {
            Kind::Lossy => InputsRecord {
                boundary_excess_loss_pct: Some(28.0 + s),
                previous_loss_pct: Some(0.5),
                outside_loss_pct: Some(0.5),
                row_loss_pct: Some([Some(47.0), Some(20.0), Some(4.0)]),
                rtt_ms: Some(180.0 + 5.0 * s),
                repair_delay_ms: Some(400.0),
                target_kbps: Some(2500.0),
                phase_excess_losses: Some(0.2),
            },
            Kind::Clean | Kind::Tie => InputsRecord {
                boundary_excess_loss_pct: Some(0.0),
                previous_loss_pct: Some(0.1),
                outside_loss_pct: Some(0.1),
                row_loss_pct: Some([Some(0.2), Some(0.1), Some(0.1)]),
                rtt_ms: Some(60.0 + 5.0 * s),
                repair_delay_ms: Some(150.0),
                target_kbps: Some(1500.0),
                phase_excess_losses: None,
            },
        }
    }

    /// What output `o` did on this kind's calls.
    fn outcome(self, o: usize) -> Outcome {
        let outcome = |freezes: f64, frozen: f64, p95: f64, bitrate: f64| Outcome {
            freezes_per_min: freezes,
            frozen_s_per_min: frozen,
            e2e_delay_p95_ms: p95,
            video_bitrate_kbps: bitrate,
        };
        match self {
            // Utilities -5.2, -3.3, -1.7, -2.55: the gate-open profile over the gated limit wins;
            // the 500-ms limit without actions saves the P95 rise but freezes more, and the
            // 200-ms limit's P95 costs more than its freezes save.
            Kind::Lossy => {
                let freezes = [4.0, 2.5, 1.0, 0.8];
                let frozen = [1.2, 0.8, 0.3, 0.25];
                let p95 = [1.0, 1.0, 1.04, 1.15];
                let bitrate = [1.0, 0.98, 0.98, 0.98];
                outcome(freezes[o], frozen[o], 300.0 * p95[o], 2000.0 * bitrate[o])
            }
            // Nothing to save: every other output only adds delay.
            Kind::Clean => {
                let p95 = [1.0, 1.05, 1.3, 1.2];
                outcome(0.2, 0.05, 200.0 * p95[o], 3000.0)
            }
            // Utilities -1.0, -1.5, -0.95, -2.0.
            Kind::Tie => {
                let freezes = [1.0, 1.5, 0.95, 2.0];
                outcome(freezes[o], 0.0, 250.0, 3000.0)
            }
        }
    }
}

/// One telemetry record of an arm's call.
fn record(
    kind: Kind,
    seed: u64,
    policy: &str,
    output: usize,
    start_ms: u64,
    inputs: Option<InputsRecord>,
) -> IntervalRecord {
    let mut bits = [0u8; HORIZON_STEPS];
    for k in kind.handovers() {
        bits[k] = 1;
    }
    let steps = HandoverSteps::from_bits(&bits).expect("0/1 bits of the horizon's length");
    let cumulative = steps.to_tensor().chunks(2).map(|c| c[1]).collect();
    let menu = PATH_MENU[output];
    IntervalRecord {
        schema: SCHEMA.to_owned(),
        call_id: format!("{}-{seed}", kind.scenario()),
        scenario: kind.scenario().to_owned(),
        seed: Some(seed),
        interval_index: u64::from(start_ms > 0),
        start_ms,
        duration_ms: if start_ms == 0 {
            WINDOW_MS
        } else {
            120_000 - WINDOW_MS
        },
        policy: policy.to_owned(),
        action_ms: menu.limit_ms,
        forecast: ForecastRecord {
            source: ForecastSource::Oracle,
            handover: steps,
            cumulative,
        },
        observed: ObservedRecord {
            source: ForecastSource::Oracle,
            handover: steps,
        },
        qoe: QoeRecord::default(),
        pacer: PacerRecord {
            max_queue_ms: 10.0,
            mean_queue_ms: 1.0,
            drain_boost_ms: 0.0,
            encoder_paused_ms: 0.0,
        },
        gcc: GccRecord {
            mean_target_kbps: 2500.0,
            min_target_kbps: 800.0,
        },
        sender: None,
        fec: None,
        actions: None,
        profile: Some(menu.profile.to_owned()),
        inputs,
    }
}

/// The directory name `rtc-client experiment` gives a policy: non-alphanumerics as '-'.
fn policy_dir(policy: &str) -> String {
    policy
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn write_telemetry(path: &Path, records: &[IntervalRecord]) {
    std::fs::create_dir_all(path.parent().expect("a file in a directory")).expect("mkdir");
    let mut writer = TelemetryWriter::new(Vec::new());
    for r in records {
        writer.write(r).expect("a valid record");
    }
    std::fs::write(path, writer.into_inner()).expect("write telemetry");
}

fn telemetry_path(dir: &Path, kind: Kind, policy: &str, seed: u64) -> PathBuf {
    dir.join("telemetry")
        .join(kind.scenario())
        .join(policy_dir(policy))
        .join(format!("seed-{seed}.jsonl"))
}

/// An experiment directory: every arm of `kinds` x `seeds` (and a `default` policy, which is no
/// arm), with its report and telemetry.
fn write_run(dir: &Path, kinds: &[Kind], seeds: &[u64]) {
    let mut cells = Vec::new();
    for &kind in kinds {
        for (o, menu) in PATH_MENU.iter().enumerate() {
            let policy = format!("path-arm:{}", menu.name());
            let mut values: [Vec<f64>; 5] = Default::default();
            for &seed in seeds {
                let measured = Some(kind.inputs(seed));
                let early = Some(InputsRecord {
                    target_kbps: Some(300.0),
                    ..InputsRecord::default()
                });
                let records = [
                    record(kind, seed, &policy, PATH_MEASURE.output, 0, early),
                    record(kind, seed, &policy, o, WINDOW_MS, measured),
                ];
                write_telemetry(&telemetry_path(dir, kind, &policy, seed), &records);
                let outcome = kind.outcome(o);
                values[0].push(outcome.freezes_per_min);
                values[1].push(outcome.frozen_s_per_min);
                values[2].push(outcome.e2e_delay_p95_ms);
                values[3].push(outcome.video_bitrate_kbps);
                values[4].push(outcome.e2e_delay_p95_ms / 2.0);
            }
            let names = counterfactual::METRICS
                .iter()
                .chain(&["e2e_delay_p50_ms"])
                .zip(&values)
                .map(|(m, v)| serde_json::json!({"metric": m, "unit": "", "values": v}))
                .collect::<Vec<_>>();
            cells.push(serde_json::json!({
                "scenario": kind.scenario(), "policy": policy, "seeds": seeds,
                "metrics": names,
            }));
        }
        // The default sender ran beside the arms: read, not trained on.
        for &seed in seeds {
            let records = [record(kind, seed, "default", 0, 0, None)];
            write_telemetry(&telemetry_path(dir, kind, "default", seed), &records);
        }
        cells.push(serde_json::json!({
            "scenario": kind.scenario(), "policy": "default", "seeds": seeds,
            "metrics": [{"metric": "freezes_per_min", "values": vec![1.0; seeds.len()]}],
        }));
    }
    let report = serde_json::json!({"schema": "leopace.experiment.v1", "cells": cells});
    std::fs::write(
        dir.join("report.json"),
        serde_json::to_string_pretty(&report).expect("JSON"),
    )
    .expect("write the report");
}

#[test]
fn labels_follow_the_utility_lossy_boundaries_take_the_gated_gate_open_clean_ones_libwebrtc() {
    let scratch = Scratch::new("cf-labels");
    write_run(scratch.path(), &[Kind::Lossy, Kind::Clean], &[1, 2, 3]);
    let runs = read_runs(&[scratch.path().to_owned()], false).expect("complete runs");
    assert_eq!(runs.calls.len(), 6);
    assert_eq!(runs.ignored_cells.get("default"), Some(&2));
    assert_eq!(runs.ignored_files, 6);
    assert!(runs.skipped.is_empty() && runs.rejected.is_empty());
    // Every file read is listed for the card: 2 kinds x 3 seeds x (every arm + default).
    assert_eq!(runs.logs.len(), 2 * 3 * (PATH_MENU.len() + 1));
    for call in &runs.calls {
        let kind = match call.scenario.as_str() {
            "lossy" => Kind::Lossy,
            "clean" => Kind::Clean,
            other => panic!("a call of {other}"),
        };
        let expected = if kind == Kind::Lossy { LOSSY_BEST } else { 0 };
        assert_eq!(
            call.label(counterfactual::DEFAULT_MARGIN),
            expected,
            "{call:?}"
        );
        let u = call.utilities();
        let best = u.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(u[expected], best);
        if kind == Kind::Lossy {
            let want = [-5.2, -3.3, -1.7, -2.55];
            for (got, want) in u.iter().zip(want) {
                assert!((got - want).abs() < 1e-9, "{u:?}");
            }
        }
        let features = CallFeedback::from(kind.inputs(call.seed))
            .features_named(&PATH_FEATURES)
            .expect("known features");
        assert_eq!(call.features, features);
        assert_eq!(call.features.len(), 11);
        assert_eq!(call.forecast.len(), 2 * HORIZON_STEPS);
        assert_eq!(call.logs.len(), PATH_MENU.len());
        assert!(
            call.logs[LOSSY_BEST].contains(
                "path-arm-playout300-follow500-discardable-floor100-weighed-phase100-gate-open-gated-200"
            )
        );
    }
    let kinds: Vec<(&str, u64)> = runs
        .calls
        .iter()
        .map(|c| (c.scenario.as_str(), c.seed))
        .collect();
    assert_eq!(
        kinds,
        [
            ("clean", 1),
            ("clean", 2),
            ("clean", 3),
            ("lossy", 1),
            ("lossy", 2),
            ("lossy", 3)
        ]
    );

    // The paper's expert on the same calls finds the two kinds apart.
    let expert = counterfactual::kmeans_expert(&runs.calls, 2, 1).expect("two clusters");
    for (i, call) in runs.calls.iter().enumerate() {
        assert_eq!(expert.output_of(i), call.label(0.1), "{}", call.name());
    }
}

#[test]
fn a_neighbourhood_of_alike_calls_keeps_their_utilities_and_one_across_kinds_mixes_them() {
    let scratch = Scratch::new("cf-neighbours");
    write_run(scratch.path(), &[Kind::Lossy, Kind::Clean], &[1, 2, 3]);
    let mut runs = read_runs(&[scratch.path().to_owned()], false).expect("complete runs");
    let own: Vec<Vec<f64>> = runs.calls.iter().map(|c| c.utilities()).collect();
    // Each call's three nearest are the three of its kind, whose ratios are its own.
    counterfactual::smooth_ratios(&mut runs.calls, 3);
    for (call, before) in runs.calls.iter().zip(&own) {
        for (got, want) in call.utilities().iter().zip(before) {
            assert!(
                (got - want).abs() < 1e-9,
                "{}: {got} against {want}",
                call.name()
            );
        }
    }
    // All six: a clean call's output 2 reads the mean of its own P95 ratio
    // (1.3) and the lossy calls' (1.04), so its P95 hinge costs 10 x 0.17 instead of 3.
    counterfactual::smooth_ratios(&mut runs.calls, 6);
    let clean = runs
        .calls
        .iter()
        .position(|c| c.scenario == "clean")
        .expect("a clean call");
    let u = runs.calls[clean].utilities();
    assert!((u[LOSSY_BEST] - (-0.25 - 1.7)).abs() < 1e-9, "{u:?}");
    assert!((own[clean][LOSSY_BEST] - (-0.25 - 3.0)).abs() < 1e-9);
}

#[test]
fn the_margin_picks_the_least_intrusive_output_of_a_near_tie() {
    let scratch = Scratch::new("cf-tie");
    write_run(scratch.path(), &[Kind::Tie], &[5]);
    let runs = read_runs(&[scratch.path().to_owned()], false).expect("a complete call");
    let call = &runs.calls[0];
    // none@2000 at -1.0 is within 0.1 of the gated output's -0.95.
    assert_eq!(call.label(0.1), 0);
    assert_eq!(call.label(0.01), 2);
    assert_eq!(call.label(0.0), 2);
}

#[test]
fn a_call_without_an_arm_is_an_error_naming_it_and_skip_incomplete_leaves_it_out() {
    let scratch = Scratch::new("cf-incomplete");
    write_run(scratch.path(), &[Kind::Lossy, Kind::Clean], &[1, 2]);
    std::fs::remove_file(telemetry_path(
        scratch.path(),
        Kind::Clean,
        "path-arm:none@500",
        2,
    ))
    .expect("remove one arm's telemetry");
    let err = read_runs(&[scratch.path().to_owned()], false)
        .expect_err("an arm is missing")
        .to_string();
    assert!(
        err.contains("the call clean seed 2 in")
            && err.contains("lacks none@500 (no telemetry)")
            && err.contains("--skip-incomplete"),
        "{err}"
    );
    let runs = read_runs(&[scratch.path().to_owned()], true).expect("the complete calls");
    assert_eq!(runs.calls.len(), 3);
    assert_eq!(runs.skipped.len(), 1);
    assert!(
        runs.skipped[0].contains("clean seed 2"),
        "{:?}",
        runs.skipped
    );

    // The binary stops before training, naming the call.
    let out = scratch.path().join("model");
    let stderr = support::policy_train_fails(&[
        "counterfactual",
        "--runs",
        scratch.path().to_str().expect("UTF-8"),
        "--out",
        out.to_str().expect("UTF-8"),
    ]);
    assert!(
        stderr.contains("clean seed 2") && stderr.contains("none@500"),
        "{stderr}"
    );
}

#[test]
fn arms_that_decided_on_different_measurements_are_an_error_naming_them() {
    let scratch = Scratch::new("cf-mismatch");
    write_run(scratch.path(), &[Kind::Lossy], &[1]);
    let policy = &format!("path-arm:{}", PATH_MENU[3].name());
    let path = telemetry_path(scratch.path(), Kind::Lossy, policy, 1);
    let mut other = Kind::Lossy.inputs(1);
    other.rtt_ms = Some(999.0);
    write_telemetry(
        &path,
        &[
            record(Kind::Lossy, 1, policy, PATH_MEASURE.output, 0, None),
            record(Kind::Lossy, 1, policy, 3, WINDOW_MS, Some(other)),
        ],
    );
    let err = read_runs(&[scratch.path().to_owned()], false)
        .expect_err("the arms disagree")
        .to_string();
    assert!(
        err.contains("lossy seed 1")
            && err.contains(&format!("none@2000 and {}", PATH_MENU[3].name()))
            && err.contains("different measurements")
            && err.contains("999"),
        "{err}"
    );
}

#[test]
fn the_binary_trains_a_path_card_that_loads_and_decides_by_the_rule_after_the_window() {
    let scratch = Scratch::new("cf-all");
    let run = scratch.path().join("run");
    let seeds: Vec<u64> = (1..=6).collect();
    write_run(&run, &[Kind::Lossy, Kind::Clean], &seeds);
    // One call without an arm, skipped.
    std::fs::remove_file(telemetry_path(&run, Kind::Lossy, "path-arm:none@2000", 6))
        .expect("remove one arm");
    let out = scratch.path().join("model");
    let stdout = support::policy_train_ok(&[
        "counterfactual",
        "--runs",
        run.to_str().expect("UTF-8"),
        "--out",
        out.to_str().expect("UTF-8"),
        "--skip-incomplete",
        "--k",
        "2",
        "--epochs",
        "120",
        "--batch",
        "4",
        "--folds",
        "2",
        "--threads",
        "1",
        "--seed",
        "3",
    ]);
    assert!(
        stdout.starts_with("11 complete calls from 1 run(s); 1 incomplete calls skipped"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ignored 1 policies that are no path arm"),
        "{stdout}"
    );
    assert!(stdout.contains("mean regret"), "{stdout}");
    assert!(stdout.contains("golden vectors match tract"), "{stdout}");

    let summary = support::json(
        &std::fs::read_to_string(out.join("counterfactual.json")).expect("counterfactual.json"),
    );
    assert_eq!(summary["calls"], 11);
    assert_eq!(summary["label_counts"], serde_json::json!([6, 0, 5, 0]));
    let regret = summary["regret"].as_array().expect("a table");
    let row = |name: &str| {
        regret
            .iter()
            .find(|r| r["strategy"].as_str().is_some_and(|s| s.starts_with(name)))
            .unwrap_or_else(|| panic!("no row {name} in {regret:?}"))
    };
    assert_eq!(row("oracle")["mean"], 0.0);
    assert_eq!(row("k-means expert")["mean"], 0.0);
    // 3.5 on each of the 5 lossy calls, 0 on the 6 clean ones.
    assert!((row("fixed none@2000")["mean"].as_f64().expect("a mean") - 17.5 / 11.0).abs() < 1e-9);
    assert_eq!(row("learned (2-fold, out-of-fold)")["calls"], 11);
    let labels = support::json(&std::fs::read_to_string(out.join("labels.json")).expect("labels"));
    let calls = labels["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 11);
    assert!(calls.iter().all(|c| c["out_of_fold"].is_u64()));
    for f in ["policy.onnx", "training.json", "training-curve.png"] {
        assert!(out.join(f).is_file(), "{f}");
    }

    let card_path = out.join("policy.json");
    let card: pacer::card::ModelCard =
        serde_json::from_str(&std::fs::read_to_string(&card_path).expect("policy.json"))
            .expect("a card");
    card.validate().expect("the card validates");
    assert_eq!(card.measure, Some(PATH_MEASURE));
    assert_eq!(card.telemetry_width(), Some(11));
    assert_eq!(
        card.controls.as_deref().expect("controls"),
        ["queue_time_limit", "playout", "discardable"],
        "the menu's profiles hold, guard and boost nothing"
    );
    assert_eq!(card.golden.len(), 20);
    assert_eq!(card.training.intervals, 11);
    assert_eq!(card.training.clusters.len(), 2);
    assert_eq!(card.training.logs.len(), 2 * 6 * (PATH_MENU.len() + 1) - 1);
    assert_eq!(card.training.hyperparameters["utility"]["w_p95"], 10.0);
    assert!(
        card.training.hyperparameters["objective"]
            .as_str()
            .is_some_and(|o| o.starts_with("expected regret")),
        "the default objective is each call's regret"
    );

    let policy = OnnxPolicy::load(&card_path).expect("the path card loads");
    let decide = |kind: Kind, seed: u64| {
        let mut policy = policy.clone();
        let start = Instant::now();
        let mut bits = [0u8; HORIZON_STEPS];
        kind.handovers().into_iter().for_each(|k| bits[k] = 1);
        let steps = HandoverSteps::from_bits(&bits).expect("bits");
        let first = Forecast::new(ForecastSource::Oracle, start, steps);
        let measuring = policy
            .decide_joint(&first, &CallFeedback::default())
            .expect("a choice");
        let measured_with = if kind.handovers().is_empty() {
            PATH_MEASURE
                .without_handovers
                .expect("the menu's window has one")
        } else {
            PATH_MEASURE.output
        };
        assert_eq!(measured_with, PATH_MEASURE.output_for(&first));
        assert_eq!(measuring, PATH_MENU[measured_with].choice(&first));
        let at = start + Duration::from_secs(PATH_MEASURE.seconds);
        let forecast = Forecast::new(ForecastSource::Oracle, at, steps);
        let chosen = policy
            .decide_joint(&forecast, &CallFeedback::from(kind.inputs(seed)))
            .expect("a choice");
        // An interval whose forecast holds no handover: a gated output runs its quiet limit.
        let quiet = policy
            .decide_joint(
                &Forecast::none(start + Duration::from_secs(150)),
                &CallFeedback::from(kind.inputs(seed)),
            )
            .expect("a choice");
        assert_eq!(quiet.profile, chosen.profile, "the choice is kept");
        (chosen.limit, chosen.profile.map(|p| p.name), quiet.limit)
    };
    let expect = |o: usize| {
        let ms = |ms: u64| Duration::from_millis(ms);
        let output = PATH_MENU[o];
        (
            ms(output.limit_ms),
            Some(output.profile),
            ms(output.quiet_ms.unwrap_or(output.limit_ms)),
        )
    };
    assert_eq!(
        expect(LOSSY_BEST).2,
        Duration::from_millis(500),
        "the lossy calls' output is gated"
    );
    assert_eq!(
        card.quiet_ms.as_deref(),
        Some(&PATH_MENU.map(|o| o.quiet_ms)[..]),
        "the card gates the outputs the menu gates"
    );
    for seed in [1, 4] {
        assert_eq!(
            decide(Kind::Lossy, seed),
            expect(LOSSY_BEST),
            "lossy {seed}"
        );
        assert_eq!(decide(Kind::Clean, seed), expect(0), "clean {seed}");
    }
}

#[test]
fn explicit_samples_of_the_wrong_shape_are_refused_naming_the_sample() {
    use policy_train::train::{Dataset, Sample};
    let sample = |forecast: usize, features: usize| Sample {
        forecast: vec![0.0; forecast],
        features: vec![0.5; features],
        label: 1,
        costs: None,
    };
    let data = Dataset::from_samples(&[sample(240, 10), sample(240, 10)]).expect("a dataset");
    assert_eq!((data.len(), data.telemetry), (2, 10));
    assert_eq!(data.inputs.size(), [2, 120, 12]);
    assert_eq!(data.pattern, [0, 0], "identical samples share a pattern");
    let err = Dataset::from_samples(&[sample(240, 10), sample(239, 10)]).expect_err("short");
    assert_eq!(
        err.to_string(),
        "training sample 1 has a forecast of 239 values, expected 240"
    );
    let err = Dataset::from_samples(&[sample(240, 10), sample(240, 3)]).expect_err("narrow");
    assert_eq!(
        err.to_string(),
        "training sample 1 has 3 measurement values where the first sample has 10"
    );
    let mut nan = sample(240, 10);
    nan.features[4] = f32::NAN;
    let err = Dataset::from_samples(&[nan]).expect_err("NaN");
    assert_eq!(
        err.to_string(),
        "training sample 0 has a value that is not finite"
    );
}

#[test]
fn the_label_weight_teaches_labels_where_every_output_costs_the_same() {
    use policy_train::train::{Dataset, Hyper, Sample, evaluate, train};
    // Two kinds of call whose outputs all cost the same: the expected cost has nothing to
    // learn from, the label's cross-entropy has the labels.
    let samples: Vec<Sample> = (0..8)
        .map(|i| {
            let kind = i % 2;
            let mut features = vec![0.0; 10];
            features[0] = kind as f32 * 3.0;
            features[1] = i as f32 * 0.01;
            Sample {
                forecast: vec![0.0; 2 * HORIZON_STEPS],
                features,
                label: 2 * kind,
                costs: Some(vec![0.0; PATH_MENU.len()]),
            }
        })
        .collect();
    let data = Dataset::from_samples(&samples).expect("a dataset");
    let all: Vec<i64> = (0..data.len() as i64).collect();
    let hyper = |label_weight: f64| Hyper {
        epochs: 60,
        batch: 8,
        folds: 0,
        seed: 4,
        label_weight,
        ..Hyper::default()
    };
    let (_, report) = train(&data, PATH_MENU.len(), &hyper(0.0), |_, _| {}).expect("trains");
    assert!(
        report.final_curve.iter().all(|e| e.loss == 0.0),
        "equal costs give nothing to learn"
    );
    let (trained, report) = train(&data, PATH_MENU.len(), &hyper(1.0), |_, _| {}).expect("trains");
    assert_eq!(
        evaluate(&trained.net, &data, &all).0,
        1.0,
        "{:?}",
        report.final_curve.last()
    );
    assert_eq!(report.hyper.label_weight, 1.0);
    let old: Hyper = serde_json::from_str(
        r#"{"epochs":100,"batch":128,"learning_rate":0.001,"weight_decay":0.01,"dropout":0.1,"folds":5,"seed":1}"#,
    )
    .expect("a record without the weight");
    assert_eq!(old.label_weight, 0.0);
}

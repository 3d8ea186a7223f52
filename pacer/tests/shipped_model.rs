//! The model shipped in `models/` loads as an application would load it: card, sha256, output
//! shape and golden vectors checked by `OnnxPolicy::load`, then a decision for a few forecasts.

#![cfg(feature = "learned")]

use pacer::forecast::{ForecastSource, HandoverSteps};
use pacer::policy::CallFeedback;
use pacer::{Forecast, OnnxPolicy, QueuePolicy};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn card() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../models/policy.json"
    ))
}

#[test]
fn the_shipped_model_loads_with_its_checks_and_decides_one_of_its_limits() {
    let mut policy = OnnxPolicy::load(card()).expect("models/policy.json loads and verifies");
    let actions = policy.card().actions_ms.clone();
    assert!(!actions.is_empty());
    assert!(policy.name().starts_with("learned:"));
    assert_eq!(
        &policy.name()["learned:".len()..],
        &policy.card().onnx_sha256[..12]
    );
    let now = Instant::now();
    let starlink: Vec<usize> = (0..8).map(|i| 11 + 15 * i).collect();
    for offsets in [vec![], starlink, vec![59]] {
        let mut bits = [0u8; 120];
        for k in offsets {
            bits[k] = 1;
        }
        let steps = HandoverSteps::from_bits(&bits).expect("valid bits");
        let limit = policy
            .decide(&Forecast::new(ForecastSource::Oracle, now, steps))
            .expect("a decision");
        assert!(
            actions.contains(&(limit.as_millis() as u64)),
            "{limit:?} not in {actions:?}"
        );
        assert!(limit >= Duration::from_millis(50));
    }
}

#[test]
fn a_copy_of_the_shipped_model_with_one_flipped_byte_is_refused() {
    let dir = std::env::temp_dir().join(format!("leopace-shipped-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let source = card();
    let models = source.parent().expect("models dir");
    std::fs::copy(&source, dir.join("policy.json")).expect("copy card");
    let mut onnx = std::fs::read(models.join("policy.onnx")).expect("read onnx");
    let middle = onnx.len() / 2;
    onnx[middle] ^= 0x01;
    std::fs::write(dir.join("policy.onnx"), onnx).expect("write onnx");
    let error = OnnxPolicy::load(dir.join("policy.json")).expect_err("a tampered model");
    assert!(error.to_string().contains("sha256"), "{error}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The forecast with handovers at the given 0-based steps.
fn forecast_at(now: Instant, offsets: &[usize]) -> Forecast {
    let mut bits = [0u8; 120];
    for &k in offsets {
        bits[k] = 1;
    }
    let steps = HandoverSteps::from_bits(&bits).expect("valid bits");
    Forecast::new(ForecastSource::Oracle, now, steps)
}

#[test]
fn the_queue_limit_card_runs_as_before_whatever_the_call_measured() {
    let mut policy = OnnxPolicy::load(card()).expect("models/policy.json loads");
    assert!(!policy.card().is_joint());
    assert!(!policy.controls_actions());
    assert_eq!(policy.card().schema, "leopace.policy.v1");
    let now = Instant::now();
    let lossy = CallFeedback {
        boundary_excess_loss_pct: Some(25.0),
        previous_loss_pct: Some(3.0),
        ..CallFeedback::default()
    };
    let starlink: Vec<usize> = (0..8).map(|i| 11 + 15 * i).collect();
    for offsets in [vec![], starlink, vec![59]] {
        let forecast = forecast_at(now, &offsets);
        let limit = policy.decide(&forecast).expect("a decision");
        let choice = policy.decide_joint(&forecast, &lossy).expect("a decision");
        assert_eq!(choice.limit, limit);
        assert_eq!(
            choice.profile, None,
            "a queue-limit card chooses no actions"
        );
    }
    // The paper's property, pinned in models/README.md.
    assert_eq!(
        policy.decide(&forecast_at(now, &[])).unwrap(),
        Duration::from_millis(200)
    );
}

fn joint_card() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../models/joint/policy.json"
    ))
}

#[test]
fn the_joint_model_chooses_a_limit_and_a_profile_and_holds_only_on_lossy_boundaries() {
    let mut policy = OnnxPolicy::load(joint_card()).expect("models/joint/policy.json loads");
    assert!(policy.card().is_joint() && policy.controls_actions());
    let card = policy.card().clone();
    let profiles = card
        .profiles
        .clone()
        .expect("a joint card lists its profiles");
    // Every golden vector's argmax is one of the card's (limit, profile) pairs.
    for golden in &card.golden {
        let logits = policy
            .logits_with(&golden.input, golden.telemetry.as_deref())
            .expect("runs");
        assert!(logits.iter().all(|l| l.is_finite()), "{}", golden.name);
    }
    let now = Instant::now();
    let slots: Vec<usize> = (0..8).map(|i| 14 + 15 * i).collect();
    let measured = |excess: f64| CallFeedback {
        boundary_excess_loss_pct: Some(excess),
        previous_loss_pct: Some(0.5),
        ..CallFeedback::default()
    };
    let lossy = policy
        .decide_joint(&forecast_at(now, &slots), &measured(20.0))
        .expect("a choice");
    let clean = policy
        .decide_joint(&forecast_at(now, &slots), &measured(0.0))
        .expect("a choice");
    for choice in [lossy, clean] {
        let profile = choice.profile.expect("a joint model answers a profile");
        // The card's configuration, with the menu's playout raise (off): the model was trained
        // without it.
        assert!(!profile.config.playout.enabled, "{profile:?}");
        assert!(!profile.config.discardable.enabled, "{profile:?}");
        assert!(profiles.iter().any(|p| p.name == profile.name
            && pacer::ActionConfig {
                playout: profile.config.playout,
                discardable: profile.config.discardable,
                ..p.config
            } == profile.config));
    }
    assert!(lossy.profile.unwrap().config.hold.enabled, "{lossy:?}");
    assert!(!clean.profile.unwrap().config.hold.enabled, "{clean:?}");
}

#[test]
fn a_joint_card_with_an_unknown_profile_or_without_its_telemetry_input_is_refused() {
    let source = joint_card();
    let models = source.parent().expect("models/joint");
    let text = std::fs::read_to_string(&source).expect("read the card");
    let dir = std::env::temp_dir().join(format!("leopace-joint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::copy(models.join("policy.onnx"), dir.join("policy.onnx")).expect("copy onnx");
    let mut card: serde_json::Value = serde_json::from_str(&text).expect("json");
    card["profiles"][0]["name"] = serde_json::json!("hold999+guard");
    std::fs::write(dir.join("policy.json"), card.to_string()).expect("write");
    let error = OnnxPolicy::load(dir.join("policy.json")).expect_err("an unknown profile");
    let message = error.to_string();
    assert!(
        message.contains("profiles")
            && message.contains("unknown action profile \"hold999+guard\""),
        "{message}"
    );
    let mut card: serde_json::Value = serde_json::from_str(&text).expect("json");
    card.as_object_mut().unwrap().remove("telemetry_input");
    std::fs::write(dir.join("policy.json"), card.to_string()).expect("write");
    let error = OnnxPolicy::load(dir.join("policy.json")).expect_err("no telemetry input");
    assert!(error.to_string().contains("telemetry_input"), "{error}");
    let mut card: serde_json::Value = serde_json::from_str(&text).expect("json");
    card["profiles"][1]["config"]["hold"]["duration_ms"] = serde_json::json!(60_000);
    std::fs::write(dir.join("policy.json"), card.to_string()).expect("write");
    let error = OnnxPolicy::load(dir.join("policy.json")).expect_err("an invalid config");
    assert!(error.to_string().contains("output 1"), "{error}");
    let refused = |edit: &dyn Fn(&mut serde_json::Value), what: &str| {
        let mut card: serde_json::Value = serde_json::from_str(&text).expect("json");
        edit(&mut card);
        std::fs::write(dir.join("policy.json"), card.to_string()).expect("write");
        OnnxPolicy::load(dir.join("policy.json"))
            .expect_err(what)
            .to_string()
    };
    let message = refused(
        &|c| c["telemetry_input"]["features"][2] = serde_json::json!("jitter_ms/10"),
        "a feature this build does not know",
    );
    assert!(message.contains("telemetry_input"), "{message}");
    let message = refused(
        &|c| c["telemetry_input"]["features"][2] = serde_json::json!("previous_loss_pct/10"),
        "a feature twice",
    );
    assert!(message.contains("distinct features"), "{message}");
    let message = refused(
        &|c| c["measure"] = serde_json::json!({"seconds": 30, "output": 99}),
        "a measuring output the card does not have",
    );
    assert!(message.contains("measure"), "{message}");
    let message = refused(
        &|c| c["measure"] = serde_json::json!({"seconds": 0, "output": 0}),
        "an empty measuring window",
    );
    assert!(message.contains("seconds from 1 to 120"), "{message}");
    let mut card: serde_json::Value = serde_json::from_str(&text).expect("json");
    card["measure"] = serde_json::json!({"seconds": 30, "output": 0});
    std::fs::write(dir.join("policy.json"), card.to_string()).expect("write");
    let mut policy = OnnxPolicy::load(dir.join("policy.json")).expect("a measuring joint card");
    assert_eq!(policy.measuring_window(), Some(Duration::from_secs(30)));
    let now = Instant::now();
    let slots: Vec<usize> = (0..8).map(|i| 14 + 15 * i).collect();
    let lossy = CallFeedback {
        boundary_excess_loss_pct: Some(20.0),
        previous_loss_pct: Some(0.5),
        ..CallFeedback::default()
    };
    let measuring = policy
        .decide_joint(&forecast_at(now, &slots), &lossy)
        .expect("a choice");
    let first_output = (
        Duration::from_millis(policy.card().actions_ms[0]),
        policy.card().profile(0).map(|p| p.name),
    );
    assert_eq!(
        (measuring.limit, measuring.profile.map(|p| p.name)),
        first_output
    );
    let later = forecast_at(now + Duration::from_secs(30), &slots);
    let chosen = policy.decide_joint(&later, &lossy).expect("a choice");
    let clean = CallFeedback {
        boundary_excess_loss_pct: Some(0.0),
        ..lossy
    };
    let kept = policy
        .decide_joint(&forecast_at(now + Duration::from_secs(120), &[]), &clean)
        .expect("a choice");
    assert_eq!(kept, chosen, "a path card keeps its choice for the call");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_shipped_cards_name_held_out_seeds_and_a_card_evaluated_on_its_training_seeds_is_refused() {
    for card in [card(), joint_card(), path_card()] {
        let policy = OnnxPolicy::load(&card).expect("the shipped model loads");
        let evaluation = policy
            .card()
            .evaluation
            .clone()
            .unwrap_or_else(|| panic!("{} records its evaluation", card.display()));
        assert!(evaluation.first_seed <= evaluation.last_seed);
        let report =
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join(&evaluation.report);
        assert!(report.is_file(), "{} exists", report.display());
    }
    let source = joint_card();
    let text = std::fs::read_to_string(&source).expect("read the card");
    let dir = std::env::temp_dir().join(format!("leopace-eval-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::copy(
        source.parent().unwrap().join("policy.onnx"),
        dir.join("policy.onnx"),
    )
    .expect("copy onnx");
    let mut card: serde_json::Value = serde_json::from_str(&text).expect("json");
    card["evaluation"]["first_seed"] = serde_json::json!(1000);
    std::fs::write(dir.join("policy.json"), card.to_string()).expect("write");
    let error = OnnxPolicy::load(dir.join("policy.json")).expect_err("overlapping seeds");
    assert!(
        error.to_string().contains("disjoint from training"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

fn path_card() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../models/path/policy.json"
    ))
}

#[test]
fn the_path_aware_model_measures_by_the_forecast_then_keeps_the_output_it_chose() {
    let policy = OnnxPolicy::load(path_card()).expect("models/path/policy.json loads");
    let card = policy.card().clone();
    assert!(card.is_joint() && policy.controls_actions());
    assert_eq!(
        card.telemetry_input.as_ref().map(|t| t.features.clone()),
        Some(
            pacer::policy::PATH_FEATURES
                .iter()
                .map(|f| (*f).to_owned())
                .collect()
        )
    );
    let measure = card.measure.expect("a path card has a measuring window");
    assert_eq!(measure, pacer::policy::PATH_MEASURE);
    // The card's outputs are the menu's, each output's limit, quiet limit and configuration
    // recorded in it (a card trained on an earlier menu keeps what it learned).
    let menu = pacer::policy::PATH_MENU;
    assert_eq!(card.actions_ms, menu.map(|o| o.limit_ms));
    assert_eq!(
        card.quiet_ms.as_deref(),
        Some(&menu.map(|o| o.quiet_ms)[..])
    );
    for (i, output) in menu.iter().enumerate() {
        let profile = card.profile(i).expect("a profile");
        assert_eq!(profile.name, output.profile);
        assert_eq!(
            profile.config,
            pacer::ActionProfile::named(output.profile).unwrap().config
        );
    }
    let starlink_like = CallFeedback {
        boundary_excess_loss_pct: Some(30.0),
        previous_loss_pct: Some(0.5),
        outside_loss_pct: Some(0.5),
        row_loss_pct: [Some(47.0), Some(20.0), Some(4.0)],
        rtt_ms: Some(180.0),
        repair_delay_ms: Some(400.0),
        target_kbps: Some(2500.0),
        phase_excess_losses: Some(0.3),
    };
    let terrestrial = CallFeedback {
        outside_loss_pct: Some(0.2),
        rtt_ms: Some(60.0),
        target_kbps: Some(1500.0),
        ..CallFeedback::default()
    };
    let slots: Vec<usize> = (0..8).map(|i| 11 + 15 * i).collect();
    let choose = |feedback: &CallFeedback, offsets: &[usize]| {
        let mut call = policy.clone();
        let start = Instant::now();
        let measuring = call
            .decide_joint(&forecast_at(start, offsets), feedback)
            .expect("a choice");
        let chosen = call
            .decide_joint(
                &forecast_at(start + Duration::from_secs(measure.seconds), offsets),
                feedback,
            )
            .expect("a choice");
        (measuring, chosen)
    };
    let gate_open = "playout300-follow500+discardable+floor100-weighed+phase100+gate-open";
    // The measuring window runs the card's output with the configuration the card recorded for
    // it (what the model was trained with), whatever the menu and the defaults are now.
    let (measuring, lossy) = choose(&starlink_like, &slots);
    assert_eq!(
        (measuring.limit, measuring.profile.map(|p| p.name)),
        (Duration::from_millis(200), Some(gate_open))
    );
    assert_eq!(measuring.profile, card.profile(measure.output));
    assert_eq!(
        (lossy.limit, lossy.profile.map(|p| p.name)),
        (Duration::from_millis(200), Some(gate_open)),
        "lossy boundaries: the gate-open profile over the short limit"
    );
    let (measuring, clean) = choose(&terrestrial, &[]);
    let without = measure
        .without_handovers
        .expect("a window for paths without handovers");
    assert_eq!(
        (measuring.limit, measuring.profile.map(|p| p.name)),
        (Duration::from_millis(500), Some("none"))
    );
    assert_eq!(measuring.profile, card.profile(without));
    // The card was trained under a utility that credits a P95 fall (models/path/README.md): on
    // a terrestrial path it runs the gate-open profile over the 200-ms limit (its actions have
    // no boundary to act at), and with nothing measured libwebrtc's sender.
    assert_eq!(
        (clean.limit, clean.profile.map(|p| p.name)),
        (Duration::from_millis(200), Some(gate_open)),
        "a terrestrial path"
    );
    let (_, blind) = choose(&CallFeedback::default(), &[]);
    assert_eq!(
        (blind.limit, blind.profile.map(|p| p.name)),
        (Duration::from_millis(2000), Some("none")),
        "nothing measured"
    );
}

//! The joint pipeline end to end: logs whose intervals carry an action profile and the call's
//! measurements give a joint expert, a `leopace.policy.v2` card and a model with a second input
//! that verifies against tract, tch and (where set up) the ONNX checker and onnxruntime.

mod support;

use pacer::card::{JOINT_CARD_SCHEMA, ModelCard};
use pacer::forecast::{ForecastSource, HandoverSteps};
use pacer::policy::CallFeedback;
use pacer::{Forecast, OnnxPolicy, QueuePolicy};
use policy_train::expert::Expert;
use std::time::Instant;
use support::Scratch;

#[test]
fn joint_logs_train_a_joint_model_that_holds_only_where_boundaries_lose_packets() {
    let scratch = Scratch::new("joint");
    let logs = support::write_joint_logs(scratch.path());
    let out = scratch.path().join("model");
    let out_str = out.to_str().expect("a UTF-8 path");
    let stdout = support::policy_train_ok(&[
        "all",
        "--logs",
        &logs,
        "--out",
        out_str,
        "--epochs",
        "10",
        "--folds",
        "2",
        "--threads",
        "1",
        "--seed",
        "3",
    ]);
    assert!(stdout.contains("deployed joint actions:"), "{stdout}");

    let expert: Expert = serde_json::from_str(
        &std::fs::read_to_string(out.join("expert.json")).expect("expert.json"),
    )
    .expect("an expert");
    assert!(expert.is_joint());
    assert_eq!(expert.features.len(), 3);
    for cluster in &expert.clusters {
        let lossy = cluster.center[2] > 10.0;
        let profile = cluster
            .profile
            .as_deref()
            .expect("a joint cluster's profile");
        if lossy {
            assert_eq!(profile, "hold160+guard+boost", "{cluster:?}");
        } else {
            // The profiles without a hold tie up to the generator's noise, whose standard
            // errors are far below its bitrate jitter: any of them, but no hold.
            assert!(!profile.starts_with("hold"), "{cluster:?}");
        }
        assert!(!cluster.joint_rewards.is_empty());
    }

    let card_path = out.join("policy.json");
    let card: ModelCard =
        serde_json::from_str(&std::fs::read_to_string(&card_path).expect("policy.json"))
            .expect("a card");
    assert_eq!(card.schema, JOINT_CARD_SCHEMA);
    card.validate().expect("the card validates");
    let profiles = card.profiles.as_ref().expect("profiles");
    assert_eq!(profiles.len(), card.actions_ms.len());
    let controls = card.controls.as_ref().expect("controls");
    assert!(controls.iter().any(|c| c == "hold"), "{controls:?}");
    assert!(card.golden.iter().all(|g| g.telemetry.is_some()));

    let verified = support::json(&support::policy_train_ok(&[
        "verify",
        "--model",
        card_path.to_str().expect("a UTF-8 path"),
        "--json",
    ]));
    assert_eq!(verified["argmax_disagreements"], 0, "{verified}");

    // The runtime applies the card's pairs: a slot pattern on a lossy path holds, a quiet
    // forecast on a clean path does not hold.
    let mut policy = OnnxPolicy::load(&card_path).expect("the joint model loads");
    assert!(policy.controls_actions());
    let mut bits = [0u8; 120];
    let offset = 7;
    for i in 0..8 {
        bits[offset + 15 * i] = 1;
    }
    let steps = HandoverSteps::from_bits(&bits).expect("bits");
    let forecast = Forecast::new(ForecastSource::Oracle, Instant::now(), steps);
    let measured = |excess: f64| CallFeedback {
        boundary_excess_loss_pct: Some(excess),
        previous_loss_pct: Some(0.5),
        ..CallFeedback::default()
    };
    let lossy = policy
        .decide_joint(&forecast, &measured(20.0))
        .expect("a choice");
    assert_eq!(lossy.profile.map(|p| p.name), Some("hold160+guard+boost"));
    let quiet = Forecast::none(Instant::now());
    let clean = policy
        .decide_joint(&quiet, &measured(0.0))
        .expect("a choice");
    assert!(
        !clean.profile.expect("a profile").config.hold.enabled,
        "{clean:?}"
    );
}

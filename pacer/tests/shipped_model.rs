//! The model shipped in `models/` loads as an application would load it: card, sha256, output
//! shape and golden vectors checked by `OnnxPolicy::load`, then a decision for a few forecasts.

#![cfg(feature = "learned")]

use pacer::{CallFeedback, Forecast, ForecastSource, HandoverSteps, OnnxPolicy, QueuePolicy};
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

//! Building the model card (docs/architecture.md, "The model and its card") for an exported
//! network: its golden vectors come from the trainer's own tch forward pass, so a loader that
//! reproduces them runs the same function.

use crate::expert::Expert;
use crate::logs::LogFile as ReadLog;
use crate::model::PolicyNet;
use crate::train::{Hyper, TrainReport, logits_with};
use pacer::ActionProfile;
use pacer::card::{
    CARD_SCHEMA, CardProfile, ClusterCard, CrossValidation, Golden, INPUT_NAME, JOINT_CARD_SCHEMA,
    LogFile, ModelCard, OPSET, OUTPUT_NAME, TELEMETRY_INPUT_NAME, TelemetrySpec, TensorSpec,
    Training,
};
use pacer::forecast::{CUMULATIVE_NORM, HORIZON_STEPS, HandoverSteps};
use pacer::policy::{CallFeedback, FEEDBACK_FEATURES, FEEDBACK_WIDTH};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The golden inputs: all-zero (a terrestrial path), a Starlink-like pattern (a handover at the
/// end of each 15-s slot, 8 in 120 s), a sparse pattern (one handover at 60 s) and a seeded
/// random pattern (5 % of seconds).
pub fn golden_inputs(seed: u64) -> Vec<(String, Vec<f32>)> {
    let steps = |at: &[usize]| {
        let mut bits = [0u8; HORIZON_STEPS];
        for &k in at {
            bits[k] = 1;
        }
        HandoverSteps::from_bits(&bits).unwrap_or(HandoverSteps::NONE)
    };
    let starlink: Vec<usize> = (0..8).map(|i| 11 + 15 * i).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let random: Vec<usize> = (0..HORIZON_STEPS)
        .filter(|_| rng.random_bool(0.05))
        .collect();
    [
        ("all-zero", steps(&[])),
        ("starlink-like", steps(&starlink)),
        ("sparse", steps(&[59])),
        ("random", steps(&random)),
    ]
    .into_iter()
    .map(|(name, s)| (name.to_owned(), s.to_tensor().to_vec()))
    .collect()
}

/// The golden measurements of a joint card, each paired with every golden forecast: nothing
/// measured yet, a path whose boundaries lose packets (20 points of excess loss, 2 % loss), and
/// one whose boundaries cost nothing (0 points, 0.1 %).
pub fn golden_telemetry() -> Vec<(&'static str, [f32; FEEDBACK_WIDTH])> {
    let measured = |excess: f64, loss: f64| {
        CallFeedback {
            boundary_excess_loss_pct: Some(excess),
            previous_loss_pct: Some(loss),
            ..CallFeedback::default()
        }
        .features()
    };
    vec![
        ("unmeasured", CallFeedback::default().features()),
        ("lossy-boundaries", measured(20.0, 2.0)),
        ("clean-boundaries", measured(0.0, 0.1)),
    ]
}

/// Whether an action is on in a configuration.
type IsOn = fn(&pacer::ActionConfig) -> bool;

/// What a joint card says its model controls: the queue limit, and every action one of its
/// profiles turns on.
fn controls(expert: &Expert) -> Vec<String> {
    let mut controls = vec!["queue_time_limit".to_owned()];
    let actions: [(&str, IsOn); 4] = [
        ("hold", |c| c.hold.enabled),
        ("guard", |c| c.guard.enabled),
        ("boost", |c| c.boost.enabled),
        ("keyframe_block", |c| c.keyframe_block.enabled),
    ];
    for (name, on) in actions {
        let any = expert
            .joint_actions
            .iter()
            .any(|a| ActionProfile::named(&a.profile).is_ok_and(|p| on(&p.config)));
        if any {
            controls.push(name.to_owned());
        }
    }
    controls
}

/// The card for a network exported as `onnx_file` with sha256 `onnx_sha256`.
pub fn build(
    net: &PolicyNet,
    expert: &Expert,
    report: &TrainReport,
    logs: &[ReadLog],
    onnx_file: &str,
    onnx_sha256: &str,
) -> ModelCard {
    let hyper: &Hyper = &report.hyper;
    let joint = expert.is_joint();
    let golden: Vec<Golden> = if joint {
        golden_inputs(hyper.seed)
            .into_iter()
            .flat_map(|(name, input)| {
                golden_telemetry()
                    .into_iter()
                    .map(move |(measured, t)| (format!("{name}/{measured}"), input.clone(), t))
            })
            .map(|(name, input, t)| Golden {
                logits: logits_with(net, &input, &t),
                name,
                input,
                telemetry: Some(t.to_vec()),
            })
            .collect()
    } else {
        golden_inputs(hyper.seed)
            .into_iter()
            .map(|(name, input)| Golden {
                logits: logits_with(net, &input, &[]),
                name,
                input,
                telemetry: None,
            })
            .collect()
    };
    ModelCard {
        schema: if joint {
            JOINT_CARD_SCHEMA
        } else {
            CARD_SCHEMA
        }
        .into(),
        input: TensorSpec {
            name: INPUT_NAME.into(),
            shape: vec![1, HORIZON_STEPS, 2],
            dtype: "float32".into(),
        },
        telemetry_input: joint.then(|| TelemetrySpec {
            name: TELEMETRY_INPUT_NAME.into(),
            shape: vec![1, FEEDBACK_WIDTH],
            dtype: "float32".into(),
            features: FEEDBACK_FEATURES.iter().map(|f| (*f).to_owned()).collect(),
        }),
        output: TensorSpec {
            name: OUTPUT_NAME.into(),
            shape: vec![1, expert.actions_ms.len()],
            dtype: "float32".into(),
        },
        horizon_s: HORIZON_STEPS as u32,
        cumulative_norm: CUMULATIVE_NORM,
        actions_ms: expert.actions_ms.clone(),
        profiles: joint.then(|| {
            expert
                .joint_actions
                .iter()
                .map(|a| CardProfile {
                    name: a.profile.clone(),
                    config: ActionProfile::named(&a.profile)
                        .map(|p| p.config)
                        .unwrap_or_default(),
                })
                .collect()
        }),
        controls: joint.then(|| controls(expert)),
        measure: None,
        opset: OPSET,
        onnx_file: onnx_file.into(),
        onnx_sha256: onnx_sha256.into(),
        training: Training {
            logs: logs
                .iter()
                .map(|l| LogFile {
                    name: l.path.clone(),
                    sha256: l.sha256.clone(),
                })
                .collect(),
            intervals: report.samples as u64,
            clusters: expert
                .clusters
                .iter()
                .map(|c| ClusterCard {
                    center: c.center.to_vec(),
                    action_ms: c.action_ms,
                    profile: c.profile.clone(),
                    size: c.size as u64,
                })
                .collect(),
            hyperparameters: serde_json::json!({
                "model": {
                    "embedding": "MLP 2 -> 64 -> 64 (ReLU), learned positional embedding [120, 64]",
                    "encoder_layers": crate::model::LAYERS,
                    "heads": crate::model::HEADS,
                    "d_model": crate::model::D_MODEL,
                    "feed_forward": crate::model::FF_WIDTH,
                    "norm": "post-norm LayerNorm, eps 1e-5",
                    "pooling": "mean over the 120 steps",
                    "parameters": report.parameters,
                },
                "optimizer": "AdamW",
                "learning_rate": hyper.learning_rate,
                "weight_decay": hyper.weight_decay,
                "dropout": hyper.dropout,
                "schedule": "cosine annealing over the epochs",
                "batch": hyper.batch,
                "epochs": hyper.epochs,
                "seed": hyper.seed,
                "label": if joint {
                    "the expert's (limit, profile) pair for the interval's forecast and measurements (nearest cluster)"
                } else {
                    "the expert's limit for the interval's forecast (nearest cluster)"
                },
                "telemetry_input": if joint { "appended to every step's input (2 + 3 values per step); exported as a second input" } else { "none" },
            }),
        },
        cv: CrossValidation {
            folds: report.folds.len() as u32,
            accuracy_mean: report.accuracy_mean,
            accuracy_std: report.accuracy_std,
        },
        golden,
        evaluation: None,
    }
}

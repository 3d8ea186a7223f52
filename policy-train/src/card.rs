//! Building the model card (docs/architecture.md, "The model and its card") for an exported
//! network: its golden vectors come from the trainer's own tch forward pass, so a loader that
//! reproduces them runs the same function.

use crate::expert::Expert;
use crate::logs::LogFile as ReadLog;
use crate::model::PolicyNet;
use crate::train::{Hyper, TrainReport, logits_of};
use pacer::card::{
    CARD_SCHEMA, ClusterCard, CrossValidation, Golden, INPUT_NAME, LogFile, ModelCard, OPSET,
    OUTPUT_NAME, TensorSpec, Training,
};
use pacer::{CUMULATIVE_NORM, HORIZON_STEPS, HandoverSteps};
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
    ModelCard {
        schema: CARD_SCHEMA.into(),
        input: TensorSpec {
            name: INPUT_NAME.into(),
            shape: vec![1, HORIZON_STEPS, 2],
            dtype: "float32".into(),
        },
        output: TensorSpec {
            name: OUTPUT_NAME.into(),
            shape: vec![1, expert.actions_ms.len()],
            dtype: "float32".into(),
        },
        horizon_s: HORIZON_STEPS as u32,
        cumulative_norm: CUMULATIVE_NORM,
        actions_ms: expert.actions_ms.clone(),
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
                "label": "the expert's limit for the interval's forecast (nearest cluster)",
            }),
        },
        cv: CrossValidation {
            folds: report.folds.len() as u32,
            accuracy_mean: report.accuracy_mean,
            accuracy_std: report.accuracy_std,
        },
        golden: golden_inputs(hyper.seed)
            .into_iter()
            .map(|(name, input)| Golden {
                logits: logits_of(net, &input),
                name,
                input,
            })
            .collect(),
    }
}

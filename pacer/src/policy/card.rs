//! The model card: what a learned policy file promises (docs/architecture.md, "The model and its
//! card").
//!
//! `policy.json` sits beside `policy.onnx` and says what the network reads and writes, which
//! queue time limits its outputs stand for, how it was trained and how well it did, the sha256 of
//! the ONNX file, and golden vectors: inputs with the logits the trainer computed for them. A
//! loader checks all of it before the model decides anything, so a swapped, truncated or
//! mis-exported file is an error, never a silent wrong limit.

use handover_predictor::{CUMULATIVE_NORM, HORIZON_STEPS};
use serde::{Deserialize, Serialize};

/// The card's `schema` tag.
pub const CARD_SCHEMA: &str = "leopace.policy.v1";
/// The model's input name.
pub const INPUT_NAME: &str = "forecast";
/// The model's output name.
pub const OUTPUT_NAME: &str = "logits";
/// The ONNX opset the exporter pins and the loader expects.
pub const OPSET: i64 = 17;

/// A tensor's name, shape and element type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorSpec {
    /// Its name in the graph.
    pub name: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Its element type (`float32`).
    pub dtype: String,
}

/// A telemetry file the model was trained on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogFile {
    /// Its path as given to the trainer.
    pub name: String,
    /// The sha256 of its bytes, hex.
    pub sha256: String,
}

/// One cluster of the expert (paper section III-A).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterCard {
    /// Its centre in feature space.
    pub center: Vec<f64>,
    /// The limit the expert assigns it, ms.
    pub action_ms: u64,
    /// Training intervals in it.
    pub size: u64,
}

/// How the model was trained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Training {
    /// The telemetry it read.
    pub logs: Vec<LogFile>,
    /// Intervals used.
    pub intervals: u64,
    /// The expert's clusters.
    pub clusters: Vec<ClusterCard>,
    /// The hyperparameters, as the trainer names them.
    pub hyperparameters: serde_json::Value,
}

/// Cross-validation accuracy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossValidation {
    /// Folds.
    pub folds: u32,
    /// Mean accuracy over the folds, 0 to 1.
    pub accuracy_mean: f64,
    /// Standard deviation of the fold accuracies.
    pub accuracy_std: f64,
}

/// An input and the logits the trainer's own forward pass gave for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Golden {
    /// What the input is (`all-zero`, `starlink-like`, ...).
    pub name: String,
    /// The `[1, 120, 2]` input, row-major (240 values).
    pub input: Vec<f32>,
    /// The `[1, K]` logits.
    pub logits: Vec<f32>,
}

/// The card: `policy.json`, beside the ONNX file it describes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCard {
    /// [`CARD_SCHEMA`].
    pub schema: String,
    /// The input tensor: `forecast`, `[1, 120, 2]`, float32.
    pub input: TensorSpec,
    /// The output tensor: `logits`, `[1, K]`, float32.
    pub output: TensorSpec,
    /// The forecast horizon, s (120).
    pub horizon_s: u32,
    /// The cumulative channel's divisor (8.0).
    pub cumulative_norm: f32,
    /// The limit each output stands for, ms, ascending.
    pub actions_ms: Vec<u64>,
    /// The ONNX opset of the file.
    pub opset: i64,
    /// The ONNX file, relative to the card.
    #[serde(default = "default_onnx_file")]
    pub onnx_file: String,
    /// The sha256 of the ONNX file, hex.
    pub onnx_sha256: String,
    /// How it was trained.
    pub training: Training,
    /// How well it did.
    pub cv: CrossValidation,
    /// Golden vectors.
    pub golden: Vec<Golden>,
}

fn default_onnx_file() -> String {
    "policy.onnx".to_owned()
}

/// What is wrong with a card.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CardError {
    /// The schema tag is not [`CARD_SCHEMA`].
    #[error("the card's schema is {0:?}, expected {CARD_SCHEMA:?}")]
    Schema(String),
    /// A field has a value the contract does not allow.
    #[error("the card's {field} is {found}, expected {expected}")]
    Field {
        /// Which field.
        field: &'static str,
        /// What it holds.
        found: String,
        /// What the contract says.
        expected: String,
    },
}

impl ModelCard {
    /// Checks everything the contract fixes: schema, tensor names and shapes, horizon, norm,
    /// opset, actions (non-empty, ascending, 50 ms to 10 s) and golden-vector sizes.
    pub fn validate(&self) -> Result<(), CardError> {
        let field = |field: &'static str, found: String, expected: String| {
            Err(CardError::Field {
                field,
                found,
                expected,
            })
        };
        if self.schema != CARD_SCHEMA {
            return Err(CardError::Schema(self.schema.clone()));
        }
        let k = self.actions_ms.len();
        let input_shape = vec![1, HORIZON_STEPS, 2];
        if self.input.name != INPUT_NAME
            || self.input.shape != input_shape
            || self.input.dtype != "float32"
        {
            return field(
                "input",
                format!("{:?}", self.input),
                format!("{INPUT_NAME} {input_shape:?} float32"),
            );
        }
        if self.output.name != OUTPUT_NAME
            || self.output.shape != vec![1, k]
            || self.output.dtype != "float32"
        {
            return field(
                "output",
                format!("{:?}", self.output),
                format!("{OUTPUT_NAME} [1, {k}] float32 (one logit per action)"),
            );
        }
        if self.horizon_s as usize != HORIZON_STEPS {
            return field(
                "horizon_s",
                self.horizon_s.to_string(),
                HORIZON_STEPS.to_string(),
            );
        }
        if self.cumulative_norm != CUMULATIVE_NORM {
            return field(
                "cumulative_norm",
                self.cumulative_norm.to_string(),
                CUMULATIVE_NORM.to_string(),
            );
        }
        if self.opset != OPSET {
            return field("opset", self.opset.to_string(), OPSET.to_string());
        }
        let ascending = self.actions_ms.windows(2).all(|w| w[0] < w[1]);
        let in_range = self.actions_ms.iter().all(|a| (50..=10_000).contains(a));
        if k == 0 || !ascending || !in_range {
            return field(
                "actions_ms",
                format!("{:?}", self.actions_ms),
                "a non-empty ascending list of limits from 50 to 10000 ms".into(),
            );
        }
        if self.onnx_sha256.len() != 64 || !self.onnx_sha256.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return field(
                "onnx_sha256",
                format!("{:?}", self.onnx_sha256),
                "64 hex digits".into(),
            );
        }
        for g in &self.golden {
            if g.input.len() != 2 * HORIZON_STEPS || g.logits.len() != k {
                return field(
                    "golden",
                    format!(
                        "{:?} with {} inputs and {} logits",
                        g.name,
                        g.input.len(),
                        g.logits.len()
                    ),
                    format!("{} inputs and {k} logits", 2 * HORIZON_STEPS),
                );
            }
        }
        Ok(())
    }
}

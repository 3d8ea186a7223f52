//! Checking an exported model as a user would load it: the card and sha256, tract against the
//! golden vectors (through [`pacer::OnnxPolicy::load`]), tract against an independent tch
//! forward pass rebuilt from the file's own weights on random inputs, the behaviour on an
//! all-zero forecast, and, where a Python with them is configured ([`ONNX_PYTHON_ENV`]), the
//! ONNX project's checker and onnxruntime, since tract accepts some invalid files.

use crate::export::weights_of;
use crate::model::PolicyNet;
use pacer::OnnxPolicy;
use pacer::forecast::{HORIZON_STEPS, HandoverSteps};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;
use tch::{Device, Tensor, nn};

/// The largest tract-vs-tch difference allowed on random inputs.
pub const TCH_TOLERANCE: f32 = 1e-4;
/// Random inputs compared.
pub const RANDOM_INPUTS: usize = 100;

/// What verification found.
#[derive(Debug, Clone, Serialize)]
pub struct Verification {
    /// The model's policy name (`learned:<sha prefix>`).
    pub policy: String,
    /// The deployed limits.
    pub actions_ms: Vec<u64>,
    /// Golden vectors checked by the loader.
    pub golden: usize,
    /// Random inputs compared with tch.
    pub random_inputs: usize,
    /// Largest |tract - tch| over them.
    pub max_difference: f32,
    /// Inputs whose argmax differed between tract and tch.
    pub argmax_disagreements: usize,
    /// The limit the all-zero forecast gets, ms.
    pub all_zero_ms: u64,
    /// Whether that is the smallest deployed limit (the paper's terrestrial behaviour).
    pub all_zero_is_smallest: bool,
    /// A joint card's profile for the all-zero forecast with nothing measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_zero_profile: Option<String>,
    /// What the ONNX checker and onnxruntime said (`None` when `LEOPACE_ONNX_PYTHON` is unset).
    pub onnx_reference: Option<serde_json::Value>,
}

/// The environment variable naming a Python with the `onnx` and `onnxruntime` packages
/// (`scripts/setup-libtorch.sh` installs one and sets it).
pub const ONNX_PYTHON_ENV: &str = "LEOPACE_ONNX_PYTHON";

const CHECK_SCRIPT: &str = include_str!("python/check_onnx.py");

/// Validates the model with the `onnx` checker and onnxruntime through `python`.
pub fn reference_check(python: &Path, card_path: &Path) -> Result<serde_json::Value, VerifyError> {
    let output = std::process::Command::new(python)
        .arg("-c")
        .arg(CHECK_SCRIPT)
        .arg(card_path)
        .output()
        .map_err(|e| VerifyError::Reference(format!("cannot run {}: {e}", python.display())))?;
    if !output.status.success() {
        return Err(VerifyError::Reference(
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        ));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| {
        VerifyError::Reference(format!(
            "unreadable answer {:?}: {e}",
            String::from_utf8_lossy(&output.stdout)
        ))
    })
}

/// Why verification failed.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The loader refused the model.
    #[error(transparent)]
    Load(#[from] pacer::policy::LoadError),
    /// The ONNX file could not be read back.
    #[error("cannot read the weights back from {path}: {message}")]
    Weights {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// tract and tch disagree.
    #[error("tract and tch differ by {0:e} on random inputs (tolerance {TCH_TOLERANCE:e})")]
    Mismatch(f32),
    /// tract failed on an input.
    #[error("tract failed: {0}")]
    Run(String),
    /// The ONNX checker or onnxruntime refused the file.
    #[error("the ONNX reference tools refuse the model: {0}")]
    Reference(String),
}

/// Verifies the model whose card is at `card_path`.
pub fn verify(card_path: &Path, seed: u64) -> Result<Verification, VerifyError> {
    // One libtorch thread: the comparison forward passes are tiny, and libtorch's default pool
    // only contends with tract on a busy machine.
    tch::set_num_threads(1);
    let policy = OnnxPolicy::load(card_path)?;
    let card = policy.card().clone();
    let onnx_path = card_path
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(&card.onnx_file);
    let bytes = std::fs::read(&onnx_path).map_err(|e| VerifyError::Weights {
        path: onnx_path.display().to_string(),
        message: e.to_string(),
    })?;
    let weights = weights_of(&bytes).map_err(|e| VerifyError::Weights {
        path: onnx_path.display().to_string(),
        message: e.to_string(),
    })?;
    let vs = nn::VarStore::new(Device::Cpu);
    // A joint card's telemetry input is as wide as its named features (the first joint
    // model's three, a path card's ten).
    let features: Vec<String> = card
        .telemetry_input
        .as_ref()
        .filter(|_| card.is_joint())
        .map(|t| t.features.clone())
        .unwrap_or_default();
    let telemetry = card.telemetry_width().unwrap_or(0);
    let mut net = PolicyNet::with_telemetry(&vs.root(), card.actions_ms.len(), 0.0, telemetry);
    let tensors: HashMap<String, Tensor> = weights
        .iter()
        .map(|(name, w)| {
            (
                name.clone(),
                Tensor::from_slice(&w.values).view(w.shape.as_slice()),
            )
        })
        .collect();
    let missing = net.load_named(&tensors);
    if !missing.is_empty() {
        return Err(VerifyError::Weights {
            path: onnx_path.display().to_string(),
            message: format!("the file lacks {}", missing.join(", ")),
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut max_difference = 0f32;
    let mut disagreements = 0;
    for _ in 0..RANDOM_INPUTS {
        let p = rng.random_range(0.0..0.25);
        let bits: Vec<u8> = (0..HORIZON_STEPS)
            .map(|_| u8::from(rng.random_bool(p)))
            .collect();
        let input = HandoverSteps::from_bits(&bits)
            .unwrap_or(HandoverSteps::NONE)
            .to_tensor();
        // A joint model also gets random measurements, each within what its feature reads.
        let measured: Vec<f32> = features
            .iter()
            .map(|name| random_feature(name, &mut rng))
            .collect();
        let a = policy
            .logits_with(&input, card.is_joint().then_some(&measured[..]))
            .map_err(|e| VerifyError::Run(e.to_string()))?;
        let b = crate::train::logits_with(&net, &input, &measured);
        for (x, y) in a.iter().zip(&b) {
            let d = (x - y).abs();
            max_difference = if d.is_nan() {
                f32::INFINITY
            } else {
                max_difference.max(d)
            };
        }
        if argmax(&a) != argmax(&b) {
            disagreements += 1;
        }
    }
    if max_difference > TCH_TOLERANCE {
        return Err(VerifyError::Mismatch(max_difference));
    }
    let zero = policy
        .logits(&[0f32; 2 * HORIZON_STEPS])
        .map_err(|e| VerifyError::Run(e.to_string()))?;
    let zero_index = argmax(&zero);
    let onnx_reference = match std::env::var_os(ONNX_PYTHON_ENV) {
        Some(python) if !python.is_empty() => Some(reference_check(Path::new(&python), card_path)?),
        _ => None,
    };
    Ok(Verification {
        policy: pacer::QueuePolicy::name(&policy),
        actions_ms: card.actions_ms.clone(),
        golden: card.golden.len(),
        random_inputs: RANDOM_INPUTS,
        max_difference,
        argmax_disagreements: disagreements,
        // The all-zero forecast holds no handover: a gated output runs its quiet limit.
        all_zero_ms: card
            .quiet_ms
            .as_ref()
            .and_then(|quiet| quiet.get(zero_index).copied().flatten())
            .or_else(|| card.actions_ms.get(zero_index).copied())
            .unwrap_or_default(),
        all_zero_is_smallest: zero_index == 0,
        all_zero_profile: card
            .profiles
            .as_ref()
            .and_then(|p| p.get(zero_index))
            .map(|p| p.name.clone()),
        onnx_reference,
    })
}

/// A random value of the feature called `name` ([`pacer::policy::KNOWN_FEATURES`]), scaled as
/// the model reads it: an excess loss of -10 to +40 points, a previous or background loss of 0
/// to 20 %, a row loss of 0 to 60 %, known or not, an RTT up to 500 ms, a repair delay up to
/// 1 s, a target up to 8 Mbit/s.
fn random_feature(name: &str, rng: &mut ChaCha8Rng) -> f32 {
    match name {
        "boundary_excess_loss_pct/10" => rng.random_range(-1.0..4.0),
        "boundary_excess_known" => f32::from(u8::from(rng.random_bool(0.8))),
        "row0_loss_pct/10" | "row1_loss_pct/10" | "row2_loss_pct/10" => rng.random_range(0.0..6.0),
        "rtt_ms/100" => rng.random_range(0.0..5.0),
        "repair_delay_ms/100" => rng.random_range(0.0..10.0),
        "target_kbps/1000" => rng.random_range(0.0..8.0),
        _ => rng.random_range(0.0..2.0),
    }
}

fn argmax(v: &[f32]) -> usize {
    v.iter()
        .enumerate()
        .fold(
            (0, f32::NEG_INFINITY),
            |b, (i, &x)| if x > b.1 { (i, x) } else { b },
        )
        .0
}

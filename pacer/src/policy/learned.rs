//! The learned policy: a transformer over the 120-s forecast, exported to ONNX by `policy-train`
//! and run here with tract (pure Rust, no libtorch at run time).
//!
//! [`OnnxPolicy::load`] reads the card (docs/architecture.md, "The model and its card"), checks
//! the ONNX file's sha256 against it, loads and optimises the model for the fixed `[1, 120, 2]`
//! input (a symbolic batch makes batch-1 inference about 1.8x slower, reference
//! onnx-export-with-tract.md), checks the output shape and replays every golden vector. Any
//! failure is a [`LoadError`] that names what was wrong; a caller that cannot load the model runs
//! [`super::Fixed::webrtc_default`] instead. At decision time the policy takes the argmax of the
//! logits and answers the card's action for it.
//!
//! A joint card (`leopace.policy.v2`, docs/architecture.md, "The model and its card") describes
//! a model with a second input, `telemetry` `[1, 3]` ([`CallFeedback::features`]), whose outputs
//! are (queue limit, action profile) pairs: the policy then answers both
//! ([`QueuePolicy::decide_joint`]), and the call applies the profile's configuration. Its
//! telemetry input is `[1, F]`, the card's named features ([`CallFeedback::features_named`]).
//!
//! A path-aware card (a joint card with `measure`) runs its measuring output for the window's
//! first seconds, then lets the model decide once from what the call measured and keeps that
//! choice for the rest of the call: its training labels are whole calls run under each output
//! after the same measuring window, so that is the decision the model learned.

use super::card::{CardError, ModelCard};
use super::feedback::CallFeedback;
use super::{Choice, PolicyError, QueuePolicy};
use handover_predictor::{Forecast, HORIZON_STEPS};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tract_onnx::prelude::*;

/// The largest difference allowed between a golden vector's logits and tract's.
///
/// The trainer computes golden logits with libtorch; tract's kernels order sums differently, so
/// float32 results differ by about 1e-7 (reference onnx-export-with-tract.md: 1.8e-7 against an
/// f64 pass). 1e-4 leaves room for that and still catches any wrong weight or op.
pub(super) const GOLDEN_TOLERANCE: f32 = 1e-4;

/// Why a learned policy could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The card is not valid JSON of the card's shape.
    #[error("{path} is not a model card: {message}")]
    CardJson {
        /// The card.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// The card breaks the contract.
    #[error("{path}: {source}")]
    Card {
        /// The card.
        path: PathBuf,
        /// What is wrong.
        source: CardError,
    },
    /// The ONNX file is not the one the card describes.
    #[error("{path} has sha256 {found}, but its card says {expected}")]
    Sha256 {
        /// The ONNX file.
        path: PathBuf,
        /// Its sha256.
        found: String,
        /// The card's.
        expected: String,
    },
    /// tract could not load, optimise or run the model.
    #[error("{path}: the model does not load or run: {message}")]
    Model {
        /// The ONNX file.
        path: PathBuf,
        /// tract's message.
        message: String,
    },
    /// The model's output is not `[1, K]` for the card's K actions.
    #[error("{path}: the model outputs shape {found:?}, its card promises [1, {actions}]")]
    OutputShape {
        /// The ONNX file.
        path: PathBuf,
        /// The shape it produced.
        found: Vec<usize>,
        /// The card's action count.
        actions: usize,
    },
    /// A golden vector's logits differ from the card's.
    #[error(
        "{path}: golden vector {name:?} gives logits {max_difference:e} away from the card's \
         (tolerance {GOLDEN_TOLERANCE:e})"
    )]
    Golden {
        /// The ONNX file.
        path: PathBuf,
        /// The vector.
        name: String,
        /// The largest absolute difference.
        max_difference: f32,
    },
}

type Plan = std::sync::Arc<TypedRunnableModel>;

/// The learned queue policy (see the module documentation). Clones share the optimised model and
/// each has its own run state.
///
/// The run state (tract's `SimpleState`: per-node op states and the table of intermediate values)
/// is built once at load and reused by every inference, instead of `plan.run`'s fresh state per
/// call. It sits behind a mutex so that the policy stays `Sync` (tract's op states are only
/// `Send`): [`OnnxPolicy::logits`] locks it, [`QueuePolicy::decide`] reaches it through `&mut self`
/// without locking.
pub struct OnnxPolicy {
    card: ModelCard,
    plan: Plan,
    state: Mutex<TypedSimpleState>,
    name: String,
    /// A path-aware card's progress through the call: when it first decided, and the model's
    /// choice once made.
    path: PathProgress,
}

/// Where a path-aware policy is in its call.
#[derive(Debug, Clone, Copy, Default)]
struct PathProgress {
    started: Option<Instant>,
    /// The output it measures with, from the forecast at the call's start.
    measuring: Option<usize>,
    /// The output the model chose, kept for the rest of the call.
    kept: Option<usize>,
}

impl Clone for OnnxPolicy {
    fn clone(&self) -> Self {
        // A cloned SimpleState is a distinct tract session over the same plan.
        let state = lock(&self.state).clone();
        Self {
            card: self.card.clone(),
            plan: self.plan.clone(),
            state: Mutex::new(state),
            name: self.name.clone(),
            // A clone is a new call's policy.
            path: PathProgress::default(),
        }
    }
}

/// The state, also after a panic elsewhere poisoned the lock (a run that failed leaves nothing
/// that [`run`] does not rebuild).
fn lock(state: &Mutex<TypedSimpleState>) -> std::sync::MutexGuard<'_, TypedSimpleState> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One inference on `state`: the logits for one `[1, 120, 2]` input given row-major. A failed run
/// replaces the state with a fresh one, so no half-finished turn carries over.
fn run(
    plan: &Plan,
    state: &mut TypedSimpleState,
    input: &[f32],
    telemetry: Option<&[f32]>,
) -> TractResult<Vec<f32>> {
    let tensor = Tensor::from_shape(&[1, HORIZON_STEPS, 2], input)?;
    let mut inputs = tvec!(tensor.into_tvalue());
    if let Some(telemetry) = telemetry {
        inputs.push(Tensor::from_shape(&[1, telemetry.len()], telemetry)?.into_tvalue());
    }
    let outputs = match state.run(inputs) {
        Ok(outputs) => outputs,
        Err(e) => {
            *state = plan.spawn()?;
            return Err(e);
        }
    };
    let output = outputs
        .first()
        .ok_or_else(|| anyhow::anyhow!("the model has no output"))?;
    let view = output.to_plain_array_view::<f32>()?;
    if view.shape().len() != 2 || view.shape()[0] != 1 {
        anyhow::bail!("the output has shape {:?}, not [1, K]", view.shape());
    }
    Ok(view.iter().copied().collect())
}

impl std::fmt::Debug for OnnxPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnnxPolicy")
            .field("name", &self.name)
            .field("actions_ms", &self.card.actions_ms)
            .finish_non_exhaustive()
    }
}

impl OnnxPolicy {
    /// Loads the card at `card_path` and the ONNX file it names (relative to the card), with
    /// every check of the module documentation.
    pub fn load(card_path: impl AsRef<Path>) -> Result<Self, LoadError> {
        let card_path = card_path.as_ref();
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| LoadError::Io { path, source }
        };
        let text = std::fs::read_to_string(card_path).map_err(io(card_path))?;
        let card: ModelCard = serde_json::from_str(&text).map_err(|e| LoadError::CardJson {
            path: card_path.to_path_buf(),
            message: e.to_string(),
        })?;
        card.validate().map_err(|source| LoadError::Card {
            path: card_path.to_path_buf(),
            source,
        })?;
        let onnx_path = card_path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(&card.onnx_file);
        let bytes = std::fs::read(&onnx_path).map_err(io(&onnx_path))?;
        let found = hex_sha256(&bytes);
        if !found.eq_ignore_ascii_case(&card.onnx_sha256) {
            return Err(LoadError::Sha256 {
                path: onnx_path,
                found,
                expected: card.onnx_sha256.clone(),
            });
        }
        let joint = card.is_joint();
        let width = card.telemetry_width();
        let plan = optimise(&bytes, width).map_err(|e| LoadError::Model {
            path: onnx_path.clone(),
            message: format!("{e:#}"),
        })?;
        let name = format!("learned:{}", &card.onnx_sha256[..12]);
        let state = plan.spawn().map_err(|e| LoadError::Model {
            path: onnx_path.clone(),
            message: format!("{e:#}"),
        })?;
        let policy = Self {
            card,
            plan,
            state: Mutex::new(state),
            name,
            path: PathProgress::default(),
        };
        let zero = [0f32; 2 * HORIZON_STEPS];
        let zero_telemetry = vec![0f32; width.unwrap_or(0)];
        let logits = policy
            .logits_with(&zero, joint.then_some(&zero_telemetry[..]))
            .map_err(|e| LoadError::Model {
                path: onnx_path.clone(),
                message: format!("{e:#}"),
            })?;
        if logits.len() != policy.card.actions_ms.len() {
            return Err(LoadError::OutputShape {
                path: onnx_path,
                found: vec![1, logits.len()],
                actions: policy.card.actions_ms.len(),
            });
        }
        for golden in &policy.card.golden {
            let got = policy
                .logits_with(&golden.input, golden.telemetry.as_deref())
                .map_err(|e| LoadError::Model {
                    path: onnx_path.clone(),
                    message: format!("{e:#}"),
                })?;
            let max_difference = got
                .iter()
                .zip(&golden.logits)
                .map(|(a, b)| (a - b).abs())
                .fold(
                    0f32,
                    |m, d| if d.is_nan() { f32::INFINITY } else { m.max(d) },
                );
            if max_difference > GOLDEN_TOLERANCE {
                return Err(LoadError::Golden {
                    path: onnx_path,
                    name: golden.name.clone(),
                    max_difference,
                });
            }
        }
        Ok(policy)
    }

    /// The card it was loaded with.
    pub fn card(&self) -> &ModelCard {
        &self.card
    }

    /// The logits for one `[1, 120, 2]` input given row-major (240 values); a joint model reads
    /// the all-zero telemetry (nothing measured) beside it.
    pub fn logits(&self, input: &[f32]) -> TractResult<Vec<f32>> {
        let zero = vec![0f32; self.card.telemetry_width().unwrap_or(0)];
        let telemetry = self.card.is_joint().then_some(&zero[..]);
        self.logits_with(input, telemetry)
    }

    /// The logits for one `[1, 120, 2]` input and, for a joint model, its `[1, F]` telemetry
    /// input (which a queue-limit model must not be given).
    pub fn logits_with(&self, input: &[f32], telemetry: Option<&[f32]>) -> TractResult<Vec<f32>> {
        run(&self.plan, &mut lock(&self.state), input, telemetry)
    }

    /// The action index the model picks for `input` (and `telemetry`, for a joint model).
    fn choose(&mut self, input: &[f32], telemetry: Option<&[f32]>) -> Result<usize, PolicyError> {
        let state = self
            .state
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let logits = run(&self.plan, state, input, telemetry).map_err(|e| PolicyError::Failed {
            policy: self.name.clone(),
            error: e.into(),
        })?;
        if logits.iter().any(|l| !l.is_finite()) {
            return Err(PolicyError::InvalidOutput {
                policy: self.name.clone(),
                reason: format!("non-finite logits {logits:?}"),
            });
        }
        let (index, _) = logits
            .iter()
            .enumerate()
            .fold((0, f32::NEG_INFINITY), |best, (i, &l)| {
                if l > best.1 { (i, l) } else { best }
            });
        Ok(index)
    }
}

impl QueuePolicy for OnnxPolicy {
    fn name(&self) -> String {
        self.name.clone()
    }

    /// The limit; a joint model decides as if nothing had been measured
    /// ([`CallFeedback::default`]).
    fn decide(&mut self, forecast: &Forecast) -> Result<Duration, PolicyError> {
        Ok(self.decide_joint(forecast, &CallFeedback::default())?.limit)
    }

    fn controls_actions(&self) -> bool {
        self.card.is_joint()
    }

    fn measuring_window(&self) -> Option<Duration> {
        self.card.measure.map(|m| Duration::from_secs(m.seconds))
    }

    fn decide_joint(
        &mut self,
        forecast: &Forecast,
        feedback: &CallFeedback,
    ) -> Result<Choice, PolicyError> {
        let Some(measure) = self.card.measure else {
            return self.model_choice(forecast, feedback);
        };
        if let Some(kept) = self.path.kept {
            return self.output(kept, forecast);
        }
        let now = forecast.t0();
        let started = *self.path.started.get_or_insert(now);
        let measuring = *self
            .path
            .measuring
            .get_or_insert_with(|| measure.output_for(forecast));
        if now.saturating_duration_since(started) < Duration::from_secs(measure.seconds) {
            return self.output(measuring, forecast);
        }
        let index = self.model_index(forecast, feedback)?;
        self.path.kept = Some(index);
        self.output(index, forecast)
    }
}

impl OnnxPolicy {
    /// The model's choice for `forecast` and `feedback`.
    fn model_choice(
        &mut self,
        forecast: &Forecast,
        feedback: &CallFeedback,
    ) -> Result<Choice, PolicyError> {
        let index = self.model_index(forecast, feedback)?;
        self.output(index, forecast)
    }

    /// The output the model chooses for `forecast` and `feedback`.
    fn model_index(
        &mut self,
        forecast: &Forecast,
        feedback: &CallFeedback,
    ) -> Result<usize, PolicyError> {
        let features = match &self.card.telemetry_input {
            Some(spec) if self.card.is_joint() => {
                Some(feedback.features_named(&spec.features).map_err(|name| {
                    PolicyError::InvalidOutput {
                        policy: self.name.clone(),
                        reason: format!("the card names the unknown feature {name:?}"),
                    }
                })?)
            }
            _ => None,
        };
        self.choose(&forecast.to_tensor(), features.as_deref())
    }

    /// Output `index` as a choice in an interval with `forecast`: its limit (gated by the
    /// forecast where the card gives the output a quiet limit) and, for a joint card, its
    /// profile.
    fn output(&self, index: usize, forecast: &Forecast) -> Result<Choice, PolicyError> {
        let outside = || PolicyError::InvalidOutput {
            policy: self.name.clone(),
            reason: format!(
                "action index {index} outside the card's {} actions",
                self.card.actions_ms.len()
            ),
        };
        let limit = self.card.limit_for(index, forecast).ok_or_else(outside)?;
        let profile = match self.card.is_joint() {
            true => Some(self.card.profile(index).ok_or_else(outside)?),
            false => None,
        };
        Ok(Choice { limit, profile })
    }
}

fn optimise(bytes: &[u8], telemetry_width: Option<usize>) -> TractResult<Plan> {
    let mut model = tract_onnx::onnx()
        .model_for_read(&mut std::io::Cursor::new(bytes))?
        .with_input_fact(0, f32::fact([1, HORIZON_STEPS, 2]).into())?;
    if let Some(width) = telemetry_width {
        model = model.with_input_fact(1, f32::fact([1, width]).into())?;
    }
    model.into_optimized()?.into_runnable()
}

/// The lowercase hex sha256 of `bytes`.
pub(super) fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/policy.json")
    }

    #[test]
    fn the_policy_is_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<OnnxPolicy>();
    }

    #[test]
    fn the_reused_run_state_gives_the_same_logits_call_after_call_and_in_clones() {
        let policy = OnnxPolicy::load(shipped()).expect("the shipped model loads");
        let inputs: Vec<Vec<f32>> = policy
            .card()
            .golden
            .iter()
            .map(|g| g.input.clone())
            .collect();
        let first: Vec<Vec<f32>> = inputs
            .iter()
            .map(|x| policy.logits(x).expect("runs"))
            .collect();
        let clone = policy.clone();
        for _ in 0..3 {
            for (x, expected) in inputs.iter().zip(&first) {
                assert_eq!(&policy.logits(x).expect("runs"), expected);
                assert_eq!(&clone.logits(x).expect("runs"), expected);
            }
        }
    }

    #[test]
    fn a_wrong_input_length_is_an_error_and_the_next_call_still_works() {
        let mut policy = OnnxPolicy::load(shipped()).expect("the shipped model loads");
        assert!(policy.logits(&[0.0; 7]).is_err());
        let zero = [0f32; 2 * HORIZON_STEPS];
        let expected = policy.logits(&zero).expect("runs");
        let index = policy.choose(&zero, None).expect("a choice");
        assert!(index < policy.card().actions_ms.len());
        assert_eq!(policy.logits(&zero).expect("runs"), expected);
    }
}

//! The model card: what a learned policy file promises (docs/architecture.md, "The model and its
//! card").
//!
//! `policy.json` sits beside `policy.onnx` and says what the network reads and writes, which
//! queue time limits its outputs stand for, how it was trained and how well it did, the sha256 of
//! the ONNX file, and golden vectors: inputs with the logits the trainer computed for them. A
//! loader checks all of it before the model decides anything, so a swapped, truncated or
//! mis-exported file is an error, never a silent wrong limit.

use super::feedback::{FEEDBACK_FEATURES, KNOWN_FEATURES};
use crate::actions::{ActionConfig, ActionProfile, EXPLORATION_PROFILES};
use handover_predictor::{CUMULATIVE_NORM, HORIZON_STEPS};
use serde::{Deserialize, Serialize};

/// The card's `schema` tag for a model that chooses the queue limit only.
pub const CARD_SCHEMA: &str = "leopace.policy.v1";
/// The card's `schema` tag for a joint model: each output a (queue limit, action profile) pair,
/// and a second input, the call's own measurements (docs/architecture.md, "The model and its
/// card", joint cards).
pub const JOINT_CARD_SCHEMA: &str = "leopace.policy.v2";
/// A joint model's second input's name.
pub const TELEMETRY_INPUT_NAME: &str = "telemetry";
/// What a joint card may say its model controls.
pub const CONTROLS: [&str; 7] = [
    "queue_time_limit",
    "hold",
    "guard",
    "boost",
    "keyframe_block",
    "playout",
    "discardable",
];
/// The longest measuring window a card may ask for, s: the decision interval's default, so that
/// the model's decision comes no later than a plain policy's second one.
pub const MAX_MEASURE_S: u64 = 120;
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

/// A joint model's second input: its name, shape, type and what each column is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TelemetrySpec {
    /// Its name in the graph ([`TELEMETRY_INPUT_NAME`]).
    pub name: String,
    /// Its shape, `[1, F]`.
    pub shape: Vec<usize>,
    /// Its element type (`float32`).
    pub dtype: String,
    /// The columns, each a name of [`KNOWN_FEATURES`] (the first joint model's are
    /// [`FEEDBACK_FEATURES`]).
    pub features: Vec<String>,
}

/// A path-aware card's measuring window: the call runs output `output` for the first `seconds`,
/// then the model decides once, from what the call measured in them, and its choice holds for
/// the rest of the call (docs/architecture.md, "The model and its card", path cards).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measure {
    /// How long the call measures before the model decides, s (1 to [`MAX_MEASURE_S`]).
    pub seconds: u64,
    /// The output the call runs while it measures.
    pub output: usize,
    /// The output it runs instead when the forecast at the call's start predicts no handover
    /// in its horizon (a terrestrial path, or no forecast source): there the actions have no
    /// instant to act at, and only the queue limit differs. Absent on cards written before it
    /// existed, which measure with `output` on every path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without_handovers: Option<usize>,
}

impl Measure {
    /// The output the call measures with, given the forecast at its start.
    pub fn output_for(&self, forecast: &handover_predictor::Forecast) -> usize {
        match self.without_handovers {
            Some(output) if forecast.handover_count() == 0 => output,
            _ => self.output,
        }
    }
}

/// The action profile one output of a joint model stands for: its menu name and the whole
/// configuration the call applies when the output wins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardProfile {
    /// A name of the menu ([`crate::actions::PROFILE_NAMES`]).
    pub name: String,
    /// The configuration, as trained (the card's, not the running build's menu, is applied).
    /// A card written before the lead ([`crate::actions::LeadTracking`]) or the receiver gate
    /// ([`crate::actions::ReceiverGate`]) existed has no `lead` or `receiver_gate` table, and its
    /// calls ran without one: a missing table reads as that part off, not as this build's
    /// default.
    #[serde(deserialize_with = "config_as_trained")]
    pub config: ActionConfig,
}

fn config_as_trained<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<ActionConfig, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    let has_lead = value.get("lead").is_some();
    let has_receiver_gate = value.get("receiver_gate").is_some();
    let mut config: ActionConfig =
        serde_json::from_value(value).map_err(serde::de::Error::custom)?;
    if !has_lead {
        config.lead.enabled = false;
    }
    if !has_receiver_gate {
        config.receiver_gate.enabled = false;
    }
    Ok(config)
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
    /// The limit the expert assigns it, ms (with `quiet_ms`, the limit while the forecast holds
    /// a handover).
    pub action_ms: u64,
    /// The quiet limit of a gated output the expert assigns it, ms (path cards only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<u64>,
    /// The action profile the expert assigns it (joint cards only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
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

/// Where a model was evaluated: call seeds held out from its training (docs/architecture.md,
/// "The model and its card"), so that a reader of the card can check the two never met.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// The first held-out call seed.
    pub first_seed: u64,
    /// The last held-out call seed (inclusive).
    pub last_seed: u64,
    /// The scenarios evaluated over those seeds.
    pub scenarios: Vec<String>,
    /// The report with the commands and the results, relative to the repository root.
    pub report: String,
}

/// The call seed of a training log named `.../seed-<n>.jsonl` (what `collect` writes).
fn log_seed(name: &str) -> Option<u64> {
    let stem = name.rsplit('/').next()?.strip_suffix(".jsonl")?;
    stem.strip_prefix("seed-")?.parse().ok()
}

/// An input and the logits the trainer's own forward pass gave for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Golden {
    /// What the input is (`all-zero`, `starlink-like`, ...).
    pub name: String,
    /// The `[1, 120, 2]` input, row-major (240 values).
    pub input: Vec<f32>,
    /// The `[1, F]` telemetry input of a joint model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<Vec<f32>>,
    /// The `[1, K]` logits.
    pub logits: Vec<f32>,
}

/// The card: `policy.json`, beside the ONNX file it describes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCard {
    /// [`CARD_SCHEMA`], or [`JOINT_CARD_SCHEMA`] for a joint model.
    pub schema: String,
    /// The input tensor: `forecast`, `[1, 120, 2]`, float32.
    pub input: TensorSpec,
    /// A joint model's second input: `telemetry`, `[1, F]`, float32, with its columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry_input: Option<TelemetrySpec>,
    /// The output tensor: `logits`, `[1, K]`, float32.
    pub output: TensorSpec,
    /// The forecast horizon, s (120).
    pub horizon_s: u32,
    /// The cumulative channel's divisor (8.0).
    pub cumulative_norm: f32,
    /// The limit each output stands for, ms: ascending for a queue-limit card; for a joint card
    /// the limit of each (limit, profile) output.
    pub actions_ms: Vec<u64>,
    /// A joint card's profile of each output, beside `actions_ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profiles: Option<Vec<CardProfile>>,
    /// A joint card's quiet limit of each output, ms, beside `actions_ms`: an output with one
    /// runs its `actions_ms` limit only while the forecast holds a handover and this one while it
    /// holds none (the gated limit, [`crate::policy::Gated`]); `null`, or a card without the
    /// field, runs its `actions_ms` limit in every interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<Vec<Option<u64>>>,
    /// What a joint model controls ([`CONTROLS`]): the queue limit and the actions its
    /// profiles turn on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controls: Option<Vec<String>>,
    /// A path-aware joint card's measuring window; absent, the model decides at every decision
    /// from the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<Measure>,
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
    /// Where it was evaluated, written once it has been.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation: Option<Evaluation>,
}

fn default_onnx_file() -> String {
    "policy.onnx".to_owned()
}

/// What is wrong with a card.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CardError {
    /// The schema tag is not [`CARD_SCHEMA`].
    #[error("the card's schema is {0:?}, expected {CARD_SCHEMA:?} or {JOINT_CARD_SCHEMA:?}")]
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
        let joint = match self.schema.as_str() {
            CARD_SCHEMA => false,
            JOINT_CARD_SCHEMA => true,
            _ => return Err(CardError::Schema(self.schema.clone())),
        };
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
        if k == 0 || !(ascending || joint) || !in_range {
            return field(
                "actions_ms",
                format!("{:?}", self.actions_ms),
                "a non-empty ascending list of limits from 50 to 10000 ms".into(),
            );
        }
        if joint {
            self.validate_joint()?;
        } else if self.telemetry_input.is_some()
            || self.profiles.is_some()
            || self.controls.is_some()
            || self.measure.is_some()
            || self.quiet_ms.is_some()
        {
            return field(
                "schema",
                format!(
                    "{CARD_SCHEMA:?} with telemetry_input, profiles, controls, measure or quiet_ms"
                ),
                format!("{JOINT_CARD_SCHEMA:?} for a joint model"),
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
        let width = self.telemetry_width();
        for g in &self.golden {
            let telemetry = g.telemetry.as_ref().map(Vec::len);
            if telemetry != width {
                return field(
                    "golden",
                    format!("{:?} with telemetry {:?}", g.name, g.telemetry),
                    if let Some(width) = width {
                        format!("{width} telemetry values")
                    } else {
                        "no telemetry in a queue-limit card".into()
                    },
                );
            }
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
        if let Some(e) = &self.evaluation {
            if e.first_seed > e.last_seed || e.scenarios.is_empty() {
                return field(
                    "evaluation",
                    format!(
                        "seeds {}..={} over {} scenarios",
                        e.first_seed,
                        e.last_seed,
                        e.scenarios.len()
                    ),
                    "a non-empty seed range over at least one scenario".into(),
                );
            }
            let held_out = e.first_seed..=e.last_seed;
            if let Some(log) = self
                .training
                .logs
                .iter()
                .find(|l| log_seed(&l.name).is_some_and(|seed| held_out.contains(&seed)))
            {
                return field(
                    "evaluation",
                    format!("seeds {}..={}", e.first_seed, e.last_seed),
                    format!("seeds disjoint from training, which read {}", log.name),
                );
            }
        }
        Ok(())
    }
}

impl ModelCard {
    /// Whether the card describes a joint model (limit and action profile per output).
    pub fn is_joint(&self) -> bool {
        self.schema == JOINT_CARD_SCHEMA
    }

    /// The width of a joint model's telemetry input (its card's feature count); `None` for a
    /// queue-limit card.
    pub fn telemetry_width(&self) -> Option<usize> {
        self.is_joint().then(|| {
            self.telemetry_input
                .as_ref()
                .map_or(0, |t| t.features.len())
        })
    }

    /// Output `index`'s queue limit in an interval with `forecast`: its `actions_ms` limit, or
    /// its quiet limit where it has one and the forecast holds no handover; `None` for an index
    /// out of range.
    pub fn limit_for(
        &self,
        index: usize,
        forecast: &handover_predictor::Forecast,
    ) -> Option<std::time::Duration> {
        let ms = std::time::Duration::from_millis;
        let busy = ms(*self.actions_ms.get(index)?);
        let quiet = self
            .quiet_ms
            .as_ref()
            .and_then(|q| q.get(index).copied().flatten());
        Some(quiet.map_or(busy, |quiet| {
            crate::policy::Gated::with_quiet(busy, ms(quiet)).limit_for(forecast)
        }))
    }

    /// Output `index`'s profile as the call applies it: the menu's name with the card's
    /// configuration; `None` for a queue-limit card or an index out of range.
    ///
    /// For the first [`EXPLORATION_PROFILES`] of the menu the playout raise and discardable
    /// frames are the menu's (off): a card written before they existed has no `playout` or
    /// `discardable` table, which would read as their default, and its model never learned
    /// what they do. The later profiles came with them, and their cards' tables are applied.
    pub fn profile(&self, index: usize) -> Option<ActionProfile> {
        let profile = self.profiles.as_ref()?.get(index)?;
        let named = ActionProfile::named(&profile.name).ok()?;
        let config = if named.index() < EXPLORATION_PROFILES {
            crate::ActionConfig {
                playout: named.config.playout,
                discardable: named.config.discardable,
                ..profile.config
            }
        } else {
            profile.config
        };
        Some(ActionProfile {
            name: named.name,
            config,
        })
    }

    /// The joint card's rules: the telemetry input is `telemetry [1, F] float32` with F distinct
    /// feature columns this build knows, one profile per output, each a menu name with a valid
    /// configuration, no (limit, profile) output twice, `controls` from [`CONTROLS`], and a
    /// measuring window of 1 to [`MAX_MEASURE_S`] s on one of the outputs.
    fn validate_joint(&self) -> Result<(), CardError> {
        let field = |field: &'static str, found: String, expected: String| {
            Err(CardError::Field {
                field,
                found,
                expected,
            })
        };
        let known = |t: &TelemetrySpec| {
            let distinct: std::collections::BTreeSet<&String> = t.features.iter().collect();
            !t.features.is_empty()
                && distinct.len() == t.features.len()
                && t.features
                    .iter()
                    .all(|f| KNOWN_FEATURES.contains(&f.as_str()))
        };
        match &self.telemetry_input {
            Some(t)
                if t.name == TELEMETRY_INPUT_NAME
                    && t.shape == vec![1, t.features.len()]
                    && t.dtype == "float32"
                    && known(t) => {}
            other => {
                return field(
                    "telemetry_input",
                    format!("{other:?}"),
                    format!(
                        "{TELEMETRY_INPUT_NAME} [1, F] float32 with F distinct features from \
                         {KNOWN_FEATURES:?} (the first joint model's: {FEEDBACK_FEATURES:?})"
                    ),
                );
            }
        }
        let k = self.actions_ms.len();
        let Some(profiles) = &self.profiles else {
            return field(
                "profiles",
                "absent".into(),
                format!("one action profile per output ({k})"),
            );
        };
        if profiles.len() != k {
            return field(
                "profiles",
                format!("{} profiles", profiles.len()),
                format!("one per output ({k})"),
            );
        }
        let quiet = match &self.quiet_ms {
            None => vec![None; k],
            Some(quiet)
                if quiet.len() == k
                    && quiet.iter().flatten().all(|q| (50..=10_000).contains(q)) =>
            {
                quiet.clone()
            }
            Some(other) => {
                return field(
                    "quiet_ms",
                    format!("{other:?}"),
                    format!("one entry per output ({k}), each null or 50 to 10000 ms"),
                );
            }
        };
        let mut seen = std::collections::BTreeSet::new();
        for (i, ((profile, limit), quiet)) in profiles
            .iter()
            .zip(&self.actions_ms)
            .zip(&quiet)
            .enumerate()
        {
            if let Err(e) = ActionProfile::named(&profile.name) {
                return field("profiles", format!("output {i}: {e}"), "a menu name".into());
            }
            if let Err(e) = profile.config.validate() {
                return field(
                    "profiles",
                    format!("output {i} ({}): {e}", profile.name),
                    "a valid action configuration".into(),
                );
            }
            if !seen.insert((*limit, *quiet, profile.name.as_str())) {
                return field(
                    "profiles",
                    format!(
                        "output {i}: {limit} ms (quiet {quiet:?}) with {} twice",
                        profile.name
                    ),
                    "each (limit, profile) output once".into(),
                );
            }
        }
        match &self.controls {
            Some(controls)
                if !controls.is_empty()
                    && controls.iter().all(|c| CONTROLS.contains(&c.as_str())) => {}
            other => {
                return field(
                    "controls",
                    format!("{other:?}"),
                    format!("a non-empty list from {CONTROLS:?}"),
                );
            }
        }
        if let Some(m) = self.measure
            && (!(1..=MAX_MEASURE_S).contains(&m.seconds)
                || m.output >= k
                || m.without_handovers.is_some_and(|o| o >= k))
        {
            return field(
                "measure",
                format!("{m:?}"),
                format!("seconds from 1 to {MAX_MEASURE_S} on one of the {k} outputs"),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_recorded_without_a_lead_or_receiver_gate_runs_without_them_and_recorded_ones_are_kept()
     {
        let mut config = serde_json::to_value(ActionConfig::default()).unwrap();
        let recorded = |config: &serde_json::Value| -> CardProfile {
            serde_json::from_value(serde_json::json!({"name": "playout", "config": config}))
                .unwrap()
        };
        assert!(recorded(&config).config.lead.enabled);
        config["lead"]["max_ms"] = 200.into();
        assert_eq!(recorded(&config).config.lead.max_ms, 200);
        config.as_object_mut().unwrap().remove("lead");
        let old = recorded(&config);
        assert!(!old.config.lead.enabled, "written before the lead existed");
        assert_eq!(old.config.playout, ActionConfig::default().playout);
        assert!(
            old.config.receiver_gate.enabled,
            "the gate's table is still there"
        );
        config.as_object_mut().unwrap().remove("receiver_gate");
        let older = recorded(&config);
        assert!(
            !older.config.receiver_gate.enabled,
            "written before the gate existed"
        );
        assert!(!older.config.lead.enabled);
        config["hold"]["duration_ms"] = "long".into();
        let bad = serde_json::from_value::<CardProfile>(
            serde_json::json!({"name": "playout", "config": config}),
        );
        let msg = bad.unwrap_err().to_string();
        assert!(
            msg.contains("invalid type") && msg.contains("long"),
            "{msg}"
        );
    }

    #[test]
    fn a_quiet_limit_gates_its_output_and_a_wrong_one_is_refused_naming_the_field() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/path/policy.json");
        let mut card: ModelCard =
            serde_json::from_str(&std::fs::read_to_string(path).expect("the path card"))
                .expect("a card");
        let k = card.actions_ms.len();
        card.validate().expect("the shipped card validates");
        let shipped = card
            .quiet_ms
            .clone()
            .expect("the shipped card gates an output");
        card.quiet_ms = None;
        let err = card.validate().expect_err("two outputs alike").to_string();
        assert!(
            err.contains("twice"),
            "without its quiet limit the gated output is another's: {err}"
        );
        let start = std::time::Instant::now();
        let busy = {
            let mut bits = [0u8; 120];
            bits[11] = 1;
            handover_predictor::Forecast::new(
                handover_predictor::ForecastSource::Oracle,
                start,
                handover_predictor::HandoverSteps::from_bits(&bits).expect("bits"),
            )
        };
        let quiet = handover_predictor::Forecast::none(start);
        let ms = std::time::Duration::from_millis;
        let mut gated = shipped;
        gated[1] = Some(300);
        card.quiet_ms = Some(gated.clone());
        card.validate().expect("a quiet limit per output validates");
        assert_eq!(card.limit_for(1, &busy), Some(ms(card.actions_ms[1])));
        assert_eq!(card.limit_for(1, &quiet), Some(ms(300)));
        assert_eq!(card.limit_for(0, &quiet), Some(ms(card.actions_ms[0])));
        assert_eq!(card.limit_for(2, &busy), Some(ms(200)));
        assert_eq!(card.limit_for(2, &quiet), Some(ms(500)));
        assert_eq!(card.limit_for(3, &quiet), Some(ms(200)));
        assert_eq!(card.limit_for(k, &quiet), None);
        for wrong in [vec![None; k - 1], {
            let mut w = gated.clone();
            w[0] = Some(20);
            w
        }] {
            card.quiet_ms = Some(wrong);
            let err = card.validate().expect_err("refused").to_string();
            assert!(
                err.contains("quiet_ms") && err.contains("each null or 50 to 10000 ms"),
                "{err}"
            );
        }
    }
}

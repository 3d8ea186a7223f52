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
use pacer::policy::{
    CallFeedback, FEEDBACK_FEATURES, FEEDBACK_WIDTH, PATH_FEATURES, PATH_MEASURE, PATH_MENU,
};
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

/// The network and training hyperparameters a card records, with what the labels are and how
/// the measurements enter.
fn model_hyperparameters(
    report: &TrainReport,
    label: &str,
    telemetry_input: &str,
) -> serde_json::Value {
    let hyper: &Hyper = &report.hyper;
    serde_json::json!({
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
        "label": label,
        "telemetry_input": telemetry_input,
    })
}

/// The golden measurements of a path card ([`PATH_FEATURES`]), each paired with every golden
/// forecast: nothing measured yet; a Starlink-like path whose boundaries lose packets (30 points
/// of excess loss, rows of 47, 20 and 4 % after the predicted instants, the Starlink boundary
/// profile of docs/architecture.md, "Handover-timed actions"); a leocc-trace-like path whose
/// boundaries cost nothing; a path over inter-satellite links that loses at a phase of the slot
/// away from the boundaries (2.5 lost packets a slot over the median half second, the mmsys24
/// Lagos ISL trace's kind: docs/experiments/mmsys24-2026-12-06.md); and a terrestrial path
/// without boundaries (no excess, rows or phase measured). Each feature is scaled as
/// [`CallFeedback::feature`] scales it.
pub fn path_golden_telemetry() -> Vec<(&'static str, Vec<f32>)> {
    let sets = [
        ("unmeasured", CallFeedback::default()),
        (
            "starlink-like",
            CallFeedback {
                boundary_excess_loss_pct: Some(30.0),
                previous_loss_pct: Some(0.5),
                outside_loss_pct: Some(0.5),
                row_loss_pct: [Some(47.0), Some(20.0), Some(4.0)],
                rtt_ms: Some(180.0),
                repair_delay_ms: Some(400.0),
                target_kbps: Some(2500.0),
                phase_excess_losses: Some(0.3),
            },
        ),
        (
            "leocc-like",
            CallFeedback {
                boundary_excess_loss_pct: Some(0.0),
                previous_loss_pct: None,
                outside_loss_pct: Some(0.1),
                row_loss_pct: [Some(0.2), Some(0.1), Some(0.1)],
                rtt_ms: Some(120.0),
                repair_delay_ms: Some(150.0),
                target_kbps: Some(2500.0),
                phase_excess_losses: Some(0.0),
            },
        ),
        (
            "isl-phase-like",
            CallFeedback {
                boundary_excess_loss_pct: Some(0.0),
                previous_loss_pct: Some(0.3),
                outside_loss_pct: Some(0.5),
                row_loss_pct: [Some(0.3), Some(0.2), Some(0.3)],
                rtt_ms: Some(110.0),
                repair_delay_ms: Some(200.0),
                target_kbps: Some(2500.0),
                phase_excess_losses: Some(2.5),
            },
        ),
        (
            "terrestrial",
            CallFeedback {
                boundary_excess_loss_pct: None,
                previous_loss_pct: None,
                outside_loss_pct: Some(0.2),
                row_loss_pct: [None; 3],
                rtt_ms: Some(60.0),
                repair_delay_ms: None,
                target_kbps: Some(1500.0),
                phase_excess_losses: None,
            },
        ),
    ];
    sets.into_iter()
        .map(|(name, feedback)| {
            let features = feedback
                .features_named(&PATH_FEATURES)
                .unwrap_or_else(|_| vec![0.0; PATH_FEATURES.len()]);
            (name, features)
        })
        .collect()
}

/// What a path card says its model controls: the queue limit, and every action one of the
/// menu's outputs turns on.
fn path_controls() -> Vec<String> {
    let mut controls = vec!["queue_time_limit".to_owned()];
    let actions: [(&str, IsOn); 5] = [
        ("hold", |c| c.hold.enabled),
        ("guard", |c| c.guard.enabled),
        ("boost", |c| c.boost.enabled),
        ("playout", |c| c.playout.enabled),
        ("discardable", |c| c.discardable.enabled),
    ];
    for (name, on) in actions {
        if PATH_MENU
            .iter()
            .any(|o| ActionProfile::named(o.profile).is_ok_and(|p| on(&p.config)))
        {
            controls.push(name.to_owned());
        }
    }
    controls
}

/// The card of a path-aware network (`policy-train counterfactual`, docs/architecture.md, "The
/// model and its card", path cards): a joint card whose outputs are [`PATH_MENU`], whose
/// telemetry input is [`PATH_FEATURES`], with the measuring window [`PATH_MEASURE`]. `clusters`
/// are the comparison K-means expert's, `calls` the training calls, and `extra` is merged into
/// the hyperparameters (the utility, the margin, the label counts, the runs).
#[allow(clippy::too_many_arguments)]
pub fn build_path(
    net: &PolicyNet,
    report: &TrainReport,
    logs: &[ReadLog],
    clusters: Vec<ClusterCard>,
    calls: usize,
    extra: serde_json::Value,
    onnx_file: &str,
    onnx_sha256: &str,
) -> ModelCard {
    let golden = joint_golden(net, report.hyper.seed, &path_golden_telemetry());
    let telemetry = format!(
        "appended to every step's input (2 + {} values per step); exported as a second input",
        PATH_FEATURES.len()
    );
    let mut hyperparameters = model_hyperparameters(
        report,
        "the lowest-index menu output whose counterfactual utility on the call is within the \
         margin of the best (policy-train counterfactual)",
        &telemetry,
    );
    if let (Some(map), serde_json::Value::Object(extra)) = (hyperparameters.as_object_mut(), extra)
    {
        map.extend(extra);
    }
    ModelCard {
        schema: JOINT_CARD_SCHEMA.into(),
        input: TensorSpec {
            name: INPUT_NAME.into(),
            shape: vec![1, HORIZON_STEPS, 2],
            dtype: "float32".into(),
        },
        telemetry_input: Some(TelemetrySpec {
            name: TELEMETRY_INPUT_NAME.into(),
            shape: vec![1, PATH_FEATURES.len()],
            dtype: "float32".into(),
            features: PATH_FEATURES.iter().map(|f| (*f).to_owned()).collect(),
        }),
        output: TensorSpec {
            name: OUTPUT_NAME.into(),
            shape: vec![1, PATH_MENU.len()],
            dtype: "float32".into(),
        },
        horizon_s: HORIZON_STEPS as u32,
        cumulative_norm: CUMULATIVE_NORM,
        actions_ms: PATH_MENU.iter().map(|o| o.limit_ms).collect(),
        quiet_ms: PATH_MENU
            .iter()
            .any(|o| o.quiet_ms.is_some())
            .then(|| PATH_MENU.iter().map(|o| o.quiet_ms).collect()),
        profiles: Some(
            PATH_MENU
                .iter()
                .map(|o| CardProfile {
                    name: o.profile.to_owned(),
                    config: ActionProfile::named(o.profile)
                        .map(|p| p.config)
                        .unwrap_or_default(),
                })
                .collect(),
        ),
        controls: Some(path_controls()),
        measure: Some(PATH_MEASURE),
        opset: OPSET,
        onnx_file: onnx_file.into(),
        onnx_sha256: onnx_sha256.into(),
        training: Training {
            logs: log_files(logs),
            intervals: calls as u64,
            clusters,
            hyperparameters,
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

/// A joint model's golden vectors: every golden forecast with every measurement set, named
/// `<forecast>/<measurements>`, with the logits of `net`'s own forward pass.
fn joint_golden(net: &PolicyNet, seed: u64, sets: &[(&str, Vec<f32>)]) -> Vec<Golden> {
    golden_inputs(seed)
        .into_iter()
        .flat_map(|(name, input)| {
            sets.iter().map(move |(measured, t)| Golden {
                logits: logits_with(net, &input, t),
                name: format!("{name}/{measured}"),
                input: input.clone(),
                telemetry: Some(t.clone()),
            })
        })
        .collect()
}

/// The card's record of the telemetry files read: each one's path and sha256.
fn log_files(logs: &[ReadLog]) -> Vec<LogFile> {
    logs.iter()
        .map(|l| LogFile {
            name: l.path.clone(),
            sha256: l.sha256.clone(),
        })
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
    let joint = expert.is_joint();
    let golden: Vec<Golden> = if joint {
        let sets: Vec<(&str, Vec<f32>)> = golden_telemetry()
            .into_iter()
            .map(|(name, t)| (name, t.to_vec()))
            .collect();
        joint_golden(net, hyper.seed, &sets)
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
        quiet_ms: None,
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
            logs: log_files(logs),
            intervals: report.samples as u64,
            clusters: expert
                .clusters
                .iter()
                .map(|c| ClusterCard {
                    center: c.center.to_vec(),
                    action_ms: c.action_ms,
                    quiet_ms: None,
                    profile: c.profile.clone(),
                    size: c.size as u64,
                })
                .collect(),
            hyperparameters: model_hyperparameters(
                report,
                if joint {
                    "the expert's (limit, profile) pair for the interval's forecast and measurements (nearest cluster)"
                } else {
                    "the expert's limit for the interval's forecast (nearest cluster)"
                },
                if joint {
                    "appended to every step's input (2 + 3 values per step); exported as a second input"
                } else {
                    "none"
                },
            ),
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

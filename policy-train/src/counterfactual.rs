//! Counterfactual labels for the path-aware policy (docs/architecture.md, "The model and its
//! card", path cards): every call of a training run was run once under each output of
//! [`PATH_MENU`] (`rtc-client experiment --policies path-arm:none@2000,...`), so each call says
//! what every output would have done on its link, and the label is the output that did best.
//!
//! - **Reading.** An experiment directory holds `report.json` (the per-seed metrics of every
//!   (scenario, policy) cell) and `telemetry/<scenario>/<policy>/seed-<n>.jsonl`. The simulator
//!   is deterministic, so the arms of one (scenario, seed) share the link and, until the
//!   measuring window ends, every packet ([`pacer::policy::PathArm`]): the record that starts at
//!   the window's end ([`PATH_MEASURE`]) carries the forecast and the measurements the
//!   path-aware policy decides on, and they must be the same in every arm. A call needs every
//!   output's arm; policies that are no path arm (`default`, ...) are left out.
//! - **Utility** of an output on a call ([`utility`]), from its whole-call metrics, relative to
//!   the same call's `none@2000` arm (libwebrtc's sender): freezes a minute and frozen seconds a
//!   minute count as they are, a P95 rise (not a fall) weighs [`W_P95`] per unit of ratio, and a
//!   bitrate below [`BITRATE_FLOOR`] of the reference's weighs [`W_BITRATE`] per unit.
//! - **The ratios those two terms read** ([`Ratios`], [`smooth_ratios`]): the call's own by
//!   default, or the mean over its `--neighbours` nearest calls in what the policy decides on.
//!   Both terms are hinges, and a hinge on one call's ratio charges an output for its calls'
//!   spread around the reference as well as for its mean: on 30 starlink calls the 300-ms cap's
//!   P95 ratio averages 1.016 and the per-call hinge still costs it 0.6 a call, because the
//!   ratios spread by 0.12 (docs/experiments/path-card-neighbours-2026-12-05.md). The
//!   neighbourhood mean estimates what the policy can act on, the expected ratio given the
//!   decision's inputs. On the training family it removes a tax that only the reference output
//!   never pays, and the network trained on it leaves `none@2000` on paths where the family's
//!   mean utility still prefers it (the same note), so the default stays the call's own.
//! - **Label** ([`label`]): the lowest-index output whose utility is within a margin of the best.
//!   The menu is ordered least intrusive first, so among outputs that do about as well the label
//!   is the one that changes the least: the one-standard-error idea of Breiman, Friedman, Olshen
//!   and Stone (*Classification and Regression Trees*, 1984) the queue-limit expert uses
//!   ([`crate::expert`]), with a margin in utility units instead of a standard error, since one
//!   call gives one value per output.
//! - **The paper's expert on the same calls** ([`kmeans_expert`]): K-means over the handovers
//!   of each call's forecast and its boundary excess loss, each cluster labelled with the output
//!   of best mean utility (paper section III-A, with the joint expert's third feature), for
//!   comparison with the learned policy in a regret table ([`regret_table`]).

use crate::expert::{ExpertError, features as handover_features, kmeans, standardisation};
use crate::logs::{self, LogFile, Rejected};
use crate::train::{Dataset, Hyper, Sample, TrainReport, evaluate, train_out_of_fold};
use anyhow::Context;
use ndarray::Array2;
use pacer::policy::{ARM_PREFIX, CallFeedback, PATH_FEATURES, PATH_MEASURE, PATH_MENU, PathArm};
use pacer::telemetry::{InputsRecord, IntervalRecord, TelemetryError, read_intervals};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// The weight of a P95 delay rise: a rise of 10 % (ratio 1.1 to the reference arm) costs as
/// much as one freeze a minute. The project's goal allows the handover-aware sender at most
/// 10 % more P95 delay than libwebrtc's (docs/results.md, "Against the goal"), so an output that
/// uses all of that allowance must save at least a freeze a minute to be worth it.
///
/// By default a fall in P95 earns nothing ([`p95_fall_credit`] with `--p95-fall-weight` gives it
/// a smaller weight of its own). The goal is fewer freezes at no cost in delay, with no rise in
/// freezes on any path; a utility that paid for lower delay at the same rate would buy it with
/// freezes: on terrestrial-lte the 200-ms limit cuts P95 by a fifth and adds 47 % freezes
/// (0.19 to 0.28 a minute, held-out seeds 9300-9329), and such a utility labels it best.
pub const W_P95: f64 = 10.0;

/// The weight of a bitrate shortfall, per unit of ratio below [`BITRATE_FLOOR`]: falling to
/// 90 % of libwebrtc's bitrate costs one freeze a minute. Heavy on purpose: the goal's floor is
/// 95 % of libwebrtc's bitrate (docs/results.md, "Against the goal"), and freezes bought with
/// bitrate are no gain.
pub const W_BITRATE: f64 = 20.0;

/// The bitrate ratio to the reference arm below which [`W_BITRATE`] applies (the goal's floor).
pub const BITRATE_FLOOR: f64 = 0.95;

/// The default labelling margin, in utility units (freezes a minute): outputs within a tenth
/// of a freeze a minute of the best are as good, and the least intrusive of them is the label.
pub const DEFAULT_MARGIN: f64 = 0.1;

/// The default number of K-means clusters of the comparison expert: the shipped scenarios have
/// about four kinds of path (terrestrial, sparse LEO, Starlink slots with lossy boundaries,
/// Starlink-like slots with clean ones).
pub const DEFAULT_K: usize = 4;

/// The output every utility is relative to: `none@2000`, libwebrtc's sender.
pub const REFERENCE_OUTPUT: usize = 0;

/// The report metrics a utility reads, as `report.json` names them.
pub const METRICS: [&str; 4] = [
    "freezes_per_min",
    "frozen_s_per_min",
    "e2e_delay_p95_ms",
    "video_bitrate_kbps",
];

/// The K-means expert's features of a call, in order.
pub const KMEANS_FEATURES: [&str; 3] = [
    "handovers in the 120-s forecast",
    "mean gap between predicted handovers, s (120 when fewer than two)",
    "boundary excess loss at the decision, points (0 when unknown)",
];

/// The `start_ms` of the record each arm's decision opens: the measuring window's end.
pub const DECISION_START_MS: u64 = PATH_MEASURE.seconds * 1000;

/// What one output did on one call: its whole-call metrics from `report.json`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Freezes a minute.
    pub freezes_per_min: f64,
    /// Frozen seconds a minute.
    pub frozen_s_per_min: f64,
    /// The 95th percentile of end-to-end frame delay, ms.
    pub e2e_delay_p95_ms: f64,
    /// The video bitrate, kbit/s.
    pub video_bitrate_kbps: f64,
}

/// `value / reference`, or 1 where the reference is not positive (nothing to compare with: an
/// arm that sent no video, a call without delay samples).
fn ratio(value: f64, reference: f64) -> f64 {
    if reference > 0.0 {
        value / reference
    } else {
        1.0
    }
}

/// An output's P95 delay and bitrate as ratios to the reference arm's, as the utility's hinges
/// read them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratios {
    /// P95 delay over the reference's.
    pub p95: f64,
    /// Bitrate over the reference's.
    pub bitrate: f64,
}

impl Ratios {
    /// The ratios of `arm` to `reference` on one call.
    pub fn of(arm: &Outcome, reference: &Outcome) -> Self {
        Self {
            p95: ratio(arm.e2e_delay_p95_ms, reference.e2e_delay_p95_ms),
            bitrate: ratio(arm.video_bitrate_kbps, reference.video_bitrate_kbps),
        }
    }
}

/// The utility of `arm` on a call whose `none@2000` arm did `reference`, each hinge reading
/// the call's own ratio: [`utility_with`] of [`Ratios::of`].
pub fn utility(arm: &Outcome, reference: &Outcome) -> f64 {
    utility_with(arm, Ratios::of(arm, reference))
}

/// The utility of `arm` whose hinges read `ratios` (see [`W_P95`], [`W_BITRATE`]):
///
/// `-freezes_per_min - frozen_s_per_min - W_P95 max(0, ratios.p95 - 1) - W_BITRATE max(0,
/// 0.95 - ratios.bitrate)`.
///
/// Higher is better; the reference arm's own utility is minus its freezes and frozen seconds.
pub fn utility_with(arm: &Outcome, ratios: Ratios) -> f64 {
    -arm.freezes_per_min
        - arm.frozen_s_per_min
        - W_P95 * (ratios.p95 - 1.0).max(0.0)
        - W_BITRATE * (BITRATE_FLOOR - ratios.bitrate).max(0.0)
}

/// What a P95 fall earns under `--p95-fall-weight` `weight`: `weight max(0, 1 - ratios.p95)`,
/// added to [`utility_with`]. 0, the default, is the rule of [`W_P95`]: a fall earns nothing.
/// A small weight breaks the ties between outputs whose freezes the goal counts as equal (within
/// 5 %) in favour of the one with less delay: on the training family's terrestrial paths a 500-ms
/// limit cuts libwebrtc's P95 delay by 41 % for 5 % more freezes
/// (docs/experiments/queue-limit-2026-12-05.md), which a weight of 1 prefers and 0 does not.
/// The shipped path card was trained with 1: with 0 no policy on the menu meets both parts of
/// the goal on terrestrial-lte (docs/experiments/path-card-follow-2026-12-06.md, section 1).
pub fn p95_fall_credit(ratios: Ratios, weight: f64) -> f64 {
    weight * (1.0 - ratios.p95).max(0.0)
}

/// What the neighbourhood of [`smooth_ratios`] is measured in: the decision's measurements
/// ([`PATH_FEATURES`]) and the forecast's handover count and gap (the first two
/// [`KMEANS_FEATURES`]), each standardised over the calls.
fn neighbourhood_features(call: &Call) -> Vec<f64> {
    let [count, gap, _] = call.kmeans_features();
    call.features
        .iter()
        .map(|&f| f64::from(f))
        .chain([count, gap])
        .collect()
}

/// Sets each call's [`Call::ratios`] to the mean of its own ratios over its `k` nearest calls
/// (Euclidean over the standardised measurements of [`PATH_FEATURES`] and the forecast's
/// handover count and gap). The call itself comes first, then equal distances go to the earlier
/// call, so the result depends on nothing but the calls and their order. `k` = 1 keeps each
/// call's own ratios; `k` is at most the number of calls.
pub fn smooth_ratios(calls: &mut [Call], k: usize) {
    let n = calls.len();
    let k = k.clamp(1, n.max(1));
    let own: Vec<Vec<Ratios>> = calls.iter().map(Call::own_ratios).collect();
    let raw: Vec<Vec<f64>> = calls.iter().map(neighbourhood_features).collect();
    let d = raw.first().map_or(0, Vec::len);
    let (mean, std) = standardisation(&raw, d);
    let z: Vec<Vec<f64>> = raw
        .iter()
        .map(|r| (0..d).map(|j| (r[j] - mean[j]) / std[j]).collect())
        .collect();
    for (i, call) in calls.iter_mut().enumerate() {
        let mut order: Vec<(f64, usize)> = z
            .iter()
            .enumerate()
            .map(|(j, zj)| {
                let d2: f64 = z[i].iter().zip(zj).map(|(a, b)| (a - b).powi(2)).sum();
                (d2, j)
            })
            .collect();
        order.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then((a.1 != i).cmp(&(b.1 != i)))
                .then(a.1.cmp(&b.1))
        });
        let near = &order[..k];
        call.ratios = (0..call.outcomes.len())
            .map(|o| {
                let (p95, bitrate) = near.iter().fold((0.0, 0.0), |(p, b), &(_, j)| {
                    let r = own[j].get(o).copied().unwrap_or(Ratios {
                        p95: 1.0,
                        bitrate: 1.0,
                    });
                    (p + r.p95, b + r.bitrate)
                });
                Ratios {
                    p95: p95 / k as f64,
                    bitrate: bitrate / k as f64,
                }
            })
            .collect();
    }
}

/// The label of a call whose outputs have `utilities`: the lowest index within `margin` of the
/// best (0 for an empty list).
pub fn label(utilities: &[f64], margin: f64) -> usize {
    let best = utilities.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    utilities
        .iter()
        .position(|u| *u >= best - margin)
        .unwrap_or(0)
}

/// One call with all its arms: what the policy would read at the decision, and what each output
/// did.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The experiment directory it came from.
    pub run: String,
    /// Its scenario.
    pub scenario: String,
    /// Its seed.
    pub seed: u64,
    /// The decision's forecast, the `[120, 2]` model input, row-major.
    pub forecast: Vec<f32>,
    /// The forecast's handover bits (for the K-means features).
    pub handovers: Vec<u8>,
    /// What the call had measured at the decision.
    pub inputs: InputsRecord,
    /// The model's telemetry input: [`PATH_FEATURES`] of the measurements.
    pub features: Vec<f32>,
    /// What each output of [`PATH_MENU`] did, in menu order.
    pub outcomes: Vec<Outcome>,
    /// The ratios each output's utility reads, in menu order: the call's own
    /// ([`Call::own_ratios`]) until [`smooth_ratios`] replaces them.
    pub ratios: Vec<Ratios>,
    /// The weight of a P95 fall in its utilities ([`p95_fall_credit`]); 0 until
    /// [`run`] sets `--p95-fall-weight`.
    pub p95_fall_weight: f64,
    /// Each arm's telemetry file, in menu order.
    pub logs: Vec<String>,
}

impl Call {
    /// Each output's own ratios to [`REFERENCE_OUTPUT`] on this call.
    pub fn own_ratios(&self) -> Vec<Ratios> {
        let reference = self.outcomes[REFERENCE_OUTPUT];
        self.outcomes
            .iter()
            .map(|o| Ratios::of(o, &reference))
            .collect()
    }

    /// The utility of each output, relative to [`REFERENCE_OUTPUT`], its hinges reading
    /// [`Call::ratios`].
    pub fn utilities(&self) -> Vec<f64> {
        self.outcomes
            .iter()
            .zip(&self.ratios)
            .map(|(o, r)| utility_with(o, *r) + p95_fall_credit(*r, self.p95_fall_weight))
            .collect()
    }

    /// Its label under `margin` ([`label`]).
    pub fn label(&self, margin: f64) -> usize {
        label(&self.utilities(), margin)
    }

    /// The K-means features ([`KMEANS_FEATURES`]).
    pub fn kmeans_features(&self) -> [f64; 3] {
        let [count, gap] = handover_features(&self.handovers);
        let excess = self
            .inputs
            .boundary_excess_loss_pct
            .filter(|v| v.is_finite())
            .unwrap_or(0.0);
        [count, gap, excess]
    }

    /// `<scenario> seed <seed> in <run>`, how errors and warnings name it.
    pub fn name(&self) -> String {
        format!("{} seed {} in {}", self.scenario, self.seed, self.run)
    }
}

/// Everything read from the experiment directories.
#[derive(Debug, Clone, Default)]
pub struct Runs {
    /// The complete calls, by directory, then scenario, then seed.
    pub calls: Vec<Call>,
    /// Every telemetry file read, with its sha256.
    pub logs: Vec<LogFile>,
    /// Report cells of policies that are no path arm, per policy name.
    pub ignored_cells: BTreeMap<String, usize>,
    /// Telemetry files of policies that are no path arm.
    pub ignored_files: usize,
    /// The incomplete calls skipped, each with what it lacked.
    pub skipped: Vec<String>,
    /// Telemetry lines that were no valid record (the rest of their file was still read).
    pub rejected: Vec<Rejected>,
}

/// Why the experiment directories give no counterfactual labels.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CounterfactualError {
    /// A file or directory could not be read.
    #[error("cannot read {path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// `report.json` is not an experiment report.
    #[error("{path} is not an experiment report: {message}")]
    Report {
        /// The report.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A report cell of a path arm is unusable.
    #[error("{path}: the cell {scenario} / {policy}: {problem}")]
    Cell {
        /// The report.
        path: PathBuf,
        /// Its scenario.
        scenario: String,
        /// Its policy.
        policy: String,
        /// What is wrong.
        problem: String,
    },
    /// A policy named as a path arm names no output of the menu.
    #[error("{path}: {message}")]
    Arm {
        /// The report or telemetry file.
        path: PathBuf,
        /// The parser's message, naming the policy and the menu.
        message: String,
    },
    /// A decision record has no seed.
    #[error("{path}: the record at {DECISION_START_MS} ms has no seed, so its call is unknown")]
    NoSeed {
        /// The telemetry file.
        path: PathBuf,
    },
    /// Two telemetry files are the same arm of the same call.
    #[error("{first} and {second} are both the {arm} arm of {call}")]
    Duplicate {
        /// One file.
        first: String,
        /// The other.
        second: String,
        /// The arm.
        arm: String,
        /// The call: `<scenario> seed <seed>`.
        call: String,
    },
    /// A call lacks arms.
    #[error(
        "the call {call} lacks {missing} (a call needs all {n} path arms; --skip-incomplete \
         skips such calls)",
        n = PATH_MENU.len()
    )]
    Incomplete {
        /// The call: `<scenario> seed <seed> in <experiment directory>`.
        call: String,
        /// The arms it lacks, each with what is missing.
        missing: String,
    },
    /// Two arms of a call decided on different forecasts or measurements.
    #[error(
        "the call {call}: the arms {first} and {second} decided on different {what}, so they \
         did not run the same link up to the decision"
    )]
    Mismatch {
        /// The call: `<scenario> seed <seed> in <experiment directory>`.
        call: String,
        /// The first arm.
        first: String,
        /// The arm that differs from it.
        second: String,
        /// What differs, with both values.
        what: String,
    },
    /// Nothing to train on.
    #[error("no complete call of the {n} path arms in {runs}", n = PATH_MENU.len())]
    NoCalls {
        /// The directories read.
        runs: String,
    },
}

#[derive(Debug, Deserialize)]
struct Report {
    cells: Vec<Cell>,
}

#[derive(Debug, Deserialize)]
struct Cell {
    scenario: String,
    policy: String,
    seeds: Vec<u64>,
    metrics: Vec<Metric>,
}

#[derive(Debug, Deserialize)]
struct Metric {
    metric: String,
    values: Vec<Option<f64>>,
}

/// The menu output a policy name stands for: `None` for a policy that is no path arm, an error
/// for one that says it is (`path-arm:...`) but names no output.
fn arm_of(policy: &str, path: &Path) -> Result<Option<usize>, CounterfactualError> {
    if !policy.starts_with(ARM_PREFIX) {
        return Ok(None);
    }
    PathArm::parse(policy)
        .map(|a| Some(a.output()))
        .map_err(|message| CounterfactualError::Arm {
            path: path.to_owned(),
            message: format!("the policy {policy:?}: {message}"),
        })
}

/// The outcome of every arm of every seed in one report, by (scenario, seed, output).
fn read_report(
    path: &Path,
    runs: &mut Runs,
) -> Result<BTreeMap<(String, u64, usize), Outcome>, CounterfactualError> {
    let text = std::fs::read_to_string(path).map_err(|e| CounterfactualError::Io {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let report: Report = serde_json::from_str(&text).map_err(|e| CounterfactualError::Report {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let mut outcomes = BTreeMap::new();
    for cell in &report.cells {
        let Some(output) = arm_of(&cell.policy, path)? else {
            *runs.ignored_cells.entry(cell.policy.clone()).or_default() += 1;
            continue;
        };
        let problem = |problem: String| CounterfactualError::Cell {
            path: path.to_owned(),
            scenario: cell.scenario.clone(),
            policy: cell.policy.clone(),
            problem,
        };
        let mut columns = Vec::with_capacity(METRICS.len());
        for name in METRICS {
            let metric = cell
                .metrics
                .iter()
                .find(|m| m.metric == name)
                .ok_or_else(|| problem(format!("no metric {name}")))?;
            if metric.values.len() != cell.seeds.len() {
                return Err(problem(format!(
                    "{name} has {} values for {} seeds",
                    metric.values.len(),
                    cell.seeds.len()
                )));
            }
            columns.push(&metric.values);
        }
        for (i, &seed) in cell.seeds.iter().enumerate() {
            let mut v = [0.0; METRICS.len()];
            for (j, column) in columns.iter().enumerate() {
                v[j] = column[i].filter(|x| x.is_finite()).ok_or_else(|| {
                    problem(format!("{} of seed {seed} is no number", METRICS[j]))
                })?;
            }
            let outcome = Outcome {
                freezes_per_min: v[0],
                frozen_s_per_min: v[1],
                e2e_delay_p95_ms: v[2],
                video_bitrate_kbps: v[3],
            };
            if outcomes
                .insert((cell.scenario.clone(), seed, output), outcome)
                .is_some()
            {
                return Err(problem(format!("seed {seed} appears twice for this arm")));
            }
        }
    }
    Ok(outcomes)
}

/// One arm's decision: its file and record.
struct Decision {
    file: String,
    record: IntervalRecord,
}

/// Where an arm's telemetry stands.
enum ArmTelemetry {
    /// The decision record.
    Decided(Box<Decision>),
    /// A file of the arm without a record at the window's end (a call cut short).
    NoDecision(String),
}

/// The decision record of every arm file under `run/telemetry`, by (scenario, seed, output).
fn read_telemetry(
    run: &Path,
    runs: &mut Runs,
) -> Result<BTreeMap<(String, u64, usize), ArmTelemetry>, CounterfactualError> {
    let root = run.join("telemetry");
    let pattern = format!(
        "{}/**/*.jsonl",
        glob::Pattern::escape(&root.display().to_string())
    );
    let files = logs::expand(&[pattern]).map_err(|e| CounterfactualError::Io {
        path: root.clone(),
        message: e.to_string(),
    })?;
    let mut decisions = BTreeMap::new();
    for path in files {
        let bytes = std::fs::read(&path).map_err(|e| CounterfactualError::Io {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let name = path.display().to_string();
        let mut records = Vec::new();
        for item in read_intervals(BufReader::new(bytes.as_slice())) {
            match item {
                Ok(record) => records.push(record),
                Err(error) => runs.rejected.push(Rejected {
                    file: name.clone(),
                    line: error.line().unwrap_or(0),
                    reason: match &error {
                        TelemetryError::Line { error, .. } => error.to_string(),
                        other => other.to_string(),
                    },
                }),
            }
        }
        runs.logs.push(LogFile {
            path: name.clone(),
            sha256: logs::hex_sha256(&bytes),
            records: records.len(),
        });
        let Some(first) = records.first() else {
            continue;
        };
        let Some(output) = arm_of(&first.policy, &path)? else {
            runs.ignored_files += 1;
            continue;
        };
        let seed = |r: &IntervalRecord| {
            r.seed
                .ok_or_else(|| CounterfactualError::NoSeed { path: path.clone() })
        };
        let decided = records.iter().position(|r| r.start_ms == DECISION_START_MS);
        let (key, arm) = match decided {
            Some(i) => {
                let record = records.swap_remove(i);
                // The record's own policy names the arm (its directory name is a lossy copy).
                let output = arm_of(&record.policy, &path)?.unwrap_or(output);
                let key = (record.scenario.clone(), seed(&record)?, output);
                let decision = Decision {
                    file: name.clone(),
                    record,
                };
                (key, ArmTelemetry::Decided(Box::new(decision)))
            }
            None => (
                (first.scenario.clone(), seed(first)?, output),
                ArmTelemetry::NoDecision(name.clone()),
            ),
        };
        if let Some(other) = decisions.get(&key) {
            let other = match other {
                ArmTelemetry::Decided(d) => d.file.clone(),
                ArmTelemetry::NoDecision(f) => f.clone(),
            };
            return Err(CounterfactualError::Duplicate {
                first: other,
                second: name,
                arm: PATH_MENU[key.2].name(),
                call: format!("{} seed {}", key.0, key.1),
            });
        }
        decisions.insert(key, arm);
    }
    Ok(decisions)
}

/// Reads every experiment directory of `dirs` (see the module documentation). An incomplete
/// call is an error naming it and what it lacks, or, with `skip_incomplete`, left out and
/// listed in [`Runs::skipped`].
pub fn read_runs(dirs: &[PathBuf], skip_incomplete: bool) -> Result<Runs, CounterfactualError> {
    let mut runs = Runs::default();
    for dir in dirs {
        let run = dir.display().to_string();
        let outcomes = read_report(&dir.join("report.json"), &mut runs)?;
        let mut decisions = read_telemetry(dir, &mut runs)?;
        let keys: std::collections::BTreeSet<(String, u64)> = outcomes
            .keys()
            .chain(decisions.keys())
            .map(|(scenario, seed, _)| (scenario.clone(), *seed))
            .collect();
        for (scenario, seed) in keys {
            let mut missing = Vec::new();
            let mut arms = Vec::with_capacity(PATH_MENU.len());
            for (output, menu) in PATH_MENU.iter().enumerate() {
                let key = (scenario.clone(), seed, output);
                let outcome = outcomes.get(&key).copied();
                let decision = decisions.remove(&key);
                let lacks = match (&outcome, &decision) {
                    (Some(_), Some(ArmTelemetry::Decided(_))) => None,
                    (None, Some(ArmTelemetry::Decided(_))) => Some("no values in report.json"),
                    (Some(_), None) => Some("no telemetry"),
                    (Some(_), Some(ArmTelemetry::NoDecision(_))) => {
                        Some("no telemetry record at the measuring window's end")
                    }
                    (None, _) => Some("no values in report.json and no decision in telemetry"),
                };
                match (lacks, outcome, decision) {
                    (None, Some(outcome), Some(ArmTelemetry::Decided(d))) => {
                        arms.push((outcome, *d));
                    }
                    (lacks, ..) => {
                        missing.push(format!("{} ({})", menu.name(), lacks.unwrap_or("nothing")))
                    }
                }
            }
            if !missing.is_empty() {
                let error = CounterfactualError::Incomplete {
                    call: format!("{scenario} seed {seed} in {run}"),
                    missing: missing.join(", "),
                };
                if skip_incomplete {
                    runs.skipped.push(error.to_string());
                    continue;
                }
                return Err(error);
            }
            runs.calls.push(call_of(&run, &scenario, seed, arms)?);
        }
    }
    if runs.calls.is_empty() {
        return Err(CounterfactualError::NoCalls {
            runs: dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    Ok(runs)
}

/// The call of `arms` (all of them, in menu order), after checking that they decided on the
/// same forecast and measurements.
fn call_of(
    run: &str,
    scenario: &str,
    seed: u64,
    arms: Vec<(Outcome, Decision)>,
) -> Result<Call, CounterfactualError> {
    let first = &arms[0].1.record;
    let forecast = first.forecast.to_tensor().to_vec();
    let inputs = first.inputs.unwrap_or_default();
    for (output, (_, d)) in arms.iter().enumerate().skip(1) {
        let mismatch = |what: String| CounterfactualError::Mismatch {
            call: format!("{scenario} seed {seed} in {run}"),
            first: PATH_MENU[0].name(),
            second: PATH_MENU[output].name(),
            what,
        };
        let other = d.record.forecast.to_tensor();
        if other[..] != forecast[..] {
            return Err(mismatch("forecasts".to_owned()));
        }
        let other = d.record.inputs.unwrap_or_default();
        if other != inputs {
            return Err(mismatch(format!(
                "measurements ({inputs:?} against {other:?})"
            )));
        }
    }
    let features = CallFeedback::from(inputs)
        .features_named(&PATH_FEATURES)
        .unwrap_or_else(|_| vec![0.0; PATH_FEATURES.len()]);
    let outcomes: Vec<Outcome> = arms.iter().map(|(o, _)| *o).collect();
    let ratios = outcomes
        .iter()
        .map(|o| Ratios::of(o, &outcomes[REFERENCE_OUTPUT]))
        .collect();
    Ok(Call {
        run: run.to_owned(),
        scenario: scenario.to_owned(),
        seed,
        handovers: first.forecast.handover.bits().to_vec(),
        forecast,
        inputs,
        features,
        outcomes,
        ratios,
        p95_fall_weight: 0.0,
        logs: arms.into_iter().map(|(_, d)| d.file).collect(),
    })
}

/// One cluster of the comparison expert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathCluster {
    /// Its centre in the raw features ([`KMEANS_FEATURES`]).
    pub center: Vec<f64>,
    /// Calls in it.
    pub size: usize,
    /// The output of best mean utility over its calls (the lowest index among equals; 0 for an
    /// empty cluster).
    pub output: usize,
    /// The mean utility of each output over its calls.
    pub mean_utility: Vec<f64>,
}

/// The paper's expert on the calls (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KMeansExpert {
    /// The features, in order.
    pub features: Vec<String>,
    /// The clusters, by handover count, then gap, then excess.
    pub clusters: Vec<PathCluster>,
    /// Each call's cluster.
    pub assignment: Vec<usize>,
}

impl KMeansExpert {
    /// The output the expert gives call `i` (in-sample: its own cluster's).
    pub fn output_of(&self, i: usize) -> usize {
        self.assignment
            .get(i)
            .and_then(|&c| self.clusters.get(c))
            .map_or(REFERENCE_OUTPUT, |c| c.output)
    }
}

/// K-means with `k` clusters over the calls' features (standardised, seeded), each cluster
/// labelled with the output of best mean utility.
pub fn kmeans_expert(calls: &[Call], k: usize, seed: u64) -> Result<KMeansExpert, ExpertError> {
    if calls.len() < k || k == 0 {
        return Err(ExpertError::TooFew {
            intervals: calls.len(),
            k,
        });
    }
    let raw: Vec<Vec<f64>> = calls.iter().map(|c| c.kmeans_features().to_vec()).collect();
    let d = KMEANS_FEATURES.len();
    let (mean, std) = standardisation(&raw, d);
    let z = Array2::from_shape_fn((raw.len(), d), |(i, j)| (raw[i][j] - mean[j]) / std[j]);
    let (centres, labels, _) = kmeans(&z, k, seed)?;
    let utilities: Vec<Vec<f64>> = calls.iter().map(Call::utilities).collect();
    let mut clusters: Vec<(usize, PathCluster)> = (0..k)
        .map(|c| {
            let members: Vec<&Vec<f64>> = utilities
                .iter()
                .zip(&labels)
                .filter(|(_, l)| **l == c)
                .map(|(u, _)| u)
                .collect();
            let mean_utility: Vec<f64> = (0..PATH_MENU.len())
                .map(|o| members.iter().map(|u| u[o]).sum::<f64>() / members.len().max(1) as f64)
                .collect();
            let center = (0..d).map(|j| centres[[c, j]] * std[j] + mean[j]).collect();
            (
                c,
                PathCluster {
                    center,
                    size: members.len(),
                    output: label(&mean_utility, 0.0),
                    mean_utility,
                },
            )
        })
        .collect();
    clusters.sort_by(|(_, a), (_, b)| {
        a.center
            .iter()
            .zip(&b.center)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut place = vec![0; k];
    for (new, (old, _)) in clusters.iter().enumerate() {
        place[*old] = new;
    }
    Ok(KMeansExpert {
        features: KMEANS_FEATURES.iter().map(|f| (*f).to_owned()).collect(),
        clusters: clusters.into_iter().map(|(_, c)| c).collect(),
        assignment: labels.iter().map(|&l| place[l]).collect(),
    })
}

/// The mean regret of one way of choosing, over all calls and per scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Regret {
    /// The way of choosing (`fixed none@2000`, `k-means expert (in-sample)`, ...).
    pub strategy: String,
    /// Calls it chose for.
    pub calls: usize,
    /// The mean of (best utility - utility of its choice) over them; `None` without calls.
    pub mean: Option<f64>,
    /// The same per scenario.
    pub per_scenario: BTreeMap<String, Option<f64>>,
}

/// The regret of each strategy: `choices[s]` holds strategy `s`'s output for each call (`None`
/// where it has none, such as an out-of-fold prediction without cross-validation).
pub fn regret_table(calls: &[Call], choices: &[(String, Vec<Option<usize>>)]) -> Vec<Regret> {
    let regrets: Vec<Vec<f64>> = calls
        .iter()
        .map(|c| {
            let u = c.utilities();
            let best = u.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            u.iter().map(|x| best - x).collect()
        })
        .collect();
    let mean = |values: &[f64]| {
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    choices
        .iter()
        .map(|(strategy, chosen)| {
            let mut all = Vec::new();
            let mut per: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            for (i, call) in calls.iter().enumerate() {
                let entry = per.entry(call.scenario.clone()).or_default();
                if let Some(r) = chosen
                    .get(i)
                    .copied()
                    .flatten()
                    .and_then(|o| regrets[i].get(o))
                {
                    all.push(*r);
                    entry.push(*r);
                }
            }
            Regret {
                strategy: strategy.clone(),
                calls: all.len(),
                mean: mean(&all),
                per_scenario: per.into_iter().map(|(s, v)| (s, mean(&v))).collect(),
            }
        })
        .collect()
}

/// The most scenarios the printed regret table gives a column each; a training family of
/// hundreds of paths prints the mean over all calls only (`counterfactual.json` keeps every
/// scenario's).
pub const MAX_PRINTED_SCENARIOS: usize = 12;

/// The regret table as text: one row per strategy, the mean over all calls, then per scenario
/// (up to [`MAX_PRINTED_SCENARIOS`]).
pub fn format_regret(table: &[Regret]) -> String {
    let scenarios: Vec<&String> = table
        .first()
        .map(|r| r.per_scenario.keys().collect())
        .unwrap_or_default();
    let scenarios = if scenarios.len() > MAX_PRINTED_SCENARIOS {
        Vec::new()
    } else {
        scenarios
    };
    let width = table
        .iter()
        .map(|r| r.strategy.len())
        .max()
        .unwrap_or(0)
        .max(8);
    let column = |s: &str| s.len().max(9);
    let mut out = format!("  {:<width$} {:>6} {:>9}", "strategy", "calls", "all");
    for s in &scenarios {
        out += &format!(" {:>w$}", s, w = column(s));
    }
    out.push('\n');
    let cell = |v: Option<f64>, w: usize| match v {
        Some(v) => format!(" {v:>w$.3}"),
        None => format!(" {:>w$}", "-"),
    };
    for r in table {
        out += &format!("  {:<width$} {:>6}", r.strategy, r.calls);
        out += &cell(r.mean, 9);
        for s in &scenarios {
            out += &cell(r.per_scenario.get(*s).copied().flatten(), column(s));
        }
        out.push('\n');
    }
    out
}

/// The number of calls labelled with each output.
pub fn label_counts(labels: &[usize]) -> Vec<usize> {
    let mut counts = vec![0; PATH_MENU.len()];
    for &l in labels {
        if let Some(c) = counts.get_mut(l) {
            *c += 1;
        }
    }
    counts
}

/// What `policy-train counterfactual` is asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The experiment directories.
    pub runs: Vec<PathBuf>,
    /// Where the model, its card and the tables go.
    pub out: PathBuf,
    /// The transformer's hyperparameters (the K-means expert takes its seed too).
    pub hyper: Hyper,
    /// Threads libtorch may use.
    pub threads: usize,
    /// The labelling margin, utility units ([`DEFAULT_MARGIN`]).
    pub margin: f64,
    /// The comparison expert's clusters ([`DEFAULT_K`]).
    pub k: usize,
    /// Whether an incomplete call is skipped rather than an error.
    pub skip_incomplete: bool,
    /// Train on the labels' cross-entropy instead of each output's regret
    /// ([`Dataset::costs`](crate::train::Dataset::costs)).
    pub cross_entropy: bool,
    /// The calls whose ratios each utility's hinges read ([`smooth_ratios`]); 1 for each
    /// call's own.
    pub neighbours: usize,
    /// The weight of a P95 fall ([`p95_fall_credit`]); 0: a fall earns nothing.
    pub p95_fall_weight: f64,
}

/// The largest regret one call contributes to the training cost, utility units (freezes a
/// minute): a few calls of the training family lose 10 to 25 under one output (a key-frame
/// storm on a bursty path), and unclipped they would outweigh dozens of ordinary calls whose
/// outputs differ by a freeze or two.
pub const MAX_TRAINING_COST: f64 = 5.0;

/// How a label is made, as `counterfactual.json` and the card record it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UtilityRule {
    /// The formula.
    pub formula: String,
    /// The output every utility is relative to.
    pub reference: String,
    /// [`W_P95`].
    pub w_p95: f64,
    /// [`W_BITRATE`].
    pub w_bitrate: f64,
    /// [`BITRATE_FLOOR`].
    pub bitrate_floor: f64,
    /// The labelling margin.
    pub margin: f64,
    /// The calls each hinge's ratio is the mean over ([`smooth_ratios`]; 1: the call's own).
    /// Cards trained before it was recorded read each call's own.
    #[serde(default = "own_call")]
    pub neighbours: usize,
    /// The weight of a P95 fall ([`p95_fall_credit`]); cards trained before it was recorded
    /// gave a fall nothing.
    #[serde(default)]
    pub w_p95_fall: f64,
    /// The labelling rule.
    pub label: String,
}

/// [`UtilityRule::neighbours`] of a record without one.
fn own_call() -> usize {
    1
}

impl UtilityRule {
    /// The rule with `margin`, the hinges reading ratios averaged over `neighbours` calls.
    pub fn new(margin: f64, neighbours: usize, w_p95_fall: f64) -> Self {
        Self {
            formula: "-freezes_per_min - frozen_s_per_min - w_p95 * max(0, p95 / p95_ref - 1) \
                      + w_p95_fall * max(0, 1 - p95 / p95_ref) \
                      - w_bitrate * max(0, bitrate_floor - bitrate / bitrate_ref), each ratio \
                      the mean over the call's `neighbours` nearest calls in the standardised \
                      decision inputs and forecast handover count and gap (itself included)"
                .to_owned(),
            reference: PATH_MENU[REFERENCE_OUTPUT].name(),
            w_p95: W_P95,
            w_bitrate: W_BITRATE,
            bitrate_floor: BITRATE_FLOOR,
            margin,
            neighbours,
            w_p95_fall,
            label: "the lowest-index output whose utility is within the margin of the best"
                .to_owned(),
        }
    }
}

/// `counterfactual.json`: what the run read, how it labelled, and how each way of choosing
/// did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// [`SUMMARY_SCHEMA`].
    pub schema: String,
    /// The experiment directories read.
    pub runs: Vec<String>,
    /// Complete calls, the training set.
    pub calls: usize,
    /// Incomplete calls skipped, each with what it lacked.
    pub skipped: Vec<String>,
    /// Report cells of policies that are no path arm, per policy.
    pub ignored_cells: BTreeMap<String, usize>,
    /// Telemetry files of policies that are no path arm.
    pub ignored_files: usize,
    /// Telemetry lines that were no valid record.
    pub rejected_lines: usize,
    /// The utility and the labelling rule.
    pub utility: UtilityRule,
    /// The outputs, in menu order.
    pub outputs: Vec<String>,
    /// Calls labelled with each output.
    pub label_counts: Vec<usize>,
    /// The comparison expert.
    pub kmeans: KMeansExpert,
    /// Mean regret of each way of choosing (utility units: freezes a minute).
    pub regret: Vec<Regret>,
    /// The transformer's cross-validation against the labels.
    pub cv: CrossValidation,
    /// The exported model's sha256.
    pub onnx_sha256: String,
    /// Training's wall time, s.
    pub train_s: f64,
}

/// The transformer's cross-validation against the labels (the whole report is in
/// `training.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossValidation {
    /// Held-out accuracy of each fold (none without cross-validation).
    pub fold_accuracy: Vec<f64>,
    /// Their mean.
    pub accuracy_mean: f64,
    /// Their standard deviation.
    pub accuracy_std: f64,
    /// Over all held-out calls: `[label][prediction]`.
    pub confusion: Vec<Vec<u64>>,
}

/// `counterfactual.json`'s schema tag.
pub const SUMMARY_SCHEMA: &str = "leopace.counterfactual.v1";
/// `labels.json`'s schema tag.
pub const LABELS_SCHEMA: &str = "leopace.counterfactual-labels.v1";

/// One call of `labels.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelledCall {
    /// Its experiment directory.
    pub run: String,
    /// Its scenario.
    pub scenario: String,
    /// Its seed.
    pub seed: u64,
    /// The model's telemetry input ([`PATH_FEATURES`]).
    pub features: Vec<f32>,
    /// The K-means features ([`KMEANS_FEATURES`]).
    pub kmeans_features: Vec<f64>,
    /// What each output did.
    pub outcomes: Vec<Outcome>,
    /// The ratios each output's utility read ([`smooth_ratios`]).
    pub ratios: Vec<Ratios>,
    /// Each output's utility.
    pub utilities: Vec<f64>,
    /// Its label.
    pub label: usize,
    /// Its K-means cluster.
    pub kmeans_cluster: usize,
    /// The K-means expert's output for it.
    pub kmeans_label: usize,
    /// The output the cross-validation fold that held it out predicts (none without folds).
    pub out_of_fold: Option<usize>,
    /// The final network's output for it (in-sample).
    pub final_fit: usize,
    /// Its arms' telemetry files, in menu order.
    pub logs: Vec<String>,
}

/// What the run wrote, for the caller to report.
#[derive(Debug, Clone)]
pub struct Finished {
    /// `counterfactual.json`'s content.
    pub summary: Summary,
    /// The model card's path.
    pub card: PathBuf,
}

/// `training.json`: the training report, the logs and the outputs.
#[derive(Debug, Serialize)]
struct TrainingFile<'a> {
    report: &'a TrainReport,
    logs: &'a [LogFile],
    actions_ms: Vec<u64>,
    quiet_ms: Vec<Option<u64>>,
    profiles: Vec<&'static str>,
    wall_s: f64,
}

/// The whole of `policy-train counterfactual`: read and label the calls, build the K-means
/// expert, train the transformer (cross-validated), export it with its card and write
/// `labels.json`, `training.json`, `training-curve.png` and `counterfactual.json` into
/// [`Options::out`]. `on_epoch(done, total)` reports training progress.
pub fn run(options: &Options, on_epoch: impl FnMut(usize, usize)) -> anyhow::Result<Finished> {
    let mut runs = read_runs(&options.runs, options.skip_incomplete)?;
    let neighbours = options.neighbours.clamp(1, runs.calls.len().max(1));
    smooth_ratios(&mut runs.calls, neighbours);
    for call in &mut runs.calls {
        call.p95_fall_weight = options.p95_fall_weight;
    }
    for skipped in &runs.skipped {
        tracing::warn!("skipped: {skipped}");
    }
    for r in runs.rejected.iter().take(5) {
        tracing::warn!("{}:{}: skipped: {}", r.file, r.line, r.reason);
    }
    let calls = &runs.calls;
    let labels: Vec<usize> = calls.iter().map(|c| c.label(options.margin)).collect();
    let expert = kmeans_expert(calls, options.k, options.hyper.seed).with_context(|| {
        format!(
            "cannot build the K-means expert with --k {} over {} calls",
            options.k,
            calls.len()
        )
    })?;

    tch::set_num_threads(options.threads.max(1) as i32);
    let samples: Vec<Sample> = calls
        .iter()
        .zip(&labels)
        .map(|(c, &label)| {
            let utilities = c.utilities();
            let best = utilities.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            Sample {
                forecast: c.forecast.clone(),
                features: c.features.clone(),
                label,
                costs: (!options.cross_entropy).then(|| {
                    utilities
                        .iter()
                        .map(|u| (best - u).min(MAX_TRAINING_COST) as f32)
                        .collect()
                }),
            }
        })
        .collect();
    let data = Dataset::from_samples(&samples)?;
    let started = std::time::Instant::now();
    let (trained, report, out_of_fold) =
        train_out_of_fold(&data, PATH_MENU.len(), &options.hyper, on_epoch)
            .context("training failed")?;
    let train_s = started.elapsed().as_secs_f64();
    let all: Vec<i64> = (0..data.len() as i64).collect();
    let final_fit: Vec<usize> = evaluate(&trained.net, &data, &all)
        .1
        .into_iter()
        .map(|p| usize::try_from(p).unwrap_or(REFERENCE_OUTPUT))
        .collect();

    let mut choices: Vec<(String, Vec<Option<usize>>)> = PATH_MENU
        .iter()
        .enumerate()
        .map(|(o, menu)| (format!("fixed {}", menu.name()), vec![Some(o); calls.len()]))
        .collect();
    choices.push((
        format!("k-means expert, k = {} (in-sample)", options.k),
        (0..calls.len())
            .map(|i| Some(expert.output_of(i)))
            .collect(),
    ));
    choices.push((
        format!("learned ({}-fold, out-of-fold)", report.folds.len()),
        out_of_fold.clone(),
    ));
    choices.push((
        "learned (final fit, in-sample)".to_owned(),
        final_fit.iter().map(|&o| Some(o)).collect(),
    ));
    choices.push((
        format!("labels (margin {})", options.margin),
        labels.iter().map(|&o| Some(o)).collect(),
    ));
    choices.push((
        "oracle".to_owned(),
        calls
            .iter()
            .map(|c| Some(label(&c.utilities(), 0.0)))
            .collect(),
    ));
    let regret = regret_table(calls, &choices);

    let out = &options.out;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let weights = crate::export::weights_of_net(&trained.net)?;
    let bytes = crate::export::onnx_bytes_with(&weights, PATH_MENU.len(), trained.net.telemetry())?;
    let onnx = out.join("policy.onnx");
    std::fs::write(&onnx, &bytes).with_context(|| format!("cannot write {}", onnx.display()))?;
    let sha = logs::hex_sha256(&bytes);
    let counts = label_counts(&labels);
    let run_names: Vec<String> = options
        .runs
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    let rule = UtilityRule::new(options.margin, neighbours, options.p95_fall_weight);
    let clusters = expert
        .clusters
        .iter()
        .map(|c| pacer::card::ClusterCard {
            center: c.center.clone(),
            action_ms: PATH_MENU[c.output].limit_ms,
            quiet_ms: PATH_MENU[c.output].quiet_ms,
            profile: Some(PATH_MENU[c.output].profile.to_owned()),
            size: c.size as u64,
        })
        .collect();
    let named_counts: BTreeMap<String, usize> = PATH_MENU
        .iter()
        .zip(&counts)
        .map(|(o, n)| (o.name(), *n))
        .collect();
    let extra = serde_json::json!({
        "utility": rule,
        "label_counts": named_counts,
        "runs": run_names,
        "kmeans": { "k": options.k, "features": KMEANS_FEATURES },
        "objective": if options.cross_entropy {
            "cross-entropy of the labels".to_owned()
        } else if options.hyper.label_weight > 0.0 {
            format!(
                "expected regret under the softmax: each output's regret on the call (best utility \
                 minus its own), clipped at {MAX_TRAINING_COST}, plus {} x the label's \
                 cross-entropy",
                options.hyper.label_weight
            )
        } else {
            format!(
                "expected regret under the softmax: each output's regret on the call (best utility \
                 minus its own), clipped at {MAX_TRAINING_COST}"
            )
        },
    });
    let card = crate::card::build_path(
        &trained.net,
        &report,
        &runs.logs,
        clusters,
        calls.len(),
        extra,
        "policy.onnx",
        &sha,
    );
    card.validate()
        .context("the card built does not validate")?;
    let card_path = out.join("policy.json");
    write_json(&card_path, &card)?;

    let labelled: Vec<LabelledCall> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| LabelledCall {
            run: c.run.clone(),
            scenario: c.scenario.clone(),
            seed: c.seed,
            features: c.features.clone(),
            kmeans_features: c.kmeans_features().to_vec(),
            outcomes: c.outcomes.clone(),
            ratios: c.ratios.clone(),
            utilities: c.utilities(),
            label: labels[i],
            kmeans_cluster: expert.assignment[i],
            kmeans_label: expert.output_of(i),
            out_of_fold: out_of_fold[i],
            final_fit: final_fit[i],
            logs: c.logs.clone(),
        })
        .collect();
    write_json(
        &out.join("labels.json"),
        &serde_json::json!({
            "schema": LABELS_SCHEMA,
            "outputs": PATH_MENU.iter().map(|o| o.name()).collect::<Vec<_>>(),
            "features": PATH_FEATURES,
            "kmeans_features": KMEANS_FEATURES,
            "utility": rule,
            "calls": labelled,
        }),
    )?;
    write_json(
        &out.join("training.json"),
        &TrainingFile {
            report: &report,
            logs: &runs.logs,
            actions_ms: PATH_MENU.iter().map(|o| o.limit_ms).collect(),
            quiet_ms: PATH_MENU.iter().map(|o| o.quiet_ms).collect(),
            profiles: PATH_MENU.iter().map(|o| o.profile).collect(),
            wall_s: train_s,
        },
    )?;
    crate::plot::training_curve(&out.join("training-curve.png"), &report)?;
    let summary = Summary {
        schema: SUMMARY_SCHEMA.to_owned(),
        runs: options
            .runs
            .iter()
            .map(|d| d.display().to_string())
            .collect(),
        calls: calls.len(),
        skipped: runs.skipped.clone(),
        ignored_cells: runs.ignored_cells.clone(),
        ignored_files: runs.ignored_files,
        rejected_lines: runs.rejected.len(),
        utility: rule,
        outputs: PATH_MENU.iter().map(|o| o.name()).collect(),
        label_counts: counts,
        kmeans: expert,
        regret,
        cv: CrossValidation {
            fold_accuracy: report.folds.iter().map(|f| f.accuracy).collect(),
            accuracy_mean: report.accuracy_mean,
            accuracy_std: report.accuracy_std,
            confusion: report.confusion.clone(),
        },
        onnx_sha256: sha,
        train_s,
    };
    write_json(&out.join("counterfactual.json"), &summary)?;
    Ok(Finished {
        summary,
        card: card_path,
    })
}

/// The run's result as text: what was read, the label counts, the K-means clusters, the
/// cross-validation and the regret table.
pub fn format_summary(s: &Summary) -> String {
    let mut out = format!("{} complete calls from {} run(s)", s.calls, s.runs.len());
    if !s.skipped.is_empty() {
        out += &format!("; {} incomplete calls skipped", s.skipped.len());
    }
    if !s.ignored_cells.is_empty() {
        let ignored: Vec<String> = s
            .ignored_cells
            .iter()
            .map(|(p, n)| format!("{p} ({n} cells)"))
            .collect();
        out += &format!(
            "; ignored {} policies that are no path arm: {} and {} telemetry files",
            s.ignored_cells.len(),
            ignored.join(", "),
            s.ignored_files
        );
    }
    if s.rejected_lines > 0 {
        out += &format!("; {} telemetry lines rejected", s.rejected_lines);
    }
    let u = &s.utility;
    out += &format!(
        "\n\nutility = {} (relative to {}; w_p95 {}, w_p95_fall {}, w_bitrate {}, bitrate_floor {}, \
         neighbours {})\nlabel: {} (margin {})\n",
        u.formula,
        u.reference,
        u.w_p95,
        u.w_p95_fall,
        u.w_bitrate,
        u.bitrate_floor,
        u.neighbours,
        u.label,
        u.margin
    );
    out += "\nlabels per output:\n";
    for (i, (name, n)) in s.outputs.iter().zip(&s.label_counts).enumerate() {
        out += &format!("  {i} {name:<36} {n:>5}\n");
    }
    out += &format!(
        "\nk-means expert (features: {}):\n  {:>9} {:>9} {:>9} {:>5}  output  mean utility per output\n",
        s.kmeans.features.join("; "),
        "handovers",
        "gap s",
        "excess",
        "size"
    );
    for c in &s.kmeans.clusters {
        let u: Vec<String> = c.mean_utility.iter().map(|u| format!("{u:.2}")).collect();
        out += &format!(
            "  {:>9.2} {:>9.1} {:>9.1} {:>5}  {} {:<28} {}\n",
            c.center.first().copied().unwrap_or(0.0),
            c.center.get(1).copied().unwrap_or(0.0),
            c.center.get(2).copied().unwrap_or(0.0),
            c.size,
            c.output,
            s.outputs.get(c.output).map_or("?", String::as_str),
            u.join(" ")
        );
    }
    let r = &s.cv;
    if r.fold_accuracy.is_empty() {
        out += "\nno cross-validation (--folds below 2, or fewer calls than folds)\n";
    } else {
        out += &format!(
            "\n{}-fold cross-validation accuracy against the labels {:.3} +- {:.3}\n",
            r.fold_accuracy.len(),
            r.accuracy_mean,
            r.accuracy_std
        );
        out += "confusion (rows: label, columns: model), outputs in menu order\n";
        for row in &r.confusion {
            out += &format!(
                "  {}\n",
                row.iter().map(|n| format!("{n:>5}")).collect::<String>()
            );
        }
    }
    out += "\nmean regret (best utility - the chosen output's, freezes a minute), all calls and per scenario:\n";
    out += &format_regret(&s.regret);
    out
}

fn write_json(path: &Path, value: &impl Serialize) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(freezes: f64, frozen: f64, p95: f64, bitrate: f64) -> Outcome {
        Outcome {
            freezes_per_min: freezes,
            frozen_s_per_min: frozen,
            e2e_delay_p95_ms: p95,
            video_bitrate_kbps: bitrate,
        }
    }

    #[test]
    fn the_utility_weighs_a_ten_percent_p95_rise_as_one_freeze_a_minute() {
        let reference = outcome(2.0, 0.5, 200.0, 2000.0);
        assert!((utility(&reference, &reference) + 2.5).abs() < 1e-12);
        let slower = outcome(1.0, 0.5, 220.0, 2000.0);
        assert!((utility(&slower, &reference) - utility(&reference, &reference)).abs() < 1e-9);
        // 90 % of the bitrate: 0.05 under the floor, 20 x 0.05 = one freeze a minute.
        let thinner = outcome(1.0, 0.5, 200.0, 1800.0);
        assert!((utility(&thinner, &reference) + 2.5).abs() < 1e-9);
        // Above the floor costs nothing.
        let slightly = outcome(2.0, 0.5, 200.0, 1950.0);
        assert!((utility(&slightly, &reference) + 2.5).abs() < 1e-12);
    }

    #[test]
    fn a_p95_fall_earns_only_its_weight() {
        // An output at 60 % of the reference's P95 and 0.1 more freezes a minute: worse by
        // default, better once a fall earns 1 per unit of ratio (0.4 against 0.1).
        let mut c = call(0.0, 60.0);
        c.outcomes[1] = outcome(1.1, 0.0, 60.0, 2000.0);
        let u = c.utilities();
        assert!((u[1] - u[0] + 0.1).abs() < 1e-9, "{u:?}");
        assert_eq!(c.label(0.0), 0);
        c.p95_fall_weight = 1.0;
        let u = c.utilities();
        assert!((u[1] - u[0] - 0.3).abs() < 1e-9, "{u:?}");
        assert_eq!(c.label(0.0), 1);
        // A rise earns nothing back, whatever the weight.
        let slower = Ratios {
            p95: 1.2,
            bitrate: 1.0,
        };
        assert_eq!(p95_fall_credit(slower, 1.0), 0.0);
    }

    #[test]
    fn a_zero_reference_reads_as_an_unchanged_ratio() {
        let reference = outcome(0.0, 0.0, 0.0, 0.0);
        assert_eq!(utility(&outcome(1.0, 0.0, 500.0, 10.0), &reference), -1.0);
    }

    /// A call of two outputs whose first measurement is `x` and whose second output's P95 is
    /// `p95` against the reference's 100 ms.
    fn call(x: f32, p95: f64) -> Call {
        let outcomes = vec![
            outcome(1.0, 0.0, 100.0, 2000.0),
            outcome(0.5, 0.0, p95, 2000.0),
        ];
        let mut features = vec![0.0; PATH_FEATURES.len()];
        features[0] = x;
        Call {
            run: "run".to_owned(),
            scenario: "path".to_owned(),
            seed: 1,
            forecast: Vec::new(),
            handovers: vec![0; 120],
            inputs: InputsRecord::default(),
            features,
            ratios: outcomes
                .iter()
                .map(|o| Ratios::of(o, &outcomes[0]))
                .collect(),
            outcomes,
            p95_fall_weight: 0.0,
            logs: Vec::new(),
        }
    }

    #[test]
    fn neighbours_charge_a_p95_hinge_on_the_mean_ratio_not_the_spread() {
        // Two alike calls whose P95 ratios, 0.8 and 1.2, average 1: each call's own hinge costs
        // 2 on one of them; over both, the mean ratio costs nothing. A far call keeps its own.
        let mut calls = vec![call(0.0, 80.0), call(0.01, 120.0), call(100.0, 130.0)];
        assert!((calls[1].utilities()[1] - (-0.5 - 2.0)).abs() < 1e-9);
        smooth_ratios(&mut calls, 1);
        assert!((calls[1].utilities()[1] - (-0.5 - 2.0)).abs() < 1e-9);
        smooth_ratios(&mut calls, 2);
        for c in &calls[..2] {
            assert!((c.ratios[1].p95 - 1.0).abs() < 1e-12, "{:?}", c.ratios);
            assert!((c.utilities()[1] + 0.5).abs() < 1e-9);
            assert_eq!(c.utilities()[0], -1.0);
        }
        // Its nearest is the second call: (1.3 + 1.2) / 2.
        assert!((calls[2].ratios[1].p95 - 1.25).abs() < 1e-12);
        let mut all = calls.clone();
        smooth_ratios(&mut all, 10);
        assert!((all[0].ratios[1].p95 - 1.1).abs() < 1e-12);
        // Two calls that measured exactly alike each keep their own ratios at k = 1.
        let mut twins = vec![call(0.0, 80.0), call(0.0, 120.0)];
        smooth_ratios(&mut twins, 1);
        assert!((twins[0].ratios[1].p95 - 0.8).abs() < 1e-12);
        assert!((twins[1].ratios[1].p95 - 1.2).abs() < 1e-12);
    }

    #[test]
    fn the_label_is_the_lowest_index_within_the_margin() {
        assert_eq!(label(&[-1.0, -0.95, -3.0, -0.5], 0.1), 3);
        assert_eq!(label(&[-1.0, -0.95, -3.0, -0.92], 0.1), 0);
        assert_eq!(label(&[-1.0, -0.95, -3.0, -0.92], 0.0), 3);
        assert_eq!(label(&[], 0.1), 0);
    }
}

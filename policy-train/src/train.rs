//! Imitation of the expert (paper section III-C): the network learns the expert's limit for the
//! interval's *forecast* (the state the policy sees at decision time), with cross-entropy.
//!
//! AdamW (learning rate 1e-3, weight decay 0.01), dropout 0.1, cosine annealing of the learning
//! rate over the epochs, batches of 128, 100 epochs (the paper's hyperparameters, section III-C).
//! 5-fold cross-validation on a seeded shuffle reports the held-out accuracy per fold and a
//! confusion matrix; then the final network is fit on all the data.
//!
//! Identical samples are merged: intervals with the same forecast have the same label (the
//! expert labels a forecast), so each distinct forecast of a training set is fed once per epoch
//! with its cross-entropy weighted by how many intervals share it. The epoch's objective is the
//! same weighted sum as feeding every interval, at a fraction of the compute (the 60-hour
//! training set has 325 distinct forecasts among 1 800 intervals, 885 of them all-zero); a batch
//! holds up to `batch` distinct forecasts. Everything is seeded (`tch`'s
//! generator, the shuffles) and runs on the CPU; with the same thread count the same logs give the
//! same weights.

use crate::expert::Expert;
use crate::model::{PolicyNet, parameter_count};
use pacer::forecast::HORIZON_STEPS;
use pacer::policy::{CallFeedback, FEEDBACK_WIDTH};
use pacer::telemetry::IntervalRecord;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor, nn, nn::OptimizerConfig};

/// Training hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Hyper {
    /// Epochs per fit.
    pub epochs: usize,
    /// Batch size.
    pub batch: usize,
    /// Peak learning rate.
    pub learning_rate: f64,
    /// AdamW weight decay.
    pub weight_decay: f64,
    /// Dropout.
    pub dropout: f64,
    /// Cross-validation folds (0 or 1: none).
    pub folds: usize,
    /// Seed.
    pub seed: u64,
    /// Where samples carry costs ([`Dataset::costs`]): the weight of the label's cross-entropy
    /// added to each sample's expected cost. The expected cost alone gives an output's logit a
    /// gradient of its probability times its cost gap, so an output the softmax has all but
    /// excluded early stays excluded where it is only a little better; the cross-entropy's pull
    /// toward the label does not fade that way (docs/experiments/path-card-neighbours-2026-12-05.md,
    /// section 3). 0: the expected cost alone. Records without it read as 0.
    #[serde(default)]
    pub label_weight: f64,
}

impl Default for Hyper {
    fn default() -> Self {
        Self {
            epochs: 100,
            batch: 128,
            learning_rate: 1e-3,
            weight_decay: 0.01,
            dropout: 0.1,
            folds: 5,
            seed: 1,
            label_weight: 0.0,
        }
    }
}

/// The training set: forecasts and the expert's labels.
#[derive(Debug)]
pub struct Dataset {
    /// `[N, 120, 2]` float; `[N, 120, 2 + F]` for a joint expert, the call's measurements
    /// repeated at every step.
    pub inputs: Tensor,
    /// `F`: measurement values per step (0 for a queue-limit expert).
    pub telemetry: usize,
    /// `[N]` int64 action indices.
    pub labels: Tensor,
    /// Labels as plain numbers.
    pub label_list: Vec<i64>,
    /// For each sample, an id shared by every sample with the same input and label.
    pub pattern: Vec<usize>,
    /// `[N, K]` float: each output's cost on each sample, when every sample has them. The fit
    /// then minimises the expected cost under the network's softmax (cost-sensitive
    /// classification, Elkan, "The Foundations of Cost-Sensitive Learning", IJCAI 2001)
    /// instead of the labels' cross-entropy: one call's label is a noisy argmax of eight
    /// outcomes, while its costs say how much each wrong choice loses.
    pub costs: Option<Tensor>,
}

/// One explicit training sample ([`Dataset::from_samples`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The `[120, 2]` forecast, row-major (240 values).
    pub forecast: Vec<f32>,
    /// The measurement values, `F` of them (the card's telemetry features).
    pub features: Vec<f32>,
    /// The output index it is labelled with.
    pub label: usize,
    /// What each output would have cost on this sample (its regret: the best output's utility
    /// minus this one's), when known: counterfactual samples know every output's outcome, and
    /// a network trained to minimise the expected cost learns from all of them, not only from
    /// the winner ([`Dataset::costs`]).
    pub costs: Option<Vec<f32>>,
}

/// Why explicit samples make no dataset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DatasetError {
    /// A sample has the wrong shape or a non-finite value.
    #[error("training sample {index} has {problem}")]
    Sample {
        /// Its index.
        index: usize,
        /// What is wrong.
        problem: String,
    },
}

/// The distinct patterns among `index`: one representative sample each, with its count.
fn distinct(data: &Dataset, index: &[i64]) -> (Vec<i64>, Vec<f32>) {
    let mut first: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    let mut reps: Vec<i64> = Vec::new();
    let mut counts: Vec<f32> = Vec::new();
    for &i in index {
        let p = data.pattern[i as usize];
        match first.get(&p) {
            Some(&k) => counts[k] += 1.0,
            None => {
                first.insert(p, reps.len());
                reps.push(i);
                counts.push(1.0);
            }
        }
    }
    (reps, counts)
}

impl Dataset {
    /// One sample per record: its forecast tensor, labelled with the expert's action for it.
    pub fn new(records: &[IntervalRecord], expert: &Expert) -> Self {
        let joint = expert.is_joint();
        let telemetry = if joint { FEEDBACK_WIDTH } else { 0 };
        let mut flat = Vec::with_capacity(records.len() * (2 + telemetry) * HORIZON_STEPS);
        let mut labels = Vec::with_capacity(records.len());
        let mut ids: std::collections::HashMap<(Vec<u8>, Vec<u32>, i64), usize> =
            std::collections::HashMap::new();
        let mut pattern = Vec::with_capacity(records.len());
        for r in records {
            let forecast = r.forecast.to_tensor();
            let bits = r.forecast.handover.bits();
            let (label, features) = if joint {
                let feedback = CallFeedback::from(r.inputs.unwrap_or_default());
                let label = expert.label_for(&bits, crate::expert::excess_feature(r));
                (label, feedback.features().to_vec())
            } else {
                (expert.label_for(&bits, 0.0), Vec::new())
            };
            flat.extend(joint_input(&forecast, &features));
            let label = label as i64;
            labels.push(label);
            let next = ids.len();
            let key = (
                bits.to_vec(),
                features.iter().map(|f| f.to_bits()).collect(),
                label,
            );
            pattern.push(*ids.entry(key).or_insert(next));
        }
        let n = records.len() as i64;
        Self {
            inputs: Tensor::from_slice(&flat).view([n, HORIZON_STEPS as i64, 2 + telemetry as i64]),
            telemetry,
            labels: Tensor::from_slice(&labels),
            label_list: labels,
            pattern,
            costs: None,
        }
    }

    /// One sample per call of `samples`, given explicitly: its forecast and measurements, and
    /// its label (the path-aware trainer's counterfactual labels, [`crate::counterfactual`]).
    /// Every sample must carry a `[120, 2]` forecast and the same number of measurement values;
    /// the first that does not is the error.
    pub fn from_samples(samples: &[Sample]) -> Result<Self, DatasetError> {
        let telemetry = samples.first().map_or(0, |s| s.features.len());
        let mut flat = Vec::with_capacity(samples.len() * (2 + telemetry) * HORIZON_STEPS);
        let mut labels = Vec::with_capacity(samples.len());
        let mut ids: std::collections::HashMap<(Vec<u32>, Vec<u32>, i64), usize> =
            std::collections::HashMap::new();
        let mut pattern = Vec::with_capacity(samples.len());
        for (index, s) in samples.iter().enumerate() {
            let problem = if s.forecast.len() != 2 * HORIZON_STEPS {
                Some(format!(
                    "a forecast of {} values, expected {}",
                    s.forecast.len(),
                    2 * HORIZON_STEPS
                ))
            } else if s.features.len() != telemetry {
                Some(format!(
                    "{} measurement values where the first sample has {telemetry}",
                    s.features.len()
                ))
            } else if s.forecast.iter().chain(&s.features).any(|v| !v.is_finite()) {
                Some("a value that is not finite".to_owned())
            } else if s.costs.is_some() != samples[0].costs.is_some() {
                Some("costs where the first sample has none, or none where it has".to_owned())
            } else if let Some(costs) = &s.costs
                && (costs.len() != samples[0].costs.as_ref().map_or(0, Vec::len)
                    || costs.iter().any(|c| !c.is_finite()))
            {
                Some(format!(
                    "costs {costs:?}: not one finite value per output of the first sample"
                ))
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(DatasetError::Sample { index, problem });
            }
            flat.extend(joint_input(&s.forecast, &s.features));
            let label = s.label as i64;
            labels.push(label);
            let next = ids.len();
            let key = (
                s.forecast.iter().map(|f| f.to_bits()).collect(),
                s.features
                    .iter()
                    .chain(s.costs.iter().flatten())
                    .map(|f| f.to_bits())
                    .collect(),
                label,
            );
            pattern.push(*ids.entry(key).or_insert(next));
        }
        let n = samples.len() as i64;
        let costs = samples.first().and_then(|s| s.costs.as_ref()).map(|first| {
            let flat: Vec<f32> = samples
                .iter()
                .flat_map(|s| s.costs.iter().flatten())
                .copied()
                .collect();
            Tensor::from_slice(&flat).view([n, first.len() as i64])
        });
        Ok(Self {
            inputs: Tensor::from_slice(&flat).view([n, HORIZON_STEPS as i64, 2 + telemetry as i64]),
            telemetry,
            labels: Tensor::from_slice(&labels),
            label_list: labels,
            pattern,
            costs,
        })
    }

    /// Samples.
    pub fn len(&self) -> usize {
        self.label_list.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.label_list.is_empty()
    }
}

/// One epoch of a fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Epoch {
    /// Mean training loss.
    pub loss: f64,
    /// Training accuracy over the epoch's batches (in training mode, as the weights moved:
    /// measured for free from the logits the loss already needed).
    pub train_accuracy: f64,
    /// Held-out accuracy, when there is a held-out set.
    pub validation_accuracy: Option<f64>,
}

/// One cross-validation fold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fold {
    /// Held-out accuracy after the last epoch.
    pub accuracy: f64,
    /// Held-out samples.
    pub size: usize,
    /// Per epoch.
    pub curve: Vec<Epoch>,
}

/// What training produced, besides the network.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainReport {
    /// The hyperparameters.
    pub hyper: Hyper,
    /// Samples.
    pub samples: usize,
    /// Samples per action index.
    pub class_counts: Vec<usize>,
    /// Trainable parameters.
    pub parameters: i64,
    /// The folds.
    pub folds: Vec<Fold>,
    /// Mean held-out accuracy.
    pub accuracy_mean: f64,
    /// Standard deviation of the fold accuracies.
    pub accuracy_std: f64,
    /// Confusion matrix over all held-out samples: `[true][predicted]`.
    pub confusion: Vec<Vec<u64>>,
    /// The final fit, per epoch.
    pub final_curve: Vec<Epoch>,
}

/// A trained network and the store that owns its weights.
pub struct Trained {
    /// The variables.
    pub vs: nn::VarStore,
    /// The network.
    pub net: PolicyNet,
}

/// Accuracy of `net` on the samples at `index`, and its predictions.
pub fn evaluate(net: &PolicyNet, data: &Dataset, index: &[i64]) -> (f64, Vec<i64>) {
    if index.is_empty() {
        return (0.0, Vec::new());
    }
    let (reps, _) = distinct(data, index);
    let idx = Tensor::from_slice(&reps);
    let by_pattern: std::collections::HashMap<usize, i64> = tch::no_grad(|| {
        let logits = net.forward(&data.inputs.index_select(0, &idx), false);
        let predicted = Vec::<i64>::try_from(logits.argmax(-1, false)).unwrap_or_default();
        reps.iter()
            .zip(predicted)
            .map(|(&i, p)| (data.pattern[i as usize], p))
            .collect()
    });
    let predictions: Vec<i64> = index
        .iter()
        .map(|&i| {
            by_pattern
                .get(&data.pattern[i as usize])
                .copied()
                .unwrap_or(-1)
        })
        .collect();
    let correct = predictions
        .iter()
        .zip(index)
        .filter(|(p, i)| **p == data.label_list[**i as usize])
        .count();
    (correct as f64 / index.len() as f64, predictions)
}

/// Fits a fresh network on `train`, reporting each epoch (held-out accuracy on `validation`
/// when given) through `on_epoch`.
pub fn fit(
    data: &Dataset,
    actions: usize,
    train: &[i64],
    validation: &[i64],
    hyper: &Hyper,
    seed: u64,
    mut on_epoch: impl FnMut(usize, &Epoch),
) -> Result<(Trained, Vec<Epoch>), tch::TchError> {
    tch::manual_seed(seed as i64);
    let vs = nn::VarStore::new(Device::Cpu);
    let net = PolicyNet::with_telemetry(&vs.root(), actions, hyper.dropout, data.telemetry);
    let mut opt = nn::AdamW {
        wd: hyper.weight_decay,
        ..Default::default()
    }
    .build(&vs, hyper.learning_rate)?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut order, counts) = distinct(data, train);
    let weight_of: std::collections::HashMap<i64, f32> =
        order.iter().copied().zip(counts.iter().copied()).collect();
    let total_weight: f32 = counts.iter().sum();
    let mut curve = Vec::with_capacity(hyper.epochs);
    for epoch in 0..hyper.epochs {
        let progress = epoch as f64 / hyper.epochs.max(1) as f64;
        opt.set_lr(0.5 * hyper.learning_rate * (1.0 + (std::f64::consts::PI * progress).cos()));
        order.shuffle(&mut rng);
        let mut loss_sum = 0.0;
        let mut batches = 0;
        let mut correct = 0f64;
        for chunk in order.chunks(hyper.batch.max(1)) {
            let idx = Tensor::from_slice(chunk);
            let x = data.inputs.index_select(0, &idx);
            let y = data.labels.index_select(0, &idx);
            let w: Vec<f32> = chunk.iter().map(|i| weight_of[i]).collect();
            let w = Tensor::from_slice(&w);
            let logits = net.forward(&x, true);
            correct += (logits.argmax(-1, false).eq_tensor(&y).to_kind(Kind::Float) * &w)
                .sum(Kind::Float)
                .double_value(&[]);
            let cross_entropy = || {
                logits
                    .log_softmax(-1, Kind::Float)
                    .neg()
                    .gather(1, &y.unsqueeze(1), false)
                    .squeeze_dim(1)
            };
            let per_sample = match &data.costs {
                Some(costs) => {
                    let expected = (logits.softmax(-1, Kind::Float) * costs.index_select(0, &idx))
                        .sum_dim_intlist(-1, false, Kind::Float);
                    if hyper.label_weight > 0.0 {
                        expected + cross_entropy() * hyper.label_weight
                    } else {
                        expected
                    }
                }
                None => cross_entropy(),
            };
            let loss = (per_sample * &w).sum(Kind::Float) / w.sum(Kind::Float);
            opt.backward_step(&loss);
            loss_sum += loss.double_value(&[]);
            batches += 1;
        }
        let train_accuracy = correct / f64::from(total_weight.max(1.0));
        let validation_accuracy =
            (!validation.is_empty()).then(|| evaluate(&net, data, validation).0);
        let e = Epoch {
            loss: loss_sum / f64::from(batches.max(1)),
            train_accuracy,
            validation_accuracy,
        };
        on_epoch(epoch, &e);
        curve.push(e);
    }
    Ok((Trained { vs, net }, curve))
}

/// Cross-validates, then fits on everything. `on_epoch(done, total)` reports progress.
pub fn train(
    data: &Dataset,
    actions: usize,
    hyper: &Hyper,
    on_epoch: impl FnMut(usize, usize),
) -> Result<(Trained, TrainReport), tch::TchError> {
    train_out_of_fold(data, actions, hyper, on_epoch).map(|(trained, report, _)| (trained, report))
}

/// [`train`], also answering each sample's out-of-fold prediction: the output the fold that
/// held it out predicts for it (`None` for every sample without cross-validation). The folds,
/// seeds and fits are [`train`]'s, so the network and report are the same.
pub fn train_out_of_fold(
    data: &Dataset,
    actions: usize,
    hyper: &Hyper,
    mut on_epoch: impl FnMut(usize, usize),
) -> Result<(Trained, TrainReport, Vec<Option<usize>>), tch::TchError> {
    let n = data.len();
    let mut out_of_fold = vec![None; n];
    let folds = if hyper.folds >= 2 && n >= hyper.folds {
        hyper.folds
    } else {
        0
    };
    let total = (folds + 1) * hyper.epochs;
    let mut done = 0;
    let mut all: Vec<i64> = (0..n as i64).collect();
    all.shuffle(&mut ChaCha8Rng::seed_from_u64(hyper.seed ^ 0xF01D));
    let mut fold_results = Vec::new();
    let mut confusion = vec![vec![0u64; actions]; actions];
    for f in 0..folds {
        let validation: Vec<i64> = all.iter().copied().skip(f).step_by(folds).collect();
        let train_idx: Vec<i64> = all
            .iter()
            .enumerate()
            .filter(|(i, _)| i % folds != f)
            .map(|(_, &v)| v)
            .collect();
        let (trained, curve) = fit(
            data,
            actions,
            &train_idx,
            &validation,
            hyper,
            hyper.seed.wrapping_add(f as u64 + 1),
            |_, _| {
                done += 1;
                on_epoch(done, total);
            },
        )?;
        let (accuracy, predictions) = evaluate(&trained.net, data, &validation);
        for (p, i) in predictions.iter().zip(&validation) {
            if let (Some(slot), Ok(p)) = (out_of_fold.get_mut(*i as usize), usize::try_from(*p)) {
                *slot = Some(p);
            }
            let t = data.label_list[*i as usize] as usize;
            if let Some(cell) = confusion
                .get_mut(t)
                .and_then(|row| row.get_mut(*p as usize))
            {
                *cell += 1;
            }
        }
        fold_results.push(Fold {
            accuracy,
            size: validation.len(),
            curve,
        });
    }
    let (trained, final_curve) = fit(data, actions, &all, &[], hyper, hyper.seed, |_, _| {
        done += 1;
        on_epoch(done, total);
    })?;
    let accs: Vec<f64> = fold_results.iter().map(|f| f.accuracy).collect();
    let mean = if accs.is_empty() {
        0.0
    } else {
        accs.iter().sum::<f64>() / accs.len() as f64
    };
    let std = if accs.len() < 2 {
        0.0
    } else {
        (accs.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / (accs.len() - 1) as f64).sqrt()
    };
    let mut class_counts = vec![0usize; actions];
    for &l in &data.label_list {
        if let Some(c) = class_counts.get_mut(l as usize) {
            *c += 1;
        }
    }
    let report = TrainReport {
        hyper: *hyper,
        samples: n,
        class_counts,
        parameters: parameter_count(&trained.vs),
        folds: fold_results,
        accuracy_mean: mean,
        accuracy_std: std,
        confusion,
        final_curve,
    };
    Ok((trained, report, out_of_fold))
}

/// One step-major network input: each of the 120 forecast steps (`forecast`, `[120, 2]`
/// row-major) followed by the measurement values `telemetry` (none for a queue-limit network).
pub fn joint_input(forecast: &[f32], telemetry: &[f32]) -> Vec<f32> {
    forecast
        .chunks(2)
        .flat_map(|step| step.iter().chain(telemetry).copied())
        .collect()
}

/// The logits of `net` for one `[1, 120, 2]` input given row-major; a joint network reads the
/// all-zero measurements beside it.
pub fn logits_of(net: &PolicyNet, input: &[f32]) -> Vec<f32> {
    logits_with(net, input, &vec![0.0; net.telemetry()])
}

/// The logits of `net` for one `[1, 120, 2]` forecast and its `[1, F]` measurements.
pub fn logits_with(net: &PolicyNet, input: &[f32], telemetry: &[f32]) -> Vec<f32> {
    let input = joint_input(input, telemetry);
    let width = 2 + net.telemetry() as i64;
    tch::no_grad(|| {
        let x = Tensor::from_slice(&input).view([1, HORIZON_STEPS as i64, width]);
        let out = net.forward(&x, false).to_kind(Kind::Float).view([-1]);
        Vec::<f32>::try_from(out).unwrap_or_default()
    })
}

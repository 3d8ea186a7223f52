//! The expert policy (paper section III-A): cluster intervals by their handover pattern, then
//! give each cluster the queue time limit whose intervals scored the best reward.
//!
//! - **Features** of a 120-s window of handover bits: the handover count, and the mean time
//!   between consecutive handovers in seconds (`(last - first) / (count - 1)`; the whole 120-s
//!   horizon when there are fewer than two). Count says how many, the gap how densely they come:
//!   eight handovers 15 s apart (Starlink's slots) and eight in a burst are different paths.
//!   Both are standardised (z-scores over the training set) before clustering, since they live on
//!   different scales.
//! - **Clustering**: K-means (`linfa-clustering`, 10 seeded runs) on the *observed* handovers of
//!   each interval, for every k from 2 to 8 with its inertia and silhouette, so the choice of k is
//!   visible; the chosen k (5 by default, as the paper found) builds the expert.
//! - **Reward** (paper section III-B): `r = 2 X - F`, `X` the interval's video bitrate over the
//!   largest in the training set, `F` its freezes per minute over the largest (0 when no interval
//!   froze).
//! - **Labels**: each cluster gets one of the collection limits tried at least
//!   [`MIN_SAMPLES_PER_ACTION`] times in it (the limit tried most, if none was), by a
//!   [`LabelRule`]: the best mean reward (the paper's rule, section III-B), or, by default, the
//!   smallest limit whose mean reward is within one standard error of the best. The deployed
//!   action set is the distinct labels, ascending.
//!
//! **Joint experts** (logs collected with `rtc-client collect --explore-actions`, whose records
//! carry a `profile`): the action is the pair (limit, action profile), and the features gain a
//! third, the hold gate's boundary excess loss the call had measured at the decision (the
//! record's `inputs.boundary_excess_loss_pct`, 0 before it was measured), which tells a path
//! whose boundaries lose packets from one where they only add delay (docs/experiments/
//! timed-2026-12-02.md: a hold cuts freezes on the first and makes them on the second). The
//! one-standard-error rule then takes, among the pairs within one standard error of the best,
//! the smallest limit, then the least intrusive profile in menu order
//! ([`pacer::actions::PROFILE_NAMES`]). The deployed actions are the distinct pairs.
//!
//! Why the default differs from the paper: a limit only changes an interval when the pacer's
//! queue reaches it, so within a cluster most limits produce the same calls and their mean rewards
//! differ by sampling noise (on the 60-hour training set, the zero-handover cluster's fifteen
//! means span 1.18 to 1.41 with standard errors of 0.07 to 0.09 each). The best mean then picks a
//! limit at random among equals. The paper states the objective for such periods: "minimize
//! latency during stable periods" (section I); among limits whose reward is statistically tied,
//! the smallest bounds latency best. The tie test is the one-standard-error rule of Breiman,
//! Friedman, Olshen and Stone (*Classification and Regression Trees*, 1984): the
//! simplest candidate within one standard error of the best.

use linfa::DatasetBase;
use linfa::prelude::*;
use linfa_clustering::KMeans;
use ndarray::Array2;
use pacer::forecast::HORIZON_STEPS;
use pacer::telemetry::IntervalRecord;
use rand_xoshiro::Xoshiro256Plus;
use rand_xoshiro::rand_core::SeedableRng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A limit needs this many intervals in a cluster before its mean reward can label the cluster.
///
/// Chosen: 3, the least for a mean that one outlier does not decide alone.
pub const MIN_SAMPLES_PER_ACTION: usize = 3;
/// The ks whose inertia and silhouette are reported.
pub const K_RANGE: std::ops::RangeInclusive<usize> = 2..=8;
/// K-means restarts per k (the best inertia wins).
const KMEANS_RUNS: usize = 10;

/// The joint expert's third clustering feature: the boundary excess loss the call had measured
/// when the interval's decision was made, percentage points (0 before it was measured).
pub fn excess_feature(record: &IntervalRecord) -> f64 {
    record
        .inputs
        .and_then(|i| i.boundary_excess_loss_pct)
        .unwrap_or(0.0)
}

/// The joint action key of a record's profile: its place in the menu (0 when absent).
fn profile_index(profile: Option<&str>) -> usize {
    profile
        .and_then(|p| pacer::ActionProfile::named(p).ok())
        .map_or(0, |p| p.index())
}

/// The two clustering features of a window of handover bits: count, and mean gap in seconds.
pub fn features(bits: &[u8]) -> [f64; 2] {
    let at: Vec<usize> = bits
        .iter()
        .take(HORIZON_STEPS)
        .enumerate()
        .filter(|(_, b)| **b != 0)
        .map(|(k, _)| k + 1)
        .collect();
    let count = at.len() as f64;
    let gap = match (at.first(), at.last()) {
        (Some(first), Some(last)) if at.len() >= 2 => (last - first) as f64 / (count - 1.0),
        _ => HORIZON_STEPS as f64,
    };
    [count, gap]
}

/// The mean reward of one limit within one cluster.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RewardStat {
    /// Mean `2X - F`.
    pub mean: f64,
    /// Intervals.
    pub n: usize,
    /// Standard error of the mean: the sample standard deviation over the square root of `n`
    /// (0 with fewer than two intervals, and in expert files written before it was recorded).
    #[serde(default)]
    pub se: f64,
}

/// How a cluster's limit is chosen from its rewards (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum LabelRule {
    /// The limit with the best mean reward (the paper's rule).
    BestMean,
    /// The smallest limit whose mean reward is at least the best mean minus the best limit's
    /// standard error (the one-standard-error rule).
    #[default]
    OneSe,
}

impl LabelRule {
    /// The rule expert files written before the rule was recorded used.
    fn legacy() -> Self {
        Self::BestMean
    }
}

/// One cluster of the expert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpertCluster {
    /// Centre: `[handover count, mean gap s]`, and for a joint expert the boundary excess loss.
    pub center: Vec<f64>,
    /// Training intervals in it.
    pub size: usize,
    /// The limit it gets, ms.
    pub action_ms: u64,
    /// The action profile it gets (joint experts only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Mean reward per limit tried in it (key: limit in ms), over every profile.
    pub rewards: BTreeMap<u64, RewardStat>,
    /// A joint expert's mean reward per (limit, profile) pair tried in it, ordered by limit then
    /// menu order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joint_rewards: Vec<JointReward>,
}

/// The mean reward of one (limit, profile) pair within one cluster of a joint expert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JointReward {
    /// The limit, ms.
    pub limit_ms: u64,
    /// The profile's menu name.
    pub profile: String,
    /// Its reward statistics.
    #[serde(flatten)]
    pub stat: RewardStat,
}

/// One output of a joint expert: a (limit, profile) pair.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct JointAction {
    /// The limit, ms.
    pub limit_ms: u64,
    /// The profile's menu name.
    pub profile: String,
}

/// Inertia and silhouette of one k.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KChoice {
    /// Clusters.
    pub k: usize,
    /// Sum of squared distances to the nearest centre (standardised features).
    pub inertia: f64,
    /// Mean silhouette, -1 to 1 (higher: better separated).
    pub silhouette: f64,
}

/// The expert (see the module documentation); written as `expert.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Expert {
    /// Schema tag.
    pub schema: String,
    /// The features, in order.
    pub features: Vec<String>,
    /// Feature means used to standardise.
    pub feature_mean: Vec<f64>,
    /// Feature standard deviations used to standardise (1 where a feature is constant).
    pub feature_std: Vec<f64>,
    /// The largest interval bitrate in the training set, kbit/s (`X`'s divisor).
    pub max_bitrate_kbps: f64,
    /// The largest freezes per minute in the training set (`F`'s divisor).
    pub max_freezes_per_min: f64,
    /// The clusters.
    pub clusters: Vec<ExpertCluster>,
    /// The deployed limits, ms, ascending; for a joint expert, the limit of each deployed pair.
    pub actions_ms: Vec<u64>,
    /// A joint expert's deployed (limit, profile) pairs, by limit then menu order; empty for a
    /// queue-limit expert.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joint_actions: Vec<JointAction>,
    /// Inertia and silhouette for each k tried.
    pub k_choice: Vec<KChoice>,
    /// How the clusters' limits were chosen.
    #[serde(default = "LabelRule::legacy")]
    pub label_rule: LabelRule,
    /// Intervals clustered.
    pub intervals: usize,
}

/// The expert's schema tag.
pub const EXPERT_SCHEMA: &str = "leopace.expert.v1";

/// Why no expert could be built.
#[derive(Debug, thiserror::Error)]
pub enum ExpertError {
    /// Fewer intervals than clusters.
    #[error("{intervals} usable intervals cannot make {k} clusters")]
    TooFew {
        /// Usable intervals.
        intervals: usize,
        /// Clusters asked for.
        k: usize,
    },
    /// K-means failed.
    #[error("k-means with k = {k} failed: {message}")]
    KMeans {
        /// Clusters.
        k: usize,
        /// linfa's message.
        message: String,
    },
}

/// The reward of one interval given the training set's maxima.
pub fn reward(record: &IntervalRecord, max_bitrate_kbps: f64, max_freezes_per_min: f64) -> f64 {
    let x = if max_bitrate_kbps > 0.0 {
        record.qoe.video_bitrate_kbps / max_bitrate_kbps
    } else {
        0.0
    };
    let f = if max_freezes_per_min > 0.0 {
        record.qoe.freezes_per_min / max_freezes_per_min
    } else {
        0.0
    };
    2.0 * x - f
}

impl Expert {
    /// Builds the expert with `k` clusters from `records` (all of them are used), seeded, each
    /// cluster labelled by `rule`.
    pub fn build(
        records: &[IntervalRecord],
        k: usize,
        seed: u64,
        rule: LabelRule,
    ) -> Result<Self, ExpertError> {
        if records.len() < k.max(*K_RANGE.end()) {
            return Err(ExpertError::TooFew {
                intervals: records.len(),
                k: k.max(*K_RANGE.end()),
            });
        }
        let joint = records.iter().any(|r| r.profile.is_some());
        let raw: Vec<Vec<f64>> = records
            .iter()
            .map(|r| {
                let mut f = features(&r.observed.handover.bits()).to_vec();
                if joint {
                    f.push(excess_feature(r));
                }
                f
            })
            .collect();
        let d = if joint { 3 } else { 2 };
        let (mean, std) = standardisation(&raw, d);
        let z = Array2::from_shape_fn((raw.len(), d), |(i, j)| (raw[i][j] - mean[j]) / std[j]);

        let mut k_choice = Vec::new();
        let mut chosen = None;
        for kk in K_RANGE.clone().chain((!K_RANGE.contains(&k)).then_some(k)) {
            let (centres, labels, inertia) = kmeans(&z, kk, seed)?;
            k_choice.push(KChoice {
                k: kk,
                inertia,
                silhouette: silhouette(&z, &labels, kk),
            });
            if kk == k {
                chosen = Some((centres, labels));
            }
        }
        let (centres, labels) = chosen.ok_or(ExpertError::TooFew {
            intervals: records.len(),
            k,
        })?;

        let max_bitrate_kbps = records
            .iter()
            .map(|r| r.qoe.video_bitrate_kbps)
            .fold(0.0, f64::max);
        let max_freezes_per_min = records
            .iter()
            .map(|r| r.qoe.freezes_per_min)
            .fold(0.0, f64::max);
        let mut clusters = Vec::with_capacity(k);
        for c in 0..k {
            let mut by_action: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
            let mut by_pair: BTreeMap<(u64, usize), Vec<f64>> = BTreeMap::new();
            let mut size = 0;
            for (record, &label) in records.iter().zip(&labels) {
                if label != c {
                    continue;
                }
                size += 1;
                let r = reward(record, max_bitrate_kbps, max_freezes_per_min);
                by_action.entry(record.action_ms).or_default().push(r);
                if joint {
                    let profile = profile_index(record.profile.as_deref());
                    by_pair
                        .entry((record.action_ms, profile))
                        .or_default()
                        .push(r);
                }
            }
            let rewards: BTreeMap<u64, RewardStat> = by_action
                .into_iter()
                .map(|(a, r)| (a, RewardStat::of(&r)))
                .collect();
            let pairs: BTreeMap<(u64, usize), RewardStat> = by_pair
                .into_iter()
                .map(|(a, r)| (a, RewardStat::of(&r)))
                .collect();
            let (action_ms, profile) = if joint {
                let (limit, profile) =
                    label_of(&pairs, rule, (pacer::policy::COLLECTION_ACTIONS_MS[11], 0));
                (
                    limit,
                    Some(pacer::actions::PROFILE_NAMES[profile].to_owned()),
                )
            } else {
                (
                    label_of(&rewards, rule, pacer::policy::COLLECTION_ACTIONS_MS[11]),
                    None,
                )
            };
            let centre = (0..d).map(|j| centres[[c, j]] * std[j] + mean[j]).collect();
            clusters.push(ExpertCluster {
                center: centre,
                size,
                action_ms,
                profile,
                rewards,
                joint_rewards: pairs
                    .into_iter()
                    .map(|((limit_ms, p), stat)| JointReward {
                        limit_ms,
                        profile: pacer::actions::PROFILE_NAMES[p].to_owned(),
                        stat,
                    })
                    .collect(),
            });
        }
        // A stable order: by handover count, then gap.
        clusters.sort_by(|a, b| {
            a.center[0]
                .total_cmp(&b.center[0])
                .then(a.center[1].total_cmp(&b.center[1]))
        });
        let mut actions_ms: Vec<u64> = clusters.iter().map(|c| c.action_ms).collect();
        actions_ms.sort_unstable();
        actions_ms.dedup();
        let mut joint_actions: Vec<(u64, usize)> = clusters
            .iter()
            .filter_map(|c| {
                c.profile
                    .as_deref()
                    .map(|p| (c.action_ms, profile_index(Some(p))))
            })
            .collect();
        joint_actions.sort_unstable();
        joint_actions.dedup();
        if joint {
            actions_ms = joint_actions.iter().map(|(l, _)| *l).collect();
        }
        let mut feature_names = vec![
            "handover count".to_owned(),
            "mean inter-handover time (s)".to_owned(),
        ];
        if joint {
            feature_names.push("boundary excess loss at the decision (points)".to_owned());
        }
        Ok(Self {
            schema: EXPERT_SCHEMA.to_owned(),
            features: feature_names,
            feature_mean: mean,
            feature_std: std,
            max_bitrate_kbps,
            max_freezes_per_min,
            clusters,
            actions_ms,
            joint_actions: joint_actions
                .into_iter()
                .map(|(limit_ms, p)| JointAction {
                    limit_ms,
                    profile: pacer::actions::PROFILE_NAMES[p].to_owned(),
                })
                .collect(),
            k_choice,
            label_rule: rule,
            intervals: records.len(),
        })
    }

    /// Whether the expert labels (limit, profile) pairs.
    pub fn is_joint(&self) -> bool {
        !self.joint_actions.is_empty()
    }

    /// The cluster whose centre is nearest to the features of `bits` (standardised distance);
    /// a joint expert also reads `excess` (the boundary excess loss at the decision, points).
    pub fn cluster_of(&self, bits: &[u8], excess: f64) -> usize {
        let mut f = features(bits).to_vec();
        f.push(excess);
        let d = self.feature_mean.len().min(f.len());
        let z = |v: &[f64], j: usize| (v[j] - self.feature_mean[j]) / self.feature_std[j];
        self.clusters
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let distance: f64 = (0..d.min(c.center.len()))
                    .map(|j| (z(&f, j) - z(&c.center, j)).powi(2))
                    .sum();
                (i, distance)
            })
            .fold(
                (0, f64::INFINITY),
                |best, (i, d)| if d < best.1 { (i, d) } else { best },
            )
            .0
    }

    /// The expert's limit for a window of handover bits.
    pub fn action_for(&self, bits: &[u8]) -> u64 {
        self.clusters[self.cluster_of(bits, 0.0)].action_ms
    }

    /// The index of the expert's action for `bits` (and, for a joint expert, the boundary excess
    /// loss `excess`) in the deployed action set.
    pub fn label_for(&self, bits: &[u8], excess: f64) -> usize {
        let cluster = &self.clusters[self.cluster_of(bits, excess)];
        if self.is_joint() {
            return self
                .joint_actions
                .iter()
                .position(|a| {
                    a.limit_ms == cluster.action_ms
                        && Some(a.profile.as_str()) == cluster.profile.as_deref()
                })
                .unwrap_or(0);
        }
        self.actions_ms
            .iter()
            .position(|&a| a == cluster.action_ms)
            .unwrap_or(0)
    }
}

impl RewardStat {
    /// The mean, count and standard error of `rewards`.
    pub fn of(rewards: &[f64]) -> Self {
        let n = rewards.len();
        let mean = rewards.iter().sum::<f64>() / n.max(1) as f64;
        let se = if n >= 2 {
            let var = rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            (var / n as f64).sqrt()
        } else {
            0.0
        };
        Self { mean, n, se }
    }
}

/// The label of a cluster among `rewards`, whose keys are ordered from the most to the least
/// preferred among ties (smallest limit first; for pairs, then the least intrusive profile);
/// `fallback` when nothing was tried.
fn label_of<K: Copy + Ord>(rewards: &BTreeMap<K, RewardStat>, rule: LabelRule, fallback: K) -> K {
    let eligible = || {
        rewards
            .iter()
            .filter(|(_, s)| s.n >= MIN_SAMPLES_PER_ACTION)
    };
    let best = eligible().fold(None::<(K, RewardStat)>, |best, (&a, s)| match best {
        Some((_, b)) if b.mean >= s.mean => best,
        _ => Some((a, *s)),
    });
    match best {
        Some((a, b)) => match rule {
            LabelRule::BestMean => a,
            LabelRule::OneSe => eligible()
                .find(|(_, s)| s.mean >= b.mean - b.se)
                .map_or(a, |(&smallest, _)| smallest),
        },
        None => rewards
            .iter()
            .fold(None::<(K, usize)>, |best, (&a, s)| match best {
                Some((_, n)) if n >= s.n => best,
                _ => Some((a, s.n)),
            })
            .map_or(fallback, |(a, _)| a),
    }
}

/// The mean and standard deviation of each of the `d` features of `raw` (1 where a feature is
/// constant), for z-scores.
pub(crate) fn standardisation(raw: &[Vec<f64>], d: usize) -> (Vec<f64>, Vec<f64>) {
    let n = raw.len().max(1) as f64;
    let mut mean = vec![0.0; d];
    let mut std = vec![0.0; d];
    for j in 0..d {
        mean[j] = raw.iter().map(|r| r[j]).sum::<f64>() / n;
        let var = raw.iter().map(|r| (r[j] - mean[j]).powi(2)).sum::<f64>() / n;
        std[j] = if var > 1e-12 { var.sqrt() } else { 1.0 };
    }
    (mean, std)
}

/// Centres, each point's cluster, and the inertia.
pub(crate) type Clustering = (Array2<f64>, Vec<usize>, f64);

/// K-means (linfa) with `k` clusters over the rows of `z`, [`KMEANS_RUNS`] seeded restarts.
pub(crate) fn kmeans(z: &Array2<f64>, k: usize, seed: u64) -> Result<Clustering, ExpertError> {
    let dataset = DatasetBase::from(z.clone());
    let rng = Xoshiro256Plus::seed_from_u64(seed);
    let model = KMeans::params_with_rng(k, rng)
        .n_runs(KMEANS_RUNS)
        .max_n_iterations(300)
        .tolerance(1e-6)
        .fit(&dataset)
        .map_err(|e| ExpertError::KMeans {
            k,
            message: e.to_string(),
        })?;
    let labels = model.predict(z).to_vec();
    let centres = model.centroids().clone();
    let inertia = z
        .outer_iter()
        .zip(&labels)
        .map(|(p, &l)| {
            (0..z.ncols())
                .map(|j| (p[j] - centres[[l, j]]).powi(2))
                .sum::<f64>()
        })
        .sum();
    Ok((centres, labels, inertia))
}

/// The mean silhouette of a labelling (0 when every point is in one cluster).
pub fn silhouette(z: &Array2<f64>, labels: &[usize], k: usize) -> f64 {
    let n = labels.len();
    let mut sizes = vec![0usize; k];
    for &l in labels {
        sizes[l] += 1;
    }
    let mut total = 0.0;
    let mut sums = vec![0.0; k];
    for i in 0..n {
        sums.iter_mut().for_each(|s| *s = 0.0);
        for j in 0..n {
            let d = (0..z.ncols())
                .map(|c| (z[[i, c]] - z[[j, c]]).powi(2))
                .sum::<f64>()
                .sqrt();
            sums[labels[j]] += d;
        }
        let own = labels[i];
        if sizes[own] <= 1 {
            continue;
        }
        let a = sums[own] / (sizes[own] - 1) as f64;
        let b = (0..k)
            .filter(|&c| c != own && sizes[c] > 0)
            .map(|c| sums[c] / sizes[c] as f64)
            .fold(f64::INFINITY, f64::min);
        if b.is_finite() && a.max(b) > 0.0 {
            total += (b - a) / a.max(b);
        }
    }
    if n == 0 { 0.0 } else { total / n as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits_at(seconds: &[usize]) -> Vec<u8> {
        let mut b = vec![0u8; HORIZON_STEPS];
        for &s in seconds {
            b[s - 1] = 1;
        }
        b
    }

    #[test]
    fn features_are_the_count_and_the_mean_gap_or_the_horizon() {
        assert_eq!(features(&bits_at(&[])), [0.0, 120.0]);
        assert_eq!(features(&bits_at(&[30])), [1.0, 120.0]);
        assert_eq!(features(&bits_at(&[15, 30, 45, 60])), [4.0, 15.0]);
        assert_eq!(features(&bits_at(&[10, 12, 20])), [3.0, 5.0]);
    }

    fn stat(mean: f64, n: usize, se: f64) -> RewardStat {
        RewardStat { mean, n, se }
    }

    #[test]
    fn the_label_is_the_best_mean_reward_among_limits_tried_often_enough() {
        let mut r = BTreeMap::new();
        r.insert(500, stat(1.5, 3, 0.0));
        r.insert(900, stat(1.9, 2, 0.0)); // too few
        r.insert(2000, stat(1.2, 10, 0.0));
        for rule in [LabelRule::BestMean, LabelRule::OneSe] {
            assert_eq!(label_of(&r, rule, 2000), 500);
        }
        let mut few = BTreeMap::new();
        few.insert(600, stat(1.0, 2, 0.0));
        few.insert(4000, stat(0.5, 1, 0.0));
        assert_eq!(label_of(&few, LabelRule::OneSe, 2000), 600);
    }

    #[test]
    fn one_standard_error_takes_the_smallest_limit_statistically_tied_with_the_best() {
        let mut r = BTreeMap::new();
        r.insert(100, stat(1.20, 48, 0.08));
        r.insert(200, stat(1.34, 55, 0.08));
        r.insert(300, stat(1.40, 71, 0.07));
        r.insert(2500, stat(1.39, 55, 0.08));
        assert_eq!(label_of(&r, LabelRule::BestMean, 2000), 300);
        assert_eq!(label_of(&r, LabelRule::OneSe, 2000), 200);
        r.insert(200, stat(1.32, 55, 0.08));
        assert_eq!(
            label_of(&r, LabelRule::OneSe, 2000),
            300,
            "1.32 < 1.40 - 0.07"
        );
    }

    #[test]
    fn the_standard_error_is_the_sample_deviation_over_root_n() {
        let s = RewardStat::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.n, 4);
        assert!((s.mean - 2.5).abs() < 1e-12);
        let sd = (5.0f64 / 3.0).sqrt();
        assert!((s.se - sd / 2.0).abs() < 1e-12, "{}", s.se);
        assert_eq!(RewardStat::of(&[0.7]).se, 0.0);
    }

    #[test]
    fn expert_files_without_a_rule_read_as_the_best_mean() {
        let json = r#"{"schema": "leopace.expert.v1", "features": ["count", "gap"],
            "feature_mean": [0.0, 0.0], "feature_std": [1.0, 1.0], "max_bitrate_kbps": 2500.0,
            "max_freezes_per_min": 10.0, "clusters": [{"center": [0.0, 120.0], "size": 3,
            "action_ms": 500, "rewards": {"500": {"mean": 1.5, "n": 3}}}],
            "actions_ms": [500], "k_choice": [], "intervals": 3}"#;
        let e: Expert = serde_json::from_str(json).unwrap();
        assert_eq!(e.label_rule, LabelRule::BestMean);
        assert_eq!(e.clusters[0].rewards[&500].se, 0.0);
        let back: Expert = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn two_clear_groups_have_a_silhouette_near_one() {
        let z = Array2::from_shape_vec(
            (6, 2),
            vec![
                0.0, 0.0, 0.1, 0.0, 0.0, 0.1, 10.0, 10.0, 10.1, 10.0, 10.0, 10.1,
            ],
        )
        .unwrap();
        let s = silhouette(&z, &[0, 0, 0, 1, 1, 1], 2);
        assert!(s > 0.98, "{s}");
        let mixed = silhouette(&z, &[0, 1, 0, 1, 0, 1], 2);
        assert!(mixed < 0.0, "{mixed}");
    }
}

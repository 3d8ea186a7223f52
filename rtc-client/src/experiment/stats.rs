//! The statistics of an A/B experiment: the mean, its percentile-bootstrap confidence interval,
//! and a paired sign-flip permutation test.
//!
//! Why these: a cell of an experiment holds a few dozen calls whose QoE values are far from
//! normal (freeze counts are mostly zero with a long tail), so the interval is a percentile
//! bootstrap, which assumes no distribution, and the test is a permutation test on the
//! per-seed differences, which assumes only that under "no effect" each difference is as likely
//! positive as negative. Pairing by seed uses the experiment's design: every policy runs on the
//! same links, so the link's variance cancels out of the differences.
//!
//! Everything is deterministic: the random draws come from a [`ChaCha8Rng`] seeded by the caller,
//! so the same inputs give the same report, bit for bit.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Resamples of the bootstrap: 10 000, the usual figure for a stable 95 % percentile interval
/// (the interval's ends move by well under 1 % of its width between RNG seeds).
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

/// Confidence level of the interval.
pub const CONFIDENCE: f64 = 0.95;

/// Level below which a difference is marked significant.
pub const SIGNIFICANCE: f64 = 0.05;

/// Largest sample the permutation test enumerates exactly (2^16 = 65 536 sign patterns); larger
/// samples draw [`PERMUTATION_DRAWS`] random patterns instead.
pub const EXACT_PERMUTATION_MAX: usize = 16;

/// Random sign patterns drawn when the sample is too large to enumerate.
pub const PERMUTATION_DRAWS: usize = 10_000;

/// How the paired test is named in reports.
pub const PAIRED_TEST_NAME: &str = "paired sign-flip permutation test on the per-seed differences \
     (two-sided, statistic |mean difference|; exact for n <= 16, else 10 000 seeded random sign \
     patterns with p = (1 + hits) / (1 + draws))";

/// Relative tolerance when comparing a permuted statistic with the observed one, so that
/// patterns equal to it up to float rounding count as "at least as extreme".
const TIE_TOLERANCE: f64 = 1e-9;

/// The arithmetic mean, or `None` for an empty sample.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        None
    } else {
        Some(values.iter().sum::<f64>() / values.len() as f64)
    }
}

/// A two-sided confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Interval {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// The percentile-bootstrap confidence interval of the mean of `values`.
///
/// Draws `resamples` samples of the same size with replacement (from a [`ChaCha8Rng`] seeded
/// with `seed`), takes each one's mean, and returns the `(1 - confidence) / 2` and
/// `(1 + confidence) / 2` quantiles of those means (linear interpolation between order
/// statistics). `None` for an empty sample or zero resamples. A constant sample gives a
/// zero-width interval at that constant; a single value gives that value.
pub fn bootstrap_ci(
    values: &[f64],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Option<Interval> {
    if values.is_empty() || resamples == 0 {
        return None;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = values.len();
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| values[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let alpha = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
    Some(Interval {
        low: quantile_sorted(&means, alpha),
        high: quantile_sorted(&means, 1.0 - alpha),
    })
}

/// The `q`-quantile of a sorted, non-empty sample, interpolating linearly between order
/// statistics (the "type 7" definition of R and NumPy).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let last = sorted.len().saturating_sub(1);
    let position = q.clamp(0.0, 1.0) * last as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let weight = position - below as f64;
    sorted[below] + (sorted[above] - sorted[below]) * weight
}

/// The two-sided p-value of the paired sign-flip permutation test on `treatment - control`.
///
/// Under the null hypothesis (the policy changes nothing) each per-seed difference is as likely
/// positive as negative, so the observed |sum of differences| is compared with the |sum| of
/// every sign pattern (all 2^n when n <= [`EXACT_PERMUTATION_MAX`], else
/// [`PERMUTATION_DRAWS`] random patterns from a [`ChaCha8Rng`] seeded with `seed`, counting the
/// observed pattern as one of them). `None` when the samples are empty or of different lengths.
/// All-zero differences give p = 1.
pub fn paired_permutation_p(treatment: &[f64], control: &[f64], seed: u64) -> Option<f64> {
    if treatment.is_empty() || treatment.len() != control.len() {
        return None;
    }
    let diffs: Vec<f64> = treatment.iter().zip(control).map(|(t, c)| t - c).collect();
    let observed = diffs.iter().sum::<f64>().abs();
    let threshold = observed - TIE_TOLERANCE * observed.max(1.0);
    let n = diffs.len();
    if n <= EXACT_PERMUTATION_MAX {
        let patterns = 1u64 << n;
        let hits = (0..patterns)
            .filter(|&pattern| {
                let sum: f64 = diffs
                    .iter()
                    .enumerate()
                    .map(|(i, d)| if pattern >> i & 1 == 1 { -d } else { *d })
                    .sum();
                sum.abs() >= threshold
            })
            .count();
        return Some(hits as f64 / patterns as f64);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let hits = (0..PERMUTATION_DRAWS)
        .filter(|_| {
            let sum: f64 = diffs
                .iter()
                .map(|d| if rng.random::<bool>() { -d } else { *d })
                .sum();
            sum.abs() >= threshold
        })
        .count();
    Some((1 + hits) as f64 / (1 + PERMUTATION_DRAWS) as f64)
}

/// The relative change of `value` against `reference`, percent; `None` when the reference is 0
/// (a change from zero freezes has no meaningful ratio).
pub fn relative_change_pct(value: f64, reference: f64) -> Option<f64> {
    if reference == 0.0 || !reference.is_finite() || !value.is_finite() {
        None
    } else {
        Some((value - reference) / reference.abs() * 100.0)
    }
}

/// A stable 64-bit seed from text (FNV-1a), so every cell and metric gets its own bootstrap
/// stream that does not depend on the order cells are computed in.
pub fn seed_from_text(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_of_one_to_four_is_two_and_a_half_and_empty_has_none() {
        assert_eq!(mean(&[1.0, 2.0, 3.0, 4.0]), Some(2.5));
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn the_bootstrap_of_a_constant_sample_is_that_constant() {
        let ci = bootstrap_ci(&[7.5; 12], BOOTSTRAP_RESAMPLES, CONFIDENCE, 1).unwrap();
        assert_eq!(
            ci,
            Interval {
                low: 7.5,
                high: 7.5
            }
        );
        let one = bootstrap_ci(&[3.0], 100, CONFIDENCE, 1).unwrap();
        assert_eq!(
            one,
            Interval {
                low: 3.0,
                high: 3.0
            }
        );
    }

    #[test]
    fn the_bootstrap_of_nothing_is_none() {
        assert_eq!(bootstrap_ci(&[], 100, CONFIDENCE, 1), None);
        assert_eq!(bootstrap_ci(&[1.0], 0, CONFIDENCE, 1), None);
    }

    #[test]
    fn the_bootstrap_interval_of_zero_to_ninety_nine_matches_the_normal_approximation() {
        // 0..=99: mean 49.5, population sd 28.866, so the mean's standard error is 2.8866 and
        // the 95 % interval is about 49.5 -/+ 1.96 x 2.8866 = [43.84, 55.16].
        let values: Vec<f64> = (0..100).map(f64::from).collect();
        let ci = bootstrap_ci(&values, BOOTSTRAP_RESAMPLES, CONFIDENCE, 42).unwrap();
        assert!((ci.low - 43.84).abs() < 0.4, "{ci:?}");
        assert!((ci.high - 55.16).abs() < 0.4, "{ci:?}");
    }

    #[test]
    fn the_bootstrap_is_reproducible_for_a_seed_and_varies_with_it() {
        let values = [1.0, 5.0, 2.0, 8.0, 3.0];
        let a = bootstrap_ci(&values, 1000, CONFIDENCE, 9).unwrap();
        let b = bootstrap_ci(&values, 1000, CONFIDENCE, 9).unwrap();
        let c = bootstrap_ci(&values, 1000, CONFIDENCE, 10).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(a.low >= 1.0 && a.high <= 8.0 && a.low < a.high);
    }

    #[test]
    fn quantiles_interpolate_between_order_statistics() {
        let sorted = [10.0, 20.0, 30.0, 40.0, 50.0];
        assert_eq!(quantile_sorted(&sorted, 0.0), 10.0);
        assert_eq!(quantile_sorted(&sorted, 0.5), 30.0);
        assert_eq!(quantile_sorted(&sorted, 1.0), 50.0);
        // position 0.1 x 4 = 0.4: 10 + 0.4 x 10.
        assert!((quantile_sorted(&sorted, 0.1) - 14.0).abs() < 1e-12);
    }

    #[test]
    fn the_permutation_p_of_differences_one_two_three_is_one_quarter() {
        // Differences 1, 2, 3: the eight sign patterns sum to 6, 4, 2, 0, 0, -2, -4, -6; two of
        // them (6 and -6) are at least as extreme as the observed 6.
        let p = paired_permutation_p(&[2.0, 4.0, 6.0], &[1.0, 2.0, 3.0], 0).unwrap();
        assert_eq!(p, 0.25);
    }

    #[test]
    fn the_permutation_p_of_five_equal_positive_differences_is_one_sixteenth() {
        // Only all-plus and all-minus reach |sum| = 5: 2 / 32.
        let p = paired_permutation_p(&[1.0; 5], &[0.0; 5], 0).unwrap();
        assert_eq!(p, 0.0625);
    }

    #[test]
    fn identical_samples_give_p_one() {
        let v = [3.0, 1.0, 4.0, 1.0, 5.0];
        assert_eq!(paired_permutation_p(&v, &v, 0), Some(1.0));
    }

    #[test]
    fn the_permutation_test_refuses_unpaired_samples() {
        assert_eq!(paired_permutation_p(&[1.0], &[1.0, 2.0], 0), None);
        assert_eq!(paired_permutation_p(&[], &[], 0), None);
    }

    #[test]
    fn large_samples_use_seeded_random_patterns() {
        // 30 equal positive differences: only 2 of 2^30 patterns reach the observed sum, so the
        // Monte Carlo estimate is (1 + 0) / 10 001 for practically every seed.
        let p = paired_permutation_p(&[1.0; 30], &[0.0; 30], 5).unwrap();
        assert_eq!(p, 1.0 / 10_001.0);
        let values: Vec<f64> = (0..30).map(|i| f64::from(i % 7) - 3.0).collect();
        let zeros = vec![0.0; 30];
        let a = paired_permutation_p(&values, &zeros, 5).unwrap();
        assert_eq!(a, paired_permutation_p(&values, &zeros, 5).unwrap());
        assert!(a > 0.5, "{a}");
    }

    #[test]
    fn relative_change_is_percent_of_the_reference_and_none_from_zero() {
        assert_eq!(relative_change_pct(110.0, 100.0), Some(10.0));
        assert_eq!(relative_change_pct(50.0, 100.0), Some(-50.0));
        assert_eq!(relative_change_pct(1.0, 0.0), None);
    }

    #[test]
    fn text_seeds_are_stable_fnv1a() {
        assert_eq!(seed_from_text(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(seed_from_text("a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(
            seed_from_text("starlink/default"),
            seed_from_text("starlink/random")
        );
    }
}

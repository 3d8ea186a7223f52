//! Loss profiles: a loss probability for each fixed step after an instant.
//!
//! A Starlink slot boundary does not lose packets at one flat rate: in `lagos.csv` the uplink
//! loses about 47 % of its packets in the first 100-ms row of a slot, 20 % in the second, a few
//! per cent in the next two, then returns to its level inside the slot (the figures are in
//! `traces/scenarios/starlink.toml`). A [`LossProfile`] holds such a shape; a handover applies
//! one ([`super::HandoverEffect::LossProfile`]), and so does a slot boundary where the serving
//! satellite stays ([`super::LinkConfig::boundary_losses`]).

use super::LinkConfigError;
use super::series::check_probability;
use super::time::Time;
use std::sync::Arc;
use std::time::Duration;

/// Loss probabilities for consecutive steps from an instant `at`: `probabilities()[k]` holds
/// for packets leaving the bottleneck in `[at + k step, at + (k + 1) step)`; after the last step
/// the profile loses nothing.
///
/// The losses are drawn from the link's burst stream, like a
/// [`super::HandoverEffect::LossBurst`], and combine with the bursts and profiles in force as
/// independent losses (`p = 1 - prod(1 - p_i)`).
#[derive(Debug, Clone, PartialEq)]
pub struct LossProfile {
    step: Duration,
    probabilities: Arc<[f64]>,
}

impl LossProfile {
    /// A profile of `probabilities`, one per `step`. Refuses a zero step and a probability
    /// outside [0, 1], naming its position.
    pub fn new(
        step: Duration,
        probabilities: impl Into<Arc<[f64]>>,
    ) -> Result<LossProfile, LinkConfigError> {
        if step.is_zero() {
            return Err(LinkConfigError::Series(
                "a loss profile's step must be longer than zero".to_owned(),
            ));
        }
        let probabilities = probabilities.into();
        for (k, &p) in probabilities.iter().enumerate() {
            check_probability(p, &format!("loss profile step {k}"))?;
        }
        Ok(LossProfile {
            step,
            probabilities,
        })
    }

    /// The length of each step.
    pub fn step(&self) -> Duration {
        self.step
    }

    /// The probabilities, one per step.
    pub fn probabilities(&self) -> &[f64] {
        &self.probabilities
    }

    /// How long the profile lasts: steps x step (saturating).
    pub fn duration(&self) -> Duration {
        self.step
            .saturating_mul(u32::try_from(self.probabilities.len()).unwrap_or(u32::MAX))
    }

    /// The steps with a loss, as `[start, end)` and probability, for a profile starting at `at`.
    pub(crate) fn bursts(&self, at: Time) -> impl Iterator<Item = (Time, Time, f64)> + '_ {
        self.probabilities
            .iter()
            .enumerate()
            .filter(|&(_, &p)| p > 0.0)
            .map(move |(k, &p)| {
                let offset = |k: usize| {
                    self.step
                        .saturating_mul(u32::try_from(k).unwrap_or(u32::MAX))
                };
                (
                    at.saturating_add(offset(k)),
                    at.saturating_add(offset(k + 1)),
                    p,
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time::from_millis(v)
    }

    #[test]
    fn a_profile_becomes_one_interval_per_step_with_a_loss() {
        let p = LossProfile::new(Duration::from_millis(100), vec![0.5, 0.0, 0.25]).unwrap();
        assert_eq!(p.duration(), Duration::from_millis(300));
        assert_eq!(
            p.bursts(ms(1_000)).collect::<Vec<_>>(),
            vec![(ms(1_000), ms(1_100), 0.5), (ms(1_200), ms(1_300), 0.25)]
        );
    }

    #[test]
    fn a_bad_step_or_probability_is_refused_with_its_position() {
        let err = LossProfile::new(Duration::from_millis(100), vec![0.1, 1.5]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "loss profile step 1: 1.5 is not a probability in [0, 1]"
        );
        let err = LossProfile::new(Duration::from_millis(100), vec![f64::NAN]).unwrap_err();
        assert!(err.to_string().contains("loss profile step 0"), "{err}");
        let err = LossProfile::new(Duration::ZERO, vec![0.1]).unwrap_err();
        assert!(
            err.to_string().contains("step must be longer than zero"),
            "{err}"
        );
    }

    #[test]
    fn a_profile_near_the_end_of_time_saturates_instead_of_overflowing() {
        let p = LossProfile::new(Duration::MAX, vec![0.1, 0.2]).unwrap();
        let b: Vec<_> = p.bursts(ms(5)).collect();
        assert_eq!(b[0].0, ms(5));
        assert_eq!(b[1].1, Time::MAX);
    }
}

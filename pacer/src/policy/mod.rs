//! Queue policies: what queue time limit to use for the next decision interval.
//!
//! The paper ("Dynamic Pacing for Real-time Satellite Traffic", section III) picks one queue time
//! limit per decision interval from the handovers expected in it. This module is that seam:
//!
//! - [`QueuePolicy`]: anything that maps a [`Forecast`] to a limit. [`Fixed`] (WebRTC's 2000 ms,
//!   also the fallback), [`Random`] (data collection) and [`Heuristic`] (the handover-count table)
//!   are the baselines (docs/architecture.md, "Queue policies and decisions"); [`OnnxPolicy`]
//!   (feature `learned`, on by default) runs the learned transformer with tract, checked against
//!   its [`card`].
//! - [`PolicyController`]: the sans-I/O loop that, at every decision boundary, takes a forecast
//!   from a [`HandoverSource`](handover_predictor::HandoverSource), asks the policy, clamps the
//!   answer, hands it to the pacer through its [`PacerHandle`](crate::PacerHandle) and returns a
//!   [`Decision`] record for telemetry.
//! - Joint policies ([`QueuePolicy::decide_joint`]) also choose an [`ActionProfile`] from the
//!   menu for the interval, reading the call's own measurements ([`CallFeedback`]) beside the
//!   forecast (docs/architecture.md, "Queue policies and decisions", joint policies).

pub mod card;
mod controller;
mod feedback;
mod fixed;
mod gated;
mod heuristic;
#[cfg(feature = "learned")]
mod learned;
mod path_menu;
mod random;
#[cfg(test)]
mod test_support;

pub use controller::{Decision, PolicyController};
pub use feedback::{
    CallFeedback, FEEDBACK_FEATURES, FEEDBACK_WIDTH, KNOWN_FEATURES, PATH_FEATURES,
};
pub use fixed::Fixed;
pub use gated::Gated;
pub use heuristic::Heuristic;
#[cfg(feature = "learned")]
pub use learned::{LoadError, OnnxPolicy};
pub use path_menu::{ARM_PREFIX, PATH_MEASURE, PATH_MENU, PathArm, PathOutput};
pub use random::{Random, RandomJoint};

use crate::actions::ActionProfile;
use handover_predictor::Forecast;
use std::time::Duration;

/// The 15 queue time limits, in ms, a data-collection run draws from uniformly each interval
/// (docs/architecture.md, "Queue policies and decisions"; paper section III-B: "one of 15 queue
/// limits ranging from 100 to 4000 ms").
pub const COLLECTION_ACTIONS_MS: [u64; 15] = [
    100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1500, 2000, 2500, 3000, 4000,
];

/// How long one decision holds: 120 s by default (docs/architecture.md, "Queue policies and
/// decisions"), the length of the forecast horizon, so that every decision sees exactly the
/// interval it governs.
pub const DEFAULT_DECISION_INTERVAL: Duration = Duration::from_secs(120);

/// Why a policy could not choose a limit.
///
/// A failing policy never stops a call: the [`PolicyController`] falls back to WebRTC's fixed
/// 2000-ms limit and records the reason.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The policy could not evaluate the forecast (a model that fails to run, ...).
    #[error("{policy} could not evaluate the forecast: {error}")]
    Failed {
        /// The policy's name.
        policy: String,
        /// The underlying error.
        #[source]
        error: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The policy ran but produced nothing usable as a limit (NaN logits, an action index outside
    /// its action set, ...).
    #[error("{policy} produced no usable limit: {reason}")]
    InvalidOutput {
        /// The policy's name.
        policy: String,
        /// What was wrong with the output.
        reason: String,
    },
}

/// Chooses the queue time limit for one decision interval from the forecast of its handovers.
///
/// A policy may keep state between decisions (a random generator, a loaded model). It returns the
/// limit it wants; the [`PolicyController`] clamps it to [50 ms, 10 s] (docs/architecture.md,
/// "Queue policies and decisions") before the pacer sees it, so a policy need not clamp.
pub trait QueuePolicy: Send {
    /// The policy string written into telemetry: `"default"`, `"random"`, `"heuristic"`,
    /// `"fixed:<ms>"` or `"learned:<model sha256 prefix>"` (docs/architecture.md, "The telemetry
    /// contract").
    fn name(&self) -> String;

    /// The limit for the interval the forecast covers.
    fn decide(&mut self, forecast: &Forecast) -> Result<Duration, PolicyError>;

    /// Whether the policy chooses the handover-timed actions too ([`Self::decide_joint`] answers
    /// a profile). The driver then builds an action schedule for the call, and on a fallback the
    /// controller applies the `none` profile with WebRTC's 2000 ms.
    fn controls_actions(&self) -> bool {
        false
    }

    /// How long after the call's first decision this policy wants one more decision, off the
    /// decision grid: a path-aware policy measures the path that long before it chooses
    /// (docs/architecture.md, "The model and its card", path cards). `None` by default.
    fn measuring_window(&self) -> Option<Duration> {
        None
    }

    /// The limit and, for a joint policy, the action profile for the interval, from the forecast
    /// and what the call measured so far. By default the limit of [`Self::decide`] and no
    /// profile (the actions, if any, keep their configuration).
    fn decide_joint(
        &mut self,
        forecast: &Forecast,
        _feedback: &CallFeedback,
    ) -> Result<Choice, PolicyError> {
        Ok(Choice {
            limit: self.decide(forecast)?,
            profile: None,
        })
    }
}

/// What a policy chose for one interval: a queue limit and, for a joint policy, the action
/// profile to apply from the decision on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// The queue time limit (before the controller's clamp).
    pub limit: Duration,
    /// The profile; `None` leaves the action schedule as it is.
    pub profile: Option<ActionProfile>,
}

impl<P: QueuePolicy + ?Sized> QueuePolicy for Box<P> {
    fn name(&self) -> String {
        (**self).name()
    }

    fn decide(&mut self, forecast: &Forecast) -> Result<Duration, PolicyError> {
        (**self).decide(forecast)
    }

    fn controls_actions(&self) -> bool {
        (**self).controls_actions()
    }

    fn measuring_window(&self) -> Option<Duration> {
        (**self).measuring_window()
    }

    fn decide_joint(
        &mut self,
        forecast: &Forecast,
        feedback: &CallFeedback,
    ) -> Result<Choice, PolicyError> {
        (**self).decide_joint(forecast, feedback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn the_collection_actions_are_the_fifteen_limits_of_the_design_in_ascending_order() {
        assert_eq!(COLLECTION_ACTIONS_MS.len(), 15);
        assert_eq!(COLLECTION_ACTIONS_MS[0], 100);
        assert_eq!(COLLECTION_ACTIONS_MS[14], 4000);
        assert!(COLLECTION_ACTIONS_MS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(DEFAULT_DECISION_INTERVAL, Duration::from_secs(120));
    }

    #[test]
    fn a_boxed_policy_is_a_policy_with_the_same_name_and_decisions() {
        fn name_and_decision<P: QueuePolicy>(policy: &mut P) -> (String, Duration) {
            let decided = policy.decide(&Forecast::none(Instant::now())).unwrap();
            (policy.name(), decided)
        }
        let mut boxed: Box<dyn QueuePolicy> = Box::new(Fixed::new(Duration::from_millis(700)));
        assert_eq!(
            name_and_decision(&mut boxed),
            ("fixed:700".to_owned(), Duration::from_millis(700))
        );
    }

    #[test]
    fn policy_errors_name_the_policy_and_the_cause() {
        let err = PolicyError::InvalidOutput {
            policy: "learned:abc123".into(),
            reason: "logits contain NaN".into(),
        };
        assert_eq!(
            err.to_string(),
            "learned:abc123 produced no usable limit: logits contain NaN"
        );
        let err = PolicyError::Failed {
            policy: "learned:abc123".into(),
            error: "shape mismatch".into(),
        };
        assert_eq!(
            err.to_string(),
            "learned:abc123 could not evaluate the forecast: shape mismatch"
        );
    }
}

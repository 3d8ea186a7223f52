//! What to evaluate: the settings of a run, their defaults, and why a run cannot start.

use super::perturb::Perturbation;
use crate::forecast::HORIZON;
use crate::orbit::{Catalogue, ObserverError, ServingPolicy, TimelineError};
use crate::predict::HybridConfig;
use chrono::{DateTime, Duration as ChronoDuration, Utc};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default spacing of decision instants: 127 s (see the [`eval`](crate::eval) module
/// documentation).
pub const DEFAULT_SPACING: Duration = Duration::from_secs(127);

/// Default warm-up before the first decision: 150 s, the mirror's 120 s of history (paper
/// section III-D) plus two slots for the detector's first verdicts (it needs one slot to see a
/// track and the next to judge a boundary, reference B5).
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(150);

/// Default offset of the dish polls after each whole second: 250 ms, an arbitrary point inside
/// the second (the detector dates handovers at the slot boundary whatever the offset,
/// `tests/dish_pipeline.rs`).
pub const DEFAULT_POLL_OFFSET: Duration = Duration::from_millis(250);

/// Default number of windows per location.
pub const DEFAULT_WINDOWS: usize = 30;

/// A place to evaluate at.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Location {
    /// Name in the report.
    pub name: String,
    /// Geodetic latitude, degrees north.
    pub latitude_deg: f64,
    /// Longitude, degrees east.
    pub longitude_deg: f64,
}

impl Location {
    /// A location at sea level.
    pub fn new(name: impl Into<String>, latitude_deg: f64, longitude_deg: f64) -> Self {
        Self {
            name: name.into(),
            latitude_deg,
            longitude_deg,
        }
    }
}

/// The three sites whose serving satellites were measured (reference C5, SatInView's July-2024
/// data): Kanazawa, Louvain-la-Neuve and Brisbane, a low northern, a high northern and a
/// southern latitude.
pub fn default_locations() -> Vec<Location> {
    vec![
        Location::new("kanazawa", 36.56, 136.65),
        Location::new("louvain", 50.67, 4.61),
        Location::new("brisbane", -27.47, 153.03),
    ]
}

/// The catalogue the predictors (orbital and hybrid) propagate.
#[derive(Debug, Clone)]
pub enum PredictorCatalogue {
    /// The truth's own catalogue: the orbital predictor is then exact under the same policy.
    SameAsTruth,
    /// The truth's catalogue with noise ([`perturb`](fn@crate::eval::perturb)).
    Perturbed(Perturbation),
    /// Another catalogue (e.g. an older snapshot of the same constellation).
    Other(Arc<Catalogue>),
}

/// What to evaluate. [`EvalConfig::new`] fills in the defaults.
#[derive(Debug, Clone)]
pub struct EvalConfig {
    /// The catalogue the truth propagates.
    pub truth_catalogue: Arc<Catalogue>,
    /// The catalogue the orbital and hybrid predictors propagate.
    pub predictor_catalogue: PredictorCatalogue,
    /// The policy the truth follows.
    pub truth_policy: ServingPolicy,
    /// The policy the orbital and hybrid predictors assume.
    pub predictor_policy: ServingPolicy,
    /// Where the dish is; each location is an independent run.
    pub locations: Vec<Location>,
    /// Dish time at which the simulated dish starts (the warm-up starts here).
    pub start: DateTime<Utc>,
    /// Decision instants per location.
    pub windows: usize,
    /// Time between decision instants ([`DEFAULT_SPACING`]).
    pub spacing: Duration,
    /// Time from `start` to the first decision instant ([`DEFAULT_WARMUP`]).
    pub warmup: Duration,
    /// Offset of the polls after each whole dish second, below 1 s ([`DEFAULT_POLL_OFFSET`]).
    pub poll_offset: Duration,
    /// The hybrid's identification settings.
    pub hybrid: HybridConfig,
    /// The monotonic instant that stands for `start` in the predictors' clock. Any value works
    /// (only differences are used); it is a parameter so that the library reads no clock.
    pub anchor: Instant,
}

impl EvalConfig {
    /// The default evaluation of `truth_catalogue` from `start`: the predictors share the truth's
    /// catalogue and the default Starlink policy, [`default_locations`], [`DEFAULT_WINDOWS`]
    /// windows each.
    pub fn new(truth_catalogue: Arc<Catalogue>, start: DateTime<Utc>, anchor: Instant) -> Self {
        Self {
            truth_catalogue,
            predictor_catalogue: PredictorCatalogue::SameAsTruth,
            truth_policy: ServingPolicy::default(),
            predictor_policy: ServingPolicy::default(),
            locations: default_locations(),
            start,
            windows: DEFAULT_WINDOWS,
            spacing: DEFAULT_SPACING,
            warmup: DEFAULT_WARMUP,
            poll_offset: DEFAULT_POLL_OFFSET,
            hybrid: HybridConfig::default(),
            anchor,
        }
    }
}

/// Why an evaluation could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A setting out of range.
    #[error("invalid evaluation setting: {0}")]
    Config(String),
    /// A location that is not on the Earth.
    #[error("location {name:?}: {source}")]
    Location {
        /// The location's name.
        name: String,
        /// What was wrong.
        #[source]
        source: ObserverError,
    },
    /// A serving policy with parameters out of range.
    #[error("{which} policy: {source}")]
    Policy {
        /// `truth` or `predictor`.
        which: &'static str,
        /// What was wrong.
        #[source]
        source: TimelineError,
    },
    /// A catalogue with no propagatable satellite.
    #[error("the {0} catalogue has no propagatable satellite")]
    EmptyCatalogue(&'static str),
}

/// Refuses the settings a run cannot use (see [`EvalError`]).
pub(super) fn check(config: &EvalConfig) -> Result<(), EvalError> {
    if config.windows == 0 {
        return Err(EvalError::Config("at least one window is needed".into()));
    }
    if config.locations.is_empty() {
        return Err(EvalError::Config("at least one location is needed".into()));
    }
    if config.spacing < Duration::from_secs(1) {
        return Err(EvalError::Config(format!(
            "decision instants must be at least 1 s apart, got {:?}",
            config.spacing
        )));
    }
    if config.poll_offset >= Duration::from_secs(1) {
        return Err(EvalError::Config(format!(
            "the poll offset must be below 1 s, got {:?}",
            config.poll_offset
        )));
    }
    // The whole run must be representable (and not absurdly long: a year of dish time), with a
    // day of margin on both sides for the look-backs and horizons around it.
    let span = config
        .spacing
        .checked_mul(u32::try_from(config.windows).unwrap_or(u32::MAX))
        .and_then(|s| s.checked_add(config.warmup))
        .and_then(|s| s.checked_add(HORIZON));
    let year = Duration::from_secs(366 * 86_400);
    let Some(span) = span.filter(|&s| s <= year) else {
        return Err(EvalError::Config(
            "the run (warm-up + windows x spacing) is longer than a year".into(),
        ));
    };
    let day = ChronoDuration::days(1);
    let fits = ChronoDuration::from_std(span)
        .ok()
        .and_then(|span| config.start.checked_add_signed(span + day))
        .is_some()
        && config.start.checked_sub_signed(day).is_some();
    if !fits {
        return Err(EvalError::Config(format!(
            "a run starting at {} does not fit in the calendar",
            config.start
        )));
    }
    if config.truth_catalogue.is_empty() {
        return Err(EvalError::EmptyCatalogue("truth"));
    }
    Ok(())
}

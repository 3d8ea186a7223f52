//! Evaluation: the mirror, orbital and hybrid predictors against the truth, over many 120-s
//! windows at several locations.
//!
//! # Setup
//!
//! * **Truth**: an [`OrbitalTruth`]: the truth catalogue under the truth serving policy, second
//!   by second. The true handovers of a window are its changes of serving satellite
//!   ([`OrbitalTruth::handovers`]).
//! * **Observations**: a simulated dish ([`SimDish`]) painting that truth into its obstruction
//!   map, polled once per dish second and cleared after the first poll of every slot (the
//!   driver's schedule, reference B3), feeding a [`HandoverDetector`]: in virtual time, without
//!   gRPC (as `tests/dish_pipeline.rs`), so a run is fast and deterministic. Everything a
//!   predictor learns from the dish is causal: at a decision instant it has seen only the polls
//!   up to that instant.
//! * **Predictors**:
//!   - [`Mirror`] (paper section III-D) learns the detector's handover verdicts, dated at their
//!     slot boundaries, as the detector decides them;
//!   - [`Orbital`] gets the predictors' catalogue and policy only;
//!   - [`Hybrid`] gets the same catalogue and policy, plus the detector's track.
//! * **Windows**: decision instants at `start + warmup + k * spacing`; each forecast covers the
//!   120 s after its instant (docs/architecture.md, "The forecast contract"). The warm-up gives
//!   the mirror its 120 s of history. The default spacing is 127 s rather than 120 s so that the
//!   decision instants sweep all 15 phases of the slot grid (127 = 8 x 15 + 7, and 7 is prime to
//!   15); back-to-back 120-s windows would all sit at the same point of a slot.
//!
//! # Metrics (per predictor, per location and over all locations)
//!
//! * **F1 per second, +/- 1 s**: predicted handover steps against true ones, each true handover
//!   matched to at most one prediction within one step ([`score_handovers`]), counts summed over
//!   windows (micro-average).
//! * **MAE of handovers per window**: mean |predicted count - true count|; the paper's state has
//!   a normalised-count channel (section III-A), so the count matters on its own.
//! * **Boundary accuracy**: at every slot boundary inside a window (8 per window, reference C1),
//!   "handover or not" predicted against the truth, each with the same +/- 1 s tolerance; also
//!   reported for the first boundary after the decision instant alone, the one the current
//!   serving satellite decides (the keep rule compares it with the best candidate).
//!
//! # Realism knobs
//!
//! With the same catalogue and policy the orbital predictor *is* the truth (F1 = 1): that case
//! only measures the mirror and checks the hybrid. Two honest departures:
//!
//! * [`PredictorCatalogue::Perturbed`]: the predictors' catalogue is the truth catalogue with
//!   per-satellite Gaussian noise on the mean anomaly (along-track) and on inclination and right
//!   ascension (cross-track), a stand-in for the error of a TLE some days old or of a satellite
//!   that manoeuvred since (reference D2: Starlink manoeuvres often; errors grow by km per
//!   day, D4 step 6). See [`Perturbation`].
//! * A truth policy different from the one the predictors assume ([`EvalConfig::truth_policy`]
//!   vs [`EvalConfig::predictor_policy`]): Starlink's scheduler is not public, and the default
//!   [`StarlinkConfig`](crate::orbit::StarlinkConfig) is fitted, so the choice among candidates
//!   is the real uncertainty.
//!
//! [`OrbitalTruth`]: crate::dish::OrbitalTruth
//! [`OrbitalTruth::handovers`]: crate::dish::OrbitalTruth::handovers
//! [`SimDish`]: crate::dish::SimDish
//! [`HandoverDetector`]: crate::dish::HandoverDetector
//! [`Mirror`]: crate::predict::Mirror
//! [`Orbital`]: crate::predict::Orbital
//! [`Hybrid`]: crate::predict::Hybrid
//! [`score_handovers`]: crate::dish::score_handovers

// One concept a file, each importing only its siblings: `config` (the settings and their checks),
// `perturb` (the predictors' noisy catalogue), `report` (rows, windows, the table), `score` (one
// window scored, tallied), `run` (the virtual-time loop and `evaluate`). This file only
// re-exports them, so the public paths stay `eval::*` and no child imports its parent.
mod config;
mod perturb;
mod report;
mod run;
mod score;
mod truth;

pub use config::{
    DEFAULT_POLL_OFFSET, DEFAULT_SPACING, DEFAULT_WARMUP, DEFAULT_WINDOWS, EvalConfig, EvalError,
    Location, PredictorCatalogue, default_locations,
};
pub use perturb::{Perturbation, perturb};
pub use report::{
    EvalReport, IdentificationRow, OVERALL, Predictor, Row, Scenario, WindowRecord, describe_policy,
};
pub use run::evaluate;
pub use score::TOLERANCE_S;
pub use truth::{
    SATELLITE_COLUMN, TIMESTAMP_COLUMN, TruthEvalConfig, TruthLog, TruthLogError, TruthReport,
    TruthRow, TruthRowReport, TruthSource, TruthWindow, binomial_floor, evaluate_truth,
    parse_timestamp,
};

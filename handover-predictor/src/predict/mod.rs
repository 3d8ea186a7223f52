//! Predictors: handover sources that produce a [`Forecast`](crate::Forecast) at a decision
//! instant (docs/architecture.md, "Crates and dependency direction").
//!
//! - [`Mirror`]: the paper's live predictor (section III-D): the next 120 s repeat the last
//!   observed 120 s; 8 equally spaced handovers before there is any history.
//! - [`Orbital`]: SGP4 propagation of a TLE catalogue and a serving policy (Starlink's slot grid or
//!   StarryNet's delay rule), the "high-fidelity LEO features" the paper's emulation used.
//! - [`Oracle`]: ground truth from a known serving timeline, for evaluation only.
//! - [`Hybrid`]: the dish's observed track matched to a TLE satellite (reference B6), then the
//!   orbital model continued from the identified serving satellite.
//! - [`Calibrated`]: every candidate boundary (the slot grid, or the orbit model's instants) with
//!   the site's switch probability, learned online and shrunk toward a prior.

mod calibrated;
mod hybrid;
mod mirror;
mod oracle;
mod orbital;

pub use calibrated::{
    Calibrated, CalibratedError, DEFAULT_PRIOR_WEIGHT, POOLED_SWITCH_RATE, SLOT,
    SWITCH_RATE_PRESETS, SwitchRate, parse_switch_rate,
};
pub use hybrid::{
    Basis, DEFAULT_EDGE_POINT_OFFSET_S, DEFAULT_MAX_MEAN_SEPARATION_DEG,
    DEFAULT_MAX_OBSERVATION_AGE_SLOTS, DEFAULT_MIN_MATCH_ELEVATION_DEG, DEFAULT_MIN_POINTS,
    DEFAULT_RESET_POINT_OFFSET_S, Hybrid, HybridConfig, MIN_BEARING_ARC_DEG, Match, Sample,
};
pub use mirror::{DEFAULT_SPACING, Mirror};
pub use oracle::Oracle;
pub use orbital::{DEFAULT_MAX_CATALOGUE_AGE, Orbital};

//! Predictors: handover sources that produce a [`Forecast`](crate::Forecast) at a decision
//! instant (DESIGN section 2, "Predictors").
//!
//! - [`Mirror`]: the paper's live predictor (section III-D): the next 120 s repeat the last
//!   observed 120 s; 8 equally spaced handovers before there is any history.
//! - [`Orbital`]: SGP4 propagation of a TLE catalogue and a serving policy (Starlink's slot grid or
//!   StarryNet's delay rule), the "high-fidelity LEO features" the paper's emulation used.
//! - [`Oracle`]: ground truth from a known serving timeline, for evaluation only.

mod mirror;
mod oracle;
mod orbital;

pub use mirror::{DEFAULT_SPACING, Mirror};
pub use oracle::Oracle;
pub use orbital::{DEFAULT_MAX_CATALOGUE_AGE, Orbital};

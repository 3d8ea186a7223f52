//! Where satellite handovers come from.
//!
//! Every producer of handover information (orbits, the Starlink dish, a trace, ground truth)
//! speaks one contract: the [`Forecast`], a 120-step, one-second-resolution view of the handovers
//! expected after a decision instant (docs/architecture.md, "The forecast contract"). The pacer's
//! policy reads nothing else, so any source can be swapped for any other without touching the
//! policy.
//!
//! The crate is sans-I/O at its core: a [`HandoverSource`] is asked for a forecast *at* an instant
//! it is handed, and never reads a clock itself, which is what lets the same source drive a real
//! call and a virtual-time simulation.

#![forbid(unsafe_code)]

#[cfg(feature = "dish")]
pub mod dish;
#[cfg(feature = "dish")]
pub mod eval;
mod forecast;
pub mod orbit;
pub mod predict;
// Its only users (the synthetic sky and the evaluation) come with the dish.
#[cfg(feature = "dish")]
mod rng;
pub mod sky;
mod source;

pub use forecast::{
    BIT_PROBABILITY, CUMULATIVE_NORM, Forecast, ForecastError, ForecastSource, HORIZON,
    HORIZON_STEPS, HandoverSteps, HandoverTiming, PredictedHandover, STEP, TENSOR_SHAPE,
};
pub use source::{HandoverSource, NoHandovers, SourceError, TimelineSource};

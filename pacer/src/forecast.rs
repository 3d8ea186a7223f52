//! The forecast contract the plugin's API takes: what a [`QueuePolicy`](crate::QueuePolicy)
//! decides from and a [`HandoverSource`] produces (docs/architecture.md, "The forecast
//! contract"). Re-exported from handover-predictor so that an application can feed the policy
//! without depending on it; the predictors themselves (orbital, calibrated, the dish) are
//! handover-predictor's.

pub use handover_predictor::{
    BIT_PROBABILITY, CUMULATIVE_NORM, Forecast, ForecastError, ForecastSource, HORIZON_STEPS,
    HandoverSource, HandoverSteps, HandoverTiming, NoHandovers, PredictedHandover, SourceError,
    TimelineSource,
};

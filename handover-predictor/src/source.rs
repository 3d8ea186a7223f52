//! The seam every handover source plugs into, and the two sources that need no orbit model.

use crate::forecast::{Forecast, ForecastError, ForecastSource, HORIZON, HandoverTiming};
use std::time::{Duration, Instant};

/// Why a source could not produce a forecast.
///
/// A failing source never stops a call: the policy controller falls back to WebRTC's fixed
/// 2000-ms limit and records the reason.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The source has nothing to say right now (no TLE covers the instant, the dish does not
    /// answer, ...).
    #[error("{source_name} has no forecast: {reason}")]
    Unavailable {
        /// The source's name.
        source_name: String,
        /// What is missing.
        reason: String,
    },
    /// The source produced a forecast that violates the contract.
    #[error("invalid forecast: {0}")]
    Invalid(#[from] ForecastError),
    /// Any other failure (I/O, gRPC, decoding), kept with its cause.
    #[error("{source_name} failed: {error}")]
    Failed {
        /// The source's name.
        source_name: String,
        /// The underlying error.
        #[source]
        error: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Anything that can produce a [`Forecast`] at an instant it is handed.
///
/// Sources never read a clock: `now` is the decision instant, which in a simulation is virtual
/// time. A source may keep state between calls (the mirror predictor remembers what it saw).
pub trait HandoverSource: Send {
    /// A short name for logs and decision records.
    fn name(&self) -> &str;

    /// The forecast for `(now, now + 120 s]`.
    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError>;
}

impl<S: HandoverSource + ?Sized> HandoverSource for Box<S> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        (**self).forecast(now)
    }
}

/// A path without satellite handovers (terrestrial): always the all-zero forecast, source `none`.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHandovers;

impl HandoverSource for NoHandovers {
    fn name(&self) -> &str {
        "none"
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        Ok(Forecast::none(now))
    }
}

/// A known handover timeline: instants at which handovers happen, relative to an epoch.
///
/// This is how a scenario file's or a recorded trace's handover schedule becomes a forecast
/// (source `trace`), and, fed with the emulated link's own schedule, the evaluation oracle
/// (source `oracle`). The timeline is kept sorted; a forecast is a window onto it.
#[derive(Debug, Clone)]
pub struct TimelineSource {
    name: String,
    tag: ForecastSource,
    epoch: Instant,
    handovers: Vec<Duration>,
}

impl TimelineSource {
    /// A timeline of handovers at `offsets` after `epoch`, reported with source `tag`.
    pub fn new(
        name: impl Into<String>,
        tag: ForecastSource,
        epoch: Instant,
        offsets: impl IntoIterator<Item = Duration>,
    ) -> Self {
        let mut handovers: Vec<Duration> = offsets.into_iter().collect();
        handovers.sort_unstable();
        handovers.dedup();
        Self {
            name: name.into(),
            tag,
            epoch,
            handovers,
        }
    }

    /// Handovers every `period` from `epoch + first` on, up to `epoch + until`, e.g. Starlink's
    /// 15-s reconfiguration cadence.
    pub fn periodic(
        name: impl Into<String>,
        tag: ForecastSource,
        epoch: Instant,
        first: Duration,
        period: Duration,
        until: Duration,
    ) -> Self {
        let period = period.max(Duration::from_millis(1));
        let offsets =
            std::iter::successors(Some(first), |&t| Some(t + period)).take_while(|&t| t <= until);
        Self::new(name, tag, epoch, offsets)
    }

    /// The handover offsets from the epoch, ascending.
    pub fn handovers(&self) -> &[Duration] {
        &self.handovers
    }
}

impl HandoverSource for TimelineSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        let Some(at) = now.checked_duration_since(self.epoch) else {
            return Err(SourceError::Unavailable {
                source_name: self.name.clone(),
                reason: "the decision instant is before the timeline's epoch".into(),
            });
        };
        let start = self.handovers.partition_point(|&h| h <= at);
        let offsets = self.handovers[start..]
            .iter()
            .take_while(|&&h| h - at <= HORIZON)
            .map(|&h| h - at);
        Ok(Forecast::from_offsets(
            self.tag,
            now,
            offsets,
            HandoverTiming::SubSecond,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeline_forecast_is_the_window_after_now() {
        let epoch = Instant::now();
        let mut source = TimelineSource::periodic(
            "starlink-slots",
            ForecastSource::Trace,
            epoch,
            Duration::from_secs(12),
            Duration::from_secs(15),
            Duration::from_secs(600),
        );
        let f = source.forecast(epoch).unwrap();
        assert_eq!(f.handover_count(), 8);
        assert!(f.steps().is_handover(11));
        assert!(f.steps().is_handover(26));
        assert!(!f.steps().is_handover(12));

        let f = source.forecast(epoch + Duration::from_secs(12)).unwrap();
        assert!(
            !f.steps().is_handover(0),
            "a handover at t0 belongs to the past interval"
        );
        assert!(f.steps().is_handover(14));
        assert_eq!(f.source(), ForecastSource::Trace);

        let f = source.forecast(epoch + Duration::from_secs(597)).unwrap();
        assert_eq!(f.handover_count(), 0);
    }

    #[test]
    fn a_timeline_refuses_instants_before_its_epoch() {
        let epoch = Instant::now() + Duration::from_secs(10);
        let mut source = TimelineSource::new("t", ForecastSource::Trace, epoch, []);
        let err = source.forecast(epoch - Duration::from_secs(1)).unwrap_err();
        assert!(err.to_string().contains("before the timeline's epoch"));
    }

    #[test]
    fn no_handovers_is_always_the_zero_forecast() {
        let now = Instant::now();
        let f = NoHandovers.forecast(now).unwrap();
        assert_eq!(f, Forecast::none(now));
    }
}

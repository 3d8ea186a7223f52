//! Ground truth for evaluation: the handovers that will actually happen (source `oracle`).
//!
//! An oracle knows the emulated link's serving timeline in advance, so it can only exist in a
//! simulation. It bounds what any real predictor can achieve and labels what a call experienced.

use crate::forecast::{Forecast, ForecastSource};
use crate::orbit::{
    Catalogue, Observer, Serving, ServingPolicy, TimelineError, handovers, serving_timeline,
};
use crate::source::{HandoverSource, SourceError, TimelineSource};
use chrono::{DateTime, Utc};
use std::time::{Duration, Instant};

/// The true handover schedule, windowed into forecasts.
#[derive(Debug, Clone)]
pub struct Oracle {
    inner: TimelineSource,
}

impl Oracle {
    /// Handovers at `offsets` after `epoch`.
    pub fn from_handovers(epoch: Instant, offsets: impl IntoIterator<Item = Duration>) -> Self {
        Self {
            inner: TimelineSource::new("oracle", ForecastSource::Oracle, epoch, offsets),
        }
    }

    /// Handovers of a serving timeline whose entry `i` is the serving satellite at
    /// `epoch + i s` (see [`handovers`] for how gaps count).
    pub fn from_serving_timeline(epoch: Instant, timeline: &[Option<Serving>]) -> Self {
        let offsets = handovers(timeline)
            .into_iter()
            .map(|i| Duration::from_secs(i as u64));
        Self::from_handovers(epoch, offsets)
    }

    /// The truth of an orbital scenario: the serving timeline of `seconds` from `epoch_utc`
    /// (which `epoch_instant` stands for), plus one horizon so that forecasts up to the end are
    /// complete.
    pub fn from_orbits(
        catalogue: &Catalogue,
        observer: &Observer,
        policy: &ServingPolicy,
        epoch_instant: Instant,
        epoch_utc: DateTime<Utc>,
        seconds: u32,
    ) -> Result<Self, TimelineError> {
        let horizon = crate::forecast::HORIZON_STEPS as u32;
        let timeline = serving_timeline(
            catalogue,
            observer,
            policy,
            epoch_utc,
            seconds.saturating_add(horizon + 1),
        )?;
        Ok(Self::from_serving_timeline(epoch_instant, &timeline))
    }

    /// The handover offsets from the epoch, ascending.
    pub fn handovers(&self) -> &[Duration] {
        self.inner.handovers()
    }
}

impl HandoverSource for Oracle {
    fn name(&self) -> &str {
        "oracle"
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        self.inner.forecast(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sky::SkyPosition;

    fn s(id: u64) -> Option<Serving> {
        Some(Serving {
            norad_id: id,
            position: SkyPosition {
                azimuth_deg: 10.0,
                elevation_deg: 60.0,
                range_km: 600.0,
            },
        })
    }

    #[test]
    fn the_oracle_forecasts_exactly_the_handovers_of_its_timeline() {
        let epoch = Instant::now();
        let mut timeline = vec![s(1); 30];
        timeline[12..27].fill(s(2));
        timeline[27..].fill(s(3));
        let mut oracle = Oracle::from_serving_timeline(epoch, &timeline);
        assert_eq!(
            oracle.handovers(),
            &[Duration::from_secs(12), Duration::from_secs(27)]
        );
        let f = oracle.forecast(epoch).unwrap();
        assert_eq!(f.source(), ForecastSource::Oracle);
        assert_eq!(
            (0..120)
                .filter(|&k| f.steps().is_handover(k))
                .collect::<Vec<_>>(),
            vec![11, 26]
        );
        assert_eq!(oracle.name(), "oracle");
    }
}

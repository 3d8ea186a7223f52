//! The orbital predictor: SGP4 orbits, the observer's sky and a serving policy, turned into the
//! next 120 s of handovers (source `orbital`).

use crate::forecast::{Forecast, ForecastSource, HORIZON, HORIZON_STEPS, HandoverTiming};
use crate::orbit::{
    Catalogue, Observer, Search, Serving, ServingPolicy, TimelineError, handovers,
    serving_timeline_with,
};
use crate::source::{HandoverSource, SourceError};
use chrono::{DateTime, Duration as ChronoDuration, Timelike, Utc};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Seconds of serving timeline computed before the decision instant, so that the first second of
/// the horizon knows what served before it (one Starlink slot).
const LOOKBACK_S: u32 = 15;

/// Default limit on the distance between the decision instant and the catalogue's newest epoch:
/// SGP4 errors grow by km per day (reference D2, D4 step 6), so after a month a forecast would
/// describe a different sky.
pub const DEFAULT_MAX_CATALOGUE_AGE: Duration = Duration::from_secs(30 * 86_400);

/// Forecasts handovers by propagating a TLE catalogue and applying a [`ServingPolicy`].
///
/// The predictor maps the monotonic [`Instant`]s of the call (real or virtual time) to UTC with
/// the pair given at construction: `utc(t) = epoch_utc + (t - epoch_instant)`. It reads no clock.
/// One forecast from an 8,000-satellite catalogue takes a few milliseconds (prefiltered search,
/// see [`Search`]; `benches/orbital.rs`).
#[derive(Debug, Clone)]
pub struct Orbital {
    catalogue: Arc<Catalogue>,
    observer: Observer,
    policy: ServingPolicy,
    epoch_instant: Instant,
    epoch_utc: DateTime<Utc>,
    search: Search,
    max_catalogue_age: Duration,
}

impl Orbital {
    /// A predictor for `observer` under `policy`, with `epoch_instant` corresponding to
    /// `epoch_utc`.
    pub fn new(
        catalogue: Arc<Catalogue>,
        observer: Observer,
        policy: ServingPolicy,
        epoch_instant: Instant,
        epoch_utc: DateTime<Utc>,
    ) -> Self {
        Self {
            catalogue,
            observer,
            policy,
            epoch_instant,
            epoch_utc,
            search: Search::Prefiltered,
            max_catalogue_age: DEFAULT_MAX_CATALOGUE_AGE,
        }
    }

    /// The same predictor with another search (the exhaustive one is the benchmark baseline).
    pub fn with_search(mut self, search: Search) -> Self {
        self.search = search;
        self
    }

    /// The same predictor with another catalogue-age limit ([`DEFAULT_MAX_CATALOGUE_AGE`]).
    pub fn with_max_catalogue_age(mut self, age: Duration) -> Self {
        self.max_catalogue_age = age;
        self
    }

    /// The UTC instant of `at`; `None` if it is out of chrono's range.
    pub fn utc(&self, at: Instant) -> Option<DateTime<Utc>> {
        let shift = |d: Duration| ChronoDuration::from_std(d).ok();
        match at.checked_duration_since(self.epoch_instant) {
            Some(after) => self.epoch_utc.checked_add_signed(shift(after)?),
            None => self
                .epoch_utc
                .checked_sub_signed(shift(self.epoch_instant.duration_since(at))?),
        }
    }

    /// The serving timeline the forecast at `now` is made from: entries one second apart from the
    /// returned UTC instant, which is `now` rounded down to a whole second minus 15 s, through
    /// `now + 120 s`.
    pub fn timeline(
        &self,
        now: Instant,
    ) -> Result<(DateTime<Utc>, Vec<Option<Serving>>), SourceError> {
        let at = self
            .utc(now)
            .ok_or_else(|| self.unavailable("the instant is out of range"))?;
        if self.catalogue.is_empty() {
            return Err(self.unavailable("the catalogue has no propagatable satellite"));
        }
        if let Some(newest) = self.catalogue.newest_epoch() {
            let age = (at - newest).abs().to_std().unwrap_or(Duration::MAX);
            if age > self.max_catalogue_age {
                return Err(self.unavailable(&format!(
                    "the catalogue's newest element set ({newest}) is {} days from {at}",
                    age.as_secs() / 86_400
                )));
            }
        }
        let whole = at.with_nanosecond(0).unwrap_or(at);
        let from = whole - ChronoDuration::seconds(i64::from(LOOKBACK_S));
        let seconds = LOOKBACK_S + HORIZON_STEPS as u32 + 1;
        let timeline = serving_timeline_with(
            &self.catalogue,
            &self.observer,
            &self.policy,
            from,
            seconds,
            self.search,
        )
        .map_err(|e: TimelineError| SourceError::Failed {
            source_name: "orbital".into(),
            error: Box::new(e),
        })?;
        Ok((from, timeline))
    }

    fn unavailable(&self, reason: &str) -> SourceError {
        SourceError::Unavailable {
            source_name: "orbital".into(),
            reason: reason.to_owned(),
        }
    }
}

impl HandoverSource for Orbital {
    fn name(&self) -> &str {
        "orbital"
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        let (from, timeline) = self.timeline(now)?;
        let at = self
            .utc(now)
            .ok_or_else(|| self.unavailable("the instant is out of range"))?;
        // Handover at entry i happens at from + i s; keep those in (now, now + 120 s].
        let lead = at - from;
        let offsets = handovers(&timeline).into_iter().filter_map(|i| {
            let offset = ChronoDuration::seconds(i as i64) - lead;
            let offset = offset.to_std().ok()?;
            (!offset.is_zero() && offset <= HORIZON).then_some(offset)
        });
        // Entries are whole UTC seconds, which is where both policies change satellite (the
        // Starlink one on its slot grid), so the instants are exact below a second.
        Ok(Forecast::from_offsets(
            ForecastSource::Orbital,
            now,
            offsets,
            HandoverTiming::SubSecond,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orbit::walker;

    fn tiny_catalogue() -> Arc<Catalogue> {
        let shells = [walker::Shell::delta("T", 550.0, 53.0, 6, 8, 1)];
        let text = walker::generate(&shells, walker::shipped_epoch()).unwrap();
        Arc::new(Catalogue::parse(&text, "tiny").unwrap())
    }

    #[test]
    fn instants_map_to_utc_through_the_epoch_pair_both_ways() {
        let epoch = Instant::now() + Duration::from_secs(100);
        let utc = walker::shipped_epoch();
        let o = Orbital::new(
            tiny_catalogue(),
            Observer::new(0.0, 0.0, 0.0).unwrap(),
            ServingPolicy::default(),
            epoch,
            utc,
        );
        assert_eq!(
            o.utc(epoch + Duration::from_millis(1500)),
            Some(utc + ChronoDuration::milliseconds(1500))
        );
        assert_eq!(
            o.utc(epoch - Duration::from_secs(60)),
            Some(utc - ChronoDuration::seconds(60))
        );
    }

    #[test]
    fn an_empty_or_stale_catalogue_is_unavailable_not_a_zero_forecast() {
        let epoch = Instant::now();
        let observer = Observer::new(0.0, 0.0, 0.0).unwrap();
        let mut empty = Orbital::new(
            Arc::new(Catalogue::default()),
            observer,
            ServingPolicy::default(),
            epoch,
            walker::shipped_epoch(),
        );
        assert!(matches!(
            empty.forecast(epoch),
            Err(SourceError::Unavailable { .. })
        ));
        let mut stale = Orbital::new(
            tiny_catalogue(),
            observer,
            ServingPolicy::default(),
            epoch,
            walker::shipped_epoch() + ChronoDuration::days(45),
        );
        let err = stale.forecast(epoch).unwrap_err();
        assert!(err.to_string().contains("45 days"), "{err}");
    }
}

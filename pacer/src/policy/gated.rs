//! The forecast-gated limit: a short queue limit only where handovers are forecast.

use super::{Heuristic, PolicyError, QueuePolicy};
use handover_predictor::Forecast;
use std::time::Duration;

/// One limit for intervals whose forecast holds a handover, another for those whose forecast
/// holds none (docs/architecture.md, "Queue policies and decisions").
///
/// Why: a short limit makes the pacer drain its queue faster than the pacing rate (the drain
/// rule, reference 1.4). After a handover the link is back and takes the burst. On a path whose
/// capacity falls and stays low for seconds (an LTE uplink), the burst only moves the queue into
/// the bottleneck's buffer, which overflows, and the losses freeze the video: the 200-ms limit
/// costs terrestrial-lte 27 % more freezes than libwebrtc's 2000 ms over 90 calls, the 500-ms
/// limit a difference the calls cannot tell from none
/// (docs/experiments/gated-limit-2026-12-07.md). The quiet limit is 500 ms unless named: the
/// paper's limit for an interval without handovers ([`Heuristic::limit_for`]`(0)`, section
/// III-B).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gated {
    busy: Duration,
    quiet: Duration,
}

impl Gated {
    /// `busy` while the forecast holds a handover, the paper's 500 ms while it holds none.
    pub fn new(busy: Duration) -> Self {
        Self::with_quiet(busy, Self::default_quiet())
    }

    /// The quiet limit unless named: the paper's limit for an interval without handovers.
    pub fn default_quiet() -> Duration {
        Heuristic::limit_for(0)
    }

    /// `busy` while the forecast holds a handover, `quiet` while it holds none.
    pub fn with_quiet(busy: Duration, quiet: Duration) -> Self {
        Self { busy, quiet }
    }

    /// The limit for an interval with `forecast`: `busy` if it holds a handover, else `quiet`.
    pub fn limit_for(&self, forecast: &Forecast) -> Duration {
        if forecast.handover_count() > 0 {
            self.busy
        } else {
            self.quiet
        }
    }
}

impl QueuePolicy for Gated {
    /// `gated:<busy ms>`, or `gated:<busy ms>/<quiet ms>` when the quiet limit is not
    /// [`Self::default_quiet`] (whole milliseconds, as `fixed:<ms>`).
    fn name(&self) -> String {
        if self.quiet == Self::default_quiet() {
            format!("gated:{}", self.busy.as_millis())
        } else {
            format!("gated:{}/{}", self.busy.as_millis(), self.quiet.as_millis())
        }
    }

    fn decide(&mut self, forecast: &Forecast) -> Result<Duration, PolicyError> {
        Ok(self.limit_for(forecast))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::assert_limits;
    use super::*;
    use std::time::Instant;

    #[test]
    fn the_short_limit_runs_only_where_a_handover_is_forecast() {
        let mut policy = Gated::new(Duration::from_millis(200));
        assert_eq!(policy.name(), "gated:200");
        let now = Instant::now();
        assert_limits(
            &mut policy,
            now,
            &[(0, 500), (1, 200), (8, 200), (120, 200)],
        );
        assert_eq!(
            policy.decide(&Forecast::none(now)).unwrap(),
            Duration::from_millis(500)
        );
    }

    #[test]
    fn a_quiet_limit_other_than_the_papers_is_named() {
        let mut policy = Gated::with_quiet(Duration::from_millis(200), Duration::from_millis(2000));
        assert_eq!(policy.name(), "gated:200/2000");
        assert_limits(&mut policy, Instant::now(), &[(0, 2000), (3, 200)]);
    }
}

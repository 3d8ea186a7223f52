//! The fixed-limit policy: WebRTC's default, and any constant limit.

use super::{PolicyError, QueuePolicy};
use crate::pacing::WEBRTC_DEFAULT_QUEUE_TIME_LIMIT;
use handover_predictor::Forecast;
use std::time::Duration;

/// Always the same limit, whatever the forecast.
///
/// [`Fixed::webrtc_default`] is 2000 ms, libwebrtc's `kMaxExpectedQueueLength`: the `default`
/// baseline (docs/architecture.md, "Queue policies and decisions"), and the limit the
/// [`PolicyController`](super::PolicyController) falls back to whenever a source or a policy
/// fails, because it is what an unmodified WebRTC sender would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixed {
    limit: Duration,
    name: String,
}

impl Fixed {
    /// WebRTC's default, 2000 ms, named `"default"` in telemetry
    /// (docs/architecture.md, "The telemetry contract").
    pub fn webrtc_default() -> Self {
        Self {
            limit: WEBRTC_DEFAULT_QUEUE_TIME_LIMIT,
            name: "default".to_owned(),
        }
    }

    /// A constant `limit`, named `"fixed:<ms>"` in telemetry (whole milliseconds;
    /// docs/architecture.md, "The telemetry contract"). The limit is returned as given; the policy
    /// controller clamps it.
    pub fn new(limit: Duration) -> Self {
        Self {
            limit,
            name: format!("fixed:{}", limit.as_millis()),
        }
    }

    /// The limit this policy always returns.
    pub fn limit(&self) -> Duration {
        self.limit
    }
}

impl QueuePolicy for Fixed {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn decide(&mut self, _forecast: &Forecast) -> Result<Duration, PolicyError> {
        Ok(self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use handover_predictor::{ForecastSource, HORIZON_STEPS};
    use std::time::Instant;

    #[test]
    fn the_webrtc_default_is_2000_ms_named_default_whatever_the_forecast() {
        let mut policy = Fixed::webrtc_default();
        assert_eq!(policy.name(), "default");
        assert_eq!(policy.limit(), Duration::from_millis(2000));
        let now = Instant::now();
        let busy = Forecast::from_bits(ForecastSource::Trace, now, &[1u8; HORIZON_STEPS]).unwrap();
        assert_eq!(policy.decide(&busy).unwrap(), Duration::from_millis(2000));
        assert_eq!(
            policy.decide(&Forecast::none(now)).unwrap(),
            Duration::from_millis(2000)
        );
    }

    #[test]
    fn a_fixed_limit_is_named_by_its_whole_milliseconds() {
        let mut policy = Fixed::new(Duration::from_micros(750_400));
        assert_eq!(policy.name(), "fixed:750");
        assert_eq!(
            policy.decide(&Forecast::none(Instant::now())).unwrap(),
            Duration::from_micros(750_400)
        );
        assert_eq!(Fixed::new(Duration::from_secs(2)).name(), "fixed:2000");
    }
}

//! What the queue policies' unit tests share: forecasts with a given handover count, and the
//! check of a policy's limit for each count.

use super::QueuePolicy;
use handover_predictor::{Forecast, ForecastSource, HORIZON_STEPS};
use std::time::{Duration, Instant};

/// A forecast made at `at` whose first `handovers` steps are handovers.
pub(super) fn forecast_with(at: Instant, handovers: usize) -> Forecast {
    let mut bits = [0u8; HORIZON_STEPS];
    for bit in bits.iter_mut().take(handovers) {
        *bit = 1;
    }
    Forecast::from_bits(ForecastSource::Trace, at, &bits).unwrap()
}

/// Asserts that `policy` answers each `(handovers, limit ms)` row of `table` for forecasts made
/// at `at`.
pub(super) fn assert_limits(policy: &mut dyn QueuePolicy, at: Instant, table: &[(usize, u64)]) {
    for &(handovers, limit_ms) in table {
        let forecast = forecast_with(at, handovers);
        assert_eq!(forecast.handover_count(), handovers);
        assert_eq!(
            policy.decide(&forecast).unwrap(),
            Duration::from_millis(limit_ms),
            "{handovers} handovers"
        );
    }
}

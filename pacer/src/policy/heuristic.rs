//! The handover-count heuristic (docs/architecture.md, "Queue policies and decisions").

use super::{PolicyError, QueuePolicy};
use handover_predictor::Forecast;
use std::time::Duration;

/// Picks the limit from the number of handovers in the forecast
/// (docs/architecture.md, "Queue policies and decisions"):
///
/// | handovers | limit   |
/// |-----------|---------|
/// | 0         | 500 ms  |
/// | 1-2       | 600 ms  |
/// | 3-5       | 900 ms  |
/// | 6-7       | 2000 ms |
/// | 8+        | 4000 ms |
///
/// The five limits are the paper's clustered action set (section III-B); more handovers mean a
/// longer queue, so the pacer holds packets through disruptions instead of bursting them into a
/// broken link, while quiet intervals keep self-inflicted delay low. Eight is what Starlink's 15-s
/// cadence puts in 120 s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Heuristic;

impl Heuristic {
    /// The table's limit for `handovers` expected in the interval.
    pub fn limit_for(handovers: usize) -> Duration {
        Duration::from_millis(match handovers {
            0 => 500,
            1..=2 => 600,
            3..=5 => 900,
            6..=7 => 2000,
            _ => 4000,
        })
    }
}

impl QueuePolicy for Heuristic {
    fn name(&self) -> String {
        "heuristic".to_owned()
    }

    fn decide(&mut self, forecast: &Forecast) -> Result<Duration, PolicyError> {
        Ok(Self::limit_for(forecast.handover_count()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::assert_limits;
    use super::*;
    use std::time::Instant;

    #[test]
    fn the_heuristic_follows_the_design_table_at_every_boundary() {
        let mut policy = Heuristic;
        assert_eq!(policy.name(), "heuristic");
        assert_limits(
            &mut policy,
            Instant::now(),
            &[
                (0, 500),
                (1, 600),
                (2, 600),
                (3, 900),
                (5, 900),
                (6, 2000),
                (7, 2000),
                (8, 4000),
                (120, 4000),
            ],
        );
    }
}

//! Shared pieces of the dish integration tests: a fixed start instant, the synthetic truth, and
//! scoring against it.

#![allow(dead_code)]

use chrono::{DateTime, Duration, TimeZone, Utc};
use handover_predictor::dish::{Score, SkyTruth, SyntheticSky, score_handovers, truth_handovers};

/// Dish time at which scenarios start: 5 s into a slot (10:00:17, slot started at 10:00:12).
pub fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 5, 12, 10, 0, 17).unwrap()
}

/// The synthetic sky used by the tests, covering `minutes` after [`start`] with margin.
pub fn sky(seed: u64, minutes: i64) -> SyntheticSky {
    SyntheticSky::new(seed, start(), Duration::minutes(minutes + 1))
}

/// Detected handovers scored against the truth's handovers in `(from, to]`, +/- 1 s.
pub fn score_against_truth(
    detected: &[DateTime<Utc>],
    truth: &dyn SkyTruth,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> (Score, Vec<DateTime<Utc>>) {
    let truth = truth_handovers(truth, from, to);
    let detected: Vec<_> = detected
        .iter()
        .copied()
        .filter(|&d| d > from && d <= to)
        .collect();
    (
        score_handovers(&detected, &truth, Duration::seconds(1)),
        truth,
    )
}

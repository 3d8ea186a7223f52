//! The ground-truth handover timeline of a realised scenario: when the serving satellite
//! changes, and the slot boundaries the capacity process steps at.
//!
//! It is what the link's handover events are built from, what the oracle forecast reads
//! ([`HandoverTimeline::oracle`]) and what telemetry records as `observed`.

use super::orbit::End;
use chrono::{DateTime, Timelike, Utc};
use handover_predictor::sky::SLOT_BOUNDARY_SECONDS;
use handover_predictor::{ForecastSource, TimelineSource};
use serde::Serialize;
use std::time::{Duration, Instant};

/// One handover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Handover {
    /// Milliseconds after the call start.
    pub at_ms: u64,
    /// Where: the local terminal or the far peer (slot-drawn handovers are local).
    pub end: End,
    /// Satellite before (NORAD number), when an orbit source knows it.
    pub from: Option<u64>,
    /// Satellite after.
    pub to: Option<u64>,
}

/// The handover timeline of one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HandoverTimeline {
    /// Where it came from: `none`, `slots`, `grid` or `orbit`.
    pub source: &'static str,
    /// Whether `boundaries_ms` is a slot grid (Starlink's, or a trace's), as opposed to the
    /// handover instants of a policy without slots.
    pub slotted: bool,
    /// Slot boundaries in `(0, duration)`, ms: when a slot-stepped capacity takes a new value.
    /// For a delay-policy orbit source (no slots), the handover instants.
    pub boundaries_ms: Vec<u64>,
    /// Handovers in time order.
    pub handovers: Vec<Handover>,
    /// Intervals `[from, to)` in ms with no satellite at an end (orbit sources): link outages.
    pub outages_ms: Vec<(u64, u64)>,
}

impl HandoverTimeline {
    /// No handovers.
    pub fn none() -> Self {
        Self {
            source: "none",
            slotted: false,
            boundaries_ms: Vec::new(),
            handovers: Vec::new(),
            outages_ms: Vec::new(),
        }
    }

    /// Distinct handover instants, ms, ascending (a handover at both ends in the same second is
    /// one instant).
    pub fn instants_ms(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.handovers.iter().map(|h| h.at_ms).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Handovers per minute over `duration`.
    pub fn per_minute(&self, duration: Duration) -> f64 {
        let minutes = duration.as_secs_f64() / 60.0;
        if minutes > 0.0 {
            self.instants_ms().len() as f64 / minutes
        } else {
            0.0
        }
    }

    /// The timeline as a forecast source with the call start at `epoch`: the `oracle` of
    /// docs/architecture.md, "The forecast contract" (evaluation only).
    pub fn oracle(&self, epoch: Instant) -> TimelineSource {
        TimelineSource::new(
            "scenario-oracle",
            ForecastSource::Oracle,
            epoch,
            self.instants_ms().into_iter().map(Duration::from_millis),
        )
    }

    /// The 0/1 handover indicator per second for `seconds` seconds: entry `k` is 1 when a
    /// handover falls in `(k s, (k+1) s]` (the forecast step convention: docs/architecture.md, "The forecast contract").
    pub fn per_second(&self, seconds: usize) -> Vec<u8> {
        let mut v = vec![0u8; seconds];
        for ms in self.instants_ms() {
            // (k s, (k+1) s] contains ms when k = ceil(ms / 1000) - 1.
            if ms == 0 {
                continue;
            }
            let k = (ms.div_ceil(1000) - 1) as usize;
            if k < seconds {
                v[k] = 1;
            }
        }
        v
    }
}

/// Starlink slot boundaries in `(0, duration_ms)` for a call starting at `start`: the instants
/// at which the UTC second of the minute is 12, 27, 42 or 57 (reference C1).
pub fn slot_boundaries_ms(start: DateTime<Utc>, duration_ms: u64) -> Vec<u64> {
    let start_ms_of_minute =
        u64::from(start.second()) * 1000 + u64::from(start.nanosecond() / 1_000_000).min(999);
    let mut out = Vec::new();
    // The first minute boundary at or before start, then each boundary second after it.
    let mut minute = 0u64;
    loop {
        let mut any = false;
        for &s in &SLOT_BOUNDARY_SECONDS {
            let at = minute * 60_000 + u64::from(s) * 1000;
            if at <= start_ms_of_minute {
                continue;
            }
            let offset = at - start_ms_of_minute;
            if offset >= duration_ms {
                return out;
            }
            out.push(offset);
            any = true;
        }
        if !any && minute > 0 {
            return out;
        }
        minute += 1;
    }
}

/// A fixed grid `first, first + period, ...` in `(0, duration_ms)`.
pub fn grid_ms(first_ms: u64, period_ms: u64, duration_ms: u64) -> Vec<u64> {
    let period = period_ms.max(1);
    std::iter::successors(Some(first_ms), |&t| Some(t + period))
        .take_while(|&t| t < duration_ms)
        .filter(|&t| t > 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn slot_boundaries_fall_at_seconds_12_27_42_57_of_each_minute() {
        let start = Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 0).unwrap();
        assert_eq!(
            slot_boundaries_ms(start, 75_000),
            vec![12_000, 27_000, 42_000, 57_000, 72_000]
        );
        let start = Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 30).unwrap();
        assert_eq!(
            slot_boundaries_ms(start, 45_000),
            vec![12_000, 27_000, 42_000]
        );
        let start = Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 57).unwrap();
        assert_eq!(slot_boundaries_ms(start, 16_000), vec![15_000]);
    }

    #[test]
    fn per_second_marks_the_step_ending_at_or_after_the_handover() {
        let t = HandoverTimeline {
            source: "grid",
            slotted: true,
            boundaries_ms: vec![],
            handovers: [1_000, 1_500, 3_001]
                .iter()
                .map(|&at_ms| Handover {
                    at_ms,
                    end: End::Local,
                    from: None,
                    to: None,
                })
                .collect(),
            outages_ms: vec![],
        };
        // 1000 ms is in (0 s, 1 s]; 1500 in (1 s, 2 s]; 3001 in (3 s, 4 s].
        assert_eq!(t.per_second(5), vec![1, 1, 0, 1, 0]);
    }

    #[test]
    fn a_grid_skips_time_zero_and_stops_before_the_end() {
        assert_eq!(grid_ms(0, 15_000, 45_000), vec![15_000, 30_000]);
        assert_eq!(grid_ms(8_750, 15_000, 40_000), vec![8_750, 23_750, 38_750]);
    }
}

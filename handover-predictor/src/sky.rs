//! Shared vocabulary of the orbit model, the dish and the simulated dish: where a satellite is in
//! the observer's sky, which one serves the dish, and Starlink's 15-second slot grid.

use chrono::{DateTime, Duration as ChronoDuration, Timelike, Utc};

/// A direction and distance in the observer's topocentric frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkyPosition {
    /// Azimuth, degrees clockwise from true north, in [0, 360).
    pub azimuth_deg: f64,
    /// Elevation above the horizon, degrees, in [-90, 90].
    pub elevation_deg: f64,
    /// Slant range, km.
    pub range_km: f64,
}

/// The satellite serving the dish at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Serving {
    /// The satellite's NORAD catalogue number.
    pub norad_id: u64,
    /// Where it is.
    pub position: SkyPosition,
}

/// Seconds of each UTC minute at which Starlink reassigns satellites: 12, 27, 42 and 57
/// (reference C1; also visible in the mmsys24 ping traces, `../shared/data/README.md`).
pub const SLOT_BOUNDARY_SECONDS: [u32; 4] = [12, 27, 42, 57];

/// Length of a Starlink scheduling slot (reference C1).
pub const SLOT_LENGTH_S: i64 = 15;

/// Whether `t` falls exactly on a slot boundary (whole second 12, 27, 42 or 57, zero nanos).
pub fn is_slot_boundary(t: DateTime<Utc>) -> bool {
    t.nanosecond() == 0 && SLOT_BOUNDARY_SECONDS.contains(&t.second())
}

/// The latest slot boundary at or before `t`.
pub fn slot_start(t: DateTime<Utc>) -> DateTime<Utc> {
    let whole = t.with_nanosecond(0).unwrap_or(t);
    let into_slot = (i64::from(whole.second()) + 60 - 12) % SLOT_LENGTH_S;
    whole - ChronoDuration::seconds(into_slot)
}

/// The first slot boundary strictly after `t`.
pub fn next_slot_boundary(t: DateTime<Utc>) -> DateTime<Utc> {
    slot_start(t) + ChronoDuration::seconds(SLOT_LENGTH_S)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 5, 12, h, m, s).unwrap()
    }

    #[test]
    fn slots_start_at_seconds_12_27_42_and_57() {
        assert_eq!(slot_start(at(10, 0, 12)), at(10, 0, 12));
        assert_eq!(slot_start(at(10, 0, 26)), at(10, 0, 12));
        assert_eq!(slot_start(at(10, 0, 27)), at(10, 0, 27));
        assert_eq!(slot_start(at(10, 1, 5)), at(10, 0, 57));
        assert_eq!(slot_start(at(10, 0, 0)), at(9, 59, 57));
        assert_eq!(next_slot_boundary(at(10, 0, 57)), at(10, 1, 12));
        assert_eq!(next_slot_boundary(at(10, 0, 11)), at(10, 0, 12));
        assert!(is_slot_boundary(at(10, 0, 42)));
        assert!(!is_slot_boundary(at(10, 0, 43)));
        let half = at(10, 0, 12) + ChronoDuration::milliseconds(500);
        assert!(!is_slot_boundary(half));
        assert_eq!(slot_start(half), at(10, 0, 12));
    }
}

//! Virtual time: integer nanoseconds since an epoch the caller chooses.
//!
//! The receiver's timing model ([`crate::receiver`]) runs on it, in rtc-client's simulated and
//! real calls alike and in the sender's replay of the receiver
//! ([`crate::playout`]'s weighed floor); rtc-client's link model and simulator run on it too.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::{Duration, Instant};

/// Nanoseconds in one second.
const NANOS_PER_SEC: u64 = 1_000_000_000;
/// Nanoseconds in one millisecond.
const NANOS_PER_MS: u64 = 1_000_000;

/// An instant of virtual time: nanoseconds since an epoch.
///
/// Code on virtual time never reads a clock. Every instant it sees or returns is a [`Time`], a
/// count of nanoseconds since an epoch that the caller chooses (the start of a simulated call, or
/// an [`Instant`] held by a real-time relay). Spans are [`std::time::Duration`]. Integer
/// nanoseconds make every run exactly reproducible (no floating-point time), and a `u64` of them
/// covers 584 years, far beyond any call.
///
/// Callers driven by [`Instant`]s convert with [`Time::from_instant`] and [`Time::to_instant`].
///
/// Arithmetic with [`Duration`] saturates at [`Time::MAX`] instead of overflowing, so an
/// "infinite" outage or a far-future instant cannot panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(u64);

impl Time {
    /// The epoch.
    pub const ZERO: Time = Time(0);
    /// The latest representable instant (about 584 years after the epoch); used as "never".
    pub const MAX: Time = Time(u64::MAX);

    /// The instant `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> Time {
        Time(nanos)
    }

    /// The instant `micros` microseconds after the epoch (saturating).
    pub const fn from_micros(micros: u64) -> Time {
        Time(micros.saturating_mul(1_000))
    }

    /// The instant `millis` milliseconds after the epoch (saturating).
    pub const fn from_millis(millis: u64) -> Time {
        Time(millis.saturating_mul(NANOS_PER_MS))
    }

    /// The instant `secs` seconds after the epoch (saturating).
    pub const fn from_secs(secs: u64) -> Time {
        Time(secs.saturating_mul(NANOS_PER_SEC))
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Whole milliseconds since the epoch (truncated).
    pub const fn as_millis(self) -> u64 {
        self.0 / NANOS_PER_MS
    }

    /// Seconds since the epoch, as a float (for reports and plots only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    /// The span since the epoch.
    pub const fn since_epoch(self) -> Duration {
        Duration::from_nanos(self.0)
    }

    /// `self + d`, saturating at [`Time::MAX`].
    pub fn saturating_add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(duration_nanos(d)))
    }

    /// `self - earlier`, or zero when `earlier` is later than `self`.
    pub const fn saturating_duration_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self - earlier`, or `None` when `earlier` is later than `self`.
    pub const fn checked_duration_since(self, earlier: Time) -> Option<Duration> {
        match self.0.checked_sub(earlier.0) {
            Some(n) => Some(Duration::from_nanos(n)),
            None => None,
        }
    }

    /// `now` as a [`Time`] relative to `epoch`; instants before the epoch map to [`Time::ZERO`].
    pub fn from_instant(epoch: Instant, now: Instant) -> Time {
        Time(duration_nanos(now.saturating_duration_since(epoch)))
    }

    /// This instant as an [`Instant`], given the [`Instant`] of the epoch. An instant the
    /// platform cannot represent (centuries away, e.g. [`Time::MAX`]) is clamped to 2^32 s
    /// (136 years) after the epoch, or to the epoch itself where even that does not fit.
    pub fn to_instant(self, epoch: Instant) -> Instant {
        epoch
            .checked_add(self.since_epoch())
            .or_else(|| epoch.checked_add(Duration::from_secs(1 << 32)))
            .unwrap_or(epoch)
    }
}

/// A [`Duration`] in whole nanoseconds, saturating at `u64::MAX` (584 years).
fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Time {
    type Output = Time;

    /// Saturating: see [`Time::saturating_add`].
    fn add(self, rhs: Duration) -> Time {
        self.saturating_add(rhs)
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, rhs: Duration) {
        *self = self.saturating_add(rhs);
    }
}

impl Sub<Duration> for Time {
    type Output = Time;

    /// Saturating at [`Time::ZERO`].
    fn sub(self, rhs: Duration) -> Time {
        Time(self.0.saturating_sub(duration_nanos(rhs)))
    }
}

impl Sub<Time> for Time {
    type Output = Duration;

    /// Saturating: see [`Time::saturating_duration_since`].
    fn sub(self, rhs: Time) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

impl fmt::Display for Time {
    /// Seconds with nanosecond precision, e.g. `12.000001500s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}s",
            self.0 / NANOS_PER_SEC,
            self.0 % NANOS_PER_SEC
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_overflowing() {
        assert_eq!(Time::MAX + Duration::from_secs(1), Time::MAX);
        assert_eq!(Time::ZERO - Time::from_secs(1), Duration::ZERO);
        assert_eq!(
            Time::from_millis(3) - Time::from_millis(1),
            Duration::from_millis(2)
        );
        assert_eq!(Time::ZERO + Duration::MAX, Time::MAX);
    }

    #[test]
    fn instants_round_trip_through_the_epoch() {
        let epoch = Instant::now();
        let later = epoch + Duration::from_micros(1_234_567);
        let t = Time::from_instant(epoch, later);
        assert_eq!(t, Time::from_nanos(1_234_567_000));
        assert_eq!(t.to_instant(epoch), later);
        assert_eq!(Time::from_instant(later, epoch), Time::ZERO);
    }

    #[test]
    fn display_shows_seconds_with_nanoseconds() {
        assert_eq!(
            Time::from_nanos(12_000_001_500).to_string(),
            "12.000001500s"
        );
    }
}

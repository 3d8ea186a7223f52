//! Virtual time: integer nanoseconds since the link's epoch ([`pacer::time::Time`], which the
//! receiver's timing model in pacer runs on too), and the unit constants the link's statistics
//! use.

use std::time::Duration;

pub use pacer::time::Time;

/// Nanoseconds in one second.
pub(crate) const NANOS_PER_SEC: u64 = 1_000_000_000;
/// Nanoseconds in one millisecond.
pub(crate) const NANOS_PER_MS: u64 = 1_000_000;

/// A [`Duration`] in whole nanoseconds, saturating at `u64::MAX` (584 years).
pub(crate) fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

//! One-way propagation delay: constant, a series, or derived from geometry.

use super::series::DelaySeries;
use super::time::{Time, duration_nanos};
use std::sync::Arc;
use std::time::Duration;

/// The base one-way delay of a link (handover [`super::DelayChange`]s apply on top).
///
/// The delay is added after the bottleneck and evaluated at the instant the packet leaves it
/// (the instant it starts propagating). A packet's delivery instant is therefore
/// `departure + delay(departure)`. With a varying delay a later packet could overtake an earlier
/// one; by default the link forbids it (a packet is never delivered before the one sent ahead of
/// it, [`super::LinkConfig::allow_reordering`]), which is what a single path does: Mahimahi's
/// delay shell never reorders (its delay is constant), and LeoReplayer's per-packet delay at send
/// time can reorder across a downward step, which real Starlink paths are not observed to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Delay {
    /// A constant delay.
    Constant(Duration),
    /// A delay series (LeoReplayer's 10-ms file, a per-second series, or geometry).
    Series(Arc<DelaySeries>),
}

impl Default for Delay {
    /// No delay.
    fn default() -> Delay {
        Delay::Constant(Duration::ZERO)
    }
}

impl Delay {
    /// A constant delay.
    pub fn constant(delay: Duration) -> Delay {
        Delay::Constant(delay)
    }

    /// A delay series.
    pub fn series(series: DelaySeries) -> Delay {
        Delay::Series(Arc::new(series))
    }

    /// The base delay at `t`, nanoseconds.
    #[inline]
    pub(crate) fn nanos_at(&self, t: Time) -> u64 {
        match self {
            Delay::Constant(d) => duration_nanos(*d),
            Delay::Series(s) => s.nanos_at(t),
        }
    }

    /// The base delay at `t` (before handover delay steps).
    pub fn at(&self, t: Time) -> Duration {
        Duration::from_nanos(self.nanos_at(t))
    }
}

//! The application's way into a pacer that lives inside an interceptor chain.
//!
//! A webrtc-rs chain owns its interceptors and passes nothing but packets across its boundary
//! (`Ein`/`Eout` are `()`), so the only channel in or out is shared state captured at build time
//! (reference 3.4). The handle is that state: the application or the policy writes a queue time
//! limit, the pacer picks it up at its next event, and publishes a stats snapshot back.

use super::config::clamp_queue_time_limit;
use super::stats::PacerStats;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A cloneable, thread-safe handle on a pacer's queue time limit and stats.
#[derive(Debug, Clone)]
pub struct PacerHandle {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// The requested limit in nanoseconds, already clamped.
    limit_nanos: AtomicU64,
    stats: Mutex<PacerStats>,
}

impl PacerHandle {
    /// A handle whose requested limit starts at `limit` (clamped to [50 ms, 10 s]).
    ///
    /// [`HandoverAwarePacer::builder`](crate::HandoverAwarePacer::builder) creates one for you;
    /// a driver of a bare [`PacingController`](crate::PacingController) can create its own and
    /// apply [`PacerHandle::queue_time_limit`] itself.
    pub fn new(limit: Duration) -> Self {
        Self::starting_as(PacerStats {
            queue_time_limit: clamp_queue_time_limit(limit),
            ..PacerStats::default()
        })
    }

    /// A handle whose stats start as `initial` and whose requested limit is
    /// `initial.queue_time_limit` (clamped).
    pub(crate) fn starting_as(initial: PacerStats) -> Self {
        let limit = clamp_queue_time_limit(initial.queue_time_limit);
        Self {
            shared: Arc::new(Shared {
                limit_nanos: AtomicU64::new(duration_nanos(limit)),
                stats: Mutex::new(PacerStats {
                    queue_time_limit: limit,
                    ..initial
                }),
            }),
        }
    }

    /// Asks the pacer to use `limit` from its next event on; returns the limit after clamping to
    /// [50 ms, 10 s].
    pub fn set_queue_time_limit(&self, limit: Duration) -> Duration {
        let limit = clamp_queue_time_limit(limit);
        self.shared
            .limit_nanos
            .store(duration_nanos(limit), Ordering::Release);
        limit
    }

    /// The limit last requested (clamped).
    pub fn queue_time_limit(&self) -> Duration {
        Duration::from_nanos(self.shared.limit_nanos.load(Ordering::Acquire))
    }

    /// The pacer's last published stats.
    pub fn stats(&self) -> PacerStats {
        *self
            .shared
            .stats
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Publishes a stats snapshot; called by the pacer.
    pub fn publish(&self, stats: PacerStats) {
        *self
            .shared
            .stats
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = stats;
    }
}

fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handle_clamps_and_every_clone_sees_the_same_limit() {
        let handle = PacerHandle::new(Duration::from_secs(2));
        let other = handle.clone();
        assert_eq!(
            handle.set_queue_time_limit(Duration::from_millis(1)),
            Duration::from_millis(50)
        );
        assert_eq!(other.queue_time_limit(), Duration::from_millis(50));
        assert_eq!(
            other.set_queue_time_limit(Duration::from_secs(60)),
            Duration::from_secs(10)
        );
        assert_eq!(handle.queue_time_limit(), Duration::from_secs(10));
    }
}

//! The read-only view of a [`GoogCc`](super::GoogCc) for callers outside the chain.

use super::overuse::BandwidthUsage;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Everything a simulator records about the estimator after each feedback or process tick.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct GoogCcSnapshot {
    /// Feedbacks and process ticks handled so far.
    pub updates: u64,
    /// The target (min of delay- and loss-based, clamped), bps.
    pub target_bps: f64,
    /// The delay-based (AIMD) estimate, bps.
    pub delay_based_bps: f64,
    /// The rate the loss-based rule last proposed, before the delay-based cap, bps.
    pub loss_based_bps: f64,
    /// The acknowledged bitrate, bps, once known.
    pub acknowledged_bps: Option<f64>,
    /// The RTT the loss-based estimator uses (minimum over the last feedback).
    pub rtt: Option<Duration>,
    /// The RTT the AIMD controller uses (mean of per-feedback maxima).
    pub aimd_rtt: Option<Duration>,
    /// The delay detector's state.
    pub state: BandwidthUsage,
    /// The adaptive threshold, ms.
    pub threshold_ms: f64,
    /// The last modified trend, ms.
    pub modified_trend_ms: f64,
    /// The last loss fraction the loss-based estimator acted on.
    pub loss_fraction: f64,
    /// The link-capacity estimate, bps, when AIMD has one.
    pub link_capacity_bps: Option<f64>,
    /// Whether the sender is in an application-limited region.
    pub in_alr: bool,
}

/// A cloneable, thread-safe read-only handle on a [`GoogCc`](super::GoogCc)'s state.
#[derive(Debug, Clone, Default)]
pub struct GoogCcHandle {
    shared: Arc<Mutex<GoogCcSnapshot>>,
}

impl GoogCcHandle {
    /// The latest snapshot.
    pub fn snapshot(&self) -> GoogCcSnapshot {
        *self
            .shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The current target, bps.
    pub fn target_bps(&self) -> f64 {
        self.snapshot().target_bps
    }

    /// The detector state.
    pub fn state(&self) -> BandwidthUsage {
        self.snapshot().state
    }

    pub(super) fn publish(&self, snapshot: GoogCcSnapshot) {
        *self
            .shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = snapshot;
    }
}

//! A handover-aware send-side pacer for webrtc-rs.
//!
//! libwebrtc's pacer holds packets in a queue and releases them at 1.1 x the estimated bandwidth,
//! but never lets the average queued packet wait longer than a *queue time limit* (2 s by
//! default): when the queue would take longer than that, it drains faster than the estimate.
//! The paper "Dynamic Pacing for Real-time Satellite Traffic" shows that no single limit suits a
//! satellite path: stable periods want a short queue, handover-heavy periods a long one. This
//! crate provides:
//!
//! - [`PacingController`]: a sans-I/O pacer with libwebrtc's semantics (debt-based leaky bucket,
//!   pacing factor, priority classes, queue time limit with the drain rule, expected queue time,
//!   encoder-pause signal), generic over the packet payload;
//! - [`HandoverAwarePacer`]: the webrtc-rs interceptor for `Slot::Pacer` that wraps it, built
//!   together with a [`PacerHandle`] that sets the limit while a call runs;
//! - the policy seam: [`QueuePolicy`] and [`PolicyController`], which choose a limit every
//!   decision interval from a handover [`Forecast`](handover_predictor::Forecast);
//! - the telemetry records every call writes and the trainer reads ([`telemetry`]).
//!
//! Nothing in the core reads a clock: every entry point takes `now`, so the same code runs in a
//! real call and in a virtual-time simulation.

#![forbid(unsafe_code)]

/// The forecast contract and handover sources, re-exported so that an application can name
/// `Forecast`, `TimelineSource` and friends without a second dependency.
pub use handover_predictor;

mod config;
mod controller;
pub mod cwnd;
pub mod googcc;
mod handle;
mod interceptor;
mod packet;
pub mod policy;
pub mod prober;
mod queue;
mod stats;
pub mod telemetry;

pub use config::{
    MAX_QUEUE_TIME_LIMIT, MIN_QUEUE_TIME_LIMIT, PacingConfig, WEBRTC_DEFAULT_QUEUE_TIME_LIMIT,
    clamp_queue_time_limit,
};
pub use controller::{FrameInfo, KeepAlive, PacingController, Padding, Released};
pub use cwnd::{CwndChannel, CwndConfig, CwndMode, CwndSnapshot};
pub use googcc::{GoogCc, GoogCcConfig, GoogCcHandle};
pub use handle::PacerHandle;
pub use interceptor::{FrameInfoFn, HandoverAwarePacer, HandoverAwarePacerBuilder};
pub use packet::PacketKind;
#[cfg(feature = "learned")]
pub use policy::OnnxPolicy;
pub use policy::{Decision, Fixed, Heuristic, PolicyController, QueuePolicy, Random};
pub use prober::{ProbeChannel, ProbeClusterConfig};
pub use stats::PacerStats;

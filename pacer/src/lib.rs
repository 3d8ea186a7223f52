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
#![warn(unreachable_pub, unnameable_types)]

mod config;
mod controller;
mod cwnd;
mod googcc;
mod handle;
mod interceptor;
mod packet;
mod policy;
mod prober;
mod queue;
mod stats;
pub mod telemetry;

pub use policy::card;

/// The forecast contract: what a [`QueuePolicy`] decides from and a [`HandoverSource`] produces
/// (docs/architecture.md, "The forecast contract"). Re-exported so that an application can feed
/// the policy controller without depending on handover-predictor itself.
pub use handover_predictor::{
    CUMULATIVE_NORM, Forecast, ForecastError, ForecastSource, HORIZON_STEPS, HandoverSource,
    HandoverSteps, NoHandovers, SourceError, TimelineSource,
};

pub use config::{
    MAX_QUEUE_TIME_LIMIT, MIN_QUEUE_TIME_LIMIT, PacingConfig, WEBRTC_DEFAULT_QUEUE_TIME_LIMIT,
    clamp_queue_time_limit,
};
pub use controller::{FrameInfo, KeepAlive, PacingController, Padding, Released};
pub use cwnd::{CwndChannel, CwndConfig, CwndMode, CwndSnapshot, frame_drop_interval};
pub use googcc::{BandwidthUsage, GoogCc, GoogCcConfig, GoogCcHandle, GoogCcSnapshot};
pub use handle::PacerHandle;
pub use interceptor::{FrameInfoFn, HandoverAwarePacer, HandoverAwarePacerBuilder};
pub use packet::PacketKind;
pub use policy::{
    COLLECTION_ACTIONS_MS, DEFAULT_DECISION_INTERVAL, Decision, Fixed, Heuristic, PolicyController,
    PolicyError, QueuePolicy, Random,
};
#[cfg(feature = "learned")]
pub use policy::{LoadError, OnnxPolicy};
pub use prober::{ProbeChannel, ProbeClusterConfig};
pub use stats::PacerStats;

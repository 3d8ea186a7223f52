//! The pacer: libwebrtc's `PacingController` as a sans-I/O core ([`PacingController`]), its
//! webrtc-rs interceptor for `Slot::Pacer` ([`HandoverAwarePacer`]) with the handle that sets the
//! queue time limit while a call runs ([`PacerHandle`]), the probe clusters GoogCC posts
//! ([`ProbeChannel`]), and the queue through which repair packets come back from the FEC
//! generator ([`RepairQueue`]). Semantics and sources: docs/architecture.md, "The data path".

mod config;
mod controller;
mod handle;
mod interceptor;
mod packet;
mod prober;
mod queue;
mod repair;
mod stats;

pub use config::{
    MAX_QUEUE_TIME_LIMIT, MIN_QUEUE_TIME_LIMIT, PacingConfig, WEBRTC_DEFAULT_QUEUE_TIME_LIMIT,
    clamp_queue_time_limit,
};
pub use controller::{FrameInfo, KeepAlive, PacingController, Padding, Released};
pub use handle::PacerHandle;
pub use interceptor::{FrameInfoFn, HandoverAwarePacer, HandoverAwarePacerBuilder};
pub use packet::PacketKind;
pub(crate) use prober::{MIN_PROBE_DURATION, MIN_PROBE_PACKETS_SENT};
pub use prober::{ProbeChannel, ProbeClusterConfig};
pub use repair::{RepairQueue, SequenceCounter};
pub use stats::PacerStats;

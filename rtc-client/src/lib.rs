//! Calls over emulated LEO links.
//!
//! - [`link`]: a one-direction, sans-I/O link model in integer virtual time (capacity, drop-tail
//!   buffer, delay, loss, handover events) and readers for the trace formats the field uses.
//! - [`media`]: the sans-I/O media engine: a synthetic video encoder that follows the target
//!   bitrate, an RTP packetizer, a receiver-side frame assembler, and a QoE meter with WebRTC's
//!   definitions.
//! - [`scenario`]: TOML scenario files describing a call's forward and reverse links and its
//!   handover timeline, calibrated to real traces.
//! - [`call`]: the call layer simulated and real calls share: the call's choices and sender
//!   options, the sender chain (pacer, estimator, congestion window), the camera and the
//!   decision interval's telemetry record.
//! - [`nack`]: libwebrtc-like loss recovery (NACK generator and responder, RTX).
//! - [`experiment`]: A/B experiments over scenarios and seeds, with statistics and plots, split
//!   into shards, resumed after a crash and merged.
//! - [`durable`]: files written so that a crash leaves them whole or recognisably unfinished.
//! - [`sim`]: one call in virtual time through the real webrtc-rs interceptor chain (GCC, TWCC,
//!   the handover-aware pacer, NACK), with the media engine, the scenario's links and a queue
//!   policy, producing one telemetry record per decision interval.
//! - [`live`] (feature `live`, on by default): real calls over the async `webrtc` crate, with
//!   the same sender, receiver and telemetry, HTTP signalling and a real-time UDP relay that
//!   applies a scenario's links.
//!
//! Nothing here but [`live`] reads a clock: every entry point takes `now`, so the same link and
//! the same sender run behind a virtual-time simulation and behind real peer connections.

#![forbid(unsafe_code)]

pub mod call;
pub mod durable;
pub mod experiment;
pub mod fec;
pub mod forecast;
pub mod link;
#[cfg(feature = "live")]
pub mod live;
pub mod media;
pub mod nack;
pub mod rng;
pub mod scenario;
pub mod sim;

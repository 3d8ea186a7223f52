//! The sans-I/O media engine shared by simulated and real calls.
//!
//! - [`payload`]: the synthetic codec's 24-byte payload header (frame id, packet index and count,
//!   key flag, capture instant), so a receiver rebuilds frames from RTP alone.
//! - [`encoder`]: the synthetic video encoder (30 fps, rate-controlled frame sizes, key frames,
//!   drops while the pacer asks for a pause).
//! - [`packetizer`]: splits encoded frames into RTP packets whose payloads carry the header.
//! - [`receiver`]: frame assembly, in-order decoding, loss declaration and PLIs, and rendering
//!   at the playout time that [`playout`] and [`jitter`] set (libwebrtc's jitter buffer), with
//!   retransmissions spotted by [`recovery`], and the receiver's own raise around its predicted
//!   handovers ([`forecast_raise`]).
//! - [`vp8`]: real VP8 (RFC 7741): the payload descriptor, the test pattern, and frames from a
//!   received VP8 stream.
//! - [`qoe`]: the QoE meter with WebRTC's definitions (docs/architecture.md, "The telemetry contract"), its delays in a
//!   constant-memory [`histogram`].

pub use pacer::receiver::{jitter, playout, timestamp_extrapolator};

pub mod encoder;
pub mod forecast_raise;
pub mod histogram;
pub mod packetizer;
pub mod payload;
pub mod qoe;
pub mod receiver;
pub mod recovery;
pub mod vp8;

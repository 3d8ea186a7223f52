//! The receive side of libwebrtc-like loss recovery: an RTT-aware NACK generator and the RTX
//! receiver. The send side (the responder with its history, its tap, RTX encapsulation) is the
//! plugin's: [`pacer::nack`].
//!
//! webrtc-rs 0.21's stock generator re-requests every missing packet every 100 ms without limit
//! or RTT awareness. This module is the libwebrtc behaviour (reference PART 5), as webrtc-rs
//! interceptors (sans-I/O, `Instant`s handed in, no clock read):
//!
//! - [`NackGenerator`] for `Slot::NackGenerator`: libwebrtc's `NackRequester`. A missing packet is
//!   NACKed once the reordering tolerance has passed, re-NACKed only after one RTT since its last
//!   NACK, given up after 10 tries; entries older than 10 000 sequence numbers are dropped and an
//!   overflowing list (1000) is cleared with a key-frame request. Its [`NackGeneratorHandle`]
//!   publishes the counters and the give-ups, and takes an RTT from outside.
//! - [`RtxReceiver`]: turns an RTX packet back into the original one (and marks it
//!   `Attribute::Retransmission`) before the generator and the application see it.
//!
//! Slots: the RTX receiver at [`RTX_RECEIVER_SLOT`] (6500, just before the generator at 7000).

pub mod generator;
pub mod rtx;

pub use generator::{NackGenerator, NackGeneratorConfig, NackGeneratorHandle, NackGeneratorStats};
pub use rtx::RtxReceiver;

use rtc_interceptor::Slot;

/// Where [`RtxReceiver`] sits: between `Slot::FecDecoder` (6000) and `Slot::NackGenerator`
/// (7000), so the generator and everything after it see the restored packet; the TWCC receiver
/// (8000) records it with the transport-wide sequence number the RTX packet carried.
pub const RTX_RECEIVER_SLOT: Slot = Slot::Custom(6500);

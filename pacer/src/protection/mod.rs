//! Adaptive loss protection: libwebrtc's FEC controller and generator, driving webrtc-rs's
//! FlexFEC-03 encoder.
//!
//! On a path with a long RTT a packet NACK recovers arrives about an RTT after its frame was due,
//! close to WebRTC's freeze threshold, so libwebrtc protects delta frames with FEC as well once
//! the RTT reaches 20 ms, and key frames at any RTT (reference sheet part 6). webrtc-rs ships the FlexFEC-03 encoder but only with a
//! block shape fixed at build time. This module supplies the decision, sans-I/O:
//!
//! - `rate_table`: libwebrtc's `kFecRateTable`;
//! - `loss_filter`: the max-window filter of the reported loss;
//! - `controller`: the factors and block span (`FecControllerDefault`, `VCMNackFecMethod`,
//!   `VCMFecMethod`), and the media target left after protection;
//! - `generator`: when a block closes and how many repair packets it gets (`UlpfecGenerator`);
//! - `measure`, `report_blocks`: what the interceptor derives from the packets it sees;
//! - `interceptor` and `handle`: [`LossProtection`] below the TWCC sender
//!   ([`FEC_GENERATOR_SLOT`]) or at `Slot::FecEncoder`, and its [`ProtectionHandle`];
//! - `receive`: what a receiver must do before FlexFEC recovery can use a packet protected at
//!   `Slot::FecEncoder`;
//! - `mask`: which media packets a repair packet protects, read off its header.

pub(crate) mod controller;
pub(crate) mod generator;
pub(crate) mod handle;
pub(crate) mod interceptor;
pub(crate) mod loss_filter;
pub(crate) mod mask;
pub(crate) mod measure;
pub(crate) mod rate_table;
pub(crate) mod receive;
pub(crate) mod report_blocks;

pub use controller::{Protection, ProtectionController, ProtectionInputs, media_target_bps};
pub use generator::{Block, BlockGenerator, BlockShape, MAX_BLOCK_MEDIA_PACKETS, PacketInfo};
pub use handle::{ProtectionHandle, ProtectionStats};
pub use interceptor::{FEC_GENERATOR_SLOT, FecMode, LossProtection, LossProtectionBuilder};
pub use loss_filter::LossFilter;
pub use mask::protected_packets;
pub use rate_table::fec_rate_table;
pub use receive::{MUTABLE_EXTENSION_URIS, with_zeroed_extensions, without_header_extension};

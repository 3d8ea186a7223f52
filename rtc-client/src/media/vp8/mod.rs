//! Real VP8 video (RFC 7741), beside the synthetic codec: what a call needs to send pictures a
//! browser decodes and to receive a browser's.
//!
//! - [`descriptor`]: the VP8 RTP payload descriptor (its temporal fields too) and the
//!   key-frame bit.
//! - [`payloader`]: our sender's VP8 RTP payloads, with the picture id and the temporal fields
//!   that make a discardable frame one for the receiver.
//! - [`pattern`]: the synthetic camera's moving test pattern with its frame number.
//! - [`framer`]: frames from a received VP8 RTP stream, described for the receiver, with the
//!   references the temporal fields give them.
//!
//! The encoder itself is libvpx (the `vp8enc` crate, feature `vp8`), driven by
//! [`crate::call::vp8_camera`]; the simulator keeps its frame-size model
//! ([`super::encoder`]), which `tests/vp8_model.rs` holds against libvpx's frame sizes.

pub mod descriptor;
pub mod framer;
pub mod pattern;
pub mod payloader;

//! One call in virtual time through the real webrtc-rs interceptor chain.
//!
//! [`run_call`] simulates a single call as a discrete-event loop in integer virtual time
//! ([`crate::link::Time`], ns since the call start). The sender, the camera and the interval records are the
//! call layer's ([`crate::call`]), as in a real call; this module holds only the event loop
//! ([`SimCall`]: set-up, step, finish) over the scenario's links:
//!
//! - **Sender**: the synthetic encoder and packetizer ([`crate::call::Camera`]) feed a webrtc-rs `Registry` with
//!   `CongestionControl` (webrtc-rs's `Gcc`, wrapped to publish its target), `TwccSender`, this
//!   project's `HandoverAwarePacer` at `Slot::Pacer` and a NACK responder. The encoder
//!   follows the pacer's target every frame and drops frames while the pacer asks for a pause.
//! - **Congestion window** ([`CallConfig::cwnd`]): the pacer records what it releases
//!   and the estimator wrapper hands every feedback's reports and every 25-ms tick to a
//!   `CwndChannel`; with `pushback` (the default) the encoder drops frames as the window fills,
//!   with `pacer` the pacer holds media and sends keep-alives on the padding stream (bound for
//!   that even without GoogCC probing). [`CallConfig::keyframe_flush`] lets a key frame flush the
//!   pacer's video backlog (read from the synthetic payload header).
//! - **Receiver**: a second registry with the stock `TwccReceiver` and a NACK generator; RTP that
//!   comes out of it goes to the media `Receiver` and the `QoeMeter`. A PLI the media
//!   receiver asks for is written into the receiver chain as RTCP and crosses the reverse link
//!   like the TWCC feedback and the NACKs; the sender answers it with a key frame. A registry's
//!   terminus ends inbound RTCP, so the PLI is picked off as it arrives from the link, as a peer
//!   connection's RTCP reader would (a simplification of webrtc-rs's RTCP delivery).
//!   RFC 3550 receiver reports are not simulated (they change no timing here).
//! - **Loss recovery** ([`crate::call::NackChoice`]): by default the libwebrtc-like pair of
//!   [`crate::nack`] with RTX negotiated (`video/rtx`, SSRC `VIDEO_RTX_SSRC`, payload type
//!   `VIDEO_RTX_PAYLOAD_TYPE`, `apt` = `VIDEO_PAYLOAD_TYPE`; [`crate::call::streams`]): retransmissions go on the RTX
//!   SSRC through the pacer (ahead of video) and the forward link, are numbered by the TWCC
//!   sender and recorded by the TWCC receiver, and are turned back into the original packet
//!   before the NACK generator and the media receiver. RTT: receiver reports are not exchanged,
//!   so the call stands in for them: every [`RTCP_INTERVAL`] it gives both the generator and the
//!   responder the RTT an RTCP round trip would measure now (the one-way delay, queueing
//!   included, of the latest packet sent on each link). PLIs: the media receiver stays the
//!   one source of key-frame requests for frames it cannot complete (a NACK give-up ends as
//!   such a frame); the generator's own key-frame request (its list overflowed) becomes a PLI
//!   only when the media receiver is not already asking and the last PLI is at least the
//!   receiver's PLI interval old. `stock` is webrtc-rs's pair as it was wired before (no RTX);
//!   `off` has no NACK at all.
//! - **Links**: the forward and reverse `Link`s of the scenario carry every packet (size = its
//!   marshalled size).
//! - **Policy**: a `PolicyController` decides the queue time limit at each decision boundary
//!   from a forecast ([`crate::scenario::sources`]: the scenario's ground truth, the mirror of the truth seen so
//!   far, or SGP4 over the scenario's orbits); each interval ends in one telemetry
//!   `IntervalRecord` (docs/architecture.md, "The telemetry contract") with that forecast and the ground truth as observed.
//!
//! The next event is the earliest of the next frame, either chain's `poll_timeout`, the media
//! receiver's timeout, the next decision and the next arrival on either link. As in the
//! webrtc-rs driver, a deadline that is not in the future is served 1 ms later (reference 3.1:
//! `MIN_IMMEDIATE_TIMEOUT_INTERVAL`).
//!
//! **Clock**: none is read. The chains take `Instant`s, so the caller hands [`run_call`] an
//! epoch and every instant given to the chains is that epoch plus a virtual offset; nothing the
//! call produces depends on the epoch.
//!
//! **Determinism**: every random component has its own seed (the links theirs from the scenario
//! builder, the encoder and the random policy theirs from the call seed), so the same
//! [`CallConfig`] gives the same telemetry. The only other randomness is webrtc-rs's
//! `rand::random()` SSRCs of the TWCC feedback and NACK packets, which do not change any size or
//! timing.

mod config;
mod engine;
mod in_flight;
mod result;

pub use config::{CallConfig, SimError};
pub use engine::{RECEIVER_FORECAST_INTERVAL, RTCP_INTERVAL, SimCall};
pub use in_flight::InFlight;
pub use result::{CallResult, RecoveryCounts, SenderCounts};

use std::time::Instant;

/// Runs one call (see the module documentation): [`SimCall::new`], [`SimCall::step`] until the
/// call's end, [`SimCall::finish`].
///
/// `epoch` is the `Instant` that virtual time zero maps to: the interceptor chains speak
/// `Instant`s, so every instant handed to them is `epoch` plus a virtual offset. Any instant will
/// do (the caller usually passes `Instant::now()` once); nothing in the result depends on it, since
/// the telemetry holds only offsets. The simulator itself never reads a clock.
///
/// # Errors
///
/// [`SimError::Link`] for an invalid link configuration, [`SimError::Duration`] for a duration
/// beyond what an [`Instant`] offset can hold, [`SimError::Forecast`] for an orbital forecast
/// without orbits, [`SimError::Chain`] if an interceptor chain refuses a packet.
pub fn run_call(config: &CallConfig, epoch: Instant) -> Result<CallResult, SimError> {
    let mut call = SimCall::new(config, epoch)?;
    while call.step()? {}
    Ok(call.finish())
}

//! The call layer that simulated and real calls share (docs/architecture.md, "The call engine").
//!
//! A call, whether [`crate::sim`] runs it in virtual time or [`crate::live`] over real peer
//! connections, is built from the same pieces:
//!
//! - [`choices`]: the queue policy, the bandwidth estimator, the NACK pair and the loss
//!   protection;
//! - [`options`]: the sender's options and how a command line, a scenario file and the defaults
//!   combine;
//! - [`streams`]: the negotiated streams (video, RTX, padding), their SSRCs and payload types,
//!   and media packets as RTP;
//! - [`core`]: the sans-I/O core of a call's sending side, which both drivers run: it decides,
//!   closes and opens intervals and steps the camera;
//! - [`chains`]: both interceptor chains, written once: the sender's is the plugin's install
//!   ([`pacer::sender`]) for the call's options, the receiver's pairs with it;
//! - [`sender`]: how the encoder follows the sender's target and congestion window;
//! - [`camera`]: the synthetic encoder and the packetizer, stepped once per frame;
//! - [`interval`]: one decision interval, sampled at every frame and closed into a telemetry
//!   record;
//! - [`video`]: which camera a live call sends, the synthetic one or real VP8;
//! - [`vp8_camera`]: the test pattern encoded by libvpx and packetized as VP8 RTP (feature
//!   `vp8`);
//! - [`timed`]: which handover-timed actions a `timed` policy applies (the policy controller
//!   hands them each decision's predictions itself).
//!
//! Nothing here reads a clock or knows where a call's links or truth come from: the drivers hand
//! in `now`, the decisions and the observed handovers.

pub mod camera;
pub mod chains;
pub mod choices;
pub mod core;
pub mod interval;
pub mod options;
pub mod sender;
pub mod streams;
pub mod timed;
pub mod video;
#[cfg(feature = "vp8")]
pub mod vp8_camera;

pub use camera::{Camera, FrameStep};
pub use chains::{CallPadding, ReceiverHandles, receiver_chain, sender_chain};
pub use choices::{BweChoice, FecChoice, NackChoice, PolicyChoice};
pub use interval::{CallLabels, OpenInterval};
pub use options::{SenderNames, SenderOptions, SenderOverrides};
pub use timed::{ActionSet, TimedActions, TimingError};
pub use video::{Video, VideoChoice};

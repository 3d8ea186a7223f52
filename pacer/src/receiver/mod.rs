//! The receiver's timing as libwebrtc runs it: when a decodable frame is shown.
//!
//! - [`jitter`]: the jitter estimate (libwebrtc's `JitterEstimator` with its Kalman filter of
//!   frame delay variation against frame size, and the round-trip term once frames are
//!   retransmitted);
//! - [`playout`]: the playout timing (`VCMTiming`): the expected completion of each frame, the
//!   current delay that follows the jitter estimate, the minimum playout delay the sender signals;
//! - [`timestamp_extrapolator`]: libwebrtc's map from capture instant to expected completion, one
//!   of the two completion models [`playout`] offers.
//!
//! Two receivers run it: rtc-client's, which renders what a call delivers, and the sender's
//! replay of that receiver from transport feedback, which weighs a playout floor
//! ([`crate::playout`], the weighed floor). Both take the instant of every event, on
//! [`crate::time::Time`], and read no clock.

pub mod jitter;
pub mod playout;
pub mod timestamp_extrapolator;

//! Handover-timed actions: what the sender does around each predicted handover instant
//! (docs/architecture.md, "Handover-timed actions").
//!
//! - `config`: [`ActionConfig`], each action's window around an instant and its parameters;
//! - `schedule`: [`HandoverActions`], the sans-I/O schedule from predicted instants to windows,
//!   with per-action counters ([`ActionStats`]);
//! - `boundary_loss`, `loss_onset` and `slot_phase`: what transport feedback says about loss
//!   around the predicted instants: whether the hold pays (the hold gate), where the windows
//!   belong, and where in the slot the path loses away from them (the phase raise);
//! - `profile`: [`ActionProfile`], the named menu of configurations a joint policy chooses from;
//! - `handle`: [`ActionsHandle`], the schedule shared with the pacer, GoogCC and the loss
//!   protection inside a chain.
//!
//! The actions themselves are applied where they belong: the hold in
//! [`PacingController`](crate::PacingController), the guard in [`GoogCc`](crate::GoogCc), the
//! boost in [`LossProtection`](crate::LossProtection), and the key-frame block and discardable
//! frames by the encoder.

mod boundary_loss;
mod config;
mod handle;
mod loss_onset;
mod profile;
mod schedule;
mod slot_phase;
mod timing;

pub use config::{
    Action, ActionConfig, ActionConfigError, ActionWindow, BoostConfig, HoldGate, LEAD_ROW_MS,
    LeadTracking, MAX_ACTION_SPAN, MAX_LEAD_MS, MAX_PLAYOUT_RAISE_MS, OnsetTracking,
    PlayoutRaiseConfig, ReceiverGate,
};
pub use handle::ActionsHandle;
pub use profile::{
    ActionProfile, EXPLORATION_PROFILES, FOLLOWED_RAISE_CAP_MS, LOW_RAISE_CAP_MS, PHASE_RAISE_MS,
    PLAYOUT_FLOOR_MS, PROFILE_NAMES, UnknownProfile, WEIGHED_FLOOR_MEMORY_MS,
};
pub use schedule::{ActionCounter, ActionStats, HandoverActions};
pub use timing::TimingError;
pub(crate) use timing::TimingShift;

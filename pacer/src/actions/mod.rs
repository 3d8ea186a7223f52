//! Handover-timed actions: what the sender does around each predicted handover instant
//! (docs/architecture.md, "Handover-timed actions").
//!
//! - `config`: [`ActionConfig`], each action's window around an instant and its parameters;
//! - `schedule`: [`HandoverActions`], the sans-I/O schedule from predicted instants to windows,
//!   with per-action counters ([`ActionStats`]);
//! - `profile`: [`ActionProfile`], the named menu of configurations a joint policy chooses from;
//! - `handle`: [`ActionsHandle`], the schedule shared with the pacer, GoogCC and the loss
//!   protection inside a chain.
//!
//! The actions themselves are applied where they belong: the hold in
//! [`PacingController`](crate::PacingController), the guard in [`GoogCc`](crate::GoogCc), the
//! boost in [`LossProtection`](crate::LossProtection), and the key-frame block by the encoder.

mod boundary_loss;
mod config;
mod handle;
mod profile;
mod schedule;

pub use config::{
    Action, ActionConfig, ActionConfigError, ActionWindow, BoostConfig, HoldGate, MAX_ACTION_SPAN,
};
pub use handle::ActionsHandle;
pub use profile::{ActionProfile, PROFILE_NAMES, UnknownProfile};
pub use schedule::{ActionCounter, ActionStats, HandoverActions};

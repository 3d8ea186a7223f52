//! Offline training of the learned queue policy (paper section III; docs/architecture.md, "The
//! forecast contract", "Queue policies and decisions", "The telemetry contract" and "The model and
//! its card").
//!
//! The pipeline, one module per stage:
//!
//! 1. [`logs`]: telemetry files (`leopace.interval.v1`, one line per decision interval) in,
//!    records and rejected lines out.
//! 2. [`expert`]: K-means over the *observed* handover pattern of each interval, each cluster
//!    labelled with the queue limit of best mean reward `2X - F`: the expert policy.
//! 3. [`train`]: the transformer of [`model`] imitates the expert on the *forecast* each interval
//!    was decided on, with 5-fold cross-validation, in tch (libtorch).
//! 4. [`export`]: the trained weights as an explicit ONNX graph (tract's prost types), and
//!    [`card`]: the model card with golden vectors.
//! 5. [`verify`]: the exported file loaded as the pacer loads it (tract), against its card and
//!    against tch.
//!
//! The path-aware policy has its own trainer, [`counterfactual`]: every training call run under
//! each output of the path menu, labelled with the output that did best, the transformer
//! trained on those labels from the forecast and the call's measurements at the end of the
//! measuring window, and a `leopace.policy.v2` card with the window.
//!
//! Only this crate links libtorch; the pacer runs the exported model with tract.

#![forbid(unsafe_code)]

pub mod card;
pub mod counterfactual;
pub mod expert;
pub mod export;
pub mod logs;
pub mod model;
pub mod plot;
pub mod train;
pub mod verify;

//! A handover-aware send-side pacer for webrtc-rs.
//!
//! libwebrtc's pacer holds packets in a queue and releases them at 1.1 x the estimated bandwidth,
//! but never lets the average queued packet wait longer than a *queue time limit* (2 s by
//! default): when the queue would take longer than that, it drains faster than the estimate.
//! The paper "Dynamic Pacing for Real-time Satellite Traffic" shows that no single limit suits a
//! satellite path: stable periods want a short queue, handover-heavy periods a long one. This
//! crate provides, each in its module:
//!
//! - [`sender`]: the whole handover-aware sender in one install ([`SenderConfig::install`]):
//!   the pacer, GoogCC, the congestion window, loss protection, the NACK/RTX responder and the
//!   handover-timed actions go into a webrtc-rs `Registry`, and one [`HandoverAwareSender`]
//!   reads them and runs a policy;
//! - [`pacing`]: [`PacingController`], a sans-I/O pacer with libwebrtc's semantics (debt-based
//!   leaky bucket, pacing factor, priority classes, queue time limit with the drain rule,
//!   expected queue time, encoder-pause signal), generic over the packet payload, and
//!   [`HandoverAwarePacer`], its webrtc-rs interceptor for `Slot::Pacer`, built together with a
//!   [`PacerHandle`] that sets the limit while a call runs;
//! - [`policy`]: the policy seam, [`QueuePolicy`] and [`PolicyController`], which choose a limit
//!   every decision interval from a handover [`Forecast`] (the contract is re-exported in
//!   [`forecast`]);
//! - [`googcc`]: [`GoogCc`], a libwebrtc-faithful GoogCC bandwidth estimator for webrtc-rs,
//!   which probes through the pacer; [`cwnd`]: libwebrtc's congestion window;
//! - [`protection`]: [`LossProtection`], an interceptor that drives webrtc-rs's FlexFEC-03
//!   encoder with libwebrtc's adaptive FEC, below the TWCC sender ([`FEC_GENERATOR_SLOT`]), its
//!   repair packets going back to the pacer;
//! - [`nack`]: libwebrtc's NACK responder with its packet history and RTX;
//! - [`playout`]: the playout raise on the wire: the playout-delay RTP header extension on the
//!   frames captured around a predicted handover, asking the receiver to wait one repair round;
//! - [`actions`]: handover-timed actions, shared through an [`ActionsHandle`]: around each
//!   predicted handover instant the pacer holds media, [`GoogCc`] ignores what the handover does
//!   to delay and loss, [`LossProtection`] boosts FEC, and the encoder is told not to schedule a
//!   key frame;
//! - [`receiver`]: the receiver's timing as libwebrtc runs it (the jitter estimate, the playout
//!   timing), on the virtual time of [`time`]: rtc-client's receiver runs it, and the weighed
//!   playout floor replays it from transport feedback;
//! - [`telemetry`]: the records every call writes and the trainer reads, and [`card`], the
//!   model card of a learned policy.
//!
//! Nothing in the core reads a clock: every entry point takes `now`, so the same code runs in a
//! real call and in a virtual-time simulation.
//!
//! # Four ways to use it
//!
//! ## The whole handover-aware sender: one install
//!
//! [`SenderConfig::install`] puts the pacer, GoogCC, the congestion window, loss protection,
//! the NACK/RTX responder and the handover-timed actions into the registry, and returns one
//! [`HandoverAwareSender`]. Give it a forecast source and a policy, and drive its timer: every
//! decision sets the queue time limit and hands the forecast's predicted handovers to the
//! actions, inside the plugin. `pacer/examples/embed.rs` runs a whole call this way over a
//! Starlink-like uplink and prints what the actions did.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use pacer::forecast::NoHandovers;
//! use pacer::sender::ChainKind;
//! use pacer::{ActionConfig, DEFAULT_DECISION_INTERVAL, Heuristic, SenderConfig};
//! use rtc::interceptor::{Gcc, Registry};
//! use rtc::peer_connection::configuration::interceptor_registry::{
//!     CongestionFeedback, configure_congestion_control,
//! };
//! use rtc::peer_connection::configuration::media_engine::MediaEngine;
//! use std::time::{Duration, Instant};
//!
//! let mut media_engine = MediaEngine::default();
//! // Transport-wide feedback and its header extension; the install replaces the placeholders.
//! let registry = configure_congestion_control(
//!     Registry::new(),
//!     Gcc::default(),
//!     CongestionFeedback::Twcc,
//!     &mut media_engine,
//! )?;
//! let config = SenderConfig {
//!     actions: Some(ActionConfig::default()),
//!     ..SenderConfig::default()
//! };
//! let (registry, mut sender) = config.install(registry, ChainKind::PeerConnection)?;
//! // ... build the peer connection with `media_engine` and `registry`.
//!
//! let start = Instant::now();
//! sender.set_policy(start, DEFAULT_DECISION_INTERVAL, NoHandovers, Heuristic);
//! // The application's timer: at `poll_timeout`, `handle_timeout`.
//! let decision = sender.handle_timeout(start).expect("the first decision is due at the start");
//! assert_eq!(decision.queue_time_limit, Duration::from_millis(500)); // no handover ahead
//! assert_eq!(sender.handles().pacer.queue_time_limit(), Duration::from_millis(500));
//! assert_eq!(sender.poll_timeout(), Some(start + DEFAULT_DECISION_INTERVAL));
//! # Ok(())
//! # }
//! ```
//!
//! ## In a webrtc-rs call: the interceptor at `Slot::Pacer` and its handle
//!
//! Put a [`HandoverAwarePacer`] at `Slot::Pacer` of the interceptor registry, where it replaces
//! the stock pacer, and keep its [`PacerHandle`]: any thread may set the queue time limit through
//! it while the call runs, and read the pacer's [`PacerStats`] (the target bitrate an encoder
//! should follow, the encoder-pause signal). A [`PolicyController`] does the choosing: at every
//! decision boundary (120 s by default) it asks a [`HandoverSource`] for a forecast, asks a
//! [`QueuePolicy`] for a limit, clamps it to [50 ms, 10 s] and sets it through the handle. A
//! failing source or policy falls back to WebRTC's 2000 ms and says why in the [`Decision`].
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use pacer::{DEFAULT_DECISION_INTERVAL, HandoverAwarePacer, Heuristic, PacingConfig, PolicyController};
//! use pacer::forecast::NoHandovers;
//! use rtc::interceptor::{Gcc, Registry, Slot};
//! use rtc::peer_connection::configuration::interceptor_registry::{
//!     CongestionFeedback, configure_congestion_control,
//! };
//! use rtc::peer_connection::configuration::media_engine::MediaEngine;
//! use std::time::{Duration, Instant};
//!
//! let mut media_engine = MediaEngine::default();
//! let registry = configure_congestion_control(
//!     Registry::new(),
//!     Gcc::default(),
//!     CongestionFeedback::Twcc,
//!     &mut media_engine,
//! )?;
//! let (pacer, handle) = HandoverAwarePacer::builder(PacingConfig::default()).build();
//! let registry = registry.with(Slot::Pacer, pacer); // replaces the stock pacer
//! assert!(registry.slots().contains(&(Slot::Pacer, "HandoverAwarePacer".to_owned())));
//! // ... build the peer connection with `media_engine` and `registry`.
//!
//! // Anywhere, any thread, while the call runs:
//! handle.set_queue_time_limit(Duration::from_millis(900));
//! let stats = handle.stats();
//! println!("target {} bit/s, pause {}", stats.target_bitrate_bps, stats.encoder_should_pause);
//!
//! // Or let a policy choose from a handover forecast, every decision interval. A real source
//! // is an orbital predictor or the dish; `NoHandovers` is a terrestrial path.
//! let start = Instant::now();
//! let mut policy = PolicyController::new(
//!     start,
//!     DEFAULT_DECISION_INTERVAL,
//!     NoHandovers,
//!     Heuristic,
//!     handle.clone(),
//! );
//! let decision = policy.handle_timeout(start).expect("the first decision is due at the start");
//! assert_eq!(decision.queue_time_limit, Duration::from_millis(500)); // no handover ahead
//! assert_eq!(handle.queue_time_limit(), decision.queue_time_limit);
//! assert_eq!(policy.poll_timeout(), Some(start + DEFAULT_DECISION_INTERVAL));
//! # Ok(())
//! # }
//! ```
//!
//! ## Anywhere else: the sans-I/O `PacingController`, driven with `now`
//!
//! [`PacingController`] is the pacer itself, without webrtc-rs: generic over the payload, it
//! never reads a clock and is told the time by every call, so it runs alike in a real sender and
//! in a virtual-time simulation. Enqueue packets, call
//! [`poll_send`](PacingController::poll_send) until it returns `None`, and come back at
//! [`next_send_time`](PacingController::next_send_time) (never at or before the last `now`, so
//! a timer loop cannot spin).
//!
//! ```
//! use pacer::{PacingConfig, PacingController, PacketKind};
//! use std::time::{Duration, Instant};
//!
//! let start = Instant::now();
//! let mut pacer = PacingController::new(PacingConfig::default(), start);
//! pacer.set_target_bitrate(start, 1_000_000);
//! pacer.set_queue_time_limit(start, Duration::from_millis(500));
//! // 100 video packets of 1200 bytes: 873 ms of sending at the pacing rate (1.1 Mbit/s).
//! for sequence in 0..100u16 {
//!     pacer.enqueue(start, 0x5eed, PacketKind::Video, 1200, sequence);
//! }
//!
//! // The timer loop of a sender, in real or virtual time.
//! let mut now = start;
//! let mut last = None;
//! loop {
//!     while let Some(packet) = pacer.poll_send(now) {
//!         last = Some(packet); // hand `packet.payload` to the transport
//!     }
//!     match pacer.next_send_time() {
//!         Some(next) => now = next,
//!         None => break,
//!     }
//! }
//! // The drain rule sends faster than the pacing rate to keep within the 500-ms limit.
//! let last = last.expect("every packet left");
//! assert_eq!(last.payload, 99);
//! assert!(last.queue_time() <= Duration::from_millis(500));
//! assert!(pacer.stats(now).drain_boost_time > Duration::ZERO);
//! ```
//!
//! ## As webrtc-rs's bandwidth estimator: `GoogCc`, probing through the pacer
//!
//! [`GoogCc`] implements webrtc-rs's `BandwidthEstimator`, so it takes the place of webrtc-rs's
//! own `Gcc` in `configure_congestion_control` (or `CongestionControlBuilder`). Built with
//! [`GoogCc::with_probing`], it shares a [`ProbeChannel`](pacing::ProbeChannel) with the pacer: the estimator posts
//! probe clusters, the pacer sends them (queued media first, then padding on the padding SSRC of
//! its [`PacingConfig`]) and records which packets were probes, and the estimator reads the
//! probes' results from the feedback. A [`GoogCcHandle`](googcc::GoogCcHandle) taken before the estimator is boxed
//! into the chain shows its state. The padding SSRC must also be bound as a local stream with
//! the transport-wide-cc header extension, so that the chain numbers and reports padding; the
//! "Probing" section of [`GoogCc`] has the details.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use pacer::{GoogCc, GoogCcConfig, HandoverAwarePacer, PacingConfig};
//! use pacer::pacing::ProbeChannel;
//! use rtc::interceptor::{Registry, Slot};
//! use rtc::peer_connection::configuration::interceptor_registry::{
//!     CongestionFeedback, configure_congestion_control,
//! };
//! use rtc::peer_connection::configuration::media_engine::MediaEngine;
//!
//! const PADDING_SSRC: u32 = 0x5eed_0099;
//!
//! let probes = ProbeChannel::new();
//! let estimator = GoogCc::with_probing(GoogCcConfig::default(), probes.clone());
//! let estimate = estimator.handle();
//! let mut media_engine = MediaEngine::default();
//! let registry = configure_congestion_control(
//!     Registry::new(),
//!     estimator,
//!     CongestionFeedback::Twcc,
//!     &mut media_engine,
//! )?;
//!
//! let config = PacingConfig { padding_ssrc: Some(PADDING_SSRC), ..PacingConfig::default() };
//! let (pacer, _handle) = HandoverAwarePacer::builder(config).probe_channel(probes).build();
//! let registry = registry.with(Slot::Pacer, pacer);
//! // ... build the peer connection with `media_engine` and `registry`.
//!
//! // Any time during the call: the target, the delay- and loss-based estimates, the RTT, ALR.
//! assert_eq!(estimate.target_bps(), 300_000.0); // the start rate, until feedback arrives
//! println!("{:?}", estimate.snapshot());
//! # Ok(())
//! # }
//! ```
//!
//! # Loss protection (FEC)
//!
//! On a long-RTT path a retransmission arrives about an RTT after its frame was due, so libwebrtc
//! protects key frames, and from an RTT of 20 ms on delta frames too, with forward error
//! correction, and lets NACK repair the rest.
//! [`LossProtection`] does the same, as media leaves (below the TWCC sender, at
//! [`FEC_GENERATOR_SLOT`], handing repair packets to the pacer through a [`RepairQueue`](pacing::RepairQueue)) or at
//! webrtc-rs's `Slot::FecEncoder`: its [`ProtectionController`](protection::ProtectionController)
//! (libwebrtc's `FecControllerDefault` with the hybrid NACK/FEC method and `kFecRateTable`) turns
//! the loss of the receiver reports, the target, RTT, frame rate and resolution into protection
//! factors, and its [`BlockGenerator`](protection::BlockGenerator) (libwebrtc's `UlpfecGenerator`) decides which media packets
//! each block of FlexFEC repair packets protects. The driver sets the target and RTT through the
//! [`ProtectionHandle`](protection::ProtectionHandle), reads cumulative [`ProtectionStats`](protection::ProtectionStats), and asks it for the media target
//! that leaves protection its measured share ([`media_target_bps`](protection::media_target_bps)). [`FecMode`] also offers a
//! fixed block shape and no FEC at all.
//!
//! # Handover-timed actions
//!
//! A forecast that can time a handover lets the sender act at that instant, not only choose a
//! queue limit for the next two minutes. One [`ActionsHandle`] is shared by every component that
//! acts, and the driver tells it the predicted instants with their probabilities; each action is
//! on/off and tunable through [`ActionConfig`] (docs/architecture.md, "Handover-timed actions",
//! has the defaults and why):
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use pacer::{ActionConfig, ActionsHandle, FecMode, GoogCc, GoogCcConfig, HandoverAwarePacer, LossProtection, PacingConfig, telemetry::ActionsRecord};
//! use std::time::{Duration, Instant};
//!
//! let actions = ActionsHandle::new(ActionConfig::default())?;
//! let (pacer, _pacer_handle) = HandoverAwarePacer::builder(PacingConfig::default())
//!     .actions(actions.clone()) // the hold
//!     .build();
//! let estimator = GoogCc::new(GoogCcConfig::default()).guarded_by(actions.clone()); // the guard
//! let (fec, _fec_handle) = LossProtection::builder(FecMode::Libwebrtc)
//!     .actions(actions.clone()) // the boost
//!     .build();
//! # drop((pacer, estimator, fec));
//!
//! let now = Instant::now();
//! // Whenever a new forecast arrives: its predicted handovers.
//! actions.set_predictions(now, [(now + Duration::from_millis(12_300), 0.95)]);
//! // Before each periodic key frame: the key-frame block.
//! assert!(actions.keyframe_allowed(now));
//! // At the end of each telemetry interval: the record's `actions` object.
//! let record = ActionsRecord::from(actions.take_stats(now + Duration::from_secs(120)));
//! assert_eq!((record.guard.applied, record.guard.total_ms), (1, 450));
//! // The hold waits until the onset tracker has seen a few boundaries (`ActionConfig::onset`).
//! assert_eq!(record.hold.applied, 0);
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//!
//! - `learned` (default): `OnnxPolicy`, the learned policy, an ONNX transformer run with tract
//!   and checked against its [`card`] at load. Off, the pacer builds without a neural-network
//!   runtime.
//! - `jsonl`: the telemetry files: `telemetry::read_intervals`, `read_intervals_file` and
//!   `TelemetryWriter`. Off, [`telemetry`] has the record types and their validation only.

#![forbid(unsafe_code)]
#![warn(unreachable_pub, unnameable_types)]

pub mod actions;
pub mod cwnd;
pub mod forecast;
pub mod googcc;
pub mod nack;
pub mod pacing;
pub mod playout;
pub mod policy;
pub mod protection;
pub mod receiver;
pub mod sender;
pub mod telemetry;
pub mod time;

pub use policy::card;

pub use actions::{ActionConfig, ActionProfile, ActionsHandle};
pub use cwnd::CwndMode;
pub use forecast::{Forecast, HandoverSource};
pub use googcc::{GoogCc, GoogCcConfig};
pub use pacing::{
    HandoverAwarePacer, PacerHandle, PacerStats, PacingConfig, PacingController, PacketKind,
};
#[cfg(feature = "learned")]
pub use policy::OnnxPolicy;
pub use policy::{
    DEFAULT_DECISION_INTERVAL, Decision, Fixed, Gated, Heuristic, PolicyController, QueuePolicy,
};
pub use protection::{FEC_GENERATOR_SLOT, FecMode, LossProtection};
pub use sender::{HandoverAwareSender, SenderConfig, SenderHandles};

//! What one simulated call needs, and why it may not run.

use crate::call::{
    BweChoice, CallLabels, FecChoice, NackChoice, PolicyChoice, SenderOptions, TimingError,
};
use crate::forecast::{ForecastError, ForecastSpec};
use crate::link::{LinkConfig, LinkConfigError};
use crate::media::playout::CompletionModel;
use crate::scenario::build::Realization;
use crate::scenario::orbit::OrbitPredictorInputs;
use crate::scenario::timeline::HandoverTimeline;
use chrono::{DateTime, Utc};
use pacer::CwndMode;
use pacer::DEFAULT_DECISION_INTERVAL;
use std::time::Duration;

/// Everything one simulated call needs.
#[derive(Debug, Clone)]
pub struct CallConfig {
    /// Unique per call; copied into every telemetry record.
    pub call_id: String,
    /// The scenario's name, for telemetry.
    pub scenario: String,
    /// The forward (media) link.
    pub forward: LinkConfig,
    /// The forward link's seed.
    pub forward_seed: u64,
    /// The reverse (feedback) link.
    pub reverse: LinkConfig,
    /// The reverse link's seed.
    pub reverse_seed: u64,
    /// The ground-truth handover timeline: what the oracle forecast reads and what telemetry
    /// records as observed.
    pub timeline: HandoverTimeline,
    /// The call seed: the encoder's and the random policy's seeds derive from it.
    pub seed: u64,
    /// How long the call lasts (virtual time).
    pub duration: Duration,
    /// The queue policy.
    pub policy: PolicyChoice,
    /// The decision interval (default [`DEFAULT_DECISION_INTERVAL`], 120 s).
    pub decision_interval: Duration,
    /// Where the policy's forecast comes from (default: the oracle).
    pub handover: ForecastSpec,
    /// The scenario's orbits and the call's UTC start, for the orbital forecast.
    pub orbits: Option<(OrbitPredictorInputs, DateTime<Utc>)>,
    /// Which NACK pair recovers losses (default: [`NackChoice::Libwebrtc`]).
    pub nack: NackChoice,
    /// Which bandwidth estimator runs (default: [`BweChoice::GoogCc`]).
    pub bwe: BweChoice,
    /// Where libwebrtc's congestion window acts (default: [`CwndMode::Pushback`], as
    /// in libwebrtc since about M80).
    pub cwnd: CwndMode,
    /// Whether a new key frame flushes the video stream's queued packets from the pacer
    /// (default off).
    pub keyframe_flush: bool,
    /// The loss protection (default: [`FecChoice::Libwebrtc`]).
    pub fec: FecChoice,
    /// The error added to every predicted handover instant the timed actions see (default:
    /// none).
    pub timing_error: TimingError,
    /// The receiver's base minimum playout delay (libwebrtc's `base_minimum_playout_delay`;
    /// default zero, as a browser's).
    pub playout_floor: Duration,
    /// Whether the receiving endpoint knows the RTCP round-trip time, as one that also sends
    /// does (a two-way call): its jitter delay then covers part of the RTT once retransmissions
    /// are common ([`crate::media::jitter`]). Default false: a receive-only endpoint, as
    /// Chromium receiving our video.
    pub receiver_rtt: bool,
    /// Whether the receiver raises its own minimum playout delay around the handovers its own
    /// forecast predicts ([`crate::media::forecast_raise`]); its forecast is a second source
    /// built from [`Self::handover`], as a receiver behind the same dish would read. Default
    /// false.
    pub receiver_raise: bool,
    /// How the receiver learns when a frame is expected to be complete (default:
    /// [`CompletionModel::Average`], docs/architecture.md, "The receiver as Chromium runs it").
    pub completion: CompletionModel,
}

impl CallConfig {
    /// A call over the given links with no handover timeline, the default policy and the
    /// default decision interval.
    pub fn over_links(
        scenario: impl Into<String>,
        forward: LinkConfig,
        reverse: LinkConfig,
        seed: u64,
        duration: Duration,
    ) -> Self {
        Self {
            call_id: format!("sim-{seed}"),
            scenario: scenario.into(),
            forward,
            forward_seed: seed.wrapping_mul(2).wrapping_add(1),
            reverse,
            reverse_seed: seed.wrapping_mul(2).wrapping_add(2),
            timeline: HandoverTimeline::none(),
            seed,
            duration,
            policy: PolicyChoice::Default,
            decision_interval: DEFAULT_DECISION_INTERVAL,
            handover: ForecastSpec::Oracle,
            orbits: None,
            nack: NackChoice::default(),
            bwe: BweChoice::default(),
            cwnd: CwndMode::Pushback,
            keyframe_flush: false,
            fec: FecChoice::default(),
            timing_error: TimingError::default(),
            playout_floor: Duration::ZERO,
            receiver_rtt: false,
            receiver_raise: false,
            completion: CompletionModel::default(),
        }
    }

    /// A call drawn from a realised scenario: its links, their seeds, its timeline, its seed, its
    /// duration and its sender options (the scenario file's `[sender]` table over the defaults,
    /// [`Realization::sender`]; lay a command line over them with [`Self::set_sender`]).
    pub fn from_realization(realization: &Realization, policy: PolicyChoice) -> Self {
        let sender = realization.sender;
        Self {
            call_id: format!("{}-{}", realization.name, realization.seed),
            scenario: realization.name.clone(),
            forward: realization.forward.clone(),
            forward_seed: realization.forward_seed,
            reverse: realization.reverse.clone(),
            reverse_seed: realization.reverse_seed,
            timeline: realization.timeline.clone(),
            seed: realization.seed,
            duration: realization.duration,
            policy,
            decision_interval: DEFAULT_DECISION_INTERVAL,
            handover: ForecastSpec::Oracle,
            orbits: realization
                .orbit
                .as_ref()
                .map(|o| (o.predictor.clone(), o.start)),
            nack: sender.nack,
            bwe: sender.bwe,
            cwnd: sender.cwnd,
            keyframe_flush: sender.keyframe_flush,
            fec: sender.fec,
            timing_error: TimingError::default(),
            playout_floor: Duration::ZERO,
            receiver_rtt: false,
            receiver_raise: false,
            completion: CompletionModel::default(),
        }
    }

    /// The call's sender options.
    pub fn sender(&self) -> SenderOptions {
        SenderOptions {
            bwe: self.bwe,
            nack: self.nack,
            cwnd: self.cwnd,
            keyframe_flush: self.keyframe_flush,
            fec: self.fec,
        }
    }

    /// What every telemetry record of the call names.
    pub fn labels(&self) -> CallLabels {
        CallLabels {
            call_id: self.call_id.clone(),
            scenario: self.scenario.clone(),
            seed: self.seed,
            sender: self.sender(),
        }
    }

    /// Sets every sender option.
    pub fn set_sender(&mut self, options: SenderOptions) {
        self.bwe = options.bwe;
        self.nack = options.nack;
        self.cwnd = options.cwnd;
        self.keyframe_flush = options.keyframe_flush;
        self.fec = options.fec;
    }
}

/// Why a call could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A link configuration is invalid.
    #[error("invalid {direction} link: {source}")]
    Link {
        /// `forward` or `reverse`.
        direction: &'static str,
        /// What is wrong with it.
        source: LinkConfigError,
    },
    /// An interceptor chain refused a packet or a timeout.
    #[error("{side} interceptor chain failed: {message}")]
    Chain {
        /// `sender` or `receiver`.
        side: &'static str,
        /// The chain's error.
        message: String,
    },
    /// The forecast cannot apply to the call (`orbital` over a scenario without orbits, a
    /// source that needs a real call).
    #[error(transparent)]
    Forecast(#[from] ForecastError),
    /// The call is too long to represent as an [`Instant`](std::time::Instant) offset.
    #[error("call duration {0:?} is out of range")]
    Duration(Duration),
    /// The policy's handover-timed actions are not a valid configuration.
    #[error("the handover-timed actions: {0}")]
    Actions(#[from] pacer::actions::ActionConfigError),
    /// The encoder failed.
    #[error("the encoder failed: {0}")]
    Encoder(String),
    /// The receiver was to raise its playout delay from its own forecast, but the call has none.
    #[error(
        "--receiver-raise needs a handover forecast: give --handover (calibrated, oracle, orbital, ...), not none"
    )]
    ReceiverRaiseWithoutForecast,
}

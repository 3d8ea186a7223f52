//! What a call chooses: the queue policy, the bandwidth estimator and the NACK pair.
//!
//! Each choice has the name `--policy`, `--bwe` and `--nack` take, scenario files use and
//! telemetry writes. Simulated and real calls build their sender from the same choices
//! (docs/architecture.md, "The call engine").

use pacer::telemetry::{Bwe, NackMode};
use pacer::{Fixed, Heuristic, OnnxPolicy, QueuePolicy, Random};
use std::sync::Arc;
use std::time::Duration;

/// Salt that separates the random policy's seed from the call seed.
const POLICY_SEED_SALT: u64 = 0x504F_4C49_4359_0001;

/// The names a scenario file and `--bwe` accept, in [`BweChoice::ALL`] order.
pub const BWE_NAMES: [&str; 2] = ["googcc", "webrtc-rs"];
/// The names a scenario file and `--nack` accept, in [`NackChoice::ALL`] order.
pub const NACK_NAMES: [&str; 3] = ["libwebrtc", "stock", "off"];

/// Which queue policy decides the pacer's limit.
#[derive(Debug, Clone)]
pub enum PolicyChoice {
    /// WebRTC's fixed 2000 ms ([`Fixed::webrtc_default`]).
    Default,
    /// The design table on the forecast handover count ([`Heuristic`]).
    Heuristic,
    /// A uniformly drawn action each interval ([`Random`]), seeded from the call seed.
    Random,
    /// A fixed limit.
    Fixed(Duration),
    /// The learned ONNX policy, loaded and checked against its card.
    Learned(Arc<OnnxPolicy>),
}

impl PartialEq for PolicyChoice {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl PolicyChoice {
    /// The policy's name as telemetry writes it (`learned:<sha256 prefix>` for a model).
    pub fn name(&self) -> String {
        match self {
            Self::Default => "default".into(),
            Self::Heuristic => "heuristic".into(),
            Self::Random => "random".into(),
            Self::Fixed(limit) => format!("fixed:{}", limit.as_millis()),
            Self::Learned(model) => QueuePolicy::name(model.as_ref()),
        }
    }
}

impl PolicyChoice {
    /// The policy itself, for a call with seed `seed` (the random policy's seed derives from it).
    pub fn build(&self, seed: u64) -> Box<dyn QueuePolicy> {
        match self {
            Self::Default => Box::new(Fixed::webrtc_default()),
            Self::Heuristic => Box::new(Heuristic),
            Self::Random => Box::new(Random::new(seed ^ POLICY_SEED_SALT)),
            Self::Fixed(limit) => Box::new(Fixed::new(*limit)),
            Self::Learned(model) => Box::new(model.as_ref().clone()),
        }
    }
}

/// Which send-side bandwidth estimator the call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BweChoice {
    /// This project's libwebrtc-faithful [`GoogCc`](pacer::GoogCc) (the default: it is what the paper's
    /// client ran).
    #[default]
    GoogCc,
    /// webrtc-rs's own `Gcc`.
    WebrtcRs,
}

impl BweChoice {
    /// Every estimator, the default first.
    pub const ALL: [BweChoice; 2] = [BweChoice::GoogCc, BweChoice::WebrtcRs];

    /// The estimator named `name` (as [`Self::as_str`] writes it), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.as_str() == name)
    }

    /// The name `--bwe` takes and telemetry writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GoogCc => "googcc",
            Self::WebrtcRs => "webrtc-rs",
        }
    }

    /// The telemetry value.
    pub fn telemetry(self) -> Bwe {
        match self {
            Self::GoogCc => Bwe::GoogCc,
            Self::WebrtcRs => Bwe::WebrtcRs,
        }
    }
}

/// Which NACK generator and responder the call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NackChoice {
    /// webrtc-rs's stock pair:
    /// `NackGeneratorBuilder::new().with_max_nacks_per_packet(MAX_NACKS_PER_PACKET)` and
    /// `NackResponderBuilder::new()`, no RTX.
    Stock,
    /// The libwebrtc-like pair of [`crate::nack`], with RTX (the default).
    #[default]
    Libwebrtc,
    /// No NACK: losses are left to the media receiver's PLIs.
    Off,
}

impl NackChoice {
    /// Every NACK pair, the default first.
    pub const ALL: [NackChoice; 3] = [NackChoice::Libwebrtc, NackChoice::Stock, NackChoice::Off];

    /// The NACK pair named `name` (as [`Self::as_str`] writes it), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|n| n.as_str() == name)
    }

    /// The name `--nack` takes and telemetry writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stock => "stock",
            Self::Libwebrtc => "libwebrtc",
            Self::Off => "off",
        }
    }

    /// The telemetry value.
    pub fn mode(self) -> NackMode {
        match self {
            Self::Stock => NackMode::Stock,
            Self::Libwebrtc => NackMode::Libwebrtc,
            Self::Off => NackMode::Off,
        }
    }
}

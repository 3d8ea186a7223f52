//! What a call chooses: the queue policy, the bandwidth estimator, the NACK pair and the loss
//! protection.
//!
//! Each choice has the name `--policy`, `--bwe`, `--nack` and `--fec` take, scenario files use and
//! telemetry writes. Simulated and real calls build their sender from the same choices
//! (docs/architecture.md, "The call engine").

use super::timed::TimedActions;
use pacer::policy::{PathArm, PolicyError, Random, RandomJoint};
use pacer::telemetry::{Bwe, NackMode};
use pacer::{
    ActionConfig, ActionProfile, FecMode, Fixed, Forecast, Gated, Heuristic, OnnxPolicy,
    QueuePolicy,
};
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
    /// A uniformly drawn limit and action profile each interval ([`RandomJoint`]), seeded from
    /// the call seed: `collect --explore-actions`.
    RandomJoint,
    /// A fixed limit.
    Fixed(Duration),
    /// One limit where the forecast holds a handover, another where it holds none ([`Gated`]).
    Gated(Gated),
    /// The learned ONNX policy, loaded and checked against its card.
    Learned(Arc<OnnxPolicy>),
    /// One arm of the path-aware policy's menu: the measuring output for the window, then one
    /// output of [`pacer::policy::PATH_MENU`] (`path-arm:<output>`, the counterfactual calls
    /// `policy-train counterfactual` labels).
    PathArm(PathArm),
    /// Handover-timed actions with the plugin's default windows at every predicted handover
    /// (docs/architecture.md, "Handover-timed actions"), over the queue limit of another policy
    /// (the heuristic's unless named: `timed@fixed:200`).
    Timed {
        /// The actions applied.
        actions: TimedActions,
        /// The policy that picks the queue limit; `None` is the heuristic.
        limit: Option<Box<PolicyChoice>>,
    },
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
            Self::RandomJoint => "random-joint".into(),
            Self::Fixed(limit) => format!("fixed:{}", limit.as_millis()),
            Self::Gated(gated) => gated.name(),
            Self::Learned(model) => QueuePolicy::name(model.as_ref()),
            Self::PathArm(arm) => arm.name(),
            Self::Timed { actions, limit } => {
                let mut name = "timed".to_owned();
                if let Some(label) = actions.label() {
                    name = format!("{name}:{label}");
                }
                if let Some(limit) = limit {
                    name = format!("{name}@{}", limit.name());
                }
                name
            }
        }
    }

    /// The handover-timed actions the policy applies, if any: a `timed` policy's, or for a
    /// joint policy (one that chooses a profile at every decision) the `none` profile until its
    /// first decision, so that the call builds an action schedule for it.
    pub fn actions(&self) -> Option<ActionConfig> {
        match self {
            Self::Timed { actions, .. } => Some(actions.config()),
            _ if self.controls_actions() => ActionProfile::named("none").ok().map(|p| p.config),
            _ => None,
        }
    }

    /// Whether the policy chooses the action profile at every decision
    /// ([`QueuePolicy::controls_actions`]).
    pub fn controls_actions(&self) -> bool {
        match self {
            Self::RandomJoint | Self::PathArm(_) => true,
            Self::Learned(model) => model.controls_actions(),
            _ => false,
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
            Self::RandomJoint => Box::new(RandomJoint::new(seed ^ POLICY_SEED_SALT)),
            Self::Fixed(limit) => Box::new(Fixed::new(*limit)),
            Self::Gated(gated) => Box::new(gated.clone()),
            Self::Learned(model) => Box::new(model.as_ref().clone()),
            Self::PathArm(arm) => Box::new(arm.clone()),
            Self::Timed { limit, .. } => Box::new(TimedLimit {
                name: self.name(),
                limit: match limit {
                    Some(limit) => limit.build(seed),
                    None => Box::new(Heuristic),
                },
            }),
        }
    }
}

/// The queue limit of a `timed` policy: its limit policy's, under the timed policy's own name so
/// that telemetry tells them apart.
struct TimedLimit {
    name: String,
    limit: Box<dyn QueuePolicy>,
}

impl QueuePolicy for TimedLimit {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn decide(&mut self, forecast: &Forecast) -> Result<Duration, PolicyError> {
        self.limit.decide(forecast)
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

/// The most media packets a fixed FEC block may hold: libwebrtc's `kUlpfecMaxMediaPackets`
/// (`pacer::protection::MAX_BLOCK_MEDIA_PACKETS`).
pub const MAX_FIXED_FEC_MEDIA: u32 = pacer::protection::MAX_BLOCK_MEDIA_PACKETS as u32;

/// Which loss protection (FEC) the sender runs: FlexFEC-03 on its own repair SSRC
/// (`a=ssrc-group:FEC-FR`), built by [`pacer::LossProtection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FecChoice {
    /// libwebrtc's adaptive protection: hybrid NACK/FEC with the rate table, driven by the
    /// receiver reports' loss, the RTT and the target (the default: what a browser does once
    /// FEC is negotiated).
    #[default]
    Libwebrtc,
    /// No FEC.
    Off,
    /// A fixed block shape: every `media` consecutive media packets get `repair` repair packets.
    Fixed {
        /// Media packets per block, 1 to [`MAX_FIXED_FEC_MEDIA`].
        media: u32,
        /// Repair packets per block, 1 to `media`.
        repair: u32,
    },
}

/// Why a `--fec` value or a `[sender] fec` key is not a loss protection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FecChoiceError {
    /// Neither a name nor `fixed:<media>/<repair>`.
    #[error(
        "unknown FEC mode `{0}`: expected libwebrtc, off or fixed:<media>/<repair> (e.g. fixed:10/2)"
    )]
    Unknown(String),
    /// `fixed:` with counts that are not two whole numbers or out of range.
    #[error(
        "bad fixed FEC shape `{0}`: expected fixed:<media>/<repair> with 1 <= repair <= media <= {MAX_FIXED_FEC_MEDIA}, e.g. fixed:10/2"
    )]
    BadShape(String),
}

impl FecChoice {
    /// The protection named `text`: `libwebrtc`, `off` or `fixed:<media>/<repair>`.
    ///
    /// # Errors
    ///
    /// [`FecChoiceError`] naming the text.
    pub fn parse(text: &str) -> Result<Self, FecChoiceError> {
        match text {
            "libwebrtc" => return Ok(Self::Libwebrtc),
            "off" => return Ok(Self::Off),
            _ => {}
        }
        let Some(shape) = text.strip_prefix("fixed:") else {
            return Err(FecChoiceError::Unknown(text.to_owned()));
        };
        let bad = || FecChoiceError::BadShape(text.to_owned());
        let (media, repair) = shape.split_once('/').ok_or_else(bad)?;
        let media: u32 = media.parse().map_err(|_| bad())?;
        let repair: u32 = repair.parse().map_err(|_| bad())?;
        if !(1..=MAX_FIXED_FEC_MEDIA).contains(&media) || !(1..=media).contains(&repair) {
            return Err(bad());
        }
        Ok(Self::Fixed { media, repair })
    }

    /// The name `--fec` takes and telemetry writes.
    pub fn name(self) -> String {
        match self {
            Self::Libwebrtc => "libwebrtc".to_owned(),
            Self::Off => "off".to_owned(),
            Self::Fixed { media, repair } => format!("fixed:{media}/{repair}"),
        }
    }

    /// Whether the call sends FEC at all (and negotiates a repair stream).
    pub fn is_on(self) -> bool {
        self != Self::Off
    }

    /// The protection interceptor's mode.
    pub fn mode(self) -> FecMode {
        match self {
            Self::Libwebrtc => FecMode::Libwebrtc,
            Self::Off => FecMode::Off,
            Self::Fixed { media, repair } => FecMode::Fixed { media, repair },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fec_choices_read_back_from_their_names() {
        for choice in [
            FecChoice::Libwebrtc,
            FecChoice::Off,
            FecChoice::Fixed {
                media: 10,
                repair: 2,
            },
            FecChoice::Fixed {
                media: 48,
                repair: 48,
            },
        ] {
            assert_eq!(FecChoice::parse(&choice.name()), Ok(choice));
        }
        assert_eq!(FecChoice::default(), FecChoice::Libwebrtc);
        assert!(!FecChoice::Off.is_on() && FecChoice::Libwebrtc.is_on());
    }

    #[test]
    fn bad_fec_values_name_what_was_wrong() {
        assert_eq!(
            FecChoice::parse("ulpfec").unwrap_err().to_string(),
            "unknown FEC mode `ulpfec`: expected libwebrtc, off or fixed:<media>/<repair> (e.g. fixed:10/2)"
        );
        for bad in [
            "fixed:",
            "fixed:10",
            "fixed:0/1",
            "fixed:5/6",
            "fixed:49/2",
            "fixed:a/b",
            "fixed:10/0",
        ] {
            assert_eq!(
                FecChoice::parse(bad),
                Err(FecChoiceError::BadShape(bad.to_owned())),
                "{bad}"
            );
        }
        assert!(
            FecChoice::parse("fixed:49/2")
                .unwrap_err()
                .to_string()
                .contains("repair <= media <= 48")
        );
    }
}

//! The path-aware policy's menu: the (queue limit, action profile) outputs it chooses among
//! once per call, the output it runs while it measures the path, and the fixed-arm policies that
//! label its training calls (docs/architecture.md, "The model and its card", path cards).
//!
//! No single profile suits every path (docs/architecture.md, "Which actions pay where"): the
//! playout raise with discardable frames over a 200-ms limit cut freezes most on starlink and
//! lagos-trace, but discardable frames raised leocc-trace's P95, and every 200-ms limit added
//! freezes on terrestrial-lte, where libwebrtc's 2000 ms has the fewest. The menu holds the
//! profiles those measurements single out, each over both limits where it matters:
//!
//! | output | why |
//! |---|---|
//! | `none@2000` | libwebrtc's sender: the fewest freezes on terrestrial-lte |
//! | `playout@2000` | the raise alone changes no packet's timing |
//! | `playout+discardable@2000` | the receiver-side actions without the short limit |
//! | `playout@200` | the raise over the short limit |
//! | `playout300-follow500+discardable+floor100-weighed+phase100@200` | the raise and discardable frames over the short limit, the raise capped at 300 ms until the call's frames show it late, then at 500, a 100-ms playout floor while the sender's replay of the receiver says it spares more freezes than it costs in P95 delay (docs/experiments/weighed-floor-2026-12-06.md), and a raise of at most 100 ms at a phase of the slot where the path loses away from the predicted instants, once eight slots show it (docs/experiments/mmsys24-2026-12-06.md, section 6); what the call runs while it measures where handovers are forecast (the floor is not weighed before 30 s of frames and the phase needs two minutes, so the window measures the followed raise alone) |
//! | `hold160+guard+boost+playout@200` | plain `timed@fixed:200` |
//! | `none@500` | libwebrtc's sender with a 500-ms limit: the best fixed profile on terrestrial-5g; what the call runs while it measures where no handover is forecast |
//! | `playout300-follow500+discardable+floor100@200` | the followed raise over a 100-ms playout floor for every frame: fewer freezes where loss away from the boundaries comes in bursts, more P95 delay where it does not (docs/experiments/playout-floor-2026-12-06.md) |
//!
//! The raise's cap follows the path (docs/experiments/raise-follow-2026-12-05.md) instead of
//! being two outputs, 300 and 500 ms, for the card to choose between: at the decision starlink,
//! where 300 ms is best, and lagos-trace, where 500 ms is, look alike, and a card that split them
//! cost both (docs/experiments/queue-limit-2026-12-05.md, sections 4 and 7).
//!
//! The measuring window is 30 s: two 15-s slots, enough for the hold gate's 100 boundary packets
//! at the call's starting rates, and short against a 10-minute call. While it runs, the call
//! applies the followed raise over 200 ms, the best fixed profile where boundaries lose packets,
//! or, where the forecast at the call's start predicts no handover, libwebrtc's sender with a
//! 500-ms limit: there the actions have no instant to act at, a 200-ms limit over the first 30 s
//! of a terrestrial-lte call added freezes, and 2000 ms let a terrestrial-5g stall in the window
//! queue up to 2 s of video (docs/experiments/queue-limit-2026-12-05.md, sections 5 and 7).

use super::card::Measure;
use super::{Choice, PolicyError, QueuePolicy};
use crate::actions::ActionProfile;
use crate::policy::CallFeedback;
use handover_predictor::Forecast;
use std::time::{Duration, Instant};

/// One output of the menu: a queue limit and an action profile of the menu
/// ([`crate::actions::PROFILE_NAMES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathOutput {
    /// The queue time limit, ms.
    pub limit_ms: u64,
    /// The action profile's name.
    pub profile: &'static str,
}

impl PathOutput {
    /// `<profile>@<limit>`, its name in arm policies, cards and reports.
    pub fn name(&self) -> String {
        format!("{}@{}", self.profile, self.limit_ms)
    }

    /// The choice it stands for.
    pub fn choice(&self) -> Choice {
        Choice {
            limit: Duration::from_millis(self.limit_ms),
            profile: ActionProfile::named(self.profile).ok(),
        }
    }
}

/// The menu, in the order of the model's outputs.
pub const PATH_MENU: [PathOutput; 8] = [
    PathOutput {
        limit_ms: 2000,
        profile: "none",
    },
    PathOutput {
        limit_ms: 2000,
        profile: "playout",
    },
    PathOutput {
        limit_ms: 2000,
        profile: "playout+discardable",
    },
    PathOutput {
        limit_ms: 200,
        profile: "playout",
    },
    PathOutput {
        limit_ms: 200,
        profile: "playout300-follow500+discardable+floor100-weighed+phase100",
    },
    PathOutput {
        limit_ms: 200,
        profile: "hold160+guard+boost+playout",
    },
    PathOutput {
        limit_ms: 500,
        profile: "none",
    },
    PathOutput {
        limit_ms: 200,
        profile: "playout300-follow500+discardable+floor100",
    },
];

/// The measuring window: 30 s of `playout300-follow500+discardable+floor100-weighed+phase100@200`
/// (output 4, whose floor is not weighed before 30 s of frames and whose phase raise needs eight
/// slots: the followed raise alone), or of
/// libwebrtc's sender with a 500-ms limit (`none@500`, output 6) where the forecast at the call's
/// start predicts no handover.
pub const PATH_MEASURE: Measure = Measure {
    seconds: 30,
    output: 4,
    without_handovers: Some(6),
};

/// The prefix of an arm policy's name: `path-arm:<output>`.
pub const ARM_PREFIX: &str = "path-arm:";

/// One arm of the menu: the measuring output for [`PATH_MEASURE`]'s window, then one fixed
/// output for the rest of the call. The simulator is deterministic, so the arms of one seed
/// share the link and, up to the window's end, every packet: what each arm measured there is
/// what the path-aware policy would read at its decision, and how each call ends is that
/// output's counterfactual outcome.
#[derive(Debug, Clone)]
pub struct PathArm {
    output: usize,
    started: Option<Instant>,
    measuring: Option<usize>,
}

impl PathArm {
    /// The arm of output `index` of [`PATH_MENU`]; `None` past the menu.
    pub fn new(index: usize) -> Option<Self> {
        (index < PATH_MENU.len()).then_some(Self {
            output: index,
            started: None,
            measuring: None,
        })
    }

    /// The arm named `path-arm:<profile>@<limit>`, or a message naming the menu.
    pub fn parse(name: &str) -> Result<Self, String> {
        let output = name.strip_prefix(ARM_PREFIX).unwrap_or(name);
        PATH_MENU
            .iter()
            .position(|o| o.name() == output)
            .and_then(Self::new)
            .ok_or_else(|| {
                let names: Vec<String> = PATH_MENU.iter().map(PathOutput::name).collect();
                format!(
                    "unknown path-menu output {output:?}: expected {ARM_PREFIX} and one of {}",
                    names.join(", ")
                )
            })
    }

    /// Its output's index in [`PATH_MENU`].
    pub fn output(&self) -> usize {
        self.output
    }
}

impl QueuePolicy for PathArm {
    fn name(&self) -> String {
        format!("{ARM_PREFIX}{}", PATH_MENU[self.output].name())
    }

    fn decide(&mut self, forecast: &Forecast) -> Result<Duration, PolicyError> {
        Ok(self.decide_joint(forecast, &CallFeedback::default())?.limit)
    }

    fn controls_actions(&self) -> bool {
        true
    }

    fn measuring_window(&self) -> Option<Duration> {
        Some(Duration::from_secs(PATH_MEASURE.seconds))
    }

    fn decide_joint(
        &mut self,
        forecast: &Forecast,
        _feedback: &CallFeedback,
    ) -> Result<Choice, PolicyError> {
        let now = forecast.t0();
        let started = *self.started.get_or_insert(now);
        let measuring_output = *self
            .measuring
            .get_or_insert_with(|| PATH_MEASURE.output_for(forecast));
        let measuring =
            now.saturating_duration_since(started) < Duration::from_secs(PATH_MEASURE.seconds);
        let output = if measuring {
            measuring_output
        } else {
            self.output
        };
        Ok(PATH_MENU[output].choice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_output_names_a_menu_profile_once_and_reads_back_by_name() {
        let mut names = std::collections::BTreeSet::new();
        for (i, output) in PATH_MENU.iter().enumerate() {
            assert!(ActionProfile::named(output.profile).is_ok(), "{output:?}");
            assert!(names.insert(output.name()), "{output:?} twice");
            let arm = PathArm::parse(&format!("{ARM_PREFIX}{}", output.name())).unwrap();
            assert_eq!(arm.output(), i);
            assert_eq!(arm.name(), format!("path-arm:{}", output.name()));
        }
        assert!(PATH_MEASURE.output < PATH_MENU.len());
        assert_eq!(
            PATH_MENU[PATH_MEASURE.output].name(),
            "playout300-follow500+discardable+floor100-weighed+phase100@200"
        );
        assert_eq!(
            PATH_MEASURE.without_handovers.map(|o| PATH_MENU[o].name()),
            Some("none@500".to_owned())
        );
        let err = PathArm::parse("path-arm:playout@300").unwrap_err();
        assert!(err.contains("none@2000, playout@2000"), "{err}");
        assert!(PathArm::new(PATH_MENU.len()).is_none());
    }

    #[test]
    fn an_arm_measures_for_the_window_then_keeps_its_output() {
        let start = Instant::now();
        let slots = |s: u64| {
            let mut bits = [0u8; 120];
            for k in [11, 26, 41] {
                bits[k] = 1;
            }
            let steps = handover_predictor::HandoverSteps::from_bits(&bits).unwrap();
            Forecast::new(
                handover_predictor::ForecastSource::Oracle,
                start + Duration::from_secs(s),
                steps,
            )
        };
        let clear = |s: u64| Forecast::none(start + Duration::from_secs(s));
        let choose = |arm: &mut PathArm, forecast: Forecast| {
            arm.decide_joint(&forecast, &CallFeedback::default())
                .unwrap()
        };
        let chosen = PATH_MENU[3].choice();
        // A path with handovers ahead measures with the followed raise over 200 ms.
        let mut arm = PathArm::parse("path-arm:playout@200").unwrap();
        let measuring = PATH_MENU[PATH_MEASURE.output].choice();
        assert_eq!(choose(&mut arm, slots(0)), measuring);
        assert_eq!(
            choose(&mut arm, clear(29)),
            measuring,
            "decided at the start"
        );
        assert_eq!(choose(&mut arm, slots(30)), chosen);
        assert_eq!(choose(&mut arm, slots(120)), chosen);
        assert_eq!(chosen.limit, Duration::from_millis(200));
        assert_eq!(chosen.profile.map(|p| p.name), Some("playout"));
        // One without a predicted handover measures with libwebrtc's sender at 500 ms.
        let mut arm = PathArm::parse("path-arm:playout@200").unwrap();
        let plain = PATH_MENU[6].choice();
        assert_eq!(plain.limit, Duration::from_millis(500));
        assert_eq!(choose(&mut arm, clear(0)), plain);
        assert_eq!(choose(&mut arm, slots(29)), plain);
        assert_eq!(choose(&mut arm, clear(30)), chosen);
        assert_eq!(
            arm.measuring_window(),
            Some(Duration::from_secs(PATH_MEASURE.seconds))
        );
    }
}

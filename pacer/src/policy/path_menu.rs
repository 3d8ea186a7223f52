//! The path-aware policy's menu: the (queue limit, action profile) outputs it chooses among
//! once per call, the output it runs while it measures the path, and the fixed-arm policies that
//! label its training calls (docs/architecture.md, "The model and its card", path cards).
//!
//! No single profile suits every path (docs/architecture.md, "Which actions pay where"). The best
//! fixed profile of the goal table, the playout raise with discardable frames, the weighed floor,
//! the phase raise and the receiver gate open until measured (`gate-open` below), cut freezes
//! most on starlink and lagos-trace over either a 200-ms limit or the gated limit; yet the 200-ms
//! limit adds freezes on terrestrial-lte, where libwebrtc's 2000 ms has the fewest, and the gated
//! limit gives back a P95 gain on starrynet-sparse and terrestrial-5g that the 200-ms limit keeps
//! (docs/experiments/gated-limit-2026-12-07.md). The menu holds the outputs a per-path choice
//! among them needs, least intrusive first:
//!
//! | output | why |
//! |---|---|
//! | `none@2000` | libwebrtc's sender: the fewest freezes on terrestrial-lte |
//! | `none@500` | libwebrtc's sender with a 500-ms limit: half the P95 delay of 2000 ms on the training family's terrestrial paths for 4 % more freezes; what the call runs while it measures where no handover is forecast |
//! | `gate-open@gated:200` | the gate-open profile over the gated limit (200 ms while the forecast holds a handover, 500 ms while it holds none): the only fixed profile of the goal table that meets the goal on starlink and lagos-trace with no harm on the other six scenarios (docs/results.md) |
//! | `gate-open@200` | the same over the 200-ms limit in every interval: 19 % less P95 delay than the gated limit on starrynet-sparse and 6 % less on terrestrial-5g, 27 % more freezes than libwebrtc's on terrestrial-lte (90 calls each); what the call runs while it measures where handovers are forecast |
//!
//! `gate-open` is `playout300-follow500+discardable+floor100-weighed+phase100+gate-open`
//! ([`crate::actions::PROFILE_NAMES`]). Its raise's cap follows the path
//! (docs/experiments/raise-follow-2026-12-05.md) instead of being two outputs, 300 and 500 ms, for
//! the card to choose between: at the decision starlink, where 300 ms is best, and lagos-trace,
//! where 500 ms is, look alike, and a card that split them cost both
//! (docs/experiments/queue-limit-2026-12-05.md, sections 4 and 7). Earlier menus held more
//! profiles (the raise alone, plain `timed`, the floor for every frame); on the training family
//! the path cards trained on them ran one profile on nearly every path, and what set the others
//! apart on a call was mostly its seed (docs/experiments/lagos-corner-2026-12-06.md, sections 7
//! and 8), so this menu keeps only the choice the measurements single out: which limit.
//!
//! The measuring window is 60 s: four 15-s slots. Two are enough for the hold gate's 100 boundary
//! packets at the call's starting rates; the phase raise's evidence (the `phase_excess_losses`
//! feature) needs more than one closed slot to tell a half second that loses in every slot from
//! one slot's burst. At 60 s it sets the training family's `leo-phased` paths apart (10th
//! percentile 1.98 lost packets a slot over the median half second) from every other member (90th
//! percentile at most 1.67), and a card trained on it no longer loses P95 delay on
//! starrynet-sparse (docs/experiments/path-card-window-2026-12-07.md). While it runs, the call
//! applies `gate-open@200`, the best fixed profile where boundaries lose packets (the weighed floor
//! weighs from 30 s of frames and the phase raise needs eight slots, so the window runs the
//! followed raise and discardable frames, then the floor), or, where the forecast at the call's start predicts
//! no handover, libwebrtc's sender with a 500-ms limit: there the actions have no instant to act
//! at, a 200-ms limit over the first 30 s of a terrestrial-lte call added freezes, and 2000 ms let
//! a terrestrial-5g stall in the window queue up to 2 s of video
//! (docs/experiments/queue-limit-2026-12-05.md, sections 5 and 7).

use super::card::Measure;
use super::{Choice, Gated, PolicyError, QueuePolicy};
use crate::actions::ActionProfile;
use crate::policy::CallFeedback;
use handover_predictor::Forecast;
use std::time::{Duration, Instant};

/// One output of the menu: a queue limit, gated by the forecast or not, and an action profile of
/// the menu ([`crate::actions::PROFILE_NAMES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathOutput {
    /// The queue time limit, ms; with [`Self::quiet_ms`], the limit while the forecast holds a
    /// handover.
    pub limit_ms: u64,
    /// The limit while the forecast holds no handover, ms, for an output over the gated limit
    /// ([`Gated`]); `None` runs [`Self::limit_ms`] in every interval.
    pub quiet_ms: Option<u64>,
    /// The action profile's name.
    pub profile: &'static str,
}

impl PathOutput {
    /// `<profile>@<limit>`, its name in arm policies, cards and reports, the limit as the CLI
    /// names it: `200`, or `gated:200` for the gated limit ([`Gated`]'s name).
    pub fn name(&self) -> String {
        match self.gated() {
            Some(gated) => format!("{}@{}", self.profile, gated.name()),
            None => format!("{}@{}", self.profile, self.limit_ms),
        }
    }

    /// The gated limit it runs, if it runs one.
    fn gated(&self) -> Option<Gated> {
        self.quiet_ms.map(|quiet| {
            Gated::with_quiet(
                Duration::from_millis(self.limit_ms),
                Duration::from_millis(quiet),
            )
        })
    }

    /// The choice it stands for in an interval with `forecast`.
    pub fn choice(&self, forecast: &Forecast) -> Choice {
        Choice {
            limit: self
                .gated()
                .map_or(Duration::from_millis(self.limit_ms), |g| {
                    g.limit_for(forecast)
                }),
            profile: ActionProfile::named(self.profile).ok(),
        }
    }
}

/// The gate-open profile's name.
const GATE_OPEN: &str = "playout300-follow500+discardable+floor100-weighed+phase100+gate-open";

/// The quiet limit of the menu's gated output, ms: [`Gated::default_quiet`], the paper's limit for
/// an interval without handovers.
const QUIET_MS: u64 = 500;

/// The menu, in the order of the model's outputs.
pub const PATH_MENU: [PathOutput; 4] = [
    PathOutput {
        limit_ms: 2000,
        quiet_ms: None,
        profile: "none",
    },
    PathOutput {
        limit_ms: 500,
        quiet_ms: None,
        profile: "none",
    },
    PathOutput {
        limit_ms: 200,
        quiet_ms: Some(QUIET_MS),
        profile: GATE_OPEN,
    },
    PathOutput {
        limit_ms: 200,
        quiet_ms: None,
        profile: GATE_OPEN,
    },
];

/// The measuring window: 60 s of `gate-open@200` (output 3, whose phase raise needs eight slots:
/// the followed raise, discardable frames and, from 30 s of frames, the weighed floor), or of
/// libwebrtc's sender with a 500-ms limit (`none@500`, output 1) where the forecast at the call's
/// start predicts no handover.
pub const PATH_MEASURE: Measure = Measure {
    seconds: 60,
    output: 3,
    without_handovers: Some(1),
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
        Ok(PATH_MENU[output].choice(forecast))
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
        assert_eq!(QUIET_MS, Gated::default_quiet().as_millis() as u64);
        assert_eq!(PATH_MENU[2].name(), format!("{GATE_OPEN}@gated:200"));
        assert_eq!(
            PATH_MENU[PATH_MEASURE.output].name(),
            format!("{GATE_OPEN}@200")
        );
        assert_eq!(
            PATH_MEASURE.without_handovers.map(|o| PATH_MENU[o].name()),
            Some("none@500".to_owned())
        );
        let err = PathArm::parse("path-arm:playout@300").unwrap_err();
        assert!(err.contains("none@2000, none@500"), "{err}");
        assert!(PathArm::new(PATH_MENU.len()).is_none());
    }

    fn slots(start: Instant, s: u64) -> Forecast {
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
    }

    #[test]
    fn an_arm_measures_for_the_window_then_keeps_its_output() {
        let start = Instant::now();
        let slots = |s: u64| slots(start, s);
        let clear = |s: u64| Forecast::none(start + Duration::from_secs(s));
        let choose = |arm: &mut PathArm, forecast: Forecast| {
            arm.decide_joint(&forecast, &CallFeedback::default())
                .unwrap()
        };
        let w = PATH_MEASURE.seconds;
        let chosen = PATH_MENU[1].choice(&slots(w));
        // A path with handovers ahead measures with gate-open over 200 ms.
        let mut arm = PathArm::parse("path-arm:none@500").unwrap();
        let measuring = PATH_MENU[PATH_MEASURE.output].choice(&slots(0));
        assert_eq!(choose(&mut arm, slots(0)), measuring);
        assert_eq!(
            choose(&mut arm, clear(w - 1)),
            measuring,
            "decided at the start"
        );
        assert_eq!(choose(&mut arm, slots(w)), chosen);
        assert_eq!(choose(&mut arm, slots(w + 90)), chosen);
        assert_eq!(chosen.limit, Duration::from_millis(500));
        assert_eq!(chosen.profile.map(|p| p.name), Some("none"));
        assert_eq!(measuring.limit, Duration::from_millis(200));
        assert_eq!(measuring.profile.map(|p| p.name), Some(GATE_OPEN));
        // One without a predicted handover measures with libwebrtc's sender at 500 ms.
        let mut arm = PathArm::parse(&format!("path-arm:{GATE_OPEN}@200")).unwrap();
        let plain = PATH_MENU[1].choice(&clear(0));
        assert_eq!(choose(&mut arm, clear(0)), plain);
        assert_eq!(choose(&mut arm, slots(w - 1)), plain);
        assert_eq!(choose(&mut arm, clear(w)), measuring);
        assert_eq!(
            arm.measuring_window(),
            Some(Duration::from_secs(PATH_MEASURE.seconds))
        );
    }

    #[test]
    fn the_gated_output_runs_the_short_limit_only_where_a_handover_is_forecast() {
        let start = Instant::now();
        let mut arm = PathArm::parse(&format!("path-arm:{GATE_OPEN}@gated:200")).unwrap();
        let mut decide = |forecast: Forecast| {
            arm.decide_joint(&forecast, &CallFeedback::default())
                .unwrap()
        };
        decide(Forecast::none(start));
        let w = PATH_MEASURE.seconds;
        let busy = decide(slots(start, w));
        let quiet = decide(Forecast::none(start + Duration::from_secs(w + 10)));
        assert_eq!(busy.limit, Duration::from_millis(200));
        assert_eq!(quiet.limit, Duration::from_millis(QUIET_MS));
        assert_eq!(busy.profile, quiet.profile);
        assert_eq!(busy.profile.map(|p| p.name), Some(GATE_OPEN));
        let fixed = PATH_MENU[3];
        assert_eq!(
            fixed.choice(&Forecast::none(start)).limit,
            Duration::from_millis(200)
        );
    }
}

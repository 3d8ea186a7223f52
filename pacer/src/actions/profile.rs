//! The named menu of action configurations a joint policy chooses from at each decision
//! (docs/architecture.md, "Handover-timed actions", the profile menu).
//!
//! A learned policy cannot output a free-form [`ActionConfig`]: its outputs are a fixed set of
//! classes, and the expert that labels them needs every class tried often enough in every kind of
//! interval. So the configurations are a short menu, each built from [`ActionConfig::default`]
//! (so the hold gate stays on inside every profile that holds), ordered from the least to the
//! most intrusive; the one-standard-error label rule takes the earliest of tied profiles.
//!
//! Why these five (docs/experiments/timed-2026-12-02.md, 10-30 held-out calls per cell):
//! - `none`: nothing; what a terrestrial path, or a path whose boundaries cost nothing, needs.
//! - `guard`: the estimator guard alone; no overhead, and it keeps GoogCC from backing off on a
//!   boundary's delay spike.
//! - `guard+boost`: the set that cost nothing on leocc-trace (delay spikes, no loss: 0.10
//!   freezes/min with or without it) and helped on starlink.
//! - `hold160+guard+boost`: the measured default hold `[t - 20, t + 140)`, the best with exact
//!   timing (-35 % freezes on starlink).
//! - `hold180+guard+boost`: the hold `[t, t + 180)`, the only window that kept its gain with the
//!   forecast 50 ms early (-23.5 %), at a cost when the timing is exact (-27.6 %).
//!
//! Left out: holds ending at `t + 100 ms` (they release the backlog into the worst 100-ms row,
//! -12 %) and holds of 220 ms or more (worse than no hold, +8 %); the boost alone (its gain is
//! within the guard+boost set's).
//!
//! The menu's second part came with the receiver-side actions, each at its default window
//! (docs/architecture.md, "Which actions pay where"; held-out seeds 9300-9329 on
//! `docs/results.md`):
//! - `playout`: the playout raise alone; it changes no packet's timing, so on a path whose
//!   boundaries cost nothing it costs nothing.
//! - `playout+discardable`: the raise and discardable frames, the best profile on starlink
//!   (-93 % freezes) and lagos-trace (-58 %) over a 200-ms limit, but +11 % P95 on leocc-trace.
//! - `hold160+guard+boost+playout`: plain `timed`'s four actions.
//! - `playout300+discardable`: `playout+discardable` with the raise capped at 300 ms instead of
//!   500 (`playout.max_raise_ms`). Gated, over a 200-ms limit, on starlink it froze as rarely
//!   (-91.0 % against -91.9 %) at a P95 4.7 % below `default`'s instead of 6.2 % above it, and
//!   on lagos-trace it froze 49.6 % less against 52.7 % at 344 against 420 ms P95; it gives up
//!   the cut in stalls the higher cap makes (docs/experiments/receiver-gate-2026-12-05.md,
//!   section 6, tuning seeds 9500-9529).
//! - `playout300-follow500+discardable`: the same, its cap following the path to 500 ms once two
//!   playout windows of the call had a frame that was not discardable and completed too late
//!   for the 300-ms raise, by transport feedback (`playout.follow_cap_ms`, over the whole call).
//!   On 90 new seeds it was within 5 % of the best fixed cap on both starlink (P95 +0.9 % against
//!   the 300-ms cap) and lagos-trace (freezes +2.3 % against the 500-ms cap), where each cap
//!   misses on one (docs/experiments/raise-follow-2026-12-05.md).
//! - `playout300-follow500+discardable+floor100`: the same over a 100-ms playout floor for every
//!   frame of the call (`playout.floor_ms`), for loss away from the boundaries: it cut freezes
//!   where that loss comes in bursts and cost P95 delay where it does not
//!   (docs/experiments/playout-floor-2026-12-06.md).
//! - `playout300-follow500+discardable+floor100-weighed`: the same with the floor weighed
//!   (`playout.floor_weighed`): it applies while the sender's replay of the receiver's playout
//!   says that for the last minute's frames it spares more freezes than it costs in the call's
//!   P95 delay, and lifts that P95 by at most 10 % (docs/experiments/weighed-floor-2026-12-06.md).
//! - `playout300-follow500+discardable+floor100-weighed+phase100`: the same with the phase raise
//!   (`playout.phase_raise_ms`): where the call's transport feedback shows the path losing at a
//!   phase of the slot away from the predicted instants, frames captured there get one repair
//!   round of raise, at most 100 ms, and are discardable. Over the mmsys24 Lagos ISL ping trace
//!   it cut the weighed floor's freezes by 35-38 %; on the shipped scenarios it finds no phase
//!   and runs as the weighed floor (docs/experiments/mmsys24-2026-12-06.md, section 6).
//!
//! - `playout300-follow500+discardable+floor100-weighed+phase100+gate-open`: the same with the
//!   receiver gate open until it has measured the boundaries (`receiver_gate.open_until_measured`):
//!   the raise and discardable frames apply from the call's first boundary, where the gate as
//!   shipped waits for 50 reported boundary packets, and those boundaries went without them. The
//!   best fixed profile of the goal table on starlink and lagos-trace, as the action file
//!   `traces/actions/playout300-follow500+discardable+floor100-weighed+phase100+gate-open.toml`
//!   (docs/experiments/gate-start-2026-12-06.md, docs/results.md).
//!
//! Random exploration (`random-joint`) draws only from the first [`EXPLORATION_PROFILES`], the
//! menu the shipped joint model was trained on.

use super::config::{ActionConfig, ActionWindow};

/// One named configuration of the menu.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActionProfile {
    /// Its name in cards, telemetry and the CLI.
    pub name: &'static str,
    /// What it applies.
    pub config: ActionConfig,
}

/// Every configuration of the menu comes from [`ActionConfig::default`], which
/// [`ActionConfig::validate`] accepts: no NaN anywhere, so equality is an equivalence.
impl Eq for ActionProfile {}

/// The profiles' names in menu order, least intrusive first.
pub const PROFILE_NAMES: [&str; 14] = [
    "none",
    "guard",
    "guard+boost",
    "hold160+guard+boost",
    "hold180+guard+boost",
    "playout",
    "playout+discardable",
    "hold160+guard+boost+playout",
    "playout300+discardable",
    "playout300-follow500+discardable",
    "playout300-follow500+discardable+floor100",
    "playout300-follow500+discardable+floor100-weighed",
    "playout300-follow500+discardable+floor100-weighed+phase100",
    "playout300-follow500+discardable+floor100-weighed+phase100+gate-open",
];

/// How many of [`PROFILE_NAMES`], from the first, `random-joint` explores: the menu before the
/// receiver-side actions, so that exploration draws the calls it drew when the shipped joint
/// model was trained.
pub const EXPLORATION_PROFILES: usize = 5;

/// The raise cap of `playout300+discardable`, ms: the lower of the two caps probed with
/// discardable frames and the receiver gate (docs/experiments/receiver-gate-2026-12-05.md,
/// section 6). 200 ms turned starlink's stalls into 48.5 % more than `default`'s.
pub const LOW_RAISE_CAP_MS: u64 = 300;

/// The cap `playout300-follow500+discardable` follows the path to, ms: the default cap, which
/// lagos-trace needs (docs/experiments/raise-follow-2026-12-05.md).
pub const FOLLOWED_RAISE_CAP_MS: u64 = 500;

/// The playout floor of `playout300-follow500+discardable+floor100`, ms: the smallest of the
/// floors probed (100, 200 ms) over the followed raise; 200 ms cut more freezes at three times
/// the P95 cost on lagos-trace (docs/experiments/playout-floor-2026-12-06.md).
pub const PLAYOUT_FLOOR_MS: u64 = 100;

/// How far back the weighed floor of `playout300-follow500+discardable+floor100-weighed` looks,
/// ms: a minute. Of the memories probed with the bound on the P95 rise (60, 120 and 600 s, tuning
/// seeds) it cut lagos-trace's freezes most or as much, and starlink's P95 least; 30 s is no
/// longer than the span of frames the weighing needs
/// ([`crate::playout::WEIGHED_FLOOR_MIN_SPAN`]), so it never weighs
/// (docs/experiments/weighed-floor-2026-12-06.md).
pub const WEIGHED_FLOOR_MEMORY_MS: u64 = 60_000;

/// The largest raise of `playout300-follow500+discardable+floor100-weighed+phase100`'s phase
/// windows, ms: of the caps probed at the Lagos ISL path's lossy phase (100, 150, 300-500 ms),
/// the one that cut as many freezes (-72.8 % against -73.3 % at 150 ms) at no more P95 delay
/// than libwebrtc's sender (docs/experiments/mmsys24-2026-12-06.md, section 5).
pub const PHASE_RAISE_MS: u64 = 100;

/// A name that is not in the menu.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown action profile {0:?}: expected one of {names}", names = PROFILE_NAMES.join(", "))]
pub struct UnknownProfile(pub String);

impl ActionProfile {
    /// The menu, least intrusive first (the order of [`PROFILE_NAMES`]).
    pub fn menu() -> [ActionProfile; PROFILE_NAMES.len()] {
        PROFILE_NAMES.map(|name| Self::build(name).expect("every menu name builds"))
    }

    /// The profile named `name`.
    pub fn named(name: &str) -> Result<Self, UnknownProfile> {
        Self::build(name).ok_or_else(|| UnknownProfile(name.to_owned()))
    }

    /// Its place in the menu (0: least intrusive).
    pub fn index(&self) -> usize {
        PROFILE_NAMES
            .iter()
            .position(|n| *n == self.name)
            .unwrap_or(PROFILE_NAMES.len())
    }

    fn build(name: &str) -> Option<Self> {
        let name: &'static str = PROFILE_NAMES.iter().copied().find(|n| *n == name)?;
        // The key-frame block stays off: the call engine's encoder sends key frames only first
        // and on a PLI, as libwebrtc's does, so there is nothing to block (docs/architecture.md,
        // "Handover-timed actions", in calls).
        let mut config = ActionConfig::default();
        config.keyframe_block.enabled = false;
        // The first five profiles predate the playout raise and discardable frames, and the
        // shipped joint model was trained on them without: a profile keeps meaning what the
        // model learned. The later ones name what they turn on.
        let (hold, guard, boost, playout, discardable) = match name {
            "none" => (None, false, false, false, false),
            "guard" => (None, true, false, false, false),
            "guard+boost" => (None, true, true, false, false),
            "hold160+guard+boost" => (Some(config.hold), true, true, false, false),
            "hold180+guard+boost" => (
                Some(ActionWindow {
                    enabled: true,
                    offset_ms: 0,
                    duration_ms: 180,
                }),
                true,
                true,
                false,
                false,
            ),
            "playout" => (None, false, false, true, false),
            "playout+discardable" => (None, false, false, true, true),
            "hold160+guard+boost+playout" => (Some(config.hold), true, true, true, false),
            "playout300+discardable" => {
                config.playout.max_raise_ms = LOW_RAISE_CAP_MS;
                (None, false, false, true, true)
            }
            "playout300-follow500+discardable"
            | "playout300-follow500+discardable+floor100"
            | "playout300-follow500+discardable+floor100-weighed"
            | "playout300-follow500+discardable+floor100-weighed+phase100"
            | "playout300-follow500+discardable+floor100-weighed+phase100+gate-open" => {
                config.playout.max_raise_ms = LOW_RAISE_CAP_MS;
                config.playout.follow_cap_ms = FOLLOWED_RAISE_CAP_MS;
                config.playout.follow_min_windows = 2;
                config.playout.follow_memory_ms = 600_000;
                if name != "playout300-follow500+discardable" {
                    config.playout.floor_ms = PLAYOUT_FLOOR_MS;
                }
                if name.contains("-weighed") {
                    config.playout.floor_weighed = true;
                    config.playout.floor_memory_ms = WEIGHED_FLOOR_MEMORY_MS;
                }
                if name.contains("+phase100") {
                    config.playout.phase_raise_ms = PHASE_RAISE_MS;
                }
                if name.ends_with("+gate-open") {
                    config.receiver_gate.open_until_measured = true;
                }
                (None, false, false, true, true)
            }
            _ => return None,
        };
        config.playout.enabled = playout;
        config.discardable.enabled = discardable;
        match hold {
            Some(window) => config.hold = window,
            None => config.hold.enabled = false,
        }
        config.guard.enabled = guard;
        config.boost.enabled = boost;
        Some(Self { name, config })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_menu_is_valid_ordered_and_read_back_by_name() {
        let menu = ActionProfile::menu();
        for (i, profile) in menu.iter().enumerate() {
            assert!(profile.config.validate().is_ok(), "{}", profile.name);
            assert_eq!(ActionProfile::named(profile.name).unwrap(), *profile);
            assert_eq!(profile.index(), i);
            assert!(profile.config.hold_gate.enabled, "the gate stays on");
            assert!(!profile.config.keyframe_block.enabled);
            if i < EXPLORATION_PROFILES {
                assert!(!profile.config.playout.enabled && !profile.config.discardable.enabled);
            } else {
                assert!(profile.config.playout.enabled, "{}", profile.name);
            }
        }
        assert!(menu[6].config.discardable.enabled && !menu[6].config.hold.enabled);
        assert_eq!(menu[7].config.hold, ActionConfig::default().hold);
        let mut capped = menu[6].config;
        capped.playout.max_raise_ms = LOW_RAISE_CAP_MS;
        assert_eq!(menu[8].config, capped);
        let mut followed = capped;
        followed.playout.follow_cap_ms = FOLLOWED_RAISE_CAP_MS;
        followed.playout.follow_memory_ms = 600_000;
        assert_eq!(menu[9].config, followed);
        assert_eq!(menu[9].config.playout.follow_min_windows, 2);
        let mut floored = followed;
        floored.playout.floor_ms = PLAYOUT_FLOOR_MS;
        assert_eq!(menu[10].config, floored);
        assert!(menu[..10].iter().all(|p| p.config.playout.floor_ms == 0));
        let mut weighed = floored;
        weighed.playout.floor_weighed = true;
        weighed.playout.floor_memory_ms = WEIGHED_FLOOR_MEMORY_MS;
        assert_eq!(menu[11].config, weighed);
        assert!(menu[..11].iter().all(|p| !p.config.playout.floor_weighed));
        let mut phased = weighed;
        phased.playout.phase_raise_ms = PHASE_RAISE_MS;
        assert_eq!(menu[12].config, phased);
        let mut opened = phased;
        opened.receiver_gate.open_until_measured = true;
        assert_eq!(menu[13].config, opened);
        assert!(
            menu[..13]
                .iter()
                .all(|p| !p.config.receiver_gate.open_until_measured)
        );
        assert!(menu[8].config.playout.max_raise_ms < menu[6].config.playout.max_raise_ms);
        assert!(!menu[0].config.hold.enabled);
        assert!(!menu[0].config.guard.enabled && !menu[0].config.boost.enabled);
        assert_eq!(menu[3].config.hold, ActionConfig::default().hold);
        assert_eq!(
            (
                menu[4].config.hold.offset_ms,
                menu[4].config.hold.duration_ms
            ),
            (0, 180)
        );
        let err = ActionProfile::named("hold999").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("unknown action profile \"hold999\": expected one of none, guard"),
            "{err}"
        );
    }
}

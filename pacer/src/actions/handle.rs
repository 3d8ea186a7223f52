//! The application's way into the action schedule while a call runs.
//!
//! As with [`PacerHandle`](crate::PacerHandle) and [`ProtectionHandle`](crate::protection::ProtectionHandle),
//! the components that apply the actions live inside a webrtc-rs chain, which passes nothing but
//! packets across its boundary; the schedule is shared state captured at build time. The driver
//! writes predictions and the configuration, the pacer, the estimator and the protection read
//! the windows at their own events, and telemetry reads the counters.

use super::config::{Action, ActionConfig, ActionConfigError};
use super::schedule::{ActionStats, HandoverActions};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How far from a playout window a hold window may lie and still count as the same boundary's:
/// half a second, far less than any slot (15 s on Starlink) and more than any window offset
/// the defaults use.
const HOLD_NEIGHBOURHOOD: Duration = Duration::from_millis(500);

/// A cloneable, thread-safe handle on one [`HandoverActions`] schedule, shared by the
/// components that apply the actions
/// ([`HandoverAwarePacerBuilder::actions`](crate::pacing::HandoverAwarePacerBuilder::actions),
/// [`GoogCc::guarded_by`](crate::GoogCc::guarded_by),
/// [`LossProtectionBuilder::actions`](crate::protection::LossProtectionBuilder::actions)) and the driver.
///
/// ```
/// use pacer::{ActionConfig, ActionsHandle};
/// use std::time::{Duration, Instant};
///
/// let actions = ActionsHandle::new(ActionConfig::default()).unwrap();
/// let now = Instant::now();
/// // Each new forecast: the predicted handovers and their probabilities.
/// actions.set_predictions(now, [(now + Duration::from_secs(12), 0.9)]);
/// // Each frame: may a periodic key frame go now?
/// assert!(actions.keyframe_allowed(now));
/// // Each telemetry interval: what was applied, then reset.
/// let stats = actions.take_stats(now + Duration::from_secs(120));
/// assert_eq!(stats.guard.applied, 1);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ActionsHandle {
    shared: Arc<Mutex<HandoverActions>>,
}

impl ActionsHandle {
    /// A handle on a new schedule with `config` and no predictions.
    pub fn new(config: ActionConfig) -> Result<Self, ActionConfigError> {
        Ok(Self {
            shared: Arc::new(Mutex::new(HandoverActions::new(config)?)),
        })
    }

    /// [`HandoverActions::set_predictions`]: replaces the predicted handovers as of `now`.
    pub fn set_predictions(
        &self,
        now: Instant,
        predictions: impl IntoIterator<Item = (Instant, f32)>,
    ) {
        self.lock().set_predictions(now, predictions);
    }

    /// [`HandoverActions::set_config`]: replaces the configuration as of `now`.
    pub fn set_config(&self, now: Instant, config: ActionConfig) -> Result<(), ActionConfigError> {
        self.lock().set_config(now, config)
    }

    /// The configuration in force.
    pub fn config(&self) -> ActionConfig {
        *self.lock().config()
    }

    /// [`HandoverActions::is_active`].
    pub fn is_active(&self, action: Action, at: Instant) -> bool {
        self.lock().is_active(action, at)
    }

    /// The end of the `action` window that contains `at`, if one does.
    pub fn window_end(&self, action: Action, at: Instant) -> Option<Instant> {
        self.lock()
            .windows(action)
            .find(|&(start, end)| start <= at && at < end)
            .map(|(_, end)| end)
    }

    /// [`HandoverActions::keyframe_allowed`]: whether the encoder may schedule a periodic key
    /// frame at `now`.
    pub fn keyframe_allowed(&self, now: Instant) -> bool {
        self.lock().keyframe_allowed(now)
    }

    /// [`HandoverActions::frame_discardable`]: whether the encoder is to make the frame captured
    /// at `capture` discardable (a temporal-layer-1 layer-sync frame; docs/architecture.md,
    /// "Discardable frames"). Asked once per frame, like [`Self::keyframe_allowed`].
    pub fn frame_discardable(&self, capture: Instant) -> bool {
        self.lock().frame_discardable(capture)
    }

    /// [`HandoverActions::next_change`].
    pub fn next_change(&self, after: Instant) -> Option<Instant> {
        self.lock().next_change(after)
    }

    /// [`HandoverActions::stats`]: the counters of the interval so far.
    pub fn stats(&self, now: Instant) -> ActionStats {
        self.lock().stats(now)
    }

    /// [`HandoverActions::take_stats`]: the interval's counters, then reset.
    pub fn take_stats(&self, now: Instant) -> ActionStats {
        self.lock().take_stats(now)
    }

    /// [`HandoverActions::record_outcomes`]: transport feedback for the hold gate.
    pub fn record_outcomes(
        &self,
        now: Instant,
        outcomes: impl IntoIterator<Item = (Instant, bool)>,
    ) {
        self.lock().record_outcomes(now, outcomes);
    }

    /// [`HandoverActions::hold_open`].
    pub fn hold_open(&self) -> bool {
        self.lock().hold_open()
    }

    /// [`HandoverActions::receiver_open`].
    pub fn receiver_open(&self) -> bool {
        self.lock().receiver_open()
    }

    /// [`HandoverActions::boundary_excess_loss_pct`].
    pub fn boundary_excess_loss_pct(&self) -> Option<f64> {
        self.lock().boundary_excess_loss_pct()
    }

    /// [`HandoverActions::outside_loss_pct`].
    pub fn outside_loss_pct(&self) -> Option<f64> {
        self.lock().outside_loss_pct()
    }

    /// [`HandoverActions::row_loss_pct`].
    pub fn row_loss_pct(&self) -> [Option<f64>; 3] {
        self.lock().row_loss_pct()
    }

    /// [`HandoverActions::phase_excess_losses`].
    pub fn phase_excess_losses(&self) -> Option<f64> {
        self.lock().phase_excess_losses()
    }

    /// The hold windows, if they changed since generation `seen`, with the new generation.
    pub(crate) fn hold_windows_since(
        &self,
        seen: Option<u64>,
    ) -> Option<(u64, Vec<(Instant, Instant)>)> {
        let actions = self.lock();
        let generation = actions.generation();
        (seen != Some(generation)).then(|| (generation, actions.windows(Action::Hold).collect()))
    }

    /// The playout raise's windows, each with the length of the hold windows that overlap it
    /// or lie within [`HOLD_NEIGHBOURHOOD`] of it (a frame the pacer held is that much later to
    /// begin with) and the largest raise configured for it: `max_held_raise_ms` where a hold
    /// applies, else `max_raise_ms`.
    pub(crate) fn playout_windows(&self) -> Vec<(Instant, Instant, Duration, Duration)> {
        let actions = self.lock();
        let holds: Vec<(Instant, Instant)> = actions.windows(Action::Hold).collect();
        let config = actions.config().playout;
        let (unheld_max, held_max) = (
            Duration::from_millis(config.max_raise_ms),
            Duration::from_millis(config.max_held_raise_ms),
        );
        actions
            .windows(Action::Playout)
            .map(|(start, end)| {
                let near_start = start.checked_sub(HOLD_NEIGHBOURHOOD).unwrap_or(start);
                let near_end = end + HOLD_NEIGHBOURHOOD;
                let hold = holds
                    .iter()
                    .filter(|&&(s, e)| s < near_end && e > near_start)
                    .map(|&(s, e)| e - s)
                    .max()
                    .unwrap_or_default();
                let max = if hold.is_zero() { unheld_max } else { held_max };
                (start, end, hold, max)
            })
            .collect()
    }

    /// The phase raise's windows and its largest raise
    /// ([`PlayoutRaiseConfig::phase_raise_ms`](crate::actions::PlayoutRaiseConfig::phase_raise_ms)).
    pub(crate) fn phase_windows(&self) -> (Vec<(Instant, Instant)>, Duration) {
        let actions = self.lock();
        let max = Duration::from_millis(actions.config().playout.phase_raise_ms);
        (actions.phase_windows().collect(), max)
    }

    fn lock(&self) -> MutexGuard<'_, HandoverActions> {
        self.shared
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::ActionProfile;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_raise_is_capped_lower_at_a_boundary_where_the_hold_applies() {
        let t0 = Instant::now();
        let mut config = ActionConfig::default();
        config.onset.enabled = false;
        config.hold_gate.enabled = false;
        config.playout.max_raise_ms = 500;
        config.playout.max_held_raise_ms = 300;
        let held = ActionsHandle::new(config).unwrap();
        held.set_predictions(t0, [(t0 + ms(3000), 0.9)]);
        config.hold.enabled = false;
        let unheld = ActionsHandle::new(config).unwrap();
        unheld.set_predictions(t0, [(t0 + ms(3000), 0.9)]);
        let windows = held.playout_windows();
        assert_eq!(windows.len(), 1);
        let (start, end, hold, max) = windows[0];
        assert_eq!((start, end), (t0 + ms(2950), t0 + ms(3150)));
        assert_eq!((hold, max), (ms(160), ms(300)), "the held frames' raise");
        let windows = unheld.playout_windows();
        assert_eq!(windows.len(), 1);
        assert_eq!(
            (windows[0].2, windows[0].3),
            (Duration::ZERO, ms(500)),
            "no hold: the larger cap"
        );
    }

    #[test]
    fn a_new_configuration_at_a_decision_rebuilds_the_windows_ahead_and_keeps_the_gate() {
        // The onset tracker off, so that the hold applies from the first boundary.
        let untracked = |name| {
            let mut config = ActionProfile::named(name).unwrap().config;
            config.onset.enabled = false;
            config
        };
        let (none, hold) = (untracked("none"), untracked("hold160+guard+boost"));
        let start = Instant::now();
        let actions = ActionsHandle::new(none).unwrap();
        actions.set_predictions(start, [(start + ms(1000), 0.9), (start + ms(5000), 0.9)]);
        assert_eq!(actions.windows_of(Action::Hold), vec![]);
        // Boundary loss is measured whatever the profile: 100 boundary packets, half lost, and
        // 100 others, none lost.
        let inside = (0..100).map(|i| (start + ms(1000 + i), i % 2 == 0));
        let outside = (0..100).map(|i| (start + ms(1400 + i), true));
        actions.record_outcomes(start + ms(1600), inside.chain(outside));
        let excess = actions.boundary_excess_loss_pct();
        assert!(excess.is_some_and(|e| e > 40.0), "{excess:?}");

        // The next decision picks the holding profile: the windows ahead appear.
        actions.set_config(start + ms(2000), hold).unwrap();
        assert_eq!(actions.config(), hold);
        assert_eq!(
            actions.windows_of(Action::Hold),
            vec![(start + ms(4980), start + ms(5140))]
        );
        assert!(actions.is_active(Action::Guard, start + ms(5000)));
        assert_eq!(
            actions.boundary_excess_loss_pct(),
            excess,
            "the gate's evidence is kept"
        );
        assert!(actions.hold_open());

        // And back to none while the hold runs: it stops at the decision.
        actions.set_config(start + ms(5050), none).unwrap();
        assert_eq!(
            actions.windows_of(Action::Hold),
            vec![(start + ms(4980), start + ms(5050))]
        );
        assert!(!actions.is_active(Action::Guard, start + ms(5100)));
        let stats = actions.take_stats(start + ms(6000));
        assert_eq!((stats.hold.applied, stats.hold.total), (1, ms(70)));

        // A configuration the schedule refuses changes nothing.
        let mut bad = hold;
        bad.min_probability = 2.0;
        assert!(actions.set_config(start + ms(6000), bad).is_err());
        assert_eq!(actions.config(), none);
    }

    #[test]
    fn frames_captured_in_a_discardable_window_are_discardable_and_the_window_is_counted() {
        let mut config = ActionConfig::disabled();
        config.discardable.enabled = true;
        assert_eq!(
            (config.discardable.offset_ms, config.discardable.duration_ms),
            (-50, 250)
        );
        let start = Instant::now();
        let actions = ActionsHandle::new(config).unwrap();
        actions.set_predictions(start, [(start + ms(1000), 0.9), (start + ms(2000), 0.4)]);
        assert!(!actions.frame_discardable(start + ms(949)));
        assert!(actions.frame_discardable(start + ms(950)));
        assert!(actions.frame_discardable(start + ms(1199)));
        assert!(!actions.frame_discardable(start + ms(1200)));
        assert!(
            !actions.frame_discardable(start + ms(2000)),
            "below the threshold"
        );
        let stats = actions.take_stats(start + ms(3000));
        assert_eq!(
            (stats.discardable.applied, stats.discardable.total),
            (1, ms(250))
        );
        let record = crate::telemetry::ActionsRecord::from(stats);
        let line = serde_json::to_string(&record).unwrap();
        assert!(
            line.contains(r#""discardable":{"applied":1,"total_ms":250}"#),
            "{line}"
        );
        // Never applied: not written, so records of calls without it read as before.
        let none = crate::telemetry::ActionsRecord::default();
        assert!(
            !serde_json::to_string(&none)
                .unwrap()
                .contains("discardable")
        );
        // Off in the default configuration and the menu.
        assert!(!ActionConfig::default().discardable.enabled);
    }

    impl ActionsHandle {
        fn windows_of(&self, action: Action) -> Vec<(Instant, Instant)> {
            self.lock().windows(action).collect()
        }
    }
}

//! The decision loop: every interval, a forecast in, a queue time limit out.

use super::{CallFeedback, Fixed, QueuePolicy};
use crate::actions::{ActionProfile, ActionsHandle, TimingError, TimingShift};
use crate::pacing::{PacerHandle, clamp_queue_time_limit};
use handover_predictor::{Forecast, HandoverSource};
use std::fmt;
use std::time::{Duration, Instant};

/// What one decision did, for logs and telemetry: the interval record's `policy`, `action_ms` and
/// `forecast` (docs/architecture.md, "The telemetry contract").
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// 0-based count of decisions made before this one. A late call that skips boundaries still
    /// makes one decision, so this counts decisions, not elapsed intervals.
    pub index: u64,
    /// The instant the decision was made: the `now` handed to
    /// [`PolicyController::handle_timeout`], which is also the forecast's `t0`.
    pub at: Instant,
    /// The limit handed to the pacer, after clamping to [50 ms, 10 s]
    /// (docs/architecture.md, "Queue policies and decisions").
    pub queue_time_limit: Duration,
    /// What the policy asked for before clamping; `None` when the decision fell back.
    pub requested: Option<Duration>,
    /// The name of the configured policy ([`QueuePolicy::name`]), even when the decision fell
    /// back, so that telemetry groups the interval with the run it belongs to.
    pub policy: String,
    /// What the policy saw. When the source failed the policy saw nothing, and this is
    /// [`Forecast::none`] at `at` (source `none`, all zero).
    pub forecast: Forecast,
    /// Why the decision fell back to WebRTC's 2000 ms, if it did.
    pub fallback: Option<String>,
    /// The action profile a joint policy chose (the `none` profile when it fell back); `None`
    /// for a policy that does not choose the actions ([`QueuePolicy::controls_actions`]). A
    /// controller [`applying`](PolicyController::applying) the actions has set it on the
    /// schedule ([`ActionsHandle::set_config`]) at the decision.
    pub profile: Option<ActionProfile>,
    /// What the call had measured, as handed to
    /// [`PolicyController::handle_timeout_with`] (all `None` through
    /// [`PolicyController::handle_timeout`]).
    pub feedback: CallFeedback,
}

impl std::fmt::Display for Decision {
    /// One line: `#3 heuristic: 900 ms (4 handovers forecast, source orbital)`, plus the fallback
    /// reason when there was one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "#{} {}: {} ms ({} handovers forecast, source {})",
            self.index,
            self.policy,
            self.queue_time_limit.as_millis(),
            self.forecast.handover_count(),
            self.forecast.source()
        )?;
        if let Some(profile) = &self.profile {
            write!(f, ", actions {}", profile.name)?;
        }
        if let Some(why) = &self.fallback {
            write!(f, ", fell back: {why}")?;
        }
        Ok(())
    }
}

/// Chooses the pacer's queue time limit at every decision boundary (sans-I/O).
///
/// Boundaries are at `start`, `start + interval`, `start + 2 x interval`, ... At each one the
/// controller asks its [`HandoverSource`] for the forecast at `now`, asks its [`QueuePolicy`] for
/// a limit, clamps it to [50 ms, 10 s], hands it to the pacer through the [`PacerHandle`] and
/// returns a [`Decision`]. The limit then holds until the next boundary
/// (docs/architecture.md, "Queue policies and decisions").
///
/// Nothing here reads a clock: the driver calls [`poll_timeout`](Self::poll_timeout) to learn
/// when to come back and [`handle_timeout`](Self::handle_timeout) with the current (real or
/// virtual) time.
///
/// A failure never stops a call. If the source fails, the policy is not consulted (a missing
/// forecast would read as the all-zero "no handovers" forecast and pick the shortest queue, the
/// least safe choice on a satellite path); if the policy fails, its answer is dropped. Either
/// way the limit is [`Fixed::webrtc_default`]'s 2000 ms, what an unmodified WebRTC sender uses,
/// the failure is counted, and the reason is recorded in [`Decision::fallback`].
pub struct PolicyController {
    interval: Duration,
    /// The next boundary; `None` once time has run past what an `Instant` can represent.
    next: Option<Instant>,
    /// The one decision off the grid that a measuring policy asks for
    /// ([`QueuePolicy::measuring_window`] after the first decision), until it is made.
    measured: Option<Instant>,
    source: Box<dyn HandoverSource>,
    policy: Box<dyn QueuePolicy>,
    fallback: Fixed,
    handle: PacerHandle,
    /// The action schedule each decision updates, and the timing error added to its
    /// predictions.
    actions: Option<(ActionsHandle, TimingShift)>,
    decisions: u64,
    source_failures: u64,
    policy_failures: u64,
}

impl PolicyController {
    /// A controller whose first decision is due at `start` and every `interval` after it
    /// (usually [`DEFAULT_DECISION_INTERVAL`](super::DEFAULT_DECISION_INTERVAL)). An `interval`
    /// shorter than 1 ms is raised to 1 ms, so that time always moves the schedule forward.
    pub fn new(
        start: Instant,
        interval: Duration,
        source: impl HandoverSource + 'static,
        policy: impl QueuePolicy + 'static,
        handle: PacerHandle,
    ) -> Self {
        Self {
            interval: interval.max(Duration::from_millis(1)),
            next: Some(start),
            measured: None,
            source: Box::new(source),
            policy: Box::new(policy),
            fallback: Fixed::webrtc_default(),
            handle,
            actions: None,
            decisions: 0,
            source_failures: 0,
            policy_failures: 0,
        }
    }

    /// Makes every decision also update `actions`: a joint policy's profile is applied, then the
    /// forecast's predicted handovers after the decision instant replace the schedule's, each
    /// moved by `timing_error` (its jitter drawn from `seed`). So the actions follow each
    /// decision without the driver carrying the decision over (docs/architecture.md,
    /// "Handover-timed actions").
    pub fn applying(
        mut self,
        actions: ActionsHandle,
        timing_error: TimingError,
        seed: u64,
    ) -> Self {
        self.actions = Some((actions, TimingShift::new(timing_error, seed)));
        self
    }

    /// Asks `source` for the forecasts from the next decision on.
    pub fn set_source(&mut self, source: impl HandoverSource + 'static) {
        self.source = Box::new(source);
    }

    /// The next decision boundary: `start` before the first decision, and afterwards always
    /// strictly after the last `now` handed to [`handle_timeout`](Self::handle_timeout). `None`
    /// only if the schedule has run past what an `Instant` can represent. A measuring policy's
    /// extra decision counts as a boundary.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.next, self.measured) {
            (Some(next), Some(measured)) => Some(next.min(measured)),
            (next, measured) => next.or(measured),
        }
    }

    /// Makes a decision if `now` has reached the next boundary, otherwise returns `None`.
    ///
    /// If `now` is late by several intervals, exactly one decision is made and the next boundary
    /// becomes the first one of the original grid strictly after `now`.
    pub fn handle_timeout(&mut self, now: Instant) -> Option<Decision> {
        self.handle_timeout_with(now, CallFeedback::default())
    }

    /// [`Self::handle_timeout`], handing the policy what the call has measured (a joint policy
    /// reads it, docs/architecture.md, "Queue policies and decisions"). The driver gathers it
    /// only when [`Self::is_due`] says a decision will be made.
    pub fn handle_timeout_with(
        &mut self,
        now: Instant,
        feedback: CallFeedback,
    ) -> Option<Decision> {
        if !self.is_due(now) {
            return None;
        }
        if let Some(next) = self.next.filter(|next| now >= *next) {
            self.next = self.boundary_after(next, now);
        }
        if self.measured.is_some_and(|measured| now >= measured) {
            self.measured = None;
        }
        // The window runs from the first decision, not from `start`: a real call's first
        // decision can come late (the connection set up after the controller was built), and
        // the policy counts its window from the first decision it makes.
        if self.decisions == 0 {
            self.measured = self
                .policy
                .measuring_window()
                .and_then(|window| now.checked_add(window));
        }
        Some(self.decide(now, feedback))
    }

    /// Whether [`Self::handle_timeout`] at `now` makes a decision.
    pub fn is_due(&self, now: Instant) -> bool {
        self.poll_timeout().is_some_and(|due| now >= due)
    }

    /// Whether the policy chooses the handover-timed actions too
    /// ([`QueuePolicy::controls_actions`]).
    pub fn controls_actions(&self) -> bool {
        self.policy.controls_actions()
    }

    /// The length of a decision interval.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Decisions made so far.
    pub fn decisions_made(&self) -> u64 {
        self.decisions
    }

    /// Decisions that fell back because the source failed.
    pub fn source_failures(&self) -> u64 {
        self.source_failures
    }

    /// Decisions that fell back because the policy failed.
    pub fn policy_failures(&self) -> u64 {
        self.policy_failures
    }

    /// The first boundary `due + k x interval` (k >= 1) strictly after `now`, given `due <= now`.
    fn boundary_after(&self, due: Instant, now: Instant) -> Option<Instant> {
        let late = now.duration_since(due).as_nanos();
        let interval = self.interval.as_nanos();
        let advance = (late / interval + 1) * interval;
        let secs = u64::try_from(advance / 1_000_000_000).ok()?;
        let nanos = (advance % 1_000_000_000) as u32;
        due.checked_add(Duration::new(secs, nanos))
    }

    fn decide(&mut self, now: Instant, feedback: CallFeedback) -> Decision {
        let policy = self.policy.name();
        let joint = self.policy.controls_actions();
        let (forecast, choice, fallback) = match self.source.forecast(now) {
            Err(error) => {
                self.source_failures += 1;
                let reason = format!("source {} failed: {error}", self.source.name());
                (Forecast::none(now), None, Some(reason))
            }
            Ok(forecast) => {
                let chosen = if joint {
                    self.policy.decide_joint(&forecast, &feedback)
                } else {
                    self.policy.decide(&forecast).map(|limit| super::Choice {
                        limit,
                        profile: None,
                    })
                };
                match chosen {
                    Ok(choice) => (forecast, Some(choice), None),
                    Err(error) => {
                        self.policy_failures += 1;
                        let reason = format!("policy {policy} failed: {error}");
                        (forecast, None, Some(reason))
                    }
                }
            }
        };
        let requested = choice.map(|c| c.limit);
        // A joint policy that fell back runs what an unmodified sender runs: no actions.
        let profile = match choice {
            Some(choice) if joint => choice.profile,
            None if joint => ActionProfile::named("none").ok(),
            _ => None,
        };
        let wanted = requested.unwrap_or_else(|| self.fallback.limit());
        let limit = self
            .handle
            .set_queue_time_limit(clamp_queue_time_limit(wanted));
        if let Some((actions, shift)) = &mut self.actions {
            if let Some(profile) = &profile {
                // The menu's configurations are valid (the profile tests), so this never
                // refuses; if it did, the schedule would keep its configuration.
                let _ = actions.set_config(now, profile.config);
            }
            let t0 = forecast.t0();
            let predictions: Vec<(Instant, f32)> = forecast
                .handovers()
                .iter()
                .map(|h| (shift.shift(t0 + h.offset), h.probability))
                .collect();
            actions.set_predictions(now, predictions);
        }
        let decision = Decision {
            index: self.decisions,
            at: now,
            queue_time_limit: limit,
            requested,
            policy,
            forecast,
            fallback,
            profile,
            feedback,
        };
        self.decisions += 1;
        decision
    }
}

impl fmt::Debug for PolicyController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyController")
            .field("interval", &self.interval)
            .field("next", &self.next)
            .field("source", &self.source.name())
            .field("policy", &self.policy.name())
            .field("decisions", &self.decisions)
            .field("source_failures", &self.source_failures)
            .field("policy_failures", &self.policy_failures)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{DEFAULT_DECISION_INTERVAL, Heuristic, PolicyError};
    use super::*;
    use handover_predictor::{ForecastSource, NoHandovers, SourceError, TimelineSource};

    const SECOND: Duration = Duration::from_secs(1);

    /// A source that never has a forecast.
    struct Unavailable;

    impl HandoverSource for Unavailable {
        fn name(&self) -> &str {
            "dish"
        }

        fn forecast(&mut self, _now: Instant) -> Result<Forecast, SourceError> {
            Err(SourceError::Unavailable {
                source_name: "dish".into(),
                reason: "no answer".into(),
            })
        }
    }

    /// A policy that always fails.
    struct Broken;

    impl QueuePolicy for Broken {
        fn name(&self) -> String {
            "learned:deadbeef".into()
        }

        fn decide(&mut self, _forecast: &Forecast) -> Result<Duration, PolicyError> {
            Err(PolicyError::InvalidOutput {
                policy: self.name(),
                reason: "logits contain NaN".into(),
            })
        }
    }

    fn controller(
        start: Instant,
        source: impl HandoverSource + 'static,
        policy: impl QueuePolicy + 'static,
    ) -> (PolicyController, PacerHandle) {
        let handle = PacerHandle::new(Duration::from_millis(1234));
        let controller = PolicyController::new(
            start,
            DEFAULT_DECISION_INTERVAL,
            Box::new(source),
            Box::new(policy),
            handle.clone(),
        );
        (controller, handle)
    }

    #[test]
    fn decisions_fall_exactly_on_start_and_every_120_s_after() {
        let start = Instant::now();
        let (mut c, _) = controller(start, NoHandovers, Heuristic);
        assert_eq!(c.interval(), Duration::from_secs(120));
        assert_eq!(c.poll_timeout(), Some(start));

        let first = c.handle_timeout(start).unwrap();
        assert_eq!((first.index, first.at), (0, start));
        assert_eq!(c.poll_timeout(), Some(start + 120 * SECOND));

        let just_before = start + 120 * SECOND - Duration::from_nanos(1);
        assert!(c.handle_timeout(just_before).is_none());
        assert_eq!(c.poll_timeout(), Some(start + 120 * SECOND));

        let second = c.handle_timeout(start + 120 * SECOND).unwrap();
        assert_eq!((second.index, second.at), (1, start + 120 * SECOND));
        assert_eq!(c.poll_timeout(), Some(start + 240 * SECOND));

        let third = c.handle_timeout(start + 240 * SECOND).unwrap();
        assert_eq!((third.index, third.at), (2, start + 240 * SECOND));
        assert_eq!(c.poll_timeout(), Some(start + 360 * SECOND));
        assert_eq!(c.decisions_made(), 3);
    }

    #[test]
    fn a_call_before_the_first_boundary_decides_nothing() {
        let start = Instant::now() + 5 * SECOND;
        let (mut c, handle) = controller(start, NoHandovers, Heuristic);
        assert!(c.handle_timeout(start - SECOND).is_none());
        assert_eq!(c.poll_timeout(), Some(start));
        assert_eq!(c.decisions_made(), 0);
        assert_eq!(handle.queue_time_limit(), Duration::from_millis(1234));
    }

    #[test]
    fn a_late_call_makes_one_decision_and_resumes_on_the_original_grid() {
        let start = Instant::now();
        let (mut c, _) = controller(start, NoHandovers, Heuristic);
        c.handle_timeout(start).unwrap();

        let late = start + 365 * SECOND;
        let decision = c.handle_timeout(late).unwrap();
        assert_eq!((decision.index, decision.at), (1, late));
        assert_eq!(decision.forecast.t0(), late);
        assert_eq!(c.poll_timeout(), Some(start + 480 * SECOND));
        assert!(c.handle_timeout(late).is_none());
        assert_eq!(c.decisions_made(), 2);

        // Exactly on a skipped boundary: the next one is strictly after it.
        let on_boundary = start + 600 * SECOND;
        assert_eq!(c.handle_timeout(on_boundary).unwrap().index, 2);
        assert_eq!(c.poll_timeout(), Some(start + 720 * SECOND));
    }

    #[test]
    fn a_failing_source_falls_back_to_2000_ms_without_asking_the_policy() {
        let start = Instant::now();
        let (mut c, handle) =
            controller(start, Unavailable, Fixed::new(Duration::from_millis(300)));
        let d = c.handle_timeout(start).unwrap();
        assert_eq!(d.queue_time_limit, Duration::from_millis(2000));
        assert_eq!(d.requested, None);
        assert_eq!(d.policy, "fixed:300");
        assert_eq!(d.forecast, Forecast::none(start));
        assert_eq!(
            d.fallback.as_deref(),
            Some("source dish failed: dish has no forecast: no answer")
        );
        assert_eq!(handle.queue_time_limit(), Duration::from_millis(2000));
        assert_eq!((c.source_failures(), c.policy_failures()), (1, 0));

        c.handle_timeout(start + 120 * SECOND).unwrap();
        assert_eq!((c.source_failures(), c.policy_failures()), (2, 0));
        assert_eq!(c.poll_timeout(), Some(start + 240 * SECOND));

        // A first decision that comes late moves the window with it.
        let (mut late, _) = controller(start, NoHandovers, crate::policy::PathArm::new(3).unwrap());
        let first = late.handle_timeout(start + 2 * SECOND).unwrap();
        assert_eq!(
            first.profile.map(|p| p.name),
            Some("none"),
            "no handover ahead: it measures with libwebrtc's sender"
        );
        let window = crate::policy::PATH_MEASURE.seconds as u32;
        assert_eq!(late.poll_timeout(), Some(start + (2 + window) * SECOND));
        let chosen = late.handle_timeout(start + (2 + window) * SECOND).unwrap();
        assert_eq!(
            chosen.profile.map(|p| p.name),
            Some("playout300-follow500+discardable+floor100-weighed+phase100+gate-open")
        );
    }

    #[test]
    fn a_failing_policy_falls_back_to_2000_ms_and_keeps_the_forecast_it_saw() {
        let start = Instant::now();
        let source = TimelineSource::new(
            "trace",
            ForecastSource::Trace,
            start,
            [Duration::from_millis(3500)],
        );
        let (mut c, handle) = controller(start, source, Broken);
        let d = c.handle_timeout(start).unwrap();
        assert_eq!(d.queue_time_limit, Duration::from_millis(2000));
        assert_eq!(d.requested, None);
        assert_eq!(d.policy, "learned:deadbeef");
        assert_eq!(d.forecast.source(), ForecastSource::Trace);
        assert_eq!(d.forecast.handover_count(), 1);
        assert!(d.forecast.steps().is_handover(3));
        assert_eq!(
            d.fallback.as_deref(),
            Some(
                "policy learned:deadbeef failed: learned:deadbeef produced no usable limit: logits contain NaN"
            )
        );
        assert_eq!(handle.queue_time_limit(), Duration::from_millis(2000));
        assert_eq!((c.source_failures(), c.policy_failures()), (0, 1));
    }

    #[test]
    fn a_request_above_10_s_is_clamped_and_the_request_is_kept() {
        let start = Instant::now();
        let (mut c, handle) = controller(start, NoHandovers, Fixed::new(Duration::from_secs(20)));
        let d = c.handle_timeout(start).unwrap();
        assert_eq!(d.requested, Some(Duration::from_secs(20)));
        assert_eq!(d.queue_time_limit, Duration::from_secs(10));
        assert_eq!(d.fallback, None);
        assert_eq!(handle.queue_time_limit(), Duration::from_secs(10));
    }

    #[test]
    fn a_request_below_50_ms_is_clamped_up() {
        let start = Instant::now();
        let (mut c, handle) = controller(start, NoHandovers, Fixed::new(Duration::from_millis(10)));
        let d = c.handle_timeout(start).unwrap();
        assert_eq!(d.requested, Some(Duration::from_millis(10)));
        assert_eq!(d.queue_time_limit, Duration::from_millis(50));
        assert_eq!(handle.queue_time_limit(), Duration::from_millis(50));
    }

    #[test]
    fn the_handle_sees_each_decision_as_it_is_made() {
        let start = Instant::now();
        // Handovers only in the first two minutes: 8 of them at Starlink's cadence, then quiet.
        let source = TimelineSource::periodic(
            "slots",
            ForecastSource::Trace,
            start,
            12 * SECOND,
            15 * SECOND,
            117 * SECOND,
        );
        let (mut c, handle) = controller(start, source, Heuristic);
        assert_eq!(handle.queue_time_limit(), Duration::from_millis(1234));
        c.handle_timeout(start).unwrap();
        assert_eq!(handle.queue_time_limit(), Duration::from_millis(4000));
        let d = c.handle_timeout(start + 120 * SECOND).unwrap();
        assert_eq!(d.forecast.handover_count(), 0);
        assert_eq!(handle.queue_time_limit(), Duration::from_millis(500));
    }

    #[test]
    fn a_controller_applying_actions_hands_each_decision_s_predictions_to_the_schedule() {
        let start = Instant::now();
        let source = TimelineSource::periodic(
            "slots",
            ForecastSource::Trace,
            start,
            12 * SECOND,
            15 * SECOND,
            117 * SECOND,
        );
        let actions = ActionsHandle::new(crate::ActionConfig::default()).unwrap();
        let (c, _) = controller(start, source, Heuristic);
        let late = TimingError {
            offset_ms: 1000,
            jitter_ms: 0,
        };
        let mut c = c.applying(actions.clone(), late, 7);
        c.handle_timeout(start).unwrap();
        // The guard opens at every predicted handover ([t - 50 ms, t + 400 ms)), each moved by
        // the timing error: the first, predicted at 12 s, has not begun 12.5 s in.
        let early = actions.take_stats(start + 12 * SECOND + Duration::from_millis(500));
        assert_eq!(early.guard.applied, 0);
        // All 8 of the first two minutes open, without the driver touching the schedule.
        assert_eq!(actions.take_stats(start + 120 * SECOND).guard.applied, 8);
        // The next decision's forecast has none.
        c.handle_timeout(start + 120 * SECOND).unwrap();
        assert_eq!(actions.take_stats(start + 240 * SECOND).guard.applied, 0);
    }

    #[test]
    fn the_heuristic_on_starlink_cadence_picks_4000_ms() {
        let start = Instant::now();
        let source = TimelineSource::periodic(
            "starlink-slots",
            ForecastSource::Trace,
            start,
            12 * SECOND,
            15 * SECOND,
            3600 * SECOND,
        );
        let (mut c, handle) = controller(start, source, Heuristic);
        for k in 0..3u32 {
            let d = c.handle_timeout(start + k * 120 * SECOND).unwrap();
            assert_eq!(d.forecast.handover_count(), 8);
            assert_eq!(d.requested, Some(Duration::from_millis(4000)));
            assert_eq!(d.queue_time_limit, Duration::from_millis(4000));
            assert_eq!(d.policy, "heuristic");
            assert_eq!(d.fallback, None);
        }
        assert_eq!(handle.queue_time_limit(), Duration::from_millis(4000));
    }

    #[test]
    fn an_interval_below_1_ms_is_raised_to_1_ms() {
        let start = Instant::now();
        let mut c = PolicyController::new(
            start,
            Duration::ZERO,
            Box::new(NoHandovers),
            Box::new(Heuristic),
            PacerHandle::new(Duration::from_secs(2)),
        );
        assert_eq!(c.interval(), Duration::from_millis(1));
        c.handle_timeout(start).unwrap();
        assert_eq!(c.poll_timeout(), Some(start + Duration::from_millis(1)));
    }

    #[test]
    fn the_debug_view_names_source_policy_and_counters() {
        let (c, _) = controller(Instant::now(), Unavailable, Heuristic);
        let text = format!("{c:?}");
        assert!(text.contains("source: \"dish\""), "{text}");
        assert!(text.contains("policy: \"heuristic\""), "{text}");
    }

    /// A joint policy that holds where the boundaries lose packets and does nothing elsewhere,
    /// and fails when asked to.
    #[test]
    fn a_measuring_policy_gets_one_extra_decision_at_the_end_of_its_window() {
        let start = Instant::now();
        let (mut c, handle) =
            controller(start, NoHandovers, crate::policy::PathArm::new(3).unwrap());
        assert_eq!(c.poll_timeout(), Some(start));
        let first = c.handle_timeout(start).unwrap();
        assert_eq!(first.profile.map(|p| p.name), Some("none"));
        assert_eq!(handle.queue_time_limit(), Duration::from_millis(500));
        let window = crate::policy::PATH_MEASURE.seconds as u32;
        assert_eq!(c.poll_timeout(), Some(start + window * SECOND));
        assert!(c.handle_timeout(start + (window - 1) * SECOND).is_none());
        let measured = c.handle_timeout(start + window * SECOND).unwrap();
        assert_eq!(measured.index, 1);
        assert_eq!(
            measured.profile.map(|p| p.name),
            Some("playout300-follow500+discardable+floor100-weighed+phase100+gate-open")
        );
        assert_eq!(handle.queue_time_limit(), Duration::from_millis(200));
        assert_eq!(c.poll_timeout(), Some(start + 120 * SECOND));
        let third = c.handle_timeout(start + 120 * SECOND).unwrap();
        assert_eq!(third.index, 2);
        assert_eq!(
            third.profile.map(|p| p.name),
            Some("playout300-follow500+discardable+floor100-weighed+phase100+gate-open")
        );
        assert_eq!(c.poll_timeout(), Some(start + 240 * SECOND));
    }

    struct ScriptedJoint {
        fail: bool,
    }

    impl QueuePolicy for ScriptedJoint {
        fn name(&self) -> String {
            "scripted-joint".into()
        }

        fn decide(&mut self, _forecast: &Forecast) -> Result<Duration, PolicyError> {
            Ok(Duration::from_millis(200))
        }

        fn controls_actions(&self) -> bool {
            true
        }

        fn decide_joint(
            &mut self,
            _forecast: &Forecast,
            feedback: &CallFeedback,
        ) -> Result<super::super::Choice, PolicyError> {
            if self.fail {
                return Err(PolicyError::InvalidOutput {
                    policy: self.name(),
                    reason: "scripted".into(),
                });
            }
            let lossy = feedback.boundary_excess_loss_pct.is_some_and(|e| e >= 2.0);
            let name = if lossy { "hold160+guard+boost" } else { "none" };
            Ok(super::super::Choice {
                limit: Duration::from_millis(300),
                profile: ActionProfile::named(name).ok(),
            })
        }
    }

    #[test]
    fn a_joint_policy_reads_the_feedback_and_its_profile_is_in_the_decision() {
        let start = Instant::now();
        let (mut c, handle) = controller(start, NoHandovers, ScriptedJoint { fail: false });
        assert!(c.controls_actions());
        assert!(!c.is_due(start - SECOND) && c.is_due(start));
        let lossy = CallFeedback {
            boundary_excess_loss_pct: Some(20.0),
            previous_loss_pct: Some(1.0),
            ..CallFeedback::default()
        };
        let first = c.handle_timeout_with(start, lossy).unwrap();
        assert_eq!(first.profile.map(|p| p.name), Some("hold160+guard+boost"));
        assert_eq!(first.feedback, lossy);
        assert_eq!(handle.queue_time_limit(), Duration::from_millis(300));
        assert!(
            first.to_string().ends_with(", actions hold160+guard+boost"),
            "{first}"
        );
        let second = c.handle_timeout(start + 120 * SECOND).unwrap();
        assert_eq!(
            second.profile.map(|p| p.name),
            Some("none"),
            "nothing measured"
        );

        // Queue-limit policies answer no profile, whatever the feedback.
        let (mut plain, _) = controller(start, NoHandovers, Heuristic);
        assert!(!plain.controls_actions());
        assert_eq!(
            plain.handle_timeout_with(start, lossy).unwrap().profile,
            None
        );
    }

    #[test]
    fn a_joint_policy_that_fails_runs_no_actions_with_webrtc_s_limit() {
        let start = Instant::now();
        let (mut c, handle) = controller(start, NoHandovers, ScriptedJoint { fail: true });
        let d = c.handle_timeout(start).unwrap();
        assert_eq!(d.profile.map(|p| p.name), Some("none"));
        assert_eq!(d.queue_time_limit, Duration::from_millis(2000));
        assert_eq!(handle.queue_time_limit(), Duration::from_millis(2000));
        assert!(d.fallback.unwrap().contains("scripted"));
        let (mut c, _) = controller(start, Unavailable, ScriptedJoint { fail: false });
        assert_eq!(
            c.handle_timeout(start).unwrap().profile.map(|p| p.name),
            Some("none"),
            "a failed source too"
        );
    }
}

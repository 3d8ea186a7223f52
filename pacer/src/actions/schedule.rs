//! The sans-I/O action schedule: predicted handover instants in, each action's windows out, and
//! per-action counters for telemetry.

use super::boundary_loss::BoundaryLoss;
use super::config::{Action, ActionConfig, ActionConfigError, ActionWindow, MAX_LEAD_MS};
use super::loss_onset::{END_OFFSET_MS, FIRST_OFFSET_MS, LossOnset};
use super::slot_phase::{PHASE_SPAN_MS, SlotPhaseLoss};
use std::time::{Duration, Instant};

/// How long a window is kept after it ends, so that transport feedback about packets sent inside
/// it is still recognised as such: libwebrtc's `TransportFeedbackAdapter` keeps sent packets for
/// `kSendTimeHistoryWindow` = 60 s (`transport_feedback_adapter.cc`) and matches no feedback
/// older than that either.
pub(crate) const WINDOW_RETENTION: Duration = Duration::from_secs(60);

/// How often, and for how long in all, one action was applied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ActionCounter {
    /// Windows whose start was reached (overlapping predictions count once: they merge).
    pub applied: u64,
    /// Time spent inside the action's windows.
    pub total: Duration,
}

/// Per-action counters over an interval (since the schedule was built or since the last
/// [`HandoverActions::take_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ActionStats {
    /// The pacer hold.
    pub hold: ActionCounter,
    /// The estimator guard.
    pub guard: ActionCounter,
    /// The protection boost.
    pub boost: ActionCounter,
    /// The key-frame block.
    pub keyframe_block: ActionCounter,
    /// The delayed duplicate.
    pub duplicate: ActionCounter,
    /// The playout raise (its full part; the ramps are not counted).
    pub playout: ActionCounter,
    /// Discardable frames.
    pub discardable: ActionCounter,
    /// How far after the predicted instants the windows were placed at the interval's end, ms
    /// (the onset tracker's shift; negative: before them).
    pub timing_shift_ms: i64,
    /// How far before the predicted instants the playout raise and the discardable frames
    /// began at the interval's end, ms (the lead; 0: where their offsets say).
    pub lead_ms: u64,
}

impl ActionStats {
    /// The counter of `action`.
    pub fn get(&self, action: Action) -> ActionCounter {
        match action {
            Action::Hold => self.hold,
            Action::Guard => self.guard,
            Action::Boost => self.boost,
            Action::KeyframeBlock => self.keyframe_block,
            Action::Duplicate => self.duplicate,
            Action::Playout => self.playout,
            Action::Discardable => self.discardable,
        }
    }

    fn get_mut(&mut self, action: Action) -> &mut ActionCounter {
        match action {
            Action::Hold => &mut self.hold,
            Action::Guard => &mut self.guard,
            Action::Boost => &mut self.boost,
            Action::KeyframeBlock => &mut self.keyframe_block,
            Action::Duplicate => &mut self.duplicate,
            Action::Playout => &mut self.playout,
            Action::Discardable => &mut self.discardable,
        }
    }
}

/// One window of one action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: Instant,
    end: Instant,
    /// Whether its start has been counted in the stats.
    counted: bool,
}

/// When each handover-timed action is in force, from predicted handover instants.
///
/// Tell it the predicted instants with their probabilities
/// ([`set_predictions`](Self::set_predictions)); every prediction whose probability reaches the
/// configured threshold opens each enabled action's window around it, and windows of one action
/// that overlap or touch merge into one. A new forecast replaces the predictions: windows that
/// have already begun stay as they are (an action under way finishes), every window still ahead
/// is rebuilt from the new predictions, and a new window that would have begun in the past
/// begins at `now`. Ended windows are kept for a minute, so that a packet's send time can still
/// be looked up when its feedback arrives ([`is_active`](Self::is_active) takes any instant).
///
/// It never reads a clock: time is the `now` handed to the calls that change it or read its
/// counters, and an earlier `now` than one already seen counts as that one.
///
/// ```
/// use pacer::{ActionConfig};
/// use pacer::actions::{Action, HandoverActions};
/// use std::time::{Duration, Instant};
///
/// let start = Instant::now();
/// let ms = |n| Duration::from_millis(n);
/// // The onset tracker off: the windows lie where the forecast puts them from the first
/// // boundary on (with it on, the default, the hold waits for its evidence; see
/// // `ActionConfig::onset`).
/// let mut config = ActionConfig::default();
/// config.onset.enabled = false;
/// let mut actions = HandoverActions::new(config).unwrap();
/// // Two handovers predicted, one likely and one not.
/// actions.set_predictions(start, [(start + ms(1000), 0.9), (start + ms(2000), 0.2)]);
/// // The default hold runs from 20 ms before the instant for 160 ms.
/// assert!(!actions.is_active(Action::Hold, start + ms(979)));
/// assert!(actions.is_active(Action::Hold, start + ms(980)));
/// assert!(actions.is_active(Action::Hold, start + ms(1139)));
/// assert!(!actions.is_active(Action::Hold, start + ms(1140)));
/// assert!(!actions.keyframe_allowed(start + ms(1000)));
/// assert!(actions.keyframe_allowed(start + ms(2000)), "0.2 is below the threshold");
/// let stats = actions.take_stats(start + ms(3000));
/// assert_eq!((stats.hold.applied, stats.hold.total), (1, ms(160)));
/// ```
#[derive(Debug, Clone)]
pub struct HandoverActions {
    config: ActionConfig,
    /// The last forecast's predictions, as given (probability filtering happens per build).
    predictions: Vec<(Instant, f32)>,
    /// Per action (in [`Action::ALL`] order), its windows sorted by start, disjoint and not
    /// touching.
    spans: [Vec<Span>; Action::ALL.len()],
    /// The latest instant handed in.
    latest: Option<Instant>,
    /// The counters are up to date until this instant.
    accounted_until: Option<Instant>,
    stats: ActionStats,
    /// Incremented whenever a window changes.
    generation: u64,
    /// `[t, t + hold_gate.span_ms)` after every qualifying prediction, kept as long as the
    /// windows: a packet sent inside one is a boundary packet to the hold gate.
    boundary_spans: Vec<(Instant, Instant)>,
    /// What transport feedback says about loss at boundaries.
    boundary_loss: BoundaryLoss,
    /// The hold gate's verdict: whether hold windows are built.
    hold_open: bool,
    /// The receiver gate's verdict: whether playout and discardable windows are built.
    receiver_open: bool,
    /// Where the boundary loss begins relative to the predicted instants.
    onset: LossOnset,
    /// How far before the predicted instants the raise and the discardable frames begin, ms.
    lead_ms: u64,
    /// Where in the slot the path loses away from the predicted instants.
    phase: SlotPhaseLoss,
    /// The phase raise's windows ([`PlayoutRaiseConfig::phase_raise_ms`]), sorted and
    /// disjoint.
    ///
    /// [`PlayoutRaiseConfig::phase_raise_ms`]: super::PlayoutRaiseConfig::phase_raise_ms
    phase_spans: Vec<Span>,
}

impl Default for HandoverActions {
    /// The default configuration ([`ActionConfig::default`]) and no predictions.
    fn default() -> Self {
        Self::unchecked(ActionConfig::default())
    }
}

impl HandoverActions {
    /// A schedule with `config` and no predictions; refuses a configuration
    /// [`ActionConfig::validate`] refuses.
    pub fn new(config: ActionConfig) -> Result<Self, ActionConfigError> {
        config.validate()?;
        Ok(Self::unchecked(config))
    }

    fn unchecked(config: ActionConfig) -> Self {
        Self {
            config,
            predictions: Vec::new(),
            spans: Default::default(),
            latest: None,
            accounted_until: None,
            stats: ActionStats::default(),
            generation: 0,
            boundary_spans: Vec::new(),
            boundary_loss: BoundaryLoss::default(),
            hold_open: true,
            receiver_open: true,
            onset: LossOnset::default(),
            lead_ms: 0,
            phase: SlotPhaseLoss::default(),
            phase_spans: Vec::new(),
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &ActionConfig {
        &self.config
    }

    /// Replaces the configuration as of `now`: windows ahead are rebuilt from the last
    /// predictions; an action turned off stops at `now`. Refuses (and changes nothing) what
    /// [`ActionConfig::validate`] refuses.
    pub fn set_config(
        &mut self,
        now: Instant,
        config: ActionConfig,
    ) -> Result<(), ActionConfigError> {
        config.validate()?;
        let now = self.advance(now);
        self.config = config;
        self.onset.update(&self.config.onset);
        self.lead_ms = self.boundary_loss.lead_ms(&self.config.lead, self.lead_ms);
        self.receiver_open = self
            .boundary_loss
            .receiver_open(&self.config.receiver_gate, self.receiver_open);
        self.rebuild(now);
        Ok(())
    }

    /// Replaces the predicted handovers as of `now` with `predictions`, `(instant, probability)`
    /// pairs in any order. A probability that is NaN or below the threshold triggers nothing.
    pub fn set_predictions(
        &mut self,
        now: Instant,
        predictions: impl IntoIterator<Item = (Instant, f32)>,
    ) {
        let now = self.advance(now);
        self.predictions = predictions.into_iter().collect();
        self.rebuild(now);
    }

    /// Transport feedback as of `now`: each packet's send instant and whether it arrived. The
    /// hold gate ([`ActionConfig::hold_gate`]) and the receiver gate
    /// ([`ActionConfig::receiver_gate`]) compare the loss of packets sent just after predicted
    /// instants with the others', the onset tracker ([`ActionConfig::onset`]) places the loss
    /// relative to the instants and the lead ([`ActionConfig::lead`]) before them; when any
    /// verdict changes, the windows ahead are built again.
    pub fn record_outcomes(
        &mut self,
        now: Instant,
        outcomes: impl IntoIterator<Item = (Instant, bool)>,
    ) {
        let known = self.onset_known();
        let phased = self.phase_raise_on();
        for (sent, arrived) in outcomes {
            if phased && let Some((at, after_ms)) = self.after_latest_instant(sent) {
                self.phase.record(at, after_ms, !arrived);
            }
            let inside = self
                .boundary_spans
                .iter()
                .any(|&(start, end)| start <= sent && sent < end);
            self.boundary_loss.record(inside, !arrived);
            if let Some(offset_ms) = self.offset_from_instant(sent, FIRST_OFFSET_MS) {
                self.boundary_loss.record_offset(offset_ms, !arrived);
                if !known {
                    self.onset.record(offset_ms, !arrived);
                }
            }
            if let Some(offset_ms) = self
                .offset_from_instant(sent, -(MAX_LEAD_MS as i64))
                .filter(|&offset_ms| offset_ms < 0)
            {
                self.boundary_loss.record_lead(offset_ms, !arrived);
            }
        }
        let open = self.boundary_loss.hold_open(&self.config.hold_gate);
        let moved = self.onset.update(&self.config.onset);
        let lead_ms = self.boundary_loss.lead_ms(&self.config.lead, self.lead_ms);
        let receiver_open = self
            .boundary_loss
            .receiver_open(&self.config.receiver_gate, self.receiver_open);
        let phase_moved = phased && self.phase.update();
        if open != self.hold_open
            || moved
            || phase_moved
            || known != self.onset_known()
            || lead_ms != self.lead_ms
            || receiver_open != self.receiver_open
        {
            self.hold_open = open;
            self.lead_ms = lead_ms;
            self.receiver_open = receiver_open;
            let now = self.advance(now);
            self.rebuild(now);
        }
    }

    /// Whether the onset tracker has placed its shift, or is off: until then no hold, boost or
    /// duplicate windows are built, as they change what is sent into the spans it measures.
    fn onset_known(&self) -> bool {
        !self.config.onset.enabled || self.onset.placed()
    }

    /// Whether the phase raise is configured ([`PlayoutRaiseConfig::phase_raise_ms`]).
    ///
    /// [`PlayoutRaiseConfig::phase_raise_ms`]: super::PlayoutRaiseConfig::phase_raise_ms
    fn phase_raise_on(&self) -> bool {
        self.config.playout.enabled && self.config.playout.phase_raise_ms > 0
    }

    /// The latest qualifying predicted instant at or before `sent` and how long after it, whole
    /// ms, `sent` was sent, if within a slot of it.
    fn after_latest_instant(&self, sent: Instant) -> Option<(Instant, u64)> {
        let at = self
            .boundary_spans
            .iter()
            .map(|&(at, _)| at)
            .filter(|&at| at <= sent)
            .max()?;
        let after_ms = u64::try_from((sent - at).as_millis()).ok()?;
        (after_ms < PHASE_SPAN_MS).then_some((at, after_ms))
    }

    /// How far, whole ms, `sent` lies from the qualifying predicted instant it is binned
    /// against: the first within `[first_ms, END_OFFSET_MS)` of it, if any (the onset tracker
    /// and the row profile bin from [`FIRST_OFFSET_MS`], the lead from [`MAX_LEAD_MS`] before).
    fn offset_from_instant(&self, sent: Instant, first_ms: i64) -> Option<i64> {
        self.boundary_spans.iter().find_map(|&(at, _)| {
            let offset_ms = if sent >= at {
                i64::try_from((sent - at).as_millis()).ok()?
            } else {
                -i64::try_from((at - sent).as_millis()).ok()?
            };
            (first_ms..END_OFFSET_MS)
                .contains(&offset_ms)
                .then_some(offset_ms)
        })
    }

    /// How far after the predicted instants the windows are placed, ms (negative: before
    /// them): the onset tracker's shift, 0 while it is off or has not moved them.
    pub fn timing_shift_ms(&self) -> i64 {
        self.onset.shift_ms()
    }

    /// How far before the predicted instants the playout raise and the discardable frames
    /// begin, ms: the lead ([`ActionConfig::lead`]), 0 while it is off or the path loses
    /// nothing before the instants.
    pub fn lead_ms(&self) -> u64 {
        self.lead_ms
    }

    /// Whether the hold gate lets the hold be applied now.
    pub fn hold_open(&self) -> bool {
        self.hold_open
    }

    /// Whether the receiver gate ([`ActionConfig::receiver_gate`]) lets the playout raise and
    /// discardable frames be applied now.
    pub fn receiver_open(&self) -> bool {
        self.receiver_open
    }

    /// How much more often packets sent just after predicted instants were lost than the
    /// others, percentage points; `None` before both kinds were reported.
    pub fn boundary_excess_loss_pct(&self) -> Option<f64> {
        self.boundary_loss.excess_pct()
    }

    /// The loss of packets sent away from the predicted instants, %; `None` before one was
    /// reported.
    pub fn outside_loss_pct(&self) -> Option<f64> {
        self.boundary_loss.outside_pct()
    }

    /// The loss of packets sent in the first, second and third 100 ms after a predicted
    /// instant, %; `None` for a row without packets.
    pub fn row_loss_pct(&self) -> [Option<f64>; 3] {
        self.boundary_loss.row_pct()
    }

    /// How many more lost packets a slot the lossiest half second of the slot, away from the
    /// predicted instants, averages than the median half second (each slot's count capped at 3):
    /// the phase raise's evidence, read before its verdict, from the packets fed while the phase
    /// raise was configured; `None` before such a slot closed.
    pub fn phase_excess_losses(&self) -> Option<f64> {
        self.phase.excess_per_slot()
    }

    /// Whether `action` is in force at `at` (any instant, past ones included for a minute after
    /// their window ended).
    pub fn is_active(&self, action: Action, at: Instant) -> bool {
        self.spans[action.index()]
            .iter()
            .any(|span| span.start <= at && at < span.end)
    }

    /// Whether a key frame may be scheduled at `now`: false inside a key-frame-block window. A
    /// key frame the receiver asked for (PLI) is the encoder's to weigh; this says when a
    /// periodic one should wait.
    pub fn keyframe_allowed(&self, now: Instant) -> bool {
        !self.is_active(Action::KeyframeBlock, now)
    }

    /// Whether the frame captured at `capture` is to be encoded discardable: inside a
    /// discardable window, as a temporal-layer-1 layer-sync frame that references the last
    /// base-layer frame and updates no reference (docs/architecture.md, "Discardable frames").
    pub fn frame_discardable(&self, capture: Instant) -> bool {
        self.is_active(Action::Discardable, capture)
            || (self.config.discardable.enabled
                && self
                    .phase_spans
                    .iter()
                    .any(|span| span.start <= capture && capture < span.end))
    }

    /// The phase raise's windows, sorted and disjoint, as `(start, end)` (end excluded): after
    /// every qualifying predicted instant, the phases of the slot where this path loses
    /// ([`PlayoutRaiseConfig::phase_raise_ms`]); none while it is off or no phase was found.
    ///
    /// [`PlayoutRaiseConfig::phase_raise_ms`]: super::PlayoutRaiseConfig::phase_raise_ms
    pub fn phase_windows(&self) -> impl Iterator<Item = (Instant, Instant)> + '_ {
        self.phase_spans.iter().map(|span| (span.start, span.end))
    }

    /// The windows of `action`, sorted and disjoint, as `(start, end)` (end excluded).
    pub fn windows(&self, action: Action) -> impl Iterator<Item = (Instant, Instant)> + '_ {
        self.spans[action.index()]
            .iter()
            .map(|span| (span.start, span.end))
    }

    /// The first instant after `after` at which some action starts or stops, for a driver that
    /// wants to wake then.
    pub fn next_change(&self, after: Instant) -> Option<Instant> {
        self.spans
            .iter()
            .flatten()
            .flat_map(|span| [span.start, span.end])
            .filter(|&at| at > after)
            .min()
    }

    /// The counters from the start (or the last [`take_stats`](Self::take_stats)) up to `now`.
    pub fn stats(&mut self, now: Instant) -> ActionStats {
        let now = self.advance(now);
        self.account(now);
        self.stats.timing_shift_ms = self.onset.shift_ms();
        self.stats.lead_ms = self.lead_ms;
        self.stats
    }

    /// The counters up to `now`, then resets them: one telemetry interval's worth. A window
    /// that spans two intervals counts as applied in the one it started in, and its time is
    /// split between them.
    pub fn take_stats(&mut self, now: Instant) -> ActionStats {
        let stats = self.stats(now);
        self.stats = ActionStats::default();
        stats
    }

    /// Changes whenever a window changes; lets a component that copies windows skip the copy.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Records `now` as handed in (never going back); returns the instant to use.
    fn advance(&mut self, now: Instant) -> Instant {
        let now = self.latest.map_or(now, |latest| latest.max(now));
        self.latest = Some(now);
        now
    }

    /// Brings the counters up to `now` and forgets windows past their retention.
    fn account(&mut self, now: Instant) {
        let from = self.accounted_until.unwrap_or(now);
        if now > from {
            for action in Action::ALL {
                let counter = self.stats.get_mut(action);
                for span in &mut self.spans[action.index()] {
                    let overlap_start = span.start.max(from);
                    let overlap_end = span.end.min(now);
                    if overlap_end > overlap_start {
                        counter.total = counter.total.saturating_add(overlap_end - overlap_start);
                    }
                    if !span.counted && span.start <= now {
                        span.counted = true;
                        counter.applied += 1;
                    }
                }
            }
        }
        self.accounted_until = Some(from.max(now));
        for spans in &mut self.spans {
            let before = spans.len();
            spans.retain(|span| {
                span.end
                    .checked_add(WINDOW_RETENTION)
                    .is_none_or(|kept_until| kept_until > now)
            });
            if spans.len() != before {
                self.generation += 1;
            }
        }
        self.boundary_spans.retain(|&(_, end)| {
            end.checked_add(WINDOW_RETENTION)
                .is_none_or(|kept_until| kept_until > now)
        });
        let before = self.phase_spans.len();
        self.phase_spans.retain(|span| {
            span.end
                .checked_add(WINDOW_RETENTION)
                .is_none_or(|kept_until| kept_until > now)
        });
        if self.phase_spans.len() != before {
            self.generation += 1;
        }
    }

    /// Rebuilds every action's windows from the predictions as of `now`.
    fn rebuild(&mut self, now: Instant) {
        self.account(now);
        self.rebuild_boundary_spans(now);
        for action in Action::ALL {
            let mut window = self.config.window(action);
            // Until the onset is placed, nothing that changes what is sent around the instants
            // applies: the boundaries show where the path loses the sender's usual packets.
            // Discardable frames (like the playout raise) apply from the first boundary: they
            // change which frame a frame references and its size a little, not when or how
            // the packets leave, so the loss per send offset stays the path's.
            let changes_sending =
                matches!(action, Action::Hold | Action::Boost | Action::Duplicate);
            let for_receiver = matches!(action, Action::Playout | Action::Discardable);
            if (changes_sending && !self.onset_known())
                || (action == Action::Hold && !self.hold_open)
                || (for_receiver && !self.receiver_open)
            {
                window.enabled = false;
            }
            let spans = &mut self.spans[action.index()];
            let before = spans.clone();
            // Windows that have begun stay; one of an action now off stops at `now`.
            spans.retain(|span| span.start < now);
            if !window.enabled {
                for span in spans.iter_mut() {
                    span.end = span.end.min(now);
                }
                spans.retain(|span| span.end > span.start);
            } else {
                for &(at, probability) in &self.predictions {
                    if !qualifies(probability, self.config.min_probability) {
                        continue;
                    }
                    let Some((mut start, end)) =
                        shifted(at, self.onset.shift_ms()).and_then(|at| span_around(at, window))
                    else {
                        continue;
                    };
                    if self.lead_ms > 0
                        && for_receiver
                        && let Some(lead) = shifted(at, -(self.lead_ms as i64))
                    {
                        start = start.min(lead);
                    }
                    if end <= now {
                        continue;
                    }
                    spans.push(Span {
                        start: start.max(now),
                        end,
                        counted: false,
                    });
                }
            }
            *spans = merge(std::mem::take(spans));
            if *spans != before {
                self.generation += 1;
            }
        }
        self.rebuild_phase_spans(now);
    }

    /// The phase raise's windows: those that have begun stay (cut at `now` when it is off), the
    /// rest follow the predictions and the lossy phases.
    fn rebuild_phase_spans(&mut self, now: Instant) {
        let before = self.phase_spans.clone();
        self.phase_spans.retain(|span| span.start < now);
        if !self.phase_raise_on() {
            for span in &mut self.phase_spans {
                span.end = span.end.min(now);
            }
            self.phase_spans.retain(|span| span.end > span.start);
        } else {
            let lossy = self.phase.lossy_spans();
            for &(at, probability) in &self.predictions {
                if !qualifies(probability, self.config.min_probability) {
                    continue;
                }
                // The bins were measured from the instants as predicted, so the windows are
                // placed from them too, not moved by the onset tracker's shift.
                for &(from_ms, to_ms) in &lossy {
                    let (Some(start), Some(end)) = (
                        at.checked_add(Duration::from_millis(from_ms)),
                        at.checked_add(Duration::from_millis(to_ms)),
                    ) else {
                        continue;
                    };
                    if end > now {
                        self.phase_spans.push(Span {
                            start: start.max(now),
                            end,
                            counted: false,
                        });
                    }
                }
            }
        }
        self.phase_spans = merge(std::mem::take(&mut self.phase_spans));
        if self.phase_spans != before {
            self.generation += 1;
        }
    }
}

impl HandoverActions {
    /// The boundary spans: those that have begun stay, the rest follow the predictions.
    fn rebuild_boundary_spans(&mut self, now: Instant) {
        let span = Duration::from_millis(self.config.hold_gate.span_ms);
        self.boundary_spans.retain(|&(start, _)| start < now);
        for &(at, probability) in &self.predictions {
            if at >= now
                && qualifies(probability, self.config.min_probability)
                && let Some(end) = at.checked_add(span)
            {
                self.boundary_spans.push((at, end));
            }
        }
    }
}

/// Whether a prediction's probability reaches the threshold (NaN is unordered: never).
fn qualifies(probability: f32, threshold: f32) -> bool {
    probability
        .partial_cmp(&threshold)
        .is_some_and(std::cmp::Ordering::is_ge)
}

/// `at` moved by `shift_ms` (negative: earlier), or `None` when not representable.
fn shifted(at: Instant, shift_ms: i64) -> Option<Instant> {
    let by = Duration::from_millis(shift_ms.unsigned_abs());
    if shift_ms < 0 {
        at.checked_sub(by)
    } else {
        at.checked_add(by)
    }
}

/// `[at + offset, at + offset + duration)`, or `None` when empty or not representable.
fn span_around(at: Instant, window: ActionWindow) -> Option<(Instant, Instant)> {
    if window.duration_ms == 0 {
        return None;
    }
    let start = shifted(at, window.offset_ms)?;
    let end = start.checked_add(Duration::from_millis(window.duration_ms))?;
    Some((start, end))
}

/// Sorts spans by start and merges those that overlap or touch; a merged span is counted if any
/// of its parts was.
fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by_key(|span| (span.start, span.end));
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start <= last.end => {
                last.end = last.end.max(span.end);
                last.counted |= span.counted;
            }
            _ => merged.push(span),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn only_hold(offset_ms: i64, duration_ms: u64) -> ActionConfig {
        let mut config = ActionConfig::disabled();
        config.hold = ActionWindow {
            enabled: true,
            offset_ms,
            duration_ms,
        };
        config
    }

    fn holds(actions: &HandoverActions, start: Instant) -> Vec<(u64, u64)> {
        actions
            .windows(Action::Hold)
            .map(|(s, e)| {
                (
                    (s - start).as_millis() as u64,
                    (e - start).as_millis() as u64,
                )
            })
            .collect()
    }

    #[test]
    fn a_prediction_triggers_the_actions_only_from_the_probability_threshold_on() {
        let start = Instant::now();
        let mut config = only_hold(0, 100);
        config.min_probability = 0.6;
        let mut actions = HandoverActions::new(config).unwrap();
        actions.set_predictions(
            start,
            [
                (start + ms(1000), 0.6),
                (start + ms(2000), 0.599),
                (start + ms(3000), f32::NAN),
                (start + ms(4000), 1.0),
            ],
        );
        assert_eq!(holds(&actions, start), vec![(1000, 1100), (4000, 4100)]);
    }

    #[test]
    fn overlapping_and_touching_windows_merge_and_count_as_one_application() {
        let start = Instant::now();
        let mut actions = HandoverActions::new(only_hold(-20, 120)).unwrap();
        actions.set_predictions(
            start,
            [
                (start + ms(1100), 1.0), // 1080..1200
                (start + ms(1000), 1.0), // 980..1100, overlaps the first
                (start + ms(1220), 1.0), // 1200..1320, touches
                (start + ms(2000), 1.0), // apart
            ],
        );
        assert_eq!(holds(&actions, start), vec![(980, 1320), (1980, 2100)]);
        let stats = actions.take_stats(start + ms(5000));
        assert_eq!(stats.hold.applied, 2);
        assert_eq!(stats.hold.total, ms(340 + 120));
        assert_eq!(stats.guard, ActionCounter::default(), "the guard is off");
    }

    #[test]
    fn a_new_forecast_replaces_the_windows_ahead_and_keeps_the_one_under_way() {
        let start = Instant::now();
        let mut actions = HandoverActions::new(only_hold(0, 100)).unwrap();
        actions.set_predictions(start, [(start + ms(1000), 1.0), (start + ms(2000), 1.0)]);
        // At 1050 ms the first hold is under way; the new forecast drops 2000 and says 2500,
        // and 960 (a hold that would have begun at 960, before now, begins now and merges).
        actions.set_predictions(
            start + ms(1050),
            [(start + ms(960), 1.0), (start + ms(2500), 1.0)],
        );
        assert_eq!(holds(&actions, start), vec![(1000, 1100), (2500, 2600)]);
        // An empty forecast removes what lies ahead only.
        actions.set_predictions(start + ms(1080), []);
        assert_eq!(holds(&actions, start), vec![(1000, 1100)]);
        let stats = actions.take_stats(start + ms(3000));
        assert_eq!((stats.hold.applied, stats.hold.total), (1, ms(100)));
    }

    #[test]
    fn counters_split_a_window_across_intervals_and_reset_on_take() {
        let start = Instant::now();
        let mut actions = HandoverActions::new(only_hold(0, 100)).unwrap();
        actions.set_predictions(start, [(start + ms(1000), 1.0)]);
        assert_eq!(actions.take_stats(start + ms(999)), ActionStats::default());
        let first = actions.take_stats(start + ms(1030));
        assert_eq!((first.hold.applied, first.hold.total), (1, ms(30)));
        let second = actions.take_stats(start + ms(2000));
        assert_eq!((second.hold.applied, second.hold.total), (0, ms(70)));
        // A stale instant counts as the latest one.
        assert_eq!(actions.take_stats(start + ms(10)), ActionStats::default());
    }

    #[test]
    fn turning_an_action_off_stops_it_now_and_drops_its_windows_ahead() {
        let start = Instant::now();
        let mut actions = HandoverActions::new(only_hold(0, 100)).unwrap();
        actions.set_predictions(start, [(start + ms(1000), 1.0), (start + ms(2000), 1.0)]);
        actions
            .set_config(start + ms(1040), ActionConfig::disabled())
            .unwrap();
        assert_eq!(holds(&actions, start), vec![(1000, 1040)]);
        assert!(!actions.is_active(Action::Hold, start + ms(1040)));
        // Back on: the windows ahead come back from the kept predictions.
        actions
            .set_config(start + ms(1500), only_hold(0, 100))
            .unwrap();
        assert_eq!(holds(&actions, start), vec![(1000, 1040), (2000, 2100)]);
        let stats = actions.take_stats(start + ms(3000));
        assert_eq!((stats.hold.applied, stats.hold.total), (2, ms(140)));
    }

    #[test]
    fn each_action_has_its_own_window_and_ended_windows_are_forgotten_after_a_minute() {
        let start = Instant::now();
        let mut config = ActionConfig::default();
        config.onset.enabled = false;
        let mut actions = HandoverActions::new(config).unwrap();
        let handover = start + ms(1000);
        actions.set_predictions(start, [(handover, 0.5)]);
        assert!(actions.is_active(Action::Hold, handover - ms(20)));
        assert!(actions.is_active(Action::Hold, handover + ms(139)));
        assert!(!actions.is_active(Action::Hold, handover + ms(140)));
        assert!(actions.is_active(Action::Guard, handover - ms(50)));
        assert!(actions.is_active(Action::Guard, handover + ms(399)));
        assert!(!actions.is_active(Action::Guard, handover + ms(400)));
        assert!(actions.is_active(Action::Boost, handover + ms(299)));
        assert!(!actions.is_active(Action::Boost, handover + ms(300)));
        assert!(!actions.keyframe_allowed(handover + ms(399)));
        assert_eq!(actions.next_change(start), Some(handover - ms(50)));
        // A packet sent in the guard window is still recognised 59 s later, not 61 s later.
        actions.stats(handover + Duration::from_secs(59));
        assert!(actions.is_active(Action::Guard, handover));
        actions.stats(handover + Duration::from_secs(61));
        assert!(!actions.is_active(Action::Guard, handover));
        assert_eq!(actions.next_change(start), None);
    }

    #[test]
    fn invalid_configurations_are_refused_by_name() {
        let mut config = ActionConfig::default();
        config.hold.duration_ms = 10_001;
        assert_eq!(
            HandoverActions::new(config).unwrap_err().to_string(),
            "hold.duration_ms 10001 is beyond 10 000 ms"
        );
        let config = ActionConfig {
            min_probability: f32::NAN,
            ..ActionConfig::default()
        };
        assert!(config.validate().is_err());
        let mut config = ActionConfig::default();
        config.boost.min_factor = 1.5;
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "boost.min_factor 1.5 is not within [0, 1]"
        );
        let mut config = ActionConfig::default();
        config.guard.offset_ms = -20_000;
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "guard.offset_ms -20000 is beyond 10 000 ms either way"
        );
        for max_ms in [450, 600] {
            let mut config = ActionConfig::default();
            config.lead.max_ms = max_ms;
            assert_eq!(
                config.validate().unwrap_err().to_string(),
                format!("lead.max_ms {max_ms} is not a multiple of 100 within [0, 500]")
            );
        }
        let mut config = ActionConfig::default();
        config.lead.min_z = f64::NAN;
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "lead.min_z NaN is not a finite number at least 0"
        );
        let mut config = ActionConfig::default();
        config.playout.follow_cap_ms = 4_010;
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "playout.follow_cap_ms 4010 is beyond 4000"
        );
        config.playout.follow_cap_ms = 500;
        config.playout.follow_min_windows = 0;
        assert!(
            config
                .validate()
                .unwrap_err()
                .to_string()
                .contains("follow_min_windows")
        );
        config.playout.follow_cap_ms = 0;
        assert!(
            config.validate().is_ok(),
            "no followed cap: the count is not read"
        );
        config.playout.floor_weighed = true;
        assert_eq!(
            config.validate().unwrap_err().to_string(),
            "playout.floor_weighed needs a playout.floor_ms above 0 and a playout.floor_memory_ms above 30000 (it weighs at least 30 s of frames); got floor_ms = 0, floor_memory_ms = 60000"
        );
        config.playout.floor_ms = 100;
        assert!(config.validate().is_ok());
        config.playout.floor_memory_ms = 30_000;
        assert!(
            config
                .validate()
                .unwrap_err()
                .to_string()
                .contains("floor_memory_ms = 30000")
        );
    }

    #[test]
    fn a_configuration_file_may_give_some_actions_and_must_name_fields_correctly() {
        let config: ActionConfig =
            serde_json::from_str(r#"{"min_probability": 0.8, "boost": {"min_factor": 0.25}}"#)
                .unwrap();
        assert_eq!(config.min_probability, 0.8);
        assert_eq!(config.boost.min_factor_q8(), 64);
        assert_eq!(
            config.boost.duration_ms, 350,
            "the rest of the boost keeps its default"
        );
        assert_eq!(config.hold, ActionConfig::default().hold);
        let typo = serde_json::from_str::<ActionConfig>(
            r#"{"hold": {"enabled": true, "offset": 0, "duration_ms": 1}}"#,
        );
        assert!(typo.is_err());
        assert_eq!(ActionConfig::default().boost.min_factor_q8(), 128);
    }

    #[test]
    fn the_hold_gate_drops_the_holds_ahead_on_a_path_without_boundary_loss_and_restores_them() {
        let start = Instant::now();
        let mut actions = HandoverActions::new(only_hold(-20, 120)).unwrap();
        let instants: Vec<(Instant, f32)> = (1..=20u64)
            .map(|k| (start + Duration::from_secs(15 * k), 0.9))
            .collect();
        actions.set_predictions(start, instants.clone());
        assert_eq!(holds(&actions, start).len(), 20);
        // Feedback on the first three boundaries: packets after each instant arrive like the rest.
        let mut now = start + ms(45_500);
        let reports = |from_s: u64, lost_every: usize| {
            (0..60u64).map(move |k| {
                let sent = start + Duration::from_secs(from_s) + ms(100 + 3 * k);
                (
                    sent,
                    lost_every == 0 || !(k as usize).is_multiple_of(lost_every),
                )
            })
        };
        for boundary in [15, 30, 45] {
            actions.record_outcomes(now, reports(boundary, 0));
            actions.record_outcomes(now, (0..600u64).map(|k| (start + ms(1000 + 10 * k), true)));
        }
        assert!(!actions.hold_open());
        assert_eq!(actions.boundary_excess_loss_pct(), Some(0.0));
        assert_eq!(
            holds(&actions, start).len(),
            3,
            "only the holds already under way stay"
        );
        // The path starts losing a fifth of what is sent just after boundaries: the holds ahead
        // return after the first such boundary's feedback.
        now = start + ms(60_500);
        actions.record_outcomes(now, reports(60, 5));
        assert!(actions.hold_open());
        assert!(actions.boundary_excess_loss_pct().unwrap() > 2.0);
        assert_eq!(
            holds(&actions, start).len(),
            3 + 16,
            "every boundary after 60.5 s"
        );
    }

    /// A schedule with the raise and discardable frames (their windows at the instants shut by
    /// the receiver gate on a path that loses nothing there) and a phase raise of `phase_ms`, fed
    /// 12 slots of 15 s whose packets, every 10 ms, are lost one in 10 when sent 4-5 s after the
    /// instant and one in 1000 elsewhere.
    fn phased(phase_ms: u64) -> (HandoverActions, Instant) {
        let start = Instant::now();
        let mut config = ActionConfig::disabled();
        config.playout.enabled = true;
        config.discardable.enabled = true;
        config.playout.phase_raise_ms = phase_ms;
        let mut actions = HandoverActions::new(config).unwrap();
        let instants: Vec<(Instant, f32)> = (0..20)
            .map(|k| (start + ms(1_000 + 15_000 * k), 1.0))
            .collect();
        actions.set_predictions(start, instants);
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for slot in 0..12u64 {
            let at = start + ms(1_000 + 15_000 * slot);
            let outcomes: Vec<(Instant, bool)> = (0..1_500u64)
                .map(|k| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let every = if (400..500).contains(&k) { 10 } else { 1_000 };
                    (at + ms(10 * k), !state.is_multiple_of(every))
                })
                .collect();
            actions.record_outcomes(at + ms(15_000), outcomes);
        }
        (actions, start)
    }

    #[test]
    fn a_path_that_loses_4_to_5_s_after_the_instants_gets_the_raise_and_discardable_frames_there() {
        let (actions, start) = phased(100);
        assert!(
            !actions.receiver_open(),
            "the instants themselves lose nothing"
        );
        assert_eq!(actions.windows(Action::Playout).count(), 0);
        let next = start + ms(1_000 + 15_000 * 13);
        let windows: Vec<(Instant, Instant)> = actions.phase_windows().collect();
        assert!(
            windows.contains(&(next + ms(4_000), next + ms(5_000))),
            "{:?}",
            windows
                .iter()
                .map(|(s, e)| ((*s - start).as_millis(), (*e - start).as_millis()))
                .collect::<Vec<_>>()
        );
        assert!(actions.frame_discardable(next + ms(4_500)));
        assert!(!actions.frame_discardable(next + ms(6_000)));
        // The evidence a policy reads: the 4-5 s bins reach the cap of 3 lost packets a slot, the
        // median bin loses none.
        let excess = actions.phase_excess_losses().expect("slots closed");
        assert!((2.5..=3.0).contains(&excess), "{excess}");
        // Off, nothing is measured or placed.
        let (off, _) = phased(0);
        assert_eq!(off.phase_windows().count(), 0);
        assert!(!off.frame_discardable(next + ms(4_500)));
        assert_eq!(off.phase_excess_losses(), None);
    }

    #[test]
    fn the_raise_and_discardable_frames_wait_for_the_receiver_gate_and_the_hold_does_not() {
        let start = Instant::now();
        let mut config = ActionConfig::default();
        config.discardable.enabled = true;
        config.onset.enabled = false;
        let mut actions = HandoverActions::new(config).unwrap();
        let boundary = |k: u64| start + Duration::from_secs(15 * k);
        actions.set_predictions(start, (1..=20u64).map(|k| (boundary(k), 0.9)));
        let count = |actions: &HandoverActions, action| actions.windows(action).count();
        assert!(actions.receiver_open(), "no packet's fate reported yet");
        assert_eq!(count(&actions, Action::Playout), 20);
        // A packet every 5 ms from 1 s before to 1 s after each instant; in the 300 ms after the
        // instant one in `every` lost (0: none), elsewhere none.
        let report = |k: u64, every: u64| {
            (0..400u64).map(move |j| {
                let offset = j as i64 * 5 - 1000;
                let lost = (0..300).contains(&offset) && every > 0 && j.is_multiple_of(every);
                (shifted(boundary(k), offset).unwrap(), !lost)
            })
        };
        actions.record_outcomes(
            start + ms(500),
            (0..50u64).map(|j| (start + ms(10 * j), true)),
        );
        assert!(
            !actions.receiver_open(),
            "feedback arrives: it waits for evidence"
        );
        for action in [Action::Playout, Action::Discardable] {
            assert_eq!(count(&actions, action), 0);
        }
        assert_eq!(
            count(&actions, Action::Hold),
            20,
            "the hold has its own gate"
        );
        assert_eq!(count(&actions, Action::Guard), 20);
        actions.record_outcomes(boundary(1) + ms(1500), report(1, 0));
        assert!(!actions.receiver_open(), "a boundary that loses nothing");
        // The path's boundaries start losing a fifth of what is sent after them: the windows
        // ahead return after the first such boundary's feedback.
        actions.record_outcomes(boundary(2) + ms(1500), report(2, 5));
        assert!(actions.receiver_open());
        for action in [Action::Playout, Action::Discardable] {
            assert_eq!(
                count(&actions, action),
                18,
                "{action:?}: every boundary after the 2nd"
            );
        }
        // With the gate off they apply from the first boundary, feedback or not.
        let mut off = ActionConfig::default();
        off.receiver_gate.enabled = false;
        let mut ungated = HandoverActions::new(off).unwrap();
        ungated.set_predictions(start, (1..=20u64).map(|k| (boundary(k), 0.9)));
        ungated.record_outcomes(boundary(1) + ms(1500), report(1, 0));
        assert!(ungated.receiver_open());
        assert_eq!(count(&ungated, Action::Playout), 20);
    }

    #[test]
    fn the_raise_and_discardable_frames_begin_earlier_where_the_rows_before_the_instants_lose() {
        let start = Instant::now();
        let mut config = ActionConfig::default();
        config.discardable.enabled = true;
        config.onset.enabled = false;
        config.receiver_gate.enabled = false;
        let mut actions = HandoverActions::new(config).unwrap();
        let boundary = |k: u64| start + Duration::from_secs(15 * k);
        actions.set_predictions(start, (1..=20u64).map(|k| (boundary(k), 0.9)));
        let starts = |actions: &HandoverActions, action: Action| -> Vec<u64> {
            actions
                .windows(action)
                .map(|(s, _)| (s - start).as_millis() as u64 % 15_000)
                .collect()
        };
        assert!(
            starts(&actions, Action::Playout)
                .iter()
                .all(|&s| s == 14_950)
        );
        // lagos.csv's boundaries: one packet in 20 lost in the 300 ms before the instant, one in
        // 200 elsewhere. A packet every 5 ms from 2 s before to 1 s after each instant.
        let report = |k: u64| {
            (0..600u64).map(move |j| {
                let offset = j as i64 * 5 - 2000;
                let sent = shifted(boundary(k), offset).unwrap();
                let lost = if (-300..0).contains(&offset) {
                    j % 20 == 0
                } else {
                    j % 200 == 7
                };
                (sent, !lost)
            })
        };
        let mut k = 1;
        while actions.lead_ms() == 0 && k < 10 {
            actions.record_outcomes(boundary(k) + ms(1500), report(k));
            k += 1;
        }
        assert_eq!(actions.lead_ms(), 300, "after {} boundaries", k - 1);
        assert!(k <= 6, "the lead took {} boundaries", k - 1);
        let later = |v: Vec<u64>| v[v.len() - 5..].to_vec();
        assert_eq!(later(starts(&actions, Action::Playout)), vec![14_700; 5]);
        assert_eq!(
            later(starts(&actions, Action::Discardable)),
            vec![14_700; 5]
        );
        assert_eq!(
            later(starts(&actions, Action::Guard)),
            vec![14_950; 5],
            "the other actions keep their windows"
        );
        assert_eq!(actions.take_stats(boundary(k)).lead_ms, 300);
        // Turned off, the windows go back to their offsets.
        let mut off = *actions.config();
        off.lead.enabled = false;
        actions.set_config(boundary(k), off).unwrap();
        assert_eq!(actions.lead_ms(), 0);
        assert_eq!(later(starts(&actions, Action::Playout)), vec![14_950; 5]);
    }

    #[test]
    fn without_a_lead_the_raise_and_discardable_windows_stay_where_their_offsets_put_them() {
        let start = Instant::now();
        let mut config = ActionConfig::default();
        config.onset.enabled = false;
        config.playout.offset_ms = 100;
        config.discardable = ActionWindow {
            enabled: true,
            offset_ms: 60,
            duration_ms: 100,
        };
        let mut actions = HandoverActions::new(config).unwrap();
        actions.set_predictions(start, [(start + Duration::from_secs(15), 0.9)]);
        assert_eq!(actions.lead_ms(), 0);
        let first = |action| {
            actions
                .windows(action)
                .map(|(s, e)| ((s - start).as_millis(), (e - start).as_millis()))
                .next()
        };
        assert_eq!(first(Action::Playout), Some((15_100, 15_300)));
        assert_eq!(first(Action::Discardable), Some((15_060, 15_160)));
    }

    #[test]
    fn the_hold_waits_for_the_onset_evidence_then_every_window_follows_the_measured_onset() {
        let start = Instant::now();
        let mut actions = HandoverActions::default();
        let boundary = |k: u64| start + Duration::from_secs(15 * k);
        actions.set_predictions(start, (1..=10u64).map(|k| (boundary(k), 0.9)));
        assert!(
            holds(&actions, start).is_empty(),
            "no evidence yet: no hold"
        );
        assert_eq!(actions.windows(Action::Boost).count(), 0, "nor boost");
        let guard_starts = |actions: &HandoverActions| -> Vec<u64> {
            actions
                .windows(Action::Guard)
                .map(|(s, _)| (s - start).as_millis() as u64)
                .collect()
        };
        assert_eq!(
            guard_starts(&actions)[0],
            14_950,
            "the guard applies meanwhile"
        );
        // The forecast is 50 ms early: each boundary's loss begins 50 ms after its predicted
        // instant (half lost for 100 ms, a fifth for the next 100 ms). A packet every 5 ms.
        let report = |k: u64| {
            (0..150u64).map(move |j| {
                let offset = j as i64 * 5 - 250;
                let sent = shifted(boundary(k), offset).unwrap();
                let lost = match offset - 50 {
                    0..100 => j % 2 == 0,
                    100..200 => j % 5 == 3,
                    _ => false,
                };
                (sent, !lost)
            })
        };
        for k in 1..=2 {
            actions.record_outcomes(boundary(k) + ms(1000), report(k));
        }
        assert!(
            holds(&actions, start).is_empty(),
            "two boundaries are not enough"
        );
        assert_eq!(actions.timing_shift_ms(), 0);
        actions.record_outcomes(boundary(3) + ms(1000), report(3));
        assert_eq!(actions.timing_shift_ms(), 50);
        // Boundaries 4 to 10 get the hold, every window 50 ms later than the forecast says.
        let expected: Vec<(u64, u64)> = (4..=10u64)
            .map(|k| (15_000 * k + 30, 15_000 * k + 190))
            .collect();
        assert_eq!(holds(&actions, start), expected);
        assert_eq!(guard_starts(&actions)[3], 60_000);
        assert_eq!(actions.windows(Action::Boost).count(), 7);
        assert_eq!(actions.take_stats(boundary(4)).timing_shift_ms, 50);
    }
}

//! What each handover-timed action does and when: [`ActionConfig`], serde-deserialisable, with
//! defaults grounded in measurements (docs/architecture.md, "Handover-timed actions").

use std::time::Duration;

/// The longest window offset or duration accepted: the pacer's longest queue time limit
/// (`MAX_QUEUE_TIME_LIMIT`, docs/architecture.md, "Queue policies and decisions"). A hold longer
/// than that would keep media past any limit the pacer can be given, and a forecast is not
/// precise to more than that around an instant.
pub const MAX_ACTION_SPAN: Duration = Duration::from_secs(10);

/// The largest onset shift and span, ms: the offsets the onset tracker bins run from 250 ms
/// before a predicted instant to 500 ms after it (`actions/loss_onset.rs`).
const MAX_ONSET_MS: u64 = 250;

/// One action's window around each predicted handover instant `t`: `[t + offset, t + offset +
/// duration)`.
///
/// In a configuration file an action's table gives all three fields (an action left out keeps
/// its default): a half-given window would be ambiguous about what the rest should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionWindow {
    /// Whether the action is applied at all.
    pub enabled: bool,
    /// Where the window starts relative to the predicted instant, ms (negative: before it).
    pub offset_ms: i64,
    /// How long the window lasts, ms; 0 applies nothing.
    pub duration_ms: u64,
}

impl ActionWindow {
    /// The window's offset and duration, checked against [`MAX_ACTION_SPAN`].
    fn check(&self, action: &'static str) -> Result<(), ActionConfigError> {
        let max_ms = MAX_ACTION_SPAN.as_millis() as u64;
        if self.offset_ms.unsigned_abs() > max_ms {
            return Err(ActionConfigError::Offset {
                action,
                offset_ms: self.offset_ms,
            });
        }
        if self.duration_ms > max_ms {
            return Err(ActionConfigError::Duration {
                action,
                duration_ms: self.duration_ms,
            });
        }
        Ok(())
    }
}

/// The protection boost: its window and how much protection it asks for.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BoostConfig {
    /// Whether the boost is applied at all.
    pub enabled: bool,
    /// Where the window starts relative to the predicted instant, ms (negative: before it).
    pub offset_ms: i64,
    /// How long the window lasts, ms.
    pub duration_ms: u64,
    /// The least protection a block closed inside the window gets, as repair packets per media
    /// packet (0 to 1; FlexFEC factors are out of 256, so 1 is read as 255/256).
    ///
    /// 0.5 by default: the first 100 ms after a Starlink slot boundary lose 47.5 % of uplink
    /// packets (docs/architecture.md, "Handover-timed actions"), and interleaved masks recover a
    /// run of `r` consecutive losses from `r` repair packets, so half as many repair packets as
    /// media packets is what such a burst inside one block needs. It is also libwebrtc's cap on
    /// the delta factor (128/255, `media_opt_util.cc`).
    pub min_factor: f64,
}

impl BoostConfig {
    /// The window part.
    pub fn window(&self) -> ActionWindow {
        ActionWindow {
            enabled: self.enabled,
            offset_ms: self.offset_ms,
            duration_ms: self.duration_ms,
        }
    }

    /// [`min_factor`](Self::min_factor) as a FlexFEC factor out of 256, relative to media
    /// packets (what `BlockGenerator` reads): `round(256 x factor)`, at most 255.
    pub fn min_factor_q8(&self) -> u8 {
        let factor = if self.min_factor.is_finite() {
            self.min_factor.clamp(0.0, 1.0)
        } else {
            0.0
        };
        (factor * 256.0).round().min(255.0) as u8
    }
}

impl Default for BoostConfig {
    /// `[t - 50 ms, t + 300 ms)`, at least 0.5 repair packets per media packet: the lossy rows of
    /// the boundary profile (47.5, 20.3 and 3.8 % in the first three 100-ms rows), with 50 ms
    /// either side for the forecast's timing error (docs/architecture.md, "Handover-timed
    /// actions").
    fn default() -> Self {
        Self {
            enabled: true,
            offset_ms: -50,
            duration_ms: 350,
            min_factor: 0.5,
        }
    }
}

/// The playout raise: frames captured inside the window ask the receiver, through the
/// playout-delay RTP header extension, for a minimum playout delay long enough for one repair
/// round, so that a packet lost at the boundary is retransmitted before its frame is due
/// (docs/architecture.md, "Handover-timed actions", the playout raise).
///
/// How much is asked is measured while the call runs, not configured: the sender's own repair
/// delay (the time from a packet's first release to its first retransmission's release, which
/// both cross the same path) plus the hold when the hold applies ([`crate::playout`]). The raise
/// ramps in before the window at [`crate::playout::RAMP_UP_SLOPE`], so that no frame renders
/// later than its predecessor by more than half a frame interval, and out after it at
/// [`crate::playout::RAMP_DOWN_SLOPE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlayoutRaiseConfig {
    /// Whether the raise is applied at all.
    pub enabled: bool,
    /// Where the full raise starts relative to the predicted instant, ms (negative: before it).
    pub offset_ms: i64,
    /// How long the full raise lasts, ms (the ramps lie outside it).
    pub duration_ms: u64,
    /// The largest raise asked for at a boundary where no hold applies, ms (at most 4000; the
    /// extension's unit is 10 ms).
    ///
    /// 500 by default. The cap decides how many frames around each boundary render later than
    /// the call's 95th percentile: with the ramps (up at half a millisecond per millisecond, down
    /// at one) a raise of `R` keeps frames above a raise of 150 ms for about `3 (R - 150) + 200`
    /// ms of every 15-s Starlink slot. Measured without the hold (starlink and lagos-trace, 30
    /// calls of 10 min, tuning seeds 9500-9529, over a 200-ms limit;
    /// docs/experiments/raise-cap-2026-12-05.md): the raise alone at 500 against 300 cut starlink
    /// freezes 79 % against 70 % (`default`: 4.32 a minute) at 6.9 % more P95 delay than
    /// `default` against 4.9 % less, lagos-trace's 51 % against 47 %; with discardable frames
    /// over a 250-ms window, 94 % and 61 %, P95 +5.2 % on starlink.
    pub max_raise_ms: u64,
    /// The largest raise asked for at a boundary where the hold applies, ms (the raise then
    /// includes the hold: a held frame is that much late to begin with; at most 4000).
    ///
    /// 300 by default: the default hold plus one repair round at the 150-ms round trips of the
    /// LEO scenarios. With the hold, guard and boost over a 200-ms limit (the same seeds and
    /// note) a cap of 500 cut starlink freezes 88 % against 82 % at 300, but at 17.5 % more P95
    /// delay than `default`, above the 10 % the project allows (docs/results.md, the goal).
    pub max_held_raise_ms: u64,
    /// The higher cap the raise follows the path to, ms (at most 4000; 0, the default: the caps
    /// above stay): while at least [`follow_min_windows`](Self::follow_min_windows) playout
    /// windows within [`follow_memory_ms`](Self::follow_memory_ms) had a frame, not
    /// discardable, that completed more than the window's raise under the caps above plus
    /// WebRTC's freeze slack late, as transport feedback shows it, the windows use this cap
    /// (`crate::playout::follow`). Needs the libwebrtc NACK responder, which matches feedback
    /// to frames, and GoogCC, which hands it the feedback.
    ///
    /// 500 in `traces/actions/playout300-follow500+discardable.toml` (over a 300-ms
    /// `max_raise_ms`, two windows, the whole call): 90 fresh calls each against the fixed caps,
    /// docs/experiments/raise-follow-2026-12-05.md.
    pub follow_cap_ms: u64,
    /// How many late windows raise the cap (at least 1 with a followed cap; 2 by default).
    pub follow_min_windows: u32,
    /// How far back late windows are counted, ms (600 000 by default: the ten-minute calls it was
    /// measured on).
    pub follow_memory_ms: u64,
    /// The minimum playout delay every frame of the call asks for, ms, handover or not (at most
    /// 4000; 0, the default: none); the windows' raise applies where it is higher. Applied only
    /// with the raise enabled, from the call's first frame (ramping up as the raise does), and
    /// not gated by boundary loss: it is for loss away from the boundaries, where a frame that
    /// lost a packet waits one repair round as a boundary frame does.
    ///
    /// 100 in the profile `playout300-follow500+discardable+floor100`. Over the followed raise,
    /// a 100-ms floor cut freezes on the training family's members with bursty loss
    /// (Gilbert-Elliott) and on lagos-trace at a few per cent of P95 delay, and cost P95 delay
    /// without a freeze to show for it on starlink, leo-spiky and the terrestrial paths: a choice
    /// by path (docs/experiments/playout-floor-2026-12-06.md).
    pub floor_ms: u64,
    /// Whether the floor is weighed (false, the default: it applies to every frame of the
    /// call): weighed, it applies while the sender's replay of the receiver's playout from
    /// transport feedback says that for the frames of the last
    /// [`floor_memory_ms`](Self::floor_memory_ms) it spares more freezes and frozen time a minute
    /// of the call than ten times the relative rise it brings the call's 95th percentile delay,
    /// and the rise is at most 10 %; where it would have spared and cost nothing, it stays as it
    /// was (`crate::playout::weighed_floor`). Needs the libwebrtc NACK responder, which matches
    /// feedback to frames.
    ///
    /// True in the profile `playout300-follow500+discardable+floor100-weighed`: on the
    /// evaluation seeds of the shipped scenarios it kept 56 % of the floor's cut in lagos-trace's
    /// freezes and cost 0-2.8 % of P95 elsewhere, against the floor's 3.4-218 %
    /// (docs/experiments/weighed-floor-2026-12-06.md).
    pub floor_weighed: bool,
    /// How far back a weighed floor looks, ms (60 000 by default).
    pub floor_memory_ms: u64,
    /// The largest raise at the phases of the slot where this path loses packets away from the
    /// predicted instants, ms (at most 4000; 0, the default: no phase raise). The sender bins
    /// the packets transport feedback reports by how long after the latest predicted instant
    /// they were sent, in half-second bins over a 15-s slot; where a bin loses significantly
    /// more than the rest of the slot, frames captured in it after every predicted instant get
    /// the raise (one repair round, at most this) and, with discardable frames on, are
    /// discardable (`crate::actions::HandoverActions::phase_windows`). It needs no receiver gate:
    /// the bins are its evidence.
    ///
    /// 100 in the profile `playout300-follow500+discardable+floor100-weighed+phase100`: over the
    /// mmsys24 Lagos ISL ping trace, which loses 4-5 s after each reconfiguration, windows there
    /// with a raise of at most 100 ms cut freezes by 73 % at 5.6 % less P95 delay than
    /// libwebrtc's sender, where a cap of 300-500 ms cost 38 % more
    /// (docs/experiments/mmsys24-2026-12-06.md, section 5).
    pub phase_raise_ms: u64,
}

impl PlayoutRaiseConfig {
    /// The window part.
    pub fn window(&self) -> ActionWindow {
        ActionWindow {
            enabled: self.enabled,
            offset_ms: self.offset_ms,
            duration_ms: self.duration_ms,
        }
    }
}

impl Default for PlayoutRaiseConfig {
    /// The full raise for frames captured in `[t - 50 ms, t + 150 ms)`: the frames the default
    /// hold keeps (captured from `t - 20 ms` to `t + 140 ms`) and those sent into the worst
    /// 100-ms row after a Starlink boundary (47.5 % uplink loss), with the forecast's usual 50-ms
    /// timing error before it; the ramp down covers the second row. Measured on the call engine
    /// (starlink, 20 calls of 10 min, the calibrated forecast, with the hold, the guard and the
    /// boost): this window cut freezes from 4.31 to 0.52 a minute against libwebrtc's default
    /// at 6 % more P95 delay; a window to `t + 250 ms` gave 0.54 at 13 % more
    /// (docs/experiments/playout-2026-12-03.md).
    fn default() -> Self {
        Self {
            enabled: true,
            offset_ms: -50,
            duration_ms: 200,
            max_raise_ms: 500,
            max_held_raise_ms: 300,
            follow_cap_ms: 0,
            follow_min_windows: 2,
            follow_memory_ms: 600_000,
            floor_ms: 0,
            floor_weighed: false,
            floor_memory_ms: 60_000,
            phase_raise_ms: 0,
        }
    }
}

/// The largest [`PlayoutRaiseConfig::max_raise_ms`] and [`PlayoutRaiseConfig::max_held_raise_ms`]
/// accepted: the pacer's longest queue time limit is 4 s, and a longer raise would keep every
/// frame of the window behind it.
pub const MAX_PLAYOUT_RAISE_MS: u64 = 4_000;

/// The hold gate: the hold is applied only on a path that loses packets sent just after
/// predicted handovers noticeably more often than others, as measured from transport feedback
/// while the call runs (the estimator's feedback; `GoogCc::guarded_by` reports it).
///
/// Why: where a boundary brings loss (Starlink's uplink: 47.5 and 20.3 % in the first two
/// 100-ms rows), holding media out of it cuts freezes; where it brings a delay spike and no loss
/// (the LeoCC trace), the hold adds its own delay to the spike and makes freezes
/// (docs/experiments/timed-2026-12-02.md: +0.6 freezes/min on leocc-trace).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HoldGate {
    /// Whether the gate decides; off, the hold is applied at every qualifying prediction.
    pub enabled: bool,
    /// Packets sent within this long after a predicted instant count as the boundary's, ms.
    ///
    /// 300 by default: the rows of the Starlink boundary loss profile that lose more than the
    /// path's background (47.5, 20.3 and 3.8 % in the first three 100-ms rows).
    pub span_ms: u64,
    /// The least excess of the boundary packets' loss over the others', percentage points.
    ///
    /// 2 by default: the Starlink profile's first 300 ms lose about 24 % against 0.5 % inside
    /// slots, and still about 8 % over the rows the hold leaves (100-300 ms); a path whose
    /// boundaries lose nothing shows an excess near 0 (its sampling error after 100 packets at
    /// 1 % loss is about 1 point).
    pub min_excess_loss_pct: f64,
    /// How many boundary packets must have been seen before the gate may close; until then the
    /// hold is applied (the `timed` policy was chosen for a LEO path).
    ///
    /// 100 by default: two to three boundaries at 2.5 Mbit/s.
    pub min_packets: u64,
}

impl Default for HoldGate {
    fn default() -> Self {
        Self {
            enabled: true,
            span_ms: 300,
            min_excess_loss_pct: 2.0,
            min_packets: 100,
        }
    }
}

/// The receiver gate: the playout raise and discardable frames are applied only once transport
/// feedback shows that packets sent just after predicted handovers are lost significantly more
/// often than others (docs/architecture.md, "Handover-timed actions", the receiver gate).
///
/// Why: both actions exist for a frame lost at a boundary, one waiting for its repair and the
/// other making its loss cost one display slot. Where boundaries lose nothing they only cost:
/// on leocc-trace, whose boundaries bring delay spikes and no loss, discardable frames raised
/// the P95 capture-to-render delay 6.9 % and the stalls 7.3 % against `default`, and the raise
/// the P95 1.3 % (tuning seeds 9500-9529, 30 calls of 10 min over a 200-ms limit;
/// docs/experiments/receiver-gate-2026-12-05.md). Unlike the hold gate, this one stays shut
/// until the evidence is in: a path whose boundaries lose (Starlink's first two 100-ms rows lose
/// 47.5 and 20.3 % of uplink packets) shows it within its first boundary, so only that boundary
/// goes without the two actions. A schedule that has been told of no packet's fate at all
/// (a sender whose estimator reports none) applies them, as it did before the gate.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReceiverGate {
    /// Whether the gate decides; off, the two actions apply at every qualifying prediction.
    pub enabled: bool,
    /// How many packets sent in the hold gate's spans after the instants
    /// ([`HoldGate::span_ms`]) must have been reported before the gate may open.
    ///
    /// 50 by default: one boundary's 300-ms span at about 1.7 Mbit/s (1 200-byte packets), so a
    /// path whose boundaries lose opens the gate at its first or second boundary.
    pub min_packets: u64,
    /// The least excess of the boundary packets' loss over the others', percentage points (the
    /// hold gate's default, 2).
    pub min_excess_loss_pct: f64,
    /// How significant (two-proportion z) that excess must be for the gate to open; once open,
    /// it stays open until the z falls below two less.
    ///
    /// 3 by default, as for the onset tracker and the lead: about one chance in 700 of opening
    /// on noise.
    pub min_z: f64,
    /// Whether the gate is open until `min_packets` boundary packets have been reported, so
    /// that a call's first boundaries get the two actions and only the evidence closes the gate,
    /// instead of opening it.
    ///
    /// Off by default (the gate as measured in docs/experiments/receiver-gate-2026-12-05.md).
    /// Why it exists: shut, the gate leaves a call's first boundary or two without the raise,
    /// and on starlink two in five of a call's freezes under the phase profile came in its first
    /// 15 s; open, 24.7 % fewer freezes there at the same P95, while a path that loses nothing
    /// at its boundaries pays the raise of one window's frames (leocc-trace P95 +1.1 %, 90 calls;
    /// docs/experiments/gate-start-2026-12-06.md).
    #[serde(skip_serializing_if = "is_false")]
    pub open_until_measured: bool,
}

/// Whether `value` is false (what a field left out of a configuration file reads as), so that
/// a configuration written out leaves it out and reads the same in a build that lacks it.
fn is_false(value: &bool) -> bool {
    !*value
}

impl Default for ReceiverGate {
    fn default() -> Self {
        Self {
            enabled: true,
            min_packets: 50,
            min_excess_loss_pct: 2.0,
            min_z: 3.0,
            open_until_measured: false,
        }
    }
}

/// The onset tracker: the windows follow where the path's boundary loss actually begins
/// relative to the predicted instants, as transport feedback shows it
/// (docs/architecture.md, "Handover-timed actions", the onset tracker).
///
/// Why: a real call's clock can be tens of milliseconds off the constellation's, and the hold is
/// tuned to the 10 ms: measured on the call engine, the default hold with the forecast 50 ms
/// early made more freezes than no hold (docs/experiments/ablation-2026-12-02.md). The first
/// boundaries of a call pass without the hold, the boost and the duplicate (the guard and the
/// key-frame block still apply: they do not change what is sent), and the tracker bins the loss
/// of every reported packet by its send offset from the nearest predicted instant. Once every
/// span the shift could start at has `min_packets` packets, every window moves, for the rest of
/// the call, by the start of the `window_ms` span that loses most, if that span loses
/// significantly more than all binned packets.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OnsetTracking {
    /// Whether the windows follow the measured onset; off, they stay where the forecast puts
    /// them and every action applies from the first boundary.
    pub enabled: bool,
    /// The furthest the windows move either way, ms (at most 250; rounded down to 10 ms).
    ///
    /// 150 by default: three times the +-50 ms a host clock synchronised over the internet is
    /// expected to stay within, and well inside the 15-s Starlink slot.
    pub max_shift_ms: u64,
    /// The width of the span whose loss places the onset, ms (10 to 250).
    ///
    /// 100 by default: the first 100-ms row after a Starlink slot boundary is the lossiest
    /// (47.5 % of uplink packets, then 20.3 %), so the span that loses most starts at the onset.
    pub window_ms: u64,
    /// How many packets a span needs before it counts as evidence.
    ///
    /// 50 by default: at 45 % against 20 % loss, 50 packets give a two-proportion z of about 3;
    /// two to three boundaries at 2.5 Mbit/s.
    pub min_packets: u64,
    /// How significant (two-proportion z) the lossiest span's excess over all binned packets
    /// must be for the windows to move.
    ///
    /// 3 by default: about one chance in 700 of moving on noise.
    pub min_z: f64,
}

impl Default for OnsetTracking {
    fn default() -> Self {
        Self {
            enabled: true,
            max_shift_ms: 150,
            window_ms: 100,
            min_packets: 50,
            min_z: 3.0,
        }
    }
}

/// The longest lead [`LeadTracking::max_ms`] accepts, ms: five 100-ms rows.
pub const MAX_LEAD_MS: u64 = 500;

/// The rows the lead is measured in, ms: the 100-ms rows of the traces the boundary profiles
/// come from.
pub const LEAD_ROW_MS: u64 = 100;

/// The lead: on a path that loses packets in the rows just before the predicted instants, the
/// playout raise and the discardable frames begin that much earlier (docs/architecture.md,
/// "Handover-timed actions", the lead).
///
/// Why: `lagos.csv` loses 4.9 to 5.9 % of its uplink packets in each of the three 100-ms rows
/// before a slot boundary (0.5 % inside slots), and 9 to 17.6 % of its downlink packets, which
/// carry the feedback; a frame captured there is a base frame whose repair runs into the
/// boundary. The starlink scenario's boundaries lose nothing before the instant
/// (`traces/scenarios/starlink.toml`), and windows that begin 300 ms earlier there only delay
/// frames. So the windows begin earlier only where the sender's own transport feedback shows
/// loss before the instants: the rows before them, from the second back (the nearest loses on
/// any path with a queue, its packets leaving after the boundary), that each lose
/// significantly more than the packets sent away from the instants extend the windows to
/// their start, the nearest row with them.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LeadTracking {
    /// Whether the windows follow the measured lead; off, they begin where their offsets say.
    pub enabled: bool,
    /// How far before the instants the windows may begin, ms (a multiple of 100, at most 500).
    ///
    /// 400 by default: `lagos.csv`'s lossy rows before a boundary are the last three (uplink
    /// 5.0, 4.9 and 5.9 %) and the fourth loses 1.7 %, three times its slots' level.
    pub max_ms: u64,
    /// How many packets a row needs, since the call began, before it counts as evidence.
    ///
    /// 100 by default: at 5 % against 0.5 % loss, 100 packets give a two-proportion z of about
    /// 5; five to ten boundaries at 2.5 Mbit/s.
    pub min_packets: u64,
    /// How significant (two-proportion z) a row's excess over the packets sent away from the
    /// instants must be for the windows to reach it; a row already reached stays until its z
    /// falls below two less.
    ///
    /// 3 by default, as for the onset tracker: about one chance in 700 per row of moving on
    /// noise.
    pub min_z: f64,
}

impl Default for LeadTracking {
    fn default() -> Self {
        Self {
            enabled: true,
            max_ms: 400,
            min_packets: 100,
            min_z: 3.0,
        }
    }
}

/// Which actions are applied around each predicted handover, and how.
///
/// A predicted instant triggers the actions when its probability is at least
/// [`min_probability`](Self::min_probability). Each action has its own window around the
/// instant; windows of one action that overlap or touch are merged. The defaults, and why, are in
/// docs/architecture.md, "Handover-timed actions".
///
/// ```
/// use pacer::ActionConfig;
///
/// let config: ActionConfig =
///     serde_json::from_str(r#"{"hold": {"enabled": true, "offset_ms": 0, "duration_ms": 100}}"#)
///         .unwrap();
/// assert_eq!(config.hold.duration_ms, 100);
/// assert_eq!(config.guard, ActionConfig::default().guard); // the rest keep their defaults
/// assert!(config.validate().is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ActionConfig {
    /// The least probability a predicted handover needs for the actions to be applied at it.
    ///
    /// 0.5 by default: act on a handover that is more likely than not, so that a forecast source
    /// that says nothing firm (probability below one half) costs no hold and no overhead.
    pub min_probability: f32,
    /// The pacer hold: video, FEC and padding wait in the pacer for the window, then leave through
    /// the normal drain rule. Audio, retransmissions and keep-alives are never held.
    ///
    /// `[t - 20 ms, t + 140 ms)` by default. Measured on the call engine (starlink, 10-min calls,
    /// seeds 5000-5009, the calibrated forecast, over `fixed:200`; docs/experiments/
    /// timed-2026-12-02.md): the hold's end decides. Ending at `t + 100 ms` released the backlog
    /// into the tail of the first, worst 100-ms row (47.5 % uplink loss) and cut freezes 12 %;
    /// ending at `t + 130` to `t + 160 ms` cut them 28 to 35 %, this window the most; a 220-ms
    /// hold made more freezes than it saved (the gap becomes a freeze itself). The window is
    /// tuned to the 10 ms: at 30 calls, with the forecast 50 ms early it made 9.7 % more freezes
    /// than no actions (docs/experiments/ablation-2026-12-02.md), which is why the onset tracker
    /// ([`onset`](Self::onset)) places it on the measured loss (-21 % early, late or exact;
    /// docs/experiments/onset-2026-12-02.md).
    pub hold: ActionWindow,
    /// When the hold is applied at all: only on a path that loses packets at boundaries.
    pub hold_gate: HoldGate,
    /// The estimator guard: GoogCC ignores the delay samples and losses of packets sent inside
    /// the window.
    ///
    /// `[t - 50 ms, t + 400 ms)` by default: the Starlink boundary loss profile (47.5, 20.3, 3.8
    /// and 1.9 % in the first four 100-ms rows) makes the first 200 to 400 ms lossy, and the
    /// packets the hold releases at its end are sent inside it; 50 ms before covers timing error.
    pub guard: ActionWindow,
    /// The protection boost: blocks closed inside the window get at least
    /// [`BoostConfig::min_factor`].
    pub boost: BoostConfig,
    /// No key frame is scheduled inside the window
    /// ([`ActionsHandle::keyframe_allowed`](crate::ActionsHandle::keyframe_allowed)).
    ///
    /// `[t - 50 ms, t + 400 ms)` by default, the guard's window: a key frame is many packets, and
    /// one sent into the lossy rows is the costliest thing to lose.
    pub keyframe_block: ActionWindow,
    /// The delayed duplicate: every video packet the pacer sends inside the window is sent once
    /// more when the window ends (the same RTP packet, under a new transport-wide sequence
    /// number), so that a packet lost in a burst is repaired without waiting for a NACK that
    /// may itself be lost in the burst.
    ///
    /// Off by default, the boost's window `[t - 50 ms, t + 300 ms)` when on: it is the
    /// alternative to the boost that docs/experiments/timed-2026-12-02.md measures against it.
    /// A copy costs a full packet where FEC costs a fraction of one per media packet, so it
    /// pays only where the repair's lateness, not its overhead, decides.
    pub duplicate: ActionWindow,
    /// The playout raise: frames captured around the instant ask the receiver for a minimum
    /// playout delay of one repair round.
    pub playout: PlayoutRaiseConfig,
    /// Discardable frames: frames captured inside the window are encoded as temporal-layer-1
    /// layer-sync frames that reference the last base-layer frame and update no reference, and
    /// the first frame after the window references that base frame too
    /// ([`ActionsHandle::frame_discardable`](crate::ActionsHandle::frame_discardable);
    /// docs/architecture.md, "Discardable frames"). A frame lost in the window then costs its own
    /// display slot, not every later frame until a repair or a key frame: a receiver decodes a
    /// base frame once the previous base frame is decoded (libwebrtc `rtp_vp8_ref_finder.cc`).
    ///
    /// `[t - 50 ms, t + 200 ms)` when on: the first two 100-ms rows after a Starlink slot
    /// boundary lose 47.5 and 20.3 % of uplink packets, the third 3.8 %, so the frames sent into
    /// the first two rows are the ones worth making discardable; 50 ms before covers the
    /// forecast's timing error, as for the other windows. Each frame in it costs more bits (a
    /// longer reference distance; docs/experiments/discardable-frames-2026-12-03.md), and the
    /// largest of them widen the receiver's jitter estimate for minutes, which raises the median
    /// delay of every frame. Measured with the raise at its 500-ms cap over a 200-ms limit
    /// (tuning seeds 9500-9529, 30 calls of 10 min, docs/experiments/raise-cap-2026-12-05.md),
    /// against `default`: to `t + 250 ms` starlink's median capture-to-render delay rose 10.4 %
    /// and lagos-trace's frozen time fell 52.8 %; to `t + 200 ms` 8.3 % and 52.5 %; to
    /// `t + 150 ms` 4.9 % and 49.8 %. Off by default: measured against the rest of `timed` in
    /// the first note.
    pub discardable: ActionWindow,
    /// When the playout raise and discardable frames are applied at all: only on a path shown
    /// to lose packets at boundaries.
    pub receiver_gate: ReceiverGate,
    /// Where the windows are placed relative to the predicted instants: moved by the measured
    /// onset of the boundary loss.
    pub onset: OnsetTracking,
    /// How far before the predicted instants the playout raise and the discardable frames
    /// begin on a path that loses packets there: from the measured loss of the rows before the
    /// instants.
    pub lead: LeadTracking,
}

impl Default for ActionConfig {
    fn default() -> Self {
        Self {
            min_probability: 0.5,
            hold: ActionWindow {
                enabled: true,
                offset_ms: -20,
                duration_ms: 160,
            },
            hold_gate: HoldGate::default(),
            guard: ActionWindow {
                enabled: true,
                offset_ms: -50,
                duration_ms: 450,
            },
            boost: BoostConfig::default(),
            keyframe_block: ActionWindow {
                enabled: true,
                offset_ms: -50,
                duration_ms: 450,
            },
            duplicate: ActionWindow {
                enabled: false,
                offset_ms: -50,
                duration_ms: 350,
            },
            playout: PlayoutRaiseConfig::default(),
            discardable: ActionWindow {
                enabled: false,
                offset_ms: -50,
                duration_ms: 250,
            },
            receiver_gate: ReceiverGate::default(),
            onset: OnsetTracking::default(),
            lead: LeadTracking::default(),
        }
    }
}

impl ActionConfig {
    /// Every action off, and the onset tracker too (windows, once an action is turned on, lie
    /// exactly where the forecast puts them): predictions are kept, nothing is applied.
    pub fn disabled() -> Self {
        let mut config = Self::default();
        config.onset.enabled = false;
        config.hold.enabled = false;
        config.guard.enabled = false;
        config.boost.enabled = false;
        config.keyframe_block.enabled = false;
        config.duplicate.enabled = false;
        config.playout.enabled = false;
        config.discardable.enabled = false;
        config.lead.enabled = false;
        config
    }

    /// Checks every field: the probability within [0, 1], offsets and durations within
    /// [`MAX_ACTION_SPAN`], the boost factor within [0, 1].
    pub fn validate(&self) -> Result<(), ActionConfigError> {
        if !(0.0..=1.0).contains(&self.min_probability) {
            return Err(ActionConfigError::Probability(self.min_probability));
        }
        self.hold.check("hold")?;
        self.guard.check("guard")?;
        self.boost.window().check("boost")?;
        self.keyframe_block.check("keyframe_block")?;
        self.duplicate.check("duplicate")?;
        self.playout.window().check("playout")?;
        self.discardable.check("discardable")?;
        for (field, value) in [
            ("max_raise_ms", self.playout.max_raise_ms),
            ("max_held_raise_ms", self.playout.max_held_raise_ms),
            ("follow_cap_ms", self.playout.follow_cap_ms),
            ("floor_ms", self.playout.floor_ms),
            ("phase_raise_ms", self.playout.phase_raise_ms),
        ] {
            if value > MAX_PLAYOUT_RAISE_MS {
                return Err(ActionConfigError::PlayoutRaise(field, value));
            }
        }
        if self.playout.follow_cap_ms > 0 && self.playout.follow_min_windows == 0 {
            return Err(ActionConfigError::FollowWindows);
        }
        let weighed_span = crate::playout::WEIGHED_FLOOR_MIN_SPAN.as_millis() as u64;
        if self.playout.floor_weighed
            && (self.playout.floor_ms == 0 || self.playout.floor_memory_ms <= weighed_span)
        {
            return Err(ActionConfigError::WeighedFloor {
                floor_ms: self.playout.floor_ms,
                memory_ms: self.playout.floor_memory_ms,
            });
        }
        if !(0.0..=1.0).contains(&self.boost.min_factor) {
            return Err(ActionConfigError::Factor(self.boost.min_factor));
        }
        let gate = &self.hold_gate;
        if gate.span_ms > MAX_ACTION_SPAN.as_millis() as u64 {
            return Err(ActionConfigError::Duration {
                action: "hold_gate.span_ms",
                duration_ms: gate.span_ms,
            });
        }
        if !(0.0..=100.0).contains(&gate.min_excess_loss_pct) {
            return Err(ActionConfigError::ExcessLoss(
                "hold_gate.min_excess_loss_pct",
                gate.min_excess_loss_pct,
            ));
        }
        let receiver_gate = &self.receiver_gate;
        if !(0.0..=100.0).contains(&receiver_gate.min_excess_loss_pct) {
            return Err(ActionConfigError::ExcessLoss(
                "receiver_gate.min_excess_loss_pct",
                receiver_gate.min_excess_loss_pct,
            ));
        }
        if !(receiver_gate.min_z.is_finite() && receiver_gate.min_z >= 0.0) {
            return Err(ActionConfigError::Significance(
                "receiver_gate.min_z",
                receiver_gate.min_z,
            ));
        }
        let onset = &self.onset;
        if onset.max_shift_ms > MAX_ONSET_MS {
            return Err(ActionConfigError::OnsetShift(onset.max_shift_ms));
        }
        if !(10..=MAX_ONSET_MS).contains(&onset.window_ms) {
            return Err(ActionConfigError::OnsetWindow(onset.window_ms));
        }
        if !(onset.min_z.is_finite() && onset.min_z >= 0.0) {
            return Err(ActionConfigError::Significance("onset.min_z", onset.min_z));
        }
        let lead = &self.lead;
        if lead.max_ms > MAX_LEAD_MS || !lead.max_ms.is_multiple_of(LEAD_ROW_MS) {
            return Err(ActionConfigError::Lead(lead.max_ms));
        }
        if !(lead.min_z.is_finite() && lead.min_z >= 0.0) {
            return Err(ActionConfigError::Significance("lead.min_z", lead.min_z));
        }
        Ok(())
    }

    /// The window of `action`.
    pub fn window(&self, action: Action) -> ActionWindow {
        match action {
            Action::Hold => self.hold,
            Action::Guard => self.guard,
            Action::Boost => self.boost.window(),
            Action::KeyframeBlock => self.keyframe_block,
            Action::Duplicate => self.duplicate,
            Action::Playout => self.playout.window(),
            Action::Discardable => self.discardable,
        }
    }
}

/// One of the handover-timed actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// The pacer holds media.
    Hold,
    /// GoogCC ignores what packets sent in the window say about congestion.
    Guard,
    /// Loss protection raises the FEC factor.
    Boost,
    /// No key frame is scheduled.
    KeyframeBlock,
    /// The pacer sends the window's video again when it ends.
    Duplicate,
    /// Frames ask the receiver for a longer minimum playout delay.
    Playout,
    /// Frames are encoded so that no later frame references them.
    Discardable,
}

impl Action {
    /// Every action, in the order of [`ActionStats`](crate::actions::ActionStats)' fields.
    pub const ALL: [Action; 7] = [
        Action::Hold,
        Action::Guard,
        Action::Boost,
        Action::KeyframeBlock,
        Action::Duplicate,
        Action::Playout,
        Action::Discardable,
    ];

    pub(crate) fn index(self) -> usize {
        match self {
            Action::Hold => 0,
            Action::Guard => 1,
            Action::Boost => 2,
            Action::KeyframeBlock => 3,
            Action::Duplicate => 4,
            Action::Playout => 5,
            Action::Discardable => 6,
        }
    }

    /// The action's name in configuration and telemetry.
    pub fn name(self) -> &'static str {
        match self {
            Action::Hold => "hold",
            Action::Guard => "guard",
            Action::Boost => "boost",
            Action::KeyframeBlock => "keyframe_block",
            Action::Duplicate => "duplicate",
            Action::Playout => "playout",
            Action::Discardable => "discardable",
        }
    }
}

/// A configuration [`ActionConfig::validate`] refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActionConfigError {
    /// The probability threshold is not within [0, 1] (or is NaN).
    #[error("min_probability {0} is not within [0, 1]")]
    Probability(f32),
    /// An offset beyond 10 s either way.
    #[error("{action}.offset_ms {offset_ms} is beyond 10 000 ms either way")]
    Offset {
        /// The action.
        action: &'static str,
        /// The offset given.
        offset_ms: i64,
    },
    /// A duration beyond 10 s.
    #[error("{action}.duration_ms {duration_ms} is beyond 10 000 ms")]
    Duration {
        /// The action.
        action: &'static str,
        /// The duration given.
        duration_ms: u64,
    },
    /// The boost factor is not within [0, 1] (or is NaN).
    #[error("boost.min_factor {0} is not within [0, 1]")]
    Factor(f64),
    /// A gate's excess loss (`hold_gate.min_excess_loss_pct`,
    /// `receiver_gate.min_excess_loss_pct`) is not within [0, 100] percentage points (or is NaN).
    #[error("{0} {1} is not within [0, 100]")]
    ExcessLoss(&'static str, f64),
    /// The playout raise's largest raise is beyond [`MAX_PLAYOUT_RAISE_MS`].
    #[error("playout.{0} {1} is beyond 4000")]
    PlayoutRaise(&'static str, u64),
    /// The onset tracker's largest shift is beyond 250 ms.
    #[error("onset.max_shift_ms {0} is beyond 250")]
    OnsetShift(u64),
    /// The onset tracker's span is not within [10, 250] ms.
    #[error("onset.window_ms {0} is not within [10, 250]")]
    OnsetWindow(u64),
    /// A significance (`onset.min_z`, `lead.min_z`, `receiver_gate.min_z`) is negative or not finite.
    #[error("{0} {1} is not a finite number at least 0")]
    Significance(&'static str, f64),
    /// The lead's reach is beyond 500 ms or not a whole number of 100-ms rows.
    #[error("lead.max_ms {0} is not a multiple of 100 within [0, 500]")]
    Lead(u64),
    /// A followed cap (`playout.follow_cap_ms` above 0) that no number of windows could raise.
    #[error(
        "playout.follow_min_windows is 0 while playout.follow_cap_ms is set: it must be at least 1"
    )]
    FollowWindows,
    /// A weighed floor without a floor, or with a memory too short to weigh it over.
    #[error(
        "playout.floor_weighed needs a playout.floor_ms above 0 and a playout.floor_memory_ms above 30000 (it weighs at least 30 s of frames); got floor_ms = {floor_ms}, floor_memory_ms = {memory_ms}"
    )]
    WeighedFloor {
        /// The floor given, ms.
        floor_ms: u64,
        /// The memory given, ms.
        memory_ms: u64,
    },
}

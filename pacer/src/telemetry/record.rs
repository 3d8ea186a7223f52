//! The interval record and its parts, with the checks a record passes before it is written and
//! after it is read.

use crate::cwnd::CwndMode;
use crate::policy::CallFeedback;
use handover_predictor::{Forecast, ForecastError, ForecastSource, HORIZON_STEPS, HandoverSteps};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The schema tag every interval record carries. A reader refuses any other.
pub const SCHEMA: &str = "leopace.interval.v1";

/// One decision interval of one call (docs/architecture.md, "The telemetry contract").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalRecord {
    /// Always [`SCHEMA`]; the writer refuses anything else.
    pub schema: String,
    /// Unique per call.
    pub call_id: String,
    /// The scenario the call ran in (e.g. `"starlink"`, `"sparse-leo"`, `"terrestrial-lte"`,
    /// `"live"`).
    pub scenario: String,
    /// The simulation seed; `None` (JSON `null`) for a real call.
    pub seed: Option<u64>,
    /// 0-based index of the interval within the call.
    pub interval_index: u64,
    /// Call-relative start of the interval, ms.
    pub start_ms: u64,
    /// Length of the interval, ms (the last interval of a call may be shorter).
    pub duration_ms: u64,
    /// The policy in force: `"default"`, `"random"`, `"heuristic"`, `"learned:<sha prefix>"`,
    /// `"fixed:<ms>"`, `"gated:<ms>[/<ms>]"`, or a `timed...` or `path-arm:...` name
    /// ([`QueuePolicy::name`](crate::QueuePolicy::name)).
    pub policy: String,
    /// The queue time limit in force for the interval, ms.
    pub action_ms: u64,
    /// What the policy saw.
    pub forecast: ForecastRecord,
    /// What happened (ground truth or the handover detector).
    pub observed: ObservedRecord,
    /// Call quality over the interval.
    pub qoe: QoeRecord,
    /// What the pacer did over the interval.
    pub pacer: PacerRecord,
    /// What the bandwidth estimator did over the interval.
    pub gcc: GccRecord,
    /// How the sender was configured; optional until every writer fills it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<SenderRecord>,
    /// What loss protection (FEC) did over the interval; absent when the call ran without FEC,
    /// and in lines written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fec: Option<FecRecord>,
    /// What the handover-timed actions did over the interval; absent when the call ran without
    /// them, and in lines written before they were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<ActionsRecord>,
    /// The action profile a joint policy applied over the interval (a name from
    /// [`PROFILE_NAMES`](crate::actions::PROFILE_NAMES)); absent for a policy that chooses only the
    /// queue limit, and in lines written before joint policies existed, which read as
    /// queue-limit-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// What the call had measured when the joint policy decided (its second input); written
    /// with `profile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<InputsRecord>,
}

/// The call's measurements a joint policy read at the decision that opened the interval: the
/// `inputs` object (docs/architecture.md, "The telemetry contract"; [`CallFeedback`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct InputsRecord {
    /// The hold gate's boundary excess loss, percentage points; absent before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boundary_excess_loss_pct: Option<f64>,
    /// The previous interval's packet loss, %; absent at a call's first decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_loss_pct: Option<f64>,
    /// The loss away from the predicted instants, %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_loss_pct: Option<f64>,
    /// The loss in the first, second and third 100 ms after a predicted instant, %; absent
    /// before any packet was sent in the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_loss_pct: Option<[Option<f64>; 3]>,
    /// The sender's RTT, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<f64>,
    /// The 0.9 quantile of the NACK responder's repair delays, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair_delay_ms: Option<f64>,
    /// The estimator's target, kbit/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_kbps: Option<f64>,
    /// The phase raise's evidence: the lossiest half second's excess lost packets a slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase_excess_losses: Option<f64>,
}

impl From<CallFeedback> for InputsRecord {
    fn from(feedback: CallFeedback) -> Self {
        Self {
            boundary_excess_loss_pct: feedback.boundary_excess_loss_pct,
            previous_loss_pct: feedback.previous_loss_pct,
            outside_loss_pct: feedback.outside_loss_pct,
            row_loss_pct: feedback.row_loss_pct[0]
                .is_some()
                .then_some(feedback.row_loss_pct),
            rtt_ms: feedback.rtt_ms,
            repair_delay_ms: feedback.repair_delay_ms,
            target_kbps: feedback.target_kbps,
            phase_excess_losses: feedback.phase_excess_losses,
        }
    }
}

impl From<InputsRecord> for CallFeedback {
    fn from(inputs: InputsRecord) -> Self {
        Self {
            boundary_excess_loss_pct: inputs.boundary_excess_loss_pct,
            previous_loss_pct: inputs.previous_loss_pct,
            outside_loss_pct: inputs.outside_loss_pct,
            row_loss_pct: inputs.row_loss_pct.unwrap_or([None; 3]),
            rtt_ms: inputs.rtt_ms,
            repair_delay_ms: inputs.repair_delay_ms,
            target_kbps: inputs.target_kbps,
            phase_excess_losses: inputs.phase_excess_losses,
        }
    }
}

/// The forecast a decision was made on: the model input (docs/architecture.md, "The forecast
/// contract" and "The model and its card").
///
/// The cumulative channel is stored so that a log is readable on its own. For a source whose
/// handovers are certain it is redundant with the bits, and deserialising checks it against them
/// (within 1e-6); for a source that weighs its handovers with probabilities
/// ([`ForecastSource::weighs_handovers`], `calibrated`) it is the expected count, and
/// deserialising checks what the bits imply about it
/// ([`HandoverSteps::check_expected_cumulative`]). Either way a record that is read is
/// consistent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawForecastRecord")]
pub struct ForecastRecord {
    /// Where the forecast came from.
    pub source: ForecastSource,
    /// The 120 handover bits.
    pub handover: HandoverSteps,
    /// `cumulative[k]` = the expected number of handover steps in steps `0..=k`, over 8, 120
    /// values: `(handover[0] + ... + handover[k]) / 8` when every handover is certain.
    pub cumulative: Vec<f32>,
}

/// The unchecked wire form of a [`ForecastRecord`].
#[derive(Deserialize)]
struct RawForecastRecord {
    source: ForecastSource,
    handover: HandoverSteps,
    cumulative: Vec<f32>,
}

impl TryFrom<RawForecastRecord> for ForecastRecord {
    type Error = ForecastError;

    fn try_from(raw: RawForecastRecord) -> Result<Self, Self::Error> {
        check_channel(raw.source, &raw.handover, &raw.cumulative)?;
        Ok(Self {
            source: raw.source,
            handover: raw.handover,
            cumulative: raw.cumulative,
        })
    }
}

impl ForecastRecord {
    /// The record of `forecast`, with its derived cumulative channel.
    pub fn from_forecast(forecast: &Forecast) -> Self {
        Self {
            source: forecast.source(),
            handover: *forecast.steps(),
            cumulative: forecast.cumulative().to_vec(),
        }
    }

    /// Checks the stored cumulative channel against the bits (see [`ForecastRecord`]).
    pub fn check(&self) -> Result<(), ForecastError> {
        check_channel(self.source, &self.handover, &self.cumulative)
    }

    /// The model input `[1, 120, 2]` in row-major order, as [`HandoverSteps::to_tensor`] lays
    /// it out: the handover bit then the stored cumulative value of each step (for a source
    /// with certain handovers, equal to the one derived from the bits).
    pub fn to_tensor(&self) -> [f32; 2 * HORIZON_STEPS] {
        match <[f32; HORIZON_STEPS]>::try_from(self.cumulative.as_slice()) {
            Ok(cumulative) => self.handover.tensor_with(&cumulative),
            Err(_) => self.handover.to_tensor(),
        }
    }
}

/// The cumulative channel's rule for `source`: derived from the bits, or an expected count.
fn check_channel(
    source: ForecastSource,
    handover: &HandoverSteps,
    cumulative: &[f32],
) -> Result<(), ForecastError> {
    if source.weighs_handovers() {
        handover.check_expected_cumulative(cumulative)
    } else {
        handover.check_cumulative(cumulative)
    }
}

/// The handovers that actually happened during the interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedRecord {
    /// Where the observation came from (`oracle` for the emulated link's ground truth, `mirror`
    /// or `hybrid` for the dish's handover detector, ...).
    pub source: ForecastSource,
    /// The 120 handover bits, one per second from the interval's start.
    pub handover: HandoverSteps,
}

/// Call quality over the interval, with WebRTC's definitions (docs/architecture.md, "The telemetry
/// contract").
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct QoeRecord {
    /// Mean received video bitrate, kbit/s.
    pub video_bitrate_kbps: f64,
    /// Freezes (rendered-frame gap >= max(3 x mean gap, mean gap + 150 ms)).
    pub freeze_count: u64,
    /// Freezes x 60 000 / video duration in ms.
    pub freezes_per_min: f64,
    /// Total time spent frozen, ms.
    pub total_freeze_ms: u64,
    /// Rendered frames per second.
    pub frame_rate: f64,
    /// Median capture-to-render delay, ms.
    pub e2e_delay_p50_ms: f64,
    /// 95th-percentile capture-to-render delay, ms.
    pub e2e_delay_p95_ms: f64,
    /// RTP packets never received (after retransmission) / packets sent, percent.
    pub packet_loss_pct: f64,
    /// Frames rendered.
    pub frames_rendered: u64,
    /// Seconds frozen per minute of video: total freeze time / video duration x 60; 0 in lines
    /// written before it was recorded.
    #[serde(default)]
    pub frozen_s_per_min: f64,
    /// Stalls: rendered-frame gaps above 2 x the mean gap that are not freezes (rtc-client's QoE
    /// meter); 0 in lines written before they were counted.
    #[serde(default)]
    pub stall_count: u64,
    /// Stalls x 60 000 / video duration in ms; 0 in lines written before they were counted.
    #[serde(default)]
    pub stalls_per_min: f64,
}

/// What the pacer did over the interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PacerRecord {
    /// Longest time a packet waited in the queue, ms.
    pub max_queue_ms: f64,
    /// Mean time packets waited in the queue, ms.
    pub mean_queue_ms: f64,
    /// Time the drain rule raised the send rate above the pacing rate, ms.
    pub drain_boost_ms: f64,
    /// Time the encoder was asked to pause, ms.
    pub encoder_paused_ms: f64,
}

/// What the bandwidth estimator did over the interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct GccRecord {
    /// Mean target bitrate, kbit/s.
    pub mean_target_kbps: f64,
    /// Lowest target bitrate, kbit/s.
    pub min_target_kbps: f64,
}

/// Which send-side bandwidth estimator ran: the `sender.bwe` field (`"googcc"` | `"webrtc-rs"`;
/// docs/architecture.md, "The telemetry contract").
///
/// This is the schema's name for a choice the caller makes, not a setting of this crate: the
/// application that builds the sender (rtc-client) maps its own estimator choice onto it when it
/// writes a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Bwe {
    /// This project's libwebrtc-faithful `GoogCc`.
    #[serde(rename = "googcc")]
    GoogCc,
    /// webrtc-rs's own `Gcc`.
    #[serde(rename = "webrtc-rs")]
    WebrtcRs,
}

/// How the sender was configured and what its drop/flush mechanisms did.
///
/// The congestion-window figures are sampled at every video frame, the instants the encoder
/// reads the window (as the interval's `pacer` and `gcc` figures are): `window_bytes` is the mean
/// of the window over the interval's samples, `pushback_ratio` the minimum of the pushback
/// controller's ratio. Both are absent when there is nothing to sample: no window (`cwnd_mode`
/// `"off"`, or no transport feedback yet), and for `pushback_ratio` also a mode without pushback
/// (`"pacer"`). Lines written before these fields existed read back with them absent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SenderRecord {
    /// The bandwidth estimator.
    pub bwe: Bwe,
    /// The congestion-window mode.
    pub cwnd_mode: CwndMode,
    /// Whether a key frame flushes the pacer queue.
    pub keyframe_flush: bool,
    /// Frames the sender dropped.
    pub frames_dropped: u64,
    /// Packets flushed from the pacer queue.
    pub packets_flushed: u64,
    /// Which NACK pair recovered losses; absent in lines written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nack: Option<NackMode>,
    /// The congestion window, bytes: its mean over the interval (sampled at every frame while a
    /// window exists), rounded to a whole byte. A mean rather than the value at the interval's
    /// end: the window follows RTT x target and moves by an order of magnitude around a
    /// handover, so one instant says little about a 120-s interval; the mean sits beside
    /// `pacer.mean_queue_ms` and `gcc.mean_target_kbps`, taken at the same instants. Absent
    /// without a window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_bytes: Option<u64>,
    /// The pushback controller's encoding-rate ratio, in (0, 1]: its minimum over the interval
    /// (sampled at every frame while a window exists), the deepest pushback the encoder was
    /// asked for. Absent without a window or without pushback (`cwnd_mode` `"pacer"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushback_ratio: Option<f64>,
}

/// Loss protection over one interval: the `fec` object (docs/architecture.md, "The telemetry
/// contract"). The counts are the interval's; the factor is the mean of the delta-frame
/// protection factor in force at each video frame, out of 256 (relative to media packets, as
/// libwebrtc's RTP module takes it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FecRecord {
    /// The protection: `"libwebrtc"` (adaptive) or `"fixed:<media>/<repair>"`.
    pub mode: String,
    /// Repair packets the sender sent.
    pub packets_sent: u64,
    /// Repair packets that reached the receiver.
    pub packets_received: u64,
    /// Media packets the receiver rebuilt from repair packets (they count as received).
    pub packets_recovered: u64,
    /// The repair bytes' share of the video the sender sent (media and repair bytes as the
    /// protection interceptor wrote them, before header extensions; retransmissions and padding
    /// not counted), %.
    pub share_pct: f64,
    /// The mean delta-frame protection factor, of 256 (0 with a fixed shape).
    pub mean_delta_factor: f64,
}

/// The handover-timed actions over one interval: the `actions` object (docs/architecture.md,
/// "The telemetry contract" and "Handover-timed actions"), one entry per action.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionsRecord {
    /// The pacer hold.
    pub hold: ActionRecord,
    /// The estimator guard.
    pub guard: ActionRecord,
    /// The protection boost.
    pub boost: ActionRecord,
    /// The key-frame block.
    pub keyframe_block: ActionRecord,
    /// The delayed duplicate; absent from a line (and written only) when it was never applied,
    /// so that records of calls without it read and write as before it existed.
    #[serde(default, skip_serializing_if = "ActionRecord::is_zero")]
    pub duplicate: ActionRecord,
    /// The playout raise's full part; absent from a line (and written only) when it was never
    /// applied, as the duplicate.
    #[serde(default, skip_serializing_if = "ActionRecord::is_zero")]
    pub playout: ActionRecord,
    /// Discardable frames; absent from a line (and written only) when never applied, as the
    /// duplicate.
    #[serde(default, skip_serializing_if = "ActionRecord::is_zero")]
    pub discardable: ActionRecord,
    /// How far after the predicted instants the windows were placed at the interval's end, ms
    /// (the onset tracker's shift, docs/architecture.md, "Handover-timed actions"); absent when
    /// 0, so that records of calls without a shift read and write as before it existed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timing_shift_ms: i64,
    /// How far before the predicted instants the playout raise and the discardable frames
    /// began at the interval's end, ms (the lead, docs/architecture.md, "Handover-timed
    /// actions"); absent when 0, so that records of calls without a lead read as before it
    /// existed.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub lead_ms: u64,
    /// Frames the playout raise decided while its followed cap was in force during the interval
    /// (`PlayoutStats::frames_followed`, docs/architecture.md, "Handover-timed actions"); absent
    /// when 0, so that records of calls without it read and write as before it existed.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub followed_frames: u64,
    /// Frames the playout raise decided while its weighed floor was in force during the
    /// interval (`PlayoutStats::frames_floored`, docs/architecture.md, "Handover-timed
    /// actions"); absent when 0, as `followed_frames`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub floored_frames: u64,
    /// Frames first seen inside the phase raise's windows during the interval
    /// (`PlayoutStats::frames_phased`, docs/architecture.md, "Handover-timed actions"); absent
    /// when 0, as `followed_frames`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub phased_frames: u64,
}

fn is_zero_u64(value: &u64) -> bool {
    *value == 0
}

fn is_zero(value: &i64) -> bool {
    *value == 0
}

/// One action over one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionRecord {
    /// Windows that started in the interval.
    pub applied: u64,
    /// Time inside the action's windows during the interval, whole ms (rounded down); never
    /// more than the interval's `duration_ms`.
    pub total_ms: u64,
}

impl ActionRecord {
    fn is_zero(&self) -> bool {
        *self == Self::default()
    }
}

impl From<crate::actions::ActionCounter> for ActionRecord {
    fn from(counter: crate::actions::ActionCounter) -> Self {
        Self {
            applied: counter.applied,
            total_ms: u64::try_from(counter.total.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

impl From<crate::actions::ActionStats> for ActionsRecord {
    /// One interval's record from the counters of
    /// [`ActionsHandle::take_stats`](crate::ActionsHandle::take_stats).
    fn from(stats: crate::actions::ActionStats) -> Self {
        Self {
            hold: stats.hold.into(),
            guard: stats.guard.into(),
            boost: stats.boost.into(),
            keyframe_block: stats.keyframe_block.into(),
            duplicate: stats.duplicate.into(),
            playout: stats.playout.into(),
            discardable: stats.discardable.into(),
            timing_shift_ms: stats.timing_shift_ms,
            lead_ms: stats.lead_ms,
            followed_frames: 0,
            floored_frames: 0,
            phased_frames: 0,
        }
    }
}

impl ActionsRecord {
    /// Each action with its name in the record.
    pub fn entries(&self) -> [(&'static str, ActionRecord); 7] {
        [
            ("hold", self.hold),
            ("guard", self.guard),
            ("boost", self.boost),
            ("keyframe_block", self.keyframe_block),
            ("duplicate", self.duplicate),
            ("playout", self.playout),
            ("discardable", self.discardable),
        ]
    }
}

/// Which NACK generator and responder ran: the `sender.nack` field (`"stock"` | `"libwebrtc"` |
/// `"off"`; docs/architecture.md, "The telemetry contract").
///
/// Like [`Bwe`], this is the schema's name for a choice the caller makes (this crate has no NACK
/// logic): the application that builds the sender maps its own NACK choice onto it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NackMode {
    /// webrtc-rs's stock `NackGeneratorInterceptor` and `NackResponderInterceptor`.
    Stock,
    /// The libwebrtc-like pair with RTX (the responder: [`crate::nack`]).
    Libwebrtc,
    /// No NACK at all.
    Off,
}

impl IntervalRecord {
    /// Checks what the types alone cannot: the schema tag, the forecast's cumulative channel
    /// against its bits, and that every float is finite (JSON cannot carry NaN or infinity, and
    /// serde_json would write them as `null`).
    pub fn validate(&self) -> Result<(), RecordError> {
        if self.schema != SCHEMA {
            return Err(RecordError::WrongSchema {
                found: Value::String(self.schema.clone()).to_string(),
            });
        }
        self.forecast.check().map_err(|error| RecordError::Field {
            field: "forecast",
            message: error.to_string(),
        })?;
        // An interval's start and end are each rounded down to whole ms, and so is an action's
        // time, so floor(end) - floor(start) >= floor(time) whenever the time fits.
        if let Some((name, action)) = self
            .actions
            .iter()
            .flat_map(|a| a.entries())
            .find(|(_, action)| action.total_ms > self.duration_ms)
        {
            return Err(RecordError::Field {
                field: "actions",
                message: format!(
                    "{name}.total_ms {} exceeds the interval's duration_ms {}",
                    action.total_ms, self.duration_ms
                ),
            });
        }
        if let Some(profile) = &self.profile {
            crate::actions::ActionProfile::named(profile).map_err(|error| RecordError::Field {
                field: "profile",
                message: error.to_string(),
            })?;
        }
        let numbers = [
            ("qoe.video_bitrate_kbps", self.qoe.video_bitrate_kbps),
            ("qoe.freezes_per_min", self.qoe.freezes_per_min),
            ("qoe.frame_rate", self.qoe.frame_rate),
            ("qoe.e2e_delay_p50_ms", self.qoe.e2e_delay_p50_ms),
            ("qoe.e2e_delay_p95_ms", self.qoe.e2e_delay_p95_ms),
            ("qoe.packet_loss_pct", self.qoe.packet_loss_pct),
            ("qoe.frozen_s_per_min", self.qoe.frozen_s_per_min),
            ("qoe.stalls_per_min", self.qoe.stalls_per_min),
            ("pacer.max_queue_ms", self.pacer.max_queue_ms),
            ("pacer.mean_queue_ms", self.pacer.mean_queue_ms),
            ("pacer.drain_boost_ms", self.pacer.drain_boost_ms),
            ("pacer.encoder_paused_ms", self.pacer.encoder_paused_ms),
            ("gcc.mean_target_kbps", self.gcc.mean_target_kbps),
            ("gcc.min_target_kbps", self.gcc.min_target_kbps),
        ];
        let fec = self.fec.as_ref();
        let optional = [
            (
                "sender.pushback_ratio",
                self.sender.and_then(|s| s.pushback_ratio),
            ),
            ("fec.share_pct", fec.map(|f| f.share_pct)),
            ("fec.mean_delta_factor", fec.map(|f| f.mean_delta_factor)),
            (
                "inputs.boundary_excess_loss_pct",
                self.inputs.and_then(|i| i.boundary_excess_loss_pct),
            ),
            (
                "inputs.previous_loss_pct",
                self.inputs.and_then(|i| i.previous_loss_pct),
            ),
            (
                "inputs.outside_loss_pct",
                self.inputs.and_then(|i| i.outside_loss_pct),
            ),
            ("inputs.rtt_ms", self.inputs.and_then(|i| i.rtt_ms)),
            (
                "inputs.repair_delay_ms",
                self.inputs.and_then(|i| i.repair_delay_ms),
            ),
            (
                "inputs.target_kbps",
                self.inputs.and_then(|i| i.target_kbps),
            ),
        ];
        let optional = optional
            .into_iter()
            .filter_map(|(field, value)| value.map(|v| (field, v)));
        match numbers
            .into_iter()
            .chain(optional)
            .find(|(_, value)| !value.is_finite())
        {
            Some((field, value)) => Err(RecordError::NotFinite { field, value }),
            None => Ok(()),
        }
    }
}

/// Why one record (one line) is not a valid interval record.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The line is not JSON.
    #[error("not valid JSON: {0}")]
    NotJson(String),
    /// The line is JSON but not an object.
    #[error("not a JSON object")]
    NotAnObject,
    /// The object has no `schema` field.
    #[error("no \"schema\" field; expected \"{SCHEMA}\"")]
    MissingSchema,
    /// The object's `schema` is not [`SCHEMA`].
    #[error("schema is {found}, expected \"{SCHEMA}\"")]
    WrongSchema {
        /// The schema found, as JSON text (a string keeps its quotes).
        found: String,
    },
    /// A required field is absent.
    #[error("missing field `{0}`")]
    MissingField(&'static str),
    /// A field is present but invalid.
    #[error("{field}: {message}")]
    Field {
        /// The top-level field.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// A number is NaN or infinite.
    #[error("{field} is {value}; every number must be finite")]
    NotFinite {
        /// The field, as `section.name`.
        field: &'static str,
        /// The offending value.
        value: f64,
    },
}

/// Sample records for the tests of this module and of the JSON-lines reader and writer.
#[cfg(test)]
pub(super) mod fixtures {
    use super::*;
    use std::time::Instant;

    pub(crate) fn bits_with(at: &[usize]) -> HandoverSteps {
        let mut bits = [0u8; HORIZON_STEPS];
        for &k in at {
            bits[k] = 1;
        }
        HandoverSteps::from_bits(&bits).unwrap()
    }

    pub(crate) fn sample(index: u64) -> IntervalRecord {
        let forecast = Forecast::new(
            ForecastSource::Orbital,
            Instant::now(),
            bits_with(&[0, 11, 26, 41, 56, 71, 86, 101]),
        );
        IntervalRecord {
            schema: SCHEMA.to_owned(),
            call_id: "call-7".to_owned(),
            scenario: "starlink".to_owned(),
            seed: Some(7),
            interval_index: index,
            start_ms: index * 120_000,
            duration_ms: 120_000,
            policy: "heuristic".to_owned(),
            action_ms: 4000,
            forecast: ForecastRecord::from_forecast(&forecast),
            observed: ObservedRecord {
                source: ForecastSource::Oracle,
                handover: bits_with(&[12, 27, 42]),
            },
            qoe: QoeRecord {
                video_bitrate_kbps: 1834.25,
                freeze_count: 2,
                freezes_per_min: 1.0,
                total_freeze_ms: 640,
                frame_rate: 29.7,
                e2e_delay_p50_ms: 143.5,
                e2e_delay_p95_ms: 412.0,
                packet_loss_pct: 0.1,
                frames_rendered: 3564,
                frozen_s_per_min: 0.32,
                stall_count: 3,
                stalls_per_min: 1.5,
            },
            pacer: PacerRecord {
                max_queue_ms: 911.0,
                mean_queue_ms: 37.25,
                drain_boost_ms: 0.0,
                encoder_paused_ms: 120.0,
            },
            gcc: GccRecord {
                mean_target_kbps: 2010.5,
                min_target_kbps: 300.0,
            },
            sender: Some(SenderRecord {
                bwe: Bwe::GoogCc,
                cwnd_mode: CwndMode::Pushback,
                keyframe_flush: true,
                frames_dropped: 3,
                packets_flushed: 41,
                nack: None,
                window_bytes: None,
                pushback_ratio: None,
            }),
            fec: None,
            actions: None,
            profile: None,
            inputs: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{bits_with, sample};
    use super::*;
    use std::time::Instant;

    #[test]
    fn validation_names_another_schema_a_number_that_is_not_finite_and_a_stale_cumulative() {
        assert_eq!(sample(0).validate(), Ok(()));

        let mut record = sample(0);
        record.schema = "leopace.interval.v0".into();
        assert_eq!(
            record.validate().unwrap_err().to_string(),
            "schema is \"leopace.interval.v0\", expected \"leopace.interval.v1\""
        );

        let mut record = sample(0);
        if let Some(sender) = record.sender.as_mut() {
            sender.pushback_ratio = Some(f64::NAN);
        }
        assert_eq!(
            record.validate().unwrap_err().to_string(),
            "sender.pushback_ratio is NaN; every number must be finite"
        );

        let mut record = sample(0);
        record.forecast.cumulative[0] = 0.0;
        assert!(matches!(
            record.validate(),
            Err(RecordError::Field {
                field: "forecast",
                ..
            })
        ));
    }

    #[test]
    fn the_actions_record_is_optional_and_no_action_may_outlast_the_interval() {
        let mut record = sample(0);
        let line = serde_json::to_string(&record).unwrap();
        assert!(!line.contains("actions"), "absent actions are not written");
        let back: IntervalRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back.actions, None, "a line without them reads as None");

        let stats = crate::actions::ActionStats {
            hold: crate::actions::ActionCounter {
                applied: 8,
                total: std::time::Duration::from_micros(960_999),
            },
            ..Default::default()
        };
        record.actions = Some(stats.into());
        assert_eq!(
            record.actions.map(|a| a.hold),
            Some(ActionRecord {
                applied: 8,
                total_ms: 960
            })
        );
        assert_eq!(record.validate(), Ok(()));
        let line = serde_json::to_string(&record).unwrap();
        assert!(
            line.contains(r#""actions":{"hold":{"applied":8,"total_ms":960}"#),
            "{line}"
        );
        assert_eq!(
            serde_json::from_str::<IntervalRecord>(&line).unwrap(),
            record
        );

        if let Some(actions) = record.actions.as_mut() {
            actions.guard.total_ms = 120_001;
        }
        assert_eq!(
            record.validate().unwrap_err().to_string(),
            "actions: guard.total_ms 120001 exceeds the interval's duration_ms 120000"
        );
    }

    #[test]
    fn the_sender_enums_serialise_to_the_names_of_the_contract() {
        for (bwe, text) in [(Bwe::GoogCc, "googcc"), (Bwe::WebrtcRs, "webrtc-rs")] {
            assert_eq!(serde_json::to_value(bwe).unwrap(), serde_json::json!(text));
        }
        for (mode, text) in [
            (CwndMode::Off, "off"),
            (CwndMode::Pushback, "pushback"),
            (CwndMode::Pacer, "pacer"),
        ] {
            assert_eq!(serde_json::to_value(mode).unwrap(), serde_json::json!(text));
        }
        for (mode, text) in [
            (NackMode::Stock, "stock"),
            (NackMode::Libwebrtc, "libwebrtc"),
            (NackMode::Off, "off"),
        ] {
            assert_eq!(serde_json::to_value(mode).unwrap(), serde_json::json!(text));
        }
    }

    #[test]
    fn a_calibrated_record_keeps_its_expected_count_and_old_records_stay_exact() {
        use handover_predictor::{HandoverTiming, PredictedHandover};
        use std::time::Duration;
        let t0 = Instant::now();
        let at = |s: u64, p: f32| PredictedHandover::new(Duration::from_secs(s), p).unwrap();
        let forecast = Forecast::with_handovers(
            ForecastSource::Calibrated,
            t0,
            [at(3, 0.74), at(18, 0.25)],
            HandoverTiming::SubSecond,
        )
        .unwrap();
        let record = ForecastRecord::from_forecast(&forecast);
        assert_eq!(record.cumulative[2], 0.74 / 8.0);
        assert_eq!(record.cumulative[119], (0.74 + 0.25) / 8.0);
        assert!(record.check().is_ok());
        assert_eq!(record.to_tensor(), forecast.to_tensor());
        let json = serde_json::to_string(&record).unwrap();
        let back: ForecastRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back, record);
        // The same channel under a source with certain handovers is refused, naming the step.
        let mut mislabelled = record.clone();
        mislabelled.source = ForecastSource::Mirror;
        assert!(matches!(
            mislabelled.check(),
            Err(ForecastError::InconsistentCumulative { index: 2, .. })
        ));
        // A calibrated channel that does not rise at a handover bit is refused.
        let mut flat = record;
        flat.cumulative[2] = 0.0;
        assert!(matches!(
            flat.check(),
            Err(ForecastError::ImpossibleCumulative { index: 2, .. })
        ));
    }

    #[test]
    fn the_forecast_record_carries_the_model_input() {
        let t0 = Instant::now();
        let forecast = Forecast::new(ForecastSource::Hybrid, t0, bits_with(&[1, 119]));
        let record = ForecastRecord::from_forecast(&forecast);
        assert_eq!(record.source, ForecastSource::Hybrid);
        assert_eq!(record.cumulative.len(), 120);
        assert_eq!(record.cumulative[0], 0.0);
        assert_eq!(record.cumulative[1], 0.125);
        assert_eq!(record.cumulative[119], 0.25);
        let tensor = record.to_tensor();
        assert_eq!(tensor, forecast.to_tensor());
        assert_eq!(&tensor[0..4], &[0.0, 0.0, 1.0, 0.125]);
        assert_eq!(&tensor[238..240], &[1.0, 0.25]);
    }
}

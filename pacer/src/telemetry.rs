//! Telemetry: one JSON object per line, one line per decision interval (DESIGN section 5).
//!
//! Every call writes these records (rtc-client) and the trainer reads them (policy-train), so the
//! types live here, in the crate both depend on. The reader is strict about what the contract
//! fixes (the schema tag, the forecast's shape and its cumulative channel, the sender enums) and
//! lenient about what it does not: unknown fields are ignored, so a newer writer that adds a
//! field does not break an older reader.

use crate::cwnd::CwndMode;
use handover_predictor::{Forecast, ForecastError, ForecastSource, HORIZON_STEPS, HandoverSteps};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// The schema tag every interval record carries (DESIGN section 5). A reader refuses any other.
pub const SCHEMA: &str = "leopace.interval.v1";

/// One decision interval of one call (DESIGN section 5).
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
    /// The policy in force: `"default"`, `"random"`, `"heuristic"`, `"learned:<sha prefix>"` or
    /// `"fixed:<ms>"` ([`QueuePolicy::name`](crate::QueuePolicy::name)).
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
    /// How the sender was configured; optional until every writer fills it (DESIGN section 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<SenderRecord>,
}

/// The forecast a decision was made on: the model input of DESIGN sections 3 and 6.
///
/// The cumulative channel is redundant with the bits and stored so that a log is readable on its
/// own; deserialising checks it against the bits (within 1e-6), so a record that is read is
/// always consistent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawForecastRecord")]
pub struct ForecastRecord {
    /// Where the forecast came from.
    pub source: ForecastSource,
    /// The 120 handover bits.
    pub handover: HandoverSteps,
    /// `cumulative[k] = (handover[0] + ... + handover[k]) / 8`, 120 values.
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
        raw.handover.check_cumulative(&raw.cumulative)?;
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

    /// Checks the stored cumulative channel against the bits.
    pub fn check(&self) -> Result<(), ForecastError> {
        self.handover.check_cumulative(&self.cumulative)
    }

    /// The model input `[1, 120, 2]` in row-major order, as
    /// [`HandoverSteps::to_tensor`] lays it out: the handover bit then the cumulative value of
    /// each step, derived from the bits (which a read record's cumulative channel equals).
    pub fn to_tensor(&self) -> [f32; 2 * HORIZON_STEPS] {
        self.handover.to_tensor()
    }
}

/// The handovers that actually happened during the interval (DESIGN section 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedRecord {
    /// Where the observation came from (`oracle` for the emulated link's ground truth, `mirror`
    /// or `hybrid` for the dish's handover detector, ...).
    pub source: ForecastSource,
    /// The 120 handover bits, one per second from the interval's start.
    pub handover: HandoverSteps,
}

/// Call quality over the interval, with WebRTC's definitions (DESIGN section 5).
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

/// How the sender was configured and what its drop/flush mechanisms did (DESIGN section 5).
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
    /// The libwebrtc-like pair with RTX (`rtc_client::nack`).
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
        let numbers = [
            ("qoe.video_bitrate_kbps", self.qoe.video_bitrate_kbps),
            ("qoe.freezes_per_min", self.qoe.freezes_per_min),
            ("qoe.frame_rate", self.qoe.frame_rate),
            ("qoe.e2e_delay_p50_ms", self.qoe.e2e_delay_p50_ms),
            ("qoe.e2e_delay_p95_ms", self.qoe.e2e_delay_p95_ms),
            ("qoe.packet_loss_pct", self.qoe.packet_loss_pct),
            ("pacer.max_queue_ms", self.pacer.max_queue_ms),
            ("pacer.mean_queue_ms", self.pacer.mean_queue_ms),
            ("pacer.drain_boost_ms", self.pacer.drain_boost_ms),
            ("pacer.encoder_paused_ms", self.pacer.encoder_paused_ms),
            ("gcc.mean_target_kbps", self.gcc.mean_target_kbps),
            ("gcc.min_target_kbps", self.gcc.min_target_kbps),
        ];
        let optional = [(
            "sender.pushback_ratio",
            self.sender.and_then(|s| s.pushback_ratio),
        )];
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

/// Why telemetry could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// A telemetry file could not be opened.
    #[error("cannot open {}: {source}", .path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A line could not be read (I/O failure, invalid UTF-8). Reading stops there.
    #[error("{}line {line}: cannot read: {source}", path_prefix(.path))]
    Read {
        /// The file, when known.
        path: Option<PathBuf>,
        /// 1-based line number.
        line: u64,
        /// The I/O error.
        source: io::Error,
    },
    /// A line is not a valid interval record.
    #[error("{}line {line}: {error}", path_prefix(.path))]
    Line {
        /// The file, when known.
        path: Option<PathBuf>,
        /// 1-based line number.
        line: u64,
        /// What is wrong with the line.
        error: RecordError,
    },
    /// The writer refused a record that would not read back.
    #[error("refusing to write interval {interval_index} of call {call_id:?}: {error}")]
    Refused {
        /// The record's call.
        call_id: String,
        /// The record's interval.
        interval_index: u64,
        /// What is wrong with it.
        error: RecordError,
    },
    /// Writing failed.
    #[error("cannot write telemetry: {0}")]
    Write(#[source] io::Error),
}

impl TelemetryError {
    /// The 1-based line number the error is about, for reading errors.
    pub fn line(&self) -> Option<u64> {
        match self {
            Self::Read { line, .. } | Self::Line { line, .. } => Some(*line),
            _ => None,
        }
    }
}

fn path_prefix(path: &Option<PathBuf>) -> String {
    match path {
        Some(path) => format!("{}: ", path.display()),
        None => String::new(),
    }
}

/// Reads interval records, one JSON object per line, skipping blank lines.
///
/// A line that is not a valid record is yielded as a [`TelemetryError::Line`] naming its 1-based
/// line number, and reading goes on with the next line, so a caller may skip bad lines. A read
/// error is yielded once as [`TelemetryError::Read`] and ends the iteration. The `schema` field is
/// checked before anything else, so a record of another schema version is reported as such
/// rather than as whatever field it happens to lack.
pub fn read_intervals<R: BufRead>(
    reader: R,
) -> impl Iterator<Item = Result<IntervalRecord, TelemetryError>> {
    Intervals {
        lines: reader.lines(),
        line: 0,
        path: None,
        done: false,
    }
}

/// Reads every interval record of the file at `path`, stopping at the first error, which names
/// the path and the line.
pub fn read_intervals_file(path: impl AsRef<Path>) -> Result<Vec<IntervalRecord>, TelemetryError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|source| TelemetryError::Open {
        path: path.to_owned(),
        source,
    })?;
    Intervals {
        lines: BufReader::new(file).lines(),
        line: 0,
        path: Some(path.to_owned()),
        done: false,
    }
    .collect()
}

struct Intervals<R> {
    lines: io::Lines<R>,
    line: u64,
    path: Option<PathBuf>,
    done: bool,
}

impl<R: BufRead> Iterator for Intervals<R> {
    type Item = Result<IntervalRecord, TelemetryError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        loop {
            let next = self.lines.next()?;
            self.line += 1;
            let text = match next {
                Ok(text) => text,
                Err(source) => {
                    self.done = true;
                    return Some(Err(TelemetryError::Read {
                        path: self.path.clone(),
                        line: self.line,
                        source,
                    }));
                }
            };
            if text.trim().is_empty() {
                continue;
            }
            return Some(parse_line(&text).map_err(|error| TelemetryError::Line {
                path: self.path.clone(),
                line: self.line,
                error,
            }));
        }
    }
}

/// One line to a record: JSON, then the schema, then the fields, each error naming its field.
fn parse_line(text: &str) -> Result<IntervalRecord, RecordError> {
    let value: Value =
        serde_json::from_str(text).map_err(|error| RecordError::NotJson(json_message(&error)))?;
    let Value::Object(map) = value else {
        return Err(RecordError::NotAnObject);
    };
    match map.get("schema") {
        None => return Err(RecordError::MissingSchema),
        Some(Value::String(schema)) if schema == SCHEMA => {}
        Some(other) => {
            return Err(RecordError::WrongSchema {
                found: other.to_string(),
            });
        }
    }
    let mut fields = Fields(map);
    let record = IntervalRecord {
        schema: fields.required("schema")?,
        call_id: fields.required("call_id")?,
        scenario: fields.required("scenario")?,
        seed: fields.optional("seed")?,
        interval_index: fields.required("interval_index")?,
        start_ms: fields.required("start_ms")?,
        duration_ms: fields.required("duration_ms")?,
        policy: fields.required("policy")?,
        action_ms: fields.required("action_ms")?,
        forecast: fields.required("forecast")?,
        observed: fields.required("observed")?,
        qoe: fields.required("qoe")?,
        pacer: fields.required("pacer")?,
        gcc: fields.required("gcc")?,
        sender: fields.optional("sender")?,
    };
    record.validate()?;
    Ok(record)
}

/// serde_json's message without its "at line 1 column N" suffix, which would contradict the
/// file line number in front of it; the column is kept.
fn json_message(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    match message.strip_suffix(&suffix) {
        Some(head) => format!("{head} at column {}", error.column()),
        None => message,
    }
}

/// The fields of one JSON object, taken one at a time so that an error can name its field.
struct Fields(Map<String, Value>);

impl Fields {
    fn required<T: DeserializeOwned>(&mut self, field: &'static str) -> Result<T, RecordError> {
        let value = self
            .0
            .remove(field)
            .ok_or(RecordError::MissingField(field))?;
        serde_json::from_value(value).map_err(|error| RecordError::Field {
            field,
            message: error.to_string(),
        })
    }

    fn optional<T: DeserializeOwned>(
        &mut self,
        field: &'static str,
    ) -> Result<Option<T>, RecordError> {
        match self.0.remove(field) {
            None => Ok(None),
            Some(value) => serde_json::from_value(value).map_err(|error| RecordError::Field {
                field,
                message: error.to_string(),
            }),
        }
    }
}

/// Writes interval records as JSON lines: one compact object per record, each ending in `\n`.
///
/// The output is a pure function of the records (field order is the struct's, floats are written
/// in their shortest round-trip form), so the same records give byte-identical telemetry (DESIGN
/// section 7). Every record is [validated](IntervalRecord::validate) first, so nothing is written
/// that a reader would refuse. Wrap a file in a [`BufWriter`](std::io::BufWriter); each record is
/// handed to the inner writer in one `write_all`.
#[derive(Debug)]
pub struct TelemetryWriter<W: Write> {
    inner: W,
    buffer: Vec<u8>,
}

impl<W: Write> TelemetryWriter<W> {
    /// A writer appending records to `inner`.
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            buffer: Vec::new(),
        }
    }

    /// Writes one record as one line.
    pub fn write(&mut self, record: &IntervalRecord) -> Result<(), TelemetryError> {
        record.validate().map_err(|error| TelemetryError::Refused {
            call_id: record.call_id.clone(),
            interval_index: record.interval_index,
            error,
        })?;
        self.buffer.clear();
        serde_json::to_writer(&mut self.buffer, record)
            .map_err(|error| TelemetryError::Write(io::Error::other(error)))?;
        self.buffer.push(b'\n');
        self.inner
            .write_all(&self.buffer)
            .map_err(TelemetryError::Write)
    }

    /// Flushes the inner writer.
    pub fn flush(&mut self) -> Result<(), TelemetryError> {
        self.inner.flush().map_err(TelemetryError::Write)
    }

    /// The inner writer (not flushed).
    pub fn into_inner(self) -> W {
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn bits_with(at: &[usize]) -> HandoverSteps {
        let mut bits = [0u8; HORIZON_STEPS];
        for &k in at {
            bits[k] = 1;
        }
        HandoverSteps::from_bits(&bits).unwrap()
    }

    fn sample(index: u64) -> IntervalRecord {
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
        }
    }

    fn line_of(record: &IntervalRecord) -> String {
        let mut writer = TelemetryWriter::new(Vec::new());
        writer.write(record).unwrap();
        String::from_utf8(writer.into_inner()).unwrap()
    }

    /// The JSON object of a sample record, to be edited into a bad line.
    fn object_of(record: &IntervalRecord) -> Map<String, Value> {
        match serde_json::to_value(record).unwrap() {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    fn read_all(text: &str) -> Vec<Result<IntervalRecord, TelemetryError>> {
        read_intervals(text.as_bytes()).collect()
    }

    fn only_error(text: &str) -> String {
        let results = read_all(text);
        assert_eq!(results.len(), 1);
        results.into_iter().next().unwrap().unwrap_err().to_string()
    }

    #[test]
    fn records_read_back_equal_and_rewrite_byte_identical() {
        let records: Vec<_> = (0..3).map(sample).collect();
        let mut writer = TelemetryWriter::new(Vec::new());
        for record in &records {
            writer.write(record).unwrap();
        }
        writer.flush().unwrap();
        let first = writer.into_inner();
        assert_eq!(first.iter().filter(|&&b| b == b'\n').count(), 3);
        assert!(first.ends_with(b"}\n"));

        let back: Vec<_> = read_intervals(&first[..])
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, records);

        let mut writer = TelemetryWriter::new(Vec::new());
        for record in &back {
            writer.write(record).unwrap();
        }
        assert_eq!(writer.into_inner(), first);
    }

    #[test]
    fn a_line_is_compact_json_with_the_contract_field_names_in_order() {
        let line = line_of(&sample(0));
        assert!(line.starts_with(
            "{\"schema\":\"leopace.interval.v1\",\"call_id\":\"call-7\",\"scenario\":\"starlink\",\
             \"seed\":7,\"interval_index\":0,\"start_ms\":0,\"duration_ms\":120000,\
             \"policy\":\"heuristic\",\"action_ms\":4000,\"forecast\":{\"source\":\"orbital\",\
             \"handover\":[1,0,0,"
        ));
        assert!(line.contains(",\"cumulative\":[0.125,0.125,"));
        assert!(line.contains(
            "\"qoe\":{\"video_bitrate_kbps\":1834.25,\"freeze_count\":2,\"freezes_per_min\":1.0,\
             \"total_freeze_ms\":640,\"frame_rate\":29.7,\"e2e_delay_p50_ms\":143.5,\
             \"e2e_delay_p95_ms\":412.0,\"packet_loss_pct\":0.1,\"frames_rendered\":3564},\
             \"pacer\":{\"max_queue_ms\":911.0,\"mean_queue_ms\":37.25,\"drain_boost_ms\":0.0,\
             \"encoder_paused_ms\":120.0},\"gcc\":{\"mean_target_kbps\":2010.5,\
             \"min_target_kbps\":300.0},\"sender\":{\"bwe\":\"googcc\",\"cwnd_mode\":\"pushback\",\
             \"keyframe_flush\":true,\"frames_dropped\":3,\"packets_flushed\":41}}\n"
        ));
        assert!(!line[..line.len() - 1].contains('\n'));
    }

    #[test]
    fn a_line_with_another_schema_is_rejected_naming_the_line() {
        let good = line_of(&sample(0));
        let text =
            format!("{good}{good}{{\"schema\":\"leopace.interval.v2\",\"call_id\":\"x\"}}\n");
        let results = read_all(&text);
        assert_eq!(results.len(), 3);
        assert!(results[0].is_ok() && results[1].is_ok());
        let err = results[2].as_ref().unwrap_err();
        assert_eq!(err.line(), Some(3));
        assert_eq!(
            err.to_string(),
            "line 3: schema is \"leopace.interval.v2\", expected \"leopace.interval.v1\""
        );
    }

    #[test]
    fn a_line_without_a_schema_or_with_a_non_string_schema_is_rejected() {
        assert_eq!(
            only_error("{\"call_id\":\"x\"}"),
            "line 1: no \"schema\" field; expected \"leopace.interval.v1\""
        );
        assert_eq!(
            only_error("{\"schema\":1}"),
            "line 1: schema is 1, expected \"leopace.interval.v1\""
        );
        assert_eq!(only_error("[1,2]"), "line 1: not a JSON object");
    }

    #[test]
    fn a_line_that_is_not_json_is_named_and_reading_goes_on() {
        let good = line_of(&sample(0));
        let text = format!("{good}{good}{good}{good}{{\"schema\": oops}}\n{good}");
        let results = read_all(&text);
        assert_eq!(results.len(), 6);
        assert_eq!(
            results[4].as_ref().unwrap_err().to_string(),
            "line 5: not valid JSON: expected value at column 12"
        );
        assert!(results[5].is_ok());
    }

    #[test]
    fn an_inconsistent_cumulative_channel_is_named() {
        let mut object = object_of(&sample(0));
        object["forecast"]["cumulative"][4] = serde_json::json!(0.5);
        let text = format!("\n\n\n\n\n\n{}\n", Value::Object(object));
        assert_eq!(
            only_error(&text),
            "line 7: forecast: cumulative[4] is 0.5, but the handover bits give 0.125 \
             (cumulative[k] = handovers in steps 0..=k / 8)"
        );
    }

    #[test]
    fn a_forecast_of_119_steps_is_rejected() {
        let mut object = object_of(&sample(0));
        object["forecast"]["handover"].as_array_mut().unwrap().pop();
        object["forecast"]["cumulative"]
            .as_array_mut()
            .unwrap()
            .pop();
        assert_eq!(
            only_error(&Value::Object(object).to_string()),
            "line 1: forecast: a forecast has exactly 120 one-second steps, got 119"
        );

        let mut object = object_of(&sample(0));
        object["forecast"]["cumulative"]
            .as_array_mut()
            .unwrap()
            .pop();
        assert_eq!(
            only_error(&Value::Object(object).to_string()),
            "line 1: forecast: a forecast has exactly 120 one-second steps, got 119"
        );
    }

    #[test]
    fn a_handover_that_is_not_a_bit_is_named_with_its_section() {
        let mut object = object_of(&sample(0));
        object["observed"]["handover"][9] = serde_json::json!(2);
        assert_eq!(
            only_error(&Value::Object(object).to_string()),
            "line 1: observed: handover[9] is 2; each step is 0 (no handover) or 1 (a handover)"
        );
    }

    #[test]
    fn unknown_fields_are_ignored_at_every_level() {
        let mut object = object_of(&sample(0));
        object.insert("jitter_ms".into(), serde_json::json!(12.5));
        object.insert("future".into(), serde_json::json!({"a": [1, 2]}));
        object["qoe"]["stall_count"] = serde_json::json!(4);
        object["forecast"]["model"] = serde_json::json!("v9");
        let results = read_all(&Value::Object(object).to_string());
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].as_ref().unwrap(), &sample(0));
    }

    #[test]
    fn a_record_without_sender_is_read_and_written_without_it() {
        let mut record = sample(0);
        record.sender = None;
        let line = line_of(&record);
        assert!(!line.contains("sender"));
        assert!(line.ends_with("\"min_target_kbps\":300.0}}\n"));
        let back = read_all(&line).remove(0).unwrap();
        assert_eq!(back, record);

        let mut object = object_of(&sample(0));
        object["sender"] = Value::Null;
        let back = read_all(&Value::Object(object).to_string())
            .remove(0)
            .unwrap();
        assert_eq!(back.sender, None);
    }

    #[test]
    fn the_nack_mode_is_written_when_set_and_a_line_without_it_still_reads() {
        // The sample has no nack field: a line written before it was recorded reads back as
        // `None`.
        let line = line_of(&sample(0));
        assert!(!line.contains("nack"));
        assert_eq!(
            read_all(&line).remove(0).unwrap().sender.unwrap().nack,
            None
        );
        for (mode, text) in [
            (NackMode::Stock, "stock"),
            (NackMode::Libwebrtc, "libwebrtc"),
            (NackMode::Off, "off"),
        ] {
            let mut record = sample(0);
            if let Some(sender) = record.sender.as_mut() {
                sender.nack = Some(mode);
            }
            let line = line_of(&record);
            assert!(
                line.contains(&format!("\"packets_flushed\":41,\"nack\":\"{text}\"}}")),
                "{line}"
            );
            assert_eq!(read_all(&line).remove(0).unwrap(), record);
        }
    }

    #[test]
    fn the_window_and_pushback_ratio_are_written_when_set_and_a_line_without_them_still_reads() {
        // The sample has neither: a line written before they existed reads back as `None`.
        let line = line_of(&sample(0));
        assert!(!line.contains("window_bytes") && !line.contains("pushback_ratio"));
        let sender = read_all(&line).remove(0).unwrap().sender.unwrap();
        assert_eq!((sender.window_bytes, sender.pushback_ratio), (None, None));

        let mut record = sample(0);
        if let Some(sender) = record.sender.as_mut() {
            sender.nack = Some(NackMode::Libwebrtc);
            sender.window_bytes = Some(48_213);
            sender.pushback_ratio = Some(0.857_375);
        }
        let line = line_of(&record);
        assert!(
            line.contains(
                "\"nack\":\"libwebrtc\",\"window_bytes\":48213,\"pushback_ratio\":0.857375}"
            ),
            "{line}"
        );
        assert_eq!(read_all(&line).remove(0).unwrap(), record);

        // Only the window (pacer mode): the ratio stays out of the line.
        if let Some(sender) = record.sender.as_mut() {
            sender.pushback_ratio = None;
        }
        let line = line_of(&record);
        assert!(line.contains("\"window_bytes\":48213}"), "{line}");
        assert_eq!(read_all(&line).remove(0).unwrap(), record);
    }

    #[test]
    fn the_writer_refuses_a_pushback_ratio_that_is_not_finite() {
        let mut writer = TelemetryWriter::new(Vec::new());
        let mut record = sample(3);
        if let Some(sender) = record.sender.as_mut() {
            sender.pushback_ratio = Some(f64::INFINITY);
        }
        assert_eq!(
            writer.write(&record).unwrap_err().to_string(),
            "refusing to write interval 3 of call \"call-7\": sender.pushback_ratio is inf; \
             every number must be finite"
        );
        assert!(writer.into_inner().is_empty());
    }

    #[test]
    fn a_null_seed_is_a_real_call_and_is_written_as_null() {
        let mut record = sample(0);
        record.seed = None;
        let line = line_of(&record);
        assert!(line.contains("\"seed\":null,"));
        assert_eq!(read_all(&line).remove(0).unwrap().seed, None);
    }

    #[test]
    fn blank_lines_are_skipped_and_line_numbers_stay_physical() {
        let good = line_of(&sample(0));
        let text = format!("\n{good}   \n\r\n{good}\n\t\n{{}}\n");
        let results = read_all(&text);
        assert_eq!(results.len(), 3);
        assert!(results[0].is_ok() && results[1].is_ok());
        assert_eq!(
            results[2].as_ref().unwrap_err().to_string(),
            "line 8: no \"schema\" field; expected \"leopace.interval.v1\""
        );
        assert!(read_all("\n\n  \n").is_empty());
    }

    #[test]
    fn a_missing_or_mistyped_field_is_named() {
        let mut object = object_of(&sample(0));
        object.remove("qoe");
        assert_eq!(
            only_error(&Value::Object(object).to_string()),
            "line 1: missing field `qoe`"
        );

        let mut object = object_of(&sample(0));
        object["qoe"].as_object_mut().unwrap().remove("frame_rate");
        assert_eq!(
            only_error(&Value::Object(object).to_string()),
            "line 1: qoe: missing field `frame_rate`"
        );

        let mut object = object_of(&sample(0));
        object["action_ms"] = serde_json::json!("4000");
        assert_eq!(
            only_error(&Value::Object(object).to_string()),
            "line 1: action_ms: invalid type: string \"4000\", expected u64"
        );
    }

    #[test]
    fn sender_values_outside_the_contract_are_rejected() {
        let mut object = object_of(&sample(0));
        object["sender"]["bwe"] = serde_json::json!("bbr");
        assert_eq!(
            only_error(&Value::Object(object).to_string()),
            "line 1: sender: unknown variant `bbr`, expected `googcc` or `webrtc-rs`"
        );

        let mut object = object_of(&sample(0));
        object["sender"]["cwnd_mode"] = serde_json::json!("window");
        assert_eq!(
            only_error(&Value::Object(object).to_string()),
            "line 1: sender: unknown variant `window`, expected one of `off`, `pushback`, `pacer`"
        );

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
    }

    #[test]
    fn the_writer_refuses_another_schema_and_non_finite_numbers() {
        let mut writer = TelemetryWriter::new(Vec::new());
        let mut record = sample(3);
        record.schema = "leopace.interval.v0".into();
        assert_eq!(
            writer.write(&record).unwrap_err().to_string(),
            "refusing to write interval 3 of call \"call-7\": schema is \"leopace.interval.v0\", \
             expected \"leopace.interval.v1\""
        );

        let mut record = sample(3);
        record.qoe.frame_rate = f64::NAN;
        assert_eq!(
            writer.write(&record).unwrap_err().to_string(),
            "refusing to write interval 3 of call \"call-7\": qoe.frame_rate is NaN; \
             every number must be finite"
        );

        let mut record = sample(3);
        record.forecast.cumulative[0] = 0.0;
        assert_eq!(
            writer.write(&record).unwrap_err().to_string(),
            "refusing to write interval 3 of call \"call-7\": forecast: cumulative[0] is 0, but \
             the handover bits give 0.125 (cumulative[k] = handovers in steps 0..=k / 8)"
        );
        assert!(writer.into_inner().is_empty());
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

    #[test]
    fn plain_serde_reads_what_the_reader_reads_and_checks_the_cumulative_channel() {
        let line = line_of(&sample(1));
        let direct: IntervalRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(direct, read_all(&line).remove(0).unwrap());

        let mut object = object_of(&sample(1));
        object["forecast"]["cumulative"][119] = serde_json::json!(0.0);
        let err = serde_json::from_value::<IntervalRecord>(Value::Object(object)).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cumulative[119] is 0, but the handover bits give 1"),
            "{err}"
        );
    }

    #[test]
    fn a_read_error_is_yielded_once_and_ends_the_iteration() {
        let good = line_of(&sample(0));
        let mut bytes = good.clone().into_bytes();
        bytes.extend_from_slice(b"\xff\xfe\n");
        bytes.extend_from_slice(good.as_bytes());
        let results: Vec<_> = read_intervals(&bytes[..]).collect();
        assert_eq!(results.len(), 2);
        assert!(results[0].is_ok());
        let err = results[1].as_ref().unwrap_err();
        assert!(
            matches!(err, TelemetryError::Read { line: 2, .. }),
            "{err:?}"
        );
        assert!(
            err.to_string().starts_with("line 2: cannot read: "),
            "{err}"
        );
    }

    #[test]
    fn reading_a_file_names_the_path_and_stops_at_the_first_error() {
        let dir = std::env::temp_dir().join(format!("pacer-telemetry-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("call.jsonl");
        let good = line_of(&sample(0));
        std::fs::write(&path, format!("{good}{good}")).unwrap();
        assert_eq!(
            read_intervals_file(&path).unwrap(),
            vec![sample(0), sample(0)]
        );

        std::fs::write(&path, format!("{good}not json\n{{}}\n")).unwrap();
        let err = read_intervals_file(&path).unwrap_err();
        assert_eq!(err.line(), Some(2));
        assert_eq!(
            err.to_string(),
            format!(
                "{}: line 2: not valid JSON: expected ident at column 2",
                path.display()
            )
        );

        let missing = dir.join("absent.jsonl");
        let err = read_intervals_file(&missing).unwrap_err();
        assert!(matches!(err, TelemetryError::Open { .. }));
        assert!(
            err.to_string()
                .starts_with(&format!("cannot open {}: ", missing.display())),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    proptest::proptest! {
        // serde_json parses floats exactly only with its `float_roundtrip` feature; without it a
        // value such as 2.938171304346487e87 reads back one ulp off.
        #[test]
        fn any_finite_numbers_survive_a_write_and_read_exactly(
            numbers in proptest::array::uniform12(proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO),
            counts in proptest::array::uniform3(proptest::num::u64::ANY),
        ) {
            let mut record = sample(0);
            record.start_ms = counts[0];
            record.seed = Some(counts[1]);
            record.qoe.frames_rendered = counts[2];
            record.qoe.video_bitrate_kbps = numbers[0];
            record.qoe.freezes_per_min = numbers[1];
            record.qoe.frame_rate = numbers[2];
            record.qoe.e2e_delay_p50_ms = numbers[3];
            record.qoe.e2e_delay_p95_ms = numbers[4];
            record.qoe.packet_loss_pct = numbers[5];
            record.pacer.max_queue_ms = numbers[6];
            record.pacer.mean_queue_ms = numbers[7];
            record.pacer.drain_boost_ms = numbers[8];
            record.pacer.encoder_paused_ms = numbers[9];
            record.gcc.mean_target_kbps = numbers[10];
            record.gcc.min_target_kbps = numbers[11];
            let line = line_of(&record);
            let back = read_all(&line).remove(0).unwrap();
            proptest::prop_assert_eq!(&back, &record);
            proptest::prop_assert_eq!(line_of(&back), line);
        }
    }
}

//! JSON lines: the reader and the writer of interval records.

use super::record::{IntervalRecord, RecordError, SCHEMA};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

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
    /// The last line has no newline: its writer stopped in the middle of the record (a killed
    /// process, a full disk), so it is not read, even when what is there happens to parse.
    /// Reading stops there.
    #[error(
        "{}line {line}: the last line is cut short (no newline at its end): the file was not \
         completely written, and the line is not read",
        path_prefix(.path)
    )]
    Truncated {
        /// The file, when known.
        path: Option<PathBuf>,
        /// 1-based line number.
        line: u64,
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
            Self::Read { line, .. } | Self::Line { line, .. } | Self::Truncated { line, .. } => {
                Some(*line)
            }
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
/// error is yielded once as [`TelemetryError::Read`] and ends the iteration. Every record the
/// writer writes ends in `\n`, so a last line without one is a record cut short by a writer that
/// stopped mid-line: it is yielded as [`TelemetryError::Truncated`], never as a record
/// (docs/architecture.md, "Sweeps, shards and resume"). The `schema` field is
/// checked before anything else, so a record of another schema version is reported as such
/// rather than as whatever field it happens to lack.
pub fn read_intervals<R: BufRead>(
    reader: R,
) -> impl Iterator<Item = Result<IntervalRecord, TelemetryError>> {
    Intervals {
        reader,
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
        reader: BufReader::new(file),
        line: 0,
        path: Some(path.to_owned()),
        done: false,
    }
    .collect()
}

struct Intervals<R> {
    reader: R,
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
            let mut bytes = Vec::new();
            let read = self.reader.read_until(b'\n', &mut bytes);
            if matches!(read, Ok(0)) {
                return None;
            }
            self.line += 1;
            let complete = bytes.last() == Some(&b'\n');
            let text = read.and_then(|_| {
                String::from_utf8(bytes).map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        "stream did not contain valid UTF-8",
                    )
                })
            });
            let text = match text {
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
            if !complete {
                self.done = true;
                return Some(Err(TelemetryError::Truncated {
                    path: self.path.clone(),
                    line: self.line,
                }));
            }
            let line = text.strip_suffix('\n').unwrap_or(&text);
            let line = line.strip_suffix('\r').unwrap_or(line);
            return Some(parse_line(line).map_err(|error| TelemetryError::Line {
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
        fec: fields.optional("fec")?,
        actions: fields.optional("actions")?,
        profile: fields.optional("profile")?,
        inputs: fields.optional("inputs")?,
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
/// in their shortest round-trip form), so the same records give byte-identical telemetry
/// (docs/architecture.md, "The determinism rule"). Every record is
/// [validated](IntervalRecord::validate) first, so nothing is written that a reader would refuse.
/// Wrap a file in a [`BufWriter`](std::io::BufWriter); each record is handed to the inner writer
/// in one `write_all`.
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
    use crate::telemetry::record::NackMode;
    use crate::telemetry::record::fixtures::sample;

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

    /// Reads `text` as a file of whole lines: a last line without its newline gets one, since
    /// these tests are about the records, not about files cut short.
    fn read_all(text: &str) -> Vec<Result<IntervalRecord, TelemetryError>> {
        let mut text = text.to_owned();
        if !text.ends_with('\n') {
            text.push('\n');
        }
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
             \"e2e_delay_p95_ms\":412.0,\"packet_loss_pct\":0.1,\"frames_rendered\":3564,\
             \"frozen_s_per_min\":0.32,\"stall_count\":3,\"stalls_per_min\":1.5},\
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
        object["qoe"]["rebuffer_count"] = serde_json::json!(4);
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
    fn the_actions_are_written_when_set_a_line_without_them_still_reads_and_a_bad_one_is_named() {
        let line = line_of(&sample(0));
        assert!(!line.contains("actions"));
        assert_eq!(read_all(&line).remove(0).unwrap().actions, None);

        let mut record = sample(0);
        let mut actions = crate::telemetry::ActionsRecord::default();
        actions.hold.applied = 8;
        actions.hold.total_ms = 960;
        record.actions = Some(actions);
        let line = line_of(&record);
        assert!(
            line.ends_with(
                ",\"actions\":{\"hold\":{\"applied\":8,\"total_ms\":960},\
             \"guard\":{\"applied\":0,\"total_ms\":0},\"boost\":{\"applied\":0,\"total_ms\":0},\
             \"keyframe_block\":{\"applied\":0,\"total_ms\":0}}}\n"
            ),
            "{line}"
        );
        assert_eq!(read_all(&line).remove(0).unwrap(), record);

        let mut object = object_of(&record);
        object["actions"]["boost"]["total_ms"] = serde_json::json!(-1);
        assert!(only_error(&Value::Object(object).to_string()).starts_with("line 1: actions: "),);
        let mut object = object_of(&record);
        object["actions"]["hold"]["total_ms"] = serde_json::json!(120_001);
        assert_eq!(
            only_error(&Value::Object(object).to_string()),
            "line 1: actions: hold.total_ms 120001 exceeds the interval's duration_ms 120000"
        );
    }
    #[test]
    fn the_profile_and_inputs_are_written_when_set_old_lines_read_without_and_bad_ones_are_named() {
        let line = line_of(&sample(0));
        assert!(!line.contains("profile") && !line.contains("inputs"));
        let back = read_all(&line).remove(0).unwrap();
        assert_eq!(
            (back.profile, back.inputs),
            (None, None),
            "queue-limit-only"
        );

        let mut record = sample(0);
        record.profile = Some("hold160+guard+boost".into());
        record.inputs = Some(crate::telemetry::InputsRecord {
            boundary_excess_loss_pct: Some(21.5),
            previous_loss_pct: None,
            ..Default::default()
        });
        let line = line_of(&record);
        assert!(
            line.ends_with(
                ",\"profile\":\"hold160+guard+boost\",\"inputs\":{\"boundary_excess_loss_pct\":21.5}}\n"
            ),
            "{line}"
        );
        assert_eq!(read_all(&line).remove(0).unwrap(), record);

        let mut object = object_of(&record);
        object["profile"] = serde_json::json!("hold999");
        let text = format!("\n{}", Value::Object(object));
        let results = read_all(&text);
        let err = results.into_iter().next().unwrap().unwrap_err().to_string();
        assert!(
            err.starts_with("line 2: profile: unknown action profile \"hold999\""),
            "{err}"
        );
        let mut object = object_of(&record);
        object["profile"] = serde_json::json!(3);
        assert!(only_error(&Value::Object(object).to_string()).starts_with("line 1: profile: "));
        let mut object = object_of(&record);
        object["inputs"]["previous_loss_pct"] = serde_json::json!("a lot");
        assert!(only_error(&Value::Object(object).to_string()).starts_with("line 1: inputs: "));
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
    fn a_qoe_record_written_before_stalls_and_freeze_time_per_minute_reads_them_as_zero() {
        let mut object = object_of(&sample(0));
        let qoe = object["qoe"].as_object_mut().unwrap();
        for field in ["frozen_s_per_min", "stall_count", "stalls_per_min"] {
            assert!(qoe.remove(field).is_some(), "the sample writes {field}");
        }
        let back = read_all(&Value::Object(object).to_string())
            .remove(0)
            .unwrap();
        let mut expected = sample(0);
        expected.qoe.frozen_s_per_min = 0.0;
        expected.qoe.stall_count = 0;
        expected.qoe.stalls_per_min = 0.0;
        assert_eq!(back, expected);

        let mut record = sample(3);
        record.qoe.stalls_per_min = f64::INFINITY;
        assert_eq!(
            TelemetryWriter::new(Vec::new())
                .write(&record)
                .unwrap_err()
                .to_string(),
            "refusing to write interval 3 of call \"call-7\": qoe.stalls_per_min is inf; \
             every number must be finite"
        );
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
    #[test]
    fn a_last_line_cut_short_is_reported_and_never_read_even_when_it_parses() {
        let good = line_of(&sample(0));
        let whole = good.trim_end_matches('\n');
        for tail in [&good[..good.len() / 2], whole] {
            let text = format!("{good}{good}{tail}");
            let results: Vec<_> = read_intervals(text.as_bytes()).collect();
            assert_eq!(results.len(), 3, "{tail}");
            assert!(results[0].is_ok() && results[1].is_ok());
            let err = results[2].as_ref().unwrap_err();
            assert!(
                matches!(err, TelemetryError::Truncated { line: 3, .. }),
                "{err:?}"
            );
            assert_eq!(
                err.to_string(),
                "line 3: the last line is cut short (no newline at its end): the file was not \
                 completely written, and the line is not read"
            );
        }
        // Trailing blanks without a newline are no record at all.
        let text = format!("{good}  ");
        assert_eq!(read_intervals(text.as_bytes()).count(), 1);
        // A cut-short line in a file names the file and stops the read.
        let dir = std::env::temp_dir().join(format!("pacer-truncated-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("call.jsonl");
        std::fs::write(&path, format!("{good}{}", &good[..10])).unwrap();
        let err = read_intervals_file(&path).unwrap_err();
        assert_eq!(err.line(), Some(2));
        assert!(
            err.to_string().starts_with(&format!(
                "{}: line 2: the last line is cut short",
                path.display()
            )),
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

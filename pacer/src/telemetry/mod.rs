//! Telemetry: one JSON object per line, one line per decision interval (docs/architecture.md,
//! "The telemetry contract").
//!
//! Every call writes these records (rtc-client) and the trainer reads them (policy-train), so the
//! types live here, in the crate both depend on. The reader is strict about what the contract
//! fixes (the schema tag, the forecast's shape and its cumulative channel, the sender enums) and
//! lenient about what it does not: unknown fields are ignored, so a newer writer that adds a
//! field does not break an older reader.
//!
//! The record types and their validation are always here. The JSON-lines reader and writer
//! (`read_intervals`, `read_intervals_file`, `TelemetryWriter` and `TelemetryError`) are behind
//! the feature `jsonl`, off by default, for the crates that read or write telemetry files.

#[cfg(feature = "jsonl")]
mod jsonl;
mod record;

#[cfg(feature = "jsonl")]
pub use jsonl::{TelemetryError, TelemetryWriter, read_intervals, read_intervals_file};
pub use record::{
    ActionRecord, ActionsRecord, Bwe, FecRecord, ForecastRecord, GccRecord, InputsRecord,
    IntervalRecord, NackMode, ObservedRecord, PacerRecord, QoeRecord, RecordError, SCHEMA,
    SenderRecord,
};

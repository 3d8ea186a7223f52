//! Readers for the trace formats the field uses, with errors that name the file, the line and
//! the field.
//!
//! - [`MahimahiTrace::load`](super::MahimahiTrace::load): Mahimahi packet-delivery traces
//!   (`../shared/data/starlink/leocc/bw_example.mahimahi`, `terrestrial/mahimahi/*`).
//! - [`read_leoreplayer_delay`]: LeoReplayer's one-way delay file, one integer millisecond per
//!   10-ms slot (`starlink/leocc/delay_example_10ms.txt`); [`read_delay_ms_series`] for other
//!   steps (e.g. a per-second series).
//! - [`LagosTrace::load`]: the 7-column `lagos.csv` of Starlink-Emulator (`starlink/lagos/`).
//! - [`PingTrace::load`]: the mmsys24 ping TSV (`starlink/mmsys24/*ping*.txt`).
//!
//! Each reader has a `parse(text, origin)` twin for text already in memory; `origin` is what
//! messages call the source. Lines are numbered from 1 and columns (fields) from 1.

mod lagos;
mod leoreplayer;
mod mahimahi;
mod ping;

pub use lagos::{Direction, LAGOS_ROW_MS, LagosRow, LagosTrace};
pub use leoreplayer::{
    LEOREPLAYER_DELAY_STEP, parse_delay_ms_series, parse_leoreplayer_delay, read_delay_ms_series,
    read_leoreplayer_delay,
};
pub use ping::{
    MAX_REPLAY_SPAN_S, PING_PHASE_BIN_MS, PING_ROW_MS, PingLossModel, PingReplay, PingSample,
    PingTrace,
};

use std::path::Path;

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be read (missing, unreadable, not UTF-8).
    #[error("{path}: cannot read the file: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file has no data lines.
    #[error("{origin}: empty: no data lines")]
    Empty {
        /// The file.
        origin: String,
    },
    /// A line has the wrong number of fields.
    #[error("{origin}:{line}: expected {expected} fields ({layout}), found {found}")]
    FieldCount {
        /// The file.
        origin: String,
        /// Line number, from 1.
        line: usize,
        /// Fields expected.
        expected: usize,
        /// Fields found.
        found: usize,
        /// The expected layout.
        layout: &'static str,
    },
    /// A field is wrong.
    #[error("{origin}:{line}: column {column} ({field}): {problem}")]
    Field {
        /// The file.
        origin: String,
        /// Line number, from 1.
        line: usize,
        /// Column (field) number, from 1.
        column: usize,
        /// The field's name.
        field: &'static str,
        /// What is wrong.
        problem: FieldProblem,
    },
    /// The file as a whole is unusable (e.g. a Mahimahi trace spanning zero time).
    #[error("{origin}: {problem}")]
    Trace {
        /// The file.
        origin: String,
        /// What is wrong.
        problem: String,
    },
}

/// What is wrong with a field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FieldProblem {
    /// Nothing there.
    #[error("empty")]
    Blank,
    /// Not a value of the expected kind.
    #[error("{text:?} is not {expected}")]
    Invalid {
        /// The text found.
        text: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A value out of its range.
    #[error("{value} is out of range: {why}")]
    OutOfRange {
        /// The value found.
        value: String,
        /// The range.
        why: &'static str,
    },
    /// A value before the previous line's (timestamps must not decrease).
    #[error("{value} is before the previous line's {previous}")]
    Decreasing {
        /// The value found.
        value: String,
        /// The previous line's value.
        previous: String,
    },
    /// A value other than the one the format requires.
    #[error("{found}, expected {expected}")]
    Unexpected {
        /// The value found.
        found: String,
        /// The value required.
        expected: String,
    },
}

/// Reads a whole file as text.
pub(crate) fn read_text(path: &Path) -> Result<String, TraceError> {
    std::fs::read_to_string(path).map_err(|source| TraceError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// A field error builder for one file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    pub(crate) origin: &'a str,
    pub(crate) line: usize,
}

impl At<'_> {
    pub(crate) fn field(
        &self,
        column: usize,
        field: &'static str,
        problem: FieldProblem,
    ) -> TraceError {
        TraceError::Field {
            origin: self.origin.to_string(),
            line: self.line,
            column,
            field,
            problem,
        }
    }

    /// Parses a finite float, refusing blanks and non-numbers.
    pub(crate) fn float(
        &self,
        text: &str,
        column: usize,
        field: &'static str,
    ) -> Result<f64, TraceError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(self.field(column, field, FieldProblem::Blank));
        }
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.field(
                column,
                field,
                FieldProblem::Invalid {
                    text: text.to_string(),
                    expected: "a finite number",
                },
            )),
        }
    }

    /// Parses a finite float >= 0.
    pub(crate) fn non_negative(
        &self,
        text: &str,
        column: usize,
        field: &'static str,
    ) -> Result<f64, TraceError> {
        let v = self.float(text, column, field)?;
        if v < 0.0 {
            return Err(self.field(
                column,
                field,
                FieldProblem::OutOfRange {
                    value: text.trim().to_string(),
                    why: "must be >= 0",
                },
            ));
        }
        Ok(v)
    }

    /// Parses an unsigned integer.
    pub(crate) fn unsigned(
        &self,
        text: &str,
        column: usize,
        field: &'static str,
        expected: &'static str,
    ) -> Result<u64, TraceError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(self.field(column, field, FieldProblem::Blank));
        }
        text.parse::<u64>().map_err(|_| {
            self.field(
                column,
                field,
                FieldProblem::Invalid {
                    text: text.to_string(),
                    expected,
                },
            )
        })
    }
}

//! Reading telemetry logs: glob patterns to files, files to interval records, bad lines to
//! reasons.
//!
//! A training run reads many files (`rtc-client collect` writes one per call). A line that is not
//! a valid `leopace.interval.v1` record is reported with its file and line and skipped; a file
//! that cannot be read at all is an error. Every file's sha256 is kept for the model card.

use pacer::telemetry::{IntervalRecord, TelemetryError, read_intervals};
use sha2::{Digest, Sha256};
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Why logs could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LogsError {
    /// A pattern is not a valid glob.
    #[error("{pattern:?} is not a valid glob pattern: {message}")]
    Pattern {
        /// The pattern.
        pattern: String,
        /// Why.
        message: String,
    },
    /// The patterns matched no file.
    #[error("no telemetry file matches {0}")]
    NoFiles(String),
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A line that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rejected {
    /// The file.
    pub file: String,
    /// 1-based line number (0 when the whole rest of the file was unreadable).
    pub line: u64,
    /// What was wrong.
    pub reason: String,
}

/// One file that was read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LogFile {
    /// Its path as matched.
    pub path: String,
    /// The sha256 of its bytes, hex.
    pub sha256: String,
    /// Records read from it.
    pub records: usize,
}

/// Everything read from a set of logs.
#[derive(Debug, Clone, Default)]
pub struct Logs {
    /// The records, file by file in sorted path order, in line order within a file.
    pub records: Vec<IntervalRecord>,
    /// The files.
    pub files: Vec<LogFile>,
    /// The skipped lines.
    pub rejected: Vec<Rejected>,
}

/// The files `patterns` match (comma-separated globs, or several arguments), sorted and
/// deduplicated so that a run does not depend on directory order.
pub fn expand(patterns: &[String]) -> Result<Vec<PathBuf>, LogsError> {
    let mut files = Vec::new();
    for pattern in patterns
        .iter()
        .flat_map(|p| p.split(','))
        .filter(|p| !p.is_empty())
    {
        let matches = glob::glob(pattern).map_err(|e| LogsError::Pattern {
            pattern: pattern.to_owned(),
            message: e.to_string(),
        })?;
        for entry in matches {
            let path = entry.map_err(|e| LogsError::Io {
                path: e.path().to_path_buf(),
                source: std::io::Error::other(e.to_string()),
            })?;
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    files.dedup();
    if files.is_empty() {
        return Err(LogsError::NoFiles(patterns.join(", ")));
    }
    Ok(files)
}

/// Reads every file `patterns` match.
pub fn read(patterns: &[String]) -> Result<Logs, LogsError> {
    let mut logs = Logs::default();
    for path in expand(patterns)? {
        read_file(&path, &mut logs)?;
    }
    Ok(logs)
}

fn read_file(path: &Path, logs: &mut Logs) -> Result<(), LogsError> {
    let bytes = std::fs::read(path).map_err(|source| LogsError::Io {
        path: path.to_owned(),
        source,
    })?;
    let name = path.display().to_string();
    let mut count = 0;
    for item in read_intervals(BufReader::new(bytes.as_slice())) {
        match item {
            Ok(record) => {
                logs.records.push(record);
                count += 1;
            }
            Err(error) => logs.rejected.push(Rejected {
                file: name.clone(),
                line: error.line().unwrap_or(0),
                reason: match &error {
                    TelemetryError::Line { error, .. } => error.to_string(),
                    other => other.to_string(),
                },
            }),
        }
    }
    logs.files.push(LogFile {
        path: name,
        sha256: hex_sha256(&bytes),
        records: count,
    });
    Ok(())
}

/// The lowercase hex sha256 of `bytes`.
pub fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

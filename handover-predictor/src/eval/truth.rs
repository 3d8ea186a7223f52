//! Scoring the sources against a per-second serving-satellite log (`eval --truth`): a real
//! dish's log as SatInView and LEOViz write it, or one `dish-sim` generated.
//!
//! The log is a CSV file with a header naming at least `Timestamp` and `Connected_Satellite`;
//! one row per second (any spacing is accepted), an empty satellite (or `None`, `nan`, `null`)
//! meaning no satellite served. A handover is a row whose satellite differs from the last one
//! that served before it, dated at that row. Windows of 120 s start after a warm-up (the
//! mirror's 120 s of history, paper section III-D) and follow each other; every source is asked
//! at each window's start and knows only the log before it (docs/architecture.md, "The
//! calibrated predictor"):
//!
//! - `orbital`: SGP4 over the catalogue at the site under the fitted Starlink policy;
//! - `mirror`: the log's handovers of the last 120 s, repeated (paper section III-D);
//! - `slot grid`: every slot boundary, certain;
//! - `calibrated`: every slot boundary with the switch rate learned from the boundaries the log
//!   has passed, shrunk toward the prior.
//!
//! Figures: per-second F1 within +-1 s (micro-averaged over windows), the mean absolute error of
//! the handover count per window (a forecast's count is [`Forecast::median_count`]), and the
//! binomial floor: with the file's own switch rate `p` over its boundaries, the mean over
//! windows of `min_c E|X - c|`, `X ~ Binomial(n, p)` and `n` the window's boundaries, the error
//! the best constant count makes when switches are independent draws at that rate.

use super::config::EvalError;
use super::report::ratio_or_zero;
use super::score::TOLERANCE_S;
use crate::dish::{Score, score_handovers};
use crate::forecast::{Forecast, HORIZON, HORIZON_STEPS};
use crate::orbit::{Catalogue, Observer, ServingPolicy};
use crate::predict::{Calibrated, DEFAULT_PRIOR_WEIGHT, Mirror, Orbital, POOLED_SWITCH_RATE};
use crate::sky::{SLOT_LENGTH_S, next_slot_boundary};
use crate::source::HandoverSource;
use chrono::{DateTime, Duration as ChronoDuration, NaiveDateTime, Utc};
use serde::Serialize;
use std::fmt;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The column holding each row's instant.
pub const TIMESTAMP_COLUMN: &str = "Timestamp";
/// The column holding the serving satellite's name or number.
pub const SATELLITE_COLUMN: &str = "Connected_Satellite";

/// Why a truth log could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TruthLogError {
    /// No header line.
    #[error(
        "{origin}: the file is empty; expected a CSV header with {TIMESTAMP_COLUMN} and {SATELLITE_COLUMN}"
    )]
    Empty {
        /// The file.
        origin: String,
    },
    /// The header lacks a required column.
    #[error("{origin}: the header has no {column} column (it has: {found})")]
    MissingColumn {
        /// The file.
        origin: String,
        /// The missing column.
        column: &'static str,
        /// The columns the header has.
        found: String,
    },
    /// A row that cannot be read.
    #[error("{origin}, line {line}, column {column}: {message}")]
    Row {
        /// The file.
        origin: String,
        /// 1-based line number.
        line: usize,
        /// The column at fault.
        column: String,
        /// What was wrong.
        message: String,
    },
    /// Fewer than two rows with a timestamp.
    #[error("{origin}: no data rows under the header")]
    NoRows {
        /// The file.
        origin: String,
    },
}

/// One row of a truth log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthRow {
    /// The row's instant.
    pub at: DateTime<Utc>,
    /// The serving satellite, `None` when none served.
    pub satellite: Option<String>,
}

/// A per-second serving-satellite log, rows in time order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthLog {
    origin: String,
    rows: Vec<TruthRow>,
}

/// Parses a timestamp as the logs write them: RFC 3339 / ISO 8601 with an offset or `Z`, or
/// without one (read as UTC), with `T` or a space between date and time, with or without
/// fractional seconds; or Unix seconds (a number, possibly fractional).
pub fn parse_timestamp(s: &str) -> Result<DateTime<Utc>, String> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    for format in ["%Y-%m-%d %H:%M:%S%.f%:z", "%Y-%m-%d %H:%M:%S%.f%#z"] {
        if let Ok(t) = DateTime::parse_from_str(s, format) {
            return Ok(t.with_timezone(&Utc));
        }
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y/%m/%d %H:%M:%S%.f",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, format) {
            return Ok(t.and_utc());
        }
    }
    if let Ok(unix) = s.parse::<f64>()
        && unix.is_finite()
        && let Some(t) =
            DateTime::from_timestamp(unix.floor() as i64, ((unix.fract()) * 1e9) as u32)
    {
        return Ok(t);
    }
    Err(format!(
        "{s:?} is not a timestamp (expected ISO 8601 such as 2024-07-16T12:00:05Z or \
         2024-07-16 12:00:05, or Unix seconds)"
    ))
}

/// Splits one CSV line into fields, honouring double quotes (RFC 4180).
fn split_csv(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

impl TruthLog {
    /// Reads a log from CSV text; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, TruthLogError> {
        let origin = origin.to_owned();
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let Some((_, header)) = lines.next() else {
            return Err(TruthLogError::Empty { origin });
        };
        let header: Vec<String> = split_csv(header.trim_start_matches('\u{feff}'))
            .into_iter()
            .map(|h| h.trim().to_owned())
            .collect();
        let find = |column: &'static str| {
            header
                .iter()
                .position(|h| h == column)
                .ok_or_else(|| TruthLogError::MissingColumn {
                    origin: origin.clone(),
                    column,
                    found: header.join(", "),
                })
        };
        let (time_col, sat_col) = (find(TIMESTAMP_COLUMN)?, find(SATELLITE_COLUMN)?);
        let mut rows: Vec<TruthRow> = Vec::new();
        for (index, line) in lines {
            let line_no = index + 1;
            let fields = split_csv(line);
            let row_error = |column: &str, message: String| TruthLogError::Row {
                origin: origin.clone(),
                line: line_no,
                column: column.to_owned(),
                message,
            };
            let get = |col: usize, name: &str| {
                fields.get(col).map(|f| f.trim()).ok_or_else(|| {
                    row_error(
                        name,
                        format!(
                            "the row has {} fields, the header {}",
                            fields.len(),
                            header.len()
                        ),
                    )
                })
            };
            let at = parse_timestamp(get(time_col, TIMESTAMP_COLUMN)?)
                .map_err(|m| row_error(TIMESTAMP_COLUMN, m))?;
            if let Some(previous) = rows.last()
                && at <= previous.at
            {
                return Err(row_error(
                    TIMESTAMP_COLUMN,
                    format!(
                        "{at} is not after the previous row's {}; rows must be in time order",
                        previous.at
                    ),
                ));
            }
            let satellite = get(sat_col, SATELLITE_COLUMN)?;
            let none = satellite.is_empty()
                || ["none", "nan", "null", "-"]
                    .iter()
                    .any(|n| satellite.eq_ignore_ascii_case(n));
            rows.push(TruthRow {
                at,
                satellite: (!none).then(|| satellite.to_owned()),
            });
        }
        if rows.is_empty() {
            return Err(TruthLogError::NoRows { origin });
        }
        Ok(Self { origin, rows })
    }

    /// The file the log came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The rows, in time order.
    pub fn rows(&self) -> &[TruthRow] {
        &self.rows
    }

    /// The first row's instant.
    pub fn start(&self) -> DateTime<Utc> {
        self.rows[0].at
    }

    /// The last row's instant.
    pub fn end(&self) -> DateTime<Utc> {
        self.rows[self.rows.len() - 1].at
    }

    /// The handover instants: rows whose satellite differs from the last one that served
    /// before them (a gap in between is looked past, as [`crate::orbit::handovers`] counts).
    pub fn handovers(&self) -> Vec<DateTime<Utc>> {
        let mut last: Option<&str> = None;
        let mut out = Vec::new();
        for row in &self.rows {
            if let Some(satellite) = row.satellite.as_deref() {
                if last.is_some_and(|l| l != satellite) {
                    out.push(row.at);
                }
                last = Some(satellite);
            }
        }
        out
    }
}

/// The sources `eval --truth` scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TruthSource {
    /// SGP4 and the fitted Starlink policy.
    Orbital,
    /// The last 120 s of the log, repeated.
    Mirror,
    /// Every slot boundary, certain.
    SlotGrid,
    /// Every slot boundary at the learned switch rate.
    Calibrated,
}

impl TruthSource {
    /// All four, in table order.
    pub const ALL: [TruthSource; 4] = [
        TruthSource::Orbital,
        TruthSource::Mirror,
        TruthSource::SlotGrid,
        TruthSource::Calibrated,
    ];

    /// The name in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Orbital => "orbital",
            Self::Mirror => "mirror",
            Self::SlotGrid => "slot grid",
            Self::Calibrated => "calibrated",
        }
    }
}

impl fmt::Display for TruthSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What `eval --truth` needs besides the log.
#[derive(Debug, Clone)]
pub struct TruthEvalConfig {
    /// Where the dish was.
    pub observer: Observer,
    /// The catalogue of the log's day, for the orbital source.
    pub catalogue: Arc<Catalogue>,
    /// The policy the orbital source assumes.
    pub policy: ServingPolicy,
    /// Time from the log's first row to the first window (default 120 s: the mirror's history).
    pub warmup: Duration,
    /// Time between window starts (default 120 s: windows follow each other).
    pub spacing: Duration,
    /// The calibrated source's prior rate ([`POOLED_SWITCH_RATE`]).
    pub prior_rate: f64,
    /// The calibrated source's prior weight in boundaries ([`DEFAULT_PRIOR_WEIGHT`]).
    pub prior_weight: f64,
    /// The monotonic instant standing for the log's first row (only differences are used; a
    /// parameter so that the library reads no clock).
    pub anchor: Instant,
}

impl TruthEvalConfig {
    /// The defaults for a site and a catalogue.
    pub fn new(observer: Observer, catalogue: Arc<Catalogue>, anchor: Instant) -> Self {
        Self {
            observer,
            catalogue,
            policy: ServingPolicy::default(),
            warmup: HORIZON,
            spacing: HORIZON,
            prior_rate: POOLED_SWITCH_RATE,
            prior_weight: DEFAULT_PRIOR_WEIGHT,
            anchor,
        }
    }
}

/// One source's figures over a log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TruthRowReport {
    /// The source.
    pub source: TruthSource,
    /// Per-second F1 within +-1 s.
    pub f1: f64,
    /// TP / (TP + FP).
    pub precision: f64,
    /// TP / (TP + FN).
    pub recall: f64,
    /// Mean |predicted count - true count| per window.
    pub mae_handovers_per_window: f64,
    /// Mean predicted count per window.
    pub mean_predicted_handovers: f64,
    /// Windows without a forecast (scored as an empty forecast).
    pub unavailable: usize,
}

/// One window: the true count, the boundaries, each source's count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TruthWindow {
    /// The decision instant.
    pub start: DateTime<Utc>,
    /// True handovers in the window.
    pub truth: usize,
    /// Slot boundaries in the window.
    pub boundaries: usize,
    /// The binomial floor of this window.
    pub floor: f64,
    /// Predicted counts in [`TruthSource::ALL`] order.
    pub predicted: [usize; 4],
    /// The calibrated source's switch probability at the window's start.
    pub calibrated_probability: f64,
}

/// The result of `eval --truth`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TruthReport {
    /// The log.
    pub file: String,
    /// Site latitude, degrees.
    pub lat_deg: f64,
    /// Site longitude, degrees.
    pub lon_deg: f64,
    /// The log's first and last rows.
    pub from: DateTime<Utc>,
    /// See `from`.
    pub to: DateTime<Utc>,
    /// Handovers in the log.
    pub handovers: usize,
    /// Slot boundaries the log covers.
    pub boundaries: usize,
    /// Boundaries with a handover within +-1 s.
    pub switching_boundaries: usize,
    /// Handovers more than 1 s from every boundary.
    pub off_boundary_handovers: usize,
    /// switching_boundaries / boundaries.
    pub switch_rate: f64,
    /// Windows scored.
    pub windows: usize,
    /// The binomial floor: mean over windows of the best constant's expected absolute error.
    pub floor_mae: f64,
    /// One row per source.
    pub rows: Vec<TruthRowReport>,
    /// Every window.
    pub series: Vec<TruthWindow>,
}

impl TruthReport {
    /// The row of `source`.
    pub fn row(&self, source: TruthSource) -> Option<&TruthRowReport> {
        self.rows.iter().find(|r| r.source == source)
    }

    /// The one-line table of the shape, with a header: F1 / MAE per source, and the
    /// floor.
    pub fn summary_table(reports: &[TruthReport]) -> String {
        let mut s = String::from("| site |");
        for source in TruthSource::ALL {
            let _ = write!(s, " {source} F1 / MAE |");
        }
        s.push_str(" count noise floor |\n|---|");
        for _ in TruthSource::ALL {
            s.push_str("---|");
        }
        s.push_str("---|\n");
        for report in reports {
            let _ = write!(s, "| {} |", report.file);
            for source in TruthSource::ALL {
                match report.row(source) {
                    Some(r) => {
                        let _ = write!(s, " {:.2} / {:.2} |", r.f1, r.mae_handovers_per_window);
                    }
                    None => s.push_str(" - |"),
                }
            }
            let _ = writeln!(s, " {:.2} |", report.floor_mae);
        }
        s
    }

    /// The text report: what the log holds, then the per-source table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{}: {} to {} at {:.2}, {:.2}; {} handovers, {} of {} slot boundaries switched \
             (rate {:.3}), {} handovers off the grid; {} windows of 120 s",
            self.file,
            self.from.format("%Y-%m-%dT%H:%M:%SZ"),
            self.to.format("%Y-%m-%dT%H:%M:%SZ"),
            self.lat_deg,
            self.lon_deg,
            self.handovers,
            self.switching_boundaries,
            self.boundaries,
            self.switch_rate,
            self.off_boundary_handovers,
            self.windows
        );
        let _ = writeln!(
            s,
            "{:<11} {:>6} {:>9} {:>7} {:>9} {:>15} {:>11}",
            "source", "F1", "precision", "recall", "count MAE", "mean predicted", "unavailable"
        );
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{:<11} {:>6.3} {:>9.3} {:>7.3} {:>9.3} {:>15.2} {:>11}",
                r.source.as_str(),
                r.f1,
                r.precision,
                r.recall,
                r.mae_handovers_per_window,
                r.mean_predicted_handovers,
                r.unavailable
            );
        }
        let _ = writeln!(
            s,
            "binomial floor (best constant count at rate {:.3}): MAE {:.3}; mean true count {:.2}",
            self.switch_rate,
            self.floor_mae,
            ratio_or_zero(
                self.series.iter().map(|w| w.truth).sum::<usize>(),
                self.series.len()
            )
        );
        s
    }
}

/// The smallest expected absolute error of a constant under `Binomial(n, p)`: `E|X - m|` at a
/// median `m`.
pub fn binomial_floor(n: usize, p: f64) -> f64 {
    let mut pmf = vec![0.0f64; n + 1];
    // Built by the recurrence P(k+1) = P(k) (n-k)/(k+1) p/(1-p), from P(0) = (1-p)^n; at p = 1
    // all mass is at n.
    if p >= 1.0 {
        pmf[n] = 1.0;
    } else {
        pmf[0] = (1.0 - p).powi(n as i32);
        for k in 0..n {
            pmf[k + 1] = pmf[k] * (n - k) as f64 / (k + 1) as f64 * p / (1.0 - p);
        }
    }
    (0..=n)
        .map(|c| {
            pmf.iter()
                .enumerate()
                .map(|(k, q)| q * (k as f64 - c as f64).abs())
                .sum::<f64>()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The slot boundaries in `(from, to]`.
fn boundaries_between(from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    let mut out = Vec::new();
    let mut b = next_slot_boundary(from);
    while b <= to {
        out.push(b);
        b += ChronoDuration::seconds(SLOT_LENGTH_S);
    }
    out
}

#[derive(Default, Clone, Copy)]
struct Tally {
    tp: usize,
    fp: usize,
    fn_: usize,
    abs_error: usize,
    predicted: usize,
    unavailable: usize,
}

/// Scores every source against `log` (see the module documentation).
pub fn evaluate_truth(log: &TruthLog, config: &TruthEvalConfig) -> Result<TruthReport, EvalError> {
    if config.spacing < Duration::from_secs(1) {
        return Err(EvalError::Config(format!(
            "windows must start at least 1 s apart, got {:?}",
            config.spacing
        )));
    }
    let start = log.start();
    let anchor = config.anchor;
    let tolerance = ChronoDuration::seconds(TOLERANCE_S);
    let to_chrono = |d: Duration| ChronoDuration::from_std(d).unwrap_or(ChronoDuration::MAX);
    let instant_of = |utc: DateTime<Utc>| -> Result<Instant, EvalError> {
        (utc - start)
            .to_std()
            .ok()
            .and_then(|d| anchor.checked_add(d))
            .ok_or_else(|| EvalError::Config(format!("{utc} cannot be expressed as an Instant")))
    };
    let handovers = log.handovers();
    // Every boundary the log covers, and whether a handover lies within +-1 s of it.
    let boundaries = boundaries_between(start, log.end());
    let switched: Vec<bool> = boundaries
        .iter()
        .map(|&b| handovers.iter().any(|&h| (h - b).abs() <= tolerance))
        .collect();
    let switching = switched.iter().filter(|&&s| s).count();
    let off_grid = handovers
        .iter()
        .filter(|&&h| !boundaries.iter().any(|&b| (h - b).abs() <= tolerance))
        .count();
    let rate = ratio_or_zero(switching, boundaries.len());

    let mut orbital = Orbital::new(
        config.catalogue.clone(),
        config.observer,
        config.policy,
        anchor,
        start,
    );
    let first_t0 = start + to_chrono(config.warmup);
    let phase = (next_slot_boundary(first_t0) - first_t0)
        .to_std()
        .unwrap_or(Duration::from_secs(15));
    let mut mirror = Mirror::new(anchor).with_default_phase(phase);
    let mut grid = Calibrated::slot_grid(anchor, start)
        .with_prior(1.0, 1.0)
        .map_err(|e| EvalError::Config(e.to_string()))?;
    let mut calibrated = Calibrated::slot_grid(anchor, start)
        .with_prior(config.prior_rate, config.prior_weight)
        .map_err(|e| EvalError::Config(e.to_string()))?;

    let mut tallies = [Tally::default(); 4];
    let mut series = Vec::new();
    let mut next_handover = 0;
    let mut next_boundary = 0;
    let mut t0 = first_t0;
    while t0 + to_chrono(HORIZON) <= log.end() {
        let now = instant_of(t0)?;
        // What the log has shown up to t0: handovers, and boundaries whose +-1 s has passed.
        while next_handover < handovers.len() && handovers[next_handover] <= t0 {
            mirror.observe(instant_of(handovers[next_handover])?);
            next_handover += 1;
        }
        while next_boundary < boundaries.len() && boundaries[next_boundary] + tolerance <= t0 {
            calibrated.observe(
                instant_of(boundaries[next_boundary])?,
                switched[next_boundary],
            );
            next_boundary += 1;
        }
        let end = t0 + to_chrono(HORIZON);
        let truth: Vec<DateTime<Utc>> = handovers
            .iter()
            .copied()
            .filter(|&h| h > t0 && h <= end)
            .collect();
        let n = boundaries_between(t0, end).len();
        let floor = binomial_floor(n, rate);
        let mut predicted = [0usize; 4];
        for (i, source) in TruthSource::ALL.into_iter().enumerate() {
            let result = match source {
                TruthSource::Orbital => orbital.forecast(now),
                TruthSource::Mirror => mirror.forecast(now),
                TruthSource::SlotGrid => grid.forecast(now),
                TruthSource::Calibrated => calibrated.forecast(now),
            };
            let tally = &mut tallies[i];
            let forecast = match result {
                Ok(f) => f,
                Err(_) => {
                    tally.unavailable += 1;
                    Forecast::none(now)
                }
            };
            let instants: Vec<DateTime<Utc>> = (0..HORIZON_STEPS)
                .filter(|&k| forecast.steps().is_handover(k))
                .map(|k| t0 + ChronoDuration::seconds(k as i64 + 1))
                .collect();
            let score = score_handovers(&instants, &truth, tolerance);
            tally.tp += score.true_positives;
            tally.fp += score.false_positives;
            tally.fn_ += score.false_negatives;
            let count = forecast.median_count();
            tally.abs_error += count.abs_diff(truth.len());
            tally.predicted += count;
            predicted[i] = count;
        }
        series.push(TruthWindow {
            start: t0,
            truth: truth.len(),
            boundaries: n,
            floor,
            predicted,
            calibrated_probability: calibrated.rate().estimate(),
        });
        t0 += to_chrono(config.spacing);
    }
    if series.is_empty() {
        return Err(EvalError::Config(format!(
            "{} spans {} s: too short for a {} s warm-up and one 120-s window",
            log.origin(),
            (log.end() - start).num_seconds(),
            config.warmup.as_secs()
        )));
    }
    let windows = series.len();
    let rows = TruthSource::ALL
        .into_iter()
        .zip(tallies)
        .map(|(source, t)| {
            let score = Score {
                true_positives: t.tp,
                false_positives: t.fp,
                false_negatives: t.fn_,
            };
            TruthRowReport {
                source,
                f1: score.f1(),
                precision: score.precision(),
                recall: score.recall(),
                mae_handovers_per_window: ratio_or_zero(t.abs_error, windows),
                mean_predicted_handovers: ratio_or_zero(t.predicted, windows),
                unavailable: t.unavailable,
            }
        })
        .collect();
    let floor_mae = series.iter().map(|w| w.floor).sum::<f64>() / windows as f64;
    Ok(TruthReport {
        file: log.origin().to_owned(),
        lat_deg: config.observer.latitude_deg(),
        lon_deg: config.observer.longitude_deg(),
        from: start,
        to: log.end(),
        handovers: handovers.len(),
        boundaries: boundaries.len(),
        switching_boundaries: switching,
        off_boundary_handovers: off_grid,
        switch_rate: rate,
        windows,
        floor_mae,
        rows,
        series,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_read_in_the_formats_logs_use() {
        let t = DateTime::parse_from_rfc3339("2024-07-16T12:00:05Z")
            .unwrap()
            .with_timezone(&Utc);
        for s in [
            "2024-07-16T12:00:05Z",
            "2024-07-16T12:00:05+00:00",
            "2024-07-16T14:00:05+02:00",
            "2024-07-16 12:00:05",
            "2024-07-16 12:00:05+00:00",
            "2024-07-16T12:00:05",
            "2024-07-16T12:00:05.000",
            "1721131205",
        ] {
            assert_eq!(parse_timestamp(s), Ok(t), "{s}");
        }
        assert!(
            parse_timestamp("16/07/2024")
                .unwrap_err()
                .contains("16/07/2024")
        );
    }

    #[test]
    fn a_bad_row_is_named_by_line_and_column() {
        let text =
            "Timestamp,Connected_Satellite\n2024-07-16 12:00:05,STARLINK-1\nyesterday,STARLINK-2\n";
        let err = TruthLog::parse(text, "t.csv").unwrap_err();
        assert!(
            matches!(&err, TruthLogError::Row { line: 3, column, .. } if column == "Timestamp"),
            "{err}"
        );
        assert!(err.to_string().contains("t.csv, line 3, column Timestamp"));
        let err = TruthLog::parse("Time,Connected_Satellite\n", "t.csv").unwrap_err();
        assert!(err.to_string().contains("no Timestamp column"), "{err}");
        let err = TruthLog::parse(
            "Timestamp,Connected_Satellite\n2024-07-16 12:00:06,A\n2024-07-16 12:00:05,B\n",
            "t.csv",
        )
        .unwrap_err();
        assert!(err.to_string().contains("time order"), "{err}");
    }

    #[test]
    fn handovers_look_past_gaps_and_quoted_fields_are_read() {
        let text = "\"Timestamp\",Elevation,Connected_Satellite\n\
                    2024-07-16 12:00:10,50,\"STARLINK-1\"\n\
                    2024-07-16 12:00:11,50,\n\
                    2024-07-16 12:00:12,50,STARLINK-1\n\
                    2024-07-16 12:00:13,50,None\n\
                    2024-07-16 12:00:27,50,STARLINK-2\n";
        let log = TruthLog::parse(text, "t.csv").unwrap();
        assert_eq!(log.rows().len(), 5);
        assert_eq!(
            log.handovers(),
            vec![parse_timestamp("2024-07-16 12:00:27").unwrap()]
        );
    }

    #[test]
    fn the_binomial_floor_is_the_error_at_the_median() {
        // Binomial(1, 0.5): any c in [0, 1] gives 0.5.
        assert!((binomial_floor(1, 0.5) - 0.5).abs() < 1e-12);
        assert_eq!(binomial_floor(8, 1.0), 0.0);
        assert_eq!(binomial_floor(8, 0.0), 0.0);
        // Binomial(2, 0.5) at c = 1: E|X - 1| = 0.25 + 0.25.
        assert!((binomial_floor(2, 0.5) - 0.5).abs() < 1e-12);
    }
}

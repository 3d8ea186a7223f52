//! Starlink-Emulator's `lagos.csv`: Starlink via inter-satellite links to the Lagos PoP, 90.7
//! minutes stitched from 15-s slot-aligned chunks. Headerless CSV, one row per 100 ms:
//! `uplink_Mbps, downlink_Mbps, uplink_delay_ms, downlink_delay_ms, uplink_loss, downlink_loss,
//! virtual_time_ms` (the shared data README; the emulator's `README` names the columns).

use super::{At, FieldProblem, TraceError, read_text};
use crate::link::{DelaySeries, Interpolation, LossSeries, RateSeries, SeriesEnd};
use std::path::Path;
use std::time::Duration;

/// Milliseconds between rows of `lagos.csv`: 100 (the shared data README; every one of the
/// 54 450 rows of the real file is 100 ms after the previous one).
pub const LAGOS_ROW_MS: u64 = 100;

/// The column names, in order.
const COLUMNS: [&str; 7] = [
    "uplink_Mbps",
    "downlink_Mbps",
    "uplink_delay_ms",
    "downlink_delay_ms",
    "uplink_loss",
    "downlink_loss",
    "virtual_time_ms",
];

/// The layout, for messages.
const LAYOUT: &str = "uplink_Mbps, downlink_Mbps, uplink_delay_ms, downlink_delay_ms, uplink_loss, downlink_loss, virtual_time_ms";

/// A direction of the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Dish to ground.
    Uplink,
    /// Ground to dish.
    Downlink,
}

/// One 100-ms row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LagosRow {
    /// Uplink capacity, Mbit/s.
    pub uplink_mbps: f64,
    /// Downlink capacity, Mbit/s.
    pub downlink_mbps: f64,
    /// Uplink one-way delay, ms.
    pub uplink_delay_ms: f64,
    /// Downlink one-way delay, ms.
    pub downlink_delay_ms: f64,
    /// Uplink loss probability, [0, 1].
    pub uplink_loss: f64,
    /// Downlink loss probability, [0, 1].
    pub downlink_loss: f64,
    /// The row's instant, ms of virtual time.
    pub virtual_time_ms: u64,
}

impl LagosRow {
    /// Capacity in `direction`, Mbit/s.
    pub fn mbps(&self, direction: Direction) -> f64 {
        match direction {
            Direction::Uplink => self.uplink_mbps,
            Direction::Downlink => self.downlink_mbps,
        }
    }

    /// One-way delay in `direction`, ms.
    pub fn delay_ms(&self, direction: Direction) -> f64 {
        match direction {
            Direction::Uplink => self.uplink_delay_ms,
            Direction::Downlink => self.downlink_delay_ms,
        }
    }

    /// Loss probability in `direction`.
    pub fn loss(&self, direction: Direction) -> f64 {
        match direction {
            Direction::Uplink => self.uplink_loss,
            Direction::Downlink => self.downlink_loss,
        }
    }
}

/// A loaded `lagos.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct LagosTrace {
    origin: String,
    rows: Vec<LagosRow>,
}

impl LagosTrace {
    /// Reads `lagos.csv`.
    pub fn load(path: impl AsRef<Path>) -> Result<LagosTrace, TraceError> {
        let path = path.as_ref();
        let text = read_text(path)?;
        LagosTrace::parse(&text, &path.display().to_string())
    }

    /// Parses `lagos.csv` text. Every row needs 7 comma-separated fields: finite non-negative
    /// rates and delays, losses in [0, 1], and a whole-millisecond virtual time exactly
    /// [`LAGOS_ROW_MS`] after the previous row's.
    pub fn parse(text: &str, origin: &str) -> Result<LagosTrace, TraceError> {
        let mut rows: Vec<LagosRow> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let at = At {
                origin,
                line: i + 1,
            };
            let fields: Vec<&str> = line.split(',').collect();
            if fields.len() != COLUMNS.len() {
                return Err(TraceError::FieldCount {
                    origin: origin.to_string(),
                    line: i + 1,
                    expected: COLUMNS.len(),
                    found: fields.len(),
                    layout: LAYOUT,
                });
            }
            let mut v = [0.0; 6];
            for (c, slot) in v.iter_mut().enumerate() {
                *slot = at.non_negative(fields[c], c + 1, COLUMNS[c])?;
                if c >= 4 && *slot > 1.0 {
                    return Err(at.field(
                        c + 1,
                        COLUMNS[c],
                        FieldProblem::OutOfRange {
                            value: fields[c].trim().to_string(),
                            why: "a loss probability must be in [0, 1]",
                        },
                    ));
                }
            }
            let time = at.unsigned(fields[6], 7, COLUMNS[6], "a whole number of milliseconds")?;
            if let Some(prev) = rows.last() {
                let expected = prev.virtual_time_ms + LAGOS_ROW_MS;
                if time != expected {
                    return Err(at.field(
                        7,
                        COLUMNS[6],
                        FieldProblem::Unexpected {
                            found: time.to_string(),
                            expected: format!(
                                "{expected} ({LAGOS_ROW_MS} ms after the previous row)"
                            ),
                        },
                    ));
                }
            }
            rows.push(LagosRow {
                uplink_mbps: v[0],
                downlink_mbps: v[1],
                uplink_delay_ms: v[2],
                downlink_delay_ms: v[3],
                uplink_loss: v[4],
                downlink_loss: v[5],
                virtual_time_ms: time,
            });
        }
        if rows.is_empty() {
            return Err(TraceError::Empty {
                origin: origin.to_string(),
            });
        }
        Ok(LagosTrace {
            origin: origin.to_string(),
            rows,
        })
    }

    /// Where it came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The rows.
    pub fn rows(&self) -> &[LagosRow] {
        &self.rows
    }

    /// Span covered: rows x 100 ms.
    pub fn duration(&self) -> Duration {
        Duration::from_millis(self.rows.len() as u64 * LAGOS_ROW_MS)
    }

    /// The same trace replayed from `offset` into it: the rows from there to the end, then
    /// the rows before it (the series loop, so a call that passes the end goes on from the
    /// first row, as it does without an offset). `offset` is taken modulo the trace's length
    /// and must be a whole number of rows.
    pub fn starting_at(&self, offset: Duration) -> Result<LagosTrace, TraceError> {
        let ms = offset.as_millis();
        if !ms.is_multiple_of(u128::from(LAGOS_ROW_MS)) {
            return Err(TraceError::Trace {
                origin: self.origin.clone(),
                problem: format!(
                    "an offset of {ms} ms is not a whole number of the trace's {LAGOS_ROW_MS}-ms rows"
                ),
            });
        }
        let first = ((ms / u128::from(LAGOS_ROW_MS)) % self.rows.len() as u128) as usize;
        let mut rows = Vec::with_capacity(self.rows.len());
        rows.extend_from_slice(&self.rows[first..]);
        rows.extend_from_slice(&self.rows[..first]);
        Ok(LagosTrace {
            origin: self.origin.clone(),
            rows,
        })
    }

    fn step() -> Duration {
        Duration::from_millis(LAGOS_ROW_MS)
    }

    /// The capacity in `direction` as a looped 100-ms rate series (Mbit/s rounded to bit/s).
    pub fn capacity(&self, direction: Direction) -> RateSeries {
        let rates = self
            .rows
            .iter()
            .map(|r| (r.mbps(direction) * 1e6).round() as u64)
            .collect();
        RateSeries::from_valid(Self::step(), rates, SeriesEnd::Loop)
    }

    /// The one-way delay in `direction` as a looped, piecewise-constant 100-ms series.
    pub fn delay(&self, direction: Direction) -> DelaySeries {
        let nanos = self
            .rows
            .iter()
            .map(|r| (r.delay_ms(direction) * 1e6).round() as u64)
            .collect();
        DelaySeries::from_valid(Self::step(), nanos, SeriesEnd::Loop, Interpolation::Step)
    }

    /// The loss probability in `direction` as a looped 100-ms series.
    pub fn loss(&self, direction: Direction) -> LossSeries {
        let p = self.rows.iter().map(|r| r.loss(direction)).collect();
        LossSeries::from_valid(Self::step(), p, SeriesEnd::Loop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Time;

    const TWO_ROWS: &str = "26.5,48.2,83.9,88.4,0.0,0.0,0\n3.2,126.6,90.3,171.1,0.5,0.0,100\n";

    #[test]
    fn rows_become_looped_hundred_millisecond_series() {
        let t = LagosTrace::parse(TWO_ROWS, "l").unwrap();
        assert_eq!(t.rows().len(), 2);
        assert_eq!(t.duration(), Duration::from_millis(200));
        let cap = t.capacity(Direction::Downlink);
        assert_eq!(cap.at(Time::from_millis(150)), 126_600_000);
        assert_eq!(cap.at(Time::from_millis(250)), 48_200_000);
        assert_eq!(
            t.delay(Direction::Uplink).at(Time::from_millis(100)),
            Duration::from_micros(90_300)
        );
        assert_eq!(t.loss(Direction::Uplink).at(Time::from_millis(199)), 0.5);
    }

    #[test]
    fn an_offset_rotates_the_rows_and_loops_back_to_the_first() {
        let three = "1,10,0,0,0,0,0\n2,20,0,0,0,0,100\n3,30,0,0,0.5,0,200\n";
        let t = LagosTrace::parse(three, "l").unwrap();
        let moved = t.starting_at(Duration::from_millis(200)).unwrap();
        let up = moved.capacity(Direction::Uplink);
        assert_eq!(up.at(Time::from_millis(0)), 3_000_000);
        assert_eq!(up.at(Time::from_millis(100)), 1_000_000);
        assert_eq!(up.at(Time::from_millis(250)), 2_000_000);
        assert_eq!(moved.loss(Direction::Uplink).at(Time::from_millis(50)), 0.5);
        assert_eq!(moved.duration(), t.duration());
        let wrapped = t.starting_at(Duration::from_millis(500)).unwrap();
        assert_eq!(
            wrapped.capacity(Direction::Uplink).at(Time::ZERO),
            3_000_000
        );
        assert_eq!(t.starting_at(Duration::ZERO).unwrap(), t);
        let err = t.starting_at(Duration::from_millis(150)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "l: an offset of 150 ms is not a whole number of the trace's 100-ms rows"
        );
    }

    #[test]
    fn bad_rows_are_refused_naming_line_and_column() {
        let err = LagosTrace::parse("1,2,3,4,0,0\n", "l").unwrap_err();
        assert!(
            err.to_string().starts_with("l:1: expected 7 fields"),
            "{err}"
        );
        let err = LagosTrace::parse("1,2,3,4,0,0,0\n1,2,x,4,0,0,100\n", "l").unwrap_err();
        assert_eq!(
            err.to_string(),
            "l:2: column 3 (uplink_delay_ms): \"x\" is not a finite number"
        );
        let err = LagosTrace::parse("1,2,3,4,0,1.5,0\n", "l").unwrap_err();
        assert_eq!(
            err.to_string(),
            "l:1: column 6 (downlink_loss): 1.5 is out of range: a loss probability must be in [0, 1]"
        );
        let err = LagosTrace::parse("1,2,3,4,0,0,0\n1,2,3,4,0,0,300\n", "l").unwrap_err();
        assert_eq!(
            err.to_string(),
            "l:2: column 7 (virtual_time_ms): 300, expected 100 (100 ms after the previous row)"
        );
    }
}

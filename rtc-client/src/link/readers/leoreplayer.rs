//! LeoReplayer's one-way delay file: one delay per line, in milliseconds, one line per 10-ms
//! slot, replayed in a loop (LeoReplayer's `delay_example.txt`; the LeoCC copy in
//! `../shared/data/starlink/leocc/delay_example_10ms.txt` holds integers from 7 to 68 ms, with
//! spikes at every 15-s slot boundary).

use super::{At, TraceError, read_text};
use crate::link::{DelaySeries, Interpolation, SeriesEnd};
use std::path::Path;
use std::time::Duration;

/// LeoReplayer's delay slot: 10 ms per line (the LeoReplayer README and its replayer's
/// `delay_example.txt`, whose 11 999 lines cover the 120-s example).
pub const LEOREPLAYER_DELAY_STEP: Duration = Duration::from_millis(10);

/// Reads a LeoReplayer delay file: 10-ms steps, piecewise constant, looped.
pub fn read_leoreplayer_delay(path: impl AsRef<Path>) -> Result<DelaySeries, TraceError> {
    read_delay_ms_series(path, LEOREPLAYER_DELAY_STEP)
}

/// Parses LeoReplayer delay text (see [`read_leoreplayer_delay`]).
pub fn parse_leoreplayer_delay(text: &str, origin: &str) -> Result<DelaySeries, TraceError> {
    parse_delay_ms_series(text, origin, LEOREPLAYER_DELAY_STEP)
}

/// Reads a delay series with one value in milliseconds (a non-negative number, decimals
/// allowed) per line and `step` between lines: piecewise constant, looped.
pub fn read_delay_ms_series(
    path: impl AsRef<Path>,
    step: Duration,
) -> Result<DelaySeries, TraceError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_delay_ms_series(&text, &path.display().to_string(), step)
}

/// Parses a delay series (see [`read_delay_ms_series`]).
pub fn parse_delay_ms_series(
    text: &str,
    origin: &str,
    step: Duration,
) -> Result<DelaySeries, TraceError> {
    let mut nanos = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = At {
            origin,
            line: i + 1,
        };
        let ms = at.non_negative(line, 1, "delay_ms")?;
        nanos.push((ms * 1e6).round() as u64);
    }
    if nanos.is_empty() {
        return Err(TraceError::Empty {
            origin: origin.to_string(),
        });
    }
    DelaySeries::from_nanos(step, nanos, SeriesEnd::Loop, Interpolation::Step).map_err(|e| {
        TraceError::Trace {
            origin: origin.to_string(),
            problem: e.to_string(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Time;

    #[test]
    fn each_line_is_one_ten_millisecond_slot() {
        let s = parse_leoreplayer_delay("12\n16\n14.5\n", "d").unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.at(Time::from_millis(9)), Duration::from_millis(12));
        assert_eq!(s.at(Time::from_millis(10)), Duration::from_millis(16));
        assert_eq!(s.at(Time::from_millis(25)), Duration::from_micros(14_500));
        assert_eq!(s.at(Time::from_millis(30)), Duration::from_millis(12));
    }

    #[test]
    fn negative_or_non_numeric_delays_are_refused_with_their_line() {
        let err = parse_leoreplayer_delay("12\n-3\n", "d").unwrap_err();
        assert_eq!(
            err.to_string(),
            "d:2: column 1 (delay_ms): -3 is out of range: must be >= 0"
        );
        let err = parse_leoreplayer_delay("12\n13\nx\n", "d").unwrap_err();
        assert_eq!(
            err.to_string(),
            "d:3: column 1 (delay_ms): \"x\" is not a finite number"
        );
        assert!(matches!(
            parse_leoreplayer_delay("", "d"),
            Err(TraceError::Empty { .. })
        ));
    }
}

//! Mahimahi packet-delivery traces: one line per 1500-byte delivery opportunity, the value the
//! opportunity's instant in whole milliseconds from the start; non-decreasing; repeated values
//! are several opportunities in that millisecond; the trace loops with its last timestamp as
//! period (Mahimahi's `mm-link`).

use super::{At, FieldProblem, TraceError, read_text};
use crate::link::MahimahiTrace;
use crate::link::capacity::TraceBuilder;
use std::path::Path;

impl MahimahiTrace {
    /// Reads a Mahimahi trace file.
    pub fn load(path: impl AsRef<Path>) -> Result<MahimahiTrace, TraceError> {
        let path = path.as_ref();
        let text = read_text(path)?;
        MahimahiTrace::parse(&text, &path.display().to_string())
    }

    /// Parses Mahimahi trace text; `origin` names it in errors. Errors: a blank line, a value
    /// that is not a whole number of milliseconds, a timestamp before the previous one, no
    /// lines, a last timestamp of 0.
    pub fn parse(text: &str, origin: &str) -> Result<MahimahiTrace, TraceError> {
        let mut builder = TraceBuilder::default();
        for (i, line) in text.lines().enumerate() {
            let at = At {
                origin,
                line: i + 1,
            };
            let ms = at.unsigned(line, 1, "timestamp_ms", "a whole number of milliseconds")?;
            if !builder.push(ms) {
                return Err(at.field(
                    1,
                    "timestamp_ms",
                    FieldProblem::Decreasing {
                        value: ms.to_string(),
                        previous: builder.last_ms().unwrap_or(0).to_string(),
                    },
                ));
            }
        }
        if builder.last_ms().is_none() {
            return Err(TraceError::Empty {
                origin: origin.to_string(),
            });
        }
        builder.finish(origin).map_err(|problem| TraceError::Trace {
            origin: origin.to_string(),
            problem: problem.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn repeated_lines_are_several_opportunities_in_one_millisecond() {
        let t = MahimahiTrace::parse("1\n1\n5\n", "x").unwrap();
        assert_eq!(t.opportunities(), 3);
        assert_eq!(t.busy_millis(), 2);
        assert_eq!(t.period(), Duration::from_millis(5));
    }

    #[test]
    fn a_decreasing_timestamp_is_refused_with_its_line() {
        let err = MahimahiTrace::parse("1\n3\n2\n", "trace.up").unwrap_err();
        assert_eq!(
            err.to_string(),
            "trace.up:3: column 1 (timestamp_ms): 2 is before the previous line's 3"
        );
    }

    #[test]
    fn non_numeric_blank_and_empty_inputs_are_refused() {
        let err = MahimahiTrace::parse("1\nabc\n", "t").unwrap_err();
        assert_eq!(
            err.to_string(),
            "t:2: column 1 (timestamp_ms): \"abc\" is not a whole number of milliseconds"
        );
        let err = MahimahiTrace::parse("1\n\n2\n", "t").unwrap_err();
        assert_eq!(err.to_string(), "t:2: column 1 (timestamp_ms): empty");
        let err = MahimahiTrace::parse("", "t").unwrap_err();
        assert_eq!(err.to_string(), "t: empty: no data lines");
        let err = MahimahiTrace::parse("0\n0\n", "t").unwrap_err();
        assert!(
            err.to_string().starts_with("t: the last timestamp is 0 ms"),
            "{err}"
        );
    }
}

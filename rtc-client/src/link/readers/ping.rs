//! The mmsys24 ping traces: `unix_ts  icmp_seq  rtt_ms` separated by tabs (any whitespace is
//! accepted), one line per echo request, `rtt_ms = -1` when no reply came
//! (clarkzjw/mmsys24-starlink-livestreaming-data; pings to the Starlink gateway every
//! 0.15-0.22 s for about an hour).

use super::{At, FieldProblem, TraceError, read_text};
use crate::link::{DelaySeries, Interpolation, SeriesEnd};
use std::path::Path;
use std::time::Duration;

/// The layout, for messages.
const LAYOUT: &str = "unix_ts, icmp_seq, rtt_ms";

/// One echo request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PingSample {
    /// When it was sent, Unix seconds.
    pub unix_s: f64,
    /// ICMP sequence number.
    pub icmp_seq: u64,
    /// Round-trip time; `None` when no reply came (`-1` in the file).
    pub rtt: Option<Duration>,
}

/// A loaded ping trace.
#[derive(Debug, Clone, PartialEq)]
pub struct PingTrace {
    origin: String,
    samples: Vec<PingSample>,
}

impl PingTrace {
    /// Reads a ping TSV file.
    pub fn load(path: impl AsRef<Path>) -> Result<PingTrace, TraceError> {
        let path = path.as_ref();
        let text = read_text(path)?;
        PingTrace::parse(&text, &path.display().to_string())
    }

    /// Parses ping TSV text: 3 fields per line; a positive Unix timestamp not before the previous
    /// line's; an unsigned sequence number; an RTT in ms that is >= 0 or exactly -1 (lost).
    pub fn parse(text: &str, origin: &str) -> Result<PingTrace, TraceError> {
        let mut samples: Vec<PingSample> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let at = At {
                origin,
                line: i + 1,
            };
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() != 3 {
                return Err(TraceError::FieldCount {
                    origin: origin.to_string(),
                    line: i + 1,
                    expected: 3,
                    found: fields.len(),
                    layout: LAYOUT,
                });
            }
            let unix_s = at.float(fields[0], 1, "unix_ts")?;
            if unix_s <= 0.0 {
                return Err(at.field(
                    1,
                    "unix_ts",
                    FieldProblem::OutOfRange {
                        value: fields[0].to_string(),
                        why: "a Unix timestamp must be positive",
                    },
                ));
            }
            if let Some(prev) = samples.last()
                && unix_s < prev.unix_s
            {
                return Err(at.field(
                    1,
                    "unix_ts",
                    FieldProblem::Decreasing {
                        value: fields[0].to_string(),
                        previous: prev.unix_s.to_string(),
                    },
                ));
            }
            let icmp_seq = at.unsigned(fields[1], 2, "icmp_seq", "a whole number")?;
            let rtt_ms = at.float(fields[2], 3, "rtt_ms")?;
            let rtt = if rtt_ms == -1.0 {
                None
            } else if rtt_ms >= 0.0 {
                Some(Duration::from_nanos((rtt_ms * 1e6).round() as u64))
            } else {
                return Err(at.field(
                    3,
                    "rtt_ms",
                    FieldProblem::OutOfRange {
                        value: fields[2].to_string(),
                        why: "an RTT must be >= 0, or -1 for a lost echo",
                    },
                ));
            };
            samples.push(PingSample {
                unix_s,
                icmp_seq,
                rtt,
            });
        }
        if samples.is_empty() {
            return Err(TraceError::Empty {
                origin: origin.to_string(),
            });
        }
        Ok(PingTrace {
            origin: origin.to_string(),
            samples,
        })
    }

    /// Where it came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The samples, in file order.
    pub fn samples(&self) -> &[PingSample] {
        &self.samples
    }

    /// Echo requests without a reply.
    pub fn lost(&self) -> usize {
        self.samples.iter().filter(|s| s.rtt.is_none()).count()
    }

    /// Fraction of echo requests without a reply.
    pub fn loss_rate(&self) -> f64 {
        self.lost() as f64 / self.samples.len() as f64
    }

    /// Mean RTT of the replies (`None` when every echo was lost).
    pub fn mean_rtt(&self) -> Option<Duration> {
        let replies: Vec<Duration> = self.samples.iter().filter_map(|s| s.rtt).collect();
        let n = u32::try_from(replies.len()).ok().filter(|&n| n > 0)?;
        Some(replies.iter().sum::<Duration>() / n)
    }

    /// Time from the first to the last request, seconds.
    pub fn span_s(&self) -> f64 {
        match (self.samples.first(), self.samples.last()) {
            (Some(a), Some(b)) => b.unix_s - a.unix_s,
            _ => 0.0,
        }
    }

    /// A per-second one-way delay series: for each whole second from the first request's,
    /// the mean of RTT / 2 over the replies sent in it (a symmetric-path assumption). Seconds
    /// without a reply repeat the previous second (the first replies' value for leading ones).
    /// Piecewise constant, looped; `None` when every echo was lost.
    pub fn one_way_delay_per_second(&self) -> Option<DelaySeries> {
        let first = self.samples.first()?.unix_s.floor();
        let seconds = (self.samples.last()?.unix_s.floor() - first) as usize + 1;
        let mut sums = vec![(0u128, 0u64); seconds];
        for s in &self.samples {
            if let Some(rtt) = s.rtt {
                let i = ((s.unix_s.floor() - first) as usize).min(seconds - 1);
                sums[i].0 += rtt.as_nanos() / 2;
                sums[i].1 += 1;
            }
        }
        let first_value = sums
            .iter()
            .find(|s| s.1 > 0)
            .map(|s| (s.0 / u128::from(s.1)) as u64)?;
        let mut last = first_value;
        let nanos = sums
            .iter()
            .map(|&(sum, n)| {
                if n > 0 {
                    last = (sum / u128::from(n)) as u64;
                }
                last
            })
            .collect();
        Some(DelaySeries::from_valid(
            Duration::from_secs(1),
            nanos,
            SeriesEnd::Loop,
            Interpolation::Step,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Time;

    const LINES: &str =
        "1694478364.1\t1\t97.4\n1694478364.3\t2\t-1\n1694478365.2\t3\t100.0\n1694478367.0\t4\t50\n";

    #[test]
    fn lost_echoes_are_minus_one_and_have_no_rtt() {
        let t = PingTrace::parse(LINES, "p").unwrap();
        assert_eq!(t.samples().len(), 4);
        assert_eq!(t.lost(), 1);
        assert_eq!(t.samples()[1].rtt, None);
        assert_eq!(t.samples()[0].rtt, Some(Duration::from_micros(97_400)));
        assert_eq!(t.loss_rate(), 0.25);
    }

    #[test]
    fn per_second_one_way_delay_is_half_the_mean_rtt_and_fills_gaps() {
        let t = PingTrace::parse(LINES, "p").unwrap();
        let s = t.one_way_delay_per_second().unwrap();
        assert_eq!(s.len(), 4);
        assert_eq!(s.at(Time::from_millis(500)), Duration::from_micros(48_700));
        assert_eq!(s.at(Time::from_millis(1500)), Duration::from_millis(50));
        assert_eq!(s.at(Time::from_millis(2500)), Duration::from_millis(50));
        assert_eq!(s.at(Time::from_millis(3500)), Duration::from_millis(25));
    }

    #[test]
    fn bad_lines_are_refused_naming_line_and_column() {
        let err = PingTrace::parse("1.0\t1\t5\n2.0\t2\n", "p").unwrap_err();
        assert_eq!(
            err.to_string(),
            "p:2: expected 3 fields (unix_ts, icmp_seq, rtt_ms), found 2"
        );
        let err = PingTrace::parse("1.0\t1\t5\n2.0\t2\t-2\n", "p").unwrap_err();
        assert_eq!(
            err.to_string(),
            "p:2: column 3 (rtt_ms): -2 is out of range: an RTT must be >= 0, or -1 for a lost echo"
        );
        let err = PingTrace::parse("2.0\t1\t5\n1.0\t2\t5\n", "p").unwrap_err();
        assert_eq!(
            err.to_string(),
            "p:2: column 1 (unix_ts): 1.0 is before the previous line's 2"
        );
        let err = PingTrace::parse("2.0\tx\t5\n", "p").unwrap_err();
        assert_eq!(
            err.to_string(),
            "p:1: column 2 (icmp_seq): \"x\" is not a whole number"
        );
    }
}

//! The mmsys24 ping traces: `unix_ts  icmp_seq  rtt_ms` separated by tabs (any whitespace is
//! accepted), one line per echo request, `rtt_ms = -1` when no reply came
//! (clarkzjw/mmsys24-starlink-livestreaming-data; pings to the Starlink gateway every
//! 0.15-0.22 s for about an hour).

use super::{At, FieldProblem, TraceError, read_text};
use crate::link::{DelaySeries, Interpolation, LossSeries, SeriesEnd};
use std::path::Path;
use std::time::Duration;

/// The layout, for messages.
const LAYOUT: &str = "unix_ts, icmp_seq, rtt_ms";

/// The row of a replayed ping trace: 100 ms, the row of `lagos.csv` and of the boundary loss
/// profiles, fine enough to place a boundary's loss (the echoes are 0.15-0.27 s apart).
pub const PING_ROW_MS: u64 = 100;

/// The longest span a ping trace may cover to be replayed: 24 h, the longest call (a longer
/// span, or timestamps far apart by mistake, would only allocate rows without echoes).
pub const MAX_REPLAY_SPAN_S: f64 = 86_400.0;

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

/// How a replay turns lost echoes into a loss probability per row ([`PingTrace::replay`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PingLossModel {
    /// The loss level of a row is the share of lost echoes within half this of its middle.
    pub window: Duration,
    /// The level is shaped by where in this period (Starlink's 15-s slot) the trace's losses
    /// fall; `None`: not shaped.
    pub slot: Option<Duration>,
}

/// The bins a slot's loss shape is measured in: 500 ms, two 100-ms rows and about two echoes
/// per slot at mmsys24's spacing, so that a 15-s slot has 30 bins of about 1 200 echoes each
/// over a trace of two and a half hours.
pub const PING_PHASE_BIN_MS: u64 = 500;

/// The weight, in lost echoes, a bin's loss shape gives the trace's whole rate: 2, so that a bin
/// that happened to lose none of its echoes still loses some (a Lagos ISL bin expects 5.6) and
/// one that lost 66 against 5.6 expected keeps almost all of its factor of 12.
const PING_PHASE_PRIOR: f64 = 2.0;

impl PingTrace {
    /// The trace as a link replays it: 100-ms rows ([`PING_ROW_MS`]) from the UTC minute the first
    /// echo was sent in, so that the file's virtual seconds 12, 27, 42 and 57 are Starlink's
    /// reconfiguration instants, as in `lagos.csv` (../shared/data/README.md: the ping traces'
    /// RTT changes most at those seconds of each UTC minute).
    ///
    /// - The one-way delay of a row is half the mean RTT of the replies to echoes sent in it (a
    ///   symmetric path); a row without a reply keeps the previous row's, and the rows before the
    ///   first reply take its.
    /// - The loss probability of a row is a level times a shape. The level is the share of
    ///   echoes without a reply among those sent within `model.window / 2` of the row's middle (0
    ///   where none was sent). The shape is where in the slot the trace loses echoes: per
    ///   [`PING_PHASE_BIN_MS`] bin of the row's offset into `model.slot`, the bin's lost echoes
    ///   plus two over the number its share of the trace's rate expects plus two (a prior of two
    ///   lost echoes, so that a bin that happened to lose none still loses some). An echo stands for one packet, and the mmsys24 traces lose them independently
    ///   but for the slot: after a lost echo the next is lost 3.6-6.6 % of the time against the
    ///   traces' 0.5-2.5 %, two or more echoes on no more often than the rate, while the Lagos
    ///   ISL trace loses 5 % of its echoes 4-5 s after each reconfiguration and 0.1-0.3 %
    ///   elsewhere, and Seattle's rate moves from 0.1 % to 3 % over its first 40 minutes. A long
    ///   window (a minute) keeps the drift and the shape keeps the slot without turning each lost
    ///   echo into a second of heavy loss, as a short window does (and a short window also
    ///   doubles the Lagos trace's rate, because its pinger waits 0.43 s after a lost echo and
    ///   0.25 s after a reply, so the windows around a loss hold fewer echoes).
    ///
    /// Errors when every echo was lost or the trace spans more than [`MAX_REPLAY_SPAN_S`].
    pub fn replay(&self, model: PingLossModel) -> Result<PingReplay, TraceError> {
        let problem = |problem: String| TraceError::Trace {
            origin: self.origin.clone(),
            problem,
        };
        let (Some(first), Some(last)) = (self.samples.first(), self.samples.last()) else {
            return Err(TraceError::Empty {
                origin: self.origin.clone(),
            });
        };
        if last.unix_s - first.unix_s > MAX_REPLAY_SPAN_S {
            return Err(problem(format!(
                "it spans {:.0} s, more than the {MAX_REPLAY_SPAN_S:.0} s a replay may cover",
                last.unix_s - first.unix_s
            )));
        }
        let Some(first_reply) = self.samples.iter().find_map(|s| s.rtt) else {
            return Err(problem(
                "every echo was lost: there is no delay to replay".into(),
            ));
        };
        let origin_s = (first.unix_s / 60.0).floor() * 60.0;
        let row_s = PING_ROW_MS as f64 / 1000.0;
        let row_of = |unix_s: f64| ((unix_s - origin_s) / row_s).floor() as usize;
        let rows = row_of(last.unix_s) + 1;

        let mut sums = vec![(0u128, 0u64); rows];
        for s in &self.samples {
            if let Some(rtt) = s.rtt {
                let row = &mut sums[row_of(s.unix_s).min(rows - 1)];
                row.0 += rtt.as_nanos() / 2;
                row.1 += 1;
            }
        }
        let mut held = (first_reply.as_nanos() / 2) as u64;
        let delay_ns = sums
            .iter()
            .map(|&(sum, n)| {
                if n > 0 {
                    held = (sum / u128::from(n)) as u64;
                }
                held
            })
            .collect();

        let shape = model
            .slot
            .filter(|slot| slot.as_millis() >= u128::from(PING_PHASE_BIN_MS))
            .map(|slot| self.slot_shape(origin_s, slot));
        let half = model.window.as_secs_f64() / 2.0;
        let (mut lo, mut hi) = (0usize, 0usize);
        let (mut sent, mut lost) = (0u32, 0u32);
        let loss = (0..rows)
            .map(|i| {
                let middle = origin_s + (i as f64 + 0.5) * row_s;
                while hi < self.samples.len() && self.samples[hi].unix_s <= middle + half {
                    sent += 1;
                    lost += u32::from(self.samples[hi].rtt.is_none());
                    hi += 1;
                }
                while lo < hi && self.samples[lo].unix_s < middle - half {
                    sent -= 1;
                    lost -= u32::from(self.samples[lo].rtt.is_none());
                    lo += 1;
                }
                if sent == 0 {
                    return 0.0;
                }
                let level = f64::from(lost) / f64::from(sent);
                let factor = shape.as_ref().map_or(1.0, |(bins, slot_s)| {
                    let phase = (i as f64 + 0.5) * row_s % slot_s;
                    let bin = (phase * 1000.0 / PING_PHASE_BIN_MS as f64) as usize;
                    bins[bin.min(bins.len() - 1)]
                });
                (level * factor).min(1.0)
            })
            .collect();
        Ok(PingReplay {
            origin: self.origin.clone(),
            delay_ns,
            loss,
        })
    }

    /// The loss factor of each [`PING_PHASE_BIN_MS`] bin of the offset into `slot` from
    /// `origin_s`, and the slot in seconds ([`PingTrace::replay`]).
    fn slot_shape(&self, origin_s: f64, slot: Duration) -> (Vec<f64>, f64) {
        let slot_s = slot.as_secs_f64();
        let bins = (slot.as_millis() / u128::from(PING_PHASE_BIN_MS)).max(1) as usize;
        let mut counts = vec![(0u32, 0u32); bins];
        for s in &self.samples {
            let phase = (s.unix_s - origin_s) % slot_s;
            let bin = ((phase * 1000.0 / PING_PHASE_BIN_MS as f64) as usize).min(bins - 1);
            counts[bin].0 += 1;
            counts[bin].1 += u32::from(s.rtt.is_none());
        }
        let rate = self.loss_rate();
        let factors = counts
            .iter()
            .map(|&(sent, lost)| {
                (f64::from(lost) + PING_PHASE_PRIOR) / (f64::from(sent) * rate + PING_PHASE_PRIOR)
            })
            .collect();
        (factors, slot_s)
    }
}

/// A ping trace on the replay's 100-ms rows ([`PingTrace::replay`]): one-way delay and loss.
#[derive(Debug, Clone, PartialEq)]
pub struct PingReplay {
    origin: String,
    delay_ns: Vec<u64>,
    loss: Vec<f64>,
}

impl PingReplay {
    fn step() -> Duration {
        Duration::from_millis(PING_ROW_MS)
    }

    /// How long it lasts before it loops.
    pub fn duration(&self) -> Duration {
        Duration::from_millis(self.delay_ns.len() as u64 * PING_ROW_MS)
    }

    /// The same replay from `offset` into it, looped (as [`super::LagosTrace::starting_at`]);
    /// `offset` is taken modulo the length and must be a whole number of rows.
    pub fn starting_at(&self, offset: Duration) -> Result<PingReplay, TraceError> {
        let ms = offset.as_millis();
        if !ms.is_multiple_of(u128::from(PING_ROW_MS)) {
            return Err(TraceError::Trace {
                origin: self.origin.clone(),
                problem: format!(
                    "an offset of {ms} ms is not a whole number of the replay's {PING_ROW_MS}-ms rows"
                ),
            });
        }
        let first = ((ms / u128::from(PING_ROW_MS)) % self.delay_ns.len() as u128) as usize;
        Ok(PingReplay {
            origin: self.origin.clone(),
            delay_ns: [&self.delay_ns[first..], &self.delay_ns[..first]].concat(),
            loss: [&self.loss[first..], &self.loss[..first]].concat(),
        })
    }

    /// The one-way delay, a looped, piecewise-constant 100-ms series.
    pub fn delay(&self) -> DelaySeries {
        DelaySeries::from_valid(
            Self::step(),
            self.delay_ns.clone(),
            SeriesEnd::Loop,
            Interpolation::Step,
        )
    }

    /// The loss probability, a looped 100-ms series.
    pub fn loss(&self) -> LossSeries {
        LossSeries::from_valid(Self::step(), self.loss.clone(), SeriesEnd::Loop)
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

    #[test]
    fn a_replay_starts_at_the_utc_minute_and_holds_the_delay_between_replies() {
        // Echoes at 12.05 s, 12.25 s (lost) and 12.45 s past a UTC minute.
        let minute = 1_694_478_360.0;
        let text = format!(
            "{}\t1\t80\n{}\t2\t-1\n{}\t3\t120\n",
            minute + 12.05,
            minute + 12.25,
            minute + 12.45
        );
        let r = PingTrace::parse(&text, "p")
            .unwrap()
            .replay(PingLossModel {
                window: Duration::from_millis(1000),
                slot: None,
            })
            .unwrap();
        assert_eq!(r.duration(), Duration::from_millis(12_500));
        let d = r.delay();
        assert_eq!(d.at(Time::from_millis(50)), Duration::from_millis(40));
        assert_eq!(d.at(Time::from_millis(12_150)), Duration::from_millis(40));
        assert_eq!(d.at(Time::from_millis(12_450)), Duration::from_millis(60));
        let l = r.loss();
        // Rows whose middle is within 0.5 s of 12.25 s see all three echoes, one lost.
        assert!((l.at(Time::from_millis(12_250)) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(l.at(Time::from_millis(11_000)), 0.0);
        assert_eq!(l.at(Time::from_millis(5_000)), 0.0);
        // From 12 s on, looped: the first row is the one at 12.0 s.
        let moved = r.starting_at(Duration::from_millis(12_000)).unwrap();
        assert_eq!(moved.duration(), r.duration());
        assert_eq!(
            moved.delay().at(Time::from_millis(450)),
            Duration::from_millis(60)
        );
        assert!(r.starting_at(Duration::from_millis(12_050)).is_err());
    }

    #[test]
    fn a_replay_keeps_the_traces_loss_rate() {
        // One echo every 0.2 s for 10 minutes, every 40th lost: 2.5 %.
        let text: String = (0..3000)
            .map(|k| {
                let rtt = if k % 40 == 7 { -1.0 } else { 40.0 };
                format!("{}\t{k}\t{rtt}\n", 1_694_478_360.0 + 0.2 * f64::from(k))
            })
            .collect();
        let t = PingTrace::parse(&text, "p").unwrap();
        let r = t
            .replay(PingLossModel {
                window: Duration::from_millis(1000),
                slot: None,
            })
            .unwrap();
        let l = r.loss();
        let rows = (r.duration().as_millis() / 100) as u64;
        let mean = (0..rows)
            .map(|i| l.at(Time::from_millis(i * 100 + 50)))
            .sum::<f64>()
            / rows as f64;
        assert!((mean - t.loss_rate()).abs() < 0.001, "{mean}");
    }

    #[test]
    fn a_replay_refuses_a_trace_without_replies_or_too_long() {
        let err = PingTrace::parse("10.0\t1\t-1\n10.2\t2\t-1\n", "p")
            .unwrap()
            .replay(PingLossModel {
                window: Duration::from_secs(1),
                slot: None,
            })
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "p: every echo was lost: there is no delay to replay"
        );
        let err = PingTrace::parse("10.0\t1\t5\n200000.0\t2\t5\n", "p")
            .unwrap()
            .replay(PingLossModel {
                window: Duration::from_secs(1),
                slot: None,
            })
            .unwrap_err();
        assert!(err.to_string().contains("more than the 86400 s"), "{err}");
    }

    #[test]
    fn the_slot_shape_puts_the_loss_where_in_the_slot_the_trace_lost_its_echoes() {
        // An echo every 0.25 s for an hour; every echo sent 4.0-4.5 s into a 15-s slot is lost
        // one slot in four, every other echo kept.
        let minute = 1_694_478_360.0;
        let text: String = (0..14_400u32)
            .map(|k| {
                let t = 0.25 * f64::from(k);
                let (slot, phase) = ((t / 15.0).floor() as u32, t % 15.0);
                let lost = (4.0..4.5).contains(&phase) && slot % 4 == 0;
                format!("{}\t{k}\t{}\n", minute + t, if lost { -1.0 } else { 40.0 })
            })
            .collect();
        let t = PingTrace::parse(&text, "p").unwrap();
        let model = |slot| PingLossModel {
            window: Duration::from_secs(60),
            slot,
        };
        let shaped = t
            .replay(model(Some(Duration::from_secs(15))))
            .unwrap()
            .loss();
        let flat = t.replay(model(None)).unwrap().loss();
        let at = |l: &LossSeries, s: u64, ms: u64| l.at(Time::from_millis(s * 15_000 + ms));
        // Mid-call, one slot: flat, the level everywhere; shaped, all of it in the lossy bin.
        let level = at(&flat, 100, 4_250);
        assert!((level - t.loss_rate()).abs() < 0.005, "{level}");
        assert_eq!(at(&flat, 100, 9_250), level);
        let lossy = at(&shaped, 100, 4_250);
        let other = at(&shaped, 100, 9_250);
        // The prior of two lost echoes keeps a third of the level in the bins that lost none.
        assert!(
            lossy > 10.0 * level && other < level / 2.0,
            "{lossy} {other}"
        );
    }
}

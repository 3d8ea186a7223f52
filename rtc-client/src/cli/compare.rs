//! Real traces to put beside an emulated link (`--compare`): read with the link's readers and
//! reduced to the same per-second view (capacity, one-way delay, loss, slot boundaries).

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use rtc_client::link::readers::{self, Direction, LagosTrace, PingTrace};
use rtc_client::link::{MahimahiTrace, Time};
use rtc_client::scenario::figures::{self, BoundaryChange, Summary};
use serde::Serialize;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// The format of a `--compare` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    /// Guess from the name and the first lines.
    Auto,
    /// Mahimahi delivery opportunities (one ms timestamp per line).
    Mahimahi,
    /// LeoReplayer one-way delay (one integer ms per line, 10 ms apart).
    Leoreplayer,
    /// Starlink-Emulator's lagos.csv (7 columns, 100-ms rows).
    Lagos,
    /// mmsys24 ping TSV (unix_ts, icmp_seq, rtt_ms; -1 = lost).
    Ping,
}

impl CompareFormat {
    fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Mahimahi => "mahimahi",
            Self::Leoreplayer => "leoreplayer",
            Self::Lagos => "lagos",
            Self::Ping => "ping",
        }
    }
}

/// One per-second series of a trace, with its label.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// What it is (e.g. `uplink`, `RTT/2`).
    pub label: String,
    /// One value per second (`None`: nothing measured that second).
    pub values: Vec<Option<f64>>,
}

/// A real trace reduced to seconds.
#[derive(Debug, Clone, Serialize)]
pub struct CompareTrace {
    /// The file.
    pub file: String,
    /// Its format.
    pub format: &'static str,
    /// Seconds shown (the trace's length, at most the emulated call's).
    pub seconds: usize,
    /// Capacity per second, Mbit/s.
    pub capacity_mbps: Vec<Series>,
    /// One-way delay per second, ms.
    pub delay_ms: Vec<Series>,
    /// Loss per second, fraction.
    pub loss: Vec<Series>,
    /// Slot boundaries, seconds from the start (where the format knows them).
    pub boundaries_s: Vec<f64>,
    /// The boundary-vs-other |RTT change| (ping traces).
    pub boundary_change: Option<BoundaryChange>,
}

/// A summary of one series, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesSummary {
    /// The series' label.
    pub label: String,
    /// Its summary.
    pub summary: Option<Summary>,
}

/// The summary of a [`CompareTrace`], for the JSON and text reports.
#[derive(Debug, Clone, Serialize)]
pub struct CompareSummary {
    /// The file.
    pub file: String,
    /// Its format.
    pub format: &'static str,
    /// Seconds compared.
    pub seconds: usize,
    /// Capacity per second, Mbit/s.
    pub capacity_mbps: Vec<SeriesSummary>,
    /// One-way delay per second, ms.
    pub delay_ms: Vec<SeriesSummary>,
    /// Mean loss, percent, per series.
    pub loss_pct: Vec<(String, f64)>,
    /// The boundary-vs-other |RTT change|.
    pub boundary_change: Option<BoundaryChange>,
}

impl CompareTrace {
    /// The summary.
    pub fn summary(&self) -> CompareSummary {
        let sum = |v: &[Series]| {
            v.iter()
                .map(|s| SeriesSummary {
                    label: s.label.clone(),
                    summary: Summary::of(s.values.iter().flatten().copied()),
                })
                .collect()
        };
        CompareSummary {
            file: self.file.clone(),
            format: self.format,
            seconds: self.seconds,
            capacity_mbps: sum(&self.capacity_mbps),
            delay_ms: sum(&self.delay_ms),
            loss_pct: self
                .loss
                .iter()
                .map(|s| {
                    let v: Vec<f64> = s.values.iter().flatten().copied().collect();
                    let mean = if v.is_empty() {
                        0.0
                    } else {
                        v.iter().sum::<f64>() / v.len() as f64
                    };
                    (s.label.clone(), mean * 100.0)
                })
                .collect(),
            boundary_change: self.boundary_change,
        }
    }
}

/// Reads `path` in `format` (guessed when `Auto`), keeping at most `max_seconds` seconds.
pub fn load(path: &Path, format: CompareFormat, max_seconds: usize) -> Result<CompareTrace> {
    if !path.is_file() {
        bail!("--compare: {} is not a readable file", path.display());
    }
    let format = match format {
        CompareFormat::Auto => guess(path)?,
        f => f,
    };
    let file = path.display().to_string();
    let context = || {
        format!(
            "--compare: cannot read {} as {}",
            path.display(),
            format.name()
        )
    };
    let mut trace = match format {
        CompareFormat::Mahimahi => {
            let t = MahimahiTrace::load(path).with_context(context)?;
            mahimahi(&t, max_seconds)
        }
        CompareFormat::Leoreplayer => {
            let d = readers::read_leoreplayer_delay(path).with_context(context)?;
            let per_s = (1000 / d.step().as_millis().max(1)) as usize;
            let ms: Vec<f64> = d.values_nanos().iter().map(|&n| n as f64 / 1e6).collect();
            let values: Vec<Option<f64>> = ms
                .chunks(per_s.max(1))
                .take(max_seconds)
                .map(|c| Some(c.iter().sum::<f64>() / c.len() as f64))
                .collect();
            CompareTrace {
                file: String::new(),
                format: "",
                seconds: values.len(),
                capacity_mbps: Vec::new(),
                delay_ms: vec![Series {
                    label: "one-way".into(),
                    values,
                }],
                loss: Vec::new(),
                boundaries_s: Vec::new(),
                boundary_change: None,
            }
        }
        CompareFormat::Lagos => {
            let t = LagosTrace::load(path).with_context(context)?;
            lagos(&t, max_seconds)
        }
        CompareFormat::Ping => {
            let t = PingTrace::load(path).with_context(context)?;
            ping(&t, max_seconds)
        }
        CompareFormat::Auto => unreachable!("resolved above"),
    };
    trace.file = file;
    trace.format = format.name();
    if trace.seconds == 0 {
        bail!(
            "--compare: {} holds less than one second of data",
            path.display()
        );
    }
    Ok(trace)
}

/// Guesses the format from the name and the first lines.
fn guess(path: &Path) -> Result<CompareFormat> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".csv") {
        return Ok(CompareFormat::Lagos);
    }
    let file = std::fs::File::open(path)
        .with_context(|| format!("--compare: cannot open {}", path.display()))?;
    let lines: Vec<String> = BufReader::new(file)
        .lines()
        .take(2000)
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("--compare: cannot read {} as text", path.display()))?;
    let first = lines
        .iter()
        .find(|l| !l.trim().is_empty())
        .cloned()
        .unwrap_or_default();
    let fields: Vec<&str> = first.split_whitespace().collect();
    if fields.len() == 3 && fields[0].parse::<f64>().is_ok_and(|t| t > 1e8) {
        return Ok(CompareFormat::Ping);
    }
    if first.split(',').count() == 7 {
        return Ok(CompareFormat::Lagos);
    }
    if fields.len() == 1 {
        if name.contains("delay") {
            return Ok(CompareFormat::Leoreplayer);
        }
        let values: Vec<u64> = lines.iter().filter_map(|l| l.trim().parse().ok()).collect();
        let non_decreasing = values.windows(2).all(|w| w[0] <= w[1]);
        let repeats = values.windows(2).any(|w| w[0] == w[1]);
        return Ok(if non_decreasing && (repeats || values.len() > 200) {
            CompareFormat::Mahimahi
        } else {
            CompareFormat::Leoreplayer
        });
    }
    bail!(
        "--compare: cannot tell the format of {}; give --compare-format \
         (mahimahi, leoreplayer, lagos or ping)",
        path.display()
    )
}

fn mahimahi(t: &MahimahiTrace, max_seconds: usize) -> CompareTrace {
    let seconds = (t.period().as_secs() as usize).clamp(1, max_seconds.max(1));
    let values = (0..seconds as u64)
        .map(|s| {
            let n = t.opportunities_between(Time::from_secs(s), Time::from_secs(s + 1));
            Some(n as f64 * f64::from(rtc_client::link::MAHIMAHI_OPPORTUNITY_BYTES) * 8.0 / 1e6)
        })
        .collect();
    CompareTrace {
        file: String::new(),
        format: "",
        seconds,
        capacity_mbps: vec![Series {
            label: "capacity".into(),
            values,
        }],
        delay_ms: Vec::new(),
        loss: Vec::new(),
        boundaries_s: Vec::new(),
        boundary_change: None,
    }
}

fn lagos(t: &LagosTrace, max_seconds: usize) -> CompareTrace {
    let per_second: Vec<&[readers::LagosRow]> = t
        .rows()
        .chunks(10)
        .filter(|c| c.len() == 10)
        .take(max_seconds)
        .collect();
    let series = |label: &str, f: &dyn Fn(&readers::LagosRow) -> f64| Series {
        label: label.to_owned(),
        values: per_second
            .iter()
            .map(|c| Some(c.iter().map(f).sum::<f64>() / c.len() as f64))
            .collect(),
    };
    let seconds = per_second.len();
    CompareTrace {
        file: String::new(),
        format: "",
        seconds,
        capacity_mbps: vec![
            series("uplink", &|r| r.mbps(Direction::Uplink)),
            series("downlink", &|r| r.mbps(Direction::Downlink)),
        ],
        delay_ms: vec![
            series("uplink", &|r| r.delay_ms(Direction::Uplink)),
            series("downlink", &|r| r.delay_ms(Direction::Downlink)),
        ],
        loss: vec![
            series("uplink", &|r| r.loss(Direction::Uplink)),
            series("downlink", &|r| r.loss(Direction::Downlink)),
        ],
        // Virtual seconds 12, 27, 42, 57 of each minute (the data README).
        boundaries_s: (0..seconds)
            .filter(|s| figures::is_slot_boundary_second(*s as u64))
            .map(|s| s as f64)
            .collect(),
        boundary_change: None,
    }
}

fn ping(t: &PingTrace, max_seconds: usize) -> CompareTrace {
    let Some(first) = t.samples().first().map(|s| s.unix_s.floor()) else {
        return CompareTrace {
            file: String::new(),
            format: "",
            seconds: 0,
            capacity_mbps: Vec::new(),
            delay_ms: Vec::new(),
            loss: Vec::new(),
            boundaries_s: Vec::new(),
            boundary_change: None,
        };
    };
    let span = (t.samples().last().map_or(first, |s| s.unix_s.floor()) - first) as usize + 1;
    let seconds = span.min(max_seconds.max(1));
    let mut rtt = vec![(0.0, 0usize); seconds];
    let mut sent = vec![(0usize, 0usize); seconds];
    let mut kept = Vec::new();
    for s in t.samples() {
        let i = (s.unix_s.floor() - first) as usize;
        if i >= seconds {
            break;
        }
        kept.push(*s);
        sent[i].0 += 1;
        match s.rtt {
            Some(d) => {
                rtt[i].0 += d.as_secs_f64() * 1e3 / 2.0;
                rtt[i].1 += 1;
            }
            None => sent[i].1 += 1,
        }
    }
    let boundary_change = figures::boundary_change(kept.iter().map(|s| {
        (
            figures::is_slot_boundary_second((s.unix_s.floor() as i64).rem_euclid(60) as u64),
            s.rtt.map(|d| d.as_secs_f64() * 1e3),
        )
    }));
    CompareTrace {
        file: String::new(),
        format: "",
        seconds,
        capacity_mbps: Vec::new(),
        delay_ms: vec![Series {
            label: "RTT/2".into(),
            values: rtt
                .iter()
                .map(|&(sum, n)| (n > 0).then(|| sum / n as f64))
                .collect(),
        }],
        loss: vec![Series {
            label: "lost pings".into(),
            values: sent
                .iter()
                .map(|&(n, lost)| (n > 0).then(|| lost as f64 / n as f64))
                .collect(),
        }],
        boundaries_s: (0..seconds)
            .filter(|&s| {
                figures::is_slot_boundary_second((first as i64 + s as i64).rem_euclid(60) as u64)
            })
            .map(|s| s as f64)
            .collect(),
        boundary_change,
    }
}

//! `rtc-client link`: draw one call from a scenario and report what its two links do.

use super::args::{PathArgs, parse_duration};
use super::compare::{self, CompareFormat, CompareSummary, CompareTrace};
use super::plot::{self, Band, Column, Figure, Line};
use anyhow::{Context, Result};
use chrono::SecondsFormat;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rtc_client::scenario::figures::{self, BoundaryChange, LinkSecond, Summary};
use rtc_client::scenario::schema::ScenarioKind;
use rtc_client::scenario::{Handover, Realization, Scenario, probe_rtt};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Spacing of the RTT probes: 200 ms, inside the mmsys24 pings' 0.15-0.22 s.
const PROBE_INTERVAL: Duration = Duration::from_millis(200);
/// Size of an RTT probe, bytes (an ICMP echo of 56 data bytes plus headers).
const PROBE_BYTES: u32 = 84;

/// `rtc-client link` arguments.
#[derive(Debug, Args)]
pub struct LinkArgs {
    /// Scenario: a shipped name (traces/scenarios/NAME.toml) or a path to a .toml file.
    #[arg(long, value_name = "NAME|FILE")]
    scenario: String,
    /// Call length, e.g. 90s, 10m, 1h [default: the scenario's call.duration_s].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true)]
    duration: Option<Duration>,
    /// Seed: the same scenario and seed always give the same call.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print JSON (every second of both links) instead of the text summary.
    #[arg(long)]
    json: bool,
    /// Also print the per-second table in the text output.
    #[arg(long, conflicts_with = "json")]
    table: bool,
    /// Draw capacity, delay and loss per second with handover marks into FILE (.png or .svg).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// A real trace to put beside the emulated link: Mahimahi, LeoReplayer delay, lagos.csv or
    /// an mmsys24 ping TSV.
    #[arg(long, value_name = "FILE")]
    compare: Option<PathBuf>,
    /// Format of the --compare file.
    #[arg(long, value_enum, default_value_t = CompareFormat::Auto, requires = "compare")]
    compare_format: CompareFormat,
    #[command(flatten)]
    paths: PathArgs,
}

/// One direction in the report.
#[derive(Debug, Serialize)]
struct DirectionReport {
    /// Per-second capacity, Mbit/s.
    capacity_mbps: Option<Summary>,
    /// Per-second mean propagation delay, ms.
    delay_ms: Option<Summary>,
    /// Expected loss over the call, percent.
    loss_pct: f64,
    /// Time in outages, s.
    outage_s: f64,
    /// Every second.
    seconds: Vec<LinkSecond>,
}

impl DirectionReport {
    fn new(seconds: Vec<LinkSecond>) -> Self {
        let n = seconds.len().max(1) as f64;
        Self {
            capacity_mbps: Summary::of(seconds.iter().map(|s| s.capacity_mbps)),
            delay_ms: Summary::of(seconds.iter().map(|s| s.delay_ms)),
            loss_pct: seconds.iter().map(|s| s.loss).sum::<f64>() / n * 100.0,
            outage_s: seconds.iter().map(|s| s.outage_ms).sum::<u64>() as f64 / 1000.0,
            seconds,
        }
    }
}

/// The handovers in the report.
#[derive(Debug, Serialize)]
struct HandoverReport<'a> {
    source: &'static str,
    count: usize,
    per_minute: f64,
    slot_boundaries: usize,
    times_s: Vec<f64>,
    events: &'a [Handover],
    outages_ms: &'a [(u64, u64)],
}

/// The orbit path in the report.
#[derive(Debug, Serialize)]
struct OrbitReport<'a> {
    start: String,
    constellation: &'a str,
    satellites: usize,
    local: &'a str,
    peer: &'a str,
    separation_km: f64,
}

/// The RTT the probes saw.
#[derive(Debug, Serialize)]
struct RttReport {
    probe_interval_ms: u64,
    probes: usize,
    lost: usize,
    rtt_ms: Option<Summary>,
    boundary_change: Option<BoundaryChange>,
}

/// The whole `--json` document.
#[derive(Debug, Serialize)]
struct LinkReport<'a> {
    schema: &'static str,
    scenario: &'a str,
    description: &'a str,
    kind: ScenarioKind,
    file: &'a str,
    seed: u64,
    duration_s: f64,
    start: String,
    handovers: HandoverReport<'a>,
    orbit: Option<OrbitReport<'a>>,
    /// Where the call starts in the replayed `lagos.csv` series, s (`[replay]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    replay_offset_s: Option<f64>,
    forward: DirectionReport,
    reverse: DirectionReport,
    rtt: RttReport,
    compare: Option<CompareSummary>,
    plot: Option<String>,
}

/// Runs `rtc-client link`.
pub fn run(args: LinkArgs) -> Result<()> {
    if let Some(path) = &args.plot {
        plot::format_of(path)?;
    }
    let paths = args.paths.resolve();
    tracing::debug!(root = %paths.root.display(), data = %paths.data.display(), "paths");
    let scenario = Scenario::load(&args.scenario, &paths)?;
    let duration = args.duration.unwrap_or_else(|| scenario.default_duration());
    let seconds = duration.as_secs_f64().ceil() as u64;

    let steps = 4 + u64::from(args.compare.is_some()) + u64::from(args.plot.is_some());
    let bar = progress(steps);
    // The real trace first: a bad --compare file fails before any work.
    let compared = match &args.compare {
        Some(path) => {
            bar.set_message(format!("reading {}", path.display()));
            let t = compare::load(path, args.compare_format, seconds as usize)?;
            bar.inc(1);
            Some(t)
        }
        None => None,
    };
    bar.set_message(format!(
        "drawing a {} s call from {}",
        seconds,
        scenario.name()
    ));
    let started = std::time::Instant::now();
    let realization = scenario
        .realize(args.seed, duration)
        .with_context(|| format!("cannot build the scenario {}", scenario.origin))?;
    tracing::info!(
        scenario = scenario.name(),
        seed = args.seed,
        handovers = realization.timeline.instants_ms().len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "call drawn"
    );
    bar.inc(1);
    bar.set_message("forward link");
    let forward = figures::link_seconds(&realization.forward_link()?, seconds);
    bar.inc(1);
    bar.set_message("reverse link");
    let reverse = figures::link_seconds(&realization.reverse_link()?, seconds);
    bar.inc(1);
    bar.set_message("pings");
    let probes = probe_rtt(&realization, PROBE_INTERVAL, PROBE_BYTES)?;
    let rtt = RttReport {
        probe_interval_ms: PROBE_INTERVAL.as_millis() as u64,
        probes: probes.len(),
        lost: probes.iter().filter(|p| p.rtt_ms.is_none()).count(),
        rtt_ms: Summary::of(probes.iter().filter_map(|p| p.rtt_ms)),
        // The boundary figure only means something on a slot grid.
        boundary_change: realization
            .timeline
            .slotted
            .then(|| figures::probe_boundary_change(&realization, &probes))
            .flatten(),
    };
    bar.inc(1);
    if let Some(path) = &args.plot {
        bar.set_message(format!("drawing {}", path.display()));
        let figure = figure(
            &scenario,
            &realization,
            &forward,
            &reverse,
            compared.as_ref(),
        );
        plot::save(path, &figure)?;
        tracing::info!(file = %path.display(), "plot written");
        bar.inc(1);
    }
    bar.finish_and_clear();

    let instants = realization.timeline.instants_ms();
    let report = LinkReport {
        schema: "leopace.link.v1",
        scenario: scenario.name(),
        description: &scenario.file.description,
        kind: scenario.file.kind,
        file: &scenario.origin,
        seed: args.seed,
        duration_s: duration.as_secs_f64(),
        start: realization.start.to_rfc3339_opts(SecondsFormat::Secs, true),
        handovers: HandoverReport {
            source: realization.timeline.source,
            count: instants.len(),
            per_minute: realization.timeline.per_minute(duration),
            slot_boundaries: if realization.timeline.slotted {
                realization.timeline.boundaries_ms.len()
            } else {
                0
            },
            times_s: instants.iter().map(|&ms| ms as f64 / 1000.0).collect(),
            events: &realization.timeline.handovers,
            outages_ms: &realization.timeline.outages_ms,
        },
        orbit: realization.orbit.as_ref().map(|o| OrbitReport {
            start: o.start.to_rfc3339_opts(SecondsFormat::Secs, true),
            constellation: &o.constellation,
            satellites: o.satellites,
            local: &o.local,
            peer: &o.peer,
            separation_km: o.separation_km,
        }),
        replay_offset_s: realization.replay_offset.map(|d| d.as_secs_f64()),
        forward: DirectionReport::new(forward),
        reverse: DirectionReport::new(reverse),
        rtt,
        compare: compared.as_ref().map(CompareTrace::summary),
        plot: args.plot.as_ref().map(|p| p.display().to_string()),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        text(&mut out, &report, args.table)?;
    }
    out.flush()?;
    Ok(())
}

fn progress(steps: u64) -> ProgressBar {
    let bar = ProgressBar::new(steps);
    if let Ok(style) = ProgressStyle::with_template("{spinner} [{bar:20}] {pos}/{len} {msg}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

fn fmt(v: Option<f64>, width: usize, decimals: usize) -> String {
    match v {
        Some(v) => format!("{v:>width$.decimals$}"),
        None => format!("{:>width$}", "-"),
    }
}

fn text(out: &mut impl Write, r: &LinkReport<'_>, table: bool) -> Result<()> {
    writeln!(
        out,
        "scenario {} ({}): {}",
        r.scenario,
        r.kind.as_str(),
        r.description
    )?;
    writeln!(
        out,
        "  {}, seed {}, {:.0} s from {}",
        r.file, r.seed, r.duration_s, r.start
    )?;
    if let Some(o) = &r.orbit {
        writeln!(
            out,
            "  orbit: {} ({} satellites), {} -> {} ({:.0} km), starting {}",
            o.constellation, o.satellites, o.local, o.peer, o.separation_km, o.start
        )?;
    }
    if let Some(offset) = r.replay_offset_s {
        writeln!(
            out,
            "  replays the trace from {offset:.1} s ({:.1} min) into it",
            offset / 60.0
        )?;
    }
    let h = &r.handovers;
    write!(
        out,
        "handovers ({}): {} in {:.0} s ({:.2} per minute)",
        h.source, h.count, r.duration_s, h.per_minute
    )?;
    if h.slot_boundaries > 0 {
        write!(out, " at {} slot boundaries", h.slot_boundaries)?;
    }
    writeln!(out)?;
    if !h.times_s.is_empty() {
        let shown: Vec<String> = h
            .times_s
            .iter()
            .take(16)
            .map(|t| format!("{t:.0}"))
            .collect();
        let more = if h.times_s.len() > 16 { " ..." } else { "" };
        writeln!(out, "  at s: {}{more}", shown.join(" "))?;
    }
    if !h.outages_ms.is_empty() {
        let total: u64 = h.outages_ms.iter().map(|(a, b)| b - a).sum();
        writeln!(
            out,
            "  no satellite for {:.0} s in all",
            total as f64 / 1000.0
        )?;
    }
    writeln!(
        out,
        "{:<9} {:>30}   {:>34}   {:>6} {:>7}",
        "", "capacity Mbit/s (per second)", "one-way delay ms (per second)", "loss", "outage"
    )?;
    writeln!(
        out,
        "{:<9} {:>7} {:>7} {:>7} {:>7}   {:>6} {:>6} {:>6} {:>6} {:>6}   {:>6} {:>7}",
        "direction", "mean", "p5", "p50", "p95", "mean", "p5", "p50", "p95", "max", "%", "s"
    )?;
    for (name, d) in [("forward", &r.forward), ("reverse", &r.reverse)] {
        let c = d.capacity_mbps;
        let l = d.delay_ms;
        writeln!(
            out,
            "{:<9} {} {} {} {}   {} {} {} {} {}   {:>6.2} {:>7.1}",
            name,
            fmt(c.map(|s| s.mean), 7, 2),
            fmt(c.map(|s| s.p5), 7, 2),
            fmt(c.map(|s| s.p50), 7, 2),
            fmt(c.map(|s| s.p95), 7, 2),
            fmt(l.map(|s| s.mean), 6, 1),
            fmt(l.map(|s| s.p5), 6, 1),
            fmt(l.map(|s| s.p50), 6, 1),
            fmt(l.map(|s| s.p95), 6, 1),
            fmt(l.map(|s| s.max), 6, 1),
            d.loss_pct,
            d.outage_s
        )?;
    }
    let rtt = &r.rtt;
    write!(
        out,
        "RTT of pings every {} ms: {} sent, {} lost",
        rtt.probe_interval_ms, rtt.probes, rtt.lost
    )?;
    if let Some(s) = rtt.rtt_ms {
        write!(
            out,
            ", median {:.1} ms (p5 {:.1}, p95 {:.1})",
            s.p50, s.p5, s.p95
        )?;
    }
    writeln!(out)?;
    if let Some(b) = rtt.boundary_change {
        writeln!(
            out,
            "  mean |RTT change| at slot-boundary seconds {:.1} ms, other seconds {:.1} ms: ratio {:.2}",
            b.boundary_ms, b.other_ms, b.ratio
        )?;
    }
    if let Some(c) = &r.compare {
        writeln!(
            out,
            "compared with {} ({}), {} s:",
            c.file, c.format, c.seconds
        )?;
        for s in &c.capacity_mbps {
            if let Some(m) = s.summary {
                writeln!(
                    out,
                    "  capacity {:<10} mean {:.2}, p5 {:.2}, p50 {:.2}, p95 {:.2} Mbit/s",
                    s.label, m.mean, m.p5, m.p50, m.p95
                )?;
            }
        }
        for s in &c.delay_ms {
            if let Some(m) = s.summary {
                writeln!(
                    out,
                    "  delay    {:<10} mean {:.1}, p5 {:.1}, p50 {:.1}, p95 {:.1}, max {:.1} ms",
                    s.label, m.mean, m.p5, m.p50, m.p95, m.max
                )?;
            }
        }
        for (label, pct) in &c.loss_pct {
            writeln!(out, "  loss     {label:<10} {pct:.2} %")?;
        }
        if let Some(b) = c.boundary_change {
            writeln!(
                out,
                "  mean |RTT change| at slot-boundary seconds {:.1} ms, other seconds {:.1} ms: ratio {:.2}",
                b.boundary_ms, b.other_ms, b.ratio
            )?;
        }
    }
    if let Some(p) = &r.plot {
        writeln!(out, "plot written to {p}")?;
    }
    if table {
        writeln!(
            out,
            "{:>6} {:>9} {:>8} {:>7} {:>5}   {:>9} {:>8} {:>7} {:>5}  handover",
            "second", "fwd Mbps", "fwd ms", "fwd %", "out", "rev Mbps", "rev ms", "rev %", "out"
        )?;
        for (f, v) in r.forward.seconds.iter().zip(&r.reverse.seconds) {
            writeln!(
                out,
                "{:>6} {:>9.2} {:>8.1} {:>7.2} {:>5} {:>11.2} {:>8.1} {:>7.2} {:>5}  {}",
                f.second,
                f.capacity_mbps,
                f.delay_ms,
                f.loss * 100.0,
                f.outage_ms,
                v.capacity_mbps,
                v.delay_ms,
                v.loss * 100.0,
                v.outage_ms,
                if f.handover { "*" } else { "" }
            )?;
        }
    }
    Ok(())
}

/// The picture: the emulated link, and the compared trace beside it.
fn figure(
    scenario: &Scenario,
    r: &Realization,
    forward: &[LinkSecond],
    reverse: &[LinkSecond],
    compared: Option<&CompareTrace>,
) -> Figure {
    let handovers_s: Vec<f64> = r
        .timeline
        .instants_ms()
        .iter()
        .map(|&ms| ms as f64 / 1000.0)
        .collect();
    let boundaries_s: Vec<f64> = r
        .timeline
        .boundaries_ms
        .iter()
        .map(|&ms| ms as f64 / 1000.0)
        .filter(|b| !handovers_s.contains(b))
        .collect();
    let line = |label: &str, color, seconds: &[LinkSecond], f: &dyn Fn(&LinkSecond) -> f64| Line {
        label: label.to_owned(),
        color,
        values: seconds.iter().map(|s| Some(f(s))).collect(),
    };
    let band = |color, seconds: &[LinkSecond]| Band {
        color,
        values: seconds
            .iter()
            .map(|s| Some((s.delay_min_ms, s.delay_max_ms)))
            .collect(),
    };
    let mut columns = vec![Column {
        title: format!(
            "{} (seed {}): {} handovers",
            scenario.name(),
            r.seed,
            handovers_s.len()
        ),
        seconds: forward.len(),
        capacity: vec![
            line("forward (video)", plot::FORWARD, forward, &|s| {
                s.capacity_mbps
            }),
            line("reverse (feedback)", plot::REVERSE, reverse, &|s| {
                s.capacity_mbps
            }),
        ],
        delay: vec![
            line("forward", plot::FORWARD, forward, &|s| s.delay_ms),
            line("reverse", plot::REVERSE, reverse, &|s| s.delay_ms),
        ],
        delay_bands: vec![band(plot::FORWARD, forward), band(plot::REVERSE, reverse)],
        loss: vec![
            line("forward", plot::FORWARD, forward, &|s| s.loss * 100.0),
            line("reverse", plot::REVERSE, reverse, &|s| s.loss * 100.0),
        ],
        handovers_s,
        boundaries_s,
    }];
    if let Some(t) = compared {
        let colors = [plot::FORWARD, plot::REVERSE];
        let lines = |series: &[compare::Series], scale: f64| -> Vec<Line> {
            series
                .iter()
                .zip(colors.iter().cycle())
                .map(|(s, &color)| Line {
                    label: s.label.clone(),
                    color,
                    values: s.values.iter().map(|v| v.map(|x| x * scale)).collect(),
                })
                .collect()
        };
        let name = std::path::Path::new(&t.file)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| t.file.clone());
        columns.push(Column {
            title: format!("real trace: {name} ({})", t.format),
            seconds: forward.len(),
            capacity: lines(&t.capacity_mbps, 1.0),
            delay: lines(&t.delay_ms, 1.0),
            delay_bands: Vec::new(),
            loss: lines(&t.loss, 100.0),
            handovers_s: Vec::new(),
            boundaries_s: t.boundaries_s.clone(),
        });
    }
    Figure {
        title: format!(
            "{}: capacity, one-way delay and loss per second (red: handovers)",
            scenario.name()
        ),
        columns,
    }
}

//! `rtc-client demo`: what the product does, in a minute. The same emulated Starlink links and
//! seeds run once with WebRTC's default queue limit and once with the best handover-aware policy
//! the project ships (the shipped model's queue limit with the handover-timed actions at every
//! slot boundary the calibrated forecast predicts; docs/experiments/timed-2026-12-02.md),
//! printed side by side (bitrate, freezes, freeze time, stalls, P50 and P95 delay, loss: the
//! metrics that keep the trade honest) with what that policy did around each handover, and
//! drawn as a per-second timeline (frames rendered, longest frame delay, and each policy's
//! freezes with their lengths) with the handovers marked.

use super::args::{PathArgs, parse_duration, parse_policy};
use super::plot::register_fonts;
use anyhow::{Context, Result, anyhow};
use clap::Args;
use pacer::forecast::CUMULATIVE_NORM;
use plotters::prelude::*;
use rtc_client::call::PolicyChoice;
use rtc_client::forecast::ForecastSpec;
use rtc_client::scenario::Scenario;
use rtc_client::sim::{CallConfig, CallResult, run_call};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The scenario the demo runs: the Starlink dish uplink (docs/architecture.md, "The call engine").
const SCENARIO: &str = "starlink";
/// The handover-aware policy the project ships (models/README.md).
const SHIPPED_CARD: &str = "models/policy.json";

/// `rtc-client demo` arguments.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Length of each call, e.g. 90s, 4m.
    #[arg(long, value_name = "DURATION", default_value = "4m", value_parser = parse_duration, allow_hyphen_values = true)]
    duration: Duration,
    /// Calls per policy (seeds 1..=N, the same links for both policies).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=50))]
    seeds: u64,
    /// The handover-aware policy to show against WebRTC's default (as `sim --policy`)
    /// [default: timed@learned:ROOT/models/policy.json, the shipped model's limit with the
    /// handover-timed actions]. Both run with the calibrated forecast.
    #[arg(long, value_name = "POLICY", value_parser = parse_policy)]
    policy: Option<PolicyChoice>,
    /// Where the timeline picture goes.
    #[arg(long, value_name = "DIR", default_value = "runs/demo")]
    out: PathBuf,
    #[command(flatten)]
    paths: PathArgs,
}

/// One policy's calls.
struct Row {
    name: String,
    results: Vec<CallResult>,
}

impl Row {
    fn mean(&self, f: impl Fn(&CallResult) -> f64) -> f64 {
        self.results.iter().map(f).sum::<f64>() / self.results.len().max(1) as f64
    }
}

/// One column of the printed table: its header, its width and decimals, and one call's value.
/// The rows are each policy's mean over its calls.
struct Column {
    header: &'static str,
    width: usize,
    decimals: usize,
    value: fn(&CallResult) -> f64,
}

/// The table: the metrics that keep the trade honest (README, "Quick start"). A policy that buys
/// fewer freezes with a longer queue shows it in the delays; one that splits freezes into
/// shorter hitches shows it in the stalls; the freeze time weighs long freezes above short ones.
const COLUMNS: [Column; 7] = [
    Column {
        header: "video kbit/s",
        width: 13,
        decimals: 0,
        value: |r| r.qoe.video_bitrate_kbps(),
    },
    Column {
        header: "freezes/min",
        width: 12,
        decimals: 2,
        value: |r| r.qoe.freezes_per_min(),
    },
    Column {
        header: "frozen s/call",
        width: 14,
        decimals: 2,
        value: |r| r.qoe.total_freeze.as_secs_f64(),
    },
    Column {
        header: "stalls/min",
        width: 11,
        decimals: 2,
        value: |r| r.qoe.stalls_per_min(),
    },
    Column {
        header: "P50 delay ms",
        width: 13,
        decimals: 0,
        value: |r| r.qoe.to_record().e2e_delay_p50_ms,
    },
    Column {
        header: "P95 delay ms",
        width: 13,
        decimals: 0,
        value: |r| r.qoe.to_record().e2e_delay_p95_ms,
    },
    Column {
        header: "loss %",
        width: 8,
        decimals: 2,
        value: |r| r.qoe.to_record().packet_loss_pct,
    },
];

/// Runs `rtc-client demo`.
pub fn run(args: DemoArgs, epoch: Instant) -> Result<()> {
    let paths = args.paths.resolve();
    let scenario = Scenario::load(SCENARIO, &paths)?;
    let aware = match args.policy.clone() {
        Some(policy) => policy,
        None => {
            let card = paths.root.join(SHIPPED_CARD);
            parse_policy(&format!("timed@learned:{}", card.display())).map_err(|e| anyhow!(e))?
        }
    };
    let started = Instant::now();
    let (rows, handovers_s) = simulate(&args, &scenario, aware, epoch)?;

    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{SCENARIO}: {} call(s) of {} s per policy, seeds 1-{}, the same links for both \
         (simulated in {:.1} s; sender: GoogCC, libwebrtc NACK/RTX and FEC)",
        args.seeds,
        args.duration.as_secs(),
        args.seeds,
        started.elapsed().as_secs_f64()
    )?;
    table(&mut out, &rows)?;
    decisions(&mut out, &rows[1], &handovers_s)?;
    let picture = args.out.join("demo.png");
    draw(&picture, &rows, &handovers_s, args.duration)?;
    writeln!(out, "timeline: {}", picture.display())?;
    Ok(())
}

/// Runs seeds 1..=N under WebRTC's default and under `aware` on the same links; returns both
/// policies' calls and seed 1's handover instants, s.
fn simulate(
    args: &DemoArgs,
    scenario: &Scenario,
    aware: PolicyChoice,
    epoch: Instant,
) -> Result<([Row; 2], Vec<f64>)> {
    let mut rows = [
        Row {
            name: "default".into(),
            results: Vec::new(),
        },
        Row {
            name: aware.name(),
            results: Vec::new(),
        },
    ];
    let mut timeline = None;
    for seed in 1..=args.seeds {
        let realization = scenario
            .realize(seed, args.duration)
            .with_context(|| format!("cannot build the scenario {}", scenario.origin))?;
        if seed == 1 {
            timeline = Some(realization.timeline.clone());
        }
        for (row, policy) in rows.iter_mut().zip([PolicyChoice::Default, aware.clone()]) {
            let mut config = CallConfig::from_realization(&realization, policy);
            config.handover = ForecastSpec::Calibrated;
            let result = run_call(&config, epoch)
                .with_context(|| format!("the call over {SCENARIO} (seed {seed}) failed"))?;
            row.results.push(result);
        }
    }
    let handovers_s: Vec<f64> = timeline
        .map(|t| {
            t.handovers
                .iter()
                .map(|h| h.at_ms as f64 / 1000.0)
                .collect()
        })
        .unwrap_or_default();
    Ok((rows, handovers_s))
}

/// Prints each policy's means over its calls, and the handover-aware one's change against the
/// default, column by column.
fn table(out: &mut impl Write, rows: &[Row; 2]) -> Result<()> {
    write!(out, "{:<26}", "policy")?;
    for c in &COLUMNS {
        write!(out, " {:>w$}", c.header, w = c.width)?;
    }
    writeln!(out)?;
    for row in rows {
        write!(out, "{:<26}", row.name)?;
        for c in &COLUMNS {
            write!(
                out,
                " {:>w$.d$}",
                row.mean(c.value),
                w = c.width,
                d = c.decimals
            )?;
        }
        writeln!(out)?;
    }
    write!(out, "{:<26}", "change")?;
    for c in &COLUMNS {
        let (base, other) = (rows[0].mean(c.value), rows[1].mean(c.value));
        let text = if base == 0.0 {
            "n/a".to_owned()
        } else {
            format!("{:+.1}%", 100.0 * (other - base) / base)
        };
        write!(out, " {text:>w$}", w = c.width)?;
    }
    writeln!(out)?;
    Ok(())
}

/// Prints what the handover-aware policy chose in each decision interval of seed 1's call, with
/// the handovers that fell in it.
fn decisions(out: &mut impl Write, aware: &Row, handovers_s: &[f64]) -> Result<()> {
    writeln!(
        out,
        "what {} did (seed 1; default holds 2000 ms throughout):",
        aware.name
    )?;
    let Some(first) = aware.results.first() else {
        return Ok(());
    };
    for record in &first.telemetry {
        let from = record.start_ms as f64 / 1000.0;
        let to = from + record.duration_ms as f64 / 1000.0;
        let inside: Vec<String> = handovers_s
            .iter()
            .filter(|&&h| h >= from && h < to)
            .map(|h| format!("{h:.0}"))
            .collect();
        let acted = record.actions.map_or_else(String::new, |a| {
            let shifted = match a.timing_shift_ms {
                0 => String::new(),
                ms => format!(", windows moved {ms:+} ms to the measured loss onset"),
            };
            format!(
                "; held media {} times ({} ms), guarded the estimator {} times, boosted FEC {} \
                 times, raised the receiver's playout delay {} times{shifted}",
                a.hold.applied,
                a.hold.total_ms,
                a.guard.applied,
                a.boost.applied,
                a.playout.applied
            )
        });
        writeln!(
            out,
            "  {from:>5.0}-{to:<5.0} s: queue limit {} ms, {:.1} handovers expected in the next \
             120 s{acted}; handovers at {} s",
            record.action_ms,
            record.forecast.cumulative.last().copied().unwrap_or(0.0) * CUMULATIVE_NORM,
            if inside.is_empty() {
                "none".to_owned()
            } else {
                inside.join(", ")
            }
        )?;
    }
    Ok(())
}

/// The policies' colours: WebRTC's default grey, the handover-aware policy blue.
const COLORS: [RGBColor; 2] = [RGBColor(120, 120, 120), RGBColor(31, 119, 180)];
/// Handover marks.
const HANDOVER: RGBColor = RGBColor(214, 39, 40);

/// Seed 1's call for both policies, second by second, with the handovers marked: frames
/// rendered (top), the longest capture-to-render delay (middle), and each policy's freezes with
/// their lengths (bottom).
fn draw(path: &Path, rows: &[Row; 2], handovers_s: &[f64], duration: Duration) -> Result<()> {
    register_fonts();
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the directory {}", parent.display()))?;
    }
    let context = || format!("cannot write the picture {}", path.display());
    let root = BitMapBackend::new(path, (1200, 1060)).into_drawing_area();
    root.fill(&WHITE)
        .map_err(|e| drawing(&e))
        .with_context(context)?;
    let root = root
        .titled(
            &format!("{SCENARIO}, seed 1, the same link for both policies (red: handovers)"),
            ("sans-serif", 22),
        )
        .map_err(|e| drawing(&e))
        .with_context(context)?;
    let (top, rest) = root.split_vertically(360);
    let (bottom, strip) = rest.split_vertically(360);
    let fps: Vec<Vec<f64>> = rows
        .iter()
        .map(|row| first_call(row, |r| &r.rendered_per_second))
        .collect();
    let delay: Vec<Vec<f64>> = rows
        .iter()
        .map(|row| first_call(row, |r| &r.max_frame_delay_ms_per_second))
        .collect();
    let asked: Vec<Vec<f64>> = rows
        .iter()
        .map(|row| first_call(row, |r| &r.max_playout_minimum_ms_per_second))
        .collect();
    let top_y = 40.0;
    let bottom_y = delay
        .iter()
        .flatten()
        .fold(500.0_f64, |a, &b| a.max(b * 1.1))
        .min(10_000.0);
    let seconds = duration.as_secs().max(1) as f64;
    panel(
        &top,
        rows,
        &fps,
        (seconds, top_y),
        handovers_s,
        ("frames rendered per second", "frames/s"),
        &[],
    )
    .with_context(context)?;
    panel(
        &bottom,
        rows,
        &delay,
        (seconds, bottom_y),
        handovers_s,
        (
            "longest capture-to-render delay of each second (thin: the playout delay the sender \
             asked for)",
            "delay (ms)",
        ),
        &asked,
    )
    .with_context(context)?;
    freeze_lanes(&strip, rows, seconds, handovers_s).with_context(context)?;
    root.present()
        .map_err(|e| drawing(&e))
        .with_context(context)?;
    Ok(())
}

fn drawing(e: &dyn std::fmt::Display) -> anyhow::Error {
    anyhow!("drawing failed: {e}")
}

/// One per-second series of a policy's first call, as floats.
fn first_call(row: &Row, series: impl Fn(&CallResult) -> &Vec<u32>) -> Vec<f64> {
    row.results
        .first()
        .map(|r| series(r).iter().map(|&v| f64::from(v)).collect())
        .unwrap_or_default()
}

/// One panel: a per-second series for each policy over `(0, 0)..extent`, handovers as red lines,
/// and, thin, a second series per policy (`thin`, may be empty) where it is not all zero.
fn panel(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    rows: &[Row; 2],
    series: &[Vec<f64>],
    extent: (f64, f64),
    handovers_s: &[f64],
    (caption, y_desc): (&str, &str),
    thin: &[Vec<f64>],
) -> Result<()> {
    let (seconds, top) = extent;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..seconds, 0.0..top)
        .map_err(|e| drawing(&e))?;
    chart
        .configure_mesh()
        .x_desc("call time (s)")
        .y_desc(y_desc)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(|e| drawing(&e))?;
    for &h in handovers_s.iter().filter(|&&h| h < seconds) {
        chart
            .draw_series(LineSeries::new([(h, 0.0), (h, top)], HANDOVER.mix(0.35)))
            .map_err(|e| drawing(&e))?;
    }
    for ((row, values), color) in rows.iter().zip(series).zip(COLORS) {
        chart
            .draw_series(LineSeries::new(
                per_second(values, top),
                color.stroke_width(2),
            ))
            .map_err(|e| drawing(&e))?
            .label(row.name.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    // A second series per policy, drawn thin, where it says anything (the fps panel has none).
    for (values, color) in thin.iter().zip(COLORS) {
        if values.iter().all(|&v| v == 0.0) {
            continue;
        }
        chart
            .draw_series(LineSeries::new(
                per_second(values, top),
                color.mix(0.7).stroke_width(1),
            ))
            .map_err(|e| drawing(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| drawing(&e))?;
    Ok(())
}

/// One value per second as points at the middle of each second, cut at the panel's `top`.
fn per_second(values: &[f64], top: f64) -> impl Iterator<Item = (f64, f64)> + '_ {
    values
        .iter()
        .enumerate()
        .map(move |(s, &v)| (s as f64 + 0.5, v.min(top)))
}

/// Rows of freeze labels in a lane, so that labels of freezes close in time do not overlap.
const LABEL_ROWS: usize = 2;
/// Pixels a freeze label takes per character (13-px DejaVu Sans), for the overlap check.
const LABEL_CHAR_PX: f64 = 7.5;

/// The freezes of seed 1's call, one lane per policy (default above, the handover-aware policy
/// below, in their line colours): each freeze a span from the last frame before it to the next
/// one, at least 2 px wide, labelled with its length above it, and the handovers as red lines.
/// A label that would overlap the previous two in its lane is left out; the caption gives each
/// policy's count and total.
fn freeze_lanes(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    rows: &[Row; 2],
    seconds: f64,
    handovers_s: &[f64],
) -> Result<()> {
    let summary: Vec<String> = rows
        .iter()
        .map(|row| {
            let qoe = row.results.first().map(|r| &r.qoe);
            format!(
                "{}: {}, {:.1} s frozen",
                row.name,
                qoe.map_or(0, |q| q.freeze_count),
                qoe.map_or(0.0, |q| q.total_freeze.as_secs_f64())
            )
        })
        .collect();
    let caption = format!("freezes (shaded) and their lengths; {}", summary.join("; "));
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..seconds, 0.0..2.0)
        .map_err(|e| drawing(&e))?;
    // The lanes' names on the y axis, where they fit; the caption names both in full.
    let names: Vec<String> = rows
        .iter()
        .zip(["default", "aware"])
        .map(|(row, short)| {
            if row.name.len() <= 9 {
                row.name.clone()
            } else {
                short.to_owned()
            }
        })
        .collect();
    let lane_name = |v: &f64| match v {
        v if (v - 1.5).abs() < 1e-6 => names[0].clone(),
        v if (v - 0.5).abs() < 1e-6 => names[1].clone(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("call time (s)")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_labels(5)
        .y_label_formatter(&lane_name)
        .draw()
        .map_err(|e| drawing(&e))?;
    for &h in handovers_s.iter().filter(|&&h| h < seconds) {
        chart
            .draw_series(LineSeries::new([(h, 0.0), (h, 2.0)], HANDOVER.mix(0.35)))
            .map_err(|e| drawing(&e))?;
    }
    let width_px = f64::from(chart.plotting_area().dim_in_pixel().0);
    let px_per_s = width_px / seconds.max(1.0);
    for (lane, (row, color)) in rows.iter().zip(COLORS).enumerate() {
        let base = 1.0 - lane as f64;
        // The divider between the lanes.
        chart
            .draw_series(LineSeries::new(
                [(0.0, base), (seconds, base)],
                BLACK.mix(0.2),
            ))
            .map_err(|e| drawing(&e))?;
        let freezes = row.results.first().map_or(&[][..], |r| &r.qoe.freezes[..]);
        let mut label_ends = [f64::NEG_INFINITY; LABEL_ROWS];
        for freeze in freezes {
            let from = freeze.from.as_nanos() as f64 / 1e9;
            if from >= seconds {
                break;
            }
            let length = freeze.duration.as_secs_f64();
            let to = (from + length).max(from + 2.0 / px_per_s).min(seconds);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(from, base + 0.06), (to, base + 0.36)],
                    color.mix(0.75).filled(),
                )))
                .map_err(|e| drawing(&e))?;
            let text = freeze_label(freeze.duration);
            // Starts at the freeze, or ends at the right edge when it would run past it.
            let text_px = text.len() as f64 * LABEL_CHAR_PX;
            let x_px = (from * px_per_s).min(width_px - text_px).max(0.0);
            let Some(slot) = label_ends.iter().position(|&end| end + 4.0 < x_px) else {
                continue;
            };
            label_ends[slot] = x_px + text_px;
            let y = base + 0.66 + 0.3 * slot as f64;
            chart
                .draw_series(std::iter::once(Text::new(
                    text,
                    (x_px / px_per_s, y),
                    ("sans-serif", 13).into_font().color(&color),
                )))
                .map_err(|e| drawing(&e))?;
        }
    }
    Ok(())
}

/// A freeze's length as a label: "420 ms" under a second, "1.3 s" from a second.
fn freeze_label(length: Duration) -> String {
    if length < Duration::from_secs(1) {
        format!("{} ms", length.as_millis())
    } else {
        format!("{:.1} s", length.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freeze_labels_read_in_ms_below_a_second_and_in_s_from_a_second() {
        assert_eq!(freeze_label(Duration::from_millis(196)), "196 ms");
        assert_eq!(freeze_label(Duration::from_micros(999_900)), "999 ms");
        assert_eq!(freeze_label(Duration::from_millis(1_000)), "1.0 s");
        assert_eq!(freeze_label(Duration::from_millis(1_249)), "1.2 s");
    }
}

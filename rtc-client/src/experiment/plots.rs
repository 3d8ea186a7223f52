//! The experiment's figures, in the style of the paper's figures 4 to 6: one PNG per metric,
//! bars grouped by scenario, one bar per policy with the 95 % bootstrap interval as an error
//! bar, so the policies' effect and its uncertainty read at a glance. Text uses an embedded
//! DejaVu Sans, so no system font is needed.

use super::Metric;
use super::report::Report;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};
use std::sync::Once;

/// Figure size, pixels.
const SIZE: (u32, u32) = (1000, 620);

/// Bar colours, one per policy in plan order (matplotlib's tab10, as the paper's figures).
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Share of a scenario's slot the bars of its group fill.
const GROUP_WIDTH: f64 = 0.8;

/// Why a figure could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw {path}: {message}")]
pub struct PlotError {
    /// The figure's file.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

/// The file name of `metric`'s figure.
pub fn file_name(metric: Metric) -> String {
    format!("{}.png", metric.key())
}

/// Draws one figure per [`Metric::PLOTTED`] metric into `dir` (which must exist) and returns
/// their paths, in that order.
pub fn draw_all(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    register_fonts();
    Metric::PLOTTED
        .iter()
        .map(|&metric| {
            let path = dir.join(file_name(metric));
            draw(report, metric, &path).map_err(|message| PlotError {
                path: path.clone(),
                message,
            })?;
            Ok(path)
        })
        .collect()
}

fn register_fonts() {
    static FONTS: Once = Once::new();
    FONTS.call_once(|| {
        for family in ["sans-serif", "serif", "monospace"] {
            // A failure only loses the text; the bars still draw.
            let _ =
                plotters::style::register_font(family, FontStyle::Normal, dejavu::sans::regular());
        }
    });
}

/// One bar: its group (scenario), its place in the group (policy), mean and interval.
struct Bar {
    scenario: usize,
    policy: usize,
    mean: f64,
    low: f64,
    high: f64,
}

fn draw(report: &Report, metric: Metric, path: &Path) -> Result<(), String> {
    let plan = &report.plan;
    let scenarios = plan.scenarios.len().max(1);
    let policies = plan.policies.len().max(1);
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let bars: Vec<Bar> = report
        .cells
        .iter()
        .filter_map(|cell| {
            let m = cell.metric(metric)?;
            Some(Bar {
                scenario: plan.scenarios.iter().position(|s| *s == cell.scenario)?,
                policy: plan.policies.iter().position(|p| *p == cell.policy)?,
                mean: finite(m.mean),
                low: finite(m.ci_low),
                high: finite(m.ci_high),
            })
        })
        .collect();
    let top = bars.iter().map(|b| b.high.max(b.mean)).fold(0.0, f64::max);
    // Headroom above the tallest error bar for the legend box in the upper right corner.
    let headroom = 1.15 + 0.06 * policies as f64;
    let top = if top > 0.0 { top * headroom } else { 1.0 };

    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "{} per scenario and policy (mean, 95 % CI over {} calls)",
                metric.label(),
                plan.calls
            ),
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..scenarios as f64, 0.0..top)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .light_line_style(TRANSPARENT)
        .y_label_formatter(&|v| {
            if top >= 10.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        })
        .x_desc("Scenario")
        .y_desc(format!("{} ({})", metric.label(), metric.unit()))
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 18))
        .draw()
        .map_err(|e| err(&e))?;
    // Scenario names centred under their groups (the mesh's own labels sit on round numbers).
    let label = ("sans-serif", 17)
        .into_font()
        .into_text_style(&root)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (i, name) in plan.scenarios.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        root.draw(&Text::new(name.clone(), (x, y + 6), label.clone()))
            .map_err(|e| err(&e))?;
    }

    let width = GROUP_WIDTH / policies as f64;
    for (p, policy) in plan.policies.iter().enumerate() {
        let color = PALETTE[p % PALETTE.len()];
        let mine: Vec<&Bar> = bars.iter().filter(|b| b.policy == p).collect();
        let left =
            |b: &Bar| b.scenario as f64 + (1.0 - GROUP_WIDTH) / 2.0 + width * b.policy as f64;
        chart
            .draw_series(mine.iter().map(|b| {
                let x0 = left(b);
                Rectangle::new([(x0, 0.0), (x0 + width * 0.92, b.mean)], color.filled())
            }))
            .map_err(|e| err(&e))?
            .label(policy.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
        // Error bars: a vertical line from low to high with short caps.
        let whisker = width * 0.2;
        chart
            .draw_series(mine.iter().flat_map(|b| {
                let x = left(b) + width * 0.46;
                let style = BLACK.stroke_width(2);
                [
                    PathElement::new(vec![(x, b.low), (x, b.high)], style),
                    PathElement::new(vec![(x - whisker, b.low), (x + whisker, b.low)], style),
                    PathElement::new(vec![(x - whisker, b.high), (x + whisker, b.high)], style),
                ]
            }))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::report::{CallOutcome, Plan};
    use pacer::telemetry::QoeRecord;

    #[test]
    fn every_plotted_metric_gets_a_png() {
        let plan = Plan {
            scenarios: vec!["a".into(), "b".into()],
            policies: vec!["default".into(), "fixed:900".into()],
            calls: 2,
            seed_base: 1,
            duration_s: 20.0,
            interval_s: 120.0,
            handover: "oracle".into(),
            senders: vec![crate::call::SenderOptions::default().names(); 2],
        };
        let outcomes: Vec<CallOutcome> = (0..8)
            .map(|i| CallOutcome {
                seed: 1 + i % 2,
                qoe: QoeRecord {
                    video_bitrate_kbps: 1000.0 + 100.0 * i as f64,
                    freezes_per_min: 0.5 * (i % 3) as f64,
                    frame_rate: 29.0,
                    e2e_delay_p95_ms: 180.0,
                    ..QoeRecord::default()
                },
                fec_share_pct: 0.0,
                intervals: 1,
            })
            .collect();
        let report = Report::build(plan, &outcomes).unwrap();
        let dir = std::env::temp_dir().join(format!("leopace-plots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let paths = draw_all(&report, &dir).unwrap();
        assert_eq!(paths.len(), 5);
        for path in &paths {
            let bytes = std::fs::read(path).unwrap();
            assert_eq!(&bytes[1..4], b"PNG", "{}", path.display());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

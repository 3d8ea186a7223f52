//! Pictures of links: capacity, one-way delay and loss per second, with handover marks, in one
//! column per link (the emulated one, and a real trace beside it), drawn with plotters to PNG or
//! SVG. Text uses an embedded DejaVu Sans, so no system font is needed.

use anyhow::{Context, Result, anyhow, bail};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// Blue: the forward (video) direction, or a trace's first series.
pub const FORWARD: RGBColor = RGBColor(31, 119, 180);
/// Orange: the reverse (feedback) direction, or a trace's second series.
pub const REVERSE: RGBColor = RGBColor(255, 127, 14);
/// Red: handover marks.
const HANDOVER: RGBColor = RGBColor(214, 39, 40);
/// Grey: slot boundaries without a known handover.
const BOUNDARY: RGBColor = RGBColor(170, 170, 170);

/// A picture file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `.png`
    Png,
    /// `.svg`
    Svg,
}

/// The format of `path` from its extension, or an error naming it.
pub fn format_of(path: &Path) -> Result<Format> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => Ok(Format::Png),
        Some("svg") => Ok(Format::Svg),
        _ => bail!(
            "--plot {}: use a file name ending in .png or .svg",
            path.display()
        ),
    }
}

/// One per-second line.
#[derive(Debug, Clone)]
pub struct Line {
    /// Legend text.
    pub label: String,
    /// Colour.
    pub color: RGBColor,
    /// One value per second; `None` leaves a gap.
    pub values: Vec<Option<f64>>,
}

/// A shaded per-second range (e.g. the delay's minimum to maximum within each second).
#[derive(Debug, Clone)]
pub struct Band {
    /// Colour (drawn translucent).
    pub color: RGBColor,
    /// `(low, high)` per second.
    pub values: Vec<Option<(f64, f64)>>,
}

/// One column of the picture: a link, or a real trace.
#[derive(Debug, Clone, Default)]
pub struct Column {
    /// Caption above the column.
    pub title: String,
    /// Seconds on the x axis.
    pub seconds: usize,
    /// Capacity lines, Mbit/s.
    pub capacity: Vec<Line>,
    /// Delay lines, ms.
    pub delay: Vec<Line>,
    /// Delay ranges, ms.
    pub delay_bands: Vec<Band>,
    /// Loss lines, percent.
    pub loss: Vec<Line>,
    /// Handover instants, seconds.
    pub handovers_s: Vec<f64>,
    /// Slot boundaries (without a known handover), seconds.
    pub boundaries_s: Vec<f64>,
}

/// The whole picture.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Caption.
    pub title: String,
    /// Columns, left to right.
    pub columns: Vec<Column>,
}

/// Registers the embedded DejaVu Sans for every family plotters asks for (once).
pub(crate) fn register_fonts() {
    static FONTS: Once = Once::new();
    FONTS.call_once(|| {
        for family in ["sans-serif", "serif", "monospace"] {
            if plotters::style::register_font(family, FontStyle::Normal, dejavu::sans::regular())
                .is_err()
            {
                tracing::warn!("the embedded font could not be loaded; plot text may be missing");
            }
        }
    });
}

fn drawing<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("drawing failed: {e}")
}

/// Draws `figure` into `path` (`.png` or `.svg`), creating its directory.
pub fn save(path: &Path, figure: &Figure) -> Result<()> {
    let format = format_of(path)?;
    register_fonts();
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the directory {}", parent.display()))?;
    }
    let columns = figure.columns.len().max(1) as u32;
    let size = (120 + 820 * columns, 960);
    let context = || format!("cannot write the picture {}", path.display());
    match format {
        Format::Png => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            draw(&root, figure).with_context(context)?;
            root.present().map_err(drawing).with_context(context)?;
        }
        Format::Svg => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            draw(&root, figure).with_context(context)?;
            root.present().map_err(drawing).with_context(context)?;
        }
    }
    Ok(())
}

/// Largest finite value of some lines and bands, times 1.1, at least `floor`.
fn y_max<'a>(
    lines: impl Iterator<Item = &'a Line>,
    bands: impl Iterator<Item = &'a Band>,
    floor: f64,
) -> f64 {
    let lines = lines.flat_map(|l| l.values.iter().flatten().copied());
    let bands = bands.flat_map(|b| b.values.iter().flatten().map(|&(_, hi)| hi));
    let max = lines
        .chain(bands)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    (max * 1.1).max(floor)
}

fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, figure: &Figure) -> Result<()> {
    root.fill(&WHITE).map_err(drawing)?;
    let root = root
        .titled(&figure.title, ("sans-serif", 22))
        .map_err(drawing)?;
    let cols = &figure.columns;
    // Shared y ranges per row, so that the columns compare at a glance.
    let cap_max = y_max(
        cols.iter().flat_map(|c| &c.capacity),
        std::iter::empty(),
        1.0,
    );
    let delay_max = y_max(
        cols.iter().flat_map(|c| &c.delay),
        cols.iter().flat_map(|c| &c.delay_bands),
        10.0,
    );
    let loss_max = y_max(cols.iter().flat_map(|c| &c.loss), std::iter::empty(), 1.0).min(100.0);
    let areas = root.split_evenly((3, cols.len().max(1)));
    for (i, column) in cols.iter().enumerate() {
        let rows = [
            ("capacity (Mbit/s)", &column.capacity, &[][..], cap_max),
            (
                "one-way delay (ms)",
                &column.delay,
                &column.delay_bands[..],
                delay_max,
            ),
            ("loss (%)", &column.loss, &[][..], loss_max),
        ];
        for (r, (y_label, lines, bands, y_top)) in rows.into_iter().enumerate() {
            let area = &areas[r * cols.len() + i];
            let caption = if r == 0 { column.title.as_str() } else { "" };
            panel(area, caption, column, y_label, lines, bands, y_top, r == 2)?;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    column: &Column,
    y_label: &str,
    lines: &[Line],
    bands: &[Band],
    y_top: f64,
    x_axis_label: bool,
) -> Result<()> {
    let x_max = column.seconds.max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 17))
        .margin(8)
        .x_label_area_size(if x_axis_label { 40 } else { 25 })
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..y_top)
        .map_err(drawing)?;
    // Enough decimals that the axis labels differ (loss is often under 2 %).
    let decimals = if y_top <= 2.0 {
        2
    } else if y_top <= 20.0 {
        1
    } else {
        0
    };
    let y_format = move |y: &f64| format!("{y:.decimals$}");
    let mut mesh = chart.configure_mesh();
    mesh.y_desc(y_label)
        .x_labels(10)
        .y_labels(6)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&y_format)
        .light_line_style(RGBColor(242, 242, 242));
    if x_axis_label {
        mesh.x_desc("seconds");
    }
    mesh.draw().map_err(drawing)?;

    // Boundaries, then handovers, under the data.
    for (marks, color, width) in [
        (&column.boundaries_s, BOUNDARY, 1),
        (&column.handovers_s, HANDOVER, 1),
    ] {
        for &x in marks {
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x, 0.0), (x, y_top)],
                    4,
                    4,
                    color.mix(0.6).stroke_width(width),
                ))
                .map_err(drawing)?;
        }
    }
    for band in bands {
        chart
            .draw_series(band.values.iter().enumerate().filter_map(|(s, v)| {
                v.map(|(lo, hi)| {
                    Rectangle::new(
                        [(s as f64, lo), (s as f64 + 1.0, hi.max(lo))],
                        band.color.mix(0.18).filled(),
                    )
                })
            }))
            .map_err(drawing)?;
    }
    if lines.is_empty() {
        chart
            .draw_series(std::iter::once(Text::new(
                "not in this trace",
                (x_max * 0.4, y_top * 0.5),
                ("sans-serif", 16).into_font().color(&BOUNDARY),
            )))
            .map_err(drawing)?;
        return Ok(());
    }
    for line in lines {
        let mut labelled = false;
        for segment in segments(&line.values) {
            let series = chart
                .draw_series(LineSeries::new(segment, line.color.stroke_width(2)))
                .map_err(drawing)?;
            if !labelled {
                let color = line.color;
                series.label(line.label.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
                });
                labelled = true;
            }
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(200, 200, 200))
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(drawing)?;
    Ok(())
}

/// Runs of consecutive values as `(second + 0.5, value)` points.
fn segments(values: &[Option<f64>]) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut current = Vec::new();
    for (s, v) in values.iter().enumerate() {
        match v {
            Some(v) if v.is_finite() => current.push((s as f64 + 0.5, *v)),
            _ => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

//! Pictures: the forecast timeline, line charts (evaluation), and obstruction maps, drawn with
//! plotters to PNG (bitmap backend) or SVG. Text uses an embedded DejaVu Sans, so no system font
//! is needed.

use anyhow::{Context, Result, anyhow, bail};
use handover_predictor::dish::{MapGeometry, ObstructionMap, PixelPoint, SkyDirection};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use std::sync::Once;

/// Output format, from the file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `.png`
    Png,
    /// `.svg`
    Svg,
}

/// The format of `path`, or an error naming it.
pub fn check_format(path: &Path) -> Result<Format> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("png") => Ok(Format::Png),
        Some("svg") => Ok(Format::Svg),
        _ => bail!(
            "cannot tell the picture format of {}: use a .png or .svg file name",
            path.display()
        ),
    }
}

/// Something that can draw itself on any plotters backend.
pub trait Picture {
    /// Size in pixels.
    fn size(&self) -> (u32, u32);
    /// Draws on `root`.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>;
}

fn register_fonts() {
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

/// A plotters error as an anyhow one.
fn drawing<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("drawing failed: {e}")
}

/// Draws `picture` into `path` (`.png` or `.svg`), creating its directory.
pub fn save(path: &Path, picture: &impl Picture) -> Result<()> {
    let format = check_format(path)?;
    register_fonts();
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the directory {}", parent.display()))?;
    }
    let size = picture.size();
    let context = || format!("cannot write the picture {}", path.display());
    match format {
        Format::Png => {
            let root = BitMapBackend::new(path, size).into_drawing_area();
            picture.draw(&root).with_context(context)?;
            root.present().map_err(drawing).with_context(context)?;
        }
        Format::Svg => {
            let root = SVGBackend::new(path, size).into_drawing_area();
            picture.draw(&root).with_context(context)?;
            root.present().map_err(drawing).with_context(context)?;
        }
    }
    Ok(())
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
    RGBColor(188, 189, 34),
];

const HANDOVER: RGBColor = RGBColor(214, 39, 40);

/// One second of the serving timeline, relative to t0: what [`TimelinePicture`] draws.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Seconds after t0 (the first sample may be up to 1 s before it).
    pub offset_s: f64,
    /// The serving satellite and its elevation.
    pub serving: Option<(u64, f64)>,
}

/// The forecast timeline: the serving satellite's elevation over the 120 s, handover marks.
#[derive(Debug, Clone)]
pub struct TimelinePicture {
    /// Caption.
    pub title: String,
    /// The serving satellite second by second (empty for the mirror).
    pub samples: Vec<Sample>,
    /// When the handovers happen, seconds after t0.
    pub handover_offsets_s: Vec<f64>,
    /// The forecast steps with a handover.
    pub steps: Vec<usize>,
}

impl Picture for TimelinePicture {
    fn size(&self) -> (u32, u32) {
        (1000, 500)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        root.fill(&WHITE).map_err(drawing)?;
        let low = self
            .samples
            .iter()
            .filter_map(|s| s.serving.map(|(_, el)| el))
            .fold(90.0_f64, f64::min);
        let y_min = ((low - 5.0) / 10.0).floor().clamp(0.0, 80.0) * 10.0;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(55)
            .build_cartesian_2d(0.0..120.0_f64, y_min..90.0_f64)
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .x_desc("seconds after t0")
            .y_desc("serving satellite elevation (deg)")
            .x_labels(13)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .light_line_style(RGBColor(245, 245, 245))
            .draw()
            .map_err(drawing)?;

        // Forecast steps with a handover: shaded one-second bands.
        chart
            .draw_series(self.steps.iter().map(|&k| {
                Rectangle::new(
                    [(k as f64, y_min), (k as f64 + 1.0, 90.0)],
                    HANDOVER.mix(0.15).filled(),
                )
            }))
            .map_err(drawing)?;

        // One line per serving satellite run.
        let mut runs: Vec<(u64, Vec<(f64, f64)>)> = Vec::new();
        for sample in &self.samples {
            match sample.serving {
                Some((id, el)) => {
                    let x = sample.offset_s.clamp(0.0, 120.0);
                    match runs.last_mut() {
                        Some((last, points)) if *last == id => points.push((x, el)),
                        _ => runs.push((id, vec![(x, el)])),
                    }
                }
                None => runs.push((0, Vec::new())),
            }
        }
        for (index, (id, points)) in runs.iter().filter(|(_, p)| !p.is_empty()).enumerate() {
            let colour = PALETTE[index % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    colour.stroke_width(3),
                ))
                .map_err(drawing)?;
            // The NORAD label sits above the middle of the run, centred, so it clears the
            // handover lines at the run's ends, and is kept 4 s inside the plot's edges so that
            // a short run at either end is not clipped.
            if let (Some(&(x_first, _)), Some(&(x_last, _))) = (points.first(), points.last()) {
                let middle = ((x_first + x_last) / 2.0).clamp(4.0, 116.0);
                let y = points
                    .iter()
                    .min_by(|a, b| (a.0 - middle).abs().total_cmp(&(b.0 - middle).abs()))
                    .map_or(y_min, |p| p.1);
                let style = ("sans-serif", 12)
                    .into_font()
                    .color(&colour)
                    .pos(Pos::new(HPos::Center, VPos::Bottom));
                let label = Text::new(format!("{id}"), (middle, (y + 1.0).min(88.0)), style);
                chart.draw_series(std::iter::once(label)).map_err(drawing)?;
            }
        }

        // Handover instants: dashed vertical lines.
        for &x in &self.handover_offsets_s {
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x, y_min), (x, 90.0)],
                    6,
                    4,
                    HANDOVER.stroke_width(2),
                ))
                .map_err(drawing)?;
        }
        // A legend entry for the handovers (drawn as a small key in the corner).
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, y_min), (0.0, y_min)],
                HANDOVER.stroke_width(2),
            )))
            .map_err(drawing)?
            .label("handover (dashed), forecast step (shaded)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], HANDOVER.stroke_width(2)));
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, y_min), (0.0, y_min)],
                PALETTE[0].stroke_width(3),
            )))
            .map_err(drawing)?
            .label("serving satellite (NORAD id)")
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], PALETTE[0].stroke_width(3))
            });
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(drawing)?;
        Ok(())
    }
}

/// A line chart of several named series over a shared x axis (the evaluation's per-window
/// counts or F1).
#[derive(Debug, Clone)]
pub struct LinesPicture {
    /// Caption.
    pub title: String,
    /// X axis label.
    pub x_desc: String,
    /// Y axis label.
    pub y_desc: String,
    /// The series; dashed ones are drawn in black (the reference, e.g. the truth), the others
    /// in the palette's colours.
    pub series: Vec<Series>,
    /// Vertical separators with a label: `(x, label)` (e.g. where each location's windows
    /// start).
    pub sections: Vec<(f64, String)>,
    /// Vertical distance between the solid series, in y units: they are drawn shifted by
    /// `+1, -1, +2, -2, ... x offset`, never on the dashed reference (drawn last, on top), so
    /// that series with equal values stay visible side by side (0: drawn where they are). Each
    /// solid series also has its own marker.
    pub offset: f64,
}

/// Whole numbers without a decimal point ("8", not "8.0"); others with one decimal.
fn tick_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

impl Picture for LinesPicture {
    fn size(&self) -> (u32, u32) {
        (1100, 550)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        root.fill(&WHITE).map_err(drawing)?;
        let points = self.series.iter().flat_map(|s| s.points.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, 0.0_f64, f64::MIN);
        for &(x, y) in points {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if x0 > x1 {
            (x0, x1, y1) = (0.0, 1.0, 1.0);
        }
        if x1 - x0 < 1e-9 {
            x1 = x0 + 1.0;
        }
        // Headroom above the data for the legend (upper right), so that it hides no point.
        let y1 = if y1 <= y0 {
            y0 + 1.0
        } else {
            y1 + (y1 - y0) * (0.1 + 0.06 * self.series.len() as f64)
        };
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(55)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .x_desc(self.x_desc.as_str())
            .y_desc(self.y_desc.as_str())
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| tick_label(*y))
            .light_line_style(RGBColor(248, 248, 248))
            .draw()
            .map_err(drawing)?;
        for (x, label) in &self.sections {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(*x, y0), (*x, y1)],
                    RGBColor(120, 120, 120).stroke_width(1),
                )))
                .map_err(drawing)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    label.clone(),
                    (*x + (x1 - x0) * 0.005, y1 - (y1 - y0) * 0.02),
                    ("sans-serif", 13).into_font().color(&RGBColor(80, 80, 80)),
                )))
                .map_err(drawing)?;
        }
        let mut colours = PALETTE.iter().cycle();
        let mut k = 0usize;
        // Solid series first, the dashed reference last, so that it is never hidden.
        let order = self
            .series
            .iter()
            .filter(|s| !s.dashed)
            .chain(self.series.iter().filter(|s| s.dashed));
        for Series {
            name,
            points,
            dashed,
        } in order
        {
            if *dashed {
                let style = BLACK.stroke_width(2);
                chart
                    .draw_series(DashedLineSeries::new(points.iter().copied(), 6, 4, style))
                    .map_err(drawing)?
                    .label(name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
                chart
                    .draw_series(points.iter().map(|&p| Circle::new(p, 2, BLACK.filled())))
                    .map_err(drawing)?;
                continue;
            }
            let colour = colours.next().copied().unwrap_or(BLACK);
            let step = (k / 2 + 1) as f64;
            let shift = if k.is_multiple_of(2) { step } else { -step } * self.offset;
            let marker = k % 4;
            k += 1;
            let shifted: Vec<(f64, f64)> = points.iter().map(|&(x, y)| (x, y + shift)).collect();
            let style = colour.stroke_width(2);
            chart
                .draw_series(LineSeries::new(shifted.iter().copied(), style))
                .map_err(drawing)?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (20, 0)], style)
                        + marker_at(marker, (10, 0), colour)
                });
            chart
                .draw_series(
                    shifted
                        .iter()
                        .map(|&p| EmptyElement::at(p) + marker_at(marker, (0, 0), colour)),
                )
                .map_err(drawing)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(drawing)?;
        Ok(())
    }
}

/// Marker `kind` (0 circle, 1 triangle, 2 square, 3 cross) at a pixel offset, as one element
/// type so that series and legend entries can share it.
fn marker_at<DB: DrawingBackend>(
    kind: usize,
    at: (i32, i32),
    colour: RGBColor,
) -> DynElement<'static, DB, (i32, i32)> {
    match kind {
        0 => Circle::new(at, 4, colour.filled()).into_dyn(),
        1 => TriangleMarker::new(at, 6, colour.filled()).into_dyn(),
        2 => Rectangle::new(
            [(at.0 - 4, at.1 - 4), (at.0 + 4, at.1 + 4)],
            colour.filled(),
        )
        .into_dyn(),
        _ => Cross::new(at, 5, colour.stroke_width(2)).into_dyn(),
    }
}

/// One named line of a [`LinesPicture`].
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// The points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed, in black.
    pub dashed: bool,
}

/// Line charts stacked vertically, one panel each.
#[derive(Debug, Clone)]
pub struct Panels {
    /// The panels, top to bottom.
    pub panels: Vec<LinesPicture>,
}

impl Picture for Panels {
    fn size(&self) -> (u32, u32) {
        (1100, 480 * self.panels.len().max(1) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        root.fill(&WHITE).map_err(drawing)?;
        let areas = root.split_evenly((self.panels.len().max(1), 1));
        for (panel, area) in self.panels.iter().zip(&areas) {
            panel.draw(area)?;
        }
        Ok(())
    }
}

/// An obstruction map: pixels shaded by value, no-data distinct, elevation circles, compass
/// letters, and optionally the detected track with its handovers.
#[derive(Debug, Clone)]
pub struct MapPicture<'a> {
    /// Caption.
    pub title: String,
    /// The map.
    pub map: &'a ObstructionMap,
    /// Its pixel <-> sky geometry.
    pub geometry: MapGeometry,
    /// Detected track, in time order, split into runs (one per slot).
    pub track: Vec<Vec<PixelPoint>>,
    /// Where handovers were detected (the new satellite's first position).
    pub handovers: Vec<PixelPoint>,
}

const CELL: i32 = 5;
const MARGIN: i32 = 45;
const TOP: i32 = 40;
const LEGEND: i32 = 150;

const NO_DATA_COLOUR: RGBColor = RGBColor(205, 205, 205);

/// Viridis-like shading of a value in [0, 1].
fn shade(value: f32) -> RGBColor {
    const STOPS: [(f32, (f32, f32, f32)); 5] = [
        (0.0, (68.0, 1.0, 84.0)),
        (0.25, (59.0, 82.0, 139.0)),
        (0.5, (33.0, 145.0, 140.0)),
        (0.75, (94.0, 201.0, 98.0)),
        (1.0, (253.0, 231.0, 37.0)),
    ];
    let v = value.clamp(0.0, 1.0);
    for pair in STOPS.windows(2) {
        let ((a, ca), (b, cb)) = (pair[0], pair[1]);
        if v <= b {
            let t = (v - a) / (b - a);
            let mix = |x: f32, y: f32| (x + (y - x) * t).round() as u8;
            return RGBColor(mix(ca.0, cb.0), mix(ca.1, cb.1), mix(ca.2, cb.2));
        }
    }
    RGBColor(253, 231, 37)
}

impl MapPicture<'_> {
    fn to_image(&self, p: PixelPoint) -> (i32, i32) {
        (
            MARGIN + ((p.col + 0.5) * f64::from(CELL)).round() as i32,
            TOP + MARGIN + ((p.row + 0.5) * f64::from(CELL)).round() as i32,
        )
    }
}

impl Picture for MapPicture<'_> {
    fn size(&self) -> (u32, u32) {
        let w = 2 * MARGIN + CELL * self.map.cols() as i32 + LEGEND;
        let h = TOP + 2 * MARGIN + CELL * self.map.rows() as i32;
        (w.max(300) as u32, h.max(300) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()> {
        root.fill(&WHITE).map_err(drawing)?;
        let centred = |size: i32| {
            TextStyle::from(("sans-serif", size).into_font())
                .pos(Pos::new(HPos::Center, VPos::Center))
        };
        let (width, _) = self.size();
        root.draw(&Text::new(
            self.title.clone(),
            (width as i32 / 2, TOP / 2 + 4),
            centred(18),
        ))
        .map_err(drawing)?;

        // Pixels.
        for (index, &value) in self.map.snr().iter().enumerate() {
            let pixel = self.map.pixel_at(index);
            let colour = if value >= 0.0 {
                shade(value)
            } else if self.geometry.in_disc(pixel) {
                NO_DATA_COLOUR
            } else {
                WHITE
            };
            if colour == WHITE {
                continue;
            }
            let x = MARGIN + pixel.col as i32 * CELL;
            let y = TOP + MARGIN + pixel.row as i32 * CELL;
            root.draw(&Rectangle::new(
                [(x, y), (x + CELL, y + CELL)],
                colour.filled(),
            ))
            .map_err(drawing)?;
        }

        // Elevation circles around the zenith: the rim (the map's horizon), 30 and 60 degrees.
        let zenith = self.to_image(PixelPoint {
            row: self.geometry.zenith_row,
            col: self.geometry.zenith_col,
        });
        let rim_elevation = 90.0 - self.geometry.max_theta_deg;
        let mut circles = vec![(rim_elevation, BLACK.stroke_width(2))];
        for el in [30.0, 60.0] {
            if el > rim_elevation {
                circles.push((el, RGBColor(90, 90, 90).stroke_width(1)));
            }
        }
        for (el, style) in circles {
            let radius = (90.0 - el) / self.geometry.deg_per_px * f64::from(CELL);
            root.draw(&Circle::new(zenith, radius.round() as i32, style))
                .map_err(drawing)?;
            let label_at = (zenith.0 + 3, zenith.1 - radius.round() as i32 + 8);
            root.draw(&Text::new(
                format!("{el:.0}°"),
                label_at,
                ("sans-serif", 11).into_font().color(&RGBColor(60, 60, 60)),
            ))
            .map_err(drawing)?;
        }
        // The zenith.
        root.draw(&Cross::new(zenith, 5, BLACK.stroke_width(2)))
            .map_err(drawing)?;

        // Compass letters just outside the rim.
        for (az, letter) in [(0.0, "N"), (90.0, "E"), (180.0, "S"), (270.0, "W")] {
            let point = self.geometry.to_point(SkyDirection {
                azimuth_deg: az,
                elevation_deg: rim_elevation - 6.0 * self.geometry.deg_per_px,
            });
            root.draw(&Text::new(letter, self.to_image(point), centred(18)))
                .map_err(drawing)?;
        }

        // The detected track: a line per slot, dots at each point.
        for run in &self.track {
            let points: Vec<(i32, i32)> = run.iter().map(|&p| self.to_image(p)).collect();
            if points.len() > 1 {
                root.draw(&PathElement::new(points.clone(), WHITE.stroke_width(4)))
                    .map_err(drawing)?;
                root.draw(&PathElement::new(points.clone(), BLACK.stroke_width(2)))
                    .map_err(drawing)?;
            }
            for p in points {
                root.draw(&Circle::new(p, 2, BLACK.filled()))
                    .map_err(drawing)?;
            }
        }
        for &h in &self.handovers {
            root.draw(&Circle::new(self.to_image(h), 7, HANDOVER.stroke_width(3)))
                .map_err(drawing)?;
        }

        // Legend: the colour scale, no data, track, handover.
        let lx = 2 * MARGIN + CELL * self.map.cols() as i32 - 20;
        let ly = TOP + MARGIN;
        let label = |text: String, at: (i32, i32)| {
            Text::new(text, at, ("sans-serif", 13).into_font().color(&BLACK))
        };
        root.draw(&label("value".into(), (lx, ly - 18)))
            .map_err(drawing)?;
        let steps = 100;
        for k in 0..steps {
            let v = 1.0 - k as f32 / (steps - 1) as f32;
            let y = ly + k * 2;
            root.draw(&Rectangle::new(
                [(lx, y), (lx + 20, y + 2)],
                shade(v).filled(),
            ))
            .map_err(drawing)?;
        }
        root.draw(&label("1".into(), (lx + 26, ly - 6)))
            .map_err(drawing)?;
        root.draw(&label("0".into(), (lx + 26, ly + 2 * steps - 10)))
            .map_err(drawing)?;
        let mut y = ly + 2 * steps + 20;
        root.draw(&Rectangle::new(
            [(lx, y), (lx + 20, y + 14)],
            NO_DATA_COLOUR.filled(),
        ))
        .map_err(drawing)?;
        root.draw(&label("no data".into(), (lx + 26, y)))
            .map_err(drawing)?;
        if !self.track.is_empty() {
            y += 24;
            root.draw(&PathElement::new(
                vec![(lx, y + 7), (lx + 20, y + 7)],
                BLACK.stroke_width(2),
            ))
            .map_err(drawing)?;
            root.draw(&label("track".into(), (lx + 26, y)))
                .map_err(drawing)?;
            y += 24;
            root.draw(&Circle::new((lx + 10, y + 7), 7, HANDOVER.stroke_width(3)))
                .map_err(drawing)?;
            root.draw(&label("handover".into(), (lx + 26, y)))
                .map_err(drawing)?;
        }
        Ok(())
    }
}

/// The pixel grid's lit pixels (value > 0), for summaries.
pub fn lit_pixels(map: &ObstructionMap) -> usize {
    map.snr().iter().filter(|&&v| v > 0.0).count()
}

/// Pixels inside the disc that have data, for summaries.
pub fn seen_pixels(map: &ObstructionMap, geometry: &MapGeometry) -> usize {
    map.snr()
        .iter()
        .enumerate()
        .filter(|&(i, &v)| v >= 0.0 && geometry.in_disc(map.pixel_at(i)))
        .count()
}

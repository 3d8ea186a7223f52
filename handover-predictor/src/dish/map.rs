//! The obstruction map as plain data, and its geometry: pixel <-> (azimuth, elevation) for the
//! two reference frames, and which pixels a sky direction paints.
//!
//! Sans-I/O: nothing here reads a clock or a socket. References are to sections of
//! `../shared/reference/starlink-dish-and-orbits.md`.
//!
//! # Conventions (reference B2)
//!
//! The map is a polar image of the sky: distance from the zenith pixel is proportional to the
//! zenith angle, [`MAX_THETA_DEG`] = 80 degrees at [`RIM_RADIUS_PX`] = 62 px, i.e.
//! [`DEG_PER_PX`] = 80/62 = 1.290 degrees per pixel (LEOViz `data_feature_extraction.py` and the
//! SatInView notebooks, as summarised in B2).
//!
//! * FRAME_EARTH (B1, B2): with `(row, col)` 0-based, `dx = col - 62`, `dy = (123 - row) - 62`,
//!   zenith angle `theta = sqrt(dx^2 + dy^2) * 80/62`, azimuth `atan2(dx, dy)` (0 = north at the
//!   top, 90 = east at the right), elevation `90 - theta`. Note that this puts the zenith at
//!   row 61, col 62: the geometric centre of a 123-px grid is index 61 and the tools use 62 for
//!   the column (B2: a +/-1 px, +/-1.3 degree ambiguity to calibrate on a real dish). We follow
//!   the tools exactly ([`EARTH_ZENITH_ROW`], [`EARTH_ZENITH_COL`]); a caller who calibrates a
//!   dish can set other centres on [`MapGeometry`].
//! * FRAME_UT (B2, LEOViz only, empirical): zenith at `(row 62 - tilt / (80/62), col 62)` using
//!   `alignment_stats.tilt_angle_deg`, `dx = col - 62`, `dy = row - zenith_row` (down positive),
//!   azimuth `atan2(dx, dy) + boresight_azimuth_deg` (bottom-centre = boresight azimuth, B1),
//!   elevation `90 - theta`. The handedness of FRAME_UT is not documented by SpaceX (B2, E):
//!   validate against a TLE-predicted pass before trusting its azimuths.

use chrono::{DateTime, Utc};
use std::fmt;

/// Rows of the map on every observed dish (reference A6).
pub const MAP_ROWS: usize = 123;
/// Columns of the map on every observed dish (reference A6).
pub const MAP_COLS: usize = 123;
/// Zenith angle at the rim of the disc, degrees (reference A6 `max_theta_deg`, observed 80).
pub const MAX_THETA_DEG: f64 = 80.0;
/// Radius, in pixels, at which the zenith angle reaches [`MAX_THETA_DEG`] (reference B2).
pub const RIM_RADIUS_PX: f64 = 62.0;
/// Degrees of zenith angle per pixel: 80/62 = 1.290 (reference B2).
pub const DEG_PER_PX: f64 = MAX_THETA_DEG / RIM_RADIUS_PX;
/// The value of a pixel that has never seen a satellite since the last reset, and of every
/// pixel outside the disc (references A6, B1).
pub const NO_DATA: f32 = -1.0;
/// Zenith row in FRAME_EARTH as implied by the researchers' formula `dy = (123 - row) - 62`
/// (reference B2).
pub const EARTH_ZENITH_ROW: f64 = 61.0;
/// Zenith column in FRAME_EARTH, `dx = col - 62` (reference B2).
pub const EARTH_ZENITH_COL: f64 = 62.0;
/// Row of the map centre from which FRAME_UT's zenith is offset by the tilt (reference B2).
pub const UT_CENTRE_ROW: f64 = 62.0;
/// Column of the zenith in FRAME_UT (reference B2).
pub const UT_CENTRE_COL: f64 = 62.0;
/// Largest map side the decoder accepts. Real dishes send 123 (A6); anything far larger is a
/// malformed reply, not a finer map.
pub const MAX_MAP_SIDE: usize = 1024;

/// Orientation of a map as reported by `map_reference_frame` (reference A6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MapFrame {
    /// Not reported (firmware before August 2024) or a value this crate does not know.
    #[default]
    Unknown,
    /// Centre = zenith, top = true north, right = east (B1).
    Earth,
    /// Dish-relative; bottom-centre = boresight azimuth (B1).
    Ut,
}

impl MapFrame {
    /// The frame for a wire value (`FRAME_UNKNOWN` = 0, `FRAME_EARTH` = 1, `FRAME_UT` = 2, A6).
    /// Values added by future firmware decode as [`MapFrame::Unknown`] rather than failing.
    pub fn from_wire(value: i32) -> Self {
        match value {
            1 => Self::Earth,
            2 => Self::Ut,
            _ => Self::Unknown,
        }
    }

    /// The wire value (A6).
    pub fn to_wire(self) -> i32 {
        match self {
            Self::Unknown => 0,
            Self::Earth => 1,
            Self::Ut => 2,
        }
    }
}

/// Why a map cannot be built from what was received.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MapError {
    /// Zero, or larger than [`MAX_MAP_SIDE`].
    #[error(
        "map dimensions {rows} x {cols} are zero or absurd (each side must be 1..={MAX_MAP_SIDE}; real dishes send 123 x 123)"
    )]
    BadDimensions {
        /// Announced rows.
        rows: u64,
        /// Announced columns.
        cols: u64,
    },
    /// `snr` does not hold `rows x cols` values.
    #[error("snr has {len} values but the map announces {rows} x {cols} = {expected}")]
    SnrLength {
        /// Announced rows.
        rows: usize,
        /// Announced columns.
        cols: usize,
        /// `rows * cols`.
        expected: usize,
        /// Values received.
        len: usize,
    },
    /// A pixel is NaN or infinite (valid values are in [0, 1] or -1, A6).
    #[error("snr value at index {index} is not finite ({value})")]
    NonFiniteSnr {
        /// Row-major index.
        index: usize,
        /// The value.
        value: f32,
    },
    /// `max_theta_deg` outside (0, 90].
    #[error("max_theta_deg {0} is outside (0, 90]")]
    BadMaxTheta(f32),
}

/// A decoded obstruction map (reference A6): plain data, validated.
///
/// `snr` is row-major (`index = row * cols + col`, row 0 = top edge); values in [0, 1] are the
/// signal quality seen in that direction since the last reset, [`NO_DATA`] = never seen.
#[derive(Debug, Clone, PartialEq)]
pub struct ObstructionMap {
    rows: usize,
    cols: usize,
    snr: Vec<f32>,
    /// `min_elevation_deg` (deprecated on the wire, 0 when not sent; A6).
    pub min_elevation_deg: f32,
    /// Zenith angle at the disc's rim; [`MAX_THETA_DEG`] when the dish did not send it.
    pub max_theta_deg: f32,
    /// `map_reference_frame` (A6).
    pub frame: MapFrame,
    /// When the dish says it produced the map. Only the simulated dish reports this (gRPC
    /// metadata [`super::DISH_TIME_METADATA`]); a real dish leaves it `None`.
    pub dish_time: Option<DateTime<Utc>>,
}

impl ObstructionMap {
    /// Builds a map from its parts, checking what a decoder must check: both sides in
    /// `1..=MAX_MAP_SIDE`, `snr.len() == rows * cols`, every value finite, `max_theta_deg` in
    /// (0, 90] (0 means "not sent" and becomes [`MAX_THETA_DEG`]).
    pub fn new(
        rows: u64,
        cols: u64,
        snr: Vec<f32>,
        max_theta_deg: f32,
        frame: MapFrame,
    ) -> Result<Self, MapError> {
        let side_ok = |n: u64| (1..=MAX_MAP_SIDE as u64).contains(&n);
        if !side_ok(rows) || !side_ok(cols) {
            return Err(MapError::BadDimensions { rows, cols });
        }
        let (rows, cols) = (rows as usize, cols as usize);
        let expected = rows * cols;
        if snr.len() != expected {
            return Err(MapError::SnrLength {
                rows,
                cols,
                expected,
                len: snr.len(),
            });
        }
        if let Some((index, &value)) = snr.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(MapError::NonFiniteSnr { index, value });
        }
        let max_theta_deg = if max_theta_deg == 0.0 {
            MAX_THETA_DEG as f32
        } else if max_theta_deg.is_finite() && max_theta_deg > 0.0 && max_theta_deg <= 90.0 {
            max_theta_deg
        } else {
            return Err(MapError::BadMaxTheta(max_theta_deg));
        };
        Ok(Self {
            rows,
            cols,
            snr,
            min_elevation_deg: 0.0,
            max_theta_deg,
            frame,
            dish_time: None,
        })
    }

    /// An all-[`NO_DATA`] map of the given size: what a dish shows right after a reset.
    pub fn empty(rows: usize, cols: usize, frame: MapFrame) -> Self {
        Self {
            rows,
            cols,
            snr: vec![NO_DATA; rows * cols],
            min_elevation_deg: 0.0,
            max_theta_deg: MAX_THETA_DEG as f32,
            frame,
            dish_time: None,
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// All pixels, row-major.
    pub fn snr(&self) -> &[f32] {
        &self.snr
    }

    /// The row-major index of a pixel, or `None` outside the grid.
    pub fn index(&self, pixel: Pixel) -> Option<usize> {
        (pixel.row < self.rows && pixel.col < self.cols).then(|| pixel.row * self.cols + pixel.col)
    }

    /// The value of one pixel, or `None` outside the grid.
    pub fn get(&self, pixel: Pixel) -> Option<f32> {
        self.index(pixel).map(|i| self.snr[i])
    }

    /// Sets one pixel; returns false (and changes nothing) outside the grid.
    pub fn set(&mut self, pixel: Pixel, value: f32) -> bool {
        match self.index(pixel) {
            Some(i) => {
                self.snr[i] = value;
                true
            }
            None => false,
        }
    }

    /// The pixel at a row-major index.
    pub fn pixel_at(&self, index: usize) -> Pixel {
        Pixel {
            row: index / self.cols,
            col: index % self.cols,
        }
    }

    /// Binarises the map: `true` where `snr > threshold`. SatInView keeps any positive value
    /// (threshold 0); LEOViz keeps only exact 1.0 (reference B3).
    pub fn lit(&self, threshold: f32) -> Vec<bool> {
        self.snr.iter().map(|&v| v > threshold).collect()
    }
}

/// One pixel of the map, 0-based, row 0 = top edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pixel {
    /// Row, 0 = top.
    pub row: usize,
    /// Column, 0 = left.
    pub col: usize,
}

/// A point on the map with sub-pixel precision (a centroid), in pixel units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PixelPoint {
    /// Row, 0 = centre of the top row.
    pub row: f64,
    /// Column, 0 = centre of the left column.
    pub col: f64,
}

impl PixelPoint {
    /// Euclidean distance in pixels.
    pub fn distance(self, other: PixelPoint) -> f64 {
        (self.row - other.row).hypot(self.col - other.col)
    }
}

impl From<Pixel> for PixelPoint {
    fn from(p: Pixel) -> Self {
        Self {
            row: p.row as f64,
            col: p.col as f64,
        }
    }
}

impl fmt::Display for PixelPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "(row {:.1}, col {:.1})", self.row, self.col)
    }
}

/// A direction in the observer's sky (no range: the map has none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkyDirection {
    /// Degrees clockwise from true north, in [0, 360).
    pub azimuth_deg: f64,
    /// Degrees above the horizon.
    pub elevation_deg: f64,
}

impl SkyDirection {
    /// The direction of a [`crate::sky::SkyPosition`].
    pub fn of(position: &crate::sky::SkyPosition) -> Self {
        Self {
            azimuth_deg: position.azimuth_deg,
            elevation_deg: position.elevation_deg,
        }
    }

    /// Great-circle angle between two directions, degrees.
    pub fn separation_deg(self, other: SkyDirection) -> f64 {
        let (a1, e1) = (
            self.azimuth_deg.to_radians(),
            self.elevation_deg.to_radians(),
        );
        let (a2, e2) = (
            other.azimuth_deg.to_radians(),
            other.elevation_deg.to_radians(),
        );
        let cos = e1.sin() * e2.sin() + e1.cos() * e2.cos() * (a1 - a2).cos();
        cos.clamp(-1.0, 1.0).acos().to_degrees()
    }
}

/// How a map is oriented in the sky (reference B1, B2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Orientation {
    /// FRAME_EARTH: top = north, right = east, up in the image = away from the viewer's feet.
    Earth,
    /// FRAME_UT: dish-relative, bottom-centre = boresight azimuth; needs the dish's alignment
    /// (`alignment_stats`, reference A7).
    Ut {
        /// `alignment_stats.tilt_angle_deg`.
        tilt_deg: f64,
        /// `alignment_stats.boresight_azimuth_deg`.
        boresight_azimuth_deg: f64,
    },
}

/// Pixel <-> sky geometry of one map (conventions in the module docs, reference B2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MapGeometry {
    /// Rows of the grid.
    pub rows: usize,
    /// Columns of the grid.
    pub cols: usize,
    /// Row of the zenith (fractional allowed).
    pub zenith_row: f64,
    /// Column of the zenith.
    pub zenith_col: f64,
    /// Degrees of zenith angle per pixel.
    pub deg_per_px: f64,
    /// Zenith angle of the disc's rim; directions beyond it are not on the map.
    pub max_theta_deg: f64,
    /// Frame.
    pub orientation: Orientation,
}

impl Default for MapGeometry {
    fn default() -> Self {
        Self::earth()
    }
}

impl MapGeometry {
    /// FRAME_EARTH as the researchers implement it (reference B2): 123 x 123, zenith at
    /// (row 61, col 62), 80/62 degrees per pixel.
    pub fn earth() -> Self {
        Self {
            rows: MAP_ROWS,
            cols: MAP_COLS,
            zenith_row: EARTH_ZENITH_ROW,
            zenith_col: EARTH_ZENITH_COL,
            deg_per_px: DEG_PER_PX,
            max_theta_deg: MAX_THETA_DEG,
            orientation: Orientation::Earth,
        }
    }

    /// FRAME_UT as LEOViz implements it (reference B2): zenith at
    /// (row 62 - tilt / (80/62), col 62), azimuth offset by the boresight azimuth.
    pub fn ut(tilt_deg: f64, boresight_azimuth_deg: f64) -> Self {
        Self {
            rows: MAP_ROWS,
            cols: MAP_COLS,
            zenith_row: UT_CENTRE_ROW - tilt_deg / DEG_PER_PX,
            zenith_col: UT_CENTRE_COL,
            deg_per_px: DEG_PER_PX,
            max_theta_deg: MAX_THETA_DEG,
            orientation: Orientation::Ut {
                tilt_deg,
                boresight_azimuth_deg,
            },
        }
    }

    /// The same geometry scaled to a map's own `max_theta_deg` (rim still at
    /// [`RIM_RADIUS_PX`]) and size.
    pub fn fitted_to(mut self, map: &ObstructionMap) -> Self {
        let theta = f64::from(map.max_theta_deg);
        self.max_theta_deg = theta;
        self.deg_per_px = theta / RIM_RADIUS_PX;
        if let Orientation::Ut { tilt_deg, .. } = self.orientation {
            self.zenith_row = UT_CENTRE_ROW - tilt_deg / self.deg_per_px;
        }
        self.rows = map.rows();
        self.cols = map.cols();
        self
    }

    /// The sky direction of a (possibly fractional) pixel position.
    pub fn to_sky(&self, p: PixelPoint) -> SkyDirection {
        let dx = p.col - self.zenith_col;
        let (dy, offset) = match self.orientation {
            Orientation::Earth => (self.zenith_row - p.row, 0.0),
            Orientation::Ut {
                boresight_azimuth_deg,
                ..
            } => (p.row - self.zenith_row, boresight_azimuth_deg),
        };
        let theta = dx.hypot(dy) * self.deg_per_px;
        let azimuth = if dx == 0.0 && dy == 0.0 {
            0.0
        } else {
            dx.atan2(dy).to_degrees()
        };
        SkyDirection {
            azimuth_deg: normalise_deg(azimuth + offset),
            elevation_deg: 90.0 - theta,
        }
    }

    /// Where a sky direction falls on the map, with sub-pixel precision (possibly outside the
    /// grid).
    pub fn to_point(&self, direction: SkyDirection) -> PixelPoint {
        let r = (90.0 - direction.elevation_deg) / self.deg_per_px;
        match self.orientation {
            Orientation::Earth => {
                let a = direction.azimuth_deg.to_radians();
                PixelPoint {
                    row: self.zenith_row - r * a.cos(),
                    col: self.zenith_col + r * a.sin(),
                }
            }
            Orientation::Ut {
                boresight_azimuth_deg,
                ..
            } => {
                let a = (direction.azimuth_deg - boresight_azimuth_deg).to_radians();
                PixelPoint {
                    row: self.zenith_row + r * a.cos(),
                    col: self.zenith_col + r * a.sin(),
                }
            }
        }
    }

    /// The nearest pixel to a direction, or `None` when the direction is below the disc's rim
    /// (zenith angle > `max_theta_deg`) or off the grid.
    pub fn to_pixel(&self, direction: SkyDirection) -> Option<Pixel> {
        if !self.covers(direction) {
            return None;
        }
        self.grid_pixel(self.to_point(direction))
    }

    /// Whether a direction lies on the disc (zenith angle within `max_theta_deg`).
    pub fn covers(&self, direction: SkyDirection) -> bool {
        direction.elevation_deg.is_finite()
            && direction.azimuth_deg.is_finite()
            && 90.0 - direction.elevation_deg <= self.max_theta_deg
            && direction.elevation_deg <= 90.0
    }

    /// Whether a pixel's centre lies on the disc; pixels outside are always [`NO_DATA`] (B1).
    pub fn in_disc(&self, pixel: Pixel) -> bool {
        let theta = 90.0 - self.to_sky(pixel.into()).elevation_deg;
        theta <= self.max_theta_deg
    }

    /// The pixels a beam pointed at `direction` lights: every on-disc pixel whose centre lies
    /// within `radius_px` of the direction's point, and always the nearest pixel itself. Empty
    /// when the direction is off the disc.
    ///
    /// `radius_px` = 0 paints a one-pixel-wide track; the simulated dish uses
    /// [`super::sim::DEFAULT_BEAM_RADIUS_PX`].
    pub fn paint(&self, direction: SkyDirection, radius_px: f64) -> Vec<Pixel> {
        let Some(nearest) = self.to_pixel(direction) else {
            return Vec::new();
        };
        let centre = self.to_point(direction);
        let radius = if radius_px.is_finite() {
            radius_px.clamp(0.0, RIM_RADIUS_PX)
        } else {
            0.0
        };
        let span = radius.ceil() as i64;
        let mut pixels = vec![nearest];
        for dr in -span..=span {
            for dc in -span..=span {
                let row = nearest.row as i64 + dr;
                let col = nearest.col as i64 + dc;
                if row < 0 || col < 0 || (dr == 0 && dc == 0) {
                    continue;
                }
                let pixel = Pixel {
                    row: row as usize,
                    col: col as usize,
                };
                if pixel.row >= self.rows || pixel.col >= self.cols {
                    continue;
                }
                if PixelPoint::from(pixel).distance(centre) <= radius + 1e-9 && self.in_disc(pixel)
                {
                    pixels.push(pixel);
                }
            }
        }
        pixels
    }

    fn grid_pixel(&self, p: PixelPoint) -> Option<Pixel> {
        let (row, col) = (p.row.round(), p.col.round());
        let on_grid = |v: f64, n: usize| v >= 0.0 && v < n as f64;
        (on_grid(row, self.rows) && on_grid(col, self.cols)).then_some(Pixel {
            row: row as usize,
            col: col as usize,
        })
    }
}

/// An angle in [0, 360).
pub(crate) fn normalise_deg(deg: f64) -> f64 {
    let d = deg.rem_euclid(360.0);
    if d >= 360.0 { 0.0 } else { d }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(azimuth_deg: f64, elevation_deg: f64) -> SkyDirection {
        SkyDirection {
            azimuth_deg,
            elevation_deg,
        }
    }

    #[test]
    fn earth_frame_follows_the_researchers_formula() {
        let g = MapGeometry::earth();
        // Zenith at (61, 62): dx = 0, dy = (123 - 61) - 62 = 0.
        let z = g.to_sky(PixelPoint {
            row: 61.0,
            col: 62.0,
        });
        assert_eq!(z.elevation_deg, 90.0);
        // Top centre is north, right is east, 62 px = 80 degrees of zenith angle.
        let north = g.to_sky(Pixel { row: 0, col: 62 }.into());
        assert!((north.azimuth_deg - 0.0).abs() < 1e-9);
        assert!((north.elevation_deg - (90.0 - 61.0 * 80.0 / 62.0)).abs() < 1e-9);
        let east = g.to_sky(Pixel { row: 61, col: 122 }.into());
        assert!((east.azimuth_deg - 90.0).abs() < 1e-9);
        assert!((east.elevation_deg - (90.0 - 60.0 * 80.0 / 62.0)).abs() < 1e-9);
        let south = g.to_sky(Pixel { row: 100, col: 62 }.into());
        assert!((south.azimuth_deg - 180.0).abs() < 1e-9);
        let west = g.to_sky(Pixel { row: 61, col: 10 }.into());
        assert!((west.azimuth_deg - 270.0).abs() < 1e-9);
    }

    #[test]
    fn earth_frame_round_trips_every_on_disc_pixel() {
        let g = MapGeometry::earth();
        for row in 0..MAP_ROWS {
            for col in 0..MAP_COLS {
                let p = Pixel { row, col };
                if !g.in_disc(p) {
                    continue;
                }
                let back = g.to_pixel(g.to_sky(p.into()));
                assert_eq!(back, Some(p), "{p:?}");
            }
        }
    }

    #[test]
    fn ut_frame_puts_the_boresight_azimuth_at_the_bottom_and_shifts_the_zenith_by_the_tilt() {
        let g = MapGeometry::ut(27.4, 180.0);
        let zenith_row = 62.0 - 27.4 / DEG_PER_PX;
        assert!((g.zenith_row - zenith_row).abs() < 1e-12);
        let below = g.to_sky(PixelPoint {
            row: zenith_row + 10.0,
            col: 62.0,
        });
        assert!((below.azimuth_deg - 180.0).abs() < 1e-9);
        assert!((below.elevation_deg - (90.0 - 10.0 * DEG_PER_PX)).abs() < 1e-9);
        let d = dir(123.0, 55.0);
        let back = g.to_sky(g.to_point(d));
        assert!((back.azimuth_deg - d.azimuth_deg).abs() < 1e-9);
        assert!((back.elevation_deg - d.elevation_deg).abs() < 1e-9);
    }

    #[test]
    fn directions_below_the_rim_or_not_finite_paint_nothing() {
        let g = MapGeometry::earth();
        assert!(g.paint(dir(0.0, 5.0), 1.0).is_empty());
        assert!(g.paint(dir(f64::NAN, 45.0), 1.0).is_empty());
        assert!(g.paint(dir(0.0, f64::INFINITY), 1.0).is_empty());
        assert_eq!(g.to_pixel(dir(0.0, 9.0)), None);
    }

    #[test]
    fn painting_lights_the_nearest_pixel_and_its_neighbours_within_the_beam_radius() {
        let g = MapGeometry::earth();
        let d = g.to_sky(Pixel { row: 40, col: 70 }.into());
        assert_eq!(g.paint(d, 0.0), vec![Pixel { row: 40, col: 70 }]);
        let mut beam = g.paint(d, 1.0);
        beam.sort();
        assert_eq!(
            beam,
            vec![
                Pixel { row: 39, col: 70 },
                Pixel { row: 40, col: 69 },
                Pixel { row: 40, col: 70 },
                Pixel { row: 40, col: 71 },
                Pixel { row: 41, col: 70 },
            ]
        );
    }

    #[test]
    fn maps_with_bad_shapes_or_values_are_rejected_with_the_reason() {
        assert_eq!(
            ObstructionMap::new(0, 123, vec![], 80.0, MapFrame::Earth),
            Err(MapError::BadDimensions { rows: 0, cols: 123 })
        );
        assert_eq!(
            ObstructionMap::new(123, 5000, vec![], 80.0, MapFrame::Earth),
            Err(MapError::BadDimensions {
                rows: 123,
                cols: 5000
            })
        );
        assert_eq!(
            ObstructionMap::new(2, 3, vec![0.0; 5], 80.0, MapFrame::Earth),
            Err(MapError::SnrLength {
                rows: 2,
                cols: 3,
                expected: 6,
                len: 5
            })
        );
        let mut snr = vec![-1.0; 4];
        snr[2] = f32::NAN;
        assert!(matches!(
            ObstructionMap::new(2, 2, snr, 80.0, MapFrame::Earth),
            Err(MapError::NonFiniteSnr { index: 2, .. })
        ));
        assert_eq!(
            ObstructionMap::new(1, 1, vec![1.0], 120.0, MapFrame::Earth),
            Err(MapError::BadMaxTheta(120.0))
        );
        let unset = ObstructionMap::new(1, 1, vec![1.0], 0.0, MapFrame::Earth).unwrap();
        assert_eq!(unset.max_theta_deg, 80.0);
    }

    #[test]
    fn unknown_frame_values_decode_as_unknown() {
        assert_eq!(MapFrame::from_wire(1), MapFrame::Earth);
        assert_eq!(MapFrame::from_wire(2), MapFrame::Ut);
        assert_eq!(MapFrame::from_wire(7), MapFrame::Unknown);
        assert_eq!(MapFrame::from_wire(-3), MapFrame::Unknown);
    }
}

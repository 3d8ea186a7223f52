//! Obstruction maps saved as JSON, and read back.
//!
//! Written (by `render-map --save-map`) as
//! `{"rows": 123, "cols": 123, "frame": "earth", "max_theta_deg": 80, "dish_time": ..., "alignment": null, "snr": [...]}`
//! with `snr` row-major and -1 for "no data". Read back from that, from the same object with
//! `snr` as an array of rows, or from a bare array of rows; `null` values read as no data.

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use handover_predictor::dish::{Alignment, MapFrame, MapGeometry, ObstructionMap, map::NO_DATA};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// A map and what is needed to place it in the sky.
#[derive(Debug, Clone)]
pub struct SavedMap {
    /// The map.
    pub map: ObstructionMap,
    /// FRAME_UT's alignment: `(tilt_deg, boresight_azimuth_deg)`.
    pub alignment: Option<(f64, f64)>,
}

impl SavedMap {
    /// The pixel <-> sky geometry (FRAME_UT needs the alignment, otherwise FRAME_EARTH).
    pub fn geometry(&self) -> MapGeometry {
        let base = match (self.map.frame, self.alignment) {
            (MapFrame::Ut, Some((tilt, azimuth))) => MapGeometry::ut(tilt, azimuth),
            _ => MapGeometry::earth(),
        };
        base.fitted_to(&self.map)
    }

    /// From a map fetched from a dish, with the dish's alignment if it sent one.
    pub fn fetched(map: ObstructionMap, alignment: Option<Alignment>) -> Self {
        Self {
            map,
            alignment: alignment
                .map(|a| (f64::from(a.tilt_deg), f64::from(a.boresight_azimuth_deg))),
        }
    }
}

/// The frame's name in the file.
pub fn frame_name(frame: MapFrame) -> &'static str {
    match frame {
        MapFrame::Earth => "earth",
        MapFrame::Ut => "ut",
        MapFrame::Unknown => "unknown",
    }
}

#[derive(Serialize)]
struct AlignmentOut {
    tilt_deg: f64,
    boresight_azimuth_deg: f64,
}

#[derive(Serialize)]
struct MapOut<'a> {
    rows: usize,
    cols: usize,
    frame: &'static str,
    max_theta_deg: f32,
    min_elevation_deg: f32,
    dish_time: Option<DateTime<Utc>>,
    alignment: Option<AlignmentOut>,
    snr: &'a [f32],
}

/// Writes `saved` to `path` as JSON.
pub fn save(path: &Path, saved: &SavedMap) -> Result<()> {
    let map = &saved.map;
    let out = MapOut {
        rows: map.rows(),
        cols: map.cols(),
        frame: frame_name(map.frame),
        max_theta_deg: map.max_theta_deg,
        min_elevation_deg: map.min_elevation_deg,
        dish_time: map.dish_time,
        alignment: saved
            .alignment
            .map(|(tilt_deg, boresight_azimuth_deg)| AlignmentOut {
                tilt_deg,
                boresight_azimuth_deg,
            }),
        snr: map.snr(),
    };
    let mut file = super::common::create_file(path, "the map file")?;
    serde_json::to_writer(&mut file, &out)
        .map_err(std::io::Error::from)
        .and_then(|()| std::io::Write::flush(&mut file))
        .with_context(|| format!("cannot write the map file {}", path.display()))
}

/// Reads a map file.
pub fn load(path: &Path) -> Result<SavedMap> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the map file {}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("the map file {} is not valid JSON", path.display()))?;
    parse(&value).with_context(|| {
        format!(
            "the map file {} is not an obstruction map (expected {{\"rows\", \"cols\", \"snr\"}} \
             or an array of rows)",
            path.display()
        )
    })
}

fn value_at(v: &Value, index: usize) -> Result<f32> {
    match v {
        Value::Null => Ok(NO_DATA),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.is_finite() => Ok(x as f32),
            _ => bail!("snr value {index} ({n}) is not a finite number"),
        },
        other => bail!("snr value {index} is {other}, not a number"),
    }
}

/// `(rows, cols, values)` from an array of rows.
fn from_rows(rows: &[Value]) -> Result<(u64, u64, Vec<f32>)> {
    let mut snr = Vec::new();
    let mut cols = None;
    for (r, row) in rows.iter().enumerate() {
        let Value::Array(row) = row else {
            bail!("row {r} is not an array");
        };
        match cols {
            None => cols = Some(row.len()),
            Some(c) if c != row.len() => {
                bail!("row {r} has {} values, row 0 has {c}", row.len())
            }
            Some(_) => {}
        }
        for v in row {
            let index = snr.len();
            snr.push(value_at(v, index)?);
        }
    }
    Ok((rows.len() as u64, cols.unwrap_or(0) as u64, snr))
}

fn parse(value: &Value) -> Result<SavedMap> {
    let object = match value {
        Value::Array(rows) => {
            let (rows, cols, snr) = from_rows(rows)?;
            let map = ObstructionMap::new(rows, cols, snr, 0.0, MapFrame::Earth)?;
            return Ok(SavedMap {
                map,
                alignment: None,
            });
        }
        Value::Object(object) => object,
        _ => bail!("the top level is neither an object nor an array"),
    };
    let snr = object.get("snr").context("no \"snr\" field")?;
    let (rows, cols, values) = match snr {
        Value::Array(items) if items.first().is_some_and(Value::is_array) => from_rows(items)?,
        Value::Array(items) => {
            let values = items
                .iter()
                .enumerate()
                .map(|(i, v)| value_at(v, i))
                .collect::<Result<Vec<f32>>>()?;
            let dim = |name: &str| -> Result<u64> {
                object
                    .get(name)
                    .and_then(Value::as_u64)
                    .with_context(|| format!("a flat \"snr\" needs an integer \"{name}\" field"))
            };
            (dim("rows")?, dim("cols")?, values)
        }
        _ => bail!("\"snr\" is not an array"),
    };
    let frame = match object.get("frame") {
        None | Some(Value::Null) => MapFrame::Earth,
        Some(Value::String(s)) => match s.to_ascii_lowercase().as_str() {
            "earth" | "frame_earth" => MapFrame::Earth,
            "ut" | "frame_ut" => MapFrame::Ut,
            "unknown" | "frame_unknown" => MapFrame::Unknown,
            other => bail!("unknown \"frame\" {other:?} (expected earth, ut or unknown)"),
        },
        Some(Value::Number(n)) => MapFrame::from_wire(n.as_i64().unwrap_or(0) as i32),
        Some(other) => bail!("\"frame\" is {other}, not a name"),
    };
    let number = |name: &str| object.get(name).and_then(Value::as_f64);
    let max_theta = number("max_theta_deg").unwrap_or(0.0) as f32;
    let mut map = ObstructionMap::new(rows, cols, values, max_theta, frame)?;
    if let Some(min_el) = number("min_elevation_deg") {
        map.min_elevation_deg = min_el as f32;
    }
    map.dish_time = match object.get("dish_time") {
        Some(Value::String(s)) => Some(
            DateTime::parse_from_rfc3339(s)
                .with_context(|| format!("\"dish_time\" {s:?} is not RFC 3339"))?
                .with_timezone(&Utc),
        ),
        _ => None,
    };
    let alignment = match object.get("alignment") {
        Some(Value::Object(a)) => {
            let tilt = a.get("tilt_deg").and_then(Value::as_f64);
            let azimuth = a.get("boresight_azimuth_deg").and_then(Value::as_f64);
            match (tilt, azimuth) {
                (Some(t), Some(az)) => Some((t, az)),
                _ => bail!("\"alignment\" needs \"tilt_deg\" and \"boresight_azimuth_deg\""),
            }
        }
        _ => None,
    };
    Ok(SavedMap { map, alignment })
}

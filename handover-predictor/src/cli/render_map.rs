//! `render-map`: an obstruction map as a picture, optionally with the detected track.

use super::common::{
    self, connect_dish, out, out_json, parse_time_scale, rfc3339, run_detector_with_progress,
};
use super::mapfile::{self, SavedMap, frame_name};
use super::plot::{self, MapPicture};
use anyhow::{Context, Result};
use chrono::{DateTime, Duration as ChronoDuration, Utc};
use clap::{ArgGroup, Args};
use handover_predictor::dish::{DetectionLog, DriverConfig, PixelPoint, PointKind};
use serde::Serialize;
use std::path::PathBuf;

/// Arguments of `render-map`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("input").required(true).args(["dish", "map"])))]
pub struct RenderMapArgs {
    /// Fetch the map from this dish (host:port; a real dish is 192.168.100.1:9200).
    #[arg(long, value_name = "ADDR")]
    dish: Option<String>,
    /// Read a saved map instead: JSON {"rows", "cols", "snr": [...]} (as --save-map writes it,
    /// -1 or null = no data), or an array of rows.
    #[arg(long, value_name = "FILE")]
    map: Option<PathBuf>,
    /// The picture to write, FILE.png or FILE.svg.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Poll the dish for --seconds first and draw the detected track and handovers over the map
    /// (the map is not cleared, so it shows the whole track).
    #[arg(long, requires = "dish")]
    track: bool,
    /// How long --track polls, in dish seconds.
    #[arg(long, value_name = "N", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=3600))]
    seconds: u32,
    /// The dish's clock runs N times faster than real time (dish-sim --time-scale).
    #[arg(long, value_name = "N", default_value_t = 1.0, value_parser = parse_time_scale)]
    time_scale: f64,
    /// Also save the fetched map as JSON (readable with --map).
    #[arg(long, value_name = "FILE", requires = "dish")]
    save_map: Option<PathBuf>,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct Rendered {
    out: String,
    source: String,
    rows: usize,
    cols: usize,
    frame: &'static str,
    dish_time: Option<DateTime<Utc>>,
    seen_pixels: usize,
    lit_pixels: usize,
    track_points: usize,
    handovers: Vec<DateTime<Utc>>,
}

/// Runs `render-map`.
pub fn run(args: RenderMapArgs) -> Result<()> {
    plot::check_format(&args.out)?;
    let (saved, log, source) = match (&args.dish, &args.map) {
        (Some(dish), _) => {
            let (saved, log) = common::runtime()?.block_on(fetch(&args, dish))?;
            (saved, log, dish.clone())
        }
        (None, Some(path)) => (
            mapfile::load(path)?,
            DetectionLog::default(),
            path.display().to_string(),
        ),
        (None, None) => anyhow::bail!("give --dish ADDR or --map FILE"),
    };
    if let Some(path) = &args.save_map {
        mapfile::save(path, &saved)?;
        tracing::info!("map saved to {}", path.display());
    }
    let geometry = saved.geometry();
    let mut runs: Vec<Vec<PixelPoint>> = Vec::new();
    let mut last_slot = None;
    for point in log.track.iter().filter(|p| p.kind != PointKind::Straddling) {
        if last_slot != Some(point.slot) || runs.is_empty() {
            runs.push(Vec::new());
            last_slot = Some(point.slot);
        }
        if let Some(run) = runs.last_mut() {
            run.push(point.pixel);
        }
    }
    let handover_points: Vec<PixelPoint> = log
        .verdicts
        .iter()
        .filter(|v| v.handover)
        .map(|v| v.to)
        .collect();
    let when = saved
        .map
        .dish_time
        .map(|t| format!(" at {}", rfc3339(t)))
        .unwrap_or_default();
    let track_note = if args.track {
        format!(
            ", {} s of track, {} handover{}",
            args.seconds,
            handover_points.len(),
            if handover_points.len() == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    let picture = MapPicture {
        title: format!(
            "obstruction map of {source}{when} (frame {}){track_note}",
            frame_name(saved.map.frame)
        ),
        map: &saved.map,
        geometry,
        track: runs,
        handovers: handover_points,
    };
    plot::save(&args.out, &picture)?;
    let summary = Rendered {
        out: args.out.display().to_string(),
        source,
        rows: saved.map.rows(),
        cols: saved.map.cols(),
        frame: frame_name(saved.map.frame),
        dish_time: saved.map.dish_time,
        seen_pixels: plot::seen_pixels(&saved.map, &geometry),
        lit_pixels: plot::lit_pixels(&saved.map),
        track_points: log.track.len(),
        handovers: log.handovers(),
    };
    if args.json {
        out_json(&summary)
    } else {
        out(format!(
            "{}: {}x{} map from {}, {} pixels with data, {} track points, {} handovers",
            summary.out,
            summary.rows,
            summary.cols,
            summary.source,
            summary.seen_pixels,
            summary.track_points,
            summary.handovers.len(),
        ))
    }
}

async fn fetch(args: &RenderMapArgs, dish: &str) -> Result<(SavedMap, DetectionLog)> {
    let client = connect_dish(dish, args.time_scale, None).await?;
    let status = client
        .status()
        .await
        .with_context(|| format!("the dish at {dish} did not answer get_status"))?;
    let mut log = DetectionLog::default();
    if args.track {
        let config = DriverConfig {
            time_scale: args.time_scale,
            duration: Some(ChronoDuration::seconds(i64::from(args.seconds))),
            clear_each_slot: false,
            ..DriverConfig::default()
        };
        let seconds = u64::from(args.seconds);
        let report = run_detector_with_progress(&client, config, seconds, "polling the track")
            .await
            .with_context(|| format!("polling the track from the dish at {dish} failed"))?;
        log = report.log;
    }
    let map = client
        .obstruction_map()
        .await
        .with_context(|| format!("cannot fetch the obstruction map from the dish at {dish}"))?;
    Ok((SavedMap::fetched(map, status.alignment), log))
}

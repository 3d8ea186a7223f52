//! `detect`: live handover detection from a dish's obstruction map.

use super::common::{
    self, chrono_duration, connect_dish, create_file, out, out_json, parse_duration,
    parse_time_scale, progress_bar, rfc3339,
};
use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use clap::Args;
use handover_predictor::dish::{
    BoundaryVerdict, ClockSource, DEFAULT_JUMP_THRESHOLD_PX, DetectionLog, DetectorConfig,
    DriverConfig, Observation, PointKind, TrackPoint, run_detector_with,
};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `detect`.
#[derive(Debug, Args)]
pub struct DetectArgs {
    /// The dish to poll, host:port. A real dish answers at 192.168.100.1:9200; `dish-sim`
    /// listens on 127.0.0.1:9200 by default.
    #[arg(long, value_name = "ADDR")]
    dish: String,
    /// How long to detect, in dish time: 120s, 10m, 1h30m.
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = parse_duration)]
    duration: Duration,
    /// Follow a simulated dish whose clock runs N times faster than real time (`dish-sim
    /// --time-scale N`). Durations stay in dish time: 10m at N = 20 takes 30 s.
    #[arg(long, value_name = "N", default_value_t = 1.0, value_parser = parse_time_scale)]
    time_scale: f64,
    /// Write the track (one point per dish second), the slot verdicts and a closing summary
    /// with the per-second handover bits to FILE, as JSON lines.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Limit of one gRPC call. Default: 2 s, or 500 ms with --time-scale above 1 (a poll is
    /// due every 1/N s).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    call_timeout: Option<Duration>,
    /// Distance between the last point of a slot and the first of the next above which the
    /// satellite changed, in map pixels.
    #[arg(long, value_name = "PX", default_value_t = DEFAULT_JUMP_THRESHOLD_PX)]
    jump_threshold: f64,
    /// Print JSON lines on stdout (one per slot verdict, then a summary) instead of text.
    #[arg(long)]
    json: bool,
}

/// One line of the `--out` file or of `--json` output.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line<'a> {
    /// A per-second track point.
    Point(PointLine),
    /// A slot-boundary verdict.
    Verdict(VerdictLine),
    /// The run's summary.
    Summary(&'a Summary),
}

/// A track point.
#[derive(Debug, Serialize)]
pub struct PointLine {
    /// The instant the map shows.
    pub at: DateTime<Utc>,
    /// Start of its slot.
    pub slot: DateTime<Utc>,
    /// Centroid row, px.
    pub row: f64,
    /// Centroid column, px.
    pub col: f64,
    /// Azimuth of the centroid, degrees.
    pub azimuth_deg: f64,
    /// Elevation of the centroid, degrees.
    pub elevation_deg: f64,
    /// New pixels behind it.
    pub new_pixels: usize,
    /// `fresh`, `held` or `straddling`.
    pub kind: &'static str,
    /// Whether the map had been cleared since the previous poll.
    pub map_reset: bool,
}

impl From<&TrackPoint> for PointLine {
    fn from(p: &TrackPoint) -> Self {
        Self {
            at: p.at,
            slot: p.slot,
            row: p.pixel.row,
            col: p.pixel.col,
            azimuth_deg: p.direction.azimuth_deg,
            elevation_deg: p.direction.elevation_deg,
            new_pixels: p.new_pixels,
            kind: match p.kind {
                PointKind::Fresh => "fresh",
                PointKind::Held => "held",
                PointKind::Straddling => "straddling",
            },
            map_reset: p.map_reset,
        }
    }
}

/// A slot verdict.
#[derive(Debug, Serialize)]
pub struct VerdictLine {
    /// The slot boundary.
    pub at: DateTime<Utc>,
    /// When it was decided.
    pub decided_at: DateTime<Utc>,
    /// Whether the satellite changed.
    pub handover: bool,
    /// Jump between the slots' positions, px.
    pub jump_px: f64,
    /// Previous slot's last position `[row, col]`.
    pub from: [f64; 2],
    /// This slot's first position `[row, col]`.
    pub to: [f64; 2],
}

impl From<&BoundaryVerdict> for VerdictLine {
    fn from(v: &BoundaryVerdict) -> Self {
        Self {
            at: v.at,
            decided_at: v.decided_at,
            handover: v.handover,
            jump_px: v.jump_px,
            from: [v.from.row, v.from.col],
            to: [v.to.row, v.to.col],
        }
    }
}

/// What a run found.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// The dish.
    pub dish: String,
    /// Dish time at the start.
    pub started_at: DateTime<Utc>,
    /// Dish time of the last observation.
    pub ended_at: DateTime<Utc>,
    /// The dish's clock rate.
    pub time_scale: f64,
    /// `reported` (the simulator stamps its clock), `local`, or `unknown` when interrupted.
    pub clock: &'static str,
    /// Maps polled (when interrupted: the track points recorded).
    pub polls: u32,
    /// Polls that failed and were skipped (`null` when interrupted: unknown).
    pub failed_polls: Option<u32>,
    /// Map clears (`null` when interrupted).
    pub clears: Option<u32>,
    /// Whether the dish supports clearing the map (`null` when interrupted).
    pub clear_supported: Option<bool>,
    /// Whether the run was stopped by Ctrl-C before its duration.
    pub interrupted: bool,
    /// Slot verdicts taken.
    pub verdicts: usize,
    /// Detected handovers (slot boundaries).
    pub handovers: Vec<DateTime<Utc>>,
    /// Their number.
    pub handover_count: usize,
    /// `bits[k]` is 1 for a handover in `(started_at + k s, started_at + (k+1) s]`.
    pub bits: Vec<u8>,
}

/// Runs `detect`.
pub fn run(args: DetectArgs) -> Result<()> {
    if !(args.jump_threshold.is_finite() && args.jump_threshold > 0.0) {
        bail!(
            "--jump-threshold must be a positive number of pixels, got {}",
            args.jump_threshold
        );
    }
    common::runtime()?.block_on(detect(args))
}

struct Sink {
    file: Option<(PathBuf, std::io::BufWriter<std::fs::File>)>,
    json: bool,
    failed: Option<anyhow::Error>,
}

impl Sink {
    fn write(&mut self, line: &Line<'_>) {
        if self.failed.is_some() {
            return;
        }
        if let Some((path, file)) = &mut self.file {
            let result = serde_json::to_writer(&mut *file, line)
                .map_err(std::io::Error::from)
                .and_then(|()| file.write_all(b"\n"));
            if let Err(e) = result {
                self.failed =
                    Some(anyhow::Error::new(e).context(format!("cannot write {}", path.display())));
            }
        }
    }

    fn flush(&mut self) -> Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if let Some((path, file)) = &mut self.file {
            file.flush()
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(())
    }
}

async fn detect(args: DetectArgs) -> Result<()> {
    let file = match &args.out {
        Some(path) => Some((path.clone(), create_file(path, "the detection file")?)),
        None => None,
    };
    let client = connect_dish(&args.dish, args.time_scale, args.call_timeout).await?;
    let config = DriverConfig {
        time_scale: args.time_scale,
        duration: Some(chrono_duration(args.duration)),
        detector: DetectorConfig {
            jump_threshold_px: args.jump_threshold,
            ..DetectorConfig::default()
        },
        ..DriverConfig::default()
    };
    let total_s = args.duration.as_secs().max(1);
    let bar = progress_bar(total_s, "dish seconds");
    let mut sink = Sink {
        file,
        json: args.json,
        failed: None,
    };
    let mut log = DetectionLog::default();
    let mut first_at: Option<DateTime<Utc>> = None;
    let mut stdout_error: Option<anyhow::Error> = None;
    let on_observation = |observation: &Observation| {
        log.record(observation);
        if let Some(point) = &observation.point {
            let origin = *first_at.get_or_insert(point.at);
            bar.set_position(
                ((point.at - origin).num_seconds() + 1).clamp(0, total_s as i64) as u64,
            );
            tracing::debug!(
                "{} {:?} at ({:.1}, {:.1}) px, azimuth {:.1}, elevation {:.1} deg, {} new pixels",
                rfc3339(point.at),
                point.kind,
                point.pixel.row,
                point.pixel.col,
                point.direction.azimuth_deg,
                point.direction.elevation_deg,
                point.new_pixels,
            );
            sink.write(&Line::Point(point.into()));
        }
        if let Some(verdict) = &observation.verdict {
            let line = Line::Verdict(verdict.into());
            sink.write(&line);
            let printed = if sink.json {
                bar.suspend(|| out_json(&line))
            } else {
                let what = if verdict.handover {
                    "HANDOVER      "
                } else {
                    "same satellite"
                };
                let decided = (verdict.decided_at - verdict.at).as_seconds_f64();
                bar.suspend(|| {
                    out(format!(
                        "{}  {what}  jump {:5.1} px  (decided {decided:+.1} s later)",
                        rfc3339(verdict.at),
                        verdict.jump_px,
                    ))
                })
            };
            if let Err(e) = printed
                && stdout_error.is_none()
            {
                stdout_error = Some(e);
            }
        }
    };
    let run = run_detector_with(&client, config, on_observation);
    let outcome = tokio::select! {
        result = run => Some(result),
        () = common::shutdown_signal() => None,
    };
    bar.finish_and_clear();
    if let Some(e) = stdout_error {
        return Err(e);
    }
    let summary = match outcome {
        Some(Ok(report)) => Summary {
            dish: args.dish.clone(),
            started_at: report.started_at,
            ended_at: report.ended_at,
            time_scale: args.time_scale,
            clock: match report.clock {
                ClockSource::Reported => "reported",
                ClockSource::Local => "local",
            },
            polls: report.polls,
            failed_polls: Some(report.failed_polls),
            clears: Some(report.clears),
            clear_supported: Some(report.clear_supported),
            interrupted: false,
            verdicts: report.log.verdicts.len(),
            handovers: report.log.handovers(),
            handover_count: report.log.handovers().len(),
            bits: bits(&report.log, report.started_at, report.ended_at),
        },
        Some(Err(e)) => {
            let _ = sink.flush();
            return Err(e)
                .with_context(|| format!("detection against the dish at {} failed", args.dish));
        }
        None => {
            tracing::warn!("interrupted; writing what was detected so far");
            let started_at = first_at.map_or_else(Utc::now, |t| t - chrono::Duration::seconds(1));
            let ended_at = log.track.last().map_or(started_at, |p| p.at);
            Summary {
                dish: args.dish.clone(),
                started_at,
                ended_at,
                time_scale: args.time_scale,
                clock: "unknown",
                polls: log.track.len() as u32,
                failed_polls: None,
                clears: None,
                clear_supported: None,
                interrupted: true,
                verdicts: log.verdicts.len(),
                handovers: log.handovers(),
                handover_count: log.handovers().len(),
                bits: bits(&log, started_at, ended_at),
            }
        }
    };
    let line = Line::Summary(&summary);
    sink.write(&line);
    sink.flush()?;
    tracing::info!(
        "{} handovers in {} slot verdicts over {:.0} s of dish time ({} polls, {} failed)",
        summary.handover_count,
        summary.verdicts,
        (summary.ended_at - summary.started_at).as_seconds_f64(),
        summary.polls,
        summary
            .failed_polls
            .map_or_else(|| "unknown".to_owned(), |n| n.to_string()),
    );
    if let Some(path) = &args.out {
        tracing::info!("track and verdicts written to {}", path.display());
    }
    if args.json {
        out_json(&line)
    } else {
        out(format!(
            "{} handover{} detected between {} and {} ({} slot verdicts, {} polls)",
            summary.handover_count,
            if summary.handover_count == 1 { "" } else { "s" },
            rfc3339(summary.started_at),
            rfc3339(summary.ended_at),
            summary.verdicts,
            summary.polls,
        ))
    }
}

fn bits(log: &DetectionLog, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<u8> {
    let seconds = (to - from).as_seconds_f64().ceil().max(0.0) as usize;
    log.handover_bits(from, seconds)
}

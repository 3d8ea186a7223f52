//! `eval`: the mirror, orbital and hybrid predictors against the orbital truth, over many 120-s
//! windows at several locations ([`handover_predictor::eval`]).

use super::common::{
    PolicyArg, load_catalogue, newest_epoch, out, out_json, parse_duration, parse_elevation,
    parse_instant, parse_latitude, parse_longitude, progress_bar, rfc3339_short, shipped_gen1,
    staleness_warning,
};
use super::plot::{self, LinesPicture, Panels, Series};
use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use clap::Args;
use handover_predictor::dish::parse_switch_rate;
use handover_predictor::eval::{
    self, DEFAULT_SPACING, DEFAULT_WARMUP, DEFAULT_WINDOWS, EvalConfig, EvalReport, Location,
    Perturbation, Predictor, PredictorCatalogue, TruthEvalConfig, TruthLog, TruthReport,
    TruthSource, evaluate_truth,
};
use handover_predictor::orbit::{Catalogue, Observer};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Vertical distance between the predictors' lines in the count plots, in handovers: small
/// next to the one-handover steps of a count, large enough (about 5 pixels) that equal counts
/// show as parallel lines instead of one hiding the others.
const COUNT_OFFSET: f64 = 0.12;

/// The real May-2025 Starlink snapshot, relative to the repository root (it lives in the
/// project's shared data, beside the repository).
const REAL_STARLINK: &str = "../shared/data/tle/starryNet/Starlink_May_2025.tle";

/// Arguments of `eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// TLE catalogue(s) to evaluate on, each an independent run (the truth propagates it; the
    /// predictors share it unless --perturb-km). Default: the shipped starlink-gen1 catalogue,
    /// plus the real May-2025 snapshot ../shared/data/tle/starryNet/Starlink_May_2025.tle when
    /// it exists.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    tle: Vec<PathBuf>,
    /// Locations as NAME:LAT,LON (degrees; repeat or list several). Default: kanazawa
    /// (36.56, 136.65), louvain (50.67, 4.61) and brisbane (-27.47, 153.03), where serving
    /// satellites were measured.
    #[arg(long, value_name = "NAME:LAT,LON", num_args = 1.., value_parser = parse_location, allow_negative_numbers = true)]
    locations: Vec<Location>,
    /// Decision instants (120-s windows) per location.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_WINDOWS, value_parser = parse_windows)]
    windows: usize,
    /// Dish time at which each run starts, RFC 3339. Default: the catalogue's newest epoch (TLEs
    /// go stale within days).
    #[arg(long, value_name = "RFC3339", value_parser = parse_instant)]
    start: Option<DateTime<Utc>>,
    /// Time between decision instants (default 127 s: the instants sweep all phases of the
    /// 15-s slot grid).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    spacing: Option<Duration>,
    /// Time before the first decision instant (default 150 s: the mirror's 120 s of history and
    /// the detector's first verdicts).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    warmup: Option<Duration>,
    /// The serving policy of the truth.
    #[arg(long, value_enum, default_value_t = PolicyArg::Starlink)]
    policy: PolicyArg,
    /// The serving policy the orbital and hybrid predictors assume (default: the truth's).
    #[arg(long, value_enum)]
    predictor_policy: Option<PolicyArg>,
    /// Minimum elevation of a serving satellite, degrees, for both policies (default 25).
    #[arg(long, value_name = "DEG", value_parser = parse_elevation)]
    min_elevation: Option<f64>,
    /// Give the predictors the truth catalogue with Gaussian along-track noise of this many km
    /// (a stand-in for TLEs some days old); 0 or absent: the truth's own catalogue.
    #[arg(long, value_name = "KM", value_parser = parse_perturbation)]
    perturb_km: Option<f64>,
    /// Seed of the --perturb-km noise.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Plot the per-window handover counts (truth and each predictor) to FILE.png or FILE.svg,
    /// one panel per catalogue.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Print the reports as one JSON object on stdout instead of the tables.
    #[arg(long)]
    json: bool,
    /// Score the sources against a per-second serving-satellite log instead of the orbital
    /// truth: a CSV with Timestamp and Connected_Satellite columns (SatInView, LEOViz, or
    /// `dish-sim --truth-csv`). Needs --lat, --lon and one --tle catalogue of the log's days.
    #[arg(long, value_name = "FILE", requires_all = ["lat", "lon"])]
    truth: Option<PathBuf>,
    /// Latitude of the dish that wrote the --truth log, degrees.
    #[arg(long, value_name = "DEG", allow_negative_numbers = true, value_parser = parse_latitude, requires = "truth")]
    lat: Option<f64>,
    /// Longitude of the dish that wrote the --truth log, degrees.
    #[arg(long, value_name = "DEG", allow_negative_numbers = true, value_parser = parse_longitude, requires = "truth")]
    lon: Option<f64>,
    /// The calibrated source's prior switch rate with --truth: a number in [0, 1] or a preset
    /// (brisbane, kanazawa, louvain, pooled). Default: pooled, 0.74.
    #[arg(long, value_name = "RATE|PRESET", value_parser = parse_switch_rate, requires = "truth")]
    prior_rate: Option<f64>,
}

fn parse_location(s: &str) -> Result<Location, String> {
    let (name, coordinates) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?} is not NAME:LAT,LON (e.g. louvain:50.67,4.61)"))?;
    let (lat, lon) = coordinates
        .split_once(',')
        .ok_or_else(|| format!("{s:?} is not NAME:LAT,LON (e.g. louvain:50.67,4.61)"))?;
    if name.trim().is_empty() {
        return Err(format!("{s:?} has an empty name"));
    }
    Ok(Location::new(
        name.trim(),
        parse_latitude(lat)?,
        parse_longitude(lon)?,
    ))
}

fn parse_windows(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a whole number"))?;
    if !(1..=10_000).contains(&n) {
        return Err(format!("{n} windows is outside [1, 10000]"));
    }
    Ok(n)
}

fn parse_perturbation(s: &str) -> Result<f64, String> {
    let km: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of km"))?;
    if !(km.is_finite() && (0.0..=1000.0).contains(&km)) {
        return Err(format!("{km} km is outside [0, 1000]"));
    }
    Ok(km)
}

#[derive(Debug, Serialize)]
struct Reports {
    reports: Vec<EvalReport>,
}

/// Runs `eval`.
pub fn run(args: EvalArgs) -> Result<()> {
    if let Some(path) = &args.plot {
        plot::check_format(path)?;
    }
    if let Some(truth) = &args.truth {
        return run_truth(&args, truth);
    }
    let catalogues = catalogues(&args)?;
    let mut reports = Vec::new();
    for (name, catalogue) in &catalogues {
        let report = evaluate_one(&args, name, catalogue)?;
        if !args.json {
            if !reports.is_empty() {
                out("")?;
            }
            out(report.table().trim_end())?;
        }
        reports.push(report);
    }
    if let Some(path) = &args.plot {
        plot::save(path, &picture(&reports))?;
        tracing::info!("per-window plot written to {}", path.display());
    }
    if args.json {
        out_json(&Reports { reports })?;
    }
    Ok(())
}

fn catalogues(args: &EvalArgs) -> Result<Vec<(String, Arc<Catalogue>)>> {
    if !args.tle.is_empty() {
        return args
            .tle
            .iter()
            .map(|path| Ok((path.display().to_string(), load_catalogue(path)?)))
            .collect();
    }
    let mut catalogues = vec![shipped_gen1()?];
    let real = [
        REAL_STARLINK,
        "../../shared/data/tle/starryNet/Starlink_May_2025.tle",
    ]
    .iter()
    .map(Path::new)
    .find(|p| p.is_file());
    match real {
        Some(path) => catalogues.push((path.display().to_string(), load_catalogue(path)?)),
        None => tracing::info!(
            "{REAL_STARLINK} not found (run from the repository root to include it); evaluating \
             the shipped catalogue only"
        ),
    }
    Ok(catalogues)
}

fn evaluate_one(args: &EvalArgs, name: &str, catalogue: &Arc<Catalogue>) -> Result<EvalReport> {
    let start = match args.start {
        Some(start) => start,
        None => newest_epoch(catalogue)?,
    };
    if let Some(warning) = staleness_warning(catalogue, start) {
        tracing::warn!("{warning}");
    }
    let mut config = EvalConfig::new(Arc::clone(catalogue), start, Instant::now());
    config.windows = args.windows;
    config.spacing = args.spacing.unwrap_or(DEFAULT_SPACING);
    config.warmup = args.warmup.unwrap_or(DEFAULT_WARMUP);
    config.truth_policy = args.policy.policy(args.min_elevation);
    config.predictor_policy = args
        .predictor_policy
        .unwrap_or(args.policy)
        .policy(args.min_elevation);
    if !args.locations.is_empty() {
        config.locations = args.locations.clone();
    }
    if let Some(km) = args.perturb_km.filter(|&km| km > 0.0) {
        config.predictor_catalogue =
            PredictorCatalogue::Perturbed(Perturbation::along_track(km, args.seed));
    }
    let total = (config.windows * config.locations.len()) as u64;
    tracing::info!(
        "evaluating {name}: {} windows at {} location(s) from {}",
        config.windows,
        config.locations.len(),
        rfc3339_short(start)
    );
    let bar = progress_bar(total, "windows");
    let report = eval::evaluate(&config, |done, _| bar.set_position(done as u64));
    bar.finish_and_clear();
    report.with_context(|| format!("cannot evaluate on {name}"))
}

fn picture(reports: &[EvalReport]) -> Panels {
    let panels = reports
        .iter()
        .map(|report| {
            let mut truth = Vec::new();
            let mut per_predictor: Vec<Vec<(f64, f64)>> = vec![Vec::new(); Predictor::ALL.len()];
            let mut locations: Vec<String> = Vec::new();
            let mut sections = Vec::new();
            for (x, window) in report.series.iter().enumerate() {
                if locations.last() != Some(&window.location) {
                    locations.push(window.location.clone());
                    sections.push((x as f64, window.location.clone()));
                }
                truth.push((x as f64, window.truth as f64));
                for (i, predictor) in Predictor::ALL.iter().enumerate() {
                    per_predictor[i].push((x as f64, window.predicted(*predictor) as f64));
                }
            }
            let mut series = vec![Series {
                name: "truth".to_owned(),
                points: truth,
                dashed: true,
            }];
            for (predictor, points) in Predictor::ALL.iter().zip(per_predictor) {
                let f1 = report
                    .overall(*predictor)
                    .map(|r| format!(" (F1 {:.3})", r.f1))
                    .unwrap_or_default();
                series.push(Series {
                    name: format!("{predictor}{f1}"),
                    points,
                    dashed: false,
                });
            }
            LinesPicture {
                title: format!(
                    "{}: handovers per 120-s window, {} windows per location",
                    report.scenario.truth_catalogue, report.scenario.windows_per_location
                ),
                x_desc: format!(
                    "window ({}; the predictors' lines are {COUNT_OFFSET} apart so that equal \
                     counts stay visible)",
                    locations.join(", then ")
                ),
                y_desc: "handovers in the window".to_owned(),
                series,
                sections,
                offset: COUNT_OFFSET,
            }
        })
        .collect();
    Panels { panels }
}

/// `eval --truth`: the sources against a per-second serving-satellite log.
fn run_truth(args: &EvalArgs, path: &Path) -> Result<()> {
    let [tle] = args.tle.as_slice() else {
        bail!(
            "--truth needs exactly one --tle catalogue (the constellation on the log's days), \
             got {}",
            args.tle.len()
        );
    };
    let (Some(lat), Some(lon)) = (args.lat, args.lon) else {
        bail!("--truth needs --lat and --lon (where the dish was)");
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the truth log {}", path.display()))?;
    let log = TruthLog::parse(&text, &path.display().to_string())?;
    let catalogue = load_catalogue(tle)?;
    if let Some(warning) = staleness_warning(&catalogue, log.start()) {
        tracing::warn!("{warning}");
    }
    let observer = Observer::new(lat, lon, 0.0).context("invalid --lat/--lon")?;
    let mut config = TruthEvalConfig::new(observer, catalogue, Instant::now());
    config.policy = args.policy.policy(args.min_elevation);
    if let Some(spacing) = args.spacing {
        config.spacing = spacing;
    }
    if let Some(warmup) = args.warmup {
        config.warmup = warmup;
    }
    if let Some(rate) = args.prior_rate {
        config.prior_rate = rate;
    }
    let report = evaluate_truth(&log, &config)
        .with_context(|| format!("cannot evaluate against {}", path.display()))?;
    if let Some(plot_path) = &args.plot {
        plot::save(plot_path, &truth_picture(&report))?;
        tracing::info!("per-window plot written to {}", plot_path.display());
    }
    if args.json {
        out_json(&report)
    } else {
        out(report.table().trim_end())?;
        out("")?;
        out(TruthReport::summary_table(std::slice::from_ref(&report)).trim_end())
    }
}

fn truth_picture(report: &TruthReport) -> LinesPicture {
    let x = |i: usize| i as f64;
    let mut series = vec![Series {
        name: "truth".to_owned(),
        points: report
            .series
            .iter()
            .enumerate()
            .map(|(i, w)| (x(i), w.truth as f64))
            .collect(),
        dashed: true,
    }];
    for (k, source) in TruthSource::ALL.iter().enumerate() {
        let label = report
            .row(*source)
            .map(|r| {
                format!(
                    "{source} (F1 {:.2}, MAE {:.2})",
                    r.f1, r.mae_handovers_per_window
                )
            })
            .unwrap_or_else(|| source.to_string());
        series.push(Series {
            name: label,
            points: report
                .series
                .iter()
                .enumerate()
                .map(|(i, w)| (x(i), w.predicted[k] as f64))
                .collect(),
            dashed: false,
        });
    }
    LinesPicture {
        title: format!(
            "{}: handovers per 120-s window (switch rate {:.3}, floor MAE {:.2})",
            Path::new(&report.file)
                .file_name()
                .map_or(report.file.clone(), |n| n.to_string_lossy().into_owned()),
            report.switch_rate,
            report.floor_mae
        ),
        x_desc: format!(
            "window (the sources' lines are {COUNT_OFFSET} apart so that equal counts stay \
             visible)"
        ),
        y_desc: "handovers in the window".to_owned(),
        series,
        sections: Vec::new(),
        offset: COUNT_OFFSET,
    }
}

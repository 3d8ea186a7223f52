//! `forecast`: the 120-s handover forecast from one predictor, with the serving-satellite
//! timeline behind it.

use super::common::{
    self, PolicyArg, connect_dish, load_catalogue, newest_epoch, out, out_json, parse_altitude,
    parse_elevation, parse_instant, parse_latitude, parse_longitude, rfc3339_short,
    run_detector_with_progress, staleness_warning,
};
use super::plot::{self, Sample, TimelinePicture};
use anyhow::{Context, Result, bail};
use chrono::{DateTime, Duration as ChronoDuration, Utc};
use clap::{Args, ValueEnum};
use handover_predictor::dish::{DriverConfig, DriverReport};
use handover_predictor::orbit::{Catalogue, Observer, Serving, ServingPolicy, handovers};
use handover_predictor::predict::{
    Basis, Calibrated, DEFAULT_PRIOR_WEIGHT, Hybrid, Mirror, Orbital, parse_switch_rate,
};
use handover_predictor::{Forecast, HORIZON_STEPS, HandoverSource, HandoverTiming};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `forecast`.
#[derive(Debug, Args)]
pub struct ForecastArgs {
    /// The predictor. orbital: SGP4 orbits of --tle and the serving policy; hybrid: the dish's
    /// observed serving satellite (one slot watched through --dish) matched to a TLE, then
    /// propagated; mirror: the next 120 s repeat the last 120 s observed, which without history
    /// is the paper's default of 8 equally spaced handovers.
    #[arg(long, value_enum, default_value_t = SourceArg::Orbital)]
    source: SourceArg,
    /// TLE catalogue (2- or 3-line sets). Required for orbital and hybrid.
    #[arg(long, value_name = "FILE")]
    tle: Option<PathBuf>,
    /// Latitude of the dish, degrees north, in [-90, 90]. Required for orbital (and for hybrid
    /// when the dish does not tell its position).
    #[arg(long, value_name = "DEG", allow_negative_numbers = true, value_parser = parse_latitude)]
    lat: Option<f64>,
    /// Longitude of the dish, degrees east, in [-180, 360].
    #[arg(long, value_name = "DEG", allow_negative_numbers = true, value_parser = parse_longitude)]
    lon: Option<f64>,
    /// Altitude of the dish above the WGS84 ellipsoid, metres.
    #[arg(long, value_name = "M", default_value_t = 0.0, allow_negative_numbers = true, value_parser = parse_altitude)]
    alt: f64,
    /// Decision instant t0, RFC 3339 (2025-05-12T12:00:00Z) or `now`. Default: the catalogue's
    /// newest epoch. TLEs go stale within days (SGP4 errors grow by km a day), so an instant more
    /// than 3 days from the newest epoch is warned about, and one more than 30 days away is
    /// refused.
    #[arg(long, value_name = "RFC3339", value_parser = parse_instant)]
    at: Option<DateTime<Utc>>,
    /// Serving policy: starlink (15-s slots at seconds 12, 27, 42, 57) or delay (StarryNet's
    /// per-second lowest delay, the paper's emulation).
    #[arg(long, value_enum, default_value_t = PolicyArg::Starlink)]
    policy: PolicyArg,
    /// Minimum elevation of a serving satellite, degrees (default 25).
    #[arg(long, value_name = "DEG", value_parser = parse_elevation)]
    min_elevation: Option<f64>,
    /// Also draw the timeline (serving satellite's elevation, handover marks) to FILE.png or
    /// FILE.svg.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// The dish (host:port) the hybrid predictor watches for one slot before forecasting.
    #[arg(long, value_name = "ADDR")]
    dish: Option<String>,
    /// With --dish: the dish's clock runs this many times faster than real time (dish-sim
    /// --time-scale).
    #[arg(long, value_name = "N", default_value_t = 1.0, value_parser = common::parse_time_scale)]
    time_scale: f64,
    /// With --source hybrid: how long to watch the dish before forecasting, in dish time (a
    /// full 15-s slot must be seen).
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = common::parse_duration)]
    watch: Duration,
    /// Print the forecast as one JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// With --source calibrated: the switch probability before anything is observed, a number
    /// in [0, 1] or a site preset (brisbane 0.845, kanazawa 0.576, louvain 0.769, pooled 0.74).
    #[arg(long, value_name = "RATE|PRESET", value_parser = parse_switch_rate, default_value = "pooled")]
    prior_rate: f64,
}

/// The predictor to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SourceArg {
    /// SGP4 orbits and the serving policy.
    Orbital,
    /// The dish's observed serving satellite matched to a TLE, then propagated.
    Hybrid,
    /// The last 120 s repeated (8 equally spaced handovers without history).
    Mirror,
    /// Every slot boundary (Starlink policy) or orbital handover instant (delay policy, needs
    /// --tle and --lat/--lon) with the site's switch probability; a one-shot forecast has seen
    /// nothing, so the probability is the prior (--prior-rate).
    Calibrated,
}

/// The forecast as printed with `--json`.
#[derive(Debug, Serialize)]
pub struct ForecastOutput {
    /// Predictor tag (`orbital`, `hybrid`, `mirror`).
    pub source: String,
    /// The decision instant t0.
    pub at: DateTime<Utc>,
    /// The dish's position, when one was used.
    pub site: Option<SiteOutput>,
    /// Serving policy, for the orbit-based predictors.
    pub policy: Option<String>,
    /// The TLE catalogue, for the orbit-based predictors.
    pub catalogue: Option<CatalogueOutput>,
    /// The 120 handover bits: `handover[k]` is 1 for a handover in `(t0 + k s, t0 + (k+1) s]`.
    pub handover: Vec<u8>,
    /// The cumulative channel: handovers in steps `0..=k`, divided by 8.
    pub cumulative: Vec<f32>,
    /// Steps with a handover over the horizon.
    pub handover_count: usize,
    /// Expected handovers over the horizon: the sum of the probabilities.
    pub expected_count: f32,
    /// How precisely the source knows the instants (`sub-second`, `step`, `unknown`).
    pub timing: HandoverTiming,
    /// Every predicted handover: its instant and probability.
    pub predicted: Vec<PredictedOutput>,
    /// The steps `k` with a handover.
    pub handover_steps: Vec<usize>,
    /// When each handover happens (for the mirror: the end of its step).
    pub handovers_at: Vec<DateTime<Utc>>,
    /// The serving-satellite timeline over the horizon (orbit-based predictors).
    pub timeline: Vec<Segment>,
    /// Warnings (a stale catalogue, ...).
    pub warnings: Vec<String>,
    /// The serving satellite second by second, for the plot.
    #[serde(skip)]
    pub samples: Vec<Sample>,
    /// The dish watched (hybrid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dish: Option<String>,
    /// What the hybrid forecast was based on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basis: Option<BasisOutput>,
}

/// One predicted handover.
#[derive(Debug, Clone, Serialize)]
pub struct PredictedOutput {
    /// When.
    pub at: DateTime<Utc>,
    /// Seconds after t0.
    pub offset_s: f64,
    /// Probability that the serving satellite changes then.
    pub probability: f32,
}

fn predicted_of(forecast: &Forecast, at: DateTime<Utc>) -> Vec<PredictedOutput> {
    forecast
        .handovers()
        .iter()
        .map(|h| PredictedOutput {
            at: at + seconds(h.offset.as_secs_f64()),
            offset_s: h.offset.as_secs_f64(),
            probability: h.probability,
        })
        .collect()
}

impl ForecastOutput {
    /// What `forecast`, made at `at`, says by itself; the source-specific parts (site, policy,
    /// catalogue, handover instants, timeline, samples, warnings, dish) are empty.
    fn of(forecast: &Forecast, at: DateTime<Utc>) -> Self {
        Self {
            source: forecast.source().to_string(),
            at,
            site: None,
            policy: None,
            catalogue: None,
            handover: forecast.handover().to_vec(),
            cumulative: forecast.cumulative().to_vec(),
            handover_count: forecast.handover_count(),
            expected_count: forecast.expected_count(),
            timing: forecast.timing(),
            predicted: predicted_of(forecast, at),
            handover_steps: steps_of(forecast),
            handovers_at: Vec::new(),
            timeline: Vec::new(),
            warnings: Vec::new(),
            samples: Vec::new(),
            dish: None,
            basis: None,
        }
    }
}

/// Where the dish is.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SiteOutput {
    /// Degrees north.
    pub lat_deg: f64,
    /// Degrees east.
    pub lon_deg: f64,
    /// Metres above the ellipsoid.
    pub alt_m: f64,
}

/// The catalogue a forecast was made from.
#[derive(Debug, Clone, Serialize)]
pub struct CatalogueOutput {
    /// The file.
    pub path: String,
    /// Propagatable satellites.
    pub satellites: usize,
    /// Objects skipped (decayed, refused by SGP4, duplicates).
    pub skipped: usize,
    /// Newest element set's epoch.
    pub newest_epoch: Option<DateTime<Utc>>,
}

/// One stretch of the timeline served by one satellite (or by none: an outage).
#[derive(Debug, Clone, Serialize)]
pub struct Segment {
    /// NORAD number; `None` while no satellite qualifies.
    pub norad_id: Option<u64>,
    /// The satellite's name in the catalogue.
    pub name: Option<String>,
    /// Start (t0 for the first segment).
    pub from: DateTime<Utc>,
    /// End (the next handover, or t0 + 120 s).
    pub to: DateTime<Utc>,
    /// Start, seconds after t0.
    pub from_offset_s: f64,
    /// End, seconds after t0.
    pub to_offset_s: f64,
    /// Elevation at the first second of the segment, degrees.
    pub elevation_start_deg: Option<f64>,
    /// Elevation at the last second of the segment, degrees.
    pub elevation_end_deg: Option<f64>,
    /// Highest elevation over the segment, degrees.
    pub elevation_max_deg: Option<f64>,
    /// Azimuth at the first second, degrees from north.
    pub azimuth_start_deg: Option<f64>,
    /// Azimuth at the last second, degrees from north.
    pub azimuth_end_deg: Option<f64>,
}

/// Runs `forecast`.
pub fn run(args: ForecastArgs) -> Result<()> {
    if let Some(path) = &args.plot {
        plot::check_format(path)?;
    }
    let output = match args.source {
        SourceArg::Orbital => orbital(&args)?,
        SourceArg::Mirror => mirror(&args)?,
        SourceArg::Hybrid => hybrid(&args)?,
        SourceArg::Calibrated => calibrated(&args)?,
    };
    for warning in &output.warnings {
        tracing::warn!("{warning}");
    }
    if let Some(path) = &args.plot {
        plot::save(path, &timeline_picture(&output))?;
        tracing::info!("timeline plot written to {}", path.display());
    }
    if args.json {
        out_json(&output)
    } else {
        print_human(&output)
    }
}

/// An orbital forecast and the serving timeline behind it.
pub struct OrbitalRun {
    /// The forecast.
    pub forecast: Forecast,
    /// The timeline, one segment per serving satellite.
    pub segments: Vec<Segment>,
    /// The timeline second by second.
    pub samples: Vec<Sample>,
    /// When the handovers happen.
    pub handovers_at: Vec<DateTime<Utc>>,
}

/// The orbital predictor's forecast and timeline at `at`.
pub fn orbital_forecast(
    catalogue: &Arc<Catalogue>,
    observer: Observer,
    policy: ServingPolicy,
    at: DateTime<Utc>,
) -> Result<OrbitalRun> {
    let epoch = Instant::now();
    let mut orbital = Orbital::new(Arc::clone(catalogue), observer, policy, epoch, at);
    let forecast = orbital
        .forecast(epoch)
        .with_context(|| format!("no orbital forecast at {}", rfc3339_short(at)))?;
    let (from, timeline) = orbital
        .timeline(epoch)
        .with_context(|| format!("no serving timeline at {}", rfc3339_short(at)))?;
    let (segments, samples) = summarise(catalogue, at, from, &timeline);
    let handovers_at = handovers(&timeline)
        .into_iter()
        .map(|i| from + ChronoDuration::seconds(i as i64))
        .filter(|&t| t > at && t <= at + ChronoDuration::seconds(HORIZON_STEPS as i64))
        .collect();
    Ok(OrbitalRun {
        forecast,
        segments,
        samples,
        handovers_at,
    })
}

fn site(args: &ForecastArgs, what: &str) -> Result<(Observer, SiteOutput)> {
    let (Some(lat), Some(lon)) = (args.lat, args.lon) else {
        bail!("--lat and --lon are required for --source {what}");
    };
    let observer = Observer::new(lat, lon, args.alt).context("invalid --lat/--lon/--alt")?;
    Ok((
        observer,
        SiteOutput {
            lat_deg: lat,
            lon_deg: lon,
            alt_m: args.alt,
        },
    ))
}

fn catalogue_arg(args: &ForecastArgs, what: &str) -> Result<(PathBuf, Arc<Catalogue>)> {
    let Some(path) = &args.tle else {
        bail!(
            "--tle FILE is required for --source {what} (e.g. --tle traces/tle/starlink-gen1.tle)"
        );
    };
    Ok((path.clone(), load_catalogue(path)?))
}

fn catalogue_output(path: &std::path::Path, catalogue: &Catalogue) -> CatalogueOutput {
    CatalogueOutput {
        path: path.display().to_string(),
        satellites: catalogue.len(),
        skipped: catalogue.skipped(),
        newest_epoch: catalogue.newest_epoch(),
    }
}

fn orbital(args: &ForecastArgs) -> Result<ForecastOutput> {
    let (observer, site_out) = site(args, "orbital")?;
    let (path, catalogue) = catalogue_arg(args, "orbital")?;
    let at = match args.at {
        Some(at) => at,
        None => newest_epoch(&catalogue)?,
    };
    let warnings: Vec<String> = staleness_warning(&catalogue, at).into_iter().collect();
    let policy = args.policy.policy(args.min_elevation);
    let OrbitalRun {
        forecast,
        segments: timeline,
        samples,
        handovers_at,
    } = orbital_forecast(&catalogue, observer, policy, at)?;
    Ok(ForecastOutput {
        site: Some(site_out),
        policy: Some(args.policy.as_str().to_owned()),
        catalogue: Some(catalogue_output(&path, &catalogue)),
        handovers_at,
        timeline,
        warnings,
        samples,
        ..ForecastOutput::of(&forecast, at)
    })
}

fn calibrated(args: &ForecastArgs) -> Result<ForecastOutput> {
    // With a catalogue and a site, the orbital timeline is shown beside the boundaries.
    let orbit = match (&args.tle, args.lat, args.lon) {
        (Some(_), Some(_), Some(_)) => {
            let (observer, site_out) = site(args, "calibrated")?;
            let (path, catalogue) = catalogue_arg(args, "calibrated")?;
            Some((observer, site_out, path, catalogue))
        }
        _ => None,
    };
    let at = match (args.at, &orbit) {
        (Some(at), _) => at,
        (None, Some((_, _, _, catalogue))) => newest_epoch(catalogue)?,
        (None, None) => Utc::now(),
    };
    let policy = args.policy.policy(args.min_elevation);
    let now = Instant::now();
    let predictor = match (policy, &orbit) {
        (ServingPolicy::Starlink(_), _) => Calibrated::slot_grid(now, at),
        (ServingPolicy::Delay(_), Some((observer, _, _, catalogue))) => Calibrated::over(Box::new(
            Orbital::new(Arc::clone(catalogue), *observer, policy, now, at),
        )),
        (ServingPolicy::Delay(_), None) => bail!(
            "--source calibrated with --policy delay takes its instants from the orbits: give \
             --tle, --lat and --lon"
        ),
    };
    let forecast = predictor
        .with_prior(args.prior_rate, DEFAULT_PRIOR_WEIGHT)
        .context("invalid --prior-rate")?
        .forecast(now)
        .context("the calibrated predictor failed")?;
    let mut warnings = Vec::new();
    let (site_out, catalogue_out, timeline, samples) = match &orbit {
        Some((observer, site_out, path, catalogue)) => {
            warnings.extend(staleness_warning(catalogue, at));
            let run = orbital_forecast(catalogue, *observer, policy, at)?;
            (
                Some(*site_out),
                Some(catalogue_output(path, catalogue)),
                run.segments,
                run.samples,
            )
        }
        None => (None, None, Vec::new(), Vec::new()),
    };
    let handovers_at = forecast
        .handovers()
        .iter()
        .map(|h| at + seconds(h.offset.as_secs_f64()))
        .collect();
    Ok(ForecastOutput {
        site: site_out,
        policy: Some(args.policy.as_str().to_owned()),
        catalogue: catalogue_out,
        handovers_at,
        timeline,
        warnings,
        samples,
        ..ForecastOutput::of(&forecast, at)
    })
}

fn mirror(args: &ForecastArgs) -> Result<ForecastOutput> {
    let at = args.at.unwrap_or_else(Utc::now);
    let now = Instant::now();
    let forecast = Mirror::new(now)
        .forecast(now)
        .context("the mirror predictor failed")?;
    let mut warnings = Vec::new();
    if args.tle.is_some() || args.dish.is_some() {
        warnings.push(
            "the mirror predictor has no history here, so it gives its default (8 equally \
             spaced handovers); --tle and --dish are not used"
                .to_owned(),
        );
    }
    let steps = steps_of(&forecast);
    let handovers_at = steps
        .iter()
        .map(|&k| at + ChronoDuration::seconds(k as i64 + 1))
        .collect();
    Ok(ForecastOutput {
        handovers_at,
        warnings,
        ..ForecastOutput::of(&forecast, at)
    })
}

fn hybrid(args: &ForecastArgs) -> Result<ForecastOutput> {
    let Some(dish) = args.dish.clone() else {
        bail!(
            "--source hybrid needs --dish ADDR: it watches the dish for one slot to identify the \
             serving satellite (run `handover-predictor dish-sim` for a simulated one)"
        );
    };
    let (path, catalogue) = catalogue_arg(args, "hybrid")?;
    let policy = args.policy.policy(args.min_elevation);
    let (report, site_out) = common::runtime()?.block_on(watch(args, &dish))?;
    let observer = Observer::new(site_out.lat_deg, site_out.lon_deg, site_out.alt_m)
        .context("invalid dish position")?;
    let at = report.ended_at;
    let mut warnings: Vec<String> = staleness_warning(&catalogue, at).into_iter().collect();
    if args.at.is_some() {
        warnings.push(format!(
            "--at is not used by the hybrid predictor: t0 is the dish's time at the end of the \
             observation ({})",
            rfc3339_short(at)
        ));
    }
    let epoch = Instant::now();
    let mut hybrid = Hybrid::new(Arc::clone(&catalogue), observer, policy, epoch, at)
        .context("invalid serving policy (--policy/--min-elevation)")?;
    for point in &report.log.track {
        hybrid.observe(point);
    }
    let forecast = hybrid
        .forecast(epoch)
        .with_context(|| format!("no hybrid forecast at {}", rfc3339_short(at)))?;
    let basis = hybrid.last_basis().copied();
    // The timeline behind the forecast: continued from the identified satellite, or the plain
    // orbital one the predictor fell back to.
    let (from, timeline) = match basis {
        Some(Basis::Identified(m)) => {
            let lead = (at - m.slot).num_seconds().max(0);
            let seconds = u32::try_from(lead + HORIZON_STEPS as i64 + 2).unwrap_or(u32::MAX);
            let ids = hybrid.continue_from(m.slot, m.norad_id, seconds);
            let timeline = ids
                .iter()
                .enumerate()
                .map(|(i, id)| {
                    let t = m.slot + ChronoDuration::seconds(i as i64);
                    let id = (*id)?;
                    let position = catalogue.sky_position(id, &observer, t)?.ok()?;
                    Some(Serving {
                        norad_id: id,
                        position,
                    })
                })
                .collect::<Vec<_>>();
            (m.slot, timeline)
        }
        _ => {
            warnings.push(format!(
                "the serving satellite could not be identified from the dish ({}); this is the \
                 plain orbital forecast",
                basis_text(basis.as_ref())
            ));
            Orbital::new(Arc::clone(&catalogue), observer, policy, epoch, at)
                .timeline(epoch)
                .with_context(|| format!("no serving timeline at {}", rfc3339_short(at)))?
        }
    };
    let (segments, samples) = summarise(&catalogue, at, from, &timeline);
    let handovers_at = handovers(&timeline)
        .into_iter()
        .map(|i| from + ChronoDuration::seconds(i as i64))
        .filter(|&t| t > at && t <= at + ChronoDuration::seconds(HORIZON_STEPS as i64))
        .collect();
    Ok(ForecastOutput {
        site: Some(site_out),
        policy: Some(args.policy.as_str().to_owned()),
        catalogue: Some(catalogue_output(&path, &catalogue)),
        handovers_at,
        timeline: segments,
        warnings,
        samples,
        dish: Some(dish),
        basis: Some(basis_output(basis.as_ref())),
        ..ForecastOutput::of(&forecast, at)
    })
}

/// Watches the dish for `--watch` of dish time; the dish's position from `--lat/--lon` or, when
/// they are not given, from the dish.
async fn watch(args: &ForecastArgs, dish: &str) -> Result<(DriverReport, SiteOutput)> {
    let client = connect_dish(dish, args.time_scale, None).await?;
    let site = match (args.lat, args.lon) {
        (Some(lat), Some(lon)) => SiteOutput {
            lat_deg: lat,
            lon_deg: lon,
            alt_m: args.alt,
        },
        (None, None) => {
            let location = client.location().await.with_context(|| {
                format!("the dish at {dish} does not tell its position; give --lat and --lon")
            })?;
            tracing::info!(
                "the dish is at {:.4}, {:.4}, {:.0} m",
                location.lat_deg,
                location.lon_deg,
                location.alt_m
            );
            SiteOutput {
                lat_deg: location.lat_deg,
                lon_deg: location.lon_deg,
                alt_m: location.alt_m,
            }
        }
        _ => bail!("give both --lat and --lon, or neither (the dish is then asked)"),
    };
    let watch_s = args.watch.as_secs().max(1);
    tracing::info!(
        "watching the dish at {dish} for {watch_s} s of dish time to identify the serving satellite"
    );
    let config = DriverConfig {
        time_scale: args.time_scale,
        duration: Some(common::chrono_duration(args.watch)),
        ..DriverConfig::default()
    };
    let report = run_detector_with_progress(&client, config, watch_s, "watching the dish")
        .await
        .with_context(|| format!("watching the dish at {dish} failed"))?;
    Ok((report, site))
}

/// What a hybrid forecast was based on, for the output.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BasisOutput {
    /// The serving satellite was identified.
    Identified {
        /// NORAD number.
        norad_id: u64,
        /// The slot whose track was matched.
        slot: DateTime<Utc>,
        /// Mean separation between the observed and the predicted track, degrees.
        mean_separation_deg: f64,
        /// Observed points matched.
        points: usize,
        /// The second-best satellite.
        runner_up_norad_id: Option<u64>,
    },
    /// No slot had enough observed points.
    NoObservation,
    /// No satellite was close enough.
    NoMatch {
        /// The closest satellite.
        best_norad_id: Option<u64>,
        /// Its mean separation, degrees.
        best_mean_separation_deg: Option<f64>,
    },
}

fn basis_output(basis: Option<&Basis>) -> BasisOutput {
    match basis {
        Some(Basis::Identified(m)) => BasisOutput::Identified {
            norad_id: m.norad_id,
            slot: m.slot,
            mean_separation_deg: m.mean_separation_deg,
            points: m.points,
            runner_up_norad_id: m.runner_up.map(|(id, _)| id),
        },
        Some(Basis::NoMatch { best }) => BasisOutput::NoMatch {
            best_norad_id: best.map(|m| m.norad_id),
            best_mean_separation_deg: best.map(|m| m.mean_separation_deg),
        },
        _ => BasisOutput::NoObservation,
    }
}

fn basis_text(basis: Option<&Basis>) -> String {
    match basis {
        Some(Basis::Identified(m)) => format!(
            "identified NORAD {} in the slot of {} ({} points, mean separation {:.1} deg)",
            m.norad_id,
            rfc3339_short(m.slot),
            m.points,
            m.mean_separation_deg
        ),
        Some(Basis::NoMatch { best: Some(m) }) => format!(
            "no satellite within the separation limit; the closest, NORAD {}, was {:.1} deg off",
            m.norad_id, m.mean_separation_deg
        ),
        Some(Basis::NoMatch { best: None }) => "no candidate satellite".to_owned(),
        _ => "no slot with enough observed track points".to_owned(),
    }
}

fn steps_of(forecast: &Forecast) -> Vec<usize> {
    (0..HORIZON_STEPS)
        .filter(|&k| forecast.steps().is_handover(k))
        .collect()
}

/// Cuts the part of `timeline` (entries one second apart from `from`) that covers
/// `[at, at + 120 s]` into segments, one per serving satellite, and per-second samples.
pub fn summarise(
    catalogue: &Catalogue,
    at: DateTime<Utc>,
    from: DateTime<Utc>,
    timeline: &[Option<Serving>],
) -> (Vec<Segment>, Vec<Sample>) {
    let horizon = HORIZON_STEPS as f64;
    let offset = |i: usize| (from + ChronoDuration::seconds(i as i64) - at).as_seconds_f64();
    // The entry serving at t0 is the last one at or before it.
    let first = (0..timeline.len())
        .take_while(|&i| offset(i) <= 0.0)
        .last()
        .unwrap_or(0);
    let window: Vec<(f64, Option<Serving>)> = (first..timeline.len())
        .map(|i| (offset(i), timeline[i]))
        .take_while(|(o, _)| *o <= horizon)
        .collect();
    let samples = window
        .iter()
        .map(|(o, s)| Sample {
            offset_s: *o,
            serving: s.map(|s| (s.norad_id, s.position.elevation_deg)),
        })
        .collect();
    let mut segments: Vec<Segment> = Vec::new();
    let mut run_start = 0;
    for i in 1..=window.len() {
        let id = |k: usize| window[k].1.map(|s| s.norad_id);
        if i < window.len() && id(i) == id(run_start) {
            continue;
        }
        let run = &window[run_start..i];
        let start_s = run[0].0.max(0.0);
        let end_s = if i < window.len() {
            window[i].0
        } else {
            horizon
        };
        let elevations: Vec<f64> = run
            .iter()
            .filter_map(|(_, s)| s.map(|s| s.position.elevation_deg))
            .collect();
        let first_pos = run[0].1.map(|s| s.position);
        let last_pos = run[run.len() - 1].1.map(|s| s.position);
        let norad_id = id(run_start);
        segments.push(Segment {
            norad_id,
            name: norad_id
                .and_then(|id| catalogue.get(id))
                .and_then(|s| s.name())
                .map(|n| n.trim().to_owned()),
            from: at + seconds(start_s),
            to: at + seconds(end_s),
            from_offset_s: start_s,
            to_offset_s: end_s,
            elevation_start_deg: first_pos.map(|p| p.elevation_deg),
            elevation_end_deg: last_pos.map(|p| p.elevation_deg),
            elevation_max_deg: elevations.iter().copied().reduce(f64::max),
            azimuth_start_deg: first_pos.map(|p| p.azimuth_deg),
            azimuth_end_deg: last_pos.map(|p| p.azimuth_deg),
        });
        run_start = i;
    }
    (segments, samples)
}

fn seconds(s: f64) -> ChronoDuration {
    ChronoDuration::milliseconds((s * 1000.0).round() as i64)
}

fn timeline_picture(output: &ForecastOutput) -> TimelinePicture {
    let site = output
        .site
        .map(|s| format!(", {:.2}, {:.2}", s.lat_deg, s.lon_deg))
        .unwrap_or_default();
    let what = if output.predicted.iter().any(|p| p.probability < 1.0) {
        format!(
            "{:.1} handovers expected over {} boundaries",
            output.expected_count,
            output.predicted.len()
        )
    } else {
        format!("{} handovers in 120 s", output.handover_count)
    };
    TimelinePicture {
        title: format!(
            "{} forecast at {}{site}: {what}",
            output.source,
            rfc3339_short(output.at),
        ),
        samples: output.samples.clone(),
        handover_offsets_s: output
            .handovers_at
            .iter()
            .map(|&t| (t - output.at).as_seconds_f64())
            .collect(),
        steps: output.handover_steps.clone(),
    }
}

fn print_human(output: &ForecastOutput) -> Result<()> {
    out(format!(
        "{} forecast, t0 = {}",
        output.source,
        rfc3339_short(output.at)
    ))?;
    if let Some(site) = output.site {
        out(format!(
            "  site      {:.4}, {:.4}, {} m",
            site.lat_deg, site.lon_deg, site.alt_m
        ))?;
    }
    if let Some(policy) = &output.policy {
        out(format!("  policy    {policy}"))?;
    }
    if let (Some(dish), Some(basis)) = (&output.dish, &output.basis) {
        let text = match basis {
            BasisOutput::Identified {
                norad_id,
                slot,
                mean_separation_deg,
                points,
                ..
            } => format!(
                "serving satellite identified: NORAD {norad_id} in the slot of {} ({points} \
                 points, mean separation {mean_separation_deg:.1} deg)",
                rfc3339_short(*slot)
            ),
            BasisOutput::NoObservation => {
                "not enough track observed; plain orbital forecast".to_owned()
            }
            BasisOutput::NoMatch { .. } => {
                "no satellite matched the track; plain orbital forecast".to_owned()
            }
        };
        out(format!("  dish      {dish}: {text}"))?;
    }
    if let Some(cat) = &output.catalogue {
        let age = cat
            .newest_epoch
            .map(|e| {
                let days = (output.at - e).as_seconds_f64() / 86_400.0;
                format!(
                    ", newest epoch {} (t0 is {days:+.2} days from it)",
                    rfc3339_short(e)
                )
            })
            .unwrap_or_default();
        out(format!(
            "  TLEs      {}: {} satellites{age}",
            cat.path, cat.satellites
        ))?;
    }
    out("")?;
    let steps: Vec<String> = output
        .handover_steps
        .iter()
        .map(|k| k.to_string())
        .collect();
    out(format!(
        "{} handover{} in the next 120 s{}",
        output.handover_count,
        if output.handover_count == 1 { "" } else { "s" },
        if steps.is_empty() {
            String::new()
        } else {
            format!(", at steps {}", steps.join(" "))
        }
    ))?;
    if output.predicted.iter().any(|p| p.probability < 1.0) {
        let probabilities: Vec<String> = output
            .predicted
            .iter()
            .map(|p| format!("t0+{:.1} s p={:.3}", p.offset_s, p.probability))
            .collect();
        out(format!(
            "  expected {:.2} handovers: {}",
            output.expected_count,
            probabilities.join(", ")
        ))?;
    }
    out("  step k covers (t0 + k s, t0 + k+1 s]; H = a handover with probability >= 0.5")?;
    for row in 0..2 {
        let bits: String = output.handover[row * 60..(row + 1) * 60]
            .iter()
            .enumerate()
            .map(|(i, &b)| match (b, i % 10) {
                (1, _) => 'H',
                (_, 0) => '|',
                _ => '.',
            })
            .collect();
        out(format!("  {:>3} {bits}", row * 60))?;
    }
    if !output.timeline.is_empty() {
        out("")?;
        out("serving satellites:")?;
        for seg in &output.timeline {
            let span = format!(
                "t0{:+6.1} s .. t0{:+6.1} s",
                seg.from_offset_s, seg.to_offset_s
            );
            match seg.norad_id {
                Some(id) => out(format!(
                    "  {span}  NORAD {id:<6} {:<24} elevation {:5.1} -> {:5.1} deg, azimuth {:5.1} -> {:5.1} deg",
                    seg.name.as_deref().unwrap_or("-"),
                    seg.elevation_start_deg.unwrap_or(f64::NAN),
                    seg.elevation_end_deg.unwrap_or(f64::NAN),
                    seg.azimuth_start_deg.unwrap_or(f64::NAN),
                    seg.azimuth_end_deg.unwrap_or(f64::NAN),
                ))?,
                None => out(format!(
                    "  {span}  no satellite above the minimum elevation"
                ))?,
            }
        }
    }
    Ok(())
}

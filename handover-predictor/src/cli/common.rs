//! Pieces the subcommands share: argument parsers, the observer site, the serving policy, TLE
//! loading with errors that name the file, output helpers, and the dish connection.

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Duration as ChronoDuration, SecondsFormat, Utc};
use clap::{Args, ValueEnum};
use handover_predictor::dish::{
    DishClient, DriverConfig, DriverError, DriverReport, run_detector_with,
};
use handover_predictor::orbit::{
    Catalogue, DelayConfig, Observer, ServingPolicy, StarlinkConfig, walker,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// An instant further than this from the catalogue's newest epoch is warned about: SGP4 errors
/// grow by kilometres a day, so after a few days a serving satellite may be the wrong one.
pub const STALE_AFTER_DAYS: i64 = 3;

/// Where the shipped Starlink generation-1 catalogue lives, relative to the repository root.
pub const SHIPPED_GEN1: &str = "traces/tle/starlink-gen1.tle";

/// The observer's position: `--lat`, `--lon`, `--alt`.
#[derive(Debug, Clone, Copy, Args)]
pub struct SiteArgs {
    /// Latitude of the dish, degrees north (negative south), in [-90, 90].
    #[arg(long, value_name = "DEG", allow_negative_numbers = true, value_parser = parse_latitude)]
    pub lat: f64,
    /// Longitude of the dish, degrees east (negative west), in [-180, 360].
    #[arg(long, value_name = "DEG", allow_negative_numbers = true, value_parser = parse_longitude)]
    pub lon: f64,
    /// Altitude of the dish above the WGS84 ellipsoid, metres.
    #[arg(long, value_name = "M", default_value_t = 0.0, allow_negative_numbers = true, value_parser = parse_altitude)]
    pub alt: f64,
}

impl SiteArgs {
    /// The observer at this site.
    pub fn observer(&self) -> Result<Observer> {
        Observer::new(self.lat, self.lon, self.alt).context("invalid --lat/--lon/--alt")
    }
}

/// Which serving policy picks the satellite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyArg {
    /// Starlink's 15-s slot grid (reassignment at seconds 12, 27, 42, 57 of each minute).
    Starlink,
    /// StarryNet's per-second lowest-delay rule (the paper's emulation).
    Delay,
}

impl PolicyArg {
    /// The policy, with its minimum elevation replaced when one is given.
    pub fn policy(self, min_elevation_deg: Option<f64>) -> ServingPolicy {
        match self {
            Self::Starlink => {
                let mut config = StarlinkConfig::default();
                if let Some(el) = min_elevation_deg {
                    config.min_elevation_deg = el;
                }
                ServingPolicy::Starlink(config)
            }
            Self::Delay => {
                let mut config = DelayConfig::default();
                if let Some(el) = min_elevation_deg {
                    config.min_elevation_deg = el;
                }
                ServingPolicy::Delay(config)
            }
        }
    }

    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starlink => "starlink",
            Self::Delay => "delay",
        }
    }
}

fn parse_number(s: &str) -> Result<f64, String> {
    let value: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number"))?;
    if !value.is_finite() {
        return Err(format!("{s:?} is not a finite number"));
    }
    Ok(value)
}

/// A latitude in [-90, 90] degrees.
pub fn parse_latitude(s: &str) -> Result<f64, String> {
    let value = parse_number(s)?;
    if !(-90.0..=90.0).contains(&value) {
        return Err(format!("latitude {value} is outside [-90, 90] degrees"));
    }
    Ok(value)
}

/// A longitude in [-180, 360] degrees.
pub fn parse_longitude(s: &str) -> Result<f64, String> {
    let value = parse_number(s)?;
    if !(-180.0..=360.0).contains(&value) {
        return Err(format!("longitude {value} is outside [-180, 360] degrees"));
    }
    Ok(value)
}

/// An altitude in [-500, 100000] metres (a ground terminal, an aircraft at most).
pub fn parse_altitude(s: &str) -> Result<f64, String> {
    let value = parse_number(s)?;
    if !(-500.0..=100_000.0).contains(&value) {
        return Err(format!("altitude {value} m is outside [-500, 100000] m"));
    }
    Ok(value)
}

/// A minimum elevation in [0, 90) degrees.
pub fn parse_elevation(s: &str) -> Result<f64, String> {
    let value = parse_number(s)?;
    if !(0.0..90.0).contains(&value) {
        return Err(format!("elevation {value} is outside [0, 90) degrees"));
    }
    Ok(value)
}

/// A time-scale factor: positive, finite, at most 1000.
pub fn parse_time_scale(s: &str) -> Result<f64, String> {
    let value = parse_number(s)?;
    if !(value > 0.0 && value <= 1000.0) {
        return Err(format!("time scale {value} is outside (0, 1000]"));
    }
    Ok(value)
}

/// An RFC 3339 instant (`2025-05-12T12:00:00Z`, any offset), or `now`.
pub fn parse_instant(s: &str) -> Result<DateTime<Utc>, String> {
    if s.trim().eq_ignore_ascii_case("now") {
        return Ok(Utc::now());
    }
    DateTime::parse_from_rfc3339(s.trim())
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("{s:?} is not an RFC 3339 instant like 2025-05-12T12:00:00Z ({e})"))
}

/// A positive duration like `120s`, `10m`, `1h30m` or `500ms`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s.trim())
        .map_err(|e| format!("{s:?} is not a duration like 120s, 10m or 1h ({e})"))?;
    if d.is_zero() {
        return Err("the duration must be longer than zero".into());
    }
    if d > Duration::from_secs(365 * 86_400) {
        return Err(format!("{s:?} is longer than a year"));
    }
    Ok(d)
}

/// A std duration as a chrono one (durations here are under a year, so this cannot overflow).
pub fn chrono_duration(d: Duration) -> ChronoDuration {
    ChronoDuration::from_std(d).unwrap_or(ChronoDuration::MAX)
}

/// RFC 3339 with milliseconds, `Z` for UTC.
pub fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// RFC 3339 with whole seconds when the instant has no fraction.
pub fn rfc3339_short(t: DateTime<Utc>) -> String {
    use chrono::Timelike;
    if t.nanosecond() == 0 {
        t.to_rfc3339_opts(SecondsFormat::Secs, true)
    } else {
        rfc3339(t)
    }
}

/// Loads a TLE catalogue; errors name the file (and the line, for a damaged element set).
pub fn load_catalogue(path: &Path) -> Result<Arc<Catalogue>> {
    // The error names the file (and the line of a damaged element set).
    let catalogue = Catalogue::load(path).context("cannot load the TLE catalogue")?;
    if catalogue.is_empty() {
        bail!(
            "the TLE catalogue {} holds no propagatable satellite ({} skipped)",
            path.display(),
            catalogue.skipped()
        );
    }
    tracing::info!(
        "loaded {} satellites from {} ({} skipped), newest epoch {}",
        catalogue.len(),
        path.display(),
        catalogue.skipped(),
        catalogue
            .newest_epoch()
            .map(rfc3339_short)
            .unwrap_or_default(),
    );
    Ok(Arc::new(catalogue))
}

/// The shipped Starlink generation-1 catalogue: `traces/tle/starlink-gen1.tle` when run from
/// the repository root (or the crate directory), otherwise generated in memory (the same text).
pub fn shipped_gen1() -> Result<(String, Arc<Catalogue>)> {
    for candidate in [SHIPPED_GEN1, "../traces/tle/starlink-gen1.tle"] {
        let path = Path::new(candidate);
        if path.is_file() {
            return Ok((candidate.to_owned(), load_catalogue(path)?));
        }
    }
    tracing::debug!("{SHIPPED_GEN1} not found; generating the catalogue in memory");
    let text = walker::generate(&walker::starlink_gen1(), walker::shipped_epoch())
        .context("generating the Starlink generation-1 catalogue")?;
    let catalogue = Catalogue::parse(&text, "starlink-gen1 (generated)")
        .context("parsing the generated Starlink generation-1 catalogue")?;
    Ok(("starlink-gen1 (generated)".to_owned(), Arc::new(catalogue)))
}

/// The catalogue's newest epoch, or an error naming the file.
pub fn newest_epoch(catalogue: &Catalogue) -> Result<DateTime<Utc>> {
    catalogue
        .newest_epoch()
        .with_context(|| format!("the TLE catalogue {} has no epoch", catalogue.origin()))
}

/// A warning when `at` is more than [`STALE_AFTER_DAYS`] from the catalogue's newest epoch.
pub fn staleness_warning(catalogue: &Catalogue, at: DateTime<Utc>) -> Option<String> {
    let newest = catalogue.newest_epoch()?;
    let days = (at - newest).num_seconds().abs() as f64 / 86_400.0;
    (days > STALE_AFTER_DAYS as f64).then(|| {
        format!(
            "{} is {days:.1} days from the newest element set of {} ({}); TLEs go stale within \
             days, so the serving satellites may be wrong (fetch a fresh catalogue or pass an \
             --at/--start near its epoch)",
            rfc3339_short(at),
            catalogue.origin(),
            rfc3339_short(newest),
        )
    })
}

/// Writes one line to stdout (errors, e.g. a closed pipe, are returned, not panicked on).
pub fn out(line: impl std::fmt::Display) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}").context("writing to stdout")?;
    stdout.flush().context("writing to stdout")?;
    Ok(())
}

/// Writes a value as one line of JSON to stdout.
pub fn out_json<T: Serialize>(value: &T) -> Result<()> {
    out(serde_json::to_string(value).context("serialising the output")?)
}

/// The error and its causes on one line, `: `-separated, leaving out a cause whose text the
/// message already holds (errors that print their source in their own message).
pub fn error_message(error: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if message.contains(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}

/// Whether an error is stdout closing under us (`| head`): not worth reporting.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// A progress bar on stderr (drawn only when stderr is a terminal).
pub fn progress_bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    let style = ProgressStyle::with_template(
        "{spinner} {msg} [{elapsed_precise}] [{wide_bar}] {pos}/{len} (eta {eta})",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(what.to_owned());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A file to write, with its parent directory created.
pub fn create_file(path: &Path, what: &str) -> Result<std::io::BufWriter<std::fs::File>> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| {
            format!(
                "cannot create the directory {} for {what}",
                parent.display()
            )
        })?;
    }
    let file = std::fs::File::create(path)
        .with_context(|| format!("cannot create {what} {}", path.display()))?;
    Ok(std::io::BufWriter::new(file))
}

/// The multi-threaded tokio runtime the dish subcommands run on.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Resolves after Ctrl-C (SIGINT) or, on Unix, SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            // No handler could be installed: never resolve rather than stop at once.
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = async {
            match signal(SignalKind::terminate()) {
                Ok(mut term) => {
                    term.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = ctrl_c => {}
            () = term => {}
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}

/// The client settings for a dish whose clock runs `time_scale` times faster than real time.
///
/// A time-scaled simulator answers in microseconds and every dish second is short, so a call
/// gets 500 ms and no retries (a retried poll would land in the next dish second); a real dish
/// keeps the client's defaults (2 s per call, bounded retries). `call_timeout` overrides either.
pub fn dish_client_config(
    time_scale: f64,
    call_timeout: Option<Duration>,
) -> handover_predictor::dish::ClientConfig {
    use handover_predictor::dish::ClientConfig;
    let scaled = time_scale > 1.0;
    let defaults = ClientConfig::default();
    ClientConfig {
        call_timeout: call_timeout.unwrap_or(if scaled {
            Duration::from_millis(500)
        } else {
            defaults.call_timeout
        }),
        retries: if scaled { 0 } else { defaults.retries },
        ..defaults
    }
}

/// Connects to the dish at `dish` (the `--dish` argument) with [`dish_client_config`].
pub async fn connect_dish(
    dish: &str,
    time_scale: f64,
    call_timeout: Option<Duration>,
) -> Result<DishClient> {
    let config = dish_client_config(time_scale, call_timeout);
    tracing::info!(
        "connecting to the dish at {dish} (timeout {:?} per call)",
        config.call_timeout
    );
    DishClient::connect_with(dish.to_owned(), config)
        .await
        .with_context(|| format!("cannot connect to the dish at {dish} (--dish)"))
}

/// Runs the detector on `client` under `config` behind a progress bar of `seconds` dish seconds
/// labelled `what`, advanced by the dish time of the track points seen and cleared when the run
/// ends, whatever its outcome.
pub async fn run_detector_with_progress(
    client: &DishClient,
    config: DriverConfig,
    seconds: u64,
    what: &str,
) -> Result<DriverReport, DriverError> {
    let bar = progress_bar(seconds, what);
    let mut first = None;
    let report = run_detector_with(client, config, |observation| {
        if let Some(point) = &observation.point {
            let origin = *first.get_or_insert(point.at);
            bar.set_position((point.at - origin).num_seconds().max(0) as u64 + 1);
        }
    })
    .await;
    bar.finish_and_clear();
    report
}

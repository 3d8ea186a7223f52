//! `dish-sim`: a simulated dish whose serving satellite comes from SGP4 orbits
//! ([`OrbitalTruth`]), with the truth written out for evaluation.

use super::common::{
    self, PolicyArg, SiteArgs, chrono_duration, create_file, load_catalogue, newest_epoch, out,
    out_json, parse_duration, parse_elevation, parse_instant, parse_time_scale, rfc3339,
    rfc3339_short, staleness_warning,
};
use anyhow::{Context, Result, bail};
use chrono::{DateTime, Duration as ChronoDuration, DurationRound, Utc};
use clap::Args;
use handover_predictor::dish::{
    DishLocation, DrawnTruth, OrbitalTruth, SimConfig, SkyTruth, orbital_truth, parse_switch_rate,
    serve,
};
use handover_predictor::eval::{SATELLITE_COLUMN, TIMESTAMP_COLUMN};
use handover_predictor::orbit::Catalogue;
use handover_predictor::orbit::ServingPolicy;
use serde::Serialize;
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `dish-sim`.
#[derive(Debug, Args)]
pub struct DishSimArgs {
    /// Address to serve the dish API on. Port 0 picks a free port; the bound address is printed.
    /// Only loopback addresses are accepted unless --allow-non-loopback is given.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9200")]
    listen: String,
    /// Allow --listen on a non-loopback address (exposes the simulator to the network).
    #[arg(long)]
    allow_non_loopback: bool,
    /// TLE catalogue of the constellation the simulated dish sees.
    #[arg(long, value_name = "FILE")]
    tle: PathBuf,
    #[command(flatten)]
    site: SiteArgs,
    /// Run the dish's clock N times faster than real time (follow it with `detect --time-scale
    /// N`).
    #[arg(long, value_name = "N", default_value_t = 1.0, value_parser = parse_time_scale)]
    time_scale: f64,
    /// Answer get_location with PermissionDenied, like current firmware.
    #[arg(long)]
    location_denied: bool,
    /// Dish time at start, RFC 3339 or `now`. Default: the catalogue's newest epoch (TLEs go
    /// stale within days, so the simulation stays where its orbits are accurate).
    #[arg(long, value_name = "RFC3339", value_parser = parse_instant)]
    start: Option<DateTime<Utc>>,
    /// Serving policy: starlink (15-s slots) or delay (StarryNet's per-second lowest delay).
    #[arg(long, value_enum, default_value_t = PolicyArg::Starlink)]
    policy: PolicyArg,
    /// Minimum elevation of a serving satellite, degrees (default 25).
    #[arg(long, value_name = "DEG", value_parser = parse_elevation)]
    min_elevation: Option<f64>,
    /// Write the truth to FILE as JSON lines: a header, then per dish second the serving NORAD
    /// number, its direction and the handover bit (1 when the satellite changed at that second).
    #[arg(long, value_name = "FILE")]
    truth_out: Option<PathBuf>,
    /// Write the truth to FILE as a per-second serving-satellite CSV in SatInView's format
    /// (Timestamp, Connected_Satellite, Elevation, Azimuth, Distance), which `eval --truth` reads.
    #[arg(long, value_name = "FILE")]
    truth_csv: Option<PathBuf>,
    /// Draw the switches: at each slot boundary the serving satellite changes with this
    /// probability (seeded by --seed) instead of by the fitted policy's keep rule; the policy
    /// still picks which satellite. A number in [0, 1] or a site preset measured on real logs:
    /// brisbane (0.845), kanazawa (0.576), louvain (0.769), pooled (0.74). Starlink policy only.
    #[arg(long, value_name = "RATE|PRESET", value_parser = parse_switch_rate)]
    switch_rate: Option<f64>,
    /// Seed of the --switch-rate draws.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Do not serve the dish API: compute the --duration of truth as fast as possible, write
    /// --truth-out / --truth-csv, and exit.
    #[arg(long, requires = "duration")]
    offline: bool,
    /// Stop after this much dish time (120s, 10m, 1h); default: run until Ctrl-C.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// How often to print the serving satellite, in real time.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    report_every: Duration,
    /// Print JSON lines on stdout (listening, serving, stopped events) instead of text.
    #[arg(long)]
    json: bool,
}

/// A line of `--json` output.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Event {
    /// The server is up.
    Listening {
        addr: SocketAddr,
        start: DateTime<Utc>,
        time_scale: f64,
        lat_deg: f64,
        lon_deg: f64,
        alt_m: f64,
        policy: &'static str,
        satellites: usize,
    },
    /// The serving satellite now.
    Serving {
        dish_time: DateTime<Utc>,
        norad_id: Option<u64>,
        azimuth_deg: Option<f64>,
        elevation_deg: Option<f64>,
        handovers: usize,
    },
    /// The server stopped.
    Stopped {
        dish_time: DateTime<Utc>,
        seconds: u64,
        handovers: usize,
        interrupted: bool,
    },
}

/// A line of the `--truth-out` file.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TruthLine {
    /// What was simulated.
    Header {
        /// Dish time at start.
        start: DateTime<Utc>,
        /// Dish latitude.
        lat_deg: f64,
        /// Dish longitude.
        lon_deg: f64,
        /// Dish altitude.
        alt_m: f64,
        /// Serving policy.
        policy: &'static str,
        /// TLE file.
        tle: String,
        /// Clock rate.
        time_scale: f64,
        /// The drawn switch rate (`--switch-rate`), absent when the policy decides.
        #[serde(skip_serializing_if = "Option::is_none")]
        switch_rate: Option<f64>,
        /// The seed of the draws, with `switch_rate`.
        #[serde(skip_serializing_if = "Option::is_none")]
        seed: Option<u64>,
    },
    /// One dish second.
    Second {
        /// The whole second.
        t: DateTime<Utc>,
        /// The serving satellite, `None` when none qualifies.
        norad_id: Option<u64>,
        /// Its azimuth, degrees.
        azimuth_deg: Option<f64>,
        /// Its elevation, degrees.
        elevation_deg: Option<f64>,
        /// Its slant range, km.
        range_km: Option<f64>,
        /// 1 when a satellite serves and differs from the last one that served before.
        handover: u8,
    },
}

/// Runs `dish-sim`.
pub fn run(args: DishSimArgs) -> Result<()> {
    let addr = listen_addr(&args.listen)?;
    if !addr.ip().is_loopback() && !args.allow_non_loopback {
        bail!(
            "refusing to listen on {addr}, which is not a loopback address: the simulator would \
             be reachable from the network (pass --allow-non-loopback if that is intended)"
        );
    }
    common::runtime()?.block_on(simulate(args, addr))
}

fn listen_addr(listen: &str) -> Result<SocketAddr> {
    let mut addrs = listen
        .to_socket_addrs()
        .with_context(|| format!("invalid --listen address {listen:?} (expected host:port)"))?;
    addrs
        .next()
        .with_context(|| format!("--listen {listen:?} resolves to no address"))
}

/// Follows the truth second by second: handover bits, counts, and the `--truth-out` file.
struct Tracker {
    truth: Arc<dyn SkyTruth>,
    catalogue: Arc<Catalogue>,
    next: DateTime<Utc>,
    last_id: Option<u64>,
    handovers: usize,
    seconds: u64,
    file: Option<(PathBuf, std::io::BufWriter<std::fs::File>)>,
    csv: Option<(PathBuf, std::io::BufWriter<std::fs::File>)>,
}

type OutFile = Option<(PathBuf, std::io::BufWriter<std::fs::File>)>;

impl Tracker {
    fn new(
        truth: Arc<dyn SkyTruth>,
        catalogue: Arc<Catalogue>,
        start: DateTime<Utc>,
        file: OutFile,
        mut csv: OutFile,
    ) -> Result<Self> {
        if let Some((path, out)) = &mut csv {
            writeln!(
                out,
                "{TIMESTAMP_COLUMN},{SATELLITE_COLUMN},Elevation,Azimuth,Distance"
            )
            .with_context(|| format!("cannot write the truth CSV {}", path.display()))?;
        }
        let mut first = start
            .duration_trunc(ChronoDuration::seconds(1))
            .unwrap_or(start);
        if first < start {
            first += ChronoDuration::seconds(1);
        }
        // What served before the first second: look back one slot past any gap.
        let last_id = (1..=15)
            .map(|k| truth.serving(first - ChronoDuration::seconds(k)))
            .find_map(|s| s.map(|s| s.norad_id));
        Ok(Self {
            truth,
            catalogue,
            next: first,
            last_id,
            handovers: 0,
            seconds: 0,
            file,
            csv,
        })
    }

    /// Records every whole second up to `until`.
    fn advance(&mut self, until: DateTime<Utc>) -> Result<()> {
        while self.next <= until {
            let t = self.next;
            let serving = self.truth.serving(t);
            let id = serving.map(|s| s.norad_id);
            let handover = match (self.last_id, id) {
                (Some(a), Some(b)) => a != b,
                _ => false,
            };
            if id.is_some() {
                self.last_id = id;
            }
            self.handovers += usize::from(handover);
            self.seconds += 1;
            if self.file.is_some() {
                self.write(&TruthLine::Second {
                    t,
                    norad_id: id,
                    azimuth_deg: serving.map(|s| s.position.azimuth_deg),
                    elevation_deg: serving.map(|s| s.position.elevation_deg),
                    range_km: serving.map(|s| s.position.range_km),
                    handover: u8::from(handover),
                })?;
            }
            if let Some((path, csv)) = &mut self.csv {
                let line = match serving {
                    Some(s) => {
                        let name = satellite_name(&self.catalogue, s.norad_id);
                        let name = if name.is_empty() {
                            s.norad_id.to_string()
                        } else {
                            name
                        };
                        format!(
                            "{},{name},{:.2},{:.2},{:.1}",
                            t.format("%Y-%m-%dT%H:%M:%SZ"),
                            s.position.elevation_deg,
                            s.position.azimuth_deg,
                            s.position.range_km
                        )
                    }
                    None => format!("{},,,,", t.format("%Y-%m-%dT%H:%M:%SZ")),
                };
                writeln!(csv, "{line}")
                    .with_context(|| format!("cannot write the truth CSV {}", path.display()))?;
            }
            self.next += ChronoDuration::seconds(1);
        }
        if let Some((path, file)) = &mut self.file {
            file.flush()
                .with_context(|| format!("cannot write the truth file {}", path.display()))?;
        }
        if let Some((path, csv)) = &mut self.csv {
            csv.flush()
                .with_context(|| format!("cannot write the truth CSV {}", path.display()))?;
        }
        Ok(())
    }

    fn write(&mut self, line: &TruthLine) -> Result<()> {
        if let Some((path, file)) = &mut self.file {
            serde_json::to_writer(&mut *file, line)
                .map_err(std::io::Error::from)
                .and_then(|()| file.write_all(b"\n"))
                .with_context(|| format!("cannot write the truth file {}", path.display()))?;
        }
        Ok(())
    }
}

fn satellite_name(catalogue: &Catalogue, id: u64) -> String {
    catalogue
        .get(id)
        .and_then(|s| s.name())
        .map(|n| n.trim().to_owned())
        .unwrap_or_default()
}

async fn simulate(args: DishSimArgs, addr: SocketAddr) -> Result<()> {
    let catalogue = load_catalogue(&args.tle)?;
    let observer = args.site.observer()?;
    let policy = args.policy.policy(args.min_elevation);
    let start = match args.start {
        Some(start) => start,
        None => newest_epoch(&catalogue)?,
    };
    if let Some(warning) = staleness_warning(&catalogue, start) {
        tracing::warn!("{warning}");
    }
    let truth: Arc<dyn SkyTruth> = match args.switch_rate {
        None => Arc::new(
            OrbitalTruth::new(Arc::clone(&catalogue), observer, policy)
                .context("invalid serving policy (--policy/--min-elevation)")?,
        ),
        Some(rate) => {
            let ServingPolicy::Starlink(config) = policy else {
                bail!(
                    "--switch-rate draws switches at Starlink's slot boundaries: it needs \
                     --policy starlink"
                );
            };
            Arc::new(
                DrawnTruth::new(Arc::clone(&catalogue), observer, config, rate, args.seed)
                    .context("invalid serving policy (--min-elevation)")?,
            )
        }
    };

    // The truth computes its timeline in chunks on first use, under a lock that requests wait
    // on; compute the first chunks now so that the first polls are answered at once.
    let warm_until = start
        + args
            .duration
            .map_or(ChronoDuration::seconds(60), chrono_duration)
            .min(ChronoDuration::minutes(70));
    let warm_started = Instant::now();
    let mut t = start;
    loop {
        truth.serving(t);
        if t >= warm_until {
            break;
        }
        t = (t + ChronoDuration::seconds(i64::from(orbital_truth::CHUNK_S))).min(warm_until);
    }
    tracing::debug!(
        "serving timeline up to {} computed in {:.1} s",
        rfc3339_short(warm_until),
        warm_started.elapsed().as_secs_f64()
    );

    let file = match &args.truth_out {
        Some(path) => Some((path.clone(), create_file(path, "the truth file")?)),
        None => None,
    };
    let csv = match &args.truth_csv {
        Some(path) => Some((path.clone(), create_file(path, "the truth CSV")?)),
        None => None,
    };
    let mut tracker = Tracker::new(Arc::clone(&truth), Arc::clone(&catalogue), start, file, csv)?;
    tracker.write(&TruthLine::Header {
        start,
        lat_deg: args.site.lat,
        lon_deg: args.site.lon,
        alt_m: args.site.alt,
        policy: args.policy.as_str(),
        tle: args.tle.display().to_string(),
        time_scale: args.time_scale,
        switch_rate: args.switch_rate,
        seed: args.switch_rate.map(|_| args.seed),
    })?;

    if args.offline {
        let end = start
            + args
                .duration
                .map_or(ChronoDuration::zero(), chrono_duration);
        tracker.advance(end)?;
        return finish(&args, end, &tracker, false);
    }

    let config = SimConfig {
        start,
        time_scale: args.time_scale,
        location: DishLocation::new(args.site.lat, args.site.lon, args.site.alt),
        location_denied: args.location_denied,
        allow_non_loopback: args.allow_non_loopback,
        ..SimConfig::new(start)
    };
    let sky: Arc<dyn SkyTruth> = truth.clone();
    let handle = serve(addr, config, sky)
        .await
        .with_context(|| format!("cannot start the simulated dish on {addr} (--listen)"))?;
    let bound = handle.local_addr();
    if args.json {
        out_json(&Event::Listening {
            addr: bound,
            start,
            time_scale: args.time_scale,
            lat_deg: args.site.lat,
            lon_deg: args.site.lon,
            alt_m: args.site.alt,
            policy: args.policy.as_str(),
            satellites: catalogue.len(),
        })?;
    } else {
        out(format!(
            "simulated dish listening on {bound}: dish time starts {} and runs {}x real time; \
             {:.4}, {:.4}, {} m; {} satellites from {}, policy {}",
            rfc3339_short(start),
            args.time_scale,
            args.site.lat,
            args.site.lon,
            args.site.alt,
            catalogue.len(),
            args.tle.display(),
            args.policy.as_str(),
        ))?;
    }
    if let Some(path) = &args.truth_out {
        tracing::info!("writing the truth to {}", path.display());
    }

    let stop_at = args.duration.map(|d| start + chrono_duration(d));
    let mut ticker = tokio::time::interval(Duration::from_millis(200));
    let mut next_report = Instant::now() + args.report_every;
    let signal = common::shutdown_signal();
    tokio::pin!(signal);
    let mut interrupted = false;
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            () = &mut signal => {
                interrupted = true;
                break;
            }
        }
        let now = handle.now();
        let until = stop_at.map_or(now, |s| now.min(s));
        tracker.advance(until)?;
        if Instant::now() >= next_report {
            next_report += args.report_every;
            report(&args, &catalogue, truth.as_ref(), until, tracker.handovers)?;
        }
        if stop_at.is_some_and(|s| now >= s) {
            break;
        }
    }
    let end = stop_at.map_or_else(|| handle.now(), |s| handle.now().min(s));
    tracker.advance(end)?;
    handle
        .shutdown()
        .await
        .context("the simulated dish did not stop cleanly")?;
    if interrupted {
        tracing::info!("interrupted");
    }
    finish(&args, end, &tracker, interrupted)
}

fn finish(
    args: &DishSimArgs,
    end: DateTime<Utc>,
    tracker: &Tracker,
    interrupted: bool,
) -> Result<()> {
    if args.json {
        out_json(&Event::Stopped {
            dish_time: end,
            seconds: tracker.seconds,
            handovers: tracker.handovers,
            interrupted,
        })
    } else {
        out(format!(
            "stopped at dish time {}: {} s simulated, {} handovers",
            rfc3339(end),
            tracker.seconds,
            tracker.handovers
        ))
    }
}

fn report(
    args: &DishSimArgs,
    catalogue: &Catalogue,
    truth: &dyn SkyTruth,
    at: DateTime<Utc>,
    handovers: usize,
) -> Result<()> {
    let serving = truth.serving(at);
    if args.json {
        return out_json(&Event::Serving {
            dish_time: at,
            norad_id: serving.map(|s| s.norad_id),
            azimuth_deg: serving.map(|s| s.position.azimuth_deg),
            elevation_deg: serving.map(|s| s.position.elevation_deg),
            handovers,
        });
    }
    match serving {
        Some(s) => out(format!(
            "dish time {}  serving NORAD {} {}  azimuth {:5.1} deg, elevation {:4.1} deg  \
             ({handovers} handovers so far)",
            rfc3339(at),
            s.norad_id,
            satellite_name(catalogue, s.norad_id),
            s.position.azimuth_deg,
            s.position.elevation_deg,
        )),
        None => out(format!(
            "dish time {}  no satellite above the minimum elevation ({handovers} handovers so far)",
            rfc3339(at)
        )),
    }
}

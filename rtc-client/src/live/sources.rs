//! The live handover sources a real call's policy reads (`call --handover`).
//!
//! - `none`: no handovers (terrestrial), source `none`.
//! - `mirror`: the paper's predictor (the last 120 s repeated). With `--link` it is fed the
//!   scenario's handovers as real time passes them, as a perfect detector would see them; without
//!   it, it has nothing to watch and gives its default forecast (8 evenly spaced handovers).
//! - `orbital:TLE@LAT,LON`: SGP4 over the TLE file for an observer at LAT, LON (degrees), with
//!   Starlink's 15-s slot policy, against the local UTC clock.
//! - `dish:ADDR`: the dish's gRPC API (a real dish at 192.168.100.1:9200, or the simulated one of
//!   `handover-predictor dish-sim`): the detector driver polls the obstruction map once per
//!   second and every detected handover feeds a mirror predictor.
//! - `scenario`: the `--link` scenario's own handover timeline (the oracle: evaluation only).
//! - `calibrated`: every Starlink slot boundary of the next 120 s (on the local UTC clock) with
//!   a switch probability. With `--link` it learns the rate from the scenario's boundaries as
//!   real time passes them; without it, it has nothing to watch and gives the pooled prior.
//! - `calibrated:dish:ADDR`: the same, learning from the dish detector's verdict at every slot
//!   boundary (switched or not), on the grid of the boundaries the detector dates.
//!
//! A source that cannot forecast (a TLE that does not load or is too old for the clock, a dish
//! that does not answer or stops answering) is not an error for the call: its `forecast` fails
//! with the reason, the [`pacer::PolicyController`] falls back to WebRTC's 2000 ms and records
//! why, and the status line shows it.

use super::LiveError;
use crate::scenario::sources::{TruthCalibrated, TruthMirror};
use crate::scenario::timeline::HandoverTimeline;
use chrono::{DateTime, Utc};
use handover_predictor::dish::{DishClient, DriverConfig, run_detector_with};
use handover_predictor::orbit::{Catalogue, Observer, ServingPolicy};
use handover_predictor::predict::{Calibrated, Mirror, Orbital, SLOT};
use handover_predictor::{Forecast, HandoverSource, NoHandovers, SourceError};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Which live source: what `--handover` parses to.
#[derive(Debug, Clone, PartialEq)]
pub enum HandoverSpec {
    /// No handovers.
    None,
    /// The mirror predictor.
    Mirror,
    /// SGP4 over a TLE file for an observer.
    Orbital {
        /// The TLE file.
        tle: PathBuf,
        /// Latitude, degrees.
        lat: f64,
        /// Longitude, degrees.
        lon: f64,
    },
    /// The dish's gRPC API at `HOST:PORT`.
    Dish(String),
    /// The link scenario's truth (needs `--link`).
    Scenario,
    /// The calibrated predictor.
    Calibrated,
    /// The calibrated predictor fed by the dish's detector at `HOST:PORT`.
    CalibratedDish(String),
}

impl HandoverSpec {
    /// Parses `none`, `mirror`, `calibrated`, `orbital:TLE@LAT,LON`, `dish:ADDR` or `scenario`.
    ///
    /// # Errors
    ///
    /// A message naming what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "none" => return Ok(Self::None),
            "mirror" => return Ok(Self::Mirror),
            "scenario" => return Ok(Self::Scenario),
            "calibrated" => return Ok(Self::Calibrated),
            _ => {}
        }
        if let Some(rest) = text.strip_prefix("calibrated:") {
            return match Self::parse(rest)? {
                Self::Dish(addr) => Ok(Self::CalibratedDish(addr)),
                _ => Err(format!("calibrated: takes dish:ADDR, not {rest:?}")),
            };
        }
        if let Some(addr) = text.strip_prefix("dish:") {
            if addr.is_empty() || addr.contains(char::is_whitespace) {
                return Err(format!("dish:ADDR needs HOST:PORT, not {addr:?}"));
            }
            return Ok(Self::Dish(addr.to_owned()));
        }
        if let Some(rest) = text.strip_prefix("orbital:") {
            let (tle, site) = rest
                .rsplit_once('@')
                .ok_or_else(|| format!("orbital takes TLE@LAT,LON, not {rest:?}"))?;
            let (lat, lon) = site
                .split_once(',')
                .ok_or_else(|| format!("orbital takes TLE@LAT,LON, not {rest:?}"))?;
            let lat: f64 = lat
                .trim()
                .parse()
                .map_err(|_| format!("latitude {lat:?} is not a number"))?;
            let lon: f64 = lon
                .trim()
                .parse()
                .map_err(|_| format!("longitude {lon:?} is not a number"))?;
            if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lon) {
                return Err(format!("{lat},{lon} is not a place on Earth"));
            }
            if tle.is_empty() {
                return Err("orbital: the TLE file is missing".into());
            }
            return Ok(Self::Orbital {
                tle: PathBuf::from(tle),
                lat,
                lon,
            });
        }
        Err(format!(
            "unknown handover source {text:?}: none, mirror, calibrated, calibrated:dish:ADDR, \
             orbital:TLE@LAT,LON, dish:ADDR or scenario"
        ))
    }

    /// The short name for reports.
    pub fn name(&self) -> String {
        match self {
            Self::None => "none".into(),
            Self::Mirror => "mirror".into(),
            Self::Orbital { tle, lat, lon } => format!("orbital:{}@{lat},{lon}", tle.display()),
            Self::Dish(addr) => format!("dish:{addr}"),
            Self::Scenario => "scenario".into(),
            Self::Calibrated => "calibrated".into(),
            Self::CalibratedDish(addr) => format!("calibrated:dish:{addr}"),
        }
    }
}

/// A source that always fails with its reason (a TLE that did not load): the call goes on with
/// the fallback.
#[derive(Debug, Clone)]
pub struct Failing {
    name: String,
    reason: String,
}

impl Failing {
    /// A source named `name` that fails with `reason`.
    pub fn new(name: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            reason: reason.into(),
        }
    }
}

impl HandoverSource for Failing {
    fn name(&self) -> &str {
        &self.name
    }

    fn forecast(&mut self, _now: Instant) -> Result<Forecast, SourceError> {
        Err(SourceError::Unavailable {
            source_name: self.name.clone(),
            reason: self.reason.clone(),
        })
    }
}

/// What the dish feeder has to say.
#[derive(Debug)]
struct DishState {
    mirror: Mirror,
    /// The calibrated predictor, once the first verdict has dated a slot boundary (its grid).
    calibrated: Option<Calibrated>,
    /// Whether the source answers with the calibrated predictor instead of the mirror.
    use_calibrated: bool,
    /// Why the feeder stopped, if it did.
    failed: Option<String>,
    /// Polls so far.
    observations: u64,
    /// Handovers detected so far.
    handovers: u64,
}

/// The dish source: a [`Mirror`] fed by the detector driver's task.
pub struct DishSource {
    state: Arc<Mutex<DishState>>,
    task: tokio::task::JoinHandle<()>,
}

impl DishSource {
    /// Connects to the dish at `addr` in the background and starts the detector; `epoch` is the
    /// call's time zero.
    pub fn start(addr: String, epoch: Instant) -> Self {
        Self::start_with(addr, epoch, false)
    }

    /// The same, answering with a [`Calibrated`] predictor that learns from every verdict.
    pub fn start_calibrated(addr: String, epoch: Instant) -> Self {
        Self::start_with(addr, epoch, true)
    }

    fn start_with(addr: String, epoch: Instant, use_calibrated: bool) -> Self {
        let state = Arc::new(Mutex::new(DishState {
            calibrated: None,
            use_calibrated,
            mirror: Mirror::new(epoch),
            failed: None,
            observations: 0,
            handovers: 0,
        }));
        let feeder = Arc::clone(&state);
        let task = tokio::spawn(async move {
            let reason = match feed(&addr, &feeder).await {
                Ok(()) => "the detector stopped".to_owned(),
                Err(e) => e,
            };
            lock(&feeder).failed = Some(reason);
        });
        Self { state, task }
    }
}

impl Drop for DishSource {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(state: &Mutex<DishState>) -> std::sync::MutexGuard<'_, DishState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Connects, anchors the dish's clock to ours, and runs the detector until it fails.
async fn feed(addr: &str, state: &Arc<Mutex<DishState>>) -> Result<(), String> {
    let client = DishClient::connect(addr.to_owned())
        .await
        .map_err(|e| format!("dish {addr} unreachable: {e}"))?;
    let status = client
        .status()
        .await
        .map_err(|e| format!("dish {addr} does not answer: {e}"))?;
    // Dish time (the simulated dish reports it; a real one does not: the local UTC clock) at
    // the instant we asked.
    let anchor: (DateTime<Utc>, Instant) =
        (status.dish_time.unwrap_or_else(Utc::now), Instant::now());
    let to_instant = move |at: DateTime<Utc>| {
        let offset = (at - anchor.0).to_std().unwrap_or(Duration::ZERO);
        anchor.1 + offset
    };
    let feeder = Arc::clone(state);
    run_detector_with(&client, DriverConfig::default(), move |observation| {
        let mut s = lock(&feeder);
        s.observations += 1;
        if let Some(verdict) = observation.verdict {
            let at = to_instant(verdict.at);
            // The detector dates each verdict at its slot boundary: the grid's reference.
            s.calibrated
                .get_or_insert_with(|| {
                    Calibrated::grid(at, SLOT)
                        .unwrap_or_else(|_| Calibrated::slot_grid(at, verdict.at))
                })
                .observe(at, verdict.handover);
            if verdict.handover {
                s.handovers += 1;
                s.mirror.observe(at);
            }
        }
    })
    .await
    .map(|_| ())
    .map_err(|e| format!("dish {addr} detector stopped: {e}"))
}

impl HandoverSource for DishSource {
    fn name(&self) -> &str {
        "dish"
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        let mut s = lock(&self.state);
        if s.use_calibrated && s.failed.is_none() {
            return match s.calibrated.as_mut() {
                Some(calibrated) => calibrated.forecast(now),
                None => Err(SourceError::Unavailable {
                    source_name: "dish".into(),
                    reason: "no slot boundary judged yet".into(),
                }),
            };
        }
        if let Some(reason) = &s.failed {
            return Err(SourceError::Unavailable {
                source_name: "dish".into(),
                reason: reason.clone(),
            });
        }
        if s.observations == 0 {
            return Err(SourceError::Unavailable {
                source_name: "dish".into(),
                reason: "no obstruction map polled yet".into(),
            });
        }
        s.mirror.forecast(now)
    }
}

/// Builds the source for `spec`. `timeline` is the `--link` scenario's truth (needed by
/// `scenario`, used by `mirror`); `epoch` is the call's time zero.
///
/// Only an impossible combination is an error (`scenario` without a link); a source that cannot
/// work (a bad TLE) is built as a [`Failing`] one, so the call runs on the fallback.
///
/// # Errors
///
/// [`LiveError::Config`] for `scenario` without a timeline.
pub fn build(
    spec: &HandoverSpec,
    timeline: Option<&HandoverTimeline>,
    epoch: Instant,
) -> Result<Box<dyn HandoverSource>, LiveError> {
    Ok(match spec {
        HandoverSpec::None => Box::new(NoHandovers),
        HandoverSpec::Mirror => match timeline {
            Some(t) => Box::new(TruthMirror::new(t, epoch)),
            None => Box::new(Mirror::new(epoch)),
        },
        HandoverSpec::Scenario => match timeline {
            Some(t) => Box::new(t.oracle(epoch)),
            None => {
                return Err(LiveError::Config(
                    "--handover scenario reads the --link scenario's timeline: give --link".into(),
                ));
            }
        },
        HandoverSpec::Orbital { tle, lat, lon } => {
            let catalogue = Catalogue::load(tle);
            let observer = Observer::new(*lat, *lon, 0.0);
            match (catalogue, observer) {
                (Ok(catalogue), Ok(observer)) => Box::new(Orbital::new(
                    Arc::new(catalogue),
                    observer,
                    ServingPolicy::default(),
                    epoch,
                    Utc::now(),
                )),
                (Err(e), _) => Box::new(Failing::new(
                    "orbital",
                    format!("TLE {} does not load: {e}", tle.display()),
                )),
                (_, Err(e)) => Box::new(Failing::new("orbital", format!("bad site: {e}"))),
            }
        }
        HandoverSpec::Dish(addr) => Box::new(DishSource::start(addr.clone(), epoch)),
        HandoverSpec::CalibratedDish(addr) => {
            Box::new(DishSource::start_calibrated(addr.clone(), epoch))
        }
        HandoverSpec::Calibrated => match timeline {
            Some(t) => Box::new(TruthCalibrated::new(t, None, epoch)),
            // The edge of a real call: the slot grid is read from the local UTC clock.
            None => Box::new(Calibrated::slot_grid(epoch, Utc::now())),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_bad_ones_say_why() {
        assert_eq!(HandoverSpec::parse("none"), Ok(HandoverSpec::None));
        assert_eq!(
            HandoverSpec::parse("calibrated"),
            Ok(HandoverSpec::Calibrated)
        );
        assert_eq!(
            HandoverSpec::parse("calibrated:dish:127.0.0.1:9200"),
            Ok(HandoverSpec::CalibratedDish("127.0.0.1:9200".into()))
        );
        assert!(
            HandoverSpec::parse("calibrated:mirror")
                .unwrap_err()
                .contains("dish:ADDR")
        );
        assert_eq!(
            HandoverSpec::parse("dish:127.0.0.1:9200"),
            Ok(HandoverSpec::Dish("127.0.0.1:9200".into()))
        );
        assert_eq!(
            HandoverSpec::parse("orbital:a/b.tle@50.5,-4"),
            Ok(HandoverSpec::Orbital {
                tle: "a/b.tle".into(),
                lat: 50.5,
                lon: -4.0
            })
        );
        for bad in [
            "",
            "dish:",
            "orbital:x",
            "orbital:x@1",
            "orbital:x@100,0",
            "orbital:@1,2",
            "oracle",
        ] {
            assert!(HandoverSpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_bad_tle_builds_a_failing_source() {
        let epoch = Instant::now();
        let spec = HandoverSpec::Orbital {
            tle: "/nonexistent/x.tle".into(),
            lat: 0.0,
            lon: 0.0,
        };
        let mut source = build(&spec, None, epoch).unwrap();
        let error = source.forecast(epoch).unwrap_err().to_string();
        assert!(error.contains("does not load"), "{error}");
        assert!(build(&HandoverSpec::Scenario, None, epoch).is_err());
    }
}

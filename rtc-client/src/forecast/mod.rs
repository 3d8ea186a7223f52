//! Where a call's forecast comes from: one spec that every command parses (`sim`, `experiment`,
//! `collect`, `demo`, `call`, `browser`) and one place that turns it into the
//! [`HandoverSource`] the policy reads (docs/architecture.md, "The forecast contract").
//!
//! - `none`: no handovers (terrestrial), source `none`.
//! - `oracle` (also `scenario`): the scenario's own handover timeline, the ground truth
//!   (evaluation only).
//! - `mirror`: the paper's predictor (the last 120 s repeated), fed the scenario's handovers as
//!   time passes them, as a perfect detector would see them; a real call without a link has
//!   nothing to watch and gives the default forecast (8 evenly spaced handovers).
//! - `orbital`: SGP4 over the scenario's own constellation, at both ends (orbit scenarios).
//! - `orbital:TLE@LAT,LON`: SGP4 over a TLE file for an observer, with Starlink's 15-s slot
//!   policy, against the local UTC clock (real calls).
//! - `blind`: the calibrated forecast with each instant moved to a random one within half a
//!   slot, keyed by the call's seed (the ablation's forecast-blind control; simulations only).
//! - `calibrated`: every slot boundary of the next 120 s with the switch rate learned from the
//!   boundaries already passed (on paths without slots, the orbital instants); a real call
//!   without a link reads the slot grid from the local UTC clock and gives the pooled prior.
//! - `dish:ADDR`: the dish's gRPC API (a real dish at 192.168.100.1:9200, or the simulated one
//!   of `handover-predictor dish-sim`), whose detected handovers feed a mirror (real calls).
//! - `calibrated:dish:ADDR`: the calibrated predictor learning from the dish detector's verdict
//!   at every slot boundary (real calls).
//!
//! A source that cannot forecast while a call runs (a TLE that does not load or is too old for
//! the clock, a dish that stops answering) is not an error for the call: its `forecast` fails
//! with the reason and the policy falls back to WebRTC's 2000 ms and records why. A spec that
//! cannot apply to the call at all (`orbital` over a scenario without orbits, the dish in a
//! simulation) is an error before the call starts.

mod blind;
#[cfg(feature = "live")]
mod dish;

pub use blind::Blind;

use crate::scenario::orbit::OrbitPredictorInputs;
use crate::scenario::sources::{BothEnds, TruthCalibrated, TruthMirror};
use crate::scenario::timeline::HandoverTimeline;
use chrono::{DateTime, Utc};
#[cfg(feature = "live")]
pub use dish::DishSource;
use handover_predictor::orbit::{Catalogue, Observer, ServingPolicy};
use handover_predictor::predict::{Calibrated, Mirror, Orbital};
use handover_predictor::{Forecast, HandoverSource, NoHandovers, SourceError};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Which forecast a call's policy reads: what `--handover` parses to.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ForecastSpec {
    /// No handovers.
    None,
    /// The scenario's ground truth.
    #[default]
    Oracle,
    /// The mirror predictor.
    Mirror,
    /// SGP4 over the scenario's own constellation, at both ends.
    Orbital,
    /// SGP4 over a TLE file for an observer, against the UTC clock.
    OrbitalTle {
        /// The TLE file.
        tle: PathBuf,
        /// Latitude, degrees.
        lat: f64,
        /// Longitude, degrees.
        lon: f64,
    },
    /// The calibrated predictor.
    Calibrated,
    /// The calibrated predictor's instants, each moved at random ([`Blind`]).
    Blind,
    /// The dish's gRPC API at `HOST:PORT`.
    Dish(String),
    /// The calibrated predictor fed by the dish's detector at `HOST:PORT`.
    CalibratedDish(String),
}

/// The specs every command accepts, for help and error texts.
pub const FORECAST_SPECS: &str = "none, oracle (or scenario), mirror, orbital, \
    orbital:TLE@LAT,LON, calibrated, blind, dish:ADDR or calibrated:dish:ADDR";

impl ForecastSpec {
    /// Parses a spec (see the module documentation).
    ///
    /// # Errors
    ///
    /// A message naming what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "none" => return Ok(Self::None),
            "oracle" | "scenario" => return Ok(Self::Oracle),
            "mirror" => return Ok(Self::Mirror),
            "orbital" => return Ok(Self::Orbital),
            "calibrated" => return Ok(Self::Calibrated),
            "blind" => return Ok(Self::Blind),
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
            return parse_orbital(rest);
        }
        Err(format!(
            "unknown handover source {text:?}: expected {FORECAST_SPECS}"
        ))
    }

    /// The spec as written (`scenario` reads back as `oracle`).
    pub fn name(&self) -> String {
        match self {
            Self::None => "none".into(),
            Self::Oracle => "oracle".into(),
            Self::Mirror => "mirror".into(),
            Self::Orbital => "orbital".into(),
            Self::OrbitalTle { tle, lat, lon } => format!("orbital:{}@{lat},{lon}", tle.display()),
            Self::Calibrated => "calibrated".into(),
            Self::Blind => "blind".into(),
            Self::Dish(addr) => format!("dish:{addr}"),
            Self::CalibratedDish(addr) => format!("calibrated:dish:{addr}"),
        }
    }

    /// Whether the source reads the local UTC clock or a dish, which only a real-time call has.
    pub fn needs_real_time(&self) -> bool {
        matches!(
            self,
            Self::OrbitalTle { .. } | Self::Dish(_) | Self::CalibratedDish(_)
        )
    }
}

fn parse_orbital(rest: &str) -> Result<ForecastSpec, String> {
    let bad = || format!("orbital takes TLE@LAT,LON, not {rest:?}");
    let (tle, site) = rest.rsplit_once('@').ok_or_else(bad)?;
    let (lat, lon) = site.split_once(',').ok_or_else(bad)?;
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
    Ok(ForecastSpec::OrbitalTle {
        tle: PathBuf::from(tle),
        lat,
        lon,
    })
}

/// What a call knows to build its forecast from.
#[derive(Debug, Clone, Copy)]
pub struct ForecastInputs<'a> {
    /// The scenario's name (for errors).
    pub scenario: &'a str,
    /// The scenario's handover timeline, if the call runs over one.
    pub timeline: Option<&'a HandoverTimeline>,
    /// The scenario's orbits and their start, for an orbit scenario.
    pub orbits: Option<(&'a OrbitPredictorInputs, DateTime<Utc>)>,
    /// Whether the call runs in real time: the local UTC clock (and a dish) are there.
    pub real_time: bool,
    /// The call's seed (where `blind` draws its instants).
    pub seed: u64,
}

/// Why a spec cannot apply to a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForecastError {
    /// `orbital` over a scenario without orbits.
    #[error(
        "the scenario {0} has no orbits to propagate (its handovers are drawn, not computed): \
         use the oracle or mirror forecast"
    )]
    NoOrbits(String),
    /// A source that reads the scenario's truth, without a scenario.
    #[error("--handover {0} reads the scenario's handover timeline: give a link scenario (--link)")]
    NoTimeline(String),
    /// A source that reads the UTC clock or a dish, in a simulation.
    #[error(
        "--handover {0} reads the local clock or a dish, which only a real call has; a \
         simulation takes none, oracle, mirror, orbital or calibrated"
    )]
    NotInSimulation(String),
    /// The dish, in a build without real calls.
    #[error("--handover {0} needs rtc-client's `live` feature")]
    NoDish(String),
}

/// The source `spec` names for a call with `inputs`, whose time zero is `epoch`.
///
/// # Errors
///
/// [`ForecastError`] when the spec cannot apply to the call.
pub fn build(
    spec: &ForecastSpec,
    inputs: ForecastInputs<'_>,
    epoch: Instant,
) -> Result<Box<dyn HandoverSource>, ForecastError> {
    if spec.needs_real_time() && !inputs.real_time {
        return Err(ForecastError::NotInSimulation(spec.name()));
    }
    let no_timeline = || ForecastError::NoTimeline(spec.name());
    Ok(match spec {
        ForecastSpec::None => Box::new(NoHandovers),
        ForecastSpec::Oracle => Box::new(inputs.timeline.ok_or_else(no_timeline)?.oracle(epoch)),
        ForecastSpec::Mirror => match inputs.timeline {
            Some(t) => Box::new(TruthMirror::new(t, epoch)),
            None if inputs.real_time => Box::new(Mirror::new(epoch)),
            None => return Err(no_timeline()),
        },
        ForecastSpec::Orbital => match inputs.orbits {
            Some((orbits, start)) => Box::new(BothEnds::new(orbits, epoch, start)),
            None => return Err(ForecastError::NoOrbits(inputs.scenario.to_owned())),
        },
        ForecastSpec::Calibrated => match inputs.timeline {
            Some(t) => Box::new(TruthCalibrated::new(t, inputs.orbits, epoch)),
            // The edge of a real call: the slot grid is read from the local UTC clock.
            None if inputs.real_time => Box::new(Calibrated::slot_grid(epoch, Utc::now())),
            None => return Err(no_timeline()),
        },
        ForecastSpec::Blind => match inputs.timeline {
            Some(t) => Box::new(Blind::new(
                Box::new(TruthCalibrated::new(t, inputs.orbits, epoch)),
                epoch,
                inputs.seed,
            )),
            None => return Err(no_timeline()),
        },
        ForecastSpec::OrbitalTle { tle, lat, lon } => orbital_tle(tle, *lat, *lon, epoch),
        ForecastSpec::Dish(addr) => dish(spec, addr, false, epoch)?,
        ForecastSpec::CalibratedDish(addr) => dish(spec, addr, true, epoch)?,
    })
}

/// SGP4 over a TLE file against the local UTC clock; a file or site that does not load gives a
/// source that fails with the reason (the call goes on with the fallback).
fn orbital_tle(
    tle: &std::path::Path,
    lat: f64,
    lon: f64,
    epoch: Instant,
) -> Box<dyn HandoverSource> {
    match (Catalogue::load(tle), Observer::new(lat, lon, 0.0)) {
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

#[cfg(feature = "live")]
fn dish(
    _spec: &ForecastSpec,
    addr: &str,
    calibrated: bool,
    epoch: Instant,
) -> Result<Box<dyn HandoverSource>, ForecastError> {
    Ok(Box::new(if calibrated {
        DishSource::start_calibrated(addr.to_owned(), epoch)
    } else {
        DishSource::start(addr.to_owned(), epoch)
    }))
}

#[cfg(not(feature = "live"))]
fn dish(
    spec: &ForecastSpec,
    _addr: &str,
    _calibrated: bool,
    _epoch: Instant,
) -> Result<Box<dyn HandoverSource>, ForecastError> {
    Err(ForecastError::NoDish(spec.name()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_bad_ones_say_why() {
        assert_eq!(ForecastSpec::parse("none"), Ok(ForecastSpec::None));
        assert_eq!(ForecastSpec::parse("oracle"), Ok(ForecastSpec::Oracle));
        assert_eq!(ForecastSpec::parse("scenario"), Ok(ForecastSpec::Oracle));
        assert_eq!(
            ForecastSpec::parse("calibrated"),
            Ok(ForecastSpec::Calibrated)
        );
        assert_eq!(
            ForecastSpec::parse("calibrated:dish:127.0.0.1:9200"),
            Ok(ForecastSpec::CalibratedDish("127.0.0.1:9200".into()))
        );
        assert!(
            ForecastSpec::parse("calibrated:mirror")
                .unwrap_err()
                .contains("dish:ADDR")
        );
        assert_eq!(
            ForecastSpec::parse("dish:127.0.0.1:9200"),
            Ok(ForecastSpec::Dish("127.0.0.1:9200".into()))
        );
        assert_eq!(
            ForecastSpec::parse("orbital:a/b.tle@50.5,-4"),
            Ok(ForecastSpec::OrbitalTle {
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
            "orcale",
        ] {
            assert!(ForecastSpec::parse(bad).is_err(), "{bad}");
        }
        for spec in [
            "none",
            "oracle",
            "mirror",
            "orbital",
            "calibrated",
            "blind",
            "dish:h:1",
        ] {
            assert_eq!(ForecastSpec::parse(spec).unwrap().name(), spec);
        }
    }

    fn inputs(real_time: bool) -> ForecastInputs<'static> {
        ForecastInputs {
            scenario: "lab",
            timeline: None,
            orbits: None,
            real_time,
            seed: 0,
        }
    }

    #[test]
    fn a_bad_tle_builds_a_failing_source_and_specs_that_cannot_apply_are_refused() {
        let epoch = Instant::now();
        let spec = ForecastSpec::OrbitalTle {
            tle: "/nonexistent/x.tle".into(),
            lat: 0.0,
            lon: 0.0,
        };
        let mut source = build(&spec, inputs(true), epoch).unwrap();
        let error = source.forecast(epoch).unwrap_err().to_string();
        assert!(error.contains("does not load"), "{error}");
        let refused = |spec: &ForecastSpec, real_time| {
            build(spec, inputs(real_time), epoch)
                .err()
                .map(|e| e.to_string())
        };
        assert!(
            refused(&ForecastSpec::Oracle, true)
                .unwrap()
                .contains("--link")
        );
        assert!(refused(&spec, false).unwrap().contains("only a real call"));
        assert!(
            refused(&ForecastSpec::Orbital, false)
                .unwrap()
                .contains("no orbits")
        );
        assert!(
            refused(&ForecastSpec::Mirror, false)
                .unwrap()
                .contains("timeline")
        );
        assert!(refused(&ForecastSpec::Mirror, true).is_none());
        assert!(refused(&ForecastSpec::None, false).is_none());
    }
}

//! Running an evaluation: the simulated dish and detector in virtual time, the three predictors
//! asked at every decision instant, each window scored against the truth.

use super::config::{EvalConfig, EvalError, Location, PredictorCatalogue, check};
use super::perturb::perturb;
use super::report::{
    EvalReport, IdentificationRow, OVERALL, Predictor, Scenario, WindowRecord, describe_policy,
};
use super::score::{TOLERANCE_S, Tally};
use crate::dish::{
    DetectorConfig, DishLocation, HandoverDetector, OrbitalTruth, SimConfig, SimDish,
};
use crate::forecast::{HORIZON, HandoverSteps};
use crate::orbit::{Catalogue, Observer};
use crate::predict::{Basis, Hybrid, Mirror, Orbital};
use crate::sky::{SLOT_LENGTH_S, slot_start};
use crate::source::HandoverSource;
use chrono::{DateTime, Duration as ChronoDuration, DurationRound, Utc};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs the evaluation (see the [`eval`](crate::eval) module documentation). `progress(done,
/// total)` is called after every window, `total` being windows x locations.
pub fn evaluate(
    config: &EvalConfig,
    mut progress: impl FnMut(usize, usize),
) -> Result<EvalReport, EvalError> {
    check(config)?;
    let predictor_catalogue = match &config.predictor_catalogue {
        PredictorCatalogue::SameAsTruth => config.truth_catalogue.clone(),
        PredictorCatalogue::Perturbed(p) => Arc::new(perturb(&config.truth_catalogue, p)),
        PredictorCatalogue::Other(c) => c.clone(),
    };
    if predictor_catalogue.is_empty() {
        return Err(EvalError::EmptyCatalogue("predictors'"));
    }
    let total = config.windows * config.locations.len();
    let mut done = 0;
    let mut series = Vec::with_capacity(total);
    let mut tallies: Vec<[Tally; 3]> = Vec::new();
    let mut identification = Vec::new();
    for location in &config.locations {
        let (location_series, tally, ids) =
            run_location(config, location, &predictor_catalogue, &mut |_| {
                done += 1;
                progress(done, total);
            })?;
        series.extend(location_series);
        tallies.push(tally);
        identification.push(ids);
    }
    let mut rows = Vec::new();
    for predictor in Predictor::ALL {
        let mut overall = Tally::default();
        for (location, tally) in config.locations.iter().zip(&tallies) {
            let t = &tally[predictor.index()];
            overall.add(t);
            rows.push(t.row(predictor, &location.name));
        }
        rows.push(overall.row(predictor, OVERALL));
    }
    let mut all = IdentificationRow {
        location: OVERALL.to_owned(),
        forecasts: 0,
        identified: 0,
        correct: 0,
        no_observation: 0,
        no_match: 0,
    };
    for r in &identification {
        all.forecasts += r.forecasts;
        all.identified += r.identified;
        all.correct += r.correct;
        all.no_observation += r.no_observation;
        all.no_match += r.no_match;
    }
    identification.push(all);
    let predictor_catalogue_text = match &config.predictor_catalogue {
        PredictorCatalogue::SameAsTruth => "the truth's catalogue".to_owned(),
        PredictorCatalogue::Perturbed(p) => format!("the truth's catalogue {p}"),
        PredictorCatalogue::Other(c) => format!("{} ({} satellites)", c.origin(), c.len()),
    };
    Ok(EvalReport {
        scenario: Scenario {
            truth_catalogue: config.truth_catalogue.origin().to_owned(),
            truth_satellites: config.truth_catalogue.len(),
            predictor_catalogue: predictor_catalogue_text,
            truth_policy: describe_policy(&config.truth_policy),
            predictor_policy: describe_policy(&config.predictor_policy),
            start: config.start,
            windows_per_location: config.windows,
            window_s: HORIZON.as_secs(),
            spacing_s: config.spacing.as_secs_f64(),
            warmup_s: config.warmup.as_secs_f64(),
            tolerance_s: TOLERANCE_S,
        },
        rows,
        identification,
        series,
    })
}

type LocationResult = (Vec<WindowRecord>, [Tally; 3], IdentificationRow);

fn run_location(
    config: &EvalConfig,
    location: &Location,
    predictor_catalogue: &Arc<Catalogue>,
    tick: &mut dyn FnMut(usize),
) -> Result<LocationResult, EvalError> {
    let observer =
        Observer::new(location.latitude_deg, location.longitude_deg, 0.0).map_err(|source| {
            EvalError::Location {
                name: location.name.clone(),
                source,
            }
        })?;
    let truth = OrbitalTruth::new(
        config.truth_catalogue.clone(),
        observer,
        config.truth_policy,
    )
    .map_err(|source| EvalError::Policy {
        which: "truth",
        source,
    })?;
    let start = config.start;
    let anchor = config.anchor;
    let instant_of = |utc: DateTime<Utc>| -> Option<Instant> {
        (utc - start)
            .to_std()
            .ok()
            .and_then(|d| anchor.checked_add(d))
    };
    let mut hybrid = Hybrid::new(
        predictor_catalogue.clone(),
        observer,
        config.predictor_policy,
        anchor,
        start,
    )
    .map_err(|source| EvalError::Policy {
        which: "predictor",
        source,
    })?
    .with_config(config.hybrid);
    let mut orbital = Orbital::new(
        predictor_catalogue.clone(),
        observer,
        config.predictor_policy,
        anchor,
        start,
    );
    let mut mirror = Mirror::new(anchor);

    let mut sim_config = SimConfig::new(start);
    sim_config.location = DishLocation::new(location.latitude_deg, location.longitude_deg, 0.0);
    let mut dish = SimDish::new(sim_config);
    let mut detector = HandoverDetector::new(DetectorConfig::default());
    dish.clear(&truth, start);
    let mut cleared = slot_start(start);
    let second = ChronoDuration::seconds(1);
    let poll_offset = ChronoDuration::from_std(config.poll_offset).unwrap_or_default();
    let mut poll = start.duration_trunc(second).unwrap_or(start) + poll_offset;
    while poll <= start {
        poll += second;
    }
    let to_chrono = |d: Duration| ChronoDuration::from_std(d).unwrap_or(ChronoDuration::MAX);

    let mut series = Vec::with_capacity(config.windows);
    let mut tally = [Tally::default(); 3];
    let mut ids = IdentificationRow {
        location: location.name.clone(),
        forecasts: 0,
        identified: 0,
        correct: 0,
        no_observation: 0,
        no_match: 0,
    };
    for index in 0..config.windows {
        let offset = config.warmup + config.spacing * index as u32;
        let t0 = start + to_chrono(offset);
        // The dish up to the decision instant: poll, detect, clear after a slot's first poll.
        while poll <= t0 {
            let map = dish.map_at(&truth, poll);
            let observation = detector.observe(poll, &map);
            if let Some(point) = observation.point {
                hybrid.observe(&point);
            }
            if let Some(verdict) = observation.verdict
                && verdict.handover
                && let Some(at) = instant_of(verdict.at)
            {
                mirror.observe(at);
            }
            if slot_start(poll) > cleared {
                dish.clear(&truth, poll);
                cleared = slot_start(poll);
            }
            poll += second;
        }
        let Some(now) = instant_of(t0) else {
            return Err(EvalError::Config(format!(
                "the decision instant {t0} cannot be expressed as an Instant"
            )));
        };
        let end = t0 + to_chrono(HORIZON);
        let true_offsets = truth
            .handovers(t0, end)
            .into_iter()
            .filter_map(|h| (h - t0).to_std().ok());
        let true_steps = HandoverSteps::from_offsets(true_offsets).unwrap_or(HandoverSteps::NONE);

        let mut counts = [0usize; 3];
        for predictor in Predictor::ALL {
            let result = match predictor {
                Predictor::Mirror => mirror.forecast(now),
                Predictor::Orbital => orbital.forecast(now),
                Predictor::Hybrid => hybrid.forecast(now),
            };
            let t = &mut tally[predictor.index()];
            let steps = match result {
                Ok(forecast) => *forecast.steps(),
                Err(_) => {
                    t.unavailable += 1;
                    HandoverSteps::NONE
                }
            };
            t.score(t0, &steps, &true_steps);
            counts[predictor.index()] = steps.count();
        }

        ids.forecasts += 1;
        let (basis, norad_id, correct) = match hybrid.last_basis() {
            Some(Basis::Identified(m)) => {
                ids.identified += 1;
                let middle = m.slot + ChronoDuration::milliseconds(SLOT_LENGTH_S * 500);
                let correct = truth.serving_id(middle) == Some(m.norad_id);
                if correct {
                    ids.correct += 1;
                }
                ("identified", Some(m.norad_id), Some(correct))
            }
            Some(Basis::NoMatch { .. }) => {
                ids.no_match += 1;
                ("no-match", None, None)
            }
            Some(Basis::NoObservation) | None => {
                ids.no_observation += 1;
                ("no-observation", None, None)
            }
        };
        series.push(WindowRecord {
            location: location.name.clone(),
            index,
            start: t0,
            truth: true_steps.count(),
            mirror: counts[0],
            orbital: counts[1],
            hybrid: counts[2],
            hybrid_basis: basis,
            hybrid_norad_id: norad_id,
            hybrid_correct: correct,
        });
        tick(index);
    }
    Ok((series, tally, ids))
}

//! Evaluation: the mirror, orbital and hybrid predictors against the truth, over many 120-s
//! windows at several locations.
//!
//! # Setup
//!
//! * **Truth**: an [`OrbitalTruth`]: the truth catalogue under the truth serving policy, second
//!   by second. The true handovers of a window are its changes of serving satellite
//!   ([`OrbitalTruth::handovers`]).
//! * **Observations**: a simulated dish ([`SimDish`]) painting that truth into its obstruction
//!   map, polled once per dish second and cleared after the first poll of every slot (the
//!   driver's schedule, reference B3), feeding a [`HandoverDetector`]: in virtual time, without
//!   gRPC (as `tests/dish_pipeline.rs`), so a run is fast and deterministic. Everything a
//!   predictor learns from the dish is causal: at a decision instant it has seen only the polls
//!   up to that instant.
//! * **Predictors**:
//!   - [`Mirror`] (paper section III-D) learns the detector's handover verdicts, dated at their
//!     slot boundaries, as the detector decides them;
//!   - [`Orbital`] gets the predictors' catalogue and policy only;
//!   - [`Hybrid`] gets the same catalogue and policy, plus the detector's track.
//! * **Windows**: decision instants at `start + warmup + k * spacing`; each forecast covers the
//!   120 s after its instant (the forecast contract, DESIGN section 3). The warm-up gives the
//!   mirror its 120 s of history. The default spacing is 127 s rather than 120 s so that the
//!   decision instants sweep all 15 phases of the slot grid (127 = 8 x 15 + 7, and 7 is prime to
//!   15); back-to-back 120-s windows would all sit at the same point of a slot.
//!
//! # Metrics (per predictor, per location and over all locations)
//!
//! * **F1 per second, +/- 1 s**: predicted handover steps against true ones, each true handover
//!   matched to at most one prediction within one step ([`score_handovers`]), counts summed over
//!   windows (micro-average).
//! * **MAE of handovers per window**: mean |predicted count - true count|; the paper's state has
//!   a normalised-count channel (section III-A), so the count matters on its own.
//! * **Boundary accuracy**: at every slot boundary inside a window (8 per window, reference C1),
//!   "handover or not" predicted against the truth, each with the same +/- 1 s tolerance; also
//!   reported for the first boundary after the decision instant alone, the one the current
//!   serving satellite decides (the keep rule compares it with the best candidate).
//!
//! # Realism knobs
//!
//! With the same catalogue and policy the orbital predictor *is* the truth (F1 = 1): that case
//! only measures the mirror and checks the hybrid. Two honest departures:
//!
//! * [`PredictorCatalogue::Perturbed`]: the predictors' catalogue is the truth catalogue with
//!   per-satellite Gaussian noise on the mean anomaly (along-track) and on inclination and right
//!   ascension (cross-track), a stand-in for the error of a TLE some days old or of a satellite
//!   that manoeuvred since (reference D2: Starlink manoeuvres often; errors grow by km per
//!   day, D4 step 6). See [`Perturbation`].
//! * A truth policy different from the one the predictors assume ([`EvalConfig::truth_policy`]
//!   vs [`EvalConfig::predictor_policy`]): Starlink's scheduler is not public, and the default
//!   [`StarlinkConfig`](crate::orbit::StarlinkConfig) is fitted, so the choice among candidates
//!   is the real uncertainty.

use crate::dish::{
    DetectorConfig, DishLocation, HandoverDetector, OrbitalTruth, SimConfig, SimDish,
    score_handovers,
};
use crate::forecast::{HORIZON, HORIZON_STEPS, HandoverSteps};
use crate::orbit::{Catalogue, Observer, ObserverError, ServingPolicy, TimelineError, walker};
use crate::predict::{Basis, Hybrid, HybridConfig, Mirror, Orbital};
use crate::rng::SplitMix64;
use crate::sky::{SLOT_LENGTH_S, next_slot_boundary, slot_start};
use crate::source::HandoverSource;
use chrono::{DateTime, Duration as ChronoDuration, DurationRound, Utc};
use serde::Serialize;
use std::fmt;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Tolerance of the per-second F1 and of the boundary decisions, seconds (+/- 1 s: a handover
/// dated one step early or late by a rounding of the decision instant still counts).
pub const TOLERANCE_S: i64 = 1;

/// Default spacing of decision instants: 127 s (see the module documentation).
pub const DEFAULT_SPACING: Duration = Duration::from_secs(127);

/// Default warm-up before the first decision: 150 s, the mirror's 120 s of history (paper
/// section III-D) plus two slots for the detector's first verdicts (it needs one slot to see a
/// track and the next to judge a boundary, reference B5).
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(150);

/// Default offset of the dish polls after each whole second: 250 ms, an arbitrary point inside
/// the second (the detector dates handovers at the slot boundary whatever the offset,
/// `tests/dish_pipeline.rs`).
pub const DEFAULT_POLL_OFFSET: Duration = Duration::from_millis(250);

/// Default number of windows per location.
pub const DEFAULT_WINDOWS: usize = 30;

/// The location name of the rows that aggregate all locations.
pub const OVERALL: &str = "all";

/// A place to evaluate at.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Location {
    /// Name in the report.
    pub name: String,
    /// Geodetic latitude, degrees north.
    pub latitude_deg: f64,
    /// Longitude, degrees east.
    pub longitude_deg: f64,
}

impl Location {
    /// A location at sea level.
    pub fn new(name: impl Into<String>, latitude_deg: f64, longitude_deg: f64) -> Self {
        Self {
            name: name.into(),
            latitude_deg,
            longitude_deg,
        }
    }
}

/// The three sites whose serving satellites were measured (reference C5, SatInView's July-2024
/// data): Kanazawa, Louvain-la-Neuve and Brisbane, a low northern, a high northern and a
/// southern latitude.
pub fn default_locations() -> Vec<Location> {
    vec![
        Location::new("kanazawa", 36.56, 136.65),
        Location::new("louvain", 50.67, 4.61),
        Location::new("brisbane", -27.47, 153.03),
    ]
}

/// Noise added to the truth catalogue to make the predictors' catalogue (see the module
/// documentation). Each satellite gets its own draws from a generator seeded by `seed` and its
/// NORAD number, so the perturbed catalogue does not depend on the order of the file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Perturbation {
    /// Standard deviation of the along-track position error, km (applied to the mean anomaly as
    /// `error / semi-major axis`).
    pub along_track_sigma_km: f64,
    /// Standard deviation of the cross-track position error, km (split evenly between the
    /// inclination and the right ascension of the ascending node).
    pub cross_track_sigma_km: f64,
    /// Seed of the draws.
    pub seed: u64,
}

impl Perturbation {
    /// Along-track noise only: the dominant error of a TLE (drag and manoeuvres move a satellite
    /// along its orbit, reference D2).
    pub fn along_track(sigma_km: f64, seed: u64) -> Self {
        Self {
            along_track_sigma_km: sigma_km,
            cross_track_sigma_km: 0.0,
            seed,
        }
    }
}

impl fmt::Display for Perturbation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "perturbed (along-track sigma {} km, cross-track sigma {} km, seed {})",
            self.along_track_sigma_km, self.cross_track_sigma_km, self.seed
        )
    }
}

/// The truth catalogue with `perturbation`'s noise on every satellite's elements (see
/// [`Perturbation`]). Satellites the noise makes unpropagatable are skipped, as in any
/// catalogue.
pub fn perturb(catalogue: &Catalogue, perturbation: &Perturbation) -> Catalogue {
    let elements = catalogue.iter().map(|satellite| {
        let mut e = satellite.elements().clone();
        let mut rng =
            SplitMix64::new(perturbation.seed ^ e.norad_id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let a_km = walker::semi_major_axis_km(e.mean_motion).max(1.0);
        let along = rng.normal() * perturbation.along_track_sigma_km / a_km;
        let cross = perturbation.cross_track_sigma_km / a_km / std::f64::consts::SQRT_2;
        let d_inclination = rng.normal() * cross;
        let sin_i = e.inclination.to_radians().sin().abs().max(0.1);
        let d_node = rng.normal() * cross / sin_i;
        e.mean_anomaly = (e.mean_anomaly + along.to_degrees()).rem_euclid(360.0);
        e.inclination = (e.inclination + d_inclination.to_degrees()).clamp(0.0, 180.0);
        e.right_ascension = (e.right_ascension + d_node.to_degrees()).rem_euclid(360.0);
        e
    });
    Catalogue::from_elements(
        &format!("{} {perturbation}", catalogue.origin()),
        elements.collect::<Vec<_>>(),
    )
}

/// The catalogue the predictors (orbital and hybrid) propagate.
#[derive(Debug, Clone)]
pub enum PredictorCatalogue {
    /// The truth's own catalogue: the orbital predictor is then exact under the same policy.
    SameAsTruth,
    /// The truth's catalogue with noise ([`perturb`]).
    Perturbed(Perturbation),
    /// Another catalogue (e.g. an older snapshot of the same constellation).
    Other(Arc<Catalogue>),
}

/// What to evaluate. [`EvalConfig::new`] fills in the defaults.
#[derive(Debug, Clone)]
pub struct EvalConfig {
    /// The catalogue the truth propagates.
    pub truth_catalogue: Arc<Catalogue>,
    /// The catalogue the orbital and hybrid predictors propagate.
    pub predictor_catalogue: PredictorCatalogue,
    /// The policy the truth follows.
    pub truth_policy: ServingPolicy,
    /// The policy the orbital and hybrid predictors assume.
    pub predictor_policy: ServingPolicy,
    /// Where the dish is; each location is an independent run.
    pub locations: Vec<Location>,
    /// Dish time at which the simulated dish starts (the warm-up starts here).
    pub start: DateTime<Utc>,
    /// Decision instants per location.
    pub windows: usize,
    /// Time between decision instants ([`DEFAULT_SPACING`]).
    pub spacing: Duration,
    /// Time from `start` to the first decision instant ([`DEFAULT_WARMUP`]).
    pub warmup: Duration,
    /// Offset of the polls after each whole dish second, below 1 s ([`DEFAULT_POLL_OFFSET`]).
    pub poll_offset: Duration,
    /// The hybrid's identification settings.
    pub hybrid: HybridConfig,
    /// The monotonic instant that stands for `start` in the predictors' clock. Any value works
    /// (only differences are used); it is a parameter so that the library reads no clock.
    pub anchor: Instant,
}

impl EvalConfig {
    /// The default evaluation of `truth_catalogue` from `start`: the predictors share the truth's
    /// catalogue and the default Starlink policy, [`default_locations`], [`DEFAULT_WINDOWS`]
    /// windows each.
    pub fn new(truth_catalogue: Arc<Catalogue>, start: DateTime<Utc>, anchor: Instant) -> Self {
        Self {
            truth_catalogue,
            predictor_catalogue: PredictorCatalogue::SameAsTruth,
            truth_policy: ServingPolicy::default(),
            predictor_policy: ServingPolicy::default(),
            locations: default_locations(),
            start,
            windows: DEFAULT_WINDOWS,
            spacing: DEFAULT_SPACING,
            warmup: DEFAULT_WARMUP,
            poll_offset: DEFAULT_POLL_OFFSET,
            hybrid: HybridConfig::default(),
            anchor,
        }
    }
}

/// Why an evaluation could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A setting out of range.
    #[error("invalid evaluation setting: {0}")]
    Config(String),
    /// A location that is not on the Earth.
    #[error("location {name:?}: {source}")]
    Location {
        /// The location's name.
        name: String,
        /// What was wrong.
        #[source]
        source: ObserverError,
    },
    /// A serving policy with parameters out of range.
    #[error("{which} policy: {source}")]
    Policy {
        /// `truth` or `predictor`.
        which: &'static str,
        /// What was wrong.
        #[source]
        source: TimelineError,
    },
    /// A catalogue with no propagatable satellite.
    #[error("the {0} catalogue has no propagatable satellite")]
    EmptyCatalogue(&'static str),
}

/// The predictors compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Predictor {
    /// [`Mirror`]: the last 120 s repeated (paper section III-D).
    Mirror,
    /// [`Orbital`]: the catalogue and the assumed policy.
    Orbital,
    /// [`Hybrid`]: the observed serving satellite, then the orbital model.
    Hybrid,
}

impl Predictor {
    /// All three, in report order.
    pub const ALL: [Predictor; 3] = [Predictor::Mirror, Predictor::Orbital, Predictor::Hybrid];

    /// The source tag.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mirror => "mirror",
            Self::Orbital => "orbital",
            Self::Hybrid => "hybrid",
        }
    }

    fn index(self) -> usize {
        match self {
            Self::Mirror => 0,
            Self::Orbital => 1,
            Self::Hybrid => 2,
        }
    }
}

impl fmt::Display for Predictor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One predictor's figures at one location (or over all of them, location [`OVERALL`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The predictor.
    pub predictor: Predictor,
    /// The location's name, or [`OVERALL`].
    pub location: String,
    /// Windows scored.
    pub windows: usize,
    /// Per-second F1, +/- [`TOLERANCE_S`] s, over all windows' counts.
    pub f1: f64,
    /// TP / (TP + FP).
    pub precision: f64,
    /// TP / (TP + FN).
    pub recall: f64,
    /// Predicted handovers matched to a true one.
    pub true_positives: usize,
    /// Predicted handovers with no true one nearby.
    pub false_positives: usize,
    /// True handovers no prediction matched.
    pub false_negatives: usize,
    /// Mean |predicted - true| handovers per window.
    pub mae_handovers_per_window: f64,
    /// Share of slot boundaries where "handover or not" was predicted right.
    pub boundary_accuracy: f64,
    /// Slot boundaries judged.
    pub boundaries: usize,
    /// Boundary accuracy at the first boundary after the decision instant only: where knowing
    /// the current serving satellite matters most (the keep rule decides it from the current
    /// satellite, [`crate::orbit::StarlinkConfig`]).
    pub first_boundary_accuracy: f64,
    /// Mean true handovers per window.
    pub mean_true_handovers: f64,
    /// Mean predicted handovers per window.
    pub mean_predicted_handovers: f64,
    /// Windows where the predictor had no forecast (scored as an all-zero forecast).
    pub unavailable: usize,
}

/// How often the hybrid identified the serving satellite, and how often rightly.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdentificationRow {
    /// The location's name, or [`OVERALL`].
    pub location: String,
    /// Forecasts made.
    pub forecasts: usize,
    /// Forecasts based on an identified satellite.
    pub identified: usize,
    /// Identifications that named the truth's serving satellite of the matched slot.
    pub correct: usize,
    /// Fallbacks because no recent slot had enough observed points.
    pub no_observation: usize,
    /// Fallbacks because no satellite matched within the threshold.
    pub no_match: usize,
}

impl IdentificationRow {
    /// Correct identifications over identifications (1 when none was made).
    pub fn accuracy(&self) -> f64 {
        ratio(self.correct, self.identified)
    }

    /// Identifications over forecasts (1 when no forecast was made).
    pub fn coverage(&self) -> f64 {
        ratio(self.identified, self.forecasts)
    }
}

/// One window: the true and predicted handover counts (what the CLI plots).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowRecord {
    /// The location's name.
    pub location: String,
    /// Index of the window at its location, from 0.
    pub index: usize,
    /// The decision instant (UTC dish time).
    pub start: DateTime<Utc>,
    /// True handovers in the window.
    pub truth: usize,
    /// Handovers the mirror predicted.
    pub mirror: usize,
    /// Handovers the orbital predictor predicted.
    pub orbital: usize,
    /// Handovers the hybrid predicted.
    pub hybrid: usize,
    /// The hybrid's basis: `identified`, `no-observation` or `no-match`.
    pub hybrid_basis: &'static str,
    /// The NORAD number the hybrid identified, if it did.
    pub hybrid_norad_id: Option<u64>,
    /// Whether that identification was the truth's serving satellite.
    pub hybrid_correct: Option<bool>,
}

impl WindowRecord {
    /// The count `predictor` predicted.
    pub fn predicted(&self, predictor: Predictor) -> usize {
        match predictor {
            Predictor::Mirror => self.mirror,
            Predictor::Orbital => self.orbital,
            Predictor::Hybrid => self.hybrid,
        }
    }
}

/// What was evaluated, in words and numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// The truth catalogue's origin.
    pub truth_catalogue: String,
    /// Its number of propagatable satellites.
    pub truth_satellites: usize,
    /// The predictors' catalogue, described.
    pub predictor_catalogue: String,
    /// The truth policy, described.
    pub truth_policy: String,
    /// The predictors' policy, described.
    pub predictor_policy: String,
    /// Dish time at the start of the run.
    pub start: DateTime<Utc>,
    /// Windows per location.
    pub windows_per_location: usize,
    /// Window length, s (the forecast horizon).
    pub window_s: u64,
    /// Time between decision instants, s.
    pub spacing_s: f64,
    /// Time before the first decision instant, s.
    pub warmup_s: f64,
    /// Tolerance of the F1 and boundary metrics, s.
    pub tolerance_s: i64,
}

/// The result of [`evaluate`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    /// What was evaluated.
    pub scenario: Scenario,
    /// Per predictor: one row per location, then the [`OVERALL`] row.
    pub rows: Vec<Row>,
    /// The hybrid's identifications per location, then overall.
    pub identification: Vec<IdentificationRow>,
    /// Every window, location by location.
    pub series: Vec<WindowRecord>,
}

impl EvalReport {
    /// The row of `predictor` at `location` (or [`OVERALL`]).
    pub fn row(&self, predictor: Predictor, location: &str) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.predictor == predictor && r.location == location)
    }

    /// The overall row of `predictor`.
    pub fn overall(&self, predictor: Predictor) -> Option<&Row> {
        self.row(predictor, OVERALL)
    }

    /// The report as an aligned text table: the scenario, one line per predictor and location,
    /// and the hybrid's identification figures.
    pub fn table(&self) -> String {
        let s = &self.scenario;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "truth: {} ({} satellites), policy {}",
            s.truth_catalogue, s.truth_satellites, s.truth_policy
        );
        let _ = writeln!(
            out,
            "predictors: {}, policy {}",
            s.predictor_catalogue, s.predictor_policy
        );
        let _ = writeln!(
            out,
            "{} windows of {} s per location from {} (warm-up {} s, one every {} s), tolerance +/- {} s",
            s.windows_per_location,
            s.window_s,
            s.start.format("%Y-%m-%d %H:%M:%S UTC"),
            s.warmup_s,
            s.spacing_s,
            s.tolerance_s
        );
        let location_width = self
            .rows
            .iter()
            .map(|r| r.location.len())
            .max()
            .unwrap_or(0)
            .max("location".len());
        let _ = writeln!(
            out,
            "{:<9} {:<lw$} {:>7} {:>6} {:>9} {:>6} {:>9} {:>8} {:>8} {:>10} {:>10} {:>5}",
            "predictor",
            "location",
            "windows",
            "F1",
            "precision",
            "recall",
            "MAE/win",
            "boundary",
            "1st bdry",
            "true/win",
            "pred/win",
            "n/a",
            lw = location_width
        );
        for r in &self.rows {
            let _ = writeln!(
                out,
                "{:<9} {:<lw$} {:>7} {:>6.3} {:>9.3} {:>6.3} {:>9.2} {:>8.3} {:>8.3} {:>10.2} {:>10.2} {:>5}",
                r.predictor.as_str(),
                r.location,
                r.windows,
                r.f1,
                r.precision,
                r.recall,
                r.mae_handovers_per_window,
                r.boundary_accuracy,
                r.first_boundary_accuracy,
                r.mean_true_handovers,
                r.mean_predicted_handovers,
                r.unavailable,
                lw = location_width
            );
        }
        let _ = writeln!(
            out,
            "hybrid identification: {:<lw$} {:>9} {:>10} {:>7} {:>8} {:>8} {:>8} {:>8}",
            "location",
            "forecasts",
            "identified",
            "correct",
            "accuracy",
            "coverage",
            "no-obs",
            "no-match",
            lw = location_width
        );
        for r in &self.identification {
            let _ = writeln!(
                out,
                "                       {:<lw$} {:>9} {:>10} {:>7} {:>8.3} {:>8.3} {:>8} {:>8}",
                r.location,
                r.forecasts,
                r.identified,
                r.correct,
                r.accuracy(),
                r.coverage(),
                r.no_observation,
                r.no_match,
                lw = location_width
            );
        }
        out
    }
}

/// Runs the evaluation (see the module documentation). `progress(done, total)` is called after
/// every window, `total` being windows x locations.
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

/// A short description of a policy for reports.
pub fn describe_policy(policy: &ServingPolicy) -> String {
    match policy {
        ServingPolicy::Starlink(c) => format!(
            "starlink (min elevation {}, target {}, pole-ward weight {}, GSO exclusion {}, keep margin {})",
            c.min_elevation_deg,
            c.target_elevation_deg,
            c.poleward_weight_deg,
            c.gso_exclusion_deg,
            c.keep_margin_deg
        ),
        ServingPolicy::Delay(c) => format!(
            "delay (min elevation {}, margin {} ms)",
            c.min_elevation_deg, c.margin_ms
        ),
    }
}

fn check(config: &EvalConfig) -> Result<(), EvalError> {
    if config.windows == 0 {
        return Err(EvalError::Config("at least one window is needed".into()));
    }
    if config.locations.is_empty() {
        return Err(EvalError::Config("at least one location is needed".into()));
    }
    if config.spacing < Duration::from_secs(1) {
        return Err(EvalError::Config(format!(
            "decision instants must be at least 1 s apart, got {:?}",
            config.spacing
        )));
    }
    if config.poll_offset >= Duration::from_secs(1) {
        return Err(EvalError::Config(format!(
            "the poll offset must be below 1 s, got {:?}",
            config.poll_offset
        )));
    }
    // The whole run must be representable (and not absurdly long: a year of dish time), with a
    // day of margin on both sides for the look-backs and horizons around it.
    let span = config
        .spacing
        .checked_mul(u32::try_from(config.windows).unwrap_or(u32::MAX))
        .and_then(|s| s.checked_add(config.warmup))
        .and_then(|s| s.checked_add(HORIZON));
    let year = Duration::from_secs(366 * 86_400);
    let Some(span) = span.filter(|&s| s <= year) else {
        return Err(EvalError::Config(
            "the run (warm-up + windows x spacing) is longer than a year".into(),
        ));
    };
    let day = ChronoDuration::days(1);
    let fits = ChronoDuration::from_std(span)
        .ok()
        .and_then(|span| config.start.checked_add_signed(span + day))
        .is_some()
        && config.start.checked_sub_signed(day).is_some();
    if !fits {
        return Err(EvalError::Config(format!(
            "a run starting at {} does not fit in the calendar",
            config.start
        )));
    }
    if config.truth_catalogue.is_empty() {
        return Err(EvalError::EmptyCatalogue("truth"));
    }
    Ok(())
}

/// Everything scored for one predictor at one location.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    windows: usize,
    tp: usize,
    fp: usize,
    fn_: usize,
    abs_count_error: usize,
    boundaries: usize,
    boundaries_right: usize,
    first_boundaries: usize,
    first_boundaries_right: usize,
    true_handovers: usize,
    predicted_handovers: usize,
    unavailable: usize,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.windows += other.windows;
        self.tp += other.tp;
        self.fp += other.fp;
        self.fn_ += other.fn_;
        self.abs_count_error += other.abs_count_error;
        self.boundaries += other.boundaries;
        self.boundaries_right += other.boundaries_right;
        self.first_boundaries += other.first_boundaries;
        self.first_boundaries_right += other.first_boundaries_right;
        self.true_handovers += other.true_handovers;
        self.predicted_handovers += other.predicted_handovers;
        self.unavailable += other.unavailable;
    }

    fn score(&mut self, t0: DateTime<Utc>, predicted: &HandoverSteps, truth: &HandoverSteps) {
        let instants = |steps: &HandoverSteps| -> Vec<DateTime<Utc>> {
            (0..HORIZON_STEPS)
                .filter(|&k| steps.is_handover(k))
                .map(|k| t0 + ChronoDuration::seconds(k as i64 + 1))
                .collect()
        };
        let score = score_handovers(
            &instants(predicted),
            &instants(truth),
            ChronoDuration::seconds(TOLERANCE_S),
        );
        self.windows += 1;
        self.tp += score.true_positives;
        self.fp += score.false_positives;
        self.fn_ += score.false_negatives;
        self.abs_count_error += predicted.count().abs_diff(truth.count());
        self.true_handovers += truth.count();
        self.predicted_handovers += predicted.count();
        for (i, step) in boundary_steps(t0).into_iter().enumerate() {
            let near = |steps: &HandoverSteps| {
                let lo = step.saturating_sub(TOLERANCE_S as usize);
                (lo..=step + TOLERANCE_S as usize).any(|k| steps.is_handover(k))
            };
            let right = near(predicted) == near(truth);
            self.boundaries += 1;
            self.boundaries_right += usize::from(right);
            if i == 0 {
                self.first_boundaries += 1;
                self.first_boundaries_right += usize::from(right);
            }
        }
    }

    fn row(&self, predictor: Predictor, location: &str) -> Row {
        let score = crate::dish::Score {
            true_positives: self.tp,
            false_positives: self.fp,
            false_negatives: self.fn_,
        };
        let per_window = |x: usize| ratio_or_zero(x, self.windows);
        Row {
            predictor,
            location: location.to_owned(),
            windows: self.windows,
            f1: score.f1(),
            precision: score.precision(),
            recall: score.recall(),
            true_positives: self.tp,
            false_positives: self.fp,
            false_negatives: self.fn_,
            mae_handovers_per_window: per_window(self.abs_count_error),
            boundary_accuracy: ratio(self.boundaries_right, self.boundaries),
            boundaries: self.boundaries,
            first_boundary_accuracy: ratio(self.first_boundaries_right, self.first_boundaries),
            mean_true_handovers: per_window(self.true_handovers),
            mean_predicted_handovers: per_window(self.predicted_handovers),
            unavailable: self.unavailable,
        }
    }
}

/// The forecast steps that contain a slot boundary of `(t0, t0 + 120 s]`: a boundary at
/// `t0 + d` lies in step `ceil(d) - 1` (DESIGN section 3).
fn boundary_steps(t0: DateTime<Utc>) -> Vec<usize> {
    let end = t0 + ChronoDuration::seconds(HORIZON_STEPS as i64);
    let mut steps = Vec::new();
    let mut b = next_slot_boundary(t0);
    while b <= end {
        if let Some(nanos) = (b - t0).num_nanoseconds()
            && nanos > 0
        {
            steps.push(((nanos - 1) / 1_000_000_000) as usize);
        }
        b += ChronoDuration::seconds(SLOT_LENGTH_S);
    }
    steps
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

fn ratio(num: usize, den: usize) -> f64 {
    if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    }
}

fn ratio_or_zero(num: usize, den: usize) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn boundary_steps_follow_the_forecast_step_convention() {
        // 12:00:05 -> boundaries at :12 (7 s, step 6), :27, :42, :57, then 12:01:12 ... up to
        // 12:02:05: 8 boundaries.
        let t0 = Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 5).unwrap();
        let steps = boundary_steps(t0);
        assert_eq!(steps, vec![6, 21, 36, 51, 66, 81, 96, 111]);
        // A decision exactly on a boundary: the next boundary is 15 s later, step 14.
        let t0 = Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 12).unwrap();
        assert_eq!(boundary_steps(t0)[0], 14);
        assert_eq!(boundary_steps(t0).len(), 8);
    }

    #[test]
    fn a_perfect_forecast_scores_one_and_an_empty_one_zero() {
        let t0 = Utc.with_ymd_and_hms(2025, 5, 12, 12, 0, 5).unwrap();
        let truth = HandoverSteps::from_offsets([Duration::from_secs(7)]).unwrap();
        let mut perfect = Tally::default();
        perfect.score(t0, &truth, &truth);
        let row = perfect.row(Predictor::Orbital, "x");
        assert_eq!((row.f1, row.boundary_accuracy), (1.0, 1.0));
        let mut empty = Tally::default();
        empty.score(t0, &HandoverSteps::NONE, &truth);
        let row = empty.row(Predictor::Mirror, "x");
        assert_eq!(row.f1, 0.0);
        assert_eq!(row.boundary_accuracy, 7.0 / 8.0);
        assert_eq!(row.mae_handovers_per_window, 1.0);
        // One step late is within the tolerance.
        let late = HandoverSteps::from_offsets([Duration::from_secs(8)]).unwrap();
        let mut t = Tally::default();
        t.score(t0, &late, &truth);
        assert_eq!(t.row(Predictor::Hybrid, "x").f1, 1.0);
    }
}

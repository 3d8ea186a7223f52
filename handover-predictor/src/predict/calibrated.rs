//! The calibrated predictor: every boundary a handover could fall on, each with the probability
//! that the serving satellite changes there, learned online from the site (source `calibrated`).
//!
//! Per-second serving-satellite logs show that every Starlink handover falls on a slot boundary,
//! that the share of boundaries that switch is a property of the site, and that whether one
//! boundary switches is barely predictable from geometry (docs/architecture.md, "The calibrated
//! predictor"). So the instants come from the slot grid (or, where there is no grid, from the
//! orbit model's handover instants), and the probability of each is the site's switch rate as
//! estimated from the boundaries seen so far, shrunk toward a prior while few were seen.

use crate::forecast::{
    Forecast, ForecastError, ForecastSource, HORIZON, HandoverTiming, PredictedHandover,
};
use crate::sky::{SLOT_LENGTH_S, next_slot_boundary};
use crate::source::{HandoverSource, SourceError};
use chrono::{DateTime, Utc};
use std::fmt;
use std::time::{Duration, Instant};

/// The pooled share of Starlink slot boundaries at which the serving satellite changed: 0.74
/// over three sites, 2 h each (docs/architecture.md, "The calibrated predictor": Brisbane
/// 0.845, Kanazawa 0.576, Louvain-la-Neuve 0.769, SatInView's July-2024 logs).
pub const POOLED_SWITCH_RATE: f64 = 0.74;

/// Weight of the prior, in boundaries: 14.
///
/// The prior is a Beta distribution with mean `prior_rate` and `a + b = 14`, so after `n`
/// boundaries with `s` switches the estimate (the posterior mean) is
/// `(s + 14 x prior_rate) / (n + 14)`. The weight is the method-of-moments fit of a Beta to how
/// much real sites differ: a Beta with mean `m` and `a + b = w` has variance `m(1 - m)/(w + 1)`;
/// the three measured site rates (0.845, 0.576, 0.769) lie around the pooled 0.74 with a mean
/// squared deviation of 0.0129, and `0.74 x 0.26 / 0.0129 - 1 = 13.9`. A new site is therefore
/// trusted over the pooled figure once it has shown 14 boundaries (3.5 minutes of Starlink
/// slots), and dominates it after a few times that.
pub const DEFAULT_PRIOR_WEIGHT: f64 = 14.0;

/// The length of Starlink's slot (reference C1: reassignments at seconds 12, 27, 42 and 57).
pub const SLOT: Duration = Duration::from_secs(SLOT_LENGTH_S as u64);

/// Named switch rates: the share of slot boundaries at which the serving satellite changed in
/// SatInView's July-2024 logs, 2 h per site (docs/architecture.md, "The calibrated predictor").
pub const SWITCH_RATE_PRESETS: [(&str, f64); 4] = [
    ("brisbane", 0.845),
    ("kanazawa", 0.576),
    ("louvain", 0.769),
    ("pooled", 0.74),
];

/// A switch rate from a number in [0, 1] or a preset name ([`SWITCH_RATE_PRESETS`]); the error
/// names the value and what is accepted.
pub fn parse_switch_rate(s: &str) -> Result<f64, String> {
    let s = s.trim();
    if let Some((_, rate)) = SWITCH_RATE_PRESETS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(s))
    {
        return Ok(*rate);
    }
    let names: Vec<&str> = SWITCH_RATE_PRESETS.iter().map(|(n, _)| *n).collect();
    match s.parse::<f64>() {
        Ok(rate) if rate.is_finite() && (0.0..=1.0).contains(&rate) => Ok(rate),
        Ok(rate) => Err(format!("switch rate {rate} is outside [0, 1]")),
        Err(_) => Err(format!(
            "{s:?} is not a switch rate: give a number in [0, 1] or one of {}",
            names.join(", ")
        )),
    }
}

/// Why a calibrated predictor could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CalibratedError {
    /// A prior rate outside [0, 1].
    #[error("the prior switch rate is {0}; a rate is a number in [0, 1]")]
    PriorRate(f64),
    /// A prior weight that is not a positive finite number.
    #[error("the prior weight is {0} boundaries; it must be a positive finite number")]
    PriorWeight(f64),
    /// A grid period of zero.
    #[error("the boundary grid's period must be positive")]
    ZeroPeriod,
}

/// An online estimate of a site's switch rate: the share of boundaries at which the serving
/// satellite changed, with a Beta prior (see [`DEFAULT_PRIOR_WEIGHT`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SwitchRate {
    prior_rate: f64,
    prior_weight: f64,
    boundaries: u64,
    switches: u64,
}

impl SwitchRate {
    /// An estimate that starts at `prior_rate`, worth `prior_weight` boundaries.
    pub fn new(prior_rate: f64, prior_weight: f64) -> Result<Self, CalibratedError> {
        if !(prior_rate.is_finite() && (0.0..=1.0).contains(&prior_rate)) {
            return Err(CalibratedError::PriorRate(prior_rate));
        }
        if !(prior_weight.is_finite() && prior_weight > 0.0) {
            return Err(CalibratedError::PriorWeight(prior_weight));
        }
        Ok(Self {
            prior_rate,
            prior_weight,
            boundaries: 0,
            switches: 0,
        })
    }

    /// One boundary seen: whether the serving satellite changed at it.
    pub fn observe(&mut self, switched: bool) {
        self.boundaries += 1;
        self.switches += u64::from(switched);
    }

    /// The posterior mean: `(switches + weight x prior) / (boundaries + weight)`.
    pub fn estimate(&self) -> f64 {
        (self.switches as f64 + self.prior_weight * self.prior_rate)
            / (self.boundaries as f64 + self.prior_weight)
    }

    /// Boundaries seen so far.
    pub fn boundaries(&self) -> u64 {
        self.boundaries
    }

    /// Switches seen so far.
    pub fn switches(&self) -> u64 {
        self.switches
    }
}

impl Default for SwitchRate {
    /// The pooled prior ([`POOLED_SWITCH_RATE`], [`DEFAULT_PRIOR_WEIGHT`]).
    fn default() -> Self {
        Self {
            prior_rate: POOLED_SWITCH_RATE,
            prior_weight: DEFAULT_PRIOR_WEIGHT,
            boundaries: 0,
            switches: 0,
        }
    }
}

/// Where the candidate boundaries come from.
enum Boundaries {
    /// A fixed grid: `reference + k x period` for every integer `k` (Starlink's slot grid).
    Grid {
        reference: Instant,
        period: Duration,
    },
    /// Another source's handover instants (the orbit model, for constellations without a slot
    /// grid and for coverage gaps), with the timing that source gives.
    Source(Box<dyn HandoverSource>),
}

/// Forecasts every candidate boundary of the next 120 s with the site's switch probability
/// (source `calibrated`).
///
/// Feed it what has been seen with [`Calibrated::observe`] (a detector's verdict per boundary,
/// the truth of a simulated call as time passes it); ask it at decision instants. It is causal:
/// an observation at or before the newest one already taken is ignored, so feeding the same
/// past twice does not count it twice, and nothing after the decision instant is known to it
/// unless the caller feeds it.
pub struct Calibrated {
    boundaries: Boundaries,
    rate: SwitchRate,
    newest: Option<Instant>,
}

impl fmt::Debug for Calibrated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let boundaries = match &self.boundaries {
            Boundaries::Grid { reference, period } => {
                format!("grid {reference:?} + k x {period:?}")
            }
            Boundaries::Source(s) => format!("source {}", s.name()),
        };
        f.debug_struct("Calibrated")
            .field("boundaries", &boundaries)
            .field("rate", &self.rate)
            .field("newest", &self.newest)
            .finish()
    }
}

impl Calibrated {
    /// Boundaries on a grid: `reference + k x period`, `reference` being any boundary instant.
    pub fn grid(reference: Instant, period: Duration) -> Result<Self, CalibratedError> {
        if period.is_zero() {
            return Err(CalibratedError::ZeroPeriod);
        }
        Ok(Self {
            boundaries: Boundaries::Grid { reference, period },
            rate: SwitchRate::default(),
            newest: None,
        })
    }

    /// Starlink's slot grid (seconds 12, 27, 42 and 57 of each UTC minute, reference C1), with
    /// `anchor` standing for the UTC instant `anchor_utc` (as the orbital predictor maps time).
    pub fn slot_grid(anchor: Instant, anchor_utc: DateTime<Utc>) -> Self {
        let to_boundary = (next_slot_boundary(anchor_utc) - anchor_utc)
            .to_std()
            .unwrap_or(Duration::ZERO);
        Self {
            boundaries: Boundaries::Grid {
                reference: anchor + to_boundary,
                period: SLOT,
            },
            rate: SwitchRate::default(),
            newest: None,
        }
    }

    /// The handover instants of `source` as the candidate boundaries (the orbit model, for a
    /// constellation without a slot grid): each gets the site's switch probability, and the
    /// forecast keeps `source`'s timing. A failing `source` makes the forecast fail.
    pub fn over(source: Box<dyn HandoverSource>) -> Self {
        Self {
            boundaries: Boundaries::Source(source),
            rate: SwitchRate::default(),
            newest: None,
        }
    }

    /// The same predictor with another prior (the pooled rate by default; the orbital policy's
    /// rate at the site where that is better known).
    pub fn with_prior(
        mut self,
        prior_rate: f64,
        prior_weight: f64,
    ) -> Result<Self, CalibratedError> {
        let mut rate = SwitchRate::new(prior_rate, prior_weight)?;
        rate.boundaries = self.rate.boundaries;
        rate.switches = self.rate.switches;
        self.rate = rate;
        Ok(self)
    }

    /// A boundary seen at `at`, and whether the serving satellite changed there. Observations
    /// must come in time order; one at or before the newest already taken is ignored.
    pub fn observe(&mut self, at: Instant, switched: bool) {
        if self.newest.is_some_and(|newest| at <= newest) {
            return;
        }
        self.newest = Some(at);
        self.rate.observe(switched);
    }

    /// The current estimate of the site's switch rate.
    pub fn rate(&self) -> &SwitchRate {
        &self.rate
    }

    /// The grid's boundaries in `(after, until]`, if the boundaries are a grid.
    pub fn grid_boundaries(&self, after: Instant, until: Instant) -> Option<Vec<Instant>> {
        let Boundaries::Grid { reference, period } = &self.boundaries else {
            return None;
        };
        Some(grid_between(*reference, *period, after, until))
    }

    fn probability(&self) -> f32 {
        self.rate.estimate() as f32
    }
}

/// The points `reference + k x period` (any integer `k`) in `(after, until]`.
fn grid_between(
    reference: Instant,
    period: Duration,
    after: Instant,
    until: Instant,
) -> Vec<Instant> {
    let period_ns = period.as_nanos();
    // The first grid point strictly after `after`.
    let first = if after >= reference {
        let k = (after - reference).as_nanos() / period_ns + 1;
        reference.checked_add(mul(period, k))
    } else {
        let back = (reference - after).as_nanos();
        // Largest k with reference - k x period > after.
        let k = (back - 1) / period_ns;
        reference.checked_sub(mul(period, k))
    };
    let mut out = Vec::new();
    let Some(mut t) = first else { return out };
    while t <= until {
        out.push(t);
        match t.checked_add(period) {
            Some(next) => t = next,
            None => break,
        }
    }
    out
}

fn mul(period: Duration, k: u128) -> Duration {
    Duration::from_nanos(u64::try_from(period.as_nanos().saturating_mul(k)).unwrap_or(u64::MAX))
}

impl HandoverSource for Calibrated {
    fn name(&self) -> &str {
        "calibrated"
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        let p = self.probability();
        let with = |offset: Duration| -> Result<PredictedHandover, ForecastError> {
            PredictedHandover::new(offset, p)
        };
        let (handovers, timing) = match &mut self.boundaries {
            Boundaries::Grid { reference, period } => {
                let until = now.checked_add(HORIZON).unwrap_or(now);
                let handovers = grid_between(*reference, *period, now, until)
                    .into_iter()
                    .map(|b| with(b - now))
                    .collect::<Result<Vec<_>, _>>()?;
                (handovers, HandoverTiming::SubSecond)
            }
            Boundaries::Source(source) => {
                let base = source.forecast(now)?;
                let handovers = base
                    .handovers()
                    .iter()
                    .map(|h| with(h.offset))
                    .collect::<Result<Vec<_>, _>>()?;
                (handovers, base.timing())
            }
        };
        Ok(Forecast::with_handovers(
            ForecastSource::Calibrated,
            now,
            handovers,
            timing,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::TimelineSource;
    use chrono::TimeZone;

    #[test]
    fn presets_and_numbers_parse_and_bad_values_are_named() {
        assert_eq!(parse_switch_rate("brisbane"), Ok(0.845));
        assert_eq!(parse_switch_rate("Kanazawa"), Ok(0.576));
        assert_eq!(parse_switch_rate("0.5"), Ok(0.5));
        assert!(
            parse_switch_rate("1.5")
                .unwrap_err()
                .contains("outside [0, 1]")
        );
        let err = parse_switch_rate("paris").unwrap_err();
        assert!(
            err.contains("\"paris\"") && err.contains("louvain"),
            "{err}"
        );
    }

    #[test]
    fn the_estimate_starts_at_the_prior_and_moves_to_the_site_rate() {
        let mut rate = SwitchRate::default();
        assert_eq!(rate.estimate(), POOLED_SWITCH_RATE);
        // 14 boundaries, 7 switches: halfway between the prior 0.74 and the observed 0.5.
        for k in 0..14 {
            rate.observe(k % 2 == 0);
        }
        assert!(
            (rate.estimate() - 0.62).abs() < 1e-12,
            "{}",
            rate.estimate()
        );
        for _ in 0..1400 {
            rate.observe(false);
        }
        assert!(rate.estimate() < 0.02, "{}", rate.estimate());
        assert_eq!((rate.boundaries(), rate.switches()), (1414, 7));
    }

    #[test]
    fn a_prior_out_of_range_is_named() {
        assert_eq!(
            SwitchRate::new(1.2, 14.0),
            Err(CalibratedError::PriorRate(1.2))
        );
        assert_eq!(
            SwitchRate::new(0.5, 0.0),
            Err(CalibratedError::PriorWeight(0.0))
        );
        assert!(
            SwitchRate::new(f64::NAN, 1.0)
                .unwrap_err()
                .to_string()
                .contains("NaN")
        );
    }

    #[test]
    fn on_the_slot_grid_it_forecasts_eight_boundaries_at_the_learned_rate() {
        let anchor = Instant::now();
        // 12:00:05 UTC: boundaries at :12, :27, :42, :57, 12:01:12, ... 12:01:57.
        let utc = Utc.with_ymd_and_hms(2024, 7, 16, 12, 0, 5).unwrap();
        let mut c = Calibrated::slot_grid(anchor, utc);
        let f = c.forecast(anchor).unwrap();
        assert_eq!(f.source(), ForecastSource::Calibrated);
        assert_eq!(f.timing(), HandoverTiming::SubSecond);
        let offsets: Vec<u64> = f.handovers().iter().map(|h| h.offset.as_secs()).collect();
        assert_eq!(offsets, vec![7, 22, 37, 52, 67, 82, 97, 112]);
        assert!(f.handovers().iter().all(|h| h.probability == 0.74));
        assert_eq!(f.handover_count(), 8);
        assert!((f.cumulative()[119] - 8.0 * 0.74 / 8.0).abs() < 1e-6);

        // Twenty boundaries without a switch push the rate below one half: no bits, but the
        // expected count stays in the cumulative channel.
        for k in 0..20u32 {
            c.observe(anchor + Duration::from_secs(7) + SLOT * k, false);
        }
        let later = anchor + Duration::from_secs(300);
        let f = c.forecast(later).unwrap();
        let p = (14.0 * 0.74 / 34.0) as f32;
        assert!(f.handovers().iter().all(|h| h.probability == p));
        assert_eq!(f.handover_count(), 0);
        assert!((f.expected_count() - 8.0 * p).abs() < 1e-5);
    }

    #[test]
    fn an_observation_is_counted_once_and_only_in_time_order() {
        let anchor = Instant::now();
        let mut c = Calibrated::grid(anchor, SLOT).unwrap();
        c.observe(anchor + Duration::from_secs(15), true);
        c.observe(anchor + Duration::from_secs(15), true);
        c.observe(anchor + Duration::from_secs(10), false);
        assert_eq!(c.rate().boundaries(), 1);
        c.observe(anchor + Duration::from_secs(30), false);
        assert_eq!((c.rate().boundaries(), c.rate().switches()), (2, 1));
    }

    #[test]
    fn grid_points_are_found_before_and_after_the_reference() {
        let r = Instant::now() + Duration::from_secs(1000);
        let s = |x: u64| r - Duration::from_secs(x);
        assert_eq!(grid_between(r, SLOT, s(31), s(0)), vec![s(30), s(15), s(0)]);
        assert_eq!(grid_between(r, SLOT, s(30), s(1)), vec![s(15)]);
        let a = |x: u64| r + Duration::from_secs(x);
        assert_eq!(grid_between(r, SLOT, a(0), a(30)), vec![a(15), a(30)]);
        assert!(Calibrated::grid(r, Duration::ZERO).is_err());
    }

    #[test]
    fn over_another_source_it_keeps_its_instants_and_timing() {
        let epoch = Instant::now();
        let orbit = TimelineSource::new(
            "orbit",
            ForecastSource::Orbital,
            epoch,
            [Duration::from_millis(3_500), Duration::from_secs(200)],
        );
        let mut c = Calibrated::over(Box::new(orbit))
            .with_prior(0.3, 2.0)
            .unwrap();
        let f = c.forecast(epoch).unwrap();
        assert_eq!(f.handovers().len(), 1);
        assert_eq!(f.handovers()[0].offset, Duration::from_millis(3_500));
        assert_eq!(f.handovers()[0].probability, 0.3);
        assert_eq!(f.timing(), HandoverTiming::SubSecond);
        assert_eq!(f.handover_count(), 0);
    }
}

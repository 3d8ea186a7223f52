//! Uniform-step time series: capacity in bit/s, one-way delay, loss probability.
//!
//! Every trace the project reads is sampled on a uniform grid (LeoReplayer delay every 10 ms,
//! `lagos.csv` every 100 ms, 5G KPIs every second), so the series here are a step and a list of
//! values. What happens after the last value is explicit ([`SeriesEnd`]): the series loops (the
//! way Mahimahi and LeoReplayer replay their traces) or holds its last value.

use super::LinkConfigError;
use super::time::{NANOS_PER_MS, NANOS_PER_SEC, Time, duration_nanos};
use std::time::Duration;

/// What a series does after its last value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SeriesEnd {
    /// Start again from the first value (Mahimahi and LeoReplayer replay traces in a loop).
    #[default]
    Loop,
    /// Keep the last value forever.
    Hold,
}

/// How a delay series is read between two samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Interpolation {
    /// The value of the step containing the instant (a piecewise-constant series; what
    /// LeoReplayer does with its 10-ms delay file).
    #[default]
    Step,
    /// Linear between the sample at the start of the step and the next sample (for smooth
    /// processes such as geometric propagation delay sampled every second).
    Linear,
}

/// The uniform grid shared by the series: step length, number of samples, end behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grid {
    step_ns: u64,
    len: usize,
    end: SeriesEnd,
}

impl Grid {
    fn new(
        step: Duration,
        len: usize,
        end: SeriesEnd,
        what: &str,
    ) -> Result<Grid, LinkConfigError> {
        let step_ns = duration_nanos(step);
        if step_ns == 0 {
            return Err(LinkConfigError::Series(format!(
                "{what}: the step must be positive"
            )));
        }
        if len == 0 {
            return Err(LinkConfigError::Series(format!("{what}: no values")));
        }
        Ok(Grid { step_ns, len, end })
    }

    /// A grid from parameters known to be valid, repaired (1-ns step, one sample) otherwise.
    fn repaired(step: Duration, len: usize, end: SeriesEnd) -> Grid {
        Grid {
            step_ns: duration_nanos(step).max(1),
            len: len.max(1),
            end,
        }
    }

    /// Index of the sample in force at `t`, and the instant that sample's step ends
    /// ([`Time::MAX`] for the held last sample).
    #[inline]
    pub(crate) fn locate(&self, t: Time) -> (usize, Time) {
        let step = t.as_nanos() / self.step_ns;
        let next = Time::from_nanos(step.saturating_add(1).saturating_mul(self.step_ns));
        match self.end {
            SeriesEnd::Loop => ((step % self.len as u64) as usize, next),
            SeriesEnd::Hold => {
                let last = self.len as u64 - 1;
                if step >= last {
                    (self.len - 1, Time::MAX)
                } else {
                    (step as usize, next)
                }
            }
        }
    }

    /// The index after `i` in replay order (wraps for a loop, stays on the last for hold).
    #[inline]
    fn next_index(&self, i: usize) -> usize {
        if i + 1 < self.len {
            i + 1
        } else {
            match self.end {
                SeriesEnd::Loop => 0,
                SeriesEnd::Hold => i,
            }
        }
    }

    /// Nanoseconds into the step containing `t`.
    #[inline]
    fn offset_in_step(&self, t: Time) -> u64 {
        t.as_nanos() % self.step_ns
    }
}

/// A piecewise-constant capacity, in bit/s, on a uniform grid (e.g. `lagos.csv`'s downlink
/// column, one value per 100 ms). The bottleneck serves at the rate in force, byte-accurately
/// (see [`super::Capacity`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RateSeries {
    grid: Grid,
    bits_per_second: Vec<u64>,
    max_bps: u64,
}

impl RateSeries {
    /// A series of `bits_per_second` values, one per `step`. Errors on a zero step or no values.
    pub fn new(
        step: Duration,
        bits_per_second: Vec<u64>,
        end: SeriesEnd,
    ) -> Result<RateSeries, LinkConfigError> {
        let grid = Grid::new(step, bits_per_second.len(), end, "capacity series")?;
        Ok(RateSeries {
            grid,
            max_bps: bits_per_second.iter().copied().max().unwrap_or(0),
            bits_per_second,
        })
    }

    /// A series from values known to be valid (a positive step, at least one value); repairs
    /// them otherwise (a 1-ns step, a single 0) instead of failing, for readers whose parsing
    /// already guarantees both.
    pub(crate) fn from_valid(
        step: Duration,
        mut bits_per_second: Vec<u64>,
        end: SeriesEnd,
    ) -> RateSeries {
        if bits_per_second.is_empty() {
            bits_per_second.push(0);
        }
        RateSeries {
            grid: Grid::repaired(step, bits_per_second.len(), end),
            max_bps: bits_per_second.iter().copied().max().unwrap_or(0),
            bits_per_second,
        }
    }

    /// The step between samples.
    pub fn step(&self) -> Duration {
        Duration::from_nanos(self.grid.step_ns)
    }

    /// The samples, bit/s.
    pub fn values(&self) -> &[u64] {
        &self.bits_per_second
    }

    /// What happens after the last sample.
    pub fn end(&self) -> SeriesEnd {
        self.grid.end
    }

    /// The largest sample, bit/s.
    pub fn max_bps(&self) -> u64 {
        self.max_bps
    }

    /// The rate in force at `t`, bit/s.
    pub fn at(&self, t: Time) -> u64 {
        self.bits_per_second[self.grid.locate(t).0]
    }

    /// The rate in force at `t` and the instant it next may change.
    #[inline]
    pub(crate) fn at_with_end(&self, t: Time) -> (u64, Time) {
        let (i, end) = self.grid.locate(t);
        (self.bits_per_second[i], end)
    }

    /// Mean of the samples, bit/s (the long-run rate of a looped series).
    pub fn mean_bps(&self) -> f64 {
        self.bits_per_second.iter().map(|&v| v as f64).sum::<f64>()
            / self.bits_per_second.len() as f64
    }
}

/// A one-way delay series on a uniform grid: LeoReplayer's 10-ms file, a per-second series, or
/// one derived from geometry ([`super::geometry`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DelaySeries {
    grid: Grid,
    nanos: Vec<u64>,
    interpolation: Interpolation,
}

impl DelaySeries {
    /// A series of delays, one per `step`. Errors on a zero step or no values.
    pub fn new(
        step: Duration,
        delays: &[Duration],
        end: SeriesEnd,
        interpolation: Interpolation,
    ) -> Result<DelaySeries, LinkConfigError> {
        Self::from_nanos(
            step,
            delays.iter().map(|&d| duration_nanos(d)).collect(),
            end,
            interpolation,
        )
    }

    /// A series of delays in nanoseconds, one per `step`.
    pub fn from_nanos(
        step: Duration,
        nanos: Vec<u64>,
        end: SeriesEnd,
        interpolation: Interpolation,
    ) -> Result<DelaySeries, LinkConfigError> {
        let grid = Grid::new(step, nanos.len(), end, "delay series")?;
        Ok(DelaySeries {
            grid,
            nanos,
            interpolation,
        })
    }

    /// See [`RateSeries::from_valid`].
    pub(crate) fn from_valid(
        step: Duration,
        mut nanos: Vec<u64>,
        end: SeriesEnd,
        interpolation: Interpolation,
    ) -> DelaySeries {
        if nanos.is_empty() {
            nanos.push(0);
        }
        DelaySeries {
            grid: Grid::repaired(step, nanos.len(), end),
            nanos,
            interpolation,
        }
    }

    /// A series of delays in whole milliseconds, one per `step` (LeoReplayer's unit).
    pub fn from_millis(
        step: Duration,
        millis: &[u64],
        end: SeriesEnd,
        interpolation: Interpolation,
    ) -> Result<DelaySeries, LinkConfigError> {
        Self::from_nanos(
            step,
            millis
                .iter()
                .map(|&m| m.saturating_mul(NANOS_PER_MS))
                .collect(),
            end,
            interpolation,
        )
    }

    /// The step between samples.
    pub fn step(&self) -> Duration {
        Duration::from_nanos(self.grid.step_ns)
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.nanos.len()
    }

    /// Always false: a series has at least one sample (checked at construction).
    pub fn is_empty(&self) -> bool {
        self.nanos.is_empty()
    }

    /// The samples, nanoseconds.
    pub fn values_nanos(&self) -> &[u64] {
        &self.nanos
    }

    /// What happens after the last sample.
    pub fn end(&self) -> SeriesEnd {
        self.grid.end
    }

    /// How the series is read between samples.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// The series with another end behaviour.
    pub fn with_end(mut self, end: SeriesEnd) -> DelaySeries {
        self.grid.end = end;
        self
    }

    /// The series with another interpolation.
    pub fn with_interpolation(mut self, interpolation: Interpolation) -> DelaySeries {
        self.interpolation = interpolation;
        self
    }

    /// Length of one pass over the samples.
    pub fn duration(&self) -> Duration {
        Duration::from_nanos(self.grid.step_ns.saturating_mul(self.nanos.len() as u64))
    }

    /// Mean, minimum and maximum sample.
    pub fn summary(&self) -> (Duration, Duration, Duration) {
        let sum: u128 = self.nanos.iter().map(|&v| u128::from(v)).sum();
        let mean = (sum / self.nanos.len() as u128) as u64;
        let min = self.nanos.iter().copied().min().unwrap_or(0);
        let max = self.nanos.iter().copied().max().unwrap_or(0);
        (
            Duration::from_nanos(mean),
            Duration::from_nanos(min),
            Duration::from_nanos(max),
        )
    }

    /// The delay at `t`, nanoseconds.
    #[inline]
    pub(crate) fn nanos_at(&self, t: Time) -> u64 {
        let (i, _) = self.grid.locate(t);
        let v = self.nanos[i];
        match self.interpolation {
            Interpolation::Step => v,
            Interpolation::Linear => {
                let next = self.nanos[self.grid.next_index(i)];
                if next == v || (self.grid.end == SeriesEnd::Hold && i + 1 == self.nanos.len()) {
                    return v;
                }
                let frac = self.grid.offset_in_step(t) as f64 / self.grid.step_ns as f64;
                let value = v as f64 + (next as f64 - v as f64) * frac;
                value.round().max(0.0) as u64
            }
        }
    }

    /// The delay at `t`.
    pub fn at(&self, t: Time) -> Duration {
        Duration::from_nanos(self.nanos_at(t))
    }
}

/// A per-step Bernoulli loss probability on a uniform grid (e.g. `lagos.csv`'s loss columns).
#[derive(Debug, Clone, PartialEq)]
pub struct LossSeries {
    grid: Grid,
    probabilities: Vec<f64>,
    thresholds: Vec<u128>,
}

impl LossSeries {
    /// A series of loss probabilities, one per `step`. Errors on a zero step, no values, or a
    /// probability outside [0, 1].
    pub fn new(
        step: Duration,
        probabilities: Vec<f64>,
        end: SeriesEnd,
    ) -> Result<LossSeries, LinkConfigError> {
        let grid = Grid::new(step, probabilities.len(), end, "loss series")?;
        for (i, &p) in probabilities.iter().enumerate() {
            check_probability(p, &format!("loss series sample {i}"))?;
        }
        let thresholds = probabilities.iter().map(|&p| threshold(p)).collect();
        Ok(LossSeries {
            grid,
            probabilities,
            thresholds,
        })
    }

    /// See [`RateSeries::from_valid`]; probabilities are also clamped to [0, 1].
    pub(crate) fn from_valid(
        step: Duration,
        mut probabilities: Vec<f64>,
        end: SeriesEnd,
    ) -> LossSeries {
        if probabilities.is_empty() {
            probabilities.push(0.0);
        }
        for p in &mut probabilities {
            *p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
        }
        let thresholds = probabilities.iter().map(|&p| threshold(p)).collect();
        LossSeries {
            grid: Grid::repaired(step, probabilities.len(), end),
            probabilities,
            thresholds,
        }
    }

    /// The step between samples.
    pub fn step(&self) -> Duration {
        Duration::from_nanos(self.grid.step_ns)
    }

    /// The samples.
    pub fn values(&self) -> &[f64] {
        &self.probabilities
    }

    /// The probability in force at `t`.
    pub fn at(&self, t: Time) -> f64 {
        self.probabilities[self.grid.locate(t).0]
    }

    #[inline]
    pub(crate) fn threshold_at(&self, t: Time) -> u128 {
        self.thresholds[self.grid.locate(t).0]
    }
}

/// Refuses a probability outside [0, 1] (or not a number), naming `what`.
pub(crate) fn check_probability(p: f64, what: &str) -> Result<(), LinkConfigError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(LinkConfigError::Probability {
            what: what.to_string(),
            value: p,
        })
    }
}

/// The comparison threshold for a probability: a uniform `u64` draw `x` is a "hit" when
/// `x < threshold`. `p * 2^64`, so `p = 1` is exactly `2^64` (always) and `p = 0` never.
#[inline]
pub(crate) fn threshold(p: f64) -> u128 {
    if p <= 0.0 {
        0
    } else if p >= 1.0 {
        1u128 << 64
    } else {
        // p * 2^64 is below 2^64 and exactly representable as a float product; the cast floors.
        (p * 18_446_744_073_709_551_616.0) as u128
    }
}

/// Seconds per 1-s series step, for readers that build per-second series.
pub(crate) const ONE_SECOND: Duration = Duration::from_nanos(NANOS_PER_SEC);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_looped_series_wraps_and_a_held_one_keeps_its_last_value() {
        let looped =
            RateSeries::new(Duration::from_millis(100), vec![1, 2, 3], SeriesEnd::Loop).unwrap();
        assert_eq!(looped.at(Time::from_millis(0)), 1);
        assert_eq!(looped.at(Time::from_millis(299)), 3);
        assert_eq!(looped.at(Time::from_millis(300)), 1);
        assert_eq!(
            looped.at_with_end(Time::from_millis(250)),
            (3, Time::from_millis(300))
        );
        let held =
            RateSeries::new(Duration::from_millis(100), vec![1, 2, 3], SeriesEnd::Hold).unwrap();
        assert_eq!(held.at_with_end(Time::from_millis(250)), (3, Time::MAX));
        assert_eq!(held.at(Time::from_secs(1000)), 3);
    }

    #[test]
    fn linear_delay_interpolates_between_samples() {
        let s = DelaySeries::from_millis(
            Duration::from_secs(1),
            &[10, 20],
            SeriesEnd::Hold,
            Interpolation::Linear,
        )
        .unwrap();
        assert_eq!(s.at(Time::from_millis(500)), Duration::from_millis(15));
        assert_eq!(s.at(Time::from_millis(1500)), Duration::from_millis(20));
        let looped = s.clone().with_end(SeriesEnd::Loop);
        assert_eq!(
            looped.at(Time::from_millis(1500)),
            Duration::from_millis(15)
        );
    }

    #[test]
    fn probability_thresholds_are_exact_at_zero_and_one() {
        assert_eq!(threshold(0.0), 0);
        assert_eq!(threshold(1.0), 1u128 << 64);
        assert_eq!(threshold(0.5), 1u128 << 63);
    }

    #[test]
    fn empty_or_zero_step_series_are_refused() {
        assert!(RateSeries::new(Duration::ZERO, vec![1], SeriesEnd::Loop).is_err());
        assert!(RateSeries::new(Duration::from_secs(1), vec![], SeriesEnd::Loop).is_err());
        assert!(LossSeries::new(Duration::from_secs(1), vec![1.5], SeriesEnd::Loop).is_err());
    }
}

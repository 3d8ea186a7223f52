//! The handover forecast: the one contract between handover sources and the queue policy.
//!
//! Defined in docs/architecture.md, "The forecast contract", after the paper's state
//! representation ("Dynamic Pacing for Real-time Satellite Traffic", section III-B): a 120-second
//! horizon in one-second steps, a 0/1 handover indicator per step, and the running count of
//! handovers normalised by 8, the number of handovers Starlink's 15-second reconfiguration
//! cadence puts in 120 seconds.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Number of one-second steps in a forecast, `H = 120` (docs/architecture.md, "The forecast
/// contract").
pub const HORIZON_STEPS: usize = 120;

/// Length of one forecast step.
pub const STEP: Duration = Duration::from_secs(1);

/// The span a forecast covers: [`HORIZON_STEPS`] x [`STEP`].
pub const HORIZON: Duration = Duration::from_secs(HORIZON_STEPS as u64);

/// Divisor of the cumulative channel: 8 handovers in 120 s at Starlink's 15-s cadence
/// (docs/architecture.md, "The forecast contract"; paper section III-B).
pub const CUMULATIVE_NORM: f32 = 8.0;

/// Shape of the model input tensor `forecast`: `[batch = 1, steps = 120, channels = 2]`
/// (docs/architecture.md, "The model and its card"). Channel 0 is the handover bit, channel 1 the
/// normalised cumulative count.
pub const TENSOR_SHAPE: [usize; 3] = [1, HORIZON_STEPS, 2];

/// Why a forecast was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ForecastError {
    /// The handover series did not have exactly [`HORIZON_STEPS`] entries.
    #[error("a forecast has exactly {HORIZON_STEPS} one-second steps, got {0}")]
    WrongLength(usize),
    /// A handover entry was neither 0 nor 1.
    #[error("handover[{index}] is {value}; each step is 0 (no handover) or 1 (a handover)")]
    NotABit {
        /// Step index.
        index: usize,
        /// The offending value.
        value: String,
    },
    /// A stored cumulative channel disagreed with the one derived from the handover bits.
    #[error(
        "cumulative[{index}] is {found}, but the handover bits give {expected} \
         (cumulative[k] = handovers in steps 0..=k / {CUMULATIVE_NORM})"
    )]
    InconsistentCumulative {
        /// Step index of the first disagreement.
        index: usize,
        /// The value derived from the bits.
        expected: f32,
        /// The value that was supplied.
        found: f32,
    },
    /// A handover was placed outside the forecast's horizon.
    #[error("a handover {offset:?} after t0 is outside the forecast horizon (0 s, {HORIZON:?}]")]
    OutsideHorizon {
        /// Offset of the handover from `t0`.
        offset: Duration,
    },
    /// An unknown source tag.
    #[error(
        "unknown forecast source {0:?}; expected one of mirror, orbital, hybrid, oracle, trace, \
         calibrated, none"
    )]
    UnknownSource(String),
    /// A predicted handover's probability was not a finite number in [0, 1].
    #[error(
        "the handover {offset:?} after t0 has probability {value}; a probability is a finite \
         number in [0, 1]"
    )]
    BadProbability {
        /// Offset of the handover from `t0`.
        offset: Duration,
        /// The offending probability.
        value: f32,
    },
    /// A stored cumulative channel that cannot be an expected count: not finite, negative,
    /// decreasing, or rising by less than a probability of 0.5 in a step whose bit is 1.
    #[error(
        "cumulative[{index}] is {found}: the expected cumulative count over {CUMULATIVE_NORM} \
         {rule}"
    )]
    ImpossibleCumulative {
        /// Step index of the first violation.
        index: usize,
        /// The value that was supplied.
        found: f32,
        /// The rule it breaks.
        rule: &'static str,
    },
}

/// Where a forecast came from (docs/architecture.md, "The forecast contract"). Carried into
/// telemetry so that a model can be trained and evaluated per source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ForecastSource {
    /// The paper's live predictor: the next interval repeats the last observed one.
    Mirror,
    /// SGP4 orbits and Starlink's slot grid.
    Orbital,
    /// The dish's observed serving satellite matched to a TLE, then propagated.
    Hybrid,
    /// Ground truth from the emulated link; for evaluation only.
    Oracle,
    /// A recorded or scripted handover timeline.
    Trace,
    /// A switch probability per predicted boundary: timing from the slot grid or orbits, the
    /// probability from the site's switch rate learned online
    /// ([`Calibrated`](crate::predict::Calibrated)).
    Calibrated,
    /// No handover information (a terrestrial path): the all-zero forecast.
    None,
}

impl ForecastSource {
    /// The tag written into telemetry.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mirror => "mirror",
            Self::Orbital => "orbital",
            Self::Hybrid => "hybrid",
            Self::Oracle => "oracle",
            Self::Trace => "trace",
            Self::Calibrated => "calibrated",
            Self::None => "none",
        }
    }

    /// Whether the source weighs its handovers with probabilities below 1, so that its
    /// cumulative channel is an expected count rather than the running count of its bits
    /// (docs/architecture.md, "The forecast contract"). Telemetry validation checks the two
    /// kinds differently.
    pub fn weighs_handovers(self) -> bool {
        matches!(self, Self::Calibrated)
    }
}

impl fmt::Display for ForecastSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ForecastSource {
    type Err = ForecastError;

    fn from_str(tag: &str) -> Result<Self, Self::Err> {
        Ok(match tag {
            "mirror" => Self::Mirror,
            "orbital" => Self::Orbital,
            "hybrid" => Self::Hybrid,
            "oracle" => Self::Oracle,
            "trace" => Self::Trace,
            "calibrated" => Self::Calibrated,
            "none" => Self::None,
            other => return Err(ForecastError::UnknownSource(other.to_owned())),
        })
    }
}

impl Serialize for ForecastSource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ForecastSource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let tag = String::deserialize(deserializer)?;
        tag.parse().map_err(serde::de::Error::custom)
    }
}

/// The 120 handover bits of a forecast, validated.
///
/// [`HandoverSteps::cumulative`] is the running count of the bits; a forecast whose handovers
/// carry probabilities has its own expected-count channel ([`Forecast::cumulative`]), checked
/// against the bits by [`HandoverSteps::check_expected_cumulative`]. Serialises as a JSON array
/// of 0/1 and refuses anything else on the way in.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HandoverSteps([bool; HORIZON_STEPS]);

impl HandoverSteps {
    /// No handover in any step.
    pub const NONE: Self = Self([false; HORIZON_STEPS]);

    /// Steps from 0/1 values, refusing a wrong length or any other value.
    pub fn from_bits<B: Copy + Into<u64>>(bits: &[B]) -> Result<Self, ForecastError> {
        if bits.len() != HORIZON_STEPS {
            return Err(ForecastError::WrongLength(bits.len()));
        }
        let mut steps = [false; HORIZON_STEPS];
        for (index, (step, bit)) in steps.iter_mut().zip(bits).enumerate() {
            *step = match (*bit).into() {
                0 => false,
                1 => true,
                value => {
                    return Err(ForecastError::NotABit {
                        index,
                        value: value.to_string(),
                    });
                }
            };
        }
        Ok(Self(steps))
    }

    /// Steps with a handover at each offset from `t0`.
    ///
    /// A handover at offset `d` falls in step `k` when `k s < d <= (k+1) s` (docs/architecture.md,
    /// "The forecast contract"), so an offset of exactly 0 belongs to the previous interval and is
    /// refused, as is anything past the horizon. Several handovers in one step set the same bit.
    pub fn from_offsets<I>(offsets: I) -> Result<Self, ForecastError>
    where
        I: IntoIterator<Item = Duration>,
    {
        let mut steps = [false; HORIZON_STEPS];
        for offset in offsets {
            if offset.is_zero() || offset > HORIZON {
                return Err(ForecastError::OutsideHorizon { offset });
            }
            let step = offset.as_nanos().div_ceil(STEP.as_nanos()) - 1;
            steps[step as usize] = true;
        }
        Ok(Self(steps))
    }

    /// The handover bit of each step.
    pub fn bits(&self) -> [u8; HORIZON_STEPS] {
        self.0.map(u8::from)
    }

    /// Whether step `k` holds a handover. `false` past the horizon.
    pub fn is_handover(&self, step: usize) -> bool {
        self.0.get(step).copied().unwrap_or(false)
    }

    /// Handovers expected over the whole horizon.
    pub fn count(&self) -> usize {
        self.0.iter().filter(|&&h| h).count()
    }

    /// The cumulative channel: `cumulative[k] = (handover[0] + ... + handover[k]) / 8`.
    pub fn cumulative(&self) -> [f32; HORIZON_STEPS] {
        let mut running = 0u32;
        self.0.map(|h| {
            running += u32::from(h);
            running as f32 / CUMULATIVE_NORM
        })
    }

    /// Checks a stored cumulative channel against the bits, as a reader of telemetry must.
    ///
    /// Values are compared with a tolerance of 1e-6, enough for a float that went through JSON.
    pub fn check_cumulative(&self, cumulative: &[f32]) -> Result<(), ForecastError> {
        if cumulative.len() != HORIZON_STEPS {
            return Err(ForecastError::WrongLength(cumulative.len()));
        }
        for (index, (&expected, &found)) in self.cumulative().iter().zip(cumulative).enumerate() {
            let close = (expected - found).abs() <= 1e-6;
            if !close {
                return Err(ForecastError::InconsistentCumulative {
                    index,
                    expected,
                    found,
                });
            }
        }
        Ok(())
    }

    /// Checks a stored cumulative channel that is an expected count (a source whose handovers
    /// carry probabilities, [`ForecastSource::weighs_handovers`]) against the bits.
    ///
    /// The probabilities themselves are not stored, so only what any set of them implies is
    /// checked: every value finite and at least 0, never decreasing (by more than the 1e-6 a
    /// float keeps through JSON), rising by at most `1 / 8` in a step (a step counts once,
    /// [`Forecast::cumulative`]), and by at least `0.5 / 8` in a step whose bit is 1,
    /// since a bit is 1 only where a handover with probability at least 0.5 falls. A channel
    /// derived from the bits (every probability 1) passes.
    pub fn check_expected_cumulative(&self, cumulative: &[f32]) -> Result<(), ForecastError> {
        const TOLERANCE: f32 = 1e-6;
        if cumulative.len() != HORIZON_STEPS {
            return Err(ForecastError::WrongLength(cumulative.len()));
        }
        let mut previous = 0.0f32;
        for (index, &found) in cumulative.iter().enumerate() {
            let fail = |rule| ForecastError::ImpossibleCumulative { index, found, rule };
            if !found.is_finite() {
                return Err(fail("is a finite number"));
            }
            if found < previous - TOLERANCE {
                return Err(fail("never decreases"));
            }
            if found - previous > 1.0 / CUMULATIVE_NORM + TOLERANCE {
                return Err(fail("rises by at most 1 / 8 in a step (one handover step)"));
            }
            if self.0[index] && found - previous < BIT_PROBABILITY / CUMULATIVE_NORM - TOLERANCE {
                return Err(fail(
                    "rises by at least 0.5 / 8 in a step whose bit is 1 (a handover with \
                     probability >= 0.5)",
                ));
            }
            previous = found;
        }
        Ok(())
    }

    /// The model input, flattened in `[1, 120, 2]` row-major order: for each step, the handover
    /// bit then the cumulative value.
    pub fn to_tensor(&self) -> [f32; 2 * HORIZON_STEPS] {
        self.tensor_with(&self.cumulative())
    }

    /// The model input with a given cumulative channel (an expected count).
    pub fn tensor_with(&self, cumulative: &[f32; HORIZON_STEPS]) -> [f32; 2 * HORIZON_STEPS] {
        let mut tensor = [0.0; 2 * HORIZON_STEPS];
        for (k, pair) in tensor.chunks_exact_mut(2).enumerate() {
            pair[0] = f32::from(u8::from(self.0[k]));
            pair[1] = cumulative[k];
        }
        tensor
    }
}

impl Default for HandoverSteps {
    fn default() -> Self {
        Self::NONE
    }
}

impl fmt::Debug for HandoverSteps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at: Vec<usize> = (0..HORIZON_STEPS).filter(|&k| self.0[k]).collect();
        f.debug_struct("HandoverSteps")
            .field("handover_steps", &at)
            .finish()
    }
}

impl Serialize for HandoverSteps {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.bits().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for HandoverSteps {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let bits = Vec::<u64>::deserialize(deserializer)?;
        Self::from_bits(&bits).map_err(serde::de::Error::custom)
    }
}

/// The probability from which a predicted handover sets its step's bit: a step is a handover
/// step when a handover is more likely than not to fall in it (docs/architecture.md, "The
/// forecast contract").
pub const BIT_PROBABILITY: f32 = 0.5;

/// One predicted handover: when, after the forecast's `t0`, and how likely.
///
/// The offset lies in `(0 s, 120 s]` (a handover exactly at `t0` belongs to the previous
/// window, docs/architecture.md, "The forecast contract"); the probability is a finite number in
/// `[0, 1]`. Deserialising checks both.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawPredictedHandover")]
pub struct PredictedHandover {
    /// Time from `t0`, in `(0 s, 120 s]`.
    pub offset: Duration,
    /// Probability that the serving satellite changes at that instant, in `[0, 1]`.
    pub probability: f32,
}

#[derive(Deserialize)]
struct RawPredictedHandover {
    offset: Duration,
    probability: f32,
}

impl TryFrom<RawPredictedHandover> for PredictedHandover {
    type Error = ForecastError;

    fn try_from(raw: RawPredictedHandover) -> Result<Self, Self::Error> {
        Self::new(raw.offset, raw.probability)
    }
}

impl PredictedHandover {
    /// A handover at `offset` after `t0` with `probability`, refusing an offset outside
    /// `(0 s, 120 s]` and a probability that is not a finite number in `[0, 1]`.
    pub fn new(offset: Duration, probability: f32) -> Result<Self, ForecastError> {
        let handover = Self {
            offset,
            probability,
        };
        handover.check()?;
        Ok(handover)
    }

    /// A certain handover (probability 1) at `offset`.
    pub fn certain(offset: Duration) -> Result<Self, ForecastError> {
        Self::new(offset, 1.0)
    }

    /// Checks the offset and the probability (see [`PredictedHandover::new`]).
    pub fn check(&self) -> Result<(), ForecastError> {
        if self.offset.is_zero() || self.offset > HORIZON {
            return Err(ForecastError::OutsideHorizon {
                offset: self.offset,
            });
        }
        if !(self.probability.is_finite() && (0.0..=1.0).contains(&self.probability)) {
            return Err(ForecastError::BadProbability {
                offset: self.offset,
                value: self.probability,
            });
        }
        Ok(())
    }

    /// The forecast step the handover falls in: `k` with `k s < offset <= (k+1) s`.
    pub fn step(&self) -> usize {
        (self.offset.as_nanos().div_ceil(STEP.as_nanos()) - 1) as usize
    }
}

/// How precisely a source knows when its handovers happen (docs/architecture.md, "The forecast
/// contract"). An action timed to a handover (a hold, a protection window) needs `SubSecond`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HandoverTiming {
    /// The instants are known below a second: Starlink's slot grid, orbits, or a mirror whose
    /// history lies on the grid.
    SubSecond,
    /// The instants are known only to the one-second step they fall in.
    Step,
    /// The source cannot time handovers (no handover information).
    Unknown,
}

/// A handover forecast for the 120 s after `t0` (docs/architecture.md, "The forecast contract").
///
/// Besides the 120 handover bits of the model tensor it carries the predicted handovers
/// themselves, each with its offset and probability, sorted by offset, and how precisely the
/// source knows their instants. The list is shared (`Arc`), so a clone is cheap.
#[derive(Debug, Clone, PartialEq)]
pub struct Forecast {
    source: ForecastSource,
    t0: Instant,
    steps: HandoverSteps,
    timing: HandoverTiming,
    handovers: Arc<[PredictedHandover]>,
}

// Every probability is checked finite on the way in, so equality is an equivalence relation.
impl Eq for Forecast {}

impl Forecast {
    /// A forecast from validated steps: a certain handover at the right edge of each handover
    /// step (the latest instant the step stands for), timing [`HandoverTiming::Step`].
    pub fn new(source: ForecastSource, t0: Instant, steps: HandoverSteps) -> Self {
        let handovers: Arc<[PredictedHandover]> = (0..HORIZON_STEPS)
            .filter(|&k| steps.is_handover(k))
            .map(|k| PredictedHandover {
                offset: STEP * (k as u32 + 1),
                probability: 1.0,
            })
            .collect();
        Self {
            source,
            t0,
            steps,
            timing: HandoverTiming::Step,
            handovers,
        }
    }

    /// A forecast from predicted handovers, which are sorted by offset. A step's bit is 1 when a
    /// handover with probability at least [`BIT_PROBABILITY`] falls in it. Refuses an offset
    /// outside `(0 s, 120 s]` or a probability outside `[0, 1]`, naming the handover.
    pub fn with_handovers(
        source: ForecastSource,
        t0: Instant,
        handovers: impl IntoIterator<Item = PredictedHandover>,
        timing: HandoverTiming,
    ) -> Result<Self, ForecastError> {
        let mut list: Vec<PredictedHandover> = handovers.into_iter().collect();
        let mut bits = [false; HORIZON_STEPS];
        for handover in &list {
            handover.check()?;
            if handover.probability >= BIT_PROBABILITY {
                bits[handover.step()] = true;
            }
        }
        list.sort_by_key(|h| h.offset);
        Ok(Self {
            source,
            t0,
            steps: HandoverSteps(bits),
            timing,
            handovers: list.into(),
        })
    }

    /// A forecast of certain handovers at `offsets` after `t0`, with the timing the source
    /// knows them to.
    pub fn from_offsets(
        source: ForecastSource,
        t0: Instant,
        offsets: impl IntoIterator<Item = Duration>,
        timing: HandoverTiming,
    ) -> Result<Self, ForecastError> {
        let handovers = offsets
            .into_iter()
            .map(PredictedHandover::certain)
            .collect::<Result<Vec<_>, _>>()?;
        Self::with_handovers(source, t0, handovers, timing)
    }

    /// A forecast from 0/1 values, refusing a wrong length or any other value.
    pub fn from_bits<B: Copy + Into<u64>>(
        source: ForecastSource,
        t0: Instant,
        bits: &[B],
    ) -> Result<Self, ForecastError> {
        Ok(Self::new(source, t0, HandoverSteps::from_bits(bits)?))
    }

    /// A forecast with a certain handover at each instant, which must lie in `(t0, t0 + 120 s]`;
    /// the instants are exact, so the timing is [`HandoverTiming::SubSecond`].
    pub fn from_instants<I>(
        source: ForecastSource,
        t0: Instant,
        at: I,
    ) -> Result<Self, ForecastError>
    where
        I: IntoIterator<Item = Instant>,
    {
        let mut offsets = Vec::new();
        for instant in at {
            match instant.checked_duration_since(t0) {
                Some(offset) => offsets.push(offset),
                None => {
                    return Err(ForecastError::OutsideHorizon {
                        offset: Duration::ZERO,
                    });
                }
            }
        }
        Self::from_offsets(source, t0, offsets, HandoverTiming::SubSecond)
    }

    /// No handover information: the all-zero forecast with source `none`, timing
    /// [`HandoverTiming::Unknown`].
    pub fn none(t0: Instant) -> Self {
        Self {
            timing: HandoverTiming::Unknown,
            ..Self::new(ForecastSource::None, t0, HandoverSteps::NONE)
        }
    }

    /// Where the forecast came from.
    pub fn source(&self) -> ForecastSource {
        self.source
    }

    /// The decision instant the forecast starts at.
    pub fn t0(&self) -> Instant {
        self.t0
    }

    /// The validated handover steps.
    pub fn steps(&self) -> &HandoverSteps {
        &self.steps
    }

    /// The predicted handovers, sorted by offset.
    pub fn handovers(&self) -> &[PredictedHandover] {
        &self.handovers
    }

    /// How precisely the source knows the instants of its handovers.
    pub fn timing(&self) -> HandoverTiming {
        self.timing
    }

    /// Handover steps over the horizon (steps whose bit is 1).
    pub fn handover_count(&self) -> usize {
        self.steps.count()
    }

    /// Expected number of handovers over the horizon: the sum of the probabilities.
    pub fn expected_count(&self) -> f32 {
        self.handovers.iter().map(|h| h.probability).sum()
    }

    /// The handover count this forecast stands for when one number is wanted: the median of
    /// the number of handovers, the handovers taken as independent draws with their
    /// probabilities (a Poisson-binomial count). The median is the constant with the least
    /// expected absolute error, so it is the count to score by mean absolute error; with
    /// certain handovers it is their number.
    pub fn median_count(&self) -> usize {
        // dist[n] = P(n handovers so far), built one handover at a time.
        let mut dist = vec![1.0f64];
        for handover in self.handovers.iter() {
            let p = f64::from(handover.probability);
            let mut next = vec![0.0f64; dist.len() + 1];
            for (n, &q) in dist.iter().enumerate() {
                next[n] += q * (1.0 - p);
                next[n + 1] += q * p;
            }
            dist = next;
        }
        let mut below = 0.0;
        for (n, q) in dist.iter().enumerate() {
            below += q;
            if below >= 0.5 {
                return n;
            }
        }
        self.handovers.len()
    }

    /// The handover bit of each step.
    pub fn handover(&self) -> [u8; HORIZON_STEPS] {
        self.steps.bits()
    }

    /// The cumulative channel: the expected number of handover steps in steps `0..=k`, over
    /// [`CUMULATIVE_NORM`]. A step counts with the probability that at least one of its
    /// handovers happens, `1 - (1 - p1)(1 - p2)...` (the handovers taken as independent), so
    /// with one handover per step (the slot grid) it is the expected cumulative handover count,
    /// and with certain handovers it is the running count of the bits, as before probabilities
    /// existed (docs/architecture.md, "The forecast contract").
    pub fn cumulative(&self) -> [f32; HORIZON_STEPS] {
        let mut none_in_step = [1.0f32; HORIZON_STEPS];
        for handover in self.handovers.iter() {
            none_in_step[handover.step()] *= 1.0 - handover.probability;
        }
        let mut running = 0.0f32;
        none_in_step.map(|q| {
            running += 1.0 - q;
            running / CUMULATIVE_NORM
        })
    }

    /// The model input in `[1, 120, 2]` row-major order: for each step, the handover bit then
    /// the cumulative value ([`Forecast::cumulative`]).
    pub fn to_tensor(&self) -> [f32; 2 * HORIZON_STEPS] {
        self.steps.tensor_with(&self.cumulative())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits_with(at: &[usize]) -> Vec<u8> {
        let mut bits = vec![0u8; HORIZON_STEPS];
        for &k in at {
            bits[k] = 1;
        }
        bits
    }

    #[test]
    fn a_forecast_needs_exactly_120_steps() {
        let t0 = Instant::now();
        assert_eq!(
            Forecast::from_bits(ForecastSource::Trace, t0, &[0u8; 119]),
            Err(ForecastError::WrongLength(119))
        );
        assert_eq!(
            Forecast::from_bits(ForecastSource::Trace, t0, &[0u8; 121]),
            Err(ForecastError::WrongLength(121))
        );
        assert!(Forecast::from_bits(ForecastSource::Trace, t0, &[0u8; 120]).is_ok());
    }

    #[test]
    fn a_step_that_is_not_a_bit_is_refused_with_its_index() {
        let mut bits = bits_with(&[]);
        bits[17] = 2;
        let err = HandoverSteps::from_bits(&bits).unwrap_err();
        assert_eq!(
            err,
            ForecastError::NotABit {
                index: 17,
                value: "2".into()
            }
        );
        assert!(err.to_string().contains("handover[17] is 2"));
    }

    #[test]
    fn cumulative_counts_handovers_so_far_over_eight() {
        let steps = HandoverSteps::from_bits(&bits_with(&[0, 14, 29, 119])).unwrap();
        let c = steps.cumulative();
        assert_eq!(c[0], 0.125);
        assert_eq!(c[13], 0.125);
        assert_eq!(c[14], 0.25);
        assert_eq!(c[29], 0.375);
        assert_eq!(c[118], 0.375);
        assert_eq!(c[119], 0.5);
        assert_eq!(steps.count(), 4);
    }

    #[test]
    fn the_tensor_interleaves_handover_and_cumulative_per_step() {
        let steps = HandoverSteps::from_bits(&bits_with(&[1])).unwrap();
        let t = steps.to_tensor();
        assert_eq!(t.len(), TENSOR_SHAPE.iter().product::<usize>());
        assert_eq!(&t[0..6], &[0.0, 0.0, 1.0, 0.125, 0.0, 0.125]);
        assert_eq!(t[239], 0.125);
    }

    #[test]
    fn a_handover_falls_in_the_step_whose_right_edge_it_reaches() {
        let steps = HandoverSteps::from_offsets([
            Duration::from_millis(1),
            Duration::from_secs(1),
            Duration::from_millis(1001),
            Duration::from_secs(120),
        ])
        .unwrap();
        assert!(steps.is_handover(0));
        assert!(steps.is_handover(1));
        assert!(steps.is_handover(119));
        assert_eq!(steps.count(), 3);
        assert!(matches!(
            HandoverSteps::from_offsets([Duration::ZERO]),
            Err(ForecastError::OutsideHorizon { .. })
        ));
        assert!(matches!(
            HandoverSteps::from_offsets([Duration::from_millis(120_001)]),
            Err(ForecastError::OutsideHorizon { .. })
        ));
    }

    #[test]
    fn handover_steps_round_trip_through_json_and_refuse_bad_arrays() {
        let steps = HandoverSteps::from_bits(&bits_with(&[3, 60])).unwrap();
        let json = serde_json::to_string(&steps).unwrap();
        let back: HandoverSteps = serde_json::from_str(&json).unwrap();
        assert_eq!(back, steps);

        let err = serde_json::from_str::<HandoverSteps>("[0,1]").unwrap_err();
        assert!(err.to_string().contains("exactly 120"), "{err}");
        let mut bad = bits_with(&[])
            .iter()
            .map(|b| b.to_string())
            .collect::<Vec<_>>();
        bad[5] = "3".into();
        let err =
            serde_json::from_str::<HandoverSteps>(&format!("[{}]", bad.join(","))).unwrap_err();
        assert!(err.to_string().contains("handover[5] is 3"), "{err}");
    }

    #[test]
    fn a_stored_cumulative_channel_must_match_the_bits() {
        let steps = HandoverSteps::from_bits(&bits_with(&[10])).unwrap();
        let mut c = steps.cumulative().to_vec();
        assert!(steps.check_cumulative(&c).is_ok());
        c[50] = 0.0;
        assert!(matches!(
            steps.check_cumulative(&c),
            Err(ForecastError::InconsistentCumulative { index: 50, .. })
        ));
        c[50] = f32::NAN;
        assert!(steps.check_cumulative(&c).is_err());
    }

    #[test]
    fn source_tags_round_trip_and_unknown_tags_are_named() {
        for source in [
            ForecastSource::Mirror,
            ForecastSource::Orbital,
            ForecastSource::Hybrid,
            ForecastSource::Oracle,
            ForecastSource::Trace,
            ForecastSource::Calibrated,
            ForecastSource::None,
        ] {
            assert_eq!(source.as_str().parse::<ForecastSource>(), Ok(source));
        }
        let err = "crystal-ball".parse::<ForecastSource>().unwrap_err();
        assert!(err.to_string().contains("\"crystal-ball\""));
    }

    #[test]
    fn probable_handovers_set_bits_from_one_half_and_the_channel_counts_expected_steps() {
        let t0 = Instant::now();
        let at = |ms: u64, p: f32| PredictedHandover::new(Duration::from_millis(ms), p).unwrap();
        let f = Forecast::with_handovers(
            ForecastSource::Calibrated,
            t0,
            [at(30_500, 0.25), at(2_500, 0.5), at(15_500, 0.75)],
            HandoverTiming::SubSecond,
        )
        .unwrap();
        let offsets: Vec<u64> = f
            .handovers()
            .iter()
            .map(|h| h.offset.as_millis() as u64)
            .collect();
        assert_eq!(offsets, vec![2_500, 15_500, 30_500], "sorted by offset");
        assert_eq!(f.timing(), HandoverTiming::SubSecond);
        let steps: Vec<usize> = (0..120).filter(|&k| f.steps().is_handover(k)).collect();
        assert_eq!(steps, vec![2, 15], "0.25 stays below the bit threshold");
        let c = f.cumulative();
        assert_eq!(c[1], 0.0);
        assert_eq!(c[2], 0.5 / 8.0);
        assert_eq!(c[15], 1.25 / 8.0);
        assert_eq!(c[119], 1.5 / 8.0);
        assert_eq!(f.expected_count(), 1.5);
        assert_eq!(f.to_tensor()[2 * 15..2 * 15 + 2], [1.0, 1.25 / 8.0]);
        assert!(f.steps().check_expected_cumulative(&c).is_ok());
        assert!(matches!(
            f.steps().check_cumulative(&c),
            Err(ForecastError::InconsistentCumulative { index: 2, .. })
        ));
    }

    #[test]
    fn the_median_count_is_the_middle_of_the_poisson_binomial() {
        let t0 = Instant::now();
        let forecast = |p: f32, n: u32| {
            let handovers = (1..=n)
                .map(|k| PredictedHandover::new(Duration::from_secs(u64::from(k) * 15), p))
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
            Forecast::with_handovers(
                ForecastSource::Calibrated,
                t0,
                handovers,
                HandoverTiming::SubSecond,
            )
            .unwrap()
        };
        // Binomial(8, 0.74): P(X <= 5) = 0.35, P(X <= 6) = 0.66.
        assert_eq!(forecast(0.74, 8).median_count(), 6);
        // Binomial(8, 0.576): P(X <= 4) = 0.46, P(X <= 5) = 0.73.
        assert_eq!(forecast(0.576, 8).median_count(), 5);
        assert_eq!(forecast(1.0, 8).median_count(), 8);
        assert_eq!(forecast(0.0, 8).median_count(), 0);
        assert_eq!(Forecast::none(t0).median_count(), 0);
    }

    #[test]
    fn two_certain_handovers_in_one_step_count_that_step_once() {
        let t0 = Instant::now();
        let f = Forecast::from_offsets(
            ForecastSource::Oracle,
            t0,
            [Duration::from_millis(4_100), Duration::from_millis(4_900)],
            HandoverTiming::SubSecond,
        )
        .unwrap();
        assert_eq!(f.handovers().len(), 2);
        assert_eq!(f.cumulative(), f.steps().cumulative());
        assert!(f.steps().check_cumulative(&f.cumulative()).is_ok());
    }

    #[test]
    fn a_bad_probability_or_offset_is_refused_with_the_value() {
        let err = PredictedHandover::new(Duration::from_secs(3), 1.5).unwrap_err();
        assert_eq!(
            err,
            ForecastError::BadProbability {
                offset: Duration::from_secs(3),
                value: 1.5
            }
        );
        assert!(err.to_string().contains("probability 1.5"), "{err}");
        assert!(PredictedHandover::new(Duration::from_secs(3), f32::NAN).is_err());
        assert!(matches!(
            PredictedHandover::new(Duration::ZERO, 0.5),
            Err(ForecastError::OutsideHorizon { .. })
        ));
        assert!(matches!(
            PredictedHandover::new(Duration::from_millis(120_001), 0.5),
            Err(ForecastError::OutsideHorizon { .. })
        ));
        let err = serde_json::from_str::<PredictedHandover>(
            r#"{"offset":{"secs":3,"nanos":0},"probability":-0.1}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("probability -0.1"), "{err}");
    }

    #[test]
    fn forecasts_from_bits_and_instants_carry_certain_handovers() {
        let t0 = Instant::now();
        let f = Forecast::from_bits(ForecastSource::Mirror, t0, &bits_with(&[0, 119])).unwrap();
        assert_eq!(f.timing(), HandoverTiming::Step);
        assert_eq!(
            f.handovers(),
            &[
                PredictedHandover::certain(Duration::from_secs(1)).unwrap(),
                PredictedHandover::certain(Duration::from_secs(120)).unwrap()
            ]
        );
        let f = Forecast::from_instants(
            ForecastSource::Orbital,
            t0,
            [t0 + Duration::from_millis(11_250)],
        )
        .unwrap();
        assert_eq!(f.timing(), HandoverTiming::SubSecond);
        assert_eq!(f.handovers()[0].offset, Duration::from_millis(11_250));
        assert_eq!(f.handovers()[0].probability, 1.0);
        assert_eq!(Forecast::none(t0).timing(), HandoverTiming::Unknown);
    }

    #[test]
    fn an_expected_count_channel_is_checked_against_the_bits() {
        let steps = HandoverSteps::from_bits(&bits_with(&[10])).unwrap();
        let mut c = vec![0.0f32; 120];
        for v in &mut c[10..] {
            *v = 0.06;
        }
        assert!(matches!(
            steps.check_expected_cumulative(&c),
            Err(ForecastError::ImpossibleCumulative { index: 10, .. })
        ));
        for v in &mut c[10..] {
            *v = 0.08;
        }
        c[5..10].fill(0.01);
        assert!(steps.check_expected_cumulative(&c).is_ok());
        c[50] = 0.0;
        let err = steps.check_expected_cumulative(&c).unwrap_err();
        assert!(err.to_string().contains("never decreases"), "{err}");
        c[50] = 0.5;
        assert!(matches!(
            steps.check_expected_cumulative(&c),
            Err(ForecastError::ImpossibleCumulative { index: 50, .. })
        ));
        assert!(steps.check_expected_cumulative(&steps.cumulative()).is_ok());
    }

    #[test]
    fn the_terrestrial_forecast_is_all_zero_with_source_none() {
        let f = Forecast::none(Instant::now());
        assert_eq!(f.source(), ForecastSource::None);
        assert_eq!(f.handover_count(), 0);
        assert!(f.to_tensor().iter().all(|&x| x == 0.0));
    }
}

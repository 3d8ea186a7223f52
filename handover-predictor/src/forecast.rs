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
        "unknown forecast source {0:?}; expected one of mirror, orbital, hybrid, oracle, trace, none"
    )]
    UnknownSource(String),
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
            Self::None => "none",
        }
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
/// Only the bits are stored; the cumulative channel is always derived from them, so the two can
/// never disagree. Serialises as a JSON array of 0/1 and refuses anything else on the way in.
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

    /// The model input, flattened in `[1, 120, 2]` row-major order: for each step, the handover
    /// bit then the cumulative value.
    pub fn to_tensor(&self) -> [f32; 2 * HORIZON_STEPS] {
        let cumulative = self.cumulative();
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

/// A handover forecast for the 120 s after `t0` (docs/architecture.md, "The forecast contract").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forecast {
    source: ForecastSource,
    t0: Instant,
    steps: HandoverSteps,
}

impl Forecast {
    /// A forecast from validated steps.
    pub fn new(source: ForecastSource, t0: Instant, steps: HandoverSteps) -> Self {
        Self { source, t0, steps }
    }

    /// A forecast from 0/1 values, refusing a wrong length or any other value.
    pub fn from_bits<B: Copy + Into<u64>>(
        source: ForecastSource,
        t0: Instant,
        bits: &[B],
    ) -> Result<Self, ForecastError> {
        Ok(Self::new(source, t0, HandoverSteps::from_bits(bits)?))
    }

    /// A forecast with a handover at each instant, which must lie in `(t0, t0 + 120 s]`.
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
        Ok(Self::new(source, t0, HandoverSteps::from_offsets(offsets)?))
    }

    /// No handover information: the all-zero forecast with source `none`.
    pub fn none(t0: Instant) -> Self {
        Self::new(ForecastSource::None, t0, HandoverSteps::NONE)
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

    /// Handovers expected over the horizon.
    pub fn handover_count(&self) -> usize {
        self.steps.count()
    }

    /// The handover bit of each step.
    pub fn handover(&self) -> [u8; HORIZON_STEPS] {
        self.steps.bits()
    }

    /// The derived cumulative channel.
    pub fn cumulative(&self) -> [f32; HORIZON_STEPS] {
        self.steps.cumulative()
    }

    /// The model input in `[1, 120, 2]` row-major order (see [`HandoverSteps::to_tensor`]).
    pub fn to_tensor(&self) -> [f32; 2 * HORIZON_STEPS] {
        self.steps.to_tensor()
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
            ForecastSource::None,
        ] {
            assert_eq!(source.as_str().parse::<ForecastSource>(), Ok(source));
        }
        let err = "crystal-ball".parse::<ForecastSource>().unwrap_err();
        assert!(err.to_string().contains("\"crystal-ball\""));
    }

    #[test]
    fn the_terrestrial_forecast_is_all_zero_with_source_none() {
        let f = Forecast::none(Instant::now());
        assert_eq!(f.source(), ForecastSource::None);
        assert_eq!(f.handover_count(), 0);
        assert!(f.to_tensor().iter().all(|&x| x == 0.0));
    }
}

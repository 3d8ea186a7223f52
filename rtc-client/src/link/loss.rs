//! Random loss: Bernoulli, Gilbert-Elliott, or a per-step probability series.

use super::LinkConfigError;
use super::series::{LossSeries, check_probability, threshold};
use super::time::Time;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use std::sync::Arc;

/// The random-loss process of a link.
///
/// Loss is decided when a packet leaves the bottleneck (on the radio hop), so a lost packet has
/// used its share of capacity and buffer, as a packet lost over the air does. Decisions are drawn
/// in packet order from a ChaCha8 stream seeded by the link's seed, so a seed and a sequence of
/// sends give the same losses on every platform. Handover loss bursts and loss profiles draw
/// from a separate stream, so adding one does not change which packets the random process loses
/// elsewhere.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Loss {
    /// No random loss.
    #[default]
    None,
    /// Each packet is lost independently with `probability`.
    Bernoulli {
        /// Loss probability in [0, 1].
        probability: f64,
    },
    /// A two-state Markov chain over packets (bursty loss).
    GilbertElliott(GilbertElliott),
    /// A Bernoulli probability that varies in time (e.g. `lagos.csv`'s loss columns), read at
    /// the instant the packet leaves the bottleneck.
    Series(Arc<LossSeries>),
}

/// Gilbert-Elliott loss: a good and a bad state, each with its own loss probability, and
/// per-packet transitions.
///
/// For each packet that reaches the loss process: it is lost with the current state's
/// probability, then the state moves (good -> bad with `p_good_to_bad`, bad -> good with
/// `p_bad_to_good`). The chain starts in the good state. With `loss_good = 0` and
/// `loss_bad = 1` (Gilbert's original model) a loss burst lasts `1 / p_bad_to_good` packets on
/// average, and the long-run loss rate is [`GilbertElliott::stationary_loss_rate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GilbertElliott {
    /// Probability of moving from good to bad after a packet.
    pub p_good_to_bad: f64,
    /// Probability of moving from bad to good after a packet.
    pub p_bad_to_good: f64,
    /// Loss probability in the good state.
    pub loss_good: f64,
    /// Loss probability in the bad state.
    pub loss_bad: f64,
}

impl GilbertElliott {
    /// Gilbert's model: no loss in the good state, every packet lost in the bad one.
    pub fn gilbert(p_good_to_bad: f64, p_bad_to_good: f64) -> GilbertElliott {
        GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_good: 0.0,
            loss_bad: 1.0,
        }
    }

    /// Long-run fraction of packets in the bad state: `p_gb / (p_gb + p_bg)` (0 when both are 0,
    /// since the chain then stays good).
    pub fn stationary_bad(&self) -> f64 {
        let sum = self.p_good_to_bad + self.p_bad_to_good;
        if sum == 0.0 {
            0.0
        } else {
            self.p_good_to_bad / sum
        }
    }

    /// Long-run loss rate: `pi_bad * loss_bad + (1 - pi_bad) * loss_good`.
    pub fn stationary_loss_rate(&self) -> f64 {
        let bad = self.stationary_bad();
        bad * self.loss_bad + (1.0 - bad) * self.loss_good
    }

    /// Mean number of consecutive packets spent in the bad state: `1 / p_bad_to_good`.
    pub fn mean_bad_run(&self) -> f64 {
        1.0 / self.p_bad_to_good
    }

    fn check(&self) -> Result<(), LinkConfigError> {
        check_probability(self.p_good_to_bad, "Gilbert-Elliott p_good_to_bad")?;
        check_probability(self.p_bad_to_good, "Gilbert-Elliott p_bad_to_good")?;
        check_probability(self.loss_good, "Gilbert-Elliott loss_good")?;
        check_probability(self.loss_bad, "Gilbert-Elliott loss_bad")
    }
}

impl Loss {
    pub(crate) fn check(&self) -> Result<(), LinkConfigError> {
        match self {
            Loss::None | Loss::Series(_) => Ok(()),
            Loss::Bernoulli { probability } => check_probability(*probability, "loss probability"),
            Loss::GilbertElliott(ge) => ge.check(),
        }
    }

    /// The long-run loss probability (the series' mean sample for [`Loss::Series`]).
    pub fn mean_probability(&self) -> f64 {
        match self {
            Loss::None => 0.0,
            Loss::Bernoulli { probability } => *probability,
            Loss::GilbertElliott(ge) => ge.stationary_loss_rate(),
            Loss::Series(s) => s.values().iter().sum::<f64>() / s.values().len() as f64,
        }
    }
}

/// ChaCha stream numbers: one per random process of a link, so that the processes are
/// independent and each is reproducible on its own.
pub(crate) const STREAM_RANDOM_LOSS: u64 = 1;
/// Stream of the handover loss bursts and of the loss profiles.
pub(crate) const STREAM_BURST_LOSS: u64 = 2;

/// A seeded ChaCha8 generator on `stream`.
pub(crate) fn rng(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    r.set_stream(stream);
    r
}

/// The running random-loss process.
#[derive(Debug, Clone)]
pub(crate) enum LossState {
    None,
    Bernoulli {
        threshold: u128,
        rng: ChaCha8Rng,
    },
    GilbertElliott {
        /// Loss thresholds in the good and bad state.
        loss: [u128; 2],
        /// Transition thresholds out of the good and out of the bad state.
        leave: [u128; 2],
        bad: bool,
        rng: ChaCha8Rng,
    },
    Series {
        series: Arc<LossSeries>,
        rng: ChaCha8Rng,
    },
}

impl LossState {
    pub(crate) fn new(loss: &Loss, seed: u64) -> LossState {
        let rng = rng(seed, STREAM_RANDOM_LOSS);
        match loss {
            Loss::None => LossState::None,
            Loss::Bernoulli { probability } => LossState::Bernoulli {
                threshold: threshold(*probability),
                rng,
            },
            Loss::GilbertElliott(ge) => LossState::GilbertElliott {
                loss: [threshold(ge.loss_good), threshold(ge.loss_bad)],
                leave: [threshold(ge.p_good_to_bad), threshold(ge.p_bad_to_good)],
                bad: false,
                rng,
            },
            Loss::Series(series) => LossState::Series {
                series: Arc::clone(series),
                rng,
            },
        }
    }

    /// Whether the packet leaving the bottleneck at `t` is lost.
    #[inline]
    pub(crate) fn lose(&mut self, t: Time) -> bool {
        match self {
            LossState::None => false,
            LossState::Bernoulli { threshold, rng } => u128::from(rng.next_u64()) < *threshold,
            LossState::GilbertElliott {
                loss,
                leave,
                bad,
                rng,
            } => {
                let state = usize::from(*bad);
                let lost = u128::from(rng.next_u64()) < loss[state];
                if u128::from(rng.next_u64()) < leave[state] {
                    *bad = !*bad;
                }
                lost
            }
            LossState::Series { series, rng } => {
                u128::from(rng.next_u64()) < series.threshold_at(t)
            }
        }
    }
}

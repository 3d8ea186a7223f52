//! The crate's one seeded random-number generator: SplitMix64 (Steele, Lea and Flood, "Fast
//! splittable pseudorandom number generators", OOPSLA 2014; the constants of Vigna's reference
//! `splitmix64.c`). Small, well mixed and dependency-free; every seeded output of the crate (the
//! synthetic sky, the evaluation's perturbed catalogue) comes from it, so a seed means the same
//! thing everywhere and its outputs stay byte-identical across releases.

/// SplitMix64: a 64-bit state advanced by the golden-ratio increment, each output mixed by two
/// xor-shift-multiply rounds.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator whose first output is the mix of `seed` plus the increment.
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 uniformly distributed bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1): the top 53 bits of one output.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in (0, 1], never 0 (what [`SplitMix64::normal`] needs for its logarithm): the top
    /// 53 bits of one output plus half a unit of the last place. Above 1/2 the half unit is lost
    /// to rounding (to even), so that half of the range is the same grid as [`SplitMix64::unit`]'s
    /// and the largest draw rounds to 1; kept as it is, because seeded outputs must not change.
    pub(crate) fn positive_unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal, by the Box-Muller transform of two [`SplitMix64::positive_unit`] draws
    /// (the cosine branch only: one output per two draws).
    pub(crate) fn normal(&mut self) -> f64 {
        let (u, v) = (self.positive_unit(), self.positive_unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outputs_are_splitmix64s() {
        // The first outputs of the reference splitmix64.c seeded with 0.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn the_unit_draws_stay_in_their_intervals() {
        let ulp = 1.0 / (1u64 << 53) as f64;
        let (mut a, mut b) = (SplitMix64::new(3), SplitMix64::new(3));
        for _ in 0..10_000 {
            let (unit, positive) = (a.unit(), b.positive_unit());
            assert!((0.0..1.0).contains(&unit), "{unit}");
            assert!(positive > 0.0 && positive <= 1.0, "{positive}");
            // The same 53 bits, at most a unit of the last place apart.
            assert!((positive - unit).abs() <= ulp, "{unit} {positive}");
        }
    }

    #[test]
    fn normal_draws_have_unit_spread() {
        let mut rng = SplitMix64::new(7);
        let draws: Vec<f64> = (0..20_000).map(|_| rng.normal()).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        assert!(mean.abs() < 0.03, "{mean}");
        assert!((var - 1.0).abs() < 0.05, "{var}");
    }
}

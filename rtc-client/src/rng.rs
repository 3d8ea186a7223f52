//! Seeded random streams.
//!
//! Every random part of a call (each direction's capacity, the delay process, the handover
//! draws, the endpoints, the synthetic encoder) gets its own ChaCha8 stream, keyed by the scenario seed and a fixed
//! label. A part therefore draws the same numbers whatever the other parts do: adding a stall
//! process to the forward capacity does not move the reverse direction's values, and the same
//! seed gives the same call on every run.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// 64-bit FNV-1a of `label` (Fowler-Noll-Vo; offset basis 0xcbf29ce484222325, prime
/// 0x100000001b3): a stable, platform-independent key for a stream label.
pub fn fnv1a(label: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The stream for `label` under `seed`: the 32-byte ChaCha key is the seed, the label's hash,
/// and zeros (little-endian).
pub fn stream(seed: u64, label: &str) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&fnv1a(label).to_le_bytes());
    ChaCha8Rng::from_seed(key)
}

/// A uniform draw in the open interval (0, 1): 53 random bits, offset by half a step, so that
/// `ln` of it is always finite.
pub fn open01(rng: &mut impl Rng) -> f64 {
    ((rng.random::<u64>() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// A uniform draw in `[lo, hi)`.
pub fn uniform(rng: &mut impl Rng, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * open01(rng)
}

/// A standard normal draw (Box-Muller, cosine branch; one draw per two uniforms, so that the
/// stream position does not depend on a cached second value).
pub fn normal(rng: &mut impl Rng) -> f64 {
    let u1 = open01(rng);
    let u2 = open01(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A Bernoulli draw with probability `p`.
pub fn chance(rng: &mut impl Rng, p: f64) -> bool {
    open01(rng) < p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_with_different_labels_or_seeds_differ_and_repeat() {
        let a: Vec<u64> = (0..4).map(|_| stream(1, "a").random()).collect();
        let mut s = stream(1, "a");
        let again: Vec<u64> = (0..4).map(|_| s.random()).collect();
        assert_eq!(a[0], again[0]);
        assert_ne!(
            stream(1, "a").random::<u64>(),
            stream(1, "b").random::<u64>()
        );
        assert_ne!(
            stream(1, "a").random::<u64>(),
            stream(2, "a").random::<u64>()
        );
    }

    #[test]
    fn normal_draws_have_zero_mean_and_unit_variance() {
        let mut rng = stream(7, "normal");
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| normal(&mut rng)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.01, "{mean}");
        assert!((var - 1.0).abs() < 0.01, "{var}");
    }
}

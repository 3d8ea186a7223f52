//! The generated processes: capacity and delay series drawn from fitted parameters.
//!
//! All of them are plain numbers on a uniform grid (capacity per second, delay per 10 ms), drawn
//! from one seeded stream each ([`crate::rng`]); [`super::build`] turns them into the link's
//! series.
//!
//! # Capacity: log-normal AR(1)
//!
//! `log C_k = log m + c + x_k`, `x_k = rho x_{k-1} + sigma sqrt(1 - rho^2) e_k`, `x_0 = sigma e_0`,
//! `e` standard normal, `c = call_sigma_log * e_call` drawn once per call; `C_k` clamped to
//! `[min, max]`. The step is one second (terrestrial) or one Starlink slot (the capacity is
//! reallocated every 15 s, reference C1, and the LeoCC trace moves in 15-s steps); with slot
//! steps each second inside a slot is `C_k exp(s e - s^2 / 2)` with `s = within_sigma_log`
//! (mean-preserving). Optional stalls (terrestrial 5G) are a two-state Markov chain on seconds:
//! a normal second is followed by a stall with `enter_per_s`, a stall ends with `1 / mean_s`.
//!
//! Why log-normal AR(1): the measured per-step capacities are right-skewed and strictly
//! positive, their logs are close to symmetric, and consecutive steps are correlated (lag-1
//! autocorrelation of the logs 0.5-0.9 in every trace fitted); three numbers (median, log
//! spread, lag-1 autocorrelation) are what the traces can support.
//!
//! # Delay: slotted (Starlink)
//!
//! One-way delay on a 10-ms grid = base + jitter + spike:
//! - base: `median exp(y)`, clamped; `y` is redrawn at each handover as
//!   `y <- rho y + sigma sqrt(1 - rho^2) e` (and stays between handovers: a boundary without a
//!   handover keeps its satellite and its path). The two directions' innovations are correlated
//!   (`correlation`, set on the reverse direction): a new satellite changes both legs.
//! - jitter: AR(1) on the 10-ms grid with standard deviation `jitter_ms` and lag-1
//!   autocorrelation `jitter_rho`.
//! - spike: for `spike_duration_ms` after each handover, `+U(spike_min_ms, spike_max_ms)` (the
//!   boundary spikes of the LeoCC delay file and of `lagos.csv`).
//!
//! A constant delay with jitter is the same without base steps and spikes.

use super::schema::{LognormalSpec, SlottedDelaySpec, Step};
use crate::rng;
use rand::Rng;

/// Milliseconds per delay sample.
pub const DELAY_STEP_MS: u64 = 10;

/// Capacity per second, bit/s, for `seconds` seconds. `boundaries_s` are the seconds at which a
/// slot starts (used with [`Step::Slot`]; second 0 always starts one).
pub fn lognormal_capacity(
    spec: &LognormalSpec,
    rng: &mut impl Rng,
    seconds: usize,
    boundaries_s: &[u64],
) -> Vec<u64> {
    let call = spec.call_sigma_log * rng::normal(rng);
    let innovation = spec.sigma_log * (1.0 - spec.rho * spec.rho).sqrt();
    let mut x = spec.sigma_log * rng::normal(rng);
    let level = |x: f64| (spec.median_mbps * (call + x).exp()).clamp(spec.min_mbps, spec.max_mbps);
    let mut out = Vec::with_capacity(seconds);
    match spec.step {
        Step::Second => {
            let mut stalled = false;
            for s in 0..seconds {
                if s > 0 {
                    x = spec.rho * x + innovation * rng::normal(rng);
                }
                let mut mbps = level(x);
                if let Some(stall) = &spec.stall {
                    stalled = if stalled {
                        !rng::chance(rng, 1.0 / stall.mean_s)
                    } else {
                        s > 0 && rng::chance(rng, stall.enter_per_s)
                    };
                    if stalled {
                        mbps = stall.mbps;
                    }
                }
                out.push(mbps_to_bps(mbps));
            }
        }
        Step::Slot => {
            let w = spec.within_sigma_log;
            let mut next = boundaries_s.iter().copied().filter(|&b| b > 0).peekable();
            let mut slot_level = level(x);
            for s in 0..seconds as u64 {
                if next.peek() == Some(&s) {
                    next.next();
                    x = spec.rho * x + innovation * rng::normal(rng);
                    slot_level = level(x);
                }
                let mbps = if w > 0.0 {
                    (slot_level * (w * rng::normal(rng) - w * w / 2.0).exp())
                        .clamp(spec.min_mbps, spec.max_mbps)
                } else {
                    slot_level
                };
                out.push(mbps_to_bps(mbps));
            }
        }
    }
    out
}

/// Mbit/s to whole bit/s (at least 1).
pub fn mbps_to_bps(mbps: f64) -> u64 {
    ((mbps * 1e6).round() as u64).max(1)
}

/// AR(1) jitter on the 10-ms grid, ms, `samples` long, stationary from the first sample.
pub fn jitter(sd_ms: f64, rho: f64, rng: &mut impl Rng, samples: usize) -> Vec<f64> {
    if sd_ms == 0.0 {
        return vec![0.0; samples];
    }
    let innovation = sd_ms * (1.0 - rho * rho).sqrt();
    let mut j = sd_ms * rng::normal(rng);
    let mut out = Vec::with_capacity(samples);
    for i in 0..samples {
        if i > 0 {
            j = rho * j + innovation * rng::normal(rng);
        }
        out.push(j);
    }
    out
}

/// A constant delay with jitter, ms per 10-ms sample, floored at 0.
pub fn constant_delay(
    ms: f64,
    jitter_ms: f64,
    jitter_rho: f64,
    rng: &mut impl Rng,
    samples: usize,
) -> Vec<f64> {
    jitter(jitter_ms, jitter_rho, rng, samples)
        .into_iter()
        .map(|j| (ms + j).max(0.0))
        .collect()
}

/// Starlink delays for one or two directions, ms per 10-ms sample.
///
/// `handovers_ms` are the handover instants (sorted). `base_rng` draws the base innovations
/// (shared by both directions so that they can be correlated), `noise[i]` direction `i`'s jitter
/// and spikes. Returns one series per spec.
pub fn slotted_delays(
    specs: &[&SlottedDelaySpec],
    base_rng: &mut impl Rng,
    noise: &mut [&mut rand_chacha::ChaCha8Rng],
    handovers_ms: &[u64],
    samples: usize,
) -> Vec<Vec<f64>> {
    // Base levels: one log value per direction, redrawn at each handover.
    let segments = handovers_ms.len() + 1;
    let mut bases: Vec<Vec<f64>> = vec![Vec::with_capacity(segments); specs.len()];
    let mut y: Vec<f64> = vec![0.0; specs.len()];
    for k in 0..segments {
        let z_common = rng::normal(base_rng);
        for (d, spec) in specs.iter().enumerate() {
            let c = if d == 0 { 1.0 } else { spec.correlation };
            let z_own = if d == 0 { 0.0 } else { rng::normal(base_rng) };
            let e = c * z_common + (1.0 - c * c).max(0.0).sqrt() * z_own;
            y[d] = if k == 0 {
                spec.sigma_log * e
            } else {
                spec.rho * y[d] + spec.sigma_log * (1.0 - spec.rho * spec.rho).sqrt() * e
            };
            bases[d].push((spec.median_ms * y[d].exp()).clamp(spec.min_ms, spec.max_ms));
        }
    }
    let mut out = Vec::with_capacity(specs.len());
    for (d, spec) in specs.iter().enumerate() {
        let r = &mut *noise[d];
        let mut series = jitter(spec.jitter_ms, spec.jitter_rho, r, samples);
        // Base per sample.
        let mut segment = 0;
        for (i, v) in series.iter_mut().enumerate() {
            let t = i as u64 * DELAY_STEP_MS;
            while segment < handovers_ms.len() && handovers_ms[segment] <= t {
                segment += 1;
            }
            *v += bases[d][segment];
        }
        // Spikes.
        for &h in handovers_ms {
            let amplitude = rng::uniform(
                r,
                spec.spike_min_ms,
                spec.spike_max_ms.max(spec.spike_min_ms),
            );
            let first = h.div_ceil(DELAY_STEP_MS) as usize;
            let last = (h + u64::from(spec.spike_duration_ms)).div_ceil(DELAY_STEP_MS) as usize;
            for v in series.iter_mut().take(last.min(samples)).skip(first) {
                *v += amplitude;
            }
        }
        for v in &mut series {
            *v = v.max(0.0);
        }
        out.push(series);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::schema::StallSpec;

    fn spec(step: Step) -> LognormalSpec {
        LognormalSpec {
            step,
            median_mbps: 10.0,
            sigma_log: 0.5,
            rho: 0.8,
            call_sigma_log: 0.0,
            within_sigma_log: 0.0,
            min_mbps: 1.0,
            max_mbps: 100.0,
            stall: None,
        }
    }

    fn log_stats(v: &[u64]) -> (f64, f64, f64) {
        let l: Vec<f64> = v.iter().map(|&x| (x as f64).ln()).collect();
        let n = l.len() as f64;
        let mean = l.iter().sum::<f64>() / n;
        let var = l.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        let ac = l
            .windows(2)
            .map(|w| (w[0] - mean) * (w[1] - mean))
            .sum::<f64>()
            / (n - 1.0)
            / var;
        (mean, var.sqrt(), ac)
    }

    #[test]
    fn a_per_second_process_has_the_fitted_median_spread_and_autocorrelation() {
        let mut r = rng::stream(3, "t");
        let v = lognormal_capacity(&spec(Step::Second), &mut r, 200_000, &[]);
        let (mean, sd, ac) = log_stats(&v);
        assert!((mean - (10e6f64).ln()).abs() < 0.02, "{mean}");
        assert!((sd - 0.5).abs() < 0.02, "{sd}");
        assert!((ac - 0.8).abs() < 0.02, "{ac}");
        assert!(v.iter().all(|&x| (1_000_000..=100_000_000).contains(&x)));
    }

    #[test]
    fn a_slot_process_changes_only_at_boundaries() {
        let mut r = rng::stream(3, "t");
        let v = lognormal_capacity(&spec(Step::Slot), &mut r, 60, &[12, 27, 42, 57]);
        for s in 1..60u64 {
            let changed = v[s as usize] != v[s as usize - 1];
            assert_eq!(changed, [12, 27, 42, 57].contains(&s), "second {s}");
        }
    }

    #[test]
    fn stalls_take_the_fitted_share_of_seconds() {
        let mut s = spec(Step::Second);
        s.stall = Some(StallSpec {
            enter_per_s: 0.1,
            mean_s: 2.0,
            mbps: 0.5,
        });
        let mut r = rng::stream(4, "t");
        let v = lognormal_capacity(&s, &mut r, 100_000, &[]);
        let share = v.iter().filter(|&&x| x == 500_000).count() as f64 / v.len() as f64;
        // Stationary share: enter / (enter + exit) = 0.1 / (0.1 + 0.5).
        assert!((share - 1.0 / 6.0).abs() < 0.01, "{share}");
    }

    #[test]
    fn slotted_delay_steps_and_spikes_only_at_handovers() {
        let d = SlottedDelaySpec {
            median_ms: 80.0,
            sigma_log: 0.3,
            rho: 0.3,
            correlation: 0.0,
            min_ms: 20.0,
            max_ms: 300.0,
            jitter_ms: 0.0,
            jitter_rho: 0.0,
            spike_min_ms: 50.0,
            spike_max_ms: 50.0,
            spike_duration_ms: 100,
        };
        let mut base = rng::stream(1, "b");
        let mut n = rng::stream(1, "n");
        let out = slotted_delays(&[&d], &mut base, &mut [&mut n], &[12_000], 2_000);
        let s = &out[0];
        assert!(s[..1200].windows(2).all(|w| w[0] == w[1]));
        assert_eq!(s[1200] - s[1210], 50.0);
        assert!(s[1210..].windows(2).all(|w| w[0] == w[1]));
    }
}

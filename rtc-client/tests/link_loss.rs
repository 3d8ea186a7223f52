//! Seeded loss processes: reproducible, at their rate, with their burst lengths.

mod link_common;

use link_common::ms;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rtc_client::link::{
    Capacity, DropReason, GilbertElliott, HandoverEffect, HandoverEvent, Link, LinkConfig, Loss,
    LossSeries, SeriesEnd, Time, Verdict,
};
use std::time::Duration;

/// A fast link (so that no packet queues) with `loss`, sending `n` packets 1 ms apart.
fn run(loss: Loss, seed: u64, n: u64) -> Vec<Verdict> {
    let config = LinkConfig::new(Capacity::constant(1_000_000_000)).with_loss(loss);
    let mut link = Link::new(config, seed).unwrap();
    (0..n).map(|i| link.send(ms(i), 1200)).collect()
}

fn lost(verdicts: &[Verdict]) -> Vec<bool> {
    verdicts
        .iter()
        .map(|v| v.drop_reason() == Some(DropReason::RandomLoss))
        .collect()
}

#[test]
fn the_same_seed_loses_the_same_packets_and_another_seed_other_ones() {
    let loss = Loss::Bernoulli { probability: 0.1 };
    let a = run(loss.clone(), 42, 10_000);
    let b = run(loss.clone(), 42, 10_000);
    let c = run(loss, 43, 10_000);
    assert_eq!(a, b);
    assert_ne!(lost(&a), lost(&c));
}

#[test]
fn the_seed_fixes_the_loss_pattern_on_every_platform() {
    // ChaCha8 seeded with `seed_from_u64(7)` on stream 1 is a fixed sequence; these are the
    // first losses it gives at p = 0.1 (recorded on x86-64; any platform must reproduce them).
    let verdicts = run(Loss::Bernoulli { probability: 0.1 }, 7, 100);
    let first: Vec<usize> = lost(&verdicts)
        .iter()
        .enumerate()
        .filter_map(|(i, &l)| l.then_some(i))
        .collect();
    assert_eq!(first, [1, 4, 11, 12, 21, 33, 53, 73, 92, 99]);
    // The same pattern computed directly from the documented recipe: ChaCha8,
    // `seed_from_u64(seed)`, stream 1, one `u64` per packet, lost when below p * 2^64.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    rng.set_stream(1);
    let direct: Vec<usize> = (0..100)
        .filter(|_| (rng.next_u64() as f64) < 0.1 * 2f64.powi(64))
        .collect();
    assert_eq!(direct, first);
}

#[test]
fn bernoulli_loss_rate_is_within_five_standard_deviations_of_p() {
    let n = 100_000u64;
    let p = 0.1;
    let count = lost(&run(Loss::Bernoulli { probability: p }, 2024, n))
        .iter()
        .filter(|&&l| l)
        .count() as f64;
    let mean = n as f64 * p;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    assert!(
        (count - mean).abs() <= 5.0 * sd,
        "{count} losses, expected {mean} +- {}",
        5.0 * sd
    );
}

#[test]
fn probabilities_zero_and_one_lose_nothing_and_everything() {
    assert!(
        lost(&run(Loss::Bernoulli { probability: 0.0 }, 1, 1000))
            .iter()
            .all(|&l| !l)
    );
    assert!(
        lost(&run(Loss::Bernoulli { probability: 1.0 }, 1, 1000))
            .iter()
            .all(|&l| l)
    );
}

#[test]
fn gilbert_elliott_bursts_last_one_over_p_bad_to_good_packets_on_average() {
    let ge = GilbertElliott::gilbert(0.01, 0.25);
    assert_eq!(ge.mean_bad_run(), 4.0);
    let n = 400_000u64;
    let losses = lost(&run(Loss::GilbertElliott(ge), 99, n));
    let mut bursts = Vec::new();
    let mut run_len = 0u64;
    for &l in &losses {
        if l {
            run_len += 1;
        } else if run_len > 0 {
            bursts.push(run_len);
            run_len = 0;
        }
    }
    let k = bursts.len() as f64;
    let mean = bursts.iter().sum::<u64>() as f64 / k;
    // Burst lengths are geometric with p = 0.25: variance (1 - p) / p^2 = 12.
    let sd_of_mean = (12.0 / k).sqrt();
    assert!(
        (mean - 4.0).abs() <= 5.0 * sd_of_mean,
        "mean burst {mean} over {k} bursts, expected 4 +- {}",
        5.0 * sd_of_mean
    );
    // Bursts start at rate pi_good * p_gb = (0.25 / 0.26) * 0.01 per packet.
    let expected_bursts = n as f64 * (0.25 / 0.26) * 0.01;
    assert!(
        (k - expected_bursts).abs() <= 5.0 * expected_bursts.sqrt(),
        "{k} bursts, expected about {expected_bursts}"
    );
    let rate = losses.iter().filter(|&&l| l).count() as f64 / n as f64;
    assert!(
        (rate / ge.stationary_loss_rate() - 1.0).abs() < 0.1,
        "loss rate {rate}"
    );
}

#[test]
fn a_lost_packet_used_its_capacity_because_loss_happens_on_the_radio_hop() {
    // 12 Mbit/s, everything lost: each packet still occupies the bottleneck for 1 ms, so a
    // one-packet buffer refuses a second packet sent at the same instant.
    let config = LinkConfig::new(Capacity::constant(12_000_000))
        .with_loss(Loss::Bernoulli { probability: 1.0 })
        .with_buffer(rtc_client::link::Buffer::Packets(1));
    let mut link = Link::new(config, 1).unwrap();
    assert_eq!(
        link.send(Time::ZERO, 1500).drop_reason(),
        Some(DropReason::RandomLoss)
    );
    assert_eq!(
        link.send(Time::ZERO, 1500).drop_reason(),
        Some(DropReason::BufferFull)
    );
    assert_eq!(
        link.send(ms(1), 1500).drop_reason(),
        Some(DropReason::RandomLoss)
    );
}

#[test]
fn a_handover_loss_burst_does_not_change_which_packets_the_random_process_loses() {
    let loss = Loss::Bernoulli { probability: 0.2 };
    let plain = run(loss.clone(), 5, 1000);
    let config = LinkConfig::new(Capacity::constant(1_000_000_000))
        .with_loss(loss)
        .with_handovers(vec![HandoverEvent::new(
            ms(300),
            HandoverEffect::LossBurst {
                duration: Duration::from_millis(100),
                probability: 0.5,
            },
        )]);
    let mut link = Link::new(config, 5).unwrap();
    let with_burst: Vec<Verdict> = (0..1000).map(|i| link.send(ms(i), 1200)).collect();
    assert_eq!(lost(&plain), lost(&with_burst));
    let burst_lost: Vec<usize> = with_burst
        .iter()
        .enumerate()
        .filter(|(_, v)| v.drop_reason() == Some(DropReason::BurstLoss))
        .map(|(i, _)| i)
        .collect();
    assert!(!burst_lost.is_empty());
    assert!(
        burst_lost.iter().all(|&i| (300..400).contains(&i)),
        "{burst_lost:?}"
    );
}

#[test]
fn a_loss_series_applies_the_probability_of_the_step_the_packet_leaves_in() {
    let series =
        LossSeries::new(Duration::from_millis(100), vec![0.0, 1.0], SeriesEnd::Loop).unwrap();
    let losses = lost(&run(Loss::Series(series.into()), 3, 400));
    for (i, &l) in losses.iter().enumerate() {
        assert_eq!(l, (i / 100) % 2 == 1, "packet {i}");
    }
}

#[test]
fn out_of_range_probabilities_are_refused() {
    let config =
        LinkConfig::new(Capacity::constant(1)).with_loss(Loss::Bernoulli { probability: 1.5 });
    let err = Link::new(config, 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "loss probability: 1.5 is not a probability in [0, 1]"
    );
    let ge = GilbertElliott::gilbert(-0.1, 0.5);
    assert!(
        Link::new(
            LinkConfig::new(Capacity::constant(1)).with_loss(Loss::GilbertElliott(ge)),
            1
        )
        .is_err()
    );
}

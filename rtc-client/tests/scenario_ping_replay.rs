//! The ping-trace replays (`kind = "ping"` delay and loss) over the mmsys24 Starlink traces, as
//! docs/experiments/mmsys24/ uses them: each seed replays its own chunk of the trace on the slot
//! grid, the trace's reconfigurations fall on the scenario's boundaries, and the Lagos ISL
//! trace's losses 4-5 s after each reconfiguration stay there (skipped, with a message, when
//! `../shared/data` is absent).

mod scenario_support;

use rtc_client::link::readers::{PingLossModel, PingTrace};
use rtc_client::link::{Loss, Time};
use rtc_client::scenario::{Realization, Scenario};
use scenario_support as support;
use std::time::Duration;

const LAGOS: &str = "starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt";

fn realize(site: &str, seed: u64, seconds: u64) -> Realization {
    let paths = support::paths();
    let file = paths.root.join(format!(
        "docs/experiments/mmsys24/starlink-{site}-ping.toml"
    ));
    Scenario::load(&file.display().to_string(), &paths)
        .unwrap_or_else(|e| panic!("{site}: {e}"))
        .realize(seed, Duration::from_secs(seconds))
        .unwrap_or_else(|e| panic!("{site} seed {seed}: {e}"))
}

fn forward_loss_at(r: &Realization, ms: u64) -> f64 {
    let Loss::Series(loss) = &r.forward.loss else {
        panic!("a ping replay's forward loss is a series");
    };
    loss.at(Time::from_millis(ms))
}

#[test]
fn each_seed_replays_its_own_chunk_with_the_reconfigurations_on_the_boundaries() {
    if support::shared_data("the mmsys24 ping replays").is_none() {
        return;
    }
    for site in ["seattle", "lagos"] {
        let mut offsets = std::collections::BTreeSet::new();
        let (mut at_boundary, mut mid_slot, mut n) = (0.0, 0.0, 0.0);
        for seed in 0..12 {
            let r = realize(site, seed, 300);
            r.forward_link().unwrap();
            r.reverse_link().unwrap();
            let offset = r.replay_offset.expect("a [replay] table");
            assert_eq!(offset.as_millis() % 15_000, 0, "{site} seed {seed}");
            assert_eq!(
                realize(site, seed, 300).forward,
                r.forward,
                "{site} seed {seed}"
            );
            offsets.insert(offset);
            let delay = |ms: u64| r.forward.delay.at(Time::from_millis(ms)).as_secs_f64() * 1e3;
            // The mean over the half second after `ms` less the half second before it.
            let step = |ms: u64| {
                let after: f64 = (0..5).map(|k| delay(ms + 50 + 100 * k)).sum();
                let before: f64 = (1..6).map(|k| delay(ms + 50 - 100 * k)).sum();
                ((after - before) / 5.0).abs()
            };
            for &b in &r.timeline.boundaries_ms {
                if b < 1_000 || b + 8_000 > 300_000 {
                    continue;
                }
                at_boundary += step(b);
                mid_slot += step(b + 7_000);
                n += 1.0;
            }
        }
        assert!(offsets.len() >= 10, "{site}: 12 seeds drew {offsets:?}");
        // The RTT changes most at the reconfigurations (../shared/data/README.md: 2-4x).
        let (at_boundary, mid_slot) = (at_boundary / n, mid_slot / n);
        assert!(
            at_boundary > 1.5 * mid_slot,
            "{site}: the delay steps {at_boundary:.1} ms at a boundary and {mid_slot:.1} ms mid-slot"
        );
    }
}

#[test]
fn the_lagos_isl_losses_stay_4_to_5_s_after_each_reconfiguration() {
    let Some(data) = support::shared_data("the Lagos ISL ping replay's loss") else {
        return;
    };
    let trace = PingTrace::load(data.join(LAGOS)).unwrap();
    let (mut late, mut elsewhere, mut n) = (0.0, 0.0, 0.0);
    let mut mean = 0.0;
    for seed in 0..12 {
        let r = realize("lagos", seed, 600);
        for &b in &r.timeline.boundaries_ms {
            if b + 15_000 > 600_000 {
                continue;
            }
            late += (4_000..5_000)
                .step_by(100)
                .map(|d| forward_loss_at(&r, b + d + 50))
                .sum::<f64>()
                / 10.0;
            elsewhere += (6_000..14_000)
                .step_by(100)
                .map(|d| forward_loss_at(&r, b + d + 50))
                .sum::<f64>()
                / 80.0;
            n += 1.0;
        }
        mean += (0..6_000)
            .map(|k| forward_loss_at(&r, k * 100 + 50))
            .sum::<f64>()
            / 6_000.0;
    }
    let (late, elsewhere, mean) = (late / n, elsewhere / n, mean / 12.0);
    assert!(
        late > 5.0 * elsewhere && late > 0.02,
        "4-5 s after a boundary {late:.4}, mid-slot {elsewhere:.4}"
    );
    // Twelve 10-minute chunks of a 2.6-h trace whose rate drifts: the trace's 0.47 % within a
    // factor of two.
    let rate = trace.loss_rate();
    assert!(
        mean > rate / 2.0 && mean < rate * 2.0,
        "the replays lose {mean:.4} against the trace's {rate:.4}"
    );
}

#[test]
fn without_the_slot_shape_a_long_window_keeps_the_rate_and_a_short_one_heaps_it() {
    let Some(data) = support::shared_data("the ping replay's loss windows") else {
        return;
    };
    let trace = PingTrace::load(data.join(LAGOS)).unwrap();
    let series = |window_s: u64| {
        let replay = trace
            .replay(PingLossModel {
                window: Duration::from_secs(window_s),
                slot: None,
            })
            .unwrap();
        let loss = replay.loss();
        let rows = replay.duration().as_millis() as u64 / 100;
        (0..rows)
            .map(|k| loss.at(Time::from_millis(k * 100 + 50)))
            .collect::<Vec<f64>>()
    };
    let rate = trace.loss_rate();
    // A 1-s window heaps each lost echo into a second of heavy loss and doubles the rate (the
    // pinger waits longer after a lost echo); a minute's window keeps the rate within half and
    // no row loses a tenth.
    for (window_s, peak_above, peak_below, mean_below) in [(1, 0.2, 1.01, 3.0), (60, 0.0, 0.1, 1.5)]
    {
        let rows = series(window_s);
        let mean = rows.iter().sum::<f64>() / rows.len() as f64;
        let peak = rows.iter().copied().fold(0.0, f64::max);
        assert!(
            mean > rate * 0.8 && mean < rate * mean_below,
            "{window_s}-s window: mean {mean:.4} against the trace's {rate:.4}"
        );
        assert!(
            peak > peak_above && peak < peak_below,
            "{window_s}-s window: the lossiest row loses {peak:.3}"
        );
    }
}

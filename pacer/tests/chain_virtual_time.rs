//! The pacer inside a real webrtc-rs chain (`CongestionControl(Gcc)` + `TwccSender` on the sender,
//! `TwccReceiver` on the receiver), driven in virtual time over a simulated bottleneck.

mod harness;

use harness::{LimitChange, PacerUnderTest, PathConfig, run};
use pacer::PacingConfig;
use std::time::Duration;

const CAPACITY_BPS: u64 = 1_500_000;

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// 1.5 Mbit/s, 30 ms each way, a 300-ms drop-tail buffer.
fn path(outage: Option<(Duration, Duration)>) -> PathConfig {
    PathConfig {
        capacity_bps: CAPACITY_BPS,
        one_way: ms(30),
        buffer: ms(300),
        outage,
    }
}

fn ours() -> PacerUnderTest {
    PacerUnderTest::HandoverAware(PacingConfig::default())
}

#[test]
fn gcc_converges_behind_the_handover_aware_pacer_as_it_does_behind_the_stock_pacer() {
    let stock = run(PacerUnderTest::Stock, path(None), &[], secs(40));
    let ours = run(ours(), path(None), &[], secs(40));

    let (stock_target, our_target) = (
        stock.mean_target(secs(20), secs(40)),
        ours.mean_target(secs(20), secs(40)),
    );
    assert!(
        (our_target / stock_target - 1.0).abs() <= 0.15,
        "mean target 20-40 s: ours {our_target:.0}, stock {stock_target:.0}"
    );
    let goodput = ours.goodput(secs(20), secs(40));
    assert!(
        goodput >= 0.9 * CAPACITY_BPS as f64,
        "goodput 20-40 s {goodput:.0} bit/s on a {CAPACITY_BPS} bit/s path"
    );
    assert!(ours.packets.iter().all(|p| p.released >= p.enqueued));
    assert_eq!(
        ours.stale_deadlines, 0,
        "the pacer asked to be woken at or before an instant already handled"
    );
}

#[test]
fn the_same_call_gives_the_same_release_and_arrival_schedule() {
    let first = run(ours(), path(Some((secs(5), secs(6)))), &[], secs(10));
    let second = run(ours(), path(Some((secs(5), secs(6)))), &[], secs(10));
    assert!(first.packets.len() > 500);
    assert_eq!(first.packets, second.packets);
    assert_eq!(first.targets, second.targets);
}

#[test]
fn after_an_outage_the_limit_set_through_the_handle_bounds_the_pacer_delay() {
    let outage = Some((secs(20), secs(21)));
    let change = |limit| {
        [LimitChange {
            at: secs(20),
            limit,
        }]
    };
    let short = run(ours(), path(outage), &change(ms(500)), secs(40));
    let long = run(ours(), path(outage), &change(ms(4000)), secs(40));

    let before = |r: &harness::Run| -> Vec<harness::PacketTrace> {
        r.packets
            .iter()
            .filter(|p| p.released < secs(20))
            .copied()
            .collect()
    };
    assert_eq!(
        before(&short),
        before(&long),
        "the two calls are the same until the limit changes"
    );

    let short_delay = short.max_pacer_delay_after(secs(20));
    let long_delay = long.max_pacer_delay_after(secs(20));
    assert!(
        short_delay <= ms(500),
        "with a 500-ms limit a packet waited {short_delay:?}"
    );
    assert!(
        long_delay > 2 * short_delay,
        "with a 4000-ms limit the longest wait was {long_delay:?}, with 500 ms {short_delay:?}"
    );

    let (_, short_stats) = short.pacer_stats.last().expect("stats were sampled");
    let (_, long_stats) = long.pacer_stats.last().expect("stats were sampled");
    assert_eq!(short_stats.queue_time_limit, ms(500));
    assert_eq!(long_stats.queue_time_limit, ms(4000));
    assert!(
        short_stats.drain_boost_time > long_stats.drain_boost_time,
        "boost {:?} (500 ms) vs {:?} (4000 ms)",
        short_stats.drain_boost_time,
        long_stats.drain_boost_time
    );
}

//! Invariants of the link under arbitrary traffic and timelines (proptest), and a replay of a
//! realistic Starlink link that must be reproducible from its seed.

mod link_common;

use link_common::data_file;
use proptest::prelude::*;
use rtc_client::link::readers::read_leoreplayer_delay;
use rtc_client::link::{
    Buffer, Capacity, CapacityChange, Delay, DelayChange, GilbertElliott, HandoverEffect,
    HandoverEvent, Link, LinkConfig, Loss, MahimahiTrace, OutageMode, Time, Verdict,
};
use std::sync::Arc;
use std::time::Duration;

fn effect() -> impl Strategy<Value = HandoverEffect> {
    prop_oneof![
        (0u64..200, any::<bool>()).prop_map(|(ms, drop)| HandoverEffect::Outage {
            duration: Duration::from_millis(ms),
            mode: if drop {
                OutageMode::Drop
            } else {
                OutageMode::Hold
            },
        }),
        (0u64..50, proptest::option::of(0u64..500)).prop_map(|(ms, d)| {
            HandoverEffect::DelayStep {
                change: DelayChange::Add(Duration::from_millis(ms)),
                duration: d.map(Duration::from_millis),
            }
        }),
        (0u64..500, 0.0f64..=1.0).prop_map(|(ms, p)| HandoverEffect::LossBurst {
            duration: Duration::from_millis(ms),
            probability: p,
        }),
        (0.0f64..3.0, proptest::option::of(1u64..500)).prop_map(|(f, d)| {
            HandoverEffect::CapacityChange {
                change: CapacityChange::Scale(f),
                duration: d.map(Duration::from_millis),
            }
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_packet_is_delivered_no_earlier_than_sent_in_order_and_counted_once(
        gaps_us in proptest::collection::vec(0u64..3000, 1..400),
        sizes in proptest::collection::vec(1u32..3000, 400),
        events in proptest::collection::vec((0u64..2000, effect()), 0..8),
        buffer_packets in 1u64..50,
        rate in 1_000_000u64..50_000_000,
        seed in any::<u64>(),
    ) {
        let handovers = events
            .into_iter()
            .map(|(ms, e)| HandoverEvent::new(Time::from_millis(ms), e))
            .collect();
        let config = LinkConfig::new(Capacity::constant(rate))
            .with_buffer(Buffer::Packets(buffer_packets))
            .with_delay(Delay::constant(Duration::from_millis(5)))
            .with_loss(Loss::GilbertElliott(GilbertElliott::gilbert(0.05, 0.3)))
            .with_handovers(handovers);
        let mut link = Link::new(config, seed).unwrap();
        let mut now = Time::ZERO;
        let mut last_delivery = Time::ZERO;
        for (gap, &size) in gaps_us.iter().zip(&sizes) {
            now += Duration::from_micros(*gap);
            match link.send(now, size) {
                Verdict::Delivered { at } => {
                    prop_assert!(at >= now + Duration::from_millis(5));
                    prop_assert!(at >= last_delivery);
                    last_delivery = at;
                }
                Verdict::Dropped { .. } => {}
            }
            prop_assert!(link.backlog(now).packets <= buffer_packets);
        }
        let t = link.stats().totals();
        prop_assert_eq!(t.entered_packets, gaps_us.len() as u64);
        prop_assert_eq!(t.entered_packets, t.delivered_packets + t.dropped.total());
        let binned: u64 = link.stats().seconds().iter().map(|s| s.delivered_packets).sum();
        prop_assert_eq!(binned, t.delivered_packets);
    }

    #[test]
    fn a_saturated_link_never_delivers_more_than_it_offered(
        rate in 1_000_000u64..100_000_000,
        n in 1usize..2000,
        size in 1u32..1500,
    ) {
        let mut link = Link::new(LinkConfig::new(Capacity::constant(rate)), 0).unwrap();
        let mut last = Time::ZERO;
        for _ in 0..n {
            if let Verdict::Delivered { at } = link.send(Time::ZERO, size) {
                last = at;
            }
        }
        let offered = link.offered_bits(Time::ZERO, last + Duration::from_nanos(1));
        prop_assert!(n as u64 * u64::from(size) * 8 <= offered + 1);
        // And not less than the capacity minus one nanosecond's rounding.
        let before = link.offered_bits(Time::ZERO, last - Duration::from_nanos(1));
        prop_assert!(n as u64 * u64::from(size) * 8 > before);
    }
}

/// The realistic link of the benchmark: LeoCC capacity and delay, Gilbert-Elliott loss, and a
/// handover at every 15-s slot boundary (second 12 of the call's minute grid, then every 15 s)
/// with a 40-ms hold outage, a delay step and a short loss burst.
fn starlink_link(seed: u64) -> Option<Link> {
    let trace =
        Arc::new(MahimahiTrace::load(data_file("starlink/leocc/bw_example.mahimahi")?).ok()?);
    let delay = read_leoreplayer_delay(data_file("starlink/leocc/delay_example_10ms.txt")?).ok()?;
    let mut handovers = Vec::new();
    for k in 0..8u64 {
        let at = Time::from_secs(12 + 15 * k);
        handovers.push(HandoverEvent::new(
            at,
            HandoverEffect::Outage {
                duration: Duration::from_millis(40),
                mode: OutageMode::Hold,
            },
        ));
        handovers.push(HandoverEvent::new(
            at,
            HandoverEffect::DelayStep {
                change: DelayChange::Add(Duration::from_millis(10 * (k % 3))),
                duration: Some(Duration::from_secs(15)),
            },
        ));
        handovers.push(HandoverEvent::new(
            at,
            HandoverEffect::LossBurst {
                duration: Duration::from_millis(100),
                probability: 0.3,
            },
        ));
    }
    let config = LinkConfig::new(Capacity::mahimahi(trace))
        .with_buffer(Buffer::Bytes(375_000))
        .with_delay(Delay::series(delay))
        .with_loss(Loss::GilbertElliott(GilbertElliott {
            p_good_to_bad: 0.002,
            p_bad_to_good: 0.5,
            loss_good: 0.0,
            loss_bad: 0.5,
        }))
        .with_handovers(handovers);
    Link::new(config, seed).ok()
}

/// 120 s of a 60 Mbit/s sender (above the trace's 48.7 Mbit/s mean) in 1200-byte packets.
fn replay(link: &mut Link) -> Vec<Verdict> {
    let gap = Duration::from_nanos(1200 * 8 * 1_000_000_000 / 60_000_000);
    let mut now = Time::ZERO;
    let mut out = Vec::new();
    while now < Time::from_secs(120) {
        out.push(link.send(now, 1200));
        now += gap;
    }
    out
}

#[test]
fn a_realistic_starlink_link_replays_identically_from_its_seed() {
    let (Some(mut a), Some(mut b), Some(mut c)) =
        (starlink_link(11), starlink_link(11), starlink_link(12))
    else {
        return;
    };
    let va = replay(&mut a);
    assert_eq!(va, replay(&mut b));
    assert_ne!(va, replay(&mut c));
    let t = a.stats().totals();
    assert_eq!(t.entered_packets, t.delivered_packets + t.dropped.total());
    assert!(t.dropped.buffer_full > 0 && t.dropped.random_loss > 0 && t.dropped.burst_loss > 0);
    assert_eq!(a.applied_handover_instants().len(), 8);
    // Delivered never exceeds offered over the run.
    let offered = a.offered_bits(Time::ZERO, Time::from_secs(121));
    assert!(t.delivered_bytes * 8 <= offered);
    eprintln!(
        "realistic link, 120 s at 60 Mbit/s offered load: {} sent, {} delivered ({:.2} Mbit/s), drops {:?}, mean one-way delay {:?}",
        t.entered_packets,
        t.delivered_packets,
        t.delivered_bytes as f64 * 8.0 / 120e6,
        t.dropped,
        t.mean_delay()
    );
}

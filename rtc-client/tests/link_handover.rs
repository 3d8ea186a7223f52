//! Handover events: outages drop or hold what they should, delay steps shift delivery,
//! capacity changes change the service, loss bursts and profiles lose what leaves during them,
//! and the link reports the instants it applied.

mod link_common;

use link_common::{delivered, ms, us};
use rtc_client::link::{
    Capacity, CapacityChange, Delay, DelayChange, DropReason, HandoverEffect, HandoverEvent,
    InstantLink, Link, LinkConfig, LossProfile, MahimahiTrace, OutageMode, Time, Verdict,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn outage(at: u64, length_ms: u64, mode: OutageMode) -> HandoverEvent {
    HandoverEvent::new(
        ms(at),
        HandoverEffect::Outage {
            duration: Duration::from_millis(length_ms),
            mode,
        },
    )
}

/// 12 Mbit/s (1 ms per 1500-byte packet), no delay, with `events`.
fn link(events: Vec<HandoverEvent>) -> Link {
    Link::new(
        LinkConfig::new(Capacity::constant(12_000_000)).with_handovers(events),
        1,
    )
    .unwrap()
}

#[test]
fn a_drop_outage_drops_exactly_the_packets_entering_during_it() {
    let mut link = link(vec![outage(100, 50, OutageMode::Drop)]);
    // One packet every 2 ms from 0 to 198 ms.
    for i in 0..100u64 {
        let t = ms(2 * i);
        let v = link.send(t, 1500);
        if (100..150).contains(&(2 * i)) {
            assert_eq!(
                v,
                Verdict::Dropped {
                    reason: DropReason::Outage
                },
                "sent at {t}"
            );
        } else {
            assert_eq!(v, Verdict::Delivered { at: ms(2 * i + 1) }, "sent at {t}");
        }
    }
    assert_eq!(link.stats().totals().dropped.outage, 25);
}

#[test]
fn a_packet_in_transmission_when_an_outage_starts_finishes_after_it() {
    let mut link = link(vec![outage(100, 50, OutageMode::Drop)]);
    // Sent at 99.5 ms: half is serialised before the outage, half after it.
    assert_eq!(delivered(link.send(us(99_500), 1500)), us(150_500));
    // Queued behind it before the outage: served next, not dropped.
    assert_eq!(delivered(link.send(us(99_900), 1500)), us(151_500));
}

#[test]
fn a_hold_outage_queues_the_packets_entering_during_it_and_delivers_them_right_after() {
    let mut link = link(vec![outage(100, 50, OutageMode::Hold)]);
    let mut at = Vec::new();
    for i in 0..30u64 {
        at.push(delivered(link.send(ms(96 + 2 * i), 1500)));
    }
    // 96 and 98 ms pass before the outage; the 25 packets sent during it leave back to back
    // from its end (151, 152, ..., 175 ms); the ones sent after it queue behind them.
    let mut expected = vec![ms(97), ms(99)];
    expected.extend((1..=25).map(|k| ms(150 + k)));
    expected.extend([ms(176), ms(177), ms(178)]);
    assert_eq!(at, expected);
    assert_eq!(link.stats().totals().dropped.total(), 0);
    assert_eq!(link.outage_at(ms(120)), Some(OutageMode::Hold));
    assert_eq!(link.outage_at(ms(150)), None);
    assert_eq!(link.capacity_bps_at(ms(149)), Some(0));
}

#[test]
fn a_delay_step_shifts_delivery_while_it_lasts() {
    let config = LinkConfig::new(Capacity::constant(12_000_000))
        .with_delay(Delay::constant(Duration::from_millis(20)))
        .with_handovers(vec![HandoverEvent::new(
            Time::from_secs(1),
            HandoverEffect::DelayStep {
                change: DelayChange::Add(Duration::from_millis(30)),
                duration: Some(Duration::from_secs(1)),
            },
        )]);
    let mut link = Link::new(config, 1).unwrap();
    assert_eq!(delivered(link.send(ms(500), 1500)), ms(521));
    // Leaves the bottleneck at exactly 1 s: the step applies.
    assert_eq!(delivered(link.send(ms(999), 1500)), ms(1050));
    assert_eq!(delivered(link.send(ms(1500), 1500)), ms(1551));
    assert_eq!(delivered(link.send(ms(2500), 1500)), ms(2521));
    assert_eq!(link.delay_at(ms(1999)), Duration::from_millis(50));
    assert_eq!(link.delay_at(ms(2000)), Duration::from_millis(20));
}

#[test]
fn packets_are_not_reordered_across_a_downward_delay_step_unless_allowed() {
    let step_down = vec![HandoverEvent::new(
        ms(10),
        HandoverEffect::DelayStep {
            change: DelayChange::Set(Duration::from_millis(5)),
            duration: None,
        },
    )];
    let config = LinkConfig::new(Capacity::constant(12_000_000))
        .with_delay(Delay::constant(Duration::from_millis(40)))
        .with_handovers(step_down);
    let mut fifo = Link::new(config.clone(), 1).unwrap();
    assert_eq!(delivered(fifo.send(ms(8), 1500)), ms(49));
    // Leaves the bottleneck at 11 ms with 5 ms of delay (16 ms), but may not overtake.
    assert_eq!(delivered(fifo.send(ms(10), 1500)), ms(49));
    let mut reordering = Link::new(config.with_reordering(true), 1).unwrap();
    assert_eq!(delivered(reordering.send(ms(8), 1500)), ms(49));
    assert_eq!(delivered(reordering.send(ms(10), 1500)), ms(16));
}

#[test]
fn a_capacity_change_to_a_rate_serves_at_that_rate_for_its_duration() {
    let mut link = link(vec![HandoverEvent::new(
        ms(10),
        HandoverEffect::CapacityChange {
            change: CapacityChange::Rate(24_000_000),
            duration: Some(Duration::from_millis(10)),
        },
    )]);
    assert_eq!(delivered(link.send(ms(0), 1500)), ms(1));
    assert_eq!(delivered(link.send(ms(10), 1500)), us(10_500));
    assert_eq!(delivered(link.send(ms(25), 1500)), ms(26));
    assert_eq!(link.offered_bits(ms(0), ms(30)), 20 * 12_000 + 10 * 24_000);
    assert_eq!(link.capacity_bps_at(ms(15)), Some(24_000_000));
    assert_eq!(link.capacity_bps_at(ms(20)), Some(12_000_000));
}

#[test]
fn halving_a_mahimahi_trace_makes_each_packet_take_two_opportunities() {
    let trace = Arc::new(MahimahiTrace::from_millis("every-ms", 1..=100).unwrap());
    let config =
        LinkConfig::new(Capacity::mahimahi(trace)).with_handovers(vec![HandoverEvent::new(
            Time::ZERO,
            HandoverEffect::CapacityChange {
                change: CapacityChange::Scale(0.5),
                duration: None,
            },
        )]);
    let mut link = Link::new(config, 1).unwrap();
    let at: Vec<Time> = (0..4)
        .map(|_| delivered(link.send(Time::ZERO, 1500)))
        .collect();
    assert_eq!(at, [ms(2), ms(4), ms(6), ms(8)]);
}

#[test]
fn zero_capacity_for_good_drops_packets_as_never_served() {
    let mut link = link(vec![HandoverEvent::new(
        ms(5),
        HandoverEffect::CapacityChange {
            change: CapacityChange::Scale(0.0),
            duration: None,
        },
    )]);
    // Finishes exactly when the capacity goes.
    assert_eq!(delivered(link.send(ms(4), 1500)), ms(5));
    assert_eq!(
        link.send(us(4_500), 1500),
        Verdict::Dropped {
            reason: DropReason::NoCapacity
        }
    );
}

#[test]
fn a_loss_burst_loses_the_packets_leaving_the_bottleneck_during_it() {
    let mut link = link(vec![HandoverEvent::new(
        ms(100),
        HandoverEffect::LossBurst {
            duration: Duration::from_millis(20),
            probability: 1.0,
        },
    )]);
    for i in 0..100u64 {
        let v = link.send(ms(2 * i), 1500);
        // Leaves at 2i + 1 ms.
        let lost = (100..120).contains(&(2 * i + 1));
        assert_eq!(
            v.drop_reason() == Some(DropReason::BurstLoss),
            lost,
            "packet {i}"
        );
    }
    assert_eq!(link.stats().totals().dropped.burst_loss, 10);
    assert_eq!(link.burst_loss_probability_at(ms(119)), 1.0);
}

/// Which of 100 packets sent every 2 ms from 0 (each leaving 1 ms later) `link` loses to bursts.
fn burst_losses(link: &mut Link) -> Vec<u64> {
    (0..100u64)
        .filter(|&i| link.send(ms(2 * i), 1500).drop_reason() == Some(DropReason::BurstLoss))
        .map(|i| 2 * i + 1)
        .collect()
}

#[test]
fn a_loss_profile_loses_with_each_steps_probability_from_the_handover() {
    let profile = LossProfile::new(Duration::from_millis(20), vec![1.0, 0.0, 1.0]).unwrap();
    let mut link = link(vec![HandoverEvent::new(
        ms(100),
        HandoverEffect::LossProfile(profile),
    )]);
    let expected: Vec<u64> = (101..120).step_by(2).chain((141..160).step_by(2)).collect();
    assert_eq!(burst_losses(&mut link), expected);
    assert_eq!(link.burst_loss_probability_at(ms(130)), 0.0);
    assert_eq!(link.handover_instants(), [ms(100)]);
}

#[test]
fn a_boundary_loss_loses_like_a_handovers_but_is_no_handover_instant() {
    let profile = LossProfile::new(Duration::from_millis(20), vec![1.0]).unwrap();
    let mut link = Link::new(
        LinkConfig::new(Capacity::constant(12_000_000))
            .with_boundary_losses(vec![(ms(100), profile)]),
        1,
    )
    .unwrap();
    assert_eq!(
        burst_losses(&mut link),
        (101..120).step_by(2).collect::<Vec<_>>()
    );
    assert!(link.handover_instants().is_empty());
    assert!(!link.report()[0].handover);
}

#[test]
fn the_link_reports_the_distinct_handover_instants_and_those_applied_so_far() {
    let mut events = Vec::new();
    for s in [12u64, 27, 42] {
        events.push(outage(s * 1000, 20, OutageMode::Hold));
        events.push(HandoverEvent::new(
            Time::from_secs(s),
            HandoverEffect::DelayStep {
                change: DelayChange::Add(Duration::from_millis(10)),
                duration: None,
            },
        ));
    }
    events.reverse(); // any order
    let mut link = link(events);
    let all = [
        Time::from_secs(12),
        Time::from_secs(27),
        Time::from_secs(42),
    ];
    assert_eq!(link.handover_instants(), all);
    assert!(link.applied_handover_instants().is_empty());
    link.send(Time::from_secs(30), 100);
    assert_eq!(link.applied_handover_instants(), &all[..2]);
    assert_eq!(
        link.handover_instants_between(Time::from_secs(20), Time::from_secs(42)),
        &all[1..2]
    );
    let report = link.report();
    assert_eq!(report.len(), 31);
    assert!(report[27].handover && !report[28].handover);
    assert_eq!(report[30].base_delay_ms, 20.0);
}

#[test]
fn a_send_earlier_than_the_previous_one_is_treated_as_simultaneous() {
    let mut link = link(Vec::new());
    assert_eq!(delivered(link.send(ms(10), 1500)), ms(11));
    assert_eq!(delivered(link.send(ms(5), 1500)), ms(12));
    assert_eq!(link.now(), ms(10));
}

#[test]
fn an_instant_driven_link_gives_the_same_verdicts_as_the_virtual_time_one() {
    let events = vec![outage(3, 2, OutageMode::Drop)];
    let mut virtual_link = link(events.clone());
    let epoch = Instant::now();
    let mut real = InstantLink::new(link(events), epoch);
    for i in 0..10u64 {
        let v = virtual_link.send(ms(i), 1500);
        let r = real.send(epoch + Duration::from_millis(i), 1500);
        assert_eq!(r, v.map(|t| t.to_instant(epoch)));
    }
    assert_eq!(real.link().stats(), virtual_link.stats());
}

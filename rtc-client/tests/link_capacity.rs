//! The bottleneck delivers exactly what its capacity process offers.

mod link_common;

use link_common::{constant_link, data_file, delivered, ms, us};
use rtc_client::link::{
    Capacity, Delay, Link, LinkConfig, MahimahiTrace, RateSeries, SeriesEnd, Time, Verdict,
};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn a_constant_link_delivers_1500_byte_packets_exactly_1_ms_apart_at_12_mbit_s() {
    let mut link = constant_link(12_000_000);
    for i in 0..1000u64 {
        assert_eq!(
            link.send(Time::ZERO, 1500),
            Verdict::Delivered { at: ms(i + 1) }
        );
    }
    let totals = link.stats().totals();
    assert_eq!(totals.delivered_bytes, 1_500_000);
    assert_eq!(link.stats().seconds()[0].delivered_bytes, 1_500_000 - 1500);
    assert_eq!(link.stats().seconds()[1].delivered_bytes, 1500);
}

#[test]
fn a_saturated_constant_link_delivers_exactly_its_rate_even_when_a_packet_takes_a_fractional_nanosecond()
 {
    // 1500 B at 7 Mbit/s is 1 714 285.714... ns; 7000 packets are exactly 12 s of capacity.
    let mut link = constant_link(7_000_000);
    let mut last = Time::ZERO;
    for _ in 0..7000 {
        last = delivered(link.send(Time::ZERO, 1500));
    }
    assert_eq!(last, Time::from_secs(12));
}

#[test]
fn a_paced_flow_below_capacity_waits_only_for_serialisation_and_propagation() {
    let config = LinkConfig::new(Capacity::constant(12_000_000))
        .with_delay(Delay::constant(Duration::from_millis(20)));
    let mut link = Link::new(config, 7).unwrap();
    for i in 0..100u64 {
        let at = delivered(link.send(ms(2 * i), 1500));
        assert_eq!(at, ms(2 * i + 1 + 20));
    }
    let totals = link.stats().totals();
    assert_eq!(totals.mean_delay(), Some(Duration::from_millis(21)));
    assert_eq!(totals.max_queue_packets, 1);
}

#[test]
fn small_packets_serialise_in_proportion_to_their_size_on_a_fluid_link() {
    let mut link = constant_link(8_000_000); // 1 byte per microsecond
    assert_eq!(delivered(link.send(Time::ZERO, 100)), us(100));
    assert_eq!(delivered(link.send(Time::ZERO, 1400)), us(1500));
    assert_eq!(delivered(link.send(us(2000), 1)), us(2001));
}

#[test]
fn a_rate_series_changes_the_service_rate_at_its_step_boundaries_mid_packet() {
    // 12 Mbit/s for 10.5 ms, then 24 Mbit/s (held).
    let series = RateSeries::new(
        Duration::from_micros(10_500),
        vec![12_000_000, 24_000_000],
        SeriesEnd::Hold,
    )
    .unwrap();
    let mut link = Link::new(LinkConfig::new(Capacity::series(series)), 1).unwrap();
    let at: Vec<Time> = (0..13)
        .map(|_| delivered(link.send(Time::ZERO, 1500)))
        .collect();
    // Ten packets at 1 ms each; the eleventh gets 0.5 ms at 12 Mbit/s (750 B) and its other
    // 750 B in 0.25 ms at 24 Mbit/s; then 0.5 ms per packet.
    let expected: Vec<Time> = (1..=10)
        .map(ms)
        .chain([us(10_750), us(11_250), us(11_750)])
        .collect();
    assert_eq!(at, expected);
}

#[test]
fn packets_on_a_mahimahi_trace_leave_at_the_opportunities_in_order_and_share_them_by_bytes() {
    let trace = Arc::new(MahimahiTrace::from_millis("inline", [2, 2, 5, 9]).unwrap());
    let mut link = Link::new(LinkConfig::new(Capacity::mahimahi(trace)), 1).unwrap();
    // Two 1500-byte packets use the two opportunities at 2 ms; three 500-byte packets share
    // the one at 5 ms; a 3000-byte packet needs the ones at 9 and 11 (= 9 + 2, next lap).
    let sizes = [1500, 1500, 500, 500, 500, 3000];
    let at: Vec<Time> = sizes
        .iter()
        .map(|&s| delivered(link.send(Time::ZERO, s)))
        .collect();
    assert_eq!(at, [ms(2), ms(2), ms(5), ms(5), ms(5), ms(11)]);
    // An idle link loses its opportunities: a packet sent at 12 ms waits for 14 (5 + 9).
    assert_eq!(delivered(link.send(ms(12), 100)), ms(14));
}

#[test]
fn the_leocc_mahimahi_trace_replays_line_by_line_and_to_its_mean_rate_within_one_percent() {
    let Some(path) = data_file("starlink/leocc/bw_example.mahimahi") else {
        return;
    };
    // Independent reading of the file: the timestamps, their count and the last one.
    let text = std::fs::read_to_string(&path).unwrap();
    let stamps: Vec<u64> = text.lines().map(|l| l.trim().parse().unwrap()).collect();
    let period_ms = *stamps.last().unwrap();
    let mean_bps = stamps.len() as f64 * 1500.0 * 8.0 / (period_ms as f64 / 1000.0);

    let trace = Arc::new(MahimahiTrace::load(&path).unwrap());
    let mut link = Link::new(LinkConfig::new(Capacity::mahimahi(trace)), 1).unwrap();
    // A saturating sender: two laps of 1500-byte packets, all queued at the epoch.
    let mut last = Time::ZERO;
    for lap in 0..2u64 {
        for &stamp in &stamps {
            let at = delivered(link.send(Time::ZERO, 1500));
            assert_eq!(at, ms(lap * period_ms + stamp));
            last = at;
        }
    }
    assert_eq!(last, ms(2 * period_ms));
    let delivered_bits = link.stats().totals().delivered_bytes as f64 * 8.0;
    let replayed_bps = delivered_bits / (2.0 * period_ms as f64 / 1000.0);
    assert!(
        (replayed_bps / mean_bps - 1.0).abs() < 0.01,
        "replayed {replayed_bps} bit/s, trace mean {mean_bps} bit/s"
    );
    // The offered capacity the link reports over two laps is the trace's mean rate.
    let offered = link.offered_bps(Time::ZERO, ms(2 * period_ms) + Duration::from_nanos(1));
    assert!((offered / mean_bps - 1.0).abs() < 0.01, "offered {offered}");
    eprintln!(
        "bw_example.mahimahi: {} opportunities over {} ms, mean {:.3} Mbit/s, replayed {:.3} Mbit/s",
        stamps.len(),
        period_ms,
        mean_bps / 1e6,
        replayed_bps / 1e6
    );
}

#[test]
fn offered_capacity_per_second_follows_the_process() {
    let series = RateSeries::new(
        Duration::from_secs(1),
        vec![10_000_000, 20_000_000],
        SeriesEnd::Loop,
    )
    .unwrap();
    let link = Link::new(LinkConfig::new(Capacity::series(series)), 1).unwrap();
    assert_eq!(
        link.offered_bits(Time::ZERO, Time::from_secs(1)),
        10_000_000
    );
    assert_eq!(
        link.offered_bits(ms(500), ms(2500)),
        5_000_000 + 20_000_000 + 5_000_000
    );
    assert_eq!(
        link.offered_bps(Time::from_secs(3), Time::from_secs(4)),
        20_000_000.0
    );
    assert_eq!(link.capacity_bps_at(ms(2500)), Some(10_000_000));
}

#[test]
fn a_rate_series_of_zeros_never_serves_instead_of_looping_for_ever() {
    let series = RateSeries::new(Duration::from_millis(1), vec![0, 0], SeriesEnd::Loop).unwrap();
    let mut link = Link::new(LinkConfig::new(Capacity::series(series)), 1).unwrap();
    assert_eq!(
        link.send(Time::ZERO, 100),
        Verdict::Dropped {
            reason: rtc_client::link::DropReason::NoCapacity
        }
    );
}

#[test]
fn a_packet_sent_at_the_end_of_time_is_delivered_there_instead_of_hanging() {
    let mut link = constant_link(12_000_000);
    assert_eq!(
        link.send(Time::MAX - Duration::from_micros(1), 1500),
        Verdict::Delivered { at: Time::MAX }
    );
    assert_eq!(
        link.send(Time::MAX, 1500),
        Verdict::Delivered { at: Time::MAX }
    );
}

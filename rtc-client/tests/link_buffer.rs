//! The drop-tail buffer drops exactly when full.

mod link_common;

use link_common::{delivered, ms};
use rtc_client::link::{Backlog, Buffer, Capacity, DropReason, Link, LinkConfig, Time, Verdict};

fn link(buffer: Buffer) -> Link {
    Link::new(
        LinkConfig::new(Capacity::constant(12_000_000)).with_buffer(buffer),
        1,
    )
    .unwrap()
}

const FULL: Verdict = Verdict::Dropped {
    reason: DropReason::BufferFull,
};

#[test]
fn a_ten_packet_buffer_accepts_exactly_ten_packets_of_a_burst_and_drops_the_rest() {
    let mut link = link(Buffer::Packets(10));
    let verdicts: Vec<Verdict> = (0..20).map(|_| link.send(Time::ZERO, 1500)).collect();
    let expected: Vec<Verdict> = (1..=10)
        .map(|i| Verdict::Delivered { at: ms(i) })
        .chain(std::iter::repeat_n(FULL, 10))
        .collect();
    assert_eq!(verdicts, expected);
    assert_eq!(
        link.backlog(Time::ZERO),
        Backlog {
            packets: 10,
            bytes: 15_000
        }
    );
    assert_eq!(link.stats().totals().dropped.buffer_full, 10);
    assert_eq!(link.stats().totals().max_queue_packets, 10);
}

#[test]
fn a_packet_leaving_the_bottleneck_frees_its_slot_at_that_exact_instant() {
    let mut link = link(Buffer::Packets(10));
    for _ in 0..10 {
        link.send(Time::ZERO, 1500);
    }
    // One nanosecond before the first departure the buffer is still full.
    assert_eq!(
        link.send(ms(1) - std::time::Duration::from_nanos(1), 1500),
        FULL
    );
    // At 1 ms the first packet has left: exactly one slot.
    assert_eq!(link.send(ms(1), 1500), Verdict::Delivered { at: ms(11) });
    assert_eq!(link.send(ms(1), 1500), FULL);
    assert_eq!(
        link.backlog(ms(1)),
        Backlog {
            packets: 10,
            bytes: 15_000
        }
    );
    assert_eq!(
        link.backlog(ms(5)),
        Backlog {
            packets: 6,
            bytes: 9_000
        }
    );
}

#[test]
fn a_byte_buffer_accepts_a_packet_that_fills_it_exactly_and_refuses_one_byte_more() {
    let mut link = link(Buffer::Bytes(15_000));
    for i in 1..=9 {
        assert_eq!(delivered(link.send(Time::ZERO, 1500)), ms(i));
    }
    // 13 500 bytes queued: a 1 501-byte packet does not fit, a 1 500-byte one fills it exactly.
    assert_eq!(link.send(Time::ZERO, 1501), FULL);
    assert_eq!(
        link.send(Time::ZERO, 1500),
        Verdict::Delivered { at: ms(10) }
    );
    assert_eq!(link.send(Time::ZERO, 1), FULL);
    assert_eq!(
        link.backlog(Time::ZERO),
        Backlog {
            packets: 10,
            bytes: 15_000
        }
    );
}

#[test]
fn a_byte_buffer_takes_small_packets_where_a_large_one_no_longer_fits() {
    let mut link = link(Buffer::Bytes(2_000));
    assert_eq!(delivered(link.send(Time::ZERO, 1500)), ms(1));
    assert_eq!(link.send(Time::ZERO, 1000), FULL);
    // 500 bytes at 12 Mbit/s take 1/3 ms.
    assert_eq!(
        link.send(Time::ZERO, 500),
        Verdict::Delivered {
            at: Time::from_nanos(1_333_334)
        }
    );
}

#[test]
fn a_buffer_of_zero_is_refused() {
    let config = LinkConfig::new(Capacity::constant(1)).with_buffer(Buffer::Packets(0));
    assert!(Link::new(config, 1).is_err());
}

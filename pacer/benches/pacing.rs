//! Per-packet cost of pacing: our controller driven directly, the stock webrtc-rs
//! `PacerInterceptor`, and our `HandoverAwarePacer`, on the same packet stream in the same run.
//!
//! The stream: 10 000 RTP packets of 1000 bytes on the wire (12-byte header + 988-byte payload),
//! one SSRC, in frames of 10 packets every millisecond (80 Mbit/s offered), paced at a
//! 100 Mbit/s target (pacing factor 1.0 for ours, so both pace at the same rate). The queue
//! stays short: every packet leaves within its frame, so what is measured is the machinery's
//! cost per packet (enqueue, schedule, release), not waiting.
//!
//! The interceptors are driven as a chain driver would: fire every deadline `poll_timeout` asks
//! for up to the packet's instant, `handle_write`, `handle_timeout(now)`, then `poll_write` until
//! empty; after the last packet, deadlines are followed until nothing is left. The controller is
//! driven the same way through `next_send_time`, `enqueue` and `poll_send`. Virtual time only:
//! a base `Instant` plus offsets, no sleeping. Packets, pacers and output buffers are built
//! outside the timed part (`iter_batched`), and what was released is dropped outside it too.

use criterion::{BatchSize, Criterion, Throughput, criterion_main};
use pacer::{HandoverAwarePacer, PacingConfig, PacingController, PacketKind};
use rtc_interceptor::{
    AttributedPacket, Interceptor, PacerBuilder, PacerInterceptor, Packet, StreamInfo, TaggedPacket,
};
use rtc_shared::TransportContext;
use sansio::Protocol;
use std::cell::RefCell;
use std::fmt::Debug;
use std::time::{Duration, Instant};

/// Packets per timed batch.
const PACKETS: usize = 10_000;
/// Packets per frame; frames are [`FRAME_INTERVAL`] apart.
const FRAME_PACKETS: usize = 10;
const FRAME_INTERVAL: Duration = Duration::from_millis(1);
/// On-the-wire size: 12-byte RTP header + payload.
const PACKET_BYTES: u64 = 1000;
const PAYLOAD_BYTES: usize = 988;
const TARGET_BPS: u64 = 100_000_000;
const SSRC: u32 = 0x1234_5678;

/// The instant packet `i` is handed in.
fn arrival(base: Instant, i: usize) -> Instant {
    base + FRAME_INTERVAL * u32::try_from(i / FRAME_PACKETS).expect("few frames")
}

/// The stream as `TaggedPacket`s. The payload bytes are shared (a pacer never reads them), so
/// building a batch is cheap and dropping one is a reference-count decrement per packet.
fn tagged_stream(base: Instant) -> Vec<TaggedPacket> {
    let template = rtc_rtp::Packet {
        header: rtc_rtp::Header {
            version: 2,
            payload_type: 96,
            ssrc: SSRC,
            ..Default::default()
        },
        payload: vec![0u8; PAYLOAD_BYTES].into(),
    };
    (0..PACKETS)
        .map(|i| {
            let mut rtp = template.clone();
            rtp.header.sequence_number = i as u16;
            TaggedPacket {
                now: arrival(base, i),
                transport: TransportContext::default(),
                message: AttributedPacket::new(Packet::Rtp(rtp)),
            }
        })
        .collect()
}

fn our_config() -> PacingConfig {
    PacingConfig {
        pacing_factor: 1.0,
        initial_target_bitrate_bps: TARGET_BPS,
        ..PacingConfig::default()
    }
}

/// Enqueue each packet at its instant and release everything that may leave, following
/// `next_send_time` in between and after the last packet.
fn drive_controller(pacer: &mut PacingController<u32>, base: Instant, out: &mut Vec<u32>) {
    for i in 0..PACKETS {
        let now = arrival(base, i);
        while let Some(next) = pacer.next_send_time().filter(|&next| next <= now) {
            while let Some(released) = pacer.poll_send(next) {
                out.push(released.payload);
            }
        }
        pacer.enqueue(now, SSRC, PacketKind::Video, PACKET_BYTES, i as u32);
        while let Some(released) = pacer.poll_send(now) {
            out.push(released.payload);
        }
    }
    while let Some(next) = pacer.next_send_time() {
        while let Some(released) = pacer.poll_send(next) {
            out.push(released.payload);
        }
    }
}

fn drain<P>(pacer: &mut P, out: &mut Vec<TaggedPacket>)
where
    P: Protocol<TaggedPacket, TaggedPacket, (), Wout = TaggedPacket>,
{
    while let Some(packet) = pacer.poll_write() {
        out.push(packet);
    }
}

/// Drives an interceptor as a chain driver would.
fn drive_interceptor<P>(pacer: &mut P, packets: Vec<TaggedPacket>, out: &mut Vec<TaggedPacket>)
where
    P: Protocol<TaggedPacket, TaggedPacket, (), Wout = TaggedPacket, Time = Instant>,
    P::Error: Debug,
{
    for packet in packets {
        let now = packet.now;
        while let Some(deadline) = pacer.poll_timeout().filter(|&deadline| deadline <= now) {
            pacer.handle_timeout(deadline).expect("handle_timeout");
            drain(pacer, out);
        }
        pacer.handle_write(packet).expect("handle_write");
        pacer.handle_timeout(now).expect("handle_timeout");
        drain(pacer, out);
    }
    while let Some(deadline) = pacer.poll_timeout() {
        pacer.handle_timeout(deadline).expect("handle_timeout");
        drain(pacer, out);
    }
}

fn stock_pacer() -> PacerInterceptor {
    PacerBuilder::new()
        .with_target_bitrate(TARGET_BPS as f64)
        .build()
}

fn our_pacer() -> HandoverAwarePacer {
    let (mut pacer, _handle) = HandoverAwarePacer::builder(our_config()).build();
    pacer.bind_local_stream(&StreamInfo {
        ssrc: SSRC,
        mime_type: "video/VP8".into(),
        ..Default::default()
    });
    pacer
}

fn pacing(c: &mut Criterion) {
    let base = Instant::now();
    let mut group = c.benchmark_group("pacing");
    group
        .throughput(Throughput::Elements(PACKETS as u64))
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50);

    // One output buffer per benchmark, reused by every iteration: its pages stay mapped, so the
    // timed part pays no page faults for collecting what was released, and its previous contents
    // are dropped in the (untimed) setup.
    let ids = RefCell::new(Vec::with_capacity(PACKETS));
    group.bench_function("pacing_controller_direct", |b| {
        b.iter_batched(
            || {
                let mut out = ids.take();
                out.clear();
                (PacingController::<u32>::new(our_config(), base), out)
            },
            |(mut pacer, mut out)| {
                drive_controller(&mut pacer, base, &mut out);
                assert_eq!(out.len(), PACKETS);
                *ids.borrow_mut() = out;
                pacer
            },
            BatchSize::PerIteration,
        );
    });

    let released = RefCell::new(Vec::with_capacity(PACKETS));
    group.bench_function("stock_pacer_interceptor", |b| {
        b.iter_batched(
            || {
                let mut out = released.take();
                out.clear();
                (stock_pacer(), tagged_stream(base), out)
            },
            |(mut pacer, packets, mut out)| {
                drive_interceptor(&mut pacer, packets, &mut out);
                assert_eq!(out.len(), PACKETS);
                *released.borrow_mut() = out;
                pacer
            },
            BatchSize::PerIteration,
        );
    });

    group.bench_function("handover_aware_pacer_interceptor", |b| {
        b.iter_batched(
            || {
                let mut out = released.take();
                out.clear();
                (our_pacer(), tagged_stream(base), out)
            },
            |(mut pacer, packets, mut out)| {
                drive_interceptor(&mut pacer, packets, &mut out);
                assert_eq!(out.len(), PACKETS);
                *released.borrow_mut() = out;
                pacer
            },
            BatchSize::PerIteration,
        );
    });

    group.finish();
}

/// Private, because `criterion_group!` declares an undocumented `pub fn`.
mod group {
    criterion::criterion_group!(benches, super::pacing);
}

criterion_main!(group::benches);

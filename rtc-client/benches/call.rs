//! How fast one simulated call runs, and whether its memory stays flat.
//!
//! Goal: a 10-minute call at 2.5 Mbit/s in 0.3 s on one core (2000x real time), memory flat over
//! a simulated hour (docs/architecture.md, "Simulation speed", says where the time goes). Printed
//! side by side, in the same run:
//!
//! - `call clean`: `sim::run_call` over a clean 5 Mbit/s link (the encoder at its 2.5 Mbit/s
//!   maximum for most of the call), through the whole webrtc-rs chain;
//! - `call starlink`: the same over the shipped starlink scenario (seed 1);
//! - `media only`: the baseline, the same clean call's media engine and links alone (encoder,
//!   packetizer, link, receiver with its jitter buffer, QoE meter; no interceptor chain, no
//!   feedback), so the ratio shows what the WebRTC chain costs on top;
//! - `chain floor`: the clean call's RTP packets through two webrtc-rs chains of pass-through
//!   interceptors shaped like the call's, which is what moving packets through the chain costs
//!   before any interceptor does anything.
//!
//! They run in 7 rounds of the four, interleaved, after a warm-up round; each one's median wall
//! time and speed-up over real time are printed, and the median over the rounds of the clean
//! call's time over the media engine's (a ratio within a round cancels most of a shared
//! machine's slow spells). Then a 60-minute clean call runs after a 10-minute one, and the
//! process's peak resident memory is printed after each: flat memory means the hour adds little.
//! Run with `cargo bench -p rtc-client --bench call`.

use rtc_client::link::{Capacity, Delay, Link, LinkConfig, Time, Verdict};
use rtc_client::media::encoder::{Encoder, EncoderConfig};
use rtc_client::media::packetizer::{DEFAULT_MAX_PAYLOAD, Packetizer};
use rtc_client::media::qoe::QoeMeter;
use rtc_client::media::receiver::{Receiver, ReceiverConfig};
use rtc_client::scenario::{Scenario, ScenarioPaths};
use rtc_client::sim::{CallConfig, run_call};
use rtc_interceptor::{AttributedPacket, NoopInterceptor, Packet, Registry, Slot, TaggedPacket};
use sansio::Protocol;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const RUNS: usize = 7;
const TEN_MINUTES: Duration = Duration::from_secs(600);
/// The interceptors of the default call's chains, the terminus webrtc-rs appends included: the
/// sender's congestion control, TWCC sender, retransmission tap, pacer, NACK responder and loss
/// protection; the receiver's reports, TWCC receiver, FEC receiver, RTX receiver and NACK
/// generator.
const SENDER_HOPS: usize = 6;
const RECEIVER_HOPS: usize = 5;

fn clean_link() -> LinkConfig {
    LinkConfig::new(Capacity::constant(5_000_000))
        .with_delay(Delay::constant(Duration::from_millis(30)))
}

fn clean_call(duration: Duration) -> CallConfig {
    CallConfig::over_links("clean", clean_link(), clean_link(), 7, duration)
}

fn starlink_call() -> CallConfig {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let paths = ScenarioPaths {
        data: root.join("../shared/data"),
        root,
    };
    let scenario = Scenario::load("starlink", &paths).expect("the shipped starlink scenario");
    let realization = scenario
        .realize(1, TEN_MINUTES)
        .expect("the starlink scenario realises");
    CallConfig::from_realization(&realization, rtc_client::call::PolicyChoice::Default)
}

/// The media engine and the forward link alone, at the encoder's 2.5 Mbit/s maximum.
fn media_only(duration: Duration) -> u64 {
    let mut link = Link::new(clean_link(), 1).expect("a valid link");
    let mut encoder = Encoder::new(EncoderConfig::default(), Time::ZERO);
    encoder.set_target(Time::ZERO, 2_500_000);
    let mut packetizer = Packetizer::new(0x1234, 96, DEFAULT_MAX_PAYLOAD, 0);
    let mut receiver = Receiver::new(ReceiverConfig::default());
    let mut meter = QoeMeter::new();
    let mut in_flight: BTreeMap<(Time, u64), (u16, Vec<u8>)> = BTreeMap::new();
    let end = Time::ZERO.saturating_add(duration);
    let mut id = 0u64;
    loop {
        let frame_due = Some(encoder.next_frame_time()).filter(|&t| t < end);
        let Some(now) = [
            frame_due,
            in_flight.keys().next().map(|k| k.0),
            receiver.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min() else {
            break;
        };
        if now >= end {
            break;
        }
        if frame_due.is_some_and(|t| t <= now)
            && let Some(frame) = encoder.poll_frame(now, false)
        {
            for packet in packetizer.packetize(&frame) {
                if let Verdict::Delivered { at } = link.send(now, packet.payload.len() as u32 + 12)
                {
                    id += 1;
                    in_flight.insert((at, id), (packet.sequence_number, packet.payload));
                }
            }
        }
        while let Some(entry) = in_flight.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (sequence_number, payload) = entry.remove();
            receiver.on_packet(now, sequence_number, &payload);
        }
        receiver.handle_timeout(now);
        while let Some(frame) = receiver.poll_rendered() {
            meter.on_rendered(&frame);
        }
    }
    meter.total().frames_rendered
}

/// The floor the webrtc-rs chain puts under any call: `packets` RTP packets of the clean call's
/// size, each written into a sender chain of [`SENDER_HOPS`] pass-through interceptors and read
/// out of a receiver chain of [`RECEIVER_HOPS`], both chains asked for their deadline once per
/// packet. Each hop moves the 224-byte `TaggedPacket` into an interceptor's queue and back out
/// onto the chain's belt.
fn chain_floor(packets: u64) -> u64 {
    let chain = |hops: usize| {
        (0..hops)
            .fold(Registry::new(), |registry, i| {
                registry.with(Slot::Custom(100 + i), NoopInterceptor::new())
            })
            .build()
    };
    let (mut sender, mut receiver) = (chain(SENDER_HOPS), chain(RECEIVER_HOPS));
    let now = Instant::now();
    let mut delivered = 0u64;
    for sequence_number in 0..packets {
        let rtp = rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                sequence_number: sequence_number as u16,
                ..Default::default()
            },
            payload: vec![0u8; DEFAULT_MAX_PAYLOAD].into(),
        };
        let packet = TaggedPacket {
            now,
            transport: Default::default(),
            message: AttributedPacket::new(Packet::Rtp(rtp)),
        };
        sender.handle_write(packet).expect("a pass-through chain");
        while let Some(packet) = sender.poll_write() {
            receiver.handle_read(packet).expect("a pass-through chain");
            while let Some(packet) = receiver.poll_read() {
                delivered += 1;
                black_box(&packet);
            }
        }
        black_box((sender.poll_timeout(), receiver.poll_timeout()));
    }
    delivered
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

/// The median over the rounds of `numerator / denominator`, each ratio within one round.
fn median_ratio(numerator: &[Duration], denominator: &[Duration]) -> f64 {
    let mut ratios: Vec<f64> = numerator
        .iter()
        .zip(denominator)
        .map(|(n, d)| n.as_secs_f64() / d.as_secs_f64())
        .collect();
    ratios.sort_unstable_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

/// A measurement's name and what it runs.
type Measured<'a> = (&'static str, Box<dyn FnMut() + 'a>);

fn timed(run: &mut dyn FnMut()) -> Duration {
    let started = Instant::now();
    run();
    started.elapsed()
}

fn report(name: &str, simulated: Duration, samples: &[Duration]) -> Duration {
    let m = median(samples.to_vec());
    println!(
        "{name:<16} median {:>8.1} ms  ({:>6.0}x real time)  min {:>8.1} ms  max {:>8.1} ms",
        m.as_secs_f64() * 1e3,
        simulated.as_secs_f64() / m.as_secs_f64(),
        samples.iter().min().unwrap_or(&m).as_secs_f64() * 1e3,
        samples.iter().max().unwrap_or(&m).as_secs_f64() * 1e3,
    );
    m
}

/// The process's peak resident set, kB (`VmHWM` in /proc/self/status); `None` off Linux.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported here.
    println!(
        "simulated 10-minute calls, {RUNS} rounds of the four (after one warm-up round), \
         interleaved so that a slow spell of the machine hits all four alike:"
    );
    let epoch = Instant::now();
    let clean = clean_call(TEN_MINUTES);
    let starlink = starlink_call();
    let packets = run_call(&clean, epoch)
        .expect("the call runs")
        .rtp_packets_sent;
    let mut runs: [Measured; 4] = [
        (
            "call clean",
            Box::new(|| {
                black_box(run_call(&clean, epoch).expect("the call runs"));
            }),
        ),
        (
            "call starlink",
            Box::new(|| {
                black_box(run_call(&starlink, epoch).expect("the call runs"));
            }),
        ),
        (
            "media only",
            Box::new(|| {
                black_box(media_only(TEN_MINUTES));
            }),
        ),
        (
            "chain floor",
            Box::new(|| {
                black_box(chain_floor(packets));
            }),
        ),
    ];
    for (_, run) in runs.iter_mut() {
        run();
    }
    let mut samples = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..RUNS {
        for (kind, (_, run)) in samples.iter_mut().zip(runs.iter_mut()) {
            kind.push(timed(run.as_mut()));
        }
    }
    for ((name, _), kind) in runs.iter().zip(&samples) {
        report(name, TEN_MINUTES, kind);
    }
    let chain_cost = median_ratio(&samples[0], &samples[2]);
    let floor_share = median_ratio(&samples[3], &samples[0]);
    println!(
        "the webrtc-rs chain (GCC, TWCC, pacer, NACK, FEC, feedback link) costs {chain_cost:.1}x \
         the media engine alone (median of the rounds' ratios)"
    );
    println!(
        "passing the clean call's {packets} RTP packets through {SENDER_HOPS} + {RECEIVER_HOPS} \
         pass-through interceptors alone takes {:.0} % of the clean call's time (median of the \
         rounds' ratios)",
        floor_share * 100.0
    );

    let before = peak_rss_kb();
    black_box(run_call(&clean_call(TEN_MINUTES), epoch).expect("the call runs"));
    let after_ten = peak_rss_kb();
    let started = Instant::now();
    black_box(run_call(&clean_call(Duration::from_secs(3600)), epoch).expect("the call runs"));
    let hour = started.elapsed();
    let after_hour = peak_rss_kb();
    match (before, after_ten, after_hour) {
        (Some(b), Some(t), Some(h)) => println!(
            "peak resident memory: {b} kB before, {t} kB after a 10-minute call, {h} kB after a \
             60-minute call ({:+} kB for the hour; the hour took {:.2} s)",
            h as i64 - t as i64,
            hour.as_secs_f64()
        ),
        _ => println!("peak resident memory: not available on this system"),
    }
}

//! How fast one simulated call runs, and whether its memory stays flat.
//!
//! Goal: a 10-minute call at 2.5 Mbit/s in under 0.6 s on one core (1000x real time), memory flat
//! over a simulated hour. Printed side by side, in the same run:
//!
//! - `call clean`: `sim::run_call` over a clean 5 Mbit/s link (the encoder at its 2.5 Mbit/s
//!   maximum for most of the call), through the whole webrtc-rs chain;
//! - `call starlink`: the same over the shipped starlink scenario (seed 1);
//! - `media only`: the baseline, the same clean call's media engine and links alone (encoder,
//!   packetizer, link, receiver with its jitter buffer, QoE meter; no interceptor chain, no
//!   feedback), so the ratio shows what the WebRTC chain costs on top.
//!
//! Each is run 5 times; the median wall time and the speed-up over real time are printed. Then a
//! 60-minute clean call runs after a 10-minute one, and the process's peak resident memory is
//! printed after each: flat memory means the hour adds little. Run with
//! `cargo bench -p rtc-client --bench call`.

use rtc_client::link::{Capacity, Delay, Link, LinkConfig, Time, Verdict};
use rtc_client::media::encoder::{Encoder, EncoderConfig};
use rtc_client::media::packetizer::{DEFAULT_MAX_PAYLOAD, Packetizer};
use rtc_client::media::qoe::QoeMeter;
use rtc_client::media::receiver::{Receiver, ReceiverConfig};
use rtc_client::scenario::{Scenario, ScenarioPaths};
use rtc_client::sim::{CallConfig, run_call};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const RUNS: usize = 5;
const TEN_MINUTES: Duration = Duration::from_secs(600);

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

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn time(name: &str, simulated: Duration, mut run: impl FnMut()) -> Duration {
    run(); // warm-up
    let samples: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .collect();
    let m = median(samples.clone());
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
    println!("simulated 10-minute calls, {RUNS} runs each (after one warm-up):");
    let epoch = Instant::now();
    let clean = clean_call(TEN_MINUTES);
    let starlink = starlink_call();
    let full = time("call clean", TEN_MINUTES, || {
        black_box(run_call(&clean, epoch).expect("the call runs"));
    });
    time("call starlink", TEN_MINUTES, || {
        black_box(run_call(&starlink, epoch).expect("the call runs"));
    });
    let base = time("media only", TEN_MINUTES, || {
        black_box(media_only(TEN_MINUTES));
    });
    println!(
        "the webrtc-rs chain (GCC, TWCC, pacer, NACK, feedback link) costs {:.1}x the media engine alone",
        full.as_secs_f64() / base.as_secs_f64()
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

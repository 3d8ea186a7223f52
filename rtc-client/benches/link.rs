//! Per-packet cost of `Link::send` in virtual time: a realistic Starlink link (Mahimahi
//! capacity, 10-ms delay series, Gilbert-Elliott loss, a handover timeline, a drop-tail byte
//! buffer) against a trivial constant link, in the same run. Goal: under 200 ns per packet.
//!
//! The realistic link replays the LeoCC traces from `../shared/data` when they are there, and a
//! synthetic trace of the same shape (4 opportunities per ms, a delay series stepping every
//! 10 ms) otherwise. Each benchmark drives one long-lived link with a sender at a constant
//! packet rate (60 Mbit/s of 1200-byte packets, above the trace's 48.7 Mbit/s mean so that the
//! buffer fills and drops), so the cost includes queueing, drops and trace wrap-around. The
//! timeline covers an hour; every simulated hour the link restarts from a fresh copy (outside
//! the timing), so every packet meets handovers and the statistics stay an hour long.

use criterion::{Criterion, Throughput, criterion_main};
use rtc_client::link::readers::read_leoreplayer_delay;
use rtc_client::link::{
    Buffer, Capacity, Delay, DelayChange, DelaySeries, GilbertElliott, HandoverEffect,
    HandoverEvent, Interpolation, Link, LinkConfig, Loss, MahimahiTrace, OutageMode, SeriesEnd,
    Time,
};
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn data(relative: &str) -> Option<PathBuf> {
    let path =
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data")).join(relative);
    path.is_file().then_some(path)
}

/// The LeoCC capacity and delay traces, or synthetic ones of the same shape.
fn traces() -> (Arc<MahimahiTrace>, DelaySeries) {
    let real = data("starlink/leocc/bw_example.mahimahi")
        .zip(data("starlink/leocc/delay_example_10ms.txt"))
        .and_then(|(bw, delay)| {
            Some((
                Arc::new(MahimahiTrace::load(bw).ok()?),
                read_leoreplayer_delay(delay).ok()?,
            ))
        });
    if let Some(real) = real {
        return real;
    }
    eprintln!("../shared/data is absent: benchmarking on a synthetic trace of the same shape");
    let trace = MahimahiTrace::from_millis("synthetic", (1..=120_000u64).flat_map(|ms| [ms; 4]))
        .expect("synthetic trace");
    let delay: Vec<u64> = (0..12_000u64)
        .map(|i| 10 + (i % 1500 == 0) as u64 * 40)
        .collect();
    let delay = DelaySeries::from_millis(
        Duration::from_millis(10),
        &delay,
        SeriesEnd::Loop,
        Interpolation::Step,
    )
    .expect("synthetic delay");
    (Arc::new(trace), delay)
}

/// One handover every 15 s for an hour: a 40-ms hold outage, a delay step, a loss burst.
fn timeline() -> Vec<HandoverEvent> {
    let mut events = Vec::new();
    for k in 0..240u64 {
        let at = Time::from_secs(12 + 15 * k);
        events.push(HandoverEvent::new(
            at,
            HandoverEffect::Outage {
                duration: Duration::from_millis(40),
                mode: OutageMode::Hold,
            },
        ));
        events.push(HandoverEvent::new(
            at,
            HandoverEffect::DelayStep {
                change: DelayChange::Add(Duration::from_millis(10 * (k % 3))),
                duration: Some(Duration::from_secs(15)),
            },
        ));
        events.push(HandoverEvent::new(
            at,
            HandoverEffect::LossBurst {
                duration: Duration::from_millis(100),
                probability: 0.3,
            },
        ));
    }
    events
}

fn realistic() -> Link {
    let (trace, delay) = traces();
    let config = LinkConfig::new(Capacity::mahimahi(trace))
        .with_buffer(Buffer::Bytes(375_000))
        .with_delay(Delay::series(delay))
        .with_loss(Loss::GilbertElliott(GilbertElliott {
            p_good_to_bad: 0.002,
            p_bad_to_good: 0.5,
            loss_good: 0.0,
            loss_bad: 0.5,
        }))
        .with_handovers(timeline());
    Link::new(config, 1).expect("realistic link")
}

fn constant() -> Link {
    let config = LinkConfig::new(Capacity::constant(100_000_000))
        .with_delay(Delay::constant(Duration::from_millis(20)));
    Link::new(config, 1).expect("constant link")
}

/// Packets per simulated hour at 60 Mbit/s of 1200-byte packets (one every 160 us).
const PACKETS_PER_HOUR: u64 = 3600 * 60_000_000 / (1200 * 8);

/// A link being driven: a template to restart from, the live copy, and where the sender is.
struct Run {
    template: Link,
    link: Link,
    sent: u64,
    last_totals: Option<rtc_client::link::SecondStats>,
}

impl Run {
    fn new(link: Link) -> Run {
        Run {
            template: link.clone(),
            link,
            sent: 0,
            last_totals: None,
        }
    }

    /// Sends `iters` packets of 1200 bytes at 60 Mbit/s, continuing the run; restarts the link
    /// (untimed) at each simulated hour.
    fn drive(&mut self, iters: u64) -> Duration {
        let gap = Duration::from_nanos(1200 * 8 * 1_000_000_000 / 60_000_000);
        let mut elapsed = Duration::ZERO;
        let mut left = iters;
        while left > 0 {
            if self.sent == PACKETS_PER_HOUR {
                self.last_totals = Some(*self.link.stats().totals());
                self.link = self.template.clone();
                self.sent = 0;
            }
            let n = left.min(PACKETS_PER_HOUR - self.sent);
            let mut now = Time::ZERO + gap * u32::try_from(self.sent).unwrap_or(u32::MAX);
            let link = &mut self.link;
            let start = Instant::now();
            for _ in 0..n {
                black_box(link.send(now, black_box(1200)));
                now += gap;
            }
            elapsed += start.elapsed();
            self.sent += n;
            left -= n;
        }
        elapsed
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("link_send");
    group.throughput(Throughput::Elements(1));
    let mut run = Run::new(constant());
    group.bench_function("constant", |b| b.iter_custom(|iters| run.drive(iters)));
    let mut run = Run::new(realistic());
    group.bench_function("realistic", |b| b.iter_custom(|iters| run.drive(iters)));
    group.finish();
    if let Some(t) = run.last_totals {
        eprintln!(
            "realistic link, one simulated hour: {} packets, {} delivered, drops {:?}, mean one-way delay {:?}",
            t.entered_packets,
            t.delivered_packets,
            t.dropped,
            t.mean_delay()
        );
    }
}

/// Private, because `criterion_group!` declares an undocumented `pub fn`.
mod group {
    criterion::criterion_group!(benches, super::bench);
}

criterion_main!(group::benches);

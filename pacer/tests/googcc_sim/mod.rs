//! A small deterministic path model for driving a `BandwidthEstimator` directly with
//! `PacketReport`s, shared by `tests/googcc.rs` and `benches/googcc.rs`.
//!
//! Sender: an encoder that produces 30 frames per second of `target / 30` bits, cut into packets
//! of at most 1200 bytes, and a FIFO pacer releasing them at 1.1 x the target. Path: a fluid FIFO
//! bottleneck (capacity piecewise constant in time, optional drop-tail limit in queueing time),
//! a propagation delay each way, Bernoulli loss after the bottleneck from a seeded ChaCha8, and
//! an optional outage during which everything entering the link and all feedback is lost.
//! Receiver: every feedback interval it reports every sequence number up to the highest it has
//! received since the last report (gaps as lost), as TWCC does; the report reaches the sender
//! one propagation delay later and goes to `on_reports` as the chain's `History` would hand it.
//! Virtual time in 1-ms ticks from one epoch; the same inputs give the same run.

#![allow(dead_code)]

use pacer::googcc::{BandwidthUsage, GoogCcHandle};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rtc_interceptor::{BandwidthEstimator, PacketReport};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Largest packet, bytes.
pub const MAX_PACKET: usize = 1200;
/// Pacing factor over the target.
pub const PACING_FACTOR: f64 = 1.1;
/// Frames per second of the encoder.
pub const FPS: u32 = 30;
/// Samples are recorded this often.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

/// A path profile.
#[derive(Debug, Clone)]
pub struct Path {
    /// `(from, capacity_bps)` steps, sorted; the first must start at zero.
    pub capacity: Vec<(Duration, f64)>,
    /// One-way propagation delay (both directions).
    pub propagation: Duration,
    /// Bernoulli loss probability after the bottleneck.
    pub loss: f64,
    /// Drop-tail limit on the queueing delay a packet would see, if any.
    pub buffer: Option<Duration>,
    /// `[start, end)` of an outage.
    pub outage: Option<(Duration, Duration)>,
    /// Receiver feedback interval.
    pub feedback_interval: Duration,
    /// Loss seed.
    pub seed: u64,
}

impl Path {
    /// A constant-capacity, loss-free path with 30 ms one-way delay and 100 ms feedback.
    pub fn constant(capacity_bps: f64) -> Self {
        Self {
            capacity: vec![(Duration::ZERO, capacity_bps)],
            propagation: Duration::from_millis(30),
            loss: 0.0,
            buffer: None,
            outage: None,
            feedback_interval: Duration::from_millis(100),
            seed: 1,
        }
    }

    fn capacity_at(&self, t: Duration) -> f64 {
        self.capacity
            .iter()
            .rev()
            .find(|(from, _)| *from <= t)
            .map_or(self.capacity[0].1, |c| c.1)
    }

    fn in_outage(&self, t: Duration) -> bool {
        self.outage.is_some_and(|(a, b)| t >= a && t < b)
    }
}

/// One recorded sample.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Time since the start.
    pub t: Duration,
    /// The estimator's target, bps.
    pub target: f64,
    /// The bottleneck's backlog in time (what a packet entering now would wait).
    pub queue: Duration,
    /// The capacity now, bps.
    pub capacity: f64,
    /// Goodput over the last sample interval, bps.
    pub goodput: f64,
    /// GoogCc's detector state, when a handle was given.
    pub state: Option<BandwidthUsage>,
}

/// The outcome of a run.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Samples every [`SAMPLE_INTERVAL`].
    pub samples: Vec<Sample>,
    /// When GoogCc's detector first said overusing (needs a handle).
    pub first_overuse: Option<Duration>,
    /// When the target first went down.
    pub first_decrease: Option<Duration>,
    /// Packets sent and lost on the link.
    pub sent: u64,
    /// Packets lost.
    pub lost: u64,
}

impl Run {
    /// Samples in `[from, to)`.
    pub fn window(&self, from: Duration, to: Duration) -> impl Iterator<Item = &Sample> {
        self.samples.iter().filter(move |s| s.t >= from && s.t < to)
    }

    /// Mean target over `[from, to)`.
    pub fn mean_target(&self, from: Duration, to: Duration) -> f64 {
        mean(self.window(from, to).map(|s| s.target))
    }

    /// Mean bottleneck backlog over `[from, to)`, ms.
    pub fn mean_queue_ms(&self, from: Duration, to: Duration) -> f64 {
        mean(
            self.window(from, to)
                .map(|s| s.queue.as_secs_f64() * 1000.0),
        )
    }

    /// Largest backlog over `[from, to)`, ms.
    pub fn max_queue_ms(&self, from: Duration, to: Duration) -> f64 {
        self.window(from, to)
            .map(|s| s.queue.as_secs_f64() * 1000.0)
            .fold(0.0, f64::max)
    }

    /// The first sample at or after `from` whose target is below the sample before it, as a
    /// delay from `from`.
    pub fn first_drop_after(&self, from: Duration) -> Option<Duration> {
        self.samples
            .windows(2)
            .find(|w| w[1].t >= from && w[1].target < w[0].target)
            .map(|w| w[1].t - from)
    }

    /// Smallest target over `[from, to)`.
    pub fn min_target(&self, from: Duration, to: Duration) -> f64 {
        self.window(from, to)
            .map(|s| s.target)
            .fold(f64::INFINITY, f64::min)
    }

    /// First sample time from `from` on at which the target reached `fraction` of the capacity.
    pub fn time_to_reach(&self, from: Duration, fraction: f64) -> Option<Duration> {
        self.samples
            .iter()
            .find(|s| s.t >= from && s.target >= fraction * s.capacity)
            .map(|s| s.t - from)
    }
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0u32), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / f64::from(n) }
}

#[derive(Debug, Clone, Copy)]
struct Sent {
    id: u64,
    size: usize,
    departure: Duration,
    arrival: Option<Duration>,
}

/// Runs `estimator` over `path` for `duration`.
pub fn simulate<E: BandwidthEstimator>(
    mut estimator: E,
    handle: Option<&GoogCcHandle>,
    path: &Path,
    duration: Duration,
) -> Run {
    let epoch = Instant::now();
    let at = |d: Duration| epoch + d;
    // The receiver's clock runs from an unrelated origin.
    let receiver_offset = Duration::from_secs(1000);
    let mut rng = ChaCha8Rng::seed_from_u64(path.seed);
    let tick = Duration::from_millis(1);
    let frame_interval = Duration::from_nanos(1_000_000_000 / u64::from(FPS));

    let mut run = Run::default();
    let mut pacer_queue: VecDeque<(Duration, usize)> = VecDeque::new();
    let mut pacer_free_at = Duration::ZERO;
    let mut link_free_at = Duration::ZERO;
    let mut history: Vec<Sent> = Vec::new();
    let mut next_id = 0u64;
    let mut reported_up_to = 0usize; // history index of the first unreported packet
    let mut feedback_in_flight: VecDeque<(Duration, usize, usize)> = VecDeque::new();
    let mut next_frame = Duration::ZERO;
    let mut next_feedback = path.feedback_interval;
    let mut next_sample = Duration::ZERO;
    let mut delivered_bytes_since_sample = 0u64;
    let mut last_target = estimator.target_bitrate();

    let mut t = Duration::ZERO;
    while t <= duration {
        // Feedback arriving at the sender.
        while let Some(&(arrive, from, to)) = feedback_in_flight.front() {
            if arrive > t {
                break;
            }
            feedback_in_flight.pop_front();
            let reports: Vec<PacketReport> = history[from..to]
                .iter()
                .map(|s| PacketReport {
                    ssrc: 1,
                    id: s.id,
                    rtp_sequence_number: s.id as u16,
                    is_twcc: true,
                    twcc_sequence_number: s.id as u16,
                    size: s.size,
                    arrived: s.arrival.is_some_and(|a| a <= t),
                    departure: at(s.departure),
                    arrival: s.arrival.map(|a| a + receiver_offset),
                    ecn: Default::default(),
                })
                .collect();
            estimator.on_reports(at(arrive), &reports);
        }
        if let Some(deadline) = estimator.poll_timeout()
            && deadline <= at(t)
        {
            estimator.handle_timeout(at(t));
        }
        let target = estimator.target_bitrate();
        if target < last_target && run.first_decrease.is_none() {
            run.first_decrease = Some(t);
        }
        last_target = target;
        if let Some(h) = handle
            && run.first_overuse.is_none()
            && h.state() == BandwidthUsage::Overusing
        {
            run.first_overuse = Some(t);
        }

        // Encoder.
        while next_frame <= t {
            let mut bytes = (target / f64::from(FPS) / 8.0).round() as usize;
            while bytes > 0 {
                let size = bytes.min(MAX_PACKET);
                pacer_queue.push_back((next_frame, size));
                bytes -= size;
            }
            next_frame += frame_interval;
        }

        // Pacer and link.
        while let Some(&(enqueued, size)) = pacer_queue.front() {
            let departure = pacer_free_at.max(enqueued);
            if departure > t {
                break;
            }
            pacer_queue.pop_front();
            pacer_free_at =
                departure + Duration::from_secs_f64(size as f64 * 8.0 / (PACING_FACTOR * target));
            let id = next_id;
            next_id += 1;
            run.sent += 1;
            let start = link_free_at.max(departure);
            let waited = start - departure;
            let arrival = if path.in_outage(departure)
                || path.buffer.is_some_and(|limit| waited > limit)
            {
                None
            } else {
                let service = Duration::from_secs_f64(size as f64 * 8.0 / path.capacity_at(start));
                link_free_at = start + service;
                let lost = path.loss > 0.0
                    && ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < path.loss;
                (!lost).then_some(link_free_at + path.propagation)
            };
            if arrival.is_none() {
                run.lost += 1;
            }
            history.push(Sent {
                id,
                size,
                departure,
                arrival,
            });
        }

        // Receiver feedback: everything up to the newest packet that has arrived.
        if t >= next_feedback {
            next_feedback += path.feedback_interval;
            let newest = history[reported_up_to..]
                .iter()
                .rposition(|s| s.arrival.is_some_and(|a| a <= t))
                .map(|i| reported_up_to + i + 1);
            if let Some(end) = newest {
                for s in &history[reported_up_to..end] {
                    if s.arrival.is_some() {
                        delivered_bytes_since_sample += s.size as u64;
                    }
                }
                if !path.in_outage(t) {
                    feedback_in_flight.push_back((t + path.propagation, reported_up_to, end));
                }
                reported_up_to = end;
            }
        }

        if t >= next_sample {
            next_sample += SAMPLE_INTERVAL;
            run.samples.push(Sample {
                t,
                target,
                queue: link_free_at.saturating_sub(t),
                capacity: path.capacity_at(t),
                goodput: delivered_bytes_since_sample as f64 * 8.0 / SAMPLE_INTERVAL.as_secs_f64(),
                state: handle.map(GoogCcHandle::state),
            });
            delivered_bytes_since_sample = 0;
        }
        t += tick;
    }
    run
}

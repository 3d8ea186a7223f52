//! Fuzzes `PacingController` with arbitrary configurations and operation sequences, asserting
//! the invariants that are cheap to check after every call:
//!
//! - the queue time limit is the clamp of the last request, within [50 ms, 10 s];
//! - byte and packet accounting: enqueued = released + queued, and the stats agree;
//! - a packet is released at the instant of the poll (stale instants count as the latest), never
//!   before it was enqueued, with the payload, stream, kind, size and enqueue instant it went in
//!   with;
//! - nothing leaves while a packet of strictly higher priority waits, and each stream is FIFO
//!   within its priority level;
//! - `next_send_time` is after the latest instant handed in, and absent when the queue is empty;
//! - the adjusted rate never undercuts the pacing rate, and meets the drain rule while packets
//!   wait.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pacer::{PacingConfig, PacingController, PacketKind};
use pacer::pacing::{MAX_QUEUE_TIME_LIMIT, MIN_QUEUE_TIME_LIMIT, clamp_queue_time_limit};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The configuration, every field free.
#[derive(Arbitrary, Debug)]
struct ConfigInput {
    pacing_factor: f64,
    queue_time_limit_ns: u64,
    drain_large_queues: bool,
    burst_interval_us: u32,
    max_burst_bytes: u32,
    max_debt_us: u32,
    pace_audio: bool,
    initial_target_bitrate_bps: u64,
}

/// One operation. Time increments are added to the latest instant before the call.
#[derive(Arbitrary, Debug)]
enum Op {
    /// `count` packets at `+dt_us` microseconds.
    Enqueue {
        dt_us: u16,
        ssrc: u8,
        kind: u8,
        size: u16,
        count: u8,
    },
    SetTarget {
        dt_ns: u32,
        bps: u64,
    },
    SetLimit {
        dt_ns: u32,
        limit_ns: u64,
    },
    PollOnce {
        dt_ns: u32,
    },
    PollAll {
        dt_ns: u32,
    },
    /// Polls until `None`, then follows `next_send_time` for up to `steps` wakes.
    Timer {
        steps: u8,
    },
    /// One poll `back_ns` before the latest instant.
    PollStale {
        back_ns: u32,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    config: ConfigInput,
    ops: Vec<Op>,
}

const KINDS: [PacketKind; 5] = [
    PacketKind::Audio,
    PacketKind::Retransmission,
    PacketKind::Video,
    PacketKind::Fec,
    PacketKind::Padding,
];

fn level(kind: PacketKind) -> usize {
    match kind {
        PacketKind::Audio => 0,
        PacketKind::Retransmission => 1,
        PacketKind::Video | PacketKind::Fec => 2,
        PacketKind::Padding => 3,
    }
}

/// What was enqueued under one id.
struct Sent {
    ssrc: u32,
    kind: PacketKind,
    size: u64,
    at: Instant,
}

struct Harness {
    pacer: PacingController<u64>,
    drain: bool,
    pace_audio: bool,
    latest: Instant,
    requested_limit: Duration,
    sent: Vec<Sent>,
    queued_per_level: [u64; 4],
    last_released_per_stream: HashMap<(u32, usize), u64>,
    enqueued: (u64, u64),
    released: (u64, u64),
}

impl Harness {
    fn check(&self) {
        let limit = self.pacer.queue_time_limit();
        assert!((MIN_QUEUE_TIME_LIMIT..=MAX_QUEUE_TIME_LIMIT).contains(&limit));
        assert_eq!(limit, clamp_queue_time_limit(self.requested_limit));

        let stats = self.pacer.stats(self.latest);
        let (queued_packets, queued_bytes) = (
            self.enqueued.0 - self.released.0,
            self.enqueued.1 - self.released.1,
        );
        assert_eq!(stats.queued_packets as u64, queued_packets);
        assert_eq!(stats.queued_bytes, queued_bytes);
        assert_eq!(stats.packets_sent, self.released.0);
        assert_eq!(stats.bytes_sent, self.released.1);
        assert_eq!(stats.queue_time_limit, limit);
        assert_eq!(self.pacer.is_empty(), queued_packets == 0);

        assert!(stats.adjusted_rate_bps >= stats.pacing_rate_bps);
        if self.drain && queued_bytes > 0 && stats.adjusted_rate_bps < u64::MAX {
            let left = limit
                .saturating_sub(stats.average_queue_time)
                .max(Duration::from_millis(1))
                .as_nanos();
            assert!(
                u128::from(stats.adjusted_rate_bps) * left
                    >= u128::from(queued_bytes) * 8 * 1_000_000_000
            );
        }

        match self.pacer.next_send_time() {
            Some(next) => {
                assert!(
                    next > self.latest,
                    "next send time not after the latest instant"
                );
                assert!(queued_packets > 0, "a next send time with nothing queued");
            }
            None => {
                // Only when nothing is queued, or nothing can leave: no unpaced audio and neither
                // a positive pacing rate nor a positive drain rate.
                let unpaced_audio = !self.pace_audio && self.queued_per_level[0] > 0;
                assert!(
                    queued_packets == 0 || (!unpaced_audio && stats.adjusted_rate_bps == 0),
                    "no next send time with {queued_packets} packets queued"
                );
            }
        }
    }

    fn later(&mut self, dt: Duration) -> Instant {
        self.latest += dt;
        self.latest
    }

    fn poll(&mut self, at: Instant) -> bool {
        let latest_before = self.latest;
        let released = self.pacer.poll_send(at);
        self.latest = self.latest.max(at);
        let Some(released) = released else {
            self.check();
            return false;
        };
        assert_eq!(released.released_at, at.max(latest_before));
        assert!(released.released_at >= released.enqueued_at);
        let id = released.payload;
        let sent = &self.sent[usize::try_from(id).expect("id fits")];
        assert_eq!(
            (sent.ssrc, sent.kind, sent.size, sent.at),
            (
                released.ssrc,
                released.kind,
                released.size_bytes,
                released.enqueued_at
            )
        );
        let own = level(released.kind);
        assert!(
            self.queued_per_level[..own].iter().all(|&n| n == 0),
            "released {:?} while higher priority waits: {:?}",
            released.kind,
            self.queued_per_level
        );
        self.queued_per_level[own] -= 1;
        if let Some(previous) = self
            .last_released_per_stream
            .insert((released.ssrc, own), id)
        {
            assert!(previous < id, "stream {} not FIFO", released.ssrc);
        }
        self.released.0 += 1;
        self.released.1 += released.size_bytes;
        self.check();
        true
    }

    fn poll_all(&mut self, at: Instant) {
        while self.poll(at) {}
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Enqueue {
                dt_us,
                ssrc,
                kind,
                size,
                count,
            } => {
                let count = count % 16;
                if count == 0 {
                    // No call, so no instant handed in.
                    return;
                }
                let at = self.later(Duration::from_micros(u64::from(dt_us)));
                let ssrc = u32::from(ssrc % 4);
                let kind = KINDS[usize::from(kind) % KINDS.len()];
                let size = u64::from(size.max(1));
                for _ in 0..count {
                    let id = self.sent.len() as u64;
                    self.pacer.enqueue(at, ssrc, kind, size, id);
                    self.sent.push(Sent {
                        ssrc,
                        kind,
                        size,
                        at,
                    });
                    self.queued_per_level[level(kind)] += 1;
                    self.enqueued.0 += 1;
                    self.enqueued.1 += size;
                    self.check();
                }
            }
            Op::SetTarget { dt_ns, bps } => {
                let at = self.later(Duration::from_nanos(u64::from(dt_ns)));
                self.pacer.set_target_bitrate(at, bps);
                self.check();
            }
            Op::SetLimit { dt_ns, limit_ns } => {
                let at = self.later(Duration::from_nanos(u64::from(dt_ns)));
                let limit = Duration::from_nanos(limit_ns);
                let returned = self.pacer.set_queue_time_limit(at, limit);
                assert_eq!(
                    returned,
                    limit.clamp(MIN_QUEUE_TIME_LIMIT, MAX_QUEUE_TIME_LIMIT)
                );
                self.requested_limit = limit;
                self.check();
            }
            Op::PollOnce { dt_ns } => {
                let at = self.later(Duration::from_nanos(u64::from(dt_ns)));
                self.poll(at);
            }
            Op::PollAll { dt_ns } => {
                let at = self.later(Duration::from_nanos(u64::from(dt_ns)));
                self.poll_all(at);
            }
            Op::Timer { steps } => {
                self.poll_all(self.latest);
                for _ in 0..steps {
                    let Some(next) = self.pacer.next_send_time() else {
                        break;
                    };
                    self.poll_all(next);
                }
            }
            Op::PollStale { back_ns } => {
                let at = self
                    .latest
                    .checked_sub(Duration::from_nanos(u64::from(back_ns)))
                    .unwrap_or(self.latest);
                self.poll(at);
            }
        }
    }
}

fuzz_target!(|input: Input| {
    let c = &input.config;
    let config = PacingConfig {
        pacing_factor: c.pacing_factor,
        queue_time_limit: Duration::from_nanos(c.queue_time_limit_ns),
        drain_large_queues: c.drain_large_queues,
        burst_interval: Duration::from_micros(u64::from(c.burst_interval_us)),
        max_burst_bytes: u64::from(c.max_burst_bytes),
        max_debt: Duration::from_micros(u64::from(c.max_debt_us)),
        pace_audio: c.pace_audio,
        initial_target_bitrate_bps: c.initial_target_bitrate_bps,
        ..PacingConfig::default()
    };
    let base = Instant::now();
    let mut harness = Harness {
        requested_limit: config.queue_time_limit,
        drain: config.drain_large_queues,
        pace_audio: config.pace_audio,
        pacer: PacingController::new(config, base),
        latest: base,
        sent: Vec::new(),
        queued_per_level: [0; 4],
        last_released_per_stream: HashMap::new(),
        enqueued: (0, 0),
        released: (0, 0),
    };
    harness.check();
    for op in &input.ops {
        harness.apply(op);
    }
});

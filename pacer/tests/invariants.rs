//! Invariants of the sans-I/O pacing controller over random operation sequences.
//!
//! Every test generates a configuration and a sequence of operations (enqueues at non-decreasing
//! instants, target-bitrate changes including 0 and `u64::MAX`, queue-time-limit requests
//! including 0 and far beyond 10 s, hold windows (docs/architecture.md, "Handover-timed
//! actions") starting now or up to 300 ms ahead and lasting up to 300 ms, single polls, polls until `None`, polls a timer would make at
//! `next_send_time`, polls just before the next send time, and polls at stale instants), runs it
//! through [`simulate`], which keeps its own model of the queue and records a trace, and asserts
//! one invariant over that trace. The model is the test's, not the crate's: priority levels,
//! FIFO order and byte totals are tracked here independently.

use pacer::pacing::{MAX_QUEUE_TIME_LIMIT, MIN_QUEUE_TIME_LIMIT, clamp_queue_time_limit};
use pacer::{PacerStats, PacingConfig, PacingController, PacketKind};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Offsets past the latest instant at which every snapshot also reads the stats: the drain rule
/// must hold at any instant, not only at the ones handed in.
const PROBES: [Duration; 5] = [
    Duration::ZERO,
    Duration::from_millis(3),
    Duration::from_millis(400),
    Duration::from_millis(2500),
    Duration::from_secs(12),
];

/// One step of a random run. Every `dt` is added to the latest instant before the call.
#[derive(Debug, Clone)]
enum Op {
    /// `count` packets of one stream, kind and size, at one instant.
    Enqueue {
        dt: u64,
        ssrc: u32,
        kind: PacketKind,
        size: u64,
        count: u8,
    },
    /// A new target bitrate.
    SetTarget { dt: u64, bps: u64 },
    /// A new queue time limit, as requested (unclamped).
    SetLimit { dt: u64, limit: Duration },
    /// One more hold window `[at + offset, at + offset + duration)` (ns); the pacer is handed
    /// every window so far.
    Hold { dt: u64, offset: u64, duration: u64 },
    /// A single `poll_send`.
    PollOnce { dt: u64 },
    /// `poll_send` until it returns `None`.
    PollAll { dt: u64 },
    /// Polls as a timer would: until `None` at the latest instant, then up to `steps` wakes at
    /// `next_send_time`, polling until `None` at each.
    Timer { steps: u8 },
    /// One poll at an instant `frac / u16::MAX` of the way from the last `None` poll to just
    /// before the next send time it left behind.
    PollEarly { frac: u16 },
    /// One poll `back` ns before the latest instant handed in.
    PollStale { back: u64 },
}

/// A packet in the test's model of the queue.
#[derive(Debug, Clone, Copy)]
struct Queued {
    ssrc: u32,
    kind: PacketKind,
    size: u64,
    at: Instant,
}

/// Running totals of packets and bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Totals {
    packets: u64,
    bytes: u64,
}

impl Totals {
    fn add(&mut self, size: u64) {
        self.packets += 1;
        self.bytes += size;
    }
}

/// The state after one call into the pacer.
#[derive(Debug, Clone)]
struct Snapshot {
    /// The latest instant handed in so far.
    latest: Instant,
    /// `stats(latest + probe)` for each of [`PROBES`].
    probes: [PacerStats; PROBES.len()],
    next: Option<Instant>,
    limit: Duration,
    /// The last limit requested (initial configuration or `set_queue_time_limit`), unclamped.
    requested_limit: Duration,
    queued: Totals,
    enqueued: Totals,
    released: Totals,
    unpaced_audio_queued: bool,
    /// The latest end of a hold window that starts within one debt cap of `latest`: the next
    /// send time may lie as far as that.
    hold_reach: Option<Instant>,
}

/// One released packet, with what the test knew just before the poll that released it.
#[derive(Debug, Clone)]
struct Release {
    id: u64,
    ssrc: u32,
    kind: PacketKind,
    size: u64,
    enqueued_at: Instant,
    released_at: Instant,
    /// The instant handed to `poll_send`.
    polled_at: Instant,
    /// The latest instant handed in before that poll.
    latest_before: Instant,
    /// `stats(polled_at)` just before the poll: its adjusted rate is the rate the packet is
    /// charged at.
    before: PacerStats,
    /// Whether the model had this packet, with this stream, kind, size and enqueue instant.
    matches_model: bool,
    /// Whether the model held a packet of strictly higher priority at the poll.
    higher_priority_waiting: bool,
    /// Whether the model held an earlier packet of the same SSRC and priority level.
    earlier_of_same_stream_and_level_waiting: bool,
    /// Audio while audio is unpaced: not charged to the debt.
    unpaced: bool,
    /// Whether the release instant lies inside a hold window.
    inside_hold: bool,
}

/// A poll strictly before the next send time left by a `None` poll, with nothing in between.
#[derive(Debug, Clone)]
struct EarlyPoll {
    none_at: Instant,
    next: Option<Instant>,
    at: Instant,
    released: Option<PacketKind>,
    unpaced_audio_queued: bool,
}

/// A timer wake at `next_send_time`: how many packets left.
#[derive(Debug, Clone)]
struct Wake {
    at: Instant,
    released: usize,
}

/// Everything a run recorded.
#[derive(Debug, Default)]
struct Trace {
    snapshots: Vec<Snapshot>,
    releases: Vec<Release>,
    early_polls: Vec<EarlyPoll>,
    /// `(requested, returned)` for every `set_queue_time_limit`.
    limit_requests: Vec<(Duration, Duration)>,
    wakes: Vec<Wake>,
    /// After the operations the timer is followed until the queue empties (or nothing can
    /// leave): whether it emptied, and whether anything could leave (a positive pacing rate or
    /// the drain rule).
    emptied_at_end: bool,
    could_drain: bool,
}

/// Drives one pacer through a sequence of operations, keeping the test's own model.
struct Sim {
    pacer: PacingController<u64>,
    config: PacingConfig,
    base: Instant,
    latest: Instant,
    next_id: u64,
    queued: BTreeMap<u64, Queued>,
    enqueued: Totals,
    released: Totals,
    requested_limit: Duration,
    /// The instant of the last poll that returned `None`, and the next send time read right
    /// after it; cleared by any other call.
    last_none: Option<(Instant, Option<Instant>)>,
    /// Every hold window handed in so far.
    holds: Vec<(Instant, Instant)>,
    trace: Trace,
}

fn level(kind: PacketKind) -> u8 {
    match kind {
        PacketKind::Audio => 0,
        PacketKind::Retransmission => 1,
        PacketKind::Video | PacketKind::Fec => 2,
        PacketKind::Padding => 3,
    }
}

fn ns(d: Duration) -> u128 {
    d.as_nanos()
}

impl Sim {
    fn new(config: PacingConfig, base: Instant) -> Self {
        let mut sim = Self {
            pacer: PacingController::new(config.clone(), base),
            requested_limit: config.queue_time_limit,
            config,
            base,
            latest: base,
            next_id: 0,
            queued: BTreeMap::new(),
            enqueued: Totals::default(),
            released: Totals::default(),
            last_none: None,
            holds: Vec::new(),
            trace: Trace::default(),
        };
        sim.observe();
        sim
    }

    fn unpaced_audio_queued(&self) -> bool {
        !self.config.pace_audio && self.queued.values().any(|q| q.kind == PacketKind::Audio)
    }

    fn queued_totals(&self) -> Totals {
        let mut totals = Totals::default();
        for q in self.queued.values() {
            totals.add(q.size);
        }
        totals
    }

    fn inside_hold(&self, at: Instant) -> bool {
        self.holds
            .iter()
            .any(|&(start, end)| start <= at && at < end)
    }

    fn observe(&mut self) {
        let latest = self.latest;
        let reach = latest + self.config.max_debt;
        let hold_reach = self
            .holds
            .iter()
            .filter(|&&(start, end)| start <= reach && end > start)
            .map(|&(_, end)| end)
            .max();
        let probes = PROBES.map(|probe| self.pacer.stats(latest + probe));
        self.trace.snapshots.push(Snapshot {
            latest,
            probes,
            next: self.pacer.next_send_time(),
            limit: self.pacer.queue_time_limit(),
            requested_limit: self.requested_limit,
            queued: self.queued_totals(),
            enqueued: self.enqueued,
            released: self.released,
            unpaced_audio_queued: self.unpaced_audio_queued(),
            hold_reach,
        });
    }

    fn later(&mut self, dt: u64) -> Instant {
        self.latest += Duration::from_nanos(dt);
        self.latest
    }

    /// One `poll_send(at)`; returns what left.
    fn poll(&mut self, at: Instant) -> Option<PacketKind> {
        let before = self.pacer.stats(at);
        let latest_before = self.latest;
        let result = self.pacer.poll_send(at);
        self.latest = self.latest.max(at);
        let kind = match result {
            None => {
                self.last_none = Some((self.latest, self.pacer.next_send_time()));
                None
            }
            Some(released) => {
                self.last_none = None;
                let id = released.payload;
                let modelled = self.queued.remove(&id);
                let matches_model = modelled.is_some_and(|q| {
                    (q.ssrc, q.kind, q.size, q.at)
                        == (
                            released.ssrc,
                            released.kind,
                            released.size_bytes,
                            released.enqueued_at,
                        )
                });
                let own_level = level(released.kind);
                let higher_priority_waiting =
                    self.queued.values().any(|q| level(q.kind) < own_level);
                let earlier_of_same_stream_and_level_waiting = self
                    .queued
                    .range(..id)
                    .any(|(_, q)| q.ssrc == released.ssrc && level(q.kind) == own_level);
                self.released.add(released.size_bytes);
                self.trace.releases.push(Release {
                    id,
                    ssrc: released.ssrc,
                    kind: released.kind,
                    size: released.size_bytes,
                    enqueued_at: released.enqueued_at,
                    released_at: released.released_at,
                    polled_at: at,
                    latest_before,
                    before,
                    matches_model,
                    higher_priority_waiting,
                    earlier_of_same_stream_and_level_waiting,
                    unpaced: released.kind == PacketKind::Audio && !self.config.pace_audio,
                    inside_hold: self.inside_hold(released.released_at),
                });
                Some(released.kind)
            }
        };
        self.observe();
        kind
    }

    /// Polls at `at` until `None`; returns how many left.
    fn poll_all(&mut self, at: Instant) -> usize {
        let mut count = 0;
        while self.poll(at).is_some() {
            count += 1;
        }
        count
    }

    /// Polls until `None` at the latest instant, then follows `next_send_time` for up to `steps`
    /// wakes.
    fn timer(&mut self, steps: usize) {
        self.poll_all(self.latest);
        for _ in 0..steps {
            let Some(next) = self.pacer.next_send_time() else {
                break;
            };
            let released = self.poll_all(next);
            self.trace.wakes.push(Wake { at: next, released });
        }
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Enqueue {
                dt,
                ssrc,
                kind,
                size,
                count,
            } => {
                let at = self.later(dt);
                for _ in 0..count {
                    let id = self.next_id;
                    self.next_id += 1;
                    self.pacer.enqueue(at, ssrc, kind, size, id);
                    self.queued.insert(
                        id,
                        Queued {
                            ssrc,
                            kind,
                            size,
                            at,
                        },
                    );
                    self.enqueued.add(size);
                    self.last_none = None;
                    self.observe();
                }
            }
            Op::SetTarget { dt, bps } => {
                let at = self.later(dt);
                self.pacer.set_target_bitrate(at, bps);
                self.last_none = None;
                self.observe();
            }
            Op::SetLimit { dt, limit } => {
                let at = self.later(dt);
                let returned = self.pacer.set_queue_time_limit(at, limit);
                self.requested_limit = limit;
                self.trace.limit_requests.push((limit, returned));
                self.last_none = None;
                self.observe();
            }
            Op::Hold {
                dt,
                offset,
                duration,
            } => {
                let at = self.later(dt);
                let start = at + Duration::from_nanos(offset);
                self.holds
                    .push((start, start + Duration::from_nanos(duration)));
                self.pacer.set_hold_windows(at, self.holds.iter().copied());
                self.last_none = None;
                self.observe();
            }
            Op::PollOnce { dt } => {
                let at = self.later(dt);
                self.poll(at);
            }
            Op::PollAll { dt } => {
                let at = self.later(dt);
                self.poll_all(at);
            }
            Op::Timer { steps } => self.timer(usize::from(steps)),
            Op::PollEarly { frac } => {
                let Some((none_at, next)) = self.last_none else {
                    return;
                };
                let at = match next {
                    // Anywhere in [none_at, next - 1 ns].
                    Some(next) => {
                        let span = next.duration_since(none_at).as_nanos().saturating_sub(1);
                        let offset = span * u128::from(frac) / u128::from(u16::MAX);
                        none_at + Duration::from_nanos(offset as u64)
                    }
                    // Nothing can leave: any later instant will do.
                    None => none_at + Duration::from_micros(u64::from(frac)),
                };
                let unpaced_audio_queued = self.unpaced_audio_queued();
                let released = self.poll(at);
                self.trace.early_polls.push(EarlyPoll {
                    none_at,
                    next,
                    at,
                    released,
                    unpaced_audio_queued,
                });
            }
            Op::PollStale { back } => {
                let at = self
                    .latest
                    .checked_sub(Duration::from_nanos(back))
                    .unwrap_or(self.base);
                self.poll(at);
            }
        }
    }

    /// Follows the timer until the queue is empty or nothing can leave. Every wake releases at
    /// least one packet (asserted elsewhere), so `packets + 1` wakes are enough.
    fn finish(mut self) -> Trace {
        let stats = self.pacer.stats(self.latest);
        self.trace.could_drain = stats.pacing_rate_bps > 0 || self.config.drain_large_queues;
        let steps = self.queued.len() + 1;
        self.timer(steps);
        self.trace.emptied_at_end = self.pacer.is_empty() && self.queued.is_empty();
        self.trace
    }
}

fn simulate(config: &PacingConfig, ops: &[Op], base: Instant) -> Trace {
    let mut sim = Sim::new(config.clone(), base);
    for op in ops {
        sim.apply(op);
    }
    sim.finish()
}

/// Runs the enqueues, rate changes and limit changes of `ops` as a timer-driven driver would:
/// before each call, every wake at `next_send_time` up to its instant; after it, polls until
/// `None`. With `pokes`, the `PollOnce`/`PollAll` steps become extra polls (after the wakes due
/// by then); without, they only let time pass. Returns each packet's release instant.
fn schedule_with_or_without_pokes(
    config: &PacingConfig,
    ops: &[Op],
    base: Instant,
    pokes: bool,
) -> Vec<(u64, Instant)> {
    let mut pacer = PacingController::new(config.clone(), base);
    let mut released = Vec::new();
    let mut poll_all = |pacer: &mut PacingController<u64>, at: Instant| {
        while let Some(packet) = pacer.poll_send(at) {
            released.push((packet.payload, packet.released_at));
        }
    };
    let fire_wakes_up_to =
        |pacer: &mut PacingController<u64>,
         at: Instant,
         poll_all: &mut dyn FnMut(&mut PacingController<u64>, Instant)| {
            while let Some(next) = pacer.next_send_time().filter(|&next| next <= at) {
                poll_all(pacer, next);
            }
        };
    let mut now = base;
    let mut next_id = 0;
    let mut holds = Vec::new();
    for op in ops {
        match *op {
            Op::Enqueue {
                dt,
                ssrc,
                kind,
                size,
                count,
            } => {
                now += Duration::from_nanos(dt);
                fire_wakes_up_to(&mut pacer, now, &mut poll_all);
                for _ in 0..count {
                    pacer.enqueue(now, ssrc, kind, size, next_id);
                    next_id += 1;
                }
                poll_all(&mut pacer, now);
            }
            Op::SetTarget { dt, bps } => {
                now += Duration::from_nanos(dt);
                fire_wakes_up_to(&mut pacer, now, &mut poll_all);
                pacer.set_target_bitrate(now, bps);
                poll_all(&mut pacer, now);
            }
            Op::SetLimit { dt, limit } => {
                now += Duration::from_nanos(dt);
                fire_wakes_up_to(&mut pacer, now, &mut poll_all);
                pacer.set_queue_time_limit(now, limit);
                poll_all(&mut pacer, now);
            }
            Op::Hold {
                dt,
                offset,
                duration,
            } => {
                now += Duration::from_nanos(dt);
                fire_wakes_up_to(&mut pacer, now, &mut poll_all);
                let start = now + Duration::from_nanos(offset);
                holds.push((start, start + Duration::from_nanos(duration)));
                pacer.set_hold_windows(now, holds.iter().copied());
                poll_all(&mut pacer, now);
            }
            Op::PollOnce { dt } | Op::PollAll { dt } => {
                now += Duration::from_nanos(dt);
                if pokes {
                    fire_wakes_up_to(&mut pacer, now, &mut poll_all);
                    poll_all(&mut pacer, now);
                }
            }
            Op::Timer { .. } | Op::PollEarly { .. } | Op::PollStale { .. } => {}
        }
    }
    for _ in 0..=next_id {
        let Some(next) = pacer.next_send_time() else {
            break;
        };
        poll_all(&mut pacer, next);
    }
    released
}

// ----- strategies -----

fn dt() -> impl Strategy<Value = u64> + Clone {
    prop_oneof![
        3 => Just(0u64),
        1 => Just(1u64),
        2 => 0..1_000_000u64,
        3 => 0..100_000_000u64,
        1 => 0..3_000_000_000u64,
    ]
}

fn kind() -> impl Strategy<Value = PacketKind> + Clone {
    prop_oneof![
        Just(PacketKind::Audio),
        Just(PacketKind::Retransmission),
        Just(PacketKind::Video),
        Just(PacketKind::Fec),
        Just(PacketKind::Padding),
    ]
}

fn ssrc() -> impl Strategy<Value = u32> + Clone {
    prop_oneof![Just(1u32), Just(2), Just(3), Just(0xDEAD_BEEF)]
}

/// Any target bitrate, including 0, 1 and `u64::MAX`.
fn any_bps() -> BoxedStrategy<u64> {
    prop_oneof![
        Just(0u64),
        Just(1u64),
        1..50_000u64,
        50_000..5_000_000u64,
        5_000_000..2_000_000_000u64,
        Just(u64::MAX),
        any::<u64>(),
    ]
    .boxed()
}

/// Target bitrates at which one 1500-byte packet owes at most 240 ms, so the 500-ms debt cap
/// (which only ever forgives debt) never bites after a packet sent inside a 40-ms burst window.
fn paced_bps() -> BoxedStrategy<u64> {
    prop_oneof![
        100_000..5_000_000u64,
        5_000_000..2_000_000_000u64,
        Just(u64::MAX),
    ]
    .boxed()
}

fn limit() -> impl Strategy<Value = Duration> + Clone {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::from_millis(1)),
        Just(MIN_QUEUE_TIME_LIMIT - Duration::from_nanos(1)),
        Just(MIN_QUEUE_TIME_LIMIT),
        Just(Duration::from_secs(2)),
        Just(MAX_QUEUE_TIME_LIMIT),
        Just(MAX_QUEUE_TIME_LIMIT + Duration::from_nanos(1)),
        Just(Duration::from_secs(3600)),
        Just(Duration::MAX),
        (0..12_000_000_000u64).prop_map(Duration::from_nanos),
    ]
}

fn op(bps: BoxedStrategy<u64>, rate_and_limit_changes: bool) -> BoxedStrategy<Op> {
    let enqueue =
        (dt(), ssrc(), kind(), 1..=1500u64, 1..=8u8).prop_map(|(dt, ssrc, kind, size, count)| {
            Op::Enqueue {
                dt,
                ssrc,
                kind,
                size,
                count,
            }
        });
    let polls = prop_oneof![
        2 => dt().prop_map(|dt| Op::PollOnce { dt }),
        2 => dt().prop_map(|dt| Op::PollAll { dt }),
        3 => (1..=24u8).prop_map(|steps| Op::Timer { steps }),
        2 => prop_oneof![Just(0u16), Just(1u16), Just(u16::MAX), any::<u16>()]
            .prop_map(|frac| Op::PollEarly { frac }),
        1 => (0..50_000_000u64).prop_map(|back| Op::PollStale { back }),
    ];
    let hold = (
        dt(),
        prop_oneof![Just(0u64), 0..300_000_000u64],
        prop_oneof![Just(0u64), Just(1u64), 0..300_000_000u64],
    )
        .prop_map(|(dt, offset, duration)| Op::Hold {
            dt,
            offset,
            duration,
        });
    if rate_and_limit_changes {
        prop_oneof![
            6 => enqueue,
            1 => (dt(), bps).prop_map(|(dt, bps)| Op::SetTarget { dt, bps }),
            1 => (dt(), limit()).prop_map(|(dt, limit)| Op::SetLimit { dt, limit }),
            1 => hold,
            6 => polls,
        ]
        .boxed()
    } else {
        prop_oneof![6 => enqueue, 1 => hold, 6 => polls].boxed()
    }
}

fn config(
    bps: BoxedStrategy<u64>,
    drain: BoxedStrategy<bool>,
) -> impl Strategy<Value = PacingConfig> {
    (
        prop_oneof![Just(1.0), Just(1.1), Just(2.5), Just(0.5)],
        limit(),
        drain,
        any::<bool>(),
        bps,
    )
        .prop_map(
            |(pacing_factor, queue_time_limit, drain_large_queues, pace_audio, bps)| PacingConfig {
                pacing_factor,
                queue_time_limit,
                drain_large_queues,
                pace_audio,
                initial_target_bitrate_bps: bps,
                ..PacingConfig::default()
            },
        )
}

/// Any configuration and any operations.
fn any_run() -> impl Strategy<Value = (PacingConfig, Vec<Op>)> {
    (
        config(any_bps(), any::<bool>().boxed()),
        prop::collection::vec(op(any_bps(), true), 1..80),
    )
}

/// Rates of at least 100 kbit/s (before the pacing factor), changing at will, with or without
/// draining.
fn paced_run() -> impl Strategy<Value = (PacingConfig, Vec<Op>)> {
    (
        config(paced_bps(), any::<bool>().boxed()),
        prop::collection::vec(op(paced_bps(), true), 1..80),
    )
}

/// One constant rate of 100 kbit/s to 1 Gbit/s, no limit changes, draining off.
fn constant_rate_run() -> impl Strategy<Value = (PacingConfig, Vec<Op>)> {
    (
        config((100_000..1_000_000_000u64).boxed(), Just(false).boxed()),
        prop::collection::vec(op(paced_bps(), false), 1..80),
    )
}

fn run(config: &PacingConfig, ops: &[Op]) -> Trace {
    simulate(config, ops, Instant::now())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/invariants.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_limit_in_force_is_always_within_fifty_milliseconds_and_ten_seconds_and_is_the_clamp_of_the_last_request(
        (config, ops) in any_run()
    ) {
        let trace = run(&config, &ops);
        for &(requested, returned) in &trace.limit_requests {
            prop_assert_eq!(returned, requested.clamp(MIN_QUEUE_TIME_LIMIT, MAX_QUEUE_TIME_LIMIT));
        }
        for snapshot in &trace.snapshots {
            prop_assert!((MIN_QUEUE_TIME_LIMIT..=MAX_QUEUE_TIME_LIMIT).contains(&snapshot.limit));
            prop_assert_eq!(snapshot.limit, clamp_queue_time_limit(snapshot.requested_limit));
            for stats in &snapshot.probes {
                prop_assert_eq!(stats.queue_time_limit, snapshot.limit);
            }
        }
    }

    #[test]
    fn the_drain_rate_always_empties_the_queue_by_the_limit_and_never_undercuts_the_pacing_rate(
        (config, ops) in any_run()
    ) {
        let trace = run(&config, &ops);
        for snapshot in &trace.snapshots {
            for stats in &snapshot.probes {
                let adjusted = u128::from(stats.adjusted_rate_bps);
                prop_assert!(stats.adjusted_rate_bps >= stats.pacing_rate_bps, "{stats:?}");
                if stats.queued_bytes == 0 || !config.drain_large_queues {
                    prop_assert_eq!(stats.adjusted_rate_bps, stats.pacing_rate_bps);
                    continue;
                }
                let left = ns(stats.queue_time_limit.saturating_sub(stats.average_queue_time))
                    .max(ns(Duration::from_millis(1)));
                let bits_ns = u128::from(stats.queued_bytes) * 8 * NANOS_PER_SEC;
                prop_assert!(
                    adjusted * left >= bits_ns,
                    "{adjusted} bit/s x {left} ns < {} bytes: {stats:?}", stats.queued_bytes
                );
                // And it drains no faster than that: the rule is max(pacing, Q / time left).
                let needed = bits_ns.div_ceil(left);
                prop_assert_eq!(adjusted, needed.max(u128::from(stats.pacing_rate_bps)));
            }
        }
    }

    #[test]
    fn every_packet_leaves_at_the_instant_of_the_poll_that_released_it_and_never_before_it_was_enqueued(
        (config, ops) in any_run()
    ) {
        let trace = run(&config, &ops);
        for release in &trace.releases {
            prop_assert!(release.matches_model, "{release:?}");
            // Stale instants are taken as the latest one handed in.
            prop_assert_eq!(release.released_at, release.polled_at.max(release.latest_before));
            prop_assert!(release.released_at >= release.enqueued_at, "{release:?}");
        }
    }

    #[test]
    fn a_poll_from_the_instant_of_an_empty_poll_up_to_the_next_send_time_releases_nothing_but_unpaced_audio(
        (config, ops) in any_run()
    ) {
        let trace = run(&config, &ops);
        for early in &trace.early_polls {
            prop_assert!(early.at >= early.none_at, "{early:?}");
            if let Some(next) = early.next {
                prop_assert!(early.at < next, "{early:?}");
            }
            if let Some(kind) = early.released {
                prop_assert!(early.unpaced_audio_queued, "{early:?}");
                prop_assert_eq!(kind, PacketKind::Audio);
            }
        }
    }

    #[test]
    fn paced_send_time_owed_never_runs_ahead_of_the_clock_by_a_burst_window_whatever_the_rate_history(
        (config, ops) in paced_run()
    ) {
        // Each paced packet owes size x 8 / adjusted rate (rounded up) at the rate it left at; a
        // packet may leave only while the debt is under one burst window (at most 40 ms), and
        // debt is repaid no faster than the clock. So before the n-th paced release at s_n,
        // the time owed by the earlier ones is under s_n + 40 ms.
        let trace = run(&config, &ops);
        let base = trace.snapshots[0].latest;
        let burst = ns(config.burst_interval);
        let mut owed_before: u128 = 0;
        for release in trace.releases.iter().filter(|r| !r.unpaced) {
            let adjusted = u128::from(release.before.adjusted_rate_bps);
            prop_assert!(adjusted > 0);
            let owed = (u128::from(release.size) * 8 * NANOS_PER_SEC).div_ceil(adjusted);
            // Precondition of the bound: the 500-ms debt cap never forgave anything.
            prop_assert!(owed + burst <= ns(config.max_debt), "owed {owed} ns");
            let elapsed = ns(release.released_at - base);
            prop_assert!(
                owed_before < elapsed + burst,
                "{owed_before} ns owed before packet {} released at {elapsed} ns", release.id
            );
            owed_before += owed;
        }
    }

    #[test]
    fn at_a_constant_rate_without_draining_paced_bytes_released_by_any_instant_stay_within_rate_times_time_plus_one_burst_and_one_packet(
        (config, ops) in constant_rate_run()
    ) {
        let trace = run(&config, &ops);
        let base = trace.snapshots[0].latest;
        let rate = u128::from(trace.snapshots[0].probes[0].pacing_rate_bps);
        // One burst window's worth at the rate: min(40 ms, 63 000 bytes).
        let burst_bits_ns = (rate * ns(config.burst_interval))
            .min(u128::from(config.max_burst_bytes) * 8 * NANOS_PER_SEC);
        let mut bytes: u128 = 0;
        for release in trace.releases.iter().filter(|r| !r.unpaced) {
            prop_assert_eq!(u128::from(release.before.adjusted_rate_bps), rate);
            bytes += u128::from(release.size);
            let elapsed = ns(release.released_at - base);
            prop_assert!(
                bytes * 8 * NANOS_PER_SEC
                    < rate * elapsed + burst_bits_ns + u128::from(release.size) * 8 * NANOS_PER_SEC,
                "{bytes} bytes by {elapsed} ns at {rate} bit/s"
            );
        }
    }

    #[test]
    fn every_byte_and_packet_enqueued_is_either_released_or_still_queued(
        (config, ops) in any_run()
    ) {
        let trace = run(&config, &ops);
        for snapshot in &trace.snapshots {
            prop_assert_eq!(snapshot.enqueued.bytes, snapshot.released.bytes + snapshot.queued.bytes);
            prop_assert_eq!(
                snapshot.enqueued.packets,
                snapshot.released.packets + snapshot.queued.packets
            );
            for stats in &snapshot.probes {
                prop_assert_eq!(stats.queued_bytes, snapshot.queued.bytes);
                prop_assert_eq!(stats.queued_packets as u64, snapshot.queued.packets);
                prop_assert_eq!(stats.bytes_sent, snapshot.released.bytes);
                prop_assert_eq!(stats.packets_sent, snapshot.released.packets);
            }
        }
    }

    #[test]
    fn the_next_send_time_is_after_the_latest_instant_within_the_debt_cap_and_absent_only_when_nothing_can_leave(
        (config, ops) in any_run()
    ) {
        let trace = run(&config, &ops);
        for snapshot in &trace.snapshots {
            let stats = &snapshot.probes[0];
            let can_leave = snapshot.unpaced_audio_queued
                || stats.pacing_rate_bps > 0
                || config.drain_large_queues;
            match snapshot.next {
                None => prop_assert!(
                    snapshot.queued.packets == 0 || !can_leave,
                    "no next send time with {} packets queued: {stats:?}", snapshot.queued.packets
                ),
                Some(next) => {
                    prop_assert!(snapshot.queued.packets > 0 && can_leave, "{stats:?}");
                    prop_assert!(next > snapshot.latest);
                    // Within the debt cap, or at the end of a hold that the debt cap reaches.
                    let cap = snapshot.latest + config.max_debt.max(Duration::from_nanos(1));
                    prop_assert!(
                        next <= cap.max(snapshot.hold_reach.unwrap_or(cap)),
                        "next {:?} after the latest, hold reach {:?}",
                        next - snapshot.latest,
                        snapshot.hold_reach.map(|r| r.saturating_duration_since(snapshot.latest))
                    );
                }
            }
        }
    }

    #[test]
    fn every_wake_at_the_next_send_time_releases_something_and_following_the_timer_empties_any_queue_that_can_drain(
        (config, ops) in any_run()
    ) {
        let trace = run(&config, &ops);
        for wake in &trace.wakes {
            prop_assert!(wake.released > 0, "a wasted wake at {:?}", wake.at);
        }
        if trace.could_drain {
            prop_assert!(trace.emptied_at_end);
        }
    }

    #[test]
    fn the_same_operations_give_the_same_schedule_on_every_run_and_from_any_base_instant(
        (config, ops) in any_run()
    ) {
        let base = Instant::now();
        let schedule = |trace: &Trace, base: Instant| {
            let releases: Vec<_> = trace
                .releases
                .iter()
                .map(|r| (r.id, r.ssrc, r.kind, r.size, r.enqueued_at - base, r.released_at - base))
                .collect();
            let snapshots: Vec<_> = trace
                .snapshots
                .iter()
                .map(|s| {
                    // Stats carry the instant they describe: compare it as an offset.
                    let probes = s.probes.map(|p| {
                        (p.at.map(|at| at - base), PacerStats { at: None, ..p })
                    });
                    (s.latest - base, s.next.map(|n| n - base), probes)
                })
                .collect();
            (releases, snapshots)
        };
        let first = schedule(&simulate(&config, &ops, base), base);
        let again = schedule(&simulate(&config, &ops, base), base);
        prop_assert!(first == again, "two runs from the same base differ");
        let later_base = base + Duration::from_secs(3600);
        let shifted = schedule(&simulate(&config, &ops, later_base), later_base);
        prop_assert!(first == shifted, "a run from another base instant differs");
    }

    #[test]
    fn inside_a_hold_window_only_audio_and_retransmissions_leave(
        (config, ops) in any_run()
    ) {
        let trace = run(&config, &ops);
        for release in trace.releases.iter().filter(|r| r.inside_hold) {
            prop_assert!(
                matches!(release.kind, PacketKind::Audio | PacketKind::Retransmission),
                "{release:?}"
            );
        }
    }

    #[test]
    fn a_packet_leaves_only_when_nothing_of_higher_priority_waits_and_each_stream_is_fifo_within_its_priority(
        (config, ops) in any_run()
    ) {
        let trace = run(&config, &ops);
        for release in &trace.releases {
            prop_assert!(!release.higher_priority_waiting, "{release:?}");
            prop_assert!(!release.earlier_of_same_stream_and_level_waiting, "{release:?}");
        }
    }
    #[test]
    fn extra_polls_between_the_timer_wakes_never_change_the_release_schedule(
        (config, ops) in any_run()
    ) {
        let base = Instant::now();
        let timer_only = schedule_with_or_without_pokes(&config, &ops, base, false);
        let poked = schedule_with_or_without_pokes(&config, &ops, base, true);
        prop_assert_eq!(poked, timer_only);
    }
}

//! A one-direction, sans-I/O link model in integer virtual time.
//!
//! A packet enters a [`Link`] at `now` and either leaves at a computed instant or is dropped,
//! with the reason recorded ([`Verdict`]). The link never reads a clock and owns no timer: the
//! delivery instant is computed when the packet is sent, so a virtual-time simulator and a
//! real-time relay drive the same code ([`InstantLink`] adapts it to [`std::time::Instant`]s).
//! A run is fully specified by its [`LinkConfig`], its seed and the sequence of sends
//! (the same inputs give the same verdicts on every platform).
//!
//! # Path of a packet
//!
//! 1. **Entry** at `now` (clamped to be non-decreasing across calls). A packet larger than
//!    [`MAX_PACKET_BYTES`] is dropped ([`DropReason::Oversize`]). During a handover outage in
//!    [`OutageMode::Drop`] it is dropped ([`DropReason::Outage`]).
//! 2. **Bottleneck buffer**, drop-tail ([`Buffer`]): it holds every packet that has entered and
//!    not yet left the bottleneck, including the one being transmitted. A packet that does not
//!    fit is dropped ([`DropReason::BufferFull`]).
//! 3. **Bottleneck**: a FIFO served by the [`Capacity`] process (Mahimahi delivery opportunities
//!    or a fluid rate, byte-accurate; see [`capacity`](self::Capacity) for the exact rule),
//!    with handover outages (no service) and capacity changes layered on top. A packet that
//!    would never be served (zero capacity for ever after) is dropped
//!    ([`DropReason::NoCapacity`]).
//! 4. **Loss**, decided when the packet leaves the bottleneck (on the radio hop, so a lost
//!    packet used its capacity and buffer space): the random [`Loss`] process
//!    ([`DropReason::RandomLoss`]), then any handover loss burst or [`LossProfile`] step in
//!    force, a handover's or a slot boundary's ([`DropReason::BurstLoss`]). Both are seeded
//!    ChaCha8 streams.
//! 5. **Propagation**: the one-way [`Delay`] at the instant the packet leaves the bottleneck,
//!    plus handover delay steps. Packets are not reordered unless
//!    [`LinkConfig::allow_reordering`] is set: a packet is never delivered before the one that
//!    entered ahead of it.
//!
//! # Time
//!
//! [`Time`]: `u64` nanoseconds since the link's epoch (the caller's choice: the start of a call).
//! Spans are [`std::time::Duration`]. See [`time`](self::Time).
//!
//! # Readers
//!
//! [`readers`] loads the trace formats of the field (Mahimahi, LeoReplayer delay, `lagos.csv`,
//! the mmsys24 ping TSV) with errors that name the file, line and field.

mod capacity;
mod delay;
pub mod geometry;
mod handover;
mod loss;
mod loss_profile;
pub mod readers;
mod series;
mod stats;
mod time;

pub use capacity::{Capacity, MAHIMAHI_OPPORTUNITY_BYTES, MAX_PACKET_BYTES, MahimahiTrace};
pub use delay::Delay;
pub use handover::{CapacityChange, DelayChange, HandoverEffect, HandoverEvent, OutageMode};
pub use loss::{GilbertElliott, Loss};
pub use loss_profile::LossProfile;
pub use series::{DelaySeries, Interpolation, LossSeries, RateSeries, SeriesEnd};
pub use stats::{DropCounts, LinkStats, MAX_STATS_SECONDS, SecondReport, SecondStats};
pub use time::Time;

use capacity::Server;
use handover::Compiled;
use loss::LossState;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::RngCore;
use serde::Serialize;
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use time::NANOS_PER_SEC;

/// Why a packet did not get through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// The bottleneck buffer was full (drop-tail).
    BufferFull,
    /// The random loss process ([`Loss`]) lost it.
    RandomLoss,
    /// A handover loss burst or a loss profile (a handover's or a slot boundary's) lost it.
    BurstLoss,
    /// It entered during a handover outage in [`OutageMode::Drop`].
    Outage,
    /// The capacity process offers no service ever again (zero capacity until the end of time).
    NoCapacity,
    /// It was larger than [`MAX_PACKET_BYTES`].
    Oversize,
}

/// What happened to a packet. `T` is the time base: [`Time`] for [`Link`], [`Instant`] for
/// [`InstantLink`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict<T = Time> {
    /// It leaves the link (reaches the far end) at `at`.
    Delivered {
        /// Delivery instant.
        at: T,
    },
    /// It is dropped.
    Dropped {
        /// Why.
        reason: DropReason,
    },
}

impl<T: Copy> Verdict<T> {
    /// The delivery instant, if delivered.
    pub fn delivered_at(&self) -> Option<T> {
        match self {
            Verdict::Delivered { at } => Some(*at),
            Verdict::Dropped { .. } => None,
        }
    }

    /// The drop reason, if dropped.
    pub fn drop_reason(&self) -> Option<DropReason> {
        match self {
            Verdict::Delivered { .. } => None,
            Verdict::Dropped { reason } => Some(*reason),
        }
    }

    /// The same verdict in another time base.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Verdict<U> {
        match self {
            Verdict::Delivered { at } => Verdict::Delivered { at: f(at) },
            Verdict::Dropped { reason } => Verdict::Dropped { reason },
        }
    }
}

/// The bottleneck buffer's size (drop-tail).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Buffer {
    /// No limit (Mahimahi's and LeoReplayer's default queue).
    #[default]
    Unlimited,
    /// At most this many bytes queued (including the packet in transmission).
    Bytes(u64),
    /// At most this many packets queued (including the packet in transmission).
    Packets(u64),
}

/// Everything that defines a link, except its seed.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// The bottleneck's capacity process.
    pub capacity: Capacity,
    /// The bottleneck buffer.
    pub buffer: Buffer,
    /// The base one-way propagation delay.
    pub delay: Delay,
    /// The random loss process.
    pub loss: Loss,
    /// Handover events, in any order.
    pub handovers: Vec<HandoverEvent>,
    /// Loss profiles starting at instants that are not handovers, in any order: Starlink's slot
    /// boundaries where the serving satellite stays, which lose packets too
    /// (`traces/scenarios/starlink.toml`). They draw from the burst stream as handover bursts
    /// do, but are not among [`Link::handover_instants`].
    pub boundary_losses: Vec<(Time, LossProfile)>,
    /// Whether a packet may be delivered before one that entered ahead of it (when the delay
    /// drops faster than packets are spaced). Off by default: one path does not reorder.
    pub allow_reordering: bool,
}

impl LinkConfig {
    /// A link with `capacity`, an unlimited buffer, no delay, no loss, no handovers and no
    /// boundary losses.
    pub fn new(capacity: Capacity) -> LinkConfig {
        LinkConfig {
            capacity,
            buffer: Buffer::Unlimited,
            delay: Delay::default(),
            loss: Loss::None,
            handovers: Vec::new(),
            boundary_losses: Vec::new(),
            allow_reordering: false,
        }
    }

    /// With a buffer.
    pub fn with_buffer(mut self, buffer: Buffer) -> LinkConfig {
        self.buffer = buffer;
        self
    }

    /// With a base delay.
    pub fn with_delay(mut self, delay: Delay) -> LinkConfig {
        self.delay = delay;
        self
    }

    /// With a loss process.
    pub fn with_loss(mut self, loss: Loss) -> LinkConfig {
        self.loss = loss;
        self
    }

    /// With a handover timeline.
    pub fn with_handovers(mut self, handovers: Vec<HandoverEvent>) -> LinkConfig {
        self.handovers = handovers;
        self
    }

    /// With loss profiles at instants that are not handovers.
    pub fn with_boundary_losses(mut self, boundary_losses: Vec<(Time, LossProfile)>) -> LinkConfig {
        self.boundary_losses = boundary_losses;
        self
    }

    /// With reordering allowed or not.
    pub fn with_reordering(mut self, allow: bool) -> LinkConfig {
        self.allow_reordering = allow;
        self
    }
}

/// Why a link could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkConfigError {
    /// A capacity problem.
    #[error("capacity: {0}")]
    Capacity(String),
    /// A series problem (zero step, no values, bad samples).
    #[error("series: {0}")]
    Series(String),
    /// A probability outside [0, 1].
    #[error("{what}: {value} is not a probability in [0, 1]")]
    Probability {
        /// Which probability.
        what: String,
        /// Its value.
        value: f64,
    },
    /// A buffer of size zero (every packet would be dropped).
    #[error("buffer: a drop-tail buffer must hold at least one packet or byte")]
    Buffer,
    /// A bad handover event.
    #[error("handover event {index} (at {at}): {problem}")]
    Handover {
        /// Position in the timeline, sorted by instant.
        index: usize,
        /// Its instant.
        at: Time,
        /// What is wrong.
        problem: String,
    },
}

/// How much is in the bottleneck buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Backlog {
    /// Packets queued (including the one in transmission).
    pub packets: u64,
    /// Bytes queued (including the one in transmission).
    pub bytes: u64,
}

/// A one-direction link: see the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Link {
    config: LinkConfig,
    seed: u64,
    compiled: Compiled,
    server: Server,
    /// Packets in the bottleneck: (departure from the bottleneck, bytes), in FIFO order.
    queue: VecDeque<(Time, u32)>,
    queued_bytes: u64,
    loss: LossState,
    burst_rng: ChaCha8Rng,
    last_now: Time,
    last_exit: Time,
    outage_cursor: usize,
    delay_cursor: usize,
    burst_cursor: usize,
    stats: LinkStats,
}

impl Link {
    /// A link in its initial state (empty, at the epoch). `seed` drives every random process.
    pub fn new(config: LinkConfig, seed: u64) -> Result<Link, LinkConfigError> {
        config.capacity.check()?;
        config.loss.check()?;
        if matches!(config.buffer, Buffer::Bytes(0) | Buffer::Packets(0)) {
            return Err(LinkConfigError::Buffer);
        }
        let compiled = handover::compile(&config.handovers, &config.boundary_losses)?;
        Ok(Link {
            loss: LossState::new(&config.loss, seed),
            burst_rng: loss::rng(seed, loss::STREAM_BURST_LOSS),
            config,
            seed,
            compiled,
            server: Server::default(),
            queue: VecDeque::new(),
            queued_bytes: 0,
            last_now: Time::ZERO,
            last_exit: Time::ZERO,
            outage_cursor: 0,
            delay_cursor: 0,
            burst_cursor: 0,
            stats: LinkStats::default(),
        })
    }

    /// Sends a packet of `bytes` at `now`. `now` must not go backwards; an earlier `now` is
    /// treated as the latest one seen (the link cannot undo what it computed).
    pub fn send(&mut self, now: Time, bytes: u32) -> Verdict {
        let now = now.max(self.last_now);
        self.last_now = now;
        self.stats.enter(now, bytes);
        match self.admit(now, bytes) {
            Ok(at) => {
                self.stats.deliver(now, at, bytes);
                Verdict::Delivered { at }
            }
            Err(reason) => {
                self.stats.drop_packet(now, reason);
                Verdict::Dropped { reason }
            }
        }
    }

    #[inline]
    fn admit(&mut self, now: Time, bytes: u32) -> Result<Time, DropReason> {
        if bytes > MAX_PACKET_BYTES {
            return Err(DropReason::Oversize);
        }
        let (outage, _) = self.compiled.outage.at_cursor(&mut self.outage_cursor, now);
        if outage == Some(OutageMode::Drop) {
            return Err(DropReason::Outage);
        }
        while let Some(&(departure, size)) = self.queue.front() {
            if departure > now {
                break;
            }
            self.queue.pop_front();
            self.queued_bytes -= u64::from(size);
        }
        let fits = match self.config.buffer {
            Buffer::Unlimited => true,
            Buffer::Bytes(limit) => self.queued_bytes + u64::from(bytes) <= limit,
            Buffer::Packets(limit) => (self.queue.len() as u64) < limit,
        };
        if !fits {
            return Err(DropReason::BufferFull);
        }
        let departure = self
            .server
            .serve(&self.config.capacity, &self.compiled.capacity, now, bytes)
            .ok_or(DropReason::NoCapacity)?;
        self.queue.push_back((departure, bytes));
        self.queued_bytes += u64::from(bytes);
        self.stats
            .queue(now, self.queue.len() as u64, self.queued_bytes);

        let random = self.loss.lose(departure);
        let (burst, _) = self
            .compiled
            .burst
            .at_cursor(&mut self.burst_cursor, departure);
        let burst = burst.threshold > 0 && u128::from(self.burst_rng.next_u64()) < burst.threshold;
        if random {
            return Err(DropReason::RandomLoss);
        }
        if burst {
            return Err(DropReason::BurstLoss);
        }
        let (adjust, _) = self
            .compiled
            .delay
            .at_cursor(&mut self.delay_cursor, departure);
        let delay = adjust.apply(self.config.delay.nanos_at(departure));
        let mut at = Time::from_nanos(departure.as_nanos().saturating_add(delay));
        if !self.config.allow_reordering {
            at = at.max(self.last_exit);
            self.last_exit = at;
        }
        Ok(at)
    }

    /// The configuration.
    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The latest `now` seen by [`Link::send`].
    pub fn now(&self) -> Time {
        self.last_now
    }

    /// Statistics so far.
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// The one-way propagation delay a packet leaving the bottleneck at `t` gets (base delay
    /// and handover delay steps; queueing not included).
    pub fn delay_at(&self, t: Time) -> Duration {
        let (adjust, _) = self.compiled.delay.at(t);
        Duration::from_nanos(adjust.apply(self.config.delay.nanos_at(t)))
    }

    /// The outage in force at `t`, if any.
    pub fn outage_at(&self, t: Time) -> Option<OutageMode> {
        self.compiled.outage.at(t).0
    }

    /// The burst-loss probability in force at `t`: handover loss bursts and the loss profiles
    /// of handovers and slot boundaries.
    pub fn burst_loss_probability_at(&self, t: Time) -> f64 {
        self.compiled.burst.at(t).0.probability
    }

    /// Capacity offered in `[from, to)`, bits (outages and capacity changes included; whether
    /// or not traffic used it).
    pub fn offered_bits(&self, from: Time, to: Time) -> u64 {
        capacity::offered_bits(&self.config.capacity, &self.compiled.capacity, from, to)
    }

    /// The capacity in force at `t`, bit/s, where it is a rate (constant, series, a capacity
    /// change to a rate; 0 during an outage). `None` where a Mahimahi trace is in force: its
    /// capacity is a sequence of delivery opportunities, to be read over a window with
    /// [`Link::offered_bps`].
    pub fn capacity_bps_at(&self, t: Time) -> Option<u64> {
        capacity::rate_at(&self.config.capacity, &self.compiled.capacity, t)
    }

    /// Mean capacity offered in `[from, to)`, bit/s (0 for an empty window).
    pub fn offered_bps(&self, from: Time, to: Time) -> f64 {
        let span = to - from;
        if span.is_zero() {
            return 0.0;
        }
        self.offered_bits(from, to) as f64 / span.as_secs_f64()
    }

    /// What is in the bottleneck buffer at `t` (for `t` at or after the latest send; earlier
    /// instants see packets that have since been removed as gone).
    pub fn backlog(&self, t: Time) -> Backlog {
        let gone = self.queue.partition_point(|&(d, _)| d <= t);
        let bytes = self.queue.range(gone..).map(|&(_, b)| u64::from(b)).sum();
        Backlog {
            packets: (self.queue.len() - gone) as u64,
            bytes,
        }
    }

    /// The ground-truth handover instants of the timeline (distinct event instants, increasing).
    pub fn handover_instants(&self) -> &[Time] {
        &self.compiled.instants
    }

    /// The handover instants in `[from, to)`.
    pub fn handover_instants_between(&self, from: Time, to: Time) -> &[Time] {
        let i = self.compiled.instants.partition_point(|&t| t < from);
        let j = self.compiled.instants.partition_point(|&t| t < to);
        &self.compiled.instants[i..j.max(i)]
    }

    /// The handover instants applied so far: those at or before the latest `now`.
    pub fn applied_handover_instants(&self) -> &[Time] {
        let j = self
            .compiled
            .instants
            .partition_point(|&t| t <= self.last_now);
        &self.compiled.instants[..j]
    }

    /// A per-second report from the epoch to the last second with statistics: the link's
    /// process (offered capacity, propagation delay) beside what the traffic got.
    pub fn report(&self) -> Vec<SecondReport> {
        let one = Duration::from_nanos(NANOS_PER_SEC);
        self.stats
            .seconds()
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let from = Time::from_secs(i as u64);
                let to = from + one;
                SecondReport {
                    second: i as u64,
                    offered_bps: self.offered_bps(from, to),
                    delivered_bps: s.delivered_bytes as f64 * 8.0,
                    base_delay_ms: stats::ms(self.delay_at(from)),
                    mean_delay_ms: s.mean_delay().map(stats::ms),
                    min_delay_ms: s.min_delay().map(stats::ms),
                    max_delay_ms: s.max_delay().map(stats::ms),
                    entered_packets: s.entered_packets,
                    delivered_packets: s.delivered_packets,
                    dropped: s.dropped,
                    max_queue_bytes: s.max_queue_bytes,
                    handover: !self.handover_instants_between(from, to).is_empty(),
                }
            })
            .collect()
    }
}

/// A [`Link`] driven by [`Instant`]s: the epoch is an [`Instant`] the caller picks (e.g. when a
/// relay starts), and every instant in and out is converted to and from [`Time`] against it.
/// Instants before the epoch count as the epoch.
#[derive(Debug, Clone)]
pub struct InstantLink {
    link: Link,
    epoch: Instant,
}

impl InstantLink {
    /// Wraps `link` with `epoch` as its [`Time::ZERO`].
    pub fn new(link: Link, epoch: Instant) -> InstantLink {
        InstantLink { link, epoch }
    }

    /// Sends a packet of `bytes` at `now`: see [`Link::send`].
    pub fn send(&mut self, now: Instant, bytes: u32) -> Verdict<Instant> {
        let epoch = self.epoch;
        self.link
            .send(Time::from_instant(epoch, now), bytes)
            .map(|t| t.to_instant(epoch))
    }

    /// The epoch.
    pub fn epoch(&self) -> Instant {
        self.epoch
    }

    /// `now` as link time.
    pub fn to_time(&self, now: Instant) -> Time {
        Time::from_instant(self.epoch, now)
    }

    /// Link time as an instant.
    pub fn to_instant(&self, t: Time) -> Instant {
        t.to_instant(self.epoch)
    }

    /// The wrapped link (for its queries and statistics).
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// The wrapped link, mutably.
    pub fn link_mut(&mut self) -> &mut Link {
        &mut self.link
    }

    /// Unwraps the link.
    pub fn into_inner(self) -> Link {
        self.link
    }
}

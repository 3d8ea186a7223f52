//! What a link did, second by second: for the CLI's tables and plots.

use super::DropReason;
use super::time::{NANOS_PER_SEC, Time};
use serde::Serialize;
use std::time::Duration;

/// Longest span the per-second bins cover: one week (a call is minutes to hours; a relay that
/// runs longer still gets correct totals, see [`LinkStats::beyond_bins`]). Bounds the memory a
/// far-future instant can claim.
pub const MAX_STATS_SECONDS: u64 = 7 * 24 * 3600;

/// Packets dropped, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DropCounts {
    /// [`DropReason::BufferFull`].
    pub buffer_full: u64,
    /// [`DropReason::RandomLoss`].
    pub random_loss: u64,
    /// [`DropReason::BurstLoss`].
    pub burst_loss: u64,
    /// [`DropReason::Outage`].
    pub outage: u64,
    /// [`DropReason::NoCapacity`].
    pub no_capacity: u64,
    /// [`DropReason::Oversize`].
    pub oversize: u64,
}

impl DropCounts {
    /// The count for one reason.
    pub fn get(&self, reason: DropReason) -> u64 {
        match reason {
            DropReason::BufferFull => self.buffer_full,
            DropReason::RandomLoss => self.random_loss,
            DropReason::BurstLoss => self.burst_loss,
            DropReason::Outage => self.outage,
            DropReason::NoCapacity => self.no_capacity,
            DropReason::Oversize => self.oversize,
        }
    }

    /// All drops.
    pub fn total(&self) -> u64 {
        self.buffer_full
            + self.random_loss
            + self.burst_loss
            + self.outage
            + self.no_capacity
            + self.oversize
    }

    #[inline]
    fn add(&mut self, reason: DropReason) {
        let c = match reason {
            DropReason::BufferFull => &mut self.buffer_full,
            DropReason::RandomLoss => &mut self.random_loss,
            DropReason::BurstLoss => &mut self.burst_loss,
            DropReason::Outage => &mut self.outage,
            DropReason::NoCapacity => &mut self.no_capacity,
            DropReason::Oversize => &mut self.oversize,
        };
        *c += 1;
    }
}

/// One second of a link's life (or the totals).
///
/// Entries and drops are binned by the second the packet entered the link; deliveries and their
/// delays by the second the packet was delivered (what a receiver measures as throughput).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SecondStats {
    /// Packets that entered the link.
    pub entered_packets: u64,
    /// Bytes that entered the link.
    pub entered_bytes: u64,
    /// Packets dropped, by reason.
    pub dropped: DropCounts,
    /// Packets delivered.
    pub delivered_packets: u64,
    /// Bytes delivered.
    pub delivered_bytes: u64,
    /// Sum of the one-way delays (delivery - entry) of the delivered packets, ns.
    pub delay_sum_ns: u64,
    /// Smallest one-way delay of a delivered packet, ns (`u64::MAX` when none).
    pub delay_min_ns: u64,
    /// Largest one-way delay of a delivered packet, ns (0 when none).
    pub delay_max_ns: u64,
    /// Largest bottleneck occupancy an arrival saw (after its admission), packets.
    pub max_queue_packets: u64,
    /// Largest bottleneck occupancy an arrival saw (after its admission), bytes.
    pub max_queue_bytes: u64,
}

impl Default for SecondStats {
    fn default() -> SecondStats {
        SecondStats {
            entered_packets: 0,
            entered_bytes: 0,
            dropped: DropCounts::default(),
            delivered_packets: 0,
            delivered_bytes: 0,
            delay_sum_ns: 0,
            delay_min_ns: u64::MAX,
            delay_max_ns: 0,
            max_queue_packets: 0,
            max_queue_bytes: 0,
        }
    }
}

impl SecondStats {
    /// Mean one-way delay of the delivered packets.
    pub fn mean_delay(&self) -> Option<Duration> {
        (self.delivered_packets > 0)
            .then(|| Duration::from_nanos(self.delay_sum_ns / self.delivered_packets))
    }

    /// Smallest one-way delay of the delivered packets.
    pub fn min_delay(&self) -> Option<Duration> {
        (self.delivered_packets > 0).then(|| Duration::from_nanos(self.delay_min_ns))
    }

    /// Largest one-way delay of the delivered packets.
    pub fn max_delay(&self) -> Option<Duration> {
        (self.delivered_packets > 0).then(|| Duration::from_nanos(self.delay_max_ns))
    }

    #[inline]
    fn enter(&mut self, bytes: u32) {
        self.entered_packets += 1;
        self.entered_bytes += u64::from(bytes);
    }

    #[inline]
    fn deliver(&mut self, bytes: u32, delay_ns: u64) {
        self.delivered_packets += 1;
        self.delivered_bytes += u64::from(bytes);
        self.delay_sum_ns = self.delay_sum_ns.saturating_add(delay_ns);
        self.delay_min_ns = self.delay_min_ns.min(delay_ns);
        self.delay_max_ns = self.delay_max_ns.max(delay_ns);
    }

    #[inline]
    fn queue(&mut self, packets: u64, bytes: u64) {
        self.max_queue_packets = self.max_queue_packets.max(packets);
        self.max_queue_bytes = self.max_queue_bytes.max(bytes);
    }
}

/// The link's statistics: per-second bins from the epoch and totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LinkStats {
    seconds: Vec<SecondStats>,
    totals: SecondStats,
    beyond_bins: u64,
}

impl LinkStats {
    /// Per-second bins; index `i` is `[i s, (i+1) s)` after the epoch. Runs up to the last
    /// second anything happened in.
    pub fn seconds(&self) -> &[SecondStats] {
        &self.seconds
    }

    /// Totals over the link's life.
    pub fn totals(&self) -> &SecondStats {
        &self.totals
    }

    /// Events that fell after [`MAX_STATS_SECONDS`] and are only in the totals.
    pub fn beyond_bins(&self) -> u64 {
        self.beyond_bins
    }

    #[inline]
    fn bin(&mut self, t: Time) -> Option<&mut SecondStats> {
        let s = t.as_nanos() / NANOS_PER_SEC;
        if s >= MAX_STATS_SECONDS {
            self.beyond_bins += 1;
            return None;
        }
        let s = s as usize;
        if s >= self.seconds.len() {
            self.seconds.resize(s + 1, SecondStats::default());
        }
        Some(&mut self.seconds[s])
    }

    #[inline]
    pub(crate) fn enter(&mut self, t: Time, bytes: u32) {
        self.totals.enter(bytes);
        if let Some(b) = self.bin(t) {
            b.enter(bytes);
        }
    }

    #[inline]
    pub(crate) fn drop_packet(&mut self, t: Time, reason: DropReason) {
        self.totals.dropped.add(reason);
        if let Some(b) = self.bin(t) {
            b.dropped.add(reason);
        }
    }

    #[inline]
    pub(crate) fn queue(&mut self, t: Time, packets: u64, bytes: u64) {
        self.totals.queue(packets, bytes);
        if let Some(b) = self.bin(t) {
            b.queue(packets, bytes);
        }
    }

    #[inline]
    pub(crate) fn deliver(&mut self, entered: Time, at: Time, bytes: u32) {
        let delay = at.as_nanos() - entered.as_nanos();
        self.totals.deliver(bytes, delay);
        if let Some(b) = self.bin(at) {
            b.deliver(bytes, delay);
        }
    }
}

/// One second of a link for a report or a plot: the process (offered capacity, delay) next to
/// what the traffic got.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SecondReport {
    /// The second, from the epoch.
    pub second: u64,
    /// Capacity the link offered in this second, bit/s (outages and capacity changes included).
    pub offered_bps: f64,
    /// Bits delivered in this second, per second.
    pub delivered_bps: f64,
    /// Propagation delay at the start of the second, ms (delay steps included).
    pub base_delay_ms: f64,
    /// Mean one-way delay of the packets delivered in this second, ms.
    pub mean_delay_ms: Option<f64>,
    /// Smallest one-way delay delivered in this second, ms.
    pub min_delay_ms: Option<f64>,
    /// Largest one-way delay delivered in this second, ms.
    pub max_delay_ms: Option<f64>,
    /// Packets that entered in this second.
    pub entered_packets: u64,
    /// Packets delivered in this second.
    pub delivered_packets: u64,
    /// Drops of the packets that entered in this second.
    pub dropped: DropCounts,
    /// Largest bottleneck occupancy seen by an arrival in this second, bytes.
    pub max_queue_bytes: u64,
    /// Whether the second contains a handover instant.
    pub handover: bool,
}

/// Milliseconds of a duration as a float.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

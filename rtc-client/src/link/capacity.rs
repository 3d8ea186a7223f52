//! The bottleneck's capacity process and the FIFO server that consumes it.

use super::handover::{CapKind, Steps};
use super::time::{NANOS_PER_MS, NANOS_PER_SEC, Time, duration_nanos};
use super::{LinkConfigError, RateSeries};
use std::sync::Arc;
use std::time::Duration;

/// Bytes one Mahimahi delivery opportunity carries: 1500, the Ethernet MTU that Mahimahi traces
/// are defined against (Mahimahi's `PACKET_SIZE` is 1504 = MTU + the 4-byte TUN header; the
/// shared data README and LeoReplayer count 1500-byte opportunities).
pub const MAHIMAHI_OPPORTUNITY_BYTES: u32 = 1500;

/// The largest packet the link accepts, bytes: 65 535, the IPv4 total-length limit. Larger
/// packets are dropped with [`super::DropReason::Oversize`].
pub const MAX_PACKET_BYTES: u32 = 65_535;

/// Capacity units inside the server: nano-bits (10^-9 bit). A rate of `r` bit/s offers exactly
/// `r` nano-bits per nanosecond, so fluid service needs no floating point.
pub(crate) const NANOBITS_PER_BYTE: u64 = 8 * NANOS_PER_SEC;

/// The base capacity process of a link, and how the bottleneck serves it.
///
/// # Service model
///
/// The bottleneck is a FIFO queue served by a capacity process, byte-accurately:
///
/// - **Delivery opportunities** ([`Capacity::Trace`], Mahimahi semantics): at each opportunity
///   instant the link may carry `opportunity_bytes` (1500 by default). Following Mahimahi's
///   `LinkQueue::rationalize`, the bytes of one opportunity are shared by every queued packet
///   that fits, and a packet larger than what is left continues in the next opportunity; what
///   is not used at that instant is lost (an idle link does not bank capacity). One 1500-byte
///   packet therefore takes exactly one opportunity, as in Mahimahi. Mahimahi itself refuses
///   packets above its MTU; here they simply take several opportunities.
/// - **Fluid rate** ([`Capacity::Constant`], [`Capacity::Series`], and a
///   [`super::CapacityChange::Rate`] override): a packet of `n` bytes is serialised in
///   `n * 8 / rate` seconds, rounded up to the nanosecond; the rounding remainder is kept as
///   credit for a packet that follows back-to-back, so a saturated constant link delivers
///   exactly at its rate over any number of packets.
///
/// One rule covers both: a packet's service starts at `max(arrival, previous departure)`;
/// capacity offered at an instant is usable only by packets present at that instant. A packet
/// arriving exactly at an opportunity's instant may use it (Mahimahi, with its millisecond
/// clock, uses the opportunities strictly after the millisecond of arrival; with nanosecond
/// time the inclusive rule is the natural one and changes nothing measurable).
///
/// Handover outages (both modes) and capacity changes ([`super::HandoverEffect`]) are layered
/// over the base process.
#[derive(Debug, Clone, PartialEq)]
pub enum Capacity {
    /// A constant rate, bit/s (fluid service).
    Constant {
        /// Rate, bit/s.
        bits_per_second: u64,
    },
    /// A piecewise-constant rate on a uniform grid (fluid service at the rate in force).
    Series(Arc<RateSeries>),
    /// A Mahimahi trace of delivery opportunities, replayed in a loop.
    Trace {
        /// The trace (shared: thousands of simulated links can replay one loaded file).
        trace: Arc<MahimahiTrace>,
        /// Bytes per opportunity; [`MAHIMAHI_OPPORTUNITY_BYTES`] for real Mahimahi traces.
        opportunity_bytes: u32,
    },
}

impl Capacity {
    /// A constant rate, bit/s.
    pub fn constant(bits_per_second: u64) -> Capacity {
        Capacity::Constant { bits_per_second }
    }

    /// A piecewise-constant rate series.
    pub fn series(series: RateSeries) -> Capacity {
        Capacity::Series(Arc::new(series))
    }

    /// A Mahimahi trace with 1500-byte opportunities ([`MAHIMAHI_OPPORTUNITY_BYTES`]).
    pub fn mahimahi(trace: Arc<MahimahiTrace>) -> Capacity {
        Capacity::Trace {
            trace,
            opportunity_bytes: MAHIMAHI_OPPORTUNITY_BYTES,
        }
    }

    pub(crate) fn check(&self) -> Result<(), LinkConfigError> {
        match self {
            Capacity::Trace {
                opportunity_bytes: 0,
                ..
            } => Err(LinkConfigError::Capacity(
                "a delivery opportunity must carry at least one byte".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// A Mahimahi packet-delivery trace: the instants (whole milliseconds from the start) of
/// 1500-byte delivery opportunities. A timestamp repeated `k` times is `k` opportunities in the
/// same millisecond. The trace loops with a period equal to its last timestamp, exactly as
/// Mahimahi's `LinkQueue` does (`base_timestamp += schedule.back()` on wrap-around).
///
/// Read one with [`MahimahiTrace::load`] or [`MahimahiTrace::parse`] (`link::readers`), or
/// build one with [`MahimahiTrace::from_millis`].
#[derive(Debug, Clone, PartialEq)]
pub struct MahimahiTrace {
    origin: String,
    /// Distinct opportunity instants within one lap, nanoseconds, increasing.
    at_ns: Vec<u64>,
    /// Opportunities at each instant.
    counts: Vec<u32>,
    /// `cumulative[i]` = opportunities at the instants before `at_ns[i]`; one extra entry with
    /// the total.
    cumulative: Vec<u64>,
    /// Loop period (the last timestamp), nanoseconds; positive.
    period_ns: u64,
}

impl MahimahiTrace {
    /// A trace from non-decreasing millisecond timestamps, one per opportunity. `origin` names
    /// the trace in messages. Errors on no timestamps, a decreasing one, or a last timestamp of
    /// 0 (Mahimahi refuses zero-length traces: the loop period would be zero).
    pub fn from_millis(
        origin: &str,
        millis: impl IntoIterator<Item = u64>,
    ) -> Result<MahimahiTrace, LinkConfigError> {
        let mut builder = TraceBuilder::default();
        for (i, ms) in millis.into_iter().enumerate() {
            if !builder.push(ms) {
                return Err(LinkConfigError::Capacity(format!(
                    "{origin}: timestamp {} ({ms} ms) is before the previous one ({} ms)",
                    i + 1,
                    builder.last_ms().unwrap_or(0),
                )));
            }
        }
        builder
            .finish(origin)
            .map_err(|why| LinkConfigError::Capacity(format!("{origin}: {why}")))
    }

    /// Where the trace came from (a path, or a name given by the caller).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Number of delivery opportunities in one lap (lines of the file).
    pub fn opportunities(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }

    /// Number of distinct milliseconds with at least one opportunity.
    pub fn busy_millis(&self) -> usize {
        self.at_ns.len()
    }

    /// The loop period: the last timestamp.
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.period_ns)
    }

    /// Long-run mean rate, bit/s, with `opportunity_bytes` per opportunity:
    /// `opportunities * bytes * 8 / period`.
    pub fn mean_rate_bps(&self, opportunity_bytes: u32) -> f64 {
        self.opportunities() as f64 * f64::from(opportunity_bytes) * 8.0
            / (self.period_ns as f64 / NANOS_PER_SEC as f64)
    }

    /// Number of opportunities at instants in `[from, to)` of the looped replay.
    pub fn opportunities_between(&self, from: Time, to: Time) -> u64 {
        if to <= from {
            return 0;
        }
        self.count_before(to) - self.count_before(from)
    }

    /// Opportunities at instants strictly before `t` (looped).
    fn count_before(&self, t: Time) -> u64 {
        let (lap, r) = self.lap_offset(t);
        let idx = self.at_ns.partition_point(|&a| a < r);
        lap.saturating_mul(self.opportunities())
            .saturating_add(self.cumulative[idx])
    }

    /// `t` as (lap, offset in lap) with the offset in `(0, period]` for every `t > 0`: the entries
    /// at the period's instant belong to the lap that ends there, and share that instant with
    /// the next lap's entries at 0.
    fn lap_offset(&self, t: Time) -> (u64, u64) {
        let t = t.as_nanos();
        let (q, r) = (t / self.period_ns, t % self.period_ns);
        if r == 0 && q > 0 {
            (q - 1, self.period_ns)
        } else {
            (q, r)
        }
    }

    /// The replay position of the first opportunity at or after `t`.
    fn position_at_or_after(&self, t: Time) -> TraceCursor {
        let (lap, r) = self.lap_offset(t);
        let idx = self.at_ns.partition_point(|&a| a < r);
        let mut cursor = TraceCursor {
            lap,
            lap_base: lap.saturating_mul(self.period_ns),
            idx,
        };
        if idx == self.at_ns.len() {
            cursor.next_lap(self.period_ns);
        }
        cursor
    }
}

/// Builds a [`MahimahiTrace`] from timestamps in file order (shared by the reader and
/// [`MahimahiTrace::from_millis`]).
#[derive(Debug, Default)]
pub(crate) struct TraceBuilder {
    at_ns: Vec<u64>,
    counts: Vec<u32>,
    last_ms: Option<u64>,
}

impl TraceBuilder {
    /// Adds one opportunity; false when `ms` is before the previous timestamp.
    pub(crate) fn push(&mut self, ms: u64) -> bool {
        match self.last_ms {
            Some(last) if ms < last => return false,
            Some(last) if ms == last => {
                if let Some(c) = self.counts.last_mut() {
                    *c = c.saturating_add(1);
                }
            }
            _ => {
                self.at_ns.push(ms.saturating_mul(NANOS_PER_MS));
                self.counts.push(1);
            }
        }
        self.last_ms = Some(ms);
        true
    }

    pub(crate) fn last_ms(&self) -> Option<u64> {
        self.last_ms
    }

    /// The trace, or why not: no timestamps, or a last timestamp of zero.
    pub(crate) fn finish(self, origin: &str) -> Result<MahimahiTrace, &'static str> {
        let Some(last) = self.last_ms else {
            return Err("empty trace: no delivery opportunities");
        };
        if last == 0 {
            return Err(
                "the last timestamp is 0 ms: the trace must span a positive time (it loops with a period equal to its last timestamp)",
            );
        }
        let mut cumulative = Vec::with_capacity(self.counts.len() + 1);
        let mut sum = 0u64;
        cumulative.push(0);
        for &c in &self.counts {
            sum += u64::from(c);
            cumulative.push(sum);
        }
        Ok(MahimahiTrace {
            origin: origin.to_string(),
            at_ns: self.at_ns,
            counts: self.counts,
            cumulative,
            period_ns: last.saturating_mul(NANOS_PER_MS),
        })
    }
}

/// A replay position in a looped trace: the next opportunity instant not yet consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct TraceCursor {
    lap: u64,
    lap_base: u64,
    idx: usize,
}

impl TraceCursor {
    #[inline]
    fn time(&self, trace: &MahimahiTrace) -> u64 {
        self.lap_base.saturating_add(trace.at_ns[self.idx])
    }

    #[inline]
    fn advance(&mut self, trace: &MahimahiTrace) {
        self.idx += 1;
        if self.idx == trace.at_ns.len() {
            self.next_lap(trace.period_ns);
        }
    }

    fn next_lap(&mut self, period_ns: u64) {
        self.idx = 0;
        self.lap = self.lap.saturating_add(1);
        self.lap_base = self.lap_base.saturating_add(period_ns);
    }

    /// Moves forward to the first opportunity at or after `t` (never backwards).
    #[inline]
    fn seek(&mut self, trace: &MahimahiTrace, t: Time) {
        let t_ns = t.as_nanos();
        // Back-to-back traffic moves the cursor a step or two; an idle gap jumps.
        for _ in 0..8 {
            if self.time(trace) >= t_ns {
                return;
            }
            self.advance(trace);
        }
        if self.time(trace) >= t_ns {
            return;
        }
        let target = trace.position_at_or_after(t);
        if (target.lap, target.idx) > (self.lap, self.idx) {
            *self = target;
        }
    }
}

/// Rate `r` scaled by a capacity factor (exact when the factor is 1).
#[inline]
fn scaled(r: u64, factor: f64) -> u64 {
    if factor == 1.0 {
        r
    } else {
        (r as f64 * factor).round() as u64
    }
}

/// Nano-bits per opportunity of `bytes` bytes scaled by `factor`.
#[inline]
fn opportunity_nanobits(bytes: u32, factor: f64) -> u64 {
    let full = u64::from(bytes) * NANOBITS_PER_BYTE;
    if factor == 1.0 {
        full
    } else {
        (full as f64 * factor).round() as u64
    }
}

/// The FIFO server of the bottleneck: where its service has got to.
#[derive(Debug, Clone, Default)]
pub(crate) struct Server {
    /// The instant the last packet left the bottleneck (or the last arrival that found it idle).
    t: Time,
    /// Nano-bits still offered at `t`, usable only by a packet present at `t`.
    carry: u64,
    /// Index of the capacity segment containing `t`.
    segment: usize,
    /// Next unconsumed opportunity of a trace.
    cursor: TraceCursor,
}

impl Server {
    /// Serves a packet of `bytes` arriving at `arrival` (non-decreasing across calls) behind
    /// every packet served before it; returns the instant its last bit leaves the bottleneck,
    /// or `None` when the capacity process offers no further service, ever.
    pub(crate) fn serve(
        &mut self,
        base: &Capacity,
        segments: &Steps<CapKind>,
        arrival: Time,
        bytes: u32,
    ) -> Option<Time> {
        let mut need = u64::from(bytes) * NANOBITS_PER_BYTE;
        if arrival > self.t {
            self.t = arrival;
            self.carry = 0;
        }
        if self.carry >= need {
            self.carry -= need;
            return Some(self.t);
        }
        need -= self.carry;
        self.carry = 0;
        loop {
            let (kind, seg_end) = segments.at_cursor(&mut self.segment, self.t);
            let (rate, piece_end) = match kind {
                CapKind::Off => (0, seg_end),
                CapKind::Rate(r) => (r, seg_end),
                CapKind::Base(factor) => match base {
                    Capacity::Constant { bits_per_second } => {
                        (scaled(*bits_per_second, factor), seg_end)
                    }
                    // A series that is zero throughout (or scaled to zero) would be walked step by
                    // step for ever: it offers nothing until the segment ends.
                    Capacity::Series(series) if factor == 0.0 || series.max_bps() == 0 => {
                        (0, seg_end)
                    }
                    Capacity::Series(series) => {
                        let (r, step_end) = series.at_with_end(self.t);
                        (scaled(r, factor), step_end.min(seg_end))
                    }
                    Capacity::Trace {
                        trace,
                        opportunity_bytes,
                    } => {
                        let per = opportunity_nanobits(*opportunity_bytes, factor);
                        if per == 0 {
                            (0, seg_end)
                        } else {
                            self.cursor.seek(trace, self.t);
                            let at = self.cursor.time(trace);
                            if at >= seg_end.as_nanos() {
                                if seg_end == Time::MAX {
                                    return None;
                                }
                                self.t = seg_end;
                                continue;
                            }
                            self.t = Time::from_nanos(at);
                            let offered =
                                u64::from(trace.counts[self.cursor.idx]).saturating_mul(per);
                            self.cursor.advance(trace);
                            if offered >= need {
                                self.carry = offered - need;
                                return Some(self.t);
                            }
                            need -= offered;
                            continue;
                        }
                    }
                },
            };
            // Fluid service at `rate` until `piece_end`.
            if rate == 0 {
                if piece_end == Time::MAX {
                    return None;
                }
                self.t = piece_end;
                continue;
            }
            let dt = need.div_ceil(rate);
            let room = piece_end.as_nanos() - self.t.as_nanos();
            if dt <= room || piece_end == Time::MAX {
                // An unbounded piece saturates at the end of time rather than looping there.
                self.t = Time::from_nanos(self.t.as_nanos().saturating_add(dt));
                self.carry = dt * rate - need;
                return Some(self.t);
            }
            // `room < dt`, so `room * rate < need + rate` cannot overflow.
            need -= room * rate;
            self.t = piece_end;
        }
    }
}

/// The fluid rate in force at `t`, bit/s: `Some(0)` in an outage, `None` where a trace's
/// delivery opportunities are in force (they have no instantaneous rate).
pub(crate) fn rate_at(base: &Capacity, segments: &Steps<CapKind>, t: Time) -> Option<u64> {
    match segments.at(t).0 {
        CapKind::Off => Some(0),
        CapKind::Rate(r) => Some(r),
        CapKind::Base(factor) => match base {
            Capacity::Constant { bits_per_second } => Some(scaled(*bits_per_second, factor)),
            Capacity::Series(series) => Some(scaled(series.at(t), factor)),
            Capacity::Trace { .. } => None,
        },
    }
}

/// Capacity offered in `[from, to)` by `base` under `segments`, in bits (floored).
pub(crate) fn offered_bits(
    base: &Capacity,
    segments: &Steps<CapKind>,
    from: Time,
    to: Time,
) -> u64 {
    let mut nanobits: u128 = 0;
    let mut t = from;
    while t < to {
        let (kind, seg_end) = segments.at(t);
        let end = seg_end.min(to);
        match kind {
            CapKind::Off => {}
            CapKind::Rate(r) => nanobits += u128::from(r) * u128::from((end - t).as_nanos() as u64),
            CapKind::Base(factor) => match base {
                Capacity::Constant { bits_per_second } => {
                    nanobits += u128::from(scaled(*bits_per_second, factor))
                        * u128::from(duration_nanos(end - t));
                }
                Capacity::Series(series) => {
                    let mut s = t;
                    while s < end {
                        let (r, step_end) = series.at_with_end(s);
                        let e = step_end.min(end);
                        nanobits +=
                            u128::from(scaled(r, factor)) * u128::from(duration_nanos(e - s));
                        s = e;
                    }
                }
                Capacity::Trace {
                    trace,
                    opportunity_bytes,
                } => {
                    nanobits += u128::from(trace.opportunities_between(t, end))
                        * u128::from(opportunity_nanobits(*opportunity_bytes, factor));
                }
            },
        }
        t = end;
    }
    u64::try_from(nanobits / u128::from(NANOS_PER_SEC)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unlimited() -> Steps<CapKind> {
        Steps::constant(CapKind::Base(1.0))
    }

    #[test]
    fn a_trace_loops_with_its_last_timestamp_as_period() {
        let trace = MahimahiTrace::from_millis("t", [1, 1, 3, 4]).unwrap();
        assert_eq!(trace.opportunities(), 4);
        assert_eq!(trace.period(), Duration::from_millis(4));
        assert_eq!(trace.busy_millis(), 3);
        // Lap 0 at 1, 1, 3, 4 ms; lap 1 at 5, 5, 7, 8 ms.
        assert_eq!(
            trace.opportunities_between(Time::ZERO, Time::from_millis(4)),
            3
        );
        assert_eq!(
            trace.opportunities_between(Time::ZERO, Time::from_millis(6)),
            6
        );
        assert_eq!(
            trace.opportunities_between(Time::from_millis(4), Time::from_millis(9)),
            5
        );
    }

    #[test]
    fn entries_at_zero_and_at_the_period_share_the_lap_boundary_instant() {
        let trace = Arc::new(MahimahiTrace::from_millis("t", [0, 2]).unwrap());
        let base = Capacity::mahimahi(trace);
        let mut server = Server::default();
        let segs = unlimited();
        // Opportunities at 0, 2 (lap 0's end), 2 (lap 1's start), 4, 4, ...
        let at: Vec<_> = (0..5)
            .map(|_| server.serve(&base, &segs, Time::ZERO, 1500).unwrap())
            .collect();
        assert_eq!(
            at,
            [0, 2, 2, 4, 4].map(Time::from_millis).to_vec(),
            "every opportunity is used once"
        );
    }

    #[test]
    fn small_packets_share_one_opportunity_and_large_ones_span_several() {
        let trace = Arc::new(MahimahiTrace::from_millis("t", [1, 2, 3, 4]).unwrap());
        let base = Capacity::mahimahi(trace);
        let segs = unlimited();
        let mut server = Server::default();
        assert_eq!(
            server.serve(&base, &segs, Time::ZERO, 500),
            Some(Time::from_millis(1))
        );
        assert_eq!(
            server.serve(&base, &segs, Time::ZERO, 1000),
            Some(Time::from_millis(1))
        );
        assert_eq!(
            server.serve(&base, &segs, Time::ZERO, 3000),
            Some(Time::from_millis(3))
        );
        // The opportunity at 4 ms goes unused by a packet arriving after it.
        assert_eq!(
            server.serve(&base, &segs, Time::from_micros(4001), 100),
            Some(Time::from_millis(5))
        );
    }

    #[test]
    fn fluid_service_keeps_the_rounding_remainder_for_back_to_back_packets() {
        // 1500 B at 7 Mbit/s = 1 714 285.714 ns per packet.
        let base = Capacity::constant(7_000_000);
        let segs = unlimited();
        let mut server = Server::default();
        let mut last = Time::ZERO;
        for _ in 0..7 {
            last = server.serve(&base, &segs, Time::ZERO, 1500).unwrap();
        }
        assert_eq!(last, Time::from_millis(12));
    }

    #[test]
    fn offered_bits_counts_the_trace_and_the_rate() {
        let trace = Arc::new(MahimahiTrace::from_millis("t", [1, 1, 2]).unwrap());
        let segs = unlimited();
        assert_eq!(
            // Opportunities at 1, 1, 2, 3, 3 ms are before 4 ms (4 ms itself is not).
            offered_bits(
                &Capacity::mahimahi(trace),
                &segs,
                Time::ZERO,
                Time::from_millis(4)
            ),
            5 * 1500 * 8
        );
        assert_eq!(
            offered_bits(
                &Capacity::constant(1_000_000),
                &segs,
                Time::ZERO,
                Time::from_millis(3)
            ),
            3000
        );
    }

    #[test]
    fn a_capacity_that_never_serves_again_yields_none() {
        let segs = unlimited();
        let mut server = Server::default();
        assert_eq!(
            server.serve(&Capacity::constant(0), &segs, Time::ZERO, 1),
            None
        );
    }
}

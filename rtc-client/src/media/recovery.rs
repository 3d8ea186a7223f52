//! Which packets were recovered, and how long recovery takes: the receiver's view of NACK.
//!
//! The receiver sees RTP sequence numbers only. A packet that arrives after a later-numbered one
//! filled a gap: with NACK on, it is a retransmission (links here do not reorder packets of one
//! stream, and a real path rarely does by more than a few packets). libwebrtc marks such frames
//! `delayed_by_retransmission` from its NACK module's count of requests for the packet; this is
//! the same fact seen from the packets.
//!
//! The time from the arrival that revealed the gap to the arrival of the missing packet is one
//! *recovery*: a NACK's wait, its trip to the sender, the sender's pacer queue and the trip back.
//! It stands in for the RTCP round-trip time that libwebrtc's jitter buffer adds once
//! retransmissions are common (a simulated call has no RTCP round-trip time to offer, since
//! receiver reports are not simulated). Like that round-trip time it should measure the path
//! and the NACK wait, not a sender's backlog: after an outage, hundreds of packets are recovered
//! one after another and the last of them waits behind all the others. So the recovery time is
//! the *minimum* over the samples of the last [`RECOVERY_WINDOW`] before the latest sample, and
//! holds while no packet is lost.

use crate::link::Time;
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// The most gaps tracked at once; the oldest are forgotten beyond it.
///
/// libwebrtc: `kMaxNackPackets` = 1000 (nack_requester.cc).
const MAX_GAPS: usize = 1_000;
/// A gap older than this many sequence numbers is forgotten.
///
/// libwebrtc: `kMaxPacketAge` = 10 000 (nack_requester.cc).
const MAX_PACKET_AGE: u64 = 10_000;
/// The span over which the recovery time is the minimum sample.
///
/// Chosen: 10 s, longer than any burst of recoveries after the outages of the scenarios (at most
/// a few seconds) and short enough to follow a path whose round trip grew.
pub const RECOVERY_WINDOW: Duration = Duration::from_secs(10);

/// How many of the latest recovery samples [`RecoveryTracker::repair_delay`] reads, and how many
/// it needs: the sender's NACK responder keeps the same counts of its repair delays
/// (`pacer::nack::REPAIR_DELAY_SAMPLES` = 64, `MIN_REPAIR_DELAY_SAMPLES` = 8), so both ends size
/// the playout raise from the same depth of evidence.
pub const REPAIR_SAMPLES: usize = pacer::nack::REPAIR_DELAY_SAMPLES;
/// See [`REPAIR_SAMPLES`].
pub const MIN_REPAIR_SAMPLES: usize = pacer::nack::MIN_REPAIR_DELAY_SAMPLES;

/// Gap and recovery tracking for one stream (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct RecoveryTracker {
    highest: Option<u64>,
    /// When the last packet arrived.
    last_arrival: Option<Time>,
    /// Missing sequence numbers (unwrapped): when their absence was noticed, and when the last
    /// packet before it arrived (about when they were expected).
    gaps: BTreeMap<u64, (Time, Time)>,
    /// Recovery samples of the window, (arrival, duration), increasing in both: the front is
    /// the minimum (a monotonic queue).
    window: VecDeque<(Time, Duration)>,
    /// The last [`REPAIR_SAMPLES`] repair samples (from the arrival before the gap to the one
    /// that filled it), oldest first.
    samples: VecDeque<Duration>,
    last_repair: Option<(Time, Duration)>,
    recovered: u64,
}

/// The `quantile` (0 to 1; NaN reads as 1) of `samples`, which must hold at least
/// [`MIN_REPAIR_SAMPLES`]; `None` otherwise.
pub fn repair_quantile(samples: &VecDeque<Duration>, quantile: f64) -> Option<Duration> {
    if samples.len() < MIN_REPAIR_SAMPLES {
        return None;
    }
    let mut sorted: Vec<Duration> = samples.iter().copied().collect();
    sorted.sort_unstable();
    let q = if quantile.is_finite() {
        quantile.clamp(0.0, 1.0)
    } else {
        1.0
    };
    sorted
        .get(((sorted.len() - 1) as f64 * q).round() as usize)
        .copied()
}

impl RecoveryTracker {
    /// A tracker that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// A packet with `sequence_number` arrived at `now`; returns whether it filled a gap (was
    /// recovered).
    pub fn on_packet(&mut self, now: Time, sequence_number: u16) -> bool {
        let seq = self.unwrap(sequence_number);
        let preceded = self.last_arrival.replace(now).unwrap_or(now);
        let Some(highest) = self.highest else {
            self.highest = Some(seq);
            return false;
        };
        if seq > highest {
            let first_missing = (highest + 1).max(seq.saturating_sub(MAX_GAPS as u64));
            for missing in first_missing..seq {
                self.gaps.insert(missing, (now, preceded));
            }
            self.highest = Some(seq);
            let oldest_kept = seq.saturating_sub(MAX_PACKET_AGE);
            self.gaps = self.gaps.split_off(&oldest_kept);
            while self.gaps.len() > MAX_GAPS {
                self.gaps.pop_first();
            }
            return false;
        }
        let Some((noticed, expected)) = self.gaps.remove(&seq) else {
            return false;
        };
        if self.samples.len() == REPAIR_SAMPLES {
            self.samples.pop_front();
        }
        let repair = now.saturating_duration_since(expected);
        self.samples.push_back(repair);
        self.last_repair = Some((expected, repair));
        let sample = now.saturating_duration_since(noticed);
        while self.window.back().is_some_and(|&(_, d)| d >= sample) {
            self.window.pop_back();
        }
        self.window.push_back((now, sample));
        let horizon = now
            .as_nanos()
            .saturating_sub(RECOVERY_WINDOW.as_nanos() as u64);
        while self
            .window
            .front()
            .is_some_and(|&(t, _)| t.as_nanos() < horizon)
        {
            self.window.pop_front();
        }
        self.recovered += 1;
        true
    }

    /// The least recovery time of the window that ends at the latest recovery; `None` before
    /// the first.
    pub fn recovery_time(&self) -> Option<Duration> {
        self.window.front().map(|&(_, d)| d)
    }

    /// How late a packet lost now would arrive, as this receiver measured it: the `quantile` (0
    /// to 1) of the last [`REPAIR_SAMPLES`] repair samples, each from the arrival of the packet
    /// before the gap (about when the missing one was due) to the arrival that filled it;
    /// `None` before [`MIN_REPAIR_SAMPLES`].
    ///
    /// Unlike [`Self::recovery_time`] it counts the wait for a later packet to reveal the gap,
    /// and keeps the samples that queued behind others: a frame completes when its last missing
    /// packet arrives, however it was delayed.
    pub fn repair_delay(&self, quantile: f64) -> Option<Duration> {
        repair_quantile(&self.samples, quantile)
    }

    /// The latest repair sample: when the packet was about due (the arrival before its gap) and
    /// how much later it arrived; `None` before the first.
    pub fn last_repair(&self) -> Option<(Time, Duration)> {
        self.last_repair
    }

    /// Packets that filled a gap.
    pub fn recovered(&self) -> u64 {
        self.recovered
    }

    /// Sequence numbers missing now.
    pub fn open_gaps(&self) -> usize {
        self.gaps.len()
    }

    fn unwrap(&self, sequence_number: u16) -> u64 {
        match self.highest {
            // Start one wrap up so that numbers just below the first stay representable.
            None => (1u64 << 16) + u64::from(sequence_number),
            Some(h) => {
                let delta = i64::from(sequence_number.wrapping_sub(h as u16) as i16);
                h.saturating_add_signed(delta)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time::from_millis(v)
    }

    #[test]
    fn a_packet_that_fills_a_gap_is_recovered_and_times_the_recovery() {
        let mut r = RecoveryTracker::new();
        assert!(!r.on_packet(ms(0), 10));
        assert!(!r.on_packet(ms(10), 13)); // 11 and 12 missing since 10 ms
        assert_eq!(r.open_gaps(), 2);
        assert!(r.on_packet(ms(170), 11));
        assert_eq!(r.recovery_time(), Some(Duration::from_millis(160)));
        assert!(r.on_packet(ms(250), 12));
        // The minimum of 160 and 240 ms.
        assert_eq!(r.recovery_time(), Some(Duration::from_millis(160)));
        assert!(!r.on_packet(ms(260), 12)); // a duplicate fills nothing
        assert_eq!(r.recovered(), 2);
        assert_eq!(r.open_gaps(), 0);
    }

    #[test]
    fn the_repair_delay_is_a_quantile_of_the_latest_samples_once_there_are_enough() {
        let mut r = RecoveryTracker::new();
        let mut seq = 0u16;
        let mut t = 0u64;
        // Each round: one packet lost, the next one reveals it 5 ms after its predecessor, and
        // it arrives `delay` ms after that predecessor.
        let mut round = |r: &mut RecoveryTracker, delay: u64| {
            r.on_packet(ms(t), seq);
            r.on_packet(ms(t + 5), seq + 2);
            assert!(r.on_packet(ms(t + delay), seq + 1));
            seq += 3;
            t += 1_000;
        };
        for delay in 1..MIN_REPAIR_SAMPLES as u64 {
            round(&mut r, delay * 10);
        }
        assert_eq!(r.repair_delay(0.9), None);
        round(&mut r, 80);
        assert_eq!(r.repair_delay(0.9), Some(Duration::from_millis(70)));
        assert_eq!(r.repair_delay(1.0), Some(Duration::from_millis(80)));
        assert_eq!(r.repair_delay(f64::NAN), Some(Duration::from_millis(80)));
        for _ in 0..REPAIR_SAMPLES {
            round(&mut r, 200);
        }
        assert_eq!(r.repair_delay(0.0), Some(Duration::from_millis(200)));
    }

    #[test]
    fn sequence_numbers_wrap_and_gaps_stay_bounded() {
        let mut r = RecoveryTracker::new();
        r.on_packet(ms(0), u16::MAX - 1);
        r.on_packet(ms(1), 1); // 65535 and 0 missing
        assert_eq!(r.open_gaps(), 2);
        assert!(r.on_packet(ms(50), 0));
        r.on_packet(ms(60), 30_000);
        assert_eq!(r.open_gaps(), MAX_GAPS);
    }

    #[test]
    fn the_recovery_time_is_the_least_sample_of_the_last_ten_seconds() {
        let mut r = RecoveryTracker::new();
        r.on_packet(ms(0), 0);
        r.on_packet(ms(0), 3);
        r.on_packet(ms(100), 1);
        r.on_packet(ms(900), 2); // behind a backlog
        assert_eq!(r.recovery_time(), Some(Duration::from_millis(100)));
        r.on_packet(ms(20_000), 5);
        r.on_packet(ms(20_300), 4); // the 100-ms sample is out of the window now
        assert_eq!(r.recovery_time(), Some(Duration::from_millis(300)));
        r.on_packet(ms(60_000), 6); // no loss: the value holds
        assert_eq!(r.recovery_time(), Some(Duration::from_millis(300)));
    }
}

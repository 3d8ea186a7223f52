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

/// Gap and recovery tracking for one stream (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct RecoveryTracker {
    highest: Option<u64>,
    /// Missing sequence numbers (unwrapped) and when their absence was noticed.
    gaps: BTreeMap<u64, Time>,
    /// Recovery samples of the window, (arrival, duration), increasing in both: the front is
    /// the minimum (a monotonic queue).
    window: VecDeque<(Time, Duration)>,
    recovered: u64,
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
        let Some(highest) = self.highest else {
            self.highest = Some(seq);
            return false;
        };
        if seq > highest {
            let first_missing = (highest + 1).max(seq.saturating_sub(MAX_GAPS as u64));
            for missing in first_missing..seq {
                self.gaps.insert(missing, now);
            }
            self.highest = Some(seq);
            let oldest_kept = seq.saturating_sub(MAX_PACKET_AGE);
            self.gaps = self.gaps.split_off(&oldest_kept);
            while self.gaps.len() > MAX_GAPS {
                self.gaps.pop_first();
            }
            return false;
        }
        let Some(noticed) = self.gaps.remove(&seq) else {
            return false;
        };
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

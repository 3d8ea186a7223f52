//! Round-trip time from transport feedback, as libwebrtc's `GoogCcNetworkController` derives it
//! when feedback is the only signal (`packet_feedback_only`).
//!
//! Port of `modules/congestion_controller/goog_cc/goog_cc_network_control.cc`,
//! `OnTransportPacketsFeedback`: per feedback, the largest `feedback_time - send_time` over
//! received packets goes into a 32-entry window whose mean is the delay-based controller's RTT;
//! the smallest `feedback_time - send_time - (max_recv - recv)` (the time the packet waited
//! at the receiver for the feedback subtracted) is the loss-based estimator's RTT.

use std::collections::VecDeque;

/// Feedbacks in the mean-RTT window. libwebrtc `goog_cc/goog_cc_network_control.cc`,
/// `kMaxFeedbackRttWindow`.
pub(crate) const MAX_FEEDBACK_RTT_WINDOW: usize = 32;

/// RTT bookkeeping.
#[derive(Debug, Clone, Default)]
pub(crate) struct RttEstimator {
    max_rtts_ms: VecDeque<i64>,
    min_rtt_us: Option<i64>,
}

/// What one feedback says about RTT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RttUpdate {
    /// Mean of the per-feedback maximum RTTs over the window, ms (libwebrtc truncates).
    pub mean_max_rtt_ms: i64,
    /// This feedback's minimum RTT with the receiver's waiting time removed, µs.
    pub min_rtt_us: i64,
}

impl RttEstimator {
    /// One feedback at `feedback_us` about received packets `(send_us, receive_us)`; the receive
    /// times may be on any clock (only their differences are used). `None` with no packets.
    pub(crate) fn on_feedback(
        &mut self,
        feedback_us: i64,
        packets: &[(i64, i64)],
    ) -> Option<RttUpdate> {
        let max_recv = packets.iter().map(|p| p.1).max()?;
        let max_rtt = packets.iter().map(|p| feedback_us - p.0).max()?;
        let min_rtt = packets
            .iter()
            .map(|&(send, recv)| feedback_us - send - (max_recv - recv))
            .min()?;
        // TimeDelta::ms() rounds to the nearest millisecond.
        self.max_rtts_ms.push_back(round_ms(max_rtt));
        if self.max_rtts_ms.len() > MAX_FEEDBACK_RTT_WINDOW {
            self.max_rtts_ms.pop_front();
        }
        let mean = self.max_rtts_ms.iter().sum::<i64>() / self.max_rtts_ms.len() as i64;
        self.min_rtt_us = Some(min_rtt);
        Some(RttUpdate {
            mean_max_rtt_ms: mean,
            min_rtt_us: min_rtt,
        })
    }

    /// The last minimum RTT, µs.
    pub(crate) fn min_rtt_us(&self) -> Option<i64> {
        self.min_rtt_us
    }
}

/// Microseconds to milliseconds, rounded to the nearest (libwebrtc `TimeDelta::ms()`).
pub(crate) fn round_ms(us: i64) -> i64 {
    (us + if us >= 0 { 500 } else { -500 }) / 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rtt_removes_the_time_a_packet_waited_for_the_feedback() {
        let mut r = RttEstimator::default();
        // Sent at 0 and 40 ms, received 30 ms later each (receiver clock offset 1000 s),
        // feedback arrives at 100 ms: the newest packet gives 100 - 40 - 0 = 60 ms; the older
        // one 100 - 0 - 40 = 60 ms too; the largest raw RTT is 100 ms.
        let off = 1_000_000_000;
        let u = r
            .on_feedback(100_000, &[(0, off + 30_000), (40_000, off + 70_000)])
            .expect("packets");
        assert_eq!(60_000, u.min_rtt_us);
        assert_eq!(100, u.mean_max_rtt_ms);
        let u = r.on_feedback(200_000, &[(150_000, off + 181_000)]).unwrap();
        assert_eq!(50_000, u.min_rtt_us);
        assert_eq!(75, u.mean_max_rtt_ms, "(100 + 50) / 2");
        assert_eq!(None, r.on_feedback(300_000, &[]));
    }
}

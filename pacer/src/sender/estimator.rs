//! The estimator as the sender's congestion controller holds it: GoogCC or webrtc-rs's `Gcc`,
//! with its target readable from outside the chain and the congestion window fed from its
//! feedback and process ticks.

use crate::GoogCc;
use crate::cwnd::{CwndChannel, CwndMode};
use rtc_interceptor::{BandwidthEstimator, EstimatorStats, Gcc, PacketReport};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The chosen estimator, publishing its target and feeding the congestion window. The estimator
/// is boxed inside webrtc-rs's congestion-control interceptor, which is the only place the
/// feedback reports exist, so the window is fed from here (libwebrtc's `GoogCcNetworkController`
/// feeds its congestion window from the same transport feedback).
pub(crate) struct ObservedEstimator {
    estimator: Estimator,
    target: Arc<AtomicU64>,
    cwnd: CwndChannel,
}

pub(crate) enum Estimator {
    GoogCc(Box<GoogCc>),
    WebrtcRs(Box<Gcc>),
}

impl ObservedEstimator {
    pub(crate) fn new(estimator: Estimator, target: Arc<AtomicU64>, cwnd: CwndChannel) -> Self {
        Self {
            estimator,
            target,
            cwnd,
        }
    }

    fn inner(&self) -> &dyn BandwidthEstimator {
        match &self.estimator {
            Estimator::GoogCc(e) => e.as_ref(),
            Estimator::WebrtcRs(e) => e.as_ref(),
        }
    }

    fn inner_mut(&mut self) -> &mut dyn BandwidthEstimator {
        match &mut self.estimator {
            Estimator::GoogCc(e) => e.as_mut(),
            Estimator::WebrtcRs(e) => e.as_mut(),
        }
    }

    fn publish(&self) {
        self.target
            .store(self.inner().target_bitrate().to_bits(), Ordering::Relaxed);
    }
}

impl BandwidthEstimator for ObservedEstimator {
    fn on_reports(&mut self, now: Instant, reports: &[PacketReport]) {
        self.inner_mut().on_reports(now, reports);
        self.publish();
        let target = self.inner().target_bitrate().max(0.0) as u64;
        self.cwnd.on_feedback(
            now,
            reports
                .iter()
                .map(|r| (r.ssrc, r.rtp_sequence_number, r.departure, r.arrived)),
            target,
        );
    }

    fn target_bitrate(&self) -> f64 {
        self.inner().target_bitrate()
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.inner_mut().handle_timeout(now);
        self.publish();
        let target = self.inner().target_bitrate().max(0.0) as u64;
        self.cwnd.on_process(now, target);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let ticks = (self.cwnd.config().mode == CwndMode::Pushback)
            .then(|| self.cwnd.poll_timeout())
            .flatten();
        match (self.inner().poll_timeout(), ticks) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn stats(&self) -> EstimatorStats {
        self.inner().stats()
    }
}

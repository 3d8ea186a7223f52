//! The sans-I/O core of a call's sending side, under both drivers (docs/architecture.md, "The
//! call engine"), in the style of quinn-proto's `Connection`: it owns the installed sender with
//! its policy, the camera and the encoder's steering, the open telemetry interval and the RTT
//! the protection reads; the driver owns time, the wire and the far end.
//!
//! The driver asks [`CallCore::poll_timeout`] when to come back and calls
//! [`CallCore::handle_timeout`] then, with a [`FarEnd`] through which the core reads the
//! receiver's side of an interval it closes. What the core produces comes out of
//! [`CallCore::transmits`] (media packets for the sender chain or the track) and
//! [`CallCore::poll_event`] (a decision taken, an interval closed). At a decision boundary the
//! core closes the interval, lets the policy decide (which applies the decision to the sender
//! itself) and opens the next one; at a frame instant it steers the encoder, samples the
//! interval and packetizes the frame. Neither driver sequences either step.

use super::interval::{CallLabels, FecTotals, OpenInterval, observe};
use super::video::Video;
use crate::link::Time;
use crate::media::packetizer::MediaPacket;
use handover_predictor::HandoverSource;
use pacer::Decision;
use pacer::sender::{HandoverAwareSender, SenderHandles};
use pacer::telemetry::{IntervalRecord, QoeRecord};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// What the core reads of the receiving end when it closes an interval.
pub trait FarEnd {
    /// The receiver's loss-protection counts so far: repair packets received, packets recovered.
    fn fec_received(&self) -> (u64, u64);

    /// The receiver's QoE over the interval that ends now, given the media packets sent so far;
    /// taking it starts the receiver's next interval.
    fn take_interval_qoe(&mut self, packets_sent: u64) -> QoeRecord;
}

/// What [`CallCore::poll_event`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallEvent {
    /// The policy decided: [`CallCore::decisions`]`[index]`.
    Decision(usize),
    /// An interval closed into [`CallCore::telemetry`]`[index]`.
    Interval(usize),
}

/// What [`CallCore::handle_timeout`] served at an instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Served {
    /// A decision boundary: the policy's limit and the actions reached the sender's handles.
    pub decided: bool,
    /// A frame instant: the encoder was steered (the handles were written), and maybe packets
    /// wait in [`CallCore::transmits`].
    pub framed: bool,
}

/// What the core saw of the sender at its frames.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameCounts {
    /// The smallest congestion-window pushback ratio seen (1 without pushback).
    pub min_pushback_ratio: f64,
    /// The largest outstanding data seen, bytes.
    pub max_outstanding_bytes: u64,
    /// The lowest and highest estimator target seen, bps (`None` before the first frame).
    pub target_range_bps: Option<(f64, f64)>,
    /// The pacer's longest expected queue time seen, ms, and the limit then, ms.
    pub max_queue_ms: (f64, f64),
    /// Key-frame requests (PLIs) that reached the encoder.
    pub key_frame_requests: u64,
}

impl Default for FrameCounts {
    fn default() -> Self {
        Self {
            min_pushback_ratio: 1.0,
            max_outstanding_bytes: 0,
            target_range_bps: None,
            max_queue_ms: (0.0, 0.0),
            key_frame_requests: 0,
        }
    }
}

/// One call's sending side in progress (see the module documentation).
pub struct CallCore {
    epoch: Instant,
    labels: CallLabels,
    sender: HandoverAwareSender,
    video: Video,
    truth: Box<dyn HandoverSource>,
    open: Option<OpenInterval>,
    telemetry: Vec<IntervalRecord>,
    outbox: Vec<MediaPacket>,
    events: VecDeque<CallEvent>,
    rtt: Duration,
    counts: FrameCounts,
    /// The policy's next decision instant, kept from the sender (it moves only at a decision).
    next_decision: Option<Time>,
}

impl CallCore {
    /// The core of a call whose virtual or real time zero is `epoch`: `sender` is the installed
    /// sender with its policy set, `video` the camera, `truth` what telemetry's `observed`
    /// reads, `labels` what every record names.
    pub fn new(
        epoch: Instant,
        labels: CallLabels,
        sender: HandoverAwareSender,
        video: Video,
        truth: Box<dyn HandoverSource>,
    ) -> Self {
        let next_decision = sender.poll_timeout().map(|i| Time::from_instant(epoch, i));
        Self {
            epoch,
            labels,
            next_decision,
            sender,
            video,
            truth,
            open: None,
            telemetry: Vec::new(),
            outbox: Vec::new(),
            events: VecDeque::new(),
            rtt: Duration::ZERO,
            counts: FrameCounts::default(),
        }
    }

    fn at(&self, t: Time) -> Instant {
        self.epoch + t.since_epoch()
    }

    /// The next instant the core has something to do: a frame or a decision.
    pub fn poll_timeout(&self) -> Option<Time> {
        Some(match self.next_decision {
            Some(d) => d.min(self.video.next_frame_time()),
            None => self.video.next_frame_time(),
        })
    }

    /// When the next frame is due.
    pub fn next_frame_time(&self) -> Time {
        self.video.next_frame_time()
    }

    /// Whether a decision is due at `now`: the driver of a real call reads the far end's
    /// interval ahead of [`Self::handle_timeout`], which closes it.
    pub fn decision_due(&self, now: Time) -> bool {
        self.next_decision.is_some_and(|d| d <= now) && self.sender.is_due(self.at(now))
    }

    /// Whether an interval is open (one closes at the next decision and at the end).
    pub fn interval_open(&self) -> bool {
        self.open.is_some()
    }

    /// Serves `now`: the decision boundary (closing the interval with `far`'s side of it,
    /// deciding, opening the next), then the frame, if either is due; `frame_until` bounds the
    /// frames (none at or after it, the call's end).
    ///
    /// # Errors
    ///
    /// The encoder's failure, as text (real VP8 only).
    pub fn handle_timeout(
        &mut self,
        now: Time,
        frame_until: Time,
        far: &mut impl FarEnd,
    ) -> Result<Served, String> {
        let mut served = Served::default();
        if self.decision_due(now) {
            let instant = self.at(now);
            served.decided = true;
            // Closed first, so that a joint policy reads the interval that just ended.
            self.close_interval(now, far);
            let decided = self.sender.handle_timeout(instant).cloned();
            self.next_decision = self
                .sender
                .poll_timeout()
                .map(|i| Time::from_instant(self.epoch, i));
            if let Some(decision) = decided {
                self.events
                    .push_back(CallEvent::Decision(self.sender.decisions().len() - 1));
                self.open = Some(OpenInterval::open(
                    decision,
                    now,
                    &self.sender.handles().pacer.stats(),
                    self.video.frames_dropped(),
                    self.fec_totals(far),
                ));
            }
        }
        let frame_at = self.video.next_frame_time();
        if frame_at <= now && frame_at < frame_until {
            served.framed = true;
            self.capture(now)?;
        }
        Ok(served)
    }

    fn capture(&mut self, now: Time) -> Result<(), String> {
        let handles = self.sender.handles();
        handles
            .protection
            .set_network(handles.pacer.stats().target_bitrate_bps, self.rtt);
        // Discardable frames (docs/architecture.md, "Discardable frames"): asked per frame, at
        // the capture instant of the frame about to be encoded.
        let capture_at = self.at(self.video.next_frame_time());
        let discardable = handles
            .actions
            .as_ref()
            .is_some_and(|a| a.frame_discardable(capture_at));
        let step = self.video.capture(
            now,
            discardable,
            self.sender.handles(),
            self.open.as_mut(),
            &mut self.outbox,
        )?;
        let counts = &mut self.counts;
        counts.min_pushback_ratio = counts.min_pushback_ratio.min(step.window.pushback_ratio);
        counts.max_outstanding_bytes = counts
            .max_outstanding_bytes
            .max(step.window.outstanding_bytes);
        counts.target_range_bps = Some(match counts.target_range_bps {
            Some((low, high)) => (low.min(step.target_bps), high.max(step.target_bps)),
            None => (step.target_bps, step.target_bps),
        });
        let queue_ms = step.stats.expected_queue_time.as_secs_f64() * 1000.0;
        if queue_ms > counts.max_queue_ms.0 {
            counts.max_queue_ms = (queue_ms, step.stats.queue_time_limit.as_secs_f64() * 1000.0);
        }
        Ok(())
    }

    /// The media packets to send, oldest first (the frame's, after a frame instant).
    pub fn transmits(&mut self) -> std::vec::Drain<'_, MediaPacket> {
        self.outbox.drain(..)
    }

    /// The next event, oldest first.
    pub fn poll_event(&mut self) -> Option<CallEvent> {
        self.events.pop_front()
    }

    /// A PLI (or FIR) reached the sender: the next frame is a key frame.
    pub fn on_key_frame_request(&mut self) {
        self.counts.key_frame_requests += 1;
        self.video.request_key_frame();
    }

    /// The RTT the protection reads from the next frame on (what an RTCP report would carry).
    pub fn set_rtt(&mut self, rtt: Duration) {
        self.rtt = rtt;
    }

    /// The RTT last set.
    pub fn rtt(&self) -> Duration {
        self.rtt
    }

    /// The loss protection's counters so far, the sender's and the receiver's.
    pub fn fec_totals(&self, far: &impl FarEnd) -> FecTotals {
        let (received, recovered) = far.fec_received();
        FecTotals::new(
            &self.sender.handles().protection.stats(),
            received,
            recovered,
        )
    }

    /// Closes the open interval, if any, at `now` into its telemetry record.
    fn close_interval(&mut self, now: Time, far: &mut impl FarEnd) {
        let Some(interval) = self.open.take() else {
            return;
        };
        let qoe = far.take_interval_qoe(self.video.packets_sent());
        let start = self.at(interval.start());
        let observed = observe(self.truth.as_mut(), start);
        let fec = self.fec_totals(far);
        let at = self.at(now);
        let handles = self.sender.handles();
        let actions = handles.actions.as_ref().map(|a| {
            let mut record = pacer::telemetry::ActionsRecord::from(a.take_stats(at));
            if let Some(playout) = &handles.playout {
                let stats = playout.take_stats();
                record.followed_frames = stats.frames_followed;
                record.floored_frames = stats.frames_floored;
                record.phased_frames = stats.frames_phased;
            }
            record
        });
        let record = interval.close(
            now,
            &self.labels,
            qoe,
            observed,
            &self.sender.handles().pacer.stats(),
            self.video.frames_dropped(),
            fec,
            actions,
        );
        self.sender
            .observe_interval_loss(record.qoe.packet_loss_pct);
        self.telemetry.push(record);
        self.events
            .push_back(CallEvent::Interval(self.telemetry.len() - 1));
    }

    /// Closes the last interval at `end` (the call is over).
    pub fn finish(&mut self, end: Time, far: &mut impl FarEnd) {
        self.close_interval(end, far);
    }

    /// The sender's handles.
    pub fn handles(&self) -> &SenderHandles {
        self.sender.handles()
    }

    /// The camera (its counters).
    pub fn video(&self) -> &Video {
        &self.video
    }

    /// Every decision so far.
    pub fn decisions(&self) -> &[Decision] {
        self.sender.decisions()
    }

    /// Every closed interval's record.
    pub fn telemetry(&self) -> &[IntervalRecord] {
        &self.telemetry
    }

    /// The records, taken out (at the end of a call).
    pub fn take_telemetry(&mut self) -> Vec<IntervalRecord> {
        std::mem::take(&mut self.telemetry)
    }

    /// What the frames saw.
    pub fn counts(&self) -> FrameCounts {
        self.counts
    }
}

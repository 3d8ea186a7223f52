//! One decision interval of a call, from the decision that opens it to the telemetry record
//! that closes it (docs/architecture.md, "The telemetry contract"). Simulated and real calls
//! sample the sender at every frame and close the interval with the same builder, so their
//! records agree field by field.

use super::options::SenderOptions;
use crate::link::Time;
use handover_predictor::{ForecastSource, HandoverSource};
use pacer::CwndMode;
use pacer::cwnd::CwndSnapshot;
use pacer::protection::ProtectionStats;
use pacer::telemetry::{
    ActionsRecord, FecRecord, ForecastRecord, GccRecord, IntervalRecord, ObservedRecord,
    PacerRecord, QoeRecord, SCHEMA, SenderRecord,
};
use pacer::{Decision, PacerStats};
use std::time::{Duration, Instant};

/// What every record of a call names: the call, its scenario, its seed and its sender.
#[derive(Debug, Clone)]
pub struct CallLabels {
    /// The telemetry's `call_id`.
    pub call_id: String,
    /// The scenario's name (`live` for a real call without an emulated link).
    pub scenario: String,
    /// The call seed.
    pub seed: u64,
    /// The sender's options.
    pub sender: SenderOptions,
}

/// A call's loss-protection counters so far, cumulative: the sender's (its
/// [`ProtectionStats`]) and the receiver's. An interval records the difference between its
/// close and its open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FecTotals {
    /// Repair packets sent.
    pub packets_sent: u64,
    /// Their bytes.
    pub bytes_sent: u64,
    /// Media bytes the protection interceptor saw (protected or not).
    pub media_bytes: u64,
    /// Repair packets that reached the receiver.
    pub packets_received: u64,
    /// Media packets the receiver rebuilt from repair packets.
    pub packets_recovered: u64,
}

impl FecTotals {
    /// The sender's half from its protection stats, with the receiver's counts.
    pub fn new(sender: &ProtectionStats, packets_received: u64, packets_recovered: u64) -> Self {
        Self {
            packets_sent: sender.fec_packets_sent,
            bytes_sent: sender.fec_bytes_sent,
            media_bytes: sender.media_bytes_seen,
            packets_received,
            packets_recovered,
        }
    }

    /// The repair bytes' share of the video bytes (media and repair), % (0 before any).
    pub fn share_pct(&self) -> f64 {
        let video_bytes = self.media_bytes + self.bytes_sent;
        if video_bytes == 0 {
            0.0
        } else {
            100.0 * self.bytes_sent as f64 / video_bytes as f64
        }
    }

    fn since(self, start: Self) -> Self {
        Self {
            packets_sent: self.packets_sent.saturating_sub(start.packets_sent),
            bytes_sent: self.bytes_sent.saturating_sub(start.bytes_sent),
            media_bytes: self.media_bytes.saturating_sub(start.media_bytes),
            packets_received: self.packets_received.saturating_sub(start.packets_received),
            packets_recovered: self
                .packets_recovered
                .saturating_sub(start.packets_recovered),
        }
    }
}

/// The interval in progress: the decision that opened it and the sender's samples since.
pub struct OpenInterval {
    decision: Decision,
    start: Time,
    samples: IntervalSamples,
    fec_start: FecTotals,
}

impl OpenInterval {
    /// Opens an interval at `start` with the decision taken there; `stats`, `frames_dropped`
    /// (the encoder's count so far) and `fec` are where its counters start.
    pub fn open(
        decision: Decision,
        start: Time,
        stats: &PacerStats,
        frames_dropped: u64,
        fec: FecTotals,
    ) -> Self {
        Self {
            decision,
            start,
            samples: IntervalSamples::new(stats, frames_dropped),
            fec_start: fec,
        }
    }

    /// When the interval started.
    pub fn start(&self) -> Time {
        self.start
    }

    /// Samples the sender at a frame: the pacer's queue, the estimator's target, whether the
    /// encoder was paused (for how long: one frame interval), the congestion window and the
    /// delta-frame protection factor in force.
    pub fn sample(
        &mut self,
        stats: &PacerStats,
        target_bps: f64,
        paused_for: Option<Duration>,
        window: &CwndSnapshot,
        delta_factor: u8,
    ) {
        self.samples.sample(stats, target_bps, paused_for);
        self.samples.sample_window(window);
        self.samples.delta_factor_sum += u64::from(delta_factor);
    }

    /// Closes the interval at `end` into its telemetry record: `qoe` is the receiver's over the
    /// interval, `observed` the truth over the 120 s from its start, `stats` the pacer's now,
    /// `frames_dropped` the encoder's count now, `fec` the protection counters now (recorded
    /// only when the call runs FEC) and `actions` what the handover-timed actions did over the
    /// interval (only when the call runs them).
    #[allow(clippy::too_many_arguments)]
    pub fn close(
        self,
        end: Time,
        labels: &CallLabels,
        qoe: QoeRecord,
        observed: ObservedRecord,
        stats: &PacerStats,
        frames_dropped: u64,
        fec: FecTotals,
        actions: Option<ActionsRecord>,
    ) -> IntervalRecord {
        let sender = labels.sender;
        let fec = sender.fec.is_on().then(|| {
            let counts = fec.since(self.fec_start);
            FecRecord {
                mode: sender.fec.name(),
                packets_sent: counts.packets_sent,
                packets_received: counts.packets_received,
                packets_recovered: counts.packets_recovered,
                share_pct: counts.share_pct(),
                mean_delta_factor: self.samples.delta_factor_sum as f64
                    / f64::from(self.samples.samples.max(1)),
            }
        });
        IntervalRecord {
            schema: SCHEMA.to_owned(),
            call_id: labels.call_id.clone(),
            scenario: labels.scenario.clone(),
            seed: Some(labels.seed),
            interval_index: self.decision.index,
            start_ms: self.start.as_millis(),
            duration_ms: end.as_millis().saturating_sub(self.start.as_millis()),
            policy: self.decision.policy.clone(),
            action_ms: u64::try_from(self.decision.queue_time_limit.as_millis())
                .unwrap_or(u64::MAX),
            forecast: ForecastRecord::from_forecast(&self.decision.forecast),
            observed,
            qoe,
            pacer: self.samples.pacer(stats),
            gcc: self.samples.gcc(),
            sender: Some(SenderRecord {
                bwe: sender.bwe.telemetry(),
                cwnd_mode: sender.cwnd,
                keyframe_flush: sender.keyframe_flush,
                frames_dropped: frames_dropped.saturating_sub(self.samples.frames_dropped_start),
                packets_flushed: stats
                    .packets_flushed
                    .saturating_sub(self.samples.packets_flushed_start),
                nack: Some(sender.nack.mode()),
                window_bytes: self.samples.mean_window_bytes(),
                pushback_ratio: self.samples.pushback_min,
            }),
            fec,
            actions,
            profile: self.decision.profile.map(|p| p.name.to_owned()),
            inputs: self.decision.profile.map(|_| self.decision.feedback.into()),
        }
    }
}

/// The handovers `truth` shows over the 120 s from `at`, as telemetry's `observed` record (no
/// handovers, source `none`, if it cannot say).
pub fn observe(truth: &mut dyn HandoverSource, at: Instant) -> ObservedRecord {
    match truth.forecast(at) {
        Ok(f) => ObservedRecord {
            source: f.source(),
            handover: *f.steps(),
        },
        Err(_) => ObservedRecord {
            source: ForecastSource::None,
            handover: Default::default(),
        },
    }
}

/// The samples one interval's pacer and gcc records are built from.
#[derive(Default)]
struct IntervalSamples {
    max_queue: Duration,
    queue_sum: Duration,
    target_sum_bps: f64,
    target_min_bps: f64,
    samples: u32,
    paused: Duration,
    drain_boost_start: Duration,
    frames_dropped_start: u64,
    packets_flushed_start: u64,
    /// Sum of the congestion window over the samples that had one, bytes.
    window_sum_bytes: u128,
    /// Samples that had a window.
    window_samples: u32,
    /// Smallest pushback ratio among the samples that had a window (pushback mode).
    pushback_min: Option<f64>,
    /// Sum of the delta-frame protection factor over the samples.
    delta_factor_sum: u64,
}

impl IntervalSamples {
    fn new(stats: &PacerStats, frames_dropped: u64) -> Self {
        Self {
            target_min_bps: f64::INFINITY,
            drain_boost_start: stats.drain_boost_time,
            frames_dropped_start: frames_dropped,
            packets_flushed_start: stats.packets_flushed,
            ..Self::default()
        }
    }

    fn sample(&mut self, stats: &PacerStats, target_bps: f64, paused_for: Option<Duration>) {
        self.max_queue = self.max_queue.max(stats.oldest_queue_time);
        self.queue_sum += stats.average_queue_time;
        self.target_sum_bps += target_bps;
        self.target_min_bps = self.target_min_bps.min(target_bps);
        self.samples += 1;
        if let Some(d) = paused_for {
            self.paused += d;
        }
    }

    /// Samples the congestion window as the encoder reads it at a frame: the window if one has
    /// been computed, and with pushback its ratio.
    fn sample_window(&mut self, window: &CwndSnapshot) {
        if window.mode == CwndMode::Off {
            return;
        }
        let Some(bytes) = window.window_bytes else {
            return;
        };
        self.window_sum_bytes += u128::from(bytes);
        self.window_samples += 1;
        if window.mode == CwndMode::Pushback && window.pushback_ratio.is_finite() {
            let ratio = window.pushback_ratio;
            self.pushback_min = Some(self.pushback_min.map_or(ratio, |m| m.min(ratio)));
        }
    }

    /// The mean window over the samples that had one, bytes (rounded).
    fn mean_window_bytes(&self) -> Option<u64> {
        (self.window_samples > 0).then(|| {
            let n = u128::from(self.window_samples);
            u64::try_from((self.window_sum_bytes + n / 2) / n).unwrap_or(u64::MAX)
        })
    }

    fn pacer(&self, stats: &PacerStats) -> PacerRecord {
        PacerRecord {
            max_queue_ms: ms(self.max_queue),
            mean_queue_ms: ms(self.queue_sum) / f64::from(self.samples.max(1)),
            drain_boost_ms: ms(stats
                .drain_boost_time
                .saturating_sub(self.drain_boost_start)),
            encoder_paused_ms: ms(self.paused),
        }
    }

    fn gcc(&self) -> GccRecord {
        if self.samples == 0 {
            return GccRecord::default();
        }
        GccRecord {
            mean_target_kbps: self.target_sum_bps / f64::from(self.samples) / 1000.0,
            min_target_kbps: self.target_min_bps / 1000.0,
        }
    }
}

/// A duration in milliseconds, as telemetry writes them.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

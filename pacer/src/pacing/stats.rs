//! A snapshot of the pacer's state, for the application, the policy and telemetry.

use super::config::PacingConfig;
use std::time::{Duration, Instant};

/// What the pacer is doing at one instant, plus its running totals.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PacerStats {
    /// The instant this snapshot describes; `None` for the configured starting state, before
    /// the pacer has seen its first event.
    pub at: Option<Instant>,
    /// Packets waiting in the queue.
    pub queued_packets: usize,
    /// Bytes waiting in the queue.
    pub queued_bytes: u64,
    /// How long the oldest queued packet has waited.
    pub oldest_queue_time: Duration,
    /// Mean time the queued packets have waited (libwebrtc's `AverageQueueTime`).
    pub average_queue_time: Duration,
    /// Queued bytes at the adjusted (drain) rate: libwebrtc's `ExpectedQueueTime`.
    pub expected_queue_time: Duration,
    /// The target bitrate last handed in, bits per second.
    pub target_bitrate_bps: u64,
    /// Target x pacing factor, bits per second.
    pub pacing_rate_bps: u64,
    /// The rate media actually drains at: the pacing rate or the drain boost, bits per second.
    pub adjusted_rate_bps: u64,
    /// The queue time limit in force.
    pub queue_time_limit: Duration,
    /// Whether the encoder should stop producing frames: the expected queue time exceeds the
    /// fixed 2-s threshold.
    pub encoder_should_pause: bool,
    /// Packets released so far.
    pub packets_sent: u64,
    /// Bytes released so far.
    pub bytes_sent: u64,
    /// Total time the drain boost has been active (adjusted rate above the pacing rate), not
    /// counting time congested.
    pub drain_boost_time: Duration,
    /// Whether the pacer is congested (congestion window in pacer mode): only audio, probes
    /// and keep-alives leave.
    pub congested: bool,
    /// Total time spent congested.
    pub congested_time: Duration,
    /// Keep-alive packets sent while congested.
    pub keepalives_sent: u64,
    /// Packets removed from the queue by key-frame flushes.
    pub packets_flushed: u64,
}

impl PacerStats {
    /// The state a pacer built from `config` starts in: nothing queued, the initial target and
    /// its pacing rate, the configured limit.
    pub fn initial(config: &PacingConfig) -> Self {
        let target = config.initial_target_bitrate_bps;
        let pacing = config.pacing_rate(target);
        Self {
            target_bitrate_bps: target,
            pacing_rate_bps: pacing,
            adjusted_rate_bps: pacing,
            queue_time_limit: super::config::clamp_queue_time_limit(config.queue_time_limit),
            ..Self::default()
        }
    }
}

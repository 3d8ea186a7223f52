//! The pacer's configuration, defaulting to libwebrtc's values.
//!
//! Every constant cites where it was read: `modules/pacing/pacing_controller.{h,cc}` (modern
//! libwebrtc) as summarised in `../shared/reference/libwebrtc-pacer-and-webrtc-rs.md`, part 1.

use std::time::Duration;

/// The shortest queue time limit a pacer accepts (docs/architecture.md, "Queue policies and
/// decisions").
pub const MIN_QUEUE_TIME_LIMIT: Duration = Duration::from_millis(50);

/// The longest queue time limit a pacer accepts (docs/architecture.md, "Queue policies and
/// decisions").
pub const MAX_QUEUE_TIME_LIMIT: Duration = Duration::from_secs(10);

/// libwebrtc's `kMaxExpectedQueueLength`: the default queue time limit and the encoder-pause
/// threshold (reference 1.2).
pub const WEBRTC_DEFAULT_QUEUE_TIME_LIMIT: Duration = Duration::from_millis(2000);

/// Clamps a queue time limit to [`MIN_QUEUE_TIME_LIMIT`], [`MAX_QUEUE_TIME_LIMIT`].
pub fn clamp_queue_time_limit(limit: Duration) -> Duration {
    limit.clamp(MIN_QUEUE_TIME_LIMIT, MAX_QUEUE_TIME_LIMIT)
}

/// How a [`PacingController`](crate::PacingController) paces.
///
/// `Default` gives libwebrtc's behaviour with send-side bandwidth estimation.
#[derive(Debug, Clone, PartialEq)]
pub struct PacingConfig {
    /// Factor applied to the target bitrate to get the pacing rate.
    ///
    /// 1.1: `kDefaultPaceMultiplierWithSendSideBwe` / `kStrictPacingMultiplier` (reference 1.2),
    /// what video with transport-wide feedback has been paced at for years.
    pub pacing_factor: f64,
    /// The queue time limit the drain rule aims for; clamped to [50 ms, 10 s].
    ///
    /// 2000 ms: `kMaxExpectedQueueLength`, `Configuration::queue_time_limit` (reference 1.4).
    pub queue_time_limit: Duration,
    /// Whether the drain rule may raise the send rate above the pacing rate to meet the limit.
    ///
    /// `true`: `Configuration::drain_large_queues` (reference 1.4).
    pub drain_large_queues: bool,
    /// Packets may leave back to back while the media debt is below this much send time.
    ///
    /// 40 ms: `PacerConfig::kDefaultTimeInterval`, the default `send_burst_interval` (reference 1.2).
    pub burst_interval: Duration,
    /// Caps the burst window at this many bytes at the current rate.
    ///
    /// 63 000 bytes: `kMaxBurstSize` (reference 1.2).
    pub max_burst_bytes: u64,
    /// Media debt is capped at this much send time at the current rate.
    ///
    /// 500 ms: `kMaxDebtInTime` (reference 1.2).
    pub max_debt: Duration,
    /// Whether audio is paced. `false`: audio leaves at its enqueue instant and is not charged to
    /// the debt, libwebrtc's default without `WebRTC-Pacer-BlockAudio` (reference 1.3).
    pub pace_audio: bool,
    /// `encoder_should_pause` is raised while the expected queue time exceeds this.
    ///
    /// 2000 ms, fixed and independent of the queue time limit, as libwebrtc's
    /// `CongestionControlHandler::GetUpdate` compares against the constant
    /// `kMaxExpectedQueueLength` (reference 1.5).
    pub encoder_pause_threshold: Duration,
    /// The target bitrate in force before the first estimate arrives, in bits per second.
    ///
    /// 300 kbit/s: libwebrtc's default start bitrate (`kDefaultStartBitrateBps`), which is also
    /// webrtc-rs's `GCC_INITIAL_BITRATE`.
    pub initial_target_bitrate_bps: u64,
    /// The SSRC padding is sent on, with its own RTP sequence numbers; `None`: no padding
    /// (probe clusters then carry queued media only).
    ///
    /// libwebrtc sends padding on the RTX SSRC (`RTPSender::GeneratePadding`); webrtc-rs numbers
    /// RTP before the chain, so a pacer cannot insert packets into a media or RTX sequence space
    /// that the NACK responder also uses, and needs a stream of its own. The sender must bind it
    /// as a local stream with the transport-wide-cc extension (see the crate docs).
    pub padding_ssrc: Option<u32>,
    /// The payload type of padding packets (one the receiver does not decode).
    pub padding_payload_type: u8,
    /// The largest padding packet, bytes on the wire before the transport-wide-cc extension.
    ///
    /// 1200: the size of a full media packet, as libwebrtc's payload padding (resent history
    /// packets on RTX, `RtpPacketHistory::GetPayloadPaddingPacket`) produces; its padding-only
    /// packets are at most 224 bytes of padding (`kMaxPaddingLength`, `rtp_sender.cc`).
    pub max_padding_packet_bytes: u64,
    /// Whether the first packet of a new key frame flushes its stream's queued packets (and
    /// those of its RTX stream) when no key-frame packet of the stream is queued.
    ///
    /// `false` by default so both behaviours can be compared; modern libwebrtc does it with
    /// `WebRTC-Pacer-KeyframeFlushing` (`PacingController::EnqueuePacket`, reference 1.5).
    pub keyframe_flush: bool,
}

impl Default for PacingConfig {
    fn default() -> Self {
        Self {
            pacing_factor: 1.1,
            queue_time_limit: WEBRTC_DEFAULT_QUEUE_TIME_LIMIT,
            drain_large_queues: true,
            burst_interval: Duration::from_millis(40),
            max_burst_bytes: 63_000,
            max_debt: Duration::from_millis(500),
            pace_audio: false,
            encoder_pause_threshold: WEBRTC_DEFAULT_QUEUE_TIME_LIMIT,
            initial_target_bitrate_bps: 300_000,
            padding_ssrc: None,
            padding_payload_type: 127,
            max_padding_packet_bytes: 1200,
            keyframe_flush: false,
        }
    }
}

impl PacingConfig {
    /// The pacing rate for a target bitrate, in bits per second: `target_bps` x the pacing
    /// factor, rounded; a negative factor counts as zero.
    pub(crate) fn pacing_rate(&self, target_bps: u64) -> u64 {
        (target_bps as f64 * self.pacing_factor.max(0.0)).round() as u64
    }
}

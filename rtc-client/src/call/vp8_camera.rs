//! The real-video camera of live calls: the moving test pattern ([`TestPattern`]) encoded by
//! libvpx ([`vp8enc`]) at the sender's target and packetized as VP8 RTP (RFC 7741), stepped once
//! per frame like the synthetic [`Camera`](super::camera::Camera).
//!
//! The encoder follows the sender as the synthetic one does
//! ([`super::sender::steer_encoder`]): the pacer's target less the protection overhead, the
//! congestion window's pushback target when it does not drop frames, a skipped frame while the
//! pacer asks for a pause. The new target
//! reaches libvpx before the frame is encoded (libwebrtc's `LibvpxVp8Encoder::SetRates` calls
//! `vpx_codec_enc_config_set` the same way). A PLI or FIR asks for a key frame on the next
//! encoded frame. Frames libvpx's rate control drops count as dropped.
//!
//! Packets carry the VP8 payload descriptor with a 15-bit picture id (webrtc-rs's
//! `Vp8Payloader`), the frame's 90 kHz capture timestamp, and the marker on the last one; the
//! picture shows its frame number (the camera slot), so a screenshot of the far end names the
//! frame it shows.

use super::camera::FrameStep;
use super::interval::OpenInterval;
use super::streams::{VIDEO_PAYLOAD_TYPE, VIDEO_SSRC};
use crate::link::Time;
use crate::media::packetizer::{DEFAULT_MAX_PAYLOAD, MediaPacket};
use crate::media::vp8::pattern::TestPattern;
use pacer::CwndMode;
use pacer::sender::SenderHandles;
use rtc_rtp::codec::vp8::Vp8Payloader;
use rtc_rtp::packetizer::Payloader;
use std::time::Duration;
use vp8enc::{Config, Vp8Encoder};

/// The picture size: 640x360, the smallest 16:9 size libwebrtc's simulcast table gives its own
/// layer, and enough for a legible frame counter.
pub const SIZE: (u32, u32) = (640, 360);
/// Frames per second, as the synthetic encoder.
pub const FPS: u32 = 30;
/// The lowest target handed to libvpx, bit/s (the synthetic encoder's floor).
pub const MIN_BPS: u64 = 50_000;
/// The highest, bit/s (the synthetic encoder's ceiling).
pub const MAX_BPS: u64 = 2_500_000;

/// Why the camera failed.
pub type Vp8CameraError = vp8enc::Error;

/// The camera (see the module documentation).
pub struct Vp8Camera {
    pattern: TestPattern,
    encoder: Vp8Encoder,
    payloader: Vp8Payloader,
    start: Time,
    slot: u64,
    frame_interval: Duration,
    sequence: u16,
    packets: u64,
    next_frame_id: u32,
    key_pending: bool,
    frames_encoded: u64,
    frames_dropped: u64,
    key_frames: u64,
    bytes_encoded: u64,
}

impl Vp8Camera {
    /// A camera whose first frame is due at `start`; `seed` seeds the pattern's noise.
    ///
    /// # Errors
    ///
    /// [`vp8enc::Error`] if libvpx cannot be set up.
    pub fn new(seed: u64, start: Time) -> Result<Self, Vp8CameraError> {
        let encoder = Vp8Encoder::new(Config {
            width: SIZE.0,
            height: SIZE.1,
            fps: FPS,
            ..Config::default()
        })?;
        let mut payloader = Vp8Payloader::default();
        payloader.enable_picture_id = true;
        Ok(Self {
            pattern: TestPattern::new(SIZE.0, SIZE.1, seed),
            encoder,
            payloader,
            start,
            slot: 0,
            frame_interval: Duration::from_nanos(1_000_000_000 / u64::from(FPS)),
            sequence: 0,
            packets: 0,
            next_frame_id: 0,
            key_pending: true,
            frames_encoded: 0,
            frames_dropped: 0,
            key_frames: 0,
            bytes_encoded: 0,
        })
    }

    /// When the next frame is due.
    pub fn next_frame_time(&self) -> Time {
        self.slot_time(self.slot)
    }

    fn slot_time(&self, slot: u64) -> Time {
        self.start.saturating_add(
            self.frame_interval
                .saturating_mul(u32::try_from(slot).unwrap_or(u32::MAX)),
        )
    }

    /// Asks for a key frame on the next encoded frame (a PLI or FIR arrived).
    pub fn request_key_frame(&mut self) {
        self.key_pending = true;
    }

    /// RTP packets produced so far.
    pub fn packets_sent(&self) -> u64 {
        self.packets
    }

    /// Frames encoded so far.
    pub fn frames_encoded(&self) -> u64 {
        self.frames_encoded
    }

    /// Frames not encoded: skipped for the pacer's pause, missed by a late caller, or dropped by
    /// libvpx's rate control.
    pub fn frames_dropped(&self) -> u64 {
        self.frames_dropped
    }

    /// Key frames among the encoded ones.
    pub fn key_frames(&self) -> u64 {
        self.key_frames
    }

    /// Encoded bytes so far (the VP8 bitstream, without RTP or descriptors).
    pub fn bytes_encoded(&self) -> u64 {
        self.bytes_encoded
    }

    /// The target libvpx works to now, bit/s.
    pub fn encoder_target_bps(&self) -> u64 {
        self.encoder.target_bps()
    }

    /// One frame instant: steers the encoder to the sender's target (see the module
    /// documentation), samples the open interval, and if a frame is due and not paused encodes
    /// it and packetizes it into `out`.
    ///
    /// # Errors
    ///
    /// [`vp8enc::Error`] if libvpx fails.
    pub fn capture(
        &mut self,
        now: Time,
        _discardable: bool,
        sender: &SenderHandles,
        interval: Option<&mut OpenInterval>,
        out: &mut Vec<MediaPacket>,
    ) -> Result<FrameStep, Vp8CameraError> {
        let stats = sender.pacer.stats();
        let window = sender.cwnd.snapshot();
        let cwnd = sender.cwnd.config();
        let media = sender.protection.media_target_bps(stats.target_bitrate_bps);
        let pushback = cwnd.mode == CwndMode::Pushback && window.target_bps > 0;
        let target = if pushback && !cwnd.drop_frame {
            media.min(window.pushback_target_bps)
        } else {
            media
        };
        self.encoder
            .set_target_bps(target.clamp(MIN_BPS, MAX_BPS))?;
        let pause = stats.encoder_should_pause;
        let target_bps = sender.target_bps();
        if let Some(interval) = interval {
            interval.sample(
                &stats,
                target_bps,
                pause.then_some(self.frame_interval),
                &window,
                sender.protection.stats().delta_factor,
            );
        }
        let mut step = FrameStep {
            stats,
            window,
            target_bps,
            encoded: false,
        };
        if now < self.next_frame_time() {
            return Ok(step);
        }
        let since = now.saturating_duration_since(self.start).as_nanos();
        let latest =
            u64::try_from(since / self.frame_interval.as_nanos().max(1)).unwrap_or(u64::MAX);
        self.frames_dropped += latest.saturating_sub(self.slot);
        self.slot = latest + 1;
        if pause {
            self.frames_dropped += 1;
            return Ok(step);
        }
        let capture = self.slot_time(latest);
        let timestamp_90k = capture.as_nanos() / 1_000_000_000 * 90_000
            + capture.as_nanos() % 1_000_000_000 * 90_000 / 1_000_000_000;
        let image = self.pattern.draw(latest);
        let Some(frame) = self
            .encoder
            .encode(image, timestamp_90k as i64, self.key_pending)?
        else {
            self.frames_dropped += 1;
            return Ok(step);
        };
        if frame.key_frame {
            self.key_pending = false;
            self.key_frames += 1;
        }
        self.frames_encoded += 1;
        self.bytes_encoded += frame.data.len() as u64;
        let payloads = self
            .payloader
            .payload(DEFAULT_MAX_PAYLOAD, &frame.data.into())
            .unwrap_or_default();
        let count = payloads.len();
        for (i, payload) in payloads.into_iter().enumerate() {
            out.push(MediaPacket {
                ssrc: VIDEO_SSRC,
                payload_type: VIDEO_PAYLOAD_TYPE,
                sequence_number: self.sequence,
                timestamp: timestamp_90k as u32,
                marker: i + 1 == count,
                payload: payload.to_vec(),
                frame_id: self.next_frame_id,
                key_frame: frame.key_frame,
                capture,
            });
            self.sequence = self.sequence.wrapping_add(1);
            self.packets += 1;
        }
        self.next_frame_id = self.next_frame_id.wrapping_add(1);
        step.encoded = true;
        Ok(step)
    }
}

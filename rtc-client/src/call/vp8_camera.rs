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
//! Packets carry the VP8 payload descriptor with a 15-bit picture id, TL0PICIDX and TID
//! ([`crate::media::vp8::payloader`]), the frame's 90 kHz capture timestamp, and the marker on
//! the last one; the picture shows its frame number (the camera slot), so a screenshot of the
//! far end names the frame it shows.
//!
//! Discardable frames (docs/architecture.md, "Discardable frames"): a frame the caller asks to
//! be discardable, unless it is a key frame, is encoded with
//! [`FrameReferences::Discardable`] (libvpx references only the last frame buffer, which holds
//! the last base frame, and updates no buffer) and sent as temporal layer 1 with the layer-sync
//! bit and the last base frame's TL0PICIDX; every other frame is a base frame (TID 0), and
//! TL0PICIDX counts them. A receiver's reference finder then makes a discardable frame
//! reference only the last base frame and the base frame after a window reference the base
//! frame before it (libwebrtc `rtp_vp8_ref_finder.cc`), which is what the encoder built.

use super::camera::FrameStep;
use super::interval::OpenInterval;
use super::streams::{VIDEO_PAYLOAD_TYPE, VIDEO_SSRC};
use crate::link::Time;
use crate::media::packetizer::{DEFAULT_MAX_PAYLOAD, MediaPacket};
use crate::media::vp8::pattern::TestPattern;
use crate::media::vp8::payloader::{Layer, PayloaderError, Vp8Payloader};
use pacer::CwndMode;
use pacer::sender::SenderHandles;
use std::time::Duration;
use vp8enc::{Config, FrameReferences, Vp8Encoder};

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
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Vp8CameraError {
    /// libvpx failed.
    #[error(transparent)]
    Encoder(#[from] vp8enc::Error),
    /// An encoded frame could not be packetized.
    #[error("VP8 packetization: {0}")]
    Payloader(#[from] PayloaderError),
}

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
    frames_discardable: u64,
    bytes_encoded: u64,
}

impl Vp8Camera {
    /// A camera whose first frame is due at `start`; `seed` seeds the pattern's noise.
    ///
    /// # Errors
    ///
    /// [`Vp8CameraError::Encoder`] if libvpx cannot be set up.
    pub fn new(seed: u64, start: Time) -> Result<Self, Vp8CameraError> {
        let encoder = Vp8Encoder::new(Config {
            width: SIZE.0,
            height: SIZE.1,
            fps: FPS,
            ..Config::default()
        })?;
        Ok(Self {
            pattern: TestPattern::new(SIZE.0, SIZE.1, seed),
            encoder,
            payloader: Vp8Payloader::new(0, 0),
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
            frames_discardable: 0,
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

    /// Discardable frames among the encoded ones (temporal layer 1, layer sync: see the module
    /// documentation).
    pub fn frames_discardable(&self) -> u64 {
        self.frames_discardable
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
    /// it, discardable if `discardable` (the discardable-frames action,
    /// [`pacer::ActionsHandle::frame_discardable`] at its capture instant) and it is not a key
    /// frame, and packetizes it into `out`.
    ///
    /// # Errors
    ///
    /// [`Vp8CameraError`] if libvpx or the packetization fails.
    pub fn capture(
        &mut self,
        now: Time,
        discardable: bool,
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
        step.encoded = self.encode_slot(latest, discardable, out)?;
        Ok(step)
    }

    /// Encodes the picture of camera slot `slot` (a discardable frame if `discardable`, unless
    /// a key frame is due) and packetizes it into `out`; whether a frame came out (libvpx's
    /// rate control may drop it).
    fn encode_slot(
        &mut self,
        slot: u64,
        discardable: bool,
        out: &mut Vec<MediaPacket>,
    ) -> Result<bool, Vp8CameraError> {
        let capture = self.slot_time(slot);
        let timestamp_90k = capture.as_nanos() / 1_000_000_000 * 90_000
            + capture.as_nanos() % 1_000_000_000 * 90_000 / 1_000_000_000;
        // A key frame is always a base frame; a discardable frame needs a base frame before
        // it, which the first frame (a key frame) provides.
        let discardable = discardable && !self.key_pending && self.payloader.has_base();
        let references = if discardable {
            FrameReferences::Discardable
        } else {
            FrameReferences::Normal
        };
        let image = self.pattern.draw(slot);
        let Some(frame) =
            self.encoder
                .encode_with(image, timestamp_90k as i64, self.key_pending, references)?
        else {
            self.frames_dropped += 1;
            return Ok(false);
        };
        let layer = if discardable && !frame.key_frame {
            Layer::Discardable
        } else {
            Layer::Base
        };
        let (_, payloads) = self
            .payloader
            .packetize(&frame.data, layer, DEFAULT_MAX_PAYLOAD)?;
        if frame.key_frame {
            self.key_pending = false;
            self.key_frames += 1;
        }
        self.frames_encoded += 1;
        self.frames_discardable += u64::from(layer == Layer::Discardable);
        self.bytes_encoded += frame.data.len() as u64;
        let count = payloads.len();
        for (i, payload) in payloads.into_iter().enumerate() {
            out.push(MediaPacket {
                ssrc: VIDEO_SSRC,
                payload_type: VIDEO_PAYLOAD_TYPE,
                sequence_number: self.sequence,
                timestamp: timestamp_90k as u32,
                marker: i + 1 == count,
                payload,
                frame_id: self.next_frame_id,
                key_frame: frame.key_frame,
                capture,
            });
            self.sequence = self.sequence.wrapping_add(1);
            self.packets += 1;
        }
        self.next_frame_id = self.next_frame_id.wrapping_add(1);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::vp8::descriptor::{self, TemporalLayer};

    #[test]
    fn discardable_frames_go_out_as_layer_1_sync_frames_with_the_last_base_frame_s_tl0picidx() {
        let mut camera = Vp8Camera::new(7, Time::ZERO).unwrap();
        camera.encoder.set_target_bps(MAX_BPS).unwrap();
        let mut out = Vec::new();
        // (slot, key, TID, Y, N, TL0PICIDX, picture id) per frame sent.
        let mut sent = Vec::new();
        // Slot 0 is asked discardable, but it is the first (key) frame; the window 20..26 gets
        // a key frame asked for at slot 22; 32..35 is a plain window. (libvpx's rate control
        // drops a few frames after the first key frame.)
        let asked = |slot: u64| slot == 0 || (20..26).contains(&slot) || (32..35).contains(&slot);
        for slot in 0..45u64 {
            let discardable = asked(slot);
            if slot == 22 {
                camera.request_key_frame();
            }
            out.clear();
            if !camera.encode_slot(slot, discardable, &mut out).unwrap() {
                continue;
            }
            let first = descriptor::parse(&out[0].payload).unwrap();
            for (i, p) in out.iter().enumerate() {
                assert!(p.payload.len() <= DEFAULT_MAX_PAYLOAD);
                assert_eq!(p.marker, i + 1 == out.len());
                let d = descriptor::parse(&p.payload).unwrap();
                assert_eq!(d.starts_frame(), i == 0);
                assert_eq!(
                    (d.picture_id, d.tl0_pic_idx, d.layer, d.non_reference),
                    (
                        first.picture_id,
                        first.tl0_pic_idx,
                        first.layer,
                        first.non_reference
                    )
                );
            }
            let layer = first.layer.unwrap_or(TemporalLayer { id: 9, sync: false });
            sent.push((
                slot,
                out[0].key_frame,
                layer.id,
                layer.sync,
                first.non_reference,
                first.tl0_pic_idx.unwrap_or_default(),
                first.picture_id.unwrap_or_default(),
            ));
        }
        assert!(
            sent.iter().filter(|f| f.0 >= 20).count() == 25,
            "libvpx dropped frames from slot 20 on: {sent:?}"
        );
        let (mut tl0, mut picture) = (None::<u8>, None::<u16>);
        for &(slot, key, tid, sync, non_reference, tl0_pic_idx, picture_id) in &sent {
            let discardable = asked(slot) && !key;
            assert_eq!(key, slot == 0 || slot == 22, "slot {slot}");
            assert_eq!(
                (tid, sync, non_reference),
                (u8::from(discardable), discardable, discardable),
                "slot {slot}"
            );
            let expected = match (tl0, discardable) {
                (Some(t), true) => t,
                (Some(t), false) => t.wrapping_add(1),
                (None, _) => tl0_pic_idx,
            };
            assert_eq!(tl0_pic_idx, expected, "slot {slot}");
            tl0 = Some(tl0_pic_idx);
            if let Some(p) = picture {
                assert_eq!(picture_id, (p + 1) % (1 << 15), "slot {slot}");
            }
            picture = Some(picture_id);
        }
        let discardable = sent.iter().filter(|f| f.2 == 1).count() as u64;
        assert_eq!(discardable, 8, "{sent:?}");
        assert_eq!(camera.frames_discardable(), discardable);
        assert_eq!(camera.key_frames(), 2);
        assert_eq!(camera.frames_encoded(), sent.len() as u64);
    }
}

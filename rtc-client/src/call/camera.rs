//! The sending application's video: the synthetic encoder steered by the sender, and the
//! packetizer, stepped once per frame in simulated and real calls alike.

use super::interval::OpenInterval;
use super::sender::steer_encoder;
use super::streams::{VIDEO_PAYLOAD_TYPE, VIDEO_SSRC};
use crate::link::Time;
use crate::media::encoder::{Encoder, EncoderConfig};
use crate::media::packetizer::{DEFAULT_MAX_PAYLOAD, MediaPacket, Packetizer};
use pacer::PacerStats;
use pacer::cwnd::CwndSnapshot;
use pacer::sender::SenderHandles;
use std::time::Duration;

/// Salt that separates the encoder's seed from the call seed.
const ENCODER_SEED_SALT: u64 = 0x454E_434F_4445_5231;

/// The encoder and the packetizer of a call's video stream ([`VIDEO_SSRC`]).
pub struct Camera {
    encoder: Encoder,
    packetizer: Packetizer,
    frame_interval: Duration,
}

/// What the sender looked like at a frame, as the camera read it.
pub struct FrameStep {
    /// The pacer's stats.
    pub stats: PacerStats,
    /// The congestion window.
    pub window: CwndSnapshot,
    /// The estimator's target, bps.
    pub target_bps: f64,
    /// Whether the encoder produced a frame (it may drop one for the pacer's pause or the
    /// congestion window's pushback).
    pub encoded: bool,
}

impl Camera {
    /// The camera of a call with seed `seed` whose first frame is due at `start` (the encoder's
    /// seed derives from the call seed).
    pub fn new(seed: u64, start: Time) -> Self {
        let encoder = Encoder::new(
            EncoderConfig {
                seed: seed ^ ENCODER_SEED_SALT,
                ..EncoderConfig::default()
            },
            start,
        );
        let frame_interval = Duration::from_nanos(1_000_000_000 / u64::from(encoder.config().fps));
        Self {
            encoder,
            packetizer: Packetizer::new(VIDEO_SSRC, VIDEO_PAYLOAD_TYPE, DEFAULT_MAX_PAYLOAD, 0),
            frame_interval,
        }
    }

    /// When the next frame is due.
    pub fn next_frame_time(&self) -> Time {
        self.encoder.next_frame_time()
    }

    /// The encoder (its counters).
    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }

    /// Asks the encoder for a key frame (a PLI arrived).
    pub fn request_key_frame(&mut self) {
        self.encoder.request_key_frame();
    }

    /// RTP packets the packetizer has produced (retransmissions not included).
    pub fn packets_sent(&self) -> u64 {
        self.packetizer.packets_sent()
    }

    /// One frame instant: hands the encoder the sender's target and the congestion window's
    /// pushback ([`steer_encoder`]) and whether the frame is to be discardable (the
    /// discardable-frames action, [`pacer::ActionsHandle::frame_discardable`] at its capture
    /// instant), samples the open interval, and packetizes the frame, if the encoder produces
    /// one (none while the pacer asks for a pause), into `out`.
    pub fn capture(
        &mut self,
        now: Time,
        discardable: bool,
        sender: &SenderHandles,
        interval: Option<&mut OpenInterval>,
        out: &mut Vec<MediaPacket>,
    ) -> FrameStep {
        let stats = sender.pacer.stats();
        let window = sender.cwnd.snapshot();
        steer_encoder(
            &mut self.encoder,
            now,
            stats.target_bitrate_bps,
            &sender.protection,
            &window,
            &sender.cwnd.config(),
        );
        self.encoder.set_discardable(discardable);
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
        let frame = self.encoder.poll_frame(now, pause);
        if let Some(frame) = &frame {
            self.packetizer.packetize_into(frame, out);
        }
        FrameStep {
            stats,
            window,
            target_bps,
            encoded: frame.is_some(),
        }
    }
}

//! When a decodable frame is shown: the receiver's playout timing.
//!
//! A model of libwebrtc's `VCMTiming` (`modules/video_coding/timing/timing.cc`) with its
//! `TimestampExtrapolator`:
//!
//! - A frame's *render time* is the local time its capture instant maps to plus the *current
//!   delay*: `render = capture + base transit + current delay`. The base transit is what the
//!   extrapolator learns, the usual time from capture to a frame being complete at the
//!   receiver (it absorbs any clock offset between the peers).
//! - The *target delay* is the jitter estimate ([`super::jitter`]) plus the render delay (10 ms).
//!   The current delay moves towards the target by at most 100 ms per second of media time, so
//!   playout does not jump when the jitter estimate does.
//! - A frame that becomes decodable after its render time is shown at once, and the current
//!   delay grows by its lateness (up to the target): late frames push playout back.
//!
//! Differences from libwebrtc, numbered:
//! 1. The extrapolator is an exponential average of the transit of frames that needed no
//!    retransmission, with a memory of [`PlayoutConfig::transit_memory_frames`] frames, instead of
//!    libwebrtc's Kalman fit of arrival against RTP timestamp with its delay-jump detector. Both
//!    follow a lasting change of the path delay within a few seconds; neither follows a brief
//!    spike.
//! 2. Decoding takes no time (libwebrtc adds the 95th percentile of measured decode times to the
//!    target); the synthetic codec has no decoder.
//!
//! The *minimum playout delay* is libwebrtc's: the largest of the sender's last
//! `playout-delay` RTP header extension value and the application's base minimum
//! (`video/video_receive_stream2.cc`, `UpdatePlayoutDelays`; [`PlayoutConfig::base_minimum`]).
//! As in `VCMTiming::RenderTimeInternal`, the delay a frame renders with is the current delay
//! clamped to it, in one step: the current delay itself is not moved by it.
//!
//! 3. There is no audio-video synchronisation (its minimum is libwebrtc's third term).

use crate::link::Time;
use std::time::Duration;

/// How the receiver schedules decodable frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlayoutConfig {
    /// Added to the jitter estimate to form the target delay.
    ///
    /// libwebrtc: `kDefaultRenderDelay` = 10 ms (timing.cc).
    pub render_delay: Duration,
    /// How fast the current delay may follow the target, per second of media time.
    ///
    /// libwebrtc: `kDelayMaxChangeMsPerS` = 100 ms (timing.cc).
    pub max_change_per_second: Duration,
    /// The largest playout delay.
    ///
    /// libwebrtc: `kMaxVideoDelay` = 10 s (timing.cc).
    pub max_delay: Duration,
    /// The memory, in frames, of the base-transit average.
    ///
    /// Chosen: 64 frames (about 2 s at 30 fps): long enough that the 100-150 ms spikes at a
    /// Starlink slot boundary leave the base alone and frames simply arrive late, short enough
    /// that a new slot's path delay is followed within its first seconds, as libwebrtc's
    /// extrapolator does after its delay-jump detector fires.
    pub transit_memory_frames: u32,
    /// The application's base minimum playout delay (libwebrtc's `base_minimum_playout_delay`,
    /// what a browser's `RTCRtpReceiver.jitterBufferTarget` sets): every frame renders at least
    /// this long after its expected completion.
    ///
    /// Zero by default, as in libwebrtc.
    pub base_minimum: Duration,
}

impl Default for PlayoutConfig {
    fn default() -> Self {
        Self {
            render_delay: Duration::from_millis(10),
            max_change_per_second: Duration::from_millis(100),
            max_delay: Duration::from_secs(10),
            transit_memory_frames: 64,
            base_minimum: Duration::ZERO,
        }
    }
}

/// The playout state of one video stream (see the module documentation).
#[derive(Debug, Clone)]
pub struct PlayoutTiming {
    config: PlayoutConfig,
    /// Mean transit, nanoseconds (signed: the peers' clocks may differ).
    base_transit_ns: Option<f64>,
    current_delay: Option<Duration>,
    previous_capture: Option<Time>,
    late_frames: u64,
}

impl PlayoutTiming {
    /// Timing that has seen no frame.
    pub fn new(config: PlayoutConfig) -> Self {
        Self {
            config,
            base_transit_ns: None,
            current_delay: None,
            previous_capture: None,
            late_frames: 0,
        }
    }

    /// A frame that needed no retransmission completed at `completed`: it teaches the base
    /// transit.
    pub fn on_frame_complete(&mut self, capture: Time, completed: Time) {
        let transit = completed.as_nanos() as f64 - capture.as_nanos() as f64;
        let weight = 1.0 / f64::from(self.config.transit_memory_frames.max(1));
        self.base_transit_ns = Some(match self.base_transit_ns {
            None => transit,
            Some(base) => base + weight * (transit - base),
        });
    }

    /// The render time of a frame captured at `capture` that is decodable at `now`, given the
    /// `jitter` estimate and the minimum playout delay the sender last signalled; updates the
    /// current delay (towards the target, and by the frame's lateness if it is late). Never
    /// before `now`.
    pub fn schedule(
        &mut self,
        now: Time,
        capture: Time,
        jitter: Duration,
        signalled_minimum: Duration,
    ) -> Time {
        let target = (jitter + self.config.render_delay).min(self.config.max_delay);
        let current = match (self.current_delay, self.previous_capture) {
            (Some(current), Some(previous)) if capture > previous => {
                let media = capture.saturating_duration_since(previous);
                let max_change = self
                    .config
                    .max_change_per_second
                    .mul_f64(media.as_secs_f64().min(10.0));
                if target > current {
                    current + (target - current).min(max_change)
                } else {
                    current - (current - target).min(max_change)
                }
            }
            (Some(current), _) => current,
            (None, _) => target,
        };
        self.previous_capture = Some(self.previous_capture.map_or(capture, |p| p.max(capture)));
        let base = self.base_transit_ns.unwrap_or(0.0);
        let minimum = signalled_minimum.max(self.config.base_minimum);
        let delay = current.max(minimum).min(self.config.max_delay);
        let due_ns = capture.as_nanos() as f64 + base + delay.as_nanos() as f64;
        let due = Time::from_nanos(due_ns.max(0.0) as u64);
        if due >= now {
            self.current_delay = Some(current);
            return due;
        }
        self.late_frames += 1;
        let late = now.saturating_duration_since(due);
        self.current_delay = Some(if current + late <= target {
            current + late
        } else {
            target.max(current)
        });
        now
    }

    /// The current playout delay on top of the base transit.
    pub fn current_delay(&self) -> Duration {
        self.current_delay.unwrap_or_default()
    }

    /// Frames that became decodable after their render time.
    pub fn late_frames(&self) -> u64 {
        self.late_frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time::from_millis(v)
    }

    fn d(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn frames_render_at_capture_plus_base_transit_plus_the_target_delay() {
        let mut p = PlayoutTiming::new(PlayoutConfig::default());
        p.on_frame_complete(ms(0), ms(80));
        // Target 20 + 10 = 30 ms; the first frame takes it at once.
        assert_eq!(p.schedule(ms(80), ms(0), d(20), d(0)), ms(110));
        p.on_frame_complete(ms(33), ms(113));
        assert_eq!(p.schedule(ms(113), ms(33), d(20), d(0)), ms(143));
        assert_eq!(p.current_delay(), d(30));
        assert_eq!(p.late_frames(), 0);
    }

    #[test]
    fn the_current_delay_follows_a_higher_target_at_100_ms_per_second_of_media() {
        let mut p = PlayoutTiming::new(PlayoutConfig::default());
        p.on_frame_complete(ms(0), ms(50));
        assert_eq!(p.schedule(ms(50), ms(0), d(0), d(0)), ms(60));
        // The target jumps to 210 ms; 500 ms of media later the delay may have grown by 50 ms.
        assert_eq!(p.schedule(ms(550), ms(500), d(200), d(0)), ms(610));
        assert_eq!(p.current_delay(), d(60));
        assert_eq!(
            p.schedule(ms(2_600), ms(2_500), d(200), d(0)),
            ms(2_500 + 50 + 210)
        );
    }

    #[test]
    fn a_late_frame_renders_at_once_and_pushes_the_delay_back_up_to_the_target() {
        let mut p = PlayoutTiming::new(PlayoutConfig::default());
        p.on_frame_complete(ms(0), ms(50));
        assert_eq!(p.schedule(ms(50), ms(0), d(0), d(0)), ms(60));
        // The target rises to 50 ms, the delay may move 3.3 ms in 33 ms of media: the frame was
        // due at 33 + 50 + 13.3 and is decodable about 97 ms later.
        assert_eq!(p.schedule(ms(193), ms(33), d(40), d(0)), ms(193));
        assert_eq!(p.late_frames(), 1);
        // Lateness 97 would take the delay past the target of 50: it stops there.
        assert_eq!(p.current_delay(), d(50));
    }

    #[test]
    fn a_signalled_minimum_moves_render_times_in_one_step_and_leaves_the_current_delay() {
        let mut p = PlayoutTiming::new(PlayoutConfig::default());
        p.on_frame_complete(ms(0), ms(50));
        assert_eq!(p.schedule(ms(50), ms(0), d(20), d(0)), ms(80));
        p.on_frame_complete(ms(33), ms(83));
        // The sender asks for 100 ms: the next frame renders 100 ms after its expected completion.
        assert_eq!(p.schedule(ms(83), ms(33), d(20), d(100)), ms(183));
        assert_eq!(p.current_delay(), d(30), "the current delay is not moved");
        // Back to zero: the current delay again.
        p.on_frame_complete(ms(66), ms(116));
        assert_eq!(p.schedule(ms(116), ms(66), d(20), d(0)), ms(146));
        assert_eq!(p.late_frames(), 0);
    }

    #[test]
    fn the_base_minimum_is_a_floor_under_every_frame_and_under_the_signalled_minimum() {
        let config = PlayoutConfig {
            base_minimum: d(200),
            ..PlayoutConfig::default()
        };
        let mut p = PlayoutTiming::new(config);
        p.on_frame_complete(ms(0), ms(50));
        assert_eq!(p.schedule(ms(50), ms(0), d(20), d(0)), ms(250));
        p.on_frame_complete(ms(33), ms(83));
        assert_eq!(p.schedule(ms(83), ms(33), d(20), d(100)), ms(283));
        p.on_frame_complete(ms(66), ms(116));
        assert_eq!(p.schedule(ms(116), ms(66), d(20), d(300)), ms(416));
    }

    #[test]
    fn the_base_transit_follows_a_lasting_delay_step_within_a_few_seconds() {
        let mut p = PlayoutTiming::new(PlayoutConfig::default());
        for i in 0..300u64 {
            p.on_frame_complete(ms(i * 33), ms(i * 33 + 50));
        }
        for i in 300..600u64 {
            p.on_frame_complete(ms(i * 33), ms(i * 33 + 150));
        }
        let due = p.schedule(ms(600 * 33 + 150), ms(600 * 33), d(0), d(0));
        let base = due.as_millis() as i64 - (600 * 33) as i64 - 10;
        assert!((148..=150).contains(&base), "{base}");
    }
}

//! Which video a live call sends: the synthetic codec (frame sizes and timing of a real encoder,
//! payloads only this project's receiver reads) or real VP8 from libvpx (pictures any WebRTC
//! receiver decodes, a browser's among them; feature `vp8`).

use super::camera::{Camera, FrameStep};
use super::interval::OpenInterval;
use crate::link::Time;
use crate::media::packetizer::MediaPacket;
use pacer::sender::SenderHandles;

/// Why a build without the `vp8` feature cannot send real VP8, and how to get one that can: one
/// line, the same from every command that needs it (`call --video vp8`, `browser --direction
/// receive`). The feature is off by default so that the simulated commands build on a machine
/// without libvpx (README, "Quick start").
pub const NO_VP8: &str = "real VP8 video needs libvpx, which this build of rtc-client leaves \
     out: install libvpx-dev and pkg-config (scripts/setup-browser.sh does), then build with \
     `--features vp8` (e.g. `cargo run --release -p rtc-client --features vp8 -- ...`)";

/// What `call --video` parses to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VideoChoice {
    /// The synthetic encoder and packetizer (the default: the simulator's, byte for byte).
    #[default]
    Synthetic,
    /// The moving test pattern encoded as VP8 by libvpx.
    Vp8,
}

impl VideoChoice {
    /// Parses `synthetic` or `vp8`.
    ///
    /// # Errors
    ///
    /// A message naming the accepted values.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "synthetic" => Ok(Self::Synthetic),
            "vp8" => Ok(Self::Vp8),
            other => Err(format!("unknown video {other:?}: synthetic or vp8")),
        }
    }

    /// Whether this build can send this video: real VP8 needs the `vp8` feature, which links
    /// libvpx (rtc-client/Cargo.toml). Commands check it before they open anything, so a build
    /// without libvpx fails at once with what to install rather than after signalling.
    ///
    /// # Errors
    ///
    /// [`NO_VP8`] for [`VideoChoice::Vp8`] in a build without the `vp8` feature.
    pub fn available(self) -> Result<(), String> {
        match self {
            Self::Synthetic => Ok(()),
            Self::Vp8 if cfg!(feature = "vp8") => Ok(()),
            Self::Vp8 => Err(NO_VP8.into()),
        }
    }

    /// The name `parse` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Synthetic => "synthetic",
            Self::Vp8 => "vp8",
        }
    }
}

/// A live call's camera, either kind.
pub enum Video {
    /// The synthetic one.
    Synthetic(Box<Camera>),
    /// Real VP8.
    #[cfg(feature = "vp8")]
    Vp8(Box<super::vp8_camera::Vp8Camera>),
}

impl Video {
    /// The camera `choice` names, first frame due at `start`.
    ///
    /// # Errors
    ///
    /// A message when VP8 is asked of a build without the `vp8` feature, or libvpx fails.
    pub fn new(choice: VideoChoice, seed: u64, start: Time) -> Result<Self, String> {
        match choice {
            VideoChoice::Synthetic => Ok(Self::Synthetic(Box::new(Camera::new(seed, start)))),
            #[cfg(feature = "vp8")]
            VideoChoice::Vp8 => super::vp8_camera::Vp8Camera::new(seed, start)
                .map(|c| Self::Vp8(Box::new(c)))
                .map_err(|e| e.to_string()),
            #[cfg(not(feature = "vp8"))]
            VideoChoice::Vp8 => Err(NO_VP8.into()),
        }
    }

    /// When the next frame is due.
    pub fn next_frame_time(&self) -> Time {
        match self {
            Self::Synthetic(c) => c.next_frame_time(),
            #[cfg(feature = "vp8")]
            Self::Vp8(c) => c.next_frame_time(),
        }
    }

    /// Asks for a key frame.
    pub fn request_key_frame(&mut self) {
        match self {
            Self::Synthetic(c) => c.request_key_frame(),
            #[cfg(feature = "vp8")]
            Self::Vp8(c) => c.request_key_frame(),
        }
    }

    /// RTP media packets produced.
    pub fn packets_sent(&self) -> u64 {
        match self {
            Self::Synthetic(c) => c.packets_sent(),
            #[cfg(feature = "vp8")]
            Self::Vp8(c) => c.packets_sent(),
        }
    }

    /// Frames encoded.
    pub fn frames_encoded(&self) -> u64 {
        match self {
            Self::Synthetic(c) => c.encoder().frames_encoded(),
            #[cfg(feature = "vp8")]
            Self::Vp8(c) => c.frames_encoded(),
        }
    }

    /// Frames dropped before or by the encoder.
    pub fn frames_dropped(&self) -> u64 {
        match self {
            Self::Synthetic(c) => c.encoder().frames_dropped(),
            #[cfg(feature = "vp8")]
            Self::Vp8(c) => c.frames_dropped(),
        }
    }

    /// Frames the encoder dropped for congestion-window pushback (the synthetic encoder drops
    /// one in N; the VP8 camera follows the pushback target instead, so it drops none for it).
    pub fn frames_dropped_by_pushback(&self) -> u64 {
        match self {
            Self::Synthetic(c) => c.encoder().frames_dropped_by_pushback(),
            #[cfg(feature = "vp8")]
            Self::Vp8(_) => 0,
        }
    }

    /// Key frames encoded.
    pub fn key_frames(&self) -> u64 {
        match self {
            Self::Synthetic(c) => c.encoder().key_frames(),
            #[cfg(feature = "vp8")]
            Self::Vp8(c) => c.key_frames(),
        }
    }

    /// Discardable frames encoded (the discardable-frames action).
    pub fn frames_discardable(&self) -> u64 {
        match self {
            Self::Synthetic(c) => c.encoder().frames_discardable(),
            #[cfg(feature = "vp8")]
            Self::Vp8(c) => c.frames_discardable(),
        }
    }

    /// Encoded bytes.
    pub fn bytes_encoded(&self) -> u64 {
        match self {
            Self::Synthetic(c) => c.encoder().bytes_encoded(),
            #[cfg(feature = "vp8")]
            Self::Vp8(c) => c.bytes_encoded(),
        }
    }

    /// One frame instant (see [`Camera::capture`]); `discardable`: the frame is to be encoded
    /// discardable (the discardable-frames action).
    ///
    /// # Errors
    ///
    /// The encoder's failure, as text (VP8 only; the synthetic camera cannot fail).
    pub fn capture(
        &mut self,
        now: Time,
        discardable: bool,
        sender: &SenderHandles,
        interval: Option<&mut OpenInterval>,
        out: &mut Vec<MediaPacket>,
    ) -> Result<FrameStep, String> {
        match self {
            Self::Synthetic(c) => Ok(c.capture(now, discardable, sender, interval, out)),
            #[cfg(feature = "vp8")]
            Self::Vp8(c) => c
                .capture(now, discardable, sender, interval, out)
                .map_err(|e| e.to_string()),
        }
    }
}

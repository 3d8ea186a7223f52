//! A synthetic video encoder: frame sizes and timing of a real-time encoder, without pixels.
//!
//! The encoder emits one [`EncodedFrame`] per frame interval (30 fps by default). A frame's size
//! follows the rate controller's *effective* target, which trails the target set by the
//! bandwidth estimator with a first-order lag (see [`EncoderConfig::rate_time_constant`]), varies
//! log-normally around it, and is corrected by budget accounting so that the long-run bitrate
//! tracks the target: a key frame's extra bits are paid back over the following delta frames.
//! Key frames are produced first and after [`Encoder::request_key_frame`] (on a PLI).
//!
//! A frame due while the pacer asks the encoder to pause (`encoder_should_pause`) is dropped
//! before encoding and counted, as libwebrtc's `VideoStreamEncoder` does when the pacer's queue
//! is too long (`PacingController`'s expected queue time above its limit).
//!
//! Frames captured in a discardable window (docs/architecture.md, "Discardable frames";
//! [`Encoder::set_discardable`]) are temporal-layer-1 layer-sync frames: each references the
//! last base-layer frame and no frame references it; the first frame after the window
//! references that base frame too. Predicting from an older frame costs bits: such a frame's
//! size is the normal one times [`reference_distance_cost`], measured on libvpx
//! (docs/experiments/discardable-frames-2026-12-03.md).
//!
//! Sans-I/O: the encoder never reads a clock. The caller asks [`Encoder::next_frame_time`] and
//! calls [`Encoder::poll_frame`] at (or after) that instant.

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::payload::{HEADER_LEN, Temporal};
use crate::link::Time;
use crate::rng::{open01, stream};

const NANOS_PER_SEC: u128 = 1_000_000_000;
/// The RTP clock rate of video (RFC 3551 §5 / RFC 6184 / RFC 7741: 90 kHz).
pub const RTP_VIDEO_CLOCK_HZ: u64 = 90_000;

/// The frame size the synthetic encoder stands for, width x height: 1280x720, the stream whose
/// maximum [`EncoderConfig::max_bps`] is modelled on. The loss protection's rate table reads the
/// resolution (libwebrtc `media_opt_util.cc`, the resolution factor and the FEC cut-off).
pub const NOMINAL_RESOLUTION: (u32, u32) = (1280, 720);

/// The encoder's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct EncoderConfig {
    /// Frames per second (default 30, the usual camera rate for WebRTC calls). Zero is treated
    /// as 1.
    pub fps: u32,
    /// The lowest target, bit/s (default 50 kbit/s; chosen: about the lowest rate at which a
    /// real encoder still produces usable video; libwebrtc's own floor, as best known, is
    /// 30 kbit/s).
    pub min_bps: u64,
    /// The highest target, bit/s (default 2.5 Mbit/s; chosen to match, as best known, the
    /// maximum libwebrtc's simulcast table gives a 1280×720 stream).
    pub max_bps: u64,
    /// The target before the first [`Encoder::set_target`], bit/s (default 300 kbit/s: as best
    /// known, libwebrtc's default start bitrate, `kDefaultStartBitrateBps`).
    pub start_bps: u64,
    /// A key frame's size relative to a delta frame at the same target (default 5; chosen:
    /// key frames are "several times" a delta frame, and libwebrtc's VP8 wrapper caps them at
    /// `MaxIntraTarget` = 0.5 × 600 ms optimal buffer × fps / 10 = 900 % of a frame's budget at
    /// 30 fps, so 5 sits well inside that cap).
    pub key_frame_ratio: f64,
    /// The standard deviation of the natural log of a frame's size factor (default 0.2; chosen:
    /// a log-normal spread of about ±20 % per frame, typical of a talking-head call). The factor
    /// has mean 1, so the spread does not bias the bitrate. Zero gives exact sizes.
    pub size_sigma: f64,
    /// The time constant of the rate controller's response to a new target (default 800 ms;
    /// chosen). libwebrtc applies a new rate to the encoder at the next frame, and libvpx's rate
    /// control converges over its buffer (`rc_buf_sz` 1000 ms, `rc_buf_optimal_sz` 600 ms in
    /// libwebrtc's VP8 wrapper), so the delivered rate follows a step over about a second:
    /// with 800 ms the effective target covers 22 % of a step after 200 ms and 92 % after 2 s.
    pub rate_time_constant: Duration,
    /// The span over which a budget overshoot (a key frame) or undershoot is paid back (default
    /// 500 ms; chosen, near libvpx's 600 ms optimal buffer level). The outstanding balance is
    /// also capped at one second of the effective target (`rc_buf_sz`).
    pub payback: Duration,
    /// The smallest delta frame, as a fraction of the nominal frame size (default 0.1; chosen),
    /// so that paying back a key frame never produces empty frames. Frames are also never below
    /// one payload header ([`HEADER_LEN`] bytes).
    pub min_frame_fraction: f64,
    /// Added to every RTP timestamp (default 0). RFC 3550 §5.1 recommends a random offset.
    pub rtp_timestamp_offset: u32,
    /// The seed of the size variation (ChaCha8): the same seed gives the same frame sizes.
    pub seed: u64,
}

impl Default for EncoderConfig {
    fn default() -> Self {
        Self {
            fps: 30,
            min_bps: 50_000,
            max_bps: 2_500_000,
            start_bps: 300_000,
            key_frame_ratio: 5.0,
            size_sigma: 0.2,
            rate_time_constant: Duration::from_millis(800),
            payback: Duration::from_millis(500),
            min_frame_fraction: 0.1,
            rtp_timestamp_offset: 0,
            seed: 0,
        }
    }
}

/// One encoded frame: its identity, capture instant and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodedFrame {
    /// The frame's id: consecutive encoded frames have consecutive ids (wrapping); dropped
    /// frames take no id, so a receiver sees a gap only when packets are lost.
    pub id: u32,
    /// The capture instant (the frame's slot in the camera's schedule).
    pub capture: Time,
    /// The frame's size in bytes, payload headers included (at least [`HEADER_LEN`]).
    pub size_bytes: u32,
    /// Whether this is a key frame.
    pub key_frame: bool,
    /// The 90 kHz RTP timestamp of the capture instant (rounded to the nearest tick, plus
    /// [`EncoderConfig::rtp_timestamp_offset`], wrapping).
    pub rtp_timestamp: u32,
    /// Its temporal layer and reference when it is not the linear chain's: a discardable
    /// frame, or the first base frame after discardable ones; `None`: it references the frame
    /// before it (or nothing, a key frame).
    pub temporal: Option<Temporal>,
}

/// What a frame predicted from the frame `distance` frames before it costs, as a multiple of
/// what the same frame costs predicted from the frame before it (distance 1), at the same
/// quality.
///
/// Measured on libvpx's VP8 (1.12, realtime, `cpu_used` -12) at fixed quantizers 24 and 40,
/// on a 640x360 crop panning at 2 and 6 pixels a frame over three photographs, with 9-frame
/// discardable windows (the k-th frame of a window predicted from the base frame k frames
/// before it, the frame after the window from one 10 frames before):
/// docs/experiments/discardable-frames-2026-12-03.md, the table "bits by reference distance",
/// the mean over the 12 runs. Distances beyond the table cost its last entry.
pub fn reference_distance_cost(distance: u32) -> f64 {
    let index = usize::try_from(distance.max(1) - 1)
        .unwrap_or(usize::MAX)
        .min(REFERENCE_DISTANCE_COST.len() - 1);
    REFERENCE_DISTANCE_COST[index]
}

/// [`reference_distance_cost`] for distances 1 to 10 (docs/experiments/
/// discardable-frames-2026-12-03.md, "bits by reference distance"). Distance 1 is a
/// discardable frame right after its base frame: it costs what a normal frame costs (it may not
/// use the golden or altref buffers nor update the entropy context, which made no difference
/// measurable here); distance 2 came out below 1 (libvpx's normal chain spends bits on golden
/// refreshes the discardable frames skip); distance 10 is the base frame after a 9-frame window,
/// which may use the golden buffer again.
const REFERENCE_DISTANCE_COST: [f64; 10] = [
    1.002, 0.936, 1.295, 1.589, 2.000, 2.404, 2.596, 2.793, 3.013, 2.774,
];

/// The synthetic encoder. See the module documentation.
#[derive(Debug, Clone)]
pub struct Encoder {
    config: EncoderConfig,
    rng: ChaCha8Rng,
    start: Time,
    /// Index of the next frame slot in the camera's schedule.
    slot: u64,
    /// The target set by the estimator (clamped), bit/s.
    target_bps: f64,
    /// The rate controller's effective target, bit/s.
    effective_bps: f64,
    /// When `effective_bps` was last advanced.
    effective_at: Time,
    /// Bits spent above (positive) or below (negative) the effective target so far.
    balance_bits: f64,
    next_id: u32,
    key_pending: bool,
    frames_encoded: u64,
    frames_dropped: u64,
    key_frames: u64,
    bytes_encoded: u64,
    /// Congestion-window pushback with DropFrame: one frame in this many is dropped.
    drop_interval: Option<u32>,
    /// Frames considered while `drop_interval` was set (libwebrtc `cwnd_frame_counter_`).
    drop_counter: u64,
    frames_dropped_by_pushback: u64,
    /// Whether frames encoded now are discardable ([`Encoder::set_discardable`]).
    discardable: bool,
    /// The last base-layer frame encoded (every frame that is not discardable).
    last_base: Option<u32>,
    /// Discardable frames encoded since [`Self::last_base`].
    since_base: u32,
    frames_discardable: u64,
}

impl Encoder {
    /// An encoder whose first frame is captured at `start`. Out-of-range settings are repaired
    /// rather than rejected: `fps` 0 becomes 1, `max_bps` below `min_bps` is raised to it,
    /// `start_bps` is clamped to the limits, and negative or non-finite factors fall back to
    /// their defaults.
    pub fn new(config: EncoderConfig, start: Time) -> Self {
        let config = sanitize(config);
        let target = config.start_bps as f64;
        Self {
            rng: stream(config.seed, "media.encoder"),
            config,
            start,
            slot: 0,
            target_bps: target,
            effective_bps: target,
            effective_at: start,
            balance_bits: 0.0,
            next_id: 0,
            key_pending: true,
            frames_encoded: 0,
            frames_dropped: 0,
            key_frames: 0,
            bytes_encoded: 0,
            drop_interval: None,
            drop_counter: 0,
            frames_dropped_by_pushback: 0,
            discardable: false,
            last_base: None,
            since_base: 0,
            frames_discardable: 0,
        }
    }

    /// The settings in use (after repair).
    pub fn config(&self) -> &EncoderConfig {
        &self.config
    }

    /// Sets the estimator's target at `now`, clamped to [`EncoderConfig::min_bps`] ..
    /// [`EncoderConfig::max_bps`]. The rate controller moves towards it with its lag.
    pub fn set_target(&mut self, now: Time, bps: u64) {
        self.advance(now);
        self.target_bps = bps.clamp(self.config.min_bps, self.config.max_bps) as f64;
    }

    /// The target last set (clamped), bit/s.
    pub fn target_bps(&self) -> u64 {
        self.target_bps as u64
    }

    /// The rate controller's effective target as of the last frame or [`Encoder::set_target`],
    /// bit/s.
    pub fn effective_bps(&self) -> u64 {
        self.effective_bps as u64
    }

    /// Asks for a key frame (on a PLI or FIR): the next encoded frame is one. A request while
    /// frames are being dropped waits for the next encoded frame.
    pub fn request_key_frame(&mut self) {
        self.key_pending = true;
    }

    /// When the next frame is due (its capture instant).
    pub fn next_frame_time(&self) -> Time {
        self.slot_time(self.slot)
    }

    /// Encodes the frame due at or before `now`, or drops it when `pause` is set (the pacer's
    /// `encoder_should_pause`). Returns `None` before [`Encoder::next_frame_time`] and for a
    /// dropped frame. A caller later than one frame interval gets only the latest due frame;
    /// the skipped slots count as dropped, as a camera's frames are when the encoder is behind.
    pub fn poll_frame(&mut self, now: Time, pause: bool) -> Option<EncodedFrame> {
        if now < self.next_frame_time() {
            return None;
        }
        let latest = self.latest_slot(now);
        self.frames_dropped += latest - self.slot;
        let capture = self.slot_time(latest);
        self.slot = latest + 1;
        self.advance(capture);
        if pause {
            self.frames_dropped += 1;
            return None;
        }
        if let Some(interval) = self.drop_interval {
            let drop = self.drop_counter.is_multiple_of(u64::from(interval.max(1)));
            self.drop_counter += 1;
            if drop {
                self.frames_dropped += 1;
                self.frames_dropped_by_pushback += 1;
                return None;
            }
        }
        Some(self.encode(capture))
    }

    /// Congestion-window pushback with `DropFrame` (libwebrtc's default): from the next frame
    /// on, one frame in `interval` is dropped before encoding (`VideoStreamEncoder`'s
    /// `cwnd_frame_drop_interval_`, whose counter `cwnd_frame_counter_` drops the frame whenever
    /// `counter++ % interval == 0`); `None` stops dropping. Dropped frames count in
    /// [`Encoder::frames_dropped`] and [`Encoder::frames_dropped_by_pushback`]; a pending key
    /// frame waits for the next encoded frame.
    pub fn set_frame_drop_interval(&mut self, interval: Option<u32>) {
        self.drop_interval = interval;
    }

    /// Whether the frames encoded from now on are discardable (the discardable-frames action,
    /// asked per frame: [`pacer::ActionsHandle::frame_discardable`]): each then references the
    /// last base-layer frame and no frame references it, and the first frame encoded after it
    /// references that base frame too. A key frame is always a base frame.
    pub fn set_discardable(&mut self, discardable: bool) {
        self.discardable = discardable;
    }

    /// Discardable frames encoded so far.
    pub fn frames_discardable(&self) -> u64 {
        self.frames_discardable
    }

    /// Frames dropped by congestion-window pushback so far.
    pub fn frames_dropped_by_pushback(&self) -> u64 {
        self.frames_dropped_by_pushback
    }

    /// Frames dropped so far (paused, or skipped by a late caller).
    pub fn frames_dropped(&self) -> u64 {
        self.frames_dropped
    }

    /// Frames encoded so far.
    pub fn frames_encoded(&self) -> u64 {
        self.frames_encoded
    }

    /// Key frames encoded so far.
    pub fn key_frames(&self) -> u64 {
        self.key_frames
    }

    /// Bytes of all frames encoded so far.
    pub fn bytes_encoded(&self) -> u64 {
        self.bytes_encoded
    }

    fn encode(&mut self, capture: Time) -> EncodedFrame {
        let fps = f64::from(self.config.fps);
        let nominal = self.effective_bps / fps;
        let factor = self.size_factor();
        let key_frame = std::mem::take(&mut self.key_pending);
        let id = self.next_id;
        let temporal = self.place(id, key_frame);
        // The longer reference distance costs bits; the rate control pays them back as it pays
        // back a key frame.
        let cost = temporal.map_or(1.0, |t| {
            reference_distance_cost(id.wrapping_sub(t.reference))
        });
        let floor = (HEADER_LEN * 8) as f64;
        let bits = if key_frame {
            nominal * self.config.key_frame_ratio * factor
        } else {
            let payback_frames = (self.config.payback.as_secs_f64() * fps).max(1.0);
            let wanted = nominal * factor * cost - self.balance_bits / payback_frames;
            wanted.max(nominal * self.config.min_frame_fraction)
        };
        // Whole bytes; the cast saturates, so a huge value cannot wrap.
        let size_bytes = ((bits.max(floor) / 8.0).round() as u32).max(HEADER_LEN as u32);
        let cap = self.effective_bps; // one second of the effective target (rc_buf_sz)
        self.balance_bits =
            (self.balance_bits + f64::from(size_bytes) * 8.0 - nominal).clamp(-cap, cap);
        self.next_id = self.next_id.wrapping_add(1);
        self.frames_encoded += 1;
        self.key_frames += u64::from(key_frame);
        self.bytes_encoded += u64::from(size_bytes);
        EncodedFrame {
            id,
            capture,
            size_bytes,
            key_frame,
            rtp_timestamp: rtp_timestamp(capture, self.config.rtp_timestamp_offset),
            temporal,
        }
    }

    /// Frame `id`'s place in the temporal layers: discardable while asked (once a base frame
    /// exists), then the first base frame after discardable ones references the last base
    /// frame; every other frame is the linear chain's.
    fn place(&mut self, id: u32, key_frame: bool) -> Option<Temporal> {
        let base = match self.last_base {
            Some(base) if !key_frame => base,
            _ => {
                self.last_base = Some(id);
                self.since_base = 0;
                return None;
            }
        };
        if self.discardable {
            self.since_base = self.since_base.saturating_add(1);
            self.frames_discardable += 1;
            return Some(Temporal {
                discardable: true,
                reference: base,
            });
        }
        self.last_base = Some(id);
        if std::mem::take(&mut self.since_base) > 0 {
            Some(Temporal {
                discardable: false,
                reference: base,
            })
        } else {
            None
        }
    }

    /// A log-normal factor with mean 1: exp(σ·z − σ²/2), z standard normal (Box-Muller).
    fn size_factor(&mut self) -> f64 {
        let sigma = self.config.size_sigma;
        if sigma == 0.0 {
            return 1.0;
        }
        let u1 = open01(&mut self.rng);
        let u2: f64 = self.rng.random::<f64>();
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        (sigma * z - sigma * sigma / 2.0).exp()
    }

    /// Moves the effective target towards the target up to `now` (first-order lag).
    fn advance(&mut self, now: Time) {
        let Some(dt) = now.checked_duration_since(self.effective_at) else {
            return;
        };
        self.effective_at = now;
        let tau = self.config.rate_time_constant.as_secs_f64();
        if tau <= 0.0 {
            self.effective_bps = self.target_bps;
            return;
        }
        let keep = (-dt.as_secs_f64() / tau).exp();
        self.effective_bps = self.target_bps + (self.effective_bps - self.target_bps) * keep;
    }

    /// The capture instant of slot `n`: `start + n / fps`, in whole nanoseconds (truncated), so
    /// 30 frames take exactly one second.
    fn slot_time(&self, n: u64) -> Time {
        let ns = u128::from(n) * NANOS_PER_SEC / u128::from(self.config.fps);
        self.start + Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// The last slot whose capture instant is at or before `now` (`now` at or after the next
    /// slot).
    fn latest_slot(&self, now: Time) -> u64 {
        let elapsed = u128::from((now - self.start).as_nanos() as u64);
        let guess = elapsed * u128::from(self.config.fps) / NANOS_PER_SEC;
        let mut n = u64::try_from(guess).unwrap_or(u64::MAX).max(self.slot);
        while n < u64::MAX && self.slot_time(n + 1) <= now {
            n += 1;
        }
        n
    }
}

/// The 90 kHz RTP timestamp of `capture`, rounded to the nearest tick, plus `offset` (wrapping).
pub fn rtp_timestamp(capture: Time, offset: u32) -> u32 {
    let ticks = (u128::from(capture.as_nanos()) * u128::from(RTP_VIDEO_CLOCK_HZ)
        + NANOS_PER_SEC / 2)
        / NANOS_PER_SEC;
    // RTP timestamps are modulo 2^32 (RFC 3550 §5.1): keep the low 32 bits.
    (ticks as u32).wrapping_add(offset)
}

fn sanitize(mut c: EncoderConfig) -> EncoderConfig {
    let d = EncoderConfig::default();
    c.fps = c.fps.max(1);
    c.max_bps = c.max_bps.max(c.min_bps);
    c.start_bps = c.start_bps.clamp(c.min_bps, c.max_bps);
    if !(c.key_frame_ratio.is_finite() && c.key_frame_ratio > 0.0) {
        c.key_frame_ratio = d.key_frame_ratio;
    }
    if !(c.size_sigma.is_finite() && c.size_sigma >= 0.0) {
        c.size_sigma = d.size_sigma;
    }
    if !(c.min_frame_fraction.is_finite() && c.min_frame_fraction >= 0.0) {
        c.min_frame_fraction = d.min_frame_fraction;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(start_bps: u64) -> EncoderConfig {
        EncoderConfig {
            start_bps,
            size_sigma: 0.0,
            ..EncoderConfig::default()
        }
    }

    /// Runs the encoder from `from` to `to` (exclusive), returning the frames.
    fn run(enc: &mut Encoder, to: Time) -> Vec<EncodedFrame> {
        let mut out = Vec::new();
        while enc.next_frame_time() < to {
            let t = enc.next_frame_time();
            out.extend(enc.poll_frame(t, false));
        }
        out
    }

    fn mean_bps(frames: &[EncodedFrame], from: Time, to: Time) -> f64 {
        let bytes: u64 = frames
            .iter()
            .filter(|f| f.capture >= from && f.capture < to)
            .map(|f| u64::from(f.size_bytes))
            .sum();
        bytes as f64 * 8.0 / (to - from).as_secs_f64()
    }

    #[test]
    fn frames_are_due_every_thirtieth_of_a_second_exactly() {
        let mut enc = Encoder::new(EncoderConfig::default(), Time::from_secs(2));
        assert_eq!(enc.poll_frame(Time::from_millis(1999), false), None);
        let frames = run(&mut enc, Time::from_secs(3) + Duration::from_nanos(1));
        assert_eq!(frames.len(), 31);
        assert_eq!(frames[0].capture, Time::from_secs(2));
        assert_eq!(frames[1].capture, Time::from_nanos(2_033_333_333));
        assert_eq!(frames[2].capture, Time::from_nanos(2_066_666_666));
        assert_eq!(frames[30].capture, Time::from_secs(3));
        assert_eq!(frames[30].rtp_timestamp, 270_000);
        assert_eq!(frames[1].rtp_timestamp, 183_000);
        assert!(frames.iter().enumerate().all(|(i, f)| f.id == i as u32));
        assert_eq!(enc.frames_dropped(), 0);
    }

    #[test]
    fn the_first_frame_is_a_key_frame_five_times_the_nominal_delta_frame() {
        // 300 kbit/s at 30 fps: 10 000 bits = 1250 bytes per frame.
        let mut enc = Encoder::new(exact(300_000), Time::ZERO);
        let frames = run(&mut enc, Time::from_millis(50));
        assert!(frames[0].key_frame);
        assert_eq!(frames[0].size_bytes, 6_250);
        // The 4 extra frames' worth is paid back over 15 frames: 1250 - 5000/15 bytes.
        assert!(!frames[1].key_frame);
        assert_eq!(frames[1].size_bytes, 917);
        assert_eq!(enc.key_frames(), 1);
    }

    #[test]
    fn pushback_drops_one_frame_in_the_interval_and_stops_when_cleared() {
        let mut enc = Encoder::new(EncoderConfig::default(), Time::ZERO);
        enc.set_frame_drop_interval(Some(3));
        // 30 slots: the 1st, 4th, 7th ... are dropped (counter % 3 == 0).
        let frames = run(&mut enc, Time::from_secs(1));
        assert_eq!(frames.len(), 20);
        assert_eq!(
            (enc.frames_dropped(), enc.frames_dropped_by_pushback()),
            (10, 10)
        );
        assert_eq!(frames[0].capture, Time::from_nanos(33_333_333));
        assert!(
            frames[0].key_frame,
            "the pending key frame waits for an encoded frame"
        );
        enc.set_frame_drop_interval(None);
        assert_eq!(run(&mut enc, Time::from_secs(2)).len(), 30);
        assert_eq!(enc.frames_dropped_by_pushback(), 10);
    }

    #[test]
    fn discardable_frames_reference_the_last_base_frame_and_cost_their_measured_distance() {
        let mut enc = Encoder::new(exact(300_000), Time::ZERO);
        let mut frames = run(&mut enc, Time::from_secs(1)); // frames 0..30
        let mut plain = enc.clone();
        let normal: Vec<u32> = (0..5)
            .map(|_| {
                let t = plain.next_frame_time();
                plain.poll_frame(t, false).unwrap().size_bytes
            })
            .collect();
        enc.set_discardable(true);
        for _ in 0..3 {
            let t = enc.next_frame_time();
            frames.push(enc.poll_frame(t, false).unwrap());
        }
        enc.set_discardable(false);
        for _ in 0..2 {
            let t = enc.next_frame_time();
            frames.push(enc.poll_frame(t, false).unwrap());
        }
        let temporal: Vec<_> = frames[29..].iter().map(|f| f.temporal).collect();
        let sync = |discardable| {
            Some(Temporal {
                discardable,
                reference: 29,
            })
        };
        assert_eq!(
            temporal,
            vec![None, sync(true), sync(true), sync(true), sync(false), None]
        );
        assert_eq!(enc.frames_discardable(), 3);
        // Each frame against the same frame of the normal chain: the cost of its distance
        // (1, 2, 3 and 4), less the payback of what the earlier ones overspent.
        let ratio = |i: usize| f64::from(frames[30 + i].size_bytes) / f64::from(normal[i]);
        assert!((ratio(0) - 1.002).abs() < 0.01, "{}", ratio(0));
        assert!((ratio(2) - 1.295).abs() < 0.05, "{}", ratio(2));
        assert!((ratio(3) - 1.589).abs() < 0.1, "{}", ratio(3));
        assert_eq!(reference_distance_cost(0), reference_distance_cost(1));
        assert_eq!(reference_distance_cost(50), reference_distance_cost(10));
    }

    #[test]
    fn a_key_frame_inside_a_window_is_the_base_frame_the_rest_of_the_window_references() {
        let mut enc = Encoder::new(EncoderConfig::default(), Time::ZERO);
        let first = enc.poll_frame(Time::ZERO, false).unwrap();
        assert_eq!(first.temporal, None, "a key frame is a base frame");
        enc.set_discardable(true);
        enc.request_key_frame();
        let t = enc.next_frame_time();
        let key = enc.poll_frame(t, false).unwrap();
        assert!(key.key_frame && key.temporal.is_none());
        let t = enc.next_frame_time();
        let next = enc.poll_frame(t, false).unwrap();
        assert_eq!(
            next.temporal,
            Some(Temporal {
                discardable: true,
                reference: key.id
            })
        );
    }

    #[test]
    fn a_pli_makes_the_next_frame_a_key_frame_and_only_that_one() {
        let mut enc = Encoder::new(EncoderConfig::default(), Time::ZERO);
        let _ = run(&mut enc, Time::from_secs(1));
        enc.request_key_frame();
        let frames = run(&mut enc, Time::from_secs(2));
        assert!(frames[0].key_frame);
        assert!(frames[1..].iter().all(|f| !f.key_frame));
        assert_eq!(enc.key_frames(), 2);
    }

    #[test]
    fn frames_due_while_paused_are_dropped_counted_and_take_no_id() {
        let mut enc = Encoder::new(EncoderConfig::default(), Time::ZERO);
        assert!(enc.poll_frame(Time::ZERO, false).is_some());
        for _ in 0..10 {
            let t = enc.next_frame_time();
            assert_eq!(enc.poll_frame(t, true), None);
        }
        assert_eq!(enc.frames_dropped(), 10);
        let t = enc.next_frame_time();
        assert_eq!(t, Time::from_nanos(366_666_666));
        let f = enc.poll_frame(t, false).unwrap();
        assert_eq!(f.id, 1);
        // A late caller gets the latest due frame; the 2 skipped slots count as dropped.
        let f = enc.poll_frame(Time::from_millis(500), false).unwrap();
        assert_eq!(f.capture, Time::from_nanos(500_000_000));
        assert_eq!(f.id, 2);
        assert_eq!(enc.frames_dropped(), 13);
    }

    #[test]
    fn a_key_frame_requested_while_paused_waits_for_the_next_encoded_frame() {
        let mut enc = Encoder::new(EncoderConfig::default(), Time::ZERO);
        let _ = enc.poll_frame(Time::ZERO, false);
        enc.request_key_frame();
        let t = enc.next_frame_time();
        assert_eq!(enc.poll_frame(t, true), None);
        let t = enc.next_frame_time();
        assert!(enc.poll_frame(t, false).unwrap().key_frame);
    }

    #[test]
    fn the_mean_bitrate_over_20_s_is_within_5_percent_of_a_constant_1_mbit_s_target() {
        for seed in 0..5 {
            let cfg = EncoderConfig {
                start_bps: 1_000_000,
                seed,
                ..EncoderConfig::default()
            };
            let mut enc = Encoder::new(cfg, Time::ZERO);
            enc.request_key_frame();
            let mut frames = run(&mut enc, Time::from_secs(10));
            enc.request_key_frame();
            frames.extend(run(&mut enc, Time::from_secs(20)));
            let bps = mean_bps(&frames, Time::ZERO, Time::from_secs(20));
            assert!((bps / 1e6 - 1.0).abs() < 0.05, "seed {seed}: {bps}");
            // The sizes do vary.
            let min = frames.iter().map(|f| f.size_bytes).min().unwrap();
            let max = frames
                .iter()
                .filter(|f| !f.key_frame)
                .map(|f| f.size_bytes)
                .max();
            assert!(max.unwrap() > min + 1_000, "seed {seed}");
        }
    }

    #[test]
    fn a_step_from_500k_to_2m_reaches_90_percent_within_2_s_but_not_within_200_ms() {
        let cfg = EncoderConfig {
            start_bps: 500_000,
            seed: 7,
            ..EncoderConfig::default()
        };
        let mut enc = Encoder::new(cfg, Time::ZERO);
        let mut frames = run(&mut enc, Time::from_secs(10));
        enc.set_target(Time::from_secs(10), 2_000_000);
        assert_eq!(enc.effective_bps(), 500_000);
        frames.extend(run(&mut enc, Time::from_millis(10_200)));
        // 500k + 1.5M × (1 − e^(−0.1667/0.8)): the last frame before 200 ms.
        assert!(enc.effective_bps() < 900_000, "{}", enc.effective_bps());
        frames.extend(run(&mut enc, Time::from_secs(13)));
        assert!(enc.effective_bps() >= 1_950_000, "{}", enc.effective_bps());
        let early = mean_bps(&frames, Time::from_secs(10), Time::from_millis(10_200));
        let late = mean_bps(&frames, Time::from_secs(12), Time::from_secs(13));
        assert!(early < 1_200_000.0, "{early}");
        assert!(late > 1_800_000.0 && late < 2_200_000.0, "{late}");
        let mut probe = enc.clone();
        probe.set_target(Time::from_secs(12), 2_000_000); // in the past: no effect
        assert_eq!(probe.effective_bps(), enc.effective_bps());
    }

    #[test]
    fn effective_target_after_a_step_follows_the_documented_time_constant() {
        let mut enc = Encoder::new(exact(500_000), Time::ZERO);
        enc.set_target(Time::ZERO, 2_000_000);
        enc.set_target(Time::from_secs(2), 2_000_000);
        // 2M − 1.5M × e^(−2.5) = 1 876 872.9, truncated.
        assert_eq!(enc.effective_bps(), 1_876_872);
    }

    #[test]
    fn targets_are_clamped_to_50_kbit_s_and_2_5_mbit_s() {
        let mut enc = Encoder::new(exact(10_000_000), Time::ZERO);
        assert_eq!(enc.effective_bps(), 2_500_000);
        enc.set_target(Time::ZERO, 1);
        assert_eq!(enc.target_bps(), 50_000);
        enc.set_target(Time::from_secs(60), 1);
        assert_eq!(enc.effective_bps(), 50_000);
        let frames = run(&mut enc, Time::from_secs(61));
        // 50 kbit/s at 30 fps: 1666.7 bits, 208.3 bytes per frame once the key frame is paid.
        let last: Vec<_> = frames
            .iter()
            .filter(|f| f.capture >= Time::from_secs(60))
            .collect();
        assert_eq!(last.len(), 30);
        assert!(
            last.iter().all(|f| (208..=209).contains(&f.size_bytes)),
            "{last:?}"
        );
        enc.set_target(Time::from_secs(61), u64::MAX);
        assert_eq!(enc.target_bps(), 2_500_000);
    }

    #[test]
    fn tiny_targets_never_give_frames_smaller_than_a_payload_header() {
        let cfg = EncoderConfig {
            min_bps: 0,
            start_bps: 0,
            fps: 0,
            key_frame_ratio: f64::NAN,
            size_sigma: -1.0,
            ..EncoderConfig::default()
        };
        let mut enc = Encoder::new(cfg, Time::ZERO);
        assert_eq!(enc.config().fps, 1);
        let frames = run(&mut enc, Time::from_secs(5));
        assert_eq!(frames.len(), 5);
        assert!(frames.iter().all(|f| f.size_bytes == HEADER_LEN as u32));
    }

    #[test]
    fn the_same_seed_gives_the_same_sizes_and_another_seed_does_not() {
        let sizes = |seed| {
            let cfg = EncoderConfig {
                seed,
                ..EncoderConfig::default()
            };
            let mut enc = Encoder::new(cfg, Time::ZERO);
            run(&mut enc, Time::from_secs(3))
                .iter()
                .map(|f| f.size_bytes)
                .collect::<Vec<_>>()
        };
        assert_eq!(sizes(1), sizes(1));
        assert_ne!(sizes(1), sizes(2));
    }

    #[test]
    fn rtp_timestamps_round_to_the_nearest_90_khz_tick_and_wrap() {
        assert_eq!(rtp_timestamp(Time::from_nanos(33_333_333), 0), 3_000);
        assert_eq!(rtp_timestamp(Time::from_secs(1), 10), 90_010);
        assert_eq!(rtp_timestamp(Time::ZERO, u32::MAX), u32::MAX);
        assert_eq!(rtp_timestamp(Time::from_nanos(11_111), u32::MAX), 0);
        // 2^32 ticks of 90 kHz is 47 722.1 s.
        let wrap = Time::from_nanos((1u64 << 32) * 1_000_000_000 / 90_000 + 6);
        assert_eq!(rtp_timestamp(wrap, 0), 0);
    }
}

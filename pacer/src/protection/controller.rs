//! How much FEC to send: libwebrtc's `FecControllerDefault` with the hybrid NACK/FEC method.
//!
//! On a path whose RTT is long, a packet NACK recovers arrives an RTT after its frame was due,
//! close to WebRTC's freeze threshold, so libwebrtc protects delta frames with FEC as well once
//! the RTT reaches 20 ms (key frames at any RTT) and lets NACK repair what FEC missed (reference
//! sheet part 6). The decision is libwebrtc's, from
//! `modules/video_coding/media_opt_util.{h,cc}` (`VCMFecMethod`, `VCMNackFecMethod`,
//! `VCMLossProtectionLogic`) and `modules/video_coding/fec_controller_default.cc`
//! (`FecControllerDefault::UpdateFecRates`):
//!
//! 1. The loss is the max-window filter of the receiver reports ([`LossFilter`]); zero means no
//!    FEC.
//! 2. Kbit per frame = target / frame rate; an effective rate scales it by the resolution,
//!    `(width x height / (704 x 576))^-0.3`; the rate index `(effective - 5) / 5` and the loss
//!    index `min(loss, 128)` read the delta-frame factor from the [rate table](super::rate_table).
//! 3. With loss and more than one packet per frame on average, the delta factor is at least 51
//!    (20 %, "first partition"); it is capped at 128 (50 %).
//! 4. Key frames: the boost `max(2, packets per key frame / packets per delta frame)` moves the
//!    rate index up; the key factor is the largest of the loss, twice the delta factor and that
//!    table entry, capped at 128.
//! 5. Hybrid NACK/FEC only: below an RTT of 20 ms the delta factor is 0 (NACK alone); with too
//!    few bytes per frame for FEC to pay (700, or 400 at or below 352x288, or 1000 above 640x480)
//!    and an RTT under 200 ms both factors are 0; FEC may span up to
//!    `round(2 x frame rate x RTT)` frames, at most 6. Without NACK (pure FEC) none of this
//!    applies and FEC spans one frame.
//! 6. Both factors are converted from "of all packets" to "of media packets", which is what the
//!    RTP module's generator expects: `min(255, 0.5 + 255 f / (255 - f))`.
//!
//! Floating-point steps use `f32` where libwebrtc uses `float` and truncate where it casts, so a
//! rate or loss index here is libwebrtc's index for the same inputs. libwebrtc passes an integer
//! frame rate; this takes a fractional one.

use super::loss_filter::LossFilter;
use super::rate_table::{LOSS_INDICES, RATE_INDICES, fec_rate_table};
use std::time::{Duration, Instant};

/// `kLowRttNackMs` (`media_opt_util.h`): below this RTT, hybrid NACK/FEC protects delta frames
/// with NACK alone.
pub(crate) const LOW_RTT_NACK_MS: i64 = 20;

/// `kMaxRttTurnOffFec` (`VCMNackFecMethod::BitRateTooLowForFec`, `media_opt_util.cc`): the
/// too-low-bitrate cut-off applies only below this RTT.
pub(crate) const MAX_RTT_TURN_OFF_FEC_MS: i64 = 200;

/// `kMaxBytesPerFrameForFec` (`media_opt_util.h`): the cut-off between 352x288 and 640x480.
pub(crate) const MAX_BYTES_PER_FRAME_FOR_FEC: i64 = 700;

/// `kMaxBytesPerFrameForFecLow` (`media_opt_util.h`): the cut-off at or below 352x288.
pub(crate) const MAX_BYTES_PER_FRAME_FOR_FEC_LOW: i64 = 400;

/// `kMaxBytesPerFrameForFecHigh` (`media_opt_util.h`): the cut-off above 640x480.
pub(crate) const MAX_BYTES_PER_FRAME_FOR_FEC_HIGH: i64 = 1000;

/// `kUpperLimitFramesFec` (`media_opt_util.h`): the most frames one FEC block may span.
pub(crate) const UPPER_LIMIT_FRAMES_FEC: i32 = 6;

/// `_maxPayloadSize` of `VCMFecMethod` (`media_opt_util.cc`): the packet size libwebrtc assumes
/// when it estimates packets per frame.
const MAX_PAYLOAD_SIZE_BYTES: f32 = 1460.0;

/// `firstPartitionProt` = 255 x 0.20 (`VCMFecMethod::ProtectionFactor`).
const FIRST_PARTITION_PROTECTION: u8 = 51;

/// `ratePar1` (`VCMFecMethod::ProtectionFactor`): kbit per rate-index step, and its offset.
const RATE_PAR_1: i32 = 5;

/// `_scaleProtKey` (`VCMFecMethod`, `media_opt_util.cc`): key protection is at least this times
/// the delta protection.
const SCALE_PROTECTION_KEY: i32 = 2;

/// `boostRateKey` (`VCMFecMethod::BoostCodeRateKey`): the smallest key-frame rate boost.
const MIN_KEY_BOOST: u8 = 2;

/// The reference size of the resolution factor, 704x576 (4CIF), which is also
/// `VCMLossProtectionLogic`'s default codec size (`media_opt_util.cc`).
pub(crate) const REFERENCE_WIDTH: u32 = 704;
/// See [`REFERENCE_WIDTH`].
pub(crate) const REFERENCE_HEIGHT: u32 = 576;

/// `kProtectionOverheadRateThreshold` (`fec_controller_default.cc`): the most of the estimate
/// protection may take from the media.
const PROTECTION_OVERHEAD_RATE_THRESHOLD: f32 = 0.5;

/// What the controller decides from, besides the loss reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProtectionInputs {
    /// The media target, bits per second (libwebrtc's `estimated_bitrate_bps`).
    pub target_bps: u64,
    /// The round-trip time.
    pub rtt: Duration,
    /// Frames per second actually sent; below 1 it counts as 1 (`UpdateFecRates`).
    pub frame_rate: f64,
    /// Encoded width, pixels.
    pub width: u32,
    /// Encoded height, pixels.
    pub height: u32,
    /// Whether NACK is negotiated too: hybrid NACK/FEC when it is, pure FEC when not.
    pub nack_enabled: bool,
    /// Filtered packets per key frame; 0 when unknown.
    pub packets_per_key_frame: f64,
    /// Filtered packets per delta frame; 0 when unknown.
    pub packets_per_delta_frame: f64,
}

/// FEC parameters for the generator, libwebrtc's pair of `FecProtectionParams`.
///
/// The factors are relative to the *media* packets, out of 256 as the RTP module reads them: a
/// block of `n` media packets gets `(n x factor + 128) / 256` repair packets, at least one when
/// the factor is not 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Protection {
    /// The factor for blocks of delta frames.
    pub delta_factor: u8,
    /// The factor for blocks holding a key frame.
    pub key_factor: u8,
    /// The most frames one block may span.
    pub max_fec_frames: u8,
    /// The filtered loss (x255) these were decided from.
    pub filtered_loss_255: u8,
}

/// libwebrtc's FEC controller for one protected stream: the loss filter and the protection
/// method, fed with `now` and never reading a clock.
///
/// ```
/// use pacer::protection::{ProtectionController, ProtectionInputs};
/// use std::time::{Duration, Instant};
///
/// let now = Instant::now();
/// let mut controller = ProtectionController::new();
/// controller.on_loss_report(now, 13); // 5 % lost, from a receiver report
/// let protection = controller.update(now, ProtectionInputs {
///     target_bps: 2_500_000,
///     rtt: Duration::from_millis(150),
///     frame_rate: 30.0,
///     width: 1280,
///     height: 720,
///     nack_enabled: true,
///     packets_per_key_frame: 0.0,
///     packets_per_delta_frame: 0.0,
/// });
/// assert_eq!((protection.delta_factor, protection.key_factor), (64, 170));
/// assert_eq!(protection.max_fec_frames, 6);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ProtectionController {
    filter: LossFilter,
    /// The latest fraction lost reported, which every update feeds the filter again.
    last_loss_255: u8,
}

impl ProtectionController {
    /// A controller that has seen no report: no FEC until loss is reported.
    pub fn new() -> Self {
        Self::default()
    }

    /// A receiver report's fraction lost (out of 256 on the wire, read as out of 255 as libwebrtc
    /// does) for the protected stream, received at `now`.
    pub fn on_loss_report(&mut self, now: Instant, fraction_lost_255: u8) {
        self.last_loss_255 = fraction_lost_255;
        self.filter.record(now, fraction_lost_255);
    }

    /// The protection to use from `now` on (`FecControllerDefault::UpdateFecRates`). Like
    /// libwebrtc, every update records the latest reported loss in the filter again.
    pub fn update(&mut self, now: Instant, inputs: ProtectionInputs) -> Protection {
        self.filter.record(now, self.last_loss_255);
        Self::protection_for(self.filter.filtered(now), &inputs)
    }

    /// The filtered loss as of `now`, without recording anything.
    pub fn filtered_loss(&self, now: Instant) -> u8 {
        self.filter.filtered(now)
    }

    /// The protection libwebrtc chooses for a filtered loss (x255) and `inputs`: the protection
    /// method (`VCMNackFecMethod::UpdateParameters` with NACK, `VCMFecMethod::UpdateParameters`
    /// without) as a pure function.
    pub fn protection_for(filtered_loss_255: u8, inputs: &ProtectionInputs) -> Protection {
        let frame_rate = frame_rate(inputs);
        let bits_per_frame = bits_per_frame_kbit(inputs.target_bps, frame_rate);
        let (mut delta, mut key) = fec_factors(filtered_loss_255, bits_per_frame, inputs);
        let mut max_fec_frames = 1;
        if inputs.nack_enabled {
            let rtt_ms = i64::try_from(inputs.rtt.as_millis()).unwrap_or(i64::MAX);
            if rtt_ms < LOW_RTT_NACK_MS {
                delta = 0;
            }
            max_fec_frames = max_frames_fec(frame_rate, rtt_ms);
            if bitrate_too_low_for_fec(bits_per_frame, inputs.width, inputs.height, rtt_ms) {
                delta = 0;
                key = 0;
            }
        }
        Protection {
            delta_factor: convert_fec_rate(delta),
            key_factor: convert_fec_rate(key),
            max_fec_frames,
            filtered_loss_255,
        }
    }
}

/// The source rate left for media once protection has taken its share of the estimate
/// (`FecControllerDefault::UpdateFecRates`): `estimate x (1 - min(overhead, 0.5))`, where the
/// overhead is `(nack + fec) / (video + nack + fec)` over the rates sent in the last second, and 0
/// when nothing was sent.
pub fn media_target_bps(
    estimate_bps: u64,
    sent_video_bps: u64,
    sent_nack_bps: u64,
    sent_fec_bps: u64,
) -> u64 {
    let protection = sent_nack_bps.saturating_add(sent_fec_bps);
    let total = sent_video_bps.saturating_add(protection);
    let overhead = if total > 0 {
        protection as f32 / total as f32
    } else {
        0.0
    };
    let overhead = overhead.min(PROTECTION_OVERHEAD_RATE_THRESHOLD);
    (estimate_bps as f64 * (1.0 - f64::from(overhead))) as u64
}

/// The frame rate the controller uses: at least 1 (`UpdateFecRates` and `BitsPerFrame`).
fn frame_rate(inputs: &ProtectionInputs) -> f32 {
    (inputs.frame_rate as f32).max(1.0)
}

/// Kbit per frame, truncated (`VCMFecMethod::BitsPerFrame` with one temporal layer; the target
/// enters as float kbit/s as in `UpdateFecRates`).
fn bits_per_frame_kbit(target_bps: u64, frame_rate: f32) -> i32 {
    let bit_rate_kbps = target_bps as f32 / 1000.0;
    (bit_rate_kbps / frame_rate) as i32
}

/// `VCMFecMethod::ProtectionFactor`: the (delta, key) factors relative to all packets, before
/// the hybrid method's adjustments and before conversion.
fn fec_factors(loss_255: u8, bits_per_frame: i32, inputs: &ProtectionInputs) -> (u8, u8) {
    if loss_255 == 0 {
        return (0, 0);
    }
    let pixels = u64::from(inputs.width) * u64::from(inputs.height);
    let size_to_reference =
        pixels as f32 / (u64::from(REFERENCE_WIDTH) * u64::from(REFERENCE_HEIGHT)) as f32;
    // `const float resolnFac = 1.0 / powf(spatialSizeToRef, 0.3f)`.
    let resolution_factor = (1.0 / f64::from(size_to_reference.powf(0.3))) as f32;
    let average_packets =
        (1.5 + bits_per_frame as f32 * 1000.0 / (8.0 * MAX_PAYLOAD_SIZE_BYTES)) as u8;
    let effective_rate = i32::from((resolution_factor * bits_per_frame as f32) as u16);
    let rate_index = clamp_rate_index((effective_rate - RATE_PAR_1) / RATE_PAR_1);
    let loss_index = usize::from(loss_255).min(LOSS_INDICES - 1);
    let loss = loss_index as u8;

    let mut delta = fec_rate_table(rate_index, loss_index);
    if loss > 0 && average_packets > 1 {
        delta = delta.max(FIRST_PARTITION_PROTECTION);
    }
    delta = cap(i32::from(delta));

    let packets_delta = (0.5 + inputs.packets_per_delta_frame) as u8;
    let packets_key = (0.5 + inputs.packets_per_key_frame) as u8;
    let boost = boost_code_rate_key(packets_delta, packets_key);
    let key_rate_index =
        clamp_rate_index(1 + (i32::from(boost) * effective_rate - RATE_PAR_1) / RATE_PAR_1);
    let from_table = fec_rate_table(key_rate_index, loss_index);
    let boosted = cap(SCALE_PROTECTION_KEY * i32::from(delta));
    let key = cap(i32::from(loss.max(boosted).max(from_table)));
    (delta, key)
}

/// A rate index clamped into the table (`VCM_MAX(VCM_MIN(.., ratePar2), 0)`).
fn clamp_rate_index(index: i32) -> usize {
    index.clamp(0, RATE_INDICES as i32 - 1) as usize
}

/// The 50 % cap: a factor of `kPacketLossMax` (129) or more becomes 128.
fn cap(factor: i32) -> u8 {
    factor.clamp(0, LOSS_INDICES as i32 - 1) as u8
}

/// `VCMFecMethod::BoostCodeRateKey`: the key frame's rate boost, the integer ratio of rounded
/// packets per key frame to rounded packets per delta frame, at least 2.
fn boost_code_rate_key(packets_delta: u8, packets_key: u8) -> u8 {
    let ratio = packets_key.checked_div(packets_delta).unwrap_or(1);
    ratio.max(MIN_KEY_BOOST)
}

/// `VCMNackFecMethod::ComputeMaxFramesFec` with one temporal layer: enough frames that complete
/// frames arrive within about one RTT, `max(1, round(2 x frame rate x RTT))`, at most 6.
fn max_frames_fec(frame_rate: f32, rtt_ms: i64) -> u8 {
    let frames = (2.0 * frame_rate * rtt_ms as f32 / 1000.0 + 0.5) as i32;
    frames.clamp(1, UPPER_LIMIT_FRAMES_FEC) as u8
}

/// `VCMNackFecMethod::BitRateTooLowForFec` with one temporal layer: FEC costs more than it
/// saves when frames are this small and NACK can still repair within 200 ms.
fn bitrate_too_low_for_fec(bits_per_frame: i32, width: u32, height: u32, rtt_ms: i64) -> bool {
    let bytes_per_frame = 1000 * i64::from(bits_per_frame) / 8;
    let pixels = u64::from(width) * u64::from(height);
    let max_bytes_per_frame = if pixels <= 352 * 288 {
        MAX_BYTES_PER_FRAME_FOR_FEC_LOW
    } else if pixels > 640 * 480 {
        MAX_BYTES_PER_FRAME_FOR_FEC_HIGH
    } else {
        MAX_BYTES_PER_FRAME_FOR_FEC
    };
    bytes_per_frame < max_bytes_per_frame && rtt_ms < MAX_RTT_TURN_OFF_FEC_MS
}

/// `VCMFecMethod::ConvertFECRate`: a factor relative to all packets made relative to the media
/// packets, `min(255, 0.5 + 255 f / (255 - f))`, truncated.
fn convert_fec_rate(factor: u8) -> u8 {
    let f = f64::from(factor);
    let converted = 0.5 + 255.0 * f / f64::from(255 - factor);
    converted.min(255.0) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// 2.5 Mbit/s at 30 fps, 1280x720, 150 ms, NACK on, packets per frame unknown.
    fn hd() -> ProtectionInputs {
        ProtectionInputs {
            target_bps: 2_500_000,
            rtt: ms(150),
            frame_rate: 30.0,
            width: 1280,
            height: 720,
            nack_enabled: true,
            packets_per_key_frame: 0.0,
            packets_per_delta_frame: 0.0,
        }
    }

    fn factors(loss: u8, inputs: ProtectionInputs) -> (u8, u8, u8) {
        let p = ProtectionController::protection_for(loss, &inputs);
        (p.delta_factor, p.key_factor, p.max_fec_frames)
    }

    #[test]
    fn convert_fec_rate_makes_factors_relative_to_media_packets() {
        // 0.5 + 255 f / (255 - f), truncated, at most 255.
        assert_eq!(convert_fec_rate(0), 0); // 0.5
        assert_eq!(convert_fec_rate(11), 11); // 0.5 + 2805/244 = 11.996
        assert_eq!(convert_fec_rate(13), 14); // 0.5 + 3315/242 = 14.198
        assert_eq!(convert_fec_rate(51), 64); // 0.5 + 13005/204 = 64.25
        assert_eq!(convert_fec_rate(93), 146); // 0.5 + 23715/162 = 146.89
        assert_eq!(convert_fec_rate(102), 170); // 0.5 + 26010/153 = 170.5
        assert_eq!(convert_fec_rate(122), 234); // 0.5 + 31110/133 = 234.41
        assert_eq!(convert_fec_rate(127), 253); // 0.5 + 32385/128 = 253.51
        assert_eq!(convert_fec_rate(128), 255); // 0.5 + 32640/127 = 257.5 -> 255
        assert_eq!(convert_fec_rate(255), 255); // division by zero: infinity -> 255
    }

    #[test]
    fn five_percent_loss_at_hd_gets_the_first_partition_minimum_and_twice_it_for_key_frames() {
        // 2500 kbit/s / 30 = 83.3 -> 83 kbit per frame; resolnFac = (921600 / 405504)^-0.3
        // = 2.2727^-0.3 = 0.78169; effective rate 0.78169 x 83 = 64.88 -> 64; rate index
        // (64 - 5) / 5 = 11. table[11][13] = 48; 1.5 + 83000 / 11680 = 8.6 -> 8 packets per
        // frame > 1, so the first-partition minimum 51 applies. Key: boost 2, key rate index
        // 1 + (2 x 64 - 5) / 5 = 25, table[25][13] = 97 < 2 x 51 = 102 -> 102.
        // Converted: 51 -> 64, 102 -> 170. Frames: 2 x 30 x 0.150 + 0.5 = 9.5 -> 9, capped at 6.
        assert_eq!(factors(13, hd()), (64, 170, 6));
    }

    #[test]
    fn higher_loss_reads_the_table_and_caps_the_key_factor_at_half() {
        // Same rate index 11; table[11][20] = 93 (above 51). Key: table[25][20] = 108 and
        // 2 x 93 = 186 -> capped at 128, max(20, 128, 108) = 128.
        // Converted: 93 -> 146, 128 -> 255.
        assert_eq!(factors(20, hd()), (146, 255, 6));
        // Loss 100: table[11][100] = 127, twice that is capped too.
        assert_eq!(factors(100, hd()), (253, 255, 6));
        // Loss 255 reads column 128 as 128 does.
        assert_eq!(factors(255, hd()), factors(128, hd()));
    }

    #[test]
    fn below_twenty_ms_rtt_the_hybrid_method_leaves_delta_frames_to_nack() {
        let near = ProtectionInputs {
            rtt: ms(10),
            ..hd()
        };
        // Delta 0; the key factor is untouched (170, as at 150 ms); 2 x 30 x 0.010 + 0.5 = 1.1
        // -> 1 frame.
        assert_eq!(factors(13, near), (0, 170, 1));
        // 20 ms is no longer "below": 2 x 30 x 0.020 + 0.5 = 1.7 -> 1 frame.
        assert_eq!(
            factors(
                13,
                ProtectionInputs {
                    rtt: ms(20),
                    ..hd()
                }
            ),
            (64, 170, 1)
        );
        // Without NACK it is the pure FEC method: no RTT cut, one frame per block.
        let pure = ProtectionInputs {
            nack_enabled: false,
            ..near
        };
        assert_eq!(factors(13, pure), (64, 170, 1));
    }

    #[test]
    fn too_few_bytes_per_frame_turns_fec_off_only_below_two_hundred_ms() {
        // 210 kbit/s / 30 = 7 kbit = 875 bytes per frame < 1000 (1280x720 is above 640x480).
        let thin = ProtectionInputs {
            target_bps: 210_000,
            ..hd()
        };
        assert_eq!(factors(13, thin), (0, 0, 6));
        // At 250 ms the cut-off does not apply. Effective 0.78169 x 7 = 5.47 -> 5, rate index 0,
        // table[0][13] = 0; 1.5 + 7000 / 11680 = 2.1 -> 2 > 1 packets, so 51. Key: rate index
        // 1 + (2 x 5 - 5) / 5 = 2, table[2][13] = 0, 2 x 51 = 102. Converted 64 and 170.
        let far = ProtectionInputs {
            rtt: ms(250),
            ..thin
        };
        assert_eq!(factors(13, far), (64, 170, 6));
        // Without NACK there is no cut-off either.
        let pure = ProtectionInputs {
            nack_enabled: false,
            ..thin
        };
        assert_eq!(factors(13, pure), (64, 170, 1));
    }

    #[test]
    fn the_bytes_per_frame_cut_off_depends_on_the_resolution() {
        let rtt = 150;
        // 352x288 (and below): 400 bytes. 90 kbit/s / 30 = 3 kbit = 375 B; 120 -> 4 kbit = 500 B.
        assert!(bitrate_too_low_for_fec(3, 352, 288, rtt));
        assert!(!bitrate_too_low_for_fec(4, 352, 288, rtt));
        // Up to 640x480: 700 bytes. 5 kbit = 625 B; 6 kbit = 750 B.
        assert!(bitrate_too_low_for_fec(5, 640, 480, rtt));
        assert!(!bitrate_too_low_for_fec(6, 640, 480, rtt));
        // Above 640x480: 1000 bytes. 7 kbit = 875 B; 8 kbit = 1000 B, not below.
        assert!(bitrate_too_low_for_fec(7, 1280, 720, rtt));
        assert!(!bitrate_too_low_for_fec(8, 1280, 720, rtt));
        // The RTT condition: 199 ms is below 200, 200 is not.
        assert!(bitrate_too_low_for_fec(7, 1280, 720, 199));
        assert!(!bitrate_too_low_for_fec(7, 1280, 720, 200));
    }

    #[test]
    fn without_the_minimum_a_small_frame_reads_the_table_directly() {
        // 704x576 (resolnFac 1) at 150 kbit/s, 30 fps: 5 kbit per frame, effective 5, rate index
        // 0; 1.5 + 5000 / 11680 = 1.93 -> 1 packet, so no first-partition minimum:
        // table[0][40] = 11 -> 11. Key: rate index 1 + (2 x 5 - 5) / 5 = 2, table[2][40] = 50,
        // 2 x 11 = 22, max(40, 22, 50) = 50 -> 0.5 + 12750 / 205 = 62.7 -> 62.
        // 625 bytes per frame is under the 1000-byte cut-off, so the RTT is 250 ms.
        let inputs = ProtectionInputs {
            target_bps: 150_000,
            width: 704,
            height: 576,
            rtt: ms(250),
            ..hd()
        };
        assert_eq!(factors(40, inputs), (11, 62, 6));
    }

    #[test]
    fn a_large_key_frame_boosts_the_key_rate_index() {
        // 704x576 at 500 kbit/s, 30 fps: 16.67 -> 16 kbit per frame, effective 16, rate index
        // (16 - 5) / 5 = 2; table[2][26] = 23 -> 51 (2.87 -> 2 packets per frame). Delta 64.
        let inputs = ProtectionInputs {
            target_bps: 500_000,
            width: 704,
            height: 576,
            ..hd()
        };
        // Unknown sizes: boost 2, key rate index 1 + (32 - 5) / 5 = 6, table[6][26] = 76 < 102.
        assert_eq!(factors(26, inputs), (64, 170, 6));
        // 20 packets per key frame, 4.4 per delta frame: round 20 / round 4 = 5, key rate index
        // 1 + (5 x 16 - 5) / 5 = 16, table[16][26] = 122 > 102 -> 0.5 + 31110 / 133 = 234.
        let boosted = ProtectionInputs {
            packets_per_key_frame: 20.0,
            packets_per_delta_frame: 4.4,
            ..inputs
        };
        assert_eq!(factors(26, boosted), (64, 234, 6));
        assert_eq!(
            boost_code_rate_key(0, 20),
            2,
            "unknown delta size: the minimum boost"
        );
        assert_eq!(boost_code_rate_key(7, 40), 5);
    }

    #[test]
    fn no_filtered_loss_means_no_fec() {
        assert_eq!(factors(0, hd()), (0, 0, 6));
        let pure = ProtectionInputs {
            nack_enabled: false,
            ..hd()
        };
        assert_eq!(factors(0, pure), (0, 0, 1));
    }

    #[test]
    fn frames_per_block_follow_the_rtt_at_thirty_fps() {
        // 2 x 30 x RTT + 0.5, truncated, in [1, 6].
        let frames = |rtt| max_frames_fec(30.0, rtt);
        assert_eq!(frames(0), 1); // 0.5
        assert_eq!(frames(25), 2); // 2.0
        assert_eq!(frames(50), 3); // 3.5
        assert_eq!(frames(90), 5); // 5.9
        assert_eq!(frames(150), 6); // 9.5 -> 9, capped
        assert_eq!(frames(400), 6); // 24.5 -> 24, capped
        // 15 fps at 150 ms: 2 x 15 x 0.15 + 0.5 = 5.
        assert_eq!(max_frames_fec(15.0, 150), 5);
    }

    #[test]
    fn the_controller_protects_against_the_filtered_loss_and_forgets_it_after_ten_seconds() {
        let t0 = Instant::now();
        let mut controller = ProtectionController::new();
        assert_eq!(controller.update(t0, hd()).delta_factor, 0, "no report yet");
        controller.on_loss_report(t0, 20);
        controller.on_loss_report(t0 + ms(1_000), 0);
        // A report of 0 does not lower the protection: 20 is the worst of the last 10 s.
        let p = controller.update(t0 + ms(1_500), hd());
        assert_eq!((p.delta_factor, p.filtered_loss_255), (146, 20));
        // The 20 entered the history at 1 s, when the next report made a new entry. Updates keep
        // feeding the latest report (0), one new entry a second.
        for second in 2..=10 {
            controller.update(t0 + ms(1_000 * second), hd());
        }
        assert_eq!(
            controller.update(t0 + ms(10_999), hd()).filtered_loss_255,
            20
        );
        // At 11 s the eleventh entry pushes it out of the history: no FEC.
        let p = controller.update(t0 + ms(11_000), hd());
        assert_eq!(
            (p.delta_factor, p.key_factor, p.filtered_loss_255),
            (0, 0, 0)
        );
    }

    #[test]
    fn the_media_target_leaves_protection_its_measured_share_up_to_half() {
        // Nothing sent: the whole estimate.
        assert_eq!(media_target_bps(1_000_000, 0, 0, 0), 1_000_000);
        // 125 + 125 of 1000 kbit/s is protection: 25 %.
        assert_eq!(
            media_target_bps(1_000_000, 750_000, 125_000, 125_000),
            750_000
        );
        // The overhead is a float, as in libwebrtc: 0.2f is 0.2000000030, so 799 999.
        assert_eq!(
            media_target_bps(1_000_000, 800_000, 100_000, 100_000),
            799_999
        );
        // 75 % protection is capped at 50 %.
        assert_eq!(media_target_bps(1_000_000, 100_000, 0, 300_000), 500_000);
    }
}

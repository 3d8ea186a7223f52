//! When a block of media packets is closed, and how many repair packets it gets.
//!
//! libwebrtc's `UlpfecGenerator` (`modules/rtp_rtcp/source/ulpfec_generator.cc`), which its
//! `FlexfecSender` drives too, collects the media packets of a stream into a block and decides at
//! the end of each complete frame (RTP marker bit) whether to protect the block now:
//!
//! - when it spans `max_fec_frames` frames, or
//! - when the block's actual FEC overhead exceeds the requested one by less than
//!   `kMaxExcessOverhead` (50/256) *and* it holds enough media packets: 1, or `kMinMediaPackets`
//!   (4) when the factor is above `kHighProtectionThreshold` (80); one more when the block
//!   averages at least 2 packets per frame.
//!
//! It then asks for `(media x factor + 128) >> 8` repair packets, at least one when the factor is
//! not 0 (`ForwardErrorCorrection::NumFecPackets`, `forward_error_correction.cc`). The factor is
//! the key-frame factor when any packet of the block belongs to a key frame, else the delta factor.
//! New parameters take effect at the next packet. A factor of 0 gives no repair packets, and the
//! block is dropped. At most `kUlpfecMaxMediaPackets` (48) packets join a block
//! (`forward_error_correction_internal.h`; libwebrtc's FlexFEC header writer reuses the ULPFEC
//! masks and has the same limit); the rest of the frame goes unprotected, as in libwebrtc, and the
//! block still closes at the end of the frame.
//!
//! One difference: webrtc-rs's `FlexFec03Encoder` protects only consecutive sequence numbers, where
//! libwebrtc's masks can skip gaps, so a packet that does not follow the previous one drops the
//! block so far (its packets are sent unprotected) and starts a new one.
//!
//! [`BlockGenerator`] holds only the decision and the packets; the caller builds the repair
//! packets from a [`Block`] and sends them.

use super::controller::Protection;

/// `kUlpfecMaxMediaPackets` (`modules/rtp_rtcp/source/forward_error_correction_internal.h`): the
/// most media packets one block protects. FlexFEC's wire format could describe 110, but
/// libwebrtc's packet masks, which its FlexFEC sender shares with ULPFEC, stop at 48.
pub const MAX_BLOCK_MEDIA_PACKETS: usize = 48;

/// `kMaxExcessOverhead` (`ulpfec_generator.cc`), Q8: how far the block's actual overhead may
/// exceed the requested one for the block to be closed early.
const MAX_EXCESS_OVERHEAD_Q8: i32 = 50;

/// `kMinMediaPackets` (`ulpfec_generator.cc`): the media packets a block needs to close early
/// under high protection.
const MIN_MEDIA_PACKETS: usize = 4;

/// `kHighProtectionThreshold` (`ulpfec_generator.cc`): factors above this need
/// [`MIN_MEDIA_PACKETS`].
const HIGH_PROTECTION_THRESHOLD: u8 = 80;

/// `kMinMediaPacketsAdaptationThreshold` (`ulpfec_generator.cc`): from this many packets per
/// frame on, a block needs one more media packet to close early.
const MIN_MEDIA_PACKETS_ADAPTATION_THRESHOLD: f32 = 2.0;

/// What the generator needs to know about a media packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketInfo {
    /// Its RTP sequence number.
    pub sequence_number: u16,
    /// The RTP marker bit: the last packet of a frame.
    pub marker: bool,
    /// Whether it belongs to a key frame.
    pub key_frame: bool,
}

/// The size of a protected block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockShape {
    /// Media packets protected.
    pub media: u32,
    /// Repair packets to build.
    pub fec: u32,
}

/// A closed block: its media packets, in sequence order, and how many repair packets to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block<T> {
    /// The media packets, consecutive sequence numbers.
    pub packets: Vec<T>,
    /// Repair packets to build over them (at least 1).
    pub fec: u32,
}

impl<T> Block<T> {
    /// The block's shape.
    pub fn shape(&self) -> BlockShape {
        BlockShape {
            media: self.packets.len() as u32,
            fec: self.fec,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// libwebrtc's adaptive rule, with the parameters in force and those waiting for the next
    /// packet (`pending_params_`).
    Adaptive {
        current: Protection,
        pending: Option<Protection>,
        min_media_packets: usize,
    },
    /// A fixed shape: every `media` consecutive packets, `repair` repair packets.
    Fixed { media: usize, repair: u32 },
}

/// The block state machine of one protected stream, generic over what it holds per packet.
///
/// ```
/// use pacer::protection::{BlockGenerator, BlockShape, PacketInfo, Protection};
///
/// let mut generator = BlockGenerator::adaptive();
/// generator.set_protection(Protection {
///     delta_factor: 64,
///     key_factor: 170,
///     max_fec_frames: 6,
///     filtered_loss_255: 13,
/// });
/// // A frame of 8 packets: at its end the overhead is exactly the requested one, so it closes.
/// let mut closed = None;
/// for sequence_number in 0..8u16 {
///     let info = PacketInfo { sequence_number, marker: sequence_number == 7, key_frame: false };
///     closed = generator.push(info, sequence_number);
/// }
/// let block = closed.expect("closed at the marker");
/// assert_eq!(block.shape(), BlockShape { media: 8, fec: 2 }); // (8 x 64 + 128) >> 8
/// assert_eq!(block.packets, (0..8).collect::<Vec<u16>>());
/// ```
#[derive(Debug, Clone)]
pub struct BlockGenerator<T> {
    rule: Rule,
    packets: Vec<T>,
    /// Complete frames in the block (`num_protected_frames_`).
    frames: u32,
    /// Whether a packet of the block belongs to a key frame (`media_contains_keyframe_`).
    contains_key_frame: bool,
    /// The sequence number of the last packet pushed, added to the block or not.
    last_sequence_number: Option<u16>,
    /// Blocks dropped without repair packets (factor 0, or a sequence gap).
    dropped: u64,
}

impl<T> BlockGenerator<T> {
    /// libwebrtc's adaptive generator, with no protection until [`set_protection`] is called.
    ///
    /// [`set_protection`]: Self::set_protection
    pub fn adaptive() -> Self {
        Self::with_rule(Rule::Adaptive {
            current: Protection::default(),
            pending: None,
            min_media_packets: 1,
        })
    }

    /// A fixed shape, for experiments: every `media` consecutive packets (1 to 48, clamped)
    /// close a block with `repair` repair packets (at most `media`), whatever the frames.
    /// `repair` 0 protects nothing.
    pub fn fixed(media: u32, repair: u32) -> Self {
        let media = (media as usize).clamp(1, MAX_BLOCK_MEDIA_PACKETS);
        Self::with_rule(Rule::Fixed {
            media,
            repair: repair.min(media as u32),
        })
    }

    fn with_rule(rule: Rule) -> Self {
        Self {
            rule,
            packets: Vec::new(),
            frames: 0,
            contains_key_frame: false,
            last_sequence_number: None,
            dropped: 0,
        }
    }

    /// New parameters, in force from the next packet on (`SetProtectionParameters`); a fixed
    /// generator ignores them.
    pub fn set_protection(&mut self, protection: Protection) {
        if let Rule::Adaptive { pending, .. } = &mut self.rule {
            *pending = Some(protection);
        }
    }

    /// The parameters in force (all zero for a fixed generator).
    pub fn protection(&self) -> Protection {
        match self.rule {
            Rule::Adaptive { current, .. } => current,
            Rule::Fixed { .. } => Protection::default(),
        }
    }

    /// Media packets waiting in the open block.
    pub fn pending_packets(&self) -> usize {
        self.packets.len()
    }

    /// Blocks dropped without repair packets so far: closed with a factor of 0, or cut by a
    /// sequence gap.
    pub fn dropped_blocks(&self) -> u64 {
        self.dropped
    }

    /// Takes one media packet of the stream, in sending order; returns the block it closed, if
    /// any (`UlpfecGenerator::AddPacketAndGenerateFec`).
    pub fn push(&mut self, info: PacketInfo, packet: T) -> Option<Block<T>> {
        let follows = self
            .last_sequence_number
            .is_none_or(|last| info.sequence_number == last.wrapping_add(1));
        self.last_sequence_number = Some(info.sequence_number);
        if !follows && !self.packets.is_empty() {
            self.reset();
            self.dropped += 1;
        }
        match self.rule {
            Rule::Fixed { media, repair } => {
                self.packets.push(packet);
                if self.packets.len() < media {
                    return None;
                }
                self.close(repair)
            }
            Rule::Adaptive { .. } => self.push_adaptive(info, packet),
        }
    }

    fn push_adaptive(&mut self, info: PacketInfo, packet: T) -> Option<Block<T>> {
        // The parameters in force are chosen before this packet's key-frame flag is noted, and
        // the minimum block size with them, as libwebrtc does.
        let contains_key_frame = self.contains_key_frame;
        if let Rule::Adaptive {
            current,
            pending,
            min_media_packets,
        } = &mut self.rule
            && let Some(next) = pending.take()
        {
            *current = next;
            let factor = factor_of(current, contains_key_frame);
            *min_media_packets = if factor > HIGH_PROTECTION_THRESHOLD {
                MIN_MEDIA_PACKETS
            } else {
                1
            };
        }
        let Rule::Adaptive {
            current,
            min_media_packets,
            ..
        } = self.rule
        else {
            return None;
        };

        self.contains_key_frame |= info.key_frame;
        if self.packets.len() < MAX_BLOCK_MEDIA_PACKETS {
            self.packets.push(packet);
        }
        if !info.marker {
            return None;
        }
        self.frames += 1;

        let factor = factor_of(&current, self.contains_key_frame);
        let media = self.packets.len();
        let enough_frames = self.frames >= u32::from(current.max_fec_frames);
        let close_early = excess_overhead_below_max(media, factor)
            && minimum_media_packets_reached(media, self.frames, min_media_packets);
        if !(enough_frames || close_early) {
            return None;
        }
        self.close(num_fec_packets(media, factor))
    }

    /// Ends the open block: returned with `fec` repair packets, or dropped when `fec` is 0.
    fn close(&mut self, fec: u32) -> Option<Block<T>> {
        let packets = std::mem::take(&mut self.packets);
        self.reset();
        if fec == 0 {
            self.dropped += 1;
            return None;
        }
        Some(Block { packets, fec })
    }

    /// `ResetState`: an empty block.
    fn reset(&mut self) {
        self.packets.clear();
        self.frames = 0;
        self.contains_key_frame = false;
    }
}

/// The factor a block uses (`CurrentParams`).
fn factor_of(protection: &Protection, contains_key_frame: bool) -> u8 {
    if contains_key_frame {
        protection.key_factor
    } else {
        protection.delta_factor
    }
}

/// `ForwardErrorCorrection::NumFecPackets`: `(media x factor + 128) >> 8`, at least 1 when the
/// factor is not 0.
pub(crate) fn num_fec_packets(media: usize, factor: u8) -> u32 {
    let fec = ((media as u32 * u32::from(factor)) + (1 << 7)) >> 8;
    if factor > 0 && fec == 0 { 1 } else { fec }
}

/// `UlpfecGenerator::ExcessOverheadBelowMax`: the overhead in Q8, `(fec << 8) / media`, exceeds
/// the factor by less than 50.
fn excess_overhead_below_max(media: usize, factor: u8) -> bool {
    let overhead = ((num_fec_packets(media, factor) << 8) / media.max(1) as u32) as i32;
    overhead - i32::from(factor) < MAX_EXCESS_OVERHEAD_Q8
}

/// `UlpfecGenerator::MinimumMediaPacketsReached`.
fn minimum_media_packets_reached(media: usize, frames: u32, min_media_packets: usize) -> bool {
    let average_packets_per_frame = media as f32 / frames as f32;
    if average_packets_per_frame < MIN_MEDIA_PACKETS_ADAPTATION_THRESHOLD {
        media >= min_media_packets
    } else {
        media > min_media_packets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protection(delta_factor: u8, key_factor: u8, max_fec_frames: u8) -> Protection {
        Protection {
            delta_factor,
            key_factor,
            max_fec_frames,
            filtered_loss_255: 13,
        }
    }

    /// Pushes frames of the given packet counts (key frames marked `true`) from sequence number
    /// `first`; returns every block closed, as (first sequence number, shape).
    fn run(
        generator: &mut BlockGenerator<u16>,
        first: u16,
        frames: &[(usize, bool)],
    ) -> Vec<(u16, BlockShape)> {
        let mut sequence_number = first;
        let mut closed = Vec::new();
        for &(packets, key_frame) in frames {
            for index in 0..packets {
                let info = PacketInfo {
                    sequence_number,
                    marker: index + 1 == packets,
                    key_frame,
                };
                if let Some(block) = generator.push(info, sequence_number) {
                    closed.push((block.packets[0], block.shape()));
                }
                sequence_number = sequence_number.wrapping_add(1);
            }
        }
        closed
    }

    fn shape(media: u32, fec: u32) -> BlockShape {
        BlockShape { media, fec }
    }

    #[test]
    fn num_fec_packets_rounds_and_gives_at_least_one() {
        assert_eq!(num_fec_packets(8, 64), 2); // (512 + 128) >> 8 = 2.5 -> 2
        assert_eq!(num_fec_packets(1, 64), 1); // (64 + 128) >> 8 = 0 -> at least 1
        assert_eq!(num_fec_packets(30, 170), 20); // (5100 + 128) >> 8 = 20.4 -> 20
        assert_eq!(num_fec_packets(48, 255), 48); // (12240 + 128) >> 8 = 48.3 -> 48
        assert_eq!(num_fec_packets(10, 0), 0);
    }

    #[test]
    fn multi_packet_frames_close_a_block_per_frame_when_the_overhead_fits() {
        let mut generator = BlockGenerator::adaptive();
        generator.set_protection(protection(64, 170, 6));
        // 8 packets: fec (8 x 64 + 128) >> 8 = 2, overhead (2 << 8) / 8 = 64, excess 0 < 50;
        // average 8 packets per frame >= 2 needs more than 1 packet: closes.
        // 5 packets: fec (320 + 128) >> 8 = 1, overhead 256 / 5 = 51, excess -13: closes.
        // 3 packets: fec (192 + 128) >> 8 = 1, overhead 256 / 3 = 85, excess 21: closes.
        let closed = run(&mut generator, 100, &[(8, false), (5, false), (3, false)]);
        assert_eq!(
            closed,
            vec![(100, shape(8, 2)), (108, shape(5, 1)), (113, shape(3, 1))]
        );
        assert_eq!(generator.pending_packets(), 0);
    }

    #[test]
    fn single_packet_frames_accumulate_until_the_overhead_fits() {
        let mut generator = BlockGenerator::adaptive();
        generator.set_protection(protection(64, 170, 6));
        // 1 packet: fec 1, overhead 256, excess 192. 2 packets: fec (128 + 128) >> 8 = 1,
        // overhead 128, excess 64. 3 packets: fec 1, overhead 85, excess 21 < 50, average 1 < 2
        // so 3 >= 1 packets is enough: closes every third frame.
        let closed = run(&mut generator, 0, &[(1, false); 7]);
        assert_eq!(closed, vec![(0, shape(3, 1)), (3, shape(3, 1))]);
        assert_eq!(generator.pending_packets(), 1);
    }

    #[test]
    fn max_fec_frames_closes_a_block_whose_overhead_never_fits() {
        // Factor 20: one packet per frame, fec always 1 (at least one), overhead 256 / n exceeds
        // 20 by 50 or more until n = 4 (64 - 20 = 44): closes at 4 frames...
        let mut generator = BlockGenerator::adaptive();
        generator.set_protection(protection(20, 40, 6));
        assert_eq!(
            run(&mut generator, 0, &[(1, false); 4]),
            vec![(0, shape(4, 1))]
        );
        // ...unless max_fec_frames is 2: then it closes at 2 frames with fec (2 x 20 + 128) >> 8
        // = 0 -> 1.
        let mut generator = BlockGenerator::adaptive();
        generator.set_protection(protection(20, 40, 2));
        assert_eq!(
            run(&mut generator, 0, &[(1, false); 4]),
            vec![(0, shape(2, 1)), (2, shape(2, 1))]
        );
    }

    #[test]
    fn high_protection_needs_four_media_packets_and_five_at_two_per_frame() {
        // Factor 128 (> 80): the minimum is 4 media packets. Frames of 2 packets average 2
        // per frame, so it takes more than 4: the first frame (2) and the second (4) do not
        // close, the third (6) does, with (6 x 128 + 128) >> 8 = 3 repair packets. (The overhead
        // is always 128: excess 0.)
        let mut generator = BlockGenerator::adaptive();
        generator.set_protection(protection(128, 255, 6));
        assert_eq!(
            run(&mut generator, 0, &[(2, false); 3]),
            vec![(0, shape(6, 3))]
        );
        // Single-packet frames average 1: 4 packets are enough.
        // fec (4 x 128 + 128) >> 8 = 2, overhead 128.
        let mut generator = BlockGenerator::adaptive();
        generator.set_protection(protection(128, 255, 6));
        assert_eq!(
            run(&mut generator, 0, &[(1, false); 4]),
            vec![(0, shape(4, 2))]
        );
    }

    #[test]
    fn a_block_holding_a_key_frame_uses_the_key_factor() {
        let mut generator = BlockGenerator::adaptive();
        generator.set_protection(protection(64, 170, 6));
        // A 30-packet key frame: (30 x 170 + 128) >> 8 = 20, overhead 5120 / 30 = 170, excess 0.
        // Then a delta frame of 8: 2.
        let closed = run(&mut generator, 0, &[(30, true), (8, false)]);
        assert_eq!(closed, vec![(0, shape(30, 20)), (30, shape(8, 2))]);
        // A key frame after single-packet delta frames in the same block: the whole block of
        // 1 + 1 + 4 packets uses the key factor, (6 x 170 + 128) >> 8 = 4.
        let closed = run(&mut generator, 38, &[(1, false), (1, false), (4, true)]);
        assert_eq!(closed, vec![(38, shape(6, 4))]);
    }

    #[test]
    fn new_parameters_apply_from_the_next_packet() {
        let mut generator = BlockGenerator::adaptive();
        // No parameters yet: factor 0, the first frame's block is dropped at its marker.
        assert!(run(&mut generator, 0, &[(4, false)]).is_empty());
        assert_eq!(generator.dropped_blocks(), 1);
        // Set while a frame is open: in force from its next packet, here the frame's last.
        let info = |sequence_number, marker| PacketInfo {
            sequence_number,
            marker,
            key_frame: false,
        };
        assert!(generator.push(info(4, false), 4).is_none());
        generator.set_protection(protection(64, 170, 1));
        assert_eq!(
            generator.protection().delta_factor,
            0,
            "not before the next packet"
        );
        // One frame is max_fec_frames: (2 x 64 + 128) >> 8 = 1 repair packet.
        let block = generator.push(info(5, true), 5).expect("closes");
        assert_eq!((block.packets, block.fec), (vec![4, 5], 1));
        assert_eq!(generator.protection().delta_factor, 64);
    }

    #[test]
    fn a_zero_factor_drops_the_block() {
        let mut generator = BlockGenerator::adaptive();
        generator.set_protection(protection(0, 0, 3));
        assert!(run(&mut generator, 0, &[(5, false); 3]).is_empty());
        assert_eq!(
            generator.pending_packets(),
            0,
            "dropped at each frame's end"
        );
        assert_eq!(generator.dropped_blocks(), 3);
    }

    #[test]
    fn a_sequence_gap_drops_the_open_block_and_starts_a_new_one() {
        let mut generator = BlockGenerator::adaptive();
        generator.set_protection(protection(64, 170, 6));
        // Two single-packet frames (0, 1) wait for a third; 3 skips 2.
        assert!(run(&mut generator, 0, &[(1, false); 2]).is_empty());
        assert_eq!(generator.pending_packets(), 2);
        let closed = run(&mut generator, 3, &[(1, false); 3]);
        assert_eq!(
            closed,
            vec![(3, shape(3, 1))],
            "a new block from 3: 3, 4, 5"
        );
        assert_eq!(generator.dropped_blocks(), 1);
        // Sequence numbers wrap: 65534, 65535, 0 are consecutive.
        let mut generator = BlockGenerator::adaptive();
        generator.set_protection(protection(64, 170, 6));
        assert_eq!(
            run(&mut generator, 65_534, &[(1, false); 3]),
            vec![(65_534, shape(3, 1))]
        );
    }

    #[test]
    fn a_block_protects_at_most_48_packets_and_still_closes_at_the_frame_end() {
        let mut generator = BlockGenerator::adaptive();
        generator.set_protection(protection(64, 170, 6));
        // A 60-packet key frame: 48 join the block, 12 go unprotected; (48 x 170 + 128) >> 8 =
        // 32 repair packets. The next frame starts a new block.
        let closed = run(&mut generator, 0, &[(60, true), (8, false)]);
        assert_eq!(closed, vec![(0, shape(48, 32)), (60, shape(8, 2))]);
    }

    #[test]
    fn a_fixed_shape_ignores_frames_and_factors() {
        let mut generator = BlockGenerator::fixed(5, 2);
        generator.set_protection(protection(0, 0, 1));
        let closed = run(&mut generator, 10, &[(3, false), (3, true), (6, false)]);
        assert_eq!(closed, vec![(10, shape(5, 2)), (15, shape(5, 2))]);
        assert_eq!(generator.pending_packets(), 2);
        // Clamped: at most 48 media packets, at most as many repair packets as media packets.
        let mut generator = BlockGenerator::fixed(100, 200);
        let closed = run(&mut generator, 0, &[(50, false)]);
        assert_eq!(closed, vec![(0, shape(48, 48))]);
        // No repair packets: every block is dropped.
        let mut generator = BlockGenerator::fixed(2, 0);
        assert!(run(&mut generator, 0, &[(4, false)]).is_empty());
        assert_eq!(generator.dropped_blocks(), 2);
    }
}

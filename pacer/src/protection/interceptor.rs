//! The webrtc-rs interceptor: adaptive FlexFEC, below the TWCC sender (as libwebrtc) or at
//! `Slot::FecEncoder` (as webrtc-rs).
//!
//! It takes the place of webrtc-rs's `FlexFec03SendInterceptor`, whose block shape is fixed at
//! build time (reference sheet part 6), and drives the same `FlexFec03Encoder` with libwebrtc's
//! decisions: the [`ProtectionController`] chooses the factors from the receiver reports it reads
//! on the way in and the network inputs of its [`ProtectionHandle`], and the [`BlockGenerator`]
//! decides when a block closes and how many repair packets it gets.
//!
//! Two placements. Below the TWCC sender ([`FEC_GENERATOR_SLOT`], with a [`RepairQueue`] shared
//! with the pacer), it protects each media packet as it leaves, transport-wide sequence number
//! included, and hands the repair packets back to the pacer's queue, as libwebrtc generates FEC in
//! `RtpSenderEgress::SendPacket` and the pacer fetches it (`FetchFec`): a libwebrtc receiver, which
//! XORs the packets as they arrived, can then use them. At webrtc-rs's `Slot::FecEncoder` (no
//! queue), repair packets follow the media packet that closed their block down the chain; either
//! way the pacer gives the FEC SSRC video's priority and the TWCC sender and the congestion
//! controller treat them as video.
//!
//! Everything is decided from the packets' `now` and the handle's inputs; nothing reads a clock.

use super::controller::{Protection, ProtectionController, ProtectionInputs};
use super::generator::{BlockGenerator, PacketInfo};
use super::handle::{ProtectionHandle, ProtectionStats};
use super::measure::{ByteRate, FrameRateMeter, PacketsPerFrame};
use super::receive::{MUTABLE_EXTENSION_URIS, with_zeroed_extensions};
use super::report_blocks::loss_reports;
use crate::actions::{Action, ActionsHandle};
use crate::pacing::FrameInfoFn;
use crate::pacing::RepairQueue;
use rtc_interceptor::{
    Attribute, AttributedPacket, FlexFec03Encoder, Interceptor, Packet, StreamInfo, TaggedPacket,
};
use rtc_shared::error::Error;
use rtc_shared::marshal::MarshalSize;
use sansio::Protocol;
use std::collections::VecDeque;
use std::time::Instant;

/// How the interceptor protects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FecMode {
    /// libwebrtc's adaptive protection: [`ProtectionController`] and [`BlockGenerator`].
    Libwebrtc,
    /// A fixed block shape, for experiments: every `media` consecutive packets (1 to 48) get
    /// `repair` repair packets (at most `media`), whatever the loss, frames or rate.
    Fixed {
        /// Media packets per block.
        media: u32,
        /// Repair packets per block.
        repair: u32,
    },
    /// No FEC: every packet passes unchanged (the video rate is still measured).
    Off,
}

/// Builds a [`LossProtection`] and its [`ProtectionHandle`].
#[derive(Debug, Clone)]
pub struct LossProtectionBuilder {
    mode: FecMode,
    frame_info: Option<FrameInfoFn>,
    nack_enabled: Option<bool>,
    actions: Option<ActionsHandle>,
    repair: Option<RepairQueue>,
}

impl LossProtectionBuilder {
    /// Hands every repair packet to the pacer through `queue` instead of sending it on after the
    /// media packet that closed its block. This is for a placement below the TWCC sender, where
    /// the interceptor protects each media packet as it leaves, transport-wide sequence number
    /// included, as libwebrtc's `RtpSenderEgress::SendPacket` does; the pacer built with the same
    /// queue paces the repair packets like media ([`RepairQueue`]).
    pub fn repair_queue(mut self, queue: RepairQueue) -> Self {
        self.repair = Some(queue);
        self
    }

    /// Boosts protection inside the boost windows of `actions` (docs/architecture.md,
    /// "Handover-timed actions"): in libwebrtc mode, a block closed inside a window gets at
    /// least the configured factor ([`BoostConfig::min_factor`](crate::actions::BoostConfig::min_factor)),
    /// for delta and key frames alike, whatever the loss reports and the RTT say. Outside the
    /// windows the controller's factors apply unchanged. A fixed shape and no FEC are not
    /// boosted: they are the experiments' fixed points.
    pub fn actions(mut self, actions: ActionsHandle) -> Self {
        self.actions = Some(actions);
        self
    }

    /// Tells the interceptor how to read a video packet's frame, for key frames: their blocks get
    /// the key-frame factor, and their sizes set the key-frame boost. Without it every frame is a
    /// delta frame.
    pub fn frame_info(mut self, read: FrameInfoFn) -> Self {
        self.frame_info = Some(read);
        self
    }

    /// Whether NACK is in use (hybrid NACK/FEC) or not (pure FEC), for every stream. Without
    /// this, a stream is taken to use NACK when its `rtcp_feedback` lists plain `nack`.
    pub fn nack_enabled(mut self, enabled: bool) -> Self {
        self.nack_enabled = Some(enabled);
        self
    }

    /// Builds the interceptor and the handle that reaches into it once it is inside a chain.
    pub fn build(self) -> (LossProtection, ProtectionHandle) {
        let handle = ProtectionHandle::new();
        let protection = LossProtection {
            mode: self.mode,
            handle: handle.clone(),
            frame_info: self.frame_info,
            nack_enabled: self.nack_enabled,
            actions: self.actions,
            repair: self.repair,
            video_ssrcs: Vec::new(),
            streams: Vec::new(),
            video_rate: ByteRate::default(),
            fec_rate: ByteRate::default(),
            stats: ProtectionStats::default(),
            read_queue: VecDeque::new(),
            write_queue: VecDeque::new(),
        };
        (protection, handle)
    }
}

/// Where the interceptor goes to protect packets as they leave: between webrtc-rs's
/// `Slot::CongestionControl` (1000) and `Slot::TwccSender` (2000), so that the transport-wide
/// sequence number is already in the packets it protects and the congestion controller records
/// them after it (libwebrtc `RtpSenderEgress::SendPacket`).
pub const FEC_GENERATOR_SLOT: rtc_interceptor::Slot = rtc_interceptor::Slot::Custom(1500);

/// Adaptive FlexFEC (draft 03), at [`FEC_GENERATOR_SLOT`] with a [`RepairQueue`] or at webrtc-rs's
/// `Slot::FecEncoder`.
///
/// A local stream is protected when its `StreamInfo` names both a FEC SSRC and a FEC payload type
/// (the negotiated `a=ssrc-group:FEC-FR`). On the read leg the fraction lost of every report block
/// about a protected stream, in sender and receiver reports, goes to that stream's controller;
/// everything read passes on. On the write leg every media packet of a protected stream joins the
/// generator and passes on at once, followed by the repair packets of the block it closed, on the
/// FEC SSRC. At every frame end (marker bit) and every loss report the controller updates the
/// factors from the handle's target, RTT and resolution and from what the interceptor measured:
/// the frame rate (frame ends over the last second) and the filtered packets per key and per delta
/// frame.
///
/// What the driver must arrange. The TWCC sender numbers only streams bound with the
/// transport-wide-cc extension, so the FEC SSRC must be bound as a local stream of its own (as RTX
/// and padding are) for repair packets to be numbered and reach the congestion controller. At
/// [`FEC_GENERATOR_SLOT`] the pacer must be built with the same [`RepairQueue`]
/// ([`HandoverAwarePacerBuilder::repair_queue`](crate::pacing::HandoverAwarePacerBuilder::repair_queue)),
/// or the repair packets never leave. At `Slot::FecEncoder` the encoder protects a media packet
/// before the TWCC sender adds its extension below, so a receiver must remove that extension from
/// the media packets it gives a `FlexFec03Decoder`
/// ([`without_header_extension`](crate::protection::without_header_extension)); a libwebrtc receiver does not.
///
/// ```no_run
/// use pacer::{FecMode, LossProtection};
/// use rtc_interceptor::{Registry, Slot};
/// use std::time::Duration;
///
/// let (fec, handle) = LossProtection::builder(FecMode::Libwebrtc).build();
/// let chain = Registry::new().with(Slot::FecEncoder, fec).build();
/// handle.set_network(2_500_000, Duration::from_millis(150));
/// handle.set_resolution(1280, 720);
/// # drop(chain);
/// ```
pub struct LossProtection {
    mode: FecMode,
    handle: ProtectionHandle,
    frame_info: Option<FrameInfoFn>,
    nack_enabled: Option<bool>,
    actions: Option<ActionsHandle>,
    /// Where repair packets go when they go back to the pacer instead of down the chain.
    repair: Option<RepairQueue>,
    /// Bound local streams that are not audio: the media the video rate counts.
    video_ssrcs: Vec<u32>,
    streams: Vec<ProtectedStream>,
    video_rate: ByteRate,
    fec_rate: ByteRate,
    stats: ProtectionStats,
    read_queue: VecDeque<TaggedPacket>,
    write_queue: VecDeque<TaggedPacket>,
}

/// One protected media stream.
struct ProtectedStream {
    media_ssrc: u32,
    /// The ids of the stream's mutable header extensions, zeroed in what the encoder protects.
    mutable_extensions: Vec<u8>,
    nack_enabled: bool,
    encoder: FlexFec03Encoder,
    generator: BlockGenerator<rtc_rtp::Packet>,
    controller: ProtectionController,
    frames: FrameRateMeter,
    packets_per_delta_frame: PacketsPerFrame,
    packets_per_key_frame: PacketsPerFrame,
    /// Packets of the frame in progress, and whether one was a key-frame packet.
    frame_packets: u32,
    frame_is_key: bool,
    /// Whether the protection last handed to the generator was boosted.
    boosted: bool,
}

impl LossProtection {
    /// A builder for `mode`.
    pub fn builder(mode: FecMode) -> LossProtectionBuilder {
        LossProtectionBuilder {
            mode,
            frame_info: None,
            nack_enabled: None,
            actions: None,
            repair: None,
        }
    }

    /// The handle on this interceptor.
    pub fn handle(&self) -> &ProtectionHandle {
        &self.handle
    }

    fn stream_index(&self, ssrc: u32) -> Option<usize> {
        self.streams
            .iter()
            .position(|stream| stream.media_ssrc == ssrc)
    }

    /// Asks stream `index`'s controller for the protection from `now` on (libwebrtc mode only).
    fn update(&mut self, index: usize, now: Instant) {
        if self.mode != FecMode::Libwebrtc {
            return;
        }
        let driver = self.handle.inputs();
        let Some(stream) = self.streams.get_mut(index) else {
            return;
        };
        let inputs = ProtectionInputs {
            target_bps: driver.target_bps,
            rtt: driver.rtt,
            frame_rate: stream.frames.frame_rate(now),
            width: driver.width,
            height: driver.height,
            nack_enabled: stream.nack_enabled,
            packets_per_key_frame: stream.packets_per_key_frame.value(),
            packets_per_delta_frame: stream.packets_per_delta_frame.value(),
        };
        let mut protection = stream.controller.update(now, inputs);
        stream.boosted = false;
        if let Some(actions) = &self.actions
            && actions.is_active(Action::Boost, now)
        {
            protection = boosted(protection, actions.config().boost.min_factor_q8());
            stream.boosted = true;
            self.stats.boosted_updates += 1;
        }
        stream.generator.set_protection(protection);
        self.stats.delta_factor = protection.delta_factor;
        self.stats.key_factor = protection.key_factor;
        self.stats.max_fec_frames = protection.max_fec_frames;
        self.stats.filtered_loss_255 = protection.filtered_loss_255;
    }

    fn publish(&mut self, now: Instant) {
        self.stats.at = Some(self.stats.at.map_or(now, |at| at.max(now)));
        self.stats.video_rate_bps = self.video_rate.rate_bps(now);
        self.stats.fec_rate_bps = self.fec_rate.rate_bps(now);
        self.handle.publish(self.stats);
    }

    /// Feeds a media packet of protected stream `index` to its generator and queues it, then the
    /// repair packets of the block it closed.
    fn protect(&mut self, index: usize, msg: TaggedPacket) {
        let now = msg.now;
        let transport = msg.transport;
        let Packet::Rtp(rtp) = &msg.message.packet else {
            self.write_queue.push_back(msg);
            return;
        };
        let key_frame = self.frame_info.is_some_and(|read| read(rtp).key_frame);
        let info = PacketInfo {
            sequence_number: rtp.header.sequence_number,
            marker: rtp.header.marker,
            key_frame,
        };
        let packet = match self.streams.get(index) {
            Some(stream) if !stream.mutable_extensions.is_empty() => {
                with_zeroed_extensions(rtp, &stream.mutable_extensions)
            }
            _ => rtp.clone(),
        };
        self.write_queue.push_back(msg);
        // A boost window opened or closed since the last update: the new factors apply from
        // this packet on.
        let boost = self
            .actions
            .as_ref()
            .is_some_and(|actions| actions.is_active(Action::Boost, now));
        if self
            .streams
            .get(index)
            .is_some_and(|stream| stream.boosted != boost)
        {
            self.update(index, now);
        }

        let Some(stream) = self.streams.get_mut(index) else {
            return;
        };
        stream.frame_packets += 1;
        stream.frame_is_key |= key_frame;
        if let Some(block) = stream.generator.push(info, packet) {
            let repair = stream.encoder.encode(&block.packets, block.fec);
            if !repair.is_empty() {
                self.stats.blocks += 1;
                self.stats.media_packets_protected += block.packets.len() as u64;
            }
            for packet in repair {
                let size = packet.marshal_size() as u64;
                self.fec_rate.on_sent(now, size);
                self.stats.fec_packets_sent += 1;
                self.stats.fec_bytes_sent += size;
                let packet = TaggedPacket {
                    now,
                    transport,
                    message: AttributedPacket::new(Packet::Rtp(packet)),
                };
                match &self.repair {
                    Some(queue) => queue.push(packet),
                    None => self.write_queue.push_back(packet),
                }
            }
        }
        if info.marker {
            stream.frames.on_frame_end(now);
            let filter = if stream.frame_is_key {
                &mut stream.packets_per_key_frame
            } else {
                &mut stream.packets_per_delta_frame
            };
            filter.on_frame(now, stream.frame_packets);
            stream.frame_packets = 0;
            stream.frame_is_key = false;
            self.update(index, now);
        }
    }
}

/// `protection` with both factors raised to at least `min_factor` (out of 256, relative to media
/// packets), and at least one frame per block.
fn boosted(protection: Protection, min_factor: u8) -> Protection {
    Protection {
        delta_factor: protection.delta_factor.max(min_factor),
        key_factor: protection.key_factor.max(min_factor),
        max_fec_frames: protection.max_fec_frames.max(1),
        filtered_loss_255: protection.filtered_loss_255,
    }
}

impl Protocol<TaggedPacket, TaggedPacket, ()> for LossProtection {
    type Rout = TaggedPacket;
    type Wout = TaggedPacket;
    type Eout = ();
    type Error = Error;
    type Time = Instant;

    fn handle_read(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        if let Packet::Rtcp(packets) = &msg.message.packet
            && !self.streams.is_empty()
        {
            let now = msg.now;
            let mut reported = Vec::new();
            for packet in packets {
                for report in loss_reports(packet.as_ref()) {
                    if let Some(index) = self.stream_index(report.ssrc) {
                        self.streams[index]
                            .controller
                            .on_loss_report(now, report.fraction_lost);
                        if !reported.contains(&index) {
                            reported.push(index);
                        }
                    }
                }
            }
            for &index in &reported {
                self.update(index, now);
            }
            if !reported.is_empty() {
                self.publish(now);
            }
        }
        self.read_queue.push_back(msg);
        Ok(())
    }

    fn poll_read(&mut self) -> Option<Self::Rout> {
        self.read_queue.pop_front()
    }

    fn handle_write(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        let Packet::Rtp(rtp) = &msg.message.packet else {
            self.write_queue.push_back(msg);
            return Ok(());
        };
        let ssrc = rtp.header.ssrc;
        // Below the pacer everything leaving passes here: only new media counts and is protected,
        // not padding or a retransmission on the media SSRC (libwebrtc protects only packets
        // marked `fec_protect_packet`, new video).
        if !self.video_ssrcs.contains(&ssrc)
            || rtp.header.padding
            || msg.message.has(&Attribute::Retransmission)
        {
            self.write_queue.push_back(msg);
            return Ok(());
        }
        let now = msg.now;
        let size = rtp.marshal_size() as u64;
        self.video_rate.on_sent(now, size);
        self.stats.media_packets_seen += 1;
        self.stats.media_bytes_seen += size;
        match self.stream_index(ssrc) {
            Some(index) => self.protect(index, msg),
            None => self.write_queue.push_back(msg),
        }
        self.publish(now);
        Ok(())
    }

    fn poll_write(&mut self) -> Option<Self::Wout> {
        self.write_queue.pop_front()
    }

    fn handle_timeout(&mut self, _now: Instant) -> Result<(), Self::Error> {
        Ok(())
    }

    fn poll_timeout(&mut self) -> Option<Self::Time> {
        None
    }
}

impl Interceptor for LossProtection {
    fn bind_local_stream(&mut self, info: &StreamInfo) {
        let mime = info.mime_type.to_ascii_lowercase();
        // Audio, and the streams that carry no new media (RTX, FEC, RED), are not video.
        if mime.starts_with("audio/")
            || ["/rtx", "/flexfec", "/ulpfec", "/red"]
                .iter()
                .any(|codec| mime.contains(codec))
        {
            return;
        }
        if !self.video_ssrcs.contains(&info.ssrc) {
            self.video_ssrcs.push(info.ssrc);
        }
        let (Some(ssrc_fec), Some(payload_type_fec)) = (info.ssrc_fec, info.payload_type_fec)
        else {
            return;
        };
        let generator = match self.mode {
            FecMode::Libwebrtc => BlockGenerator::adaptive(),
            FecMode::Fixed { media, repair } => BlockGenerator::fixed(media, repair),
            FecMode::Off => return,
        };
        let nack_enabled = self.nack_enabled.unwrap_or_else(|| {
            info.rtcp_feedback
                .iter()
                .any(|feedback| feedback.typ == "nack" && feedback.parameter.is_empty())
        });
        self.streams.retain(|stream| stream.media_ssrc != info.ssrc);
        let mutable_extensions = info
            .rtp_header_extensions
            .iter()
            .filter(|e| MUTABLE_EXTENSION_URIS.contains(&e.uri.as_str()))
            .filter_map(|e| u8::try_from(e.id).ok())
            .collect();
        self.streams.push(ProtectedStream {
            media_ssrc: info.ssrc,
            mutable_extensions,
            nack_enabled,
            encoder: FlexFec03Encoder::new(payload_type_fec, ssrc_fec),
            generator,
            controller: ProtectionController::new(),
            frames: FrameRateMeter::default(),
            packets_per_delta_frame: PacketsPerFrame::default(),
            packets_per_key_frame: PacketsPerFrame::default(),
            frame_packets: 0,
            frame_is_key: false,
            boosted: false,
        });
    }

    fn unbind_local_stream(&mut self, info: &StreamInfo) {
        // A partly filled block goes with its stream: its packets have left unprotected.
        self.video_ssrcs.retain(|&ssrc| ssrc != info.ssrc);
        self.streams.retain(|stream| stream.media_ssrc != info.ssrc);
    }

    fn bind_remote_stream(&mut self, _info: &StreamInfo) {}

    fn unbind_remote_stream(&mut self, _info: &StreamInfo) {}
}

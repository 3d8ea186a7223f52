//! The webrtc-rs interceptor: a [`PacingController`] at `Slot::Pacer`.
//!
//! It replaces the stock `PacerInterceptor` (a FIFO token bucket at 1.0 x the target) after
//! `configure_congestion_control(...)` has placed that one, following the checklist of
//! reference 3.7: the target bitrate is read from `Attribute::TargetBitrateChanged` on the read
//! leg, RTCP passes unpaced, RTP is classified by stream and attribute, and every released packet
//! carries its release instant as `now`, so the send history below it charges pacer delay to the
//! pacer and not to the network.

use super::config::PacingConfig;
use super::controller::{FrameInfo, PacingController, Released};
use super::handle::PacerHandle;
use super::packet::PacketKind;
use super::prober::ProbeChannel;
use super::repair::{RepairQueue, SequenceCounter};
use super::stats::PacerStats;
use crate::actions::{Action, ActionsHandle};
use crate::cwnd::CwndChannel;
use rtc_interceptor::{Attribute, Interceptor, Packet, StreamInfo, TaggedPacket};
use rtc_shared::error::Error;
use rtc_shared::marshal::MarshalSize;
use sansio::Protocol;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// While packets wait, the pacer wakes at least this often to pick up a limit set through the
/// handle and to publish stats: libwebrtc samples its pacer queue for the encoder every
/// `kPacerQueueUpdateInterval` = 25 ms (reference 1.2).
pub(crate) const STATS_INTERVAL: Duration = Duration::from_millis(25);

/// Builds a [`HandoverAwarePacer`] and its [`PacerHandle`].
#[derive(Debug, Clone)]
pub struct HandoverAwarePacerBuilder {
    config: PacingConfig,
    probes: Option<ProbeChannel>,
    cwnd: Option<CwndChannel>,
    frame_info: Option<FrameInfoFn>,
    actions: Option<ActionsHandle>,
    repair: Option<RepairQueue>,
    rtx_padding: Option<SequenceCounter>,
}

/// Reads what a video RTP packet says about its frame (codec-specific: the pacer cannot parse
/// payloads itself). Needed for [`PacingConfig::keyframe_flush`].
pub type FrameInfoFn = fn(&rtc_rtp::packet::Packet) -> FrameInfo;

impl HandoverAwarePacerBuilder {
    /// Sends the probe clusters a congestion controller posts on `channel` (the channel of a
    /// [`GoogCc::with_probing`](crate::GoogCc::with_probing)), and records on it which packets
    /// were probes. Padding fills a probe only if the configuration names a `padding_ssrc`.
    pub fn probe_channel(mut self, channel: ProbeChannel) -> Self {
        self.probes = Some(channel);
        self
    }

    /// Records every released RTP packet as outstanding data on `channel` and, when the
    /// channel's mode is [`CwndMode::Pacer`](crate::CwndMode::Pacer), holds media
    /// while outstanding data fills the congestion window, sending a keep-alive every 500 ms
    /// (on the padding SSRC, so only if the configuration names one).
    pub fn congestion_window(mut self, channel: CwndChannel) -> Self {
        self.cwnd = Some(channel);
        self
    }

    /// Holds media inside the hold windows of `actions` (docs/architecture.md, "Handover-timed
    /// actions"): the pacer copies the windows at its next event after they change and applies
    /// them through [`PacingController::set_hold_windows`].
    pub fn actions(mut self, actions: ActionsHandle) -> Self {
        self.actions = Some(actions);
        self
    }

    /// Tells the pacer how to read a video packet's frame (for key-frame flushing).
    pub fn frame_info(mut self, read: FrameInfoFn) -> Self {
        self.frame_info = Some(read);
        self
    }

    /// Enqueues the repair packets a FEC generator below the pacer puts in `queue`, at every
    /// event and whenever the chain polls for writes, as libwebrtc's `PacingController` enqueues
    /// what `FetchFec` returns after each send (see [`RepairQueue`]). They are paced as FEC
    /// (video's priority) on their bound repair SSRC.
    pub fn repair_queue(mut self, queue: RepairQueue) -> Self {
        self.repair = Some(queue);
        self
    }

    /// Sends padding (probes, keep-alives) on an RTX stream, as libwebrtc does when RTX is
    /// negotiated (`RTPSender::GeneratePadding`): the configuration's `padding_ssrc` and
    /// `padding_payload_type` are then the RTX SSRC and payload type, and every padding packet
    /// is numbered from `sequence`, which the NACK responder's retransmissions on that SSRC must
    /// share. A padding packet is payload padding: the latest media packet of at least 50 bytes
    /// of the RTX stream's media stream, re-sent in RTX (RFC 4588 section 4: its sequence number,
    /// then its payload; libwebrtc `RtpPacketHistory::GetPayloadPaddingPacket` in
    /// recent-large-packet mode, `kMinPayloadPaddingBytes`), which a receiver drops as a
    /// duplicate. Before such a packet has left, a padding-only RTX packet (the padding bit, no
    /// payload). Its size is the media packet's, not the probe's request, so a probe's rate is
    /// off by that ratio; the estimator reads the real sizes from transport feedback.
    pub fn rtx_padding(mut self, sequence: SequenceCounter) -> Self {
        self.rtx_padding = Some(sequence);
        self
    }

    /// Builds the interceptor and the handle that reaches into it once it is inside a chain.
    pub fn build(self) -> (HandoverAwarePacer, PacerHandle) {
        let handle = PacerHandle::starting_as(PacerStats::initial(&self.config));
        let pacer = HandoverAwarePacer {
            applied_limit: handle.queue_time_limit(),
            handle: handle.clone(),
            config: self.config,
            controller: None,
            kinds: Vec::new(),
            read_queue: VecDeque::new(),
            write_queue: VecDeque::new(),
            slab: Vec::new(),
            settled_at: None,
            free: Vec::new(),
            last_now: None,
            last_published: None,
            published_empty: true,
            probes: self.probes,
            cwnd: self.cwnd,
            frame_info: self.frame_info,
            actions: self.actions,
            repair: self.repair,
            rtx_padding: self.rtx_padding,
            last_media: None,
            hold_generation: None,
            duplicates: VecDeque::new(),
            rtx_of: Vec::new(),
            padding_sequence: 0,
            last_timestamp: 0,
        };
        (pacer, handle)
    }
}

/// A handover-aware pacer for webrtc-rs's `Slot::Pacer`.
///
/// ```no_run
/// use pacer::{HandoverAwarePacer, PacingConfig};
/// use rtc_interceptor::{Registry, Slot};
/// use std::time::Duration;
///
/// let (pacer, handle) = HandoverAwarePacer::builder(PacingConfig::default()).build();
/// let chain = Registry::new().with(Slot::Pacer, pacer).build();
/// handle.set_queue_time_limit(Duration::from_millis(500));
/// # drop(chain);
/// ```
pub struct HandoverAwarePacer {
    config: PacingConfig,
    handle: PacerHandle,
    applied_limit: Duration,
    /// Created at the first instant the chain hands in: the controller's epoch.
    controller: Option<PacingController<u32>>,
    /// What each bound local SSRC carries.
    kinds: Vec<(u32, PacketKind)>,
    read_queue: VecDeque<TaggedPacket>,
    /// RTCP as it arrives and RTP as it is released, in that order of events.
    write_queue: VecDeque<TaggedPacket>,
    slab: Vec<Option<TaggedPacket>>,
    /// The instant of the last release, when nothing has changed since: another release at that
    /// instant would find nothing to do.
    settled_at: Option<Instant>,
    free: Vec<u32>,
    last_now: Option<Instant>,
    last_published: Option<Instant>,
    published_empty: bool,
    probes: Option<ProbeChannel>,
    cwnd: Option<CwndChannel>,
    frame_info: Option<FrameInfoFn>,
    actions: Option<ActionsHandle>,
    /// Repair packets made below the pacer, to enqueue.
    repair: Option<RepairQueue>,
    /// The RTX stream's sequence, when padding is RTX payload padding.
    rtx_padding: Option<SequenceCounter>,
    /// The latest media packet (of at least 50 bytes) of the padding RTX stream's media stream.
    last_media: Option<rtc_rtp::packet::Packet>,
    /// The generation of the hold windows last copied from `actions`.
    hold_generation: Option<u64>,
    /// Copies of the video sent inside a duplicate window, each with the end of its window,
    /// when it is queued again (docs/architecture.md, "Handover-timed actions"). Ends never
    /// decrease: packets leave in time order and merged windows do not overlap.
    duplicates: VecDeque<(Instant, TaggedPacket)>,
    /// Media SSRC -> its RTX SSRC, from the bound streams.
    rtx_of: Vec<(u32, u32)>,
    /// The next RTP sequence number on the padding SSRC.
    padding_sequence: u16,
    /// The RTP timestamp of the last media packet released, which padding reuses.
    last_timestamp: u32,
}

impl HandoverAwarePacer {
    /// A builder with `config`.
    pub fn builder(config: PacingConfig) -> HandoverAwarePacerBuilder {
        HandoverAwarePacerBuilder {
            config,
            probes: None,
            cwnd: None,
            frame_info: None,
            actions: None,
            repair: None,
            rtx_padding: None,
        }
    }

    /// The handle on this pacer.
    pub fn handle(&self) -> &PacerHandle {
        &self.handle
    }

    /// The kind the pacer gives an outgoing RTP packet.
    ///
    /// Padding-only packets are padding whatever their stream; the NACK responder marks what it
    /// resends; otherwise the stream decides: RTX streams carry retransmissions, FEC streams FEC,
    /// `audio/*` streams audio, and anything else (including unbound SSRCs) is video.
    fn classify(
        &self,
        message: &rtc_interceptor::AttributedPacket,
        rtp: &rtc_rtp::packet::Packet,
    ) -> PacketKind {
        if rtp.header.padding && rtp.payload.is_empty() {
            return PacketKind::Padding;
        }
        if message.has(&Attribute::Retransmission) {
            return PacketKind::Retransmission;
        }
        self.kinds
            .iter()
            .find(|(ssrc, _)| *ssrc == rtp.header.ssrc)
            .map_or(PacketKind::Video, |(_, kind)| *kind)
    }

    /// The controller, created at the first instant seen, with any limit set through the handle
    /// applied as of `now`.
    fn controller_at(&mut self, now: Instant) -> &mut PacingController<u32> {
        self.last_now = Some(self.last_now.map_or(now, |last| last.max(now)));
        let controller = self
            .controller
            .get_or_insert_with(|| PacingController::new(self.config.clone(), now));
        let requested = self.handle.queue_time_limit();
        if requested != self.applied_limit {
            self.applied_limit = controller.set_queue_time_limit(now, requested);
            self.settled_at = None;
        }
        if let Some((generation, windows)) = self
            .actions
            .as_ref()
            .and_then(|actions| actions.hold_windows_since(self.hold_generation))
        {
            controller.set_hold_windows(now, windows);
            self.hold_generation = Some(generation);
            self.settled_at = None;
        }
        if let Some(probes) = &self.probes {
            for cluster in probes.take_requests() {
                controller.create_probe_cluster(now, cluster);
                self.settled_at = None;
            }
        }
        controller
    }

    /// Every event is a chance to release what is due: the schedule depends only on the instants,
    /// so an extra poke never changes it, and a late one releases what waited.
    fn release_if_started(&mut self, now: Instant) {
        self.fetch_repair();
        if self.controller.is_some() {
            self.release(now);
        }
    }

    /// Stores `packet` in the slab: the controller queues its key.
    fn store(&mut self, packet: TaggedPacket) -> u32 {
        match self.free.pop() {
            Some(key) => {
                self.slab[key as usize] = Some(packet);
                key
            }
            None => {
                self.slab.push(Some(packet));
                (self.slab.len() - 1) as u32
            }
        }
    }

    /// Empties the slab slots of packets the controller dropped.
    fn forget(&mut self, keys: Vec<u32>) {
        for key in keys {
            if let Some(slot) = self.slab.get_mut(key as usize)
                && slot.take().is_some()
            {
                self.free.push(key);
            }
        }
    }

    /// The RTX SSRC bound for media SSRC `ssrc`.
    fn rtx_of(&self, ssrc: u32) -> Option<u32> {
        self.rtx_of
            .iter()
            .find(|(media, _)| *media == ssrc)
            .map(|(_, rtx)| *rtx)
    }

    /// Enqueues the repair packets waiting in the repair queue, each at the instant its block
    /// closed (or the pacer's latest instant, if later); whether there were any.
    fn fetch_repair(&mut self) -> bool {
        let Some(queue) = &self.repair else {
            return false;
        };
        let packets = queue.take();
        if packets.is_empty() {
            return false;
        }
        for mut packet in packets {
            if let Some(last) = self.last_now {
                packet.now = packet.now.max(last);
            }
            self.enqueue(packet);
        }
        true
    }

    /// Puts an RTP packet in the controller's queue (dropping what a key frame flushes).
    fn enqueue(&mut self, msg: TaggedPacket) {
        let Packet::Rtp(rtp) = &msg.message.packet else {
            self.write_queue.push_back(msg);
            return;
        };
        let kind = self.classify(&msg.message, rtp);
        let size = rtp.marshal_size() as u64;
        let ssrc = rtp.header.ssrc;
        let frame = match self.frame_info {
            Some(read) if kind == PacketKind::Video => read(rtp),
            _ => FrameInfo::default(),
        };
        let rtx = self.rtx_of(ssrc);
        let now = msg.now;
        let key = self.store(msg);
        let flushed = self
            .controller_at(now)
            .enqueue_frame_packet(now, ssrc, kind, size, key, frame, rtx);
        self.forget(flushed);
        self.settled_at = None;
    }

    /// Queues again the copies whose duplicate window has ended by `now`, as retransmissions:
    /// they repair what the window lost, go ahead of new video as a NACKed packet would, and
    /// are never copied again.
    fn queue_due_duplicates(&mut self, now: Instant) {
        while self.duplicates.front().is_some_and(|(end, _)| *end <= now) {
            let Some((_, packet)) = self.duplicates.pop_front() else {
                break;
            };
            let Packet::Rtp(rtp) = &packet.message.packet else {
                continue;
            };
            let (ssrc, size) = (rtp.header.ssrc, rtp.marshal_size() as u64);
            let rtx = self.rtx_of(ssrc);
            let key = self.store(packet);
            let flushed = self.controller_at(now).enqueue_frame_packet(
                now,
                ssrc,
                PacketKind::Retransmission,
                size,
                key,
                FrameInfo::default(),
                rtx,
            );
            self.forget(flushed);
            self.settled_at = None;
        }
    }

    /// Releases everything that may leave at `now` and publishes stats when due: the release
    /// loop, which hands each released packet to [`Self::send_released`] and, when no media may
    /// leave, sends padding or a keep-alive ([`Self::send_padding`]).
    fn release(&mut self, now: Instant) {
        self.controller_at(now);
        self.queue_due_duplicates(now);
        // Acknowledgements reach the window outside the pacer: a change of the congested state
        // is news even at an instant already settled.
        if let (Some(cwnd), Some(controller)) = (&self.cwnd, &self.controller)
            && controller.is_congested() != cwnd.congested()
        {
            self.settled_at = None;
        }
        if self.settled_at == Some(now) {
            return;
        }
        self.settled_at = Some(now);
        let Some(mut controller) = self.controller.take() else {
            return;
        };
        loop {
            if let Some(cwnd) = &self.cwnd {
                controller.set_congested(now, cwnd.congested());
            }
            if let Some(released) = controller.poll_send(now) {
                self.send_released(now, released);
            } else if !self.send_padding(now, &mut controller) {
                break;
            }
        }
        self.publish_stats(now, &controller);
        self.controller = Some(controller);
    }

    /// A packet the controller released: out to the wire, with the steps a release takes (the
    /// duplicate action's copy, the RTP timestamp and the media padding re-sends, the congestion
    /// window's count, the probe's record).
    fn send_released(&mut self, now: Instant, released: Released<u32>) {
        let key = released.payload;
        // Every key the controller holds was filled by `handle_write` and is emptied only here,
        // so the slot is always occupied; an empty one would be skipped, not a panic.
        let Some(mut packet) = self.slab.get_mut(key as usize).and_then(Option::take) else {
            return;
        };
        self.free.push(key);
        packet.now = released.released_at;
        if released.kind == PacketKind::Video {
            self.copy_for_duplicate(&packet, released.released_at);
        }
        if let Packet::Rtp(rtp) = &packet.message.packet {
            self.last_timestamp = rtp.header.timestamp;
            if self.pads_with(rtp, &packet.message) {
                self.last_media = Some(rtp.clone());
            }
            if let Some(cwnd) = &self.cwnd {
                cwnd.on_sent(
                    now,
                    rtp.header.ssrc,
                    rtp.header.sequence_number,
                    released.size_bytes,
                );
            }
            if let (Some(cluster), Some(probes)) = (released.probe_cluster, &self.probes) {
                probes.record_probe_packet(
                    now,
                    rtp.header.ssrc,
                    rtp.header.sequence_number,
                    cluster,
                );
            }
        }
        self.write_queue.push_back(packet);
    }

    /// The duplicate action: a video packet released inside a duplicate window is copied, to
    /// be queued again as a retransmission when the window ends
    /// ([`Self::queue_due_duplicates`]).
    fn copy_for_duplicate(&mut self, packet: &TaggedPacket, released_at: Instant) {
        if let Some(end) = self
            .actions
            .as_ref()
            .and_then(|actions| actions.window_end(Action::Duplicate, released_at))
        {
            self.duplicates.push_back((
                end,
                TaggedPacket {
                    now: packet.now,
                    transport: packet.transport,
                    message: packet.message.clone(),
                },
            ));
        }
    }

    /// Whether `rtp` is what RTX padding re-sends: an original media packet of at least 50 bytes
    /// of the stream whose RTX stream carries the padding (libwebrtc `RTPSender::GeneratePadding`).
    fn pads_with(
        &self,
        rtp: &rtc_rtp::packet::Packet,
        message: &rtc_interceptor::AttributedPacket,
    ) -> bool {
        self.rtx_padding.is_some()
            && rtp.payload.len() >= MIN_PAYLOAD_PADDING_BYTES
            && !rtp.header.padding
            && !message.has(&Attribute::Retransmission)
            && self.rtx_of.iter().any(|&(media, rtx)| {
                media == rtp.header.ssrc && Some(rtx) == self.config.padding_ssrc
            })
    }

    /// The next padding sequence number: the RTX stream's shared counter, or the padding
    /// stream's own.
    fn next_padding_sequence(&mut self) -> u16 {
        match &self.rtx_padding {
            Some(counter) => counter.take(),
            None => {
                let sequence_number = self.padding_sequence;
                self.padding_sequence = self.padding_sequence.wrapping_add(1);
                sequence_number
            }
        }
    }

    /// When no media may leave: a padding packet if the controller asks for one (probes, or the
    /// padding that fills a probe), else the congestion window's keep-alive if one is due.
    /// Returns whether a padding packet left (the release loop goes on); a keep-alive ends it.
    fn send_padding(&mut self, now: Instant, controller: &mut PacingController<u32>) -> bool {
        let Some(ssrc) = self.config.padding_ssrc else {
            return false;
        };
        let payload_type = self.config.padding_payload_type;
        let Some(padding) = controller.poll_padding(now) else {
            if let Some(keepalive) = controller.poll_keepalive(now) {
                let sequence_number = self.next_padding_sequence();
                let size = if self.rtx_padding.is_some() {
                    0
                } else {
                    keepalive.size_bytes
                };
                let packet = padding_packet(
                    keepalive.released_at,
                    ssrc,
                    payload_type,
                    sequence_number,
                    self.last_timestamp,
                    size,
                );
                self.send_padding_packet(now, ssrc, sequence_number, packet);
            }
            return false;
        };
        let sequence_number = self.next_padding_sequence();
        if let Some(probes) = &self.probes {
            probes.record_probe_packet(now, ssrc, sequence_number, padding.probe_cluster);
        }
        let packet = match (&self.rtx_padding, &self.last_media) {
            (Some(_), Some(media)) => rtx_payload_padding(
                padding.released_at,
                media,
                ssrc,
                payload_type,
                sequence_number,
            ),
            (Some(_), None) => padding_packet(
                padding.released_at,
                ssrc,
                payload_type,
                sequence_number,
                self.last_timestamp,
                0,
            ),
            (None, _) => padding_packet(
                padding.released_at,
                ssrc,
                payload_type,
                sequence_number,
                self.last_timestamp,
                padding.size_bytes,
            ),
        };
        self.send_padding_packet(now, ssrc, sequence_number, packet);
        true
    }

    /// A padding or keep-alive packet out to the wire, counted by the congestion window.
    fn send_padding_packet(
        &mut self,
        now: Instant,
        ssrc: u32,
        sequence_number: u16,
        packet: TaggedPacket,
    ) {
        if let (Some(cwnd), Packet::Rtp(rtp)) = (&self.cwnd, &packet.message.packet) {
            cwnd.on_sent(now, ssrc, sequence_number, rtp.marshal_size() as u64);
        }
        self.write_queue.push_back(packet);
    }

    /// Publishes the controller's stats every [`STATS_INTERVAL`], and at once when the queue has
    /// just emptied.
    fn publish_stats(&mut self, now: Instant, controller: &PacingController<u32>) {
        // `published_empty` means: no backlog was left waiting at the end of the last release.
        let empty = controller.is_empty();
        let due = self
            .last_published
            .is_none_or(|last| now >= last + STATS_INTERVAL)
            || (empty && !self.published_empty);
        if due {
            self.handle.publish(controller.stats(now));
            self.last_published = Some(now);
        }
        self.published_empty = empty;
    }
}

/// libwebrtc's `kMinPayloadPaddingBytes`: a media packet shorter than this is not worth re-sending
/// as padding (rtp_sender.cc).
const MIN_PAYLOAD_PADDING_BYTES: usize = 50;

/// `media` re-sent as RTX payload padding on `ssrc` (RFC 4588 section 4: the original sequence
/// number, then the original payload; the original timestamp and marker).
fn rtx_payload_padding(
    now: Instant,
    media: &rtc_rtp::packet::Packet,
    ssrc: u32,
    payload_type: u8,
    sequence_number: u16,
) -> TaggedPacket {
    let mut payload = Vec::with_capacity(2 + media.payload.len());
    payload.extend_from_slice(&media.header.sequence_number.to_be_bytes());
    payload.extend_from_slice(&media.payload);
    TaggedPacket {
        now,
        transport: rtc_shared::TransportContext::default(),
        message: rtc_interceptor::AttributedPacket::new(Packet::Rtp(rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                marker: media.header.marker,
                payload_type,
                sequence_number,
                timestamp: media.header.timestamp,
                ssrc,
                ..Default::default()
            },
            payload: payload.into(),
        })),
    }
}

/// A padding packet of about `size` bytes on the wire (before the transport-wide-cc extension
/// the TWCC sender adds): the RTP padding bit set and a filler payload of zeros, because
/// rtc-rtp marshals the padding field only up to the next 4-byte boundary. The receiver
/// discards it by its SSRC and payload type.
fn padding_packet(
    now: Instant,
    ssrc: u32,
    payload_type: u8,
    sequence_number: u16,
    timestamp: u32,
    size: u64,
) -> TaggedPacket {
    // 12-byte header, then a multiple of 4 of filler, then the 4 bytes of padding rtc-rtp adds
    // to an aligned payload.
    let filler = usize::try_from(size.saturating_sub(16) / 4 * 4).unwrap_or(0);
    TaggedPacket {
        now,
        transport: rtc_shared::TransportContext::default(),
        message: rtc_interceptor::AttributedPacket::new(Packet::Rtp(rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                padding: true,
                payload_type,
                sequence_number,
                timestamp,
                ssrc,
                ..Default::default()
            },
            payload: vec![0; filler].into(),
        })),
    }
}

impl Protocol<TaggedPacket, TaggedPacket, ()> for HandoverAwarePacer {
    type Rout = TaggedPacket;
    type Wout = TaggedPacket;
    type Eout = ();
    type Error = Error;
    type Time = Instant;

    fn handle_read(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        let target = msg
            .message
            .get(&Attribute::TargetBitrateChanged {
                bits_per_second: 0.0,
            })
            .and_then(|attribute| match attribute {
                Attribute::TargetBitrateChanged { bits_per_second } => Some(*bits_per_second),
                _ => None,
            });
        let now = msg.now;
        if let Some(bps) = target {
            let bps = if bps.is_finite() {
                bps.max(0.0) as u64
            } else {
                0
            };
            self.controller_at(now).set_target_bitrate(now, bps);
            self.settled_at = None;
        }
        self.release_if_started(now);
        self.read_queue.push_back(msg);
        Ok(())
    }

    fn poll_read(&mut self) -> Option<Self::Rout> {
        self.read_queue.pop_front()
    }

    fn handle_write(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        let now = msg.now;
        if !matches!(msg.message.packet, Packet::Rtp(_)) {
            self.write_queue.push_back(msg);
            self.release_if_started(now);
            return Ok(());
        }
        self.fetch_repair();
        self.enqueue(msg);
        self.release(now);
        Ok(())
    }

    fn poll_write(&mut self) -> Option<Self::Wout> {
        // The chain polls again after every walk: repair packets made below during the last one
        // are enqueued at their block's instant and leave now if the budget allows.
        if self.write_queue.is_empty()
            && self.fetch_repair()
            && let Some(now) = self.last_now
        {
            self.release(now);
        }
        self.write_queue.pop_front()
    }

    fn handle_timeout(&mut self, now: Instant) -> Result<(), Self::Error> {
        self.release_if_started(now);
        Ok(())
    }

    fn poll_timeout(&mut self) -> Option<Self::Time> {
        self.fetch_repair();
        let duplicates_due = self.duplicates.front().map(|(end, _)| *end);
        let Some(next) = self.controller.as_ref()?.next_send_time() else {
            return duplicates_due;
        };
        let stats_wake = self.last_now.map(|last| last + STATS_INTERVAL);
        let next = stats_wake.map_or(next, |wake| next.min(wake));
        Some(duplicates_due.map_or(next, |due| next.min(due)))
    }
}

impl Interceptor for HandoverAwarePacer {
    fn bind_local_stream(&mut self, info: &StreamInfo) {
        let kind = if info.mime_type.to_ascii_lowercase().starts_with("audio/") {
            PacketKind::Audio
        } else {
            PacketKind::Video
        };
        self.kinds.retain(|(s, _)| *s != info.ssrc);
        self.kinds.push((info.ssrc, kind));
        if let Some(rtx) = info.ssrc_rtx {
            self.kinds.retain(|(s, _)| *s != rtx);
            self.kinds.push((rtx, PacketKind::Retransmission));
            self.rtx_of.retain(|(media, _)| *media != info.ssrc);
            self.rtx_of.push((info.ssrc, rtx));
        }
        if let Some(fec) = info.ssrc_fec {
            self.kinds.retain(|(s, _)| *s != fec);
            self.kinds.push((fec, PacketKind::Fec));
        }
    }

    fn unbind_local_stream(&mut self, info: &StreamInfo) {
        for ssrc in [Some(info.ssrc), info.ssrc_rtx, info.ssrc_fec]
            .into_iter()
            .flatten()
        {
            self.kinds.retain(|(s, _)| *s != ssrc);
        }
        self.rtx_of.retain(|(media, _)| *media != info.ssrc);
    }

    fn bind_remote_stream(&mut self, _info: &StreamInfo) {}

    fn unbind_remote_stream(&mut self, _info: &StreamInfo) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtc_interceptor::AttributedPacket;
    use rtc_shared::TransportContext;

    const VIDEO: u32 = 10;
    const VIDEO_RTX: u32 = 11;
    const AUDIO: u32 = 20;

    fn rtp(now: Instant, ssrc: u32, sequence_number: u16, payload: usize) -> TaggedPacket {
        TaggedPacket {
            now,
            transport: TransportContext::default(),
            message: AttributedPacket::new(Packet::Rtp(rtc_rtp::Packet {
                header: rtc_rtp::Header {
                    version: 2,
                    ssrc,
                    sequence_number,
                    ..Default::default()
                },
                payload: vec![0; payload].into(),
            })),
        }
    }

    fn pacer(bps: u64) -> (HandoverAwarePacer, PacerHandle) {
        let (mut pacer, handle) = HandoverAwarePacer::builder(PacingConfig {
            pacing_factor: 1.0,
            initial_target_bitrate_bps: bps,
            queue_time_limit: Duration::from_secs(10),
            ..PacingConfig::default()
        })
        .build();
        pacer.bind_local_stream(&StreamInfo {
            ssrc: VIDEO,
            ssrc_rtx: Some(VIDEO_RTX),
            mime_type: "video/VP8".into(),
            ..Default::default()
        });
        pacer.bind_local_stream(&StreamInfo {
            ssrc: AUDIO,
            mime_type: "audio/opus".into(),
            ..Default::default()
        });
        (pacer, handle)
    }

    fn drain(pacer: &mut HandoverAwarePacer) -> Vec<TaggedPacket> {
        std::iter::from_fn(|| pacer.poll_write()).collect()
    }

    fn sequence(packet: &TaggedPacket) -> u16 {
        match &packet.message.packet {
            Packet::Rtp(rtp) => rtp.header.sequence_number,
            _ => u16::MAX,
        }
    }

    #[test]
    fn the_handle_starts_with_the_configured_target_pacing_rate_and_limit() {
        let (_, handle) = HandoverAwarePacer::builder(PacingConfig::default()).build();
        let stats = handle.stats();
        assert_eq!(stats.at, None);
        assert_eq!(stats.target_bitrate_bps, 300_000);
        assert_eq!(stats.pacing_rate_bps, 330_000);
        assert_eq!(stats.queue_time_limit, Duration::from_secs(2));
        assert_eq!(handle.queue_time_limit(), Duration::from_secs(2));
    }

    #[test]
    fn rtp_leaves_at_the_pacing_rate_carrying_its_release_instant_and_rtcp_is_not_paced() {
        let (mut pacer, handle) = pacer(1_000_000);
        let t0 = Instant::now();
        // 988-byte payloads + 12-byte header = 1000 bytes: five fit the 40-ms burst at 1 Mbit/s.
        for seq in 0..8 {
            pacer.handle_write(rtp(t0, VIDEO, seq, 988)).unwrap();
        }
        let first = drain(&mut pacer);
        assert_eq!(
            first.iter().map(sequence).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4]
        );
        assert!(first.iter().all(|p| p.now == t0));

        let rtcp = TaggedPacket {
            now: t0 + Duration::from_millis(1),
            transport: TransportContext::default(),
            message: AttributedPacket::new(Packet::Rtcp(vec![Box::new(
                rtc_rtcp::payload_feedbacks::picture_loss_indication::PictureLossIndication::default(),
            )])),
        };
        pacer.handle_write(rtcp).unwrap();
        let poked = drain(&mut pacer);
        assert!(
            matches!(poked[0].message.packet, Packet::Rtcp(_)),
            "RTCP passes at once"
        );
        // The RTCP event is also a chance to release what fell due at 1 ns.
        assert_eq!(poked.len(), 2);
        assert_eq!(
            (sequence(&poked[1]), poked[1].now),
            (5, t0 + Duration::from_millis(1))
        );

        // From then on one 8-ms packet each time the debt dips under the 40-ms window.
        let mut released = Vec::new();
        while let Some(due) = pacer.poll_timeout() {
            pacer.handle_timeout(due).unwrap();
            released.extend(
                drain(&mut pacer)
                    .into_iter()
                    .map(|p| (sequence(&p), p.now - t0)),
            );
        }
        let ns = Duration::from_nanos;
        let ms = Duration::from_millis;
        assert_eq!(released, vec![(6, ms(8) + ns(1)), (7, ms(16) + ns(1))]);
        assert_eq!(pacer.poll_timeout(), None, "idle means no wake-up");
        let stats = handle.stats();
        assert_eq!((stats.packets_sent, stats.queued_packets), (8, 0));
        assert_eq!(stats.at, Some(t0 + ms(16) + ns(1)));
    }

    #[test]
    fn audio_and_retransmissions_overtake_queued_video() {
        let (mut pacer, _) = pacer(1_000_000);
        let t0 = Instant::now();
        for seq in 0..10 {
            pacer.handle_write(rtp(t0, VIDEO, seq, 988)).unwrap();
        }
        drain(&mut pacer);
        let t = t0 + Duration::from_millis(2);
        pacer.handle_write(rtp(t, AUDIO, 100, 160)).unwrap();
        let released = drain(&mut pacer);
        assert_eq!(sequence(&released[0]), 100, "audio first");
        assert_eq!(released[0].now, t);

        let mut resent = rtp(t, VIDEO, 3, 988);
        resent.message.add(Attribute::Retransmission);
        pacer.handle_write(resent).unwrap();
        pacer.handle_write(rtp(t, VIDEO_RTX, 200, 988)).unwrap();
        pacer
            .handle_timeout(t0 + Duration::from_millis(60))
            .unwrap();
        let order: Vec<u16> = drain(&mut pacer).iter().map(sequence).collect();
        assert_eq!(
            &order[..2],
            &[3, 200],
            "retransmissions before the waiting video"
        );
    }

    #[test]
    fn a_limit_set_through_the_handle_applies_at_the_next_event() {
        let (mut pacer, handle) = pacer(1_000_000);
        let t0 = Instant::now();
        for seq in 0..250 {
            pacer.handle_write(rtp(t0, VIDEO, seq, 988)).unwrap();
        }
        drain(&mut pacer);
        assert_eq!(
            handle.set_queue_time_limit(Duration::from_millis(500)),
            Duration::from_millis(500)
        );
        let t = t0 + Duration::from_millis(25);
        pacer.handle_timeout(t).unwrap();
        let stats = handle.stats();
        assert_eq!(stats.at, Some(t));
        assert_eq!(stats.queue_time_limit, Duration::from_millis(500));
        // The drain rule, from the published figures: rate x time left covers the queue.
        let left = Duration::from_millis(500) - stats.average_queue_time;
        assert!(stats.adjusted_rate_bps > 3_500_000, "{stats:?}");
        assert!(
            u128::from(stats.adjusted_rate_bps) * left.as_nanos()
                >= u128::from(stats.queued_bytes) * 8 * 1_000_000_000
        );
    }

    #[test]
    fn a_target_bitrate_attribute_on_feedback_sets_the_pacing_rate() {
        let (mut pacer, handle) = pacer(1_000_000);
        let t0 = Instant::now();
        let feedback = TaggedPacket {
            now: t0,
            transport: TransportContext::default(),
            message: AttributedPacket::new(Packet::Rtcp(vec![])).with(
                Attribute::TargetBitrateChanged {
                    bits_per_second: 2_500_000.0,
                },
            ),
        };
        pacer.handle_read(feedback).unwrap();
        assert!(pacer.poll_read().is_some(), "the feedback carries on");
        pacer.handle_timeout(t0).unwrap();
        assert_eq!(handle.stats().target_bitrate_bps, 2_500_000);
        assert_eq!(handle.stats().pacing_rate_bps, 2_500_000);
    }

    #[test]
    fn a_probe_cluster_short_of_media_is_filled_with_numbered_padding_on_the_padding_ssrc() {
        const PADDING: u32 = 99;
        let channel = ProbeChannel::new();
        let (mut pacer, _) = HandoverAwarePacer::builder(PacingConfig {
            initial_target_bitrate_bps: 300_000,
            padding_ssrc: Some(PADDING),
            padding_payload_type: 127,
            ..PacingConfig::default()
        })
        .probe_channel(channel.clone())
        .build();
        channel.request(crate::pacing::ProbeClusterConfig::new(1, 1_800_000));
        let t0 = Instant::now();
        // 988 + 12 = 1000 bytes: the cluster starts, this is its first probe.
        pacer.handle_write(rtp(t0, VIDEO, 7, 988)).unwrap();
        let mut out = drain(&mut pacer);
        while let Some(due) = pacer.poll_timeout() {
            if due > t0 + Duration::from_millis(100) {
                break;
            }
            pacer.handle_timeout(due).unwrap();
            out.extend(drain(&mut pacer));
        }
        let seen: Vec<(u32, u16, bool)> = out
            .iter()
            .filter_map(|p| match &p.message.packet {
                Packet::Rtp(rtp) => Some((
                    rtp.header.ssrc,
                    rtp.header.sequence_number,
                    rtp.header.padding,
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            vec![
                (VIDEO, 7, false),
                (PADDING, 0, true),
                (PADDING, 1, true),
                (PADDING, 2, true),
                (PADDING, 3, true),
            ],
            seen
        );
        // 900-byte padding packets: 12 + 884 + 4 = 900 bytes on the wire.
        if let Packet::Rtp(rtp) = &out[1].message.packet {
            assert_eq!(900, rtp.marshal_size());
            assert_eq!(127, rtp.header.payload_type);
        }
        // Every probe packet is recorded for the estimator, once.
        assert_eq!(Some(1), channel.take_probe_cluster(VIDEO, 7));
        assert_eq!(Some(1), channel.take_probe_cluster(PADDING, 3));
        assert_eq!(3, channel.pending_records());
    }
}

//! The webrtc-rs interceptor: a [`PacingController`] at `Slot::Pacer`.
//!
//! It replaces the stock `PacerInterceptor` (a FIFO token bucket at 1.0 x the target) after
//! `configure_congestion_control(...)` has placed that one, following the checklist of
//! reference 3.7: the target bitrate is read from `Attribute::TargetBitrateChanged` on the read
//! leg, RTCP passes unpaced, RTP is classified by stream and attribute, and every released packet
//! carries its release instant as `now`, so the send history below it charges pacer delay to the
//! pacer and not to the network.

use crate::config::PacingConfig;
use crate::controller::PacingController;
use crate::handle::PacerHandle;
use crate::packet::PacketKind;
use rtc_interceptor::{Attribute, Interceptor, Packet, StreamInfo, TaggedPacket};
use rtc_shared::error::Error;
use rtc_shared::marshal::MarshalSize;
use sansio::Protocol;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// While packets wait, the pacer wakes at least this often to pick up a limit set through the
/// handle and to publish stats: libwebrtc samples its pacer queue for the encoder every
/// `kPacerQueueUpdateInterval` = 25 ms (reference 1.2).
pub const STATS_INTERVAL: Duration = Duration::from_millis(25);

/// Builds a [`HandoverAwarePacer`] and its [`PacerHandle`].
#[derive(Debug, Clone)]
pub struct HandoverAwarePacerBuilder {
    config: PacingConfig,
}

impl HandoverAwarePacerBuilder {
    /// Builds the interceptor and the handle that reaches into it once it is inside a chain.
    pub fn build(self) -> (HandoverAwarePacer, PacerHandle) {
        let handle = PacerHandle::new(self.config.queue_time_limit);
        let pacer = HandoverAwarePacer {
            applied_limit: handle.queue_time_limit(),
            handle: handle.clone(),
            config: self.config,
            controller: None,
            kinds: HashMap::new(),
            read_queue: VecDeque::new(),
            write_queue: VecDeque::new(),
            last_now: None,
            last_published: None,
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
    controller: Option<PacingController<TaggedPacket>>,
    /// What each bound local SSRC carries.
    kinds: HashMap<u32, PacketKind>,
    read_queue: VecDeque<TaggedPacket>,
    /// RTCP as it arrives and RTP as it is released, in that order of events.
    write_queue: VecDeque<TaggedPacket>,
    last_now: Option<Instant>,
    last_published: Option<Instant>,
}

impl HandoverAwarePacer {
    /// A builder with `config`.
    pub fn builder(config: PacingConfig) -> HandoverAwarePacerBuilder {
        HandoverAwarePacerBuilder { config }
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
            .get(&rtp.header.ssrc)
            .copied()
            .unwrap_or(PacketKind::Video)
    }

    /// The controller, created at the first instant seen, with any limit set through the handle
    /// applied as of `now`.
    fn controller_at(&mut self, now: Instant) -> &mut PacingController<TaggedPacket> {
        self.last_now = Some(self.last_now.map_or(now, |last| last.max(now)));
        let controller = self
            .controller
            .get_or_insert_with(|| PacingController::new(self.config.clone(), now));
        let requested = self.handle.queue_time_limit();
        if requested != self.applied_limit {
            self.applied_limit = controller.set_queue_time_limit(now, requested);
        }
        controller
    }

    /// Releases everything that may leave at `now` and publishes stats when due.
    fn release(&mut self, now: Instant) {
        self.controller_at(now);
        let Self {
            controller: Some(controller),
            write_queue,
            handle,
            last_published,
            ..
        } = self
        else {
            return;
        };
        while let Some(released) = controller.poll_send(now) {
            let mut packet = released.payload;
            packet.now = released.released_at;
            write_queue.push_back(packet);
        }
        let due =
            last_published.is_none_or(|last| now >= last + STATS_INTERVAL || controller.is_empty());
        if due {
            handle.publish(controller.stats(now));
            *last_published = Some(now);
        }
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
        if let Some(bps) = target {
            let now = msg.now;
            let bps = if bps.is_finite() {
                bps.max(0.0) as u64
            } else {
                0
            };
            self.controller_at(now).set_target_bitrate(now, bps);
            self.release(now);
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
        let kind = self.classify(&msg.message, rtp);
        let size = rtp.marshal_size() as u64;
        let ssrc = rtp.header.ssrc;
        let now = msg.now;
        self.controller_at(now).enqueue(now, ssrc, kind, size, msg);
        self.release(now);
        Ok(())
    }

    fn poll_write(&mut self) -> Option<Self::Wout> {
        self.write_queue.pop_front()
    }

    fn handle_timeout(&mut self, now: Instant) -> Result<(), Self::Error> {
        if self.controller.is_some() {
            self.release(now);
        }
        Ok(())
    }

    fn poll_timeout(&mut self) -> Option<Self::Time> {
        let next = self.controller.as_ref()?.next_send_time()?;
        let stats_wake = self.last_now.map(|last| last + STATS_INTERVAL);
        Some(stats_wake.map_or(next, |wake| next.min(wake)))
    }
}

impl Interceptor for HandoverAwarePacer {
    fn bind_local_stream(&mut self, info: &StreamInfo) {
        let kind = if info.mime_type.to_ascii_lowercase().starts_with("audio/") {
            PacketKind::Audio
        } else {
            PacketKind::Video
        };
        self.kinds.insert(info.ssrc, kind);
        if let Some(rtx) = info.ssrc_rtx {
            self.kinds.insert(rtx, PacketKind::Retransmission);
        }
        if let Some(fec) = info.ssrc_fec {
            self.kinds.insert(fec, PacketKind::Fec);
        }
    }

    fn unbind_local_stream(&mut self, info: &StreamInfo) {
        for ssrc in [Some(info.ssrc), info.ssrc_rtx, info.ssrc_fec]
            .into_iter()
            .flatten()
        {
            self.kinds.remove(&ssrc);
        }
    }

    fn bind_remote_stream(&mut self, _info: &StreamInfo) {}

    fn unbind_remote_stream(&mut self, _info: &StreamInfo) {}
}

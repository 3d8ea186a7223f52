//! Our receiver on the packets a browser receives: the same call judged by Chromium and by this
//! project's receiver side by side (docs/architecture.md, "The receiver as Chromium runs it").
//!
//! In a relayed call to a browser the relay ([`super::relay`]) delivers SRTP: the RTP header
//! (SSRC, sequence number) is in the clear, the payload is not. The sender keeps what it sent in
//! the clear: the [`SentLog`], filled by the tap past the last interceptor of the sender's chain
//! ([`super::peer::PliTap`]), holds each recent RTP packet by SSRC and sequence number. For each
//! datagram the relay delivers to the browser, the [`ShadowReceiver`] looks up the packet it
//! carried and passes it, at the instant of delivery, through the receive chain of this
//! project's own calls: the RTX receiver ([`RtxReceiver`]), the FlexFEC receiver
//! ([`FecReceiver`]), the VP8 framer ([`Vp8Framer`]) and the media [`Receiver`] with its jitter
//! buffer and playout timing, whose rendered frames go to a [`QoeMeter`]. So both receivers see
//! exactly the same packets at the same instants; only their rules differ.
//!
//! The shadow is receive-only, as the browser is: it sends no NACK or PLI (the browser's own
//! feedback drives the sender) and knows no RTCP round-trip time.
//!
//! Its mean playout delay is defined as the browser's `jitterBufferDelay /
//! jitterBufferEmittedCount` (W3C webrtc-stats: from the first packet of a frame received to the
//! frame leaving the jitter buffer for the decoder): render instant less the render delay, less
//! the arrival of the frame's first packet.

use super::relay::rtp_header;
use crate::call::streams::{PLAYOUT_DELAY_URI, VIDEO_SSRC, playout_minimum};
use crate::fec::FecReceiver;
use crate::link::Time;
use crate::media::playout::{CompletionModel, PlayoutConfig};
use crate::media::qoe::{QoeMeter, QoeReport};
use crate::media::receiver::{Playout, Receiver, ReceiverConfig};
use crate::media::vp8::descriptor;
use crate::media::vp8::framer::{FramerStats, Vp8Framer};
use crate::nack::RtxReceiver;
use rtc_interceptor::{AttributedPacket, Interceptor, Packet, Slot, StreamInfo, TaggedPacket};
use rtc_shared::TransportContext;
use sansio::Protocol;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Packets the log keeps, oldest dropped first.
///
/// Chosen: 16 384, about 10 s of a 4 Mbit/s call in 1200-byte packets, far longer than any
/// packet spends in the relay's link queue.
const SENT_LOG_PACKETS: usize = 16_384;

/// Frames whose first-packet arrival is remembered until they render.
///
/// Chosen: 1 024 frames, 34 s at 30 fps, beyond the receiver's own frame window.
const FIRST_ARRIVALS: usize = 1_024;

#[derive(Default)]
struct SentPackets {
    active: bool,
    packets: HashMap<(u32, u16), rtc_rtp::Packet>,
    order: VecDeque<(u32, u16)>,
    video: Option<StreamInfo>,
}

/// The sender's recent RTP packets in the clear, by SSRC and sequence number, and the video
/// stream's description (its RTX and FEC SSRCs, its header extensions). It records packets only
/// once [`SentLog::activate`]d (a call without a shadow keeps nothing).
#[derive(Clone, Default)]
pub struct SentLog(Arc<Mutex<SentPackets>>);

impl SentLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, SentPackets> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts recording.
    pub fn activate(&self) {
        self.lock().active = true;
    }

    /// Records a packet as sent (a copy of a sequence number already held replaces it).
    pub fn record(&self, packet: &rtc_rtp::Packet) {
        let key = (packet.header.ssrc, packet.header.sequence_number);
        let mut log = self.lock();
        if !log.active {
            return;
        }
        if log.packets.insert(key, packet.clone()).is_none() {
            log.order.push_back(key);
        }
        while log.order.len() > SENT_LOG_PACKETS {
            if let Some(old) = log.order.pop_front() {
                log.packets.remove(&old);
            }
        }
    }

    /// Records the description of a stream the sender bound; the video stream's is kept.
    pub fn bind(&self, info: &StreamInfo) {
        if info.ssrc == VIDEO_SSRC {
            self.lock().video = Some(info.clone());
        }
    }

    fn get(&self, ssrc: u32, sequence: u16) -> Option<rtc_rtp::Packet> {
        self.lock().packets.get(&(ssrc, sequence)).cloned()
    }

    fn video(&self) -> Option<StreamInfo> {
        self.lock().video.clone()
    }
}

/// Where [`SentTap`] sits on the sender: nearer the wire than every other slot (the nearest,
/// `Slot::CongestionControl`, is 1000), so it sees each packet as it leaves, retransmissions,
/// FEC and padding included, with its final sequence number.
pub const SENT_TAP_SLOT: Slot = Slot::Custom(500);

/// Hands every RTP packet the sender writes to a [`SentLog`] and passes everything on.
pub struct SentTap {
    log: SentLog,
    reads: VecDeque<TaggedPacket>,
    writes: VecDeque<TaggedPacket>,
}

impl SentTap {
    /// A tap writing to `log`.
    pub fn new(log: SentLog) -> Self {
        Self {
            log,
            reads: VecDeque::new(),
            writes: VecDeque::new(),
        }
    }
}

impl Protocol<TaggedPacket, TaggedPacket, ()> for SentTap {
    type Rout = TaggedPacket;
    type Wout = TaggedPacket;
    type Eout = ();
    type Error = rtc_shared::error::Error;
    type Time = Instant;

    fn handle_read(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        self.reads.push_back(msg);
        Ok(())
    }

    fn poll_read(&mut self) -> Option<Self::Rout> {
        self.reads.pop_front()
    }

    fn handle_write(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        if let Packet::Rtp(rtp) = &msg.message.packet {
            self.log.record(rtp);
        }
        self.writes.push_back(msg);
        Ok(())
    }

    fn poll_write(&mut self) -> Option<Self::Wout> {
        self.writes.pop_front()
    }
}

impl Interceptor for SentTap {
    fn bind_local_stream(&mut self, info: &StreamInfo) {
        self.log.bind(info);
    }

    fn unbind_local_stream(&mut self, _info: &StreamInfo) {}

    fn bind_remote_stream(&mut self, _info: &StreamInfo) {}

    fn unbind_remote_stream(&mut self, _info: &StreamInfo) {}
}

/// What the shadow receiver measured over the call.
#[derive(Debug, Clone)]
pub struct ShadowSummary {
    /// The QoE of the frames it rendered (freezes, stalls, delays, bitrate).
    pub qoe: QoeReport,
    /// Mean time from a frame's first packet to its leaving the jitter buffer, ms (the
    /// browser's `jitterBufferDelay / jitterBufferEmittedCount`).
    pub mean_playout_delay_ms: f64,
    /// Frames it rendered with a known first-packet arrival (the mean's count).
    pub emitted: u64,
    /// Datagrams delivered to the browser that carried RTP the log held.
    pub packets: u64,
    /// RTP datagrams delivered whose packet the log no longer (or never) held.
    pub unknown: u64,
    /// Frames that needed a retransmission.
    pub frames_retransmitted: u64,
    /// Frames given up as lost.
    pub frames_dropped: u64,
    /// Of those, frames passed over because a later frame decodes without them (lost
    /// discardable frames), without a key-frame request.
    pub frames_skipped: u64,
    /// What the VP8 framer counted (corrupted copies, frames held for their base frame).
    pub framer: FramerStats,
    /// How its receiver learned expected completion.
    pub completion: CompletionModel,
    /// The second shadow's, with another model on the same datagrams
    /// ([`ShadowReceiver::compared_with`]).
    pub compared: Option<Box<ShadowSummary>>,
}

/// The receive chain of this project's calls, fed with what the relay delivers to the browser
/// (see the module documentation).
pub struct ShadowReceiver {
    log: SentLog,
    epoch: Instant,
    bound: bool,
    playout_extension: Option<u8>,
    rtx: RtxReceiver,
    fec: FecReceiver,
    framer: Vp8Framer,
    receiver: Receiver,
    meter: QoeMeter,
    render_delay: Duration,
    first_arrival: BTreeMap<u16, Time>,
    delay_sum: Duration,
    emitted: u64,
    packets: u64,
    unknown: u64,
    completion: CompletionModel,
    compared: Option<Box<ShadowReceiver>>,
}

impl ShadowReceiver {
    /// A shadow reading `log`, with `epoch` as time zero, whose receiver learns expected
    /// completion by `completion`.
    pub fn new(log: SentLog, epoch: Instant, completion: CompletionModel) -> Self {
        let receiver = Receiver::new(ReceiverConfig {
            playout: Playout::JitterBuffer(PlayoutConfig {
                completion,
                ..PlayoutConfig::default()
            }),
            ..ReceiverConfig::default()
        });
        Self {
            log,
            epoch,
            bound: false,
            playout_extension: None,
            rtx: RtxReceiver::new(),
            fec: FecReceiver::new().0,
            framer: Vp8Framer::new(),
            receiver,
            meter: QoeMeter::new(),
            render_delay: PlayoutConfig::default().render_delay,
            first_arrival: BTreeMap::new(),
            delay_sum: Duration::ZERO,
            emitted: 0,
            packets: 0,
            unknown: 0,
            completion,
            compared: None,
        }
    }

    /// Also runs a second, independent shadow whose receiver learns expected completion by
    /// `completion`, on the same datagrams at the same instants: the two models compared on one
    /// call, beside the browser.
    pub fn compared_with(mut self, completion: CompletionModel) -> Self {
        self.compared = Some(Box::new(Self::new(
            self.log.clone(),
            self.epoch,
            completion,
        )));
        self
    }

    fn time(&self, at: Instant) -> Time {
        Time::from_instant(self.epoch, at)
    }

    fn bind(&mut self) {
        if self.bound {
            return;
        }
        let Some(info) = self.log.video() else {
            return;
        };
        self.rtx.bind_remote_stream(&info);
        self.fec.bind_remote_stream(&info);
        self.playout_extension = info
            .rtp_header_extensions
            .iter()
            .find(|e| e.uri == PLAYOUT_DELAY_URI)
            .and_then(|e| u8::try_from(e.id).ok());
        self.bound = true;
    }

    /// A datagram the relay delivered to the browser at `at` (STUN, DTLS and RTCP are ignored).
    pub fn on_delivered(&mut self, at: Instant, datagram: &[u8]) {
        if let Some(compared) = &mut self.compared {
            compared.on_delivered(at, datagram);
        }
        let Some((ssrc, sequence)) = rtp_header(datagram) else {
            return;
        };
        let Some(packet) = self.log.get(ssrc, sequence) else {
            self.unknown += 1;
            return;
        };
        self.packets += 1;
        self.bind();
        let message = TaggedPacket {
            now: at,
            transport: TransportContext::default(),
            message: AttributedPacket::new(Packet::Rtp(packet)),
        };
        let mut restored = Vec::new();
        if self.rtx.handle_read(message).is_ok() {
            while let Some(m) = self.rtx.poll_read() {
                restored.push(m);
            }
        }
        for message in restored {
            if self.fec.handle_read(message).is_err() {
                continue;
            }
            while let Some(m) = self.fec.poll_read() {
                if let Packet::Rtp(rtp) = &m.message.packet {
                    self.on_media(at, rtp);
                }
            }
        }
        self.drain();
    }

    fn on_media(&mut self, at: Instant, rtp: &rtc_rtp::Packet) {
        if rtp.header.ssrc != VIDEO_SSRC || rtp.payload.is_empty() {
            return;
        }
        let now = self.time(at);
        let playout = self
            .playout_extension
            .and_then(|id| playout_minimum(&rtp.header, id));
        if let Ok(d) = descriptor::parse(&rtp.payload)
            && let Some(picture) = d.picture_id
        {
            self.first_arrival.entry(picture).or_insert(now);
            while self.first_arrival.len() > FIRST_ARRIVALS {
                self.first_arrival.pop_first();
            }
        }
        let h = &rtp.header;
        self.framer.deliver(
            &mut self.receiver,
            now,
            (h.sequence_number, h.timestamp, h.marker),
            &rtp.payload,
            playout,
        );
    }

    /// When [`ShadowReceiver::handle_timeout`] is next due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let own = self
            .receiver
            .poll_timeout()
            .map(|t| t.to_instant(self.epoch));
        let compared = self.compared.as_ref().and_then(|c| c.poll_timeout());
        match (own, compared) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Declares losses and renders frames due at `at`.
    pub fn handle_timeout(&mut self, at: Instant) {
        if let Some(compared) = &mut self.compared {
            compared.handle_timeout(at);
        }
        self.receiver.handle_timeout(self.time(at));
        self.drain();
    }

    fn drain(&mut self) {
        while let Some(frame) = self.receiver.poll_rendered() {
            let picture = (frame.frame_id & 0x7FFF) as u16;
            let first = self
                .first_arrival
                .remove(&picture)
                .or_else(|| self.first_arrival.remove(&(picture & 0x7F)));
            if let Some(first) = first {
                let left = frame.rendered - self.render_delay;
                self.delay_sum += left.saturating_duration_since(first);
                self.emitted += 1;
            }
            self.meter.on_rendered(&frame);
        }
    }

    /// What it measured so far.
    pub fn summary(&self) -> ShadowSummary {
        let stats = self.receiver.stats();
        ShadowSummary {
            qoe: self.meter.total(),
            mean_playout_delay_ms: if self.emitted == 0 {
                0.0
            } else {
                self.delay_sum.as_secs_f64() * 1e3 / self.emitted as f64
            },
            emitted: self.emitted,
            packets: self.packets,
            unknown: self.unknown,
            frames_retransmitted: stats.frames_retransmitted,
            frames_dropped: stats.frames_dropped,
            frames_skipped: stats.frames_skipped,
            framer: self.framer.stats(),
            completion: self.completion,
            compared: self.compared.as_ref().map(|c| Box::new(c.summary())),
        }
    }
}

//! The send side: libwebrtc's packet history and resend rules (`rtp_packet_history.cc`,
//! `rtp_sender.cc`, reference PART 5) as a webrtc-rs interceptor for `Slot::NackResponder`.
//!
//! - Every RTP packet of a bound stream with generic NACK is kept as libwebrtc's
//!   `RtpPacketHistory::CullOldPackets` keeps it: at least `d` = max(1000 ms, 3 x RTT) after it
//!   last left the pacer (its first send or its latest retransmission: `MarkPacketAsSent`
//!   updates the send time), then until the history holds 600 packets or `3 d` have passed
//!   (`kPacketCullingDelayFactor`), at most 9600 packets; a packet still in the pacer is kept.
//!   Culling stops at the oldest packet that must stay, as libwebrtc's does. A request for a
//!   packet no longer kept is dropped.
//! - A requested packet is not resent while its previous retransmission still waits in the
//!   pacer, nor within one RTT (+ 5 ms) of when that retransmission left. When it left is
//!   reported by the [`RetransmissionTap`] below the pacer; without a tap a retransmission counts
//!   as sent when queued.
//! - Retransmission bytes are budgeted: at most the target rate (the last
//!   `TargetBitrateChanged` seen) over a sliding 500-ms window; a request beyond it is dropped.
//! - A retransmission carries `Attribute::Retransmission` (the pacer sends it ahead of video),
//!   and goes on the RTX stream (RFC 4588, own SSRC, payload type and sequence) when the stream
//!   negotiated one (`StreamInfo::ssrc_rtx` and `payload_type_rtx`).
//!
//! - With transport feedback reporting arrivals to it ([`FrameCompletion`]), it learns when each
//!   frame became whole at the receiver (an original, its retransmission or a FlexFEC repair
//!   packet completing it) and how late that was against the frame's own spacing
//!   ([`FrameLateness`], docs/architecture.md "The followed cap").
//!
//! **RTT**: libwebrtc's sender learns it from RTCP receiver reports. Here it is set through
//! [`NackResponderHandle::set_rtt`] (the simulated call, which exchanges no receiver reports,
//! copies the receiving generator's RTT into it, standing in for RTCP); until then it is 100 ms.

use super::completion::{FrameCompletion, FrameLateness};
use super::rtx::rtx_encapsulate;
use super::sequence_map::SequenceMap;
use super::{supports_nack, unwrap_seq};
use crate::protection::protected_packets;
use rtc_interceptor::{Attribute, AttributedPacket, Interceptor, Packet, StreamInfo, TaggedPacket};
use rtc_rtcp::transport_feedbacks::transport_layer_nack::TransportLayerNack;
use rtc_shared::TransportContext;
use rtc_shared::error::Error;
use rtc_shared::marshal::MarshalSize;
use rustc_hash::FxHashMap;
use sansio::Protocol;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// libwebrtc's `RtpPacketHistory::kMinPacketDuration`: packets are kept at least this long.
pub const MIN_PACKET_DURATION: Duration = Duration::from_millis(1000);
/// libwebrtc's `RtpPacketHistory::kMinPacketDurationRtt`: and at least this many RTTs.
pub const MIN_PACKET_DURATION_RTT: u32 = 3;
/// libwebrtc's `RtpPacketHistory::kMaxCapacity`: the most packets kept.
pub const MAX_HISTORY_PACKETS: usize = 9600;
/// libwebrtc's `RtpPacketHistory::kPacketCullingDelayFactor`: past the minimum duration a
/// packet stays until the history is full or this many minimum durations have passed.
pub const CULLING_DELAY_FACTOR: u32 = 3;
/// libwebrtc's `kMinSendSidePacketHistorySize` (`call/rtp_video_sender.cc`), the history size
/// a video sender asks for: past the minimum duration, packets are culled while more than this
/// many are kept.
pub const HISTORY_TARGET_PACKETS: usize = 600;
/// libwebrtc's `RTPSender::OnReceivedNack` sets the history's RTT to `5 + avg_rtt` ms: a packet
/// is not resent within that of its last retransmission.
pub const RESEND_RTT_MARGIN: Duration = Duration::from_millis(5);
/// libwebrtc's `kRetransmitWindowSizeMs` (`rtp_transport_controller_send.cc`): the window of the
/// retransmission rate limiter.
pub const RETRANSMIT_WINDOW: Duration = Duration::from_millis(500);
/// The retransmission budget as a share of the target rate: 1.0, as libwebrtc, whose
/// `RtpTransportControllerSend` sets the retransmission rate limiter's maximum to the target
/// rate (`retransmission_rate_limiter_.SetMaxRate(target_rate)`).
pub const RETRANSMIT_BUDGET_SHARE: f64 = 1.0;
/// The RTT until one is set (libwebrtc's receiver-side `kDefaultRtt`, 100 ms).
pub const DEFAULT_RTT: Duration = Duration::from_millis(100);
/// The target rate until a `TargetBitrateChanged` is seen: webrtc-rs `Gcc`'s initial 300 kbit/s.
pub const DEFAULT_TARGET_BPS: f64 = 300_000.0;

/// The responder's constants (defaults: libwebrtc's, see the `pub const`s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NackResponderConfig {
    /// [`MIN_PACKET_DURATION`].
    pub min_history: Duration,
    /// [`MIN_PACKET_DURATION_RTT`].
    pub history_rtts: u32,
    /// [`MAX_HISTORY_PACKETS`].
    pub max_history_packets: usize,
    /// [`CULLING_DELAY_FACTOR`].
    pub culling_factor: u32,
    /// [`HISTORY_TARGET_PACKETS`].
    pub history_target_packets: usize,
    /// [`RESEND_RTT_MARGIN`].
    pub rtt_margin: Duration,
    /// [`RETRANSMIT_WINDOW`].
    pub budget_window: Duration,
    /// [`RETRANSMIT_BUDGET_SHARE`].
    pub budget_share: f64,
    /// [`DEFAULT_RTT`].
    pub default_rtt: Duration,
    /// [`DEFAULT_TARGET_BPS`].
    pub initial_target_bps: f64,
}

impl Default for NackResponderConfig {
    fn default() -> Self {
        Self {
            min_history: MIN_PACKET_DURATION,
            history_rtts: MIN_PACKET_DURATION_RTT,
            max_history_packets: MAX_HISTORY_PACKETS,
            culling_factor: CULLING_DELAY_FACTOR,
            history_target_packets: HISTORY_TARGET_PACKETS,
            rtt_margin: RESEND_RTT_MARGIN,
            budget_window: RETRANSMIT_WINDOW,
            budget_share: RETRANSMIT_BUDGET_SHARE,
            default_rtt: DEFAULT_RTT,
            initial_target_bps: DEFAULT_TARGET_BPS,
        }
    }
}

/// What the responder did, over all streams.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NackResponderStats {
    /// Sequence numbers requested by NACKs received.
    pub requests: u64,
    /// Retransmissions queued.
    pub retransmissions: u64,
    /// Retransmission bytes queued (marshalled size).
    pub retransmission_bytes: u64,
    /// Requests ignored: the packet's retransmission was still in the pacer.
    pub ignored_pending: u64,
    /// Requests ignored: the packet was resent less than one RTT ago.
    pub ignored_recent: u64,
    /// Requests dropped: the packet is no longer (or never was) in the history.
    pub not_in_history: u64,
    /// Requests dropped by the byte budget.
    pub over_budget: u64,
}

/// How many repair delays [`NackResponderHandle::repair_delay`] reads: the last 64 first
/// retransmissions, about four Starlink boundaries' worth at 2.5 Mbit/s (each boundary's first
/// 200 ms lose some 15 to 20 packets), so that the measure follows the path within a minute.
pub const REPAIR_DELAY_SAMPLES: usize = 64;
/// The fewest repair delays [`NackResponderHandle::repair_delay`] reads a percentile from.
pub const MIN_REPAIR_DELAY_SAMPLES: usize = 8;

#[derive(Debug, Default)]
struct Shared {
    stats: NackResponderStats,
    rtt: Option<Duration>,
    /// Released retransmissions reported by the tap.
    released: Vec<Released>,
    /// The last [`REPAIR_DELAY_SAMPLES`] repair delays, oldest first.
    repair_delays: VecDeque<Duration>,
    /// Arrivals reported by transport feedback, not yet applied: (SSRC, sequence number on the
    /// wire, arrival on the receiver's clock).
    arrivals: Vec<(u32, u16, Duration)>,
    /// Frames that became whole at the receiver, oldest first, until taken.
    lateness: VecDeque<FrameLateness>,
    /// The FlexFEC SSRCs of the bound streams: the tap reads which packets their repair packets
    /// protect.
    fec_ssrcs: Vec<u32>,
}

/// The most arrivals waiting for the responder: about 20 s of a 4 Mbit/s call. The responder
/// applies them at every media packet written, so only a stream that stopped leaves them waiting;
/// beyond it new ones are dropped.
const MAX_PENDING_ARRIVALS: usize = 8_192;

/// The most completed frames waiting to be taken ([`NackResponderHandle::take_frame_lateness`]):
/// 34 s at 30 fps; beyond it the oldest is dropped.
const MAX_PENDING_FRAMES: usize = 1_024;

/// An RTP packet the tap saw leave the pacer.
#[derive(Debug, Clone, Copy)]
struct Released {
    /// Whether it is a retransmission (else an original transmission).
    retransmission: bool,
    /// The SSRC on the wire (the RTX SSRC or the media one).
    ssrc: u32,
    /// The sequence number on the wire.
    sequence_number: u16,
    /// The first two payload bytes: the original sequence number if this is an RTX packet.
    osn: Option<u16>,
    /// For a FlexFEC repair packet, the base sequence number and mask of what it protects.
    protects: Option<(u16, u128)>,
    at: Instant,
}

/// A handle on a [`NackResponder`] running inside a chain: its counters, and a way to give it
/// the RTT.
#[derive(Debug, Clone, Default)]
pub struct NackResponderHandle {
    shared: Arc<Mutex<Shared>>,
}

impl NackResponderHandle {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The counters so far.
    pub fn stats(&self) -> NackResponderStats {
        self.lock().stats
    }

    /// The RTT to use from now on.
    pub fn set_rtt(&self, rtt: Duration) {
        self.lock().rtt = Some(rtt);
    }

    /// The RTT last set, if any.
    pub fn rtt(&self) -> Option<Duration> {
        self.lock().rtt
    }

    /// How long a lost packet takes to be repaired, as this sender sees it: the `quantile`
    /// (0 to 1) of the time from a packet's first release to its first retransmission's release,
    /// over the last [`REPAIR_DELAY_SAMPLES`] retransmissions; `None` before
    /// [`MIN_REPAIR_DELAY_SAMPLES`] were seen (or without the tap).
    ///
    /// The original and its retransmission cross the same path, so the retransmission reaches
    /// the receiver this much after the original would have: how late a frame repaired once is.
    pub fn repair_delay(&self, quantile: f64) -> Option<Duration> {
        let shared = self.lock();
        if shared.repair_delays.len() < MIN_REPAIR_DELAY_SAMPLES {
            return None;
        }
        let mut sorted: Vec<Duration> = shared.repair_delays.iter().copied().collect();
        sorted.sort_unstable();
        let q = if quantile.is_finite() {
            quantile.clamp(0.0, 1.0)
        } else {
            1.0
        };
        let index = ((sorted.len() - 1) as f64 * q).round() as usize;
        sorted.get(index).copied()
    }

    /// Transport feedback: packets (SSRC and sequence number as sent, media or RTX) and when each
    /// arrived on the receiver's clock, `None` for a packet reported lost. The responder matches
    /// them to the frames it keeps (see [`take_frame_lateness`](Self::take_frame_lateness)).
    pub fn record_arrivals(&self, reports: impl IntoIterator<Item = (u32, u16, Option<Duration>)>) {
        let arrivals = &mut self.lock().arrivals;
        for (ssrc, seq, arrival) in reports {
            if let Some(arrival) = arrival
                && arrivals.len() < MAX_PENDING_ARRIVALS
            {
                arrivals.push((ssrc, seq, arrival));
            }
        }
    }

    /// The frames that became whole at the receiver since the last call, oldest first, with
    /// their lateness (`super::completion`): for one reader, which the sender's playout stamper
    /// is. Empty without [`record_arrivals`](Self::record_arrivals).
    pub fn take_frame_lateness(&self) -> Vec<FrameLateness> {
        self.lock().lateness.drain(..).collect()
    }
}

/// One sent packet in the history.
#[derive(Debug)]
struct Stored {
    packet: rtc_rtp::Packet,
    /// When the responder saw it (above the pacer).
    stored_at: Instant,
    /// When it left the pacer (reported by the tap).
    sent_at: Option<Instant>,
    /// The last retransmission: queued at, released at (once the tap saw it).
    last_queued: Option<Instant>,
    last_released: Option<Instant>,
}

/// One bound local stream.
#[derive(Debug, Default)]
struct LocalStream {
    rtx: Option<(u32, u8)>,
    rtx_sequence: crate::pacing::SequenceCounter,
    newest: Option<i64>,
    history: SequenceMap<Stored>,
    /// The original's unwrapped sequence number of each RTX packet released, by the RTX
    /// sequence number, until its feedback comes or the original leaves the history.
    rtx_originals: FxHashMap<u16, i64>,
    /// The FlexFEC repair stream's SSRC, if one protects this stream.
    fec: Option<u32>,
    /// What each repair packet released protects (unwrapped base, mask), by its sequence
    /// number, until its feedback comes or its packets leave the history.
    fec_protects: FxHashMap<u16, (i64, u128)>,
    frames: FrameCompletion,
}

/// Beyond this many RTX packets waiting for their feedback, those whose original left the
/// history are forgotten.
const MAX_RTX_ORIGINALS: usize = 4_096;

/// libwebrtc's NACK handling on the sender as an interceptor (see the module documentation).
pub struct NackResponder {
    config: NackResponderConfig,
    streams: FxHashMap<u32, LocalStream>,
    /// Whether a tap has reported anything: then the history ages from the release instants,
    /// else from the write instants.
    tapped: bool,
    target_bps: f64,
    /// Retransmissions in the budget window: (queued at, bytes).
    spent: VecDeque<(Instant, usize)>,
    handle: NackResponderHandle,
    /// The RTX sequence shared with the pacer's padding, if any.
    rtx_sequence: Option<crate::pacing::SequenceCounter>,
    read_queue: VecDeque<TaggedPacket>,
    write_queue: VecDeque<TaggedPacket>,
    /// The tap's reports being applied (see [`Self::update`]).
    released: Vec<Released>,
}

impl NackResponder {
    /// Numbers every retransmission on an RTX stream from `sequence`, which the pacer's padding
    /// on that stream shares (`HandoverAwarePacerBuilder::rtx_padding`), as libwebrtc's
    /// `RTPSender` numbers RTX retransmissions and padding from one sequence. Without it each
    /// RTX stream counts on its own.
    pub fn with_rtx_sequence(mut self, sequence: crate::pacing::SequenceCounter) -> Self {
        self.rtx_sequence = Some(sequence);
        self
    }

    /// A responder with libwebrtc's constants, its handle, and the tap to place at
    /// [`super::TAP_SLOT`].
    pub fn new() -> (Self, NackResponderHandle, RetransmissionTap) {
        Self::with_config(NackResponderConfig::default())
    }

    /// A responder with the given constants, its handle and its tap.
    pub fn with_config(
        config: NackResponderConfig,
    ) -> (Self, NackResponderHandle, RetransmissionTap) {
        let handle = NackResponderHandle::default();
        let responder = Self {
            config,
            streams: FxHashMap::default(),
            tapped: false,
            target_bps: config.initial_target_bps,
            spent: VecDeque::new(),
            handle: handle.clone(),
            rtx_sequence: None,
            read_queue: VecDeque::new(),
            write_queue: VecDeque::new(),
            released: Vec::new(),
        };
        let tap = RetransmissionTap {
            handle: handle.clone(),
            read_queue: VecDeque::new(),
            write_queue: VecDeque::new(),
        };
        (responder, handle, tap)
    }

    fn rtt(&self) -> Duration {
        self.handle.lock().rtt.unwrap_or(self.config.default_rtt)
    }

    /// How long packets are kept at least after their last send: max(1000 ms, 3 x RTT).
    fn history_window(&self) -> Duration {
        self.config
            .min_history
            .max(self.rtt() * self.config.history_rtts)
    }

    /// Applies the tap's release reports and culls the history.
    fn update(&mut self, now: Instant) {
        // Swapped with a buffer kept here, so neither side allocates per packet.
        std::mem::swap(&mut self.released, &mut self.handle.lock().released);
        let mut repairs = Vec::new();
        for r in self.released.drain(..) {
            self.tapped = true;
            if let Some((base, mask)) = r.protects {
                if let Some(stream) = self.streams.values_mut().find(|s| s.fec == Some(r.ssrc))
                    && let Some(newest) = stream.newest
                {
                    stream
                        .fec_protects
                        .insert(r.sequence_number, (unwrap_seq(newest, base), mask));
                }
                continue;
            }
            let found = self.streams.iter_mut().find_map(|(&ssrc, s)| {
                if s.rtx.is_some_and(|(rtx, _)| rtx == r.ssrc) {
                    r.osn.map(|osn| (s, osn))
                } else {
                    (ssrc == r.ssrc).then_some((s, r.sequence_number))
                }
            });
            if let Some((stream, seq)) = found
                && let Some(newest) = stream.newest
                && let key = unwrap_seq(newest, seq)
                && let Some(stored) = stream.history.get_mut(key)
            {
                if r.retransmission {
                    if stream.rtx.is_some_and(|(rtx, _)| rtx == r.ssrc) {
                        stream.rtx_originals.insert(r.sequence_number, key);
                    }
                    if stored.last_released.is_none()
                        && let Some(sent) = stored.sent_at
                    {
                        repairs.push(r.at.saturating_duration_since(sent));
                    }
                    stored.last_released = Some(r.at);
                } else {
                    stored.sent_at = Some(r.at);
                }
            }
        }
        if !repairs.is_empty() {
            let delays = &mut self.handle.lock().repair_delays;
            for delay in repairs {
                if delays.len() == REPAIR_DELAY_SAMPLES {
                    delays.pop_front();
                }
                delays.push_back(delay);
            }
        }
        self.apply_arrivals();
        let window = self.history_window();
        let timeout = window * self.config.culling_factor;
        let max = self.config.max_history_packets;
        let target = self.config.history_target_packets;
        for stream in self.streams.values_mut() {
            loop {
                let len = stream.history.len();
                let Some(oldest) = stream.history.first() else {
                    break;
                };
                if len > max {
                    stream.history.pop_first();
                    continue;
                }
                // libwebrtc stores a packet when it is sent and renews its send time at each
                // retransmission, so its age counts from the latest release; one still in the
                // pacer (first send or retransmission) is kept.
                let queued = oldest
                    .last_queued
                    .map_or(oldest.stored_at, |q| q.max(oldest.stored_at));
                let last_send = if self.tapped {
                    let pending_repair = oldest
                        .last_queued
                        .is_some_and(|q| oldest.last_released.is_none_or(|r| r < q));
                    oldest
                        .sent_at
                        .filter(|_| !pending_repair)
                        .map(|sent| oldest.last_released.map_or(sent, |r| r.max(sent)))
                } else {
                    Some(queued)
                };
                let age = match last_send {
                    Some(at) => now.saturating_duration_since(at),
                    // Still in the pacer: kept, unless it has waited a whole timeout there (a
                    // packet the pacer flushed for a key frame never leaves).
                    None => {
                        let waited = now.saturating_duration_since(queued);
                        if waited < timeout {
                            break;
                        }
                        waited
                    }
                };
                if age > window && (len >= target || age >= timeout) {
                    stream.history.pop_first();
                } else {
                    break;
                }
            }
            if let Some(first) = stream.history.first_key() {
                stream.frames.forget_before(first);
                if stream.rtx_originals.len() > MAX_RTX_ORIGINALS {
                    stream
                        .rtx_originals
                        .retain(|_, &mut original| original >= first);
                }
                if stream.fec_protects.len() > MAX_RTX_ORIGINALS {
                    stream
                        .fec_protects
                        .retain(|_, &mut (base, _)| base >= first);
                }
            }
        }
        while self
            .spent
            .front()
            .is_some_and(|&(t, _)| now.saturating_duration_since(t) >= self.config.budget_window)
        {
            self.spent.pop_front();
        }
    }

    /// Matches the arrivals transport feedback reported to the packets kept, originals by their
    /// number, RTX packets by their original's and FlexFEC repair packets by the one protected
    /// packet they can rebuild, and hands on the frames they made whole.
    fn apply_arrivals(&mut self) {
        let arrivals = std::mem::take(&mut self.handle.lock().arrivals);
        if arrivals.is_empty() {
            return;
        }
        let mut done = Vec::new();
        let mut lateness = Vec::new();
        for (ssrc, seq, arrival) in arrivals {
            for (&media, stream) in &mut self.streams {
                if stream.rtx.is_some_and(|(rtx, _)| rtx == ssrc) {
                    if let Some(key) = stream.rtx_originals.remove(&seq) {
                        stream.frames.on_arrival(key, arrival, true, &mut done);
                    }
                } else if stream.fec == Some(ssrc) {
                    if let Some((base, mask)) = stream.fec_protects.remove(&seq) {
                        stream
                            .frames
                            .on_repair_arrival(base, mask, arrival, &mut done);
                    }
                } else if media == ssrc
                    && let Some(newest) = stream.newest
                {
                    stream
                        .frames
                        .on_arrival(unwrap_seq(newest, seq), arrival, false, &mut done);
                } else {
                    continue;
                }
                lateness.extend(done.drain(..).map(|frame| frame.of(media)));
                break;
            }
        }
        let pending = &mut self.handle.lock().lateness;
        for frame in lateness {
            if pending.len() == MAX_PENDING_FRAMES {
                pending.pop_front();
            }
            pending.push_back(frame);
        }
    }

    fn budget_bytes(&self) -> f64 {
        self.target_bps * self.config.budget_share * self.config.budget_window.as_secs_f64() / 8.0
    }

    fn on_nack(&mut self, now: Instant, nack: &TransportLayerNack) {
        self.update(now);
        let rtt = self.rtt();
        let budget = self.budget_bytes();
        let mut spent: usize = self.spent.iter().map(|&(_, b)| b).sum();
        let margin = self.config.rtt_margin;
        let Some(stream) = self.streams.get_mut(&nack.media_ssrc) else {
            return;
        };
        let mut shared = self.handle.shared.lock().unwrap_or_else(|e| e.into_inner());
        for pair in &nack.nacks {
            for seq in pair.packet_list() {
                shared.stats.requests += 1;
                let Some(newest) = stream.newest else {
                    shared.stats.not_in_history += 1;
                    continue;
                };
                let Some(stored) = stream.history.get_mut(unwrap_seq(newest, seq)) else {
                    shared.stats.not_in_history += 1;
                    continue;
                };
                if let Some(queued) = stored.last_queued {
                    match stored.last_released {
                        Some(released) if released >= queued => {
                            if now.saturating_duration_since(released) < rtt + margin {
                                shared.stats.ignored_recent += 1;
                                continue;
                            }
                        }
                        // Still in the pacer (or released unseen: counted from the queueing,
                        // and given up as pending after the history's minimum duration).
                        _ => {
                            let age = now.saturating_duration_since(queued);
                            if age < self.config.min_history {
                                shared.stats.ignored_pending += 1;
                                continue;
                            }
                        }
                    }
                }
                // Numbered only once within the budget: no number is burnt on a refusal.
                let mut packet = match stream.rtx {
                    Some((ssrc, pt)) => rtx_encapsulate(&stored.packet, ssrc, pt, 0),
                    None => stored.packet.clone(),
                };
                let size = packet.marshal_size();
                if (spent + size) as f64 > budget {
                    shared.stats.over_budget += 1;
                    continue;
                }
                if stream.rtx.is_some() {
                    packet.header.sequence_number = stream.rtx_sequence.take();
                }
                spent += size;
                self.spent.push_back((now, size));
                stored.last_queued = Some(now);
                stored.last_released = None;
                shared.stats.retransmissions += 1;
                shared.stats.retransmission_bytes += size as u64;
                self.write_queue.push_back(TaggedPacket {
                    now,
                    transport: TransportContext::default(),
                    message: AttributedPacket::new(Packet::Rtp(packet))
                        .with(Attribute::Retransmission),
                });
            }
        }
    }
}

impl Protocol<TaggedPacket, TaggedPacket, ()> for NackResponder {
    type Rout = TaggedPacket;
    type Wout = TaggedPacket;
    type Eout = ();
    type Error = Error;
    type Time = Instant;

    fn handle_read(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        for attribute in &msg.message.attributes {
            if let Attribute::TargetBitrateChanged { bits_per_second } = attribute
                && bits_per_second.is_finite()
                && *bits_per_second >= 0.0
            {
                self.target_bps = *bits_per_second;
            }
        }
        if let Packet::Rtcp(rtcp) = &msg.message.packet {
            for packet in rtcp {
                if let Some(nack) = packet.as_any().downcast_ref::<TransportLayerNack>() {
                    self.on_nack(msg.now, nack);
                }
            }
        }
        self.read_queue.push_back(msg);
        Ok(())
    }

    fn poll_read(&mut self) -> Option<Self::Rout> {
        self.read_queue.pop_front()
    }

    fn handle_write(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        if let Packet::Rtp(rtp) = &msg.message.packet
            && !msg.message.has(&Attribute::Retransmission)
            && let Some(stream) = self.streams.get_mut(&rtp.header.ssrc)
        {
            let seq = match stream.newest {
                Some(newest) => unwrap_seq(newest, rtp.header.sequence_number),
                None => i64::from(rtp.header.sequence_number),
            };
            stream.newest = Some(stream.newest.map_or(seq, |n| n.max(seq)));
            let bytes = u32::try_from(rtp.payload.len()).unwrap_or(u32::MAX);
            stream
                .frames
                .on_packet(seq, rtp.header.timestamp, msg.now, bytes);
            stream.history.insert(
                seq,
                Stored {
                    packet: rtp.clone(),
                    stored_at: msg.now,
                    sent_at: None,
                    last_queued: None,
                    last_released: None,
                },
            );
            self.update(msg.now);
        }
        self.write_queue.push_back(msg);
        Ok(())
    }

    fn poll_write(&mut self) -> Option<Self::Wout> {
        self.write_queue.pop_front()
    }

    fn poll_timeout(&mut self) -> Option<Self::Time> {
        None
    }
}

impl Interceptor for NackResponder {
    fn bind_local_stream(&mut self, info: &StreamInfo) {
        if supports_nack(info) {
            let rtx = info.ssrc_rtx.zip(info.payload_type_rtx);
            if let Some(fec) = info.ssrc_fec {
                let fec_ssrcs = &mut self.handle.lock().fec_ssrcs;
                if !fec_ssrcs.contains(&fec) {
                    fec_ssrcs.push(fec);
                }
            }
            self.streams.insert(
                info.ssrc,
                LocalStream {
                    rtx,
                    fec: info.ssrc_fec,
                    rtx_sequence: self.rtx_sequence.clone().unwrap_or_default(),
                    ..LocalStream::default()
                },
            );
        }
    }

    fn unbind_local_stream(&mut self, info: &StreamInfo) {
        self.streams.remove(&info.ssrc);
    }

    fn bind_remote_stream(&mut self, _info: &StreamInfo) {}

    fn unbind_remote_stream(&mut self, _info: &StreamInfo) {}
}

/// Sits below the pacer ([`super::TAP_SLOT`]) and tells its [`NackResponder`] when each packet
/// really left (libwebrtc's packet history learns it from `OnPacketSent`): the history ages from
/// there, and a packet whose retransmission still waits in the pacer is not queued again.
/// Passes everything through unchanged.
pub struct RetransmissionTap {
    handle: NackResponderHandle,
    read_queue: VecDeque<TaggedPacket>,
    write_queue: VecDeque<TaggedPacket>,
}

impl Protocol<TaggedPacket, TaggedPacket, ()> for RetransmissionTap {
    type Rout = TaggedPacket;
    type Wout = TaggedPacket;
    type Eout = ();
    type Error = Error;
    type Time = Instant;

    fn handle_read(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        self.read_queue.push_back(msg);
        Ok(())
    }

    fn poll_read(&mut self) -> Option<Self::Rout> {
        self.read_queue.pop_front()
    }

    fn handle_write(&mut self, msg: TaggedPacket) -> Result<(), Self::Error> {
        if let Packet::Rtp(rtp) = &msg.message.packet {
            let retransmission = msg.message.has(&Attribute::Retransmission);
            let osn = rtp
                .payload
                .get(..2)
                .map(|b| u16::from_be_bytes([b[0], b[1]]));
            let mut shared = self.handle.lock();
            let protects = shared
                .fec_ssrcs
                .contains(&rtp.header.ssrc)
                .then(|| protected_packets(&rtp.payload))
                .flatten()
                .map(|(_, base, mask)| (base, mask));
            shared.released.push(Released {
                retransmission,
                ssrc: rtp.header.ssrc,
                sequence_number: rtp.header.sequence_number,
                osn,
                protects,
                at: msg.now,
            });
        }
        self.write_queue.push_back(msg);
        Ok(())
    }

    fn poll_write(&mut self) -> Option<Self::Wout> {
        self.write_queue.pop_front()
    }

    fn poll_timeout(&mut self) -> Option<Self::Time> {
        None
    }
}

impl Interceptor for RetransmissionTap {
    fn bind_local_stream(&mut self, _info: &StreamInfo) {}

    fn unbind_local_stream(&mut self, _info: &StreamInfo) {}

    fn bind_remote_stream(&mut self, _info: &StreamInfo) {}

    fn unbind_remote_stream(&mut self, _info: &StreamInfo) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtc_interceptor::RTCPFeedback;
    use rtc_rtcp::transport_feedbacks::transport_layer_nack::nack_pairs_from_sequence_numbers;

    const SSRC: u32 = 1;
    const RTX_SSRC: u32 = 2;

    struct Rig {
        responder: NackResponder,
        tap: RetransmissionTap,
        handle: NackResponderHandle,
        t0: Instant,
    }

    impl Rig {
        fn new(rtx: bool) -> Self {
            let (mut responder, handle, tap) = NackResponder::new();
            responder.bind_local_stream(&StreamInfo {
                ssrc: SSRC,
                ssrc_rtx: rtx.then_some(RTX_SSRC),
                payload_type: 96,
                payload_type_rtx: rtx.then_some(97),
                rtcp_feedback: vec![RTCPFeedback {
                    typ: "nack".into(),
                    parameter: String::new(),
                }],
                ..Default::default()
            });
            Self {
                responder,
                tap,
                handle,
                t0: Instant::now(),
            }
        }

        fn at(&self, ms: u64) -> Instant {
            self.t0 + Duration::from_millis(ms)
        }

        /// Writes media packets `seqs` with 1000-byte payloads at `ms`; they leave the pacer at
        /// once (through the tap).
        fn send(&mut self, ms: u64, seqs: std::ops::Range<u16>) {
            self.send_frame(ms, seqs, 0);
        }

        /// As [`send`](Self::send), the packets carrying RTP timestamp `timestamp`.
        fn send_frame(&mut self, ms: u64, seqs: std::ops::Range<u16>, timestamp: u32) {
            for seq in seqs {
                let packet = rtc_rtp::Packet {
                    header: rtc_rtp::Header {
                        version: 2,
                        ssrc: SSRC,
                        payload_type: 96,
                        sequence_number: seq,
                        timestamp,
                        ..Default::default()
                    },
                    payload: vec![seq as u8; 1000].into(),
                };
                self.responder
                    .handle_write(TaggedPacket {
                        now: self.at(ms),
                        transport: TransportContext::default(),
                        message: AttributedPacket::new(Packet::Rtp(packet)),
                    })
                    .unwrap();
                let out = self.responder.poll_write().unwrap();
                self.tap.handle_write(out).unwrap();
                self.tap.poll_write().unwrap();
            }
        }

        /// A NACK for `seqs` at `ms`; returns the retransmissions (not yet released).
        fn nack(&mut self, ms: u64, seqs: &[u16]) -> Vec<TaggedPacket> {
            let nack = TransportLayerNack {
                sender_ssrc: 9,
                media_ssrc: SSRC,
                nacks: nack_pairs_from_sequence_numbers(seqs),
            };
            self.responder
                .handle_read(TaggedPacket {
                    now: self.at(ms),
                    transport: TransportContext::default(),
                    message: AttributedPacket::new(Packet::Rtcp(vec![Box::new(nack)])),
                })
                .unwrap();
            while self.responder.poll_read().is_some() {}
            std::iter::from_fn(|| self.responder.poll_write()).collect()
        }

        /// The pacer releases `packets` at `ms`.
        fn release(&mut self, ms: u64, packets: Vec<TaggedPacket>) {
            for mut p in packets {
                p.now = self.at(ms);
                self.tap.handle_write(p).unwrap();
                self.tap.poll_write().unwrap();
            }
        }

        fn target(&mut self, bps: f64) {
            self.responder
                .handle_read(TaggedPacket {
                    now: self.t0,
                    transport: TransportContext::default(),
                    message: AttributedPacket::new(Packet::Rtcp(vec![])).with(
                        Attribute::TargetBitrateChanged {
                            bits_per_second: bps,
                        },
                    ),
                })
                .unwrap();
            while self.responder.poll_read().is_some() {}
        }
    }

    fn rtp(p: &TaggedPacket) -> &rtc_rtp::Packet {
        match &p.message.packet {
            Packet::Rtp(rtp) => rtp,
            _ => panic!("not RTP"),
        }
    }

    #[test]
    fn a_nacked_packet_goes_out_on_rtx_once_not_again_while_queued_nor_within_rtt_plus_5_ms() {
        let mut rig = Rig::new(true);
        rig.target(2_000_000.0);
        rig.send(0, 0..10);
        let first = rig.nack(100, &[3]);
        assert_eq!(first.len(), 1);
        assert!(first[0].message.has(&Attribute::Retransmission));
        let resent = rtp(&first[0]);
        assert_eq!(resent.header.ssrc, RTX_SSRC);
        assert_eq!(resent.header.payload_type, 97);
        assert_eq!(resent.header.sequence_number, 0);
        assert_eq!(&resent.payload[..3], &[0, 3, 3]);
        // Still in the pacer at 150 ms: ignored.
        assert!(rig.nack(150, &[3]).is_empty());
        rig.release(160, first);
        // Left at 160 ms; the RTT is the default 100 ms, so not before 265 ms.
        assert!(rig.nack(264, &[3]).is_empty());
        let second = rig.nack(265, &[3]);
        assert_eq!(second.len(), 1);
        assert_eq!(rtp(&second[0]).header.sequence_number, 1);
        let stats = rig.handle.stats();
        assert_eq!(stats.requests, 4);
        assert_eq!(stats.retransmissions, 2);
        assert_eq!((stats.ignored_pending, stats.ignored_recent), (1, 1));
        // With a 300-ms RTT the next one waits until 265 + 305 after its release.
        rig.handle.set_rtt(Duration::from_millis(300));
        rig.release(265, second);
        assert!(rig.nack(569, &[3]).is_empty());
        assert_eq!(rig.nack(570, &[3]).len(), 1);
    }

    #[test]
    fn feedback_on_originals_and_rtx_makes_frames_whole_and_measures_how_late() {
        let mut rig = Rig::new(true);
        rig.target(2_000_000.0);
        // Twelve frames of two packets, 33 ms apart; each packet arrives 60 ms after its frame
        // on a receiver clock 1000 s ahead, but frame 10's second packet (21) is lost.
        for f in 0..12u16 {
            rig.send_frame(33 * u64::from(f), 2 * f..2 * f + 2, u32::from(f) * 3000);
        }
        let arrival = |ms: u64| Some(Duration::from_millis(1_000_000 + ms));
        rig.handle.record_arrivals((0..24u16).map(|seq| {
            (
                SSRC,
                seq,
                if seq == 21 {
                    None
                } else {
                    arrival(33 * u64::from(seq / 2) + 60)
                },
            )
        }));
        let repair = rig.nack(450, &[21]);
        rig.release(500, repair);
        // The RTX packet (RTX sequence 0) arrives at 560 ms; unknown packets are ignored.
        rig.handle.record_arrivals([
            (RTX_SSRC, 0, arrival(560)),
            (RTX_SSRC, 7, arrival(570)),
            (3, 0, arrival(0)),
        ]);
        rig.send_frame(600, 24..26, 12 * 3000);
        let frames = rig.handle.take_frame_lateness();
        let late: Vec<(u64, Duration)> = frames
            .iter()
            .map(|f| {
                (
                    f.captured.duration_since(rig.t0).as_millis() as u64,
                    f.lateness,
                )
            })
            .collect();
        // Eight frames complete before any is measured; frame 10 completes last, 170 ms late
        // (560 ms against 330 + 60).
        assert_eq!(
            late,
            vec![
                (264, Duration::ZERO),
                (297, Duration::ZERO),
                (363, Duration::ZERO),
                (330, Duration::from_millis(170)),
            ]
        );
        assert!(frames.iter().all(|f| f.ssrc == SSRC));
        assert!(rig.handle.take_frame_lateness().is_empty(), "taken once");
    }

    #[test]
    fn a_frame_the_receiver_rebuilds_from_a_repair_packet_is_whole_when_that_arrives() {
        const FEC_SSRC: u32 = 3;
        let mut rig = Rig::new(false);
        rig.responder.bind_local_stream(&StreamInfo {
            ssrc: SSRC,
            ssrc_fec: Some(FEC_SSRC),
            payload_type_fec: Some(100),
            rtcp_feedback: vec![RTCPFeedback {
                typ: "nack".into(),
                parameter: String::new(),
            }],
            ..Default::default()
        });
        for f in 0..12u16 {
            rig.send_frame(33 * u64::from(f), 2 * f..2 * f + 2, u32::from(f) * 3000);
        }
        // A repair packet over frame 10's two packets (20 and 21) leaves the pacer at 340 ms.
        let media: Vec<rtc_rtp::Packet> = rig
            .responder
            .streams
            .get_mut(&SSRC)
            .map(|s| {
                (20..22)
                    .map(|seq| s.history.get_mut(seq).unwrap().packet.clone())
                    .collect()
            })
            .unwrap();
        let repair = rtc_interceptor::FlexFec03Encoder::new(100, FEC_SSRC).encode(&media, 1);
        rig.release(
            340,
            repair
                .into_iter()
                .map(|p| TaggedPacket {
                    now: rig.t0,
                    transport: TransportContext::default(),
                    message: AttributedPacket::new(Packet::Rtp(p)),
                })
                .collect(),
        );
        // Every packet arrives 60 ms after its frame but 21, which is lost; the repair packet
        // (repair sequence 0) arrives at 420 ms.
        let arrival = |ms: u64| Some(Duration::from_millis(1_000_000 + ms));
        rig.handle.record_arrivals((0..24u16).map(|seq| {
            let at = if seq == 21 {
                None
            } else {
                arrival(33 * u64::from(seq / 2) + 60)
            };
            (SSRC, seq, at)
        }));
        rig.handle.record_arrivals([(FEC_SSRC, 0, arrival(420))]);
        rig.send_frame(600, 24..26, 12 * 3000);
        let frame_10 = rig
            .handle
            .take_frame_lateness()
            .into_iter()
            .find(|f| f.captured == rig.at(330))
            .map(|f| f.lateness);
        assert_eq!(frame_10, Some(Duration::from_millis(420 - 330 - 60)));
    }

    #[test]
    fn without_rtx_the_original_packet_is_resent_marked_as_a_retransmission() {
        let mut rig = Rig::new(false);
        rig.send(0, 0..3);
        let out = rig.nack(50, &[1]);
        assert_eq!(out.len(), 1);
        assert!(out[0].message.has(&Attribute::Retransmission));
        assert_eq!(rtp(&out[0]).header.ssrc, SSRC);
        assert_eq!(rtp(&out[0]).header.sequence_number, 1);
        assert_eq!(rtp(&out[0]).payload.len(), 1000);
    }

    #[test]
    fn a_small_history_keeps_packets_for_3_minimum_durations_after_their_last_send() {
        let mut rig = Rig::new(true);
        rig.target(10_000_000.0);
        rig.send(0, 0..1);
        // Past the 1000-ms minimum, but the history holds fewer than 600 packets.
        let out = rig.nack(2000, &[0]);
        assert_eq!(out.len(), 1, "2000 ms after its send: kept");
        rig.release(2000, out);
        // The retransmission renewed its send time: 2999 ms after it, still kept.
        rig.send(4999, 1..2);
        let out = rig.nack(4999, &[0]);
        assert_eq!(out.len(), 1, "2999 ms after its retransmission: kept");
        rig.release(4999, out);
        rig.send(8000, 2..3);
        assert!(rig.nack(8000, &[0]).is_empty(), "3001 ms after it: gone");
        assert_eq!(rig.handle.stats().not_in_history, 1);
    }

    #[test]
    fn a_full_history_culls_packets_past_1000_ms_or_3_rtts_down_to_600() {
        let mut rig = Rig::new(true);
        rig.target(100_000_000.0);
        rig.send(0, 0..600);
        rig.send(1001, 600..601);
        // 601 packets: the two oldest, 1001 ms old, go until 599 are left.
        assert!(rig.nack(1001, &[0, 1]).is_empty());
        assert_eq!(rig.handle.stats().not_in_history, 2);
        assert_eq!(rig.nack(1001, &[2]).len(), 1);
        // With a 500-ms RTT the minimum is 3 x 500 ms: nothing 1499 ms old is culled.
        let mut rig = Rig::new(true);
        rig.target(100_000_000.0);
        rig.handle.set_rtt(Duration::from_millis(500));
        rig.send(0, 0..600);
        rig.send(1499, 600..601);
        assert_eq!(rig.nack(1499, &[0]).len(), 1);
        // A packet whose retransmission still waits in the pacer is kept, and culling stops
        // there, as libwebrtc's.
        rig.send(1501, 601..602);
        assert_eq!(rig.nack(1501, &[1]).len(), 1);
        // Once it left, it is kept 1500 ms from that send, and culling resumes after it.
        let mut rig = Rig::new(true);
        rig.target(100_000_000.0);
        rig.handle.set_rtt(Duration::from_millis(500));
        rig.send(0, 0..600);
        let out = rig.nack(1499, &[0]);
        rig.release(1499, out);
        rig.send(2999, 600..602);
        rig.send(3000, 602..603);
        assert!(rig.nack(3000, &[0, 3]).is_empty());
        assert_eq!(rig.handle.stats().not_in_history, 2);
        assert_eq!(rig.nack(3000, &[4]).len(), 1);
    }

    #[test]
    fn retransmissions_are_budgeted_at_the_target_rate_over_500_ms() {
        let mut rig = Rig::new(true);
        // 100 kbit/s over 500 ms: 6250 bytes; an RTX packet here is 12 + 2 + 1000 bytes.
        rig.target(100_000.0);
        rig.send(0, 0..20);
        let out = rig.nack(10, &(0..10).collect::<Vec<_>>());
        assert_eq!(out.len(), 6);
        assert_eq!(rig.handle.stats().over_budget, 4);
        // RTX sequence numbers stay contiguous: none is burnt on a refused request.
        let seqs: Vec<u16> = out.iter().map(|p| rtp(p).header.sequence_number).collect();
        assert_eq!(seqs, vec![0, 1, 2, 3, 4, 5]);
        assert!(rig.nack(509, &[6]).is_empty());
        let later = rig.nack(510, &[6, 7]);
        assert_eq!(later.len(), 2);
        assert_eq!(rtp(&later[0]).header.sequence_number, 6);
    }
}

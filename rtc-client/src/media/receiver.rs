//! The receiver: frame assembly, the render order, loss declaration and key-frame requests.
//!
//! Sans-I/O: the caller hands every RTP payload of the synthetic video stream to
//! [`Receiver::on_packet`] with the instant it arrived, calls [`Receiver::handle_timeout`] at
//! [`Receiver::poll_timeout`], and drains [`Receiver::poll_rendered`] (frames to feed the QoE
//! meter) and [`Receiver::poll_pli`] (key-frame requests to send as RTCP PLI). It never reads a
//! clock.
//!
//! Rules (a jitter buffer with zero decode time):
//!
//! - A frame is *complete* when all its `packets_in_frame` packets have arrived (duplicates and
//!   retransmissions count once).
//! - A frame is *decoded* at the instant it becomes complete and decodable. A key frame is always
//!   decodable; a delta frame without temporal fields is decodable iff the previous frame
//!   (`frame_id - 1`, wrapping) was decoded (a linear reference chain, as libwebrtc's VP8
//!   reference finder treats frames without temporal fields, `rtp_vp8_ref_finder.cc`); a frame
//!   with temporal fields (a discardable layer-sync frame, or the base frame after discardable
//!   ones; [`super::payload::Temporal`]; from real VP8, every frame but a key frame of a stream
//!   whose descriptors carry TL0PICIDX and TID, [`super::vp8::framer`]) is decodable iff the
//!   base frame it references is the last base frame decoded
//!   (`RtpVp8RefFinder::ManageFrameInternal`: a base frame references the previous base frame,
//!   a layer-sync frame only its base frame).
//! - A decoded frame renders at its playout time ([`Playout::JitterBuffer`], the default: the
//!   libwebrtc timing model of [`super::playout`] with the jitter estimate of [`super::jitter`],
//!   fed with each frame's completion and with the retransmissions [`super::recovery`] spots),
//!   or at once ([`Playout::Immediate`], for tests of assembly alone). A frame decoded after its
//!   playout time renders at once; rendered instants never go backwards.
//! - Frames decode in order: a complete later frame waits while an earlier one is incomplete,
//!   until the earlier one is declared lost. The exception is a complete later *key* frame, which
//!   needs nothing earlier, so the receiver skips straight to it (as libwebrtc's frame buffer
//!   drops frames older than a decodable key frame).
//! - Discardable frames: while the frame the receiver waits for is incomplete, a later complete
//!   frame that is decodable without it (it references the last base frame decoded) is decoded
//!   once its render time has come, and the frames before it are skipped: no PLI, no wait for
//!   the loss timeout (libwebrtc decodes the next decodable frame and drops older ones; a frame
//!   that is not decodable waits, `frame_decode_timing.cc` skips only decodable frames). Until
//!   then a retransmission may still complete the waited-for frame. A discardable frame
//!   declared lost is skipped without a PLI. Skipped frames count in
//!   [`ReceiverStats::frames_skipped`].
//! - Loss: the frame the receiver is waiting for is declared unrecoverable once any later frame's
//!   first packet arrived at least [`ReceiverConfig::loss_timeout`] ago (NACK retransmissions may
//!   complete it before then). It is dropped, and with it every delta frame that depends on it:
//!   the receiver then waits for a key frame, dropping delta frames until one renders, and asks
//!   for one with PLIs, at most one per [`ReceiverConfig::pli_interval`].
//! - Memory is bounded: at most [`ReceiverConfig::max_frames`] frame ids are buffered; a packet
//!   of a frame further ahead forces the oldest ones out as lost. Rendered frames not yet polled
//!   are capped at the same count (the oldest are discarded and counted).

use super::forecast_raise::{ForecastRaise, REPAIR_QUANTILE};
use super::jitter::JitterEstimator;
use super::payload::PayloadHeader;
use super::playout::{PlayoutConfig, PlayoutTiming};
use super::recovery::RecoveryTracker;
use crate::link::Time;
use handover_predictor::Forecast;
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// How the receiver declares loss and bounds its memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceiverConfig {
    /// How long after a later frame's first packet an incomplete earlier frame is given up (and
    /// a key frame asked for).
    ///
    /// libwebrtc: 3 s, `kMaxWaitForFrame` (`video/video_receive_stream2.cc`): with no decodable
    /// frame for that long the stream asks for a key frame; until then an incomplete frame waits
    /// for its retransmissions (`nack_requester.cc` asks up to 10 times, once per RTT). Chromium
    /// 156 was seen doing so: over starlink it completed, after more than 500 ms, frames that a
    /// 500-ms give-up dropped, and asked for no key frame in a 2-minute call
    /// (docs/experiments/receiver-2026-12-03.md).
    pub loss_timeout: Duration,
    /// The same while the receiver waits for a key frame (at the start of a stream, and after
    /// a loss): an incomplete key frame is given up this long after a later frame's first
    /// packet, and another asked for.
    ///
    /// libwebrtc: 200 ms, `kMaxWaitForKeyFrame` (`video/video_receive_stream2.cc`), the wait
    /// while a key frame is required.
    pub key_frame_timeout: Duration,
    /// The least time between two PLIs.
    ///
    /// Chosen: 300 ms, libwebrtc's minimum spacing of repeated key-frame requests from the
    /// receiver, so a burst of losses costs one key frame rather than several.
    pub pli_interval: Duration,
    /// The most frame ids buffered at once, and the most rendered frames held until polled.
    ///
    /// Chosen: 256 frames, 8.5 s at 30 fps, far beyond the loss timeout; a packet of a frame
    /// further ahead forces the oldest buffered frames out as lost.
    pub max_frames: usize,
    /// When decoded frames render.
    pub playout: Playout,
}

/// When a decoded frame renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Playout {
    /// At its playout time from libwebrtc's timing model (the jitter buffer of a real receiver).
    JitterBuffer(PlayoutConfig),
    /// At the instant it is decoded: no jitter buffer (for tests of frame assembly).
    Immediate,
}

impl Default for ReceiverConfig {
    fn default() -> Self {
        Self {
            loss_timeout: Duration::from_secs(3),
            key_frame_timeout: Duration::from_millis(200),
            pli_interval: Duration::from_millis(300),
            max_frames: 256,
            playout: Playout::JitterBuffer(PlayoutConfig::default()),
        }
    }
}

/// A frame that was rendered, with what the QoE meter needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderedFrame {
    /// The frame's id, as in its payload header.
    pub frame_id: u32,
    /// When the sender captured it.
    pub capture: Time,
    /// When it rendered (its playout time, or when it became decodable if that was later).
    pub rendered: Time,
    /// Its size in bytes, as in its payload header.
    pub bytes: u32,
    /// Whether it was a key frame.
    pub key_frame: bool,
}

/// What the receiver counted since it was created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Distinct packets received (a duplicate or retransmitted copy counts once).
    pub packets_received: u64,
    /// Payloads that could not be read, or whose header contradicts earlier packets of the frame.
    pub malformed: u64,
    /// Copies of a packet already held for a frame still being assembled.
    pub duplicates: u64,
    /// Packets of frames already rendered or dropped (late copies or late retransmissions).
    pub stale: u64,
    /// Frames rendered.
    pub frames_rendered: u64,
    /// Frame ids passed over without rendering (lost, undecodable, or skipped for a key frame).
    pub frames_dropped: u64,
    /// PLIs handed out by [`Receiver::poll_pli`].
    pub plis_sent: u64,
    /// Rendered frames discarded because the caller did not poll them in time.
    pub rendered_evicted: u64,
    /// Packets that filled a sequence gap (retransmissions).
    pub packets_recovered: u64,
    /// Frames that needed a retransmitted packet.
    pub frames_retransmitted: u64,
    /// Frames decoded after their playout time (shown late).
    pub frames_late: u64,
    /// Frames passed over because a later frame decodes without them (lost discardable frames;
    /// they count in [`Self::frames_dropped`] too), without a PLI.
    pub frames_skipped: u64,
    /// Frames decoded with a minimum playout delay from the receiver's own forecast
    /// ([`Receiver::set_forecast_raise`]) above the one the sender asked for.
    pub frames_raised_by_forecast: u64,
}

/// A frame being assembled.
#[derive(Debug, Clone)]
struct Pending {
    key_frame: bool,
    capture_ns: u64,
    bytes: u32,
    packets: u16,
    /// One bit per packet index.
    received: Vec<u64>,
    received_count: u16,
    /// When its first packet arrived.
    first_arrival: Time,
    /// When its last missing packet arrived.
    completed: Option<Time>,
    /// Whether a retransmitted packet completed part of it.
    retransmitted: bool,
    /// The minimum playout delay its first packet that carried the extension asked for.
    playout_minimum: Option<Duration>,
    /// Its temporal layer and reference, as its header says.
    temporal: Option<super::payload::Temporal>,
}

impl Pending {
    fn new(h: &PayloadHeader, now: Time) -> Self {
        Self {
            key_frame: h.key_frame,
            capture_ns: h.capture_ns,
            bytes: h.frame_bytes,
            packets: h.packets_in_frame,
            received: vec![0; usize::from(h.packets_in_frame).div_ceil(64)],
            received_count: 0,
            first_arrival: now,
            completed: None,
            retransmitted: false,
            playout_minimum: None,
            temporal: h.temporal,
        }
    }

    fn matches(&self, h: &PayloadHeader) -> bool {
        self.key_frame == h.key_frame
            && self.temporal == h.temporal
            && self.capture_ns == h.capture_ns
            && self.bytes == h.frame_bytes
            && self.packets == h.packets_in_frame
    }

    fn complete(&self) -> bool {
        self.received_count == self.packets
    }
}

/// The receiving end of the synthetic video stream (see the module documentation).
#[derive(Debug, Clone)]
pub struct Receiver {
    config: ReceiverConfig,
    /// Frames being assembled, by unwrapped id; all ids are `>= next`.
    frames: BTreeMap<u64, Pending>,
    /// The highest unwrapped frame id seen (the reference for unwrapping).
    highest: Option<u64>,
    /// The next frame id to render or drop; `None` before the first packet.
    next: Option<u64>,
    /// Whether a key frame is needed before anything renders (true at the start).
    waiting_for_key: bool,
    /// Whether a frame was lost since the last key frame rendered (PLIs are due).
    pli_wanted: bool,
    last_pli: Option<Time>,
    last_now: Time,
    /// Decoded frames waiting for their playout time, in order.
    decoded: VecDeque<RenderedFrame>,
    rendered: VecDeque<RenderedFrame>,
    last_render: Time,
    recovery: RecoveryTracker,
    jitter: JitterEstimator,
    timing: Option<PlayoutTiming>,
    /// The last frame decoded without retransmission: (capture, completion).
    previous_clean: Option<(Time, Time)>,
    /// The minimum playout delay the sender last asked for (libwebrtc keeps the last value).
    signalled_minimum: Duration,
    /// The receiver's own raise around its predicted handovers, when it has a forecast.
    forecast_raise: Option<ForecastRaise>,
    /// The RTCP round-trip time, when this endpoint has one ([`Receiver::set_rtt`]).
    rtt: Option<Duration>,
    /// The last frame decoded and the last base frame decoded (every frame but a discardable
    /// one), unwrapped ids.
    last_decoded: Option<u64>,
    last_base: Option<u64>,
    stats: ReceiverStats,
}

impl Default for Receiver {
    fn default() -> Self {
        Self::new(ReceiverConfig::default())
    }
}

impl Receiver {
    /// A receiver that has seen nothing; it renders nothing before a key frame.
    ///
    /// A `max_frames` of zero is treated as one.
    pub fn new(mut config: ReceiverConfig) -> Self {
        config.max_frames = config.max_frames.max(1);
        Self {
            config,
            frames: BTreeMap::new(),
            highest: None,
            next: None,
            waiting_for_key: true,
            pli_wanted: false,
            last_pli: None,
            last_now: Time::ZERO,
            decoded: VecDeque::new(),
            rendered: VecDeque::new(),
            last_render: Time::ZERO,
            recovery: RecoveryTracker::new(),
            jitter: JitterEstimator::new(),
            timing: match config.playout {
                Playout::JitterBuffer(c) => Some(PlayoutTiming::new(c)),
                Playout::Immediate => None,
            },
            previous_clean: None,
            signalled_minimum: Duration::ZERO,
            forecast_raise: None,
            rtt: None,
            last_decoded: None,
            last_base: None,
            stats: ReceiverStats::default(),
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &ReceiverConfig {
        &self.config
    }

    /// The counters so far.
    pub fn stats(&self) -> ReceiverStats {
        ReceiverStats {
            packets_recovered: self.recovery.recovered(),
            frames_late: self.timing.as_ref().map_or(0, PlayoutTiming::late_frames),
            ..self.stats
        }
    }

    /// The jitter estimate in force at `now` (what the playout delay aims at, less the render
    /// delay).
    pub fn jitter_estimate(&self, now: Time) -> Duration {
        self.jitter.estimate(now)
    }

    /// The RTCP round-trip time, when this endpoint has one (it also sends, so report blocks
    /// about its own stream come back): once retransmissions are common, the jitter delay covers
    /// `min(0.9 x RTT, 200 ms)` of it ([`super::jitter`]). A receive-only endpoint, as a browser
    /// that only receives, never calls this.
    pub fn set_rtt(&mut self, rtt: Duration) {
        self.jitter.set_rtt(rtt);
        self.rtt = Some(rtt);
    }

    /// Raise the minimum playout delay around predicted handovers from now on, by `raise`'s rule
    /// ([`super::forecast_raise`]): the receiver behind a satellite dish does it with any sender.
    /// Its predictions come through [`Self::set_predicted_handovers`].
    pub fn set_forecast_raise(&mut self, raise: ForecastRaise) {
        self.forecast_raise = Some(raise);
    }

    /// The receiver's forecast as of `now`: `(instant, probability)` pairs, replacing those after
    /// `now` ([`ForecastRaise::set_predictions`]). Ignored without [`Self::set_forecast_raise`].
    pub fn set_predicted_handovers(&mut self, now: Time, predictions: &[(Time, f32)]) {
        if let Some(raise) = &mut self.forecast_raise {
            raise.set_predictions(now, predictions);
        }
    }

    /// [`Self::set_predicted_handovers`] from a forecast made at its `t0`, with `epoch` the
    /// instant this receiver's time zero maps to.
    pub fn set_forecast(&mut self, forecast: &Forecast, epoch: std::time::Instant) {
        let at = |i: std::time::Instant| Time::from_instant(epoch, i);
        let predictions: Vec<(Time, f32)> = forecast
            .handovers()
            .iter()
            .map(|h| (at(forecast.t0() + h.offset), h.probability))
            .collect();
        self.set_predicted_handovers(at(forecast.t0()), &predictions);
    }

    /// The minimum playout delay the receiver's own forecast gives a frame captured at
    /// `capture` (zero without a forecast raise or a jitter buffer).
    fn forecast_minimum(&self, capture: Time) -> Duration {
        match (&self.forecast_raise, &self.timing) {
            (Some(raise), Some(timing)) => raise.raise(
                timing.expected_completion(capture),
                self.recovery.repair_delay(REPAIR_QUANTILE),
                self.rtt,
            ),
            _ => Duration::ZERO,
        }
    }

    /// The current playout delay on top of the expected completion (zero without a jitter buffer).
    pub fn playout_delay(&self) -> Duration {
        self.timing
            .as_ref()
            .map_or(Duration::ZERO, PlayoutTiming::current_delay)
    }

    /// The minimum playout delay the sender last asked for (the playout-delay extension of the
    /// last decoded frame that carried one; zero before any).
    pub fn signalled_minimum(&self) -> Duration {
        self.signalled_minimum
    }

    /// Whether the receiver is waiting for a key frame (at the start, and after a loss).
    pub fn waiting_for_key_frame(&self) -> bool {
        self.waiting_for_key
    }

    /// Frame ids buffered now (bounded by [`ReceiverConfig::max_frames`]).
    pub fn buffered_frames(&self) -> usize {
        self.frames.len()
    }

    /// Handles one RTP payload that arrived at `now`.
    ///
    /// The payload header says where the packet belongs; the sequence number tells a
    /// retransmission (a packet that fills a gap) from a first transmission, for the jitter
    /// buffer. Malformed payloads and duplicates are counted and ignored.
    pub fn on_packet(&mut self, now: Time, sequence_number: u16, payload: &[u8]) {
        self.on_packet_with_playout_delay(now, sequence_number, payload, None);
    }

    /// As [`Receiver::on_packet`], for a packet that carried the playout-delay RTP header
    /// extension with `minimum` as its minimum delay (`None`: no extension). Its frame renders no
    /// earlier than its expected completion plus the minimum, which holds for later frames until
    /// another frame says otherwise (libwebrtc `VideoReceiveStream2::UpdatePlayoutDelays`).
    pub fn on_packet_with_playout_delay(
        &mut self,
        now: Time,
        sequence_number: u16,
        payload: &[u8],
        minimum: Option<Duration>,
    ) {
        let Ok(header) = PayloadHeader::read(payload) else {
            self.last_now = self.last_now.max(now);
            self.stats.malformed += 1;
            return;
        };
        self.on_described_packet(now, sequence_number, &header, minimum);
    }

    /// Handles one packet that arrived at `now`, described by `header` rather than carrying it:
    /// a real codec's packet whose frame structure a depacketizer worked out
    /// ([`super::vp8::framer`]). Otherwise as [`Receiver::on_packet_with_playout_delay`].
    pub fn on_described_packet(
        &mut self,
        now: Time,
        sequence_number: u16,
        header: &PayloadHeader,
        playout_minimum: Option<Duration>,
    ) {
        self.last_now = self.last_now.max(now);
        let header = *header;
        let recovered = self.recovery.on_packet(now, sequence_number);
        if recovered
            && let (Some(raise), Some((expected, delay))) =
                (&mut self.forecast_raise, self.recovery.last_repair())
        {
            raise.on_repair(expected, delay);
        }
        let id = self.unwrap_id(header.frame_id);
        let next = *self.next.get_or_insert(id);
        if id < next {
            self.stats.stale += 1;
            return;
        }
        let max = self.config.max_frames as u64;
        if id - next >= max {
            // Too far ahead: the oldest frames are given up to make room.
            self.skip_to(id + 1 - max);
            self.lose();
        }
        let frame = self
            .frames
            .entry(id)
            .or_insert_with(|| Pending::new(&header, now));
        if !frame.matches(&header) {
            self.stats.malformed += 1;
            return;
        }
        let (word, bit) = (usize::from(header.index / 64), header.index % 64);
        let Some(bits) = frame.received.get_mut(word) else {
            self.stats.malformed += 1;
            return;
        };
        if *bits & (1 << bit) != 0 {
            self.stats.duplicates += 1;
            return;
        }
        *bits |= 1 << bit;
        frame.playout_minimum = frame.playout_minimum.or(playout_minimum);
        frame.received_count += 1;
        frame.retransmitted |= recovered;
        if frame.complete() {
            frame.completed = Some(now);
        }
        self.stats.packets_received += 1;
        self.advance(now);
    }

    /// Declares loss whose deadline has passed at `now` and renders frames whose playout time
    /// has come.
    pub fn handle_timeout(&mut self, now: Time) {
        self.last_now = self.last_now.max(now);
        self.advance(now);
    }

    /// The next instant at which [`Receiver::handle_timeout`] or [`Receiver::poll_pli`] has
    /// something to do: a frame's playout time, a loss deadline, or the end of the PLI spacing
    /// while a PLI is wanted.
    ///
    /// `None` when idle; never at or before the latest instant handed in.
    pub fn poll_timeout(&self) -> Option<Time> {
        let playout = self
            .decoded
            .front()
            .map(|f| f.rendered)
            .filter(|&t| t > self.last_now);
        let loss = self
            .blocking()
            .and_then(|id| self.loss_deadline(id))
            .filter(|&t| t > self.last_now);
        let skip = self
            .skip_candidate()
            .map(|(_, due)| due)
            .filter(|&t| t > self.last_now);
        let pli = if self.pli_wanted {
            self.last_pli
                .map(|t| t.saturating_add(self.config.pli_interval))
                .filter(|&t| t > self.last_now)
        } else {
            None
        };
        [playout, loss, skip, pli].into_iter().flatten().min()
    }

    /// The next rendered frame, oldest first.
    pub fn poll_rendered(&mut self) -> Option<RenderedFrame> {
        self.rendered.pop_front()
    }

    /// Whether to send a PLI now: true while a key frame is awaited after a loss and the last
    /// PLI is at least [`ReceiverConfig::pli_interval`] old. A `true` counts as sent.
    pub fn poll_pli(&mut self, now: Time) -> bool {
        self.last_now = self.last_now.max(now);
        if !self.pli_wanted {
            return false;
        }
        if let Some(last) = self.last_pli
            && now.saturating_duration_since(last) < self.config.pli_interval
        {
            return false;
        }
        self.last_pli = Some(now);
        self.stats.plis_sent += 1;
        true
    }

    /// The unwrapped id of `id`: the nearest to the highest id seen.
    fn unwrap_id(&mut self, id: u32) -> u64 {
        let unwrapped = match self.highest {
            // Start one wrap up, so that ids just below the first stay representable.
            None => (1u64 << 32) + u64::from(id),
            Some(h) => {
                let delta = i64::from(id.wrapping_sub(h as u32) as i32);
                h.saturating_add_signed(delta)
            }
        };
        self.highest = Some(self.highest.map_or(unwrapped, |h| h.max(unwrapped)));
        unwrapped
    }

    /// The frame rendering is stuck on, if any: the next id normally, or the first buffered key
    /// frame while waiting for one.
    fn blocking(&self) -> Option<u64> {
        let next = self.next?;
        if self.waiting_for_key {
            self.frames
                .iter()
                .find(|(_, f)| f.key_frame)
                .map(|(&id, _)| id)
        } else {
            Some(next)
        }
    }

    /// When frame `id` is declared lost: `loss_timeout` (`key_frame_timeout` while a key frame
    /// is awaited) after the first arrival of any later frame; `None` while no later frame has
    /// arrived.
    fn loss_deadline(&self, id: u64) -> Option<Time> {
        self.frames
            .range(id + 1..)
            .map(|(_, f)| f.first_arrival)
            .min()
            .map(|t| {
                t.saturating_add(if self.waiting_for_key {
                    self.config.key_frame_timeout
                } else {
                    self.config.loss_timeout
                })
            })
    }

    fn lost(&self, now: Time, id: u64) -> bool {
        self.loss_deadline(id).is_some_and(|t| t <= now)
    }

    /// Drops every frame before `target` and moves the render point there.
    fn skip_to(&mut self, target: u64) {
        let Some(next) = self.next else { return };
        if target <= next {
            return;
        }
        self.frames = self.frames.split_off(&target);
        self.stats.frames_dropped += target - next;
        self.next = Some(target);
    }

    /// A frame was lost: wait for a key frame and ask for one.
    fn lose(&mut self) {
        self.waiting_for_key = true;
        self.pli_wanted = true;
    }

    /// Decodes frame `id` at `now` and schedules its rendering.
    fn decode(&mut self, id: u64, now: Time) {
        let Some(frame) = self.frames.remove(&id) else {
            return;
        };
        let capture = Time::from_nanos(frame.capture_ns);
        let completed = frame.completed.unwrap_or(now);
        if frame.retransmitted {
            self.stats.frames_retransmitted += 1;
            self.jitter.on_frame_retransmitted(now);
        } else {
            if let Some((previous_capture, previous_completed)) = self.previous_clean
                && capture > previous_capture
            {
                let arrival = completed.as_nanos() as f64 - previous_completed.as_nanos() as f64;
                let media = capture.as_nanos() as f64 - previous_capture.as_nanos() as f64;
                self.jitter
                    .on_frame(completed, (arrival - media) / 1e6, frame.bytes);
            }
            self.previous_clean = Some((capture, completed));
            if let Some(timing) = &mut self.timing {
                timing.on_frame_complete(capture, completed);
            }
        }
        if let Some(minimum) = frame.playout_minimum {
            self.signalled_minimum = minimum;
        }
        let jitter = self.jitter.estimate(now);
        let own = self.forecast_minimum(capture);
        if own > self.signalled_minimum {
            self.stats.frames_raised_by_forecast += 1;
        }
        let minimum = self.signalled_minimum.max(own);
        let due = match &mut self.timing {
            Some(timing) => timing.schedule(now, capture, jitter, minimum),
            None => now,
        };
        let due = due.max(self.last_render);
        self.last_render = due;
        if self.decoded.len() >= self.config.max_frames
            && let Some(mut oldest) = self.decoded.pop_front()
        {
            oldest.rendered = now;
            self.push_rendered(oldest);
        }
        self.decoded.push_back(RenderedFrame {
            frame_id: id as u32,
            capture,
            rendered: due,
            bytes: frame.bytes,
            key_frame: frame.key_frame,
        });
        self.next = Some(id + 1);
        self.last_decoded = Some(id);
        if !frame.temporal.is_some_and(|t| t.discardable) {
            self.last_base = Some(id);
        }
        if frame.key_frame {
            self.waiting_for_key = false;
            self.pli_wanted = false;
        }
    }

    /// The unwrapped id of the frame `frame` (at unwrapped `id`) references: `None` for a key
    /// frame.
    fn reference_of(id: u64, frame: &Pending) -> Option<u64> {
        if frame.key_frame {
            return None;
        }
        Some(match frame.temporal {
            Some(t) => id.saturating_sub(u64::from((id as u32).wrapping_sub(t.reference))),
            None => id.saturating_sub(1),
        })
    }

    /// Whether frame `id` can be decoded now that the frames decoded so far are: a key frame
    /// always; a frame without temporal fields when the frame before it was decoded; one with
    /// them when the base frame it references is the last base frame decoded.
    fn decodable(&self, id: u64, frame: &Pending) -> bool {
        match Self::reference_of(id, frame) {
            None => true,
            Some(reference) if frame.temporal.is_some() => self.last_base == Some(reference),
            Some(reference) => self.last_decoded == Some(reference),
        }
    }

    /// A frame after the one waited for that is complete and decodable without it, with its
    /// render time as it would be scheduled now: the decoder moves on to it once that time has
    /// come. Only frames with temporal fields qualify (a stream without them keeps the linear
    /// chain).
    fn skip_candidate(&self) -> Option<(u64, Time)> {
        let next = self.next?;
        if self.waiting_for_key || self.frames.get(&next).is_some_and(Pending::complete) {
            return None;
        }
        let (&id, frame) = self.frames.range(next + 1..).find(|&(&id, f)| {
            f.complete() && !f.key_frame && f.temporal.is_some() && self.decodable(id, f)
        })?;
        let due = match &self.timing {
            Some(timing) => {
                let capture = Time::from_nanos(frame.capture_ns);
                let minimum = frame
                    .playout_minimum
                    .unwrap_or(self.signalled_minimum)
                    .max(self.forecast_minimum(capture));
                timing.clone().schedule(
                    self.last_now,
                    capture,
                    self.jitter.estimate(self.last_now),
                    minimum,
                )
            }
            None => self.last_now,
        };
        Some((id, due.max(self.last_render)))
    }

    fn push_rendered(&mut self, frame: RenderedFrame) {
        if self.rendered.len() >= self.config.max_frames {
            self.rendered.pop_front();
            self.stats.rendered_evicted += 1;
        }
        self.rendered.push_back(frame);
        self.stats.frames_rendered += 1;
    }

    /// Renders the decoded frames whose playout time has come.
    fn render_due(&mut self, now: Time) {
        while self.decoded.front().is_some_and(|f| f.rendered <= now) {
            if let Some(frame) = self.decoded.pop_front() {
                self.push_rendered(frame);
            }
        }
    }

    /// Decodes and drops frames until decoding is blocked on an incomplete frame, then renders
    /// what is due.
    fn advance(&mut self, now: Time) {
        self.decode_ready(now);
        self.render_due(now);
    }

    fn decode_ready(&mut self, now: Time) {
        while let Some(next) = self.next {
            if self.waiting_for_key {
                let Some(key) = self.blocking() else {
                    // No key frame buffered: every buffered delta frame is undecodable.
                    if let Some((&last, _)) = self.frames.last_key_value() {
                        self.skip_to(last + 1);
                        self.pli_wanted = true;
                    }
                    return;
                };
                if key > next {
                    self.skip_to(key);
                    self.pli_wanted = true;
                }
                if self.frames.get(&key).is_some_and(Pending::complete) {
                    self.decode(key, now);
                } else if self.lost(now, key) {
                    self.skip_to(key + 1);
                    self.pli_wanted = true;
                } else {
                    return;
                }
            } else if let Some(frame) = self.frames.get(&next).filter(|f| f.complete()) {
                if self.decodable(next, frame) {
                    self.decode(next, now);
                } else {
                    // What it references was skipped or lost: as a loss.
                    self.skip_to(next + 1);
                    self.lose();
                }
            } else if let Some((&key, _)) = self
                .frames
                .range(next + 1..)
                .find(|(_, f)| f.key_frame && f.complete())
            {
                // A complete later key frame needs nothing earlier: skip to it.
                self.skip_to(key);
            } else if let Some((id, _)) = self.skip_candidate().filter(|&(_, due)| due <= now) {
                // A later frame decodes without the frames before it, and is due.
                self.stats.frames_skipped += id - next;
                self.skip_to(id);
            } else if self.lost(now, next) {
                let discardable = self
                    .frames
                    .get(&next)
                    .is_some_and(|f| f.temporal.is_some_and(|t| t.discardable));
                self.skip_to(next + 1);
                if discardable {
                    // Nothing references it: the base frames go on.
                    self.stats.frames_skipped += 1;
                } else {
                    self.lose();
                }
            } else {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::payload::HEADER_LEN;

    const FRAME_BYTES: u32 = 2_400;

    /// The payload of packet `index` of `packets` of frame `id`, captured at `id` x 33 ms.
    fn payload(id: u32, key: bool, index: u16, packets: u16) -> Vec<u8> {
        let mut buf = vec![0u8; HEADER_LEN + 8];
        PayloadHeader {
            key_frame: key,
            frame_id: id,
            index,
            packets_in_frame: packets,
            capture_ns: u64::from(id) * 33_000_000,
            frame_bytes: FRAME_BYTES,
            temporal: None,
        }
        .write(&mut buf);
        buf
    }

    fn ms(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    /// As [`payload`], with temporal fields: `discardable` (a layer-sync frame) or a base frame,
    /// referencing frame `reference`.
    fn layered(id: u32, discardable: bool, reference: u32, index: u16, packets: u16) -> Vec<u8> {
        let mut buf = vec![0u8; crate::media::payload::LAYERED_HEADER_LEN + 8];
        PayloadHeader {
            key_frame: false,
            frame_id: id,
            index,
            packets_in_frame: packets,
            capture_ns: u64::from(id) * 33_000_000,
            frame_bytes: FRAME_BYTES,
            temporal: Some(crate::media::payload::Temporal {
                discardable,
                reference,
            }),
        }
        .write(&mut buf);
        buf
    }

    /// Every packet of a layered frame at `now`.
    fn layered_frame(rx: &mut Receiver, now: Time, id: u32, discardable: bool, reference: u32) {
        for i in 0..2 {
            rx.on_packet(now, 0, &layered(id, discardable, reference, i, 2));
        }
    }

    /// A receiver that renders at decode time, so assembly rules show alone, and gives up an
    /// incomplete frame after 500 ms (the timings below are written for that value).
    fn immediate() -> Receiver {
        Receiver::new(ReceiverConfig {
            playout: Playout::Immediate,
            loss_timeout: Duration::from_millis(500),
            ..ReceiverConfig::default()
        })
    }

    /// Frame `id` (captured at `id` x 33 ms), in `packets` packets with consecutive sequence
    /// numbers from `seq`, all arriving at `now`.
    fn frame_seq(rx: &mut Receiver, now: Time, id: u32, key: bool, packets: u16, seq: u16) {
        for i in 0..packets {
            rx.on_packet(now, seq + i, &payload(id, key, i, packets));
        }
    }

    /// Sends every packet of a frame at `now`.
    fn frame(rx: &mut Receiver, now: Time, id: u32, key: bool, packets: u16) {
        for i in 0..packets {
            rx.on_packet(now, 0, &payload(id, key, i, packets));
        }
    }

    fn rendered(rx: &mut Receiver) -> Vec<(u32, u64)> {
        std::iter::from_fn(|| rx.poll_rendered())
            .map(|f| (f.frame_id, f.rendered.as_millis()))
            .collect()
    }

    #[test]
    fn complete_frames_render_in_order_at_the_arrival_that_completes_them() {
        let mut rx = immediate();
        rx.on_packet(ms(0), 0, &payload(0, true, 0, 2));
        assert_eq!(rendered(&mut rx), vec![]);
        rx.on_packet(ms(5), 1, &payload(0, true, 1, 2));
        frame(&mut rx, ms(33), 1, false, 1);
        let first = rx.poll_rendered();
        assert_eq!(
            first,
            Some(RenderedFrame {
                frame_id: 0,
                capture: ms(0),
                rendered: ms(5),
                bytes: FRAME_BYTES,
                key_frame: true,
            })
        );
        assert_eq!(rendered(&mut rx), vec![(1, 33)]);
        assert_eq!(rx.stats().frames_rendered, 2);
    }

    #[test]
    fn a_later_frame_waits_for_an_incomplete_one_and_renders_when_a_retransmission_completes_it() {
        let mut rx = immediate();
        frame(&mut rx, ms(0), 0, true, 1);
        rx.on_packet(ms(33), 1, &payload(1, false, 0, 2)); // packet 1 of frame 1 is lost
        frame(&mut rx, ms(66), 2, false, 1);
        frame(&mut rx, ms(99), 3, false, 1);
        assert_eq!(rendered(&mut rx), vec![(0, 0)]);
        assert_eq!(rx.poll_timeout(), Some(ms(566)));
        rx.on_packet(ms(150), 2, &payload(1, false, 1, 2)); // the retransmission
        assert_eq!(rendered(&mut rx), vec![(1, 150), (2, 150), (3, 150)]);
        assert_eq!(rx.stats().frames_dropped, 0);
        assert!(!rx.poll_pli(ms(150)));
        assert_eq!(rx.poll_timeout(), None);
    }

    #[test]
    fn a_loss_sends_one_pli_per_interval_and_skips_delta_frames_until_a_key_frame() {
        let mut rx = immediate();
        frame(&mut rx, ms(0), 0, true, 1);
        rx.on_packet(ms(33), 1, &payload(1, false, 0, 2)); // never completed
        frame(&mut rx, ms(66), 2, false, 1);
        assert_eq!(rx.poll_timeout(), Some(ms(566)));
        rx.handle_timeout(ms(565));
        assert!(!rx.poll_pli(ms(565)));
        rx.handle_timeout(ms(566));
        assert!(rx.waiting_for_key_frame());
        assert_eq!(rx.stats().frames_dropped, 2); // frame 1, and frame 2 that needs it
        assert!(rx.poll_pli(ms(566)));
        assert!(!rx.poll_pli(ms(600)));
        assert_eq!(rx.poll_timeout(), Some(ms(866)));
        frame(&mut rx, ms(700), 3, false, 1); // delta frames are skipped
        assert!(!rx.poll_pli(ms(865)));
        assert!(rx.poll_pli(ms(866)));
        frame(&mut rx, ms(900), 4, true, 2); // the key frame
        frame(&mut rx, ms(933), 5, false, 1);
        assert_eq!(rendered(&mut rx), vec![(0, 0), (4, 900), (5, 933)]);
        assert!(!rx.waiting_for_key_frame());
        assert!(!rx.poll_pli(ms(2_000)));
        let stats = rx.stats();
        assert_eq!(stats.frames_dropped, 3);
        assert_eq!(stats.plis_sent, 2);
        assert_eq!(stats.frames_rendered, 3);
    }

    #[test]
    fn a_complete_later_key_frame_is_rendered_without_waiting_for_the_loss_timeout() {
        let mut rx = immediate();
        frame(&mut rx, ms(0), 0, true, 1);
        rx.on_packet(ms(33), 1, &payload(1, false, 0, 2));
        frame(&mut rx, ms(66), 2, true, 1);
        assert_eq!(rendered(&mut rx), vec![(0, 0), (2, 66)]);
        assert_eq!(rx.stats().frames_dropped, 1);
        assert!(!rx.poll_pli(ms(66)));
    }

    #[test]
    fn a_lost_discardable_frame_does_not_stall_the_base_frame_after_it() {
        let mut rx = immediate();
        frame(&mut rx, ms(0), 0, true, 1);
        frame(&mut rx, ms(33), 1, false, 1);
        // The window: frames 2 to 4 are discardable and reference frame 1; frame 3 loses a
        // packet for good, frame 5 is the base frame after the window.
        layered_frame(&mut rx, ms(66), 2, true, 1);
        rx.on_packet(ms(99), 0, &layered(3, true, 1, 0, 2));
        layered_frame(&mut rx, ms(132), 4, true, 1);
        layered_frame(&mut rx, ms(165), 5, false, 1);
        frame(&mut rx, ms(198), 6, false, 1);
        assert_eq!(
            rendered(&mut rx),
            vec![(0, 0), (1, 33), (2, 66), (4, 132), (5, 165), (6, 198)]
        );
        let stats = rx.stats();
        assert_eq!((stats.frames_skipped, stats.frames_dropped), (1, 1));
        assert!(!rx.waiting_for_key_frame());
        assert!(!rx.poll_pli(ms(2_000)), "no key frame is asked for");
        assert_eq!(
            rx.poll_timeout(),
            None,
            "nothing waits for the loss timeout"
        );
    }

    #[test]
    fn a_discardable_frame_lost_whole_is_skipped_and_one_declared_lost_asks_for_nothing() {
        let mut rx = immediate();
        frame(&mut rx, ms(0), 0, true, 1);
        // Frame 1 (discardable) never arrives; frame 2, the base after it, references frame 0.
        layered_frame(&mut rx, ms(66), 2, false, 0);
        assert_eq!(rendered(&mut rx), vec![(0, 0), (2, 66)]);
        // Frame 3 is discardable and incomplete, and nothing later decodes without it until
        // the loss timeout: it is then skipped, without a PLI.
        rx.on_packet(ms(99), 0, &layered(3, true, 2, 0, 2));
        frame(&mut rx, ms(132), 4, false, 1); // references frame 3: waits for it
        assert_eq!(rx.poll_timeout(), Some(ms(632)));
        rx.handle_timeout(ms(632));
        // Frame 4 (no temporal fields) references the skipped frame 3: a loss after all.
        assert!(rx.waiting_for_key_frame());
        assert_eq!(rx.stats().frames_skipped, 2);
    }

    #[test]
    fn a_lost_base_frame_still_stalls_until_the_loss_timeout_and_asks_for_a_key_frame() {
        let mut rx = immediate();
        frame(&mut rx, ms(0), 0, true, 1);
        layered_frame(&mut rx, ms(33), 1, true, 0);
        // Frame 2, the base frame after the window, loses a packet for good.
        rx.on_packet(ms(66), 0, &layered(2, false, 0, 0, 2));
        frame(&mut rx, ms(99), 3, false, 1);
        assert_eq!(rendered(&mut rx), vec![(0, 0), (1, 33)]);
        assert_eq!(rx.poll_timeout(), Some(ms(599)));
        rx.handle_timeout(ms(599));
        assert!(rx.waiting_for_key_frame());
        assert!(rx.poll_pli(ms(599)));
        assert_eq!(rx.stats().frames_skipped, 0);
        assert_eq!(rendered(&mut rx), vec![]);
    }

    #[test]
    fn with_the_jitter_buffer_a_lost_discardable_frame_is_skipped_at_the_next_frame_s_render_time()
    {
        let mut rx = Receiver::default();
        let mut out = Vec::new();
        let mut seq = 0u16;
        for id in 0..60u32 {
            let now = ms(u64::from(id) * 33 + 40);
            // Frames 40 to 48 are discardable (referencing 39); frame 49 is the base after
            // them; frame 44 loses its second packet for good.
            let window = (40..49).contains(&id);
            for i in 0..2u16 {
                if id == 44 && i == 1 {
                    continue;
                }
                let p = match id {
                    _ if window => layered(id, true, 39, i, 2),
                    49 => layered(id, false, 39, i, 2),
                    _ => payload(id, id == 0, i, 2),
                };
                rx.on_packet(now, seq.wrapping_add(i), &p);
            }
            seq = seq.wrapping_add(2);
            while let Some(t) = rx
                .poll_timeout()
                .filter(|&t| t < ms(u64::from(id + 1) * 33 + 40))
            {
                rx.handle_timeout(t);
            }
            out.extend(std::iter::from_fn(|| rx.poll_rendered()));
        }
        let ids: Vec<u32> = out.iter().map(|f| f.frame_id).collect();
        assert!(!ids.contains(&44));
        assert_eq!(ids.len(), 59);
        // Frame 45 rendered on its own schedule (capture + transit + the 10-ms delay frames on
        // time keep), not late.
        let f45 = out.iter().find(|f| f.frame_id == 45).unwrap();
        let delay = f45.rendered.as_millis() - f45.capture.as_millis();
        assert!((50..=51).contains(&delay), "{delay}");
        assert_eq!(rx.stats().frames_skipped, 1);
        assert_eq!(rx.stats().plis_sent, 0);
    }

    #[test]
    fn an_incomplete_first_key_frame_is_given_up_after_200_ms_and_another_asked_for() {
        let mut rx = Receiver::new(ReceiverConfig {
            playout: Playout::Immediate,
            ..ReceiverConfig::default()
        });
        // The first key frame loses its second packet; frame 1 follows.
        rx.on_packet(ms(0), 0, &payload(0, true, 0, 2));
        frame_seq(&mut rx, ms(33), 1, false, 1, 2);
        assert_eq!(rx.poll_timeout(), Some(ms(233)));
        rx.handle_timeout(ms(233));
        assert!(rx.poll_pli(ms(233)));
        frame_seq(&mut rx, ms(300), 2, true, 1, 3);
        assert_eq!(rendered(&mut rx), vec![(2, 300)]);
    }

    #[test]
    fn delta_frames_before_the_first_key_frame_are_dropped_and_ask_for_one() {
        let mut rx = immediate();
        frame(&mut rx, ms(0), 7, false, 1);
        assert!(rx.poll_pli(ms(0)));
        frame(&mut rx, ms(33), 8, true, 1);
        assert_eq!(rendered(&mut rx), vec![(8, 33)]);
        assert_eq!(rx.stats().frames_dropped, 1);
    }

    #[test]
    fn malformed_and_duplicate_packets_are_counted_not_fatal() {
        let mut rx = immediate();
        rx.on_packet(ms(0), 0, &[]);
        rx.on_packet(ms(0), 0, &[0xFF; 40]);
        rx.on_packet(ms(0), 0, &payload(0, true, 0, 2));
        rx.on_packet(ms(1), 0, &payload(0, true, 0, 2)); // duplicate
        let mut lying = payload(0, true, 1, 3); // contradicts the packet count
        rx.on_packet(ms(1), 0, &lying);
        lying.truncate(HEADER_LEN - 1);
        rx.on_packet(ms(1), 0, &lying);
        rx.on_packet(ms(2), 0, &payload(0, true, 1, 2));
        rx.on_packet(ms(3), 0, &payload(0, true, 1, 2)); // a copy of a rendered frame
        let stats = rx.stats();
        assert_eq!(stats.malformed, 4);
        assert_eq!(stats.duplicates, 1);
        assert_eq!(stats.stale, 1);
        assert_eq!(stats.packets_received, 2);
        assert_eq!(rendered(&mut rx), vec![(0, 2)]);
    }

    #[test]
    fn frame_ids_wrap_around_u32() {
        let mut rx = immediate();
        frame(&mut rx, ms(0), u32::MAX, true, 1);
        frame(&mut rx, ms(33), 0, false, 1);
        assert_eq!(rendered(&mut rx), vec![(u32::MAX, 0), (0, 33)]);
    }

    #[test]
    fn memory_stays_bounded_over_100k_frames_with_losses_and_unpolled_output() {
        let mut rx = immediate();
        let max = rx.config().max_frames;
        for id in 0..100_000u32 {
            let now = Time::from_millis(u64::from(id) * 33);
            // Every 1000th frame loses a packet for good; every 5000th is a key frame.
            let key = id % 5_000 == 0;
            let lose = id % 1_000 == 500;
            rx.on_packet(now, 0, &payload(id, key, 0, 2));
            if !lose {
                rx.on_packet(now, 0, &payload(id, key, 1, 2));
            }
            rx.handle_timeout(now);
            assert!(rx.buffered_frames() <= max);
        }
        assert!(rx.rendered.len() <= max);
        let stats = rx.stats();
        assert_eq!(stats.frames_rendered, 10_000); // 500 per 5000-frame key-frame period
        assert_eq!(stats.frames_dropped, 90_000);
        assert_eq!(stats.rendered_evicted, stats.frames_rendered - max as u64);
    }

    #[test]
    fn a_frame_far_ahead_forces_the_oldest_frames_out() {
        let mut rx = immediate();
        frame(&mut rx, ms(0), 0, true, 1);
        rx.on_packet(ms(33), 0, &payload(1, false, 0, 2));
        frame(&mut rx, ms(40), 1_000, true, 1);
        assert_eq!(rendered(&mut rx), vec![(0, 0), (1_000, 40)]);
        assert_eq!(rx.stats().frames_dropped, 999);
        assert!(rx.buffered_frames() <= 1);
    }

    #[test]
    fn with_the_jitter_buffer_a_steady_stream_renders_at_capture_plus_transit_plus_ten_ms() {
        let mut rx = Receiver::default();
        let mut out = Vec::new();
        for id in 0..100u32 {
            let now = ms(u64::from(id) * 33 + 40);
            frame_seq(&mut rx, now, id, id == 0, 1, id as u16);
            while let Some(t) = rx
                .poll_timeout()
                .filter(|&t| t < ms(u64::from(id + 1) * 33 + 40))
            {
                rx.handle_timeout(t);
            }
            out.extend(std::iter::from_fn(|| rx.poll_rendered()));
        }
        assert_eq!(out.len(), 100);
        for f in &out[40..] {
            // Transit 40 ms and the first jitter estimate, 10 ms of OS jitter: frames on time
            // never raise the current delay towards the 21-ms target.
            let delay = f.rendered.as_millis() - f.capture.as_millis();
            assert!(
                (50..=51).contains(&delay),
                "frame {} delay {delay}",
                f.frame_id
            );
        }
        assert_eq!(rx.stats().frames_late, 0);
    }

    /// 300 frames of two packets, 33 ms apart with 40 ms of transit; every 10th frame's second
    /// packet is recovered 200 ms late. Returns the receiver and the capture-to-render delay of
    /// the frames of the last 100 that waited for no recovery (in order behind a recovered one,
    /// frames 5 to 9 of each ten, and frame 0, which may not render before frame 9, do).
    fn recovered_every_tenth_frame(rtt: Option<Duration>) -> (Receiver, Vec<u64>) {
        let mut rx = Receiver::default();
        if let Some(rtt) = rtt {
            rx.set_rtt(rtt);
        }
        let mut seq = 0u16;
        let mut rendered = Vec::new();
        for id in 0..300u32 {
            let now = ms(u64::from(id) * 33 + 40);
            let lossy = id % 10 == 5;
            rx.on_packet(now, seq, &payload(id, id == 0, 0, 2));
            if lossy {
                rx.on_packet(now, seq + 2, &payload(id + 1, false, 0, 2));
                rx.on_packet(now, seq + 3, &payload(id + 1, false, 1, 2));
                rx.on_packet(
                    now + Duration::from_millis(200),
                    seq + 1,
                    &payload(id, false, 1, 2),
                );
            } else if id % 10 != 6 {
                rx.on_packet(now, seq + 1, &payload(id, id == 0, 1, 2));
            }
            seq = seq.wrapping_add(2);
            rx.handle_timeout(now + Duration::from_millis(200));
            rendered.extend(std::iter::from_fn(|| rx.poll_rendered()));
        }
        let clean = rendered[200..]
            .iter()
            .filter(|f| matches!(f.frame_id % 10, 1..=4))
            .map(|f| f.rendered.as_millis() - f.capture.as_millis())
            .collect();
        (rx, clean)
    }

    #[test]
    fn with_an_rtcp_rtt_retransmissions_add_nine_tenths_of_it_to_the_playout_delay() {
        let (with_rtt, clean) = recovered_every_tenth_frame(Some(Duration::from_millis(150)));
        let (without, clean_without) = recovered_every_tenth_frame(None);
        let stats = with_rtt.stats();
        assert_eq!(stats.frames_retransmitted, 30);
        assert_eq!(stats.packets_recovered, 30);
        let now = ms(10_000);
        assert_eq!(
            with_rtt.jitter_estimate(now) - without.jitter_estimate(now),
            Duration::from_millis(135)
        );
        // Late recovered frames raised the current delay towards the target (jitter plus the
        // 10-ms render delay, never beyond it): the clean frames render at transit 40 plus
        // at least the round-trip term and at most the target.
        let target = |rx: &Receiver| (rx.jitter_estimate(now).as_secs_f64() * 1e3) as u64 + 10;
        let most = 40 + target(&with_rtt);
        assert!(
            clean.iter().all(|&d| (40 + 135..=most).contains(&d)),
            "{clean:?}"
        );
        let most = 40 + target(&without);
        assert!(
            clean_without.iter().all(|&d| (50..=most).contains(&d)),
            "{clean_without:?}"
        );
        assert!(clean_without.iter().all(|&d| d < 70), "{clean_without:?}");
    }

    /// Frames at 30 fps over a 40-ms transit, two packets each; the frame captured at each
    /// predicted instant (every 990 ms) loses its second packet, which arrives 183 ms after the
    /// first (the next frame reveals the gap 33 ms later, the repair takes 150 ms more). With
    /// `forecast`, the receiver raises its own minimum playout delay around those instants.
    fn lossy_at_every_predicted_instant(forecast: bool) -> (Receiver, Vec<RenderedFrame>) {
        let mut rx = Receiver::default();
        if forecast {
            rx.set_forecast_raise(ForecastRaise::with_defaults());
            let predictions: Vec<(Time, f32)> = (1..20u64).map(|k| (ms(k * 990), 1.0)).collect();
            rx.set_predicted_handovers(ms(0), &predictions);
        }
        let mut repair: Option<(Time, u16, u32)> = None;
        let mut rendered = Vec::new();
        for id in 0..600u32 {
            let now = ms(u64::from(id) * 33 + 40);
            if let Some((at, seq, of)) = repair.filter(|&(at, _, _)| at <= now) {
                rx.handle_timeout(at);
                rx.on_packet(at, seq, &payload(of, false, 1, 2));
                repair = None;
            }
            rx.handle_timeout(now);
            let seq = (id * 2) as u16;
            rx.on_packet(now, seq, &payload(id, id == 0, 0, 2));
            if id > 0 && id % 30 == 0 {
                repair = Some((now + Duration::from_millis(183), seq + 1, id));
            } else {
                rx.on_packet(now, seq + 1, &payload(id, id == 0, 1, 2));
            }
            rendered.extend(std::iter::from_fn(|| rx.poll_rendered()));
        }
        rx.handle_timeout(ms(20_000));
        rendered.extend(std::iter::from_fn(|| rx.poll_rendered()));
        (rx, rendered)
    }

    #[test]
    fn the_receivers_own_forecast_raise_waits_for_repairs_at_predicted_instants_without_stalls() {
        let (plain, _) = lossy_at_every_predicted_instant(false);
        let (raised, frames) = lossy_at_every_predicted_instant(true);
        // Without the raise every lossy frame and the four behind it are shown late; with it,
        // only those of the first 7 instants, before the receiver had measured 8 repairs (the
        // 8th lossy frame is scheduled after its own repair).
        assert_eq!(plain.stats().frames_late, 19 * 5);
        assert_eq!(plain.stats().frames_raised_by_forecast, 0);
        assert_eq!(raised.stats().frames_late, 7 * 5);
        assert!(raised.stats().frames_raised_by_forecast > 12 * 6);
        // A raised frame renders one repair (183 ms) plus the render margin after its expected
        // completion.
        let lossy = frames
            .iter()
            .find(|f| f.frame_id == 300)
            .expect("frame 300");
        assert_eq!(
            lossy.rendered.as_millis() - lossy.capture.as_millis(),
            40 + 193
        );
        // No interval between two rendered frames reaches a stall (twice the 33-ms interval).
        let worst = frames[270..]
            .windows(2)
            .map(|w| w[1].rendered.as_millis() - w[0].rendered.as_millis())
            .max()
            .unwrap_or(0);
        assert!(worst < 66, "{worst} ms");
    }
}

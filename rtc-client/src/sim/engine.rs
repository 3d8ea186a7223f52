//! The virtual-time event loop of one simulated call: [`SimCall::new`] sets the call up,
//! [`SimCall::step`] serves the next event, [`SimCall::finish`] closes the last interval and
//! counts (the module documentation of [`crate::sim`] describes what runs).

use super::config::{CallConfig, SimError};
use super::in_flight::InFlight;
use super::result::{CallResult, RecoveryCounts, SenderCounts};
use crate::call::NackChoice;
use crate::call::camera::Camera;
use crate::call::chains::{CallPadding, ReceiverHandles, receiver_chain, sender_chain};
use crate::call::core::{CallCore, FarEnd};
use crate::call::interval::{FecTotals, ms};
use crate::call::streams::{
    PADDING_PAYLOAD_TYPE, PADDING_SSRC, PLAYOUT_DELAY_EXTENSION_ID, RECEIVER_SSRC, VIDEO_FEC_SSRC,
    VIDEO_SSRC, fec_stream, padding_stream, playout_minimum, rtp_of, rtx_stream, video_stream,
};
use crate::call::video::Video;
use crate::fec::FecReceiverHandle;
use crate::forecast::{self, ForecastInputs, ForecastSpec};
use crate::link::{Link, Time};
use crate::media::forecast_raise::ForecastRaise;
use crate::media::playout::{CompletionModel, PlayoutConfig};
use crate::media::qoe::QoeMeter;
use crate::media::receiver::{Playout, Receiver, ReceiverConfig};
use crate::nack::NackGeneratorHandle;
use handover_predictor::HandoverSource;
use pacer::nack::NackResponderHandle;
use pacer::sender::ChainKind;
use pacer::telemetry::QoeRecord;
use rtc_interceptor::{
    Attribute, AttributedPacket, BoxedInterceptor, Interceptor, Packet, Registry, TaggedPacket,
};
use rtc_rtcp::payload_feedbacks::picture_loss_indication::PictureLossIndication;
use rtc_rtcp::transport_feedbacks::transport_layer_nack::TransportLayerNack;
use rtc_shared::TransportContext;
use rtc_shared::marshal::MarshalSize;
use rustc_hash::FxHashSet;
use std::time::{Duration, Instant};

/// How often the simulated call hands the NACK pair and the loss protection the RTT, as RTCP
/// receiver reports would, and the receiver sends its reports (libwebrtc's video RTCP report
/// interval, 1 s).
pub const RTCP_INTERVAL: Duration = Duration::from_secs(1);
/// The webrtc-rs driver serves a deadline that is not in the future this much later
/// (webrtc-rs's `MIN_IMMEDIATE_TIMEOUT_INTERVAL`).
const MIN_IMMEDIATE_TIMEOUT: Duration = Duration::from_millis(1);
/// How often a receiver that raises its own playout delay reads its forecast (each covers 120
/// s, so this only bounds how late a changed prediction is seen).
///
/// Chosen: 10 s, the shortest decision interval the sender's policies are run with.
pub const RECEIVER_FORECAST_INTERVAL: Duration = Duration::from_secs(10);

/// The receiver's own forecast, when it raises its own playout delay.
struct ReceiverForecast {
    source: Box<dyn HandoverSource>,
    next: Time,
}

/// One simulated call in progress.
pub struct SimCall {
    epoch: Instant,
    end: Time,
    now: Time,
    first: bool,
    forward_link: Link,
    reverse_link: Link,
    sender: BoxedInterceptor,
    receiver: BoxedInterceptor,
    /// Each chain's last answer to `poll_timeout`, kept until something is handed to the chain
    /// or to the handles its interceptors read (`None`: ask again). A chain's deadline moves
    /// only then, and most events concern one side only.
    sender_deadline: Option<Option<Time>>,
    receiver_deadline: Option<Option<Time>>,
    nack_handles: Option<(NackGeneratorHandle, NackResponderHandle)>,
    fec_receiver: FecReceiverHandle,
    /// The sending side: the installed sender and its policy, the camera, the intervals.
    core: CallCore,
    media_receiver: Receiver,
    meter: QoeMeter,
    forward: InFlight<TaggedPacket>,
    reverse: InFlight<TaggedPacket>,
    rendered_per_second: Vec<u32>,
    max_frame_delay_ms_per_second: Vec<u32>,
    max_playout_minimum_ms_per_second: Vec<u32>,
    rtp_packets_sent: u64,
    stale_deadlines: u64,
    cwnd: pacer::CwndMode,
    recovery: RecoveryCounts,
    nacked: FxHashSet<i64>,
    last_pli: Option<Time>,
    /// The one-way delays of the latest packets sent on each link.
    forward_delay: Option<Duration>,
    reverse_delay: Option<Duration>,
    next_rtt_report: Time,
    /// Whether the receiver is handed the RTT of each report (a two-way call).
    receiver_rtt: bool,
    receiver_forecast: Option<ReceiverForecast>,
    /// Retransmission bytes sent since the last report, for the NACK rate.
    retransmitted_bytes: u64,
}

fn sender_err(e: rtc_shared::error::Error) -> SimError {
    SimError::Chain {
        side: "sender",
        message: e.to_string(),
    }
}

fn receiver_err(e: rtc_shared::error::Error) -> SimError {
    SimError::Chain {
        side: "receiver",
        message: e.to_string(),
    }
}

impl SimCall {
    /// Sets the call up: both links, both interceptor chains with their streams bound, the
    /// media engine, the policy controller and the truth. `epoch` is the `Instant` virtual time
    /// zero maps to.
    ///
    /// # Errors
    ///
    /// [`SimError::Link`] for an invalid link configuration, [`SimError::Duration`] for a
    /// duration beyond what an [`Instant`] offset can hold, [`SimError::Forecast`] for a
    /// forecast that cannot apply to the call (`orbital` over a scenario without orbits).
    pub fn new(config: &CallConfig, epoch: Instant) -> Result<Self, SimError> {
        let forward_link =
            Link::new(config.forward.clone(), config.forward_seed).map_err(|source| {
                SimError::Link {
                    direction: "forward",
                    source,
                }
            })?;
        let reverse_link =
            Link::new(config.reverse.clone(), config.reverse_seed).map_err(|source| {
                SimError::Link {
                    direction: "reverse",
                    source,
                }
            })?;
        if epoch.checked_add(config.duration * 2).is_none() {
            return Err(SimError::Duration(config.duration));
        }

        let (sender, mut control) = sender_chain(
            Registry::new(),
            config.sender(),
            config.policy.actions(),
            CallPadding::Own,
            ChainKind::Direct,
        )?;
        let (receiver, ReceiverHandles { generator, fec }) =
            receiver_chain(config.nack, ChainKind::Direct);
        let nack_handles = generator.zip(control.handles().nack.clone());
        let mut sender: BoxedInterceptor = Box::new(sender.build());
        let mut receiver: BoxedInterceptor = Box::new(receiver.build());
        let video = video_stream(config.nack == NackChoice::Libwebrtc, config.fec.is_on());
        // The RTX and repair streams first: the pacer classifies by the last binding of an SSRC,
        // and the video stream's binding marks them as retransmissions and FEC.
        for stream in [rtx_stream(&video), fec_stream(&video)]
            .into_iter()
            .flatten()
        {
            sender.bind_local_stream(&stream);
            receiver.bind_remote_stream(&stream);
        }
        if control.pads() {
            let padding = padding_stream(&video, PADDING_SSRC, PADDING_PAYLOAD_TYPE);
            sender.bind_local_stream(&padding);
            receiver.bind_remote_stream(&padding);
        }
        sender.bind_local_stream(&video);
        receiver.bind_remote_stream(&video);

        let build_source = || {
            forecast::build(
                &config.handover,
                ForecastInputs {
                    scenario: &config.scenario,
                    timeline: Some(&config.timeline),
                    orbits: config
                        .orbits
                        .as_ref()
                        .map(|(inputs, start)| (inputs, *start)),
                    real_time: false,
                    seed: config.seed,
                },
                epoch,
            )
        };
        if config.receiver_raise && config.handover == ForecastSpec::None {
            return Err(SimError::ReceiverRaiseWithoutForecast);
        }
        let source = build_source()?;
        let mut media_receiver =
            Receiver::new(receiver_config(config.playout_floor, config.completion));
        let receiver_forecast = if config.receiver_raise {
            media_receiver.set_forecast_raise(ForecastRaise::with_defaults());
            Some(ReceiverForecast {
                source: build_source()?,
                next: Time::ZERO,
            })
        } else {
            None
        };
        control.set_timing_error(config.timing_error, config.seed);
        control.set_policy(
            epoch,
            config.decision_interval,
            source,
            config.policy.build(config.seed),
        );
        let core = CallCore::new(
            epoch,
            config.labels(),
            control,
            Video::Synthetic(Box::new(Camera::new(config.seed, Time::ZERO))),
            Box::new(config.timeline.oracle(epoch)),
        );
        let seconds = usize::try_from(config.duration.as_secs()).unwrap_or(usize::MAX);
        Ok(Self {
            epoch,
            end: Time::ZERO.saturating_add(config.duration),
            now: Time::ZERO,
            first: true,
            forward_link,
            reverse_link,
            sender,
            receiver,
            sender_deadline: None,
            receiver_deadline: None,
            nack_handles,
            fec_receiver: fec,
            core,
            media_receiver,
            meter: QoeMeter::new(),
            forward: InFlight::default(),
            reverse: InFlight::default(),
            rendered_per_second: vec![0u32; seconds.min(1 << 24)],
            max_frame_delay_ms_per_second: vec![0u32; seconds.min(1 << 24)],
            max_playout_minimum_ms_per_second: vec![0u32; seconds.min(1 << 24)],
            rtp_packets_sent: 0,
            stale_deadlines: 0,
            cwnd: config.cwnd,
            recovery: RecoveryCounts {
                nack: config.nack,
                ..RecoveryCounts::default()
            },
            nacked: FxHashSet::default(),
            last_pli: None,
            forward_delay: None,
            reverse_delay: None,
            next_rtt_report: Time::ZERO.saturating_add(RTCP_INTERVAL),
            receiver_rtt: config.receiver_rtt,
            receiver_forecast,
            retransmitted_bytes: 0,
        })
    }

    fn at(&self, t: Time) -> Instant {
        self.epoch + t.since_epoch()
    }

    /// Serves the next event: the earliest of the next frame, either chain's deadline, the media
    /// receiver's, the next decision and the next arrival on either link. Returns `false` once
    /// the call's end is reached (nothing was served).
    ///
    /// # Errors
    ///
    /// [`SimError::Chain`] if an interceptor chain refuses a packet or a timeout.
    pub fn step(&mut self) -> Result<bool, SimError> {
        let epoch = self.epoch;
        let time_of = |i: Instant| Time::from_instant(epoch, i);
        let sender_due = *self
            .sender_deadline
            .get_or_insert_with(|| self.sender.poll_timeout().map(time_of));
        let receiver_due = *self
            .receiver_deadline
            .get_or_insert_with(|| self.receiver.poll_timeout().map(time_of));
        let media_due = self.media_receiver.poll_timeout();
        let candidates = [
            self.core.poll_timeout(),
            sender_due,
            receiver_due,
            media_due,
            self.forward.next_arrival(),
            self.reverse.next_arrival(),
        ];
        let next = candidates.into_iter().flatten().min().unwrap_or(self.end);
        let next = if next <= self.now && !self.first {
            self.stale_deadlines += 1;
            self.now.saturating_add(MIN_IMMEDIATE_TIMEOUT)
        } else {
            next
        };
        self.first = false;
        if next >= self.end {
            return Ok(false);
        }
        self.now = next;
        let now = next;
        let instant = self.at(now);
        // A chain is woken when its own deadline has come or something was handed to it at this
        // instant, as the webrtc-rs driver does; waking it on every event of the other side
        // would only repeat its per-wake work (the congestion controller scans its whole send
        // history on each).
        let sender_touched = sender_due.is_some_and(|t| t <= now);
        let receiver_touched = receiver_due.is_some_and(|t| t <= now);
        let media_touched = media_due.is_some_and(|t| t <= now);

        let framed = self.serve_core(now, instant)?;
        self.report_rtt(now);
        self.serve_sender(now, instant, sender_touched || framed)?;
        self.serve_receiver(now, instant, receiver_touched, media_touched)?;
        Ok(true)
    }

    /// The sending side's decision and frame, if due; returns whether the frame wrote packets
    /// into the sender chain.
    fn serve_core(&mut self, now: Time, instant: Instant) -> Result<bool, SimError> {
        let mut far = SimFarEnd {
            meter: &mut self.meter,
            media_receiver: &self.media_receiver,
            fec_receiver: &self.fec_receiver,
        };
        let served = self
            .core
            .handle_timeout(now, self.end, &mut far)
            .map_err(SimError::Encoder)?;
        if served.decided {
            // The policy's limit and the actions' windows reach the pacer through its handle.
            self.sender_deadline = None;
            self.receiver_deadline = None;
        }
        if served.framed {
            self.sender_deadline = None;
        }
        let mut wrote = false;
        for packet in self.core.transmits() {
            wrote = true;
            self.sender
                .handle_write(tagged(instant, Packet::Rtp(rtp_of(packet))))
                .map_err(sender_err)?;
        }
        Ok(wrote)
    }

    /// The loss protection's counters so far, the sender's and the receiver's.
    fn fec_totals(&self) -> FecTotals {
        let received = self.fec_receiver.stats();
        FecTotals::new(
            &self.core.handles().protection.stats(),
            received.repair_received,
            received.recovered(),
        )
    }

    /// The receiver's own forecast, read every [`RECEIVER_FORECAST_INTERVAL`] and handed to the
    /// media receiver. A forecast that fails leaves the last predictions in force, as a real
    /// receiver whose dish did not answer would.
    fn refresh_receiver_forecast(&mut self, now: Time, instant: Instant) {
        let Some(own) = &mut self.receiver_forecast else {
            return;
        };
        if now < own.next {
            return;
        }
        own.next = now.saturating_add(RECEIVER_FORECAST_INTERVAL);
        if let Ok(forecast) = own.source.forecast(instant) {
            self.media_receiver.set_forecast(&forecast, self.epoch);
        }
    }

    /// The RTT an RTCP report would carry, to both ends of the NACK pair and to the loss
    /// protection, with the NACK rate of the last report interval.
    fn report_rtt(&mut self, now: Time) {
        if now >= self.next_rtt_report {
            self.next_rtt_report = now.saturating_add(RTCP_INTERVAL);
            self.sender_deadline = None;
            self.receiver_deadline = None;
            let bits = self.retransmitted_bytes.saturating_mul(8);
            self.retransmitted_bytes = 0;
            self.core
                .handles()
                .protection
                .set_nack_rate((bits as f64 / RTCP_INTERVAL.as_secs_f64()) as u64);
            if let (Some(f), Some(r)) = (self.forward_delay, self.reverse_delay) {
                self.core.set_rtt(f + r);
                if let Some((generator, responder)) = &self.nack_handles {
                    generator.set_rtt(Some(f + r));
                    responder.set_rtt(f + r);
                }
                if self.receiver_rtt {
                    self.media_receiver.set_rtt(f + r);
                }
            }
        }
    }

    /// Feedback reaching the sender, the sender's timeout, and what it writes onto the forward
    /// link.
    fn serve_sender(
        &mut self,
        now: Time,
        instant: Instant,
        mut touched: bool,
    ) -> Result<(), SimError> {
        while let Some(mut packet) = self.reverse.pop_arrived(now) {
            packet.now = instant;
            touched = true;
            // The chain ends inbound RTCP at its terminus, so the PLI is picked off as it
            // arrives, as a peer connection's RTCP reader for the sending track would.
            if let Packet::Rtcp(rtcp) = &packet.message.packet
                && rtcp
                    .iter()
                    .any(|p| p.as_any().is::<PictureLossIndication>())
            {
                self.core.on_key_frame_request();
            }
            self.sender.handle_read(packet).map_err(sender_err)?;
            while self.sender.poll_read().is_some() {}
        }
        if !touched {
            // Nothing was handed to the chain since its writes were last drained to the end, so
            // none of its interceptors has anything to write (`poll_write` takes no instant).
            return Ok(());
        }
        self.sender_deadline = None;
        self.sender.handle_timeout(instant).map_err(sender_err)?;
        while let Some(packet) = self.sender.poll_write() {
            let is_rtp = matches!(packet.message.packet, Packet::Rtp(_));
            let resent = is_rtp && packet.message.has(&Attribute::Retransmission);
            if is_rtp {
                self.rtp_packets_sent += 1;
            }
            let size = wire_size(&packet.message.packet);
            if resent {
                self.recovery.retransmissions_sent += 1;
                self.retransmitted_bytes += u64::from(size);
            }
            if let Some(arrival) = self.forward_link.send(now, size).delivered_at() {
                self.forward_delay = Some(arrival.saturating_duration_since(now));
                self.forward.push(arrival, packet);
            } else if resent {
                self.recovery.retransmissions_lost += 1;
            } else if is_rtp && !is_repair(&packet.message.packet) {
                self.recovery.media_packets_lost += 1;
            }
        }
        Ok(())
    }

    /// Media reaching the receiver, what it renders, its PLIs, its timeout, and what it writes
    /// onto the reverse link.
    fn serve_receiver(
        &mut self,
        now: Time,
        instant: Instant,
        mut touched: bool,
        mut media_touched: bool,
    ) -> Result<(), SimError> {
        self.refresh_receiver_forecast(now, instant);
        while let Some(mut packet) = self.forward.pop_arrived(now) {
            packet.now = instant;
            touched = true;
            self.receiver.handle_read(packet).map_err(receiver_err)?;
            while let Some(read) = self.receiver.poll_read() {
                if let Packet::Rtp(rtp) = &read.message.packet
                    && rtp.header.ssrc == VIDEO_SSRC
                {
                    self.media_receiver.on_packet_with_playout_delay(
                        now,
                        rtp.header.sequence_number,
                        &rtp.payload,
                        playout_minimum(&rtp.header, PLAYOUT_DELAY_EXTENSION_ID),
                    );
                    media_touched = true;
                }
            }
        }
        // The media receiver, too, is woken only at its deadline or with a packet: it acts on
        // nothing else (its `poll_timeout` names every instant it has something to do).
        if media_touched {
            self.media_receiver.handle_timeout(now);
        }
        while let Some(frame) = self.media_receiver.poll_rendered() {
            let second = usize::try_from(frame.rendered.as_nanos() / 1_000_000_000).ok();
            if let Some(count) = second.and_then(|s| self.rendered_per_second.get_mut(s)) {
                *count += 1;
            }
            if let Some(longest) =
                second.and_then(|s| self.max_frame_delay_ms_per_second.get_mut(s))
            {
                let delay = frame.rendered.saturating_duration_since(frame.capture);
                let delay_ms = u32::try_from(delay.as_millis()).unwrap_or(u32::MAX);
                *longest = (*longest).max(delay_ms);
            }
            if let Some(asked) =
                second.and_then(|s| self.max_playout_minimum_ms_per_second.get_mut(s))
            {
                let minimum = self.media_receiver.signalled_minimum().as_millis();
                *asked = (*asked).max(u32::try_from(minimum).unwrap_or(u32::MAX));
            }
            self.meter.on_rendered(&frame);
        }
        if self.pli_due(now) {
            self.last_pli = Some(now);
            let pli = PictureLossIndication {
                sender_ssrc: RECEIVER_SSRC,
                media_ssrc: VIDEO_SSRC,
            };
            self.receiver
                .handle_write(tagged(instant, Packet::Rtcp(vec![Box::new(pli)])))
                .map_err(receiver_err)?;
            touched = true;
        }
        if !touched {
            // As on the sender: an untouched chain has nothing to write.
            return Ok(());
        }
        self.receiver_deadline = None;
        self.receiver
            .handle_timeout(instant)
            .map_err(receiver_err)?;
        while let Some(packet) = self.receiver.poll_write() {
            let sent = i64::try_from(self.core.video().packets_sent()).unwrap_or(i64::MAX);
            for seq in nacked_sequence_numbers(&packet.message.packet) {
                self.recovery.nack_requests += 1;
                self.nacked.insert(pacer::nack::unwrap_seq(sent, seq));
            }
            if let Some(arrival) = self
                .reverse_link
                .send(now, wire_size(&packet.message.packet))
                .delivered_at()
            {
                self.reverse_delay = Some(arrival.saturating_duration_since(now));
                self.reverse.push(arrival, packet);
            }
        }
        Ok(())
    }

    /// Whether the receiver sends a PLI now: the media receiver asks for one, or the NACK
    /// generator does (its list overflowed). One PLI source only: the generator's request is
    /// sent only if the media receiver is not asking already and the last PLI is at least the
    /// receiver's PLI spacing old.
    fn pli_due(&mut self, now: Time) -> bool {
        let mut due = self.media_receiver.poll_pli(now);
        if let Some((generator, _)) = &self.nack_handles
            && generator.take_key_frame_request()
        {
            self.recovery.nack_key_frame_requests += 1;
            let spaced = self.last_pli.is_none_or(|t| {
                now.saturating_duration_since(t) >= self.media_receiver.config().pli_interval
            });
            if !due && !self.media_receiver.waiting_for_key_frame() && spaced {
                self.recovery.nack_plis += 1;
                due = true;
            }
        }
        due
    }

    /// Closes the last interval at the call's end and gathers the call's counts.
    pub fn finish(mut self) -> CallResult {
        self.core.finish(
            self.end,
            &mut SimFarEnd {
                meter: &mut self.meter,
                media_receiver: &self.media_receiver,
                fec_receiver: &self.fec_receiver,
            },
        );
        let mut recovery = self.recovery;
        recovery.nacked_packets = self.nacked.len() as u64;
        if let Some((generator, responder)) = &self.nack_handles {
            let stats = generator.stats();
            recovery.give_ups = stats.give_ups;
            recovery.rtt_ms = Some(ms(stats.rtt));
            let stats = responder.stats();
            recovery.resends_suppressed = stats.ignored_pending + stats.ignored_recent;
            recovery.not_in_history = stats.not_in_history;
            recovery.over_budget = stats.over_budget;
        }
        let fec = self.fec_totals();
        recovery.fec_packets_sent = fec.packets_sent;
        recovery.fec_packets_received = fec.packets_received;
        recovery.fec_recovered = fec.packets_recovered;
        recovery.fec_share_pct = fec.share_pct();
        let stats = self.core.handles().pacer.stats();
        let counts = self.core.counts();
        let video = self.core.video();
        let sender = SenderCounts {
            cwnd: Some(self.cwnd),
            frames_dropped_by_pushback: video.frames_dropped_by_pushback(),
            congested: stats.congested_time,
            keepalives: stats.keepalives_sent,
            packets_flushed: stats.packets_flushed,
            min_pushback_ratio: counts.min_pushback_ratio,
            max_outstanding_bytes: counts.max_outstanding_bytes,
        };
        let (frames_encoded, key_frames, media_packets) = (
            video.frames_encoded(),
            video.key_frames(),
            video.packets_sent(),
        );
        CallResult {
            sender,
            telemetry: self.core.take_telemetry(),
            qoe: self.meter.total(),
            rendered_per_second: self.rendered_per_second,
            max_frame_delay_ms_per_second: self.max_frame_delay_ms_per_second,
            max_playout_minimum_ms_per_second: self.max_playout_minimum_ms_per_second,
            decisions: self.core.decisions().to_vec(),
            frames_encoded,
            key_frames,
            plis_sent: self.media_receiver.stats().plis_sent + recovery.nack_plis,
            media_packets,
            rtp_packets_sent: self.rtp_packets_sent,
            stale_deadlines: self.stale_deadlines,
            recovery,
        }
    }
}

/// The sequence numbers a NACK packet asks for.
fn nacked_sequence_numbers(packet: &Packet) -> Vec<u16> {
    let Packet::Rtcp(rtcp) = packet else {
        return Vec::new();
    };
    rtcp.iter()
        .filter_map(|p| p.as_any().downcast_ref::<TransportLayerNack>())
        .flat_map(|nack| nack.nacks.iter().flat_map(|pair| pair.packet_list()))
        .collect()
}

/// Whether `packet` is a FEC repair packet.
fn is_repair(packet: &Packet) -> bool {
    matches!(packet, Packet::Rtp(rtp) if rtp.header.ssrc == VIDEO_FEC_SSRC)
}

fn tagged(now: Instant, packet: Packet) -> TaggedPacket {
    TaggedPacket {
        now,
        transport: TransportContext::default(),
        message: AttributedPacket::new(packet),
    }
}

fn wire_size(packet: &Packet) -> u32 {
    let bytes = match packet {
        Packet::Rtp(rtp) => rtp.marshal_size(),
        Packet::Rtcp(rtcp) => rtcp.iter().map(|p| p.marshal_size()).sum(),
        _ => 0,
    };
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

/// The simulated receiver as the call core reads it: the QoE meter over the media receiver's
/// frames, and the FEC receiver's counts.
struct SimFarEnd<'a> {
    meter: &'a mut QoeMeter,
    media_receiver: &'a Receiver,
    fec_receiver: &'a FecReceiverHandle,
}

impl FarEnd for SimFarEnd<'_> {
    fn fec_received(&self) -> (u64, u64) {
        let received = self.fec_receiver.stats();
        (received.repair_received, received.recovered())
    }

    fn take_interval_qoe(&mut self, packets_sent: u64) -> QoeRecord {
        self.meter
            .on_packet_counts(packets_sent, self.media_receiver.stats().packets_received);
        self.meter.take_interval().to_record()
    }
}

/// The receiver's configuration: the defaults, with `floor` as its base minimum playout delay and
/// `completion` as its model of expected completion.
fn receiver_config(floor: std::time::Duration, completion: CompletionModel) -> ReceiverConfig {
    ReceiverConfig {
        playout: Playout::JitterBuffer(PlayoutConfig {
            base_minimum: floor,
            completion,
            ..PlayoutConfig::default()
        }),
        ..ReceiverConfig::default()
    }
}

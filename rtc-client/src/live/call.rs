//! The calling side of a real call: peer connection, relay, sender loop, policy, status and
//! telemetry.
//!
//! [`run`] does, in order:
//!
//! 1. builds the sender chain ([`super::peer::sender_chain`]) and the peer connection with the
//!    video track, creates the offer and waits for ICE gathering (non-trickle);
//! 2. with a link, binds the relay and rewrites the offer's candidate to the relay
//!    ([`super::relay`] explains how the ICE path is forced through it);
//! 3. POSTs the offer, rewrites the answer's candidate, starts the relay, sets the answer and
//!    waits for the connection: the set-up time is from the call's epoch to `Connected`;
//! 4. runs the call until `duration` has passed since the epoch or `cancel` fires: the
//!    synthetic encoder follows the estimator's target (with the congestion-window pushback and
//!    the pacer's pause, as the simulator), frames are packetized and written as RTP to the
//!    track, a PLI from the receiver asks for a key frame, the [`PolicyController`] sets the
//!    pacer's limit at each decision boundary, a status line goes out each second and each
//!    interval ends in one [`IntervalRecord`] whose QoE is the receiver's, read through the
//!    signalling side channel ([`super::signal::QoeQuery`]);
//! 5. closes the last interval, reads the final QoE, hangs up (`DELETE`), closes the peer
//!    connection and stops the relay.
//!
//! The telemetry has the simulator's schema: the same pacer and GCC samples at every frame, the
//! same sender record, `scenario` = the link scenario's name (or `live`), `observed` = the
//! scenario's truth (or no handovers without a link).

use super::LiveError;
use super::answer::ice_rtt;
use super::http::{PeerUrl, request};
use super::peer::{
    CallerHandles, Events, build_peer, sender_chain, set_local_and_gather, video_track,
};
use super::relay::{RelaySockets, RelayStats};
use super::signal::{
    AnswerResponse, OfferRequest, QoeQuery, QoeSnapshot, SessionDescription, candidates,
    rewrite_candidates,
};
use super::sources::{self, HandoverSpec};
use super::status::StatusLine;
use crate::call::interval::{CallLabels, FecTotals, OpenInterval, observe};
use crate::call::streams::rtp_of;
use crate::call::timed::{self, PredictionFeed, TimingError};
use crate::call::video::{Video, VideoChoice};
use crate::call::{NackChoice, PolicyChoice, SenderOptions};
use crate::link::{Link, LinkConfig, Time};
use crate::scenario::build::Realization;
use crate::scenario::timeline::HandoverTimeline;
use handover_predictor::{HandoverSource, NoHandovers};
use pacer::telemetry::{IntervalRecord, QoeRecord};
use pacer::{Decision, PolicyController};
use std::future::Future;
use std::net::IpAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use webrtc::media_stream::track_local::TrackLocal;
use webrtc::peer_connection::{PeerConnection, RTCPeerConnectionState, RTCSessionDescription};

/// How long the peers may take to connect after the answer (ICE and DTLS over loopback take
/// tens of milliseconds; through a lossy emulated link a few retransmitted handshakes).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Timeout of one signalling request (the offer waits for the answerer's ICE gathering).
pub const SIGNALLING_TIMEOUT: Duration = Duration::from_secs(10);

/// Timeout of one QoE query on the side channel (loopback: about a millisecond).
pub const QOE_TIMEOUT: Duration = Duration::from_secs(2);

/// The link scenario of a call: the realised forward and reverse links and the truth.
#[derive(Debug, Clone)]
pub struct LinkSetup {
    /// The scenario's name (telemetry's `scenario`).
    pub scenario: String,
    /// Caller -> answerer.
    pub forward: LinkConfig,
    /// Its seed.
    pub forward_seed: u64,
    /// Answerer -> caller.
    pub reverse: LinkConfig,
    /// Its seed.
    pub reverse_seed: u64,
    /// The handover timeline (what `--handover scenario` reads and telemetry observes).
    pub timeline: HandoverTimeline,
}

impl LinkSetup {
    /// The links and truth of a realised scenario.
    pub fn from_realization(r: &Realization) -> Self {
        Self {
            scenario: r.name.clone(),
            forward: r.forward.clone(),
            forward_seed: r.forward_seed,
            reverse: r.reverse.clone(),
            reverse_seed: r.reverse_seed,
            timeline: r.timeline.clone(),
        }
    }
}

/// Everything one real call needs.
#[derive(Debug, Clone)]
pub struct LiveCallConfig {
    /// The answerer's signalling URL, `http://HOST:PORT`.
    pub peer: String,
    /// How long the call lasts from its epoch.
    pub duration: Duration,
    /// The queue policy.
    pub policy: PolicyChoice,
    /// Where the policy's forecast comes from.
    pub handover: HandoverSpec,
    /// The emulated link, if any (none: the peers talk directly).
    pub link: Option<LinkSetup>,
    /// The decision interval.
    pub decision_interval: Duration,
    /// The sender's options.
    pub sender: SenderOptions,
    /// The encoder's and the random policy's seeds derive from it.
    pub seed: u64,
    /// The IP the caller's peer connection and the relay bind (loopback by default).
    pub local_ip: IpAddr,
    /// The video it sends: the synthetic codec, or real VP8 (what a browser can decode).
    pub video: VideoChoice,
}

/// What a real call produced.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The answerer's id of the call.
    pub call_id: String,
    /// From the epoch to `Connected`.
    pub setup_time: Duration,
    /// From the epoch to the end.
    pub duration: Duration,
    /// Why it ended (`completed`, `interrupted`, or the connection's failure).
    pub ended_by: String,
    /// One record per decision interval.
    pub telemetry: Vec<IntervalRecord>,
    /// The policy's decisions.
    pub decisions: Vec<Decision>,
    /// The receiver's QoE over the whole call (default when the answerer could not be asked).
    pub qoe: QoeRecord,
    /// Frames encoded.
    pub frames_encoded: u64,
    /// Key frames among them.
    pub key_frames: u64,
    /// RTP media packets sent (retransmissions not included).
    pub media_packets: u64,
    /// PLIs that reached the encoder.
    pub plis_received: u64,
    /// The lowest and highest estimator target seen at a frame, bps.
    pub target_range_bps: (f64, f64),
    /// The relay's counters (with a link).
    pub relay: Option<RelayStats>,
    /// Frames the answerer rendered in each second of the call from the epoch (its QoE
    /// endpoint's `rendered_per_second`, read at the end; empty if it could not be asked).
    pub rendered_per_second: Vec<u32>,
    /// The pacer's longest expected queue time seen at any frame, ms.
    pub max_pacer_queue_ms: f64,
    /// The pacer's queue time limit when that longest queue was seen, ms.
    pub queue_limit_at_max_ms: f64,
    /// The libwebrtc-like responder's counters at the end ([`NackChoice::Libwebrtc`]).
    pub nack_responder: Option<crate::nack::NackResponderStats>,
    /// What loss protection did: repair packets sent (and their bytes, with the media bytes
    /// beside them), and at the receiver repair packets received and packets recovered.
    pub fec: FecTotals,
}

/// Runs one real call (see the module documentation). `on_status` gets the status line each
/// second and the decisions as they happen; `cancel` ends the call early (Ctrl-C).
///
/// # Errors
///
/// [`LiveError`] when the call cannot be set up (the answerer refuses or is unreachable, the
/// peers do not connect) or webrtc-rs fails; once connected, a dropped connection ends the call
/// normally with the reason in [`CallOutcome::ended_by`].
pub async fn run(
    config: &LiveCallConfig,
    mut on_status: impl FnMut(StatusEvent<'_>),
    cancel: impl Future<Output = ()>,
) -> Result<CallOutcome, LiveError> {
    if config.duration.is_zero() || config.decision_interval.is_zero() {
        return Err(LiveError::Config(
            "the duration and the decision interval must be positive".into(),
        ));
    }
    let peer_url = PeerUrl::parse(&config.peer)?;
    let epoch = Instant::now();
    let epoch_unix_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| u64::try_from(d.as_nanos()).ok());
    let time = |i: Instant| Time::from_instant(epoch, i);

    // The links first: a bad configuration fails before any network work.
    let links = match &config.link {
        Some(l) => Some((
            Link::new(l.forward.clone(), l.forward_seed)
                .map_err(|e| LiveError::Link(format!("forward: {e}")))?,
            Link::new(l.reverse.clone(), l.reverse_seed)
                .map_err(|e| LiveError::Link(format!("reverse: {e}")))?,
        )),
        None => None,
    };
    let source = sources::build(
        &config.handover,
        config.link.as_ref().map(|l| &l.timeline),
        epoch,
    )?;

    // Peer connection and offer.
    // Real VP8 is what a browser receives: no padding stream then (see `sender_chain`).
    let (media, registry, handles) = sender_chain(
        config.sender,
        config.policy.actions(),
        config.video != VideoChoice::Vp8,
    )?;
    let (events, mut connection, _tracks) = Events::new();
    let peer = build_peer(media, registry, &events, config.local_ip).await?;
    let outcome = async {
        let track = video_track(
            config.sender.nack == NackChoice::Libwebrtc,
            config.sender.fec.is_on(),
        );
        peer.add_track(track.clone() as std::sync::Arc<dyn TrackLocal>)
            .await
            .map_err(LiveError::webrtc)?;
        let offer = peer.create_offer(None).await.map_err(LiveError::webrtc)?;
        let offer = set_local_and_gather(peer.as_ref(), &events, offer).await?;
        let mut offer_sdp = offer.sdp;
        let relay_sockets = match &links {
            Some(_) => {
                let sockets = RelaySockets::bind(config.local_ip).await?;
                let caller = *candidates(&offer_sdp)
                    .first()
                    .ok_or_else(|| LiveError::Signalling("the offer has no candidate".into()))?;
                offer_sdp = rewrite_candidates(&offer_sdp, sockets.answerer_facing()?)
                    .map_err(|e| LiveError::Signalling(e.to_string()))?;
                Some((sockets, caller))
            }
            None => None,
        };

        // Signalling.
        let request_body = OfferRequest {
            offer: SessionDescription {
                kind: "offer".into(),
                sdp: offer_sdp,
            },
            nack: Some(config.sender.nack.as_str().to_owned()),
            epoch_unix_ns,
            label: Some(format!(
                "{} / {}",
                config.policy.name(),
                config.handover.name()
            )),
        };
        let response = request(
            &peer_url,
            "POST",
            "/calls",
            Some(&request_body),
            SIGNALLING_TIMEOUT,
        )
        .await?;
        if response.status != 201 {
            return Err(LiveError::Signalling(format!(
                "the answerer refused the offer ({}): {}",
                response.status,
                response.text()
            )));
        }
        let answer: AnswerResponse = response.json()?;
        let mut answer_sdp = answer.answer.sdp;
        let relay = match (relay_sockets, links) {
            (Some((sockets, caller)), Some((forward, reverse))) => {
                let answerer = *candidates(&answer_sdp)
                    .first()
                    .ok_or_else(|| LiveError::Signalling("the answer has no candidate".into()))?;
                answer_sdp = rewrite_candidates(&answer_sdp, sockets.caller_facing()?)
                    .map_err(|e| LiveError::Signalling(e.to_string()))?;
                Some(sockets.start(caller, answerer, forward, reverse, epoch))
            }
            _ => None,
        };
        let answer_description = RTCSessionDescription::answer(answer_sdp).map_err(|e| {
            LiveError::Signalling(format!("the answerer sent a malformed answer: {e}"))
        })?;
        peer.set_remote_description(answer_description)
            .await
            .map_err(LiveError::webrtc)?;
        let connected = match tokio::time::timeout(
            CONNECT_TIMEOUT,
            connection.wait_for(|s| {
                matches!(
                    s,
                    RTCPeerConnectionState::Connected
                        | RTCPeerConnectionState::Failed
                        | RTCPeerConnectionState::Closed
                )
            }),
        )
        .await
        {
            Ok(Ok(state)) => Some(*state),
            _ => None,
        };
        match connected {
            Some(RTCPeerConnectionState::Connected) => {}
            Some(state) => {
                return Err(LiveError::Webrtc(format!("the peer connection is {state}")));
            }
            None => return Err(LiveError::ConnectTimeout(CONNECT_TIMEOUT)),
        }
        let setup_time = epoch.elapsed();
        let truth: Box<dyn HandoverSource> = match &config.link {
            Some(l) => Box::new(l.timeline.oracle(epoch)),
            None => Box::new(NoHandovers),
        };
        let mut sender = SenderLoop {
            config,
            epoch,
            peer_url: &peer_url,
            call_id: answer.call_id.clone(),
            labels: CallLabels {
                call_id: format!(
                    "live-{}-{}",
                    epoch_unix_ns.map_or(0, |ns| ns / 1_000_000),
                    answer.call_id
                ),
                scenario: config
                    .link
                    .as_ref()
                    .map_or_else(|| "live".to_owned(), |l| l.scenario.clone()),
                seed: config.seed,
                sender: config.sender,
            },
            handles: handles.clone(),
            truth,
            path_rtt: relay.as_ref().map(|r| {
                Box::new(r.path_rtt_reader()) as Box<dyn Fn() -> Option<Duration> + Send + Sync>
            }),
            receiver_fec: (0, 0),
        };
        let result = sender
            .run(
                track,
                source,
                &mut connection,
                peer.as_ref(),
                setup_time,
                time,
                &mut on_status,
                cancel,
            )
            .await;
        // Hang up whatever happened.
        let _ = request(
            &peer_url,
            "DELETE",
            &format!("/calls/{}", answer.call_id),
            None::<&()>,
            QOE_TIMEOUT,
        )
        .await;
        let relay_stats = match relay {
            Some(r) => Some(r.stop().await),
            None => None,
        };
        result.map(|mut outcome| {
            outcome.relay = relay_stats;
            outcome
        })
    }
    .await;
    let _ = peer.close().await;
    outcome
}

/// What [`run`] tells its caller while the call runs.
#[derive(Debug)]
pub enum StatusEvent<'a> {
    /// The peers connected.
    Connected {
        /// The answerer's call id.
        call_id: &'a str,
        /// From the epoch to `Connected`.
        setup: Duration,
    },
    /// One second.
    Status(&'a StatusLine),
    /// A policy decision.
    Decision(&'a Decision),
    /// A decision interval closed (written to telemetry as it comes).
    Interval(&'a IntervalRecord),
}

struct SenderLoop<'a> {
    config: &'a LiveCallConfig,
    epoch: Instant,
    peer_url: &'a PeerUrl,
    call_id: String,
    /// What the telemetry names; its `call_id` is unique across runs
    /// (`live-<epoch ms>-<answerer's id>`).
    labels: CallLabels,
    handles: CallerHandles,
    truth: Box<dyn HandoverSource>,
    /// With a link: the round trip through the emulated links now (queueing included).
    path_rtt: Option<Box<dyn Fn() -> Option<Duration> + Send + Sync>>,
    /// The receiver's FEC counts at its last QoE answer: repair packets received, packets
    /// recovered.
    receiver_fec: (u64, u64),
}

impl SenderLoop<'_> {
    async fn qoe(&self, packets_sent: u64, take_interval: bool) -> Option<QoeSnapshot> {
        let query = QoeQuery {
            packets_sent,
            take_interval,
        };
        let response = request(
            self.peer_url,
            "POST",
            &format!("/calls/{}/qoe", self.call_id),
            Some(&query),
            QOE_TIMEOUT,
        )
        .await
        .ok()?;
        if response.status != 200 {
            return None;
        }
        response.json().ok()
    }

    /// Closes the open interval, if there is one, at `now` (`counts`: packets sent and frames
    /// dropped so far): its record goes to `on_status`, then into `telemetry`.
    async fn close_open(
        &mut self,
        open: &mut Option<OpenInterval>,
        now: Time,
        counts: (u64, u64),
        telemetry: &mut Vec<IntervalRecord>,
        on_status: &mut impl FnMut(StatusEvent<'_>),
    ) {
        if let Some(interval) = open.take() {
            let record = self.close(interval, now, counts.0, counts.1).await;
            on_status(StatusEvent::Interval(&record));
            telemetry.push(record);
        }
    }

    /// The loss protection's counters so far: the sender's from its protection handle, the
    /// receiver's from its last QoE answer.
    fn fec_totals(&self) -> FecTotals {
        let (received, recovered) = self.receiver_fec;
        FecTotals::new(&self.handles.sender.protection.stats(), received, recovered)
    }

    /// Closes `open` at `now` into a telemetry record, with the receiver's QoE read through the
    /// side channel.
    async fn close(
        &mut self,
        open: OpenInterval,
        now: Time,
        packets_sent: u64,
        frames_dropped: u64,
    ) -> IntervalRecord {
        let snapshot = self.qoe(packets_sent, true).await;
        if let Some(s) = &snapshot {
            self.receiver_fec = (s.fec_repair_received, s.fec_recovered);
        }
        let qoe = snapshot.and_then(|s| s.interval).unwrap_or_default();
        let observed = observe(self.truth.as_mut(), open.start().to_instant(self.epoch));
        open.close(
            now,
            &self.labels,
            qoe,
            observed,
            &self.handles.sender.pacer.stats(),
            frames_dropped,
            self.fec_totals(),
            timed::take_record(
                self.handles.sender.actions.as_ref(),
                now.to_instant(self.epoch),
            ),
        )
    }

    #[allow(clippy::too_many_arguments)]
    async fn run(
        &mut self,
        track: std::sync::Arc<webrtc::media_stream::track_local::static_rtp::TrackLocalStaticRTP>,
        source: Box<dyn HandoverSource>,
        connection: &mut tokio::sync::watch::Receiver<RTCPeerConnectionState>,
        peer: &dyn PeerConnection,
        setup_time: Duration,
        time: impl Fn(Instant) -> Time,
        on_status: &mut impl FnMut(StatusEvent<'_>),
        cancel: impl Future<Output = ()>,
    ) -> Result<CallOutcome, LiveError> {
        on_status(StatusEvent::Connected {
            call_id: &self.call_id,
            setup: setup_time,
        });
        let config = self.config;
        let epoch = self.epoch;
        let end = epoch + config.duration;
        let handle = self.handles.sender.pacer.clone();
        let mut controller = PolicyController::new(
            epoch,
            config.decision_interval,
            source,
            config.policy.build(config.seed),
            handle.clone(),
        );
        let mut camera = Video::new(config.video, config.seed, time(Instant::now()))
            .map_err(LiveError::Config)?;
        let mut predictions = PredictionFeed::new(TimingError::default(), config.seed);
        let mut media = Vec::new();
        let mut telemetry = Vec::new();
        let mut decisions: Vec<Decision> = Vec::new();
        let mut open: Option<OpenInterval> = None;
        let mut plis = 0u64;
        let mut target_range = (f64::INFINITY, 0.0f64);
        // (longest expected queue, ms; the limit then, ms)
        let mut max_queue = (0.0f64, 0.0f64);
        let mut bytes_at_last_second = 0u64;
        let mut rtt = Duration::ZERO;
        let mut resent_bytes_at_last_second = 0u64;
        let mut second = tokio::time::interval_at(
            tokio::time::Instant::now() + Duration::from_secs(1),
            Duration::from_secs(1),
        );
        let mut ended_by = "completed".to_owned();
        tokio::pin!(cancel);

        loop {
            let frame_at = camera.next_frame_time().to_instant(epoch);
            let decision_at = controller.poll_timeout();
            let next = [Some(frame_at), decision_at, Some(end)]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(end);
            tokio::select! {
                () = &mut cancel => {
                    ended_by = "interrupted".into();
                    break;
                }
                changed = connection.changed() => {
                    let state = *connection.borrow();
                    if changed.is_err()
                        || matches!(state, RTCPeerConnectionState::Failed | RTCPeerConnectionState::Closed)
                    {
                        ended_by = format!("the peer connection is {state}");
                        break;
                    }
                    continue;
                }
                _ = second.tick() => {
                    // The ICE checks' RTT did not follow the queueing delay of a squeezed link
                    // (tests/live_nack.rs: the history culled packets before their NACKs came);
                    // with a link, the round trip through it now is taken when longer, as the
                    // simulator hands the responder the links' delays.
                    let path = self.path_rtt.as_ref().and_then(|f| f());
                    let measured = match (ice_rtt(peer).await, path) {
                        (Some(i), Some(p)) => Some(i.max(p)),
                        (i, p) => i.or(p),
                    };
                    if let (Some(responder), Some(rtt)) = (&self.handles.responder, measured) {
                        responder.set_rtt(rtt);
                    }
                    rtt = measured.unwrap_or(rtt);
                    if let Some(responder) = &self.handles.responder {
                        let resent = responder.stats().retransmission_bytes;
                        let bits = resent.saturating_sub(resent_bytes_at_last_second) * 8;
                        resent_bytes_at_last_second = resent;
                        self.handles.sender.protection.set_nack_rate(bits);
                    }
                    let snapshot = self.qoe(camera.packets_sent(), false).await;
                    let stats = handle.stats();
                    let bytes = camera.bytes_encoded();
                    let line = StatusLine {
                        elapsed: epoch.elapsed(),
                        target_kbps: self.handles.sender.target_bps() / 1000.0,
                        bitrate_kbps: bytes.saturating_sub(bytes_at_last_second) as f64 * 8.0 / 1000.0,
                        fps: snapshot.as_ref().map(|s| s.fps_last_second),
                        freezes: snapshot.as_ref().map(|s| s.freezes),
                        limit_ms: u64::try_from(stats.queue_time_limit.as_millis()).unwrap_or(u64::MAX),
                        queue_ms: u64::try_from(stats.expected_queue_time.as_millis()).unwrap_or(u64::MAX),
                        source: StatusLine::source_state(decisions.last()),
                    };
                    bytes_at_last_second = bytes;
                    on_status(StatusEvent::Status(&line));
                    continue;
                }
                () = tokio::time::sleep_until(next.into()) => {}
            }
            let now_instant = Instant::now();
            if now_instant >= end {
                break;
            }
            let now = time(now_instant);

            // Decision boundary: close the interval, open the next one.
            let due = controller.is_due(now_instant);
            if due {
                // Closed first, so that a joint policy reads the interval that just ended.
                self.close_open(
                    &mut open,
                    now,
                    (camera.packets_sent(), camera.frames_dropped()),
                    &mut telemetry,
                    on_status,
                )
                .await;
            }
            let decided = due
                .then(|| {
                    let feedback = timed::feedback(
                        controller.controls_actions(),
                        self.handles.sender.actions.as_ref(),
                        telemetry.last(),
                    );
                    controller.handle_timeout_with(now_instant, feedback)
                })
                .flatten();
            if let Some(decision) = decided {
                on_status(StatusEvent::Decision(&decision));
                if let Some(actions) = &self.handles.sender.actions {
                    predictions.feed(actions, &decision);
                }
                decisions.push(decision.clone());
                open = Some(OpenInterval::open(
                    decision,
                    now,
                    &handle.stats(),
                    camera.frames_dropped(),
                    self.fec_totals(),
                ));
            }

            // The camera (as the simulator's frame step).
            if camera.next_frame_time() <= now {
                if self
                    .handles
                    .pli
                    .swap(false, std::sync::atomic::Ordering::Relaxed)
                {
                    plis += 1;
                    camera.request_key_frame();
                }
                self.handles
                    .sender
                    .protection
                    .set_network(handle.stats().target_bitrate_bps, rtt);
                let step =
                    match camera.capture(now, &self.handles.sender, open.as_mut(), &mut media) {
                        Ok(step) => step,
                        Err(e) => {
                            ended_by = format!("the encoder failed: {e}");
                            break;
                        }
                    };
                let queue_ms = step.stats.expected_queue_time.as_secs_f64() * 1000.0;
                if queue_ms > max_queue.0 {
                    max_queue = (queue_ms, step.stats.queue_time_limit.as_secs_f64() * 1000.0);
                }
                target_range = (
                    target_range.0.min(step.target_bps),
                    target_range.1.max(step.target_bps),
                );
                for packet in media.drain(..) {
                    if let Err(e) = track.write_rtp(rtp_of(packet)).await {
                        ended_by = format!("the track refused a packet: {e}");
                    }
                }
            }
        }

        let now = time(Instant::now().min(end));
        self.close_open(
            &mut open,
            now,
            (camera.packets_sent(), camera.frames_dropped()),
            &mut telemetry,
            on_status,
        )
        .await;
        let last = self.qoe(camera.packets_sent(), false).await;
        let rendered_per_second = last
            .as_ref()
            .map(|s| s.rendered_per_second.clone())
            .unwrap_or_default();
        if let Some(s) = &last {
            self.receiver_fec = (s.fec_repair_received, s.fec_recovered);
        }
        let qoe = last.map(|s| s.total).unwrap_or_default();
        let fec = self.fec_totals();
        Ok(CallOutcome {
            call_id: self.call_id.clone(),
            setup_time,
            duration: epoch.elapsed(),
            ended_by,
            telemetry,
            decisions,
            qoe,
            frames_encoded: camera.frames_encoded(),
            key_frames: camera.key_frames(),
            media_packets: camera.packets_sent(),
            plis_received: plis,
            target_range_bps: if target_range.0.is_finite() {
                target_range
            } else {
                (0.0, 0.0)
            },
            relay: None,
            rendered_per_second,
            max_pacer_queue_ms: max_queue.0,
            queue_limit_at_max_ms: max_queue.1,
            nack_responder: self.handles.responder.as_ref().map(|r| r.stats()),
            fec,
        })
    }
}

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
//! 4. runs the call until `duration` has passed since the epoch or `cancel` fires: it drives
//!    the call core ([`CallCore`], the same one the simulator drives) at its `poll_timeout`,
//!    reading the answerer's side of an interval through the signalling side channel
//!    ([`super::signal::QoeQuery`]) before the core closes it, writes the core's packets as RTP
//!    to the track, hands it PLIs and the RTT, and sends a status line each second; the core
//!    decides (the installed sender's policy sets the limit and the actions), steers the
//!    encoder and closes each interval into one [`IntervalRecord`];
//! 5. closes the last interval, reads the final QoE, hangs up (`DELETE`), closes the peer
//!    connection and stops the relay.
//!
//! The telemetry has the simulator's schema: the same pacer and GCC samples at every frame, the
//! same sender record, `scenario` = the link scenario's name (or `live`), `observed` = the
//! scenario's truth (or no handovers without a link).

use super::LiveError;
use super::answer::ice_rtt;
use super::auth::Token;
use super::http::{Peer, request};
use super::peer::{
    CallerChain, Events, build_peer, sender_chain, set_local_and_gather, video_track,
};
use super::relay::{DeliveryObserver, Relay, RelaySockets, RelayStats};
use super::shadow::{ShadowReceiver, ShadowSummary};
use super::signal::{
    AnswerResponse, OfferRequest, QoeQuery, QoeSnapshot, SessionDescription, candidates,
    rewrite_candidates,
};
use super::status::StatusLine;
use crate::call::core::{CallCore, CallEvent, FarEnd};
use crate::call::interval::{CallLabels, FecTotals};
use crate::call::streams::rtp_of;
use crate::call::video::{Video, VideoChoice};
use crate::call::{NackChoice, PolicyChoice, SenderOptions};
use crate::forecast::{self, ForecastInputs, ForecastSpec};
use crate::link::{Link, LinkConfig, Time};
use crate::media::playout::CompletionModel;
use crate::scenario::build::Realization;
use crate::scenario::timeline::HandoverTimeline;
use handover_predictor::{HandoverSource, NoHandovers};
use pacer::Decision;
use pacer::sender::HandoverAwareSender;
use pacer::telemetry::{IntervalRecord, QoeRecord};
use std::future::Future;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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

/// Consecutive QoE queries (one a second) that say the answerer is gone after which the caller
/// ends the call: the answerer no longer has it (`404`: it ended the call, or restarted), or
/// nothing listens at its address any more (the connection is refused: its process died). Both
/// are answers, not silences: a network outage makes queries time out, which ends nothing (ICE
/// then fails the connection after its own timeouts, 30 s in webrtc-rs). Three, so one lost race
/// at the end of a call is not taken for a death; the caller stops within about 4 s.
pub const GONE_AFTER: u32 = 3;

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
    /// The forward and reverse links.
    ///
    /// # Errors
    ///
    /// [`LiveError::Link`] naming the direction whose configuration is invalid.
    pub fn links(&self) -> Result<(Link, Link), LiveError> {
        Ok((
            Link::new(self.forward.clone(), self.forward_seed)
                .map_err(|e| LiveError::Link(format!("forward: {e}")))?,
            Link::new(self.reverse.clone(), self.reverse_seed)
                .map_err(|e| LiveError::Link(format!("reverse: {e}")))?,
        ))
    }

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
    /// The answerer's signalling URL, `http[s]://HOST:PORT`.
    pub peer: String,
    /// The answerer's bearer token, when it requires one (beyond loopback).
    pub token: Option<Token>,
    /// For an `https` peer: the PEM certificates its certificate is checked against.
    pub ca: Option<std::path::PathBuf>,
    /// How long the call lasts from its epoch.
    pub duration: Duration,
    /// The queue policy.
    pub policy: PolicyChoice,
    /// Where the policy's forecast comes from.
    pub handover: ForecastSpec,
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
    /// With a link: also run this project's receiver, with this model of expected completion,
    /// on the packets the relay delivers ([`super::shadow`]), for a side-by-side with a far end
    /// that is not ours (a browser).
    pub shadow: Option<CompletionModel>,
    /// With a shadow: also run a second one with this model on the same datagrams
    /// ([`ShadowReceiver::compared_with`]).
    pub shadow_compared: Option<CompletionModel>,
}

/// What a real call produced.
#[derive(Debug, Clone)]
pub struct LiveCallOutcome {
    /// The answerer's id of the call.
    pub call_id: String,
    /// From the epoch to `Connected`.
    pub setup_time: Duration,
    /// From the epoch to the end.
    pub duration: Duration,
    /// Why it ended (`completed`, `interrupted`, the connection's failure, or the answerer gone:
    /// [`GONE_AFTER`]).
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
    /// Discardable frames among them (the discardable-frames action).
    pub frames_discardable: u64,
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
    pub nack_responder: Option<pacer::nack::NackResponderStats>,
    /// What loss protection did: repair packets sent (and their bytes, with the media bytes
    /// beside them), and at the receiver repair packets received and packets recovered.
    pub fec: FecTotals,
    /// What this project's receiver made of the packets the relay delivered
    /// ([`LiveCallConfig::shadow`]).
    pub shadow: Option<ShadowSummary>,
}

/// Runs one real call (see the module documentation). `on_status` gets the status line each
/// second and the decisions as they happen; `cancel` ends the call early (Ctrl-C).
///
/// # Errors
///
/// [`LiveError`] when the call cannot be set up (the answerer refuses or is unreachable, the
/// peers do not connect) or webrtc-rs fails; once connected, a dropped connection ends the call
/// normally with the reason in [`LiveCallOutcome::ended_by`].
pub async fn run(
    config: &LiveCallConfig,
    mut on_status: impl FnMut(StatusEvent<'_>),
    cancel: impl Future<Output = ()>,
) -> Result<LiveCallOutcome, LiveError> {
    if config.duration.is_zero() || config.decision_interval.is_zero() {
        return Err(LiveError::Config(
            "the duration and the decision interval must be positive".into(),
        ));
    }
    let peer_url = Peer::new(&config.peer, config.token.clone(), config.ca.as_deref())?;
    let epoch = Instant::now();
    let epoch_unix_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| u64::try_from(d.as_nanos()).ok());
    let time = |i: Instant| Time::from_instant(epoch, i);

    // The links first: a bad configuration fails before any network work.
    let links = config.link.as_ref().map(LinkSetup::links).transpose()?;
    let source = forecast::build(
        &config.handover,
        ForecastInputs {
            scenario: config.link.as_ref().map_or("live", |l| &l.scenario),
            timeline: config.link.as_ref().map(|l| &l.timeline),
            orbits: None,
            real_time: true,
            seed: config.seed,
        },
        epoch,
    )
    .map_err(|e| LiveError::Config(e.to_string()))?;

    // Peer connection and offer.
    // Real VP8 is what a browser receives: no padding stream then (see `sender_chain`).
    let CallerChain {
        media,
        registry,
        sender: control,
        pli,
        sent,
    } = sender_chain(
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
        let (offer_sdp, relay_sockets) =
            offer(config, peer.as_ref(), &events, links.is_some()).await?;
        let answer = signal(config, &peer_url, offer_sdp, epoch_unix_ns).await?;
        let shadow = config.shadow.filter(|_| links.is_some()).map(|completion| {
            sent.activate();
            let shadow = ShadowReceiver::new(sent.clone(), epoch, completion);
            Arc::new(Mutex::new(match config.shadow_compared {
                Some(other) => shadow.compared_with(other),
                None => shadow,
            }))
        });
        let observer = shadow.as_ref().map(|shadow| {
            let shadow = Arc::clone(shadow);
            Arc::new(move |at: Instant, datagram: &[u8]| {
                lock_shadow(&shadow).on_delivered(at, datagram);
            }) as DeliveryObserver
        });
        let (answer_sdp, relay) = relay_answer(
            answer.answer.sdp.clone(),
            relay_sockets,
            links,
            epoch,
            observer,
        )?;
        let shadow_driver = shadow
            .as_ref()
            .map(|shadow| tokio::spawn(drive_shadow(Arc::clone(shadow))));
        let answer_description = RTCSessionDescription::answer(answer_sdp).map_err(|e| {
            LiveError::Signalling(format!("the answerer sent a malformed answer: {e}"))
        })?;
        peer.set_remote_description(answer_description)
            .await
            .map_err(LiveError::webrtc)?;
        wait_connected(&mut connection, &events, epoch).await?;
        let setup_time = epoch.elapsed();
        let core = start_core(
            config,
            control,
            source,
            epoch,
            format!(
                "live-{}-{}",
                epoch_unix_ns.map_or(0, |ns| ns / 1_000_000),
                answer.call_id
            ),
        )?;
        let mut sender = SenderLoop {
            config,
            epoch,
            peer_url: &peer_url,
            call_id: answer.call_id.clone(),
            pli,
            path_rtt: relay.as_ref().map(|r| {
                Box::new(r.path_rtt_reader()) as Box<dyn Fn() -> Option<Duration> + Send + Sync>
            }),
            far: LiveFarEnd::default(),
            gone: (0, String::new()),
        };
        let result = sender
            .run(
                track,
                core,
                &mut connection,
                peer.as_ref(),
                setup_time,
                time,
                &mut on_status,
                cancel,
            )
            .await;
        let relay_stats = hang_up(&peer_url, &answer.call_id, relay).await;
        if let Some(driver) = shadow_driver {
            driver.abort();
        }
        result.map(|mut outcome| {
            outcome.relay = relay_stats;
            outcome.shadow = shadow.map(|s| lock_shadow(&s).summary());
            outcome
        })
    }
    .await;
    let _ = peer.close().await;
    outcome
}

/// Hangs up (`DELETE`), whatever happened, and stops the relay, if there is one.
async fn hang_up(peer_url: &Peer, call_id: &str, relay: Option<Relay>) -> Option<RelayStats> {
    let _ = request(
        peer_url,
        "DELETE",
        &format!("/calls/{call_id}"),
        None::<&()>,
        QOE_TIMEOUT,
    )
    .await;
    match relay {
        Some(r) => Some(r.stop().await),
        None => None,
    }
}

/// The offer, gathered (non-trickle), and with a link the relay's sockets, bound, with the
/// offer's candidate rewritten to the relay's answerer-facing address (the caller's own
/// candidate kept beside them).
async fn offer(
    config: &LiveCallConfig,
    peer: &dyn PeerConnection,
    events: &Events,
    relayed: bool,
) -> Result<(String, Option<(RelaySockets, std::net::SocketAddr)>), LiveError> {
    let offer = peer.create_offer(None).await.map_err(LiveError::webrtc)?;
    let offer = set_local_and_gather(peer, events, offer).await?;
    let mut offer_sdp = offer.sdp;
    if !relayed {
        return Ok((offer_sdp, None));
    }
    let sockets = RelaySockets::bind(config.local_ip).await?;
    let caller = *candidates(&offer_sdp)
        .first()
        .ok_or_else(|| LiveError::Signalling("the offer has no candidate".into()))?;
    offer_sdp = rewrite_candidates(&offer_sdp, sockets.answerer_facing()?)
        .map_err(|e| LiveError::Signalling(e.to_string()))?;
    Ok((offer_sdp, Some((sockets, caller))))
}

/// With a link: the answer's candidate rewritten to the relay's caller-facing address, and the
/// relay started between the two candidates; without one, the answer as it came.
fn relay_answer(
    mut answer_sdp: String,
    sockets: Option<(RelaySockets, std::net::SocketAddr)>,
    links: Option<(Link, Link)>,
    epoch: Instant,
    observer: Option<DeliveryObserver>,
) -> Result<(String, Option<Relay>), LiveError> {
    let (Some((sockets, caller)), Some((forward, reverse))) = (sockets, links) else {
        return Ok((answer_sdp, None));
    };
    let answerer = *candidates(&answer_sdp)
        .first()
        .ok_or_else(|| LiveError::Signalling("the answer has no candidate".into()))?;
    answer_sdp = rewrite_candidates(&answer_sdp, sockets.caller_facing()?)
        .map_err(|e| LiveError::Signalling(e.to_string()))?;
    let relay = sockets.start_observed(caller, answerer, forward, reverse, epoch, observer);
    Ok((answer_sdp, Some(relay)))
}

fn lock_shadow(shadow: &Mutex<ShadowReceiver>) -> std::sync::MutexGuard<'_, ShadowReceiver> {
    shadow.lock().unwrap_or_else(|e| e.into_inner())
}

/// Renders the shadow's frames as they fall due and declares its losses, between deliveries.
async fn drive_shadow(shadow: Arc<Mutex<ShadowReceiver>>) {
    /// The longest sleep: deliveries also drive the shadow, so this only bounds how late a
    /// frame's render instant is noticed when nothing arrives.
    const IDLE: Duration = Duration::from_millis(20);
    loop {
        let now = Instant::now();
        let due = lock_shadow(&shadow).poll_timeout();
        let wake = due.map_or(now + IDLE, |d| d.min(now + IDLE)).max(now);
        tokio::time::sleep_until(wake.into()).await;
        lock_shadow(&shadow).handle_timeout(Instant::now());
    }
}

/// POSTs the offer to the answerer and reads its answer.
async fn signal(
    config: &LiveCallConfig,
    peer_url: &Peer,
    offer_sdp: String,
    epoch_unix_ns: Option<u64>,
) -> Result<AnswerResponse, LiveError> {
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
        link_epoch: None,
    };
    let response = request(
        peer_url,
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
    response.json()
}

/// Waits until the peer connection is connected, or says why it is not (and, when it timed
/// out, whether ICE had connected: see [`LiveError::is_dtls_stall`]).
async fn wait_connected(
    connection: &mut tokio::sync::watch::Receiver<RTCPeerConnectionState>,
    events: &Events,
    epoch: Instant,
) -> Result<(), LiveError> {
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
        Some(RTCPeerConnectionState::Connected) => Ok(()),
        Some(state) => Err(LiveError::Webrtc(format!("the peer connection is {state}"))),
        None => Err(LiveError::ConnectTimeout {
            waited: CONNECT_TIMEOUT,
            ice_connected_after: events
                .ice_connected_at()
                .map(|at| at.saturating_duration_since(epoch)),
        }),
    }
}

/// The call core of a connected call: the policy set on the installed sender from `epoch`, the
/// camera started now, the scenario's truth (or no handovers without a link) for telemetry.
fn start_core(
    config: &LiveCallConfig,
    mut control: HandoverAwareSender,
    source: Box<dyn HandoverSource>,
    epoch: Instant,
    call_id: String,
) -> Result<CallCore, LiveError> {
    let truth: Box<dyn HandoverSource> = match &config.link {
        Some(l) => Box::new(l.timeline.oracle(epoch)),
        None => Box::new(NoHandovers),
    };
    let labels = CallLabels {
        call_id,
        scenario: config
            .link
            .as_ref()
            .map_or_else(|| "live".to_owned(), |l| l.scenario.clone()),
        seed: config.seed,
        sender: config.sender,
    };
    control.set_policy(
        epoch,
        config.decision_interval,
        source,
        config.policy.build(config.seed),
    );
    let video = Video::new(
        config.video,
        config.seed,
        Time::from_instant(epoch, Instant::now()),
    )
    .map_err(LiveError::Config)?;
    Ok(CallCore::new(epoch, labels, control, video, truth))
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
    peer_url: &'a Peer,
    call_id: String,
    /// Set when a PLI arrives; the encoder takes it.
    pli: Arc<AtomicBool>,
    /// With a link: the round trip through the emulated links now (queueing included).
    path_rtt: Option<Box<dyn Fn() -> Option<Duration> + Send + Sync>>,
    /// The answerer as the call core reads it, from its last QoE answer.
    far: LiveFarEnd,
    /// QoE queries in a row that said the answerer is gone, and what the last one said.
    gone: (u32, String),
}

/// The answerer's side of an interval, read through the signalling side channel before the core
/// closes the interval, and its FEC counts at its last answer.
#[derive(Default)]
struct LiveFarEnd {
    snapshot: Option<QoeSnapshot>,
    fec: (u64, u64),
}

impl LiveFarEnd {
    fn answered(&mut self, snapshot: Option<QoeSnapshot>) {
        if let Some(s) = &snapshot {
            self.fec = (s.fec_repair_received, s.fec_recovered);
        }
        self.snapshot = snapshot;
    }
}

impl FarEnd for LiveFarEnd {
    fn fec_received(&self) -> (u64, u64) {
        self.fec
    }

    fn take_interval_qoe(&mut self, _packets_sent: u64) -> QoeRecord {
        self.snapshot
            .take()
            .and_then(|s| s.interval)
            .unwrap_or_default()
    }
}

impl SenderLoop<'_> {
    /// The answerer's QoE, if it answers; counts the answers that say it is gone
    /// ([`GONE_AFTER`]).
    async fn qoe(&mut self, packets_sent: u64, take_interval: bool) -> Option<QoeSnapshot> {
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
        .await;
        let gone = match &response {
            Ok(r) if r.status == 404 => Some(format!(
                "the answerer no longer has call {} (404)",
                self.call_id
            )),
            Err(e @ LiveError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::ConnectionRefused =>
            {
                Some(format!("the answerer is gone: {e}"))
            }
            _ => None,
        };
        if let Some(reason) = gone {
            self.gone = (self.gone.0 + 1, reason);
        }
        let response = response.ok().filter(|r| r.status == 200)?;
        self.gone.0 = 0;
        response.json().ok()
    }

    /// Reads the answerer's side of the interval the core closes at `now`, if it closes one.
    async fn read_far_end(&mut self, core: &CallCore, now: Time, closing: bool) {
        if (closing || core.decision_due(now)) && core.interval_open() {
            let snapshot = self.qoe(core.video().packets_sent(), true).await;
            self.far.answered(snapshot);
        }
    }

    /// Hands the core's events to `on_status`.
    fn report(core: &mut CallCore, on_status: &mut impl FnMut(StatusEvent<'_>)) {
        while let Some(event) = core.poll_event() {
            match event {
                CallEvent::Decision(i) => on_status(StatusEvent::Decision(&core.decisions()[i])),
                CallEvent::Interval(i) => on_status(StatusEvent::Interval(&core.telemetry()[i])),
            }
        }
    }

    /// The RTT now (the ICE checks', or the emulated path's when longer), handed to the NACK
    /// responder and the core, and the last second's retransmission rate to the protection.
    async fn second_tick(
        &self,
        core: &mut CallCore,
        peer: &dyn PeerConnection,
        resent_at_last: &mut u64,
    ) {
        // The ICE checks' RTT did not follow the queueing delay of a squeezed link
        // (tests/live_nack.rs: the history culled packets before their NACKs came); with a link,
        // the round trip through it now is taken when longer, as the simulator hands the
        // responder the links' delays.
        let path = self.path_rtt.as_ref().and_then(|f| f());
        let measured = match (ice_rtt(peer).await, path) {
            (Some(i), Some(p)) => Some(i.max(p)),
            (i, p) => i.or(p),
        };
        let handles = core.handles().clone();
        if let Some(rtt) = measured {
            if let Some(responder) = &handles.nack {
                responder.set_rtt(rtt);
            }
            core.set_rtt(rtt);
        }
        if let Some(responder) = &handles.nack {
            let resent = responder.stats().retransmission_bytes;
            let bits = resent.saturating_sub(*resent_at_last) * 8;
            *resent_at_last = resent;
            handles.protection.set_nack_rate(bits);
        }
    }

    /// The status line of the second that just ended.
    async fn status_line(&mut self, core: &CallCore, bytes_at_last_second: &mut u64) -> StatusLine {
        let snapshot = self.qoe(core.video().packets_sent(), false).await;
        let stats = core.handles().pacer.stats();
        let bytes = core.video().bytes_encoded();
        let bitrate = bytes.saturating_sub(*bytes_at_last_second) as f64 * 8.0 / 1000.0;
        *bytes_at_last_second = bytes;
        StatusLine {
            elapsed: self.epoch.elapsed(),
            target_kbps: core.handles().target_bps() / 1000.0,
            bitrate_kbps: bitrate,
            fps: snapshot.as_ref().map(|s| s.fps_last_second),
            freezes: snapshot.as_ref().map(|s| s.freezes),
            limit_ms: u64::try_from(stats.queue_time_limit.as_millis()).unwrap_or(u64::MAX),
            queue_ms: u64::try_from(stats.expected_queue_time.as_millis()).unwrap_or(u64::MAX),
            source: StatusLine::source_state(core.decisions().last()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn run(
        &mut self,
        track: Arc<webrtc::media_stream::track_local::static_rtp::TrackLocalStaticRTP>,
        mut core: CallCore,
        connection: &mut tokio::sync::watch::Receiver<RTCPeerConnectionState>,
        peer: &dyn PeerConnection,
        setup_time: Duration,
        time: impl Fn(Instant) -> Time,
        on_status: &mut impl FnMut(StatusEvent<'_>),
        cancel: impl Future<Output = ()>,
    ) -> Result<LiveCallOutcome, LiveError> {
        on_status(StatusEvent::Connected {
            call_id: &self.call_id,
            setup: setup_time,
        });
        let epoch = self.epoch;
        let end = epoch + self.config.duration;
        let mut bytes_at_last_second = 0u64;
        let mut resent_at_last_second = 0u64;
        let mut second = tokio::time::interval_at(
            tokio::time::Instant::now() + Duration::from_secs(1),
            Duration::from_secs(1),
        );
        let mut ended_by = "completed".to_owned();
        tokio::pin!(cancel);

        loop {
            let next = core
                .poll_timeout()
                .map_or(end, |t| t.to_instant(epoch).min(end));
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
                    self.second_tick(&mut core, peer, &mut resent_at_last_second).await;
                    let line = self.status_line(&core, &mut bytes_at_last_second).await;
                    on_status(StatusEvent::Status(&line));
                    if self.gone.0 >= GONE_AFTER {
                        ended_by = self.gone.1.clone();
                        break;
                    }
                    continue;
                }
                () = tokio::time::sleep_until(next.into()) => {}
            }
            let now_instant = Instant::now();
            if now_instant >= end {
                break;
            }
            let now = time(now_instant);
            if self.pli.swap(false, Ordering::Relaxed) {
                core.on_key_frame_request();
            }
            self.read_far_end(&core, now, false).await;
            if let Err(e) = core.handle_timeout(now, time(end), &mut self.far) {
                ended_by = format!("the encoder failed: {e}");
                break;
            }
            Self::report(&mut core, on_status);
            for packet in core.transmits() {
                if let Err(e) = track.write_rtp(rtp_of(packet)).await {
                    ended_by = format!("the track refused a packet: {e}");
                }
            }
        }

        let now = time(Instant::now().min(end));
        self.read_far_end(&core, now, true).await;
        core.finish(now, &mut self.far);
        Self::report(&mut core, on_status);
        let last = self.qoe(core.video().packets_sent(), false).await;
        let rendered_per_second = last
            .as_ref()
            .map(|s| s.rendered_per_second.clone())
            .unwrap_or_default();
        let qoe = last.as_ref().map(|s| s.total).unwrap_or_default();
        self.far.answered(last);
        let fec = core.fec_totals(&self.far);
        let counts = core.counts();
        let video = core.video();
        Ok(LiveCallOutcome {
            call_id: self.call_id.clone(),
            setup_time,
            duration: epoch.elapsed(),
            ended_by,
            decisions: core.decisions().to_vec(),
            qoe,
            frames_encoded: video.frames_encoded(),
            key_frames: video.key_frames(),
            frames_discardable: video.frames_discardable(),
            media_packets: video.packets_sent(),
            plis_received: counts.key_frame_requests,
            target_range_bps: counts.target_range_bps.unwrap_or((0.0, 0.0)),
            relay: None,
            rendered_per_second,
            max_pacer_queue_ms: counts.max_queue_ms.0,
            queue_limit_at_max_ms: counts.max_queue_ms.1,
            nack_responder: core.handles().nack.as_ref().map(|r| r.stats()),
            fec,
            shadow: None,
            telemetry: core.take_telemetry(),
        })
    }
}

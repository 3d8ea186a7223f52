//! The answering side of a real call: the signalling server ([`super::signal`]), and per call a
//! peer connection, the media receiver with libwebrtc's jitter buffer, and the QoE meter.
//!
//! Every call runs one task: it takes the video track's RTP packets (RTX already turned back into
//! the original packets by the chain), hands the synthetic-codec payloads to the [`Receiver`] (a
//! real VP8 stream, a browser's, first goes through the [`Vp8Framer`], which works out the frames
//! the synthetic payloads describe themselves) on the caller's clock (aligned through
//! [`OfferRequest::epoch_unix_ns`]), feeds rendered frames to the [`QoeMeter`], sends the PLIs the
//! receiver (or the NACK generator, as in the simulator) asks for, hands the NACK generator the ICE
//! round-trip time each second, and reports a line per second. The caller reads the QoE through
//! `POST /calls/{id}/qoe`.

use super::LiveError;
use super::auth::{self, Token};
use super::peer::{Events, ReceiverChain, build_peer, receiver_chain, set_local_and_gather};
use super::respond::{error, json, read_json};
use super::signal::{
    AnswerResponse, OfferRequest, QoeQuery, QoeSnapshot, SessionDescription, check_video_offer,
    extmap_id,
};
use super::tls::{ServerTls, TlsListener};
use super::web::{self, WebConfig, WebHandle};
use crate::call::NackChoice;
use crate::call::streams::{PLAYOUT_DELAY_URI, RECEIVER_SSRC, VIDEO_SSRC, playout_minimum};
use crate::fec::FecReceiverHandle;
use crate::forecast::{self, ForecastError, ForecastInputs, ForecastSpec};
use crate::link::Time;
use crate::media::forecast_raise::ForecastRaise;
use crate::media::qoe::QoeMeter;
use crate::media::receiver::{Receiver, ReceiverConfig};
use crate::media::vp8::framer::Vp8Framer;
use crate::nack::NackGeneratorHandle;
use crate::scenario::HandoverTimeline;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, post};
use handover_predictor::HandoverSource;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use webrtc::media_stream::track_remote::{TrackRemote, TrackRemoteEvent};
use webrtc::peer_connection::{
    PeerConnection, RTCPeerConnectionState, RTCSessionDescription, StatsSelector,
};

/// Calls one server runs at once; more get `503` (each call costs a peer connection and a task).
pub const MAX_CALLS: usize = 16;

/// How long a call may go without its track before the answerer gives up on it (ICE, DTLS and
/// the first packet take well under a second on loopback).
pub const TRACK_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a caller that reads its QoE (this project's caller asks once a second) may send
/// neither a packet nor a QoE query before the answerer takes it for gone and ends the call. A
/// killed caller sends no goodbye, and ICE alone would take 30 s to fail the connection
/// (webrtc-rs's 5-s disconnected and 25-s failed timeouts). An outage on the emulated link
/// stops the packets but not the queries, which do not cross it, so it ends nothing. Where the
/// queries share the media's path, an outage longer than this ends the call on both sides (the
/// caller then hears `404`, [`super::call::GONE_AFTER`]). A caller that never asks (a browser
/// sending) is left to ICE.
pub const CALLER_SILENCE: Duration = Duration::from_secs(6);

/// What the answering server is told.
#[derive(Debug, Clone)]
pub struct AnswerConfig {
    /// The signalling address; the peer connections bind UDP on its IP.
    pub listen: SocketAddr,
    /// Serve a non-loopback address (off: refused, so nothing is exposed by accident).
    pub allow_non_loopback: bool,
    /// Accept FlexFEC-03 when an offer carries it (off: the answer leaves it out and the call
    /// runs without FEC, as with an answerer that does not support it).
    pub fec: bool,
    /// Serve the browser peer's page and endpoints too ([`super::web`]).
    pub web: Option<WebConfig>,
    /// Require `Authorization: Bearer <token>` on every request but the page's
    /// ([`super::auth`]). Required beyond loopback; on loopback, optional (then enforced).
    pub token: Option<Token>,
    /// Serve HTTPS with this certificate and key ([`super::tls`]); none: plain HTTP.
    pub tls: Option<ServerTls>,
    /// Every call's receiver raises its own playout delay around the handovers this forecast
    /// predicts ([`crate::media::forecast_raise`]); none: it follows the sender's extension only.
    pub receiver_raise: Option<ReceiverRaiseSetup>,
}

/// Where a receiver that raises its own playout delay gets its forecast: the emulated link's
/// handover timeline read through a `--handover` source, as a receiver behind that dish would.
#[derive(Debug, Clone)]
pub struct ReceiverRaiseSetup {
    /// The forecast source.
    pub handover: ForecastSpec,
    /// The scenario's name, for sources that name it in errors.
    pub scenario: String,
    /// The link's handover timeline.
    pub timeline: HandoverTimeline,
    /// The seed of sources that draw.
    pub seed: u64,
}

impl ReceiverRaiseSetup {
    /// The forecast of a link that started at `epoch`.
    ///
    /// # Errors
    ///
    /// The source's, for one that cannot run over this link.
    pub fn source(&self, epoch: Instant) -> Result<Box<dyn HandoverSource>, ForecastError> {
        forecast::build(
            &self.handover,
            ForecastInputs {
                scenario: &self.scenario,
                timeline: Some(&self.timeline),
                orbits: None,
                real_time: true,
                seed: self.seed,
            },
            epoch,
        )
    }
}

/// How often a call's receiver reads its own forecast, in whole seconds of the call's report
/// tick (as the simulator's [`crate::sim::RECEIVER_FORECAST_INTERVAL`]).
const RECEIVER_FORECAST_EVERY_S: u64 = 10;

/// A report from the server, for whoever prints them.
#[derive(Debug, Clone, PartialEq)]
pub enum AnswerEvent {
    /// A call was answered.
    Started {
        /// Its id.
        call_id: String,
        /// The caller's label, if any.
        label: Option<String>,
    },
    /// One second of a call.
    Second {
        /// Its id.
        call_id: String,
        /// The report line.
        line: String,
    },
    /// A call ended.
    Ended {
        /// Its id.
        call_id: String,
        /// Why, and its totals.
        summary: String,
    },
}

type Reporter = Arc<dyn Fn(AnswerEvent) + Send + Sync>;

/// One call's receiving state, shared by its task and the QoE endpoint.
struct CallState {
    receiver: Receiver,
    /// Frames of a real VP8 stream (a browser's), described for the receiver; the synthetic
    /// codec's packets describe themselves.
    framer: Vp8Framer,
    meter: QoeMeter,
    plis_sent: u64,
    rendered_this_second: u32,
    fps_last_second: u32,
    /// Frames rendered per second of the caller's clock.
    rendered_per_second: Vec<u32>,
    connected: bool,
    last_pli: Option<Time>,
    /// The FlexFEC receiver's counters.
    fec: FecReceiverHandle,
    /// The id of the playout-delay header extension, if the offer carries it.
    playout_extension: Option<u8>,
    /// When the caller last asked for its QoE (none: it never did).
    last_query: Option<Instant>,
}

struct CallEntry {
    state: Arc<Mutex<CallState>>,
    peer: Arc<dyn PeerConnection>,
    task: JoinHandle<()>,
}

struct Server {
    ip: std::net::IpAddr,
    fec: bool,
    receiver_raise: Option<ReceiverRaiseSetup>,
    calls: Mutex<HashMap<String, CallEntry>>,
    next_id: AtomicU64,
    report: Reporter,
}

/// A running answering server; [`AnswerServer::shutdown`] stops it and closes its calls.
pub struct AnswerServer {
    addr: SocketAddr,
    web: Option<WebHandle>,
    server: Arc<Server>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl AnswerServer {
    /// Binds `config.listen` and serves; `report` receives the servers' events.
    ///
    /// # Errors
    ///
    /// [`LiveError::Config`] for a non-loopback address without `allow_non_loopback` or without
    /// a token (checked before anything is bound), [`LiveError::Io`] if the address cannot be
    /// bound.
    pub async fn start(
        config: AnswerConfig,
        report: impl Fn(AnswerEvent) + Send + Sync + 'static,
    ) -> Result<Self, LiveError> {
        if !config.listen.ip().is_loopback() && !config.allow_non_loopback {
            return Err(LiveError::Config(format!(
                "{} is not a loopback address: pass it explicitly to serve it",
                config.listen
            )));
        }
        if auth::token_required(config.listen.ip()) && config.token.is_none() {
            return Err(LiveError::Config(format!(
                "{} is not a loopback address: serving it needs a bearer token (`answer` \
                 generates one, or give --token-file)",
                config.listen
            )));
        }
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(LiveError::io(format!("cannot listen on {}", config.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(LiveError::io("the listener has no address"))?;
        let server = Arc::new(Server {
            ip: addr.ip(),
            fec: config.fec,
            receiver_raise: config.receiver_raise,
            calls: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            report: Arc::new(report),
        });
        let (app, web_handle) = router(&server, config.web, config.token)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = match config.tls {
            None => tokio::spawn(serve_until(listener, app, stopped)),
            Some(tls) => tokio::spawn(serve_until(
                TlsListener::new(listener, addr, &tls),
                app,
                stopped,
            )),
        };
        Ok(Self {
            addr,
            web: web_handle,
            server,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The address it serves.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The browser peer's bridge, when served.
    pub fn web(&self) -> Option<&WebHandle> {
        self.web.as_ref()
    }

    /// Calls in progress.
    pub fn calls(&self) -> usize {
        lock(&self.server.calls).len()
    }

    /// Stops serving and closes every call.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let calls: Vec<(String, CallEntry)> = lock(&self.server.calls).drain().collect();
        for (id, call) in calls {
            finish(&self.server, &id, call, "the answerer shut down").await;
        }
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
        }
    }
}

impl Drop for AnswerServer {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The routes: the calls, the browser peer's endpoints (with `web`), all behind the token when
/// there is one, then the browser page, which is static, starts nothing and must load before
/// its script can send the token (`/#token=...`).
fn router(
    server: &Arc<Server>,
    web_config: Option<WebConfig>,
    token: Option<Token>,
) -> Result<(Router, Option<WebHandle>), LiveError> {
    let mut app = Router::new()
        .route("/calls", post(create_call))
        .route("/calls/{id}/qoe", post(query_qoe))
        .route("/calls/{id}", delete(end_call))
        .with_state(Arc::clone(server));
    let mut web_handle = None;
    if let Some(web_config) = web_config {
        let for_web = Arc::clone(server);
        let answerer: web::Answerer = Arc::new(move |request| {
            let server = Arc::clone(&for_web);
            Box::pin(async move {
                if lock(&server.calls).len() >= MAX_CALLS {
                    return Err((
                        StatusCode::SERVICE_UNAVAILABLE,
                        format!("already {MAX_CALLS} calls in progress"),
                    ));
                }
                answer(&server, request).await
            })
        });
        let (routes, handle) = web::routes(web_config, answerer)?;
        app = app.merge(routes);
        web_handle = Some(handle);
    }
    if let Some(token) = token {
        // `layer` also wraps the fallback: unknown paths get 401 too, not a map of the routes.
        app = app.layer(axum::middleware::from_fn_with_state(
            Arc::new(token),
            auth::require_bearer,
        ));
    }
    if web_handle.is_some() {
        app = app.merge(web::page_routes());
    }
    Ok((app, web_handle))
}

/// Serves `app` on `listener` until `stopped` fires.
async fn serve_until<L>(listener: L, app: Router, stopped: oneshot::Receiver<()>)
where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
{
    let _ = axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = stopped.await;
        })
        .await;
}

/// Reads a JSON body of at most [`MAX_BODY_BYTES`](super::signal::MAX_BODY_BYTES), or the error
/// response saying what is wrong; a declared content type must be JSON.
async fn json_body<T: serde::de::DeserializeOwned>(
    headers: &HeaderMap,
    body: Body,
) -> Result<T, Response> {
    if let Some(kind) = headers.get(header::CONTENT_TYPE) {
        let kind = kind.to_str().unwrap_or("");
        if !kind.trim_start().starts_with("application/json") {
            return Err(error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!("the body must be application/json, not {kind:?}"),
            ));
        }
    }
    read_json(body).await
}

async fn create_call(
    State(server): State<Arc<Server>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let request: OfferRequest = match json_body(&headers, body).await {
        Ok(r) => r,
        Err(response) => return response,
    };
    if lock(&server.calls).len() >= MAX_CALLS {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("already {MAX_CALLS} calls in progress"),
        );
    }
    match answer(&server, request).await {
        Ok(response) => {
            let location = format!("/calls/{}", response.call_id);
            let mut reply = json(StatusCode::CREATED, &response);
            if let Ok(value) = header::HeaderValue::from_str(&location) {
                reply.headers_mut().insert(header::LOCATION, value);
            }
            reply
        }
        Err((status, message)) => error(status, message),
    }
}

/// Parses the offer, builds the peer connection and answers; the call's task starts.
async fn answer(
    server: &Arc<Server>,
    request: OfferRequest,
) -> Result<AnswerResponse, (StatusCode, String)> {
    let bad = |m: String| (StatusCode::BAD_REQUEST, m);
    let internal = |e: LiveError| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string());
    if request.offer.kind != "offer" {
        return Err(bad(format!(
            "the description must be an offer, not {:?}",
            request.offer.kind
        )));
    }
    let nack = match request.nack.as_deref() {
        None | Some("libwebrtc") => NackChoice::Libwebrtc,
        Some("stock") => NackChoice::Stock,
        Some("off") => NackChoice::Off,
        Some(other) => {
            return Err(bad(format!(
                "unknown nack {other:?}: libwebrtc, stock or off"
            )));
        }
    };
    // Malformed SDP first (400), then SDP without video we can receive (422).
    let video = check_video_offer(&request.offer.sdp);
    let playout_extension = extmap_id(&request.offer.sdp, PLAYOUT_DELAY_URI);
    let offer = RTCSessionDescription::offer(request.offer.sdp)
        .map_err(|e| bad(format!("malformed SDP offer: {e}")))?;
    video.map_err(|m| (StatusCode::UNPROCESSABLE_ENTITY, m))?;
    let epoch = caller_epoch(request.epoch_unix_ns);
    let own_forecast = server
        .receiver_raise
        .as_ref()
        .map(|setup| setup.source(request.link_epoch.unwrap_or_else(Instant::now)))
        .transpose()
        .map_err(|e| {
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the receiver's forecast: {e}"),
            )
        })?;
    let ReceiverChain {
        media,
        registry,
        generator,
        fec,
    } = receiver_chain(nack, server.fec).map_err(internal)?;
    let (events, state_rx, mut tracks) = Events::new();
    let peer: Arc<dyn PeerConnection> = Arc::from(
        build_peer(media, registry, &events, server.ip)
            .await
            .map_err(internal)?,
    );
    let negotiated = async {
        peer.set_remote_description(offer)
            .await
            .map_err(|e| bad(format!("the offer was refused: {e}")))?;
        let answer = peer
            .create_answer(None)
            .await
            .map_err(|e| bad(format!("no answer to this offer: {e}")))?;
        set_local_and_gather(peer.as_ref(), &events, answer)
            .await
            .map_err(internal)
    }
    .await;
    let answer = match negotiated {
        Ok(a) => a,
        Err(e) => {
            let _ = peer.close().await;
            return Err(e);
        }
    };
    let call_id = format!("c{}", server.next_id.fetch_add(1, Ordering::Relaxed));
    let mut receiver = Receiver::new(ReceiverConfig::default());
    if own_forecast.is_some() {
        receiver.set_forecast_raise(ForecastRaise::with_defaults());
    }
    let state = Arc::new(Mutex::new(CallState {
        receiver,
        framer: Vp8Framer::new(),
        meter: QoeMeter::new(),
        plis_sent: 0,
        rendered_this_second: 0,
        fps_last_second: 0,
        rendered_per_second: Vec::new(),
        connected: false,
        last_pli: None,
        fec,
        playout_extension,
        last_query: None,
    }));
    let task = {
        let server = Arc::clone(server);
        let state = Arc::clone(&state);
        let peer = Arc::clone(&peer);
        let call_id = call_id.clone();
        tokio::spawn(async move {
            let track = tokio::time::timeout(TRACK_TIMEOUT, tracks.recv()).await;
            let reason = match track {
                Ok(Some(track)) => {
                    receive(
                        &server,
                        &call_id,
                        &state,
                        &peer,
                        track,
                        state_rx,
                        generator,
                        epoch,
                        own_forecast,
                    )
                    .await
                }
                _ => format!("no video track within {TRACK_TIMEOUT:?}"),
            };
            let entry = lock(&server.calls).remove(&call_id);
            if let Some(entry) = entry {
                // Our own task: do not abort it from inside.
                let CallEntry { state, peer, .. } = entry;
                end_report(&server, &call_id, &state, &reason);
                let _ = peer.close().await;
            }
        })
    };
    (server.report)(AnswerEvent::Started {
        call_id: call_id.clone(),
        label: request.label,
    });
    lock(&server.calls).insert(call_id.clone(), CallEntry { state, peer, task });
    Ok(AnswerResponse {
        call_id,
        answer: SessionDescription {
            kind: "answer".into(),
            sdp: answer.sdp,
        },
    })
}

/// The caller's epoch as an instant of ours: now minus how long ago it was by the wall clock
/// (exact on one host). Missing or implausible (in the future, more than a day ago): now.
fn caller_epoch(epoch_unix_ns: Option<u64>) -> Instant {
    let now = Instant::now();
    let Some(ns) = epoch_unix_ns else {
        return now;
    };
    let Ok(wall) = SystemTime::now().duration_since(UNIX_EPOCH) else {
        return now;
    };
    let ago = wall.checked_sub(Duration::from_nanos(ns));
    match ago {
        Some(ago) if ago < Duration::from_secs(86_400) => now.checked_sub(ago).unwrap_or(now),
        _ => now,
    }
}

impl CallState {
    /// The receiver at `now`: renders what is due into the meter and the per-second counts, and
    /// says whether a PLI goes out (the receiver's own, or the NACK generator's key-frame
    /// request when the receiver is not asking already and the last PLI is at least the
    /// receiver's spacing old, as in the simulator).
    fn serve(&mut self, now: Time, generator: Option<&NackGeneratorHandle>) -> bool {
        self.receiver.handle_timeout(now);
        while let Some(frame) = self.receiver.poll_rendered() {
            self.meter.on_rendered(&frame);
            self.rendered_this_second += 1;
            // Seconds of the caller's clock; a day bounds a clock gone wrong.
            let second = usize::try_from(now.as_millis() / 1000).unwrap_or(usize::MAX);
            if second < 86_400 {
                if self.rendered_per_second.len() <= second {
                    self.rendered_per_second.resize(second + 1, 0);
                }
                self.rendered_per_second[second] += 1;
            }
        }
        let mut pli = self.receiver.poll_pli(now);
        // The generator's key-frame request becomes a PLI only when the receiver is not
        // asking already and the last PLI is at least the receiver's spacing old (as sim).
        if let Some(generator) = generator
            && generator.take_key_frame_request()
        {
            let spaced = self.last_pli.is_none_or(|t| {
                now.saturating_duration_since(t) >= self.receiver.config().pli_interval
            });
            if !pli && !self.receiver.waiting_for_key_frame() && spaced {
                pli = true;
            }
        }
        if pli {
            self.last_pli = Some(now);
            self.plis_sent += 1;
        }
        pli
    }

    /// The status line of the second that just ended, with `bytes` received in it.
    fn second_line(&mut self, elapsed: Duration, bytes: u64) -> String {
        self.fps_last_second = std::mem::take(&mut self.rendered_this_second);
        let total = self.meter.total();
        format!(
            "t={:>3}s {:>3} fps {:>6.0} kbit/s received, {} frames, {} freezes, delay p95 {} ms, {} PLIs",
            elapsed.as_secs(),
            self.fps_last_second,
            bytes as f64 * 8.0 / 1000.0,
            total.frames_rendered,
            total.freeze_count,
            total
                .delay_percentile(95.0)
                .map_or("-".to_owned(), |d| d.as_millis().to_string()),
            self.plis_sent,
        )
    }
}

/// The call's receive loop; returns why it ended.
#[allow(clippy::too_many_arguments)]
async fn receive(
    server: &Server,
    call_id: &str,
    state: &Mutex<CallState>,
    peer: &Arc<dyn PeerConnection>,
    track: Arc<dyn TrackRemote>,
    mut connection: watch::Receiver<RTCPeerConnectionState>,
    generator: Option<NackGeneratorHandle>,
    epoch: Instant,
    mut own_forecast: Option<Box<dyn HandoverSource>>,
) -> String {
    let time = |i: Instant| Time::from_instant(epoch, i);
    let mut ticks = 0u64;
    if let Some(source) = &mut own_forecast {
        read_own_forecast(source.as_mut(), state, epoch);
    }
    // The media SSRC: the track's first (its RTX SSRC, if any, comes second); this project's
    // caller always uses VIDEO_SSRC, a browser a random one.
    let media_ssrc = track.ssrcs().await.first().copied().unwrap_or(VIDEO_SSRC);
    let mut second = tokio::time::interval_at(
        tokio::time::Instant::now() + Duration::from_secs(1),
        Duration::from_secs(1),
    );
    let started = Instant::now();
    let mut bytes_this_second = 0u64;
    let mut last_packet = Instant::now();
    loop {
        let due = lock(state)
            .receiver
            .poll_timeout()
            .map(|t| t.to_instant(epoch));
        let wake = async {
            match due {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            event = track.poll() => match event {
                Some(TrackRemoteEvent::OnRtpPacket(packet)) => {
                    last_packet = Instant::now();
                    // Padding (probes, keep-alives) carries no payload.
                    if packet.header.ssrc == media_ssrc && !packet.payload.is_empty() {
                        bytes_this_second += packet.payload.len() as u64;
                        let now = time(Instant::now());
                        let mut s = lock(state);
                        let s = &mut *s;
                        s.connected = true;
                        let playout = s
                            .playout_extension
                            .and_then(|id| playout_minimum(&packet.header, id));
                        let h = &packet.header;
                        s.framer.deliver(
                            &mut s.receiver,
                            now,
                            (h.sequence_number, h.timestamp, h.marker),
                            &packet.payload,
                            playout,
                        );
                    }
                }
                Some(TrackRemoteEvent::OnEnded) | None => return "the track ended".into(),
                Some(_) => {}
            },
            changed = connection.changed() => {
                let now_state = *connection.borrow();
                if changed.is_err()
                    || matches!(now_state, RTCPeerConnectionState::Closed | RTCPeerConnectionState::Failed)
                {
                    lock(state).connected = false;
                    return format!("the peer connection is {now_state}");
                }
            }
            _ = second.tick() => {
                ticks += 1;
                if let Some(source) = &mut own_forecast
                    && ticks.is_multiple_of(RECEIVER_FORECAST_EVERY_S)
                {
                    read_own_forecast(source.as_mut(), state, epoch);
                }
                if let Some(generator) = &generator
                    && let Some(rtt) = ice_rtt(peer.as_ref()).await
                {
                    generator.set_rtt(Some(rtt));
                }
                let line = lock(state).second_line(started.elapsed(), bytes_this_second);
                bytes_this_second = 0;
                (server.report)(AnswerEvent::Second { call_id: call_id.to_owned(), line });
                let asked = lock(state).last_query;
                if let Some(silent) = caller_silent(asked, last_packet) {
                    lock(state).connected = false;
                    return silent;
                }
            }
            () = wake => {}
        }
        let now = time(Instant::now());
        let pli = lock(state).serve(now, generator.as_ref());
        if pli {
            let pli =
                rtc::rtcp::payload_feedbacks::picture_loss_indication::PictureLossIndication {
                    sender_ssrc: RECEIVER_SSRC,
                    media_ssrc,
                };
            let _ = track.write_rtcp(vec![Box::new(pli)]).await;
        }
    }
}

/// Hands the call's receiver its own forecast as of now; a forecast that fails leaves the last
/// predictions in force.
fn read_own_forecast(source: &mut dyn HandoverSource, state: &Mutex<CallState>, epoch: Instant) {
    if let Ok(forecast) = source.forecast(Instant::now()) {
        lock(state).receiver.set_forecast(&forecast, epoch);
    }
}

/// Why the call ends when a caller that asks for its QoE has sent neither a packet nor a query
/// for [`CALLER_SILENCE`] (it is gone); `None` while it is there, or when it never asked.
fn caller_silent(last_query: Option<Instant>, last_packet: Instant) -> Option<String> {
    let query = last_query?.elapsed();
    let packet = last_packet.elapsed();
    (query >= CALLER_SILENCE && packet >= CALLER_SILENCE).then(|| {
        format!(
            "the caller is gone: no packet for {} s and no QoE query for {} s",
            packet.as_secs(),
            query.as_secs()
        )
    })
}

/// The round-trip time of the nominated ICE candidate pair, from the STUN checks (they cross the
/// relay, so this is the emulated path's RTT).
pub async fn ice_rtt(peer: &dyn PeerConnection) -> Option<Duration> {
    let report = peer.get_stats(Instant::now(), StatsSelector::None).await;
    report
        .candidate_pairs()
        .filter(|p| p.nominated && p.current_round_trip_time > 0.0)
        .map(|p| p.current_round_trip_time)
        .next()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
}

fn end_report(server: &Server, call_id: &str, state: &Mutex<CallState>, reason: &str) {
    let s = lock(state);
    let q = s.meter.total();
    (server.report)(AnswerEvent::Ended {
        call_id: call_id.to_owned(),
        summary: format!(
            "{reason}; {} frames rendered, {:.0} kbit/s, {} freezes, {:.1} fps, {} PLIs",
            q.frames_rendered,
            q.video_bitrate_kbps(),
            q.freeze_count,
            q.frame_rate(),
            s.plis_sent
        ),
    });
}

async fn finish(server: &Server, call_id: &str, call: CallEntry, reason: &str) {
    call.task.abort();
    end_report(server, call_id, &call.state, reason);
    let _ = call.peer.close().await;
}

async fn query_qoe(
    State(server): State<Arc<Server>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let query: QoeQuery = match json_body(&headers, body).await {
        Ok(q) => q,
        Err(response) => return response,
    };
    let state = match lock(&server.calls).get(&id) {
        Some(call) => Arc::clone(&call.state),
        None => return error(StatusCode::NOT_FOUND, format!("no call {id:?}")),
    };
    let mut s = lock(&state);
    s.last_query = Some(Instant::now());
    let received = s.receiver.stats().packets_received;
    s.meter.on_packet_counts(query.packets_sent, received);
    let interval = query
        .take_interval
        .then(|| s.meter.take_interval().to_record());
    let total = s.meter.total();
    json(
        StatusCode::OK,
        &QoeSnapshot {
            interval,
            total: total.to_record(),
            fps_last_second: s.fps_last_second,
            freezes: total.freeze_count,
            plis_sent: s.plis_sent,
            connected: s.connected,
            rendered_per_second: s.rendered_per_second.clone(),
            fec_repair_received: s.fec.stats().repair_received,
            fec_recovered: s.fec.stats().recovered(),
            frames_raised_by_forecast: s.receiver.stats().frames_raised_by_forecast,
        },
    )
}

async fn end_call(State(server): State<Arc<Server>>, Path(id): Path<String>) -> Response {
    let call = lock(&server.calls).remove(&id);
    match call {
        Some(call) => {
            finish(&server, &id, call, "the caller hung up").await;
            StatusCode::NO_CONTENT.into_response()
        }
        None => error(StatusCode::NOT_FOUND, format!("no call {id:?}")),
    }
}

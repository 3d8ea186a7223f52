//! The browser peer: a page served from the signalling origin that runs a call in the browser's
//! own WebRTC stack (libwebrtc, in Chromium), and the endpoints it and our caller talk to.
//!
//! Same origin, so no CORS: `rtc-client answer --web` (or the `browser` driver) serves the page
//! at `/` beside `/calls`. The page has two modes (`/?mode=receive`, `/?mode=send`):
//!
//! - **receive**: the browser is the far end of `rtc-client call`. Our caller keeps its role
//!   and protocol: it POSTs its offer to `/web/calls` exactly as to an answerer (its `--peer` is
//!   `http://HOST:PORT/web`). The offer waits there until the page, long-polling
//!   `GET /web/offer`, takes it, answers in the browser and POSTs the answer to
//!   `/web/answer/{id}`; that answer goes back to the caller as the `201`. Nothing in the
//!   caller changes, so the pacer, GoogCC, NACK/RTX and the telemetry are the ones every other
//!   call runs.
//! - **send**: the browser sends its fake camera to our receiver. The page POSTs its offer to
//!   `/web/send`; with a link configured the bridge puts the relay ([`super::relay`]) between
//!   the browser and our receiver, as our caller does for its own calls, then hands the offer
//!   to the answerer (the callback [`routes`] is given).
//!
//! Either way the page POSTs one `getStats()` sample a second to `/web/stats` (W3C
//! webrtc-stats: `inbound-rtp` framesDecoded, framesDropped, freezeCount,
//! totalFreezesDuration, jitterBufferDelay, packetsLost, nackCount, fecPacketsReceived,
//! fecPacketsDiscarded, keyFramesDecoded; `outbound-rtp` framesEncoded, framesSent, bytesSent,
//! targetBitrate; the candidate pair's availableOutgoingBitrate). Each becomes one JSON line of
//! the stats file. In receive mode a sample also carries the frames the page presented in that
//! second (`requestVideoFrameCallback`: each frame's RTP timestamp and display time), which our
//! QoE meter ([`QoeMeter`], WebRTC's freeze rule) counts, so our freeze count and the browser's
//! `freezeCount` describe the same frames; `/web/calls/{id}/qoe` answers our caller from it.
//! The reply to a sample says whether the driver wants a snapshot: the page then POSTs a PNG
//! of the video to `/web/snapshot`.

use super::LiveError;
use super::relay::{Relay, RelaySockets};
use super::respond::{error, json, read_json};
use super::signal::{
    AnswerResponse, OfferRequest, QoeQuery, QoeSnapshot, SessionDescription, candidates,
    rewrite_candidates,
};
use crate::link::{Link, LinkConfig, Time};
use crate::media::qoe::QoeMeter;
use crate::media::receiver::RenderedFrame;
use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use serde::Deserialize;
use std::collections::HashMap;
use std::future::Future;
use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{Notify, oneshot};

/// The page, with its script inline.
pub const PAGE: &str = include_str!("web/page.html");

/// How long an offer from our caller waits for a page to answer it (less than the caller's
/// own signalling timeout, so it hears why).
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(8);

/// How long `GET /web/offer` waits before answering `204` (the page asks again).
pub const OFFER_POLL: Duration = Duration::from_secs(10);

/// The largest snapshot accepted, bytes (a 640x360 PNG of the test pattern is about 300 kB).
pub const MAX_SNAPSHOT_BYTES: usize = 8 << 20;

/// What the bridge is configured with.
#[derive(Debug, Clone, Default)]
pub struct WebConfig {
    /// Append the browser's stats samples here as JSON lines.
    pub stats_out: Option<PathBuf>,
    /// For browser-sent calls: the links the relay applies between the browser and our
    /// receiver. None: direct.
    pub link: Option<WebLink>,
    /// The IP the relay binds.
    pub ip: Option<IpAddr>,
}

/// The emulated links of browser-sent calls.
#[derive(Debug, Clone)]
pub struct WebLink {
    /// Browser -> our receiver (the media).
    pub forward: LinkConfig,
    /// Its seed.
    pub forward_seed: u64,
    /// Our receiver -> the browser (the feedback).
    pub reverse: LinkConfig,
    /// Its seed.
    pub reverse_seed: u64,
}

/// The answerer's entry point for a browser's offer: the bridge hands it the offer (candidates
/// already pointing at the relay, if any) and gets the answer back, or the error response.
pub type Answerer = Arc<
    dyn Fn(
            OfferRequest,
        )
            -> Pin<Box<dyn Future<Output = Result<AnswerResponse, (StatusCode, String)>> + Send>>
        + Send
        + Sync,
>;

/// A receive-mode call: our caller's offer, and what the page reports about it.
struct BrowserCall {
    offer: String,
    epoch_unix_ns: Option<u64>,
    answer: Option<oneshot::Sender<String>>,
    taken: bool,
    ended: bool,
    meter: QoeMeter,
    frames_rendered: u64,
    last_bytes_received: Option<u64>,
    last_rtp: Option<i64>,
}

/// The bridge's state, shared by its endpoints and the driver ([`WebHandle`]).
pub struct WebState {
    config: WebConfig,
    calls: Mutex<HashMap<String, BrowserCall>>,
    offered: Notify,
    next_id: AtomicU64,
    samples: Mutex<Vec<serde_json::Value>>,
    stats_file: Mutex<Option<std::fs::File>>,
    snapshot_wanted: AtomicBool,
    snapshot: Mutex<Option<Vec<u8>>>,
    snapshot_ready: Notify,
    /// Set by the page's first request for work (an offer to answer, or its own to send).
    page_arrived: AtomicBool,
    page_arrival: Notify,
    relays: tokio::sync::Mutex<Vec<Relay>>,
    answerer: Answerer,
}

impl WebState {
    fn page_seen(&self) {
        if !self.page_arrived.swap(true, Ordering::SeqCst) {
            self.page_arrival.notify_waiters();
        }
    }
}

/// The driver's view of the bridge.
#[derive(Clone)]
pub struct WebHandle(Arc<WebState>);

impl WebHandle {
    /// Every stats sample the page posted so far, in order.
    pub fn samples(&self) -> Vec<serde_json::Value> {
        lock(&self.0.samples).clone()
    }

    /// Asks the page for a snapshot of its video and waits up to `timeout` for it (PNG bytes).
    pub async fn snapshot(&self, timeout: Duration) -> Option<Vec<u8>> {
        *lock(&self.0.snapshot) = None;
        self.0.snapshot_wanted.store(true, Ordering::Relaxed);
        let ready = self.0.snapshot_ready.notified();
        let _ = tokio::time::timeout(timeout, ready).await;
        lock(&self.0.snapshot).take()
    }

    /// Waits up to `timeout` for a page to ask for work (`GET /web/offer` or `POST /web/send`),
    /// so that a call's length can count from a page that is ready rather than from a browser's
    /// launch (a cold Chromium on a loaded machine takes seconds to load the page). True once
    /// one has; false if none did in time.
    pub async fn wait_for_page(&self, timeout: Duration) -> bool {
        let arrival = self.0.page_arrival.notified();
        tokio::pin!(arrival);
        arrival.as_mut().enable();
        if self.0.page_arrived.load(Ordering::SeqCst) {
            return true;
        }
        tokio::time::timeout(timeout, arrival).await.is_ok()
            || self.0.page_arrived.load(Ordering::SeqCst)
    }

    /// Stops the relays the bridge started (browser-sent calls over a link).
    pub async fn stop_relays(&self) -> Vec<super::relay::RelayStats> {
        let relays: Vec<Relay> = std::mem::take(&mut *self.0.relays.lock().await);
        let mut out = Vec::new();
        for relay in relays {
            out.push(relay.stop().await);
        }
        out
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The bridge's routes (merged into the answering server's) and the driver's handle.
///
/// # Errors
///
/// [`LiveError::Io`] if the stats file cannot be created.
pub fn routes(config: WebConfig, answerer: Answerer) -> Result<(Router, WebHandle), LiveError> {
    let stats_file = match &config.stats_out {
        Some(path) => Some(std::fs::File::create(path).map_err(LiveError::io(format!(
            "cannot create the browser stats file {}",
            path.display()
        )))?),
        None => None,
    };
    let state = Arc::new(WebState {
        config,
        calls: Mutex::new(HashMap::new()),
        offered: Notify::new(),
        next_id: AtomicU64::new(1),
        samples: Mutex::new(Vec::new()),
        stats_file: Mutex::new(stats_file),
        snapshot_wanted: AtomicBool::new(false),
        snapshot: Mutex::new(None),
        snapshot_ready: Notify::new(),
        page_arrived: AtomicBool::new(false),
        page_arrival: Notify::new(),
        relays: tokio::sync::Mutex::new(Vec::new()),
        answerer,
    });
    let router = Router::new()
        .route("/web/calls", post(caller_offer))
        .route("/web/calls/{id}/qoe", post(caller_qoe))
        .route("/web/calls/{id}", delete(caller_hangup))
        .route("/web/offer", get(page_takes_offer))
        .route("/web/answer/{id}", post(page_answers))
        .route("/web/send", post(page_sends))
        .route("/web/stats", post(page_stats))
        .route("/web/snapshot", post(page_snapshot))
        .with_state(Arc::clone(&state));
    Ok((router, WebHandle(state)))
}

/// The page at `/`, served apart from [`routes`]: it is static and starts nothing, so it is the
/// one thing served without the token (the browser cannot send one when it loads a URL; the
/// page's script reads it from the URL's fragment, which the browser never sends, and sends it
/// with every request it makes).
pub fn page_routes() -> Router {
    Router::new().route("/", get(page))
}

async fn page() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE).into_response()
}

/// `sdp` with only its loopback candidates: our peers bind loopback only, and the relay takes
/// the first candidate as the browser's address. Chromium gathers loopback candidates only with
/// `--allow-loopback-in-peer-connection`.
///
/// # Errors
///
/// A message when no loopback candidate is left.
pub fn keep_loopback_candidates(sdp: &str) -> Result<String, String> {
    let mut out = String::with_capacity(sdp.len());
    let mut kept = 0;
    for line in sdp.split_inclusive('\n') {
        if line.starts_with("a=candidate:") {
            let loopback = candidates(line)
                .first()
                .is_some_and(|a| a.ip().is_loopback());
            if !loopback {
                continue;
            }
            kept += 1;
        }
        out.push_str(line);
    }
    if kept == 0 {
        return Err(
            "the browser's description has no loopback UDP candidate (Chromium gathers \
                    them only with --allow-loopback-in-peer-connection; mDNS .local candidates \
                    are not resolved here)"
                .into(),
        );
    }
    Ok(out)
}

/// `POST /web/calls`: our caller's offer, held until a page answers it.
async fn caller_offer(State(web): State<Arc<WebState>>, body: Body) -> Response {
    let request: OfferRequest = match read_json(body).await {
        Ok(r) => r,
        Err(response) => return response,
    };
    if request.offer.kind != "offer" {
        return error(StatusCode::BAD_REQUEST, "the description must be an offer");
    }
    let id = format!("b{}", web.next_id.fetch_add(1, Ordering::Relaxed));
    let (tx, rx) = oneshot::channel();
    lock(&web.calls).insert(
        id.clone(),
        BrowserCall {
            offer: request.offer.sdp,
            epoch_unix_ns: request.epoch_unix_ns,
            answer: Some(tx),
            taken: false,
            ended: false,
            meter: QoeMeter::new(),
            frames_rendered: 0,
            last_bytes_received: None,
            last_rtp: None,
        },
    );
    web.offered.notify_waiters();
    match tokio::time::timeout(ANSWER_TIMEOUT, rx).await {
        Ok(Ok(sdp)) => json(
            StatusCode::CREATED,
            &AnswerResponse {
                call_id: id,
                answer: SessionDescription {
                    kind: "answer".into(),
                    sdp,
                },
            },
        ),
        _ => {
            lock(&web.calls).remove(&id);
            error(
                StatusCode::GATEWAY_TIMEOUT,
                format!(
                    "no browser page answered within {ANSWER_TIMEOUT:?}: open /?mode=receive on \
                     this server"
                ),
            )
        }
    }
}

/// `GET /web/offer`: the oldest offer no page took yet, waiting up to [`OFFER_POLL`].
async fn page_takes_offer(State(web): State<Arc<WebState>>) -> Response {
    web.page_seen();
    let deadline = tokio::time::Instant::now() + OFFER_POLL;
    loop {
        let notified = web.offered.notified();
        {
            let mut calls = lock(&web.calls);
            let mut ids: Vec<&String> = calls
                .iter()
                .filter(|(_, c)| !c.taken)
                .map(|(id, _)| id)
                .collect();
            ids.sort();
            if let Some(id) = ids.first().map(|s| (*s).clone())
                && let Some(call) = calls.get_mut(&id)
            {
                call.taken = true;
                return json(
                    StatusCode::OK,
                    &serde_json::json!({
                        "call_id": id,
                        "offer": {"type": "offer", "sdp": call.offer},
                        "epoch_unix_ns": call.epoch_unix_ns,
                    }),
                );
            }
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            return StatusCode::NO_CONTENT.into_response();
        }
    }
}

/// `POST /web/answer/{id}`: the page's answer to our caller's offer.
async fn page_answers(
    State(web): State<Arc<WebState>>,
    Path(id): Path<String>,
    body: Body,
) -> Response {
    let answer: SessionDescription = match read_json(body).await {
        Ok(a) => a,
        Err(response) => return response,
    };
    if answer.kind != "answer" {
        return error(StatusCode::BAD_REQUEST, "the description must be an answer");
    }
    let sdp = match keep_loopback_candidates(&answer.sdp) {
        Ok(s) => s,
        Err(m) => return error(StatusCode::BAD_REQUEST, m),
    };
    let sender = lock(&web.calls).get_mut(&id).and_then(|c| c.answer.take());
    match sender {
        Some(tx) => {
            let _ = tx.send(sdp);
            StatusCode::NO_CONTENT.into_response()
        }
        None => error(
            StatusCode::NOT_FOUND,
            format!("no call {id:?} waits for an answer"),
        ),
    }
}

/// `POST /web/send`: the page's own offer (it sends): through the relay if a link is set, then
/// to the answerer.
async fn page_sends(State(web): State<Arc<WebState>>, body: Body) -> Response {
    web.page_seen();
    let mut request: OfferRequest = match read_json(body).await {
        Ok(r) => r,
        Err(response) => return response,
    };
    if request.offer.kind != "offer" {
        return error(StatusCode::BAD_REQUEST, "the description must be an offer");
    }
    request.offer.sdp = match keep_loopback_candidates(&request.offer.sdp) {
        Ok(s) => s,
        Err(m) => return error(StatusCode::BAD_REQUEST, m),
    };
    let Some(link) = web.config.link.clone() else {
        return match (web.answerer)(request).await {
            Ok(answer) => json(StatusCode::CREATED, &answer),
            Err((status, m)) => error(status, m),
        };
    };
    match through_relay(&web, &link, request).await {
        Ok(answer) => json(StatusCode::CREATED, &answer),
        Err((status, m)) => error(status, m),
    }
}

/// Binds the relay, points the offer at it, gets the answer, points that at the relay's other
/// socket and starts the relay: the browser is the caller of [`super::relay`].
async fn through_relay(
    web: &WebState,
    link: &WebLink,
    mut request: OfferRequest,
) -> Result<AnswerResponse, (StatusCode, String)> {
    let internal = |e: String| (StatusCode::INTERNAL_SERVER_ERROR, e);
    let forward = Link::new(link.forward.clone(), link.forward_seed)
        .map_err(|e| internal(format!("forward link: {e}")))?;
    let reverse = Link::new(link.reverse.clone(), link.reverse_seed)
        .map_err(|e| internal(format!("reverse link: {e}")))?;
    let ip = web.config.ip.unwrap_or(IpAddr::from([127, 0, 0, 1]));
    let sockets = RelaySockets::bind(ip)
        .await
        .map_err(|e| internal(e.to_string()))?;
    let browser = *candidates(&request.offer.sdp).first().ok_or_else(|| {
        (
            StatusCode::BAD_REQUEST,
            "the offer has no candidate".to_owned(),
        )
    })?;
    let answerer_facing = sockets
        .answerer_facing()
        .map_err(|e| internal(e.to_string()))?;
    request.offer.sdp = rewrite_candidates(&request.offer.sdp, answerer_facing)
        .map_err(|e| (StatusCode::BAD_REQUEST, e.to_string()))?;
    let epoch = Instant::now();
    request.link_epoch = Some(epoch);
    let mut answer = (web.answerer)(request).await?;
    let ours = *candidates(&answer.answer.sdp)
        .first()
        .ok_or_else(|| internal("our answer has no candidate".into()))?;
    let caller_facing = sockets
        .caller_facing()
        .map_err(|e| internal(e.to_string()))?;
    answer.answer.sdp = rewrite_candidates(&answer.answer.sdp, caller_facing)
        .map_err(|e| internal(e.to_string()))?;
    let relay = sockets.start(browser, ours, forward, reverse, epoch);
    web.relays.lock().await.push(relay);
    Ok(answer)
}

/// One frame the page presented (`requestVideoFrameCallback` metadata).
#[derive(Debug, Clone, Copy, Deserialize)]
struct PresentedFrame {
    /// Its RTP timestamp.
    rtp: u32,
    /// When it was (expected to be) displayed, UNIX milliseconds.
    shown_unix_ms: f64,
}

/// What the page posts each second (the stats it read are kept as they came).
#[derive(Debug, Deserialize)]
struct Sample {
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    frames: Vec<PresentedFrame>,
    #[serde(flatten)]
    stats: serde_json::Map<String, serde_json::Value>,
}

/// `POST /web/stats`: one sample; the reply says whether a snapshot is wanted and whether the
/// call was hung up.
async fn page_stats(State(web): State<Arc<WebState>>, body: Body) -> Response {
    let sample: Sample = match read_json(body).await {
        Ok(s) => s,
        Err(response) => return response,
    };
    let mut line = sample.stats.clone();
    let received_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    line.insert("received_unix_ms".into(), received_unix_ms.into());
    if let Some(id) = &sample.call_id {
        line.insert("call_id".into(), id.clone().into());
    }
    line.insert("frames_presented".into(), sample.frames.len().into());
    let mut hangup = false;
    if let Some(id) = &sample.call_id
        && let Some(call) = lock(&web.calls).get_mut(id)
    {
        hangup = call.ended;
        let bytes = sample
            .stats
            .get("bytesReceived")
            .and_then(serde_json::Value::as_u64);
        meter_frames(call, &sample.frames, bytes);
    }
    let value = serde_json::Value::Object(line);
    if let Some(file) = lock(&web.stats_file).as_mut() {
        let _ = writeln!(file, "{value}");
        let _ = file.flush();
    }
    lock(&web.samples).push(value);
    let snapshot = web.snapshot_wanted.swap(false, Ordering::Relaxed);
    json(
        StatusCode::OK,
        &serde_json::json!({"snapshot": snapshot, "hangup": hangup}),
    )
}

/// Feeds the presented frames to the call's QoE meter: capture instants from our sender's RTP
/// timestamps (it stamps the capture instant since its epoch at 90 kHz), render instants from
/// the page's display times against the same epoch (one host, one wall clock), and the bytes the
/// browser received since the last sample spread over the frames.
fn meter_frames(call: &mut BrowserCall, frames: &[PresentedFrame], bytes_received: Option<u64>) {
    let Some(epoch_ns) = call.epoch_unix_ns else {
        return;
    };
    let bytes = match (bytes_received, call.last_bytes_received) {
        (Some(now), Some(before)) => now.saturating_sub(before),
        (Some(now), None) => now,
        _ => 0,
    };
    if bytes_received.is_some() {
        call.last_bytes_received = bytes_received;
    }
    let per_frame = u32::try_from(bytes / frames.len().max(1) as u64).unwrap_or(u32::MAX);
    for frame in frames {
        let rtp = {
            let value = i64::from(frame.rtp);
            match call.last_rtp {
                None => value,
                Some(last) => {
                    let delta = (value - last).rem_euclid(1 << 32);
                    if delta >= 1 << 31 {
                        last + delta - (1 << 32)
                    } else {
                        last + delta
                    }
                }
            }
        };
        call.last_rtp = Some(call.last_rtp.map_or(rtp, |l| l.max(rtp)));
        let capture_ns = u64::try_from(rtp)
            .unwrap_or(0)
            .saturating_mul(1_000_000_000)
            / 90_000;
        let shown_ns = (frame.shown_unix_ms * 1e6) as u64;
        call.meter.on_rendered(&RenderedFrame {
            frame_id: call.frames_rendered as u32,
            capture: Time::from_nanos(capture_ns),
            rendered: Time::from_nanos(shown_ns.saturating_sub(epoch_ns)),
            bytes: per_frame,
            key_frame: false,
        });
        call.frames_rendered += 1;
    }
}

/// `POST /web/snapshot`: a PNG of the page's video.
async fn page_snapshot(
    State(web): State<Arc<WebState>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let kind = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if kind != "image/png" {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("a snapshot is image/png, not {kind:?}"),
        );
    }
    let Ok(bytes) = to_bytes(body, MAX_SNAPSHOT_BYTES).await else {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a snapshot is at most {MAX_SNAPSHOT_BYTES} bytes"),
        );
    };
    if !bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return error(StatusCode::BAD_REQUEST, "the body is not a PNG");
    }
    *lock(&web.snapshot) = Some(bytes.to_vec());
    web.snapshot_ready.notify_waiters();
    StatusCode::NO_CONTENT.into_response()
}

/// `POST /web/calls/{id}/qoe`: our caller's QoE query, answered from the frames the page
/// presented.
async fn caller_qoe(
    State(web): State<Arc<WebState>>,
    Path(id): Path<String>,
    body: Body,
) -> Response {
    let query: QoeQuery = match read_json(body).await {
        Ok(q) => q,
        Err(response) => return response,
    };
    let mut calls = lock(&web.calls);
    let Some(call) = calls.get_mut(&id) else {
        return error(StatusCode::NOT_FOUND, format!("no call {id:?}"));
    };
    let interval = query
        .take_interval
        .then(|| call.meter.take_interval().to_record());
    let total = call.meter.total();
    json(
        StatusCode::OK,
        &QoeSnapshot {
            interval,
            total: total.to_record(),
            fps_last_second: 0,
            freezes: total.freeze_count,
            plis_sent: 0,
            connected: !call.ended,
            rendered_per_second: Vec::new(),
            fec_repair_received: 0,
            fec_recovered: 0,
            frames_raised_by_forecast: 0,
        },
    )
}

/// `DELETE /web/calls/{id}`: our caller hung up; the page hears it with its next sample.
async fn caller_hangup(State(web): State<Arc<WebState>>, Path(id): Path<String>) -> Response {
    match lock(&web.calls).get_mut(&id) {
        Some(call) => {
            call.ended = true;
            StatusCode::NO_CONTENT.into_response()
        }
        None => error(StatusCode::NOT_FOUND, format!("no call {id:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_page_is_ready_once_it_asks_for_work_and_stays_so() {
        let answerer: Answerer = Arc::new(|_| {
            Box::pin(async { Err((StatusCode::NOT_IMPLEMENTED, "not in this test".into())) })
        });
        let (_, web) = routes(WebConfig::default(), answerer).unwrap();
        assert!(!web.wait_for_page(Duration::from_millis(50)).await);
        let state = Arc::clone(&web.0);
        let page = tokio::spawn(async move { page_takes_offer(State(state)).await });
        let asked = Instant::now();
        assert!(web.wait_for_page(Duration::from_secs(5)).await);
        assert!(
            asked.elapsed() < Duration::from_secs(2),
            "{:?}",
            asked.elapsed()
        );
        page.abort();
        // Already seen: no wait at all.
        assert!(web.wait_for_page(Duration::ZERO).await);
    }

    #[test]
    fn only_loopback_candidates_are_kept() {
        let sdp = "v=0\r\na=candidate:1 1 udp 1 10.0.0.5 4000 typ host\r\n\
                   a=candidate:2 1 udp 1 127.0.0.1 4001 typ host\r\n\
                   a=candidate:3 1 udp 1 abc.local 4002 typ host\r\na=end-of-candidates\r\n";
        let kept = keep_loopback_candidates(sdp).unwrap();
        assert_eq!(
            candidates(&kept),
            vec!["127.0.0.1:4001".parse::<std::net::SocketAddr>().unwrap()]
        );
        assert!(!kept.contains(".local") && kept.contains("end-of-candidates"));
        let error =
            keep_loopback_candidates("v=0\r\na=candidate:3 1 udp 1 abc.local 4002 typ host\r\n")
                .unwrap_err();
        assert!(
            error.contains("--allow-loopback-in-peer-connection"),
            "{error}"
        );
    }
}

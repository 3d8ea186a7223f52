//! Signalling beyond loopback: the bearer token (missing, wrong, another server's, right), the
//! limits with and without it, and HTTPS with a self-signed certificate. Every server binds
//! 127.0.0.1 with a token given, which the server then requires exactly as beyond loopback.

#![cfg(feature = "live")]

mod cli_support;
mod live_support;

use live_support::{Answerer, Seen, config, default_sender, parse_and_validate};
use rtc_client::call::PolicyChoice;
use rtc_client::forecast::ForecastSpec;
use rtc_client::live::answer::{AnswerConfig, AnswerEvent, AnswerServer, MAX_CALLS};
use rtc_client::live::auth::Token;
use rtc_client::live::call::run;
use rtc_client::live::http::{Peer, Response, request_raw};
use rtc_client::live::peer::{
    CallerChain, Events, build_peer, sender_chain, set_local_and_gather, video_track,
};
use rtc_client::live::signal::{ErrorBody, MAX_BODY_BYTES};
use rtc_client::live::tls::ServerTls;
use rtc_client::live::web::WebConfig;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use webrtc::media_stream::track_local::TrackLocal;

const TIMEOUT: Duration = Duration::from_secs(10);

/// An answerer on 127.0.0.1 requiring `token` (if any), serving HTTPS with `tls` (if any) and
/// the browser page with `web`.
async fn answerer(token: Option<Token>, tls: Option<ServerTls>, web: bool) -> Answerer {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let server = AnswerServer::start(
        AnswerConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            allow_non_loopback: false,
            fec: true,
            web: web.then(WebConfig::default),
            token,
            tls,
            receiver_raise: None,
        },
        move |event| sink.lock().unwrap().push(event),
    )
    .await
    .expect("the answerer starts");
    Answerer { server, events }
}

/// A real offer (the caller's media engine and chain, gathered on loopback), and the peer
/// connection that made it, which must live while the offer is used.
async fn real_offer() -> (Box<dyn webrtc::peer_connection::PeerConnection>, String) {
    let CallerChain {
        media, registry, ..
    } = sender_chain(default_sender(), None, true).unwrap();
    let (events, _state, _tracks) = Events::new();
    let peer = build_peer(media, registry, &events, "127.0.0.1".parse().unwrap())
        .await
        .unwrap();
    peer.add_track(video_track(true, true) as Arc<dyn TrackLocal>)
        .await
        .unwrap();
    let offer = peer.create_offer(None).await.unwrap();
    let offer = set_local_and_gather(peer.as_ref(), &events, offer)
        .await
        .unwrap();
    let body = serde_json::json!({"offer": {"type": "offer", "sdp": offer.sdp}}).to_string();
    (peer, body)
}

async fn post(peer: &Peer, path: &str, body: &[u8]) -> Response {
    request_raw(peer, "POST", path, "application/json", body, TIMEOUT)
        .await
        .expect("the server answers")
}

fn reason(r: &Response) -> String {
    r.json::<ErrorBody>()
        .map(|b| b.error)
        .unwrap_or_else(|_| r.text())
}

fn started(answerer: &Answerer) -> usize {
    answerer
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, AnswerEvent::Started { .. }))
        .count()
}

/// A 401 with the RFC 6750 challenge; `invalid` when a token was presented.
fn assert_unauthorized(r: &Response, invalid: bool) {
    assert_eq!(r.status, 401, "{}", r.text());
    let challenge = r.header("www-authenticate").expect("a challenge");
    assert!(challenge.starts_with("Bearer realm="), "{challenge}");
    assert_eq!(
        challenge.contains("error=\"invalid_token\""),
        invalid,
        "{challenge}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_this_servers_token_get_401_and_start_nothing() {
    let token = Token::generate().unwrap();
    let a = answerer(Some(token.clone()), None, false).await;
    // Another server instance, with its own token: its token is worthless here.
    let other_token = Token::generate().unwrap();
    let b = answerer(Some(other_token.clone()), None, false).await;
    let url = format!("http://{}", a.server.local_addr());
    let (_offerer, offer) = real_offer().await;

    let missing = Peer::plain(&url).unwrap();
    let r = post(&missing, "/calls", offer.as_bytes()).await;
    assert_unauthorized(&r, false);
    assert!(reason(&r).contains("Authorization: Bearer"), "{}", r.text());
    let wrong = Token::parse("0123456789abcdef0123456789abcdef").unwrap();
    let wrong = Peer::new(&url, Some(wrong), None).unwrap();
    assert_unauthorized(&post(&wrong, "/calls", offer.as_bytes()).await, true);
    let replayed = Peer::new(&url, Some(other_token.clone()), None).unwrap();
    assert_unauthorized(&post(&replayed, "/calls", offer.as_bytes()).await, true);
    // And the other way round: this server's token is refused by the other.
    let b_url = format!("http://{}", b.server.local_addr());
    let at_b = Peer::new(&b_url, Some(token.clone()), None).unwrap();
    assert_unauthorized(&post(&at_b, "/calls", offer.as_bytes()).await, true);

    // Every route, known or not, and nothing is read first: an oversized body is not a 413.
    let mut big = b"{\"offer\":\"".to_vec();
    big.extend(std::iter::repeat_n(b'a', 2 * MAX_BODY_BYTES));
    assert_unauthorized(&post(&missing, "/calls", &big).await, false);
    assert_unauthorized(&post(&missing, "/calls/c1/qoe", b"{}").await, false);
    for (method, path) in [("DELETE", "/calls/c1"), ("GET", "/"), ("GET", "/nope")] {
        let r = request_raw(&missing, method, path, "text/plain", b"", TIMEOUT)
            .await
            .unwrap();
        assert_unauthorized(&r, false);
    }
    assert_eq!(a.server.calls(), 0);
    assert_eq!(b.server.calls(), 0);
    assert_eq!(
        started(&a) + started(&b),
        0,
        "a refused request started a call"
    );
    b.server.shutdown().await;

    // With the token, a call runs: a short real call over loopback.
    let mut call = config(
        url,
        Duration::from_secs(4),
        Duration::from_secs(2),
        PolicyChoice::Default,
        ForecastSpec::None,
        None,
    );
    call.token = Some(token);
    let mut seen = Seen::default();
    let outcome = run(&call, |e| seen.record(e), std::future::pending())
        .await
        .expect("the call with the token runs");
    assert_eq!(outcome.ended_by, "completed");
    assert!(outcome.qoe.frames_rendered > 40, "{:?}", outcome.qoe);
    // The QoE side channel (also behind the token) answered: every interval has the
    // receiver's frames.
    let records = parse_and_validate(&seen.lines);
    assert!(!records.is_empty());
    assert!(
        records.iter().all(|r| r.qoe.frames_rendered > 0),
        "{records:?}"
    );
    assert_eq!(started(&a), 1);
    a.server.shutdown().await;
}

/// Fills the server with [`MAX_CALLS`] calls, then checks the 17th is refused with 503 and an
/// oversized body with 413, as before.
async fn limits_hold(token: Option<Token>) {
    let a = answerer(token.clone(), None, false).await;
    let peer = Peer::new(&format!("http://{}", a.server.local_addr()), token, None).unwrap();
    let (_offerer, offer) = real_offer().await;
    for i in 0..MAX_CALLS {
        let r = post(&peer, "/calls", offer.as_bytes()).await;
        assert_eq!(r.status, 201, "call {i}: {}", r.text());
    }
    assert_eq!(a.server.calls(), MAX_CALLS);
    let r = post(&peer, "/calls", offer.as_bytes()).await;
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(reason(&r).contains("16 calls"), "{}", r.text());
    let mut big = br#"{"offer":{"type":"offer","sdp":""#.to_vec();
    big.extend(std::iter::repeat_n(b'a', MAX_BODY_BYTES + 1));
    big.extend(br#""}}"#);
    let r = post(&peer, "/calls", &big).await;
    assert_eq!(r.status, 413, "{}", r.text());
    assert!(reason(&r).contains("larger than"), "{}", r.text());
    assert_eq!(a.server.calls(), MAX_CALLS);
    a.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_and_body_limits_hold_with_a_token() {
    limits_hold(Some(Token::generate().unwrap())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_and_body_limits_hold_on_loopback_without_a_token() {
    limits_hold(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_address_without_a_token_is_refused_before_binding() {
    // TEST-NET-1 (RFC 5737): not an address of this machine, so binding it would fail with an
    // I/O error; the refusal comes first, as a configuration error naming the token.
    let refused = AnswerServer::start(
        AnswerConfig {
            listen: "192.0.2.1:0".parse().unwrap(),
            allow_non_loopback: true,
            fec: true,
            web: None,
            token: None,
            tls: None,
            receiver_raise: None,
        },
        |_| {},
    )
    .await
    .err()
    .expect("refused");
    assert!(
        matches!(refused, rtc_client::live::LiveError::Config(ref m) if m.contains("bearer token")),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_page_loads_without_the_token_and_its_endpoints_need_it() {
    let token = Token::generate().unwrap();
    let a = answerer(Some(token.clone()), None, true).await;
    let url = format!("http://{}", a.server.local_addr());
    let missing = Peer::plain(&url).unwrap();
    let page = request_raw(&missing, "GET", "/", "text/plain", b"", TIMEOUT)
        .await
        .unwrap();
    assert_eq!(page.status, 200);
    // The page reads the token from the fragment and sends it as a header.
    assert!(page.text().contains("location.hash"), "the page's script");
    assert!(page.text().contains("Bearer ${token}"), "the page's script");
    assert_unauthorized(&post(&missing, "/web/stats", b"{}").await, false);
    let (_offerer, offer) = real_offer().await;
    assert_unauthorized(&post(&missing, "/web/send", offer.as_bytes()).await, false);
    let with = Peer::new(&url, Some(token), None).unwrap();
    let r = post(&with, "/web/stats", b"{}").await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(a.server.calls(), 0);
    a.server.shutdown().await;
}

/// A self-signed certificate for 127.0.0.1 and its key, as PEM files in `dir`.
fn self_signed(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let issued = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let cert = dir.join(format!("{name}.crt"));
    let key = dir.join(format!("{name}.key"));
    std::fs::write(&cert, issued.cert.pem()).unwrap();
    std::fs::write(&key, issued.signing_key.serialize_pem()).unwrap();
    (cert, key)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_runs_over_https_with_a_self_signed_certificate_and_the_token() {
    let dir = cli_support::scratch("live_auth", "https");
    let (cert, key) = self_signed(&dir, "server");
    let (stranger, stranger_key) = self_signed(&dir, "stranger");
    let token = Token::generate().unwrap();
    let tls = ServerTls::from_pem_files(&cert, &key).expect("the certificate and key load");
    let a = answerer(Some(token.clone()), Some(tls), false).await;
    let https = format!("https://{}", a.server.local_addr());

    // Certificates that do not go with the key, or files that hold none, are named.
    let mismatch = ServerTls::from_pem_files(&cert, &stranger_key).unwrap_err();
    assert!(
        mismatch.to_string().contains("does not go with"),
        "{mismatch}"
    );
    let no_cert = ServerTls::from_pem_files(&key, &key).unwrap_err();
    assert!(no_cert.to_string().contains("no certificate"), "{no_cert}");
    let no_key = ServerTls::from_pem_files(&cert, &cert).unwrap_err();
    assert!(no_key.to_string().contains("no private key"), "{no_key}");
    let missing = ServerTls::from_pem_files(&dir.join("absent.crt"), &key).unwrap_err();
    assert!(missing.to_string().contains("absent.crt"), "{missing}");

    // Without the token over TLS: 401, as over plain HTTP.
    let no_token = Peer::new(&https, None, Some(&cert)).unwrap();
    assert_unauthorized(&post(&no_token, "/calls", b"{}").await, false);
    // A certificate the caller does not trust fails the handshake, and plain HTTP gets nothing.
    let untrusted = Peer::new(&https, Some(token.clone()), Some(&stranger)).unwrap();
    let refused = request_raw(
        &untrusted,
        "POST",
        "/calls",
        "application/json",
        b"{}",
        TIMEOUT,
    )
    .await
    .unwrap_err();
    assert!(refused.to_string().contains("TLS"), "{refused}");
    let plain = Peer::new(
        &format!("http://{}", a.server.local_addr()),
        Some(token.clone()),
        None,
    )
    .unwrap();
    let plain = request_raw(&plain, "POST", "/calls", "application/json", b"{}", TIMEOUT).await;
    assert!(!plain.is_ok_and(|r| r.status == 401 || r.status == 201));
    assert_eq!(started(&a), 0);

    // The round trip: a short call whose signalling and QoE side channel run over HTTPS.
    let mut call = config(
        https,
        Duration::from_secs(3),
        Duration::from_secs(3),
        PolicyChoice::Default,
        ForecastSpec::None,
        None,
    );
    call.token = Some(token);
    call.ca = Some(cert);
    let mut seen = Seen::default();
    let outcome = run(&call, |e| seen.record(e), std::future::pending())
        .await
        .expect("the call over HTTPS runs");
    assert_eq!(outcome.ended_by, "completed");
    assert!(outcome.qoe.frames_rendered > 30, "{:?}", outcome.qoe);
    assert_eq!(parse_and_validate(&seen.lines).len(), 1);
    let end = a.saw_end(Duration::from_secs(3)).await;
    assert!(
        end.is_some_and(|s| s.contains("hung up")),
        "the DELETE arrived"
    );
    a.server.shutdown().await;
}

#[test]
fn the_commands_refuse_weak_tokens_and_https_without_a_ca() {
    let dir = cli_support::scratch("live_auth", "cli");
    let weak = dir.join("weak.token");
    std::fs::write(&weak, "hunter2\n").unwrap();
    let o = cli_support::run(&[
        "answer",
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        weak.to_str().unwrap(),
    ]);
    cli_support::assert_clear_failure(&o, "at least 22");
    let o = cli_support::run(&[
        "answer",
        "--listen",
        "127.0.0.1:0",
        "--token",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ]);
    cli_support::assert_clear_failure(&o, "distinct characters");
    let o = cli_support::run(&["call", "--peer", "https://127.0.0.1:1", "--duration", "2s"]);
    cli_support::assert_clear_failure(&o, "--ca");
    let o = cli_support::run(&["answer", "--tls-cert", "x.pem"]);
    cli_support::assert_clear_failure(&o, "--tls-key");
}

//! Embedding the whole handover-aware sender in a webrtc-rs call, through the plugin's one-call
//! install, on a link that binds.
//!
//! Shows what an application does to use this crate:
//!
//! 1. register the codecs (VP8, its RTX, FlexFEC-03), transport-wide congestion control
//!    (webrtc-rs's `configure_congestion_control`, whose placeholder slots the install replaces)
//!    and NACK feedback in the media engine, and give the video encoding its RTX and FEC SSRCs;
//! 2. [`SenderConfig::install`] the sender into the interceptor registry: the pacer, GoogCC in
//!    the congestion controller, the congestion window, FlexFEC below the TWCC sender, the NACK
//!    responder with RTX, the RTCP reports and one schedule of handover-timed actions (the
//!    pacer's hold, GoogCC's guard, the protection's boost);
//! 3. give the [`HandoverAwareSender`] a forecast source and a queue policy
//!    ([`HandoverAwareSender::set_policy`]) and drive its timer from a task: each decision sets
//!    the pacer's queue time limit and hands the forecast's handovers to the action schedule;
//! 4. size the encoder's frames from the sender's handles (the target less the protection's
//!    overhead, the congestion window's frame drops, the pacer's pause), and hand the NACK
//!    responder and the protection the RTT and the retransmission rate.
//!
//! Everything runs in one process: a sender and a receiver peer connection on 127.0.0.1, the
//! offer and answer handed over in memory, no STUN and no mDNS, and every datagram between them
//! through a UDP relay whose sender-to-receiver direction is a Starlink-like uplink (capacity,
//! drop-tail queue, slot-boundary loss). The frames are synthetic bytes that the receiver counts
//! but does not decode.
//!
//! ```text
//! cargo run -p pacer --example embed                 # about 70 s
//! cargo run -p pacer --example embed -- --seconds 100
//! ```

use anyhow::{Context, Result, bail, ensure};
use handover_predictor::predict::{Calibrated, SLOT};
use pacer::cwnd::frame_drop_interval;
use pacer::sender::{ChainKind, HandoverAwareSender, SenderConfig, SenderHandles};
use pacer::telemetry::ActionsRecord;
use pacer::{ActionConfig, OnnxPolicy, PacerStats};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtc::ice::mdns::MulticastDnsMode;
use rtc::interceptor::Gcc;
use rtc::media::Sample;
use rtc::media_stream::MediaStreamTrack;
use rtc::peer_connection::configuration::media_engine::{
    MIME_TYPE_FLEX_FEC03, MIME_TYPE_RTX, MIME_TYPE_VP8,
};
use rtc::rtp_transceiver::rtp_sender::{
    RTCPFeedback, RTCRtpCodec, RTCRtpCodecParameters, RTCRtpCodingParameters,
    RTCRtpEncodingParameters, RTCRtpFecParameters, RTCRtpRtxParameters, RtpCodecKind,
};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::net::UdpSocket;
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;
use webrtc::media_stream::track_local::TrackLocal;
use webrtc::media_stream::track_local::static_sample::TrackLocalStaticSample;
use webrtc::media_stream::track_remote::{TrackRemote, TrackRemoteEvent};
use webrtc::peer_connection::{
    CongestionFeedback, MediaEngine, PeerConnection, PeerConnectionBuilder,
    PeerConnectionEventHandler, RTCIceGatheringState, RTCPeerConnectionState,
    RTCSessionDescription, Registry, SettingEngineBuilder, StatsSelector,
    configure_congestion_control, register_default_interceptors,
};

/// The learned queue-limit model (its card; the ONNX file lies beside it).
const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/policy.json");
/// How often the policy decides. Deployments use `pacer::DEFAULT_DECISION_INTERVAL` (120 s); the
/// demo decides every 10 s so that a 70-s run shows several decisions.
const DECISION_INTERVAL: Duration = Duration::from_secs(10);
/// Long enough for the hold and the boost to start (see [`ABOUT`]).
const DEFAULT_SECONDS: u64 = 70;
/// The first slot boundary, after the start; then one every [`SLOT`] (15 s).
const FIRST_BOUNDARY: Duration = Duration::from_secs(10);
/// The uplink's capacity: GoogCC reaches it about 35 s in (from its 300-kbit/s start, 8 % a
/// second) and is held to it from then on.
const CAPACITY_BPS: u64 = 4_000_000;
/// The uplink's drop-tail queue: a datagram that would wait longer than this is dropped.
const QUEUE_LIMIT: Duration = Duration::from_millis(200);
/// The uplink's propagation delay.
const ONE_WAY_DELAY: Duration = Duration::from_millis(20);
/// The share of uplink packets lost in each 100-ms row after a slot boundary: the first two rows
/// of the profile measured on Starlink's uplink (lagos.csv: 47.5, 20.3, 3.8, 1.9 %;
/// traces/scenarios/starlink.toml, docs/architecture.md "Handover-timed actions").
const BOUNDARY_LOSS: [f64; 2] = [0.475, 0.20];
const BOUNDARY_ROW: Duration = Duration::from_millis(100);
/// Seeds the link's losses (and the action schedule's timing jitter, which is zero here).
const SEED: u64 = 7;
/// What the run shows and what it cannot, printed first so that nobody reads the lines that
/// follow as more than they are.
const ABOUT: &str = "\
The whole handover-aware sender, installed with SenderConfig::install into a webrtc-rs call and
run by the best shipped handover-aware policy, timed@learned:models/policy.json: the learned
queue-limit model plus the pacer's hold, GoogCC's guard and the FEC boost around each forecast
handover. The peers are on 127.0.0.1 and every datagram between them crosses an in-process relay.
Sender to receiver is the binding link: 4 Mbit/s from a 200-ms drop-tail queue, 20 ms one way,
and Starlink's slot-boundary loss: a boundary every 15 s from 10 s on, 47.5 % of packets lost in
the 100 ms after it and 20 % in the next 100 ms (the measured uplink profile,
traces/scenarios/starlink.toml), seeded. Receiver to sender (RTCP) is clean. The forecast is the
slot grid on the same instants (Calibrated::grid: every boundary, probability 0.74). The policy
decides every 10 s instead of the deployed 120 s so that the run shows several decisions.
Why 70 s: the guard applies from the first boundary, but the hold and the boost wait for the
onset tracker, which places the windows once every 100-ms span from 150 ms before the forecast
instants to 250 ms after holds 50 packets with transport feedback. GoogCC starts near 300 kbit/s
and climbs some 8 % a second, so that takes three boundaries (on a slower link, with fewer
packets, it takes more), and the hold and the boost start at the fourth, 55 s in, and again at
70 s. The hold gate keeps the hold while boundary packets are lost measurably more often than
the others, which they are here.
What it cannot show: whether this helps. The receiver is webrtc-rs's stock one: it does not
decode the synthetic frames, recover packets from FEC or take retransmissions out of RTX (so it
asks for a lost packet again and again), so there are no freezes to count.
For that: cargo run --release -p rtc-client -- demo
";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const FPS: u32 = 30;
const VP8_PAYLOAD_TYPE: u8 = 96;
const RTX_PAYLOAD_TYPE: u8 = 97;
const FEC_PAYLOAD_TYPE: u8 = 98;
const VIDEO_SSRC: u32 = 0x5EED_0001;
const RTX_SSRC: u32 = 0x5EED_0002;
const FEC_SSRC: u32 = 0x5EED_0003;

#[tokio::main]
async fn main() -> Result<()> {
    let seconds = seconds_from_args()?;
    println!("{ABOUT}");

    // The media engine: the codecs, transport-wide congestion control (feedback and header
    // extension; the install replaces its interceptors) and NACK feedback.
    let mut media = media_engine()?;
    let registry = configure_congestion_control(
        Registry::new(),
        Gcc::default(),
        CongestionFeedback::Twcc,
        &mut media,
    )?;
    register_nack_feedback(&mut media);

    // The whole sender in one call, with the defaults (GoogCC, pushback congestion window,
    // libwebrtc's FEC and NACK with RTX, no padding) and timed@learned's actions: the plugin's
    // defaults with the key-frame block off (the encoder here schedules no key frames).
    let mut actions = ActionConfig::default();
    actions.keyframe_block.enabled = false;
    let config = SenderConfig {
        actions: Some(actions),
        ..SenderConfig::default()
    };
    let (registry, mut sender) = config.install(registry, ChainKind::PeerConnection)?;
    println!("sender chain, wire first: {:?}", registry.slots());
    let handles = sender.handles().clone();

    // The forecast: Starlink's 15-s slot grid on the relay's boundaries, every boundary with the
    // pooled switch probability (Calibrated::slot_grid would put the grid on seconds 12, 27, 42
    // and 57 of each UTC minute, which the in-process link does not follow).
    let start = Instant::now();
    let first_boundary = start + FIRST_BOUNDARY;
    let policy = OnnxPolicy::load(MODEL).with_context(|| format!("loading {MODEL}"))?;
    sender.set_policy(
        start,
        DECISION_INTERVAL,
        Calibrated::grid(first_boundary, SLOT)?,
        policy,
    );
    let (stop_policy, stopped) = oneshot::channel();
    let policy = tokio::spawn(run_policy(sender, stopped));

    // Two peers on loopback, the relay between them.
    let uplink = Uplink::new(first_boundary);
    let counts = uplink.counts.clone();
    let call = tokio::time::timeout(CONNECT_TIMEOUT, Call::connect(media, registry, uplink))
        .await
        .context("the peers did not connect within 10 s")??;
    let rtt_us = Arc::new(AtomicU64::new(0));
    let (stop_encoder, encoder_stopped) = oneshot::channel();
    let encoder = tokio::spawn(encode(
        call.track.clone(),
        handles.clone(),
        rtt_us.clone(),
        encoder_stopped,
    ));

    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    let mut resent_bytes = 0;
    for _ in 0..seconds {
        tick.tick().await;
        // What the encoder and the NACK responder need from outside the chain: the RTT (ICE's,
        // through the relay) and the retransmission rate.
        if let Some(rtt) = ice_rtt(&*call.sender).await {
            rtt_us.store(rtt.as_micros() as u64, Ordering::Relaxed);
            if let Some(nack) = &handles.nack {
                nack.set_rtt(rtt);
            }
        }
        if let Some(nack) = &handles.nack {
            let resent = nack.stats().retransmission_bytes;
            handles
                .protection
                .set_nack_rate(resent.saturating_sub(resent_bytes) * 8);
            resent_bytes = resent;
        }
        println!(
            "t={:>2}s {} | received {} pkts | link queue {} ms, dropped {} at boundaries, {} queue \
             full",
            start.elapsed().as_secs(),
            status(&handles.pacer.stats(), handles.target_bps()),
            call.received.packets.load(Ordering::Relaxed),
            counts.queued_us.load(Ordering::Relaxed) / 1000,
            counts.boundary_drops(),
            counts.queue_full.load(Ordering::Relaxed),
        );
    }

    let _ = stop_encoder.send(());
    let encoded = encoder.await??;
    let _ = stop_policy.send(());
    let sender = policy.await?;
    call.close().await?;

    // What happened.
    let stats = handles.pacer.stats();
    let received = call.received.packets.load(Ordering::Relaxed);
    println!(
        "final (read after the call closed): {}",
        status(&stats, handles.target_bps())
    );
    let limits: Vec<String> = sender
        .decisions()
        .iter()
        .map(|d| {
            format!(
                "{} ms/{}",
                d.queue_time_limit.as_millis(),
                d.forecast.handover_count()
            )
        })
        .collect();
    println!(
        "decisions ({}, every {} s; limit/handovers forecast): {}",
        sender
            .decisions()
            .first()
            .map_or("none", |d| d.policy.as_str()),
        DECISION_INTERVAL.as_secs(),
        limits.join(", ")
    );
    if let Some(actions) = &handles.actions {
        let record = ActionsRecord::from(actions.take_stats(Instant::now()));
        println!(
            "actions: hold applied {} ({} ms), guard applied {} ({} ms), boost applied {} \
             ({} ms), playout raise applied {} ({} ms); windows moved {} ms from the forecast \
             instants by the onset tracker; boundary packets lost {} points more often than \
             others, hold gate {}, receiver gate {}",
            record.hold.applied,
            record.hold.total_ms,
            record.guard.applied,
            record.guard.total_ms,
            record.boost.applied,
            record.boost.total_ms,
            record.playout.applied,
            record.playout.total_ms,
            record.timing_shift_ms,
            actions
                .boundary_excess_loss_pct()
                .map_or("(unmeasured)".to_owned(), |p| format!("{p:.1}")),
            verdict(actions.hold_open()),
            verdict(actions.receiver_open()),
        );
    }
    let fec = handles.protection.stats();
    let nack = handles.nack.as_ref().map(|n| n.stats()).unwrap_or_default();
    println!(
        "repair: {} FEC packets in {} blocks ({} factor updates boosted); {} NACK requests, {} \
         retransmitted on RTX",
        fec.fec_packets_sent, fec.blocks, fec.boosted_updates, nack.requests, nack.retransmissions,
    );
    println!(
        "link: {} boundaries; dropped {} in the first 100 ms after them and {} in the next, {} \
         for a full queue; delivered {} datagrams",
        counts.boundaries(Instant::now()),
        counts.boundary[0].load(Ordering::Relaxed),
        counts.boundary[1].load(Ordering::Relaxed),
        counts.queue_full.load(Ordering::Relaxed),
        counts.delivered.load(Ordering::Relaxed),
    );
    println!(
        "pacer sent {} pkts / {} bytes; encoder made {} frames, skipped {} for the pacer's pause \
         and {} for the congestion window; receiver got {received} pkts",
        stats.packets_sent, stats.bytes_sent, encoded.frames, encoded.paused, encoded.window_drops,
    );
    ensure!(
        stats.packets_sent > 0 && received > 0,
        "no media went through the sender: the pacer sent {} packets, the receiver got {received}",
        stats.packets_sent
    );
    Ok(())
}

/// Drives the sender's policy timer; returns the sender when told to stop.
async fn run_policy(
    mut sender: HandoverAwareSender,
    mut stop: oneshot::Receiver<()>,
) -> HandoverAwareSender {
    while let Some(due) = sender.poll_timeout() {
        tokio::select! {
            _ = tokio::time::sleep_until(due.into()) => {}
            _ = &mut stop => break,
        }
        if let Some(decision) = sender.handle_timeout(Instant::now()) {
            println!("policy decision {decision}");
        }
    }
    sender
}

/// Frames the encoder made and skipped.
struct Encoded {
    frames: u64,
    paused: u64,
    window_drops: u64,
}

/// A synthetic 30-fps encoder, as libwebrtc's steers its own: each frame is the media target's
/// share (the target less the protection's overhead), a frame is skipped while the pacer says
/// the encoder should pause, and one in every few while the congestion window pushes back
/// (libwebrtc's `DropFrame` mode, the default). It hands the protection the target and the RTT
/// its FEC rates are decided from.
async fn encode(
    track: Arc<TrackLocalStaticSample>,
    handles: SenderHandles,
    rtt_us: Arc<AtomicU64>,
    mut stop: oneshot::Receiver<()>,
) -> Result<Encoded> {
    let frame = Duration::from_secs(1) / FPS;
    let mut ticker = tokio::time::interval(frame);
    let mut encoded = Encoded {
        frames: 0,
        paused: 0,
        window_drops: 0,
    };
    for n in 1u64.. {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = &mut stop => break,
        }
        let stats = handles.pacer.stats();
        let rtt = Duration::from_micros(rtt_us.load(Ordering::Relaxed));
        handles
            .protection
            .set_network(stats.target_bitrate_bps, rtt);
        if stats.encoder_should_pause {
            encoded.paused += 1;
            continue;
        }
        let window = handles.cwnd.snapshot();
        let drop_every = (window.target_bps > 0)
            .then(|| frame_drop_interval(window.cwnd_reduce_ratio))
            .flatten();
        if drop_every.is_some_and(|every| n % u64::from(every) == 0) {
            encoded.window_drops += 1;
            continue;
        }
        let target = handles
            .protection
            .media_target_bps(stats.target_bitrate_bps);
        let bytes = usize::try_from(target / 8 / u64::from(FPS))?.max(1);
        let sample = Sample {
            data: vec![0x42; bytes].into(),
            duration: frame,
            ..Sample::new(Instant::now())
        };
        track
            .sample_writer(VIDEO_SSRC, VP8_PAYLOAD_TYPE)
            .write_sample(&sample)
            .await?;
        encoded.frames += 1;
    }
    Ok(encoded)
}

fn status(s: &PacerStats, estimate_bps: f64) -> String {
    format!(
        "target {} kbit/s (estimate {:.0}), queue {} pkts (expected {} ms, limit {} ms), \
         sent {} pkts, pause {}",
        s.target_bitrate_bps / 1000,
        estimate_bps / 1000.0,
        s.queued_packets,
        s.expected_queue_time.as_millis(),
        s.queue_time_limit.as_millis(),
        s.packets_sent,
        s.encoder_should_pause,
    )
}

fn seconds_from_args() -> Result<u64> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(DEFAULT_SECONDS),
        [flag, n] if flag == "--seconds" => match n.parse() {
            Ok(seconds) if seconds > 0 => Ok(seconds),
            _ => bail!("--seconds takes a whole number of at least 1, not {n:?}"),
        },
        _ => bail!("usage: embed [--seconds N]"),
    }
}

// ── The relay and its uplink ─────────────────────────────────────────────────────────────────

/// The uplink's counters, read while the relay runs.
#[derive(Default)]
struct LinkCounts {
    first_boundary: Option<Instant>,
    /// Dropped in each 100-ms row after a boundary.
    boundary: [AtomicU64; 2],
    queue_full: AtomicU64,
    delivered: AtomicU64,
    /// How long the latest accepted datagram waited in the queue, µs.
    queued_us: AtomicU64,
}

impl LinkCounts {
    fn boundary_drops(&self) -> u64 {
        self.boundary
            .iter()
            .map(|n| n.load(Ordering::Relaxed))
            .sum()
    }

    /// Boundaries passed by `now`.
    fn boundaries(&self, now: Instant) -> u128 {
        self.first_boundary
            .and_then(|first| now.checked_duration_since(first))
            .map_or(0, |since| since.as_nanos() / SLOT.as_nanos() + 1)
    }
}

/// The sender-to-receiver direction, sans I/O: slot-boundary loss, then a drop-tail queue served
/// at [`CAPACITY_BPS`], then [`ONE_WAY_DELAY`]. A datagram's size is its UDP payload (SRTP and
/// RTP headers included), and its boundary row is read when it reaches the relay, which on
/// loopback is when the sender sent it.
struct Uplink {
    first_boundary: Instant,
    rng: ChaCha8Rng,
    /// When the link will have sent everything it accepted.
    busy_until: Instant,
    /// Accepted datagrams, each with the instant it reaches the receiver.
    in_flight: VecDeque<(Instant, Vec<u8>)>,
    counts: Arc<LinkCounts>,
}

impl Uplink {
    fn new(first_boundary: Instant) -> Self {
        Self {
            first_boundary,
            rng: ChaCha8Rng::seed_from_u64(SEED),
            busy_until: Instant::now(),
            in_flight: VecDeque::new(),
            counts: Arc::new(LinkCounts {
                first_boundary: Some(first_boundary),
                ..LinkCounts::default()
            }),
        }
    }

    /// The 100-ms row after the latest boundary that `at` falls in, if it is a lossy one.
    fn boundary_row(&self, at: Instant) -> Option<usize> {
        let since = at.checked_duration_since(self.first_boundary)?;
        let into_slot = since.as_nanos() % SLOT.as_nanos();
        let row = usize::try_from(into_slot / BOUNDARY_ROW.as_nanos()).ok()?;
        (row < BOUNDARY_LOSS.len()).then_some(row)
    }

    fn offer(&mut self, now: Instant, datagram: &[u8]) {
        if let Some(row) = self.boundary_row(now)
            && self.rng.random_bool(BOUNDARY_LOSS[row])
        {
            self.counts.boundary[row].fetch_add(1, Ordering::Relaxed);
            return;
        }
        let starts = self.busy_until.max(now);
        if starts - now > QUEUE_LIMIT {
            self.counts.queue_full.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.counts
            .queued_us
            .store((starts - now).as_micros() as u64, Ordering::Relaxed);
        let bits = datagram.len() as u64 * 8;
        self.busy_until = starts + Duration::from_nanos(bits * 1_000_000_000 / CAPACITY_BPS);
        self.in_flight
            .push_back((self.busy_until + ONE_WAY_DELAY, datagram.to_vec()));
    }

    fn next_due(&self) -> Option<Instant> {
        self.in_flight.front().map(|(at, _)| *at)
    }

    fn pop_due(&mut self, now: Instant) -> Option<Vec<u8>> {
        if self.next_due()? > now {
            return None;
        }
        self.counts.delivered.fetch_add(1, Ordering::Relaxed);
        self.in_flight.pop_front().map(|(_, datagram)| datagram)
    }
}

/// Forwards what the caller sends to `caller_side` through `uplink` out of `answerer_side` to
/// the answerer, and what the answerer sends to `answerer_side` straight back to the caller.
async fn relay(
    caller_side: UdpSocket,
    answerer_side: UdpSocket,
    caller: SocketAddr,
    answerer: SocketAddr,
    mut uplink: Uplink,
) {
    let (mut up, mut down) = (vec![0; 65_535], vec![0; 65_535]);
    loop {
        let wake = uplink
            .next_due()
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(1));
        tokio::select! {
            received = caller_side.recv_from(&mut up) => {
                if let Ok((n, from)) = received && from == caller {
                    uplink.offer(Instant::now(), &up[..n]);
                }
            }
            received = answerer_side.recv_from(&mut down) => {
                if let Ok((n, from)) = received && from == answerer {
                    let _ = caller_side.send_to(&down[..n], caller).await;
                }
            }
            () = tokio::time::sleep_until(wake.into()) => {}
        }
        while let Some(datagram) = uplink.pop_due(Instant::now()) {
            let _ = answerer_side.send_to(&datagram, answerer).await;
        }
    }
}

/// `sdp` with its first UDP candidate moved to `to` (and any other candidate removed), and the
/// address it had: the remote peer then reaches this one only through the relay socket `to`. As
/// rtc-client's `live::signal::rewrite_candidates` does; each peer here has one socket on
/// 127.0.0.1, so one host candidate.
fn through_relay(sdp: &str, to: SocketAddr) -> Result<(String, SocketAddr)> {
    let mut out = String::with_capacity(sdp.len());
    let mut was = None;
    for line in sdp.split_inclusive('\n') {
        let Some(candidate) = line.strip_prefix("a=candidate:") else {
            out.push_str(line);
            continue;
        };
        // foundation component transport priority address port typ ...
        let mut fields: Vec<String> = candidate.trim_end().split(' ').map(str::to_owned).collect();
        if was.is_some() || fields.len() < 8 || !fields[2].eq_ignore_ascii_case("udp") {
            continue;
        }
        was = Some(SocketAddr::new(fields[4].parse()?, fields[5].parse()?));
        fields[4] = to.ip().to_string();
        fields[5] = to.port().to_string();
        out.push_str("a=candidate:");
        out.push_str(&fields.join(" "));
        out.push_str("\r\n");
    }
    let was = was.context("the description has no UDP candidate")?;
    Ok((out, was))
}

/// The RTT of the nominated candidate pair (ICE's consent checks cross the relay both ways).
async fn ice_rtt(peer: &dyn PeerConnection) -> Option<Duration> {
    let report = peer.get_stats(Instant::now(), StatsSelector::None).await;
    report
        .candidate_pairs()
        .filter(|pair| pair.nominated && pair.current_round_trip_time > 0.0)
        .map(|pair| pair.current_round_trip_time)
        .next()
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
}

// ── Two-peer scaffolding ─────────────────────────────────────────────────────────────────────

fn codec(mime_type: &str, fmtp: &str, payload_type: u8) -> RTCRtpCodecParameters {
    RTCRtpCodecParameters {
        rtp_codec: RTCRtpCodec {
            mime_type: mime_type.to_owned(),
            clock_rate: 90_000,
            sdp_fmtp_line: fmtp.to_owned(),
            ..Default::default()
        },
        payload_type,
    }
}

/// VP8, its RTX (RFC 4588, `apt` = VP8's payload type) and FlexFEC-03 with libwebrtc's repair
/// window, as both peers register them.
fn media_engine() -> Result<MediaEngine> {
    let mut media = MediaEngine::default();
    media.register_codec(
        codec(MIME_TYPE_VP8, "", VP8_PAYLOAD_TYPE),
        RtpCodecKind::Video,
    )?;
    let apt = format!("apt={VP8_PAYLOAD_TYPE}");
    media.register_codec(
        codec(MIME_TYPE_RTX, &apt, RTX_PAYLOAD_TYPE),
        RtpCodecKind::Video,
    )?;
    media.register_codec(
        codec(
            MIME_TYPE_FLEX_FEC03,
            "repair-window=10000000",
            FEC_PAYLOAD_TYPE,
        ),
        RtpCodecKind::Video,
    )?;
    Ok(media)
}

/// A gate's verdict as the summary prints it.
fn verdict(open: bool) -> &'static str {
    if open { "open" } else { "closed" }
}

/// `a=rtcp-fb:* nack` and `nack pli` for video, as webrtc-rs's `configure_nack` registers them
/// (without its stock NACK interceptors: the install puts libwebrtc's responder in).
fn register_nack_feedback(media: &mut MediaEngine) {
    for parameter in ["", "pli"] {
        media.register_feedback(
            RTCPFeedback {
                typ: "nack".to_owned(),
                parameter: parameter.to_owned(),
            },
            RtpCodecKind::Video,
        );
    }
}

/// Packets the receiver has seen on its video track.
#[derive(Default)]
struct Received {
    packets: AtomicU64,
}

/// One peer's events: ICE gathering done, connected, and (on the receiver) its incoming media.
#[derive(Default)]
struct Events {
    gathered: Notify,
    connected: Notify,
    received: Arc<Received>,
}

#[async_trait::async_trait]
impl PeerConnectionEventHandler for Events {
    async fn on_ice_gathering_state_change(&self, state: RTCIceGatheringState) {
        if state == RTCIceGatheringState::Complete {
            self.gathered.notify_one();
        }
    }

    async fn on_connection_state_change(&self, state: RTCPeerConnectionState) {
        if state == RTCPeerConnectionState::Connected {
            self.connected.notify_one();
        }
    }

    async fn on_track(&self, track: Arc<dyn TrackRemote>) {
        let received = self.received.clone();
        tokio::spawn(async move {
            while let Some(event) = track.poll().await {
                if let TrackRemoteEvent::OnRtpPacket(_) = event {
                    received.packets.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
}

struct Call {
    sender: Box<dyn PeerConnection>,
    receiver: Box<dyn PeerConnection>,
    track: Arc<TrackLocalStaticSample>,
    received: Arc<Received>,
    relay: JoinHandle<()>,
}

impl Call {
    /// A sender with `media` and `registry` and a VP8 track with its RTX and FEC SSRCs, a
    /// receiver with webrtc-rs's default interceptors, the offer and answer exchanged in memory
    /// with their candidates moved to the relay's sockets, and both connected through the relay.
    async fn connect(media: MediaEngine, registry: Registry, uplink: Uplink) -> Result<Self> {
        let sender_events = Arc::new(Events::default());
        let receiver_events = Arc::new(Events::default());
        let sender = peer(media, registry, &sender_events).await?;
        let mut receiver_media = media_engine()?;
        let receiver_registry =
            register_default_interceptors(Registry::new(), &mut receiver_media)?;
        let receiver = peer(receiver_media, receiver_registry, &receiver_events).await?;

        let track = Arc::new(TrackLocalStaticSample::new(
            Instant::now(),
            MediaStreamTrack::new(
                "embed".to_owned(),
                "video".to_owned(),
                "synthetic video".to_owned(),
                RtpCodecKind::Video,
                vec![RTCRtpEncodingParameters {
                    rtp_coding_parameters: RTCRtpCodingParameters {
                        ssrc: Some(VIDEO_SSRC),
                        rtx: Some(RTCRtpRtxParameters { ssrc: RTX_SSRC }),
                        fec: Some(RTCRtpFecParameters { ssrc: FEC_SSRC }),
                        ..Default::default()
                    },
                    codec: codec(MIME_TYPE_VP8, "", VP8_PAYLOAD_TYPE).rtp_codec,
                    ..Default::default()
                }],
            ),
        )?);
        sender
            .add_track(track.clone() as Arc<dyn TrackLocal>)
            .await?;

        // The relay's two sockets: one the caller sends to, one the answerer sends to.
        let caller_side = UdpSocket::bind("127.0.0.1:0").await?;
        let answerer_side = UdpSocket::bind("127.0.0.1:0").await?;

        // Non-trickle: each side sends its description once all its candidates are in it.
        let offer = sender.create_offer(None).await?;
        sender.set_local_description(offer).await?;
        sender_events.gathered.notified().await;
        let offer = sender.local_description().await.context("no offer")?;
        let (offer, caller) = through_relay(&offer.sdp, answerer_side.local_addr()?)?;
        receiver
            .set_remote_description(RTCSessionDescription::offer(offer)?)
            .await?;
        let answer = receiver.create_answer(None).await?;
        receiver.set_local_description(answer).await?;
        receiver_events.gathered.notified().await;
        let answer = receiver.local_description().await.context("no answer")?;
        let (answer, answerer) = through_relay(&answer.sdp, caller_side.local_addr()?)?;
        let relay = tokio::spawn(relay(caller_side, answerer_side, caller, answerer, uplink));
        sender
            .set_remote_description(RTCSessionDescription::answer(answer)?)
            .await?;

        sender_events.connected.notified().await;
        receiver_events.connected.notified().await;
        println!("connected through the relay");

        Ok(Self {
            sender,
            receiver,
            track,
            received: receiver_events.received.clone(),
            relay,
        })
    }

    async fn close(&self) -> Result<()> {
        self.sender.close().await?;
        self.receiver.close().await?;
        self.relay.abort();
        Ok(())
    }
}

/// A peer connection on 127.0.0.1 with mDNS off (no multicast here) and no STUN servers.
async fn peer(
    media: MediaEngine,
    registry: Registry,
    events: &Arc<Events>,
) -> Result<Box<dyn PeerConnection>> {
    let settings = SettingEngineBuilder::new()
        .with_multicast_dns_mode(MulticastDnsMode::Disabled)
        .build();
    let peer = PeerConnectionBuilder::new()
        .with_media_engine(media)
        .with_setting_engine(settings)
        .with_interceptor_registry(registry)
        .with_handler(events.clone())
        .with_udp_addrs(vec!["127.0.0.1:0"])
        .build()
        .await?;
    Ok(Box::new(peer))
}

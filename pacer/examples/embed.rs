//! Embedding the handover-aware pacer in a webrtc-rs call.
//!
//! Shows the three things an application does to use this crate:
//!
//! 1. build a [`HandoverAwarePacer`] and keep its [`PacerHandle`];
//! 2. set up send-side congestion control (GCC with transport-wide feedback) as usual, then put
//!    the pacer at `Slot::Pacer`, where it replaces the stock FIFO pacer;
//! 3. run a [`PolicyController`] task that picks the pacer's queue time limit every decision
//!    interval from a handover forecast.
//!
//! The encoder sizes its frames from the target bitrate the pacer reports through the handle and
//! skips frames while the pacer asks it to pause, as libwebrtc's encoder does.
//!
//! Everything runs in one process: a sender and a receiver peer connection on 127.0.0.1, with the
//! offer and answer handed over in memory, no STUN and no mDNS. The frames are synthetic bytes
//! that the receiver counts but does not decode.
//!
//! ```text
//! cargo run -p pacer --example embed                 # about 6 s
//! cargo run -p pacer --example embed -- --seconds 20
//! ```

use anyhow::{Context, Result, bail, ensure};
use pacer::{
    ForecastSource, HandoverAwarePacer, Heuristic, PacerHandle, PacerStats, PacingConfig,
    PolicyController, TimelineSource,
};
use rtc::ice::mdns::MulticastDnsMode;
use rtc::interceptor::Gcc;
use rtc::media::Sample;
use rtc::media_stream::MediaStreamTrack;
use rtc::peer_connection::configuration::media_engine::MIME_TYPE_VP8;
use rtc::rtp_transceiver::rtp_sender::{
    RTCRtpCodec, RTCRtpCodecParameters, RTCRtpCodingParameters, RTCRtpEncodingParameters,
    RtpCodecKind,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, oneshot};
use webrtc::media_stream::track_local::TrackLocal;
use webrtc::media_stream::track_local::static_sample::TrackLocalStaticSample;
use webrtc::media_stream::track_remote::{TrackRemote, TrackRemoteEvent};
use webrtc::peer_connection::{
    CongestionFeedback, MediaEngine, PeerConnection, PeerConnectionBuilder,
    PeerConnectionEventHandler, RTCIceGatheringState, RTCPeerConnectionState, Registry,
    SettingEngineBuilder, Slot, configure_congestion_control, register_default_interceptors,
};

/// How often the policy picks a new queue time limit. Deployments use
/// `pacer::DEFAULT_DECISION_INTERVAL` (120 s); the demo is shorter so that it shows a few.
const DECISION_INTERVAL: Duration = Duration::from_secs(2);
const DEFAULT_SECONDS: u64 = 6;
/// What the run shows and what it cannot, printed first so that nobody reads the lines that
/// follow as the pacer's effect.
const ABOUT: &str = "\
This is the plumbing of an embedded pacer: GCC, this pacer at Slot::Pacer and a policy task,
between two peers on clean loopback. It cannot show the pacer's effect: loopback has no
bottleneck, so the pacer queue stays near empty and the queue time limit never binds. The policy
reads a scripted forecast (source \"trace\": handovers 2 s apart from 121 s on) and decides every
2 s instead of every 120 s so that a short run shows its decisions change the limit. Each
per-second line reads the pacer's and the receiver's counters a moment apart while packets flow,
so they can differ by a packet or two; the final line is read after the call has closed.
For the effect on an emulated Starlink link: cargo run --release -p rtc-client -- demo
";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const FPS: u32 = 30;
const VP8_PAYLOAD_TYPE: u8 = 96;
const VIDEO_SSRC: u32 = 0x5EED_0001;

#[tokio::main]
async fn main() -> Result<()> {
    let seconds = seconds_from_args()?;
    println!("{ABOUT}");

    // The pacer and the handle the application keeps on it.
    let (pacer, handle) = HandoverAwarePacer::builder(PacingConfig::default()).build();

    // GCC and the usual interceptors; then our pacer replaces the stock one at `Slot::Pacer`.
    let mut media = vp8_media_engine()?;
    let registry = configure_congestion_control(
        Registry::new(),
        Gcc::default(),
        CongestionFeedback::Twcc,
        &mut media,
    )?;
    let registry = register_default_interceptors(registry, &mut media)?.with(Slot::Pacer, pacer);
    let slots = registry.slots();
    println!("sender chain, wire first: {slots:?}");
    ensure!(
        slots
            .iter()
            .any(|(slot, name)| *slot == Slot::Pacer && name == "HandoverAwarePacer"),
        "our pacer is not at Slot::Pacer"
    );

    // The policy task: a new queue time limit every decision interval, handed to the pacer.
    let (stop_policy, stopped) = oneshot::channel();
    let policy = tokio::spawn(run_policy(handle.clone(), stopped));

    // Two peers on loopback, the sender with the registry above.
    let call = tokio::time::timeout(CONNECT_TIMEOUT, Call::connect(media, registry))
        .await
        .context("the peers did not connect within 10 s")??;
    let encoder = tokio::spawn(encode(call.track.clone(), handle.clone()));

    let start = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    for _ in 0..seconds {
        tick.tick().await;
        let received = call.received.packets.load(Ordering::Relaxed);
        println!(
            "t={:>2}s {} | received {received} pkts",
            start.elapsed().as_secs(),
            status(&handle.stats())
        );
    }

    encoder.abort();
    if let Ok(Err(error)) = encoder.await {
        return Err(error.context("the encoder stopped"));
    }
    let _ = stop_policy.send(());
    let policy = policy.await?;
    call.close().await?;

    let stats = handle.stats();
    let (received, received_bytes) = (
        call.received.packets.load(Ordering::Relaxed),
        call.received.bytes.load(Ordering::Relaxed),
    );
    println!("final (read after the call closed): {}", status(&stats));
    println!(
        "pacer sent {} pkts / {} bytes, drain boost {} ms; receiver got {received} pkts / \
         {received_bytes} payload bytes; {} policy decisions",
        stats.packets_sent,
        stats.bytes_sent,
        stats.drain_boost_time.as_millis(),
        policy.decisions_made(),
    );
    ensure!(
        stats.packets_sent > 0 && received > 0,
        "no media went through the pacer"
    );
    Ok(())
}

/// Owns the policy controller; returns it when told to stop.
async fn run_policy(handle: PacerHandle, mut stop: oneshot::Receiver<()>) -> PolicyController {
    let start = Instant::now();
    // Stand-in for a real handover source (an orbital predictor or the dish): a scripted
    // schedule whose handovers, two seconds apart from 121 s on, enter the 120-s horizon one per
    // decision, so the heuristic walks its table (0 -> 500 ms, 1-2 -> 600 ms, 3-5 -> 900 ms, ...).
    let source = TimelineSource::new(
        "scripted",
        ForecastSource::Trace,
        start,
        (0..60).map(|k| Duration::from_secs(121 + 2 * k)),
    );
    let mut controller = PolicyController::new(start, DECISION_INTERVAL, source, Heuristic, handle);
    while let Some(due) = controller.poll_timeout() {
        tokio::select! {
            _ = tokio::time::sleep_until(due.into()) => {}
            _ = &mut stop => break,
        }
        if let Some(decision) = controller.handle_timeout(Instant::now()) {
            println!("policy decision {decision}");
        }
    }
    controller
}

/// A synthetic 30-fps encoder: each frame is the target bitrate's share, skipped while the pacer
/// says the encoder should pause.
async fn encode(track: Arc<TrackLocalStaticSample>, handle: PacerHandle) -> Result<()> {
    let frame = Duration::from_secs(1) / FPS;
    let mut ticker = tokio::time::interval(frame);
    loop {
        ticker.tick().await;
        let stats = handle.stats();
        if stats.encoder_should_pause {
            continue;
        }
        let bytes = usize::try_from(stats.target_bitrate_bps / 8 / u64::from(FPS))?.max(1);
        let sample = Sample {
            data: vec![0x42; bytes].into(),
            duration: frame,
            ..Sample::new(Instant::now())
        };
        track
            .sample_writer(VIDEO_SSRC, VP8_PAYLOAD_TYPE)
            .write_sample(&sample)
            .await?;
    }
}

fn status(s: &PacerStats) -> String {
    format!(
        "target {} kbit/s, pacing {} kbit/s, queue {} pkts/{} B (expected {} ms, limit {} ms), \
         boost {} ms, sent {} pkts, pause {}",
        s.target_bitrate_bps / 1000,
        s.pacing_rate_bps / 1000,
        s.queued_packets,
        s.queued_bytes,
        s.expected_queue_time.as_millis(),
        s.queue_time_limit.as_millis(),
        s.drain_boost_time.as_millis(),
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

// ── Two-peer loopback scaffolding ────────────────────────────────────────────────────────────

fn vp8() -> RTCRtpCodecParameters {
    RTCRtpCodecParameters {
        rtp_codec: RTCRtpCodec {
            mime_type: MIME_TYPE_VP8.to_owned(),
            clock_rate: 90_000,
            ..Default::default()
        },
        payload_type: VP8_PAYLOAD_TYPE,
    }
}

fn vp8_media_engine() -> Result<MediaEngine> {
    let mut media = MediaEngine::default();
    media.register_codec(vp8(), RtpCodecKind::Video)?;
    Ok(media)
}

/// Packets and payload bytes the receiver has seen.
#[derive(Default)]
struct Received {
    packets: AtomicU64,
    bytes: AtomicU64,
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
                if let TrackRemoteEvent::OnRtpPacket(packet) = event {
                    received.packets.fetch_add(1, Ordering::Relaxed);
                    received
                        .bytes
                        .fetch_add(packet.payload.len() as u64, Ordering::Relaxed);
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
}

impl Call {
    /// A sender with `media` and `registry` and a VP8 track, a receiver with the default
    /// interceptors, the offer and answer exchanged in memory, and both connected.
    async fn connect(media: MediaEngine, registry: Registry) -> Result<Self> {
        let sender_events = Arc::new(Events::default());
        let receiver_events = Arc::new(Events::default());
        let sender = peer(media, registry, &sender_events).await?;
        let mut receiver_media = vp8_media_engine()?;
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
                        ..Default::default()
                    },
                    codec: vp8().rtp_codec,
                    ..Default::default()
                }],
            ),
        )?);
        sender
            .add_track(track.clone() as Arc<dyn TrackLocal>)
            .await?;

        // Non-trickle: each side sends its description once all its candidates are in it.
        let offer = sender.create_offer(None).await?;
        sender.set_local_description(offer).await?;
        sender_events.gathered.notified().await;
        let offer = sender.local_description().await.context("no offer")?;
        receiver.set_remote_description(offer).await?;
        let answer = receiver.create_answer(None).await?;
        receiver.set_local_description(answer).await?;
        receiver_events.gathered.notified().await;
        let answer = receiver.local_description().await.context("no answer")?;
        sender.set_remote_description(answer).await?;

        sender_events.connected.notified().await;
        receiver_events.connected.notified().await;
        println!("connected on loopback");

        Ok(Self {
            sender,
            receiver,
            track,
            received: receiver_events.received.clone(),
        })
    }

    async fn close(&self) -> Result<()> {
        self.sender.close().await?;
        self.receiver.close().await?;
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

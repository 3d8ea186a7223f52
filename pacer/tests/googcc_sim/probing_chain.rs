//! A call through the real webrtc-rs chain with probing, shared by `tests/probing.rs` and
//! `benches/googcc.rs`.
//!
//! Sender: `CongestionControl(estimator)` + `TwccSender` + `HandoverAwarePacer` (1.1 x, 40-ms
//! bursts) with a padding SSRC and the estimator's probe channel; the media stream and the
//! padding stream are both bound as local streams carrying the transport-wide-cc extension.
//! Receiver: `TwccReceiver`, with both streams bound. Between them a FIFO bottleneck (unbounded
//! buffer) with 30 ms one way, and the feedback path back at 30 ms. The encoder makes 30 frames
//! a second of `target / 30` bits, in packets of at most 1200 bytes, following the target at
//! once. Virtual time, discrete events, one epoch.

#![allow(dead_code)]

use pacer::pacing::ProbeChannel;
use pacer::{GoogCc, GoogCcConfig, HandoverAwarePacer, PacingConfig};
use rtc_interceptor::{
    AttributedPacket, BandwidthEstimator, CongestionControlBuilder, Interceptor, Packet,
    RTCPFeedback, RTPHeaderExtension, Registry, Slot, StreamInfo, TaggedPacket,
    TwccReceiverBuilder, TwccSenderBuilder,
};
use rtc_shared::TransportContext;
use rtc_shared::marshal::MarshalSize;
use sansio::Protocol;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The media SSRC.
pub const MEDIA_SSRC: u32 = 0x600C_CC01;
/// The padding SSRC.
pub const PADDING_SSRC: u32 = 0x600C_CCFF;
const PAYLOAD_TYPE: u8 = 96;
const PADDING_PAYLOAD_TYPE: u8 = 127;
const MAX_PAYLOAD: usize = 1200;
const ONE_WAY: Duration = Duration::from_millis(30);
const TRANSPORT_CC_URI: &str =
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01";

/// Which estimator runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimator {
    /// `GoogCc`, probing or not.
    GoogCc { probing: bool },
    /// webrtc-rs's `Gcc`.
    WebrtcRs,
}

/// What to run.
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// Bottleneck capacity.
    pub capacity_bps: u64,
    /// The estimator.
    pub estimator: Estimator,
    /// Start rate.
    pub start_bps: f64,
    /// The pacer's burst window (zero: smooth pacing).
    pub burst_interval: Duration,
}

impl Setup {
    /// `GoogCc` from 300 kbit/s on a clean link of `capacity_bps`.
    pub fn clean(capacity_bps: u64, probing: bool) -> Self {
        Self {
            capacity_bps,
            estimator: Estimator::GoogCc { probing },
            start_bps: 300_000.0,
            burst_interval: PacingConfig::default().burst_interval,
        }
    }
}

/// What a run recorded.
#[derive(Debug, Default)]
pub struct Trace {
    /// `(t, target bps, bottleneck backlog)` at every frame.
    pub samples: Vec<(Duration, f64, Duration)>,
    /// Padding packets the pacer sent.
    pub padding_packets: u64,
    /// Whether any padding packet's transport-wide sequence number was acknowledged.
    pub padding_acknowledged: bool,
    /// Probe clusters whose packets were matched to feedback (distinct ids).
    pub probe_clusters_matched: usize,
    /// When GoogCc's detector said overusing, at frame times (empty for webrtc-rs's Gcc).
    pub overusing: Vec<Duration>,
}

impl Trace {
    /// When the target first reached `bps`.
    pub fn time_to(&self, bps: f64) -> Option<Duration> {
        self.samples.iter().find(|s| s.1 >= bps).map(|s| s.0)
    }

    /// The mean target at or after `from`.
    pub fn mean_target_from(&self, from: Duration) -> f64 {
        let late: Vec<f64> = self
            .samples
            .iter()
            .filter(|s| s.0 >= from)
            .map(|s| s.1)
            .collect();
        late.iter().sum::<f64>() / late.len().max(1) as f64
    }

    /// The longest bottleneck backlog seen at or after `from`.
    pub fn max_queue_from(&self, from: Duration) -> Duration {
        self.samples
            .iter()
            .filter(|s| s.0 >= from)
            .map(|s| s.2)
            .max()
            .unwrap_or_default()
    }
}

struct Observed {
    inner: Box<dyn BandwidthEstimator>,
    target: Arc<AtomicU64>,
    matched: Arc<std::sync::Mutex<std::collections::BTreeSet<i32>>>,
    channel: Option<ProbeChannel>,
}

impl BandwidthEstimator for Observed {
    fn on_reports(&mut self, now: Instant, reports: &[rtc_interceptor::PacketReport]) {
        if let Some(channel) = &self.channel {
            // Peek (without consuming) which reports are probes: re-record them after the look.
            let mut seen = Vec::new();
            for r in reports {
                if let Some(id) = channel.take_probe_cluster(r.ssrc, r.rtp_sequence_number) {
                    seen.push((r.departure, r.ssrc, r.rtp_sequence_number, id));
                }
            }
            let mut matched = self.matched.lock().expect("lock");
            for (at, ssrc, seq, id) in seen {
                matched.insert(id);
                channel.record_probe_packet(at, ssrc, seq, id);
            }
        }
        self.inner.on_reports(now, reports);
        self.target
            .store(self.inner.target_bitrate().to_bits(), Ordering::Relaxed);
    }
    fn target_bitrate(&self) -> f64 {
        self.inner.target_bitrate()
    }
    fn handle_timeout(&mut self, now: Instant) {
        self.inner.handle_timeout(now);
        self.target
            .store(self.inner.target_bitrate().to_bits(), Ordering::Relaxed);
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.inner.poll_timeout()
    }
}

fn stream(ssrc: u32, payload_type: u8) -> StreamInfo {
    StreamInfo {
        ssrc,
        clock_rate: 90_000,
        mime_type: "video/VP8".to_owned(),
        payload_type,
        rtcp_feedback: vec![RTCPFeedback {
            typ: "transport-cc".to_owned(),
            parameter: String::new(),
        }],
        rtp_header_extensions: vec![RTPHeaderExtension {
            uri: TRANSPORT_CC_URI.to_owned(),
            id: 5,
        }],
        ..Default::default()
    }
}

fn rtp(now: Instant, sequence_number: u16, timestamp: u32, size: usize) -> TaggedPacket {
    TaggedPacket {
        now,
        transport: TransportContext::default(),
        message: AttributedPacket::new(Packet::Rtp(rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                payload_type: PAYLOAD_TYPE,
                sequence_number,
                timestamp,
                ssrc: MEDIA_SSRC,
                ..Default::default()
            },
            payload: vec![0xAB; size].into(),
        })),
    }
}

fn twcc_sequence(packet: &TaggedPacket) -> Option<u16> {
    let Packet::Rtp(rtp) = &packet.message.packet else {
        return None;
    };
    let mut ext = rtp.header.get_extension(5)?;
    <rtc_rtp::extension::transport_cc_extension::TransportCcExtension as rtc_shared::marshal::Unmarshal>::unmarshal(&mut ext)
        .ok()
        .map(|e| e.transport_sequence)
}

/// Runs `setup` for `duration`.
pub fn run(setup: Setup, duration: Duration) -> Trace {
    let epoch = Instant::now();
    let target = Arc::new(AtomicU64::new(setup.start_bps.to_bits()));
    let matched = Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let channel = ProbeChannel::new();
    let config = GoogCcConfig {
        start_bps: setup.start_bps,
        ..GoogCcConfig::default()
    };
    let probing = matches!(setup.estimator, Estimator::GoogCc { probing: true });
    let mut googcc_handle = None;
    let estimator: Box<dyn BandwidthEstimator> = match setup.estimator {
        Estimator::GoogCc { probing } => {
            let cc = if probing {
                GoogCc::with_probing(config, channel.clone())
            } else {
                GoogCc::new(config)
            };
            googcc_handle = Some(cc.handle());
            Box::new(cc)
        }
        Estimator::WebrtcRs => {
            Box::new(rtc_interceptor::Gcc::new(setup.start_bps, 100_000.0, 100e6))
        }
    };
    let observed = Observed {
        inner: estimator,
        target: target.clone(),
        matched: matched.clone(),
        channel: probing.then(|| channel.clone()),
    };
    let mut builder = HandoverAwarePacer::builder(PacingConfig {
        initial_target_bitrate_bps: setup.start_bps as u64,
        padding_ssrc: Some(PADDING_SSRC),
        padding_payload_type: PADDING_PAYLOAD_TYPE,
        burst_interval: setup.burst_interval,
        ..PacingConfig::default()
    });
    if probing {
        builder = builder.probe_channel(channel.clone());
    }
    let (pacer, _handle) = builder.build();
    let mut sender = Registry::new()
        .with(
            Slot::CongestionControl,
            CongestionControlBuilder::new(observed).build(),
        )
        .with(Slot::TwccSender, TwccSenderBuilder::new().build())
        .with(Slot::Pacer, pacer)
        .build();
    sender.bind_local_stream(&stream(MEDIA_SSRC, PAYLOAD_TYPE));
    sender.bind_local_stream(&stream(PADDING_SSRC, PADDING_PAYLOAD_TYPE));
    let mut receiver = Registry::new()
        .with(Slot::TwccReceiver, TwccReceiverBuilder::new().build())
        .build();
    receiver.bind_remote_stream(&stream(MEDIA_SSRC, PAYLOAD_TYPE));
    receiver.bind_remote_stream(&stream(PADDING_SSRC, PADDING_PAYLOAD_TYPE));

    let capacity = setup.capacity_bps;
    let mut busy_until = epoch;
    let mut forward: BTreeMap<(Instant, u64), TaggedPacket> = BTreeMap::new();
    let mut reverse: BTreeMap<(Instant, u64), TaggedPacket> = BTreeMap::new();
    let mut id = 0u64;
    let mut trace = Trace::default();
    let mut padding_twcc: std::collections::HashSet<u16> = std::collections::HashSet::new();
    let frame_interval = Duration::from_nanos(33_333_333);
    let end = epoch + duration;
    let mut next_frame = epoch;
    let mut frame = 0u32;
    let mut sequence_number = 0u16;
    let mut now = epoch;
    loop {
        let next = [
            Some(next_frame),
            sender.poll_timeout(),
            receiver.poll_timeout(),
            forward.keys().next().map(|k| k.0),
            reverse.keys().next().map(|k| k.0),
        ]
        .into_iter()
        .flatten()
        .min()
        .expect("frames never stop");
        now = if next <= now && now > epoch {
            now + Duration::from_millis(1)
        } else {
            next
        };
        if now >= end {
            break;
        }
        let t = now - epoch;
        let bps = f64::from_bits(target.load(Ordering::Relaxed));

        if next_frame <= now {
            let frame_bytes = (bps / 30.0 / 8.0) as usize;
            let packets = frame_bytes.div_ceil(MAX_PAYLOAD).max(1);
            for k in 0..packets {
                let size = if k + 1 == packets {
                    frame_bytes - MAX_PAYLOAD * (packets - 1)
                } else {
                    MAX_PAYLOAD
                };
                sender
                    .handle_write(rtp(now, sequence_number, frame * 3000, size.max(1)))
                    .expect("write");
                sequence_number = sequence_number.wrapping_add(1);
            }
            trace
                .samples
                .push((t, bps, busy_until.saturating_duration_since(now)));
            if googcc_handle
                .as_ref()
                .is_some_and(|h| h.state() == pacer::googcc::BandwidthUsage::Overusing)
            {
                trace.overusing.push(t);
            }
            frame += 1;
            next_frame = epoch + frame_interval * frame;
        }

        while let Some(entry) = reverse.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let mut feedback = entry.remove();
            feedback.now = now;
            if let Packet::Rtcp(rtcp) = &feedback.message.packet {
                for p in rtcp {
                    if let Some(fb) = p.as_any().downcast_ref::<rtc_rtcp::transport_feedbacks::transport_layer_cc::TransportLayerCc>() {
                        let base = fb.base_sequence_number;
                        let count = fb.packet_status_count;
                        if padding_twcc.iter().any(|s| s.wrapping_sub(base) < count) {
                            trace.padding_acknowledged = true;
                        }
                    }
                }
            }
            sender.handle_read(feedback).expect("sender read");
            while sender.poll_read().is_some() {}
        }
        sender.handle_timeout(now).expect("sender timeout");
        while let Some(packet) = sender.poll_write() {
            let Packet::Rtp(rtp) = &packet.message.packet else {
                continue;
            };
            if rtp.header.ssrc == PADDING_SSRC {
                trace.padding_packets += 1;
                if let Some(seq) = twcc_sequence(&packet) {
                    padding_twcc.insert(seq);
                }
            }
            let bytes = rtp.marshal_size() as u64;
            let start = busy_until.max(now);
            busy_until = start + Duration::from_nanos(bytes * 8 * 1_000_000_000 / capacity);
            id += 1;
            forward.insert((busy_until + ONE_WAY, id), packet);
        }

        while let Some(entry) = forward.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let mut packet = entry.remove();
            packet.now = now;
            receiver.handle_read(packet).expect("receiver read");
            while receiver.poll_read().is_some() {}
        }
        receiver.handle_timeout(now).expect("receiver timeout");
        while let Some(feedback) = receiver.poll_write() {
            id += 1;
            reverse.insert((now + ONE_WAY, id), feedback);
        }
    }
    trace.probe_clusters_matched = matched.lock().expect("lock").len();
    trace
}

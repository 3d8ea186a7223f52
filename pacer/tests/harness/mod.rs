//! A virtual-time call through the real webrtc-rs interceptor chain.
//!
//! Sender: `CongestionControl(Gcc)` + `TwccSender` + the pacer under test, fed by an encoder that
//! follows the estimate. Receiver: `TwccReceiver`. Between them a one-way bottleneck with a
//! drop-tail buffer and propagation delay, and an optional outage in both directions (a satellite
//! handover). Everything is driven by explicit instants from one epoch, as a discrete-event
//! simulation: the next event is the earliest of the next frame, either chain's `poll_timeout`,
//! and the next arrival on either path.

use pacer::{HandoverAwarePacer, PacerHandle, PacerStats, PacingConfig};
use rtc_interceptor::{
    AttributedPacket, BandwidthEstimator, CongestionControlBuilder, Gcc, Interceptor, PacerBuilder,
    Packet, PacketReport, RTCPFeedback, RTPHeaderExtension, Registry, Slot, StreamInfo,
    TaggedPacket, TwccReceiverBuilder, TwccSenderBuilder,
};
use rtc_shared::TransportContext;
use rtc_shared::marshal::MarshalSize;
use sansio::Protocol;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const TRANSPORT_CC_URI: &str =
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01";
const SSRC: u32 = 0x5A7E_111E;
const PAYLOAD_TYPE: u8 = 96;
const MAX_PAYLOAD: usize = 1200;
const FRAME_INTERVAL: Duration = Duration::from_nanos(33_333_333);
/// The encoder follows the estimate this late, like a real rate controller.
const ENCODER_LAG: Duration = Duration::from_secs(1);
const ENCODER_MIN_BPS: f64 = 50_000.0;
const ENCODER_MAX_BPS: f64 = 2_500_000.0;

/// Which pacer sits at `Slot::Pacer`.
#[derive(Clone)]
pub enum PacerUnderTest {
    /// webrtc-rs's stock token bucket.
    Stock,
    /// This crate's pacer.
    HandoverAware(PacingConfig),
}

/// The simulated path.
#[derive(Clone, Copy, Debug)]
pub struct PathConfig {
    pub capacity_bps: u64,
    pub one_way: Duration,
    /// Drop-tail: a packet that would wait longer than this at the bottleneck is dropped.
    pub buffer: Duration,
    /// Offsets from the epoch during which nothing crosses the path in either direction.
    pub outage: Option<(Duration, Duration)>,
}

/// A change to the queue time limit through the handle, at an offset from the epoch.
#[derive(Clone, Copy, Debug)]
pub struct LimitChange {
    pub at: Duration,
    pub limit: Duration,
}

/// One RTP packet's life.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacketTrace {
    pub sequence_number: u16,
    pub size_bytes: usize,
    pub enqueued: Duration,
    pub released: Duration,
    pub arrived: Option<Duration>,
}

/// What a run produced.
pub struct Run {
    pub packets: Vec<PacketTrace>,
    /// (offset, target bps) sampled at every frame.
    pub targets: Vec<(Duration, f64)>,
    /// (offset, pacer stats from the handle) sampled at every frame; empty for the stock pacer.
    pub pacer_stats: Vec<(Duration, PacerStats)>,
    /// Wake-ups the sender or receiver asked for at or before the instant just handled.
    pub stale_deadlines: u64,
}

impl Run {
    /// Mean target over `[from, to)`.
    pub fn mean_target(&self, from: Duration, to: Duration) -> f64 {
        let window: Vec<f64> = self
            .targets
            .iter()
            .filter(|(t, _)| *t >= from && *t < to)
            .map(|(_, bps)| *bps)
            .collect();
        window.iter().sum::<f64>() / window.len().max(1) as f64
    }

    /// Bits that arrived in `[from, to)`, per second.
    pub fn goodput(&self, from: Duration, to: Duration) -> f64 {
        let bytes: usize = self
            .packets
            .iter()
            .filter(|p| p.arrived.is_some_and(|a| a >= from && a < to))
            .map(|p| p.size_bytes)
            .sum();
        bytes as f64 * 8.0 / (to - from).as_secs_f64()
    }

    /// The longest time a packet enqueued at or after `from` waited in the pacer.
    pub fn max_pacer_delay_after(&self, from: Duration) -> Duration {
        self.packets
            .iter()
            .filter(|p| p.enqueued >= from && p.released != Duration::MAX)
            .map(|p| p.released - p.enqueued)
            .max()
            .unwrap_or_default()
    }
}

/// Gcc, with its target readable from outside the chain.
struct ObservedGcc {
    gcc: Gcc,
    target: Arc<AtomicU64>,
}

impl BandwidthEstimator for ObservedGcc {
    fn on_reports(&mut self, now: Instant, reports: &[PacketReport]) {
        self.gcc.on_reports(now, reports);
        self.target
            .store(self.gcc.target_bitrate().to_bits(), Ordering::Relaxed);
    }

    fn target_bitrate(&self) -> f64 {
        self.gcc.target_bitrate()
    }
}

fn stream() -> StreamInfo {
    StreamInfo {
        ssrc: SSRC,
        clock_rate: 90_000,
        mime_type: "video/VP8".to_owned(),
        payload_type: PAYLOAD_TYPE,
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

fn rtp(
    now: Instant,
    sequence_number: u16,
    timestamp: u32,
    marker: bool,
    size: usize,
) -> TaggedPacket {
    TaggedPacket {
        now,
        transport: TransportContext::default(),
        message: AttributedPacket::new(Packet::Rtp(rtc_rtp::Packet {
            header: rtc_rtp::Header {
                version: 2,
                payload_type: PAYLOAD_TYPE,
                sequence_number,
                timestamp,
                ssrc: SSRC,
                marker,
                ..Default::default()
            },
            payload: vec![0xAB; size].into(),
        })),
    }
}

/// The bottleneck: a FIFO link at `capacity_bps` behind a drop-tail buffer.
struct Bottleneck {
    config: PathConfig,
    epoch: Instant,
    busy_until: Instant,
}

impl Bottleneck {
    fn in_outage(&self, at: Instant) -> bool {
        self.config
            .outage
            .is_some_and(|(from, to)| at >= self.epoch + from && at < self.epoch + to)
    }

    /// When a packet offered at `now` arrives, or `None` if it is dropped.
    fn offer(&mut self, now: Instant, bytes: usize) -> Option<Instant> {
        if self.in_outage(now) {
            return None;
        }
        let start = self.busy_until.max(now);
        if start - now > self.config.buffer {
            return None;
        }
        let serialisation =
            Duration::from_nanos(bytes as u64 * 8 * 1_000_000_000 / self.config.capacity_bps);
        self.busy_until = start + serialisation;
        Some(self.busy_until + self.config.one_way)
    }
}

/// Runs one call for `duration`.
pub fn run(
    pacer: PacerUnderTest,
    path: PathConfig,
    limit_changes: &[LimitChange],
    duration: Duration,
) -> Run {
    let epoch = Instant::now();
    let target = Arc::new(AtomicU64::new(300_000f64.to_bits()));
    let estimator = ObservedGcc {
        gcc: Gcc::default(),
        target: target.clone(),
    };
    let registry = Registry::new()
        .with(
            Slot::CongestionControl,
            CongestionControlBuilder::new(estimator).build(),
        )
        .with(Slot::TwccSender, TwccSenderBuilder::new().build());
    let (registry, handle): (_, Option<PacerHandle>) = match pacer {
        PacerUnderTest::Stock => (
            registry.with(
                Slot::Pacer,
                PacerBuilder::new().with_target_bitrate(300_000.0).build(),
            ),
            None,
        ),
        PacerUnderTest::HandoverAware(config) => {
            let (pacer, handle) = HandoverAwarePacer::builder(config).build();
            (registry.with(Slot::Pacer, pacer), Some(handle))
        }
    };
    let mut sender = registry.build();
    sender.bind_local_stream(&stream());
    let mut receiver = Registry::new()
        .with(Slot::TwccReceiver, TwccReceiverBuilder::new().build())
        .build();
    receiver.bind_remote_stream(&stream());

    let mut bottleneck = Bottleneck {
        config: path,
        epoch,
        busy_until: epoch,
    };
    let mut forward: BTreeMap<(Instant, u64), TaggedPacket> = BTreeMap::new();
    let mut reverse: BTreeMap<(Instant, u64), TaggedPacket> = BTreeMap::new();
    let mut in_flight_id = 0u64;

    let mut traces: Vec<PacketTrace> = Vec::new();
    let mut by_sequence: HashMap<u16, usize> = HashMap::new();
    let mut targets: Vec<(Duration, f64)> = Vec::new();
    let mut pacer_stats = Vec::new();
    let mut pending_changes: Vec<LimitChange> = limit_changes.to_vec();
    pending_changes.sort_by_key(|c| c.at);
    pending_changes.reverse();

    let end = epoch + duration;
    let mut next_frame = epoch;
    let mut frame = 0u32;
    let mut sequence_number = 0u16;
    let mut now = epoch;
    let mut stale_deadlines = 0u64;
    loop {
        let candidates = [
            Some(next_frame),
            sender.poll_timeout(),
            receiver.poll_timeout(),
            forward.keys().next().map(|k| k.0),
            reverse.keys().next().map(|k| k.0),
            pending_changes.last().map(|c| epoch + c.at),
        ];
        let Some(next) = candidates.into_iter().flatten().min() else {
            break;
        };
        // The webrtc driver rate-limits deadlines that are not in the future to one per
        // `MIN_IMMEDIATE_TIMEOUT_INTERVAL` = 1 ms (reference 3.1); do the same, and count them.
        let next = if next <= now && now > epoch {
            stale_deadlines += 1;
            now + Duration::from_millis(1)
        } else {
            next
        };
        now = next;
        if now >= end {
            break;
        }

        while pending_changes.last().is_some_and(|c| epoch + c.at <= now) {
            let change = pending_changes.pop().expect("checked");
            if let Some(handle) = &handle {
                handle.set_queue_time_limit(change.limit);
            }
        }

        if next_frame <= now {
            let t = now - epoch;
            let lagged = targets
                .iter()
                .rev()
                .find(|(at, _)| *at + ENCODER_LAG <= t)
                .map_or(300_000.0, |(_, bps)| *bps);
            let encoder_bps = lagged.clamp(ENCODER_MIN_BPS, ENCODER_MAX_BPS);
            let frame_bytes = (encoder_bps / 30.0 / 8.0) as usize;
            let packets = frame_bytes.div_ceil(MAX_PAYLOAD).max(1);
            for k in 0..packets {
                let size = if k + 1 == packets {
                    frame_bytes - MAX_PAYLOAD * (packets - 1)
                } else {
                    MAX_PAYLOAD
                };
                by_sequence.insert(sequence_number, traces.len());
                let size = size.max(1);
                traces.push(PacketTrace {
                    sequence_number,
                    size_bytes: size + 12,
                    enqueued: t,
                    released: Duration::MAX,
                    arrived: None,
                });
                sender
                    .handle_write(rtp(
                        now,
                        sequence_number,
                        frame * 3000,
                        k + 1 == packets,
                        size,
                    ))
                    .expect("write");
                sequence_number = sequence_number.wrapping_add(1);
            }
            targets.push((t, f64::from_bits(target.load(Ordering::Relaxed))));
            if let Some(handle) = &handle {
                pacer_stats.push((t, handle.stats()));
            }
            frame += 1;
            next_frame = epoch + FRAME_INTERVAL * frame;
        }

        while let Some(entry) = reverse.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let mut feedback = entry.remove();
            feedback.now = now;
            sender.handle_read(feedback).expect("sender read");
            while sender.poll_read().is_some() {}
        }
        sender.handle_timeout(now).expect("sender timeout");
        while let Some(packet) = sender.poll_write() {
            let Packet::Rtp(rtp) = &packet.message.packet else {
                continue;
            };
            assert_eq!(
                packet.now, now,
                "a released packet carries its release instant"
            );
            if let Some(&index) = by_sequence.get(&rtp.header.sequence_number) {
                traces[index].released = now - epoch;
            }
            if let Some(arrival) = bottleneck.offer(now, rtp.marshal_size()) {
                in_flight_id += 1;
                forward.insert((arrival, in_flight_id), packet);
            }
        }

        while let Some(entry) = forward.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let mut packet = entry.remove();
            packet.now = now;
            if let Packet::Rtp(rtp) = &packet.message.packet
                && let Some(&index) = by_sequence.get(&rtp.header.sequence_number)
            {
                traces[index].arrived = Some(now - epoch);
            }
            receiver.handle_read(packet).expect("receiver read");
            while receiver.poll_read().is_some() {}
        }

        receiver.handle_timeout(now).expect("receiver timeout");
        while let Some(feedback) = receiver.poll_write() {
            if !bottleneck.in_outage(now) {
                in_flight_id += 1;
                reverse.insert((now + path.one_way, in_flight_id), feedback);
            }
        }
    }

    Run {
        packets: traces,
        targets,
        pacer_stats,
        stale_deadlines,
    }
}

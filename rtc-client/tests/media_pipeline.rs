//! The media engine end to end without congestion control: encoder -> packetizer -> emulated
//! link -> receiver -> QoE meter, with PLIs fed back to the encoder.

use rtc_client::link::{
    Capacity, Delay, HandoverEffect, HandoverEvent, Link, LinkConfig, OutageMode, Time, Verdict,
};
use rtc_client::media::encoder::{Encoder, EncoderConfig};
use rtc_client::media::packetizer::{DEFAULT_MAX_PAYLOAD, Packetizer};
use rtc_client::media::qoe::{QoeMeter, QoeReport};
use rtc_client::media::receiver::{Receiver, ReceiverConfig};
use std::collections::BTreeMap;
use std::time::Duration;

const TARGET_BPS: u64 = 1_000_000;
const ONE_WAY: Duration = Duration::from_millis(50);

/// Runs a call of `seconds` over a 5 Mbit/s link with a 50-ms one-way delay and the given
/// handover events; the encoder holds a 1 Mbit/s target and answers PLIs with key frames.
fn call(seconds: u64, events: Vec<HandoverEvent>) -> (QoeReport, u64) {
    let link_config = LinkConfig::new(Capacity::constant(5_000_000))
        .with_delay(Delay::constant(ONE_WAY))
        .with_handovers(events);
    let mut link = Link::new(link_config, 1).expect("a valid link");
    let mut encoder = Encoder::new(
        EncoderConfig {
            start_bps: TARGET_BPS,
            seed: 3,
            ..EncoderConfig::default()
        },
        Time::ZERO,
    );
    encoder.set_target(Time::ZERO, TARGET_BPS);
    let mut packetizer = Packetizer::new(0x1234, 96, DEFAULT_MAX_PAYLOAD, 0);
    let mut receiver = Receiver::new(ReceiverConfig::default());
    let mut meter = QoeMeter::new();
    let mut in_flight: BTreeMap<(Time, u64), (u16, Vec<u8>)> = BTreeMap::new();
    let (mut sent, mut received, mut id) = (0u64, 0u64, 0u64);
    let end = Time::from_secs(seconds);
    loop {
        // The encoder stops at `end`; what is in flight then still arrives, so that only real
        // losses count as lost.
        let frame_due = Some(encoder.next_frame_time()).filter(|&t| t < end);
        let Some(next) = [
            frame_due,
            in_flight.keys().next().map(|k| k.0),
            receiver.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min() else {
            break;
        };
        if next >= end + Duration::from_secs(1) {
            break;
        }
        if frame_due.is_some_and(|t| t <= next)
            && let Some(frame) = encoder.poll_frame(next, false)
        {
            for packet in packetizer.packetize(&frame) {
                sent += 1;
                if let Verdict::Delivered { at } = link.send(next, packet.payload.len() as u32 + 12)
                {
                    id += 1;
                    in_flight.insert((at, id), (packet.sequence_number, packet.payload));
                }
            }
        }
        while let Some(entry) = in_flight.first_entry() {
            if entry.key().0 > next {
                break;
            }
            let (sequence_number, payload) = entry.remove();
            received += 1;
            receiver.on_packet(next, sequence_number, &payload);
        }
        receiver.handle_timeout(next);
        while let Some(frame) = receiver.poll_rendered() {
            meter.on_rendered(&frame);
        }
        if receiver.poll_pli(next) {
            encoder.request_key_frame();
        }
    }
    meter.on_packet_counts(sent, received);
    (meter.total(), encoder.key_frames())
}

#[test]
fn a_clean_link_renders_every_frame_at_the_propagation_delay_plus_the_jitter_buffer_without_freezes()
 {
    let (qoe, key_frames) = call(20, Vec::new());
    assert_eq!(qoe.freeze_count, 0);
    assert_eq!(key_frames, 1);
    assert!(
        (qoe.frame_rate() - 30.0).abs() < 0.2,
        "{}",
        qoe.frame_rate()
    );
    assert!(
        (qoe.video_bitrate_kbps() / 1000.0 - 1.0).abs() < 0.05,
        "{} kbit/s",
        qoe.video_bitrate_kbps()
    );
    let p50 = qoe.delay_percentile(50.0).expect("frames rendered");
    let p95 = qoe.delay_percentile(95.0).expect("frames rendered");
    // 50 ms of propagation plus the frame's serialisation at 5 Mbit/s (a 4.2-kB frame takes
    // 6.7 ms), plus the jitter buffer: the current delay starts at the first jitter estimate
    // (10 ms of operating-system jitter) and rises towards the target (that, the 10-ms render
    // delay and an estimate of at least 1 ms) only by how late frames come.
    let buffer = Duration::from_millis(10);
    assert!(
        p50 >= ONE_WAY + buffer + Duration::from_millis(5)
            && p50 < ONE_WAY + buffer + Duration::from_millis(26),
        "{p50:?}"
    );
    // The first key frame's size stays in the estimate (the largest frame size decays by only
    // 0.01 % per frame), so the delay settles a few tens of ms higher for the whole call.
    assert!(
        p95 < ONE_WAY + buffer + Duration::from_millis(40),
        "{p95:?}"
    );
    assert_eq!(qoe.packet_loss_pct(), 0.0);
}

#[test]
fn a_two_second_outage_is_one_freeze_and_a_pli_brings_a_key_frame_that_recovers_the_video() {
    let outage = HandoverEvent::new(
        Time::from_secs(8),
        HandoverEffect::Outage {
            duration: Duration::from_secs(2),
            mode: OutageMode::Drop,
        },
    );
    let (qoe, key_frames) = call(20, vec![outage]);
    assert_eq!(qoe.freeze_count, 1, "the gap over the outage is one freeze");
    assert!(
        qoe.total_freeze >= Duration::from_secs(2),
        "freeze of {:?}",
        qoe.total_freeze
    );
    assert_eq!(key_frames, 2, "the first frame and the answer to the PLI");
    assert!(qoe.packet_loss_pct() > 5.0 && qoe.packet_loss_pct() < 15.0);
    // After recovery the stream runs at 30 fps again: 20 s minus the 2-s outage and the 3 s
    // the receiver waits for the missing frame before it asks for a key frame (libwebrtc's
    // `kMaxWaitForFrame`), about 450 frames.
    assert!(
        (430..=470).contains(&qoe.frames_rendered),
        "{} frames",
        qoe.frames_rendered
    );
    assert!(
        qoe.total_freeze >= Duration::from_secs(5) && qoe.total_freeze < Duration::from_secs(6),
        "freeze of {:?}",
        qoe.total_freeze
    );
}

//! The pacer side of libwebrtc's congestion window (pacer mode: congested state,
//! keep-alive, congested time excluded from the drain rule's average) and key-frame flushing.

mod scripted;

use pacer::cwnd::{CwndChannel, CwndConfig};
use pacer::pacing::FrameInfo;
use pacer::{CwndMode, HandoverAwarePacer, PacingConfig, PacingController, PacketKind};
use rtc_interceptor::{Interceptor, Packet, StreamInfo};
use sansio::Protocol;
use std::time::{Duration, Instant};

const VIDEO: u32 = 10;
const VIDEO_RTX: u32 = 11;
const AUDIO: u32 = 20;
const PADDING: u32 = 99;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn config(bps: u64) -> PacingConfig {
    PacingConfig {
        pacing_factor: 1.0,
        initial_target_bitrate_bps: bps,
        queue_time_limit: Duration::from_secs(10),
        padding_ssrc: Some(PADDING),
        ..PacingConfig::default()
    }
}

fn drain_controller(c: &mut PacingController<u32>, now: Instant) -> Vec<u32> {
    std::iter::from_fn(|| c.poll_send(now).map(|r| r.payload)).collect()
}

#[test]
fn a_congested_pacer_holds_video_lets_audio_through_and_sends_a_keep_alive_500_ms_after_the_last_send()
 {
    let t0 = Instant::now();
    let mut c = PacingController::new(config(1_000_000), t0);
    for id in 0..3 {
        c.enqueue(t0, VIDEO, PacketKind::Video, 1000, id);
    }
    assert_eq!(vec![0, 1, 2], drain_controller(&mut c, t0));
    c.set_congested(t0, true);
    assert!(c.is_congested());
    c.enqueue(t0 + ms(10), VIDEO, PacketKind::Video, 1000, 3);
    c.enqueue(t0 + ms(10), VIDEO, PacketKind::Video, 1000, 4);
    assert!(drain_controller(&mut c, t0 + ms(10)).is_empty());
    assert_eq!(
        Some(t0 + ms(500)),
        c.next_send_time(),
        "keep-alive 500 ms after t0"
    );
    assert_eq!(None, c.poll_keepalive(t0 + ms(499)));
    let keepalive = c.poll_keepalive(t0 + ms(500)).expect("keep-alive due");
    assert_eq!(
        (1, t0 + ms(500)),
        (keepalive.size_bytes, keepalive.released_at)
    );
    assert_eq!(None, c.poll_keepalive(t0 + ms(500)), "one per interval");
    assert_eq!(Some(t0 + ms(1000)), c.next_send_time());
    // Unpaced audio still leaves at once, and counts as the last send.
    c.enqueue(t0 + ms(600), AUDIO, PacketKind::Audio, 100, 100);
    assert_eq!(
        Some(t0 + ms(600) + Duration::from_nanos(1)),
        c.next_send_time()
    );
    assert_eq!(vec![100], drain_controller(&mut c, t0 + ms(600)));
    assert_eq!(Some(t0 + ms(1100)), c.next_send_time());
    assert!(drain_controller(&mut c, t0 + ms(1050)).is_empty());
    // Uncongested: the held video leaves.
    c.set_congested(t0 + ms(1200), false);
    assert_eq!(vec![3, 4], drain_controller(&mut c, t0 + ms(1200)));
    let stats = c.stats(t0 + ms(1200));
    assert_eq!((stats.keepalives_sent, stats.congested), (1, false));
    assert_eq!(ms(1200), stats.congested_time);
    assert_eq!(None, c.next_send_time(), "empty and uncongested: idle");
}

#[test]
fn time_spent_congested_does_not_count_toward_the_average_queue_time_of_the_drain_rule() {
    let t0 = Instant::now();
    let mut c = PacingController::new(
        PacingConfig {
            queue_time_limit: Duration::from_secs(1),
            ..config(100_000)
        },
        t0,
    );
    // 100 kB queued at t0, never polled: the queue stays as it is.
    for id in 0..100 {
        c.enqueue(t0, VIDEO, PacketKind::Video, 1000, id);
    }
    c.set_congested(t0 + ms(100), true);
    c.set_congested(t0 + ms(600), false);
    let stats = c.stats(t0 + ms(700));
    assert_eq!(ms(700), stats.oldest_queue_time);
    assert_eq!(
        ms(200),
        stats.average_queue_time,
        "700 ms minus 500 ms congested"
    );
    // 800 kbit over the 800 ms left of the 1-s limit: 1 Mbit/s (it would be 800 kbit / 300 ms
    // = 2.67 Mbit/s if congested time counted).
    assert_eq!(1_000_000, stats.adjusted_rate_bps);
    assert_eq!(ms(500), stats.congested_time);
}

#[test]
fn the_first_packet_of_a_key_frame_flushes_its_streams_queued_packets_and_their_retransmissions() {
    let t0 = Instant::now();
    let key = FrameInfo {
        key_frame: true,
        first_packet_of_frame: true,
    };
    let mut c = PacingController::new(
        PacingConfig {
            keyframe_flush: true,
            ..config(10_000)
        },
        t0,
    );
    // 10 kbit/s: the first packet leaves, the rest wait.
    for id in 0..6 {
        c.enqueue(t0, VIDEO, PacketKind::Video, 1000, id);
    }
    c.enqueue(t0, VIDEO_RTX, PacketKind::Retransmission, 1000, 50);
    c.enqueue(t0, 30, PacketKind::Video, 1000, 60);
    assert_eq!(vec![50], drain_controller(&mut c, t0));
    c.enqueue(t0, VIDEO_RTX, PacketKind::Retransmission, 1000, 51);
    let flushed = c.enqueue_frame_packet(
        t0 + ms(10),
        VIDEO,
        PacketKind::Video,
        1200,
        100,
        key,
        Some(VIDEO_RTX),
    );
    assert_eq!(vec![0, 1, 2, 3, 4, 5, 51], flushed);
    // The rest of the key frame does not flush its own first packet, nor does a second key
    // frame while the first is still queued.
    let rest = FrameInfo {
        key_frame: true,
        first_packet_of_frame: false,
    };
    let none = c.enqueue_frame_packet(t0 + ms(10), VIDEO, PacketKind::Video, 1200, 101, rest, None);
    assert!(none.is_empty());
    let none = c.enqueue_frame_packet(t0 + ms(20), VIDEO, PacketKind::Video, 1200, 102, key, None);
    assert!(none.is_empty());
    let stats = c.stats(t0 + ms(20));
    assert_eq!(7, stats.packets_flushed);
    assert_eq!((4, 4600), (stats.queued_packets, stats.queued_bytes));

    // Off (the default): nothing is flushed.
    let mut off = PacingController::new(config(10_000), t0);
    for id in 0..3 {
        off.enqueue(t0, VIDEO, PacketKind::Video, 1000, id);
    }
    let none = off.enqueue_frame_packet(t0, VIDEO, PacketKind::Video, 1000, 9, key, None);
    assert!(none.is_empty());
    assert_eq!(0, off.stats(t0).packets_flushed);
}

fn released(pacer: &mut HandoverAwarePacer, t0: Instant) -> Vec<(u32, u16, Duration)> {
    std::iter::from_fn(|| pacer.poll_write())
        .filter_map(|p| match &p.message.packet {
            Packet::Rtp(rtp) => Some((rtp.header.ssrc, rtp.header.sequence_number, p.now - t0)),
            _ => None,
        })
        .collect()
}

#[test]
fn in_pacer_mode_the_interceptor_holds_media_at_the_window_keeps_alive_and_resumes_when_acknowledgements_return()
 {
    let t0 = Instant::now();
    let channel = CwndChannel::new(CwndConfig::with_mode(CwndMode::Pacer));
    let (mut pacer, handle) = HandoverAwarePacer::builder(config(1_000_000))
        .congestion_window(channel.clone())
        .build();
    pacer.bind_local_stream(&StreamInfo {
        ssrc: VIDEO,
        mime_type: "video/VP8".into(),
        ..Default::default()
    });
    // 988 + 12 = 1000 bytes per packet.
    pacer
        .handle_write(scripted::rtp(t0, VIDEO, 0, 988))
        .unwrap();
    assert_eq!(vec![(VIDEO, 0, ms(0))], released(&mut pacer, t0));
    assert_eq!(1000, channel.snapshot().outstanding_bytes);
    // Feedback 100 ms later acknowledges it: window (100 + 350) ms x 80 kbit/s = 4500 bytes.
    channel.on_feedback(t0 + ms(100), [(VIDEO, 0, t0, true)], 80_000);
    assert_eq!(Some(4500), channel.snapshot().window_bytes);
    for seq in 1..=10 {
        pacer
            .handle_write(scripted::rtp(t0 + ms(100), VIDEO, seq, 988))
            .unwrap();
    }
    // 0, 1000, ..., 4000 outstanding before each: five leave, then 5000 >= 4500.
    let first: Vec<u16> = released(&mut pacer, t0).iter().map(|p| p.1).collect();
    assert_eq!(vec![1, 2, 3, 4, 5], first);
    assert!(channel.congested());
    let mut out = Vec::new();
    while let Some(due) = pacer.poll_timeout() {
        if due > t0 + ms(700) {
            break;
        }
        pacer.handle_timeout(due).unwrap();
        out.extend(released(&mut pacer, t0));
    }
    assert_eq!(
        vec![(PADDING, 0, ms(600))],
        out,
        "nothing but one keep-alive, 500 ms after the last send"
    );
    assert!(handle.stats().congested);
    // The acknowledgements return: the pacer resumes at once.
    channel.on_feedback(
        t0 + ms(700),
        (1..=5).map(|seq| (VIDEO, seq, t0 + ms(100), true)),
        80_000,
    );
    assert!(!channel.congested());
    pacer.handle_timeout(t0 + ms(700)).unwrap();
    let resumed: Vec<(u32, u16, Duration)> = released(&mut pacer, t0);
    assert_eq!(
        (6..=10)
            .map(|seq| (VIDEO, seq, ms(700)))
            .collect::<Vec<_>>(),
        resumed
    );
    let stats = handle.stats();
    assert_eq!(1, stats.keepalives_sent);
    assert_eq!(11, stats.packets_sent);
}

#[test]
fn in_pushback_mode_the_pacer_never_holds_media_but_counts_it_outstanding() {
    let t0 = Instant::now();
    let channel = CwndChannel::new(CwndConfig::default());
    let (mut pacer, _) = HandoverAwarePacer::builder(config(1_000_000))
        .congestion_window(channel.clone())
        .build();
    pacer
        .handle_write(scripted::rtp(t0, VIDEO, 0, 988))
        .unwrap();
    released(&mut pacer, t0);
    channel.on_feedback(t0 + ms(100), [(VIDEO, 0, t0, true)], 80_000);
    for seq in 1..=10 {
        pacer
            .handle_write(scripted::rtp(t0 + ms(100), VIDEO, seq, 988))
            .unwrap();
    }
    let mut n = released(&mut pacer, t0).len();
    while let Some(due) = pacer.poll_timeout() {
        pacer.handle_timeout(due).unwrap();
        n += released(&mut pacer, t0).len();
    }
    assert_eq!(10, n);
    let s = channel.snapshot();
    assert_eq!((10_000, false), (s.outstanding_bytes, s.congested));
    // The next process tick pushes back: fill 10 000 / 4 500 > 1.5.
    channel.on_process(t0 + ms(125), 80_000);
    assert!((channel.snapshot().pushback_ratio - 0.9).abs() < 1e-12);
}

//! Exact release schedules of the sans-I/O pacing controller.

use pacer::pacing::Released;
use pacer::{PacerStats, PacingConfig, PacingController, PacketKind};
use std::time::{Duration, Instant};

const MBPS: u64 = 1_000_000;
const VIDEO_SSRC: u32 = 0x1111;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A controller at target `bps` and pacing factor 1.0, so the pacing rate is the target.
fn controller(t0: Instant, bps: u64, limit: Duration) -> PacingController<u32> {
    let config = PacingConfig {
        pacing_factor: 1.0,
        queue_time_limit: limit,
        initial_target_bitrate_bps: bps,
        ..PacingConfig::default()
    };
    PacingController::new(config, t0)
}

fn enqueue_video(pacer: &mut PacingController<u32>, now: Instant, packets: u32, size: u64) {
    for id in 0..packets {
        pacer.enqueue(now, VIDEO_SSRC, PacketKind::Video, size, id);
    }
}

/// Runs the pacer as a timer would: poll at `now` until nothing leaves, then jump to the next
/// send time, until the queue is empty or `until` is passed.
fn drive(pacer: &mut PacingController<u32>, from: Instant, until: Instant) -> Vec<Released<u32>> {
    let mut released = Vec::new();
    let mut now = from;
    while now <= until {
        while let Some(packet) = pacer.poll_send(now) {
            released.push(packet);
        }
        match pacer.next_send_time() {
            Some(next) => {
                assert!(next > now, "next send time {next:?} is not after {now:?}");
                now = next;
            }
            None => break,
        }
    }
    released
}

fn within(actual: Duration, expected: Duration, tolerance: f64) -> bool {
    (actual.as_secs_f64() - expected.as_secs_f64()).abs() <= tolerance * expected.as_secs_f64()
}

#[test]
fn one_megabyte_at_one_megabit_leaves_by_the_queue_time_limit_because_the_drain_boost_engages() {
    for limit_ms in [500, 2000, 4000] {
        let t0 = Instant::now();
        let mut pacer = controller(t0, MBPS, ms(limit_ms));
        enqueue_video(&mut pacer, t0, 1000, 1000);
        let released = drive(&mut pacer, t0, t0 + Duration::from_secs(60));
        assert_eq!(released.len(), 1000);
        let last = released.last().unwrap().released_at - t0;
        assert!(
            within(last, ms(limit_ms), 0.05),
            "limit {limit_ms} ms: the last packet left after {last:?}"
        );
        let stats = pacer.stats(t0 + last);
        assert!(
            within(stats.drain_boost_time, last, 0.05),
            "limit {limit_ms} ms: boost active {:?} of {last:?}",
            stats.drain_boost_time
        );
        assert!(pacer.is_empty());
        assert_eq!(pacer.next_send_time(), None);
    }
}

#[test]
fn with_a_twenty_second_limit_one_megabyte_leaves_at_the_pacing_rate_in_about_eight_seconds() {
    let t0 = Instant::now();
    let mut pacer = controller(t0, MBPS, Duration::from_secs(20));
    enqueue_video(&mut pacer, t0, 1000, 1000);
    // The first instants already reveal the rate: 8 Mbit / 20 s = 0.4 Mbit/s < 1 Mbit/s.
    assert_eq!(pacer.stats(t0).adjusted_rate_bps, MBPS);
    let released = drive(&mut pacer, t0, t0 + Duration::from_secs(60));
    let last = released.last().unwrap().released_at - t0;
    assert!(
        within(last, Duration::from_secs(8), 0.05),
        "left after {last:?}"
    );
    assert_eq!(pacer.stats(t0 + last).drain_boost_time, Duration::ZERO);
}

#[test]
fn the_drain_rate_is_the_queued_bytes_over_the_time_left_to_the_limit() {
    let t0 = Instant::now();
    let mut pacer = controller(t0, MBPS, ms(2000));
    enqueue_video(&mut pacer, t0, 1000, 1000);
    // At t0 the average queue time is 0: 8 000 000 bits / 2 s.
    assert_eq!(pacer.stats(t0).adjusted_rate_bps, 4 * MBPS);
    // 500 ms later, with nothing sent, 8 000 000 bits / 1.5 s, rounded up.
    assert_eq!(pacer.stats(t0 + ms(500)).adjusted_rate_bps, 5_333_334);
    // Past the limit the time left is floored at 1 ms.
    assert_eq!(pacer.stats(t0 + ms(2500)).adjusted_rate_bps, 8_000_000_000);
}

#[test]
fn changing_the_limit_while_packets_wait_changes_the_remaining_schedule_at_once() {
    let t0 = Instant::now();
    let mut pacer = controller(t0, MBPS, ms(4000));
    enqueue_video(&mut pacer, t0, 1000, 1000);
    let before = drive(&mut pacer, t0, t0 + ms(1000));
    let sent_by_1s = before.len();
    // At the 4-s limit about a quarter leaves in the first second.
    assert!(
        (240..=260).contains(&sent_by_1s),
        "{sent_by_1s} sent by 1 s"
    );

    let change = t0 + ms(1000);
    let stats = pacer.stats(change);
    let rate_before = stats.adjusted_rate_bps;
    assert_eq!(
        pacer.set_queue_time_limit(change, ms(1500)),
        ms(1500),
        "1500 ms is inside [50 ms, 10 s]"
    );
    let after = pacer.stats(change);
    let expected = (after.queued_bytes as u128 * 8 * 1_000_000_000).div_ceil(500_000_000) as u64;
    assert_eq!(after.adjusted_rate_bps, expected);
    assert!(after.adjusted_rate_bps > 2 * rate_before);

    let rest = drive(&mut pacer, change, t0 + Duration::from_secs(60));
    assert_eq!(sent_by_1s + rest.len(), 1000);
    let last = rest.last().unwrap().released_at - t0;
    assert!(within(last, ms(1500), 0.05), "left after {last:?}");
}

#[test]
fn a_limit_is_clamped_to_fifty_milliseconds_and_ten_seconds() {
    let t0 = Instant::now();
    let mut pacer = controller(t0, MBPS, ms(2000));
    assert_eq!(pacer.set_queue_time_limit(t0, ms(1)), ms(50));
    assert_eq!(
        pacer.set_queue_time_limit(t0, Duration::from_secs(30)),
        Duration::from_secs(10)
    );
    assert_eq!(pacer.queue_time_limit(), Duration::from_secs(10));
    let clamped_at_build = controller(t0, MBPS, Duration::ZERO);
    assert_eq!(clamped_at_build.queue_time_limit(), ms(50));
}

#[test]
fn a_backlog_leaves_in_one_forty_millisecond_burst_then_at_the_pacing_rate() {
    let t0 = Instant::now();
    let mut pacer = controller(t0, MBPS, Duration::from_secs(10));
    enqueue_video(&mut pacer, t0, 100, 1000);
    // 40 ms at 1 Mbit/s is 5000 bytes: five 1000-byte packets leave back to back.
    let first: Vec<_> = std::iter::from_fn(|| pacer.poll_send(t0)).collect();
    assert_eq!(first.len(), 5);
    // Then one 8-ms packet each time the debt falls below the 40-ms window.
    let ns = Duration::from_nanos;
    assert_eq!(pacer.next_send_time(), Some(t0 + ns(1)));
    let rest = drive(&mut pacer, t0 + ns(1), t0 + ms(100));
    let times: Vec<Duration> = rest.iter().map(|p| p.released_at - t0).collect();
    let expected: Vec<Duration> = (0..13).map(|k| ms(8 * k) + ns(1)).collect();
    assert_eq!(times, expected);
}

#[test]
fn extra_polls_do_not_change_the_schedule() {
    let t0 = Instant::now();
    let schedule = |poll_every: Option<Duration>| {
        let mut pacer = controller(t0, MBPS, ms(500));
        enqueue_video(&mut pacer, t0, 200, 1000);
        let mut released = Vec::new();
        let mut now = t0;
        while !pacer.is_empty() {
            while let Some(p) = pacer.poll_send(now) {
                released.push((p.payload, p.released_at));
            }
            let Some(next) = pacer.next_send_time() else {
                break;
            };
            now = match poll_every {
                Some(step) => next.min(now + step),
                None => next,
            };
        }
        released
    };
    let lazy = schedule(None);
    assert_eq!(lazy.len(), 200);
    assert_eq!(lazy, schedule(Some(ms(3))));
    assert_eq!(lazy, schedule(Some(Duration::from_micros(700))));
}

#[test]
fn a_burst_is_capped_at_sixty_three_kilobytes_at_high_rates() {
    let t0 = Instant::now();
    let mut pacer = controller(t0, 100 * MBPS, Duration::from_secs(10));
    enqueue_video(&mut pacer, t0, 200, 1000);
    // 40 ms at 100 Mbit/s would be 500 kB; the window is 63 000 bytes = 63 packets.
    let burst = std::iter::from_fn(|| pacer.poll_send(t0)).count();
    assert_eq!(burst, 63);
}

#[test]
fn debt_is_capped_at_half_a_second_of_sending() {
    let t0 = Instant::now();
    let mut pacer = controller(t0, MBPS, Duration::from_secs(10));
    // One 1 MB packet would be 8 s of debt at 1 Mbit/s; the cap keeps 500 ms.
    pacer.enqueue(t0, VIDEO_SSRC, PacketKind::Video, 1_000_000, 0);
    pacer.enqueue(t0, VIDEO_SSRC, PacketKind::Video, 1000, 1);
    assert!(pacer.poll_send(t0).is_some());
    assert_eq!(pacer.poll_send(t0), None);
    let adjusted = pacer.stats(t0).adjusted_rate_bps;
    assert_eq!(adjusted, MBPS);
    // The next packet may go once the debt is back under the 40-ms window.
    assert_eq!(
        pacer.next_send_time(),
        Some(t0 + ms(460) + Duration::from_nanos(1))
    );
}

#[test]
fn audio_leaves_at_enqueue_ahead_of_video_and_owes_no_debt() {
    let t0 = Instant::now();
    let mut pacer = controller(t0, MBPS, Duration::from_secs(10));
    enqueue_video(&mut pacer, t0, 20, 1000);
    assert_eq!(std::iter::from_fn(|| pacer.poll_send(t0)).count(), 5);
    // 3 ms later the debt is 37 ms, inside the 40-ms burst window, so one more video packet may
    // follow; audio goes first, at its enqueue instant.
    let t = t0 + ms(3);
    pacer.enqueue(t, 0xA0D10, PacketKind::Audio, 100, 99);
    assert_eq!(pacer.next_send_time(), Some(t + Duration::from_nanos(1)));
    let audio = pacer.poll_send(t).expect("audio is unpaced");
    assert_eq!(
        (audio.payload, audio.kind, audio.released_at),
        (99, PacketKind::Audio, t)
    );
    let video = pacer.poll_send(t).expect("debt is inside the burst window");
    assert_eq!((video.payload, video.kind), (5, PacketKind::Video));
    assert_eq!(pacer.poll_send(t), None);
    // 37 + 8 = 45 ms of debt, 5 ms over the window; the audio's 0.8 ms were not charged.
    assert_eq!(
        pacer.next_send_time(),
        Some(t + ms(5) + Duration::from_nanos(1))
    );
}

#[test]
fn paced_audio_is_charged_like_any_other_packet() {
    let t0 = Instant::now();
    let config = PacingConfig {
        pacing_factor: 1.0,
        pace_audio: true,
        initial_target_bitrate_bps: MBPS,
        ..PacingConfig::default()
    };
    let mut pacer = PacingController::new(config, t0);
    for id in 0..10 {
        pacer.enqueue(t0, 7, PacketKind::Audio, 1000, id);
    }
    assert_eq!(std::iter::from_fn(|| pacer.poll_send(t0)).count(), 5);
    assert_eq!(pacer.next_send_time(), Some(t0 + Duration::from_nanos(1)));
    let sixth = pacer
        .poll_send(t0 + Duration::from_nanos(1))
        .expect("debt below the window");
    assert_eq!(sixth.payload, 5);
    assert_eq!(
        pacer.next_send_time(),
        Some(t0 + ms(8) + Duration::from_nanos(1))
    );
}

#[test]
fn retransmissions_go_before_video_and_padding_goes_last() {
    let t0 = Instant::now();
    let mut pacer = controller(t0, 10 * MBPS, Duration::from_secs(10));
    pacer.enqueue(t0, 1, PacketKind::Padding, 100, 0);
    pacer.enqueue(t0, 1, PacketKind::Video, 100, 1);
    pacer.enqueue(t0, 2, PacketKind::Fec, 100, 2);
    pacer.enqueue(t0, 3, PacketKind::Retransmission, 100, 3);
    pacer.enqueue(t0, 1, PacketKind::Video, 100, 4);
    let order: Vec<u32> = std::iter::from_fn(|| pacer.poll_send(t0))
        .map(|p| p.payload)
        .collect();
    assert_eq!(order, vec![3, 1, 2, 4, 0]);
}

#[test]
fn the_encoder_should_pause_once_two_seconds_of_data_are_queued() {
    let t0 = Instant::now();
    let mut pacer = controller(t0, MBPS, Duration::from_secs(10));
    // 250 packets of 1000 bytes = 2 000 000 bits = exactly 2 s at 1 Mbit/s: not more than 2 s.
    enqueue_video(&mut pacer, t0, 250, 1000);
    let stats: PacerStats = pacer.stats(t0);
    assert_eq!(stats.expected_queue_time, Duration::from_secs(2));
    assert!(!stats.encoder_should_pause);
    pacer.enqueue(t0, VIDEO_SSRC, PacketKind::Video, 1000, 250);
    let stats = pacer.stats(t0);
    assert_eq!(stats.expected_queue_time, ms(2008));
    assert!(stats.encoder_should_pause);
}

#[test]
fn the_pause_threshold_stays_at_two_seconds_whatever_the_limit() {
    let t0 = Instant::now();
    // With a 1-s limit the drain rule keeps the expected queue time below 1 s: no pause.
    let mut pacer = controller(t0, MBPS, ms(1000));
    enqueue_video(&mut pacer, t0, 1000, 1000);
    let stats = pacer.stats(t0);
    assert_eq!(stats.expected_queue_time, ms(1000));
    assert!(!stats.encoder_should_pause);
}

#[test]
fn an_idle_pacer_has_no_next_send_time_and_idle_time_is_no_credit() {
    let t0 = Instant::now();
    let mut pacer = controller(t0, MBPS, Duration::from_secs(10));
    assert_eq!(pacer.next_send_time(), None);
    assert!(pacer.poll_send(t0 + Duration::from_secs(5)).is_none());
    // After 5 s idle, a 10-packet burst still only gets one 40-ms window.
    let t = t0 + Duration::from_secs(5);
    enqueue_video(&mut pacer, t, 10, 1000);
    assert_eq!(std::iter::from_fn(|| pacer.poll_send(t)).count(), 5);
}

#[test]
fn stats_report_queue_ages_rates_and_totals() {
    let t0 = Instant::now();
    let mut pacer = controller(t0, MBPS, Duration::from_secs(10));
    enqueue_video(&mut pacer, t0, 20, 1000);
    let released = drive(&mut pacer, t0, t0 + ms(50));
    assert_eq!(
        released.len(),
        12,
        "five at 0 ms, then one every 8 ms up to 48 ms"
    );
    let stats = pacer.stats(t0 + ms(50));
    assert_eq!(stats.at, Some(t0 + ms(50)));
    assert_eq!(stats.packets_sent, 12);
    assert_eq!(stats.bytes_sent, 12_000);
    assert_eq!(stats.queued_packets, 8);
    assert_eq!(stats.queued_bytes, 8000);
    assert_eq!(stats.oldest_queue_time, ms(50));
    assert_eq!(stats.average_queue_time, ms(50));
    assert_eq!(stats.expected_queue_time, ms(64));
    assert_eq!(stats.target_bitrate_bps, MBPS);
    assert_eq!(stats.pacing_rate_bps, MBPS);
    assert_eq!(stats.adjusted_rate_bps, MBPS);
    assert_eq!(stats.queue_time_limit, Duration::from_secs(10));
    assert!(!stats.encoder_should_pause);
}

#[test]
fn the_pacing_rate_is_the_target_times_the_pacing_factor() {
    let t0 = Instant::now();
    let mut pacer: PacingController<()> = PacingController::new(PacingConfig::default(), t0);
    assert_eq!(pacer.stats(t0).pacing_rate_bps, 330_000);
    pacer.set_target_bitrate(t0, 2 * MBPS);
    let stats = pacer.stats(t0);
    assert_eq!(
        (stats.target_bitrate_bps, stats.pacing_rate_bps),
        (2 * MBPS, 2_200_000)
    );
}

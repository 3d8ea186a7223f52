//! Probing: the prober inside `PacingController` (cluster sizes, timing at the probe rate,
//! padding only when the queue is empty), and `GoogCc` with probing through the real webrtc-rs
//! chain (`CongestionControl(GoogCc)` + `TwccSender` + `HandoverAwarePacer` with a padding SSRC,
//! `TwccReceiver` on the far side) over a clean bottleneck.

#[path = "googcc_sim/probing_chain.rs"]
mod probing_chain;

use pacer::pacing::ProbeClusterConfig;
use pacer::{PacingConfig, PacingController};
use std::time::{Duration, Instant};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn controller(t0: Instant, padding: bool) -> PacingController<u32> {
    PacingController::new(
        PacingConfig {
            pacing_factor: 1.0,
            initial_target_bitrate_bps: 300_000,
            padding_ssrc: padding.then_some(0xFADE),
            ..PacingConfig::default()
        },
        t0,
    )
}

/// Drives the controller at its own wake-ups until `end`; returns every release as
/// `(offset in µs, bytes, cluster, is padding)`.
fn drive(
    p: &mut PacingController<u32>,
    t0: Instant,
    end: Duration,
) -> Vec<(u64, u64, Option<i32>, bool)> {
    let mut out = Vec::new();
    let mut now = t0;
    loop {
        while let Some(r) = p.poll_send(now) {
            out.push((
                (now - t0).as_micros() as u64,
                r.size_bytes,
                r.probe_cluster,
                false,
            ));
        }
        while let Some(pad) = p.poll_padding(now) {
            out.push((
                (now - t0).as_micros() as u64,
                pad.size_bytes,
                Some(pad.probe_cluster),
                true,
            ));
        }
        match p.next_send_time() {
            Some(next) if next < t0 + end => now = next,
            _ => break,
        }
    }
    out
}

#[test]
fn a_900k_cluster_sends_queued_media_every_4_ms_regardless_of_the_debt_and_then_paces_again() {
    let t0 = Instant::now();
    let mut p = controller(t0, true);
    p.create_probe_cluster(t0, ProbeClusterConfig::new(1, 900_000));
    assert!(
        !p.is_probing(),
        "a cluster waits for the first media packet"
    );
    for k in 0..8 {
        p.enqueue(t0, 1, pacer::PacketKind::Video, 500, k);
    }
    assert!(p.is_probing());
    let sent = drive(&mut p, t0, ms(200));
    // Probe size 450 B: each 500-B packet is one probe; the next is due when the bytes sent so
    // far have taken their time at 900 kbit/s (500 B = 4.444 ms).
    let probes: Vec<_> = sent.iter().filter(|s| s.2 == Some(1)).collect();
    assert_eq!(
        vec![0, 4444, 8888, 13333],
        probes.iter().map(|s| s.0).collect::<Vec<_>>()[..4].to_vec()
    );
    // 1687 B and 5 probes: the cluster ends with the fifth packet, at 17.777 ms.
    assert_eq!(5, probes.len());
    assert_eq!(17_777, probes[4].0);
    assert!(
        sent.iter().all(|s| !s.3),
        "media was never short: no padding"
    );
    // Then 300 kbit/s pacing again, after repaying the 5 x 13.3 ms of debt beyond the window:
    // the sixth packet waits.
    assert!(sent[5].0 > 17_777 && sent[5].2.is_none(), "{:?}", sent[5]);
}

#[test]
fn when_media_runs_out_padding_fills_the_probe_at_the_probe_rate() {
    let t0 = Instant::now();
    let mut p = controller(t0, true);
    p.create_probe_cluster(t0, ProbeClusterConfig::new(2, 1_800_000));
    p.enqueue(t0, 1, pacer::PacketKind::Video, 1000, 0);
    let sent = drive(&mut p, t0, ms(100));
    // Probe size 2 x 1.8 Mbit/s x 2 ms = 900 B; cluster 1.8 Mbit/s x 15 ms = 3375 B in >= 5.
    let expect = vec![
        (0, 1000, Some(2), false),
        // 1000 B at 1.8 Mbit/s = 4.444 ms; the queue is empty: 900 B of padding.
        (4444, 900, Some(2), true),
        (8444, 900, Some(2), true),
        (12444, 900, Some(2), true),
        (16444, 900, Some(2), true),
    ];
    assert_eq!(expect, sent);
    assert!(!p.is_probing());
}

#[test]
fn padding_waits_for_media_and_never_goes_while_media_is_queued_or_unconfigured() {
    let t0 = Instant::now();
    // Without a padding SSRC the probe is media only.
    let mut p = controller(t0, false);
    p.create_probe_cluster(t0, ProbeClusterConfig::new(1, 1_800_000));
    p.enqueue(t0, 1, pacer::PacketKind::Video, 1000, 0);
    let sent = drive(&mut p, t0, ms(100));
    assert_eq!(vec![(0, 1000, Some(1), false)], sent);
    assert_eq!(None, p.next_send_time(), "nothing to probe with: idle");
    assert_eq!(None, p.poll_padding(t0 + ms(50)));

    // With padding, none before the first media packet has left.
    let mut p = controller(t0, true);
    p.create_probe_cluster(t0, ProbeClusterConfig::new(1, 1_800_000));
    assert_eq!(None, p.poll_padding(t0));
    assert_eq!(None, p.next_send_time());
    // And none while media waits: with 20 packets queued every probe is media.
    for k in 0..20 {
        p.enqueue(t0, 1, pacer::PacketKind::Video, 1000, k);
    }
    let sent = drive(&mut p, t0, ms(100));
    assert!(sent.iter().all(|s| !s.3));
    assert_eq!(5, sent.iter().filter(|s| s.2.is_some()).count());
}

#[test]
fn without_clusters_the_pacer_never_pads() {
    let t0 = Instant::now();
    let mut p = controller(t0, true);
    p.enqueue(t0, 1, pacer::PacketKind::Video, 1000, 0);
    let sent = drive(&mut p, t0, ms(1000));
    assert_eq!(vec![(0, 1000, None, false)], sent);
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

#[test]
fn on_a_clean_5_mbit_link_probing_reaches_90_percent_of_capacity_within_5_s() {
    let run = probing_chain::run(probing_chain::Setup::clean(5_000_000, true), secs(10));
    let reached = run.time_to(4_500_000.0).expect("reaches 4.5 Mbit/s");
    assert!(reached < secs(5), "{reached:?}");
    // The jump to 4.76 Mbit/s (0.95 x the 5 Mbit/s receive rate of the 7.2 Mbit/s probe) is
    // followed by an overuse at 0.67 s, as the encoder's 40-ms frame bursts at the new rate
    // build short queues: AIMD backs off to 0.85 x the acknowledged rate (3.0 Mbit/s) and climbs
    // back. Over 5-10 s the target still averages above 85 % of capacity.
    let late: Vec<f64> = run
        .samples
        .iter()
        .filter(|s| s.0 >= secs(5))
        .map(|s| s.1)
        .collect();
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    assert!(mean > 4_250_000.0, "{mean}");
    assert!(
        run.probe_clusters_matched >= 3,
        "{}",
        run.probe_clusters_matched
    );
    assert!(
        run.padding_packets > 0,
        "the 300 kbit/s encoder is short of media"
    );
    assert!(
        run.padding_acknowledged,
        "padding was acknowledged through TWCC"
    );
}

#[test]
fn without_probing_the_same_link_takes_far_longer() {
    let run = probing_chain::run(probing_chain::Setup::clean(5_000_000, false), secs(10));
    assert_eq!(None, run.time_to(4_500_000.0));
    assert_eq!(0, run.padding_packets);
}

#[test]
fn on_a_1_mbit_link_probing_does_not_leave_a_standing_queue() {
    let run = probing_chain::run(probing_chain::Setup::clean(1_000_000, true), secs(20));
    let standing = run.max_queue_from(secs(5));
    assert!(standing < ms(200), "{standing:?}");
    let reached = run.time_to(900_000.0);
    assert!(reached.is_some_and(|t| t < secs(5)), "{reached:?}");
}

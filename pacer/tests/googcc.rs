//! `GoogCc` driven through `BandwidthEstimator::on_reports` by the deterministic path model in
//! `googcc_sim` (1-ms virtual ticks, 30 ms one-way delay, feedback every 100 ms).

mod googcc_sim;
#[path = "googcc_sim/probing_chain.rs"]
mod probing_chain;

use googcc_sim::{Path, Run, simulate};
use pacer::googcc::BandwidthUsage;
use pacer::{GoogCc, GoogCcConfig};
use rtc_interceptor::{BandwidthEstimator, CongestionControlBuilder, Registry, Slot};
use std::time::Duration;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn run(start_bps: f64, path: &Path, length: Duration) -> Run {
    let cc = GoogCc::new(GoogCcConfig {
        start_bps,
        ..GoogCcConfig::default()
    });
    let handle = cc.handle();
    simulate(cc, Some(&handle), path, length)
}

#[test]
fn a_one_point_four_times_overdrive_is_detected_within_a_second_and_the_queue_stays_short() {
    let r = run(1_400_000.0, &Path::constant(1_000_000.0), secs(30));
    let detected = r.first_overuse.expect("overuse detected");
    assert!(detected < Duration::from_secs(1), "{detected:?}");
    assert_eq!(r.first_decrease, Some(detected), "the target falls at once");
    let peak = r.max_queue_ms(secs(0), secs(30));
    assert!(peak < 200.0, "largest queue {peak} ms");
    let standing = r.mean_queue_ms(secs(5), secs(30));
    assert!(standing < 200.0, "standing queue {standing} ms");
}

#[test]
fn after_an_overdrive_the_target_settles_below_capacity() {
    let r = run(1_400_000.0, &Path::constant(1_000_000.0), secs(60));
    let settled = r.mean_target(secs(30), secs(60));
    assert!(settled < 1_000_000.0, "{settled}");
    assert!(settled > 500_000.0, "{settled}");
    assert!(
        r.window(secs(5), secs(60)).all(|s| s.target < 1_100_000.0),
        "never more than 10 % above capacity after the first back-off"
    );
}

#[test]
fn a_four_times_overdrive_is_detected_within_a_second() {
    let r = run(4_000_000.0, &Path::constant(1_000_000.0), secs(20));
    let detected = r.first_overuse.expect("overuse detected");
    assert!(detected < Duration::from_secs(1), "{detected:?}");
    assert!(r.mean_target(secs(10), secs(20)) < 1_000_000.0);
}

#[test]
fn one_percent_random_loss_does_not_collapse_the_target_and_twenty_percent_does_reduce_it() {
    let mean_with = |loss: f64| {
        let mut path = Path::constant(2_000_000.0);
        path.loss = loss;
        run(1_000_000.0, &path, secs(40)).mean_target(secs(10), secs(40))
    };
    let clean = mean_with(0.0);
    let one = mean_with(0.01);
    let twenty = mean_with(0.2);
    assert!(clean > 1_500_000.0, "{clean}");
    assert!(one > 0.9 * clean, "1 %: {one} vs {clean}");
    assert!(twenty < 0.5 * clean, "20 %: {twenty} vs {clean}");
}

#[test]
fn on_a_clean_link_the_target_ramps_without_queueing() {
    let r = run(300_000.0, &Path::constant(5_000_000.0), secs(20));
    // Ramp-up without probing: 8 % per second of the last second's minimum.
    let at = |t: u64| {
        r.window(secs(t), secs(t) + Duration::from_millis(100))
            .next()
            .unwrap()
            .target
    };
    assert!(at(10) > at(5) && at(15) > at(10) && at(20) > at(15));
    assert!(r.max_queue_ms(secs(0), secs(20)) < 20.0);
    assert!(
        r.samples
            .iter()
            .all(|s| s.state != Some(BandwidthUsage::Overusing))
    );
}

#[test]
fn the_same_path_and_seed_give_the_same_trajectory() {
    let mut path = Path::constant(1_000_000.0);
    path.loss = 0.05;
    let a = run(800_000.0, &path, secs(10));
    let b = run(800_000.0, &path, secs(10));
    let targets = |r: &Run| {
        r.samples
            .iter()
            .map(|s| s.target.to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(targets(&a), targets(&b));
}

#[test]
fn the_handle_shows_what_the_estimator_reports() {
    let cc = GoogCc::new(GoogCcConfig {
        start_bps: 1_400_000.0,
        ..GoogCcConfig::default()
    });
    let handle = cc.handle();
    let r = simulate(cc, Some(&handle), &Path::constant(1_000_000.0), secs(5));
    let snap = handle.snapshot();
    assert_eq!(r.samples.last().unwrap().target, snap.target_bps);
    assert!(snap.target_bps <= snap.delay_based_bps);
    let rtt = snap.rtt.expect("rtt measured");
    // 60 ms of propagation, plus what the newest packet of the feedback waited at the receiver
    // for the next 100-ms feedback (libwebrtc subtracts only the others' waits), plus a short
    // queue.
    assert!(
        rtt >= Duration::from_millis(60) && rtt < Duration::from_millis(170),
        "{rtt:?}"
    );
    let acked = snap.acknowledged_bps.expect("acknowledged rate");
    assert!(acked > 100_000.0 && acked < 1_000_000.0, "{acked}");
    assert!(snap.threshold_ms >= 6.0 && snap.threshold_ms <= 600.0);
}

#[test]
fn googcc_plugs_into_the_congestion_control_interceptor_unchanged() {
    let cc = GoogCc::default();
    let handle = cc.handle();
    let interceptor = CongestionControlBuilder::new(cc).build();
    assert_eq!(300_000.0, interceptor.estimator().target_bitrate());
    let _registry = Registry::new().with(Slot::CongestionControl, interceptor);
    assert_eq!(300_000.0, handle.target_bps());
}

/// 20 s of a 1.4 Mbit/s start over the 1 Mbit/s bottleneck of the real-chain harness (TWCC
/// sender and receiver, this pacer, 30 ms each way), with the given pacer bursts; the first
/// frame time at which the detector said overusing.
fn chain_overdrive(
    estimator: probing_chain::Estimator,
    burst_interval: Duration,
) -> (Option<Duration>, probing_chain::Trace) {
    let trace = probing_chain::run(
        probing_chain::Setup {
            capacity_bps: 1_000_000,
            estimator,
            start_bps: 1_400_000.0,
            burst_interval,
        },
        secs(20),
    );
    (trace.overusing.first().copied(), trace)
}

#[test]
fn in_the_real_chain_with_smooth_pacing_googcc_catches_a_1_4x_overdrive_within_a_second() {
    let (overuse, trace) = chain_overdrive(
        probing_chain::Estimator::GoogCc { probing: false },
        Duration::ZERO,
    );
    let detected = overuse.expect("overuse detected");
    assert!(detected < secs(1), "{detected:?}");
    let peak = trace.max_queue_from(Duration::ZERO);
    assert!(peak < Duration::from_millis(200), "{peak:?}");
    let mean = trace.mean_target_from(secs(10));
    assert!(mean < 1_000_000.0, "settles below capacity: {mean}");
}

/// With the pacer's default 40-ms bursts a whole frame leaves within one 5-ms group, so the
/// trendline sees about 30 groups a second and needs its 20-group window before it reports a
/// slope: detection takes longer, and the queue peaks higher, than with smooth pacing.
#[test]
fn in_the_real_chain_with_40_ms_bursts_googcc_still_drains_the_queue_that_gcc_lets_grow() {
    let (overuse, ours) = chain_overdrive(
        probing_chain::Estimator::GoogCc { probing: false },
        Duration::from_millis(40),
    );
    let detected = overuse.expect("overuse detected");
    assert!(detected < Duration::from_millis(1500), "{detected:?}");
    let standing = ours.max_queue_from(secs(5));
    assert!(standing < Duration::from_millis(200), "{standing:?}");
    let mean = ours.mean_target_from(secs(10));
    assert!(mean < 1_000_000.0, "settles below capacity: {mean}");

    let (_, theirs) = chain_overdrive(
        probing_chain::Estimator::WebrtcRs,
        Duration::from_millis(40),
    );
    let theirs_standing = theirs.max_queue_from(secs(5));
    assert!(
        theirs_standing > Duration::from_millis(500),
        "webrtc-rs Gcc lets the queue grow: {theirs_standing:?}"
    );
}

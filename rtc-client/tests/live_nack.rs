//! libwebrtc-like loss recovery in a real call: the squeezed link of `tests/nack_recovery.rs`, through the relay,
//! with webrtc-rs's stock NACK pair and with the libwebrtc-like one (`rtc_client::nack`).
//!
//! The link: 3 Mbit/s, 30 ms one-way, a 100-kB drop-tail buffer on the forward link, squeezed
//! to 800 kbit/s from 10 s to 20 s, then freed; a 30-s call, the policy WebRTC's fixed 2000 ms,
//! the congestion window off (as the simulated comparison). Two calls, one after the other (not
//! concurrently: they would compete for the cores).
//!
//! Measured, with the simulated test's definitions:
//!
//! - retransmissions per lost packet: retransmissions the caller put on the link (RTX packets,
//!   or video packets resent with a sequence number already seen) / first transmissions of
//!   video packets the link dropped; the relay counts both from the (clear) RTP headers;
//! - max pacer queue: the pacer's longest expected queue time at any frame;
//! - loss %: the answerer's QoE (packets never received after retransmission / sent);
//! - freezes: the answerer's QoE;
//! - recovery: from the link being freed (20 s) to the first second from which every second
//!   renders at least 25 frames (of 30) at the answerer, on the caller's clock. The call's last
//!   second is left out: the caller reads the QoE as it hangs up, so that second is cut short.
//!
//! Asserted for `libwebrtc`: the loss-recovery goals (at most 3 retransmissions per lost packet,
//! no pacer queue above the queue time limit plus [`QUEUE_TOLERANCE_MS`], full recovery within
//! 3 s of the link being freed). For `stock`: only what it showed in every run (see
//! `docs/real-calls.md`).
//!
//! `cargo test -p rtc-client --test live_nack -- --nocapture` prints the table.

#![cfg(feature = "live")]

mod live_support;

use live_support::{Answerer, config};
use pacer::CwndMode;
use rtc_client::call::{BweChoice, FecChoice, NackChoice, PolicyChoice, SenderOptions};
use rtc_client::forecast::ForecastSpec;
use rtc_client::link::{
    Buffer, Capacity, CapacityChange, Delay, HandoverEffect, HandoverEvent, LinkConfig, Time,
};
use rtc_client::live::call::{LinkSetup, LiveCallOutcome, run};
use rtc_client::scenario::timeline::HandoverTimeline;
use std::time::{Duration, Instant};

const ONE_WAY: Duration = Duration::from_millis(30);
const BASE_BPS: u64 = 3_000_000;
const CALL: Duration = Duration::from_secs(30);
const SQUEEZE_AT: Duration = Duration::from_secs(10);
const SQUEEZE_FOR: Duration = Duration::from_secs(10);
/// A second counts as recovered when it renders at least this many frames (of 30).
const RECOVERED_FPS: u32 = 25;
/// The pacer's expected queue time is sampled at frames in real time, where a frame step can
/// run late on a loaded machine and a burst (a key frame) lands before the pacer drains: the
/// queue may pass the limit by up to this much before the limit counts as broken.
const QUEUE_TOLERANCE_MS: f64 = 200.0;

/// The squeezed link, as a call's link set-up.
fn squeeze() -> LinkSetup {
    let forward = LinkConfig::new(Capacity::constant(BASE_BPS))
        .with_delay(Delay::constant(ONE_WAY))
        .with_buffer(Buffer::Bytes(100_000))
        .with_handovers(vec![HandoverEvent::new(
            Time::from_secs(SQUEEZE_AT.as_secs()),
            HandoverEffect::CapacityChange {
                change: CapacityChange::Rate(800_000),
                duration: Some(SQUEEZE_FOR),
            },
        )]);
    let reverse =
        LinkConfig::new(Capacity::constant(BASE_BPS)).with_delay(Delay::constant(ONE_WAY));
    LinkSetup {
        scenario: "nack-squeeze".into(),
        forward,
        forward_seed: 7,
        reverse,
        reverse_seed: 8,
        timeline: HandoverTimeline::none(),
    }
}

/// One row of the table.
#[derive(Debug)]
struct Row {
    nack: NackChoice,
    video_packets: u64,
    lost: u64,
    retransmissions: u64,
    per_lost: f64,
    max_queue_ms: f64,
    limit_ms: f64,
    loss_pct: f64,
    freezes: u64,
    freeze_ms: u64,
    /// Seconds from the link being freed to full recovery; `None`: never within the call.
    recovery_s: Option<f64>,
    fps: Vec<u32>,
    relay: rtc_client::live::relay::DirectionStats,
    responder: Option<pacer::nack::NackResponderStats>,
}

fn row(nack: NackChoice, outcome: &LiveCallOutcome) -> Row {
    let relay = outcome
        .relay
        .expect("the call went through the relay")
        .forward;
    // Whole seconds only: the call's last second is cut short by the hang-up.
    let whole = usize::try_from(CALL.as_secs() - 1).unwrap();
    let mut fps = outcome.rendered_per_second.clone();
    fps.resize(whole, 0);
    let recovered_at = (0..fps.len())
        .find(|&s| fps[s..].iter().all(|&n| n >= RECOVERED_FPS))
        .map(|s| s as f64);
    let freed = (SQUEEZE_AT + SQUEEZE_FOR).as_secs_f64();
    let telemetry_max = outcome
        .telemetry
        .iter()
        .map(|t| t.pacer.max_queue_ms)
        .fold(0.0, f64::max);
    Row {
        nack,
        video_packets: relay.video_packets,
        lost: relay.video_lost,
        retransmissions: relay.retransmissions,
        per_lost: relay.retransmissions as f64 / relay.video_lost.max(1) as f64,
        max_queue_ms: outcome.max_pacer_queue_ms.max(telemetry_max),
        limit_ms: outcome.queue_limit_at_max_ms,
        loss_pct: outcome.qoe.packet_loss_pct,
        freezes: outcome.qoe.freeze_count,
        freeze_ms: outcome.qoe.total_freeze_ms,
        recovery_s: recovered_at.map(|s| (s - freed).max(0.0)),
        fps,
        relay,
        responder: outcome.nack_responder,
    }
}

fn print(rows: &[Row]) {
    println!(
        "| nack | video packets | lost on link | retransmissions | per lost | max pacer queue ms \
         | limit ms | loss % | freezes | frozen ms | recovery s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {:.2} | {:.0} | {:.0} | {:.2} | {} | {} | {} |",
            r.nack.as_str(),
            r.video_packets,
            r.lost,
            r.retransmissions,
            r.per_lost,
            r.max_queue_ms,
            r.limit_ms,
            r.loss_pct,
            r.freezes,
            r.freeze_ms,
            r.recovery_s
                .map_or_else(|| "never".to_owned(), |s| format!("{s:.0}"))
        );
    }
    for r in rows {
        println!("{}: fps per second {:?}", r.nack.as_str(), r.fps);
        println!("{}: forward link {:?}", r.nack.as_str(), r.relay);
        println!("{}: responder {:?}", r.nack.as_str(), r.responder);
    }
}

async fn call(answerer: &Answerer, nack: NackChoice) -> Row {
    let mut config = config(
        answerer.url(),
        CALL,
        Duration::from_secs(10),
        PolicyChoice::Default,
        ForecastSpec::None,
        Some(squeeze()),
    );
    config.sender = SenderOptions {
        bwe: BweChoice::GoogCc,
        nack,
        // As tests/nack_recovery.rs: the comparison is without a congestion window.
        cwnd: CwndMode::Off,
        keyframe_flush: false,
        // NACK alone: FEC would repair some of the losses this test counts.
        fec: FecChoice::Off,
    };
    let outcome = run(&config, |_| {}, std::future::pending())
        .await
        .expect("the call runs");
    assert_eq!(outcome.ended_by, "completed", "{nack:?}");
    row(nack, &outcome)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_squeezed_link_libwebrtc_meets_the_goals_in_a_real_call() {
    let started = Instant::now();
    let answerer = Answerer::start().await;
    let stock = call(&answerer, NackChoice::Stock).await;
    let libwebrtc = call(&answerer, NackChoice::Libwebrtc).await;
    let rows = [stock, libwebrtc];
    print(&rows);
    println!("two calls in {:.1} s", started.elapsed().as_secs_f64());
    let [stock, libwebrtc] = rows;

    // The squeeze loses packets in both calls, and both render before it.
    for r in [&stock, &libwebrtc] {
        assert!(r.lost > 0, "the squeeze loses packets: {r:?}");
        assert!(
            r.fps[2..SQUEEZE_AT.as_secs() as usize].iter().sum::<u32>() > 100,
            "{r:?}"
        );
    }
    // The loss-recovery goals, for the libwebrtc pair.
    assert!(
        libwebrtc.per_lost <= 3.0,
        "{:.2} retransmissions per lost packet: {libwebrtc:?}",
        libwebrtc.per_lost
    );
    assert!(
        libwebrtc.max_queue_ms <= 2000.0 + QUEUE_TOLERANCE_MS,
        "pacer queue {} ms: {libwebrtc:?}",
        libwebrtc.max_queue_ms
    );
    assert!(
        libwebrtc.recovery_s.is_some_and(|s| s <= 3.0),
        "recovery {:?} s: {libwebrtc:?}",
        libwebrtc.recovery_s
    );
    // The storm, as every run showed it (docs/real-calls.md has the ranges): the stock pair
    // resends each lost packet many times over (about 10 to 12 in our runs, libwebrtc about 1)
    // and its pacer queue passes the limit (about 4.2 to 4.3 s); the margins here are wide.
    assert!(stock.per_lost > 5.0, "{stock:?}");
    assert!(stock.per_lost > 3.0 * libwebrtc.per_lost, "{stock:?}");
    assert!(
        stock.max_queue_ms > 2000.0 + QUEUE_TOLERANCE_MS,
        "{stock:?}"
    );
    answerer.server.shutdown().await;
}

//! Real calls over loopback: `answer` and `call` in one process, through the relay,
//! with live handover sources, and the signalling's refusals.

#![cfg(feature = "live")]

mod live_support;

use chrono::Utc;
use handover_predictor::ForecastSource;
use handover_predictor::dish::{SimConfig, SkyTruth, SyntheticSky, serve};
use live_support::{Answerer, Seen, config, parse_and_validate};
use rtc_client::call::{FecChoice, PolicyChoice, TimedActions};
use rtc_client::forecast::ForecastSpec;
use rtc_client::link::{Capacity, Delay, LinkConfig, Loss};
use rtc_client::live::call::{LinkSetup, LiveCallConfig, LiveCallOutcome, run};
use rtc_client::live::http::{Peer, request_raw};
use rtc_client::live::signal::ErrorBody;
use rtc_client::scenario::orbit::End;
use rtc_client::scenario::timeline::{Handover, HandoverTimeline};
use rtc_client::scenario::{Scenario, ScenarioPaths};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A fixed truth (a second apart, so each is its own forecast step): four handovers inside the first decision's horizon, one in the second's, none
/// in the third's, so the heuristic must choose 900, 600 and 500 ms (its table: 3-5, 1-2, 0).
fn stepping_timeline() -> HandoverTimeline {
    HandoverTimeline {
        source: "slots",
        slotted: false,
        boundaries_ms: Vec::new(),
        handovers: [2_500, 3_500, 4_500, 7_000]
            .into_iter()
            .map(|at_ms| Handover {
                at_ms,
                end: End::Local,
                from: None,
                to: None,
            })
            .collect(),
        outages_ms: Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_through_the_starlink_relay_renders_and_follows_the_policy() {
    let started = Instant::now();
    let answerer = Answerer::start().await;
    let config = starlink_relay_call(answerer.url(), 15, PolicyChoice::Heuristic);
    let mut seen = Seen::default();
    let outcome = run(&config, |e| seen.record(e), std::future::pending())
        .await
        .expect("the call runs");

    assert_eq!(outcome.ended_by, "completed");
    assert!(
        outcome.setup_time < Duration::from_secs(3),
        "set-up took {:?}",
        outcome.setup_time
    );
    // Frames rendered at the far end, at a real frame rate.
    assert!(
        outcome.qoe.frames_rendered > 200,
        "only {} frames rendered",
        outcome.qoe.frames_rendered
    );
    assert!(outcome.qoe.frame_rate > 15.0, "{:?}", outcome.qoe);
    // GCC moved the target from its 300-kbit/s start.
    let (low, high) = outcome.target_range_bps;
    assert!(high > 2.0 * low && high > 600_000.0, "target {low}..{high}");
    // The policy walked the heuristic table at the decision boundaries, and the pacer followed.
    let limits: Vec<u128> = outcome
        .decisions
        .iter()
        .map(|d| d.queue_time_limit.as_millis())
        .collect();
    assert_eq!(limits, vec![900, 600, 500], "{:?}", outcome.decisions);
    for want in [900, 600, 500] {
        assert!(
            seen.statuses.iter().any(|s| s.limit_ms == want),
            "the pacer never reported {want} ms: {:?}",
            seen.statuses.iter().map(|s| s.limit_ms).collect::<Vec<_>>()
        );
    }
    assert!(
        seen.statuses.len() >= 12,
        "{} status lines",
        seen.statuses.len()
    );
    // Every telemetry line parses and validates, one per decision.
    let records = parse_and_validate(&seen.lines);
    assert_eq!(records.len(), 3);
    assert_eq!(records.len(), outcome.telemetry.len());
    for (record, want) in records.iter().zip([900, 600, 500]) {
        assert_eq!(record.scenario, "starlink");
        assert_eq!(record.action_ms, want);
        assert_eq!(record.forecast.source, ForecastSource::Oracle);
        assert!(record.qoe.frames_rendered > 0, "{record:?}");
        assert!(record.gcc.mean_target_kbps > 0.0);
    }
    assert_eq!(records[0].forecast.handover.count(), 4);
    // Everything crossed the relay, both ways.
    let relay = outcome.relay.expect("relay counters");
    assert!(relay.forward.delivered > 1000, "{relay:?}");
    assert!(relay.reverse.delivered > 20, "{relay:?}");
    // The answerer noticed the hang-up.
    let end = answerer.saw_end(Duration::from_secs(3)).await;
    assert!(end.is_some_and(|s| s.contains("hung up")));
    answerer.server.shutdown().await;
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_reads_the_simulated_dish_over_grpc() {
    let start = Utc::now();
    let sky: Arc<dyn SkyTruth> =
        Arc::new(SyntheticSky::new(5, start, chrono::Duration::minutes(10)));
    let dish = serve("127.0.0.1:0".parse().unwrap(), SimConfig::new(start), sky)
        .await
        .expect("the simulated dish starts");
    let answerer = Answerer::start().await;
    let config = config(
        answerer.url(),
        Duration::from_secs(8),
        Duration::from_secs(3),
        PolicyChoice::Heuristic,
        ForecastSpec::Dish(dish.local_addr().to_string()),
        None,
    );
    let mut seen = Seen::default();
    let outcome = run(&config, |e| seen.record(e), std::future::pending())
        .await
        .expect("the call runs");
    assert_eq!(outcome.ended_by, "completed");
    assert!(outcome.qoe.frames_rendered > 100, "{:?}", outcome.qoe);
    // Once the detector has polled the dish, the policy decides on its mirror forecast.
    let from_dish: Vec<_> = outcome
        .decisions
        .iter()
        .filter(|d| d.fallback.is_none() && d.forecast.source() == ForecastSource::Mirror)
        .collect();
    assert!(
        !from_dish.is_empty(),
        "no decision used the dish: {:?}",
        outcome.decisions
    );
    let records = parse_and_validate(&seen.lines);
    assert_eq!(records.len(), outcome.decisions.len());
    assert_eq!(records[0].scenario, "live");
    answerer.server.shutdown().await;
    dish.shutdown().await.expect("the dish stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_sources_fall_back_to_2000_ms_and_the_calls_complete() {
    let answerer = Answerer::start().await;
    // Port 1 on loopback: nothing listens there.
    let unreachable = config(
        answerer.url(),
        Duration::from_secs(5),
        Duration::from_secs(2),
        PolicyChoice::Heuristic,
        ForecastSpec::Dish("127.0.0.1:1".into()),
        None,
    );
    let bad_tle = config(
        answerer.url(),
        Duration::from_secs(5),
        Duration::from_secs(2),
        PolicyChoice::Heuristic,
        ForecastSpec::OrbitalTle {
            tle: "/nonexistent/catalogue.tle".into(),
            lat: 50.67,
            lon: 4.61,
        },
        None,
    );
    let mut seen_dish = Seen::default();
    let mut seen_tle = Seen::default();
    let (dish, tle) = tokio::join!(
        run(
            &unreachable,
            |e| seen_dish.record(e),
            std::future::pending()
        ),
        run(&bad_tle, |e| seen_tle.record(e), std::future::pending()),
    );
    for (outcome, seen, reason) in [
        (dish.expect("the dish call runs"), &seen_dish, "dish"),
        (
            tle.expect("the orbital call runs"),
            &seen_tle,
            "does not load",
        ),
    ] {
        assert_eq!(outcome.ended_by, "completed");
        assert!(outcome.qoe.frames_rendered > 50, "{:?}", outcome.qoe);
        assert!(!outcome.decisions.is_empty());
        for d in &outcome.decisions {
            assert_eq!(d.queue_time_limit, Duration::from_millis(2000), "{d}");
            let why = d.fallback.as_deref().unwrap_or_default();
            assert!(why.contains(reason), "{why}");
        }
        // The status line says so.
        assert!(
            seen.statuses
                .iter()
                .any(|s| s.source.starts_with("fallback 2000 ms:")),
            "{:?}",
            seen.statuses.iter().map(|s| &s.source).collect::<Vec<_>>()
        );
        for record in parse_and_validate(&seen.lines) {
            assert_eq!(record.action_ms, 2000);
            assert_eq!(record.forecast.source, ForecastSource::None);
        }
    }
    answerer.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signalling_refuses_bad_input_with_the_reason() {
    let answerer = Answerer::start().await;
    let peer = Peer::plain(&answerer.url()).unwrap();
    let timeout = Duration::from_secs(5);
    let post = |body: Vec<u8>, kind: &'static str| {
        let peer = peer.clone();
        async move {
            request_raw(&peer, "POST", "/calls", kind, &body, timeout)
                .await
                .expect("the server answers")
        }
    };
    let reason = |r: &rtc_client::live::http::Response| r.json::<ErrorBody>().unwrap().error;

    let r = post(b"{not json".to_vec(), "application/json").await;
    assert_eq!(r.status, 400);
    assert!(reason(&r).contains("malformed JSON"), "{}", r.text());

    let r = post(
        br#"{"offer":{"type":"offer","sdp":"hello"}}"#.to_vec(),
        "application/json",
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(reason(&r).contains("SDP"), "{}", r.text());

    let r = post(
        br#"{"offer":{"type":"answer","sdp":"v=0"}}"#.to_vec(),
        "application/json",
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(reason(&r).contains("must be an offer"), "{}", r.text());

    let r = post(
        br#"{"offer":{"type":"offer","sdp":"v=0"},"nack":"sometimes"}"#.to_vec(),
        "application/json",
    )
    .await;
    assert_eq!(r.status, 400);
    assert!(reason(&r).contains("unknown nack"), "{}", r.text());

    let mut big = br#"{"offer":{"type":"offer","sdp":""#.to_vec();
    big.extend(std::iter::repeat_n(b'a', 100_000));
    big.extend(br#""}}"#);
    let r = post(big, "application/json").await;
    assert_eq!(r.status, 413);
    assert!(reason(&r).contains("larger than"), "{}", r.text());

    let r = post(b"v=0".to_vec(), "application/sdp").await;
    assert_eq!(r.status, 415);
    assert!(reason(&r).contains("application/json"), "{}", r.text());

    let r = request_raw(
        &peer,
        "POST",
        "/calls/nope/qoe",
        "application/json",
        br#"{"packets_sent":1}"#,
        timeout,
    )
    .await
    .unwrap();
    assert_eq!(r.status, 404);
    // Nothing broke: the server still answers and holds no call.
    assert_eq!(answerer.server.calls(), 0);
    let r = post(b"[]".to_vec(), "application/json").await;
    assert_eq!(r.status, 400);
    answerer.server.shutdown().await;
}

/// A 10-s call through the relay over 5 Mbit/s with 60 ms each way and 5 % Bernoulli loss on the
/// forward link, to an answerer that accepts FlexFEC-03 (`answer_fec`) or not.
async fn lossy_live_call(answer_fec: bool) -> LiveCallOutcome {
    let answerer = Answerer::with_fec(answer_fec).await;
    let one_way = Delay::constant(Duration::from_millis(60));
    let link = LinkSetup {
        scenario: "lossy".into(),
        forward: LinkConfig::new(Capacity::constant(5_000_000))
            .with_delay(one_way.clone())
            .with_loss(Loss::Bernoulli { probability: 0.05 }),
        forward_seed: 5,
        reverse: LinkConfig::new(Capacity::constant(5_000_000)).with_delay(one_way),
        reverse_seed: 6,
        timeline: HandoverTimeline::none(),
    };
    let config = config(
        answerer.url(),
        Duration::from_secs(10),
        Duration::from_secs(5),
        PolicyChoice::Default,
        ForecastSpec::None,
        Some(link),
    );
    assert_eq!(
        config.sender.fec,
        FecChoice::Libwebrtc,
        "the default sender"
    );
    let outcome = run(&config, |_| {}, std::future::pending())
        .await
        .expect("the call runs");
    answerer.server.shutdown().await;
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lossy_call_negotiates_flexfec_and_the_receiver_recovers_packets() {
    let outcome = lossy_live_call(true).await;
    assert_eq!(outcome.ended_by, "completed");
    let fec = outcome.fec;
    eprintln!(
        "live 5 % loss, 120 ms RTT, 10 s: {fec:?}, relay {:?}",
        outcome.relay
    );
    // Repair packets left the sender, crossed the relay and rebuilt lost media at the far end.
    assert!(fec.packets_sent > 50, "{fec:?}");
    assert!(
        fec.packets_received > 0 && fec.packets_received <= fec.packets_sent,
        "{fec:?}"
    );
    assert!(fec.packets_recovered > 0, "{fec:?}");
    let recorded: u64 = outcome
        .telemetry
        .iter()
        .map(|r| r.fec.as_ref().expect("a FEC record").packets_sent)
        .sum();
    assert_eq!(recorded, fec.packets_sent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answerer_without_flexfec_gets_a_call_without_fec() {
    let outcome = lossy_live_call(false).await;
    assert_eq!(outcome.ended_by, "completed");
    assert!(outcome.qoe.frames_rendered > 100, "{:?}", outcome.qoe);
    assert_eq!(outcome.fec.packets_sent, 0, "{:?}", outcome.fec);
    assert_eq!(outcome.fec.packets_received, 0, "{:?}", outcome.fec);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_call_applies_the_actions_at_each_forecast_handover_and_records_them() {
    // The onset tracker off: ten seconds are too few boundaries to place it, and what is
    // tested here is that each forecast handover meets the actions in a real call.
    let mut config = TimedActions::all().config();
    config.onset.enabled = false;
    let untracked = TimedActions::with_config("untracked", config).expect("a valid config");
    let records = ten_second_starlink_call(PolicyChoice::Timed {
        actions: untracked,
        limit: None,
    })
    .await;
    let actions: Vec<_> = records
        .iter()
        .map(|r| r.actions.expect("a timed call records its actions"))
        .collect();
    // The four handovers of the truth (2.5, 3.5, 4.5 and 7 s), each guarded and boosted once;
    // the hold is on at least at the first (its gate has no evidence yet).
    let guarded: u64 = actions.iter().map(|a| a.guard.applied).sum();
    let boosted: u64 = actions.iter().map(|a| a.boost.applied).sum();
    let held: u64 = actions.iter().map(|a| a.hold.applied).sum();
    assert_eq!((guarded, boosted), (4, 4), "{actions:?}");
    assert!((1..=4).contains(&held), "{actions:?}");
    assert!(records.iter().all(|r| r.policy.starts_with("timed")));
}

/// The shipped joint model (`models/joint/`, a v2 card) in a real call: every decision records
/// the (limit, profile) pair it chose and what the call had measured, as in a simulated call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_call_runs_the_joint_model_and_records_its_profile_and_inputs() {
    let card = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/joint/policy.json");
    let model = pacer::OnnxPolicy::load(card).expect("the shipped joint model loads");
    assert!(
        pacer::QueuePolicy::controls_actions(&model),
        "a v2 card controls the actions"
    );
    let records = ten_second_starlink_call(PolicyChoice::Learned(Arc::new(model))).await;
    for record in &records {
        assert!(record.policy.starts_with("learned:"), "{}", record.policy);
        let profile = record
            .profile
            .as_deref()
            .expect("a joint decision names its profile");
        assert!(pacer::ActionProfile::named(profile).is_ok(), "{profile}");
        assert!(
            record.inputs.is_some(),
            "a joint decision records its inputs"
        );
        assert!(
            record.actions.is_some(),
            "the actions' counters are recorded"
        );
    }
    // The first decision had measured nothing; the second read the first interval's loss.
    let inputs: Vec<_> = records.iter().map(|r| r.inputs.unwrap()).collect();
    assert_eq!(inputs[0].previous_loss_pct, None);
    assert_eq!(
        inputs[1].previous_loss_pct,
        Some(records[0].qoe.packet_loss_pct)
    );
}

/// A call of `seconds` over the starlink relay (seed 3) with the stepping truth as its forecast,
/// a decision every 5 s.
fn starlink_relay_call(url: String, seconds: u64, policy: PolicyChoice) -> LiveCallConfig {
    let duration = Duration::from_secs(seconds);
    let scenario = Scenario::load("starlink", &ScenarioPaths::workspace()).unwrap();
    let realization = scenario.realize(3, duration).unwrap();
    let mut link = LinkSetup::from_realization(&realization);
    link.timeline = stepping_timeline();
    config(
        url,
        duration,
        Duration::from_secs(5),
        policy,
        ForecastSpec::Oracle,
        Some(link),
    )
}

/// A 10-s real call over the starlink relay with the stepping truth as its forecast, two
/// 5-s decisions: its telemetry, validated.
async fn ten_second_starlink_call(policy: PolicyChoice) -> Vec<pacer::telemetry::IntervalRecord> {
    let answerer = Answerer::start().await;
    let config = starlink_relay_call(answerer.url(), 10, policy);
    let mut seen = Seen::default();
    let outcome = run(&config, |e| seen.record(e), std::future::pending())
        .await
        .expect("the call runs");
    assert_eq!(outcome.ended_by, "completed");
    assert!(outcome.qoe.frames_rendered > 100, "{:?}", outcome.qoe);
    let records = parse_and_validate(&seen.lines);
    assert_eq!(records.len(), 2);
    answerer.server.shutdown().await;
    records
}

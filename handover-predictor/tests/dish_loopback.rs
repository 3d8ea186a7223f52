//! The whole dish pipeline over real gRPC on loopback: the simulated dish (synthetic truth, clock
//! running 40x faster than real time), the tonic client and the detector driver.

#![cfg(feature = "dish")]

mod dish_harness;

use chrono::Duration as ChronoDuration;
use dish_harness::{score_against_truth, sky, start};
use handover_predictor::dish::proto::device::{
    self as pb, device_server::Device, device_server::DeviceServer,
};
use handover_predictor::dish::{
    ClientConfig, ClockSource, DISH_TIME_METADATA, DishClient, DriverConfig, PointKind,
    RequestKind, SimConfig, SimDish, SkyTruth, SyntheticSky, run_detector, serve,
};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TIME_SCALE: f64 = 40.0;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_simulated_minutes_over_grpc_find_the_true_handovers_with_f1_of_at_least_0_95() {
    let wall = Instant::now();
    let truth = Arc::new(sky(42, 10));
    let config = SimConfig {
        time_scale: TIME_SCALE,
        ..SimConfig::new(start())
    };
    let sim = serve("127.0.0.1:0".parse().unwrap(), config, truth.clone())
        .await
        .unwrap();
    // One poll every 25 ms of real time: a call must not hold up the next one for long.
    let client_config = ClientConfig {
        call_timeout: Duration::from_millis(500),
        retries: 0,
        ..ClientConfig::default()
    };
    let client = DishClient::connect_with(sim.local_addr().to_string(), client_config)
        .await
        .unwrap();
    let driver = DriverConfig {
        time_scale: TIME_SCALE,
        duration: Some(ChronoDuration::minutes(10)),
        ..DriverConfig::default()
    };
    let report = run_detector(&client, driver).await.unwrap();
    let elapsed = wall.elapsed();

    // A handover can be judged once a clean point of the new slot exists, i.e. from 2 s after
    // the boundary (the poll that crosses the boundary is discarded as straddling).
    let judged_until = report.ended_at - ChronoDuration::seconds(2);
    let (score, truth_handovers) = score_against_truth(
        &report.log.handovers(),
        truth.as_ref(),
        report.started_at,
        judged_until,
    );
    let from_sim = sim.truth_handovers_so_far();
    eprintln!(
        "loopback: {} polls ({} failed), {} clears, {} true handovers, {} detected, \
         TP {} FP {} FN {}, precision {:.3}, recall {:.3}, F1 {:.3}, wall {:.2} s",
        report.polls,
        report.failed_polls,
        report.clears,
        truth_handovers.len(),
        report.log.handovers().len(),
        score.true_positives,
        score.false_positives,
        score.false_negatives,
        score.precision(),
        score.recall(),
        score.f1(),
        elapsed.as_secs_f64(),
    );
    sim.shutdown().await.unwrap();

    assert_eq!(report.clock, ClockSource::Reported);
    assert!(report.clear_supported);
    // 10 simulated minutes: ~600 polls (a loaded machine may skip a few seconds; the driver
    // then polls the next whole second) and 40 slots, about 60 % of them with a handover.
    assert!(report.polls >= 480, "{} polls", report.polls);
    assert!(truth_handovers.len() >= 15, "{}", truth_handovers.len());
    // The simulator's own timeline agrees with the truth it was given.
    assert!(truth_handovers.iter().all(|h| from_sim.contains(h)));
    assert!(score.f1() >= 0.95, "F1 {:.3}: {score:?}", score.f1());
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");

    // The track is per-second, mostly fresh, and its directions are where the truth was.
    let fresh: Vec<_> = report
        .log
        .track
        .iter()
        .filter(|p| p.kind == PointKind::Fresh)
        .collect();
    assert!(fresh.len() * 10 >= report.log.track.len() * 6);
    let close = fresh
        .iter()
        .filter(|p| {
            let s = truth
                .serving(p.at - ChronoDuration::milliseconds(500))
                .unwrap();
            p.direction
                .separation_deg(handover_predictor::dish::SkyDirection::of(&s.position))
                < 3.0
        })
        .count();
    assert!(close * 10 >= fresh.len() * 9, "{close} of {}", fresh.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulated_dish_answers_status_location_and_device_info_like_a_real_one() {
    let truth = Arc::new(sky(5, 2));
    let sim = serve(
        "127.0.0.1:0".parse().unwrap(),
        SimConfig::new(start()),
        truth.clone(),
    )
    .await
    .unwrap();
    let client = DishClient::connect(sim.local_addr().to_string())
        .await
        .unwrap();

    client.clear_obstruction_map().await.unwrap();
    let status = client.status().await.unwrap();
    let at = status.dish_time.expect("the simulator reports its clock");
    let range = truth.serving(at).unwrap().position.range_km;
    let expected = 20.0 + 4.0 * range / 299.792_458;
    // The clock moved on by at most a few ms between the status and our truth lookup.
    assert!(
        (f64::from(status.pop_ping_latency_ms) - expected).abs() < 0.1,
        "{} vs {expected}",
        status.pop_ping_latency_ms
    );
    assert!(status.obstruction_map_reset);
    assert_eq!(status.api_version, 31);
    let alignment = status.alignment.unwrap();
    assert_eq!(alignment.tilt_deg, 27.4);
    assert!(alignment.attitude_converged);
    assert_eq!(status.gps.unwrap().satellites, 16);

    let location = client.location().await.unwrap();
    assert_eq!((location.lat_deg, location.lon_deg), (48.137, 11.575));
    let info = client.device_info().await.unwrap();
    assert_eq!(info.hardware_version, "rev3_proto2");

    let map = client.obstruction_map().await.unwrap();
    assert_eq!((map.rows(), map.cols()), (123, 123));
    assert_eq!(map.frame, handover_predictor::dish::MapFrame::Earth);
    assert!(
        map.snr()
            .iter()
            .all(|&v| v == -1.0 || (v > 0.0 && v <= 1.0))
    );
    sim.shutdown().await.unwrap();
}

/// The simulated dish with the map clear removed, like 2023 firmware (reference A12).
struct NoClear {
    dish: Mutex<SimDish>,
    truth: Arc<SyntheticSky>,
    began: Instant,
}

#[tonic::async_trait]
impl Device for NoClear {
    async fn handle(
        &self,
        request: tonic::Request<pb::Request>,
    ) -> Result<tonic::Response<pb::Response>, tonic::Status> {
        if RequestKind::of_request(request.get_ref()) == Some(RequestKind::ClearObstructionMap) {
            return Err(tonic::Status::unimplemented("unknown request"));
        }
        let now = start()
            + ChronoDuration::nanoseconds(
                (self.began.elapsed().as_secs_f64() * TIME_SCALE * 1e9) as i64,
            );
        let reply =
            self.dish
                .lock()
                .unwrap()
                .handle(self.truth.as_ref(), now, request.get_ref())?;
        let mut response = tonic::Response::new(reply);
        let stamp = now.to_rfc3339_opts(chrono::SecondsFormat::Nanos, true);
        response
            .metadata_mut()
            .insert(DISH_TIME_METADATA, stamp.parse().unwrap());
        Ok(response)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dish_without_the_map_clear_still_yields_handovers_through_the_driver() {
    let truth = Arc::new(sky(8, 2));
    let service = NoClear {
        dish: Mutex::new(SimDish::new(SimConfig::new(start()))),
        truth: truth.clone(),
        began: Instant::now(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(DeviceServer::new(service))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );
    let client_config = ClientConfig {
        call_timeout: Duration::from_millis(500),
        retries: 0,
        ..ClientConfig::default()
    };
    let client = DishClient::connect_with(addr.to_string(), client_config)
        .await
        .unwrap();
    let driver = DriverConfig {
        time_scale: TIME_SCALE,
        duration: Some(ChronoDuration::minutes(2)),
        ..DriverConfig::default()
    };
    let report = run_detector(&client, driver).await.unwrap();
    server.abort();

    assert!(!report.clear_supported);
    assert_eq!(report.clears, 0);
    let (score, truth_handovers) = score_against_truth(
        &report.log.handovers(),
        truth.as_ref(),
        report.started_at,
        report.ended_at - ChronoDuration::seconds(2),
    );
    assert!(truth_handovers.len() >= 3, "{}", truth_handovers.len());
    assert!(score.f1() >= 0.9, "{score:?}");
}

//! Bad inputs at the dish's edges: an unreachable or silent dish, malformed replies from a
//! misbehaving server, a refused location, and a simulator asked to leave loopback. None may
//! panic or hang.

#![cfg(feature = "dish")]

mod dish_harness;

use dish_harness::{sky, start};
use handover_predictor::dish::proto::device::{
    self as pb, device_server::Device, device_server::DeviceServer, response::Response as Resp,
};
use handover_predictor::dish::{
    ClientConfig, DecodeError, DishClient, DishError, DriverConfig, DriverError, MapError,
    RequestKind, SimConfig, SimError, run_detector, serve,
};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Slack for scheduling on a loaded machine, on top of the client's own budget.
const SLACK: Duration = Duration::from_millis(500);

#[tokio::test]
async fn connecting_to_a_closed_loopback_port_fails_as_unreachable_within_the_budget() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let config = ClientConfig::default();
    let began = Instant::now();
    let err = DishClient::connect_with(addr.to_string(), config)
        .await
        .unwrap_err();
    let took = began.elapsed();
    assert!(matches!(err, DishError::Unreachable { .. }), "{err:?}");
    assert!(err.to_string().contains(&addr.to_string()), "{err}");
    assert!(took <= config.budget() + SLACK, "{took:?}");
}

#[tokio::test]
async fn a_dish_that_accepts_but_never_answers_times_out_within_the_budget() {
    // A TCP listener that accepts connections and then says nothing.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let silent = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    let config = ClientConfig {
        call_timeout: Duration::from_millis(300),
        retries: 1,
        ..ClientConfig::default()
    };
    let began = Instant::now();
    let outcome = match DishClient::connect_with(addr.to_string(), config).await {
        Ok(client) => client.status().await.map(|_| ()),
        Err(e) => Err(e),
    };
    let took = began.elapsed();
    silent.abort();
    let err = outcome.unwrap_err();
    assert!(matches!(err, DishError::Timeout { .. }), "{err:?}");
    assert!(err.is_transient());
    // Connect (if it stalls) and the call each stay within one budget.
    assert!(took <= config.budget() * 2 + SLACK, "{took:?}");
}

/// A server that answers every request with the reply it was built with.
struct Misbehaving(Result<pb::Response, tonic::Status>);

#[tonic::async_trait]
impl Device for Misbehaving {
    async fn handle(
        &self,
        _request: tonic::Request<pb::Request>,
    ) -> Result<tonic::Response<pb::Response>, tonic::Status> {
        self.0.clone().map(tonic::Response::new)
    }
}

async fn misbehaving(reply: Result<pb::Response, tonic::Status>) -> (DishClient, SocketAddr) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(DeviceServer::new(Misbehaving(reply)))
            .serve_with_incoming(incoming),
    );
    let client = DishClient::connect(addr.to_string()).await.unwrap();
    (client, addr)
}

fn map_reply(rows: u32, cols: u32, len: usize) -> pb::Response {
    pb::Response {
        response: Some(Resp::DishGetObstructionMap(
            pb::DishGetObstructionMapResponse {
                num_rows: rows,
                num_cols: cols,
                snr: vec![0.5; len],
                max_theta_deg: 80.0,
                map_reference_frame: 1,
                ..Default::default()
            },
        )),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_map_whose_snr_length_is_not_rows_times_cols_is_a_malformed_reply() {
    let (client, _) = misbehaving(Ok(map_reply(123, 123, 15_000))).await;
    let began = Instant::now();
    let err = client.obstruction_map().await.unwrap_err();
    assert!(
        matches!(
            &err,
            DishError::Malformed {
                request: RequestKind::GetObstructionMap,
                source: DecodeError::Map(MapError::SnrLength {
                    rows: 123,
                    cols: 123,
                    expected: 15_129,
                    len: 15_000
                })
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "malformed reply to dish_get_obstruction_map: malformed obstruction map: \
         snr has 15000 values but the map announces 123 x 123 = 15129"
    );
    // Not retried: a malformed reply will not get better.
    assert!(!err.is_transient());
    assert!(began.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn zero_or_absurd_map_sizes_are_malformed_replies() {
    for (rows, cols) in [(0, 123), (123, 0), (100_000, 1)] {
        let (client, _) = misbehaving(Ok(map_reply(rows, cols, 4))).await;
        let err = client.obstruction_map().await.unwrap_err();
        assert!(
            matches!(
                &err,
                DishError::Malformed {
                    source: DecodeError::Map(MapError::BadDimensions { .. }),
                    ..
                }
            ),
            "{rows} x {cols}: {err:?}"
        );
    }
}

#[tokio::test]
async fn a_reply_for_another_request_is_a_malformed_reply_naming_both() {
    let (client, _) = misbehaving(Ok(map_reply(123, 123, 123 * 123))).await;
    let err = client.status().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed reply to get_status: the reply to get_status is a dish_get_obstruction_map \
         (expected dish_get_status)"
    );
}

#[tokio::test]
async fn old_firmware_without_the_map_clear_is_reported_as_unsupported() {
    let (client, _) = misbehaving(Err(tonic::Status::unimplemented("unknown request"))).await;
    let err = client.clear_obstruction_map().await.unwrap_err();
    assert!(matches!(err, DishError::Unsupported { .. }), "{err:?}");
}

#[tokio::test]
async fn a_denied_location_request_is_permission_denied_with_the_dish_message() {
    let config = SimConfig {
        location_denied: true,
        ..SimConfig::new(start())
    };
    let sim = serve("127.0.0.1:0".parse().unwrap(), config, Arc::new(sky(1, 1)))
        .await
        .unwrap();
    let client = DishClient::connect(sim.local_addr().to_string())
        .await
        .unwrap();
    let began = Instant::now();
    let err = client.location().await.unwrap_err();
    assert!(
        matches!(
            &err,
            DishError::PermissionDenied {
                request: RequestKind::GetLocation,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "dish refused get_location: permission denied \
         (GetLocation requests are not enabled on this device)"
    );
    // Not retried.
    assert!(began.elapsed() < Duration::from_secs(1));
    // The rest of the API still works.
    assert!(client.status().await.is_ok());
    // A nonsensical time scale is refused before any polling.
    let bad = DriverConfig {
        time_scale: f64::NAN,
        ..DriverConfig::default()
    };
    let err = run_detector(&client, bad).await.unwrap_err();
    assert!(matches!(err, DriverError::BadTimeScale(_)), "{err:?}");
    sim.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_simulated_dish_refuses_non_loopback_addresses_unless_allowed() {
    let err = serve(
        "0.0.0.0:0".parse().unwrap(),
        SimConfig::new(start()),
        Arc::new(sky(1, 1)),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, SimError::NotLoopback(_)), "{err:?}");
    let bad_scale = SimConfig {
        time_scale: 0.0,
        ..SimConfig::new(start())
    };
    let err = serve(
        "127.0.0.1:0".parse().unwrap(),
        bad_scale,
        Arc::new(sky(1, 1)),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, SimError::BadTimeScale(_)), "{err:?}");
}

#[tokio::test]
async fn an_invalid_address_is_reported_without_connecting() {
    let err = DishClient::connect("not a host:port").await.unwrap_err();
    assert!(matches!(err, DishError::InvalidAddress { .. }), "{err:?}");
}

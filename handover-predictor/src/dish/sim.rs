//! A simulated dish: a tonic server for `SpaceX.API.Device.Device/Handle` that paints the
//! serving satellite's sky track into a 123 x 123 FRAME_EARTH obstruction map, driven by a
//! truth model ([`SkyTruth`]).
//!
//! Split as the rest of the crate: [`SimDish`] is the sans-I/O state (painting, clearing,
//! answering a request at an instant it is handed); [`serve`] is the I/O edge that binds a
//! socket, reads the (scaled) real clock and locks the state for each call.
//!
//! What it does, and where each behaviour comes from
//! (`../shared/reference/starlink-dish-and-orbits.md`):
//! * the map starts all [`NO_DATA`](super::map::NO_DATA) (-1, "never seen", A6/B1); every [`PAINT_STEP_MS`] of dish
//!   time the serving satellite's direction lights the pixels of a beam of
//!   [`DEFAULT_BEAM_RADIUS_PX`] with a value in (0, 1] (B1: ~1 = clean signal); pixels outside
//!   the disc stay -1;
//! * `dish_clear_obstruction_map` resets the map and raises `alerts.obstruction_map_reset`
//!   (A7, A13) for [`RESET_ALERT_S`] seconds;
//! * `get_status` answers `pop_ping_latency_ms` from the slant range plus a fixed ground
//!   segment ([`BASE_LATENCY_MS`]) and realistic idle values from a real dish (A11);
//! * `get_location` answers the configured position, or `PermissionDenied` like new firmware
//!   when `location_denied` is set (A8);
//! * any other request is `Unimplemented` (A13);
//! * every reply carries the dish's clock in the metadata [`DISH_TIME_METADATA`], which is how
//!   a detector driving a time-scaled simulator knows which instant a map shows.

use super::client::DISH_TIME_METADATA;
use super::decode::{DishLocation, RequestKind, obstruction_map_to_wire};
use super::map::{MAP_COLS, MAP_ROWS, MapFrame, MapGeometry, ObstructionMap, SkyDirection};
use super::proto::device::{
    self as pb, device_server::Device, device_server::DeviceServer, response::Response as Resp,
};
use crate::sky::Serving;
use chrono::{DateTime, Duration as ChronoDuration, DurationRound, SecondsFormat, Utc};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Where the simulated dish listens by default: loopback, the real dish's port (A1). It binds a
/// non-loopback address only when [`SimConfig::allow_non_loopback`] is set.
pub const SIM_DEFAULT_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 9200);

/// Radius of the beam footprint painted per step, px. About 1.3 degrees: real maps show tracks
/// one to a few pixels wide (B1, B4). A choice of this simulator, not a measured value.
pub const DEFAULT_BEAM_RADIUS_PX: f64 = 1.0;

/// Dish time between two painted beam positions, ms: at <= 1 degree/s (B4) a satellite moves
/// under 0.2 px per step, so the painted track is continuous.
pub const PAINT_STEP_MS: i64 = 200;

/// Longest stretch of dish time painted at once; a map untouched for longer only shows the last
/// hour (keeps a request after a long idle period cheap).
pub const MAX_PAINT_BACKLOG_S: i64 = 3600;

/// Seconds `alerts.obstruction_map_reset` stays raised after a clear: one slot. The reference
/// only says "true right after a clear" (A7) and shows it true in a sample taken while a tool
/// cleared every slot (A11); the exact duration is unverified.
pub const RESET_ALERT_S: i64 = 15;

/// `Response.api_version` of the firmware whose values this simulator copies (A11).
pub const API_VERSION: u64 = 31;

/// Fixed part of the PoP ping RTT, ms (ground segment, processing, queueing). Chosen so that
/// with the space segment (4 x slant range / c: dish -> satellite -> gateway and back, assuming
/// the gateway leg is as long as the user leg) a satellite near 550 km gives ~27 ms, the idle
/// value in A11 (C2 also puts the space segment at 3.7-7.5 ms of RTT). (Derived here, not measured.)
pub const BASE_LATENCY_MS: f64 = 20.0;

/// Speed of light, km/ms.
const LIGHT_KM_PER_MS: f64 = 299.792_458;

/// The message new firmware sends when location access is off (A8, LEOViz README).
pub const LOCATION_DENIED_MESSAGE: &str = "GetLocation requests are not enabled on this device";

/// The truth the simulated dish paints: which satellite serves it, and where, at any instant.
///
/// The orbit model's serving-satellite timeline (SGP4 + slot grid) implements it; tests use
/// [`super::SyntheticSky`]. Implementations must be pure functions of `at` (the simulator may
/// ask about any instant, in any order, from any thread).
pub trait SkyTruth: Send + Sync {
    /// The satellite serving the dish at `at`, or `None` when none does.
    fn serving(&self, at: DateTime<Utc>) -> Option<Serving>;
}

impl<T: SkyTruth + ?Sized> SkyTruth for Arc<T> {
    fn serving(&self, at: DateTime<Utc>) -> Option<Serving> {
        (**self).serving(at)
    }
}

impl<T: SkyTruth + ?Sized> SkyTruth for Box<T> {
    fn serving(&self, at: DateTime<Utc>) -> Option<Serving> {
        (**self).serving(at)
    }
}

/// The per-second serving satellite over `[from, to]` (whole UTC seconds).
pub fn serving_timeline(
    truth: &dyn SkyTruth,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Vec<(DateTime<Utc>, Option<Serving>)> {
    whole_seconds(from, to)
        .map(|t| (t, truth.serving(t)))
        .collect()
}

/// The true handover instants in `(from, to]`: whole seconds `s` at which a satellite serves
/// and differs from the one serving at `s - 1 s`. Gaining or losing service is not a handover.
/// (With Starlink's slots, reference C1, these are slot boundaries.)
pub fn truth_handovers(
    truth: &dyn SkyTruth,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
) -> Vec<DateTime<Utc>> {
    let mut handovers = Vec::new();
    let mut previous = truth.serving(from_second(from)).map(|s| s.norad_id);
    for t in whole_seconds(from_second(from) + ChronoDuration::seconds(1), to) {
        let current = truth.serving(t).map(|s| s.norad_id);
        if let (Some(a), Some(b)) = (previous, current)
            && a != b
        {
            handovers.push(t);
        }
        previous = current;
    }
    handovers
}

/// `t` truncated to the whole second.
fn from_second(t: DateTime<Utc>) -> DateTime<Utc> {
    t.duration_trunc(ChronoDuration::seconds(1)).unwrap_or(t)
}

fn whole_seconds(from: DateTime<Utc>, to: DateTime<Utc>) -> impl Iterator<Item = DateTime<Utc>> {
    let mut first = from_second(from);
    if first < from {
        first += ChronoDuration::seconds(1);
    }
    let count = if to < first {
        0
    } else {
        (to - first).num_seconds() + 1
    };
    (0..count).map(move |k| first + ChronoDuration::seconds(k))
}

/// Settings of a simulated dish.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Dish time when the server starts.
    pub start: DateTime<Utc>,
    /// How many times faster than real time the dish's clock runs.
    pub time_scale: f64,
    /// The position answered to `get_location`.
    pub location: DishLocation,
    /// Answer `get_location` with `PermissionDenied`, like new firmware (A8).
    pub location_denied: bool,
    /// Beam footprint radius, px.
    pub beam_radius_px: f64,
    /// Allow binding a non-loopback address (off: only loopback, so tests never expose a
    /// server by accident).
    pub allow_non_loopback: bool,
}

impl SimConfig {
    /// Real-time clock from `start`, a position in Munich, location allowed, default beam.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            start,
            time_scale: 1.0,
            location: DishLocation::new(48.137, 11.575, 519.0),
            location_denied: false,
            beam_radius_px: DEFAULT_BEAM_RADIUS_PX,
            allow_non_loopback: false,
        }
    }
}

/// The sans-I/O state of a simulated dish: its map and what it has been told, advanced to
/// instants the caller hands it.
#[derive(Debug, Clone)]
pub struct SimDish {
    config: SimConfig,
    geometry: MapGeometry,
    map: ObstructionMap,
    painted_until: DateTime<Utc>,
    last_clear: Option<DateTime<Utc>>,
}

impl SimDish {
    /// A dish at `config.start` with an empty map (as after a reset or a firmware update, A12;
    /// the reset alert is raised).
    pub fn new(config: SimConfig) -> Self {
        let mut map = ObstructionMap::empty(MAP_ROWS, MAP_COLS, MapFrame::Earth);
        map.min_elevation_deg = 10.0;
        Self {
            geometry: MapGeometry::earth(),
            painted_until: config.start,
            last_clear: Some(config.start),
            config,
            map,
        }
    }

    /// Its settings.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// Paints the serving satellite's positions at every paint step in `(painted_until, now]`.
    /// Going back in time paints nothing.
    pub fn advance_to(&mut self, truth: &dyn SkyTruth, now: DateTime<Utc>) {
        if now <= self.painted_until {
            return;
        }
        let backlog_start = now - ChronoDuration::seconds(MAX_PAINT_BACKLOG_S);
        let from = self.painted_until.max(backlog_start);
        let step = ChronoDuration::milliseconds(PAINT_STEP_MS);
        // First step strictly after `from`, on the grid of whole multiples of the step.
        let mut t = from.duration_trunc(step).unwrap_or(from);
        if t <= from {
            t += step;
        }
        while t <= now {
            if let Some(serving) = truth.serving(t) {
                self.paint(&serving);
            }
            t += step;
        }
        self.painted_until = now;
    }

    fn paint(&mut self, serving: &Serving) {
        let direction = SkyDirection::of(&serving.position);
        let value = snr_value(direction.elevation_deg);
        for pixel in self.geometry.paint(direction, self.config.beam_radius_px) {
            if let Some(old) = self.map.get(pixel) {
                self.map.set(pixel, old.max(value));
            }
        }
    }

    /// Clears the map at `now` (after painting up to it), as `dish_clear_obstruction_map` does.
    pub fn clear(&mut self, truth: &dyn SkyTruth, now: DateTime<Utc>) {
        self.advance_to(truth, now);
        let frame = self.map.frame;
        let min_elevation = self.map.min_elevation_deg;
        self.map = ObstructionMap::empty(MAP_ROWS, MAP_COLS, frame);
        self.map.min_elevation_deg = min_elevation;
        self.last_clear = Some(now);
    }

    /// The map as it is at `now`.
    pub fn map_at(&mut self, truth: &dyn SkyTruth, now: DateTime<Utc>) -> ObstructionMap {
        self.advance_to(truth, now);
        let mut map = self.map.clone();
        map.dish_time = Some(now);
        map
    }

    /// Whether `alerts.obstruction_map_reset` is raised at `now`.
    pub fn reset_alert(&self, now: DateTime<Utc>) -> bool {
        self.last_clear
            .is_some_and(|c| now >= c && now - c < ChronoDuration::seconds(RESET_ALERT_S))
    }

    /// The `dish_get_status` reply at `now` (A7, values from A11).
    pub fn status_at(
        &mut self,
        truth: &dyn SkyTruth,
        now: DateTime<Utc>,
    ) -> pb::DishGetStatusResponse {
        self.advance_to(truth, now);
        let serving = truth.serving(now);
        let elapsed_s = (now - self.config.start).num_seconds().max(0);
        let lit = self.map.snr().iter().filter(|&&v| v > 0.0).count();
        let (latency_ms, drop_rate, to_first_slot) = match serving {
            Some(s) => (pop_ping_latency_ms(s.position.range_km) as f32, 0.0, 0.0),
            None => (0.0, 1.0, -1.0),
        };
        pb::DishGetStatusResponse {
            device_info: Some(device_info()),
            device_state: Some(pb::DeviceState {
                uptime_s: elapsed_s as u64,
            }),
            seconds_to_first_nonempty_slot: to_first_slot,
            pop_ping_drop_rate: drop_rate,
            obstruction_stats: Some(pb::DishObstructionStats {
                fraction_obstructed: 0.0,
                valid_s: elapsed_s as f32,
                currently_obstructed: false,
                avg_prolonged_obstruction_interval_s: f32::NAN,
                avg_prolonged_obstruction_valid: false,
                patches_valid: lit as u32,
                ..Default::default()
            }),
            alerts: Some(pb::DishAlerts {
                obstruction_map_reset: self.reset_alert(now),
            }),
            downlink_throughput_bps: 177_000.0,
            uplink_throughput_bps: 361_000.0,
            pop_ping_latency_ms: latency_ms,
            boresight_azimuth_deg: -0.15,
            boresight_elevation_deg: 62.6,
            outage: None,
            gps_stats: Some(pb::DishGpsStats {
                gps_valid: true,
                gps_sats: 16,
                ..Default::default()
            }),
            mobility_class: pb::UserMobilityClass::Stationary as i32,
            is_snr_above_noise_floor: serving.is_some(),
            is_snr_persistently_low: false,
            alignment_stats: Some(pb::AlignmentStats {
                tilt_angle_deg: 27.4,
                boresight_azimuth_deg: -0.15,
                boresight_elevation_deg: 62.6,
                attitude_estimation_state:
                    pb::alignment_stats::AttitudeEstimationState::FilterConverged as i32,
                attitude_uncertainty_deg: 0.60,
                desired_boresight_azimuth_deg: -0.15,
                desired_boresight_elevation_deg: 63.0,
            }),
        }
    }

    /// Answers one request at `now`: the reply, or the gRPC status a real dish would send.
    pub fn handle(
        &mut self,
        truth: &dyn SkyTruth,
        now: DateTime<Utc>,
        request: &pb::Request,
    ) -> Result<pb::Response, tonic::Status> {
        let Some(kind) = RequestKind::of_request(request) else {
            return Err(tonic::Status::unimplemented(
                "request not implemented by the simulated dish",
            ));
        };
        let response = match kind {
            RequestKind::GetStatus => Resp::DishGetStatus(self.status_at(truth, now)),
            RequestKind::GetObstructionMap => {
                Resp::DishGetObstructionMap(obstruction_map_to_wire(&self.map_at(truth, now)))
            }
            RequestKind::ClearObstructionMap => {
                self.clear(truth, now);
                Resp::DishClearObstructionMap(pb::DishClearObstructionMapResponse {})
            }
            RequestKind::GetLocation => {
                if self.config.location_denied {
                    return Err(tonic::Status::permission_denied(LOCATION_DENIED_MESSAGE));
                }
                let l = self.config.location;
                Resp::GetLocation(pb::GetLocationResponse {
                    lla: Some(pb::LlaPosition {
                        lat: l.lat_deg,
                        lon: l.lon_deg,
                        alt: l.alt_m,
                    }),
                    source: pb::PositionSource::Gps as i32,
                    sigma_m: l.sigma_m.unwrap_or(5.0),
                    ..Default::default()
                })
            }
            RequestKind::GetDeviceInfo => Resp::GetDeviceInfo(pb::GetDeviceInfoResponse {
                device_info: Some(device_info()),
            }),
        };
        Ok(pb::Response {
            id: request.id,
            status: Some(Default::default()),
            api_version: API_VERSION,
            response: Some(response),
        })
    }
}

/// Identity of the simulated dish (hardware and firmware of the A11 sample).
fn device_info() -> pb::DeviceInfo {
    pb::DeviceInfo {
        id: "ut-simulated-00000000".to_owned(),
        hardware_version: "rev3_proto2".to_owned(),
        software_version: "2025.04.08.cr53207".to_owned(),
        ..Default::default()
    }
}

/// PoP ping RTT for a serving satellite at `range_km` ([`BASE_LATENCY_MS`] + 4 x range / c).
pub fn pop_ping_latency_ms(range_km: f64) -> f64 {
    if range_km.is_finite() && range_km > 0.0 {
        BASE_LATENCY_MS + 4.0 * range_km / LIGHT_KM_PER_MS
    } else {
        BASE_LATENCY_MS
    }
}

/// Painted signal quality: 1 down to 40 degrees of elevation, falling linearly to 0.5 at the
/// map's 10-degree rim (an invented but monotone stand-in for B1's "lower = degraded").
fn snr_value(elevation_deg: f64) -> f32 {
    let t = ((elevation_deg - 10.0) / 30.0).clamp(0.0, 1.0);
    (0.5 + 0.5 * t) as f32
}

/// The simulated dish's clock: `start` plus real time elapsed times `scale`.
#[derive(Debug, Clone, Copy)]
struct SimClock {
    start: DateTime<Utc>,
    real_start: Instant,
    scale: f64,
}

impl SimClock {
    fn now(&self) -> DateTime<Utc> {
        let real = self.real_start.elapsed().as_secs_f64();
        self.start + ChronoDuration::nanoseconds((real * self.scale * 1e9) as i64)
    }
}

/// Why the simulated dish could not start or stop cleanly.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// A non-loopback address without [`SimConfig::allow_non_loopback`].
    #[error(
        "refusing to bind the simulated dish to non-loopback address {0} (set allow_non_loopback)"
    )]
    NotLoopback(SocketAddr),
    /// `time_scale` is not a positive finite number.
    #[error("time_scale must be positive and finite, got {0}")]
    BadTimeScale(f64),
    /// The socket could not be bound.
    #[error("cannot bind the simulated dish to {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The server failed while running.
    #[error("simulated dish server failed: {0}")]
    Serve(#[from] tonic::transport::Error),
    /// The server task panicked or was cancelled.
    #[error("simulated dish task ended abnormally: {0}")]
    Task(String),
}

struct SimService {
    state: Arc<Mutex<SimDish>>,
    truth: Arc<dyn SkyTruth>,
    clock: SimClock,
}

fn lock(state: &Mutex<SimDish>) -> MutexGuard<'_, SimDish> {
    state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[tonic::async_trait]
impl Device for SimService {
    async fn handle(
        &self,
        request: tonic::Request<pb::Request>,
    ) -> Result<tonic::Response<pb::Response>, tonic::Status> {
        let now = self.clock.now();
        let reply = lock(&self.state).handle(self.truth.as_ref(), now, request.get_ref())?;
        let mut response = tonic::Response::new(reply);
        let stamp = now.to_rfc3339_opts(SecondsFormat::Nanos, true);
        if let Ok(value) = stamp.parse() {
            response.metadata_mut().insert(DISH_TIME_METADATA, value);
        }
        Ok(response)
    }
}

/// A running simulated dish.
///
/// Dropping the handle stops the server too (its shutdown signal closes); [`SimHandle::shutdown`]
/// also waits for it to finish.
pub struct SimHandle {
    addr: SocketAddr,
    clock: SimClock,
    truth: Arc<dyn SkyTruth>,
    state: Arc<Mutex<SimDish>>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), tonic::transport::Error>>>,
}

impl std::fmt::Debug for SimHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimHandle")
            .field("addr", &self.addr)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl SimHandle {
    /// The bound address (the actual port when started on port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The dish's clock now.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// Dish time at start.
    pub fn started_at(&self) -> DateTime<Utc> {
        self.clock.start
    }

    /// The truth model it paints.
    pub fn truth(&self) -> &Arc<dyn SkyTruth> {
        &self.truth
    }

    /// Per-second serving satellites from the start to now (for evaluation).
    pub fn serving_so_far(&self) -> Vec<(DateTime<Utc>, Option<Serving>)> {
        serving_timeline(self.truth.as_ref(), self.clock.start, self.now())
    }

    /// True handover instants from the start to now (for evaluation).
    pub fn truth_handovers_so_far(&self) -> Vec<DateTime<Utc>> {
        truth_handovers(self.truth.as_ref(), self.clock.start, self.now())
    }

    /// The map as the dish holds it now (without going through gRPC).
    pub fn map_now(&self) -> ObstructionMap {
        let now = self.now();
        lock(&self.state).map_at(self.truth.as_ref(), now)
    }

    /// Stops the server and waits for it.
    pub async fn shutdown(mut self) -> Result<(), SimError> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.task.take() {
            Some(task) => match task.await {
                Ok(result) => Ok(result?),
                Err(e) => Err(SimError::Task(e.to_string())),
            },
            None => Ok(()),
        }
    }
}

/// Starts a simulated dish on `addr` (use `127.0.0.1:0` for a free port, or
/// [`SIM_DEFAULT_ADDR`]). Non-loopback addresses are refused unless
/// [`SimConfig::allow_non_loopback`] is set.
pub async fn serve(
    addr: SocketAddr,
    config: SimConfig,
    truth: Arc<dyn SkyTruth>,
) -> Result<SimHandle, SimError> {
    let scale = config.time_scale;
    if !(scale.is_finite() && scale > 0.0) {
        return Err(SimError::BadTimeScale(scale));
    }
    if !addr.ip().is_loopback() && !config.allow_non_loopback {
        return Err(SimError::NotLoopback(addr));
    }
    let bind_error = |source| SimError::Bind { addr, source };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(bind_error)?;
    let local = listener.local_addr().map_err(bind_error)?;
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    let clock = SimClock {
        start: config.start,
        real_start: Instant::now(),
        scale,
    };
    let state = Arc::new(Mutex::new(SimDish::new(config)));
    let service = SimService {
        state: Arc::clone(&state),
        truth: Arc::clone(&truth),
        clock,
    };
    let (tx, rx) = oneshot::channel::<()>();
    let server = tonic::transport::Server::builder()
        .add_service(DeviceServer::new(service))
        .serve_with_incoming_shutdown(incoming, async {
            let _ = rx.await;
        });
    let task = tokio::spawn(server);
    Ok(SimHandle {
        addr: local,
        clock,
        truth,
        state,
        shutdown: Some(tx),
        task: Some(task),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dish::map::NO_DATA;
    use crate::sky::SkyPosition;
    use chrono::TimeZone;

    fn t(s: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 5, 12, 10, 0, 12).unwrap() + ChronoDuration::seconds(s)
    }

    /// One satellite straight overhead moving north-east, then none after 10 s.
    struct Overhead;
    impl SkyTruth for Overhead {
        fn serving(&self, at: DateTime<Utc>) -> Option<Serving> {
            let s = (at - t(0)).as_seconds_f64();
            (0.0..10.0).contains(&s).then_some(Serving {
                norad_id: 7,
                position: SkyPosition {
                    azimuth_deg: 45.0,
                    elevation_deg: 80.0 - s,
                    range_km: 560.0,
                },
            })
        }
    }

    fn lit(map: &ObstructionMap) -> usize {
        map.snr().iter().filter(|&&v| v > 0.0).count()
    }

    #[test]
    fn painting_follows_the_truth_and_clearing_empties_the_map() {
        let mut dish = SimDish::new(SimConfig::new(t(0)));
        assert_eq!(lit(&dish.map_at(&Overhead, t(0))), 0);
        let m = dish.map_at(&Overhead, t(5));
        assert!(lit(&m) > 5, "{}", lit(&m));
        assert!(
            m.snr()
                .iter()
                .all(|&v| v == NO_DATA || (v > 0.0 && v <= 1.0))
        );
        let g = MapGeometry::earth();
        let expected = g
            .to_pixel(SkyDirection {
                azimuth_deg: 45.0,
                elevation_deg: 75.0,
            })
            .unwrap();
        assert!(m.get(expected).unwrap() > 0.0);
        dish.clear(&Overhead, t(5));
        assert_eq!(lit(&dish.map_at(&Overhead, t(5))), 0);
        assert!(dish.reset_alert(t(5)));
        assert!(!dish.reset_alert(t(5 + RESET_ALERT_S)));
        // Nothing is painted when no satellite serves.
        dish.clear(&Overhead, t(11));
        assert_eq!(lit(&dish.map_at(&Overhead, t(20))), 0);
    }

    #[test]
    fn the_status_reports_latency_from_the_slant_range() {
        let mut dish = SimDish::new(SimConfig::new(t(0)));
        let s = dish.status_at(&Overhead, t(1));
        let expected = 20.0 + 4.0 * 560.0 / 299.792_458;
        assert!((f64::from(s.pop_ping_latency_ms) - expected).abs() < 1e-3);
        assert!(s.alerts.unwrap().obstruction_map_reset);
        let none = dish.status_at(&Overhead, t(30));
        assert_eq!(none.pop_ping_drop_rate, 1.0);
        assert!(!none.alerts.unwrap().obstruction_map_reset);
    }

    #[test]
    fn location_is_answered_or_denied_and_unknown_requests_are_unimplemented() {
        let mut config = SimConfig::new(t(0));
        let mut dish = SimDish::new(config.clone());
        let ok = dish
            .handle(&Overhead, t(1), &RequestKind::GetLocation.to_request())
            .unwrap();
        assert!(matches!(ok.response, Some(Resp::GetLocation(_))));
        config.location_denied = true;
        let mut denied = SimDish::new(config);
        let err = denied
            .handle(&Overhead, t(1), &RequestKind::GetLocation.to_request())
            .unwrap_err();
        assert_eq!(err.code(), tonic::Code::PermissionDenied);
        assert_eq!(err.message(), LOCATION_DENIED_MESSAGE);
        let empty = denied
            .handle(&Overhead, t(1), &pb::Request::default())
            .unwrap_err();
        assert_eq!(empty.code(), tonic::Code::Unimplemented);
    }

    #[test]
    fn truth_handovers_are_the_seconds_where_the_serving_satellite_changes() {
        struct Alternating;
        impl SkyTruth for Alternating {
            fn serving(&self, at: DateTime<Utc>) -> Option<Serving> {
                let k = (at - t(0)).num_seconds().div_euclid(15);
                let id = match k {
                    0 | 1 => 1,
                    2 => return None,
                    _ => 2,
                };
                Some(Serving {
                    norad_id: id,
                    position: SkyPosition {
                        azimuth_deg: 0.0,
                        elevation_deg: 60.0,
                        range_km: 600.0,
                    },
                })
            }
        }
        assert_eq!(
            truth_handovers(&Alternating, t(0), t(90)),
            Vec::<DateTime<Utc>>::new()
        );
        struct Switching;
        impl SkyTruth for Switching {
            fn serving(&self, at: DateTime<Utc>) -> Option<Serving> {
                let k = (at - t(0)).num_seconds().div_euclid(15);
                Some(Serving {
                    norad_id: [1, 1, 2, 3][k.clamp(0, 3) as usize],
                    position: SkyPosition {
                        azimuth_deg: 0.0,
                        elevation_deg: 60.0,
                        range_km: 600.0,
                    },
                })
            }
        }
        assert_eq!(truth_handovers(&Switching, t(0), t(60)), vec![t(30), t(45)]);
        assert_eq!(serving_timeline(&Switching, t(0), t(2)).len(), 3);
    }
}

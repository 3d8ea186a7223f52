//! The Starlink dish as a source of handover observations: a gRPC client for its local API, the
//! obstruction-map geometry, a per-second track and handover detector, and a simulated dish
//! that speaks the same API.
//!
//! References are to sections of `../shared/reference/starlink-dish-and-orbits.md`.
//!
//! # Layout
//!
//! * [`proto`]: prost/tonic bindings generated at build time from the minimal schema in
//!   `proto/spacex_api/` (real field numbers, A2-A8). **Request and response oneof numbers
//!   differ** (A4): `get_status` (request 1004) is answered by `dish_get_status` (response
//!   2004); response 1004 is `get_device_info`; the map clear is 2017 in the request and 2015
//!   in the response. Unknown fields are skipped, so the trimmed schema reads a real dish.
//! * [`map`] (sans-I/O): [`ObstructionMap`], pixel <-> azimuth/elevation for FRAME_EARTH and
//!   FRAME_UT (B2), and beam painting.
//! * [`decode`] (sans-I/O): requests, and replies decoded into plain types ([`DishStatus`],
//!   [`DishLocation`], [`ObstructionMap`]) with precise [`DecodeError`]s.
//! * [`client`] (I/O): [`DishClient`], with a per-call timeout (2 s), bounded retries for
//!   transient failures, and [`DishError`].
//! * [`detector`] (sans-I/O): [`HandoverDetector`], fed `(instant, map)` observations.
//! * [`driver`] (I/O): [`run_detector`], which polls a [`DishClient`] every dish second, clears
//!   the map at slot boundaries and feeds the detector; supports a time-scaled simulator.
//! * [`sim`]: [`SimDish`] (sans-I/O state) and [`serve`] (tonic server), driven by a
//!   [`SkyTruth`]; [`synthetic`]: [`SyntheticSky`], a deterministic truth for tests;
//!   [`orbital_truth`]: [`OrbitalTruth`], the orbit model's serving satellite as the truth;
//!   [`drawn_truth`]: [`DrawnTruth`], the same with switches drawn at a site's rate.
//!
//! # A real dish
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use handover_predictor::dish::{
//!     DEFAULT_DISH_ADDR, DishClient, DishError, DishLocation, DriverConfig, run_detector,
//! };
//! let dish = DishClient::connect(DEFAULT_DISH_ADDR).await?;
//! // New firmware refuses get_location (A8): fall back to a configured position.
//! let position = match dish.location().await {
//!     Ok(position) => position,
//!     Err(DishError::PermissionDenied { .. }) => DishLocation::new(48.137, 11.575, 519.0),
//!     Err(e) => return Err(e.into()),
//! };
//! let config = DriverConfig {
//!     duration: Some(chrono::Duration::minutes(2)),
//!     ..DriverConfig::default()
//! };
//! let report = run_detector(&dish, config).await?;
//! println!("{position:?}: handovers at {:?}", report.log.handovers());
//! # Ok(()) }
//! ```

pub mod client;
pub mod decode;
pub mod detector;
pub mod drawn_truth;
pub mod driver;
pub mod map;
pub mod orbital_truth;
pub mod proto;
pub mod sim;
pub mod synthetic;

pub use crate::predict::{SWITCH_RATE_PRESETS, parse_switch_rate};
pub use client::{
    ClientConfig, DEFAULT_CALL_TIMEOUT, DEFAULT_DISH_ADDR, DISH_TIME_METADATA, DishClient,
    DishError,
};
pub use decode::{
    Alignment, DecodeError, DeviceIdentity, DishLocation, DishStatus, GpsStatus, ObstructionStats,
    RequestKind,
};
pub use detector::{
    BoundaryVerdict, DEFAULT_JUMP_THRESHOLD_PX, DetectionLog, DetectorConfig, HandoverDetector,
    Observation, PointKind, Score, TrackPoint, score_handovers,
};
pub use drawn_truth::{DrawnTruth, DrawnTruthError};
pub use driver::{
    ClockSource, DriverConfig, DriverError, DriverReport, run_detector, run_detector_with,
};
pub use map::{
    MapError, MapFrame, MapGeometry, ObstructionMap, Orientation, Pixel, PixelPoint, SkyDirection,
};
pub use orbital_truth::OrbitalTruth;
pub use sim::{
    SIM_DEFAULT_ADDR, SimConfig, SimDish, SimError, SimHandle, SkyTruth, serve, truth_handovers,
};
pub use synthetic::SyntheticSky;

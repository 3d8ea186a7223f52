//! Orbits: where the satellites are and which one serves the dish.
//!
//! - [`Catalogue`]: TLE catalogues loaded with the `sgp4` crate (reference D2, D3), with errors
//!   that name the file and line, and decayed objects skipped and counted.
//! - [`Observer`]: a WGS84 ground observer and the TEME -> Earth-fixed -> azimuth/elevation/range
//!   recipe (reference D4).
//! - [`ServingPolicy`] and [`serving_timeline`]: the serving satellite second by second, under
//!   Starlink's 15-s slot grid (reference C1, C3, C5) or StarryNet's delay-based policy (the
//!   paper's emulation, section III-B); [`serving_timeline_seeded`] continues it from a known
//!   serving satellite; [`handovers`] turns a timeline into handover instants.
//! - [`walker`]: a Walker-constellation TLE generator for the catalogues shipped in `traces/tle/`.
//!
//! Everything here is sans-I/O except [`Catalogue::load`] and [`walker::write_shipped`]: every
//! computation is handed its UTC instant.

mod catalogue;
mod geometry;
mod kepler;
mod serving;
pub mod walker;

pub use crate::sky::{Serving, SkyPosition};
pub use catalogue::{
    Catalogue, DECAYED_BELOW_KM, LineProblem, PropagationError, Satellite, Skipped,
    TLE_LINE_LENGTH, TleError, checksum,
};
pub use geometry::{
    EARTH_EQUATORIAL_RADIUS_KM, EARTH_FLATTENING, EARTH_ROTATION_RAD_PER_S, Observer,
    ObserverError, SPEED_OF_LIGHT_KM_PER_S, geodetic_to_ecef_km, gmst_rad, max_slant_range_km,
    propagation_delay_ms, teme_to_ecef,
};
pub(crate) use serving::reachable;
pub use serving::{
    DEFAULT_MAX_STALENESS_DAYS, DEFAULT_MIN_ALTITUDE_KM, DEFAULT_MIN_ELEVATION_DEG, DelayConfig,
    Search, ServingPolicy, StarlinkConfig, TimelineError, handovers, serving_timeline,
    serving_timeline_seeded, serving_timeline_seeded_with, serving_timeline_with,
};

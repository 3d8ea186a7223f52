//! Requests to the dish and the decoding of its replies into plain Rust types.
//!
//! Sans-I/O: these functions turn wire messages (from [`super::proto`]) into the crate's own
//! types and back, and say precisely what is wrong with a reply that cannot be used. The gRPC
//! client ([`super::DishClient`]) and the simulated dish ([`super::sim`]) are the only callers
//! that touch the network. References are to `../shared/reference/starlink-dish-and-orbits.md`.

use super::map::{MapError, MapFrame, ObstructionMap};
use super::proto::device::{self as pb, request::Request as Req, response::Response as Resp};
use chrono::{DateTime, Utc};
use std::fmt;

/// The requests this crate sends. Each maps to a Request oneof member and to the differently
/// numbered Response member that answers it (reference A3, A4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestKind {
    /// `get_status` (request 1004) -> `dish_get_status` (response 2004).
    GetStatus,
    /// `get_location` (1017) -> `get_location` (1017).
    GetLocation,
    /// `dish_get_obstruction_map` (2008) -> `dish_get_obstruction_map` (2008).
    GetObstructionMap,
    /// `dish_clear_obstruction_map` (2017) -> `dish_clear_obstruction_map` (2015).
    ClearObstructionMap,
    /// `get_device_info` (1008) -> `get_device_info` (1004).
    GetDeviceInfo,
}

impl RequestKind {
    /// The Request oneof member's name, as grpcurl spells it (reference A10).
    pub fn request_name(self) -> &'static str {
        match self {
            Self::GetStatus => "get_status",
            Self::GetLocation => "get_location",
            Self::GetObstructionMap => "dish_get_obstruction_map",
            Self::ClearObstructionMap => "dish_clear_obstruction_map",
            Self::GetDeviceInfo => "get_device_info",
        }
    }

    /// The Response oneof member that answers it (reference A4).
    pub fn response_name(self) -> &'static str {
        match self {
            Self::GetStatus => "dish_get_status",
            Self::GetLocation => "get_location",
            Self::GetObstructionMap => "dish_get_obstruction_map",
            Self::ClearObstructionMap => "dish_clear_obstruction_map",
            Self::GetDeviceInfo => "get_device_info",
        }
    }

    /// The wire request (empty submessage; `get_location` leaves `source` at AUTO).
    pub fn to_request(self) -> pb::Request {
        let request = match self {
            Self::GetStatus => Req::GetStatus(pb::GetStatusRequest {}),
            Self::GetLocation => Req::GetLocation(pb::GetLocationRequest::default()),
            Self::GetObstructionMap => {
                Req::DishGetObstructionMap(pb::DishGetObstructionMapRequest {})
            }
            Self::ClearObstructionMap => {
                Req::DishClearObstructionMap(pb::DishClearObstructionMapRequest {})
            }
            Self::GetDeviceInfo => Req::GetDeviceInfo(pb::GetDeviceInfoRequest {}),
        };
        pb::Request {
            request: Some(request),
            ..Default::default()
        }
    }

    /// Which kind a wire request is, or `None` when its oneof is empty or a member this schema
    /// lacks (prost skips unknown fields, so e.g. `get_history` arrives empty).
    pub fn of_request(request: &pb::Request) -> Option<Self> {
        Some(match request.request.as_ref()? {
            Req::GetStatus(_) => Self::GetStatus,
            Req::GetLocation(_) => Self::GetLocation,
            Req::DishGetObstructionMap(_) => Self::GetObstructionMap,
            Req::DishClearObstructionMap(_) => Self::ClearObstructionMap,
            Req::GetDeviceInfo(_) => Self::GetDeviceInfo,
        })
    }
}

impl fmt::Display for RequestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.request_name())
    }
}

/// Why a reply that arrived cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The `response` oneof is empty (or holds a member this schema does not know).
    #[error("the reply to {request} carries no known response member (expected {expected})")]
    Empty {
        /// What was asked.
        request: RequestKind,
        /// The member that should have answered.
        expected: &'static str,
    },
    /// The reply answers a different request.
    #[error("the reply to {request} is a {got} (expected {expected})")]
    WrongVariant {
        /// What was asked.
        request: RequestKind,
        /// The member that should have answered.
        expected: &'static str,
        /// The member that did.
        got: &'static str,
    },
    /// `Response.status` carries a non-zero application code (a real dish sends it empty).
    #[error("the dish reported status {code} for {request}: {message}")]
    Status {
        /// What was asked.
        request: RequestKind,
        /// `Status.code`.
        code: i32,
        /// `Status.message`.
        message: String,
    },
    /// The obstruction map is unusable.
    #[error("malformed obstruction map: {0}")]
    Map(#[from] MapError),
    /// The location reply has no `lla` position.
    #[error("the location reply has no lla position")]
    MissingPosition,
    /// The location is not a place on Earth.
    #[error("the location lat {lat}, lon {lon}, alt {alt} m is out of range")]
    BadPosition {
        /// Latitude, degrees.
        lat: f64,
        /// Longitude, degrees.
        lon: f64,
        /// Altitude, metres.
        alt: f64,
    },
}

/// The dish's position (reference A8): geodetic WGS84.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DishLocation {
    /// Latitude, degrees north, in [-90, 90].
    pub lat_deg: f64,
    /// Longitude, degrees east, in [-180, 180].
    pub lon_deg: f64,
    /// Altitude, metres.
    pub alt_m: f64,
    /// One-sigma horizontal uncertainty, metres, when reported.
    pub sigma_m: Option<f64>,
}

impl DishLocation {
    /// A configured position (what a caller falls back to when the dish denies `get_location`,
    /// reference A8).
    pub fn new(lat_deg: f64, lon_deg: f64, alt_m: f64) -> Self {
        Self {
            lat_deg,
            lon_deg,
            alt_m,
            sigma_m: None,
        }
    }
}

/// Alignment of the dish (reference A7 `alignment_stats`); FRAME_UT maps need it (B2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Alignment {
    /// Tilt from vertical, degrees.
    pub tilt_deg: f32,
    /// Boresight azimuth, degrees.
    pub boresight_azimuth_deg: f32,
    /// Boresight elevation, degrees.
    pub boresight_elevation_deg: f32,
    /// Desired boresight azimuth, degrees.
    pub desired_boresight_azimuth_deg: f32,
    /// Desired boresight elevation, degrees.
    pub desired_boresight_elevation_deg: f32,
    /// Whether the attitude filter has converged (`FILTER_CONVERGED` = 2).
    pub attitude_converged: bool,
    /// Attitude uncertainty, degrees.
    pub attitude_uncertainty_deg: f32,
}

/// GNSS receiver state (reference A7 `gps_stats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpsStatus {
    /// Whether the fix is valid.
    pub valid: bool,
    /// Satellites in the fix.
    pub satellites: u32,
}

/// Obstruction statistics (reference A7 `obstruction_stats`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ObstructionStats {
    /// Fraction of the sky obstructed.
    pub fraction_obstructed: f32,
    /// Whether the dish is obstructed right now.
    pub currently_obstructed: bool,
    /// Seconds of valid data behind the statistics.
    pub valid_s: f32,
}

/// The status fields this project uses (reference A7), decoded from `dish_get_status`.
///
/// Missing submessages are `None` / zero, never an error: firmware adds, renames and retires
/// fields (A12).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DishStatus {
    /// RTT dish -> PoP of the last sample, ms (1009).
    pub pop_ping_latency_ms: f32,
    /// Fraction of PoP pings dropped in the last 1-s sample (1003).
    pub pop_ping_drop_rate: f32,
    /// Actual downlink usage, bit/s (1007).
    pub downlink_throughput_bps: f32,
    /// Actual uplink usage, bit/s (1008).
    pub uplink_throughput_bps: f32,
    /// Time until a satellite is scheduled; negative = unknown (1002).
    pub seconds_to_first_nonempty_slot: f32,
    /// Obstruction statistics (1004).
    pub obstruction: ObstructionStats,
    /// `alerts.obstruction_map_reset` (1005 / 19): true right after a map clear (A7).
    pub obstruction_map_reset: bool,
    /// Alignment (1027), when reported.
    pub alignment: Option<Alignment>,
    /// GNSS (1015), when reported.
    pub gps: Option<GpsStatus>,
    /// Seconds since boot (2 / 1), when reported.
    pub uptime_s: Option<u64>,
    /// Firmware version (1 / 3), when reported.
    pub software_version: Option<String>,
    /// `Response.api_version` (A4).
    pub api_version: u64,
    /// When the dish says it answered; only the simulated dish reports it
    /// ([`super::DISH_TIME_METADATA`]).
    pub dish_time: Option<DateTime<Utc>>,
}

/// Identity of the device (reference A7 `device_info`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeviceIdentity {
    /// Device id.
    pub id: String,
    /// Hardware revision.
    pub hardware_version: String,
    /// Firmware version.
    pub software_version: String,
}

fn variant_name(response: &Resp) -> &'static str {
    match response {
        Resp::GetDeviceInfo(_) => "get_device_info",
        Resp::GetLocation(_) => "get_location",
        Resp::DishGetStatus(_) => "dish_get_status",
        Resp::DishGetObstructionMap(_) => "dish_get_obstruction_map",
        Resp::DishClearObstructionMap(_) => "dish_clear_obstruction_map",
    }
}

/// Checks the application status and takes the oneof member out of a reply.
fn member(request: RequestKind, response: pb::Response) -> Result<Resp, DecodeError> {
    if let Some(status) = &response.status
        && status.code != 0
    {
        return Err(DecodeError::Status {
            request,
            code: status.code,
            message: status.message.clone(),
        });
    }
    response.response.ok_or(DecodeError::Empty {
        request,
        expected: request.response_name(),
    })
}

fn wrong(request: RequestKind, got: &Resp) -> DecodeError {
    DecodeError::WrongVariant {
        request,
        expected: request.response_name(),
        got: variant_name(got),
    }
}

/// Decodes the reply to `dish_get_obstruction_map` (reference A6), validating the map
/// ([`ObstructionMap::new`]).
pub fn decode_obstruction_map(response: pb::Response) -> Result<ObstructionMap, DecodeError> {
    let request = RequestKind::GetObstructionMap;
    match member(request, response)? {
        Resp::DishGetObstructionMap(map) => Ok(obstruction_map_from_wire(map)?),
        other => Err(wrong(request, &other)),
    }
}

/// Validates and converts the wire map (reference A6).
pub fn obstruction_map_from_wire(
    map: pb::DishGetObstructionMapResponse,
) -> Result<ObstructionMap, MapError> {
    let mut decoded = ObstructionMap::new(
        u64::from(map.num_rows),
        u64::from(map.num_cols),
        map.snr,
        map.max_theta_deg,
        MapFrame::from_wire(map.map_reference_frame),
    )?;
    decoded.min_elevation_deg = if map.min_elevation_deg.is_finite() {
        map.min_elevation_deg
    } else {
        0.0
    };
    Ok(decoded)
}

/// The wire form of a map (what the simulated dish sends).
pub fn obstruction_map_to_wire(map: &ObstructionMap) -> pb::DishGetObstructionMapResponse {
    pb::DishGetObstructionMapResponse {
        num_rows: map.rows() as u32,
        num_cols: map.cols() as u32,
        snr: map.snr().to_vec(),
        min_elevation_deg: map.min_elevation_deg,
        max_theta_deg: map.max_theta_deg,
        map_reference_frame: map.frame.to_wire(),
    }
}

/// Decodes the reply to `get_status` (answered by `dish_get_status`, reference A4/A7).
pub fn decode_status(response: pb::Response) -> Result<DishStatus, DecodeError> {
    let request = RequestKind::GetStatus;
    let api_version = response.api_version;
    let status = match member(request, response)? {
        Resp::DishGetStatus(status) => status,
        other => return Err(wrong(request, &other)),
    };
    let obstruction = status
        .obstruction_stats
        .map(|o| ObstructionStats {
            fraction_obstructed: o.fraction_obstructed,
            currently_obstructed: o.currently_obstructed,
            valid_s: o.valid_s,
        })
        .unwrap_or_default();
    let alignment = status.alignment_stats.map(|a| Alignment {
        tilt_deg: a.tilt_angle_deg,
        boresight_azimuth_deg: a.boresight_azimuth_deg,
        boresight_elevation_deg: a.boresight_elevation_deg,
        desired_boresight_azimuth_deg: a.desired_boresight_azimuth_deg,
        desired_boresight_elevation_deg: a.desired_boresight_elevation_deg,
        attitude_converged: a.attitude_estimation_state
            == pb::alignment_stats::AttitudeEstimationState::FilterConverged as i32,
        attitude_uncertainty_deg: a.attitude_uncertainty_deg,
    });
    Ok(DishStatus {
        pop_ping_latency_ms: status.pop_ping_latency_ms,
        pop_ping_drop_rate: status.pop_ping_drop_rate,
        downlink_throughput_bps: status.downlink_throughput_bps,
        uplink_throughput_bps: status.uplink_throughput_bps,
        seconds_to_first_nonempty_slot: status.seconds_to_first_nonempty_slot,
        obstruction,
        obstruction_map_reset: status.alerts.is_some_and(|a| a.obstruction_map_reset),
        alignment,
        gps: status.gps_stats.map(|g| GpsStatus {
            valid: g.gps_valid,
            satellites: g.gps_sats,
        }),
        uptime_s: status.device_state.map(|d| d.uptime_s),
        software_version: status.device_info.map(|d| d.software_version),
        api_version,
        dish_time: None,
    })
}

/// Decodes the reply to `get_location` (reference A8).
pub fn decode_location(response: pb::Response) -> Result<DishLocation, DecodeError> {
    let request = RequestKind::GetLocation;
    let location = match member(request, response)? {
        Resp::GetLocation(location) => location,
        other => return Err(wrong(request, &other)),
    };
    let lla = location.lla.ok_or(DecodeError::MissingPosition)?;
    let (lat, lon, alt) = (lla.lat, lla.lon, lla.alt);
    let plausible = lat.is_finite()
        && lon.is_finite()
        && alt.is_finite()
        && (-90.0..=90.0).contains(&lat)
        && (-180.0..=180.0).contains(&lon)
        && (-1.0e3..=1.0e5).contains(&alt);
    if !plausible {
        return Err(DecodeError::BadPosition { lat, lon, alt });
    }
    Ok(DishLocation {
        lat_deg: lat,
        lon_deg: lon,
        alt_m: alt,
        sigma_m: (location.sigma_m.is_finite() && location.sigma_m > 0.0)
            .then_some(location.sigma_m),
    })
}

/// Decodes the (empty) reply to `dish_clear_obstruction_map` (response member 2015, A4).
pub fn decode_clear(response: pb::Response) -> Result<(), DecodeError> {
    let request = RequestKind::ClearObstructionMap;
    match member(request, response)? {
        Resp::DishClearObstructionMap(_) => Ok(()),
        other => Err(wrong(request, &other)),
    }
}

/// Decodes the reply to `get_device_info` (response member 1004, A4).
pub fn decode_device_info(response: pb::Response) -> Result<DeviceIdentity, DecodeError> {
    let request = RequestKind::GetDeviceInfo;
    match member(request, response)? {
        Resp::GetDeviceInfo(info) => {
            let info = info.device_info.unwrap_or_default();
            Ok(DeviceIdentity {
                id: info.id,
                hardware_version: info.hardware_version,
                software_version: info.software_version,
            })
        }
        other => Err(wrong(request, &other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn requests_encode_to_the_bytes_in_the_reference() {
        // Reference A5: pre-computed wire bytes for each empty request.
        let bytes = |kind: RequestKind| kind.to_request().encode_to_vec();
        assert_eq!(bytes(RequestKind::GetStatus), [0xe2, 0x3e, 0x00]);
        assert_eq!(bytes(RequestKind::GetDeviceInfo), [0x82, 0x3f, 0x00]);
        assert_eq!(bytes(RequestKind::GetLocation), [0xca, 0x3f, 0x00]);
        assert_eq!(bytes(RequestKind::GetObstructionMap), [0xc2, 0x7d, 0x00]);
        assert_eq!(bytes(RequestKind::ClearObstructionMap), [0x8a, 0x7e, 0x00]);
        let gps = pb::Request {
            request: Some(Req::GetLocation(pb::GetLocationRequest {
                source: pb::PositionSource::Gps as i32,
            })),
            ..Default::default()
        };
        assert_eq!(gps.encode_to_vec(), [0xca, 0x3f, 0x02, 0x08, 0x04]);
    }

    #[test]
    fn response_members_use_the_response_numbers_not_the_request_numbers() {
        // Reference A5: response keys.
        let key = |r: Resp| {
            pb::Response {
                response: Some(r),
                ..Default::default()
            }
            .encode_to_vec()[..2]
                .to_vec()
        };
        assert_eq!(key(Resp::GetDeviceInfo(Default::default())), [0xe2, 0x3e]);
        assert_eq!(key(Resp::GetLocation(Default::default())), [0xca, 0x3f]);
        assert_eq!(key(Resp::DishGetStatus(Default::default())), [0xa2, 0x7d]);
        assert_eq!(
            key(Resp::DishGetObstructionMap(Default::default())),
            [0xc2, 0x7d]
        );
        assert_eq!(
            key(Resp::DishClearObstructionMap(Default::default())),
            [0xfa, 0x7d]
        );
    }

    #[test]
    fn a_full_map_has_the_field_keys_and_length_of_the_reference() {
        // Reference A5: num_rows 08, num_cols 10, snr 1a with length e4 d8 03 (60516 bytes),
        // max_theta_deg 2d, map_reference_frame 30.
        let map = pb::DishGetObstructionMapResponse {
            num_rows: 123,
            num_cols: 123,
            snr: vec![-1.0; 123 * 123],
            min_elevation_deg: 10.0,
            max_theta_deg: 80.0,
            map_reference_frame: 1,
        };
        let bytes = map.encode_to_vec();
        assert_eq!(&bytes[..4], [0x08, 123, 0x10, 123]);
        assert_eq!(&bytes[4..8], [0x1a, 0xe4, 0xd8, 0x03]);
        let tail = &bytes[8 + 60516..];
        assert_eq!(tail[0], 0x25);
        assert_eq!(tail[5], 0x2d);
        assert_eq!(&tail[10..], [0x30, 0x01]);
    }

    #[test]
    fn unknown_fields_in_a_reply_are_skipped() {
        // A status reply with an extra field 1046 (phy_rx_beam_snr_avg, A12) and a real one.
        let mut bytes = pb::Response {
            api_version: 31,
            response: Some(Resp::DishGetStatus(pb::DishGetStatusResponse {
                pop_ping_latency_ms: 27.9,
                ..Default::default()
            })),
            ..Default::default()
        }
        .encode_to_vec();
        // Field 99 (varint 5), unknown at the top level.
        bytes.extend_from_slice(&[0x98, 0x06, 0x05]);
        let decoded = pb::Response::decode(bytes.as_slice()).unwrap();
        let status = decode_status(decoded).unwrap();
        assert_eq!(status.pop_ping_latency_ms, 27.9);
        assert_eq!(status.api_version, 31);
    }

    #[test]
    fn a_reply_of_the_wrong_kind_is_a_clear_error() {
        let reply = pb::Response {
            response: Some(Resp::DishGetStatus(Default::default())),
            ..Default::default()
        };
        let err = decode_obstruction_map(reply).unwrap_err();
        assert_eq!(
            err,
            DecodeError::WrongVariant {
                request: RequestKind::GetObstructionMap,
                expected: "dish_get_obstruction_map",
                got: "dish_get_status",
            }
        );
        assert_eq!(
            err.to_string(),
            "the reply to dish_get_obstruction_map is a dish_get_status (expected dish_get_obstruction_map)"
        );
        let empty = decode_clear(pb::Response::default()).unwrap_err();
        assert!(matches!(empty, DecodeError::Empty { .. }));
    }

    #[test]
    fn a_map_whose_snr_length_is_not_rows_times_cols_is_rejected() {
        let reply = pb::Response {
            response: Some(Resp::DishGetObstructionMap(
                pb::DishGetObstructionMapResponse {
                    num_rows: 123,
                    num_cols: 123,
                    snr: vec![1.0; 100],
                    ..Default::default()
                },
            )),
            ..Default::default()
        };
        let err = decode_obstruction_map(reply).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed obstruction map: snr has 100 values but the map announces 123 x 123 = 15129"
        );
    }

    #[test]
    fn a_non_zero_application_status_is_reported_with_its_message() {
        let reply = pb::Response {
            status: Some(super::super::proto::status::Status {
                code: 7,
                message: "nope".into(),
            }),
            ..Default::default()
        };
        assert_eq!(
            decode_location(reply).unwrap_err(),
            DecodeError::Status {
                request: RequestKind::GetLocation,
                code: 7,
                message: "nope".into()
            }
        );
    }

    #[test]
    fn locations_outside_the_earth_are_rejected_and_missing_ones_reported() {
        let reply = |lla: Option<pb::LlaPosition>| pb::Response {
            response: Some(Resp::GetLocation(pb::GetLocationResponse {
                lla,
                ..Default::default()
            })),
            ..Default::default()
        };
        assert_eq!(
            decode_location(reply(None)),
            Err(DecodeError::MissingPosition)
        );
        let bad = pb::LlaPosition {
            lat: 91.0,
            lon: 0.0,
            alt: 0.0,
        };
        assert!(matches!(
            decode_location(reply(Some(bad))),
            Err(DecodeError::BadPosition { .. })
        ));
        let ok = pb::LlaPosition {
            lat: 48.1,
            lon: 11.6,
            alt: 69.07,
        };
        assert_eq!(
            decode_location(reply(Some(ok))),
            Ok(DishLocation::new(48.1, 11.6, 69.07))
        );
    }
}

//! The async driver of the [`HandoverDetector`]: polls a [`DishClient`] once per dish second,
//! clears the map at every slot boundary, and feeds the detector.
//!
//! This is the I/O edge (tokio timers, gRPC). The detector it drives is sans-I/O.
//!
//! # Dish time and `time_scale`
//!
//! The simulated dish's clock may run `time_scale` times faster than real time, so a 10-minute
//! scenario can be checked in seconds. The driver then polls every `1 / time_scale` real seconds,
//! so that each poll is one dish second.
//!
//! Which instant a map shows is taken, in order of preference, from:
//! 1. the dish's own report: the simulated dish stamps every reply with its clock in the gRPC
//!    metadata [`super::DISH_TIME_METADATA`] (a real dish does not). The driver labels the map
//!    with that instant and re-anchors its clock on it, so it cannot drift from the simulator;
//! 2. otherwise its own scaled clock, anchored at the local UTC clock when the run starts and
//!    advanced by tokio's monotonic clock times `time_scale`. With a real dish and a time scale
//!    of one, that is simply the local, NTP-disciplined UTC clock, and slot boundaries fall at
//!    UTC seconds 12, 27, 42, 57 (reference C1).
//!
//! Polls are aimed at whole dish seconds. After each poll whose instant lies in a slot not yet
//! cleared, the map is cleared (reference B3: reset at each slot start), so the next poll sees
//! only the new slot's track. A dish that does not implement the clear (old firmware, reference
//! A12) is still usable: the detector falls back to new-pixels-since-last-poll.

use super::client::{DishClient, DishError};
use super::detector::{DetectionLog, DetectorConfig, HandoverDetector, Observation};
use super::map::{MapFrame, MapGeometry, ObstructionMap};
use crate::sky::slot_start;
use chrono::{DateTime, Duration as ChronoDuration, DurationRound, Utc};
use std::time::Duration;
use tokio::time::Instant;

/// Consecutive failed polls after which the driver gives up (a dish that has not answered for
/// ten seconds is gone, not slow).
pub const DEFAULT_MAX_CONSECUTIVE_FAILURES: u32 = 10;

/// Settings of a detector run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriverConfig {
    /// How many times faster than real time the dish's clock runs (1 for a real dish).
    pub time_scale: f64,
    /// How long to run, in dish time; `None` runs until the future is dropped.
    pub duration: Option<ChronoDuration>,
    /// Clear the map at every slot boundary (reference B3).
    pub clear_each_slot: bool,
    /// Consecutive transient or malformed polls tolerated before the run fails.
    pub max_consecutive_failures: u32,
    /// Pick the pixel -> sky geometry from the map's reference frame (FRAME_UT with the
    /// alignment from `get_status`, otherwise FRAME_EARTH, reference B2). Turn off to keep a
    /// calibrated `detector.geometry`.
    pub auto_geometry: bool,
    /// The detector's settings.
    pub detector: DetectorConfig,
}

impl Default for DriverConfig {
    fn default() -> Self {
        Self {
            time_scale: 1.0,
            duration: None,
            clear_each_slot: true,
            max_consecutive_failures: DEFAULT_MAX_CONSECUTIVE_FAILURES,
            auto_geometry: true,
            detector: DetectorConfig::default(),
        }
    }
}

/// Where the run's instants came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// The dish reported its clock ([`super::DISH_TIME_METADATA`]; the simulated dish).
    Reported,
    /// The driver's own scaled clock, anchored at the local UTC clock.
    Local,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    /// `time_scale` is not a positive finite number.
    #[error("time_scale must be positive and finite, got {0}")]
    BadTimeScale(f64),
    /// The dish failed in a way the run cannot continue from (unreachable at start, too many
    /// failed polls in a row, permission denied, unsupported map).
    #[error(transparent)]
    Dish(#[from] DishError),
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverReport {
    /// Track and boundary decisions.
    pub log: DetectionLog,
    /// Dish time at the start.
    pub started_at: DateTime<Utc>,
    /// Dish time of the last observation.
    pub ended_at: DateTime<Utc>,
    /// Where instants came from.
    pub clock: ClockSource,
    /// Maps polled successfully.
    pub polls: u32,
    /// Polls that failed (transient or malformed) and were skipped.
    pub failed_polls: u32,
    /// Successful clears.
    pub clears: u32,
    /// Clears that failed and were retried at the next poll.
    pub failed_clears: u32,
    /// False when the dish answered the clear with `Unimplemented`.
    pub clear_supported: bool,
}

/// The driver's estimate of the dish's clock.
#[derive(Debug, Clone, Copy)]
struct DishClock {
    anchor_dish: DateTime<Utc>,
    anchor_real: Instant,
    scale: f64,
}

impl DishClock {
    fn at(&self, real: Instant) -> DateTime<Utc> {
        let real_s = real
            .saturating_duration_since(self.anchor_real)
            .as_secs_f64();
        self.anchor_dish + seconds(real_s * self.scale)
    }

    fn real_for(&self, dish: DateTime<Utc>) -> Instant {
        let dish_s = (dish - self.anchor_dish).as_seconds_f64().max(0.0);
        self.anchor_real + Duration::from_secs_f64(dish_s / self.scale)
    }
}

fn seconds(s: f64) -> ChronoDuration {
    ChronoDuration::nanoseconds((s * 1e9) as i64)
}

/// Runs the detector against a dish until `config.duration` of dish time has passed.
pub async fn run_detector(
    client: &DishClient,
    config: DriverConfig,
) -> Result<DriverReport, DriverError> {
    run_detector_with(client, config, |_| {}).await
}

/// Like [`run_detector`], calling `on_observation` with every observation as it happens (for
/// live output; the report still collects everything).
pub async fn run_detector_with(
    client: &DishClient,
    config: DriverConfig,
    mut on_observation: impl FnMut(&Observation),
) -> Result<DriverReport, DriverError> {
    let scale = config.time_scale;
    if !(scale.is_finite() && scale > 0.0) {
        return Err(DriverError::BadTimeScale(scale));
    }
    // Anchor the clock (and fail early if the dish is unreachable).
    let status = client.status().await?;
    let (anchor_dish, source) = match status.dish_time {
        Some(t) => (t, ClockSource::Reported),
        None => (Utc::now(), ClockSource::Local),
    };
    let mut clock = DishClock {
        anchor_dish,
        anchor_real: Instant::now(),
        scale,
    };
    let alignment = status.alignment;
    let end = config.duration.map(|d| anchor_dish + d);
    let mut detector = HandoverDetector::new(config.detector);
    let mut frame: Option<MapFrame> = None;
    let mut report = DriverReport {
        log: DetectionLog::default(),
        started_at: anchor_dish,
        ended_at: anchor_dish,
        clock: source,
        polls: 0,
        failed_polls: 0,
        clears: 0,
        failed_clears: 0,
        clear_supported: config.clear_each_slot,
    };
    let mut cleared_slot = None;
    if config.clear_each_slot {
        clear(client, &mut report).await?;
        cleared_slot = Some(slot_start(anchor_dish));
    }
    let mut consecutive_failures = 0u32;
    loop {
        let now = clock.at(Instant::now());
        let next = now
            .duration_trunc(ChronoDuration::seconds(1))
            .unwrap_or(now)
            + ChronoDuration::seconds(1);
        if end.is_some_and(|end| next > end) {
            break;
        }
        tokio::time::sleep_until(clock.real_for(next)).await;
        let map: ObstructionMap = match client.obstruction_map().await {
            Ok(map) => map,
            Err(e) => {
                report.failed_polls += 1;
                consecutive_failures += 1;
                let recoverable = e.is_transient() || matches!(e, DishError::Malformed { .. });
                if !recoverable || consecutive_failures >= config.max_consecutive_failures {
                    return Err(e.into());
                }
                continue;
            }
        };
        consecutive_failures = 0;
        report.polls += 1;
        let received = Instant::now();
        let at = match map.dish_time {
            Some(t) => {
                clock.anchor_dish = t;
                clock.anchor_real = received;
                t
            }
            None => clock.at(received),
        };
        if config.auto_geometry && frame != Some(map.frame) {
            frame = Some(map.frame);
            detector.set_geometry(geometry_for(&map, alignment));
        }
        let observation = detector.observe(at, &map);
        report.log.record(&observation);
        report.ended_at = at;
        on_observation(&observation);

        let slot = slot_start(at);
        if report.clear_supported
            && cleared_slot.is_none_or(|c| slot > c)
            && clear(client, &mut report).await?
        {
            cleared_slot = Some(slot);
        }
    }
    Ok(report)
}

/// Clears the map; `Ok(true)` when cleared, `Ok(false)` when it failed transiently or the dish
/// does not support clearing (then `clear_supported` is turned off).
async fn clear(client: &DishClient, report: &mut DriverReport) -> Result<bool, DriverError> {
    match client.clear_obstruction_map().await {
        Ok(()) => {
            report.clears += 1;
            Ok(true)
        }
        Err(DishError::Unsupported { .. }) => {
            report.clear_supported = false;
            Ok(false)
        }
        Err(e) if e.is_transient() || matches!(e, DishError::Malformed { .. }) => {
            report.failed_clears += 1;
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}

/// FRAME_UT needs the dish's alignment (reference B2); without it, or for FRAME_EARTH and
/// unknown frames, the researchers' FRAME_EARTH geometry is used.
fn geometry_for(map: &ObstructionMap, alignment: Option<super::Alignment>) -> MapGeometry {
    let base = match (map.frame, alignment) {
        (MapFrame::Ut, Some(a)) => {
            MapGeometry::ut(f64::from(a.tilt_deg), f64::from(a.boresight_azimuth_deg))
        }
        _ => MapGeometry::earth(),
    };
    base.fitted_to(map)
}

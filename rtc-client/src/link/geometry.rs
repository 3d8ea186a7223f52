//! One-way delay derived from orbital geometry.
//!
//! A Starlink packet crosses a bent pipe: dish -> serving satellite -> ground station, then a
//! terrestrial path to the point of presence and the peer (paper-bbr3-starlink section II-B and
//! appendix A-A decompose the path the same way: user link, optional ISLs, feeder link). The
//! propagation part is `(user slant range + gateway slant range) / c`; the terrestrial part is a
//! fixed delay given by the scenario. The slant ranges come from `handover-predictor`'s orbit
//! model: the serving timeline gives the dish-to-satellite range each second, and the same
//! satellite seen from the ground station gives the feeder range.
//!
//! The result is a per-second [`DelaySeries`] read with linear interpolation (geometry changes
//! smoothly; a satellite moves about 7.5 km/s, so the range changes by at most a few km per
//! second), with jumps at handovers where the serving satellite changes.

use super::LinkConfigError;
use super::series::{DelaySeries, Interpolation, ONE_SECOND, SeriesEnd};
use super::time::duration_nanos;
use chrono::{DateTime, Duration as ChronoDuration, Utc};
use handover_predictor::orbit::{Catalogue, Observer, propagation_delay_ms};
use handover_predictor::sky::Serving;
use std::time::Duration;

/// Minimum elevation at which a ground station can use a satellite, degrees: 25, the same mask
/// as user terminals (reference C3; gateways are not documented to go lower).
pub const GATEWAY_MIN_ELEVATION_DEG: f64 = 25.0;

/// The one-way delay of a bent pipe: propagation over the user and feeder slant ranges plus a
/// fixed terrestrial part.
pub fn bent_pipe_delay(
    user_range_km: f64,
    gateway_range_km: f64,
    terrestrial: Duration,
) -> Duration {
    let ms = propagation_delay_ms(user_range_km.max(0.0))
        + propagation_delay_ms(gateway_range_km.max(0.0));
    Duration::from_nanos((ms * 1e6).round() as u64).saturating_add(terrestrial)
}

/// A delay series from per-step slant ranges `(user_km, gateway_km)` (see [`bent_pipe_delay`]),
/// read with linear interpolation.
pub fn delay_series_from_ranges(
    step: Duration,
    ranges_km: &[(f64, f64)],
    terrestrial: Duration,
    end: SeriesEnd,
) -> Result<DelaySeries, LinkConfigError> {
    for (i, &(u, g)) in ranges_km.iter().enumerate() {
        if !(u.is_finite() && g.is_finite() && u >= 0.0 && g >= 0.0) {
            return Err(LinkConfigError::Series(format!(
                "slant ranges at step {i} ({u} km, {g} km) are not finite non-negative numbers"
            )));
        }
    }
    DelaySeries::from_nanos(
        step,
        ranges_km
            .iter()
            .map(|&(u, g)| duration_nanos(bent_pipe_delay(u, g, terrestrial)))
            .collect(),
        end,
        Interpolation::Linear,
    )
}

/// A geometry-derived delay series and what could not be computed.
#[derive(Debug, Clone, PartialEq)]
pub struct GeometryDelay {
    /// One sample per second of the timeline, linear interpolation, held after the end.
    pub series: DelaySeries,
    /// Seconds (indices into the timeline) with no serving satellite, or one the catalogue
    /// could not propagate: they repeat the nearest computed second. A scenario usually turns
    /// them into outages.
    pub unserved: Vec<usize>,
    /// Seconds at which the ground station sees the serving satellite below
    /// [`GATEWAY_MIN_ELEVATION_DEG`]: a real path would need an inter-satellite link there; the
    /// series still uses the straight feeder range.
    pub gateway_hidden: Vec<usize>,
}

/// Why a geometry delay could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GeometryError {
    /// The timeline has no served second at all.
    #[error("the serving timeline has no served second: no geometry to derive a delay from")]
    NoServedSecond,
    /// The series could not be built.
    #[error(transparent)]
    Series(#[from] LinkConfigError),
}

/// The one-way delay, second by second, for a serving `timeline` starting at `start` (one entry
/// per second, as `handover_predictor::orbit::serving_timeline` returns it), with the feeder leg
/// to `gateway` and a fixed `terrestrial` part.
pub fn geometry_delay(
    catalogue: &Catalogue,
    gateway: &Observer,
    timeline: &[Option<Serving>],
    start: DateTime<Utc>,
    terrestrial: Duration,
) -> Result<GeometryDelay, GeometryError> {
    let mut ranges: Vec<Option<(f64, f64)>> = Vec::with_capacity(timeline.len());
    let mut gateway_hidden = Vec::new();
    for (i, entry) in timeline.iter().enumerate() {
        let at = start + ChronoDuration::seconds(i as i64);
        let range =
            entry.and_then(
                |serving| match catalogue.sky_position(serving.norad_id, gateway, at) {
                    Some(Ok(sky)) => {
                        if sky.elevation_deg < GATEWAY_MIN_ELEVATION_DEG {
                            gateway_hidden.push(i);
                        }
                        Some((serving.position.range_km, sky.range_km))
                    }
                    _ => None,
                },
            );
        ranges.push(range);
    }
    let Some(first) = ranges.iter().flatten().next().copied() else {
        return Err(GeometryError::NoServedSecond);
    };
    let mut unserved = Vec::new();
    let mut filled = Vec::with_capacity(ranges.len());
    let mut last = first;
    for (i, r) in ranges.iter().enumerate() {
        match r {
            Some(r) => last = *r,
            None => unserved.push(i),
        }
        filled.push(last);
    }
    let series = delay_series_from_ranges(ONE_SECOND, &filled, terrestrial, SeriesEnd::Hold)?;
    Ok(GeometryDelay {
        series,
        unserved,
        gateway_hidden,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Time;

    #[test]
    fn a_bent_pipe_adds_both_legs_and_the_terrestrial_part() {
        // 550 km + 1000 km at c = 299 792.458 km/s is 5.170 243 ms.
        let d = bent_pipe_delay(550.0, 1000.0, Duration::from_millis(10));
        assert_eq!(d, Duration::from_nanos(15_170_243));
    }

    #[test]
    fn range_series_interpolate_linearly_between_seconds() {
        let s = delay_series_from_ranges(
            ONE_SECOND,
            &[(0.0, 0.0), (299_792.458, 0.0)],
            Duration::ZERO,
            SeriesEnd::Hold,
        )
        .unwrap();
        assert_eq!(s.at(Time::from_millis(500)), Duration::from_millis(500));
        assert!(
            delay_series_from_ranges(
                ONE_SECOND,
                &[(f64::NAN, 0.0)],
                Duration::ZERO,
                SeriesEnd::Hold
            )
            .is_err()
        );
    }
}

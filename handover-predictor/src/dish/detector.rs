//! The obstruction-map handover detector: a sans-I/O core fed `(instant, map)` observations.
//!
//! The technique (reference B3-B5 in `../shared/reference/starlink-dish-and-orbits.md`, and the
//! detector of Gottipati & Qiu's "Dynamic Pacing" prototype, `agottipati9/AlphaRTC:
//! scripts/log_handovers.py`, summarised in `../shared/reference/peers-and-code-style.md` A6 and
//! cited by the paper's section III-B/III-D as its per-second handover trace):
//!
//! 1. Poll the map once per (dish) second and clear it at every slot boundary (B3). The clearing
//!    is the driver's job ([`super::driver`]); this core only sees maps.
//! 2. Binarise (`snr > 0`, SatInView's rule, B3) and take the pixels lit since the previous
//!    poll (XOR with the previous map, B4). When pixels that were lit went dark the map was
//!    cleared in between, and every lit pixel is new.
//! 3. Track the centroid of the new pixels, one point per second (B4 recommends the centroid
//!    over the tools' "last pixel of a row-major scan"). With no new pixels the last position
//!    is held.
//! 4. A handover is a jump of the first point of a slot from the previous slot's last point by
//!    more than [`DEFAULT_JUMP_THRESHOLD_PX`] = 5 px (the AlphaRTC detector's threshold; B5:
//!    "a jump >> expected motion at a boundary"). A satellite moves about 0.5-1 px/s (B4), so
//!    the same satellite continues within a few pixels.
//!
//! Every observation is labelled by the instant the map shows and describes the interval since
//! the previous observation. An interval that contains a slot boundary may mix two satellites'
//! tracks; its point is kept in the track as [`PointKind::Straddling`] but is never used to
//! decide a handover. Handovers are dated at the slot boundary (reference C1), not at the
//! moment they were noticed.

use super::map::{MapGeometry, ObstructionMap, PixelPoint, SkyDirection};
use crate::sky::{SLOT_LENGTH_S, slot_start};
use chrono::{DateTime, Duration as ChronoDuration, Utc};

/// Jump, in pixels, above which the first point of a slot counts as a new satellite: the
/// threshold of the Dynamic Pacing prototype's detector (`log_handovers.py`, summarised in
/// `peers-and-code-style.md` A6). At 80/62 degrees per pixel that is about 6.5 degrees, well
/// above the 0.5-1 px/s a serving satellite moves (reference B4).
pub const DEFAULT_JUMP_THRESHOLD_PX: f64 = 5.0;

/// Binarisation threshold: a pixel is lit when `snr > 0` (SatInView's rule, reference B3;
/// LEOViz keeps only exact 1.0).
pub const DEFAULT_LIT_THRESHOLD: f32 = 0.0;

/// Settings of the [`HandoverDetector`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DetectorConfig {
    /// Jump (px) between slots above which a handover is declared.
    pub jump_threshold_px: f64,
    /// A pixel is lit when its value is above this.
    pub lit_threshold: f32,
    /// Pixel -> sky conversion for the track's azimuth/elevation. The jump test is in pixels and
    /// does not depend on it.
    pub geometry: MapGeometry,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        Self {
            jump_threshold_px: DEFAULT_JUMP_THRESHOLD_PX,
            lit_threshold: DEFAULT_LIT_THRESHOLD,
            geometry: MapGeometry::earth(),
        }
    }
}

/// How a track point was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// Centroid of the pixels lit during an interval inside one slot.
    Fresh,
    /// No new pixel this interval: the last known position, held (B4).
    Held,
    /// Centroid of an interval that crossed a slot boundary; possibly two satellites' pixels.
    Straddling,
}

/// One per-second point of the serving satellite's track.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackPoint {
    /// The instant the map shows (end of the interval).
    pub at: DateTime<Utc>,
    /// Start of the slot the point belongs to (the slot containing `at`).
    pub slot: DateTime<Utc>,
    /// Centroid, in pixels.
    pub pixel: PixelPoint,
    /// The centroid's direction in the sky.
    pub direction: SkyDirection,
    /// Number of new pixels behind the centroid (0 for held points).
    pub new_pixels: usize,
    /// How the point was obtained.
    pub kind: PointKind,
    /// Whether the map had been cleared since the previous observation.
    pub map_reset: bool,
}

/// The decision taken at a slot boundary, from the previous slot's last fresh point and this
/// slot's first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundaryVerdict {
    /// The slot boundary (the instant the handover, if any, happened).
    pub at: DateTime<Utc>,
    /// When the decision could be taken (the first fresh point of the new slot).
    pub decided_at: DateTime<Utc>,
    /// The previous slot's last position.
    pub from: PixelPoint,
    /// This slot's first position.
    pub to: PixelPoint,
    /// Distance between them, px.
    pub jump_px: f64,
    /// Whether the jump exceeds the threshold.
    pub handover: bool,
}

/// What one observation produced.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Observation {
    /// The track point for this interval; `None` for the first (baseline) observation, before
    /// any satellite was seen, or for a map older than the previous one.
    pub point: Option<TrackPoint>,
    /// The boundary decision this observation allowed, if any.
    pub verdict: Option<BoundaryVerdict>,
}

#[derive(Debug, Clone)]
struct Previous {
    at: DateTime<Utc>,
    rows: usize,
    cols: usize,
    lit: Vec<bool>,
}

/// The sans-I/O detector: feed it every polled map with the instant it shows.
#[derive(Debug, Clone)]
pub struct HandoverDetector {
    config: DetectorConfig,
    previous: Option<Previous>,
    last_position: Option<(PixelPoint, SkyDirection)>,
    last_fresh: Option<TrackPoint>,
}

impl HandoverDetector {
    /// A detector with nothing seen yet.
    pub fn new(config: DetectorConfig) -> Self {
        Self {
            config,
            previous: None,
            last_position: None,
            last_fresh: None,
        }
    }

    /// Its settings.
    pub fn config(&self) -> &DetectorConfig {
        &self.config
    }

    /// Changes the pixel -> sky geometry (e.g. once the map reports FRAME_UT and the status
    /// gives the dish's alignment). Affects only later points' directions.
    pub fn set_geometry(&mut self, geometry: MapGeometry) {
        self.config.geometry = geometry;
    }

    /// Forgets everything (the next observation is a new baseline).
    pub fn reset(&mut self) {
        self.previous = None;
        self.last_position = None;
        self.last_fresh = None;
    }

    /// Takes the map as it was at `at`. Observations must come in time order; a map not newer
    /// than the previous one is ignored (empty [`Observation`]).
    pub fn observe(&mut self, at: DateTime<Utc>, map: &ObstructionMap) -> Observation {
        let lit = map.lit(self.config.lit_threshold);
        let previous = match self.previous.take() {
            Some(p) if p.rows == map.rows() && p.cols == map.cols() => p,
            other => {
                // First map, or the map changed size: a new baseline.
                self.previous = other.filter(|p| p.at >= at);
                if self.previous.is_none() {
                    self.store(at, map, lit);
                }
                return Observation::default();
            }
        };
        if at <= previous.at {
            self.previous = Some(previous);
            return Observation::default();
        }
        let reset = previous.lit.iter().zip(&lit).any(|(&was, &is)| was && !is);
        let (mut sum_row, mut sum_col, mut count) = (0.0, 0.0, 0usize);
        for (i, (&is, &was)) in lit.iter().zip(&previous.lit).enumerate() {
            if is && (reset || !was) {
                let p = map.pixel_at(i);
                sum_row += p.row as f64;
                sum_col += p.col as f64;
                count += 1;
            }
        }
        let slot = slot_start(at);
        let straddling = previous.at < slot;
        self.store(at, map, lit);

        if count == 0 {
            let point = self.last_position.map(|(pixel, direction)| TrackPoint {
                at,
                slot,
                pixel,
                direction,
                new_pixels: 0,
                kind: PointKind::Held,
                map_reset: reset,
            });
            return Observation {
                point,
                verdict: None,
            };
        }

        let pixel = PixelPoint {
            row: sum_row / count as f64,
            col: sum_col / count as f64,
        };
        let direction = self.config.geometry.to_sky(pixel);
        self.last_position = Some((pixel, direction));
        let point = TrackPoint {
            at,
            slot,
            pixel,
            direction,
            new_pixels: count,
            kind: if straddling {
                PointKind::Straddling
            } else {
                PointKind::Fresh
            },
            map_reset: reset,
        };
        if straddling {
            return Observation {
                point: Some(point),
                verdict: None,
            };
        }
        let verdict = match self.last_fresh {
            Some(last)
                if last.slot < slot
                    && last.slot + ChronoDuration::seconds(SLOT_LENGTH_S) == slot =>
            {
                let jump_px = last.pixel.distance(pixel);
                Some(BoundaryVerdict {
                    at: slot,
                    decided_at: at,
                    from: last.pixel,
                    to: pixel,
                    jump_px,
                    handover: jump_px > self.config.jump_threshold_px,
                })
            }
            _ => None,
        };
        self.last_fresh = Some(point);
        Observation {
            point: Some(point),
            verdict,
        }
    }

    fn store(&mut self, at: DateTime<Utc>, map: &ObstructionMap, lit: Vec<bool>) {
        self.previous = Some(Previous {
            at,
            rows: map.rows(),
            cols: map.cols(),
            lit,
        });
    }
}

/// Everything a detector run produced: the per-second track and the boundary verdicts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DetectionLog {
    /// Track points, in time order.
    pub track: Vec<TrackPoint>,
    /// Boundary decisions, in time order (handovers and "same satellite").
    pub verdicts: Vec<BoundaryVerdict>,
}

impl DetectionLog {
    /// Appends what an observation produced.
    pub fn record(&mut self, observation: &Observation) {
        if let Some(point) = observation.point {
            self.track.push(point);
        }
        if let Some(verdict) = observation.verdict {
            self.verdicts.push(verdict);
        }
    }

    /// The instants (slot boundaries) of the detected handovers.
    pub fn handovers(&self) -> Vec<DateTime<Utc>> {
        self.verdicts
            .iter()
            .filter(|v| v.handover)
            .map(|v| v.at)
            .collect()
    }

    /// Per-second handover bits in the forecast contract's convention (docs/architecture.md, "The
    /// forecast contract"): `bits[k] = 1` when a detected handover lies in
    /// `(t0 + k s, t0 + (k + 1) s]`.
    pub fn handover_bits(&self, t0: DateTime<Utc>, steps: usize) -> Vec<u8> {
        let mut bits = vec![0u8; steps];
        for at in self.handovers() {
            let after = at - t0;
            let Some(nanos) = after.num_nanoseconds() else {
                continue;
            };
            if nanos <= 0 {
                continue;
            }
            let k = ((nanos - 1) / 1_000_000_000) as usize;
            if let Some(bit) = bits.get_mut(k) {
                *bit = 1;
            }
        }
        bits
    }
}

/// Detected vs true handovers, matched one-to-one within a tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Score {
    /// Detections matched to a true handover.
    pub true_positives: usize,
    /// Detections with no true handover within the tolerance.
    pub false_positives: usize,
    /// True handovers with no detection within the tolerance.
    pub false_negatives: usize,
}

impl Score {
    /// TP / (TP + FP); 1 when nothing was detected.
    pub fn precision(&self) -> f64 {
        ratio(
            self.true_positives,
            self.true_positives + self.false_positives,
        )
    }

    /// TP / (TP + FN); 1 when nothing was there to find.
    pub fn recall(&self) -> f64 {
        ratio(
            self.true_positives,
            self.true_positives + self.false_negatives,
        )
    }

    /// Harmonic mean of precision and recall.
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

fn ratio(num: usize, den: usize) -> f64 {
    if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    }
}

/// Scores detections against the truth: each true handover is matched to the earliest unmatched
/// detection within `tolerance` of it (both lists are sorted first).
pub fn score_handovers(
    detected: &[DateTime<Utc>],
    truth: &[DateTime<Utc>],
    tolerance: ChronoDuration,
) -> Score {
    let mut detected = detected.to_vec();
    let mut truth = truth.to_vec();
    detected.sort();
    truth.sort();
    let mut used = vec![false; detected.len()];
    let mut tp = 0;
    for t in &truth {
        let hit = detected
            .iter()
            .enumerate()
            .find(|(i, d)| !used[*i] && (**d - *t).abs() <= tolerance);
        if let Some((i, _)) = hit {
            used[i] = true;
            tp += 1;
        }
    }
    Score {
        true_positives: tp,
        false_positives: detected.len() - tp,
        false_negatives: truth.len() - tp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dish::map::{MapFrame, Pixel};
    use chrono::TimeZone;

    fn t(s: i64) -> DateTime<Utc> {
        // 10:00:12 is a slot boundary.
        Utc.with_ymd_and_hms(2025, 5, 12, 10, 0, 12).unwrap() + ChronoDuration::seconds(s)
    }

    fn ms(s: i64, ms: i64) -> DateTime<Utc> {
        t(s) + ChronoDuration::milliseconds(ms)
    }

    /// A map with the given pixels lit (value 1).
    fn map(lit: &[(usize, usize)]) -> ObstructionMap {
        let mut m = ObstructionMap::empty(123, 123, MapFrame::Earth);
        for &(row, col) in lit {
            m.set(Pixel { row, col }, 1.0);
        }
        m
    }

    #[test]
    fn the_first_map_is_a_baseline_and_new_pixels_give_their_centroid() {
        let mut d = HandoverDetector::new(DetectorConfig::default());
        assert_eq!(
            d.observe(ms(1, 50), &map(&[(30, 30)])),
            Observation::default()
        );
        let obs = d.observe(ms(2, 50), &map(&[(30, 30), (30, 31), (32, 31)]));
        let p = obs.point.unwrap();
        assert_eq!(p.kind, PointKind::Fresh);
        assert_eq!(p.new_pixels, 2);
        assert_eq!(
            p.pixel,
            PixelPoint {
                row: 31.0,
                col: 31.0
            }
        );
        assert_eq!(p.slot, t(0));
        assert!(!p.map_reset);
        assert_eq!(obs.verdict, None);
    }

    #[test]
    fn without_new_pixels_the_last_position_is_held() {
        let mut d = HandoverDetector::new(DetectorConfig::default());
        d.observe(ms(1, 0), &map(&[]));
        assert_eq!(d.observe(ms(2, 0), &map(&[])).point, None);
        d.observe(ms(3, 0), &map(&[(40, 40)]));
        let held = d.observe(ms(4, 0), &map(&[(40, 40)])).point.unwrap();
        assert_eq!(held.kind, PointKind::Held);
        assert_eq!(
            held.pixel,
            PixelPoint {
                row: 40.0,
                col: 40.0
            }
        );
        assert_eq!(held.new_pixels, 0);
    }

    #[test]
    fn a_cleared_map_counts_all_lit_pixels_as_new() {
        let mut d = HandoverDetector::new(DetectorConfig::default());
        d.observe(ms(1, 0), &map(&[(10, 10)]));
        d.observe(ms(2, 0), &map(&[(10, 10), (10, 11)]));
        // Cleared, then (10, 11) and (10, 12) painted again.
        let p = d
            .observe(ms(3, 0), &map(&[(10, 11), (10, 12)]))
            .point
            .unwrap();
        assert!(p.map_reset);
        assert_eq!(p.new_pixels, 2);
        assert_eq!(
            p.pixel,
            PixelPoint {
                row: 10.0,
                col: 11.5
            }
        );
    }

    /// Feeds the detector a slot ending with `end` and a slot starting at `start`, one second
    /// apart from the boundary, clearing at the boundary like the driver does.
    fn boundary(end: (usize, usize), start: (usize, usize)) -> Observation {
        let mut d = HandoverDetector::new(DetectorConfig::default());
        d.observe(ms(11, 40), &map(&[]));
        d.observe(ms(12, 40), &map(&[(end.0, end.1 - 1)]));
        d.observe(ms(13, 40), &map(&[(end.0, end.1 - 1), end]));
        // 14.04 crosses the boundary at 15 (t(15) = 10:00:27): straddling.
        let straddle = d.observe(
            ms(15, 40),
            &map(&[(end.0, end.1 - 1), end, (end.0, end.1 + 1), start]),
        );
        assert_eq!(straddle.point.unwrap().kind, PointKind::Straddling);
        assert_eq!(straddle.verdict, None);
        // The driver cleared the map after that poll.
        d.observe(ms(16, 40), &map(&[start]))
    }

    #[test]
    fn a_jump_beyond_five_pixels_at_a_slot_boundary_is_a_handover_dated_at_the_boundary() {
        let obs = boundary((50, 50), (50, 60));
        let v = obs.verdict.unwrap();
        assert!(v.handover);
        assert_eq!(v.at, t(15));
        assert_eq!(v.decided_at, ms(16, 40));
        assert_eq!(v.jump_px, 10.0);
        assert_eq!(
            v.from,
            PixelPoint {
                row: 50.0,
                col: 50.0
            }
        );
    }

    #[test]
    fn continuing_within_five_pixels_is_the_same_satellite() {
        let v = boundary((50, 50), (50, 53)).verdict.unwrap();
        assert!(!v.handover);
        assert_eq!(v.jump_px, 3.0);
        // Exactly 5 px is not "more than 5".
        assert!(!boundary((50, 50), (53, 54)).verdict.unwrap().handover);
    }

    #[test]
    fn no_verdict_when_the_previous_slot_was_not_observed() {
        let mut d = HandoverDetector::new(DetectorConfig::default());
        d.observe(ms(1, 0), &map(&[]));
        d.observe(ms(2, 0), &map(&[(20, 20)]));
        // Nothing seen in slot t(15)..t(30); next fresh point in slot t(30).
        d.observe(ms(29, 0), &map(&[(20, 20)]));
        d.observe(ms(31, 0), &map(&[(20, 20), (60, 60)]));
        let obs = d.observe(ms(32, 0), &map(&[(20, 20), (60, 60), (60, 61)]));
        assert_eq!(obs.point.unwrap().kind, PointKind::Fresh);
        assert_eq!(obs.verdict, None);
    }

    #[test]
    fn stale_or_resized_maps_are_ignored_without_panicking() {
        let mut d = HandoverDetector::new(DetectorConfig::default());
        d.observe(ms(2, 0), &map(&[(1, 1)]));
        assert_eq!(d.observe(ms(1, 0), &map(&[(1, 2)])), Observation::default());
        let small = ObstructionMap::new(2, 2, vec![1.0; 4], 80.0, MapFrame::Earth).unwrap();
        assert_eq!(d.observe(ms(3, 0), &small), Observation::default());
        // The small map is the new baseline.
        let p = d.observe(ms(4, 0), &small).point;
        assert_eq!(p, None);
    }

    #[test]
    fn handover_bits_follow_the_forecast_convention() {
        let mut log = DetectionLog::default();
        for (at, handover) in [(t(15), true), (t(30), false), (t(45), true)] {
            log.record(&Observation {
                point: None,
                verdict: Some(BoundaryVerdict {
                    at,
                    decided_at: at,
                    from: PixelPoint { row: 0.0, col: 0.0 },
                    to: PixelPoint { row: 0.0, col: 0.0 },
                    jump_px: 0.0,
                    handover,
                }),
            });
        }
        assert_eq!(log.handovers(), vec![t(15), t(45)]);
        // t0 = t(0): the handover at t(15) is in (t0 + 14 s, t0 + 15 s] -> bit 14.
        let bits = log.handover_bits(t(0), 50);
        let ones: Vec<usize> = (0..50).filter(|&k| bits[k] == 1).collect();
        assert_eq!(ones, vec![14, 44]);
        // A handover exactly at t0 is outside (t0, ...].
        assert!(log.handover_bits(t(15), 5).iter().all(|&b| b == 0));
    }

    #[test]
    fn scoring_matches_each_truth_once_within_the_tolerance() {
        let tol = ChronoDuration::seconds(1);
        let s = score_handovers(&[t(16), t(30), t(31), t(90)], &[t(15), t(30), t(60)], tol);
        assert_eq!(
            s,
            Score {
                true_positives: 2,
                false_positives: 2,
                false_negatives: 1
            }
        );
        assert!((s.precision() - 0.5).abs() < 1e-12);
        assert!((s.recall() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(score_handovers(&[], &[], tol).f1(), 1.0);
        assert_eq!(score_handovers(&[t(0)], &[t(5)], tol).f1(), 0.0);
    }
}

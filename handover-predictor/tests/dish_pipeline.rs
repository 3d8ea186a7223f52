//! The simulated dish's state and the detector wired together in virtual time, without gRPC:
//! the same poll/clear schedule the driver follows, at exact instants, over long scenarios.

#![cfg(feature = "dish")]

mod dish_harness;

use chrono::Duration;
use dish_harness::{score_against_truth, sky, start};
use handover_predictor::dish::{
    DetectionLog, DetectorConfig, HandoverDetector, PointKind, SimConfig, SimDish,
};
use handover_predictor::sky::slot_start;

/// Polls once per second `offset_ms` after each whole second, clears after the first poll of
/// every slot, and returns the detector's log and F1.
fn run(seed: u64, minutes: i64, offset_ms: i64) -> (DetectionLog, f64) {
    run_with(seed, minutes, offset_ms, true)
}

fn run_with(seed: u64, minutes: i64, offset_ms: i64, clears: bool) -> (DetectionLog, f64) {
    let truth = sky(seed, minutes);
    let mut dish = SimDish::new(SimConfig::new(start()));
    let mut detector = HandoverDetector::new(DetectorConfig::default());
    let mut log = DetectionLog::default();
    dish.clear(&truth, start());
    let mut cleared = slot_start(start());
    let end = start() + Duration::minutes(minutes);
    let mut at = start() + Duration::milliseconds(offset_ms);
    while at <= end {
        let map = dish.map_at(&truth, at);
        log.record(&detector.observe(at, &map));
        if clears && slot_start(at) > cleared {
            dish.clear(&truth, at);
            cleared = slot_start(at);
        }
        at += Duration::seconds(1);
    }
    let (score, _) = score_against_truth(&log.handovers(), &truth, start(), end);
    (log, score.f1())
}

#[test]
fn twenty_minutes_of_synthetic_sky_are_detected_exactly_wherever_in_the_second_polls_land() {
    for offset_ms in [0, 40, 300, 900] {
        let (log, f1) = run(1, 20, offset_ms);
        assert_eq!(f1, 1.0, "offset {offset_ms} ms");
        // One verdict per slot boundary after the first, 4 per minute.
        assert_eq!(log.verdicts.len(), 20 * 4, "offset {offset_ms} ms");
    }
}

#[test]
fn other_seeds_are_detected_exactly_too() {
    for seed in 2..6 {
        let (_, f1) = run(seed, 10, 50);
        assert_eq!(f1, 1.0, "seed {seed}");
    }
}

#[test]
fn the_track_follows_the_serving_satellite_within_a_few_degrees() {
    use handover_predictor::dish::{SkyDirection, SkyTruth};
    let truth = sky(9, 10);
    let (log, _) = run(9, 10, 40);
    let fresh: Vec<_> = log
        .track
        .iter()
        .filter(|p| p.kind == PointKind::Fresh)
        .collect();
    assert!(fresh.len() > 400, "{}", fresh.len());
    let mut errors: Vec<f64> = fresh
        .iter()
        .map(|p| {
            // The centroid of a second's new pixels sits about half a second back.
            let s = truth.serving(p.at - Duration::milliseconds(500)).unwrap();
            p.direction.separation_deg(SkyDirection::of(&s.position))
        })
        .collect();
    errors.sort_by(f64::total_cmp);
    let median = errors[errors.len() / 2];
    let p95 = errors[errors.len() * 95 / 100];
    assert!(median < 1.5, "median {median}");
    assert!(p95 < 3.0, "p95 {p95}");
}

#[test]
fn a_dish_that_cannot_clear_its_map_still_shows_handovers_as_new_pixels() {
    // Old firmware lacks dish_clear_obstruction_map (reference A12): the map keeps every track
    // and the detector relies on the pixels new since the previous poll alone.
    let (log, f1) = run_with(4, 10, 60, false);
    assert!(log.track.iter().all(|p| !p.map_reset));
    assert!(f1 >= 0.95, "F1 {f1}");
}

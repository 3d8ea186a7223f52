//! The training-path family (`rtc-client paths`, `rtc_client::scenario::family`): the files load
//! and realise through the real loader, the calibrated forecast times every family member's
//! boundaries, a `leo-phased` link loses where its drawn phase is, and the command writes the
//! same bytes for the same seed and refuses a bad --out.

mod cli_support;

use cli_support::{assert_clear_failure, assert_same_tree, run, scratch, stderr};
use rtc_client::forecast::{self, ForecastInputs, ForecastSpec};
use rtc_client::link::{Time, Verdict};
use rtc_client::scenario::family::{self, Family};
use rtc_client::scenario::{Scenario, ScenarioPaths};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// Every 10 s of the call, the calibrated forecast of a realised path: it succeeds, each
/// instant it forecasts inside the call is one of the timeline's boundaries (within 1 s, the
/// evaluation's tolerance), and on a path with a slot grid every boundary of the horizon is
/// forecast. Returns how many forecast instants fell inside the call.
fn check_calibrated(text: &str, name: &str, duration: Duration) -> usize {
    let paths = ScenarioPaths::workspace();
    let scenario = Scenario::parse(text, name, &paths).unwrap_or_else(|e| panic!("{name}: {e}"));
    let call = scenario
        .realize(1, duration)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let timeline = &call.timeline;
    let epoch = Instant::now();
    let mut source = forecast::build(
        &ForecastSpec::Calibrated,
        ForecastInputs {
            scenario: name,
            timeline: Some(timeline),
            orbits: None,
            real_time: false,
            seed: 1,
        },
        epoch,
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    let end_ms = duration.as_millis() as u64;
    let mut inside = 0;
    for t in (0..duration.as_secs()).step_by(10) {
        let t_ms = t * 1000;
        let f = source
            .forecast(epoch + Duration::from_millis(t_ms))
            .unwrap_or_else(|e| panic!("{name} at {t} s: {e}"));
        let forecast: Vec<u64> = f
            .handovers()
            .iter()
            .map(|h| t_ms + h.offset.as_millis() as u64)
            .filter(|&at| at < end_ms)
            .collect();
        for &at in &forecast {
            assert!(
                timeline
                    .boundaries_ms
                    .iter()
                    .any(|&b| b.abs_diff(at) <= 1000),
                "{name} at {t} s: calibrated forecasts {at} ms, no boundary there ({:?})",
                timeline.boundaries_ms
            );
        }
        inside += forecast.len();
        if timeline.slotted {
            for &b in timeline
                .boundaries_ms
                .iter()
                .filter(|&&b| b > t_ms && b <= t_ms + 120_000)
            {
                assert!(
                    forecast.iter().any(|&at| at.abs_diff(b) <= 1000),
                    "{name} at {t} s: the boundary at {b} ms is not forecast ({forecast:?})"
                );
            }
        } else {
            assert!(
                forecast.is_empty(),
                "{name}: {forecast:?} without handovers"
            );
        }
    }
    inside
}

#[test]
fn the_calibrated_forecast_times_every_family_members_boundaries() {
    let drawn = family::draw_paths(120, 1, 600).unwrap();
    let mut families = BTreeSet::new();
    for p in &drawn {
        families.insert(p.family);
        // The file's own length, and the 60 s of a smoke run (one or two boundaries of a grid).
        for duration in [Duration::from_secs(600), Duration::from_secs(60)] {
            let forecast = check_calibrated(&p.toml, &p.name(), duration);
            if p.family != Family::Terrestrial {
                assert!(forecast > 0, "{}: no boundary forecast", p.name());
            }
        }
    }
    assert_eq!(families.len(), Family::ALL.len(), "{families:?}");
}

#[test]
fn a_realised_path_has_the_handovers_its_family_promises() {
    for p in family::draw_paths(120, 4, 600).unwrap() {
        let s = Scenario::parse(&p.toml, &p.name(), &ScenarioPaths::workspace()).unwrap();
        let call = s.realize(1, Duration::from_secs(600)).unwrap();
        let per_minute = call.timeline.per_minute(Duration::from_secs(600));
        let (lo, hi) = match p.family {
            // 40 boundaries in 10 min at a switch rate of 0.45-0.95, or all of them.
            Family::LeoLossy | Family::LeoPhased | Family::LeoSpiky | Family::LeoBursty => {
                (1.0, 4.01)
            }
            // 0.02-0.25 of 4 boundaries a minute (0.08-1.0), with the binomial's spread.
            Family::LeoSparse => (0.0, 1.8),
            Family::Terrestrial => (0.0, 0.0),
        };
        assert!(
            (lo..=hi).contains(&per_minute),
            "{} ({}): {per_minute} handovers per minute",
            p.name(),
            p.family.name()
        );
    }
}

/// Packets lost and sent.
#[derive(Default, Clone, Copy)]
struct Tally {
    lost: u64,
    sent: u64,
}

impl Tally {
    fn add(&mut self, lost: bool) {
        self.sent += 1;
        self.lost += u64::from(lost);
    }

    fn rate(self) -> f64 {
        self.lost as f64 / self.sent.max(1) as f64
    }
}

#[test]
fn a_leo_phased_link_loses_over_its_drawn_phase_more_than_5_times_the_rest_of_the_slot() {
    let phased: Vec<_> = family::draw_paths(120, 1, 600)
        .unwrap()
        .into_iter()
        .filter(|p| p.family == Family::LeoPhased)
        .take(5)
        .collect();
    assert_eq!(phased.len(), 5);
    // 100-byte packets every 2 ms, 400 kbit/s: under every drawn capacity's floor (a quarter
    // of at least 3.84 Mbit/s), so what the link drops is its loss, not its queue. A packet
    // within 50 ms of the phase's ends counts for neither side.
    let (mut phase, mut phase_no_handover, mut rest) =
        (Tally::default(), Tally::default(), Tally::default());
    for p in &phased {
        let start_ms = (p.params["~phase_start_s"] * 1000.0).round() as u64;
        let end_ms = start_ms + (p.params["~phase_length_s"] * 1000.0).round() as u64;
        let call = Scenario::parse(&p.toml, &p.name(), &ScenarioPaths::workspace())
            .unwrap()
            .realize(1, Duration::from_secs(600))
            .unwrap();
        let timeline = &call.timeline;
        let handovers: BTreeSet<u64> = timeline.handovers.iter().map(|h| h.at_ms).collect();
        let mut link = call.forward_link().unwrap();
        let (mut own_phase, mut own_rest) = (Tally::default(), Tally::default());
        for t in (0..600_000u64).step_by(2) {
            let lost = matches!(
                link.send(Time::from_millis(t), 100),
                Verdict::Dropped { .. }
            );
            let k = timeline.boundaries_ms.partition_point(|&b| b <= t);
            let Some(&b) = k.checked_sub(1).and_then(|i| timeline.boundaries_ms.get(i)) else {
                continue;
            };
            let after = t - b;
            if after >= start_ms + 50 && after + 50 < end_ms {
                own_phase.add(lost);
                if !handovers.contains(&b) {
                    phase_no_handover.add(lost);
                }
            } else if after + 50 < start_ms || (after >= end_ms + 50 && after < 15_000) {
                own_rest.add(lost);
            }
        }
        // The phase loses what was drawn (with the random loss on top), within sampling.
        let (loss, random) = (p.params["~phase_loss"], p.params["forward.loss.rate"]);
        let want = 1.0 - (1.0 - loss) * (1.0 - random);
        assert!(
            (own_phase.rate() - want).abs() < 0.35 * want,
            "{}: the phase loses {:.4}, drawn {want:.4}",
            p.name(),
            own_phase.rate()
        );
        assert!(
            own_phase.rate() > 3.0 * own_rest.rate(),
            "{}: the phase loses {:.4}, the rest of the slot {:.4}",
            p.name(),
            own_phase.rate(),
            own_rest.rate()
        );
        for (all, own) in [(&mut phase, own_phase), (&mut rest, own_rest)] {
            all.lost += own.lost;
            all.sent += own.sent;
        }
    }
    assert!(
        phase.rate() > 5.0 * rest.rate(),
        "over the phase {:.4} ({} packets), over the rest of the slot {:.4} ({})",
        phase.rate(),
        phase.sent,
        rest.rate(),
        rest.sent
    );
    // At a boundary where the satellite stays too (the slot variant's), as the trace's phase
    // follows every reconfiguration.
    assert!(phase_no_handover.sent > 1_000, "{}", phase_no_handover.sent);
    assert!(
        phase_no_handover.rate() > 5.0 * rest.rate(),
        "over the phase after a boundary without a handover {:.4}, the rest {:.4}",
        phase_no_handover.rate(),
        rest.rate()
    );
}

fn list(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn paths_writes_the_same_bytes_for_the_same_seed_and_files_that_load() {
    let dir = scratch("path_family", "same_bytes");
    let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
    for out in [&a, &b] {
        let o = run(&[
            "paths",
            "--count",
            "12",
            "--seed",
            "5",
            "--duration",
            "2m",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(assert_same_tree(&a, &b), 13);
    let names = list(&a);
    assert_eq!(names.first().map(String::as_str), Some("family.json"));
    assert_eq!(names[1], "path-0000.toml");
    assert_eq!(names[12], "path-0011.toml");
    // The command writes what the library draws.
    let drawn = family::draw_paths(12, 5, 120).unwrap();
    for p in &drawn {
        let text = std::fs::read_to_string(a.join(p.file_name())).unwrap();
        assert_eq!(text, p.toml);
        let s = Scenario::load(
            a.join(p.file_name()).to_str().unwrap(),
            &ScenarioPaths::workspace(),
        )
        .unwrap();
        assert_eq!(s.file.call.duration_s, 120);
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("family.json")).unwrap()).unwrap();
    assert_eq!(manifest["seed"], 5);
    assert_eq!(manifest["generator_version"], family::GENERATOR_VERSION);
    assert_eq!(manifest["paths"].as_array().unwrap().len(), 12);
    assert_eq!(manifest["paths"][3]["name"], "path-0003");
    // Another seed, other files.
    let o = run(&[
        "paths",
        "--count",
        "12",
        "--seed",
        "6",
        "--duration",
        "2m",
        "--out",
        c.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(
        std::fs::read(a.join("path-0000.toml")).unwrap(),
        std::fs::read(c.join("path-0000.toml")).unwrap()
    );
}

#[test]
fn a_bad_out_is_refused_and_force_replaces_only_the_paths() {
    let dir = scratch("path_family", "bad_out");
    let out = dir.join("fam");
    let args = |count: &'static str, force: bool| {
        let mut v = vec![
            "paths".to_owned(),
            "--count".into(),
            count.into(),
            "--out".into(),
            out.to_string_lossy().into_owned(),
        ];
        if force {
            v.push("--force".into());
        }
        v
    };
    let go = |v: Vec<String>| run(&v.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(go(args("6", false)).status.success());
    // Non-empty without --force: refused, the files kept.
    let o = go(args("3", false));
    assert_clear_failure(&o, "is not empty; choose another --out or give --force");
    assert_eq!(list(&out).len(), 7);
    // With --force: the stale paths 3-5 go, a file of the user's stays.
    std::fs::write(out.join("notes.md"), "mine").unwrap();
    assert!(go(args("3", true)).status.success());
    assert_eq!(
        list(&out),
        [
            "family.json",
            "notes.md",
            "path-0000.toml",
            "path-0001.toml",
            "path-0002.toml"
        ]
    );
    // --out naming a file.
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = run(&["paths", "--count", "2", "--out", file.to_str().unwrap()]);
    assert_clear_failure(&o, "is a file, not a directory");
    // Counts and durations out of range.
    let o = run(&[
        "paths",
        "--count",
        "0",
        "--out",
        dir.join("z").to_str().unwrap(),
    ]);
    assert_clear_failure(&o, "--count");
    let o = run(&[
        "paths",
        "--count",
        "10001",
        "--out",
        dir.join("z").to_str().unwrap(),
    ]);
    assert_clear_failure(&o, "--count");
    let o = run(&[
        "paths",
        "--count",
        "1",
        "--duration",
        "1500ms",
        "--out",
        dir.join("z").to_str().unwrap(),
    ]);
    assert_clear_failure(&o, "whole seconds");
    assert!(!dir.join("z").exists(), "a refused run created its --out");
}

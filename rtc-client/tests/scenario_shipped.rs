//! Every shipped scenario loads, validates and builds its links; the same seed gives the same
//! call; the generated terrestrial and sparse scenarios show the figures their headers name.

mod scenario_support;

use rtc_client::link::readers::{Direction, LagosTrace};
use rtc_client::link::{Loss, Time};
use rtc_client::scenario::figures::Summary;
use rtc_client::scenario::{ScenarioError, ScenarioPaths};
use scenario_support as support;
use std::time::Duration;

#[test]
fn the_shipped_scenario_directory_holds_exactly_the_documented_scenarios() {
    assert_eq!(support::paths().shipped(), support::SHIPPED.to_vec());
}

#[test]
fn every_shipped_scenario_loads_and_builds_both_links() {
    for name in support::SHIPPED {
        let scenario = support::load(name);
        assert_eq!(scenario.name(), name, "the name inside {name}.toml");
        if support::NEEDS_DATA.contains(&name) && support::shared_data(name).is_none() {
            continue;
        }
        let r = scenario
            .realize(7, Duration::from_secs(120))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        r.forward_link().unwrap();
        r.reverse_link().unwrap();
        let (f, v) = support::seconds(&r);
        assert_eq!(f.len(), 120);
        for s in f.iter().chain(&v) {
            assert!(s.capacity_mbps >= 0.0 && s.delay_ms > 0.0, "{name}: {s:?}");
            assert!((0.0..=1.0).contains(&s.loss), "{name}: {s:?}");
        }
    }
}

#[test]
fn a_trace_scenario_without_the_shared_data_names_the_missing_file() {
    let paths = ScenarioPaths::new(support::paths().root, "/nonexistent/shared/data");
    let scenario = rtc_client::scenario::Scenario::load("leocc-trace", &paths).unwrap();
    let err = scenario.realize(1, Duration::from_secs(10)).unwrap_err();
    assert!(matches!(err, ScenarioError::DataMissing { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("data:starlink/leocc/"), "{msg}");
    assert!(msg.contains("/nonexistent/shared/data"), "{msg}");
}

#[test]
fn lagos_trace_replays_each_seed_from_its_own_chunk_of_the_file_on_its_slot_grid() {
    let Some(data) = support::shared_data("lagos-trace's replay offset") else {
        return;
    };
    let file = LagosTrace::load(data.join("starlink/lagos/lagos.csv")).unwrap();
    let mut offsets = std::collections::BTreeSet::new();
    let (mut first_rows, mut mid_slot, mut boundaries) = (0.0, 0.0, 0);
    for seed in 0..20 {
        let r = support::realize("lagos-trace", seed, 120);
        let offset = r.replay_offset.expect("lagos-trace has a [replay] table");
        assert_eq!(offset.as_millis() % 15_000, 0, "seed {seed}: {offset:?}");
        assert!(offset < file.duration(), "seed {seed}: {offset:?}");
        assert_eq!(
            support::realize("lagos-trace", seed, 120).replay_offset,
            Some(offset),
            "the same seed, the same offset"
        );
        offsets.insert(offset);
        let Loss::Series(loss) = &r.forward.loss else {
            panic!("lagos-trace's forward loss is a series");
        };
        let expected = file.starting_at(offset).unwrap().loss(Direction::Uplink);
        for ms in (0..120_000).step_by(100) {
            let t = Time::from_millis(ms);
            assert_eq!(loss.at(t), expected.at(t), "seed {seed}, {ms} ms");
        }
        for &b in &r.timeline.boundaries_ms {
            first_rows += loss.at(Time::from_millis(b + 50));
            mid_slot += loss.at(Time::from_millis(b + 7_050));
            boundaries += 1;
        }
    }
    assert!(
        offsets.len() >= 15,
        "20 seeds drew only {} offsets",
        offsets.len()
    );
    // The file loses 47.5 % in the first row after its boundaries and 0.5 % inside slots.
    let first_rows = first_rows / f64::from(boundaries);
    let mid_slot = mid_slot / f64::from(boundaries);
    assert!(
        first_rows > 0.3 && mid_slot < 0.05,
        "the grid is off the file's boundaries: first rows lose {first_rows:.3}, mid-slot rows {mid_slot:.3}"
    );
}

#[test]
fn the_same_seed_gives_the_same_call_and_another_seed_another() {
    for name in [
        "starlink",
        "terrestrial-lte",
        "terrestrial-5g",
        "sparse-leo",
    ] {
        let a = support::realize(name, 11, 180);
        let b = support::realize(name, 11, 180);
        let c = support::realize(name, 12, 180);
        assert_eq!(a.forward, b.forward, "{name}");
        assert_eq!(a.reverse, b.reverse, "{name}");
        assert_eq!(a.timeline, b.timeline, "{name}");
        assert_eq!(support::pings(&a), support::pings(&b), "{name}");
        assert_ne!(
            a.forward, c.forward,
            "{name}: seeds 11 and 12 gave the same forward link"
        );
    }
}

#[test]
fn starlink_handovers_fall_on_slot_boundaries_and_terrestrial_has_none() {
    let r = support::realize("starlink", 3, 600);
    assert_eq!(r.timeline.boundaries_ms.len(), 40);
    for h in &r.timeline.handovers {
        let second = r.ms_of_minute(h.at_ms) / 1000;
        assert!([12, 27, 42, 57].contains(&second), "{h:?}");
        assert_eq!(r.ms_of_minute(h.at_ms) % 1000, 0);
    }
    for name in ["terrestrial-lte", "terrestrial-5g", "terrestrial-broadband"] {
        let r = support::realize(name, 3, 60);
        assert!(r.timeline.handovers.is_empty(), "{name}");
        assert!(r.forward.handovers.is_empty(), "{name}");
    }
}

#[test]
fn sparse_leo_hands_over_zero_to_one_times_a_minute_over_a_long_path() {
    let mut handovers = 0usize;
    let mut minutes = 0.0;
    for seed in 1..=4 {
        let r = support::realize("sparse-leo", seed, 600);
        let orbit = r.orbit.as_ref().expect("an orbit path");
        eprintln!(
            "seed {seed}: {} ({} satellites), {} -> {} ({:.0} km), {} handovers, {} outage s",
            orbit.constellation,
            orbit.satellites,
            orbit.local,
            orbit.peer,
            orbit.separation_km,
            r.timeline.instants_ms().len(),
            orbit.outage_seconds().len()
        );
        assert!((80..=100).contains(&orbit.satellites));
        assert!(orbit.separation_km >= 3000.0);
        handovers += r.timeline.instants_ms().len();
        minutes += 10.0;
        let (f, _) = support::seconds(&r);
        let d = Summary::of(f.iter().filter(|s| s.outage_ms == 0).map(|s| s.delay_ms)).unwrap();
        eprintln!("  one-way delay {d:?}");
        assert!(d.min > 20.0 && d.max < 150.0, "{d:?}");
        // 1 % loss outside outages.
        let loss = Summary::of(f.iter().filter(|s| s.outage_ms == 0).map(|s| s.loss)).unwrap();
        assert!((loss.mean - 0.01).abs() < 1e-9, "{loss:?}");
        assert!(
            f.iter()
                .all(|s| (s.capacity_mbps - 1000.0).abs() < 1e-6 || s.outage_ms > 0)
        );
    }
    let per_minute = handovers as f64 / minutes;
    eprintln!("{per_minute:.2} handovers per minute");
    assert!(per_minute <= 1.0, "{per_minute}");
}

/// The figures of a StarryNet-like path: the topology (serving satellites, delay, hop count)
/// changes only at 10-s updates; a served second loses `1 - 0.99^(hops + 2)`; a change of
/// serving satellite is followed by a 2-s outage in both directions.
fn check_starrynet_path(r: &rtc_client::scenario::Realization) {
    let orbit = r.orbit.as_ref().expect("an orbit path");
    for (s, pair) in orbit.one_way_ms.windows(2).enumerate() {
        if (s + 1) % 10 != 0 {
            assert_eq!(
                pair[0],
                pair[1],
                "delay changed between updates at s {}",
                s + 1
            );
            assert_eq!(orbit.isl_hops[s], orbit.isl_hops[s + 1]);
        }
    }
    for h in r.timeline.instants_ms() {
        assert_eq!(
            h % 10_000,
            0,
            "a handover at {h} ms is not on the 10-s update grid"
        );
    }
    let (f, v) = support::seconds(r);
    let outages: Vec<u64> = orbit.outage_seconds();
    for (s, second) in f.iter().enumerate() {
        let served = !outages.contains(&(s as u64));
        let after_handover = r
            .timeline
            .instants_ms()
            .iter()
            .any(|&h| (h..h + 2_000).contains(&(s as u64 * 1000)));
        if after_handover {
            assert_eq!(second.outage_ms, 1000, "s {s}: the routing outage");
            assert_eq!(v[s].outage_ms, 1000, "s {s}: both directions");
        } else if served {
            let hops = orbit.isl_hops[s].expect("a served second has a path");
            let expected = 1.0 - 0.99f64.powi(hops as i32 + 2);
            assert!(
                (second.loss - expected).abs() < 1e-9,
                "s {s}: loss {} against {expected} for {hops} hops",
                second.loss
            );
            assert!((second.capacity_mbps - 5000.0).abs() < 1e-6);
        } else {
            assert_eq!(second.outage_ms, 1000, "s {s}: no satellite, no route");
        }
    }
}

#[test]
fn starrynet_sparse_changes_its_topology_every_ten_seconds_and_loses_one_percent_per_link() {
    let mut served = 0usize;
    for seed in 1..=4 {
        let r = support::realize("starrynet-sparse", seed, 600);
        let orbit = r.orbit.as_ref().expect("an orbit path");
        assert_eq!(orbit.satellites, 25);
        assert_eq!(
            (orbit.local.as_str(), orbit.peer.as_str()),
            ("London", "Paris")
        );
        served += 600 - orbit.outage_seconds().len();
        eprintln!(
            "seed {seed}: {} handovers, {} s unserved",
            r.timeline.instants_ms().len(),
            orbit.outage_seconds().len()
        );
        check_starrynet_path(&r);
    }
    // 25 satellites above a 25-degree mask leave most of a call unserved, but not all of it.
    assert!(
        served > 0 && served < 4 * 600 / 2,
        "{served} s served of 2400"
    );
}

#[test]
fn the_paper_sized_starrynet_variant_keeps_the_link_model_over_80_to_100_satellites() {
    let path = support::paths()
        .root
        .join("docs/experiments/starrynet/starrynet-paper.toml");
    let scenario =
        rtc_client::scenario::Scenario::load(path.to_str().unwrap(), &support::paths()).unwrap();
    for seed in 1..=2 {
        let r = scenario.realize(seed, Duration::from_secs(600)).unwrap();
        let orbit = r.orbit.as_ref().expect("an orbit path");
        assert!((80..=100).contains(&orbit.satellites));
        check_starrynet_path(&r);
    }
}

#[test]
fn terrestrial_capacities_sit_in_the_range_of_the_traces_they_were_fitted_to() {
    // Per-second medians over many calls against the fitted medians (header figures): LTE up
    // 4.01 and down 5.62 Mbit/s (per-trace means 1.9-13.3 up, 4.6-16.7 down), 5G 26.7.
    for (name, lo, hi) in [
        ("terrestrial-lte", 1.0, 20.0),
        ("terrestrial-5g", 10.0, 60.0),
        ("terrestrial-broadband", 16.0, 24.0),
    ] {
        let mut medians = Vec::new();
        for seed in 1..=8 {
            let r = support::realize(name, seed, 300);
            let (f, _) = support::seconds(&r);
            medians.push(Summary::of(f.iter().map(|s| s.capacity_mbps)).unwrap().p50);
        }
        let m = Summary::of(medians.iter().copied()).unwrap();
        eprintln!("{name}: per-call forward median capacity {m:?}");
        assert!((lo..=hi).contains(&m.p50), "{name}: {m:?}");
    }
}

#[test]
fn the_oracle_forecast_is_the_call_s_own_handover_timeline() {
    use handover_predictor::HandoverSource;
    let r = support::realize("starlink", 9, 600);
    let epoch = std::time::Instant::now();
    let mut oracle = r.timeline.oracle(epoch);
    let bits = r.timeline.per_second(600);
    for t0 in [0u64, 100, 333] {
        let f = oracle.forecast(epoch + Duration::from_secs(t0)).unwrap();
        let expected: Vec<u8> = (0..120)
            .map(|k| bits.get(t0 as usize + k).copied().unwrap_or(0))
            .collect();
        let got: Vec<u8> = f.handover().to_vec();
        assert_eq!(got, expected, "t0 = {t0}");
    }
}

#[test]
fn an_orbit_source_with_the_starlink_policy_hands_over_only_at_slot_boundaries() {
    // The shipped Starlink generation-1 catalogue over Louvain-la-Neuve (one of the sites the
    // policy was calibrated at), slot-stepped capacity, slotted delay.
    let text = std::fs::read_to_string(support::paths().scenario_file("starlink"))
        .unwrap()
        .replace(
            "[handovers]\nsource = \"slots\"\nprobability = 0.74",
            "[handovers]\nsource = \"orbit\"\npolicy = \"starlink\"\nmin_elevation_deg = 25.0\n\
             [handovers.constellation]\ntle = \"traces/tle/starlink-gen1.tle\"\n\
             [handovers.endpoints]\nlocal = \"London\"\npeer = \"Paris\"",
        );
    assert!(text.contains("policy = \"starlink\""));
    let s =
        rtc_client::scenario::Scenario::parse(&text, "orbit-starlink", &support::paths()).unwrap();
    let r = s.realize(1, Duration::from_secs(180)).unwrap();
    assert!(r.timeline.slotted);
    assert_eq!(r.timeline.boundaries_ms.len(), 12);
    assert!(!r.timeline.handovers.is_empty());
    for h in &r.timeline.handovers {
        assert!(r.timeline.boundaries_ms.contains(&h.at_ms), "{h:?}");
        assert!(h.from.is_some() && h.to.is_some());
    }
}

//! The `timed` policy in simulated calls: the forecast's predicted handovers reach the plugin's
//! handover-timed actions, which are applied around them, counted in telemetry, and moved by
//! the simulated forecast timing error.

mod scenario_support;

use pacer::telemetry::ActionsRecord;
use rtc_client::call::{ActionSet, PolicyChoice, TimedActions, TimingError};
use rtc_client::forecast::ForecastSpec;
use rtc_client::scenario::{Realization, Scenario};
use rtc_client::sim::{CallConfig, CallResult, run_call};
use std::time::{Duration, Instant};

const SECONDS: u64 = 90;

fn timed(actions: ActionSet) -> PolicyChoice {
    PolicyChoice::Timed {
        actions: TimedActions::from_set(actions),
        limit: None,
    }
}

fn starlink(policy: PolicyChoice, timing_error: TimingError) -> (CallConfig, CallResult) {
    let scenario = Scenario::load("starlink", &scenario_support::paths()).expect("starlink");
    let realization = scenario
        .realize(7, Duration::from_secs(SECONDS))
        .expect("realised");
    let mut config = CallConfig::from_realization(&realization, policy);
    config.decision_interval = Duration::from_secs(30);
    config.timing_error = timing_error;
    let result = run_call(&config, Instant::now()).expect("the call runs");
    (config, result)
}

fn actions(result: &CallResult) -> Vec<ActionsRecord> {
    result
        .telemetry
        .iter()
        .map(|r| r.actions.expect("a timed call records its actions"))
        .collect()
}

#[test]
fn a_timed_call_holds_guards_and_boosts_once_per_forecast_handover_and_records_it() {
    // The onset tracker off: it would keep the hold and the boost off for the first boundaries
    // (the tracker has its own test below).
    let mut untracked = ActionSet::ALL.config();
    untracked.onset.enabled = false;
    let policy = PolicyChoice::Timed {
        actions: TimedActions::with_config("untracked", untracked).expect("a valid config"),
        limit: None,
    };
    let (config, result) = starlink(policy, TimingError::default());
    let handovers = config
        .timeline
        .handovers
        .iter()
        .filter(|h| h.at_ms < SECONDS * 1000)
        .count() as u64;
    assert!(handovers >= 2, "{handovers} handovers in {SECONDS} s");
    let records = actions(&result);
    let applied = |f: fn(&ActionsRecord) -> u64| records.iter().map(f).sum::<u64>();
    // The oracle forecasts each handover once, in the decision interval that contains it.
    assert_eq!(applied(|a| a.hold.applied), handovers);
    assert_eq!(applied(|a| a.guard.applied), handovers);
    assert_eq!(applied(|a| a.boost.applied), handovers);
    assert_eq!(applied(|a| a.keyframe_block.applied), 0);
    // Each hold lasts its configured window (the plugin's default), whole.
    let hold_ms = ActionSet::ALL.config().hold.duration_ms;
    assert_eq!(applied(|a| a.hold.total_ms), handovers * hold_ms);
    for record in &result.telemetry {
        assert_eq!(record.policy, "timed:untracked");
        record.validate().expect("a valid record");
    }
}

#[test]
fn a_call_without_actions_records_none_and_a_subset_applies_only_its_own() {
    let (_, plain) = starlink(PolicyChoice::Heuristic, TimingError::default());
    assert!(plain.telemetry.iter().all(|r| r.actions.is_none()));

    let guard_only = ActionSet::parse("guard").unwrap();
    let (_, result) = starlink(timed(guard_only), TimingError::default());
    let records = actions(&result);
    assert!(records.iter().any(|a| a.guard.applied > 0));
    assert!(
        records
            .iter()
            .all(|a| a.hold.applied == 0 && a.boost.applied == 0)
    );
    assert!(result.telemetry.iter().all(|r| r.policy == "timed:guard"));
}

#[test]
fn the_timing_error_moves_the_actions_but_applies_each_as_often_and_the_call_stays_deterministic() {
    let exact = actions(&starlink(timed(ActionSet::ALL), TimingError::default()).1);
    for error in [
        TimingError {
            offset_ms: -50,
            jitter_ms: 0,
        },
        TimingError {
            offset_ms: 50,
            jitter_ms: 50,
        },
    ] {
        let (_, first) = starlink(timed(ActionSet::ALL), error);
        let (_, again) = starlink(timed(ActionSet::ALL), error);
        let moved = actions(&first);
        let total =
            |records: &[ActionsRecord]| -> u64 { records.iter().map(|a| a.guard.applied).sum() };
        assert_eq!(total(&moved), total(&exact), "{error:?}");
        assert_eq!(moved, actions(&again), "{error:?}");
        assert_eq!(first.qoe.freeze_count, again.qoe.freeze_count, "{error:?}");
    }
}

#[test]
fn the_onset_tracker_finds_a_forecast_50_ms_off_and_moves_the_windows_by_it() {
    let last_shift = |error: TimingError| -> i64 {
        let (_, result) = starlink(timed(ActionSet::ALL), error);
        actions(&result).last().expect("records").timing_shift_ms
    };
    let early = |offset_ms| TimingError {
        offset_ms,
        jitter_ms: 0,
    };
    let exact = last_shift(TimingError::default());
    assert!(exact.abs() <= 20, "exact forecast, shift {exact} ms");
    // Early by 50 ms: the loss begins 50 ms after each predicted instant.
    let moved = last_shift(early(-50));
    assert!((moved - exact - 50).abs() <= 20, "{moved} against {exact}");
    let moved = last_shift(early(50));
    assert!((moved - exact + 50).abs() <= 20, "{moved} against {exact}");
}

#[test]
fn the_shipped_action_files_read_and_the_default_one_is_the_timed_policy() {
    let root = scenario_support::paths().root;
    let default = TimedActions::from_file(&root.join("traces/actions/default.toml"))
        .expect("traces/actions/default.toml reads");
    assert_eq!(default.config(), TimedActions::all().config());
    assert_eq!(default.label(), Some("default.toml"));
    let capped = TimedActions::from_file(&root.join("traces/actions/playout300+discardable.toml"))
        .expect("traces/actions/playout300+discardable.toml reads");
    assert_eq!(
        capped.config(),
        pacer::ActionProfile::named("playout300+discardable")
            .unwrap()
            .config,
        "the file runs the path menu's profile"
    );
    for profile in [
        "playout300-follow500+discardable",
        "playout300-follow500+discardable+floor100",
        "playout300-follow500+discardable+floor100-weighed",
        "playout300-follow500+discardable+floor100-weighed+phase100",
        "playout300-follow500+discardable+floor100-weighed+phase100+gate-open",
    ] {
        let file = format!("traces/actions/{profile}.toml");
        let actions =
            TimedActions::from_file(&root.join(&file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            actions.config(),
            pacer::ActionProfile::named(profile).unwrap().config,
            "{file} runs the path menu's profile"
        );
    }
    let shipped = ["traces/actions", "docs/experiments/hold-windows"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).expect("an action directory"));
    for entry in shipped {
        let path = entry.expect("a directory entry").path();
        TimedActions::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// One call over `realization` under the action file `file` over a 200-ms queue limit, its
/// telemetry every `interval_s` seconds, the scenario's truth as the forecast.
fn timed_file_call(
    realization: &Realization,
    file: &std::path::Path,
    interval_s: u64,
) -> CallResult {
    timed_file_call_with(realization, file, interval_s, ForecastSpec::Oracle)
}

/// [`timed_file_call`] with the forecast `handover`.
fn timed_file_call_with(
    realization: &Realization,
    file: &std::path::Path,
    interval_s: u64,
    handover: ForecastSpec,
) -> CallResult {
    let actions = TimedActions::from_file(file).expect("the action file reads");
    let policy = PolicyChoice::Timed {
        actions,
        limit: Some(Box::new(PolicyChoice::Fixed(Duration::from_millis(200)))),
    };
    let mut config = CallConfig::from_realization(realization, policy);
    config.decision_interval = Duration::from_secs(interval_s);
    config.handover = handover;
    run_call(&config, Instant::now()).expect("the call runs")
}

/// The path menu measures under the weighed floor (`pacer::policy::PATH_MEASURE`) on the
/// promise that the floor is not weighed before 30 s of frames: until then the call is the
/// followed raise's (the same QoE, pacer, estimator and action records), and only afterwards
/// may the floor apply.
#[test]
fn the_weighed_floor_is_the_followed_raise_until_it_has_weighed_thirty_seconds_of_frames() {
    let root = scenario_support::paths().root;
    let scenario = Scenario::load("lagos-trace", &scenario_support::paths()).expect("lagos-trace");
    let realization = scenario
        .realize(1, Duration::from_secs(SECONDS))
        .expect("realised");
    let run = |file: &str| timed_file_call(&realization, &root.join(file), 30);
    let followed = run("traces/actions/playout300-follow500+discardable.toml");
    let weighed = run("traces/actions/playout300-follow500+discardable+floor100-weighed.toml");
    let (first_followed, first_weighed) = (&followed.telemetry[0], &weighed.telemetry[0]);
    assert_eq!(first_weighed.duration_ms, 30_000);
    assert_eq!(first_weighed.qoe, first_followed.qoe);
    assert_eq!(first_weighed.pacer, first_followed.pacer);
    assert_eq!(first_weighed.gcc, first_followed.gcc);
    assert_eq!(first_weighed.actions, first_followed.actions);
    assert_eq!(
        first_weighed.actions.map(|a| a.floored_frames),
        Some(0),
        "no frame floored in the first 30 s"
    );
    let floored: u64 = actions(&weighed).iter().map(|a| a.floored_frames).sum();
    assert!(floored > 0, "the floor applies once weighed on this call");
    assert_ne!(
        weighed.telemetry[1..]
            .iter()
            .map(|r| r.qoe.e2e_delay_p50_ms)
            .collect::<Vec<_>>(),
        followed.telemetry[1..]
            .iter()
            .map(|r| r.qoe.e2e_delay_p50_ms)
            .collect::<Vec<_>>(),
        "and then the calls differ"
    );
}

/// A receiver gate open until it has measured the boundaries (`receiver_gate.open_until_measured`)
/// raises a Starlink call's first boundary, which the shut gate leaves without the raise for want
/// of evidence, and closes after one window where the boundaries lose nothing
/// (docs/experiments/gate-start-2026-12-06.md).
#[test]
fn a_gate_open_until_measured_raises_the_first_boundaries_and_closes_where_they_lose_nothing() {
    let paths = scenario_support::paths();
    // The calibrated forecast, as the experiments ran: it predicts every slot boundary, so the
    // first boundary of the call is predicted whether or not it is a handover.
    let run = |scenario: &str, seconds: u64, file: &str| {
        let realization = Scenario::load(scenario, &paths)
            .unwrap_or_else(|e| panic!("{scenario}: {e}"))
            .realize(1, Duration::from_secs(seconds))
            .expect("realised");
        timed_file_call_with(
            &realization,
            &paths.root.join(file),
            60,
            ForecastSpec::Calibrated,
        )
    };
    let shut = "traces/actions/playout300-follow500+discardable+floor100-weighed+phase100.toml";
    let open =
        "traces/actions/playout300-follow500+discardable+floor100-weighed+phase100+gate-open.toml";
    let raised = |r: &CallResult| {
        actions(r)
            .iter()
            .map(|a| a.playout.applied)
            .collect::<Vec<_>>()
    };
    let (shut_starlink, open_starlink) = (run("starlink", 120, shut), run("starlink", 120, open));
    assert_eq!(
        raised(&open_starlink),
        vec![4, 4],
        "every boundary raised from the first"
    );
    assert_eq!(
        raised(&shut_starlink),
        vec![3, 4],
        "the first one goes without"
    );
    let open_leocc = raised(&run("leocc-trace", 180, open));
    assert_eq!(
        open_leocc,
        vec![1, 0, 0],
        "one window before the gate closes"
    );
    assert_eq!(raised(&run("leocc-trace", 180, shut)), vec![0, 0, 0]);
}

/// The phase raise (`playout.phase_raise_ms`) finds no lossy phase on the starlink scenario,
/// whose loss comes at the boundaries, and leaves its call the weighed floor's; over the mmsys24
/// Lagos ISL replay, whose loss comes 4-5 s after them, it cuts the freezes
/// (docs/experiments/mmsys24-2026-12-06.md, section 6).
#[test]
fn the_phase_raise_leaves_boundary_loss_alone_and_cuts_freezes_where_the_loss_comes_later() {
    let paths = scenario_support::paths();
    let run = |scenario: &str, seed: u64, seconds: u64, file: &str| {
        let realization = Scenario::load(scenario, &paths)
            .unwrap_or_else(|e| panic!("{scenario}: {e}"))
            .realize(seed, Duration::from_secs(seconds))
            .expect("realised");
        timed_file_call(&realization, &paths.root.join(file), 60)
    };
    let weighed = "traces/actions/playout300-follow500+discardable+floor100-weighed.toml";
    let phased = "traces/actions/playout300-follow500+discardable+floor100-weighed+phase100.toml";
    let qoe = |r: &CallResult| r.telemetry.iter().map(|t| t.qoe).collect::<Vec<_>>();
    let phased_frames = |r: &CallResult| actions(r).iter().map(|a| a.phased_frames).sum::<u64>();
    let starlink = run("starlink", 7, 300, phased);
    assert_eq!(qoe(&starlink), qoe(&run("starlink", 7, 300, weighed)));
    assert_eq!(
        phased_frames(&starlink),
        0,
        "no phase found, no frame in one"
    );
    if scenario_support::shared_data("the phase raise over the Lagos ISL replay").is_none() {
        return;
    }
    let lagos = paths
        .root
        .join("docs/experiments/mmsys24/starlink-lagos-ping.toml")
        .display()
        .to_string();
    let freezes = |r: &CallResult| r.telemetry.iter().map(|t| t.qoe.freeze_count).sum::<u64>();
    let replay = run(&lagos, 9302, 300, phased);
    let (without, with) = (freezes(&run(&lagos, 9302, 300, weighed)), freezes(&replay));
    assert!(
        2 * with <= without,
        "{with} freezes with the phase raise, {without} without"
    );
    let first = actions(&replay)[..2]
        .iter()
        .map(|a| a.phased_frames)
        .sum::<u64>();
    assert_eq!(first, 0, "the phase needs eight slots of evidence");
    // At 30 frames a second: a half-second bin or more in most of the last twelve 15-s slots,
    // and never a whole slot.
    let later = phased_frames(&replay);
    assert!(
        (150..=3_000).contains(&later),
        "{later} frames in the phase windows"
    );
}

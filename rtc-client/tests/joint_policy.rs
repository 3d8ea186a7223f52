//! Joint policies in simulated calls: at each decision the policy's action profile replaces the
//! schedule's configuration, the actions applied follow it, and telemetry records the profile
//! and what the call had measured (docs/architecture.md, "Queue policies and decisions", joint
//! policies).

mod scenario_support;

use pacer::ActionProfile;
use pacer::telemetry::IntervalRecord;
use rtc_client::call::PolicyChoice;
use rtc_client::scenario::Scenario;
use rtc_client::sim::{CallConfig, CallResult, run_call};
use std::time::{Duration, Instant};

const SECONDS: u64 = 240;

fn call(scenario: &str, policy: PolicyChoice) -> CallResult {
    let scenario = Scenario::load(scenario, &scenario_support::paths()).expect("a scenario");
    let realization = scenario
        .realize(11, Duration::from_secs(SECONDS))
        .expect("realised");
    let mut config = CallConfig::from_realization(&realization, policy);
    config.decision_interval = Duration::from_secs(15);
    run_call(&config, Instant::now()).expect("the call runs")
}

/// Every interval's profile, as the menu's.
fn profiles(records: &[IntervalRecord]) -> Vec<ActionProfile> {
    records
        .iter()
        .map(|r| {
            let name = r
                .profile
                .as_deref()
                .expect("a joint call records its profile");
            ActionProfile::named(name).expect("a menu profile")
        })
        .collect()
}

#[test]
fn each_interval_applies_the_profile_drawn_for_it_and_records_it() {
    let result = call("starlink", PolicyChoice::RandomJoint);
    let records = &result.telemetry;
    assert_eq!(records.len() as u64, SECONDS / 15);
    let drawn = profiles(records);
    let names: std::collections::BTreeSet<&str> = drawn.iter().map(|p| p.name).collect();
    assert!(names.len() >= 3, "{names:?}");
    let (mut held, mut guarded) = (0, 0);
    for (record, profile) in records.iter().zip(&drawn) {
        assert_eq!(record.policy, "random-joint");
        record.validate().expect("a valid record");
        let actions = record.actions.expect("a joint call records its actions");
        let config = profile.config;
        // A window that began in the previous interval may end in this one, so the counts of
        // windows started are what follows the profile.
        if !config.hold.enabled {
            assert_eq!(actions.hold.applied, 0, "{}: {actions:?}", profile.name);
        }
        if !config.guard.enabled {
            assert_eq!(actions.guard.applied, 0, "{}: {actions:?}", profile.name);
        }
        if !config.boost.enabled {
            assert_eq!(actions.boost.applied, 0, "{}: {actions:?}", profile.name);
        }
        held += actions.hold.applied;
        guarded += actions.guard.applied;
    }
    assert!(held > 0, "some profile with a hold met a handover");
    assert!(guarded > 0, "some profile with the guard met a handover");
    // What the policy read: nothing at the first decision, then the last interval's loss and,
    // once boundary packets were reported, the hold gate's excess loss.
    let inputs: Vec<_> = records.iter().map(|r| r.inputs.expect("inputs")).collect();
    assert_eq!(inputs[0].previous_loss_pct, None);
    assert_eq!(inputs[0].boundary_excess_loss_pct, None);
    for (r, next) in records.iter().zip(&inputs[1..]) {
        assert_eq!(next.previous_loss_pct, Some(r.qoe.packet_loss_pct));
    }
    assert!(inputs.iter().any(|i| i.boundary_excess_loss_pct.is_some()));
}

#[test]
fn a_joint_call_is_deterministic_and_a_queue_limit_call_writes_no_profile() {
    let first = call("starlink", PolicyChoice::RandomJoint);
    let again = call("starlink", PolicyChoice::RandomJoint);
    assert_eq!(first.telemetry, again.telemetry);
    let plain = call("starlink", PolicyChoice::Random);
    assert!(
        plain
            .telemetry
            .iter()
            .all(|r| r.profile.is_none() && r.inputs.is_none() && r.actions.is_none())
    );
    // The joint policy draws the plain one's limits (the same seed stream).
    let limits = |r: &CallResult| r.telemetry.iter().map(|i| i.action_ms).collect::<Vec<_>>();
    assert_eq!(limits(&first), limits(&plain));
}

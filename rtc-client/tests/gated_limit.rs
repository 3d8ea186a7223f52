//! The forecast-gated queue limit (`gated:<ms>[/<ms>]`) in simulated calls: the short limit
//! where the forecast holds a handover, the quiet one where it holds none, and the same call as
//! the plain limit it runs.

mod scenario_support;

use pacer::Gated;
use rtc_client::call::PolicyChoice;
use rtc_client::forecast::ForecastSpec;
use rtc_client::scenario::Scenario;
use rtc_client::sim::{CallConfig, CallResult, run_call};
use std::time::{Duration, Instant};

const SECONDS: u64 = 120;
const INTERVAL_S: u64 = 20;

fn call(scenario: &str, seed: u64, policy: PolicyChoice) -> CallResult {
    let scenario = Scenario::load(scenario, &scenario_support::paths()).expect("a scenario");
    let realization = scenario
        .realize(seed, Duration::from_secs(SECONDS))
        .expect("realised");
    let mut config = CallConfig::from_realization(&realization, policy);
    config.decision_interval = Duration::from_secs(INTERVAL_S);
    config.handover = ForecastSpec::Calibrated;
    run_call(&config, Instant::now()).expect("the call runs")
}

fn gated(busy_ms: u64, quiet_ms: u64) -> PolicyChoice {
    PolicyChoice::Gated(Gated::with_quiet(
        Duration::from_millis(busy_ms),
        Duration::from_millis(quiet_ms),
    ))
}

fn limits(result: &CallResult) -> Vec<u64> {
    result.telemetry.iter().map(|r| r.action_ms).collect()
}

/// What the two calls did, interval by interval, that the limit's name does not change.
fn assert_same_call(a: &CallResult, b: &CallResult) {
    assert_eq!(a.qoe, b.qoe);
    assert_eq!(a.telemetry.len(), b.telemetry.len());
    for (x, y) in a.telemetry.iter().zip(&b.telemetry) {
        assert_eq!(x.action_ms, y.action_ms);
        assert_eq!(x.qoe, y.qoe);
        assert_eq!(x.pacer, y.pacer);
        assert_eq!(x.gcc, y.gcc);
    }
}

#[test]
fn without_a_forecast_handover_a_quiet_limit_of_2000_ms_is_libwebrtcs_sender() {
    let gated = call("terrestrial-lte", 9326, gated(200, 2000));
    let default = call("terrestrial-lte", 9326, PolicyChoice::Default);
    assert!(
        gated
            .telemetry
            .iter()
            .all(|r| r.forecast.handover.count() == 0),
        "the calibrated forecast predicts nothing on a terrestrial path"
    );
    assert_eq!(limits(&gated), vec![2000; (SECONDS / INTERVAL_S) as usize]);
    assert!(gated.telemetry.iter().all(|r| r.policy == "gated:200/2000"));
    assert_same_call(&gated, &default);
}

#[test]
fn where_every_interval_forecasts_a_handover_the_gated_limit_is_the_short_one() {
    let gated = call("starlink", 7, gated(200, 500));
    let fixed = call(
        "starlink",
        7,
        PolicyChoice::Fixed(Duration::from_millis(200)),
    );
    assert!(
        gated
            .telemetry
            .iter()
            .all(|r| r.forecast.handover.count() > 0)
    );
    assert_eq!(limits(&gated), vec![200; (SECONDS / INTERVAL_S) as usize]);
    assert_same_call(&gated, &fixed);
}

#[test]
fn on_a_sparse_constellation_each_interval_takes_the_limit_its_forecast_asks_for() {
    let policy = PolicyChoice::Gated(Gated::new(Duration::from_millis(200)));
    let mut both = [false, false];
    for seed in [9300, 9301, 9302] {
        let result = call("sparse-leo", seed, policy.clone());
        for record in &result.telemetry {
            assert_eq!(record.policy, "gated:200");
            let busy = record.forecast.handover.count() > 0;
            assert_eq!(record.action_ms, if busy { 200 } else { 500 });
            both[usize::from(busy)] = true;
        }
    }
    assert_eq!(
        both,
        [true, true],
        "the calls had intervals with and without a forecast handover"
    );
}

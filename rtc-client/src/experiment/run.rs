//! Running many calls at once: a parallel map over std threads whose results come back in
//! input order, and the one-call job both `experiment` and `collect` hand it.
//!
//! Why ordered: the report must be byte-identical whatever the number of threads, so results
//! are put back in the order of the plan (scenario, policy, seed), never in completion order.

use crate::call::{PolicyChoice, SenderOverrides, TimingError};
use crate::forecast::ForecastSpec;
use crate::media::playout::CompletionModel;
use crate::scenario::{Scenario, ScenarioError};
use crate::sim::{CallConfig, CallResult, SimError, run_call};
use pacer::telemetry::{TelemetryError, TelemetryWriter};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Maps `work` over `items` on `threads` worker threads (at least one, at most one per item).
///
/// Each worker takes the next unclaimed item, so long and short jobs balance out. `on_done` is
/// called (from the worker) after each item finishes, with the number finished so far, for a
/// progress bar. The first error stops the workers from claiming new items; the error returned
/// is the one of the lowest-indexed failed item, so the outcome does not depend on timing
/// either. On success the results are in the order of `items`.
pub fn parallel_map<T, R, E, W, P>(
    items: &[T],
    threads: usize,
    work: W,
    on_done: P,
) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
    W: Fn(usize, &T) -> Result<R, E> + Sync,
    P: Fn(usize) + Sync,
{
    let slots: Vec<Mutex<Option<Result<R, E>>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let threads = threads.clamp(1, items.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(index) else { break };
                    let result = work(index, item);
                    if result.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    *slots[index].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
                    on_done(finished.fetch_add(1, Ordering::Relaxed) + 1);
                }
            });
        }
    });
    let mut results = Vec::with_capacity(items.len());
    for slot in slots {
        match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok(value)) => results.push(value),
            Some(Err(error)) => return Err(error),
            // Never claimed: an item failed before it; that error is further on.
            None => continue,
        }
    }
    Ok(results)
}

/// One call of a plan: which scenario, which policy, which seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellCall {
    /// Index into the plan's scenarios.
    pub scenario: usize,
    /// Index into the plan's policies.
    pub policy: usize,
    /// The call's seed (the plan's base seed plus the call's index within its cell).
    pub seed: u64,
}

/// What every call of a plan shares.
#[derive(Debug, Clone, PartialEq)]
pub struct CallSettings {
    /// Call length.
    pub duration: Duration,
    /// Decision interval.
    pub interval: Duration,
    /// Where the policy's handover forecast comes from.
    pub handover: ForecastSpec,
    /// The sender options the command line sets (`--bwe`, `--nack`, `--cwnd`,
    /// `--keyframe-flush`); each call lays them over its scenario file's `[sender]` table and the
    /// defaults.
    pub sender: SenderOverrides,
    /// The error added to the predicted handover instants the timed actions see.
    pub timing_error: TimingError,
    /// The receiver's base minimum playout delay.
    pub playout_floor: Duration,
    /// Whether the receiver knows the RTCP round-trip time (a two-way call).
    pub receiver_rtt: bool,
    /// Whether the receiver raises its own minimum playout delay from its own forecast.
    pub receiver_raise: bool,
    /// How the receiver learns when a frame is expected to be complete.
    pub completion: CompletionModel,
}

/// Why one call of a plan failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The scenario could not be realised for the seed.
    #[error("cannot build the scenario {scenario} for seed {seed}: {source}")]
    Scenario {
        /// The scenario's name.
        scenario: String,
        /// The seed.
        seed: u64,
        /// Why.
        source: ScenarioError,
    },
    /// The simulation failed.
    #[error("the call over {scenario} with seed {seed} failed: {source}")]
    Sim {
        /// The scenario's name.
        scenario: String,
        /// The seed.
        seed: u64,
        /// Why.
        source: SimError,
    },
    /// A telemetry record was refused by the writer.
    #[error("cannot encode the telemetry of {scenario} seed {seed}: {source}")]
    Telemetry {
        /// The scenario's name.
        scenario: String,
        /// The seed.
        seed: u64,
        /// Why.
        source: TelemetryError,
    },
}

/// Simulates one call exactly as `rtc-client sim` does (same realisation, same
/// [`CallConfig::from_realization`], same decision interval and handover source), so an experiment's call can be
/// reproduced on its own with `sim --scenario S --policy P --seed N --duration D`.
pub fn simulate(
    scenario: &Scenario,
    policy: PolicyChoice,
    seed: u64,
    settings: &CallSettings,
    epoch: Instant,
) -> Result<CallResult, CallError> {
    let realization = scenario
        .realize(seed, settings.duration)
        .map_err(|source| CallError::Scenario {
            scenario: scenario.name().to_owned(),
            seed,
            source,
        })?;
    let mut config = CallConfig::from_realization(&realization, policy);
    config.decision_interval = settings.interval;
    config.handover = settings.handover.clone();
    config.timing_error = settings.timing_error;
    config.playout_floor = settings.playout_floor;
    config.receiver_rtt = settings.receiver_rtt;
    config.receiver_raise = settings.receiver_raise;
    config.completion = settings.completion;
    config.set_sender(realization.sender.overridden_by(&settings.sender));
    run_call(&config, epoch).map_err(|source| CallError::Sim {
        scenario: scenario.name().to_owned(),
        seed,
        source,
    })
}

/// The call's telemetry file content: the bytes `rtc-client sim --telemetry` writes for it (one
/// `leopace.interval.v1` line per interval, through the same [`TelemetryWriter`]).
pub fn telemetry_bytes(
    scenario: &Scenario,
    seed: u64,
    result: &CallResult,
) -> Result<Vec<u8>, CallError> {
    let mut writer = TelemetryWriter::new(Vec::new());
    for record in &result.telemetry {
        writer
            .write(record)
            .map_err(|source| CallError::Telemetry {
                scenario: scenario.name().to_owned(),
                seed,
                source,
            })?;
    }
    Ok(writer.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_input_order_whatever_the_thread_count() {
        let items: Vec<u64> = (0..50).collect();
        for threads in [1, 2, 7, 100] {
            let out: Result<Vec<u64>, ()> = parallel_map(
                &items,
                threads,
                |i, &x| {
                    // Uneven work so completion order differs from input order.
                    std::thread::sleep(Duration::from_micros((50 - x) * 20));
                    Ok(x * 10 + i as u64)
                },
                |_| {},
            );
            let expected: Vec<u64> = (0..50).map(|x| x * 11).collect();
            assert_eq!(out.unwrap(), expected, "{threads} threads");
        }
    }

    #[test]
    fn progress_counts_every_item_once() {
        let items = [1, 2, 3, 4, 5];
        let seen = Mutex::new(Vec::new());
        let out: Result<Vec<i32>, ()> =
            parallel_map(&items, 3, |_, &x| Ok(x), |n| seen.lock().unwrap().push(n));
        assert_eq!(out.unwrap(), items);
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn the_lowest_indexed_error_wins_and_an_empty_plan_is_empty() {
        let items: Vec<usize> = (0..20).collect();
        let out = parallel_map(
            &items,
            1,
            |_, &x| if x == 3 || x == 4 { Err(x) } else { Ok(x) },
            |_| {},
        );
        assert_eq!(out, Err(3));
        let none: Result<Vec<u8>, ()> = parallel_map(&[] as &[u8], 4, |_, &x| Ok(x), |_| {});
        assert_eq!(none, Ok(Vec::new()));
    }
}

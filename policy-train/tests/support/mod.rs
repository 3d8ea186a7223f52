//! Shared harness of the `policy-train` integration tests: a small telemetry set generated in
//! code, temporary directories, and running the `policy-train` binary.
//!
//! The generated logs hold five handover patterns, each a group of intervals whose forecast and
//! observed handovers agree, each tried with every one of the 15 collection limits the same number
//! of times (in a seeded shuffled order, as a random collection run would pick them but
//! balanced), with QoE numbers made so that the reward `2X - F` peaks at one known limit per
//! pattern ([`GROUPS`]). The expert must find those limits again.

#![allow(dead_code)]

use pacer::forecast::{ForecastSource, HORIZON_STEPS, HandoverSteps};
use pacer::policy::COLLECTION_ACTIONS_MS;
use pacer::telemetry::{
    ForecastRecord, GccRecord, IntervalRecord, ObservedRecord, PacerRecord, QoeRecord, SCHEMA,
    TelemetryWriter,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A handover pattern of the generated logs and the limit its rewards are made to favour.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    /// A short name, used in file names.
    pub name: &'static str,
    /// The scenario written in its records.
    pub scenario: &'static str,
    /// The limit whose reward is best, ms.
    pub best_ms: u64,
}

/// The patterns: no handover (a terrestrial path), one handover, two about 50 s apart, three to
/// five about 24 s apart (mostly four), and eight on Starlink's 15-s slots.
///
/// "One" and "two" form one designed group (1-2 handovers -> 600 ms) but are two clusters for
/// k-means: with fewer than two handovers the gap feature is the whole horizon, so one handover
/// looks like none with a count of one, and two 50 s apart look like neither. With the default
/// k = 5 each pattern gets its own cluster.
pub const GROUPS: [Group; 5] = [
    Group {
        name: "none",
        scenario: "terrestrial-lte",
        best_ms: 500,
    },
    Group {
        name: "one",
        scenario: "sparse-leo",
        best_ms: 600,
    },
    Group {
        name: "two",
        scenario: "sparse-leo",
        best_ms: 600,
    },
    Group {
        name: "few",
        scenario: "starlink",
        best_ms: 900,
    },
    Group {
        name: "slots",
        scenario: "starlink",
        best_ms: 4000,
    },
];

/// Calls per group (one file each).
pub const CALLS_PER_GROUP: usize = 2;
/// How many times each group tries each of the 15 collection limits, over its calls.
pub const TRIES_PER_LIMIT: usize = 4;
/// Full (120-s) intervals per call.
pub const FULL_PER_CALL: usize = COLLECTION_ACTIONS_MS.len() * TRIES_PER_LIMIT / CALLS_PER_GROUP;
/// Every call ends with one short (30-s) interval, which training leaves out.
pub const SHORT_PER_CALL: usize = 1;
/// Files written.
pub const FILES: usize = GROUPS.len() * CALLS_PER_GROUP;
/// Records written.
pub const INTERVALS: usize = FILES * (FULL_PER_CALL + SHORT_PER_CALL);
/// Records of at least 60 s.
pub const USABLE: usize = FILES * FULL_PER_CALL;

/// The handover bits of one interval of `group`, drawn from `rng`.
pub fn pattern(group: &str, rng: &mut ChaCha8Rng) -> [u8; HORIZON_STEPS] {
    let mut bits = [0u8; HORIZON_STEPS];
    let mut set = |at: &[usize]| at.iter().for_each(|&k| bits[k] = 1);
    match group {
        "none" => {}
        "one" => set(&[rng.random_range(10..110)]),
        "two" => {
            let first = rng.random_range(5..40);
            set(&[first, first + rng.random_range(45..56)]);
        }
        "few" => {
            let count = match rng.random_range(0..6) {
                0 => 3,
                5 => 5,
                _ => 4,
            };
            let start = rng.random_range(2..12);
            let at: Vec<usize> = (0..count)
                .map(|i| start + i * 24 + rng.random_range(0..3))
                .collect();
            set(&at);
        }
        "slots" => {
            let offset = rng.random_range(0..15);
            let at: Vec<usize> = (0..8).map(|i| offset + 15 * i).collect();
            set(&at);
        }
        other => panic!("no pattern {other}"),
    }
    bits
}

/// The QoE of an interval run with `action_ms` where `best_ms` is best: bitrate falls and freezes
/// rise with the distance `|ln(action / best)|`, plus a little seeded noise far smaller than the
/// reward gap between neighbouring limits.
pub fn qoe(action_ms: u64, best_ms: u64, rng: &mut ChaCha8Rng) -> QoeRecord {
    let distance = (action_ms as f64 / best_ms as f64).ln().abs();
    let bitrate = 3000.0 - 600.0 * distance + rng.random_range(-5.0..5.0);
    let freezes_per_min = 0.5 * distance + rng.random_range(0.0..0.005);
    let freeze_count = (freezes_per_min * 2.0).round() as u64;
    QoeRecord {
        video_bitrate_kbps: bitrate,
        freeze_count,
        freezes_per_min,
        total_freeze_ms: freeze_count * 300,
        frame_rate: 30.0 - 2.0 * distance,
        e2e_delay_p50_ms: 150.0 + 40.0 * distance,
        e2e_delay_p95_ms: 300.0 + 80.0 * distance,
        packet_loss_pct: 0.5 * distance,
        frames_rendered: 3500,
        ..QoeRecord::default()
    }
}

fn record(
    call_id: &str,
    group: &Group,
    index: usize,
    duration_ms: u64,
    action_ms: u64,
    bits: &[u8; HORIZON_STEPS],
    rng: &mut ChaCha8Rng,
) -> IntervalRecord {
    let steps = HandoverSteps::from_bits(bits).expect("0/1 bits of the horizon's length");
    let forecast_source = if group.name == "none" {
        ForecastSource::None
    } else {
        ForecastSource::Orbital
    };
    let cumulative = steps.to_tensor().chunks(2).map(|c| c[1]).collect();
    IntervalRecord {
        schema: SCHEMA.to_owned(),
        call_id: call_id.to_owned(),
        scenario: group.scenario.to_owned(),
        seed: Some(1),
        interval_index: index as u64,
        start_ms: index as u64 * 120_000,
        duration_ms,
        policy: "random".to_owned(),
        action_ms,
        forecast: ForecastRecord {
            source: forecast_source,
            handover: steps,
            cumulative,
        },
        observed: ObservedRecord {
            source: ForecastSource::Oracle,
            handover: steps,
        },
        qoe: qoe(action_ms, group.best_ms, rng),
        pacer: PacerRecord {
            max_queue_ms: action_ms as f64 * 0.8,
            mean_queue_ms: action_ms as f64 * 0.1,
            drain_boost_ms: 0.0,
            encoder_paused_ms: 0.0,
        },
        gcc: GccRecord {
            mean_target_kbps: 2500.0,
            min_target_kbps: 800.0,
        },
        sender: None,
        fec: None,
        actions: None,
        profile: None,
        inputs: None,
    }
}

/// The generated logs, file by file (`telemetry/<scenario>/<group>-<call>.jsonl` relative to the
/// directory they are written to), a pure function of the seed.
pub fn generate(seed: u64) -> Vec<(PathBuf, Vec<IntervalRecord>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut files = Vec::new();
    for group in &GROUPS {
        let mut actions: Vec<u64> = (0..TRIES_PER_LIMIT)
            .flat_map(|_| COLLECTION_ACTIONS_MS.iter().copied())
            .collect();
        actions.shuffle(&mut rng);
        for (call, chunk) in actions.chunks(FULL_PER_CALL).enumerate() {
            let call_id = format!("{}-{call}", group.name);
            let mut records = Vec::new();
            for (index, &action) in chunk.iter().enumerate() {
                let bits = pattern(group.name, &mut rng);
                records.push(record(
                    &call_id, group, index, 120_000, action, &bits, &mut rng,
                ));
            }
            let action = COLLECTION_ACTIONS_MS[rng.random_range(0..COLLECTION_ACTIONS_MS.len())];
            let bits = pattern(group.name, &mut rng);
            records.push(record(
                &call_id,
                group,
                chunk.len(),
                30_000,
                action,
                &bits,
                &mut rng,
            ));
            let path = Path::new("telemetry")
                .join(group.scenario)
                .join(format!("{call_id}.jsonl"));
            files.push((path, records));
        }
    }
    files
}

/// Writes [`generate`]'s logs under `dir` with the pacer's [`TelemetryWriter`]; returns the glob
/// that matches them.
pub fn write_logs(dir: &Path, seed: u64) -> String {
    write_files(dir, generate(seed))
}

/// Bitrate offsets of the tied "none" group's limits, kbit/s: 2500 ms best by 50 kbit/s over
/// 100 ms, every other limit 50 kbit/s under 100 ms.
fn tied_offset(action_ms: u64) -> f64 {
    match action_ms {
        2500 => 50.0,
        100 => 0.0,
        _ => -50.0,
    }
}

/// [`generate`]'s logs (seed 1) with the "none" group's QoE replaced by a statistical tie: no
/// freezes, and each limit's [`TRIES_PER_LIMIT`] bitrates spread by -300, -100, +100 and +300
/// kbit/s around 2500 kbit/s plus [`tied_offset`]. 2500 ms has the best mean, and 100 ms is
/// within one standard error of it (50 kbit/s against a standard error of about 129 kbit/s).
/// Returns the glob that matches them.
pub fn write_tied_logs(dir: &Path) -> String {
    const SPREAD: [f64; TRIES_PER_LIMIT] = [-300.0, -100.0, 100.0, 300.0];
    let mut tries: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    let mut files = generate(1);
    for (path, records) in &mut files {
        if !path.to_string_lossy().contains("none-") {
            continue;
        }
        for r in records.iter_mut().filter(|r| r.duration_ms == 120_000) {
            let k = tries.entry(r.action_ms).or_default();
            r.qoe.video_bitrate_kbps = 2500.0 + tied_offset(r.action_ms) + SPREAD[*k];
            r.qoe.freezes_per_min = 0.0;
            r.qoe.freeze_count = 0;
            r.qoe.total_freeze_ms = 0;
            *k += 1;
        }
    }
    write_files(dir, files)
}

/// Joint logs: [`generate`]'s calls for seeds 1 to 12 (so that every (limit, profile) pair is
/// tried several times per group), each interval run with the next profile of the menu in turn.
/// The groups `few` and `slots` lose packets at boundaries (an excess loss of 20 points), the
/// others do not (0); there the `hold160+guard+boost` profile adds 400 kbit/s, here every
/// profile with a hold costs 400 kbit/s and the others change nothing. Returns the glob.
pub fn write_joint_logs(dir: &Path) -> String {
    let mut files = Vec::new();
    let mut turn = 0usize;
    for seed in 1..=12u64 {
        for (path, mut records) in generate(seed) {
            let lossy = ["few-", "slots-"]
                .iter()
                .any(|g| path.to_string_lossy().contains(g));
            for r in &mut records {
                let profile =
                    pacer::actions::PROFILE_NAMES[turn % pacer::actions::PROFILE_NAMES.len()];
                turn += 1;
                let holds = profile.starts_with("hold");
                r.qoe.video_bitrate_kbps += match (lossy, holds) {
                    (true, true) if profile == "hold160+guard+boost" => 400.0,
                    (false, true) => -400.0,
                    _ => 0.0,
                };
                r.policy = "random-joint".to_owned();
                r.call_id = format!("{}-seed{seed}", r.call_id);
                r.profile = Some(profile.to_owned());
                r.inputs = Some(pacer::telemetry::InputsRecord {
                    boundary_excess_loss_pct: Some(if lossy { 20.0 } else { 0.0 }),
                    previous_loss_pct: Some(0.5),
                    ..Default::default()
                });
            }
            let name = path.with_extension("").to_string_lossy().into_owned();
            files.push((PathBuf::from(format!("{name}-seed{seed}.jsonl")), records));
        }
    }
    write_files(dir, files)
}

fn write_files(dir: &Path, files: Vec<(PathBuf, Vec<IntervalRecord>)>) -> String {
    for (path, records) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a file in a directory"))
            .expect("create the telemetry directory");
        let mut writer = TelemetryWriter::new(Vec::new());
        for r in &records {
            writer.write(r).expect("a valid record");
        }
        std::fs::write(&path, writer.into_inner()).expect("write a telemetry file");
    }
    logs_glob(dir)
}

/// The glob of the logs [`write_logs`] wrote under `dir`.
pub fn logs_glob(dir: &Path) -> String {
    format!("{}/telemetry/**/*.jsonl", dir.display())
}

/// A new empty directory with a unique name under the system's temporary directory. It is left
/// behind on failure so that a failing run can be looked at, and removed by [`Scratch`]'s drop
/// on success.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A fresh directory tagged `tag`.
    pub fn new(tag: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let dir = std::env::temp_dir().join(format!(
            "policy-train-test-{tag}-{}-{nanos}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create a scratch directory");
        Self(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Runs `policy-train` with `args` and returns its output (whatever the exit status).
///
/// libtorch gets one intra-op thread (`OMP_NUM_THREADS=1`): `verify` leaves libtorch's default
/// (one thread per core), and its 100 batch-1 forward passes then run several times slower on a
/// loaded two-core machine. `all` and `train` set their own count with `--threads`.
pub fn policy_train(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_policy-train"))
        .args(args)
        .env("RUST_LOG", "warn")
        .env("OMP_NUM_THREADS", "1")
        .output()
        .expect("run the policy-train binary")
}

/// Runs `policy-train` with `args`, panicking with its output unless it succeeds; returns stdout.
pub fn policy_train_ok(args: &[&str]) -> String {
    let out = policy_train(args);
    assert!(
        out.status.success(),
        "policy-train {args:?} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Runs `policy-train` with `args`, panicking unless it fails; returns stderr.
pub fn policy_train_fails(args: &[&str]) -> String {
    let out = policy_train(args);
    assert!(
        !out.status.success(),
        "policy-train {args:?} succeeded but should have failed:\nstdout:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).expect("UTF-8 output")
}

/// Parses JSON text, panicking with the text when it is not JSON.
pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// A tensor-layout input whose handover bits are set at `at` (0-based seconds).
pub fn bits_at(at: &[usize]) -> [u8; HORIZON_STEPS] {
    let mut bits = [0u8; HORIZON_STEPS];
    at.iter().for_each(|&k| bits[k] = 1);
    bits
}

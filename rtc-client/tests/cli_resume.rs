//! A sweep killed with SIGKILL at a random instant and finished with `--resume` ends byte for
//! byte as an uninterrupted run (`experiment` and `collect`): every file is written whole and
//! renamed into place, and a call counts as done only once its journal line is committed.
//!
//! The kill instants come from a seeded RNG (after how many finished calls, and what part of a
//! call's time later, a call's time being measured on the uninterrupted run), so a failure names
//! the delays that produced it. A kill that comes after the run has finished is no test: the
//! killed run then starts again with shorter delays.
//! Each test prints what it saw (run with `--nocapture`): where each kill landed (calls in the
//! journal, a line cut short, unfinished files), how many calls the resume ran, and the times.

mod cli_support;

use cli_support::{assert_same_tree, root, run, stderr};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a killed run left behind.
struct Left {
    /// Complete journal lines (calls done).
    journal_lines: usize,
    /// Whether the last journal line was cut short.
    torn: bool,
    /// Files a write had not yet renamed into place.
    partial_files: usize,
    /// Whether the run had finished before the kill.
    finished: bool,
}

impl std::fmt::Display for Left {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} calls in the journal{}, {} unfinished files{}",
            self.journal_lines,
            if self.torn {
                " and a line cut short"
            } else {
                ""
            },
            self.partial_files,
            if self.finished {
                ", the run had finished"
            } else {
                ""
            }
        )
    }
}

fn left_in(out: &Path) -> Left {
    let journal = std::fs::read(out.join("cells.jsonl")).unwrap_or_default();
    let partial_files = partial_files(out);
    let finished = std::fs::read_to_string(out.join("run.json"))
        .is_ok_and(|t| t.contains("\"complete\": true"));
    Left {
        journal_lines: journal.iter().filter(|&&b| b == b'\n').count(),
        torn: !journal.is_empty() && journal.last() != Some(&b'\n'),
        partial_files,
        finished,
    }
}

/// Files under `dir` whose writes were not renamed into place; tolerant of a directory that does
/// not exist yet or changes while it is read (the run may still be going).
fn partial_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| {
            let path = entry.path();
            if entry.file_name().to_string_lossy().contains(".partial-") {
                1
            } else if path.is_dir() {
                partial_files(&path)
            } else {
                0
            }
        })
        .sum()
}

/// `args` with `--out out --resume`, as `cli_support::run` runs the binary but logging at info
/// level (the resume's counts).
fn resume_command(args: &[&str], out: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rtc-client"));
    command
        .args(args)
        .args(["--out", out.to_str().unwrap(), "--resume"])
        .current_dir(root())
        .env_remove("LEOPACE_ROOT")
        .env_remove("LEOPACE_DATA")
        .env("RUST_LOG", "info");
    command
}

/// Runs `args` into `out` with `--resume` in the background and, once its journal holds `calls`
/// calls, waits `delay` more (landing anywhere inside the calls then running) and kills it with
/// SIGKILL.
fn run_and_kill(args: &[&str], out: &Path, calls: usize, delay: Duration) -> Left {
    let mut child = resume_command(args, out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let started = Instant::now();
    while left_in(out).journal_lines < calls {
        if child.try_wait().expect("the child can be polled").is_some() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "{calls} calls never reached the journal"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(delay);
    // Child::kill is SIGKILL on Unix: no handler, no flush, no cleanup.
    let _ = child.kill();
    let _ = child.wait();
    left_in(out)
}

/// Runs the command uninterrupted into `whole`; then into `out`, killed twice at seeded random
/// points (after a random number of finished calls plus a random part of a call's time) and
/// resumed to the end; and compares the two directories byte for byte.
fn killed_and_resumed(test: &str, args: &[&str], calls: usize, seed: u64) {
    let dir = cli_support::scratch("cli_resume", test);
    let whole = dir.join("whole");
    let started = Instant::now();
    let o = run(&[args, &["--out", whole.to_str().unwrap()]].concat());
    assert!(
        o.status.success(),
        "the uninterrupted run failed: {}",
        stderr(&o)
    );
    let uninterrupted = started.elapsed();
    // A call's share of the uninterrupted run's wall time: each kill lands within about one
    // call's time of its chosen point, on a fast machine as on a slow one.
    let per_call = uninterrupted / calls as u32;

    let out = dir.join("killed");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let first = rng.random_range(1..calls / 2);
    let second = rng.random_range(first + 1..calls - 1);
    let parts: [f64; 2] = [rng.random_range(0.0..1.0), rng.random_range(0.0..1.0)];
    let started = Instant::now();
    // A kill that lands after the run has finished tests nothing: start the killed run again
    // with both delays halved, down to 1/64 of them.
    let mut scale = 1.0;
    loop {
        let mut finished_before = None;
        for (kill, (after, part)) in [(first, parts[0]), (second, parts[1])]
            .into_iter()
            .enumerate()
        {
            let delay = per_call.mul_f64(part * scale);
            let left = run_and_kill(args, &out, after, delay);
            eprintln!(
                "{test}: kill {} once {after} of {calls} calls were done, plus {delay:?}: {left}",
                kill + 1
            );
            if left.finished {
                finished_before = Some(kill + 1);
                break;
            }
        }
        let Some(kill) = finished_before else {
            break;
        };
        assert!(
            scale > 1.0 / 64.0,
            "the run finished before kill {kill} even with the delays cut to 1/64"
        );
        std::fs::remove_dir_all(&out).expect("the killed run's directory can be removed");
        scale /= 2.0;
    }
    let o = resume_command(args, &out)
        .output()
        .expect("the binary runs");
    assert!(o.status.success(), "--resume failed: {}", stderr(&o));
    let resumed = stderr(&o);
    let line = resumed
        .lines()
        .find(|l| l.contains("resuming"))
        .expect("the resume says how many calls were done and left");
    eprintln!(
        "{test}: uninterrupted {uninterrupted:.2?}; killed twice and resumed in {:.2?} in all; \
         the final resume: {}",
        started.elapsed(),
        &line[line.find("resuming").unwrap_or(0)..]
    );
    let files = assert_same_tree(&whole, &out);
    eprintln!("{test}: {files} files byte-identical to the uninterrupted run");
    assert!(
        !out.join("cells.jsonl").exists(),
        "the journal outlived the run"
    );
}

#[test]
fn an_experiment_killed_at_random_instants_resumes_to_the_same_bytes() {
    let args = [
        "experiment",
        "--scenarios",
        "starlink,terrestrial-lte",
        "--policies",
        "default,fixed:900",
        "--calls",
        "2",
        "--duration",
        "20s",
        "--seed",
        "5",
        "--jobs",
        "2",
    ];
    killed_and_resumed("experiment", &args, 8, 20_261_203);
}

#[test]
fn a_collection_killed_at_random_instants_resumes_to_the_same_bytes() {
    let args = [
        "collect",
        "--scenarios",
        "starlink,sparse-leo",
        "--hours",
        "0.03",
        "--duration",
        "20s",
        "--seed",
        "10",
        "--jobs",
        "2",
    ];
    killed_and_resumed("collect", &args, 6, 7);
}

//! Shared pieces of the CLI tests: the built binary, scratch files, and child processes that are
//! killed when the test ends, whatever happens.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The `handover-predictor` binary cargo built for these tests.
pub fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_handover-predictor"));
    command.env_remove("RUST_LOG").stdin(Stdio::null());
    command
}

/// The repository's shipped Starlink generation-1 catalogue.
pub fn shipped_gen1() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/tle/starlink-gen1.tle")
}

/// A fresh scratch directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join(format!("{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A child process that is killed (and reaped) when dropped.
pub struct ChildGuard {
    child: Child,
    name: &'static str,
}

impl ChildGuard {
    /// Spawns `command` with stdout piped and stderr into `stderr_file`.
    pub fn spawn(name: &'static str, mut command: Command, stderr_file: &Path) -> Self {
        let stderr = std::fs::File::create(stderr_file).unwrap();
        let child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Self { child, name }
    }

    /// Its stdout, line by line, on a channel (so that reads can time out).
    pub fn stdout_lines(&mut self) -> mpsc::Receiver<String> {
        let stdout: ChildStdout = self.child.stdout.take().expect("stdout is piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        rx
    }

    /// Waits for the process to exit, up to `limit`; `None` if it is still running.
    pub fn wait_for(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            eprintln!("killed {}", self.name);
        }
        let _ = self.child.wait();
    }
}

/// Runs `command` to completion within `limit` (killed past it), capturing its output.
pub fn run_with_limit(mut command: Command, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start the binary");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(output) => (output.unwrap(), started.elapsed()),
        Err(_) => {
            // Still running: kill it by pid (the child moved into the waiting thread).
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("the command did not finish within {limit:?}");
        }
    }
}

/// stdout as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

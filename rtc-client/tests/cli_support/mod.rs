//! Running the built `rtc-client` binary from tests: the workspace root, scratch directories,
//! and the checks every bad-input test makes.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root, where scenario names resolve.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("rtc-client sits in the workspace")
        .to_path_buf()
}

/// A fresh directory for one test of one suite.
pub fn scratch(suite: &str, test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(suite)
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch directory can be created");
    dir
}

/// Runs the binary from the workspace root with `args`, ignoring the caller's overrides.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rtc-client"))
        .args(args)
        .current_dir(root())
        .env_remove("LEOPACE_ROOT")
        .env_remove("LEOPACE_DATA")
        .env("RUST_LOG", "warn")
        .output()
        .expect("the binary runs")
}

/// The process's stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A failure: exit status 1 or 2 (clap), an `error` line naming `needle`, no panic.
pub fn assert_clear_failure(o: &Output, needle: &str) {
    let err = stderr(o);
    assert!(!o.status.success(), "succeeded; stderr: {err}");
    assert!(
        matches!(o.status.code(), Some(1 | 2)),
        "status {:?}: {err}",
        o.status
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("error"), "{err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
}

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

/// Every file under `dir` by its path relative to `dir` (forward slashes), with its bytes.
pub fn files_under(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let name = path.strip_prefix(root).unwrap();
                let name: Vec<String> = name
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.insert(name.join("/"), std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Asserts that two directories hold the same files with the same bytes, naming the first
/// difference; returns how many files they hold.
pub fn assert_same_tree(expected: &Path, actual: &Path) -> usize {
    let a = files_under(expected);
    let b = files_under(actual);
    let names_a: Vec<&String> = a.keys().collect();
    let names_b: Vec<&String> = b.keys().collect();
    assert_eq!(
        names_a,
        names_b,
        "{} and {} hold different files",
        expected.display(),
        actual.display()
    );
    for (name, bytes) in &a {
        assert!(
            bytes == &b[name],
            "{name} differs between {} and {}",
            expected.display(),
            actual.display()
        );
    }
    a.len()
}

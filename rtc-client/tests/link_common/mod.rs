//! Shared harness of the link tests: the shared data directory and small helpers.

#![allow(dead_code)]

use rtc_client::link::{Capacity, Link, LinkConfig, Time, Verdict};
use std::path::PathBuf;

/// `../shared/data` next to the workspace, where the reference traces live (never copied into
/// the repository).
pub fn data_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data"))
}

/// The path of a shared data file, or `None` (with a message saying the test is skipped) when
/// the shared data is not there.
pub fn data_file(relative: &str) -> Option<PathBuf> {
    let path = data_dir().join(relative);
    if path.is_file() {
        Some(path)
    } else {
        eprintln!(
            "SKIPPED: {} is absent (the shared reference data lives in ../shared/data next to the workspace)",
            path.display()
        );
        None
    }
}

/// A link at a constant rate, everything else default.
pub fn constant_link(bits_per_second: u64) -> Link {
    Link::new(LinkConfig::new(Capacity::constant(bits_per_second)), 1).unwrap()
}

/// The delivery instant of a verdict, panicking with the verdict otherwise.
pub fn delivered(v: Verdict) -> Time {
    match v {
        Verdict::Delivered { at } => at,
        other => panic!("expected a delivery, got {other:?}"),
    }
}

/// Milliseconds as [`Time`].
pub fn ms(v: u64) -> Time {
    Time::from_millis(v)
}

/// Microseconds as [`Time`].
pub fn us(v: u64) -> Time {
    Time::from_micros(v)
}

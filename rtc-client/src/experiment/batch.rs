//! A batch of simulated calls written to an output directory: what `rtc-client experiment` and
//! `rtc-client collect` share beyond their arguments.
//!
//! [`prepare_out`] readies the output directory, [`load_scenarios`] the scenarios,
//! [`senders`] names the sender each scenario's calls resolve to, and [`run_calls`] runs the
//! plan in parallel ([`parallel_map`]), keeping each call's telemetry file with its size and
//! sha256 ([`FinishedCall`]). The error messages name the command line's flags (`--out`,
//! `--scenarios`, `--force`), since the command line is who passes these values on.

use crate::call::{PolicyChoice, SenderNames, SenderOptions, SenderOverrides};
use crate::durable;
use crate::experiment::run::{
    CallError, CallSettings, CellCall, parallel_map, simulate, telemetry_bytes,
};
use crate::experiment::telemetry_path;
use crate::scenario::{Scenario, ScenarioError, ScenarioPaths};
use pacer::telemetry::QoeRecord;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Why a batch could not be prepared or run.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// The output path is a file (or anything but a directory).
    #[error("--out {} exists and is not a directory", path.display())]
    OutNotADirectory {
        /// The output path.
        path: PathBuf,
    },
    /// The output directory could not be listed.
    #[error("cannot read the output directory {}", path.display())]
    ReadOut {
        /// The output directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The output directory holds something and `force` was not given.
    #[error(
        "the output directory {} is not empty; choose another --out or give --force to replace \
         its results",
        path.display()
    )]
    OutNotEmpty {
        /// The output directory.
        path: PathBuf,
    },
    /// An entry a previous run left could not be removed.
    #[error("cannot remove {}", path.display())]
    Remove {
        /// The entry.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The output directory could not be created.
    #[error("cannot create the output directory {}", path.display())]
    CreateOut {
        /// The output directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A telemetry directory could not be created.
    #[error("cannot create {}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A call's telemetry file could not be written.
    #[error("cannot write the telemetry file {}", path.display())]
    WriteTelemetry {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The same scenario was named twice.
    #[error("--scenarios names {name} twice")]
    DuplicateScenario {
        /// The scenario's name.
        name: String,
    },
    /// No scenario was named.
    #[error("--scenarios is empty")]
    NoScenarios,
    /// A scenario could not be loaded or read.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A call failed.
    #[error(transparent)]
    Call(#[from] CallError),
    /// A finished call could not be recorded as done (its telemetry file is in place; the call
    /// runs again on `--resume`).
    #[error("cannot record a finished call as done")]
    Record(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// One call's files and figures, as both commands keep them.
#[derive(Debug, Clone)]
pub struct FinishedCall {
    /// The call's seed.
    pub seed: u64,
    /// Whole-call QoE.
    pub qoe: QoeRecord,
    /// The repair bytes' share of the video bytes sent over the whole call, %.
    pub fec_share_pct: f64,
    /// Telemetry lines.
    pub intervals: usize,
    /// The telemetry file, relative to the output directory.
    pub file: PathBuf,
    /// Its size, bytes.
    pub bytes: usize,
    /// Its sha256, hex.
    pub sha256: String,
}

/// Refuses an existing, non-empty `out` unless `force`; creates it. With `force`, removes the
/// `owned` entries a previous run wrote (and nothing else).
pub fn prepare_out(out: &Path, force: bool, owned: &[&str]) -> Result<(), BatchError> {
    if out.exists() && !out.is_dir() {
        return Err(BatchError::OutNotADirectory {
            path: out.to_path_buf(),
        });
    }
    let non_empty = out.is_dir()
        && std::fs::read_dir(out)
            .map_err(|source| BatchError::ReadOut {
                path: out.to_path_buf(),
                source,
            })?
            .next()
            .is_some();
    if non_empty {
        if !force {
            return Err(BatchError::OutNotEmpty {
                path: out.to_path_buf(),
            });
        }
        for name in owned {
            let path = out.join(name);
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else if path.exists() {
                std::fs::remove_file(&path)
            } else {
                Ok(())
            };
            removed.map_err(|source| BatchError::Remove { path, source })?;
        }
    }
    std::fs::create_dir_all(out).map_err(|source| BatchError::CreateOut {
        path: out.to_path_buf(),
        source,
    })
}

/// The sender of each scenario's calls, by name: the command line's `cli` options over the
/// file's `[sender]` table over the defaults, as every call resolves it.
pub fn senders(
    scenarios: &[Scenario],
    cli: &SenderOverrides,
) -> Result<Vec<SenderNames>, BatchError> {
    scenarios
        .iter()
        .map(|s| Ok(SenderOptions::resolve(&s.sender_overrides()?, cli).names()))
        .collect()
}

/// Loads the named scenarios, refusing duplicates.
pub fn load_scenarios(
    names: &[String],
    paths: &ScenarioPaths,
) -> Result<Vec<Scenario>, BatchError> {
    let mut scenarios: Vec<Scenario> = Vec::with_capacity(names.len());
    for name in names {
        let scenario = Scenario::load(name.trim(), paths)?;
        if scenarios.iter().any(|s| s.name() == scenario.name()) {
            return Err(BatchError::DuplicateScenario {
                name: scenario.name().to_owned(),
            });
        }
        scenarios.push(scenario);
    }
    if scenarios.is_empty() {
        return Err(BatchError::NoScenarios);
    }
    Ok(scenarios)
}

/// Runs every call of `specs` on `threads` threads, writing each call's telemetry under `out`
/// (see [`telemetry_path`]); the result is in `specs` order.
///
/// Every call is simulated with `settings` and the clock starting at `epoch` ([`simulate`]).
/// Each telemetry file is written whole beside its name and renamed into place
/// ([`durable::write_atomic`]), so a run killed at any instant leaves every file complete or
/// absent. `on_call` is then called from the worker with the call's index in `specs` and what it
/// left (to record it as done and move a progress bar); its error stops the batch like a failed
/// call. The telemetry directories are all created before any call runs, so a path that cannot
/// be written fails before the work.
#[allow(clippy::too_many_arguments)]
pub fn run_calls(
    scenarios: &[Scenario],
    policies: &[PolicyChoice],
    specs: &[CellCall],
    threads: usize,
    out: &Path,
    settings: CallSettings,
    epoch: Instant,
    on_call: impl Fn(usize, &FinishedCall) -> Result<(), BatchError> + Sync,
) -> Result<Vec<FinishedCall>, BatchError> {
    let names: Vec<String> = policies.iter().map(PolicyChoice::name).collect();
    let file_of = |spec: &CellCall| {
        telemetry_path(
            scenarios[spec.scenario].name(),
            &names[spec.policy],
            spec.seed,
        )
    };
    // Directories first, so workers only write files.
    for spec in specs {
        if let Some(dir) = out.join(file_of(spec)).parent() {
            std::fs::create_dir_all(dir).map_err(|source| BatchError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
    }
    parallel_map(
        specs,
        threads,
        |index, spec| -> Result<FinishedCall, BatchError> {
            let scenario = &scenarios[spec.scenario];
            let result = simulate(
                scenario,
                policies[spec.policy].clone(),
                spec.seed,
                &settings,
                epoch,
            )?;
            let bytes = telemetry_bytes(scenario, spec.seed, &result)?;
            let file = file_of(spec);
            let path = out.join(&file);
            durable::write_atomic(&path, &bytes)
                .map_err(|source| BatchError::WriteTelemetry { path, source })?;
            let finished = FinishedCall {
                seed: spec.seed,
                qoe: result.qoe.to_record(),
                fec_share_pct: result.recovery.fec_share_pct,
                intervals: result.telemetry.len(),
                file,
                bytes: bytes.len(),
                sha256: hex(&Sha256::digest(&bytes)),
            };
            on_call(index, &finished)?;
            Ok(finished)
        },
        |_| {},
    )
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        use std::fmt::Write as _;
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A path for messages: forward slashes, so reports read the same on every system.
pub fn display_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lower_case_and_two_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn display_paths_use_forward_slashes() {
        let path = Path::new("telemetry").join("starlink").join("seed-1.jsonl");
        assert_eq!(display_path(&path), "telemetry/starlink/seed-1.jsonl");
    }

    #[test]
    fn messages_name_the_command_line_flags() {
        let out = std::env::temp_dir().join(format!("batch-test-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("left-over"), b"x").unwrap();
        let refused = prepare_out(&out, false, &[]).unwrap_err().to_string();
        assert!(refused.contains("is not empty; choose another --out or give --force"));
        let file = out.join("left-over");
        let not_dir = prepare_out(&file, true, &[]).unwrap_err().to_string();
        assert_eq!(
            not_dir,
            format!("--out {} exists and is not a directory", file.display())
        );
        prepare_out(&out, true, &["left-over"]).unwrap();
        assert!(!file.exists());
        std::fs::remove_dir_all(&out).unwrap();
        assert_eq!(BatchError::NoScenarios.to_string(), "--scenarios is empty");
    }
}

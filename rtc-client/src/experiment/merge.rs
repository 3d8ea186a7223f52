//! Joining the shards of a sweep (`rtc-client merge`): which directories may be joined, and
//! their calls gathered into one output directory.
//!
//! Directories join when they are finished outputs of the same command, engine and configuration
//! ([`RunManifest::sweep_differences`]) whose calls are disjoint and together the whole plan. Any
//! overlap or gap is refused rather than papered over, since a report over a different set of
//! calls would read exactly like the real one (docs/architecture.md, "Sweeps, shards and
//! resume"). Every telemetry file is checked against the sha256 its shard recorded as it is
//! copied, so a damaged shard cannot slip into the merged output.

use super::batch::hex;
use super::ledger::{CellDone, LedgerError, RunManifest};
use crate::durable;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why directories cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No directory was given.
    #[error("no shard directory given")]
    NoShards,
    /// A directory has no `run.json`.
    #[error(
        "{} holds no run.json: it is not the output of `rtc-client experiment` or `collect`",
        dir.display()
    )]
    NotARun {
        /// The directory.
        dir: PathBuf,
    },
    /// A run is not finished.
    #[error(
        "{} (shard {shard}) is not finished: run its command again with --resume to finish it",
        dir.display()
    )]
    Unfinished {
        /// The directory.
        dir: PathBuf,
        /// Its shard.
        shard: String,
    },
    /// Two directories are not parts of one sweep.
    #[error("{} cannot be merged with {}: {differences}", dir.display(), first.display())]
    Different {
        /// The directory that differs.
        dir: PathBuf,
        /// The first directory, which the others are compared with.
        first: PathBuf,
        /// What differs, `; `-separated.
        differences: String,
    },
    /// The same shard is given twice.
    #[error("shard {shard} is given twice: {} and {}", a.display(), b.display())]
    DuplicateShard {
        /// The shard.
        shard: String,
        /// One directory.
        a: PathBuf,
        /// The other.
        b: PathBuf,
    },
    /// Shards of the sweep are not among the directories.
    #[error("shard {} of the sweep is missing (no directory given holds it)", shards.join(", "))]
    MissingShards {
        /// The missing shards, `K/N`.
        shards: Vec<String>,
    },
    /// Two directories hold the same call.
    #[error("call {index} ({cell}) is in both {} and {}", a.display(), b.display())]
    Overlap {
        /// The call's plan index.
        index: usize,
        /// Which call.
        cell: String,
        /// One directory.
        a: PathBuf,
        /// The other.
        b: PathBuf,
    },
    /// Calls of the plan are in none of the directories.
    #[error(
        "{count} of the plan's {plan} calls are in none of the directories given (the first: call {first})"
    )]
    MissingCalls {
        /// How many.
        count: usize,
        /// Calls in the plan.
        plan: usize,
        /// The first missing plan index.
        first: usize,
    },
    /// A manifest's call list disagrees with its own shard.
    #[error("{}: {message}", RunManifest::path(dir).display())]
    Inconsistent {
        /// The directory.
        dir: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A telemetry file is missing or not the one its shard recorded.
    #[error("{message}: the shard in {} is damaged; run it again", dir.display())]
    Damaged {
        /// The shard's directory.
        dir: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A merged file could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A manifest could not be read.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// One shard directory and its manifest.
#[derive(Debug, Clone)]
pub struct Source {
    /// The directory.
    pub dir: PathBuf,
    /// Its `run.json`.
    pub manifest: RunManifest,
}

/// Reads the manifest of every directory, refusing unfinished ones.
pub fn read_sources(dirs: &[PathBuf]) -> Result<Vec<Source>, MergeError> {
    if dirs.is_empty() {
        return Err(MergeError::NoShards);
    }
    dirs.iter()
        .map(|dir| {
            let manifest =
                RunManifest::read(dir)?.ok_or_else(|| MergeError::NotARun { dir: dir.clone() })?;
            if !manifest.complete {
                return Err(MergeError::Unfinished {
                    dir: dir.clone(),
                    shard: manifest.shard.to_string(),
                });
            }
            Ok(Source {
                dir: dir.clone(),
                manifest,
            })
        })
        .collect()
}

/// Checks that `sources` are the disjoint parts of one sweep that together hold the whole plan;
/// returns every call of the plan, in order, with the index of the source holding it.
pub fn plan_calls(sources: &[Source]) -> Result<Vec<(usize, CellDone)>, MergeError> {
    let first = sources.first().ok_or(MergeError::NoShards)?;
    for source in sources {
        let differences = first.manifest.sweep_differences(&source.manifest);
        if !differences.is_empty() {
            return Err(MergeError::Different {
                dir: source.dir.clone(),
                first: first.dir.clone(),
                differences: differences.join("; "),
            });
        }
        check_own_shard(source)?;
    }
    check_shard_set(sources)?;
    let mut calls: BTreeMap<usize, (usize, CellDone)> = BTreeMap::new();
    for (i, source) in sources.iter().enumerate() {
        for cell in &source.manifest.cells {
            if let Some((other, _)) = calls.get(&cell.index) {
                return Err(MergeError::Overlap {
                    index: cell.index,
                    cell: cell.key.to_string(),
                    a: sources[*other].dir.clone(),
                    b: source.dir.clone(),
                });
            }
            calls.insert(cell.index, (i, cell.clone()));
        }
    }
    let plan = first.manifest.plan_cells;
    let missing: Vec<usize> = (0..plan).filter(|i| !calls.contains_key(i)).collect();
    if let Some(&first_missing) = missing.first() {
        return Err(MergeError::MissingCalls {
            count: missing.len(),
            plan,
            first: first_missing,
        });
    }
    if calls.len() != plan {
        return Err(MergeError::Inconsistent {
            dir: first.dir.clone(),
            message: format!("the shards list calls beyond the plan's {plan}"),
        });
    }
    Ok(calls.into_values().collect())
}

/// A manifest's calls must be those of its own shard, each once.
fn check_own_shard(source: &Source) -> Result<(), MergeError> {
    let m = &source.manifest;
    let wrong = |message: String| MergeError::Inconsistent {
        dir: source.dir.clone(),
        message,
    };
    if m.cells.len() != m.shard_cells {
        return Err(wrong(format!(
            "it lists {} calls, but shard {} has {}",
            m.cells.len(),
            m.shard,
            m.shard_cells
        )));
    }
    if let Some(cell) = m
        .cells
        .iter()
        .find(|c| !m.shard.holds(c.index) || c.index >= m.plan_cells)
    {
        return Err(wrong(format!(
            "call {} ({}) is not in shard {}",
            cell.index, cell.key, m.shard
        )));
    }
    Ok(())
}

/// When every directory is a shard of the same N, names a shard given twice or missing (the
/// call-level check after this one covers mixed N).
fn check_shard_set(sources: &[Source]) -> Result<(), MergeError> {
    let count = sources[0].manifest.shard.count;
    if sources.iter().any(|s| s.manifest.shard.count != count) {
        return Ok(());
    }
    let mut seen: BTreeMap<u64, &Path> = BTreeMap::new();
    for source in sources {
        let shard = source.manifest.shard;
        if let Some(a) = seen.insert(shard.index, &source.dir) {
            return Err(MergeError::DuplicateShard {
                shard: shard.to_string(),
                a: a.to_path_buf(),
                b: source.dir.clone(),
            });
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|k| !seen.contains_key(k))
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::MissingShards { shards: missing });
    }
    Ok(())
}

/// Copies `cell`'s telemetry file from the shard in `from` to `to`, checking it against the size
/// and sha256 the shard recorded; written whole and renamed into place.
pub fn copy_call(from: &Path, to: &Path, cell: &CellDone) -> Result<(), MergeError> {
    let source = from.join(&cell.file);
    let damaged = |message: String| MergeError::Damaged {
        dir: from.to_path_buf(),
        message,
    };
    let bytes = std::fs::read(&source)
        .map_err(|e| damaged(format!("cannot read {}: {e}", source.display())))?;
    if bytes.len() != cell.bytes || hex(&Sha256::digest(&bytes)) != cell.sha256 {
        return Err(damaged(format!(
            "{} is not the file its run.json records ({} bytes, sha256 {})",
            source.display(),
            cell.bytes,
            cell.sha256
        )));
    }
    let target = to.join(&cell.file);
    let write = |source| MergeError::Write {
        path: target.clone(),
        source,
    };
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir).map_err(write)?;
    }
    durable::write_atomic(&target, &bytes).map_err(write)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::ledger::{CellKey, Engine, RUN_SCHEMA, config_hash};
    use crate::experiment::shard::Shard;
    use pacer::telemetry::QoeRecord;

    fn cell(index: usize) -> CellDone {
        let key = CellKey {
            scenario: "starlink".into(),
            policy: "default".into(),
            seed: index as u64,
        };
        CellDone {
            index,
            file: key.file(),
            key,
            bytes: 0,
            sha256: hex(&Sha256::digest(b"")),
            intervals: 0,
            qoe: QoeRecord::default(),
            fec_share_pct: 0.0,
        }
    }

    fn source(index: u64, count: u64, plan: usize) -> Source {
        let shard = Shard { index, count };
        let config = serde_json::json!({"calls": plan});
        let cells: Vec<CellDone> = shard.cells(plan).into_iter().map(cell).collect();
        Source {
            dir: PathBuf::from(format!("shard-{index}-of-{count}")),
            manifest: RunManifest {
                schema: RUN_SCHEMA.into(),
                command: "experiment".into(),
                engine: Engine {
                    name: "rtc-client".into(),
                    version: "0.1.0".into(),
                    binary_sha256: "00".repeat(32),
                },
                config_hash: config_hash(&config),
                config,
                args: Vec::new(),
                shard,
                plan_cells: plan,
                shard_cells: cells.len(),
                complete: true,
                cells,
            },
        }
    }

    #[test]
    fn the_shards_of_one_sweep_give_every_call_in_plan_order() {
        let sources = [source(2, 3, 7), source(1, 3, 7), source(3, 3, 7)];
        let calls = plan_calls(&sources).unwrap();
        let order: Vec<(usize, usize)> = calls.iter().map(|(s, c)| (*s, c.index)).collect();
        assert_eq!(
            order,
            [(1, 0), (0, 1), (2, 2), (1, 3), (0, 4), (2, 5), (1, 6)]
        );
        // Mixed shard counts join when the calls are disjoint and complete.
        let mixed = [source(1, 2, 8), source(2, 4, 8), source(4, 4, 8)];
        assert_eq!(plan_calls(&mixed).unwrap().len(), 8);
    }

    #[test]
    fn a_missing_or_repeated_shard_is_named() {
        let err = plan_calls(&[source(1, 3, 7), source(3, 3, 7)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "shard 2/3 of the sweep is missing (no directory given holds it)"
        );
        let err = plan_calls(&[source(1, 2, 7), source(1, 2, 7), source(2, 2, 7)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "shard 1/2 is given twice: shard-1-of-2 and shard-1-of-2"
        );
        let err = plan_calls(&[source(1, 2, 8), source(1, 4, 8), source(2, 2, 8)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "call 0 (starlink / default / seed 0) is in both shard-1-of-2 and shard-1-of-4"
        );
        let err = plan_calls(&[source(1, 2, 8), source(2, 4, 8)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "2 of the plan's 8 calls are in none of the directories given (the first: call 3)"
        );
    }

    #[test]
    fn another_configuration_or_a_manifest_at_odds_with_its_shard_is_refused() {
        let mut other = source(2, 2, 6);
        other.manifest.config = serde_json::json!({"calls": 6, "duration_s": 30});
        other.manifest.config_hash = config_hash(&other.manifest.config);
        let err = plan_calls(&[source(1, 2, 6), other])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("shard-2-of-2 cannot be merged with shard-1-of-2: configuration "),
            "{err}"
        );
        assert!(err.ends_with("(differing: duration_s)"), "{err}");

        let mut odd = source(2, 2, 6);
        odd.manifest.cells[0] = cell(0);
        let err = plan_calls(&[source(1, 2, 6), odd]).unwrap_err().to_string();
        assert!(
            err.ends_with("call 0 (starlink / default / seed 0) is not in shard 2/2"),
            "{err}"
        );
    }
}

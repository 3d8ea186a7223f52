//! The ledger of a sweep's output directory: what the run is (`run.json`) and which of its calls
//! are done (`cells.jsonl` while it runs, `run.json`'s cell list once it has finished).
//!
//! Why a ledger: `experiment` and `collect` runs are split over machines (`--shard K/N`), killed
//! and resumed (`--resume`), and joined (`rtc-client merge`), and each of those needs to know,
//! from the directory alone, which engine and configuration made it and which calls it holds
//! (docs/architecture.md, "Sweeps, shards and resume").
//!
//! - `run.json` ([`RunManifest`]) names the engine ([`Engine`]: crate version and the sha256 of
//!   the executable), the configuration (the resolved scenarios, policies and call settings, and
//!   their sha256), the command's arguments, the shard, and once the run is complete every call
//!   it holds with its telemetry file's sha256 and its whole-call QoE. It is written whole and
//!   renamed into place, at the start and at the end, and holds no wall-clock figure, so the
//!   same run gives the same bytes.
//! - `cells.jsonl` ([`Journal`]) gets one line per finished call, fsync'd before the next one,
//!   always after the call's telemetry file is in place: a call is done exactly when its line is
//!   there. A line cut short by a kill is reported and never read ([`read_journal`]).

use super::batch::{display_path, hex};
use super::shard::Shard;
use super::telemetry_path;
use crate::durable::{self, SyncedFile};
use pacer::telemetry::QoeRecord;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Schema tag of `run.json`.
pub const RUN_SCHEMA: &str = "leopace.run.v1";
/// The manifest's file name in an output directory.
pub const RUN_FILE: &str = "run.json";
/// The journal's file name in an output directory.
pub const JOURNAL_FILE: &str = "cells.jsonl";

/// Why a ledger could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A file could not be read or written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done ("read", "write", ...).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `run.json` is not a run manifest this version reads.
    #[error("{} is not a run manifest ({RUN_SCHEMA}): {message}", path.display())]
    Manifest {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A journal line is complete but not a finished call.
    #[error("{} line {line}: {message}", path.display())]
    JournalLine {
        /// The journal.
        path: PathBuf,
        /// 1-based.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// The journal lists a call that is not in this run's plan or shard.
    #[error("{}: {message}; it belongs to another run", path.display())]
    NotThisRun {
        /// The journal.
        path: PathBuf,
        /// Which call.
        message: String,
    },
}

/// Which program made an output: outputs of different engines are never mixed, because the same
/// seed gives the same bytes only on the same engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Engine {
    /// The crate (`rtc-client`).
    pub name: String,
    /// Its version.
    pub version: String,
    /// The sha256 of the executable that ran: unlike a commit, it also tells a dirty tree, another
    /// toolchain or other build flags apart.
    pub binary_sha256: String,
}

impl Engine {
    /// The running executable's identity. On Linux the file is read through /proc/self/exe,
    /// which still names the running binary after a rebuild has replaced the file on disk.
    pub fn current() -> Result<Self, LedgerError> {
        let (path, file) = match std::fs::File::open("/proc/self/exe") {
            Ok(file) => (PathBuf::from("/proc/self/exe"), Ok(file)),
            Err(_) => {
                let path = std::env::current_exe().map_err(|source| LedgerError::Io {
                    action: "locate",
                    path: PathBuf::from("the running executable"),
                    source,
                })?;
                let file = std::fs::File::open(&path);
                (path, file)
            }
        };
        let io = |source| LedgerError::Io {
            action: "read (to identify the engine)",
            path: path.clone(),
            source,
        };
        let mut file = file.map_err(io)?;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut buffer).map_err(io)?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
        }
        Ok(Self {
            name: env!("CARGO_PKG_NAME").to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            binary_sha256: hex(&hasher.finalize()),
        })
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} (binary sha256 {})",
            self.name,
            self.version,
            &self.binary_sha256[..self.binary_sha256.len().min(16)]
        )
    }
}

/// One call of a plan, by name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CellKey {
    /// Scenario name.
    pub scenario: String,
    /// Policy name as telemetry writes it.
    pub policy: String,
    /// The call's seed.
    pub seed: u64,
}

impl CellKey {
    /// Its telemetry file, relative to the output directory, with forward slashes.
    pub fn file(&self) -> String {
        display_path(&telemetry_path(&self.scenario, &self.policy, self.seed))
    }
}

impl std::fmt::Display for CellKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} / {} / seed {}",
            self.scenario, self.policy, self.seed
        )
    }
}

/// A finished call as the ledger records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellDone {
    /// Its index in the whole plan (not the shard).
    pub index: usize,
    /// Which call.
    #[serde(flatten)]
    pub key: CellKey,
    /// Its telemetry file, relative to the output directory.
    pub file: String,
    /// The file's size.
    pub bytes: usize,
    /// The file's sha256, hex.
    pub sha256: String,
    /// Telemetry lines.
    pub intervals: usize,
    /// Whole-call QoE (what the experiment's report is built from; the interval records do not
    /// determine it).
    pub qoe: QoeRecord,
    /// The repair bytes' share of the call's video, % (the report's FEC-share row).
    #[serde(default)]
    pub fec_share_pct: f64,
}

/// `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunManifest {
    /// [`RUN_SCHEMA`].
    pub schema: String,
    /// `experiment` or `collect`.
    pub command: String,
    /// What made it.
    pub engine: Engine,
    /// sha256 of `config` as written ([`config_hash`]).
    pub config_hash: String,
    /// Everything the output depends on, resolved: scenario contents, policies, call settings.
    pub config: Value,
    /// The command's arguments that decide the output (without `--out`, `--shard`, `--jobs`,
    /// `--resume`, `--force`, `--json` and the log level), for `merge` to rebuild the run.
    pub args: Vec<String>,
    /// Which part of the plan this directory holds.
    pub shard: Shard,
    /// Calls in the whole plan.
    pub plan_cells: usize,
    /// Calls in this shard.
    pub shard_cells: usize,
    /// Whether every call of the shard is done and listed in `cells`.
    pub complete: bool,
    /// The shard's calls in plan order, once complete.
    pub cells: Vec<CellDone>,
}

/// The sha256 of a configuration as `run.json` writes it (compact JSON).
pub fn config_hash(config: &Value) -> String {
    hex(&Sha256::digest(config.to_string().as_bytes()))
}

impl RunManifest {
    /// The manifest's path in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(RUN_FILE)
    }

    /// Reads `dir/run.json`; `None` when there is none.
    pub fn read(dir: &Path) -> Result<Option<Self>, LedgerError> {
        let path = Self::path(dir);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(LedgerError::Io {
                    action: "read",
                    path,
                    source,
                });
            }
        };
        let invalid = |message: String| LedgerError::Manifest {
            path: path.clone(),
            message,
        };
        let manifest: Self = serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
        if manifest.schema != RUN_SCHEMA {
            return Err(invalid(format!("its schema is {:?}", manifest.schema)));
        }
        let shard = manifest.shard;
        if shard.index == 0 || shard.index > shard.count {
            return Err(invalid(format!(
                "it names shard {shard}, which cannot exist"
            )));
        }
        if config_hash(&manifest.config) != manifest.config_hash {
            return Err(invalid(
                "its config_hash is not the sha256 of its config (edited by hand?)".into(),
            ));
        }
        Ok(Some(manifest))
    }

    /// Writes `dir/run.json` whole, then renames it into place.
    pub fn write(&self, dir: &Path) -> Result<(), LedgerError> {
        let path = Self::path(dir);
        let text = serde_json::to_string_pretty(self).map_err(|e| LedgerError::Manifest {
            path: path.clone(),
            message: e.to_string(),
        })? + "\n";
        durable::write_atomic(&path, text.as_bytes()).map_err(|source| LedgerError::Io {
            action: "write",
            path,
            source,
        })
    }

    /// How `other` differs from this manifest in what makes two outputs parts of one sweep
    /// (command, engine, configuration, plan size), one line per difference; empty when they
    /// may be joined.
    pub fn sweep_differences(&self, other: &Self) -> Vec<String> {
        let mut out = Vec::new();
        if self.command != other.command {
            out.push(format!("command {} vs {}", self.command, other.command));
        }
        if self.engine != other.engine {
            out.push(format!("engine {} vs {}", self.engine, other.engine));
        }
        if self.config_hash != other.config_hash {
            out.push(format!(
                "configuration {} vs {} (differing: {})",
                short(&self.config_hash),
                short(&other.config_hash),
                differing_keys(&self.config, &other.config).join(", ")
            ));
        }
        if self.plan_cells != other.plan_cells {
            out.push(format!(
                "plan of {} calls vs {}",
                self.plan_cells, other.plan_cells
            ));
        }
        out
    }
}

/// The first 16 hex digits of a hash, for messages.
fn short(hash: &str) -> &str {
    &hash[..hash.len().min(16)]
}

/// The top-level keys whose values differ between two configurations, in order.
pub fn differing_keys(a: &Value, b: &Value) -> Vec<String> {
    let empty = serde_json::Map::new();
    let a = a.as_object().unwrap_or(&empty);
    let b = b.as_object().unwrap_or(&empty);
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

/// The journal of a running sweep: one line per finished call, appended and fsync'd by the
/// worker that finished it.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: Mutex<SyncedFile>,
}

impl Journal {
    /// Opens `dir/cells.jsonl` for appending (creating it).
    pub fn open(dir: &Path) -> Result<Self, LedgerError> {
        let path = dir.join(JOURNAL_FILE);
        let file = SyncedFile::append(&path).map_err(|source| LedgerError::Io {
            action: "open",
            path: path.clone(),
            source,
        })?;
        Ok(Self {
            path,
            file: Mutex::new(file),
        })
    }

    /// Commits one finished call: its whole line in one write, then fsync.
    pub fn record(&self, cell: &CellDone) -> Result<(), LedgerError> {
        let io = |source| LedgerError::Io {
            action: "append to",
            path: self.path.clone(),
            source,
        };
        let mut line = serde_json::to_vec(cell).map_err(|e| io(std::io::Error::other(e)))?;
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file.commit(&line).map_err(io)
    }
}

/// What a journal held.
#[derive(Debug, Default)]
pub struct JournalRead {
    /// Its complete lines, in file order.
    pub cells: Vec<CellDone>,
    /// The 1-based number of a last line cut short (no newline), which was not read and has been
    /// cut off the file so that new lines start clean.
    pub torn_line: Option<u64>,
}

/// Reads `dir/cells.jsonl` (nothing when it is missing). A complete line that is not a finished
/// call is an error naming the line; a last line without its newline is the record of a writer
/// killed mid-line: it is not read, it is removed from the file, and `torn_line` says so.
pub fn read_journal(dir: &Path) -> Result<JournalRead, LedgerError> {
    let path = dir.join(JOURNAL_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(JournalRead::default()),
        Err(source) => {
            return Err(LedgerError::Io {
                action: "read",
                path,
                source,
            });
        }
    };
    let (whole, torn) = durable::split_torn_tail(&bytes);
    let mut read = JournalRead::default();
    let mut line = 0u64;
    for text in whole.split_inclusive(|&b| b == b'\n') {
        line += 1;
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let cell: CellDone =
            serde_json::from_slice(text).map_err(|e| LedgerError::JournalLine {
                path: path.clone(),
                line,
                message: format!("not a finished call: {e}"),
            })?;
        read.cells.push(cell);
    }
    if !torn.is_empty() {
        read.torn_line = Some(line + 1);
        durable::write_atomic(&path, whole).map_err(|source| LedgerError::Io {
            action: "rewrite",
            path,
            source,
        })?;
    }
    Ok(read)
}

/// Removes the journal once `run.json` lists every call.
pub fn remove_journal(dir: &Path) -> Result<(), LedgerError> {
    let path = dir.join(JOURNAL_FILE);
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(LedgerError::Io {
                action: "remove",
                path,
                source,
            });
        }
    }
    durable::sync_dir(dir).map_err(|source| LedgerError::Io {
        action: "sync",
        path: dir.to_path_buf(),
        source,
    })
}

/// The journal's calls checked against the plan: those whose telemetry file is in `dir` with the
/// recorded sha256 are done (the last line of a call wins), the others must run again.
#[derive(Debug, Default)]
pub struct Checked {
    /// Done calls by plan index.
    pub done: BTreeMap<usize, CellDone>,
    /// Calls the journal lists whose file is missing or differs, with why; they run again.
    pub redo: Vec<(CellKey, String)>,
}

/// Checks journal entries against the plan (`plan[i]` is call i) and the files in `dir`. An
/// entry that names a call outside the plan or outside `shard` is an error: the journal belongs
/// to another run.
pub fn check_done(
    dir: &Path,
    plan: &[CellKey],
    shard: Shard,
    cells: Vec<CellDone>,
) -> Result<Checked, LedgerError> {
    let journal = dir.join(JOURNAL_FILE);
    let mut latest: BTreeMap<usize, CellDone> = BTreeMap::new();
    for cell in cells {
        let fits = plan.get(cell.index) == Some(&cell.key)
            && shard.holds(cell.index)
            && cell.file == cell.key.file();
        if !fits {
            return Err(LedgerError::NotThisRun {
                path: journal,
                message: format!(
                    "call {} ({}) is not call {} of shard {shard} of this run's plan",
                    cell.key, cell.file, cell.index
                ),
            });
        }
        latest.insert(cell.index, cell);
    }
    let mut checked = Checked::default();
    for (index, cell) in latest {
        match file_matches(dir, &cell) {
            Ok(()) => {
                checked.done.insert(index, cell);
            }
            Err(why) => checked.redo.push((cell.key, why)),
        }
    }
    Ok(checked)
}

/// Whether `dir/cell.file` has the recorded size and sha256; else why not.
pub fn file_matches(dir: &Path, cell: &CellDone) -> Result<(), String> {
    let path = dir.join(&cell.file);
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() != cell.bytes || hex(&Sha256::digest(&bytes)) != cell.sha256 {
        return Err(format!(
            "{} is not the file recorded for it ({} bytes, sha256 {})",
            path.display(),
            cell.bytes,
            short(&cell.sha256)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ledger-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn key(seed: u64) -> CellKey {
        CellKey {
            scenario: "starlink".into(),
            policy: "fixed:900".into(),
            seed,
        }
    }

    fn done(dir: &Path, index: usize, seed: u64) -> CellDone {
        let key = key(seed);
        let file = key.file();
        let bytes = format!("call {seed}\n").into_bytes();
        let path = dir.join(&file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        CellDone {
            index,
            key,
            file,
            bytes: bytes.len(),
            sha256: hex(&Sha256::digest(&bytes)),
            intervals: 1,
            qoe: QoeRecord::default(),
            fec_share_pct: 0.0,
        }
    }

    fn manifest() -> RunManifest {
        let config = serde_json::json!({"command": "experiment", "calls": 2});
        RunManifest {
            schema: RUN_SCHEMA.into(),
            command: "experiment".into(),
            engine: Engine {
                name: "rtc-client".into(),
                version: "0.1.0".into(),
                binary_sha256: "ab".repeat(32),
            },
            config_hash: config_hash(&config),
            config,
            args: vec!["--calls".into(), "2".into()],
            shard: Shard { index: 1, count: 2 },
            plan_cells: 4,
            shard_cells: 2,
            complete: false,
            cells: Vec::new(),
        }
    }

    #[test]
    fn a_manifest_reads_back_equal_and_a_damaged_one_is_named() {
        let dir = scratch("manifest");
        assert!(RunManifest::read(&dir).unwrap().is_none());
        let mut m = manifest();
        m.cells.push(done(&dir, 0, 5));
        m.write(&dir).unwrap();
        assert_eq!(RunManifest::read(&dir).unwrap(), Some(m.clone()));

        m.config = serde_json::json!({"command": "experiment", "calls": 3});
        m.write(&dir).unwrap();
        let err = RunManifest::read(&dir).unwrap_err().to_string();
        assert!(
            err.contains("config_hash is not the sha256 of its config"),
            "{err}"
        );
        std::fs::write(RunManifest::path(&dir), b"{\"schema\":").unwrap();
        let err = RunManifest::read(&dir).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "{} is not a run manifest",
                dir.join("run.json").display()
            )),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn differences_name_the_engine_and_the_configuration_keys() {
        let a = manifest();
        let mut b = manifest();
        assert!(a.sweep_differences(&b).is_empty());
        b.engine.binary_sha256 = "cd".repeat(32);
        b.config = serde_json::json!({"command": "experiment", "calls": 3});
        b.config_hash = config_hash(&b.config);
        let diff = a.sweep_differences(&b);
        assert_eq!(diff.len(), 2, "{diff:?}");
        assert!(
            diff[0].starts_with("engine rtc-client 0.1.0 (binary sha256 abababab"),
            "{}",
            diff[0]
        );
        assert!(diff[1].ends_with("(differing: calls)"), "{}", diff[1]);
    }

    #[test]
    fn a_torn_last_journal_line_is_reported_cut_off_and_not_read() {
        let dir = scratch("journal");
        let journal = Journal::open(&dir).unwrap();
        journal.record(&done(&dir, 0, 5)).unwrap();
        journal.record(&done(&dir, 2, 6)).unwrap();
        drop(journal);
        let path = dir.join(JOURNAL_FILE);
        let whole = std::fs::read(&path).unwrap();
        let mut torn = whole.clone();
        torn.extend_from_slice(b"{\"index\":4,\"scen");
        std::fs::write(&path, &torn).unwrap();
        let read = read_journal(&dir).unwrap();
        assert_eq!(read.cells.len(), 2);
        assert_eq!(read.torn_line, Some(3));
        assert_eq!(std::fs::read(&path).unwrap(), whole);
        assert_eq!(read_journal(&dir).unwrap().torn_line, None);

        std::fs::write(&path, [&whole[..], b"not json\n"].concat()).unwrap();
        let err = read_journal(&dir).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{} line 3: not a finished call", path.display())),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn done_calls_need_their_file_and_a_call_outside_the_plan_is_refused() {
        let dir = scratch("check");
        let plan: Vec<CellKey> = (5..9).map(key).collect();
        let shard = Shard { index: 1, count: 2 };
        let first = done(&dir, 0, 5);
        let second = done(&dir, 2, 7);
        std::fs::write(dir.join(&second.file), b"changed\n").unwrap();
        let checked = check_done(&dir, &plan, shard, vec![first.clone(), second]).unwrap();
        assert_eq!(checked.done.keys().copied().collect::<Vec<_>>(), [0]);
        assert_eq!(checked.redo.len(), 1);
        assert!(
            checked.redo[0]
                .1
                .contains("is not the file recorded for it"),
            "{:?}",
            checked.redo
        );

        let other_shard = done(&dir, 1, 6);
        let err = check_done(&dir, &plan, shard, vec![first, other_shard])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("is not call 1 of shard 1/2 of this run's plan"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

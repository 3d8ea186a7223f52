//! Scenarios: TOML files describing a call's forward and reverse links and its handover
//! timeline, calibrated to real traces.
//!
//! A scenario file (`traces/scenarios/<name>.toml`, format in [`schema`]) names the processes of
//! each direction (capacity, one-way delay, random loss, buffer, handover effects), where the
//! handovers come from, and the call. [`Scenario::load`] reads and validates one;
//! [`Scenario::realize`] draws a call from it for a seed: the two [`LinkConfig`]s, the
//! ground-truth [`HandoverTimeline`] and, for orbit scenarios, the [`OrbitPath`]. The same file
//! and seed always give the same call.
//!
//! Shipped scenarios (each file's header names its calibration source and the figures it was
//! fitted to): `terrestrial-lte`, `terrestrial-5g`, `terrestrial-broadband` (no handovers),
//! `sparse-leo` (SGP4 over an 80-100-satellite Walker star, the paper's emulation),
//! `starlink` (15-s slots, fitted to LeoCC, `lagos.csv` and the mmsys24 pings), and the trace
//! replays `leocc-trace` and `lagos-trace`.
//!
//! Data files are read from the shared data directory (`../shared/data` next to the workspace)
//! and never copied into the repository: a `data:REL` path in a scenario resolves against it, and
//! a missing directory is an error naming the file ([`ScenarioError::DataMissing`]).

pub mod build;
pub mod cities;
pub mod data;
pub mod family;
pub mod figures;
pub mod orbit;
pub mod process;
pub mod schema;
pub mod sources;
pub mod timeline;
mod type_error;

pub use build::{Realization, probe_rtt};
pub use orbit::{End, OrbitPath, SatelliteChange};
pub use schema::{ScenarioFile, SenderSpec};
pub use timeline::{Handover, HandoverTimeline};

use crate::link::LinkConfig;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a scenario could not be loaded or realised.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// No scenario file by that name.
    #[error("no scenario named {name:?}: {} does not exist (shipped scenarios: {shipped})", path.display())]
    NotFound {
        /// The name asked for.
        name: String,
        /// Where it was looked for.
        path: PathBuf,
        /// The names that exist.
        shipped: String,
    },
    /// The file could not be read.
    #[error("cannot read the scenario {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML did not parse, or has an unknown key or a value of the wrong type (the message
    /// names the key and the line).
    #[error("{origin}: {message}")]
    Parse {
        /// The file.
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// A value out of range.
    #[error("{origin}: {field}: {message}")]
    Invalid {
        /// The file.
        origin: String,
        /// Dotted field name.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A `data:` file was asked for and the shared data directory does not exist.
    #[error(
        "{field}: {file} needs the shared data directory {}, which does not exist \
         (set LEOPACE_DATA or --data to where ../shared/data is)",
        dir.display()
    )]
    DataMissing {
        /// The field that names the file.
        field: String,
        /// The file as written in the scenario.
        file: String,
        /// The directory looked for.
        dir: PathBuf,
    },
    /// A data file could not be read or parsed.
    #[error("{field}: {}: {message}", path.display())]
    Data {
        /// The field that names the file.
        field: String,
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The orbit model failed (catalogue, endpoints, serving policy).
    #[error("orbit: {0}")]
    Orbit(String),
    /// The link refused the configuration built from the scenario.
    #[error("{direction} link: {message}")]
    Link {
        /// `forward` or `reverse`.
        direction: &'static str,
        /// The link's message.
        message: String,
    },
}

/// Where scenario files and shared data live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioPaths {
    /// The workspace root: scenario names resolve to `<root>/traces/scenarios/<name>.toml`, and
    /// workspace-relative files (e.g. `traces/tle/sparse-80.tle`) against it.
    pub root: PathBuf,
    /// The shared data directory `data:` paths resolve against.
    pub data: PathBuf,
}

/// Directory of the shipped scenario files, relative to the workspace root.
pub const SCENARIO_DIR: &str = "traces/scenarios";

impl ScenarioPaths {
    /// `root` and `data` as given.
    pub fn new(root: impl Into<PathBuf>, data: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            data: data.into(),
        }
    }

    /// The workspace this crate was built in, with `../shared/data` beside it: for tests and
    /// for a binary run from a checkout.
    pub fn workspace() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let data = root.join("..").join("shared").join("data");
        Self { root, data }
    }

    /// Paths for a command-line tool: the root is `root` if given, else the nearest ancestor of
    /// `cwd` holding `traces/scenarios`, else the build workspace ([`Self::workspace`]); the data
    /// directory is `data` if given, else `<root>/../shared/data`.
    pub fn discover(root: Option<PathBuf>, data: Option<PathBuf>, cwd: &Path) -> Self {
        let root = root.unwrap_or_else(|| {
            cwd.ancestors()
                .find(|a| a.join(SCENARIO_DIR).is_dir())
                .map(Path::to_path_buf)
                .unwrap_or_else(|| Self::workspace().root)
        });
        let data = data.unwrap_or_else(|| root.join("..").join("shared").join("data"));
        Self { root, data }
    }

    /// The file for a scenario name, or the path itself when `name` looks like a path (contains
    /// a separator or ends in `.toml`).
    pub fn scenario_file(&self, name: &str) -> PathBuf {
        if name.contains('/') || name.contains('\\') || name.ends_with(".toml") {
            PathBuf::from(name)
        } else {
            self.root.join(SCENARIO_DIR).join(format!("{name}.toml"))
        }
    }

    /// Names of the shipped scenarios (file stems in `traces/scenarios`), sorted.
    pub fn shipped(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.root.join(SCENARIO_DIR))
            .map(|dir| {
                dir.filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                    .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Resolves a file named in a scenario: `data:REL` against the data directory (an error
    /// naming the file when the directory is missing), an absolute path as is, anything else
    /// against the workspace root.
    pub fn resolve(&self, field: &str, file: &str) -> Result<PathBuf, ScenarioError> {
        if let Some(rel) = file.strip_prefix("data:") {
            if !self.data.is_dir() {
                return Err(ScenarioError::DataMissing {
                    field: field.to_owned(),
                    file: file.to_owned(),
                    dir: self.data.clone(),
                });
            }
            Ok(self.data.join(rel))
        } else {
            let p = Path::new(file);
            Ok(if p.is_absolute() {
                p.to_path_buf()
            } else {
                self.root.join(p)
            })
        }
    }
}

/// A loaded, validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file's contents.
    pub file: ScenarioFile,
    /// Where it was read from (for messages).
    pub origin: String,
    /// Where its data files resolve.
    pub paths: ScenarioPaths,
}

impl Scenario {
    /// Loads `name` (a shipped scenario name, or a path to a `.toml` file) and validates it.
    pub fn load(name: &str, paths: &ScenarioPaths) -> Result<Self, ScenarioError> {
        let path = paths.scenario_file(name);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ScenarioError::NotFound {
                    name: name.to_owned(),
                    path,
                    shipped: paths.shipped().join(", "),
                });
            }
            Err(source) => return Err(ScenarioError::Read { path, source }),
        };
        Self::parse(&text, &path.display().to_string(), paths)
    }

    /// Parses and validates scenario text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str, paths: &ScenarioPaths) -> Result<Self, ScenarioError> {
        let file: ScenarioFile = toml::from_str(text).map_err(|e| {
            let mut message = e.to_string().trim_end().to_owned();
            if let Some(key) = type_error::key_behind(text, &e) {
                message.push_str(&format!("\nin `{key}`"));
            }
            ScenarioError::Parse {
                origin: origin.to_owned(),
                message,
            }
        })?;
        file.validate().map_err(|e| ScenarioError::Invalid {
            origin: origin.to_owned(),
            field: e.field,
            message: e.message,
        })?;
        Ok(Self {
            file,
            origin: origin.to_owned(),
            paths: paths.clone(),
        })
    }

    /// The scenario's name.
    pub fn name(&self) -> &str {
        &self.file.name
    }

    /// The call length the file asks for.
    pub fn default_duration(&self) -> Duration {
        Duration::from_secs(self.file.call.duration_s)
    }

    /// The sender options the file's `[sender]` table sets (none without one).
    pub fn sender_overrides(&self) -> Result<crate::call::SenderOverrides, ScenarioError> {
        self.file
            .sender_overrides()
            .map_err(|e| ScenarioError::Invalid {
                origin: self.origin.clone(),
                field: e.field,
                message: e.message,
            })
    }

    /// Draws one call of `duration` for `seed`: see [`build`].
    pub fn realize(&self, seed: u64, duration: Duration) -> Result<Realization, ScenarioError> {
        build::realize(self, seed, duration)
    }
}

/// The two link configurations of a realised call (forward first).
pub type LinkPair = (LinkConfig, LinkConfig);

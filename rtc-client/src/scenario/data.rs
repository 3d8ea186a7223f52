//! Loading the data files a scenario names: wrappers over [`crate::link::readers`] whose errors
//! are [`ScenarioError`]s that name the scenario field and the file.

use super::ScenarioError;
use super::schema::LagosColumn;
use crate::link::readers::{self, Direction, LagosTrace, PingTrace};
use crate::link::{DelaySeries, MahimahiTrace};
use std::path::Path;

pub(super) fn data_error(field: &str, path: &Path, e: impl std::fmt::Display) -> ScenarioError {
    ScenarioError::Data {
        field: field.to_owned(),
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Loads a Mahimahi trace.
pub fn load_mahimahi(field: &str, path: &Path) -> Result<MahimahiTrace, ScenarioError> {
    MahimahiTrace::load(path).map_err(|e| data_error(field, path, e))
}

/// Loads `lagos.csv`.
pub fn load_lagos(field: &str, path: &Path) -> Result<LagosTrace, ScenarioError> {
    LagosTrace::load(path).map_err(|e| data_error(field, path, e))
}

/// Loads a LeoReplayer delay file.
pub fn load_leoreplayer(field: &str, path: &Path) -> Result<DelaySeries, ScenarioError> {
    readers::read_leoreplayer_delay(path).map_err(|e| data_error(field, path, e))
}

/// Loads an mmsys24 ping TSV.
pub fn load_ping(field: &str, path: &Path) -> Result<PingTrace, ScenarioError> {
    PingTrace::load(path).map_err(|e| data_error(field, path, e))
}

/// The reader's direction for a scenario's `lagos.csv` column.
pub fn lagos_direction(column: LagosColumn) -> Direction {
    match column {
        LagosColumn::Uplink => Direction::Uplink,
        LagosColumn::Downlink => Direction::Downlink,
    }
}

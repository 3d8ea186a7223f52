//! TLE catalogues: loading 2-line and 3-line element sets with the `sgp4` crate.
//!
//! Real catalogues come in several shapes (reference D2): Celestrak's 3-line files with names padded
//! to 24 characters, Space-Track's `0 NAME` variant, bare 2-line files, CRLF line ends (the Iridium
//! file in `../shared/data/tle/iridium-toolkit/` has them), blank lines between records. All of
//! them load here. What does not load is a damaged data line: the error names the file, the 1-based
//! line number and what was wrong (length, checksum, a field), because a silently dropped satellite
//! is a serving satellite the model will never pick.
//!
//! Objects that parse but cannot be propagated (SGP4 refuses the elements, or the orbit is already
//! inside the atmosphere) are *skipped and counted*, not errors: Celestrak snapshots always carry a
//! few decaying objects.

use super::geometry::{EARTH_EQUATORIAL_RADIUS_KM, Observer};
use super::kepler::{WGS72_EQUATORIAL_RADIUS_KM, semi_major_axis_km};
use crate::sky::SkyPosition;
use chrono::{DateTime, NaiveDateTime, Utc};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Length of a TLE data line, checksum included (reference D2).
pub const TLE_LINE_LENGTH: usize = 69;

/// Altitude below which an object is taken as decayed and skipped: 100 km, the conventional edge of
/// space (Kármán line). SGP4 still returns numbers below it, but nothing there is a serving
/// satellite.
pub const DECAYED_BELOW_KM: f64 = 100.0;

/// Why a catalogue could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TleError {
    /// The file could not be read. The message names the file; the I/O error is the
    /// [`source`](std::error::Error::source), not repeated in the message, so that error chains
    /// (`anyhow`) show it once.
    #[error("cannot read TLE file {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line of the file is not valid TLE.
    #[error("{origin}, line {line}: {problem}")]
    Line {
        /// The file name (or the origin name given to [`Catalogue::parse`]).
        origin: String,
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        problem: LineProblem,
    },
}

/// What was wrong with one line of a TLE file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LineProblem {
    /// A data line that is not exactly [`TLE_LINE_LENGTH`] characters long (trailing whitespace
    /// and line ends excluded).
    #[error("a TLE data line has 69 characters, this one has {0}")]
    Length(usize),
    /// A data line with a character outside ASCII.
    #[error("non-ASCII character at column {0}")]
    NotAscii(usize),
    /// Column 69 is not a digit.
    #[error("column 69 should be the checksum digit, found {0:?}")]
    ChecksumNotADigit(char),
    /// Column 69 does not match the digit sum (reference D2: digits + one per '-', mod 10).
    #[error("checksum mismatch: column 69 says {found}, the line sums to {computed}")]
    Checksum {
        /// The digit in column 69.
        found: u8,
        /// The digit computed from columns 1-68.
        computed: u8,
    },
    /// A column that must be blank is not.
    #[error("column {0} should be a space")]
    ExpectedSpace(usize),
    /// A field that does not parse.
    #[error("field {field} (columns {columns}) does not parse: {text:?}")]
    Field {
        /// The field's name.
        field: &'static str,
        /// Its columns, 1-based, inclusive.
        columns: &'static str,
        /// What was there.
        text: String,
    },
    /// Line 2's catalogue number differs from line 1's.
    #[error("catalogue number {line2} on line 2 does not match {line1} on line 1")]
    NoradMismatch {
        /// Catalogue number on line 1.
        line1: String,
        /// Catalogue number on line 2.
        line2: String,
    },
    /// A line 1 was not followed by a line 2.
    #[error("expected line 2 of the element set (starting \"2 \"), found {0:?}")]
    ExpectedLine2(String),
    /// A line 2 with no line 1 before it.
    #[error("line 2 of an element set without a line 1 before it")]
    UnexpectedLine2,
    /// A name line followed by something that is not a line 1 (two names in a row, or garbage).
    #[error("expected line 1 of an element set (starting \"1 \") after the name, found {0:?}")]
    ExpectedLine1(String),
    /// The file ends in the middle of an element set.
    #[error("the file ends in the middle of an element set")]
    Truncated,
    /// The `sgp4` crate refused the element set for a reason the checks above did not catch.
    #[error("sgp4 refuses the element set: {0}")]
    Sgp4(String),
}

/// An object that parsed but was left out of the catalogue, with the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// NORAD catalogue number.
    pub norad_id: u64,
    /// Name, if the file had one.
    pub name: Option<String>,
    /// 1-based number of the element set's line 1 in the file.
    pub line: usize,
    /// Why it was skipped (decayed, SGP4 refuses it, duplicate).
    pub reason: String,
}

/// Why a satellite has no position at an instant.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PropagationError {
    /// The instant is too far from the epoch to be represented (centuries away).
    #[error("satellite {norad_id}: instant {at} cannot be expressed in minutes since the epoch")]
    Instant {
        /// NORAD catalogue number.
        norad_id: u64,
        /// The instant asked for.
        at: DateTime<Utc>,
    },
    /// SGP4 diverged (the orbit decayed or became hyperbolic at that instant).
    #[error("satellite {norad_id}: SGP4 fails at {at}: {reason}")]
    Sgp4 {
        /// NORAD catalogue number.
        norad_id: u64,
        /// The instant asked for.
        at: DateTime<Utc>,
        /// The SGP4 error.
        reason: String,
    },
}

/// One propagatable satellite of a catalogue.
#[derive(Debug, Clone)]
pub struct Satellite {
    name: Option<String>,
    elements: sgp4::Elements,
    constants: sgp4::Constants,
    epoch: DateTime<Utc>,
    mean_altitude_km: f64,
}

impl Satellite {
    /// Builds a propagatable satellite from parsed elements.
    ///
    /// Uses the WGS72 constants (`Constants::from_elements_afspc_compatibility_mode`, reference
    /// D3): element sets are fitted by their publishers with WGS72 SGP4, so propagating with the
    /// same constants reproduces them best (Vallado et al. 2006, "Revisiting Spacetrack Report
    /// #3"), and it is what Skyfield and the Python `sgp4` package do, which keeps cross-checks
    /// exact. The error is the reason the object is skipped.
    pub(crate) fn from_elements(elements: sgp4::Elements) -> Result<Self, String> {
        let constants = sgp4::Constants::from_elements_afspc_compatibility_mode(&elements)
            .map_err(|e| format!("SGP4 refuses the elements: {e}"))?;
        let at_epoch = constants
            .propagate(sgp4::MinutesSinceEpoch(0.0))
            .map_err(|e| format!("SGP4 fails at the epoch: {e}"))?;
        let altitude = norm(at_epoch.position) - EARTH_EQUATORIAL_RADIUS_KM;
        if altitude.is_nan() || altitude <= DECAYED_BELOW_KM {
            return Err(format!(
                "decayed: {altitude:.0} km above the equatorial radius at the epoch"
            ));
        }
        let name = elements
            .object_name
            .as_deref()
            .map(clean_name)
            .filter(|n| !n.is_empty());
        let epoch = elements.datetime.and_utc();
        let mean_altitude_km =
            semi_major_axis_km(elements.mean_motion) - WGS72_EQUATORIAL_RADIUS_KM;
        Ok(Self {
            name,
            elements,
            constants,
            epoch,
            mean_altitude_km,
        })
    }

    /// NORAD catalogue number.
    pub fn norad_id(&self) -> u64 {
        self.elements.norad_id
    }

    /// Name from the file's name line, trimmed (Celestrak pads to 24 characters, Space-Track
    /// prefixes `0 `); `None` for 2-line files.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Epoch of the element set.
    pub fn epoch(&self) -> DateTime<Utc> {
        self.epoch
    }

    /// The parsed elements.
    pub fn elements(&self) -> &sgp4::Elements {
        &self.elements
    }

    /// Mean altitude above the WGS72 equatorial radius, from the mean motion by Kepler's third
    /// law (see [`walker::semi_major_axis_km`](super::walker::semi_major_axis_km)). Used to tell
    /// operational shells from satellites still raising their orbit or already deorbiting.
    pub fn mean_altitude_km(&self) -> f64 {
        self.mean_altitude_km
    }

    /// SGP4 position (km) and velocity (km/s) in TEME at `at` (reference D3 step 1).
    pub fn propagate(&self, at: DateTime<Utc>) -> Result<sgp4::Prediction, PropagationError> {
        let minutes = self.minutes_since_epoch(at)?;
        self.constants
            .propagate(sgp4::MinutesSinceEpoch(minutes))
            .map_err(|e| PropagationError::Sgp4 {
                norad_id: self.norad_id(),
                at,
                reason: e.to_string(),
            })
    }

    /// TEME position at `at`, km.
    pub fn teme_position_km(&self, at: DateTime<Utc>) -> Result<[f64; 3], PropagationError> {
        Ok(self.propagate(at)?.position)
    }

    /// Where the satellite is in `observer`'s sky at `at` (reference D4).
    pub fn sky_position(
        &self,
        observer: &Observer,
        at: DateTime<Utc>,
    ) -> Result<SkyPosition, PropagationError> {
        Ok(observer.look(self.teme_position_km(at)?, at))
    }

    fn minutes_since_epoch(&self, at: DateTime<Utc>) -> Result<f64, PropagationError> {
        let at_naive: NaiveDateTime = at.naive_utc();
        (at_naive - self.elements.datetime)
            .num_nanoseconds()
            .map(|ns| ns as f64 / 60e9)
            .ok_or(PropagationError::Instant {
                norad_id: self.norad_id(),
                at,
            })
    }
}

/// A loaded TLE catalogue: the propagatable satellites, in file order, and what was skipped.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    origin: String,
    satellites: Vec<Satellite>,
    skipped: Vec<Skipped>,
    by_id: HashMap<u64, usize>,
}

impl Catalogue {
    /// Reads and parses a TLE file (see [`Catalogue::parse`]). Bytes that are not UTF-8 are
    /// replaced, so a damaged data line is reported as non-ASCII with its line number.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, TleError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| TleError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let text = String::from_utf8_lossy(&bytes);
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses TLE text; `origin` names the source in errors (a file name).
    ///
    /// Accepts 3-line sets (name, line 1, line 2), 2-line sets, a mix of both, `0 NAME` name
    /// lines, CRLF or LF line ends, blank lines and trailing whitespace. A line starting with
    /// `1 ` is a line 1, `2 ` a line 2, anything else non-blank a name. Errors stop the parse at
    /// the first bad line; unpropagatable and decayed objects, and older duplicates of a NORAD
    /// number, are skipped and counted instead ([`Catalogue::skipped`]).
    pub fn parse(text: &str, origin: &str) -> Result<Self, TleError> {
        let err = |line: usize, problem: LineProblem| TleError::Line {
            origin: origin.to_owned(),
            line,
            problem,
        };
        let mut parsed: Vec<(usize, sgp4::Elements)> = Vec::new();
        let mut name: Option<(usize, String)> = None;
        let mut line1: Option<(usize, &str)> = None;
        for (index, raw) in text.lines().enumerate() {
            let number = index + 1;
            let line = raw.trim_end();
            if let Some((n1, first)) = line1.take() {
                if !line.starts_with("2 ") {
                    return Err(err(number, LineProblem::ExpectedLine2(preview(line))));
                }
                let elements = parse_element_set(name.take().map(|(_, n)| n), first, line)
                    .map_err(|(which, problem)| {
                        err(if which == 1 { n1 } else { number }, problem)
                    })?;
                parsed.push((n1, elements));
                continue;
            }
            if line.is_empty() {
                continue;
            }
            if line.starts_with("1 ") {
                line1 = Some((number, line));
            } else if line.starts_with("2 ") {
                return Err(err(number, LineProblem::UnexpectedLine2));
            } else if let Some((n, _)) = &name {
                return Err(err(*n + 1, LineProblem::ExpectedLine1(preview(line))));
            } else {
                name = Some((number, line.to_owned()));
            }
        }
        if line1.is_some() || name.is_some() {
            let last = text.lines().count();
            return Err(err(last.max(1), LineProblem::Truncated));
        }
        Ok(Self::from_parsed(origin, parsed))
    }

    /// A catalogue from already parsed element sets (e.g. Celestrak OMM JSON through `sgp4`'s
    /// serde support). Line numbers in [`Skipped`] are the 1-based positions in `elements`.
    pub fn from_elements(origin: &str, elements: impl IntoIterator<Item = sgp4::Elements>) -> Self {
        Self::from_parsed(
            origin,
            elements
                .into_iter()
                .enumerate()
                .map(|(i, e)| (i + 1, e))
                .collect(),
        )
    }

    fn from_parsed(origin: &str, parsed: Vec<(usize, sgp4::Elements)>) -> Self {
        let mut satellites: Vec<Satellite> = Vec::with_capacity(parsed.len());
        let mut skipped = Vec::new();
        let mut by_id: HashMap<u64, usize> = HashMap::with_capacity(parsed.len());
        for (line, elements) in parsed {
            let norad_id = elements.norad_id;
            let name = elements.object_name.as_deref().map(clean_name);
            let satellite = match Satellite::from_elements(elements) {
                Ok(s) => s,
                Err(reason) => {
                    skipped.push(Skipped {
                        norad_id,
                        name,
                        line,
                        reason,
                    });
                    continue;
                }
            };
            match by_id.get(&norad_id) {
                Some(&index) => {
                    let kept = &mut satellites[index];
                    let reason = "duplicate catalogue number; the newer element set is kept";
                    if satellite.epoch > kept.epoch {
                        *kept = satellite;
                    }
                    skipped.push(Skipped {
                        norad_id,
                        name,
                        line,
                        reason: reason.to_owned(),
                    });
                }
                None => {
                    by_id.insert(norad_id, satellites.len());
                    satellites.push(satellite);
                }
            }
        }
        Self {
            origin: origin.to_owned(),
            satellites,
            skipped,
            by_id,
        }
    }

    /// Where the catalogue came from (the file name given to [`Catalogue::load`]).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Number of propagatable satellites.
    pub fn len(&self) -> usize {
        self.satellites.len()
    }

    /// Whether no satellite loaded.
    pub fn is_empty(&self) -> bool {
        self.satellites.is_empty()
    }

    /// Number of objects skipped (decayed, unpropagatable, duplicates).
    pub fn skipped(&self) -> usize {
        self.skipped.len()
    }

    /// The skipped objects with their reasons.
    pub fn skipped_objects(&self) -> &[Skipped] {
        &self.skipped
    }

    /// The satellites, in file order.
    pub fn satellites(&self) -> &[Satellite] {
        &self.satellites
    }

    /// Iterates over the satellites, in file order.
    pub fn iter(&self) -> std::slice::Iter<'_, Satellite> {
        self.satellites.iter()
    }

    /// The satellite with this NORAD catalogue number.
    pub fn get(&self, norad_id: u64) -> Option<&Satellite> {
        self.by_id.get(&norad_id).map(|&i| &self.satellites[i])
    }

    /// The newest element-set epoch: the instant the catalogue is most accurate around (TLEs
    /// degrade by km per day, reference D2/D4).
    pub fn newest_epoch(&self) -> Option<DateTime<Utc>> {
        self.satellites.iter().map(Satellite::epoch).max()
    }

    /// A satellite's sky position at a UTC instant, by NORAD number. `None` when the catalogue
    /// has no such satellite.
    pub fn sky_position(
        &self,
        norad_id: u64,
        observer: &Observer,
        at: DateTime<Utc>,
    ) -> Option<Result<SkyPosition, PropagationError>> {
        self.get(norad_id).map(|s| s.sky_position(observer, at))
    }
}

impl<'a> IntoIterator for &'a Catalogue {
    type Item = &'a Satellite;
    type IntoIter = std::slice::Iter<'a, Satellite>;

    fn into_iter(self) -> Self::IntoIter {
        self.satellites.iter()
    }
}

/// Checks a data line and parses the pair with `sgp4`. The error says which line (1 or 2) failed.
fn parse_element_set(
    name: Option<String>,
    line1: &str,
    line2: &str,
) -> Result<sgp4::Elements, (u8, LineProblem)> {
    check_data_line(line1, &LINE1_SPACES, &LINE1_FIELDS).map_err(|p| (1, p))?;
    check_data_line(line2, &LINE2_SPACES, &LINE2_FIELDS).map_err(|p| (2, p))?;
    let id1 = line1[2..7].trim_start();
    let id2 = line2[2..7].trim_start();
    if sgp4_norad(id1) != sgp4_norad(id2) {
        return Err((
            2,
            LineProblem::NoradMismatch {
                line1: id1.to_owned(),
                line2: id2.to_owned(),
            },
        ));
    }
    sgp4::Elements::from_tle(name, line1.as_bytes(), line2.as_bytes())
        .map_err(|e| (1, LineProblem::Sgp4(e.to_string())))
}

/// A NORAD number field: up to 5 digits, or Alpha-5 (a letter for the ten-thousands, I and O
/// excluded, reference D2), as the `sgp4` crate reads it.
fn sgp4_norad(field: &str) -> Option<u64> {
    let bytes = field.as_bytes();
    let (head, rest) = match bytes {
        [first @ b'A'..=b'Z', rest @ ..] if bytes.len() == 5 => {
            let value = match first {
                b'A'..=b'H' => first - b'A' + 10,
                b'J'..=b'N' => first - b'J' + 18,
                b'P'..=b'Z' => first - b'P' + 23,
                _ => return None,
            };
            (u64::from(value), rest)
        }
        _ => (0, bytes),
    };
    if rest.is_empty() || !rest.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let digits = std::str::from_utf8(rest).ok()?.parse::<u64>().ok()?;
    Some(head * 10_000 + digits)
}

/// 0-based columns that must be spaces (the `sgp4` crate checks the same ones).
const LINE1_SPACES: [usize; 8] = [1, 8, 17, 32, 43, 52, 61, 63];
const LINE2_SPACES: [usize; 7] = [1, 7, 16, 25, 33, 42, 51];

#[derive(Clone, Copy)]
enum Kind {
    /// A NORAD number, 5 digits or Alpha-5.
    Norad,
    /// A classification letter.
    Class,
    /// An integer, possibly blank-padded on the left.
    Int,
    /// A float with an explicit decimal point (or digits only).
    Float,
    /// Mantissa with assumed leading decimal point and a sign-and-digit exponent.
    Exp,
    /// Digits with an assumed leading decimal point.
    Decimal,
}

struct Field {
    name: &'static str,
    columns: &'static str,
    range: std::ops::Range<usize>,
    kind: Kind,
}

const fn field(
    name: &'static str,
    columns: &'static str,
    range: std::ops::Range<usize>,
    kind: Kind,
) -> Field {
    Field {
        name,
        columns,
        range,
        kind,
    }
}

const LINE1_FIELDS: [Field; 9] = [
    field("catalogue number", "3-7", 2..7, Kind::Norad),
    field("classification", "8", 7..8, Kind::Class),
    field("epoch year", "19-20", 18..20, Kind::Int),
    field("epoch day", "21-32", 20..32, Kind::Float),
    field("mean motion derivative", "34-43", 33..43, Kind::Float),
    field("mean motion second derivative", "45-52", 44..52, Kind::Exp),
    field("B* drag term", "54-61", 53..61, Kind::Exp),
    field("ephemeris type", "63", 62..63, Kind::Int),
    field("element set number", "65-68", 64..68, Kind::Int),
];

const LINE2_FIELDS: [Field; 8] = [
    field("catalogue number", "3-7", 2..7, Kind::Norad),
    field("inclination", "9-16", 8..16, Kind::Float),
    field(
        "right ascension of the ascending node",
        "18-25",
        17..25,
        Kind::Float,
    ),
    field("eccentricity", "27-33", 26..33, Kind::Decimal),
    field("argument of perigee", "35-42", 34..42, Kind::Float),
    field("mean anomaly", "44-51", 43..51, Kind::Float),
    field("mean motion", "53-63", 52..63, Kind::Float),
    field("revolution number", "64-68", 63..68, Kind::Int),
];

fn check_data_line(line: &str, spaces: &[usize], fields: &[Field]) -> Result<(), LineProblem> {
    if let Some(column) = line.bytes().position(|b| !b.is_ascii()) {
        return Err(LineProblem::NotAscii(line[..column].chars().count() + 1));
    }
    let bytes = line.as_bytes();
    if bytes.len() != TLE_LINE_LENGTH {
        return Err(LineProblem::Length(bytes.len()));
    }
    let last = bytes[TLE_LINE_LENGTH - 1];
    if !last.is_ascii_digit() {
        return Err(LineProblem::ChecksumNotADigit(char::from(last)));
    }
    let computed = checksum(&bytes[..TLE_LINE_LENGTH - 1]);
    let found = last - b'0';
    if computed != found {
        return Err(LineProblem::Checksum { found, computed });
    }
    if let Some(&column) = spaces.iter().find(|&&c| bytes[c] != b' ') {
        return Err(LineProblem::ExpectedSpace(column + 1));
    }
    for f in fields {
        let text = &line[f.range.clone()];
        if !field_parses(text, f.kind) {
            return Err(LineProblem::Field {
                field: f.name,
                columns: f.columns,
                text: text.to_owned(),
            });
        }
    }
    Ok(())
}

/// The TLE checksum of columns 1-68: the sum of the digits plus one for each '-', mod 10
/// (reference D2).
pub fn checksum(columns_1_to_68: &[u8]) -> u8 {
    let sum: u32 = columns_1_to_68
        .iter()
        .map(|&b| match b {
            b'0'..=b'9' => u32::from(b - b'0'),
            b'-' => 1,
            _ => 0,
        })
        .sum();
    (sum % 10) as u8
}

fn field_parses(text: &str, kind: Kind) -> bool {
    let trimmed = text.trim_start();
    match kind {
        Kind::Norad => sgp4_norad(trimmed).is_some(),
        Kind::Class => matches!(text, "U" | "C" | "S"),
        Kind::Int => !trimmed.is_empty() && trimmed.bytes().all(|b| b.is_ascii_digit()),
        Kind::Float => {
            !trimmed.is_empty()
                && trimmed
                    .bytes()
                    .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+'))
                && trimmed.parse::<f64>().is_ok_and(f64::is_finite)
        }
        Kind::Decimal => !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()),
        Kind::Exp => {
            // e.g. " 12345-3", "-12345-4", " 00000+0", "+12345-5"
            let bytes = trimmed.as_bytes();
            if bytes.len() < 3 {
                return false;
            }
            let (mantissa, exponent) = bytes.split_at(bytes.len() - 2);
            let mantissa = match mantissa.first() {
                Some(b'-' | b'+') => &mantissa[1..],
                _ => mantissa,
            };
            !mantissa.is_empty()
                && mantissa.iter().all(u8::is_ascii_digit)
                && matches!(exponent[0], b'-' | b'+' | b' ' | b'0')
                && exponent[1].is_ascii_digit()
        }
    }
}

/// Trims a name line: surrounding whitespace and Space-Track's `0 ` prefix.
fn clean_name(raw: &str) -> String {
    let trimmed = raw.trim();
    trimmed
        .strip_prefix("0 ")
        .map(str::trim)
        .unwrap_or(trimmed)
        .to_owned()
}

/// The start of a line for error messages.
fn preview(line: &str) -> String {
    let mut s: String = line.chars().take(40).collect();
    if line.chars().count() > 40 {
        s.push('…');
    }
    s
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISS_1: &str = "1 25544U 98067A   20194.88612269 -.00002218  00000-0 -31515-4 0  9992";
    const ISS_2: &str = "2 25544  51.6461 221.2784 0001413  89.1723 280.4612 15.49507896236008";

    fn parse(text: &str) -> Result<Catalogue, TleError> {
        Catalogue::parse(text, "test.tle")
    }

    #[test]
    fn a_read_error_names_the_file_and_leaves_the_cause_to_source() {
        use std::error::Error as _;
        let err = Catalogue::load("/nonexistent/starlink.tle").unwrap_err();
        assert!(matches!(err, TleError::Io { .. }), "{err:?}");
        let cause = err
            .source()
            .expect("the I/O error is the source")
            .to_string();
        assert_eq!(
            err.to_string(),
            "cannot read TLE file /nonexistent/starlink.tle"
        );
        assert!(!err.to_string().contains(&cause), "{err}");
    }

    fn line_error(text: &str) -> (usize, LineProblem, String) {
        match parse(text) {
            Err(e @ TleError::Line { .. }) => {
                let message = e.to_string();
                let TleError::Line { line, problem, .. } = e else {
                    unreachable!()
                };
                (line, problem, message)
            }
            other => panic!("expected a line error, got {other:?}"),
        }
    }

    #[test]
    fn a_three_line_set_with_a_padded_name_loads_with_the_name_trimmed() {
        let text = format!("ISS (ZARYA)             \n{ISS_1}\n{ISS_2}\n");
        let c = parse(&text).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c.skipped(), 0);
        let s = &c.satellites()[0];
        assert_eq!(s.norad_id(), 25544);
        assert_eq!(s.name(), Some("ISS (ZARYA)"));
        assert_eq!(
            c.newest_epoch()
                .unwrap()
                .format("%Y-%m-%d %H:%M")
                .to_string(),
            "2020-07-12 21:16"
        );
    }

    #[test]
    fn crlf_line_ends_blank_lines_and_space_track_zero_names_are_accepted() {
        let text = format!("\r\n0 ISS (ZARYA)\r\n{ISS_1}\r\n{ISS_2}\r\n\r\n\r\n");
        let c = parse(&text).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c.satellites()[0].name(), Some("ISS (ZARYA)"));
    }

    #[test]
    fn a_two_line_file_without_names_loads() {
        let text = format!("{ISS_1}\n{ISS_2}");
        let c = parse(&text).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c.satellites()[0].name(), None);
    }

    #[test]
    fn an_empty_file_is_an_empty_catalogue() {
        let c = parse("\n\n").unwrap();
        assert!(c.is_empty());
        assert_eq!(c.newest_epoch(), None);
    }

    #[test]
    fn a_bad_checksum_names_the_file_the_line_and_both_digits() {
        let bad = format!("{}3", &ISS_2[..68]);
        let (line, problem, message) = line_error(&format!("ISS\n{ISS_1}\n{bad}\n"));
        assert_eq!(line, 3);
        assert_eq!(
            problem,
            LineProblem::Checksum {
                found: 3,
                computed: 8
            }
        );
        assert!(
            message.starts_with("test.tle, line 3: checksum"),
            "{message}"
        );
    }

    #[test]
    fn a_truncated_line_is_a_length_error_on_that_line() {
        let (line, problem, _) = line_error(&format!("ISS\n{}\n{ISS_2}\n", &ISS_1[..40]));
        assert_eq!((line, problem), (2, LineProblem::Length(40)));
    }

    #[test]
    fn a_file_cut_after_line_1_is_truncated() {
        let (line, problem, _) = line_error(&format!("ISS\n{ISS_1}\n"));
        assert_eq!((line, problem), (2, LineProblem::Truncated));
        let (line, problem, _) = line_error("ISS\n");
        assert_eq!((line, problem), (1, LineProblem::Truncated));
    }

    #[test]
    fn a_garbled_field_is_named_with_its_columns() {
        // Replace the inclination "51.6461" by "51.6x61" and fix the checksum so only the field
        // is wrong.
        let mut bad = ISS_2.replace(" 51.6461", " 51.6x61");
        bad.truncate(68);
        let sum = checksum(bad.as_bytes());
        bad.push(char::from(b'0' + sum));
        let (line, problem, message) = line_error(&format!("{ISS_1}\n{bad}\n"));
        assert_eq!(line, 2);
        assert_eq!(
            problem,
            LineProblem::Field {
                field: "inclination",
                columns: "9-16",
                text: " 51.6x61".into()
            }
        );
        assert!(message.contains("inclination (columns 9-16)"), "{message}");
    }

    #[test]
    fn a_checksum_that_is_not_a_digit_is_an_error_not_a_panic() {
        let bad = format!("{} ", &ISS_1[..68]);
        // Trailing whitespace is trimmed, so this is a length error; a letter is not.
        let (_, problem, _) = line_error(&format!("{bad}\n{ISS_2}\n"));
        assert_eq!(problem, LineProblem::Length(68));
        let bad = format!("{}X", &ISS_1[..68]);
        let (line, problem, _) = line_error(&format!("{bad}\n{ISS_2}\n"));
        assert_eq!((line, problem), (1, LineProblem::ChecksumNotADigit('X')));
    }

    #[test]
    fn mismatched_catalogue_numbers_are_refused() {
        let mut other = ISS_2.replacen("25544", "25545", 1);
        other.truncate(68);
        let sum = checksum(other.as_bytes());
        other.push(char::from(b'0' + sum));
        let (line, problem, _) = line_error(&format!("{ISS_1}\n{other}\n"));
        assert_eq!(line, 2);
        assert!(matches!(problem, LineProblem::NoradMismatch { .. }));
    }

    #[test]
    fn lines_out_of_order_are_named() {
        let (line, problem, _) = line_error(&format!("{ISS_2}\n{ISS_1}\n"));
        assert_eq!((line, problem), (1, LineProblem::UnexpectedLine2));
        let (line, problem, _) = line_error(&format!("{ISS_1}\n{ISS_1}\n"));
        assert_eq!(line, 2);
        assert!(matches!(problem, LineProblem::ExpectedLine2(_)));
        let (line, problem, _) = line_error(&format!("NAME A\nNAME B\n{ISS_1}\n{ISS_2}\n"));
        assert_eq!(line, 2);
        assert_eq!(problem, LineProblem::ExpectedLine1("NAME B".into()));
    }

    #[test]
    fn non_ascii_in_a_data_line_is_an_error_with_its_column() {
        let bad = ISS_1.replacen("98067A", "98067é", 1);
        let (line, problem, _) = line_error(&format!("{bad}\n{ISS_2}\n"));
        assert_eq!((line, problem), (1, LineProblem::NotAscii(15)));
    }

    #[test]
    fn every_truncation_and_single_byte_garbling_is_an_error_or_a_catalogue_never_a_panic() {
        let text = format!("ISS (ZARYA)\n{ISS_1}\n{ISS_2}\n");
        for cut in 0..text.len() {
            let _ = parse(&text[..cut]);
        }
        let garbage = [b'x', b' ', b'-', b'+', b'.', b'9', b'\n', b'\r', 0u8, 0xff];
        let bytes = text.as_bytes();
        for position in 0..bytes.len() {
            for &g in &garbage {
                let mut garbled = bytes.to_vec();
                garbled[position] = g;
                let garbled = String::from_utf8_lossy(&garbled);
                let _ = parse(&garbled);
            }
        }
    }

    #[test]
    fn a_decayed_object_is_skipped_and_counted() {
        // ISS elements with the mean motion of an orbit at about 60 km (17.1 rev/day has a
        // semi-major axis below the Earth radius + 100 km).
        let mut l2 = ISS_2.replacen("15.49507896", "17.20000000", 1);
        l2.truncate(68);
        let sum = checksum(l2.as_bytes());
        l2.push(char::from(b'0' + sum));
        let c = parse(&format!("DECAYED\n{ISS_1}\n{l2}\n")).unwrap();
        assert_eq!(c.len(), 0);
        assert_eq!(c.skipped(), 1);
        let s = &c.skipped_objects()[0];
        assert_eq!((s.norad_id, s.line), (25544, 2));
        assert_eq!(s.name.as_deref(), Some("DECAYED"));
    }

    #[test]
    fn a_duplicate_catalogue_number_keeps_the_newer_set() {
        let older1 = "1 25544U 98067A   20193.88612269 -.00002218  00000-0 -31515-4 0  9991";
        let c = parse(&format!("{older1}\n{ISS_2}\n{ISS_1}\n{ISS_2}\n")).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c.skipped(), 1);
        assert_eq!(c.satellites()[0].epoch().format("%j").to_string(), "194");
    }
}

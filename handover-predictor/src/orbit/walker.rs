//! A Walker-constellation TLE generator, so the project ships its own catalogues in `traces/tle/`.
//!
//! A Walker delta pattern `i: T/P/F` puts `T` satellites in `P` equally spaced circular planes of
//! inclination `i`, `S = T/P` per plane, and shifts plane `p`'s satellites in argument of latitude
//! by `p * F * 360/T` degrees (Walker, "Satellite constellations", J. Br. Interplanet. Soc. 37, 1984).
//! A [`Shell`] generalises the node spread (360 degrees for a delta, 180 for a "star" such as
//! Iridium's) and its start, which also lets two shells share one set of planes.
//!
//! The element sets are circular (eccentricity 0), drag-free (B* = 0, no mean-motion
//! derivatives) and written in the standard 69-column format (reference D2) with valid checksums.
//! The mean motion comes from the altitude by Kepler's third law with the WGS72 constants that
//! SGP4 uses with element sets ([`mean_motion_rev_per_day`]).

use super::catalogue::checksum;
use chrono::{DateTime, Datelike, TimeZone, Timelike, Utc};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

// The constants and Kepler's law are shared with the catalogue (a satellite's mean altitude);
// they are re-exported here, where the generator's users have always found them.
pub use super::kepler::{
    WGS72_EQUATORIAL_RADIUS_KM, WGS72_MU_KM3_S2, mean_motion_rev_per_day, semi_major_axis_km,
};

/// The first NORAD number [`generate`] assigns. 90001 and up is the range Space-Track leaves for
/// analyst objects, so generated satellites never collide with real catalogue numbers (about
/// 64,000 in 2025) and still fit the plain 5-digit field (no Alpha-5 needed below 100,000).
pub const FIRST_NORAD_ID: u64 = 90_001;

/// The epoch of the shipped catalogues: 2025-05-12 00:00 UTC, the epoch of the real May-2025
/// Starlink snapshot in `../shared/data/tle/starryNet/`, so that generated and real catalogues
/// describe the same day.
pub fn shipped_epoch() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 5, 12, 0, 0, 0)
        .single()
        .unwrap_or(DateTime::<Utc>::UNIX_EPOCH)
}

/// Why a constellation could not be generated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum WalkerError {
    /// A shell parameter outside its range.
    #[error("shell {shell:?}: {problem}")]
    Shell {
        /// The shell's name.
        shell: String,
        /// What is wrong.
        problem: String,
    },
    /// More satellites than 5-digit catalogue numbers left after the first one.
    #[error("{count} satellites from catalogue number {first} run past 99999")]
    TooMany {
        /// Satellites requested.
        count: usize,
        /// The first catalogue number.
        first: u64,
    },
    /// The epoch's year cannot be written in a TLE (1957-2056, reference D2).
    #[error("epoch {0} is outside the TLE years 1957-2056")]
    Epoch(DateTime<Utc>),
}

/// One shell of a Walker constellation: circular orbits at one altitude and inclination.
#[derive(Debug, Clone, PartialEq)]
pub struct Shell {
    /// Short name, used in satellite names `NAME-PP-SS` (plane, slot; at most 17 characters so
    /// the name fits Celestrak's 24).
    pub name: String,
    /// Altitude above the WGS72 equatorial radius, km.
    pub altitude_km: f64,
    /// Inclination, degrees.
    pub inclination_deg: f64,
    /// Number of orbital planes, `P`.
    pub planes: u32,
    /// Satellites per plane, `S`.
    pub satellites_per_plane: u32,
    /// Walker phasing factor `F` in `0..P`: plane `p` is shifted by `p F 360 / T` degrees.
    pub phasing: u32,
    /// Right ascension of the ascending node of plane 0, degrees.
    pub raan_offset_deg: f64,
    /// Span of the planes' nodes, degrees: 360 for a Walker delta, 180 for a Walker star.
    pub raan_spread_deg: f64,
}

impl Shell {
    /// A Walker delta shell (nodes over 360 degrees, plane 0 at node 0).
    pub fn delta(
        name: &str,
        altitude_km: f64,
        inclination_deg: f64,
        planes: u32,
        satellites_per_plane: u32,
        phasing: u32,
    ) -> Self {
        Self {
            name: name.to_owned(),
            altitude_km,
            inclination_deg,
            planes,
            satellites_per_plane,
            phasing,
            raan_offset_deg: 0.0,
            raan_spread_deg: 360.0,
        }
    }

    /// Total satellites, `T = P S`.
    pub fn satellites(&self) -> usize {
        self.planes as usize * self.satellites_per_plane as usize
    }

    fn check(&self) -> Result<(), WalkerError> {
        let problem = |p: &str| {
            Err(WalkerError::Shell {
                shell: self.name.clone(),
                problem: p.to_owned(),
            })
        };
        if self.name.is_empty()
            || self.name.len() > 17
            || !self.name.bytes().all(|b| b.is_ascii_graphic())
        {
            return problem("the name must be 1-17 printable ASCII characters without spaces");
        }
        if !(100.0..=35_786.0).contains(&self.altitude_km) {
            return problem("altitude must be within 100-35786 km");
        }
        if !(0.0..=180.0).contains(&self.inclination_deg) {
            return problem("inclination must be within 0-180 degrees");
        }
        if self.planes == 0 || self.satellites_per_plane == 0 {
            return problem("planes and satellites per plane must be at least 1");
        }
        if self.phasing >= self.planes {
            return problem("the phasing factor F must be below the number of planes");
        }
        if !self.raan_offset_deg.is_finite() || !(0.0..=360.0).contains(&self.raan_spread_deg) {
            return problem("the node offset must be finite and the node spread within 0-360");
        }
        Ok(())
    }
}

/// The Starlink first-generation shells as licensed by the FCC in April 2021 (SpaceX's
/// modification, FCC 21-48): 550 km 53.0 deg 72 x 22; 540 km 53.2 deg 72 x 22; 570 km 70.0 deg
/// 36 x 20; 560 km 97.6 deg in 10 planes, 6 of 58 and 4 of 43 (the two polar groups share one
/// 36-degree node grid). 4,408 satellites. SpaceX does not publish the phasing factor; `F = 1` is
/// used.
pub fn starlink_gen1() -> Vec<Shell> {
    vec![
        Shell::delta("SL550", 550.0, 53.0, 72, 22, 1),
        Shell::delta("SL540", 540.0, 53.2, 72, 22, 1),
        Shell::delta("SL570", 570.0, 70.0, 36, 20, 1),
        Shell {
            raan_spread_deg: 216.0,
            ..Shell::delta("SL560A", 560.0, 97.6, 6, 58, 1)
        },
        Shell {
            raan_offset_deg: 216.0,
            raan_spread_deg: 144.0,
            ..Shell::delta("SL560B", 560.0, 97.6, 4, 43, 1)
        },
    ]
}

/// The paper's sparse constellation of 80 satellites (section IV-C: "publicly available TLE
/// data from SpaceTrack ... containing 80 satellites", 0-1 handovers per minute). The public
/// 80-satellite catalogue of that kind is Iridium NEXT (reference D1: `iridium-next.txt`, 80
/// objects), so this is Iridium's geometry: 780 km, 86.4 degrees, a Walker star (nodes over
/// 180 degrees), here 8 planes of 10. Under the delay policy with a 10-degree mask (Iridium's own
/// is 8.2) it hands over 0.15 times a minute at six large cities and leaves them without a
/// satellite 0.2 % of the time (`tests/orbit_walker.rs`); with a 25-degree mask the gaps reach
/// 45 %, so sparse scenarios should use the lower mask.
pub fn sparse_80() -> Vec<Shell> {
    vec![Shell {
        raan_spread_deg: 180.0,
        ..Shell::delta("SPARSE80", 780.0, 86.4, 8, 10, 1)
    }]
}

/// The upper end of the paper's sparse range, 100 satellites (section III-B: "sparse LEO
/// constellations ranging from 80 to 100 satellites", altitude and phasing perturbed): the same
/// Iridium-like star at a perturbed altitude, 10 planes of 10 at 800 km and 86.4 degrees
/// (0.16 handovers a minute, no gaps, under the same delay policy and 10-degree mask).
pub fn sparse_100() -> Vec<Shell> {
    vec![Shell {
        raan_spread_deg: 180.0,
        ..Shell::delta("SPARSE100", 800.0, 86.4, 10, 10, 1)
    }]
}

/// The catalogues the project ships, by file name in `traces/tle/`.
pub fn shipped() -> Vec<(&'static str, Vec<Shell>)> {
    vec![
        ("starlink-gen1.tle", starlink_gen1()),
        ("sparse-80.tle", sparse_80()),
        ("sparse-100.tle", sparse_100()),
    ]
}

/// Writes [`shipped`] into `dir` (created if missing) at [`shipped_epoch`]; returns the paths.
/// The CLI's `tle generate` calls this; `tests/orbit_walker.rs` checks that the files in
/// `traces/tle/` are exactly what it writes.
pub fn write_shipped(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (file, shells) in shipped() {
        let text = generate(&shells, shipped_epoch())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let path = dir.join(file);
        std::fs::write(&path, text)?;
        written.push(path);
    }
    Ok(written)
}

/// 3-line TLE text for `shells` at `epoch`, catalogue numbers from [`FIRST_NORAD_ID`].
pub fn generate(shells: &[Shell], epoch: DateTime<Utc>) -> Result<String, WalkerError> {
    generate_from(shells, epoch, FIRST_NORAD_ID)
}

/// 3-line TLE text for `shells` at `epoch`, catalogue numbers counting up from `first_norad_id`
/// shell by shell, plane by plane. LF line ends; names padded to 24 characters as Celestrak does.
pub fn generate_from(
    shells: &[Shell],
    epoch: DateTime<Utc>,
    first_norad_id: u64,
) -> Result<String, WalkerError> {
    for shell in shells {
        shell.check()?;
    }
    let count: usize = shells.iter().map(Shell::satellites).sum();
    if first_norad_id == 0 || first_norad_id + count as u64 > 100_000 {
        return Err(WalkerError::TooMany {
            count,
            first: first_norad_id,
        });
    }
    if !(1957..=2056).contains(&epoch.year()) {
        return Err(WalkerError::Epoch(epoch));
    }
    let epoch_field = epoch_field(epoch);
    let mut text = String::with_capacity(count * 3 * 72);
    let mut norad = first_norad_id;
    for shell in shells {
        let total = shell.satellites() as f64;
        let mean_motion = mean_motion_rev_per_day(shell.altitude_km);
        for plane in 0..shell.planes {
            let raan = shell.raan_offset_deg
                + f64::from(plane) * shell.raan_spread_deg / f64::from(shell.planes);
            let plane_shift = f64::from(plane) * f64::from(shell.phasing) * 360.0 / total;
            for slot in 0..shell.satellites_per_plane {
                let anomaly =
                    f64::from(slot) * 360.0 / f64::from(shell.satellites_per_plane) + plane_shift;
                let name = format!("{}-{:02}-{:02}", shell.name, plane + 1, slot + 1);
                let line1 = with_checksum(format!(
                    "1 {norad:05}U {:8} {epoch_field}  .00000000  00000-0  00000-0 0  999",
                    ""
                ));
                let line2 = with_checksum(format!(
                    "2 {norad:05} {:8.4} {} 0000000 {:8.4} {} {mean_motion:11.8}{:5}",
                    shell.inclination_deg,
                    angle_field(raan),
                    0.0,
                    angle_field(anomaly),
                    0
                ));
                let _ = writeln!(text, "{name:<24}\n{line1}\n{line2}");
                norad += 1;
            }
        }
    }
    Ok(text)
}

/// `YYDDD.DDDDDDDD`: two-digit year and day of year with fraction (day 1.0 = 1 January 00:00 UTC,
/// reference D2).
fn epoch_field(epoch: DateTime<Utc>) -> String {
    let seconds = f64::from(epoch.num_seconds_from_midnight())
        + f64::from(epoch.nanosecond().min(999_999_999)) * 1e-9;
    let day = f64::from(epoch.ordinal()) + seconds / 86_400.0;
    format!("{:02}{day:012.8}", epoch.year() % 100)
}

/// An angle in [0, 360) as `DDD.DDDD`, never printing 360.0000 after rounding.
fn angle_field(degrees: f64) -> String {
    let text = format!("{:8.4}", degrees.rem_euclid(360.0));
    if text == "360.0000" {
        format!("{:8.4}", 0.0)
    } else {
        text
    }
}

fn with_checksum(mut line: String) -> String {
    let sum = checksum(line.as_bytes());
    line.push(char::from(b'0' + sum));
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orbit::Catalogue;

    #[test]
    fn generated_lines_are_69_columns_with_valid_checksums_and_load_back() {
        let shells = [Shell::delta("T", 550.0, 53.0, 3, 4, 1)];
        let text = generate(&shells, shipped_epoch()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 36);
        assert_eq!(lines[0], "T-01-01                 ");
        assert_eq!(
            lines[1],
            "1 90001U          25132.00000000  .00000000  00000-0  00000-0 0  9993"
        );
        assert_eq!(
            lines[2],
            "2 90001  53.0000   0.0000 0000000   0.0000   0.0000 15.05491974    05"
        );
        let catalogue = Catalogue::parse(&text, "generated").unwrap();
        assert_eq!(catalogue.len(), 12);
        assert_eq!(catalogue.skipped(), 0);
        assert_eq!(catalogue.newest_epoch(), Some(shipped_epoch()));
        // Plane 2 (index 1) starts 120 degrees of node later and F*360/T = 30 degrees ahead.
        let s = catalogue.get(90005).unwrap().elements();
        assert_eq!((s.right_ascension, s.mean_anomaly), (120.0, 30.0));
    }

    #[test]
    fn bad_shells_are_refused_with_their_name() {
        let mut shell = Shell::delta("BAD", 550.0, 53.0, 2, 2, 2);
        assert!(
            generate(&[shell.clone()], shipped_epoch())
                .unwrap_err()
                .to_string()
                .contains("\"BAD\"")
        );
        shell.phasing = 0;
        shell.altitude_km = 50.0;
        assert!(generate(&[shell], shipped_epoch()).is_err());
        let big = Shell::delta("BIG", 550.0, 53.0, 100, 100, 0);
        assert_eq!(
            generate(&[big], shipped_epoch()),
            Err(WalkerError::TooMany {
                count: 10_000,
                first: FIRST_NORAD_ID
            })
        );
    }

    #[test]
    fn the_epoch_field_carries_the_time_of_day_as_a_fraction() {
        let t = Utc.with_ymd_and_hms(2024, 12, 31, 18, 0, 0).unwrap();
        assert_eq!(epoch_field(t), "24366.75000000");
    }

    #[test]
    fn the_starlink_generation_1_catalogue_has_4408_satellites() {
        let total: usize = starlink_gen1().iter().map(Shell::satellites).sum();
        assert_eq!(total, 4408);
        assert_eq!(sparse_80()[0].satellites(), 80);
        assert_eq!(sparse_100()[0].satellites(), 100);
    }
}

//! `tle-gen`: Walker-constellation TLE catalogues (the ones shipped in `traces/tle/`).

use super::common::{create_file, out, out_json, parse_instant, rfc3339_short};
use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use clap::{Args, ValueEnum};
use handover_predictor::orbit::walker::{self, Shell};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `tle-gen`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["constellation", "all"])))]
pub struct TleGenArgs {
    /// The constellation: starlink-gen1 (the FCC-licensed first-generation shells, 4,408
    /// satellites), sparse-80 or sparse-100 (the paper's sparse constellations, Iridium-like
    /// Walker stars).
    #[arg(long, value_enum)]
    constellation: Option<Constellation>,
    /// Epoch of every element set, RFC 3339. Default: 2025-05-12T00:00:00Z, the epoch of the
    /// shipped catalogues and of the real May-2025 Starlink snapshot.
    #[arg(long, value_name = "RFC3339", value_parser = parse_instant, conflicts_with = "all")]
    epoch: Option<DateTime<Utc>>,
    /// Write the catalogue to FILE instead of stdout.
    #[arg(long, value_name = "FILE", conflicts_with = "all")]
    out: Option<PathBuf>,
    /// Rewrite all shipped catalogues (starlink-gen1.tle, sparse-80.tle, sparse-100.tle) into
    /// --dir, at the shipped epoch.
    #[arg(long, requires = "dir")]
    all: bool,
    /// The directory for --all (the repository's is traces/tle).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Print a JSON summary on stdout (with the TLE text itself when there is no --out).
    #[arg(long)]
    json: bool,
}

/// The constellations `tle-gen` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Constellation {
    /// Starlink's first generation as licensed in April 2021: 4,408 satellites in 5 shells.
    #[value(name = "starlink-gen1")]
    StarlinkGen1,
    /// 80 satellites, 8 planes of 10 at 780 km, 86.4 degrees (Iridium NEXT's geometry).
    #[value(name = "sparse-80")]
    Sparse80,
    /// 100 satellites, 10 planes of 10 at 800 km, 86.4 degrees.
    #[value(name = "sparse-100")]
    Sparse100,
}

impl Constellation {
    fn shells(self) -> Vec<Shell> {
        match self {
            Self::StarlinkGen1 => walker::starlink_gen1(),
            Self::Sparse80 => walker::sparse_80(),
            Self::Sparse100 => walker::sparse_100(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::StarlinkGen1 => "starlink-gen1",
            Self::Sparse80 => "sparse-80",
            Self::Sparse100 => "sparse-100",
        }
    }
}

#[derive(Debug, Serialize)]
struct Generated {
    constellation: String,
    epoch: DateTime<Utc>,
    satellites: usize,
    out: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tle: Option<String>,
}

#[derive(Debug, Serialize)]
struct Shipped {
    dir: String,
    epoch: DateTime<Utc>,
    written: Vec<String>,
}

/// Runs `tle-gen`.
pub fn run(args: TleGenArgs) -> Result<()> {
    if args.all {
        return all(&args);
    }
    let Some(constellation) = args.constellation else {
        bail!("give --constellation NAME, or --all --dir DIR");
    };
    let epoch = args.epoch.unwrap_or_else(walker::shipped_epoch);
    let shells = constellation.shells();
    let text = walker::generate(&shells, epoch).with_context(|| {
        format!(
            "cannot generate {} at {}",
            constellation.name(),
            rfc3339_short(epoch)
        )
    })?;
    let satellites: usize = shells.iter().map(Shell::satellites).sum();
    match &args.out {
        Some(path) => {
            let mut file = create_file(path, "the TLE file")?;
            file.write_all(text.as_bytes())
                .and_then(|()| file.flush())
                .with_context(|| format!("cannot write the TLE file {}", path.display()))?;
            tracing::info!(
                "{} satellites of {} at {} written to {}",
                satellites,
                constellation.name(),
                rfc3339_short(epoch),
                path.display()
            );
            if args.json {
                out_json(&Generated {
                    constellation: constellation.name().into(),
                    epoch,
                    satellites,
                    out: Some(path.display().to_string()),
                    tle: None,
                })?;
            } else {
                out(format!(
                    "{}: {satellites} satellites at {} -> {}",
                    constellation.name(),
                    rfc3339_short(epoch),
                    path.display()
                ))?;
            }
        }
        None if args.json => out_json(&Generated {
            constellation: constellation.name().into(),
            epoch,
            satellites,
            out: None,
            tle: Some(text),
        })?,
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
                .context("writing to stdout")?;
        }
    }
    Ok(())
}

fn all(args: &TleGenArgs) -> Result<()> {
    let Some(dir) = &args.dir else {
        bail!("--all needs --dir DIR (the repository's catalogues are in traces/tle)");
    };
    let written = walker::write_shipped(dir)
        .with_context(|| format!("cannot write the shipped catalogues into {}", dir.display()))?;
    let written: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    if args.json {
        out_json(&Shipped {
            dir: dir.display().to_string(),
            epoch: walker::shipped_epoch(),
            written,
        })
    } else {
        for path in &written {
            out(format!("wrote {path}"))?;
        }
        Ok(())
    }
}

//! `rtc-client paths`: writes a family of training paths, scenario files drawn from ranges
//! around the measured figures ([`rtc_client::scenario::family`], docs/path-family.md).

use super::args::parse_duration;
use anyhow::{Context, Result, bail};
use clap::Args;
use rtc_client::durable;
use rtc_client::scenario::family::{self, DrawnPath, MAX_PATHS};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `rtc-client paths` arguments.
#[derive(Debug, Args)]
pub struct PathsArgs {
    /// How many paths to draw (1 to 10000): OUT/path-0000.toml, OUT/path-0001.toml, ...
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=MAX_PATHS as u64))]
    count: u64,
    /// Seed of the draw: the same seed (and program version) writes the same bytes, and path i
    /// does not depend on --count.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Output directory; it must not exist or be empty (see --force).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Call length written into every file (`call.duration_s`, whole seconds), e.g. 2m, 10m. A
    /// run's own --duration overrides it.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration, allow_hyphen_values = true)]
    duration: Duration,
    /// Write into a non-empty --out: removes the path-NNNN.toml files and family.json a previous
    /// run left there (nothing else), then writes.
    #[arg(long)]
    force: bool,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// The manifest's file name.
const MANIFEST: &str = "family.json";

/// Runs `rtc-client paths`.
pub fn run(args: PathsArgs) -> Result<()> {
    let duration_s = args.duration.as_secs();
    if args.duration.subsec_nanos() != 0 {
        bail!(
            "--duration must be whole seconds (a scenario file holds call.duration_s), got {}",
            humantime::format_duration(args.duration)
        );
    }
    let count = usize::try_from(args.count).context("--count")?;
    let drawn = family::draw_paths(count, args.seed, duration_s)?;
    prepare_out(&args.out, args.force)?;
    for p in &drawn {
        let path = args.out.join(p.file_name());
        durable::write_atomic(&path, p.toml.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let manifest = family::manifest(&drawn, args.seed, duration_s);
    let mut json = serde_json::to_string_pretty(&manifest)?;
    json.push('\n');
    let path = args.out.join(MANIFEST);
    durable::write_atomic(&path, json.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    summary(&args, &drawn, &manifest)
}

/// Refuses a file, or a non-empty directory without `force`; creates the directory. With
/// `force`, removes only what this command writes (path-NNNN.toml, family.json), so that a
/// smaller draw leaves no path of a larger one behind.
fn prepare_out(out: &Path, force: bool) -> Result<()> {
    if out.exists() && !out.is_dir() {
        bail!("--out {} is a file, not a directory", out.display());
    }
    if out.is_dir() {
        let entries: Vec<PathBuf> = std::fs::read_dir(out)
            .with_context(|| format!("cannot read --out {}", out.display()))?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .with_context(|| format!("cannot read --out {}", out.display()))?;
        if !entries.is_empty() && !force {
            bail!(
                "the output directory {} is not empty; choose another --out or give --force to \
                 replace the paths a previous run wrote there",
                out.display()
            );
        }
        for e in entries {
            if e.file_name().and_then(|n| n.to_str()).is_some_and(is_ours) {
                std::fs::remove_file(&e)
                    .with_context(|| format!("cannot remove {}", e.display()))?;
            }
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create --out {}", out.display()))
}

/// Whether `name` is a file `paths` writes: `path-NNNN.toml` or `family.json`.
fn is_ours(name: &str) -> bool {
    name == MANIFEST
        || name
            .strip_prefix("path-")
            .and_then(|rest| rest.strip_suffix(".toml"))
            .is_some_and(|n| n.len() >= 4 && n.bytes().all(|b| b.is_ascii_digit()))
}

fn summary(args: &PathsArgs, drawn: &[DrawnPath], manifest: &family::Manifest) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = serde_json::json!({
            "out": args.out,
            "count": drawn.len(),
            "seed": args.seed,
            "generator_version": manifest.generator_version,
            "duration_s": manifest.duration_s,
            "drawn": manifest.drawn,
        });
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        let per: Vec<String> = manifest
            .drawn
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        writeln!(
            out,
            "wrote {} paths of {} s to {} (seed {}, generator {}): {}; draws in {}",
            drawn.len(),
            manifest.duration_s,
            args.out.display(),
            args.seed,
            manifest.generator_version,
            per.join(", "),
            args.out.join(MANIFEST).display()
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_files_paths_writes_are_ours() {
        assert!(is_ours("path-0000.toml"));
        assert!(is_ours("path-9999.toml"));
        assert!(is_ours("family.json"));
        assert!(!is_ours("path-12.toml"));
        assert!(!is_ours("path-abcd.toml"));
        assert!(!is_ours("notes.md"));
        assert!(!is_ours("path-0000.toml.bak"));
    }
}

//! `rtc-client merge`: joins the shard directories of one `experiment` or `collect` sweep into
//! the directory one unsharded run would have written, byte for byte.
//!
//! The shards' `run.json` say which command made them and with which arguments; merge checks
//! they are the disjoint parts of one sweep of one engine and configuration
//! ([`rtc_client::experiment::merge`]), rebuilds the command's arguments with `--out` set to its
//! own, and lets the command's own code write the report or the training manifest from the
//! shards' calls (docs/architecture.md, "Sweeps, shards and resume").

use super::collect::{self, CollectArgs};
use super::experiment::{self, ExperimentArgs};
use anyhow::{Context, Result, bail};
use clap::{Args, FromArgMatches};
use rtc_client::experiment::ledger::Engine;
use rtc_client::experiment::merge::{plan_calls, read_sources};
use std::path::PathBuf;

/// `rtc-client merge` arguments.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shard directories: the --out of every `--shard K/N` run of one sweep, in any order.
    #[arg(value_name = "SHARD_DIR", required = true)]
    shards: Vec<PathBuf>,
    /// Output directory; it must not exist or be empty (see --force). It receives exactly what
    /// the sweep run as one shard writes.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Write into a non-empty --out, replacing what a previous run left there.
    #[arg(long)]
    force: bool,
    /// Print JSON on stdout instead of text (as the sweep's command does).
    #[arg(long)]
    json: bool,
}

/// Runs `rtc-client merge`.
pub fn run(args: MergeArgs) -> Result<()> {
    let sources = read_sources(&args.shards)?;
    let calls = plan_calls(&sources)?;
    let first = &sources[0].manifest;
    let engine = Engine::current()?;
    if engine != first.engine {
        bail!(
            "the shards were made by {}, and this program is {}: merge with the rtc-client that \
             ran them, so that the report is written by the same code",
            first.engine,
            engine
        );
    }
    tracing::info!(
        command = %first.command,
        shards = sources.len(),
        calls = calls.len(),
        "merging"
    );
    let mut argv = first.args.clone();
    argv.push("--out".into());
    argv.push(args.out.to_string_lossy().into_owned());
    if args.force {
        argv.push("--force".into());
    }
    if args.json {
        argv.push("--json".into());
    }
    let recorded = first.args.clone();
    match first.command.as_str() {
        "experiment" => experiment::merged(
            reparse::<ExperimentArgs>("experiment", &argv)?,
            recorded,
            &sources,
            calls,
        ),
        "collect" => collect::merged(
            reparse::<CollectArgs>("collect", &argv)?,
            recorded,
            &sources,
            calls,
        ),
        other => bail!(
            "{} was written by `rtc-client {other}`, which merge does not know",
            sources[0].dir.join("run.json").display()
        ),
    }
}

/// Parses a command's arguments as recorded in a shard's `run.json`.
fn reparse<T: Args + FromArgMatches>(command: &'static str, argv: &[String]) -> Result<T> {
    let cli = T::augment_args(clap::Command::new(command));
    let matches = cli
        .try_get_matches_from(std::iter::once(command.to_owned()).chain(argv.iter().cloned()))
        .with_context(|| format!("the shards' recorded arguments do not parse: {argv:?}"))?;
    Ok(T::from_arg_matches(&matches)?)
}

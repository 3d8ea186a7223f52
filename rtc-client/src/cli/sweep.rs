//! The life of a sweep's output directory, which `experiment`, `collect` and `merge` share:
//! starting it or resuming it (`--resume`), running the calls of its shard (`--shard K/N`) that
//! are not done yet with each recorded as it finishes, and closing it with the full ledger
//! (docs/architecture.md, "Sweeps, shards and resume").
//!
//! A command hands over its plan as a [`Sweep`] and gets back the done calls in plan order
//! ([`Done`]); when the shard is the whole plan it writes its own outputs from them (report,
//! manifest) and then closes the directory. `merge` gets the same [`Done`] from the shards
//! ([`gather`]) and the command's own code writes the outputs, which is why they are the bytes an
//! unsharded run writes.

use super::args::RunArgs;
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rtc_client::call::PolicyChoice;
use rtc_client::durable;
use rtc_client::experiment::batch::{BatchError, FinishedCall, prepare_out, senders};
use rtc_client::experiment::ledger::{
    CellDone, CellKey, Engine, JOURNAL_FILE, Journal, RUN_FILE, RUN_SCHEMA, RunManifest,
    check_done, config_hash, differing_keys, read_journal, remove_journal,
};
use rtc_client::experiment::merge::{Source, copy_call};
use rtc_client::experiment::run::CellCall;
use rtc_client::experiment::shard::Shard;
use rtc_client::scenario::Scenario;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What a command hands the sweep: who it is and its whole plan.
pub struct Sweep<'a> {
    /// `experiment` or `collect`.
    pub command: &'static str,
    /// The command's arguments that decide its output ([`output_args`]).
    pub args: Vec<String>,
    /// Everything the output depends on, resolved ([`RunArgs::config`] plus the command's own).
    pub config: Value,
    /// The plan's scenarios.
    pub scenarios: &'a [Scenario],
    /// The plan's policies.
    pub policies: &'a [PolicyChoice],
    /// Every call of the plan, in plan order.
    pub specs: &'a [CellCall],
    /// The entries of the output directory the command writes besides the ledger (for
    /// `--force`).
    pub owned: &'a [&'a str],
}

impl Sweep<'_> {
    /// Every call of the plan by name, in plan order.
    pub fn keys(&self) -> Vec<CellKey> {
        self.specs
            .iter()
            .map(|s| CellKey {
                scenario: self.scenarios[s.scenario].name().to_owned(),
                policy: self.policies[s.policy].name(),
                seed: s.seed,
            })
            .collect()
    }

    /// The directory's manifest before any call is done.
    fn manifest(&self, engine: Engine, shard: Shard) -> RunManifest {
        RunManifest {
            schema: RUN_SCHEMA.to_owned(),
            command: self.command.to_owned(),
            engine,
            config_hash: config_hash(&self.config),
            config: self.config.clone(),
            args: self.args.clone(),
            shard,
            plan_cells: self.specs.len(),
            shard_cells: shard.cells(self.specs.len()).len(),
            complete: false,
            cells: Vec::new(),
        }
    }

    /// `owned` and the ledger's files.
    fn owned_with_ledger(&self) -> Vec<&str> {
        let mut owned = self.owned.to_vec();
        owned.extend([RUN_FILE, JOURNAL_FILE]);
        owned
    }
}

/// The done calls of a directory, with its manifest, ready to be closed.
pub struct Done {
    manifest: RunManifest,
    cells: Vec<CellDone>,
    /// Calls simulated by this process (not resumed or merged).
    pub simulated: usize,
}

impl Done {
    /// Whether the directory holds the whole plan (the command then writes its outputs).
    pub fn is_whole(&self) -> bool {
        self.manifest.shard.is_whole()
    }

    /// The calls in plan order, as the command's outputs take them.
    pub fn calls(&self) -> Vec<FinishedCall> {
        self.cells
            .iter()
            .map(|c| FinishedCall {
                seed: c.key.seed,
                qoe: c.qoe,
                intervals: c.intervals,
                file: PathBuf::from(&c.file),
                bytes: c.bytes,
                sha256: c.sha256.clone(),
                fec_share_pct: c.fec_share_pct,
            })
            .collect()
    }

    /// Marks the directory finished: `run.json` with every call, written whole, then the journal
    /// removed. Called after the command's outputs are in place, so a finished `run.json` means a
    /// finished directory.
    pub fn close(mut self, run: &RunArgs) -> Result<()> {
        self.manifest.complete = true;
        self.manifest.cells = self.cells;
        self.manifest.write(&run.out)?;
        remove_journal(&run.out)?;
        Ok(())
    }

    /// For a shard of several: closes it and says so on stdout (JSON with `--json`).
    pub fn close_part(self, run: &RunArgs, started: Instant) -> Result<()> {
        let (shard, calls, plan, simulated) = (
            self.manifest.shard,
            self.cells.len(),
            self.manifest.plan_cells,
            self.simulated,
        );
        self.close(run)?;
        let wall_s = started.elapsed().as_secs_f64();
        let mut stdout = std::io::stdout().lock();
        if run.json {
            serde_json::to_writer_pretty(
                &mut stdout,
                &json!({
                    "shard": shard.to_string(),
                    "calls": calls,
                    "simulated": simulated,
                    "plan_calls": plan,
                    "wall_s": wall_s,
                }),
            )?;
            writeln!(stdout)?;
        } else {
            writeln!(
                stdout,
                "shard {shard}: {calls} of the plan's {plan} calls in {} ({simulated} simulated \
                 here) in {wall_s:.1} s wall time; join the shards with `rtc-client merge --out \
                 DIR SHARD_DIR...`",
                run.out.display()
            )?;
        }
        stdout.flush()?;
        Ok(())
    }
}

/// Runs the calls of `--shard` not yet done into `--out`, each recorded in the journal as it
/// finishes; with `--resume`, first takes over what the directory holds.
pub fn execute(run: &RunArgs, sweep: &Sweep<'_>, epoch: Instant) -> Result<Done> {
    let engine = Engine::current()?;
    let manifest = sweep.manifest(engine, run.shard);
    let keys = sweep.keys();
    let mut done = open_out(run, sweep, &manifest, &keys)?;
    let todo: Vec<usize> = run
        .shard
        .cells(keys.len())
        .into_iter()
        .filter(|i| !done.contains_key(i))
        .collect();
    if run.resume && !done.is_empty() {
        tracing::info!(done = done.len(), left = todo.len(), "resuming");
    }
    let journal = Journal::open(&run.out)?;
    let specs: Vec<CellCall> = todo.iter().map(|&i| sweep.specs[i]).collect();
    let finished = run.run_calls(sweep.scenarios, sweep.policies, &specs, epoch, |j, call| {
        journal
            .record(&cell_done(todo[j], &keys[todo[j]], call))
            .map_err(|e| BatchError::Record(Box::new(e)))
    })?;
    for (j, call) in finished.iter().enumerate() {
        done.insert(todo[j], cell_done(todo[j], &keys[todo[j]], call));
    }
    Ok(Done {
        manifest,
        cells: done.into_values().collect(),
        simulated: finished.len(),
    })
}

/// The ledger's record of a finished call.
fn cell_done(index: usize, key: &CellKey, call: &FinishedCall) -> CellDone {
    CellDone {
        index,
        key: key.clone(),
        file: key.file(),
        bytes: call.bytes,
        sha256: call.sha256.clone(),
        intervals: call.intervals,
        qoe: call.qoe,
        fec_share_pct: call.fec_share_pct,
    }
}

/// Readies `--out`: a fresh directory gets the manifest of a run with nothing done; with
/// `--resume`, a directory this run started keeps its done calls (returned by plan index), loses
/// its unfinished files, and has a torn journal line reported.
fn open_out(
    run: &RunArgs,
    sweep: &Sweep<'_>,
    manifest: &RunManifest,
    keys: &[CellKey],
) -> Result<BTreeMap<usize, CellDone>> {
    if run.resume {
        match RunManifest::read(&run.out)? {
            Some(recorded) => return resume(run, manifest, recorded, keys),
            None if !holds_anything(&run.out)? => {
                tracing::info!(out = %run.out.display(), "nothing to resume yet; starting");
            }
            None => bail!(
                "--resume: {} holds no {RUN_FILE}, so no run of this version to resume; choose \
                 another --out, or give --force instead to replace what it holds",
                run.out.display()
            ),
        }
    }
    prepare_out(&run.out, run.force, &sweep.owned_with_ledger())?;
    manifest.write(&run.out)?;
    Ok(BTreeMap::new())
}

/// Whether `dir` exists and is not empty.
fn holds_anything(dir: &std::path::Path) -> Result<bool> {
    if !dir.exists() {
        return Ok(false);
    }
    let mut entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    Ok(entries.next().is_some())
}

/// Takes over a directory this run started (same command, engine, configuration and shard).
fn resume(
    run: &RunArgs,
    manifest: &RunManifest,
    recorded: RunManifest,
    keys: &[CellKey],
) -> Result<BTreeMap<usize, CellDone>> {
    let mut differences = recorded.sweep_differences(manifest);
    if recorded.shard != manifest.shard {
        differences.push(format!("shard {} vs {}", recorded.shard, manifest.shard));
    }
    if !differences.is_empty() {
        bail!(
            "--resume: {} holds another run than this command's ({}); resume it with its own \
             arguments and program, or choose another --out",
            run.out.display(),
            differences.join("; ")
        );
    }
    let removed = durable::remove_partials(&run.out)
        .with_context(|| format!("cannot clear unfinished files in {}", run.out.display()))?;
    if removed > 0 {
        tracing::info!(
            files = removed,
            "removed files a killed run left unfinished"
        );
    }
    let journal = read_journal(&run.out)?;
    if let Some(line) = journal.torn_line {
        tracing::warn!(
            "{} line {line} was cut short when the run stopped; it is not read and its call \
             runs again",
            run.out.join(JOURNAL_FILE).display()
        );
    }
    let mut cells = journal.cells;
    if recorded.complete {
        cells.extend(recorded.cells);
    }
    let checked = check_done(&run.out, keys, manifest.shard, cells)?;
    for (key, why) in &checked.redo {
        tracing::warn!("call {key} runs again: {why}");
    }
    Ok(checked.done)
}

/// For `merge`: readies `--out` and copies every call's telemetry from the shard that holds it
/// (checked against its recorded sha256), with a progress bar; the calls come back as a
/// whole-plan [`Done`] for the command to write its outputs from.
pub fn gather(
    run: &RunArgs,
    sweep: &Sweep<'_>,
    sources: &[Source],
    calls: Vec<(usize, CellDone)>,
) -> Result<Done> {
    let first = &sources[0].manifest;
    let manifest = sweep.manifest(first.engine.clone(), Shard::WHOLE);
    if manifest.config_hash != first.config_hash {
        bail!(
            "the shards' arguments resolve to another configuration here than where they ran \
             (differing: {}); a scenario file or model changed since, or merge runs in another \
             directory than the shards did",
            differing_keys(&first.config, &manifest.config).join(", ")
        );
    }
    let keys = sweep.keys();
    if let Some((_, cell)) = calls
        .iter()
        .find(|(_, c)| keys.get(c.index) != Some(&c.key))
    {
        bail!(
            "the shards list call {} as {}, which is not that call of the plan",
            cell.index,
            cell.key
        );
    }
    if sources.iter().any(|s| same_dir(&s.dir, &run.out)) {
        bail!(
            "--out {} is one of the shards; merge into another directory",
            run.out.display()
        );
    }
    prepare_out(&run.out, run.force, &sweep.owned_with_ledger())?;
    let bar = ProgressBar::with_draw_target(Some(calls.len() as u64), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} [{bar:40}] {pos}/{len} calls copied ({elapsed})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.enable_steady_tick(Duration::from_millis(200));
    let mut cells = Vec::with_capacity(calls.len());
    for (source, cell) in calls {
        copy_call(&sources[source].dir, &run.out, &cell)?;
        cells.push(cell);
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(Done {
        manifest,
        cells,
        simulated: 0,
    })
}

/// Whether two paths name the same directory (the second may not exist yet).
fn same_dir(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The flags that do not change what a run writes, only where and how: `merge` and `--resume`
/// leave them out of the recorded arguments. The first three take a value.
const VALUE_FLAGS: [&str; 3] = ["--out", "--jobs", "--shard"];
/// Switches of the same kind.
const SWITCHES: [&str; 5] = ["--force", "--resume", "--json", "--verbose", "--quiet"];

/// This process's arguments after `command` that decide its output.
pub fn command_args(command: &str) -> Vec<String> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let start = argv
        .iter()
        .position(|a| a == command)
        .map_or(argv.len(), |p| p + 1);
    output_args(&argv[start..])
}

/// `argv` without [`VALUE_FLAGS`] (with their values) and [`SWITCHES`], and without `-v`/`-q`.
pub fn output_args(argv: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut skip_value = false;
    for arg in argv {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if VALUE_FLAGS.contains(&arg.as_str()) {
            skip_value = true;
            continue;
        }
        let assigned = VALUE_FLAGS.iter().any(|f| {
            arg.strip_prefix(f)
                .is_some_and(|rest| rest.starts_with('='))
        });
        let log_level =
            arg.len() > 1 && arg.starts_with('-') && arg[1..].chars().all(|c| c == 'v' || c == 'q');
        if assigned || log_level || SWITCHES.contains(&arg.as_str()) {
            continue;
        }
        kept.push(arg.clone());
    }
    kept
}

impl RunArgs {
    /// The configuration `experiment` and `collect` share: each scenario's resolved file, the
    /// call settings and the sender of each scenario's calls. Debug forms stand for types that
    /// have no JSON form; they only need to differ when the values do, on one engine.
    pub fn config(&self, scenarios: &[Scenario]) -> Result<Map<String, Value>> {
        let mut files = Vec::with_capacity(scenarios.len());
        for s in scenarios {
            files.push(json!({
                "name": s.name(),
                "file": serde_json::to_value(&s.file)
                    .with_context(|| format!("cannot describe the scenario {}", s.origin))?,
            }));
        }
        let senders = senders(scenarios, &self.sender.overrides())?;
        let mut config = Map::new();
        config.insert("scenarios".into(), Value::Array(files));
        config.insert("seed_base".into(), json!(self.seed));
        config.insert(
            "duration_ms".into(),
            json!(self.duration.as_millis() as u64),
        );
        config.insert(
            "interval_ms".into(),
            json!(self.interval.as_millis() as u64),
        );
        config.insert("handover".into(), json!(format!("{:?}", self.handover)));
        config.insert("timing".into(), json!(format!("{:?}", self.timing.error())));
        config.insert("senders".into(), serde_json::to_value(senders)?);
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_recorded_arguments_leave_out_where_and_how_a_run_writes() {
        let argv = strings(&[
            "--scenarios",
            "starlink",
            "--out",
            "runs/a",
            "--shard=2/4",
            "--jobs",
            "3",
            "-vv",
            "--resume",
            "--timing-offset",
            "-50",
            "--json",
            "--out=x",
            "--calls",
            "4",
        ]);
        assert_eq!(
            output_args(&argv),
            strings(&[
                "--scenarios",
                "starlink",
                "--timing-offset",
                "-50",
                "--calls",
                "4"
            ])
        );
    }
}

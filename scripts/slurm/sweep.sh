#!/usr/bin/env bash
# Runs an `rtc-client experiment` or `collect` sweep on Slurm: a job array of N shards
# (`--shard K/N`, one array task each) and a merge job that starts when every shard has succeeded
# (`--dependency=afterok`), writing OUT/merged: byte for byte what the sweep run as one process
# writes (docs/architecture.md, "Sweeps, shards and resume").
#
# Usage:
#   scripts/slurm/sweep.sh [options] -- experiment|collect ARGS...
#
# Options:
#   --shards N          array tasks, one shard each (default 4)
#   --out DIR           sweep directory: DIR/shard-K (shards), DIR/merged, DIR/logs (required)
#   --bin PATH          the rtc-client binary (default: rtc-client on PATH); every task and the
#                       merge must run the same file, since outputs record its sha256
#   --cpus-per-task C   CPUs per shard; each shard runs --jobs C calls at once (default 1)
#   --wait              return when the merge job ends; exit 1 unless it completed
#   --sbatch ARG        one more sbatch option for both jobs (repeatable), e.g. --sbatch
#                       --partition=long or --sbatch --time=2:00:00
#
# ARGS are the command's own (no --out, --shard or --jobs: the script sets them). Each task runs
# with --resume, so a task that Slurm requeues (node failure, preemption) finishes the shard it
# started instead of starting again. Jobs run in the current directory, where relative paths in
# ARGS resolve. Prints the two job ids.
set -euo pipefail

shards=4
out=""
bin="$(command -v rtc-client || true)"
cpus=1
wait=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
  --shards) shards="$2"; shift 2 ;;
  --out) out="$2"; shift 2 ;;
  --bin) bin="$2"; shift 2 ;;
  --cpus-per-task) cpus="$2"; shift 2 ;;
  --wait) wait=1; shift ;;
  --sbatch) extra+=("$2"); shift 2 ;;
  --) shift; break ;;
  *) echo "sweep.sh: unknown option $1 (the command goes after --)" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || { echo "sweep.sh: --out DIR is required" >&2; exit 2; }
[ $# -ge 1 ] || { echo "sweep.sh: give the command after --: experiment|collect ARGS..." >&2; exit 2; }
case "$1" in
experiment | collect) ;;
*) echo "sweep.sh: the command must be experiment or collect, got $1" >&2; exit 2 ;;
esac
case "$shards" in
'' | *[!0-9]* | 0) echo "sweep.sh: --shards needs a whole number above 0, got $shards" >&2; exit 2 ;;
esac
case "$cpus" in
'' | *[!0-9]* | 0) echo "sweep.sh: --cpus-per-task needs a whole number above 0, got $cpus" >&2; exit 2 ;;
esac
for arg in "$@"; do
  case "$arg" in
  --out | --out=* | --shard | --shard=* | --jobs | --jobs=*)
    echo "sweep.sh: $arg is set by the script; leave it out of the command" >&2
    exit 2
    ;;
  esac
done
[ -n "$bin" ] && [ -x "$bin" ] || { echo "sweep.sh: no rtc-client binary (give --bin PATH)" >&2; exit 2; }
command -v sbatch >/dev/null || { echo "sweep.sh: sbatch is missing (no Slurm here)" >&2; exit 1; }

bin="$(cd "$(dirname "$bin")" && pwd -P)/$(basename "$bin")"
mkdir -p "$out/logs"
out="$(cd "$out" && pwd -P)"

# The job scripts, with every argument quoted as given.
{
  echo '#!/usr/bin/env bash'
  echo 'set -euo pipefail'
  printf 'exec %q' "$bin"
  printf ' %q' "$@"
  printf ' --shard "$SLURM_ARRAY_TASK_ID/%s" --jobs %s --resume' "$shards" "$cpus"
  printf ' --out %q' "$out"
  echo '/shard-$SLURM_ARRAY_TASK_ID'
} >"$out/shard.sh"
{
  echo '#!/usr/bin/env bash'
  echo 'set -euo pipefail'
  printf 'exec %q merge --force --out %q' "$bin" "$out/merged"
  for k in $(seq 1 "$shards"); do printf ' %q' "$out/shard-$k"; done
  echo
} >"$out/merge.sh"
chmod +x "$out/shard.sh" "$out/merge.sh"

array=$(sbatch --parsable --array="1-$shards" --cpus-per-task="$cpus" --requeue \
  --job-name=leopace-shard --chdir="$PWD" --output="$out/logs/shard-%a.log" \
  "${extra[@]}" "$out/shard.sh")
array="${array%%;*}"
echo "shards: job $array (array 1-$shards), logs in $out/logs"
merge_args=(--parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes
  --job-name=leopace-merge --chdir="$PWD" --output="$out/logs/merge.log")
merge=$(sbatch "${merge_args[@]}" "${extra[@]}" "$out/merge.sh")
merge="${merge%%;*}"
echo "merge: job $merge after the shards, into $out/merged"
if [ "$wait" = 1 ]; then
  # Polled every second rather than with `sbatch --wait`, whose poll interval grows to tens of
  # seconds; the controller keeps an ended job's state for MinJobAge (300 s by default).
  while squeue -h -j "$merge" 2>/dev/null | grep -q .; do
    sleep 1
  done
  state=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1)
  if [ "$state" != COMPLETED ]; then
    echo "sweep.sh: the merge job ended ${state:-in an unknown state} (a shard failed, or the merge did); see $out/logs" >&2
    exit 1
  fi
  echo "merged: $out/merged"
fi

#!/usr/bin/env bash
# The sharded-sweep test on a real Slurm: brings up a single-node cluster on this machine
# (scripts/slurm/local-cluster.sh), runs a sweep unsharded, runs it again as a job array of
# shards with a dependent merge job (scripts/slurm/sweep.sh), and fails unless the merged
# directory is byte for byte the unsharded one. Prints both wall times and a hash of each tree.
# Installs Debian's slurm-wlm and munge with apt-get when they are missing (root or sudo).
#
# Usage:
#   scripts/slurm/test-sweep.sh [--bin PATH] [--shards N] [--cpus-per-task C] [--keep DIR]
#                               [-- experiment|collect ARGS...]
#
# Without a command it runs the small sweep scripts/test.sh runs: 2 scenarios x 2 policies x
# 2 calls of 20 s, in 4 shards. Without --bin it builds rtc-client (cargo build, into
# $CARGO_TARGET_DIR or target/). --keep DIR keeps the outputs (DIR/whole, DIR/sweep) instead of
# removing them.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd -P)"

bin=""
shards=4
cpus=1
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
  --bin) bin="$2"; shift 2 ;;
  --shards) shards="$2"; shift 2 ;;
  --cpus-per-task) cpus="$2"; shift 2 ;;
  --keep) keep="$2"; shift 2 ;;
  --) shift; break ;;
  *) echo "test-sweep: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ $# -eq 0 ]; then
  set -- experiment --scenarios starlink,terrestrial-lte --policies default,fixed:900 \
    --calls 2 --duration 20s --seed 5 --interval 10s
fi

missing=()
for tool in sbatch slurmctld slurmd; do
  command -v "$tool" >/dev/null 2>&1 || { missing+=(slurm-wlm); break; }
done
command -v munged >/dev/null 2>&1 || missing+=(munge)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "test-sweep: missing ${missing[*]}, and not root (no sudo) to install them" >&2
      exit 1
    }
    sudo=(sudo)
  fi
  command -v apt-get >/dev/null 2>&1 || {
    echo "test-sweep: missing ${missing[*]}; install them with your package manager (no apt-get here)" >&2
    exit 1
  }
  echo "test-sweep: installing ${missing[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ -z "$bin" ]; then
  cargo build -p rtc-client --locked
  bin="${CARGO_TARGET_DIR:-$root/target}/debug/rtc-client"
fi
[ -x "$bin" ] || { echo "test-sweep: no binary at $bin" >&2; exit 1; }

if [ -n "$keep" ]; then
  mkdir -p "$keep"
  work="$(cd "$keep" && pwd -P)"
  rm -rf "$work/whole" "$work/sweep"
else
  work="$(mktemp -d)"
fi
cluster="$(mktemp -d)"
cleanup() {
  scripts/slurm/local-cluster.sh stop "$cluster" || true
  rm -rf "$cluster"
  [ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT

# Two free ports in a row for slurmctld and slurmd.
LEOPACE_SLURM_PORT="$(python3 - <<'PY'
import socket
for port in range(16817, 17817, 2):
    try:
        for p in (port, port + 1):
            with socket.socket() as s:
                s.bind(("127.0.0.1", p))
    except OSError:
        continue
    print(port)
    break
PY
)"
export LEOPACE_SLURM_PORT
scripts/slurm/local-cluster.sh start "$cluster"
export SLURM_CONF="$cluster/slurm.conf"

# The hash of a directory tree: every file's path and sha256.
tree_hash() {
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-64)
}

echo "test-sweep: unsharded: $*"
start=$(date +%s%N)
"$bin" "$@" --jobs "$(nproc)" --out "$work/whole" -q >/dev/null
whole_ms=$((($(date +%s%N) - start) / 1000000))

echo "test-sweep: $shards shards on Slurm, $cpus CPU(s) each"
start=$(date +%s%N)
scripts/slurm/sweep.sh --shards "$shards" --cpus-per-task "$cpus" --out "$work/sweep" \
  --bin "$bin" --wait -- "$@"
sweep_ms=$((($(date +%s%N) - start) / 1000000))

files=$(find "$work/whole" -type f | wc -l)
printf 'test-sweep: unsharded %d.%03d s, %s shards + merge on Slurm %d.%03d s; %s files\n' \
  $((whole_ms / 1000)) $((whole_ms % 1000)) "$shards" $((sweep_ms / 1000)) $((sweep_ms % 1000)) "$files"
echo "test-sweep: tree sha256 unsharded $(tree_hash "$work/whole")"
echo "test-sweep: tree sha256 merged    $(tree_hash "$work/sweep/merged")"
if ! diff -r "$work/whole" "$work/sweep/merged"; then
  echo "test-sweep: FAILED: the merged sweep differs from the unsharded run" >&2
  exit 1
fi
echo "test-sweep: the merged sweep is byte-identical to the unsharded run"

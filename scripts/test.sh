#!/usr/bin/env bash
# Runs every check the project has: import circles, the results renderer, formatting, lints, all
# tests, the sharded sweep on a single-node Slurm cluster, the API docs and the fuzz target's
# build.
#
# Usage: scripts/test.sh
#
# Build outputs go to $LEOPACE_CACHE/target-<checkout key> (default ~/.cache/leopace), outside
# the checkout and one directory per checkout, so a second run is incremental and no checkout
# tests another's build; nothing depends on that cache existing.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Ctrl-C tests (rtc-client/tests/live_faults.rs) send SIGINT to the commands they start and
# need its default action. A non-interactive shell that starts this script in the background
# (`scripts/test.sh &`, nohup) ignores SIGINT, every child inherits that, and an interrupted
# `collect` then runs to the end. Start again with SIGINT's default restored.
sigint_ignored=$(( 0x$(awk '/^SigIgn:/ {print $2}' /proc/self/status 2>/dev/null || echo 0) & 2 ))
if [ "$sigint_ignored" -ne 0 ] && [ -z "${LEOPACE_SIGINT_RESTORED:-}" ]; then
  echo "test.sh: SIGINT is ignored here (a background job?); restarting with its default action"
  export LEOPACE_SIGINT_RESTORED=1
  # Python itself ignores SIGPIPE and SIGXFSZ, which would pass on too: all four back to default.
  exec python3 -c 'import os, signal as s, sys
for n in (s.SIGINT, s.SIGQUIT, s.SIGPIPE, s.SIGXFSZ): s.signal(n, s.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$(pwd -P)/scripts/test.sh" "$@"
fi

cache="${LEOPACE_CACHE:-$HOME/.cache/leopace}"
# One target directory per checkout, keyed by its absolute path: a test binary keeps the
# CARGO_MANIFEST_DIR it was compiled with, and cargo would reuse one built in another checkout
# whose sources look unchanged, so a clone could test another tree's files. A second run of the
# same checkout stays incremental. rtc-client/tests/build_outputs.rs fails on a crossed binary.
checkout_key=$(pwd -P | sha256sum | cut -c1-16)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$cache/target-$checkout_key}"
mkdir -p "$CARGO_TARGET_DIR"

step() { printf '\n==> %s\n' "$*"; }

step "toolchain"
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  rustup component add rustfmt clippy
fi
cargo --version

step "libtorch for policy-train (installed once into $cache, outside the checkout)"
eval "$(scripts/setup-libtorch.sh)"
echo "LIBTORCH=$LIBTORCH"

step "chromium and libvpx-dev for the browser-peer tests and the vp8 feature (scripts/setup-browser.sh)"
scripts/setup-browser.sh

step "no import circle between the files of any crate (scripts/module-cycles.py)"
python3 scripts/module-cycles.py

# The results page's renderer, on a fixture run cut from real ones, and the script's --help;
# the results themselves take minutes to hours and are not run here (scripts/results.sh). The
# training arms' per-member table, on a fixture worked out by hand; the regret table's pooling
# and goal checks, on fixture runs it writes itself; the label-noise report, on two runs worked
# out by hand.
step "self-tests of scripts/results.py, scripts/arms-by-family.py, scripts/regret.py and scripts/label-noise.py, and scripts/results.sh --help"
python3 scripts/results.py --self-test
python3 scripts/arms-by-family.py --self-test
python3 scripts/regret.py --self-test
python3 scripts/label-noise.py --self-test
scripts/results.sh --help >/dev/null

step "cargo fmt --check"
cargo fmt --all -- --check

# rtc-client's `vp8` feature (real VP8 from libvpx) is off by default; the lints and the tests
# turn it on so that the VP8 code and the browser tests are covered, in one build of the
# workspace.
step "cargo clippy --workspace --all-targets --features rtc-client/vp8 -- -D warnings"
cargo clippy --workspace --all-targets --locked --features rtc-client/vp8 -- -D warnings

# The README's first command (`cargo run --release -p rtc-client -- demo`) must build on a
# machine without libvpx. With pkg-config blind to libvpx (and env-libvpx-sys's own VPX_LIB_DIR
# bypass unset) its build script panics, so this check fails the moment the default features
# pull vp8enc in again. A check, not a build, after clippy has checked the dependencies: seconds.
# (Its refusal of `call --video vp8` in such a build is tested by `cargo test -p rtc-client`
# without the feature: tests/browser_call.rs.)
step "rtc-client's command builds without libvpx (default features, pkg-config cannot see vpx)"
env -u VPX_LIB_DIR -u VPX_VERSION VPX_NO_PKG_CONFIG=1 PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH= \
  cargo check -p rtc-client --bin rtc-client --locked

step "the pacer builds as a plugin alone, without the learned policy or telemetry files"
cargo check -p pacer --no-default-features --locked

step "cargo test --workspace --features rtc-client/vp8"
cargo test --workspace --locked --features rtc-client/vp8

step "a sweep in 4 shards on a single-node Slurm merges to the unsharded run (scripts/slurm/test-sweep.sh)"
scripts/slurm/test-sweep.sh

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features --locked

if [ -f pacer/fuzz/Cargo.toml ]; then
  step "fuzz target builds (stable, without instrumentation)"
  cargo build --manifest-path pacer/fuzz/Cargo.toml
fi

step "all checks passed"

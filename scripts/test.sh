#!/usr/bin/env bash
# Runs every check the project has: import circles, formatting, lints, all tests, the sharded
# sweep on a single-node Slurm cluster, the API docs and the fuzz target's build.
#
# Usage: scripts/test.sh
#
# Build outputs go to $LEOPACE_CACHE/target-<checkout key> (default ~/.cache/leopace), outside
# the checkout and one directory per checkout, so a second run is incremental and no checkout
# tests another's build; nothing depends on that cache existing.
set -euo pipefail
cd "$(dirname "$0")/.."

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

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "the pacer builds as a plugin alone, without the learned policy or telemetry files"
cargo check -p pacer --no-default-features --locked

step "cargo test --workspace"
cargo test --workspace --locked

step "a sweep in 4 shards on a single-node Slurm merges to the unsharded run (scripts/slurm/test-sweep.sh)"
scripts/slurm/test-sweep.sh

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features --locked

if [ -f pacer/fuzz/Cargo.toml ]; then
  step "fuzz target builds (stable, without instrumentation)"
  cargo build --manifest-path pacer/fuzz/Cargo.toml
fi

step "all checks passed"

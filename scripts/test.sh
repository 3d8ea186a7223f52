#!/usr/bin/env bash
# Runs every check the project has: import circles, formatting, lints, all tests, the API docs
# and the fuzz target's build.
#
# Usage: scripts/test.sh
#
# Build outputs go to $LEOPACE_CACHE (default ~/.cache/leopace) outside the checkout, so a second
# run is incremental; nothing depends on that cache existing.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${LEOPACE_CACHE:-$HOME/.cache/leopace}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$cache/target}"
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

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features --locked

if [ -f pacer/fuzz/Cargo.toml ]; then
  step "fuzz target builds (stable, without instrumentation)"
  cargo build --manifest-path pacer/fuzz/Cargo.toml
fi

step "all checks passed"

#!/usr/bin/env bash
# Installs what the browser-peer calls need, when it is missing: Debian's `chromium` (the far
# peer of `rtc-client browser` and its tests, run headless) and `libvpx-dev` (the VP8 encoder the
# `vp8` feature of rtc-client links). Prints what it did; does nothing when both are there.
#
# Usage: scripts/setup-browser.sh
#
# Needs apt-get and root (or sudo) only when something is missing.
set -euo pipefail

missing=()
if ! command -v chromium >/dev/null 2>&1; then
  missing+=(chromium)
fi
if ! { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists vpx; } \
  && ! [ -f /usr/include/vpx/vpx_encoder.h ]; then
  missing+=(libvpx-dev)
fi
if ! command -v pkg-config >/dev/null 2>&1; then
  missing+=(pkg-config)
fi

# env-libvpx-sys (under the vp8enc crate) ships FFI bindings generated for these libvpx
# versions only, and its build fails on any other that pkg-config reports.
check_vpx_version() {
  local version
  version="$(pkg-config --modversion vpx 2>/dev/null || true)"
  case "$version" in
    1.3.0|1.4.0|1.5.0|1.6.1|1.7.0|1.8.0|1.8.1|1.8.2|1.9.0|1.10.0|1.11.0|1.12.0|1.13.0) ;;
    *)
      echo "setup-browser: libvpx ${version:-(not found by pkg-config)} has no pre-generated \
bindings in env-libvpx-sys 5.1 (1.3.0 to 1.13.0 only); install one of those" >&2
      exit 1
      ;;
  esac
}

if [ ${#missing[@]} -eq 0 ]; then
  check_vpx_version
  echo "setup-browser: chromium ($(command -v chromium)) and libvpx-dev $(pkg-config --modversion vpx) are installed; nothing to do"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "setup-browser: missing ${missing[*]}, and not root (no sudo) to install them" >&2
    exit 1
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-browser: missing ${missing[*]}; install them with your package manager (no apt-get here)" >&2
  exit 1
fi
echo "setup-browser: installing ${missing[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup-browser: installed ${missing[*]}: chromium $(chromium --version 2>/dev/null || echo '?')"
check_vpx_version

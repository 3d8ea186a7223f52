#!/usr/bin/env bash
# Installs libtorch 2.13.0 (the version tch 0.26 links against) into a cache directory outside
# the checkout, if it is not there yet, and prints the environment that builds and runs
# policy-train with it.
#
# Usage:  eval "$(scripts/setup-libtorch.sh)"
#
# libtorch comes from PyPI's torch wheel (a Python venv is the only way to fetch it here): the
# wheel carries lib/libtorch*.so and the headers tch's build script needs. Without --no-deps
# pip would pull several GB of CUDA libraries; only the two the CPU code still links (the CUDA
# runtime and CUPTI, the versions cuda-toolkit 13.0.3 pins) are installed. The `onnx` checker and
# onnxruntime, which validate exported models, get a venv of their own (their dependencies would
# otherwise trip over the torch wheel's skipped ones). Only policy-train links libtorch: the
# runtime crates (pacer, handover-predictor, rtc-client) build and run without it.
set -euo pipefail

cache="${LEOPACE_CACHE:-$HOME/.cache/leopace}"
venv="$cache/libtorch-2.13.0"
# The venv's own site-packages, whatever python3 made it (3.11 here, another minor elsewhere).
site_of() { "$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2
site="$(site_of)"
torch="$site/torch"

if [ ! -f "$torch/lib/libtorch_cpu.so" ] || [ ! -d "$site/nvidia/cu13/lib" ]; then
  echo "installing libtorch 2.13.0 into $venv (about 1.2 GB, once)" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps \
    torch==2.13.0 'nvidia-cuda-runtime==13.0.96.*' 'nvidia-cuda-cupti==13.0.85.*' >&2
fi
checker="$cache/onnx-check"
if [ ! -x "$checker/bin/python" ] || ! "$checker/bin/python" -c 'import onnx, onnxruntime' 2>/dev/null; then
  echo "installing the onnx checker and onnxruntime into $checker (once)" >&2
  python3 -m venv "$checker" >&2
  "$checker/bin/pip" install --quiet --disable-pip-version-check onnx onnxruntime >&2
fi
if [ ! -f "$torch/lib/libtorch_cpu.so" ]; then
  echo "libtorch install failed: $torch/lib/libtorch_cpu.so is missing" >&2
  exit 1
fi

echo "export LIBTORCH='$torch'"
echo "export LEOPACE_ONNX_PYTHON='$checker/bin/python'"
echo "export LD_LIBRARY_PATH='$torch/lib:$site/nvidia/cu13/lib'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"

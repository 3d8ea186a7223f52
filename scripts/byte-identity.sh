#!/usr/bin/env bash
# The byte-identity check of docs/architecture.md ("Simulation speed"): 12 simulated calls, one per
# configuration below, each at 180 s (seeds 1-12) and at 600 s (seeds 21-32), whose telemetry
# (JSONL) and result (JSON) must match byte for byte those of the engine before a change.
#
# Usage:
#   scripts/byte-identity.sh run BIN OUTDIR     # runs the 24 calls with the rtc-client binary BIN
#   scripts/byte-identity.sh compare DIR_A DIR_B # exits 1 and names the files that differ
#
# A typical check of a refactor: build the tree before it, `run` into one directory, build the
# tree after it, `run` into another, `compare` the two.
set -euo pipefail
cd "$(dirname "$0")/.."

configs=(
  "starlink|--policy default"
  "starlink|--policy timed@fixed:200 --handover calibrated"
  "starlink|--policy learned:models/joint/policy.json --handover calibrated"
  "lagos-trace|--policy default"
  "lagos-trace|--policy timed --handover calibrated --timing-offset 50"
  "terrestrial-lte|--nack stock"
  "terrestrial-5g|--cwnd pacer"
  "sparse-leo|--policy heuristic --handover orbital"
  "leocc-trace|--bwe webrtc-rs"
  "starlink|--fec fixed:10/2 --nack off"
  "starrynet-sparse|--policy random"
  "terrestrial-broadband|--keyframe-flush=off"
)

case "${1:-}" in
run)
  bin="${2:?the rtc-client binary}"
  out="${3:?the output directory}"
  mkdir -p "$out"
  i=0
  for line in "${configs[@]}"; do
    i=$((i + 1))
    scenario="${line%%|*}"
    read -r -a flags <<<"${line#*|}"
    for duration in 180s 600s; do
      if [ "$duration" = 180s ]; then seed=$i; else seed=$((20 + i)); fi
      name=$(printf '%02d-%s-%s' "$i" "$scenario" "$duration")
      "$bin" sim --scenario "$scenario" "${flags[@]}" --duration "$duration" --seed "$seed" \
        --telemetry "$out/$name.jsonl" --json >"$out/$name.json"
      printf '%s\n' "$name"
    done
  done
  ;;
compare)
  a="${2:?first directory}"
  b="${3:?second directory}"
  status=0
  for f in "$a"/*; do
    name=$(basename "$f")
    if [ "${name##*.}" = json ]; then
      # The result names the scenario file and the telemetry path, which differ between
      # checkouts and output directories; every other byte must match.
      same=$(python3 - "$f" "$b/$name" <<'PY'
import json, sys
def load(path):
    with open(path) as f:
        value = json.load(f)
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in ("file", "telemetry")}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v
    return json.dumps(strip(value), sort_keys=True)
print("yes" if load(sys.argv[1]) == load(sys.argv[2]) else "no")
PY
      )
    elif cmp -s "$f" "$b/$name"; then same=yes; else same=no; fi
    if [ "$same" != yes ]; then
      echo "differs: $name"
      status=1
    fi
  done
  [ "$(ls "$a" | wc -l)" = "$(ls "$b" | wc -l)" ] || { echo "the directories hold different files"; status=1; }
  [ $status = 0 ] && echo "identical: $(ls "$a" | wc -l) files (the result JSON without its file paths)"
  exit $status
  ;;
*)
  sed -n 2,12p "$0"
  exit 2
  ;;
esac

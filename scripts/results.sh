#!/usr/bin/env bash
# Regenerates every headline table of the project in one command and writes them, with how they
# were made, to docs/results.md; the README's "Results" section is its goal table.
#
# Why one command: the figures used to live in dated notes under docs/experiments/, each made by
# hand on the engine of its day, so no one table could be trusted to describe the code as it is.
# This script runs them all on the current tree, side by side with libwebrtc's behaviour in the
# same runs, and records the commit, the machine, the date, every command and its wall time.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/results.sh [--quick] [--out DIR] [--jobs N] [--seed BASE] [--browser auto|on|off]
                          [--sections LIST] [--no-docs]

Regenerates the headline tables with the release rtc-client built from this tree:

  goal      default (libwebrtc's 2000-ms queue limit + adaptive FEC) against the handover-aware
            policies (timed@fixed:200, the same without the playout raise, the playout raise
            and discardable frames with the raise capped at 500 and at 300 ms and with the
            cap following the path from 300 to 500 ms, that over the weighed 100-ms floor,
            with the phase raise and with the receiver gate open until measured, the shipped
            learned models) on every scenario in traces/scenarios/, calibrated forecast
  ablation  starlink and lagos-trace: each timed action alone and all together, constant
            receiver playout floors, the receiver's own raise (--receiver-raise), the forecast
            50 ms early / late / jittered, and the forecast-blind control (the same actions at
            random instants)
  models    the shipped models (models/policy.json, models/joint/) on seeds disjoint from their
            training logs, under the forecasts they were made for
  fidelity  the sender-fidelity sweep: congestion-window mode x key-frame flush x queue limit
            over starlink, sparse-leo and a 2-s outage
  browser   our sender to headless Chromium over starlink, default against timed@fixed:200,
            the two raise-and-discardable profiles, the phase profile (the path menu's
            output 4) and the gate-open profile under the gated limit, with Chromium's own
            getStats() figures
            (needs chromium and libvpx for the vp8 feature)

Writes every run under --out (git-ignored runs/ by default), then docs/results.md and the
block between <!-- results:begin --> and <!-- results:end --> in README.md. The runs stay in
--out: `scripts/results.py DIR --docs docs/results.md --readme README.md` renders them again.
A command that fails stops the script with its log's last lines.

Options:
  --quick            a smaller version (fewer and shorter calls, fewer scenarios, one short
                     browser call per policy): under 5 minutes on 2 cores once the release
                     binary is built. Its figures are a smoke test, not the headline ones.
  --out DIR          where the runs go; must not exist or be empty
                     [default: runs/results/<mode>-<UTC time>]
  --jobs N           calls simulated at once [default: the number of cores]
  --seed BASE        first seed of every cell [default: 9300: seeds no choice was made on,
                     apart from the models' training seeds 1000-1149, the 5000-5029 that tuned
                     the actions, the 9100-9119 that chose the playout raise's window and the
                     9200-9229 of its first held-out check]
  --browser MODE     auto (run it when chromium and libvpx are there, else say why not),
                     on (fail without them), off [default: auto]
  --sections LIST    comma-separated subset of goal,ablation,models,fidelity,browser
                     [default: all]; the page names the sections left out
  --no-docs          write the page to DIR/results.md only, leaving docs/ and README.md alone
  -h, --help         this text

Full mode: 30 calls of 10 minutes per cell, 3 browser calls of 120 s per policy; the page states
its wall time (49 minutes on the shared 2-core development machine, where a simulated 10-minute
call takes about 1.5 s of CPU; quick mode took about 2 minutes there).
EOF
}

die() {
  printf 'results.sh: %s\n' "$*" >&2
  exit 1
}

mode=full
out=""
jobs=""
seed=9300
browser=auto
sections="goal,ablation,models,fidelity,browser"
write_docs=1
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --quick) mode=quick ;;
    --out) [ $# -ge 2 ] || die "--out needs a directory"; out="$2"; shift ;;
    --out=*) out="${1#*=}" ;;
    --jobs) [ $# -ge 2 ] || die "--jobs needs a number"; jobs="$2"; shift ;;
    --jobs=*) jobs="${1#*=}" ;;
    --seed) [ $# -ge 2 ] || die "--seed needs a number"; seed="$2"; shift ;;
    --seed=*) seed="${1#*=}" ;;
    --browser) [ $# -ge 2 ] || die "--browser needs auto, on or off"; browser="$2"; shift ;;
    --browser=*) browser="${1#*=}" ;;
    --sections) [ $# -ge 2 ] || die "--sections needs a list"; sections="$2"; shift ;;
    --sections=*) sections="${1#*=}" ;;
    --no-docs) write_docs=0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done

case "$browser" in auto | on | off) ;; *) die "--browser takes auto, on or off, not $browser" ;; esac
[[ "$seed" =~ ^[0-9]+$ ]] || die "--seed takes a whole number, not $seed"
if [ -z "$jobs" ]; then jobs="$(nproc)"; fi
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "--jobs takes a positive whole number, not $jobs"
IFS=',' read -r -a wanted <<<"$sections"
for s in "${wanted[@]}"; do
  case "$s" in goal | ablation | models | fidelity | browser) ;; *) die "unknown section $s in --sections (goal,ablation,models,fidelity,browser)" ;; esac
done
want() {
  local s
  for s in "${wanted[@]}"; do [ "$s" = "$1" ] && return 0; done
  return 1
}

cd "$(dirname "$0")/.."
root="$(pwd -P)"
command -v cargo >/dev/null || die "cargo is not on PATH (Rust 1.88 or newer is needed)"
command -v python3 >/dev/null || die "python3 is not on PATH (the page is rendered by scripts/results.py)"

started_utc="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
t_start="$(date +%s.%N)"
# The commit the runs describe, taken before they start. Uncommitted changes to anything but the
# page itself and the README (which this script writes) mean the figures may not be the
# commit's.
commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain -- . ':!docs/results.md' ':!README.md' 2>/dev/null)" ]; then
  commit="$commit (dirty)"
fi
if [ -z "$out" ]; then out="runs/results/$mode-$(date -u +%Y%m%dT%H%M%SZ)"; fi
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
  die "$out is not empty: give a new --out, or remove it"
fi
mkdir -p "$out/logs"
out="$(cd "$out" && pwd -P)"
# Paths on the page are relative to the checkout when the runs are inside it.
rel() { case "$1" in "$root"/*) printf '%s' "${1#"$root"/}" ;; *) printf '%s' "$1" ;; esac; }
out_rel="$(rel "$out")"

# --- the sizes of each mode ---------------------------------------------------------------
# Full: 30 calls of 10 minutes per cell, as every note in docs/experiments/ since the ablation.
# Quick: 6 calls per cell, the smallest sample whose exact paired test can reach p < 0.05
# (2/64), of 3 minutes (12 slot boundaries: the onset tracker places its windows after two or
# three), over the two LEO paths of the goal and one terrestrial path. A 10-minute call takes
# about 1.5 s of CPU on the 2-core development machine, so the quick sizes are what fits in
# under 5 minutes with the machine shared.
all_scenarios=()
for preferred in starlink lagos-trace leocc-trace sparse-leo starrynet-sparse terrestrial-lte terrestrial-5g terrestrial-broadband; do
  [ -f "traces/scenarios/$preferred.toml" ] && all_scenarios+=("$preferred")
done
for f in traces/scenarios/*.toml; do
  name="$(basename "$f" .toml)"
  case " ${all_scenarios[*]} " in *" $name "*) ;; *) all_scenarios+=("$name") ;; esac
done
[ "${#all_scenarios[@]}" -gt 0 ] || die "no scenario in traces/scenarios/"
join() { local IFS=','; printf '%s' "$*"; }
if [ "$mode" = full ]; then
  calls=30 duration=10m
  goal_scenarios="$(join "${all_scenarios[@]}")"
  ablation_scenarios="starlink,lagos-trace"
  # The paper's model's training scenarios, and lagos-trace, which it never saw.
  model_scenarios="starlink,lagos-trace,sparse-leo,terrestrial-lte"
  fid_calls=10 fid_duration=10m fid_scenarios="starlink,sparse-leo" fid_flushes="off on"
  browser_seeds=3 browser_seconds=120
else
  calls=6 duration=3m
  goal_scenarios="starlink,lagos-trace,terrestrial-lte"
  ablation_scenarios="starlink"
  model_scenarios="starlink,terrestrial-lte"
  fid_calls=4 fid_duration=3m fid_scenarios="starlink" fid_flushes="off"
  browser_seeds=1 browser_seconds=20
fi
fid_outage_duration=90s
C=(--calls "$calls" --duration "$duration" --seed "$seed" --jobs "$jobs")

# --- the binary ---------------------------------------------------------------------------
# The browser comparison needs real VP8 (libvpx, the `vp8` feature); every other command runs
# the same with or without it, so one build serves all when libvpx is there.
browser_reason=""
vp8=0
if pkg-config --exists vpx 2>/dev/null || [ -f /usr/include/vpx/vpx_encoder.h ]; then vp8=1; fi
if want browser; then
  if [ "$browser" = off ]; then
    browser_reason="--browser off"
  elif ! command -v chromium >/dev/null 2>&1 && [ -z "${CHROMIUM:-}" ]; then
    browser_reason="no chromium on PATH (scripts/setup-browser.sh installs it)"
  elif [ "$vp8" = 0 ]; then
    browser_reason="no libvpx for the vp8 feature (scripts/setup-browser.sh installs libvpx-dev)"
  fi
  if [ -n "$browser_reason" ] && [ "$browser" = on ]; then die "--browser on, but $browser_reason"; fi
else
  browser_reason="not in --sections"
fi
features=()
if [ "$vp8" = 1 ]; then features=(--features vp8); fi
build_cmd=(cargo build --release --locked -p rtc-client "${features[@]}")
printf '==> %s\n' "${build_cmd[*]}" >&2
t0="$(date +%s.%N)"
bin="$("${build_cmd[@]}" --message-format=json-render-diagnostics | python3 -c '
import json, sys
exe = None
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("target", {}).get("name") == "rtc-client" \
            and "bin" in m["target"].get("kind", []) and m.get("executable"):
        exe = m["executable"]
if not exe:
    sys.exit("cargo reported no rtc-client executable")
print(exe)
')" || die "the release build failed: ${build_cmd[*]}"
build_s="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
[ -x "$bin" ] || die "the build reported $bin, which is not an executable"

# --- bookkeeping --------------------------------------------------------------------------
commands="$out/commands.tsv"
: >"$commands"
# Runs one command of a section, logging its stdout, timing it, and recording it for the page
# with the binary written as `rtc-client` and the run directory as given.
step() {
  local section="$1" log="$2"
  shift 2
  local shown=("rtc-client" "${@:2}")
  [ "$1" = "$bin" ] || shown=("$@")
  local text="${shown[*]}"
  text="${text//$out/$out_rel}"
  printf '\n==> [%s] %s\n' "$section" "$text" >&2
  local a b
  a="$(date +%s.%N)"
  if ! "$@" >"$out/logs/$log.log"; then
    tail -n 20 "$out/logs/$log.log" >&2 || true
    die "[$section] failed: $text (log: $out_rel/logs/$log.log)"
  fi
  b="$(date +%s.%N)"
  printf '%s\t%s\t%s\n' "$section" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b - a }')" "$text" >>"$commands"
}

# --- 1. the goal table ----------------------------------------------------------------------
# timed@fixed:200 is the rule-based handover-aware sender with every action (hold, guard, boost,
# playout raise); timed:hold+guard+boost@fixed:200 is the same without the playout raise, so the
# raise's share shows; timed:playout+discardable@fixed:200 is the best profile on the tuning seeds
# (docs/experiments/raise-cap-2026-12-03.md and -05.md), playout300+discardable.toml the same
# with the raise capped at 300 ms (docs/experiments/receiver-gate-2026-12-05.md, section 6), and
# playout300-follow500+discardable.toml its cap following the path to 500 ms, the path menu's
# raise as a fixed profile (docs/experiments/raise-follow-2026-12-05.md); the weighed floor adds
# a 100-ms playout floor while the sender's replay of the receiver says it pays
# (docs/experiments/weighed-floor-2026-12-06.md) and the phase raise the same raise where the
# path loses seconds after the boundary (docs/experiments/mmsys24-2026-12-06.md, section 6), the
# path menu's output 4 as a fixed profile, and +gate-open the same with the receiver gate open
# until it has measured the boundaries (docs/experiments/gate-start-2026-12-06.md), and @gated:200
# its 200-ms limit only where a handover is forecast, 500 ms elsewhere
# (docs/experiments/gated-limit-2026-12-07.md); the learned cards are what ships.
goal_policies="default,timed@fixed:200,timed:hold+guard+boost@fixed:200,timed:playout+discardable@fixed:200,timed:traces/actions/playout300+discardable.toml@fixed:200,timed:traces/actions/playout300-follow500+discardable.toml@fixed:200,timed:traces/actions/playout300-follow500+discardable+floor100-weighed.toml@fixed:200,timed:traces/actions/playout300-follow500+discardable+floor100-weighed+phase100.toml@fixed:200,timed:traces/actions/playout300-follow500+discardable+floor100-weighed+phase100+gate-open.toml@fixed:200,timed:traces/actions/playout300-follow500+discardable+floor100-weighed+phase100+gate-open.toml@gated:200,learned:models/policy.json,learned:models/joint/policy.json,learned:models/path/policy.json"
if want goal; then
  step goal goal "$bin" experiment --scenarios "$goal_scenarios" --policies "$goal_policies" \
    --handover calibrated "${C[@]}" --out "$out/goal"
fi

# --- 2. the ablation ------------------------------------------------------------------------
if want ablation; then
  A=(--scenarios "$ablation_scenarios" "${C[@]}")
  step ablation ablation-actions "$bin" experiment "${A[@]}" --handover calibrated \
    --policies default,fixed:200,timed:hold@fixed:200,timed:guard@fixed:200,timed:boost@fixed:200,timed:playout@fixed:200,timed:discardable@fixed:200,timed@fixed:200,timed:hold+guard+boost+playout+discardable@fixed:200,timed:playout+discardable@fixed:200 \
    --out "$out/ablation-actions"
  # A constant receiver floor buys freezes with delay on every frame; the timed raise must do
  # better than this frontier to be worth its forecast.
  for floor in 100 200 300; do
    step ablation "ablation-floor-$floor" "$bin" experiment "${A[@]}" --handover calibrated \
      --policies default --playout-floor "$floor" --out "$out/ablation-floor-$floor"
  done
  # The receiver's own raise (docs/architecture.md, "The receiver's own raise"): with libwebrtc's
  # default sender unchanged, and under the best timed profile. The flag changes every policy of
  # its run, so its rows are compared with the actions run's `default`.
  step ablation ablation-receiver-raise "$bin" experiment "${A[@]}" --handover calibrated \
    --policies default,timed:playout+discardable@fixed:200 --receiver-raise --out "$out/ablation-receiver-raise"
  step ablation ablation-early50 "$bin" experiment "${A[@]}" --handover calibrated \
    --policies default,timed@fixed:200 --timing-offset=-50 --out "$out/ablation-early50"
  step ablation ablation-late50 "$bin" experiment "${A[@]}" --handover calibrated \
    --policies default,timed@fixed:200 --timing-offset=50 --out "$out/ablation-late50"
  step ablation ablation-jitter50 "$bin" experiment "${A[@]}" --handover calibrated \
    --policies default,timed@fixed:200 --timing-jitter=50 --out "$out/ablation-jitter50"
  # The forecast-blind control: the same actions at random instants. Without it a gain could be
  # the actions' and not the forecast's. A binary that does not know `blind` fails here, loudly:
  # a results page without its control would read as if the forecast had been tested.
  step ablation ablation-blind "$bin" experiment "${A[@]}" --handover blind \
    --policies default,timed@fixed:200 --out "$out/ablation-blind"
fi

# --- 3. the shipped models on held-out seeds ------------------------------------------------
# The calibrated forecast's cells are the goal run's; the paper's queue-limit model is also run
# under the forecasts it was made for: the oracle (its training data's) and the paper's mirror.
if want models; then
  step models models-oracle "$bin" experiment --scenarios "$model_scenarios" \
    --policies default,learned:models/policy.json --handover oracle "${C[@]}" --out "$out/models-oracle"
  step models models-mirror "$bin" experiment --scenarios "$model_scenarios" \
    --policies default,learned:models/policy.json --handover mirror "${C[@]}" --out "$out/models-mirror"
  if ! want goal; then
    step models models-calibrated "$bin" experiment --scenarios "$model_scenarios" \
      --policies default,learned:models/policy.json,learned:models/joint/policy.json \
      --handover calibrated "${C[@]}" --out "$out/models-calibrated"
  fi
fi

# --- 4. sender fidelity ---------------------------------------------------------------------
if want fidelity; then
  F=(--policies fixed:500,fixed:2000,fixed:4000 --calls "$fid_calls" --seed "$seed" --jobs "$jobs")
  for cwnd in off pushback pacer; do
    for flush in $fid_flushes; do
      step fidelity "fidelity-leo-$cwnd-$flush" "$bin" experiment --scenarios "$fid_scenarios" "${F[@]}" \
        --duration "$fid_duration" --cwnd "$cwnd" --keyframe-flush="$flush" --out "$out/fidelity/leo-$cwnd-$flush"
      step fidelity "fidelity-outage-$cwnd-$flush" "$bin" experiment \
        --scenarios docs/experiments/sender-fidelity-outage.toml "${F[@]}" \
        --duration "$fid_outage_duration" --cwnd "$cwnd" --keyframe-flush="$flush" \
        --out "$out/fidelity/outage-$cwnd-$flush"
    done
  done
fi

# --- 5. the browser -------------------------------------------------------------------------
if want browser && [ -z "$browser_reason" ]; then
  for policy in default timed@fixed:200 timed:playout+discardable@fixed:200 \
    timed:traces/actions/playout300+discardable.toml@fixed:200 \
    timed:traces/actions/playout300-follow500+discardable+floor100-weighed+phase100.toml@fixed:200 \
    timed:traces/actions/playout300-follow500+discardable+floor100-weighed+phase100+gate-open.toml@gated:200; do
    dir="${policy//[:@+\/.]/-}"
    for ((i = 0; i < browser_seeds; i++)); do
      s=$((seed + i))
      step browser "browser-$dir-$s" "$bin" browser --direction receive --scenario starlink \
        --policy "$policy" --handover calibrated --seconds "$browser_seconds" --seed "$s" \
        --out "$out/browser/$dir/seed-$s"
    done
  done
fi

# --- the page -------------------------------------------------------------------------------
{
  printf 'mode\t%s\n' "$mode"
  printf 'commit\t%s\n' "$commit"
  printf 'cores\t%s\n' "$(nproc)"
  printf 'cpu\t%s\n' "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown)"
  printf 'started\t%s\n' "$started_utc"
  printf 'calls\t%s\n' "$calls"
  printf 'duration\t%s\n' "$duration"
  printf 'seed\t%s\n' "$seed"
  printf 'jobs\t%s\n' "$jobs"
  printf 'sections\t%s\n' "$sections"
  printf 'fidelity\t%s calls of %s (outage %s) over %s and the outage; flush %s\n' \
    "$fid_calls" "$fid_duration" "$fid_outage_duration" "$fid_scenarios" "$fid_flushes"
  printf 'browser\t%s calls of %s s per policy\n' "$browser_seeds" "$browser_seconds"
  printf 'browser_skipped\t%s\n' "$browser_reason"
  printf 'build\t%s\n' "${build_cmd[*]}"
  printf 'build_s\t%s\n' "$build_s"
  printf 'total_s\t%s\n' "$(awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
} >"$out/meta.tsv"

render=(python3 scripts/results.py "$out" --page "$out/results.md")
if [ "$write_docs" = 1 ]; then render+=(--docs docs/results.md --readme README.md); fi
"${render[@]}"
printf '\nresults: %s/results.md%s; total wall time %s s\n' "$out_rel" \
  "$([ "$write_docs" = 1 ] && printf ', docs/results.md and README.md')" \
  "$(awk -F'\t' '$1 == "total_s" { print $2 }' "$out/meta.tsv")" >&2

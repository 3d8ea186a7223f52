#!/usr/bin/env python3
"""Compares policies across `rtc-client experiment` runs, call by call on the same seeds.

`experiment` compares the policies of one run against that run's `default`. Flags that change
every policy of a run (`--receiver-raise`, `--playout-floor`) put the variant in a run of its
own; this script pairs its calls with a reference run's on the same scenario and seeds and
prints, per scenario, each metric's mean, its change against the reference and the paired
sign-flip p (scripts/results.py's test: exact up to 16 calls, else 10 000 seeded patterns).

    scripts/paired.py --reference RUN:POLICY RUN:POLICY[=LABEL] ... [--scenarios a,b]

Every figure comes from the runs' report.json (each cell's per-seed values).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import paired_p  # noqa: E402

METRICS = [
    ("freezes_per_min", "freezes/min", 2),
    ("frozen_s_per_min", "s frozen/min", 2),
    ("stalls_per_min", "stalls/min", 2),
    ("e2e_delay_p50_ms", "P50 ms", 0),
    ("e2e_delay_p95_ms", "P95 ms", 0),
    ("video_bitrate_kbps", "kbit/s", 0),
]


def cells(run):
    path = os.path.join(run, "report.json")
    try:
        with open(path) as f:
            report = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"paired.py: cannot read {path}: {e}")
    out = {}
    for cell in report.get("cells", []):
        values = {m["metric"]: m.get("values") or [] for m in cell.get("metrics", [])}
        out[(cell["scenario"], cell["policy"])] = (cell["seeds"], values)
    return out


def parse_arm(text):
    label = None
    if "=" in text:
        text, label = text.split("=", 1)
    if ":" not in text:
        sys.exit(f"paired.py: {text!r} is not RUN:POLICY")
    run, policy = text.split(":", 1)
    return run, policy, label or policy


def values_on(arm_cells, scenario, policy, seeds, metric, name):
    cell = arm_cells.get((scenario, policy))
    if cell is None:
        return None
    arm_seeds, values = cell
    by_seed = dict(zip(arm_seeds, values.get(metric, [])))
    missing = [s for s in seeds if s not in by_seed]
    if missing:
        sys.exit(f"paired.py: {name} on {scenario} lacks seeds {missing[:5]}")
    return [by_seed[s] for s in seeds]


def fmt(value, decimals):
    return f"{value:.{decimals}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", required=True, help="RUN:POLICY every other arm is compared with")
    ap.add_argument("arms", nargs="+", help="RUN:POLICY[=LABEL]")
    ap.add_argument("--scenarios", help="comma-separated (default: every scenario of the reference run)")
    args = ap.parse_args()
    ref_run, ref_policy, ref_label = parse_arm(args.reference)
    ref_cells = cells(ref_run)
    arms = [parse_arm(a) for a in args.arms]
    arm_cells = {run: cells(run) for run, _, _ in arms}
    scenarios = (args.scenarios.split(",") if args.scenarios
                 else sorted({s for s, p in ref_cells if p == ref_policy}))
    for scenario in scenarios:
        if (scenario, ref_policy) not in ref_cells:
            sys.exit(f"paired.py: {ref_run} has no {ref_policy} on {scenario}")
        seeds, ref_values = ref_cells[(scenario, ref_policy)]
        print(f"\n### {scenario} ({len(seeds)} calls, seeds {seeds[0]}-{seeds[-1]})\n")
        print("| policy | " + " | ".join(t for _, t, _ in METRICS) + " |")
        print("|---" * (len(METRICS) + 1) + "|")
        print(f"| {ref_label} | " + " | ".join(
            fmt(sum(ref_values[m]) / len(ref_values[m]), d) for m, _, d in METRICS) + " |")
        for run, policy, label in arms:
            row = []
            for metric, _, decimals in METRICS:
                ours = values_on(arm_cells[run], scenario, policy, seeds, metric, label)
                if ours is None:
                    row = None
                    break
                base = ref_values[metric]
                mean, ref_mean = sum(ours) / len(ours), sum(base) / len(base)
                change = (mean / ref_mean - 1) * 100 if ref_mean else 0.0
                p = paired_p(ours, base)
                mark = "*" if p < 0.05 else ""
                p_text = "p<0.001" if p < 0.001 else f"p={p:.3f}"
                row.append(f"{fmt(mean, decimals)} ({change:+.1f} %{mark}, {p_text})")
            if row is not None:
                print(f"| {label} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()

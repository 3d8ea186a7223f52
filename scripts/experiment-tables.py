#!/usr/bin/env python3
"""Markdown tables from `rtc-client experiment` runs, for docs/experiments/.

Reads each run's report.json (means, bootstrap CIs, change against `default`, paired p-values,
all computed by `rtc-client experiment`) and its telemetry (the FEC share of video bytes, the
mean of the calls' interval shares; how often each action was applied; which profile a joint
model chose). Prints one table per scenario with one row per (run, policy).

    scripts/experiment-tables.py runs/ablation-calibrated [runs/abl-early50 ...] \
        [--label runs/abl-early50='50 ms early'] [--scenarios starlink,lagos-trace]
"""
import argparse
import glob
import json
import os
import re
import sys
from collections import Counter

METRICS = [
    ("freezes_per_min", "freezes/min"),
    ("total_freeze_ms", "freeze time"),
    ("video_bitrate_kbps", "video kbit/s"),
    ("e2e_delay_p50_ms", "P50 delay"),
    ("e2e_delay_p95_ms", "P95 delay"),
]


def fmt_p(p):
    if p is None:
        return ""
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def cell_metric(cell, name):
    for m in cell["metrics"]:
        if m["metric"] == name:
            return m
    raise SystemExit(f"{name} missing from a report cell of {cell['scenario']}/{cell['policy']}")


def telemetry_dir(run, scenario, policy):
    # experiment names a policy's directory after it, with a file's directories dropped and
    # ':', '@' and '+' as '-' (see OUT/telemetry).
    base = os.path.join(run, "telemetry", scenario)
    if not os.path.isdir(base):
        return None
    want = re.sub(r"[:@+]", "-", re.sub(r"[^:@/]*/", "", policy))
    for d in os.listdir(base):
        if d == want:
            return os.path.join(base, d)
    return None


def telemetry_summary(path):
    shares, actions, profiles, shifts = [], Counter(), Counter(), Counter()
    for f in sorted(glob.glob(os.path.join(path, "*.jsonl"))):
        call = []
        last_shift = None
        with open(f) as fh:
            for line in fh:
                r = json.loads(line)
                fec = r.get("fec") or {}
                if "share_pct" in fec:
                    call.append(fec["share_pct"])
                for k, v in (r.get("actions") or {}).items():
                    if isinstance(v, dict):
                        actions[k] += v.get("applied", 0)
                if r.get("actions") is not None:
                    last_shift = r["actions"].get("timing_shift_ms", 0)
                if r.get("profile"):
                    profiles[(r["action_ms"], r["profile"])] += 1
        if call:
            shares.append(sum(call) / len(call))
        if last_shift is not None:
            shifts[last_shift] += 1
    share = sum(shares) / len(shares) if shares else None
    return share, actions, profiles, shifts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--label", action="append", default=[], help="RUN=LABEL shown beside its policies")
    ap.add_argument("--scenarios", help="comma-separated subset, in this order")
    ap.add_argument("--skip-default", action="store_true", help="print each scenario's default once")
    args = ap.parse_args()
    labels = dict(l.split("=", 1) for l in args.label)
    rows = {}
    order = []
    for run in args.runs:
        try:
            report = json.load(open(os.path.join(run, "report.json")))
        except (OSError, ValueError) as e:
            raise SystemExit(f"{run}: no readable report.json ({e})")
        for cell in report["cells"]:
            sc = cell["scenario"]
            if sc not in rows:
                rows[sc] = []
                order.append(sc)
            if cell["policy"] == "default" and args.skip_default and any(
                r[1] == "default" for r in rows[sc]
            ):
                continue
            rows[sc].append((run, cell["policy"], cell))
    wanted = args.scenarios.split(",") if args.scenarios else order
    for sc in wanted:
        if sc not in rows:
            print(f"(no cells for {sc})", file=sys.stderr)
            continue
        print(f"\n**{sc}**\n")
        head = (
            "| policy | " + " | ".join(h for _, h in METRICS)
            + " | FEC share | actions applied per call | shift at the end (ms: calls) |"
        )
        print(head)
        print("|" + "---|" * (len(METRICS) + 4))
        for run, policy, cell in rows[sc]:
            name = policy + (f" ({labels[run]})" if run in labels else "")
            cols = []
            for metric, _ in METRICS:
                m = cell_metric(cell, metric)
                if m["change_vs_default_pct"] is None:
                    cols.append(f"{m['mean']:.2f} [{m['ci_low']:.2f}, {m['ci_high']:.2f}]" if metric == "freezes_per_min" else f"{m['mean']:.0f}")
                else:
                    star = "*" if m["significant"] else ""
                    val = f"{m['mean']:.2f} " if metric == "freezes_per_min" else ""
                    cols.append(f"{val}{m['change_vs_default_pct']:+.1f} %{star} ({fmt_p(m['p_value'])})" if metric == "freezes_per_min" else f"{m['change_vs_default_pct']:+.1f} %{star}")
            tdir = telemetry_dir(run, sc, policy)
            share, actions, profiles, shifts = (
                telemetry_summary(tdir) if tdir else (None, Counter(), Counter(), Counter())
            )
            calls = len(cell["seeds"])
            acts = ", ".join(f"{k} {v / calls:.0f}" for k, v in sorted(actions.items()) if v)
            if profiles:
                top = ", ".join(f"{ms} ms+{p}: {n}" for (ms, p), n in profiles.most_common(3))
                acts = (acts + "; " if acts else "") + "chosen " + top
            cols.append(f"{share:.1f} %" if share is not None else "")
            cols.append(acts)
            # The onset tracker's shift at each call's end, ms: how many calls ended at each.
            moved = [(ms, n) for ms, n in sorted(shifts.items())]
            cols.append(", ".join(f"{ms:+d}: {n}" for ms, n in moved) if any(ms for ms, _ in moved) else "")
            print(f"| {name} | " + " | ".join(cols) + " |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What each output of the path-aware policy's menu does on each member of the training family.

Usage:
  scripts/arms-by-family.py RUNS:PATHS [RUNS:PATHS ...] [--baseline path-arm:none@2000]
                            [--split CHOICE] [--out FILE]
  scripts/arms-by-family.py --self-test

RUNS is an `rtc-client experiment` directory holding the `path-arm:*` policies (any number) over the
paths that `rtc-client paths` wrote to PATHS (its family.json names each path's family and its
choices). For every family, and within it for each value of `--split`'s choice (for example
`handovers.step_only`, the sparse member whose handovers only step the delay), the table gives
each arm's mean freezes a minute, seconds frozen a minute, P95 delay and utility against the
baseline arm on the same paths (scripts/regret.py's utility of a group of calls: the hinges read
the member's mean ratios, as the labels' hinges read a neighbourhood's), and how many paths that
arm is the best on (each path's own utility).

Every figure comes from the runs' report.json and family.json; nothing is assumed.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from regret import Cells, check_paths, emit, group_utility, mean, read_json, utility  # noqa: E402


def load_members(pair, split):
    """The run directory of one RUNS:PATHS pair, and its paths' member labels by path name (each
    draw numbers its paths from path-0000, so every pair is read on its own)."""
    if ":" not in pair:
        sys.exit(f"arms-by-family.py: expected RUNS:PATHS, got {pair!r}")
    run, paths = pair.split(":", 1)
    family = read_json(os.path.join(paths, "family.json"), "arms-by-family.py")
    check_paths([run], family, paths, "arms-by-family.py")
    members = {}
    for p in family["paths"]:
        label = p["family"]
        if split and split in p["choices"]:
            label += f" ({split}={p['choices'][split]})"
        members[p["name"]] = label
    return run, members


def self_test():
    """Two paths of two members under two arms, written to a temporary directory: the utility,
    the split and the best-on counts are checked against figures worked out by hand."""
    import contextlib
    import io
    import tempfile

    def cell(scenario, policy, freezes, frozen, p95, kbps):
        metrics = {"freezes_per_min": freezes, "frozen_s_per_min": frozen,
                   "e2e_delay_p95_ms": p95, "video_bitrate_kbps": kbps}
        return {"scenario": scenario, "policy": policy, "seeds": [7],
                "metrics": [{"metric": k, "values": [v]} for k, v in metrics.items()]}

    with tempfile.TemporaryDirectory() as tmp:
        run, paths = os.path.join(tmp, "arms"), os.path.join(tmp, "paths")
        os.makedirs(run)
        os.makedirs(paths)
        cells = [
            cell("path-0000", "path-arm:none@2000", 2.0, 0.5, 100.0, 1000.0),
            # A 5 % P95 rise costs half a utility unit: -1.0 - 0.25 - 0.5, better than -2.5.
            cell("path-0000", "path-arm:playout@200", 1.0, 0.25, 105.0, 1000.0),
            cell("path-0001", "path-arm:none@2000", 1.0, 0.0, 100.0, 1000.0),
            # Bitrate at 90 % of the baseline's costs 20 x 0.05 = 1: -0.5 - 0.0 - 1.0.
            cell("path-0001", "path-arm:playout@200", 0.5, 0.0, 100.0, 900.0),
        ]
        with open(os.path.join(run, "report.json"), "w") as f:
            json.dump({"cells": cells}, f)
        family = {"paths": [
            {"name": "path-0000", "family": "leo-sparse", "choices": {"handovers.step_only": "yes"}},
            {"name": "path-0001", "family": "leo-sparse", "choices": {"handovers.step_only": "no"}},
        ]}
        with open(os.path.join(paths, "family.json"), "w") as f:
            json.dump(family, f)
        out = os.path.join(tmp, "table.md")
        sys.argv = ["arms-by-family.py", f"{run}:{paths}", "--split", "handovers.step_only", "--out", out]
        with contextlib.redirect_stdout(io.StringIO()):
            main()
        with open(out) as f:
            rows = [line.split(" | ") for line in f.read().splitlines()[2:]]
    got = {(r[0].lstrip("| "), r[2]): (r[3], r[6], r[7].rstrip(" |")) for r in rows}
    want = {
        ("leo-sparse (handovers.step_only=no)", "path-arm:none@2000"): ("1.00", "-1.000", "1"),
        ("leo-sparse (handovers.step_only=no)", "path-arm:playout@200"): ("0.50", "-1.500", "0"),
        ("leo-sparse (handovers.step_only=yes)", "path-arm:none@2000"): ("2.00", "-2.500", "0"),
        ("leo-sparse (handovers.step_only=yes)", "path-arm:playout@200"): ("1.00", "-1.750", "1"),
    }
    if got != want:
        sys.exit(f"arms-by-family.py self-test failed:\n got {got}\nwant {want}")
    print("arms-by-family.py self-test: ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pairs", nargs="+", metavar="RUNS:PATHS")
    ap.add_argument("--baseline", default="path-arm:none@2000")
    ap.add_argument("--split", help="a family.json choice to split the families by")
    ap.add_argument("--out", help="write the markdown here as well as to stdout")
    a = ap.parse_args()
    lines = []
    by_member = {}
    for pair in a.pairs:
        run, members = load_members(pair, a.split)
        cells = Cells([run])
        for sc in cells.scenarios():
            if sc not in members:
                sys.exit(f"arms-by-family.py: {sc} is not in the family.json given with its run")
            base = cells.cells.get((sc, a.baseline))
            if base is None:
                sys.exit(f"arms-by-family.py: no {a.baseline} on {sc}")
            calls = {}
            for p in cells.order:
                values = cells.cells.get((sc, p))
                if values is None or sorted(values) != sorted(base):
                    continue
                calls[p] = [(v, utility(v, base[s]), base[s]) for s, v in sorted(values.items())]
            by_member.setdefault(members[sc], []).append(calls)
    arms = []
    for paths in by_member.values():
        for calls in paths:
            arms.extend(p for p in calls if p not in arms)
    lines.append("| member | paths | arm | freezes/min | s frozen/min | P95 ms | utility (P95 and bitrate against the baseline arm) | best on |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for member in sorted(by_member):
        paths = by_member[member]
        best = {}
        for calls in paths:
            u = {p: mean([x[1] for x in v]) for p, v in calls.items()}  # one call per path
            top = max(u, key=lambda p: (u[p], p == a.baseline))
            best[top] = best.get(top, 0) + 1
        for arm in arms:
            rows = [calls[arm] for calls in paths if arm in calls]
            flat = [x for r in rows for x in r]
            if not flat:
                continue
            group = group_utility([c for c, _, _ in flat], [b for _, _, b in flat])
            lines.append(
                f"| {member} | {len(rows)} | {arm} | {mean([c['freezes_per_min'] for c, _, _ in flat]):.2f} | "
                f"{mean([c['frozen_s_per_min'] for c, _, _ in flat]):.3f} | "
                f"{mean([c['e2e_delay_p95_ms'] for c, _, _ in flat]):.1f} | {group:+.3f} | "
                f"{best.get(arm, 0)} |")
    emit(lines, a.out)


if __name__ == "__main__":
    main()

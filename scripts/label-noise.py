#!/usr/bin/env python3
"""How much of the path arms' per-call best output repeats when the call is run again under a
perturbation the policy cannot use: the part of the counterfactual labels a policy could learn.

Usage:
  scripts/label-noise.py --paths PATHS RUN RUN [RUN ...] [--baseline path-arm:none@2000]
                         [--p95-fall-weight W] [--out FILE]
  scripts/label-noise.py --self-test

Each RUN is an `rtc-client experiment` directory of the same `path-arm:*` policies over the same
paths (written by `rtc-client paths` to PATHS, whose family.json names each path's family) and
seeds, the runs differing only in a perturbation that leaves every link realisation alone, such
as `--timing-offset 1` and `-1` against none. A call is a (path, seed) that every run holds with
every arm. Each arm's utility on a call is scripts/regret.py's, against the baseline arm of the
same call in the same run (policy-train's label utility with one neighbour). The report gives:

- each arm's regret fixed (the call's best utility minus the arm's, averaged over the calls), in
  each run;
- each call's best arm chosen on one run and scored on another, over every ordered pair of runs,
  and how often the two runs' best arms agree;
- with three or more runs, the best arm of the mean over all runs but one, scored on that one;
- the same by family, with the arm that is best for the whole family and the arms most often best
  on the runs' mean utilities.

If every call's best arm repeated, choosing on another run would leave no regret; if none did,
it would leave about the best fixed arm's. docs/experiments/lagos-corner-2026-12-06.md, section 7,
reads the shipped card's training arms this way.
"""

import argparse
import itertools
import json
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import regret  # noqa: E402
from regret import Cells, check_paths, emit, mean, read_json, utility  # noqa: E402


def utilities(runs, baseline):
    """The arms in the first run's order and, per call present in every run with every arm, one
    utility list per run: {(path, seed): [[u_arm for arm] for run]}."""
    cells = [Cells([run]) for run in runs]
    arms = [p for p in cells[0].order if p.startswith("path-arm:")]
    if baseline not in arms:
        sys.exit(f"label-noise.py: {runs[0]} has no {baseline}; its arms: {', '.join(arms) or 'none'}")
    out = {}
    for sc in cells[0].scenarios():
        for seed in sorted(cells[0].cells.get((sc, baseline), {})):
            per_run = []
            for c in cells:
                calls = [c.cells.get((sc, a), {}).get(seed) for a in arms]
                if any(x is None for x in calls):
                    break
                base = calls[arms.index(baseline)]
                per_run.append([utility(x, base) for x in calls])
            if len(per_run) == len(runs):
                out[(sc, seed)] = per_run
    if not out:
        sys.exit("label-noise.py: no call is in every run with every arm")
    return arms, out


def best(u):
    """The index of the best utility, the earlier arm on a tie (the menu is least intrusive
    first)."""
    return max(range(len(u)), key=lambda o: (u[o], -o))


def summary(calls):
    """Regret of each arm fixed per run, of choosing on another run (and agreement), and of
    choosing on the mean of the other runs, over `calls` ({call: [[u] per run]})."""
    us = list(calls.values())
    n_runs, n_arms = len(us[0]), len(us[0][0])
    fixed = [[mean([max(u[r]) - u[r][o] for u in us]) for o in range(n_arms)] for r in range(n_runs)]
    pairs = list(itertools.permutations(range(n_runs), 2))
    cross = mean([mean([max(u[b]) - u[b][best(u[a])] for u in us]) for a, b in pairs])
    agree = mean([mean([best(u[a]) == best(u[b]) for u in us]) for a, b in pairs])
    held = None
    if n_runs >= 3:
        held = mean([mean([max(u[k]) - u[k][best([mean([u[r][o] for r in range(n_runs) if r != k])
                                                   for o in range(n_arms)])] for u in us])
                     for k in range(n_runs)])
    avg = [[mean([u[r][o] for r in range(n_runs)]) for o in range(n_arms)] for u in us]
    return fixed, cross, agree, held, avg


def render(runs, paths, baseline="path-arm:none@2000"):
    arms, calls = utilities(runs, baseline)
    drawn = read_json(os.path.join(paths, "family.json"), "label-noise.py")
    check_paths(runs, drawn, paths, "label-noise.py")
    family = {p["name"]: p["family"] for p in drawn.get("paths", [])}
    unknown = sorted({sc for sc, _ in calls if sc not in family})
    if unknown:
        sys.exit(f"label-noise.py: {unknown[0]} is not in {os.path.join(paths, 'family.json')}")
    fixed, cross, agree, held, _ = summary(calls)
    lines = [f"{len(calls)} calls in each of {len(runs)} runs ({', '.join(runs)})\n",
             "| arm | " + " | ".join(f"regret fixed, run {r + 1}" for r in range(len(runs))) + " |",
             "|---|" + "---|" * len(runs)]
    for o, a in enumerate(arms):
        lines.append(f"| {a} | " + " | ".join(f"{fixed[r][o]:.3f}" for r in range(len(runs))) + " |")
    best_fixed = min(mean([fixed[r][o] for r in range(len(runs))]) for o in range(len(arms)))
    lines.append(f"\nEach call's best arm chosen on one run and scored on another: regret {cross:.3f} "
                 f"(the best fixed arm, mean over the runs: {best_fixed:.3f}); the two runs' best arms agree "
                 f"on {100 * agree:.1f} % of the calls."
                 + (f" Chosen on the mean of the other runs: {held:.3f}." if held is not None else "") + "\n")
    lines.append("| family | calls | best fixed arm (regret) | chosen on another run | best arms agree | most often best (runs' mean) |")
    lines.append("|---|---|---|---|---|---|")
    for f in sorted(set(family[sc] for sc, _ in calls)):
        sub = {c: u for c, u in calls.items() if family[c[0]] == f}
        fx, cr, ag, _, avg = summary(sub)
        per_arm = [mean([fx[r][o] for r in range(len(runs))]) for o in range(len(arms))]
        top = min(range(len(arms)), key=lambda o: per_arm[o])
        common = Counter(arms[best(a)] for a in avg).most_common(2)
        lines.append(f"| {f} | {len(sub)} | {arms[top]} ({per_arm[top]:.3f}) | {cr:.3f} | {100 * ag:.0f} % | "
                     + ", ".join(f"{a} ({k})" for a, k in common) + " |")
    return lines


def self_test():
    """Two paths (one per family) with two arms, in two runs: the regrets, the agreement and the
    family rows against figures worked out by hand."""
    import tempfile

    def report(d, values):
        os.makedirs(d)
        cells = []
        for (sc, arm), (freezes, p95) in values.items():
            metrics = {"freezes_per_min": freezes, "frozen_s_per_min": 0.0, "e2e_delay_p95_ms": p95,
                       "video_bitrate_kbps": 1000.0}
            cells.append({"scenario": sc, "policy": arm, "seeds": [7],
                          "metrics": [{"metric": k, "values": [v]} for k, v in metrics.items()]})
        with open(os.path.join(d, "report.json"), "w") as f:
            json.dump({"cells": cells}, f)

    base, other = "path-arm:none@2000", "path-arm:playout@200"
    with tempfile.TemporaryDirectory() as tmp:
        paths = os.path.join(tmp, "paths")
        os.makedirs(paths)
        with open(os.path.join(paths, "family.json"), "w") as f:
            json.dump({"paths": [{"name": "p0", "family": "lossy", "description": "lossy p0"},
                                 {"name": "p1", "family": "calm", "description": "calm p1"}]}, f)
        a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        # p0: `other` is better by 1 freeze in run a and worse by 1 in run b (the best flips);
        # p1: `other` is worse by 0.5 in both runs (the best repeats).
        report(a, {("p0", base): (2.0, 100.0), ("p0", other): (1.0, 100.0),
                   ("p1", base): (0.0, 100.0), ("p1", other): (0.5, 100.0)})
        report(b, {("p0", base): (1.0, 100.0), ("p0", other): (2.0, 100.0),
                   ("p1", base): (0.0, 100.0), ("p1", other): (0.5, 100.0)})
        text = "\n".join(render([a, b], paths))
        assert "2 calls in each of 2 runs" in text, text
        assert f"| {base} | 0.500 | 0.000 |" in text and f"| {other} | 0.250 | 0.750 |" in text, text
        # Choosing on the other run: p0 takes the wrong arm both ways (regret 1), p1 the right one.
        assert "scored on another: regret 0.500 (the best fixed arm, mean over the runs: 0.250); the two runs' " \
            "best arms agree on 50.0 % of the calls." in text, text
        assert f"| lossy | 1 | {base} (0.500) | 1.000 | 0 % |" in text, text
        assert f"| calm | 1 | {base} (0.000) | 0.000 | 100 % | {base} (1) |" in text, text
        with open(os.path.join(b, "run.json"), "w") as f:
            json.dump({"config": {"scenarios": [{"name": "p1", "file": {"description": "another draw's p1"}}]}}, f)
        try:
            render([a, b], paths)
        except SystemExit as e:
            assert "ran another p1 than" in str(e), e
        else:
            raise AssertionError("a run of another draw's paths was read")
        try:
            render([a, b], paths, baseline="path-arm:nothing")
        except SystemExit as e:
            assert "has no path-arm:nothing" in str(e), e
        else:
            raise AssertionError("a baseline no run holds passed")
    print("label-noise.py self-test: ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", metavar="RUN", help="experiment directories of the same path arms")
    ap.add_argument("--paths", required=True, help="the directory `rtc-client paths` wrote (its family.json)")
    ap.add_argument("--baseline", default="path-arm:none@2000", help="the arm each utility is relative to")
    ap.add_argument("--p95-fall-weight", type=float, default=0.0, metavar="WEIGHT",
                    help="what a P95 fall earns in the utility (as scripts/regret.py's flag; default 0)")
    ap.add_argument("--out", help="write the markdown here as well as to stdout")
    a = ap.parse_args()
    if len(a.runs) < 2:
        ap.error("give at least two runs of the same calls")
    if a.p95_fall_weight < 0:
        ap.error("--p95-fall-weight must not be negative")
    regret.W_P95_FALL = a.p95_fall_weight
    emit(render(a.runs, a.paths, a.baseline), a.out)


if __name__ == "__main__":
    main()

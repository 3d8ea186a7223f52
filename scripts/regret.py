#!/usr/bin/env python3
"""The path-aware policy's regret table: each policy of one or more `rtc-client experiment` runs
on the same scenarios and seeds, against the best fixed profile of each scenario.

Usage:
  scripts/regret.py RUN [RUN ...] [--learned POLICY] [--baseline default] [--out FILE]

Every run's report.json is read; a policy is a column wherever its cell has the same seeds as
the baseline's. The utility of a call is the one the path-aware policy's labels use
(policy-train/src/counterfactual.rs), relative to the baseline (libwebrtc's sender) on the same
seed:

  U = -freezes_per_min - frozen_s_per_min - 10 max(0, P95 / P95_base - 1) - 20 max(0, 0.95 - bitrate / bitrate_base)

so a 10 % P95 rise weighs as much as one freeze a minute (the goal allows at most +10 %), a fall
earns nothing (the goal is fewer freezes at no cost in delay), and a bitrate under 95 % of
libwebrtc's (the goal's floor) weighs heavily. For each scenario the best
fixed profile is the non-learned policy with the highest mean utility (the oracle rule: it knows
the scenario). The table gives each policy's regret (best mean utility minus its own), its
freezes a minute and P95 against the best fixed profile's, with paired sign-flip p-values over
the seeds, and the goal checks:

- the learned policy within 5 % of the best fixed profile on freezes and on P95, or not
  significantly worse (p >= 0.05), on every scenario;
- every fixed profile at least 15 % worse than the best on freezes or P95 somewhere.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import paired_p  # noqa: E402  (the test `rtc-client experiment` runs, as the results page uses it)

W_P95 = 10.0
W_BITRATE = 20.0
BITRATE_FLOOR = 0.95


def read_json(path, tool):
    """The JSON at `path`, or an exit naming the tool, the file and what was wrong."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{tool}: cannot read {path}: {e}")


class Cells:
    """(scenario, policy) -> {seed: {metric: value}} over every run given."""

    def __init__(self, runs):
        self.cells = {}
        self.order = []
        for run in runs:
            report = read_json(os.path.join(run, "report.json"), "regret.py")
            for cell in report.get("cells", []):
                key = (cell["scenario"], cell["policy"])
                values = {}
                for i, seed in enumerate(cell["seeds"]):
                    values[seed] = {m["metric"]: m["values"][i] for m in cell["metrics"]}
                if key in self.cells:
                    sys.exit(f"regret.py: {key[1]} on {key[0]} is in two runs")
                self.cells[key] = values
                if key[1] not in self.order:
                    self.order.append(key[1])

    def scenarios(self):
        seen = []
        for sc, _ in self.cells:
            if sc not in seen:
                seen.append(sc)
        return seen


def utility(call, base):
    p95 = call["e2e_delay_p95_ms"] / base["e2e_delay_p95_ms"] if base["e2e_delay_p95_ms"] > 0 else 1.0
    br = call["video_bitrate_kbps"] / base["video_bitrate_kbps"] if base["video_bitrate_kbps"] > 0 else 1.0
    return (-call["freezes_per_min"] - call["frozen_s_per_min"] - W_P95 * max(0.0, p95 - 1.0)
            - W_BITRATE * max(0.0, BITRATE_FLOOR - br))


def emit(lines, out=None):
    """Prints the markdown lines, and writes them to `out` as well when given."""
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if out:
        with open(out, "w") as f:
            f.write(text)


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def pct(a, b):
    return (a - b) / abs(b) * 100.0 if b else (0.0 if a == b else float("inf"))


def fmt_pct(v):
    return "n/a" if v != v or v in (float("inf"), -float("inf")) else f"{v:+.1f} %"


def fmt_p(p):
    return "" if p is None else ("p<0.001" if p < 0.001 else f"p={p:.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="experiment output directories")
    ap.add_argument("--learned", action="append", default=[],
                    help="a policy that is not a fixed profile (repeatable; default: every learned:*)")
    ap.add_argument("--baseline", default="default")
    ap.add_argument("--out", help="write the markdown here as well as to stdout")
    a = ap.parse_args()
    cells = Cells(a.runs)
    learned = set(a.learned) or {p for p in cells.order if p.startswith("learned:")}
    lines = []
    out = lines.append
    worst_gap = {p: 0.0 for p in cells.order if p not in learned}
    goal_learned = True
    for sc in cells.scenarios():
        base = cells.cells.get((sc, a.baseline))
        if base is None:
            sys.exit(f"regret.py: no {a.baseline} on {sc}")
        seeds = sorted(base)
        policies = [p for p in cells.order if (sc, p) in cells.cells and sorted(cells.cells[(sc, p)]) == seeds]
        skipped = [p for p in cells.order if (sc, p) in cells.cells and p not in policies]
        u = {p: [utility(cells.cells[(sc, p)][s], base[s]) for s in seeds] for p in policies}
        fixed = [p for p in policies if p not in learned]
        best = max(fixed, key=lambda p: mean(u[p]))
        out(f"### {sc}\n")
        out(f"{len(seeds)} calls per policy (seeds {seeds[0]}-{seeds[-1]}); best fixed profile: `{best}`"
            + (f"; left out (other seeds): {', '.join(skipped)}" if skipped else "") + "\n")
        out("| policy | utility | regret | freezes/min | vs best | frozen s/min | P95 ms | vs best | bitrate kbit/s |")
        out("|---|---|---|---|---|---|---|---|---|")
        metric = lambda p, m: [cells.cells[(sc, p)][s][m] for s in seeds]
        bf, bp = metric(best, "freezes_per_min"), metric(best, "e2e_delay_p95_ms")
        for p in policies:
            f, p95 = metric(p, "freezes_per_min"), metric(p, "e2e_delay_p95_ms")
            df, dp = pct(mean(f), mean(bf)), pct(mean(p95), mean(bp))
            pf, pp = (None, None) if p == best else (paired_p(f, bf), paired_p(p95, bp))
            name = f"**{p}**" if p == best else (f"_{p}_" if p in learned else p)
            out(f"| {name} | {mean(u[p]):.2f} | {mean(u[best]) - mean(u[p]):.2f} | {mean(f):.2f} | "
                f"{fmt_pct(df)} {fmt_p(pf)} | {mean(metric(p, 'frozen_s_per_min')):.2f} | {mean(p95):.0f} | "
                f"{fmt_pct(dp)} {fmt_p(pp)} | {mean(metric(p, 'video_bitrate_kbps')):.0f} |")
            if p in worst_gap:
                worst_gap[p] = max(worst_gap[p], df if mean(bf) > 0.05 else 0.0, dp)
            if p in learned:
                ok_f = df <= 5.0 or mean(f) - mean(bf) <= 0.05 or (pf is not None and pf >= 0.05)
                ok_p = dp <= 5.0 or (pp is not None and pp >= 0.05)
                if not (ok_f and ok_p):
                    goal_learned = False
                    out(f"\n`{p}` is worse than the best fixed profile here beyond the goal's 5 %"
                        f" (freezes {fmt_pct(df)} {fmt_p(pf)}, P95 {fmt_pct(dp)} {fmt_p(pp)}).")
        out("")
    out("### Goal checks\n")
    if learned:
        out(f"- learned policy within 5 % of each scenario's best fixed profile on freezes and P95 "
            f"(or not significantly worse): **{'met' if goal_learned else 'not met'}**")
    for p, gap in worst_gap.items():
        out(f"- `{p}`: at most {gap:+.1f} % worse than the best somewhere (freezes over 0.05 a minute, or P95)"
            f" — {'at least 15 %: met' if gap >= 15.0 else 'under 15 %'}")
    emit(lines, a.out)


if __name__ == "__main__":
    main()

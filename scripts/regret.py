#!/usr/bin/env python3
"""The path-aware policy's regret table: each policy of one or more `rtc-client experiment` runs
on the same scenarios and seeds, against the best fixed profile of each scenario.

Usage:
  scripts/regret.py RUN [RUN ...] [--learned POLICY] [--baseline default] [--rule POLICY] [--replicates] [--out FILE]
  scripts/regret.py --self-test

Every run's report.json is read; runs that hold the same (scenario, policy) cell over disjoint
seeds are pooled (a seed in two runs is an error), so a second seed set adds calls to the first.
With `--replicates` a seed in several runs is one call replicated under a perturbation that leaves
its link realisation alone (`rtc-client experiment --timing-offset 1`, `-1`, ...): its metrics are
averaged over the replicates before the seeds are paired. A call is a chaotic system: on
lagos-trace moving every predicted instant by 1 ms moves a profile's mean freezes over 90 calls
by up to 4.3 % (docs/experiments/lagos-corner-2026-12-06.md), so a 5 % bound is judged more
surely on the replicates' means than on one realisation each.
A policy is a column wherever its cell has the same seeds as the baseline's. A cell's utility is
the one the path-aware policy's labels use (policy-train/src/counterfactual.rs), relative to the
baseline (libwebrtc's sender) on the same seeds:

  U = -F - Z - 10 max(0, mean(P95 / P95_base) - 1) - 20 max(0, 0.95 - mean(bitrate / bitrate_base))

with F and Z the cell's mean freezes and frozen seconds a minute and each ratio the mean over the
cell's calls of the call's ratio to the baseline on its seed. A 10 % P95 rise weighs as much as
one freeze a minute (the goal allows at most +10 %), a fall earns nothing (the goal is fewer
freezes at no cost in delay; `--p95-fall-weight W` adds W max(0, 1 - mean(P95 / P95_base))), and a bitrate under 95 % of libwebrtc's (the goal's floor) weighs
heavily. The hinges read the mean ratio, as the labels' hinges read the mean over the calls the
policy cannot tell apart: a hinge on each call's ratio would charge a policy for its calls' spread
around the baseline as well as for its mean (`--per-call` gives that reading). For each scenario the best
fixed profile is the policy with the highest mean utility that is no learned card (`learned:*`)
and not named by `--learned` (the oracle rule: it knows
the scenario). The table gives each policy's regret (best mean utility minus its own), its
freezes a minute and P95 against the best fixed profile's, with paired sign-flip p-values over
the seeds, and the goal checks:

- the learned policy within 5 % of the best fixed profile on freezes and on P95, or not
  significantly worse (p >= 0.05), on every scenario;
- every fixed profile significantly (p < 0.05) at least 15 % worse than the best on freezes or
  P95 somewhere (judged only for the profiles that ran on every scenario; each line names where
  its worst gap is, with its p-value, and its worst significant gap, which the verdict reads: a
  gap the seeds cannot tell from noise shows no profile wrong there), and one line for all of
  them;
- the learned policy not significantly worse (p < 0.05 and more than 5 %) than the rule
  (`--rule`, `timed@fixed:200` by default) on freezes or P95 on any scenario, with the
  scenarios where it makes significantly fewer freezes than the rule (p < 0.05) at no
  significantly higher P95 delay.
"""

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import paired_p  # noqa: E402  (the test `rtc-client experiment` runs, as the results page uses it)

W_P95 = 10.0
# What a P95 fall earns per unit of ratio (`--p95-fall-weight`, policy-train's flag of the same
# name); 0: nothing, the goal's reading.
W_P95_FALL = 0.0
W_BITRATE = 20.0
BITRATE_FLOOR = 0.95


def read_json(path, tool):
    """The JSON at `path`, or an exit naming the tool, the file and what was wrong."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{tool}: cannot read {path}: {e}")


def check_paths(runs, family, paths, tool):
    """Exits when a run's path of some name is not the path of that name in `family` (PATHS's
    family.json, read): every draw numbers its paths from path-0000, so a run read with another
    draw's family.json would be read silently wrong. Compares the descriptions the run recorded
    (run.json) with family.json's."""
    described = {p["name"]: p.get("description") for p in family.get("paths", [])}
    for run in runs:
        config = os.path.join(run, "run.json")
        if not os.path.exists(config):
            continue
        for sc in read_json(config, tool).get("config", {}).get("scenarios", []):
            name, ran = sc.get("name"), (sc.get("file") or {}).get("description")
            if name in described and ran is not None and described[name] is not None and ran != described[name]:
                sys.exit(f"{tool}: {run} ran another {name} than {paths} holds "
                         f"({ran!r} against {described[name]!r})")


class Cells:
    """(scenario, policy) -> {seed: {metric: value}} over every run given.

    With `replicates`, a seed that two runs hold for the same cell is a replicate of that call (the
    runs differ in a perturbation that leaves the link realisation alone, such as
    `--timing-offset`): the seed's metrics are the mean over its replicates, and `self.replicates`
    counts them. Without it such a seed is an error, so that a run given twice is not pooled.
    """

    def __init__(self, runs, replicates=False):
        self.cells = {}
        self.order = []
        self.replicates = {}
        seen = set()
        calls = {}
        for run in runs:
            real = os.path.realpath(run)
            if real in seen:
                sys.exit(f"regret.py: {run} is given twice")
            seen.add(real)
            report = read_json(os.path.join(run, "report.json"), "regret.py")
            for cell in report.get("cells", []):
                key = (cell["scenario"], cell["policy"])
                pooled = calls.setdefault(key, {})
                for i, seed in enumerate(cell["seeds"]):
                    if seed in pooled and not replicates:
                        sys.exit(f"regret.py: {key[1]} on {key[0]} has seed {seed} in two runs "
                                 "(--replicates averages runs of the same seeds that differ in a perturbation)")
                    pooled.setdefault(seed, []).append({m["metric"]: m["values"][i] for m in cell["metrics"]})
                if key[1] not in self.order:
                    self.order.append(key[1])
        for key, pooled in calls.items():
            # A metric that only some replicates report is left out of the seed's mean.
            self.cells[key] = {seed: {m: mean([c[m] for c in reps]) for m in set.intersection(*(set(c) for c in reps))}
                               for seed, reps in pooled.items()}
            self.replicates[key] = {seed: len(reps) for seed, reps in pooled.items()}

    def scenarios(self):
        seen = []
        for sc, _ in self.cells:
            if sc not in seen:
                seen.append(sc)
        return seen


def ratios(call, base):
    """The call's P95 and bitrate over the baseline's on the same seed (1 where the baseline's is
    not positive, as policy-train reads it)."""
    p95 = call["e2e_delay_p95_ms"] / base["e2e_delay_p95_ms"] if base["e2e_delay_p95_ms"] > 0 else 1.0
    br = call["video_bitrate_kbps"] / base["video_bitrate_kbps"] if base["video_bitrate_kbps"] > 0 else 1.0
    return p95, br


def utility_of(freezes, frozen, p95_ratio, bitrate_ratio):
    return (-freezes - frozen - W_P95 * max(0.0, p95_ratio - 1.0) + W_P95_FALL * max(0.0, 1.0 - p95_ratio)
            - W_BITRATE * max(0.0, BITRATE_FLOOR - bitrate_ratio))


def utility(call, base):
    """One call's utility, its hinges reading its own ratios."""
    return utility_of(call["freezes_per_min"], call["frozen_s_per_min"], *ratios(call, base))


def group_utility(calls, bases):
    """The utility of a group of calls (each against the baseline call in `bases` at the same
    position): mean freezes and frozen seconds, the hinges reading the mean ratios."""
    r = [ratios(c, b) for c, b in zip(calls, bases)]
    return utility_of(mean([c["freezes_per_min"] for c in calls]), mean([c["frozen_s_per_min"] for c in calls]),
                      mean([x[0] for x in r]), mean([x[1] for x in r]))


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


def seed_ranges(seeds):
    """`9300-9329, 9600-9659`: the sorted seeds as runs of consecutive values."""
    parts = []
    for s in sorted(seeds):
        if parts and s == parts[-1][1] + 1:
            parts[-1][1] = s
        else:
            parts.append([s, s])
    return ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in parts)


def significantly_worse(diff_pct, p, abs_diff=None):
    """More than 5 % worse with p < 0.05 (and, for freezes, by more than 0.05 a minute)."""
    return diff_pct > 5.0 and p is not None and p < 0.05 and (abs_diff is None or abs_diff > 0.05)


def render(runs, learned=(), baseline="default", rule="timed@fixed:200", per_call=False, replicates=False):
    """The regret table's markdown lines over the experiment directories `runs`."""
    cells = Cells(runs, replicates)
    missing = [p for p in learned if p not in cells.order]
    if missing:
        # A card runs under its id (`learned:<sha256 prefix>`), not under the path it was given
        # as; checks of a policy no run holds would pass vacuously.
        sys.exit(f"regret.py: --learned {missing[0]!r} is in no run; the runs' policies: "
                 + ", ".join(cells.order))
    adaptive = {p for p in cells.order if p.startswith("learned:")} | set(learned)
    learned = set(learned) or adaptive
    lines = []
    out = lines.append
    # Per fixed profile: its worst gap to the best and its worst significant one, each as
    # (gap %, scenario, metric, p), and the scenarios it ran on.
    worst_gap = {p: (0.0, None, None, None) for p in cells.order if p not in adaptive}
    worst_significant = {p: (0.0, None, None, None) for p in worst_gap}
    ran_on = {p: 0 for p in worst_gap}
    goal_learned = True
    against_rule = {p: {"worse": [], "better": []} for p in learned}
    rule_seen = False
    for sc in cells.scenarios():
        base = cells.cells.get((sc, baseline))
        if base is None:
            sys.exit(f"regret.py: no {baseline} on {sc}")
        seeds = sorted(base)
        policies = [p for p in cells.order if (sc, p) in cells.cells and sorted(cells.cells[(sc, p)]) == seeds]
        skipped = [p for p in cells.order if (sc, p) in cells.cells and p not in policies]
        if per_call:
            u = {p: mean([utility(cells.cells[(sc, p)][s], base[s]) for s in seeds]) for p in policies}
        else:
            u = {p: group_utility([cells.cells[(sc, p)][s] for s in seeds], [base[s] for s in seeds])
                 for p in policies}
        fixed = [p for p in policies if p not in adaptive]
        best = max(fixed, key=lambda p: u[p])
        out(f"### {sc}\n")
        repeated = []
        for p in policies:
            counts = sorted(set(cells.replicates[(sc, p)][s] for s in seeds))
            if counts[-1] > 1:
                k = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
                repeated.append(f"`{p}` x{k}")
        out(f"{len(seeds)} calls per policy (seeds {seed_ranges(seeds)}); best fixed profile: `{best}`"
            + (f"; each seed the mean of its replicates: {', '.join(repeated)}" if repeated else "")
            + (f"; left out (other seeds): {', '.join(skipped)}" if skipped else "") + "\n")
        out("| policy | utility | regret | freezes/min | vs best | frozen s/min | P95 ms | vs best | bitrate kbit/s |")
        out("|---|---|---|---|---|---|---|---|---|")
        metric = lambda p, m: [cells.cells[(sc, p)][s][m] for s in seeds]
        bf, bp = metric(best, "freezes_per_min"), metric(best, "e2e_delay_p95_ms")
        for p in policies:
            f, p95 = metric(p, "freezes_per_min"), metric(p, "e2e_delay_p95_ms")
            df, dp = pct(mean(f), mean(bf)), pct(mean(p95), mean(bp))
            pf, pp = (None, None) if p == best else (paired_p(f, bf), paired_p(p95, bp))
            name = f"**{p}**" if p == best else (f"_{p}_" if p in adaptive else p)
            out(f"| {name} | {u[p]:.2f} | {u[best] - u[p]:.2f} | {mean(f):.2f} | "
                f"{fmt_pct(df)} {fmt_p(pf)} | {mean(metric(p, 'frozen_s_per_min')):.2f} | {mean(p95):.0f} | "
                f"{fmt_pct(dp)} {fmt_p(pp)} | {mean(metric(p, 'video_bitrate_kbps')):.0f} |")
            if p in worst_gap:
                ran_on[p] += 1
                for gap, what, pv in ((df if mean(bf) > 0.05 else 0.0, "freezes", pf), (dp, "P95", pp)):
                    if gap > worst_gap[p][0]:
                        worst_gap[p] = (gap, sc, what, pv)
                    if pv is not None and pv < 0.05 and gap > worst_significant[p][0]:
                        worst_significant[p] = (gap, sc, what, pv)
            if p in learned:
                ok_f = df <= 5.0 or mean(f) - mean(bf) <= 0.05 or (pf is not None and pf >= 0.05)
                ok_p = dp <= 5.0 or (pp is not None and pp >= 0.05)
                if not (ok_f and ok_p):
                    goal_learned = False
                    out(f"\n`{p}` is worse than the best fixed profile here beyond the goal's 5 %"
                        f" (freezes {fmt_pct(df)} {fmt_p(pf)}, P95 {fmt_pct(dp)} {fmt_p(pp)}).")
        if rule in policies:
            rule_seen = True
            rf, rp = metric(rule, "freezes_per_min"), metric(rule, "e2e_delay_p95_ms")
            for p in policies:
                if p not in learned:
                    continue
                f, p95 = metric(p, "freezes_per_min"), metric(p, "e2e_delay_p95_ms")
                df, dp = pct(mean(f), mean(rf)), pct(mean(p95), mean(rp))
                pf, pp = paired_p(f, rf), paired_p(p95, rp)
                out(f"\n`{p}` against `{rule}`: freezes {fmt_pct(df)} {fmt_p(pf)}, P95 {fmt_pct(dp)} {fmt_p(pp)}.")
                if significantly_worse(df, pf, mean(f) - mean(rf)) or significantly_worse(dp, pp):
                    against_rule[p]["worse"].append(sc)
                if mean(f) < mean(rf) and pf < 0.05 and not significantly_worse(dp, pp):
                    against_rule[p]["better"].append(sc)
        out("")
    out("### Goal checks\n")
    if learned:
        out(f"- learned policy within 5 % of each scenario's best fixed profile on freezes and P95 "
            f"(or not significantly worse): **{'met' if goal_learned else 'not met'}**")
    for p in sorted(against_rule):
        if not rule_seen:
            break
        worse, better = against_rule[p]["worse"], against_rule[p]["better"]
        out(f"- `{p}` not significantly worse than `{rule}` on freezes or P95 anywhere: "
            f"**{'met' if not worse else 'not met (' + ', '.join(worse) + ')'}**; significantly fewer freezes "
            f"at no significantly higher P95 delay on: {', '.join(better) if better else 'none'}")
    n_scenarios = len(cells.scenarios())
    judged, right_everywhere = 0, []
    for p, (gap, sc, what, pv) in worst_gap.items():
        where = f" ({sc} {what} {fmt_p(pv)})" if sc else ""
        sgap, ssc, swhat, _ = worst_significant[p]
        significant = f"; significantly: {sgap:+.1f} % ({ssc} {swhat})" if ssc else "; significantly: nowhere"
        if ran_on[p] < n_scenarios:
            verdict = f"ran on {ran_on[p]} of {n_scenarios} scenarios: not judged"
        else:
            judged += 1
            if ssc and sgap >= 15.0:
                verdict = "at least 15 %: met"
            else:
                verdict = "under 15 %"
                right_everywhere.append(p)
        out(f"- `{p}`: at most {gap:+.1f} % worse than the best somewhere{where}{significant}"
            f" (freezes over 0.05 a minute, or P95) — {verdict}")
    if judged:
        names = ", ".join(f"`{p}`" for p in right_everywhere)
        out(f"- every fixed profile significantly at least 15 % worse than the best somewhere: "
            f"**{'met' if not right_everywhere else 'not met (' + names + ')'}**")
    return lines


def self_test():
    """Pools disjoint seeds, refuses a seed in two runs, and checks the goal lines."""
    def run(root, name, seeds, cells):
        d = os.path.join(root, name)
        os.makedirs(d)
        report = {"cells": [
            {"scenario": sc, "policy": pol, "seeds": seeds,
             "metrics": [{"metric": m, "values": [fn(s) for s in seeds]} for m, fn in metrics.items()]}
            for (sc, pol), metrics in cells.items()]}
        with open(os.path.join(d, "report.json"), "w") as f:
            json.dump(report, f)
        return d

    def metrics(freezes, p95):
        return {"freezes_per_min": lambda s: freezes + 0.01 * (s % 7), "frozen_s_per_min": lambda s: 0.1,
                "e2e_delay_p95_ms": lambda s: p95 + (s % 5), "video_bitrate_kbps": lambda s: 2000.0}

    cells = {("lossy", "default"): metrics(4.0, 300.0), ("lossy", "timed@fixed:200"): metrics(2.0, 300.0),
             ("lossy", "learned:x"): metrics(1.0, 300.0),
             ("calm", "default"): metrics(0.5, 100.0), ("calm", "timed@fixed:200"): metrics(0.5, 100.0),
             ("calm", "learned:x"): metrics(0.5, 150.0),
             ("lossy", "learned:other"): metrics(0.5, 300.0), ("calm", "learned:other"): metrics(0.5, 100.0)}
    with tempfile.TemporaryDirectory() as root:
        a = run(root, "a", list(range(1, 11)), cells)
        b = run(root, "b", list(range(20, 30)), cells)
        text = "\n".join(render([a, b], learned=["learned:x"]))
        assert "best fixed profile: `timed@fixed:200`" in text, "another learned card is no fixed profile"
        assert "`learned:other`:" not in text, "nor has it a fixed profile's goal line"
        assert "20 calls per policy (seeds 1-10, 20-29)" in text, text
        assert "`learned:x` not significantly worse than `timed@fixed:200` on freezes or P95 anywhere: " \
            "**not met (calm)**; significantly fewer freezes at no significantly higher P95 delay on: lossy" in text, text
        assert "best fixed profile on freezes and P95 (or not significantly worse): **not met**" in text, text
        assert "- `default`: at most +98.6 % worse than the best somewhere (lossy freezes p<0.001); " \
            "significantly: +98.6 % (lossy freezes)" in text and text.count("— at least 15 %: met") == 1, text
        assert "- `timed@fixed:200`: at most +0.0 % worse than the best somewhere; significantly: nowhere" in text, text
        assert "- every fixed profile significantly at least 15 % worse than the best somewhere: " \
            "**not met (`timed@fixed:200`)**" in text, text
        noisy = {"freezes_per_min": lambda s: 1.0 + (2.0 if s % 2 else -0.6), "frozen_s_per_min": lambda s: 0.1,
                 "e2e_delay_p95_ms": lambda s: 100.0, "video_bitrate_kbps": lambda s: 2000.0}
        e = run(root, "e", list(range(60, 70)), {("lossy", "default"): metrics(1.0, 100.0),
                                                 ("lossy", "fixed:700"): noisy})
        text = "\n".join(render([e]))
        line = next(x for x in text.split("\n") if x.startswith("- `fixed:700`"))
        assert "at most +64.1 %" in line and "significantly: nowhere" in line and line.endswith("— under 15 %"), line
        partial = dict(cells)
        partial[("lossy", "fixed:500")] = metrics(3.0, 300.0)
        d = run(root, "d", list(range(40, 50)), partial)
        text = "\n".join(render([d], learned=["learned:x"]))
        line = next(x for x in text.split("\n") if x.startswith("- `fixed:500`"))
        assert "(lossy freezes p=0.002); significantly: +49.2 % (lossy freezes)" in line and line.endswith(
            "— ran on 1 of 2 scenarios: not judged"), line
        try:
            render([a, b], learned=["learned:models/path/policy.json"])
        except SystemExit as e:
            assert "is in no run" in str(e) and "learned:x" in str(e), e
        else:
            raise AssertionError("a --learned policy in no run passed its checks")
        c = run(root, "c", [10, 11], cells)
        try:
            render([a, c])
        except SystemExit as e:
            assert "has seed 10 in two runs" in str(e), e
        else:
            raise AssertionError("a seed in two runs was pooled")
        try:
            render([a, a], replicates=True)
        except SystemExit as e:
            assert "is given twice" in str(e), e
        else:
            raise AssertionError("a run given twice was taken for its own replicate")
        shifted = dict(cells)
        shifted[("lossy", "learned:x")] = metrics(3.0, 300.0)
        a2 = run(root, "a2", list(range(1, 11)), shifted)
        text = "\n".join(render([a, a2], learned=["learned:x"], replicates=True))
        assert "10 calls per policy (seeds 1-10); best fixed profile: `timed@fixed:200`; each seed the mean " \
            "of its replicates: `default` x2, `timed@fixed:200` x2, `learned:x` x2" in text, text
        row = next(x for x in text.split("\n") if x.startswith("| _learned:x_"))
        assert row.split(" | ")[3] == "2.03", row  # (1 + 3) / 2 plus the seeds' 0.01 (s % 7), averaged
    assert seed_ranges([3, 1, 2, 7]) == "1-3, 7"
    base = {"freezes_per_min": 1.0, "frozen_s_per_min": 0.0, "e2e_delay_p95_ms": 100.0, "video_bitrate_kbps": 1000.0}
    spread = [dict(base, e2e_delay_p95_ms=80.0), dict(base, e2e_delay_p95_ms=120.0)]
    assert abs(mean([utility(c, base) for c in spread]) - (-1.0 - 1.0)) < 1e-9, "each call's hinge charges the spread"
    assert abs(group_utility(spread, [base, base]) - (-1.0)) < 1e-9, "the mean ratio's does not"
    thin = [dict(base, video_bitrate_kbps=900.0), dict(base, video_bitrate_kbps=900.0)]
    assert abs(group_utility(thin, [base, base]) - (-1.0 - 20.0 * 0.05)) < 1e-9
    global W_P95_FALL
    W_P95_FALL = 1.0
    fast = [dict(base, e2e_delay_p95_ms=80.0)]
    assert abs(group_utility(fast, [base]) - (-1.0 + 0.2)) < 1e-9, "--p95-fall-weight 1: a 20 % fall earns 0.2"
    W_P95_FALL = 0.0
    assert abs(group_utility(fast, [base]) - (-1.0)) < 1e-9, "by default a fall earns nothing"
    print("regret.py self-test: ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="*", help="experiment output directories")
    ap.add_argument("--learned", action="append", default=[],
                    help="the policy the goal checks are for, as the runs name it (a card: "
                         "learned:<id>; repeatable; default: every learned:*); no learned:* policy is "
                         "ever a fixed profile")
    ap.add_argument("--baseline", default="default")
    ap.add_argument("--rule", default="timed@fixed:200",
                    help="the rule the learned policy must not be significantly worse than anywhere")
    ap.add_argument("--per-call", action="store_true",
                    help="read each call's own ratios in the utility's hinges and average the calls' "
                         "utilities (the reading before the labels' hinges read neighbourhood means)")
    ap.add_argument("--p95-fall-weight", type=float, default=0.0, metavar="WEIGHT",
                    help="what a P95 fall earns in the utility, per unit of ratio (as policy-train "
                         "counterfactual's flag; default 0: nothing)")
    ap.add_argument("--replicates", action="store_true",
                    help="runs that hold the same seeds are replicates (e.g. the same calls with "
                         "--timing-offset 1 and -1): each seed's metrics are averaged over its replicates "
                         "before the seeds are paired; without it a seed in two runs is an error")
    ap.add_argument("--out", help="write the markdown here as well as to stdout")
    ap.add_argument("--self-test", action="store_true", help="run the script's own checks and exit")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return
    if not a.runs:
        ap.error("give at least one experiment directory")
    if a.p95_fall_weight < 0:
        ap.error("--p95-fall-weight must not be negative")
    global W_P95_FALL
    W_P95_FALL = a.p95_fall_weight
    emit(render(a.runs, a.learned, a.baseline, a.rule, a.per_call, a.replicates), a.out)


if __name__ == "__main__":
    main()

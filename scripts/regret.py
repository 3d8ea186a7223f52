#!/usr/bin/env python3
"""The path-aware policy's regret table: each policy of one or more `rtc-client experiment` runs
on the same scenarios and seeds, against the best fixed profile of each scenario.

Usage:
  scripts/regret.py RUN [RUN ...] [--learned POLICY] [--baseline default] [--rule POLICY] [--fixed POLICY ...]
                    [--oracle] [--replicates] [--out FILE]
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
the scenario); `--fixed` names the profiles it chooses among (for example the path menu's outputs
as fixed profiles), and the runs' other policies are then left out of the tables but for the
baseline and the rule. The table gives each policy's regret (best mean utility minus its own), its
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

With `--oracle` each scenario also says how close a per-call oracle gets to the learned policy's
two bounds at once: one that knows every call's outcome under every fixed profile and picks one
profile per call. Its references are the fewer freezes and the lower P95 of the best fixed profile
and the rule; of every choice of one profile per call (searched exactly, by the Pareto front of
the two totals) the line gives the one with the smallest larger excess of the two. Where even that
choice is more than 5 % over a reference, no policy that picks one of these profiles per call can
meet both bounds on these calls but by the seeds' noise (significance is not read here).
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


def oracle_approach(outcomes, f_ref, p_ref):
    """The per-call oracle's closest approach to two references at once.

    `outcomes[i][k]` is call i's (freezes a minute, P95 ms) under profile k. Returns (mean
    freezes, mean P95, the profile index chosen for each call) of the choice, among every choice
    of one profile per call, that minimises the larger of the two excesses over the references:
    freezes over `max(f_ref, 1)` and P95 over `p_ref`, so that both are within 0.05 exactly when
    both meet the goal's bounds (P95 within 5 %; freezes within 5 % or 0.05 a minute, whichever
    is larger).

    Exact, by the Pareto front of (total freezes, total P95) over the calls so far: a choice that
    another beats on both totals cannot be the best, whatever the rest of the calls choose. P95
    totals are compared in steps of 0.01 ms, freezes exactly."""
    f_scale, n = max(f_ref, 1.0), len(outcomes)
    # Each entry: (total P95 in 0.01 ms, total freezes, index of its parent in the previous front,
    # profile chosen for this call).
    fronts = [[(0, 0.0, -1, -1)]]
    for o in outcomes:
        grown = sorted(((pp + round(p95 * 100), ff + f, j, k)
                        for j, (pp, ff, _, _) in enumerate(fronts[-1]) for k, (f, p95) in enumerate(o)),
                       key=lambda e: (e[0], e[1]))
        front = []
        for e in grown:
            if not front or e[1] < front[-1][1] - 1e-12:
                front.append(e)
        fronts.append(front)

    def excess(e):
        return max((e[1] / n - f_ref) / f_scale, e[0] / 100 / n / p_ref - 1.0)

    at = min(range(len(fronts[-1])), key=lambda j: excess(fronts[-1][j]))
    last = fronts[-1][at]
    choice = []
    for front in reversed(fronts[1:]):
        _, _, parent, k = front[at]
        choice.append(k)
        at = parent
    choice.reverse()
    return last[1] / n, last[0] / 100 / n, choice


def render(runs, learned=(), baseline="default", rule="timed@fixed:200", per_call=False, replicates=False,
           fixed_only=(), oracle=False):
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
    unknown = [p for p in fixed_only if p not in cells.order]
    if unknown:
        sys.exit(f"regret.py: --fixed {unknown[0]!r} is in no run; the runs' policies: " + ", ".join(cells.order))
    if fixed_only:
        kept = set(fixed_only) | adaptive | {baseline, rule}
        cells.order = [p for p in cells.order if p in kept]
    lines = []
    out = lines.append
    # Per fixed profile: its worst gap to the best and its worst significant one, each as
    # (gap %, scenario, metric, p), and the scenarios it ran on.
    candidates = [p for p in cells.order if p not in adaptive and (not fixed_only or p in fixed_only)]
    worst_gap = {p: (0.0, None, None, None) for p in candidates}
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
        fixed = [p for p in policies if p in candidates]
        if not fixed:
            sys.exit(f"regret.py: no fixed profile ran on {sc}'s seeds")
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
        if oracle:
            refs = [best] + ([rule] if rule in policies and rule != best else [])
            f_src = min(refs, key=lambda r: mean(metric(r, "freezes_per_min")))
            p_src = min(refs, key=lambda r: mean(metric(r, "e2e_delay_p95_ms")))
            f_ref, p_ref = mean(metric(f_src, "freezes_per_min")), mean(metric(p_src, "e2e_delay_p95_ms"))
            outcomes = [[(cells.cells[(sc, q)][s]["freezes_per_min"], cells.cells[(sc, q)][s]["e2e_delay_p95_ms"])
                         for q in fixed] for s in seeds]
            of, op, choice = oracle_approach(outcomes, f_ref, p_ref)
            ok = (of <= 1.05 * f_ref or of - f_ref <= 0.05) and op <= 1.05 * p_ref
            picks = ", ".join(f"`{q}` {choice.count(k)}" for k, q in enumerate(fixed) if choice.count(k))
            out(f"\nPer-call oracle over the {len(fixed)} fixed profiles, against the fewer freezes "
                f"(`{f_src}`'s {f_ref:.2f} a minute) and the lower P95 "
                f"(`{p_src}`'s {p_ref:.0f} ms): at best freezes {fmt_pct(pct(of, f_ref))} "
                f"({of:.2f}), P95 {fmt_pct(pct(op, p_ref))} ({op:.0f} ms), choosing {picks}: "
                + ("both within 5 %." if ok else "no choice of one profile per call has both within 5 %.")
                + "".join(f" `{q}` against the same: freezes {fmt_pct(pct(mean(metric(q, 'freezes_per_min')), f_ref))} "
                          f"({mean(metric(q, 'freezes_per_min')):.2f}), P95 "
                          f"{fmt_pct(pct(mean(metric(q, 'e2e_delay_p95_ms')), p_ref))} "
                          f"({mean(metric(q, 'e2e_delay_p95_ms')):.0f} ms)." for q in policies if q in learned))
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
        flat = lambda f, p95: {"freezes_per_min": lambda s: f(s) if callable(f) else f,
                               "frozen_s_per_min": lambda s: 0.0,
                               "e2e_delay_p95_ms": lambda s: p95(s) if callable(p95) else p95,
                               "video_bitrate_kbps": lambda s: 2000.0}
        g = run(root, "g", [1, 2, 3, 4], {("mixed", "default"): flat(1.0, 200.0),
                                          ("mixed", "fixed:200"): flat(2.0, 100.0),
                                          ("mixed", "fixed:900"): flat(5.0, 400.0)})
        text = "\n".join(render([g], rule="fixed:200", fixed_only=["default"], oracle=True))
        assert "fixed:900" not in text and "best fixed profile: `default`" in text, text
        assert "Per-call oracle over the 1 fixed profiles" in text, "the rule is no candidate unless named"
        text = "\n".join(render([g], rule="fixed:200", fixed_only=["default", "fixed:200"], oracle=True))
        # Two calls under each: (1 + 2) / 2 freezes against default's 1, (200 + 100) / 2 ms against
        # fixed:200's 100; every other mix has a larger excess on one side.
        assert "Per-call oracle over the 2 fixed profiles, against the fewer freezes (`default`'s 1.00 a " \
            "minute) and the lower P95 (`fixed:200`'s 100 ms): at best freezes +50.0 % (1.50), P95 +50.0 % " \
            "(150 ms), choosing `default` 2, `fixed:200` 2: no choice of one profile per call has both within 5 %." in text, text
        h = run(root, "h", [1, 2, 3, 4], {("crossed", "default"): flat(lambda s: 1.0 if s < 3 else 2.0,
                                                                    lambda s: 100.0 if s < 3 else 200.0),
                                          ("crossed", "fixed:200"): flat(lambda s: 2.0 if s < 3 else 1.0,
                                                                      lambda s: 200.0 if s < 3 else 100.0)})
        text = "\n".join(render([h], oracle=True))
        assert "at best freezes -33.3 % (1.00), P95 -33.3 % (100 ms), choosing `default` 2, `fixed:200` 2: " \
            "both within 5 %." in text, text
        try:
            render([g], fixed_only=["fixed:300"])
        except SystemExit as e:
            assert "--fixed 'fixed:300' is in no run" in str(e), e
        else:
            raise AssertionError("a --fixed policy in no run was accepted")
    import itertools
    import random
    rng = random.Random(7)
    for _ in range(20):
        outcomes = [[(rng.choice([0.0, 0.1, 0.3, 1.0, 2.5]), rng.uniform(50.0, 400.0)) for _ in range(3)]
                    for _ in range(6)]
        f_ref, p_ref = rng.uniform(0.1, 2.0), rng.uniform(80.0, 300.0)
        f, p95, choice = oracle_approach(outcomes, f_ref, p_ref)
        gap = lambda ff, pp: max((ff - f_ref) / max(f_ref, 1.0), pp / p_ref - 1.0)
        brute = min(gap(sum(outcomes[i][k][0] for i, k in enumerate(c)) / 6,
                        sum(outcomes[i][k][1] for i, k in enumerate(c)) / 6)
                    for c in itertools.product(range(3), repeat=6))
        assert abs(gap(f, p95) - brute) < 1e-3, (gap(f, p95), brute)
        assert abs(f - sum(outcomes[i][k][0] for i, k in enumerate(choice)) / 6) < 1e-9, "the choice gives its totals"
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
    ap.add_argument("--fixed", action="append", default=[], metavar="POLICY",
                    help="a fixed profile the best of each scenario is chosen among (repeatable; default: "
                         "every policy that is not learned); the runs' other policies but the baseline "
                         "and the rule are left out")
    ap.add_argument("--oracle", action="store_true",
                    help="per scenario, how close a per-call oracle over the fixed profiles gets to the "
                         "fewer freezes and the lower P95 of the best fixed profile and the rule")
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
    emit(render(a.runs, a.learned, a.baseline, a.rule, a.per_call, a.replicates, a.fixed, a.oracle), a.out)


if __name__ == "__main__":
    main()

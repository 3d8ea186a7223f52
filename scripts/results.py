#!/usr/bin/env python3
"""Renders docs/results.md (and the README's results block) from a scripts/results.sh run.

Every figure comes from the run directory: `rtc-client experiment`'s report.json (means, 95 %
bootstrap CIs, the change against `default` in the same run and its paired sign-flip p), each
call's telemetry (actions applied, profiles chosen, pacer and sender counters), `rtc-client
browser`'s summary.json (Chromium's getStats()), and the run's meta.tsv / commands.tsv (commit,
machine, date, commands, wall times). Nothing here knows a result in advance.

Where a row has no `default` in its own run (the constant playout floors, which change every
policy of their run), it is compared with `default` of the ablation's main run on the same
seeds, with the same paired sign-flip test computed here (exact up to 16 calls, else 10 000
seeded random sign patterns); the page says which rows those are.

    scripts/results.py RUN_DIR [--page FILE] [--docs docs/results.md] [--readme README.md]
    scripts/results.py --self-test
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import sys
import tempfile
from collections import Counter

README_BEGIN = "<!-- results:begin -->"
README_END = "<!-- results:end -->"

# The project's goal (README, docs/experiments/ablation-2026-12-02.md): against `default`, at
# least half the freezes on both LEO paths with at least 95 % of the bitrate and at most 10 %
# more P95 delay, and no significant harm anywhere else.
GOAL_SCENARIOS = ("starlink", "lagos-trace")
GOAL_FREEZE_CUT_PCT = -50.0
GOAL_MIN_BITRATE_PCT = -5.0
GOAL_MAX_P95_PCT = 10.0

# (report.json key, column title, decimals)
QOE = [
    ("freezes_per_min", "freezes/min", 2),
    ("frozen_s_per_min", "s frozen/min", 2),
    ("stalls_per_min", "stalls/min", 2),
    ("e2e_delay_p50_ms", "P50 delay ms", 0),
    ("e2e_delay_p95_ms", "P95 delay ms", 0),
    ("video_bitrate_kbps", "video kbit/s", 0),
    ("fec_share_pct", "FEC share %", 1),
]

GOAL_POLICIES = [
    ("default", "`default`: libwebrtc's fixed 2000-ms queue limit with its adaptive FEC"),
    ("timed@fixed:200", "`timed@fixed:200`: a 200-ms limit with every handover-timed action (pacer hold, "
     "estimator guard, FEC boost, playout raise) at the forecast's instants"),
    ("timed:hold+guard+boost@fixed:200", "`timed:hold+guard+boost@fixed:200`: the same without the playout raise"),
    ("timed:playout+discardable@fixed:200", "`timed:playout+discardable@fixed:200`: a 200-ms limit with the playout "
     "raise and discardable frames only, the best profile on the tuning seeds 9500-9529 "
     "(docs/experiments/raise-cap-2026-12-03.md; its raise cap and discardable window as retuned "
     "in docs/experiments/raise-cap-2026-12-05.md, both windows reaching back before the instants "
     "where the path loses there: the lead, docs/experiments/lead-2026-12-05.md)"),
    ("timed:playout300+discardable.toml@fixed:200", "`timed:playout300+discardable.toml@fixed:200`: the same "
     "with the raise capped at 300 ms instead of 500 (traces/actions/playout300+discardable.toml; "
     "docs/experiments/receiver-gate-2026-12-05.md, section 6)"),
    ("timed:playout300-follow500+discardable.toml@fixed:200", "`timed:playout300-follow500+discardable.toml@fixed:200`: "
     "the same with the cap following the path to 500 ms once two playout windows of the call had a frame "
     "that completed too late for the 300-ms raise, by transport feedback "
     "(traces/actions/playout300-follow500+discardable.toml, the shipped path card's "
     "output 4 from a call's first second; "
     "docs/experiments/raise-follow-2026-12-05.md)"),
    ("timed:playout300-follow500+discardable+floor100-weighed.toml@fixed:200",
     "`timed:playout300-follow500+discardable+floor100-weighed.toml@fixed:200`: the same with a 100-ms "
     "playout floor for every frame while the sender's replay of the receiver's playout, from transport "
     "feedback, says that over the last minute it spared more freezes than it cost in P95 delay "
     "(the weighed floor; docs/experiments/weighed-floor-2026-12-06.md)"),
    ("timed:playout300-follow500+discardable+floor100-weighed+phase100.toml@fixed:200",
     "`timed:playout300-follow500+discardable+floor100-weighed+phase100.toml@fixed:200`: the same with "
     "the phase raise: where transport feedback shows, over eight slots, a half-second of the slot that "
     "loses away from the predicted instants, its frames get one repair round of raise (at most 100 ms) "
     "and are discardable (the shipped path menu's output 4; docs/experiments/mmsys24-2026-12-06.md, "
     "section 6)"),
    ("timed:playout300-follow500+discardable+floor100-weighed+phase100+gate-open.toml@fixed:200",
     "`timed:playout300-follow500+discardable+floor100-weighed+phase100+gate-open.toml@fixed:200`: the same "
     "with the receiver gate open until 50 boundary packets have been reported, so that a call's first "
     "boundaries get the raise and only evidence of boundaries that lose nothing closes the gate "
     "(docs/experiments/gate-start-2026-12-06.md)"),
    ("timed:playout300-follow500+discardable+floor100-weighed+phase100+gate-open.toml@gated:200",
     "`timed:playout300-follow500+discardable+floor100-weighed+phase100+gate-open.toml@gated:200`: the same "
     "with the 200-ms limit only in intervals whose forecast holds a handover and the paper's 500 ms in "
     "the others, so that a path without handovers keeps its queue in the pacer instead of draining it "
     "into a bottleneck that cannot take it (docs/experiments/gated-limit-2026-12-07.md)"),
]
CARDS = [
    ("models/policy.json", "the paper's queue-limit model"),
    ("models/joint/policy.json", "the joint model (limit + action profile)"),
    ("models/path/policy.json", "the path-aware policy (one limit and action profile per call, "
     "chosen after a 60-s measuring window)"),
]
SECTION_TITLES = {
    "goal": "The goal table",
    "ablation": "Ablation",
    "models": "The shipped models on held-out seeds",
    "fidelity": "Sender fidelity",
    "browser": "Against a browser",
}


class RenderError(Exception):
    pass


# --------------------------------------------------------------------------------------------
# Inputs


def read_tsv(path, columns):
    rows = []
    try:
        with open(path) as fh:
            for n, line in enumerate(fh, 1):
                line = line.rstrip("\n")
                if not line:
                    continue
                parts = line.split("\t")
                if len(parts) != columns:
                    raise RenderError(f"{path}:{n}: expected {columns} tab-separated fields, got {len(parts)}")
                rows.append(parts)
    except OSError as e:
        raise RenderError(f"cannot read {path}: {e}")
    return rows


class Run:
    """One `rtc-client experiment` output directory."""

    def __init__(self, path):
        self.path = path
        try:
            with open(os.path.join(path, "report.json")) as fh:
                self.report = json.load(fh)
        except (OSError, ValueError) as e:
            raise RenderError(f"{path}: no readable report.json ({e})")
        if self.report.get("schema") != "leopace.experiment.v1":
            raise RenderError(f"{path}/report.json: schema {self.report.get('schema')!r}, expected leopace.experiment.v1")
        self.plan = self.report["plan"]
        self.cells = {(c["scenario"], c["policy"]): c for c in self.report["cells"]}

    def policies(self):
        return list(self.plan["policies"])

    def scenarios(self):
        return list(self.plan["scenarios"])

    def has(self, scenario, policy):
        return (scenario, policy) in self.cells

    def cell(self, scenario, policy):
        try:
            return self.cells[(scenario, policy)]
        except KeyError:
            raise RenderError(f"{self.path}: no cell {scenario}/{policy} in report.json")

    def metric(self, scenario, policy, key):
        for m in self.cell(scenario, policy)["metrics"]:
            if m["metric"] == key:
                return m
        raise RenderError(f"{self.path}: {scenario}/{policy} has no metric {key}")

    def telemetry_dir(self, scenario, policy):
        # experiment files a policy under its name with ':', '@' and '+' as '-'.
        d = os.path.join(self.path, "telemetry", scenario, re.sub(r"[:@+]", "-", policy))
        return d if os.path.isdir(d) else None

    def call_records(self, scenario, policy):
        """Per call (seed order), the telemetry lines."""
        d = self.telemetry_dir(scenario, policy)
        if d is None:
            raise RenderError(f"{self.path}: no telemetry for {scenario}/{policy}")
        calls = []
        for seed in self.cell(scenario, policy)["seeds"]:
            f = os.path.join(d, f"seed-{seed}.jsonl")
            try:
                with open(f) as fh:
                    calls.append([json.loads(l) for l in fh if l.strip()])
            except (OSError, ValueError) as e:
                raise RenderError(f"cannot read {f}: {e}")
        return calls


def load_run(out, name):
    path = os.path.join(out, name)
    return Run(path) if os.path.isfile(os.path.join(path, "report.json")) else None


# --------------------------------------------------------------------------------------------
# Statistics (only where a run has no baseline of its own; the method is experiment's)


def paired_p(treatment, control, seed=1):
    if not treatment or len(treatment) != len(control):
        return None
    diffs = [t - c for t, c in zip(treatment, control)]
    observed = abs(sum(diffs))
    threshold = observed - 1e-9 * max(observed, 1.0)
    n = len(diffs)
    if n <= 16:
        hits = 0
        for pattern in range(1 << n):
            s = sum(-d if pattern >> i & 1 else d for i, d in enumerate(diffs))
            hits += abs(s) >= threshold
        return hits / (1 << n)
    rng = random.Random(seed)
    draws = 10_000
    hits = sum(abs(sum(-d if rng.random() < 0.5 else d for d in diffs)) >= threshold for _ in range(draws))
    return (1 + hits) / (1 + draws)


def bootstrap(values, n=10_000, seed=1):
    rng = random.Random(seed)
    k = len(values)
    means = sorted(sum(rng.choice(values) for _ in range(k)) / k for _ in range(n))

    def q(p):
        pos = p * (n - 1)
        lo, hi = int(pos), min(int(pos) + 1, n - 1)
        return means[lo] + (means[hi] - means[lo]) * (pos - lo)

    return sum(values) / k, q(0.025), q(0.975)


def change_pct(value, reference):
    if reference == 0:
        return None
    return (value - reference) / abs(reference) * 100.0


# --------------------------------------------------------------------------------------------
# Formatting


def fmt_p(p):
    if p is None:
        return ""
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def num(v, d):
    if v is None:
        return "–"
    return f"{v:.{d}f}"


def fmt_change(change, significant):
    if change is None:
        return "n/a"
    star = "*" if significant else ""
    text = f"{change:+.1f} %{star}"
    return text.replace("+0.0 %", "0.0 %").replace("-0.0 %", "0.0 %")


class Compared:
    """One metric of a row: its own summary and its comparison with a reference."""

    def __init__(self, mean, lo, hi, change, p, reference):
        self.mean, self.lo, self.hi, self.change, self.p = mean, lo, hi, change, p
        self.reference = reference

    def worse(self, higher_is_better=False):
        """Significantly worse than the reference (also when the reference is 0)."""
        if not self.significant or self.reference is None:
            return False
        return self.mean < self.reference if higher_is_better else self.mean > self.reference

    @property
    def significant(self):
        return self.p is not None and self.p < 0.05


def compare(run, scenario, policy, key, ref=None):
    """The metric of (run, scenario, policy); against `default` of the same run, or of `ref`
    (a (Run, scenario, policy) triple on the same seeds) when given."""
    m = run.metric(scenario, policy, key)
    if ref is None:
        base = run.metric(scenario, "default", key)["mean"] if run.has(scenario, "default") else None
        return Compared(m["mean"], m["ci_low"], m["ci_high"], m["change_vs_default_pct"], m["p_value"], base)
    rrun, rsc, rpol = ref
    r = rrun.metric(rsc, rpol, key)
    if run.cell(scenario, policy)["seeds"] != rrun.cell(rsc, rpol)["seeds"]:
        raise RenderError(f"{run.path} {scenario}/{policy} and its reference {rrun.path} ran different seeds")
    return Compared(m["mean"], m["ci_low"], m["ci_high"], change_pct(m["mean"], r["mean"]),
                    paired_p(m["values"], r["values"]), r["mean"])


def qoe_cells(run, scenario, policy, baseline=False, ref=None):
    cols = []
    for key, _, d in QOE:
        c = compare(run, scenario, policy, key, ref)
        if key == "freezes_per_min":
            text = f"{num(c.mean, d)} [{num(c.lo, d)}, {num(c.hi, d)}]"
            if not baseline:
                text += f" {fmt_change(c.change, c.significant)} ({fmt_p(c.p)})"
        else:
            text = num(c.mean, d)
            if not baseline:
                text += f" ({fmt_change(c.change, c.significant)})"
        cols.append(text)
    return cols


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def qoe_head(first):
    return first + [t for _, t, _ in QOE]


# --------------------------------------------------------------------------------------------
# Telemetry summaries


def actions_per_call(run, scenario, policy):
    calls = run.call_records(scenario, policy)
    total = Counter()
    profiles = Counter()
    for call in calls:
        for r in call:
            for k, v in (r.get("actions") or {}).items():
                if isinstance(v, dict) and v.get("applied"):
                    total[k] += v["applied"]
            if r.get("profile"):
                profiles[(r.get("action_ms"), r["profile"])] += 1
    n = max(len(calls), 1)
    acts = ", ".join(f"{k} {v / n:.0f}" for k, v in sorted(total.items()))
    return acts, profiles


# --------------------------------------------------------------------------------------------
# Sections


class Page:
    def __init__(self, out):
        self.out = out
        self.meta = dict(read_tsv(os.path.join(out, "meta.tsv"), 2))
        for k in ("mode", "commit", "cores", "cpu", "started", "calls", "duration", "seed", "sections", "total_s"):
            if k not in self.meta:
                raise RenderError(f"{out}/meta.tsv has no {k}")
        self.commands = read_tsv(os.path.join(out, "commands.tsv"), 3)
        self.sections = [s for s in self.meta["sections"].split(",") if s]
        self.goal = load_run(out, "goal")
        self.legend = (
            "Each cell: the mean over the calls; freezes/min also its 95 % bootstrap CI, the change "
            "against `default` and the paired sign-flip permutation p on the same seeds; other "
            "columns the change against `default`. `*`: p < 0.05."
        )

    def section_wall(self, section):
        return sum(float(s) for sec, s, _ in self.commands if sec == section)

    def not_run(self, section):
        return f"Not run: `{section}` was left out of `--sections`."

    # -- 1
    def goal_policies(self, run):
        """The goal run's policies with their labels, the learned ones named after their card."""
        labels = dict(GOAL_POLICIES)
        cards = card_ids()
        out = []
        for p in run.policies():
            if p in labels:
                out.append((p, labels[p]))
            elif p.startswith("learned:") and p[len("learned:"):] in cards:
                path, what = cards[p[len("learned:"):]]
                out.append((p, f"`{p}`: {what} ({path})"))
            else:
                out.append((p, p))
        return out

    def goal_table(self):
        run = self.goal
        if run is None:
            return None
        rows = []
        for sc in run.scenarios():
            for p, _ in self.goal_policies(run):
                rows.append([sc if p == "default" else "", f"`{p}`"] + qoe_cells(run, sc, p, baseline=p == "default"))
        return table(qoe_head(["scenario", "policy"]), rows)

    def goal_check(self):
        run = self.goal
        rows = []
        for p, _ in self.goal_policies(run):
            if p == "default":
                continue
            row = [f"`{p}`"]
            for sc in run.scenarios():
                f = compare(run, sc, p, "freezes_per_min")
                b = compare(run, sc, p, "video_bitrate_kbps")
                d = compare(run, sc, p, "e2e_delay_p95_ms")
                if sc in GOAL_SCENARIOS:
                    ok_f = f.change is not None and f.change <= GOAL_FREEZE_CUT_PCT and f.significant
                    ok_b = b.change is None or b.change >= GOAL_MIN_BITRATE_PCT
                    ok_d = d.change is None or d.change <= GOAL_MAX_P95_PCT
                    verdict = "**met**" if ok_f and ok_b and ok_d else "not met"
                    row.append(
                        f"{verdict}: freezes {fmt_change(f.change, f.significant)}, "
                        f"bitrate {fmt_change(b.change, b.significant)}, P95 {fmt_change(d.change, d.significant)}"
                    )
                else:
                    harms = []
                    # A difference that rounds away at the table's precision is not harm: calls of
                    # equal freezes can differ in their last microseconds of length.
                    if f.worse() and f.mean - f.reference >= 0.005:
                        harms.append(f"freezes {f.reference:.2f} -> {f.mean:.2f}/min ({fmt_change(f.change, True)})")
                    if b.worse(higher_is_better=True) and (b.change is None or b.change <= -0.05):
                        harms.append(f"bitrate {fmt_change(b.change, True)}")
                    if d.worse() and (d.change is None or d.change > GOAL_MAX_P95_PCT):
                        harms.append(f"P95 {fmt_change(d.change, True)}")
                    row.append("harm: " + ", ".join(harms) if harms else f"no harm (freezes {fmt_change(f.change, f.significant)})")
            rows.append(row)
        return table(["policy"] + run.scenarios(), rows)

    def render_goal(self):
        lines = ["## 1. The goal table", ""]
        if self.goal is None:
            return lines + [self.not_run("goal"), ""]
        run = self.goal
        plan = run.plan
        shipped = sorted(os.path.basename(f)[:-len(".toml")] for f in glob.glob("traces/scenarios/*.toml"))
        which = ("Every shipped scenario (`traces/scenarios/`)" if sorted(run.scenarios()) == shipped
                 else f"{len(run.scenarios())} of the {len(shipped)} shipped scenarios")
        lines += [
            f"{which}, {plan['calls']} calls of "
            f"{fmt_duration(plan['duration_s'])} per cell on seeds {plan['seed_base']}-"
            f"{plan['seed_base'] + plan['calls'] - 1} (the same seeds for every policy of a "
            f"scenario), forecast `{plan['handover']}`, decision interval {plan['interval_s']:.0f} s. "
            "The policies:",
            "",
        ]
        lines += [f"- {label}" for _, label in self.goal_policies(run)]
        lines += ["", self.legend, "", self.goal_table(), ""]
        lines += [
            "### Against the goal",
            "",
            f"The goal: on {' and '.join(GOAL_SCENARIOS)}, at least {-GOAL_FREEZE_CUT_PCT:.0f} % fewer "
            f"freezes than `default` (significant), with at least {100 + GOAL_MIN_BITRATE_PCT:.0f} % of its "
            f"bitrate and at most {GOAL_MAX_P95_PCT:.0f} % more P95 delay; elsewhere no significant harm "
            f"(significantly more freezes, by at least 0.01/min; less bitrate, by at least 0.1 %; or "
            f"P95 delay more than {GOAL_MAX_P95_PCT:.0f} % higher).",
            "",
            self.goal_check(),
            "",
        ]
        return lines

    # -- 2
    def render_ablation(self):
        lines = ["## 2. Ablation", ""]
        main = load_run(self.out, "ablation-actions")
        if main is None:
            return lines + [self.not_run("ablation"), ""]
        plan = main.plan
        lines += [
            f"{', '.join(main.scenarios())}; {plan['calls']} calls of {fmt_duration(plan['duration_s'])} "
            f"per cell, seeds {plan['seed_base']}-{plan['seed_base'] + plan['calls'] - 1}, calibrated "
            "forecast unless the row says otherwise. What each row asks:",
            "",
            "- each action alone over the 200-ms limit, and all four together (`timed@fixed:200`); "
            "`fixed:200` is the limit without actions;",
            "- the same without the playout raise (from the goal run, same seeds);",
            "- constant receiver playout floors under `default`: they buy freezes with delay on "
            "every frame, the frontier the timed raise has to beat. `--playout-floor` changes every "
            "policy of its run, so these rows are compared (†) with `default` of the actions run on "
            "the same seeds, with the same paired test computed by scripts/results.py;",
            "- the receiver's own raise (`--receiver-raise`: the receiver raises its own playout "
            "delay around its forecast's handovers, whatever the sender does), under `default` and "
            "under the best timed profile; compared (†) the same way;",
            "- the forecast's instants 50 ms early, 50 ms late, or jittered by up to +-50 ms per "
            "instant, as a host clock's error would move them;",
            "- the forecast-blind control (`--handover blind`): the same actions at random instants, "
            "so a gain the forecast's timing does not explain would show here.",
            "",
            self.legend + " The last column counts the actions applied per call, from telemetry.",
            "",
        ]
        runs = {
            "floor-100": load_run(self.out, "ablation-floor-100"),
            "floor-200": load_run(self.out, "ablation-floor-200"),
            "floor-300": load_run(self.out, "ablation-floor-300"),
            "receiver-raise": load_run(self.out, "ablation-receiver-raise"),
            "early50": load_run(self.out, "ablation-early50"),
            "late50": load_run(self.out, "ablation-late50"),
            "jitter50": load_run(self.out, "ablation-jitter50"),
            "blind": load_run(self.out, "ablation-blind"),
        }
        for sc in main.scenarios():
            rows = []

            def add(label, run, policy, ref=None):
                acts, _ = actions_per_call(run, sc, policy)
                rows.append([label] + qoe_cells(run, sc, policy, baseline=False, ref=ref) + [acts])

            acts, _ = actions_per_call(main, sc, "default")
            rows.append(["`default`"] + qoe_cells(main, sc, "default", baseline=True) + [acts])
            for p in main.policies():
                if p != "default":
                    add(f"`{p}`", main, p)
            noraise = "timed:hold+guard+boost@fixed:200"
            if self.goal is not None and self.goal.has(sc, noraise):
                if self.goal.cell(sc, noraise)["seeds"] == main.cell(sc, "default")["seeds"]:
                    add(f"`{noraise}` (goal run)", self.goal, noraise)
            for floor in ("100", "200", "300"):
                r = runs[f"floor-{floor}"]
                if r is not None and r.has(sc, "default"):
                    add(f"`default` + playout floor {floor} ms †", r, "default", ref=(main, sc, "default"))
            r = runs["receiver-raise"]
            if r is not None:
                for p in ("default", "timed:playout+discardable@fixed:200"):
                    if r.has(sc, p):
                        add(f"`{p}` + receiver raise †", r, p, ref=(main, sc, "default"))
            for key, what in (("early50", "forecast 50 ms early"), ("late50", "forecast 50 ms late"), ("jitter50", "forecast jitter +-50 ms")):
                r = runs[key]
                if r is not None and r.has(sc, "timed@fixed:200"):
                    add(f"`timed@fixed:200`, {what}", r, "timed@fixed:200")
            r = runs["blind"]
            if r is not None and r.has(sc, "timed@fixed:200"):
                add("`timed@fixed:200`, forecast-blind (`--handover blind`)", r, "timed@fixed:200")
            lines += [f"**{sc}**", "", table(qoe_head(["policy"]) + ["actions per call"], rows), ""]
        missing = [k for k, r in runs.items() if r is None]
        if missing:
            lines += [f"Runs missing from this directory, so their rows are absent: {', '.join(missing)}.", ""]
        return lines

    # -- 3
    def render_models(self):
        lines = ["## 3. The shipped models on held-out seeds", ""]
        oracle = load_run(self.out, "models-oracle")
        mirror = load_run(self.out, "models-mirror")
        calibrated = self.goal if self.goal is not None else load_run(self.out, "models-calibrated")
        if oracle is None and mirror is None:
            return lines + [self.not_run("models"), ""]
        runs = [(r, f) for r, f in ((calibrated, "calibrated"), (oracle, "oracle"), (mirror, "mirror")) if r is not None]
        cards = card_ids()
        rows = []
        used = []  # (run, forecast, policy)
        for cid, (path, what) in cards.items():
            card = load_card(path)
            train = training_seeds(card)
            train_sc = sorted({sc for sc, _ in train})
            seeds = sorted({s for _, s in train})
            evaluated = []
            for run, forecast in runs:
                p = f"learned:{cid}"
                if p not in run.policies():
                    continue
                eval_seeds = set(run.plan["seed_base"] + i for i in range(run.plan["calls"]))
                overlap = eval_seeds & {s for _, s in train}
                if overlap:
                    raise RenderError(
                        f"{run.path}: {path} is evaluated on seeds {min(overlap)}.. that it was trained on; "
                        "choose --seed outside its training seeds"
                    )
                evaluated.append(forecast)
                used.append((run, forecast, p, path))
            held = sorted(set(calibrated.scenarios() if calibrated else []) - set(train_sc))
            rows.append([
                f"`learned:{cid}` ({path}): {what}",
                (f"{len(train)} calls, seeds {seeds[0]}-{seeds[-1]}, on "
                 + (', '.join(train_sc) if len(train_sc) <= 8 else f"{len(train_sc)} training paths (rtc-client paths)"))
                if seeds else "no logs named",
                ", ".join(evaluated) or "not run",
                ", ".join(held) or "none",
            ])
        lines += [
            "Each card lists the telemetry it was trained on; every evaluation seed here is checked "
            "to be outside those (the page is refused otherwise). Scenarios the model never saw in "
            "training are held out entirely.",
            "",
            table(["model", "trained on", "evaluated here (forecast)", "scenarios held out"], rows),
            "",
        ]
        head = ["scenario", "forecast", "model", "`default` freezes/min [CI]", "freezes/min (vs default)", "video kbit/s (vs default)", "P95 delay ms (vs default)", "what it chose (intervals: limit + profile)"]
        trows = []
        for run, forecast, p, path in used:
            for sc in run.scenarios():
                d = compare(run, sc, "default", "freezes_per_min")
                f = compare(run, sc, p, "freezes_per_min")
                b = compare(run, sc, p, "video_bitrate_kbps")
                q = compare(run, sc, p, "e2e_delay_p95_ms")
                _, profiles = actions_per_call(run, sc, p)
                chose = "; ".join(f"{ms} ms + {pr}: {n}" for (ms, pr), n in profiles.most_common(3))
                if not profiles:
                    limits = Counter()
                    for call in run.call_records(sc, p):
                        for r in call:
                            if "action_ms" in r:
                                limits[r["action_ms"]] += 1
                    chose = "; ".join(f"{ms} ms: {n}" for ms, n in sorted(limits.items()))
                trows.append([
                    sc, forecast, f"`{p}`",
                    f"{d.mean:.2f} [{d.lo:.2f}, {d.hi:.2f}]",
                    f"{f.mean:.2f} {fmt_change(f.change, f.significant)} ({fmt_p(f.p)})",
                    f"{b.mean:.0f} ({fmt_change(b.change, b.significant)})",
                    f"{q.mean:.0f} ({fmt_change(q.change, q.significant)})",
                    chose,
                ])
        lines += [
            "The calibrated rows are the goal run's cells (the forecast both models run with in "
            "the goal table); the paper's model also runs under the oracle forecast its training "
            "data had and under the paper's own mirror predictor. Against `default` of the same run "
            "and seeds; `*`: p < 0.05.",
            "",
            table(head, trows),
            "",
        ]
        return lines

    # -- 4
    def render_fidelity(self):
        lines = ["## 4. Sender fidelity", ""]
        base = os.path.join(self.out, "fidelity")
        names = sorted(os.listdir(base)) if os.path.isdir(base) else []
        if not names:
            return lines + [self.not_run("fidelity"), ""]
        lines += [
            "What the congestion window (`off`, libwebrtc's `pushback`, AlphaRTC's pacer-side "
            "`pacer`) and modern libwebrtc's key-frame flush do to the queue limit's effect, as "
            "docs/experiments/sender-fidelity-2026-11-30.md first measured it: every combination "
            "over the same seeds, on the LEO scenarios and on a call with one 2-s outage on a clean "
            "3-Mbit/s link (docs/experiments/sender-fidelity-outage.toml), each table with its calls. "
            "QoE columns: report.json, "
            "mean [95 % bootstrap CI]. Pacer and sender columns: per call from telemetry (mean queue "
            "and window duration-weighted, max queue the largest, drain boost, frames dropped and "
            "packets flushed summed), then the mean over calls with a 95 % bootstrap CI; min "
            "pushback ratio: the mean of each call's smallest (the smallest of all in brackets).",
            "",
        ]
        runs = {}
        for n in names:
            m = re.fullmatch(r"(leo|outage)-(off|pushback|pacer)-(off|on)", n)
            if not m:
                continue
            runs[(m.group(1), m.group(2), m.group(3))] = Run(os.path.join(base, n))
        scenarios = []
        for (kind, _, _), run in sorted(runs.items()):
            for sc in run.scenarios():
                if (kind, sc) not in scenarios:
                    scenarios.append((kind, sc))
        head = ["cwnd", "flush", "limit ms", "mean queue ms", "max queue ms", "drain boost ms", "loss %",
                "freezes/min", "P95 delay ms", "video kbit/s", "frames dropped", "pkts flushed", "window kB",
                "min pushback ratio"]
        for kind, sc in scenarios:
            rows = []
            for cwnd in ("off", "pushback", "pacer"):
                for flush in ("off", "on"):
                    run = runs.get((kind, cwnd, flush))
                    if run is None:
                        continue
                    for pol in run.policies():
                        if not run.has(sc, pol):
                            continue
                        m = {k: run.metric(sc, pol, k) for k in ("packet_loss_pct", "freezes_per_min", "e2e_delay_p95_ms", "video_bitrate_kbps")}
                        q = lambda k, d: f"{m[k]['mean']:.{d}f} [{m[k]['ci_low']:.{d}f}, {m[k]['ci_high']:.{d}f}]"
                        calls = [fidelity_call(c) for c in run.call_records(sc, pol)]
                        b = lambda k: "{:.0f} [{:.0f}, {:.0f}]".format(*bootstrap([c[k] for c in calls]))
                        wins = [c["win"] for c in calls if c["win"] is not None]
                        win = b("win") if len(wins) == len(calls) else ("–" if not wins else "partial")
                        ratios = [c["ratio"] for c in calls if c["ratio"] is not None]
                        ratio = f"{sum(ratios) / len(ratios):.2f} (min {min(ratios):.2f})" if ratios else "–"
                        rows.append([cwnd, flush, pol.split(":")[1], b("mq"), b("xq"), b("db"), q("packet_loss_pct", 2),
                                     q("freezes_per_min", 2), q("e2e_delay_p95_ms", 0), q("video_bitrate_kbps", 0),
                                     b("dropped"), b("flushed"), win, ratio])
            some = next(r for (k, _, _), r in runs.items() if k == kind)
            lines += [
                f"**{sc}** ({some.plan['calls']} calls of {fmt_duration(some.plan['duration_s'])}, seeds "
                f"{some.plan['seed_base']}-{some.plan['seed_base'] + some.plan['calls'] - 1})",
                "",
                table(head, rows),
                "",
            ]
        return lines

    # -- 5
    def render_browser(self):
        lines = ["## 5. Against a browser", ""]
        skipped = self.meta.get("browser_skipped", "")
        base = os.path.join(self.out, "browser")
        if "browser" not in self.sections:
            return lines + [self.not_run("browser"), ""]
        if skipped or not os.path.isdir(base):
            return lines + [f"Not run: {skipped or 'no browser runs in this directory'}.", ""]
        calls = {}
        for f in sorted(glob.glob(os.path.join(base, "*", "seed-*", "summary.json"))):
            policy_dir = os.path.basename(os.path.dirname(os.path.dirname(f)))
            seed = int(os.path.basename(os.path.dirname(f))[len("seed-"):])
            try:
                with open(f) as fh:
                    calls.setdefault(policy_dir, {})[seed] = browser_call(json.load(fh), f)
            except (OSError, ValueError) as e:
                raise RenderError(f"cannot read {f}: {e}")
        if not calls:
            raise RenderError(f"{base}: no summary.json under it")
        names = {"default": "default", "timed-fixed-200": "timed@fixed:200",
                 "timed-playout-discardable-fixed-200": "timed:playout+discardable@fixed:200",
                 "timed-traces-actions-playout300-discardable-toml-fixed-200":
                     "timed:playout300+discardable.toml@fixed:200",
                 "timed-traces-actions-playout300-follow500-discardable-floor100-weighed-phase100-toml-fixed-200":
                     "timed:playout300-follow500+discardable+floor100-weighed+phase100.toml@fixed:200",
                 "timed-traces-actions-playout300-follow500-discardable-floor100-weighed-phase100-gate-open-toml-gated-200":
                     "timed:playout300-follow500+discardable+floor100-weighed+phase100+gate-open.toml@gated:200"}
        order = [d for d in names if d in calls] + sorted(d for d in calls if d not in names)
        seeds = sorted(calls[order[0]])
        n = len(seeds)
        secs = calls[order[0]][seeds[0]]["seconds"]
        lines += [
            f"Our sender (pacer, GoogCC, NACK/RTX, FlexFEC, real VP8 from libvpx) to headless "
            f"Chromium over the starlink scenario's links (`rtc-client browser --direction receive`), "
            f"{n} call{'s' if n > 1 else ''} of {secs:.0f} s per policy "
            f"({'seeds ' + str(seeds[0]) + '-' + str(seeds[-1]) if n > 1 else 'seed ' + str(seeds[0])}), in real time on "
            "loopback, calibrated forecast. Chromium's columns are its own `getStats()` at the call's "
            "end: freezeCount, totalFreezesDuration, the mean jitter-buffer (playout) delay "
            "(jitterBufferDelay / jitterBufferEmittedCount), the mean minimum delay it was asked for "
            "(jitterBufferMinimumDelay / jitterBufferEmittedCount: where the playout raise shows; "
            "– where this Chromium does not report it) and framesDropped; \"our\" columns are our QoE "
            "meter's on the frames Chromium presented, \"our receiver's\" our own receive chain "
            "(RTX, FlexFEC, jitter buffer) on the packets the relay delivered to Chromium, at the same "
            "instants (`live/shadow.rs`; – in calls recorded before it existed). Mean over the calls, the per-call values in brackets"
            + ("; with one call per policy these are single real calls, not a comparison with a test." if n < 2 else
               "; the change against `default` on the same seeds with its exact paired sign-flip p.")
            ,
            "",
        ]
        cols = [
            ("chrome_freezes", "Chromium freezeCount", 1),
            ("chrome_frozen_s", "Chromium totalFreezesDuration s", 2),
            ("chrome_playout_ms", "Chromium mean playout delay ms", 0),
            ("chrome_minimum_ms", "Chromium mean minimum delay ms", 0),
            ("chrome_dropped", "Chromium framesDropped", 0),
            ("chrome_decoded", "Chromium framesDecoded", 0),
            ("chrome_kbps", "Chromium received kbit/s", 0),
            ("our_freezes", "our freezes", 1),
            ("our_frozen_s", "our s frozen", 2),
            ("rx_freezes", "our receiver's freezes", 1),
            ("rx_frozen_s", "our receiver's s frozen", 2),
            ("rx_playout_ms", "our receiver's mean playout delay ms", 0),
            ("frames_sent", "frames sent", 0),
        ]
        rows = []
        base_vals = None
        for d in order:
            vals = calls[d]
            if sorted(vals) != seeds:
                raise RenderError(f"{base}/{d}: seeds {sorted(vals)}, expected {seeds} as for {order[0]}")
            row = [f"`{names.get(d, d)}`"]
            for key, _, dec in cols:
                xs = [vals[s][key] for s in seeds]
                if any(x is None for x in xs):
                    row.append("–")
                    continue
                mean = sum(xs) / len(xs)
                text = f"{mean:.{dec}f}"
                if n > 1:
                    text += " [" + ", ".join(f"{x:.{dec}f}" for x in xs) + "]"
                if base_vals is not None and n > 1:
                    ref = [base_vals[s][key] for s in seeds]
                    if None not in ref:
                        p = paired_p(xs, ref)
                        text += f" {fmt_change(change_pct(mean, sum(ref) / n), p is not None and p < 0.05)} ({fmt_p(p)})"
                row.append(text)
            if base_vals is None:
                base_vals = vals
            rows.append(row)
        lines += [table(["policy"] + [t for _, t, _ in cols], rows), ""]
        return lines

    # -- the whole page
    def header(self):
        m = self.meta
        total = float(m["total_s"])
        lines = [
            "# Results",
            "",
            "Every headline table of the project, regenerated by one command from this commit:",
            "",
            "```sh",
            "scripts/results.sh            # the full run (this page states its wall time)",
            "scripts/results.sh --quick    # a smaller version, under 5 minutes on 2 cores",
            "```",
            "",
            "It writes this page and the README's results section. Figures come only from the runs "
            "listed below, each compared with `default` (libwebrtc's behaviour) in the same run on "
            "the same seeds. The dated notes in docs/experiments/ are the history of how the "
            "project got here; where a figure here and there differ, this page is the current one.",
            "",
        ]
        if m["mode"] != "full":
            lines += [
                f"**This is the `--{m['mode']}` page**: {m['calls']} calls of {m['duration']} per "
                "cell and fewer scenarios, a smoke test of the pipeline whose figures are noisy and "
                "not the headline ones; `scripts/results.sh` without `--quick` writes those.",
                "",
            ]
        lines += [
            table(["", ""], [
                ["mode", m["mode"]],
                ["commit", f"`{m['commit']}`"],
                ["machine", f"{m['cores']} cores, {m['cpu']}"],
                ["date (UTC)", m["started"]],
                ["calls per cell", f"{m['calls']} of {m['duration']}, seeds from {m['seed']}, {m['jobs']} at once"],
                ["build", f"`{m.get('build', '')}`: {float(m.get('build_s', 0)):.0f} s"],
                ["total wall time", f"{fmt_wall(total)}, the build and every section included"],
            ]),
            "",
            "| section | wall time | commands |",
            "|---|---|---|",
        ]
        for s in ("goal", "ablation", "models", "fidelity", "browser"):
            count = sum(1 for sec, _, _ in self.commands if sec == s)
            if s not in self.sections:
                wall = "not run (`--sections`)"
            elif s == "browser" and m.get("browser_skipped"):
                wall = f"skipped: {m['browser_skipped']}"
            else:
                wall = fmt_wall(self.section_wall(s))
            lines.append(f"| {SECTION_TITLES[s]} | {wall} | {count} |")
        lines += ["", "<details><summary>Every command, with its wall time</summary>", "", "```sh"]
        lines.append(f"{m.get('build', '')}   # {float(m.get('build_s', 0)):.0f} s; `rtc-client` below is its release binary")
        for sec, secs, cmd in self.commands:
            lines.append(f"{cmd}   # {sec}, {float(secs):.1f} s")
        lines += ["```", "", "</details>", ""]
        return lines

    def render(self):
        lines = self.header()
        for s, fn in (("goal", self.render_goal), ("ablation", self.render_ablation), ("models", self.render_models),
                      ("fidelity", self.render_fidelity), ("browser", self.render_browser)):
            if s not in self.sections and s != "browser":
                lines += [f"## {SECTION_TITLES[s]}", "", self.not_run(s), ""]
            else:
                lines += fn()
        return "\n".join(lines).rstrip() + "\n"

    def readme_block(self):
        m = self.meta
        if self.goal is None:
            body = ["The last results run left the goal table out; see [docs/results.md](docs/results.md)."]
        else:
            plan = self.goal.plan
            body = [
                f"The goal table of [docs/results.md](docs/results.md) ({m['mode']} run of "
                f"{m['started'][:10]}, commit `{m['commit'][:12]}`, {m['cores']} cores, "
                f"{fmt_wall(float(m['total_s']))} for every table): {plan['calls']} calls of "
                f"{fmt_duration(plan['duration_s'])} per cell, forecast `{plan['handover']}`; the "
                "handover-aware policies against `default` (libwebrtc's 2000-ms limit + adaptive FEC) "
                "on the same seeds. " + self.legend,
                "",
                self.goal_table(),
                "",
                self.goal_check(),
                "",
                "The ablation, the shipped models on held-out seeds, the sender-fidelity checks and "
                "the browser comparison are in [docs/results.md](docs/results.md), with the commands "
                "and their wall times. `scripts/results.sh` regenerates all of it (`--quick`: a "
                "smaller version in under 5 minutes).",
            ]
        return "\n".join([README_BEGIN] + body + [README_END])


# --------------------------------------------------------------------------------------------
# Helpers


def fmt_duration(seconds):
    seconds = float(seconds)
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def fmt_wall(seconds):
    if seconds >= 90:
        return f"{seconds / 60:.1f} min ({seconds:.0f} s)"
    return f"{seconds:.0f} s"


def load_card(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError) as e:
        raise RenderError(f"cannot read the model card {path}: {e}")


def card_ids():
    """learned:<id> (the ONNX file's sha256, first 12 hex digits, as the policy names itself)
    -> (card path, what it is), for the shipped cards."""
    out = {}
    for path, what in CARDS:
        card = load_card(path)
        out[card["onnx_sha256"][:12]] = (path, what)
    return out


def training_seeds(card):
    """(scenario, seed) of every training log the card names (.../<scenario>/<policy>/seed-N.jsonl)."""
    out = []
    for log in card.get("training", {}).get("logs", []):
        m = re.search(r"([^/]+)/[^/]+/seed-(\d+)\.jsonl$", log["name"])
        if m:
            out.append((m.group(1), int(m.group(2))))
    return out


def fidelity_call(records):
    if not records:
        raise RenderError("a telemetry file with no interval")
    dur = sum(r["duration_ms"] for r in records)
    w = [(r["sender"]["window_bytes"], r["duration_ms"]) for r in records if "window_bytes" in r["sender"]]
    pr = [r["sender"]["pushback_ratio"] for r in records if "pushback_ratio" in r["sender"]]
    return dict(
        mq=sum(r["pacer"]["mean_queue_ms"] * r["duration_ms"] for r in records) / dur,
        xq=max(r["pacer"]["max_queue_ms"] for r in records),
        db=sum(r["pacer"]["drain_boost_ms"] for r in records),
        dropped=sum(r["sender"]["frames_dropped"] for r in records),
        flushed=sum(r["sender"]["packets_flushed"] for r in records),
        win=sum(a * b for a, b in w) / sum(b for _, b in w) / 1000 if w else None,
        ratio=min(pr) if pr else None,
    )


def browser_call(summary, path):
    last = (summary.get("browser") or {}).get("last") or {}
    if not last:
        raise RenderError(f"{path}: Chromium reported no inbound video statistics")
    ours = summary.get("ours") or {}
    emitted = last.get("jitterBufferEmittedCount")
    playout = last["jitterBufferDelay"] / emitted * 1000 if emitted and "jitterBufferDelay" in last else None
    # What the receiver was asked to hold at least (the playout-delay extension, our raise),
    # where this Chromium reports it.
    minimum = last["jitterBufferMinimumDelay"] / emitted * 1000 if emitted and "jitterBufferMinimumDelay" in last else None
    frozen = last.get("totalFreezesDuration")
    our_frozen = ours.get("qoe_total_freeze_ms")
    # Our receive chain on the packets the relay delivered to Chromium (live/shadow.rs), in
    # summaries that carry it.
    receiver = summary.get("receiver") or {}
    rx_frozen = receiver.get("frozen_ms")
    return dict(
        seconds=summary.get("seconds", 0.0),
        chrome_freezes=last.get("freezeCount"),
        chrome_frozen_s=frozen,
        chrome_playout_ms=playout,
        chrome_minimum_ms=minimum,
        chrome_dropped=last.get("framesDropped"),
        chrome_decoded=last.get("framesDecoded"),
        chrome_kbps=(summary.get("browser") or {}).get("bitrate_kbps"),
        our_freezes=ours.get("qoe_freeze_count"),
        our_frozen_s=our_frozen / 1000 if our_frozen is not None else None,
        frames_sent=ours.get("frames_sent"),
        rx_freezes=receiver.get("freeze_count"),
        rx_frozen_s=rx_frozen / 1000 if rx_frozen is not None else None,
        rx_playout_ms=receiver.get("mean_playout_delay_ms"),
    )


def replace_block(text, block, path):
    b, e = text.find(README_BEGIN), text.find(README_END)
    if b < 0 or e < 0 or e < b:
        raise RenderError(f"{path} has no {README_BEGIN} ... {README_END} block to rewrite")
    return text[:b] + block + text[e + len(README_END):]


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def render(out, page=None, docs=None, readme=None):
    p = Page(out)
    text = p.render()
    for target in (page, docs):
        if target:
            write(target, text)
    if readme:
        with open(readme) as fh:
            old = fh.read()
        write(readme, replace_block(old, p.readme_block(), readme))
    return text


# --------------------------------------------------------------------------------------------
# Self-test: a run directory built from scripts/results-fixture.json (one real report cell, one
# real telemetry line and one real browser summary, cut from real runs) rendered into a page
# whose rows are then checked.


def self_test():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "results-fixture.json")) as fh:
        fx = json.load(fh)
    root = os.path.dirname(here)
    os.chdir(root)  # the cards are read from models/
    ids = list(card_ids())
    tmp = tempfile.mkdtemp(prefix="results-selftest-")
    try:
        seeds = [9100, 9101, 9102]

        def experiment(name, scenarios, policies, shift=0.0):
            run = os.path.join(tmp, name)
            cells = []
            for sc in scenarios:
                for i, pol in enumerate(policies):
                    cell = json.loads(json.dumps(fx["cell"]))
                    cell.update(scenario=sc, policy=pol, seeds=seeds)
                    for m in cell["metrics"]:
                        m["values"] = [v * (1 + 0.1 * i + shift) for v in m["values"][:3]]
                        m["mean"] = sum(m["values"]) / 3
                        m["ci_low"], m["ci_high"] = min(m["values"]), max(m["values"])
                        m["change_vs_default_pct"] = None if pol == "default" else 10.0 * i
                        m["p_value"] = None if pol == "default" else 0.25
                        m["significant"] = None if pol == "default" else False
                    cells.append(cell)
                    d = os.path.join(run, "telemetry", sc, re.sub(r"[:@+]", "-", pol))
                    os.makedirs(d)
                    for s in seeds:
                        with open(os.path.join(d, f"seed-{s}.jsonl"), "w") as fh:
                            fh.write(json.dumps(fx["telemetry"]) + "\n")
            plan = dict(fx["plan"], scenarios=scenarios, policies=policies, calls=3, seed_base=seeds[0])
            with open(os.path.join(run, "report.json"), "w") as fh:
                json.dump({"schema": "leopace.experiment.v1", "plan": plan, "cells": cells}, fh)

        learned = [f"learned:{i}" for i in ids]
        experiment("goal", ["starlink", "lagos-trace", "terrestrial-lte"],
                   ["default", "timed@fixed:200", "timed:hold+guard+boost@fixed:200"] + learned)
        two = ["starlink", "lagos-trace"]
        experiment("ablation-actions", two, ["default", "fixed:200", "timed:hold@fixed:200", "timed:playout@fixed:200", "timed@fixed:200"])
        for f in ("100", "200", "300"):
            experiment(f"ablation-floor-{f}", two, ["default"], shift=0.05)
        experiment("ablation-receiver-raise", two, ["default"], shift=0.05)
        for k in ("early50", "late50", "jitter50", "blind"):
            experiment(f"ablation-{k}", two, ["default", "timed@fixed:200"])
        experiment("models-oracle", ["starlink"], ["default", learned[0]])
        experiment("models-mirror", ["starlink"], ["default", learned[0]])
        for cwnd in ("off", "pushback", "pacer"):
            experiment(f"fidelity/leo-{cwnd}-off", ["starlink"], ["fixed:500", "fixed:2000"])
        for pol in ("default", "timed-fixed-200"):
            for s in seeds:
                d = os.path.join(tmp, "browser", pol, f"seed-{s}")
                os.makedirs(d)
                with open(os.path.join(d, "summary.json"), "w") as fh:
                    json.dump(fx["browser"], fh)
        with open(os.path.join(tmp, "meta.tsv"), "w") as fh:
            for k, v in [("mode", "quick"), ("commit", "0123456789abcdef (dirty)"), ("cores", "2"), ("cpu", "Test CPU"),
                         ("started", "2026-12-03T00:00:00Z"), ("calls", "3"), ("duration", "4m"), ("seed", "9100"),
                         ("jobs", "2"), ("sections", "goal,ablation,models,fidelity,browser"), ("browser_skipped", ""),
                         ("build", "cargo build --release -p rtc-client"), ("build_s", "1.0"), ("total_s", "123.4")]:
                fh.write(f"{k}\t{v}\n")
        with open(os.path.join(tmp, "commands.tsv"), "w") as fh:
            fh.write("goal\t60.5\trtc-client experiment --out runs/x/goal\n")
            fh.write("ablation\t30.0\trtc-client experiment --out runs/x/ablation-actions\n")
        readme = os.path.join(tmp, "README.md")
        with open(readme, "w") as fh:
            fh.write(f"# x\n\n## Results\n\n{README_BEGIN}\nold\n{README_END}\n\n## Next\n")
        page = os.path.join(tmp, "results.md")
        text = render(tmp, page=page, readme=readme)

        def expect(needle, where=text):
            if needle not in where:
                raise AssertionError(f"expected {needle!r} in the rendered text")

        expect("| commit | `0123456789abcdef (dirty)` |")
        expect("| machine | 2 cores, Test CPU |")
        expect("rtc-client experiment --out runs/x/goal   # goal, 60.5 s")
        expect("| starlink | `default` | ")
        expect("|  | `timed@fixed:200` | ")
        expect("|  | `timed:hold+guard+boost@fixed:200` | ")
        expect(f"|  | `{learned[1]}` | ")
        expect("### Against the goal")
        expect("| `timed@fixed:200` | not met: freezes +10.0 %, ")
        expect(" | no harm (freezes +10.0 %) |")
        expect("| `default` + playout floor 100 ms † | ")
        expect("| `default` + receiver raise † | ")
        expect("| `timed@fixed:200`, forecast 50 ms early | ")
        expect("| `timed@fixed:200`, forecast-blind (`--handover blind`) | ")
        expect("| `timed:playout@fixed:200` | ")
        expect(f"| starlink | oracle | `{learned[0]}` | ")
        expect("| pushback | off | 500 | ")
        expect("| `timed@fixed:200` | ")
        expect("This is the `--quick` page")
        # A floor row's change is computed here against the main run's default: +5 %.
        expect("+5.0 %")
        with open(readme) as fh:
            r = fh.read()
        expect("## Next", r)
        expect("| starlink | `default` | ", r)
        if "old" in r.split(README_BEGIN)[1].split(README_END)[0].splitlines()[1:2]:
            raise AssertionError("the README block was not replaced")
        # An evaluation on training seeds is refused.
        card = load_card(CARDS[0][0])
        train = training_seeds(card)
        if train:
            shutil.rmtree(os.path.join(tmp, "models-oracle"))
            seeds[:] = [train[0][1], train[0][1] + 1, train[0][1] + 2]
            experiment("models-oracle", ["starlink"], ["default", learned[0]])
            try:
                render(tmp)
            except RenderError as e:
                expect("trained on", str(e))
            else:
                raise AssertionError("a page evaluating a model on its training seeds was rendered")
        # The statistics helpers against hand-checked values.
        assert paired_p([1.0, 2.0, 3.0], [0.0, 0.0, 0.0]) == 0.25
        assert paired_p([1.0] * 4, [1.0] * 4) == 1.0
        assert abs(change_pct(110.0, 100.0) - 10.0) < 1e-9
    finally:
        shutil.rmtree(tmp)
    print("results.py self-test: ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", nargs="?", help="the run directory scripts/results.sh wrote")
    ap.add_argument("--page", help="write the page here")
    ap.add_argument("--docs", help="also write the page here (docs/results.md)")
    ap.add_argument("--readme", help="rewrite the results block of this README")
    ap.add_argument("--self-test", action="store_true", help="render a fixture run and check its rows")
    args = ap.parse_args()
    try:
        if args.self_test:
            self_test()
            return
        if not args.run:
            ap.error("a run directory is needed (or --self-test)")
        text = render(args.run, page=args.page, docs=args.docs, readme=args.readme)
        if not (args.page or args.docs or args.readme):
            sys.stdout.write(text)
    except RenderError as e:
        sys.exit(f"results.py: {e}")


if __name__ == "__main__":
    main()

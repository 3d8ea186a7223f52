#!/usr/bin/env python3
"""Figures behind the training-path family's ranges (docs/path-family.md) that the shipped
scenario headers do not already state.

Reads ../shared/data (or the directory given as the first argument) and prints one line per
figure, with the file it came from. Standard library only; nothing is written.

    python3 scripts/path-family-figures.py [DATA_DIR]
"""

import csv
import math
import statistics as st
import sys
from pathlib import Path

DATA = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def q(xs, p):
    """The p-quantile of xs (linear interpolation)."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p
    lo = math.floor(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def runs(flags):
    """Lengths of the runs of True in flags."""
    out, n = [], 0
    for f in flags:
        if f:
            n += 1
        elif n:
            out.append(n)
            n = 0
    if n:
        out.append(n)
    return out


def lag1(xs):
    m = st.fmean(xs)
    num = sum((a - m) * (b - m) for a, b in zip(xs, xs[1:]))
    den = sum((a - m) ** 2 for a in xs)
    return num / den if den else float("nan")


def lagos():
    f = DATA / "starlink/lagos/lagos.csv"
    rows = [list(map(float, r)) for r in csv.reader(open(f))]
    # Slot boundaries at virtual 12 000 + 15 000 k ms; rows are 100 ms.
    first = 120
    slots = [(s, s + 150) for s in range(first, len(rows) - 149, 150)]
    print(f"# {f.relative_to(DATA)}: {len(rows)} rows, {len(slots)} whole slots")
    for col, name in ((4, "uplink"), (5, "downlink")):
        inside = [rows[i][col] for s, e in slots for i in range(s + 10, s + 140)]
        lossy = [x > 0 for x in inside]
        lossy_vals = [x for x in inside if x > 0]
        rl = []
        for s, e in slots:
            rl += runs([rows[i][col] > 0 for i in range(s + 10, s + 140)])
        print(
            f"lagos {name} loss inside slots (rows 10-139): mean {100 * st.fmean(inside):.2f} %, "
            f"rows with loss {100 * st.fmean(lossy):.1f} %, mean loss of a lossy row "
            f"{100 * st.fmean(lossy_vals):.1f} % (p50 {100 * q(lossy_vals, 0.5):.1f}, p90 "
            f"{100 * q(lossy_vals, 0.9):.1f}), lossy runs mean {st.fmean(rl):.2f} rows "
            f"(p90 {q(rl, 0.9):.0f})"
        )
        # Per-boundary row-0 and row-1 loss (boundaries between whole slots).
        b_rows = [s for s, _ in slots[1:]]
        for k in (0, 1, 2):
            per = [rows[b + k][col] for b in b_rows]
            print(
                f"lagos {name} boundary row {k}: mean {100 * st.fmean(per):.1f} %, per-boundary "
                f"p25 {100 * q(per, 0.25):.1f} p50 {100 * q(per, 0.5):.1f} p75 "
                f"{100 * q(per, 0.75):.1f} p90 {100 * q(per, 0.9):.1f} %, boundaries with no loss "
                f"in the row {100 * st.fmean([x == 0 for x in per]):.0f} %"
            )
        # Per-boundary spike: row 0 delay over the slot's median delay.
        dcol = col - 2
        spikes = [
            rows[s][dcol] - st.median(rows[i][dcol] for i in range(s, s + 150)) for s, _ in slots[1:]
        ]
        print(
            f"lagos {name} row-0 delay over the slot median: mean {st.fmean(spikes):.0f} ms, p25 "
            f"{q(spikes, 0.25):.0f}, p50 {q(spikes, 0.5):.0f}, p75 {q(spikes, 0.75):.0f}, p90 "
            f"{q(spikes, 0.9):.0f} ms"
        )
    # Uplink capacity per second: dips below a quarter of the call median.
    ccol = 0
    per_s = [st.fmean(rows[i][ccol] for i in range(j, j + 10)) for j in range(0, len(rows) - 9, 10)]
    med = st.median(per_s)
    logs = [math.log(max(x, 1e-3)) for x in per_s]
    dips = [x < 0.25 * med for x in per_s]
    dr = runs(dips)
    print(
        f"lagos uplink per second: median {med:.2f} Mbit/s, log sd {st.pstdev(logs):.2f}, lag-1 "
        f"autocorrelation of the log {lag1(logs):.2f}, seconds under a quarter of the median "
        f"{100 * st.fmean(dips):.1f} % in runs of {st.fmean(dr):.1f} s on average, min "
        f"{min(per_s):.2f} Mbit/s"
    )


def pings():
    for label, name in (
        ("Lagos (ISL)", "isl-ping-gw-lagos-230911-172603-0.1s-60min.txt"),
        ("Seattle (bent pipe)", "no-isl-ping-gw-seattle-230911-170535-0.1s-60min.txt"),
    ):
        f = DATA / "starlink/mmsys24" / name
        rtt = []
        for line in open(f):
            parts = line.split()
            if len(parts) == 3:
                rtt.append(float(parts[2]))
        lost = [x < 0 for x in rtt]
        rl = runs(lost)
        ok = [x for x in rtt if x >= 0]
        print(
            f"mmsys24 {label} ({name}): {len(rtt)} pings, lost "
            f"{100 * st.fmean(lost):.2f} %, loss runs mean {st.fmean(rl):.2f} pings (p90 "
            f"{q(rl, 0.9):.0f}, max {max(rl)}), single-ping losses {100 * sum(1 for r in rl if r == 1) / len(rl):.0f} % "
            f"of runs; RTT p5 {q(ok, 0.05):.0f} p50 {q(ok, 0.5):.0f} p95 {q(ok, 0.95):.0f} ms"
        )


def leocc_delay():
    f = DATA / "starlink/leocc/delay_example_10ms.txt"
    d = [float(x) for x in open(f) if x.strip()]
    starts = [875 + 1500 * k for k in range(8) if 875 + 1500 * k + 1500 <= len(d) + 1500]
    out = []
    for s in starts:
        base = st.median(d[s + 20 : min(s + 1500, len(d))]) if s + 20 < len(d) else None
        if base is None:
            continue
        win = d[max(0, s - 5) : s + 30]
        peak = max(win) - base
        above = sum(1 for x in d[max(0, s - 5) : s + 30] if x > base + 10)
        out.append((peak, above * 10))
    print(
        f"leocc {f.name}: spikes over the slot median {', '.join(f'{p:.0f}' for p, _ in out)} ms, "
        f"lasting {', '.join(str(a) for _, a in out)} ms above base+10"
    )


def leocc_gaps():
    """The capacity trace's longest delivery gap within 200 ms of each slot boundary (every 15 s
    from 8 750 ms, as the delay file's spikes), and the longest anywhere else."""
    f = DATA / "starlink/leocc/bw_example.mahimahi"
    t = [int(x) for x in open(f) if x.strip()]
    boundaries = [8750 + 15000 * k for k in range(8)]
    at_boundary = {b: 0 for b in boundaries}
    elsewhere = 0
    for a, b in zip(t, t[1:]):
        near = [x for x in boundaries if abs(a - x) <= 200]
        if near:
            at_boundary[near[0]] = max(at_boundary[near[0]], b - a)
        else:
            elsewhere = max(elsewhere, b - a)
    gaps = list(at_boundary.values())
    print(
        f"leocc {f.name}: longest delivery gap at each slot boundary "
        f"{', '.join(str(g) for g in gaps)} ms (mean {st.fmean(gaps):.0f}); longest elsewhere {elsewhere} ms"
    )


def ucc():
    d = DATA / "terrestrial/5g-ucc"
    for mode in ("5G", "LTE"):
        batches, losses, sd = 0, [], []
        for f in sorted(d.glob("*.csv")):
            for r in csv.DictReader(open(f)):
                if r["NetworkMode"] != mode or r["PINGLOSS"] in ("-", ""):
                    continue
                batches += 1
                losses.append(float(r["PINGLOSS"]))
                if r["PINGSTDEV"] not in ("-", ""):
                    sd.append(float(r["PINGSTDEV"]))
        lossy = [x for x in losses if x > 0]
        print(
            f"5g-ucc {mode} pings: {batches} batches, {100 * len(lossy) / max(batches, 1):.1f} % "
            f"lost anything (their loss p50 {q(lossy, 0.5):.0f} %), RTT sd p50 {q(sd, 0.5):.1f} "
            f"p90 {q(sd, 0.9):.1f} ms"
        )


def mahimahi():
    d = DATA / "terrestrial/mahimahi"
    for f in sorted(d.glob("*.up")):
        ms = [int(x) for x in open(f) if x.strip()]
        secs = ms[-1] // 1000 + 1
        per = [0] * secs
        for t in ms:
            per[t // 1000] += 1
        mbps = [c * 1500 * 8 / 1e6 for c in per]
        low = [x < 0.1 * st.median(mbps) for x in mbps]
        print(
            f"mahimahi {f.name}: seconds under a tenth of the median {100 * st.fmean(low):.1f} % "
            f"(runs {st.fmean(runs(low)) if any(low) else 0:.1f} s)"
        )


if __name__ == "__main__":
    if not DATA.is_dir():
        sys.exit(f"no data directory at {DATA}: give it as the first argument")
    lagos()
    pings()
    leocc_delay()
    leocc_gaps()
    ucc()
    mahimahi()

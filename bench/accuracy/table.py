#!/usr/bin/env python3
"""Makes the Markdown table of bench/accuracy/run.sh from its raw data.

  table.py --runs RUNS.tsv --reports DIR --outputs DIR --header FILE
           --cases "NAME:FILE:LINE:POINT[:KIND] ..." --predicted-tsv OUT.tsv

RUNS.tsv: round, case, variant (plainP | causal | coz | freeI | ab), speedup, ns, status.
DIR/CASE.PROFILER.ROUND.json: `causal report --json` of that round's profile.
DIR (outputs)/CASE.VARIANT.SPEEDUP.ROUND.txt: each run's standard output.
KIND: line (the default: a line experiment, `--fixed-line`), wait (a wait
experiment, `--fixed-wait`: the report names the line "FILE:LINE (KIND wait)")
or via=CALLER (an experiment on the line's samples in one calling context,
`--fixed-line --path CALLER`: the report names the line "FILE:LINE (via
CALLER)"); Coz has neither of the last two, its column says n/a.
Prints results.md on stdout and writes one row per case, profiler, round and
speedup (predicted program speedup, experiments) to OUT.tsv.
"""
import argparse
import csv
import filecmp
import json
import os
import re
import statistics
import sys

# What each program's comment derives (the right causal answer), s in 0..1.
RIGHT = {
    "serial": lambda s: 0.4 * s,
    "parallel": lambda s: min(s, 0.2),
    "lock": lambda s: s if s <= 0.75 else 1 - 0.125,
    "openloop": lambda s: 0.6 * s,
    "afterend": lambda s: 0.0,
    "heartbeat": lambda s: 0.4 * s,
    "shortwait": lambda s: 0.0,
    "waitoverlap": lambda s: 0.0,
    "viaserial": lambda s: 0.5 * s,
    "viaside": lambda s: 0.0,
    "pathline": lambda s: 0.5 * s,
}
# Cases whose true effect is on mean latency (the plain runs' "ns" is the
# program's own mean latency), not on run time.
LATENCY = {"openloop", "afterend", "closedloop"}


def summary(values, percent=True):
    if not values:
        return "-"
    scale = 100 if percent else 1
    med, lo, hi = statistics.median(values), min(values), max(values)
    if len(values) == 1:
        return "%+.1f %%" % (med * scale)
    return "%+.1f %% (%+.1f to %+.1f)" % (med * scale, lo * scale, hi * scale)


# A report's line name: "FILE:LINE", "FILE:LINE (KIND wait)" for a wait experiment's, or
# "FILE:LINE (via CALLER)" for an experiment in one calling context.
LINE_NAME = re.compile(r"^(.*?):(\d+)(?: \((.*)\))?$")


def suffix_kind(suffix):
    """What a line name's suffix selects: None (the line), "wait", or "via CALLER"."""
    if suffix is None:
        return None
    if suffix.endswith(" wait") and "(" not in suffix:
        return "wait"
    if suffix.startswith("via "):
        return suffix
    return "other"


def load_report(report_path):
    """A `causal report --json` file, or None if it is missing or not JSON."""
    if not os.path.exists(report_path):
        return None
    try:
        with open(report_path) as f:
            return json.load(f)
    except ValueError:
        return None


def curve_of(report_path, path, line, point, wait=False, via=None):
    """The curve of (line, point) in a `causal report --json`, or None.

    wait: the line's wait ("FILE:LINE (KIND wait)", any kind), else the line
    itself; a report that names a wait experiment's line without the suffix
    is read too (the line's own name, when no suffixed one is there).
    via: the line in the calling context of that caller ("FILE:LINE (via
    CALLER)") only."""
    report = load_report(report_path)
    if report is None:
        return None
    found = {}
    for entry in report.get("lines", []):
        m = LINE_NAME.match(entry["line"])
        if not m or m.group(2) != str(line) or os.path.realpath(m.group(1)) != os.path.realpath(path):
            continue
        for p in entry["points"]:
            if p["name"] == point:
                found.setdefault(suffix_kind(m.group(3)), p["curve"])
    if via:
        return found.get("via " + via)
    if wait:
        return found.get("wait", found.get(None))
    return found.get(None)


def confirmation_of(report_path, path, line, point, speedup, wait=False):
    """(estimate, experiments, pairs, interval [low, high] or None) of the A/B runs of
    (line, point) at `speedup` in a `causal report --json` (its confirmations[]), or None."""
    report = load_report(report_path)
    if report is None:
        return None
    for c in report.get("confirmations", []):
        m = LINE_NAME.match(c["line"])
        if (not m or m.group(2) != str(line) or c["point"] != point
                or os.path.realpath(m.group(1)) != os.path.realpath(path)
                or abs(c["speedup"] - speedup) >= 0.005 or c.get("estimate") is None):
            continue
        # A wait's confirmation names it "FILE:LINE (KIND wait)"; a line's, "FILE:LINE".
        if suffix_kind(m.group(3)) not in ((None, "wait") if wait else (None,)):
            continue
        return c["estimate"], c.get("experiments", 0), c.get("pairs", 0), c.get("ci")
    return None


def prediction(report_path, path, line, point, speedup, free=False, wait=False, via=None):
    """(program speedup at `speedup`, experiments at 0, experiments at speedup, its
    interval [low, high] or None) or None.

    free: a free run draws speedups in 5 % steps, so the curve has few
    experiments at any one speedup: the points within 10 points of `speedup`
    are each scaled linearly to it and averaged, weighted by experiments."""
    curve = curve_of(report_path, path, line, point, wait, via)
    if not curve:
        return None
    base = [c for c in curve if c["speedup"] == 0]
    if not base:
        return None
    if not free:
        at = [c for c in curve if abs(c["speedup"] - speedup) < 0.005]
        if at:
            return (at[0]["program_speedup"], base[0]["experiments"], at[0]["experiments"],
                    at[0].get("ci"))
        return None
    near = [c for c in curve if c["speedup"] > 0 and abs(c["speedup"] - speedup) <= 0.1 + 1e-9
            and c.get("program_speedup") is not None]
    weight = sum(c["experiments"] for c in near)
    if not weight:
        return None
    value = sum(c["program_speedup"] * speedup / c["speedup"] * c["experiments"]
                for c in near) / weight
    return value, base[0]["experiments"], weight, None


def main():
    parser = argparse.ArgumentParser()
    for name in ("--runs", "--reports", "--outputs", "--header", "--cases", "--predicted-tsv"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    cases = []
    for spec in args.cases.split():
        name, path, line, point, kind = (spec.split(":") + ["line"])[:5]
        cases.append((name, path, int(line), point, kind))
    rows = list(csv.DictReader(open(args.runs), delimiter="\t"))
    # A variant's time in a round: the median of its runs (plain runs repeat with --truth-reps).
    times = {}
    for r in rows:
        times.setdefault((r["case"], r["variant"], int(r["round"])), []).append(int(r["ns"]))
    ns = {key: statistics.median(values) for key, values in times.items()}
    rounds = sorted({int(r["round"]) for r in rows})
    profilers = [p for p in ("causal", "coz") if any(r["variant"] == p for r in rows)]
    if any(r["variant"].startswith("free") for r in rows):
        profilers.append("free")
    if any(r["variant"] == "ab" for r in rows):
        profilers.append("ab")
    speedups = sorted({int(r["speedup"]) for r in rows if int(r["speedup"]) > 0})

    bad = []
    for r in rows:
        ref = os.path.join(args.outputs, "%s.plain100.0.%s.txt" % (r["case"], rounds[0]))
        mine = os.path.join(args.outputs, "%s.%s.%s.%s.txt" % (r["case"], r["variant"], r["speedup"],
                                                               r["round"]))
        same = os.path.exists(ref) and os.path.exists(mine) and filecmp.cmp(ref, mine, shallow=False)
        if r["status"] != "0" or not same:
            bad.append("round %s %s %s at %s %%: exit status %s, same output as the baseline: %s" %
                       (r["round"], r["case"], r["variant"], r["speedup"], r["status"],
                        "yes" if same else "no"))

    predicted_rows = []
    table = []
    pooled = False  # some case has its rounds in one profile (run.sh, 2 rounds or more)
    for name, path, line, point, kind in cases:
        wait = kind == "wait"
        via = kind[len("via="):] if kind.startswith("via=") else None
        for s in speedups:
            truth = [1 - ns[(name, "plain%d" % (100 - s), k)] / ns[(name, "plain100", k)]
                     for k in rounds if (name, "plain%d" % (100 - s), k) in ns
                     and (name, "plain100", k) in ns]
            cells = []
            for p in profilers:
                if (wait or via) and p == "coz":  # Coz cannot select a wait or a context
                    cells.append("n/a")
                    continue
                if via and p == "ab":  # no A/B runs in one calling context
                    cells.append("n/a")
                    continue
                values, missing, intervals = [], 0, []
                for k in rounds:
                    report = os.path.join(args.reports, "%s.%s.%d.json" % (name, p, k))
                    if p == "ab":
                        found = confirmation_of(report, path, line, point, s / 100, wait=wait)
                    else:
                        found = prediction(report, path, line, point, s / 100, free=(p == "free"),
                                           wait=wait, via=via)
                    if found is None:
                        missing += 1
                        predicted_rows.append((name, p, k, s, "", "", "", "", ""))
                        continue
                    values.append(found[0])
                    ci = found[3] if found[3] and None not in found[3] else None
                    if ci:
                        intervals.append(ci)
                    predicted_rows.append((name, p, k, s, "%.4f" % found[0], found[1], found[2],
                                           "%.4f" % ci[0] if ci else "",
                                           "%.4f" % ci[1] if ci else ""))
                cell = summary(values)
                if missing:
                    cell += " [%d of %d rounds without a value]" % (missing, len(rounds))
                # A line that cannot matter: does the report's interval say so?
                if name in RIGHT and RIGHT[name](s / 100) == 0 and intervals:
                    cell += " [interval holds 0 in %d of %d]" % (
                        sum(1 for low, high in intervals if low <= 0 <= high), len(intervals))
                cells.append(cell)
            # All fixed-line rounds in one profile (run.sh), its interval over runs.
            pooled_report = os.path.join(args.reports, "%s.causal.all.json" % name)
            if os.path.exists(pooled_report):
                pooled = True
                found = prediction(pooled_report, path, line, point, s / 100, wait=wait, via=via)
                ci = found[3] if found and found[3] and None not in found[3] else None
                if found is None:
                    cells.append("-")
                elif ci:
                    cells.append("%+.1f %% [%+.1f, %+.1f]%s" % (
                        found[0] * 100, ci[0] * 100, ci[1] * 100,
                        (" (holds 0)" if ci[0] <= 0 <= ci[1] else " (excludes 0)")
                        if name in RIGHT and RIGHT[name](s / 100) == 0 else ""))
                else:
                    cells.append("%+.1f %%" % (found[0] * 100))
            elif pooled:
                cells.append("-")
            right = RIGHT[name](s / 100) if name in RIGHT else None
            table.append("| %s | %s:%d | %d %% | %s | %s | %s |" % (
                name, os.path.basename(path), line, s,
                "-" if right is None else "%+.1f %%" % (right * 100), summary(truth),
                " | ".join(cells)))

    with open(args.predicted_tsv, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["case", "profiler", "round", "speedup", "predicted", "experiments_at_0",
                    "experiments_at_speedup", "interval_low", "interval_high"])
        w.writerows(predicted_rows)

    sys.stdout.write(open(args.header).read())
    print()
    latency_cases = sorted(LATENCY & {c[0] for c in cases})
    measure = "1 - run time / baseline run time"
    if latency_cases:
        measure += "; for %s: 1 - mean latency / baseline mean latency" % ", ".join(latency_cases)
    print("Each row: a line sped up for real by the given share (a build with that share of its")
    print("loop iterations removed); the program speedup (%s) that" % measure)
    print("the program's comment derives, that the real build achieved, and that each profiler's")
    print("profile of the unchanged build predicts at that virtual line speedup (fixed line,")
    print("fixed speedups 0/25/50/100, one profile per round); median (min to max) over %d rounds." %
          len(rounds))
    if any(c[0] in RIGHT and RIGHT[c[0]](0.5) == 0 for c in cases):
        print("A line whose right answer is 0: \"[interval holds 0 in K of N]\" counts the rounds")
        print("whose report gives the curve point an interval (`ci`) that includes 0.")
    wait_cases = [c[0] for c in cases if c[4] == "wait"]
    if wait_cases:
        print("Wait cases (%s): the line is a wait whose length the knob scales, predicted by a" %
              ", ".join(wait_cases))
        print("wait experiment (`causal run --fixed-wait`, the report's line \"FILE:LINE (KIND wait)\");")
        print("Coz cannot select a wait (n/a).")
    via_cases = [(c[0], c[4][len("via="):]) for c in cases if c[4].startswith("via=")]
    if via_cases:
        print("Path cases (%s): the line's samples count only in one calling context, the" %
              ", ".join("%s: %s" % v for v in via_cases))
        print("knob speeds up only that caller's calls (`causal run --fixed-line --path CALLER`,")
        print("the report's line \"FILE:LINE (via CALLER)\"); Coz cannot select a context (n/a).")
    if "ab" in profilers:
        print("A/B runs: per speedup s, `causal run --fixed-line --ab-speedup s` (experiments")
        print("alternate 0 and s); the value is the report's confirmation estimate D, its interval")
        print("a bootstrap over adjacent (0, s) pairs.")
    if "free" in profilers:
        print("Free runs: `causal run` without a fixed line or speedup, the round's runs in one")
        print("profile; the value at s is the experiment-weighted mean of the line's curve points")
        print("within 10 points of s, each scaled linearly to s.")
    if pooled:
        print("Rounds in one profile: the fixed-line profiles of all rounds appended to one and")
        print("read as one; the value at s with its bootstrap interval, which resamples the runs")
        print("as clusters and so holds the run-to-run variation (docs/report.md, \"Runs as")
        print("clusters\").")
    print()
    names = {"causal": "predicted, causal", "coz": "predicted, Coz",
             "free": "predicted, causal free runs", "ab": "predicted, causal A/B runs"}
    columns = [names[p] for p in profilers] + (["causal, rounds in one profile"] if pooled else [])
    print("| case | line | real line speedup | right answer | true effect | %s |" %
          " | ".join(columns))
    print("|---|---|---|---|---|%s" % ("---|" * len(columns)))
    for row in table:
        print(row)
    print()
    for p in profilers:
        exps = [(int(r[5]), int(r[6])) for r in predicted_rows if r[1] == p and r[4] != ""]
        if exps and p == "ab":
            print("%s: median %d experiments and %d pairs per run." % (
                names[p].split(", ")[1], statistics.median(e[0] for e in exps),
                statistics.median(e[1] for e in exps)))
        elif exps:
            print("%s: median %d experiments at 0 %% and %d at (or near) the speedup per profile." % (
                names[p].split(", ")[1], statistics.median(e[0] for e in exps),
                statistics.median(e[1] for e in exps)))
    print()
    if bad:
        print("runs that failed or printed something else than the baseline build:")
        for b in bad:
            print("  " + b)
    else:
        print("every run exited 0 and printed the same as the baseline build.")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Makes the Markdown table of bench/convergence/run.sh from its raw data.

  table.py --runs RUNS.tsv --header HEADER.txt --order FILE:LINE,... --seconds S

RUNS.tsv: one row per profiled run with replay.py's figures. A settle time in
the last 10 % of a run's experiment time does not count as settled: the value
was still changing when the run ended.
"""
import argparse
import csv
import os
import statistics
import sys

LATE = 0.9  # settled after this share of the run: not settled within the run


def summ(values, fmt="%.1f"):
    values = [float(v) for v in values if v != ""]
    if not values:
        return "-"
    if len(values) == 1:
        return fmt % values[0]
    return (fmt + " (" + fmt + " to " + fmt + ")") % (statistics.median(values), min(values),
                                                     max(values))


def settled_cell(rows, field):
    values, late, never = [], 0, 0
    for r in rows:
        if r[field] == "":
            never += 1
        elif float(r[field]) > LATE * float(r["experiment_s"] or 0):
            late += 1
        else:
            values.append(r[field])
    cell = summ(values)
    notes = []
    if late:
        notes.append("%d run(s) still changing in the last 10 %%" % late)
    if never:
        notes.append("%d run(s) never" % never)
    return cell + (" [%s]" % "; ".join(notes) if notes else "")


def main():
    parser = argparse.ArgumentParser()
    for name in ("--runs", "--header", "--order", "--seconds"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    rows = list(csv.DictReader(open(args.runs), delimiter="\t"))
    sys.stdout.write(open(args.header).read())
    print()
    print("Each row: one profiler, default settings, %s s runs of ranking.c (right ranking: %s, "
          "slopes 0.5, 0.3, 0.2); each profile replayed experiment by experiment and ranked by "
          "`causal report` (slope, 5 speedups per line), the same analysis for both; time = "
          "seconds of experiments (sum of their durations). Settled: the earliest time after "
          "which the top line (or the order of the three lines) never changes again; a run whose "
          "value still changed in its last 10 %% is counted apart. Median (min to max) over the "
          "runs." % (args.seconds, " > ".join(os.path.basename(x) for x in args.order.split(","))))
    print()
    print("| profiler | runs | first ranked line after, s | top line settled after, s | "
          "final top line right | order of the 3 lines settled after, s | final order right | "
          "experiments per run | experiment s per run |")
    print("|---|---|---|---|---|---|---|---|---|")
    names = {"causal": "causal", "coz": "Coz"}
    for p in ("causal", "coz"):
        mine = [r for r in rows if r["profiler"] == p]
        if not mine:
            continue
        wrong = [os.path.basename(r["final_top"]) for r in mine if r["right"] != "1"]
        first = [r["first_top_s"] for r in mine]
        never_first = sum(1 for v in first if v == "")
        print("| %s | %d | %s | %s | %d of %d%s | %s | %d of %d | %s | %s |" % (
            names[p], len(mine),
            summ(first) + (" [%d run(s) never]" % never_first if never_first else ""),
            settled_cell(mine, "settled_s"), len(mine) - len(wrong), len(mine),
            " (others: %s)" % ", ".join(wrong) if wrong else "", settled_cell(mine, "order_settled_s"),
            sum(1 for r in mine if r["order_right"] == "1"), len(mine),
            summ([r["experiments"] for r in mine], "%.0f"),
            summ([r["experiment_s"] for r in mine])))
    print()
    bad = [r for r in rows if r["status"] != "0" or r["same_output"] != "1"]
    if bad:
        print("runs that failed or printed something else than the plain build:")
        for r in bad:
            print("  round %s %s: exit status %s, same output %s" % (
                r["round"], r["profiler"], r["status"], r["same_output"]))
    else:
        print("every run exited 0 and printed the same as the plain build.")


if __name__ == "__main__":
    main()

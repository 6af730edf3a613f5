#!/usr/bin/env python3
"""Prints how long the runs of a profile were profiled: "N run(s), profiled
for between LOW and HIGH s, complete" when each run's last `runtime time=`
(ns) lies within [LOW, HIGH] seconds and each run is complete (written whole,
or its parts ending with `shutdown`); otherwise says what is wrong.

    run_time.py PROFILE LOW HIGH
"""
import sys


def main():
    path, low, high = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    runs = []  # [last runtime s, in parts, shutdown seen]
    for line in open(path):
        fields = line.rstrip("\n").split("\t")
        kind, values = fields[0], dict(f.split("=", 1) for f in fields[1:] if "=" in f)
        if kind == "startup" and not any(r[3] == values.get("run") for r in runs if values.get("run")):
            runs.append([None, "run" in values, False, values.get("run")])
        elif kind == "runtime":
            runs[-1][0] = int(values["time"]) / 1e9
        elif kind == "shutdown":
            runs[-1][2] = True
    problems = []
    for seconds, parts, shutdown, _ in runs:
        if seconds is None or not low <= seconds <= high:
            problems.append("profiled for %s s" % seconds)
        if parts and not shutdown:
            problems.append("a run in parts without shutdown")
    if not runs or problems:
        print("%d runs: %s" % (len(runs), "; ".join(problems) or "none"))
        sys.exit(1)
    print("%d run%s, profiled for between %g and %g s, complete" % (len(runs), "" if len(runs) == 1 else "s", low, high))


if __name__ == "__main__":
    main()

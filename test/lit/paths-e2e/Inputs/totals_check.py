#!/usr/bin/env python3
"""Checks the totals of chosen functions in `causal paths report --json`.

  totals_check.py JSON FUNCTION:calls=N[,min-wall=MS][,min-blocked=MS] ...

FUNCTION is a function's name without its parameter list; its totals (all
paths) must have exactly N calls and at least MS milliseconds of wall or
blocked time. Prints each function's totals; exit status 1 on a mismatch."""
import json
import re
import sys


def main():
    report = json.load(open(sys.argv[1]))
    functions = {re.sub(r"\(.*\)$", "", f["name"]): f for f in report["functions"]}
    failures = []
    for spec in sys.argv[2:]:
        name, _, checks = spec.partition(":")
        f = functions.get(name)
        if f is None:
            failures.append("%s: not in the report (functions: %s)" % (name, ", ".join(functions)))
            continue
        totals = f["totals"]
        print("%s: calls=%d wall=%.1fms blocked=%.1fms" % (
            name, totals["calls"], totals["wall_ns"] / 1e6, totals["blocked_ns"] / 1e6))
        for check in checks.split(","):
            if check.startswith("calls="):
                if totals["calls"] != int(check[6:]):
                    failures.append("%s: %d calls, expected %s" % (name, totals["calls"], check[6:]))
            else:
                metric, _, ms = check[len("min-"):].partition("=")
                got = totals[metric + "_ns"] / 1e6
                if got < float(ms):
                    failures.append("%s: %s %.1f ms, expected at least %s" % (name, metric, got, ms))
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

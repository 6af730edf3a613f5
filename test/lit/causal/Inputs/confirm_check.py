#!/usr/bin/env python3
"""Helpers of confirm.test (A/B confirmation runs). Source lines are named by
a marker text on them, so the test does not hard-code line numbers.

  confirm_check.py ranking OUT SOURCE MARKER
      writes to OUT a synthetic profile of one run whose ranking puts the
      line holding MARKER first with the curve min(s, 0.5): a prediction of
      +33.7 % at 50 % (what a noisy profile may claim of a line that does
      not matter)
  confirm_check.py verdict REPORT_JSON SOURCE MARKER[|MARKER...] VERDICT LOW HIGH
      the confirmation in `causal report --json` output of the line holding
      one of the MARKERs (the first one confirmed) has this verdict and an
      A/B estimate within [LOW, HIGH] (percent)
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from profile_check import marker_line  # noqa: E402  (the same marker rule)


def fail(msg):
    sys.stderr.write("confirm_check: FAIL: %s\n" % msg)
    sys.exit(1)



def ranking(out, source, marker):
    line = "%s:%d" % (os.path.realpath(source), marker_line(source, marker))
    rows = ["startup\ttime=1\tprofiler=causal\tsample-period=1000000"]
    for k in range(21):
        s = k / 20.0
        y = min(s, 0.5)
        for _ in range(2):
            rows.append("experiment\tselected=%s\tspeedup=%.2f\tduration=%d\tselected-samples=100"
                        % (line, s, round(1e9 * (1 - y))))
            rows.append("throughput-point\tname=round\tdelta=1000")
    # 100 samples a second, as in the 0 % experiments: phase factor 1.
    rows.append("runtime\ttime=42000000000")
    rows.append("samples\tlocation=%s\tcount=4200" % line)
    with open(out, "w") as f:
        f.write("\n".join(rows) + "\n")


def verdict(report, source, markers, expected, low, high):
    with open(report) as f:
        data = json.load(f)
    wanted = {marker_line(source, m) for m in markers.split("|")}
    found = []
    for c in data["confirmations"]:
        path, _, number = c["line"].rpartition(":")
        if os.path.realpath(path) == os.path.realpath(source) and int(number) in wanted:
            found.append(c)
    if not found:
        fail("no confirmation of %s lines %s in %s: %s" % (source, sorted(wanted), report,
                                                           data["confirmations"]))
    c = found[0]
    summary = "%s: %s, %s %s at %s, %d pairs, predicted %s (%s)" % (
        c["line"], c["verdict"], c["estimate"], c["ci"], c["speedup"], c["pairs"],
        c["prediction"], c["reason"])
    print(summary)
    if c["verdict"] != expected:
        fail("expected %s: %s" % (expected, summary))
    if c["estimate"] is None or not (low / 100.0 <= c["estimate"] <= high / 100.0):
        fail("estimate outside [%s%%, %s%%]: %s" % (low, high, summary))


def main(argv):
    if len(argv) == 5 and argv[1] == "ranking":
        ranking(argv[2], argv[3], argv[4])
    elif len(argv) == 8 and argv[1] == "verdict":
        verdict(argv[2], argv[3], argv[4], argv[5], float(argv[6]), float(argv[7]))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

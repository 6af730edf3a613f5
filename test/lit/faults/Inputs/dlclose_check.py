#!/usr/bin/env python3
"""Checks the progress point of a library loaded and unloaded many times.

  dlclose_check.py PROFILE CALLS_FILE POINT

CALLS_FILE holds the calls the program made to the point. Experiments run
back to back from the first load to the exit, with a 10 ms cool-off between
them (runtime.md), so they see most calls but never more: the sum of the
point's deltas must be at most the calls made (a counter read twice across
an unload would exceed it) and at least half of them (lost counters read 0:
before slots were reused, every experiment after the 64th load read 0). The
last quarter of the experiments, all after hundreds of loads, must count
too: at least a fifth of what an even share of the calls would give them
(their lengths differ; under a loaded machine the caller runs unevenly).
"""
import sys


def fail(message):
    sys.stderr.write("dlclose_check: FAIL: %s\n" % message)
    sys.exit(1)


def main(profile, calls_file, point):
    with open(calls_file) as f:
        calls = int(f.read().split()[0])
    experiments = []  # [duration, delta of the point]
    with open(profile) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            keys = dict(field.split("=", 1) for field in fields[1:] if "=" in field)
            if fields[0] == "experiment":
                experiments.append([int(keys["duration"]), 0])
            elif fields[0] == "throughput-point" and keys.get("name") == point:
                experiments[-1][1] += int(keys["delta"])
    if len(experiments) < 4:
        fail("only %d experiments" % len(experiments))
    total = sum(delta for _, delta in experiments)
    if total > calls:
        fail("experiments counted %d visits, more than the %d calls made" % (total, calls))
    if total < calls / 2:
        fail("experiments counted %d visits of %d calls made" % (total, calls))
    last = experiments[len(experiments) * 3 // 4:]
    last_total = sum(delta for _, delta in last)
    fair_share = calls * len(last) / len(experiments)
    if last_total < fair_share / 5:
        fail("the last %d experiments counted %d visits; an even share is %d" %
             (len(last), last_total, fair_share))
    print("dlclose_check: %d experiments counted %d of %d calls, the last %d: %d" %
          (len(experiments), total, calls, len(last), last_total))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        sys.exit(2)
    main(*sys.argv[1:])

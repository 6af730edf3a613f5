#!/usr/bin/env python3
"""Checks the experiments of a profile against the marked lines of a source.

usage: wait_experiments.py PROFILE SOURCE fixed MARK KIND SPEEDUP
       wait_experiments.py PROFILE SOURCE free MARK KIND NOT_MARK[,NOT_MARK...]

`fixed`: every experiment selects "SOURCE:LINE-of-MARK (KIND wait)" at the
speedup, took selected waits (selected-samples > 0) and inserted a delay of
about speedup x their blocked time (selected-samples x the period, a time
rounded to the nearest period, so give or take half a period; within 35 %
either way: the profiler thread also raises the count for the wait still in
progress when the window closes). The last experiment of a run is
ended by the program's exit, possibly during a wait: that wait's time so far
is delay too (raised by the profiler thread as the wait lasted) but, never
ended, not in selected-samples; its delay may then be anything from the
ended waits' share up to speedup x its elapsed time (none ended: 0 and up).
`free`: some experiment selects MARK's line as a KIND wait, some selects a
line's code, and none selects a NOT_MARK's line as a wait.
Prints what it found and exits 1 on a failed check."""
import os
import re
import sys


def marked_line(source, mark):
    with open(source) as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith("// " + mark):
                return number
    sys.exit("no line marked " + mark)


def experiments(profile):
    period = 1000000
    found = []
    with open(profile) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            values = dict(x.split("=", 1) for x in fields[1:] if "=" in x)
            if fields[0] == "startup" and "sample-period" in values:
                period = int(values["sample-period"])
            if fields[0] == "startup" and found:
                found[-1]["last_of_run"] = True
            if fields[0] == "experiment":
                values["period"] = period
                found.append(values)
    if found:
        found[-1]["last_of_run"] = True
    return found


def main():
    profile, source, mode, mark, kind = sys.argv[1:6]
    name = "%s:%d" % (os.path.basename(source), marked_line(source, mark))
    wait_name = re.compile(r"(^|/)%s \(%s wait\)$" % (re.escape(name), kind))
    found = experiments(profile)
    print("experiments: %d" % len(found))
    failed = False
    if mode == "fixed":
        speedup = float(sys.argv[6])
        for e in found:
            if not wait_name.search(e["selected"]) or float(e["speedup"]) != speedup:
                print("not the fixed wait: %s at %s" % (e["selected"], e["speedup"]))
                failed = True
                continue
            blocked = int(e["selected-samples"]) * e["period"]
            # selected-samples is the selected waits' time rounded to the
            # nearest period: the time itself is within half a period of it
            # (an experiment cut short with less than 1.5 ms of them: CI once
            # had 1 sample for a delay of 0.32 ms, 0.64 ms of waits).
            least = max(0, blocked - e["period"] // 2)
            most = blocked + e["period"] // 2
            delay = int(e["delay"])
            elapsed = int(e["duration"]) + delay
            if e.get("last_of_run") and 0.65 * speedup * least <= delay <= speedup * elapsed:
                # Cut short by the program's exit, perhaps during a selected
                # wait, whose time so far is delay but not selected-samples.
                continue
            if blocked <= 0 or not (0.65 * speedup * least <= delay <= 1.35 * speedup * most):
                print("delay %d for %d ns of selected waits at %s" % (delay, blocked, speedup))
                failed = True
        print("fixed wait: %s" % ("wrong" if failed or not found else "ok"))
        failed |= not found
    else:
        others = ["%s:%d" % (os.path.basename(source), marked_line(source, m))
                  for m in sys.argv[6].split(",")]
        waits = [e for e in found if wait_name.search(e["selected"])]
        code = [e for e in found if not e["selected"].endswith(" wait)")]
        wrong = [e for e in found for other in others
                 if re.search(r"(^|/)%s \(" % re.escape(other), e["selected"])]
        print("wait experiments: %s" % ("some" if waits else "none"))
        print("code experiments: %s" % ("some" if code else "none"))
        print("experiments on waits a program thread ends: %d" % len(wrong))
        failed = not waits or not code or bool(wrong)
    sys.exit(1 if failed else 0)


main()

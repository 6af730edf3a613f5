#!/usr/bin/env python3
"""Assertions on the `samples` records of a profile, for end-to-end tests.

Source lines are named by a marker comment (e.g. "// HOT") so tests do not
hard-code line numbers.

  profile_check.py hottest PROFILE SOURCE MARKER [--with-loop-line]
      the line holding MARKER has the most samples of all lines in PROFILE;
      with --with-loop-line, MARKER's line and the line before it (the loop
      statement of a one-line loop body) count as one: where in such a loop
      the timer lands, on the body or on the increment and branch, moves
      with the vCPU's load (a loaded 2-vCPU VM gave 30 of 35 samples to the
      loop line, a quiet one most to the body)
  profile_check.py has PROFILE SOURCE MARKER [--min-share PCT | --min-file-share PCT]
      the line holding MARKER has samples (at least PCT % of all samples, or
      of the samples in SOURCE's lines: the latter does not depend on how
      fast the rest of the program ran)
  profile_check.py below PROFILE SOURCE MARKER_LOW MARKER_HIGH
      MARKER_LOW's line has fewer samples than MARKER_HIGH's
"""
import os
import sys


def fail(msg):
    sys.stderr.write("profile_check: FAIL: %s\n" % msg)
    sys.exit(1)


def marker_line(source, marker):
    with open(source) as f:
        hits = [i + 1 for i, text in enumerate(f) if marker in text]
    if len(hits) != 1:
        fail("marker %r found %d times in %s" % (marker, len(hits), source))
    return hits[0]


def samples(profile):
    """Samples per (file, line), summed over runs. Within a run counts are
    cumulative and the last one of a location counts: a run written in parts
    (the periodic flush) writes a line again in each part where it changed,
    its later parts naming the run (runtime run=ID) wherever other runs'
    blocks came in between."""
    runs = {}        # run key -> {(file, line): count}
    parts = {}       # run= id -> run key
    current = None
    with open(profile) as f:
        for raw in f:
            fields = raw.rstrip("\n").split("\t")
            kv = dict(field.split("=", 1) for field in fields[1:] if "=" in field)
            if fields[0] == "startup":
                current = len(runs)
                runs[current] = {}
                if "run" in kv:
                    parts[kv["run"]] = current
            elif fields[0] == "runtime" and "run" in kv:
                current = parts.setdefault(kv["run"], len(runs))
                runs.setdefault(current, {})
            elif fields[0] == "samples":
                if current is None:
                    current = len(runs)
                    runs[current] = {}
                path, _, line = kv["location"].rpartition(":")
                runs[current][(os.path.realpath(path), int(line))] = int(kv["count"])
    counts = {}
    for run in runs.values():
        for key, count in run.items():
            counts[key] = counts.get(key, 0) + count
    if not counts:
        fail("no samples records in %s" % profile)
    return counts


def count_at(counts, source, line):
    return counts.get((os.path.realpath(source), line), 0)


def describe(counts, n=5):
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join("%s:%d=%d" % (os.path.basename(p), l, c) for (p, l), c in top)


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    cmd, profile, source = argv[1], argv[2], argv[3]
    counts = samples(profile)
    total = sum(counts.values())
    if cmd == "hottest":
        line = marker_line(source, argv[4])
        mine = count_at(counts, source, line)
        if len(argv) > 5 and argv[5] == "--with-loop-line":
            loop = (os.path.realpath(source), line - 1)
            mine += counts.pop(loop, 0)
            counts[(os.path.realpath(source), line)] = mine
        elif len(argv) > 5:
            fail("unknown option %r" % argv[5])
        best = max(counts.values())
        if mine != best:
            fail("line %d (%s) has %d samples; hottest: %s" % (line, argv[4], mine, describe(counts)))
    elif cmd == "has":
        line = marker_line(source, argv[4])
        mine = count_at(counts, source, line)
        share, among, what = 0.0, total, "all"
        if len(argv) > 6 and argv[5] == "--min-share":
            share = float(argv[6])
        elif len(argv) > 6 and argv[5] == "--min-file-share":
            share, what = float(argv[6]), os.path.basename(source) + "'s"
            among = sum(c for (p, _), c in counts.items() if p == os.path.realpath(source))
        elif len(argv) > 5:
            fail("unknown option %r" % argv[5])
        if mine == 0 or 100.0 * mine / among < share:
            fail("line %d (%s) has %d of %s %d samples (want > 0 and >= %.1f%%); top: %s"
                 % (line, argv[4], mine, what, among, share, describe(counts)))
    elif cmd == "below":
        low = count_at(counts, source, marker_line(source, argv[4]))
        high = count_at(counts, source, marker_line(source, argv[5]))
        if not low < high:
            fail("%s has %d samples, %s has %d; expected fewer" % (argv[4], low, argv[5], high))
    else:
        sys.stderr.write(__doc__)
        return 2
    print("profile_check: ok (%s, %d samples; top: %s)" % (cmd, total, describe(counts, 3)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Checks a profile's last `runtime` record: the samples expected from the
sampled threads' CPU time against those that arrived.

  sample_account.py PROFILE --min-expected N [--min-ratio R] [--max-ratio R]

ratio = arrived / expected. Prints the figures.
"""
import sys


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    profile = argv[1]
    opts = dict(zip(argv[2::2], argv[3::2]))
    runtime = None
    with open(profile) as f:
        for raw in f:
            fields = raw.rstrip("\n").split("\t")
            if fields[0] == "runtime":
                runtime = dict(field.split("=", 1) for field in fields[1:])
    if runtime is None or "samples-expected" not in runtime:
        sys.stderr.write("sample_account: FAIL: no runtime record with samples-expected in %s\n" % profile)
        return 1
    expected = int(runtime["samples-expected"])
    arrived = int(runtime["samples-arrived"])
    ratio = arrived / expected if expected else float("inf")
    print("expected=%d arrived=%d ratio=%.2f" % (expected, arrived, ratio))
    if expected < int(opts.get("--min-expected", "0")):
        sys.stderr.write("sample_account: FAIL: expected %d < %s\n" % (expected, opts["--min-expected"]))
        return 1
    if "--min-ratio" in opts and ratio < float(opts["--min-ratio"]):
        sys.stderr.write("sample_account: FAIL: ratio %.2f < %s\n" % (ratio, opts["--min-ratio"]))
        return 1
    if "--max-ratio" in opts and ratio > float(opts["--max-ratio"]):
        sys.stderr.write("sample_account: FAIL: ratio %.2f > %s\n" % (ratio, opts["--max-ratio"]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Checks a `causal paths report --folded` output (one line per calling
context, `frame;frame;...;chosen VALUE`, outermost frame first, a frame
`function (FILE:LINE)` or `function`).

  paths_check.py FOLDED [--calls STACK=N ...] [--share STACK=P ...] [--tol T]
                        [--absent STACK ...] [--lines N]

STACK is `f;g;h`: the function names (without their locations and C++
parameter lists) that the
END of a line's stack must equal (h the chosen function, g its caller...).
--calls: the values of the lines whose stack ends so sum to exactly N.
--share: those lines hold P % (within T points) of the values of all lines
         whose chosen function (last frame) is the same as STACK's.
--absent: no line's stack ends so.
--lines: the file has exactly N lines."""
import argparse
import re
import sys


def function_of(frame):
    """The function of a frame, without its location and its C++ parameter
    list: `jumping_loop(int) (unwind.cpp:44)` -> `jumping_loop`."""
    name = re.sub(r" \([^()]*\)$", "", frame.strip())
    return re.sub(r"\([^()]*\)$", "", name)


def read(path):
    rows = []
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, value = line.rpartition(" ")
        if not stack or not value.isdigit():
            sys.exit("%s:%d: not a folded line: %r" % (path, number, line))
        rows.append(([function_of(f) for f in stack.split(";")], int(value)))
    return rows


def ends_with(frames, suffix):
    return len(frames) >= len(suffix) and frames[len(frames) - len(suffix):] == suffix


def spec(text):
    stack, _, value = text.rpartition("=")
    return stack.split(";"), float(value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folded")
    parser.add_argument("--calls", action="append", default=[])
    parser.add_argument("--share", action="append", default=[])
    parser.add_argument("--absent", action="append", default=[])
    parser.add_argument("--tol", type=float, default=5.0)
    parser.add_argument("--lines", type=int)
    args = parser.parse_args()
    rows = read(args.folded)
    failures = []
    if args.lines is not None and len(rows) != args.lines:
        failures.append("%d lines, expected %d" % (len(rows), args.lines))
    for text in args.calls:
        suffix, expected = spec(text)
        got = sum(v for frames, v in rows if ends_with(frames, suffix))
        if got != int(expected):
            failures.append("%s: %d, expected %d" % (";".join(suffix), got, int(expected)))
    for text in args.share:
        suffix, expected = spec(text)
        total = sum(v for frames, v in rows if frames[-1] == suffix[-1])
        part = sum(v for frames, v in rows if ends_with(frames, suffix))
        share = 100.0 * part / total if total else 0.0
        status = "ok" if abs(share - expected) <= args.tol else "FAIL"
        print("%s: %.1f %% (expected %.1f +- %.1f) %s" % (";".join(suffix), share, expected, args.tol, status))
        if status != "ok":
            failures.append("%s: share %.1f %%, expected %.1f +- %.1f" % (";".join(suffix), share, expected, args.tol))
    for text in args.absent:
        suffix = text.split(";")
        if any(ends_with(frames, suffix) for frames, _ in rows):
            failures.append("%s: present, expected absent" % text)
    if failures:
        for line in open(args.folded, encoding="utf-8"):
            sys.stderr.write("  | " + line)
        for failure in failures:
            sys.stderr.write("paths_check: " + failure + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks that progress-point names survive a profiled run.

  progress_names_check.py NAMES_HEX PROFILE REPORT_JSON

NAMES_HEX: the program's names, one hex-encoded byte string per line.
Every name must come back, as the same bytes, (1) from the profile's lines
read the way Coz's viewer reads them (split at tabs, each field at its first
'='), unescaped as docs/report.md says, and (2) from `causal report --json`.
A name of CAUSAL_MAX_POINT_NAME (1024) bytes or more comes back shortened
visibly: its beginning, "...#" and the FNV-1a hash of the whole name, so two
long names stay two points. No record may be split over lines.
"""
import json
import re
import sys

MAX_NAME = 1024
KNOWN_TYPES = {b"startup", b"experiment", b"throughput-point", b"latency-point",
               b"runtime", b"samples"}


def fail(message):
    sys.stderr.write("progress_names_check: FAIL: %s\n" % message)
    sys.exit(1)


def stored(name):
    if len(name) < MAX_NAME:
        return name
    h = 0xcbf29ce484222325
    for byte in name:
        h = ((h ^ byte) * 0x100000001b3) & 0xffffffffffffffff
    keep = MAX_NAME - 1 - 20
    while keep > 0 and (name[keep] & 0xc0) == 0x80:
        keep -= 1
    return name[:keep] + b"...#" + b"%016x" % h


def unescape(value):
    out = bytearray()
    i = 0
    while i < len(value):
        c = value[i:i + 1]
        nxt = value[i + 1:i + 2]
        if c == b"\\" and nxt in (b"\\", b"t", b"n", b"r"):
            out += {b"\\": b"\\", b"t": b"\t", b"n": b"\n", b"r": b"\r"}[nxt]
            i += 2
        elif c == b"\\" and nxt == b"x" and re.fullmatch(rb"[0-9a-fA-F]{2}", value[i + 2:i + 4]):
            out.append(int(value[i + 2:i + 4], 16))
            i += 4
        else:
            out += c
            i += 1
    return bytes(out)


def main(names_hex, profile, report_json):
    with open(names_hex) as f:
        names = [bytes.fromhex(line.strip()) for line in f if line.strip()]
    expected = {stored(n) for n in names}
    if len(expected) != len(names):
        fail("two names of the program store the same: the test is wrong")
    latency = {stored(b"lat\tency")}

    seen = {}
    with open(profile, "rb") as f:
        for number, line in enumerate(f.read().split(b"\n")[:-1], 1):
            fields = line.split(b"\t")
            if fields[0] not in KNOWN_TYPES:
                fail("line %d is not a record (a name broke a line?): %r" % (number, line[:80]))
            for field in fields[1:]:
                if b"=" not in field:
                    fail("line %d: field %r has no '='" % (number, field[:80]))
            if fields[0] in (b"throughput-point", b"latency-point"):
                keys = dict(field.split(b"=", 1) for field in fields[1:])
                name = unescape(keys[b"name"])
                seen.setdefault(name, set()).add(fields[0])
    if set(seen) != expected:
        fail("names in the profile differ: missing %r, unexpected %r" %
             (sorted(expected - set(seen))[:3], sorted(set(seen) - expected)[:3]))
    for name, kinds in seen.items():
        want = b"latency-point" if name in latency else b"throughput-point"
        if kinds != {want}:
            fail("point %r written as %r" % (name[:40], kinds))

    with open(report_json, "rb") as f:
        report = json.loads(f.read().decode("utf-8", errors="surrogateescape"))
    points = {}
    for point in report["progress_points"]:
        name = point["name"].encode("utf-8", errors="surrogateescape")
        if name in points:
            fail("causal report lists %r twice" % name[:40])
        points[name] = point
    if set(points) != expected:
        fail("names in causal report differ: missing %r, unexpected %r" %
             (sorted(expected - set(points))[:3], sorted(set(points) - expected)[:3]))
    for name, point in points.items():
        want = "latency" if name in latency else "throughput"
        if point["kind"] != want:
            fail("point %r is %s in the report" % (name[:40], point["kind"]))
        # A run of one experiment at a high speedup may have its only
        # experiment ignored (duration <= 0): its points are still listed.
        if not (point["visits"] > 0 or point["ignored_experiments"] > 0):
            fail("point %r has no visits in the report" % name[:40])
    print("progress_names_check: %d names round-trip" % len(expected))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        sys.exit(2)
    main(*sys.argv[1:])

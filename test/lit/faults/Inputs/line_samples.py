#!/usr/bin/env python3
"""The samples of the line holding MARKER in SOURCE, from PROFILE's last
`samples` records; fails unless at least --min.

  line_samples.py PROFILE SOURCE MARKER --min N
"""
import os
import sys


def main(argv):
    if len(argv) != 6 or argv[4] != "--min":
        sys.stderr.write(__doc__)
        return 2
    profile, source, marker, minimum = argv[1], argv[2], argv[3], int(argv[5])
    with open(source) as f:
        hits = [i + 1 for i, text in enumerate(f) if marker in text]
    if len(hits) != 1:
        sys.stderr.write("line_samples: FAIL: marker %r found %d times\n" % (marker, len(hits)))
        return 1
    name = os.path.basename(source)
    count = 0
    with open(profile) as f:
        for raw in f:
            fields = raw.rstrip("\n").split("\t")
            if fields[0] != "samples":
                continue
            kv = dict(field.split("=", 1) for field in fields[1:])
            path, _, line = kv["location"].rpartition(":")
            if os.path.basename(path) == name and int(line) == hits[0]:
                count = int(kv["count"])  # cumulative: the last one counts
    print("%s:%d: %d samples" % (name, hits[0], count))
    if count < minimum:
        sys.stderr.write("line_samples: FAIL: %d < %d\n" % (count, minimum))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

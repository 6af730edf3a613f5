#!/usr/bin/env python3
"""  has_experiments.py PROFILE POINT
Fails unless PROFILE holds experiments and POINT counted visits in them."""
import sys

experiments = visits = 0
with open(sys.argv[1]) as f:
    for line in f:
        fields = line.rstrip("\n").split("\t")
        keys = dict(field.split("=", 1) for field in fields[1:] if "=" in field)
        if fields[0] == "experiment":
            experiments += 1
        elif fields[0] == "throughput-point" and keys.get("name") == sys.argv[2]:
            visits += int(keys["delta"])
if not experiments or not visits:
    sys.stderr.write("has_experiments: FAIL: %d experiments, %d visits of %s\n" %
                     (experiments, visits, sys.argv[2]))
    sys.exit(1)
print("has_experiments: %d experiments, %d visits" % (experiments, visits))

"""Independent oracle: every row of `causal lines BINARY` must agree with
llvm-symbolizer (no inlining) on BINARY_G at the row's first and last byte.

usage: symbolizer_agrees.py CAUSAL LLVM_SYMBOLIZER BINARY BINARY_G
prints "rows checked: N, disagreeing: M" and the first disagreements.
"""
import os
import re
import subprocess
import sys

causal, symbolizer, binary, binary_g = sys.argv[1:5]
listing = subprocess.run([causal, "lines", binary], check=True, capture_output=True,
                         text=True).stdout
rows = []
for line in listing.splitlines():
    m = re.match(r"0x([0-9a-f]+)-0x([0-9a-f]+) (.*):(\d+)$", line)
    if m:
        rows.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3), int(m.group(4))))
addresses = []
for lo, hi, _, _ in rows:
    addresses += [lo, hi - 1]
out = subprocess.run([symbolizer, "--no-inlines", "--obj=" + binary_g] +
                     [hex(a) for a in addresses], check=True, capture_output=True,
                     text=True).stdout
answers = [b for b in out.split("\n\n") if b.strip()]
if len(answers) != len(addresses):
    sys.exit("llvm-symbolizer gave %d answers for %d addresses" % (len(answers), len(addresses)))
bad = []
for i, (lo, hi, path, line) in enumerate(rows):
    for address, answer in zip((lo, hi - 1), answers[2 * i:2 * i + 2]):
        location = answer.strip().splitlines()[-1]
        m = re.match(r"(.*):(\d+):\d+$", location)
        got = (os.path.normpath(m.group(1)), int(m.group(2))) if m else (location, 0)
        if got != (path, line):
            bad.append("%#x: table %s:%d, llvm-symbolizer %s" % (address, path, line, location))
print("rows checked: %d, disagreeing: %d" % (len(rows), len(bad)))
for b in bad[:5]:
    print("  " + b)

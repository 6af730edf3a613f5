"""Writes a sample log in the runtime's format (CAUSAL_SAMPLE_LOG lines
"<module path> <link-time address hex> <count>") with one sample at the first
and last byte of every row of `causal lines BINARY`, plus samples of another
module that the check must ignore.

usage: fake_samples.py CAUSAL BINARY OUT
"""
import re
import subprocess
import sys

causal, binary, out = sys.argv[1:4]
listing = subprocess.run([causal, "lines", binary], check=True, capture_output=True,
                         text=True).stdout
with open(out, "w") as f:
    for line in listing.splitlines():
        m = re.match(r"0x([0-9a-f]+)-0x([0-9a-f]+) /", line)
        if m:
            lo, hi = int(m.group(1), 16), int(m.group(2), 16)
            f.write("%s %x 3\n%s 0x%x 2\n" % (binary, lo, binary, hi - 1))
    f.write("/usr/lib/x86_64-linux-gnu/libc.so.6 29dc0 7\n")

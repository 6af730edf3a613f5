#!/usr/bin/env python3
"""Runs `scenes channel KIND STYLE` under `causal run --waits` for every
channel kind and waiting style (or those given as KIND:STYLE) and prints, for
each, the receiver's first episode (where it waited and who woke it):

  channels.py SCENES OUTDIR SOURCE [KIND:STYLE...]
  -> KIND STYLE: kind=K line=L waker=W waker_line=WL episodes=N (the receiver's)
"""
import os
import re
import subprocess
import sys

KINDS = ["pipe", "socketpair", "tcp", "eventfd"]
STYLES = ["read", "poll", "select", "epoll"]


def main(argv):
    scenes, outdir, source = argv[1:4]
    pairs = [tuple(a.split(":")) for a in argv[4:]] or [(k, s) for k in KINDS for s in STYLES]
    os.makedirs(outdir, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    for kind, style in pairs:
        profile = os.path.join(outdir, "%s-%s.coz" % (kind, style))
        run = subprocess.run(["causal", "run", "--waits", "--output", profile, "--", scenes,
                              "channel", kind, style], capture_output=True, text=True, timeout=120)
        if run.returncode != 5 or "received" not in run.stdout:
            print("%s %s: failed (status %d): %s %s" % (kind, style, run.returncode, run.stdout,
                                                         run.stderr))
            continue
        dump = subprocess.run([sys.executable, os.path.join(here, "waits_dump.py"),
                               profile + ".waits", source], capture_output=True, text=True)
        mine = [l for l in dump.stdout.splitlines() if l.startswith("episode thread=receiver")]
        first = mine[0] if mine else ""
        fields = dict(re.findall(r"(\w+)=(\S+)", first))
        print("%s %s: kind=%s line=%s waker=%s waker_line=%s episodes=%d" % (
            kind, style, fields.get("kind"), fields.get("line"), fields.get("waker"),
            fields.get("waker_line"), len(mine)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

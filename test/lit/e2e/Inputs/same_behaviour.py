#!/usr/bin/env python3
"""Runs a profiled and a plain build of a program with the same arguments and
fails unless both print the same standard output and exit the same way.

  same_behaviour.py [--env NAME=VALUE]... PROFILED PLAIN [-- ARGS...]

--env settings apply to the profiled run only (e.g. CAUSAL_OUTPUT).
"""
import os
import subprocess
import sys


def main(argv):
    env_extra = {}
    args = argv[1:]
    while args and args[0] == "--env":
        name, _, value = args[1].partition("=")
        env_extra[name] = value
        args = args[2:]
    if len(args) < 2:
        sys.stderr.write(__doc__)
        return 2
    profiled, plain = args[0], args[1]
    prog_args = args[3:] if len(args) > 2 and args[2] == "--" else args[2:]
    env = dict(os.environ)
    env.update(env_extra)
    a = subprocess.run([profiled] + prog_args, env=env, capture_output=True, timeout=600)
    b = subprocess.run([plain] + prog_args, capture_output=True, timeout=600)
    ok = True
    if a.returncode != b.returncode:
        sys.stderr.write("exit status differs: profiled %d, plain %d\n" % (a.returncode, b.returncode))
        ok = False
    if a.stdout != b.stdout:
        sys.stderr.write("stdout differs:\n--- profiled\n%s--- plain\n%s" %
                         (a.stdout.decode(errors="replace"), b.stdout.decode(errors="replace")))
        ok = False
    if a.stderr != b.stderr:
        sys.stderr.write("note: stderr differs:\n--- profiled\n%s--- plain\n%s" %
                         (a.stderr.decode(errors="replace"), b.stderr.decode(errors="replace")))
        ok = False
    if not ok:
        return 1
    print("same_behaviour: ok (exit %d, %d bytes of output)" % (a.returncode, len(a.stdout)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

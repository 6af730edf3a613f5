#!/usr/bin/env python3
"""Runs a profiled and a plain build of a program with the same arguments and
limits and fails unless both print the same standard output and exit the same
way. Unlike e2e's same_behaviour.py the profiler may speak on stderr (the
fault tests check what it says): the profiled run's stderr goes to a file.

  native_vs_profiled.py [--nofile N] [--env NAME=VALUE]... --stderr FILE PROFILED PLAIN [-- ARGS...]

--nofile sets the soft RLIMIT_NOFILE of both runs; --env applies to the
profiled run only.
"""
import os
import resource
import subprocess
import sys


def main(argv):
    env_extra, nofile, stderr_file = {}, None, None
    args = argv[1:]
    while args and args[0].startswith("--") and args[0] != "--":
        if args[0] == "--env":
            name, _, value = args[1].partition("=")
            env_extra[name] = value
        elif args[0] == "--nofile":
            nofile = int(args[1])
        elif args[0] == "--stderr":
            stderr_file = args[1]
        else:
            sys.stderr.write(__doc__)
            return 2
        args = args[2:]
    if len(args) < 2 or not stderr_file:
        sys.stderr.write(__doc__)
        return 2
    profiled, plain = args[0], args[1]
    prog_args = args[3:] if len(args) > 2 and args[2] == "--" else args[2:]

    def limits():
        if nofile is not None:
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))

    env = dict(os.environ)
    env.update(env_extra)
    a = subprocess.run([profiled] + prog_args, env=env, capture_output=True, timeout=600,
                       preexec_fn=limits)
    b = subprocess.run([plain] + prog_args, capture_output=True, timeout=600, preexec_fn=limits)
    with open(stderr_file, "wb") as f:
        f.write(a.stderr)
    ok = True
    if a.returncode != b.returncode:
        sys.stderr.write("exit status differs: profiled %d, plain %d\n" % (a.returncode, b.returncode))
        ok = False
    if a.stdout != b.stdout:
        sys.stderr.write("stdout differs:\n--- profiled\n%s--- plain\n%s" %
                         (a.stdout.decode(errors="replace"), b.stdout.decode(errors="replace")))
        ok = False
    if b.stderr:
        sys.stderr.write("note: the plain run wrote to stderr:\n%s" % b.stderr.decode(errors="replace"))
    if not ok:
        return 1
    sys.stdout.write(a.stdout.decode(errors="replace"))
    print("native_vs_profiled: same (exit %d, %d bytes of output)" % (a.returncode, len(a.stdout)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

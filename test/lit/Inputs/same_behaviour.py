#!/usr/bin/env python3
"""Runs a profiled and a plain build of a program with the same arguments and
fails unless both print the same standard output and exit the same way.

  same_behaviour.py [OPTIONS] PROFILED PLAIN [-- ARGS...]

  --env NAME=VALUE   a setting for the profiled run only (e.g. CAUSAL_OUTPUT)
  --under "WORDS"    run the profiled build as WORDS PROFILED ARGS... (split at
                     blanks), e.g. --under "causal run --paths --": the signal
                     goes to the first word's process
  --signal SIG       once the program has printed a line "ready" on stdout,
                     send it SIG (a name: TERM, INT, KILL, ...), as a user, a
                     service manager or a shell would; both runs get the same
  --after SECONDS    wait that long after "ready" before the signal (default 0.2)
  --nofile N         run both with a limit of N open descriptors (ulimit -n N)
  --stderr-may-differ  a difference in stderr is a note, not a failure (the
                     profiler says why it cannot do something)
  --stderr FILE      write the profiled run's stderr to FILE for the test to
                     check (implies --stderr-may-differ)
  --echo             on success, print the program's stdout first (for the
                     test to check what the program said)

Core dumps are off in both runs (RLIMIT_CORE 0). The exit status compared is
the signal number for a run a signal ended (Python's -N).
"""
import os
import resource
import signal
import subprocess
import sys
import time


def run(command, env, options):
    def limits():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # The signal sent must reach a default disposition, as under a
        # terminal or a service manager: a shell's background job (and lit's
        # workers) start with SIGINT and SIGQUIT ignored, which exec keeps.
        if options["signal"] not in (None, signal.SIGKILL, signal.SIGSTOP):
            signal.signal(options["signal"], signal.SIG_DFL)
        if options["nofile"] is not None:
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (options["nofile"], hard))
    if options["signal"] is None:
        result = subprocess.run(command, env=env, capture_output=True, timeout=600,
                                preexec_fn=limits)
        return result.returncode, result.stdout, result.stderr
    # Unbuffered: readline() takes the first line only, so what the program
    # printed after it (in the same write) reaches communicate().
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=limits, bufsize=0)
    first = child.stdout.readline()
    if first.strip() == b"ready":
        time.sleep(options["after"])
        child.send_signal(options["signal"])
    else:
        sys.stderr.write("same_behaviour: %s printed %r, not 'ready': no signal sent\n" %
                         (command[0], first))
    out, err = child.communicate(timeout=600)
    return child.returncode, first + out, err


def main(argv):
    env_extra = {}
    options = {"signal": None, "after": 0.2, "nofile": None, "stderr_may_differ": False,
               "stderr": None, "echo": False, "under": []}
    args = argv[1:]
    while args and args[0].startswith("--") and args[0] != "--":
        if args[0] == "--env":
            name, _, value = args[1].partition("=")
            env_extra[name] = value
        elif args[0] == "--signal":
            options["signal"] = getattr(signal, "SIG" + args[1].upper().replace("SIG", "", 1))
        elif args[0] == "--under":
            options["under"] = args[1].split()
        elif args[0] == "--after":
            options["after"] = float(args[1])
        elif args[0] == "--nofile":
            options["nofile"] = int(args[1])
        elif args[0] == "--stderr-may-differ":
            options["stderr_may_differ"] = True
            args = args[1:]
            continue
        elif args[0] == "--echo":
            options["echo"] = True
            args = args[1:]
            continue
        elif args[0] == "--stderr":
            options["stderr"] = args[1]
            options["stderr_may_differ"] = True
        else:
            sys.stderr.write("same_behaviour: unknown option %s\n%s" % (args[0], __doc__))
            return 2
        args = args[2:]
    if len(args) < 2:
        sys.stderr.write(__doc__)
        return 2
    profiled, plain = args[0], args[1]
    prog_args = args[3:] if len(args) > 2 and args[2] == "--" else args[2:]
    env = dict(os.environ)
    env.update(env_extra)
    a_status, a_out, a_err = run(options["under"] + [profiled] + prog_args, env, options)
    b_status, b_out, b_err = run([plain] + prog_args, dict(os.environ), options)
    if options["stderr"]:
        with open(options["stderr"], "wb") as f:
            f.write(a_err)
    ok = True
    if a_status != b_status:
        sys.stderr.write("exit status differs: profiled %d, plain %d\n" % (a_status, b_status))
        ok = False
    if a_out != b_out:
        sys.stderr.write("stdout differs:\n--- profiled\n%s--- plain\n%s" %
                         (a_out.decode(errors="replace"), b_out.decode(errors="replace")))
        ok = False
    if a_err != b_err and not options["stderr"]:
        sys.stderr.write("note: stderr differs:\n--- profiled\n%s--- plain\n%s" %
                         (a_err.decode(errors="replace"), b_err.decode(errors="replace")))
        ok = ok and options["stderr_may_differ"]
    if not ok:
        return 1
    if options["echo"]:
        sys.stdout.write(a_out.decode(errors="replace"))
    print("same_behaviour: ok (exit %d, %d bytes of output)" % (a_status, len(a_out)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Issue 13, P4: live control of a running program's call paths.

Starts Inputs/live.c under `causal run` WITHOUT --paths, then, while it runs:
`causal paths top --once --json` shows no calls; `enable work_a`; top shows
calls of work_a and none of work_b; `disable work_a`; two snapshots a second
apart hold the same calls; the bad inputs (a name that matches nothing, a pid
that is not a causal program, a pid that has exited) get clear messages.
Then the program stops, and its final PROFILE.paths holds the calls. Prints
one line per step checked; any failed check exits 1 with what it saw. Every
wait is bounded: the program itself stops after 120 s.

With --dlopen LIB, the program is Inputs/live_dl.c, whose one chosen
function, lib_step, is in LIB, loaded after start-up: top shows it without
calls, enable gives it calls, and the final PROFILE.paths holds them.

With --kill, the program runs with `--paths=work_a --flush-every 1`: each
flush replaces the run's part file (PROFILE.paths.part-RUN) and
PROFILE.paths is not written while it runs; `causal paths report` reads the
running program's calls from the part file, and after SIGKILL (nothing
written at the end) the part file's calls are what is left.
"""
import argparse
import signal
import json
import os
import subprocess
import sys
import time


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--causal", required=True)
    parser.add_argument("--program", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--dlopen", help="the library of live_dl.c")
    parser.add_argument("--terminate", action="store_true",
                        help="end the program with SIGTERM once it serves control")
    parser.add_argument("--kill", action="store_true",
                        help="--paths=work_a --flush-every 1, then SIGKILL")
    args = parser.parse_args()
    pid_file = os.path.join(args.dir, "live.pid")
    stop_file = os.path.join(args.dir, "live.stop")
    profile = os.path.join(args.dir, "live.coz")
    command = [args.causal, "run", "--output", profile]
    if args.kill:
        command += ["--paths=work_a", "--flush-every", "1"]
    command += ["--", args.program, pid_file, stop_file]
    command += [args.dlopen, "120"] if args.dlopen else ["120"]
    program = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def paths(*words, expect=0):
        command = [args.causal, "paths"] + [str(w) for w in words]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if expect is not None and result.returncode != expect:
            fail("%s: exit status %d, not %d\nstdout: %s\nstderr: %s" %
                 (" ".join(command[1:]), result.returncode, expect, result.stdout, result.stderr))
        return result

    def calls(report):
        return {f["name"]: f["totals"]["calls"] for f in report["functions"]}

    def top(pid):
        return json.loads(paths("top", "--pid", pid, "--once", "--json").stdout)

    try:
        deadline = time.time() + 60
        while not os.path.exists(pid_file):
            if program.poll() is not None or time.time() > deadline:
                fail("the program did not start: %s" % (program.communicate()[1],))
            time.sleep(0.05)
        pid = int(open(pid_file).read())
        if args.dlopen:
            return dlopened(args, pid, paths, calls, top, program, stop_file, profile)
        if args.terminate:
            return terminated(pid, top, program, calls)
        if args.kill:
            return killed(pid, paths, calls, program, profile)

        # Nothing enabled: the functions are there, without calls.
        first = top(pid)
        if calls(first) != {"work_a": 0, "work_b": 0}:
            fail("before enable: %s" % calls(first))
        if [run["pid"] for run in first["runs"]] != [pid]:
            fail("the runs shown: %s" % first["runs"])
        print("before enable: work_a 0 calls, work_b 0 calls")

        enabled = paths("enable", "--pid", pid, "work_a").stdout
        print("enable: " + enabled.strip())

        deadline = time.time() + 60
        while True:
            now = calls(top(pid))
            if now["work_a"] > 0:
                break
            if time.time() > deadline:
                fail("work_a has no calls 60 s after enable: %s" % now)
            time.sleep(0.2)
        if now["work_b"] != 0:
            fail("work_b was not enabled but has calls: %s" % now)
        print("after enable: work_a has calls, work_b 0 calls")

        text = paths("top", "--pid", pid, "--once", "--metric", "wall-ns", "--top", "1").stdout
        if "work_a" not in text or "work_b" in text or "1 of 2 chosen functions enabled" not in text:
            fail("top's text: %s" % text)
        print("top text: work_a (--top 1: not work_b), 1 of 2 chosen functions enabled")

        disabled = paths("disable", "--pid", pid, "work_a").stdout
        print("disable: " + disabled.strip())
        time.sleep(0.3)
        one = calls(top(pid))
        time.sleep(1.0)
        two = calls(top(pid))
        if one["work_a"] == 0 or one != two:
            fail("calls after disable: %s, a second later %s" % (one, two))
        print("after disable: the calls stay")

        # A name that matches nothing: a warning naming it, nothing done.
        unknown = paths("enable", "--pid", pid, "nosuchfn", expect=1)
        print("unknown name: " + unknown.stderr.strip().replace("\n", " | "))
        # A process that is no causal program with chosen functions (pid 1).
        init = paths("top", "--pid", 1, "--once", expect=1)
        print("pid 1: " + init.stderr.strip())
        # The pid of `causal run` itself: the error names the program's.
        runner = paths("enable", "--pid", program.pid, "work_a", expect=1).stderr.strip()
        if runner.find("its program is process %d (--pid %d)" % (pid, pid)) < 0:
            fail("causal run's pid: %s" % runner)
        print("causal run's pid: " + runner.split(": ", 2)[2].split(":")[0])

        open(stop_file, "w").close()
        out, err = program.communicate(timeout=120)
        if program.returncode != 0:
            fail("the program: exit status %d\n%s" % (program.returncode, err))
        print("program: " + out.strip().splitlines()[-1].split(" after")[0])
        gone = paths("top", "--pid", pid, "--once", expect=1)
        print("exited: " + gone.stderr.strip())
        leftover = [name for name in os.listdir("/dev/shm") if name == "causal-%d-%d.paths" %
                    (os.getuid(), pid)] if os.path.isdir("/dev/shm") else []
        if leftover:
            fail("the control file is left: %s" % leftover)
        print("control file removed")

        final = json.loads(paths("report", profile, "--json").stdout)
        last = calls(final)
        if last["work_a"] < two["work_a"] or last["work_b"] != 0:
            fail("the final PROFILE.paths: %s (live: %s)" % (last, two))
        print("final profile: work_a's calls, work_b 0 calls")
    finally:
        if program.poll() is None:
            open(stop_file, "w").close()
            try:
                program.wait(timeout=30)
            except subprocess.TimeoutExpired:
                program.kill()


def control_file(pid):
    return "/dev/shm/causal-%d-%d.paths" % (os.getuid(), pid)


def terminated(pid, top, program, calls):
    """SIGTERM (its default action: the process ends): the control file goes
    with the process, which still dies by the signal."""
    print("terminate: serving: %s" % sorted(calls(top(pid))))
    if not os.path.exists(control_file(pid)):
        fail("no control file %s while the program runs" % control_file(pid))
    os.kill(pid, signal.SIGTERM)
    program.communicate(timeout=120)
    print("terminate: causal run's status %d" % program.returncode)
    if os.path.exists(control_file(pid)):
        fail("the control file is left after SIGTERM: %s" % control_file(pid))
    print("terminate: control file removed")


def killed(pid, paths, calls, program, profile):
    """Parts replace the run's part file; SIGKILL leaves the last one."""
    sidecar = profile + ".paths"
    directory = os.path.dirname(sidecar)

    def parts():
        prefix = os.path.basename(sidecar) + ".part-"
        return sorted(name for name in os.listdir(directory)
                      if name.startswith(prefix) and not name.endswith(".tmp"))

    def report_calls():
        return calls(json.loads(paths("report", profile, "--json").stdout))

    deadline = time.time() + 60
    while not parts() or report_calls().get("work_a", 0) == 0:
        if program.poll() is not None or time.time() > deadline:
            fail("no part file with calls 60 s after the start: %s" % parts())
        time.sleep(0.2)
    first = report_calls()
    time.sleep(2.5)  # two more flushes at least
    second = report_calls()
    if len(parts()) != 1 or os.path.exists(sidecar):
        fail("after three flushes: part files %s, %s %s" %
             (parts(), sidecar, "exists" if os.path.exists(sidecar) else "absent"))
    if second["work_a"] <= first["work_a"] or second.get("work_b", 0) != 0:
        fail("the running program's calls: %s, then %s" % (first, second))
    print("kill: while it runs: one part file, no %s, calls growing" %
          os.path.basename(sidecar))
    os.kill(pid, signal.SIGKILL)
    program.communicate(timeout=120)
    left = report_calls()
    if len(parts()) != 1 or left["work_a"] < second["work_a"]:
        fail("after SIGKILL: part files %s, calls %s (before: %s)" % (parts(), left, second))
    print("kill: after SIGKILL: the last part's calls are read")


def dlopened(args, pid, paths, calls, top, program, stop_file, profile):
    if calls(top(pid)) != {"lib_step": 0}:
        fail("before enable: %s" % calls(top(pid)))
    print("dlopen: before enable: lib_step 0 calls")
    print("dlopen: enable: " + paths("enable", "--pid", pid, "lib_*").stdout.strip())
    deadline = time.time() + 60
    while calls(top(pid))["lib_step"] == 0:
        if time.time() > deadline:
            fail("lib_step has no calls 60 s after enable")
        time.sleep(0.2)
    print("dlopen: after enable: lib_step has calls")
    open(stop_file, "w").close()
    out, err = program.communicate(timeout=120)
    if program.returncode != 0:
        fail("the program: exit status %d\n%s" % (program.returncode, err))
    final = calls(json.loads(paths("report", profile, "--json").stdout))
    if final["lib_step"] == 0:
        fail("the final PROFILE.paths: %s" % final)
    print("dlopen: final profile: lib_step's calls")


if __name__ == "__main__":
    main()

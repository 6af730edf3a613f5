#!/usr/bin/env python3
"""bench/oversub: virtual speedups when threads outnumber CPUs (driven by run.sh).

Every case is a mode of bench/accuracy/oversub.c with a line whose cost is a build-time
knob (-D<KNOB>=P runs P % of the line's iterations: a real speedup of the line by
100 - P %). Per round and case, in an order that rotates:
  * true effect: the plain clang -O2 builds at P = 100, 75, 50, timed; the true program
    speedup at s is 1 - time(P = 100 - s) / time(P = 100) of the same round;
  * predicted: the P = 100 build under each profiler (`causal run`, optionally the causal
    build of an earlier commit (--before-build), `coz run`) with --fixed-line KNOB-LINE and
    --fixed-speedup 0, 25, 50, one run each; the round's runs form one profile per
    profiler, read by `causal report --json --min-speedups 2` (the same analysis for every
    profiler's file).
Settings (the 'wrap' of a case): none, `taskset -c 0` (one CPU), a cgroup CPU quota of
one CPU (cgroup v1 or v2, made by this script when it can write to /sys/fs/cgroup; else the
case is skipped and the table says so), or 'neighbours': one busy process per CPU, at the
runs' priority, running through all of the case's runs (plain and profiled), so that every
thread gets about half a CPU from processes that are not the program's. Every run's output is compared with the plain
build's; runs that differ or fail are listed.

Prints results.md (Markdown) on stdout; raw data go to the cache dir.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SPEEDUPS = (25, 50)


def cases(cpus, quick, length=1):
    """(name, mode, threads, count, marker, knob, wrap). Work is fixed per mode, so that a
    run takes about a second of plain run time on 2 CPUs whatever the thread count (times
    |length|; a quarter of it with |quick|)."""
    c = cpus
    scale = 4 if quick else 1
    pool_total, stage_items, lock_total = (length * 240000 // scale, length * 40000 // scale,
                                           length * 80000 // scale)
    result = []
    for label, n in (("1", 1), ("C", c), ("2C", 2 * c), ("8C", 8 * c), ("64C", 64 * c)):
        result.append(("pool N=%s (%d)" % (label, n), "pool", n, pool_total // n, "POOL",
                       "POOL_COST_PERCENT", "none"))
    result.append(("pool N=8, taskset 1 CPU", "pool", 8, pool_total // 8, "POOL",
                   "POOL_COST_PERCENT", "taskset"))
    result.append(("pool N=8, quota 1 CPU", "pool", 8, pool_total // 8, "POOL",
                   "POOL_COST_PERCENT", "quota"))
    result.append(("pool N=C (%d), C busy processes beside" % c, "pool", c, pool_total // c,
                   "POOL", "POOL_COST_PERCENT", "neighbours"))
    n = 8 * c
    result.append(("stage N=8C, producers' line", "stage", n, stage_items, "POOL",
                   "POOL_COST_PERCENT", "none"))
    result.append(("stage N=8C, consumer's line", "stage", n, stage_items, "SERIAL",
                   "SERIAL_COST_PERCENT", "none"))
    result.append(("lock N=8C, work outside", "lock", n, lock_total // n, "POOL",
                   "POOL_COST_PERCENT", "none"))
    result.append(("lock N=8C, critical section", "lock", n, lock_total // n, "CRITICAL",
                   "CRITICAL_COST_PERCENT", "none"))
    return result


def marker_line(source, marker):
    with open(source) as f:
        hits = [i + 1 for i, text in enumerate(f) if text.rstrip().endswith("// " + marker)]
    if len(hits) != 1:
        sys.exit("run.py: marker %s found %d times in %s" % (marker, len(hits), source))
    return hits[0]


class Quota:
    """A cgroup with a CPU quota of one CPU, or None where the machine does not allow it."""

    def __init__(self):
        self.procs = None
        self.why = ""
        v1 = "/sys/fs/cgroup/cpu"
        v2 = "/sys/fs/cgroup"
        try:
            if os.path.isfile(os.path.join(v1, "cpu.cfs_quota_us")):
                path = os.path.join(v1, "causal-bench-quota")
                os.makedirs(path, exist_ok=True)
                with open(os.path.join(path, "cpu.cfs_period_us"), "w") as f:
                    f.write("100000")
                with open(os.path.join(path, "cpu.cfs_quota_us"), "w") as f:
                    f.write("100000")
            elif os.path.isfile(os.path.join(v2, "cgroup.controllers")):
                path = os.path.join(v2, "causal-bench-quota")
                os.makedirs(path, exist_ok=True)
                with open(os.path.join(path, "cpu.max"), "w") as f:
                    f.write("100000 100000")
            else:
                self.why = "no cgroup CPU controller"
                return
            self.path = path
            self.procs = os.path.join(path, "cgroup.procs")
        except OSError as e:
            self.why = "cannot make a cgroup with a CPU quota: %s" % e.strerror

    def wrap(self, cmd):
        # The shell moves itself into the cgroup, then becomes the command.
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', self.procs] + cmd

    def remove(self):
        if self.procs:
            try:
                os.rmdir(self.path)
            except OSError:
                pass


def timed(cmd, out_path, nice):
    start = time.monotonic_ns()
    with open(out_path, "w") as out:
        try:
            status = subprocess.run(nice + cmd, stdout=out, stderr=subprocess.DEVNULL,
                                    timeout=600).returncode
        except subprocess.TimeoutExpired:
            status = -1
    return time.monotonic_ns() - start, status


def summary(values, number=None):
    """Median (min to max) of values: fractions as signed percentages, or in |number|'s format."""
    if not values:
        return "-"
    if number:
        med = statistics.median(values)
        if len(values) == 1:
            return number % med
        return (number + " (" + number + " to " + number + ")") % (med, min(values), max(values))
    med = statistics.median(values) * 100
    if len(values) == 1:
        return "%+.1f %%" % med
    return "%+.1f %% (%+.1f to %+.1f)" % (med, min(values) * 100, max(values) * 100)


def plain_times(rows, rnd, ci):
    """{knob speedup: median wall time of the round's plain runs of the case}."""
    times = {}
    for (r, c, v, s, ns, st) in rows:
        if r == rnd and c == ci and v == "plain" and st == 0:
            times.setdefault(s, []).append(ns)
    return {s: statistics.median(values) for s, values in times.items()}


def stop_all(processes):
    """Kills and reaps |processes| and empties the list."""
    for process in processes:
        process.kill()
        process.wait()
    del processes[:]


def run_cases(args, todo, source, profilers, nice, skipped):
    """Builds the variants and runs every case; returns (rows, rounds, start, load before,
    load after) and writes runs.tsv."""
    bindir = os.path.join(args.cache, "bin")
    # Builds: one plain binary per knob value and line, one per profiler.
    common = ["-O2", "-I" + os.path.join(args.src, "include"), "-pthread", source]
    builds = []
    for knob in sorted({c[5] for c in todo}):
        for percent in [100] + [100 - s for s in SPEEDUPS]:
            builds.append(([args.clang] + common + ["-D%s=%d" % (knob, percent)],
                           os.path.join(bindir, "plain.%s.%d" % (knob, percent))))
    for name, build in profilers.items():
        builds.append(([os.path.join(build, "bin/causal-clang"), "-fcausal-profile"] + common,
                       os.path.join(bindir, name)))
    if args.coz:
        builds.append(([args.clang, "-g", "-gdwarf-4", "-include",
                        os.path.join(args.src, "bench/overhead/coz_shim.h")] + common + ["-ldl"],
                       os.path.join(bindir, "coz")))
    with open(os.path.join(args.cache, "build.log"), "w") as log:
        for cmd, out in builds:
            if subprocess.run(cmd + ["-o", out], stdout=log, stderr=log).returncode:
                sys.exit("run.py: build failed: %s (see build.log)" % " ".join(cmd))

    quota = Quota() if any(c[6] == "quota" for c in todo) else None
    rows = []  # (round, case, variant, speedup, ns, status)
    t0 = time.monotonic()
    rounds_done = 0
    neighbours = []  # the busy processes of a 'neighbours' case while it runs
    load_before = open("/proc/loadavg").read().split()[:3]
    try:
        for rnd in range(1, args.reps + 1):
            used = time.monotonic() - t0
            if rnd > 1 and used + used / rounds_done > args.budget_s:
                print("stopping after %d rounds (budget)" % rounds_done, file=sys.stderr)
                break
            for ci, (name, mode, threads, count, marker, knob, wrap) in enumerate(todo):
                if wrap == "quota" and (quota is None or quota.procs is None):
                    skipped[name] = quota.why if quota else "no quota"
                    continue
                line = "%s:%d" % (source, marker_line(source, marker))
                program_args = [mode, str(threads), str(count)]
                plan = []
                for s in (0,) + SPEEDUPS:
                    plan += [("plain", s)] * args.truth_reps
                    plan += [(v, s) for v in list(profilers) + (["coz"] if args.coz else [])]
                if (rnd + ci) % 2 == 0:
                    plan.reverse()
                if wrap == "neighbours":
                    neighbours += [subprocess.Popen(nice + [sys.executable, "-c", "while True: pass"])
                                  for _ in range(len(os.sched_getaffinity(0)))]
                    time.sleep(0.2)
                for variant, s in plan:
                    tag = "%d.%d.%s.%d" % (rnd, ci, variant, s)
                    out = os.path.join(args.cache, "out", tag + ".txt")
                    profile = os.path.join(args.cache, "profiles", "%d.%d.%s.coz" % (rnd, ci, variant))
                    if variant == "plain":
                        cmd = [os.path.join(bindir, "plain.%s.%d" % (knob, 100 - s))] + program_args
                    elif variant == "coz":
                        cmd = ["coz", "run", "-o", profile, "--fixed-line", line, "--fixed-speedup",
                               str(s), "---", os.path.join(bindir, "coz")] + program_args
                    else:
                        cmd = [os.path.join(profilers[variant], "bin/causal"), "run", "--output",
                               profile, "--fixed-line", line, "--fixed-speedup", str(s)]
                        if variant == "cozmodel":
                            cmd.append("--no-shared-cpus")
                        cmd += ["--", os.path.join(bindir, variant)] + program_args
                    if wrap == "taskset":
                        cmd = ["taskset", "-c", "0"] + cmd
                    elif wrap == "quota":
                        cmd = quota.wrap(cmd)
                    ns, status = timed(cmd, out, nice)
                    rows.append((rnd, ci, variant, s, ns, status))
                stop_all(neighbours)
            rounds_done = rnd
            print("round %d of %d done (%s)" % (rnd, args.reps, time.strftime("%H:%M:%S")),
                  file=sys.stderr)
    finally:
        stop_all(neighbours)
        if quota:
            quota.remove()
    load_after = open("/proc/loadavg").read().split()[:3]
    with open(os.path.join(args.cache, "runs.tsv"), "w") as f:
        f.write("round\tcase\tvariant\tspeedup\tns\tstatus\n")
        for r in rows:
            f.write("\t".join(map(str, r)) + "\n")
    return rows, rounds_done, t0, load_before, load_after


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--src", required=True)
    p.add_argument("--cache", required=True)
    p.add_argument("--clang", required=True)
    p.add_argument("--causal-build", required=True)
    p.add_argument("--before-build", default="")
    p.add_argument("--coz", action="store_true")
    p.add_argument("--coz-model", action="store_true",
                   help="also run this build with --no-shared-cpus (variant 'cozmodel')")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--budget-s", type=int, default=1500)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--length", type=int, default=1,
                   help="each run's work times this (default 1: about a second of plain run time)")
    p.add_argument("--only", default="", help="substring of case names to keep")
    p.add_argument("--nice", default="")
    p.add_argument("--truth-reps", type=int, default=3,
                   help="plain runs per knob value, case and round (their median is the round's time)")
    p.add_argument("--report-only", action="store_true",
                   help="no runs: rebuild the tables from <cache>/runs.tsv of an earlier run")
    args = p.parse_args()

    source = os.path.join(args.src, "bench/accuracy/oversub.c")
    cpus = len(os.sched_getaffinity(0))
    todo = [c for c in cases(cpus, args.quick, args.length) if args.only in c[0]]
    for d in ("bin", "profiles", "out", "reports"):
        os.makedirs(os.path.join(args.cache, d), exist_ok=True)
    nice = args.nice.split() if args.nice else []
    profilers = {"causal": args.causal_build}
    if args.before_build:
        profilers["before"] = args.before_build
    if args.coz_model:
        profilers["cozmodel"] = args.causal_build  # the same build, run with --no-shared-cpus

    skipped = {}
    if args.report_only:
        rows, t0, load_before, load_after = [], time.monotonic(), ["-"] * 3, ["-"] * 3
        with open(os.path.join(args.cache, "runs.tsv")) as f:
            next(f)
            for text in f:
                r, c, v, s, ns, st = text.rstrip("\n").split("\t")
                rows.append((int(r), int(c), v, int(s), int(ns), int(st)))
        rounds_done = max((r[0] for r in rows), default=0)
        present = {r[1] for r in rows}
        for ci, case in enumerate(todo):
            if ci not in present:
                skipped[case[0]] = "not in runs.tsv"
    else:
        rows, rounds_done, t0, load_before, load_after = run_cases(args, todo, source, profilers, nice,
                                                                   skipped)

    # Truth and predictions per case and speedup.
    variants = [v for v in ("causal", "before", "cozmodel", "coz") if any(r[2] == v for r in rows)]
    table = []
    saturation = {}  # case name: this build's saturation of the line, one per round's profile
    failures = []
    for ci, (name, mode, threads, count, marker, knob, wrap) in enumerate(todo):
        if name in skipped:
            table.append((name, None, None, skipped[name]))
            continue
        truth = {s: [] for s in SPEEDUPS}
        predicted = {v: {s: [] for s in SPEEDUPS} for v in variants}
        line_no = marker_line(source, marker)
        for rnd in range(1, rounds_done + 1):
            t = plain_times(rows, rnd, ci)
            for s in SPEEDUPS:
                if 0 in t and s in t:
                    truth[s].append(1 - t[s] / t[0])
            base_out = os.path.join(args.cache, "out", "%d.%d.plain.0.txt" % (rnd, ci))
            for (r, c, v, s, ns, st) in rows:
                if r != rnd or c != ci or v == "plain":
                    continue
                out = os.path.join(args.cache, "out", "%d.%d.%s.%d.txt" % (r, c, v, s))
                same = os.path.exists(base_out) and open(out).read() == open(base_out).read()
                if st != 0 or not same:
                    failures.append("%s, round %d, %s at %d %%: %s" %
                                    (name, r, v, s, "exit %d" % st if st else "output differs"))
            for v in variants:
                profile = os.path.join(args.cache, "profiles", "%d.%d.%s.coz" % (rnd, ci, v))
                if not os.path.exists(profile):
                    continue
                report = subprocess.run([os.path.join(args.causal_build, "bin/causal"), "report",
                                         "--json", "--min-speedups", "2", "--bootstrap", "0",
                                         # one round's prediction, not a ranking: no
                                         # evidence minimum
                                         "--min-experiments", "1", "--min-evidence-visits", "0",
                                         profile], capture_output=True, text=True)
                with open(os.path.join(args.cache, "reports", "%d.%d.%s.json" % (rnd, ci, v)), "w") as f:
                    f.write(report.stdout)
                try:
                    data = json.loads(report.stdout)
                except ValueError:
                    continue
                for entry in data.get("lines", []):
                    file_part, _, number = entry["line"].rpartition(":")
                    if number != str(line_no) or not file_part.endswith("oversub.c"):
                        continue
                    sat = entry.get("saturation")
                    if v == "causal" and sat:
                        saturation.setdefault(name, []).append(sat)
                    for point in entry["points"]:
                        for c in point["curve"]:
                            pct = int(round(c["speedup"] * 100))
                            if pct in predicted[v]:
                                predicted[v][pct].append(c["program_speedup"])
        table.append((name, truth, predicted, ""))

    machine = subprocess.run(["sh", "-c", "sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1"],
                             capture_output=True, text=True).stdout.strip()
    print("machine: %s, %d CPUs available; %d round(s) in %d s; load average before %s, after %s; "
          "priority: %s; runs of %dx the default length" % (
              machine, cpus, rounds_done, time.monotonic() - t0, " ".join(load_before),
              " ".join(load_after), args.nice or "normal", args.length))
    print()
    names = {"causal": "causal", "before": "causal before", "cozmodel": "causal, Coz's model",
             "coz": "Coz"}
    header = "| case | s | true effect | " + " | ".join(names[v] for v in variants) + " |"
    print(header)
    print("|" + "---|" * (3 + len(variants)))
    for name, truth, predicted, why in table:
        if truth is None:
            print("| %s | | skipped: %s |%s" % (name, why, " |" * len(variants)))
            continue
        for s in SPEEDUPS:
            cells = [summary(predicted[v][s]) for v in variants]
            print("| %s | %d %% | %s | %s |" % (name, s, summary(truth[s]), " | ".join(cells)))
    print()
    print("Program speedup when the line is made s faster: true (knob builds, timed; per round the "
          "median of %d runs of each build) and predicted (fixed-line experiments, one profile per "
          "round and profiler), median (min to max) over rounds." % args.truth_reps)
    print()
    print("| case | " + " | ".join("%s at 0 %% | %s at 50 %%" % (names[v], names[v]) for v in variants) + " |")
    print("|" + "---|" * (1 + 2 * len(variants)))
    for ci, (name, mode, threads, count, marker, knob, wrap) in enumerate(todo):
        if name in skipped:
            continue
        cells = []
        for v in variants:
            for s in (0, 50):
                ratios = []
                for rnd in range(1, rounds_done + 1):
                    base = plain_times(rows, rnd, ci).get(0)
                    run = [ns for (r, c, vv, ss, ns, st) in rows
                           if r == rnd and c == ci and vv == v and ss == s and st == 0]
                    if base and run:
                        ratios.append(run[0] / base)
                cells.append("%.2f (%.2f-%.2f)" % (statistics.median(ratios), min(ratios), max(ratios))
                             if ratios else "-")
        print("| %s | %s |" % (name, " | ".join(cells)))
    print()
    print("Wall time of the profiled run (whole command, start-up and profile writing included) "
          "over the plain build's, at fixed speedup 0 % (the cost of profiling) and 50 % (with "
          "the delays that emulate the speedup), median (min-max) over rounds.")
    if saturation:
        print()
        print("| case | CPUs | threads running | waiting for a CPU | CPUs idle |")
        print("|---|---|---|---|---|")
        for name, sats in saturation.items():
            def cell(key):
                values = [x[key] for x in sats if x.get(key) is not None]
                return summary(values, "%.2f") if values else "-"
            print("| %s | %s | %s | %s | %s |" % (name, cell("cpus"), cell("running"), cell("waiting"),
                                                 cell("idle")))
        print()
        print("How saturated the process was during this build's experiments on the line (the "
              "report's JSON saturation: averages over a profile's experiments), median (min to "
              "max) over rounds; CPUs idle from /proc/stat (docs/report.md, \"Saturation\").")
    if failures:
        print()
        print("Runs that failed or printed something else than the plain build:")
        for f in failures:
            print("* " + f)


if __name__ == "__main__":
    main()

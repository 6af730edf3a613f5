"""Regenerates the hand-written profiles with exactly known answers
(README.md in the parent folder says what each one checks). The malformed
ones (bad-*, truncated, unknown-record, point-first) are written by hand."""
import json
import os

os.chdir(os.path.dirname(os.path.abspath(__file__)))


def min_half(s):
    return min(s, 0.5)


def write(name, lines):
    with open(name, "w") as f:
        f.write("\n".join(lines) + "\n")


def experiment(line, s, y, samples=1000):
    # Period shrinks by exactly y: delta fixed at 1000, duration 1e9 * (1 - y).
    return (f"experiment\tselected={line}\tspeedup={s:.2f}\tduration={round(1e9 * (1 - y))}"
            f"\tselected-samples={samples}")


def min_half_lines(point_record):
    lines = []
    for k in range(21):
        s = k / 20
        for _ in range(2):
            lines += [experiment("work.c:10", s, min_half(s)), point_record]
    return lines


# Phase factor exactly 1: the baseline experiments see 1000 samples per 1e9 ns,
# the whole run 42000 samples in 42e9 ns.
tail = ["runtime\ttime=42000000000", "samples\tlocation=work.c:10\tcount=42000",
        "samples\tlocation=other.c:5\tcount=7"]
write("min-half.coz", ["startup\ttime=1000"] + min_half_lines("throughput-point\tname=tp\tdelta=1000") + tail)

records = [{"type": "startup", "time": 1000}]
for k in range(21):
    s = k / 20
    for _ in range(2):
        records.append({"type": "experiment", "selected": "work.c:10", "speedup": round(s, 2),
                        "duration": round(1e9 * (1 - min_half(s))), "selected_samples": 1000})
        records.append({"type": "throughput_point", "name": "tp", "delta": 1000})
records += [{"type": "runtime", "time": 42000000000},
            {"type": "samples", "location": "work.c:10", "count": 42000},
            {"type": "samples", "location": "other.c:5", "count": 7}]
with open("min-half.jsonl", "w") as f:
    f.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))

write("legacy.coz", ["startup\ttime=1415880321185373496"]
      + min_half_lines("progress-point\tname=tp\ttype=source\tdelta=1000")
      + ["shutdown\ttime=1415880356165907817\tsamples=348580", "runtime\ttime=42000000000",
         "samples\tlocation=work.c:10\tcount=42000"])

# The line runs half of the run: whole-run rate is half the baseline rate.
write("phase.coz", ["startup\ttime=1000"] + min_half_lines("throughput-point\tname=tp\tdelta=1000")
      + ["runtime\ttime=42000000000", "samples\tlocation=work.c:10\tcount=21000"])

# Latency: 1000 arrivals per second, 10 in flight at baseline (W0 = 10 ms);
# time-averaged in-flight count 10 * (1 - min(s, 0.5)) at line speedup s.
lines = ["startup\ttime=5\tprofiler=causal"]
for k in range(21):
    s = k / 20
    for _ in range(2):
        lines.append(f"experiment\tselected=queue.c:7\tspeedup={s:.2f}\tduration=1000000000"
                     "\tselected-samples=500")
        lines.append("latency-point\tname=request\tarrivals=1000\tdepartures=1000"
                     f"\tdifference={10 * (1 - min_half(s)):g}")
write("latency.coz", lines + ["runtime\ttime=30000000000", "samples\tlocation=queue.c:7\tcount=15000"])


def curve_lines(curves):
    # Two experiments per speedup (the maximum impact never rests on one);
    # 1000 samples per second at 1 ms: the lines run all the time (b = 1), so
    # every curve here is within its physical bound.
    lines = ["startup\ttime=1"]
    for k in range(21):
        s = k / 20
        for line, f in curves:
            for _ in range(2):
                lines += [experiment(line, s, f(s), 1000), "throughput-point\tname=tp\tdelta=1000"]
    return lines


lines = curve_lines([("a.c:1", min_half), ("b.c:2", lambda s: 0.6 * s)])
for s in (0, 0.5, 1.0):
    lines += [experiment("c.c:3", s, 0.1 * s, 1000), "throughput-point\tname=tp\tdelta=1000"]
for s in (0.25, 0.5, 0.75, 1.0, 0.1):
    lines += [experiment("d.c:4", s, 0.2 * s, 1000), "throughput-point\tname=tp\tdelta=1000"]
write("ranking.coz", lines)

write("flat.coz", curve_lines([("a.c:1", lambda s: 0.0), ("b.c:2", lambda s: 0.6 * s),
                               ("e.c:9", lambda s: 0.3 * s)]))

# A sparse progress point: 2 visits per 100 ms experiment. Every speedup's two
# experiments see 4 visits (< 5: dropped) and the line 80 at speedups above 0
# (< 100: not ranked); the report advises a finer point.
lines = ["startup\ttime=1\tprofiler=causal"]
for k in range(21):
    for _ in range(2):
        lines += [f"experiment\tselected=sparse.c:5\tspeedup={k / 20:.2f}\tduration=100000000"
                  "\tselected-samples=100", "throughput-point\tname=batch\tdelta=2"]
write("sparse.coz", lines)

def ab_run(line, effect):
    # An A/B run (causal confirm): 40 experiments at 0 % and 50 % in the
    # order 0, S, S, 0, the 50 % arm's period exactly `effect` shorter, every
    # period off by -2..+2 % (a fixed pattern), 200 visits each.
    lines = ["startup\ttime=2\tprofiler=causal\tsample-period=1000000"]
    for i in range(40):
        b = i % 4 in (1, 2)
        period = 1e6 * (1 + 0.01 * ((i * 7) % 5 - 2)) * ((1 - effect) if b else 1)
        lines += [f"experiment\tselected={line}\tspeedup={'0.50' if b else '0.00'}"
                  f"\tduration={round(period * 200)}\tselected-samples=20\tdelay=0\tcpus=2.00"
                  f"\trunning=1.00\twaiting=0.10\tab-speedup=0.50",
                  "throughput-point\tname=tp\tdelta=200"]
    return lines + ["runtime\ttime=9000000000", f"samples\tlocation={line}\tcount=900"]


write("ab.coz", ["startup\ttime=1\tprofiler=causal\tsample-period=1000000"]
      + min_half_lines("throughput-point\tname=tp\tdelta=1000")
      + ["runtime\ttime=42000000000", "samples\tlocation=work.c:10\tcount=42000"]
      + ab_run("work.c:10", 0.3) + ab_run("idle.c:3", 0.0))

# Wait targets (docs/report.md, "Wait targets"): the CPU line app.c:12
# (0.2 s) and the timer waits of the call on the same line (0.6 s) are two
# lines; app.c:12 (bogus wait) (0.4 s) is a name of no known kind (an opaque
# line, with a samples record of its own); the disk waits of app.c:20 have 3
# speedups only (not enough data). The samples record of the CPU line names
# its function.
lines = ["startup\ttime=1\tprofiler=causal\tsample-period=1000000"]
for k in range(21):
    s = k / 20
    for line, slope in (("app.c:12", 0.2), ("app.c:12 (timer wait)", 0.6),
                        ("app.c:12 (bogus wait)", 0.4)):
        for _ in range(2):
            lines += [experiment(line, s, slope * s), "throughput-point\tname=tp\tdelta=1000"]
for s in (0, 0.5, 1.0):
    lines += [experiment("app.c:20 (disk wait)", s, 0.1 * s), "throughput-point\tname=tp\tdelta=1000"]
write("wait-targets.coz", lines + ["runtime\ttime=129000000000",
                                   "samples\tlocation=app.c:12\tcount=126000\tfunction=worker",
                                   "samples\tlocation=app.c:12 (bogus wait)\tcount=126000"])

# Per calling context (docs/report.md, "Per calling context"): the line
# f.c:10 itself (0.2 s) and in two of its callers, a (0.6 s) and
# Server::handle(int) const (0.1 s), are three curves; the caller rare has 3
# speedups only (not enough data); g.c:5 has a curve in its caller main
# (0.3 s) and none of its own; f.c:10 (timer wait) (0.4 s) is a wait target,
# no caller. The samples record of f.c:10 names its function.
lines = ["startup\ttime=1\tprofiler=causal\tsample-period=1000000"]
for k in range(21):
    s = k / 20
    for line, slope in (("f.c:10", 0.2), ("f.c:10 (via a)", 0.6),
                        ("f.c:10 (via Server::handle(int) const)", 0.1),
                        ("g.c:5 (via main)", 0.3), ("f.c:10 (timer wait)", 0.4)):
        for _ in range(2):
            lines += [experiment(line, s, slope * s), "throughput-point\tname=tp\tdelta=1000"]
for s in (0, 0.5, 1.0):
    lines += [experiment("f.c:10 (via rare)", s, 0.1 * s), "throughput-point\tname=tp\tdelta=1000"]
write("per-caller.coz", lines + ["runtime\ttime=126000000000",
                                 "samples\tlocation=f.c:10\tcount=126000\tfunction=worker"])

#!/usr/bin/env python3
"""Test aid: writes synthetic waits sidecars (and the profile beside them).

    make_waits.py SCENARIO PROFILE

writes PROFILE (a minimal causal profile whose `startup time=` matches the
sidecar's runs) and PROFILE.waits, laid out as include/causal/waits_format.h
says (version 1). Not the runtime's writer: a second, independent spelling of
the same layout, so that the reader is checked against the header's prose.

Scenarios:
  pipeline      W1: stage A waits 80 % for stage B, B fsyncs in a loop
  pipeline-effects  the pipeline, and a profile with causal experiments on its
                wait targets (docs/waits.md, "The causal effect of a wait"):
                log.c:20 (disk wait) 0.5 s, stage.c:10 (other wait) 0.3 s, the
                CPU line log.c:20 0.1 s (s: line speedup; program speedup)
  convoy        W2: a holder and three workers on one lock
  broadcast     W4: waiters woken for nothing by a broadcaster
  two-runs      the pipeline recorded twice (two runs appended)
  other-binary  the pipeline, but the profile's run started 1000 s earlier
  truncated     the pipeline cut in the middle of a chunk
  newer         version 3 in the header
  badmagic      not a sidecar
  unknown-chunk a chunk of type 99 before the episodes
  no-runend     the pipeline without its RunEnd (the process died)
  seeds DIR     (PROFILE is a directory) every scenario's sidecar, for the fuzzer
"""
import os
import struct
import sys

MAGIC = b"CAUSALW\0"
RUN_BEGIN, STRING, THREAD, EPISODES, RUN_END = 1, 2, 3, 4, 5
MUTEX, CONDVAR, SLEEP, FILEIO = 1, 3, 7, 10
WOKEN = 1
TIMER = 0xFFFFFF01
DISK1 = 0xFFFFFF10 + 1
MS = 1000000
REALTIME = 1700000000 * 10**9  # the runs' CLOCK_REALTIME start


class Sidecar:
    def __init__(self, version=1):
        self.data = bytearray(struct.pack("<8sII", MAGIC, version, 16))
        self.ids = {}

    def chunk(self, kind, run, payload):
        self.data += struct.pack("<IIQ", kind, len(payload), run) + payload

    def begin(self, run, start, realtime, binary_hash=0xC0FFEE, pid=4242):
        self.chunk(RUN_BEGIN, run, struct.pack("<QQIIQII", start, realtime, pid, 3, binary_hash,
                                               0, 0))

    def text(self, run, value):
        if not value:
            return 0
        key = (run, value)
        if key not in self.ids:
            self.ids[key] = len([k for k in self.ids if k[0] == run]) + 1
            raw = value.encode()
            self.chunk(STRING, run, struct.pack("<II", self.ids[key], len(raw)) + raw)
        return self.ids[key]

    def thread(self, run, tid, name, routine, start, end, cpu, blocked):
        self.chunk(THREAD, run, struct.pack("<IIIIQQQQQ", tid, 0, self.text(run, name),
                                            self.text(run, routine), start, end, cpu, blocked, 0))

    def episodes(self, run, tid, items):
        payload = struct.pack("<II", tid, len(items))
        for start, end, waker, kind, line, waker_line, obj in items:
            payload += struct.pack("<QQQIIIBBH", start, end, obj, self.text(run, line), waker,
                                   self.text(run, waker_line), kind, WOKEN, 0)
        self.chunk(EPISODES, run, payload)

    def end(self, run, end_ns, episodes=0):
        self.chunk(RUN_END, run, struct.pack("<QQQQ", end_ns, episodes, 0, 4096))


def pipeline(s, run=1, with_end=True):
    s.begin(run, 0, REALTIME)
    a, b = [], []
    for k in range(100):
        t = 10 * k * MS
        b.append((t, t + 6 * MS, DISK1, FILEIO, "log.c:20", "", 3))
        a.append((t, t + 8 * MS, 12, CONDVAR, "stage.c:10", "stage.c:31", 0xA0))
    s.episodes(run, 11, a)
    s.episodes(run, 12, b)
    s.thread(run, 11, "stageA", "stage.c:5", 0, 1000 * MS, 200 * MS, 800 * MS)
    s.thread(run, 12, "stageB", "stage.c:25", 0, 1000 * MS, 300 * MS, 600 * MS)
    if with_end:
        s.end(run, 1000 * MS, 200)


def convoy(s, run=1):
    s.begin(run, 0, REALTIME)
    h, workers = [], [[], [], []]
    for k in range(100):
        t = 10 * k * MS
        worker = 22 + k % 3
        workers[k % 3].append((t + MS, t + 8 * MS, 21, MUTEX, "work.c:40", "hold.c:18", 0x10))
        h.append((t + int(8.2 * MS), t + 9 * MS, worker, MUTEX, "hold.c:12", "work.c:44", 0x10))
    s.episodes(run, 21, h)
    for i in range(3):
        s.episodes(run, 22 + i, workers[i])
    s.thread(run, 21, "holder", "hold.c:5", 0, 1000 * MS, 900 * MS, 80 * MS)
    for tid in (22, 23, 24):
        s.thread(run, tid, "worker", "work.c:30", 0, 1000 * MS, 30 * MS, 233 * MS)
    s.end(run, 1000 * MS)


def broadcast(s, run=1):
    s.begin(run, 0, REALTIME)
    for tid in (41, 42):
        items = []
        for window in range(10):
            t = 100 * window * MS
            for j in range(99):
                start = t + j * MS + (5000 if j else 0)
                waker = 43 if j < 98 else 44
                items.append((start, t + (j + 1) * MS, waker, CONDVAR, "wait.c:7",
                              "bcast.c:3" if j < 98 else "produce.c:9", 0xC0))
        s.episodes(run, tid, items)
        s.thread(run, tid, "waiter", "wait.c:2", 0, 1000 * MS, 10 * MS, 989 * MS)
    s.thread(run, 43, "broadcaster", "bcast.c:1", 0, 1000 * MS, 900 * MS, 0)
    s.thread(run, 44, "producer", "produce.c:1", 0, 1000 * MS, 900 * MS, 0)
    s.end(run, 1000 * MS)


def build(scenario):
    """Returns (sidecar bytes, profile startup time)."""
    startup = REALTIME
    if scenario == "newer":
        s = Sidecar(version=3)
        pipeline(s)
        return bytes(s.data), startup
    s = Sidecar()
    if scenario in ("pipeline", "pipeline-effects", "truncated", "badmagic"):
        pipeline(s)
    elif scenario == "convoy":
        convoy(s)
    elif scenario == "broadcast":
        broadcast(s)
    elif scenario == "two-runs":
        pipeline(s, run=1)
        pipeline(s, run=2)
    elif scenario == "other-binary":
        pipeline(s)
        startup = REALTIME - 1000 * 10**9
    elif scenario == "unknown-chunk":
        s.begin(1, 0, REALTIME)
        s.chunk(99, 1, b"\x01\x02\x03\x04")
        s.episodes(1, 7, [(MS, 2 * MS, TIMER, SLEEP, "nap.c:3", "", 0)])
        s.end(1, 3 * MS)
    elif scenario == "no-runend":
        pipeline(s, with_end=False)
    else:
        raise SystemExit("make_waits.py: unknown scenario " + scenario)
    data = bytes(s.data)
    if scenario == "truncated":
        data = data[: len(data) - 100]
    if scenario == "badmagic":
        data = b"NOTWAITS" + data[8:]
    return data, startup


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "seeds":
        os.makedirs(sys.argv[2], exist_ok=True)
        for scenario in ("pipeline", "convoy", "broadcast", "two-runs", "truncated", "newer",
                         "unknown-chunk", "no-runend"):
            data, _ = build(scenario)
            with open(os.path.join(sys.argv[2], scenario + ".waits"), "wb") as out:
                out.write(data)
        return
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    scenario, profile = sys.argv[1], sys.argv[2]
    data, startup = build(scenario)
    with open(profile + ".waits", "wb") as out:
        out.write(data)
    with open(profile, "w") as out:
        if scenario == "pipeline-effects":
            out.write(effects_profile(startup))
        else:
            out.write("startup\ttime=%d\tprofiler=causal\nruntime\ttime=%d\n" % (startup, 1000 * MS))


def effects_profile(startup):
    """Two experiments per speedup and line, 1000 visits each, the period
    shorter by exactly slope x s; the wait targets' names as the runtime
    writes them."""
    lines = ["startup\ttime=%d\tprofiler=causal\tsample-period=1000000" % startup]
    targets = [("log.c:20 (disk wait)", 0.5), ("stage.c:10 (other wait)", 0.3), ("log.c:20", 0.1)]
    for k in range(21):
        s = k / 20
        for line, slope in targets:
            for _ in range(2):
                lines.append("experiment\tselected=%s\tspeedup=%.2f\tduration=%d\tselected-samples=1000"
                             % (line, s, round(1e9 * (1 - slope * s))))
                lines.append("throughput-point\tname=tp\tdelta=1000")
    lines += ["runtime\ttime=126000000000", "samples\tlocation=log.c:20\tcount=126000"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()

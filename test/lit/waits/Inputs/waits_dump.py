#!/usr/bin/env python3
"""A test aid: decodes a PROFILE.waits sidecar (include/causal/waits_format.h,
docs/waits.md) into one line per record, for FileCheck. Not the product's
reader (that is the profile library's, tools/profile); this one only lets the
recording tests look at the file.

  waits_dump.py FILE [SOURCE...]

Prints, per run, in file order:
  run pid=P what=sync|io|all program=BASENAME hash=yes|no
  thread name=NAME tid=T parent=NAME|0 routine=LINE start<end=yes cpu_ns=N blocked_ns=N dropped=N
  episode thread=NAME kind=KIND end=END line=LINE waker=NAME|timer|disk|network|unknown
          waker_line=LINE object=OBJ ns=DURATION
  end episodes=N dropped=N buffer_bytes=N
  chunks thread=NAME episodes_chunks=N episodes=N   (per thread, after the run)
Threads are named by their names (thread chunks may follow their episodes,
so episodes are printed once the run is read); a line is FILE:LINE with the
file's directory dropped, and a line of a SOURCE given that carries a
comment "// NAME_LINE" is shown as FILE:NAME_LINE (tests need not count
lines). An episode of 5 ms or more is "long", else "short". Exits 1 with a
message on a malformed file.
"""
import os
import struct
import sys

MAGIC = b"CAUSALW\0"
KINDS = {1: "Mutex", 2: "RwLock", 3: "CondVar", 4: "Barrier", 5: "Join", 6: "Semaphore",
         7: "Sleep", 8: "Poll", 9: "Futex", 10: "FileIo", 11: "PipeIo", 12: "SocketIo",
         13: "Spin", 14: "Signal", 15: "Other"}
ENDS = {1: "Woken", 2: "TimedOut", 3: "Failed"}


MARKS = {}  # "file.c:12" -> "file.c:NAME_LINE"


def read_marks(paths):
    import re
    for path in paths:
        for number, text in enumerate(open(path), 1):
            m = re.search(r"//\s*([A-Z_]+_LINE)\b", text)
            if m:
                MARKS["%s:%d" % (os.path.basename(path), number)] = \
                    "%s:%s" % (os.path.basename(path), m.group(1))


def fail(message):
    sys.stderr.write("waits_dump: %s\n" % message)
    sys.exit(1)


def pseudo(tid):
    if tid == 0xFFFFFF01:
        return "timer"
    if tid == 0xFFFFFF02:
        return "network"
    if tid == 0xFFFFFF03:
        return "unknown"
    if 0xFFFFFF10 <= tid <= 0xFFFFFFFF:
        return "disk"
    if tid >= 0xFFFFFF00:
        return "pseudo%x" % tid
    return None


class Run:
    def __init__(self, run_id):
        self.id = run_id
        self.strings = {}
        self.threads = {}
        self.lines = []  # (kind, data) in file order
        self.chunks = {}  # tid -> (Episodes chunks, episodes)

    def text(self, sid):
        if sid == 0:
            return "-"
        if sid not in self.strings:
            fail("run %x: string id %d is never defined" % (self.id, sid))
        t = self.strings[sid]
        if ":" in t and "/" in t:
            t = os.path.basename(t)
        return MARKS.get(t, t)

    def name(self, tid):
        p = pseudo(tid)
        if p:
            return p
        if tid in self.threads:
            return self.text(self.threads[tid][2]) or str(tid)
        return "tid%d" % tid


def main():
    if len(sys.argv) < 2:
        fail("usage: waits_dump.py FILE")
    read_marks(sys.argv[2:])
    data = open(sys.argv[1], "rb").read()
    if len(data) < 16 or data[:8] != MAGIC:
        fail("not a waits sidecar (bad magic)")
    version, header_size = struct.unpack_from("<II", data, 8)
    print("header version=%d" % version)
    pos = header_size
    runs = {}
    order = []
    while pos < len(data):
        if pos + 16 > len(data):
            fail("truncated chunk header at %d" % pos)
        ctype, size, run_id = struct.unpack_from("<IIQ", data, pos)
        pos += 16
        if pos + size > len(data):
            fail("truncated chunk at %d" % pos)
        payload = data[pos:pos + size]
        pos += size
        if run_id not in runs:
            runs[run_id] = Run(run_id)
            order.append(run_id)
        run = runs[run_id]
        if ctype == 1:
            run.lines.append(("begin", struct.unpack_from("<QQIIQII", payload)))
        elif ctype == 2:
            sid, length = struct.unpack_from("<II", payload)
            if 8 + length != size:
                fail("string %d: length %d in a chunk of %d" % (sid, length, size))
            if sid in run.strings:
                fail("string id %d defined twice in run %x" % (sid, run_id))
            run.strings[sid] = payload[8:8 + length].decode("utf-8", "replace")
        elif ctype == 3:
            t = struct.unpack_from("<IIIIQQQQQ", payload)
            run.threads[t[0]] = t
            run.lines.append(("thread", t))
        elif ctype == 4:
            tid, count = struct.unpack_from("<II", payload)
            chunks, total = run.chunks.get(tid, (0, 0))
            run.chunks[tid] = (chunks + 1, total + count)
            if 8 + 40 * count != size:
                fail("episodes chunk: %d records in %d bytes" % (count, size))
            for i in range(count):
                e = struct.unpack_from("<QQQIIIBBH", payload, 8 + 40 * i)
                run.lines.append(("episode", (tid,) + e))
        elif ctype == 5:
            run.lines.append(("end", struct.unpack_from("<QQQQ", payload)))
        # other types: skipped (their size says how far)
    for run_id in order:
        run = runs[run_id]
        for kind, d in run.lines:
            if kind == "begin":
                what = {1: "sync", 2: "io", 3: "all"}.get(d[3], str(d[3]))
                print("run pid=%d what=%s program=%s hash=%s" % (
                    d[2], what, os.path.basename(run.text(d[5])), "yes" if d[4] else "no"))
            elif kind == "thread":
                tid, parent, name, routine, start, end, cpu, blocked, dropped = d
                print("thread name=%s tid=%d parent=%s routine=%s start<end=%s cpu_ns=%d "
                      "blocked_ns=%d dropped=%d" % (
                          run.text(name), tid, run.name(parent) if parent else "0",
                          run.text(routine), "yes" if start < end else "no", cpu, blocked,
                          dropped))
            elif kind == "episode":
                tid, start, end, obj, line, waker, waker_line, k, how, _ = d
                print("episode thread=%s kind=%s end=%s line=%s waker=%s waker_line=%s "
                      "object=%s %s ns=%d" % (
                          run.name(tid), KINDS.get(k, str(k)), ENDS.get(how, str(how)),
                          run.text(line), run.name(waker), run.text(waker_line),
                          hex(obj), "long" if end - start >= 5000000 else "short",
                          end - start))
                if end < start:
                    fail("episode ends before it starts")
            elif kind == "end":
                print("end episodes=%d dropped=%d buffer_bytes=%d" % d[1:])
        for tid in sorted(run.chunks):
            print("chunks thread=%s episodes_chunks=%d episodes=%d" % (
                run.name(tid), run.chunks[tid][0], run.chunks[tid][1]))


main()

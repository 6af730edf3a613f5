#!/usr/bin/env python3
"""Test aid: writes synthetic paths sidecars.

    make_paths.py SCENARIO PROFILE

writes PROFILE.paths laid out as include/causal/paths_format.h says (version
2; the scenario v1 writes version 1). Not the runtime's writer: a second, independent spelling of the same
layout, so that the reader is checked against the header's prose.
Inputs/demo.coz.paths is `make_paths.py demo Inputs/demo.coz` (paths.test
checks that the two agree; run it again after changing the scenario).

Scenarios:
  demo          helper() called from three callers 1:2:7 (server.c), parse()
                with recursive calls and a truncated walk, idle() registered
                but not enabled; CPU estimated from samples (1 ms a sample)
  cpu-clock     demo with the CPU clock read (RunBegin flags kCpuClock)
  two-runs      demo twice, as two runs (pids 4242 and 4243)
  flushed       demo written three times by one run (the periodic flush):
                calls 1x, 2x, then 3x; the reader keeps the last
  truncated     demo cut in the middle of a chunk
  newer         version 3 in the header
  v1            demo in version 1 (a RunBegin without walk_one_in)
  walked        demo with the stack walked at one entry in 16 (walk_one_in)
  walked-auto   demo with the gaps chosen per function (walk_one_in 0), up to 345
  demo-auto     demo with walk_one_in 0 that walked every entry (walk_gap_max 1)
  badmagic      not a sidecar
  unknown-chunk a chunk of type 99 before the paths
  undefined-string  a frame naming string id 99, never defined
  undefined-function  a path of function id 9, never defined
  depth0        a path of depth 0
  size-mismatch a path whose depth says 3 frames, its chunk holds 2
  no-runend     demo without its RunEnd (the process died)
  deep          one path of 5,000 frames (the trees keep the innermost 1,024)
  long-name     a function whose demangled name has 800 characters
  seeds DIR     (PROFILE is a directory) every scenario's sidecar, for the fuzzer
"""
import os
import struct
import sys

MAGIC = b"CAUSALP\0"
RUN_BEGIN, STRING, FUNCTION, PATH, RUN_END = 1, 2, 3, 4, 5
CPU_CLOCK = 1
TRUNCATED = 1
MS = 1000000
RUN = 0x1092_0000_ABCD


class Sidecar:
    def __init__(self, version=2):
        self.version = version
        self.data = bytearray(struct.pack("<8sII", MAGIC, version, 16))
        self.ids = {}

    def chunk(self, kind, run, payload):
        self.data += struct.pack("<IIQ", kind, len(payload), run) + payload

    def begin(self, run, pid=4242, flags=0, period=MS, program="./server", walk=1, gap=None):
        # A new write of the run: its string ids are defined again.
        self.ids = {k: v for k, v in self.ids.items() if k[0] != run}
        name = self.reserve(run, program)
        payload = struct.pack("<QQIIQII", 1000, 1700000000 * 10**9, pid, flags, period, name, 0)
        if self.version >= 2:  # walk_one_in, walk_gap_max
            payload += struct.pack("<II", walk, walk if gap is None else gap)
        self.chunk(RUN_BEGIN, run, payload)
        self.define(run, name, program)

    def reserve(self, run, value):
        key = (run, value)
        self.ids[key] = len([k for k in self.ids if k[0] == run]) + 1
        return self.ids[key]

    def define(self, run, ident, value):
        raw = value.encode()
        self.chunk(STRING, run, struct.pack("<II", ident, len(raw)) + raw)

    def text(self, run, value):
        if not value:
            return 0
        if (run, value) not in self.ids:
            self.define(run, self.reserve(run, value), value)
        return self.ids[(run, value)]

    def function(self, run, ident, symbol, name, enabled=1):
        self.chunk(FUNCTION, run, struct.pack("<IIII", ident, self.text(run, symbol),
                                              self.text(run, name), enabled))

    def path(self, run, ident, function, frames, calls, wall, samples, blocked=0, recursive=0,
             cpu=0, flags=0, depth=None):
        ids = [(self.text(run, f), self.text(run, l)) for f, l in frames]
        self.path_raw(run, ident, function, ids, calls, wall, samples, blocked, recursive, cpu,
                      flags, depth)

    def path_raw(self, run, ident, function, ids, calls, wall, samples, blocked=0, recursive=0,
                 cpu=0, flags=0, depth=None):
        payload = struct.pack("<IIIIQQQQQQQ", ident, function,
                              len(ids) if depth is None else depth, flags, calls, recursive, cpu,
                              wall, blocked, samples, 1)
        for f, l in ids:
            payload += struct.pack("<II", f, l)
        self.chunk(PATH, run, payload)

    def end(self, run, paths=5, truncated=1):
        self.chunk(RUN_END, run, struct.pack("<QQQQ", 9 * 10**9, paths, 0, truncated))


def demo(s, run=RUN, pid=4242, flags=0, scale=1, with_end=True, begin=True, walk=1, gap=None):
    if begin:
        s.begin(run, pid=pid, flags=flags, walk=walk, gap=gap)
    s.function(run, 1, "_Z6helperv", "helper()")
    s.function(run, 2, "_Z5parsePKc", "parse(char const*)")
    s.function(run, 3, "_Z4idlev", "idle()", enabled=0)
    helper = ("helper()", "helper.c:3")
    cpu = lambda ms: ms * MS * scale if flags & CPU_CLOCK else 0
    s.path(run, 1, 1, [("main", "server.c:40"), ("handle_get", "server.c:10"), helper],
           1 * scale, 1 * MS * scale, 1 * scale, cpu=cpu(1))
    s.path(run, 2, 1, [("main", "server.c:41"), ("handle_put", "server.c:20"), helper],
           2 * scale, 4 * MS * scale, 3 * scale, blocked=1 * MS * scale, cpu=cpu(3))
    s.path(run, 3, 1, [("main", "server.c:42"), ("handle_post", "server.c:30"), helper],
           7 * scale, 20 * MS * scale, 9 * scale, blocked=10 * MS * scale, cpu=cpu(9))
    parse = ("parse(char const*)", "parse.c:1")
    s.path(run, 4, 2, [("main", "server.c:50"), ("load_config", "config.c:7"), parse],
           3 * scale, 3 * MS * scale, 2 * scale, recursive=5 * scale, cpu=cpu(2))
    s.path(run, 5, 2, [("worker", "worker.c:12"), parse], 1 * scale, 2 * MS * scale, 1 * scale,
           flags=TRUNCATED, cpu=cpu(1))
    if with_end:
        s.end(run)


def scenario(name):
    s = Sidecar({"newer": 3, "v1": 1}.get(name, 2))
    if name in ("demo", "newer", "truncated", "badmagic", "v1"):
        demo(s)
    elif name == "walked":
        demo(s, walk=16)
    elif name == "walked-auto":
        demo(s, walk=0, gap=345)
    elif name == "demo-auto":
        demo(s, walk=0, gap=1)
    elif name == "cpu-clock":
        demo(s, flags=CPU_CLOCK)
    elif name == "two-runs":
        demo(s)
        demo(s, run=RUN + 1, pid=4243)
    elif name == "flushed":
        for scale in (1, 2, 3):
            demo(s, scale=scale, with_end=scale < 3)
        s.end(RUN)
    elif name == "deep":
        s.begin(RUN, flags=CPU_CLOCK)
        s.function(RUN, 1, "_Z6helperv", "helper()")
        frames = [("recurse", "deep.c:%d" % (i % 2)) for i in range(4999)]
        s.path(RUN, 1, 1, frames + [("helper()", "helper.c:3")], 1, MS, 1, cpu=MS)
    elif name == "long-name":
        s.begin(RUN, flags=CPU_CLOCK)
        long = "std::vector<" * 60 + "int" + ">" * 60 + "::push_back(int const&)"
        s.function(RUN, 1, "_Zlong", long)
        s.path(RUN, 1, 1, [("main", "a.c:1"), (long, "v.h:9")], 3, MS, 1, cpu=MS)
        s.end(RUN, paths=1, truncated=0)
    elif name == "no-runend":
        demo(s, with_end=False)
    elif name == "unknown-chunk":
        s.begin(RUN)
        s.chunk(99, RUN, b"\0" * 12)
        demo(s, begin=False)
    elif name == "undefined-string":
        s.begin(RUN)
        s.function(RUN, 1, "_Z6helperv", "helper()")
        s.path_raw(RUN, 1, 1, [(s.text(RUN, "main"), 0), (99, 0)], 1, MS, 1)
    elif name == "undefined-function":
        s.begin(RUN)
        s.function(RUN, 1, "_Z6helperv", "helper()")
        s.path(RUN, 1, 9, [("main", ""), ("helper()", "")], 1, MS, 1)
    elif name == "depth0":
        s.begin(RUN)
        s.function(RUN, 1, "_Z6helperv", "helper()")
        s.path_raw(RUN, 1, 1, [], 1, MS, 1)
    elif name == "size-mismatch":
        s.begin(RUN)
        s.function(RUN, 1, "_Z6helperv", "helper()")
        main = s.text(RUN, "main")
        s.path_raw(RUN, 1, 1, [(main, 0), (main, 0)], 1, MS, 1, depth=3)
    else:
        raise SystemExit("make_paths.py: unknown scenario " + name)
    data = bytes(s.data)
    if name == "truncated":
        data = data[:-20]
    if name == "badmagic":
        data = b"CAUSALW\0" + data[8:]
    return data


SCENARIOS = ["demo", "cpu-clock", "two-runs", "flushed", "truncated", "newer", "v1", "walked",
             "walked-auto",
             "badmagic",
             "unknown-chunk", "undefined-string", "undefined-function", "depth0",
             "size-mismatch", "no-runend", "long-name"]


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    name, target = sys.argv[1], sys.argv[2]
    if name == "seeds":
        os.makedirs(target, exist_ok=True)
        for each in SCENARIOS:  # not "deep": longer than the fuzzer's inputs
            with open(os.path.join(target, each + ".paths"), "wb") as out:
                out.write(scenario(each))
        return
    with open(target + ".paths", "wb") as out:
        out.write(scenario(name))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Rewrites a profile whose runs were written in parts (the periodic flush)
as the same runs written whole: one block per run, in the order the runs
started: startup (without run=), its experiments in order, its last runtime
record, the last samples record of each of its lines. `causal report` must
read both the same.

  whole_runs.py IN OUT
"""
import sys


def main(argv):
    runs = []    # [startup, experiment lines, runtime, {location: line}]
    by_id = {}
    current = None
    with open(argv[1]) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            kv = dict(x.split("=", 1) for x in fields[1:] if "=" in x)
            kind = fields[0]
            if kind == "startup":
                current = [line.replace("\trun=" + kv.get("run", ""), ""), [], None, {}]
                runs.append(current)
                if "run" in kv:
                    by_id[kv["run"]] = current
            elif kind == "runtime":
                if "run" in kv:
                    current = by_id[kv["run"]]
                    line = line.replace("\trun=" + kv["run"], "")
                current[2] = line
            elif kind == "samples":
                current[3][kv["location"]] = line
            elif kind == "shutdown":
                pass
            else:
                current[1].append(line)
    with open(argv[2], "w") as out:
        for startup, experiments, runtime, samples in runs:
            out.write(startup)
            out.writelines(experiments)
            if runtime:
                out.write(runtime)
            out.writelines(samples.values())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Replays a profile's experiments in time order and finds when its top line settles.

  replay.py --causal CAUSAL --profile PROFILE.coz --right FILE:LINE [--step N]
            [--tsv OUT.tsv] [--label LABEL]

PROFILE holds one run (ours or Coz's: same record format). Its experiment
records are in the order the experiments ended; the sum of their durations up
to an experiment is the time axis (seconds of experiments). For each prefix of
the first k experiments (every N-th k, and the last), the prefix plus the
run's closing records (runtime, samples: the phase correction needs them) is
written to a temporary file and ranked by `CAUSAL report --json --bootstrap 0`
(default ranking: slope, 5 distinct speedups needed per line). (Coz's
mid-run runtime/samples snapshots stay in place; the closing records replace
them.) The top line of a prefix is the report's rank 1 (none when no line has a curve yet).

Prints one JSON object: the final top line, whether it is the right one (the
first of --right), the convergence time (the time of the earliest prefix after
which the top line never changes again; null if the last prefix has no top
line), the same for the order of the --right lines among themselves (once all
are ranked) and whether the final order is the right one, the number of
experiments and their total time. --tsv appends one row per prefix.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def parse(path):
    """(header lines, [(duration_ns, [lines])], closing lines).

    Every record belongs to the experiment before it (or to the header), except
    the runtime and samples records after the last experiment: the closing
    records. Coz also writes runtime/samples snapshots during a run; they stay
    where they are, and the closing records, which come later in each prefix,
    replace them (`causal report` keeps a run's last values)."""
    header, experiments, trailing = [], [], []
    with open(path, errors="replace") as f:
        for line in f:
            kind = line.split("\t", 1)[0].strip()
            if kind == "experiment":
                if experiments:
                    experiments[-1][1].extend(trailing)
                else:
                    header.extend(trailing)
                trailing = []
                duration = 0
                for field in line.rstrip("\n").split("\t")[1:]:
                    key, _, value = field.partition("=")
                    if key == "duration":
                        duration = int(value)
                experiments.append((duration, [line]))
            elif kind in ("runtime", "samples"):
                trailing.append(line)
            else:
                (experiments[-1][1] if experiments else header).extend(trailing + [line])
                trailing = []
    return header, experiments, trailing


def ranked_lines(causal, header, experiments, closing, k, scratch):
    with open(scratch, "w") as f:
        f.writelines(header)
        for _, lines in experiments[:k]:
            f.writelines(lines)
        f.writelines(closing)
    result = subprocess.run([causal, "report", "--json", "--bootstrap", "0", scratch],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if result.returncode != 0:
        sys.stderr.write("replay.py: causal report failed on the first %d experiments: %s" %
                         (k, result.stderr.decode(errors="replace")))
        sys.exit(1)
    report = json.loads(result.stdout)
    return [entry["line"] for entry in report.get("lines", [])]


def settled(values, times, ks):
    """Time of the earliest prefix after which `values` never changes, or None
    if the last value is None."""
    if not values or values[-1] is None:
        return None
    i = len(values) - 1
    while i > 0 and values[i - 1] == values[-1]:
        i -= 1
    return times[ks[i] - 1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--causal", required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--right", required=True,
                        help="the right ranking, best first: FILE:LINE[,FILE:LINE...]")
    parser.add_argument("--step", type=int, default=1)
    parser.add_argument("--tsv")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    header, experiments, closing = parse(args.profile)
    times, total = [], 0
    for duration, _ in experiments:
        total += duration
        times.append(total / 1e9)
    ks = list(range(args.step, len(experiments) + 1, max(args.step, 1)))
    if experiments and (not ks or ks[-1] != len(experiments)):
        ks.append(len(experiments))

    def key(line):
        file_part, _, number = line.rpartition(":")
        return (os.path.realpath(file_part), number)

    right = [key(spec) for spec in args.right.split(",")]
    tops, orders = [], []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = os.path.join(tmp, "prefix.coz")
        for k in ks:
            lines = ranked_lines(args.causal, header, experiments, closing, k, scratch)
            tops.append(lines[0] if lines else None)
            # The order of the lines of the right ranking, once all of them are ranked.
            known = [key(line) for line in lines if key(line) in right]
            orders.append(tuple(known) if len(known) == len(right) else None)
    final = tops[-1] if tops else None
    ranked = [t for t in tops if t is not None]
    changes = sum(1 for a, b in zip(ranked, ranked[1:]) if a != b)
    if args.tsv:
        new = not os.path.exists(args.tsv)
        with open(args.tsv, "a") as f:
            if new:
                f.write("label\texperiments\tseconds\ttop_line\torder_of_right_lines\n")
            for k, top, order in zip(ks, tops, orders):
                f.write("%s\t%d\t%.3f\t%s\t%s\n" % (args.label, k, times[k - 1], top or "-",
                                                    ",".join(o[1] for o in order) if order else "-"))
    json.dump({"label": args.label, "final_top": final,
               "right": final is not None and key(final) == right[0],
               "settled_s": settled(tops, times, ks), "experiments": len(experiments),
               "experiment_s": times[-1] if times else 0, "top_changes": changes,
               "first_top_s": next((times[k - 1] for k, t in zip(ks, tops) if t), None),
               "order_right": orders[-1] == tuple(right) if orders else False,
               "order_settled_s": settled(orders, times, ks)}, sys.stdout)
    print()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes a large causal profile that looks like one appended to by many real runs.

usage: make-profile.py OUT [--size-mb N] [--runs N] [--lines N] [--seed N]

A program of --lines sampled source lines (absolute paths in a dozen files, as the runtime
writes them) is "run" --runs times. Each run has what causal's runtime writes: a startup
record (profiler=causal, sample-period), experiments with the causal fields (delay,
shared-cpu-delay, cpus, running, waiting), each with a throughput point and, in half of the
runs, a latency point, then a runtime record and one samples record per sampled line. A
line's samples follow a Zipf-like law; experiments select lines as the runtime does, from
the samples (the hot lines most often); half of the speedups are 0 %, the others 0-100 % in
steps of 5 (Coz's distribution). The last runs are A/B runs of `causal confirm` (ab-speedup,
0 % and 50 % alternating on one line). Experiments per run are chosen so that the file
reaches about --size-mb megabytes. The same arguments write the same file.
"""
import argparse
import random


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--size-mb", type=float, default=200)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--lines", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    dirs = ["src/storage", "src/query", "src/net", "src/util"]
    files = [f"/home/dev/projects/server/{dirs[i % 4]}/{name}.c"
             for i, name in enumerate(["btree", "pager", "planner", "executor", "socket",
                                       "protocol", "hash", "alloc", "wal", "parser",
                                       "buffer", "log"])]
    lines = []
    for k in range(args.lines):
        lines.append(f"{files[k % len(files)]}:{rng.randint(20, 4000)}")
    lines = sorted(set(lines))
    weights = [1.0 / (rank + 1) ** 1.1 for rank in range(len(lines))]
    rng.shuffle(weights)
    # Lines with samples that experiments may select (in scope): most of them.
    in_scope = [line for line in lines if rng.random() < 0.7]
    scope_weights = [weights[lines.index(line)] for line in in_scope]
    # The lines with a real effect: speeding them up speeds the program up.
    effect = {line: rng.choice([0.0, 0.0, 0.0, 0.2, 0.5]) for line in in_scope}

    target = args.size_mb * 1e6
    ab_runs = max(1, args.runs // 200)
    per_run = target / args.runs
    written = 0
    with open(args.out, "w") as out:
        for run in range(args.runs):
            ab = run >= args.runs - ab_runs
            latency = run % 2 == 1
            period = 1000000
            chunk = [f"startup\ttime={1700000000000000000 + run * 70000000000}"
                     f"\tprofiler=causal\tsample-period={period}\n"]
            size = len(chunk[0])
            runtime = 0
            n = 0
            fixed = in_scope[0]
            # Samples records at the end take about 70 bytes per line.
            budget = per_run - 70 * len(lines) - 60
            while size < budget:
                if ab:
                    line = fixed
                    speedup = 0.0 if n % 4 in (0, 3) else 0.5
                else:
                    line = rng.choices(in_scope, scope_weights)[0]
                    speedup = 0.0 if rng.random() < 0.5 else rng.randint(0, 20) * 0.05
                duration = rng.randint(50, 400) * 1000000 + rng.randint(0, 999999)
                samples = rng.randint(0, 40)
                delay = int(samples * period * speedup)
                shared = delay // 10 if rng.random() < 0.2 else 0
                running = 1.5 + rng.random() * 0.5
                waiting = rng.random() * 0.2
                rate = 1 + effect[line] * speedup
                delta = max(0, int(duration / 1e6 * rate * rng.uniform(0.9, 1.1)))
                record = (f"experiment\tselected={line}\tspeedup={speedup:.2f}"
                          f"\tduration={duration}\tselected-samples={samples}\tdelay={delay}"
                          f"\tshared-cpu-delay={shared}\tcpus=2.00\trunning={running:.2f}"
                          f"\twaiting={waiting:.2f}")
                if ab:
                    record += "\tab-speedup=0.50"
                record += f"\nthroughput-point\tname=requests\tdelta={delta}\n"
                if latency:
                    arrivals = max(1, delta // 2)
                    in_flight = rng.uniform(2, 6) / rate
                    record += (f"latency-point\tname=query\tarrivals={arrivals}"
                               f"\tdepartures={arrivals}\tdifference={round(in_flight)}"
                               f"\tin-flight={in_flight:.4f}\n")
                chunk.append(record)
                size += len(record)
                runtime += duration + delay
                n += 1
            chunk.append(f"runtime\ttime={runtime + rng.randint(0, 10**8)}"
                         f"\tsamples-outside={rng.randint(0, 5000)}\n")
            total = runtime / period
            for line, weight in zip(lines, weights):
                count = int(total * weight / 4)
                if count:
                    chunk.append(f"samples\tlocation={line}\tcount={count}\n")
            text = "".join(chunk)
            out.write(text)
            written += len(text)
    print(f"{args.out}: {written / 1e6:.0f} MB, {args.runs} runs ({ab_runs} A/B), "
          f"{len(lines)} lines")


if __name__ == "__main__":
    main()

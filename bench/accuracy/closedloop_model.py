#!/usr/bin/env python3
"""A discrete-event model of a virtual speedup on bench/accuracy's closed loop.

    closedloop_model.py [--line MS] [--fixed MS] [--think MS] [--noise MS]
                        [--period MS] [--delays lump|spread] [--jitter J]
                        [--cost MS] [--requests N] [--seeds K]

The program: CLIENTS (2) clients each think for --think ms (plus, with
--noise, an exponential extra of that mean), then send a request and wait
for its reply; one server serves them in order, each request --line ms in
the selected line and --fixed ms in the rest. The truth is the mean latency
of the same program with the line (1 - s) as long.

The emulation: the server's CPU time is sampled every --period ms (a random
first phase; --jitter J draws each period from (1 - J .. 1 + J) x period);
a sample that lands in the line removes s x period from the virtual
timeline, the way a virtual speedup's pauses of every other thread do. With
--delays lump (the runtime's way) the whole of it comes off the request
whose line drew the sample; with --delays spread it comes off the server's
next --period ms of CPU time, at rate s, whatever request that time belongs
to. With --cost C, each sample costs the server C ms of the period's CPU
time (a perf task clock counts its own interrupt, the signal and the
handler): the program works P - C between samples, and the profiled
program's requests are longer by C a sample. Clients that think through a removal pay it after they wake (a timed
sleep ends that much later), so in virtual time the think time is unchanged:
the virtual program is the closed loop with each request's service reduced
by its removal. The prediction is 1 - W(s) / W(0), W the virtual mean
latency; W(0) is the profiled program's own (the plain one's without --cost).

Prints, for s = 25, 50 and 100 %, the true effect and the mean prediction
over --seeds sampling phases; with --cost also the true effect of the
profiled program (line and rest P / (P - C) as long), which is what the
emulation emulates: prediction less that is the emulation's error, that less
the plain program's truth what sampling's cost changed in the program. No
pause costs or wake-up times. Standard library only; a run of the defaults
takes a few seconds.
"""
import argparse
import random

CLIENTS = 2


def mean_latency(services, think, noise, seed):
    """Mean latency of a closed loop of CLIENTS clients and one FIFO server
    serving requests with the given service times, in order of arrival."""
    rng = random.Random(seed)
    server_free = 0.0
    arrival = [0.1 * c for c in range(CLIENTS)]
    total, counted = 0.0, 0
    warmup = min(100, len(services) // 10)
    for k, service in enumerate(services):
        c = min(range(CLIENTS), key=lambda i: arrival[i])
        start = max(arrival[c], server_free)
        server_free = start + max(service, 0.0)
        if k >= warmup:
            total += server_free - arrival[c]
            counted += 1
        arrival[c] = server_free + think + (rng.expovariate(1 / noise) if noise > 0 else 0.0)
    return total / counted


def removals(line, fixed, period, jitter, delays, s, requests, rng, cost):
    """Virtual time removed from each request's service, and the samples
    each drew: a sample every period of the server's CPU time, cost of it
    the sample's own (the requests' work back to back)."""
    per_request = line + fixed
    removed = [0.0] * requests
    drawn = [0] * requests
    end = requests * per_request
    work = period - cost  # the program's own work between two samples
    sample = rng.uniform(0, work)
    while sample < end:
        k = int(sample // per_request)
        drawn[k] += 1
        if sample - k * per_request < line:
            if delays == "lump":
                removed[k] += s * period
            else:  # at rate s over the next period of CPU time
                lo, hi = sample, min(sample + period, end)
                j = k
                while j < requests and j * per_request < hi:
                    overlap = min(hi, (j + 1) * per_request) - max(lo, j * per_request)
                    if overlap > 0:
                        removed[j] += s * overlap
                    j += 1
        sample += work * (1 + rng.uniform(-jitter, jitter)) if jitter else work
    return removed, drawn


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--line", type=float, default=0.73, help="ms in the line per request")
    parser.add_argument("--fixed", type=float, default=0.49, help="ms in the rest per request")
    parser.add_argument("--think", type=float, default=1.09, help="ms of think time")
    parser.add_argument("--noise", type=float, default=0.0, help="mean ms of exponential extra think time")
    parser.add_argument("--period", type=float, default=1.0, help="ms of CPU time between samples")
    parser.add_argument("--delays", choices=("lump", "spread"), default="lump")
    parser.add_argument("--jitter", type=float, default=0.0, help="periods drawn from (1-J .. 1+J) x period")
    parser.add_argument("--cost", type=float, default=0.0,
                        help="ms of the server's CPU time a sample costs, inside its period")
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    if min(args.line, args.fixed, args.think, args.period) <= 0 or args.noise < 0 \
            or not 0 <= args.jitter < 1 or not 0 <= args.cost < args.period \
            or args.requests < 100 or args.seeds < 1:
        parser.error("times must be > 0, noise >= 0, 0 <= jitter < 1, 0 <= cost < period, "
                     "requests >= 100, seeds >= 1")

    def true_effect(s, stretch):
        line, fixed = args.line * stretch, args.fixed * stretch
        latency = [mean_latency([(1 - x) * line + fixed] * args.requests, args.think, args.noise, 7)
                   for x in (0, s)]
        return 1 - latency[1] / latency[0]

    def sampled(s, seed):
        """The profiled program's services at virtual speedup s, one sampling
        phase: the samples fall where they do whatever s is."""
        removed, drawn = removals(args.line, args.fixed, args.period, args.jitter, args.delays,
                                  s, args.requests, random.Random(1000 + seed), args.cost)
        return [args.line + args.fixed + n * args.cost - r for r, n in zip(removed, drawn)]

    baselines = [mean_latency(sampled(0, seed), args.think, args.noise, 7)
                 for seed in range(args.seeds)]
    cells = []
    for s in (0.25, 0.5, 1.0):
        true = true_effect(s, 1.0)
        predictions = []
        for seed in range(args.seeds):
            latency = mean_latency(sampled(s, seed), args.think, args.noise, 7)
            predictions.append(1 - latency / baselines[seed])
        predicted = sum(predictions) / len(predictions)
        cell = "%3d %%: true %+5.1f %%, predicted %+5.1f %% (%+5.1f)" % (
            s * 100, true * 100, predicted * 100, (predicted - true) * 100)
        if args.cost:
            profiled = true_effect(s, args.period / (args.period - args.cost))
            cell += ", profiled program's true %+5.1f %%" % (profiled * 100)
        cells.append(cell)
    print("line %.2f fixed %.2f think %.2f noise %.2f period %.2f %s jitter %.2f cost %.3f | %s" %
          (args.line, args.fixed, args.think, args.noise, args.period, args.delays, args.jitter,
           args.cost, " | ".join(cells)))


if __name__ == "__main__":
    main()

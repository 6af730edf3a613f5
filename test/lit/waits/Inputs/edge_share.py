"""Prints the weights of wait-for edges from `causal waits --json` (stdin), for
the known-answer tests that compare edges with each other:

  edge_share.py [--max-ratio R] FROM TO [FROM TO ...]

prints, for each pair of vertex labels (a label may end in '*' to match a
prefix, for a thread whose tid is not known), one line
`FROM -> TO: weight=W% false_wakeups=N` (W: the edge's share of the run time,
0 when there is no such edge), then `ratio=R` of the first edge's weight to
the second's (the second must weigh more than 0); with --max-ratio, exits
with status 1 when that ratio exceeds R.
"""
import json
import sys


def matches(pattern, label):
    return label.startswith(pattern[:-1]) if pattern.endswith("*") else label == pattern


def main():
    args = sys.argv[1:]
    max_ratio = None
    if args[:1] == ["--max-ratio"] and len(args) > 1:
        max_ratio = float(args[1])
        args = args[2:]
    if len(args) < 2 or len(args) % 2 != 0:
        sys.exit("usage: edge_share.py [--max-ratio R] FROM TO [FROM TO ...] < waits.json")
    analysis = json.load(sys.stdin)
    weights = []
    for i in range(0, len(args), 2):
        source, target = args[i], args[i + 1]
        found = [e for e in analysis["edges"]
                 if matches(source, e["from_label"]) and matches(target, e["to_label"])]
        if len(found) > 1:
            sys.exit("%s -> %s: %d edges match" % (source, target, len(found)))
        share = found[0]["share"] if found else 0.0
        false_wakeups = found[0]["false_wakeups"] if found else 0
        weights.append(share)
        print("%s -> %s: weight=%.1f%% false_wakeups=%d" % (source, target, 100 * share,
                                                          false_wakeups))
    if len(weights) >= 2:
        if weights[1] <= 0:
            sys.exit("the second edge weighs nothing")
        ratio = weights[0] / weights[1]
        print("ratio=%.3f" % ratio)
        if max_ratio is not None and ratio > max_ratio:
            print("ratio %.3f exceeds %g" % (ratio, max_ratio), file=sys.stderr)
            sys.exit(1)


main()

#!/usr/bin/env python3
"""bench/ranking: one row per seed from a `causal report --json`, and the results table.

  summary.py seed REPORT_JSON NEEDLE_LINE SEED STATUS SAME_OUTPUT   (prints a seeds.tsv row)
  summary.py table SEEDS_TSV TRUTH_TSV POOLED_JSON NEEDLE_LINE HEADER (prints results.md)
"""
import json
import os
import statistics
import sys


def same_line(a, b):
    """FILE:LINE equal, paths compared by their last component."""
    fa, _, la = a.rpartition(":")
    fb, _, lb = b.rpartition(":")
    return la == lb and os.path.basename(fa) == os.path.basename(fb)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def at(point, speedup):
    for c in point.get("curve", []):
        if abs(c["speedup"] - speedup) < 1e-9:
            return c
    return None


def needle_of(report, needle):
    for line in (report or {}).get("lines", []):
        if same_line(line["line"], needle):
            return line
    return None


def fmt(v, f="%.3f"):
    return "-" if v is None else f % v


def seed_row(argv):
    path, needle, seed, status, same = argv
    report = load(path)
    lines = (report or {}).get("lines", [])
    fdr = (report or {}).get("false_discovery_control") or {}
    top = lines[0] if lines else None
    n = needle_of(report, needle)
    c = at(n["points"][0], 0.5) if n else None
    row = [seed, status, same,
           os.path.basename(top["line"].rpartition(":")[0]) + ":" + top["line"].rpartition(":")[2]
           if top else "-",
           "1" if top and top.get("discovery") else "0",
           str(fdr.get("discoveries", "-")), str(fdr.get("compared", "-")),
           str(n["rank"]) if n else "-", "1" if n and n.get("discovery") else "0",
           fmt(n["points"][0]["slope"]) if n else "-",
           fmt(c["program_speedup"]) if c else "-",
           bound_of(n)]
    print("\t".join(row))


def bound_of(line):
    """The needle's bound limit, with '!' when its curve was flagged as exceeding it."""
    bound = line["points"][0].get("bound") if line else None
    if not bound or bound.get("limit") is None:
        return "-"
    return fmt(bound["limit"]) + ("!" if bound.get("exceeded") else "")


def pct(v):
    return "-" if v is None else "%+.1f %%" % (100 * v)


def table(argv):
    seeds_tsv, truth_tsv, pooled_json, needle, header = argv
    with open(header) as f:
        out = [f.read().rstrip("\n"), ""]
    rows = [l.rstrip("\n").split("\t") for l in open(seeds_tsv)][1:]
    truth = {}
    for l in list(open(truth_tsv))[1:]:
        run, build, rate = l.rstrip("\n").split("\t")
        if rate:
            truth.setdefault(run, {})[build] = float(rate)
    def effect(build):
        vals = [1 - r["plain"] / r[build] for r in truth.values() if "plain" in r and build in r]
        return (statistics.median(vals), min(vals), max(vals)) if vals else None
    needle_truth, noise_truth = effect("needle50"), effect("noise50")
    needle_base = os.path.basename(needle.rpartition(":")[0]) + ":" + needle.rpartition(":")[2]
    n = len(rows)
    ok = [r for r in rows if r[1] == "0" and r[2] == "1"]
    top_needle = sum(1 for r in rows if same_line(r[3], needle))
    top_noise = sum(1 for r in rows if r[3] != "-" and not same_line(r[3], needle))
    top_noise_kept = sum(1 for r in rows if r[3] != "-" and not same_line(r[3], needle) and r[4] == "1")
    none_ranked = sum(1 for r in rows if r[3] == "-")
    out.append("| seeds | needle ranked first | a noise line ranked first | ... of them kept by the "
               "false-discovery control | no line ranked | runs exited 0 with the plain output |")
    out.append("|---|---|---|---|---|---|")
    out.append("| %d | %d | %d | %d | %d | %d |" % (n, top_needle, top_noise, top_noise_kept,
                                                   none_ranked, len(ok)))
    out.append("")
    pooled = load(pooled_json)
    pn = needle_of(pooled, needle)
    pc = at(pn["points"][0], 0.5) if pn else None
    per_seed = [float(r[10]) for r in rows if r[10] != "-"]
    out.append("| line | true effect at 50 % | predicted, all seeds pooled [95 % CI] | "
               "per seed, median (min to max) |")
    out.append("|---|---|---|---|")
    def span(t):
        return "-" if t is None else "%s (%s to %s)" % (pct(t[0]), pct(t[1]), pct(t[2]))
    ci = pc.get("ci") if pc else None
    out.append("| %s (needle) | %s | %s %s | %s |" % (
        needle_base, span(needle_truth), pct(pc["program_speedup"]) if pc else "-",
        "[%s, %s]" % (pct(ci[0]), pct(ci[1])) if ci else "",
        "%s (%s to %s)" % (pct(statistics.median(per_seed)), pct(min(per_seed)), pct(max(per_seed)))
        if per_seed else "-"))
    out.append("| every noise line (knob on all twenty) | %s | 0 by construction | |" % span(noise_truth))
    out.append("")
    out.append("Per seed: top line (kept = 1 when the false-discovery control kept it), lines kept"
               " / compared, the needle's rank, whether it was kept, its slope and program speedup"
               " at 50 %, and the physical bound its curve was checked against ('!': flagged as"
               " exceeding it, which ranks it below every line that does not).")
    out.append("")
    out.append("| seed | top line | kept | kept / compared | needle rank | needle kept | needle slope |"
               " needle at 50 % | needle's bound |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        out.append("| %s | %s | %s | %s / %s | %s | %s | %s | %s | %s |" % (
            r[0], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11]))
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("seed", "table"):
        sys.stderr.write(__doc__)
        sys.exit(2)
    (seed_row if sys.argv[1] == "seed" else table)(sys.argv[2:])

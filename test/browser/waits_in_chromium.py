"""Loads a `causal report --html` page with a waits section in headless Chromium.

Writes a profile (a copy of a report test input) and a synthetic waits sidecar
beside it (test/lit/waits/Inputs/make_waits.py), renders the page, loads it
from a file:// URL with every network name unresolvable and checks that
  * the page's status says "ready: N plots" (the waits section broke nothing),
  * the DOM holds svg#waits-graph with one g.wait-vertex per vertex and one
    g.wait-edge per edge of positive weight (at most 40) that
    `causal waits --json` reports for the same sidecar,
  * the knot table lists the knot's threads,
  * Chromium logged no console message.
Then takes a screenshot and prints "artifact: <path>".
Exit status: 0 pass, 1 fail, 77 skipped (Chromium not installed).
"""
import json
import os
import re
import shutil
import subprocess
import sys

from chromium_page import (SKIP, chromium_or_skip, load_page, page_status, run, screenshot,
                           sidecar_page_arguments)


def main():
    args = sidecar_page_arguments("--make-waits")
    chromium = chromium_or_skip()
    if not chromium:
        return SKIP
    os.makedirs(args.out, exist_ok=True)
    failures = []
    for scenario in ("pipeline", "convoy"):
        profile = os.path.join(args.out, scenario + ".coz")
        scratch = os.path.join(args.out, "scratch-" + scenario)
        subprocess.run([sys.executable, args.make_waits, scenario, scratch], check=True)
        shutil.copy(args.profile, profile)
        shutil.copy(scratch + ".waits", profile + ".waits")
        page = os.path.join(args.out, scenario + ".html")
        report = run([args.causal, "report", "--html", page, profile])
        waits = run([args.causal, "waits", "--json", profile + ".waits"])
        if report.returncode or waits.returncode:
            failures.append("%s: causal failed: %s %s" % (scenario, report.stderr, waits.stderr))
            continue
        analysis = json.loads(waits.stdout)
        edges = min(40, sum(1 for e in analysis["edges"] if e["weight_ns"] > 0))
        vertices = len(analysis["vertices"])
        url = "file://" + os.path.abspath(page)
        loaded, console = load_page(chromium, url)
        dom = loaded.stdout
        if console:
            failures.append("%s: console messages: %s" % (scenario, console[:3]))
        status = page_status(dom)
        if not status or not status.group(1).startswith("ready:"):
            failures.append("%s: status %r" % (scenario, status and status.group(1)))
        if '<svg id="waits-graph"' not in dom:
            failures.append("%s: no svg#waits-graph in the DOM" % scenario)
        drawn_edges = dom.count('class="wait-edge"')
        drawn_vertices = dom.count('class="wait-vertex"')
        if drawn_edges != edges or drawn_vertices != vertices:
            failures.append("%s: drew %d edges and %d vertices, expected %d and %d" %
                            (scenario, drawn_edges, drawn_vertices, edges, vertices))
        knot_labels = analysis["knots"][0]["labels"] if analysis["knots"] else []
        table = re.search(r'<table id="waits-knots">(.*?)</table>', dom, re.S)
        if not table or any(label not in table.group(1) for label in knot_labels):
            failures.append("%s: knot table lacks %s" % (scenario, knot_labels))
        shot = os.path.join(args.out, scenario + ".png")
        screenshot(chromium, url, shot, "1200,1600")
        if os.path.exists(shot):
            print("artifact: " + shot)
        print("%s: %d edges, %d vertices drawn" % (scenario, drawn_edges, drawn_vertices))
    for failure in failures:
        print("FAIL: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

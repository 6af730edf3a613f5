"""Loads a `causal report --html` page with a call-paths section in headless Chromium.

Writes a profile (a copy of a report test input) and the demo paths sidecar
beside it (test/lit/paths/Inputs/make_paths.py demo), renders the page, loads
it from a file:// URL with every network name unresolvable and checks that
  * the page's status says "ready: N plots" (the paths section broke nothing),
  * the DOM holds one div.paths-function per function that
    `causal paths report --json` reports for the same sidecar, and one
    details.paths-callers per function with paths,
  * every frame of helper()'s callers tree is in the DOM,
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
    args = sidecar_page_arguments("--make-paths")
    chromium = chromium_or_skip()
    if not chromium:
        return SKIP
    os.makedirs(args.out, exist_ok=True)
    failures = []
    profile = os.path.join(args.out, "demo.coz")
    subprocess.run([sys.executable, args.make_paths, "demo", profile], check=True)
    shutil.copy(args.profile, profile)
    page = os.path.join(args.out, "demo.html")
    report = run([args.causal, "report", "--html", page, profile])
    paths = run([args.causal, "paths", "report", "--json", profile])
    if report.returncode or paths.returncode:
        print("FAIL: causal failed: %s %s" % (report.stderr, paths.stderr))
        return 1
    analysis = json.loads(paths.stdout)
    functions = len(analysis["functions"])
    with_paths = sum(1 for f in analysis["functions"] if f["tree"])
    frames = []
    stack = [analysis["functions"][0]["tree"]]
    while stack:
        node = stack.pop()
        frames.append("%s (%s)" % (node["function"], node["location"]))
        stack.extend(node["children"])
    url = "file://" + os.path.abspath(page)
    loaded, console = load_page(chromium, url)
    dom = loaded.stdout
    if console:
        failures.append("console messages: %s" % console[:3])
    status = page_status(dom)
    if not status or not status.group(1).startswith("ready:"):
        failures.append("status %r" % (status and status.group(1)))
    drawn = dom.count('<div class="paths-function"')
    trees = dom.count('<details class="paths-callers"')
    if drawn != functions or trees != with_paths:
        failures.append("%d functions and %d callers trees in the DOM, expected %d and %d" %
                        (drawn, trees, functions, with_paths))
    missing = [f for f in frames if "<code>%s</code>" % f not in dom]
    if missing:
        failures.append("frames missing from the DOM: %s" % missing)
    shot = os.path.join(args.out, "demo.png")
    screenshot(chromium, url, shot, "1200,1600")
    if os.path.exists(shot):
        print("artifact: " + shot)
    print("%d functions, %d callers trees, %d frames of the first found" %
          (drawn, trees, len(frames) - len(missing)))
    for failure in failures:
        print("FAIL: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

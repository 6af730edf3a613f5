"""Loads `causal report --html` pages in headless Chromium and checks them.

For each profile: writes the page, loads it from a file:// URL with every
network name unresolvable, and checks that
  * the page's own status element says "ready: N plots", N being the number
    of (line, progress point) curves `causal report --json` reports,
  * the DOM holds N <svg class="plot"> elements with points drawn,
  * Chromium logged no console message (errors, failed loads) for the page,
  * the filter preset by the address (#filter=...) hides the other plots.
Then it takes a screenshot and prints "artifact: <path>".

Exit status: 0 pass, 1 fail, 77 skipped (Chromium not installed).
"""
import argparse
import json
import os
import re
import sys
import tempfile

from chromium_page import (SKIP, chromium_command, chromium_or_skip, load_page, page_status, run,
                           screenshot)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--causal", required=True)
    parser.add_argument("--out", required=True, help="directory for pages and screenshots")
    parser.add_argument("--filter", default="", help="text for the #filter= check")
    parser.add_argument("--filter-expect", type=int, default=-1,
                        help="plots expected visible with --filter")
    parser.add_argument("profiles", nargs="+")
    args = parser.parse_args()

    chromium = chromium_or_skip()
    if not chromium:
        return SKIP
    os.makedirs(args.out, exist_ok=True)
    failures = []
    for index, profile in enumerate(args.profiles):
        name = "page%d" % index
        page = os.path.join(args.out, name + ".html")
        report = run([args.causal, "report", "--bootstrap", "200", "--json", "--html", page,
                      profile])
        if report.returncode != 0:
            failures.append("%s: causal report failed: %s" % (profile, report.stderr.strip()))
            continue
        analysis = json.loads(report.stdout)
        expected = sum(len(line["points"]) for line in analysis["lines"])
        url = "file://" + os.path.abspath(page)

        loaded, console = load_page(chromium, url)
        dom = loaded.stdout
        status = page_status(dom)
        plots = len(re.findall(r'<svg class="plot"', dom))
        circles = len(re.findall(r"<circle ", dom))
        print("%s: %d curve(s) expected; page status %r; %d plot(s), %d point(s) drawn; %d console "
              "message(s)" % (profile, expected, status.group(1) if status else None, plots,
                              circles, len(console)))
        if loaded.returncode != 0:
            failures.append("%s: chromium exited with %d" % (profile, loaded.returncode))
        if not status or status.group(1) != "ready: %d plots" % expected:
            failures.append("%s: page status is %r, expected 'ready: %d plots'"
                            % (profile, status.group(1) if status else None, expected))
        if plots != expected:
            failures.append("%s: %d plots in the DOM, expected %d" % (profile, plots, expected))
        if expected and circles == 0:
            failures.append("%s: no points drawn" % profile)
        for line in console:
            failures.append("%s: console: %s" % (profile, line))

        if args.filter and index == 0:
            with tempfile.TemporaryDirectory() as user_data:
                filtered = run(chromium_command(chromium, user_data, "--dump-dom",
                                                url + "#filter=" + args.filter + "&sort=name"))
            count = re.search(r'<span id="count">(\d+) of (\d+) plots', filtered.stdout)
            print("%s: with #filter=%s: %s" % (profile, args.filter,
                                               count.group(0) if count else "no count"))
            if not count or int(count.group(1)) != args.filter_expect:
                failures.append("%s: filter %r shows %s, expected %d visible" % (
                    profile, args.filter, count.group(0) if count else "nothing",
                    args.filter_expect))

        shot = os.path.join(args.out, name + ".png")
        if os.path.exists(shot):
            os.remove(shot)
        screenshot(chromium, url, shot, "1280,1000")
        if os.path.exists(shot) and os.path.getsize(shot) > 1000:
            print("artifact: %s" % os.path.abspath(shot))
        else:
            failures.append("%s: no screenshot written" % profile)

    for failure in failures:
        print("FAIL: " + failure)
    print("%d passed, %d failed" % (len(args.profiles) - len({f.split(":")[0] for f in failures}),
                                    len({f.split(":")[0] for f in failures})))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""What the browser tests share: headless Chromium found, run offline on a page.

Imported by html_in_chromium.py, waits_in_chromium.py and paths_in_chromium.py
(run as scripts: Python puts this directory first on sys.path). The tests
exit with SKIP when Chromium is not installed.
"""
import argparse
import re
import shutil
import subprocess
import tempfile

SKIP = 77  # the tests' SKIP_RETURN_CODE (test/browser/CMakeLists.txt)


def find_chromium():
    for candidate in ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(candidate)
        if path:
            return path
    return None


def chromium_or_skip():
    """Chromium's path, or None once the test has said it is skipped."""
    chromium = find_chromium()
    if not chromium:
        print("skipped: chromium is not installed (Debian: apt-get install chromium)")
    return chromium


def chromium_command(chromium, profile_dir, *extra):
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir=" + profile_dir,
            "--virtual-time-budget=5000"] + list(extra)


def run(command, timeout=120):
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                          text=True, errors="replace")


def sidecar_page_arguments(make_option):
    """The options of a test of a sidecar's section of the page: --causal, the
    script that writes the sidecar (|make_option|, e.g. "--make-waits"),
    --profile (copied beside it) and --out."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--causal", required=True)
    parser.add_argument(make_option, required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--out", required=True)
    return parser.parse_args()


def load_page(chromium, url):
    """Chromium's run on |url| with the DOM dumped on stdout and the console
    logged on stderr, and the console messages it logged."""
    with tempfile.TemporaryDirectory() as user_data:
        loaded = run(chromium_command(chromium, user_data, "--enable-logging=stderr", "--v=0",
                                      "--dump-dom", url))
    console = [line for line in loaded.stderr.splitlines() if ":CONSOLE" in line]
    return loaded, console


def page_status(dom):
    """The match of the page's status element in |dom| (group 1: its text), or None."""
    return re.search(r'<div id="status"[^>]*>([^<]*)</div>', dom)


def screenshot(chromium, url, shot, window_size):
    """A screenshot of |url| at |window_size| ("W,H") into |shot|."""
    with tempfile.TemporaryDirectory() as user_data:
        run(chromium_command(chromium, user_data, "--window-size=" + window_size,
                             "--screenshot=" + shot, url))

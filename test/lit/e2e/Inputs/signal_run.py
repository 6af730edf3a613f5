#!/usr/bin/env python3
"""Starts a command, sends it SIGNAL after DELAY seconds (kill PID, as a
supervisor would), waits for it and prints how it ended ("signal N" or
"exit N") and whether it ended within LIMIT seconds of the signal.

    signal_run.py SIGNAL DELAY LIMIT -- COMMAND [ARGS...]
"""
import subprocess
import sys
import time


def main():
    signal, delay, limit = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    if sys.argv[4] != "--":
        sys.exit("usage: signal_run.py SIGNAL DELAY LIMIT -- COMMAND [ARGS...]")
    child = subprocess.Popen(sys.argv[5:])
    time.sleep(delay)
    sent = time.monotonic()
    child.send_signal(signal)
    status = child.wait()
    took = time.monotonic() - sent
    print("signal %d" % -status if status < 0 else "exit %d" % status)
    print("ended %s %g s after the signal" % ("within" if took <= limit else "NOT within", limit))


if __name__ == "__main__":
    main()

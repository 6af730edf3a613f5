#!/usr/bin/env python3
"""Runs COMMAND... FIFO on a FIFO that a writer fills without end (one line that
never ends) and prints the command's stderr, its exit status and whether it
ended within a second (issue 19, point 7).

  endless_fifo.py FIFO COMMAND...
"""
import os
import subprocess
import sys
import threading
import time

fifo, command = sys.argv[1], sys.argv[2:]
if os.path.exists(fifo):
    os.unlink(fifo)
os.mkfifo(fifo)


def write_forever():
    # Blocks until the command opens the FIFO, then writes until it closes it.
    chunk = b"y" * 65536
    try:
        with open(fifo, "wb", buffering=0) as out:
            while True:
                out.write(chunk)
    except OSError:  # the reader closed it (EPIPE)
        pass


writer = threading.Thread(target=write_forever, daemon=True)
writer.start()
start = time.monotonic()
try:
    done = subprocess.run(command + [fifo], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          timeout=30)
    seconds = time.monotonic() - start
    sys.stdout.write(done.stderr.decode(errors="replace"))
    print("exit %d" % done.returncode)
    print("within a second: %s" % ("yes" if seconds < 1.0 else "no (%.1f s)" % seconds))
except subprocess.TimeoutExpired:
    print("still reading after 30 s")
finally:
    os.unlink(fifo)

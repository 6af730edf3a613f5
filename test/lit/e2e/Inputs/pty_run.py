#!/usr/bin/env python3
"""Runs a command with its standard error on a pseudo-terminal (stdin and
stdout are left as they are), and writes what appeared on the terminal to
TRANSCRIPT, control characters spelled out so that FileCheck can match them:
carriage return <CR>, "ESC [ K" (clear to the end of the line) <EL>, line
feed <NL> followed by a real line break, any other escape <ESC>. The last
line is "[exit N]" (or "[signal N]"); the script exits with the command's
status.

    pty_run.py TRANSCRIPT -- COMMAND [ARGS...]
"""
import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios


def main():
    transcript, separator, command = sys.argv[1], sys.argv[2], sys.argv[3:]
    if separator != "--" or not command:
        sys.exit("usage: pty_run.py TRANSCRIPT -- COMMAND [ARGS...]")
    master, slave = pty.openpty()
    # A wide terminal: the status line is cut to the width, the test reads
    # all of its fields.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 400, 0, 0))
    child = subprocess.Popen(command, stderr=slave)
    os.close(slave)
    seen = bytearray()
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                data = b""
            if not data:
                break
            seen += data
        elif child.poll() is not None:
            break
    status = child.wait()
    text = (
        bytes(seen)
        .replace(b"\r\n", b"\n")  # the terminal's own output processing (ONLCR)
        .replace(b"\r", b"<CR>")
        .replace(b"\x1b[K", b"<EL>")
        .replace(b"\x1b", b"<ESC>")
        .replace(b"\n", b"<NL>\n")
    )
    with open(transcript, "wb") as out:
        out.write(text)
        if text and not text.endswith(b"\n"):
            out.write(b"\n")
        out.write(b"[signal %d]\n" % -status if status < 0 else b"[exit %d]\n" % status)
    sys.exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()

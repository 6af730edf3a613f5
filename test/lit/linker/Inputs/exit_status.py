"""Runs a command and prints its exit status (lit's `not` only inverts it)."""
import subprocess
import sys

print("exit status: %d" % subprocess.run(sys.argv[1:]).returncode)

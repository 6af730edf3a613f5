"""usage: exit-status.py <expected status> <command...>
Runs the command; succeeds only if it exits with exactly that status."""
import subprocess
import sys

expected = int(sys.argv[1])
status = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if status != expected:
    print("exit status %d, expected %d" % (status, expected))
    sys.exit(1)

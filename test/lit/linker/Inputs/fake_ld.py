#!/usr/bin/env python3
"""Stands in for the real linker: records its arguments, exits with status 3."""
import os
import sys

with open(os.environ["FAKE_LD_LOG"], "w") as log:
    log.write("\n".join(sys.argv[1:]) + "\n")
sys.exit(3)

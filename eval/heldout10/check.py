#!/usr/bin/env python3
"""Checks the hand-written truth of eval/heldout10 against the logs' text.

Usage: eval/heldout10/check.py [--print]   (from the repository root)

A thin wrapper: the checks are eval/check_truth.py's (see its docstring),
run on this directory, with the few phrase, field and unit alternatives
this set's messages need added here (so that the shared file does not show
what a blind set holds).  Exit status 1 on any failure.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from check_truth import check, extend  # noqa: E402

# Phrases this set holds that the shared table lacks: early PaddlePaddle
# Fluid's "enforce allocating <= available failed", and kernel OOM-killer
# dumps cut before their victim's line ("invoked oom-killer").
PHRASES = {
    "cuda_raw": r"enforce allocating <= available failed",
    "host_oom_killer": r"invoked oom-killer",
}
# Printed layouts of figures the shared table lacks: PaddlePaddle's
# "Cannot allocate 3.125000GB" and "available memory is only 117.750000MB"
# (1024-based, SOURCES.md).
FIELDS = {
    "requested_bytes": [r"Cannot allocate ([0-9.]+)(GB|MB)"],
    "free_bytes": [r"available memory is only\s+([0-9.]+)(GB|MB)"],
}

if __name__ == "__main__":
    extend(PHRASES, FIELDS)
    sys.exit(check(HERE))

#!/usr/bin/env python3
"""Checks the hand-written truth of eval/heldout5 against the logs' text.

Usage: eval/heldout5/check.py [--print]   (from the repository root)

A thin wrapper: the checks are eval/check_truth.py's (see its docstring),
run on this directory, with the few phrase and field alternatives this
set's messages need added here (so that the shared file does not show
what a blind set holds).  Exit status 1 on any failure.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from check_truth import check, extend  # noqa: E402

# Phrases of kill and allocation messages this set holds that the shared
# table lacks, and two printed layouts of a figure: NumPy's three
# significant digits ("139. MiB") and a figure that a hard wrap split from
# its words ("18.33\nGiB reserved in total", "23.29 GiB \nreserved").
PHRASES = {
    "host_oom_killer": r"invoked oom-killer|earlyoom.*sending SIG\w+ to process",
    "ggml": r"unable to allocate \w* ?buffer",
    "xpu": r"can NOT allocate memory block with size larger than 4GB",
}
FIELDS = {
    "requested_bytes": [r"Unable to allocate ([0-9]+)\. (GiB|MiB|KiB)"],
    "reserved_bytes": [r"([0-9]+(?:\.[0-9]+)?)\n(GiB|MiB) reserved in total",
                       r"([0-9]+(?:\.[0-9]+)?) (GiB|MiB) \nreserved in total"],
}

if __name__ == "__main__":
    extend(PHRASES, FIELDS)
    sys.exit(check(HERE))

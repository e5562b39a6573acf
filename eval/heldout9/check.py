#!/usr/bin/env python3
"""Checks the hand-written truth of eval/heldout9 against the logs' text.

Usage: eval/heldout9/check.py [--print]   (from the repository root)

A thin wrapper: the checks are eval/check_truth.py's (see its docstring),
run on this directory, with the few phrase, field and unit alternatives
this set's messages need added here (so that the shared file does not show
what a blind set holds).  Exit status 1 on any failure.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import check_truth  # noqa: E402
from check_truth import NUM, check, extend  # noqa: E402

# Phrases this set holds that the shared table lacks: XLA's TPU message
# "RESOURCE_EXHAUSTED: Attempting to allocate 31.06M. That was not possible.",
# and kernel OOM-killer dumps cut before their victim's line.
PHRASES = {
    "host_oom_killer": r"invoked oom-killer",
    "xla_resource_exhausted": r"RESOURCE_EXHAUSTED: Attempting to allocate",
}
# Printed layouts of figures the shared table lacks: a PyTorch message that
# its poster retyped in lower case ("tried to allocate 30.00 mib (gpu 0;
# 8.00 gib total capacity; ...)"), whose units are read as MiB and GiB, and
# NumPy's "Unable to allocate 201. GiB" (its "%.3g" form), and a message
# hard-wrapped between a figure and its words ("76.13 GiB \nalready").
LOWER = r"([0-9]+(?:\.[0-9]+)?) ?(mib|gib)\b"
FIELDS = {
    "requested_bytes": [r"tried to allocate " + LOWER,
                        r"Unable to allocate ([0-9]+)\. (GiB)"],
    "total_bytes": [LOWER + r" total capacity"],
    "allocated_bytes": [LOWER + r" already allocated",
                        NUM + r" \nalready allocated"],
    "reserved_bytes": [LOWER + r" reserved in total"],
}
check_truth.UNIT.update({"mib": 2**20, "gib": 2**30})

if __name__ == "__main__":
    extend(PHRASES, FIELDS)
    sys.exit(check(HERE))

#!/usr/bin/env python3
"""Checks the hand-written truth of eval/heldout7 against the logs' text.

Usage: eval/heldout7/check.py [--print]   (from the repository root)

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
from check_truth import check, extend  # noqa: E402

# Phrases this set holds that the shared table lacks (a PyTorch message
# pasted without its first words, "Tried to allocate 418.00 MiB" alone on
# its line), and printed layouts of figures it lacks: a figure that a hard
# wrap split from its words ("17.59 GiB reserved\n in total").
PHRASES = {
    "cuda_caching_allocator": r"^Tried to allocate [0-9.]+ (MiB|GiB) +\(GPU",
}
FIELDS = {
    "reserved_bytes": [r"([0-9]+(?:\.[0-9]+)?) (GiB|MiB) reserved\n in total"],
}

if __name__ == "__main__":
    # XLA's TPU figures in K ("Attempting to allocate 832.0K"), 1024-based
    # like its M and G (SOURCES.md).
    check_truth.UNIT["K"] = 2**10
    check_truth.FIELD["requested_bytes"].insert(
        0, r"Attempting to allocate ([0-9]+(?:\.[0-9]+)?)(K)\b")
    check_truth.FIELD["free_bytes"].insert(
        0, r"There are ([0-9]+(?:\.[0-9]+)?)(K) free")
    extend(PHRASES, FIELDS)
    sys.exit(check(HERE))

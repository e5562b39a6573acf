#!/usr/bin/env python3
"""Checks the hand-written truth of eval/heldout8 against the logs' text.

Usage: eval/heldout8/check.py [--print]   (from the repository root)

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

# Phrases this set holds that the shared table lacks: a PyTorch message
# pasted without its first words ("Tried to allocate 7.93 GiB (GPU 2;"),
# llama.cpp's cudaMalloc line with no "failed to allocate" line after it,
# and a kernel OOM-killer dump cut before its victim's line.
PHRASES = {
    "cuda_caching_allocator": r"^Tried to allocate [0-9.]+ (MiB|GiB) +\(GPU",
    "ggml": r"cudaMalloc failed: out of memory",
    "host_oom_killer": r"invoked oom-killer",
}
# Printed layouts of figures the shared table lacks: TensorFlow 0.x's BFC
# "Ran out of memory trying to allocate 220.5KiB".
FIELDS = {
    "requested_bytes": [r"[Rr]an out of memory trying to allocate ([0-9]+(?:\.[0-9]+)?)(KiB|MiB|GiB)"],
}

if __name__ == "__main__":
    extend(PHRASES, FIELDS)
    sys.exit(check(HERE))

#!/usr/bin/env python3
"""Checks the hand-written truth of eval/heldout6 against the logs' text.

Usage: eval/heldout6/check.py [--print]   (from the repository root)

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

NUM = r"([0-9]+(?:\.[0-9]+)?) ?(GiB|MiB|KiB)"
# Phrases this set holds that the shared table lacks (ggml's Vulkan
# backend's failed device allocation, a shell's exit status 137 and a
# Kubernetes status's exitCode 137), and printed layouts of figures it
# lacks: a figure that a hard wrap split from its words ("5.24 GiB
# already\nallocated", "39.56\nGiB total capacity", "38.21 GiB \nreserved
# in total"), TensorFlow's BFC request without a space ("trying to allocate
# 3.72GiB"), NumPy's three significant digits ("926. GiB"), and
# PaddlePaddle's "Cannot allocate 1.531250GB" and "available memory is only
# 416.625000MB" (1024-based, SOURCES.md).
PHRASES = {
    "ggml": r"ErrorOutOfDeviceMemory|Device memory allocation of size [0-9]+ failed",
    "host_oom_killer": r"exit code 137",
    "k8s_oomkilled": r"exitCode: 137",
}
FIELDS = {
    "requested_bytes": [r"trying to allocate " + NUM,
                        r"Unable to allocate ([0-9]+)\. (GiB|MiB|KiB)",
                        r"Cannot allocate ([0-9.]+)(GB|MB)"],
    "total_bytes": [r"([0-9]+(?:\.[0-9]+)?)\n(GiB|MiB) total capacity"],
    "allocated_bytes": [NUM + r" already\nallocated"],
    "free_bytes": [r"available memory is only\s+([0-9.]+)(GB|MB)"],
    "reserved_bytes": [r"([0-9]+(?:\.[0-9]+)?) (GiB|MiB) \nreserved in total"],
}

if __name__ == "__main__":
    extend(PHRASES, FIELDS)
    sys.exit(check(HERE))

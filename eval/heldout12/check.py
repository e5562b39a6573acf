#!/usr/bin/env python3
"""Checks the hand-written truth of eval/heldout12 against the logs' text.

Usage: eval/heldout12/check.py [--print]   (from the repository root)

A thin wrapper: the checks are eval/check_truth.py's (see its docstring),
run on this directory, with the few kinds, phrase, field and unit
alternatives this set's messages need added here (so that the shared file
does not show what a blind set holds).  Exit status 1 on any failure.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import check_truth  # noqa: E402
from check_truth import check, extend  # noqa: E402

# Kinds that man/oomdoc.1 names and the shared table predates (none of
# this set's truths uses them; kept as eval/heldout11's wrapper has them).
KINDS = {"npu", "metal", "sycl"}
# Phrases this set holds that the shared table lacks: OpenCV's
# "Insufficient memory" (kind host_alloc_failed, see SOURCES.md), ggml's
# CUDA/HIP buffer allocation "cudaMalloc failed: out of memory" and
# llama.cpp's "unable to allocate CUDA_Host buffer", a kernel OOM-killer
# dump cut before its victim, and Ray's "Ray killed this worker"; the
# other alternatives are eval/heldout11's, kept so that both wrappers read
# the same messages alike.
PHRASES = {
    "cuda_raw": r"Out of GPU memory|failed with error 2",
    "npu": r"NPU out of memory",
    "sycl": r"UR_RESULT_ERROR_OUT_OF_\w+",
    "ggml": r"Device memory allocation of size|cudaMalloc failed: out of memory|unable to allocate \w+ buffer",
    "slurm_oom": r"killed by YARN for exceeding memory limits",
    "host_oom_killer": r"invoked oom-killer",
    "ray": r"Ray killed this worker",
    "host_alloc_failed": r"heap out of memory|fatal error: out of memory|cannot allocate vector|Insufficient memory",
}
# Printed layouts of figures the shared table lacks: TensorFlow's BFC
# warning "ran out of memory trying to allocate 2.43MiB" (no space before
# the unit) and ggml's "alloc_buffer: allocating 98988.40 MiB on device 0";
# the others are eval/heldout11's (XGBoost, R, Go, ggml's Vulkan size,
# torch-directml, TensorRT).  OpenCV's "Failed to allocate N bytes" and
# TensorRT's "Requested size was N bytes" are exact byte counts, which the
# shared check finds printed.
FIELDS = {
    "requested_bytes": [r"Requested memory: ([0-9.]+)(GB|MB)",
                        r"cannot allocate vector of size ([0-9.]+) (Gb|Mb)",
                        r"VirtualAlloc of ([0-9]+) (bytes)",
                        r"allocation of size ([0-9]+)()",
                        r"Could not allocate tensor with ([0-9]+) (bytes)",
                        r"Requested amount of GPU memory \(([0-9]+) (bytes)\)",
                        r"ran out of memory trying to allocate ([0-9.]+) ?(MiB|GiB|KiB)",
                        r"alloc_buffer: allocating ([0-9.]+) (MiB) on device"],
    "free_bytes": [r"Free memory: ([0-9.]+)(GB|MB)"],
}
UNITS = {"Gb": 2**30, "Mb": 2**20}

if __name__ == "__main__":
    check_truth.KINDS.update(KINDS)
    check_truth.UNIT.update(UNITS)
    extend(PHRASES, FIELDS)
    sys.exit(check(HERE))

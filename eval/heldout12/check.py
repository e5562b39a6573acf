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

# Kinds that man/oomdoc.1 names and the shared table predates.
KINDS = {"npu", "metal", "sycl"}
# Phrases this set holds that the shared table lacks: CUDA.jl's "Out of GPU
# memory", spconv's "cuda execution failed with error 2", torch_npu's and
# SYCL's messages, ggml's Vulkan "Device memory allocation of size N
# failed.", YARN's container kills, kernel OOM-killer dumps cut before their
# victim, Ray's "Ray killed this worker", and host runtimes' refusals (V8's
# "JavaScript heap out of memory", Go's "fatal error: out of memory", R's
# "cannot allocate vector").
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
# Printed layouts of figures the shared table lacks: XGBoost's "- Free
# memory: 53.1098GB" / "- Requested memory: 64GB" (its HumanMemUnit, 1024-
# based), R's "cannot allocate vector of size 3.8 Gb" (1024-based), Go's
# "VirtualAlloc of N bytes", ggml's "allocation of size N", torch-directml's
# "Could not allocate tensor with N bytes" and TensorRT's "Requested amount
# of GPU memory (N bytes)".
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

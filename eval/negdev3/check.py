#!/usr/bin/env python3
"""Checks the hand-written truth of eval/negdev3 against the logs' text.

Usage: eval/negdev3/check.py [--print]   (from the repository root)

A thin wrapper: the checks are eval/check_truth.py's (see its docstring),
run on this directory.  Exit status 1 on any failure.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from check_truth import check  # noqa: E402

if __name__ == "__main__":
    sys.exit(check(HERE))

#!/usr/bin/env python3
"""The text report fits the width: over every fixtures/*/*.log, at 80 and
at 60 columns (--width; COLUMNS on a sample of the logs), no line is wider
than the width unless it ends with one word that no line could hold: a
word longer than 24 columns (the least room wrap.c leaves after a hanging
indent) that crosses the width.  Wrapping moves words, never cuts or drops
one: with -v (the messages in full at every width) the words of the
report at 80 and at 60 are those at 1000 columns, in the same order.  The
memory bar, a picture, fits narrower widths too (its cells follow them).

Usage: tests/check_width.py OOMDOC (from the repository root)
"""
import glob
import os
import subprocess
import sys

from fixture_share import share

ROOM = 24


def run(oomdoc, log, width, verbose=False, env_width=False):
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    args = [oomdoc, "--color", "never", "--format", "text"]
    if env_width:
        env["COLUMNS"] = str(width)
    else:
        args += ["--width", str(width)]
    if verbose:
        args.append("-v")
    p = subprocess.run(args + [log], capture_output=True, env=env)
    return p.stdout.decode("utf-8", "replace")


def cols(s):
    return len(s)


def bad_lines(text, width):
    """The lines wider than width that do not end with the one word that
    crosses it, a word longer than ROOM columns."""
    bad = []
    for n, line in enumerate(text.split("\n"), 1):
        if cols(line) <= width:
            continue
        words = line.split(" ")
        last = words[-1]
        before = line[: len(line) - len(last)]
        if cols(before) < width and cols(last) > ROOM:
            continue
        bad.append((n, line))
    return bad


def words(text):
    """The words of a report, but for the memory bar's two lines, a
    picture whose cells follow the width."""
    return " ".join(ln for ln in text.split("\n")
                    if not ln.startswith("    [")).split()


def main():
    oomdoc = sys.argv[1]
    fails = 0
    checked = 0
    logs = share(glob.glob("fixtures/*/*.log"))
    for log in logs:
        wide = words(run(oomdoc, log, 1000, verbose=True))
        for width in (80, 60):
            for verbose in (False, True):
                text = run(oomdoc, log, width, verbose)
                for n, line in bad_lines(text, width):
                    print(f"FAIL {log} at {width}{' -v' if verbose else ''}:"
                          f" line {n} is {cols(line)} columns: {line!r}")
                    fails += 1
                if verbose and words(text) != wide:
                    print(f"FAIL {log} at {width} -v: the words differ from"
                          " those at 1000 columns")
                    fails += 1
                checked += 1
    # COLUMNS gives the width that --width gives.  How the width is chosen
    # does not depend on the log, so a few logs of different shapes check
    # it; each run costs a process start, which the sanitizer build makes
    # the larger part of this test.
    for log in logs[:: max(1, len(logs) // 4)]:
        for width in (80, 60):
            if run(oomdoc, log, width, env_width=True) != \
                    run(oomdoc, log, width):
                print(f"FAIL {log}: COLUMNS={width} and --width {width}"
                      " differ")
                fails += 1
    # The message in full only with -v: the sample's ends with a URL.
    url = "https://pytorch.org/docs/stable/notes/cuda.html#environment-"
    short = run(oomdoc, "fixtures/sample/job.log", 80)
    full = run(oomdoc, "fixtures/sample/job.log", 80, verbose=True)
    if url in short or "[... -v shows the rest]" not in short or \
            url not in full or "-v shows" in full:
        print("FAIL the sample's message: shortened without -v, whole with"
              " it")
        fails += 1
    # The memory bar is a picture, not words: it is drawn with fewer
    # cells on a narrow report (at least 10), so that it and what of the
    # request runs past it fit from 28 columns on (below, the 10 cells).
    for log in ("fixtures/sample/job.log",
                "fixtures/pytorch/alloc_warning_then_oom.log"):
        for width in (28, 36, 44, 52, 60):
            bars = [ln for ln in run(oomdoc, log, width).split("\n")
                    if ln.startswith("    [")]
            if not bars or any(cols(ln) > width for ln in bars):
                print(f"FAIL {log} at {width}: the bar does not fit: "
                      f"{bars!r}")
                fails += 1
    print(f"{checked} reports of {len(logs)} logs checked, {fails} failures")
    return 1 if fails or not logs else 0


if __name__ == "__main__":
    sys.exit(main())

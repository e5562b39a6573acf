#!/usr/bin/env python3
"""The text report fits the width: over every fixtures/*/*.log, at 80 and
at 60 columns (--width; COLUMNS on a sample of the logs), no line is wider
than the width unless it ends with one word that no line could hold: a
word longer than 24 columns (the least room wrap.c leaves after a hanging
indent) that crosses the width.  Wrapping moves words, never cuts or drops
one: with -v (the messages in full at every width) the words of the
report at 80 and at 60 are those at 1000 columns, in the same order.  The
memory bar, a picture, fits narrower widths too (its cells follow them).

The runs of oomdoc, a process each, are most of this test's time: the
logs are checked OOMDOC_TEST_JOBS at a time (default: one a CPU that this
process may use), each in a thread of a pool, and a report that two
checks ask for (the same arguments) is made once: the COLUMNS check, the
sample's message and the bar at 60 columns read the sweep's reports.

Usage: tests/check_width.py OOMDOC (from the repository root)
"""
import concurrent.futures
import glob
import os
import subprocess
import sys
import threading

from fixture_share import share

ROOM = 24


_reports = {}
_reports_lock = threading.Lock()


def run(oomdoc, log, width, verbose=False, env_width=False):
    """The text report of log at width, made once for each set of
    arguments (a later call with the same ones has the first's report)."""
    key = (oomdoc, log, width, verbose, env_width)
    with _reports_lock:
        if key in _reports:
            return _reports[key]
    text = _run(oomdoc, log, width, verbose, env_width)
    with _reports_lock:
        _reports[key] = text
    return text


def _run(oomdoc, log, width, verbose, env_width):
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


def check_log(oomdoc, log):
    """The failures of log's reports at 80 and 60 columns, and how many
    reports were checked."""
    fails = []
    checked = 0
    wide = words(run(oomdoc, log, 1000, verbose=True))
    for width in (80, 60):
        for verbose in (False, True):
            text = run(oomdoc, log, width, verbose)
            for n, line in bad_lines(text, width):
                fails.append(f"FAIL {log} at {width}"
                             f"{' -v' if verbose else ''}: line {n} is"
                             f" {cols(line)} columns: {line!r}")
            if verbose and words(text) != wide:
                fails.append(f"FAIL {log} at {width} -v: the words differ"
                             " from those at 1000 columns")
            checked += 1
    return fails, checked


def jobs():
    """How many runs of oomdoc at a time: OOMDOC_TEST_JOBS, else one a
    CPU that this process may use."""
    text = os.environ.get("OOMDOC_TEST_JOBS", "")
    if text:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if n < 1:
            sys.exit(f"OOMDOC_TEST_JOBS={text!r}: a whole number of 1 or"
                     " more")
        return n
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:
        return os.cpu_count() or 1


def main():
    oomdoc = sys.argv[1]
    fails = 0
    checked = 0
    logs = share(glob.glob("fixtures/*/*.log"))
    with concurrent.futures.ThreadPoolExecutor(jobs()) as pool:
        # In the order of the logs, whichever finishes first.
        for log_fails, log_checked in pool.map(
                lambda log: check_log(oomdoc, log), logs):
            for line in log_fails:
                print(line)
            fails += len(log_fails)
            checked += log_checked
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

"""The share of the fixtures that a sweeping check runs on.

The plain build runs every check on every fixture.  In the sanitizer build
one run of oomdoc costs about five times as much, and the golden test
already runs every fixture there in the text, JSON and Markdown formats;
so tests/CMakeLists.txt sets OOMDOC_TEST_SHARE=N for the checks that sweep
the fixtures once more in other widths or formats (text_width, schema,
github, prometheus, statements), and each of them takes every Nth fixture
of its sorted list, starting with the first.  Unset or 1: every fixture.
"""
import os
import sys


def share(logs):
    """Every Nth of the sorted logs for OOMDOC_TEST_SHARE=N, all of them
    when it is unset; says on standard output how many it kept."""
    text = os.environ.get("OOMDOC_TEST_SHARE", "1")
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        sys.exit(f"OOMDOC_TEST_SHARE={text!r}: a whole number of 1 or more")
    logs = sorted(logs)
    if n == 1:
        return logs
    kept = logs[::n]
    print(f"OOMDOC_TEST_SHARE={n}: {len(kept)} of {len(logs)} logs")
    return kept

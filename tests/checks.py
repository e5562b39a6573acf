"""What the Python tests of the command share (tests/stream.py,
stream_text.py, shell_completions.py, many_inputs.py): checks that are
collected rather than stopping the test at the first, and the end of a
run that prints them.  Each test runs as a script from the repository
root, so that its own folder, tests/, is on sys.path."""

fails = []


def check(cond, what):
    """Records what as a failure when cond is false."""
    if not cond:
        fails.append(what)


def summary(most=None):
    """Prints the failures (the first most of them, when given) and their
    count; returns the exit status: 1 when any check failed, else 0."""
    for f in fails[:most]:
        print("FAIL", f)
    print("%d failed" % len(fails))
    return 1 if fails else 0

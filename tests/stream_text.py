#!/usr/bin/env python3
"""--line-buffered: the text report as each event is complete (issue 13,
item 2), as tests/stream.py checks --format jsonl.

Behaviour checks, not benchmarks (the bounds are generous):

  1. Files: the output of --line-buffered is, byte for byte, the report
     without it with its heading (the lines before the first blank line)
     moved to the end, for fixtures of one and of several events.
  2. A pipe left open and silent after an OOM: the event's block comes out
     within BOUND seconds, before the end of the input and before the
     heading; closing the pipe then writes only the heading, and the whole
     is the report of the same log, heading last.
  3. A kill that the next lines may still join is held at the pause;
     SIGTERM writes its block and the heading, and exits 143.
  4. --follow a file that grows: the block comes out within BOUND seconds
     of the OOM text reaching the file; SIGTERM ends it (143).
  5. The same failure in two inputs: the first input's block is written
     when its event is complete, and at the end it is written again (the
     second input's report added to it), under a line that says so; that
     last block is the one of the report without --line-buffered.
  6. A document format refuses it (status 2).

Usage: tests/stream_text.py OOMDOC   (from the repository root)
"""
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

from checks import check, summary

BOUND = 5.0


def run(oomdoc, args, stdin=None):
    return subprocess.run([oomdoc, "--width", "80", "--color", "never"] +
                          args, capture_output=True, input=stdin)


def heading_last(text):
    """The report without --line-buffered, heading moved to the end."""
    if "\n\n" not in text:
        return text
    head, rest = text.split("\n\n", 1)
    return rest + head + "\n"


def start(oomdoc, args):
    return subprocess.Popen([oomdoc, "--width", "80", "--color", "never"] +
                            args, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def read_until(p, marker, timeout):
    """p's output up to and including the line holding marker, read
    within timeout seconds; None when it did not come."""
    end = time.monotonic() + timeout
    buf = b""
    while time.monotonic() < end:
        r, _, _ = select.select([p.stdout], [], [], end - time.monotonic())
        if not r:
            break
        c = os.read(p.stdout.fileno(), 4096)
        if not c:
            break
        buf += c
        if marker in buf and buf.endswith(b"\n"):
            return buf
    return None


def main():
    oomdoc = sys.argv[1]

    # 1. Files: the same bytes, heading last.
    for log in ["fixtures/sample/job.log",
                "fixtures/pytorch/alloc_warning_then_oom.log",
                "fixtures/stacks/rank-first-failure-then-sigterm.log",
                "fixtures/stacks/killed-bare-line.log"]:
        want = run(oomdoc, [log])
        got = run(oomdoc, ["--line-buffered", log])
        check(got.stdout.decode() == heading_last(want.stdout.decode()),
              "%s: --line-buffered is not the report, heading last" % log)
        check(got.returncode == want.returncode == 0,
              "%s: exit %d and %d" % (log, got.returncode, want.returncode))

    # 2. A pipe that pauses after the OOM.
    log = "fixtures/sample/job.log"
    with open(log, "rb") as f:
        text = f.read()
    want = heading_last(run(oomdoc, [log]).stdout.decode()).replace(
        log, "(standard input)")
    p = start(oomdoc, ["--line-buffered"])
    p.stdin.write(text)
    p.stdin.flush()
    t0 = time.monotonic()
    early = read_until(p, b"    fingerprint ", BOUND)
    took = time.monotonic() - t0
    check(early is not None, "pipe: no block within %.0f s of the OOM text"
          % BOUND)
    check(early is None or b"out-of-memory event" not in early,
          "pipe: the heading came before the end of the input")
    check(p.poll() is None, "pipe: oomdoc ended before its input did")
    p.stdin.close()
    rest = p.stdout.read()
    check(p.wait() == 0, "pipe: exit %s after EOF" % p.returncode)
    whole = (early or b"") + rest
    check(whole.decode() == want, "pipe: the whole output is not the "
          "report, heading last:\n%s" % whole.decode()[-400:])
    check(rest.decode().startswith("oomdoc: 1 out-of-memory event found"),
          "pipe: after EOF, %r, not only the heading" % rest[:80])
    print("block delivered %.2f s after the text" % took)

    # 3. A pending kill: held at the pause, written by SIGTERM.
    with open("fixtures/stacks/killed-bare-line.log", "rb") as f:
        killed = f.read()
    p = start(oomdoc, ["--line-buffered"])
    p.stdin.write(killed)
    p.stdin.flush()
    held = read_until(p, b"\n", 1.5)
    check(held is None, "a kill that the next lines may join was written "
          "at the pause: %r" % (held or b"")[:80])
    p.send_signal(signal.SIGTERM)
    out = read_until(p, b"out-of-memory event", BOUND)
    check(out is not None and out.startswith(b"#1  "),
          "SIGTERM did not write the pending block: %r" % (out or b"")[:80])
    check(p.wait(BOUND) == 128 + signal.SIGTERM,
          "SIGTERM: exit %s, want 143" % p.returncode)
    p.stdin.close()

    # 4. --follow a growing file.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "job.log")
        with open(path, "wb") as f:
            f.write(b"step 1 loss 2.0\n")
        p = subprocess.Popen([oomdoc, "--width", "80", "--line-buffered",
                              "--follow", path], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        time.sleep(0.5)
        with open(path, "ab") as f:
            f.write(text)
        t0 = time.monotonic()
        blk = read_until(p, b"    fingerprint ", BOUND)
        check(blk is not None, "--follow: no block within %.0f s" % BOUND)
        print("--follow: block %.2f s after the text" %
              (time.monotonic() - t0))
        p.send_signal(signal.SIGTERM)
        rest = p.stdout.read()
        check(p.wait(BOUND) == 128 + signal.SIGTERM,
              "--follow: exit %s, want 143" % p.returncode)
        check(rest.startswith(b"oomdoc: 1 out-of-memory event found"),
              "--follow: after SIGTERM, %r" % rest[:80])

    # 5. The same failure in two inputs.
    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, "a.log"), os.path.join(d, "b.log")
        for path in (a, b):
            with open(path, "wb") as f:
                f.write(text)
        plain = run(oomdoc, [a, b]).stdout.decode()
        got = run(oomdoc, ["--line-buffered", a, b]).stdout.decode()
        note = "oomdoc: #1 again, as it stands at the end: what was read"
        check(got.count("#1  ") == 2 and note in got,
              "two inputs: the block is not written again with the note")
        first, _, last = got.partition(note)
        check("also in" not in first and ("also in    " + b) in last,
              "two inputs: the first block has 'also in', or the last lacks "
              "it")
        last = last.split("\n", 2)[2]    # after the note's two lines
        check(last == heading_last(plain),
              "two inputs: the final block and heading are not the "
              "report's:\n%s" % last[:300])

    # 6. A document format.
    r = run(oomdoc, ["--line-buffered", "-f", "json", log])
    check(r.returncode == 2 and b"--line-buffered" in r.stderr,
          "-f json --line-buffered: exit %d" % r.returncode)

    return summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""--format jsonl on a pipe that pauses, and SIGTERM (issue 13, item 2).

Behaviour checks, not benchmarks (the bounds are generous):

  1. An OOM written to oomdoc's standard input, the pipe then left open
     and silent: the event's line comes out within BOUND seconds (the
     scanner alone would wait for 32 KiB more text; the idle flush
     delivers it), as JSON whose kind and line are those of the report of
     the same log; closing the pipe then writes nothing more (no event
     twice) and exits 0.
  2. A "Killed" line, which the next 20 lines may still join (a kill is
     often reported twice), is held back by the idle flush; SIGTERM then
     writes it and exits 143 (128 + SIGTERM).
  3. SIGTERM while a full report (-f json) waits on the pipe: the report
     of what was read comes out, its input marked incomplete, exit 143.

Usage: tests/stream.py OOMDOC   (from the repository root)
"""
import json
import os
import select
import signal
import subprocess
import sys
import time

from checks import check, summary

BOUND = 5.0


def start(oomdoc, args):
    return subprocess.Popen([oomdoc] + args, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def read_line(p, timeout):
    """A line of p's output within timeout seconds, or None."""
    end = time.monotonic() + timeout
    buf = b""
    while time.monotonic() < end:
        r, _, _ = select.select([p.stdout], [], [], end - time.monotonic())
        if not r:
            break
        c = os.read(p.stdout.fileno(), 1)
        if not c:
            break
        buf += c
        if c == b"\n":
            return buf.decode()
    return None


def main():
    oomdoc = sys.argv[1]
    log = "fixtures/pytorch/alloc_warning_then_oom.log"
    report = json.loads(subprocess.run([oomdoc, "-f", "json", log],
                                       capture_output=True).stdout)
    with open(log, "rb") as f:
        text = f.read()

    # 1. The pause delivers both events; EOF adds none.
    p = start(oomdoc, ["-f", "jsonl"])
    t0 = time.monotonic()
    p.stdin.write(text)
    p.stdin.flush()
    for want in report["events"]:
        line = read_line(p, BOUND)
        check(line is not None, "jsonl: no event within %.0f s of the OOM "
              "text on a pipe left open" % BOUND)
        if line is None:
            break
        ev = json.loads(line)
        check((ev["kind"], ev["line"], ev["fatal"]) ==
              (want["kind"], want["line"], want["fatal"]),
              "jsonl: event %r is not the report's" % line[:80])
    took = time.monotonic() - t0
    check(p.poll() is None, "oomdoc ended before its input did")
    p.stdin.close()
    rest = p.stdout.read()
    check(rest == b"", "jsonl: more lines at the end of the input: %r" %
          rest[:200])
    check(p.wait() == 0, "jsonl: exit %s after EOF" % p.returncode)
    print("events delivered %.2f s after the text" % took)

    # 2. A pending kill is held at the pause, and SIGTERM writes it.
    with open("fixtures/stacks/killed-bare-line.log", "rb") as f:
        killed = f.read()
    p = start(oomdoc, ["-f", "jsonl"])
    p.stdin.write(killed)
    p.stdin.flush()
    early = read_line(p, 1.5)
    check(early is None, "a kill that the next lines may join was written "
          "at the pause: %r" % early)
    p.send_signal(signal.SIGTERM)
    line = read_line(p, BOUND)
    check(line is not None and json.loads(line)["kind"] == "host_oom_killer",
          "SIGTERM did not write the pending event: %r" % line)
    check(p.wait(BOUND) == 128 + signal.SIGTERM,
          "SIGTERM: exit %s, want 143" % p.returncode)
    p.stdin.close()

    # 3. SIGTERM during a full report: the report of what was read.
    p = start(oomdoc, ["-f", "json"])
    p.stdin.write(text)
    p.stdin.flush()
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    # Standard input stays open until oomdoc exits: the end of the input
    # would be a complete read.
    p.wait(BOUND)
    out = p.stdout.read()
    p.stdin.close()
    check(p.returncode == 128 + signal.SIGTERM,
          "-f json, SIGTERM: exit %s" % p.returncode)
    doc = json.loads(out)
    check(len(doc["events"]) == len(report["events"]),
          "-f json, SIGTERM: %d events, want %d" % (len(doc["events"]),
                                                   len(report["events"])))
    check(doc["inputs"][0]["complete"] is False,
          "-f json, SIGTERM: the input is not marked incomplete")

    return summary()


if __name__ == "__main__":
    sys.exit(main())

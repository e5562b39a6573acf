#!/usr/bin/env python3
"""Checks the causes oomdoc finds against hand-computed expectations.

Each <name>.causes file in the directories given is worked out by hand
from the rule text (rules/*.yaml, or the rules its args= line loads) and
the figures of its log, as its comments show, not from oomdoc's output.
One key=value a line, as in the fixtures' .expect files:

    log=PATH         the log (default: <name>.log beside the file)
    args=OPTIONS     options given before the log (split on spaces)
    events=N         the number of events
    I.cause=RULE SCORE CONFIDENCE [EXPLAINS]
                     a cause of event I, in rank order (repeated), the
                     score with two decimals, and the part of the
                     shortfall it explains (explains_bytes) as PyTorch's
                     format_size prints it, glued ("1003.52MiB",
                     "0bytes"), or "-" when unknown; without EXPLAINS
                     it is not checked
    I.causes=none    event I has no cause

Every event must be named by a cause line or a causes=none line, so that
a missing expectation fails instead of passing.  The exit status must be 0
(an event was found).

Usage: check_causes.py OOMDOC DIR...   (from the repository root)
"""
import json
import os
import subprocess
import sys


def size(v):
    """A byte count as PyTorch's format_size prints it, without the
    space (c10/cuda/CUDACachingAllocator.cpp), or "-" for null."""
    if v is None:
        return "-"
    if v <= 1024:
        return "%dbytes" % v
    for unit, scale in (("KiB", 1 << 10), ("MiB", 1 << 20)):
        if v <= scale << 10:
            return "%.2f%s" % (v / scale, unit)
    return "%.2fGiB" % (v / (1 << 30))


def parse(path):
    spec = {"log": None, "args": [], "events": None, "causes": {}}
    with open(path) as f:
        for n, line in enumerate(f.read().splitlines(), 1):
            if not line or line.startswith("#"):
                continue
            key, _, value = line.partition("=")
            if key == "log":
                spec["log"] = value
            elif key == "args":
                spec["args"] = value.split()
            elif key == "events":
                spec["events"] = int(value)
            elif key.endswith(".cause"):
                want = spec["causes"].setdefault(int(key[:-6]), [])
                f = value.split()
                if len(f) == 3:
                    f.append(None)
                rule, score, conf, expl = f
                want.append((rule, score, conf, expl))
            elif key.endswith(".causes") and value == "none":
                spec["causes"].setdefault(int(key[:-7]), [])
            else:
                raise ValueError("%s:%d: unknown line %r" % (path, n, line))
    if spec["events"] is None:
        raise ValueError("%s: no events= line" % path)
    for i in range(spec["events"]):
        if i not in spec["causes"]:
            raise ValueError("%s: event %d has no cause line and no "
                             "%d.causes=none" % (path, i, i))
    return spec


def main():
    oomdoc, dirs = sys.argv[1], sys.argv[2:]
    checked = failed = 0
    for d in dirs:
        for fn in sorted(os.listdir(d)):
            if not fn.endswith(".causes"):
                continue
            path = os.path.join(d, fn)
            spec = parse(path)
            log = spec["log"] or os.path.join(d, fn[:-len(".causes")] + ".log")
            r = subprocess.run([oomdoc, "--format", "json"] + spec["args"] +
                               [log], capture_output=True, text=True,
                               timeout=60)
            checked += 1
            diffs = []
            try:
                events = json.loads(r.stdout)["events"]
            except ValueError:
                print("FAIL %s: no JSON (exit %d): %s" % (path, r.returncode,
                                                        r.stderr.strip()))
                failed += 1
                continue
            if r.returncode != 0:
                diffs.append("exit status %d, not 0" % r.returncode)
            if len(events) != spec["events"]:
                diffs.append("%d events, not %d" % (len(events),
                                                    spec["events"]))
            for i, want in sorted(spec["causes"].items()):
                if i >= len(events):
                    continue
                got = [(c["rule"], "%.2f" % c["score"], c["confidence"],
                        size(c.get("explains_bytes")) if w[3] else None)
                       for c, w in zip(events[i]["causes"],
                                       want + [(0, 0, 0, None)] * 8)]
                got = [g if g[3] else g[:3] + (None,) for g in got]
                if got != want:
                    diffs.append("event %d: expected %s, got %s" % (
                        i, "; ".join(" ".join(filter(None, w)) for w in want)
                        or "none", "; ".join(" ".join(filter(None, g))
                                             for g in got) or "none"))
            if diffs:
                failed += 1
                print("FAIL %s (%s):" % (path, log))
                for x in diffs:
                    print("    " + x)
    print("%d passed, %d failed" % (checked - failed, failed))
    return 1 if failed or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

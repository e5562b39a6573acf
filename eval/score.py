#!/usr/bin/env python3
"""Scores oomdoc on a set of real logs with hand-written truth files.

Usage: eval/score.py OOMDOC DIR [--verbose] [--nearest]

DIR holds NAME.log files, each with a NAME.truth beside it (JSON, written by
hand from the log's text, see eval/heldout/SOURCES.md):

    {"oom": true, "events": [{"kind": K, "line": L, "requested_bytes": R, ...}]}
    {"oom": false}

For every truth event the scorer looks for an event of oomdoc's JSON report
whose lines cover the truth's line (an event may start a line or two before
the line that says "out of memory", or end after it); the first such event,
or with --nearest the nearest of them.  It prints:

    detected   truth events that oomdoc found
    kind       found events whose kind is the truth's
    numbers    found events whose every figure in the truth is exact
    negatives  non-OOM logs that gave no event (exit status 1)

and lists every miss with --verbose.  The set is kept apart from fixtures/:
it measures, it is not tuned on.
"""
import json
import os
import subprocess
import sys

# Truth keys that are figures of the event's "memory" object, and the event
# keys compared as they are.
MEMORY_KEYS = ("requested_bytes", "total_bytes", "free_bytes",
               "allocated_bytes", "reserved_bytes",
               "reserved_unallocated_bytes", "process_in_use_bytes",
               "allowed_bytes")
EVENT_KEYS = ("rank",)


def run(oomdoc, path):
    p = subprocess.run([oomdoc, "--format", "json", path],
                       capture_output=True, timeout=60)
    try:
        report = json.loads(p.stdout.decode("utf-8"))
    except ValueError:
        report = {"events": []}
    return p.returncode, report.get("events", [])


def covers(ev, line):
    first = ev.get("line", 0)
    last = max(ev.get("end_line", first), first)
    return first - 2 <= line <= last + 2


def distance(ev, line):
    first = ev.get("line", 0)
    last = max(ev.get("end_line", first), first)
    return 0 if first <= line <= last else min(abs(line - first),
                                               abs(line - last))


def match(events, line, nearest):
    """The first event whose lines cover the truth's line, or with
    --nearest the nearest of those that do: two ranks' messages on adjacent
    lines are two events, and the first of them would otherwise be the one
    compared with both truths."""
    near = [e for e in events if covers(e, line)]
    if not near:
        return None
    return min(near, key=lambda e: distance(e, line)) if nearest else near[0]


def figure(ev, key):
    if key in MEMORY_KEYS:
        return (ev.get("memory") or {}).get(key)
    return ev.get(key)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    verbose = "--verbose" in sys.argv
    nearest = "--nearest" in sys.argv
    if len(args) != 2:
        sys.exit(__doc__)
    oomdoc, folder = args
    counts = dict(truth=0, found=0, kind=0, numbers=0, neg=0, neg_ok=0,
                  logs=0, logs_found=0)
    misses = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".log"):
            continue
        path = os.path.join(folder, name)
        with open(path[:-4] + ".truth") as f:
            truth = json.load(f)
        status, events = run(oomdoc, path)
        if not truth["oom"]:
            counts["neg"] += 1
            if status == 1 and not events:
                counts["neg_ok"] += 1
            else:
                misses.append(f"{name}: not an OOM, but oomdoc found "
                              f"{len(events)} event(s) (status {status})")
            continue
        counts["logs"] += 1
        counts["logs_found"] += bool(events)
        for t in truth["events"]:
            counts["truth"] += 1
            ev = match(events, t["line"], nearest)
            if ev is None:
                misses.append(f"{name}:{t['line']}: {t['kind']} not found")
                continue
            counts["found"] += 1
            if ev["kind"] == t["kind"]:
                counts["kind"] += 1
            else:
                misses.append(f"{name}:{t['line']}: kind {ev['kind']}, "
                              f"truth {t['kind']}")
            wrong = [k for k in MEMORY_KEYS + EVENT_KEYS
                     if k in t and figure(ev, k) != t[k]]
            if wrong:
                misses.append(f"{name}:{t['line']}: " + ", ".join(
                    f"{k} {figure(ev, k)} (truth {t[k]})" for k in wrong))
            else:
                counts["numbers"] += 1

    def pct(a, b):
        return f"{a}/{b} = {100.0 * a / b:.1f} %" if b else f"{a}/0"
    print(f"logs with an OOM   {pct(counts['logs_found'], counts['logs'])}")
    print(f"detected           {pct(counts['found'], counts['truth'])}")
    print(f"kind right         {pct(counts['kind'], counts['found'])}")
    print(f"numbers exact      {pct(counts['numbers'], counts['found'])}")
    print(f"negatives quiet    {pct(counts['neg_ok'], counts['neg'])}")
    if verbose:
        for m in misses:
            print("  " + m)


if __name__ == "__main__":
    main()

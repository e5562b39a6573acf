#!/usr/bin/env python3
"""Checks that every batch change oomdoc offers keeps the effective batch.

Two checks.

Over every fixture (fixtures/*/*.log, run with no options) and every run
of the .batch files below: each fix that changes batch_size or
accum_steps in its "changes" changes both, to whole numbers of at least
1, with a smaller batch, and with batch x accumulation the same before
and after; its text names the same numbers ("from B to B'"); and a fix
whose text lowers the batch ("batch size from B to B'") carries the
changes that say so.

The hand-written expectations of fixtures/batch/*.batch, computed from
the capacity rule's text and the log's figures as their comments show,
not from oomdoc's output.  One key=value a line:

    log=PATH         the log (default: <name>.log beside the file)
    args=OPTIONS     options given before the log (split on spaces)
    events=N         the number of events
    I.fix=ID [SETTING:FROM:TO ...]
                     a fix of event I whose id starts with "batch", with
                     its changes in order (repeated); the batch fixes of
                     the event are exactly those listed

With --logs PATTERN, the first check runs over the logs PATTERN names
instead of the fixtures, and the .batch files are left out.

Usage: check_batch.py [--logs PATTERN] OOMDOC   (from the repository root)
"""
import glob
import json
import os
import re
import subprocess
import sys

LOWER = re.compile(r"batch size from (\d+) to (\d+)")


def run(oomdoc, args, log):
    r = subprocess.run([oomdoc, "--format", "json"] + args + [log],
                       capture_output=True, text=True, timeout=60)
    try:
        return json.loads(r.stdout)["events"], None
    except ValueError:
        return None, "no JSON (exit %d): %s" % (r.returncode, r.stderr.strip())


def whole(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def check_fix(fix):
    """The problems of one fix's batch changes, as strings."""
    errs = []
    ch = {c["setting"]: c for c in fix.get("changes", [])}
    m = LOWER.search(fix["text"])
    if m and "batch_size" not in ch:
        errs.append("the text lowers the batch (%s) but the fix has no "
                    "batch_size change" % m.group(0))
    if "batch_size" not in ch and "accum_steps" not in ch:
        return errs
    if "batch_size" not in ch or "accum_steps" not in ch:
        return errs + ["changes %s: batch_size and accum_steps must change "
                       "together" % sorted(ch)]
    b, a = ch["batch_size"], ch["accum_steps"]
    if not all(whole(v) for v in (b["from"], b["to"], a["from"], a["to"])):
        return errs + ["changes %r: not whole numbers >= 1" % [b, a]]
    if b["from"] * a["from"] != b["to"] * a["to"]:
        errs.append("effective batch %d x %d = %d becomes %d x %d = %d" % (
            b["from"], a["from"], b["from"] * a["from"], b["to"], a["to"],
            b["to"] * a["to"]))
    if b["to"] >= b["from"]:
        errs.append("the batch does not shrink: %d to %d" % (b["from"],
                                                             b["to"]))
    if m and (int(m.group(1)), int(m.group(2))) != (b["from"], b["to"]):
        errs.append("the text says %r, the changes %d to %d" % (
            m.group(0), b["from"], b["to"]))
    if not m:
        errs.append("the text does not say 'batch size from %d to %d'" % (
            b["from"], b["to"]))
    if not re.search(r"\b%d\b" % a["to"], fix["text"]):
        errs.append("the text does not name the accumulation %d" % a["to"])
    return errs


def check_events(name, events):
    fails = []
    for i, ev in enumerate(events):
        for c in ev.get("causes", []):
            for f in c.get("fixes", []):
                for e in check_fix(f):
                    fails.append("%s: event %d, %s/%s: %s" % (
                        name, i, c["rule"], f["id"], e))
    return fails


def parse(path):
    spec = {"log": None, "args": [], "events": None, "fixes": {}}
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
            elif key.endswith(".fix"):
                words = value.split()
                changes = []
                for w in words[1:]:
                    s, fr, to = w.split(":")
                    changes.append((s, int(fr), int(to)))
                spec["fixes"].setdefault(int(key[:-4]), []).append(
                    (words[0], changes))
            else:
                raise ValueError("%s:%d: unknown line %r" % (path, n, line))
    if spec["events"] is None:
        raise ValueError("%s: no events= line" % path)
    return spec


def main():
    args = sys.argv[1:]
    logs = None
    if len(args) >= 2 and args[0] == "--logs":
        logs, args = args[1], args[2:]
    oomdoc = args[0]
    checked = 0
    fails = []
    for log in sorted(glob.glob(logs or "fixtures/*/*.log")):
        events, err = run(oomdoc, [], log)
        checked += 1
        if events is None:
            fails.append("%s: %s" % (log, err))
            continue
        fails += check_events(log, events)
    # Other logs (--logs: eval/statements.sh's held-out ones) get the
    # first check only.
    for path in [] if logs else sorted(glob.glob("fixtures/batch/*.batch")):
        spec = parse(path)
        log = spec["log"] or path[:-len(".batch")] + ".log"
        events, err = run(oomdoc, spec["args"], log)
        checked += 1
        if events is None:
            fails.append("%s: %s" % (path, err))
            continue
        fails += check_events(path, events)
        if len(events) != spec["events"]:
            fails.append("%s: %d events, want %d" % (path, len(events),
                                                     spec["events"]))
            continue
        for i, ev in enumerate(events):
            got = [(f["id"], [(c["setting"], c["from"], c["to"])
                              for c in f.get("changes", [])])
                   for c in ev.get("causes", []) for f in c.get("fixes", [])
                   if f["id"].startswith("batch")]
            want = spec["fixes"].get(i, [])
            if got != want:
                fails.append("%s: event %d: batch fixes %r, want %r" % (
                    path, i, got, want))
    for f in fails:
        print("FAIL " + f)
    print("%d runs checked, %d problems" % (checked, len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

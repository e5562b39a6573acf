#!/usr/bin/env python3
"""Checks oomdoc's JSON against the hand-computed expectations of fixtures.

Each fixtures/<dir>/<name>.log may have a <name>.expect beside it: one
key=value a line, written from the message text by hand (see
fixtures/SOURCES-pytorch.md), not from oomdoc's output.  This test fails on
the first fixture whose events, places or numbers differ.

Usage: check_expect.py OOMDOC FIXTURE_DIR...
"""
import json
import os
import subprocess
import sys

def show(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    return str(v)


def lookup(ev, path):
    """The value at a dotted path of an event, shown as .expect files do."""
    if path == "ranks":
        return ",".join(map(str, ev["ranks"]))
    if path == "memory.other_processes":
        return ",".join("%s:%s" % (p["pid"], show(p["bytes"]))
                        for p in ev["memory"]["other_processes"])
    v = ev
    for part in path.split("."):
        # A list: "#" is its length, a number one of its items.
        if isinstance(v, list) and part == "#":
            v = len(v)
            continue
        # A number indexes a list: per_rank.0.rank.
        if isinstance(v, list) and part.isdigit() and int(part) < len(v):
            v = v[int(part)]
            continue
        if not isinstance(v, dict) or part not in v:
            return "<no such field>"
        v = v[part]
    return show(v)


def main():
    oomdoc, dirs = sys.argv[1], sys.argv[2:]
    checked = failed = 0
    for d in dirs:
        for fn in sorted(os.listdir(d)):
            if not fn.endswith(".expect"):
                continue
            name = fn[:-len(".expect")]
            with open(os.path.join(d, fn), encoding="utf-8") as f:
                exp = dict(l.split("=", 1) for l in f.read().splitlines()
                           if l and not l.startswith("#"))
            # The input: a log, or a memory snapshot (fixtures/snapshot).
            log = os.path.join(d, name + ".log")
            for ext in (".pickle", ".json"):
                if not os.path.exists(log) and os.path.exists(os.path.join(d, name + ext)):
                    log = os.path.join(d, name + ext)
            r = subprocess.run([oomdoc, "--format", "json", log],
                               capture_output=True, text=True, timeout=60,
                               encoding="utf-8", errors="replace")
            checked += 1
            diffs = []
            try:
                events = json.loads(r.stdout)["events"]
            except ValueError:
                print("FAIL %s: no JSON (exit %d): %s" % (log, r.returncode,
                                                        r.stderr.strip()))
                failed += 1
                continue
            if str(len(events)) != exp["events"]:
                diffs.append(("events", exp["events"], len(events)))
            for key, want in sorted(exp.items()):
                if key == "events":
                    continue
                i, path = key.split(".", 1)
                if int(i) >= len(events):
                    continue
                got = lookup(events[int(i)], path)
                if got != want:
                    diffs.append((key, want, got))
            # A failure is a fatal event: warnings alone exit 1.
            want_rc = 0 if any(e.get("fatal") for e in events) else 1
            if r.returncode != want_rc:
                diffs.append(("exit status", want_rc, r.returncode))
            if diffs:
                failed += 1
                print("FAIL %s:" % log)
                for k, want, got in diffs:
                    print("    %s: expected %s, got %s" % (k, want, got))
    print("%d passed, %d failed" % (checked - failed, failed))
    return 1 if failed or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Scores oomdoc's top cause on the held-out logs whose numbers leave no doubt.

Usage: eval/top_cause.py OOMDOC [DIR] [--verbose]   (DIR default eval/heldout)

DIR/top_causes.tsv (file, line, top_cause, why) was written by hand from
the printed figures alone, without running oomdoc.  Rows marked ambiguous
are not scored.  non_framework_memory and memory_elsewhere name the same
finding (memory held outside the framework's allocator) and count as one.
For each scored row the event of oomdoc's JSON report whose lines cover
the row's line is found, and its first cause compared.
"""
import csv
import json
import os
import subprocess
import sys

SAME = {"memory_elsewhere": "non_framework_memory"}


def norm(cause):
    return SAME.get(cause, cause)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit(__doc__)
    oomdoc = args[0]
    folder = args[1] if len(args) > 1 else "eval/heldout"
    right = scored = 0
    misses = []
    with open(os.path.join(folder, "top_causes.tsv"), newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    for row in rows:
        want = row["top_cause"].strip()
        if want in ("", "ambiguous"):
            continue
        scored += 1
        p = subprocess.run([oomdoc, "--format", "json",
                            os.path.join(folder, row["file"])],
                           capture_output=True, timeout=60)
        try:
            events = json.loads(p.stdout.decode("utf-8"))["events"]
        except (ValueError, KeyError):
            events = []
        line = int(row["line"])
        ev = next((e for e in events
                   if e["line"] - 2 <= line <= max(e["end_line"],
                                                   e["line"]) + 2), None)
        got = ev["causes"][0]["rule"] if ev and ev["causes"] else None
        if got is not None and norm(got) == norm(want):
            right += 1
        else:
            misses.append(f"{row['file']}:{line}: top cause {got}, "
                          f"the numbers say {want} ({row['why']})")
    pct = 100.0 * right / scored if scored else 0.0
    print(f"top cause right    {right}/{scored} = {pct:.1f} %")
    if "--verbose" in sys.argv:
        for m in misses:
            print("  " + m)


if __name__ == "__main__":
    main()

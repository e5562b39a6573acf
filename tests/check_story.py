#!/usr/bin/env python3
"""Checks the story of runs with several ranks or failures, over every fixture.

For each fixtures/*/*.log (and the runs below), in the JSON report:

- at most one event is the first failure, it is fatal and no secondary
  event comes before it; every secondary event comes after one;
- the summary's top cause is the first failure's top cause (or, when it
  has none, no secondary event's);
- a per-rank table has distinct ranks, all of them among the event's
  ranks, its first row is the event's own rank, line and figures, and an
  event with a table is the first failure when it is the first fatal one.

- what followed the first failure (aftermath) is read back from the log
  independently: the NCCL watchdog lines and torchrun's "closing signal
  SIGTERM" lines after the first failure's line are counted, the first
  watchdog line's rank and line and the rank of the first ChildFailedError
  table's Root Cause block are found, and they must be the report's; no
  other event has an aftermath;
- the hand-made expectations of AFTER below hold.

And one run whose first failure no rule explains, with a rule that fires
only for torchrun's secondary kill report: the summary then names no
cause, rather than the secondary report's.

Usage: check_story.py OOMDOC   (from the repository root)
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

FIGURES = ("requested_bytes", "free_bytes", "allocated_bytes",
           "reserved_bytes", "total_bytes")


def report(oomdoc, args):
    r = subprocess.run([oomdoc, "--format", "json"] + args,
                       capture_output=True, text=True, timeout=60)
    return json.loads(r.stdout)


# Written by hand from the fixtures (the lines as an editor numbers them):
# nccl_watchdog, its rank, sigterm, root_cause_rank of the first failure.
AFTER = {
    "fixtures/stacks/rank-first-failure-then-sigterm.log": (1, 2, 7, 5),
    "fixtures/stacks/ranks-different-figures-childfailed.log": (1, 3, 3, 0),
    "fixtures/stacks/nccl-watchdog-after-oom.log": (4, 0, 3, 0),
}

WATCHDOG = ("Watchdog caught collective operation timeout",
            "Process group watchdog thread terminated with exception")


def aftermath(path, after_line):
    """The aftermath of a failure at after_line, read from the log."""
    # Lines count '\n' only, as oomdoc's do (a '\r' of a progress bar is
    # no line end).
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        lines = f.read().split("\n")
    wd, wd_rank, wd_line, term, root, root_line = 0, None, None, 0, None, None
    open_root = False
    for n, line in enumerate(lines, 1):
        if "Root Cause (first observed failure):" in line:
            open_root = n > after_line and root_line is None
            continue
        if n <= after_line:
            continue
        if any(w in line for w in WATCHDOG):
            wd += 1
            if wd == 1:
                wd_line = n
                m = re.search(r"\[rank(\d+)\]:", line) or \
                    re.search(r"\bRank (\d+)\]", line)
                wd_rank = int(m.group(1)) if m else None
        if "closing signal SIGTERM" in line:
            term += 1
        m = re.search(r"\brank\s+: (\d+) \(local_rank: ", line)
        if open_root and m:
            root, root_line, open_root = int(m.group(1)), n, False
    return wd, wd_rank, wd_line, term, root, root_line


def check_after(name, rep):
    errs = []
    for i, e in enumerate(rep["events"]):
        a = e["aftermath"]
        got = (a["nccl_watchdog"], a["nccl_watchdog_rank"],
               a["nccl_watchdog_line"], a["sigterm"], a["root_cause_rank"],
               a["root_cause_line"])
        if not e["first_failure"]:
            if got != (0, None, None, 0, None, None):
                errs.append("event %d: an aftermath %r on an event that is "
                            "not the first failure" % (i, got))
            continue
        want = aftermath(name, e["line"])
        if got != want:
            errs.append("event %d: aftermath %r, the log has %r" % (
                i, got, want))
        if name in AFTER:
            hand = (got[0], got[1], got[3], got[4])
            if hand != AFTER[name]:
                errs.append("event %d: aftermath %r, expected by hand %r"
                            % (i, hand, AFTER[name]))
    if name in AFTER and not any(e["first_failure"] for e in rep["events"]):
        errs.append("no first failure, expected one with an aftermath")
    return ["%s: %s" % (name, x) for x in errs]


def check(name, rep):
    errs = []
    events = rep["events"]
    firsts = [i for i, e in enumerate(events) if e["first_failure"]]
    if len(firsts) > 1:
        errs.append("%d first failures: events %s" % (len(firsts), firsts))
    for i in firsts:
        if not events[i]["fatal"]:
            errs.append("event %d: a first failure that is not fatal" % i)
    for i, e in enumerate(events):
        if e["secondary"] is None:
            continue
        if not firsts or i < firsts[0]:
            errs.append("event %d: secondary with no first failure before "
                        "it" % i)
        if e["first_failure"]:
            errs.append("event %d: both first failure and secondary" % i)
    top = rep["summary"]["top_cause"]
    if firsts:
        first = events[firsts[0]]
        want = first["causes"][0]["rule"] if first["causes"] else None
        if want is not None and top != want:
            errs.append("top cause %r, the first failure's is %r" % (top,
                                                                  want))
    for e in events:
        if e["secondary"] is not None and e["causes"] and \
                top == e["causes"][0]["rule"] and not any(
                    x["causes"] and x["causes"][0]["rule"] == top
                    for x in events if x["secondary"] is None):
            errs.append("top cause %r comes from a secondary event" % top)
    for i, e in enumerate(events):
        rows = e["per_rank"]
        if not rows:
            continue
        ranks = [r["rank"] for r in rows]
        if len(set(ranks)) != len(ranks):
            errs.append("event %d: per_rank ranks repeat: %s" % (i, ranks))
        if not set(ranks) <= set(e["ranks"]):
            errs.append("event %d: per_rank ranks %s not among ranks %s" % (
                i, ranks, e["ranks"]))
        r0 = rows[0]
        if r0["rank"] != e["rank"] or r0["line"] != e["line"] or \
                r0["device"] != e["device"]:
            errs.append("event %d: first row %r is not the event's own" % (
                i, r0))
        for k in FIGURES:
            if r0[k] != e["memory"][k]:
                errs.append("event %d: first row %s %r, the event's %r" % (
                    i, k, r0[k], e["memory"][k]))
        fatal = [j for j, x in enumerate(events) if x["fatal"]]
        if fatal and fatal[0] == i and not e["first_failure"]:
            errs.append("event %d: ranks table on the first fatal event, "
                        "not marked the first failure" % i)
    return ["%s: %s" % (name, x) for x in errs]


def main():
    oomdoc = sys.argv[1]
    fails = []
    n = 0
    for log in sorted(glob.glob("fixtures/*/*.log")):
        rep = report(oomdoc, [log])
        fails += check(log, rep)
        fails += check_after(log, rep)
        n += 1
    log = "fixtures/stacks/ranks-different-figures-childfailed.log"
    with tempfile.TemporaryDirectory() as d:
        rules = os.path.join(d, "host_only.yaml")
        with open(rules, "w") as f:
            f.write("rules:\n  - id: host_only\n    title: Host kills only\n"
                    "    kinds: [host_oom_killer]\n    when: true\n"
                    "    score: 0.9\n    explain: x\n")
        # Without the shipped rules, but with the shipped recognisers,
        # which read the host kill.
        rep = report(oomdoc, ["--no-default-rules", "--rules",
                              "rules/recognisers.yaml", "--rules", rules, log])
        n += 1
        fails += check(log + " (host_only rule)", rep)
        if rep["summary"]["top_cause"] is not None:
            fails.append("%s (host_only rule): top cause %r from the "
                         "secondary report, the first failure has none" % (
                             log, rep["summary"]["top_cause"]))
        if not rep["events"][1]["causes"]:
            fails.append("%s (host_only rule): the rule did not fire for "
                         "the secondary report" % log)
    for f in fails:
        print("FAIL " + f)
    print("%d runs checked, %d problems" % (n, len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

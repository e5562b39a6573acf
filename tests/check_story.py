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

And one run whose first failure no rule explains, with a rule that fires
only for torchrun's secondary kill report: the summary then names no
cause, rather than the secondary report's.

Usage: check_story.py OOMDOC   (from the repository root)
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

FIGURES = ("requested_bytes", "free_bytes", "allocated_bytes",
           "reserved_bytes", "total_bytes")


def report(oomdoc, args):
    r = subprocess.run([oomdoc, "--format", "json"] + args,
                       capture_output=True, text=True, timeout=60)
    return json.loads(r.stdout)


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
        fails += check(log, report(oomdoc, [log]))
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

#!/usr/bin/env python3
"""check_events.py: does oomdoc's JSON report account for every OOM genlog wrote?

Usage: check_events.py REPORT.json LOG.ooms

Prints one line, OK (...), MISMATCH (...) or UNCHECKED (...), and exits 0
(the bench scripts print the line in their tables; a MISMATCH line is the
finding).

genlog.py's "ooms" counts failures written, and oomdoc's summary.events
counts events, which are not the same count: oomdoc joins the same message
printed by another rank with other figures within 2000 lines (its
EV_PEER_LINES, src/lib/event.c) into one event, as another rank's row of
that event's per-rank table, because the ranks of one job fail together.
A small log with many OOMs puts two blocks of one kind that close (a
16 MiB log of 53 OOMs, seed 1: five of them).  So with the generator's
block list (the sidecar's "blocks", each with its first and last line), a
block is found when an event or a per-rank row of an event starts on one
of its lines; the events count is then the blocks less those joined as
rows.  When the report left events or rows out (its caps), the blocks not
found must be no more than it says it left out.  Without a block list
(an older sidecar) the totals are compared instead.
"""
import json
import sys


def main():
    try:
        rep = json.load(open(sys.argv[1]))
    except Exception as e:
        print("MISMATCH (oomdoc's JSON does not parse: %s)" % e)
        return
    try:
        gen = json.load(open(sys.argv[2]))
    except Exception:
        print("UNCHECKED (no generator sidecar %s)" % sys.argv[2])
        return
    ev = rep["summary"]["events"]
    om = rep["summary"].get("events_omitted", 0)
    want, echoes = gen["ooms"], gen.get("echo_reports", 0)
    rows_omitted = sum(e.get("per_rank_omitted") or 0 for e in rep["events"])
    blocks = gen.get("blocks")
    if blocks is None:
        totals(ev, om, want, echoes)
        return
    # The line each event and each per-rank row starts on; rows of an
    # event start with the event's own report.
    own, rows = set(), set()
    for e in rep["events"]:
        own.add(e["line"])
        for r in e.get("per_rank") or []:
            if r.get("line") and r["line"] != e["line"]:
                rows.add(r["line"])
    lost, joined = [], 0
    for b in blocks:
        span = range(b["first_line"], b["last_line"] + 1)
        if any(n in own for n in span):
            continue
        if any(n in rows for n in span):
            joined += 1
            continue
        lost.append(b)
    # A block not found is lost unless the report says it left reports
    # out: events past the cap (events_omitted, which counts an echo of
    # one again) or rows past an event's row limit (per_rank_omitted).
    if len(lost) > om + rows_omitted:
        print("MISMATCH (%d of %d OOM blocks in no event, %d reports omitted; "
              "first: %s at lines %d-%d)"
              % (len(lost), len(blocks), om + rows_omitted, lost[0]["kind"],
                 lost[0]["first_line"], lost[0]["last_line"]))
    elif om or rows_omitted:
        print("OK (%d events kept, %d omitted, %d per-rank rows omitted; of the "
              "generator's %d OOMs %d are events, %d other ranks' rows, %d not "
              "kept)" % (ev, om, rows_omitted, want, len(blocks) - joined - len(lost),
                         joined, len(lost)))
    elif ev != len(blocks) - joined:
        print("MISMATCH (%d events; the generator wrote %d OOMs, %d of them found "
              "as other ranks' rows)" % (ev, len(blocks), joined))
    elif joined:
        print("OK (%d events: the generator's %d OOMs, %d of them joined as other "
              "ranks' rows of an event)" % (ev, want, joined))
    else:
        print("OK (%d events, generator wrote %d)" % (ev, want))


def totals(ev, om, want, echoes):
    """The comparison of totals, for a report with omissions."""
    if ev + om == want:
        print("OK (%d events, generator wrote %d)" % (ev + om, want))
    elif om and want <= ev + om <= want + echoes:
        print("OK (%d kept + %d omitted reports; generator wrote %d events and %d echo "
              "reports, echoes of events past the cap are counted again)"
              % (ev, om, want, echoes))
    else:
        print("MISMATCH (oomdoc: %d events + %d omitted; generator wrote %d events, "
              "%d echo reports)" % (ev, om, want, echoes))


if __name__ == "__main__":
    main()

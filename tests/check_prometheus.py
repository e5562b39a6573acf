#!/usr/bin/env python3
"""--format prometheus read back with the Prometheus client's own parser.

The output of every fixture (and of all of them in one run) is parsed by
prometheus_client.parser.text_string_to_metric_families (Debian's
python3-prometheus-client), which rejects what the text exposition format
does not allow, and every sample is checked against the JSON report of
the same run: the inputs, the incomplete ones, whether a failure was
found, the events and failures by kind and top cause, each event's
requested and shortfall bytes (a sample exactly where the JSON has the
figure), and the latest event's time where a timestamp gives its zone.
A copy of a fixture under a name with a double quote, a backslash and a
newline must come back as its label, unescaped, as it was.

Usage: tests/check_prometheus.py OOMDOC   (from the repository root)
"""
import collections
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from prometheus_client.parser import text_string_to_metric_families

from fixture_share import share

oomdoc = sys.argv[1]
fails = 0
TYPES = {
    "oomdoc_inputs": "counter", "oomdoc_inputs_incomplete": "gauge",
    "oomdoc_oom_found": "gauge", "oomdoc_events": "counter",
    "oomdoc_failures": "counter", "oomdoc_requested_bytes": "gauge",
    "oomdoc_shortfall_bytes": "gauge",
    "oomdoc_last_event_timestamp_seconds": "gauge",
}
ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)"
                 r"(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d)$")


def instant(ts):
    """Seconds since the epoch of an ISO 8601 time with a zone, or None."""
    m = ISO.match(ts or "")
    if not m:
        return None
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    z = m.group(8)
    off = 0 if z == "Z" else (1 if z[0] == "+" else -1) * (
        int(z[1:3]) * 3600 + int(z[-2:]) * 60)
    t = datetime.datetime(y, mo, d, h, mi, s,
                          tzinfo=datetime.timezone.utc).timestamp() - off
    return t + (float("0." + m.group(7)) if m.group(7) else 0.0)


def fail(what):
    global fails
    print("FAIL " + what)
    fails += 1


def check(args, what):
    r = subprocess.run([oomdoc, "-f", "prometheus"] + args,
                       capture_output=True)
    j = subprocess.run([oomdoc, "-f", "json"] + args, capture_output=True)
    if r.returncode != j.returncode:
        fail("%s: exit %d, %d with json" % (what, r.returncode, j.returncode))
    doc = json.loads(j.stdout)
    try:
        fams = {f.name: f for f in
                text_string_to_metric_families(r.stdout.decode("utf-8"))}
    except Exception as e:   # the parser's ValueError, or worse
        fail("%s: the parser refused it: %s" % (what, e))
        return
    if set(fams) != set(TYPES):
        fail("%s: families %s" % (what, sorted(fams)))
        return
    for name, fam in fams.items():
        if fam.type != TYPES[name]:
            fail("%s: %s is a %s" % (what, name, fam.type))

    def samples(fam):
        return [(s.name, s.labels, s.value) for s in fams[fam].samples]

    evs = doc["events"]

    def one(fam, want):
        got = samples(fam)
        if len(got) != 1 or got[0][1] or got[0][2] != want:
            fail("%s: %s is %r, not %r" % (what, fam, got, want))

    one("oomdoc_inputs", len(doc["inputs"]))
    one("oomdoc_inputs_incomplete",
        sum(not i["complete"] for i in doc["inputs"]))
    one("oomdoc_oom_found", int(any(e["fatal"] for e in evs)))

    def cause(e):
        return e["causes"][0]["rule"] if e["causes"] else "none"

    for fam, keep in (("oomdoc_events", lambda e: True),
                      ("oomdoc_failures", lambda e: e["fatal"])):
        want = collections.Counter((e["kind"], cause(e)) for e in evs
                                   if keep(e))
        got = collections.Counter()
        for n, lab, v in samples(fam):
            if n != fam + "_total" or set(lab) != {"kind", "cause"}:
                fail("%s: sample %s%r" % (what, n, lab))
            got[(lab.get("kind"), lab.get("cause"))] += v
        if got != want:
            fail("%s: %s %r, the JSON report %r" % (what, fam, dict(got),
                                                    dict(want)))
    for fam, get in (("oomdoc_requested_bytes",
                      lambda e: e["memory"]["requested_bytes"]),
                     ("oomdoc_shortfall_bytes",
                      lambda e: e["memory"]["shortfall_bytes"])):
        want = sorted((e["input"], str(e["line"]), e["kind"], cause(e),
                       float(get(e))) for e in evs if get(e) is not None)
        got = sorted((lab["input"], lab["line"], lab["kind"], lab["cause"],
                      v) for _, lab, v in samples(fam))
        if got != want:
            fail("%s: %s %r, the JSON report %r" % (what, fam, got[:3],
                                                    want[:3]))
    times = [t for t in (instant(e["timestamp"]) for e in evs)
             if t is not None]
    got = samples("oomdoc_last_event_timestamp_seconds")
    if times:
        if len(got) != 1 or abs(got[0][2] - max(times)) > 0.001:
            fail("%s: last event time %r, the JSON report's %r"
                 % (what, got, max(times)))
    elif got:
        fail("%s: a last event time %r without a zoned timestamp"
             % (what, got))
    return len(times) > 0


logs = share(glob.glob("fixtures/**/*.log", recursive=True))
timed = 0
for log in logs:
    timed += bool(check([log], log))
check(logs, "all fixtures in one run")
tmp = tempfile.mkdtemp()
try:
    odd = os.path.join(tmp, 'job "a\\b\nc".log')
    shutil.copy("fixtures/sample/job.log", odd)
    check([odd], "a name with a quote, a backslash and a newline")
    fams = {f.name: f for f in text_string_to_metric_families(
        subprocess.run([oomdoc, "-f", "prometheus", odd],
                       capture_output=True).stdout.decode())}
    names = {s.labels["input"] for s in fams["oomdoc_requested_bytes"].samples}
    if names != {odd}:
        fail("the odd name came back as %r" % names)
finally:
    shutil.rmtree(tmp)
if timed == 0:
    fail("no fixture has a timestamp with a zone: the time is not tested")
print("%d fixtures (%d with a zoned time), %d failures" % (len(logs), timed,
                                                          fails))
sys.exit(1 if fails else 0)

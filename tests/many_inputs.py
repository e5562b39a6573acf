#!/usr/bin/env python3
"""Many job logs in one call agree with each log alone (issue 13, item 1).

Makes 200 job logs from the fixtures (copies of many fixtures under varied
names, so that the same content is in several files: the same failure in
many jobs, and rank-prefixed logs whose ranks join across files), then
checks, against `oomdoc -f json FILE` run on each file alone:

  - the report of all 200 in one call names every input that has an event
    alone, in the events' "inputs" lists and in the text report, and no
    other;
  - -c gives each input's failures (fatal events) as NAME:N;
  - -l lists exactly the inputs with a failure, -L exactly the others;
  - --summary -f json gives each input's events, failures, kind of the
    first failure, top cause and fingerprint as the report alone does, and
    the text --summary has a row per input;
  - the exit status of the call is 0 exactly when one input alone exits 0;
  - an input that cannot be read (missing, a directory) is never reported
    as one without an OOM: no -c line, not in -L, "not read" in the
    summary, and no "no out-of-memory failure found in" text.

Usage: tests/many_inputs.py OOMDOC   (from the repository root)
"""
import glob
import math
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, summary

NLOGS = 200


def run(oomdoc, args):
    return subprocess.run([oomdoc] + args, capture_output=True, text=True,
                          env=dict(os.environ, OOMDOC_ASCII="1"))


def main():
    oomdoc = os.path.abspath(sys.argv[1])
    sources = sorted(glob.glob("fixtures/pytorch/*.log") +
                     glob.glob("fixtures/stacks/*.log") +
                     glob.glob("fixtures/no-oom/*.log"))
    if len(sources) < 50:
        print("FAIL only %d fixtures found" % len(sources))
        return 1
    tmp = tempfile.mkdtemp(prefix="oomdoc-many-")
    try:
        os.chdir(tmp)
        names = []
        # Every 7th fixture of the cycle, each one twice, so that a fixture
        # comes back under several names: identical content in different
        # files.  The step is the first odd number from 7 prime to the
        # number of fixtures, so that the cycle visits all of them (with
        # 259, a multiple of 7, every 7th would visit only 37).
        # The cycle starts at a fixture with two events, so that -m 1
        # below has an input to cut however many fixtures there are (a
        # new fixture shifts the cycle, which once visited none).
        step = 7
        while math.gcd(step, len(sources)) != 1:
            step += 2
        start = sources.index("fixtures/pytorch/two_distinct_ooms.log")
        for i in range(NLOGS):
            src = sources[(start + (i // 2) * step) % len(sources)]
            name = "job-%03d-%s" % (i, os.path.basename(src))
            shutil.copyfile(os.path.join(ROOT, src), name)
            names.append(name)
        alone = {}
        for n in names:
            r = run(oomdoc, ["-f", "json", n])
            doc = json.loads(r.stdout)
            evs = doc["events"]
            fatal = [e for e in evs if e["fatal"]]
            first = fatal[0] if fatal else (evs[0] if evs else None)
            alone[n] = {
                "rc": r.returncode,
                "events": len(evs),
                "failures": len(fatal),
                "kind": first["kind"] if first else None,
                "top_cause": doc["summary"]["top_cause"],
                "fingerprint": doc["summary"]["fingerprint"],
            }
            check(r.returncode == (0 if fatal else 1),
                  "%s alone: exit %d with %d failures" %
                  (n, r.returncode, len(fatal)))
        with_events = {n for n in names if alone[n]["events"] > 0}
        with_failure = [n for n in names if alone[n]["failures"] > 0]
        check(len(with_failure) > 50 and len(with_events) < NLOGS,
              "the generated logs lack variety: %d with a failure" %
              len(with_failure))

        # The report of all of them: every input with an event is named.
        r = run(oomdoc, ["-f", "json"] + names)
        doc = json.loads(r.stdout)
        listed = {i["name"] for e in doc["events"] for i in e["inputs"]}
        check(listed == with_events,
              "JSON report: inputs missing %s, extra %s" %
              (sorted(with_events - listed)[:5],
               sorted(listed - with_events)[:5]))
        for e in doc["events"]:
            check(e["inputs"][0] == {"name": e["input"], "line": e["line"]},
                  "an event's first input is not its input and line")
        check(len(doc["events"]) < len(with_events),
              "no event was merged across inputs: the test shows nothing")
        want_rc = 0 if with_failure else 1
        check(r.returncode == want_rc,
              "report: exit %d, want %d" % (r.returncode, want_rc))
        text = run(oomdoc, names).stdout
        for n in with_events:
            check(n + ":" in text, "text report does not name %s" % n)

        # -c: NAME:N, each N the failures of the input alone.
        r = run(oomdoc, ["-c"] + names)
        got = dict(l.rsplit(":", 1) for l in r.stdout.splitlines())
        check(list(got) == names, "-c: not one line per input, in order")
        for n in names:
            check(got.get(n) == str(alone[n]["failures"]),
                  "-c %s: %s, alone %d" % (n, got.get(n),
                                           alone[n]["failures"]))
        check(r.returncode == want_rc, "-c: exit %d" % r.returncode)
        one = run(oomdoc, ["-c", with_failure[0]]).stdout
        check(one == "%d\n" % alone[with_failure[0]]["failures"],
              "-c of one input is not the count alone: %r" % one)

        # -l and -L.
        r = run(oomdoc, ["-l"] + names)
        check(r.stdout.splitlines() == with_failure,
              "-l differs from the inputs with a failure alone")
        check(r.returncode == want_rc, "-l: exit %d" % r.returncode)
        r = run(oomdoc, ["-L"] + names)
        check(r.stdout.splitlines() ==
              [n for n in names if alone[n]["failures"] == 0],
              "-L differs from the inputs without a failure alone")

        # --summary, as JSON and as text.
        r = run(oomdoc, ["--summary", "-f", "json"] + names)
        s = json.loads(r.stdout)
        check(s["schema"] == "oomdoc.summary/1", "summary schema")
        check([row["input"] for row in s["inputs"]] == names,
              "--summary: not one row per input, in order")
        for row in s["inputs"]:
            a = alone.get(row["input"])
            if a is None:
                continue
            for k in ("events", "failures", "kind", "top_cause",
                      "fingerprint"):
                check(row[k] == a[k], "--summary %s: %s is %r, alone %r" %
                      (row["input"], k, row[k], a[k]))
            check(row["complete"] is True, "--summary: complete")
        r = run(oomdoc, ["--summary"] + names)
        rows = r.stdout.splitlines()[1:]
        check(len(rows) == NLOGS and all(rows[i].startswith(names[i])
                                         for i in range(NLOGS)),
              "text --summary: not one row per input")

        # -q: nothing, the status.
        r = run(oomdoc, ["-q"] + names)
        check(r.stdout == "" and r.returncode == want_rc, "-q")

        # Inputs that cannot be read are never "no OOM".
        os.mkdir("a-directory")
        bad = ["missing.log", "a-directory"]
        quiet = [n for n in names if alone[n]["failures"] == 0][0]
        r = run(oomdoc, bad)
        check(r.stdout == "" and r.returncode == 2,
              "unreadable inputs: stdout %r, exit %d" % (r.stdout,
                                                         r.returncode))
        r = run(oomdoc, bad + [quiet])
        check("no out-of-memory failure found in 1 input" not in r.stdout
              and "could not be read" in " ".join(r.stdout.split())
              and r.returncode == 2,
              "unreadable and quiet inputs: %r" % r.stdout)
        r = run(oomdoc, ["-c"] + bad + [quiet])
        check(r.stdout == "%s:0\n" % quiet, "-c with unreadable inputs: %r"
              % r.stdout)
        r = run(oomdoc, ["-L"] + bad + [quiet])
        check(r.stdout == quiet + "\n", "-L with unreadable inputs: %r" %
              r.stdout)
        r = run(oomdoc, ["--summary", "-f", "json"] + bad)
        s = json.loads(r.stdout)
        check([row["complete"] for row in s["inputs"]] == [False, False],
              "--summary of unreadable inputs: complete")
        r = run(oomdoc, ["--summary"] + bad)
        check(all("not read" in l for l in r.stdout.splitlines()[1:]),
              "text --summary of unreadable inputs: %r" % r.stdout)

        # -m 1: the first event of each input, as -m 1 alone gives.
        many = [n for n in names if alone[n]["events"] > 1]
        check(many, "no input with more than one event")
        r = run(oomdoc, ["--summary", "-f", "json", "-m", "1"] + names)
        s = json.loads(r.stdout)
        for row in s["inputs"]:
            check(row["events"] == min(1, alone[row["input"]]["events"]),
                  "-m 1 %s: %d events" % (row["input"], row["events"]))
        # -m 1 in the report of all of them: each input on one event.
        r = run(oomdoc, ["-f", "json", "-m", "1"] + names)
        doc = json.loads(r.stdout)
        per = {}
        for e in doc["events"]:
            for i in e["inputs"]:
                per[i["name"]] = per.get(i["name"], 0) + 1
        check(set(per) == with_events and set(per.values()) == {1},
              "-m 1 report: inputs on more than one event, or missing")
    finally:
        os.chdir(ROOT)
        shutil.rmtree(tmp)
    return summary(30)


ROOT = os.getcwd()
if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Every JSON output of every fixture, validated against the shipped schemas.

For each log under fixtures/ (every directory, every depth), this runs
oomdoc with --format json (schema oomdoc.report/2), --format jsonl (each
line an event, schema oomdoc.event-2), and --summary --format json
(oomdoc.summary/1), and the live mode's fake backend with --format json
(oomdoc.live/1) over the rules' and PyTorch's fixtures and `oomdoc probe`,
and the rules' reports made into oomdoc.report/1 (which live mode still
reads), and validates each document with python3-jsonschema (draft 2020-12).  The
schemas forbid keys they do not name where oomdoc writes the object, so a
key added to the writer without the schema fails here.  A schema that does
not itself conform to the metaschema fails too.

Usage: tests/check_schema.py OOMDOC SCHEMA_DIR   (from the repository root)
"""
import glob
import json
import os
import subprocess
import sys

import jsonschema

from fixture_share import share

oomdoc, schema_dir = sys.argv[1], sys.argv[2]
schemas = {}
for path in sorted(glob.glob(os.path.join(schema_dir, "*.schema.json"))):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    jsonschema.Draft202012Validator.check_schema(doc)
    schemas[doc["$id"]] = doc

try:
    # jsonschema 4.18 and later: the referencing library.
    from referencing import Registry, Resource

    registry = Registry().with_resources(
        (i, Resource.from_contents(d)) for i, d in schemas.items())

    def validator(sid):
        return jsonschema.Draft202012Validator(schemas[sid], registry=registry)
except ImportError:
    # Debian 12's jsonschema 4.10: a resolver with a store.
    def validator(sid):
        return jsonschema.Draft202012Validator(
            schemas[sid], resolver=jsonschema.RefResolver(
                sid, schemas[sid], store=dict(schemas)))

V = {name: validator("urn:oomdoc:schema:" + name) for name in (
    "oomdoc.report-2", "oomdoc.event-2", "oomdoc.summary-1", "oomdoc.live-1",
    "oomdoc.report-1")}
fails = 0
checked = 0


def check(name, what, doc):
    global fails, checked
    checked += 1
    errors = sorted(V[name].iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:3]:
        print("FAIL %s: %s at %s: %s" % (what, name,
              "/".join(str(p) for p in e.path) or "(root)", e.message[:300]))
    fails += len(errors) > 0


def run(args):
    r = subprocess.run([oomdoc] + args, capture_output=True)
    return r.stdout.decode("utf-8")


logs = share(glob.glob("fixtures/**/*.log", recursive=True))
if not logs:
    sys.exit("no fixtures found: run from the repository root")
for log in logs:
    doc = json.loads(run(["--format", "json", "--color", "never", log]))
    check("oomdoc.report-2", log + " --format json", doc)
    lines = run(["--format", "jsonl", log]).splitlines()
    if len(lines) != len(doc["events"]):
        print("FAIL %s: %d jsonl lines, %d events in --format json"
              % (log, len(lines), len(doc["events"])))
        fails += 1
    for k, line in enumerate(lines):
        check("oomdoc.event-2", "%s --format jsonl line %d" % (log, k + 1),
              json.loads(line))
# Standard input, which has no file name.
with open("fixtures/sample/job.log", "rb") as f:
    data = f.read()
for fmt, name in (("json", "oomdoc.report-2"), ("jsonl", "oomdoc.event-2")):
    out = subprocess.run([oomdoc, "--format", fmt], input=data,
                         capture_output=True).stdout.decode("utf-8")
    for k, line in enumerate(out.splitlines() if fmt == "jsonl" else [out]):
        check(name, "standard input --format %s (%d)" % (fmt, k + 1),
              json.loads(line))
# All the fixtures in one run, and an input that cannot be read: the
# summary's rows are per input, so this one run validates the row of every
# fixture (with or without an event) and of an unreadable input.
missing = ["fixtures/no-such-input.log"]
check("oomdoc.report-2", "all fixtures --format json",
      json.loads(run(["--format", "json"] + logs + missing)))
check("oomdoc.summary-1", "all fixtures --summary --format json",
      json.loads(run(["--summary", "--format", "json"] + logs + missing)))

# Live mode through the fake backend, and the reports it reads back.
for log in sorted(glob.glob("fixtures/rules/*.log") +
                  glob.glob("fixtures/pytorch/*.log")):
    check("oomdoc.live-1", log + " live --format json", json.loads(run(
        ["live", "--backend", "fake", "--force", "--max-memory", "100%",
         "--format", "json", log])))
check("oomdoc.live-1", "probe --format json",
      json.loads(run(["probe", "--backend", "fake", "--format", "json"])))
# A log without an event: no device is opened (device, nvml, cupti null).
for log in sorted(glob.glob("fixtures/no-oom/*.log"))[:3]:
    check("oomdoc.live-1", log + " live --format json (no event)",
          json.loads(run(["live", "--backend", "fake", "--format", "json",
                          log])))

# oomdoc.report/1, which live mode still reads: each report of the rules'
# fixtures made into what /1 was (no memory account, no explained bytes,
# evidence as strings), validated, and read back by live mode.
import tempfile
for log in sorted(glob.glob("fixtures/rules/*.log"))[:8]:
    doc = json.loads(run(["--format", "json", log]))
    doc["schema"] = "oomdoc.report/1"
    for ev in doc["events"]:
        for k in ("account", "account_notes", "shortfall_bytes"):
            del ev["memory"][k]
        for c in ev["causes"]:
            del c["cause_bytes"], c["explains_bytes"]
            c["evidence"] = [e["text"] for e in c["evidence"]]
    check("oomdoc.report-1", log + " as oomdoc.report/1", doc)
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(doc, f)
        f.flush()
        r = subprocess.run([oomdoc, "live", "--backend", "fake", "--force",
                            "--max-memory", "100%", "--format", "json",
                            f.name], capture_output=True)
    if r.returncode not in (0, 1):
        print("FAIL %s as oomdoc.report/1: live mode exits %d: %s"
              % (log, r.returncode, r.stderr.decode()[:200]))
        fails += 1

print("%d documents checked, %d failed" % (checked, fails))
sys.exit(1 if fails or checked == 0 else 0)

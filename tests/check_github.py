#!/usr/bin/env python3
"""--format github read back as the Actions runner reads workflow commands.

Each line of the output is parsed as the runner parses a command
(actions/runner, ActionCommand.TryParseV2: the text between "::" and the
next "::" is the command and its comma-separated properties, the rest the
data; properties unescaped %0D %0A %3A %2C %25, data %0D %0A %25) and
checked against the JSON report of the same run: one annotation per
event, "error" for a fatal event and "warning" otherwise, file and line
the event's input and line (none for standard input), the message naming
the event's kind, its top cause, that cause's first fix and its
fingerprint; one "notice" when there is no event.  Every fixture is run,
and a copy of one under a name with ',', ':', '%' and a space, which must
come back as it was.

Usage: tests/check_github.py OOMDOC   (from the repository root)
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from fixture_share import share

oomdoc = sys.argv[1]
fails = 0
PROP = [("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")]
DATA = [("%0D", "\r"), ("%0A", "\n"), ("%25", "%")]


def unescape(s, table):
    for rep, tok in table:
        s = s.replace(rep, tok)
    return s


def parse(line):
    """TryParseV2: (command, properties, data), or None."""
    line = line.lstrip()
    if not line.startswith("::"):
        return None
    end = line.find("::", 2)
    if end < 0:
        return None
    info = line[2:end]
    name, _, props = info.partition(" ")
    p = {}
    for item in props.strip().split(","):
        k, eq, v = item.partition("=")
        if item and eq and k and v:
            p[k] = unescape(v, PROP)
    return name, p, unescape(line[end + 2:], DATA)


def plain(s):
    """Whether s shows as itself in the report (no escaping applies)."""
    return s is not None and all(
        0x20 <= ord(c) < 0x7f and c != "\\" for c in s)


def fail(what):
    global fails
    print("FAIL " + what)
    fails += 1


def check(args, what):
    r = subprocess.run([oomdoc, "-f", "github"] + args, capture_output=True)
    j = subprocess.run([oomdoc, "-f", "json"] + args, capture_output=True)
    if r.returncode != j.returncode:
        fail("%s: exit %d with github, %d with json" % (what, r.returncode,
                                                        j.returncode))
    out = r.stdout.decode("utf-8")
    doc = json.loads(j.stdout)
    if not out.endswith("\n"):
        fail("%s: output does not end a line" % what)
    lines = out.splitlines()
    cmds = [parse(l) for l in lines]
    for k, c in enumerate(cmds):
        if c is None or c[0] not in ("error", "warning", "notice"):
            fail("%s: line %d is no annotation: %r" % (what, k + 1,
                                                      lines[k][:120]))
            return
    events = doc["events"]
    if not events:
        if len(cmds) != 1 or cmds[0][0] != "notice" or \
                "No out-of-memory failure found" not in cmds[0][2]:
            fail("%s: no event, and not one notice: %r" % (what, out[:200]))
        return
    if len(cmds) != len(events):
        fail("%s: %d annotations for %d events" % (what, len(cmds),
                                                   len(events)))
        return
    for ev, (name, props, data) in zip(events, cmds):
        where = "%s: event at line %d" % (what, ev["line"])
        if name != ("error" if ev["fatal"] else "warning"):
            fail("%s: %s for fatal=%s" % (where, name, ev["fatal"]))
        if ev["input"] == "(standard input)":
            if "file" in props or "line" in props:
                fail("%s: file or line for standard input" % where)
        elif props.get("file") != ev["input"] and plain(ev["input"]):
            fail("%s: file %r, input %r" % (where, props.get("file"),
                                            ev["input"]))
        elif props.get("line") != str(ev["line"]):
            fail("%s: line %r" % (where, props.get("line")))
        if not props.get("title", "").startswith("oomdoc: "):
            fail("%s: title %r" % (where, props.get("title")))
        want = []
        if ev["causes"]:
            c = ev["causes"][0]
            want.append("Likely cause: ")
            if plain(c["title"]):
                want.append(c["title"] + " (" + c["rule"] + ", ")
            if c["fixes"] and plain(c["fixes"][0]["text"]):
                want.append("\nFix: " + c["fixes"][0]["text"])
            for k, v in c["fixes"][0]["env"].items() if c["fixes"] else []:
                if plain(k) and plain(v):
                    want.append("\n  export %s=%s" % (k, v))
        else:
            want.append("\nNo rule matched.")
        if ev["fingerprint"]:
            want.append("\nFingerprint " + ev["fingerprint"])
        for w in want:
            if w not in data:
                fail("%s: the message lacks %r: %r" % (where, w, data[:300]))


logs = share(glob.glob("fixtures/**/*.log", recursive=True))
for log in logs:
    check([log], log)
check(logs, "all fixtures in one run")
with open("fixtures/sample/job.log", "rb") as f:
    r = subprocess.run([oomdoc, "-f", "github", "-"], stdin=f,
                       capture_output=True)
check_in = parse(r.stdout.decode().splitlines()[0])
if check_in is None or "file" in check_in[1]:
    fail("standard input: %r" % r.stdout[:200])
tmp = tempfile.mkdtemp()
try:
    odd = os.path.join(tmp, "job a,b:c%0A 100%.log")
    shutil.copy("fixtures/sample/job.log", odd)
    check([odd], "a name with , : % and a space")
    c = parse(subprocess.run([oomdoc, "-f", "github", odd],
                             capture_output=True).stdout.decode())
    if c is None or c[1].get("file") != odd:
        fail("the odd name came back as %r" % (c and c[1].get("file")))
finally:
    shutil.rmtree(tmp)
print("%d fixtures, %d failures" % (len(logs), fails))
sys.exit(1 if fails else 0)

#!/usr/bin/env python3
"""structured_forms.py: the same OOM in every form oomdoc reads gives the
same event.

fixtures/structured/plain.log is one torchrun OOM (rank 3, a traceback in
backward).  Its structured forms (fixtures/structured/*.log: Fluent Bit,
Loki, Vector, journald, Docker json-file with split records, CRI with
partial lines, kubectl --prefix, pdsh) are committed; its compressed and
re-encoded forms (bzip2 and xz, one stream and two; UTF-16 LE with CRLF and
BE, with a BOM, and gzip around UTF-16; a lone surrogate in a line before
the OOM) are made here.  Each must give one event whose kind, rank,
fingerprint, figures, message, exception, phase and frames are plain.log's,
and whose line, time and labels are those the form gives.  A record longer
than the reader holds goes through as text and still gives the event.

Usage: tests/structured_forms.py OOMDOC   (from the source tree)
"""
import bz2
import gzip
import json
import lzma
import os
import subprocess
import sys
import tempfile

DIR = "fixtures/structured"
LABELS = {"pod": "train-worker-3", "container": "trainer", "namespace": "ml",
          "host": "gpu-node-7"}
T = "2024-03-04T10:20:11.006"

# form: (line, end_line, timestamp, labels) of the event.
FORMS = {
    "plain.log": (7, 7, None, {}),
    "fluentbit.log": (7, 7, T + "000000Z", LABELS),
    "loki.log": (7, 7, T + "000000+00:00", LABELS),
    "loki_query_range.log": (1, 1, T + "000000Z", LABELS),
    "vector.log": (7, 7, T + "000000Z", LABELS),
    "journald.log": (7, 7, T + "000Z", {"host": "gpu-node-7"}),
    "docker.log": (7, 9, T + "000000Z", {}),
    "cri.log": (7, 9, T + "000000Z", {}),
    "kubectl_prefix.log": (7, 7, T + "000000Z",
                           {"pod": "train-worker-3", "container": "trainer"}),
    "pdsh_prefix.log": (7, 7, None, {"host": "gpu-node-7"}),
}
SAME = ("kind", "rank", "fingerprint", "fatal", "message", "memory",
        "format", "device")
SAME_CONTEXT = ("exception", "phase", "frames", "step")


def run(oomdoc, path):
    p = subprocess.run([oomdoc, "-f", "json", path], capture_output=True)
    return p.returncode, json.loads(p.stdout) if p.stdout else None, \
        p.stderr.decode(errors="replace")


def main():
    oomdoc = sys.argv[1]
    fails = []
    passed = 0
    rc, base, err = run(oomdoc, os.path.join(DIR, "plain.log"))
    if rc != 0 or len(base["events"]) != 1:
        print("FAIL plain.log: exit %d, %s" % (rc, err))
        return 1
    ev0 = base["events"][0]
    if ev0["rank"] != 3 or ev0["context"]["phase"] != "backward" or \
            len(ev0["context"]["frames"]) != 2:
        print("FAIL plain.log: not the event this test is about: %r" % ev0)
        return 1

    with open(os.path.join(DIR, "plain.log"), "rb") as f:
        plain = f.read()
    tmp = tempfile.mkdtemp(prefix="oomdoc-forms-")
    half = plain.index(b"\n", len(plain) // 3) + 1
    made = {
        "plain.bz2": bz2.compress(plain),
        "plain.xz": lzma.compress(plain),
        "two-streams.bz2": bz2.compress(plain[:half]) +
        bz2.compress(plain[half:]),
        "two-streams.xz": lzma.compress(plain[:half]) +
        lzma.compress(plain[half:]),
        "utf16le-crlf.log": b"\xff\xfe" + plain.decode().replace(
            "\n", "\r\n").encode("utf-16-le"),
        "utf16be.log": b"\xfe\xff" + plain.decode().encode("utf-16-be"),
        "utf16le.log.gz": gzip.compress(b"\xff\xfe" +
                                        plain.decode().encode("utf-16-le")),
        # A lone high surrogate in the first line, a lone low one in the
        # second: each becomes U+FFFD, nothing else changes.
        "utf16le-surrogates.log": b"\xff\xfe" + plain[:10].decode().encode(
            "utf-16-le") + b"\x00\xd8" + plain[10:half].decode().encode(
            "utf-16-le") + b"\x00\xdc" + plain[half:].decode().encode(
            "utf-16-le"),
    }
    forms = dict(FORMS)
    for name, data in made.items():
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
        forms[os.path.join(tmp, name)] = (7, 7, None, {})

    for form, (line, end, ts, labels) in forms.items():
        path = form if os.path.isabs(form) else os.path.join(DIR, form)
        rc, doc, err = run(oomdoc, path)
        name = os.path.basename(form)
        if rc != 0 or doc is None or len(doc["events"]) != 1:
            fails.append("%s: exit %d, %s events, %s" % (
                name, rc, len(doc["events"]) if doc else "no", err.strip()))
            continue
        ev = doc["events"][0]
        bad = [k for k in SAME if ev.get(k) != ev0.get(k)]
        bad += ["context." + k for k in SAME_CONTEXT
                if ev["context"].get(k) != ev0["context"].get(k)]
        got = (ev["line"], ev["end_line"], ev["timestamp"], ev["labels"])
        if got != (line, end, ts, labels):
            bad.append("line, end_line, timestamp, labels %r, want %r" % (
                got, (line, end, ts, labels)))
        # One place for the pod and container: the JSON's host keys are
        # the labels; the text report's where line and the Markdown
        # report's first line show them (Markdown in code spans).
        host = {k: ev["host"][k] for k in ("pod", "namespace", "container")}
        if host != {k: labels.get(k) for k in host}:
            bad.append("host %r, not the labels" % host)
        if labels:
            text = subprocess.run([oomdoc, "--width", "0", path],
                                  capture_output=True).stdout.decode()
            where = [ln for ln in text.splitlines()
                     if ln.startswith("    where ")]
            md = subprocess.run([oomdoc, "-f", "markdown", path],
                                capture_output=True).stdout.decode()
            first = [ln for ln in md.splitlines() if ln.startswith("In `")]
            for k, v in labels.items():
                if not where or v not in where[0]:
                    bad.append("text: no %s %s in the where line" % (k, v))
                if not first or ("`%s`" % v) not in first[0]:
                    bad.append("markdown: no %s `%s` in the first line" %
                               (k, v))
        if bad:
            fails.append("%s: differs from plain.log in %s" % (
                name, ", ".join(bad)))
        else:
            passed += 1

    # kubectl's own description of a pod fills the same labels.
    rc, doc, err = run(oomdoc, "fixtures/stacks/kubectl-describe-oomkilled.log")
    ev = doc["events"][0] if doc and doc["events"] else None
    want = {"pod": "llama-ft-worker-0", "container": "trainer",
            "namespace": "training"}
    if ev is None or ev["labels"] != want or \
            {k: ev["host"][k] for k in want} != want:
        fails.append("kubectl describe: labels %r, host %r, want %r" % (
            ev and ev["labels"], ev and ev["host"], want))
    else:
        passed += 1

    # A Fluent Bit record longer than the reader holds (1 MiB): its text
    # goes through as it is, and the message quoted in it is still read.
    rec = plain.decode().splitlines()[6]
    big = json.dumps({"log": "x" * (2 << 20) + " " + rec,
                      "kubernetes": {"pod_name": "p"}}) + "\n"
    with open(os.path.join(tmp, "long.log"), "w") as f:
        f.write(big)
    rc, doc, err = run(oomdoc, os.path.join(tmp, "long.log"))
    if rc != 0 or len(doc["events"]) != 1 or doc["events"][0]["memory"] != \
            ev0["memory"] or doc["events"][0]["labels"] != {}:
        fails.append("long.log: exit %d, %s" % (rc, err.strip()))
    else:
        passed += 1

    for f in fails:
        print("FAIL " + f)
    print("%d passed, %d failed" % (passed, len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

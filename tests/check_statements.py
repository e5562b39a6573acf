#!/usr/bin/env python3
"""Reads oomdoc's statements back and checks that they hold.

For every log given, runs oomdoc --format json, text and markdown, and
fails when:

  * an evidence comparison's operator does not hold for its lhs_bytes and
    rhs_bytes, or for the two sizes its text prints on either side of the
    operator, or a "within N%" does not hold;
  * a memory account whose parts are all known does not add up to
    total_bytes, or one whose unaccounted part is known does not add up
    with its known parts (that part takes the difference);
  * a cause's explains_bytes is negative, larger than the shortfall or
    than the bytes the cause accounts for (cause_bytes), or given while
    the shortfall is unknown;
  * a cause's explanation says that a figure went past (or exceeded) a
    limit while one of its comparisons prints it below the limit ("<":
    below it even as the figures are rounded);
  * a cause's explanation names the event's kind by its identifier
    ("host_oom_killer says so"), which no log prints;
  * a cause's explanation states a default that the log shows set
    otherwise (OVERRIDDEN: XLA's 75% where the log sets its share,
    TensorFlow taking nearly the whole GPU where it turns on growth,
    Docker's 64 MiB of /dev/shm where it gives the container more);
  * an explanation calls a rise in memory small ("grew by only X") where X
    is 5% of the GPU or more, or the GPU's size is unknown;
  * a title whose quantifier says more than the figures (TITLE_WORDS:
    "Most of the GPU was held outside" where half of it or less was);
  * a cause whose title makes a claim about the figures (TITLE_CLAIMS:
    "One request is larger than the whole GPU", a fraction that "capped
    PyTorch below the free memory") is given where the event's figures,
    all known, say otherwise;
  * an explanation asserts that something keeps tensors alive (": something
    keeps tensors alive") from readings that are not of allocated memory
    (a peak, reserved or device memory, which rise without it);
  * with nothing allocated by the framework (allocated_bytes 0), an
    explanation says the job's tensors "leave too little room", or a fix
    offers activation checkpointing (there are no stored activations);
  * the text report's bar draws a request larger than the free memory as
    fitting in it (its "=" must run past the bar, "]=");
  * a cause's confidence word disagrees with its score (high from 0.75,
    medium from 0.50, low below), in the JSON (its score as the text
    rounds it) or as the text, Markdown or HTML report prints the two
    side by side ("(low, score 0.80)");
  * an event of host memory that the log shows only as a SIGKILL (a kind
    of HOST_KINDS at low confidence: a shell's "Killed", exit status 137)
    gets a cause title, or a text or Markdown heading, that says memory
    ran out or the container was OOMKilled (UNPROVEN), which the log does
    not show; a Kubernetes event whose message gives no OOMKilled reason
    (the kubelet's eviction, an exit code) gets no OOMKilled heading and
    no scheduler_limit cause;
  * a text or Markdown report prints a "?" standing for an unknown value
    or a literal {...} template, in what oomdoc writes itself (the
    account, the causes, the fixes; the log's own text is left alone).

Usage: check_statements.py OOMDOC LOG...   (from the repository root)
"""
import json
import re
import subprocess
import sys

from fixture_share import share

UNITS = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
         "TiB": 1 << 40, "PiB": 1 << 50}
SIZE = re.compile(r"(-?[0-9]+(?:\.[0-9]+)?) (bytes|KiB|MiB|GiB|TiB|PiB)")
OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
       "=": lambda a, b: a == b, ">=": lambda a, b: a >= b,
       ">": lambda a, b: a > b}
# A cause's confidence word and score as the reports print them: text and
# HTML "(high, score 0.78)", Markdown "(confidence high, score 0.78)".
CONF_SCORE = re.compile(r"\((?:confidence )?(high|medium|low), score "
                        r"([0-9]+\.[0-9]+)\)")


def band(score):
    """The confidence word a score stands for (rules_apply.c's bands)."""
    return "high" if score >= 0.75 else "medium" if score >= 0.5 else "low"


def check_confidence(report, fmt, errs):
    for m in CONF_SCORE.finditer(report):
        if band(float(m.group(2))) != m.group(1):
            errs.append("%s: the confidence word contradicts the score "
                        "beside it: %s" % (fmt, m.group(0)))


# A "?" on its own (not part of a word or a question): "(?)", "? of ?".
UNKNOWN = re.compile(r"(?<![\w?])\?(?![\w?])")
# A setting the log shows, and what an explanation may then not say of
# the default it overrides.
OVERRIDDEN = [
    (re.compile(r"XLA_PYTHON_CLIENT_MEM_FRACTION=\.?[0-9]"),
     re.compile(r"\b75%")),
    (re.compile(r"TF_FORCE_GPU_ALLOW_GROWTH=true|allow_growth\s*=\s*True"),
     re.compile(r"nearly (all|the whole)")),
    # Docker's 64 MiB of /dev/shm where the log gives the container more.
    (re.compile(r"--ipc[= ]host\b|--shm-size[= ][0-9]|\bshm_size\s*:"),
     re.compile(r"\b64 MiB of it by default")),
]
# What the title of a cause claims of the event's figures (all known),
# by rule: the request is larger than the device; the cap is below what
# the process could have had (its reserved memory, or allocated where
# reserved is not printed, and the free memory).
TITLE_CLAIMS = {
    "request_exceeds_device": (
        ("requested_bytes", "total_bytes"), lambda m:
        m["requested_bytes"] > m["total_bytes"]),
    "memory_fraction_limit": (
        ("allowed_bytes", "free_bytes"), lambda m:
        m["allowed_bytes"] < (m.get("reserved_bytes") if m.get(
            "reserved_bytes") is not None else m.get("allocated_bytes") or 0)
        + m["free_bytes"]),
    # "The device had as much memory free as the request or more".
    "free_covers_request": (
        ("requested_bytes", "free_bytes"), lambda m:
        m["requested_bytes"] <= m["free_bytes"]),
}
# What a title's quantifier claims of the figures, whatever the rule:
# "Most of the GPU was held outside" says more than half of the device was
# neither the framework's reservation nor free.
TITLE_WORDS = [
    (re.compile(r"\bMost of the GPU was held outside"),
     ("total_bytes", "reserved_bytes", "free_bytes"), lambda m:
     m["total_bytes"] - m["reserved_bytes"] - m["free_bytes"] >
     m["total_bytes"] / 2),
]
# The kinds of host memory, and what may not be said of one the log shows
# only as a SIGKILL (low confidence): that memory ran out, or that the
# container was OOMKilled.
HOST_KINDS = {"host_oom_killer", "dataloader_killed", "slurm_oom",
              "k8s_oomkilled", "host_alloc_failed", "ray"}
UNPROVEN = re.compile(r"\bran out\b|\bOOMKilled\b|^Host memory: process "
                      r"killed$")
# The OOM-kill reason a Kubernetes message gives: "OOMKilled", the
# kubelet's "OOM Killed", runc's "OOM-killed".
OOM_KILLED = re.compile(r"(?i)\bOOM[ -]?Kill")
# A text report's event heading ("#1  TITLE"), a Markdown one ("### 1.
# TITLE").
HEADING = re.compile(r"^(?:#([0-9]+)  |### ([0-9]+)\. )(.*?)(?: \(not "
                     r"fatal\))?$", re.M)
# An explanation's claim that memory grew little.
ONLY_GREW = re.compile(r"(?<=grew by only )(-?[0-9]+(?:\.[0-9]+)?) "
                       r"(bytes|KiB|MiB|GiB|TiB|PiB)")
# An explanation's claim that a figure went past a limit.
PAST = re.compile(r"\b(went past|exceed(s|ed)?)\b")
TEMPLATE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_.]*[^{}]*\}")


def size(m):
    return round(float(m.group(1)) * UNITS[m.group(2)])


def check_evidence(e, where, errs):
    if not isinstance(e, dict) or not isinstance(e.get("text"), str):
        errs.append("%s: evidence is not an object with a text: %r"
                    % (where, e))
        return
    if e.get("op") is None:
        return
    op, lhs, rhs = e["op"], e.get("lhs_bytes"), e.get("rhs_bytes")
    if op not in OPS or not isinstance(lhs, int) or not isinstance(rhs, int):
        errs.append("%s: malformed comparison %r" % (where, e))
        return
    if not OPS[op](lhs, rhs):
        errs.append("%s: %d %s %d does not hold (%s)"
                    % (where, lhs, op, rhs, e["text"]))
    pct = e.get("within_percent")
    if pct is not None and abs(lhs - rhs) > pct / 100 * abs(rhs):
        errs.append("%s: %d is not within %d%% of %d (%s)"
                    % (where, lhs, pct, rhs, e["text"]))
    # The sizes printed on either side of the operator.
    text = e["text"]
    at = text.find(" %s " % op)
    if at < 0:
        errs.append("%s: the text does not print its operator %s: %s"
                    % (where, op, text))
        return
    before = list(SIZE.finditer(text[:at]))
    after = SIZE.search(text[at + len(op) + 2:])
    if not before or not after:
        errs.append("%s: no sizes around the operator: %s" % (where, text))
    elif not OPS[op](size(before[-1]), size(after)):
        errs.append("%s: as printed, %s %s %s does not hold (%s)"
                    % (where, before[-1].group(0), op, after.group(0), text))


def check_overridden(ev, where, log_text, errs):
    for setting, claim in OVERRIDDEN:
        m = setting.search(log_text)
        if m is None:
            continue
        for i, c in enumerate(ev.get("causes", [])):
            if claim.search(c.get("explanation") or ""):
                errs.append("%s cause %d (%s): the log sets %s, the "
                            "explanation states the default: %s"
                            % (where, i, c.get("rule"), m.group(0),
                               c.get("explanation")))


def check_event(ev, where, errs):
    mem = ev.get("memory") or {}
    acct, total = mem.get("account"), mem.get("total_bytes")
    shortfall = mem.get("shortfall_bytes")
    if acct is not None:
        parts = {p["part"]: p["bytes"] for p in acct}
        known = [b for b in parts.values() if b is not None]
        if len(known) == len(parts) and sum(known) != total:
            errs.append("%s: the account adds up to %d, not total_bytes %r"
                        % (where, sum(known), total))
        elif parts.get("unaccounted") is not None and sum(known) != total:
            errs.append("%s: the known parts add up to %d, not total_bytes "
                        "%r" % (where, sum(known), total))
    kind = ev.get("kind") or ""
    if mem.get("allocated_bytes") == 0:
        for i, c in enumerate(ev.get("causes", [])):
            if "leave too little room" in (c.get("explanation") or ""):
                errs.append("%s cause %d (%s): nothing was allocated, yet "
                            "the tensors leave too little room"
                            % (where, i, c.get("rule")))
            for f in c.get("fixes", []):
                if "activation checkpointing" in f.get("text", ""):
                    errs.append("%s cause %d (%s): offers activation "
                                "checkpointing with nothing allocated"
                                % (where, i, c.get("rule")))
    whats = {r.get("what") for r in
             ((ev.get("context") or {}).get("readings") or [])}
    for i, c in enumerate(ev.get("causes", [])):
        if ": something keeps tensors alive" in (c.get("explanation") or "") \
                and whats - {"allocated"}:
            errs.append("%s cause %d (%s): says tensors are kept alive from "
                        "readings of %s" % (where, i, c.get("rule"),
                                            ", ".join(sorted(map(str, whats)))))
    for i, c in enumerate(ev.get("causes", [])):
        claim = TITLE_CLAIMS.get(c.get("rule"))
        if claim is not None and all(mem.get(k) is not None
                                     for k in claim[0]) and \
                not claim[1](mem):
            errs.append("%s cause %d (%s): the figures do not bear out its "
                        "title (%s)" % (where, i, c.get("rule"),
                                        c.get("title")))
    for i, c in enumerate(ev.get("causes", [])):
        for pat, keys, holds in TITLE_WORDS:
            if pat.search(c.get("title") or "") and all(
                    mem.get(k) is not None for k in keys) and not holds(mem):
                errs.append("%s cause %d (%s): the figures do not bear out "
                            "the title's quantifier (%s)" % (
                                where, i, c.get("rule"), c.get("title")))
    for i, c in enumerate(ev.get("causes", [])):
        m = ONLY_GREW.search(c.get("explanation") or "")
        if m is not None and (total is None or size(m) >= 0.05 * total):
            errs.append("%s cause %d (%s): calls a rise of %s small on a GPU "
                        "of %r bytes" % (where, i, c.get("rule"), m.group(0),
                                         total))
    for i, c in enumerate(ev.get("causes", [])):
        cw = "%s cause %d (%s)" % (where, i, c.get("rule"))
        if isinstance(c.get("score"), (int, float)) and \
                band(float("%.2f" % c["score"])) != c.get("confidence"):
            errs.append("%s: confidence %s with score %.2f" % (
                cw, c.get("confidence"), c["score"]))
        if "_" in kind and kind in (c.get("explanation") or ""):
            errs.append("%s: the explanation names the kind %s by its "
                        "identifier" % (cw, kind))
        x, held = c.get("explains_bytes"), c.get("cause_bytes")
        if x is not None:
            if x < 0:
                errs.append("%s: explains_bytes %d < 0" % (cw, x))
            if shortfall is None:
                errs.append("%s: explains_bytes without a shortfall" % cw)
            elif x > shortfall:
                errs.append("%s: explains %d, more than the shortfall %d"
                            % (cw, x, shortfall))
            if held is None or x > held:
                errs.append("%s: explains %d, more than it accounts for (%r)"
                            % (cw, x, held))
        if held is not None and held < 0:
            errs.append("%s: cause_bytes %d < 0" % (cw, held))
        for k, e in enumerate(c.get("evidence", [])):
            check_evidence(e, "%s evidence %d" % (cw, k), errs)
            if isinstance(e, dict) and e.get("op") == "<" and \
                    PAST.search(c.get("explanation") or ""):
                errs.append("%s: the explanation says it went past, the "
                            "evidence prints it below: %s"
                            % (cw, e.get("text")))


def unproven(ev):
    """Whether the log shows ev only as a SIGKILL."""
    return ev.get("kind") in HOST_KINDS and ev.get("confidence") == "low"


def check_unproven(events, where, errs):
    for n, ev in enumerate(events):
        for i, c in enumerate(ev.get("causes", [])):
            # The scheduler's limit reached, from a message that names no
            # OOMKilled reason (the kubelet's eviction: the node ran short).
            if no_oomkilled(ev) and c.get("rule") == "scheduler_limit":
                errs.append("%s event %d cause %d: the limit reached, "
                            "from a message without OOMKilled: %s" % (
                                where, n, i, ev.get("message")))
        if not unproven(ev):
            continue
        for i, c in enumerate(ev.get("causes", [])):
            if UNPROVEN.search(c.get("title") or ""):
                errs.append("%s event %d cause %d (%s): a SIGKILL alone, "
                            "the title says more: %s" % (
                                where, n, i, c.get("rule"), c.get("title")))


def no_oomkilled(ev):
    """Whether ev is a Kubernetes event whose message does not give the
    OOMKilled reason (an exit code, the kubelet's eviction)."""
    return ev.get("kind") == "k8s_oomkilled" and \
        OOM_KILLED.search(ev.get("message") or "") is None


def check_headings(report, events, fmt, errs):
    for m in HEADING.finditer(report):
        n = int(m.group(1) or m.group(2))
        if n > len(events):
            continue
        if unproven(events[n - 1]) and UNPROVEN.search(m.group(3)):
            errs.append("%s, event %d: a SIGKILL alone, the heading says "
                        "more: %s" % (fmt, n, m.group(3)))
        elif no_oomkilled(events[n - 1]) and "OOMKilled" in m.group(3):
            errs.append("%s, event %d: the message gives no OOMKilled "
                        "reason, the heading says it: %s" % (fmt, n,
                                                             m.group(3)))


def own_lines_text(out):
    """The lines of a text report that oomdoc writes itself: from the
    memory section (or the causes) of each event to its fingerprint."""
    keep, on = [], False
    for line in out.splitlines():
        if line.startswith("    memory at the failure:") or \
                line.startswith("    likely causes:") or \
                line.startswith("    causes     "):
            on = True
        elif line.startswith("#") or line.startswith("    fingerprint"):
            on = False
        if on:
            keep.append(line)
    return keep


def own_lines_markdown(out):
    """The same for Markdown: the causes with their fences, and the memory
    bar (the text fence of the folded figures); not the message, folded
    on its own."""
    keep, causes, fence, take, section = [], False, None, False, None
    for line in out.splitlines():
        if fence is not None:
            if line == fence:
                fence = None
            elif take:
                keep.append(line)
            continue
        if line.startswith("<summary>"):
            section, causes = line, False
        elif line == "</details>":
            section = None
        if line.startswith("```"):
            fence = line[:len(line) - len(line.lstrip("`"))]
            causes = causes and line != "```mermaid"
            take = causes or (section == "<summary>Figures</summary>" and
                              line == "```text")
            continue
        if line.startswith("### ") or line.startswith("Fingerprint "):
            causes = False
        elif line.startswith("**Cause "):
            causes = True
        if causes:
            keep.append(line)
    return keep


def check_report(lines, where, errs):
    for line in lines:
        if UNKNOWN.search(line):
            errs.append("%s: prints '?' for an unknown value: %s"
                        % (where, line.strip()))
        if TEMPLATE.search(line):
            errs.append("%s: prints a template: %s" % (where, line.strip()))


def check_bars(text, events, errs):
    """A request larger than the free memory runs past the bar."""
    blocks = re.split(r"\n(?=#[0-9]+  )", text)
    for block in blocks[1:]:
        n = int(block[1:block.index(" ")])
        bars = [ln for ln in block.split("\n") if ln.startswith("    [")]
        if n > len(events) or len(bars) < 2:
            continue
        m = events[n - 1].get("memory", {})
        req, free = m.get("requested_bytes"), m.get("free_bytes")
        if req is not None and free is not None and req > free and \
                "]=" not in bars[1]:
            errs.append("text, event %d: the request (%d bytes) is drawn "
                        "within the bar, over %d bytes free: %r" %
                        (n, req, free, bars[1]))


def run(oomdoc, fmt, log):
    r = subprocess.run([oomdoc, "--format", fmt, "--color", "never", log],
                       capture_output=True, text=True, timeout=60)
    return r.stdout


def main():
    oomdoc, logs = sys.argv[1], share(sys.argv[2:])
    failed = statements = 0
    for log in logs:
        errs = []
        try:
            doc = json.loads(run(oomdoc, "json", log))
        except ValueError:
            print("FAIL %s: no JSON" % log)
            failed += 1
            continue
        if doc.get("schema") != "oomdoc.report/2":
            errs.append("schema %r, not oomdoc.report/2" % doc.get("schema"))
        try:
            with open(log, errors="replace") as f:
                log_text = f.read()
        except OSError:
            log_text = ""
        for i, ev in enumerate(doc.get("events", [])):
            check_event(ev, "event %d" % i, errs)
            check_overridden(ev, "event %d" % i, log_text, errs)
            statements += sum(len(c.get("evidence", []))
                              for c in ev.get("causes", []))
        check_unproven(doc.get("events", []), "json", errs)
        text = run(oomdoc, "text", log)
        check_headings(text, doc.get("events", []), "text", errs)
        check_report(own_lines_text(text), "text", errs)
        check_bars(text, doc.get("events", []), errs)
        check_confidence(text, "text", errs)
        markdown = run(oomdoc, "markdown", log)
        check_headings(markdown, doc.get("events", []), "markdown", errs)
        check_report(own_lines_markdown(markdown), "markdown", errs)
        check_confidence(markdown, "markdown", errs)
        check_confidence(run(oomdoc, "html", log), "html", errs)
        if errs:
            failed += 1
            print("FAIL %s:" % log)
            for e in errs:
                print("    " + e)
    print("%d logs, %d evidence lines checked, %d failed"
          % (len(logs), statements, failed))
    return 1 if failed or not logs else 0


if __name__ == "__main__":
    sys.exit(main())

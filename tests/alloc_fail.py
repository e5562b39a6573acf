#!/usr/bin/env python3
"""alloc_fail.py: allocation-failure injection over every allocation.

Usage: alloc_fail.py OOMDOC [JOBS]

OOMDOC is a program built with -DOOMDOC_ALLOC_FAIL=ON (see
tests/alloc/alloc_fail.c), best with -DOOMDOC_SANITIZE=ON too.  For each
case below it runs oomdoc once to learn its output, its status and the
number of allocations it makes (OOMDOC_ALLOC_COUNT), and then once for
every N from 1 to that number with OOMDOC_FAIL_AT=N, so that the Nth
allocation fails.  Each such run must end, within the time limit, in one
of two ways:

  - the failure was absorbed: the same status, standard output and
    standard error as the run without a failure;
  - or the run stops with status 2 (the man page's EXIT STATUS: out of
    memory is an error of status 2) and standard error holds, besides
    the lines of the run without a failure, exactly one more line,
    "oomdoc: ...out of memory" (a clear one-line error).

Never a signal, a sanitizer report (a leak, an invalid access, undefined
behaviour: ASan and UBSan exit with status 99 here), a hang, or another
status.  The cases between them reach every stage: reading (plain and
gzip), the prefilter and the prefixes, both recognisers (PyTorch's
grammar and the other stacks' table, with a kernel kill and a DataLoader
worker's), the context, the rules (the shipped ones, and a small file),
and the three report formats (the JSON one twice: a small event, and
one with many keys, where a failed append inside jansson's dump once
went unnoticed).
"""
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

TIME_LIMIT = 60  # seconds per run, far above a normal run under ASan

CASES = [
    # PyTorch's grammar, the shipped rules, the JSON report (its writer
    # and jansson's allocations).
    ["--format", "json", "fixtures/pytorch/async_oneline.log"],
    # The stacks' recognisers, a gzip input and the text report, with a
    # rule file of its own.
    ["--no-default-rules", "--rules", "rules/recognisers.yaml", "--rules",
     "tests/alloc/rules.yaml", "@GZ@"],
    # A kernel kill and a DataLoader worker's, and the Markdown report.
    ["--no-default-rules", "--rules", "rules/recognisers.yaml", "--rules",
     "tests/alloc/rules.yaml", "--format", "markdown",
     "fixtures/stacks/dataloader-worker-killed.log"],
    # A memory snapshot (the pickle reader, the measures, the join) and
    # one read as an input, with the text report; the small rule file
    # (the shipped rules' loading is the first case's and the last's).
    ["--no-default-rules", "--rules", "rules/recognisers.yaml", "--rules",
     "tests/alloc/rules.yaml", "--snapshot",
     "fixtures/snapshot/fragmentation.pickle", "fixtures/snapshot/job.log",
     "fixtures/snapshot/partial.pickle"],
    # The JSON report of an event with a snapshot's measures: jansson's
    # dump of many keys (do_dump ignores a key's failed append: the
    # sticky buffer of report_json.c must turn it into an error).
    ["--format", "json", "fixtures/snapshot/job.log"],
]

COUNT_RE = re.compile(r"^oomdoc-alloc: (\d+) allocations$")


def run(oomdoc, args, fail_at):
    env = dict(os.environ)
    env["OOMDOC_ALLOC_COUNT"] = "1"
    env["OOMDOC_FAIL_AT"] = str(fail_at)
    env["ASAN_OPTIONS"] = ("detect_leaks=1:exitcode=99:"
                           + env.get("ASAN_OPTIONS", ""))
    env["UBSAN_OPTIONS"] = ("halt_on_error=1:exitcode=99:print_stacktrace=1:"
                            + env.get("UBSAN_OPTIONS", ""))
    try:
        p = subprocess.run([oomdoc] + args, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return None
    lines = p.stderr.decode("utf-8", "replace").splitlines()
    count = None
    if lines and COUNT_RE.match(lines[-1]):
        count = int(COUNT_RE.match(lines[-1]).group(1))
        lines = lines[:-1]
    return p.returncode, p.stdout, lines, count


FRAME_RE = re.compile(r"^\s+#\d+ 0x[0-9a-f]+ (?:in (\S+) )?(\S+)")


def where(oomdoc, args, fail_at):
    """The failed allocation's callers in oomdoc's code (an ASan build
    prints the stack with OOMDOC_FAIL_TRACE), innermost first."""
    env = dict(os.environ, OOMDOC_FAIL_AT=str(fail_at), OOMDOC_FAIL_TRACE="1",
               ASAN_OPTIONS="detect_leaks=0")
    try:
        p = subprocess.run([oomdoc] + args, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return "?"
    frames = []
    for line in p.stderr.decode("utf-8", "replace").splitlines():
        m = FRAME_RE.match(line)
        if m is None:
            if frames:
                break
            continue
        func, loc = m.groups()
        if "/src/" in loc and "alloc_fail" not in loc and \
                "libsanitizer" not in loc:
            frames.append("%s %s" % (func, loc[loc.index("/src/") + 1:]))
    return " < ".join(frames[:3]) or "?"


def judge(base, got):
    """None when got is one of the two allowed outcomes, else why not."""
    if got is None:
        return "no end within %d s (a hang)" % TIME_LIMIT
    rc, out, err, _ = got
    if rc < 0:
        return "killed by signal %d" % -rc
    if any("Sanitizer" in l or "runtime error:" in l for l in err) or rc == 99:
        return "sanitizer report:\n    " + "\n    ".join(err[-30:])
    if (rc, out, err) == base[:3]:
        return None
    if rc != 2:
        return "status %d (out of memory must give 2, or the normal %d)" % (
            rc, base[0])
    extra = list(err)
    for l in base[2]:
        if l in extra:
            extra.remove(l)
    if len(extra) != 1 or not extra[0].startswith("oomdoc") or \
            "out of memory" not in extra[0]:
        return "stderr is not one 'out of memory' line: %r" % extra
    return None


def main():
    oomdoc = sys.argv[1]
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else os.cpu_count() or 1
    failures = 0
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        gz = os.path.join(tmp, "cupy.log.gz")
        subprocess.run("gzip -c fixtures/stacks/cupy-out-of-memory-allocating.log"
                       " > " + gz, shell=True, check=True)
        for case in CASES:
            args = [gz if a == "@GZ@" else a for a in case]
            base = run(oomdoc, args, 0)
            if base is None or base[3] is None or base[0] not in (0, 1):
                print("FAIL %s: the run without a failure did not end well: %r"
                      % (" ".join(case), base and base[:3]))
                failures += 1
                continue
            n = base[3]
            with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
                results = list(ex.map(lambda k: (k, run(oomdoc, args, k)),
                                      range(1, n + 1)))
            bad = 0
            for k, got in results:
                why = judge(base, got)
                if why is not None:
                    bad += 1
                    if bad <= 5 or os.environ.get("ALLOC_FAIL_ALL"):
                        print("FAIL %s, allocation %d of %d failed: %s\n"
                              "    at %s" % (" ".join(case), k, n, why,
                                             where(oomdoc, args, k)))
            print("%s: %d allocations, %d runs, %d bad"
                  % (" ".join(case), n, n, bad))
            failures += bad
            total += n
    print("%d runs, %d bad" % (total, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

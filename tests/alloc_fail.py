#!/usr/bin/env python3
"""alloc_fail.py: allocation-failure injection over every allocation.

Usage: alloc_fail.py OOMDOC [JOBS]
       alloc_fail.py --each OOMDOC [JOBS]
       alloc_fail.py --compare CASE[:FROM] OOMDOC [JOBS]

OOMDOC is a program built with -DOOMDOC_ALLOC_FAIL=ON (see
tests/alloc/alloc_fail.c), best with -DOOMDOC_SANITIZE=ON too.  For each
case below it runs oomdoc once to learn its output, its status and the
number of allocations it makes (OOMDOC_ALLOC_COUNT), and then has the Nth
allocation fail, for every N from 1 to that number.  By default one run
in fork mode (OOMDOC_FAIL_FORK) covers every N: at each allocation
oomdoc forks, the child fails it and runs on to its end, and the parent
goes on (the start-up before the Nth allocation is paid once, not once
per N).  The fork mode starts no thread, so the runs it is checked
against start none either (OOMDOC_FAIL_THREADS=0); the case's run with
its threads must give the same output, and make no allocation while a
thread runs, else the fork mode would not cover what a thread changes.
With --each, oomdoc runs once for every N with OOMDOC_FAIL_AT=N, its
threads allowed, as this test did before the fork mode; --compare CASE
runs the case numbered CASE (from 0) both ways, without threads, and
fails unless every N (from FROM on, 1 unless given) gives the same
status and output both ways.  Each
run (each child) must end, within the time limit, in one of two ways:

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
and the three report formats (the JSON one with many keys, where a
failed append inside jansson's dump once went unnoticed).  The cases
are few because each one's start-up (the rules, PCRE2's and Vectorscan's
compiles) is most of its allocations, so every case costs the suite
about as much again as the first: inputs that need the same rules share
a case.
"""
import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

TIME_LIMIT = 60  # seconds per run, far above a normal run under ASan
# Seconds for a whole fork-mode run: its children, a few at a time, each
# within TIME_LIMIT.
FORK_TIME_LIMIT = 1800
# Children of one fork-mode run at once (OOMDOC_FAIL_FORK_JOBS); the cases
# run side by side too, JOBS at a time.
FORK_JOBS = 2
# The status of a child the fork mode could not set up (AF_UNSOUND).
UNSOUND = 97

CASES = [
    # PyTorch's grammar, two ranks' reports joined into one event (its
    # list of ranks grows), the shipped rules, the JSON report (its
    # writer, jansson's allocations, and the sticky buffer of
    # report_json.c: jansson's do_dump ignores a key's failed append).
    ["--format", "json", "fixtures/pytorch/rank_prefix_multi.log"],
    # The stacks' recognisers, a gzip input, a kernel kill and a
    # DataLoader worker's in a second input, and the Markdown report, with
    # a rule file of its own.  (One run for the two inputs: the start-up,
    # most of a run's allocations, is paid once; it was two cases.)
    ["--no-default-rules", "--rules", "rules/recognisers.yaml", "--rules",
     "tests/alloc/rules.yaml", "--format", "markdown", "@GZ@",
     "fixtures/stacks/dataloader-worker-killed.log"],
    # A memory snapshot (the pickle reader, the measures, the join) and
    # one read as an input, with the text report; the small rule file
    # (the shipped rules' loading is the first case's).
    ["--no-default-rules", "--rules", "rules/recognisers.yaml", "--rules",
     "tests/alloc/rules.yaml", "--snapshot",
     "fixtures/snapshot/fragmentation.pickle", "fixtures/snapshot/job.log",
     "fixtures/snapshot/partial.pickle"],
]

COUNT_RE = re.compile(
    r"^oomdoc-alloc: (\d+) allocations, (\d+) while a thread ran$")


def sanitizer_env(extra):
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ("detect_leaks=1:exitcode=99:"
                           + env.get("ASAN_OPTIONS", ""))
    env["UBSAN_OPTIONS"] = ("halt_on_error=1:exitcode=99:print_stacktrace=1:"
                            + env.get("UBSAN_OPTIONS", ""))
    env.update(extra)
    return env


def run(oomdoc, args, fail_at, threads=True):
    """One run with the fail_at-th allocation failing (0: none): its
    status, standard output, standard error's lines and (the number of
    allocations, those made while a thread ran); None for a hang."""
    extra = {"OOMDOC_ALLOC_COUNT": "1", "OOMDOC_FAIL_AT": str(fail_at)}
    if not threads:
        extra["OOMDOC_FAIL_THREADS"] = "0"
    try:
        p = subprocess.run([oomdoc] + args, env=sanitizer_env(extra),
                           stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return None
    lines = p.stderr.decode("utf-8", "replace").splitlines()
    count = None
    if lines and COUNT_RE.match(lines[-1]):
        count = tuple(int(g) for g in COUNT_RE.match(lines[-1]).groups())
        lines = lines[:-1]
    return p.returncode, p.stdout, lines, count


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""


def fork_run(oomdoc, args, d):
    """One fork-mode run in directory d: the parent's (status, standard
    output, standard error's lines), every child's result as run gives it
    (by N), the count of allocations the parent made, and the errors it
    recorded; the parent's result is None when it hung."""
    extra = {"OOMDOC_FAIL_FORK": d, "OOMDOC_FAIL_FORK_LIMIT": str(TIME_LIMIT),
             "OOMDOC_FAIL_FORK_JOBS": str(FORK_JOBS)}
    out, err = os.path.join(d, "parent.out"), os.path.join(d, "parent.err")
    try:
        with open(out, "wb") as o, open(err, "wb") as e:
            p = subprocess.run([oomdoc] + args, env=sanitizer_env(extra),
                               stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                               timeout=FORK_TIME_LIMIT)
        parent = (p.returncode, read(out),
                  read(err).decode("utf-8", "replace").splitlines())
    except subprocess.TimeoutExpired:
        parent = None
    children, count, errors = {}, None, []
    for line in read(os.path.join(d, "status")).decode().splitlines():
        f = line.split(" ", 2)
        if f[0] == "count":
            count = int(f[1])
        elif f[1] == "error":
            errors.append(line)
        elif f[1] == "signal" and int(f[2]) == signal.SIGALRM:
            children[int(f[0])] = None  # its alarm: a hang
        else:
            k = int(f[0])
            rc = int(f[2]) if f[1] == "exit" else -int(f[2])
            children[k] = (rc, read(os.path.join(d, "%d.out" % k)),
                           read(os.path.join(d, "%d.err" % k))
                           .decode("utf-8", "replace").splitlines(), None)
    return parent, children, count, errors


FRAME_RE = re.compile(r"^\s+#\d+ 0x[0-9a-f]+ (?:in (\S+) )?(\S+)")


def where(oomdoc, args, fail_at, threads):
    """The failed allocation's callers in oomdoc's code (an ASan build
    prints the stack with OOMDOC_FAIL_TRACE), innermost first."""
    env = dict(os.environ, OOMDOC_FAIL_AT=str(fail_at), OOMDOC_FAIL_TRACE="1",
               ASAN_OPTIONS="detect_leaks=0")
    if not threads:
        env["OOMDOC_FAIL_THREADS"] = "0"
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
    if rc == UNSOUND and any(l.startswith("oomdoc-alloc:") for l in err):
        return "the fork mode could not set the child up: %r" % err[-1]
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


def well(base, threads):
    """None when the run without a failure ended well, else why not."""
    if base is None or base[3] is None or base[0] not in (0, 1):
        return "the run without a failure did not end well: %r" % (
            base and base[:3],)
    if threads and base[3][1]:
        return ("%d allocations were made while a thread ran: the fork mode "
                "(which starts none) does not cover what a thread changes "
                "there; run with --each" % base[3][1])
    return None


def report(oomdoc, case, args, base, results, threads):
    """The lines of a case's report, and the number of bad runs."""
    lines, bad, n = [], 0, base[3][0]
    for k in range(1, n + 1):
        why = judge(base, results[k])
        if why is not None:
            bad += 1
            if bad <= 5 or os.environ.get("ALLOC_FAIL_ALL"):
                lines.append("FAIL %s, allocation %d of %d failed: %s\n"
                             "    at %s" % (" ".join(case), k, n, why,
                                            where(oomdoc, args, k, threads)))
    lines.append("%s: %d allocations, %d runs, %d bad"
                 % (" ".join(case), n, n, bad))
    return lines, bad


def each_case(oomdoc, case, args, jobs):
    """--each: one run for every N, the threads allowed."""
    base = run(oomdoc, args, 0)
    why = well(base, False)
    if why is not None:
        return ["FAIL %s: %s" % (" ".join(case), why)], 1, 0
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        got = ex.map(lambda k: run(oomdoc, args, k), range(1, base[3][0] + 1))
        results = dict(enumerate(got, 1))
    lines, bad = report(oomdoc, case, args, base, results, True)
    return lines, bad, base[3][0]


def fork_case(oomdoc, case, args, tmp):
    """The fork mode: the base runs, with and without threads, then one
    run that forks at every allocation."""
    name = " ".join(case)
    with_threads = run(oomdoc, args, 0)
    why = well(with_threads, True)
    base = run(oomdoc, args, 0, threads=False)
    if why is None and (base is None or base[:3] != with_threads[:3]):
        why = "the run without threads differs from the run with them"
    if why is None:
        why = well(base, False)
    if why is not None:
        return ["FAIL %s: %s" % (name, why)], 1, 0
    n = base[3][0]
    d = tempfile.mkdtemp(dir=tmp)
    parent, results, count, errors = fork_run(oomdoc, args, d)
    shutil.rmtree(d)
    if parent != base[:3]:
        return ["FAIL %s: the fork mode's parent differs from the run "
                "without a failure: status %r, standard error ends %r"
                % (name, parent and parent[0], parent and parent[2][-5:])],\
            1, 0
    missing = [k for k in range(1, n + 1) if k not in results]
    if count != n or errors or missing:
        return ["FAIL %s: the fork mode covered %d allocations of %d (%r "
                "made), errors %r" % (name, n - len(missing), n, count,
                                      errors[:5])], 1, 0
    lines, bad = report(oomdoc, case, args, base, results, False)
    return lines, bad, n


def cpu():
    """The CPU time (user and system) of the children waited for so far."""
    t = os.times()
    return t.children_user + t.children_system


def compare_case(oomdoc, case, args, first, jobs, tmp):
    """--compare: every N both ways, without threads; the same status,
    output and verdict each time, and the CPU time of each way."""
    name = " ".join(case)
    base = run(oomdoc, args, 0, threads=False)
    why = well(base, False)
    if why is not None:
        return ["FAIL %s: %s" % (name, why)], 1, 0
    n = base[3][0]
    d = tempfile.mkdtemp(dir=tmp)
    t0 = cpu()
    parent, forked, count, errors = fork_run(oomdoc, args, d)
    t1 = cpu()
    shutil.rmtree(d)
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        got = ex.map(lambda k: run(oomdoc, args, k, threads=False),
                     range(first, n + 1))
        each = dict(enumerate(got, first))
    t2 = cpu()
    lines, differ, verdicts = [], 0, 0
    for k in range(first, n + 1):
        a, b = forked.get(k), each[k]
        if (a and a[:3]) != (b and b[:3]):
            differ += 1
            if differ <= 5:
                lines.append("DIFFER %s, allocation %d: fork %r, each %r"
                             % (name, k, a, b))
        if (judge(base, a) is None) != (judge(base, b) is None):
            verdicts += 1
    bad = differ + (parent != base[:3]) + (count != n) + len(errors)
    lines.append("%s: %d allocations (%r in fork mode), from %d on %d "
                 "outcomes differ, %d verdicts differ, %d bad in fork mode, "
                 "%d in --each; CPU time %.1f s in fork mode (all), %.1f s "
                 "in --each" % (name, n, count, first, differ, verdicts,
                                sum(judge(base, forked.get(k)) is not None
                                    for k in range(first, n + 1)),
                                sum(judge(base, each[k]) is not None
                                    for k in range(first, n + 1)),
                                t1 - t0, t2 - t1))
    return lines, bad, n


def main():
    argv = sys.argv[1:]
    mode, which = "fork", None
    if argv and argv[0] == "--each":
        mode, argv = "each", argv[1:]
    elif argv and argv[0] == "--compare":
        which, first = (argv[1] + ":1").split(":")[:2]
        mode, which, first, argv = "compare", int(which), int(first), argv[2:]
    oomdoc = argv[0]
    jobs = int(argv[1]) if len(argv) > 1 else os.cpu_count() or 1
    # The children's outputs go to memory where there is a tmpfs: tens of
    # thousands of small files.
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(dir=shm) as tmp:
        gz = os.path.join(tmp, "cupy.log.gz")
        subprocess.run("gzip -c fixtures/stacks/cupy-out-of-memory-allocating.log"
                       " > " + gz, shell=True, check=True)
        cases = [(c, [gz if a == "@GZ@" else a for a in c]) for c in CASES]
        if mode == "each":
            done = [each_case(oomdoc, c, a, jobs) for c, a in cases]
        elif mode == "compare":
            done = [compare_case(oomdoc, cases[which][0], cases[which][1],
                                 first, jobs, tmp)]
        else:
            with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
                done = list(ex.map(lambda ca: fork_case(oomdoc, ca[0], ca[1],
                                                        tmp), cases))
    failures = total = 0
    for lines, bad, n in done:
        print("\n".join(lines))
        failures += bad
        total += n
    print("%d runs, %d bad" % (total, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

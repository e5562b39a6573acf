#!/usr/bin/env python3
"""The command's small promises, each checked where it can fail:

- --help names every subcommand, and each subcommand has its own --help;
- the bash completion (oomdoc completions bash) completes options, their
  values, subcommands and the verbs of `rules` (zsh's and fish's:
  tests/shell_completions.py);
- a clustered short option names the letter at fault, as getopt does
  ("unknown option -- 'x'"), and clusters that are right work (-m1, -cq);
- --color=always wins over NO_COLOR, auto gives no colour on TERM=dumb
  and colour on a terminal, and colour reaches the bar and the confidence;
- the --fact values are shown in the text report;
- a usage hint goes to standard error when standard input is a terminal
  and no file is named;
- the man page: no nested quotes, fact values in lower case, SEE ALSO
  names the tools, and the epilog example keeps the report only on an
  out-of-memory failure.

Usage: tests/cli_papercuts.py OOMDOC   (from the repository root)
"""
import fcntl
import os
import pty
import struct
import termios
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

SAMPLE = "fixtures/sample/job.log"
fails = 0


def check(ok, what):
    global fails
    if not ok:
        print("FAIL " + what)
        fails += 1


def run(args, env=None, stdin=subprocess.DEVNULL):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env or {})
    return subprocess.run(args, capture_output=True, text=True, env=e,
                          stdin=stdin)


def on_tty(args, env, stdin_tty=False, stdout_tty=True, wait=10.0, cols=0):
    """Runs args with standard output (or input) on a pseudo-terminal of
    cols columns (0: the pty's default, none); returns (what the terminal
    got, standard error).  With stdin_tty the terminal is closed once
    standard error has said something."""
    master, slave = pty.openpty()
    if cols:
        fcntl.ioctl(slave, termios.TIOCSWINSZ,
                    struct.pack("HHHH", 40, cols, 0, 0))
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env)
    p = subprocess.Popen(args, env=e,
                         stdin=slave if stdin_tty else subprocess.DEVNULL,
                         stdout=slave if stdout_tty else subprocess.PIPE,
                         stderr=subprocess.PIPE)
    os.close(slave)
    got = b""
    err = b""
    end = time.time() + wait
    # A descriptor at its end (EOF, or EIO from the master once the child
    # has closed the terminal) is readable for ever: it is watched no more,
    # or the loop would spin until the deadline.
    fds = [master, p.stderr]
    while time.time() < end and fds:
        r, _, _ = select.select(fds, [], [], 0.2)
        if master in r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                chunk = b""
            got += chunk
            if not chunk:
                fds.remove(master)
        if p.stderr in r:
            chunk = os.read(p.stderr.fileno(), 65536)
            err += chunk
            if not chunk:
                fds.remove(p.stderr)
            if stdin_tty and err:
                break
        if p.poll() is not None and not r:
            break
    if stdin_tty:
        os.write(master, b"\x04")
        time.sleep(0.2)
    os.close(master)
    try:
        p.wait(5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    err += p.stderr.read()
    return got.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def main():
    oomdoc = os.path.abspath(sys.argv[1])

    # --help and the subcommands' own.
    h = run([oomdoc, "--help"]).stdout
    for sub in ("rules", "live", "probe", "completions"):
        check(re.search(r"oomdoc %s\b" % sub, h) is not None,
              "--help does not name %s" % sub)
        r = run([oomdoc, sub, "--help"])
        check(r.returncode == 0 and r.stdout.startswith("Usage: oomdoc " +
              sub) and r.stderr == "", "oomdoc %s --help: exit %d, %r" %
              (sub, r.returncode, (r.stdout + r.stderr)[:200]))
    r = run([oomdoc, "rules", "check", "--help"])
    check(r.returncode == 0 and r.stdout.startswith("Usage: oomdoc rules"),
          "oomdoc rules check --help")

    # The bash completion.
    script = run([oomdoc, "completions", "bash"]).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".bash", delete=False) as f:
        f.write(script)
        path = f.name

    def complete(*words):
        words = list(words)
        cmd = ("source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _oomdoc; "
               "printf '%%s\\n' \"${COMPREPLY[@]}\"" %
               (path, " ".join("'%s'" % w for w in words), len(words) - 1))
        r = subprocess.run(["bash", "-c", cmd], capture_output=True,
                           text=True, cwd=tempfile.gettempdir())
        check(r.stderr == "", "bash completion: %r" % r.stderr[:200])
        return r.stdout.split()

    check(complete("oomdoc", "--for") == ["--format"],
          "bash: oomdoc --for<TAB> is not --format: %r" %
          complete("oomdoc", "--for"))
    check(complete("oomdoc", "--color", "") == ["auto", "always", "never"],
          "bash: --color values: %r" % complete("oomdoc", "--color", ""))
    check("host_oom_killer" in complete("oomdoc", "--kind", "host"),
          "bash: --kind does not complete the kinds")
    check(complete("oomdoc", "live", "--back") == ["--backend"],
          "bash: oomdoc live --back<TAB>")
    check("--backend" not in complete("oomdoc", "--"),
          "bash: a live option offered to the diagnosis")
    check(complete("oomdoc", "rules", "ch") == ["check"],
          "bash: oomdoc rules ch<TAB>")
    check("completions" in complete("oomdoc", "comp"),
          "bash: the subcommands")
    longs = set(re.findall(r"--([a-z][a-z-]+)", h.split("Options:")[1]))
    offered = set(w[2:] for w in complete("oomdoc", "--"))
    check(longs <= offered, "bash: options of --help not completed: %s" %
          sorted(longs - offered))
    os.unlink(path)
    # zsh's and fish's: tests/shell_completions.py loads them and
    # completes in each shell.

    # Clustered short options.
    r = run([oomdoc, "-cx", SAMPLE])
    check(r.returncode == 2 and "unknown option -- 'x'" in r.stderr,
          "-cx: %d %r" % (r.returncode, r.stderr))
    r = run([oomdoc, "-qm"])
    check(r.returncode == 2 and "option requires an argument -- 'm'" in
          r.stderr, "-qm: %d %r" % (r.returncode, r.stderr))
    r = run([oomdoc, "-m1", SAMPLE])
    check(r.returncode == 0 and "1 out-of-memory event" in r.stdout,
          "-m1: %d %r" % (r.returncode, r.stderr))
    r = run([oomdoc, "-cq", SAMPLE])
    check(r.returncode == 0 and r.stdout == "", "-cq: %d %r" %
          (r.returncode, r.stdout))
    r = run([oomdoc, "--bogus"])
    check(r.returncode == 2 and "unknown option '--bogus'" in r.stderr,
          "--bogus: %r" % r.stderr)

    # Colour.
    r = run([oomdoc, "--color", "always", SAMPLE], {"NO_COLOR": "1"})
    check("\033[" in r.stdout, "--color always loses to NO_COLOR")
    bar = [l for l in r.stdout.split("\n") if l.startswith("    [")]
    check(bar and "\033[31m#" in bar[0], "no colour in the bar: %r" %
          bar[:1])
    check("(\033[32mhigh\033[0m" in r.stdout, "no colour for the "
          "confidence")
    out, _ = on_tty([oomdoc, SAMPLE], {"TERM": "xterm"})
    check("\033[" in out, "no colour on a terminal")
    out, _ = on_tty([oomdoc, SAMPLE], {"TERM": "dumb"})
    check("fingerprint" in out and "\033[" not in out,
          "colour on TERM=dumb")
    out, _ = on_tty([oomdoc, SAMPLE], {"TERM": "xterm", "NO_COLOR": "1"})
    check("fingerprint" in out and "\033[" not in out,
          "colour with NO_COLOR")

    # The width of the terminal, over COLUMNS.
    out, _ = on_tty([oomdoc, "--color", "never", SAMPLE],
                    {"COLUMNS": "100"}, cols=60)
    lines = out.replace("\r", "").split("\n")
    check("fingerprint" in out and max(len(l) for l in lines) <= 60 and
          max(len(l) for l in lines) > 50,
          "the report on a terminal of 60 columns: lines of %d" %
          max(len(l) for l in lines))

    # The facts given.
    r = run([oomdoc, "--fact", "batch_size=8", "--fact", "accum_steps=2",
             SAMPLE])
    check(re.search(r"\n    given +batch_size=8, accum_steps=2 ", r.stdout)
          is not None, "the --fact values are not shown")

    # The usage hint.
    _, err = on_tty([oomdoc], {}, stdin_tty=True, stdout_tty=False)
    check("reading a log from the terminal" in err, "no usage hint: %r" %
          err)
    r = run([oomdoc], stdin=open(SAMPLE))
    check(r.stderr == "", "a usage hint for a file on standard input")

    # The man page.
    man = run(["mandoc", "-T", "utf8", "-O", "width=200",
               "man/oomdoc.1"]).stdout
    man = re.sub(".\b", "", man)
    check(not re.search("[“”]{2}", man), "nested quotes in the man page: %s"
          % re.findall(".{30}[“”]{2}", man)[:3])
    check(not re.search(r"\b(Pytorch|Tensorflow|Bf16|Fp16)\b", man),
          "capitalised fact values in the man page")
    see = man.split("SEE ALSO")[-1].split("STANDARDS")[0]
    for tool in ("dmesg(1)", "kubectl", "nvidia-smi(1)", "sacct(1)", "seff"):
        check(tool in see, "SEE ALSO lacks " + tool)
    src = open("man/oomdoc.1").read()
    m = re.search(r"In a Slurm epilog.*?\n\.Dl ([^\n]*)\n", src, re.S)
    check(m is not None, "no epilog example")
    if m:
        cmd = m.group(1).replace("\\-", "-").replace("\\e", "\\")
        for log, kept in ((SAMPLE, True),
                          ("fixtures/no-oom/" + sorted(
                              os.listdir("fixtures/no-oom"))[0], False)):
            d = tempfile.mkdtemp()
            shutil.copy(log, os.path.join(d, "job.log"))
            r = subprocess.run(["sh", "-c", cmd], cwd=d, capture_output=True,
                               env=dict(os.environ, PATH=os.path.dirname(
                                   oomdoc) + ":" + os.environ["PATH"]))
            there = os.path.exists(os.path.join(d, "report.json"))
            check(r.returncode == 0 and there == kept,
                  "the epilog example on %s: exit %d, report %s" %
                  (log, r.returncode, "kept" if there else "removed") +
                  " " + r.stderr.decode()[:200])
            shutil.rmtree(d)

    print("%d failures" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

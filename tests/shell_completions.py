#!/usr/bin/env python3
"""The zsh and fish completions that `oomdoc completions` generates load in
their shell and complete (issue 13, item 6); bash's is checked in
tests/cli_papercuts.py.

For each shell: the script is loaded as the shell loads it (zsh: from a
directory on fpath, through compinit; fish: sourced), and completing

  oomdoc --for          offers --format, and only it (an option)
  oomdoc --color=       offers auto, always, never (an option's values;
                        fish: after a space)
  oomdoc comp           offers the subcommand completions
  oomdoc rules ch       offers check (a subcommand's verb)
  oomdoc live --back    offers --backend (a subcommand's option)
  oomdoc --             offers every long option of --help, and no
                        option of live

zsh completes only in its line editor: tests/completions/zsh_complete.zsh
runs an interactive zsh in a pseudo-terminal and prints the matches.  Each
shell is a Debian package (zsh, fish) that tools/setup.sh installs; without
one the test exits 77 (skipped), it never passes without them.  About 3 s.

Usage: tests/shell_completions.py OOMDOC   (from the repository root)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checks import check, summary

SKIP = 77


def zsh_matches(harness, fdir, line, cwd):
    r = subprocess.run(["zsh", "-f", harness, fdir, line], cwd=cwd,
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and "@@MARK@@" in r.stdout,
          "zsh: completing %r did not run: %r" % (line, r.stderr[:200]))
    words = []
    for m in re.findall(r"<<(.*?)>>", r.stdout):
        words += m.split()
    return words


def fish_matches(script, line, cwd, home):
    cmd = "source %s; complete -C%s" % (script, shlex_quote(line))
    r = subprocess.run(["fish", "--no-config", "-c", cmd], cwd=cwd,
                       capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, HOME=home,
                                XDG_CONFIG_HOME=home, XDG_DATA_HOME=home))
    check(r.returncode == 0 and r.stderr == "",
          "fish: completing %r: exit %d, %r" % (line, r.returncode,
                                              r.stderr[:200]))
    return [ln.split("\t")[0] for ln in r.stdout.splitlines() if ln]


def shlex_quote(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def main():
    oomdoc = os.path.abspath(sys.argv[1])
    harness = os.path.abspath("tests/completions/zsh_complete.zsh")
    missing = [s for s in ("zsh", "fish") if shutil.which(s) is None]
    if missing:
        print("SKIP: no %s on PATH (Debian packages; tools/setup.sh "
              "installs them)" % " and ".join(missing))
        return SKIP
    help_text = subprocess.run([oomdoc, "--help"], capture_output=True,
                               text=True).stdout
    longs = set(re.findall(r"--([a-z][a-z-]+)",
                           help_text.split("Options:")[1].split(
                               "\nFormats")[0]))
    with tempfile.TemporaryDirectory(prefix="oomdoc-compl-") as tmp:
        fdir = os.path.join(tmp, "functions")
        work = os.path.join(tmp, "empty")     # no file names to offer
        os.mkdir(fdir)
        os.mkdir(work)
        for shell, path in (("zsh", os.path.join(fdir, "_oomdoc")),
                            ("fish", os.path.join(tmp, "oomdoc.fish"))):
            r = subprocess.run([oomdoc, "completions", shell],
                               capture_output=True, text=True)
            check(r.returncode == 0 and r.stdout,
                  "oomdoc completions %s: exit %d" % (shell, r.returncode))
            with open(path, "w") as f:
                f.write(r.stdout)
        fish_script = os.path.join(tmp, "oomdoc.fish")

        for shell in ("zsh", "fish"):
            def complete(line):
                if shell == "zsh":
                    return zsh_matches(harness, fdir, line, work)
                return fish_matches(fish_script, line, work, tmp)

            got = complete("oomdoc --for")
            check(got == ["--format"], "%s: oomdoc --for<TAB>: %r" %
                  (shell, got))
            got = complete("oomdoc --color=" if shell == "zsh" else
                           "oomdoc --color ")
            check(sorted(got) == ["always", "auto", "never"],
                  "%s: --color values: %r" % (shell, got))
            got = complete("oomdoc comp")
            check(got == ["completions"], "%s: oomdoc comp<TAB>: %r" %
                  (shell, got))
            got = complete("oomdoc rules ch")
            check(got == ["check"], "%s: oomdoc rules ch<TAB>: %r" %
                  (shell, got))
            got = complete("oomdoc live --back")
            check(got == ["--backend"], "%s: oomdoc live --back<TAB>: %r"
                  % (shell, got))
            got = complete("oomdoc --")
            offered = set(w[2:] for w in got if w.startswith("--"))
            check(longs and longs <= offered,
                  "%s: options of --help not completed: %s" %
                  (shell, sorted(longs - offered)))
            check("backend" not in offered,
                  "%s: a live option offered to the diagnosis" % shell)
            print("%s: %d long options completed" % (shell, len(offered)))

    return summary()


if __name__ == "__main__":
    sys.exit(main())

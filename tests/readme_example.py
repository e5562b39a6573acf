#!/usr/bin/env python3
"""README's first example is what oomdoc prints: the code block under the
line `$ kubectl logs job/llama-ft | oomdoc` must be, byte for byte, the
text report of the bundled sample (fixtures/sample/job.log) read from
standard input at 80 columns without colour, as a terminal of 80 columns
shows it (no COLUMNS, the report's default width).

Usage: tests/readme_example.py OOMDOC [--update]   (from the repository root)
With --update the block is rewritten from the tool's output; read the
diff (git diff README.md) before committing it.
"""
import os
import subprocess
import sys

PROMPT = "$ kubectl logs job/llama-ft | oomdoc\n"


def main():
    oomdoc = sys.argv[1]
    update = sys.argv[2:] == ["--update"]
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    env.pop("NO_COLOR", None)
    with open("fixtures/sample/job.log", "rb") as log:
        p = subprocess.run([oomdoc, "--color", "never"], stdin=log,
                           capture_output=True, env=env)
    if p.returncode != 0 or p.stderr:
        print(f"FAIL: oomdoc exited {p.returncode}: {p.stderr[:300]!r}")
        return 1
    out = p.stdout.decode("utf-8")
    with open("README.md", encoding="utf-8") as f:
        readme = f.read()
    start = readme.find("```\n" + PROMPT)
    if start < 0:
        print("FAIL: README.md has no code block that starts with "
              + PROMPT.strip())
        return 1
    body = start + 4 + len(PROMPT)
    end = readme.find("```\n", body)
    if end < 0:
        print("FAIL: README.md's example block is not closed")
        return 1
    shown = readme[body:end]
    if shown == out:
        print("README.md's example is the output of oomdoc")
        return 0
    if update:
        with open("README.md", "w", encoding="utf-8") as f:
            f.write(readme[:body] + out + readme[end:])
        print("README.md's example rewritten from the output; review"
              " git diff README.md")
        return 0
    print("FAIL: README.md's example differs from what oomdoc prints"
          " (tests/readme_example.py OOMDOC --update rewrites it):")
    import difflib
    for line in difflib.unified_diff(shown.splitlines(), out.splitlines(),
                                     "README.md", "oomdoc", lineterm=""):
        print(line)
    return 1


if __name__ == "__main__":
    sys.exit(main())

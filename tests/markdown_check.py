#!/usr/bin/python3
"""Renders oomdoc's Markdown for every fixture with a real CommonMark
renderer (markdown-it-py, with GitHub's tables and autolinks, "gfm-like")
and checks that nothing from the log became live: no link, no HTML tag
but the ones the report itself makes, no @mention, and tables whose rows
all have the header's cells.  Run with Debian's python3 (python3-markdown-it
and python3-linkify-it).

Usage: markdown_check.py OOMDOC LOG...
"""
import html.parser
import re
import subprocess
import sys

from markdown_it import MarkdownIt

ALLOWED = {"h2", "h3", "p", "strong", "table", "thead", "tbody", "tr", "th",
           "td", "pre", "code", "ul", "li", "br"}


class Check(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []
        self.code = 0
        self.row = None
        self.widths = []

    def handle_starttag(self, tag, attrs):
        if tag not in ALLOWED:
            self.problems.append("tag <%s> %s" % (tag, attrs))
        if tag in ("code", "pre"):
            self.code += 1
        if tag == "tr":
            self.row = 0
        if tag in ("td", "th") and self.row is not None:
            self.row += 1

    def handle_endtag(self, tag):
        if tag in ("code", "pre"):
            self.code -= 1
        if tag == "tr":
            self.widths.append(self.row)
            self.row = None
        if tag == "table":
            if len(set(self.widths)) > 1:
                self.problems.append("table rows of %s cells" %
                                     sorted(set(self.widths)))
            self.widths = []

    def handle_data(self, data):
        if self.code == 0 and re.search(r"@[A-Za-z0-9_-]", data):
            self.problems.append("a mention in %r" % data[:80])


def main():
    oomdoc, logs = sys.argv[1], sys.argv[2:]
    md = MarkdownIt("gfm-like")
    passed = failed = 0
    for log in logs:
        r = subprocess.run([oomdoc, "--format", "markdown", log],
                           capture_output=True, text=True, timeout=60)
        c = Check()
        c.feed(md.render(r.stdout))
        if r.returncode > 1:
            c.problems.append("exit %d" % r.returncode)
        if c.problems:
            failed += 1
            print("FAIL %s: %s" % (log, "; ".join(c.problems[:5])))
        else:
            passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())

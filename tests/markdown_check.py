#!/usr/bin/python3
"""Renders oomdoc's Markdown for every log given with two real renderers,
cmark-gfm (GitHub's, with the extensions GitHub turns on: autolink,
tagfilter, table, strikethrough; raw HTML let through, as GitHub's
sanitizer then sees it) and markdown-it-py ("gfm-like", with linkify, which
links bare and international domains and e-mail addresses), and fails on
anything that came from the input and became live:

- a link (<a>) or an image, whatever made it;
- an HTML tag other than those the renderers make from Markdown and
  oomdoc's own <details> and <summary>;
- outside code: a mention (@user), a reference (#1234, GH-12, o/r#5,
  GitLab's !12 and ~label), an emoji shortcode (:+1:), a URL, a bare
  domain or an e-mail address, which GitHub and GitLab would turn live
  after rendering;
- anywhere: a bidi or invisible format character (Unicode's Cf), which
  would hide or reorder the text;
- table rows whose cell counts differ from the header's;
- and, pasting back, a fix whose text in the JSON report is not, exactly,
  the text of one of the Markdown's code spans (taken from cmark-gfm's
  HTML, entities decoded): nothing may be inserted into what a reader
  copies (only a control character is shown as \\xNN, and a bidi or
  invisible character as its code point, U+202E); and the same for the fix's command, code and
  configuration, each a fenced block.

Run with Debian's python3 (python3-markdown-it, python3-linkify-it) and
cmark-gfm (tools/setup.sh).

Usage: markdown_check.py [--rules FILE] OOMDOC LOG...
With --rules, oomdoc also loads FILE (a rule file whose own text is
hostile).  A failure lists its first six problems, or as many as
MD_CHECK_SHOW says.
"""
import html.parser
import json
import os
import re
import subprocess
import sys
import unicodedata

from markdown_it import MarkdownIt

# How many problems a failure lists (MD_CHECK_SHOW=999 for all of them).
SHOW = int(os.environ.get("MD_CHECK_SHOW", "6"))

CMARK = ["cmark-gfm", "--unsafe", "--extension", "autolink", "--extension",
         "tagfilter", "--extension", "table", "--extension", "strikethrough"]

# What the renderers make from Markdown, and oomdoc's own folds.
ALLOWED = {"h2", "h3", "p", "strong", "em", "table", "thead", "tbody", "tr",
           "th", "td", "pre", "code", "ul", "li", "br", "details", "summary"}

# What turns live outside code on GitHub or GitLab after rendering.
LIVE = [
    ("a mention", re.compile(r"(?<![\w`])@[A-Za-z0-9_-]")),
    ("a reference", re.compile(r"(?<![\w&])#\d+\b")),
    ("a reference", re.compile(r"\bGH-\d+\b")),
    ("a reference", re.compile(r"\b[\w.-]+/[\w.-]+#\d+\b")),
    ("a merge-request reference", re.compile(r"(?<![\w])!\d+\b")),
    ("a label reference", re.compile(r"(?<![\w])~[A-Za-z]")),
    ("an emoji shortcode", re.compile(r":[a-z0-9_+-]+:")),
    ("a URL", re.compile(r"(?i)\b(?:https?|ftp|file)://|\bwww\.")),
    ("an e-mail address", re.compile(r"[\w.+-]+@[\w-]+\.\w")),
    ("a domain", re.compile(r"(?i)\b[\w-]+\.(?:com|org|net|io|example|рф)"
                            r"\b")),
]


def invisible(text):
    return [c for c in text if unicodedata.category(c) == "Cf"]


class Check(html.parser.HTMLParser):
    """Walks rendered HTML: tags, text outside code, code spans."""

    def __init__(self, name):
        super().__init__(convert_charrefs=True)
        self.name = name
        self.problems = []
        self.code = 0
        self.pre = 0
        self.row = None
        self.widths = []
        self.spans = []
        self.span = None
        self.blocks = []
        self.block = None

    def problem(self, what):
        self.problems.append("%s: %s" % (self.name, what))

    def handle_starttag(self, tag, attrs):
        if tag not in ALLOWED:
            self.problem("tag <%s> %s" % (tag, attrs))
        if tag == "pre":
            self.pre += 1
            self.block = ""
        if tag == "code":
            self.code += 1
            if self.pre == 0:
                self.span = ""
        if tag == "tr":
            self.row = 0
        if tag in ("td", "th") and self.row is not None:
            self.row += 1

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "pre":
            self.pre -= 1
            self.blocks.append(self.block)
            self.block = None
        if tag == "code":
            self.code -= 1
            if self.span is not None:
                self.spans.append(self.span)
                self.span = None
        if tag == "tr":
            self.widths.append(self.row)
            self.row = None
        if tag == "table":
            if len(set(self.widths)) > 1:
                self.problem("table rows of %s cells" %
                             sorted(set(self.widths)))
            self.widths = []

    def handle_data(self, data):
        if invisible(data):
            self.problem("invisible characters %r in %r" %
                         (invisible(data), data[:80]))
        if self.span is not None:
            self.span += data
        if self.block is not None:
            self.block += data
        if self.code > 0:
            return
        for what, rx in LIVE:
            m = rx.search(data)
            if m:
                self.problem("%s (%r) outside code in %r" %
                             (what, m.group(0), data[:80]))

    def handle_comment(self, data):
        self.problem("raw HTML omitted or a comment: %r" % data[:80])

    def handle_decl(self, decl):
        self.problem("a declaration %r" % decl[:80])


def check(html_text, name):
    c = Check(name)
    c.feed(html_text)
    c.close()
    return c


def visible(text):
    """The text as oomdoc shows it in a code span: a control character as
    \\xNN, a bidi or invisible format character as its code point
    (src/lib/escape.c)."""
    def show(c):
        cat = unicodedata.category(c)
        return ("\\x%02x" % ord(c) if cat == "Cc" else
                "U+%04X" % ord(c) if cat == "Cf" else c)
    return "".join(show(c) for c in re.sub(r"[\n\r\t]", " ", text))


def fixes(report):
    """Each fix's text, and the blocks its command and code make."""
    for ev in report.get("events", []):
        for cause in ev.get("causes", []):
            for fix in cause.get("fixes", []):
                blocks = []
                for name, value in (fix.get("env") or {}).items():
                    blocks.append("export %s=%s\n" % (name, value))
                if fix.get("code"):
                    blocks.append(fix["code"].rstrip("\n") + "\n")
                for key, value in (fix.get("config") or {}).items():
                    blocks.append("%s: %s\n" % (key, value))
                yield fix["text"], blocks


def main():
    args = sys.argv[1:]
    extra = []
    # --live: live mode's Markdown report (the fake backend) instead of the
    # diagnosis's, without the fixes' paste-back (it prints no fixes).
    live = args[:1] == ["--live"]
    if live:
        args = args[1:]
    if args[:1] == ["--rules"]:
        extra = ["--rules", args[1]]
        args = args[2:]
    oomdoc, logs = args[0], args[1:]
    mode = ["live", "--backend", "fake"] if live else []
    md = MarkdownIt("gfm-like")
    assert md.options.get("linkify"), "markdown-it without linkify"
    passed = failed = 0
    for log in logs:
        r = subprocess.run([oomdoc] + mode + ["--format", "markdown"] + extra + [log],
                           capture_output=True, text=True, timeout=60)
        problems = []
        if r.returncode > 1:
            problems.append("exit %d: %s" % (r.returncode, r.stderr[:200]))
        if invisible(r.stdout):
            problems.append("invisible characters in the Markdown source")
        g = subprocess.run(CMARK, input=r.stdout, capture_output=True,
                           text=True, timeout=60, check=True)
        gfm = check(g.stdout, "cmark-gfm")
        mit = check(md.render(r.stdout), "markdown-it")
        problems += gfm.problems + mit.problems
        j = subprocess.run([oomdoc, "--format", "json"] + extra + [log],
                           capture_output=True, text=True, timeout=60)
        if j.returncode <= 1 and not live:
            spans, blocks = set(gfm.spans), set(gfm.blocks)
            for text, code in fixes(json.loads(j.stdout)):
                if visible(text) not in spans:
                    problems.append("fix %r is no code span as it is" %
                                    text[:80])
                for b in code:
                    if b not in blocks:
                        problems.append("fix code %r is no block as it is"
                                        % b[:80])
        if problems:
            failed += 1
            print("FAIL %s: %s" % (log, "; ".join(problems[:SHOW])))
        else:
            passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())

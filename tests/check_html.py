#!/usr/bin/env python3
"""The HTML report (--format html) as a real browser reads it.

For each fixture below, oomdoc writes the HTML report, Chromium (Debian's
"chromium" package, tools/setup.sh) loads it headless with --dump-dom and
its network log on (--enable-logging=stderr --v=1, and no name resolves),
and this test parses the DOM the browser built and checks:

  * the Content-Security-Policy meta tag, and no element or attribute
    outside the report's own vocabulary: no script, no link, no image, no
    event handler, no URL in any attribute (so nothing from the log formed
    an element or an attribute), and no bidi or invisible format character
    in the text (they are written out, as in the text report);
  * the memory account's SVG bar has one part per part of the JSON
    report's account that holds bytes; the readings chart has one point
    per reading of the series the text report describes; the per-rank
    chart one group per per_rank row and one bar per row with the figure;
  * the causes, in the JSON report's order;
  * every size the page shows is one the text report prints;
  * the browser requested no URL for the page (a control page with an
    external image shows that the log sees such a request).

Then the page of every fixtures/*/*.log, as oomdoc writes it, is read
with Python's HTML parser for the first of these checks: the policy, and
no element, attribute, URL or invisible character that is not the
report's own.

Without Chromium, or when it cannot run here, the test says exactly why
and exits 77 (skipped); it never passes without a browser.

Usage: check_html.py OOMDOC_BIN SOURCE_DIR
"""
import concurrent.futures
import glob
import html.parser
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

FIXTURES = [
    # (fixture, what it must show)
    ("fixtures/sample/job.log", {"account"}),
    ("fixtures/scenarios/growth-detectron2.log", {"account", "readings"}),
    # nvidia-smi dmon rows of two GPUs: the chart is the event's GPU's series only.
    ("fixtures/scenarios/growth-dmon.log", {"account", "readings"}),
    ("fixtures/stacks/ranks-different-figures-childfailed.log",
     {"per_rank"}),
    ("fixtures/hostile/injection.log", set()),
    ("fixtures/hostile/backticks.log", set()),
    ("fixtures/hostile/link-traceback.log", set()),
    ("fixtures/hostile/refs-mentions.log", set()),
    # A file name that is a link, a mention and an international domain.
    ("fixtures/hostile/www.evil.com@admin #1234 GH-12 o!12 ~bug :+1: "
     "evil.\u0440\u0444.log", set()),
    ("fixtures/scenarios/rank-imbalance-megatron.log", {"readings"}),
]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

# The report's own vocabulary (Chromium adds tbody to tables).
TAGS = {
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3",
    "section", "dl", "dt", "dd", "span", "pre", "code", "table", "tbody",
    "tr", "td", "th", "figure", "figcaption", "svg", "rect", "line",
    "polyline", "circle", "text", "g", "p", "ol", "ul", "li", "strong",
    "footer",
}
ATTRS = {
    "class", "id", "lang", "charset", "http-equiv", "content", "name",
    "role", "width", "height", "viewbox", "xmlns", "x", "y", "x1", "y1",
    "x2", "y2", "cx", "cy", "r", "points", "text-anchor", "fill", "stroke",
}

# The hosts Chromium itself asks on start (updates, time, accounts,
# dictionaries), whatever the page: requests to them are not the page's.
BROWSER_HOSTS = ("clients2.google.com", "update.googleapis.com",
                 "accounts.google.com", "redirector.gvt1.com",
                 "safebrowsing.googleapis.com", "www.google.com",
                 "optimizationguide-pa.googleapis.com")

SIZE = re.compile(r"\d+\.\d\d [KMG]iB|\b\d+ bytes\b")


def invisible(cp):
    """escape.c's od_escape_invisible."""
    return (cp in (0xad, 0x61c, 0x180e, 0xfeff) or 0x200b <= cp <= 0x200f
            or 0x202a <= cp <= 0x202e or 0x2060 <= cp <= 0x2064
            or 0x2066 <= cp <= 0x206f or 0xfff9 <= cp <= 0xfffb
            or 0xe0000 <= cp <= 0xe007f)


def shown(text):
    """text as the text report shows it (escape.c), for a <pre>: a
    backslash doubled, controls as \\xNN, invisible characters as
    \\uXXXX; None when it holds U+FFFD (an invalid byte in the log, which
    the JSON report does not keep)."""
    if "\ufffd" in text:
        return None
    out = []
    for ch in text:
        cp = ord(ch)
        if ch == "\n":
            out.append(ch)
        elif ch == "\t":
            out.append(" ")
        elif ch == "\\":
            out.append("\\\\")
        elif cp < 0x20 or cp == 0x7f or 0x80 <= cp < 0xa0:
            out.append("\\x%02x" % cp)
        elif invisible(cp):
            out.append(("\\U%08x" if cp > 0xffff else "\\u%04x") % cp)
        else:
            out.append(ch)
    return "".join(out)


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], []

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def walk(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.walk()

    def find(self, tag=None, cls=None):
        return [n for n in self.walk() if (tag is None or n.tag == tag)
                and (cls is None or cls in n.classes())]

    def strings(self):
        for c in self.children:
            if isinstance(c, str):
                yield c
            else:
                yield from c.strings()

    def content(self):
        return "".join(c if isinstance(c, str) else c.content()
                       for c in self.children)


VOID = {"meta", "br", "img", "link", "input", "hr", "base", "source"}


class Tree(html.parser.HTMLParser):
    """The DOM as Chromium serialised it, as a tree."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", [], None)
        self.cur = self.root
        self.tags = []

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.cur)
        self.tags.append(node)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        node = Node(tag, attrs, self.cur)
        self.tags.append(node)
        self.cur.children.append(node)

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def browser_flags(profile):
    return ["--headless", "--disable-gpu", "--no-sandbox",
            "--enable-logging=stderr", "--v=1",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run", "--disable-default-apps",
            "--disable-extensions", "--user-data-dir=" + profile]


def render(chromium, profile, path):
    """The DOM Chromium built from path, and the URLs it requested."""
    r = subprocess.run([chromium] + browser_flags(profile) +
                       ["--dump-dom", pathlib.Path(path).as_uri()],
                       capture_output=True, text=True, timeout=60)
    urls = [l.split("NotifyBeforeURLRequest: ", 1)[1].strip()
            for l in r.stderr.splitlines()
            if "NotifyBeforeURLRequest: " in l]
    return r, urls


def page_urls(urls):
    out = []
    for u in urls:
        if u.startswith("file://"):
            continue
        host = re.sub(r"^[a-z]+://([^/:?#]*).*", r"\1", u)
        if host in BROWSER_HOSTS:
            continue
        out.append(u)
    return out


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def check_markup(name, tree, fail):
    """What must hold of any page: the policy, and no element, attribute,
    URL or invisible character that is not the report's own."""
    root = tree.root
    metas = [m for m in root.find("meta")
             if (m.attrs.get("http-equiv") or "").lower() ==
             "content-security-policy"]
    if len(metas) != 1 or metas[0].attrs.get("content") != CSP:
        fail(name, "no Content-Security-Policy meta tag of %r" % CSP)
    for n in tree.tags:
        if n.tag not in TAGS:
            fail(name, "element <%s> is not the report's" % n.tag)
        for k, v in n.attrs.items():
            if k not in ATTRS and not k.startswith("data-"):
                fail(name, "attribute %s=%r on <%s> is not the report's"
                     % (k, v, n.tag))
            v = v or ""
            if "://" in v and not (k == "xmlns" and
                                   v == "http://www.w3.org/2000/svg"):
                fail(name, "URL in attribute %s=%r" % (k, v))
    for s in root.find("style"):
        if "url(" in s.content() or "@import" in s.content():
            fail(name, "the style loads something")
    alltext = root.content()
    bad = sorted({"U+%04X" % ord(ch) for ch in alltext if invisible(ord(ch))})
    if bad:
        fail(name, "invisible or bidi characters in the text: %s"
             % ", ".join(bad))


def check_page(name, tree, doc, text, want, fail):
    """The checks of one report's DOM against its JSON and text reports."""
    root = tree.root
    check_markup(name, tree, fail)
    body = root.find("body")
    # Every size the page prints, the text report prints (each text node
    # on its own: table cells are not separated by spaces in the DOM).
    text_sizes = set(SIZE.findall(text))
    page_sizes = {sz for t in (body[0].strings() if body else [])
                  for sz in SIZE.findall(t)}
    for sz in sorted(page_sizes - text_sizes):
        fail(name, "size %r is not in the text report" % sz)

    # The charts this fixture is here for.
    for chart, cls in (("account", "account"), ("readings", "readings"),
                       ("per_rank", "per-rank")):
        if chart in want and not root.find("svg", cls):
            fail(name, "no %s chart, which this fixture has" % chart)
    sections = root.find("section", "event")
    events = doc.get("events", [])
    if len(sections) != len(events):
        fail(name, "%d event sections for %d events" %
             (len(sections), len(events)))
        return
    texts = re.split(r"(?m)^#\d+  ", text)[1:]
    for i, (sec, ev) in enumerate(zip(sections, events)):
        where = "%s event %d" % (name, i + 1)
        # The message, as text: whatever tags or references it holds
        # are shown, not interpreted.
        pre = sec.find("pre", "message")
        want_msg = shown(ev.get("message") or "")
        got = pre[0].content() if pre else None
        if got is not None and ev.get("message_truncated"):
            got = got[:-len(" [...]")] if got.endswith(" [...]") else got
        if want_msg is not None and got != want_msg:
            fail(where, "the message reads %r, not %r" % (got, want_msg))
        # The causes, best first.
        rules = [li.attrs.get("data-rule") for li in sec.find("li", "cause")]
        if rules != [c["rule"] for c in ev.get("causes", [])]:
            fail(where, "causes %r, not the JSON report's %r" %
                 (rules, [c["rule"] for c in ev.get("causes", [])]))
        for li, c in zip(sec.find("li", "cause"), ev.get("causes", [])):
            for fx in c.get("fixes", []):
                for k, v in (fx.get("env") or {}).items():
                    line = "export %s=%s" % (k, v)
                    codes = [p.content() for p in li.find("pre", "env")]
                    if line not in codes:
                        fail(where, "no <pre><code> of %r" % line)
        # The account.
        mem = ev.get("memory") or {}
        acct = mem.get("account") or []
        names = {p["part"] for p in acct}
        svg = sec.find("svg", "account")
        if acct and ({"allocated", "free"} & names):
            total = mem.get("total_bytes") or 0
            parts = [p for p in acct if (p.get("bytes") or 0) > 0]
            known = sum(p["bytes"] for p in parts)
            if "unaccounted" not in names and total > known:
                parts.append({"part": "unaccounted"})
            drawn = svg[0].find("rect", "part") if svg else []
            if [r.attrs.get("data-part") for r in drawn] and \
                    sorted(r.attrs.get("data-part") for r in drawn) != \
                    sorted(p["part"] for p in parts):
                fail(where, "account parts %r, not %r" % (
                    [r.attrs.get("data-part") for r in drawn],
                    [p["part"] for p in parts]))
            if len(drawn) != len(parts) or len(drawn) < 2:
                fail(where, "account bar of %d parts, not %d" %
                     (len(drawn), len(parts)))
            legend = sec.find("tr", "legend-row")
            hows = {r.attrs.get("data-part"): r.content() for r in legend}
            for p in acct:
                row = hows.get(p["part"], "")
                how = "derived" if p.get("derived") else "printed"
                if p.get("bytes") is not None and not row.endswith(how):
                    fail(where, "legend of %s does not say %s" %
                         (p["part"], how))
        elif svg:
            fail(where, "an account bar without an account")
        # The readings: as many points as the text report's series.
        m = re.search(r"\((\d+) readings? of\s", texts[i] if i < len(texts)
                      else "")
        svg = sec.find("svg", "readings")
        if m:
            pts = svg[0].find("circle", "reading") if svg else []
            if len(pts) != int(m.group(1)):
                fail(where, "readings chart of %d points, the text report "
                     "has %s" % (len(pts), m.group(1)))
            if svg and not svg[0].find("polyline", "series"):
                fail(where, "readings chart without its line")
            if svg and len(svg[0].find("line", "axis")) != 2:
                fail(where, "readings chart without its two axes")
        elif svg:
            fail(where, "a readings chart without readings")
        # The ranks.
        rows = ev.get("per_rank") or []
        svg = sec.find("svg", "per-rank")
        if rows:
            if not svg:
                fail(where, "no per-rank chart for %d rows" % len(rows))
            else:
                fig = svg[0].attrs.get("data-figure")
                groups = svg[0].find("g", "rank")
                bars = svg[0].find("rect", "rank-bar")
                with_fig = [r for r in rows
                            if r.get(fig + "_bytes") is not None]
                if [g.attrs.get("data-rank") for g in groups] != \
                        [str(r["rank"]) for r in rows]:
                    fail(where, "per-rank groups %r, not the rows' ranks"
                         % [g.attrs.get("data-rank") for g in groups])
                if len(bars) != len(with_fig) or not bars:
                    fail(where, "%d rank bars for %d rows with %s" %
                         (len(bars), len(with_fig), fig))
        elif svg:
            fail(where, "a per-rank chart without rows")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    oomdoc, src = os.path.abspath(sys.argv[1]), sys.argv[2]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("SKIP: no chromium on PATH (Debian package chromium; "
              "tools/setup.sh installs it)")
        return SKIP
    failures = []

    def fail(where, what):
        failures.append("%s: %s" % (where, what))

    with tempfile.TemporaryDirectory(prefix="oomdoc-html-") as tmp:
        profile = os.path.join(tmp, "profile")
        # The control page: an external image and style sheet, which the
        # network log must show, or it could not show the report's.
        ctl = os.path.join(tmp, "control.html")
        with open(ctl, "w") as f:
            f.write('<!DOCTYPE html><html><body><p>control</p>'
                    '<img src="http://canary.invalid/x.png">'
                    '<link rel="stylesheet" href="https://canary2.invalid/'
                    'a.css"></body></html>\n')
        try:
            r, urls = render(chromium, profile, ctl)
        except (OSError, subprocess.TimeoutExpired) as e:
            print("SKIP: chromium could not run: %s" % e)
            return SKIP
        if r.returncode != 0 or "control" not in r.stdout:
            tail = "\n".join(r.stderr.splitlines()[-5:])
            print("SKIP: chromium could not render a page here (exit %d):"
                  "\n%s" % (r.returncode, tail))
            return SKIP
        seen = page_urls(urls)
        if sorted(seen) != ["http://canary.invalid/x.png",
                            "https://canary2.invalid/a.css"]:
            fail("control page", "the network log showed %r, not the "
                 "control page's two requests: it cannot show the "
                 "report's" % seen)
        for fixture, want in FIXTURES:
            path = os.path.join(src, fixture)
            page = run([oomdoc, "-f", "html", path])
            if page.returncode != 0:
                fail(fixture, "oomdoc -f html exited %d: %s" %
                     (page.returncode, page.stderr.strip()))
                continue
            doc = json.loads(run([oomdoc, "-f", "json", path]).stdout)
            text = run([oomdoc, path]).stdout
            out = os.path.join(tmp, os.path.basename(fixture) + ".html")
            with open(out, "w") as f:
                f.write(page.stdout)
            if "<script" in page.stdout.lower():
                fail(fixture, "the page has a <script")
            r, urls = render(chromium, profile, out)
            if r.returncode != 0 or "</html>" not in r.stdout:
                fail(fixture, "chromium exited %d without a DOM" %
                     r.returncode)
                continue
            for u in page_urls(urls):
                fail(fixture, "the browser requested %s" % u)
            tree = Tree()
            tree.feed(r.stdout)
            tree.close()
            check_page(fixture, tree, doc, text, want, fail)
            print("ok: %s (%d events)" % (fixture, len(doc.get("events",
                                                               []))))
    # Every other fixture's page as written (Python's HTML parser, not the
    # browser): the markup is the report's own.
    logs = sorted(glob.glob(os.path.join(src, "fixtures", "*", "*.log")))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        pages = pool.map(lambda p: (p, run([oomdoc, "-f", "html", p])), logs)
        for path, page in pages:
            if page.returncode not in (0, 1):
                fail(path, "oomdoc -f html exited %d" % page.returncode)
                continue
            tree = Tree()
            tree.feed(page.stdout)
            tree.close()
            check_markup(os.path.relpath(path, src), tree, fail)
    print("ok: the markup of %d fixtures' pages" % len(logs))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

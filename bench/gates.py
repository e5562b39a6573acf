#!/usr/bin/env python3
"""bench/gates.py: the prefilter's anchors, and a small set of fragments
("gates") that every anchor contains, chosen by how rarely they occur.

    gates.py --oomdoc build/bin/oomdoc --pfcost /tmp/pfcost \\
        --corpus /tmp/ord20.log --corpus /tmp/real.log:3 \\
        --list-out /tmp/prefilter.lst -o /tmp/gates.lst [--lit-cost 8000]
        [--min-len 3]

The anchors come from the database oomdoc keeps on disk (src/lib/scan_cache.c:
a cache file holds three length-prefixed parts, what made it, the anchors'
list, the database; the list is, for each anchor in id order, 'i' for a
caseless one or 's', its text and a NUL): oomdoc runs once on /dev/null
with XDG_CACHE_HOME in a new directory, and the list is read from the file
it writes.  --list-out writes it in bench/pfcost.c's LIST format.

The candidates are the substrings of the anchors, --min-len to 12 bytes
(a caseless anchor's are caseless); `pfcost count` counts each one's
matches in each corpus (FILE or FILE:WEIGHT).  A gate covers an anchor
that holds it (with case, or without when the gate is caseless; a
caseless anchor only by a caseless gate).  The cover is greedy: the
fragment that covers the most anchors not yet covered for its weight,
--lit-cost (what one more literal costs the first stage, in matches) plus
its weighted matches, until every anchor is covered.  It prints the
number of gates, their matches in each corpus, and the gates.
"""
import argparse
import glob
import os
import struct
import subprocess
import sys
import tempfile


def read_list(oomdoc):
    """The prefilter's anchors [(caseless, bytes)], from oomdoc's cache."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, XDG_CACHE_HOME=d)
        env.pop("OOMDOC_NO_CACHE", None)
        subprocess.run([oomdoc, "/dev/null"], env=env, check=False,
                       stdout=subprocess.DEVNULL)
        files = glob.glob(os.path.join(d, "oomdoc", "*"))
        if len(files) != 1:
            sys.exit("gates.py: oomdoc wrote no cache file")
        data = open(files[0], "rb").read()
    parts, at = [], 0
    for _ in range(3):
        (n,) = struct.unpack("=Q", data[at:at + 8])
        parts.append(data[at + 8:at + 8 + n])
        at += 8 + n
    items, raw, i = [], parts[1], 0
    while i < len(raw):
        j = raw.index(b"\0", i + 1)
        items.append((raw[i:i + 1] == b"i", raw[i + 1:j]))
        i = j + 1
    return items


def write_list(path, items):
    with open(path, "wb") as f:
        for caseless, text in items:
            f.write((b"i" if caseless else b"s") +
                    text.replace(b"\\", b"\\\\") + b"\n")


def covers(gate, anchor):
    gi, gt = gate
    ai, at = anchor
    if not gi:
        return not ai and gt in at
    return gt.lower() in at.lower()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oomdoc", required=True)
    ap.add_argument("--pfcost", required=True)
    ap.add_argument("--corpus", action="append", required=True)
    ap.add_argument("--lit-cost", type=float, default=8000)
    ap.add_argument("--min-len", type=int, default=3)
    ap.add_argument("--list-out")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()

    anchors = read_list(a.oomdoc)
    if a.list_out:
        write_list(a.list_out, anchors)
    cands = set()
    for caseless, text in anchors:
        for n in range(a.min_len, 13):
            for i in range(len(text) - n + 1):
                f = text[i:i + n]
                cands.add((caseless, f.lower() if caseless else f))
    cands = sorted(cands)
    weight = [0.0] * len(cands)
    counts = []
    with tempfile.TemporaryDirectory() as d:
        cl = os.path.join(d, "cand.lst")
        write_list(cl, cands)
        for spec in a.corpus:
            path, _, w = spec.partition(":")
            out = subprocess.run([a.pfcost, "count", cl, path], check=True,
                                 capture_output=True, text=True).stdout
            c = [int(x) for x in out.split()]
            counts.append((os.path.basename(path), c))
            for k, v in enumerate(c):
                weight[k] += v * (float(w) if w else 1.0)
    cover = [{j for j, an in enumerate(anchors) if covers(g, an)}
             for g in cands]
    left, chosen = set(range(len(anchors))), []
    while left:
        best, score = None, -1.0
        for k, c in enumerate(cover):
            n = len(c & left)
            if n and n / (a.lit_cost + weight[k]) > score:
                best, score = k, n / (a.lit_cost + weight[k])
        chosen.append(best)
        left -= cover[best]
    write_list(a.out, [cands[k] for k in chosen])
    print("anchors %d, gates %d" % (len(anchors), len(chosen)))
    for name, c in counts:
        print("  gate matches in %s: %d" % (name, sum(c[k] for k in chosen)))
    for k in sorted(chosen, key=lambda k: -weight[k]):
        print("  %s %-16r covers %3d, matches %s" % (
            "i" if cands[k][0] else "s", cands[k][1].decode("latin-1"),
            len(cover[k]), " ".join(str(c[k]) for _, c in counts)))


if __name__ == "__main__":
    main()

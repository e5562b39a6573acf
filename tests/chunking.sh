#!/usr/bin/env bash
# chunking.sh OOMDOC: the same events however the bytes arrive.
#
# Every fixture log (fixtures/**/*.log), the concatenation of them all, that
# concatenation five times over (more than the scanner's 1 MiB buffer, so
# that it is moved to make room), the hard-wrapped fixtures each followed
# by more than the scanner's lookahead, and gzip and zstd copies of some, are
# read once as files and once through named pipes that tests/chunk_feed.py
# writes in small chunks, each chunk in a read of its own (by construction:
# it waits for the pipe to be empty before the next).  The chunk sizes are
# deterministic: 7, 997 and 4097 bytes, and a fixed-seed pseudo-random
# sequence between 1 and 16384 bytes, taken in turn by the fixtures (1
# byte for the structured and hostile ones, whose first bytes decide how
# a line is read), and the large inputs read in several.  Both runs take every input at once,
# under the same relative names (the files from a tree of links, the pipes
# from a tree of FIFOs), so that the JSON reports must be byte for byte the
# same, and the exit statuses too.  The pipes' run has a scan buffer of
# another size (OOMDOC_SCAN_BUFFER, a setting for the tests only: 786433
# bytes, not the 1 MiB of the files' run), so that the buffer is full at
# other places too.
#
# Cost: two oomdoc runs over about 6 MB, and the writer's chunks (about
# 90000, a third of them 1 byte): about 6 s of CPU (user+sys).
set -u
OOMDOC=$(cd "$(dirname "${1:?usage: chunking.sh OOMDOC}")" && pwd)/$(basename "$1")
feed=$(cd "$(dirname "$0")" && pwd)/chunk_feed.py
T=$(mktemp -d)
[ -n "${KEEP:-}" ] && T=$KEEP && rm -rf "$T" && mkdir -p "$T"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
fail=0
mkdir -p "$T/f/gen" "$T/p/gen"

# The generated inputs: the concatenation (as tests/install.sh makes it),
# five of it, and compressed copies.
cat fixtures/*/*.log >"$T/f/gen/all.log"
for k in 1 2 3 4 5; do cat "$T/f/gen/all.log"; done >"$T/f/gen/all5.log"
gzip -c "$T/f/gen/all.log" >"$T/f/gen/all.log.gz"
zstd -q -c "$T/f/gen/all.log" >"$T/f/gen/all.log.zst"
# Several gzip members and zstd frames, one a fixture, and UTF-16 with its
# byte order mark (as PowerShell's '>' writes it): their boundaries and
# the mark's two bytes cut by the chunks.
for f in fixtures/structured/*.log; do gzip -c "$f"; done >"$T/f/gen/structured.log.gz"
for f in fixtures/pytorch/*.log; do zstd -q -c "$f"; done >"$T/f/gen/pytorch.log.zst"
python3 -c 'import sys
sys.stdout.buffer.write(open(sys.argv[1], "rb").read().decode().encode("utf-16"))' \
    fixtures/sample/job.log >"$T/f/gen/utf16.log"
# The hard-wrapped fixtures, each followed by more than the scanner's
# lookahead (32 KiB) of other lines, so that their lines are scanned
# while the input is still coming, wherever a chunk ends.
for f in fixtures/*/*wrapped*.log; do
	cat "$f"
	for k in $(seq 2000); do echo "step $k loss 0.5"; done
done >"$T/f/gen/wrapped.log"

# names: every input, by its name relative to $T/f (and $T/p); manifest:
# each pipe's chunking.
names=()
: >"$T/manifest"
add() {   # add SPEC NAME SOURCE
	local spec=$1 name=$2 src=$3
	mkdir -p "$T/p/$(dirname "$name")" "$T/f/$(dirname "$name")"
	mkfifo "$T/p/$name.$spec"
	# The file's link under the pipe's name too: one name in both runs.
	ln -s "$src" "$T/f/$name.$spec"
	names+=("$name.$spec")
	printf '%s\t%s\t%s\n' "$spec" "$src" "$T/p/$name.$spec" >>"$T/manifest"
}
i=0
while IFS= read -r -d '' f; do
	specs=(7 4097 "rand:$i" 997)
	spec=${specs[$((i % 4))]}
	# Byte by byte where a record's or an encoding's first bytes decide
	# how the rest is read.
	case $f in
	fixtures/structured/*|fixtures/hostile/*) spec=1 ;;
	esac
	add "$spec" "$f" "$PWD/$f"
	i=$((i + 1))
done < <(find fixtures -name '*.log' -type f -print0 | sort -z)
[ "$i" -ge 200 ] || { echo "FAIL: only $i fixture logs found"; fail=1; }
for spec in 997 4097 rand:1 rand:2 rand:3; do
	add "$spec" gen/all.log "$T/f/gen/all.log"
done
for spec in 13 61 rand:7; do
	add "$spec" gen/wrapped.log "$T/f/gen/wrapped.log"
done
for spec in rand:4 65537; do
	add "$spec" gen/all5.log "$T/f/gen/all5.log"
done
for g in all.log.gz all.log.zst; do
	for spec in 7 rand:5; do
		add "$spec" "gen/$g" "$T/f/gen/$g"
	done
done
add 1 gen/utf16.log "$T/f/gen/utf16.log"
add 3 gen/structured.log.gz "$T/f/gen/structured.log.gz"
add rand:6 gen/pytorch.log.zst "$T/f/gen/pytorch.log.zst"

(cd "$T/f" && "$OOMDOC" --format json -- "${names[@]}" >"$T/want" 2>"$T/want.err")
want_rc=$?
(cd "$T/p" && OOMDOC_SCAN_BUFFER=786433 "$OOMDOC" --format json -- "${names[@]}" \
    >"$T/got" 2>"$T/got.err") &
pid=$!
python3 "$feed" "$T/manifest" 2>"$T/feed.err" || {
	echo "FAIL: chunk_feed.py: $(tail -3 "$T/feed.err")"; fail=1; }
wait "$pid"
got_rc=$?
pid=
echo "$(cat "$T/feed.err") into ${#names[@]} pipes"

if [ "$want_rc" != "$got_rc" ]; then
	echo "FAIL: status $got_rc through the pipes, $want_rc from the files"
	fail=1
fi
if [ -s "$T/got.err" ] || [ -s "$T/want.err" ]; then
	echo "FAIL: standard error (pipes, then files):"
	head -3 "$T/got.err" "$T/want.err"
	fail=1
fi
python3 - "$T/want" "$T/got" <<'EOF' || fail=1
import json, sys
want = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))
if not want["events"]:
    print("FAIL: no event in the files' report")
    sys.exit(1)
bad = 0
for key in ("inputs", "summary"):
    if want[key] != got[key]:
        print("FAIL: the reports' %s differ" % key)
        bad = 1
# An event found in several inputs is one event that lists them: say
# which input's events differ.
def per_input(report):
    out = {}
    for e in report["events"]:
        for i in e.get("inputs", []):
            out.setdefault(i["name"], []).append(
                (i["line"], e["kind"], e.get("message", "")[:100]))
    return out
pw, pg = per_input(want), per_input(got)
for name in sorted(set(pw) | set(pg)):
    w, g = sorted(pw.get(name, [])), sorted(pg.get(name, []))
    for e in w:
        if e not in g:
            print("FAIL: %s: lost through the pipe: line %s: %s" % (
                name, e[0], e[2]))
            bad = 1
    for e in g:
        if e not in w:
            print("FAIL: %s: only through the pipe: line %s: %s" % (
                name, e[0], e[2]))
            bad = 1
if want != got and not bad:
    print("FAIL: the reports differ (in a field of an event)")
    bad = 1
print("%d events, %d inputs" % (len(want["events"]), len(want["inputs"])))
sys.exit(bad)
EOF
if [ "$fail" -eq 0 ]; then echo "PASS chunking"; else echo "FAIL chunking"; fi
exit "$fail"

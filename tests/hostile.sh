#!/usr/bin/env bash
# Hostile inputs: each must end within 20 seconds of CPU time (in a release
# build) with a documented status (0 to 3) and at most two lines on
# standard error, never a crash, a hang or a raw escape sequence on
# standard output.
#
# Usage: tests/hostile.sh OOMDOC [LIMIT]   (from the repository root)
# LIMIT is the limit in seconds of CPU time, 20 unless given: the sanitizer
# build, several times slower by design, runs with a larger one.  The
# limit is of CPU time (ulimit -S -t: SIGXCPU ends the run), not of
# wall-clock time, so that a loaded machine does not fail a run that does
# not crawl; a hang, which spends no CPU time, is stopped by a wall-clock
# limit ten times longer.
set -u
oomdoc=$1
limit=${2:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
MSG='RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 4.00 GiB total capacity; 1.00 GiB already allocated; 0 bytes free; 1.00 GiB reserved in total by PyTorch)'

# run NAME WANT-STATUS PATTERN-IN-STDOUT-OR-STDERR -- ARGS...
run() {
	local name=$1 want=$2 pat=$3 rc lines
	shift 4
	local t0=$SECONDS
	(ulimit -S -t "$limit" && exec timeout "$((limit * 10))" "$oomdoc" "$@") \
	    >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $((SECONDS - t0)) -gt 3 ] && echo "slow: $name $((SECONDS - t0)) s"
	lines=$(wc -l <"$tmp/err")
	if [ $rc -ne "$want" ] || [ "$lines" -gt 2 ] ||
	    grep -q $'\033' "$tmp/out" ||
	    { [ -n "$pat" ] && ! grep -q -e "$pat" "$tmp/out" "$tmp/err"; }; then
		case $rc in
		124) echo "FAIL $name: no end within $((limit * 10)) s (a hang)" ;;
		152) echo "FAIL $name: more than $limit s of CPU time" ;;
		esac
		echo "FAIL $name: exit $rc (want $want), $lines stderr lines"
		head -3 "$tmp/err"
		fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
}

# A 300 MB line with an OOM at its end: found, in bounded memory.
{ head -c 300000000 /dev/zero | tr '\0' 'x'; printf ' %s\n' "$MSG"; } >"$tmp/long.log"
run "300 MB line" 0 '"requested_bytes": 2097152' -- -f json "$tmp/long.log"
rm -f "$tmp/long.log"

# 300 000 OOM lines, all different: 500 kept (OD_EVENTS_MAX, distinct
# events per run, src/lib/core.h), the other 299 500 counted, one line on
# standard error says so.  A traceback's header comes first, so that each
# event kept reads back to it (up to 256 KiB: src/lib/scan.c).
python3 -c 'import sys
m = sys.argv[1]
sys.stdout.write("Traceback (most recent call last):\n" + "".join(m.replace("2.00 MiB", "%d.00 MiB" % (i + 2)) + "\n"
                         for i in range(300000)))' "$MSG" >"$tmp/many.log"
run "300 000 OOM lines" 0 'more out-of-memory events were not kept' -- -f json "$tmp/many.log"
grep -q '"events_omitted": 299500' "$tmp/out" && pass=$((pass + 1)) ||
	{ echo "FAIL 300 000 OOM lines: events_omitted is not 299500"; fail=$((fail + 1)); }
rm -f "$tmp/many.log"

# The same OOM 300 000 times: one event.
yes "$MSG" | head -n 300000 >"$tmp/same.log"
run "one OOM 300 000 times" 0 '"occurrences": 300000' -- -f json "$tmp/same.log"

# Numbers that overflow: the figure is unknown, not wrapped.
printf '%s\n' "${MSG/2.00 MiB/99999999999999999999 GiB}" >"$tmp/overflow.log"
run "overflowing number" 0 '"requested_bytes": null' -- -f json "$tmp/overflow.log"

# Truncated compressed input: what was read is reported, with an error.
printf '%s\n' "$MSG" "$MSG" | zstd -q -c >"$tmp/full.zst"
head -c $(( $(stat -c %s "$tmp/full.zst") - 6 )) "$tmp/full.zst" >"$tmp/cut.zst"
run "truncated zstd" 2 'truncated zstd' -- "$tmp/cut.zst"
printf '%s\n' "$MSG" | gzip -c | head -c 40 >"$tmp/cut.gz"
run "truncated gzip" 2 'truncated gzip' -- "$tmp/cut.gz"
printf '\x1f\x8b garbage that is not deflate' >"$tmp/bad.gz"
run "corrupt gzip" 2 'gzip' -- "$tmp/bad.gz"

# Binary garbage, NUL bytes, invalid UTF-8, escape sequences.
head -c 5000000 /dev/urandom >"$tmp/random.bin"
run "random bytes" 1 '' -- "$tmp/random.bin"
# The NVML assertion's pattern lets any byte through between its words.
# Whole escape sequences (CSI, OSC up to ST or BEL) are left out of what is
# read; an OSC that no terminator ends is not one, so its ESC reaches the
# reported message and must come out escaped.
printf '\0\0\xff\xfe\x1b[31m RuntimeError: NVML_SUCCESS == r \x1b]8;;http://x\x1b\\\x1b[2J\x1b]0;t\x07 \x1b]0;unterminated INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":950 \x1b[0m\n' >"$tmp/esc.log"
run "escape sequences, text" 0 'r  \\x1b]0;unterminated INTERNAL' -- "$tmp/esc.log"
run "escape sequences, markdown" 0 'x1b]0;unterminated' -- -f markdown "$tmp/esc.log"
run "escape sequences, json" 0 'r  \\u001b]0;unterminated INTERNAL' -- -f json "$tmp/esc.log"
# Escape sequences by the thousand around a message whose every figure is
# coloured: more than one joined text leaves out (LN_GAPS_MAX); the message
# is read all the same, in time.
python3 -c 'import re, sys
m = re.sub(r"(\d+\.\d+ \w+|\d+ bytes)", "\x1b[1;33m\\1\x1b[0m", sys.argv[1])
sys.stdout.write("\x1b[1m" * 20000 + m + "\x1b[0m" * 20000 + "\n")' "$MSG" >"$tmp/escapes.log"
run "20 000 escape sequences" 0 '"requested_bytes": 2097152' -- -f json "$tmp/escapes.log"
grep -q '"reserved_bytes": 1073741824' "$tmp/out" && pass=$((pass + 1)) ||
	{ echo "FAIL 20 000 escape sequences: a figure lost"; fail=$((fail + 1)); }
python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$tmp/out" &&
	pass=$((pass + 1)) || { echo "FAIL json is not valid UTF-8 JSON"; fail=$((fail + 1)); }
run "hostile fixture" 0 '' -- fixtures/hostile/injection.log

# Empty input, a directory, a missing file, an unknown option.
: >"$tmp/empty"
run "empty" 1 '' -- "$tmp/empty"
run "directory" 2 'is a directory' -- "$tmp"
run "missing" 2 'No such file' -- "$tmp/nope"
run "unknown option" 2 'unknown option' -- --bogus
run "stdin closed" 1 '' -- - </dev/null

# Broken rule files: refused with file:line, status 3.
printf 'rules: [\n  - {id: x, title: "unterminated\n' >"$tmp/notyaml.yaml"
run "rule file that is not YAML" 3 'notyaml.yaml:[0-9]*:' -- --rules "$tmp/notyaml.yaml" "$tmp/empty"
run "YAML alias bomb" 3 'alias-bomb.yaml:2:' -- --rules tests/rules/bad/alias-bomb.yaml "$tmp/empty"
python3 -c "print('rules: ' + '['*100000 + ']'*100000)" >"$tmp/deep.yaml"
run "deeply nested YAML" 3 'deep.yaml:1:' -- --rules "$tmp/deep.yaml" "$tmp/empty"
head -c 2000000 /dev/urandom >"$tmp/huge.yaml"
run "rule file of random bytes" 3 'huge.yaml' -- --rules "$tmp/huge.yaml" "$tmp/empty"

# Bidi overrides, zero-width and tag characters and a literal backslash in
# log text: the text report shows them as \uXXXX and doubles the
# backslash (so the log's "\x1b" reads "\\x1b", never as an escaped ESC);
# the JSON report escapes them too, with the same value read back.
printf 'RuntimeError: NVML_SUCCESS == r \xe2\x80\xaeevil\xe2\x80\x8b\xf3\xa0\x80\x81 \\x1b INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":950\n' >"$tmp/bidi.log"
run "bidi and backslash, text" 0 'r \\u202eevil\\u200b\\U000e0001 \\\\x1b INTERNAL' -- "$tmp/bidi.log"
grep -q -e $'\u202e' -e $'\u200b' "$tmp/out" &&
	{ echo "FAIL bidi and backslash, text: raw format characters"; fail=$((fail + 1)); } ||
	pass=$((pass + 1))
run "bidi and backslash, json" 0 'r \\u202eevil\\u200b\\udb40\\udc01 ' -- -f json "$tmp/bidi.log"
python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["events"][0]["message"]
assert "r \u202eevil\u200b\U000e0001 \\x1b INTERNAL" in m, m' "$tmp/out" &&
	pass=$((pass + 1)) || { echo "FAIL bidi and backslash, json: value changed"; fail=$((fail + 1)); }

# The cap of 500 events keeps the most severe: after 600 distinct allocator
# warnings (not fatal), the one fatal OOM at line 601 is kept, in log
# order at the end, and a warning makes room for it (101 not kept).
awk 'BEGIN { for (i = 1; i <= 600; i++) printf "[W1107 10:22:33.123456 1234 CUDACachingAllocator.cpp:3933] memory allocation failed with OOM on device 0 while trying to allocate %d bytes (free: 191430656, total: 42405855232)\n", 580911104 + i * 512 }' >"$tmp/warnings.log"
printf '%s\n' "$MSG" >>"$tmp/warnings.log"
run "500-event cap, fatal after 600 warnings" 0 '"events_omitted": 101' -- -f json "$tmp/warnings.log"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
ev = d["events"]
assert len(ev) == 500, len(ev)
assert [e["line"] for e in ev if e["fatal"]] == [601], "fatal not kept"
assert [e["line"] for e in ev] == sorted(e["line"] for e in ev), "order"
assert ev[-2]["line"] == 499, ev[-2]["line"]' "$tmp/out" &&
	pass=$((pass + 1)) || { echo "FAIL 500-event cap: the fatal event was not kept"; fail=$((fail + 1)); }
# Streamed (jsonl), the fatal event is written too.
run "500-event cap, jsonl" 0 '"fatal":true' -- -f jsonl "$tmp/warnings.log"
# Fatal events all: the first 500 are kept, the later ones counted.
awk 'BEGIN { for (i = 1; i <= 501; i++) printf "RuntimeError: CUDA out of memory. Tried to allocate %d.00 MiB (GPU 0; 4.00 GiB total capacity; 1.00 GiB already allocated; 0 bytes free; 1.00 GiB reserved in total by PyTorch)\n", i }' >"$tmp/fatal.log"
run "500-event cap, 501 fatal events" 0 '"events_omitted": 1,' -- -f json "$tmp/fatal.log"
python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["events"]
assert ev[-1]["line"] == 500 and ev[0]["line"] == 1, "not the first 500"' "$tmp/out" &&
	pass=$((pass + 1)) || { echo "FAIL 500-event cap: not the first 500 fatal events"; fail=$((fail + 1)); }
rm -f "$tmp/warnings.log" "$tmp/fatal.log"

# Rank lists are bounded over all events (event.c, EV_RANKS_TOTAL): 20
# messages, each printed by 4096 ranks, list all ranks for the first 16
# events and a few for the others, while every event counts its 4096
# reports.
python3 -c 'import sys
for e in range(20):
    m = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %d.00 MiB (GPU 0; 79.15 GiB total capacity; 70.00 GiB already allocated; 2.00 MiB free; 75.00 GiB reserved in total by PyTorch)\n" % (e + 1)
    sys.stdout.write("".join("[rank%d]: %s" % (r, m) for r in range(4096)))' >"$tmp/ranks.log"
# (82,000 lines, 16 MB: 4 s of CPU in a release build.)
run "20 events of 4096 ranks" 0 '"occurrences": 4096' -- -f json "$tmp/ranks.log"
python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["events"]
assert len(ev) == 20, len(ev)
assert all(e["occurrences"] == 4096 and e["ranks"] for e in ev), "counts"
assert [len(e["ranks"]) for e in ev[:16]] == [4096] * 16, "first 16"
assert sum(len(e["ranks"]) for e in ev) <= 65536 + 8 * 20, "not bounded"' "$tmp/out" &&
	pass=$((pass + 1)) || { echo "FAIL 20 events of 4096 ranks: rank lists"; fail=$((fail + 1)); }
rm -f "$tmp/ranks.log"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

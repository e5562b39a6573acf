#!/usr/bin/env bash
# Inputs dense with prefilter anchors (issue 15): the scan remembers its
# rounds of arbitration (extract.c) and joins a long line only as far as
# its text can take (lines.c), and must still give every event, with the
# counts the report prints.  The expected figures are worked out from the
# inputs, not taken from a run:
#
#   "Killed " 14 times on each of 1000 lines: the shell's "Killed" at the
#   end of a line (rules/recognisers.yaml, `(?<![A-Za-z])Killed[ \t]*$`)
#   is the last one of each line and no other, so one host_oom_killer
#   event of low confidence at line 1, seen 1000 times.
#
#   "Killed " 100 000 times on one line without a newline: only the last
#   one ends the line (the end of the input), so one event, seen once.
#
#   "out of memory" on each of 100 000 lines (1.4 MB): the fallback's
#   unrecognised event of low confidence, at line 1; a fallback line at
#   most 24 lines after an event is that failure's output (extract.c,
#   EX_AFTER_LINES), so lines 1, 26, 51, ... are events of their own, all
#   the same: seen ceil(100000 / 25) = 4000 times.  Also with a scan
#   buffer of 512 KiB (OOMDOC_SCAN_BUFFER, a setting for the tests only),
#   which the input fills three times: the rule counts the lines from the
#   last event's input offset, wherever the buffer was moved (it counted
#   from a buffer offset, which a move made stale: 4003 then).
#
# Usage: tests/dense.sh OOMDOC   (from the repository root; about 1 s)
set -u
oomdoc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# check NAME FILE WANT: WANT is "kind line occurrences confidence" of the
# one event the JSON report must hold; the text report must say the count.
check() {
	local name=$1 file=$2 want=$3 got
	got=$("$oomdoc" --format json "$file" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ev = d["events"]
print(len(ev), d["summary"].get("events_omitted", 0),
      " ".join("%s %s %s %s" % (e["kind"], e["line"], e["occurrences"],
                                e["confidence"]) for e in ev))')
	if [ "$got" != "1 0 $want" ]; then
		echo "FAIL $name: got '$got', want '1 0 $want'"
		fail=1
	fi
	set -- $want
	if ! "$oomdoc" "$file" | grep -q "seen  *$3 times"; then
		[ "$3" = 1 ] || { echo "FAIL $name: the text report does not say seen $3 times"; fail=1; }
	fi
}

python3 -c 'import sys; sys.stdout.write(("Killed " * 14 + "\n") * 1000)' >"$tmp/killed14.log"
python3 -c 'import sys; sys.stdout.write("Killed " * 100000)' >"$tmp/killedline.log"
python3 -c 'import sys; sys.stdout.write("out of memory\n" * 100000)' >"$tmp/oomlines.log"
check "Killed x14 x1000 lines" "$tmp/killed14.log" "host_oom_killer 1 1000 low"
check "Killed x100000 on one line" "$tmp/killedline.log" "host_oom_killer 1 1 low"
check "out of memory x100000 lines" "$tmp/oomlines.log" "unrecognised 1 4000 low"
OOMDOC_SCAN_BUFFER=524288 check "out of memory x100000 lines, 512 KiB buffer" \
    "$tmp/oomlines.log" "unrecognised 1 4000 low"
[ "$fail" = 0 ] && echo "dense: 3 inputs (one with two buffer sizes), all events and counts as expected"
exit "$fail"

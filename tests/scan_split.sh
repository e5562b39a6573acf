#!/bin/bash
# scan_split.sh OOMDOC: the reports do not depend on how the scan is split.
#
# The prefilter's second thread scans ranges of a region (src/lib/scan.c,
# "The prefilter's second thread") and a large regular file is read
# through windows of its mapping (src/lib/input.c, "Mapping a regular
# file").  Both sizes can be set for the tests (OOMDOC_PREFILTER_RANGE,
# OOMDOC_MAP_WINDOW): with a range of 1 byte every line is a range of its
# own, so every message of more than one line (tracebacks, continuation
# lines, hard-wrapped lines, JSON records) lies across range boundaries,
# and a range of 7 cuts long lines too.  Each report must be the one the
# unsplit scan gives (range 0: no second thread; window 0: read(2)), on
# fixtures of each kind and on a generated multi-rank log with OOMs.
set -u
OOMDOC=${1:?usage: scan_split.sh OOMDOC}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0

same() {
	# same LABEL FILE ENV...: the JSON report with each setting in ENV is
	# the one with no split.
	local label=$1 f=$2 e
	shift 2
	OOMDOC_PREFILTER_RANGE=0 OOMDOC_MAP_WINDOW=0 "$OOMDOC" --format json \
	    "$f" >"$T/want" 2>&1
	for e in "$@"; do
		env $e "$OOMDOC" --format json "$f" >"$T/got" 2>&1
		if ! cmp -s "$T/want" "$T/got"; then
			echo "FAIL $label ($e): the report differs"
			diff "$T/want" "$T/got" | head -5
			fail=1
		fi
	done
}

n=0
for f in fixtures/stacks/*wrapped*.log fixtures/pytorch/*.log \
    fixtures/structured/*.log fixtures/scenarios/*.log; do
	[ -f "$f" ] || continue
	same "$f" "$f" OOMDOC_PREFILTER_RANGE=1
	n=$((n + 1))
done
[ "$n" -ge 20 ] || { echo "FAIL: only $n fixtures found"; fail=1; }

# A 6 MiB multi-rank log: regions of the full buffer, each cut into ranges
# ("auto", the largest, and smaller ones; unset is the one-thread scan),
# read through windows of one and 16 pages.
python3 bench/genlog.py --size 6M --ooms 12 --seed 7 -o "$T/gen.log" \
    >/dev/null 2>&1 || { echo "FAIL: genlog.py"; exit 1; }
same genlog "$T/gen.log" OOMDOC_PREFILTER_RANGE=auto OOMDOC_PREFILTER_RANGE=262144 \
    OOMDOC_PREFILTER_RANGE=4096 OOMDOC_PREFILTER_RANGE=61 \
    OOMDOC_MAP_WINDOW=4096 OOMDOC_MAP_WINDOW=65536 \
    "OOMDOC_MAP_WINDOW=4096 OOMDOC_PREFILTER_RANGE=1000"
grep -q '"kind"' "$T/want" || { echo "FAIL: no event in the generated log"; fail=1; }

# Anchor-dense: more matches in a range than the thread's list holds
# (SC_PF_HITS), each a setting that the next event reports (3.4 MiB: read
# through the mapping, in regions of the whole buffer).
python3 -c '
import sys
for i in range(200000):
    sys.stdout.write("batch_size=%d\n" % i)
    if i % 4999 == 4998:
        sys.stdout.write("torch.OutOfMemoryError: CUDA out of memory. "
                         "Tried to allocate %d.00 MiB\n" % (i // 4999 + 1))' \
    >"$T/dense.log"
same dense "$T/dense.log" OOMDOC_PREFILTER_RANGE=auto OOMDOC_PREFILTER_RANGE=4096 \
    OOMDOC_PREFILTER_RANGE=262144
grep -q '"batch_size": 14996' "$T/want" || { echo "FAIL: dense: no batch_size read"; fail=1; }
[ "$fail" = 0 ] && echo "scan_split: $n fixtures and 2 generated logs, reports the same however split"
exit "$fail"

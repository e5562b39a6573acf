#!/bin/bash
# scan_split.sh OOMDOC: the reports do not depend on how the scan is split,
# nor on the scan buffer's size (the end of this file).
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

# Where the scan buffer is full (src/lib/scan.c, sc_room: the history and
# the tail are moved to its front).  Its size is a constant, 1 MiB; for the
# tests only, OOMDOC_SCAN_BUFFER sets it (512 KiB to 64 MiB), so that the
# buffer moves at other places, and often, in the inputs above and in: the
# fixtures' logs five times over (2.8 MB), 100 000 lines of "out of
# memory" (an event, then 24 lines that are its output: extract.c,
# EX_AFTER_LINES, which once counted from a buffer offset that a move had
# made stale), 21 000 lines of 14 "Killed " each, 2 MiB of "Killed " on
# one line (longer than the buffer, scanned in pieces), and a log whose
# last GPU model line was skipped (a sampled kind: one was read on the
# line before it) and then left the buffer before the OOM that reads it.
cat fixtures/*/*.log fixtures/*/*.log fixtures/*/*.log fixtures/*/*.log \
    fixtures/*/*.log >"$T/all5.log"
python3 -c 'import sys; sys.stdout.write("out of memory\n" * 100000)' >"$T/oomlines.log"
python3 -c 'import sys; sys.stdout.write(("Killed " * 14 + "\n") * 21000)' >"$T/killed14.log"
python3 -c 'import sys; sys.stdout.write("Killed " * 299593)' >"$T/killedline.log"
python3 -c '
import sys
w = sys.stdout.write
for i in range(20000):
    w("step %d loss 0.5\n" % i)
w("|   0  NVIDIA H100 80GB HBM3       On  | 00000000:06:00.0 Off |\n")
w("|   0  Tesla V100-SXM2-32GB        On  | 00000000:06:00.0 Off |\n")
for i in range(60000):
    w("step %d loss 0.5\n" % i)
w("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
  "GPU 0 has a total capacity of 31.74 GiB of which 1.25 GiB is free. "
  "Including non-PyTorch memory, this process has 30.49 GiB memory in use. "
  "Of the allocated memory 29.21 GiB is allocated by PyTorch, and 412.55 MiB "
  "is reserved by PyTorch but unallocated.\n")' \
    >"$T/gpu.log"
nb=0
for f in "$T/gen.log" "$T/dense.log" "$T/all5.log" "$T/oomlines.log" \
    "$T/killed14.log" "$T/killedline.log" "$T/gpu.log"; do
	same "buffer $(basename "$f")" "$f" OOMDOC_SCAN_BUFFER=524288 \
	    OOMDOC_SCAN_BUFFER=786433 OOMDOC_SCAN_BUFFER=2097152 \
	    "OOMDOC_SCAN_BUFFER=600011 OOMDOC_PREFILTER_RANGE=4096 OOMDOC_MAP_WINDOW=65536"
	nb=$((nb + 1))
done
# The skipped line is the one the event reads (the V100's fixes, not the
# H100's), with any buffer.
OOMDOC_SCAN_BUFFER=524288 "$OOMDOC" --format json "$T/gpu.log" >"$T/got" 2>&1
grep -q 'the V100 has compute capability' "$T/got" ||
    { echo "FAIL: gpu.log: the skipped V100 line was not read"; fail=1; }
[ "$fail" = 0 ] && echo "scan_split: $n fixtures and 2 generated logs, reports the same however split; $nb inputs, the same with 4 buffer sizes"
exit "$fail"

#!/usr/bin/env bash
# bench/run.sh: oomdoc against rg and GNU grep on one large log.
#
# Usage: bench/run.sh [--log FILE] [--size 1G] [--ooms 53] [--seed 1]
#                     [--runs 3] [--scratch DIR] [--oomdoc PATH]
#                     [--no-compressed] [--keep]
#
# Times, on the same log, `oomdoc --format json`, `rg -c -F -f ANCHORS` and
# `grep -c -F -f ANCHORS` (ANCHORS = `oomdoc --list-anchors`, the strings
# oomdoc's prefilter looks for): (a) reading the file, (b) reading a pipe
# (`cat FILE | ...`), (c) on gzip and zstd copies (`oomdoc FILE.gz` against
# `zcat FILE.gz | rg ...`).  Each command runs once to warm up, then --runs
# times; the table shows the median wall time and the largest peak RSS.
# Without --log, or when the --log file does not exist, a log is generated
# with bench/genlog.py (default 1 GiB, 53 OOM events) in the scratch
# directory (default ${TMPDIR:-/tmp}/oomdoc-bench), and deleted at the end
# unless --keep is given.  The compressed copies made here are deleted too.
set -u
. "$(dirname "$0")/lib.sh"

LOG= SIZE=1G OOMS=53 SEED=1 RUNS=3 COMPRESSED=1 KEEP=0
SCRATCH=${TMPDIR:-/tmp}/oomdoc-bench
OOMDOC_SRC=$REPO_DIR/build/bin/oomdoc
while [ $# -gt 0 ]; do
	case $1 in
	--log) LOG=$2; shift ;;
	--size) SIZE=$2; shift ;;
	--ooms) OOMS=$2; shift ;;
	--seed) SEED=$2; shift ;;
	--runs) RUNS=$2; shift ;;
	--scratch) SCRATCH=$2; shift ;;
	--oomdoc) OOMDOC_SRC=$2; shift ;;
	--no-compressed) COMPRESSED=0 ;;
	--keep) KEEP=1 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) bench_die "unknown option $1 (see --help)" ;;
	esac
	shift
done
bench_need rg grep gzip zcat zstd zstdcat python3 awk
[ -x "$OOMDOC_SRC" ] || bench_die "$OOMDOC_SRC is missing: cmake -S . -B build && cmake --build build -j2"
mkdir -p "$SCRATCH" || exit 2
SCRATCH=$(cd "$SCRATCH" && pwd)
bench_copy_oomdoc

GENERATED=0
[ -n "$LOG" ] || LOG=$SCRATCH/genlog-$SIZE-ooms$OOMS-seed$SEED.log
if [ ! -e "$LOG" ]; then
	echo "bench: generating $LOG ($SIZE, $OOMS OOM events, seed $SEED)" >&2
	python3 "$BENCH_DIR/genlog.py" --size "$SIZE" --ooms "$OOMS" --seed "$SEED" \
	    -o "$LOG" || exit 2
	GENERATED=1
fi
SIDECAR=$LOG.ooms
BYTES=$(stat -c %s "$LOG")
ANCH=$SCRATCH/anchors.txt
"$OOMDOC" --list-anchors >"$ANCH" || bench_die "oomdoc --list-anchors failed"
# A fixed reference set of 19 OOM strings (REF19), for one context row.
REF19=$SCRATCH/anchors-ref19.txt
printf '%s\n' 'out of memory' 'Out of memory' 'OutOfMemory' 'OUT_OF_MEMORY' \
    'ErrorOutOfMemory' 'ALLOC_FAILED' 'NOT_ENOUGH_WORKSPACE' 'RESOURCE_EXHAUSTED' \
    'Resource exhausted' 'OOM when allocating' 'oom-kill' 'oom_kill' 'OOMKilled' \
    'Killed' 'killed by signal' 'exitcode' 'exit code 137' 'Bus error' '已杀死' >"$REF19"

cleanup() {
	rm -f "$SCRATCH"/out.* "$SCRATCH"/rss.*
	bench_remove_oomdoc
	if [ "$KEEP" = 0 ]; then
		rm -f "$LOG.gz" "$LOG.zst"
		[ "$GENERATED" = 1 ] && rm -f "$LOG" "$SIDECAR"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$COMPRESSED" = 1 ]; then
	if [ ! -e "$LOG.gz" ] || [ "$LOG.gz" -ot "$LOG" ]; then
		echo "bench: gzip -6 (the default level) of the log" >&2
		gzip -6 -c "$LOG" >"$LOG.gz" || exit 2
	fi
	if [ ! -e "$LOG.zst" ] || [ "$LOG.zst" -ot "$LOG" ]; then
		echo "bench: zstd -3 (the default level) of the log" >&2
		zstd -q -3 -T0 -f -c "$LOG" >"$LOG.zst" || exit 2
	fi
fi

RESULTS=$SCRATCH/results.tsv
: >"$RESULTS"
O=$SCRATCH/out
echo "bench: timing, $RUNS runs after one warm-up each" >&2

measure "file|oomdoc" '$T "$OOMDOC" --format json "$LOG" >"$O.file.json"'
measure "file|rg"     '$T rg -c -F -f "$ANCH" "$LOG" >"$O.file.rg"'
measure "file|grep"   '$T grep -c -F -f "$ANCH" "$LOG" >"$O.file.grep"'
measure "pipe|oomdoc" 'cat "$LOG" | $T "$OOMDOC" --format json >"$O.pipe.json"'
measure "pipe|rg"     'cat "$LOG" | $T rg -c -F -f "$ANCH" >"$O.pipe.rg"'
measure "pipe|grep"   'cat "$LOG" | $T grep -c -F -f "$ANCH" >"$O.pipe.grep"'
if [ "$COMPRESSED" = 1 ]; then
	measure "gzip|oomdoc" '$T "$OOMDOC" --format json "$LOG.gz" >"$O.gzip.json"'
	measure "gzip|rg"     'zcat "$LOG.gz" | $T rg -c -F -f "$ANCH" >"$O.gzip.rg"'
	measure "gzip|grep"   'zcat "$LOG.gz" | $T grep -c -F -f "$ANCH" >"$O.gzip.grep"'
	measure "zstd|oomdoc" '$T "$OOMDOC" --format json "$LOG.zst" >"$O.zstd.json"'
	measure "zstd|rg"     'zstdcat "$LOG.zst" | $T rg -c -F -f "$ANCH" >"$O.zstd.rg"'
	measure "zstd|grep"   'zstdcat "$LOG.zst" | $T grep -c -F -f "$ANCH" >"$O.zstd.grep"'
fi
# Context: floors and the reference anchor set.
measure "ctx|wc -l < FILE"          '$T wc -l <"$LOG" >"$O.ctx1"'
measure "ctx|cat FILE | wc -l"      'cat "$LOG" | $T wc -l >"$O.ctx2"'
measure "ctx|rg -c -F -f REF19 FILE" '$T rg -c -F -f "$REF19" "$LOG" >"$O.ctx3"'
if [ "$COMPRESSED" = 1 ]; then
	measure "ctx|zcat FILE.gz | wc -c" 'zcat "$LOG.gz" | $T wc -c >"$O.ctx4"'
	measure "ctx|zstdcat FILE.zst | wc -c" 'zstdcat "$LOG.zst" | $T wc -c >"$O.ctx5"'
fi

echo
echo "## oomdoc against rg and grep"
echo
machine_info
echo "- log: $LOG, $BYTES bytes ($(awk -v b="$BYTES" 'BEGIN { printf "%.2f GiB", b / 2^30 }')), $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%d OOM events, %d lines, seed %d" % (d["ooms"], d["lines"], d["seed"]))' "$SIDECAR" 2>/dev/null || echo 'no generator sidecar')"
[ "$COMPRESSED" = 1 ] && echo "- compressed copies: gzip -6 $(stat -c %s "$LOG.gz") bytes, zstd -3 $(stat -c %s "$LOG.zst") bytes"
echo "- anchors: $(wc -l <"$ANCH") strings from \`oomdoc --list-anchors\`; grep and rg get them as they are printed, matched with case, although oomdoc matches some of them without case"
echo "- locale: LANG=${LANG:-} LC_ALL=${LC_ALL:-}; medians of $RUNS runs after one warm-up; page cache warm"
echo
python3 - "$RESULTS" "$BYTES" <<'EOF'
import sys
rows = {}
order = []
for ln in open(sys.argv[1]):
    label, med, rss, walls, cpu = ln.rstrip("\n").split("\t")
    mode, tool = label.split("|", 1)
    rows[(mode, tool)] = (float(med), int(rss), walls, float(cpu))
    order.append((mode, tool))
nbytes = int(sys.argv[2])
names = {"file": "file", "pipe": "pipe", "gzip": "gzip (.gz)", "zstd": "zstd (.zst)"}
def code(s):
    # a table cell: | must be escaped even inside a code span
    return "`%s`" % s.replace("|", "\\|")
cmds = {
    ("file", "oomdoc"): "oomdoc --format json FILE",
    ("file", "rg"): "rg -c -F -f ANCHORS FILE",
    ("file", "grep"): "grep -c -F -f ANCHORS FILE",
    ("pipe", "oomdoc"): "cat FILE | oomdoc --format json",
    ("pipe", "rg"): "cat FILE | rg -c -F -f ANCHORS",
    ("pipe", "grep"): "cat FILE | grep -c -F -f ANCHORS",
    ("gzip", "oomdoc"): "oomdoc --format json FILE.gz",
    ("gzip", "rg"): "zcat FILE.gz | rg -c -F -f ANCHORS",
    ("gzip", "grep"): "zcat FILE.gz | grep -c -F -f ANCHORS",
    ("zstd", "oomdoc"): "oomdoc --format json FILE.zst",
    ("zstd", "rg"): "zstdcat FILE.zst | rg -c -F -f ANCHORS",
    ("zstd", "grep"): "zstdcat FILE.zst | grep -c -F -f ANCHORS",
}
print("| input | command | wall s | MB/s | vs rg | vs grep | CPU s | CPU vs rg | peak RSS KiB |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for mode, tool in order:
    if mode == "ctx":
        continue
    med, rss, _, cpu = rows[(mode, tool)]
    rg = rows.get((mode, "rg"), (0,))[0]
    gr = rows.get((mode, "grep"), (0,))[0]
    rgc = rows.get((mode, "rg"), (0, 0, 0, 0))[3]
    print("| %s | %s | %.2f | %.0f | %s | %s | %.2f | %s | %d |" % (
        names[mode], code(cmds[(mode, tool)]), med, nbytes / med / 1e6,
        "%.2f" % (med / rg) if rg else "-", "%.2f" % (med / gr) if gr else "-",
        cpu, "%.2f" % (cpu / rgc) if rgc and mode in ("file", "pipe") else "-", rss))
ctx = [(t, rows[(m, t)]) for m, t in order if m == "ctx"]
if ctx:
    print()
    print("Context, not part of the ratios: the floors (reading and counting lines,")
    print("decompressing) and rg with a fixed reference set of 19 OOM strings (REF19).")
    print()
    print("| command | wall s | MB/s | peak RSS KiB |")
    print("|---|---:|---:|---:|")
    for t, (med, rss, _, _) in ctx:
        print("| %s | %.2f | %.0f | %d |" % (code(t), med, nbytes / med / 1e6, rss))
print()
print("Wall times of every run (s): " + "; ".join(
    "%s/%s %s" % (m, t, rows[(m, t)][2]) for m, t in order))
EOF
echo
echo "MB/s is uncompressed bytes of the log / median wall seconds / 10^6, for"
echo "compressed input too.  'vs rg' and 'vs grep' divide a row's wall time by"
echo "rg's and grep's on the same input: above 1 is slower.  Peak RSS is the"
echo "largest maximum resident set size (GNU time %M) of the timed process over the"
echo "runs: oomdoc itself, or the rg/grep that reads the pipe (not cat, zcat, zstdcat)."
echo "CPU s is the median user + system time of that same process (so it leaves out"
echo "cat, zcat and zstdcat, and oomdoc's own decompression is in it); it is less"
echo "disturbed than wall time by other work on the machine.  'CPU vs rg' is given"
echo "for file and pipe only: on compressed input oomdoc's CPU time includes the"
echo "decompression and rg's does not."
echo
echo "### Correctness"
echo
for m in file pipe gzip zstd; do
	[ -e "$O.$m.json" ] || continue
	echo "- oomdoc, $m: $(check_events "$O.$m.json" "$SIDECAR")"
done
for m in file pipe gzip zstd; do
	[ -e "$O.$m.rg" ] || continue
	r=$(cat "$O.$m.rg") g=$(cat "$O.$m.grep")
	if [ "$r" = "$g" ]; then s=agree; else s=DISAGREE; fi
	echo "- lines with an anchor, $m: rg $r, grep $g ($s)"
done

#!/usr/bin/env bash
# bench/run.sh: oomdoc against rg and GNU grep on one large log.
#
# Usage: bench/run.sh [--log FILE] [--size 1G] [--ooms 53] [--seed 1]
#                     [--runs 3] [--scratch DIR] [--oomdoc PATH]
#                     [--no-compressed] [--no-dense] [--keep]
#
# Times, on the same log, `oomdoc --format json` against the reference,
# `rg -c -F -f REF19` (REF19 = bench/anchors-ref19.txt, the 19 distinctive
# OOM phrases of the stacks, without its comments: what finding the OOM
# lines costs with a fast tool), and, as context, `rg -c -F -f ANCHORS` and
# `grep -c -F -f ANCHORS` (ANCHORS = the 78-odd strings of `oomdoc
# --list-anchors`, so many that rg's fast matcher gives way to a slower
# one): (a) reading the file, (b) reading a pipe (`cat FILE | ...`), (c) on
# gzip and zstd copies (`oomdoc FILE.gz` against `zcat FILE.gz | rg ...`).
# Then (unless --no-dense) the inputs dense with prefilter anchors, on
# which the work per hit decides the speed: "Killed " 14 times a line, 4
# MiB; "Killed " on one 4 MiB line; "out of memory" on each of 1 000 000
# lines; 100 000 PyTorch OOM reports, all different.  Each command runs
# once to warm up, then --runs times (a command slower than 60 s only
# once); the tables show the median wall time, the median CPU time (the
# figure that holds on a shared machine) and the largest peak RSS, of
# --format json and of the default text report.
# Without --log, or when the --log file does not exist, a log is generated
# with bench/genlog.py (default 1 GiB, 53 OOM events) in the scratch
# directory (default ${TMPDIR:-/tmp}/oomdoc-bench), and deleted at the end
# unless --keep is given.  The compressed copies made here are deleted too.
set -u
. "$(dirname "$0")/lib.sh"

LOG= SIZE=1G OOMS=53 SEED=1 RUNS=3 COMPRESSED=1 DENSE=1 KEEP=0
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
	--no-dense) DENSE=0 ;;
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
NANCH=$(wc -l <"$ANCH")
export NANCH
# The reference: the 19 OOM phrases of bench/anchors-ref19.txt, without
# its comment lines (rg would take them for strings).
REF19=$SCRATCH/anchors-ref19.txt
grep -v '^#' "$BENCH_DIR/anchors-ref19.txt" >"$REF19" || exit 2

cleanup() {
	rm -f "$SCRATCH"/out.* "$SCRATCH"/rss.* "$SCRATCH"/dense-*.log
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
rm -f "$SCRATCH/dense.tsv"
O=$SCRATCH/out
echo "bench: timing, $RUNS runs after one warm-up each" >&2

measure "file|oomdoc" '$T "$OOMDOC" --format json "$LOG" >"$O.file.json"'
measure "file|rg19"   '$T rg -c -F -f "$REF19" "$LOG" >"$O.file.rg19"'
measure "file|rg"     '$T rg -c -F -f "$ANCH" "$LOG" >"$O.file.rg"'
measure "file|grep"   '$T grep -c -F -f "$ANCH" "$LOG" >"$O.file.grep"'
measure "pipe|oomdoc" 'cat "$LOG" | $T "$OOMDOC" --format json >"$O.pipe.json"'
measure "pipe|rg19"   'cat "$LOG" | $T rg -c -F -f "$REF19" >"$O.pipe.rg19"'
measure "pipe|rg"     'cat "$LOG" | $T rg -c -F -f "$ANCH" >"$O.pipe.rg"'
measure "pipe|grep"   'cat "$LOG" | $T grep -c -F -f "$ANCH" >"$O.pipe.grep"'
if [ "$COMPRESSED" = 1 ]; then
	measure "gzip|oomdoc" '$T "$OOMDOC" --format json "$LOG.gz" >"$O.gzip.json"'
	# The reference's CPU time takes in its decompressor: GNU time of
	# the shell that waits for both (the pipe rows leave out cat).
	measure "gzip|rg19"   '$T sh -c '\''zcat "$1" | rg -c -F -f "$2"'\'' sh "$LOG.gz" "$REF19" >"$O.gzip.rg19"'
	measure "gzip|rg"     'zcat "$LOG.gz" | $T rg -c -F -f "$ANCH" >"$O.gzip.rg"'
	measure "gzip|grep"   'zcat "$LOG.gz" | $T grep -c -F -f "$ANCH" >"$O.gzip.grep"'
	measure "zstd|oomdoc" '$T "$OOMDOC" --format json "$LOG.zst" >"$O.zstd.json"'
	measure "zstd|rg19"   '$T sh -c '\''zstdcat "$1" | rg -c -F -f "$2"'\'' sh "$LOG.zst" "$REF19" >"$O.zstd.rg19"'
	measure "zstd|rg"     'zstdcat "$LOG.zst" | $T rg -c -F -f "$ANCH" >"$O.zstd.rg"'
	measure "zstd|grep"   'zstdcat "$LOG.zst" | $T grep -c -F -f "$ANCH" >"$O.zstd.grep"'
fi
# The peak memory of the default report (text), beside --format json's.
measure "rss|oomdoc text" '$T "$OOMDOC" "$LOG" >"$O.file.txt"'
# Context: floors and the reference anchor set.
measure "ctx|wc -l < FILE"          '$T wc -l <"$LOG" >"$O.ctx1"'
measure "ctx|cat FILE | wc -l"      'cat "$LOG" | $T wc -l >"$O.ctx2"'
if [ "$COMPRESSED" = 1 ]; then
	measure "ctx|zcat FILE.gz | wc -c" 'zcat "$LOG.gz" | $T wc -c >"$O.ctx4"'
	measure "ctx|zstdcat FILE.zst | wc -c" 'zstdcat "$LOG.zst" | $T wc -c >"$O.ctx5"'
fi
if [ "$DENSE" = 1 ]; then
	D=$SCRATCH/dense
	echo "bench: the anchor-dense inputs" >&2
	python3 -c 'import sys; sys.stdout.write(("Killed " * 14 + "\n") * 42000)' >"$D-killed14.log"
	python3 -c 'import sys; sys.stdout.write("Killed " * 599186)' >"$D-killedline.log"
	python3 -c 'import sys; sys.stdout.write("out of memory\n" * 1000000)' >"$D-oomlines.log"
	python3 -c 'import sys
m = sys.argv[1]
sys.stdout.write("".join(m.replace("2.00 MiB", "%d.00 MiB" % (i + 2)) + "\n" for i in range(100000)))' \
	    'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 1.25 MiB is free. Including non-PyTorch memory, this process has 79.14 GiB memory in use. Of the allocated memory 78.21 GiB is allocated by PyTorch, and 412.55 MiB is reserved by PyTorch but unallocated.' \
	    >"$D-reports.log"
	for d in killed14 killedline oomlines reports; do
		measure "dense|$d|oomdoc" '$T "$OOMDOC" --format json "$D-$d.log" >"$O.dense.json"'
		measure "dense|$d|rg19" '$T rg -c -F -f "$REF19" "$D-$d.log" >"$O.dense.rg19"'
		echo "$d	$(stat -c %s "$D-$d.log")	$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["events"] + s.get("events_omitted", 0))' "$O.dense.json" 2>/dev/null || echo '?')" >>"$SCRATCH/dense.tsv"
	done
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
python3 - "$RESULTS" "$BYTES" "$SCRATCH/dense.tsv" <<'EOF'
import os, sys
rows = {}
order = []
dense = []
for ln in open(sys.argv[1]):
    label, med, rss, walls, cpu = ln.rstrip("\n").split("\t")
    if label.startswith("dense|"):
        _, d, tool = label.split("|")
        rows[(d, tool)] = (float(med), int(rss), walls, float(cpu))
        continue
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
    ("file", "rg19"): "rg -c -F -f REF19 FILE",
    ("file", "rg"): "rg -c -F -f ANCHORS FILE",
    ("file", "grep"): "grep -c -F -f ANCHORS FILE",
    ("pipe", "oomdoc"): "cat FILE | oomdoc --format json",
    ("pipe", "rg19"): "cat FILE | rg -c -F -f REF19",
    ("pipe", "rg"): "cat FILE | rg -c -F -f ANCHORS",
    ("pipe", "grep"): "cat FILE | grep -c -F -f ANCHORS",
    ("gzip", "oomdoc"): "oomdoc --format json FILE.gz",
    ("gzip", "rg19"): "zcat FILE.gz | rg -c -F -f REF19",
    ("gzip", "rg"): "zcat FILE.gz | rg -c -F -f ANCHORS",
    ("gzip", "grep"): "zcat FILE.gz | grep -c -F -f ANCHORS",
    ("zstd", "oomdoc"): "oomdoc --format json FILE.zst",
    ("zstd", "rg19"): "zstdcat FILE.zst | rg -c -F -f REF19",
    ("zstd", "rg"): "zstdcat FILE.zst | rg -c -F -f ANCHORS",
    ("zstd", "grep"): "zstdcat FILE.zst | grep -c -F -f ANCHORS",
}
print("The reference: oomdoc's wall time divided by `rg -c -F` with the 19")
print("reference anchors (REF19, bench/anchors-ref19.txt) on the same input,")
print("and the same for CPU time (user + system: oomdoc's own threads, reading")
print("and decompressing included; for gzip and zstd the reference's takes in")
print("zcat or zstdcat too, as both do that work); below 1 is faster than rg.")
print("CPU time is the figure to compare on a shared machine, where a wall time")
print("is as long as the load makes it; oomdoc's two threads add their CPU")
print("times, so its CPU ratio is the ratio of the work, not of the wait.")
print()
print("| input | oomdoc s | rg REF19 s | **oomdoc / rg REF19** | oomdoc CPU s | rg REF19 CPU s | **CPU ratio** | oomdoc peak RSS KiB |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for mode in ("file", "pipe", "gzip", "zstd"):
    if (mode, "oomdoc") in rows and (mode, "rg19") in rows:
        o, r = rows[(mode, "oomdoc")], rows[(mode, "rg19")]
        print("| %s | %.2f | %.2f | **%.2f** | %.2f | %.2f | **%s** | %d |" % (
            names[mode], o[0], r[0], o[0] / r[0], o[3], r[3],
            "%.2f" % (o[3] / r[3]) if r[3] > 0 else "-", o[1]))
if ("rss", "oomdoc text") in rows:
    print()
    print("Peak RSS of the default text report on the file: %d KiB (the table's is"
          % rows[("rss", "oomdoc text")][1])
    print("`--format json`'s, which writes the report an event at a time).")
print()
print("Context, not the reference: every command, with rg and grep also fed the")
print("%s strings of `oomdoc --list-anchors` (ANCHORS): so many literals slow rg" % os.environ.get("NANCH", "?"))
print("down, so 'vs rg' (against that rg) flatters oomdoc.")
print()
print("| input | command | wall s | MB/s | vs rg REF19 | vs rg ANCHORS (context) | vs grep ANCHORS | CPU s | peak RSS KiB |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for mode, tool in order:
    if mode in ("ctx", "rss"):
        continue
    med, rss, _, cpu = rows[(mode, tool)]
    r19 = rows.get((mode, "rg19"), (0,))[0]
    rg = rows.get((mode, "rg"), (0,))[0]
    gr = rows.get((mode, "grep"), (0,))[0]
    print("| %s | %s | %.2f | %.0f | %s | %s | %s | %.2f | %d |" % (
        names[mode], code(cmds[(mode, tool)]), med, nbytes / med / 1e6,
        "%.2f" % (med / r19) if r19 else "-",
        "%.2f" % (med / rg) if rg else "-", "%.2f" % (med / gr) if gr else "-",
        cpu, rss))
if os.path.exists(sys.argv[3]):
    what = {
        "killed14": "`Killed ` 14 times a line",
        "killedline": "`Killed ` on one line",
        "oomlines": "`out of memory` on every line",
        "reports": "100 000 PyTorch OOM reports, all different",
    }
    print()
    print("Inputs dense with prefilter anchors: the work per hit decides the")
    print("speed here.  Events: what oomdoc counted (kept + omitted).")
    print()
    print("| input | bytes | events | oomdoc s | oomdoc MB/s | oomdoc CPU s | MB/s of CPU | rg REF19 s | oomdoc / rg REF19 | peak RSS KiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for ln in open(sys.argv[3]):
        d, size, events = ln.rstrip("\n").split("\t")
        o, r = rows[(d, "oomdoc")], rows[(d, "rg19")]
        print("| %s | %s | %s | %.2f | %.2f | %.2f | %s | %.3f | %.0f | %d |" % (
            what[d], size, events, o[0], int(size) / o[0] / 1e6, o[3],
            "%.1f" % (int(size) / o[3] / 1e6) if o[3] > 0 else "-", r[0],
            o[0] / r[0] if r[0] else 0, o[1]))
ctx = [(t, rows[(m, t)]) for m, t in order if m == "ctx"]
if ctx:
    print()
    print("Context, not part of the ratios: the floors (reading and counting lines,")
    print("decompressing).")
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
echo "compressed input too.  'vs rg REF19' divides a row's wall time by that of"
echo "rg with the 19 reference anchors on the same input, the figure this"
echo "benchmark is judged by; 'vs rg ANCHORS' and 'vs grep ANCHORS' divide by rg's"
echo "and grep's with oomdoc's own $NANCH prefilter strings, context only.  Above 1"
echo "is slower.  Peak RSS is the largest maximum resident set size (GNU time %M)"
echo "of the timed process over the runs: oomdoc itself, or the rg/grep that reads"
echo "the pipe (not cat, zcat, zstdcat; for the REF19 rows of gzip and zstd, the"
echo "largest of zcat or zstdcat and rg).  CPU s is the median user + system time"
echo "of that same process (so it leaves out cat, and zcat and zstdcat but in the"
echo "REF19 rows; oomdoc's own decompression and both its threads are in it)."
echo "The machine may be shared: compare the ratios"
echo "of one run, whose commands ran in turn under the same load, not the"
echo "absolute times of different runs."
echo
echo "### Correctness"
echo
for m in file pipe gzip zstd; do
	[ -e "$O.$m.json" ] || continue
	echo "- oomdoc, $m: $(check_events "$O.$m.json" "$SIDECAR")"
done
# The split scan (the prefilter's second thread, the file's mapping)
# against the unsplit one on the same file: the same report, byte for byte.
if [ -e "$O.file.json" ]; then
	OOMDOC_PREFILTER_RANGE=0 OOMDOC_MAP_WINDOW=0 "$OOMDOC" --format json \
	    "$LOG" >"$O.file.seq.json" 2>/dev/null
	if cmp -s "$O.file.json" "$O.file.seq.json"; then
		echo "- oomdoc, file: the report is byte-identical to the unsplit scan's (OOMDOC_PREFILTER_RANGE=0 OOMDOC_MAP_WINDOW=0: one thread, read(2))"
	else
		echo "- oomdoc, file: the report DIFFERS from the unsplit scan's (OOMDOC_PREFILTER_RANGE=0 OOMDOC_MAP_WINDOW=0)"
	fi
fi
for m in file pipe gzip zstd; do
	[ -e "$O.$m.rg" ] || continue
	r=$(cat "$O.$m.rg") g=$(cat "$O.$m.grep")
	if [ "$r" = "$g" ]; then s=agree; else s=DISAGREE; fi
	echo "- lines with an anchor, $m: rg $r, grep $g ($s)"
done

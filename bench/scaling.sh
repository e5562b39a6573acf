#!/usr/bin/env bash
# bench/scaling.sh: how oomdoc's time and memory grow with the log.
#
# Usage: bench/scaling.sh [--big] [--runs 3] [--ooms 53] [--seed 1]
#                         [--scratch DIR] [--oomdoc PATH] [--rows "SIZE:OOMS ..."]
#
# Rows: sizes 100M and 1G (and 4G with --big) with a fixed number of OOM
# events (--ooms, default 53), then 1G with 1, 1000 and 100000 OOM events.
# Each log is generated with bench/genlog.py in the scratch directory
# (default ${TMPDIR:-/tmp}/oomdoc-bench), timed, then deleted, so that at
# most one log is on disk at a time (4 GiB with --big).  For each row:
# `oomdoc --format json FILE`, `cat FILE | oomdoc --format json` and, for
# reference, `cat FILE | rg -c -F -f ANCHORS`; the median wall time of
# --runs runs after one warm-up, MB/s and the largest peak RSS; and whether
# oomdoc reported as many events as the generator wrote.  --rows replaces
# the list of rows, e.g. --rows "10M:5 10M:5000".
set -u
. "$(dirname "$0")/lib.sh"

BIG=0 RUNS=3 OOMS=53 SEED=1 ROWS=
SCRATCH=${TMPDIR:-/tmp}/oomdoc-bench
OOMDOC_SRC=$REPO_DIR/build/bin/oomdoc
while [ $# -gt 0 ]; do
	case $1 in
	--big) BIG=1 ;;
	--runs) RUNS=$2; shift ;;
	--ooms) OOMS=$2; shift ;;
	--seed) SEED=$2; shift ;;
	--rows) ROWS=$2; shift ;;
	--scratch) SCRATCH=$2; shift ;;
	--oomdoc) OOMDOC_SRC=$2; shift ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) bench_die "unknown option $1 (see --help)" ;;
	esac
	shift
done
bench_need rg python3 awk
[ -x "$OOMDOC_SRC" ] || bench_die "$OOMDOC_SRC is missing: cmake -S . -B build && cmake --build build -j2"
mkdir -p "$SCRATCH" || exit 2
SCRATCH=$(cd "$SCRATCH" && pwd)
bench_copy_oomdoc
ANCH=$SCRATCH/anchors.txt
"$OOMDOC" --list-anchors >"$ANCH" || bench_die "oomdoc --list-anchors failed"
LOG=
cleanup() {
	rm -f "$SCRATCH"/out.* "$SCRATCH"/rss.*
	bench_remove_oomdoc
	[ -n "$LOG" ] && rm -f "$LOG" "$LOG.ooms"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$ROWS" ]; then
	ROWS="100M:$OOMS 1G:$OOMS"
	[ "$BIG" = 1 ] && ROWS="$ROWS 4G:$OOMS"
	ROWS="$ROWS 1G:1 1G:1000 1G:100000"
fi

TABLE=$SCRATCH/scaling.tsv
: >"$TABLE"
O=$SCRATCH/out
for row in $ROWS; do
	size=${row%%:*} n=${row#*:}
	LOG=$SCRATCH/scaling-$size-ooms$n-seed$SEED.log
	echo "bench: $size with $n OOM events" >&2
	python3 "$BENCH_DIR/genlog.py" --size "$size" --ooms "$n" --seed "$SEED" \
	    -o "$LOG" || exit 2
	RESULTS=$SCRATCH/row.tsv
	: >"$RESULTS"
	rm -f "$O".*
	measure file '$T "$OOMDOC" --format json "$LOG" >"$O.file.json"'
	if [ "$MEASURE_SLOW" = 1 ]; then
		echo "  pipe: skipped, the file took more than $SLOW s" >&2
		printf 'pipe\t-\t-\tskipped\n' >>"$RESULTS"
	else
		measure pipe 'cat "$LOG" | $T "$OOMDOC" --format json >"$O.pipe.json"'
	fi
	measure rg 'cat "$LOG" | $T rg -c -F -f "$ANCH" >"$O.rg"'
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$n" "$(stat -c %s "$LOG")" \
	    "$(cut -f2,3 "$RESULTS" | tr '\n' '\t')" \
	    "$(check_events "$O.file.json" "$LOG.ooms")" \
	    "$(check_events "$O.pipe.json" "$LOG.ooms")" >>"$TABLE"
	rm -f "$LOG" "$LOG.ooms"
done
LOG=

echo
echo "## Scaling"
echo
machine_info
echo "- medians of $RUNS runs after one warm-up; page cache warm; seed $SEED"
echo
python3 - "$TABLE" <<'EOF'
import sys
print("| size | OOMs | bytes | file: wall s | MB/s | peak RSS KiB | pipe: wall s | MB/s "
      "| peak RSS KiB | rg pipe s | pipe vs rg | events |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for ln in open(sys.argv[1]):
    f = ln.rstrip("\n").split("\t")
    size, n, nbytes = f[0], int(f[1]), int(f[2])
    fw, frss, rw = float(f[3]), int(f[4]), float(f[7])
    chk_file, chk_pipe = f[-2], f[-1]
    if f[5] == "-":
        pipe = "skipped | - | - | %.2f | - " % rw
        chk = chk_file
    else:
        pw, prss = float(f[5]), int(f[6])
        pipe = "%.2f | %.0f | %d | %.2f | %.2f " % (pw, nbytes / pw / 1e6, prss, rw, pw / rw)
        chk = chk_file if chk_file == chk_pipe else "file: %s; pipe: %s" % (chk_file, chk_pipe)
    print("| %s | %d | %d | %.2f | %.0f | %d | %s| %s |" % (
        size, n, nbytes, fw, nbytes / fw / 1e6, frss, pipe, chk))
EOF
echo
echo "MB/s = bytes / median wall seconds / 10^6.  'pipe vs rg' = oomdoc's wall time"
echo "from a pipe / rg's from a pipe (above 1 is slower).  Peak RSS: GNU time %M of"
echo "oomdoc (largest over the runs).  A measurement whose warm-up took more than"
echo "$SLOW s (SLOW) is that one run alone, and the pipe is then skipped for the row."

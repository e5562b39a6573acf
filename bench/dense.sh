#!/usr/bin/env bash
# bench/dense.sh: the anchor-dense inputs, one pair per prefilter anchor.
#
# Usage: bench/dense.sh [--oomdoc PATH] [--base PATH] [--size BYTES]
#                       [--scratch DIR] [--keep]
#
# For each string of `oomdoc --list-anchors`, two inputs of about --size
# bytes (default 1048576): the anchor alone on every line ("lines"), and
# the anchor repeated on one line, a space after each ("oneline").  Each
# runs once through `oomdoc --format json`, and the table gives its CPU
# time (user + system, GNU time: the machine may be shared, wall time is
# not the measure) and MB/s of CPU time; with --base, the same for a
# second binary (the one before a change) and whether the two JSON reports
# and standard errors are byte-identical.  The slowest inputs come first.
# Inputs go to the scratch directory (default ${TMPDIR:-/tmp}/oomdoc-dense)
# and are deleted at the end unless --keep is given.  About a minute for
# 120 anchors on 2 cores.
set -u
. "$(dirname "$0")/lib.sh"

SIZE=1048576 KEEP=0 BASE=
SCRATCH=${TMPDIR:-/tmp}/oomdoc-dense
OOMDOC_SRC=$REPO_DIR/build/bin/oomdoc
while [ $# -gt 0 ]; do
	case $1 in
	--oomdoc) OOMDOC_SRC=$2; shift ;;
	--base) BASE=$2; shift ;;
	--size) SIZE=$2; shift ;;
	--scratch) SCRATCH=$2; shift ;;
	--keep) KEEP=1 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) bench_die "unknown option $1 (see --help)" ;;
	esac
	shift
done
bench_need python3
[ -x "$OOMDOC_SRC" ] || bench_die "$OOMDOC_SRC is missing"
mkdir -p "$SCRATCH/in" || exit 2
SCRATCH=$(cd "$SCRATCH" && pwd)
[ "$KEEP" = 1 ] || trap 'rm -rf "$SCRATCH/in" "$SCRATCH"/[ote].* "$SCRATCH/rows.tsv"' EXIT

"$OOMDOC_SRC" --list-anchors >"$SCRATCH/anchors.txt" || bench_die "--list-anchors failed"
python3 - "$SCRATCH/anchors.txt" "$SCRATCH/in" "$SIZE" <<'PY'
import os, sys
anchors = [l.rstrip("\n") for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
size = int(sys.argv[3])
for i, a in enumerate(anchors):
    n = max(1, size // (len(a.encode()) + 1))
    for kind, sep in (("lines", "\n"), ("oneline", " ")):
        with open(os.path.join(sys.argv[2], "a%03d-%s.log" % (i, kind)), "w",
                  encoding="utf-8") as f:
            f.write((a + sep) * n)
PY

# cpu BIN FILE TAG: CPU seconds of one run; output in $SCRATCH/o.TAG.
cpu() {
	"$GNU_TIME" -o "$SCRATCH/t.$3" -f "%U %S" "$1" --format json "$2" \
	    >"$SCRATCH/o.$3" 2>"$SCRATCH/e.$3"
	tail -1 "$SCRATCH/t.$3" | awk '{ printf "%.2f", $1 + $2 }'
}

rows=$SCRATCH/rows.tsv
: >"$rows"
for f in "$SCRATCH"/in/*.log; do
	i=$(basename "$f" .log)
	n=${i#a}; n=$((10#${n%%-*}))
	anchor=$(sed -n "$((n + 1))p" "$SCRATCH/anchors.txt")
	bytes=$(stat -c %s "$f")
	c=$(cpu "$OOMDOC_SRC" "$f" new)
	if [ -n "$BASE" ]; then
		b=$(cpu "$BASE" "$f" base)
		if cmp -s "$SCRATCH/o.new" "$SCRATCH/o.base" &&
		    cmp -s "$SCRATCH/e.new" "$SCRATCH/e.base"; then s=same; else s=DIFFERENT; fi
	else
		b=- s=-
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$anchor" "${i#*-}" "$bytes" "$b" "$s" >>"$rows"
done
echo "| anchor | input | bytes | CPU s | MB/s (CPU) | base CPU s | base MB/s | output |"
echo "|---|---|---:|---:|---:|---:|---:|---|"
sort -t "$(printf '\t')" -k1,1 -g -r "$rows" | awk -F '\t' '{
	mbs = $1 > 0 ? sprintf("%.0f", $4 / $1 / 1e6) : ">" sprintf("%.0f", $4 / 0.01 / 1e6)
	bm = $5 == "-" ? "-" : ($5 > 0 ? sprintf("%.0f", $4 / $5 / 1e6) : ">" sprintf("%.0f", $4 / 0.01 / 1e6))
	a = $2; gsub(/\|/, "\\|", a)
	printf "| `%s` | %s | %s | %s | %s | %s | %s | %s |\n", a, $3, $4, $1, mbs, $5, bm, $6 }'

#!/usr/bin/env bash
# bench/same.sh: whether two oomdoc binaries give the same reports on every
# log of the repository.
#
# Usage: bench/same.sh BASE NEW [DIR ...]
#
# Runs `BASE --format json LOG` and `NEW --format json LOG` on every *.log
# under the DIRs (default: fixtures and eval, from the repository's root;
# eval/heldout11, a blind set, is never read) and compares, for each log,
# the standard output, the standard error and the exit status byte for
# byte.  Prints one line for each log that differs (the first 20), then
# the count; exits 1 when any differs, 2 on a usage error.  A speed change
# that must not change any report is kept only when this says "0 differ".
# Each binary finds its rules as it always does (share/oomdoc/rules beside
# its directory), so BASE is best a copy of an earlier build's bin and
# share directories (cp -r build/bin build/share /tmp/base/).
set -u
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
REPO_DIR=$(dirname "$BENCH_DIR")

if [ $# -lt 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
	echo "usage: bench/same.sh BASE NEW [DIR ...] (two executables)" >&2
	exit 2
fi
BASE=$1 NEW=$2
shift 2
[ $# -gt 0 ] || set -- "$REPO_DIR/fixtures" "$REPO_DIR/eval"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/oomdoc-same.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

n=0 bad=0
while IFS= read -r -d '' log; do
	n=$((n + 1))
	"$BASE" --format json "$log" >"$TMP/b.out" 2>"$TMP/b.err"
	bs=$?
	"$NEW" --format json "$log" >"$TMP/n.out" 2>"$TMP/n.err"
	ns=$?
	what=
	cmp -s "$TMP/b.out" "$TMP/n.out" || what="$what output"
	cmp -s "$TMP/b.err" "$TMP/n.err" || what="$what stderr"
	[ "$bs" = "$ns" ] || what="$what status($bs/$ns)"
	if [ -n "$what" ]; then
		bad=$((bad + 1))
		[ "$bad" -le 20 ] && echo "differs:$what: $log"
	fi
done < <(find "$@" -name heldout11 -prune -o -type f -name '*.log' -print0 |
    sort -z)
echo "same.sh: $n logs, $bad differ"
[ "$bad" = 0 ]

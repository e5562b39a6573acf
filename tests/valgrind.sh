#!/usr/bin/env bash
# valgrind memcheck over the golden fixtures: every fixture through the
# JSON report, and a few through the text and Markdown ones; any memory
# error or definite leak fails.  The JSON runs take the fixtures forty at
# a time, as one `oomdoc --format json A B ...` reads many inputs: each
# input goes through every stage as it would alone, and valgrind's start
# (the larger part of a short run under it) is paid once per forty.  Two
# runs at a time.
#
# Usage: tests/valgrind.sh OOMDOC   (from the repository root)
set -u
oomdoc=$1
command -v valgrind >/dev/null || { echo "valgrind not found"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The jobs as NUL-terminated lines of NUL-separated words, a format and
# its logs: a fixture's name may hold spaces (fixtures/hostile has one
# whose name is itself an attack).  Each job is a file of its own.
n=0
job() { n=$((n + 1)); printf '%s\0' "$@" >"$tmp/job.$n"; }
set -- fixtures/*/*.log
while [ $# -gt 0 ]; do
	batch=("${@:1:40}")
	job json "${batch[@]}"
	shift "${#batch[@]}"
done
for log in fixtures/sample/job.log fixtures/hostile/injection.log \
    fixtures/rules/fragmentation-top.log; do
	job text "$log"
	job markdown "$log"
done
# valgrind cannot see into PCRE2's JIT code and reports false errors there.
export oomdoc tmp OOMDOC_NO_JIT=1
printf '%s\n' "$tmp"/job.* | xargs -n 1 -P 2 sh -c '
	job=$0
	xargs -0 sh -c '"'"'
		fmt=$1; shift
		valgrind --error-exitcode=99 --leak-check=full \
		    --errors-for-leak-kinds=definite,indirect --quiet \
		    "$oomdoc" --format "$fmt" "$@" >/dev/null 2>"$tmp/$$.err"
		rc=$?
		if [ $rc -gt 1 ]; then
			echo "FAIL $fmt $*: exit $rc"; head -20 "$tmp/$$.err"
		else
			echo "ok $fmt ($# inputs)"
		fi'"'"' sh <"$job"' >"$tmp/results"
grep '^FAIL' -A20 "$tmp/results"
pass=$(grep -c '^ok ' "$tmp/results") fail=$(grep -c '^FAIL' "$tmp/results")
echo "$pass runs passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]

#!/usr/bin/env bash
# valgrind memcheck over the golden fixtures: every fixture through the
# JSON report, and a few through the text and Markdown ones; any memory
# error or definite leak fails.  Two at a time.
#
# Usage: tests/valgrind.sh OOMDOC   (from the repository root)
set -u
oomdoc=$1
command -v valgrind >/dev/null || { echo "valgrind not found"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The jobs as NUL-separated (format, log) pairs: a fixture's name may hold
# spaces (fixtures/hostile has one whose name is itself an attack).
{
	for log in fixtures/*/*.log; do printf 'json\0%s\0' "$log"; done
	for log in fixtures/sample/job.log fixtures/hostile/injection.log \
	    fixtures/rules/fragmentation-top.log; do
		printf 'text\0%s\0markdown\0%s\0' "$log" "$log"
	done
} >"$tmp/jobs"
# valgrind cannot see into PCRE2's JIT code and reports false errors there.
export oomdoc tmp OOMDOC_NO_JIT=1
xargs -0 -n 2 -P 2 sh -c '
	fmt=$0 log=$1
	valgrind --error-exitcode=99 --leak-check=full \
	    --errors-for-leak-kinds=definite,indirect --quiet \
	    "$oomdoc" --format "$fmt" "$log" >/dev/null 2>"$tmp/$$.err"
	rc=$?
	if [ $rc -gt 1 ]; then
		echo "FAIL $fmt $log: exit $rc"; head -20 "$tmp/$$.err"
	else
		echo "ok $fmt $log"
	fi' <"$tmp/jobs" >"$tmp/results"
grep '^FAIL' -A20 "$tmp/results"
pass=$(grep -c '^ok ' "$tmp/results") fail=$(grep -c '^FAIL' "$tmp/results")
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]

#!/bin/sh
# coverage.sh: fails when a fuzz target of the fuzz build sees too little of
# the code on its committed corpus, as a target does when the library it
# drives was built without coverage instrumentation (a blind build: the
# target sees only its own few counters, cov: 5 where it should see
# hundreds).  Each target runs once over its corpus (libFuzzer's -runs=0:
# every input once, no fuzzing), and the coverage (cov: edges covered) and
# features (ft:) of its DONE line must reach the minimums in
# tests/fuzz/coverage_min.txt.
#
# Usage: sh tests/fuzz/coverage.sh DIR   (DIR holds the fuzz_* programs;
#        run from the source tree)
set -eu
dir=$1
mins=tests/fuzz/coverage_min.txt
fail=0 n=0
while read -r target cov_min ft_min; do
	case $target in ''|'#'*) continue ;; esac
	n=$((n + 1))
	line=$("$dir/fuzz_$target" -runs=0 "tests/fuzz/corpus/$target" </dev/null 2>&1 |
		grep -E '^#[0-9]+[[:space:]]+DONE ' | tail -1) || true
	cov=$(printf '%s\n' "$line" | sed -n 's/.* cov: \([0-9]*\) .*/\1/p')
	ft=$(printf '%s\n' "$line" | sed -n 's/.* ft: \([0-9]*\) .*/\1/p')
	if [ -z "$cov" ] || [ -z "$ft" ]; then
		echo "fuzz_$target: no DONE line from libFuzzer" >&2
		fail=1
	elif [ "$cov" -lt "$cov_min" ] || [ "$ft" -lt "$ft_min" ]; then
		echo "fuzz_$target: cov $cov ft $ft, below the minimum cov $cov_min ft $ft_min: is the library instrumented (-fsanitize=fuzzer-no-link)?" >&2
		fail=1
	else
		echo "fuzz_$target: cov $cov ft $ft (minimum cov $cov_min ft $ft_min)"
	fi
done < "$mins"
[ "$n" -gt 0 ] || { echo "no target in $mins" >&2; exit 1; }
exit $fail

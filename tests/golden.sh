#!/usr/bin/env bash
# Golden CLI tests: runs oomdoc over every fixtures/*/*.log in each report
# format (text, json, markdown) and compares standard output with
# tests/golden/<dir>/<name>.{text,json,md},
# byte for byte.  Standard error must be empty and the exit status 0 or 1.
#
# Usage: tests/golden.sh OOMDOC [--update]
# With --update the expected files are rewritten from the current output;
# review the diff (git diff tests/golden) before committing it.
# Run from the repository root: the reports name the inputs by the
# relative paths given on the command line.
set -u
oomdoc=$1
update=${2:-}
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for log in fixtures/*/*.log; do
	dir=$(basename "$(dirname "$log")")
	name=$(basename "$log" .log)
	for fmt in text json markdown; do
		ext=$fmt; [ $fmt = markdown ] && ext=md
		want=tests/golden/$dir/$name.$ext
		"$oomdoc" --format "$fmt" --color never "$log" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ "$update" = --update ]; then
			mkdir -p "$(dirname "$want")"
			cp "$tmp/out" "$want"
		fi
		if [ $rc -gt 1 ] || [ -s "$tmp/err" ]; then
			echo "FAIL $log ($fmt): exit $rc: $(head -c 300 "$tmp/err")"
			fail=$((fail + 1))
		elif ! cmp -s "$tmp/out" "$want"; then
			echo "FAIL $log ($fmt): output differs from $want"
			diff -u "$want" "$tmp/out" | head -20
			fail=$((fail + 1))
		else
			pass=$((pass + 1))
		fi
	done
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]

#!/usr/bin/env bash
# Golden CLI tests: runs oomdoc over every fixtures/*/*.log in each report
# format (text, json, markdown) and compares standard output with
# tests/golden/<dir>/<name>.{text,json,md}, byte for byte, and the exit
# status with tests/golden/<dir>/<name>.status (one for the three
# formats).  Standard error must be empty.
#
# Goldens are regression pins, not expectations: they hold what oomdoc
# printed when they were last written, right or wrong, so that any change
# of output shows.  What the output should be is checked elsewhere, from
# the fixtures' text by hand: fixtures/*/*.expect (tests/check_expect.py)
# and the causes of fixtures/rules/*.causes (tests/check_causes.py).
#
# Usage: tests/golden.sh OOMDOC [--update]
# With --update the golden files are rewritten from the current output;
# review the diff (git diff tests/golden) before committing it, and say in
# the commit why the output changed.
# Run from the repository root: the reports name the inputs by the
# relative paths given on the command line.
set -u
oomdoc=$1
update=${2:-}
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The memory snapshots of fixtures/snapshot are inputs as logs are.
for log in fixtures/*/*.log fixtures/snapshot/*.pickle fixtures/snapshot/*.json; do
	dir=$(basename "$(dirname "$log")")
	name=$(basename "$log"); name=${name%.*}
	for fmt in text json markdown; do
		ext=$fmt; [ $fmt = markdown ] && ext=md
		want=tests/golden/$dir/$name.$ext
		# The text report at its default width, 80 (no COLUMNS).
		env -u COLUMNS "$oomdoc" --format "$fmt" --color never "$log" \
		    >"$tmp/out" 2>"$tmp/err"
		rc=$?
		status=tests/golden/$dir/$name.status
		if [ "$update" = --update ]; then
			mkdir -p "$(dirname "$want")"
			cp "$tmp/out" "$want"
			# The text run writes the status; the other formats
			# are then compared with it.
			[ $fmt = text ] && echo $rc >"$status"
		fi
		if [ -s "$tmp/err" ]; then
			echo "FAIL $log ($fmt): exit $rc: $(head -c 300 "$tmp/err")"
			fail=$((fail + 1))
		elif [ "$rc" != "$(cat "$status" 2>/dev/null)" ]; then
			echo "FAIL $log ($fmt): exit status $rc, pinned" \
			    "$(cat "$status" 2>/dev/null || echo "nothing: no $status")"
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
[ "$update" = --update ] && echo "golden files rewritten from the current" \
    "output: they are regression pins, not expectations; review" \
    "git diff tests/golden and say in the commit why the output changed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]

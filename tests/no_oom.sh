#!/usr/bin/env bash
# The must-not-match corpus: every log in fixtures/no-oom/ is a failure or
# a run that is not an out-of-memory failure.  oomdoc must find no event in
# any of them and exit 1, with nothing on standard error.
#
# Usage: tests/no_oom.sh OOMDOC
set -u
oomdoc=$1
pass=0 fail=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for log in fixtures/no-oom/*.log; do
	err=$("$oomdoc" --format json "$log" 2>&1 >"$tmp")
	rc=$?
	# No event at all, not even a warning (which exits 1 too).
	events=$(jq '.events | length' "$tmp" 2>/dev/null)
	if [ $rc -ne 1 ] || [ -n "$err" ] || [ "$events" != 0 ]; then
		echo "FAIL $log: exit $rc (want 1), ${events:-no} events (want 0) $err"
		"$oomdoc" "$log" | head -12
		fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -ge 20 ]

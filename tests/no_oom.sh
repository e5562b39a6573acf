#!/usr/bin/env bash
# The must-not-match corpus: every log in fixtures/no-oom/ is a failure or
# a run that is not an out-of-memory failure.  oomdoc must find no event in
# any of them and exit 1, with nothing on standard error.
#
# Usage: tests/no_oom.sh OOMDOC
set -u
oomdoc=$1
pass=0 fail=0
for log in fixtures/no-oom/*.log; do
	err=$("$oomdoc" --format json "$log" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 1 ] || [ -n "$err" ]; then
		echo "FAIL $log: exit $rc (want 1) $err"
		"$oomdoc" "$log" | head -12
		fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -ge 20 ]

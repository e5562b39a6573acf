#!/usr/bin/env bash
# Fingerprints name the failure, not the job: the same failure in another
# job (other timestamps, process ids, ranks, slightly different figures)
# has the same fingerprint; another cause, or another failing line, has
# another.
#
# Usage: tests/fingerprint.sh OOMDOC   (from the repository root)
set -u
oomdoc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
fp() { "$oomdoc" -f json "$1" | python3 -c \
	'import json,sys; print(json.load(sys.stdin)["summary"]["fingerprint"])'; }

base=fixtures/rules/capacity-top.log
# Another job: other time, figures a little different, a rank prefix.
sed -e 's/2026-11-30 03:00:01,112/2026-12-02 17:45:09,001/' \
    -e 's/76.88 GiB is allocated/76.41 GiB is allocated/' \
    -e 's/1.02 GiB is free/1.31 GiB is free/' \
    -e 's/^torch.OutOfMemoryError/[rank5]: torch.OutOfMemoryError/' \
    "$base" >"$tmp/same.log"
# The same figures, but the failure is in another line of the user's code.
sed -e 's/line 58, in main/line 59, in main/' "$base" >"$tmp/otherline.log"

a=$(fp "$base") b=$(fp "$tmp/same.log") c=$(fp "$tmp/otherline.log")
d=$(fp fixtures/rules/fragmentation-top.log)
[ -n "$a" ] && [ "$a" = "$b" ] && pass=$((pass + 1)) ||
	{ echo "FAIL the same failure in another job: $a vs $b"; fail=$((fail + 1)); }
[ "$a" != "$c" ] && pass=$((pass + 1)) ||
	{ echo "FAIL another failing line kept fingerprint $a"; fail=$((fail + 1)); }
[ "$a" != "$d" ] && pass=$((pass + 1)) ||
	{ echo "FAIL another cause kept fingerprint $a"; fail=$((fail + 1)); }
# Stable across runs and versions of the report: a fixed value.
[ "$(fp fixtures/sample/job.log)" = "$(fp fixtures/sample/job.log)" ] &&
	pass=$((pass + 1)) || { echo "FAIL unstable"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

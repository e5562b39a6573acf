#!/usr/bin/env bash
# Fingerprints name the failure, not the job: the same failure in another
# job (other timestamps, process ids, ranks, slightly different figures)
# has the same fingerprint; another cause, or another failing line, has
# another; and the values are pinned, so that they stay the same from one
# version to the next.
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
# Stable across runs and versions: fixed values.  A user keeps fingerprints
# to match failures across jobs, so these pins change only with the recipe
# (src/lib/fingerprint.c), on purpose, and the commit says so.
while read -r want log; do
	got=$(fp "$log")
	[ "$got" = "$want" ] && pass=$((pass + 1)) ||
		{ echo "FAIL $log: fingerprint $got, pinned $want"; fail=$((fail + 1)); }
done <<'EOF'
f7deec157fa3e8ad fixtures/rules/capacity-top.log
ede271508aea9488 fixtures/rules/fragmentation-top.log
424a0889bf4354ef fixtures/sample/job.log
EOF
[ "$(fp fixtures/sample/job.log)" = "$(fp fixtures/sample/job.log)" ] &&
	pass=$((pass + 1)) || { echo "FAIL unstable"; fail=$((fail + 1)); }
# The recipe, computed here from the log's text: FNV-1a (64 bits) of the
# kind, the top cause, the exception, the error line (none here) and the
# last user frame's file, line and function, each followed by '|'; the
# report's is FNV-1a of its fatal events' distinct fingerprints, sorted.
msg=$("$oomdoc" -f json "$base" | python3 -c '
import json, sys

def fnv(h, s):
    for c in s.encode():
        h = ((h ^ c) * 1099511628211) % 2**64
    return ((h ^ ord("|")) * 1099511628211) % 2**64

OFFSET = 1469598103934665603
j = json.load(sys.stdin)
h = OFFSET
for part in ["cuda_caching_allocator", "capacity", "torch.OutOfMemoryError",
             "", "/work/train.py", "58", "main"]:
    h = fnv(h, part)
event = "%016x" % h
report = "%016x" % fnv(OFFSET, event)
got = (j["events"][0]["fingerprint"], j["summary"]["fingerprint"])
sys.exit(0 if got == (event, report) else
         "computed %s %s, got %s %s" % ((event, report) + got))
' 2>&1) && pass=$((pass + 1)) || { echo "FAIL the recipe: $msg"; fail=$((fail + 1)); }
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

#!/usr/bin/env bash
# The rule loader: every error of a bad file at once, each as
# file:line:col: message, with status 3 (tests/rules/bad/*.err hold the
# exact lines; multiline.err's positions, inside multi-line scalars, were
# counted by hand in multiline.yaml); a directory of more rule files than
# the loader takes is refused, not loaded in part; a diagnosis refuses to
# run with broken rules; user rules replace shipped ones by id, from
# --rules and from OOMDOC_RULES;
# --no-default-rules loads none.
#
# Usage: tests/rules_loading.sh OOMDOC [--update]   (from the repository root)
set -u
oomdoc=$1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL $1"; fail=$((fail + 1)); }

for f in tests/rules/bad/*.yaml; do
	err=$("$oomdoc" rules check "$f" 2>&1 >/dev/null)
	rc=$?
	[ "${2:-}" = --update ] && printf '%s\n' "$err" >"${f%.yaml}.err"
	if [ $rc -eq 3 ] && [ "$err" = "$(cat "${f%.yaml}.err")" ]; then ok; else
		ko "$f: exit $rc; stderr differs from ${f%.yaml}.err:"
		diff <(printf '%s\n' "$err") "${f%.yaml}.err" | head -10
	fi
done

# 256 rule files in a directory load; 257 are refused with the directory
# named.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/rules"
for i in $(seq 1 256); do
	printf 'id: r%d\ntitle: t\nwhen: requested > 0\nscore: 0.5\nexplain: x\n' \
		"$i" >"$tmp/rules/r$i.yaml"
done
[ "$("$oomdoc" rules check --no-default-rules "$tmp/rules" 2>&1)" = \
    "oomdoc: 256 rules, no errors" ] && ok || ko "256 rule files in a directory"
cp "$tmp/rules/r1.yaml" "$tmp/rules/r257.yml"
err=$("$oomdoc" rules check --no-default-rules "$tmp/rules" 2>&1 >/dev/null)
[ $? -eq 3 ] && [ "$err" = "oomdoc: $tmp/rules: a rules directory may hold at most 256 rule files (*.yaml, *.yml), this one holds 257" ] &&
	ok || ko "257 rule files in a directory: $err"

# Eleven rules fire, and the event keeps the eight best (OD_CAUSES_MAX),
# not the first eight loaded: scores 0.10 (loaded first) to 1.00, and one
# more 0.30 loaded last, which ranks after the first 0.30 and goes.
{
	echo "rules:"
	n=0
	for score in 0.10 0.20 0.30 0.40 0.50 0.60 0.70 0.80 0.90 1.00 0.30; do
		n=$((n + 1))
		printf '  - {id: r%d, title: t, when: has(requested), score: %s, explain: x}\n' \
			$n $score
	done
} >"$tmp/eleven.yaml"
got=$("$oomdoc" --no-default-rules --rules "$tmp/eleven.yaml" -f json fixtures/rules/capacity-top.log |
	python3 -c 'import json,sys; print(" ".join("%s:%.2f" % (c["rule"], c["score"]) for c in json.load(sys.stdin)["events"][0]["causes"]))')
[ "$got" = "r10:1.00 r9:0.90 r8:0.80 r7:0.70 r6:0.60 r5:0.50 r4:0.40 r3:0.30" ] && ok ||
	ko "an event for which eleven rules fire keeps: $got"

out=$("$oomdoc" --rules tests/rules/bad/many-errors.yaml fixtures/sample/job.log 2>/dev/null)
rc=$?
[ $rc -eq 3 ] && [ -z "$out" ] && ok || ko "a diagnosis with broken rules: exit $rc"

"$oomdoc" rules check rules >/dev/null && ok || ko "the shipped rules do not lint clean"

top() { "$oomdoc" -f json "$@" | python3 -c \
	'import json,sys; print(json.load(sys.stdin)["summary"]["top_cause"])'; }
[ "$(top --rules tests/rules/override fixtures/rules/capacity-top.log)" = capacity ] &&
	"$oomdoc" --rules tests/rules/override -f json fixtures/rules/capacity-top.log |
	grep -q 'Site policy' && ok || ko "--rules did not replace the shipped capacity rule"
OOMDOC_RULES=tests/rules/override "$oomdoc" rules show capacity |
	grep -q 'tests/rules/override/capacity.yaml' && ok ||
	ko "OOMDOC_RULES did not replace the shipped capacity rule"
[ "$("$oomdoc" rules list --no-default-rules 2>&1)" = "" ] &&
	ok || ko "--no-default-rules still loaded rules"
[ "$(top --no-default-rules fixtures/rules/capacity-top.log)" = None ] && ok ||
	ko "--no-default-rules: a cause was found without rules"
"$oomdoc" rules show no_such_rule 2>/dev/null; [ $? -eq 2 ] && ok || ko "rules show of an unknown id"
"$oomdoc" rules frobnicate 2>/dev/null; [ $? -eq 2 ] && ok || ko "an unknown rules verb"

# --fact supplies what the log lacks, and refuses what it cannot use.
"$oomdoc" --fact batch_size=64 -f json fixtures/rules/capacity-top.log |
	grep -q 'Lower the per-device batch size from 64 to' && ok ||
	ko "--fact batch_size=64 was not used by the capacity fix"
"$oomdoc" --fact bogus=1 fixtures/sample/job.log >/dev/null 2>&1; [ $? -eq 2 ] && ok ||
	ko "--fact with an unknown name was accepted"
"$oomdoc" --fact total=lots fixtures/sample/job.log >/dev/null 2>&1; [ $? -eq 2 ] && ok ||
	ko "--fact total=lots was accepted"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

#!/usr/bin/env bash
# The rule loader: every error of a bad file at once, each as
# file:line:col: message, with status 3 (tests/rules/bad/*.err hold the
# exact lines; multiline.err's positions, inside multi-line scalars, were
# counted by hand in multiline.yaml); a directory of more rule files than
# the loader takes is refused, not loaded in part; a diagnosis refuses to
# run with broken rules; user rules replace shipped ones by id, from
# --rules and from OOMDOC_RULES;
# --no-default-rules loads none; rule paths that are not regular files
# (FIFOs, directories named *.yaml) are refused without blocking, a second
# YAML document and a bad env: name are errors, and loading is linear.
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

# Rule paths must be regular files, checked before they are read: a FIFO
# named directly, through a *.yaml symlink in a rules directory, or
# through OOMDOC_RULES is refused at once (it used to block forever), and
# so is a directory named *.yaml inside a rules directory.  Each error
# names the file.
mkfifo "$tmp/fifo.yaml"
mkdir "$tmp/linkdir" "$tmp/dirdir" "$tmp/dirdir/sub.yaml"
ln -s "$tmp/fifo.yaml" "$tmp/linkdir/a.yaml"
fifo_case() { # NAME EXPECTED-STDERR COMMAND...
	local name=$1 want=$2 err rc
	shift 2
	err=$(timeout 10 "$@" 2>&1 >/dev/null)
	rc=$?
	[ $rc -eq 3 ] && [ "$err" = "$want" ] && ok || ko "$name: exit $rc: $err"
}
fifo_case "a FIFO as --rules" \
	"oomdoc: $tmp/fifo.yaml: not a regular file (a FIFO): a rule file must be one" \
	"$oomdoc" rules check --no-default-rules --rules "$tmp/fifo.yaml"
fifo_case "a FIFO through a symlink in a rules directory" \
	"oomdoc: $tmp/linkdir/a.yaml: not a regular file (a FIFO): a rule file must be one" \
	"$oomdoc" rules check "$tmp/linkdir"
fifo_case "a FIFO through OOMDOC_RULES" \
	"oomdoc: $tmp/fifo.yaml: not a regular file (a FIFO): a rule file must be one" \
	env OOMDOC_RULES="$tmp/fifo.yaml" "$oomdoc" fixtures/sample/job.log
fifo_case "a directory named *.yaml in a rules directory" \
	"oomdoc: $tmp/dirdir/sub.yaml: not a regular file (a directory): a rule file must be one" \
	"$oomdoc" rules check "$tmp/dirdir"

# A second YAML document would be ignored: it is an error at its '---'.
printf 'id: a1\ntitle: t\nwhen: requested > 0\nscore: 0.5\nexplain: x\n---\nid: a2\ntitle: t\nwhen: requested > 0\nscore: 0.5\nexplain: x\n' >"$tmp/two.yaml"
err=$("$oomdoc" rules check "$tmp/two.yaml" 2>&1 >/dev/null)
[ $? -eq 3 ] && [ "$err" = "oomdoc: $tmp/two.yaml:6:1: a second YAML document ('---'): a rule file holds one; put its rules in the first one's list, or in a file of their own" ] &&
	ok || ko "a second YAML document: $err"

# env: names must be environment variable names.
for bad in '1ABC' 'A-B' 'A B' 'A=B' ''; do
	printf 'id: e1\ntitle: t\nwhen: requested > 0\nscore: 0.5\nexplain: x\nfixes:\n  - {id: f, text: t, env: {"%s": v}}\n' "$bad" >"$tmp/env.yaml"
	err=$("$oomdoc" rules check "$tmp/env.yaml" 2>&1 >/dev/null)
	[ $? -eq 3 ] && case $err in *"is not an environment variable name"*) true ;; *) false ;; esac &&
		ok || ko "env: name '$bad' was accepted: $err"
done
printf 'id: e1\ntitle: t\nwhen: requested > 0\nscore: 0.5\nexplain: x\nfixes:\n  - {id: f, text: t, env: {_My_VAR2: v}}\n' >"$tmp/env.yaml"
"$oomdoc" rules check "$tmp/env.yaml" >/dev/null 2>&1 && ok || ko "env: name _My_VAR2 was refused"

# Many rules load whole and replace each other by id: three directories
# of 256 files of 64 rules each (49,152 rules), the last directory's rules
# replacing the first's.  The timeout only guards against a hang; how the
# loading time grows with the number of rules is measured by
# bench/rules.sh, not here (14 s for these before the index by id, under a
# second after).
python3 - "$tmp/many" <<'PY'
import os, sys
for d in range(3):
    os.makedirs(f"{sys.argv[1]}/d{d}")
    for f in range(256):
        with open(f"{sys.argv[1]}/d{d}/f{f:03d}.yaml", "w") as o:
            o.write("rules:\n")
            for r in range(64):
                i = d % 2
                o.write(f"  - {{id: r{i}_{f}_{r}, title: t{d}, when: requested > 0, score: 0.5, explain: x}}\n")
PY
out=$(timeout 120 "$oomdoc" rules list --no-default-rules --rules "$tmp/many/d0" \
	--rules "$tmp/many/d1" --rules "$tmp/many/d2" 2>&1)
[ "$(printf '%s\n' "$out" | wc -l)" -eq 32768 ] &&
	[ "$(printf '%s\n' "$out" | grep -c ' t2  ')" -eq 16384 ] &&
	ok || ko "49,152 rules ($(printf '%s\n' "$out" | head -1))"

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

#!/usr/bin/env bash
# The recognisers as data (rules/recognisers.yaml, RECOGNISERS in
# oomdoc(1)): every shipped example passes `rules check`; a user's file
# adds a recogniser that a diagnosis then uses, or replaces a shipped one
# by id; each kind of failure of a recogniser is reported as
# file:line:col: message at the example, field or anchor that failed
# (tests/recognisers/*.err hold the exact lines, their positions counted
# by hand in the .yaml beside them); a pathological pattern is stopped at
# PCRE2's match limit with its id named, and fast; --no-default-rules
# leaves the shipped recognisers out.
#
# Usage: tests/recognisers.sh OOMDOC [--update]   (from the repository root)
set -u
oomdoc=$1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL $1"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The shipped recognisers, alone: each with its examples, all counted.
n=$(grep -c '^  - id: ' rules/recognisers.yaml)
ex=$(grep -c '^      - text: ' rules/recognisers.yaml)
out=$("$oomdoc" rules check rules/recognisers.yaml 2>&1)
[ "$out" = "oomdoc: 0 rules, $n recognisers ($ex examples), no errors" ] && ok ||
	ko "the shipped recognisers do not check clean ($n, $ex): $out"

# The bad files: every error at once, status 3.
for f in tests/recognisers/bad*.yaml tests/recognisers/pathological.yaml; do
	err=$("$oomdoc" rules check "$f" 2>&1 >/dev/null)
	rc=$?
	[ "${2:-}" = --update ] && printf '%s\n' "$err" >"${f%.yaml}.err"
	if [ $rc -eq 3 ] && [ "$err" = "$(cat "${f%.yaml}.err")" ]; then ok; else
		ko "$f: exit $rc; stderr differs from ${f%.yaml}.err:"
		diff <(printf '%s\n' "$err") "${f%.yaml}.err" | head -10
	fi
done

# A pathological pattern costs a bounded time: PCRE2's limit, not 2^39
# steps.
start=$(date +%s%N)
"$oomdoc" rules check tests/recognisers/pathological.yaml >/dev/null 2>&1
ms=$((($(date +%s%N) - start) / 1000000))
[ "$ms" -lt 5000 ] && ok || ko "the pathological pattern took $ms ms"
# And a diagnosis with it over lines it backtracks on stops it after
# SK_STRIKES searches, names it, and ends quickly.
printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\n%.0s' $(seq 2000) >"$tmp/a.log"
start=$(date +%s%N)
err=$(timeout 20 "$oomdoc" --no-default-rules --rules \
	tests/recognisers/pathological.yaml "$tmp/a.log" 2>&1 >/dev/null)
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ $rc -eq 1 ] && [ "$ms" -lt 5000 ] && ok ||
	ko "diagnosis with a pathological pattern: status $rc (want 1), $ms ms"
[ "$err" = "oomdoc: tests/recognisers/pathological.yaml:4:5: recogniser 'runaway' was stopped: its pattern reached PCRE2's match or depth limit 4 times, and read nothing after that (see oomdoc rules check)" ] &&
	ok || ko "the stopped recogniser's message: $err"

# A user's recogniser is checked and used.
out=$("$oomdoc" rules check tests/recognisers/new-stack.yaml 2>&1)
[ "$out" = "oomdoc: 0 rules, 2 recognisers (2 examples), no errors" ] && ok ||
	ko "new-stack.yaml: $out"
got=$("$oomdoc" --rules tests/recognisers/new-stack.yaml --format json \
	tests/recognisers/toylib.log | jq -c '[.events[] | [.line, .kind,
	.framework, .confidence, .memory.requested_bytes, .device]]')
[ "$got" = '[[2,"cuda_raw","toylib","medium",2097152,3]]' ] && ok ||
	ko "the user's recogniser gave $got"
# Without it the line is no event (the fallback does not take it either).
"$oomdoc" tests/recognisers/toylib.log >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] && ok || ko "toylib.log without the recogniser: status $rc (want 1)"

# A shipped recogniser replaced by id, in its place: cupy's, with a
# confidence of medium.
sed -n '/^  - id: cupy-out-of-memory$/,/^$/p' rules/recognisers.yaml |
	sed 's/confidence: high/confidence: medium/' >"$tmp/body"
{ echo "recognisers:"; cat "$tmp/body"; } >"$tmp/cupy.yaml"
got=$("$oomdoc" --rules "$tmp/cupy.yaml" --format json \
	fixtures/stacks/cupy-out-of-memory-allocating.log | jq -r '.events[0].confidence')
[ "$got" = medium ] && ok || ko "replacing cupy-out-of-memory by id: confidence $got"
out=$("$oomdoc" rules check --rules "$tmp/cupy.yaml" 2>&1)
case $out in *", $n recognisers ("*) ok ;; *) ko "replaced, not added: $out" ;; esac

# --no-default-rules: no shipped recognisers, so only the fallback reads
# a cupy message.
got=$("$oomdoc" --no-default-rules --format json \
	fixtures/stacks/cupy-out-of-memory-allocating.log | jq -r '[.events[].kind] | unique | join(",")')
[ "$got" = unrecognised ] && ok || ko "--no-default-rules kinds: $got"
# --list-anchors lists the loaded recognisers' anchors.
"$oomdoc" --list-anchors | grep -qx 'Out of memory allocating' && ok ||
	ko "--list-anchors lacks a shipped recogniser's anchor"
"$oomdoc" --no-default-rules --list-anchors | grep -qx 'Out of memory allocating' &&
	ko "--no-default-rules --list-anchors lists a shipped recogniser's anchor" || ok

echo "recognisers: $pass passed, $fail failed"
[ $fail -eq 0 ]

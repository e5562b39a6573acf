#!/usr/bin/env bash
# The GitHub Actions step of contrib/github-actions, run as the runner runs
# it: oomdoc-step.sh with GITHUB_STEP_SUMMARY and GITHUB_OUTPUT set to
# temporary files (the summary already holding an earlier step's text).
#  - a log with a failure: its annotations on standard output (those of
#    oomdoc --format github), the Markdown report appended to the summary
#    after what was there, found=true, status 0 (1 with fail-on-oom);
#  - a log without one: a notice, a line in the summary, found=false;
#  - a missing log: oomdoc's status 2, no summary, no output;
#  - a name with a space, given through a glob;
#  - action.yml runs this script and hands it the inputs as environment
#    variables only (no ${{ }} in the run line, where text would become
#    shell code).
#
# Usage: tests/github_action.sh OOMDOC   (from the repository root)
set -u
oomdoc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
step=contrib/github-actions/oomdoc-step.sh
action=contrib/github-actions/action.yml
fail=0 pass=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() {   # check NAME STATUS
	if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else
		echo "FAIL $1"; fail=$((fail + 1)); fi
}
# run LOGS [FAIL_ON_OOM]: the step, its status in $rc.
run() {
	printf 'earlier step\n' >"$tmp/summary"
	: >"$tmp/output"
	OOMDOC=$oomdoc OOMDOC_LOGS=$1 OOMDOC_FAIL_ON_OOM=${2:-false} \
	GITHUB_STEP_SUMMARY=$tmp/summary GITHUB_OUTPUT=$tmp/output \
		bash "$step" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

log=fixtures/sample/job.log
run "$log"
[ $rc -eq 0 ]; check "a failure: status $rc" $?
"$oomdoc" --format github "$log" >"$tmp/want"
cmp -s "$tmp/out" "$tmp/want"; check "a failure: the annotations differ from --format github" $?
grep -q "^::error file=$log,line=16,title=oomdoc: " "$tmp/out"
check "a failure: no error annotation at $log line 16: $(head -c 200 "$tmp/out")" $?
{ printf 'earlier step\n'; "$oomdoc" --format markdown --color never "$log"; } >"$tmp/want"
cmp -s "$tmp/summary" "$tmp/want"; check "a failure: the summary is not the earlier text and the Markdown report" $?
[ "$(cat "$tmp/output")" = found=true ]; check "a failure: output $(cat "$tmp/output")" $?
[ ! -s "$tmp/err" ]; check "a failure: stderr $(cat "$tmp/err")" $?
run "$log" true
[ $rc -eq 1 ]; check "fail-on-oom: status $rc" $?

none=$(ls fixtures/no-oom/*.log | head -1)
run "$none"
[ $rc -eq 0 ] && [ "$(cat "$tmp/output")" = found=false ]
check "no failure: status $rc, output $(cat "$tmp/output")" $?
grep -q '^::notice title=oomdoc::No out-of-memory failure found in 1 input' "$tmp/out"
check "no failure: no notice: $(cat "$tmp/out")" $?
[ "$(sed -n 2p "$tmp/summary")" = "oomdoc found no out-of-memory failure in the logs." ]
check "no failure: the summary: $(cat "$tmp/summary")" $?

run "$tmp/missing.log"
[ $rc -eq 2 ] && [ "$(cat "$tmp/summary")" = "earlier step" ] && [ ! -s "$tmp/output" ]
check "a missing log: status $rc, summary $(cat "$tmp/summary")" $?
grep -q '^::error title=oomdoc::oomdoc exited with status 2' "$tmp/out"
check "a missing log: no error annotation: $(cat "$tmp/out")" $?

mkdir "$tmp/logs"
cp "$log" "$tmp/logs/rank 0.log"
run "$tmp/logs/*.log"
[ $rc -eq 0 ] && grep -q "^::error file=$tmp/logs/rank 0.log,line=16," "$tmp/out"
check "a glob and a name with a space: status $rc: $(head -c 200 "$tmp/out")" $?

grep -q 'run: bash "$GITHUB_ACTION_PATH/oomdoc-step.sh"$' "$action"
check "action.yml does not run oomdoc-step.sh" $?
! grep -n 'run:.*\${{' "$action"
check "action.yml puts an expression into its run line" $?
for v in OOMDOC OOMDOC_LOGS OOMDOC_FAIL_ON_OOM; do
	grep -q "^        $v: \${{ inputs\." "$action" && grep -q "\$$v\|{$v" "$step"
	check "$v is not handed from action.yml to the step" $?
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

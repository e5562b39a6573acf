#!/usr/bin/env bash
# --follow: a log that grows, is rotated by rename and is truncated, read
# as `tail -F` reads it, with --format jsonl writing each event as it
# completes:
#  1. the first OOM, appended in two steps, comes out as one line within
#     a few seconds (the idle flush is 500 ms), with its line in the file;
#  2. after `mv job.log job.log.1` and a new job.log, the new file's OOM,
#     with its line counted from the new file's start;
#  3. after truncation (`: > job.log`) and a third OOM appended, that one,
#     its line counted from the start again;
#  4. SIGTERM: status 143, nothing on standard error, no event written
#     twice; the text report after SIGINT: status 130, the events in it;
#  5. usage: --follow with no file, standard input or two files is status 2.
#
# Usage: tests/follow.sh OOMDOC   (from the repository root)
set -u
oomdoc=$1
F=fixtures
fail=0 pass=0
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
check() {   # check NAME STATUS
	if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else
		echo "FAIL $1"; fail=$((fail + 1)); fi
}
# lines N: waits up to 10 s for $tmp/out to have N lines.
lines() {
	local k
	for k in $(seq 100); do
		[ "$(wc -l <"$tmp/out")" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# field N KEY: KEY of the Nth line of $tmp/out.
field() {
	sed -n "$1p" "$tmp/out" | python3 -c \
	    "import json, sys; print(json.load(sys.stdin)['$2'])"
}
# A job that goes on after its OOM report, so that no event waits for
# the lines that may still join it.
more() {
	local k
	for k in $(seq 25); do echo "step $k loss 0.5"; done
}

log=$tmp/job.log
printf 'job starting\n' >"$log"
"$oomdoc" --follow --format jsonl "$log" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 0.5
# 1. The sample's OOM (its line 16, here 17) in two steps.
head -n 10 $F/sample/job.log >>"$log"
sleep 0.3
tail -n +11 $F/sample/job.log >>"$log"
lines 1; check "1. no event after the first OOM was appended" $?
[ "$(field 1 line)" = 17 ] && [ "$(field 1 kind)" = cuda_caching_allocator ]
check "1. the event: line $(field 1 line), kind $(field 1 kind)" $?

# 2. Rotation by rename, a new file at the name.
mv "$log" "$log.1"
{ cat $F/stacks/cuda-driver-error-oom.log; more; } >"$log"
want=$("$oomdoc" -f jsonl $F/stacks/cuda-driver-error-oom.log | python3 -c \
    "import json, sys; print(json.load(sys.stdin)['line'])")
lines 2; check "2. no event after the rotation" $?
[ "$(field 2 line)" = "$want" ] && [ "$(field 2 kind)" = cuda_raw ] &&
	[ "$(field 2 input)" = "$log" ]
check "2. the event: line $(field 2 line) (want $want), kind $(field 2 kind)" $?

# 3. Truncation, then a third OOM.
: >"$log"
sleep 0.5
{ cat $F/stacks/cublas-alloc-failed-cublascreate.log; more; } >>"$log"
want=$("$oomdoc" -f jsonl $F/stacks/cublas-alloc-failed-cublascreate.log |
    python3 -c "import json, sys; print(json.load(sys.stdin)['line'])")
lines 3; check "3. no event after the truncation" $?
[ "$(field 3 line)" = "$want" ] && [ "$(field 3 kind)" = cublas ]
check "3. the event: line $(field 3 line) (want $want), kind $(field 3 kind)" $?

# 4. SIGTERM ends it: 128 + 15, nothing more.
sleep 0.3
kill -TERM $pid
wait $pid
rc=$?
pid=
[ $rc -eq 143 ]; check "4. status $rc after SIGTERM, not 143" $?
[ ! -s "$tmp/err" ]; check "4. standard error: $(cat "$tmp/err")" $?
[ "$(wc -l <"$tmp/out")" -eq 3 ]
check "4. $(wc -l <"$tmp/out") lines, not 3 (an event written twice?)" $?

# The text report, after SIGINT: the event of what was read.
cp $F/sample/job.log "$log"
"$oomdoc" --follow --color never "$log" >"$tmp/text" 2>"$tmp/err" &
pid=$!
sleep 2   # time to read the file, on a loaded machine too
kill -INT $pid
wait $pid
rc=$?
pid=
[ $rc -eq 130 ]; check "4. text report: status $rc after SIGINT, not 130" $?
grep -q "line 16" "$tmp/text" && [ ! -s "$tmp/err" ]
check "4. text report: no event at line 16, or stderr: $(head -c 300 "$tmp/text") $(cat "$tmp/err")" $?

# 5. Usage errors.
for args in "" "-" "$log $log.1"; do
	# shellcheck disable=SC2086
	"$oomdoc" --follow $args </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q "^oomdoc: --follow reads one named file" "$tmp/err"
	check "5. --follow $args: status $rc, $(cat "$tmp/err")" $?
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

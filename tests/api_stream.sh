#!/usr/bin/env bash
# The streaming example (examples/stream.c) against the command: for each
# log, the example's lines (LINE, KIND, REQUESTED, one per event, printed
# as the events complete while standard input is read in 4096-byte
# chunks) must equal the line, kind and requested_bytes of the events of
# `oomdoc --format json` on the same file, in the same order; its exit
# status must be 0 with events, 1 without, 2 on an input error.
#
# Usage: tests/api_stream.sh STREAM OOMDOC
# Run from the repository root.
set -u
stream=$1
oomdoc=$2
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Many events in one input: the PyTorch and stacks fixtures one after the
# other; and again twice, with 4 MiB of filler lines between, so that the
# 1 MiB scan buffer is moved many times.
cat fixtures/pytorch/*.log fixtures/stacks/*.log >"$tmp/multi.log"
awk 'BEGIN { for (i = 0; i < 120000; i++)
	printf "epoch 3 step %d loss 0.2513 lr 1e-4 mem 31.2 GiB\n", i }' \
	>"$tmp/filler.log"
cat "$tmp/multi.log" "$tmp/filler.log" "$tmp/multi.log" "$tmp/filler.log" \
	fixtures/stacks/kernel-oom-killer-global.log >"$tmp/big.log"

check() {
	local log=$1 want_rc=$2 rc
	"$stream" rules <"$log" >"$tmp/got" 2>"$tmp/err"
	rc=$?
	"$oomdoc" --no-default-rules --rules rules/recognisers.yaml --format json "$log" 2>/dev/null |
		python3 -c '
import json, sys
for e in json.load(sys.stdin)["events"]:
    r = e["memory"]["requested_bytes"]
    print("%d\t%s\t%s" % (e["line"], e["kind"], "-" if r is None else r))
' >"$tmp/want"
	if [ $rc -ne "$want_rc" ] || [ -s "$tmp/err" ]; then
		echo "FAIL $log: exit $rc (want $want_rc) $(head -c 300 "$tmp/err")"
		fail=$((fail + 1))
	elif ! cmp -s "$tmp/want" "$tmp/got"; then
		echo "FAIL $log: the example's events differ from oomdoc's"
		diff -u "$tmp/want" "$tmp/got" | head -20
		fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
}

for log in fixtures/sample/job.log \
	fixtures/pytorch/two_distinct_ooms.log \
	fixtures/pytorch/alloc_warning_then_oom.log \
	fixtures/pytorch/rank_prefix_multi.log \
	fixtures/pytorch/crlf_windows.log \
	fixtures/pytorch/same_oom_twice.log \
	fixtures/stacks/kernel-oom-killer-global.log \
	fixtures/stacks/dataloader-worker-killed.log \
	fixtures/stacks/torchrun-childfailed-sigkill.log \
	fixtures/stacks/jax-replica-failed-echo.log \
	fixtures/stacks/chainer-cupy-echo.log \
	"$tmp/multi.log" "$tmp/big.log"; do
	check "$log" 0
done
# Each line above is an event: the multi-event inputs must have many.
[ "$(wc -l <"$tmp/got")" -ge 50 ] || { echo "FAIL big.log: few events"; fail=$((fail + 1)); }
check fixtures/no-oom/cuda-illegal-memory-access.log 1
[ -s "$tmp/got" ] && { echo "FAIL no-oom: lines printed"; fail=$((fail + 1)); }

# An input that cannot be read (a directory): status 2 and a message.
"$stream" rules <fixtures >"$tmp/got" 2>"$tmp/err"
rc=$?
if [ $rc -ne 2 ] || ! [ -s "$tmp/err" ]; then
	echo "FAIL unreadable input: exit $rc (want 2), stderr: $(cat "$tmp/err")"
	fail=$((fail + 1))
else
	pass=$((pass + 1))
fi

# A filter: the event comes out while standard input is still open, once
# enough text follows it.
mkfifo "$tmp/fifo"
"$stream" rules <"$tmp/fifo" >"$tmp/live" &
pid=$!
exec 3>"$tmp/fifo"
cat fixtures/sample/job.log "$tmp/filler.log" | head -c 200000 >&3
for _ in $(seq 200); do
	[ -s "$tmp/live" ] && break
	sleep 0.05
done
early=$(cat "$tmp/live")
exec 3>&-
wait $pid
rc=$?
if [ -z "$early" ] || [ $rc -ne 0 ] ||
	! cmp -s "$tmp/live" <(printf '%s\n' "$early"); then
	echo "FAIL streaming: before the end of input: '$early'; exit $rc"
	fail=$((fail + 1))
else
	pass=$((pass + 1))
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

#!/bin/sh
# run.sh: fuzzes one target of the fuzz build for a while, gently (nice 19,
# one process), from its committed corpus and with its dictionary, and
# prints libFuzzer's last status line.  New inputs collect in
# BUILD/fuzz-work/TARGET; merge those that add coverage into the committed
# corpus with --merge (libFuzzer's -merge=1 keeps only inputs with new
# features).
#
# Usage: sh tests/fuzz/run.sh BUILD TARGET SECONDS [--merge]
#   e.g. sh tests/fuzz/run.sh build-fuzz scan 300 --merge
# BUILD is a tree configured with CC=clang -DOOMDOC_FUZZ=ON.  FUZZ_FLAGS
# in the environment adds libFuzzer flags, e.g. "-fork=1 -ignore_crashes=1"
# to go on past a known crash (each one is kept in BUILD/fuzz-work/TARGET/
# crashes/ all the same).  FUZZ_NICE sets the niceness (19 unless told).
# BUILD/fuzz-work/TARGET.series gets the time (seconds since the epoch) and
# libFuzzer's last status line every 30 seconds, to judge a plateau by time
# as well as by runs.
set -eu
build=$1 target=$2 secs=$3 merge=${4:-}
bin=$build/tests/fuzz_$target
corpus=tests/fuzz/corpus/$target
work=$build/fuzz-work/$target
# The log beside the work corpus, not in it: libFuzzer reads every file
# of a corpus directory as an input.
log=$build/fuzz-work/$target.log
mkdir -p "$work" "$work/crashes"
# The sanitizers' options are exported: set on a line of their own before
# a comment, as they were, they stayed shell variables the target never
# saw.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS UBSAN_OPTIONS
series=$build/fuzz-work/$target.series
: > "$series"
# shellcheck disable=SC2086
nice -n "${FUZZ_NICE:-19}" "$bin" ${FUZZ_FLAGS:-} -dict="tests/fuzz/dict/$target.dict" \
	-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$work/crashes/" \
	"$work" "$corpus" > "$log" 2>&1 &
pid=$!
# The series: every 30 s, the time and the last status line so far.
(
	while kill -0 "$pid" 2>/dev/null; do
		sleep 30
		line=$(grep -E '^#[0-9]+[[:space:]]+(INITED|NEW|REDUCE|pulse|DONE)' \
			"$log" | tail -1) || true
		[ -n "$line" ] && printf '%s %s\n' "$(date +%s)" "$line" >> "$series"
	done
) &
sampler=$!
rc=0
wait "$pid" || rc=$?
kill "$sampler" 2>/dev/null || true
if [ "$rc" -ne 0 ]; then
	echo "fuzz_$target stopped: see $log and $work/crashes/" >&2
	tail -40 "$log" >&2
	exit 1
fi
grep -E '^#[0-9]+[[:space:]]*(INITED|DONE)|^#[0-9]+: cov:' "$log" | tail -2
grep -E '^stat::' "$log"
if [ "$merge" = --merge ]; then
	"$bin" -merge=1 "$corpus" "$work" 2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new files'
fi

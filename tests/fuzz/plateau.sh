#!/bin/sh
# plateau.sh: fuzzes one target of the fuzz build until its coverage
# plateaus or a time limit passes, and logs the way there.  The plateau is
# RESULTS.md's: no new edge (libFuzzer's cov) in the last 10 minutes and
# fewer than 1% new features (ft) in those 10 minutes, both read from
# libFuzzer's status lines sampled every 30 s.  The run then gets SIGINT,
# on which libFuzzer still prints its final stats.
#
# Usage: sh tests/fuzz/plateau.sh BUILD TARGET MAX_SECONDS [WINDOW_SECONDS]
#   e.g. sh tests/fuzz/plateau.sh build-fuzz report_read 1500
# One fuzzing process (libFuzzer's -jobs=1 -workers=1: a parent that starts
# one fuzzing child, whose log is fuzz-0.log), at the niceness of the
# caller unless FUZZ_NICE is set, with its dictionary, -timeout=10
# -rss_limit_mb=2048 -print_final_stats=1, from the work corpus
# BUILD/fuzz-work/TARGET and the committed one.  BUILD/fuzz-work/
# TARGET.series gets one line per sample: seconds since the epoch, seconds
# into the run, the three load averages, the fuzzing process's CPU seconds
# (user + sys) and libFuzzer's last status line.  Merge afterwards with
# libFuzzer's -merge=1, as run.sh --merge does.
set -eu
build=$(cd "$1" && pwd) target=$2 max=$3 window=${4:-600}
src=$(pwd)
bin=$build/tests/fuzz_$target
corpus=$src/tests/fuzz/corpus/$target
work=$build/fuzz-work/$target
run=$build/fuzz-work/$target.run
series=$build/fuzz-work/$target.series
mkdir -p "$work" "$work/crashes" "$run"
rm -f "$run/fuzz-0.log"
: > "$series"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS UBSAN_OPTIONS
# libFuzzer writes the child's log to fuzz-0.log in its working directory,
# so the parent runs in a directory of its own (beside the work corpus,
# not in it: libFuzzer reads every file of a corpus as an input).
#
# Where the kernel groups processes by session for scheduling
# (/proc/sys/kernel/sched_autogroup_enabled), a process's niceness weighs
# only against the processes of its own session: the other sessions'
# `nice -n 15` then gives this one no more than its share of one session
# among the busy ones (on the 2-vCPU machine of RESULTS.md, 44% of a core
# at a load of 8 to 13).  FUZZ_AUTOGROUP_NICE=N runs the fuzzer in a
# session of its own (setsid) and gives that session's group the niceness
# N (sched(7), "The autogroup feature"; N below 0 needs root), so that it
# gets a core however many sessions are busy.
(
	cd "$run"
	set --
	if [ -n "${FUZZ_AUTOGROUP_NICE:-}" ]; then
		# shellcheck disable=SC2016
		set -- setsid -w sh -c 'echo "$0" > /proc/self/autogroup && exec "$@"' \
			"$FUZZ_AUTOGROUP_NICE"
	fi
	exec "$@" nice -n "${FUZZ_NICE:-0}" "$bin" -jobs=1 -workers=1 \
		-dict="$src/tests/fuzz/dict/$target.dict" -max_total_time="$max" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$work/crashes/" "$work" "$corpus" \
		> "$run/parent.log" 2>&1
) &
parent=$!
log=$run/fuzz-0.log
start=$(date +%s)
# The fuzzing child: the process whose parent is the shell that libFuzzer
# starts for the job (or libFuzzer itself, where it runs the job directly).
child_pid() {
	first=$(ps -o pid= --ppid "$parent" | head -1 | tr -d ' ')
	for p in $first $(ps -o pid= --ppid "${first:-0}" 2>/dev/null); do
		case $(ps -o comm= -p "$p") in fuzz_*) echo "$p"; return ;; esac
	done
}
# The cov and ft of a status line.
field() { printf '%s\n' "$2" | sed -n "s/.* $1: \([0-9]*\) .*/\1/p"; }
child=
while kill -0 "$parent" 2>/dev/null; do
	sleep 30
	[ -n "$child" ] || child=$(child_pid) || true
	now=$(date +%s)
	line=$(grep -E '^#[0-9]+[[:space:]]+(INITED|NEW|REDUCE|pulse|DONE)' \
		"$log" 2>/dev/null | tail -1) || true
	cpu=-
	if [ -n "$child" ] && [ -r "/proc/$child/stat" ]; then
		# utime and stime, fields 14 and 15, in clock ticks.
		cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f", ($14 + $15) / hz }' \
			"/proc/$child/stat")
	fi
	[ -n "$line" ] || continue
	printf '%s %s %s %s %s\n' "$now" $((now - start)) \
		"$(cut -d' ' -f1-3 /proc/loadavg)" "$cpu" "$line" >> "$series"
	# The plateau: the sample at least WINDOW seconds old, taken after
	# the corpus was read (INITED), has the cov of now and 99% of its ft.
	old=$(awk -v t=$((now - window)) '$1 <= t' "$series" | tail -1)
	[ -n "$old" ] || continue
	grep -q INITED "$log" || continue
	cov=$(field cov "$line") ft=$(field ft "$line")
	ocov=$(field cov "$old") oft=$(field ft "$old")
	if [ -z "$cov" ] || [ -z "$ocov" ]; then continue; fi
	if [ "$cov" -eq "$ocov" ] && [ $((100 * (ft - oft))) -lt "$oft" ]; then
		echo "plateau at $((now - start)) s: cov $cov, ft $oft -> $ft" >> "$series"
		[ -z "$child" ] || kill -INT "$child" 2>/dev/null || true
		break
	fi
done
wait "$parent" || true
# Wait for the child's final stats, if it is still writing them.
while [ -n "$child" ] && kill -0 "$child" 2>/dev/null; do sleep 1; done
grep -E '^#[0-9]+[[:space:]]*(INITED|DONE)' "$log" | tail -2 || true
grep -E '^stat::|^==[0-9]+== (ERROR|WARNING)|^SUMMARY|Test unit written to' "$log" || true
ls "$work/crashes"

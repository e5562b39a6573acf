#!/bin/sh
# genlog_events.sh OOMDOC: the benchmark's generated logs are read whole.
# bench/genlog.py writes a log with its OOM blocks' lines in a sidecar, and
# bench/check_events.py finds every block among oomdoc's events (as an
# event, or as another rank's row of one: oomdoc's documented grouping of
# ranks), so that a block lost at a buffer boundary, through a pipe or in
# gzip fails.  The logs are small enough to take about a second in the
# sanitizer build: 2 MiB, seed 1 (where genlog once wrote a kernel kill and
# another job's Slurm line next to each other, which oomdoc read as one
# failure), and 5 MiB across the scanner's 1 MiB buffer.
set -u
oomdoc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for case in "2M 1" "5M 2"; do
	set -- $case
	log=$tmp/g-$1-$2.log
	python3 bench/genlog.py --size "$1" --seed "$2" -o "$log" 2>/dev/null || {
		echo "FAIL: genlog --size $1 --seed $2"; exit 1; }
	for how in file pipe gzip; do
		case $how in
		file) "$oomdoc" --format json "$log" ;;
		pipe) "$oomdoc" --format json - <"$log" ;;
		gzip) gzip -1 -c "$log" >"$log.gz" && "$oomdoc" --format json "$log.gz" ;;
		esac >"$tmp/r.json" 2>"$tmp/err"
		got=$(python3 bench/check_events.py "$tmp/r.json" "$log.ooms")
		case $got in
		OK*) echo "ok: $1 seed $2 $how: $got" ;;
		*) echo "FAIL: $1 seed $2 $how: $got $(head -c 200 "$tmp/err")"; fail=1 ;;
		esac
	done
done
exit $fail

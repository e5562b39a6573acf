# bench/lib.sh: shared helpers of run.sh and scaling.sh (sourced, not run).
#
# measure LABEL CMD: runs the shell command CMD once as a warm-up, then
# $RUNS times (only once in all when the warm-up took more than $SLOW
# seconds; MEASURE_SLOW is then 1), and appends one line to $RESULTS:
#   LABEL <tab> median wall s <tab> max peak RSS KiB <tab> all walls <tab>
#   median CPU s (user + system of the process wrapped in "$T")
# CMD is evaluated by bash.  It must wrap the process whose memory is
# reported in "$T" (GNU time writing %U+%S:%M to $RSSF) and send its output to a
# file or a pipe, never to /dev/null (GNU grep stops at the first match when
# its output is /dev/null).

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$BENCH_DIR/.." && pwd)
GNU_TIME=${GNU_TIME:-/usr/bin/time}
SLOW=${SLOW:-60}

bench_die() { echo "bench: $*" >&2; exit 2; }

# bench_copy_oomdoc: a private copy of $OOMDOC_SRC, so that a rebuild of
# build/bin/oomdoc during a run does not mix two versions.  The copy is
# $SCRATCH/bin/oomdoc (OOMDOC is set to it) with the shipped rules at
# $SCRATCH/share/oomdoc/rules, where it looks for them (relative to its
# own directory): the rules beside $OOMDOC_SRC (../share/oomdoc/rules, as
# in the build tree and in an installed tree), else this checkout's.
bench_copy_oomdoc() {
	local rules
	rules=$(dirname "$OOMDOC_SRC")/../share/oomdoc/rules
	[ -d "$rules" ] || rules=$REPO_DIR/rules
	mkdir -p "$SCRATCH/bin" "$SCRATCH/share/oomdoc" || exit 2
	OOMDOC=$SCRATCH/bin/oomdoc
	cp "$OOMDOC_SRC" "$OOMDOC" || exit 2
	rm -rf "$SCRATCH/share/oomdoc/rules"
	cp -R -L "$rules" "$SCRATCH/share/oomdoc/rules" || exit 2
}

# bench_remove_oomdoc: removes the copy (and its directories, when empty).
bench_remove_oomdoc() {
	rm -rf "$OOMDOC" "$SCRATCH/share/oomdoc/rules"
	rmdir "$SCRATCH/bin" "$SCRATCH/share/oomdoc" "$SCRATCH/share" 2>/dev/null
	return 0
}

bench_need() {
	[ -x "$GNU_TIME" ] || bench_die "$GNU_TIME is missing (apt-get install time)"
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || bench_die "$c is missing"
	done
}

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

# now_ns: the time in nanoseconds.
now_ns() { date +%s%N; }

# median X...: the median of the numbers among the arguments.
median() {
	printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g | awk '{ a[NR] = $1 } END {
		if (NR % 2) print a[(NR + 1) / 2];
		else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

measure() {
	local label=$1 cmd=$2 i s e walls="" cpus="" rss=0 r w c
	RSSF=$(mktemp "$SCRATCH/rss.XXXXXX")
	T="$GNU_TIME -o $RSSF -f %U+%S:%M"
	MEASURE_SLOW=0
	for ((i = 0; i <= RUNS; i++)); do
		s=$(now_ns)
		eval "$cmd"
		e=$(now_ns)
		w=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", (e - s) / 1e9 }')
		if [ "$i" -eq 0 ]; then
			# The warm-up.  A command slower than $SLOW seconds is
			# not run again: the warm-up is its one sample.
			awk -v w="$w" -v m="$SLOW" 'BEGIN { exit !(w > m) }' || continue
			MEASURE_SLOW=1
		fi
		walls="$walls $w"
		# GNU time writes "Command exited with non-zero status N" first
		r=$(tail -n 1 "$RSSF")
		c=$(awk -v x="${r%%:*}" 'BEGIN { split(x, a, "+"); printf "%.2f", a[1] + a[2] }')
		cpus="$cpus $c"
		r=${r##*:}
		case $r in ''|*[!0-9]*) r=0 ;; esac
		[ "$r" -gt "$rss" ] && rss=$r
		[ "$MEASURE_SLOW" = 1 ] && break
	done
	rm -f "$RSSF"
	[ "$MEASURE_SLOW" = 1 ] && walls="$walls (slow: one run, no warm-up)"
	printf '%s\t%s\t%s\t%s\t%s\n' "$label" "$(median $walls)" "$rss" \
	    "${walls# }" "$(median $cpus)" >>"$RESULTS"
	printf '  %-28s median %ss  (runs:%s)  peak RSS %s KiB\n' "$label" \
	    "$(tail -n 1 "$RESULTS" | cut -f2)" "$walls" "$rss" >&2
}

# check_events JSON SIDECAR: prints OK or MISMATCH with the figures
# (bench/check_events.py: every OOM block the generator wrote is an event
# or another rank's row of one, or among the reports the caps left out).
check_events() {
	python3 "$BENCH_DIR/check_events.py" "$1" "$2"
}

machine_info() {
	echo "- date: $(date -u)"
	echo "- machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), $(free -g | awk '/^Mem:/ { print $2 " GiB RAM" }')"
	echo "- kernel: $(uname -sr)"
	local state=""
	[ "$OOMDOC_SRC" -ef "$REPO_DIR/build/bin/oomdoc" ] && state=", working tree at HEAD $(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo '?') with $(git -C "$REPO_DIR" status --porcelain -- src 2>/dev/null | wc -l) changed files under src/"
	echo "- oomdoc: $("$OOMDOC" --version 2>&1 | sed -n 1p) ($OOMDOC_SRC$state)"
	echo "- oomdoc binary sha256: $(sha256sum "$OOMDOC" | cut -c1-16)"
	echo "- load average (1, 5, 15 min) at the start: ${LOAD_START:-?}; at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- $(rg --version | sed -n 1p); $(grep --version | sed -n 1p); $(gzip --version | sed -n 1p); $(zstd --version)"
}

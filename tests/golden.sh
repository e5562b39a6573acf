#!/usr/bin/env bash
# Golden CLI tests: runs oomdoc over every fixtures/*/*.log in each report
# format (text, json, markdown) and compares standard output with
# tests/golden/<dir>/<name>.{text,json,md}, byte for byte, and the exit
# status with tests/golden/<dir>/<name>.status (one for the three
# formats).  Standard error must be empty.
#
# Goldens are regression pins, not expectations: they hold what oomdoc
# printed when they were last written, right or wrong, so that any change
# of output shows.  What the output should be is checked elsewhere, from
# the fixtures' text by hand: fixtures/*/*.expect (tests/check_expect.py)
# and the causes of fixtures/rules/*.causes (tests/check_causes.py).
#
# The inputs are shared out among OOMDOC_TEST_JOBS shells that run at
# once (default: one a CPU, nproc), each input's three formats in one of
# them; what each input's check printed is then shown in the inputs'
# order, as one shell would print it.
#
# Usage: tests/golden.sh OOMDOC [--update]
# With --update the golden files are rewritten from the current output;
# review the diff (git diff tests/golden) before committing it, and say in
# the commit why the output changed.
# Run from the repository root: the reports name the inputs by the
# relative paths given on the command line.
set -u
oomdoc=$1
update=${2:-}
jobs=${OOMDOC_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in
''|*[!0-9]*|0) echo "OOMDOC_TEST_JOBS=$jobs: a whole number of 1 or more" >&2
	exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The text report at its default width, 80 (no COLUMNS).
unset COLUMNS

# Checks the input $1 in the three formats, with $2 as the prefix of its
# scratch files: prints what failed, and writes to $3 how many passed.
check() {
	local log=$1 out=$2.out err=$2.err dir name fmt ext want status
	local rc pinned pass=0
	dir=${log%/*}; dir=${dir##*/}
	name=${log##*/}; name=${name%.*}
	status=tests/golden/$dir/$name.status
	for fmt in text json markdown; do
		ext=$fmt; [ $fmt = markdown ] && ext=md
		want=tests/golden/$dir/$name.$ext
		"$oomdoc" --format "$fmt" --color never "$log" >"$out" 2>"$err"
		rc=$?
		if [ "$update" = --update ]; then
			mkdir -p "${want%/*}"
			cp "$out" "$want"
			# The text run writes the status; the other formats
			# are then compared with it.
			[ $fmt = text ] && echo $rc >"$status"
		fi
		pinned=
		[ -r "$status" ] && read -r pinned <"$status"
		if [ -s "$err" ]; then
			echo "FAIL $log ($fmt): exit $rc: $(head -c 300 "$err")"
		elif [ "$rc" != "$pinned" ]; then
			echo "FAIL $log ($fmt): exit status $rc, pinned" \
			    "${pinned:-nothing: no $status}"
		elif ! cmp -s "$out" "$want"; then
			echo "FAIL $log ($fmt): output differs from $want"
			diff -u "$want" "$out" | head -20
		else
			pass=$((pass + 1))
		fi
	done
	echo $pass >"$3"
}

# The memory snapshots of fixtures/snapshot are inputs as logs are.
inputs=(fixtures/*/*.log fixtures/snapshot/*.pickle fixtures/snapshot/*.json)
for ((j = 0; j < jobs; j++)); do
	for ((i = j; i < ${#inputs[@]}; i += jobs)); do
		check "${inputs[i]}" "$tmp/scratch.$j" "$tmp/$i.pass" \
		    >"$tmp/$i.out"
	done &
done
wait
pass=0 fail=0
for ((i = 0; i < ${#inputs[@]}; i++)); do
	[ -s "$tmp/$i.out" ] && cat "$tmp/$i.out"
	n=
	[ -r "$tmp/$i.pass" ] && read -r n <"$tmp/$i.pass"
	case $n in
	[0-3]) ;;
	*) echo "FAIL ${inputs[i]}: its check ended before the end"; n=0 ;;
	esac
	pass=$((pass + n)) fail=$((fail + 3 - n))
done
echo "$pass passed, $fail failed"
[ "$update" = --update ] && echo "golden files rewritten from the current" \
    "output: they are regression pins, not expectations; review" \
    "git diff tests/golden and say in the commit why the output changed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]

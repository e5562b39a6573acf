#!/usr/bin/env bash
# live_hostile.sh OOMDOC: live mode on hostile figures, at the limits of its
# inputs (issue 16, item 8), through the fake backend.  Every run must end
# with a documented status (0, 1, 2, 4, 7 or 8) and no sanitizer report
# (in the ASan+UBSan build, where undefined behaviour and float-cast
# overflow abort), and what the JSON report prints must hold: no size or
# rate below zero, a cap that is known and within the free memory.
#
# The inputs: a report of fragmentation-top.log whose every integer is
# INT64_MAX, INT64_MAX - 1, 2^62, -1, INT64_MIN or 0, or a real (1e308,
# 1.5), or past int64 (1e20 as an integer, which jansson refuses); and
# fake devices of INT64_MAX bytes with no context, so that the free
# memory is INT64_MAX, under --max-memory 100%, 99%, 1% and a size, and
# of a memory clock of INT64_MAX kHz.  Two of these were wrong before:
#  - a cap of a percentage of INT64_MAX free bytes went through a double
#    (2^63, whose conversion back is undefined, gave INT64_MIN): the cap
#    was negative, which means none, and the probes ran uncapped;
#  - the peak and measured bandwidths of a clock of INT64_MAX kHz (about
#    1.5e26 B/s) were written to JSON as -2^63, and those of a device of
#    no known clock, none measured (-1), as -1 in JSON and -0.0 GB/s in
#    the text report.
# About 60 runs; some seconds in the sanitizer build.
set -u
oomdoc=$1
fail=0 pass=0 n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() {   # check NAME STATUS
	if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else
		echo "FAIL $1"; fail=$((fail + 1)); fi
}
M=9223372036854775807
R=fixtures/rules/fragmentation-top.log

# The JSON report's figures: none below zero (null is unknown), the cap
# known and at most the free memory at the start.
holds() {   # holds FILE: prints what does not hold, if anything
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
def walk(o, path):
    if isinstance(o, dict):
        for k, v in o.items():
            p = path + "." + k
            if (k.endswith("_bytes") or k.endswith("_per_second")) and \
                    isinstance(v, (int, float)) and not isinstance(v, bool) and v < 0:
                bad.append("%s = %s" % (p, v))
            walk(v, p)
    elif isinstance(o, list):
        for i, v in enumerate(o):
            walk(v, "%s[%d]" % (path, i))
walk(d, "")
cap, free = d.get("cap_bytes"), d.get("free_bytes_at_start")
if free is not None and free > 0 and d.get("device_error") is None:
    if cap is None:
        bad.append("cap_bytes null with %s bytes free" % free)
    elif cap > free:
        bad.append("cap_bytes %s above the %s free" % (cap, free))
print("; ".join(bad))
PY
}

run() {   # run NAME ARGS...: a documented status, no sanitizer report
	local name=$1 rc st
	shift
	n=$((n + 1))
	timeout 60 "$oomdoc" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?
	case $rc in 0|1|2|4|7|8) st=0 ;; *) st=1 ;; esac
	grep -q -E 'runtime error|Sanitizer' "$tmp/err" && st=1
	check "$name: status $rc, stderr: $(head -c 400 "$tmp/err")" $st
	return $rc
}

"$oomdoc" -f json "$R" >"$tmp/base.json" || { echo "FAIL: no report of $R"; exit 1; }
for v in $M 9223372036854775806 4611686018427387904 -1 -9223372036854775808 0 1e308 1.5 100000000000000000000; do
	python3 - "$tmp/base.json" "$v" >"$tmp/h$n-$v.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
text = "HOSTILE"
def walk(o):
    if isinstance(o, dict):
        for k, x in o.items():
            if isinstance(x, int) and not isinstance(x, bool):
                o[k] = text
            else:
                walk(x)
    elif isinstance(o, list):
        for x in o:
            walk(x)
walk(d)
# The figure as written, so that 1e20 stays an integer literal.
sys.stdout.write(json.dumps(d).replace('"HOSTILE"', sys.argv[2]))
PY
	n=$((n + 1))
done

# 1. Hostile reports read back, in the three formats, with and without a
#    cap, on the default fake device and on one of INT64_MAX bytes.
for input in "$tmp"/h*.json; do
	v=${input##*-}
	for fmt in text markdown json; do
		run "report of figures $v, -f $fmt" live -f "$fmt" --backend fake --force "$input"
	done
	if run "report of figures $v, --max-memory $M, fake total=$M" live -f json \
		--backend fake --force --max-memory "$M" --fake-device "total=$M,context=0" \
		"$input"; then
		bad=$(holds "$tmp/out")
		[ -z "$bad" ]
		check "report of figures $v on a fake GPU of INT64_MAX bytes: $bad" $?
	fi
done

# 2. A free memory of INT64_MAX bytes under each kind of cap: the cap is
#    known, positive and within the free memory (it was null: none).
for cap in 100% 99% 50% 1% 7EiB; do
	for force in --force ""; do
		if run "probe --max-memory $cap $force, fake total=$M,context=0" probe -f json \
			--backend fake $force --max-memory "$cap" --fake-device "total=$M,context=0"; then
			bad=$(holds "$tmp/out")
			[ -z "$bad" ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if isinstance(d["cap_bytes"], int) and d["cap_bytes"] > 0 else 1)' "$tmp/out"
			# The status before the message's command substitution,
			# which would set $? itself.
			st=$?
			check "probe --max-memory $cap $force on INT64_MAX free bytes: cap $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cap_bytes"])' "$tmp/out") $bad" $st
		fi
	done
done

# 3. Rates past 2^63 bytes per second are null, never negative, and the
#    text report still prints them.
for fake in "mem_clock_khz=$M,bus_width=65536" "mem_clock_khz=$M,bus_width=1" "mem_clock_khz=0,bus_width=0"; do
	if run "probe --fake-device $fake" probe -f json --backend fake --force --fake-device "$fake"; then
		bad=$(holds "$tmp/out")
		[ -z "$bad" ]
		check "probe --fake-device $fake: $bad" $?
	fi
	if run "probe -f text --fake-device $fake" probe --backend fake --force --fake-device "$fake"; then
		! grep -E '(^|[^0-9])-[0-9.]+ GB/s' "$tmp/out"
		check "probe -f text --fake-device $fake: a rate below zero" $?
	fi
done

# 4. The other settings at their limits, each on the log.
while read -r fake; do
	run "live --fake-device '$fake'" live -f json --backend fake --force \
		--max-memory 100% --fake-device "$fake" "$R" && {
		bad=$(holds "$tmp/out")
		[ -z "$bad" ]
		check "live --fake-device '$fake': $bad" $?
	}
done <<EOF
total=$M,context=0,page=1,granularity=1
total=$M,context=0,mig=yes
total=$M,context=0,contiguous=yes
total=$M,context=0,hidden=$((M / 2))
total=$M,context=0,tenant=7:$M@1
total=$M,context=0,fail_alloc=999999
total=1,page=1
total=$M,proc=1:4611686018427387904,proc=2:4611686018427387904
tenant=$M:$M@999999
gpus=64,mig=yes
EOF

echo "live_hostile: $pass passed, $fail failed ($n inputs and runs)"
[ $fail -eq 0 ]

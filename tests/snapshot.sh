#!/usr/bin/env bash
# Memory snapshots on the command line (oomdoc(1), SNAPSHOTS): every hostile
# pickle of fixtures/snapshot/hostile is refused with status 2 and one line
# naming the file, the byte offset and the opcode, alone and as --snapshot;
# the JSON form reads as the pickle does; --snapshot joins the event the oom
# entry matches (and says so when none fits); --format jsonl refuses it; a
# snapshot counts as an input for -c and --summary; the Python that
# CPython's pickle module writes for a snapshot's shape (protocols 2 to 5)
# reads alike.  The figures and causes themselves are checked by
# fixtures/snapshot/*.expect and *.causes.
#
# Usage: tests/snapshot.sh OOMDOC   (from the repository root)
set -u
oomdoc=$1
d=fixtures/snapshot
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

# refused FILE OPCODE OFFSET
refused() {
	local f=$d/hostile/$1 op=$2 at=$3 rc n
	for mode in alone joined; do
		if [ $mode = alone ]; then
			"$oomdoc" "$f" >"$tmp/out" 2>"$tmp/err"
		else
			"$oomdoc" --snapshot "$f" $d/job.log >"$tmp/out" 2>"$tmp/err"
		fi
		rc=$?
		n=$(wc -l <"$tmp/err")
		if [ $rc -eq 2 ] && [ "$n" -eq 1 ] && [ ! -s "$tmp/out" ] &&
		    grep -q "^oomdoc: $f: pickle byte $at, opcode $op:" "$tmp/err"; then
			ok
		else
			bad "$1 ($mode): exit $rc, $n lines: $(head -c 200 "$tmp/err")"
		fi
	done
}
refused global_os_system.pickle 'GLOBAL (0x63)' 2
refused stack_global.pickle 'STACK_GLOBAL (0x93)' 28
refused reduce.pickle 'REDUCE (0x52)' 4
refused build.pickle 'BUILD (0x62)' 4
refused persid.pickle 'BINPERSID (0x51)' 8
refused deep.pickle 'APPEND (0x61)' 165
refused huge_length.pickle 'BINUNICODE8 (0x8d)' 2
refused huge_frame.pickle 'FRAME (0x95)' 2
refused bad_memo.pickle 'BINGET (0x68)' 2
refused recursive.pickle 'APPEND (0x61)' 7
refused truncated.pickle 'FRAME (0x95)' 2
refused no_mark.pickle 'APPENDS (0x65)' 5
# Every hostile file is one of the above.
[ "$(ls $d/hostile | wc -l)" -eq 12 ] && ok || bad "hostile files not all checked"

# The snapshot object of an event, as one line of sorted JSON.
snap() {
	python3 -c 'import json, sys
d = json.load(sys.stdin)
print(json.dumps([e["snapshot"] for e in d["events"]], sort_keys=True))'
}
a=$("$oomdoc" -f json $d/fragmentation.pickle | snap)
b=$("$oomdoc" -f json $d/fragmentation-json.json | snap)
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "JSON form differs: $a / $b"

# CPython's own pickles of the fixture, protocols 2 to 5, all read alike.
for p in 2 3 4 5; do
	python3 -c 'import pickle, sys
sys.path.insert(0, "fixtures/snapshot")
import make_snapshots as m
pickle.dump(m.fragmentation(True), open(sys.argv[1], "wb"), protocol=int(sys.argv[2]))' \
	    "$tmp/p$p.pickle" $p
	c=$("$oomdoc" -f json "$tmp/p$p.pickle" | snap)
	[ "$c" = "$a" ] && ok || bad "protocol $p reads differently: $c"
done

# The join: the 512 MiB failure at line 10, not the 2 GiB one at line 5.
j=$("$oomdoc" -f json --snapshot $d/fragmentation.pickle $d/job.log |
    python3 -c 'import json, sys
d = json.load(sys.stdin)
print(" ".join("%d:%s" % (e["line"], e["snapshot"]["verdict"] if e["snapshot"] else "-")
               for e in d["events"]))')
[ "$j" = "5:- 10:confirmed" ] && ok || bad "join: $j"
# The same with the 512 MiB failure first: the matching request decides,
# not the order.
{ sed -n 6,10p $d/job.log; sed -n 1,5p $d/job.log; } >"$tmp/rev.log"
j=$("$oomdoc" -f json --snapshot $d/fragmentation.pickle "$tmp/rev.log" |
    python3 -c 'import json, sys
d = json.load(sys.stdin)
print(" ".join("%d:%s" % (e["line"], e["snapshot"]["verdict"] if e["snapshot"] else "-")
               for e in d["events"]))')
[ "$j" = "5:confirmed 10:-" ] && ok || bad "join, reversed: $j"

# No event of that device: one line says so, the report is made without it.
sed 's/GPU 0/GPU 3/' $d/job.log >"$tmp/gpu3.log"
"$oomdoc" -f json --snapshot $d/fragmentation.pickle "$tmp/gpu3.log" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
    grep -q "no failure of PyTorch's allocator on the snapshot's device" "$tmp/err" &&
    [ "$(snap <"$tmp/out")" = "[null, null]" ]; then ok; else
	bad "no join: exit $rc: $(cat "$tmp/err")"; fi

# --format jsonl does not wait for the end of the log: refused.
"$oomdoc" -f jsonl --snapshot $d/fragmentation.pickle $d/job.log \
    >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--snapshot" "$tmp/err" && ok ||
	bad "jsonl with --snapshot: $(cat "$tmp/err")"

# A snapshot is an input like a log: -c counts its event, and one without
# an oom entry has none.
c=$("$oomdoc" -c $d/fragmentation.pickle $d/no-oom-entry.pickle $d/job.log)
[ "$c" = "$d/fragmentation.pickle:1
$d/no-oom-entry.pickle:0
$d/job.log:2" ] && ok || bad "-c: $c"

# A missing --snapshot file: status 2, one line naming it.
"$oomdoc" --snapshot "$tmp/none.pickle" $d/job.log >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
    grep -q "$tmp/none.pickle" "$tmp/err" && ok || bad "missing snapshot"

# A log is not taken for a snapshot, nor a JSON report.
"$oomdoc" -f json $d/job.log >"$tmp/r.json"
"$oomdoc" "$tmp/r.json" >/dev/null 2>"$tmp/err"
grep -q "pickle\|not a PyTorch memory snapshot" "$tmp/err" &&
	bad "a JSON report was read as a snapshot" || ok

# A JSON-lines log whose first line names "segments" is not a snapshot:
# it is read as the log it is.
printf '%s\n' '{"segments": 3, "msg": "start"}' \
    '{"msg": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free."}' \
    >"$tmp/lines.log"
c=$("$oomdoc" -c "$tmp/lines.log" 2>&1)
[ "$c" = 1 ] && ok || bad "JSON lines: $c"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

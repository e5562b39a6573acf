#!/usr/bin/env bash
# The command's handling of its inputs: standard input and '-', several
# inputs, compressed input from a pipe, and bad inputs, each with its
# documented exit status and a one-line error naming the input; every
# command's writes checked (a full disk, a closed standard output, a pipe
# whose reader left); and text from outside escaped on standard error and
# in the rules listings.
#
# Usage: tests/cli_inputs.sh OOMDOC   (from the repository root)
set -u
oomdoc=$1
sample=fixtures/sample/job.log
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# expect NAME STATUS STDERR-LINES STDERR-PATTERN -- COMMAND...
expect() {
	local name=$1 want=$2 lines=$3 pat=$4
	shift 5
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$? n
	n=$(wc -l <"$tmp/err")
	if [ $rc -ne "$want" ] || [ "$n" -ne "$lines" ] ||
	    ! grep -q -e "$pat" "$tmp/err" "$tmp/out"; then
		echo "FAIL $name: exit $rc (want $want), $n stderr lines (want $lines)"
		head -5 "$tmp/err"
		fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
}

expect "file" 0 0 "job.log:16, rank 1, GPU 1" -- "$oomdoc" $sample
expect "stdin" 0 0 '(standard input):16' -- sh -c "'$oomdoc' < $sample"
expect "dash" 0 0 '(standard input):16' -- sh -c "cat $sample | '$oomdoc' -"
gzip -c $sample >"$tmp/job.log.gz"
zstd -q -c $sample >"$tmp/job.zst"
expect "gzip pipe" 0 0 '"compression": "gzip"' -- \
	sh -c "cat '$tmp/job.log.gz' | '$oomdoc' -f json"
expect "zstd named .log" 0 0 '"compression": "zstd"' -- \
	sh -c "cp '$tmp/job.zst' '$tmp/z.log' && '$oomdoc' -f json '$tmp/z.log'"
expect "two inputs" 0 0 '"line": 16' -- \
	"$oomdoc" -f json $sample fixtures/pytorch/nvml_assert.log
expect "missing" 2 1 "^oomdoc: $tmp/nope.log: No such file or directory\$" -- \
	"$oomdoc" "$tmp/nope.log"
expect "directory" 2 1 "^oomdoc: $tmp: is a directory\$" -- "$oomdoc" "$tmp"
expect "missing beside a good one" 2 1 "1 out-of-memory event" -- \
	"$oomdoc" "$tmp/nope.log" $sample
head -c 900 "$tmp/job.log.gz" >"$tmp/cut.gz"
expect "truncated gzip" 2 1 "truncated gzip input" -- "$oomdoc" "$tmp/cut.gz"
: >"$tmp/empty"
expect "empty" 1 0 "no out-of-memory failure" -- "$oomdoc" "$tmp/empty"
head -c 2000000 /dev/urandom >"$tmp/random.bin"
expect "random bytes" 1 0 "no out-of-memory failure" -- "$oomdoc" "$tmp/random.bin"
printf 'a\0b\n\377\376 RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 4.00 GiB total capacity; 1.00 GiB already allocated; 0 bytes free; 1.00 GiB reserved in total by PyTorch)\n' >"$tmp/nul.log"
expect "NUL and bad UTF-8" 0 0 '"line": 2' -- "$oomdoc" -f json "$tmp/nul.log"
if [ "$(id -u)" -ne 0 ]; then
	cp $sample "$tmp/secret.log" && chmod 000 "$tmp/secret.log"
	expect "unreadable" 2 1 "Permission denied" -- "$oomdoc" "$tmp/secret.log"
fi
expect "bad format" 2 1 "unknown format 'xml'" -- "$oomdoc" -f xml $sample
# The flag wins over NO_COLOR (no-color.org); tests/cli_papercuts.py
# checks NO_COLOR and TERM=dumb on a terminal.
NO_COLOR=1 "$oomdoc" --color always $sample | grep -q $'\033' && pass=$((pass + 1)) || {
	echo "FAIL NO_COLOR: --color always lost to it"; fail=$((fail + 1)); }
"$oomdoc" --color always $sample | grep -q $'\033\[1m' && pass=$((pass + 1)) || {
	echo "FAIL --color always: no colour"; fail=$((fail + 1)); }

# Every write is checked, on every output path: to a full disk
# (/dev/full) and to a closed standard output each command exits 2 with
# one line that says so (it used to exit 0, which broke
# `--list-anchors > anchors.txt && ...`).
for args in "--list-anchors" "--help" "-V" "rules list" "rules show capacity" \
    "rules facts" "rules check rules" "live --help" "probe --help" \
    "-f json $sample"; do
	# shellcheck disable=SC2086
	expect "$args > /dev/full" 2 1 "^oomdoc[a-z ]*: cannot write to standard output: No space left on device\$" -- \
		sh -c "'$oomdoc' $args >/dev/full"
	# shellcheck disable=SC2086
	expect "$args >&-" 2 1 "^oomdoc[a-z ]*: cannot write to standard output: Bad file descriptor\$" -- \
		sh -c "'$oomdoc' $args >&-"
done

# A reader that has left is a write error like the others, not death by
# SIGPIPE: the standard error line about the events not kept still comes
# (the pipe's read end is closed before oomdoc starts, so the run is the
# same every time), and then the write error.
python3 -c 'import sys
m = sys.argv[1]
sys.stdout.write("".join(m.replace("2.00 MiB", "%d.00 MiB" % (i + 2)) + "\n"
                         for i in range(600)))' \
	'RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 4.00 GiB total capacity; 1.00 GiB already allocated; 0 bytes free; 1.00 GiB reserved in total by PyTorch)' >"$tmp/big.log"
closed_pipe() {
	python3 -c 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
sys.exit(subprocess.run(sys.argv[1:], stdout=w).returncode)' "$@"
}
expect "closed pipe" 2 2 "^oomdoc: 100 more out-of-memory events were not kept" -- \
	closed_pipe "$oomdoc" "$tmp/big.log"
grep -q "^oomdoc: cannot write to standard output: Broken pipe\$" "$tmp/err" &&
	pass=$((pass + 1)) || { echo "FAIL closed pipe: no write error"; fail=$((fail + 1)); }
sh -c "'$oomdoc' '$tmp/big.log' | head -1" >"$tmp/out" 2>"$tmp/err"
grep -q "^oomdoc: 100 more out-of-memory events were not kept" "$tmp/err" &&
	[ "$(wc -l <"$tmp/out")" -eq 1 ] && pass=$((pass + 1)) ||
	{ echo "FAIL | head -1: no line about the events not kept"; fail=$((fail + 1)); }

# Text from outside is escaped on standard error and in every listing, as
# in the text report: a file name with an ESC and a bidi override, a rule
# whose title writes the clipboard (OSC 52) and reverses the line (U+202E),
# and a literal backslash, which is doubled so that the text "\x1b" never
# reads as an escaped ESC.
raw() { # NAME FILE...: passes when no ESC, BEL or U+202E is in the files
	local name=$1
	shift
	if grep -q -e $'\033' -e $'\a' -e $'\u202e' "$@"; then
		echo "FAIL $name: a raw escape"; fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
}
bad=$'\033]52;c;ZWNobyBoaQ==\a\u202e'
expect "missing file named with ESC" 2 1 'x1b\]52;c;ZWNobyBoaQ==\\x07\\u202egol\.x: No such' -- \
	"$oomdoc" "$tmp/${bad}gol.x"
raw "missing file named with ESC" "$tmp/err"
cp $sample "$tmp/${bad}.log"
expect "report of a file named with ESC" 0 0 'x1b\]52' -- "$oomdoc" "$tmp/${bad}.log"
raw "report of a file named with ESC" "$tmp/out" "$tmp/err"
printf 'id: osc\ntitle: "Paste \\e]52;c;cm0gLXJmIH4K\\a me \\u202eevil \\\\x1b"\nwhen: requested > 0\nscore: 0.5\nexplain: x\n' >"$tmp/osc.yaml"
expect "rules list, OSC 52 title" 0 0 'Paste \\x1b\]52;c;cm0gLXJmIH4K\\x07 me \\u202eevil \\\\x1b' -- \
	"$oomdoc" rules list --rules "$tmp/osc.yaml"
raw "rules list, OSC 52 title" "$tmp/out"
expect "rules show, OSC 52 title" 0 0 'Paste \\x1b\]52' -- \
	"$oomdoc" rules show osc --rules "$tmp/osc.yaml"
raw "rules show, OSC 52 title" "$tmp/out"
printf 'id: "osc\\e]52;c;eA==\\a"\ntitle: t\nwhen: requested > 0\nscore: 0.5\nexplain: x\n' >"$tmp/osc2.yaml"
expect "rule error quoting rule text" 3 1 "osc2.yaml:1:5: .*not 'osc\\\\x1b]52;c;eA==\\\\x07'" -- "$oomdoc" rules check "$tmp/osc2.yaml"
raw "rule error quoting rule text" "$tmp/err"
printf 'RuntimeError: NVML_SUCCESS == r \\x1b[2J INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":950\n' >"$tmp/bs.log"
expect "a literal backslash in a report" 0 0 'NVML_SUCCESS == r \\\\x1b\[2J' -- "$oomdoc" "$tmp/bs.log"

# Compressed input (issue 16): a zstd frame whose window is over the limit
# (8 MiB) is refused before the decoder allocates it, with the option that
# lifts the limit; skippable frames (pzstd writes one before every frame,
# the seekable format one at the end) are skipped; zero bytes after a gzip
# stream are ignored, as gzip -d does; the formats not read are named.
{ cat $sample; head -c 17000000 /dev/zero | tr '\0' 'x'; echo; } >"$tmp/big.log"
zstd -q --long=24 -1 -c "$tmp/big.log" >"$tmp/long24.zst"
expect "zstd window over the limit" 2 1 \
	"needs a window of 16 MiB (window log 24.*limit of 8 MiB (window log 23): --zstd-window-log 24 lifts it" -- \
	"$oomdoc" "$tmp/long24.zst"
expect "zstd window lifted" 0 0 '"compression": "zstd"' -- \
	"$oomdoc" -f json --zstd-window-log 24 "$tmp/long24.zst"
expect "zstd window from a pipe" 2 1 "window log 24" -- \
	sh -c "cat '$tmp/long24.zst' | '$oomdoc'"
expect "bad --zstd-window-log" 2 1 "takes a number from 10 to 31, not '32'" -- \
	"$oomdoc" --zstd-window-log 32 $sample
if command -v pzstd >/dev/null; then
	pzstd -q -p 2 -c $sample >"$tmp/job.pzst" 2>/dev/null
	expect "pzstd output" 0 0 '"compression": "zstd"' -- \
		"$oomdoc" -f json "$tmp/job.pzst"
fi
skippable() {	# a skippable frame (magic 0x184D2A5$1) holding "$2"
	printf "\\x5$1\\x2a\\x4d\\x18"
	printf "%08x" ${#2} | sed 's/\(..\)\(..\)\(..\)\(..\)/\\x\4\\x\3\\x\2\\x\1/' |
		xargs -0 printf
	printf '%s' "$2"
}
{ skippable 0 "made by a test"; cat "$tmp/job.zst"; skippable f "seek table"; } \
	>"$tmp/skip.zst"
expect "skippable frames" 0 0 '"line": 16' -- "$oomdoc" -f json "$tmp/skip.zst"
expect "skippable frames from a pipe" 0 0 '(standard input):16' -- \
	sh -c "cat '$tmp/skip.zst' | '$oomdoc'"
head -c 10 "$tmp/skip.zst" >"$tmp/skipcut.zst"
expect "truncated skippable frame" 2 1 "truncated zstd input" -- \
	"$oomdoc" "$tmp/skipcut.zst"
{ cat "$tmp/job.log.gz"; head -c 4096 /dev/zero; } >"$tmp/zeros.gz"
expect "zeros after gzip" 0 0 "job.log\|zeros.gz:16" -- "$oomdoc" "$tmp/zeros.gz"
{ cat "$tmp/job.log.gz"; echo garbage; } >"$tmp/garbage.gz"
expect "garbage after gzip" 2 1 "trailing data after the gzip stream" -- \
	"$oomdoc" "$tmp/garbage.gz"
# Two members, the sample cut after its line 10 (its event, at line 16,
# is found in the second), from a pipe too; a wrong CRC-32 in the trailer
# (ISA-L's igzip and zlib both check it: same message, same status).
{ head -n 10 $sample | gzip -c; tail -n +11 $sample | gzip -c; } >"$tmp/two.gz"
expect "two gzip members" 0 0 "two.gz:16, rank 1" -- "$oomdoc" "$tmp/two.gz"
expect "two gzip members, pipe" 0 0 "(standard input):16, rank 1" -- \
	sh -c "cat '$tmp/two.gz' | '$oomdoc'"
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[-8] ^= 0x55; open(sys.argv[2], "wb").write(b)' \
	"$tmp/job.log.gz" "$tmp/badcrc.gz"
expect "gzip CRC" 2 1 "badcrc.gz: corrupt gzip data: incorrect data check" -- \
	"$oomdoc" "$tmp/badcrc.gz"
bzip2 -c $sample >"$tmp/job.bz2" &&
	expect "bzip2" 0 0 '"compression": "bzip2"' -- \
		"$oomdoc" -f json "$tmp/job.bz2"
xz -c $sample >"$tmp/job.xz" &&
	expect "xz" 0 0 '"compression": "xz"' -- "$oomdoc" -f json "$tmp/job.xz"
head -c 40 "$tmp/job.xz" >"$tmp/cut.xz"
expect "truncated xz" 2 1 "truncated xz input" -- "$oomdoc" "$tmp/cut.xz"
head -c 40 "$tmp/job.bz2" >"$tmp/cut.bz2"
expect "truncated bzip2" 2 1 "truncated bzip2 input" -- "$oomdoc" "$tmp/cut.bz2"
printf 'LZIP\001\014\000' >"$tmp/job.lz"
expect "lzip" 2 1 "lzip-compressed input is not supported" -- "$oomdoc" "$tmp/job.lz"
printf '\211LZO\000\r\n\032\n\020\060' >"$tmp/job.lzo"
expect "lzop" 2 1 "lzop-compressed input is not supported" -- "$oomdoc" "$tmp/job.lzo"
printf '\002\041\114\030\000\000' >"$tmp/job.lz4"
expect "lz4 legacy" 2 1 "lz4 (legacy)-compressed input is not supported" -- \
	"$oomdoc" "$tmp/job.lz4"
printf 'PK\003\004\024\000\000\000' >"$tmp/job.zip"
expect "zip" 2 1 "zip-compressed input is not supported" -- "$oomdoc" "$tmp/job.zip"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

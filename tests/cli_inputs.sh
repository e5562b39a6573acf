#!/usr/bin/env bash
# The command's handling of its inputs: standard input and '-', several
# inputs, compressed input from a pipe, and bad inputs, each with its
# documented exit status and a one-line error naming the input.
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
NO_COLOR=1 "$oomdoc" --color always $sample | grep -q $'\033' && {
	echo "FAIL NO_COLOR: colour written"; fail=$((fail + 1)); } || pass=$((pass + 1))
"$oomdoc" --color always $sample | grep -q $'\033\[1m' && pass=$((pass + 1)) || {
	echo "FAIL --color always: no colour"; fail=$((fail + 1)); }

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
bzip2 -c $sample >"$tmp/job.bz2" &&
	expect "bzip2" 2 1 "bzip2-compressed input is not supported" -- \
		"$oomdoc" "$tmp/job.bz2"
xz -c $sample >"$tmp/job.xz" &&
	expect "xz" 2 1 "xz-compressed input is not supported" -- \
		"$oomdoc" "$tmp/job.xz"
printf 'PK\003\004\024\000\000\000' >"$tmp/job.zip"
expect "zip" 2 1 "zip-compressed input is not supported" -- "$oomdoc" "$tmp/job.zip"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

#!/usr/bin/env bash
# The prefilter's disk cache (src/lib/scan_cache.c): a run writes it, the
# next reads it (and sets its time, which the directory's trim goes by),
# and a cache file that is damaged, truncated, writable by others, a
# symbolic link or not a file changes nothing a run prints; it is then
# compiled again.  OOMDOC_NO_CACHE=1 writes nothing, and a relative
# XDG_CACHE_HOME is ignored for $HOME/.cache, as the XDG Base Directory
# Specification asks.  Each run's standard output, standard error and
# exit status must be those of a run without the cache.
#
# Usage: tests/scan_cache.sh OOMDOC   (from the repository root)
set -u
oomdoc=$1
unset OOMDOC_NO_CACHE XDG_CACHE_HOME
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log=fixtures/pytorch/alloc_warning_then_oom.log
pass=0 fail=0

check() {
	if [ "$2" = 0 ]; then
		pass=$((pass + 1))
	else
		echo "FAIL $1"
		fail=$((fail + 1))
	fi
}

# The reference: no cache at all.
OOMDOC_NO_CACHE=1 "$oomdoc" --color never "$log" >"$tmp/want.out" \
    2>"$tmp/want.err"
echo "status $?" >>"$tmp/want.err"

# run NAME: one run with XDG_CACHE_HOME=$tmp/xdg, compared with the
# reference.
run() {
	XDG_CACHE_HOME=${XDG:-$tmp/xdg} HOME=$tmp/home \
	    "$oomdoc" --color never "$log" >"$tmp/out" 2>"$tmp/err"
	echo "status $?" >>"$tmp/err"
	cmp -s "$tmp/out" "$tmp/want.out" && cmp -s "$tmp/err" "$tmp/want.err"
	check "$1: the output differs from a run without the cache" $?
}

mkdir -p "$tmp/home"
run "first run"
files=("$tmp"/xdg/oomdoc/prefilter-*.hsdb)
[ ${#files[@]} = 1 ] && [ -f "${files[0]}" ]
check "first run: one cache file written" $?
f=${files[0]}
[ "$(stat -c %a "$tmp/xdg/oomdoc")" = 700 ] && [ "$(stat -c %a "$f")" = 600 ]
check "the cache directory and file are private" $?

# Read back: the file's time moves to now.
touch -d '2001-01-01' "$f"
run "second run"
[ "$(stat -c %Y "$f")" -gt 1000000000 ] &&
	[ "$(date -d @"$(stat -c %Y "$f")" +%Y)" != 2001 ]
check "second run: the cache file was read (its time set)" $?

# Damage: a byte in the database flipped, then the file cut short.  Each
# run must compile again and then write a good file.
size=$(stat -c %s "$f")
cp "$f" "$tmp/good"
printf '\377' | dd of="$f" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run "flipped byte"
cmp -s "$f" "$tmp/good"
check "flipped byte: the file written again" $?
head -c $((size / 3)) "$tmp/good" >"$f"
run "truncated file"
cmp -s "$f" "$tmp/good"
check "truncated file: the file written again" $?
: >"$f"
run "empty file"

# Not trusted: writable by the group, a symbolic link, a directory.
cp "$tmp/good" "$f"
chmod 664 "$f"
touch -d '2001-01-01' "$f"
run "group-writable file"
[ "$(date -d @"$(stat -c %Y "$f")" +%Y)" = 2001 ] ||
	[ "$(stat -c %a "$f")" = 600 ]
check "group-writable file: not read" $?
rm -f "$f"
cp "$tmp/good" "$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$f"
run "symbolic link"
rm -f "$f"
mkdir "$f"
run "directory in the file's place"
rmdir "$f"

# Off, and a relative XDG_CACHE_HOME.
rm -rf "$tmp/xdg"
OOMDOC_NO_CACHE=1 XDG_CACHE_HOME=$tmp/xdg "$oomdoc" --color never "$log" \
    >/dev/null 2>&1
[ ! -e "$tmp/xdg/oomdoc" ]
check "OOMDOC_NO_CACHE=1: nothing written" $?
XDG=relative run "relative XDG_CACHE_HOME"
[ ! -e relative ] && ls "$tmp"/home/.cache/oomdoc/prefilter-*.hsdb \
    >/dev/null 2>&1
check "relative XDG_CACHE_HOME: \$HOME/.cache used instead" $?

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

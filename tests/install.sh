#!/usr/bin/env bash
# The installed tree, used as an embedder and a user would use it:
#  1. `cmake --install` of the already-built build tree into a temporary
#     prefix installs the program, the public header, the library (static,
#     and shared when built, with the SONAME liboomdoc.so.0), oomdoc.pc, the
#     man page and the shipped rules (the same bytes as rules/);
#  2. the prefix is moved away, and the moved program, run outside the
#     source tree, diagnoses fixtures/sample/job.log with the moved rules:
#     status 0, a cause named, the same JSON report as the build tree's
#     program, `--version` naming the moved rules directory, and status 3
#     naming it once the rules are taken away;
#  3. examples/stream.c, built against the moved tree with
#     `pkg-config --cflags --libs --static oomdoc` (from a copy with no
#     shared library) and, when the shared library was built, with
#     `pkg-config --cflags --libs oomdoc`, reads each fixture on standard
#     input and prints "LINE<TAB>KIND<TAB>REQUESTED" per event, REQUESTED
#     "-" when unknown; the lines must be the (line, kind,
#     memory.requested_bytes) of `oomdoc --format json` on the same file.
#
# Usage: tests/install.sh BUILD_DIR static|shared OOMDOC
# (from the repository root; OOMDOC is the build tree's program)
# The environment may name the tools: CMAKE (cmake), CC (cc), and
# EXAMPLE_CFLAGS, flags for the example (the sanitizers', when the library
# was built with them).
set -u
build=$(cd "$1" && pwd -P) || exit 2
kind=$2
built=$(realpath "$3") || exit 2
cmake=${CMAKE:-cmake}
cc=${CC:-cc}
read -r -a cflags <<<"${EXAMPLE_CFLAGS:-}"
src=$(pwd -P)
tmp=$(mktemp -d)
tmp=$(cd "$tmp" && pwd -P)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { echo "FAIL $*"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; [ $fail -eq 0 ]; exit $?; }

# --- 1. Install ---------------------------------------------------------------
if ! "$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1; then
	ko "cmake --install $build --prefix $tmp/prefix:"
	tail -5 "$tmp/install.log"
	finish
fi
ok
pc=$(cd "$tmp/prefix" && find . -name oomdoc.pc -path '*/pkgconfig/*' | sed 's|^\./||')
libdir=${pc%/pkgconfig/oomdoc.pc}
[ -n "$pc" ] && ok || { ko "no oomdoc.pc installed"; finish; }
for f in bin/oomdoc include/oomdoc/oomdoc.h "$libdir/liboomdoc.a" \
	share/man/man1/oomdoc.1 share/bash-completion/completions/oomdoc \
	share/zsh/site-functions/_oomdoc \
	share/fish/vendor_completions.d/oomdoc.fish; do
	[ -f "$tmp/prefix/$f" ] && ok || ko "not installed: $f"
done
n=0
for r in rules/*.yaml; do
	n=$((n + 1))
	cmp -s "$r" "$tmp/prefix/share/oomdoc/rules/${r#rules/}" && ok ||
		ko "not installed as it is in the source tree: $r"
done
[ $n -gt 0 ] && ok || ko "no rules/*.yaml in $src"
n=0
for r in schema/*.schema.json; do
	n=$((n + 1))
	cmp -s "$r" "$tmp/prefix/share/oomdoc/schema/${r#schema/}" && ok ||
		ko "not installed as it is in the source tree: $r"
done
[ $n -gt 0 ] && ok || ko "no schema/*.schema.json in $src"
# The live layer stays out of the library: no CUDA for an embedder.
nm "$tmp/prefix/$libdir/liboomdoc.a" 2>/dev/null | grep -q -E ' U (cuda|cu[A-Z]|nvml)' &&
	ko "liboomdoc.a calls CUDA or NVML" || ok
if [ "$kind" = shared ]; then
	so=$tmp/prefix/$libdir/liboomdoc.so
	[ -L "$so" ] && [ -f "$so.0" ] && ok ||
		ko "not installed: $libdir/liboomdoc.so and liboomdoc.so.0"
	readelf -d "$so.0" 2>/dev/null | grep -q 'SONAME.*\[liboomdoc\.so\.0\]' && ok ||
		ko "$libdir/liboomdoc.so.0 has not the SONAME liboomdoc.so.0"
	readelf -d "$so.0" | grep -q -i 'NEEDED.*cuda' &&
		ko "liboomdoc.so.0 needs a CUDA library" || ok
else
	ls "$tmp/prefix/$libdir"/liboomdoc.so* >/dev/null 2>&1 &&
		ko "a shared library was installed by a static-only build" || ok
fi

# --- 2. The tree moved away -------------------------------------------------------
mv "$tmp/prefix" "$tmp/moved"
moved=$tmp/moved
rules=$moved/share/oomdoc/rules
mkdir "$tmp/work"
cp fixtures/sample/job.log "$tmp/work/job.log"
cd "$tmp/work" || exit 2
"$moved/bin/oomdoc" --color never job.log >out 2>err
rc=$?
[ $rc -eq 0 ] && [ ! -s err ] && ok ||
	ko "moved oomdoc job.log: status $rc (want 0), stderr: $(head -3 err)"
grep -q -E '^    1\. [a-z_]+ \((high|medium|low), score ' out && ok ||
	ko "moved oomdoc job.log names no cause: the shipped rules were not used"
"$moved/bin/oomdoc" --format json job.log >out.json 2>/dev/null
[ "$(jq '[.events[].causes[]] | length' out.json 2>/dev/null)" -gt 0 ] 2>/dev/null && ok ||
	ko "moved oomdoc --format json job.log: no cause in the JSON report"
"$built" --format json job.log >built.json 2>/dev/null
cmp -s out.json built.json && ok ||
	ko "moved oomdoc --format json job.log differs from the build tree's $built"
# names_rules FILE: FILE names the moved rules directory, in any spelling
# ($moved/bin/../share/oomdoc/rules is one).
names_rules() {
	local p
	for p in $(grep -o -E "$moved/[^ :'\"]*" "$1"); do
		[ "$(realpath -m "$p")" = "$rules" ] && return 0
	done
	return 1
}
"$moved/bin/oomdoc" --version >version 2>&1
names_rules version && ok ||
	ko "moved oomdoc --version does not name the rules directory in use ($rules): $(cat version)"
# Taken away, the moved rules are missed: they were the ones in use.
mv "$rules" "$rules.away"
"$moved/bin/oomdoc" job.log >out 2>err
rc=$?
[ $rc -eq 3 ] && names_rules err && ok ||
	ko "moved oomdoc without its rules: status $rc (want 3), stderr: $(head -3 err) (want one naming $rules)"
mv "$rules.away" "$rules"
cd "$src" || exit 2

# --- 3. The example, built against the installed library -------------------------
example=examples/stream.c
if [ ! -f "$example" ]; then
	ko "$example is missing: no program to build against the installed library"
	finish
fi

# same PROGRAM FILE [dribble]: the example's events on FILE, given on
# standard input (or through a pipe in writes of 997 bytes, so that chunks
# end inside lines), are those of the moved program's JSON report.
same() {
	local prog=$1 log=$2 how=${3:-} rc
	if [ "$how" = dribble ]; then
		python3 -c 'import sys, time
data = open(sys.argv[1], "rb").read()
for i in range(0, len(data), 997):
    sys.stdout.buffer.write(data[i:i + 997])
    sys.stdout.buffer.flush()
    time.sleep(0.0005)' "$log" | "$prog" "$rules" >"$tmp/got.raw" 2>"$tmp/err"
		rc=$?
	else
		"$prog" "$rules" <"$log" >"$tmp/got.raw" 2>"$tmp/err"
		rc=$?
	fi
	if [ $rc -gt 1 ]; then
		ko "$(basename "$prog") <$log: status $rc, stderr: $(head -3 "$tmp/err")"
		return
	fi
	"$moved/bin/oomdoc" --format json "$log" 2>/dev/null |
		jq -r '.events[] | "\(.line)\t\(.kind)\t\(.memory.requested_bytes // "-")"' |
		sort -n >"$tmp/want"
	sort -n "$tmp/got.raw" >"$tmp/got"
	if cmp -s "$tmp/want" "$tmp/got"; then
		ok
	else
		ko "$(basename "$prog") <$log${how:+ ($how)}: not the events of oomdoc --format json:"
		diff "$tmp/want" "$tmp/got" | head -6
	fi
}
# compare PROGRAM: every fixture log, then all of them in one input
# dribbled through a pipe.
cat fixtures/*/*.log >"$tmp/all.log"
# Not a comparison of nothing with nothing: the fixtures have events.
events=$("$moved/bin/oomdoc" --format json "$tmp/all.log" 2>/dev/null | jq '.events | length')
[ "${events:-0}" -gt 50 ] && ok || ko "oomdoc finds ${events:-no} events in all the fixtures"
compare() {
	local log
	for log in fixtures/*/*.log; do
		same "$1" "$log"
	done
	same "$1" "$tmp/all.log" dribble
}

# Static: from a copy of the tree without the shared library, as a
# static-only install is, so that -loomdoc can only be liboomdoc.a.
cp -a "$moved" "$tmp/static"
rm -f "$tmp/static/$libdir"/liboomdoc.so*
if flags=$(PKG_CONFIG_PATH=$tmp/static/$libdir/pkgconfig \
	pkg-config --cflags --libs --static oomdoc 2>"$tmp/err"); then
	read -r -a flags <<<"$flags"
	if "$cc" "${cflags[@]}" -o "$tmp/stream-static" "$example" "${flags[@]}" \
		>"$tmp/cc.log" 2>&1; then
		ok
		readelf -d "$tmp/stream-static" | grep -q 'NEEDED.*liboomdoc' &&
			ko "the static example needs liboomdoc.so" || ok
		compare "$tmp/stream-static"
	else
		ko "cc ${cflags[*]} $example ${flags[*]}:"
		head -20 "$tmp/cc.log"
	fi
else
	ko "pkg-config --static oomdoc: $(cat "$tmp/err")"
fi

if [ "$kind" = shared ]; then
	if flags=$(PKG_CONFIG_PATH=$moved/$libdir/pkgconfig \
		pkg-config --cflags --libs oomdoc 2>"$tmp/err"); then
		read -r -a flags <<<"$flags"
		if "$cc" "${cflags[@]}" -o "$tmp/stream-shared" "$example" "${flags[@]}" \
			-Wl,-rpath,"$moved/$libdir" >"$tmp/cc.log" 2>&1; then
			ok
			readelf -d "$tmp/stream-shared" | grep -q 'NEEDED.*\[liboomdoc\.so\.0\]' && ok ||
				ko "the shared example does not need liboomdoc.so.0"
			compare "$tmp/stream-shared"
		else
			ko "cc ${cflags[*]} $example ${flags[*]}:"
			head -20 "$tmp/cc.log"
		fi
	else
		ko "pkg-config oomdoc: $(cat "$tmp/err")"
	fi
fi
finish

#!/usr/bin/env bash
# The shipped rules are found from the program's own location at run time
# (src/cli/rules_dir.c): bin/oomdoc reads ../share/oomdoc/rules beside it,
#  - in a tree of its own, which still works once moved, and through a
#    symbolic link to the program;
#  - never another tree's rules;
#  - with none beside it: one line naming the path tried, status 3, for
#    diagnose, rules and live alike; --no-default-rules runs without them;
#  - --version prints the directory.
#
# Usage: tests/rules_lookup.sh OOMDOC   (from the repository root)
set -u
oomdoc=$1
fail=0 pass=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The status is taken before the message is made: a command substitution
# in the message would set $? itself.
check() {   # check NAME STATUS
	if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else
		echo "FAIL $1"; fail=$((fail + 1)); fi
}
tree() {    # tree DIR: bin/oomdoc and share/oomdoc/rules, a copy
	mkdir -p "$1/bin" "$1/share/oomdoc"
	cp "$oomdoc" "$1/bin/oomdoc"
	cp -R rules "$1/share/oomdoc/rules"
}
from() {    # from OOMDOC: the file the capacity rule was loaded from
	"$1" rules show capacity | sed -n 's/^from: *//p'
}

# 1. A tree of its own; moved; through a link.
tree "$tmp/a"
[ "$("$tmp/a/bin/oomdoc" --version | grep '^Shipped rules: ')" = \
	"Shipped rules: $tmp/a/share/oomdoc/rules" ]
check "--version does not print $tmp/a/share/oomdoc/rules" $?
case $(from "$tmp/a/bin/oomdoc") in "$tmp/a/share/oomdoc/rules/"*) true ;; *) false ;; esac
st=$?
check "the tree's own rules were not read: $(from "$tmp/a/bin/oomdoc")" $st
mv "$tmp/a" "$tmp/moved"
case $(from "$tmp/moved/bin/oomdoc") in "$tmp/moved/share/oomdoc/rules/"*) true ;; *) false ;; esac
st=$?
check "a moved tree does not read its rules: $(from "$tmp/moved/bin/oomdoc")" $st
"$tmp/moved/bin/oomdoc" -f json fixtures/rules/capacity-top.log | grep -q '"rule": "capacity"'
check "a moved tree does not diagnose with its rules" $?
ln -s "$tmp/moved/bin/oomdoc" "$tmp/link"
case $(from "$tmp/link") in "$tmp/moved/share/oomdoc/rules/"*) true ;; *) false ;; esac
st=$?
check "through a link, not the program's own rules: $(from "$tmp/link")" $st

# 2. Another tree whose capacity rule differs: each reads its own.
tree "$tmp/site"
cp tests/rules/override/capacity.yaml "$tmp/site/share/oomdoc/rules/zz-site.yaml"
"$tmp/site/bin/oomdoc" -f json fixtures/rules/capacity-top.log | grep -q 'Site policy'
check "the site tree does not read its own capacity rule" $?
"$tmp/moved/bin/oomdoc" -f json fixtures/rules/capacity-top.log | grep -q 'Site policy'
[ $? -ne 0 ]
check "a tree read another tree's rules" $?

# 3. No rules beside it: one line naming the path, status 3.
mkdir -p "$tmp/bare/bin"
cp "$oomdoc" "$tmp/bare/bin/oomdoc"
want="$tmp/bare/share/oomdoc/rules: cannot open the shipped rules directory: No such file or directory"
for cmd in "fixtures/sample/job.log" "rules list" "live --backend fake fixtures/sample/job.log"; do
	# shellcheck disable=SC2086
	"$tmp/bare/bin/oomdoc" $cmd >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 3 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		grep -q -E "^oomdoc( live)?: $want\$" "$tmp/err"
	st=$?
	check "oomdoc $cmd without rules: status $rc, stderr: $(cat "$tmp/err")" $st
done
"$tmp/bare/bin/oomdoc" --no-default-rules fixtures/sample/job.log >/dev/null 2>"$tmp/err"
check "--no-default-rules without rules: status $?" $?
"$tmp/bare/bin/oomdoc" --version | grep -q "^Shipped rules: none ($want)\$"
st=$?
check "--version without rules: $("$tmp/bare/bin/oomdoc" --version | tail -1)" $st

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

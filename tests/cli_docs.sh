#!/usr/bin/env bash
# Keeps the man page, --help and the option parser in agreement:
#  - mandoc -Tlint finds nothing in man/oomdoc.1;
#  - the options listed by --help (made from the parser's table) are the
#    ones the man page's OPTIONS section documents, long and short names;
#  - the parser accepts each of them and refuses an unknown one with one
#    line on standard error and status 2;
#  - exit statuses 0 to 3 are in the man page and in --help, each with
#    its meaning;
#  - the facts, the shipped rules, and issue 11's points: the account,
#    the shortfall, oomdoc.report/2 and the knowledge table's sources.
#
# Usage: tests/cli_docs.sh OOMDOC   (from the repository root)
set -u
oomdoc=$1
man=man/oomdoc.1
fail=0 pass=0
check() {   # check NAME CONDITION-STATUS
	if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else
		echo "FAIL $1"; fail=$((fail + 1)); fi
}

# 1. The man page lints clean.  A manual referenced with .Xr that this
#    machine lacks is the machine's business, not the page's.
lint=$(mandoc -Tlint "$man" 2>&1 |
	grep -v -e 'referenced manual not found' -e 'mandoc\.db')
[ -z "$lint" ]; check "mandoc -Tlint: $lint" $?

# 2. Option names.  From --help: "  -f, --format FORMAT  ..." lines.
help_opts=$("$oomdoc" --help | grep -E '^  +(-[A-Za-z], )?--[a-z]' |
	sed -E 's/^ +((-[A-Za-z]), )?--([a-z-]+).*/\3 \2/' | sort)
# From the man page: ".It Fl f Ar format , Fl \-format Ar format" lines in
# the OPTIONS section.
man_opts=$(sed -n '/^\.Sh OPTIONS/,/^\.Sh /p' "$man" | grep '^\.It ' |
	sed -E 's/\\-/-/g' |
	awk '{ short = ""; long = "";
	       for (i = 1; i <= NF; i++) if ($i == "Fl") {
	           f = $(i + 1);
	           if (f ~ /^-/) { sub(/^-/, "", f); long = f }
	           else short = "-" f }
	       print long, short }' |
	sed -E 's/ +$//' | sort)
help_opts=$(echo "$help_opts" | sed -E 's/ +$//')
[ "$help_opts" = "$man_opts" ]
check "options differ between --help and the man page:
--help:
$help_opts
man page:
$man_opts" $?

# 3. The parser knows each documented option ...
while read -r long short; do
	[ -n "$long" ] || continue
	err=$("$oomdoc" "--$long=x" /dev/null 2>&1 >/dev/null)
	case $err in *"unknown option"*) false ;; *) true ;; esac
	check "--$long is documented but the parser does not know it" $?
	if [ -n "$short" ]; then
		out=$("$oomdoc" "$short" json /dev/null 2>&1)
		case $out in *"unknown option"*) false ;; *) true ;; esac
		check "$short is documented but the parser does not know it" $?
	fi
	# ... and SYNOPSIS names it.
	sed -n '/^\.Sh SYNOPSIS/,/^\.Sh /p' "$man" | sed 's/\\-/-/g' |
		grep -q -e "Fl -$long" -e "Fl ${short#-}\b" -e "Fl ${short#-} "
	check "SYNOPSIS does not show --$long" $?
done <<< "$man_opts"

# ... and refuses an unknown one in one line, with status 2.
err=$("$oomdoc" --no-such-option 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && [ "$(echo "$err" | wc -l)" -eq 1 ] &&
	case $err in *"unknown option '--no-such-option'"*) true ;; *) false ;; esac
check "unknown option: status $rc, stderr: $err" $?

# 4. Exit statuses: the man page's list and --help agree on 0 to 3, each
#    status with its meaning.  Each line: the status, what the man page's
#    entry for it says, and what --help says after the number (an extended
#    regular expression; --help is read as one line).
while IFS='|' read -r st man_says help_says; do
	sed -n '/^\.Sh EXIT STATUS/,/^\.Sh /p' "$man" |
		sed -n "/^\.It $st\$/,/^\.It /p" | grep -q -i -- "$man_says"
	check "EXIT STATUS does not list $st as '$man_says'" $?
	"$oomdoc" --help | tr '\n' ' ' | grep -q -E -i -- "(^|[^0-9])$st $help_says"
	check "--help does not give status $st as '$st $help_says'" $?
done <<'EOF'
0|out-of-memory event was found|(if|when) an? out-of-memory (failure|event) (was|is) found
1|none was found|(if|when) (none|no out-of-memory (failure|event)) (was|is)
2|usage error|(on|for) a usage or input error
3|error in a rule file|(on|for) an error in the rules
EOF

# 5. The facts the man page lists are the ones the rules can use.
man_facts=$(sed -n '/^\.Ss FACTS/,/^\.El/p' "$man" | sed -n 's/^\.It Cm //p' |
	sed 's/\\-/-/g')
[ "$man_facts" = "$("$oomdoc" rules facts)" ]
check "the FACTS of the man page differ from oomdoc rules facts:
$(diff <(echo "$man_facts") <("$oomdoc" rules facts))" $?

# 6. The shipped rules the man page names are the ones loaded, and they
#    lint clean.
man_rules=$(sed -n '/^The shipped rules:/,/^\.Pp/p' "$man" |
	sed -n 's/^\.Cm \([a-z_]*\).*/\1/p' | sort)
[ "$man_rules" = "$("$oomdoc" rules list | awk '{print $1}' | sort)" ]
check "the shipped rules named in the man page differ from rules list" $?
"$oomdoc" rules check >/dev/null
check "oomdoc rules check finds errors in the shipped rules" $?

# 7. Issue 11's reference points: the man page documents the memory
#    account (JSON memory.account and its six parts), the shortfall and
#    the causes' explains_bytes, the schema name oomdoc.report/2, and the
#    knowledge table with the source every entry must give (that the
#    shipped entries give one, rules check in 6 checks: src/lib/
#    knowledge.c refuses an entry without).
for want in '^\.Dq memory\.account' 'other_processes Dc , Do non_framework' \
	'The shortfall is the request less the free memory' \
	'explains_bytes' 'oomdoc\.report/2' '^\.Ss KNOWLEDGE TABLE' \
	'^\.Ql source :'; do
	grep -q -e "$want" "$man"
	check "the man page does not document: $want" $?
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

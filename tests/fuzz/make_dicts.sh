#!/bin/sh
# make_dicts.sh: writes the libFuzzer dictionaries (tests/fuzz/dict/*.dict)
# from the program and the sources, so that they follow the anchors, the
# facts and the JSON keys as those change.
#
# Usage: sh tests/fuzz/make_dicts.sh build/bin/oomdoc   (from the source tree)
#
#   scan.dict         the anchors (oomdoc --list-anchors) and the shapes of
#                     the lines around an OOM (prefixes, tracebacks, settings,
#                     kills), for fuzz_scan;
#   expr.dict         the fact names (oomdoc rules facts), the operators,
#                     functions and units of the rule language (src/lib/expr.c);
#   rules.dict        the rule files' keys (src/lib/rules_load.c), the kinds
#                     (src/lib/names.c), the fact names and YAML's own syntax;
#   report_read.dict  the JSON report's keys (src/lib/report_fields.c,
#                     src/live/report_read.c) and the enumerations' names;
#   pickle.dict       the pickle opcodes with their arguments' shapes
#                     (src/lib/pickle.c) and a snapshot's keys and values
#                     (src/lib/snapshot.c), for fuzz_pickle.
#   recognisers.dict  the recogniser files' keys (src/lib/recog_load.c), the
#                     kinds, the field names (src/lib/recog_stacks.c), and
#                     PCRE2's syntax, for fuzz_recognisers.
#   structured.dict   the record keys the structured-line reader looks for
#                     (src/lib/structured.c) and the shapes of its lines
#                     (CRI prefixes, times, journald's byte arrays).
set -eu
bin=$1
out=tests/fuzz/dict
mkdir -p "$out"

# One dictionary entry per input line: backslash and double quote escaped,
# bytes outside printable ASCII as \xNN (libFuzzer's dictionary syntax).
entries() {
	LC_ALL=C awk 'BEGIN { for (i = 0; i < 256; i++) ord[sprintf("%c", i)] = i }
	length($0) > 0 && !seen[$0]++ {
		s = ""
		for (i = 1; i <= length($0); i++) {
			c = substr($0, i, 1)
			if (c == "\\" || c == "\"") s = s "\\" c
			else if (ord[c] < 32 || ord[c] > 126) s = s sprintf("\\x%02X", ord[c])
			else s = s c
		}
		print "\"" s "\""
	}'
}

facts=$("$bin" rules facts)
kinds=$(sed -n '/^} od_kinds\[/,/^};/p' src/lib/names.c |
	grep -o '{ *"[a-z_]*"' | grep -o '[a-z_]*')

{
	echo "# Anchors and log shapes for fuzz_scan (written by make_dicts.sh)."
	{
		"$bin" --list-anchors
		printf '%s\n' "Traceback (most recent call last):" '  File "' \
		    '", line ' ", in " "[rank0]: " "[rank1]:[W" "0: " \
		    "torch.OutOfMemoryError: " "RuntimeError: " \
		    "PYTORCH_CUDA_ALLOC_CONF=" "expandable_segments:True" \
		    "max_split_size_mb:" "Killed process " "oom-kill:" \
		    "Memory cgroup out of memory" "anon-rss:" "total-vm:" \
		    ",oom_memcg=/slurm/uid_1/job_" ",task_memcg=" ",pid=" \
		    "/system.slice/slurmstepd.scope/job_" "StepId=" \
		    " killed as a result of limit of " "memory: usage " \
		    " GiB" " MiB" " KiB" " bytes" "GiB total capacity" \
		    "already allocated" "free;" "reserved in total by PyTorch" \
		    "Process " " has " " memory in use" "step " "epoch " \
		    "forward" "backward" "optimizer" "NCCL" "Xid" \
		    "2024-01-01T00:00:00Z " "$(printf '\033[31m')" \
		    "$(printf '\r\n')" "$(printf '\t')"
	} | entries
} > "$out/scan.dict"

{
	echo "# Facts, operators, functions and units for fuzz_expr (written by make_dicts.sh)."
	{
		echo "$facts"
		printf '%s\n' "and" "or" "not" "true" "false" "has(" "min(" \
		    "max(" "abs(" "round(" "floor(" "ceil(" "==" "!=" "<=" \
		    ">=" "<" ">" "+" "-" "*" "/" "(" ")" "," "{{" "}}" "{" "}" \
		    "'" "\\'" "\\\\" "B" "KiB" "MiB" "GiB" "TiB" "PiB" "KB" \
		    "MB" "GB" "TB" "0.5" "1e308" "2GiB"
	} | entries
} > "$out/expr.dict"

{
	echo "# Rule files' keys, kinds and facts for fuzz_rules (written by make_dicts.sh)."
	{
		grep -o '"[a-z_]*"' src/lib/rules_load.c | tr -d '"'
		echo "$kinds"
		echo "$facts"
		printf '%s\n' "rules:" "  - id: " "    when: " "    score: " \
		    "    kinds: [" "    fixes:" "      - id: " "        text: " \
		    "env: {" "config: {" "explain: >-" "|-" "&a" "*a" "<<: " \
		    "---" "..." "!!str" "!!map" "%YAML 1.1" "{{" "}}" "has(" \
		    " and " " or " "not " "true" "false" "null" "~"
	} | entries
} > "$out/rules.dict"

{
	echo "# JSON report keys and names for fuzz_report_read (written by make_dicts.sh)."
	{
		grep -oh '\(key = \|JF_FIGURE(\|JF_CHARS(\)"[a-z_]*"' \
		    src/lib/report_fields.c | grep -o '"[a-z_]*"' | tr -d '"'
		grep -o '"[a-z_./0-9]*"' src/live/report_read.c | tr -d '"' |
		    grep -v '\.h$'
		echo "$kinds"
		printf '%s\n' "oomdoc.report/1" "high" "medium" "low"
	} | sed 's/.*/"&"/' | entries
	printf '%s\n' "null" "true" "false" "{" "}" "[" "]" ":" "," '"' \
	    "\\u0000" "\\ud800" "9223372036854775807" "-1" "1e999" "0.5" |
	    entries
} > "$out/report_read.dict"
{
	echo "# Pickle opcodes and snapshot keys for fuzz_pickle (written by make_dicts.sh)."
	# The opcodes (one byte each), then a few with their arguments.
	sed -n '/^} pk_ops\[256\] = {/,/^};/p' src/lib/pickle.c |
	    sed -n "s/^	\[\(0x[0-9a-f]*\)\].*/\1/p; s/^	\['\(.\)'\].*/\1/p" |
	    while read -r op; do
		case $op in
		0x*) printf '"\\x%s"\n' "${op#0x}" ;;
		*) printf '%s\n' "$op" | entries ;;
		esac
	    done
	printf '%s\n' '"\x80\x02"' '"\x80\x04\x95"' '"\x80\x05"' \
	    '"\x8a\x06\x00\x00\x00\x00\x00\x01"' '"\x8a\x09"' \
	    '"q\x00"' '"h\x00"' '"r\x00\x00\x00\x00"' '"\x94"' '"(u"' '"(e"'
	{
		grep -o '"[a-z_]*"' src/lib/snapshot.c | tr -d '"'
	} | sed 's/.*/"&"/' | entries
	grep -o '"[a-z_]*"' src/lib/snapshot.c | tr -d '"' |
	    awk '{ printf "\"\\x8c\\x%02X%s\"\n", length($0), $0 }'  | awk '!seen[$0]++'
} > "$out/pickle.dict"
{
	echo "# Recogniser files' keys, kinds, fields and PCRE2 syntax for fuzz_recognisers (written by make_dicts.sh)."
	{
		grep -o '"[a-z_]*"' src/lib/recog_load.c | tr -d '"'
		echo "$kinds"
		sed -n '/^const sk_field sk_fields/,/^};/p' src/lib/recog_stacks.c |
		    grep -o '"[a-z]*"' | tr -d '"'
		printf '%s\n' "recognisers:" "  - id: " "    kind: " \
		    "    confidence: " "    anchors:" "      - " "    pattern: " \
		    "    follow:" "      pattern: " "      lines: " \
		    "      required: true" "    examples:" "      - text: " \
		    "        fields: {" "caseless: true" "fatal: false" \
		    "confirm: " "high" "medium" "low" "(?<" ">" "_b" "_kb" \
		    "_gib" "_bin" "nonfatal" "(?:" ")?" "\\d+" "\\s+" "\\S+" \
		    "[\\d.]+" "[^)\\n]*" "(?m)" "(?i)" "(?<!" "(?=" "(?!" \
		    "+)+" "*)*" "{0,800}?" "\\b" "$" "^" "|" "'" "''" \
		    "\"" "\\n"
	} | entries
} > "$out/recognisers.dict"
{
	echo "# Record keys and line shapes for fuzz_structured (written by make_dicts.sh)."
	{
		sed -n '/^static const char \*const sl_/,/};/p' \
		    src/lib/structured.c | grep -o '"[A-Za-z_@]*"'
		printf '%s\n' '"streams"' '"values"' '"data"' '"result"' \
		    '"stream"' '"kubernetes"' '"labels"' '"attrs"'
	} | entries
	printf '%s\n' "{" "}" "[" "]" ":" "," "null" '"' "\\n" "\\r\\n" \
	    "\\u0000" "\\u001b[31m" "[27,91,51,49,109]" "[300]" \
	    "2024-05-01T10:00:00.123456789Z" "2024-05-01T10:00:00+02:00" \
	    "1714557600123456" "1714557600123456789" "1714557600.5" \
	    " stdout F " " stderr P " "[pod/p/c] " "node-1: " \
	    "[rank3]: " "CUDA out of memory" | entries
} > "$out/structured.dict"
wc -l "$out"/*.dict

#!/usr/bin/env bash
# Every shipped rule has a fixture where it must be the top cause (or, for
# a rule that is a second opinion by nature, where it must fire) and one
# where it must not fire: fixtures/rules/EXPECT lists them.  The whole
# ranking of each fixture (every cause, its score and confidence) is
# checked by tests/check_causes.py against fixtures/rules/*.causes.
#
# Usage: tests/check_rules.sh OOMDOC   (from the repository root)
set -u
oomdoc=$1
pass=0 fail=0
while read -r name check rule; do
	case $name in ''|'#'*) continue ;; esac
	json=$("$oomdoc" --format json "fixtures/rules/$name.log" 2>&1)
	got=$(printf '%s' "$json" | python3 -c '
import json, sys
j = json.load(sys.stdin)
top = j["summary"]["top_cause"]
fired = sorted({c["rule"] for e in j["events"] for c in e["causes"]})
print(top or "-", ",".join(fired) or "-")')
	top=${got%% *}
	fired=,${got#* },
	case $check in
	top) [ "$top" = "$rule" ] ;;
	fires) case $fired in *",$rule,"*) true ;; *) false ;; esac ;;
	not) case $fired in *",$rule,"*) false ;; *) true ;; esac ;;
	*) false ;;
	esac
	if [ $? -eq 0 ]; then
		pass=$((pass + 1))
	else
		echo "FAIL $name: want $check $rule; top cause $top, fired ${fired//,/ }"
		fail=$((fail + 1))
	fi
done < fixtures/rules/EXPECT
# Every shipped rule has its fixtures.
for rule in $("$oomdoc" rules list | awk '{print $1}'); do
	grep -q " $rule\$" fixtures/rules/EXPECT ||
		{ echo "FAIL rule $rule has no fixture"; fail=$((fail + 1)); }
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]

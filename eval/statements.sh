#!/bin/sh
# eval/statements.sh: reads oomdoc's statements back on the held-out real
# logs, as the suite does on the fixtures: every comparison holds, every
# account adds up, no unknown value is printed (tests/check_statements.py),
# every fix is valid for the release and vendor the log reveals
# (tests/check_fixes.py), and every batch change keeps the effective batch
# (tests/check_batch.py).  Measures; nothing here is tuned on.
#
# Usage: eval/statements.sh [OOMDOC [DIR]]   (from the repository root;
# DIR is the folder of logs, eval/heldout unless given)
set -u
oomdoc=${1:-build/bin/oomdoc}
dir=${2:-eval/heldout}
status=0
python3 tests/check_statements.py "$oomdoc" "$dir"/*.log || status=1
python3 tests/check_fixes.py --logs "$dir/*.log" "$oomdoc" \
	rules/knowledge.yaml || status=1
python3 tests/check_batch.py --logs "$dir/*.log" "$oomdoc" ||
	status=1
exit $status

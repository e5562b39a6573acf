#!/bin/bash
# gpu_dry_run.sh OOMDOC: tests/gpu/run.sh without a GPU.  --dry-run must
# write one valid JSON line per step, each "skipped: no GPU", then the
# summary, and exit 0; on a machine with no nvidia-smi the real run must
# skip the same way with status 2.  The steps are the ones the script
# lists, each once.
set -u
oomdoc=$1
out=$(mktemp -d "${TMPDIR:-/tmp}/oomdoc-gpu-dry.XXXXXX")
trap 'rm -rf "$out"' EXIT
fail=0
bash -n tests/gpu/run.sh || { echo "FAIL: tests/gpu/run.sh does not parse"; exit 1; }
if command -v shellcheck >/dev/null && ! shellcheck tests/gpu/run.sh; then
	echo "FAIL: shellcheck"
	fail=1
fi

check() {       # check DIR WANT_STATUS GOT_STATUS
	python3 - "$1/steps.jsonl" tests/gpu/run.sh "$2" "$3" <<'PY'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
src = open(sys.argv[2]).read()
want = re.search(r"^steps=\(([^)]*)\)", src, re.M).group(1).split()
rows = [json.loads(l) for l in lines]
bad = []
if sys.argv[3] != sys.argv[4]:
    bad.append("status %s, want %s" % (sys.argv[4], sys.argv[3]))
steps = [r["step"] for r in rows[:-1]]
if steps != want:
    bad.append("steps %s, want %s" % (steps, want))
for r in rows[:-1]:
    if r["status"] != "skip" or not r["detail"].startswith("skipped: no GPU"):
        bad.append("%s: %s %r" % (r["step"], r["status"], r["detail"]))
s = rows[-1]
if s.get("step") != "summary" or (s["pass"], s["fail"], s["skip"]) != (0, 0, len(want)):
    bad.append("summary %r" % s)
print("; ".join(bad) if bad else "ok: %d steps skipped, summary last" % len(want))
sys.exit(1 if bad else 0)
PY
}

OUT=$out/dry bash tests/gpu/run.sh --dry-run "$oomdoc" >"$out/dry.txt" 2>&1
check "$out/dry" 0 $? || fail=1
if ! command -v nvidia-smi >/dev/null; then
	OUT=$out/real bash tests/gpu/run.sh "$oomdoc" >"$out/real.txt" 2>&1
	check "$out/real" 2 $? || fail=1
fi
exit $fail

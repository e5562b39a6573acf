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

check() {       # check DIR WANT_STATUS GOT_STATUS [REASON]
	python3 - "$1/steps.jsonl" tests/gpu/run.sh "$2" "$3" "${4:-skipped: no GPU}" <<'PY'
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
    if r["status"] != "skip" or not r["detail"].startswith(sys.argv[5]):
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
# A GPU that nvidia-smi lists but this binary cannot probe (no CUDA
# backend) or this Python cannot use (no CUDA PyTorch): every step skipped
# with the reason, status 2.  The stand-in nvidia-smi lists one GPU.
mkdir -p "$out/bin"
printf '#!/bin/sh\necho "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-fa4e0000-0000-4000-8000-000000000000)"\n' >"$out/bin/nvidia-smi"
chmod +x "$out/bin/nvidia-smi"
if "$oomdoc" --version | grep -q '^CUDA live mode: built'; then
	why="skipped: no PyTorch with CUDA"
	python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null && why=
else
	why="skipped: the binary has no CUDA backend"
fi
if [ -n "$why" ]; then
	PATH=$out/bin:$PATH OUT=$out/listed bash tests/gpu/run.sh "$oomdoc" >"$out/listed.txt" 2>&1
	rc=$?
	# The preflight's own line gives the detail; the others the reason.
	python3 - "$out/listed/steps.jsonl" <<'PY' && check "$out/listed" 2 $rc "skipped: " || fail=1
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert all(r["status"] == "skip" for r in rows[:-1]), rows
PY
	grep -q "$why" "$out/listed/steps.jsonl" || { echo "FAIL: no step says '$why'"; fail=1; }
fi
exit $fail

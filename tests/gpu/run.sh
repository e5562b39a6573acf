#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU, its driver and PyTorch,
# this script
#   1. runs `oomdoc probe` (context cost, headroom, health);
#   2. induces real PyTorch out-of-memory failures of known causes with
#      small Python scripts: a batch too large for the device,
#      fragmentation (and the same run with expandable_segments:True,
#      which should not fail), a second process holding memory, one
#      request larger than the device, a per-process memory fraction, and
#      growth over steps;
#   3. runs `oomdoc` and `oomdoc live` on each captured log and compares
#      the top cause (summary.top_cause of --format json) and the live
#      verdict on it with the induced cause; and runs one failure with
#      the Python hook (oomdoc.torch.attach) in the process;
#   4. writes the results, with the date and the device, to results.md
#      and results.json (and every log and report beside them) in $OUT
#      when it is set, else in a new temporary directory.
# It takes a few minutes; every step has a timeout, and the whole run is
# meant to stay under ten minutes.
#
# Usage: tests/gpu/run.sh [OOMDOC]
#   OOMDOC: the oomdoc binary to test (a static build runs where no
#   development packages are installed: cmake -DOOMDOC_STATIC=ON).
#   Without it, oomdoc is built from this checkout (needs CMake, the CUDA
#   toolkit and the -dev packages of tools/setup.sh).
# Status: 0 when every case matched, 1 when one did not, 2 when the
# machine cannot run the check (no python3 with torch, no GPU).
# Environment: PYTHON (default python3); OOMDOC_CUPTI (else PyTorch's
# CUPTI is looked for); OOMDOC_LIVE_OPTS, options added to every
# `oomdoc live` (a dry run of this script without a GPU: "--backend
# fake").
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
start=$(date +%s)

if [ -n "${OUT:-}" ]; then
	res=$OUT
	mkdir -p "$res"
else
	res=$(mktemp -d "${TMPDIR:-/tmp}/oomdoc-gpu.XXXXXX")
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/oomdoc-gpu-work.XXXXXX")
holder_pid=
cleanup() {
	[ -n "$holder_pid" ] && kill "$holder_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
log() { echo "[$(($(date +%s) - start))s] $*" | tee -a "$res/run.log"; }

# The binary.
if [ $# -ge 1 ]; then
	oomdoc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
else
	log "building oomdoc from $root"
	if ! timeout 300 cmake -S "$root" -B "$work/build" -DOOMDOC_TESTS=OFF \
		-DOOMDOC_SHARED=ON -DCMAKE_BUILD_TYPE=Release >"$res/build.log" 2>&1 ||
	   ! timeout 300 cmake --build "$work/build" -j "$(nproc)" \
		>>"$res/build.log" 2>&1; then
		log "cannot build oomdoc: see build.log"
		exit 2
	fi
	oomdoc=$work/build/bin/oomdoc
fi
[ -x "$oomdoc" ] || { log "no oomdoc at $oomdoc"; exit 2; }
"$oomdoc" --version >"$res/version.txt" 2>&1
ldd "$oomdoc" >"$res/ldd.txt" 2>&1
# A binary built elsewhere looks for the shipped rules where it was built:
# when they are not there, this checkout's are used.
read -r -a live_opts <<<"${OOMDOC_LIVE_OPTS:-}"
rules=()
if ! "$oomdoc" rules check >/dev/null 2>&1; then
	rules=(--no-default-rules --rules "$root/rules")
	log "using the rules of $root/rules"
fi

py=${PYTHON:-python3}
if ! timeout 120 "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
	>"$res/torch.txt" 2>&1; then
	log "no python3 with CUDA-enabled torch: see torch.txt"
	exit 2
fi
timeout 60 "$py" -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))' \
	>>"$res/torch.txt" 2>&1
# PyTorch's wheels carry a CUPTI; live mode can load that one.
if [ -z "${OOMDOC_CUPTI:-}" ]; then
	cupti=$(timeout 60 "$py" - 2>/dev/null <<'EOF'
import glob, os, site
for d in site.getsitepackages() + [site.getusersitepackages()]:
    for p in sorted(glob.glob(os.path.join(d, "nvidia", "cu*", "lib", "libcupti.so*")) +
                    glob.glob(os.path.join(d, "nvidia", "cuda_cupti", "lib", "libcupti.so*"))):
        print(p)
        raise SystemExit
EOF
)
	[ -n "$cupti" ] && export OOMDOC_CUPTI=$cupti
fi
device=$(nvidia-smi --query-gpu=name,driver_version,memory.total \
	--format=csv,noheader -i 0 2>/dev/null | head -1)
[ -n "$device" ] || device=$(tail -1 "$res/torch.txt")
log "device: $device; oomdoc: $(head -2 "$res/version.txt" | tr '\n' ' ')"
log "CUPTI: ${OOMDOC_CUPTI:-default search}"

# 1. oomdoc probe.
timeout 300 "$oomdoc" probe --format json >"$res/probe.json" 2>"$res/probe.err"
probe_rc=$?
timeout 300 "$oomdoc" probe >"$res/probe.txt" 2>&1
log "oomdoc probe: status $probe_rc $(head -c 300 "$res/probe.err")"

# 2. The scripts that fail, each printing its own traceback.
cat >"$work/common.py" <<'EOF'
import os, sys, time, torch
GIB = 1 << 30
dev = torch.device("cuda", 0)
torch.cuda.init()
free, total = torch.cuda.mem_get_info(0)
def gib(n):
    return "%.2f GiB" % (n / GIB)
EOF
cat >"$work/capacity.py" <<'EOF'
# A batch too large for the device: an MLP whose activations, kept for
# the backward pass, need about twice the free memory.
from common import *
width, layers = 8192, 12
batch = int(2 * free / (layers * width * 4)) // 64 * 64
print({'per_device_train_batch_size': batch, 'bf16': False}, flush=True)
model = torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(layers)]).to(dev)
x = torch.randn(batch, width, device=dev)
loss = model(x).square().mean()
loss.backward()
print("no out-of-memory failure")
EOF
cat >"$work/fragmentation.py" <<'EOF'
# Fragmentation: fill the device with 1 GiB segments, free them (they stay
# cached), then take 600 MiB from each, which splits every segment and
# leaves 424 MiB free inside each beside a live tensor; a 1 GiB request
# then finds no block and no free device memory, though the reserved but
# unallocated memory is many times the request.
from common import *
keep = []
try:
    while True:
        keep.append(torch.empty(GIB, dtype=torch.uint8, device=dev))
except torch.OutOfMemoryError:
    pass
n = len(keep)
del keep
small = [torch.empty(600 << 20, dtype=torch.uint8, device=dev) for _ in range(n)]
print("segments %d, reserved %s, allocated %s" % (n, gib(torch.cuda.memory_reserved()),
      gib(torch.cuda.memory_allocated())), flush=True)
big = torch.empty(GIB, dtype=torch.uint8, device=dev)
print("no out-of-memory failure")
EOF
cat >"$work/holder.py" <<'EOF'
# The other process: holds 60 % of the device until killed.
from common import *
hold = torch.empty(int(0.6 * total), dtype=torch.uint8, device=dev)
torch.cuda.synchronize()
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(900)
EOF
cat >"$work/foreign.py" <<'EOF'
# Another process holds 60 %: half the device does not fit.
from common import *
x = torch.empty(int(0.5 * total), dtype=torch.uint8, device=dev)
print("no out-of-memory failure")
EOF
cat >"$work/too_large.py" <<'EOF'
# One request larger than the whole device.
from common import *
x = torch.empty(int(1.5 * total), dtype=torch.uint8, device=dev)
print("no out-of-memory failure")
EOF
cat >"$work/fraction.py" <<'EOF'
# A per-process memory fraction of a quarter; a third of the device fits
# the device but not the fraction.
from common import *
torch.cuda.set_per_process_memory_fraction(0.25, 0)
x = torch.empty(int(total / 3), dtype=torch.uint8, device=dev)
print("no out-of-memory failure")
EOF
cat >"$work/growth.py" <<'EOF'
# Growth over steps: each step keeps a tensor alive (a leak), and the
# metric line shows the memory rising until it fails.
from common import *
leak = []
for step in range(0, 100000):
    leak.append(torch.empty(int(total / 24), dtype=torch.uint8, device=dev))
    print({'step': step * 50, 'loss': 2.0, 'memory_allocated': gib(torch.cuda.memory_allocated())},
          flush=True)
EOF

# run CASE SCRIPT [ENV...]: the script's output is CASE.log.
run_case() {
	local name=$1 script=$2
	shift 2
	(cd "$work" && env "$@" timeout 180 "$py" "$script") >"$res/$name.log" 2>&1
	echo $?
}

# check CASE WANT_TOP WANT_VERDICT [LIVE OPTION]...
results=()
check_case() {
	local name=$1 want=$2 want_verdict=$3
	shift 3
	local top verdict diag_rc live_rc ok=yes
	timeout 120 "$oomdoc" ${rules[@]+"${rules[@]}"} --format json "$res/$name.log" \
		>"$res/$name.report.json" 2>"$res/$name.report.err"
	diag_rc=$?
	top=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["top_cause"])' \
		"$res/$name.report.json" 2>/dev/null)
	timeout 300 "$oomdoc" live ${rules[@]+"${rules[@]}"} \
		${live_opts[@]+"${live_opts[@]}"} --format json "$@" \
		"$res/$name.log" >"$res/$name.live.json" 2>"$res/$name.live.err"
	live_rc=$?
	timeout 300 "$oomdoc" live ${rules[@]+"${rules[@]}"} \
		${live_opts[@]+"${live_opts[@]}"} "$@" "$res/$name.log" \
		>"$res/$name.live.txt" 2>&1
	verdict=$("$py" - "$res/$name.live.json" "$want" <<'EOF' 2>/dev/null
import json, sys
live = json.load(open(sys.argv[1]))
v = [v["verdict"] for e in live["events"] for v in e["verdicts"] if v["cause"] == sys.argv[2]]
print(v[0] if v else "none")
EOF
)
	[ -n "$verdict" ] || verdict="error"
	[ "$top" = "$want" ] || ok=no
	[ "$want_verdict" = "-" ] || [ "$verdict" = "$want_verdict" ] || ok=no
	results+=("$name|$want|$top|$want_verdict|$verdict|$diag_rc|$live_rc|$ok")
	log "$name: top cause $top (want $want), verdict $verdict (want $want_verdict), status $diag_rc/$live_rc: $ok"
}

log "capacity"
rc=$(run_case capacity capacity.py)
check_case capacity capacity confirmed --max-memory 100%

log "fragmentation"
rc=$(run_case fragmentation fragmentation.py)
check_case fragmentation fragmentation confirmed --max-memory 100%

log "fragmentation with expandable_segments:True"
rc=$(run_case fragmentation_expandable fragmentation.py \
	PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
timeout 120 "$oomdoc" ${rules[@]+"${rules[@]}"} --format json "$res/fragmentation_expandable.log" \
	>"$res/fragmentation_expandable.report.json" 2>/dev/null
erc=$?
# Expected: no failure at all (status 1 of oomdoc), the fix working.
ok=no; [ $erc -eq 1 ] && ok=yes
results+=("fragmentation_expandable|none|$([ $erc -eq 1 ] && echo none || echo oom)|-|-|$erc|-|$ok")
log "fragmentation_expandable: script $rc, oomdoc $erc (want 1: no failure): $ok"

log "foreign process"
rm -f "$work/holder.ready"
(cd "$work" && exec timeout 600 "$py" holder.py "$work/holder.ready") >"$res/holder.log" 2>&1 &
holder_pid=$!
for _ in $(seq 120); do [ -s "$work/holder.ready" ] && break; sleep 1; done
if [ -s "$work/holder.ready" ]; then
	rc=$(run_case foreign foreign.py)
	check_case foreign foreign_process confirmed --force
	# Without --force live mode must refuse (status 4).
	timeout 120 "$oomdoc" live ${rules[@]+"${rules[@]}"} \
		${live_opts[@]+"${live_opts[@]}"} "$res/foreign.log" \
		>"$res/foreign.refused.txt" 2>&1
	frc=$?
	ok=no
	[ $frc -eq 4 ] && grep -q -- '--force' "$res/foreign.refused.txt" && ok=yes
	results+=("foreign_refusal|refused|$frc|-|-|-|$frc|$ok")
	log "foreign without --force: status $frc (want 4): $ok"
else
	results+=("foreign|foreign_process|holder-not-ready|confirmed|-|-|-|no")
	log "foreign: the holder process did not start (see holder.log)"
fi
kill "$holder_pid" 2>/dev/null
wait "$holder_pid" 2>/dev/null
holder_pid=

log "request larger than the device"
rc=$(run_case too_large too_large.py)
check_case too_large request_exceeds_device confirmed

log "memory fraction"
rc=$(run_case fraction fraction.py)
check_case fraction memory_fraction_limit confirmed

log "growth over steps"
rc=$(run_case growth growth.py)
check_case growth growth_leak -

# The in-process hook, oomdoc.torch.attach (python/oomdoc, through the
# shared library: OOMDOC_LIBRARY, else the one built here): the request
# larger than the device again, with the observer attached and the
# memory history recorded.  The observer must write the allocator
# snapshot and memory_stats beside the log (the file standard error goes
# to), print its report before the traceback, and give the figures that
# PyTorch's own message gives.
log "in-process hook (oomdoc.torch)"
hooklib=${OOMDOC_LIBRARY:-}
[ -z "$hooklib" ] && [ -f "$work/build/liboomdoc.so.0" ] && hooklib=$work/build/liboomdoc.so.0
if [ -n "$hooklib" ]; then
	cat >"$work/hook.py" <<'EOF'
import oomdoc.torch
att = oomdoc.torch.attach(record_history=True)
from common import *
x = torch.empty(int(1.5 * total), dtype=torch.uint8, device=dev)
print("no out-of-memory failure")
EOF
	cat >"$work/hook_check.py" <<'EOF'
import glob, json, os, pickle, sys
import oomdoc
d = sys.argv[1]
log = open(os.path.join(d, "hook.log")).read()
snaps = glob.glob(os.path.join(d, "oomdoc-oom-*-1.pickle"))
stats = glob.glob(os.path.join(d, "oomdoc-oom-*-1.stats.json"))
problems = []
if not snaps or "segments" not in pickle.load(open(snaps[0], "rb")):
    problems.append("no snapshot")
if not stats or json.load(open(stats[0])).get("num_ooms", 0) < 1:
    problems.append("no memory_stats")
head = log.find("oomdoc: 1 out-of-memory event found in PyTorch out-of-memory observer")
if head < 0 or head > log.find("Traceback"):
    problems.append("no report before the traceback")
# The observer's event and the traceback's: the same figures.
r = oomdoc.diagnose(os.path.join(d, "hook.log"))
ev = [e for e in r["events"] if e["kind"] == "cuda_caching_allocator"]
keys = ["requested_bytes", "total_bytes", "free_bytes", "allocated_bytes",
        "reserved_unallocated_bytes"]
if not ev or any([e["memory"][k] for k in keys] !=
                 [ev[0]["memory"][k] for k in keys] for e in ev):
    problems.append("figures differ from PyTorch's message")
top = ev[0]["causes"][0]["rule"] if ev and ev[0]["causes"] else "none"
print(top if not problems else top + " (" + "; ".join(problems) + ")")
EOF
	mkdir -p "$res/hook"
	(cd "$work" && PYTHONPATH="$root/python" OOMDOC_LIBRARY="$hooklib" \
		timeout 180 "$py" hook.py) >"$res/hook/hook.log" 2>&1
	hook=$(PYTHONPATH="$root/python" OOMDOC_LIBRARY="$hooklib" \
		timeout 60 "$py" "$work/hook_check.py" "$res/hook" 2>&1 | tail -1)
	ok=no; [ "$hook" = request_exceeds_device ] && ok=yes
	results+=("hook|request_exceeds_device|$hook|-|-|-|-|$ok")
	log "hook: $hook: $ok"
else
	results+=("hook|request_exceeds_device|no-shared-library|-|-|-|-|no")
	log "hook: no liboomdoc.so.0 (build with -DOOMDOC_SHARED=ON or set OOMDOC_LIBRARY)"
fi

# 4. The results.
pass=0 fail=0
{
	echo "# oomdoc GPU check"
	echo
	echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "- device: $device"
	echo "- torch: $(tail -1 "$res/torch.txt")"
	echo "- oomdoc: $(tr '\n' ' ' <"$res/version.txt")"
	echo "- CUPTI: ${OOMDOC_CUPTI:-default search}"
	echo "- oomdoc probe: status $probe_rc $(head -c 200 "$res/probe.err")"
	echo "- run time: $(($(date +%s) - start)) s"
	echo
	echo "| case | induced cause | top cause | verdict wanted | verdict | oomdoc status | live status | ok |"
	echo "|---|---|---|---|---|---|---|---|"
	for r in "${results[@]}"; do
		echo "| ${r//|/ | } |"
	done
} >"$res/results.md"
for r in "${results[@]}"; do
	case $r in *"|yes") pass=$((pass + 1)) ;; *) fail=$((fail + 1)) ;; esac
done
"$py" - "$res/results.json" "$device" "$probe_rc" "${results[@]}" <<'EOF'
import json, sys, time
out, device, probe_rc, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
keys = ["case", "induced", "top_cause", "verdict_wanted", "verdict",
        "oomdoc_status", "live_status", "ok"]
json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "device": device, "probe_status": probe_rc,
           "cases": [dict(zip(keys, r.split("|"))) for r in rows]},
          open(out, "w"), indent=2)
EOF
log "$pass cases matched, $fail did not; results in $res/results.md"
cat "$res/results.md"
[ $fail -eq 0 ]

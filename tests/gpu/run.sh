#!/usr/bin/env bash
# tests/gpu/run.sh: the GPU check of live mode and of the diagnosis of
# real PyTorch out-of-memory failures, sized for a 10-minute device window.
#
# Usage: tests/gpu/run.sh [--dry-run] [OOMDOC]
#   OOMDOC    the oomdoc binary (default build/bin/oomdoc of this checkout;
#             the portable build, cmake -DOOMDOC_STATIC=ON, runs where no
#             -dev packages are installed).
#   --dry-run touch no GPU: every step reports "skipped: no GPU" (the
#             gpu_dry_run test runs this).
# Environment:
#   OUT         folder of the results (default: a new temporary one):
#               steps.jsonl gets one JSON line per step as soon as the
#               step ends, so a run cut short still leaves what it did;
#               each step's logs and reports lie beside it.
#   DEADLINE_S  the one deadline of the whole run, seconds (default 540):
#               every step runs under `timeout` with its own limit or what
#               is left of the deadline, whichever is less, and a step that
#               would start with under 15 s left is skipped.
#   PYTHON      python with CUDA PyTorch 1.13 or later (default python3).
#   OOMDOC_LIBRARY  liboomdoc.so.0 for the in-process hook step.
#
# Steps: preflight (driver, CUDA, MIG, ECC, compute mode, clocks,
# processes, PyTorch; the rest is skipped with the reason when the binary
# cannot run, has no CUDA backend, or there is no GPU or CUDA PyTorch),
# probe (total, and free plus its context, within 1 % of
# torch.cuda.mem_get_info's plus PyTorch's context as nvidia-smi reads it;
# pattern errors 0; the ECC and remapped-row counters as nvidia-smi reads
# them, and unchanged by the test), kernels (from the probe's report:
# which kernel image the driver loaded, the driver version, each kind of
# memory test, static, moving inversions and random, with 0 errors, and
# the triad within 0.80 of the part's BabelStream reference row),
# kernels_ptx (the same probe with OOMDOC_KERNEL_IMAGE=ptx: the fallback
# PTX image, JIT-compiled by this driver, runs and finds 0 errors),
# safety (a PyTorch holder at 20 %:
# refusal without --force, status 7; under --force --max-memory 10GiB,
# peak use sampled), sigint (SIGINT mid-probe: status 130, memory back to the
# baseline), the induced failures (capacity, fragmentation with a
# snapshot, the same under expandable_segments:True, a foreign holder, a
# request larger than the device, a memory fraction, growth) and the
# in-process hook, then MIG (a MIG instance by UUID, CUDA's and NVML's
# UUIDs agreeing; skipped with the reason when MIG is off) and the torch baseline (an empty PyTorch
# process's context within a stated range).  Each induced case checks the script's own exit status
# and its OutOfMemoryError, the top cause of `oomdoc --format json`, and
# that `oomdoc live` confirms no cause but the induced one (and never
# fragmentation, which the device alone cannot show).
#
# A step line: {"step": NAME, "status": "pass"|"fail"|"skip", "seconds": S,
# "detail": TEXT}.  The last line is the summary.  Exit status: 0 when no
# step failed, 1 when one did, 2 when the machine cannot run the check
# (every step skipped; a dry run exits 0), 3 when SIGTERM or SIGINT ended
# it (the steps not run are recorded as skipped, then the summary).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dry=no
if [ "${1:-}" = --dry-run ]; then
	dry=yes
	shift
fi
oomdoc=${1:-$root/build/bin/oomdoc}
case $oomdoc in /*) ;; *) oomdoc=$PWD/$oomdoc ;; esac
py=${PYTHON:-python3}
start=$(date +%s)
deadline=$((start + ${DEADLINE_S:-540}))
if [ -n "${OUT:-}" ]; then
	res=$OUT
else
	res=$(mktemp -d "${TMPDIR:-/tmp}/oomdoc-gpu.XXXXXX")
fi
mkdir -p "$res"
jl=$res/steps.jsonl
work=$(mktemp -d "${TMPDIR:-/tmp}/oomdoc-gpu-work.XXXXXX")
holder_pid=
cleanup() {
	if [ -n "$holder_pid" ]; then
		kill "$holder_pid" 2>/dev/null
		wait "$holder_pid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
npass=0 nfail=0 nskip=0

# The steps, in order: the dry run and the skip path report each of them.
steps=(preflight probe kernels kernels_ptx safety sigint capacity fragmentation
	fragmentation_snapshot fragmentation_expandable foreign too_large
	fraction growth hook mig torch_baseline)

# JSON string of $1 (backslash, quote and control characters escaped).
json_str() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/\\t}
	s=${s//$'\r'/\\r}
	printf '"%s"' "$(printf '%s' "$s" | tr -d '\000-\010\013\014\016-\037')"
}

# record NAME STATUS SECONDS DETAIL: one line, appended at once.
record() {
	printf '{"step": %s, "status": %s, "seconds": %s, "detail": %s}\n' \
		"$(json_str "$1")" "$(json_str "$2")" "$3" "$(json_str "$4")" >>"$jl"
	case $2 in
	pass) npass=$((npass + 1)) ;;
	fail) nfail=$((nfail + 1)) ;;
	*) nskip=$((nskip + 1)) ;;
	esac
	echo "[$(($(date +%s) - start))s] $1: $2: $4"
}

# left LIMIT: the seconds a step may take, LIMIT or what the deadline
# leaves (less a reserve for the summary); 0 when under 15 s remain.
left() {
	local rest=$((deadline - $(date +%s) - 5))
	[ "$rest" -lt 15 ] && { echo 0; return; }
	[ "$1" -lt "$rest" ] && echo "$1" || echo "$rest"
}

# t LIMIT CMD...: CMD under timeout (SIGTERM, then SIGKILL 5 s later).
t() {
	local lim=$1
	shift
	timeout -k 5 "$lim" "$@"
}

skip_rest() {
	local why=$1 s
	for s in "${steps[@]}"; do
		grep -q "\"step\": \"$s\"" "$jl" 2>/dev/null || record "$s" skip 0 "$why"
	done
}

summary() {
	printf '{"step": "summary", "pass": %d, "fail": %d, "skip": %d, "seconds": %d, "date": %s}\n' \
		"$npass" "$nfail" "$nskip" "$(($(date +%s) - start))" \
		"$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)")" >>"$jl"
	echo "$npass passed, $nfail failed, $nskip skipped: $jl"
}

if [ "$dry" = yes ]; then
	skip_rest "skipped: no GPU"
	summary
	exit 0
fi

# Ended from outside (the device window's own timeout sends SIGTERM):
# what ran is on record; the rest is said, and the summary written.
interrupted() {
	trap - TERM INT
	skip_rest "skipped: the run was interrupted by a signal"
	summary
	exit 3
}
trap interrupted TERM INT

# --- preflight ---------------------------------------------------------
t0=$(date +%s)
if ! "$oomdoc" --version >"$res/version.txt" 2>&1; then
	record preflight skip 0 "skipped: $oomdoc cannot run here: $(head -c 300 "$res/version.txt")"
	skip_rest "skipped: the binary cannot run here"
	summary
	exit 2
fi
ldd "$oomdoc" >"$res/ldd.txt" 2>&1
command -v nvidia-smi >/dev/null || echo "nvidia-smi not found" >"$res/gpus.txt"
if ! command -v nvidia-smi >/dev/null ||
	! t 30 nvidia-smi -L >"$res/gpus.txt" 2>&1 || ! grep -q '^GPU' "$res/gpus.txt"; then
	record preflight skip "$(($(date +%s) - t0))" "skipped: no GPU (nvidia-smi: $(head -c 200 "$res/gpus.txt" 2>/dev/null))"
	skip_rest "skipped: no GPU"
	summary
	exit 2
fi
if ! grep -q '^CUDA live mode: built' "$res/version.txt"; then
	record preflight skip 0 "skipped: $oomdoc has no CUDA backend ($(sed -n 2p "$res/version.txt"))"
	skip_rest "skipped: the binary has no CUDA backend"
	summary
	exit 2
fi
t 30 nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,mig.mode.current,ecc.mode.current,compute_mode,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,memory.total,memory.used,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,retired_pages.pending,remapped_rows.pending \
	--format=csv >"$res/gpu.csv" 2>&1
t 30 nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv >"$res/processes.csv" 2>&1
t 30 nvidia-smi >"$res/nvidia-smi.txt" 2>&1
cuda=$(grep -o 'CUDA Version: [0-9.]*' "$res/nvidia-smi.txt" | head -1)
if ! t 120 "$py" -c 'import torch, sys; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0)); sys.exit(0 if torch.cuda.is_available() else 1)' \
	>"$res/torch.txt" 2>&1; then
	record preflight skip "$(($(date +%s) - t0))" "skipped: no python with CUDA PyTorch ($(tail -1 "$res/torch.txt"))"
	skip_rest "skipped: no PyTorch with CUDA"
	summary
	exit 2
fi
nprocs=$(($(wc -l <"$res/processes.csv") - 1))
record preflight pass "$(($(date +%s) - t0))" "$(sed -n 2p "$res/gpu.csv"); $cuda; torch $(tail -1 "$res/torch.txt"); $nprocs process(es) on the GPUs; oomdoc $(head -1 "$res/version.txt")"
if [ "$nprocs" -gt 0 ]; then
	# Another tenant would make every figure below wrong.
	skip_rest "skipped: other processes hold the GPU (processes.csv)"
	summary
	exit 2
fi

# The Python side: the device's figures and the failing scripts.
cat >"$work/common.py" <<'PY'
import os, sys, time, torch
GIB = 1 << 30
dev = torch.device("cuda", 0)
torch.cuda.init()
free, total = torch.cuda.mem_get_info(0)
# torch.cuda.OutOfMemoryError exists from PyTorch 1.13 on.
OOM = torch.cuda.OutOfMemoryError
mem = torch.cuda.memory

def record_history():
    # The history's API by release (torch/cuda/memory.py): 2.1 on takes
    # max_entries, 2.0 trace_alloc_max_entries, 1.13 only enabled.
    for args, kw in (((), {"max_entries": 100000}),
                     ((True,), {"trace_alloc_max_entries": 100000,
                                "trace_alloc_record_context": True}),
                     ((True,), {})):
        try:
            mem._record_memory_history(*args, **kw)
            return
        except TypeError:
            continue

def dump_snapshot(path):
    # _dump_snapshot from 2.1 on; before, the pickle of _snapshot().
    if hasattr(mem, "_dump_snapshot"):
        mem._dump_snapshot(path)
    else:
        import pickle
        pickle.dump(mem._snapshot(), open(path, "wb"))

# OOMDOC_GPU_SNAPSHOT: record the allocator's history and dump its
# snapshot there when an OutOfMemoryError ends the script.
SNAP = os.environ.get("OOMDOC_GPU_SNAPSHOT")
if SNAP and hasattr(mem, "_record_memory_history"):
    record_history()
    def _on_exit(t, v, tb):
        if isinstance(v, OOM):
            dump_snapshot(SNAP)
        sys.__excepthook__(t, v, tb)
    sys.excepthook = _on_exit
PY
cat >"$work/meminfo.py" <<'PY'
# free and total as PyTorch reads them, then the context held (argv[1]
# written when ready) until argv[2] exists, so that nvidia-smi can read
# what this process's context takes.
from common import *
print(free, total, flush=True)
open(sys.argv[1], "w").write(str(os.getpid()))
for _ in range(600):
    if os.path.exists(sys.argv[2]):
        break
    time.sleep(0.1)
PY
cat >"$work/holder.py" <<'PY'
# Holds a fraction (argv[2]) of the device until killed.
from common import *
hold = torch.empty(int(float(sys.argv[2]) * total), dtype=torch.uint8, device=dev)
torch.cuda.synchronize()
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(900)
PY
cat >"$work/capacity.py" <<'PY'
# A batch too large: activations kept for backward need twice the free memory.
from common import *
width, layers = 8192, 12
batch = int(2 * free / (layers * width * 4)) // 64 * 64
print({'per_device_train_batch_size': batch, 'bf16': False}, flush=True)
model = torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(layers)]).to(dev)
loss = model(torch.randn(batch, width, device=dev)).square().mean()
loss.backward()
print("no out-of-memory failure")
PY
cat >"$work/fragmentation.py" <<'PY'
# Fill the device with 1 GiB segments, free them (they stay cached), take
# 600 MiB of each (every segment split, 424 MiB free beside a live
# tensor), then ask for 1 GiB.  argv[1]: where to dump the snapshot.
from common import *
snap = sys.argv[1] if len(sys.argv) > 1 else None
if snap:
    record_history()
keep = []
try:
    while True:
        keep.append(torch.empty(GIB, dtype=torch.uint8, device=dev))
except OOM:
    pass
n = len(keep)
del keep
small = [torch.empty(600 << 20, dtype=torch.uint8, device=dev) for _ in range(n)]
print("segments %d" % n, flush=True)
try:
    big = torch.empty(GIB, dtype=torch.uint8, device=dev)
except OOM:
    if snap:
        dump_snapshot(snap)
    raise
print("no out-of-memory failure")
PY
cat >"$work/foreign.py" <<'PY'
from common import *
x = torch.empty(int(0.5 * total), dtype=torch.uint8, device=dev)
print("no out-of-memory failure")
PY
cat >"$work/too_large.py" <<'PY'
from common import *
x = torch.empty(int(1.5 * total), dtype=torch.uint8, device=dev)
print("no out-of-memory failure")
PY
cat >"$work/fraction.py" <<'PY'
from common import *
torch.cuda.set_per_process_memory_fraction(0.25, 0)
x = torch.empty(int(total / 3), dtype=torch.uint8, device=dev)
print("no out-of-memory failure")
PY
cat >"$work/growth.py" <<'PY'
from common import *
leak = []
for step in range(100000):
    leak.append(torch.empty(int(total / 24), dtype=torch.uint8, device=dev))
    print({'step': step * 50, 'loss': 2.0,
           'memory_allocated': "%.2f GiB" % (torch.cuda.memory_allocated() / GIB)}, flush=True)
PY
# check.py: the assertions on oomdoc's JSON, one line of text, status 0
# when they hold.
cat >"$work/check.py" <<'PY'
import json, sys
def load(p):
    return json.load(open(p))
what = sys.argv[1]
if what == "probe":
    rep, free, total = load(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    bad = []
    p = {x["probe"]: x for x in rep["probes"]}
    t = rep["device"]["total_bytes"]
    f = rep["free_bytes_at_start"]
    if abs(t - total) > 0.01 * total:
        bad.append("total %d vs torch %d" % (t, total))
    # Each free reading is taken with its own context present: oomdoc's
    # bare one, PyTorch's larger one.  Like with like: each free plus its
    # context (oomdoc's context_bytes, PyTorch's from nvidia-smi while it
    # held it), else the raw readings.
    ctx, tctx = rep.get("context_bytes"), sys.argv[7] if len(sys.argv) > 7 else ""
    if f is not None and isinstance(ctx, int) and tctx.isdigit():
        a, b, how = f + ctx, free + (int(tctx) << 20), "free + context"
    else:
        a, b, how = f, free, "free (a context size unknown: %r, %r)" % (ctx, tctx)
    if a is None or abs(a - b) > 0.01 * total:
        bad.append("%s %s vs torch %d" % (how, a, b))
    h = p.get("health", {}).get("measurements") or {}
    if h.get("pattern_errors") != 0:
        bad.append("pattern errors %s" % h.get("pattern_errors"))
    for k in ("ecc_uncorrected_volatile", "ecc_corrected_volatile", "remapped_rows_uncorrectable"):
        if h.get(k) is None:
            bad.append("%s missing" % k)
    # oomdoc's own readings before and after its test: both integers, or
    # both "not supported" (a part without the counter, which nvidia-smi
    # must then not read either: below), and unchanged on a healthy GPU.
    for k in ("ecc_uncorrected_volatile", "ecc_corrected_volatile",
              "remapped_rows_uncorrectable", "remapped_rows_correctable"):
        x, y = h.get(k), h.get(k + "_after")
        if isinstance(x, int) != isinstance(y, int):
            bad.append("%s not read both before and after (%r, %r)" % (k, x, y))
        elif isinstance(x, int) and x != y:
            bad.append("%s changed during the test: %d -> %d" % (k, x, y))
    before, after = sys.argv[5].split(","), sys.argv[6].split(",")
    if before != after:
        bad.append("ECC/remap counters changed: %s -> %s" % (before, after))
    # oomdoc's readings against nvidia-smi's, taken just before the probe
    # (corrected, uncorrected volatile ECC; rows remapped for
    # uncorrectable errors): equal where nvidia-smi reads a number, "not
    # supported" in oomdoc where it reads none.
    for k, v in zip(("ecc_corrected_volatile", "ecc_uncorrected_volatile",
                     "remapped_rows_uncorrectable"), before):
        o = h.get(k)
        if v.isdigit() and o != int(v):
            bad.append("%s %r, nvidia-smi %s" % (k, o, v))
        elif not v.isdigit() and isinstance(o, int):
            bad.append("%s %d where nvidia-smi reads %s" % (k, o, v))
    print("; ".join(bad) if bad else "total %d; %s %d within 1%% of torch's %d; pattern errors 0; counters %s as nvidia-smi reads them, unchanged" % (t, how, a, b, ",".join(before)))
    sys.exit(1 if bad else 0)
if what == "kernels":
    # argv: the probe's report, the image wanted (or "any").
    rep, want = load(sys.argv[2]), sys.argv[3]
    d = rep["device"]
    p = {x["probe"]: x for x in rep["probes"]}
    h = p.get("health", {}).get("measurements") or {}
    bad, said = [], []
    img = d.get("kernel_image")
    said.append("image %s (%s), refused before: %s" % (img, d.get("kernel_image_detail"),
                                                       d.get("kernel_images_refused")))
    if img is None or (want != "any" and img != want):
        bad.append("kernel image %s, want %s" % (img, want))
    said.append("driver %s, CUDA %s" % (d.get("driver_release"), d.get("driver_cuda")))
    if not d.get("driver_release") or not d.get("driver_cuda"):
        bad.append("driver version not recorded")
    for kind, passes in (("static", 6), ("moving_inversions", 2), ("random", 1)):
        e, n = h.get("pattern_errors_" + kind), h.get("pattern_passes_" + kind)
        said.append("%s %s passes %s errors" % (kind, n, e))
        if e != 0 or n != passes:
            bad.append("%s: %s passes, %s errors (want %d, 0)" % (kind, n, e, passes))
    if h.get("pattern_cut_by_time_limit") or h.get("ecc_uncorrectable_during_test"):
        bad.append("pattern test cut or ECC fault")
    said.append("seed %s" % h.get("pattern_seed"))
    tri, ref = h.get("triad_bytes_per_second"), h.get("reference_triad_bytes_per_second")
    said.append("triad %s B/s with %s x %s, reference %s (%s: %s)" % (
        tri, h.get("bandwidth_blocks_per_sm"), h.get("bandwidth_threads_per_block"),
        ref, h.get("bandwidth_reference"), h.get("bandwidth_reference_basis")))
    if h.get("bandwidth_configurations_tried") != 16:
        bad.append("%s launch configurations tried, want 16" % h.get("bandwidth_configurations_tried"))
    if ref is not None and want != "ptx" and (tri is None or tri < 0.80 * ref):
        bad.append("triad %s below 0.80 of the reference %s" % (tri, ref))
    if ref is None and h.get("bandwidth_reference") != "no reference for this part":
        bad.append("no reference row and no 'no reference' said")
    print("; ".join(bad + said))
    sys.exit(1 if bad else 0)
if what == "case":
    rep, want, live = load(sys.argv[2]), sys.argv[3], sys.argv[4]
    top = rep["summary"].get("top_cause")
    bad = [] if top == want else ["top cause %s, want %s" % (top, want)]
    # The snapshot (when the script's PyTorch could dump one): its
    # fragmentation verdict confirmed for the fragmentation case, and for
    # no other, where free blocks too small for the request are not why.
    said = "no snapshot (this PyTorch records no history)"
    if len(sys.argv) > 5 and sys.argv[5] == "snapshot":
        snaps = [e.get("snapshot") for e in rep["events"] if e.get("snapshot")]
        v = snaps[0].get("verdict") if snaps else None
        said = "snapshot verdict %s" % v
        if v is None:
            bad.append("the snapshot was not joined to the event")
        elif (v == "confirmed") != (want == "fragmentation"):
            bad.append("snapshot verdict %s for %s" % (v, want))
    try:
        lv = load(live)
        # Fragmentation lives inside the caching allocator: the device
        # alone must never confirm it, the induced case included.
        spurious = sorted({v["cause"] for e in lv.get("events", []) for v in e.get("verdicts", [])
                           if v.get("verdict") == "confirmed" and
                           (v.get("cause") != want or want == "fragmentation")})
        if spurious:
            bad.append("live confirms %s too" % ",".join(spurious))
    except (OSError, ValueError) as e:
        bad.append("no live report (%s)" % e)
    print("; ".join(bad) if bad else "top cause %s, %s, no other cause confirmed" % (top, said))
    sys.exit(1 if bad else 0)
if what == "snapshot":
    rep = load(sys.argv[2])
    top = rep["summary"].get("top_cause")
    snaps = [e.get("snapshot") for e in rep["events"] if e.get("snapshot")]
    v = snaps[0]["verdict"] if snaps else "none"
    ok = top == "fragmentation" and v == "confirmed"
    print("top cause %s, snapshot verdict %s (want fragmentation, confirmed)" % (top, v))
    sys.exit(0 if ok else 1)
if what == "mig":
    # argv: the report, the MIG UUID asked for.
    rep, want = load(sys.argv[2]), sys.argv[3]
    d = rep.get("device") or {}
    bad = []
    if d.get("uuid") != want:
        bad.append("probed %s, want %s" % (d.get("uuid"), want))
    if not (d.get("parent_uuid") or "").startswith("GPU-"):
        bad.append("no parent GPU (%r)" % d.get("parent_uuid"))
    # CUDA's device (cuDeviceGetUuid_v2) and NVML's are the one named.
    if "agree: %s" % want not in (d.get("identity") or ""):
        bad.append("identity %r" % d.get("identity"))
    print("; ".join(bad) if bad else "probed %s, a MIG instance of %s, %d bytes"
          % (want, d["parent_uuid"], d.get("total_bytes") or 0))
    sys.exit(1 if bad else 0)
if what == "torch":
    # The empty PyTorch process's context: at least the bare context (it
    # is one, with PyTorch's modules registered) and at most 2 GiB beyond
    # it (about 0.3-0.6 GiB with lazy loading, over 1 GiB eagerly before
    # CUDA 11.7: pytorch/pytorch#107667); NVML's and the free-memory
    # readings, where both exist, within 15 % + 64 MiB of each other.
    rep = load(sys.argv[2])
    p = {x["probe"]: x for x in rep["probes"]}
    m = (p.get("context_cost") or {}).get("measurements") or {}
    bare, tc = m.get("context_bytes"), m.get("torch_context_bytes")
    bad = []
    if not isinstance(bare, int) or not isinstance(tc, int):
        bad.append("no torch baseline (%s)" % m.get("torch_baseline_note"))
    elif not bare <= tc <= bare + (2 << 30):
        bad.append("torch context %d outside [%d, %d]" % (tc, bare, bare + (2 << 30)))
    nv, dl = m.get("torch_nvml_bytes"), m.get("torch_free_delta_bytes")
    if isinstance(nv, int) and isinstance(dl, int) and abs(nv - dl) > 0.15 * nv + (64 << 20):
        bad.append("NVML %d and free delta %d disagree" % (nv, dl))
    print("; ".join(bad) if bad else "%s: %d MiB (bare context %d MiB) by %s"
          % (m.get("torch_baseline"), tc >> 20, bare >> 20, m.get("torch_method")))
    sys.exit(1 if bad else 0)
if what == "peak":
    # argv: samples (the device's used MiB, one a line), the baseline
    # MiB, oomdoc's JSON, the cap in MiB.
    base = int(sys.argv[3])
    peak = max([int(l) for l in open(sys.argv[2]) if l.strip().isdigit()] or [base]) - base
    rep = load(sys.argv[4])
    ctx = rep.get("context_bytes") or (1 << 30)
    cap = int(sys.argv[5]) + ctx // (1 << 20)
    print("peak %d MiB above the baseline over %d samples, cap %d MiB with the context"
          % (peak, sum(1 for _ in open(sys.argv[2])), cap))
    sys.exit(0 if 0 < peak <= cap else 1)
PY

# Counters that the probe must leave as they were (nvidia-smi's reading).
counters() {
	t 30 nvidia-smi -i 0 --query-gpu=ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,remapped_rows.uncorrectable,remapped_rows.pending \
		--format=csv,noheader,nounits 2>/dev/null | tr -d ' '
}
used_mib() {
	t 30 nvidia-smi -i 0 --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | tr -d ' '
}

# --- probe ---------------------------------------------------------------
t0=$(date +%s)
lim=$(left 150)
if [ "$lim" = 0 ]; then
	record probe skip 0 "skipped: global deadline"
else
	# PyTorch's reading, and its context's size: the one process on the
	# GPU while it waits (the preflight found none before it).
	rm -f "$work/mem.ready" "$work/mem.done"
	(cd "$work" && t 60 "$py" meminfo.py "$work/mem.ready" "$work/mem.done") \
		>"$res/meminfo.txt" 2>"$res/meminfo.err" &
	mpid=$!
	for _ in $(seq 300); do [ -s "$work/mem.ready" ] && break; sleep 0.2; done
	tctx=$(t 30 nvidia-smi --query-compute-apps=used_memory --format=csv,noheader,nounits 2>/dev/null |
		tr -d ' ' | grep -E '^[0-9]+$' | head -1)
	: >"$work/mem.done"
	wait "$mpid"
	read -r tfree ttotal <"$res/meminfo.txt"
	c0=$(counters)
	t "$lim" "$oomdoc" probe --format json >"$res/probe.json" 2>"$res/probe.err"
	rc=$?
	c1=$(counters)
	if [ "$rc" -ne 0 ]; then
		record probe fail "$(($(date +%s) - t0))" "oomdoc probe: status $rc: $(head -c 300 "$res/probe.err")"
	elif d=$(cd "$work" && "$py" check.py probe "$res/probe.json" "${tfree:-0}" "${ttotal:-0}" "$c0" "$c1" "${tctx:-}"); then
		record probe pass "$(($(date +%s) - t0))" "$d"
	else
		record probe fail "$(($(date +%s) - t0))" "$d"
	fi
fi

# --- kernels: the image, the driver, the memory test, the bandwidth -------
t0=$(date +%s)
if [ ! -s "$res/probe.json" ]; then
	record kernels skip 0 "skipped: no report from the probe step"
elif d=$("$py" "$work/check.py" kernels "$res/probe.json" any 2>&1); then
	record kernels pass "$(($(date +%s) - t0))" "$d"
else
	record kernels fail "$(($(date +%s) - t0))" "$d"
fi

# --- kernels_ptx: the fallback PTX image, JIT-compiled by this driver -----
t0=$(date +%s)
lim=$(left 120)
if [ "$lim" = 0 ]; then
	record kernels_ptx skip 0 "skipped: global deadline"
else
	OOMDOC_KERNEL_IMAGE=ptx t "$lim" "$oomdoc" probe --format json \
		>"$res/probe.ptx.json" 2>"$res/probe.ptx.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		record kernels_ptx fail "$(($(date +%s) - t0))" "OOMDOC_KERNEL_IMAGE=ptx oomdoc probe: status $rc: $(head -c 300 "$res/probe.ptx.err")"
	elif d=$("$py" "$work/check.py" kernels "$res/probe.ptx.json" ptx 2>&1); then
		record kernels_ptx pass "$(($(date +%s) - t0))" "$d"
	else
		record kernels_ptx fail "$(($(date +%s) - t0))" "$d"
	fi
fi

# --- safety: a PyTorch holder at 20 % ------------------------------------
t0=$(date +%s)
lim=$(left 150)
if [ "$lim" = 0 ]; then
	record safety skip 0 "skipped: global deadline"
else
	rm -f "$work/holder.ready"
	(cd "$work" && exec timeout 300 "$py" holder.py "$work/holder.ready" 0.2) >"$res/holder.log" 2>&1 &
	holder_pid=$!
	for _ in $(seq 60); do [ -s "$work/holder.ready" ] && break; sleep 1; done
	if [ ! -s "$work/holder.ready" ]; then
		record safety fail "$(($(date +%s) - t0))" "the holder did not start: $(tail -c 200 "$res/holder.log")"
	else
		t 60 "$oomdoc" probe >"$res/safety.refused.txt" 2>&1
		rrc=$?
		# Sampled: the device's used memory beyond what it was with the
		# holder alone (NVML's pids are the host's in a container).
		base=$(used_mib)
		: >"$res/safety.samples"
		t "$lim" "$oomdoc" probe --force --max-memory 10GiB --format json \
			>"$res/safety.json" 2>"$res/safety.err" &
		ppid=$!
		while kill -0 "$ppid" 2>/dev/null; do
			used_mib >>"$res/safety.samples"
			sleep 0.2
		done
		wait "$ppid"
		frc=$?
		d1="without --force: status $rrc"
		ok=yes
		if [ "$rrc" -ne 7 ] || ! grep -qi -- 'force' "$res/safety.refused.txt"; then
			ok=no
			d1="$d1 (want 7, refused for safety, naming --force)"
		fi
		if d2=$("$py" "$work/check.py" peak "$res/safety.samples" "${base:-0}" "$res/safety.json" 10240 2>&1) &&
			[ "$frc" -eq 0 ]; then :; else ok=no; fi
		record safety "$([ $ok = yes ] && echo pass || echo fail)" "$(($(date +%s) - t0))" \
			"$d1; with --force --max-memory 10GiB: status $frc, $d2"
	fi
	kill "$holder_pid" 2>/dev/null
	wait "$holder_pid" 2>/dev/null
	holder_pid=
fi

# --- SIGINT mid-probe ------------------------------------------------------
t0=$(date +%s)
lim=$(left 60)
if [ "$lim" = 0 ]; then
	record sigint skip 0 "skipped: global deadline"
else
	sleep 2
	base=$(used_mib)
	"$oomdoc" probe >"$res/sigint.txt" 2>&1 &
	ppid=$!
	sleep 4
	kill -INT "$ppid" 2>/dev/null
	for _ in $(seq "$lim"); do kill -0 "$ppid" 2>/dev/null || break; sleep 1; done
	if kill -0 "$ppid" 2>/dev/null; then
		kill -KILL "$ppid"
		wait "$ppid" 2>/dev/null
		record sigint fail "$(($(date +%s) - t0))" "oomdoc did not end within $lim s of SIGINT"
	else
		wait "$ppid"
		src=$?
		sleep 2
		after=$(used_mib)
		diff=$(( ${after:-0} - ${base:-0} ))
		ok=fail
		[ "$src" -eq 130 ] && [ "${diff#-}" -le 64 ] && ok=pass
		record sigint "$ok" "$(($(date +%s) - t0))" "status $src (want 130); used memory $base MiB before, $after MiB after (want within 64 MiB)"
	fi
fi

# --- induced failures --------------------------------------------------------
# induce CASE CAUSE SCRIPT [ENV=VALUE...]: runs the script, with the
# allocator's snapshot dumped at its OutOfMemoryError, wants status 1 and
# the error, then oomdoc's top cause CAUSE with the snapshot joined, the
# snapshot's fragmentation verdict confirmed for fragmentation and not
# for any other cause, and no other cause confirmed by `oomdoc live`.
induce() {
	local name=$1 want=$2 script=$3 lim d rc
	shift 3
	local t0
	t0=$(date +%s)
	lim=$(left 120)
	if [ "$lim" = 0 ]; then
		record "$name" skip 0 "skipped: global deadline"
		return
	fi
	rm -f "$res/$name.pickle"
	(cd "$work" && env OOMDOC_GPU_SNAPSHOT="$res/$name.pickle" "$@" \
		timeout -k 5 "$lim" "$py" "$script") >"$res/$name.log" 2>&1
	rc=$?
	if [ "$rc" -ne 1 ] || ! grep -q 'OutOfMemoryError' "$res/$name.log"; then
		record "$name" fail "$(($(date +%s) - t0))" "the script ended with status $rc (want 1 and an OutOfMemoryError): $(tail -c 200 "$res/$name.log")"
		return
	fi
	lim=$(left 60)
	[ "$lim" = 0 ] && lim=1
	local snap=()
	[ -s "$res/$name.pickle" ] && snap=(--snapshot "$res/$name.pickle")
	t "$lim" "$oomdoc" --format json "$res/$name.log" "${snap[@]}" \
		>"$res/$name.report.json" 2>"$res/$name.report.err"
	lim=$(left 90)
	[ "$lim" = 0 ] && lim=1
	t "$lim" "$oomdoc" live --force --format json "$res/$name.log" \
		>"$res/$name.live.json" 2>"$res/$name.live.err"
	if d=$("$py" "$work/check.py" case "$res/$name.report.json" "$want" "$res/$name.live.json" \
		"$([ ${#snap[@]} -gt 0 ] && echo snapshot || echo none)" 2>&1); then
		record "$name" pass "$(($(date +%s) - t0))" "script status 1; $d"
	else
		record "$name" fail "$(($(date +%s) - t0))" "script status 1; $d"
	fi
}

induce capacity capacity capacity.py
induce fragmentation fragmentation fragmentation.py

t0=$(date +%s)
lim=$(left 120)
if [ "$lim" = 0 ]; then
	record fragmentation_snapshot skip 0 "skipped: global deadline"
else
	(cd "$work" && timeout -k 5 "$lim" "$py" fragmentation.py "$res/snap.pickle") \
		>"$res/fragmentation_snapshot.log" 2>&1
	rc=$?
	if [ "$rc" -ne 1 ] || [ ! -s "$res/snap.pickle" ] ||
		! grep -q 'OutOfMemoryError' "$res/fragmentation_snapshot.log"; then
		record fragmentation_snapshot fail "$(($(date +%s) - t0))" "status $rc (want 1 and an OutOfMemoryError), snapshot $( [ -s "$res/snap.pickle" ] && echo written || echo missing): $(tail -c 200 "$res/fragmentation_snapshot.log")"
	else
		t "$(left 60 | sed 's/^0$/1/')" "$oomdoc" --format json "$res/fragmentation_snapshot.log" --snapshot "$res/snap.pickle" \
			>"$res/fragmentation_snapshot.report.json" 2>"$res/fragmentation_snapshot.err"
		if d=$("$py" "$work/check.py" snapshot "$res/fragmentation_snapshot.report.json" 2>&1); then
			record fragmentation_snapshot pass "$(($(date +%s) - t0))" "$d"
		else
			record fragmentation_snapshot fail "$(($(date +%s) - t0))" "$d"
		fi
	fi
fi

t0=$(date +%s)
lim=$(left 120)
if [ "$lim" = 0 ]; then
	record fragmentation_expandable skip 0 "skipped: global deadline"
else
	(cd "$work" && PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
		timeout -k 5 "$lim" "$py" fragmentation.py) >"$res/fragmentation_expandable.log" 2>&1
	rc=$?
	t 60 "$oomdoc" "$res/fragmentation_expandable.log" >/dev/null 2>&1
	orc=$?
	ok=fail
	[ "$rc" -eq 0 ] && grep -q 'no out-of-memory failure' "$res/fragmentation_expandable.log" &&
		[ "$orc" -eq 1 ] && ok=pass
	record fragmentation_expandable "$ok" "$(($(date +%s) - t0))" "script status $rc (want 0, no failure); oomdoc status $orc (want 1: no event)"
fi

t0=$(date +%s)
if [ "$(left 150)" = 0 ]; then
	record foreign skip 0 "skipped: global deadline"
else
	rm -f "$work/holder.ready"
	(cd "$work" && exec timeout 300 "$py" holder.py "$work/holder.ready" 0.6) >"$res/holder60.log" 2>&1 &
	holder_pid=$!
	for _ in $(seq 60); do [ -s "$work/holder.ready" ] && break; sleep 1; done
	if [ -s "$work/holder.ready" ]; then
		induce foreign foreign_process foreign.py
	else
		record foreign fail "$(($(date +%s) - t0))" "the holder did not start"
	fi
	kill "$holder_pid" 2>/dev/null
	wait "$holder_pid" 2>/dev/null
	holder_pid=
fi

induce too_large request_exceeds_device too_large.py
induce fraction memory_fraction_limit fraction.py
induce growth growth_leak growth.py

# --- the in-process hook (oomdoc.torch, through liboomdoc.so.0) ---------------
t0=$(date +%s)
lim=$(left 90)
hooklib=${OOMDOC_LIBRARY:-}
[ -z "$hooklib" ] && [ -f "$(dirname "$oomdoc")/../liboomdoc.so.0" ] &&
	hooklib=$(dirname "$oomdoc")/../liboomdoc.so.0
if [ "$lim" = 0 ]; then
	record hook skip 0 "skipped: global deadline"
elif [ -z "$hooklib" ]; then
	record hook skip 0 "skipped: no liboomdoc.so.0 (build with -DOOMDOC_SHARED=ON or set OOMDOC_LIBRARY)"
else
	cat >"$work/hook.py" <<'PY'
import oomdoc.torch
att = oomdoc.torch.attach(record_history=True)
from common import *
x = torch.empty(int(1.5 * total), dtype=torch.uint8, device=dev)
print("no out-of-memory failure")
PY
	cat >"$work/hook_check.py" <<'PY'
import glob, json, os, pickle, sys
import oomdoc
d = sys.argv[1]
log = open(os.path.join(d, "hook.log")).read()
snaps = glob.glob(os.path.join(d, "oomdoc-oom-*-1.pickle"))
stats = glob.glob(os.path.join(d, "oomdoc-oom-*-1.stats.json"))
problems = []
snap = pickle.load(open(snaps[0], "rb")) if snaps else {}
if "segments" not in snap:
    problems.append("no snapshot")
# attach(record_history=True) started the history with the API of this
# release (oomdoc.torch.history_api: 2.0's or 2.1's): the snapshot has
# the allocations before the failure, and its oom entry.
elif not any(e.get("action") == "oom" for t in snap.get("device_traces") or []
             for e in t):
    problems.append("no oom entry in the snapshot's history")
if not stats or json.load(open(stats[0])).get("num_ooms", 0) < 1:
    problems.append("no memory_stats")
head = log.find("oomdoc: 1 out-of-memory event found in PyTorch out-of-memory observer")
if head < 0 or head > log.find("Traceback"):
    problems.append("no report before the traceback")
r = oomdoc.diagnose(os.path.join(d, "hook.log"))
ev = [e for e in r["events"] if e["kind"] == "cuda_caching_allocator"]
keys = ["requested_bytes", "total_bytes", "free_bytes", "allocated_bytes",
        "reserved_unallocated_bytes"]
if not ev or any([e["memory"][k] for k in keys] !=
                 [ev[0]["memory"][k] for k in keys] for e in ev):
    problems.append("figures differ from PyTorch's message")
top = ev[0]["causes"][0]["rule"] if ev and ev[0]["causes"] else "none"
print(top if not problems else top + " (" + "; ".join(problems) + ")")
PY
	mkdir -p "$res/hook"
	(cd "$work" && PYTHONPATH="$root/python" OOMDOC_LIBRARY="$hooklib" \
		timeout -k 5 "$lim" "$py" hook.py) >"$res/hook/hook.log" 2>&1
	hrc=$?
	hook=$(PYTHONPATH="$root/python" OOMDOC_LIBRARY="$hooklib" \
		t 60 "$py" "$work/hook_check.py" "$res/hook" 2>&1 | tail -1)
	ok=fail
	[ "$hrc" -eq 1 ] && [ "$hook" = request_exceeds_device ] && ok=pass
	record hook "$ok" "$(($(date +%s) - t0))" "script status $hrc (want 1: the OutOfMemoryError goes on after the hook); top cause $hook (want request_exceeds_device)"
fi

# --- MIG: a MIG instance by UUID (nvmlDeviceGetHandleByUUID; counters on
# the parent) --------------------------------------------------------------
t0=$(date +%s)
lim=$(left 60)
mig_mode=$(sed -n 2p "$res/gpu.csv" | cut -d, -f6 | tr -d ' ')
mig_uuid=$(grep -o 'MIG-[0-9a-fA-F-]*' "$res/gpus.txt" | head -1)
if [ "$lim" = 0 ]; then
	record mig skip 0 "skipped: global deadline"
elif [ "$mig_mode" != Enabled ] || [ -z "$mig_uuid" ]; then
	record mig skip 0 "skipped: MIG is off on GPU 0 (mig.mode.current: ${mig_mode:-unknown}; no MIG instance in nvidia-smi -L)"
else
	t "$lim" "$oomdoc" probe --device "$mig_uuid" --format json \
		>"$res/mig.json" 2>"$res/mig.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		record mig fail "$(($(date +%s) - t0))" "oomdoc probe --device $mig_uuid: status $rc: $(head -c 300 "$res/mig.err")"
	elif d=$("$py" "$work/check.py" mig "$res/mig.json" "$mig_uuid" 2>&1); then
		record mig pass "$(($(date +%s) - t0))" "$d"
	else
		record mig fail "$(($(date +%s) - t0))" "$d"
	fi
fi

# --- the torch baseline: an empty PyTorch process's context ----------------
t0=$(date +%s)
lim=$(left 180)
if [ "$lim" = 0 ]; then
	record torch_baseline skip 0 "skipped: global deadline"
else
	t "$lim" "$oomdoc" probe --torch-python "$py" --format json \
		>"$res/torch_baseline.json" 2>"$res/torch_baseline.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		record torch_baseline fail "$(($(date +%s) - t0))" "oomdoc probe --torch-python: status $rc: $(head -c 300 "$res/torch_baseline.err")"
	elif d=$("$py" "$work/check.py" torch "$res/torch_baseline.json" 2>&1); then
		record torch_baseline pass "$(($(date +%s) - t0))" "$d"
	else
		record torch_baseline fail "$(($(date +%s) - t0))" "$d"
	fi
fi

summary
[ "$nfail" -eq 0 ]

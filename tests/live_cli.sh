#!/usr/bin/env bash
# The live mode's commands, `oomdoc live` and `oomdoc probe`, with no GPU:
#  - the CUDA backend (the default) on this machine: one line on standard
#    error, nothing on standard output, status 4 (no driver, or built
#    without CUDA); --version says whether CUDA live mode is built;
#  - the fake backend over the rules' and PyTorch's fixtures: a valid
#    "oomdoc.live/1" report with every event of `oomdoc --format json`, in
#    order, whose verdicts are the probes that the event's causes name,
#    each confirmed, refuted or inconclusive;
#  - the verdicts expected on fake devices made for them, from a log, from
#    a JSON report (a file, and standard input) and from a log on
#    standard input;
#  - refusal when other processes hold the GPU, the time limit, SIGINT,
#    usage and input errors, the three formats, and --help against the
#    man page's LIVE MODE section.
# No golden files: no output here is compared whole, so no timing or
# device figure is pinned.
#
# Usage: tests/live_cli.sh OOMDOC   (from the repository root)
set -u
oomdoc=$1
man=man/oomdoc.1
fail=0 pass=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The status is taken into st before check runs: a command substitution
# in NAME would set $? itself, and the check could never fail.
check() {   # check NAME STATUS
	if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else
		echo "FAIL $1"; fail=$((fail + 1)); fi
}

# 1. The CUDA backend without a GPU (or not built): one line, status 5.
for cmd in "live fixtures/sample/job.log" "probe" "live --device 3 fixtures/sample/job.log"; do
	# shellcheck disable=SC2086
	"$oomdoc" $cmd >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 5 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		grep -q -E "^oomdoc (live|probe): " "$tmp/err"
	st=$?
	check "oomdoc $cmd (cuda backend, no GPU): status $rc, stderr: $(cat "$tmp/err")" $st
done
"$oomdoc" --version | grep -q -E '^CUDA live mode: (built|not built)'
check "--version does not say whether CUDA live mode is built" $?
if "$oomdoc" --version | grep -q '^CUDA live mode: built'; then
	"$oomdoc" live fixtures/sample/job.log 2>&1 >/dev/null | grep -q 'no NVIDIA driver'
	check "the CUDA backend without a driver does not say 'no NVIDIA driver'" $?
fi

# 2. Every fixture through the fake backend: a valid report, with the
#    verdicts of the probes its causes name.
for log in fixtures/rules/*.log fixtures/pytorch/*.log; do
	"$oomdoc" --format json "$log" >"$tmp/diag.json" 2>/dev/null
	"$oomdoc" live --backend fake --force --max-memory 100% --format json \
		"$log" >"$tmp/live.json" 2>"$tmp/err"; rc=$?
	python3 - "$tmp/diag.json" "$tmp/live.json" "$rc" 2>&1 <<'EOF'
import json, sys
diag = json.load(open(sys.argv[1]))
rc = int(sys.argv[3])
try:
    live = json.load(open(sys.argv[2]))
except ValueError as e:
    sys.exit("not JSON: %s" % e)
if not diag["events"]:
    assert rc == 1, "no event, yet status %d" % rc
    assert live["device"] is None and live["events"] == [], live
    sys.exit(0)
assert rc == 0, "status %d" % rc
assert live["schema"] == "oomdoc.live/1"
# The GPU probed is the first event's that names one (else 0).
first = next((e["device"] for e in diag["events"]
              if isinstance(e.get("device"), int) and e["device"] >= 0), 0)
assert live["backend"] == "fake" and live["device"]["index"] == first, \
    (live["device"]["index"], first)
assert live["summary"]["events"] == len(live["events"])
# Every event of the diagnosis, in order: none dropped, none added (the
# fixtures have fewer events than a live run probes).
assert len(live["events"]) == len(diag["events"]), \
    (len(diag["events"]), len(live["events"]))
count = {"confirmed": 0, "refuted": 0, "inconclusive": 0}
for d, l in zip(diag["events"], live["events"]):
    want = [(c["confirm_with"], c["rule"]) for c in d["causes"] if c["confirm_with"]]
    got = [(v["probe"], v["cause"]) for v in l["verdicts"]]
    assert want == got, (d["line"], want, got)
    for v in l["verdicts"]:
        assert v["verdict"] in count, v
        count[v["verdict"]] += 1
        assert v["summary"], v
        assert isinstance(v["measurements"], dict)
        if v["verdict"] != "inconclusive":
            assert v["ran"], v
for k in count:
    assert live["summary"][k] == count[k], (k, live["summary"])
# The cap was never passed.
assert live["cap_bytes"] is None or live["peak_held_bytes"] <= live["cap_bytes"]
EOF
	check "$log: live report" $?
done

# 3. Verdicts on fake devices made to give them.  Each line: the fixture,
#    the options, the cause and the verdict expected.
expect() {   # expect LOG CAUSE VERDICT [OPTION]...
	local log=$1 cause=$2 want=$3
	shift 3
	"$oomdoc" live --backend fake --format json "$@" "$log" >"$tmp/live.json" 2>"$tmp/err"
	python3 - "$tmp/live.json" "$cause" "$want" <<'EOF'
import json, sys
live = json.load(open(sys.argv[1]))
got = [v["verdict"] for e in live["events"] for v in e["verdicts"] if v["cause"] == sys.argv[2]]
assert got and got[0] == sys.argv[3], "%s: %s" % (sys.argv[2], got)
EOF
	check "$log $*: $cause is not $want" $?
}
R=fixtures/rules
# The device alone never confirms fragmentation (it lives inside the
# caching allocator): the probe runs and says what the device showed.
expect $R/fragmentation-top.log fragmentation inconclusive --max-memory 100%
"$oomdoc" live --backend fake --max-memory 100% $R/fragmentation-top.log >"$tmp/out"
grep -q 'cannot show fragmentation' "$tmp/out"
check "the fragmentation probe says what the device cannot show" $?
expect $R/fragmentation-top.log fragmentation inconclusive --max-memory 100% --fake-device vmm=no
expect $R/fragmentation-top.log fragmentation inconclusive
expect $R/foreign_process-top.log foreign_process confirmed --force
expect $R/foreign_process-top.log foreign_process inconclusive --force --fake-device procs=none
expect $R/foreign_process-top.log foreign_process inconclusive --force --fake-device nvml=no
expect $R/capacity-top.log capacity confirmed --max-memory 100%
expect $R/memory_fraction_limit-top.log memory_fraction_limit confirmed
expect $R/memory_fraction_limit-top.log capacity refuted
expect $R/request_exceeds_device-top.log request_exceeds_device confirmed
expect $R/request_exceeds_device-top.log request_exceeds_device refuted --fake-device total=8TiB
expect $R/hardware_fault-top.log hardware_fault refuted
expect $R/hardware_fault-top.log hardware_fault confirmed --fake-device pattern_errors=1
expect $R/hardware_fault-top.log hardware_fault confirmed --fake-device remap_pending=yes
expect $R/hardware_fault-top.log hardware_fault inconclusive --fake-device "name=NVIDIA H100 80GB HBM3,bandwidth=0.4"
expect $R/hardware_fault-top.log hardware_fault refuted --fake-device bandwidth=0.4
expect $R/non_framework_memory-top.log non_framework_memory inconclusive

# ... from a JSON report, a file and standard input, the same verdicts.
"$oomdoc" --format json $R/fragmentation-top.log >"$tmp/report.json"
expect "$tmp/report.json" fragmentation inconclusive --max-memory 100%
"$oomdoc" live --backend fake --max-memory 100% --format json - <"$tmp/report.json" >"$tmp/live.json"
grep -q '"verdict": "inconclusive"' "$tmp/live.json"
check "a JSON report on standard input" $?
grep -q '"input": "fixtures/rules/fragmentation-top.log"' "$tmp/live.json"
check "a report's events keep their inputs" $?
# ... a gzip-compressed log on standard input.
gzip -c $R/fragmentation-top.log | "$oomdoc" live --backend fake --max-memory 100% >"$tmp/out"; rc=$?
[ $rc -eq 0 ] && grep -q 'fragmentation: inconclusive' "$tmp/out"
check "a compressed log on standard input: status $rc" $?

# 4. Refusal: others hold the GPU and no --force; one line, status 7, and
#    the report of the read-only probes all the same.
"$oomdoc" live --backend fake $R/foreign_process-top.log >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 7 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- '--force' "$tmp/err" &&
	grep -q 'foreign_process: confirmed' "$tmp/out" &&
	grep -q 'capacity: inconclusive' "$tmp/out"
st=$?
check "refusal: status $rc, stderr: $(cat "$tmp/err")" $st
# Fail closed: processes that cannot be listed (no NVML, or a list NVML
# cannot read) are not "nobody": read-only, status 7; --force runs.
for f in nvml=no proc_list=no; do
	"$oomdoc" live --backend fake --fake-device $f $R/capacity-top.log >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 7 ] && grep -q 'cannot be listed' "$tmp/err" && grep -q 'capacity: inconclusive' "$tmp/out"
	st=$?
	check "unknown processes ($f): status $rc, stderr: $(cat "$tmp/err")" $st
	"$oomdoc" live --backend fake --force --fake-device $f $R/capacity-top.log >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 0 ]
	check "unknown processes ($f) with --force: status $rc, stderr: $(cat "$tmp/err")" $?
done
# The second signal: memory in use that no listed process explains.
"$oomdoc" live --backend fake --fake-device hidden=20GiB $R/capacity-top.log >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 7 ] && grep -q 'a process the list does not show' "$tmp/err"
check "an unlisted tenant: status $rc, stderr: $(cat "$tmp/err")" $?
# A tenant that comes during the run stops it (status 7) and everything
# is released; the control without it runs to the end.
"$oomdoc" live --backend fake --max-memory 100% --fake-device 'tenant=777:4GiB@3' \
	$R/fragmentation-top.log >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 7 ] && grep -q 'process 777 appeared' "$tmp/err" && grep -q 'was released' "$tmp/err"
check "a tenant mid-run: status $rc, stderr: $(cat "$tmp/err")" $?
"$oomdoc" live --backend fake --max-memory 100% $R/fragmentation-top.log >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ]
check "the same run without the tenant: status $rc" $?
# The event's GPU: a log's "GPU 5" on a node of eight probes GPU 5 (the
# report names its UUID and PCI id); the control, --device 0, probes 0.
sed 's/GPU 0/GPU 5/g' $R/capacity-top.log >"$tmp/gpu5.log"
"$oomdoc" live --backend fake --max-memory 100% --fake-device gpus=8 "$tmp/gpu5.log" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && grep -q 'probed     GPU-fa4e0005-.*PCI 00000000:1D:00.0' "$tmp/out"
check "the event's GPU is probed: status $rc" $?
"$oomdoc" live --backend fake --max-memory 100% --device 0 --fake-device gpus=8 "$tmp/gpu5.log" >"$tmp/out"
grep -q 'probed     GPU-fa4e0000-' "$tmp/out"
check "--device 0 probes GPU 0" $?
# Through the job's CUDA_VISIBLE_DEVICES: its GPU 1 of 4,5,6 is the node's
# GPU 5; a UUID entry is opened by UUID.
{ echo 'export CUDA_VISIBLE_DEVICES=4,5,6'; sed 's/GPU 0/GPU 1/g' $R/capacity-top.log; } >"$tmp/vis.log"
"$oomdoc" live --backend fake --max-memory 100% "$tmp/vis.log" >"$tmp/out"
grep -q 'probed     GPU-fa4e0005-' "$tmp/out"
check "CUDA_VISIBLE_DEVICES maps the event's GPU" $?
{ echo 'CUDA_VISIBLE_DEVICES=GPU-fa4e0003-0000-4000-8000-000000000003'; cat $R/capacity-top.log; } >"$tmp/vis.log"
"$oomdoc" live --backend fake --max-memory 100% --fake-device gpus=4 "$tmp/vis.log" >"$tmp/out"
grep -q 'probed     GPU-fa4e0003-' "$tmp/out"
check "CUDA_VISIBLE_DEVICES by UUID" $?
# An event that names no GPU, on a node of several: no device verdicts
# without --device; on a node of one, they are given.
"$oomdoc" live --backend fake --max-memory 100% --fake-device gpus=8,pattern_errors=1 \
	$R/hardware_fault-top.log >"$tmp/out"
grep -q 'Not probed: the log does not say which GPU' "$tmp/out" && ! grep -q ': confirmed' "$tmp/out"
check "no device verdicts for an event of an unknown GPU" $?
"$oomdoc" live --backend fake --max-memory 100% --fake-device pattern_errors=1 $R/hardware_fault-top.log >"$tmp/out"
grep -q 'hardware_fault: confirmed' "$tmp/out"
check "the same on a node of one GPU" $?
# --device by UUID, PCI bus id (with or without the domain) and MIG UUID.
for id in GPU-fa4e0005-0000-4000-8000-000000000005 00000000:1D:00.0 1d:00.0; do
	"$oomdoc" live --backend fake --max-memory 100% --device "$id" --fake-device gpus=8 "$tmp/gpu5.log" >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 0 ] && grep -q 'probed     GPU-fa4e0005-' "$tmp/out"
	check "--device $id: status $rc, $(cat "$tmp/err")" $?
done
"$oomdoc" probe --backend fake --device MIG-fa4e0000-0000-4000-8000-000000000100 --fake-device mig=yes >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && grep -q 'a MIG instance of GPU-fa4e0000-' "$tmp/out" && grep -q 'counters read on the parent GPU' "$tmp/out"
check "--device MIG-...: status $rc, $(cat "$tmp/err")" $?
# The identity check: CUDA's device must be the MIG instance named and
# NVML's device; when CUDA gives another (CUDA_VISIBLE_DEVICES not
# honoured, NVML on another GPU), nothing is probed: status 5, one line.
M0=MIG-fa4e0000-0000-4000-8000-000000000100 M1=MIG-fa4e0000-0000-4000-8000-000000000101
"$oomdoc" probe --backend fake --device $M1 --fake-device mig=2 -f json >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["device"]
assert d["uuid"] == sys.argv[2], d["uuid"]
assert d["identity"] == "CUDA (cuDeviceGetUuid_v2) and NVML agree: %s, the MIG instance named" % sys.argv[2], d["identity"]
' "$tmp/out" $M1
check "MIG identity agreed: status $rc, $(cat "$tmp/err")" $?
"$oomdoc" probe --backend fake --device $M1 --fake-device mig=2,cuda_uuid=$M0 >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 5 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	grep -q "CUDA_VISIBLE_DEVICES=$M1 CUDA's device 0 is $M0 (cuDeviceGetUuid_v2), not the MIG instance named: refusing" "$tmp/err"
check "MIG instance other than the one named: status $rc, $(cat "$tmp/err")" $?
"$oomdoc" probe --backend fake --fake-device gpus=2,cuda_uuid=GPU-fa4e0001-0000-4000-8000-000000000001 >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 5 ] && [ ! -s "$tmp/out" ] && grep -q "but NVML's is GPU-fa4e0000-.*refusing to probe" "$tmp/err"
check "CUDA's GPU is not NVML's: status $rc, $(cat "$tmp/err")" $?
"$oomdoc" probe --backend fake --device $M1 --fake-device mig=2,cuda_uuid=none >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] && grep -q "identity   not cross-checked: the driver gives no UUID for CUDA's device (a MIG instance's needs cuDeviceGetUuid_v2" "$tmp/out"
check "MIG identity not checkable: status $rc, said" $?
"$oomdoc" probe --backend fake --fake-device nvml=no >"$tmp/out" 2>"$tmp/err"; rc=$?
grep -q "identity   CUDA's device is GPU-fa4e0000-.*not cross-checked with NVML, which is not available" "$tmp/out"
check "identity without NVML: status $rc, said" $?
"$oomdoc" probe --backend fake --device GPU-0bad >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 5 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]
check "--device of a GPU not there: status $rc" $?
"$oomdoc" probe --backend fake --device nope >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ]
check "--device nope: status $rc" $?
# Under --force the cap is at most half of the free memory.
"$oomdoc" live --backend fake --force --max-memory 100% -f json $R/capacity-top.log >"$tmp/out" 2>"$tmp/err"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cap_bytes"] <= d["free_bytes_at_start"] // 2, (d["cap_bytes"], d["free_bytes_at_start"])
assert d["cap_from"].startswith("min(50%"), d["cap_from"]
' "$tmp/out"
check "the cap under --force" $?

# 5. No out-of-memory failure: status 1, nothing probed.
"$oomdoc" live --backend fake fixtures/no-oom/nvidia-smi-table.log >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && [ ! -s "$tmp/err" ] && grep -q 'nothing to confirm' "$tmp/out"
check "no event: status $rc" $?

# 6. Probe without a log, in each format.
"$oomdoc" probe --backend fake --format json >"$tmp/probe.json"; rc=$?
python3 - "$tmp/probe.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
names = [x["probe"] for x in p["probes"]]
assert names == ["processes", "context_cost", "largest_allocation", "health"], names
assert all(x["ran"] and x["summary"] for x in p["probes"]), p["probes"]
h = p["probes"][3]["measurements"]
assert h["pattern_errors"] == 0 and h["pattern_passes"] == 9, h
assert [h["pattern_passes_" + k] for k in ("static", "moving_inversions", "random")] == [6, 2, 1], h
assert int(h["pattern_seed"]) > 0, h
assert "bytes read + bytes written" in h["bandwidth_convention"], h
assert 0 < h["triad_fraction_of_peak"] <= 1, h
assert p["probes"][1]["activity"]["allocations"] == 1
EOF
check "oomdoc probe --backend fake: status $rc" $?
"$oomdoc" probe --backend fake --fake-device ecc_uncorrected=4 >"$tmp/out"; rc=$?
[ $rc -eq 0 ] && grep -q 'Faulty: The driver counts 4 uncorrectable ECC' "$tmp/out"
check "probe reports a faulty GPU: status $rc" $?
# The random pattern's seed: the one given is the one used and printed;
# a fault only moving inversions find is confirmed, with the kind said.
"$oomdoc" probe --backend fake --pattern-seed 0x2a --fake-device coupling=8192:16384:5 >"$tmp/out"; rc=$?
[ $rc -eq 0 ] && grep -q -E '^    pattern_seed +42$' "$tmp/out" &&
	grep -q 'Faulty: .*static patterns 0, moving inversions 2, random 0 with seed 42' "$tmp/out"
check "--pattern-seed and a coupling fault: status $rc" $?
"$oomdoc" probe --backend fake --pattern-seed 0 >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- '--pattern-seed takes a number' "$tmp/err"
check "--pattern-seed 0: status $rc" $?
# An uncorrectable ECC error during the test: confirmed, and the device
# failed (status 4: the context is lost).
"$oomdoc" probe --backend fake --fake-device ecc_fault=yes >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 4 ] && grep -q 'Faulty: The driver reported an uncorrectable ECC error' "$tmp/out"
check "an ECC error during the memory test: status $rc" $?
# The kernel images: the fatbin when the driver takes it; the PTX image,
# with the fatbin's refusal said, when it does not; status 6 (driver too
# old) with both refusals when it refuses both.
"$oomdoc" probe --backend fake --format json >"$tmp/img0.json"; rc0=$?
"$oomdoc" probe --backend fake --fake-device refuse_images=1 --format json >"$tmp/img1.json"; rc1=$?
"$oomdoc" probe --backend fake --fake-device refuse_images=2 --format json >"$tmp/img2.json" 2>"$tmp/err"; rc2=$?
python3 - "$tmp/img0.json" "$tmp/img1.json" "$tmp/img2.json" "$rc0" "$rc1" "$rc2" <<'EOF'
import json, sys
d = [json.load(open(f))["device"] for f in sys.argv[1:4]]
rc = [int(x) for x in sys.argv[4:7]]
assert rc == [0, 0, 6], rc
assert d[0]["kernel_image"] == "fatbin" and d[0]["kernel_images_refused"] is None, d[0]
assert d[1]["kernel_image"] == "ptx", d[1]
assert d[1]["kernel_images_refused"].startswith("fatbin refused: ") and "UNSUPPORTED_PTX_VERSION" in d[1]["kernel_images_refused"], d[1]
assert d[2]["kernel_image"] is None and "ptx refused: " in d[2]["kernel_images_refused"], d[2]
EOF
check "kernel images: fatbin, the PTX fallback, both refused (status $rc0 $rc1 $rc2)" $?
grep -q "driver too old: the driver refused each of oomdoc's kernel images" "$tmp/err"
check "both kernel images refused: $(cat "$tmp/err")" $?
# One image only: the PTX image loads alone; the fatbin alone, refused,
# has no fallback.
OOMDOC_KERNEL_IMAGE=ptx "$oomdoc" probe --backend fake >"$tmp/out"; rc=$?
[ $rc -eq 0 ] && grep -q -E '^    kernels +PTX of the fake device \(the only image offered' "$tmp/out"
check "OOMDOC_KERNEL_IMAGE=ptx: status $rc" $?
OOMDOC_KERNEL_IMAGE=fatbin "$oomdoc" probe --backend fake --fake-device refuse_images=1 >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 6 ] && ! grep -q 'ptx refused' "$tmp/err"
check "OOMDOC_KERNEL_IMAGE=fatbin, refused: status $rc" $?
for fmt in text markdown; do
	"$oomdoc" probe --backend fake --format $fmt >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 0 ] && [ -s "$tmp/out" ] && [ ! -s "$tmp/err" ]
	check "probe --format $fmt: status $rc" $?
	"$oomdoc" live --backend fake --max-memory 100% --format $fmt \
		fixtures/sample/job.log >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 0 ] && grep -q 'confirmed' "$tmp/out" && [ ! -s "$tmp/err" ]
	check "live --format $fmt: status $rc" $?
done
# Markdown: nothing from a report read back becomes a link, a tag or a
# mention (a hostile rule id and input name).
sed 's/"fragmentation-top.log"/x/; s#"rule": "fragmentation"#"rule": "<b>@team [x](http://e.vil)"#; s#"input": "[^"]*"#"input": "<img src=x>|@all"#' \
	"$tmp/report.json" >"$tmp/hostile.json"
"$oomdoc" live --backend fake --max-memory 100% --format markdown "$tmp/hostile.json" >"$tmp/out.md"; rc=$?
/usr/bin/python3 - "$tmp/out.md" <<'EOF'
import re, sys
from markdown_it import MarkdownIt
html = MarkdownIt("gfm-like").render(open(sys.argv[1]).read())
assert "<a " not in html and "<img" not in html and "<b>" not in html, html
# Outside code: text from the report read back is only in code spans.
text = re.sub(r"<[^>]+>", "", re.sub(r"<code>.*?</code>", "", html, flags=re.S))
assert not re.search(r"@[A-Za-z]", text), "a mention"
EOF
check "markdown escapes what a report brings: status $rc" $?

# 7. The time limit, a device error, and SIGINT: everything is released.
# A hung kernel never returns: the watchdog writes the partial report
# and ends the process (status 8) after the limit and the grace.
SECONDS=0
timeout 30 "$oomdoc" live --backend fake --max-memory 100% --fake-device hang=yes --time-limit 1 \
	$R/fragmentation-top.log >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 8 ] && grep -q 'watchdog ended the run' "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	grep -q 'watchdog ended the run' "$tmp/out" && [ $SECONDS -lt 10 ]
st=$?
check "a kernel past the time limit: status $rc, stderr: $(cat "$tmp/err")" $st
"$oomdoc" probe --backend fake --fake-device no_gpu=yes >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 5 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]
check "no GPU (fake): status $rc" $?
"$oomdoc" probe --backend fake --fake-device delay_ms=5000 >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 0.5
kill -INT $pid
wait $pid; rc=$?
[ $rc -eq 130 ] && grep -q 'everything it allocated was released' "$tmp/err" &&
	[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'stopped by a signal' "$tmp/out"
st=$?
check "SIGINT: status $rc, stderr: $(cat "$tmp/err")" $st
"$oomdoc" probe --backend fake --fake-device delay_ms=5000 >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 0.5
kill -TERM $pid
wait $pid; rc=$?
[ $rc -eq 143 ]
check "SIGTERM: status $rc" $?

# The fake device's delay_ms obeys --time-limit as a slow kernel on the
# CUDA backend does (it used to run each of its 5 s to the end: 35 s).
SECONDS=0
timeout 20 "$oomdoc" probe --backend fake --fake-device delay_ms=5000 --time-limit 1 \
	>"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 8 ] && [ $SECONDS -lt 4 ] && grep -q 'time limit of 1 s' "$tmp/err"
st=$?
check "delay_ms past --time-limit: status $rc after $SECONDS s, stderr: $(cat "$tmp/err")" $st
# The faults the man page gives as KEY=yes are taken in that form (it
# listed hang and no_gpu as bare flags, which the parser refuses).
fakes=$(sed -n '/^\.It Fl \\-fake-device/,/^\.It Fl \\-max-memory/p' "$man")
for fault in hang no_gpu; do
	printf '%s\n' "$fakes" | grep -q "^\.Cm $fault Ns = Ns Cm yes"
	check "the man page does not give --fake-device $fault=yes" $?
done
for fault in $(printf '%s\n' "$fakes" | sed -n 's/^\.Cm \([a-z_]*\) Ns = Ns Cm yes.*/\1/p'); do
	"$oomdoc" probe --backend fake --fake-device "$fault=yes" >/dev/null 2>"$tmp/err"
	! grep -q 'fake-device setting' "$tmp/err"
	st=$?
	check "the man page's --fake-device $fault=yes is refused: $(cat "$tmp/err")" $st
done

# Hostile figures: a JSON report whose sizes are all INT64_MAX (or just
# below, or just above half), and fake devices of INT64_MAX bytes, pages
# or counters.  Every probe's arithmetic saturates: each run ends with a
# documented status and, in the sanitizer build (where undefined
# behaviour aborts), with no runtime error.
"$oomdoc" -f json $R/fragmentation-top.log >"$tmp/frag.json"
for v in 9223372036854775807 9223372036854775806 4611686018427387904; do
	python3 - "$tmp/frag.json" "$v" >"$tmp/huge-$v.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keep = {"line", "rank", "device", "occurrences", "pid", "first_line", "last_line"}
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if isinstance(v, int) and not isinstance(v, bool) and k not in keep:
                o[k] = int(sys.argv[2])
            else:
                walk(v)
    elif isinstance(o, list):
        for x in o:
            walk(x)
walk(d["events"])
json.dump(d, sys.stdout)
PY
done
M=9223372036854775807
while read -r fake; do
	for input in "$tmp"/huge-*.json $R/fragmentation-top.log; do
		timeout 120 "$oomdoc" live -f json --backend fake --force --max-memory 100% \
			${fake:+--fake-device "$fake"} "$input" >"$tmp/out" 2>"$tmp/err"; rc=$?
		{ [ $rc -eq 0 ] || [ $rc -eq 4 ] || [ $rc -eq 7 ] || [ $rc -eq 8 ]; } && ! grep -q 'runtime error' "$tmp/err"
		st=$?
		check "hostile figures: live --fake-device '$fake' $input: status $rc, $(head -c 300 "$tmp/err")" $st
	done
	timeout 120 "$oomdoc" probe -f json --backend fake --force ${fake:+--fake-device "$fake"} \
		>"$tmp/out" 2>"$tmp/err"; rc=$?
	{ [ $rc -eq 0 ] || [ $rc -eq 4 ] || [ $rc -eq 7 ] || [ $rc -eq 8 ]; } && ! grep -q 'runtime error' "$tmp/err"
	st=$?
	check "hostile figures: probe --fake-device '$fake': status $rc, $(head -c 300 "$tmp/err")" $st
done <<EOF

total=$M
total=$M,context=$M
total=$M,reserved=$M
total=$M,proc=1:$M,proc=2:$M
total=$M,page=$M
total=$M,granularity=$M
total=$M,pattern_errors=$M
mem_clock_khz=$M,bus_width=65536
ecc_uncorrected=$M,ecc_corrected=$M,remapped=$M
total=4611686018427387904,page=3
total=$M,context=8000000000000000000
EOF

# 8. Usage and input errors: one line, status 2.
while IFS='|' read -r args what; do
	# shellcheck disable=SC2086
	"$oomdoc" $args >"$tmp/out" 2>"$tmp/err"; rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$what" "$tmp/err"
	st=$?
	check "oomdoc $args: status $rc, stderr: $(cat "$tmp/err")" $st
done <<'EOF'
live --no-such-option x.log|unknown option '--no-such-option'
live --backend tpu x.log|--backend takes cuda or fake
live --max-memory 0% x.log|--max-memory takes
live --max-memory lots x.log|--max-memory takes
live --time-limit 0 x.log|--time-limit takes
live --device -1 x.log|--device takes
live --fake-device total=1GiB x.log|--fake-device needs --backend fake
live a.log b.log|live reads one input
probe x.log|probe reads no input
live --backend fake --fake-device colour=red fixtures/sample/job.log|unknown fake-device setting
live --backend fake /nonexistent.log|/nonexistent.log
live --backend fake fixtures|is a directory
EOF
printf '{"schema": "oomdoc.report/1", "events": [\n  {"kind": 1,}]}' >"$tmp/bad.json"
"$oomdoc" live --backend fake "$tmp/bad.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "bad.json:2:14: " "$tmp/err"
st=$?
check "a malformed report: status $rc, stderr: $(cat "$tmp/err")" $st
printf '{"schema": "oomdoc.report/9", "events": []}' >"$tmp/other.json"
"$oomdoc" live --backend fake "$tmp/other.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "not an oomdoc report" "$tmp/err"
check "another schema: status $rc" $?

# 9. --help lists the options that the man page's LIVE MODE documents.
for cmd in live probe; do
	help=$("$oomdoc" $cmd --help | grep -E '^  +(-[A-Za-z], )?--[a-z]' |
		sed -E 's/^ +(-[A-Za-z], )?--([a-z-]+).*/\2/' | sort)
	man_opts=$(sed -n '/^\.Sh LIVE MODE/,/^\.Sh /p' "$man" | grep '^\.It Fl' |
		sed -E 's/\\-/-/g' | grep -o -E 'Fl -[a-z-]+' | sed 's/Fl -//' | sort -u)
	[ -n "$help" ] && [ "$help" = "$man_opts" ]
	check "$cmd --help and LIVE MODE differ:
$(diff <(echo "$help") <(echo "$man_opts"))" $?
done
sed -n '/^\.Sh SYNOPSIS/,/^\.Sh /p' "$man" | grep -q '^\.Cm live'
check "SYNOPSIS does not show live" $?
sed -n '/^\.Sh SYNOPSIS/,/^\.Sh /p' "$man" | grep -q '^\.Cm probe'
check "SYNOPSIS does not show probe" $?
sed -n '/^\.Sh EXIT STATUS/,/^\.Sh /p' "$man" | grep -q '^\.It 4$'
check "EXIT STATUS does not list 4" $?

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

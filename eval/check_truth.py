#!/usr/bin/env python3
"""Checks the hand-written truth of a held-out set against its logs' text.

The common code of eval/heldout2/check.py, eval/heldout3/check.py,
eval/heldout4/check.py and eval/heldout5/check.py, which are thin
wrappers: each calls
check(its own directory) and exits with the status it returns.

Without running oomdoc, for every NAME.truth beside its NAME.log:
  - the JSON has the keys eval/score.py reads, and every kind is one of
    oomdoc's kinds (man/oomdoc.1, "The kinds of event");
  - every event line exists and says what its kind says (a phrase of
    that kind's message is on the line, or on the line after it for the
    messages that a terminal or a paste wrapped);
  - every byte figure is re-derived from the printed text of the event's
    line (and the 3 lines after it) by a field-specific pattern, with the
    units of the set's SOURCES.md (KiB/MiB/GiB and MPS GB/MB, TPU and
    Ollama G/GiB all 1024-based, round(value * unit)), or is an exact byte
    count printed there;
  - a truth's rank is printed as rank=N (or rank N) on the event's line
    or the line after it;
  - every row of top_causes.tsv names a log and one of its event lines;
  - file numbering: OOM logs NNN-, non-OOM logs nNN-, no gaps.
--print lists each event line so it can be read by eye.  The status is 1
on any failure.

The phrase and field tables are the union of heldout2's and heldout3's
(heldout3's were a superset); a set that needs another phrase or field
pattern adds an alternative here, which cannot make an older set's
correct truth fail but is to be checked by running all the wrappers.
A held-out set that is still blind adds its alternatives in its own
wrapper (extend() below) instead, so that this shared file does not show
what the set holds.
"""
import csv
import json
import os
import re
import sys

KINDS = {"cuda_caching_allocator", "hip", "xpu", "cuda_raw", "cublas",
         "cudnn", "nccl", "mps", "tf_resource_exhausted",
         "xla_resource_exhausted", "host_oom_killer", "dataloader_killed",
         "slurm_oom", "k8s_oomkilled", "host_alloc_failed", "cupy",
         "onnxruntime", "tensorrt", "ray", "vllm_kv_cache", "ggml",
         "sglang_memory_pool", "unrecognised"}
# A phrase that a message of the kind carries (case-insensitive).
PHRASE = {
    "cuda_caching_allocator": r"out of memory|OutOfMemoryError|Allocation on device",
    "hip": r"HIP out of memory|hipErrorOutOfMemory",
    "xpu": r"XPU out of memory",
    "mps": r"MPS backend out of memory|Invalid buffer size",
    "cuda_raw": r"out of memory|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|CUresult error +result=2\b|Not enough memory to handle",
    "cublas": r"CUBLAS_STATUS_ALLOC_FAILED",
    "cudnn": r"CUDNN_STATUS_\w+",
    "nccl": r"Cuda failure 2 'out of memory'|NCCL WARN Cuda failure 'out of memory'",
    "tf_resource_exhausted": r"OOM when allocating|CUDA_ERROR_OUT_OF_MEMORY|ran out of memory|failed to allocate",
    "xla_resource_exhausted": r"out of memory|Resource exhausted: Out|Failed to allocate request|Error allocating device buffer|Attempting to reserve|unlikely to have enough memory",
    "host_oom_killer": r"out of memory: Kill|Killed process|oom-kill:constraint=|\bKilled\b",
    "dataloader_killed": r"DataLoader worker \(pid \d+\) is killed|Unexpected bus error encountered in worker",
    "slurm_oom": r"oom-kill event|out-of-memory handler|Out Of Memory|exceeded memory limit",
    "k8s_oomkilled": r"OOM ?Killed|low on resource: memory",
    "host_alloc_failed": r"Cannot allocate memory|requires more system memory|DefaultCPUAllocator: not enough memory|Unable to allocate|MemoryError",
    "onnxruntime": r"Failed to allocate memory for requested buffer",
    "ray": r"Task was killed due to the node running low on memory",
    "vllm_kv_cache": r"KV cache|cache blocks",
    "ggml": r"failed to allocate|insufficient memory",
    "sglang_memory_pool": r"out of memory|mem-fraction-static",
}
UNIT = {"B": 1, "bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30,
        "M": 2**20, "G": 2**30, "MB": 2**20, "GB": 2**30}
NUM = r"([0-9]+(?:\.[0-9]+)?) ?(bytes|B|KiB|MiB|GiB|MB|GB|M|G)\b"
# Field-specific patterns, tried in order; group 1 value, group 2 unit.
FIELD = {
    "requested_bytes": [r"Tried to allocate " + NUM,
                        r"requires more system memory \(" + NUM,
                        r"\(" + NUM + r" KV cache is needed",
                        r"failed to allocate [0-9.]+\w* \(([0-9]+) (bytes)\)",
                        r"trying to allocate ([0-9]+) (bytes)",
                        r"buffer of size ([0-9]+)()",
                        r"attempted to allocate .*?buffer of size ([0-9]+)()",
                        r"Requested +: " + NUM,
                        r"Attempting to allocate " + NUM,
                        r"Attempting to reserve " + NUM,
                        r"Unable to allocate " + NUM],
    "total_bytes": [NUM + r" total capacity",
                    r"total capac(?:i)?ty of " + NUM,
                    r"max allowed: " + NUM,
                    r"of " + NUM + r" hbm",
                    r"Device limit +: " + NUM],
    "free_bytes": [NUM + r" free", r"of which " + NUM + r" is free",
                   r"than is available \(" + NUM,
                   r"available KV cache memory \(" + NUM,
                   r"There are " + NUM + r" free"],
    "allocated_bytes": [NUM + r" already allocated",
                        r"memory " + NUM + r" is allocated by PyTorch",
                        r"MPS allocated: " + NUM,
                        r"Currently allocated +: " + NUM],
    "reserved_bytes": [NUM + r" reserved in total"],
    "reserved_unallocated_bytes": [NUM + r" cached",
                                   NUM + r" is reserved by PyTorch but unallocated"],
    "allowed_bytes": [NUM + r" allowed"],
}


def extend(phrases, fields):
    """Adds alternatives to the phrase table (PHRASES: kind -> pattern,
    OR-ed onto the kind's pattern) and the field table (FIELDS: field ->
    list of patterns, tried after the shared ones) for one wrapper's run."""
    for kind, pat in phrases.items():
        PHRASE[kind] = PHRASE[kind] + "|" + pat if kind in PHRASE else pat
    for field, pats in fields.items():
        FIELD.setdefault(field, []).extend(pats)


def derive(field, text):
    for pat in FIELD.get(field, []):
        m = re.search(pat, text)
        if m:
            unit = UNIT.get(m.group(2), 1) if m.group(2) else 1
            return round(float(m.group(1)) * unit)
    return None


def check(folder, argv=None):
    """Checks every NAME.truth in the directory FOLDER against NAME.log and
    top_causes.tsv, prints the failures and a summary line, and returns the
    exit status (0, or 1 on any failure).  ARGV (default sys.argv) may hold
    --print, which lists each event line."""
    argv = sys.argv if argv is None else argv
    show = "--print" in argv
    bad = []
    names = sorted(n[:-4] for n in os.listdir(folder) if n.endswith(".log"))
    truths = sorted(n[:-6] for n in os.listdir(folder) if n.endswith(".truth"))
    if names != truths:
        bad.append(f"logs and truths differ: {set(names) ^ set(truths)}")
    oom = [n for n in names if re.match(r"\d{3}-", n)]
    neg = [n for n in names if re.match(r"n\d{2}-", n)]
    if len(oom) + len(neg) != len(names):
        bad.append("a file name is neither NNN- nor nNN-")
    for i, n in enumerate(oom, 1):
        if not n.startswith(f"{i:03d}-"):
            bad.append(f"{n}: numbering gap (expected {i:03d})")
            break
    for i, n in enumerate(neg, 1):
        if not n.startswith(f"n{i:02d}-"):
            bad.append(f"{n}: numbering gap (expected n{i:02d})")
            break
    events = {}
    for n in names:
        with open(os.path.join(folder, n + ".log"), encoding="utf-8") as f:
            lines = f.read().split("\n")
        with open(os.path.join(folder, n + ".truth")) as f:
            truth = json.load(f)
        if truth.get("oom") is not (n in oom):
            bad.append(f"{n}: oom is {truth.get('oom')}")
            continue
        if not truth["oom"]:
            if "events" in truth:
                bad.append(f"{n}: a non-OOM truth has events")
            continue
        if not truth.get("events"):
            bad.append(f"{n}: no events")
        events[n] = []
        for t in truth["events"]:
            line, kind = t.get("line"), t.get("kind")
            events[n].append(line)
            if kind not in KINDS:
                bad.append(f"{n}: kind {kind} is not one of oomdoc's")
                continue
            if not isinstance(line, int) or not 1 <= line <= len(lines):
                bad.append(f"{n}: line {line} outside the log")
                continue
            here = lines[line - 1]
            near = here + " " + (lines[line] if line < len(lines) else "")
            if not re.search(PHRASE.get(kind, "."), near, re.I):
                bad.append(f"{n}:{line}: no {kind} phrase on the line")
            if show:
                print(f"{n}:{line}: {kind}: {here[:150]}")
            if "rank" in t:
                if not re.search(r"rank[= ]%d\b" % t["rank"], near):
                    bad.append(f"{n}:{line}: rank {t['rank']} not on the line")
            block = "\n".join(lines[line - 1:line + 3])
            for key, value in t.items():
                if not key.endswith("_bytes"):
                    continue
                got = derive(key, block)
                exact = re.search(r"(?<![0-9.])" + str(value) + r"(?![0-9.])",
                                  block.replace(",", ""))
                if got != value and not (got is None and exact):
                    bad.append(f"{n}:{line}: {key} {value}, text gives {got}")
    with open(os.path.join(folder, "top_causes.tsv"), newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            n = row["file"][:-4]
            if n not in events or int(row["line"]) not in events[n]:
                bad.append(f"top_causes.tsv: {row['file']}:{row['line']} "
                           "is not an event of its truth")
    for b in bad:
        print("FAIL " + b)
    print(f"{len(oom)} OOM logs ({sum(len(v) for v in events.values())} "
          f"events), {len(neg)} non-OOM logs, {len(bad)} failures")
    return 1 if bad else 0


if __name__ == "__main__":
    # eval/check_truth.py DIR [--print]: the same check for any set.
    dirs = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(dirs) != 1:
        sys.exit("usage: eval/check_truth.py DIR [--print]")
    sys.exit(check(dirs[0]))

#!/usr/bin/env python3
"""Checks the fixes oomdoc offers, against hand-written expectations and
against the knowledge table.

1. Each <name>.fixes in the directories given holds what the fixes of its
   log (<name>.log beside it, or log=PATH relative to the file) must be,
   written by hand from the message and rules/knowledge.yaml, as its
   comments show; one key=value a line:

       args=OPTIONS     options given before the log (split on spaces)
       env=NAME=VALUE   an env line offered (all of them, in report order)
       env=none         no env line at all
       fix=RULE.FIX     a fix that must be offered
       nofix=RULE.FIX   a fix that must not be
       has=TEXT         text some fix must contain
       hasnt=TEXT       text no fix may contain

2. Over every fixtures/*/*.log, each fix must hold against the knowledge
   table, read here from rules/knowledge.yaml independently of the C code
   (src/lib/knowledge.c):
     * an allocator variable offered exists in every release of the
       event's release range (its layout and hint), for its vendor, and is
       not broken there for the option it sets;
     * every option in its value exists in every release of the range and
       has a value each of them accepts (max_split_size_mb at least the
       largest minimum);
     * no env line sets what the log shows set already;
     * a fix of an AMD, Intel or Apple event (TensorFlow's ROCm build
       among them: a message naming hipError) names no NVIDIA command or
       variable (nor cudaMallocAsync), an event of TensorFlow's CPU
       allocator gets no GPU setting, story or live probe, and a cause of an AMD, Intel, Apple or TPU event names no
       live probe (they run through CUDA);
     * a fix that names bfloat16 says that it needs
       torch.cuda.is_bf16_supported(), or the log names a GPU of compute
       capability 8.0 or more (the table's gpu entries, found in the log
       here with a pattern of this file); one that says the GPU refuses
       bfloat16 names one below 8.0; and one that names an autocast
       API comes from a range whose every release has that API (or, for
       an event of no known range, says which release it needs);
     * a fix that names a setting or API with a release floor (the
       table's feature entries with since: torch.autocast,
       torch.cuda.set_per_process_memory_fraction,
       TF_GPU_ALLOCATOR=cuda_malloc_async, vLLM's --enforce-eager and
       --kv-cache-dtype fp8, SGLang's --chunked-prefill-size) comes from
       an event whose every release has it (PyTorch: the message's range,
       or a message that prints the cap's "allowed" figure; TensorFlow:
       what the log shows before the event, read here with the patterns
       of TF_BOUNDS, or a message that names it; vLLM: the version lines
       of VLLM_VERSION before the event; SGLang: never known), says
       "FRAMEWORK X.Y or later" where the release is not known, and is
       never offered where the log shows an older release;
     * an event after the lines of an inference server (vLLM, SGLang:
       SERVING), outside a backward pass or an optimizer step, gets no
       training advice (activation checkpointing, mixed precision);
     * a setting a fix offers to make smaller (a workspace, a buffer) is
       set below its default for every GPU (SHRINK);
     * the explanation of a cause names nothing a fix of its vendor may not
       name, and a GPU event whose log shows a framework other than
       PyTorch (or one built on it) gets no explanation or fix that names
       PyTorch's allocator or torch.cuda.

Usage: check_fixes.py [--logs PATTERN] OOMDOC KNOWLEDGE_YAML FIXES_DIR...
"""
import glob
import json
import os
import re
import subprocess
import sys

import yaml

OPEN = (99, 99)
VENDORS = {
    "cuda_caching_allocator": "nvidia", "cuda_raw": "nvidia",
    "cublas": "nvidia", "cudnn": "nvidia", "nccl": "nvidia",
    "hip": "amd", "xpu": "intel", "mps": "apple", "npu": "huawei",
}
# What a fix of a non-NVIDIA event must not name.
NOT_FOR = {
    "amd": ["nvidia-smi", "CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF",
            "CUBLAS_WORKSPACE_CONFIG", "cuda_malloc_async"],
    "intel": ["nvidia-smi", "CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF",
              "CUBLAS_WORKSPACE_CONFIG", "torch.cuda", "NCCL", "rocm-smi",
              "cuda_malloc_async"],
    "apple": ["nvidia-smi", "CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF",
              "CUBLAS_WORKSPACE_CONFIG", "torch.cuda", "NCCL", "rocm-smi",
              "cuda_malloc_async"],
    # torch_npu (Ascend): its own PYTORCH_NPU_ALLOC_CONF, torch.npu, HCCL.
    "huawei": ["nvidia-smi", "CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF",
               "PYTORCH_ALLOC_CONF=", "CUBLAS_WORKSPACE_CONFIG", "torch.cuda",
               "NCCL", "rocm-smi", "cuda_malloc_async"],
}


# Settings a fix lowers, and the smallest default each has: the value a
# fix sets must be below it.  CUBLAS_WORKSPACE_CONFIG (":KIB:COUNT"
# pairs): PyTorch's default :4096:2:16:8 (8519680 bytes; 32 MiB on
# Hopper), aten/src/ATen/cuda/CublasHandlePool.cpp
# parseChosenWorkspaceSize; cuBLAS's guide (Results reproducibility) says
# :4096:8 grows the footprint.  NCCL_BUFFSIZE: 4 MiB (NCCL's environment
# variables documentation).
SHRINK = {
    "CUBLAS_WORKSPACE_CONFIG": (8519680, lambda v: sum(
        int(k) * 1024 * int(n) for k, n in re.findall(r":([0-9]+):([0-9]+)",
                                                      v))),
    "NCCL_BUFFSIZE": (4194304, lambda v: int(v) if v.isdigit() else None),
}
# Frameworks built on PyTorch, whose events may name its allocator.
ON_TORCH = {"pytorch", "vllm", "sglang"}
# Event kinds of host memory: their fixes may name torch.load beside
# numpy's and datasets' ways to read less.
HOST = {"host_oom_killer", "dataloader_killed", "slurm_oom", "k8s_oomkilled",
        "host_alloc_failed", "ray"}


# What bounds the TensorFlow release in a log, each pattern with the
# bounds it gives (None: open); a version line gives its own release.
# Written from TensorFlow's history independently of src/lib/context.c:
# tensorflow_core was the package of 1.15 to 2.1, tf.Session is gone from
# 2.0, CUDA 10 and before means 2.3 or before (2.4 was built with CUDA
# 11.0), the TSL and local XLA paths are of 2.11 and later, and the
# cudaMallocAsync allocator's own file or the BFC message's advice to set
# it came with 2.5.
TF_VERSION = re.compile(r"\b(?:TensorFlow|tensorflow)(?:-gpu)? version:? ?"
                        r"([0-9])\.([0-9]{1,2})(?![0-9])|"
                        r"\btensorflow(?:-gpu)?(?:==| {2,})([0-9])\."
                        r"([0-9]{1,2})(?![0-9])|"
                        r"tensorflow/tensorflow:([0-9])\.([0-9]{1,2})(?![0-9])")
TF_BOUNDS = [
    (re.compile(r"nvcr\.io/nvidia/tensorflow:[0-9]{2}\.[0-9]{2}-tf1-"),
     (1, 15), (1, 15)),
    (re.compile(r"tensorflow_core[/\\]"), (1, 15), (2, 1)),
    (re.compile(r"(?<![\w.])tf\.Session\("), None, (1, 15)),
    (re.compile(r"(?:CUDA|dynamic) library libcudart\.so\.(?:[0-9]|10)\.|"
                r"(?:CUDA|dynamic) library lib(?:cublas|cupti)\.so\."
                r"(?:[0-9]|10)(?![0-9])|dynamic library cudart64_(?:10[0-9]|"
                r"[89]0)\.dll"), None, (2, 3)),
    (re.compile(r"tensorflow/tsl/|tensorflow/compiler/xla/stream_executor/|"
                r"external/local_tsl/|external/local_xla/|"
                r"gpu_cudamallocasync_allocator|"
                r"variable 'TF_GPU_ALLOCATOR=cuda_malloc_async'"),
     (2, 5), None),
]
FRAMEWORK_NAMES = {"pytorch": "PyTorch", "tensorflow": "TensorFlow",
                   "vllm": "vLLM", "sglang": "SGLang", "tgi": "TGI"}
# What shows the Text Generation Inference release, written from its
# sources independently of src/lib/context.c: its image's tag
# (ghcr.io/huggingface/text-generation-inference:1.4) and the launcher's
# --version (clap: "text-generation-launcher 1.4.5").
TGI_VERSION = re.compile(r"text-generation-inference:([0-9]{1,2})\."
                         r"([0-9]{1,2})(?![0-9])|text-generation-launcher "
                         r"([0-9]{1,2})\.([0-9]{1,2})\.[0-9]")


def tgi_range(text):
    """The TGI releases text shows, (lo, hi), or None."""
    rels = [(int(m.group(k)), int(m.group(k + 1)))
            for m in TGI_VERSION.finditer(text) for k in (1, 3)
            if m.group(k)]
    return (min(rels), max(rels)) if rels else None
# What shows the vLLM release in a log, written from vLLM's sources
# independently of src/lib/context.c: the API server's "vLLM API server
# version X.Y.Z" (vllm/entrypoints/openai/api_server.py), the engine's
# "Initializing an LLM engine (vX.Y.Z)" (and "a V0/V1 LLM engine"),
# collect_env's "vLLM Version:" and pip's "vllm==".  SGLang prints no
# release line oomdoc reads, so a fix naming an SGLang flag with a floor
# must always say the release it needs.
VLLM_VERSION = re.compile(r"(?:vLLM API server version |LLM engine \(v|"
                          r"vLLM Version: |\bvllm==)([0-9]{1,2})\."
                          r"([0-9]{1,2})(?![0-9])")


def vllm_range(text):
    """The vLLM releases text shows, (lo, hi), or None."""
    rels = [(int(m.group(1)), int(m.group(2)))
            for m in VLLM_VERSION.finditer(text)]
    return (min(rels), max(rels)) if rels else None
# An inference server in the log (vLLM's or SGLang's package or workers),
# and the training advice an event of one, outside a training phase, may
# not get.
SERVING = re.compile(r"[/\\]vllm[/\\]|\((?:VllmWorker|EngineCore)|"
                     r"[/\\]sglang[/\\]|\bsglang\.srt\b")
# Docker's record of no out-of-memory kill (docker inspect's State, as
# JSON, Go's struct print or YAML).
DOCKER_NOT_OOM = re.compile(r"\bOOMKilled[\"']?\s{0,8}:\s{0,8}[\"']?"
                            r"[Ff]alse\b")
# Text Generation Inference: its launcher's, router's and server's
# tracing targets and programs, and its image; its launcher reports a
# shard's failure after the error, so anywhere in the log.
TGI = re.compile(r"\btext_generation_(?:launcher|router|server|client)\b|"
                 r"\btext-generation-(?:launcher|server|inference)\b")
TRAINING_ADVICE = ("activation checkpointing", "GradScaler",
                   "Train in mixed precision", "train in mixed precision",
                   "gradient-accumulation", "gradient accumulation")


def tf_range(text):
    """The TensorFlow releases text shows, (lo, hi) with None for an open
    end, or None when it shows no bound or contradicts itself."""
    lo, hi = None, None
    bounds = [((int(m.group(k)), int(m.group(k + 1))),) * 2
              for m in TF_VERSION.finditer(text)
              for k in (1, 3, 5) if m.group(k)]
    bounds += [(b_lo, b_hi) for pat, b_lo, b_hi in TF_BOUNDS
               if pat.search(text)]
    for b_lo, b_hi in bounds:
        if b_lo is not None and (lo is None or b_lo > lo):
            lo = b_lo
        if b_hi is not None and (hi is None or b_hi < hi):
            hi = b_hi
    if lo is not None and hi is not None and lo > hi:
        return None
    return None if lo is None and hi is None else (lo, hi)


# What shows the jaxlib release, written from JAX's sources independently
# of src/lib/context.c: pip's "jaxlib==0.4.23" and pip list's columns,
# jax.print_environment_info()'s "jaxlib: 0.4.23"
# (jax/_src/environment_info.py), a wheel's or dist-info folder's name
# ("jaxlib-0.1.15-cp36-none-linux_x86_64.whl"); the same of the jax
# package, or "JAX version 0.4.23", bound jaxlib from above only (jax
# refuses a newer jaxlib: jax/_src/lib/__init__.py check_jaxlib_version).
JAXLIB_VERSION = re.compile(r"(?<![\w.-])jaxlib(?:==|:? +|-)"
                            r"([0-9])\.([0-9]{1,2})\.([0-9]{1,3})(?![0-9])")
JAX_VERSION = re.compile(r"(?:(?<![\w.-])jax(?:==|:? +|-)|"
                         r"\b[Jj][Aa][Xx] version:? v?)"
                         r"([0-9])\.([0-9]{1,2})\.([0-9]{1,3})(?![0-9])")
# The default preallocation an explanation may state, with the jaxlib
# releases that have it (jax CHANGELOG, jaxlib 0.4.1: of the total
# instead of the memory available; jax-ml/jax commit 2432aa97, first in
# jaxlib 0.4.14: 75% instead of 90%).
JAX_DEFAULTS = [("75% of the GPU's total memory", (0, 4, 14), None),
                ("90% of the GPU's total memory", (0, 4, 1), (0, 4, 13)),
                ("90% of the GPU memory then free", None, (0, 4, 0))]
# A default no release had: before jaxlib 0.4.1 it was 90% of the memory
# then free (docs/gpu_memory_allocation.rst of those releases).
JAX_NEVER = ["75% of the memory then free"]
# The JAX settings with a release floor: the fraction's new name, in the
# xla_client.py that moved into jax-ml/jax in March 2025 (commit
# a93035f6, jax 0.5.3); its first release is earlier and unconfirmed, so
# the later one is taken.
JAX_FLOORS = {"XLA_CLIENT_MEM_FRACTION": (0, 5, 3)}


def jaxlib_range(text):
    """The jaxlib releases text shows, (lo, hi) with None for an open end,
    or None when it shows no bound or contradicts itself."""
    lib = [tuple(map(int, m.groups())) for m in JAXLIB_VERSION.finditer(text)]
    jax = [tuple(map(int, m.groups())) for m in JAX_VERSION.finditer(text)]
    lo = max(lib) if lib else None
    hi = min(lib + jax) if lib or jax else None
    if lo is not None and lo > hi:
        return None
    return None if hi is None else (lo, hi)


def check_jax(ev, where, text):
    """The problems of a JAX event's words against the jaxlib release the
    log shows: a default share of another release, a fix for 0.4.23 that
    does not say it ignores XLA_PYTHON_CLIENT_PREALLOCATE, a release
    called unknown that the log shows, a setting newer than the log's."""
    if ev["kind"] != "xla_resource_exhausted":
        return []
    rng = jaxlib_range(text)
    exact = rng is not None and rng[0] == rng[1]
    bad = []
    for c in ev["causes"]:
        words = c.get("explanation") or ""
        for phrase, lo, hi in JAX_DEFAULTS:
            if phrase in words and not (
                    rng is not None and
                    (lo is None or (rng[0] is not None and rng[0] >= lo)) and
                    (hi is None or rng[1] <= hi)):
                bad.append("%s %s: states %s, the default of jaxlib %s-%s, "
                           "for releases %s" % (where, c["rule"], phrase, lo,
                                                hi, rng))
        for phrase in JAX_NEVER:
            if phrase in words:
                bad.append("%s %s: states %s, the default of no jaxlib "
                           "release" % (where, c["rule"], phrase))
        for f in c["fixes"]:
            name = "%s %s.%s" % (where, c["rule"], f["id"])
            env = f.get("env", {})
            if exact and "does not show the jaxlib release" in f["text"]:
                bad.append("%s: says the log does not show the jaxlib "
                           "release, and it shows %s" % (name, rng[0]))
            if exact and rng[0] == (0, 4, 23) and \
                    env.get("XLA_PYTHON_CLIENT_PREALLOCATE") == "false" and \
                    "0.4.23" not in f["text"]:
                bad.append("%s: sets XLA_PYTHON_CLIENT_PREALLOCATE=false "
                           "for jaxlib 0.4.23, which ignores it, without "
                           "saying so" % name)
            for var, floor in JAX_FLOORS.items():
                if var in env and rng is not None and rng[1] < floor:
                    bad.append("%s: sets %s, which jaxlib %s (the log's) "
                               "lacks (%d.%d.%d or later)" % (
                                   (name, var, rng[1]) + floor))
    return bad


def before(text, line):
    """The text of the lines before line (1-based), the event's own."""
    if not line:
        return text
    return "\n".join(text.split("\n")[:line - 1])


def release(s):
    major, minor = s.split(".")
    return (int(major), int(minor))


class Knowledge:
    def __init__(self, path):
        with open(path) as f:
            self.entries = yaml.safe_load(f)["knowledge"]
        for e in self.entries:
            if "since" in e:
                e["since"] = release(e["since"])
            e["until"] = release(e["until"]) if "until" in e else OPEN
        self.variables = {e["name"] for e in self.entries
                          if e["what"] == "variable"}

    def of(self, what, name, vendor=None):
        return [e for e in self.entries if e["what"] == what and
                e["name"] == name and
                (e.get("vendor") is None or e.get("vendor") == vendor)]

    def range(self, ev):
        """The release range of an event, or None."""
        if ev["framework"] != "pytorch":
            return None
        lay = self.of("layout", ev["format"])
        if not lay:
            return None
        lo, hi = lay[0]["since"], lay[0]["until"]
        hint = self.of("hint", ev["context"]["hint"] or "")
        if hint:
            nlo, nhi = max(lo, hint[0]["since"]), min(hi, hint[0]["until"])
            if nlo <= nhi:
                lo, hi = nlo, nhi
        return lo, hi

    def points(self, rng):
        """The releases of the range where some entry starts or ends: the
        coverage of every entry is constant between two of them."""
        lo, hi = rng
        pts = {lo}
        for e in self.entries:
            for p in (e.get("since"), e["until"]):
                if p is None or p == OPEN:
                    continue
                for q in (p, (p[0], p[1] + 1)):
                    if lo <= q <= hi:
                        pts.add(q)
        return sorted(pts)

    def covering(self, what, name, vendor, rel):
        return [e for e in self.of(what, name, vendor)
                if e["since"] <= rel <= e["until"]]

    def everywhere(self, what, name, vendor, rng):
        return all(self.covering(what, name, vendor, p)
                   for p in self.points(rng))


def options(value):
    """'a:1,b:2' as a list of (key, value)."""
    out = []
    for item in value.split(","):
        if item.strip():
            k, _, v = item.partition(":")
            out.append((k.strip(), v.strip()))
    return out


def valid_value(kb, option, value, vendor, rng):
    if option == "max_split_size_mb":
        if not value.isdigit():
            return False
        mins = [e["min"] for p in kb.points(rng)
                for e in kb.covering("option", option, vendor, p)]
        return bool(mins) and int(value) >= max(mins)
    if option == "expandable_segments":
        return value in ("True", "False")
    if option == "garbage_collection_threshold":
        try:
            return 0 < float(value) < 1
        except ValueError:
            return False
    if option == "backend":
        return value in ("native", "cudaMallocAsync")
    if option == "roundup_power2_divisions":
        return value.isdigit() and int(value) > 0 and \
            int(value) & (int(value) - 1) == 0
    return False        # an option this check does not know


def gpu_of(kb, text):
    """The last NVIDIA model of the table that the log names, with its
    compute capability, or None."""
    best = None
    for e in kb.entries:
        if e["what"] != "gpu":
            continue
        pat = r"(?:NVIDIA|Tesla|GeForce|Quadro) +%s(?![\w.]| Ti| SUPER)" % (
            re.escape(e["name"]))
        for m in re.finditer(pat, text):
            if best is None or m.start() > best[0]:
                best = (m.start(), e["name"], release(e["value"]))
    return None if best is None else best[1:]


def check_floor(kb, ev, e, name, words, rng, vendor, shown, own=None):
    """The problems of a fix that names feature e: the releases the log
    shows must all have it; where they are not known, the fix must say
    which release it needs; where they are all older, it must not be
    offered.  own is the text through the event's own line: a TensorFlow
    log line's source path (tensorflow/compiler/xla/stream_executor/)
    shows the release of the line that reports the failure too."""
    if own is None:
        own = shown
    fw = e.get("framework", "pytorch")
    since, feature = e["since"], e["name"]
    conditional = "%s %d.%d or later" % ((FRAMEWORK_NAMES[fw],) + since)
    has = lacks = False
    if feature in (ev.get("message") or ""):
        has = True                      # the message advises it
    elif fw == "tensorflow":
        tr = tf_range(own)
        has = tr is not None and tr[0] is not None and tr[0] >= since
        lacks = tr is not None and tr[1] is not None and tr[1] < since
    elif fw == "vllm":
        vr = vllm_range(shown)
        has = vr is not None and vr[0] >= since
        lacks = vr is not None and vr[1] < since
    elif fw == "tgi":
        # A message naming one of its flags comes from a release that
        # has it, and so every flag of an earlier floor.
        gr = tgi_range(shown)
        has = gr is not None and gr[0] >= since or any(
            x["since"] >= since for x in kb.entries
            if x["what"] == "feature" and x.get("framework") == "tgi" and
            x["name"] in (ev.get("message") or ""))
        lacks = gr is not None and gr[1] < since
    elif fw == "sglang":
        has = lacks = False
    else:
        if rng is not None and feature == \
                "torch.cuda.set_per_process_memory_fraction" and \
                (ev.get("memory") or {}).get("allowed_bytes") is not None:
            # Only a release with the cap prints its "allowed" figure.
            rng = (max(rng[0], since), rng[1])
        has = rng is not None and kb.everywhere("feature", feature, vendor,
                                                 rng)
        lacks = rng is not None and rng[1] < since
    if lacks:
        return ["%s: names %s, which the release the log shows lacks "
                "(%s %d.%d or later)" % ((name, feature, FRAMEWORK_NAMES[fw])
                                        + since)]
    if not has and conditional not in words:
        return ["%s: names %s without the release it needs (%s), for "
                "releases %s" % (name, feature, conditional, rng if fw ==
                                 "pytorch" else tf_range(own) if fw ==
                                 "tensorflow" else tgi_range(shown) if fw ==
                                 "tgi" else vllm_range(shown))]
    return []


def check_event(kb, ev, where, text=""):
    """The problems of one event's fixes, as strings."""
    bad = []
    gpu = gpu_of(kb, text) if VENDORS.get(ev["kind"]) == "nvidia" else None
    vendor = VENDORS.get(ev["kind"])
    # XLA:TPU's messages, as the recognisers name their printer.
    if ev["kind"] == "xla_resource_exhausted" and \
            ev.get("framework") == "libtpu":
        vendor = "google"
    # TensorFlow's ROCm build: its driver messages name HIP's errors
    # (hipError_t(N), or by name: HIP_ERROR_OutOfMemory).
    if ev["kind"] == "tf_resource_exhausted" and \
            re.search(r"hipError|HIP_ERROR_", ev.get("message") or ""):
        vendor = "amd"
    # TensorFlow's CPU allocator ran out of host memory: no GPU setting,
    # no live probe (they run on a GPU), no GPU allocator's story.
    if (ev.get("context") or {}).get("allocator") == "cpu":
        for c in ev["causes"]:
            words = (c.get("explanation") or "") + " " + " ".join(
                f["text"] + " " + " ".join(f.get("env", {}))
                for f in c["fixes"])
            for word in ("TF_GPU_ALLOCATOR", "TF_FORCE_GPU_ALLOW_GROWTH",
                         "whole GPU", "BFC"):
                if word in words:
                    bad.append("%s %s: names %s for TensorFlow's CPU "
                               "allocator" % (where, c["rule"], word))
            if c.get("confirm_with"):
                bad.append("%s %s: offers the live probe %s for TensorFlow's "
                           "CPU allocator" % (where, c["rule"],
                                              c["confirm_with"]))
    # Docker's state of the container says OOMKilled: false: no title or
    # explanation may call the out-of-memory killer the likely sender.
    if DOCKER_NOT_OOM.search(text):
        for c in ev["causes"]:
            for what in ("title", "explanation"):
                words = c.get(what) or ""
                if "most often" in words and "out-of-memory killer" in words:
                    bad.append("%s %s: the %s calls the out-of-memory "
                               "killer most likely, and the log shows "
                               "OOMKilled: false" % (where, c["rule"], what))
    rng = kb.range(ev)
    # The live probes run through CUDA and NVML: none for another
    # vendor's device.
    for c in ev["causes"]:
        if vendor not in (None, "nvidia") and c.get("confirm_with"):
            bad.append("%s %s: offers the live probe %s for a %s event" % (
                where, c["rule"], c["confirm_with"], vendor))
    fw = ev.get("framework")
    for c in ev["causes"]:
        texts = [("explanation", c.get("explanation") or "")] + [
            ("fix " + f["id"], f["text"] + " " + " ".join(
                "%s=%s" % kv for kv in f.get("env", {}).items()))
            for f in c["fixes"]]
        for what, words in texts:
            if what == "explanation":
                for word in NOT_FOR.get(vendor, []):
                    if word in words:
                        bad.append("%s %s: the explanation names %s for a "
                                   "%s event" % (where, c["rule"], word,
                                                 vendor))
            if fw is not None and fw not in ON_TORCH and \
                    ev["kind"] not in HOST:
                for word in ("PyTorch's allocator", "PyTorch cache",
                             "torch.cuda"):
                    if word in words:
                        bad.append("%s %s %s: names %s for a %s event" % (
                            where, c["rule"], what, word, fw))
        for f in c["fixes"]:
            for var, value in f.get("env", {}).items():
                if var in SHRINK:
                    default, size = SHRINK[var]
                    got = size(value)
                    if got is None or got == 0 or got >= default:
                        bad.append("%s %s.%s: %s=%s is no smaller than "
                                   "the default (%d bytes)" % (
                                       where, c["rule"], f["id"], var,
                                       value, default))
    if (SERVING.search(before(text, ev.get("line"))) or TGI.search(text) or
            ev.get("framework") == "tgi") and \
            ev["context"].get("phase") not in ("backward", "optimizer"):
        for c in ev["causes"]:
            for f in c["fixes"]:
                for word in TRAINING_ADVICE:
                    if word in f["text"]:
                        bad.append("%s %s.%s: training advice (%s) for an "
                                   "inference server's event" % (
                                       where, c["rule"], f["id"], word))
    bad += check_jax(ev, where, before(text, ev.get("line")))
    conf = options(ev["context"]["alloc_conf"] or "")
    shown = " ".join(filter(None, [ev["context"].get("xla_conf"),
                                   ev["context"].get("tf_allocator")]))
    for c in ev["causes"]:
        for f in c["fixes"]:
            name = "%s %s.%s" % (where, c["rule"], f["id"])
            words = f["text"] + " " + " ".join(
                "%s=%s" % kv for kv in f.get("env", {}).items())
            for word in NOT_FOR.get(vendor, []):
                if word in words:
                    bad.append("%s: names %s for a %s event" % (
                        name, word, vendor))
            if "bfloat16" in words or "bf16" in words:
                if "refuses it" in words:
                    if gpu is None or gpu[1] >= (8, 0):
                        bad.append("%s: says the GPU (%s) has no bf16" % (
                            name, gpu))
                elif not ("is_bf16_supported" in words or
                          (gpu is not None and gpu[1] >= (8, 0))):
                    bad.append("%s: offers bf16 without its GPU condition "
                               "(GPU %s)" % (name, gpu))
            for e in kb.entries:
                if e["what"] != "feature" or "since" not in e or \
                        e["name"] not in words:
                    continue
                bad += check_floor(kb, ev, e, name, words, rng, vendor,
                                   before(text, ev.get("line")),
                                   before(text, (ev.get("end_line") or
                                                 ev.get("line") or 0) + 1)
                                   if ev.get("line") else None)
            for var, value in f.get("env", {}).items():
                if var not in kb.variables:
                    if "%s=%s" % (var, value) in shown:
                        bad.append("%s: the log sets %s=%s already" % (
                            name, var, value))
                    continue
                if rng is None:
                    bad.append("%s: %s for an event of no known release" %
                               (name, var))
                    continue
                if not kb.everywhere("variable", var, vendor, rng):
                    bad.append("%s: %s is not read by every release of "
                               "%s-%s (%s)" % (name, var, rng[0], rng[1],
                                                vendor))
                new = [kv for kv in options(value) if kv not in conf]
                if not new:
                    bad.append("%s: %s=%s is what the log sets already" % (
                        name, var, value))
                for k, v in new:
                    if not kb.everywhere("option", k, vendor, rng):
                        bad.append("%s: option %s is not in every release "
                                   "of %s-%s" % (name, k, rng[0], rng[1]))
                    elif not valid_value(kb, k, v, vendor, rng):
                        bad.append("%s: %s:%s is refused by a release of "
                                   "%s-%s" % (name, k, v, rng[0], rng[1]))
                    for e in kb.of("broken", k, vendor):
                        if e["var"] == var and e["since"] <= rng[1] and \
                                rng[0] <= e["until"]:
                            bad.append("%s: %s does not carry %s in %s" % (
                                name, var, k, e["since"]))
    return bad


def run(oomdoc, log, args=()):
    r = subprocess.run([oomdoc, "--format", "json"] + list(args) + [log],
                       capture_output=True, text=True, timeout=60)
    try:
        return json.loads(r.stdout)["events"]
    except ValueError:
        return None


def parse(path):
    spec = {"log": None, "args": [], "env": None, "fix": [], "nofix": [], "has": [],
            "hasnt": []}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            key, sep, value = line.partition("=")
            if not sep or key not in spec:
                raise ValueError("%s:%d: unknown line %r" % (path, n, line))
            if key == "log":
                spec["log"] = os.path.join(os.path.dirname(path), value)
            elif key == "args":
                spec["args"] = value.split()
            elif key == "env":
                spec["env"] = spec["env"] or []
                if value != "none":
                    spec["env"].append(value)
            else:
                spec[key].append(value)
    if spec["env"] is None:
        raise ValueError("%s: no env= line (env=none when none)" % path)
    return spec


def check_spec(oomdoc, path):
    spec = parse(path)
    log = spec["log"] or path[:-len(".fixes")] + ".log"
    events = run(oomdoc, log, spec["args"])
    if events is None:
        return ["no JSON for %s" % log]
    env, ids, texts = [], set(), []
    for ev in events:
        for c in ev["causes"]:
            for f in c["fixes"]:
                ids.add("%s.%s" % (c["rule"], f["id"]))
                texts.append(f["text"])
                env += ["%s=%s" % kv for kv in f.get("env", {}).items()]
    bad = []
    if env != spec["env"]:
        bad.append("env lines %s, expected %s" % (env or "none",
                                                  spec["env"] or "none"))
    bad += ["fix %s not offered" % x for x in spec["fix"] if x not in ids]
    bad += ["fix %s offered" % x for x in spec["nofix"] if x in ids]
    bad += ["no fix says %r" % x for x in spec["has"]
            if not any(x in t for t in texts)]
    bad += ["a fix says %r" % x for x in spec["hasnt"]
            if any(x in t for t in texts)]
    return bad


def main():
    args = sys.argv[1:]
    # --logs PATTERN: the logs checked against the table (default every
    # fixture); eval/statements.sh points it at the held-out logs.
    pattern = "fixtures/*/*.log"
    if "--logs" in args:
        i = args.index("--logs")
        pattern = args[i + 1]
        del args[i:i + 2]
    oomdoc, kpath, dirs = args[0], args[1], args[2:]
    kb = Knowledge(kpath)
    checked = failed = 0
    for d in dirs:
        for fn in sorted(os.listdir(d)):
            if fn.endswith(".fixes"):
                path = os.path.join(d, fn)
                checked += 1
                bad = check_spec(oomdoc, path)
                if bad:
                    failed += 1
                    print("FAIL %s:\n    %s" % (path, "\n    ".join(bad)))
    nlogs = 0
    for log in sorted(glob.glob(pattern)):
        events = run(oomdoc, log)
        if events is None:
            continue
        nlogs += 1
        bad = []
        with open(log, errors="replace") as f:
            text = f.read()
        for i, ev in enumerate(events):
            bad += check_event(kb, ev, "%s event %d" % (log, i), text)
        checked += 1
        if bad:
            failed += 1
            print("FAIL %s:\n    %s" % (log, "\n    ".join(bad)))
    print("%d passed, %d failed (%d logs against the knowledge table)" % (
        checked - failed, failed, nlogs))
    return 1 if failed or nlogs == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

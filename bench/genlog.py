#!/usr/bin/env python3
"""genlog.py: write a large, realistic multi-rank training log for the benchmark.

The log is made of two kinds of material:

* noise: a pool of a few thousand distinct "chunks" (a run of loss lines, a
  tqdm progress bar redrawn with \\r, JSON metric lines, warnings that mention
  PYTORCH_CUDA_ALLOC_CONF and memory, nvidia-smi tables, non-OOM tracebacks,
  launcher chatter...), each one to a few hundred lines, formatted once with
  rank / srun / container-runtime prefixes.  The log body is a seeded random
  sequence of chunks drawn from that pool, written in multi-MiB batches, so a
  GiB takes seconds.  None of the noise is an out-of-memory failure, though
  much of it contains strings oomdoc's prefilter looks for.

* OOM events: exactly --ooms of them, each generated fresh with its own
  numbers (request, free, pid, tensor shape, step id ...) so that no two are
  echoes of each other and oomdoc must report every one as a distinct event.
  Kinds: PyTorch caching allocator messages of several eras (1.0 "cached",
  1.x "reserved in total", 2.0, 2.1 "capacty", 2.2+, 2.4 "allowed" with
  private pools), raw CUDA runtime errors (one modern `CUDA error: out of
  memory`, then `cuda runtime error (2)` from differing builds), TensorFlow
  `OOM when allocating tensor`, XLA `RESOURCE_EXHAUSTED`, kernel OOM killer
  (`oom-kill:constraint=` + `Memory cgroup out of memory: Killed process`,
  in 30% of them followed by the batch shell's `line N: PID Killed` line for
  the same pid: an echo, one event, counted in echo_reports) and
  `slurmstepd: error: Detected 1 oom_kill event in StepId=...`.  With
  --ooms >= number of kinds every kind appears at least once.

Sizes take binary suffixes: 100M = 100 MiB, 1G = 1 GiB.  The output is close
to (not exactly) the requested size.  The number of OOM events written goes
to stderr and, with -o FILE, to FILE.ooms (JSON: ooms, echo_reports, bytes,
lines, seed, kinds, and blocks: each OOM block's kind and first and last
line).  "ooms" is the number of failures written, not the number of events
oomdoc reports: oomdoc joins the same message printed by another rank with
other figures within 2000 lines into one event (a row of its per-rank
table), as one failure of one job, and in a small log with many OOMs two
blocks of one kind often fall that close.  bench/check_events.py finds
every block among oomdoc's events and rows.
"""
import argparse
import json
import os
import random
import sys
import time

KINDS = [
    # name, weight
    ("pytorch_1_0_cached", 6),
    ("pytorch_1_x_reserved", 10),
    ("pytorch_2_0_list", 8),
    ("pytorch_2_1_capacty", 10),
    ("pytorch_2_2", 20),
    ("pytorch_2_4_allowed", 6),
    ("cuda_raw", 8),
    ("tf_oom_tensor", 10),
    ("xla_resource_exhausted", 4),
    ("kernel_oom_killer", 9),
    ("slurm_oom_kill", 9),
]

GIB = 1 << 30
MIB = 1 << 20


def parse_size(s):
    s = s.strip()
    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    u = s[-1].upper() if s and s[-1].isalpha() else ""
    num = s[:-1] if u else s
    if u.endswith("B"):
        raise SystemExit("genlog: write sizes like 100M, 1G, 4G")
    if u not in mult:
        raise SystemExit("genlog: bad size %r" % s)
    return int(float(num) * mult[u])


def fmt_size(b):
    """PyTorch's format_size()."""
    if b < 1024:
        return "%d bytes" % b
    if b < MIB:
        return "%.2f KiB" % (b / 1024)
    if b < GIB:
        return "%.2f MiB" % (b / MIB)
    return "%.2f GiB" % (b / GIB)


# ---------------------------------------------------------------- prefixes

class Prefixer:
    """One rank's way of prefixing lines: [rankN]:, [defaultN]:, N: , none,
    a vLLM worker prefix, or any of these inside a container-runtime
    timestamp (CRI format)."""

    def __init__(self, rng, rank=None, errors=False):
        self.rng = rng
        self.rank = rng.randrange(16) if rank is None else rank
        # vLLM's worker prefix says ERROR: only for tracebacks
        style = rng.choices(["rank", "default", "srun", "none", "vllm"],
                            [35, 20, 20, 20, 5 if errors else 0])[0]
        r = self.rank
        self.inner = {
            "rank": "[rank%d]:" % r,
            "default": "[default%d]:" % r,
            "srun": "%d: " % r,
            "none": "",
            "vllm": "(VllmWorkerProcess pid=%d) ERROR %02d-%02d %02d:%02d:%02d "
                    "[multiproc_executor.py:470] " % (
                        rng.randrange(1000, 99999), rng.randrange(1, 13),
                        rng.randrange(1, 29), rng.randrange(24),
                        rng.randrange(60), rng.randrange(60)),
        }[style]
        self.cri = rng.random() < 0.25
        if self.cri:
            self.t = rng.randrange(1_700_000_000, 1_760_000_000) * 10**9 \
                + rng.randrange(10**9)

    def __call__(self, lines):
        p = self.inner
        if not self.cri:
            return [p + ln for ln in lines]
        out = []
        rr = self.rng.randrange
        for ln in lines:
            self.t += rr(1000, 5_000_000)
            s, ns = divmod(self.t, 10**9)
            out.append("%sZ stderr F %s%s" % (
                time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s))
                + ".%09d" % ns, p, ln))
        return out


def stamp(rng):
    return "%04d-%02d-%02d %02d:%02d:%02d" % (
        rng.choice([2023, 2024, 2025]), rng.randrange(1, 13),
        rng.randrange(1, 29), rng.randrange(24), rng.randrange(60),
        rng.randrange(60))


# ---------------------------------------------------------------- noise

def ch_loss(rng):
    step = rng.randrange(100, 200000)
    loss = rng.uniform(0.5, 4.5)
    lr = rng.choice([1e-4, 2.4e-4, 3e-4, 1.62e-4, 1.9e-5, 6e-5])
    form = rng.randrange(5)
    n = rng.randrange(20, 120)
    out = []
    ts = stamp(rng)
    for i in range(n):
        step += rng.choice([1, 10, 50])
        loss = max(0.01, loss + rng.uniform(-0.05, 0.045))
        if form == 0:
            out.append("%s | step %d | loss %.4f | lr %.2e | grad_norm %.2f | %.2f s/step"
                       % (ts, step, loss, lr, rng.uniform(0.2, 1.5),
                          rng.uniform(0.4, 1.4)))
        elif form == 1:
            out.append("{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.1e, 'epoch': %.2f}"
                       % (loss, rng.uniform(0.2, 2), lr, step / 4000))
        elif form == 2:
            out.append("[%s swin_base_patch4_window7_224](main.py 260): INFO Train: "
                       "[%d/300][%d/1251]\teta 0:%02d:%02d lr %.6f\t wd 0.0500\t"
                       "time %.4f (%.4f)\tloss %.4f (%.4f)\tgrad_norm %.4f (%.4f)\t"
                       "loss_scale 65536.0000 (65536.0000)\tmem %dMB"
                       % (ts, step // 1251 % 300, step % 1251, rng.randrange(60),
                          rng.randrange(60), lr, rng.uniform(0.3, 0.5),
                          rng.uniform(0.3, 0.5), loss, loss + 0.01,
                          rng.uniform(2, 4), rng.uniform(2, 4),
                          rng.randrange(12000, 80000)))
        elif form == 3:
            out.append("[%s,%03d] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, "
                       "skipped=0, lr=[%.6g], mom=[(0.9, 0.95)]"
                       % (ts, rng.randrange(1000), step, lr))
            out.append("[%s,%03d] [INFO] [timer.py:215:stop] epoch=0/micro_step=%d/"
                       "global_step=%d, RunningAvgSamplesPerSec=%.3f, "
                       "CurrSamplesPerSec=%.3f, MemAllocated=%.2fGB, MaxMemAllocated=%.2fGB"
                       % (ts, rng.randrange(1000), step * 4, step,
                          rng.uniform(10, 90), rng.uniform(10, 90),
                          rng.uniform(10, 70), rng.uniform(60, 79)))
        else:
            out.append("Epoch %d | iter %d/2858 | rpn_cls %.4f | rpn_box %.4f | "
                       "rcnn_cls %.4f | rcnn_box %.4f | lr %.2e | %.2f s/it"
                       % (step // 2858, step % 2858, rng.uniform(0, .2),
                          rng.uniform(0, .1), rng.uniform(.1, .4),
                          rng.uniform(.1, .3), lr, rng.uniform(.5, .7)))
    return out


def ch_json(rng):
    step = rng.randrange(100, 200000)
    n = rng.randrange(20, 100)
    out = []
    for i in range(n):
        step += 100
        out.append(
            '{"ts": "%sT%02d:%02d:%02dZ", "step": %d, "loss": %.4f, "lr": %.5f, '
            '"grad_norm": %.2f, "tokens_per_sec": %d, "mfu": %.3f, "gpu_mem_gb": %.1f, '
            '"gpu_mem_pct": %.1f, "max_reserved_gb": %.1f, "num_alloc_retries": %d, '
            '"num_ooms": 0}'
            % (stamp(rng)[:10], rng.randrange(24), rng.randrange(60),
               rng.randrange(60), step, rng.uniform(1, 3), rng.uniform(1e-4, 3e-4),
               rng.uniform(.3, .6), rng.randrange(300000, 450000),
               rng.uniform(.35, .45), rng.uniform(60, 78), rng.uniform(75, 98),
               rng.uniform(70, 79), rng.choice([0, 0, 0, 1, 2])))
    return out


BLOCKS = " ▏▎▍▌▋▊▉█"


def tqdm_bar(rng, desc, i, total, post):
    frac = i / total
    width = 10
    full = int(frac * width)
    rem = int((frac * width - full) * 8)
    bar = "█" * full + (BLOCKS[rem] if full < width else "")
    bar = bar.ljust(width)
    el = i // 2
    left = (total - i) // 2
    return "%s: %3d%%|%s| %d/%d [%02d:%02d<%02d:%02d, %5.2fit/s%s]" % (
        desc, frac * 100, bar, i, total, el // 60, el % 60, left // 60,
        left % 60, rng.uniform(1.5, 3), post)


def ch_tqdm(rng):
    desc = rng.choice(["Epoch %d" % rng.randrange(1, 20), "steps", "Training",
                       "Evaluating", "100%% of shards", "Map"])
    total = rng.choice([400, 1250, 2858, 10000, 31250])
    start = rng.randrange(total // 2)
    n = rng.randrange(30, 300)
    loss = rng.uniform(0.5, 3)
    parts = []
    for k in range(n):
        i = min(total, start + k)
        post = ", loss=%.3f" % (loss - k * 0.0003) if desc != "Map" else ""
        parts.append(tqdm_bar(rng, desc, i, total, post))
    # a tqdm bar in a captured log: one long "line" of \r-separated redraws
    return ["\r".join(parts)]


WARNINGS = [
    "/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:464: UserWarning: "
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In "
    "version 2.4 we will raise an exception if use_reentrant is not passed.",
    "[W CUDAAllocatorConfig.h:28] Warning: expandable_segments not supported on this "
    "platform (function operator())",
    "[W1105 10:00:01.123456 12345 c10/core/AllocatorConfig.cpp:28] Warning: "
    "PYTORCH_CUDA_ALLOC_CONF is deprecated, use PYTORCH_ALLOC_CONF instead (function operator())",
    "INFO: setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to reduce memory "
    "fragmentation",
    "UserWarning: To reduce peak memory, consider enabling activation checkpointing or "
    "lowering --micro-batch-size",
    "tip: if you run out of memory, reduce --micro-batch-size or enable "
    "--gradient-checkpointing (see docs/faq.md#memory)",
    "WARNING:accelerate.utils.memory:auto_find_batch_size is enabled: the batch size will "
    "be halved on every CUDA Out-of-Memory error",
    "[W501 14:22:51.330411 ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has "
    "NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the "
    "application should call destroy_process_group to ensure that any pending NCCL "
    "operations have finished in this process.",
    "/opt/conda/lib/python3.11/site-packages/torch/cuda/memory.py:330: FutureWarning: "
    "torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, "
    "which resets /all/ peak memory stats.",
    "WARNING: memory fraction set to 0.90 by PYTORCH_CUDA_ALLOC_CONF "
    "(garbage_collection_threshold:0.6,max_split_size_mb:512)",
    "INFO 05-01 12:00:03 [gpu_worker.py:227] Memory profiling takes 5.21 seconds. "
    "Total GPU memory: 79.19GiB; model weights take 14.99GiB; non_torch_memory takes "
    "0.18GiB; PyTorch activation peak memory takes 1.26GiB; the rest of the memory "
    "reserved for KV Cache is 54.13GiB.",
    "INFO 05-01 12:00:03 [kv_cache_utils.py:634] GPU KV cache size: 443,392 tokens",
    "max memory allocated: 71.23 GiB | max memory reserved: 74.80 GiB | "
    "non-PyTorch: 1.02 GiB",
    "WARNING: gradient accumulation steps increased to 8 to fit memory budget",
    "/usr/lib/python3/dist-packages/requests/__init__.py:87: RequestsDependencyWarning: "
    "urllib3 (2.0.7) or chardet (5.2.0) doesn't match a supported version!",
    "[2024-06-12 04:10:02,511][trainer][WARNING] - dataloader worker 3 is slow "
    "(12.1 s for one batch); consider more num_workers or pin_memory=False",
]


def ch_warn(rng):
    out = []
    for _ in range(rng.randrange(1, 6)):
        w = rng.choice(WARNINGS)
        out.append(w)
        if w.startswith("/") and "Warning" in w and rng.random() < .5:
            out.append("  warnings.warn(")
    return out


GPUS = [("NVIDIA A100-SXM4-80GB", 81920, 400), ("NVIDIA H100 80GB HBM3", 81559, 700),
        ("Tesla V100-SXM2-32GB", 32510, 300), ("NVIDIA A100-SXM4-40GB", 40960, 400)]


def ch_smi(rng):
    name, mem, cap = rng.choice(GPUS)
    out = [stamp(rng) + "       ",
           "+---------------------------------------------------------------------------------------+",
           "| NVIDIA-SMI 535.129.03             Driver Version: 535.129.03   CUDA Version: 12.2     |",
           "|-----------------------------------------+----------------------+----------------------+",
           "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |",
           "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |",
           "|                                         |                      |               MIG M. |",
           "|=========================================+======================+======================|"]
    for g in range(rng.choice([4, 8])):
        used = rng.randrange(mem // 2, mem)
        out.append("| %3d  %-27s On  | 00000000:%02X:00.0 Off |                    0 |"
                   % (g, name[:27], 6 + g))
        out.append("| N/A   %2dC    P0            %3dW / %3dW | %6dMiB / %6dMiB |    %3d%%      Default |"
                   % (rng.randrange(30, 80), rng.randrange(60, cap), cap, used, mem,
                      rng.randrange(101)))
        out.append("|                                         |                      |             Disabled |")
        out.append("+-----------------------------------------+----------------------+----------------------+")
    out.append("")
    out.append("+---------------------------------------------------------------------------------------+")
    out.append("| Processes:                                                                            |")
    out.append("|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |")
    out.append("|=======================================================================================|")
    for g in range(4):
        out.append("|    %d   N/A  N/A    %6d      C   /usr/bin/python3                         %6dMiB |"
                   % (g, rng.randrange(1000, 999999), rng.randrange(1000, mem)))
    out.append("+---------------------------------------------------------------------------------------+")
    return out


FRAMES = [
    ('/workspace/train.py', 'main', 'loss.backward()'),
    ('/workspace/train.py', 'train_step', 'outputs = model(**batch)'),
    ('/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py', '_call_impl',
     'return forward_call(*args, **kwargs)'),
    ('/usr/local/lib/python3.10/dist-packages/torch/_tensor.py', 'backward',
     'torch.autograd.backward('),
    ('/usr/local/lib/python3.10/dist-packages/torch/autograd/__init__.py', 'backward',
     '_engine_run_backward('),
    ('/usr/local/lib/python3.10/dist-packages/transformers/trainer.py', 'training_step',
     'self.accelerator.backward(loss, **kwargs)'),
    ('/usr/local/lib/python3.10/dist-packages/transformers/models/llama/modeling_llama.py',
     'forward', 'attn_weights = torch.matmul(query_states, key_states.transpose(2, 3))'),
    ('/workspace/model/moe.py', 'forward', 'routed = torch.index_select(tokens, 0, order)'),
    ('/usr/local/lib/python3.10/dist-packages/torch/nn/functional.py', 'linear',
     'return torch._C._nn.linear(input, weight, bias)'),
    ('/opt/conda/lib/python3.11/site-packages/deepspeed/runtime/engine.py', 'backward',
     'self.optimizer.backward(loss, retain_graph=retain_graph)'),
]


def frames(rng, n=None):
    n = n or rng.randrange(2, 7)
    out = ["Traceback (most recent call last):",
           '  File "/workspace/train.py", line %d, in <module>' % rng.randrange(100, 900),
           "    main()"]
    for _ in range(n):
        f, fn, code = rng.choice(FRAMES)
        out.append('  File "%s", line %d, in %s' % (f, rng.randrange(20, 4000), fn))
        out.append("    " + code)
    return out


NONOOM_ERRORS = [
    ["RuntimeError: CUDA error: an illegal memory access was encountered",
     "CUDA kernel errors might be asynchronously reported at some other API call, so the "
     "stacktrace below might be incorrect.",
     "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
     "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."],
    ["RuntimeError: CUDA error: device-side assert triggered",
     "CUDA kernel errors might be asynchronously reported at some other API call, so the "
     "stacktrace below might be incorrect.",
     "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
     "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."],
    ["RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 1024x10)"],
    ["RuntimeError: Expected all tensors to be on the same device, but found at least two "
     "devices, cuda:0 and cpu! (when checking argument for argument mat1 in method "
     "wrapper_CUDA_addmm)"],
    ["KeyError: 'attention_mask'"],
    ["FileNotFoundError: [Errno 2] No such file or directory: "
     "'/data/shards/train-00042-of-00128.parquet'"],
    ["ValueError: Expected input batch_size (32) to match target batch_size (16)."],
    ["RuntimeError: CUDA error: misaligned address",
     "CUDA kernel errors might be asynchronously reported at some other API call, so the "
     "stacktrace below might be incorrect."],
]


def ch_traceback(rng):
    out = frames(rng) + list(rng.choice(NONOOM_ERRORS))
    if rng.random() < 0.5:
        pid = rng.randrange(1000, 99999)
        out += [
            "E0611 02:33:16.402000 5120 torch/distributed/elastic/multiprocessing/api.py:869] "
            "failed (exitcode: 1) local_rank: %d (pid: %d) of binary: /usr/bin/python3"
            % (rng.randrange(8), pid),
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
            "============================================================",
            "train.py FAILED",
            "------------------------------------------------------------",
            "Failures:",
            "  <NO_OTHER_FAILURES>",
            "------------------------------------------------------------",
            "Root Cause (first observed failure):",
            "[0]:",
            "  time      : 2025-06-11_02:33:14",
            "  host      : gpu-node-%02d" % rng.randrange(64),
            "  rank      : 5 (local_rank: 5)",
            "  exitcode  : 1 (pid: %d)" % pid,
            "  error_file: <N/A>",
            "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
            "============================================================",
        ]
    return out


def ch_nccl(rng):
    r = rng.randrange(64)
    seq = rng.randrange(1000, 90000)
    return ["[E521 14:02:10.981228301 ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, "
            "NumelIn=12845056, NumelOut=12845056, Timeout(ms)=600000) ran for 600041 "
            "milliseconds before timing out." % (r, seq),
            "[E521 14:02:10.981228301 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) "
            "Rank %d] Exception (either an error or timeout) detected by watchdog at work: %d, "
            "last enqueued NCCL work: %d, last completed NCCL work: %d."
            % (r, seq, seq + 1, seq - 1)]


def ch_info(rng):
    ts = stamp(rng)
    pool = [
        "INFO %s train.py:88 run=llama3-8b-sft-v4 nodes=4 gpus_per_node=8 fsdp=full_shard "
        "activation_checkpointing=selective" % ts,
        "[%s] saving checkpoint to /ckpt/run-%d/step_%06d (sharded, 16 files)"
        % (ts, rng.randrange(1000), rng.randrange(1000000)),
        "[%s] eval: loss %.4f ppl %.2f acc %.4f (%d samples)"
        % (ts, rng.uniform(1, 3), rng.uniform(3, 20), rng.uniform(.3, .9),
           rng.randrange(1000, 50000)),
        "W0612 04:12:33.118000 %d torch/distributed/run.py:792] Setting OMP_NUM_THREADS "
        "environment variable for each process to be 1 in default" % rng.randrange(1000, 99999),
        "Loaded dataset: %d train images, %d val images"
        % (rng.randrange(1000, 100000), rng.randrange(1000, 10000)),
        "[%s] data: %d tokens/s, queue depth %d, prefetch %d"
        % (ts, rng.randrange(10000, 500000), rng.randrange(64), rng.randrange(8)),
        "NCCL INFO Channel %02d/32 :    0   1   2   3   4   5   6   7" % rng.randrange(32),
        "%s INFO     [train.py:190] model=neox-410m params=405.3M seq_len=2048 micro_bs=8 "
        "grad_accum=4" % ts,
        "slurmstepd: info: task %d: rusage maxrss=%dK" % (rng.randrange(64),
                                                            rng.randrange(10**6, 10**8)),
        "",
    ]
    return [rng.choice(pool) for _ in range(rng.randrange(3, 30))]


NOISE = [(ch_loss, 30), (ch_json, 12), (ch_tqdm, 12), (ch_warn, 10), (ch_smi, 4),
         (ch_traceback, 4), (ch_nccl, 3), (ch_info, 25)]


def noise_chunk(rng):
    gen = rng.choices([g for g, _ in NOISE], [w for _, w in NOISE])[0]
    lines = gen(rng)
    if gen in (ch_loss, ch_json, ch_tqdm) and rng.random() < 0.5:
        # several ranks interleaved line by line
        ps = [Prefixer(rng, r) for r in rng.sample(range(16), rng.randrange(2, 5))]
        lines = [ps[i % len(ps)]([ln])[0] for i, ln in enumerate(lines)]
    else:
        lines = Prefixer(rng, errors=gen is ch_traceback)(lines)
    return ("\n".join(lines) + "\n").encode()


# ---------------------------------------------------------------- OOMs

GPU_TOTALS = [79.25, 79.15, 79.19, 39.38, 39.39, 23.69, 23.65, 15.78, 31.74, 47.54,
              93.10, 139.81, 10.75, 11.93]


class OomMaker:
    def __init__(self, rng):
        self.rng = rng
        self.seen = set()
        self.pids = set()
        self.raw_modern_done = False
        self.echoes = 0         # extra reports of an event already written

    def unique(self, key):
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def mem(self):
        rng = self.rng
        total = int(rng.choice(GPU_TOTALS) * GIB) + rng.randrange(-8 * MIB, 8 * MIB)
        free = rng.choice([0, rng.randrange(1, 1024),
                           rng.randrange(MIB, 512 * MIB),
                           rng.randrange(512 * MIB, 3 * GIB)])
        free = min(free, total // 10)
        other = rng.choice([0, 0, 0, rng.randrange(100 * MIB, 2 * GIB)])
        inuse = total - free - other
        ctx = rng.randrange(300 * MIB, 900 * MIB)
        reserved = inuse - ctx
        allocated = int(reserved * rng.uniform(0.75, 0.99))
        req = rng.choice([rng.randrange(2 * MIB, 512 * MIB),
                          rng.randrange(512 * MIB, 24 * GIB)])
        req = req // 512 * 512
        return dict(total=total, free=free, other=other, inuse=inuse,
                    reserved=reserved, allocated=allocated, req=req,
                    gpu=rng.randrange(8))

    def pytorch(self, era):
        rng = self.rng
        while True:
            m = self.mem()
            F = {k: fmt_size(v) for k, v in m.items() if k != "gpu"}
            if era == "pytorch_1_0_cached":
                exc = "RuntimeError"
                msg = ("CUDA out of memory. Tried to allocate %s (GPU %d; %s total capacity; "
                       "%s already allocated; %s free; %s cached)"
                       % (F["req"], m["gpu"], F["total"], F["allocated"], F["free"],
                          F["reserved"]))
            elif era in ("pytorch_1_x_reserved", "pytorch_2_0_list"):
                exc = "RuntimeError" if era == "pytorch_1_x_reserved" else \
                    "torch.cuda.OutOfMemoryError"
                msg = ("CUDA out of memory. Tried to allocate %s (GPU %d; %s total capacity; "
                       "%s already allocated; %s free; %s reserved in total by PyTorch) "
                       "If reserved memory is >> allocated memory try setting "
                       "max_split_size_mb to avoid fragmentation.  See documentation for "
                       "Memory Management and PYTORCH_CUDA_ALLOC_CONF"
                       % (F["req"], m["gpu"], F["total"], F["allocated"], F["free"],
                          F["reserved"]))
            elif era == "pytorch_2_1_capacty":
                exc = "torch.cuda.OutOfMemoryError"
                procs = ""
                if m["other"]:
                    procs = "Process %d has %s memory in use. " % (
                        rng.randrange(1000, 4000000), F["other"])
                msg = ("CUDA out of memory. Tried to allocate %s. GPU %d has a total capacty "
                       "of %s of which %s is free. %sIncluding non-PyTorch memory, this "
                       "process has %s memory in use. Of the allocated memory %s is "
                       "allocated by PyTorch, and %s is reserved by PyTorch but unallocated. "
                       "If reserved but unallocated memory is large try setting "
                       "max_split_size_mb to avoid fragmentation.  See documentation for "
                       "Memory Management and PYTORCH_CUDA_ALLOC_CONF"
                       % (F["req"], m["gpu"], F["total"], F["free"], procs, F["inuse"],
                          F["allocated"], fmt_size(m["reserved"] - m["allocated"])))
            elif era == "pytorch_2_2":
                exc = "torch.OutOfMemoryError"
                procs = ""
                if m["other"]:
                    procs = "Process %d has %s memory in use. " % (
                        rng.randrange(1000, 4000000), F["other"])
                msg = ("CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity "
                       "of %s of which %s is free. %sIncluding non-PyTorch memory, this "
                       "process has %s memory in use. Of the allocated memory %s is "
                       "allocated by PyTorch, and %s is reserved by PyTorch but unallocated. "
                       "If reserved but unallocated memory is large try setting "
                       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
                       "fragmentation.  See documentation for Memory Management  "
                       "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
                       % (F["req"], m["gpu"], F["total"], F["free"], procs, F["inuse"],
                          F["allocated"], fmt_size(m["reserved"] - m["allocated"])))
            else:  # pytorch_2_4_allowed
                exc = "torch.OutOfMemoryError"
                allowed = int(m["total"] * rng.uniform(0.85, 0.95))
                pools = rng.randrange(100 * MIB, 3 * GIB)
                msg = ("CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity "
                       "of %s of which %s is free. Including non-PyTorch memory, this "
                       "process has %s memory in use. %s allowed; Of the allocated memory "
                       "%s is allocated by PyTorch, with %s allocated in private pools "
                       "(e.g., CUDA Graphs), and %s is reserved by PyTorch but unallocated. "
                       "If reserved but unallocated memory is large try setting "
                       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid "
                       "fragmentation.  See documentation for Memory Management  "
                       "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
                       % (F["req"], m["gpu"], F["total"], F["free"], F["inuse"],
                          fmt_size(allowed), F["allocated"], fmt_size(pools),
                          fmt_size(m["reserved"] - m["allocated"])))
            if self.unique(msg):
                break
        lines = frames(rng) + ["%s: %s" % (exc, msg)]
        return lines, True

    def cuda_raw(self):
        rng = self.rng
        if not self.raw_modern_done:
            self.raw_modern_done = True
            return frames(rng) + [
                "torch.AcceleratorError: CUDA error: out of memory",
                "Search for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/"
                "cuda-runtime-api/group__CUDART__TYPES.html for more information.",
                "CUDA kernel errors might be asynchronously reported at some other API call, "
                "so the stacktrace below might be incorrect.",
                "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
            ], True
        while True:
            build = "pytorch_%d" % rng.randrange(1_500_000_000_000, 1_700_000_000_000)
            where = rng.choice(["aten/src/THC/generic/THCStorage.cu:58",
                                "aten/src/THC/THCCachingHostAllocator.cpp:278",
                                "aten/src/THC/generic/THCTensorMath.cu:35",
                                "aten/src/THC/THCGeneral.cpp:383"])
            msg = "cuda runtime error (2) : out of memory at /opt/conda/conda-bld/%s/work/%s" \
                % (build, where)
            if self.unique(msg):
                break
        return frames(rng) + ["RuntimeError: " + msg], True

    def tf(self):
        rng = self.rng
        while True:
            shape = [rng.choice([8, 16, 32, 64, 128, 256]), rng.randrange(1, 4097),
                     rng.randrange(1, 8193)]
            if rng.random() < .5:
                shape.append(rng.choice([3, 64, 128, 768]))
            s = ",".join(map(str, shape))
            g = rng.randrange(8)
            if self.unique(("tf", s, g)):
                break
        if rng.random() < .5:
            return [
                "Traceback (most recent call last):",
                '  File "train_tf.py", line %d, in <module>' % rng.randrange(50, 500),
                "    model.fit(ds, epochs=10, callbacks=cbs)",
                "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when "
                "allocating tensor with shape[%s] and type float on /job:localhost/replica:0/"
                "task:0/device:GPU:%d by allocator GPU_%d_bfc" % (s, g, g),
                "\t [[{{node model/dense_%d/MatMul}}]]" % rng.randrange(10),
                "Hint: If you want to see a list of allocated tensors when OOM happens, add "
                "report_tensor_allocations_upon_oom to RunOptions for current allocation info.",
            ], True
        return [
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: "
            "{{function_node __wrapped__MatMul_device_/job:localhost/replica:0/task:0/"
            "device:GPU:%d}} OOM when allocating tensor with shape[%s] and type float on "
            "/job:localhost/replica:0/task:0/device:GPU:%d by allocator GPU_%d_bfc [Op:MatMul]"
            % (g, s, g, g)], True

    def xla(self):
        rng = self.rng
        while True:
            n = rng.randrange(MIB, 64 * GIB)
            if self.unique(("xla", n)):
                break
        return frames(rng, 2) + [
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while "
            "trying to allocate %d bytes." % n], True

    def kernel(self):
        rng = self.rng
        while True:
            pid = rng.randrange(1000, 4194304)
            if pid not in self.pids:
                self.pids.add(pid)
                break
        job = rng.randrange(10000, 9999999)
        when = "[%s %s %2d %02d:%02d:%02d %d]" % (
            rng.choice(["Mon", "Tue", "Wed", "Thu", "Fri"]),
            rng.choice(["Jan", "Feb", "May", "Jun", "Oct"]), rng.randrange(1, 29),
            rng.randrange(24), rng.randrange(60), rng.randrange(60),
            rng.choice([2023, 2024, 2025]))
        comm = rng.choice(["python3", "python", "pt_main_thread", "torchrun"])
        vm = rng.randrange(10**7, 10**9)
        anon = rng.randrange(10**6, vm)

        def commas(x):
            return "{:,}".format(x) if rng.random() < .3 else str(x)
        lines = [
            "%s %s invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), "
            "order=0, oom_score_adj=0" % (when, comm),
            "%s oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,"
            "mems_allowed=0-1,oom_memcg=/slurm/uid_1000/job_%d,task_memcg=/slurm/uid_1000/"
            "job_%d/step_0,task=%s,pid=%d,uid=1000" % (when, job, job, comm, pid),
            "%s Memory cgroup out of memory: Killed process %d (%s) total-vm:%skB, "
            "anon-rss:%skB, file-rss:%skB, shmem-rss:0kB, UID:1000 pgtables:%dkB "
            "oom_score_adj:0" % (when, pid, comm, commas(vm), commas(anon),
                                 commas(rng.randrange(10**4, 10**6)),
                                 rng.randrange(1000, 100000)),
        ]
        if rng.random() < .3:
            # the batch script's shell reports the same kill: same pid, one event
            self.echoes += 1
            lines.append("/var/spool/slurmd/job%d/slurm_script: line %d: %7d Killed"
                         "                  python train.py --config cfg.yaml"
                         % (job, rng.randrange(5, 40), pid))
        return lines, False

    def slurm(self):
        rng = self.rng
        while True:
            step = "%d.%d" % (rng.randrange(10000, 99999999), rng.randrange(4))
            if self.unique(("slurm", step)):
                break
        return ["slurmstepd: error: Detected 1 oom_kill event in StepId=%s. Some of the "
                "step tasks have been OOM Killed." % step], False

    def make(self, kind):
        if kind.startswith("pytorch"):
            return self.pytorch(kind)
        return {"cuda_raw": self.cuda_raw, "tf_oom_tensor": self.tf,
                "xla_resource_exhausted": self.xla, "kernel_oom_killer": self.kernel,
                "slurm_oom_kill": self.slurm}[kind]()

    def block(self, kind):
        rng = self.rng
        lines, prefixable = self.make(kind)
        if prefixable:
            p = Prefixer(rng, errors=True)
            if rng.random() < 0.1:
                # the bar of the step that failed, never ended by a newline:
                # the traceback starts after its last \r
                bar = tqdm_bar(rng, "Epoch %d" % rng.randrange(1, 9), 480, 1250,
                               ", loss=2.104")
                lines[0] = bar + "\r" + lines[0]
            lines = p(lines)
        return ("\n".join(lines) + "\n").encode()


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="1G", help="approximate output size (100M, 1G, 4G)")
    ap.add_argument("--ooms", type=int, default=53, help="number of distinct OOM events")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", help="output file (default: standard output)")
    ap.add_argument("--kinds", help="comma-separated OOM kinds to draw from (default: all: %s)"
                    % ",".join(k for k, _ in KINDS))
    ap.add_argument("--pool", type=int, default=3000,
                    help="number of distinct noise chunks to draw from")
    a = ap.parse_args()
    size = parse_size(a.size)
    if a.ooms < 0:
        raise SystemExit("genlog: --ooms must be >= 0")
    rng = random.Random(a.seed)
    t0 = time.time()

    # the noise pool, smaller for small outputs so that it is not all pool
    npool = max(20, min(a.pool, size // (8 * 4096)))
    pool = [noise_chunk(rng) for _ in range(npool)]
    pool_nl = [c.count(b"\n") for c in pool]

    # the OOM schedule: kinds, every kind once when there is room, then by weight
    chosen = KINDS
    if a.kinds:
        want = a.kinds.split(",")
        bad = [k for k in want if k not in dict(KINDS)]
        if bad:
            raise SystemExit("genlog: unknown kind(s) %s" % ",".join(bad))
        chosen = [(k, w) for k, w in KINDS if k in want]
    names = [k for k, _ in chosen]
    weights = [w for _, w in chosen]
    kinds = []
    if a.ooms >= len(names):
        kinds = names[:]
    kinds += rng.choices(names, weights, k=a.ooms - len(kinds))
    rng.shuffle(kinds)
    maker = OomMaker(rng)
    est = 1300  # about the mean size of an OOM block in bytes
    noise_total = max(size - a.ooms * est, size // 10)
    offsets = sorted(rng.randrange(noise_total) for _ in range(a.ooms))
    # At least a few kB of noise between two OOMs: oomdoc joins reports
    # printed within 20 lines of each other when they may be one failure
    # (a kernel kill after a Slurm line), and these are distinct ones.
    # Blocks go in between noise chunks, and one chunk may be longer than
    # the gap, so the gap is also kept where they are placed: GAP bytes
    # and GAP_LINES lines (oomdoc's window is 20 lines, and one line of
    # tqdm bars redrawn with \r can be longer than GAP bytes).
    GAP, GAP_LINES = 4096, 24
    for j in range(1, len(offsets)):
        if offsets[j] < offsets[j - 1] + GAP:
            offsets[j] = offsets[j - 1] + GAP

    out = open(a.output, "wb") if a.output else sys.stdout.buffer
    written = lines = noise = 0
    # The noise bytes and the lines written up to the end of the last block.
    last, last_lines = -GAP, -GAP_LINES
    j = 0
    by_kind = {}
    # Where each OOM block went: its kind and its first and last line
    # (1-based, as oomdoc numbers lines), so that a check can find every
    # block among oomdoc's events, as an event of its own or as another
    # rank's row of an event (oomdoc joins ranks that print the same
    # message with other figures within 2000 lines: one failure of a job).
    blocks = []

    def place(k):
        nonlocal lines
        b = maker.block(k)
        by_kind[k] = by_kind.get(k, 0) + 1
        n = b.count(b"\n")
        blocks.append({"kind": k, "first_line": lines + 1, "last_line": lines + n})
        lines += n
        return b

    batch = []
    blen = 0
    FLUSH = 8 << 20
    idx = list(range(npool))
    while noise < noise_total:
        picks = rng.choices(idx, k=1024)
        for i in picks:
            c = pool[i]
            if noise + len(c) > noise_total:
                # trim the last chunk at a line end
                cut = c.rfind(b"\n", 0, max(1, noise_total - noise))
                c = c[:cut + 1] if cut >= 0 else b""
                if not c:
                    noise = noise_total
                    break
            batch.append(c)
            blen += len(c)
            lines += c.count(b"\n") if len(c) != len(pool[i]) else pool_nl[i]
            noise += len(c)
            # Every block whose offset this chunk passed, one per chunk
            # boundary and GAP bytes of noise after the last one: two
            # offsets within one long chunk once put two blocks next to
            # each other (a kernel kill and another job's Slurm line,
            # which oomdoc rightly read as one failure).
            if j < a.ooms and offsets[j] < noise and noise - last >= GAP \
                    and lines - last_lines >= GAP_LINES:
                b = place(kinds[j])
                batch.append(b)
                blen += len(b)
                j += 1
                last, last_lines = noise, lines
            if blen >= FLUSH:
                out.write(b"".join(batch))
                written += blen
                batch, blen = [], 0
            if noise >= noise_total:
                break
    while j < a.ooms:  # only when the noise ran out early
        while noise - last < GAP or lines - last_lines < GAP_LINES:
            c = pool[rng.randrange(npool)]
            batch.append(c)
            blen += len(c)
            lines += c.count(b"\n")
            noise += len(c)
        b = place(kinds[j])
        batch.append(b)
        blen += len(b)
        j += 1
        last, last_lines = noise, lines
    out.write(b"".join(batch))
    written += blen
    out.flush()
    if a.output:
        out.close()
    dt = time.time() - t0
    info = {"ooms": j, "echo_reports": maker.echoes, "bytes": written, "lines": lines, "seed": a.seed,
            "size_requested": size, "kinds": dict(sorted(by_kind.items())),
            "seconds": round(dt, 2), "blocks": blocks}
    if a.output:
        with open(a.output + ".ooms", "w") as f:
            json.dump(info, f, indent=1)
            f.write("\n")
    sys.stderr.write("genlog: %d distinct OOM events, %d bytes, %d lines in %.1f s "
                     "(%.0f MB/s)%s\n" % (j, written, lines, dt, written / 1e6 / max(dt, 1e-9),
                                          " -> %s.ooms" % a.output if a.output else ""))


if __name__ == "__main__":
    main()

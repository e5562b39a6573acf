/*
 * context.c: the facts around an event that the rules need.
 *
 * Two sources.  Settings lines anywhere before the event (a config dump, an
 * "export PYTORCH_CUDA_ALLOC_CONF=...", a metric line with the memory in
 * use) are found by the scanner's prefilter with the anchors below, and
 * each is read when it is seen into a running od_logctx; the event gets a
 * copy of it.  The text just before the event (the history the scanner
 * keeps, up to 32 KiB) gives the traceback's frames, the phase they show
 * and the last step of a progress bar or a trainer's log.  And the
 * kernel's memcg lines give a kill that follows them its cgroup's usage
 * and limit (cx_attach).
 */
#define _GNU_SOURCE             /* memmem */
#include <stdlib.h>
#include <string.h>

#include "caseless.h"
#include "context.h"
#include "regex.h"

enum {
	CX_ALLOC, CX_XLA, CX_TF, CX_BATCH, CX_ACCUM, CX_SEQ, CX_PREC, CX_CKPT,
	CX_MEM, CX_XID, CX_MEMCG, CX_CGROUP, CX_GPU, CX_VISIBLE,
	/* The memory readings of trainers and tools (see cx_patterns). */
	CX_MEM_DS, CX_MEM_MEGATRON, CX_MEM_TITAN, CX_MEM_MM, CX_MEM_HF,
	CX_MEM_ACCEL, CX_SMI_HEAD, CX_SMI_ROW, CX_DMON, CX_SUMMARY, CX_VLLM,
	CX_LOADER, CX_BFC, CX_TF_RELEASE, CX_SERVING, CX_VLLM_RELEASE, CX_SHM,
	CX_OOMKILLED, CX_TGI, CX_JAX_RELEASE,
	/* What follows a failure in a distributed run. */
	CX_AFTER,
	/* Patterns read from the text before an event, or inside a line
	 * that another pattern matched. */
	CX_FRAME, CX_STEP, CX_RSTEP, CX_RRANK, CX_ARANK,
	CX_COUNT
};

/* The scanner keeps a slot for each kind of settings line. */
_Static_assert(CX_FRAME <= CX_WHAT_MAX, "CX_WHAT_MAX is too small");

#define KV "[\"']?\\]?\\s*[=:]\\s*[\"']?"

static const char *const cx_patterns[CX_COUNT] = {
	[CX_ALLOC] = "(?<!setting )PYTORCH_(?:CUDA_|HIP_)?ALLOC_CONF" KV
	    "([A-Za-z_]+:[A-Za-z0-9_.]+(?:,[A-Za-z_]+:[A-Za-z0-9_.]+)*)"
	    "(?! to avoid)",
	[CX_XLA] = "(XLA_PYTHON_CLIENT_[A-Z_]+)" KV "([\\w.]+)",
	/* A setting, not the BFC message's advice to set one ("the
	 * environment variable 'TF_GPU_ALLOCATOR=cuda_malloc_async' will
	 * improve the situation", tensorflow/core/common_runtime/
	 * bfc_allocator.cc); group 3: gpu_process_state.cc's "Using CUDA
	 * malloc Async allocator for GPU", which TensorFlow logs when that
	 * allocator is set.  Memory growth is set by the variable, by TF1's
	 * session option (config.gpu_options.allow_growth = True,
	 * tf.GPUOptions(allow_growth=True): tensorflow/core/protobuf/
	 * config.proto, GPUOptions.allow_growth) or by TF2's call, group 4:
	 * tf.config.experimental.set_memory_growth(gpu, True)
	 * (tensorflow/python/framework/config.py). */
	[CX_TF] = "(?<!variable ')(TF_GPU_ALLOCATOR|TF_FORCE_GPU_ALLOW_GROWTH|"
	    "allow_growth)" KV "([\\w.]+)|(Using CUDA malloc Async allocator)|"
	    "set_memory_growth\\(\\s*[\\w.\\[\\]]{1,64}\\s*,\\s*"
	    "(True|False)\\s*\\)",
	/*
	 * What bounds the TensorFlow release (the groups, in order): a
	 * version line ("TensorFlow version: 2.4.1", "tensorflow==2.4.1",
	 * "tensorflow-gpu==1.15.0", pip list's "tensorflow-gpu      1.3.0", the
	 * image tensorflow/tensorflow:2.4.1-gpu);
	 * NVIDIA's TF1 containers (nvcr.io/nvidia/tensorflow:21.12-tf1-py3:
	 * 1.15); the tensorflow_core package, which only 1.15 to 2.1 had
	 * (tensorflow/tools/pip_package/build_pip_package.sh, v1.15.0 to
	 * v2.1.0); tf.Session, which TensorFlow 2 removed (it has
	 * tf.compat.v1.Session); the CUDA release of the runtime, cuBLAS or
	 * CUPTI libraries TensorFlow loads (dso_loader's "successfully opened
	 * CUDA library libcublas.so.9.0", "Successfully opened dynamic library
	 * libcudart.so.10.1", Windows' cudart64_101.dll), CUDA 10 and before
	 * meaning TensorFlow 2.3 or before (2.4 was the first built with CUDA
	 * 11.0: tensorflow.org/install/source, tested build configurations);
	 * and the paths of code that came after 2.5 (the TSL and XLA copies
	 * of 2.11 and later: tensorflow/tsl, tensorflow/compiler/xla/
	 * stream_executor, external/local_tsl, external/local_xla) and the
	 * cudaMallocAsync allocator's own lines (2.5 and later).
	 */
	[CX_TF_RELEASE] = "(?:\\b(?:TensorFlow|tensorflow)(?:-gpu)? version:? ?"
	    "|\\btensorflow(?:-gpu)?==|\\btensorflow(?:-gpu)? {2,}|"
	    "tensorflow/tensorflow:)(\\d)\\.(\\d{1,2})"
	    "(?![\\d])|(nvcr\\.io/nvidia/tensorflow:\\d{2}\\.\\d{2}-tf1-)|"
	    "(tensorflow_core[/\\\\])|(?<![\\w.])(tf\\.Session\\()|"
	    "(?:CUDA|dynamic) library (?:lib(?:cudart|cublas|cupti)\\.so\\.|"
	    "cudart64_)(\\d{1,3})|(tensorflow/tsl/|tensorflow/compiler/xla/"
	    "stream_executor/|external/local_tsl/|external/local_xla/|"
	    "gpu_cudamallocasync_allocator|variable 'TF_GPU_ALLOCATOR="
	    "cuda_malloc_async')",
	/* An inference server: vLLM's package (vllm/ in a path or a
	 * module), its workers' prefixes ("(VllmWorker rank=3 pid=1090)",
	 * "(EngineCore_DP0 pid=...)", vllm/v1/executor/multiproc_executor.py,
	 * vllm/v1/engine/core.py), or SGLang's (python/sglang/srt); group 1:
	 * Text Generation Inference's, the targets of its launcher's and
	 * router's tracing lines ("INFO text_generation_launcher: Args {",
	 * "text_generation_router::infer:"), its server's package
	 * (text_generation_server/) and programs (text-generation-launcher,
	 * text-generation-server) and its image
	 * (ghcr.io/huggingface/text-generation-inference). */
	[CX_SERVING] = "[/\\\\]vllm[/\\\\]|\\bvllm\\.(?:engine|entrypoints|"
	    "worker|v1|executor)\\b|\\((?:VllmWorker|EngineCore)|"
	    "[/\\\\]sglang[/\\\\]|\\bsglang\\.srt\\b|"
	    "(\\btext_generation_(?:launcher|router|server|client)\\b|"
	    "\\btext-generation-(?:launcher|server|inference)\\b)",
	/*
	 * Text Generation Inference's release and quantization: its image's
	 * tag (ghcr.io/huggingface/text-generation-inference:1.4), the
	 * launcher's --version ("text-generation-launcher 1.4.5"), groups 1
	 * and 2 or 3 and 4; the launcher's arguments, which it logs at start
	 * (launcher/src/main.rs: tracing::info!("{:?}", args), "Args {
	 * ..., quantize: None, ...}" or "quantize: Some(Bitsandbytes)"),
	 * group 5, and its --quantize flag, group 6.
	 */
	[CX_TGI] = "text-generation-inference:(\\d{1,2})\\.(\\d{1,2})(?!\\d)|"
	    "text-generation-launcher (\\d{1,2})\\.(\\d{1,2})\\.\\d|"
	    "\\bquantize: (None|Some)\\b|--quantize[ =]([a-z]\\w*)",
	/*
	 * The vLLM release: the API server's start line
	 * (vllm/entrypoints/openai/api_server.py, "vLLM API server version
	 * %s"), the engine's ("Initializing an LLM engine (v%s) with
	 * config", vllm/engine/llm_engine.py; "a V0 LLM engine", "a V1 LLM
	 * engine", vllm/v1/engine/core.py), collect_env's "vLLM Version:"
	 * and pip's "vllm==".
	 */
	[CX_VLLM_RELEASE] = "(?:vLLM API server version |LLM engine \\(v|"
	    "vLLM Version: |\\bvllm==)(\\d{1,2})\\.(\\d{1,2})(?!\\d)",
	/*
	 * The jaxlib release (the groups, in order): pip's "jaxlib==0.4.23"
	 * (its "+cuda12.cudnn89" local part after it) and pip list's
	 * "jaxlib     0.4.23", jax.print_environment_info()'s "jaxlib: 0.4.23"
	 * (jax/_src/environment_info.py), a wheel's or a dist-info folder's
	 * name (jaxlib-0.4.23+cuda12.cudnn89-cp311-...whl, site-packages/
	 * jaxlib-0.4.23.dist-info), groups 1 to 3; and the same forms of the
	 * jax package, groups 4 to 6, with a script's print of
	 * jax.__version__ after the words "jax version" ("JAX version:
	 * 0.4.23").  jax refuses a jaxlib newer than itself (jax/_src/lib/
	 * __init__.py check_jaxlib_version: "jaxlib version ... is newer than
	 * and incompatible with jax version"), so the jax release bounds
	 * jaxlib's from above only.
	 */
	[CX_JAX_RELEASE] = "(?<![\\w.-])jaxlib(?:==|:? {1,40}|-)(\\d)\\."
	    "(\\d{1,2})\\.(\\d{1,3})(?!\\d)|(?:(?<![\\w.-])jax(?:==|:? {1,40}|-)|"
	    "\\b[Jj][Aa][Xx] version:? v?)(\\d)\\.(\\d{1,2})\\.(\\d{1,3})"
	    "(?!\\d)",
	/* The shared memory a container is given: docker run's --ipc=host
	 * (the host's /dev/shm) and --shm-size, Compose's shm_size (Docker's
	 * run reference: a container's /dev/shm is 64 MiB unless set). */
	[CX_SHM] = "--(ipc)[= ](host)\\b|--(shm-size)[= ]([0-9]+[kmgKMG]?[bB]?)"
	    "\\b|\\b(shm_size)\\s*:\\s*[\"']?([0-9]+[kmgKMG]?[bB]?)\\b",
	/*
	 * Docker's own record of an out-of-memory kill: the State of docker
	 * inspect, "OOMKilled": false beside "ExitCode": 137 (the Engine
	 * API's ContainerState, docs.docker.com/reference/api/engine/:
	 * "OOMKilled: Whether a process within this container has been
	 * killed because it ran out of memory since the container was last
	 * started"; moby daemon/inspect.go), as JSON, as Go prints the
	 * struct (OOMKilled:false) or as YAML and Python dicts show it.
	 */
	[CX_OOMKILLED] = "\\bOOMKilled[\"']?\\s{0,8}:\\s{0,8}[\"']?([Ff]alse|"
	    "[Tt]rue)\\b",
	[CX_BATCH] = "(?i)(?<![a-z])(?<!eval_)(?<!per_device_eval_)"
	    "(?:per_device_train_batch_size|train_micro_batch_size_per_gpu|"
	    "micro_batch_size|train_batch_size|batch[_ -]size)" KV "(\\d{1,9})",
	[CX_ACCUM] = "gradient_accumulation_steps" KV "(\\d{1,9})",
	[CX_SEQ] = "(?<![a-z_])(?:max_seq_length|max_seq_len|seq_length|seq_len|"
	    "sequence_length|max_length|block_size|max_model_len)" KV
	    "(\\d{1,9})",
	[CX_PREC] = "(?<![A-Za-z])(bf16|fp16)" KV "(?:True|true|1)\\b|"
	    "mixed_precision" KV "(bf16|fp16|no)|torch_dtype" KV
	    "(?:torch\\.)?(bfloat16|float16|float32)|precision" KV
	    "(bf16|16|32)(?:-mixed|-true)?\\b",
	[CX_CKPT] = "(?:gradient|activation)_checkpointing" KV
	    "(True|true|1|False|false|0)\\b",
	/*
	 * A figure under its name, as users print them and as trainers log
	 * them: "torch.cuda.memory_allocated 40.00 GiB", "max_memory_reserved:
	 * 30.2GB", "max_memory_allocated(GB): 72.5" (a unit in the key), the
	 * keys of torch.cuda.memory_stats() that Lightning's DeviceStatsMonitor
	 * logs ("allocated_bytes.all.current": bytes;
	 * lightning/pytorch/callbacks/device_stats_monitor.py, through
	 * CUDAAccelerator.get_device_stats), detectron2's "max_mem: 4250M"
	 * (detectron2/utils/events.py, CommonMetricPrinter.write:
	 * max_memory_allocated / 1024 / 1024 as "{:.0f}M"), and the columns
	 * of other trainers (gpu_mem, mem_gb).  A number with no unit is bytes.
	 */
	[CX_MEM] = "(?<![A-Za-z])(max_memory_allocated|memory_allocated|"
	    "max_memory_reserved|memory_reserved|gpu_mem_gb|gpu_mem|mem_gb|"
	    "max_mem|(?:allocated|reserved)_bytes\\.all\\.(?:current|peak))"
	    "(?:\\(\\))?(?:\\s*\\((GiB|GB|MiB|MB)\\))?[\"']?\\]?\\s*[=:]?\\s*[\"']?"
	    "(\\d{1,12}(?:\\.\\d{1,6})?)\\s*(GiB|GB|MiB|MB|G|M|B)?(?![A-Za-z])",
	[CX_XID] = "NVRM: Xid \\([^)\\n]*\\): (\\d{1,4})|(uncorrectable ECC error|"
	    "Uncorrectable ECC error|ECC page retirement)",
	[CX_MEMCG] = "memory: usage (\\d{1,15})kB, limit (\\d{1,15})kB",
	/*
	 * The memory cgroups the kernel names for a kill.  Linux 4.19 and
	 * later (mm/oom_kill.c, dump_oom_summary; mm/memcontrol.c,
	 * mem_cgroup_print_oom_context): "oom-kill:constraint=C,nodemask=...
	 * ,oom_memcg=PATH,task_memcg=PATH,task=COMM,pid=N,uid=U" just before
	 * "Killed process N"; before 4.19 (mm/memcontrol.c,
	 * mem_cgroup_print_oom_info): "Task in PATH killed as a result of
	 * limit of PATH" before the memcg's usage lines and its task table.
	 * Group 1 is the pid, group 2 the old form's task cgroup; the new
	 * form's paths are read by cx_cgroup_line.  The repeats are bounded,
	 * so that a long line costs a bounded amount at each place the
	 * literal occurs.
	 */
	[CX_CGROUP] = "oom-kill:constraint=\\w{1,32},[^\\n]{0,4096},pid=(\\d{1,10}),uid=|"
	    "Task in (/\\S{0,1024}) killed as a result of limit of ",
	/* DeepSpeed's see_memory_usage (deepspeed/runtime/utils.py): "MA
	 * 36.72 GB  Max_MA 38.1 GB  CA 39.44 GB  Max_CA 39 GB", where GB is
	 * a division by 1024 ** 3; MA is memory_allocated(). */
	[CX_MEM_DS] = "\\bMA (\\d{1,9}(?:\\.\\d{1,6})?) (GB|MB|KB|B)\\s+Max_MA ",
	/* Megatron-LM's report_memory (megatron/training/utils.py): "[Rank
	 * 0] (after 10 iterations) memory (MB) | allocated: 24761.03 | max
	 * allocated: ...", MB being 1024 * 1024 bytes. */
	[CX_MEM_MEGATRON] = "(?:\\[Rank (\\d{1,6})\\] )?\\(after (\\d{1,9}) "
	    "iterations\\) memory \\(MB\\) \\| allocated: (\\d{1,9}(?:\\.\\d{1,12})?)",
	/* torchtitan's step line (torchtitan/components/metrics.py,
	 * MetricsProcessor.log): "step: 10  loss: 7.1  memory: 31.18GiB
	 * (39.41%)", the peak reserved since the last log. */
	[CX_MEM_TITAN] = "memory:\\s*(\\d{1,6}(?:\\.\\d{1,6})?)GiB\\("
	    "(\\d{1,3}(?:\\.\\d{1,4})?)%\\)",
	/* mmengine's LogProcessor.get_log_after_iter
	 * (mmengine/runner/log_processor.py): "Epoch(train) [1][ 50/1000]
	 * ...  memory: 4250  " after the times, get_max_cuda_memory()'s
	 * max_memory_allocated in MiB, whose peak it then resets. */
	[CX_MEM_MM] = "(?:Epoch|Iter)\\((?:train|val|test)\\).{0,400}?\\smemory: "
	    "(\\d{1,9})(?=\\s\\s|\\s*$)",
	/* Hugging Face's TrainerMemoryTracker metrics as log_metrics prints
	 * them (transformers/trainer_pt_utils.py, metrics_format: v >> 20
	 * as "MB"): "train_mem_gpu_peaked_delta = 1234MB". */
	[CX_MEM_HF] = "\\b[a-z]+_mem_gpu_(alloc|peaked)_delta\\s*=\\s*(\\d{1,9})MB",
	/* accelerate's peak-memory examples (examples/by_feature/
	 * fsdp_with_peak_mem_tracking.py, TorchTracemalloc: b2mb of
	 * max_memory_allocated): "GPU Total Peak Memory consumed during the
	 * train (max): 4250". */
	[CX_MEM_ACCEL] = "GPU Total Peak Memory consumed during the train "
	    "\\(max\\): (\\d{1,9})",
	/* nvidia-smi --query-gpu=...,memory.used --format=csv: the header
	 * names the columns, the rows give "40536 MiB" in the same place
	 * (nvidia-smi(1), --help-query-gpu). */
	[CX_SMI_HEAD] = "memory\\.used \\[MiB\\]",
	[CX_SMI_ROW] = "(\\d{1,9}) MiB, ",
	/*
	 * nvidia-smi dmon's header (nvidia-smi(1), "Device Monitoring"): "#
	 * gpu   pwr gtemp ... fb  bar1" and then a line of units, with "-o
	 * DT" "#Date       Time        gpu ..."; "-s m" adds the columns fb,
	 * bar1 (and on recent drivers ccpm), in MB.  The rows that follow
	 * have no fixed string: the scanner hands each line after a header
	 * with an fb column to cx_dmon_row.  Public output of every form:
	 * KDE ksystemstats' plugins/gpu/NvidiaSmiProcess.cpp
	 * (readStatisticsData, which reads the header the same way), and
	 * the "-s mutc -o TD" output that public notes on nvidia-smi quote.
	 */
	[CX_DMON] = "#\\s*(?:Date\\s+)?(?:Time\\s+)?gpu\\s+[a-z]",
	/* torch.cuda.memory_summary() (torch/cuda/memory.py): its header
	 * line and the rows that tell fragmentation and the allocated bytes;
	 * the numbers are floor-divided in the unit printed. */
	[CX_SUMMARY] = "CUDA OOMs: (\\d{1,12})\\s*\\|\\s*cudaMalloc retries: "
	    "(\\d{1,12})|\\| Non-releasable memory \\|\\s*(\\d{1,9}) "
	    "(B|KiB|MiB|GiB|TiB|KB|MB)\\s|\\| Allocated memory\\s+\\|\\s*"
	    "(\\d{1,9}) (B|KiB|MiB|GiB|TiB|KB|MB)\\s",
	/* vLLM's start-up profile: "Model loading took 14.99 GiB and ..."
	 * (vllm/v1/worker/gpu_model_runner.py, load_model), V0's "Loading
	 * model weights took 7.1183 GB" (vllm/worker/model_runner.py, GiB
	 * by its division), "Available KV cache memory: 52.27 GiB"
	 * (vllm/v1/worker/gpu_worker.py, determine_available_memory), V0's
	 * "the rest of the memory reserved for KV Cache is 52.27GiB"
	 * (vllm/worker/worker.py), "GPU KV cache size: 123,456 tokens" and
	 * "Maximum concurrency for 4,096 tokens per request: 30.14x"
	 * (vllm/v1/core/kv_cache_utils.py, the KV cache report, whose
	 * length is the engine's max_model_len).  The engine's maximum
	 * length itself: the config it prints at start-up, "max_seq_len=
	 * 32768, download_dir=" (vllm/config/vllm.py, VllmConfig.__str__;
	 * vllm/engine/llm_engine.py before), the failure's own "max seq len
	 * (32768)" (V1's check_enough_kv_cache_memory in kv_cache_utils.py,
	 * V0's raise_if_cache_size_invalid in vllm/worker/worker.py) and
	 * "--max-model-len 32768" on a command line (or --max_model_len,
	 * which vLLM's FlexibleArgumentParser takes too); and what fits by
	 * the failure's own count, V1's "the estimated maximum model length
	 * is 12288" and V0's "... that can be stored in KV cache (23648)". */
	/* PyTorch's DataLoader: its name (also in its worker errors,
	 * torch/utils/data/_utils/signal_handling.py), its num_workers
	 * setting, or a frame of torch/utils/data in a traceback.  Only that
	 * lets a report speak of data-loading workers for a host kill. */
	[CX_LOADER] = "DataLoader|num_workers|torch[/\\\\]utils[/\\\\]data[/\\\\]",
	/* TensorFlow's BFC allocator's Stats block (AllocatorStats::
	 * DebugString in tensorflow/core/framework/allocator.cc, "Limit:
	 * %20lld" a line), which DumpMemoryLog prints after the chunk dump:
	 * hundreds of "Chunk at" lines, twice as many when a console wraps
	 * them, which no recogniser reads across. */
	[CX_BFC] = "^\\s*(Limit|InUse|MaxInUse):\\s+(\\d{1,20})\\s*$",
	[CX_VLLM] = "Model loading took (\\d{1,6}(?:\\.\\d{1,6})?) GiB|Loading model "
	    "weights took (\\d{1,6}(?:\\.\\d{1,6})?) GB|Available KV cache memory: "
	    "(\\d{1,6}(?:\\.\\d{1,6})?) GiB|reserved for KV Cache is "
	    "(\\d{1,6}(?:\\.\\d{1,6})?) ?GiB|GPU KV cache size: (\\d{1,3}(?:,?\\d{3}){0,4}) "
	    "tokens|Maximum concurrency for (\\d{1,3}(?:,?\\d{3}){0,4}) tokens per "
	    "request: (\\d{1,9}(?:\\.\\d{1,4})?)x|max_seq_len=(\\d{1,9}), ?"
	    "download_dir=|max seq len \\((\\d{1,9})\\)|--max[-_]model[-_]len[= ]"
	    "(\\d{1,9})\\b|estimated maximum model length is (\\d{1,9})|"
	    "stored in KV cache \\((\\d{1,9})\\)",
	/* An NVIDIA model name (nvidia-smi's table, get_device_name()):
	 * "NVIDIA A100-SXM4-80GB" gives A100, "GeForce GTX 1080 Ti" GTX
	 * 1080 Ti; rules/knowledge.yaml maps it to a compute capability. */
	/* The job's GPUs, as an "export CUDA_VISIBLE_DEVICES=2,3" line or an
	 * environment dump shows them: indices, or UUIDs (GPU-..., MIG-...),
	 * comma-separated (CUDA C++ Programming Guide, "CUDA Environment
	 * Variables"). */
	[CX_VISIBLE] = "\\bCUDA_VISIBLE_DEVICES" KV
	    "((?:\\d{1,4}|(?:GPU|MIG)-[0-9A-Fa-f/-]{4,80})"
	    "(?:,(?:\\d{1,4}|(?:GPU|MIG)-[0-9A-Fa-f/-]{4,80})){0,63})",
	[CX_GPU] = "\\b(?:(?:NVIDIA|Tesla|GeForce|Quadro) )+((?:RTX |GTX )?"
	    "[A-Z]{0,2}\\d{1,4}[A-Z]?(?: Ti| SUPER)?)(?![\\w.])",
	[CX_FRAME] = "File \"([^\"\\n]{1,300})\", line (\\d{1,9}), in "
	    "([^\\s\\n]{1,100})",
	/* A training step; not Slurm's job step, whose id is "JOB.STEP"
	 * ("srun: Terminating job step 3955284.0", "in step 3955284.0
	 * cgroup"), here and in CX_RSTEP. */
	[CX_STEP] = "\\|\\s*(\\d{1,9})/\\d{1,9} \\[|[\"']?(?:global_)?step"
	    "[\"']?\\s*[:=]\\s*(\\d{1,9})|\\b[Ss]tep\\s+(\\d{1,9})\\b"
	    "(?!\\.\\d)|"
	    "\\b[Ii]ter(?:ation)?\\s*[:=]?\\s*(\\d{1,9})\\b",
	/* The step a reading's own line gives: Megatron's "(after N
	 * iterations)", detectron2's "iter: N", torchtitan's "step: N", a
	 * JSON "step": N, mmengine's "[N/M]" (the last one), "step N". */
	[CX_RSTEP] = "\\(after (\\d{1,9}) iterations\\)|\\biter(?:ation)?:?\\s+"
	    "(\\d{1,9})\\b|[\"']?\\b(?:global_)?step[\"']?\\s*[:=]\\s*(\\d{1,9})\\b|"
	    ".*\\[\\s*(\\d{1,9})/\\d{1,9}\\]|\\b[Ss]tep\\s+(\\d{1,9})\\b"
	    "(?!\\.\\d)",
	/* The rank a reading's line names: Megatron's "[Rank N]", torchrun's
	 * "[rankN]:" prefix. */
	[CX_RRANK] = "\\[Rank (\\d{1,6})\\]|\\[rank(\\d{1,6})\\]:",
	/*
	 * The end of a distributed run.  ProcessGroupNCCL's watchdog
	 * (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp,
	 * WorkNCCL::checkTimeout: logPrefix() "Watchdog caught collective
	 * operation timeout: WorkNCCL(...) ran for N milliseconds before
	 * timing out."; ncclCommWatchdog: "Process group watchdog thread
	 * terminated with exception: ..."), torchrun stopping the other
	 * workers (torch/distributed/elastic/multiprocessing/api.py,
	 * SubprocessContext._close: "Sending process %s closing signal %s"),
	 * and ChildFailedError's table (torch/distributed/elastic/
	 * multiprocessing/errors/__init__.py, _FAILURE_FORMAT_TEMPLATE:
	 * "Root Cause (first observed failure):" and "  rank      : ${rank}
	 * (local_rank: ${local_rank})").
	 */
	[CX_AFTER] = "(Watchdog caught collective operation timeout|Process "
	    "group watchdog thread terminated with exception)|(closing signal "
	    "SIGTERM)|(Root Cause \\(first observed failure\\):)|\\brank\\s+: "
	    "(\\d{1,9}) \\(local_rank: ",
	/* The rank a watchdog line names: torchrun's "[rankN]:" prefix, or
	 * the watchdog's own log prefix "[Rank N]" (newer: "[PG ID 0 PG GUID
	 * 0(default_pg) Rank N]"). */
	[CX_ARANK] = "\\[rank(\\d{1,6})\\]:|\\bRank (\\d{1,6})\\]",
};

/*
 * The anchors of settings lines.  Those marked sampled occur on every
 * metric line of some logs (a "seq_len" field): the scanner reads such a
 * line at most once in CX_SAMPLE_BYTES of input, which keeps the first
 * value and one within 64 KiB of the event.  Those marked series are
 * memory readings: the scanner reads every one until the series is full,
 * then one in stride (cx_series_take), so that what it keeps, and what it
 * costs, stay bounded whatever the log's size.
 */
static const cx_anchor cx_anchor_list[] = {
	{ "PYTORCH_CUDA_ALLOC_CONF", CX_ALLOC, false, false },
	{ "PYTORCH_HIP_ALLOC_CONF", CX_ALLOC, false, false },
	{ "PYTORCH_ALLOC_CONF", CX_ALLOC, false, false },
	{ "XLA_PYTHON_CLIENT_", CX_XLA, false, false },
	{ "TF_GPU_ALLOCATOR", CX_TF, false, false },
	{ "TF_FORCE_GPU_ALLOW_GROWTH", CX_TF, false, false },
	{ "_growth", CX_TF, false, false },
	{ "TensorFlow version", CX_TF_RELEASE, false, false },
	{ "tensorflow version", CX_TF_RELEASE, false, false },
	{ "tensorflow==", CX_TF_RELEASE, false, false },
	{ "tensorflow-gpu==", CX_TF_RELEASE, false, false },
	{ "tensorflow  ", CX_TF_RELEASE, false, false },
	{ "tensorflow-gpu  ", CX_TF_RELEASE, false, false },
	{ "tensorflow/tensorflow:", CX_TF_RELEASE, false, false },
	{ "-tf1-", CX_TF_RELEASE, false, false },
	{ "tensorflow_core", CX_TF_RELEASE, false, false },
	{ "tf.Session(", CX_TF_RELEASE, false, false },
	{ "CUDA library lib", CX_TF_RELEASE, false, false },
	{ "dynamic library lib", CX_TF_RELEASE, false, false },
	{ "dynamic library cudart64_", CX_TF_RELEASE, false, false },
	{ "tensorflow/tsl/", CX_TF_RELEASE, false, false },
	{ "compiler/xla/stream_executor/", CX_TF_RELEASE, false, false },
	{ "external/local_", CX_TF_RELEASE, false, false },
	{ "gpu_cudamallocasync_allocator", CX_TF_RELEASE, false, false },
	{ "variable 'TF_GPU_ALLOCATOR=", CX_TF_RELEASE, false, false },
	{ "Using CUDA malloc Async allocator", CX_TF, false, false },
	{ "--ipc", CX_SHM, false, false },
	{ "--shm-size", CX_SHM, false, false },
	{ "shm_size", CX_SHM, false, false },
	{ "OOMKilled", CX_OOMKILLED, false, false },
	{ "vLLM API server version", CX_VLLM_RELEASE, false, false },
	{ "LLM engine (v", CX_VLLM_RELEASE, false, false },
	{ "vLLM Version:", CX_VLLM_RELEASE, false, false },
	{ "vllm==", CX_VLLM_RELEASE, false, false },
	{ "/vllm/", CX_SERVING, true, false },
	{ "\\vllm\\", CX_SERVING, true, false },
	{ "vllm.", CX_SERVING, true, false },
	{ "(VllmWorker", CX_SERVING, true, false },
	{ "(EngineCore", CX_SERVING, true, false },
	{ "/sglang/", CX_SERVING, true, false },
	{ "sglang.srt", CX_SERVING, true, false },
	{ "text_generation_", CX_SERVING, true, false },
	{ "text-generation-", CX_SERVING, false, false },
	{ "quantize", CX_TGI, false, false },
	{ "jaxlib", CX_JAX_RELEASE, false, false },
	{ "jax==", CX_JAX_RELEASE, false, false },
	{ "jax:", CX_JAX_RELEASE, false, false },
	{ "jax ", CX_JAX_RELEASE, false, false },
	{ "jax-", CX_JAX_RELEASE, false, false },
	{ "JAX version", CX_JAX_RELEASE, false, false },
	{ "jax version", CX_JAX_RELEASE, false, false },
	{ "batch_size", CX_BATCH, true, false },
	{ "batch size", CX_BATCH, true, false },
	{ "gradient_accumulation_steps", CX_ACCUM, true, false },
	{ "seq_len", CX_SEQ, true, false },
	{ "seq_length", CX_SEQ, true, false },
	{ "max_length", CX_SEQ, true, false },
	{ "block_size", CX_SEQ, true, false },
	{ "max_model_len", CX_SEQ, true, false },
	{ "bf16", CX_PREC, true, false },
	{ "fp16", CX_PREC, true, false },
	{ "mixed_precision", CX_PREC, true, false },
	{ "torch_dtype", CX_PREC, true, false },
	{ "_checkpointing", CX_CKPT, true, false },
	{ "memory_allocated", CX_MEM, false, true },
	{ "memory_reserved", CX_MEM, false, true },
	{ "gpu_mem", CX_MEM, false, true },
	{ "mem_gb", CX_MEM, false, true },
	{ "max_mem", CX_MEM, false, true },
	{ "_bytes.all.", CX_MEM, false, true },
	{ "Max_MA ", CX_MEM_DS, false, true },
	{ "memory (MB) | allocated:", CX_MEM_MEGATRON, false, true },
	{ "GiB(", CX_MEM_TITAN, false, true },
	{ " memory: ", CX_MEM_MM, false, true },
	{ "_mem_gpu_", CX_MEM_HF, false, true },
	{ "GPU Total Peak Memory consumed", CX_MEM_ACCEL, false, true },
	{ "memory.used [MiB]", CX_SMI_HEAD, false, false },
	{ " MiB, ", CX_SMI_ROW, false, true },
	{ "# gpu ", CX_DMON, false, false },
	{ "#Date ", CX_DMON, false, false },
	{ "#Time ", CX_DMON, false, false },
	{ "cudaMalloc retries:", CX_SUMMARY, false, false },
	{ "| Non-releasable memory |", CX_SUMMARY, false, false },
	{ "| Allocated memory ", CX_SUMMARY, false, false },
	{ "Limit:", CX_BFC, false, false },
	{ "InUse:", CX_BFC, false, false },
	{ "DataLoader", CX_LOADER, true, false },
	{ "num_workers", CX_LOADER, true, false },
	{ "torch/utils/data/", CX_LOADER, true, false },
	{ "torch\\utils\\data\\", CX_LOADER, true, false },
	{ "Model loading took ", CX_VLLM, false, false },
	{ "Loading model weights took ", CX_VLLM, false, false },
	{ "Available KV cache memory: ", CX_VLLM, false, false },
	{ "reserved for KV Cache is ", CX_VLLM, false, false },
	{ "GPU KV cache size: ", CX_VLLM, false, false },
	{ "Maximum concurrency for ", CX_VLLM, false, false },
	{ "max_seq_len=", CX_VLLM, false, false },
	{ "max seq len (", CX_VLLM, false, false },
	{ "--max-model-len", CX_VLLM, false, false },
	{ "--max_model_len", CX_VLLM, false, false },
	{ "stored in KV cache (", CX_VLLM, false, false },
	{ "estimated maximum model length is ", CX_VLLM, false, false },
	{ "Watchdog caught collective operation timeout", CX_AFTER, false,
	  false },
	{ "watchdog thread terminated with exception", CX_AFTER, false, false },
	{ "closing signal SIGTERM", CX_AFTER, false, false },
	{ "Root Cause (first observed failure):", CX_AFTER, false, false },
	{ " (local_rank: ", CX_AFTER, false, false },
	{ "NVRM: Xid", CX_XID, false, false },
	{ "memory: usage", CX_MEMCG, false, false },
	{ "oom-kill:constraint=", CX_CGROUP, false, false },
	{ "killed as a result of limit of", CX_CGROUP, false, false },
	{ "ncorrectable ECC", CX_XID, false, false },
	{ "ECC page retirement", CX_XID, false, false },
	{ "CUDA_VISIBLE_DEVICES", CX_VISIBLE, false, false },
	{ "NVIDIA ", CX_GPU, true, false },
	{ "Tesla ", CX_GPU, true, false },
	{ "GeForce ", CX_GPU, true, false },
	{ NULL, 0, false, false },
};

struct cx_ctx {
	rx_code *re[CX_COUNT];
	rx_match *m;
	bool nomem;     /* an event's frames or readings were lost (cx_nomem) */
};

cx_ctx *
cx_new(bool jit, od_error *err)
{
	cx_ctx *c = calloc(1, sizeof *c);
	int i;

	if (c == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	for (i = 0; i < CX_COUNT; i++) {
		c->re[i] = rx_compile(cx_patterns[i], 0, jit, "context.c",
		    (uint64_t)i + 1, err);
		if (c->re[i] == NULL) {
			cx_free(c);
			return NULL;
		}
	}
	if ((c->m = rx_match_new(err)) == NULL) {
		cx_free(c);
		return NULL;
	}
	return c;
}

void
cx_free(cx_ctx *c)
{
	int i;

	if (c == NULL)
		return;
	for (i = 0; i < CX_COUNT; i++)
		rx_code_free(c->re[i]);
	rx_match_free(c->m);
	free(c);
}

bool
cx_nomem(cx_ctx *c)
{
	bool nomem = c->nomem;

	c->nomem = false;
	return nomem;
}

const cx_anchor *
cx_anchors(void)
{
	return cx_anchor_list;
}

void
cx_reset(od_logctx *st)
{
	memset(st, 0, sizeof *st);
	st->batch_size = st->accum_steps = st->seq_len = -1;
	st->grad_ckpt = st->dataloader = -1;
	st->mem_first = st->mem_last = st->mem_max = -1;
	st->smi_used_col = st->smi_index_col = -1;
	st->series_device = -1;
	st->sum_ooms = st->sum_retries = st->sum_non_releasable = -1;
	st->vllm_weights = st->vllm_kv_cache = st->vllm_kv_tokens = -1;
	st->vllm_max_len = st->vllm_concurrency_x100 = -1;
	st->vllm_concurrency_len = st->vllm_est_len = -1;
	st->xid = -1;
	st->memcg_usage = st->memcg_limit = -1;
	st->memcg_job_pid = -1;
	st->bfc_limit = st->bfc_inuse = st->bfc_peak = -1;
	st->tf_min = st->tf_max = -1;
	st->vllm_min = st->vllm_max = -1;
	st->tgi_min = st->tgi_max = -1;
	st->tgi_quantize = -1;
	st->jaxlib_min = st->jaxlib_max = -1;
	st->container_oom = -1;
	st->after_rank = -1;
}

static bool
cx_match(cx_ctx *c, int re, const char *s, size_t len, size_t at)
{
	return rx_find(c->m, c->re[re], s, len, at);
}

/* Group g of the last match as a string, or NULL. */
static const char *
cx_group(cx_ctx *c, const char *s, int g, size_t *n)
{
	size_t start;

	if (!rx_group(c->m, g, &start, n))
		return NULL;
	return s + start;
}

const char *
od_reading_name(int what)
{
	static const char *const names[OD_READING_COUNT] = {
		[OD_READING_ALLOCATED] = "allocated",
		[OD_READING_MAX_ALLOCATED] = "max_allocated",
		[OD_READING_RESERVED] = "reserved",
		[OD_READING_MAX_RESERVED] = "max_reserved",
		[OD_READING_DEVICE_USED] = "device_used",
		[OD_READING_ALLOC_DELTA] = "alloc_delta",
		[OD_READING_PEAK_DELTA] = "peak_delta",
		[OD_READING_MEMORY] = "memory",
	};

	return what >= 0 && what < OD_READING_COUNT ? names[what] : NULL;
}

bool
cx_series_take(od_logctx *st, int what)
{
	uint32_t stride = st->stride > 1 ? st->stride : 1;

	if (what == CX_SMI_ROW && st->smi_used_col < 0)
		return false;
	return st->seen++ % stride == 0;
}

/*
 * Thins a full series: keeps every other reading from the first, and the
 * last and the largest whatever their place, so that about half the room
 * is free again; the stride doubles, so that the readings read from then
 * on are as far apart as those kept.
 */
static void
cx_thin(od_logctx *st)
{
	int i, n = 0, top = 0;

	for (i = 1; i < st->nkept; i++)
		if (st->readings[i].bytes > st->readings[top].bytes)
			top = i;
	for (i = 0; i < st->nkept; i++)
		if (i % 2 == 0 || i == top || i == st->nkept - 1)
			st->readings[n++] = st->readings[i];
	st->nkept = n;
	st->stride = (st->stride > 1 ? st->stride : 1) * 2;
}

/* Adds one reading to the series and to the summary of all readings;
 * false when bytes is unknown (nothing added). */
static bool
cx_reading(od_logctx *st, int what, int64_t bytes, int64_t step, int rank,
    uint64_t lineno)
{
	od_reading *r;

	if (bytes < 0)
		return false;
	if (st->nreadings++ == 0)
		st->mem_first = bytes;
	st->mem_last = bytes;
	if (bytes > st->mem_max)
		st->mem_max = bytes;
	if (st->nkept == OD_READINGS_MAX)
		cx_thin(st);
	r = &st->readings[st->nkept++];
	r->what = what;
	r->bytes = bytes;
	r->step = step;
	r->rank = rank;
	r->device = -1;
	r->line = lineno;
	return true;
}

/* num[0..n) in a unit as printed ("GB" in a metric line is GiB nearly
 * always: the frameworks divide by 1024 ** 3), or -1. */
static int64_t
cx_bytes(const char *num, size_t n, const char *unit, size_t ulen)
{
	static const struct {
		const char *printed, *meant;
	} units[] = {
		{ "", "B" }, { "B", "B" }, { "KB", "KiB" }, { "KiB", "KiB" },
		{ "M", "MiB" }, { "MB", "MiB" }, { "MiB", "MiB" }, { "G", "GiB" },
		{ "GB", "GiB" }, { "GiB", "GiB" }, { "TiB", "TiB" },
	};
	size_t i;
	int64_t v;

	for (i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strlen(units[i].printed) == ulen &&
		    memcmp(units[i].printed, unit, ulen) == 0)
			return od_size_parse(num, n, units[i].meant,
			    strlen(units[i].meant), &v) ? v : -1;
	return -1;
}

/* Group g of the last match in a unit, or -1. */
static int64_t
cx_group_bytes(cx_ctx *c, const char *line, int g, const char *unit)
{
	size_t n;
	const char *p = cx_group(c, line, g, &n);

	return p != NULL ? cx_bytes(p, n, unit, strlen(unit)) : -1;
}

/* A number with thousands commas ("123,456"), or -1. */
static int64_t
cx_count(const char *p, size_t n)
{
	int64_t v = 0;
	size_t i;

	if (p == NULL || n == 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (p[i] == ',')
			continue;
		if (p[i] < '0' || p[i] > '9' || v > INT64_MAX / 10 - 10)
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v;
}

/* The step and the rank the reading line line[0..len) gives, or -1. */
static void
cx_line_place(cx_ctx *c, const char *line, size_t len, int64_t *step,
    int *rank)
{
	int k;

	*step = -1;
	*rank = -1;
	if (cx_match(c, CX_RSTEP, line, len, 0))
		for (k = 1; k <= 5 && *step < 0; k++)
			*step = rx_int(c->m, line, k, -1);
	if (cx_match(c, CX_RRANK, line, len, 0))
		for (k = 1; k <= 2 && *rank < 0; k++)
			*rank = (int)rx_int(c->m, line, k, -1);
}

/* The figure a key of CX_MEM names. */
static int
cx_key_what(const char *k, size_t n)
{
	bool peak = (n >= 4 && memcmp(k, "max_", 4) == 0) ||
	    (n >= 4 && memcmp(k + n - 4, "peak", 4) == 0);

	if (n >= 7 && memcmp(k, "max_mem", 7) == 0 && n == 7)
		return OD_READING_MAX_ALLOCATED;        /* detectron2 */
	if (memmem(k, n, "reserved", 8) != NULL)
		return peak ? OD_READING_MAX_RESERVED : OD_READING_RESERVED;
	if (memmem(k, n, "allocated", 9) != NULL)
		return peak ? OD_READING_MAX_ALLOCATED : OD_READING_ALLOCATED;
	return OD_READING_MEMORY;
}

/*
 * Field k (0-based) of a comma-separated line[0..len), without the spaces
 * around it: its start, and its length in *n; NULL when the line has fewer
 * fields.
 */
static const char *
cx_csv_field(const char *line, size_t len, int k, size_t *n)
{
	size_t at = 0, i;
	const char *p, *q;

	for (; k > 0; k--) {
		if ((q = memchr(line + at, ',', len - at)) == NULL)
			return NULL;
		at = (size_t)(q - line) + 1;
	}
	while (at < len && line[at] == ' ')
		at++;
	p = line + at;
	for (i = at; i < len && line[i] != ','; i++)
		;
	q = line + i;
	while (q > p && (q[-1] == ' ' || q[-1] == '\r'))
		q--;
	*n = (size_t)(q - p);
	return p;
}

/* Whether p[0..n) is n > 0 decimal digits. */
static bool
cx_digits(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return n > 0;
}

/*
 * nvidia-smi's CSV: the columns of memory.used and index in a header, and
 * in a row the bytes of the first ("40536 MiB") with the GPU the second
 * names.
 */
static void
cx_smi(od_logctx *st, bool head, const char *line, size_t len,
    uint64_t lineno)
{
	const char *p, *q;
	size_t n;
	int col;

	if (head) {
		st->smi_used_col = st->smi_index_col = -1;
		for (col = 0; (p = cx_csv_field(line, len, col, &n)) != NULL;
		    col++) {
			if (n == 17 && memcmp(p, "memory.used [MiB]", 17) == 0)
				st->smi_used_col = col;
			else if (n == 5 && memcmp(p, "index", 5) == 0)
				st->smi_index_col = col;
		}
		return;
	}
	if (st->smi_used_col < 0 ||
	    (p = cx_csv_field(line, len, st->smi_used_col, &n)) == NULL)
		return;
	for (q = p; q < p + n && *q >= '0' && *q <= '9'; q++)
		;
	if (q == p || p + n - q != 4 || memcmp(q, " MiB", 4) != 0)
		return;
	if (!cx_reading(st, OD_READING_DEVICE_USED, cx_bytes(p,
	    (size_t)(q - p), "MiB", 3), -1, -1, lineno))
		return;
	if (st->smi_index_col >= 0 && (p = cx_csv_field(line, len,
	    st->smi_index_col, &n)) != NULL && cx_digits(p, n) && n <= 4)
		st->readings[st->nkept - 1].device = (int)strtol(p, NULL, 10);
}

/* The maximum of columns a dmon header may have that oomdoc reads. */
#define CX_DMON_COLS 48

/*
 * Splits line[0..len) at blanks into at most max words, a lone "#" left
 * out and a "#" glued to a word taken off it, so that a dmon header and
 * its rows have their columns at the same places; returns the count, or
 * max + 1 when there are more.
 */
static int
cx_words(const char *line, size_t len, const char **w, size_t *wn, int max)
{
	const char *p = line, *end = line + len;
	int n = 0;

	while (p < end) {
		const char *q;

		while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		if (p < end && *p == '#')
			p++;
		if (p == end || *p == ' ' || *p == '\t' || *p == '\r')
			continue;
		for (q = p; q < end && *q != ' ' && *q != '\t' && *q != '\r';
		    q++)
			;
		if (n == max)
			return max + 1;
		w[n] = p;
		wn[n++] = (size_t)(q - p);
		p = q;
	}
	return n;
}

/* A dmon header: where its gpu and fb columns are (no fb: none read). */
static void
cx_dmon_head(od_logctx *st, const char *line, size_t len)
{
	const char *w[CX_DMON_COLS];
	size_t wn[CX_DMON_COLS];
	int n = cx_words(line, len, w, wn, CX_DMON_COLS), i;

	st->dmon_ncols = 0;
	st->dmon_gpu_col = st->dmon_fb_col = -1;
	if (n > CX_DMON_COLS)
		return;
	for (i = 0; i < n; i++) {
		if (wn[i] == 3 && memcmp(w[i], "gpu", 3) == 0 &&
		    st->dmon_gpu_col < 0)
			st->dmon_gpu_col = i;
		else if (wn[i] == 2 && memcmp(w[i], "fb", 2) == 0)
			st->dmon_fb_col = i;
	}
	if (st->dmon_gpu_col >= 0 && st->dmon_fb_col >= 0)
		st->dmon_ncols = n;
}

bool
cx_dmon_active(const od_logctx *st)
{
	return st->dmon_ncols > 0;
}

void
cx_dmon_row(od_logctx *st, const char *line, size_t len, uint64_t lineno)
{
	const char *w[CX_DMON_COLS];
	size_t wn[CX_DMON_COLS];
	const char *p = line;
	int n;

	if (st->dmon_ncols <= 0)
		return;
	/* The units line ("# Idx  W ...") and the header are no rows. */
	while (p < line + len && (*p == ' ' || *p == '\t'))
		p++;
	if (p == line + len || *p == '#')
		return;
	n = cx_words(line, len, w, wn, CX_DMON_COLS);
	if (n != st->dmon_ncols || wn[st->dmon_gpu_col] > 3 ||
	    !cx_digits(w[st->dmon_gpu_col], wn[st->dmon_gpu_col]) ||
	    wn[st->dmon_fb_col] > 9 ||
	    !cx_digits(w[st->dmon_fb_col], wn[st->dmon_fb_col]))
		return;
	if (!cx_series_take(st, CX_DMON))
		return;
	/* dmon's MB is MiB: the figure memory.used [MiB] gives in the CSV. */
	if (cx_reading(st, OD_READING_DEVICE_USED, cx_bytes(w[st->dmon_fb_col],
	    wn[st->dmon_fb_col], "MiB", 3), -1, -1, lineno))
		st->readings[st->nkept - 1].device = (int)strtol(w[st->dmon_gpu_col],
	    NULL, 10);
}

/* Adds "NAME=value" to a list of settings, replacing NAME's old value. */
static void
cx_setting(char *list, size_t cap, const char *name, size_t nlen,
    const char *val, size_t vlen)
{
	char item[160], rest[160];
	char *p;

	if (nlen + vlen + 2 > sizeof item)
		return;
	memcpy(item, name, nlen);
	item[nlen] = '=';
	memcpy(item + nlen + 1, val, vlen);
	item[nlen + 1 + vlen] = '\0';
	/* Drop an earlier value of the same name ("NAME=" at a word start). */
	for (p = list; (p = strstr(p, "=")) != NULL; p++) {
		char *start = p;

		while (start > list && start[-1] != ' ')
			start--;
		if ((size_t)(p - start) == nlen &&
		    memcmp(start, item, nlen) == 0) {
			char *end = strchr(p, ' ');

			rx_copy_text(rest, sizeof rest, end != NULL ? end + 1 : "",
			    end != NULL ? strlen(end + 1) : 0);
			*start = '\0';
			strncat(list, rest, cap - strlen(list) - 1);
			break;
		}
	}
	if (strlen(list) + strlen(item) + 2 > cap)
		return;
	if (list[0] != '\0' && list[strlen(list) - 1] != ' ')
		strcat(list, " ");
	strcat(list, item);
}

/*
 * The Slurm job id of a cgroup path p[0..n), into out (cap bytes), or
 * false when the path is not a Slurm job's.  Slurm's task/cgroup plugin
 * makes, for cgroup v1, "/slurm/uid_U/job_N/step_S/task_T" (the root
 * "/slurm" or, with several slurmd on a node, "/slurm_NODE";
 * src/plugins/task/cgroup/task_cgroup_memory.c of 17.x to 20.x,
 * "%s/uid_%u" then "%s/job_%u"), and for cgroup v2
 * "/system.slice/slurmstepd.scope/job_N/step_S/user/task_T" (or
 * "NODE_slurmstepd.scope"; the cgroup/v2 plugin of Slurm 22.05 and
 * later).  The job is the first "job_N" component after the Slurm root;
 * a "job_N" elsewhere (another system's cgroups) is not one.
 */
static bool
cx_slurm_job(const char *p, size_t n, char *out, size_t cap)
{
	bool slurm = false;
	size_t i = 0;

	while (i < n) {
		size_t j = i, k;

		while (j < n && p[j] != '/')
			j++;
		k = j - i;
		if (!slurm)
			slurm = (k == 5 && memcmp(p + i, "slurm", 5) == 0) ||
			    (k > 6 && memcmp(p + i, "slurm_", 6) == 0) ||
			    (k >= 16 && memcmp(p + j - 16, "slurmstepd.scope",
			    16) == 0);
		else if (k > 4 && k - 4 < cap && memcmp(p + i, "job_", 4) == 0 &&
		    cx_digits(p + i + 4, k - 4)) {
			memcpy(out, p + i + 4, k - 4);
			out[k - 4] = '\0';
			return true;
		}
		i = j + 1;
	}
	return false;
}

/* The value of key (",task_memcg=") in line[0..len), up to the next comma
 * or blank, or NULL. */
static const char *
cx_line_value(const char *line, size_t len, const char *key, size_t *n)
{
	size_t kn = strlen(key), i, j;

	for (i = 0; i + kn <= len; i++) {
		if (memcmp(line + i, key, kn) != 0)
			continue;
		for (j = i + kn; j < len && line[j] != ',' && line[j] != ' ' &&
		    line[j] != '\t' && line[j] != '\n'; j++)
			;
		*n = j - i - kn;
		return line + i + kn;
	}
	return NULL;
}

/*
 * The Slurm job of the cgroups a kernel OOM line names (CX_CGROUP): the
 * killed task's cgroup, else the one whose limit was hit.  A line naming
 * no Slurm cgroup forgets the job of an earlier one, so that a later kill
 * outside Slurm is not given it.
 */
static void
cx_cgroup_line(cx_ctx *c, const char *line, size_t len, uint64_t lineno,
    od_logctx *st)
{
	const char *g;
	size_t n = 0;
	char job[sizeof st->memcg_job];
	bool found = false;
	int64_t pid = -1;

	if ((g = cx_group(c, line, 2, &n)) != NULL)
		found = cx_slurm_job(g, n, job, sizeof job);
	else if (cx_group(c, line, 1, &n) != NULL) {
		pid = rx_int(c->m, line, 1, -1);
		if ((g = cx_line_value(line, len, ",task_memcg=", &n)) != NULL)
			found = cx_slurm_job(g, n, job, sizeof job);
		if (!found && (g = cx_line_value(line, len, ",oom_memcg=",
		    &n)) != NULL)
			found = cx_slurm_job(g, n, job, sizeof job);
	}
	if (!found)
		job[0] = '\0';
	memcpy(st->memcg_job, job, sizeof job);
	st->memcg_job_pid = pid;
	st->memcg_job_line = lineno;
}

/* CX_OOMKILLED's value, its group g ("true", "False"): 1 true, 0 false. */
static int
cx_true(const char *g)
{
	return g != NULL && (*g == 't' || *g == 'T');
}

/* Adds a CX_SHM match's setting ("ipc=host", "shm-size=16g") to list. */
static void
cx_shm(cx_ctx *c, const char *text, char *list, size_t cap)
{
	int k;

	for (k = 1; k <= 5; k += 2) {
		size_t n = 0, n2 = 0;
		const char *g = cx_group(c, text, k, &n);
		const char *g2 = cx_group(c, text, k + 1, &n2);

		if (g != NULL && g2 != NULL) {
			cx_setting(list, cap, g, n, g2, n2);
			return;
		}
	}
}

/* Narrows the TensorFlow releases the log shows to lo..hi (-1: no
 * bound); a bound that contradicts the others (two runs of different
 * releases in one log) leaves the release unknown. */
static void
cx_tf_bound(od_logctx *st, int lo, int hi)
{
	if (lo >= 0 && (st->tf_min < 0 || lo > st->tf_min))
		st->tf_min = lo;
	if (hi >= 0 && (st->tf_max < 0 || hi < st->tf_max))
		st->tf_max = hi;
	if (st->tf_min >= 0 && st->tf_max >= 0 && st->tf_min > st->tf_max)
		st->tf_min = st->tf_max = -1;
}

/* Reads a CX_TF_RELEASE line (the groups of its pattern, in order). */
static void
cx_tf_release(cx_ctx *c, const char *line, od_logctx *st)
{
	size_t n;
	int64_t v;

	if (cx_group(c, line, 1, &n) != NULL) {
		v = rx_int(c->m, line, 1, 0) * 100 + rx_int(c->m, line, 2, 0);
		cx_tf_bound(st, (int)v, (int)v);
	} else if (cx_group(c, line, 3, &n) != NULL) {
		cx_tf_bound(st, 115, 115);
	} else if (cx_group(c, line, 4, &n) != NULL) {
		cx_tf_bound(st, 115, 201);
	} else if (cx_group(c, line, 5, &n) != NULL) {
		cx_tf_bound(st, -1, 115);
	} else if (cx_group(c, line, 6, &n) != NULL) {
		/* The major release: the soname's "10" of libcudart.so.10.1,
		 * "8" of .8.0; the DLL's 101, 110, 90 (9.0) and 12 (12.x). */
		v = rx_int(c->m, line, 6, -1);
		if (n == 3 || (n == 2 && v >= 20))
			v /= 10;
		if (v >= 0 && v <= 10)
			cx_tf_bound(st, -1, 203);
	} else if (cx_group(c, line, 7, &n) != NULL) {
		cx_tf_bound(st, 205, -1);
	}
}

/* Reads a CX_JAX_RELEASE line: jaxlib's release narrows jaxlib_min and
 * jaxlib_max, jax's (no jaxlib newer than it) jaxlib_max; a bound that
 * contradicts the others (two environments in one log) leaves the
 * release unknown, as cx_tf_bound does. */
static void
cx_jax_release(cx_ctx *c, const char *line, od_logctx *st)
{
	size_t n;
	int k = cx_group(c, line, 1, &n) != NULL ? 1 : 4;
	int64_t v = rx_int(c->m, line, k, 0) * 10000 +
	    rx_int(c->m, line, k + 1, 0) * 100 + rx_int(c->m, line, k + 2, 0);

	if (k == 1 && (st->jaxlib_min < 0 || v > st->jaxlib_min))
		st->jaxlib_min = (int)v;
	if (st->jaxlib_max < 0 || v < st->jaxlib_max)
		st->jaxlib_max = (int)v;
	if (st->jaxlib_min >= 0 && st->jaxlib_min > st->jaxlib_max)
		st->jaxlib_min = st->jaxlib_max = -1;
}

/* Reads a CX_TGI line: a release (two in one log, two runs: the range
 * of both), or whether the launcher quantizes. */
static void
cx_tgi(cx_ctx *c, const char *line, od_logctx *st)
{
	const char *g;
	size_t n;
	int k = cx_group(c, line, 1, &n) != NULL ? 1 :
	    cx_group(c, line, 3, &n) != NULL ? 3 : 0;
	int64_t v;

	if (k > 0) {
		v = rx_int(c->m, line, k, 0) * 100 + rx_int(c->m, line, k + 1, 0);
		if (st->tgi_min < 0 || v < st->tgi_min)
			st->tgi_min = (int)v;
		if (v > st->tgi_max)
			st->tgi_max = (int)v;
	} else if ((g = cx_group(c, line, 5, &n)) != NULL) {
		st->tgi_quantize = g[0] == 'S';        /* "Some", not "None" */
	} else if (cx_group(c, line, 6, &n) != NULL) {
		st->tgi_quantize = 1;
	}
}

void
cx_line(cx_ctx *c, int what, const char *line, size_t len, uint64_t lineno,
    od_logctx *st)
{
	const char *g, *g2;
	size_t n = 0, n2 = 0;
	int64_t v, step;
	int rank;

	if (what < 0 || what >= CX_FRAME || !cx_match(c, what, line, len, 0))
		return;
	g = cx_group(c, line, 1, &n);
	g2 = cx_group(c, line, 2, &n2);
	switch (what) {
	case CX_ALLOC:
		if (g != NULL)
			rx_copy_text(st->alloc_conf, sizeof st->alloc_conf, g, n);
		break;
	case CX_XLA:
		if (g != NULL && g2 != NULL)
			cx_setting(st->xla_conf, sizeof st->xla_conf, g, n, g2,
			    n2);
		break;
	case CX_TF:
		if (g != NULL && g2 != NULL)
			cx_setting(st->tf_allocator, sizeof st->tf_allocator, g,
			    n, g2, n2);
		else if (cx_group(c, line, 3, &n) != NULL)
			cx_setting(st->tf_allocator, sizeof st->tf_allocator,
			    "TF_GPU_ALLOCATOR", 16, "cuda_malloc_async", 17);
		else if ((g = cx_group(c, line, 4, &n)) != NULL)
			cx_setting(st->tf_allocator, sizeof st->tf_allocator,
			    "allow_growth", 12, g, n);
		break;
	case CX_TF_RELEASE:
		cx_tf_release(c, line, st);
		break;
	case CX_SERVING:
		st->serving |= g != NULL ? 2 : 1;
		/* Text Generation Inference's image tag and --version line
		 * share the anchor "text-generation-". */
		if (g != NULL && cx_match(c, CX_TGI, line, len, 0))
			cx_tgi(c, line, st);
		break;
	case CX_TGI:
		cx_tgi(c, line, st);
		break;
	case CX_JAX_RELEASE: {
		/* pip's "Successfully installed jax-0.4.23 jaxlib-0.4.23"
		 * names both on one line: every match counts. */
		size_t at, mlen;

		do {
			cx_jax_release(c, line, st);
			if (!rx_group(c->m, 0, &at, &mlen) || mlen == 0)
				break;
			at += mlen;
		} while (at < len && cx_match(c, CX_JAX_RELEASE, line, len, at));
		break;
	}
	case CX_SHM:
		cx_shm(c, line, st->container, sizeof st->container);
		break;
	case CX_OOMKILLED:
		st->container_oom = cx_true(g);
		break;
	case CX_VLLM_RELEASE:
		/* Two releases in one log (two runs): the range of both. */
		v = rx_int(c->m, line, 1, 0) * 100 + rx_int(c->m, line, 2, 0);
		if (st->vllm_min < 0 || v < st->vllm_min)
			st->vllm_min = (int)v;
		if (v > st->vllm_max)
			st->vllm_max = (int)v;
		break;
	case CX_BATCH:
		if (g != NULL)
			st->batch_size = rx_int(c->m, line, 1, -1);
		break;
	case CX_ACCUM:
		if (g != NULL)
			st->accum_steps = rx_int(c->m, line, 1, -1);
		break;
	case CX_SEQ:
		if (g != NULL)
			st->seq_len = rx_int(c->m, line, 1, -1);
		break;
	case CX_PREC: {
		int k;

		for (k = 1; k <= 4; k++)
			if ((g = cx_group(c, line, k, &n)) != NULL)
				break;
		if (g == NULL)
			return;
		if ((n == 4 && memcmp(g, "bf16", 4) == 0) ||
		    (n == 8 && memcmp(g, "bfloat16", 8) == 0))
			strcpy(st->precision, "bf16");
		else if ((n == 4 && memcmp(g, "fp16", 4) == 0) ||
		    (n == 7 && memcmp(g, "float16", 7) == 0) ||
		    (n == 2 && memcmp(g, "16", 2) == 0))
			strcpy(st->precision, "fp16");
		else
			strcpy(st->precision, "fp32");
		break;
	}
	case CX_CKPT:
		if (g != NULL)
			st->grad_ckpt = g[0] == 'T' || g[0] == 't' || g[0] == '1';
		break;
	case CX_MEM: {
		const char *num, *unit;
		size_t nn, nu = 0;
		int key = cx_key_what(g, n);

		num = cx_group(c, line, 3, &nn);
		/* The unit after the number, or the one in the key. */
		if ((unit = cx_group(c, line, 4, &nu)) == NULL)
			unit = cx_group(c, line, 2, &nu);
		if (unit == NULL)
			unit = "", nu = 0;
		v = num != NULL ? cx_bytes(num, nn, unit, nu) : -1;
		cx_line_place(c, line, len, &step, &rank);
		cx_reading(st, key, v, step, rank, lineno);
		break;
	}
	case CX_MEM_DS:
		/* see_memory_usage prints no step. */
		cx_line_place(c, line, len, &step, &rank);
		cx_reading(st, OD_READING_ALLOCATED, g2 != NULL ?
		    cx_bytes(g, n, g2, n2) : -1, step, rank, lineno);
		break;
	case CX_MEM_MEGATRON:
		rank = (int)rx_int(c->m, line, 1, -1);
		step = rx_int(c->m, line, 2, -1);
		v = cx_group_bytes(c, line, 3, "MiB");
		if (rank < 0) {
			int64_t s2;

			cx_line_place(c, line, len, &s2, &rank);
		}
		cx_reading(st, OD_READING_ALLOCATED, v, step, rank, lineno);
		break;
	case CX_MEM_TITAN:
		v = cx_group_bytes(c, line, 1, "GiB");
		cx_line_place(c, line, len, &step, &rank);
		cx_reading(st, OD_READING_MAX_RESERVED, v, step, rank, lineno);
		break;
	case CX_MEM_MM:
		v = cx_group_bytes(c, line, 1, "MiB");
		cx_line_place(c, line, len, &step, &rank);
		cx_reading(st, OD_READING_MAX_ALLOCATED, v, step, rank, lineno);
		break;
	case CX_MEM_HF:
		v = cx_group_bytes(c, line, 2, "MiB");
		cx_reading(st, g[0] == 'a' ? OD_READING_ALLOC_DELTA :
		    OD_READING_PEAK_DELTA, v, -1, -1, lineno);
		break;
	case CX_MEM_ACCEL:
		v = cx_group_bytes(c, line, 1, "MiB");
		cx_line_place(c, line, len, &step, &rank);
		cx_reading(st, OD_READING_MAX_ALLOCATED, v, step, rank, lineno);
		break;
	case CX_SMI_HEAD:
	case CX_SMI_ROW:
		cx_smi(st, what == CX_SMI_HEAD, line, len, lineno);
		break;
	case CX_DMON:
		cx_dmon_head(st, line, len);
		break;
	case CX_SUMMARY:
		if (g != NULL) {
			st->sum_ooms = rx_int(c->m, line, 1, -1);
			st->sum_retries = rx_int(c->m, line, 2, -1);
		} else if ((g = cx_group(c, line, 3, &n)) != NULL) {
			g2 = cx_group(c, line, 4, &n2);
			st->sum_non_releasable = cx_bytes(g, n, g2, n2);
		} else if ((g = cx_group(c, line, 5, &n)) != NULL) {
			g2 = cx_group(c, line, 6, &n2);
			cx_reading(st, OD_READING_ALLOCATED, cx_bytes(g, n, g2, n2),
			    -1, -1, lineno);
		}
		break;
	case CX_LOADER:
		st->dataloader = 1;
		break;
	case CX_BFC:
		if (g == NULL || g2 == NULL)
			break;
		/* A Limit line starts a new block. */
		if (n == 5 && memcmp(g, "Limit", 5) == 0) {
			st->bfc_inuse = st->bfc_peak = -1;
			st->bfc_limit = rx_int(c->m, line, 2, -1);
		} else if (n == 5)
			st->bfc_inuse = rx_int(c->m, line, 2, -1);
		else
			st->bfc_peak = rx_int(c->m, line, 2, -1);
		st->bfc_line = lineno;
		break;
	case CX_VLLM: {
		size_t at = 0;
		int k;

		/* Every figure of the line: a failure gives the length and
		 * the estimate in one. */
		do {
			for (k = 1; k <= 12; k++)
				if ((g = cx_group(c, line, k, &n)) != NULL)
					break;
			at = rx_end(c->m) > at ? rx_end(c->m) : at + 1;
			if (k == 1 || k == 2)
				st->vllm_weights = cx_bytes(g, n, "GiB", 3);
			else if (k == 3 || k == 4)
				st->vllm_kv_cache = cx_bytes(g, n, "GiB", 3);
			else if (k == 5)
				st->vllm_kv_tokens = cx_count(g, n);
			else if (k >= 8 && k <= 10)
				st->vllm_max_len = cx_count(g, n);
			else if (k == 11 || k == 12)
				st->vllm_est_len = cx_count(g, n);
			else if (k == 6) {
				st->vllm_max_len = st->vllm_concurrency_len =
				    cx_count(g, n);
				if ((g = cx_group(c, line, 7, &n)) != NULL &&
				    cx_bytes(g, n, "", 0) >= 0) {
					char x[24];

					rx_copy_text(x, sizeof x, g, n);
					st->vllm_concurrency_x100 =
					    (int64_t)(strtod(x, NULL) * 100 + 0.5);
				}
			}
		} while (at < len && cx_match(c, CX_VLLM, line, len, at));
		break;
	}
	case CX_MEMCG:
		if (g != NULL && g2 != NULL) {
			st->memcg_usage = rx_int(c->m, line, 1, -1) * 1024;
			st->memcg_limit = rx_int(c->m, line, 2, -1) * 1024;
			st->memcg_line = lineno;
		}
		break;
	case CX_CGROUP:
		cx_cgroup_line(c, line, len, lineno, st);
		break;
	case CX_AFTER:
		/* A line for the run's first failure, which the scanner
		 * hands over (od_events_after) and clears. */
		st->after_what = OD_AFTER_NONE;
		st->after_rank = -1;
		if (g != NULL) {
			st->after_what = OD_AFTER_WATCHDOG;
			if (cx_match(c, CX_ARANK, line, len, 0)) {
				rank = (int)rx_int(c->m, line, 1, -1);
				st->after_rank = rank >= 0 ? rank :
				    (int)rx_int(c->m, line, 2, -1);
			}
		} else if (g2 != NULL) {
			st->after_what = OD_AFTER_SIGTERM;
		} else if (cx_group(c, line, 3, &n) != NULL) {
			st->root_cause_open = true;
		} else if (st->root_cause_open &&
		    cx_group(c, line, 4, &n) != NULL) {
			st->after_what = OD_AFTER_ROOT_CAUSE;
			st->after_rank = (int)rx_int(c->m, line, 4, -1);
			st->root_cause_open = false;
		}
		break;
	case CX_XID:
		if (g != NULL)
			st->xid = rx_int(c->m, line, 1, -1);
		else
			st->ecc = true;
		break;
	case CX_GPU:
		if (g != NULL)
			rx_copy_text(st->gpu_model, sizeof st->gpu_model, g, n);
		break;
	case CX_VISIBLE:
		if (g != NULL)
			rx_copy_text(st->visible_devices,
			    sizeof st->visible_devices, g, n);
		break;
	default:
		break;
	}
}

static int
cx_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

void
cx_series_of(const od_logctx *st, int rank, cx_series *s)
{
	const od_reading *last;
	int64_t v[OD_READINGS_MAX], rank_last[64];
	bool rank_seen[64] = { false };
	int i, n = 0;

	memset(s, 0, sizeof *s);
	s->first = s->last = s->min = s->max = s->median = -1;
	s->first_step = s->last_step = -1;
	s->first_step_bytes = s->last_step_bytes = -1;
	s->rank_low = s->rank_high = -1;
	s->high_rank = -1;
	if (st->nkept <= 0)
		return;
	last = &st->readings[st->nkept - 1];
	for (i = st->nkept - 1; rank >= 0 && i >= 0; i--)
		if (st->readings[i].rank == rank) {
			last = &st->readings[i];
			break;
		}
	/* Readings per GPU (nvidia-smi's): the event's GPU when it has
	 * some, else the last reading's.  The index is nvidia-smi's, the
	 * event's the one the process sees; they agree unless
	 * CUDA_VISIBLE_DEVICES renumbers the GPUs. */
	for (i = st->nkept - 1; last->device >= 0 && st->series_device >= 0 &&
	    i >= 0; i--)
		if (st->readings[i].device == st->series_device &&
		    st->readings[i].rank == last->rank) {
			last = &st->readings[i];
			break;
		}
	s->what = last->what;
	s->rank = last->rank;
	s->device = last->device;
	for (i = 0; i < st->nkept; i++) {
		const od_reading *r = &st->readings[i];

		if (r->what != s->what)
			continue;
		/* The last reading of each rank (ranks 0 to 63). */
		if (r->rank >= 0 && r->rank < 64) {
			rank_seen[r->rank] = true;
			rank_last[r->rank] = r->bytes;
		}
		if (!cx_in_series(s, r))
			continue;
		v[n++] = r->bytes;
		if (s->first < 0)
			s->first = r->bytes;
		s->last = r->bytes;
		if (s->min < 0 || r->bytes < s->min)
			s->min = r->bytes;
		if (r->bytes > s->max)
			s->max = r->bytes;
		if (r->step >= 0) {
			if (s->first_step < 0) {
				s->first_step = r->step;
				s->first_step_bytes = r->bytes;
			}
			s->last_step = r->step;
			s->last_step_bytes = r->bytes;
		}
	}
	s->n = n;
	s->growth = s->last - s->first;
	qsort(v, (size_t)n, sizeof v[0], cx_cmp_i64);
	s->median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	if (s->first_step >= 0 && s->last_step > s->first_step) {
		s->have_rate = true;
		s->per_step = (double)(s->last_step_bytes - s->first_step_bytes) /
		    (double)(s->last_step - s->first_step);
	}
	for (i = 0; i < 64; i++) {
		if (!rank_seen[i])
			continue;
		s->nranks++;
		if (s->rank_low < 0 || rank_last[i] < s->rank_low)
			s->rank_low = rank_last[i];
		if (rank_last[i] > s->rank_high) {
			s->rank_high = rank_last[i];
			s->high_rank = i;
		}
	}
}

void
cx_attach(cx_ctx *c, const od_logctx *state, od_event *ev)
{
	ev->ctx = *state;
	ev->ctx.series_device = ev->device;
	/* The event's own copy of the series, only as long as it is. */
	ev->ctx.readings = NULL;
	if (state->nkept > 0) {
		ev->ctx.readings = malloc((size_t)state->nkept *
		    sizeof *ev->ctx.readings);
		if (ev->ctx.readings == NULL) {
			ev->ctx.nkept = 0;
			c->nomem = true;
		} else {
			memcpy(ev->ctx.readings, state->readings,
			    (size_t)state->nkept * sizeof *ev->ctx.readings);
		}
	}
	/* The kernel prints the cgroup's usage and limit just before it
	 * names the process it kills (Linux's mm/memcontrol.c,
	 * mem_cgroup_print_oom_meminfo). */
	if (ev->kind == OD_KIND_HOST_OOM_KILLER && ev->host.limit < 0 &&
	    state->memcg_limit >= 0 &&
	    state->memcg_line + CX_MEMCG_LINES >= ev->line) {
		ev->host.limit = state->memcg_limit;
		ev->host.usage = state->memcg_usage;
	}
	/* The Slurm job of the cgroup named for this kill: the line just
	 * before it names its pid (Linux 4.19 and later), the old form does
	 * not, so the window alone holds it. */
	if (ev->kind == OD_KIND_HOST_OOM_KILLER && ev->host.job[0] == '\0' &&
	    state->memcg_job[0] != '\0' &&
	    state->memcg_job_line + CX_MEMCG_LINES >= ev->line &&
	    (state->memcg_job_pid < 0 || state->memcg_job_pid == ev->host.pid))
		memcpy(ev->host.job, state->memcg_job, sizeof state->memcg_job);
	/* The Stats block of the BFC dump just before TensorFlow's error
	 * (bfc_allocator.cc DumpMemoryLog, then the op's OOM): the figures
	 * the tf-bfc-ran-out recogniser reads when the dump is short. */
	if (ev->kind == OD_KIND_TF && state->bfc_limit >= 0 &&
	    state->bfc_line + CX_BFC_LINES >= ev->line &&
	    ev->mem.allowed < 0 && ev->mem.allocated < 0) {
		ev->mem.allowed = state->bfc_limit;
		ev->mem.allocated = state->bfc_inuse;
		ev->mem.peak = state->bfc_peak;
	}
}

/* Whether a traceback frame's file belongs to a library, not the user. */
static bool
cx_library_file(const char *f)
{
	static const char *const marks[] = {
		"site-packages", "dist-packages", "/lib/python", "<frozen",
		"/torch/", "/usr/lib/", "\\Lib\\", "<string>",
		/* The console scripts of launchers (torch's torchrun,
		 * accelerate's, deepspeed's): their frames are the
		 * launcher's, not the user's. */
		"/bin/torchrun", "/bin/accelerate", "/bin/deepspeed",
	};
	size_t i;

	for (i = 0; i < sizeof marks / sizeof marks[0]; i++)
		if (strstr(f, marks[i]) != NULL)
			return true;
	return false;
}

/* The phase the frames show; the order of the checks is their weight. */
static void
cx_phase(od_event *ev)
{
	static const struct {
		const char *phase;
		const char *marks[7];
	} phases[] = {
		{ "backward", { "backward", "run_backward", "autograd", NULL } },
		{ "optimizer", { "optimizer.step", "optim/", "_single_tensor_",
		    "_multi_tensor_", "zero_grad", NULL } },
		/* vLLM's engine loop runs one step of prefill and decode for
		 * its requests (vllm/engine/llm_engine.py LLMEngine.step,
		 * vllm/engine/multiprocessing/engine.py engine_step; the
		 * model runners' execute_model). */
		{ "generation", { "generate", "sample(", "decode",
		    "engine_step", "execute_model", NULL } },
		{ "evaluation", { "evaluat", "validation", "predict",
		    "eval_loop", "inference", NULL } },
		{ "forward", { "forward", "_call_impl", "__call__", "model(",
		    NULL } },
	};
	size_t p;
	int i, k;

	for (p = 0; p < sizeof phases / sizeof phases[0]; p++) {
		for (i = 0; i < ev->nframes; i++) {
			const od_frame *f = &ev->frames[i];

			for (k = 0; phases[p].marks[k] != NULL; k++) {
				const char *m = phases[p].marks[k];

				if (strstr(f->func, m) != NULL ||
				    strstr(f->code, m) != NULL ||
				    (strchr(m, '/') != NULL &&
				    strstr(f->file, m) != NULL)) {
					strcpy(ev->phase, phases[p].phase);
					return;
				}
			}
		}
	}
}

/* Finds the last occurrence of needle in hay[0..n). */
static const char *
cx_last(const char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	const char *p = hay, *last = NULL, *q;

	while (n >= k && (q = memmem(p, n, needle, k)) != NULL) {
		last = q;
		n -= (size_t)(q - p) + 1;
		p = q + 1;
	}
	return last;
}

/* How far back before an event cx_before looks for its step. */
#define CX_STEP_BYTES (32 * 1024)
/* How far after an event cx_after looks (of what the scanner holds). */
#define CX_AFTER_BYTES 4096
/* How far before the event the last frame of a long traceback may end. */
#define CX_TB_TAIL 4096

/*
 * Whether the traceback at tb is the event's.  The scanner gives more than
 * CX_STEP_BYTES only back to a traceback's header; a traceback that starts
 * that far back is the event's when it runs on to the event, its last
 * frame ending at most CX_TB_TAIL bytes before it, and not another
 * error's, long before.  A nearer one is taken as it is.
 */
static bool
cx_traceback_ends(cx_ctx *c, const char *buf, size_t len, const char *tb)
{
	size_t at = (size_t)(tb - buf), last = at;

	if (len <= CX_STEP_BYTES || at >= len - CX_STEP_BYTES)
		return true;
	/* The last frame line, looked for only near the event. */
	at = len - CX_TB_TAIL > at ? len - CX_TB_TAIL : at;
	while (cx_match(c, CX_FRAME, buf, len, at)) {
		last = rx_end(c->m);
		at = last;
	}
	return last > (size_t)(tb - buf) && len - last <= CX_TB_TAIL;
}

/*
 * Whether the progress bar whose count starts at buf[at] counts something
 * other than training steps: its label (the text before it on its line,
 * after the last carriage return, as tqdm redraws) names loading,
 * downloading, a dataset's map or an evaluation.  "Loading checkpoint
 * shards:  40%|####      | 2/5" is the second of five files, not step 2.
 */
static bool
cx_bar_not_steps(const char *buf, size_t at)
{
	static const char *const words[] = {
		"load", "download", "fetch", "shard", "map", "filter", "token",
		"generat", "process", "sav", "writ", "extract",
		"resolv", "evaluat", "validat", "predict", "infer", "test",
	};
	size_t from = at, i;

	while (from > 0 && buf[from - 1] != '\n' && buf[from - 1] != '\r' &&
	    at - from < 256)
		from--;
	for (i = 0; i < sizeof words / sizeof words[0]; i++)
		if (od_caseless_find(buf + from, at - from, words[i],
		    strlen(words[i])) != NULL)
			return true;
	return false;
}

/*
 * The frames of the traceback whose header is at buf[at], up to len, into
 * ev->frames (the innermost OD_FRAMES_MAX, the user's failing frame kept),
 * and the phase they show.
 */
static void
cx_frames(cx_ctx *c, const char *buf, size_t len, size_t at, od_event *ev)
{
	od_frame user;
	bool have_user = false;

	ev->nframes = 0;
	{
		const char *end = buf + len;

		while (cx_match(c, CX_FRAME, buf, len, at)) {
			size_t ms = rx_start(c->m), me = rx_end(c->m), indent;
			od_frame *f;
			const char *nl, *code, *ce;

			/* The room for the frames comes with the first. */
			if (ev->frames == NULL)
				ev->frames = calloc(OD_FRAMES_MAX,
				    sizeof *ev->frames);
			if (ev->frames == NULL) {
				c->nomem = true;
				break;
			}
			/* Keep the innermost frames: drop the oldest. */
			if (ev->nframes == OD_FRAMES_MAX) {
				memmove(ev->frames, ev->frames + 1,
				    (OD_FRAMES_MAX - 1) * sizeof ev->frames[0]);
				ev->nframes--;
			}
			f = &ev->frames[ev->nframes++];
			(void)rx_copy(c->m, buf, 1, f->file, sizeof f->file);
			f->line = rx_int(c->m, buf, 2, 0);
			(void)rx_copy(c->m, buf, 3, f->func, sizeof f->func);
			f->user = !cx_library_file(f->file);
			/* The source line follows, at the same prefix. */
			f->code[0] = '\0';
			indent = ms;
			while (indent > 0 && buf[indent - 1] != '\n')
				indent--;
			indent = ms - indent;
			nl = memchr(buf + me, '\n', len - me);
			at = me;
			if (nl != NULL && (size_t)(end - nl) > indent + 1) {
				code = nl + 1 + indent;
				ce = memchr(code, '\n', (size_t)(end - code));
				if (ce == NULL)
					ce = end;
				/* A CRLF log's '\r' is no part of the code. */
				while (ce > code && ce[-1] == '\r')
					ce--;
				while (code < ce && (*code == ' ' || *code == '\t'))
					code++;
				if (code < ce && strncmp(code, "File \"", 6) != 0)
					rx_copy_text(f->code, sizeof f->code, code,
					    (size_t)(ce - code));
			}
			if (f->user) {
				user = *f;
				have_user = true;
			}
		}
		/* The user's failing frame matters most: keep it. */
		if (have_user) {
			int i;

			for (i = 0; i < ev->nframes && !ev->frames[i].user; i++)
				;
			if (i == ev->nframes)
				ev->frames[0] = user;
		}
		cx_phase(ev);
	}
}

void
cx_before(cx_ctx *c, const char *buf, size_t len, od_event *ev)
{
	const char *tb = cx_last(buf, len, "Traceback (most recent call last)");
	size_t at;
	int64_t step = -1;

	/* The frames of the last traceback before the event. */
	ev->nframes = 0;
	if (tb != NULL && !cx_traceback_ends(c, buf, len, tb)) {
		/* Another error's, long before: none of this event's. */
		tb = NULL;
	}
	if (tb != NULL)
		cx_frames(c, buf, len, (size_t)(tb - buf), ev);
	/* The last step the log gave before the event, in its last
	 * CX_STEP_BYTES: the traceback's window may be longer. */
	at = len > CX_STEP_BYTES ? len - CX_STEP_BYTES : 0;
	while (cx_match(c, CX_STEP, buf, len, at)) {
		int64_t v = -1;
		int k;

		/* One of the four alternatives' groups took part (k ends
		 * one past it); the first is a progress bar's. */
		for (k = 1; k <= 4 && v < 0; k++)
			v = rx_int(c->m, buf, k, -1);
		if (v >= 0 && !(k == 2 && cx_bar_not_steps(buf,
		    rx_start(c->m))))
			step = v;
		at = rx_end(c->m) > at ? rx_end(c->m) : at + 1;
	}
	ev->step = step;
}

/* The end of the line at buf[at] (its '\n', or len). */
static size_t
cx_eol(const char *buf, size_t len, size_t at)
{
	const char *nl = memchr(buf + at, '\n', len - at);

	return nl != NULL ? (size_t)(nl - buf) : len;
}

/*
 * Where the traceback whose header is at buf[tb] ends: before the first
 * line after the header that does not start with the header's prefix (a
 * log prefix such as vLLM's "ERROR 04-27 09:07:04 [engine.py:160] ")
 * followed by a space or a tab, as its frames and code lines do; the
 * exception's own line, or the next record, ends it.
 */
static size_t
cx_traceback_end(const char *buf, size_t len, size_t tb)
{
	size_t start = tb, at, plen;

	while (start > 0 && buf[start - 1] != '\n')
		start--;
	plen = tb - start;
	at = cx_eol(buf, len, tb);
	while (at < len) {
		size_t line = at + 1;

		if (line + plen >= len || memcmp(buf + line, buf + start,
		    plen) != 0 || (buf[line + plen] != ' ' &&
		    buf[line + plen] != '\t'))
			return line;
		at = cx_eol(buf, len, line);
	}
	return len;
}

void
cx_after(cx_ctx *c, const char *buf, size_t len, od_event *ev)
{
	static const char header[] = "Traceback (most recent call last)";
	size_t at, lines;

	if (len > CX_AFTER_BYTES)
		len = CX_AFTER_BYTES;
	/*
	 * A traceback that starts on the line after the message (the rest
	 * of the message's own line, then one more): Python's
	 * logging.exception prints the message and then its traceback, as
	 * vLLM's engine does (vllm/engine/multiprocessing/engine.py,
	 * MQLLMEngine.start: logger.exception(repr(e))).  Only for an event
	 * with no frames of its own, and only that traceback's lines.
	 */
	if (ev->nframes == 0) {
		for (at = 0, lines = 0; at < len && lines < 2; lines++) {
			size_t eol = cx_eol(buf, len, at);
			const char *h = memmem(buf + at, eol - at, header,
			    sizeof header - 1);

			if (h != NULL) {
				size_t tb = (size_t)(h - buf);

				cx_frames(c, buf, cx_traceback_end(buf, len, tb),
				    tb, ev);
				break;
			}
			at = eol + 1;
		}
	}
	/*
	 * The settings below are read only for the kinds whose rules ask for
	 * them (shm_exhausted: a DataLoader's; tf_allocator,
	 * tf_library_memory, xla_preallocation: TensorFlow's, cuDNN's,
	 * cuBLAS's and XLA's): a log of many thousands of other events
	 * then costs no more than before.
	 */
	ev->ctx.later[0] = '\0';
	/* Docker's state of the container, which users paste after the
	 * kill: for a kill whose reason the log does not show. */
	if (ev->ctx.container_oom < 0 && ev->confidence == OD_CONF_LOW &&
	    cx_match(c, CX_OOMKILLED, buf, len, 0)) {
		size_t n = 0;
		const char *g = cx_group(c, buf, 1, &n);

		ev->ctx.container_oom = cx_true(g);
	}
	/*
	 * Text Generation Inference's launcher reports the failure of its
	 * shard or router after the error ("ERROR text_generation_launcher:
	 * Shard 0 failed to start", "Webserver Crashed",
	 * launcher/src/main.rs): its lines just after the event are the same
	 * server's.  Only its group counts (bit 2 of serving); the fixed
	 * strings first, so that other logs pay no regex search.
	 */
	if ((ev->ctx.serving & 2) == 0 &&
	    (memmem(buf, len, "text_generation_", 16) != NULL ||
	    memmem(buf, len, "text-generation-", 16) != NULL))
		for (at = 0; at < len && cx_match(c, CX_SERVING, buf, len, at); ) {
			size_t n = 0;

			if (cx_group(c, buf, 1, &n) != NULL) {
				ev->ctx.serving |= 2;
				break;
			}
			at = rx_end(c->m) > at ? rx_end(c->m) : at + 1;
		}
	if (ev->kind != OD_KIND_DATALOADER_KILLED && ev->kind != OD_KIND_TF &&
	    ev->kind != OD_KIND_XLA && ev->kind != OD_KIND_CUDNN &&
	    ev->kind != OD_KIND_CUBLAS)
		return;
	/* The container's shared memory, shown after the event when not
	 * before it. */
	if (ev->kind == OD_KIND_DATALOADER_KILLED &&
	    ev->ctx.container[0] == '\0')
		for (at = 0; at < len && cx_match(c, CX_SHM, buf, len, at); ) {
			cx_shm(c, buf, ev->ctx.container,
			    sizeof ev->ctx.container);
			at = rx_end(c->m) > at ? rx_end(c->m) : at + 1;
		}
	if (ev->kind == OD_KIND_DATALOADER_KILLED)
		return;
	/* The settings shown after the event: TensorFlow's, then XLA's. */
	for (int k = 0; k < 2; k++) {
		int what = k == 0 ? CX_TF : CX_XLA;

		for (at = 0; at < len && cx_match(c, what, buf, len, at); ) {
			size_t n = 0, n2 = 0;
			const char *g = cx_group(c, buf, 1, &n);
			const char *g2 = cx_group(c, buf, 2, &n2);

			if (g != NULL && g2 != NULL)
				cx_setting(ev->ctx.later, sizeof ev->ctx.later,
				    g, n, g2, n2);
			else if (what == CX_TF &&
			    (g2 = cx_group(c, buf, 4, &n2)) != NULL)
				cx_setting(ev->ctx.later, sizeof ev->ctx.later,
				    "allow_growth", 12, g2, n2);
			at = rx_end(c->m) > at ? rx_end(c->m) : at + 1;
		}
	}
}

/*
 * recog_stacks.c: the recognisers of every stack but PyTorch's caching
 * allocator, as a table (the sk_recogniser of recogniser.h).
 *
 * Each row is a recogniser: the kind, how sure its message makes us, the
 * fixed strings the prefilter needs for it, and a PCRE2 pattern whose
 * named groups say what they fill (sk_set_field below):
 *
 *   req, total, free, alloc, limit, peak, other   memory figures
 *   vm, anon, file, shmem, hlimit, husage         host figures
 *   device, pid, exit, rank                        integers
 *   comm, signal, error, shape, dtype, allocator   strings
 *   nonfatal                                       the line is a warning
 *
 * A size group's suffix gives its unit: none for a number with its unit
 * ("1.17GiB", "4.00G", "27.10GB"), _b for bytes, _kb for KiB, _gib for
 * GiB, _bin for a unit written "GB" that means GiB.  The comment above
 * each group of rows names the program that prints the messages; the
 * fixtures in fixtures/stacks/ (with their sources in
 * fixtures/SOURCES-stacks.md) show each of them.  Where a message belongs
 * in this table rather than in a grammar: see recog_pytorch.c.
 *
 * A row may read on into the lines after its match (follow): the Stats
 * block after a TensorFlow BFC warning, the "Cuda failure" line after an
 * NCCL wrapper, the exit code after Kubernetes' OOMKilled.  A required
 * follow is a condition: without it the row gives no event.
 *
 * In a pattern, a plain space stands for any run of blanks and line
 * breaks (sk_widen), so that wrapped messages still match; a space before
 * a quantifier stands for one optional blank.
 */
#define _GNU_SOURCE             /* memmem */
#include <stdlib.h>
#include <string.h>

#include "recogniser.h"

/* The longest pattern once widened, NUL included. */
#define SK_PATTERN_MAX 2048

typedef struct {
	od_kind kind;
	od_confidence conf;
	const char *anchors;    /* '|'-separated; a leading '~' is caseless */
	const char *pattern;
	const char *follow;     /* NULL, or a pattern for the lines after */
	int follow_lines;
	bool follow_required;
	const char *framework;  /* NULL: the kind's */
} sk_spec;

static const char sk_weak[] = "the node's kernel log (dmesg -T, journalctl "
    "-k) showing 'Killed process <pid>' at that time, or the scheduler's "
    "out-of-memory record";
static const char sk_k8s_weak[] = "the pod's last state 'Reason: OOMKilled' "
    "(kubectl describe pod) or the node's kernel log";

#define KB_STATS "(?<vm_kb>[\\d,]+)kB, anon-rss:(?<anon_kb>[\\d,]+)kB, " \
    "file-rss:(?<file_kb>[\\d,]+)kB(?:, shmem-rss:(?<shmem_kb>[\\d,]+)kB)?"
#define KILLED_PROCESS "Killed process (?<pid>\\d+) \\((?<comm>[^)\\n]*)\\)" \
    "(?:,? (?:total-vm|vsz):" KB_STATS ")?"

static const sk_spec sk_specs[] = {
	/* The CUDA runtime and driver.  The "Search for" suffix is PyTorch's
	 * own (c10/cuda/CUDAMiscFunctions.cpp).  The blank after "error:" may
	 * be missing, as a user's copy has it (bluer555/CR-GAN#8,
	 * "RuntimeError: CUDA error:out of memory"). */
	{ .kind = OD_KIND_CUDA_RAW, .conf = OD_CONF_HIGH,
	  .anchors = "CUDA error: out of memory|CUDA error:out of memory",
	  .pattern =
	    "CUDA error: ?out of memory\\s*Search for .(?<error>"
	    "cudaErrorMemoryAllocation). in \\S+(?: for more information\\.)?",
	  .framework = "pytorch" },
	{ .kind = OD_KIND_CUDA_RAW, .conf = OD_CONF_HIGH,
	  .anchors =
	    "CUDA error: out of memory|CUDA error:out of memory|"
	    "CUDA driver error: out of memory|"
	    "CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|"
	    "cudaMalloc failed: out of memory|Failed to cudaMalloc",
	  .pattern =
	    "(?:CUDA error: ?out of memory|CUDA driver error: out of memory|"
	    "(?<error>CUDA_ERROR_OUT_OF_MEMORY)(?:: out of memory)?|"
	    "cudaMalloc failed: out of memory)"
	    "(?:\\s*Search for .(?<error>cudaErrorMemoryAllocation). in \\S+"
	    "(?: for more information\\.)?)?"
	    "|(?:Search for .)?(?<error>cudaErrorMemoryAllocation).?"
	    "|Failed to cudaMalloc (?<req_b>\\d+) bytes on device (?<device>\\d+)"
	    " \\(error 2 out of memory\\)?" },
	/* PyTorch's THC (0.4 and 1.0): the check line, then the exception. */
	{ .kind = OD_KIND_CUDA_RAW, .conf = OD_CONF_HIGH,
	  .anchors = "cuda runtime error (2)|error=2 : out of memory",
	  .pattern =
	    "THCudaCheck FAIL file=\\S+ line=\\d+ error=2 : out of memory|"
	    "cuda runtime error \\(2\\) : out of memory(?: at \\S+)?",
	  .follow = "cuda runtime error \\(2\\) : out of memory(?: at \\S+)?",
	  .follow_lines = 4,
	  .framework = "pytorch" },
	{ .kind = OD_KIND_HIP, .conf = OD_CONF_HIGH,
	  .anchors =
	    "HIP error: out of memory|hipErrorOutOfMemory|"
	    "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
	  .pattern =
	    "HIP error: out of memory(?:\\s*Search for .(?<error>"
	    "hipErrorOutOfMemory).)?|(?:Search for .)?(?<error>"
	    "hipErrorOutOfMemory).?|(?<error>HSA_STATUS_ERROR_OUT_OF_RESOURCES)" },
	/* cuBLAS, and hipBLAS on ROCm: the handle or workspace allocation. */
	{ .kind = OD_KIND_CUBLAS, .conf = OD_CONF_HIGH,
	  .anchors = "CUBLAS_STATUS_ALLOC_FAILED|HIPBLAS_STATUS_ALLOC_FAILED",
	  .pattern =
	    "(?:CUDA error: )?(?<error>(?:CU|HIP)BLAS_STATUS_ALLOC_FAILED)"
	    "(?: when calling `[^`\\n]*`)?" },
	{ .kind = OD_KIND_CUBLAS, .conf = OD_CONF_MEDIUM,
	  .anchors = "CUBLAS_STATUS_NOT_INITIALIZED",
	  .pattern =
	    "(?:CUDA error: )?(?<error>CUBLAS_STATUS_NOT_INITIALIZED) when "
	    "calling `cublasCreate\\(handle\\)`" },
	/* cuDNN: the workspace, or no algorithm that fits. */
	{ .kind = OD_KIND_CUDNN, .conf = OD_CONF_HIGH,
	  .anchors =
	    "CUDNN_STATUS_ALLOC_FAILED|NOT_ENOUGH_WORKSPACE|"
	    "Not enough memory for workspace",
	  .pattern =
	    "(?:cuDNN error: |Error in CuDNN: )?(?<error>CUDNN_STATUS_ALLOC_FAILED|"
	    "CUDNN_STATUS_NOT_ENOUGH_WORKSPACE)|Not enough memory for "
	    "workspace!?" },
	{ .kind = OD_KIND_CUDNN, .conf = OD_CONF_MEDIUM,
	  .anchors = "Unable to find a valid cuDNN algorithm",
	  .pattern =
	    "Unable to find a valid cuDNN algorithm to run convolution" },
	/* NCCL: its WARN lines, and PyTorch's ProcessGroupNCCL wrapper, which
	 * counts only with the CUDA failure it wraps. */
	{ .kind = OD_KIND_NCCL, .conf = OD_CONF_HIGH,
	  .anchors = "Cuda failure",
	  .pattern =
	    "(?:\\[(?<device>\\d+)\\] \\S+ NCCL WARN )?Cuda failure (?:2 )?"
	    "'out of memory'" },
	{ .kind = OD_KIND_NCCL, .conf = OD_CONF_HIGH,
	  .anchors = "Failed to CUDA calloc",
	  .pattern =
	    "(?:\\[(?<device>\\d+)\\] \\S+ NCCL WARN )?Failed to CUDA calloc"
	    "(?: async)? (?<req_b>\\d+) bytes" },
	{ .kind = OD_KIND_NCCL, .conf = OD_CONF_HIGH,
	  .anchors = "unhandled cuda error|ncclUnhandledCudaError",
	  .pattern =
	    "(?:NCCL error in: \\S+, )?unhandled cuda error(?: \\(run with "
	    "NCCL_DEBUG=INFO for details\\))?(?:, NCCL version [\\w.+-]+)?"
	    "(?:\\s*(?<error>ncclUnhandledCudaError)(?:: Call to CUDA function "
	    "failed\\.)?)?|"
	    "(?<error>ncclUnhandledCudaError)(?:: Call to CUDA function "
	    "failed\\.)?",
	  .follow = "Cuda failure (?:2 (?:'out of memory')?|'out of memory')",
	  .follow_lines = 8,
	  .follow_required = true },
	/* MPS (aten/src/ATen/mps/MPSAllocator.mm) and the Metal buffer limit. */
	{ .kind = OD_KIND_MPS, .conf = OD_CONF_HIGH,
	  .anchors = "MPS backend out of memory",
	  .pattern =
	    "MPS backend out of memory \\(MPS allocated: (?<alloc_bin>[\\d.]+ ?"
	    "(?:[KMGT]i?B|bytes)), other allocations: (?<other_bin>[\\d.]+ ?"
	    "(?:[KMGT]i?B|bytes))(?:, max allowed: (?<limit_bin>[\\d.]+ ?"
	    "(?:[KMGT]i?B|bytes)))?\\)\\.(?: Tried to allocate (?<req_bin>"
	    "[\\d.]+ ?(?:[KMGT]i?B|bytes)) on (?:shared|private) pool\\.)?" },
	{ .kind = OD_KIND_MPS, .conf = OD_CONF_MEDIUM,
	  .anchors = "Invalid buffer size",
	  .pattern = "Invalid buffer size: (?<req>[\\d.]+ ?(?:[KMGT]iB|bytes))" },
	/* TensorFlow: the ResourceExhaustedError's text. */
	{ .kind = OD_KIND_TF, .conf = OD_CONF_HIGH,
	  .anchors = "OOM when allocating tensor",
	  .pattern =
	    "OOM when allocating tensor (?:with|of) shape ?(?<shape>\\[[-0-9, ]*\\])"
	    "(?: and type (?<dtype>\\w+))?(?: on (?:\\S*?device:GPU:(?<device>"
	    "\\d+)\\S*|\\S+))?(?: by allocator (?<allocator>\\w+))?" },
	/* TensorFlow's BFC allocator (bfc_allocator.cc): its warning and the
	 * Stats block after it. */
	{ .kind = OD_KIND_TF, .conf = OD_CONF_HIGH,
	  .anchors = "ran out of memory trying to allocate",
	  .pattern =
	    "Allocator \\((?<allocator>GPU_(?<device>\\d+)_bfc|[^)\\n]+)\\) ran "
	    "out of memory trying to allocate (?<req>[\\d.]+ ?[KMGTPE]?i?B)"
	    "(?: \\(rounded to (?<req_b>\\d+)\\))?(?<nonfatal>(?: from the \\w+ "
	    "end)? with freed_by_count=\\d+|[^\\n]*?The caller indicates that "
	    "this is not a failure)?",
	  .follow =
	    "(?m)^\\s*(?:Limit:\\s+(?<limit_b>\\d+)|InUse:\\s+(?<alloc_b>\\d+)|"
	    "MaxInUse:\\s+(?<peak_b>\\d+))\\s*$|OOM when allocating tensor "
	    "(?:with|of) shape ?(?<shape>\\[[-0-9, ]*\\])(?: and type "
	    "(?<dtype>\\w+))?(?: on \\S+)?(?: by allocator \\w+)?",
	  .follow_lines = 40 },
	/* TensorFlow 1.x: the stream executor's allocation failure. */
	{ .kind = OD_KIND_TF, .conf = OD_CONF_HIGH,
	  .anchors = "bytes) from device",
	  .pattern =
	    "failed to allocate (?<req>[\\d.]+ ?[KMGTPE]?i?B?) \\((?<req_b>\\d+) "
	    "bytes\\) from device: (?<error>\\w+)(?:: out of memory)?" },
	/* XLA and JAX: RESOURCE_EXHAUSTED, PJRT's allocator, TPU memory spaces. */
	{ .kind = OD_KIND_XLA, .conf = OD_CONF_HIGH,
	  .anchors = "memory while trying to allocate",
	  .pattern =
	    "(?:RESOURCE_EXHAUSTED: )?Out of (?:host )?memory while trying to "
	    "allocate (?<req_b>\\d+) bytes\\.?" },
	{ .kind = OD_KIND_XLA, .conf = OD_CONF_HIGH,
	  .anchors = "Out of memory allocating",
	  .pattern =
	    "(?:RESOURCE_EXHAUSTED: )?Out of memory allocating (?<req_b>\\d+) "
	    "bytes\\.?" },
	{ .kind = OD_KIND_XLA, .conf = OD_CONF_HIGH,
	  .anchors = "Failed to allocate request for",
	  .pattern =
	    "(?:(?i:resource exhausted): )?Failed to allocate request for "
	    "(?<req>[\\d.]+ ?[KMGT]?i?B) \\((?<req_b>\\d+)B\\) on device ordinal "
	    "(?<device>\\d+)" },
	{ .kind = OD_KIND_XLA, .conf = OD_CONF_HIGH,
	  .anchors = "Ran out of memory in memory space",
	  .pattern =
	    "Ran out of memory in memory space \\w+\\. Used "
	    "(?<alloc>[\\d.]+[KMGT]?) of (?<total>[\\d.]+[KMGT]?) \\w+\\.(?: "
	    "Exceeded \\w+ capacity by [\\d.]+[KMGT]?\\.)?" },
	/* Linux's OOM killer (mm/oom_kill.c); the memcg lines before a
	 * kill are context (context.c). */
	{ .kind = OD_KIND_HOST_OOM_KILLER, .conf = OD_CONF_HIGH,
	  .anchors = "Killed process",
	  .pattern =
	    "(?:(?:Memory cgroup out of memory|Out of memory(?: \\(oom_kill_"
	    "allocating_task\\))?): )?" KILLED_PROCESS },
	{ .kind = OD_KIND_HOST_OOM_KILLER, .conf = OD_CONF_HIGH,
	  .anchors = "Kill process",
	  .pattern =
	    "Kill process (?<pid>\\d+) \\((?<comm>[^)\\n]*)\\) score -?\\d+ "
	    "(?:or sacrifice child|and children)" },
	/* A shell's "Killed", exit status 137, torchrun's exitcode -9, an IDE's
	 * wording: a SIGKILL, no more. */
	{ .kind = OD_KIND_HOST_OOM_KILLER, .conf = OD_CONF_LOW,
	  .anchors = "Killed|\xe5\xb7\xb2\xe6\x9d\x80\xe6\xad\xbb",
	  .pattern =
	    "line \\d+: +(?<pid>\\d+) (?<signal>Killed|\xe5\xb7\xb2\xe6\x9d\x80"
	    "\xe6\xad\xbb) +[^\\n]*|(?m)(?<![A-Za-z])(?<signal>Killed|"
	    "\xe5\xb7\xb2\xe6\x9d\x80\xe6\xad\xbb)[ \\t]*$" },
	{ .kind = OD_KIND_HOST_OOM_KILLER, .conf = OD_CONF_LOW,
	  .anchors =
	    "exit code 137|exit status 137|exitcode|received by PID|"
	    "exit status -9|Signals.SIGKILL|return code = -9|exit code: 137",
	  .pattern =
	    "exit(?:ed with)? (?:code|status):? (?<exit>137)\\b(?: \\(interrupted "
	    "by signal 9: (?<signal>SIGKILL)\\))?|"
	    "failed \\(exitcode: (?<exit>-9)\\) local_rank: \\d+ \\(pid: "
	    "(?<pid>\\d+)\\)|exitcode *: (?<exit>-9) \\(pid: (?<pid>\\d+)\\)|"
	    "Signal 9 \\((?<signal>SIGKILL)\\) received by PID (?<pid>\\d+)|"
	    "returned non-zero exit status (?<exit>137|-9)|died with <Signals\\."
	    "(?<signal>SIGKILL): 9>|exits with return code = (?<exit>-9)" },
	/* PyTorch's DataLoader workers (torch/csrc/DataLoader.cpp). */
	{ .kind = OD_KIND_DATALOADER_KILLED, .conf = OD_CONF_LOW,
	  .anchors = "is killed by signal: Killed",
	  .pattern =
	    "DataLoader worker \\(pid(?:\\(s\\))? (?<pid>\\d+)[\\d, ]*\\) is "
	    "killed by signal: (?<signal>Killed)\\." },
	{ .kind = OD_KIND_DATALOADER_KILLED, .conf = OD_CONF_HIGH,
	  .anchors = "is killed by signal: Bus error|Unexpected bus error",
	  .pattern =
	    "DataLoader worker \\(pid(?:\\(s\\))? (?<pid>\\d+)[\\d, ]*\\) is "
	    "killed by signal: (?<signal>Bus error)\\.(?: It is possible that "
	    "dataloader's workers are out of shared memory\\. Please try to "
	    "raise your shared memory limit\\.)?|ERROR: Unexpected (?<signal>bus "
	    "error) encountered in worker\\. This might be caused by "
	    "insufficient shared memory \\(shm\\)\\.?" },
	/* Slurm's cgroup plugin and srun. */
	{ .kind = OD_KIND_SLURM_OOM, .conf = OD_CONF_HIGH,
	  .anchors = "oom-kill event|oom_kill event",
	  .pattern =
	    "Detected \\d+ oom[-_]kill events?(?:\\(s\\))? in (?:step \\S+ cgroup|"
	    "(?:StepId|JobId)=[\\w.+]+?(?: cgroup)?)\\.(?=\\s|$)(?: Some of (?:the "
	    "step tasks have been OOM Killed|your processes may have been "
	    "killed by the cgroup out-of-memory handler)\\.)?",
	  .follow = "tasks? [-\\d,]+: Out Of Memory",
	  .follow_lines = 8 },
	{ .kind = OD_KIND_SLURM_OOM, .conf = OD_CONF_HIGH,
	  .anchors = "Out Of Memory",
	  .pattern = "tasks? [-\\d,]+: Out Of Memory" },
	{ .kind = OD_KIND_SLURM_OOM, .conf = OD_CONF_HIGH,
	  .anchors = "exceeded memory limit|exceeded virtual memory limit",
	  .pattern =
	    "(?:StepId|JobId)=\\S+ exceeded (?:virtual )?memory limit \\("
	    "(?<husage_b>\\d+) > (?<hlimit_b>\\d+)\\), being killed|"
	    "(?:Job|Step) [\\d.]+ exceeded (?:virtual )?memory limit \\("
	    "(?<husage_kb>\\d+) > (?<hlimit_kb>\\d+)\\), being killed" },
	{ .kind = OD_KIND_SLURM_OOM, .conf = OD_CONF_HIGH,
	  .anchors = "OUT_OF_ME",
	  .pattern = "(?<![A-Z_])OUT_OF_ME(?:MORY|\\+)" },
	{ .kind = OD_KIND_SLURM_OOM, .conf = OD_CONF_HIGH,
	  .anchors =
	    "limit at least once during execution|memory limit at some point",
	  .pattern =
	    "(?<nonfatal>hit memory(?:\\+swap)? limit at least once during "
	    "execution|Exceeded (?:step|job) memory limit at some point)\\.?" },
	/* Kubernetes: kubectl describe pod, and the kubelet's eviction. */
	{ .kind = OD_KIND_K8S_OOMKILLED, .conf = OD_CONF_HIGH,
	  .anchors = "OOMKilled",
	  .pattern = "(?:Reason:\\s*)?OOMKilled",
	  .follow =
	    "Exit Code:\\s+(?<exit>\\d+)|Limits:\\s*\\n(?:[^\\n]*\\n){0,3}?\\s*"
	    "memory:\\s+(?<hlimit>\\d+(?:\\.\\d+)?(?:[KMGT]i)?)",
	  .follow_lines = 14 },
	{ .kind = OD_KIND_K8S_OOMKILLED, .conf = OD_CONF_LOW,
	  .anchors = "Exit Code:",
	  .pattern = "Exit Code:\\s+(?<exit>137)\\b" },
	{ .kind = OD_KIND_K8S_OOMKILLED, .conf = OD_CONF_MEDIUM,
	  .anchors = "low on resource: memory",
	  .pattern = "The node was low on resource: memory\\.?" },
	/* Ray's memory monitor. */
	{ .kind = OD_KIND_RAY, .conf = OD_CONF_HIGH,
	  .anchors = "running low on memory|killed due to memory pressure",
	  .pattern =
	    "Task was killed due to the node running low on memory\\.?(?:[\\s\\S]"
	    "{0,800}?pid=(?<pid>\\d+))?(?:[\\s\\S]{0,400}? was (?<husage>[\\d.]+ ?"
	    "GB) / (?<hlimit>[\\d.]+ ?GB))?|killed due to memory pressure "
	    "\\(OOM\\)" },
	/* vLLM: the KV cache does not fit. */
	{ .kind = OD_KIND_VLLM_KV_CACHE, .conf = OD_CONF_HIGH,
	  .anchors =
	    "No available memory for the cache blocks|KV cache is needed|"
	    "stored in KV cache|desired GPU memory utilization",
	  .pattern =
	    "No available memory for the cache blocks\\.?|\\((?<req_gib>[\\d.]+) "
	    "GiB KV cache is needed, which is larger than the available KV "
	    "cache memory \\((?<free_gib>[\\d.]+) GiB\\)\\.?|The model's max seq "
	    "len \\(\\d+\\) is larger than the maximum number of tokens that can "
	    "be stored in KV cache \\(\\d+\\)\\.?|Free memory on device(?: \\S+)? "
	    "\\((?<free_gib>[\\d.]+)/(?<total_gib>[\\d.]+) GiB\\) on startup is "
	    "less than desired GPU memory utilization \\([\\d.]+, (?<req_gib>"
	    "[\\d.]+) GiB\\)" },
	/* llama.cpp */
	{ .kind = OD_KIND_GGML, .conf = OD_CONF_HIGH,
	  .anchors = "cudaMalloc failed|buffer of size",
	  .pattern =
	    "allocating (?<req>[\\d.]+ MiB) on device (?<device>\\d+): cudaMalloc "
	    "failed: out of memory|failed to allocate (?<error>\\w+) buffer of "
	    "size (?<req_b>\\d+)",
	  .follow =
	    "failed to allocate \\w+ buffer of size (?<req_b>\\d+)|(?<nonfatal>"
	    "retrying without)",
	  .follow_lines = 4 },
	{ .kind = OD_KIND_ONNXRUNTIME, .conf = OD_CONF_HIGH,
	  .anchors =
	    "Failed to allocate memory for requested buffer|is smaller than requested bytes",
	  .pattern =
	    "Failed to allocate memory for requested buffer of size (?<req_b>\\d+)"
	    "|Available memory of (?<free_b>\\d+) is smaller than requested "
	    "bytes of (?<req_b>\\d+)" },
	{ .kind = OD_KIND_TENSORRT, .conf = OD_CONF_HIGH,
	  .anchors = "Requested amount of",
	  .pattern =
	    "Requested amount of (?:GPU )?memory \\((?<req_b>\\d+) bytes\\) could "
	    "not be allocated\\.?",
	  .follow = "(?<nonfatal>Skipping tactic)",
	  .follow_lines = 3 },
	{ .kind = OD_KIND_CUPY, .conf = OD_CONF_HIGH,
	  .anchors = "Out of memory allocating",
	  .pattern =
	    "Out of memory allocating (?<req_b>\\d{1,3}(?:,\\d{3})+|\\d+) bytes "
	    "\\(allocated so far: (?<alloc_b>[\\d,]+) bytes(?:, limit set to: "
	    "(?<limit_b>[\\d,]+) bytes)?\\)\\.?" },
	/* Host memory: PyTorch's CPU allocator, NumPy, Python. */
	{ .kind = OD_KIND_HOST_ALLOC, .conf = OD_CONF_HIGH,
	  .anchors = "DefaultCPUAllocator",
	  .pattern =
	    "DefaultCPUAllocator: (?:can't allocate memory|not enough memory): "
	    "you tried to allocate (?<req_b>\\d+) bytes\\.?(?: Error code \\d+ "
	    "\\([^)\\n]*\\))?",
	  .framework = "pytorch" },
	{ .kind = OD_KIND_HOST_ALLOC, .conf = OD_CONF_HIGH,
	  .anchors = "Unable to allocate",
	  .pattern =
	    "(?:[\\w.]*_ArrayMemoryError: )?Unable to allocate (?<req>[\\d.]+ ?"
	    "(?:[KMGTPE]iB|bytes)) for an array with shape (?<shape>\\([^)\\n]*"
	    "\\)) and data type (?<dtype>\\w+)",
	  .framework = "numpy" },
	{ .kind = OD_KIND_HOST_ALLOC, .conf = OD_CONF_HIGH,
	  .anchors = "MemoryError|Cannot allocate memory",
	  .pattern =
	    "(?m)(?<![\\w.])MemoryError(?::[ \\t]*|[ \\t]*$)|\\[Errno 12\\] Cannot "
	    "allocate memory",
	  .framework = "python" },
};

#define SK_N ((int)(sizeof sk_specs / sizeof sk_specs[0]))

/* A row is a candidate of recogniser.h: the extractor's skip mask has a
 * bit for each. */
_Static_assert(SK_N <= RG_CANDIDATES_MAX, "a skip mask names every row");

typedef struct {
	rx_code *re[SK_N];
	rx_code *follow[SK_N];
	rx_match *m;
	/* The rows' anchors, split at '|': nanchors of them, their text in
	 * one block of NUL-terminated strings. */
	ex_anchor *anchors;
	size_t nanchors;
	char *anchor_text;
} sk_set;

/*
 * Writes pattern with each plain space outside a character class turned
 * into \s+ (or \s before a quantifier).  False when it does not fit.
 */
static bool
sk_widen(const char *p, char *out, size_t cap)
{
	size_t n = 0;
	bool cls = false;

	for (; *p != '\0'; p++) {
		const char *rep = NULL;
		char one[3] = { *p, '\0', '\0' };

		if (*p == '\\' && p[1] != '\0') {
			one[1] = *++p;
			rep = one;
		} else if (*p == '[' && !cls) {
			cls = true;
		} else if (*p == ']' && cls) {
			cls = false;
		} else if (*p == ' ' && !cls) {
			rep = strchr("?*+{", p[1]) != NULL && p[1] != '\0' ?
			    "\\s" : "\\s+";
		}
		if (rep == NULL)
			rep = one;
		if (n + strlen(rep) + 1 > cap)
			return false;
		memcpy(out + n, rep, strlen(rep));
		n += strlen(rep);
	}
	out[n] = '\0';
	return true;
}

static rx_code *
sk_compile(const char *pattern, int row, unsigned options, bool jit,
    od_error *err)
{
	char wide[SK_PATTERN_MAX];

	if (!sk_widen(pattern, wide, sizeof wide)) {
		od_error_set(err, "recog_stacks.c", (uint64_t)row + 1, 0,
		    "internal pattern too long");
		return NULL;
	}
	return rx_compile(wide, RX_DUPNAMES | options, jit, "recog_stacks.c",
	    (uint64_t)row + 1, err);
}

/* Splits the rows' '|'-separated anchors into s->anchors, in the order of
 * the table; the extractor drops the repeated ones. */
static bool
sk_split_anchors(sk_set *s, od_error *err)
{
	size_t count = 0, bytes = 0, used = 0;
	int i;

	for (i = 0; i < SK_N; i++) {
		const char *a = sk_specs[i].anchors;

		count += 1;
		for (; *a != '\0'; a++)
			count += *a == '|';
		bytes += strlen(sk_specs[i].anchors) + 1;
	}
	s->anchors = calloc(count, sizeof *s->anchors);
	s->anchor_text = malloc(bytes);
	if (s->anchors == NULL || s->anchor_text == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return false;
	}
	for (i = 0; i < SK_N; i++) {
		const char *a = sk_specs[i].anchors;

		while (*a != '\0') {
			size_t len = strcspn(a, "|");
			bool caseless = *a == '~';

			if (caseless)
				a++, len--;
			if (len > 0) {
				memcpy(s->anchor_text + used, a, len);
				s->anchor_text[used + len] = '\0';
				s->anchors[s->nanchors].text = s->anchor_text + used;
				s->anchors[s->nanchors].caseless = caseless;
				s->nanchors++;
				used += len + 1;
			}
			a += len;
			if (*a == '|')
				a++;
		}
	}
	return true;
}

static void
sk_destroy(void *self)
{
	sk_set *s = self;
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < SK_N; i++) {
		rx_code_free(s->re[i]);
		rx_code_free(s->follow[i]);
	}
	rx_match_free(s->m);
	free(s->anchors);
	free(s->anchor_text);
	free(s);
}

static void *
sk_create(bool jit, od_error *err)
{
	sk_set *s = calloc(1, sizeof *s);
	int i;

	if (s == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	for (i = 0; i < SK_N; i++) {
		s->re[i] = sk_compile(sk_specs[i].pattern, i, RX_OFFSET_LIMIT,
		    jit, err);
		if (s->re[i] == NULL ||
		    (sk_specs[i].follow != NULL && (s->follow[i] =
		    sk_compile(sk_specs[i].follow, i, 0, jit, err)) == NULL)) {
			sk_destroy(s);
			return NULL;
		}
	}
	if ((s->m = rx_match_new(err)) == NULL || !sk_split_anchors(s, err)) {
		sk_destroy(s);
		return NULL;
	}
	return s;
}

static const ex_anchor *
sk_anchors(const void *self, size_t *n)
{
	const sk_set *s = self;

	*n = s->nanchors;
	return s->anchors;
}

static bool
sk_follows(const void *self, int i)
{
	(void)self;
	return i >= 0 && i < SK_N && sk_specs[i].follow != NULL;
}

/*
 * Whether the match at t[ms] is a message quoted in source code that a
 * traceback shows ("raise ValueError(\"No available memory ...\"").
 */
static bool
sk_quoted_in_source(const char *t, size_t ms)
{
	size_t b = ms;

	if (ms == 0 || (t[ms - 1] != '"' && t[ms - 1] != '\''))
		return false;
	while (b > 0 && t[b - 1] != '\n' && ms - b < 200)
		b--;
	return memmem(t + b, ms - b, "raise ", 6) != NULL;
}

/* The earliest row's match that covers the hit, among the rows not in
 * skip; of two at the same byte, the row first in the table. */
static int
sk_find(void *self, const char *t, size_t tlen, size_t ht, uint64_t skip,
    size_t *ms)
{
	sk_set *s = self;
	int best = -1, i;
	size_t at;

	*ms = SIZE_MAX;
	for (i = 0; i < SK_N; i++) {
		if (skip & (UINT64_C(1) << i))
			continue;
		if (rg_cover(s->m, s->re[i], t, tlen, ht, sk_quoted_in_source,
		    &at) && at < *ms) {
			*ms = at;
			best = i;
		}
	}
	return best;
}

/* A decimal integer, maybe negative, maybe with thousands commas. */
static bool
sk_int(const char *p, size_t n, int64_t *out)
{
	int64_t v = 0;
	size_t i = 0;
	bool neg = n > 0 && p[0] == '-', any = false;

	for (i = neg; i < n; i++) {
		if (p[i] == ',')
			continue;
		if (p[i] < '0' || p[i] > '9' || v > (INT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (p[i] - '0');
		any = true;
	}
	*out = neg ? -v : v;
	return any;
}

/* Reads the size in p[0..n) in the unit that the group's suffix names. */
static bool
sk_size(const char *suffix, const char *p, size_t n, int64_t *out)
{
	char buf[64];
	int64_t v;

	if (strcmp(suffix, "b") == 0)
		return sk_int(p, n, out) && *out >= 0;
	if (strcmp(suffix, "kb") == 0) {
		if (!sk_int(p, n, &v) || v < 0 || v > INT64_MAX / 1024)
			return false;
		*out = v * 1024;
		return true;
	}
	if (strcmp(suffix, "bin") == 0) {
		/* A unit written "GB" that means GiB (old MPS messages). */
		if (n + 2 > sizeof buf)
			return false;
		memcpy(buf, p, n);
		if (n >= 2 && buf[n - 1] == 'B' && strchr("KMGT", buf[n - 2]) &&
		    buf[n - 2] != '\0') {
			buf[n - 1] = 'i';
			buf[n++] = 'B';
		}
		return od_size_parse_text(buf, n, out);
	}
	if (strcmp(suffix, "gib") == 0) {
		if (n + 4 > sizeof buf)
			return false;
		memcpy(buf, p, n);
		memcpy(buf + n, "GiB", 3);
		return od_size_parse_text(buf, n + 3, out);
	}
	return od_size_parse_text(p, n, out);
}

/* Fills the field of the event arg that group name names from the text
 * p[0..n) (an rx_name_fn). */
static void
sk_set_field(void *arg, const char *name, const char *p, size_t n)
{
	od_event *ev = arg;
	static const struct {
		const char *base;
		size_t off;
	} sizes[] = {
		{ "req", offsetof(od_event, mem.requested) },
		{ "total", offsetof(od_event, mem.total) },
		{ "free", offsetof(od_event, mem.free) },
		{ "alloc", offsetof(od_event, mem.allocated) },
		{ "limit", offsetof(od_event, mem.allowed) },
		{ "peak", offsetof(od_event, mem.peak) },
		{ "other", offsetof(od_event, mem.non_framework) },
		{ "vm", offsetof(od_event, host.total_vm) },
		{ "anon", offsetof(od_event, host.anon_rss) },
		{ "file", offsetof(od_event, host.file_rss) },
		{ "shmem", offsetof(od_event, host.shmem_rss) },
		{ "hlimit", offsetof(od_event, host.limit) },
		{ "husage", offsetof(od_event, host.usage) },
	};
	char base[32];
	const char *suffix = "";
	const char *us = strrchr(name, '_');
	int64_t v;
	size_t i;

	rx_copy_text(base, sizeof base, name, strlen(name));
	if (us != NULL && (strcmp(us, "_b") == 0 || strcmp(us, "_kb") == 0 ||
	    strcmp(us, "_gib") == 0 || strcmp(us, "_bin") == 0)) {
		base[us - name] = '\0';
		suffix = us + 1;
	}
	for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		if (strcmp(base, sizes[i].base) != 0)
			continue;
		/* An exact byte count beats a rounded one ("(rounded to N)",
		 * "4.00G (4294967296 bytes)"): _b groups come later. */
		if (sk_size(suffix, p, n, &v))
			*(int64_t *)(void *)((char *)ev + sizes[i].off) = v;
		return;
	}
	if (strcmp(name, "device") == 0 && sk_int(p, n, &v) && v < 1 << 20)
		ev->device = (int)v;
	else if (strcmp(name, "rank") == 0 && sk_int(p, n, &v) && v < 1 << 30)
		ev->rank = (int)v;
	else if (strcmp(name, "pid") == 0 && sk_int(p, n, &v))
		ev->host.pid = v;
	else if (strcmp(name, "exit") == 0 && sk_int(p, n, &v)) {
		ev->host.exit_code = v;
		ev->host.has_exit = true;
	} else if (strcmp(name, "comm") == 0)
		rx_copy_text(ev->host.process, sizeof ev->host.process, p, n);
	else if (strcmp(name, "signal") == 0)
		rx_copy_text(ev->host.signal, sizeof ev->host.signal,
		    n == 9 && strncmp(p, "bus error", 9) == 0 ? "Bus error" : p, n);
	else if (strcmp(name, "error") == 0)
		rx_copy_text(ev->error, sizeof ev->error, p, n);
	else if (strcmp(name, "shape") == 0)
		rx_copy_text(ev->tensor_shape, sizeof ev->tensor_shape, p, n);
	else if (strcmp(name, "dtype") == 0)
		rx_copy_text(ev->dtype, sizeof ev->dtype, p, n);
	else if (strcmp(name, "allocator") == 0)
		rx_copy_text(ev->allocator, sizeof ev->allocator, p, n);
	else if (strcmp(name, "nonfatal") == 0)
		ev->fatal = false;
}

/* Fills ev from row i matched at ms, and from the lines after it where the
 * row reads on. */
static bool
sk_fill(void *self, int i, const char *t, size_t tlen, size_t ms, size_t *me,
    od_event *ev)
{
	sk_set *s = self;
	const sk_spec *sp;
	bool found = false;

	if (i < 0 || i >= SK_N || !rx_at(s->m, s->re[i], t, tlen, ms))
		return false;
	sp = &sk_specs[i];
	ev->kind = sp->kind;
	ev->framework = sp->framework;
	ev->confidence = sp->conf;
	ev->layout = OD_LAYOUT_OTHER_STACK;
	ev->fatal = true;
	*me = rx_end(s->m);
	/* The names come sorted: the _b names follow their base, and an
	 * exact byte count so beats a rounded one. */
	rx_names(s->m, s->re[i], t, sk_set_field, ev);
	if (sp->follow != NULL) {
		/* Read on, at most follow_lines lines past the match. */
		size_t end = *me, at = *me;
		int lines = 0;

		while (end < tlen && lines <= sp->follow_lines)
			if (t[end++] == '\n')
				lines++;
		while (at < end && rx_find(s->m, s->follow[i], t, end, at)) {
			rx_names(s->m, s->follow[i], t, sk_set_field, ev);
			found = true;
			*me = rx_end(s->m);
			at = rx_end(s->m) > at ? rx_end(s->m) : at + 1;
		}
		if (sp->follow_required && !found)
			return false;
	}
	if (ev->confidence == OD_CONF_LOW)
		ev->verify_hint = sp->kind == OD_KIND_K8S_OOMKILLED ?
		    sk_k8s_weak : sk_weak;
	return true;
}

/* A row whose condition fails is left out, and the others searched
 * again (retry). */
const ex_recogniser sk_recogniser = {
	.create = sk_create,
	.destroy = sk_destroy,
	.anchors = sk_anchors,
	.find = sk_find,
	.fill = sk_fill,
	.follows = sk_follows,
	.retry = true,
};

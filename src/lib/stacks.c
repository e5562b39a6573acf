/*
 * stacks.c: the recognisers of every stack but PyTorch's caching allocator.
 *
 * Each recogniser is a row of a table: the kind, how sure its message makes
 * us, the fixed strings the prefilter needs for it, and a PCRE2 pattern
 * whose named groups say what they fill (sk_set_field below):
 *
 *   req, total, free, alloc, limit, peak, other   memory figures
 *   vm, anon, file, shmem, hlimit, husage         host figures
 *   device, pid, exit, rank                        integers
 *   comm, signal, error, shape, dtype, allocator   strings
 *   nonfatal                                       the line is a warning
 *
 * A size group's suffix gives its unit: none for a number with its unit
 * ("1.17GiB", "4.00G", "27.10GB"), _b for bytes, _kb for KiB, _gib for
 * GiB.  Formats and sources: other-oom-formats.md (the R numbers in the
 * comments are its section 8 rows) and pytorch-allocator.md section 5.
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

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "stacks.h"

#define ST_PATTERN_MAX 2048

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
	/* R51: the CUDA runtime and driver.  The "Search for" suffix is
	 * PyTorch's own (c10/cuda/CUDAMiscFunctions.cpp). */
	{ OD_KIND_CUDA_RAW, OD_CONF_HIGH, "CUDA error: out of memory",
	  "CUDA error: out of memory\\s*Search for .(?<error>"
	  "cudaErrorMemoryAllocation). in \\S+(?: for more information\\.)?",
	  NULL, 0, false, "pytorch" },
	{ OD_KIND_CUDA_RAW, OD_CONF_HIGH,
	  "CUDA error: out of memory|CUDA driver error: out of memory|"
	  "CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|"
	  "cudaMalloc failed: out of memory|Failed to cudaMalloc",
	  "(?:CUDA error: out of memory|CUDA driver error: out of memory|"
	  "(?<error>CUDA_ERROR_OUT_OF_MEMORY)(?:: out of memory)?|"
	  "cudaMalloc failed: out of memory)"
	  "(?:\\s*Search for .(?<error>cudaErrorMemoryAllocation). in \\S+"
	  "(?: for more information\\.)?)?"
	  "|(?:Search for .)?(?<error>cudaErrorMemoryAllocation).?"
	  "|Failed to cudaMalloc (?<req_b>\\d+) bytes on device (?<device>\\d+)"
	  " \\(error 2 out of memory\\)?",
	  NULL, 0, false, NULL },
	/* PyTorch's THC (0.4 and 1.0): the check line, then the exception. */
	{ OD_KIND_CUDA_RAW, OD_CONF_HIGH, "cuda runtime error (2)|error=2 : out of memory",
	  "THCudaCheck FAIL file=\\S+ line=\\d+ error=2 : out of memory|"
	  "cuda runtime error \\(2\\) : out of memory(?: at \\S+)?",
	  "cuda runtime error \\(2\\) : out of memory(?: at \\S+)?", 4, false,
	  "pytorch" },
	{ OD_KIND_HIP, OD_CONF_HIGH,
	  "HIP error: out of memory|hipErrorOutOfMemory|"
	  "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
	  "HIP error: out of memory(?:\\s*Search for .(?<error>"
	  "hipErrorOutOfMemory).)?|(?:Search for .)?(?<error>"
	  "hipErrorOutOfMemory).?|(?<error>HSA_STATUS_ERROR_OUT_OF_RESOURCES)",
	  NULL, 0, false, NULL },
	/* R16 */
	{ OD_KIND_CUBLAS, OD_CONF_HIGH,
	  "CUBLAS_STATUS_ALLOC_FAILED|HIPBLAS_STATUS_ALLOC_FAILED",
	  "(?:CUDA error: )?(?<error>(?:CU|HIP)BLAS_STATUS_ALLOC_FAILED)"
	  "(?: when calling `[^`\\n]*`)?",
	  NULL, 0, false, NULL },
	{ OD_KIND_CUBLAS, OD_CONF_MEDIUM, "CUBLAS_STATUS_NOT_INITIALIZED",
	  "(?:CUDA error: )?(?<error>CUBLAS_STATUS_NOT_INITIALIZED) when "
	  "calling `cublasCreate\\(handle\\)`",
	  NULL, 0, false, NULL },
	/* R17, R18 */
	{ OD_KIND_CUDNN, OD_CONF_HIGH,
	  "CUDNN_STATUS_ALLOC_FAILED|NOT_ENOUGH_WORKSPACE|"
	  "Not enough memory for workspace",
	  "(?:cuDNN error: |Error in CuDNN: )?(?<error>CUDNN_STATUS_ALLOC_FAILED|"
	  "CUDNN_STATUS_NOT_ENOUGH_WORKSPACE)|Not enough memory for "
	  "workspace!?",
	  NULL, 0, false, NULL },
	{ OD_KIND_CUDNN, OD_CONF_MEDIUM, "Unable to find a valid cuDNN algorithm",
	  "Unable to find a valid cuDNN algorithm to run convolution",
	  NULL, 0, false, NULL },
	/* R12b, R13, R15 */
	{ OD_KIND_NCCL, OD_CONF_HIGH, "Cuda failure",
	  "(?:\\[(?<device>\\d+)\\] \\S+ NCCL WARN )?Cuda failure (?:2 )?"
	  "'out of memory'",
	  NULL, 0, false, NULL },
	{ OD_KIND_NCCL, OD_CONF_HIGH, "Failed to CUDA calloc",
	  "(?:\\[(?<device>\\d+)\\] \\S+ NCCL WARN )?Failed to CUDA calloc"
	  "(?: async)? (?<req_b>\\d+) bytes",
	  NULL, 0, false, NULL },
	{ OD_KIND_NCCL, OD_CONF_HIGH,
	  "unhandled cuda error|ncclUnhandledCudaError",
	  "(?:NCCL error in: \\S+, )?unhandled cuda error(?: \\(run with "
	  "NCCL_DEBUG=INFO for details\\))?(?:, NCCL version [\\w.+-]+)?"
	  "(?:\\s*(?<error>ncclUnhandledCudaError)(?:: Call to CUDA function "
	  "failed\\.)?)?|"
	  "(?<error>ncclUnhandledCudaError)(?:: Call to CUDA function "
	  "failed\\.)?",
	  "Cuda failure (?:2 (?:'out of memory')?|'out of memory')",
	  8, true, NULL },
	/* R43 and the Metal buffer limit. */
	{ OD_KIND_MPS, OD_CONF_HIGH, "MPS backend out of memory",
	  "MPS backend out of memory \\(MPS allocated: (?<alloc_bin>[\\d.]+ ?"
	  "(?:[KMGT]i?B|bytes)), other allocations: (?<other_bin>[\\d.]+ ?"
	  "(?:[KMGT]i?B|bytes))(?:, max allowed: (?<limit_bin>[\\d.]+ ?"
	  "(?:[KMGT]i?B|bytes)))?\\)\\.(?: Tried to allocate (?<req_bin>"
	  "[\\d.]+ ?(?:[KMGT]i?B|bytes)) on (?:shared|private) pool\\.)?",
	  NULL, 0, false, NULL },
	{ OD_KIND_MPS, OD_CONF_MEDIUM, "Invalid buffer size",
	  "Invalid buffer size: (?<req>[\\d.]+ ?(?:[KMGT]iB|bytes))",
	  NULL, 0, false, NULL },
	/* R01 */
	{ OD_KIND_TF, OD_CONF_HIGH, "OOM when allocating tensor",
	  "OOM when allocating tensor (?:with|of) shape ?(?<shape>\\[[-0-9, ]*\\])"
	  "(?: and type (?<dtype>\\w+))?(?: on (?:\\S*?device:GPU:(?<device>"
	  "\\d+)\\S*|\\S+))?(?: by allocator (?<allocator>\\w+))?",
	  NULL, 0, false, NULL },
	/* R02, R03, R05 */
	{ OD_KIND_TF, OD_CONF_HIGH, "ran out of memory trying to allocate",
	  "Allocator \\((?<allocator>GPU_(?<device>\\d+)_bfc|[^)\\n]+)\\) ran "
	  "out of memory trying to allocate (?<req>[\\d.]+ ?[KMGTPE]?i?B)"
	  "(?: \\(rounded to (?<req_b>\\d+)\\))?(?<nonfatal>(?: from the \\w+ "
	  "end)? with freed_by_count=\\d+|[^\\n]*?The caller indicates that "
	  "this is not a failure)?",
	  "(?m)^\\s*(?:Limit:\\s+(?<limit_b>\\d+)|InUse:\\s+(?<alloc_b>\\d+)|"
	  "MaxInUse:\\s+(?<peak_b>\\d+))\\s*$|OOM when allocating tensor "
	  "(?:with|of) shape ?(?<shape>\\[[-0-9, ]*\\])(?: and type "
	  "(?<dtype>\\w+))?(?: on \\S+)?(?: by allocator \\w+)?",
	  40, false, NULL },
	/* R06 */
	{ OD_KIND_TF, OD_CONF_HIGH, "bytes) from device",
	  "failed to allocate (?<req>[\\d.]+ ?[KMGTPE]?i?B?) \\((?<req_b>\\d+) "
	  "bytes\\) from device: (?<error>\\w+)(?:: out of memory)?",
	  NULL, 0, false, NULL },
	/* R08, R09, R11 */
	{ OD_KIND_XLA, OD_CONF_HIGH, "memory while trying to allocate",
	  "(?:RESOURCE_EXHAUSTED: )?Out of (?:host )?memory while trying to "
	  "allocate (?<req_b>\\d+) bytes\\.?",
	  NULL, 0, false, NULL },
	{ OD_KIND_XLA, OD_CONF_HIGH, "Out of memory allocating",
	  "(?:RESOURCE_EXHAUSTED: )?Out of memory allocating (?<req_b>\\d+) "
	  "bytes\\.?",
	  NULL, 0, false, NULL },
	{ OD_KIND_XLA, OD_CONF_HIGH, "Failed to allocate request for",
	  "(?:(?i:resource exhausted): )?Failed to allocate request for "
	  "(?<req>[\\d.]+ ?[KMGT]?i?B) \\((?<req_b>\\d+)B\\) on device ordinal "
	  "(?<device>\\d+)",
	  NULL, 0, false, NULL },
	{ OD_KIND_XLA, OD_CONF_HIGH, "Ran out of memory in memory space",
	  "Ran out of memory in memory space \\w+\\. Used "
	  "(?<alloc>[\\d.]+[KMGT]?) of (?<total>[\\d.]+[KMGT]?) \\w+\\.(?: "
	  "Exceeded \\w+ capacity by [\\d.]+[KMGT]?\\.)?",
	  NULL, 0, false, NULL },
	/* R19, R22; the memcg lines before them are context (context.c). */
	{ OD_KIND_HOST_OOM_KILLER, OD_CONF_HIGH, "Killed process",
	  "(?:(?:Memory cgroup out of memory|Out of memory(?: \\(oom_kill_"
	  "allocating_task\\))?): )?" KILLED_PROCESS,
	  NULL, 0, false, NULL },
	{ OD_KIND_HOST_OOM_KILLER, OD_CONF_HIGH, "Kill process",
	  "Kill process (?<pid>\\d+) \\((?<comm>[^)\\n]*)\\) score -?\\d+ "
	  "(?:or sacrifice child|and children)",
	  NULL, 0, false, NULL },
	/* R39, R40, R34, R35 and the IDE's wording: a SIGKILL, no more. */
	{ OD_KIND_HOST_OOM_KILLER, OD_CONF_LOW, "Killed|\xe5\xb7\xb2\xe6\x9d\x80\xe6\xad\xbb",
	  "line \\d+: +(?<pid>\\d+) (?<signal>Killed|\xe5\xb7\xb2\xe6\x9d\x80"
	  "\xe6\xad\xbb) +[^\\n]*|(?m)(?<![A-Za-z])(?<signal>Killed|"
	  "\xe5\xb7\xb2\xe6\x9d\x80\xe6\xad\xbb)[ \\t]*$",
	  NULL, 0, false, NULL },
	{ OD_KIND_HOST_OOM_KILLER, OD_CONF_LOW,
	  "exit code 137|exit status 137|exitcode|received by PID|"
	  "exit status -9|Signals.SIGKILL|return code = -9|exit code: 137",
	  "exit(?:ed with)? (?:code|status):? (?<exit>137)\\b(?: \\(interrupted "
	  "by signal 9: (?<signal>SIGKILL)\\))?|"
	  "failed \\(exitcode: (?<exit>-9)\\) local_rank: \\d+ \\(pid: "
	  "(?<pid>\\d+)\\)|exitcode *: (?<exit>-9) \\(pid: (?<pid>\\d+)\\)|"
	  "Signal 9 \\((?<signal>SIGKILL)\\) received by PID (?<pid>\\d+)|"
	  "returned non-zero exit status (?<exit>137|-9)|died with <Signals\\."
	  "(?<signal>SIGKILL): 9>|exits with return code = (?<exit>-9)",
	  NULL, 0, false, NULL },
	/* R32, R33 */
	{ OD_KIND_DATALOADER_KILLED, OD_CONF_LOW, "is killed by signal: Killed",
	  "DataLoader worker \\(pid(?:\\(s\\))? (?<pid>\\d+)[\\d, ]*\\) is "
	  "killed by signal: (?<signal>Killed)\\.",
	  NULL, 0, false, NULL },
	{ OD_KIND_DATALOADER_KILLED, OD_CONF_HIGH,
	  "is killed by signal: Bus error|Unexpected bus error",
	  "DataLoader worker \\(pid(?:\\(s\\))? (?<pid>\\d+)[\\d, ]*\\) is "
	  "killed by signal: (?<signal>Bus error)\\.(?: It is possible that "
	  "dataloader's workers are out of shared memory\\. Please try to "
	  "raise your shared memory limit\\.)?|ERROR: Unexpected (?<signal>bus "
	  "error) encountered in worker\\. This might be caused by "
	  "insufficient shared memory \\(shm\\)\\.?",
	  NULL, 0, false, NULL },
	/* R25 to R29 */
	{ OD_KIND_SLURM_OOM, OD_CONF_HIGH, "oom-kill event|oom_kill event",
	  "Detected \\d+ oom[-_]kill events?(?:\\(s\\))? in (?:step \\S+ cgroup|"
	  "(?:StepId|JobId)=[\\w.+]+?(?: cgroup)?)\\.(?=\\s|$)(?: Some of (?:the "
	  "step tasks have been OOM Killed|your processes may have been "
	  "killed by the cgroup out-of-memory handler)\\.)?",
	  "tasks? [-\\d,]+: Out Of Memory", 8, false, NULL },
	{ OD_KIND_SLURM_OOM, OD_CONF_HIGH, "Out Of Memory",
	  "tasks? [-\\d,]+: Out Of Memory",
	  NULL, 0, false, NULL },
	{ OD_KIND_SLURM_OOM, OD_CONF_HIGH, "exceeded memory limit|exceeded virtual memory limit",
	  "(?:StepId|JobId)=\\S+ exceeded (?:virtual )?memory limit \\("
	  "(?<husage_b>\\d+) > (?<hlimit_b>\\d+)\\), being killed|"
	  "(?:Job|Step) [\\d.]+ exceeded (?:virtual )?memory limit \\("
	  "(?<husage_kb>\\d+) > (?<hlimit_kb>\\d+)\\), being killed",
	  NULL, 0, false, NULL },
	{ OD_KIND_SLURM_OOM, OD_CONF_HIGH, "OUT_OF_ME",
	  "(?<![A-Z_])OUT_OF_ME(?:MORY|\\+)",
	  NULL, 0, false, NULL },
	{ OD_KIND_SLURM_OOM, OD_CONF_HIGH,
	  "limit at least once during execution|memory limit at some point",
	  "(?<nonfatal>hit memory(?:\\+swap)? limit at least once during "
	  "execution|Exceeded (?:step|job) memory limit at some point)\\.?",
	  NULL, 0, false, NULL },
	/* R30, R31 */
	{ OD_KIND_K8S_OOMKILLED, OD_CONF_HIGH, "OOMKilled",
	  "(?:Reason:\\s*)?OOMKilled",
	  "Exit Code:\\s+(?<exit>\\d+)|Limits:\\s*\\n(?:[^\\n]*\\n){0,3}?\\s*"
	  "memory:\\s+(?<hlimit>\\d+(?:\\.\\d+)?(?:[KMGT]i)?)", 14, false, NULL },
	{ OD_KIND_K8S_OOMKILLED, OD_CONF_LOW, "Exit Code:",
	  "Exit Code:\\s+(?<exit>137)\\b",
	  NULL, 0, false, NULL },
	{ OD_KIND_K8S_OOMKILLED, OD_CONF_MEDIUM, "low on resource: memory",
	  "The node was low on resource: memory\\.?",
	  NULL, 0, false, NULL },
	/* R41 */
	{ OD_KIND_RAY, OD_CONF_HIGH,
	  "running low on memory|killed due to memory pressure",
	  "Task was killed due to the node running low on memory\\.?(?:[\\s\\S]"
	  "{0,800}?pid=(?<pid>\\d+))?(?:[\\s\\S]{0,400}? was (?<husage>[\\d.]+ ?"
	  "GB) / (?<hlimit>[\\d.]+ ?GB))?|killed due to memory pressure "
	  "\\(OOM\\)",
	  NULL, 0, false, NULL },
	/* R45 to R48 */
	{ OD_KIND_VLLM_KV_CACHE, OD_CONF_HIGH,
	  "No available memory for the cache blocks|KV cache is needed|"
	  "stored in KV cache|desired GPU memory utilization",
	  "No available memory for the cache blocks\\.?|\\((?<req_gib>[\\d.]+) "
	  "GiB KV cache is needed, which is larger than the available KV "
	  "cache memory \\((?<free_gib>[\\d.]+) GiB\\)\\.?|The model's max seq "
	  "len \\(\\d+\\) is larger than the maximum number of tokens that can "
	  "be stored in KV cache \\(\\d+\\)\\.?|Free memory on device(?: \\S+)? "
	  "\\((?<free_gib>[\\d.]+)/(?<total_gib>[\\d.]+) GiB\\) on startup is "
	  "less than desired GPU memory utilization \\([\\d.]+, (?<req_gib>"
	  "[\\d.]+) GiB\\)",
	  NULL, 0, false, NULL },
	/* llama.cpp */
	{ OD_KIND_GGML, OD_CONF_HIGH, "cudaMalloc failed|buffer of size",
	  "allocating (?<req>[\\d.]+ MiB) on device (?<device>\\d+): cudaMalloc "
	  "failed: out of memory|failed to allocate (?<error>\\w+) buffer of "
	  "size (?<req_b>\\d+)",
	  "failed to allocate \\w+ buffer of size (?<req_b>\\d+)|(?<nonfatal>"
	  "retrying without)", 4, false, NULL },
	{ OD_KIND_ONNXRUNTIME, OD_CONF_HIGH,
	  "Failed to allocate memory for requested buffer|is smaller than requested bytes",
	  "Failed to allocate memory for requested buffer of size (?<req_b>\\d+)"
	  "|Available memory of (?<free_b>\\d+) is smaller than requested "
	  "bytes of (?<req_b>\\d+)",
	  NULL, 0, false, NULL },
	{ OD_KIND_TENSORRT, OD_CONF_HIGH, "Requested amount of",
	  "Requested amount of (?:GPU )?memory \\((?<req_b>\\d+) bytes\\) could "
	  "not be allocated\\.?",
	  "(?<nonfatal>Skipping tactic)", 3, false, NULL },
	{ OD_KIND_CUPY, OD_CONF_HIGH, "Out of memory allocating",
	  "Out of memory allocating (?<req_b>\\d{1,3}(?:,\\d{3})+|\\d+) bytes "
	  "\\(allocated so far: (?<alloc_b>[\\d,]+) bytes(?:, limit set to: "
	  "(?<limit_b>[\\d,]+) bytes)?\\)\\.?",
	  NULL, 0, false, NULL },
	/* R36 to R38 */
	{ OD_KIND_HOST_ALLOC, OD_CONF_HIGH, "DefaultCPUAllocator",
	  "DefaultCPUAllocator: (?:can't allocate memory|not enough memory): "
	  "you tried to allocate (?<req_b>\\d+) bytes\\.?(?: Error code \\d+ "
	  "\\([^)\\n]*\\))?",
	  NULL, 0, false, "pytorch" },
	{ OD_KIND_HOST_ALLOC, OD_CONF_HIGH, "Unable to allocate",
	  "(?:[\\w.]*_ArrayMemoryError: )?Unable to allocate (?<req>[\\d.]+ ?"
	  "(?:[KMGTPE]iB|bytes)) for an array with shape (?<shape>\\([^)\\n]*"
	  "\\)) and data type (?<dtype>\\w+)",
	  NULL, 0, false, "numpy" },
	{ OD_KIND_HOST_ALLOC, OD_CONF_HIGH, "MemoryError|Cannot allocate memory",
	  "(?m)(?<![\\w.])MemoryError(?::[ \\t]*|[ \\t]*$)|\\[Errno 12\\] Cannot "
	  "allocate memory",
	  NULL, 0, false, "python" },
};

#define ST_N ((int)(sizeof sk_specs / sizeof sk_specs[0]))

struct sk_set {
	pcre2_code *re[ST_N];
	pcre2_code *follow[ST_N];
	pcre2_match_data *md;
	pcre2_match_context *mc;
	pcre2_match_context *mc_start;  /* with an offset limit: sk_find */
	int rc;                 /* the last match's count of set pairs */
};

/* The anchors, made once from the table (and static after that). */
static sk_anchor sk_anchor_list[256];
static char sk_anchor_text[8192];

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

static pcre2_code *
sk_compile(const char *pattern, int row, uint32_t options, bool jit,
    od_error *err)
{
	char wide[ST_PATTERN_MAX];
	pcre2_code *re;
	PCRE2_SIZE off;
	int code;

	if (!sk_widen(pattern, wide, sizeof wide)) {
		od_error_set(err, "stacks.c", (uint64_t)row + 1, 0,
		    "internal pattern too long");
		return NULL;
	}
	re = pcre2_compile((PCRE2_SPTR)wide, PCRE2_ZERO_TERMINATED,
	    PCRE2_DUPNAMES | options, &code, &off, NULL);
	if (re == NULL) {
		PCRE2_UCHAR msg[128];

		pcre2_get_error_message(code, msg, sizeof msg);
		od_error_set(err, "stacks.c", (uint64_t)row + 1,
		    (uint64_t)off + 1, "internal pattern: %s", msg);
		return NULL;
	}
	if (jit)
		(void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	return re;
}

sk_set *
sk_new(bool jit, od_error *err)
{
	sk_set *s = calloc(1, sizeof *s);
	int i;

	if (s == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	for (i = 0; i < ST_N; i++) {
		s->re[i] = sk_compile(sk_specs[i].pattern, i,
		    PCRE2_USE_OFFSET_LIMIT, jit, err);
		if (s->re[i] == NULL ||
		    (sk_specs[i].follow != NULL && (s->follow[i] =
		    sk_compile(sk_specs[i].follow, i, 0, jit, err)) == NULL)) {
			sk_free(s);
			return NULL;
		}
	}
	s->md = pcre2_match_data_create(64, NULL);
	s->mc = pcre2_match_context_create(NULL);
	s->mc_start = pcre2_match_context_create(NULL);
	if (s->md == NULL || s->mc == NULL || s->mc_start == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		sk_free(s);
		return NULL;
	}
	pcre2_set_match_limit(s->mc, 1000000);
	pcre2_set_match_limit(s->mc_start, 1000000);
	pcre2_set_depth_limit(s->mc_start, 10000);
	pcre2_set_depth_limit(s->mc, 10000);
	return s;
}

void
sk_free(sk_set *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < ST_N; i++) {
		pcre2_code_free(s->re[i]);
		pcre2_code_free(s->follow[i]);
	}
	pcre2_match_data_free(s->md);
	pcre2_match_context_free(s->mc);
	pcre2_match_context_free(s->mc_start);
	free(s);
}

bool
sk_follows(const sk_set *s, int i)
{
	(void)s;
	return i >= 0 && i < ST_N && sk_specs[i].follow != NULL;
}

int
sk_count(const sk_set *s)
{
	(void)s;
	return ST_N;
}

const sk_anchor *
sk_anchors(void)
{
	size_t n = 0, used = 0;
	int i;

	if (sk_anchor_list[0].text != NULL)
		return sk_anchor_list;
	for (i = 0; i < ST_N; i++) {
		const char *a = sk_specs[i].anchors;

		while (*a != '\0') {
			size_t len = strcspn(a, "|");
			bool caseless = *a == '~';
			size_t k;

			if (caseless)
				a++, len--;
			for (k = 0; k < n; k++)
				if (strlen(sk_anchor_list[k].text) == len &&
				    memcmp(sk_anchor_list[k].text, a, len) == 0)
					break;
			if (k == n && n + 1 < sizeof sk_anchor_list /
			    sizeof sk_anchor_list[0] &&
			    used + len + 1 <= sizeof sk_anchor_text) {
				memcpy(sk_anchor_text + used, a, len);
				sk_anchor_text[used + len] = '\0';
				sk_anchor_list[n].text = sk_anchor_text + used;
				sk_anchor_list[n].caseless = caseless;
				n++;
				used += len + 1;
			}
			a += len;
			if (*a == '|')
				a++;
		}
	}
	sk_anchor_list[n].text = NULL;
	return sk_anchor_list;
}

static bool
sk_match(sk_set *s, const pcre2_code *re, const char *t, size_t tlen,
    size_t at, bool anchored)
{
	s->rc = pcre2_match(re, (PCRE2_SPTR)t, tlen, at,
	    anchored ? PCRE2_ANCHORED : 0, s->md, s->mc);
	return s->rc > 0;
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

int
sk_find(sk_set *s, const char *t, size_t tlen, size_t ht, uint64_t skip,
    size_t *ms)
{
	size_t from = ht > 200 ? ht - 200 : 0;
	int best = -1, i;

	*ms = SIZE_MAX;
	/* No start past ht + 8 can do: stop every search there. */
	pcre2_set_offset_limit(s->mc_start, ht + 8);
	for (i = 0; i < ST_N; i++) {
		size_t at = from;

		if (skip & (UINT64_C(1) << i))
			continue;
		while ((s->rc = pcre2_match(s->re[i], (PCRE2_SPTR)t, tlen, at, 0,
		    s->md, s->mc_start)) > 0) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);

			if (ov[1] < ht || sk_quoted_in_source(t, ov[0])) {
				at = ov[1] > at ? ov[1] : at + 1;
				continue;
			}
			if (ov[0] <= ht + 8 && ov[0] < *ms) {
				*ms = ov[0];
				best = i;
			}
			break;
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

static void
sk_copy(char *dst, size_t cap, const char *p, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, p, n);
	dst[n] = '\0';
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

/* Fills the field that group name names from the text p[0..n). */
static void
sk_set_field(od_event *ev, const char *name, const char *p, size_t n)
{
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

	sk_copy(base, sizeof base, name, strlen(name));
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
		sk_copy(ev->host.process, sizeof ev->host.process, p, n);
	else if (strcmp(name, "signal") == 0)
		sk_copy(ev->host.signal, sizeof ev->host.signal,
		    n == 9 && strncmp(p, "bus error", 9) == 0 ? "Bus error" : p, n);
	else if (strcmp(name, "error") == 0)
		sk_copy(ev->error, sizeof ev->error, p, n);
	else if (strcmp(name, "shape") == 0)
		sk_copy(ev->tensor_shape, sizeof ev->tensor_shape, p, n);
	else if (strcmp(name, "dtype") == 0)
		sk_copy(ev->dtype, sizeof ev->dtype, p, n);
	else if (strcmp(name, "allocator") == 0)
		sk_copy(ev->allocator, sizeof ev->allocator, p, n);
	else if (strcmp(name, "nonfatal") == 0)
		ev->fatal = false;
}

/* Fills ev from every named group of the last match that took part. */
static void
sk_fill_groups(sk_set *s, const pcre2_code *re, const char *t, od_event *ev)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);
	uint32_t count, size, i;
	PCRE2_SPTR table;

	pcre2_pattern_info(re, PCRE2_INFO_NAMECOUNT, &count);
	pcre2_pattern_info(re, PCRE2_INFO_NAMEENTRYSIZE, &size);
	pcre2_pattern_info(re, PCRE2_INFO_NAMETABLE, &table);
	/* The table is sorted by name; the _b names follow their base. */
	for (i = 0; i < count; i++) {
		PCRE2_SPTR e = table + (size_t)i * size;
		uint32_t g = ((uint32_t)e[0] << 8) | e[1];

		/* Pairs from rc on are not written by the match. */
		if ((int)g >= s->rc || ov[2 * g] == PCRE2_UNSET)
			continue;
		sk_set_field(ev, (const char *)(e + 2), t + ov[2 * g],
		    ov[2 * g + 1] - ov[2 * g]);
	}
}

bool
sk_fill(sk_set *s, int i, const char *t, size_t tlen, size_t ms, size_t *me,
    od_event *ev)
{
	const sk_spec *sp = &sk_specs[i];
	bool found = false;

	if (!sk_match(s, s->re[i], t, tlen, ms, true))
		return false;
	ev->kind = sp->kind;
	ev->framework = sp->framework;
	ev->confidence = sp->conf;
	ev->layout = OD_LAYOUT_OTHER_STACK;
	ev->fatal = true;
	*me = pcre2_get_ovector_pointer(s->md)[1];
	sk_fill_groups(s, s->re[i], t, ev);
	if (sp->follow != NULL) {
		/* Read on, at most follow_lines lines past the match. */
		size_t end = *me, at = *me;
		int lines = 0;

		while (end < tlen && lines <= sp->follow_lines)
			if (t[end++] == '\n')
				lines++;
		while (at < end && sk_match(s, s->follow[i], t, end, at, false)) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);

			sk_fill_groups(s, s->follow[i], t, ev);
			found = true;
			*me = ov[1];
			at = ov[1] > at ? ov[1] : at + 1;
		}
		if (sp->follow_required && !found)
			return false;
	}
	if (ev->confidence == OD_CONF_LOW)
		ev->verify_hint = sp->kind == OD_KIND_K8S_OOMKILLED ?
		    sk_k8s_weak : sk_weak;
	return true;
}

/*
 * core.h: the core library's internal header, shared by its stages; an
 * embedding program includes <oomdoc/oomdoc.h> instead, whose handles
 * are these structs (oomdoc_event is od_event, oomdoc_cause od_cause).
 *
 * The pipeline is: an input (input.c: a file or standard input, plain,
 * gzip or zstd) -> the scanner (scan.c: the fixed buffer fed chunk by
 * chunk, lines, the multi-literal prefilter) -> the extractor (extract.c,
 * a loop over the recognisers of recogniser.h: recog_pytorch.c and
 * recog_stacks.c, on lines joined by lines.c with their prefixes read by
 * prefix.c; every pattern through regex.c) and the context (context.c) ->
 * the event set (event.c: grouping of echoes) -> the rules (rules_load.c,
 * rules_apply.c, facts.c, expr.c, fingerprint.c) -> the report writers
 * (report.c and one file per format).  The public interface (api*.c)
 * wraps them; od_scan_path and the streaming od_scan_feed share one code
 * path.
 *
 * One struct, od_event, travels through every stage.  Every memory figure is
 * a byte count in an int64_t; OD_UNKNOWN (-1) means the log does not say it,
 * which is never the same thing as 0.
 *
 * Ownership: every heap type has a _new and a _free.  Objects returned by a
 * _new belong to the caller; pointers handed to a function are borrowed for
 * the duration of the call unless the comment at the declaration says the
 * callee keeps them.
 */
#ifndef OD_CORE_H
#define OD_CORE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "oomdoc/oomdoc.h"

#define OD_VERSION "0.1.0"

/* A memory figure the log does not give. */
#define OD_UNKNOWN ((int64_t)-1)

/* Bounds on what one event may hold; the scanner never grows past them. */
#define OD_MESSAGE_MAX 2048   /* bytes of verbatim message kept per event */
#define OD_PROCS_MAX 16       /* other processes listed per event */
#define OD_RANKS_MAX 4096     /* distinct ranks listed per event */
#define OD_EXCEPTION_MAX 96   /* bytes of the exception type name */
#define OD_TIMESTAMP_MAX 40   /* bytes of a prefix timestamp */
#define OD_EVENTS_MAX OOMDOC_EVENTS_MAX /* distinct events kept per run */

/* Exit statuses, as documented in man/oomdoc.1. */
enum {
	OD_EXIT_FOUND = 0,    /* at least one OOM event */
	OD_EXIT_NONE = 1,     /* no OOM event */
	OD_EXIT_ERROR = 2,    /* usage or input error */
	OD_EXIT_RULES = 3,    /* rules error */
	OD_EXIT_DEVICE = 4,   /* live mode: the device failed */
	OD_EXIT_NO_GPU = 5,   /* live mode: no GPU, no driver, no such device */
	OD_EXIT_DRIVER_OLD = 6, /* live mode: the driver is too old */
	OD_EXIT_REFUSED = 7,  /* live mode: refused or stopped for safety */
	OD_EXIT_TIMEOUT = 8,  /* live mode: a device call ran past the limit */
};

/* The kinds of failure, named as in the JSON contract (util.c). */
typedef enum {
	OD_KIND_CUDA_CACHING_ALLOCATOR,
	OD_KIND_HIP,
	OD_KIND_XPU,
	OD_KIND_CUDA_RAW,
	OD_KIND_CUBLAS,
	OD_KIND_CUDNN,
	OD_KIND_NCCL,
	OD_KIND_MPS,
	OD_KIND_TF,
	OD_KIND_XLA,
	OD_KIND_HOST_OOM_KILLER,
	OD_KIND_DATALOADER_KILLED,
	OD_KIND_SLURM_OOM,
	OD_KIND_K8S_OOMKILLED,
	OD_KIND_HOST_ALLOC,
	OD_KIND_CUPY,
	OD_KIND_ONNXRUNTIME,
	OD_KIND_TENSORRT,
	OD_KIND_RAY,
	OD_KIND_VLLM_KV_CACHE,
	OD_KIND_GGML,
	OD_KIND_SGLANG_MEMORY_POOL,
	OD_KIND_NPU,
	OD_KIND_METAL,
	OD_KIND_SYCL,
	/* A strong out-of-memory phrase that no recogniser reads
	 * (recog_fallback.c): low confidence, no figures. */
	OD_KIND_UNRECOGNISED,
	OD_KIND_COUNT
} od_kind;

/* How sure the message alone makes us that memory ran out. */
typedef enum {
	OD_CONF_LOW,            /* a SIGKILL, exit 137, a bare "Killed" */
	OD_CONF_MEDIUM,         /* usually memory, but other causes print it too */
	OD_CONF_HIGH,           /* the message says memory ran out */
} od_confidence;

/*
 * Which layout of the message was seen.  The layout tells the PyTorch
 * release (the 1.x layouts mean no expandable_segments) and how the
 * figures relate: the layouts are those of the out-of-memory message of
 * PyTorch's c10/cuda/CUDACachingAllocator.cpp (and THCCachingAllocator.cpp
 * before 1.4), release by release; recog_pytorch.c reads them.
 */
typedef enum {
	OD_LAYOUT_UNKNOWN,
	OD_LAYOUT_CACHED,          /* 1.0-1.3: "... free; N cached)" */
	OD_LAYOUT_RESERVED_TOTAL,  /* 1.4-2.0: "... reserved in total by PyTorch)" */
	OD_LAYOUT_CAPACTY,         /* 2.1: "has a total capacty of" */
	OD_LAYOUT_CAPACITY,        /* 2.2 and later: "has a total capacity of" */
	OD_LAYOUT_ASYNC,           /* cudaMallocAsync: "Allocation on device N would exceed" */
	OD_LAYOUT_WARNING,         /* "memory allocation failed with OOM on device" */
	OD_LAYOUT_NVML_ASSERT,     /* NVML assert thrown on the OOM path */
	OD_LAYOUT_HEAD_ONLY,       /* a head with no recognisable body (truncated) */
	OD_LAYOUT_OTHER_STACK,     /* a message of another stack (recog_stacks.c) */
	OD_LAYOUT_COUNT
} od_layout;

/* Which fragmentation hint the message carried, if any. */
typedef enum {
	OD_HINT_NONE,
	OD_HINT_MAX_SPLIT,      /* "try setting max_split_size_mb" */
	OD_HINT_EXPANDABLE,     /* "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" */
} od_hint;

typedef struct {
	int64_t pid;
	int64_t bytes;          /* OD_UNKNOWN where NVML could not say */
} od_proc;

typedef struct {
	int64_t requested;
	int64_t total;
	int64_t free;
	int64_t allocated;
	int64_t reserved;
	int64_t reserved_unallocated;
	int64_t process_in_use;
	int64_t non_framework;
	int64_t allowed;
	int64_t private_pools;
	int64_t peak;           /* TensorFlow's MaxInUse */
	od_proc procs[OD_PROCS_MAX];
	int nprocs;
	int procs_dropped;      /* process clauses beyond OD_PROCS_MAX */
} od_memory;

/* The host side of a kill: the process and the limits it ran into. */
typedef struct {
	int64_t pid;            /* -1 unknown */
	char process[64];       /* the command name the kernel printed */
	int64_t total_vm;
	int64_t anon_rss;
	int64_t file_rss;
	int64_t shmem_rss;
	int64_t limit;          /* cgroup, Slurm or Ray limit */
	int64_t usage;          /* usage against that limit */
	bool has_exit;
	int64_t exit_code;      /* 137, -9 */
	char signal[24];        /* "Killed", "Bus error", "SIGKILL" */
	/* The Slurm job id (recog_scheduler.c), "" unknown.  The pod, its
	 * namespace and the container are the event's labels (od_labels),
	 * which the scheduler's output and the log's records both fill. */
	char job[32];
} od_host;

#define OD_FRAMES_MAX 5

/* A frame of the Python traceback before the failure. */
typedef struct {
	char file[128];
	int64_t line;
	char func[48];
	char code[112];         /* the source line the traceback shows */
	bool user;              /* not in the framework's or Python's files */
} od_frame;

/*
 * One memory reading of a metric line (context.c): which figure it is,
 * its bytes, the step and rank the line gave (-1 when it gave none) and
 * where it was.
 */
typedef enum {
	OD_READING_ALLOCATED,       /* memory_allocated(): tensors in use */
	OD_READING_MAX_ALLOCATED,   /* max_memory_allocated(): a peak */
	OD_READING_RESERVED,        /* memory_reserved(): PyTorch's cache */
	OD_READING_MAX_RESERVED,    /* max_memory_reserved() */
	OD_READING_DEVICE_USED,     /* nvidia-smi's memory.used: the device */
	OD_READING_ALLOC_DELTA,     /* Hugging Face's *_mem_gpu_alloc_delta */
	OD_READING_PEAK_DELTA,      /* Hugging Face's *_mem_gpu_peaked_delta */
	OD_READING_MEMORY,          /* a column that does not say which */
	OD_READING_COUNT
} od_reading_what;

typedef struct {
	int64_t step;
	uint64_t line;
	int64_t bytes;
	int rank;
	int device;             /* the GPU index nvidia-smi names, -1 */
	int what;               /* an od_reading_what */
} od_reading;

/* The readings kept per log: the series is thinned to stay within it. */
#define OD_READINGS_MAX 64

/* The name of a reading's figure ("allocated", ...), as the reports and
 * the JSON spell it. */
const char *od_reading_name(int what);

/*
 * What the log says before an event about the job: the settings it ran
 * with and the memory it reported (context.c).  Unknown numbers are -1,
 * unknown strings empty.
 */
typedef struct {
	char alloc_conf[128];   /* PYTORCH_CUDA_ALLOC_CONF and the like */
	char xla_conf[128];     /* XLA_PYTHON_CLIENT_* settings */
	char tf_allocator[128]; /* TF_GPU_ALLOCATOR, allow_growth */
	/* TensorFlow's and XLA's settings ("NAME=value" a word) the log
	 * shows only after the event, within CX_AFTER_BYTES of it (a later
	 * run, or what the writer tried): not what this run had, but no
	 * default may be stated as this run's (context.c, cx_after). */
	char later[128];
	/* The container's shared memory the log shows, before the event or
	 * after it ("ipc=host", "shm-size=16g"; context.c, CX_SHM). */
	char container[64];
	/* The TensorFlow releases the log shows it ran (major * 100 +
	 * minor): from a version line, paths and calls of some releases
	 * only, or the CUDA release its libraries load (context.c,
	 * CX_TF_RELEASE); -1 where it shows no bound. */
	int tf_min, tf_max;
	/* The vLLM releases the log shows (major * 100 + minor, 0.6 is 6;
	 * context.c, CX_VLLM_RELEASE); -1 where it shows none. */
	int vllm_min, vllm_max;
	/* The Text Generation Inference releases the log shows, as vllm_min
	 * and vllm_max (context.c, CX_TGI); -1 where it shows none.  And
	 * whether its launcher quantizes the model: 1 where it does, 0
	 * where its arguments say it does not, -1 where they are not shown. */
	int tgi_min, tgi_max;
	int tgi_quantize;
	/* The jaxlib releases the log shows (major * 10000 + minor * 100 +
	 * patch, 0.4.23 is 423; context.c, CX_JAX_RELEASE); -1 where it
	 * shows no bound. */
	int jaxlib_min, jaxlib_max;
	/* The inference servers the log shows before the event (context.c,
	 * CX_SERVING): bit 1 vLLM's or SGLang's code or workers, bit 2 Text
	 * Generation Inference's launcher, router or server; 0 none. */
	int serving;
	/* What Docker's state of the container says of an out-of-memory
	 * kill, before the event or after it ("OOMKilled": false in docker
	 * inspect; context.c, CX_OOMKILLED): 0 false, 1 true, -1 not shown. */
	int container_oom;
	int64_t batch_size;
	int64_t accum_steps;
	int64_t seq_len;
	char precision[16];     /* "bf16", "fp16", "fp32" */
	int grad_ckpt;          /* -1 unknown, 0 off, 1 on */
	int dataloader;         /* 1: PyTorch's DataLoader named, -1 unknown */
	int64_t mem_first;      /* memory readings of the metric lines */
	int64_t mem_last;
	int64_t mem_max;
	int nreadings;          /* readings read (not all of them are kept) */
	/* The series of readings, oldest first: every reading until
	 * OD_READINGS_MAX, then thinned (context.c, cx_thin) so that the
	 * first, the last, the largest and an even spread are kept, and only
	 * one reading line in stride is read from then on.  The scanner's
	 * state points into its own room of OD_READINGS_MAX (scan.c); an
	 * event owns a copy of its nkept readings (cx_attach), or of at most
	 * OD_READINGS_MAX when read from a report (report_fields.c), NULL
	 * when it has none: most events have none, and 2.5 KiB each in place
	 * was a quarter of a kept event. */
	od_reading *readings;
	int nkept;
	uint32_t stride;        /* 0 or 1: every reading line */
	uint64_t seen;          /* reading lines met, read or not */
	int smi_used_col;       /* nvidia-smi CSV: memory.used's column, -1 */
	int smi_index_col;      /* and index's, -1 */
	/* nvidia-smi dmon: the columns of its last header (0: none read,
	 * or one without fb), and of gpu and fb in it. */
	int dmon_ncols, dmon_gpu_col, dmon_fb_col;
	/* The GPU whose readings the event's series is (cx_attach: the
	 * event's device), -1. */
	int series_device;
	/* torch.cuda.memory_summary()'s table, the last one printed. */
	int64_t sum_ooms;
	int64_t sum_retries;    /* "cudaMalloc retries" */
	int64_t sum_non_releasable;     /* its Cur Usage, bytes */
	/* vLLM's start-up profile. */
	int64_t vllm_weights;   /* "Model loading took X GiB" */
	int64_t vllm_kv_cache;  /* "Available KV cache memory: X GiB" */
	int64_t vllm_kv_tokens; /* "GPU KV cache size: N tokens" */
	int64_t vllm_max_len;   /* the engine's max_model_len, the last given */
	int64_t vllm_concurrency_len;   /* "Maximum concurrency for N tokens" */
	int64_t vllm_concurrency_x100;  /* its "1.09x", times 100 */
	int64_t vllm_est_len;   /* "the estimated maximum model length is N" */
	int64_t xid;            /* the last NVIDIA Xid error code seen */
	int64_t memcg_usage;    /* the kernel's "memory: usage N, limit M" */
	int64_t memcg_limit;
	uint64_t memcg_line;    /* where it was, for the kill just after */
	/* The Slurm job of the memory cgroup the kernel named before a kill
	 * (context.c, CX_CGROUP), the pid its summary line names (-1 when
	 * the line names none), and where it was. */
	char memcg_job[24];
	int64_t memcg_job_pid;
	uint64_t memcg_job_line;
	/* TensorFlow's BFC Stats block (Limit, InUse, MaxInUse) and where
	 * its last line was, for the OOM error just after its dump. */
	int64_t bfc_limit, bfc_inuse, bfc_peak;
	uint64_t bfc_line;
	bool ecc;               /* an uncorrectable ECC error was reported */
	char gpu_model[24];     /* the NVIDIA model the log names: "A100" */
	char visible_devices[256];      /* CUDA_VISIBLE_DEVICES: "2,3", "" */
	/* The last line about the end of a distributed run (context.c,
	 * CX_AFTER), for the scanner to give to the run's first failure
	 * (od_events_after): what it was (an od_after_what, 0 when none is
	 * pending), the rank it names (-1 unknown), and whether torchrun's
	 * "Root Cause" block is open (its next "rank :" line is the root
	 * cause's). */
	int after_what;
	int after_rank;
	bool root_cause_open;
} od_logctx;

/* The lines that follow a failure in a distributed run. */
typedef enum {
	OD_AFTER_NONE,
	OD_AFTER_WATCHDOG,      /* an NCCL watchdog timeout or abort */
	OD_AFTER_SIGTERM,       /* torchrun's "closing signal SIGTERM" */
	OD_AFTER_ROOT_CAUSE,    /* the rank of ChildFailedError's Root Cause */
} od_after_what;

/*
 * What the log shows after the run's first failure, counted on that
 * event (event.c, od_events_after): other ranks' NCCL watchdog reports,
 * torchrun stopping the ranks still running, and the rank its
 * ChildFailedError table calls the root cause.  All of it follows from
 * the failure; none of it is a failure of its own.
 */
typedef struct {
	int watchdog;           /* NCCL watchdog lines after the failure */
	int watchdog_rank;      /* the first one's rank, -1 unknown */
	int64_t watchdog_line;  /* its line, -1 none */
	int sigterm;            /* "closing signal SIGTERM" lines */
	int root_cause_rank;    /* -1: no Root Cause block, or no rank */
	int64_t root_cause_line;
} od_aftermath;

#define OD_CAUSES_MAX 8
#define OD_FIXES_MAX 12
#define OD_EVIDENCE_MAX 10

#define OD_CHANGES_MAX 4

/* A setting a fix changes, with the value it has and the one it gets. */
typedef struct {
	const char *setting;    /* borrowed: "batch_size", "accum_steps" */
	double from, to;
} od_change;

/* A fix of a cause, rendered for this event (owned strings, or NULL). */
typedef struct {
	const char *id;         /* borrowed from the rule set */
	od_change changes[OD_CHANGES_MAX];
	int nchanges;
	char *text;
	char *env_name;         /* an environment line: NAME=value */
	char *env_value;
	char *code;             /* a code change */
	char *config_key;       /* a configuration key: key: value */
	char *config_value;
} od_fix;

/*
 * A line of evidence, rendered for this event: a text, and for a
 * comparison the two byte counts it compares and the operator that holds
 * for them ("<", "<=", "=", ">=", ">"), which the text prints.
 */
typedef struct {
	char *text;             /* owned */
	bool compare;
	int64_t lhs, rhs;
	char op[3];
	int near_pct;           /* "within N%": N, or -1 when not close */
} od_evidence;

/* A likely cause of an event, as a rule found it (rules.c). */
typedef struct oomdoc_cause {
	const char *rule;       /* borrowed from the rule set, as below */
	const char *title;
	const char *probe;      /* the live-mode probe that can confirm it */
	double score;
	od_confidence confidence;
	/* The bytes the cause accounts for (its rule's explains), and the
	 * part of the shortfall they explain; OD_UNKNOWN when unknown. */
	int64_t cause_bytes;
	int64_t explains_bytes;
	char *explanation;      /* owned */
	od_evidence evidence[OD_EVIDENCE_MAX];
	int nevidence;
	/* Owned, room for as many as the rule has (at most OD_FIXES_MAX),
	 * NULL when none: 160 bytes a fix, 1.9 KiB a cause in place, where
	 * most causes have two or three. */
	od_fix *fixes;
	int nfixes;
} od_cause;

#define OD_RANK_ROWS_MAX 32

/*
 * One rank's figures of a failure that several ranks reported with
 * different figures (event.c): the event keeps one row per rank, the
 * first failure's first.
 */
typedef struct {
	int rank;
	int device;             /* -1: not printed */
	int input;
	uint64_t line;          /* where this rank's report starts */
	int64_t requested, total, free, allocated, reserved;
} od_rank_row;

/* One input that reported an event, and the line of its first report
 * there (event.c): an event merged across inputs lists every one. */
typedef struct {
	int input;
	uint64_t line;
} od_event_seen;

/* What the snapshot's verdict on fragmentation is (snapshot.c). */
typedef enum {
	OD_SNAP_UNKNOWN,        /* no request to judge against */
	OD_SNAP_CONFIRMED,      /* no free block fit; the free blocks together did */
	OD_SNAP_PARTIAL,        /* they did with the device's free memory */
	OD_SNAP_REFUTED,        /* not even every free byte together did */
	OD_SNAP_INCONCLUSIVE,   /* a free block that fit was there */
} od_snap_verdict;

/*
 * The figures of a PyTorch memory snapshot joined to an event
 * (snapshot.c): every byte count of the one device, OD_UNKNOWN where the
 * snapshot does not give it.  Plain values, no heap.
 */
typedef struct {
	bool present;
	int device;
	bool from_trace;        /* request and device_free from an oom entry */
	int64_t request, device_free;
	int64_t segments, reserved, allocated;
	int64_t inactive;       /* every inactive block's bytes */
	int64_t largest_free;   /* the largest inactive block of the pool */
	int64_t split_free;     /* inactive bytes in segments with live blocks */
	int64_t pending_free, pending_blocks;   /* active_pending_free */
	int64_t expandable_offer;       /* inactive + device_free */
	int expandable;         /* -1 unknown, else any segment is_expandable */
	od_snap_verdict verdict;
	bool history;           /* the blocks carry frames */
	char owner[160];        /* the frame owning the most live bytes */
	int64_t owner_bytes;
} od_snapshot_facts;
/*
 * Which pod and container, and which host: the one place of the event
 * for them, filled by a log shipper's record or a prefix of the event's
 * line (structured.c, prefix.c) and by the scheduler's own output
 * (kubectl describe and get, recog_scheduler.c), whichever said it first.
 * The JSON report writes them as "labels" and the pod, namespace and
 * container also in "host" (report_fields.c).  "" where nothing says.
 */
#define OD_LABEL_MAX 64
typedef struct {
	char pod[OD_LABEL_MAX];
	char container[OD_LABEL_MAX];
	char namespace_[OD_LABEL_MAX];
	char host[OD_LABEL_MAX];
} od_labels;

/* Whether any label is known. */
bool od_labels_any(const od_labels *l);
/* Fills to with from's labels: all of them when to has none; else those
 * to lacks, when the two name the same pod or one names none, so that
 * the labels of two pods are never mixed. */
void od_labels_fill(od_labels *to, const od_labels *from);

typedef struct oomdoc_event {
	od_kind kind;
	const char *framework;  /* static: "pytorch", "tensorflow", ... */
	od_confidence confidence;
	const char *verify_hint;   /* static; what would confirm weak evidence */
	od_layout layout;      /* the message layout: which release wrote it */
	od_hint hint;
	bool fatal;             /* false for warnings that precede a failure */
	bool benign;            /* the message says it is no failure: no event */
	bool dump_head;         /* it heads a report whose kill line may come
	                         * many lines later and join it (event.c) */
	int input;              /* index into the run's inputs */
	uint64_t line;          /* 1-based, counting '\n' as grep -n does */
	/* Every input that reported it, input and line first, in the order
	 * in which they did; owned. */
	od_event_seen *seen;
	int nseen, seen_cap;
	uint64_t end_line;
	int rank;               /* -1: no rank prefix */
	int device;             /* -1: not printed */
	uint64_t occurrences;   /* how often this same message was seen */
	char timestamp[OD_TIMESTAMP_MAX];
	od_labels labels;       /* the record's or the prefix's (structured.c) */
	char exception[OD_EXCEPTION_MAX];
	char error[48];         /* a status name: CUBLAS_STATUS_ALLOC_FAILED */
	char tensor_shape[96];  /* TensorFlow, NumPy */
	char dtype[24];
	char allocator[48];     /* GPU_0_bfc */
	char *message;          /* owned, NUL-terminated, at most OD_MESSAGE_MAX */
	size_t message_len;
	bool message_cut;       /* the message was longer than OD_MESSAGE_MAX */
	od_memory mem;
	od_host host;
	od_logctx ctx;
	int64_t step;           /* -1 unknown */
	char phase[16];         /* forward, backward, optimizer, ... */
	/* The traceback's frames: owned, room for OD_FRAMES_MAX, allocated
	 * with the first (context.c, cx_frames); NULL when none. */
	od_frame *frames;
	int nframes;
	od_cause *causes;       /* owned, best first */
	int ncauses;
	char fingerprint[17];   /* 16 hex digits, "" before the rules ran */
	int *ranks;             /* owned, sorted, distinct */
	int nranks;
	int ranks_cap;
	bool ranks_dropped;     /* more than OD_RANKS_MAX ranks */
	uint64_t key;           /* grouping hash of kind and normalised message */
	uint64_t peer_key;      /* the same with the figures left out */
	/* Many ranks as one story (event.c). */
	/* Owned, room for OD_RANK_ROWS_MAX, allocated with the first row
	 * (event.c, ev_add_row); NULL when none. */
	od_rank_row *per_rank;
	int nper_rank;          /* 0 unless ranks reported different figures */
	int per_rank_dropped;   /* ranks beyond OD_RANK_ROWS_MAX */
	uint64_t peer_line;     /* the line of the last rank's report joined */
	int peer_input;         /* and its input (peer_line 0: none) */
	bool first_failure;     /* the run's first failure, of several */
	od_aftermath after;     /* what followed it (the first failure only) */
	const char *secondary;  /* static: why it follows from the first
	                         * failure, NULL when it does not */
	od_snapshot_facts snap; /* a memory snapshot's figures (snapshot.c) */
} od_event;

/* One input as the report describes it. */
typedef struct {
	char *name;             /* owned; "-" shown as "(standard input)" */
	uint64_t bytes;         /* decompressed bytes read */
	uint64_t lines;         /* '\n' count, plus one for a last unterminated line */
	const char *compression;/* "none", "gzip", "zstd", "bzip2" or "xz" */
	bool failed;            /* it could not be read, or not to the end */
} od_input;

/*
 * An error with its location.  Errors are values: the library fills one in
 * and returns; the program prints it in one place (src/cli/errors.c).
 */
typedef struct {
	char file[256];         /* the input, "" when none */
	uint64_t line;          /* 0 when none */
	uint64_t col;           /* 0 when none */
	char msg[256];
} od_error;

void od_error_set(od_error *err, const char *file, uint64_t line, uint64_t col,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Sizes. */
bool od_size_parse(const char *num, size_t numlen, const char *unit,
    size_t unitlen, int64_t *out);
bool od_size_parse_text(const char *s, size_t n, int64_t *out);
/* The length of the valid UTF-8 sequence at p (at most n bytes), or 0;
 * *cp receives its code point. */
size_t od_utf8_decode(const unsigned char *p, size_t n, unsigned *cp);
void od_size_format(int64_t bytes, char *buf, size_t len);
/* A byte count that a test sets in the environment variable name: its
 * decimal value when it is one from lo to hi, else dflt (unset, empty or
 * malformed too). */
size_t od_env_size(const char *name, size_t lo, size_t hi, size_t dflt);

const char *od_kind_name(od_kind kind);
const char *od_kind_title(od_kind kind);
/* The title of one event: its kind's, or where the kind's title says more
 * than the event shows (a library status that is only often memory), a
 * title that says no more than that. */
const char *od_event_title(const od_event *ev);
const char *od_kind_framework(od_kind kind);
/* What the reports and the rules' texts (the fact device_word) call the
 * device of ev: "NPU" for an Ascend NPU (torch_npu), "TPU" for an XLA:TPU
 * message (kn_vendor google), "device" for another XLA message (a GPU's or
 * a TPU's), "GPU" for any other. */
const char *od_device_word(const od_event *ev);
const char *od_confidence_name(od_confidence c);
const char *od_layout_name(od_layout fmt);
const char *od_hint_name(od_hint hint);

/* The event set: every event of a run, grouped.  See event.c. */
typedef struct od_events od_events;
od_events *od_events_new(void);
/* A set that keeps at most max (1 to OD_EVENTS_MAX) distinct events. */
od_events *od_events_new_max(size_t max);
void od_events_free(od_events *set);
/* Adds ev, or merges it into an equal event; takes ownership of ev's heap
 * fields in both cases (ev is left empty: it holds nothing to free, and
 * is made afresh with od_event_init before it is filled again). */
void od_events_add(od_events *set, od_event *ev);
/* The first n events were handed to a caller; how many of those are
 * still kept (the cap may drop one for a more severe event: event.c). */
void od_events_delivered(od_events *set, size_t n);
size_t od_events_ndelivered(const od_events *set);
/*
 * Keeps only some reports (grep's -m, and the --rank and --kind filters):
 * rank (-1: any) the reports with that rank prefix, kind (-1: any) those
 * of that kind, and of each input at most max_per_input (0: no limit)
 * events; a report beyond is forgotten, not counted as dropped.  Set it
 * before the first od_events_add.
 */
void od_events_filter(od_events *set, int rank, int kind, int max_per_input);
/* Whether event ev lists input (any line). */
bool od_event_seen_in(const od_event *ev, int input);
size_t od_events_count(const od_events *set);
/* Whether ev would be merged into an event already kept (or dropped):
 * then the scanner need not read its context. */
bool od_events_known(const od_events *set, const od_event *ev);
/*
 * Whether event i may still change by absorbing the next report of input
 * as another view of the same failure, when that report starts at line
 * next_line or later.  Until then the scanner does not deliver it.
 */
bool od_events_open(const od_events *set, size_t i, int input,
    uint64_t next_line);
od_event *od_events_get(od_events *set, size_t i);
/*
 * A line about the end of a distributed run (an od_after_what, with the
 * rank it names or -1), at line of input: counted on the run's first
 * failure when it comes after that failure, and making it the story's
 * first failure; ignored when no failure came before it.
 */
void od_events_after(od_events *set, int what, int rank, int input,
    uint64_t line);
uint64_t od_events_dropped(const od_events *set);
/*
 * An event read but decided a mention, no failure (decide.c): its input,
 * line, kind and reason (static) are kept, the first OD_MENTIONS_MAX of
 * them; od_events_mention_count counts them all.
 */
#define OD_MENTIONS_MAX 16
typedef struct {
	int input;
	uint64_t line;
	od_kind kind;
	const char *reason;
} od_mention;
void od_events_mention(od_events *set, const od_event *ev, const char *reason);
size_t od_events_mention_count(const od_events *set);
const od_mention *od_events_mention_get(const od_events *set, size_t i);
/* Whether memory ran out while an event's list of inputs or ranks or its
 * per-rank table grew since the last call (the scanner reports it at
 * od_scan_finish); clears it. */
bool od_events_nomem(od_events *set);
void od_event_init(od_event *ev);
void od_event_clear(od_event *ev);
void od_cause_clear(od_cause *c);
void od_fix_clear(od_fix *f);
/* Adds rank to ev's list of ranks; false when memory ran out. */
bool od_event_add_rank(od_event *ev, int rank);

/*
 * The scanner: reads one input after another and adds their events to an
 * event set.  An input is scanned from a file (od_scan_path), from memory
 * (od_scan_buffer), or chunk by chunk as it arrives (od_scan_begin, then
 * od_scan_feed for each chunk, then od_scan_finish); the first two are
 * built on the third.  jit says whether to compile the patterns with
 * PCRE2's JIT.  recognisers are the loaded recognisers of every stack but
 * PyTorch's (recog_table.h, rl_set.recognisers; NULL: none), borrowed:
 * they must outlive the scanner and the events it adds.
 */
typedef struct od_scanner od_scanner;
struct sk_table;
od_scanner *od_scanner_new(bool jit, const struct sk_table *recognisers,
    od_error *err);
/*
 * Where the scanners made after this call keep their compiled prefilter
 * between runs (scan_cache.h): dir, an absolute path (copied), is made
 * when missing, with the directory above it; NULL, the default, keeps no
 * cache.  For the whole process; false (and no cache) when dir is not
 * absolute or too long.
 */
bool od_scan_cache_dir(const char *dir);
void od_scanner_free(od_scanner *sc);
/*
 * Called with each event of the set once the scanner has read far enough
 * past it that the input cannot change it (see od_events_open), or at the
 * end of the input; ev belongs to the set.  od_scanner_on_event sets the
 * function (NULL: none) for the scans that follow.
 */
typedef void od_event_fn(od_event *ev, void *arg);
void od_scanner_on_event(od_scanner *sc, od_event_fn *fn, void *arg);
/* Starts input number index, whose events go to set (borrowed until
 * od_scan_finish). */
void od_scan_begin(od_scanner *sc, int index, od_events *set);
/* Scans the next len bytes of the input, as far as they have enough text
 * after them; copies what it keeps. */
void od_scan_feed(od_scanner *sc, const char *data, size_t len);
/*
 * The input paused (a pipe with nothing to read for a while): scans the
 * text up to the end of its last complete line as if its lookahead had
 * come, and delivers the events that are complete then: every event but
 * one that the next report may still join as another view of the same
 * failure (od_events_open).  What it scanned is not scanned again, so no
 * event is delivered twice; a message that its writer split over the
 * pause can be cut there.  The partial last line waits for its end.
 */
void od_scan_flush(od_scanner *sc);
/*
 * A short pause of the input: scans and delivers only what the bytes
 * still to come cannot change (scan.c): the last complete line, and any
 * message that reaches it, wait for the next line, so that the events
 * are those of the same bytes read at once.  od_scan_flush after a
 * longer pause decides the rest.
 */
void od_scan_pause(od_scanner *sc);
/* Scans the rest of the input and fills in info's bytes and lines.
 * False when memory ran out on the way (an event's message could not be
 * kept): then info->failed is set, and the caller reports it. */
bool od_scan_finish(od_scanner *sc, od_input *info);
/*
 * The two ends of od_scan_path, for a reader of its own (the command's,
 * which waits on a pipe and handles signals): od_scan_open fills in
 * info's name (NULL when memory ran out), opens path with the scanner's
 * zstd window and begins input index into set; NULL with err filled in
 * when it cannot.  The caller reads the input with in_read and hands it to
 * od_scan_feed; od_scan_close then finishes the input, fills in the rest
 * of info and closes r; false with err filled in when memory ran out.
 */
struct in_reader *od_scan_open(od_scanner *sc, const char *path, int index,
    od_input *info, od_events *set, od_error *err);
bool od_scan_close(od_scanner *sc, struct in_reader *r, od_input *info,
    od_error *err);
/*
 * Scans the input opened from path ("-" for standard input) and adds its
 * events to set.  Fills in *info (the caller frees info->name).  Returns
 * false with err filled in when the input could not be opened or read to
 * the end; the events found up to that point are kept.  When memory ran
 * out before the name was copied, info->name is NULL (and err says "out
 * of memory"): the input cannot be reported.
 */
bool od_scan_path(od_scanner *sc, const char *path, int index,
    od_input *info, od_events *set, od_error *err);
/* The largest zstd window od_scan_path allows, log2 bytes (input.h:
 * IN_ZSTD_WINDOW_LOG by default, 10 to 31). */
void od_scanner_set_zstd_window_log(od_scanner *sc, int log);
/* Scans an in-memory input: begin, one feed, finish.  Fills in info's
 * bytes, lines and compression ("none"), not its name. */
void od_scan_buffer(od_scanner *sc, const char *data, size_t len, int index,
    od_input *info, od_events *set);
/* The fixed strings the prefilter looks for out-of-memory messages with,
 * NULL-terminated; owned by sc. */
const char *const *od_anchors(const od_scanner *sc);
/* The first of the scanner's recognisers (its table's index, from from
 * on) that was stopped for reaching PCRE2's limits too often
 * (recog_table.h), or -1. */
int od_scanner_stopped(const od_scanner *sc, int from);

/* Reports. */
typedef enum {
	OD_FORMAT_TEXT, OD_FORMAT_JSON, OD_FORMAT_MARKDOWN,
	OD_FORMAT_JSONL,        /* one event a line (report_json.c) */
	OD_FORMAT_GITHUB,       /* workflow commands (report_github.c) */
	OD_FORMAT_PROMETHEUS,   /* metrics (report_prometheus.c) */
	OD_FORMAT_HTML          /* one self-contained page (report_html.c) */
} od_report_format;
#define OD_WIDTH_NONE INT_MAX
typedef struct {
	od_report_format format;
	bool color;
	bool utf8;              /* the text report's sparkline in block
	                         * characters; ASCII when false */
	char fingerprint[17];   /* the report's, "" when none */
	int width;              /* the text report's columns; 0: 80,
	                         * OD_WIDTH_NONE: not wrapped */
	bool verbose;           /* the text report's messages in full */
	/* The facts the user gave (--fact), "NAME=VALUE" each, borrowed;
	 * the reports show them. */
	const char *const *facts;
	int nfacts;
} od_report_opts;
/*
 * Writing text taken from a log, escaped for where it goes (escape.c): a
 * terminal (control characters and invalid bytes as \xNN) or Markdown (in
 * code spans and fenced blocks only, where nothing forms); JSON strings go
 * through od_escape_json (report_json.h).
 */
void od_escape_text(FILE *out, const char *s, size_t n, const char *indent);
/* One line of text from outside (a file name, a rule's text) for a
 * terminal, as od_escape_text writes it but with newlines and tabs
 * escaped too: for diagnostics and listings. */
void od_escape_line(FILE *out, const char *s);
/* Whether cp is a bidi or invisible format character, which every report
 * shows as "\uXXXX" (text) or strips. */
bool od_escape_invisible(unsigned cp);
/* Text from outside as a Markdown code span (a backtick run longer than
 * any inside it, padded as CommonMark needs), on one line; with table, a
 * '|' is escaped for a GFM table cell. */
void od_escape_markdown_code(FILE *out, const char *s, size_t n, bool table);
/* A rule's prose with the values it was rendered with (a title, an
 * explanation) as Markdown: plain words as prose, anything else (an
 * identifier, a path, a setting) in code spans, on one line. */
void od_escape_markdown_prose(FILE *out, const char *s, size_t n);
/* Text from outside as a fenced block with the info string info, closed
 * and followed by a blank line. */
void od_escape_markdown_fence(FILE *out, const char *info, const char *s,
    size_t n);
/* Text from outside for HTML, in an element or a quoted attribute: as
 * od_escape_text shows it, with the HTML specials as references; pre
 * keeps newlines (for <pre>). */
void od_escape_html(FILE *out, const char *s, size_t n, bool pre);
/* Writes the report; false when memory ran out (the JSON report is then
 * not written at all: a document with a part missing would still parse,
 * and be wrong; the text report stops after its last complete part). */
bool od_report_write(FILE *out, const od_report_opts *opts,
    const od_input *inputs, int ninputs, od_events *set);
/*
 * The text report in parts, for --line-buffered: the block of event i of
 * set as the whole report writes it (numbered i + 1), and the lines that
 * need the whole run, written at its end: the heading (the count of
 * events and inputs) and the count of events beyond the limit.  False
 * when memory ran out.
 */
bool od_report_text_event(FILE *out, const od_report_opts *opts,
    const od_input *inputs, int ninputs, od_events *set, size_t i);
bool od_report_text_end(FILE *out, const od_report_opts *opts,
    const od_input *inputs, int ninputs, od_events *set);
/* One event as one line of JSON (the event object of the JSON report),
 * for --format jsonl; inputs names its input.  False when out of memory. */
bool od_report_jsonl_event(FILE *out, const od_input *inputs,
    const od_event *ev);

/* One input of the triage summary (oomdoc --summary), as read alone. */
typedef struct {
	const char *name;       /* borrowed; "-" shown as "(standard input)" */
	bool failed;            /* it could not be read, or not to the end */
	uint64_t events;        /* its events, warnings included */
	uint64_t failures;      /* its fatal events */
	const char *kind;       /* od_kind_name of its first failure (else of
	                         * its first event), NULL when none */
	char top_cause[64];     /* the rule id, "" when none */
	char fingerprint[17];   /* "" when none */
} od_summary_row;
/* The summary as a table (text, Markdown) or a JSON document (json,
 * jsonl: schema oomdoc.summary/1). */
void od_summary_write(FILE *out, od_report_format format,
    const od_summary_row *rows, int n);

#endif

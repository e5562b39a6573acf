/*
 * device.h: the device layer of live mode.  One small interface (open,
 * processes, start a context, memory info, allocate and free, map with
 * virtual memory management, run a kernel, health counters, memory
 * activity, close) with two backends: the CUDA one (device_cuda.c, built
 * when CMake finds the toolkit) and a fake GPU (device_fake.c, always
 * built) that simulates a device of a given capacity that allocates in
 * 2 MiB pages behind a large virtual address space, as a GPU does, so
 * that every probe's logic is tested on machines without a GPU.
 *
 * The probes (probe_run.c) only see dv_device, the wrapper in device.c, which
 * enforces the cap on the memory taken and keeps a table of everything
 * allocated so that dv_close releases it on every exit path.
 *
 * Ownership: dv_open returns a device that the caller closes with
 * dv_close; allocation ids are valid until dv_free or dv_close.
 */
#ifndef OD_DEVICE_H
#define OD_DEVICE_H

#include "core.h"

#define DV_PROCS_MAX 32         /* processes listed per device */
#define DV_ALLOCS_MAX 8192      /* allocations held at once */
#define DV_BAD_MAX 8            /* mismatching addresses kept */
#define DV_SOURCES_MAX 4        /* allocation sources CUPTI names */

/*
 * Saturating arithmetic on byte counts and counters.  The figures of live
 * mode come from outside (a log, a JSON report, --fake-device) and may be
 * anything up to INT64_MAX, where a plain sum is undefined behaviour; a
 * saturated one is only an impossible size, which an allocation refuses.
 */
static inline int64_t
dv_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t
dv_sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t
dv_sat_mul(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
	return r;
}

/* v rounded up to a multiple of unit (> 0), or INT64_MAX rounded down
 * when that is above it. */
static inline int64_t
dv_round_up(int64_t v, int64_t unit)
{
	int64_t q = v / unit + (v % unit > 0), r;

	if (__builtin_mul_overflow(q, unit, &r))
		return INT64_MAX / unit * unit;
	return r;
}

/* What a device call came to. */
typedef enum {
	DV_OK,
	DV_OOM,                 /* the device had no room */
	DV_CAP,                 /* it would take more than the cap */
	DV_UNSUPPORTED,         /* not on this device or driver */
	DV_TIMEOUT,             /* a kernel ran past the time limit */
	DV_STOPPED,             /* a signal asked us to stop */
	DV_NO_DRIVER,           /* no NVIDIA driver (libcuda.so.1) here */
	DV_DRIVER_OLD,          /* the driver is older than what we call */
	DV_TENANT,              /* another process appeared: stop, release */
	DV_ERROR,               /* anything else; the error says what */
} dv_status;

/*
 * The kernel images, in the order dv_start offers them to the driver:
 * the fatbin (SASS for each architecture built, PTX of the newest), then
 * PTX of the oldest architecture at an old PTX ISA version, which drivers
 * older than the toolkit can JIT (kernels.h).  A driver that refuses an
 * image (a cubin or PTX newer than it knows, no code for this GPU) gets
 * the next one; which one loaded is in dv_info.
 */
typedef enum {
	DV_IMAGE_FATBIN,
	DV_IMAGE_PTX,
	DV_IMAGES
} dv_image;

/* "fatbin", "ptx" (the names of the JSON report), NULL out of range. */
const char *dv_image_name(int image);

/* A process holding memory on the device. */
typedef struct {
	int64_t pid;
	int64_t bytes;          /* OD_UNKNOWN where NVML cannot say */
	bool self;              /* this process */
} dv_proc;

/* Static facts of the device, read when it is opened. */
typedef struct {
	char backend[8];        /* "cuda" or "fake" */
	char name[96];
	int index;
	int64_t total;          /* capacity, bytes */
	int cc_major, cc_minor;
	int sm_count;
	int64_t l2_bytes;
	int64_t mem_clock_khz;  /* -1 unknown */
	int bus_width_bits;     /* -1 unknown */
	int ecc_enabled;        /* -1 unknown, 0, 1 */
	bool vmm;               /* virtual memory management (cuMemMap) */
	int64_t vmm_granularity;
	char pci_bus_id[32];
	char uuid[96];          /* "GPU-..." or "MIG-...", "" unknown */
	char parent_uuid[96];   /* a MIG instance's GPU, "" otherwise */
	char identity[240];     /* how CUDA's device was matched with the
	                         * one named and NVML's (dv_check_identity) */
	int count;              /* GPUs the backend sees, -1 unknown */
	int driver_cuda;        /* CUDA version the driver supports: 13000 */
	int runtime_cuda;       /* the toolkit that built the kernels */
	char driver_release[32];/* "580.65.06" from NVML, "" unknown */
	bool nvml;              /* NVML could be loaded */
	char nvml_note[200];    /* why not, or "" */
	bool cupti;             /* CUPTI records the memory activity */
	char cupti_note[200];
	int kernel_image;       /* the dv_image loaded, -1 none (yet) */
	char kernel_detail[160];/* what that image holds, for the report */
	char kernel_refused[400];  /* images the driver refused, and why */
} dv_info;

/* Health counters (NVML): unknown ones have their _known false, and
 * each count NVML could not give is OD_UNKNOWN (never 0). */
typedef struct {
	bool ecc_known;
	int64_t ecc_uncorrected;        /* volatile: since the driver loaded */
	int64_t ecc_corrected;
	int64_t ecc_uncorrected_total;  /* aggregate: over the GPU's life */
	char ecc_why[64];               /* "not supported", or NVML's error */
	bool remap_known;
	int64_t remapped_uncorrectable;
	int64_t remapped_correctable;
	char remap_why[64];
	bool on_parent;                 /* read on a MIG instance's parent */
	bool remap_pending;             /* a reset is needed */
	bool remap_failure;             /* remapping failed: service the GPU */
	bool retired_known;
	int64_t retired_sbe, retired_dbe;
	bool retired_pending;
	char note[200];                 /* what could not be read */
} dv_health;

/* The kinds of memory test (pattern_values.h), in the order they run. */
typedef enum {
	DV_PT_STATIC,           /* six fixed patterns: write all, read all */
	DV_PT_MOVING,           /* moving inversions, two values */
	DV_PT_RANDOM,           /* a pseudo-random pattern from the seed */
	DV_PT_KINDS
} dv_pattern_kind;

/*
 * The memory test over a buffer (memtest style).  seed is set by the
 * caller (the random pattern's); the rest is the backend's answer.
 */
typedef struct {
	uint64_t seed;          /* in: the random pattern's seed */
	int64_t bytes;          /* bytes tested per pass */
	int passes;             /* passes done, of every kind */
	int64_t errors;         /* words that read back wrong, in all */
	int kind_passes[DV_PT_KINDS];   /* passes done of each kind */
	int64_t kind_errors[DV_PT_KINDS];   /* and the mismatches each found */
	uint64_t bad[DV_BAD_MAX];  /* device addresses of the first ones */
	int nbad;
	double seconds;
	bool cut;               /* the time limit ended it early */
	/* The driver reported an uncorrectable ECC error during the test
	 * (CUDA_ERROR_ECC_UNCORRECTABLE): a confirmed fault, after which
	 * the context is lost. */
	bool ecc_fault;
} dv_pattern;

/* The passes of each kind: 6 static, 2 moving inversions, 1 random. */
#define DV_PT_PASSES_STATIC 6
#define DV_PT_PASSES_MOVING 2
#define DV_PT_PASSES_RANDOM 1

/*
 * Bandwidth of copy (c = a) and triad (a = b + s * c) over 8-byte
 * elements, best of the trials after a warm-up.  Bytes per second count
 * every byte read and every byte written (copy 2 x N x 8, triad 3 x N x
 * 8), as BabelStream does.
 */
typedef struct {
	int64_t array_bytes;
	int trials;
	double copy_bps;
	double triad_bps;
	double seconds;
	bool cut;
	/* The launch configuration the trials used: the fastest triad of the
	 * search (dv_bw_config), and how many configurations it tried. */
	int blocks_per_sm, threads;
	int configs;
} dv_bandwidth;

/*
 * The bandwidth test's launch configurations, k from 0 to DV_BW_CONFIGS
 * - 1: blocks per SM (1, 2, 4, 8) times threads per block (128, 256,
 * 512, 1024), as DCGM's memory_bandwidth plugin searches block sizes.
 */
#define DV_BW_CONFIGS 16
void dv_bw_config(int k, int *blocks_per_sm, int *threads);

/* Memory activity seen by CUPTI (or the fake) since the last reading. */
typedef struct {
	bool available;
	int64_t allocs, releases;
	int64_t alloc_bytes, release_bytes;
	int64_t device_bytes;   /* of which device memory */
	int64_t other_bytes;    /* pinned, pageable, static, pools */
	int64_t dropped;        /* records CUPTI could not keep */
	char sources[DV_SOURCES_MAX][64];  /* who allocated (shared objects) */
	int64_t source_allocs[DV_SOURCES_MAX];
	int nsources;
} dv_activity;

/* The fake GPU: what device_fake.c simulates. */
typedef struct {
	char name[64];
	int64_t total;          /* capacity */
	int64_t reserved;       /* held by the driver, never free */
	int64_t context;        /* what a CUDA context costs */
	int64_t page;           /* allocations round up to this */
	int64_t granularity;    /* VMM granularity */
	dv_proc procs[DV_PROCS_MAX];
	int nprocs;
	bool vmm, nvml, cupti;
	int ecc_enabled;
	int64_t mem_clock_khz;
	int bus_width_bits;
	double bandwidth;       /* the fraction of the peak kernels reach */
	int64_t pattern_errors; /* injected: words that read back wrong */
	/* Injected faults the tests must find by what they write (offsets
	 * in the tested buffer; -1 none): a bit stuck at 0 or 1, and a
	 * coupling fault, where a 0-to-1 transition of a bit of one word
	 * inverts that bit of a word above it. */
	int64_t stuck_offset;
	int stuck_bit, stuck_value;
	int64_t couple_from, couple_to;
	int couple_bit;
	bool ecc_fault;         /* injected: CUDA_ERROR_ECC_UNCORRECTABLE */
	int64_t ecc_uncorrected, ecc_corrected;
	int64_t remapped_uncorrectable;
	bool remap_pending, remap_failure;
	bool remap_rows;        /* the part has remapped-row counters */
	/* Injected: what the counters gain while the pattern test runs. */
	int64_t ecc_uncorrected_rise, ecc_corrected_rise;
	int64_t remapped_rise, remapped_correctable_rise;
	bool remap_pending_rise;
	int fail_alloc;         /* injected: the Nth allocation fails, 0 never */
	int tenant_after;       /* injected: a tenant comes at allocation N */
	dv_proc tenant;         /* its pid and bytes */
	int64_t hidden;         /* held by a process NVML does not list */
	bool proc_list;         /* NVML can read the process list */
	bool hang;              /* injected: kernels never finish */
	int64_t delay_ms;       /* each kernel takes this long, for real */
	bool no_gpu;            /* injected: opening fails as with no GPU */
	int gpus;               /* GPUs on the fake node, each like the spec */
	int mig;                /* MIG instances on GPU 0, each 1/7 of it */
	bool contiguous;        /* the old one-range model: a control only */
	int refuse_images;      /* injected: the driver refuses the first N
	                         * kernel images (1: the fatbin) */
	char cuda_uuid[96];     /* injected: the UUID CUDA's device gives
	                         * ("none": none), "" the one resolved */
} dv_fake_spec;

/* What dv_open needs. */
typedef struct {
	int index;              /* device ordinal */
	/* Or the device by UUID (GPU-..., MIG-...) or PCI bus id; NULL: by
	 * index.  dv_open checks that the backend opened that one. */
	const char *id;
	const dv_fake_spec *fake;  /* for the fake backend */
	double time_limit;      /* seconds per kernel */
	const char *nvml_path;  /* library overrides, NULL for the defaults */
	const char *cupti_path;
} dv_config;

/*
 * A backend: the functions device.c calls.  Each returns DV_OK or a
 * status with err filled in (where there is one); handles are the
 * backend's own.  time_limit bounds each kernel; backends check
 * dv_stop_requested() between kernel launches.
 */
typedef struct {
	const char *name;
	dv_status (*open)(const dv_config *cfg, void **st, dv_info *info,
	    od_error *err);
	/* Processes holding memory on the device; *known false without NVML. */
	int (*processes)(void *st, dv_proc *v, int cap, bool *known);
	/* Creates the context and says what it cost (-1 unknown). */
	dv_status (*start)(void *st, int64_t *context_bytes, od_error *err);
	dv_status (*mem_info)(void *st, int64_t *free_b, int64_t *total,
	    od_error *err);
	dv_status (*alloc)(void *st, int64_t bytes, void **h, od_error *err);
	void (*release)(void *st, void *h);
	/* Reserves bytes of address space and maps them in chunks. */
	dv_status (*vmm_map)(void *st, int64_t bytes, int64_t chunk, void **h,
	    int *nchunks, od_error *err);
	void (*vmm_release)(void *st, void *h);
	/* Writes over the memory of h (a plain or a mapped allocation). */
	dv_status (*fill)(void *st, void *h, int64_t bytes, double time_limit,
	    od_error *err);
	dv_status (*pattern)(void *st, void *h, int64_t bytes,
	    double time_limit, dv_pattern *out, od_error *err);
	dv_status (*bandwidth)(void *st, void *a, void *b, void *c,
	    int64_t bytes, double time_limit, dv_bandwidth *out, od_error *err);
	dv_status (*health)(void *st, dv_health *out);
	/* The activity since the last call (and resets it). */
	void (*activity)(void *st, dv_activity *out);
	void (*close)(void *st);
	/* After a timeout: drops the host-side record of allocation h and
	 * leaves its device memory as it is.  NULL where nothing can be
	 * dropped without touching the device. */
	void (*forget)(void *st, void *h);
	/* After a timeout: releases what the backend holds on the host and
	 * nothing on the device (a kernel may still use it).  NULL where the
	 * two cannot be told apart (CUDA: the process's end releases the
	 * context); the fake backend's device is host memory that its
	 * synchronous kernels no longer touch once they have returned. */
	void (*abandon)(void *st);
	/*
	 * Loads kernel image (a dv_image) into the started context.
	 * DV_UNSUPPORTED when the driver refuses that image, with why it did
	 * in why (cap bytes): dv_start then offers the next.  On DV_OK,
	 * detail says what the image holds.  Any other status ends the
	 * start, with err filled in.
	 */
	dv_status (*load_image)(void *st, int image, char *detail,
	    char *why, size_t cap, od_error *err);
} dv_backend;

extern const dv_backend dv_fake_backend;
#ifdef OOMDOC_HAVE_CUDA
extern const dv_backend dv_cuda_backend;
#endif

typedef struct dv_device dv_device;

/*
 * Opens device cfg->index with the backend named ("cuda" or "fake").
 * Creates no context yet.  NULL with err filled in (and *st set) when
 * there is no such backend, no driver, no GPU or no such device.
 */
dv_device *dv_open(const char *backend, const dv_config *cfg, dv_status *st,
    od_error *err);
/* Releases everything still allocated, then closes.  NULL is a no-op. */
void dv_close(dv_device *d);

const dv_info *dv_info_of(const dv_device *d);
int dv_processes(dv_device *d, dv_proc *v, int cap, bool *known);
/* Creates the context and loads the kernels, the first image the driver
 * takes (DV_DRIVER_OLD when it refuses them all). */
dv_status dv_start(dv_device *d, int64_t *context_bytes, od_error *err);
dv_status dv_mem_info(dv_device *d, int64_t *free_b, int64_t *total,
    od_error *err);

/* The cap on the bytes held at once (negative: none), and what is held. */
void dv_set_cap(dv_device *d, int64_t cap);
int64_t dv_cap(const dv_device *d);
int64_t dv_held(const dv_device *d);
int64_t dv_peak(const dv_device *d);
double dv_time_limit(const dv_device *d);

/*
 * Allocates bytes (cudaMalloc: one contiguous block), or maps them with
 * virtual memory management in chunks of chunk bytes (cuMemCreate and
 * cuMemMap, what PyTorch's expandable segments use).  Sets *id, to pass
 * to dv_free.  DV_CAP, without touching the device, when the cap would be
 * passed.
 */
dv_status dv_alloc(dv_device *d, int64_t bytes, int *id, od_error *err);
dv_status dv_vmm_map(dv_device *d, int64_t bytes, int64_t chunk, int *id,
    int *nchunks, od_error *err);
/*
 * Tries one allocation of bytes and frees it at once.  It may pass the
 * cap only when the device says it has less than bytes free, that is when
 * it can only fail: the fragmentation replay asks for the request on a
 * device filled to the cap, to see it refused.
 */
dv_status dv_try(dv_device *d, int64_t bytes, od_error *err);
/* The same for a mapping in chunks, which is written over before it is
 * released; *nchunks says how many chunks it took. */
dv_status dv_vmm_try(dv_device *d, int64_t bytes, int64_t chunk,
    int *nchunks, od_error *err);
void dv_free(dv_device *d, int id);
/* Frees every allocation made after the first n (a probe's own). */
void dv_free_from(dv_device *d, int n);
int dv_count(const dv_device *d);

dv_status dv_fill(dv_device *d, int id, od_error *err);
/* The memory test over allocation id; out->seed (the random pattern's)
 * is read, the rest of *out written. */
dv_status dv_pattern_test(dv_device *d, int id, dv_pattern *out,
    od_error *err);
dv_status dv_bandwidth_test(dv_device *d, int a, int b, int c,
    dv_bandwidth *out, od_error *err);
dv_status dv_health_read(dv_device *d, dv_health *out);
void dv_activity_take(dv_device *d, dv_activity *out);

/*
 * The tenant guard: from now on, each allocation and each dv_check first
 * lists the processes again (a pid that was not there is a tenant) and
 * reads the free memory (less than what was free at dv_guard, less what
 * we took since, by more than tolerance, is a tenant NVML does not list).
 * A tenant makes that call and every later allocation DV_TENANT, with
 * the error saying who; the caller then releases everything.
 */
void dv_guard(dv_device *d, int64_t tolerance);
dv_status dv_check(dv_device *d, od_error *err);
/* Whether a call returned DV_TIMEOUT: from then on nothing is freed or
 * unmapped (a kernel may still use it), dv_close included. */
bool dv_timed_out(const dv_device *d);
/* Seconds the device call in progress has run, -1 when none is (for the
 * watchdog thread; watchdog.h). */
double dv_busy_seconds(void);
/* Seconds on the monotonic clock, for the live layer's deadlines. */
double dv_seconds(void);

/* Signals: the handler calls dv_request_stop; work checks dv_stopped. */
void dv_request_stop(int sig);
void dv_clear_stop(void);
bool dv_stopped(void);
int dv_stop_signal(void);

const char *dv_status_name(dv_status st);

/* The fake device: defaults, and "key=value,..." settings over them. */
void dv_fake_default(dv_fake_spec *spec);
bool dv_fake_parse(dv_fake_spec *spec, const char *text, od_error *err);

/*
 * How a backend finds a MIG instance.  CUDA enumerates a MIG instance
 * only through CUDA_VISIBLE_DEVICES=MIG-<UUID>, set before cuInit (NVIDIA
 * MIG User Guide, "Running CUDA Applications on Bare-Metal" and "Device
 * Enumeration"); NVML finds it with nvmlDeviceGetHandleByUUID, and its
 * parent GPU, which holds the ECC and remapped-row counters, with
 * nvmlDeviceGetDeviceHandleFromMigDeviceHandle.
 */
typedef struct {
	bool mig;               /* the device is a MIG instance */
	char uuid[96];          /* its UUID */
	bool from_env;          /* named by CUDA_VISIBLE_DEVICES, not by id */
	int cuda_index;         /* its CUDA ordinal once CUDA_VISIBLE_DEVICES
	                         * is set to uuid: 0 */
} dv_selection;

/*
 * The MIG instance that id names (MIG-...), or, with no id, the entry
 * index of visible (the process's CUDA_VISIBLE_DEVICES, NULL for none)
 * when that entry is a MIG UUID; out->mig false otherwise.
 */
void dv_select(const char *id, int index, const char *visible,
    dv_selection *out);

/*
 * Whether the device CUDA opened is the one named and the one NVML
 * reads.  want: the MIG UUID the selection named ("" for none); cuda:
 * the UUID the driver gives for CUDA's device (cuDeviceGetUuid, of a
 * MIG instance cuDeviceGetUuid_v2; "" when it gives none); nvml: the
 * UUID of NVML's device ("" without NVML).  DV_OK with note (size cap)
 * saying what was cross-checked; DV_UNSUPPORTED, with err saying which
 * disagree, when CUDA's device is not the MIG instance named (its
 * CUDA_VISIBLE_DEVICES was not honoured) or not NVML's (the processes,
 * memory and counters would be another device's): nothing is probed.
 */
dv_status dv_check_identity(const char *want, const char *cuda,
    const char *nvml, char *note, size_t cap, od_error *err);

/* Whether id (a UUID, or a PCI bus id with or without its domain) names
 * the device of info; case is ignored. */
bool dv_id_matches(const dv_info *info, const char *id);

/* The theoretical peak bandwidth, bytes per second (-1 unknown): twice
 * the memory clock (double data rate) times the bus width in bytes. */
double dv_peak_bandwidth(const dv_info *info);

#endif

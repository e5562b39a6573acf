/*
 * facts.c: the facts a rule can use, read from an event.
 *
 * Each fact is a name and a way to read it.  A fact the log does not give
 * is unknown: the lookup returns false and the rule language propagates
 * the unknown.  Facts the user gives with --fact replace the log's.  The
 * list is documented in man/oomdoc.1 (RULES), and tests/cli_docs.sh
 * checks that the two agree.
 */
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "context.h"
#include "facts.h"
#include "knowledge.h"
#include "snapshot.h"

typedef enum {
	F_BYTES, F_NUM, F_STR, F_BOOL
} fc_type;

enum {
	/* Memory figures of the message, bytes. */
	FC_REQUESTED, FC_TOTAL, FC_FREE, FC_ALLOCATED, FC_RESERVED,
	FC_RESERVED_UNALLOCATED, FC_PROCESS_IN_USE, FC_NON_FRAMEWORK,
	FC_ALLOWED, FC_PRIVATE_POOLS, FC_PEAK, FC_OTHER_PROCESSES,
	/* Derived, bytes. */
	FC_USABLE, FC_NEEDED, FC_GROWTH, FC_SHORTFALL,
	/* The memory account (account.c), bytes. */
	FC_ACC_OTHER, FC_ACC_NON_FRAMEWORK, FC_ACC_ALLOCATED,
	FC_ACC_RESERVED_UNALLOCATED, FC_ACC_FREE, FC_ACC_UNACCOUNTED,
	FC_ACC_SELF, FC_ACC_ELSEWHERE,
	FC_MEM_FIRST, FC_MEM_LAST, FC_MEM_MAX,
	/* Host. */
	FC_HOST_PID, FC_HOST_PROCESS, FC_HOST_TOTAL_VM, FC_HOST_ANON_RSS,
	FC_HOST_FILE_RSS, FC_HOST_SHMEM_RSS, FC_HOST_LIMIT, FC_HOST_USAGE,
	FC_HOST_EXIT_CODE, FC_HOST_SIGNAL, FC_HOST_JOB, FC_HOST_POD,
	FC_HOST_NAMESPACE, FC_HOST_CONTAINER,
	/* The event. */
	FC_KIND, FC_KIND_TITLE, FC_FRAMEWORK, FC_FORMAT, FC_CONFIDENCE, FC_FATAL,
	FC_DEVICE, FC_RANK, FC_RANKS_FAILED, FC_OCCURRENCES,
	FC_OTHER_PROCESS_COUNT, FC_EXCEPTION, FC_ERROR, FC_DTYPE,
	FC_TENSOR_SHAPE, FC_ALLOCATOR, FC_HINT,
	/* Context. */
	FC_STEP, FC_PHASE, FC_USER_FRAME, FC_BATCH_SIZE, FC_ACCUM_STEPS,
	FC_ACCUM, FC_SEQ_LEN, FC_PRECISION, FC_GRAD_CHECKPOINTING, FC_DATALOADER,
	FC_ALLOC_CONF, FC_ALLOC_CONF_PREFIX, FC_EXPANDABLE_SEGMENTS,
	FC_EXPANDABLE_AVAILABLE, FC_MAX_SPLIT_SIZE_MB, FC_MALLOC_ASYNC,
	/* From the knowledge table (knowledge.c). */
	FC_RELEASE_MIN, FC_RELEASE_MAX, FC_VENDOR, FC_DEVICE_WORD, FC_ALLOC_CONF_VAR,
	FC_MAX_SPLIT_MIN_MB, FC_AUTOCAST, FC_SMI_PROCS, FC_VISIBLE_DEVICES,
	FC_MPS_WATERMARK, FC_REQUEST_ROLE, FC_GPU_MODEL, FC_COMPUTE_CAPABILITY,
	FC_XLA_CONF, FC_XLA_PREALLOCATE, FC_XLA_MEM_FRACTION, FC_TF_ALLOCATOR,
	FC_TF_ALLOW_GROWTH, FC_TF_GPU_ALLOCATOR, FC_TF_ASYNC_AVAILABLE,
	FC_TF_FORCE_GROWTH_AVAILABLE,
	FC_FRACTION_AVAILABLE, FC_SERVING, FC_XID, FC_ECC,
	FC_SETTINGS_AFTER, FC_TF_ALLOW_GROWTH_AFTER, FC_XLA_MEM_FRACTION_AFTER,
	FC_VLLM_EAGER_AVAILABLE, FC_VLLM_FP8_KV_AVAILABLE,
	FC_SGLANG_CHUNKED_AVAILABLE, FC_CONTAINER_SHM, FC_CONTAINER_OOM_KILLED,
	FC_TGI, FC_TGI_PREFILL_AVAILABLE, FC_TGI_QUANTIZE, FC_JAXLIB_MIN,
	FC_JAXLIB_MAX,
	/* The series of memory readings (context.c, cx_series_of). */
	FC_RD_COUNT, FC_RD_SERIES, FC_RD_WHAT, FC_RD_FIRST, FC_RD_LAST,
	FC_RD_MIN, FC_RD_MAX, FC_RD_MEDIAN, FC_RD_FIRST_STEP, FC_RD_LAST_STEP,
	FC_GROWTH_PER_STEP, FC_SPIKE_OVER_MEDIAN, FC_SPIKE_SHARE,
	FC_RD_RANKS, FC_RD_RANK_SPREAD, FC_RD_HIGH_RANK, FC_RANK_SPREAD_SHARE,
	FC_SUM_OOMS, FC_SUM_RETRIES, FC_SUM_NON_RELEASABLE,
	FC_VLLM_WEIGHTS, FC_VLLM_KV_CACHE, FC_VLLM_KV_TOKENS, FC_VLLM_MAX_LEN,
	FC_VLLM_CONCURRENCY, FC_VLLM_CONCURRENCY_LEN, FC_VLLM_EST_LEN,
	/* A PyTorch memory snapshot joined to the event (snapshot.c). */
	FC_SNAP_VERDICT, FC_SNAP_REQUEST, FC_SNAP_DEVICE_FREE, FC_SNAP_SEGMENTS,
	FC_SNAP_RESERVED, FC_SNAP_ALLOCATED, FC_SNAP_INACTIVE,
	FC_SNAP_LARGEST_FREE, FC_SNAP_SPLIT_FREE, FC_SNAP_PENDING_FREE,
	FC_SNAP_EXPANDABLE_OFFER, FC_SNAP_EXPANDABLE, FC_SNAP_OWNER,
	FC_SNAP_OWNER_BYTES,
	FC_COUNT
};

static const struct {
	const char *name;
	fc_type type;
} fc_table[FC_COUNT] = {
	[FC_REQUESTED] = { "requested", F_BYTES },
	[FC_TOTAL] = { "total", F_BYTES },
	[FC_FREE] = { "free", F_BYTES },
	[FC_ALLOCATED] = { "allocated", F_BYTES },
	[FC_RESERVED] = { "reserved", F_BYTES },
	[FC_RESERVED_UNALLOCATED] = { "reserved_unallocated", F_BYTES },
	[FC_PROCESS_IN_USE] = { "process_in_use", F_BYTES },
	[FC_NON_FRAMEWORK] = { "non_framework", F_BYTES },
	[FC_ALLOWED] = { "allowed", F_BYTES },
	[FC_PRIVATE_POOLS] = { "private_pools", F_BYTES },
	[FC_PEAK] = { "peak", F_BYTES },
	[FC_OTHER_PROCESSES] = { "other_processes", F_BYTES },
	[FC_USABLE] = { "usable", F_BYTES },
	[FC_NEEDED] = { "needed", F_BYTES },
	[FC_GROWTH] = { "growth", F_BYTES },
	[FC_SHORTFALL] = { "shortfall", F_BYTES },
	[FC_ACC_OTHER] = { "account.other_processes", F_BYTES },
	[FC_ACC_NON_FRAMEWORK] = { "account.non_framework", F_BYTES },
	[FC_ACC_ALLOCATED] = { "account.allocated", F_BYTES },
	[FC_ACC_RESERVED_UNALLOCATED] = { "account.reserved_unallocated",
	    F_BYTES },
	[FC_ACC_FREE] = { "account.free", F_BYTES },
	[FC_ACC_UNACCOUNTED] = { "account.unaccounted", F_BYTES },
	[FC_ACC_SELF] = { "account.self", F_BYTES },
	[FC_ACC_ELSEWHERE] = { "account.elsewhere", F_BYTES },
	[FC_MEM_FIRST] = { "mem.first", F_BYTES },
	[FC_MEM_LAST] = { "mem.last", F_BYTES },
	[FC_MEM_MAX] = { "mem.max", F_BYTES },
	[FC_HOST_PID] = { "host.pid", F_NUM },
	[FC_HOST_PROCESS] = { "host.process", F_STR },
	[FC_HOST_TOTAL_VM] = { "host.total_vm", F_BYTES },
	[FC_HOST_ANON_RSS] = { "host.anon_rss", F_BYTES },
	[FC_HOST_FILE_RSS] = { "host.file_rss", F_BYTES },
	[FC_HOST_SHMEM_RSS] = { "host.shmem_rss", F_BYTES },
	[FC_HOST_LIMIT] = { "host.limit", F_BYTES },
	[FC_HOST_USAGE] = { "host.usage", F_BYTES },
	[FC_HOST_EXIT_CODE] = { "host.exit_code", F_NUM },
	[FC_HOST_SIGNAL] = { "host.signal", F_STR },
	[FC_HOST_JOB] = { "host.job", F_STR },
	[FC_HOST_POD] = { "host.pod", F_STR },
	[FC_HOST_NAMESPACE] = { "host.namespace", F_STR },
	[FC_HOST_CONTAINER] = { "host.container", F_STR },
	[FC_KIND] = { "kind", F_STR },
	[FC_KIND_TITLE] = { "kind.title", F_STR },
	[FC_FRAMEWORK] = { "framework", F_STR },
	[FC_FORMAT] = { "format", F_STR },
	[FC_CONFIDENCE] = { "confidence", F_STR },
	[FC_FATAL] = { "fatal", F_BOOL },
	[FC_DEVICE] = { "device", F_NUM },
	[FC_RANK] = { "rank", F_NUM },
	[FC_RANKS_FAILED] = { "ranks_failed", F_NUM },
	[FC_OCCURRENCES] = { "occurrences", F_NUM },
	[FC_OTHER_PROCESS_COUNT] = { "other_process_count", F_NUM },
	[FC_EXCEPTION] = { "exception", F_STR },
	[FC_ERROR] = { "error", F_STR },
	[FC_DTYPE] = { "dtype", F_STR },
	[FC_TENSOR_SHAPE] = { "tensor_shape", F_STR },
	[FC_ALLOCATOR] = { "allocator", F_STR },
	[FC_HINT] = { "hint", F_STR },
	[FC_STEP] = { "step", F_NUM },
	[FC_PHASE] = { "phase", F_STR },
	[FC_USER_FRAME] = { "user_frame", F_STR },
	[FC_BATCH_SIZE] = { "batch_size", F_NUM },
	[FC_ACCUM_STEPS] = { "accum_steps", F_NUM },
	[FC_ACCUM] = { "accum", F_NUM },
	[FC_SEQ_LEN] = { "seq_len", F_NUM },
	[FC_PRECISION] = { "precision", F_STR },
	[FC_GRAD_CHECKPOINTING] = { "grad_checkpointing", F_BOOL },
	[FC_DATALOADER] = { "dataloader", F_BOOL },
	[FC_ALLOC_CONF] = { "alloc_conf", F_STR },
	[FC_ALLOC_CONF_PREFIX] = { "alloc_conf_prefix", F_STR },
	[FC_EXPANDABLE_SEGMENTS] = { "expandable_segments", F_BOOL },
	[FC_EXPANDABLE_AVAILABLE] = { "expandable_available", F_BOOL },
	[FC_MAX_SPLIT_SIZE_MB] = { "max_split_size_mb", F_NUM },
	[FC_MALLOC_ASYNC] = { "malloc_async", F_BOOL },
	[FC_RELEASE_MIN] = { "release.min", F_STR },
	[FC_RELEASE_MAX] = { "release.max", F_STR },
	[FC_VENDOR] = { "vendor", F_STR },
	[FC_DEVICE_WORD] = { "device_word", F_STR },
	[FC_ALLOC_CONF_VAR] = { "alloc_conf_var", F_STR },
	[FC_MAX_SPLIT_MIN_MB] = { "max_split_min_mb", F_NUM },
	[FC_AUTOCAST] = { "autocast", F_STR },
	[FC_SMI_PROCS] = { "smi_procs", F_STR },
	[FC_VISIBLE_DEVICES] = { "visible_devices", F_STR },
	[FC_MPS_WATERMARK] = { "mps_watermark", F_STR },
	[FC_REQUEST_ROLE] = { "request_role", F_STR },
	[FC_GPU_MODEL] = { "gpu_model", F_STR },
	[FC_COMPUTE_CAPABILITY] = { "compute_capability", F_NUM },
	[FC_XLA_CONF] = { "xla_conf", F_STR },
	[FC_XLA_PREALLOCATE] = { "xla_preallocate", F_BOOL },
	[FC_XLA_MEM_FRACTION] = { "xla_mem_fraction", F_NUM },
	[FC_TF_ALLOCATOR] = { "tf_allocator", F_STR },
	[FC_TF_ALLOW_GROWTH] = { "tf_allow_growth", F_BOOL },
	[FC_TF_GPU_ALLOCATOR] = { "tf_gpu_allocator", F_STR },
	[FC_TF_ASYNC_AVAILABLE] = { "tf_async_available", F_BOOL },
	[FC_TF_FORCE_GROWTH_AVAILABLE] = { "tf_force_growth_available", F_BOOL },
	[FC_FRACTION_AVAILABLE] = { "memory_fraction_available", F_BOOL },
	[FC_SERVING] = { "serving", F_BOOL },
	[FC_XID] = { "xid", F_NUM },
	[FC_ECC] = { "ecc_error", F_BOOL },
	[FC_SETTINGS_AFTER] = { "settings_after", F_STR },
	[FC_TF_ALLOW_GROWTH_AFTER] = { "tf_allow_growth_after", F_BOOL },
	[FC_XLA_MEM_FRACTION_AFTER] = { "xla_mem_fraction_after", F_NUM },
	[FC_VLLM_EAGER_AVAILABLE] = { "vllm_eager_available", F_BOOL },
	[FC_VLLM_FP8_KV_AVAILABLE] = { "vllm_fp8_kv_available", F_BOOL },
	[FC_SGLANG_CHUNKED_AVAILABLE] = { "sglang_chunked_prefill_available",
	    F_BOOL },
	[FC_CONTAINER_SHM] = { "container_shm", F_STR },
	[FC_CONTAINER_OOM_KILLED] = { "container_oom_killed", F_BOOL },
	[FC_TGI] = { "tgi", F_BOOL },
	[FC_TGI_PREFILL_AVAILABLE] = { "tgi_prefill_tokens_available",
	    F_BOOL },
	[FC_TGI_QUANTIZE] = { "tgi_quantize", F_BOOL },
	[FC_JAXLIB_MIN] = { "jaxlib_min", F_NUM },
	[FC_JAXLIB_MAX] = { "jaxlib_max", F_NUM },
	[FC_RD_COUNT] = { "readings.count", F_NUM },
	[FC_RD_SERIES] = { "readings.series", F_NUM },
	[FC_RD_WHAT] = { "readings.what", F_STR },
	[FC_RD_FIRST] = { "readings.first", F_BYTES },
	[FC_RD_LAST] = { "readings.last", F_BYTES },
	[FC_RD_MIN] = { "readings.min", F_BYTES },
	[FC_RD_MAX] = { "readings.max", F_BYTES },
	[FC_RD_MEDIAN] = { "readings.median", F_BYTES },
	[FC_RD_FIRST_STEP] = { "readings.first_step", F_NUM },
	[FC_RD_LAST_STEP] = { "readings.last_step", F_NUM },
	[FC_GROWTH_PER_STEP] = { "growth_per_step", F_BYTES },
	[FC_SPIKE_OVER_MEDIAN] = { "spike_over_median", F_BYTES },
	[FC_SPIKE_SHARE] = { "spike_share", F_NUM },
	[FC_RD_RANKS] = { "readings.ranks", F_NUM },
	[FC_RD_RANK_SPREAD] = { "readings.rank_spread", F_BYTES },
	[FC_RD_HIGH_RANK] = { "readings.high_rank", F_NUM },
	[FC_RANK_SPREAD_SHARE] = { "rank_spread_share", F_NUM },
	[FC_SUM_OOMS] = { "memory_summary.ooms", F_NUM },
	[FC_SUM_RETRIES] = { "memory_summary.cuda_malloc_retries", F_NUM },
	[FC_SUM_NON_RELEASABLE] = { "memory_summary.non_releasable", F_BYTES },
	[FC_VLLM_WEIGHTS] = { "vllm.weights", F_BYTES },
	[FC_VLLM_KV_CACHE] = { "vllm.kv_cache", F_BYTES },
	[FC_VLLM_KV_TOKENS] = { "vllm.kv_tokens", F_NUM },
	[FC_VLLM_MAX_LEN] = { "vllm.max_model_len", F_NUM },
	[FC_VLLM_CONCURRENCY] = { "vllm.max_concurrency", F_NUM },
	[FC_VLLM_CONCURRENCY_LEN] = { "vllm.concurrency_len", F_NUM },
	[FC_VLLM_EST_LEN] = { "vllm.estimated_max_len", F_NUM },
	[FC_SNAP_VERDICT] = { "snapshot.verdict", F_STR },
	[FC_SNAP_REQUEST] = { "snapshot.request", F_BYTES },
	[FC_SNAP_DEVICE_FREE] = { "snapshot.device_free", F_BYTES },
	[FC_SNAP_SEGMENTS] = { "snapshot.segments", F_NUM },
	[FC_SNAP_RESERVED] = { "snapshot.reserved", F_BYTES },
	[FC_SNAP_ALLOCATED] = { "snapshot.allocated", F_BYTES },
	[FC_SNAP_INACTIVE] = { "snapshot.inactive", F_BYTES },
	[FC_SNAP_LARGEST_FREE] = { "snapshot.largest_free", F_BYTES },
	[FC_SNAP_SPLIT_FREE] = { "snapshot.split_free", F_BYTES },
	[FC_SNAP_PENDING_FREE] = { "snapshot.pending_free", F_BYTES },
	[FC_SNAP_EXPANDABLE_OFFER] = { "snapshot.expandable_offer", F_BYTES },
	[FC_SNAP_EXPANDABLE] = { "snapshot.expandable", F_BOOL },
	[FC_SNAP_OWNER] = { "snapshot.owner", F_STR },
	[FC_SNAP_OWNER_BYTES] = { "snapshot.owner_bytes", F_BYTES },
};

static int
fc_find(const char *name, size_t len)
{
	int i;

	for (i = 0; i < FC_COUNT; i++)
		if (strlen(fc_table[i].name) == len &&
		    memcmp(fc_table[i].name, name, len) == 0)
			return i;
	return -1;
}

const char *
fc_name(int i)
{
	return i >= 0 && i < FC_COUNT ? fc_table[i].name : NULL;
}

bool
fc_exists(void *ctx, const char *name, size_t len)
{
	(void)ctx;
	return fc_find(name, len) >= 0;
}

static bool
fc_num(xv_value *out, int64_t v, bool bytes)
{
	if (v < 0)
		return false;
	out->type = XV_NUM;
	out->num = (double)v;
	out->bytes = bytes;
	return true;
}

static bool
fc_str(xv_value *out, const char *s)
{
	if (s == NULL || s[0] == '\0')
		return false;
	out->type = XV_STR;
	out->str = s;
	out->len = strlen(s);
	return true;
}

static bool
fc_bool(xv_value *out, int v)
{
	if (v < 0)
		return false;
	out->type = XV_BOOL;
	out->b = v != 0;
	return true;
}

/* The value of option in an allocator configuration "a:1,b:2", or NULL. */
static const char *
fc_option(const char *conf, const char *option)
{
	size_t n = strlen(option);
	const char *p = conf;

	while ((p = strstr(p, option)) != NULL) {
		if ((p == conf || p[-1] == ',' || p[-1] == ' ') && p[n] == ':')
			return p + n + 1;
		p += n;
	}
	return NULL;
}

/* The value of NAME in a "NAME=value NAME2=value" list, or NULL. */
static const char *
fc_setting(const char *list, const char *name)
{
	const char *p = strstr(list, name);

	return p != NULL && p[strlen(name)] == '=' ? p + strlen(name) + 1 :
	    NULL;
}

static int
fc_truth(const char *v)
{
	if (v == NULL)
		return -1;
	return strncmp(v, "True", 4) == 0 || strncmp(v, "true", 4) == 0 ||
	    v[0] == '1';
}

/* Whether the event comes from Text Generation Inference: its lines
 * before the event (context.c, CX_SERVING) or its own message. */
static bool
fc_tgi(const od_event *ev)
{
	return (ev->ctx.serving & 2) != 0 || (ev->framework != NULL &&
	    strcmp(ev->framework, "tgi") == 0);
}

int
fc_self(const od_event *ev)
{
	od_account a;

	od_account_of(ev, &a);
	return a.self;
}

/* A part of the account as a fact: known, or unknown. */
static bool
fc_part(xv_value *out, const od_account *a, od_part p)
{
	if (!a->part[p].known)
		return false;
	out->type = XV_NUM;
	out->num = (double)a->part[p].bytes;
	out->bytes = true;
	return true;
}

/* The last user frame, as "file:line in function". */
static const char *
fc_user_frame(const od_event *ev, char *buf, size_t cap)
{
	int i;

	for (i = ev->nframes - 1; i >= 0; i--) {
		if (ev->frames[i].user) {
			snprintf(buf, cap, "%s:%lld in %s", ev->frames[i].file,
			    (long long)ev->frames[i].line, ev->frames[i].func);
			return buf;
		}
	}
	return NULL;
}

/* A number that may be negative (a growth that is a shrinking). */
static bool
fc_signed(xv_value *out, double v, bool bytes)
{
	out->type = XV_NUM;
	out->num = v;
	out->bytes = bytes;
	return true;
}

/*
 * What the failure needed, in the figure of the readings' series: the
 * tensors in use plus the request for readings of allocated memory, the
 * reservation plus the request for readings of reserved memory, the
 * device's used memory plus the request for nvidia-smi's; -1 when the
 * message does not give it.
 */
static int64_t
fc_at_failure(const od_event *ev, const cx_series *s)
{
	const od_memory *m = &ev->mem;

	if (m->requested < 0)
		return -1;
	switch (s->what) {
	case OD_READING_ALLOCATED:
	case OD_READING_MAX_ALLOCATED:
	case OD_READING_MEMORY:
		return m->allocated >= 0 ? m->allocated + m->requested : -1;
	case OD_READING_RESERVED:
	case OD_READING_MAX_RESERVED:
		return m->reserved >= 0 ? m->reserved + m->requested : -1;
	case OD_READING_DEVICE_USED:
		return m->total >= 0 && m->free >= 0 ?
		    m->total - m->free + m->requested : -1;
	default:
		return -1;
	}
}

/* Reads a fact of the readings' series (ids FC_RD_COUNT and after). */
static bool
fc_readings(const od_event *ev, int id, xv_value *out)
{
	const od_logctx *c = &ev->ctx;
	cx_series s;
	int64_t at;

	cx_series_of(c, ev->rank, &s);
	at = fc_at_failure(ev, &s);
	switch (id) {
	case FC_RD_COUNT: return fc_num(out, c->nreadings, false);
	case FC_RD_SERIES: return fc_num(out, s.n, false);
	case FC_RD_WHAT: return s.n > 0 && fc_str(out, od_reading_name(s.what));
	case FC_RD_FIRST: return fc_num(out, s.first, true);
	case FC_RD_LAST: return fc_num(out, s.last, true);
	case FC_RD_MIN: return fc_num(out, s.min, true);
	case FC_RD_MAX: return fc_num(out, s.max, true);
	case FC_RD_MEDIAN: return fc_num(out, s.median, true);
	case FC_RD_FIRST_STEP:
		return s.have_rate && fc_num(out, s.first_step, false);
	case FC_RD_LAST_STEP:
		return s.have_rate && fc_num(out, s.last_step, false);
	case FC_GROWTH_PER_STEP:
		return s.have_rate && fc_signed(out, s.per_step, true);
	case FC_SPIKE_OVER_MEDIAN:
		/* Against at least three readings, and 0 when the failure
		 * needed no more than their median. */
		if (s.n < 3 || at < 0)
			return false;
		return fc_num(out, at > s.median ? at - s.median : 0, true);
	case FC_SPIKE_SHARE:
		/* A weight for scores: the spike over the median as a share
		 * of the device, 0 when it cannot be computed. */
		return fc_signed(out, s.n >= 3 && at > s.median &&
		    ev->mem.total > 0 ? (double)(at - s.median) /
		    (double)ev->mem.total : 0, false);
	case FC_RD_RANKS: return s.n > 0 && fc_num(out, s.nranks, false);
	case FC_RD_RANK_SPREAD:
		return s.nranks >= 2 && fc_num(out, s.rank_high - s.rank_low,
		    true);
	case FC_RD_HIGH_RANK:
		return s.nranks >= 2 && fc_num(out, s.high_rank, false);
	case FC_RANK_SPREAD_SHARE:
		return fc_signed(out, s.nranks >= 2 && ev->mem.total > 0 ?
		    (double)(s.rank_high - s.rank_low) /
		    (double)ev->mem.total : 0, false);
	case FC_SUM_OOMS: return fc_num(out, c->sum_ooms, false);
	case FC_SUM_RETRIES: return fc_num(out, c->sum_retries, false);
	case FC_SUM_NON_RELEASABLE:
		return fc_num(out, c->sum_non_releasable, true);
	case FC_VLLM_WEIGHTS: return fc_num(out, c->vllm_weights, true);
	case FC_VLLM_KV_CACHE: return fc_num(out, c->vllm_kv_cache, true);
	case FC_VLLM_KV_TOKENS: return fc_num(out, c->vllm_kv_tokens, false);
	case FC_VLLM_MAX_LEN: return fc_num(out, c->vllm_max_len, false);
	case FC_VLLM_CONCURRENCY:
		return c->vllm_concurrency_x100 >= 0 && fc_signed(out,
		    (double)c->vllm_concurrency_x100 / 100, false);
	case FC_VLLM_CONCURRENCY_LEN:
		return fc_num(out, c->vllm_concurrency_len, false);
	case FC_VLLM_EST_LEN: return fc_num(out, c->vllm_est_len, false);
	default:
		return false;
	}
}

/* Reads a fact of the memory snapshot joined to the event (ids
 * FC_SNAP_VERDICT and after): all unknown when none was. */
static bool
fc_snapshot(const od_snapshot_facts *s, int id, xv_value *out)
{
	if (!s->present)
		return false;
	switch (id) {
	case FC_SNAP_VERDICT:
		return fc_str(out, od_snapshot_verdict_name(s->verdict));
	case FC_SNAP_REQUEST: return fc_num(out, s->request, true);
	case FC_SNAP_DEVICE_FREE: return fc_num(out, s->device_free, true);
	case FC_SNAP_SEGMENTS: return fc_num(out, s->segments, false);
	case FC_SNAP_RESERVED: return fc_num(out, s->reserved, true);
	case FC_SNAP_ALLOCATED: return fc_num(out, s->allocated, true);
	case FC_SNAP_INACTIVE: return fc_num(out, s->inactive, true);
	case FC_SNAP_LARGEST_FREE: return fc_num(out, s->largest_free, true);
	case FC_SNAP_SPLIT_FREE: return fc_num(out, s->split_free, true);
	case FC_SNAP_PENDING_FREE: return fc_num(out, s->pending_free, true);
	case FC_SNAP_EXPANDABLE_OFFER:
		return fc_num(out, s->expandable_offer, true);
	case FC_SNAP_EXPANDABLE: return fc_bool(out, s->expandable);
	case FC_SNAP_OWNER: return s->history && fc_str(out, s->owner);
	case FC_SNAP_OWNER_BYTES:
		return s->history && fc_num(out, s->owner_bytes, true);
	default:
		return false;
	}
}

/* Reads fact id of ev into out; the facts built as text are written into
 * buf, which out then borrows. */
static bool
fc_event(const od_event *ev, const kn_table *kn, int id, xv_value *out,
    fc_scratch *buf)
{
	const od_memory *m = &ev->mem;
	const od_logctx *c = &ev->ctx;
	const char *o;
	od_account a;
	int64_t v;
	kn_range r;

	od_account_of(ev, &a);
	switch (id) {
	case FC_REQUESTED: return fc_num(out, m->requested, true);
	case FC_TOTAL: return fc_num(out, m->total, true);
	case FC_FREE: return fc_num(out, m->free, true);
	case FC_ALLOCATED: return fc_num(out, m->allocated, true);
	case FC_RESERVED: return fc_num(out, m->reserved, true);
	case FC_RESERVED_UNALLOCATED:
		return fc_num(out, m->reserved_unallocated, true);
	case FC_PROCESS_IN_USE: return fc_num(out, a.self_bytes, true);
	case FC_NON_FRAMEWORK: return fc_part(out, &a, OD_PART_NON_FRAMEWORK);
	case FC_ALLOWED: return fc_num(out, m->allowed, true);
	case FC_PRIVATE_POOLS: return fc_num(out, m->private_pools, true);
	case FC_PEAK: return fc_num(out, m->peak, true);
	case FC_OTHER_PROCESSES: return fc_part(out, &a, OD_PART_OTHER_PROCESSES);
	case FC_USABLE:
		/* What this process could have had: the device less what the
		 * others, the non-framework memory and the memory the message
		 * leaves unaccounted took, where known.  Unaccounted memory is
		 * held by someone (a process the message does not list, or
		 * this one's context in releases without process lines), so
		 * it was not this process's to use either. */
		if (m->total < 0)
			return false;
		v = m->total;
		if (a.part[OD_PART_OTHER_PROCESSES].known)
			v -= a.part[OD_PART_OTHER_PROCESSES].bytes;
		if (a.part[OD_PART_NON_FRAMEWORK].known)
			v -= a.part[OD_PART_NON_FRAMEWORK].bytes;
		if (a.part[OD_PART_UNACCOUNTED].known)
			v -= a.part[OD_PART_UNACCOUNTED].bytes;
		if (m->allowed >= 0 && m->allowed < v)
			v = m->allowed;
		return fc_num(out, v > 0 ? v : 0, true);
	case FC_NEEDED:
		if (m->allocated < 0 || m->requested < 0)
			return false;
		return fc_num(out, m->allocated + m->requested, true);
	case FC_GROWTH:
	case FC_MEM_FIRST:
	case FC_MEM_LAST:
	case FC_MEM_MAX: {
		/* Of the series: one figure of one rank, not a mixture. */
		cx_series sr;

		cx_series_of(c, ev->rank, &sr);
		if (id == FC_GROWTH)
			return sr.n >= 2 && fc_num(out, sr.growth > 0 ?
			    sr.growth : 0, true);
		return fc_num(out, id == FC_MEM_FIRST ? sr.first :
		    id == FC_MEM_LAST ? sr.last : sr.max, true);
	}
	case FC_SHORTFALL: return fc_num(out, a.shortfall, true);
	case FC_ACC_OTHER: return fc_part(out, &a, OD_PART_OTHER_PROCESSES);
	case FC_ACC_NON_FRAMEWORK:
		return fc_part(out, &a, OD_PART_NON_FRAMEWORK);
	case FC_ACC_ALLOCATED: return fc_part(out, &a, OD_PART_ALLOCATED);
	case FC_ACC_RESERVED_UNALLOCATED:
		return fc_part(out, &a, OD_PART_RESERVED_UNALLOCATED);
	case FC_ACC_FREE: return fc_part(out, &a, OD_PART_FREE);
	case FC_ACC_UNACCOUNTED: return fc_part(out, &a, OD_PART_UNACCOUNTED);
	case FC_ACC_SELF: return fc_num(out, a.self_bytes, true);
	case FC_ACC_ELSEWHERE:
		/* Held outside the framework's cache and not free: other
		 * processes, this process's other memory, and what the
		 * message does not explain (never below zero). */
		if (!a.part[OD_PART_UNACCOUNTED].known)
			return false;
		v = a.part[OD_PART_UNACCOUNTED].bytes;
		if (a.part[OD_PART_OTHER_PROCESSES].known)
			v += a.part[OD_PART_OTHER_PROCESSES].bytes;
		if (a.part[OD_PART_NON_FRAMEWORK].known)
			v += a.part[OD_PART_NON_FRAMEWORK].bytes;
		return fc_num(out, v > 0 ? v : 0, true);
	case FC_HOST_PID: return fc_num(out, ev->host.pid, false);
	case FC_HOST_PROCESS: return fc_str(out, ev->host.process);
	case FC_HOST_TOTAL_VM: return fc_num(out, ev->host.total_vm, true);
	case FC_HOST_ANON_RSS: return fc_num(out, ev->host.anon_rss, true);
	case FC_HOST_FILE_RSS: return fc_num(out, ev->host.file_rss, true);
	case FC_HOST_SHMEM_RSS: return fc_num(out, ev->host.shmem_rss, true);
	case FC_HOST_LIMIT: return fc_num(out, ev->host.limit, true);
	case FC_HOST_USAGE: return fc_num(out, ev->host.usage, true);
	case FC_HOST_EXIT_CODE:
		if (!ev->host.has_exit)
			return false;
		out->type = XV_NUM;
		out->num = (double)ev->host.exit_code;
		out->bytes = false;
		return true;
	case FC_HOST_SIGNAL: return fc_str(out, ev->host.signal);
	case FC_HOST_JOB: return fc_str(out, ev->host.job);
	case FC_HOST_POD: return fc_str(out, ev->labels.pod);
	case FC_HOST_NAMESPACE: return fc_str(out, ev->labels.namespace_);
	case FC_HOST_CONTAINER: return fc_str(out, ev->labels.container);
	case FC_KIND: return fc_str(out, od_kind_name(ev->kind));
	case FC_KIND_TITLE: return fc_str(out, od_kind_title(ev->kind));
	case FC_FRAMEWORK: return fc_str(out, ev->framework);
	case FC_FORMAT: return fc_str(out, od_layout_name(ev->layout));
	case FC_CONFIDENCE:
		return fc_str(out, od_confidence_name(ev->confidence));
	case FC_FATAL: return fc_bool(out, ev->fatal);
	case FC_DEVICE: return fc_num(out, ev->device, false);
	case FC_RANK: return fc_num(out, ev->rank, false);
	case FC_RANKS_FAILED: return fc_num(out, ev->nranks, false);
	case FC_OCCURRENCES: return fc_num(out, (int64_t)ev->occurrences, false);
	case FC_OTHER_PROCESS_COUNT: return fc_num(out, a.others, false);
	case FC_EXCEPTION: return fc_str(out, ev->exception);
	case FC_ERROR: return fc_str(out, ev->error);
	case FC_DTYPE: return fc_str(out, ev->dtype);
	case FC_TENSOR_SHAPE: return fc_str(out, ev->tensor_shape);
	case FC_ALLOCATOR: return fc_str(out, ev->allocator);
	case FC_HINT: return fc_str(out, od_hint_name(ev->hint));
	case FC_STEP: return fc_num(out, ev->step, false);
	case FC_PHASE: return fc_str(out, ev->phase);
	case FC_USER_FRAME:
		return fc_str(out, fc_user_frame(ev, buf->user_frame,
		    sizeof buf->user_frame));
	case FC_BATCH_SIZE: return fc_num(out, c->batch_size, false);
	case FC_ACCUM_STEPS: return fc_num(out, c->accum_steps, false);
	case FC_SEQ_LEN: return fc_num(out, c->seq_len, false);
	case FC_PRECISION: return fc_str(out, c->precision);
	case FC_GRAD_CHECKPOINTING: return fc_bool(out, c->grad_ckpt);
	case FC_DATALOADER: return fc_bool(out, c->dataloader);
	case FC_ALLOC_CONF: return fc_str(out, c->alloc_conf);
	case FC_ALLOC_CONF_PREFIX:
		/* The configuration already set, ready to take one more option. */
		snprintf(buf->alloc_conf_prefix, sizeof buf->alloc_conf_prefix,
		    "%s%s", c->alloc_conf, c->alloc_conf[0] != '\0' ? "," : "");
		out->type = XV_STR;
		out->str = buf->alloc_conf_prefix;
		out->len = strlen(buf->alloc_conf_prefix);
		return true;
	case FC_EXPANDABLE_SEGMENTS:
		/* Set or not, when the log shows the configuration. */
		if (c->alloc_conf[0] == '\0')
			return false;
		o = fc_option(c->alloc_conf, "expandable_segments");
		return fc_bool(out, o != NULL && fc_truth(o) == 1);
	case FC_EXPANDABLE_AVAILABLE:
		/* In every release the message can come from, or in none. */
		return fc_bool(out, kn_option(kn, ev, "expandable_segments"));
	case FC_MAX_SPLIT_SIZE_MB:
		o = fc_option(c->alloc_conf, "max_split_size_mb");
		return o != NULL && fc_num(out, atoll(o), false);
	case FC_MALLOC_ASYNC:
		if (ev->layout == OD_LAYOUT_ASYNC)
			return fc_bool(out, 1);
		if (c->alloc_conf[0] == '\0')
			return false;
		o = fc_option(c->alloc_conf, "backend");
		return fc_bool(out, o != NULL && strncmp(o, "cudaMallocAsync",
		    15) == 0);
	case FC_RELEASE_MIN:
	case FC_RELEASE_MAX:
		if (!kn_release(kn, ev, &r) || (id == FC_RELEASE_MAX &&
		    r.max == KN_OPEN))
			return false;
		kn_release_text(id == FC_RELEASE_MIN ? r.min : r.max,
		    buf->release, sizeof buf->release);
		return fc_str(out, buf->release);
	case FC_VENDOR: return fc_str(out, kn_vendor(ev));
	case FC_DEVICE_WORD: return fc_str(out, od_device_word(ev));
	case FC_ALLOC_CONF_VAR: return fc_str(out, kn_alloc_var(kn, ev));
	case FC_MAX_SPLIT_MIN_MB:
		return fc_num(out, kn_option_min(kn, ev, "max_split_size_mb"),
		    false);
	case FC_AUTOCAST: return fc_str(out, kn_autocast(kn, ev));
	case FC_SMI_PROCS: return fc_str(out, kn_command(kn, ev, "smi_procs"));
	case FC_VISIBLE_DEVICES:
		return fc_str(out, kn_command(kn, ev, "visible_devices"));
	case FC_MPS_WATERMARK:
		return fc_str(out, kn_command(kn, ev, "mps_watermark"));
	case FC_REQUEST_ROLE: return fc_str(out, kn_role(kn, ev));
	case FC_GPU_MODEL: return fc_str(out, c->gpu_model);
	case FC_COMPUTE_CAPABILITY:
		out->num = kn_compute_capability(kn, ev);
		out->type = XV_NUM;
		out->bytes = false;
		return out->num >= 0;
	case FC_XLA_CONF: return fc_str(out, c->xla_conf);
	case FC_XLA_PREALLOCATE:
		return fc_bool(out, fc_truth(fc_setting(c->xla_conf,
		    "XLA_PYTHON_CLIENT_PREALLOCATE")));
	case FC_XLA_MEM_FRACTION:
		o = fc_setting(c->xla_conf, "XLA_PYTHON_CLIENT_MEM_FRACTION");
		if (o == NULL)
			return false;
		out->type = XV_NUM;
		out->num = atof(o);
		out->bytes = false;
		return true;
	case FC_TF_ALLOCATOR: return fc_str(out, c->tf_allocator);
	case FC_TF_ALLOW_GROWTH:
		o = fc_setting(c->tf_allocator, "TF_FORCE_GPU_ALLOW_GROWTH");
		if (o == NULL)
			o = fc_setting(c->tf_allocator, "allow_growth");
		return fc_bool(out, fc_truth(o));
	/* The settings the log shows only after the event (cx_after). */
	case FC_SETTINGS_AFTER: return fc_str(out, c->later);
	case FC_TF_ALLOW_GROWTH_AFTER:
		o = fc_setting(c->later, "TF_FORCE_GPU_ALLOW_GROWTH");
		if (o == NULL)
			o = fc_setting(c->later, "allow_growth");
		return fc_bool(out, fc_truth(o));
	case FC_XLA_MEM_FRACTION_AFTER:
		o = fc_setting(c->later, "XLA_PYTHON_CLIENT_MEM_FRACTION");
		if (o == NULL)
			return false;
		out->type = XV_NUM;
		out->num = atof(o);
		out->bytes = false;
		return true;
	case FC_TF_GPU_ALLOCATOR:
		o = fc_setting(c->tf_allocator, "TF_GPU_ALLOCATOR");
		if (o == NULL)
			return false;
		out->type = XV_STR;
		out->str = o;
		out->len = strcspn(o, " ");
		return true;
	case FC_TF_ASYNC_AVAILABLE:
		/* In every TensorFlow release the log shows, or in none. */
		return fc_bool(out, kn_feature(kn, ev,
		    "TF_GPU_ALLOCATOR=cuda_malloc_async"));
	case FC_TF_FORCE_GROWTH_AVAILABLE:
		/* TF_FORCE_GPU_ALLOW_GROWTH: as the asynchronous allocator. */
		return fc_bool(out, kn_feature(kn, ev,
		    "TF_FORCE_GPU_ALLOW_GROWTH=true"));
	case FC_FRACTION_AVAILABLE:
		return fc_bool(out, kn_feature(kn, ev,
		    "torch.cuda.set_per_process_memory_fraction"));
	case FC_CONTAINER_SHM: return fc_str(out, c->container);
	case FC_CONTAINER_OOM_KILLED:
		return fc_bool(out, c->container_oom);
	/* The serving flags with a release floor (knowledge.yaml). */
	case FC_VLLM_EAGER_AVAILABLE:
		return fc_bool(out, kn_feature(kn, ev, "--enforce-eager"));
	case FC_VLLM_FP8_KV_AVAILABLE:
		return fc_bool(out, kn_feature(kn, ev,
		    "--kv-cache-dtype fp8"));
	case FC_SGLANG_CHUNKED_AVAILABLE:
		return fc_bool(out, kn_feature(kn, ev,
		    "--chunked-prefill-size"));
	/* Text Generation Inference: its lines before the event, or a
	 * message of its own (the recognisers' framework tgi). */
	case FC_SERVING: return fc_bool(out, c->serving > 0 || fc_tgi(ev));
	case FC_TGI: return fc_bool(out, fc_tgi(ev));
	case FC_TGI_PREFILL_AVAILABLE:
		return fc_bool(out, kn_feature(kn, ev,
		    "--max-batch-prefill-tokens"));
	case FC_TGI_QUANTIZE: return fc_bool(out, c->tgi_quantize);
	case FC_XID: return fc_num(out, c->xid, false);
	/* The jaxlib releases the log shows, 0.4.23 as 423 (context.c). */
	case FC_JAXLIB_MIN: return fc_num(out, c->jaxlib_min, false);
	case FC_JAXLIB_MAX: return fc_num(out, c->jaxlib_max, false);
	case FC_ECC: return fc_bool(out, c->ecc);
	default:
		if (id >= FC_SNAP_VERDICT)
			return fc_snapshot(&ev->snap, id, out);
		return id >= FC_RD_COUNT && fc_readings(ev, id, out);
	}
}

bool
fc_lookup(void *ctx, const char *name, size_t len, xv_value *out)
{
	fc_source *src = ctx;
	int id = fc_find(name, len), i;

	if (id < 0)
		return false;
	memset(out, 0, sizeof *out);
	if (src->user != NULL) {
		for (i = 0; i < src->user->n; i++) {
			if (strcmp(src->user->v[i].name, fc_table[id].name) == 0) {
				*out = src->user->v[i].value;
				if (out->type == XV_STR)
					out->str = src->user->v[i].text;
				return true;
			}
		}
	}
	/* accum is accum_steps (the user's or the log's), 1 when that is
	 * unknown or less than 1. */
	if (id == FC_ACCUM) {
		if (fc_lookup(ctx, "accum_steps", 11, out) &&
		    out->type == XV_NUM && out->num >= 1)
			return true;
		return fc_num(out, 1, false);
	}
	return src->ev != NULL && fc_event(src->ev, src->kn, id, out,
	    &src->scratch);
}

bool
fc_user_add(fc_user_facts *u, const char *arg, od_error *err)
{
	const char *eq = strchr(arg, '=');
	fc_user *f;
	int64_t v;
	char *end;
	int id;

	if (eq == NULL || eq == arg) {
		od_error_set(err, NULL, 0, 0, "--fact takes NAME=VALUE, not '%s'",
		    arg);
		return false;
	}
	id = fc_find(arg, (size_t)(eq - arg));
	if (id < 0) {
		od_error_set(err, NULL, 0, 0, "unknown fact '%.*s' (see RULES in "
		    "oomdoc(1))", (int)(eq - arg), arg);
		return false;
	}
	if (u->n >= FC_USER_MAX) {
		od_error_set(err, NULL, 0, 0, "too many --fact options (at most "
		    "%d)", FC_USER_MAX);
		return false;
	}
	f = &u->v[u->n];
	memset(f, 0, sizeof *f);
	snprintf(f->name, sizeof f->name, "%s", fc_table[id].name);
	snprintf(f->text, sizeof f->text, "%s", eq + 1);
	switch (fc_table[id].type) {
	case F_BYTES:
		if (!od_size_parse_text(eq + 1, strlen(eq + 1), &v)) {
			od_error_set(err, NULL, 0, 0, "--fact %s takes a size such "
			    "as 2GiB, not '%s'", f->name, eq + 1);
			return false;
		}
		f->value.type = XV_NUM;
		f->value.num = (double)v;
		f->value.bytes = true;
		break;
	case F_NUM:
		f->value.type = XV_NUM;
		f->value.num = strtod(eq + 1, &end);
		if (end == eq + 1 || *end != '\0') {
			od_error_set(err, NULL, 0, 0, "--fact %s takes a number, "
			    "not '%s'", f->name, eq + 1);
			return false;
		}
		break;
	case F_BOOL:
		if (fc_truth(eq + 1) < 0 || (strcmp(eq + 1, "true") != 0 &&
		    strcmp(eq + 1, "false") != 0)) {
			od_error_set(err, NULL, 0, 0, "--fact %s takes true or "
			    "false, not '%s'", f->name, eq + 1);
			return false;
		}
		f->value.type = XV_BOOL;
		f->value.b = strcmp(eq + 1, "true") == 0;
		break;
	case F_STR:
		f->value.type = XV_STR;
		break;
	}
	u->n++;
	return true;
}

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

#include "facts.h"

typedef enum {
	F_BYTES, F_NUM, F_STR, F_BOOL
} fc_type;

enum {
	/* Memory figures of the message, bytes. */
	FC_REQUESTED, FC_TOTAL, FC_FREE, FC_ALLOCATED, FC_RESERVED,
	FC_RESERVED_UNALLOCATED, FC_PROCESS_IN_USE, FC_NON_FRAMEWORK,
	FC_ALLOWED, FC_PRIVATE_POOLS, FC_PEAK, FC_OTHER_PROCESSES,
	/* Derived, bytes. */
	FC_USABLE, FC_NEEDED, FC_GROWTH,
	FC_MEM_FIRST, FC_MEM_LAST, FC_MEM_MAX,
	/* Host. */
	FC_HOST_PID, FC_HOST_PROCESS, FC_HOST_TOTAL_VM, FC_HOST_ANON_RSS,
	FC_HOST_FILE_RSS, FC_HOST_SHMEM_RSS, FC_HOST_LIMIT, FC_HOST_USAGE,
	FC_HOST_EXIT_CODE, FC_HOST_SIGNAL,
	/* The event. */
	FC_KIND, FC_FRAMEWORK, FC_FORMAT, FC_CONFIDENCE, FC_FATAL,
	FC_DEVICE, FC_RANK, FC_RANKS_FAILED, FC_OCCURRENCES,
	FC_OTHER_PROCESS_COUNT, FC_EXCEPTION, FC_ERROR, FC_DTYPE,
	FC_TENSOR_SHAPE, FC_ALLOCATOR, FC_HINT,
	/* Context. */
	FC_STEP, FC_PHASE, FC_USER_FRAME, FC_BATCH_SIZE, FC_ACCUM_STEPS,
	FC_ACCUM, FC_SEQ_LEN, FC_PRECISION, FC_GRAD_CHECKPOINTING,
	FC_ALLOC_CONF, FC_ALLOC_CONF_PREFIX, FC_EXPANDABLE_SEGMENTS,
	FC_EXPANDABLE_AVAILABLE, FC_MAX_SPLIT_SIZE_MB, FC_MALLOC_ASYNC,
	FC_XLA_CONF, FC_XLA_PREALLOCATE, FC_XLA_MEM_FRACTION, FC_TF_ALLOCATOR,
	FC_TF_ALLOW_GROWTH, FC_TF_GPU_ALLOCATOR, FC_XID, FC_ECC,
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
	[FC_KIND] = { "kind", F_STR },
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
	[FC_ALLOC_CONF] = { "alloc_conf", F_STR },
	[FC_ALLOC_CONF_PREFIX] = { "alloc_conf_prefix", F_STR },
	[FC_EXPANDABLE_SEGMENTS] = { "expandable_segments", F_BOOL },
	[FC_EXPANDABLE_AVAILABLE] = { "expandable_available", F_BOOL },
	[FC_MAX_SPLIT_SIZE_MB] = { "max_split_size_mb", F_NUM },
	[FC_MALLOC_ASYNC] = { "malloc_async", F_BOOL },
	[FC_XLA_CONF] = { "xla_conf", F_STR },
	[FC_XLA_PREALLOCATE] = { "xla_preallocate", F_BOOL },
	[FC_XLA_MEM_FRACTION] = { "xla_mem_fraction", F_NUM },
	[FC_TF_ALLOCATOR] = { "tf_allocator", F_STR },
	[FC_TF_ALLOW_GROWTH] = { "tf_allow_growth", F_BOOL },
	[FC_TF_GPU_ALLOCATOR] = { "tf_gpu_allocator", F_STR },
	[FC_XID] = { "xid", F_NUM },
	[FC_ECC] = { "ecc_error", F_BOOL },
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

const char *const *
fc_names(void)
{
	static const char *names[FC_COUNT + 1];
	int i;

	for (i = 0; i < FC_COUNT; i++)
		names[i] = fc_table[i].name;
	names[FC_COUNT] = NULL;
	return names;
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

/*
 * Which "Process N" clause is this process itself, or -1.  In a container
 * NVML reports host PIDs, so PyTorch does not recognise its own process
 * and prints it as "Process N has X" with no "this process" clause
 * (c10/cuda/CUDACachingAllocator.cpp, reportProcessMemoryInfo).  Without
 * that clause, the one process whose usage covers PyTorch's reservation,
 * with at most a context's worth of memory beyond it, is taken to be this
 * one.
 */
int
fc_self(const od_event *ev)
{
	const od_memory *m = &ev->mem;
	int64_t slack;
	int i, self = -1;

	if (m->process_in_use >= 0 || m->reserved < 0)
		return -1;
	slack = m->total > 0 && m->total / 10 > (INT64_C(2) << 30) ?
	    m->total / 10 : INT64_C(2) << 30;
	for (i = 0; i < m->nprocs; i++) {
		int64_t b = m->procs[i].bytes;

		if (b >= m->reserved && b - m->reserved <= slack) {
			if (self >= 0)
				return -1;      /* two candidates: no guess */
			self = i;
		}
	}
	return self;
}

/* The sum of the other processes' memory, known when the message lists
 * processes or says (through NVML) that there were none. */
static int64_t
fc_others(const od_event *ev)
{
	int64_t sum = 0;
	int i, self = fc_self(ev);

	if (ev->mem.nprocs == 0)
		return (ev->layout == OD_LAYOUT_CAPACITY ||
		    ev->layout == OD_LAYOUT_CAPACTY) && ev->mem.process_in_use >= 0 ?
		    0 : -1;
	for (i = 0; i < ev->mem.nprocs; i++)
		if (i != self && ev->mem.procs[i].bytes > 0)
			sum += ev->mem.procs[i].bytes;
	return sum;
}

/* This process's NVML usage: printed, or inferred by fc_self. */
static int64_t
fc_process_in_use(const od_event *ev)
{
	int self = fc_self(ev);

	return self >= 0 ? ev->mem.procs[self].bytes : ev->mem.process_in_use;
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

/* Reads fact id of ev into out; the facts built as text are written into
 * buf, which out then borrows. */
static bool
fc_event(const od_event *ev, int id, xv_value *out, fc_scratch *buf)
{
	const od_memory *m = &ev->mem;
	const od_logctx *c = &ev->ctx;
	const char *o;
	int64_t others = fc_others(ev), v;

	switch (id) {
	case FC_REQUESTED: return fc_num(out, m->requested, true);
	case FC_TOTAL: return fc_num(out, m->total, true);
	case FC_FREE: return fc_num(out, m->free, true);
	case FC_ALLOCATED: return fc_num(out, m->allocated, true);
	case FC_RESERVED: return fc_num(out, m->reserved, true);
	case FC_RESERVED_UNALLOCATED:
		return fc_num(out, m->reserved_unallocated, true);
	case FC_PROCESS_IN_USE: return fc_num(out, fc_process_in_use(ev), true);
	case FC_NON_FRAMEWORK:
		if (m->non_framework >= 0)
			return fc_num(out, m->non_framework, true);
		v = fc_process_in_use(ev);
		return v >= 0 && m->reserved >= 0 && v >= m->reserved &&
		    fc_num(out, v - m->reserved, true);
	case FC_ALLOWED: return fc_num(out, m->allowed, true);
	case FC_PRIVATE_POOLS: return fc_num(out, m->private_pools, true);
	case FC_PEAK: return fc_num(out, m->peak, true);
	case FC_OTHER_PROCESSES: return fc_num(out, others, true);
	case FC_USABLE:
		/* What this process could have had: the device less what the
		 * others and the non-framework memory took, where known. */
		if (m->total < 0)
			return false;
		v = fc_process_in_use(ev);
		v = m->total - (others > 0 ? others : 0) -
		    (v > m->reserved && m->reserved >= 0 ? v - m->reserved : 0);
		if (m->allowed >= 0 && m->allowed < v)
			v = m->allowed;
		return fc_num(out, v > 0 ? v : 0, true);
	case FC_NEEDED:
		if (m->allocated < 0 || m->requested < 0)
			return false;
		return fc_num(out, m->allocated + m->requested, true);
	case FC_GROWTH:
		if (c->nreadings < 2)
			return false;
		return fc_num(out, c->mem_last > c->mem_first ?
		    c->mem_last - c->mem_first : 0, true);
	case FC_MEM_FIRST: return fc_num(out, c->mem_first, true);
	case FC_MEM_LAST: return fc_num(out, c->mem_last, true);
	case FC_MEM_MAX: return fc_num(out, c->mem_max, true);
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
	case FC_KIND: return fc_str(out, od_kind_name(ev->kind));
	case FC_FRAMEWORK: return fc_str(out, ev->framework);
	case FC_FORMAT: return fc_str(out, od_layout_name(ev->layout));
	case FC_CONFIDENCE:
		return fc_str(out, od_confidence_name(ev->confidence));
	case FC_FATAL: return fc_bool(out, ev->fatal);
	case FC_DEVICE: return fc_num(out, ev->device, false);
	case FC_RANK: return fc_num(out, ev->rank, false);
	case FC_RANKS_FAILED: return fc_num(out, ev->nranks, false);
	case FC_OCCURRENCES: return fc_num(out, (int64_t)ev->occurrences, false);
	case FC_OTHER_PROCESS_COUNT:
		return others < 0 ? false : fc_num(out, ev->mem.nprocs -
		    (fc_self(ev) >= 0), false);
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
		/* The message's layout tells the PyTorch release. */
		if (ev->layout == OD_LAYOUT_CACHED ||
		    ev->layout == OD_LAYOUT_RESERVED_TOTAL)
			return fc_bool(out, 0);
		if (ev->layout == OD_LAYOUT_CAPACTY ||
		    ev->layout == OD_LAYOUT_CAPACITY ||
		    ev->hint == OD_HINT_EXPANDABLE)
			return fc_bool(out, 1);
		return false;
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
	case FC_TF_GPU_ALLOCATOR:
		o = fc_setting(c->tf_allocator, "TF_GPU_ALLOCATOR");
		if (o == NULL)
			return false;
		out->type = XV_STR;
		out->str = o;
		out->len = strcspn(o, " ");
		return true;
	case FC_XID: return fc_num(out, c->xid, false);
	case FC_ECC: return fc_bool(out, c->ecc);
	default:
		return false;
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
	return src->ev != NULL && fc_event(src->ev, id, out, &src->scratch);
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

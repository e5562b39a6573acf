/*
 * probe_run.c: the probe runners of live mode: a session on a device
 * (device.h), each probe's measurements, and the cache that runs a probe
 * once per distinct set of parameters.  What the measurements mean for a
 * cause is judged in probe_verdict.c.
 *
 *   context_cost        what a CUDA context costs on this device
 *                       (non_framework_memory)
 *   fits_now            does allocated + requested fit on this device now
 *                       (capacity, memory_fraction_limit)
 *   largest_allocation  the largest single allocation, and all that can be
 *                       allocated, against the request (request_exceeds_device)
 *   fragmentation       what the device can and cannot show: the request
 *                       by cudaMalloc and by a mapping, with holes of the
 *                       reserved-but-unallocated size held and after they
 *                       are released; never a confirmation (fragmentation)
 *   processes           the processes holding memory now (foreign_process)
 *   health              pattern errors, bandwidth against the device's peak,
 *                       ECC and remapped-row counters (hardware_fault)
 *
 * Every probe takes no more than the cap (device.c refuses anything
 * past it), releases what it took before it returns, and records the
 * memory activity it caused.  A probe that cannot run says why in its
 * note; its verdicts are then inconclusive.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>             /* usleep */

#include "probe.h"
#include "torch_baseline.h"

#define PB_PAGE (2LL << 20)     /* what cudaMalloc rounds large blocks to */
#define PB_CHUNK (1LL << 30)    /* chunks of the allocations that fill */
#define PB_MAP_CHUNK (20LL << 20)  /* expandable segments' page, large pool */

struct pb_session {
	dv_device *d;
	pb_opts o;
	bool started;
	dv_status fail_st;      /* a device error that ended the session */
	od_error fail_err;
	int64_t context;
	int64_t free0, total0;
	int64_t unlisted;       /* used memory nobody listed explains */
	dv_activity start_act;  /* the context's creation */
	pb_result *res[PB_RESULTS_MAX];
	int nres;
	pb_result full;         /* returned when the table is full */
};

/* Measurements, in the order the report shows them. */
static pb_meas *
pm_add(pb_result *r, const char *key, pm_type type)
{
	pb_meas *m;

	if (r->nm == PB_MEAS_MAX)
		return NULL;
	m = &r->m[r->nm++];
	memset(m, 0, sizeof *m);
	m->key = key;
	m->type = type;
	return m;
}

static void
pm_bytes(pb_result *r, const char *key, int64_t v)
{
	pb_meas *m = pm_add(r, key, PM_BYTES);

	if (m != NULL)
		m->i = v;
}

static void
pm_int(pb_result *r, const char *key, int64_t v)
{
	pb_meas *m = pm_add(r, key, PM_INT);

	if (m != NULL)
		m->i = v;
}

static void
pm_num(pb_result *r, const char *key, pm_type type, double v)
{
	pb_meas *m = pm_add(r, key, type);

	if (m != NULL)
		m->d = v;
}

static void
pm_bool(pb_result *r, const char *key, bool v)
{
	pb_meas *m = pm_add(r, key, PM_BOOL);

	if (m != NULL)
		m->b = v;
}

static void
pm_str(pb_result *r, const char *key, const char *v)
{
	pb_meas *m = pm_add(r, key, PM_STR);

	if (m != NULL)
		snprintf(m->s, sizeof m->s, "%.*s", (int)sizeof m->s - 1, v);
}

static void
pb_note(pb_result *r, const char *what, const od_error *err)
{
	if (err != NULL && err->msg[0] != '\0')
		snprintf(r->note, sizeof r->note, "%s: %s", what, err->msg);
	else
		snprintf(r->note, sizeof r->note, "%s", what);
}

pb_session *
pb_session_new(dv_device *d, const pb_opts *o)
{
	pb_session *s = calloc(1, sizeof *s);

	if (s == NULL)
		return NULL;
	s->d = d;
	s->o = *o;
	s->context = -1;
	s->free0 = s->total0 = -1;
	s->unlisted = -1;
	return s;
}

void
pb_session_free(pb_session *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nres; i++)
		free(s->res[i]);
	free(s);
}

bool
pb_session_started(const pb_session *s)
{
	return s->started;
}

int64_t
pb_session_unlisted(const pb_session *s)
{
	return s->unlisted;
}

int64_t
pb_session_context(const pb_session *s)
{
	return s->context;
}

int64_t
pb_session_free_at_start(const pb_session *s)
{
	return s->free0;
}

dv_status
pb_session_failed(const pb_session *s, od_error *err)
{
	if (err != NULL)
		*err = s->fail_err;
	return s->fail_st;
}

/* Records a device error that makes the device unfit for more probes. */
static void
pb_fail(pb_session *s, dv_status st, const od_error *err)
{
	if (s->fail_st != DV_OK || st == DV_OK || st == DV_OOM || st == DV_CAP ||
	    st == DV_UNSUPPORTED || st == DV_STOPPED)
		return;
	s->fail_st = st;
	s->fail_err = *err;
}

static int64_t pb_others(pb_session *s);

/*
 * The second signal, beside NVML's list: the memory used on the device
 * once our context exists, less the context and what the listed
 * processes hold.  More than the tolerance is a tenant the list does not
 * show (another container's process, a list NVML could not read); the
 * run stops unless forced.  An unknown context cost counts as a second
 * tolerance.
 */
static bool
pb_second_signal(pb_session *s, int64_t tolerance, od_error *err)
{
	int64_t others = pb_others(s), used = s->total0 - s->free0;
	int64_t explained = dv_sat_add(s->context >= 0 ? s->context :
	    tolerance, others > 0 ? others : 0);
	char un[32], tol[32];

	s->unlisted = used > explained ? used - explained : 0;
	if (s->unlisted <= tolerance || s->o.force)
		return true;
	od_size_format(s->unlisted, un, sizeof un);
	od_size_format(tolerance, tol, sizeof tol);
	od_error_set(err, NULL, 0, 0, "%s of GPU %d is in use beyond this "
	    "run's context and the processes listed (more than the %s "
	    "allowed): a process the list does not show", un,
	    dv_info_of(s->d)->index, tol);
	return false;
}

bool
pb_session_start(pb_session *s, od_error *err)
{
	dv_status st;
	int64_t cap, pct_cap, tolerance;
	int pct;

	if (s->started)
		return true;
	if (s->fail_st != DV_OK) {
		*err = s->fail_err;
		return false;
	}
	st = dv_start(s->d, &s->context, err);
	if (st == DV_OK)
		st = dv_mem_info(s->d, &s->free0, &s->total0, err);
	if (st != DV_OK) {
		if (st == DV_OOM || st == DV_UNSUPPORTED)
			st = DV_ERROR;
		pb_fail(s, st, err);
		return false;
	}
	tolerance = s->total0 / 50 > PB_TOLERANCE_MIN ? s->total0 / 50 :
	    PB_TOLERANCE_MIN;
	if (!pb_second_signal(s, tolerance, err)) {
		pb_fail(s, DV_TENANT, err);
		return false;
	}
	/* The cap: --max-memory, or a share of the free memory; under
	 * --force never more than half of it, since others may need it. */
	pct = s->o.cap_percent > 0 ? s->o.cap_percent : s->o.force ? 50 : 90;
	/* In integers: free0 * pct / 100 through a double rounds a free
	 * figure near INT64_MAX up to 2^63, whose conversion back to int64_t
	 * is undefined (it gave INT64_MIN, a negative cap that meant none). */
	pct_cap = s->free0 / 100 * pct + s->free0 % 100 * pct / 100;
	cap = s->o.cap >= 0 ? s->o.cap : pct_cap;
	if (s->o.force && cap > s->free0 / 2)
		cap = s->free0 / 2;
	dv_set_cap(s->d, cap);
	dv_guard(s->d, tolerance);
	dv_activity_take(s->d, &s->start_act);
	s->started = true;
	return true;
}

/* The cap less what is held: what a probe may still take. */
static int64_t
pb_room(pb_session *s)
{
	int64_t cap = dv_cap(s->d);

	return cap < 0 ? INT64_MAX : cap - dv_held(s->d);
}

/*
 * Allocates bytes in chunks of at most PB_CHUNK; stops at the first
 * failure.  Returns its status; *got is what was allocated.
 */
static dv_status
pb_take(pb_session *s, int64_t bytes, int64_t *got, od_error *err)
{
	dv_status st = DV_OK;
	int id;

	*got = 0;
	while (*got < bytes) {
		int64_t n = bytes - *got < PB_CHUNK ? bytes - *got : PB_CHUNK;

		st = dv_alloc(s->d, n, &id, err);
		if (st != DV_OK)
			break;
		*got += n;
	}
	return st;
}

/* Whether one allocation of bytes succeeds now (it is freed again). */
static dv_status
pb_try(pb_session *s, int64_t bytes, od_error *err)
{
	int id;
	dv_status st = dv_alloc(s->d, bytes, &id, err);

	if (st == DV_OK)
		dv_free(s->d, id);
	return st;
}

/* The free memory now; false (with the note set) on a device error. */
static bool
pb_mem(pb_session *s, pb_result *r, int64_t *free_b, int64_t *total)
{
	od_error err;
	dv_status st;

	memset(&err, 0, sizeof err);
	st = dv_mem_info(s->d, free_b, total, &err);
	if (st != DV_OK) {
		pb_note(r, "cannot read the free memory", &err);
		pb_fail(s, st, &err);
		return false;
	}
	return true;
}

static void pb_baseline(pb_result *r);

/* What the interpreter's wait is used for: NVML's per-process figure. */
typedef struct {
	pb_session *s;
	int64_t nvml_bytes;     /* -1: the list does not show the child */
} pb_tb_wait;

static void
pb_tb_during(void *arg, const tb_reading *t)
{
	pb_tb_wait *w = arg;
	dv_proc v[DV_PROCS_MAX];
	bool known = false;
	int n, i;

	n = dv_processes(w->s->d, v, DV_PROCS_MAX, &known);
	for (i = 0; known && i < n; i++)
		if (v[i].pid == t->pid && v[i].bytes > 0)
			w->nvml_bytes = v[i].bytes;
}

/*
 * The second baseline: an empty PyTorch process on this GPU (its cost
 * is the free memory before it started, with our context, less what it
 * reads once its own context exists; NVML's per-process figure for its
 * pid, where the list shows it, is the one judged, the process's own
 * memory).  Waits, a few seconds at most, until the child's memory is
 * back, so that the tenant checks do not take it for a tenant.
 */
static void
pb_torch_baseline(pb_session *s, pb_result *r)
{
	pb_tb_wait w = { .s = s, .nvml_bytes = -1 };
	int64_t before, total, now, cost;
	tb_reading t;
	int tries;

	if (!pb_mem(s, r, &before, &total))
		return;
	if (!tb_run(s->o.torch_python, dv_info_of(s->d)->uuid, pb_tb_during,
	    &w, &t)) {
		pm_str(r, "torch_baseline_note", t.note);
		return;
	}
	if ((double)(t.total > total ? t.total - total : total - t.total) >
	    0.01 * (double)total) {
		pm_str(r, "torch_baseline_note", "the interpreter saw another "
		    "GPU (its total memory differs)");
		return;
	}
	cost = before - t.free_b;
	for (tries = 0; tries < 50; tries++) {
		if (!pb_mem(s, r, &now, &total) || now >= before - 64 * PB_MIB)
			break;
		usleep(100000);
	}
	if (cost <= 0 && w.nvml_bytes < 0) {
		pm_str(r, "torch_baseline_note", "the interpreter's context "
		    "took no memory that could be seen");
		return;
	}
	r->torch_context = w.nvml_bytes >= 0 ? w.nvml_bytes : cost;
	snprintf(r->torch_baseline, sizeof r->torch_baseline, "empty PyTorch "
	    "process (torch %s, CUDA %s, CUDA_MODULE_LOADING %s)",
	    t.torch[0] ? t.torch : "unknown", t.cuda[0] ? t.cuda : "unknown",
	    t.loading[0] ? t.loading : "unknown");
	pm_bytes(r, "torch_context_bytes", r->torch_context);
	pm_str(r, "torch_baseline", r->torch_baseline);
	pm_bytes(r, "torch_free_delta_bytes", cost);
	if (w.nvml_bytes >= 0)
		pm_bytes(r, "torch_nvml_bytes", w.nvml_bytes);
	pm_str(r, "torch_method", w.nvml_bytes >= 0 ? "NVML: the "
	    "interpreter's per-process memory while it waited" :
	    "cudaMemGetInfo: the free memory before the interpreter started "
	    "less what it read once its context existed");
}

static void
pb_context_cost(pb_session *s, pb_result *r)
{
	r->context = s->context;
	pb_baseline(r);
	if (s->context < 0) {
		pb_note(r, "NVML is not available, and without it the "
		    "context's cost cannot be read (cudaMemGetInfo itself "
		    "needs a context)", NULL);
		return;
	}
	pm_bytes(r, "context_bytes", s->context);
	pm_str(r, "method", "NVML: this process's memory after the context "
	    "was created");
	pm_str(r, "baseline", r->baseline);
	r->ran = true;
	if (s->o.torch_python != NULL)
		pb_torch_baseline(s, r);
}

/*
 * What the context's cost is a measurement of.  CUDA loads modules
 * lazily by default from 12.2 on unless CUDA_MODULE_LOADING says EAGER
 * (CUDA C++ Programming Guide, "Lazy Loading"); oomdoc's context loads
 * only its own small kernels, so it is a bare context either way.
 */
static void
pb_baseline(pb_result *r)
{
	const char *m = getenv("CUDA_MODULE_LOADING");

	snprintf(r->baseline, sizeof r->baseline, "bare CUDA context with "
	    "%s loading", m != NULL && strcmp(m, "EAGER") == 0 ? "eager" :
	    "lazy");
}

/* What other processes hold on the device now; -1 without NVML. */
static int64_t
pb_others(pb_session *s)
{
	dv_proc v[DV_PROCS_MAX];
	int64_t sum = 0;
	bool known = false;
	int n, i;

	n = dv_processes(s->d, v, DV_PROCS_MAX, &known);
	if (!known)
		return -1;
	for (i = 0; i < n; i++)
		if (!v[i].self && v[i].bytes > 0)
			sum = dv_sat_add(sum, v[i].bytes);
	return sum;
}

static void
pb_fits_now(pb_session *s, pb_result *r, const od_event *ev)
{
	int64_t a = ev != NULL ? ev->mem.allocated : -1;
	int64_t q = ev != NULL ? ev->mem.requested : -1;
	int64_t room, want, qpart, got = 0;
	od_error err;
	dv_status st;
	int id;

	memset(&err, 0, sizeof err);
	if (a < 0 || q <= 0 || a > INT64_MAX / 2 || q > INT64_MAX / 2) {
		pb_note(r, "the log gives no allocated and requested figures",
		    NULL);
		return;
	}
	r->target = a + q;
	if (!pb_mem(s, r, &r->free_now, &r->total_now))
		return;
	r->others = pb_others(s);
	room = pb_room(s);
	r->cap = dv_cap(s->d);
	r->beyond_cap = r->target > room;
	r->scaled = r->beyond_cap;
	want = r->beyond_cap ? room : r->target;
	/* The tensors in use first, then the request as one block, as at the
	 * failure; scaled down, the request keeps its share. */
	qpart = q < want ? q : want;
	st = pb_take(s, want - qpart, &got, &err);
	if (st == DV_OK && qpart > 0) {
		st = dv_alloc(s->d, qpart, &id, &err);
		if (st == DV_OK)
			got += qpart;
	}
	r->got = got;
	pm_bytes(r, "allocated_bytes", a);
	pm_bytes(r, "requested_bytes", q);
	pm_bytes(r, "needed_bytes", r->target);
	pm_bytes(r, "took_bytes", got);
	pm_bytes(r, "free_bytes", r->free_now);
	pm_bytes(r, "total_bytes", r->total_now);
	pm_bytes(r, "cap_bytes", r->cap);
	if (r->others >= 0)
		pm_bytes(r, "other_processes_bytes", r->others);
	if (st != DV_OK && st != DV_OOM) {
		pb_note(r, "an allocation failed", &err);
		pb_fail(s, st, &err);
		return;
	}
	r->fit = st == DV_OK && !r->beyond_cap;
	pm_bool(r, "fit", r->fit);
	pm_bool(r, "scaled_to_cap", r->beyond_cap);
	r->ran = true;
}

/*
 * The largest single allocation up to hi, to PB_PAGE: hi itself, or a
 * binary search between what worked and what did not.
 */
static dv_status
pb_largest(pb_session *s, int64_t hi, int64_t *largest, od_error *err)
{
	int64_t lo = 0;
	dv_status st;

	*largest = 0;
	if (hi <= 0)
		return DV_OK;
	st = pb_try(s, hi, err);
	if (st == DV_OK) {
		*largest = hi;
		return DV_OK;
	}
	if (st != DV_OOM)
		return st;
	while (hi - lo > PB_PAGE) {
		int64_t mid = lo + (hi - lo) / 2 / PB_PAGE * PB_PAGE;

		if (mid <= lo)
			mid = lo + PB_PAGE;
		st = pb_try(s, mid, err);
		if (st == DV_OK)
			lo = mid;
		else if (st == DV_OOM)
			hi = mid;
		else
			return st;
	}
	*largest = lo;
	return DV_OK;
}

static void
pb_largest_allocation(pb_session *s, pb_result *r, const od_event *ev)
{
	int64_t q = ev != NULL ? ev->mem.requested : -1;
	int64_t room, hi, got, piece;
	od_error err;
	dv_status st;
	int id;

	memset(&err, 0, sizeof err);
	r->request_fit = -1;
	if (ev != NULL && q <= 0) {
		pb_note(r, "the log gives no requested figure", NULL);
		return;
	}
	if (!pb_mem(s, r, &r->free_now, &r->total_now))
		return;
	room = pb_room(s);
	r->cap = dv_cap(s->d);
	if (q > 0) {
		if (q <= room) {
			st = pb_try(s, q, &err);
			if (st != DV_OK && st != DV_OOM)
				goto failed;
			r->request_fit = st == DV_OK;
		} else {
			r->beyond_cap = true;
			r->scaled = true;
		}
	}
	hi = room < r->free_now ? room : r->free_now;
	hi = hi / PB_PAGE * PB_PAGE;
	st = pb_largest(s, hi, &r->largest, &err);
	if (st != DV_OK)
		goto failed;
	/* The search stopped at the cap, not at the device's limit. */
	r->largest_at_cap = r->largest > 0 && r->largest == hi &&
	    room < r->free_now;
	/* Everything that can be allocated: large chunks, then smaller. */
	r->allocatable = 0;
	st = DV_OK;
	for (piece = PB_CHUNK; piece >= PB_PAGE; piece /= 2) {
		while (piece <= pb_room(s)) {
			st = dv_alloc(s->d, piece, &id, &err);
			if (st != DV_OK)
				break;
			r->allocatable += piece;
		}
		if (st != DV_OK && st != DV_OOM && st != DV_CAP)
			goto failed;
	}
	got = r->allocatable;
	if (q > 0)
		pm_bytes(r, "requested_bytes", q);
	if (r->request_fit >= 0)
		pm_bool(r, "request_fit", r->request_fit == 1);
	pm_bytes(r, "largest_single_bytes", r->largest);
	pm_bool(r, "largest_limited_by_cap", r->largest_at_cap);
	pm_bytes(r, "allocatable_bytes", got);
	pm_bytes(r, "free_bytes", r->free_now);
	pm_bytes(r, "total_bytes", r->total_now);
	pm_bytes(r, "cap_bytes", r->cap);
	r->ran = true;
	return;
failed:
	pb_note(r, "an allocation failed", &err);
	pb_fail(s, st, &err);
}

/*
 * The fragmentation probe, and what it cannot show.  PyTorch's caching
 * allocator cannot give back a segment that still holds a live tensor,
 * so memory reserved but unallocated inside such segments serves only
 * requests that fit in one of its free blocks.  That split lives inside
 * the allocator: a GPU backs every cudaMalloc with 2 MiB pages from
 * wherever they are free (a virtual range, no physical run needed), so
 * raw device calls cannot reproduce it.  The probe makes holes of the
 * largest size below the request (each beside a small live allocation)
 * adding up to the reserved-but-unallocated figure, fills the device
 * until only the free memory of the message is left, and asks for the
 * request four ways, as controls of each other:
 *
 *   - with the holes held, by cudaMalloc and by a mapping in chunks
 *     (cuMemCreate/cuMemMap): both fail on a GPU, because less than the
 *     request is free, which is the log's own arithmetic and not a
 *     measurement of anything;
 *   - with the holes released, by cudaMalloc and by the mapping: both fit
 *     on a GPU, since the holes' pages are free again wherever they are.
 *
 * So the device alone never confirms fragmentation: the verdict says what
 * the device showed and leaves it to a memory snapshot (--snapshot,
 * src/lib/snapshot.c), which has the allocator's own blocks.  A device
 * where cudaMalloc fails after the release while the mapping fits needs
 * contiguous memory for cudaMalloc (the fake's `contiguous` control):
 * the verdict says that too, and still confirms nothing.  The probe must
 * leave less than the request free, so it takes nearly all of the free
 * memory: when that is above the cap it does not run and says what
 * --max-memory it needs.
 */
static void
pb_fragmentation(pb_session *s, pb_result *r, const od_event *ev)
{
	const dv_info *info = dv_info_of(s->d);
	int64_t q = ev != NULL ? ev->mem.requested : -1;
	int64_t u = ev != NULL ? ev->mem.reserved_unallocated : -1;
	int64_t f = ev != NULL ? ev->mem.free : -1;
	int64_t h, k, sep = PB_PAGE, f_end, take, need, room, after, fill;
	int64_t got = 0, chunk, gran;
	int *hole = NULL;
	int i, id, n;
	od_error err;
	dv_status st;

	memset(&err, 0, sizeof err);
	r->malloc_st = r->vmm_st = DV_UNSUPPORTED;
	r->vmm_held_st = r->malloc_rel_st = DV_UNSUPPORTED;
	if (q <= 0 || u <= 0) {
		pb_note(r, "the log gives no requested and reserved-but-"
		    "unallocated figures", NULL);
		return;
	}
	/* Holes of the largest size below the request. */
	h = q > PB_PAGE ? (q - 1) / PB_PAGE * PB_PAGE : (q - 1) / 512 * 512;
	if (h <= 0) {
		pb_note(r, "the request is too small to replay", NULL);
		return;
	}
	k = u / h + (u % h != 0);
	if (k > PB_HOLES_MAX) {
		k = PB_HOLES_MAX;
		r->scaled = true;
	}
	if (!pb_mem(s, r, &r->free_now, &r->total_now))
		return;
	/* Leave the free memory the message reported, or half the request. */
	f_end = f >= 0 && f < q ? f : q / 2;
	take = r->free_now - f_end;
	need = dv_sat_add(dv_sat_sub(take, dv_sat_mul(k, h)), q);
	if (need < take)
		need = take;
	room = pb_room(s);
	r->cap = dv_cap(s->d);
	if (take <= 0 || need > room) {
		char sn[32], sf[32], sc[32];

		od_size_format(need, sn, sizeof sn);
		od_size_format(r->free_now, sf, sizeof sf);
		od_size_format(r->cap, sc, sizeof sc);
		snprintf(r->note, sizeof r->note, "the probe must leave less "
		    "than the request free, so it would take %s of the %s "
		    "free, which is above the cap of %s: rerun with "
		    "--max-memory %lldMiB (or 100%%) on a GPU nobody else "
		    "uses", sn, sf, sc,
		    (long long)(dv_round_up(need, PB_MIB) / PB_MIB));
		return;
	}
	if (dv_sat_mul(k, dv_sat_add(h, sep)) > take) {
		k = take / dv_sat_add(h, sep);
		r->scaled = true;
		if (k == 0) {
			pb_note(r, "no room for one hole beside the free memory "
			    "to leave", NULL);
			return;
		}
	}
	hole = malloc((size_t)k * sizeof *hole);
	if (hole == NULL) {
		pb_note(r, "out of host memory", NULL);
		return;
	}
	for (i = 0; i < k; i++) {
		/* The last hole takes what is left of the log's figure. */
		int64_t rest = dv_sat_sub(u, dv_sat_mul(k - 1, h));
		int64_t size = i == k - 1 && !r->scaled && rest > 0 ?
		    dv_round_up(rest, PB_PAGE) : h;

		if (size > h)
			size = h;
		st = dv_alloc(s->d, size, &hole[i], &err);
		if (st == DV_OK) {
			st = dv_alloc(s->d, sep, &id, &err);
			if (st != DV_OK)
				dv_free(s->d, hole[i]);
		}
		if (st == DV_OOM || st == DV_CAP) {
			k = i;
			r->scaled = true;
			break;
		}
		if (st == DV_OK)
			r->holes_total += size;
		if (st != DV_OK) {
			pb_note(r, "making the holes failed", &err);
			pb_fail(s, st, &err);
			goto out;
		}
	}
	if (k == 0) {
		pb_note(r, "no room for the holes", &err);
		goto out;
	}
	r->holes = (int)k;
	r->hole_bytes = h;
	/* Fill all but the free memory to leave (the cap allows it). */
	if (!pb_mem(s, r, &after, &r->total_now))
		goto out;
	fill = after - f_end;
	if (fill > 0) {
		fill = dv_round_up(fill, PB_PAGE);
		if (fill > pb_room(s))
			fill = pb_room(s) / PB_PAGE * PB_PAGE;
		st = pb_take(s, fill, &got, &err);
		if (st != DV_OK && st != DV_OOM && st != DV_CAP) {
			pb_note(r, "filling the device failed", &err);
			pb_fail(s, st, &err);
			goto out;
		}
	}
	if (!pb_mem(s, r, &r->free_left, &r->total_now))
		goto out;
	gran = info->vmm_granularity > 0 ? info->vmm_granularity : PB_PAGE;
	chunk = PB_MAP_CHUNK < h ? PB_MAP_CHUNK : h;
	chunk = chunk / gran * gran;
	if (chunk < gran)
		chunk = gran;
	if (q / chunk > 4096)
		chunk = dv_round_up(q / 4096, gran);
	/* With the holes held.  These tries may pass the cap, since the
	 * device has less than the request free. */
	st = dv_try(s->d, q, &err);
	r->malloc_st = st;
	if (st == DV_OK || st == DV_OOM || st == DV_CAP) {
		st = dv_vmm_try(s->d, q, chunk, &n, &err);
		r->vmm_held_st = st;
	}
	if (st != DV_OK && st != DV_OOM && st != DV_CAP &&
	    st != DV_UNSUPPORTED) {
		pb_note(r, "asking for the request with the holes held failed",
		    &err);
		pb_fail(s, st, &err);
		goto out;
	}
	/* With the holes released: their pages are free again. */
	for (i = 0; i < k; i++)
		dv_free(s->d, hole[i]);
	if (!pb_mem(s, r, &r->free_released, &r->total_now))
		goto out;
	st = dv_try(s->d, q, &err);
	r->malloc_rel_st = st;
	if (st == DV_OK || st == DV_OOM || st == DV_CAP) {
		st = dv_vmm_try(s->d, q, chunk, &r->vmm_chunks, &err);
		r->vmm_st = st;
	}
	if (st != DV_OK && st != DV_OOM && st != DV_CAP &&
	    st != DV_UNSUPPORTED) {
		pb_note(r, "asking for the request after the release failed",
		    &err);
		pb_fail(s, st, &err);
		goto out;
	}
	pm_bytes(r, "requested_bytes", q);
	pm_bytes(r, "reserved_unallocated_bytes", u);
	pm_int(r, "holes", k);
	pm_bytes(r, "hole_bytes", h);
	pm_bytes(r, "holes_total_bytes", r->holes_total);
	pm_bytes(r, "live_between_holes_bytes", sep);
	pm_bytes(r, "fill_bytes", got);
	pm_bytes(r, "free_left_bytes", r->free_left);
	pm_str(r, "cudamalloc_with_holes_held", dv_status_name(r->malloc_st));
	pm_str(r, "vmm_map_with_holes_held", dv_status_name(r->vmm_held_st));
	pm_bytes(r, "free_after_release_bytes", r->free_released);
	pm_str(r, "cudamalloc_after_release",
	    dv_status_name(r->malloc_rel_st));
	pm_str(r, "vmm_map_after_release", dv_status_name(r->vmm_st));
	pm_bytes(r, "vmm_chunk_bytes", chunk);
	pm_int(r, "vmm_chunks", r->vmm_chunks);
	pm_bytes(r, "cap_bytes", r->cap);
	r->ran = true;
out:
	free(hole);
}

static void
pb_processes(pb_session *s, pb_result *r)
{
	dv_proc v[DV_PROCS_MAX];
	int n, i;
	int64_t others = 0;
	char list[96];
	size_t used = 0;

	n = dv_processes(s->d, v, DV_PROCS_MAX, &r->procs_known);
	if (!r->procs_known) {
		snprintf(r->note, sizeof r->note, "%s",
		    dv_info_of(s->d)->nvml_note[0] != '\0' ?
		    dv_info_of(s->d)->nvml_note : dv_info_of(s->d)->nvml ?
		    "NVML could not list the processes" :
		    "NVML is not available");
		return;
	}
	list[0] = '\0';
	for (i = 0; i < n; i++) {
		if (v[i].self)
			continue;
		r->procs[r->nprocs++] = v[i];
		if (v[i].bytes > 0)
			others = dv_sat_add(others, v[i].bytes);
		if (used < sizeof list - 1)
			used += (size_t)snprintf(list + used, sizeof list - used,
			    "%s%lld", used ? " " : "", (long long)v[i].pid);
	}
	r->total_now = dv_info_of(s->d)->total;
	pm_int(r, "other_processes", r->nprocs);
	pm_bytes(r, "other_processes_bytes", others);
	pm_str(r, "pids", r->nprocs > 0 ? list : "none");
	r->ran = true;
}

/*
 * The random pattern's seed: --pattern-seed, or else one from the clock,
 * and never 0 (the report prints it, so a run can be repeated with the
 * same values).
 */
static uint64_t
pb_seed(const pb_opts *o)
{
	struct timespec ts;
	uint64_t x;

	if (o->seed != 0)
		return o->seed;
	clock_gettime(CLOCK_REALTIME, &ts);
	x = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec;
	return x != 0 ? x : 1;
}

/* The passes and mismatches of each kind of memory test, and the seed. */
static void
pb_pattern_kinds(pb_result *r)
{
	char seed[24];

	pm_int(r, "pattern_passes_static", r->pat.kind_passes[DV_PT_STATIC]);
	pm_int(r, "pattern_errors_static", r->pat.kind_errors[DV_PT_STATIC]);
	pm_int(r, "pattern_passes_moving_inversions",
	    r->pat.kind_passes[DV_PT_MOVING]);
	pm_int(r, "pattern_errors_moving_inversions",
	    r->pat.kind_errors[DV_PT_MOVING]);
	pm_int(r, "pattern_passes_random", r->pat.kind_passes[DV_PT_RANDOM]);
	pm_int(r, "pattern_errors_random", r->pat.kind_errors[DV_PT_RANDOM]);
	snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->pat.seed);
	pm_str(r, "pattern_seed", seed);
	pm_bool(r, "ecc_uncorrectable_during_test", r->pat.ecc_fault);
}

/* A counter before and after the tests, or why it is not known (never
 * 0 for one NVML does not give). */
static void
pm_counter(pb_result *r, const char *before, const char *after,
    int64_t a, int64_t b, bool after_read, const char *why)
{
	if (a < 0) {
		pm_str(r, before, why[0] != '\0' ? why : "not read");
		return;
	}
	pm_int(r, before, a);
	if (!after_read || b < 0)
		pm_str(r, after, "not read");
	else
		pm_int(r, after, b);
}

/*
 * The ECC and remapped-row counters read before and after the tests, as
 * DCGM's diagnostic reads them around its own (NVIDIA DCGM, "Diagnostic"
 * plugin); the volatile ECC counts (nvmlDeviceGetTotalEccErrors with
 * NVML_VOLATILE_ECC) and the remapped rows (nvmlDeviceGetRemappedRows).
 * The judge (probe_verdict.c) reads the rise.
 */
static void
pb_counters(pb_result *r)
{
	const dv_health *h = &r->health, *g = &r->health_after;
	bool ok = r->health_after_ran;

	if (!r->health_ran)
		return;
	pm_counter(r, "ecc_uncorrected_volatile",
	    "ecc_uncorrected_volatile_after", h->ecc_uncorrected,
	    ok && g->ecc_known ? g->ecc_uncorrected : OD_UNKNOWN, ok,
	    h->ecc_why);
	pm_counter(r, "ecc_corrected_volatile", "ecc_corrected_volatile_after",
	    h->ecc_corrected, ok && g->ecc_known ? g->ecc_corrected :
	    OD_UNKNOWN, ok, h->ecc_why);
	if (h->ecc_known && h->ecc_uncorrected_total >= 0)
		pm_int(r, "ecc_uncorrected_aggregate",
		    h->ecc_uncorrected_total);
	pm_counter(r, "remapped_rows_uncorrectable",
	    "remapped_rows_uncorrectable_after", h->remapped_uncorrectable,
	    ok && g->remap_known ? g->remapped_uncorrectable : OD_UNKNOWN, ok,
	    h->remap_why);
	pm_counter(r, "remapped_rows_correctable",
	    "remapped_rows_correctable_after", h->remapped_correctable,
	    ok && g->remap_known ? g->remapped_correctable : OD_UNKNOWN, ok,
	    h->remap_why);
	if (h->remap_known) {
		pm_bool(r, "remap_pending", h->remap_pending);
		if (ok && g->remap_known)
			pm_bool(r, "remap_pending_after", g->remap_pending);
		pm_bool(r, "remap_failure", h->remap_failure ||
		    (ok && g->remap_known && g->remap_failure));
	}
	if (h->on_parent)
		pm_bool(r, "counters_on_parent_gpu", true);
}

static void
pb_health(pb_session *s, pb_result *r)
{
	const dv_info *info = dv_info_of(s->d);
	int64_t arr, bytes, room;
	od_error err;
	dv_status st;
	int a, b, c, id, n0 = dv_count(s->d);

	memset(&err, 0, sizeof err);
	r->health_ran = dv_health_read(s->d, &r->health) == DV_OK;
	r->peak_bps = dv_peak_bandwidth(info);
	r->ref = bw_ref_find(info->name);
	if (s->o.read_only) {
		snprintf(r->note, sizeof r->note, "only the counters were "
		    "read: other processes hold this GPU (use --force)");
		goto counters;
	}
	if (!pb_mem(s, r, &r->free_now, &r->total_now))
		goto counters;
	/* Bandwidth: three arrays well beyond the L2 cache. */
	room = pb_room(s);
	arr = 256 * PB_MIB;
	if (info->l2_bytes > 0 && dv_sat_mul(8, info->l2_bytes) > arr)
		arr = dv_round_up(dv_sat_mul(8, info->l2_bytes), PB_MIB);
	if (arr > room / 4)
		arr = room / 4 / PB_MIB * PB_MIB;
	if (arr >= 16 * PB_MIB) {
		st = dv_alloc(s->d, arr, &a, &err);
		if (st == DV_OK)
			st = dv_alloc(s->d, arr, &b, &err);
		if (st == DV_OK)
			st = dv_alloc(s->d, arr, &c, &err);
		if (st == DV_OK) {
			st = dv_bandwidth_test(s->d, a, b, c, &r->bw, &err);
			r->bw_ran = st == DV_OK;
		}
		if (st != DV_OK && st != DV_OOM && st != DV_CAP) {
			pb_note(r, "the bandwidth test failed", &err);
			pb_fail(s, st, &err);
			goto counters;
		}
		dv_free_from(s->d, n0);
	}
	/* Pattern test over as much of the free memory as the cap allows. */
	bytes = pb_room(s);
	if (bytes > dv_sat_sub(r->free_now, 64 * PB_MIB))
		bytes = dv_sat_sub(r->free_now, 64 * PB_MIB);
	bytes = bytes / PB_PAGE * PB_PAGE;
	st = DV_OOM;
	while (bytes >= 256 * PB_MIB) {
		st = dv_alloc(s->d, bytes, &id, &err);
		if (st != DV_OOM)
			break;
		bytes = bytes / 2 / PB_PAGE * PB_PAGE;
	}
	if (st == DV_OK) {
		r->pat.seed = pb_seed(&s->o);
		st = dv_pattern_test(s->d, id, &r->pat, &err);
		r->pat_ran = st == DV_OK || (st == DV_TIMEOUT &&
		    r->pat.passes > 0) || r->pat.ecc_fault;
	}
	if (st != DV_OK && st != DV_OOM && st != DV_CAP) {
		pb_note(r, "the pattern test failed", &err);
		pb_fail(s, st, &err);
	}
	dv_free_from(s->d, n0);
counters:
	/* Counters again: errors the tests themselves caused. */
	r->health_after_ran = r->health_ran && dv_health_read(s->d,
	    &r->health_after) == DV_OK;
	if (r->bw_ran) {
		pm_bytes(r, "bandwidth_array_bytes", r->bw.array_bytes);
		pm_num(r, "copy_bytes_per_second", PM_RATE, r->bw.copy_bps);
		pm_num(r, "triad_bytes_per_second", PM_RATE, r->bw.triad_bps);
		if (r->peak_bps > 0) {
			pm_num(r, "peak_bytes_per_second", PM_RATE, r->peak_bps);
			pm_num(r, "triad_fraction_of_peak", PM_NUM,
			    r->bw.triad_bps / r->peak_bps);
		}
		pm_str(r, "bandwidth_convention", "bytes read + bytes written "
		    "per second (copy 2N x 8, triad 3N x 8), GB = 1e9 bytes, "
		    "best of the trials");
		pm_int(r, "bandwidth_blocks_per_sm", r->bw.blocks_per_sm);
		pm_int(r, "bandwidth_threads_per_block", r->bw.threads);
		pm_int(r, "bandwidth_configurations_tried", r->bw.configs);
		if (r->ref != NULL) {
			pm_num(r, "reference_triad_bytes_per_second", PM_RATE,
			    r->ref->triad_bps);
			pm_num(r, "triad_fraction_of_reference", PM_NUM,
			    r->bw.triad_bps / r->ref->triad_bps);
			char basis[120];

			bw_ref_basis(r->ref, basis, sizeof basis);
			pm_str(r, "bandwidth_reference", r->ref->name);
			pm_str(r, "bandwidth_reference_basis", basis);
			pm_str(r, "bandwidth_reference_source", r->ref->how);
			pm_str(r, "bandwidth_reference_cited", r->ref->source);
		} else {
			pm_str(r, "bandwidth_reference", "no reference for this "
			    "part");
		}
	}
	if (r->pat_ran) {
		pm_bytes(r, "pattern_bytes", r->pat.bytes);
		pm_int(r, "pattern_passes", r->pat.passes);
		pm_int(r, "pattern_errors", r->pat.errors);
		pb_pattern_kinds(r);
		if (r->pat.nbad > 0) {
			char at[32];

			snprintf(at, sizeof at, "0x%llx",
			    (unsigned long long)r->pat.bad[0]);
			pm_str(r, "first_bad_address", at);
		}
		pm_bool(r, "pattern_cut_by_time_limit", r->pat.cut);
	}
	pb_counters(r);
	if (r->health.retired_known) {
		pm_int(r, "retired_pages_dbe", r->health.retired_dbe);
		pm_bool(r, "retired_pending", r->health.retired_pending);
	}
	if (r->health.note[0] != '\0')
		pm_str(r, "counters_note", r->health.note);
	r->ran = r->pat_ran || r->bw_ran || r->health_ran;
	if (!r->ran && r->note[0] == '\0')
		pb_note(r, "neither the tests nor the counters could run",
		    NULL);
}

/* The cache key of probe p for ev. */
static void
pb_key(pb_probe p, const od_event *ev, int64_t key[3])
{
	key[0] = key[1] = key[2] = -2;
	if (ev == NULL)
		return;
	switch (p) {
	case PB_FITS_NOW:
		key[0] = ev->mem.allocated;
		key[1] = ev->mem.requested;
		break;
	case PB_LARGEST_ALLOCATION:
		key[0] = ev->mem.requested;
		break;
	case PB_FRAGMENTATION:
		key[0] = ev->mem.requested;
		key[1] = ev->mem.reserved_unallocated;
		key[2] = ev->mem.free;
		break;
	default:
		break;
	}
}

const pb_result *
pb_run(pb_session *s, pb_probe p, const od_event *ev)
{
	pb_result *r;
	od_error err;
	int64_t key[3];
	dv_status st;
	int i, n0;

	pb_key(p, ev, key);
	for (i = 0; i < s->nres; i++)
		if (s->res[i]->probe == p && memcmp(s->res[i]->key, key,
		    sizeof key) == 0)
			return s->res[i];
	if (s->nres == PB_RESULTS_MAX || (r = calloc(1, sizeof *r)) == NULL) {
		r = &s->full;
		memset(r, 0, sizeof *r);
		r->probe = p;
		snprintf(r->note, sizeof r->note, "not run: more than %d "
		    "distinct probe runs", PB_RESULTS_MAX);
		return r;
	}
	s->res[s->nres++] = r;
	r->probe = p;
	memcpy(r->key, key, sizeof key);
	r->context = r->torch_context = -1;
	r->free_now = r->total_now = r->cap = -1;
	r->others = -1;
	r->request_fit = -1;
	memset(&err, 0, sizeof err);
	if (dv_stopped()) {
		pb_note(r, "not run: stopped by a signal", NULL);
		return r;
	}
	if (s->fail_st != DV_OK) {
		pb_note(r, s->fail_st == DV_TENANT ? "not run: the run stopped "
		    "for safety" : s->fail_st == DV_TIMEOUT ? "not run: the "
		    "device timed out earlier" : "not run: the device failed "
		    "earlier", &s->fail_err);
		return r;
	}
	/* Reading NVML needs no context; everything else does. */
	if (p != PB_PROCESSES && p != PB_HEALTH) {
		if (s->o.read_only) {
			pb_note(r, "not run: other processes hold this GPU "
			    "(use --force)", NULL);
			return r;
		}
		if (!pb_session_start(s, &err)) {
			pb_note(r, "not run: the device could not be used",
			    &err);
			return r;
		}
	} else if (p == PB_HEALTH && !s->o.read_only &&
	    !pb_session_start(s, &err)) {
		pb_note(r, "not run: the device could not be used", &err);
		return r;
	}
	/* Before each probe: has anyone else come? */
	if (s->started && (st = dv_check(s->d, &err)) != DV_OK) {
		pb_fail(s, st, &err);
		pb_note(r, "not run", &err);
		dv_free_from(s->d, 0);
		return r;
	}
	n0 = dv_count(s->d);
	if (s->started) {
		dv_activity_take(s->d, &r->act);
		memset(&r->act, 0, sizeof r->act);
	}
	switch (p) {
	case PB_CONTEXT_COST:
		pb_context_cost(s, r);
		break;
	case PB_FITS_NOW:
		pb_fits_now(s, r, ev);
		break;
	case PB_LARGEST_ALLOCATION:
		pb_largest_allocation(s, r, ev);
		break;
	case PB_FRAGMENTATION:
		pb_fragmentation(s, r, ev);
		break;
	case PB_PROCESSES:
		pb_processes(s, r);
		break;
	case PB_HEALTH:
	case PB_COUNT:
		pb_health(s, r);
		break;
	}
	/* Whatever the probe took, it gives back; a tenant that came makes
	 * the session give back everything. */
	dv_free_from(s->d, s->fail_st == DV_TENANT ? 0 : n0);
	if (s->started)
		dv_activity_take(s->d, &r->act);
	if (p == PB_CONTEXT_COST && s->started)
		r->act = s->start_act;
	if (dv_stopped() && r->note[0] == '\0')
		pb_note(r, "stopped by a signal", NULL);
	return r;
}

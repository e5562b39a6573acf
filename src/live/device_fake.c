/*
 * device_fake.c: a simulated GPU for live mode, so that every probe's
 * logic runs, and is tested, on machines without one.
 *
 * The device's memory is physical pages [0, total), kept as a sorted list
 * of free extents, behind a virtual address space many times larger, as
 * on a GPU: cudaMalloc of n bytes reserves a virtual range and backs it
 * with 2 MiB pages from wherever they are free, so it succeeds whenever n
 * bytes of pages are free at all, contiguous or not (CUDA C++ Programming
 * Guide, "Virtual Memory Management"; the driver's allocator maps pages,
 * it does not need one physical run).  Mapping with virtual memory
 * management (cuMemCreate, cuMemMap) takes the same pages, in chunks.  So
 * the fake cannot show fragmentation from raw device calls, and neither
 * can a GPU: that lives inside PyTorch's caching allocator, whose blocks
 * are split inside segments that hold live tensors.  The setting
 * `contiguous` brings back the one-range model of earlier releases, only
 * as the control that shows what a probe would wrongly conclude on it.
 *
 * Other processes, the driver's reserve and our context are ranges taken
 * at open and at start.  Kernels take no time: the pattern test finds the
 * injected errors, the bandwidth test reports the configured fraction of
 * the peak, and a "hang" makes every kernel never return, as a hung
 * kernel makes cudaStreamSynchronize wait for ever (the watchdog of live
 * mode ends the process then).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "device.h"
#include "pattern_values.h"

#define FK_EXTENTS_MAX (4 * DV_ALLOCS_MAX + 64)
#define FK_VA_BASE 0x7f0000000000ULL    /* where virtual ranges start */
#define FK_VA_FACTOR 64ULL              /* address space / memory */

typedef struct {
	int64_t start, len;
} fk_ext;

/* An allocation: one range, or the chunks of a mapping. */
typedef struct {
	bool vmm;
	int64_t bytes;
	uint64_t address;       /* what the program sees */
	int n;
	fk_ext piece[];         /* the device ranges it holds */
} fk_buf;

typedef struct {
	dv_fake_spec spec;
	fk_ext free_ext[FK_EXTENTS_MAX];
	int nfree;
	bool started;
	int64_t context;        /* bytes the context took */
	uint64_t next_va;
	int allocs_made;        /* for fail_alloc and tenant_after */
	bool tenant_in;         /* the injected tenant has come */
	char parent[96];        /* a MIG instance's GPU, "" otherwise */
	dv_activity act;
	/* The counters now: the spec's, plus its injected rises once the
	 * pattern test has exercised the memory, as errors show on a GPU
	 * when the faulty cells are written and read. */
	int64_t ecc_unc, ecc_corr, remap_unc, remap_corr;
	bool pending;
} fk_dev;

/* Rounds up to a multiple of page (a power of two or not). */
static int64_t
fk_round(int64_t v, int64_t page)
{
	if (page <= 1)
		return v;
	return dv_round_up(v, page);
}

/* Takes len bytes, first fit.  Returns the start, or -1. */
static int64_t
fk_take(fk_dev *f, int64_t len)
{
	int i;

	for (i = 0; i < f->nfree; i++) {
		fk_ext *e = &f->free_ext[i];

		if (e->len >= len) {
			int64_t at = e->start;

			e->start += len;
			e->len -= len;
			if (e->len == 0) {
				memmove(e, e + 1, (size_t)(f->nfree - i - 1) *
				    sizeof *e);
				f->nfree--;
			}
			return at;
		}
	}
	return -1;
}

/* Gives [start, start + len) back, joined with free neighbours. */
static void
fk_give(fk_dev *f, int64_t start, int64_t len)
{
	int i = 0;

	while (i < f->nfree && f->free_ext[i].start < start)
		i++;
	if (i > 0 && f->free_ext[i - 1].start + f->free_ext[i - 1].len ==
	    start) {
		f->free_ext[i - 1].len += len;
		if (i < f->nfree && start + len == f->free_ext[i].start) {
			f->free_ext[i - 1].len += f->free_ext[i].len;
			memmove(&f->free_ext[i], &f->free_ext[i + 1],
			    (size_t)(f->nfree - i - 1) * sizeof f->free_ext[0]);
			f->nfree--;
		}
		return;
	}
	if (i < f->nfree && start + len == f->free_ext[i].start) {
		f->free_ext[i].start = start;
		f->free_ext[i].len += len;
		return;
	}
	if (f->nfree == FK_EXTENTS_MAX)
		return;         /* cannot happen: one extent per allocation */
	memmove(&f->free_ext[i + 1], &f->free_ext[i],
	    (size_t)(f->nfree - i) * sizeof f->free_ext[0]);
	f->free_ext[i].start = start;
	f->free_ext[i].len = len;
	f->nfree++;
}

static int64_t
fk_free_bytes(const fk_dev *f)
{
	int64_t sum = 0;
	int i;

	for (i = 0; i < f->nfree; i++)
		sum += f->free_ext[i].len;
	return sum;
}

static void
fk_note(fk_dev *f, bool alloc, int64_t bytes, const char *source)
{
	dv_activity *a = &f->act;
	int i;

	if (!f->spec.cupti)
		return;
	if (alloc) {
		a->allocs++;
		a->alloc_bytes += bytes;
		a->device_bytes += bytes;
	} else {
		a->releases++;
		a->release_bytes += bytes;
		return;
	}
	for (i = 0; i < a->nsources; i++)
		if (strcmp(a->sources[i], source) == 0)
			break;
	if (i == a->nsources && i < DV_SOURCES_MAX) {
		snprintf(a->sources[i], sizeof a->sources[i], "%s", source);
		a->nsources++;
	}
	if (i < a->nsources)
		a->source_allocs[i]++;
}

/* The fake node's GPU i: its UUID and PCI bus id (made up, in the forms
 * NVML gives: nvmlDeviceGetUUID, nvmlDeviceGetPciInfo's busId). */
static void
fk_ids(int i, dv_info *info)
{
	snprintf(info->uuid, sizeof info->uuid,
	    "GPU-fa4e%04x-0000-4000-8000-%012x", (unsigned)i, (unsigned)i);
	snprintf(info->pci_bus_id, sizeof info->pci_bus_id,
	    "00000000:%02X:00.0", (unsigned)(0x18 + i));
}

/*
 * Which GPU of the fake node cfg names, by index, UUID or PCI bus id, or
 * its MIG instance by UUID (found as nvmlDeviceGetHandleByUUID finds it;
 * its counters are the parent's).  Fills the ids; false when none.
 */
static bool
fk_resolve(const dv_fake_spec *s, const dv_config *cfg, dv_info *info)
{
	int n = s->gpus > 0 ? s->gpus : 1, i;

	info->count = n;
	if (cfg->id == NULL || cfg->id[0] == '\0') {
		if (cfg->index < 0 || cfg->index >= n)
			return false;
		info->index = cfg->index;
		fk_ids(cfg->index, info);
		return true;
	}
	for (i = 0; i < n; i++) {
		fk_ids(i, info);
		info->index = i;
		if (dv_id_matches(info, cfg->id))
			return true;
	}
	info->uuid[0] = info->pci_bus_id[0] = '\0';
	return false;
}

/*
 * A MIG instance of the fake node's GPU 0, chosen as the CUDA backend
 * chooses one (dv_select): by its UUID in --device, or in the process's
 * CUDA_VISIBLE_DEVICES; the instance is then CUDA's device 0, as it is
 * with CUDA_VISIBLE_DEVICES=MIG-<UUID>.  Its counters are the parent's.
 */
static bool
fk_resolve_mig(const dv_fake_spec *s, const dv_selection *sel,
    dv_info *info)
{
	dv_info parent;
	int k;

	memset(&parent, 0, sizeof parent);
	fk_ids(0, &parent);
	for (k = 0; k < s->mig; k++) {
		snprintf(info->uuid, sizeof info->uuid,
		    "MIG-fa4e0000-0000-4000-8000-%012x", 0x100u + (unsigned)k);
		if (strcasecmp(info->uuid, sel->uuid) != 0)
			continue;
		snprintf(info->parent_uuid, sizeof info->parent_uuid, "%s",
		    parent.uuid);
		snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "%s",
		    parent.pci_bus_id);
		info->index = sel->cuda_index;
		info->count = 1;
		return true;
	}
	info->uuid[0] = '\0';
	return false;
}

static dv_status
fk_open(const dv_config *cfg, void **stp, dv_info *info, od_error *err)
{
	const dv_fake_spec *s = cfg->fake;
	dv_selection sel;
	fk_dev *f;
	int i;

	if (s == NULL) {
		od_error_set(err, NULL, 0, 0, "no fake device described");
		return DV_ERROR;
	}
	if (s->no_gpu) {
		od_error_set(err, NULL, 0, 0, "no CUDA GPU (fake device)");
		return DV_UNSUPPORTED;
	}
	dv_select(cfg->id, cfg->index, getenv("CUDA_VISIBLE_DEVICES"), &sel);
	if (sel.mig ? !fk_resolve_mig(s, &sel, info) :
	    !fk_resolve(s, cfg, info)) {
		if (sel.mig)
			od_error_set(err, NULL, 0, 0, "no MIG instance %.80s on "
			    "the fake node%s", sel.uuid, sel.from_env ? " (named "
			    "by CUDA_VISIBLE_DEVICES)" : "");
		else if (cfg->id != NULL && cfg->id[0] != '\0')
			od_error_set(err, NULL, 0, 0, "no GPU %.80s on the fake "
			    "node", cfg->id);
		else
			od_error_set(err, NULL, 0, 0, "no GPU %d: the fake node "
			    "has %d", cfg->index, s->gpus > 0 ? s->gpus : 1);
		return DV_UNSUPPORTED;
	}
	/* The identity check of the CUDA backend: the fake's CUDA gives the
	 * UUID resolved unless cuda_uuid says otherwise, its NVML (when it
	 * has one) the one resolved. */
	if (dv_check_identity(sel.mig ? sel.uuid : "", strcmp(s->cuda_uuid,
	    "none") == 0 ? "" : s->cuda_uuid[0] != '\0' ? s->cuda_uuid :
	    info->uuid, s->nvml ? info->uuid : "", info->identity,
	    sizeof info->identity, err) != DV_OK)
		return DV_UNSUPPORTED;
	f = calloc(1, sizeof *f);
	if (f == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return DV_ERROR;
	}
	f->spec = *s;
	/* A MIG instance has a seventh of the memory (a 1g slice). */
	if (info->parent_uuid[0] != '\0') {
		f->spec.total = s->total / 7 / s->page * s->page;
		snprintf(f->parent, sizeof f->parent, "%s", info->parent_uuid);
	}
	f->ecc_unc = s->ecc_uncorrected;
	f->ecc_corr = s->ecc_corrected;
	f->remap_unc = s->remapped_uncorrectable;
	f->pending = s->remap_pending;
	f->free_ext[0].start = 0;
	f->free_ext[0].len = f->spec.total;
	f->nfree = 1;
	f->next_va = FK_VA_BASE;
	if (s->reserved > 0 && fk_take(f, fk_round(s->reserved, s->page)) < 0)
		goto toobig;
	if (s->hidden > 0 && fk_take(f, fk_round(s->hidden, s->page)) < 0)
		goto toobig;
	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].bytes > 0 &&
		    fk_take(f, fk_round(s->procs[i].bytes, s->page)) < 0)
			goto toobig;
	snprintf(info->name, sizeof info->name, "%s", s->name);
	info->total = f->spec.total;
	info->cc_major = 9;
	info->cc_minor = 0;
	info->sm_count = 132;
	info->l2_bytes = 50LL << 20;
	info->mem_clock_khz = s->mem_clock_khz;
	info->bus_width_bits = s->bus_width_bits;
	info->ecc_enabled = s->ecc_enabled;
	info->vmm = s->vmm;
	info->vmm_granularity = s->vmm ? s->granularity : 0;

	info->driver_cuda = 13000;
	info->runtime_cuda = 13000;
	info->nvml = s->nvml;
	if (!s->nvml)
		snprintf(info->nvml_note, sizeof info->nvml_note,
		    "NVML not available (fake device without NVML)");
	else
		snprintf(info->driver_release, sizeof info->driver_release,
		    "fake");
	info->cupti = s->cupti;
	if (!s->cupti)
		snprintf(info->cupti_note, sizeof info->cupti_note,
		    "CUPTI not available (fake device without CUPTI)");
	*stp = f;
	return DV_OK;
toobig:
	od_error_set(err, NULL, 0, 0, "the fake device's other processes "
	    "and reserve do not fit in its %lld bytes", (long long)s->total);
	free(f);
	return DV_ERROR;
}

static int
fk_processes(void *st, dv_proc *v, int cap, bool *known)
{
	fk_dev *f = st;
	int i, n = 0;

	*known = f->spec.nvml && f->spec.proc_list;
	if (!*known)
		return 0;
	for (i = 0; i < f->spec.nprocs && n < cap; i++)
		v[n++] = f->spec.procs[i];
	if (f->tenant_in && n < cap)
		v[n++] = f->spec.tenant;
	if (f->started && n < cap) {
		v[n].pid = (int64_t)getpid();
		v[n].bytes = f->context;
		v[n].self = true;
		n++;
	}
	return n;
}

static dv_status
fk_start(void *st, int64_t *context_bytes, od_error *err)
{
	fk_dev *f = st;

	*context_bytes = -1;
	if (f->started) {
		*context_bytes = f->spec.nvml ? f->context : -1;
		return DV_OK;
	}
	f->context = fk_round(f->spec.context, f->spec.page);
	if (f->context > 0 && fk_take(f, f->context) < 0) {
		od_error_set(err, NULL, 0, 0, "out of memory creating the "
		    "context");
		return DV_OOM;
	}
	f->started = true;
	fk_note(f, true, f->context, "libcuda.so.1 (driver)");
	/* Without NVML there is no reading that does not itself need the
	 * context, as on a real device. */
	*context_bytes = f->spec.nvml ? f->context : -1;
	return DV_OK;
}

static dv_status
fk_mem_info(void *st, int64_t *free_b, int64_t *total, od_error *err)
{
	fk_dev *f = st;

	*free_b = fk_free_bytes(f);
	*total = f->spec.total;
	return DV_OK;
}

static fk_buf *fk_take_pages(fk_dev *f, int64_t len);

/* The injected allocation failure, when this is the Nth allocation; and
 * the injected tenant, when it comes then. */
static bool
fk_injected(fk_dev *f, od_error *err)
{
	f->allocs_made++;
	/* The tenant comes during this allocation: it takes its memory
	 * first, and from now on NVML lists it. */
	if (f->spec.tenant_after > 0 && f->allocs_made == f->spec.tenant_after &&
	    !f->tenant_in) {
		fk_buf *t = fk_take_pages(f, fk_round(f->spec.tenant.bytes,
		    f->spec.page));

		free(t);        /* its pages stay taken: the tenant holds them */
		f->tenant_in = true;
	}
	if (f->spec.fail_alloc > 0 && f->allocs_made == f->spec.fail_alloc) {
		od_error_set(err, NULL, 0, 0, "injected failure of allocation "
		    "%d (fake device)", f->allocs_made);
		return true;
	}
	return false;
}

/*
 * Takes len bytes of pages from wherever they are free, lowest first, as
 * a GPU backs a virtual range with 2 MiB pages that need not be next to
 * each other.  NULL (nothing taken) when fewer than len bytes are free or
 * host memory ran out.
 */
static fk_buf *
fk_take_pages(fk_dev *f, int64_t len)
{
	int64_t left = len;
	fk_buf *b;
	int i, n = 0;

	if (fk_free_bytes(f) < len)
		return NULL;
	for (i = 0; i < f->nfree && left > 0; i++, n++)
		left -= f->free_ext[i].len;
	b = malloc(sizeof *b + (size_t)(n > 0 ? n : 1) * sizeof b->piece[0]);
	if (b == NULL)
		return NULL;
	b->n = 0;
	left = len;
	while (left > 0) {
		fk_ext *e = &f->free_ext[0];
		int64_t part = e->len < left ? e->len : left;

		b->piece[b->n].start = fk_take(f, part);
		b->piece[b->n].len = part;
		b->n++;
		left -= part;
	}
	return b;
}

/* A range of the virtual address space, which is far larger than the
 * memory (FK_VA_FACTOR times), so that it runs out only in a program
 * that leaks addresses. */
static bool
fk_va(fk_dev *f, int64_t size, uint64_t *va)
{
	uint64_t limit = FK_VA_BASE + FK_VA_FACTOR * (uint64_t)f->spec.total;

	if (f->next_va + (uint64_t)size > limit)
		return false;
	*va = f->next_va;
	f->next_va += (uint64_t)size;
	return true;
}

/*
 * cudaMalloc: len bytes of pages, wherever they are free; with the
 * `contiguous` setting (the model of earlier releases, kept as the
 * control that shows why it was wrong) one range that holds it whole.
 */
static dv_status
fk_alloc(void *st, int64_t bytes, void **h, od_error *err)
{
	fk_dev *f = st;
	int64_t len = fk_round(bytes, f->spec.page), at;
	fk_buf *b;
	uint64_t va;

	if (fk_injected(f, err))
		return DV_ERROR;
	if (f->spec.contiguous) {
		at = fk_take(f, len);
		if (at < 0) {
			od_error_set(err, NULL, 0, 0, "out of memory");
			return DV_OOM;
		}
		b = malloc(sizeof *b + sizeof b->piece[0]);
		if (b == NULL) {
			fk_give(f, at, len);
			od_error_set(err, NULL, 0, 0, "out of host memory");
			return DV_ERROR;
		}
		b->n = 1;
		b->piece[0].start = at;
		b->piece[0].len = len;
		b->address = (uint64_t)at;
	} else {
		if (fk_free_bytes(f) < len || !fk_va(f, len, &va)) {
			od_error_set(err, NULL, 0, 0, "out of memory");
			return DV_OOM;
		}
		b = fk_take_pages(f, len);
		if (b == NULL) {
			od_error_set(err, NULL, 0, 0, "out of host memory");
			return DV_ERROR;
		}
		b->address = va;
	}
	b->vmm = false;
	b->bytes = bytes;
	fk_note(f, true, len, "oomdoc");
	*h = b;
	return DV_OK;
}

static void
fk_release(void *st, void *h)
{
	fk_dev *f = st;
	fk_buf *b = h;
	int64_t len = 0;
	int i;

	/* One release of the whole range, whatever pages backed it. */
	for (i = 0; i < b->n; i++) {
		fk_give(f, b->piece[i].start, b->piece[i].len);
		len += b->piece[i].len;
	}
	fk_note(f, false, len, "oomdoc");
	free(b);
}

/* cuMemCreate of each chunk and cuMemMap into one reserved range. */
static dv_status
fk_vmm_map(void *st, int64_t bytes, int64_t chunk, void **h, int *nchunks,
    od_error *err)
{
	fk_dev *f = st;
	int64_t gran = f->spec.granularity > 0 ? f->spec.granularity : 1;
	int64_t size, n, free_b;
	uint64_t va;
	fk_buf *b;

	if (!f->spec.vmm) {
		od_error_set(err, NULL, 0, 0, "no virtual memory management");
		return DV_UNSUPPORTED;
	}
	if (fk_injected(f, err))
		return DV_ERROR;
	chunk = fk_round(chunk > gran ? chunk : gran, gran);
	size = fk_round(bytes, gran);
	n = (size + chunk - 1) / chunk;
	if (n > DV_ALLOCS_MAX) {
		od_error_set(err, NULL, 0, 0, "%lld chunks are too many",
		    (long long)n);
		return DV_ERROR;
	}
	free_b = fk_free_bytes(f);
	if (free_b < size || !fk_va(f, size, &va)) {
		od_error_set(err, NULL, 0, 0, "out of memory mapping chunk "
		    "%lld of %lld", (long long)(free_b / chunk + 1),
		    (long long)n);
		return DV_OOM;
	}
	b = fk_take_pages(f, size);
	if (b == NULL) {
		od_error_set(err, NULL, 0, 0, "out of host memory");
		return DV_ERROR;
	}
	b->vmm = true;
	b->bytes = bytes;
	b->address = va;
	fk_note(f, true, size, "oomdoc");
	*nchunks = (int)n;
	*h = b;
	return DV_OK;
}

/* The time a kernel would take at the fake's bandwidth. */
static double
fk_seconds(const fk_dev *f, double bytes_moved)
{
	dv_info info;
	double peak;

	memset(&info, 0, sizeof info);
	info.mem_clock_khz = f->spec.mem_clock_khz;
	info.bus_width_bits = f->spec.bus_width_bits;
	peak = dv_peak_bandwidth(&info);
	if (peak <= 0 || f->spec.bandwidth <= 0)
		return 0;
	return bytes_moved / (peak * f->spec.bandwidth);
}

static dv_status
fk_hung(double time_limit, od_error *err)
{
	od_error_set(err, NULL, 0, 0, "the kernel did not finish within the "
	    "time limit of %g s (fake device)", time_limit);
	return DV_TIMEOUT;
}

/*
 * A hung kernel: it never finishes, and neither does the call that waits
 * for it (cudaStreamSynchronize waits for ever).  Only the process's end
 * (the watchdog's _exit, or a second signal) gets out of it.
 */
static void __attribute__((noreturn))
fk_hang(void)
{
	struct timespec step = { 1, 0 };

	for (;;)
		nanosleep(&step, NULL);
}

/*
 * Waits delay_ms for real (a slow kernel), in steps, so that a signal
 * stops it between them as it would stop the CUDA backend between
 * launches.  DV_STOPPED when one did; DV_TIMEOUT, as the CUDA backend's
 * watchdog gives, when the delay runs past the time limit.
 */
static dv_status
fk_delay(const fk_dev *f, double time_limit, od_error *err)
{
	struct timespec step = { 0, 10 * 1000 * 1000 };
	int64_t ms;

	for (ms = 0; ms < f->spec.delay_ms; ms += 10) {
		if (dv_stopped())
			return DV_STOPPED;
		if ((double)ms >= time_limit * 1000.0)
			return fk_hung(time_limit, err);
		nanosleep(&step, NULL);
	}
	return dv_stopped() ? DV_STOPPED : DV_OK;
}

static dv_status
fk_fill(void *st, void *h, int64_t bytes, double time_limit, od_error *err)
{
	fk_dev *f = st;

	(void)h;
	(void)bytes;
	if (f->spec.hang)
		fk_hang();
	return fk_delay(f, time_limit, err);
}

/*
 * The fake's memory under test: only the words an injected fault touches
 * are kept (at most three: the stuck word, the coupling's aggressor and
 * victim), since every other word reads back what was written.  Each
 * kernel runs as one thread that walks the buffer in address order (or
 * the reverse, for the descending step of moving inversions), so the
 * order of the writes and reads of those words is the order a sweep of
 * the whole buffer would give them; the fault model is applied on each
 * write (a stuck bit keeps its value; a bit of the aggressor going from
 * 0 to 1 inverts that bit of the victim) and each read (a stuck bit
 * reads as stuck).
 */
typedef struct {
	int64_t off;            /* byte offset in the buffer */
	uint64_t value;
} fk_word;

typedef struct {
	const fk_dev *f;
	uint64_t base;          /* the buffer's address */
	fk_word w[3];
	int n;                  /* kept in increasing offset order */
	int64_t errors;
	dv_pattern *out;
} fk_mem;

static uint64_t
fk_stuck(const fk_mem *m, int64_t off, uint64_t v)
{
	const dv_fake_spec *s = &m->f->spec;
	uint64_t bit = 1ULL << s->stuck_bit;

	if (off != s->stuck_offset)
		return v;
	return s->stuck_value ? v | bit : v & ~bit;
}

static void
fk_write(fk_mem *m, int k, uint64_t v)
{
	const dv_fake_spec *s = &m->f->spec;
	uint64_t bit = 1ULL << s->couple_bit, old = m->w[k].value;
	int j;

	m->w[k].value = fk_stuck(m, m->w[k].off, v);
	if (m->w[k].off != s->couple_from || (old & bit) != 0 ||
	    (m->w[k].value & bit) == 0)
		return;
	for (j = 0; j < m->n; j++)
		if (m->w[j].off == s->couple_to)
			m->w[j].value = fk_stuck(m, s->couple_to,
			    m->w[j].value ^ bit);
}

static void
fk_check(fk_mem *m, int k, uint64_t expect)
{
	dv_pattern *out = m->out;

	if (fk_stuck(m, m->w[k].off, m->w[k].value) == expect)
		return;
	m->errors++;
	if (out->nbad < DV_BAD_MAX)
		out->bad[out->nbad++] = m->base + (uint64_t)m->w[k].off;
}

/* Keeps the word at off, when the buffer has it. */
static void
fk_keep(fk_mem *m, int64_t off, int64_t bytes)
{
	int i, j;

	if (off < 0 || off > bytes - 8 || off % 8 != 0)
		return;
	for (i = 0; i < m->n; i++)
		if (m->w[i].off == off)
			return;
	for (i = 0; i < m->n && m->w[i].off < off; i++)
		;
	for (j = m->n; j > i; j--)
		m->w[j] = m->w[j - 1];
	m->w[i].off = off;
	m->w[i].value = 0x0123456789abcdefULL;  /* what was there before */
	m->n++;
}

/* One pass of kind over the kept words, as pattern.cu runs it. */
static void
fk_pass(fk_mem *m, int kind, int i, uint64_t seed)
{
	int pattern = kind == DV_PT_RANDOM ? KN_RANDOM : i, k, step;
	uint64_t v = kn_mi_value(i);

	if (kind != DV_PT_MOVING) {
		for (k = 0; k < m->n; k++)
			fk_write(m, k, kn_value(pattern, m->base +
			    (uint64_t)m->w[k].off, seed));
		for (k = 0; k < m->n; k++)
			fk_check(m, k, kn_value(pattern, m->base +
			    (uint64_t)m->w[k].off, seed));
		return;
	}
	for (step = 0; step < 4; step++) {
		for (k = 0; k < m->n; k++) {
			int at = step == 2 ? m->n - 1 - k : k;

			if (step > 0)
				fk_check(m, at, step == 2 ? ~v : v);
			fk_write(m, at, step == 1 ? ~v : v);
		}
	}
}

static dv_status
fk_pattern(void *st, void *h, int64_t bytes, double time_limit,
    dv_pattern *out, od_error *err)
{
	static const int passes[DV_PT_KINDS] = {
		[DV_PT_STATIC] = DV_PT_PASSES_STATIC,
		[DV_PT_MOVING] = DV_PT_PASSES_MOVING,
		[DV_PT_RANDOM] = DV_PT_PASSES_RANDOM,
	};
	fk_dev *f = st;
	fk_buf *b = h;
	/* Every pass reads and writes the buffer once; moving inversions
	 * four times. */
	double per_pass = fk_seconds(f, 2.0 * (double)bytes);
	fk_mem m;
	int64_t i, injected = f->spec.pattern_errors;
	int kind, p;

	out->bytes = bytes;
	if (f->spec.hang)
		fk_hang();
	memset(&m, 0, sizeof m);
	m.f = f;
	m.base = b->address;
	m.out = out;
	fk_keep(&m, f->spec.stuck_offset, bytes);
	fk_keep(&m, f->spec.couple_from, bytes);
	fk_keep(&m, f->spec.couple_to, bytes);
	/* Injected errors show on the first pass, spread over the buffer. */
	for (i = 0; i < injected && out->nbad < DV_BAD_MAX; i++)
		out->bad[out->nbad++] = b->address + (uint64_t)((bytes /
		    dv_sat_add(injected, 1)) * (i + 1) / 8 * 8);
	for (kind = 0; kind < DV_PT_KINDS; kind++) {
		int64_t before = m.errors;

		for (p = 0; p < passes[kind]; p++) {
			double t = kind == DV_PT_MOVING ? 2 * per_pass :
			    per_pass;
			dv_status ds = fk_delay(f, time_limit, err);

			if (ds != DV_OK) {
				out->cut = true;
				return ds;
			}
			if (out->passes > 0 && out->seconds + t > time_limit) {
				out->cut = true;
				break;
			}
			/* An uncorrectable ECC error ends the first kernel
			 * that reads the bad memory, and the context. */
			if (f->spec.ecc_fault) {
				out->ecc_fault = true;
				od_error_set(err, NULL, 0, 0, "a kernel failed: "
				    "uncorrectable ECC error encountered "
				    "(CUDA_ERROR_ECC_UNCORRECTABLE, fake "
				    "device)");
				return DV_ERROR;
			}
			fk_pass(&m, kind, p, out->seed);
			out->seconds += t;
			out->passes++;
			out->kind_passes[kind]++;
		}
		out->kind_errors[kind] = m.errors - before;
		if (kind == DV_PT_STATIC && out->kind_passes[kind] > 0)
			out->kind_errors[kind] += injected;
		if (out->cut)
			break;
	}
	out->errors = dv_sat_add(injected, m.errors);
	/* The counters the test itself raises (injected rises). */
	if (out->passes > 0) {
		f->ecc_unc += f->spec.ecc_uncorrected_rise;
		f->ecc_corr += f->spec.ecc_corrected_rise;
		f->remap_unc += f->spec.remapped_rise;
		f->remap_corr += f->spec.remapped_correctable_rise;
		f->pending = f->pending || f->spec.remap_pending_rise;
	}
	return DV_OK;
}

static dv_status
fk_bandwidth(void *st, void *a, void *b, void *c, int64_t bytes,
    double time_limit, dv_bandwidth *out, od_error *err)
{
	fk_dev *f = st;
	dv_info info;
	double peak, best = 0;
	int k;

	(void)a;
	(void)b;
	(void)c;
	out->array_bytes = bytes;
	if (f->spec.hang)
		fk_hang();
	memset(&info, 0, sizeof info);
	info.mem_clock_khz = f->spec.mem_clock_khz;
	info.bus_width_bits = f->spec.bus_width_bits;
	peak = dv_peak_bandwidth(&info);
	/*
	 * The launch search, on a model of bytes in flight: a configuration
	 * reaches the fake's fraction of the peak once it has 1024 threads
	 * per SM, and proportionally less below (Little's law); the first of
	 * the fastest is kept, as the CUDA backend keeps it.
	 */
	for (k = 0; k < DV_BW_CONFIGS; k++) {
		int bps, tpb;
		double eff;

		dv_bw_config(k, &bps, &tpb);
		eff = bps * tpb >= 1024 ? 1.0 : (double)(bps * tpb) / 1024.0;
		out->configs++;
		if (eff > best) {
			best = eff;
			out->blocks_per_sm = bps;
			out->threads = tpb;
		}
	}
	out->trials = 5;
	out->copy_bps = peak > 0 ? peak * f->spec.bandwidth * best : -1;
	/* Triad moves a third more bytes per element and streams a little
	 * better, as measured on H100 and H200 (BabelStream). */
	out->triad_bps = peak > 0 ? peak * f->spec.bandwidth * best * 1.02 :
	    -1;
	if (out->triad_bps > peak)
		out->triad_bps = peak;
	/* Five trials of copy (2 x bytes moved) and triad (3 x bytes). */
	out->seconds = fk_seconds(f, 25.0 * (double)bytes);
	return fk_delay(f, time_limit, err);
}

static dv_status
fk_health(void *st, dv_health *out)
{
	fk_dev *f = st;

	if (!f->spec.nvml) {
		snprintf(out->note, sizeof out->note, "NVML not available: no "
		    "ECC, remapped-row or retired-page counters");
		return DV_UNSUPPORTED;
	}
	/* As NVML gives them (nvml_load.c): a counter the part does not
	 * have is unknown, with why, never 0. */
	out->ecc_known = f->spec.ecc_enabled == 1;
	out->ecc_uncorrected = out->ecc_known ? f->ecc_unc : OD_UNKNOWN;
	out->ecc_corrected = out->ecc_known ? f->ecc_corr : OD_UNKNOWN;
	out->ecc_uncorrected_total = out->ecc_known ? f->ecc_unc : OD_UNKNOWN;
	if (!out->ecc_known)
		snprintf(out->ecc_why, sizeof out->ecc_why, "not supported");
	out->remap_known = f->spec.remap_rows;
	out->remapped_uncorrectable = out->remap_known ? f->remap_unc :
	    OD_UNKNOWN;
	out->remapped_correctable = out->remap_known ? f->remap_corr :
	    OD_UNKNOWN;
	out->remap_pending = out->remap_known && f->pending;
	out->remap_failure = out->remap_known && f->spec.remap_failure;
	if (!out->remap_known)
		snprintf(out->remap_why, sizeof out->remap_why,
		    "not supported");
	/* Ampere and later remap rows instead of retiring pages. */
	out->retired_known = false;
	out->on_parent = f->parent[0] != '\0';
	if (!out->ecc_known || !out->remap_known)
		snprintf(out->note, sizeof out->note, "%s%s%s",
		    !out->ecc_known ? "ECC counters not supported (ECC is off "
		    "on this device)" : "", !out->ecc_known &&
		    !out->remap_known ? "; " : "", !out->remap_known ?
		    "remapped-row counters not supported" : "");
	else if (out->on_parent)
		snprintf(out->note, sizeof out->note, "counters read on the "
		    "parent GPU %.96s (a MIG instance has none of its own)",
		    f->parent);
	return DV_OK;
}

/*
 * The driver's answer to a kernel image: the first refuse_images images
 * are refused as a driver older than the toolkit refuses its cubins and
 * PTX (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), so that the fallback from the
 * fatbin to the PTX image, and the failure when both are refused, run
 * here as they would on a GPU.
 */
static dv_status
fk_load_image(void *st, int image, char *detail, char *why, size_t cap,
    od_error *err)
{
	fk_dev *f = st;

	(void)err;
	if (image < f->spec.refuse_images) {
		snprintf(why, cap, "unsupported toolchain "
		    "(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, fake device)");
		return DV_UNSUPPORTED;
	}
	snprintf(detail, 160, "%s of the fake device", image ==
	    DV_IMAGE_FATBIN ? "fatbin" : "PTX");
	return DV_OK;
}

static void
fk_activity(void *st, dv_activity *out)
{
	fk_dev *f = st;

	*out = f->act;
	out->available = f->spec.cupti;
	memset(&f->act, 0, sizeof f->act);
}

static void
fk_close(void *st)
{
	free(st);
}

/* After a timeout: the record of an allocation goes, its pages stay
 * taken, as a real GPU's would. */
static void
fk_forget(void *st, void *h)
{
	(void)st;
	free(h);
}

const dv_backend dv_fake_backend = {
	.name = "fake", .open = fk_open, .processes = fk_processes,
	.start = fk_start, .mem_info = fk_mem_info, .alloc = fk_alloc,
	.release = fk_release, .vmm_map = fk_vmm_map,
	.vmm_release = fk_release, .fill = fk_fill, .pattern = fk_pattern,
	.bandwidth = fk_bandwidth, .health = fk_health,
	.activity = fk_activity, .close = fk_close, .forget = fk_forget,
	.abandon = fk_close, .load_image = fk_load_image,
};

/* The defaults: an 80 GiB H100-like device with nothing else on it. */
void
dv_fake_default(dv_fake_spec *s)
{
	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "fake GPU");
	s->total = 80LL << 30;
	s->context = 500LL << 20;
	s->page = 2LL << 20;
	s->granularity = 2LL << 20;
	s->vmm = s->nvml = s->cupti = s->proc_list = true;
	s->ecc_enabled = 1;
	s->remap_rows = true;
	/* H100 SXM: 2619 MHz and 5120 bits, 3.35 TB/s. */
	s->mem_clock_khz = 2619000;
	s->bus_width_bits = 5120;
	s->bandwidth = 0.88;
	s->stuck_offset = s->couple_from = s->couple_to = -1;
}

static bool
fk_bool(const char *v, bool *out)
{
	if (strcmp(v, "yes") == 0 || strcmp(v, "true") == 0 ||
	    strcmp(v, "1") == 0)
		*out = true;
	else if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0 ||
	    strcmp(v, "0") == 0)
		*out = false;
	else
		return false;
	return true;
}

static bool
fk_int(const char *v, int64_t *out)
{
	char *end;
	long long n;

	n = strtoll(v, &end, 10);
	if (end == v || *end != '\0' || n < 0)
		return false;
	*out = n;
	return true;
}

static bool
fk_size(const char *v, int64_t *out)
{
	return od_size_parse_text(v, strlen(v), out) && *out >= 0;
}

/* One key=value setting. */
static bool
fk_set(dv_fake_spec *s, const char *key, const char *v, od_error *err)
{
	int64_t n = 0;
	bool b = false, ok = true;

	if (strcmp(key, "name") == 0) {
		snprintf(s->name, sizeof s->name, "%s", v);
	} else if (strcmp(key, "cuda_uuid") == 0) {
		ok = strlen(v) < sizeof s->cuda_uuid;
		if (ok)
			snprintf(s->cuda_uuid, sizeof s->cuda_uuid, "%s", v);
	} else if (strcmp(key, "total") == 0) {
		ok = fk_size(v, &s->total) && s->total > 0;
	} else if (strcmp(key, "reserved") == 0) {
		ok = fk_size(v, &s->reserved);
	} else if (strcmp(key, "context") == 0) {
		ok = fk_size(v, &s->context);
	} else if (strcmp(key, "page") == 0) {
		ok = fk_size(v, &s->page) && s->page > 0;
	} else if (strcmp(key, "granularity") == 0) {
		ok = fk_size(v, &s->granularity) && s->granularity > 0;
	} else if (strcmp(key, "proc") == 0) {
		const char *colon = strchr(v, ':');
		char pid[24];

		if (colon == NULL || (size_t)(colon - v) >= sizeof pid ||
		    s->nprocs == DV_PROCS_MAX) {
			ok = false;
		} else {
			memcpy(pid, v, (size_t)(colon - v));
			pid[colon - v] = '\0';
			ok = fk_int(pid, &s->procs[s->nprocs].pid) &&
			    fk_size(colon + 1, &s->procs[s->nprocs].bytes);
			if (ok)
				s->procs[s->nprocs++].self = false;
		}
	} else if (strcmp(key, "procs") == 0 && strcmp(v, "none") == 0) {
		s->nprocs = 0;
	} else if (strcmp(key, "vmm") == 0) {
		ok = fk_bool(v, &s->vmm);
	} else if (strcmp(key, "nvml") == 0) {
		ok = fk_bool(v, &s->nvml);
	} else if (strcmp(key, "cupti") == 0) {
		ok = fk_bool(v, &s->cupti);
	} else if (strcmp(key, "ecc") == 0) {
		ok = fk_bool(v, &b);
		s->ecc_enabled = b;
	} else if (strcmp(key, "mem_clock_khz") == 0) {
		ok = fk_int(v, &s->mem_clock_khz);
	} else if (strcmp(key, "bus_width") == 0) {
		ok = fk_int(v, &n) && n <= 65536;
		s->bus_width_bits = (int)n;
	} else if (strcmp(key, "bandwidth") == 0) {
		char *end;

		s->bandwidth = strtod(v, &end);
		ok = end != v && *end == '\0' && s->bandwidth >= 0 &&
		    s->bandwidth <= 1;
	} else if (strcmp(key, "pattern_errors") == 0) {
		ok = fk_int(v, &s->pattern_errors);
	} else if (strcmp(key, "ecc_uncorrected") == 0) {
		ok = fk_int(v, &s->ecc_uncorrected);
	} else if (strcmp(key, "ecc_corrected") == 0) {
		ok = fk_int(v, &s->ecc_corrected);
	} else if (strcmp(key, "remapped") == 0) {
		ok = fk_int(v, &s->remapped_uncorrectable);
	} else if (strcmp(key, "remap_pending") == 0) {
		ok = fk_bool(v, &s->remap_pending);
	} else if (strcmp(key, "remap_failure") == 0) {
		ok = fk_bool(v, &s->remap_failure);
	} else if (strcmp(key, "remap_rows") == 0) {
		ok = fk_bool(v, &s->remap_rows);
	} else if (strcmp(key, "ecc_uncorrected_rise") == 0) {
		ok = fk_int(v, &s->ecc_uncorrected_rise);
	} else if (strcmp(key, "ecc_corrected_rise") == 0) {
		ok = fk_int(v, &s->ecc_corrected_rise);
	} else if (strcmp(key, "remapped_rise") == 0) {
		ok = fk_int(v, &s->remapped_rise);
	} else if (strcmp(key, "remapped_correctable_rise") == 0) {
		ok = fk_int(v, &s->remapped_correctable_rise);
	} else if (strcmp(key, "remap_pending_rise") == 0) {
		ok = fk_bool(v, &s->remap_pending_rise);
	} else if (strcmp(key, "fail_alloc") == 0) {
		ok = fk_int(v, &n) && n < 1000000;
		s->fail_alloc = (int)n;
	} else if (strcmp(key, "delay_ms") == 0) {
		ok = fk_int(v, &s->delay_ms) && s->delay_ms <= 600000;
	} else if (strcmp(key, "hang") == 0) {
		ok = fk_bool(v, &s->hang);
	} else if (strcmp(key, "tenant") == 0) {
		/* PID:SIZE@N: process PID, holding SIZE, comes during our Nth
		 * allocation. */
		char buf[96], *colon, *at;

		snprintf(buf, sizeof buf, "%s", v);
		colon = strchr(buf, ':');
		at = strchr(buf, '@');
		ok = colon != NULL && at != NULL && colon < at;
		if (ok) {
			*colon = *at = '\0';
			ok = fk_int(buf, &s->tenant.pid) &&
			    fk_size(colon + 1, &s->tenant.bytes) &&
			    fk_int(at + 1, &n) && n > 0 && n < 1000000;
			s->tenant_after = (int)n;
			s->tenant.self = false;
		}
	} else if (strcmp(key, "hidden") == 0) {
		ok = fk_size(v, &s->hidden);
	} else if (strcmp(key, "proc_list") == 0) {
		ok = fk_bool(v, &s->proc_list);
	} else if (strcmp(key, "gpus") == 0) {
		ok = fk_int(v, &n) && n >= 1 && n <= 64;
		s->gpus = (int)n;
	} else if (strcmp(key, "mig") == 0) {
		/* yes (one instance), no, or how many (up to 7). */
		if (fk_bool(v, &b))
			n = b;
		else
			ok = fk_int(v, &n) && n <= 7;
		s->mig = (int)n;
	} else if (strcmp(key, "contiguous") == 0) {
		ok = fk_bool(v, &s->contiguous);
	} else if (strcmp(key, "stuck_bit") == 0) {
		/* OFFSET:BIT:VALUE: bit BIT of the word at byte OFFSET of
		 * the tested buffer is stuck at VALUE. */
		long long off;
		int bit, val, used = 0;

		ok = sscanf(v, "%lld:%d:%d%n", &off, &bit, &val, &used) == 3 &&
		    v[used] == '\0' && off >= 0 && off % 8 == 0 && bit >= 0 &&
		    bit < 64 && (val == 0 || val == 1);
		if (ok) {
			s->stuck_offset = off;
			s->stuck_bit = bit;
			s->stuck_value = val;
		}
	} else if (strcmp(key, "coupling") == 0) {
		/* FROM:TO:BIT: a 0-to-1 transition of bit BIT of the word at
		 * byte FROM inverts bit BIT of the word at byte TO, above. */
		long long from, to;
		int bit, used = 0;

		ok = sscanf(v, "%lld:%lld:%d%n", &from, &to, &bit, &used) ==
		    3 && v[used] == '\0' && from >= 0 && to > from &&
		    from % 8 == 0 && to % 8 == 0 && bit >= 0 && bit < 64;
		if (ok) {
			s->couple_from = from;
			s->couple_to = to;
			s->couple_bit = bit;
		}
	} else if (strcmp(key, "ecc_fault") == 0) {
		ok = fk_bool(v, &s->ecc_fault);
	} else if (strcmp(key, "refuse_images") == 0) {
		ok = fk_int(v, &n) && n <= DV_IMAGES;
		s->refuse_images = (int)n;
	} else if (strcmp(key, "no_gpu") == 0) {
		ok = fk_bool(v, &s->no_gpu);
	} else {
		od_error_set(err, NULL, 0, 0, "unknown fake-device setting "
		    "'%s'", key);
		return false;
	}
	if (!ok)
		od_error_set(err, NULL, 0, 0, "bad value '%s' for the "
		    "fake-device setting '%s'", v, key);
	return ok;
}

bool
dv_fake_parse(dv_fake_spec *s, const char *text, od_error *err)
{
	char buf[1024], *save = NULL, *item;

	if (strlen(text) >= sizeof buf) {
		od_error_set(err, NULL, 0, 0, "the fake-device settings are "
		    "longer than %zu bytes", sizeof buf - 1);
		return false;
	}
	snprintf(buf, sizeof buf, "%s", text);
	for (item = strtok_r(buf, ",", &save); item != NULL;
	    item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (eq == NULL) {
			od_error_set(err, NULL, 0, 0, "the fake-device setting "
			    "'%s' is not KEY=VALUE", item);
			return false;
		}
		*eq = '\0';
		if (!fk_set(s, item, eq + 1, err))
			return false;
	}
	return true;
}

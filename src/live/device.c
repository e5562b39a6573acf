/*
 * device.c: the device wrapper that probes use.  It picks the backend,
 * keeps the cap on the bytes held at once (a request that would pass it is
 * refused before the device sees it), and keeps every allocation in a
 * table, so that dv_close releases whatever a probe left behind, on every
 * exit path: a probe that fails halfway, an error, a signal.
 */
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "device.h"

typedef struct {
	void *h;                /* the backend's handle; NULL: a free slot */
	int64_t bytes;
	bool vmm;
} dv_rec;

struct dv_device {
	const dv_backend *be;
	void *st;
	dv_info info;
	double time_limit;
	int64_t cap;            /* < 0: none */
	int64_t held, peak;
	dv_rec recs[DV_ALLOCS_MAX];
	int nrecs;              /* slots used, free ones included */
	bool timed_out;         /* a call ran past the time limit */
	/* The tenant guard (dv_guard). */
	bool guarded;
	int64_t tolerance;
	int64_t free_base;      /* free at dv_guard */
	int64_t pages, pages_base;  /* what we hold in 2 MiB pages */
	int64_t pids[DV_PROCS_MAX];
	int npids;
	bool pids_known;
	dv_status tenant_st;    /* DV_TENANT once one was seen */
	od_error tenant_err;
};

#define DV_PAGE (2LL << 20)

/* When the device call in progress began (CLOCK_MONOTONIC, ns), 0 when
 * none is: the watchdog thread reads it. */
static atomic_llong dv_busy_ns;

static int64_t
dv_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

double
dv_seconds(void)
{
	return (double)dv_now_ns() / 1e9;
}

#define DV_BUSY(call) (atomic_store(&dv_busy_ns, dv_now_ns()), (call))
#define DV_IDLE() atomic_store(&dv_busy_ns, 0)

double
dv_busy_seconds(void)
{
	long long t = atomic_load(&dv_busy_ns);

	return t == 0 ? -1 : (double)(dv_now_ns() - t) / 1e9;
}

bool
dv_timed_out(const dv_device *d)
{
	return d->timed_out;
}

static volatile sig_atomic_t dv_stop_sig;

void
dv_request_stop(int sig)
{
	dv_stop_sig = sig;
}

void
dv_clear_stop(void)
{
	dv_stop_sig = 0;
}

bool
dv_stopped(void)
{
	return dv_stop_sig != 0;
}

int
dv_stop_signal(void)
{
	return (int)dv_stop_sig;
}

const char *
dv_status_name(dv_status st)
{
	switch (st) {
	case DV_OK: return "ok";
	case DV_OOM: return "out of memory";
	case DV_CAP: return "over the cap";
	case DV_UNSUPPORTED: return "not supported";
	case DV_TIMEOUT: return "time limit";
	case DV_STOPPED: return "stopped";
	case DV_NO_DRIVER: return "no driver";
	case DV_TENANT: return "another process appeared";
	case DV_DRIVER_OLD: return "driver too old";
	case DV_ERROR: break;
	}
	return "error";
}

dv_device *
dv_open(const char *backend, const dv_config *cfg, dv_status *st,
    od_error *err)
{
	const dv_backend *be = NULL;
	dv_device *d;

	if (strcmp(backend, "fake") == 0)
		be = &dv_fake_backend;
#ifdef OOMDOC_HAVE_CUDA
	else if (strcmp(backend, "cuda") == 0)
		be = &dv_cuda_backend;
#else
	else if (strcmp(backend, "cuda") == 0) {
		od_error_set(err, NULL, 0, 0, "this oomdoc was built without "
		    "CUDA: live mode can only use --backend fake");
		*st = DV_UNSUPPORTED;
		return NULL;
	}
#endif
	if (be == NULL) {
		od_error_set(err, NULL, 0, 0, "unknown backend '%s'", backend);
		*st = DV_ERROR;
		return NULL;
	}
	d = calloc(1, sizeof *d);
	if (d == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		*st = DV_ERROR;
		return NULL;
	}
	d->be = be;
	d->cap = -1;
	d->time_limit = cfg->time_limit;
	d->info.index = cfg->index;
	d->info.mem_clock_khz = -1;
	d->info.bus_width_bits = -1;
	d->info.ecc_enabled = -1;
	d->info.driver_cuda = d->info.runtime_cuda = -1;
	snprintf(d->info.backend, sizeof d->info.backend, "%s", be->name);
	d->info.count = -1;
	d->info.kernel_image = -1;
	*st = be->open(cfg, &d->st, &d->info, err);
	if (*st != DV_OK) {
		free(d);
		return NULL;
	}
	/* Fail closed: a backend that ignored the id opened some device. */
	if (cfg->id != NULL && cfg->id[0] != '\0' &&
	    !dv_id_matches(&d->info, cfg->id)) {
		od_error_set(err, NULL, 0, 0, "the %s backend did not open "
		    "the device %.80s", be->name, cfg->id);
		be->close(d->st);
		free(d);
		*st = DV_UNSUPPORTED;
		return NULL;
	}
	return d;
}

void
dv_close(dv_device *d)
{
	if (d == NULL)
		return;
	/* After a timeout nothing is released: a kernel may still use the
	 * memory, and the process's end releases the context. */
	if (d->timed_out) {
		if (d->be->abandon != NULL)
			d->be->abandon(d->st);
		free(d);
		return;
	}
	dv_free_from(d, 0);
	d->be->close(d->st);
	free(d);
}

const dv_info *
dv_info_of(const dv_device *d)
{
	return &d->info;
}

int
dv_processes(dv_device *d, dv_proc *v, int cap, bool *known)
{
	return d->be->processes(d->st, v, cap, known);
}

void
dv_bw_config(int k, int *blocks_per_sm, int *threads)
{
	static const int bps[] = { 1, 2, 4, 8 };
	static const int tpb[] = { 128, 256, 512, 1024 };

	k = k < 0 ? 0 : k % DV_BW_CONFIGS;
	*blocks_per_sm = bps[k / 4];
	*threads = tpb[k % 4];
}

static const char *const dv_image_names[DV_IMAGES] = {
	[DV_IMAGE_FATBIN] = "fatbin",
	[DV_IMAGE_PTX] = "ptx",
};

const char *
dv_image_name(int image)
{
	return image >= 0 && image < DV_IMAGES ? dv_image_names[image] : NULL;
}

/*
 * Offers the kernel images to the driver in turn, the fatbin first (SASS
 * runs at once; PTX is JIT-compiled, which takes time and needs the
 * driver's compiler), and keeps the first it takes.  Every refusal is
 * kept in kernel_refused, so the report says why the fallback was used;
 * when the driver refuses them all the device is as good as one with a
 * driver too old (DV_DRIVER_OLD), and the error lists each refusal.
 */
static dv_status
dv_load_kernels(dv_device *d, od_error *err)
{
	/* One image only, to check it on a GPU (tests/gpu/run.sh). */
	const char *only = getenv("OOMDOC_KERNEL_IMAGE");
	char *refused = d->info.kernel_refused;
	size_t cap = sizeof d->info.kernel_refused, used = 0;
	char why[256];
	dv_status st;
	int im, first = 0, last = DV_IMAGES - 1;

	if (only != NULL && only[0] != '\0') {
		for (first = 0; first < DV_IMAGES; first++)
			if (strcmp(only, dv_image_names[first]) == 0)
				break;
		if (first == DV_IMAGES) {
			od_error_set(err, NULL, 0, 0, "OOMDOC_KERNEL_IMAGE is "
			    "'%.40s': it takes fatbin or ptx", only);
			return DV_ERROR;
		}
		last = first;
	}
	for (im = first; im <= last; im++) {
		why[0] = '\0';
		st = d->be->load_image(d->st, im, d->info.kernel_detail, why,
		    sizeof why, err);
		if (st == DV_OK) {
			size_t n = strlen(d->info.kernel_detail);

			if (first == last && n < sizeof d->info.kernel_detail)
				snprintf(d->info.kernel_detail + n,
				    sizeof d->info.kernel_detail - n, " (the "
				    "only image offered: OOMDOC_KERNEL_IMAGE)");
			d->info.kernel_image = im;
			return DV_OK;
		}
		if (st != DV_UNSUPPORTED)
			return st;
		if (used < cap - 1)
			used += (size_t)snprintf(refused + used, cap - used,
			    "%s%s refused: %s", used > 0 ? "; " : "",
			    dv_image_names[im], why);
	}
	d->info.kernel_detail[0] = '\0';
	od_error_set(err, NULL, 0, 0, "the driver refused each of oomdoc's "
	    "kernel images, update the driver: %s", refused);
	return DV_DRIVER_OLD;
}

dv_status
dv_start(dv_device *d, int64_t *context_bytes, od_error *err)
{
	dv_status st = DV_BUSY(d->be->start(d->st, context_bytes, err));

	if (st == DV_OK && d->info.kernel_image < 0 &&
	    d->be->load_image != NULL)
		st = DV_BUSY(dv_load_kernels(d, err));
	DV_IDLE();
	return st;
}

dv_status
dv_mem_info(dv_device *d, int64_t *free_b, int64_t *total, od_error *err)
{
	dv_status st = DV_BUSY(d->be->mem_info(d->st, free_b, total, err));

	DV_IDLE();
	return st;
}

void
dv_guard(dv_device *d, int64_t tolerance)
{
	dv_proc v[DV_PROCS_MAX];
	int64_t total = 0;
	od_error err;
	int n, i;

	memset(&err, 0, sizeof err);
	n = dv_processes(d, v, DV_PROCS_MAX, &d->pids_known);
	d->npids = 0;
	for (i = 0; i < n; i++)
		if (!v[i].self)
			d->pids[d->npids++] = v[i].pid;
	d->free_base = -1;
	if (dv_mem_info(d, &d->free_base, &total, &err) != DV_OK)
		d->free_base = -1;
	d->pages_base = d->pages;
	d->tolerance = tolerance;
	d->guarded = true;
}

/* The tenant's error, kept for every later call. */
static dv_status
dv_tenant(dv_device *d, od_error *err)
{
	d->tenant_st = DV_TENANT;
	d->tenant_err = *err;
	return DV_TENANT;
}

dv_status
dv_check(dv_device *d, od_error *err)
{
	dv_proc v[DV_PROCS_MAX];
	int64_t free_b = 0, total = 0, expect;
	bool known = false;
	int n, i, j;

	if (d->tenant_st != DV_OK) {
		*err = d->tenant_err;
		return d->tenant_st;
	}
	if (!d->guarded)
		return DV_OK;
	n = dv_processes(d, v, DV_PROCS_MAX, &known);
	for (i = 0; known && d->pids_known && i < n; i++) {
		if (v[i].self)
			continue;
		for (j = 0; j < d->npids && d->pids[j] != v[i].pid; j++)
			;
		if (j == d->npids) {
			od_error_set(err, NULL, 0, 0, "process %lld appeared on "
			    "GPU %d during the run", (long long)v[i].pid,
			    d->info.index);
			return dv_tenant(d, err);
		}
	}
	if (d->free_base < 0 || dv_mem_info(d, &free_b, &total, err) != DV_OK)
		return DV_OK;
	expect = d->free_base - (d->pages - d->pages_base);
	if (expect - free_b > d->tolerance) {
		char gone[32];

		od_size_format(expect - free_b, gone, sizeof gone);
		od_error_set(err, NULL, 0, 0, "%s of GPU %d's free memory went "
		    "to something other than this run (a process the list does "
		    "not show)", gone, d->info.index);
		return dv_tenant(d, err);
	}
	return DV_OK;
}

void
dv_set_cap(dv_device *d, int64_t cap)
{
	d->cap = cap;
}

int64_t
dv_cap(const dv_device *d)
{
	return d->cap;
}

int64_t
dv_held(const dv_device *d)
{
	return d->held;
}

int64_t
dv_peak(const dv_device *d)
{
	return d->peak;
}

double
dv_time_limit(const dv_device *d)
{
	return d->time_limit;
}

int
dv_count(const dv_device *d)
{
	return d->nrecs;
}

/* Checks a request against the cap and the table; false with *st set. */
static bool
dv_admit(dv_device *d, int64_t bytes, dv_status *st, od_error *err)
{
	if (dv_stopped()) {
		*st = DV_STOPPED;
		od_error_set(err, NULL, 0, 0, "stopped by a signal");
		return false;
	}
	if (bytes <= 0) {
		*st = DV_ERROR;
		od_error_set(err, NULL, 0, 0, "an allocation of %lld bytes",
		    (long long)bytes);
		return false;
	}
	if (d->timed_out) {
		*st = DV_TIMEOUT;
		od_error_set(err, NULL, 0, 0, "the device timed out earlier");
		return false;
	}
	/* Between allocation steps: has anyone else come? */
	if ((*st = dv_check(d, err)) != DV_OK)
		return false;
	if (d->cap >= 0 && (bytes > d->cap || d->held > d->cap - bytes)) {
		*st = DV_CAP;
		od_error_set(err, NULL, 0, 0, "%lld more bytes would pass the "
		    "cap of %lld", (long long)bytes, (long long)d->cap);
		return false;
	}
	if (d->nrecs == DV_ALLOCS_MAX) {
		*st = DV_ERROR;
		od_error_set(err, NULL, 0, 0, "more than %d allocations at once",
		    DV_ALLOCS_MAX);
		return false;
	}
	return true;
}

static int
dv_keep(dv_device *d, void *h, int64_t bytes, bool vmm)
{
	int id = d->nrecs++;

	d->recs[id].h = h;
	d->recs[id].bytes = bytes;
	d->recs[id].vmm = vmm;
	d->held += bytes;
	d->pages = dv_sat_add(d->pages, dv_round_up(bytes, DV_PAGE));
	if (d->held > d->peak)
		d->peak = d->held;
	return id;
}

dv_status
dv_alloc(dv_device *d, int64_t bytes, int *id, od_error *err)
{
	dv_status st;
	void *h = NULL;

	*id = -1;
	if (!dv_admit(d, bytes, &st, err))
		return st;
	st = DV_BUSY(d->be->alloc(d->st, bytes, &h, err));
	DV_IDLE();
	if (st == DV_OK)
		*id = dv_keep(d, h, bytes, false);
	return st;
}

dv_status
dv_vmm_map(dv_device *d, int64_t bytes, int64_t chunk, int *id, int *nchunks,
    od_error *err)
{
	dv_status st;
	void *h = NULL;

	*id = -1;
	*nchunks = 0;
	if (!d->info.vmm) {
		od_error_set(err, NULL, 0, 0, "no virtual memory management "
		    "on this device");
		return DV_UNSUPPORTED;
	}
	if (!dv_admit(d, bytes, &st, err))
		return st;
	st = DV_BUSY(d->be->vmm_map(d->st, bytes, chunk, &h, nchunks, err));
	DV_IDLE();
	if (st == DV_OK)
		*id = dv_keep(d, h, bytes, true);
	return st;
}

/*
 * Whether a request past the cap can only fail: the device says it has
 * less than bytes free.  Then the cap is lifted for that one request.
 */
static bool
dv_bound_to_fail(dv_device *d, int64_t bytes, dv_status *st, od_error *err)
{
	int64_t free_b = 0, total = 0;

	*st = DV_OK;
	if (d->cap < 0 || (bytes <= d->cap && d->held <= d->cap - bytes))
		return false;
	*st = dv_mem_info(d, &free_b, &total, err);
	return *st == DV_OK && free_b < bytes;
}

dv_status
dv_try(dv_device *d, int64_t bytes, od_error *err)
{
	int64_t cap = d->cap;
	dv_status st;
	int id;

	if (dv_bound_to_fail(d, bytes, &st, err))
		d->cap = -1;
	else if (st != DV_OK)
		return st;
	st = dv_alloc(d, bytes, &id, err);
	d->cap = cap;
	if (st == DV_OK)
		dv_free(d, id);
	return st;
}

dv_status
dv_vmm_try(dv_device *d, int64_t bytes, int64_t chunk, int *nchunks,
    od_error *err)
{
	int64_t cap = d->cap;
	dv_status st;
	int id;

	if (dv_bound_to_fail(d, bytes, &st, err))
		d->cap = -1;
	else if (st != DV_OK)
		return st;
	st = dv_vmm_map(d, bytes, chunk, &id, nchunks, err);
	d->cap = cap;
	if (st == DV_OK) {
		st = dv_fill(d, id, err);
		dv_free(d, id);
	}
	return st;
}

void
dv_free(dv_device *d, int id)
{
	dv_rec *r;

	if (id < 0 || id >= d->nrecs || d->recs[id].h == NULL)
		return;
	r = &d->recs[id];
	/* After a timeout the record is dropped and the memory kept. */
	if (d->timed_out) {
		if (d->be->forget != NULL)
			d->be->forget(d->st, r->h);
	} else {
		atomic_store(&dv_busy_ns, dv_now_ns());
		if (r->vmm)
			d->be->vmm_release(d->st, r->h);
		else
			d->be->release(d->st, r->h);
		DV_IDLE();
	}
	d->held -= r->bytes;
	d->pages -= dv_round_up(r->bytes, DV_PAGE);
	r->h = NULL;
	/* Trailing free slots are reused. */
	while (d->nrecs > 0 && d->recs[d->nrecs - 1].h == NULL)
		d->nrecs--;
}

void
dv_free_from(dv_device *d, int n)
{
	int i;

	for (i = d->nrecs - 1; i >= n && i >= 0; i--)
		dv_free(d, i);
}

static void *
dv_handle(dv_device *d, int id, int64_t *bytes)
{
	if (id < 0 || id >= d->nrecs)
		return NULL;
	*bytes = d->recs[id].bytes;
	return d->recs[id].h;
}

/*
 * A backend returns DV_STOPPED when a signal came between two launches;
 * the error then says so, whatever the backend, so that the probe that
 * was running reports the signal and not a bare failure.
 */
static dv_status
dv_kernel_status(dv_device *d, dv_status st, od_error *err)
{
	DV_IDLE();
	if (st == DV_TIMEOUT)
		d->timed_out = true;
	if (st == DV_STOPPED && err->msg[0] == '\0')
		od_error_set(err, NULL, 0, 0, "stopped by a signal");
	return st;
}

dv_status
dv_fill(dv_device *d, int id, od_error *err)
{
	int64_t bytes = 0;
	void *h = dv_handle(d, id, &bytes);

	if (h == NULL) {
		od_error_set(err, NULL, 0, 0, "no allocation %d", id);
		return DV_ERROR;
	}
	return dv_kernel_status(d, DV_BUSY(d->be->fill(d->st, h, bytes,
	    d->time_limit, err)), err);
}

dv_status
dv_pattern_test(dv_device *d, int id, dv_pattern *out, od_error *err)
{
	int64_t bytes = 0;
	void *h = dv_handle(d, id, &bytes);
	uint64_t seed = out->seed;      /* the caller's */

	memset(out, 0, sizeof *out);
	out->seed = seed;
	if (h == NULL) {
		od_error_set(err, NULL, 0, 0, "no allocation %d", id);
		return DV_ERROR;
	}
	return dv_kernel_status(d, DV_BUSY(d->be->pattern(d->st, h, bytes,
	    d->time_limit, out, err)), err);
}

dv_status
dv_bandwidth_test(dv_device *d, int a, int b, int c, dv_bandwidth *out,
    od_error *err)
{
	int64_t na = 0, nb = 0, nc = 0;
	void *ha = dv_handle(d, a, &na), *hb = dv_handle(d, b, &nb);
	void *hc = dv_handle(d, c, &nc);

	memset(out, 0, sizeof *out);
	if (ha == NULL || hb == NULL || hc == NULL || na != nb || nb != nc) {
		od_error_set(err, NULL, 0, 0, "bandwidth needs three equal "
		    "allocations");
		return DV_ERROR;
	}
	return dv_kernel_status(d, DV_BUSY(d->be->bandwidth(d->st, ha, hb,
	    hc, na, d->time_limit, out, err)), err);
}

dv_status
dv_health_read(dv_device *d, dv_health *out)
{
	memset(out, 0, sizeof *out);
	return d->be->health(d->st, out);
}

void
dv_activity_take(dv_device *d, dv_activity *out)
{
	memset(out, 0, sizeof *out);
	d->be->activity(d->st, out);
}

/* The bus:device.function of a PCI bus id, lower case, without the
 * domain ("00000000:18:00.0" and "0000:18:00.0" are "18:00.0"). */
static void
dv_pci_tail(const char *id, char *out, size_t len)
{
	const char *c1 = strchr(id, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	size_t i;

	snprintf(out, len, "%s", c2 != NULL ? c1 + 1 : id);
	for (i = 0; out[i] != '\0'; i++)
		if (out[i] >= 'A' && out[i] <= 'Z')
			out[i] = (char)(out[i] - 'A' + 'a');
}

void
dv_select(const char *id, int index, const char *visible, dv_selection *out)
{
	const char *p = visible;
	size_t n;
	int k;

	memset(out, 0, sizeof *out);
	if (id != NULL && id[0] != '\0') {
		if (strncmp(id, "MIG-", 4) != 0)
			return;
		snprintf(out->uuid, sizeof out->uuid, "%s", id);
		out->mig = true;
		return;
	}
	if (p == NULL || index < 0)
		return;
	for (k = 0; k < index; k++) {
		p = strchr(p, ',');
		if (p == NULL)
			return;
		p++;
	}
	p += strspn(p, " ");
	n = strcspn(p, ", ");
	if (n < 5 || n >= sizeof out->uuid || strncmp(p, "MIG-", 4) != 0)
		return;
	memcpy(out->uuid, p, n);
	out->uuid[n] = '\0';
	out->mig = out->from_env = true;
}

dv_status
dv_check_identity(const char *want, const char *cuda, const char *nvml,
    char *note, size_t cap, od_error *err)
{
	bool mig = want != NULL && want[0] != '\0';

	note[0] = '\0';
	if (mig && cuda[0] != '\0' && strcasecmp(want, cuda) != 0) {
		od_error_set(err, NULL, 0, 0, "with CUDA_VISIBLE_DEVICES=%.96s "
		    "CUDA's device 0 is %.96s (cuDeviceGetUuid_v2), not the MIG "
		    "instance named: refusing to probe another device",
		    want, cuda);
		return DV_UNSUPPORTED;
	}
	if (cuda[0] != '\0' && nvml[0] != '\0' && strcasecmp(cuda, nvml) !=
	    0) {
		od_error_set(err, NULL, 0, 0, "CUDA's device is %.96s "
		    "(cuDeviceGetUuid%s) but NVML's is %.96s: its processes, "
		    "memory and counters would be another device's; refusing "
		    "to probe", cuda, mig ? "_v2" : "", nvml);
		return DV_UNSUPPORTED;
	}
	if (cuda[0] == '\0')
		snprintf(note, cap, "not cross-checked: the driver gives no "
		    "UUID for CUDA's device%s", mig ? " (a MIG instance's "
		    "needs cuDeviceGetUuid_v2, CUDA 11.4)" : "");
	else if (nvml[0] == '\0')
		snprintf(note, cap, "CUDA's device is %.96s (cuDeviceGetUuid%s)%s;"
		    " not cross-checked with NVML, which is not available",
		    cuda, mig ? "_v2" : "", mig ? ", the MIG instance named" :
		    "");
	else
		snprintf(note, cap, "CUDA (cuDeviceGetUuid%s) and NVML agree: "
		    "%.96s%s", mig ? "_v2" : "", cuda, mig ? ", the MIG "
		    "instance named" : "");
	return DV_OK;
}

bool
dv_id_matches(const dv_info *info, const char *id)
{
	char a[40], b[40];

	if (info->uuid[0] != '\0' && strcasecmp(info->uuid, id) == 0)
		return true;
	if (info->pci_bus_id[0] == '\0' || strchr(id, ':') == NULL ||
	    info->parent_uuid[0] != '\0')
		return false;
	dv_pci_tail(info->pci_bus_id, a, sizeof a);
	dv_pci_tail(id, b, sizeof b);
	return strcmp(a, b) == 0;
}

double
dv_peak_bandwidth(const dv_info *info)
{
	if (info->mem_clock_khz <= 0 || info->bus_width_bits <= 0)
		return -1;
	return 2.0 * (double)info->mem_clock_khz * 1000.0 *
	    (double)info->bus_width_bits / 8.0;
}

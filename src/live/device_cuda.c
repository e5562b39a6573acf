/*
 * device_cuda.c: the CUDA backend of live mode.
 *
 * cudart (linked statically) does the allocations, kernels and events;
 * the driver API's virtual memory management (cuMemCreate, cuMemMap:
 * what PyTorch's expandable segments use) is reached through
 * cudaGetDriverEntryPointByVersion, so nothing links against libcuda;
 * NVML (nvml_load.c) and CUPTI (cupti_load.c) are loaded with dlopen.  The
 * same binary thus starts, and diagnoses logs, on machines with no driver
 * and no CUDA libraries; there, opening the device says so in one line.
 *
 * Safety: no managed memory is ever allocated; every kernel covers one
 * slice of its buffer per launch, and the time limit and the stop flag
 * (SIGINT, SIGTERM) are checked between launches.  A kernel already
 * running cannot be stopped; slices are small enough (a few
 * milliseconds) that this does not matter on a healthy device.
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti_load.h"
#include "device.h"
#include "kernels.h"
#include "nvml_load.h"

#define CD_SLICE (1ULL << 30)   /* bytes per kernel launch */
#define CD_DRIVER_API 12000     /* the driver API version we call */

typedef CUresult (*cd_attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*cd_get_fn)(CUdevice *, int);
typedef CUresult (*cd_gran_fn)(size_t *, const CUmemAllocationProp *,
    CUmemAllocationGranularity_flags);
typedef CUresult (*cd_create_fn)(CUmemGenericAllocationHandle *, size_t,
    const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*cd_release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*cd_reserve_fn)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
    unsigned long long);
typedef CUresult (*cd_addrfree_fn)(CUdeviceptr, size_t);
typedef CUresult (*cd_map_fn)(CUdeviceptr, size_t, size_t,
    CUmemGenericAllocationHandle, unsigned long long);
typedef CUresult (*cd_unmap_fn)(CUdeviceptr, size_t);
typedef CUresult (*cd_access_fn)(CUdeviceptr, size_t, const CUmemAccessDesc *,
    size_t);
typedef CUresult (*cd_errstr_fn)(CUresult, const char **);

/* An allocation: a cudaMalloc block, or a mapped range and its chunks. */
typedef struct {
	bool vmm;
	void *ptr;
	size_t size;            /* mapped: the reserved range */
	size_t step;            /* mapped: the size of each chunk */
	int n;
	CUmemGenericAllocationHandle chunk[];
} cd_buf;

typedef struct {
	int index;
	CUdevice cudev;
	int blocks;             /* grid of the grid-stride kernels */
	bool started;
	cudaStream_t stream;
	cudaEvent_t done;
	unsigned long long *scratch;    /* error count and bad addresses */
	nv_lib *nv;
	ct_lib *ct;
	dv_proc before[DV_PROCS_MAX];   /* processes before our context */
	int nbefore;
	bool vmm;
	size_t gran;
	CUmemAllocationProp prop;
	cd_get_fn get;
	cd_attr_fn attr;
	cd_gran_fn granularity;
	cd_create_fn create;
	cd_release_fn release;
	cd_reserve_fn reserve;
	cd_addrfree_fn addr_free;
	cd_map_fn map;
	cd_unmap_fn unmap;
	cd_access_fn access;
	cd_errstr_fn errstr;
} cd_dev;

static double
cd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A cudart error as one line, and its status. */
static dv_status
cd_fail(cudaError_t e, const char *what, od_error *err)
{
	/* Clear the sticky error of the call, where it is not sticky. */
	(void)cudaGetLastError();
	od_error_set(err, NULL, 0, 0, "%s: %s (%s)", what,
	    cudaGetErrorString(e), cudaGetErrorName(e));
	return e == cudaErrorMemoryAllocation ? DV_OOM : DV_ERROR;
}

static dv_status
cd_drv_fail(const cd_dev *c, CUresult r, const char *what, od_error *err)
{
	const char *s = NULL;

	if (c->errstr != NULL)
		c->errstr(r, &s);
	od_error_set(err, NULL, 0, 0, "%s: %s (CUresult %d)", what,
	    s != NULL ? s : "driver error", (int)r);
	return r == CUDA_ERROR_OUT_OF_MEMORY ? DV_OOM : DV_ERROR;
}

/* Finds a driver function; false when the driver lacks it. */
static bool
cd_entry(const char *name, void *fn)
{
	enum cudaDriverEntryPointQueryResult q;
	void *p = NULL;

	if (cudaGetDriverEntryPointByVersion(name, &p, CD_DRIVER_API,
	    cudaEnableDefault, &q) != cudaSuccess ||
	    q != cudaDriverEntryPointSuccess || p == NULL) {
		(void)cudaGetLastError();
		return false;
	}
	memcpy(fn, &p, sizeof p);
	return true;
}

/* The driver's virtual memory management, when it has it. */
static void
cd_vmm_setup(cd_dev *c)
{
	int supported = 0;

	if (!cd_entry("cuDeviceGet", &c->get) ||
	    !cd_entry("cuDeviceGetAttribute", &c->attr) ||
	    !cd_entry("cuMemGetAllocationGranularity", &c->granularity) ||
	    !cd_entry("cuMemCreate", &c->create) ||
	    !cd_entry("cuMemRelease", &c->release) ||
	    !cd_entry("cuMemAddressReserve", &c->reserve) ||
	    !cd_entry("cuMemAddressFree", &c->addr_free) ||
	    !cd_entry("cuMemMap", &c->map) ||
	    !cd_entry("cuMemUnmap", &c->unmap) ||
	    !cd_entry("cuMemSetAccess", &c->access))
		return;
	if (c->get(&c->cudev, c->index) != CUDA_SUCCESS ||
	    c->attr(&supported,
	    CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
	    c->cudev) != CUDA_SUCCESS || !supported)
		return;
	memset(&c->prop, 0, sizeof c->prop);
	c->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	c->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	c->prop.location.id = c->cudev;
	if (c->granularity(&c->gran, &c->prop,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || c->gran == 0)
		return;
	c->vmm = true;
}

static int
cd_attribute(enum cudaDeviceAttr a, int index)
{
	int v = -1;

	if (cudaDeviceGetAttribute(&v, a, index) != cudaSuccess) {
		(void)cudaGetLastError();
		return -1;
	}
	return v;
}

static dv_status
cd_open(const dv_config *cfg, void **stp, dv_info *info, od_error *err)
{
	struct cudaDeviceProp prop;
	int drv = 0, rt = 0, count = 0;
	cudaError_t e;
	cd_dev *c;

	/* No driver at all: cudart would call it "insufficient". */
	if (cudaDriverGetVersion(&drv) != cudaSuccess || drv == 0) {
		od_error_set(err, NULL, 0, 0, "no NVIDIA driver on this machine "
		    "(libcuda.so.1 cannot be loaded): live mode needs a GPU; "
		    "--backend fake shows what it would do");
		return DV_UNSUPPORTED;
	}
	cudaRuntimeGetVersion(&rt);
	e = cudaGetDeviceCount(&count);
	if (e == cudaErrorInsufficientDriver) {
		od_error_set(err, NULL, 0, 0, "the NVIDIA driver supports CUDA "
		    "%d.%d, older than this oomdoc's CUDA %d.%d runtime: update "
		    "the driver", drv / 1000, drv % 1000 / 10, rt / 1000,
		    rt % 1000 / 10);
		return DV_UNSUPPORTED;
	}
	if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
		od_error_set(err, NULL, 0, 0, "no CUDA GPU is visible%s%s",
		    getenv("CUDA_VISIBLE_DEVICES") != NULL ?
		    " with CUDA_VISIBLE_DEVICES=" : "",
		    getenv("CUDA_VISIBLE_DEVICES") != NULL ?
		    getenv("CUDA_VISIBLE_DEVICES") : "");
		return DV_UNSUPPORTED;
	}
	if (e != cudaSuccess) {
		cd_fail(e, "cannot count the GPUs", err);
		return DV_ERROR;
	}
	if (cfg->index >= count) {
		od_error_set(err, NULL, 0, 0, "no GPU %d: this machine has %d",
		    cfg->index, count);
		return DV_UNSUPPORTED;
	}
	c = calloc(1, sizeof *c);
	if (c == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return DV_ERROR;
	}
	c->index = cfg->index;
	/* Device facts; none of these calls creates a context. */
	if (cudaGetDeviceProperties(&prop, c->index) == cudaSuccess) {
		snprintf(info->name, sizeof info->name, "%.*s",
		    (int)sizeof info->name - 1, prop.name);
		info->total = (int64_t)prop.totalGlobalMem;
		info->cc_major = prop.major;
		info->cc_minor = prop.minor;
		info->sm_count = prop.multiProcessorCount;
		info->l2_bytes = prop.l2CacheSize;
	}
	/* CUDA 13 removed memoryClockRate from cudaDeviceProp. */
	info->mem_clock_khz = cd_attribute(cudaDevAttrMemoryClockRate,
	    c->index);
	info->bus_width_bits = cd_attribute(cudaDevAttrGlobalMemoryBusWidth,
	    c->index);
	info->ecc_enabled = cd_attribute(cudaDevAttrEccEnabled, c->index);
	if (cudaDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof info->pci_bus_id,
	    c->index) != cudaSuccess) {
		(void)cudaGetLastError();
		info->pci_bus_id[0] = '\0';
	}
	info->driver_cuda = drv;
	info->runtime_cuda = rt;
	c->blocks = info->sm_count > 0 ? info->sm_count * 8 : 1024;
	cd_vmm_setup(c);
	info->vmm = c->vmm;
	info->vmm_granularity = (int64_t)c->gran;
	c->nv = nv_open(cfg->nvml_path, info->pci_bus_id, c->index,
	    info->nvml_note, sizeof info->nvml_note);
	info->nvml = c->nv != NULL;
	if (c->nv != NULL)
		(void)nv_driver_release(c->nv, info->driver_release,
		    sizeof info->driver_release);
	/* CUPTI records from before the context, so that it sees it made. */
	c->ct = ct_open(cfg->cupti_path, info->cupti_note,
	    sizeof info->cupti_note);
	info->cupti = c->ct != NULL;
	*stp = c;
	return DV_OK;
}

static bool
cd_was_there(const cd_dev *c, int64_t pid)
{
	int i;

	for (i = 0; i < c->nbefore; i++)
		if (c->before[i].pid == pid)
			return true;
	return false;
}

/*
 * The processes on the device.  Ours is the one with our pid; in a
 * container NVML gives host pids, so when ours is not found, the one new
 * process since before our context is taken to be ours.
 */
static int
cd_processes(void *st, dv_proc *v, int cap, bool *known)
{
	cd_dev *c = st;
	int n, i, fresh = -1, nfresh = 0;
	bool self = false;

	*known = false;
	if (c->nv == NULL)
		return 0;
	n = nv_processes(c->nv, v, cap, known);
	for (i = 0; i < n; i++) {
		if (v[i].pid == (int64_t)getpid()) {
			v[i].self = self = true;
		} else if (c->started && !cd_was_there(c, v[i].pid)) {
			fresh = i;
			nfresh++;
		}
	}
	if (!self && nfresh == 1)
		v[fresh].self = true;
	return n;
}

static dv_status
cd_start(void *st, int64_t *context_bytes, od_error *err)
{
	cd_dev *c = st;
	int64_t total = 0, before = -1, after = -1, res = 0;
	cudaError_t e;
	dv_proc v[DV_PROCS_MAX];
	bool known = false;
	int n, i;

	*context_bytes = -1;
	if (c->started)
		return DV_OK;
	if (c->nv != NULL) {
		c->nbefore = nv_processes(c->nv, c->before, DV_PROCS_MAX, &known);
		if (!nv_memory(c->nv, &total, &before, &res))
			before = -1;
	}
	if ((e = cudaSetDevice(c->index)) != cudaSuccess ||
	    (e = cudaFree(NULL)) != cudaSuccess)
		return cd_fail(e, "cannot create a CUDA context", err);
	if ((e = cudaStreamCreateWithFlags(&c->stream,
	    cudaStreamNonBlocking)) != cudaSuccess ||
	    (e = cudaEventCreateWithFlags(&c->done,
	    cudaEventDisableTiming)) != cudaSuccess ||
	    (e = cudaMalloc((void **)&c->scratch, (1 + DV_BAD_MAX) *
	    sizeof *c->scratch)) != cudaSuccess)
		return cd_fail(e, "cannot set up the device", err);
	c->started = true;
	/* What the context cost: our own line in NVML's process list, or
	 * else the growth of the device's used memory. */
	if (c->nv != NULL) {
		n = cd_processes(c, v, DV_PROCS_MAX, &known);
		for (i = 0; i < n; i++)
			if (v[i].self && v[i].bytes > 0)
				*context_bytes = v[i].bytes;
		if (*context_bytes < 0 && before >= 0 &&
		    nv_memory(c->nv, &total, &after, &res) && after > before)
			*context_bytes = after - before;
	}
	return DV_OK;
}

static dv_status
cd_mem_info(void *st, int64_t *free_b, int64_t *total, od_error *err)
{
	size_t f = 0, t = 0;
	cudaError_t e = cudaMemGetInfo(&f, &t);

	(void)st;
	if (e != cudaSuccess) {
		cd_fail(e, "cudaMemGetInfo", err);
		return DV_ERROR;
	}
	*free_b = (int64_t)f;
	*total = (int64_t)t;
	return DV_OK;
}

static dv_status
cd_alloc(void *st, int64_t bytes, void **h, od_error *err)
{
	cd_buf *b = calloc(1, sizeof *b);
	cudaError_t e;

	(void)st;
	if (b == NULL) {
		od_error_set(err, NULL, 0, 0, "out of host memory");
		return DV_ERROR;
	}
	/* Never cudaMallocManaged: managed memory would oversubscribe. */
	e = cudaMalloc(&b->ptr, (size_t)bytes);
	if (e != cudaSuccess) {
		free(b);
		return cd_fail(e, "cudaMalloc", err);
	}
	b->size = (size_t)bytes;
	*h = b;
	return DV_OK;
}

/*
 * Unmaps the first mapped bytes of a mapping, chunk by chunk (a mapping
 * is unmapped whole, never in part), releases its chunks and frees its
 * address range.
 */
static void
cd_unmap(cd_dev *c, cd_buf *b, size_t mapped)
{
	CUdeviceptr va = (CUdeviceptr)b->ptr;
	size_t off;
	int i;

	for (off = 0; off < mapped; off += b->step)
		c->unmap(va + off, mapped - off < b->step ? mapped - off :
		    b->step);
	for (i = 0; i < b->n; i++)
		c->release(b->chunk[i]);
	c->addr_free(va, b->size);
}

static void
cd_release(void *st, void *h)
{
	cd_dev *c = st;
	cd_buf *b = h;

	if (b->vmm) {
		/* The device is idle: our kernels were waited for. */
		cd_unmap(c, b, b->size);
	} else {
		/* cudaFree waits for the device: our kernels are done. */
		cudaFree(b->ptr);
		(void)cudaGetLastError();
	}
	free(b);
}

/*
 * Reserves an address range for bytes (rounded to the granularity) and
 * maps it chunk by chunk, each chunk its own physical allocation, as
 * expandable segments do; then makes it readable and writable.
 */
static dv_status
cd_vmm_map(void *st, int64_t bytes, int64_t chunk, void **h, int *nchunks,
    od_error *err)
{
	cd_dev *c = st;
	size_t g = c->gran, size, step, off;
	CUdeviceptr va = 0;
	CUmemAccessDesc access;
	CUresult r;
	cd_buf *b;
	size_t n, mapped = 0;

	if (!c->vmm) {
		od_error_set(err, NULL, 0, 0, "no virtual memory management");
		return DV_UNSUPPORTED;
	}
	size = ((size_t)bytes + g - 1) / g * g;
	step = ((size_t)chunk + g - 1) / g * g;
	if (step == 0)
		step = g;
	n = (size + step - 1) / step;
	if (n > DV_ALLOCS_MAX) {
		od_error_set(err, NULL, 0, 0, "%zu chunks are too many", n);
		return DV_ERROR;
	}
	b = calloc(1, sizeof *b + n * sizeof b->chunk[0]);
	if (b == NULL) {
		od_error_set(err, NULL, 0, 0, "out of host memory");
		return DV_ERROR;
	}
	b->vmm = true;
	b->size = size;
	b->step = step;
	r = c->reserve(&va, size, 0, 0, 0);
	if (r != CUDA_SUCCESS) {
		free(b);
		return cd_drv_fail(c, r, "cuMemAddressReserve", err);
	}
	b->ptr = (void *)va;
	for (off = 0; off < size; off += step) {
		size_t len = size - off < step ? size - off : step;
		CUmemGenericAllocationHandle hd;

		if (dv_stopped()) {
			od_error_set(err, NULL, 0, 0, "stopped by a signal");
			r = CUDA_ERROR_UNKNOWN;
			goto undo;
		}
		r = c->create(&hd, len, &c->prop, 0);
		if (r != CUDA_SUCCESS) {
			cd_drv_fail(c, r, "cuMemCreate", err);
			goto undo;
		}
		b->chunk[b->n++] = hd;
		r = c->map(va + off, len, 0, hd, 0);
		if (r != CUDA_SUCCESS) {
			cd_drv_fail(c, r, "cuMemMap", err);
			goto undo;
		}
		mapped = off + len;
	}
	memset(&access, 0, sizeof access);
	access.location = c->prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	r = c->access(va, size, &access, 1);
	if (r != CUDA_SUCCESS) {
		cd_drv_fail(c, r, "cuMemSetAccess", err);
		goto undo;
	}
	*nchunks = b->n;
	*h = b;
	return DV_OK;
undo:
	cd_unmap(c, b, mapped);
	free(b);
	if (dv_stopped())
		return DV_STOPPED;
	return r == CUDA_ERROR_OUT_OF_MEMORY ? DV_OOM : DV_ERROR;
}

/* Waits for the stream, up to deadline. */
static dv_status
cd_wait(cd_dev *c, double deadline, double time_limit, od_error *err)
{
	cudaError_t e = cudaEventRecord(c->done, c->stream);
	struct timespec nap = { 0, 200000 };

	if (e != cudaSuccess)
		return cd_fail(e, "cudaEventRecord", err);
	for (;;) {
		e = cudaEventQuery(c->done);
		if (e == cudaSuccess)
			return DV_OK;
		if (e != cudaErrorNotReady) {
			cd_fail(e, "a kernel failed", err);
			return DV_ERROR;
		}
		if (cd_now() > deadline) {
			od_error_set(err, NULL, 0, 0, "a kernel did not finish "
			    "within the time limit of %g s", time_limit);
			return DV_TIMEOUT;
		}
		nanosleep(&nap, NULL);
	}
}

static dv_status
cd_fill(void *st, void *h, int64_t bytes, double time_limit, od_error *err)
{
	cd_dev *c = st;
	cd_buf *b = h;
	double deadline = cd_now() + time_limit;
	size_t off, n = b->vmm ? (size_t)bytes : b->size;
	int e;
	dv_status s;

	for (off = 0; off < n; off += CD_SLICE) {
		size_t len = n - off < CD_SLICE ? n - off : CD_SLICE;

		if (dv_stopped())
			return DV_STOPPED;
		e = kn_fill((char *)b->ptr + off, len, 0xa5, c->blocks,
		    c->stream);
		if (e != 0)
			return cd_fail((cudaError_t)e, "the fill kernel", err);
		if ((s = cd_wait(c, deadline, time_limit, err)) != DV_OK)
			return s;
	}
	return DV_OK;
}

static dv_status
cd_pattern(void *st, void *h, int64_t bytes, double time_limit,
    dv_pattern *out, od_error *err)
{
	cd_dev *c = st;
	cd_buf *b = h;
	double t0 = cd_now(), deadline = t0 + time_limit;
	size_t words = (size_t)bytes / 8, slice = CD_SLICE / 8, off;
	unsigned long long host[1 + DV_BAD_MAX];
	cudaError_t ce;
	dv_status s = DV_OK;
	int pattern, e, i;

	out->bytes = (int64_t)(words * 8);
	ce = cudaMemsetAsync(c->scratch, 0, sizeof host, c->stream);
	if (ce != cudaSuccess)
		return cd_fail(ce, "cudaMemsetAsync", err);
	for (pattern = 0; pattern < KN_PATTERNS; pattern++) {
		for (off = 0; off < words && s == DV_OK; off += slice) {
			size_t len = words - off < slice ? words - off : slice;

			e = kn_pattern_write((uint64_t *)b->ptr + off, len,
			    pattern, c->blocks, c->stream);
			if (e != 0)
				return cd_fail((cudaError_t)e, "the pattern "
				    "kernel", err);
			s = dv_stopped() ? DV_STOPPED : cd_wait(c, deadline,
			    time_limit, err);
		}
		for (off = 0; off < words && s == DV_OK; off += slice) {
			size_t len = words - off < slice ? words - off : slice;

			e = kn_pattern_check((const uint64_t *)b->ptr + off,
			    len, pattern, c->scratch, c->scratch + 1,
			    DV_BAD_MAX, c->blocks, c->stream);
			if (e != 0)
				return cd_fail((cudaError_t)e, "the check "
				    "kernel", err);
			s = dv_stopped() ? DV_STOPPED : cd_wait(c, deadline,
			    time_limit, err);
		}
		if (s != DV_OK)
			break;
		out->passes++;
	}
	out->seconds = cd_now() - t0;
	if (s == DV_TIMEOUT) {
		/* The passes done count; the time limit ended the rest. */
		out->cut = true;
		if (cudaStreamSynchronize(c->stream) != cudaSuccess)
			return DV_ERROR;
		s = DV_OK;
	}
	if (s != DV_OK)
		return s;
	ce = cudaMemcpy(host, c->scratch, sizeof host, cudaMemcpyDeviceToHost);
	if (ce != cudaSuccess)
		return cd_fail(ce, "reading the error count", err);
	out->errors = (int64_t)host[0];
	for (i = 0; i < DV_BAD_MAX && (unsigned long long)i < host[0]; i++)
		out->bad[out->nbad++] = host[1 + i];
	return DV_OK;
}

/* One timed kernel: seconds, or -1 with err set. */
static double
cd_timed(cd_dev *c, int which, double *a, double *b, double *cc, size_t n,
    double deadline, double time_limit, od_error *err)
{
	cudaEvent_t t0, t1;
	float ms = -1;
	int e;

	if (cudaEventCreate(&t0) != cudaSuccess ||
	    cudaEventCreate(&t1) != cudaSuccess) {
		od_error_set(err, NULL, 0, 0, "cannot create timing events");
		return -1;
	}
	cudaEventRecord(t0, c->stream);
	e = which == 0 ? kn_copy(cc, a, n, c->blocks, c->stream) :
	    kn_triad(a, b, cc, 0.5, n, c->blocks, c->stream);
	cudaEventRecord(t1, c->stream);
	if (e != 0 || cd_wait(c, deadline, time_limit, err) != DV_OK ||
	    cudaEventElapsedTime(&ms, t0, t1) != cudaSuccess) {
		if (e != 0)
			cd_fail((cudaError_t)e, "a bandwidth kernel", err);
		ms = -1;
	}
	cudaEventDestroy(t0);
	cudaEventDestroy(t1);
	return ms < 0 ? -1 : ms / 1000.0;
}

/*
 * Copy and triad, best of five after a warm-up, then a check of the
 * arrays against the same steps done on the host.  The values (1, 0.25,
 * a scalar of 0.5) stay exact in binary, so the check is exact.
 */
static dv_status
cd_bandwidth(void *st, void *ha, void *hb, void *hc, int64_t bytes,
    double time_limit, dv_bandwidth *out, od_error *err)
{
	cd_dev *c = st;
	double *a = ((cd_buf *)ha)->ptr, *b = ((cd_buf *)hb)->ptr;
	double *cc = ((cd_buf *)hc)->ptr;
	size_t n = (size_t)bytes / 8;
	double t0 = cd_now(), deadline = t0 + time_limit;
	double ga = 1.0, gb = 0.25, gc = 0.0, best_copy = -1, best_triad = -1;
	unsigned long long bad = 0;
	int trial, e;

	out->array_bytes = (int64_t)(n * 8);
	if ((e = kn_init(a, n, ga, c->blocks, c->stream)) != 0 ||
	    (e = kn_init(b, n, gb, c->blocks, c->stream)) != 0 ||
	    (e = kn_init(cc, n, gc, c->blocks, c->stream)) != 0)
		return cd_fail((cudaError_t)e, "the init kernel", err);
	for (trial = 0; trial < 6; trial++) {
		double tc, tt;

		if (dv_stopped())
			return DV_STOPPED;
		tc = cd_timed(c, 0, a, b, cc, n, deadline, time_limit, err);
		gc = ga;
		tt = cd_timed(c, 1, a, b, cc, n, deadline, time_limit, err);
		ga = gb + 0.5 * gc;
		if (tc < 0 || tt < 0) {
			out->cut = cd_now() > deadline;
			return out->cut ? DV_TIMEOUT : DV_ERROR;
		}
		if (trial == 0)
			continue;       /* the warm-up */
		out->trials++;
		if (best_copy < 0 || tc < best_copy)
			best_copy = tc;
		if (best_triad < 0 || tt < best_triad)
			best_triad = tt;
	}
	out->copy_bps = best_copy > 0 ? 2.0 * (double)n * 8 / best_copy : -1;
	out->triad_bps = best_triad > 0 ? 3.0 * (double)n * 8 / best_triad :
	    -1;
	out->seconds = cd_now() - t0;
	/* A fast kernel that computed the wrong thing measured nothing. */
	if (cudaMemsetAsync(c->scratch, 0, sizeof *c->scratch, c->stream) !=
	    cudaSuccess ||
	    kn_count_ne(a, n, ga, c->scratch, c->blocks, c->stream) != 0 ||
	    kn_count_ne(cc, n, gc, c->scratch, c->blocks, c->stream) != 0 ||
	    cd_wait(c, deadline + time_limit, time_limit, err) != DV_OK ||
	    cudaMemcpy(&bad, c->scratch, sizeof bad, cudaMemcpyDeviceToHost) !=
	    cudaSuccess) {
		if (err->msg[0] == '\0')
			od_error_set(err, NULL, 0, 0, "cannot check the "
			    "bandwidth kernels' results");
		return DV_ERROR;
	}
	if (bad > 0) {
		od_error_set(err, NULL, 0, 0, "the bandwidth kernels computed "
		    "%llu wrong values", bad);
		return DV_ERROR;
	}
	return DV_OK;
}

static dv_status
cd_health(void *st, dv_health *out)
{
	cd_dev *c = st;

	if (c->nv == NULL) {
		snprintf(out->note, sizeof out->note, "NVML not available: no "
		    "ECC, remapped-row or retired-page counters");
		return DV_UNSUPPORTED;
	}
	nv_health(c->nv, out);
	return DV_OK;
}

static void
cd_activity(void *st, dv_activity *out)
{
	cd_dev *c = st;

	ct_take(c->ct, out);
}

static void
cd_close(void *st)
{
	cd_dev *c = st;

	if (c->started) {
		cudaFree(c->scratch);
		cudaEventDestroy(c->done);
		cudaStreamDestroy(c->stream);
		(void)cudaGetLastError();
	}
	ct_close(c->ct);
	nv_close(c->nv);
	free(c);
}

const dv_backend dv_cuda_backend = {
	"cuda", cd_open, cd_processes, cd_start, cd_mem_info, cd_alloc,
	cd_release, cd_vmm_map, cd_release, cd_fill, cd_pattern, cd_bandwidth,
	cd_health, cd_activity, cd_close,
};

/*
 * device_cuda.c: the CUDA backend of live mode, on the driver API alone.
 *
 * libcuda.so.1 is loaded at run time and its entry points resolved with
 * cuGetProcAddress (cuda_load.c); the kernels are a fatbin embedded in
 * the binary (kernels.h) and loaded with cuModuleLoadData into the
 * device's primary context, the one PyTorch's runtime would share.  No
 * cudart is linked, so the binary starts on machines with no driver, and
 * any driver that has the entry points (CUDA 11.0 on) and can load the
 * fatbin's code for the GPU runs it; "no driver" and "driver too old"
 * are told apart (DV_NO_DRIVER, DV_DRIVER_OLD).  Errors carry the
 * driver's own strings (cuGetErrorString, cuGetErrorName).  The driver's
 * virtual memory management (cuMemCreate, cuMemMap: what PyTorch's
 * expandable segments use) is optional.  NVML (nvml_load.c) and CUPTI
 * (cupti_load.c) are loaded with dlopen too.
 *
 * Safety: no managed memory is ever allocated; every kernel covers one
 * slice of its buffer per launch, and the time limit and the stop flag
 * (SIGINT, SIGTERM) are checked between launches.  A kernel already
 * running cannot be stopped; slices are small enough (a few
 * milliseconds) that this does not matter on a healthy device.  Nothing
 * here ever waits on the device without a deadline: completion is polled
 * with cuEventQuery.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>         /* strcasecmp */
#include <time.h>
#include <unistd.h>

#include "cuda_load.h"
#include "cupti_load.h"
#include "device.h"
#include "kernels.h"
#include "nvml_load.h"

#define CD_SLICE (1ULL << 30)   /* bytes per kernel launch */

/* The kernels, by their names in the fatbin. */
enum {
	CD_K_PATTERN_WRITE, CD_K_PATTERN_CHECK, CD_K_MI_STEP, CD_K_FILL,
	CD_K_INIT, CD_K_COPY, CD_K_TRIAD, CD_K_COUNT_NE, CD_KERNELS
};

static const char *const cd_kernel_name[CD_KERNELS] = {
	[CD_K_PATTERN_WRITE] = "kn_pattern_write",
	[CD_K_PATTERN_CHECK] = "kn_pattern_check",
	[CD_K_MI_STEP] = "kn_mi_step",
	[CD_K_FILL] = "kn_fill",
	[CD_K_INIT] = "kn_init",
	[CD_K_COPY] = "kn_copy",
	[CD_K_TRIAD] = "kn_triad",
	[CD_K_COUNT_NE] = "kn_count_ne",
};

/* An allocation: a cuMemAlloc block, or a mapped range and its chunks. */
typedef struct {
	bool vmm;
	CUdeviceptr ptr;
	size_t size;            /* mapped: the reserved range */
	size_t step;            /* mapped: the size of each chunk */
	int n;
	CUmemGenericAllocationHandle chunk[];
} cd_buf;

typedef struct {
	cl_lib cu;
	int index;
	CUdevice cudev;
	int cc_major, cc_minor;
	int blocks;             /* grid of the grid-stride kernels */
	int sms;                /* multiprocessors (128 when unknown) */
	bool started;
	CUcontext ctx;          /* the primary context, retained */
	CUmodule module;
	CUfunction fn[CD_KERNELS];
	CUstream stream;
	CUevent done;
	CUdeviceptr scratch;    /* error count and bad addresses */
	nv_lib *nv;
	ct_lib *ct;
	dv_proc before[DV_PROCS_MAX];   /* processes before our context */
	int nbefore;
	bool vmm;
	size_t gran;
	CUmemAllocationProp prop;
	bool ecc_fault;         /* a kernel ended in CUDA_ERROR_ECC_UNCORRECTABLE */
} cd_dev;

/* A driver error as one line, and its status. */
static dv_status
cd_drv_fail(const cd_dev *c, CUresult r, const char *what, od_error *err)
{
	char msg[256];

	cl_describe(&c->cu, r, what, msg, sizeof msg);
	od_error_set(err, NULL, 0, 0, "%s", msg);
	return r == CUDA_ERROR_OUT_OF_MEMORY ? DV_OOM : DV_ERROR;
}

/* Makes our context current on the calling thread. */
static dv_status
cd_current(const cd_dev *c, od_error *err)
{
	CUresult r = c->cu.cuCtxSetCurrent(c->ctx);

	return r == CUDA_SUCCESS ? DV_OK : cd_drv_fail(c, r,
	    "cannot make the CUDA context current", err);
}

/* Launches kernel k over a 1-D grid of blocks x threads. */
static CUresult
cd_launch_grid(const cd_dev *c, int k, int blocks, int threads,
    void **params)
{
	return c->cu.cuLaunchKernel(c->fn[k], (unsigned)blocks, 1, 1,
	    (unsigned)threads, 1, 1, 0, c->stream, params, NULL);
}

/* Launches kernel k over the default grid with its parameters. */
static CUresult
cd_launch(const cd_dev *c, int k, void **params)
{
	return cd_launch_grid(c, k, c->blocks, KN_THREADS, params);
}

/* The driver's virtual memory management, when it has it. */
static void
cd_vmm_setup(cd_dev *c)
{
	int supported = 0;

	if (!c->cu.vmm || c->cu.cuDeviceGetAttribute(&supported,
	    CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
	    c->cudev) != CUDA_SUCCESS || !supported)
		return;
	memset(&c->prop, 0, sizeof c->prop);
	c->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	c->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	c->prop.location.id = c->cudev;
	if (c->cu.cuMemGetAllocationGranularity(&c->gran, &c->prop,
	    CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || c->gran == 0)
		return;
	c->vmm = true;
}

static int
cd_attribute(const cd_dev *c, CUdevice_attribute a)
{
	int v = -1;

	if (c->cu.cuDeviceGetAttribute(&v, a, c->cudev) != CUDA_SUCCESS)
		return -1;
	return v;
}

/* Says why opening failed; frees c. */
static dv_status
cd_open_fail(cd_dev *c, dv_status st)
{
	cl_close(&c->cu);
	free(c);
	return st;
}

/* A device's UUID as nvidia-smi prints it ("GPU-" and 8-4-4-4-12 hex
 * digits), or "" when the driver does not say. */
static void
cd_uuid(cd_dev *c, CUdevice dev, char *out, size_t cap)
{
	CUuuid u;
	const unsigned char *b = (const unsigned char *)u.bytes;

	out[0] = '\0';
	if (c->cu.cuDeviceGetUuid(&u, dev) != CUDA_SUCCESS)
		return;
	snprintf(out, cap, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5],
	    b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/*
 * A MIG instance's UUID as nvidia-smi -L prints it ("MIG-" and 8-4-4-4-12
 * hex digits, drivers from R470 on), from cuDeviceGetUuid_v2, which gives
 * the instance's own; "" when the driver lacks it (before CUDA 11.4).
 */
static void
cd_uuid_mig(cd_dev *c, CUdevice dev, char *out, size_t cap)
{
	CUuuid u;
	const unsigned char *b = (const unsigned char *)u.bytes;

	out[0] = '\0';
	if (c->cu.cuDeviceGetUuid2 == NULL ||
	    c->cu.cuDeviceGetUuid2(&u, dev) != CUDA_SUCCESS)
		return;
	snprintf(out, cap, "MIG-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5],
	    b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* The index of the device with this UUID (GPU-...) or PCI bus id among
 * the count this process sees, or -1. */
static int
cd_find(cd_dev *c, const char *id, int count)
{
	CUdevice dev, want;
	char uuid[96];
	int i;

	if (strncmp(id, "GPU-", 4) == 0) {
		for (i = 0; i < count; i++) {
			if (c->cu.cuDeviceGet(&dev, i) != CUDA_SUCCESS)
				continue;
			cd_uuid(c, dev, uuid, sizeof uuid);
			if (strcasecmp(uuid, id) == 0)
				return i;
		}
		return -1;
	}
	if (strncmp(id, "MIG-", 4) == 0 ||
	    c->cu.cuDeviceGetByPCIBusId(&want, id) != CUDA_SUCCESS)
		return -1;
	for (i = 0; i < count; i++)
		if (c->cu.cuDeviceGet(&dev, i) == CUDA_SUCCESS && dev == want)
			return i;
	return -1;
}

static dv_status
cd_open(const dv_config *cfg, void **stp, dv_info *info, od_error *err)
{
	/* The driver library, for a test or an unusual install. */
	const char *path = getenv("OOMDOC_LIBCUDA");
	const char *env = getenv("CUDA_VISIBLE_DEVICES");
	char msg[256], name[256], visbuf[256], *vis = NULL;
	char cuda_uuid[96], nvml_uuid[96] = "";
	dv_selection sel;
	int count = 0;
	size_t total = 0;
	CUresult r;
	cd_dev *c = calloc(1, sizeof *c);

	if (c == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return DV_ERROR;
	}
	if (env != NULL) {
		snprintf(visbuf, sizeof visbuf, "%s", env);
		vis = visbuf;
	}
	/* A MIG instance: CUDA sees it only as CUDA_VISIBLE_DEVICES names
	 * it, read once by cuInit (cl_open), where it is device 0. */
	dv_select(cfg->id, cfg->index, vis, &sel);
	if (sel.mig && setenv("CUDA_VISIBLE_DEVICES", sel.uuid, 1) != 0) {
		od_error_set(err, NULL, 0, 0, "cannot set CUDA_VISIBLE_DEVICES "
		    "to the MIG instance %s", sel.uuid);
		free(c);
		return DV_ERROR;
	}
	switch (cl_open(&c->cu, path, &r, msg, sizeof msg)) {
	case CL_NO_DRIVER:
		od_error_set(err, NULL, 0, 0, "no NVIDIA driver on this machine "
		    "(%s): live mode needs a GPU; --backend fake shows what it "
		    "would do", msg);
		return cd_open_fail(c, DV_NO_DRIVER);
	case CL_TOO_OLD:
		od_error_set(err, NULL, 0, 0, "%s: update the driver", msg);
		return cd_open_fail(c, DV_DRIVER_OLD);
	case CL_OK:
		break;
	}
	if (r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS &&
	    (c->cu.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0))) {
		od_error_set(err, NULL, 0, 0, "no CUDA GPU is visible%s%s%s",
		    sel.mig || vis != NULL ? " with CUDA_VISIBLE_DEVICES=" : "",
		    sel.mig ? sel.uuid : vis != NULL ? vis : "", sel.mig ?
		    " (no such MIG instance, or MIG is off)" : "");
		return cd_open_fail(c, DV_UNSUPPORTED);
	}
	if (r != CUDA_SUCCESS) {
		/* A driver library that does not match its kernel module
		 * says so here (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH). */
		cl_describe(&c->cu, r, "cannot initialise the NVIDIA driver",
		    msg, sizeof msg);
		od_error_set(err, NULL, 0, 0, "%s", msg);
		return cd_open_fail(c, r == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH ||
		    r == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE ?
		    DV_DRIVER_OLD : DV_ERROR);
	}
	info->count = count;
	if (sel.mig) {
		/* The one device CUDA_VISIBLE_DEVICES=MIG-... leaves; which
		 * one it is, dv_check_identity says once NVML is open. */
		c->index = sel.cuda_index;
	} else if (cfg->id != NULL) {
		/* By UUID or PCI bus id: the device's index among those this
		 * process sees. */
		c->index = cd_find(c, cfg->id, count);
		if (c->index < 0) {
			od_error_set(err, NULL, 0, 0, "no GPU %s among the %d this "
			    "process sees%s", cfg->id, count,
			    "");
			return cd_open_fail(c, DV_UNSUPPORTED);
		}
	} else if (cfg->index < 0 || cfg->index >= count) {
		od_error_set(err, NULL, 0, 0, "no GPU %d: this machine has %d",
		    cfg->index, count);
		return cd_open_fail(c, DV_UNSUPPORTED);
	} else {
		c->index = cfg->index;
	}
	if ((r = c->cu.cuDeviceGet(&c->cudev, c->index)) != CUDA_SUCCESS) {
		cd_drv_fail(c, r, "cuDeviceGet", err);
		return cd_open_fail(c, DV_ERROR);
	}
	if (sel.mig)
		cd_uuid_mig(c, c->cudev, cuda_uuid, sizeof cuda_uuid);
	else
		cd_uuid(c, c->cudev, cuda_uuid, sizeof cuda_uuid);
	snprintf(info->uuid, sizeof info->uuid, "%s", cuda_uuid[0] != '\0' ||
	    !sel.mig ? cuda_uuid : sel.uuid);
	/* Device facts; none of these calls creates a context. */
	if (c->cu.cuDeviceGetName(name, (int)sizeof name, c->cudev) ==
	    CUDA_SUCCESS)
		snprintf(info->name, sizeof info->name, "%.*s",
		    (int)sizeof info->name - 1, name);
	if (c->cu.cuDeviceTotalMem(&total, c->cudev) == CUDA_SUCCESS)
		info->total = (int64_t)total;
	c->cc_major = info->cc_major = cd_attribute(c,
	    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	c->cc_minor = info->cc_minor = cd_attribute(c,
	    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	info->sm_count = cd_attribute(c,
	    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	info->l2_bytes = cd_attribute(c, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
	info->mem_clock_khz = cd_attribute(c,
	    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
	info->bus_width_bits = cd_attribute(c,
	    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
	info->ecc_enabled = cd_attribute(c, CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
	if (c->cu.cuDeviceGetPCIBusId(info->pci_bus_id,
	    (int)sizeof info->pci_bus_id, c->cudev) != CUDA_SUCCESS)
		info->pci_bus_id[0] = '\0';
	info->driver_cuda = c->cu.version;
	/* The toolkit whose nvcc built the embedded kernels. */
	info->runtime_cuda = CUDA_VERSION;
	c->sms = info->sm_count > 0 ? info->sm_count : 128;
	c->blocks = c->sms * 8;
	cd_vmm_setup(c);
	info->vmm = c->vmm;
	info->vmm_granularity = (int64_t)c->gran;
	/* NVML by the MIG instance's UUID (its memory and processes; the
	 * counters on its parent), else by the PCI bus id.  A MIG instance
	 * shares its parent's PCI bus id, which would find the parent. */
	if (sel.mig)
		c->nv = nv_open_uuid(cfg->nvml_path, sel.uuid, info->nvml_note,
		    sizeof info->nvml_note);
	else
		c->nv = nv_open(cfg->nvml_path, info->pci_bus_id, c->index,
		    info->nvml_note, sizeof info->nvml_note);
	info->nvml = c->nv != NULL;
	if (c->nv != NULL)
		(void)nv_uuids(c->nv, nvml_uuid, info->parent_uuid,
		    sizeof info->parent_uuid);
	if (!sel.mig)
		info->parent_uuid[0] = '\0';
	/* The device CUDA opened must be the one named, and NVML's. */
	if (dv_check_identity(sel.mig ? sel.uuid : "", cuda_uuid, nvml_uuid,
	    info->identity, sizeof info->identity, err) != DV_OK) {
		nv_close(c->nv);
		return cd_open_fail(c, DV_UNSUPPORTED);
	}
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

/*
 * Whether the driver refused an image because of what the image is (code
 * from a toolkit newer than the driver, no code for this GPU, a JIT it
 * lacks or has disabled), so that the next image may do: the errors
 * cuModuleLoadData documents (CUDA Driver API, Module Management), with
 * CUDA_ERROR_INVALID_IMAGE for a container or cubin format the driver
 * does not know.
 */
static bool
cd_refusal(CUresult r)
{
	switch (r) {
	case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
	case CUDA_ERROR_NO_BINARY_FOR_GPU:
	case CUDA_ERROR_INVALID_IMAGE:
	case CUDA_ERROR_INVALID_SOURCE:
	case CUDA_ERROR_INVALID_PTX:
	case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
	case CUDA_ERROR_JIT_COMPILATION_DISABLED:
		return true;
	default:
		return false;
	}
}

/*
 * Loads kernel image `image` (dv_image): the fatbin, or the PTX text of
 * the oldest architecture at an old ISA version (kernels.h).  A refusal
 * is DV_UNSUPPORTED, with the driver's words in why, and leaves no
 * module loaded; dv_start then offers the next image.
 */
static dv_status
cd_load_image(void *st, int image, char *detail, char *why, size_t cap,
    od_error *err)
{
	cd_dev *c = st;
	const void *data = image == DV_IMAGE_FATBIN ? (const void *)
	    od_kernels_fatbin : (const void *)od_kernels_ptx;
	dv_status s;
	CUresult r;
	int k;

	if (image < 0 || image >= DV_IMAGES) {
		od_error_set(err, NULL, 0, 0, "no kernel image %d", image);
		return DV_ERROR;
	}
	if ((s = cd_current(c, err)) != DV_OK)
		return s;
	r = c->cu.cuModuleLoadData(&c->module, data);
	if (r != CUDA_SUCCESS) {
		c->module = NULL;
		if (!cd_refusal(r))
			return cd_drv_fail(c, r, "cannot load oomdoc's kernels",
			    err);
		cl_describe(&c->cu, r, image == DV_IMAGE_FATBIN ? "the "
		    "fatbin from CUDA " OOMDOC_CUDA_VERSION : "PTX ISA "
		    OOMDOC_PTX_ISA, why, cap);
		return DV_UNSUPPORTED;
	}
	for (k = 0; k < CD_KERNELS; k++) {
		r = c->cu.cuModuleGetFunction(&c->fn[k], c->module,
		    cd_kernel_name[k]);
		if (r != CUDA_SUCCESS) {
			cd_drv_fail(c, r, cd_kernel_name[k], err);
			c->cu.cuModuleUnload(c->module);
			c->module = NULL;
			return DV_ERROR;
		}
	}
	if (image == DV_IMAGE_FATBIN)
		snprintf(detail, 160, "fatbin from CUDA %s: SASS for sm %s, "
		    "PTX of the last", OOMDOC_CUDA_VERSION,
		    OOMDOC_FATBIN_ARCHS);
	else
		snprintf(detail, 160, "PTX ISA %s for compute_%s, "
		    "JIT-compiled by the driver", OOMDOC_PTX_ISA,
		    OOMDOC_PTX_ARCH);
	return DV_OK;
}

static dv_status
cd_start(void *st, int64_t *context_bytes, od_error *err)
{
	cd_dev *c = st;
	int64_t total = 0, before = -1, after = -1, res = 0;
	dv_proc v[DV_PROCS_MAX];
	bool known = false;
	dv_status s;
	CUresult r;
	int n, i;

	*context_bytes = -1;
	if (c->started)
		return DV_OK;
	/* CUDA 13's oldest architecture: no image has code for older GPUs. */
	if (c->cc_major < 7 || (c->cc_major == 7 && c->cc_minor < 5)) {
		od_error_set(err, NULL, 0, 0, "this GPU (compute capability "
		    "%d.%d) is older than every architecture oomdoc's kernels "
		    "were built for (sm_%s on)", c->cc_major, c->cc_minor,
		    OOMDOC_PTX_ARCH);
		return DV_UNSUPPORTED;
	}
	if (c->nv != NULL) {
		c->nbefore = nv_processes(c->nv, c->before, DV_PROCS_MAX, &known);
		if (!nv_memory(c->nv, &total, &before, &res))
			before = -1;
	}
	if ((r = c->cu.cuDevicePrimaryCtxRetain(&c->ctx, c->cudev)) !=
	    CUDA_SUCCESS)
		return cd_drv_fail(c, r, "cannot create a CUDA context", err);
	/* From here cd_close releases what was made. */
	c->started = true;
	/* The kernels come after (dv_start calls cd_load_image). */
	if ((s = cd_current(c, err)) != DV_OK)
		return s;
	if ((r = c->cu.cuStreamCreate(&c->stream, CU_STREAM_NON_BLOCKING)) !=
	    CUDA_SUCCESS ||
	    (r = c->cu.cuEventCreate(&c->done, CU_EVENT_DISABLE_TIMING)) !=
	    CUDA_SUCCESS ||
	    (r = c->cu.cuMemAlloc(&c->scratch, (1 + DV_BAD_MAX) *
	    sizeof(unsigned long long))) != CUDA_SUCCESS)
		return cd_drv_fail(c, r, "cannot set up the device", err);
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
	cd_dev *c = st;
	size_t f = 0, t = 0;
	dv_status s;
	CUresult r;

	if ((s = cd_current(c, err)) != DV_OK)
		return s;
	if ((r = c->cu.cuMemGetInfo(&f, &t)) != CUDA_SUCCESS) {
		cd_drv_fail(c, r, "cuMemGetInfo", err);
		return DV_ERROR;
	}
	*free_b = (int64_t)f;
	*total = (int64_t)t;
	return DV_OK;
}

static dv_status
cd_alloc(void *st, int64_t bytes, void **h, od_error *err)
{
	cd_dev *c = st;
	cd_buf *b;
	dv_status s;
	CUresult r;

	if ((s = cd_current(c, err)) != DV_OK)
		return s;
	b = calloc(1, sizeof *b);
	if (b == NULL) {
		od_error_set(err, NULL, 0, 0, "out of host memory");
		return DV_ERROR;
	}
	/* Never managed memory: it would oversubscribe. */
	r = c->cu.cuMemAlloc(&b->ptr, (size_t)bytes);
	if (r != CUDA_SUCCESS) {
		free(b);
		return cd_drv_fail(c, r, "cuMemAlloc", err);
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
	size_t off;
	int i;

	for (off = 0; off < mapped; off += b->step)
		c->cu.cuMemUnmap(b->ptr + off, mapped - off < b->step ?
		    mapped - off : b->step);
	for (i = 0; i < b->n; i++)
		c->cu.cuMemRelease(b->chunk[i]);
	c->cu.cuMemAddressFree(b->ptr, b->size);
}

static void
cd_release(void *st, void *h)
{
	cd_dev *c = st;
	cd_buf *b = h;
	od_error ignored;

	memset(&ignored, 0, sizeof ignored);
	(void)cd_current(c, &ignored);
	if (b->vmm) {
		/* The device is idle: our kernels were waited for. */
		cd_unmap(c, b, b->size);
	} else {
		/* cuMemFree waits for the device: our kernels are done. */
		c->cu.cuMemFree(b->ptr);
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
	dv_status s;

	if (!c->vmm) {
		od_error_set(err, NULL, 0, 0, "no virtual memory management");
		return DV_UNSUPPORTED;
	}
	if ((s = cd_current(c, err)) != DV_OK)
		return s;
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
	r = c->cu.cuMemAddressReserve(&va, size, 0, 0, 0);
	if (r != CUDA_SUCCESS) {
		free(b);
		return cd_drv_fail(c, r, "cuMemAddressReserve", err);
	}
	b->ptr = va;
	for (off = 0; off < size; off += step) {
		size_t len = size - off < step ? size - off : step;
		CUmemGenericAllocationHandle hd;

		if (dv_stopped()) {
			od_error_set(err, NULL, 0, 0, "stopped by a signal");
			r = CUDA_ERROR_UNKNOWN;
			goto undo;
		}
		r = c->cu.cuMemCreate(&hd, len, &c->prop, 0);
		if (r != CUDA_SUCCESS) {
			cd_drv_fail(c, r, "cuMemCreate", err);
			goto undo;
		}
		b->chunk[b->n++] = hd;
		r = c->cu.cuMemMap(va + off, len, 0, hd, 0);
		if (r != CUDA_SUCCESS) {
			cd_drv_fail(c, r, "cuMemMap", err);
			goto undo;
		}
		mapped = off + len;
	}
	memset(&access, 0, sizeof access);
	access.location = c->prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	r = c->cu.cuMemSetAccess(va, size, &access, 1);
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

/* Waits for the stream, up to deadline, polling: never blocks. */
static dv_status
cd_wait(cd_dev *c, double deadline, double time_limit, od_error *err)
{
	CUresult r = c->cu.cuEventRecord(c->done, c->stream);
	struct timespec nap = { 0, 200000 };

	if (r != CUDA_SUCCESS)
		return cd_drv_fail(c, r, "cuEventRecord", err);
	for (;;) {
		r = c->cu.cuEventQuery(c->done);
		if (r == CUDA_SUCCESS)
			return DV_OK;
		if (r != CUDA_ERROR_NOT_READY) {
			/* An uncorrectable ECC error in memory a kernel read
			 * ends it this way (and the context with it). */
			if (r == CUDA_ERROR_ECC_UNCORRECTABLE)
				c->ecc_fault = true;
			cd_drv_fail(c, r, "a kernel failed", err);
			return DV_ERROR;
		}
		if (dv_seconds() > deadline) {
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
	double deadline = dv_seconds() + time_limit;
	size_t off, n = b->vmm ? (size_t)bytes : b->size;
	unsigned char v = 0xa5;
	dv_status s;
	CUresult r;

	if ((s = cd_current(c, err)) != DV_OK)
		return s;
	for (off = 0; off < n; off += CD_SLICE) {
		size_t len = n - off < CD_SLICE ? n - off : CD_SLICE;
		CUdeviceptr p = b->ptr + off;
		void *args[] = { &p, &len, &v };

		if (dv_stopped())
			return DV_STOPPED;
		if ((r = cd_launch(c, CD_K_FILL, args)) != CUDA_SUCCESS)
			return cd_drv_fail(c, r, "the fill kernel", err);
		if ((s = cd_wait(c, deadline, time_limit, err)) != DV_OK)
			return s;
	}
	return DV_OK;
}

/*
 * Reads n bytes of device memory at src into dst, within deadline.  The
 * stream is waited for first: a copy into pageable memory returns only
 * once it is done, and it would wait without a deadline for the kernels
 * before it.
 */
static dv_status
cd_read(cd_dev *c, void *dst, CUdeviceptr src, size_t n, double deadline,
    double time_limit, od_error *err)
{
	dv_status s = cd_wait(c, deadline, time_limit, err);
	CUresult r;

	if (s != DV_OK)
		return s;
	r = c->cu.cuMemcpyDtoHAsync(dst, src, n, c->stream);
	if (r != CUDA_SUCCESS)
		return cd_drv_fail(c, r, "cuMemcpyDtoHAsync", err);
	return cd_wait(c, deadline, time_limit, err);
}

/*
 * Launches kernel k over words words of buffer b, one slice per launch,
 * from the first slice or (down) from the last, waiting for each; args[0]
 * and args[1] are set here to the slice's pointer and length, the other
 * parameters are the caller's.
 */
static dv_status
cd_sweep(cd_dev *c, int k, const cd_buf *b, size_t words, bool down,
    void *const *params, int nparams, double deadline, double time_limit,
    od_error *err)
{
	size_t slice = CD_SLICE / 8, nslices = (words + slice - 1) / slice;
	size_t j, len;
	CUdeviceptr p;
	void *args[12];
	dv_status s;
	CUresult r;

	if (nparams > 12)
		nparams = 12;
	memcpy(args, params, (size_t)nparams * sizeof args[0]);
	args[0] = &p;
	args[1] = &len;
	for (j = 0; j < nslices; j++) {
		size_t off = (down ? nslices - 1 - j : j) * slice;

		len = words - off < slice ? words - off : slice;
		p = b->ptr + off * 8;
		if (dv_stopped())
			return DV_STOPPED;
		if ((r = cd_launch(c, k, args)) != CUDA_SUCCESS) {
			/* The sticky error of an earlier kernel. */
			if (r == CUDA_ERROR_ECC_UNCORRECTABLE)
				c->ecc_fault = true;
			return cd_drv_fail(c, r, "the pattern kernel", err);
		}
		if ((s = cd_wait(c, deadline, time_limit, err)) != DV_OK)
			return s;
	}
	return DV_OK;
}

/* One pass of kind kind (its index i among them) over the buffer. */
static dv_status
cd_pattern_pass(cd_dev *c, const cd_buf *b, size_t words, int kind, int i,
    uint64_t seed, double deadline, double time_limit, od_error *err)
{
	CUdeviceptr errors = c->scratch;
	CUdeviceptr bad = c->scratch + sizeof(unsigned long long);
	unsigned max_bad = DV_BAD_MAX;
	int pattern = kind == DV_PT_RANDOM ? KN_RANDOM : i;
	uint64_t v = kn_mi_value(i), nv = ~v, expect, write;
	int check, desc, step;
	void *wargs[] = { NULL, NULL, &pattern, &seed };
	void *cargs[] = { NULL, NULL, &pattern, &seed, &errors, &bad,
	    &max_bad };
	void *margs[] = { NULL, NULL, &expect, &write, &check, &desc,
	    &errors, &bad, &max_bad };
	dv_status s;

	if (kind != DV_PT_MOVING) {
		s = cd_sweep(c, CD_K_PATTERN_WRITE, b, words, false, wargs, 4,
		    deadline, time_limit, err);
		return s != DV_OK ? s : cd_sweep(c, CD_K_PATTERN_CHECK, b,
		    words, false, cargs, 7, deadline, time_limit, err);
	}
	/* Write p; up: check p, write ~p; down: check ~p, write p; check p. */
	for (step = 0; step < 4; step++) {
		check = step > 0;
		desc = step == 2;
		expect = step == 2 ? nv : v;
		write = step == 1 ? nv : v;
		s = cd_sweep(c, CD_K_MI_STEP, b, words, desc, margs, 9,
		    deadline, time_limit, err);
		if (s != DV_OK)
			return s;
	}
	return DV_OK;
}

/* The error count so far, read back within the time limit. */
static dv_status
cd_errors(cd_dev *c, unsigned long long *host, double time_limit,
    od_error *err)
{
	return cd_read(c, host, c->scratch, (1 + DV_BAD_MAX) * sizeof host[0],
	    dv_seconds() + time_limit, time_limit, err);
}

static dv_status
cd_pattern(void *st, void *h, int64_t bytes, double time_limit,
    dv_pattern *out, od_error *err)
{
	static const int passes[DV_PT_KINDS] = {
		[DV_PT_STATIC] = DV_PT_PASSES_STATIC,
		[DV_PT_MOVING] = DV_PT_PASSES_MOVING,
		[DV_PT_RANDOM] = DV_PT_PASSES_RANDOM,
	};
	cd_dev *c = st;
	cd_buf *b = h;
	double t0 = dv_seconds(), deadline = t0 + time_limit;
	size_t words = (size_t)bytes / 8;
	unsigned long long host[1 + DV_BAD_MAX], before = 0;
	dv_status s = DV_OK;
	CUresult r;
	int kind, i;

	if ((s = cd_current(c, err)) != DV_OK)
		return s;
	out->bytes = (int64_t)(words * 8);
	c->ecc_fault = false;
	r = c->cu.cuMemsetD8Async(c->scratch, 0, sizeof host, c->stream);
	if (r != CUDA_SUCCESS)
		return cd_drv_fail(c, r, "cuMemsetD8Async", err);
	for (kind = 0; kind < DV_PT_KINDS && s == DV_OK; kind++) {
		for (i = 0; i < passes[kind] && s == DV_OK; i++) {
			s = cd_pattern_pass(c, b, words, kind, i, out->seed,
			    deadline, time_limit, err);
			if (s == DV_OK) {
				out->passes++;
				out->kind_passes[kind]++;
			}
		}
		/* The mismatches this kind found: the count's growth. */
		if (s == DV_OK && (s = cd_errors(c, host, time_limit, err)) ==
		    DV_OK) {
			out->kind_errors[kind] = (int64_t)(host[0] - before);
			before = host[0];
		}
	}
	out->seconds = dv_seconds() - t0;
	out->ecc_fault = c->ecc_fault;
	if (s == DV_TIMEOUT) {
		/*
		 * The passes done count; the time limit ended the rest.  The
		 * kernel that ran late gets one more time limit to finish
		 * before the count is read; past that, the device is taken
		 * to be hung, and nothing more is asked of it.
		 */
		out->cut = true;
		if ((s = cd_wait(c, dv_seconds() + time_limit, time_limit, err)) !=
		    DV_OK)
			return s;
		if ((s = cd_errors(c, host, time_limit, err)) != DV_OK)
			return s;
		if (kind > 0 && kind <= DV_PT_KINDS)
			out->kind_errors[kind - 1] = (int64_t)(host[0] -
			    before);
	}
	if (s != DV_OK)
		return s;
	out->errors = (int64_t)host[0];
	for (i = 0; i < DV_BAD_MAX && (unsigned long long)i < host[0]; i++)
		out->bad[out->nbad++] = host[1 + i];
	return DV_OK;
}

/* One timed kernel over blocks x threads: seconds, or -1 with err set. */
static double
cd_timed(cd_dev *c, int which, CUdeviceptr a, CUdeviceptr b, CUdeviceptr cc,
    size_t n, int blocks, int threads, double deadline, double time_limit,
    od_error *err)
{
	CUevent t0 = NULL, t1 = NULL;
	double scalar = 0.5;
	void *copy_args[] = { &cc, &a, &n };
	void *triad_args[] = { &a, &b, &cc, &scalar, &n };
	float ms = -1;
	CUresult r;

	if (c->cu.cuEventCreate(&t0, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
	    c->cu.cuEventCreate(&t1, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
		od_error_set(err, NULL, 0, 0, "cannot create timing events");
		if (t0 != NULL)
			c->cu.cuEventDestroy(t0);
		return -1;
	}
	c->cu.cuEventRecord(t0, c->stream);
	r = cd_launch_grid(c, which == 0 ? CD_K_COPY : CD_K_TRIAD, blocks,
	    threads, which == 0 ? copy_args : triad_args);
	c->cu.cuEventRecord(t1, c->stream);
	if (r != CUDA_SUCCESS) {
		cd_drv_fail(c, r, "a bandwidth kernel", err);
		ms = -1;
	} else if (cd_wait(c, deadline, time_limit, err) != DV_OK ||
	    c->cu.cuEventElapsedTime(&ms, t0, t1) != CUDA_SUCCESS) {
		ms = -1;
	}
	c->cu.cuEventDestroy(t0);
	c->cu.cuEventDestroy(t1);
	return ms < 0 ? -1 : ms / 1000.0;
}

/* Launches kn_init: a[i] = v. */
static CUresult
cd_init(cd_dev *c, CUdeviceptr a, size_t n, double v)
{
	void *args[] = { &a, &n, &v };

	return cd_launch(c, CD_K_INIT, args);
}

/* Launches kn_count_ne: counts x[i] != expect into the scratch word. */
static CUresult
cd_count_ne(cd_dev *c, CUdeviceptr x, size_t n, double expect)
{
	CUdeviceptr count = c->scratch;
	void *args[] = { &x, &n, &expect, &count };

	return cd_launch(c, CD_K_COUNT_NE, args);
}

/*
 * Copy and triad over n doubles (even: the kernels load double2), after
 * a search of launch configurations (dv_bw_config: one triad each, after
 * a warm-up), best of five with the fastest after a warm-up, then a
 * check of the arrays against the same steps done on the host.  The
 * values (1, 0.25, a scalar of 0.5) stay exact in binary, so the check
 * is exact.
 */
static dv_status
cd_bandwidth(void *st, void *ha, void *hb, void *hc, int64_t bytes,
    double time_limit, dv_bandwidth *out, od_error *err)
{
	cd_dev *c = st;
	CUdeviceptr a = ((cd_buf *)ha)->ptr, b = ((cd_buf *)hb)->ptr;
	CUdeviceptr cc = ((cd_buf *)hc)->ptr;
	size_t n = (size_t)bytes / 16 * 2;
	double t0 = dv_seconds(), deadline = t0 + time_limit;
	double ga = 1.0, gb = 0.25, gc = 0.0, best_copy = -1, best_triad = -1;
	double best_search = -1;
	int sms = c->sms;
	int blocks = c->blocks, threads = KN_THREADS, k;
	unsigned long long bad = 0;
	dv_status s;
	CUresult r;
	int trial;

	if ((s = cd_current(c, err)) != DV_OK)
		return s;
	out->array_bytes = (int64_t)(n * 8);
	if ((r = cd_init(c, a, n, ga)) != CUDA_SUCCESS ||
	    (r = cd_init(c, b, n, gb)) != CUDA_SUCCESS ||
	    (r = cd_init(c, cc, n, gc)) != CUDA_SUCCESS)
		return cd_drv_fail(c, r, "the init kernel", err);
	/* The search: the warm-up, then each configuration once. */
	for (k = -1; k < DV_BW_CONFIGS; k++) {
		int bps = 8, tpb = KN_THREADS;
		double t;

		if (k >= 0)
			dv_bw_config(k, &bps, &tpb);
		if (dv_stopped())
			return DV_STOPPED;
		t = cd_timed(c, 1, a, b, cc, n, sms * bps, tpb, deadline,
		    time_limit, err);
		ga = gb + 0.5 * gc;
		if (t < 0) {
			out->cut = dv_seconds() > deadline;
			return out->cut ? DV_TIMEOUT : DV_ERROR;
		}
		if (k < 0)
			continue;
		out->configs++;
		if (best_search < 0 || t < best_search) {
			best_search = t;
			blocks = sms * bps;
			threads = tpb;
			out->blocks_per_sm = bps;
			out->threads = tpb;
		}
	}
	for (trial = 0; trial < 6; trial++) {
		double tc, tt;

		if (dv_stopped())
			return DV_STOPPED;
		tc = cd_timed(c, 0, a, b, cc, n, blocks, threads, deadline,
		    time_limit, err);
		gc = ga;
		tt = cd_timed(c, 1, a, b, cc, n, blocks, threads, deadline,
		    time_limit, err);
		ga = gb + 0.5 * gc;
		if (tc < 0 || tt < 0) {
			out->cut = dv_seconds() > deadline;
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
	out->seconds = dv_seconds() - t0;
	/* A fast kernel that computed the wrong thing measured nothing. */
	if (c->cu.cuMemsetD8Async(c->scratch, 0, sizeof bad, c->stream) !=
	    CUDA_SUCCESS || cd_count_ne(c, a, n, ga) != CUDA_SUCCESS ||
	    cd_count_ne(c, cc, n, gc) != CUDA_SUCCESS ||
	    cd_read(c, &bad, c->scratch, sizeof bad, deadline + time_limit,
	    time_limit, err) != DV_OK) {
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
	od_error ignored;

	if (c->started) {
		memset(&ignored, 0, sizeof ignored);
		(void)cd_current(c, &ignored);
		if (c->scratch != 0)
			c->cu.cuMemFree(c->scratch);
		if (c->done != NULL)
			c->cu.cuEventDestroy(c->done);
		if (c->stream != NULL)
			c->cu.cuStreamDestroy(c->stream);
		if (c->module != NULL)
			c->cu.cuModuleUnload(c->module);
		c->cu.cuCtxSetCurrent(NULL);
		c->cu.cuDevicePrimaryCtxRelease(c->cudev);
	}
	ct_close(c->ct);
	nv_close(c->nv);
	cl_close(&c->cu);
	free(c);
}

const dv_backend dv_cuda_backend = {
	.name = "cuda", .open = cd_open, .processes = cd_processes,
	.start = cd_start, .mem_info = cd_mem_info, .alloc = cd_alloc,
	.release = cd_release, .vmm_map = cd_vmm_map,
	.vmm_release = cd_release, .fill = cd_fill, .pattern = cd_pattern,
	.bandwidth = cd_bandwidth, .health = cd_health,
	.activity = cd_activity, .close = cd_close, .forget = NULL,
	.abandon = NULL, .load_image = cd_load_image,
};

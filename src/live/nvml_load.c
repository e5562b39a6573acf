/*
 * nvml_load.c: NVML through dlopen (see nvml_load.h).
 *
 * The types and constants below are NVML's ABI, declared here so that the
 * build needs no nvml.h (the CUDA toolkit does not always ship it) and so
 * that no symbol is bound at link time.  The process list's structure
 * changed across drivers (nvitop#93, #88): the _v3 and _v2 calls fill
 * {pid, usedGpuMemory, gpuInstanceId, computeInstanceId}, the unversioned
 * one {pid, usedGpuMemory}; each is tried in that order, and a list that
 * reads as nonsense (pid 0, more memory than the device) is reported as
 * unreadable rather than believed.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "nvml_load.h"

typedef int nvml_ret;
typedef struct nvml_dev *nvml_device;

#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
/* nvml.h: nvmlMemoryErrorType_t and nvmlEccCounterType_t. */
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0
#define NVML_AGGREGATE_ECC 1
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_VALUE_NOT_AVAILABLE ((unsigned long long)-1)

typedef struct {
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
} nvml_proc_v2;

typedef struct {
	unsigned int pid;
	unsigned long long used;
} nvml_proc_v1;

typedef struct {
	unsigned long long total, free, used;
} nvml_mem_v1;

typedef struct {
	unsigned int version;
	unsigned long long total, reserved, free, used;
} nvml_mem_v2;

#define NV_PROCS_MAX 256

struct nv_lib {
	void *so;
	nvml_device dev;        /* the device, or the MIG instance */
	/* Where the ECC and remapped-row counters are: the GPU itself, or a
	 * MIG instance's parent GPU (NVML reports them on the parent only,
	 * nvml.h, nvmlDeviceGetTotalEccErrors and nvmlDeviceGetRemappedRows
	 * "not supported" on MIG device handles). */
	nvml_device counters;
	bool mig;
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	const char *(*error_string)(nvml_ret);
	nvml_ret (*by_pci)(const char *, nvml_device *);
	nvml_ret (*by_index)(unsigned int, nvml_device *);
	nvml_ret (*by_uuid)(const char *, nvml_device *);
	nvml_ret (*is_mig)(nvml_device, unsigned int *);
	nvml_ret (*mig_parent)(nvml_device, nvml_device *);
	nvml_ret (*uuid)(nvml_device, char *, unsigned int);
	nvml_ret (*procs_v3)(nvml_device, unsigned int *, nvml_proc_v2 *);
	nvml_ret (*procs_v2)(nvml_device, unsigned int *, nvml_proc_v2 *);
	nvml_ret (*procs_v1)(nvml_device, unsigned int *, nvml_proc_v1 *);
	nvml_ret (*mem_v2)(nvml_device, nvml_mem_v2 *);
	nvml_ret (*mem_v1)(nvml_device, nvml_mem_v1 *);
	nvml_ret (*ecc)(nvml_device, int, int, unsigned long long *);
	nvml_ret (*remapped)(nvml_device, unsigned int *, unsigned int *,
	    unsigned int *, unsigned int *);
	nvml_ret (*retired)(nvml_device, int, unsigned int *,
	    unsigned long long *);
	nvml_ret (*retired_pending)(nvml_device, int *);
	nvml_ret (*driver)(char *, unsigned int);
};

/* Resolves name into *fn (a function pointer), or leaves it NULL. */
static void
nv_sym(void *so, const char *name, void *fn)
{
	void *p = dlsym(so, name);

	memcpy(fn, &p, sizeof p);
}

static const char *
nv_err(const nv_lib *nv, nvml_ret r)
{
	const char *s = nv->error_string != NULL ? nv->error_string(r) : NULL;

	return s != NULL ? s : "unknown NVML error";
}

/*
 * Loads NVML and finds the device: by UUID when one is given (a GPU- or
 * a MIG- one: nvmlDeviceGetHandleByUUID finds both), else by PCI bus id,
 * else by index.  A MIG instance's counters are read on its parent,
 * found with nvmlDeviceGetDeviceHandleFromMigDeviceHandle.
 */
static nv_lib *
nv_open_by(const char *path, const char *uuid, const char *pci_bus_id,
    int index, char *note, size_t len)
{
	const char *name = path != NULL ? path : "libnvidia-ml.so.1";
	nv_lib *nv;
	nvml_ret r;

	note[0] = '\0';
	nv = calloc(1, sizeof *nv);
	if (nv == NULL) {
		snprintf(note, len, "NVML not loaded: out of memory");
		return NULL;
	}
	nv->so = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (nv->so == NULL) {
		const char *e = dlerror();

		snprintf(note, len, "NVML not available: cannot load %s (%s)",
		    name, e != NULL ? e : "no reason given");
		free(nv);
		return NULL;
	}
	nv_sym(nv->so, "nvmlInit_v2", &nv->init);
	nv_sym(nv->so, "nvmlShutdown", &nv->shutdown);
	nv_sym(nv->so, "nvmlErrorString", &nv->error_string);
	nv_sym(nv->so, "nvmlDeviceGetHandleByPciBusId_v2", &nv->by_pci);
	nv_sym(nv->so, "nvmlDeviceGetHandleByIndex_v2", &nv->by_index);
	nv_sym(nv->so, "nvmlDeviceGetHandleByUUID", &nv->by_uuid);
	nv_sym(nv->so, "nvmlDeviceIsMigDeviceHandle", &nv->is_mig);
	nv_sym(nv->so, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
	    &nv->mig_parent);
	nv_sym(nv->so, "nvmlDeviceGetUUID", &nv->uuid);
	nv_sym(nv->so, "nvmlDeviceGetComputeRunningProcesses_v3",
	    &nv->procs_v3);
	nv_sym(nv->so, "nvmlDeviceGetComputeRunningProcesses_v2",
	    &nv->procs_v2);
	nv_sym(nv->so, "nvmlDeviceGetComputeRunningProcesses", &nv->procs_v1);
	nv_sym(nv->so, "nvmlDeviceGetMemoryInfo_v2", &nv->mem_v2);
	nv_sym(nv->so, "nvmlDeviceGetMemoryInfo", &nv->mem_v1);
	nv_sym(nv->so, "nvmlDeviceGetTotalEccErrors", &nv->ecc);
	nv_sym(nv->so, "nvmlDeviceGetRemappedRows", &nv->remapped);
	nv_sym(nv->so, "nvmlDeviceGetRetiredPages", &nv->retired);
	nv_sym(nv->so, "nvmlDeviceGetRetiredPagesPendingStatus",
	    &nv->retired_pending);
	nv_sym(nv->so, "nvmlSystemGetDriverVersion", &nv->driver);
	if (nv->init == NULL || nv->shutdown == NULL ||
	    (nv->by_pci == NULL && nv->by_index == NULL)) {
		snprintf(note, len, "NVML not available: %s lacks nvmlInit_v2 "
		    "or a device lookup", name);
		dlclose(nv->so);
		free(nv);
		return NULL;
	}
	if ((r = nv->init()) != NVML_SUCCESS) {
		snprintf(note, len, "NVML not available: nvmlInit_v2: %s",
		    nv_err(nv, r));
		dlclose(nv->so);
		free(nv);
		return NULL;
	}
	r = -1;
	if (uuid != NULL) {
		if (nv->by_uuid != NULL)
			r = nv->by_uuid(uuid, &nv->dev);
		pci_bus_id = uuid;      /* for the note below */
	} else if (pci_bus_id != NULL && pci_bus_id[0] != '\0' &&
	    nv->by_pci != NULL) {
		/* CUDA's order and NVML's differ; the PCI bus id joins them. */
		r = nv->by_pci(pci_bus_id, &nv->dev);
	} else if ((pci_bus_id == NULL || pci_bus_id[0] == '\0') &&
	    nv->by_index != NULL) {
		r = nv->by_index((unsigned int)index, &nv->dev);
	}
	if (r != NVML_SUCCESS) {
		snprintf(note, len, "NVML has no device %s: %s",
		    pci_bus_id != NULL && pci_bus_id[0] ? pci_bus_id : "of that "
		    "index", r == -1 ? "no lookup" : nv_err(nv, r));
		nv->shutdown();
		dlclose(nv->so);
		free(nv);
		return NULL;
	}
	nv->counters = nv->dev;
	if (uuid != NULL && strncmp(uuid, "MIG-", 4) == 0) {
		unsigned int is_mig = 0;

		if (nv->is_mig == NULL || nv->mig_parent == NULL ||
		    nv->is_mig(nv->dev, &is_mig) != NVML_SUCCESS || !is_mig ||
		    (r = nv->mig_parent(nv->dev, &nv->counters)) !=
		    NVML_SUCCESS) {
			snprintf(note, len, "NVML cannot find the GPU of the MIG "
			    "instance %.96s", uuid);
			nv->shutdown();
			dlclose(nv->so);
			free(nv);
			return NULL;
		}
		nv->mig = true;
	}
	return nv;
}

nv_lib *
nv_open(const char *path, const char *pci_bus_id, int index, char *note,
    size_t len)
{
	return nv_open_by(path, NULL, pci_bus_id, index, note, len);
}

nv_lib *
nv_open_uuid(const char *path, const char *uuid, char *note, size_t len)
{
	return nv_open_by(path, uuid, NULL, -1, note, len);
}

bool
nv_uuids(nv_lib *nv, char *uuid, char *parent, size_t len)
{
	char u[NVML_DEVICE_UUID_V2_BUFFER_SIZE];

	uuid[0] = parent[0] = '\0';
	if (nv->uuid == NULL || nv->uuid(nv->dev, u, sizeof u) != NVML_SUCCESS)
		return false;
	u[sizeof u - 1] = '\0';
	snprintf(uuid, len, "%s", u);
	if (nv->mig && nv->uuid(nv->counters, u, sizeof u) == NVML_SUCCESS) {
		u[sizeof u - 1] = '\0';
		snprintf(parent, len, "%s", u);
	}
	return true;
}

void
nv_close(nv_lib *nv)
{
	if (nv == NULL)
		return;
	nv->shutdown();
	dlclose(nv->so);
	free(nv);
}

/*
 * Reads the list with one of the calls (3, 2 or 1) into v.  Returns the
 * count, or -1 when the call fails or its records read as nonsense (pid
 * 0, more memory than the device): the layout of another driver.
 */
static int
nv_try_processes(nv_lib *nv, int which, int64_t total, dv_proc *v, int cap)
{
	nvml_proc_v2 p2[NV_PROCS_MAX];
	nvml_proc_v1 p1[NV_PROCS_MAX];
	unsigned int count = NV_PROCS_MAX, i;
	nvml_ret r;
	int n = 0;

	if (which == 3 && nv->procs_v3 != NULL)
		r = nv->procs_v3(nv->dev, &count, p2);
	else if (which == 2 && nv->procs_v2 != NULL)
		r = nv->procs_v2(nv->dev, &count, p2);
	else if (which == 1 && nv->procs_v1 != NULL)
		r = nv->procs_v1(nv->dev, &count, p1);
	else
		return -1;
	if (r != NVML_SUCCESS)
		return -1;
	for (i = 0; i < count && i < NV_PROCS_MAX && n < cap; i++) {
		unsigned int pid = which == 1 ? p1[i].pid : p2[i].pid;
		unsigned long long used = which == 1 ? p1[i].used : p2[i].used;

		if (pid == 0 || (used != NVML_VALUE_NOT_AVAILABLE && total > 0 &&
		    used > (unsigned long long)total))
			return -1;
		v[n].pid = pid;
		v[n].bytes = used == NVML_VALUE_NOT_AVAILABLE ? OD_UNKNOWN :
		    (int64_t)used;
		v[n].self = false;
		n++;
	}
	return n;
}

int
nv_processes(nv_lib *nv, dv_proc *v, int cap, bool *ok)
{
	int64_t total = 0, used = 0, reserved = 0;
	int which, n;

	(void)nv_memory(nv, &total, &used, &reserved);
	for (which = 3; which >= 1; which--) {
		n = nv_try_processes(nv, which, total, v, cap);
		if (n >= 0) {
			*ok = true;
			return n;
		}
	}
	*ok = false;
	return 0;
}

bool
nv_memory(nv_lib *nv, int64_t *total, int64_t *used, int64_t *reserved)
{
	nvml_mem_v2 m2;
	nvml_mem_v1 m1;

	*reserved = 0;
	if (nv->mem_v2 != NULL) {
		memset(&m2, 0, sizeof m2);
		m2.version = (unsigned int)(sizeof m2 | (2u << 24));
		if (nv->mem_v2(nv->dev, &m2) == NVML_SUCCESS) {
			*total = (int64_t)m2.total;
			*used = (int64_t)m2.used;
			*reserved = (int64_t)m2.reserved;
			return true;
		}
	}
	if (nv->mem_v1 != NULL && nv->mem_v1(nv->dev, &m1) == NVML_SUCCESS) {
		*total = (int64_t)m1.total;
		*used = (int64_t)m1.used;
		return true;
	}
	return false;
}

/* Why a counter could not be read, in a few words. */
static void
nv_why(const nv_lib *nv, nvml_ret r, char *out, size_t len)
{
	if (r == NVML_ERROR_NOT_SUPPORTED)
		snprintf(out, len, "not supported");
	else
		snprintf(out, len, "not read: %.48s", nv_err(nv, r));
}

/*
 * The counters, each on its own: one that NVML does not support on this
 * device (ECC off, a consumer part, a GPU before Ampere for remapped
 * rows) is OD_UNKNOWN with the reason, never 0.  On a MIG instance they
 * are the parent GPU's.
 */
void
nv_health(nv_lib *nv, dv_health *h)
{
	unsigned long long n = 0;
	unsigned int corr = 0, unc = 0, pending = 0, failed = 0, pages = 0;
	int state = 0;
	size_t used = 0;
	nvml_ret r = -1;

	h->ecc_uncorrected = h->ecc_corrected = h->ecc_uncorrected_total =
	    OD_UNKNOWN;
	h->remapped_correctable = h->remapped_uncorrectable = OD_UNKNOWN;
	h->on_parent = nv->mig;
	/* Volatile (since the driver loaded) and aggregate counts. */
	if (nv->ecc != NULL && (r = nv->ecc(nv->counters,
	    NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &n)) ==
	    NVML_SUCCESS) {
		h->ecc_known = true;
		h->ecc_uncorrected = (int64_t)n;
		if (nv->ecc(nv->counters, NVML_MEMORY_ERROR_TYPE_CORRECTED,
		    NVML_VOLATILE_ECC, &n) == NVML_SUCCESS)
			h->ecc_corrected = (int64_t)n;
		if (nv->ecc(nv->counters, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
		    NVML_AGGREGATE_ECC, &n) == NVML_SUCCESS)
			h->ecc_uncorrected_total = (int64_t)n;
	} else {
		nv_why(nv, r, h->ecc_why, sizeof h->ecc_why);
		used += (size_t)snprintf(h->note + used, sizeof h->note - used,
		    "ECC counters %s (ECC off, or a part without ECC)",
		    h->ecc_why);
	}
	/* Ampere and later. */
	r = -1;
	if (nv->remapped != NULL && (r = nv->remapped(nv->counters, &corr,
	    &unc, &pending, &failed)) == NVML_SUCCESS) {
		h->remap_known = true;
		h->remapped_correctable = corr;
		h->remapped_uncorrectable = unc;
		h->remap_pending = pending != 0;
		h->remap_failure = failed != 0;
	} else {
		nv_why(nv, r, h->remap_why, sizeof h->remap_why);
		if (used < sizeof h->note)
			used += (size_t)snprintf(h->note + used,
			    sizeof h->note - used, "%sremapped-row counters %s",
			    used ? "; " : "", h->remap_why);
	}
	/* Before Ampere: page retirement. */
	if (nv->retired != NULL) {
		pages = 0;
		r = nv->retired(nv->counters, 1, &pages, NULL);
		if (r == NVML_SUCCESS || r == NVML_ERROR_INSUFFICIENT_SIZE) {
			h->retired_known = true;
			h->retired_dbe = pages;
			pages = 0;
			r = nv->retired(nv->counters, 0, &pages, NULL);
			if (r == NVML_SUCCESS || r == NVML_ERROR_INSUFFICIENT_SIZE)
				h->retired_sbe = pages;
			if (nv->retired_pending != NULL &&
			    nv->retired_pending(nv->counters, &state) ==
			    NVML_SUCCESS)
				h->retired_pending = state != 0;
		}
	}
	if (nv->mig && used < sizeof h->note)
		snprintf(h->note + used, sizeof h->note - used, "%scounters "
		    "read on the MIG instance's parent GPU", used ? "; " : "");
}

bool
nv_driver_release(nv_lib *nv, char *buf, size_t len)
{
	char v[96];

	if (nv->driver == NULL || nv->driver(v, sizeof v) != NVML_SUCCESS)
		return false;
	v[sizeof v - 1] = '\0';
	snprintf(buf, len, "%s", v);
	return true;
}

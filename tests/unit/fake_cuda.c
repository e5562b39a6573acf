/*
 * fake_cuda.c: a stand-in libcuda.so.1 for the CUDA backend's opening of
 * a device (src/live/device_cuda.c, cd_open), so that how it picks a MIG
 * instance and cross-checks its UUID is tested without a GPU
 * (tests/cuda_driver.sh loads it through OOMDOC_LIBCUDA, beside
 * fake_nvml.c through OOMDOC_NVML).
 *
 * The node is the one of fake_nvml.c: one GPU (UUID
 * GPU-fa4e0000-0000-4000-8000-000000000000, PCI bus id 00000000:18:00.0)
 * with one MIG instance (MIG-fa4e0000-0000-4000-8000-000000000100).  As
 * the driver does (NVIDIA MIG User Guide, "CUDA Device Enumeration"),
 * cuInit reads CUDA_VISIBLE_DEVICES once: naming the MIG instance, it
 * leaves that instance as device 0; naming any other MIG UUID, no device.
 * cuDeviceGetUuid at CUDA 11.4's version (the _v2 of cuda.h) gives a MIG
 * instance's own UUID, at the first version its GPU's (CUDA Driver API,
 * cuDeviceGetUuid_v2: "If the device is in MIG mode, returns its MIG
 * UUID").  The environment bends it:
 *
 *   FAKE_CUDA_IGNORE_VISIBLE=1  cuInit ignores CUDA_VISIBLE_DEVICES: device
 *                               0 is the whole GPU (the fault the identity
 *                               check is there to catch)
 *   FAKE_CUDA_VERSION=N         cuDriverGetVersion's answer (12040)
 *   FAKE_CUDA_LOG=FILE          cuInit writes the CUDA_VISIBLE_DEVICES it
 *                               saw there
 *
 * Making a context fails (CUDA_ERROR_NOT_SUPPORTED), so a run that got
 * past the opening ends there, with status 4 and the driver's words.
 * Only the types of cuda.h this needs are declared here: the fake must
 * build where no toolkit is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long cuuint64_t;
typedef struct {
	char bytes[16];
} CUuuid;

enum {
	FC_SUCCESS = 0, FC_INVALID_VALUE = 1, FC_NOT_INITIALIZED = 3,
	FC_NO_DEVICE = 100, FC_INVALID_DEVICE = 101, FC_NOT_FOUND = 500,
	FC_NOT_SUPPORTED = 801,
};

static const unsigned char fc_gpu[16] = {
	0xfa, 0x4e, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0
};
static const unsigned char fc_mig[16] = {
	0xfa, 0x4e, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0x01, 0
};
#define FC_MIG_UUID "MIG-fa4e0000-0000-4000-8000-000000000100"

static int fc_inited;
static int fc_count;            /* devices visible after cuInit */
static int fc_is_mig;           /* device 0 is the MIG instance */

/* The entry point, as cuda.h declares its first version. */
CUresult cuGetProcAddress(const char *symbol, void **pfn, int version,
    cuuint64_t flags);

static CUresult
fc_init(unsigned int flags)
{
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	const char *log = getenv("FAKE_CUDA_LOG");
	FILE *f;

	(void)flags;
	if (log != NULL && (f = fopen(log, "a")) != NULL) {
		fprintf(f, "cuInit CUDA_VISIBLE_DEVICES=%s\n",
		    vis != NULL ? vis : "(unset)");
		fclose(f);
	}
	fc_inited = 1;
	fc_count = 1;
	fc_is_mig = 0;
	if (getenv("FAKE_CUDA_IGNORE_VISIBLE") == NULL && vis != NULL &&
	    strncmp(vis, "MIG-", 4) == 0) {
		fc_is_mig = strcmp(vis, FC_MIG_UUID) == 0;
		fc_count = fc_is_mig;
	}
	return FC_SUCCESS;
}

static CUresult
fc_driver_version(int *v)
{
	const char *e = getenv("FAKE_CUDA_VERSION");

	*v = e != NULL ? atoi(e) : 12040;
	return FC_SUCCESS;
}

static CUresult
fc_error_string(CUresult r, const char **s)
{
	*s = r == FC_NOT_SUPPORTED ? "operation not supported (fake driver)" :
	    "error (fake driver)";
	return FC_SUCCESS;
}

static CUresult
fc_error_name(CUresult r, const char **s)
{
	*s = r == FC_NOT_SUPPORTED ? "CUDA_ERROR_NOT_SUPPORTED" :
	    "CUDA_ERROR_UNKNOWN";
	return FC_SUCCESS;
}

static CUresult
fc_count_devices(int *n)
{
	if (!fc_inited)
		return FC_NOT_INITIALIZED;
	*n = fc_count;
	return FC_SUCCESS;
}

static CUresult
fc_get(CUdevice *d, int i)
{
	if (i < 0 || i >= fc_count)
		return FC_INVALID_DEVICE;
	*d = i;
	return FC_SUCCESS;
}

static CUresult
fc_name(char *out, int n, CUdevice d)
{
	(void)d;
	snprintf(out, (size_t)n, "%s", fc_is_mig ?
	    "NVIDIA H100 80GB HBM3 MIG 1g.10gb" : "NVIDIA H100 80GB HBM3");
	return FC_SUCCESS;
}

static CUresult
fc_total(size_t *bytes, CUdevice d)
{
	(void)d;
	*bytes = (size_t)(fc_is_mig ? 10ULL : 80ULL) << 30;
	return FC_SUCCESS;
}

static CUresult
fc_attribute(int *v, int attr, CUdevice d)
{
	(void)attr;
	(void)d;
	*v = 0;
	return FC_SUCCESS;
}

/* The bus id as fake_nvml.c knows it (a MIG instance has its GPU's). */
static CUresult
fc_pci(char *out, int n, CUdevice d)
{
	(void)d;
	snprintf(out, (size_t)n, "00000000:18:00.0");
	return FC_SUCCESS;
}

static CUresult
fc_by_pci(CUdevice *d, const char *id)
{
	if (strcmp(id, "00000000:18:00.0") != 0 || fc_count == 0)
		return FC_INVALID_DEVICE;
	*d = 0;
	return FC_SUCCESS;
}

/* The first version: a MIG instance's GPU's UUID. */
static CUresult
fc_uuid_v1(CUuuid *u, CUdevice d)
{
	(void)d;
	memcpy(u->bytes, fc_gpu, 16);
	return FC_SUCCESS;
}

/* CUDA 11.4's: the MIG instance's own. */
static CUresult
fc_uuid_v2(CUuuid *u, CUdevice d)
{
	(void)d;
	memcpy(u->bytes, fc_is_mig ? fc_mig : fc_gpu, 16);
	return FC_SUCCESS;
}

static CUresult
fc_ctx_retain(void **ctx, CUdevice d)
{
	(void)ctx;
	(void)d;
	return FC_NOT_SUPPORTED;
}

/*
 * Every other entry point the backend resolves: it must be found for
 * the driver to count as new enough, and is never called, since no
 * context is ever made.
 */
static CUresult
fc_unused(void)
{
	return FC_NOT_SUPPORTED;
}

static const struct {
	const char *name;
	void (*fn)(void);
} fc_table[] = {
	{ .name = "cuInit", .fn = (void (*)(void))fc_init },
	{ .name = "cuDriverGetVersion", .fn = (void (*)(void))fc_driver_version },
	{ .name = "cuGetErrorString", .fn = (void (*)(void))fc_error_string },
	{ .name = "cuGetErrorName", .fn = (void (*)(void))fc_error_name },
	{ .name = "cuDeviceGetCount", .fn = (void (*)(void))fc_count_devices },
	{ .name = "cuDeviceGet", .fn = (void (*)(void))fc_get },
	{ .name = "cuDeviceGetName", .fn = (void (*)(void))fc_name },
	{ .name = "cuDeviceTotalMem", .fn = (void (*)(void))fc_total },
	{ .name = "cuDeviceGetAttribute", .fn = (void (*)(void))fc_attribute },
	{ .name = "cuDeviceGetPCIBusId", .fn = (void (*)(void))fc_pci },
	{ .name = "cuDeviceGetByPCIBusId", .fn = (void (*)(void))fc_by_pci },
	{ .name = "cuDevicePrimaryCtxRetain",
	  .fn = (void (*)(void))fc_ctx_retain },
};

CUresult
cuGetProcAddress(const char *symbol, void **pfn, int version,
    cuuint64_t flags)
{
	void (*fn)(void) = (void (*)(void))fc_unused;
	size_t i;

	(void)flags;
	*pfn = NULL;
	if (strcmp(symbol, "cuDeviceGetUuid") == 0) {
		/* As the driver answers: the newest version not newer than
		 * the one asked for, and none it does not have. */
		int have;

		(void)fc_driver_version(&have);
		fn = (void (*)(void))(version >= 11040 && have >= 11040 ?
		    fc_uuid_v2 : fc_uuid_v1);
	} else {
		for (i = 0; i < sizeof fc_table / sizeof fc_table[0]; i++)
			if (strcmp(symbol, fc_table[i].name) == 0)
				fn = fc_table[i].fn;
	}
	/* ISO C has no conversion from a function pointer to void *. */
	memcpy(pfn, &fn, sizeof fn);
	return FC_SUCCESS;
}

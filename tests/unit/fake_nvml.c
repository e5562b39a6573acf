/*
 * fake_nvml.c: a stand-in libnvidia-ml.so for test_live, so that the
 * calls nvml_load.c makes are checked against NVML's ABI without a GPU:
 * the entry points it resolves by name, with the signatures and the enum
 * values of nvml.h (nvmlMemoryErrorType_t: CORRECTED 0, UNCORRECTED 1;
 * nvmlEccCounterType_t: VOLATILE 0, AGGREGATE 1; NVML_ERROR_NOT_SUPPORTED
 * 3, NVML_ERROR_NOT_FOUND 6).
 *
 * One GPU with one MIG instance.  As NVML does, the ECC and remapped-row
 * calls answer "not supported" on the MIG device handle: they are read on
 * the parent.  Each (error type, counter type) pair has its own count, so
 * that a caller asking for the wrong pair reads the wrong number.  With
 * FAKE_NVML_ECC=off, ECC is off (not supported); with FAKE_NVML_REMAP=off
 * the part has no row remapper.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct fn_dev *nvmlDevice_t;

struct fn_dev {
	const char *uuid;
};

#define FN_GPU_UUID "GPU-fa4e0000-0000-4000-8000-000000000000"
#define FN_MIG_UUID "MIG-fa4e0000-0000-4000-8000-000000000100"
#define FN_PCI "00000000:18:00.0"

enum {
	FN_SUCCESS = 0, FN_INVALID_ARGUMENT = 2, FN_NOT_SUPPORTED = 3,
	FN_NOT_FOUND = 6, FN_INSUFFICIENT_SIZE = 7
};

static struct fn_dev fn_gpu = { .uuid = FN_GPU_UUID };
static struct fn_dev fn_mig = { .uuid = FN_MIG_UUID };

/* NVML's own, declared here as nvml.h declares them. */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t r);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *id,
    nvmlDevice_t *d);
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d);
nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t d, unsigned int *is);
nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
    nvmlDevice_t *d);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int n);
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type,
    int counter, unsigned long long *n);
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr,
    unsigned int *unc, unsigned int *pending, unsigned int *failure);

nvmlReturn_t
nvmlInit_v2(void)
{
	return FN_SUCCESS;
}

nvmlReturn_t
nvmlShutdown(void)
{
	return FN_SUCCESS;
}

const char *
nvmlErrorString(nvmlReturn_t r)
{
	return r == FN_NOT_SUPPORTED ? "Not Supported" : r == FN_NOT_FOUND ?
	    "Not Found" : r == FN_INVALID_ARGUMENT ? "Invalid Argument" :
	    "Unknown Error";
}

nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	if (i != 0)
		return FN_NOT_FOUND;
	*d = &fn_gpu;
	return FN_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetHandleByPciBusId_v2(const char *id, nvmlDevice_t *d)
{
	if (strcmp(id, FN_PCI) != 0)
		return FN_NOT_FOUND;
	*d = &fn_gpu;          /* a MIG instance's bus id is its parent's */
	return FN_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d)
{
	if (strcmp(uuid, FN_GPU_UUID) == 0)
		*d = &fn_gpu;
	else if (strcmp(uuid, FN_MIG_UUID) == 0)
		*d = &fn_mig;
	else
		return FN_NOT_FOUND;
	return FN_SUCCESS;
}

nvmlReturn_t
nvmlDeviceIsMigDeviceHandle(nvmlDevice_t d, unsigned int *is)
{
	*is = d == &fn_mig;
	return FN_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
    nvmlDevice_t *d)
{
	if (mig != &fn_mig)
		return FN_INVALID_ARGUMENT;
	*d = &fn_gpu;
	return FN_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int n)
{
	if (n <= strlen(d->uuid))
		return FN_INSUFFICIENT_SIZE;
	snprintf(uuid, n, "%s", d->uuid);
	return FN_SUCCESS;
}

static int
fn_off(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && strcmp(v, "off") == 0;
}

nvmlReturn_t
nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
    unsigned long long *n)
{
	if (d == &fn_mig || fn_off("FAKE_NVML_ECC"))
		return FN_NOT_SUPPORTED;
	if (type < 0 || type > 1 || counter < 0 || counter > 1)
		return FN_INVALID_ARGUMENT;
	/* corrected volatile 7, aggregate 70; uncorrected 2 and 20. */
	*n = (type == 0 ? 7ULL : 2ULL) * (counter == 1 ? 10ULL : 1ULL);
	return FN_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr,
    unsigned int *unc, unsigned int *pending, unsigned int *failure)
{
	if (d == &fn_mig || fn_off("FAKE_NVML_REMAP"))
		return FN_NOT_SUPPORTED;
	*corr = 3;
	*unc = 1;
	*pending = 1;
	*failure = 0;
	return FN_SUCCESS;
}

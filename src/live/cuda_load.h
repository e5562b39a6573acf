/*
 * cuda_load.h: the CUDA driver API, loaded at run time.
 *
 * libcuda.so.1 is opened with dlopen and each entry point resolved with
 * cuGetProcAddress at the API version whose signature we call (the
 * versioned PFN_ types of the toolkit's cudaTypedefs.h), or, on drivers
 * older than CUDA 11.3 that lack cuGetProcAddress, with dlsym under the
 * symbol that version exports (cuMemAlloc_v2 and the like).  Nothing
 * links against libcuda, so oomdoc starts on machines with no driver, and
 * any driver that has these entry points runs it.
 */
#ifndef OD_CUDA_LOAD_H
#define OD_CUDA_LOAD_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The entry points: X(name, API version of the signature, symbol for
 * dlsym, required).  The version is also the first CUDA release that has
 * that signature, hence the oldest driver that can give it: 2000 is CUDA
 * 2.0, 11000 CUDA 11.0 (driver R450).  The required ones all exist from
 * CUDA 11.0 on (cuDevicePrimaryCtxRelease_v2 is the newest); the virtual
 * memory management calls (CUDA 10.2) are optional, and without them the
 * probes that map memory report that they cannot run.
 */
#define CL_ENTRIES(X) \
	X(cuInit, 2000, "cuInit", true) \
	X(cuDriverGetVersion, 2020, "cuDriverGetVersion", true) \
	X(cuGetErrorString, 6000, "cuGetErrorString", true) \
	X(cuGetErrorName, 6000, "cuGetErrorName", true) \
	X(cuDeviceGetCount, 2000, "cuDeviceGetCount", true) \
	X(cuDeviceGet, 2000, "cuDeviceGet", true) \
	X(cuDeviceGetName, 2000, "cuDeviceGetName", true) \
	X(cuDeviceTotalMem, 3020, "cuDeviceTotalMem_v2", true) \
	X(cuDeviceGetAttribute, 2000, "cuDeviceGetAttribute", true) \
	X(cuDeviceGetPCIBusId, 4010, "cuDeviceGetPCIBusId", true) \
	X(cuDeviceGetByPCIBusId, 4010, "cuDeviceGetByPCIBusId", true) \
	X(cuDeviceGetUuid, 9020, "cuDeviceGetUuid", true) \
	X(cuDevicePrimaryCtxRetain, 7000, "cuDevicePrimaryCtxRetain", true) \
	X(cuDevicePrimaryCtxRelease, 11000, "cuDevicePrimaryCtxRelease_v2", \
	    true) \
	X(cuCtxSetCurrent, 4000, "cuCtxSetCurrent", true) \
	X(cuModuleLoadData, 2000, "cuModuleLoadData", true) \
	X(cuModuleUnload, 2000, "cuModuleUnload", true) \
	X(cuModuleGetFunction, 2000, "cuModuleGetFunction", true) \
	X(cuLaunchKernel, 4000, "cuLaunchKernel", true) \
	X(cuStreamCreate, 2000, "cuStreamCreate", true) \
	X(cuStreamDestroy, 4000, "cuStreamDestroy_v2", true) \
	X(cuEventCreate, 2000, "cuEventCreate", true) \
	X(cuEventRecord, 2000, "cuEventRecord", true) \
	X(cuEventQuery, 2000, "cuEventQuery", true) \
	X(cuEventElapsedTime, 2000, "cuEventElapsedTime", true) \
	X(cuEventDestroy, 4000, "cuEventDestroy_v2", true) \
	X(cuMemGetInfo, 3020, "cuMemGetInfo_v2", true) \
	X(cuMemAlloc, 3020, "cuMemAlloc_v2", true) \
	X(cuMemFree, 3020, "cuMemFree_v2", true) \
	X(cuMemsetD8Async, 3020, "cuMemsetD8Async", true) \
	X(cuMemcpyDtoHAsync, 3020, "cuMemcpyDtoHAsync_v2", true) \
	X(cuMemGetAllocationGranularity, 10020, \
	    "cuMemGetAllocationGranularity", false) \
	X(cuMemCreate, 10020, "cuMemCreate", false) \
	X(cuMemRelease, 10020, "cuMemRelease", false) \
	X(cuMemAddressReserve, 10020, "cuMemAddressReserve", false) \
	X(cuMemAddressFree, 10020, "cuMemAddressFree", false) \
	X(cuMemMap, 10020, "cuMemMap", false) \
	X(cuMemUnmap, 10020, "cuMemUnmap", false) \
	X(cuMemSetAccess, 10020, "cuMemSetAccess", false)

/* The oldest driver API the required entry points need: CUDA 11.0. */
#define CL_DRIVER_MIN 11000

/*
 * A field of the type of that version's signature.  The tokens are pasted
 * here, unexpanded: cuda.h defines many names as macros of their _v2
 * (cuMemAlloc is cuMemAlloc_v2), and the field itself may take that name,
 * the same everywhere this header is included.
 */
#define CL_FIELD(name, ver, sym, req) PFN_##name##_v##ver name;

/* The loaded driver; a field is NULL when the driver lacks it. */
typedef struct {
	void *dl;               /* the dlopen handle of libcuda.so.1 */
	int version;            /* cuDriverGetVersion: 12040 is CUDA 12.4 */
	bool proc_address;      /* resolved with cuGetProcAddress */
	bool vmm;               /* every VMM entry point is there */
	CL_ENTRIES(CL_FIELD)
	/* cuDeviceGetUuid at CUDA 11.4's signature (cuDeviceGetUuid_v2),
	 * which gives a MIG instance's own UUID where the first gives
	 * none of its own (CUDA Driver API, Device Management); NULL on
	 * older drivers.  Outside CL_ENTRIES: the same name at two
	 * versions, and optional without being part of the VMM set. */
	PFN_cuDeviceGetUuid_v11040 cuDeviceGetUuid2;
} cl_lib;

/* Why cl_open failed. */
typedef enum {
	CL_OK,
	CL_NO_DRIVER,           /* libcuda.so.1 cannot be loaded */
	CL_TOO_OLD,             /* the driver lacks what we call */
} cl_status;

/*
 * Loads the driver (path, or libcuda.so.1 when NULL) into *lib and calls
 * cuInit; on failure, says why in msg (size cap) and leaves nothing
 * loaded.  cuInit's own errors (no device, a driver that does not match
 * its kernel module) come back through *init with CL_OK: the library is
 * loaded and can name them.
 */
cl_status cl_open(cl_lib *lib, const char *path, CUresult *init, char *msg,
    size_t cap);

/* "what: the driver's string (CUDA_ERROR_NAME)" into msg. */
void cl_describe(const cl_lib *lib, CUresult r, const char *what, char *msg,
    size_t cap);

void cl_close(cl_lib *lib);

#endif

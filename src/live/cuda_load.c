/*
 * cuda_load.c: the CUDA driver API through dlopen (see cuda_load.h).
 *
 * cuGetProcAddress (CUDA 11.3, driver R465) is looked up with dlsym under
 * its first name, whose signature (symbol, pfn, version, flags) every
 * driver since keeps; CUDA 12's cuGetProcAddress_v2 only adds a status
 * out-parameter.  Each entry point is then asked for at the API version
 * of the signature this file was compiled against, so a driver newer
 * than the toolkit still gives the old signature (the driver keeps them
 * all), and one older than a signature says "not found" instead of
 * handing over a function with other arguments.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cuda_load.h"

typedef CUresult (*cl_getproc_fn)(const char *, void **, int, cuuint64_t);

/* One entry point into *slot; false when the driver lacks it. */
static bool
cl_entry(cl_lib *lib, cl_getproc_fn getproc, const char *name, int version,
    const char *sym, void *slot)
{
	void *p = NULL;

	if (getproc != NULL) {
		if (getproc(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT) !=
		    CUDA_SUCCESS)
			p = NULL;
	} else {
		p = dlsym(lib->dl, sym);
	}
	/* ISO C has no conversion from void * to a function pointer. */
	memcpy(slot, &p, sizeof p);
	return p != NULL;
}

cl_status
cl_open(cl_lib *lib, const char *path, CUresult *init, char *msg, size_t cap)
{
	const char *missing = NULL;
	cl_getproc_fn getproc = NULL;
	void *p;

	memset(lib, 0, sizeof *lib);
	*init = CUDA_ERROR_NOT_INITIALIZED;
	lib->dl = dlopen(path != NULL ? path : "libcuda.so.1",
	    RTLD_NOW | RTLD_LOCAL);
	if (lib->dl == NULL) {
		snprintf(msg, cap, "%s", dlerror());
		return CL_NO_DRIVER;
	}
	p = dlsym(lib->dl, "cuGetProcAddress");
	memcpy(&getproc, &p, sizeof p);
	lib->proc_address = getproc != NULL;
	/* The toolkit's stub (lib64/stubs/libcuda.so, for linking only)
	 * answers every call with CUDA_ERROR_STUB_LIBRARY. */
	if (getproc != NULL && getproc("cuInit", &p, 2000,
	    CU_GET_PROC_ADDRESS_DEFAULT) == CUDA_ERROR_STUB_LIBRARY) {
		snprintf(msg, cap, "%s is the CUDA toolkit's stub library, "
		    "not a driver", path != NULL ? path : "libcuda.so.1");
		cl_close(lib);
		return CL_NO_DRIVER;
	}
	lib->vmm = true;
#define CL_RESOLVE(name, ver, sym, req) \
	if (!cl_entry(lib, getproc, #name, ver, sym, &lib->name)) { \
		if (req && missing == NULL) \
			missing = #name; \
		if (!req) \
			lib->vmm = false; \
	}
	CL_ENTRIES(CL_RESOLVE)
#undef CL_RESOLVE
	if (lib->cuDriverGetVersion == NULL ||
	    lib->cuDriverGetVersion(&lib->version) != CUDA_SUCCESS)
		lib->version = 0;
	/* cuGetProcAddress gives the newest version it has that is not
	 * newer than the one asked for: a driver before CUDA 11.4 would
	 * hand over the first cuDeviceGetUuid, which gives a MIG instance's
	 * GPU's UUID, under the name of the second. */
	if (lib->version >= 11040)
		(void)cl_entry(lib, getproc, "cuDeviceGetUuid", 11040,
		    "cuDeviceGetUuid_v2", &lib->cuDeviceGetUuid2);
	if (missing != NULL || lib->version < CL_DRIVER_MIN) {
		snprintf(msg, cap, "the NVIDIA driver supports CUDA %d.%d, and "
		    "oomdoc needs the driver API of CUDA %d.%d or later (driver "
		    "R450 on)%s%s", lib->version / 1000,
		    lib->version % 1000 / 10, CL_DRIVER_MIN / 1000,
		    CL_DRIVER_MIN % 1000 / 10, missing != NULL ? ": it lacks " :
		    "", missing != NULL ? missing : "");
		cl_close(lib);
		return CL_TOO_OLD;
	}
	*init = lib->cuInit(0);
	return CL_OK;
}

void
cl_describe(const cl_lib *lib, CUresult r, const char *what, char *msg,
    size_t cap)
{
	const char *s = NULL, *name = NULL;

	if (lib->cuGetErrorString == NULL ||
	    lib->cuGetErrorString(r, &s) != CUDA_SUCCESS)
		s = NULL;
	if (lib->cuGetErrorName == NULL ||
	    lib->cuGetErrorName(r, &name) != CUDA_SUCCESS)
		name = NULL;
	if (name != NULL)
		snprintf(msg, cap, "%s: %s (%s)", what, s != NULL ? s :
		    "driver error", name);
	else
		snprintf(msg, cap, "%s: driver error %d", what, (int)r);
}

void
cl_close(cl_lib *lib)
{
	if (lib->dl != NULL)
		dlclose(lib->dl);
	memset(lib, 0, sizeof *lib);
}

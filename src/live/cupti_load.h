/*
 * cupti_load.h: CUPTI's activity API, loaded at run time with dlopen,
 * recording the memory activity (CUPTI_ACTIVITY_KIND_MEMORY2: each
 * allocation and release, the driver's own included) of this process, so
 * that the report shows what each probe really took.  Built with the CUDA
 * backend only; a machine without CUPTI, or whose CUPTI refuses (another
 * subscriber: before CUDA 13.2 and driver r610 a process has only one),
 * runs live mode all the same, with a note.
 */
#ifndef OD_CUPTI_LOAD_H
#define OD_CUPTI_LOAD_H

#include "device.h"

typedef struct ct_lib ct_lib;

/*
 * Loads CUPTI (path, or the usual names when NULL) and starts recording.
 * Call before the CUDA context is created.  NULL, with a one-line note of
 * why, when it cannot.
 */
ct_lib *ct_open(const char *path, char *note, size_t len);
/* Flushes the records and moves what they add up to into *out. */
void ct_take(ct_lib *ct, dv_activity *out);
void ct_close(ct_lib *ct);

/*
 * Adds one memory record to a: operation 1 is an allocation, 2 a
 * release (CUpti_ActivityMemoryOperationType); kind 3 is device memory
 * (CUpti_ActivityMemoryKind); source is the shared object that asked, or
 * NULL.  Exposed for the tests.
 */
void ct_account(dv_activity *a, int operation, int kind, uint64_t bytes,
    const char *source);

#endif

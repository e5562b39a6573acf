/*
 * nvml_load.h: NVML, loaded at run time with dlopen, for what live mode
 * reads without a CUDA context: the processes that hold memory, the
 * device's memory, the ECC, remapped-row and retired-page counters, and
 * the driver's release.  Nothing links against libnvidia-ml: a machine
 * without it runs oomdoc all the same, and live mode says what it could
 * not read.  Symbols are resolved one by one, newest version first, so
 * that a driver whose NVML lacks one still gives the others.
 */
#ifndef OD_NVML_LOAD_H
#define OD_NVML_LOAD_H

#include "device.h"

typedef struct nv_lib nv_lib;

/*
 * Loads NVML (path, or libnvidia-ml.so.1 when NULL), initialises it and
 * finds the device: by PCI bus id when one is given, else by index.
 * NULL, with a one-line note of why, when any step fails.
 */
nv_lib *nv_open(const char *path, const char *pci_bus_id, int index,
    char *note, size_t len);
/* The same by UUID: a GPU's (GPU-...) or a MIG instance's (MIG-...),
 * whose counters are then read on its parent GPU. */
nv_lib *nv_open_uuid(const char *path, const char *uuid, char *note,
    size_t len);
void nv_close(nv_lib *nv);
/* The device's UUID, and a MIG instance's parent's ("" for a GPU), each
 * of len bytes; false when NVML does not say. */
bool nv_uuids(nv_lib *nv, char *uuid, char *parent, size_t len);

/* The compute processes holding memory on the device; *ok false when
 * NVML could not list them. */
int nv_processes(nv_lib *nv, dv_proc *v, int cap, bool *ok);
/* The device's memory as NVML counts it (used includes the driver's
 * reserve on _v2); false when it cannot be read. */
bool nv_memory(nv_lib *nv, int64_t *total, int64_t *used,
    int64_t *reserved);
/* The health counters that this device and driver support; the others
 * OD_UNKNOWN, with why. */
void nv_health(nv_lib *nv, dv_health *out);
/* The driver's release, "580.65.06". */
bool nv_driver_release(nv_lib *nv, char *buf, size_t len);

#endif

/*
 * bandwidth_ref.h: what each GPU model's memory reaches in STREAM triad,
 * as measured and published (bandwidth_ref.c cites each row), so that
 * the health probe judges its own triad against what the part does, not
 * against clock x bus width, which no kernel reaches.
 */
#ifndef OD_BANDWIDTH_REF_H
#define OD_BANDWIDTH_REF_H

#include <stdint.h>

typedef struct {
	const char *name;       /* the device name, exactly as the driver
	                         * gives it (cuDeviceGetName, nvidia-smi) */
	double triad_bps;       /* bytes read + written per second, 10^9 GB */
	const char *how;        /* what measured it, on what */
	const char *source;     /* where it is published */
} bw_ref;

/* The row for the device called name, or NULL: no reference for it. */
const bw_ref *bw_ref_find(const char *name);

/* The factor of the reference below which bandwidth is suspect. */
#define BW_REF_FACTOR 0.80

#endif

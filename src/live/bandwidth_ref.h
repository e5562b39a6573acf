/*
 * bandwidth_ref.h: what each GPU model's memory reaches in STREAM triad,
 * so that the health probe judges its own triad against what the part
 * does, not against clock x bus width, which no kernel reaches.
 * bandwidth_ref.c cites each row: a published BabelStream triad where
 * there is one, else the data sheet's peak times BW_REF_PEAK_FRACTION,
 * said as such wherever the figure is printed.
 */
#ifndef OD_BANDWIDTH_REF_H
#define OD_BANDWIDTH_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	const char *name;       /* the device name, exactly as the driver
	                         * gives it (cuDeviceGetName, nvidia-smi) */
	double triad_bps;       /* the reference: bytes read + written per
	                         * second, 10^9 per GB */
	double peak_bps;        /* the data sheet's peak memory bandwidth */
	bool measured;          /* triad_bps is a published triad, not
	                         * peak_bps x BW_REF_PEAK_FRACTION */
	const char *how;        /* what measured it, on what; or that it
	                         * is the peak */
	const char *source;     /* where it is published */
} bw_ref;

/*
 * The row for the device called name, or NULL: no reference for it.
 * Older drivers gave names without "NVIDIA " in front
 * ("A100-SXM4-40GB" with 460.32.03); such a name finds the same row.
 */
const bw_ref *bw_ref_find(const char *name);

/* All the rows, *n of them (for the tests). */
const bw_ref *bw_ref_table(size_t *n);

/* Into out (size cap) what the row's figure is, for the reports: "what
 * it reaches in BabelStream" or "83% of its data sheet peak of ...". */
void bw_ref_basis(const bw_ref *ref, char *out, size_t cap);

/* The factor of the reference below which bandwidth is suspect. */
#define BW_REF_FACTOR 0.80

/*
 * The share of the data sheet peak a row without a published triad
 * takes as what the part reaches: the smallest ratio of published triad
 * to peak among the measured rows (A100-SXM4-80GB, 1.70 of 2.039 TB/s,
 * 0.834; H100 SXM 0.887; H200 0.865), rounded down.  The one GDDR6
 * BabelStream triad at hand reached more (304 of 336 GB/s, 0.90, on a
 * GeForce RTX 2060: alpaka-group/alpaka#1874), so for the L40S and L4
 * the figure, if wrong, errs low, and a low reference errs towards not
 * calling bandwidth suspect.
 */
#define BW_REF_PEAK_FRACTION 0.83

#endif

/*
 * kernels.h: what device_cuda.c knows of live mode's CUDA kernels.
 *
 * The .cu files here are compiled by nvcc into one fatbin (SASS for each
 * architecture the build names, and PTX of the newest for the driver to
 * JIT on later GPUs), and into PTX of the oldest, which the build embeds
 * as the byte arrays below (cmake/embed.cmake).  device_cuda.c loads one
 * with cuModuleLoadData (the fatbin, or the PTX when the driver refuses
 * it) and
 * finds each kernel by its unmangled name (they are extern "C"), then
 * launches it with cuLaunchKernel with the parameters listed here, in
 * this order.  Every kernel is a grid-stride loop, so any grid covers any
 * buffer; the host splits large buffers into slices so that one launch
 * stays short and the time limit can be checked between launches.
 */
#ifndef OD_KERNELS_H
#define OD_KERNELS_H

#include <stddef.h>

/* The patterns of the memory test (shared with the fake device). */
#include "pattern_values.h"

/*
 * The kernels (pattern.cu, fill.cu, bandwidth.cu) and their parameters:
 *
 *   kn_pattern_write  (uint64_t *p, size_t n, int pattern, uint64_t seed)
 *   kn_pattern_check  (const uint64_t *p, size_t n, int pattern,
 *                      uint64_t seed, unsigned long long *errors,
 *                      unsigned long long *bad, unsigned max_bad)
 *       each mismatch adds one to *errors; the first max_bad mismatching
 *       addresses go to bad[] (both in device memory); seed is the
 *       random pattern's (KN_RANDOM), unused by the static ones
 *   kn_mi_step        (uint64_t *p, size_t n, uint64_t expect,
 *                      uint64_t write, int check, int descending,
 *                      unsigned long long *errors, unsigned long long *bad,
 *                      unsigned max_bad)
 *       one step of moving inversions: read and check expect (when
 *       check), then write; each thread's words from the top when
 *       descending
 *   kn_fill           (unsigned char *p, size_t n, unsigned char v)
 *   kn_init           (double *a, size_t n, double v)
 *   kn_copy           (double *c, const double *a, size_t n)
 *   kn_triad          (double *a, const double *b, const double *c,
 *                      double scalar, size_t n)
 *       n even, arrays 16-byte aligned: double2 loads, KN_UNROLL deep
 *   kn_count_ne       (const double *x, size_t n, double expect,
 *                      unsigned long long *count)
 */
#define KN_THREADS 256          /* threads per block, but the bandwidth
                                 * search's (KN_BW_THREADS) */
#define KN_UNROLL 4             /* 16-byte loads in flight per thread */

/* The fatbin, generated at build time from the .cu files. */
extern const unsigned char od_kernels_fatbin[];
extern const size_t od_kernels_fatbin_size;

/*
 * The fallback image: PTX text (NUL-terminated) of the same kernels for
 * the oldest architecture (OOMDOC_PTX_ARCH, sm_75), whose .version is set
 * down to OOMDOC_PTX_ISA (7.0: CUDA 11.0) and checked by ptxas at build
 * time, for drivers that refuse the fatbin (CMakeLists.txt).
 */
extern const unsigned char od_kernels_ptx[];
extern const size_t od_kernels_ptx_size;

#endif

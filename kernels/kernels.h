/*
 * kernels.h: the C entry points of live mode's CUDA kernels, the only
 * symbols of the .cu files here that device_cuda.c uses.  Each launches its
 * kernel on stream (a cudaStream_t) over n elements and returns the
 * launch's cudaError_t as an int; it does not wait.  The host side splits
 * large buffers into slices so that one launch stays short and the time
 * limit can be checked between launches.
 */
#ifndef OD_KERNELS_H
#define OD_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The patterns of the memory test, written and read back in turn. */
enum {
	KN_ZEROS,               /* 0x0000... */
	KN_ONES,                /* 0xffff... */
	KN_AA,                  /* 0xaaaa...: alternate bits */
	KN_55,                  /* 0x5555... */
	KN_ADDRESS,             /* each word holds its own address */
	KN_NOT_ADDRESS,         /* and then the complement of it */
	KN_PATTERNS
};

/* Writes pattern over the n 64-bit words at p. */
int kn_pattern_write(uint64_t *p, size_t n, int pattern, int blocks,
    void *stream);

/*
 * Reads the n words at p back against pattern: each mismatch adds one to
 * *errors, and the first max_bad mismatching addresses go to bad[] (both
 * in device memory).
 */
int kn_pattern_check(const uint64_t *p, size_t n, int pattern,
    unsigned long long *errors, unsigned long long *bad, unsigned max_bad,
    int blocks, void *stream);

/* Writes v into every byte of the n bytes at p (touches the memory). */
int kn_fill(void *p, size_t n, unsigned char v, int blocks, void *stream);

/* Bandwidth: a[i] = v; c[i] = a[i]; a[i] = b[i] + scalar * c[i]. */
int kn_init(double *a, size_t n, double v, int blocks, void *stream);
int kn_copy(double *c, const double *a, size_t n, int blocks, void *stream);
int kn_triad(double *a, const double *b, const double *c, double scalar,
    size_t n, int blocks, void *stream);
/* Counts the elements of x that are not expect into *count (device). */
int kn_count_ne(const double *x, size_t n, double expect,
    unsigned long long *count, int blocks, void *stream);

#ifdef __cplusplus
}
#endif

#endif

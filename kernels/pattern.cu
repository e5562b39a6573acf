/*
 * pattern.cu: the memory test, in the manner of cuda_memtest and
 * memtest86: static and random patterns written over a buffer and read
 * back, and moving inversions (src/live/pattern_values.h says what each
 * writes); every word that differs is counted and its address kept (the
 * first few).  Grid-stride loops, so any grid covers any buffer.
 */
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

/* One mismatch: counted, and its address kept among the first max_bad. */
__device__ static void
kn_bad(uint64_t a, unsigned long long *errors, unsigned long long *bad,
    unsigned max_bad)
{
	unsigned long long k = atomicAdd(errors, 1ULL);

	if (k < max_bad)
		bad[k] = a;
}

extern "C" __global__ void
kn_pattern_write(uint64_t *p, size_t n, int pattern, uint64_t seed)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		p[i] = kn_value(pattern, (uint64_t)(uintptr_t)&p[i], seed);
}

extern "C" __global__ void
kn_pattern_check(const uint64_t *p, size_t n, int pattern, uint64_t seed,
    unsigned long long *errors,
    unsigned long long *bad, unsigned max_bad)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride) {
		uint64_t a = (uint64_t)(uintptr_t)&p[i];

		if (p[i] != kn_value(pattern, a, seed))
			kn_bad(a, errors, bad, max_bad);
	}
}

/*
 * One step of moving inversions over a slice: each word is read and
 * compared with expect (when check is set), then write is written to it.
 * With descending set each thread walks its words from the top down, and
 * the host launches the slices from the last; the threads of a launch
 * run together, so on a GPU "ascending" is the order of each thread's
 * words and of the slices, not a single sweep.
 */
extern "C" __global__ void
kn_mi_step(uint64_t *p, size_t n, uint64_t expect, uint64_t write,
    int check, int descending, unsigned long long *errors,
    unsigned long long *bad, unsigned max_bad)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t k, count;

	if (i >= n)
		return;
	count = (n - 1 - i) / stride + 1;
	for (k = 0; k < count; k++) {
		size_t j = i + (descending ? count - 1 - k : k) * stride;

		if (check && p[j] != expect)
			kn_bad((uint64_t)(uintptr_t)&p[j], errors, bad,
			    max_bad);
		p[j] = write;
	}
}

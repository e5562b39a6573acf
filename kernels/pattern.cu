/*
 * pattern.cu: the memory test, in the manner of cuda_memtest and
 * memtest86: a pattern is written over a buffer, then read back, and
 * every word that differs is counted and its address kept (the first few).
 * Grid-stride loops, so any grid covers any buffer.
 */
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

/* The value pattern puts at address a. */
__device__ static uint64_t
kn_value(int pattern, uint64_t a)
{
	switch (pattern) {
	case KN_ZEROS: return 0;
	case KN_ONES: return ~0ULL;
	case KN_AA: return 0xaaaaaaaaaaaaaaaaULL;
	case KN_55: return 0x5555555555555555ULL;
	case KN_ADDRESS: return a;
	default: return ~a;
	}
}

extern "C" __global__ void
kn_pattern_write(uint64_t *p, size_t n, int pattern)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		p[i] = kn_value(pattern, (uint64_t)(uintptr_t)&p[i]);
}

extern "C" __global__ void
kn_pattern_check(const uint64_t *p, size_t n, int pattern,
    unsigned long long *errors,
    unsigned long long *bad, unsigned max_bad)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride) {
		uint64_t a = (uint64_t)(uintptr_t)&p[i];

		if (p[i] != kn_value(pattern, a)) {
			unsigned long long k = atomicAdd(errors, 1ULL);

			if (k < max_bad)
				bad[k] = a;
		}
	}
}

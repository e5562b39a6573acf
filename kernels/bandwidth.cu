/*
 * bandwidth.cu: STREAM's copy and triad over doubles (as BabelStream
 * runs them), an initialiser, and a check of the results, since a fast
 * kernel that computes the wrong thing measures nothing.  The host times
 * them with events and counts bytes read plus bytes written.
 */
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

extern "C" __global__ void
kn_init(double *a, size_t n, double v)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		a[i] = v;
}

extern "C" __global__ void
kn_copy(double *__restrict__ c, const double *__restrict__ a, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		c[i] = a[i];
}

extern "C" __global__ void
kn_triad(double *__restrict__ a, const double *__restrict__ b,
    const double *__restrict__ c, double s, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		a[i] = b[i] + s * c[i];
}

extern "C" __global__ void
kn_count_ne(const double *x, size_t n, double expect,
    unsigned long long *count)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	unsigned long long mine = 0;

	for (; i < n; i += stride)
		if (x[i] != expect)
			mine++;
	if (mine > 0)
		atomicAdd(count, mine);
}

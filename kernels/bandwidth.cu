/*
 * bandwidth.cu: STREAM's copy and triad over doubles (as BabelStream
 * runs them), an initialiser, and a check of the results, since a fast
 * kernel that computes the wrong thing measures nothing.  The host times
 * them with events and counts bytes read plus bytes written.
 *
 * Copy and triad move 16 bytes per load and store (double2: one 128-bit
 * instruction) and keep KN_UNROLL of them in flight per thread before
 * the first store: memory bandwidth needs enough bytes in flight to
 * cover the latency (Little's law), which one 8-byte load per thread at
 * a time does not give on HBM parts.  The n doubles are n / 2 double2
 * (the host passes an even n on 16-byte aligned arrays, which cuMemAlloc
 * gives); each thread takes the elements i, i + stride, ... of the grid
 * as a grid-stride loop does, KN_UNROLL of them at a time, so a warp's
 * loads stay contiguous.
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

/* At most 1024 threads a block (the search's largest): the compiler
 * keeps the registers within what 1024 threads may have. */
extern "C" __global__ void __launch_bounds__(1024)
kn_copy(double *__restrict__ c, const double *__restrict__ a, size_t n)
{
	const double2 *__restrict__ a2 = (const double2 *)a;
	double2 *__restrict__ c2 = (double2 *)c;
	size_t n2 = n / 2;
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	double2 v[KN_UNROLL];
	int u;

	for (; i + (KN_UNROLL - 1) * stride < n2; i += KN_UNROLL * stride) {
#pragma unroll
		for (u = 0; u < KN_UNROLL; u++)
			v[u] = a2[i + u * stride];
#pragma unroll
		for (u = 0; u < KN_UNROLL; u++)
			c2[i + u * stride] = v[u];
	}
	for (; i < n2; i += stride)
		c2[i] = a2[i];
}

extern "C" __global__ void __launch_bounds__(1024)
kn_triad(double *__restrict__ a, const double *__restrict__ b,
    const double *__restrict__ c, double s, size_t n)
{
	double2 *__restrict__ a2 = (double2 *)a;
	const double2 *__restrict__ b2 = (const double2 *)b;
	const double2 *__restrict__ c2 = (const double2 *)c;
	size_t n2 = n / 2;
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	double2 x[KN_UNROLL], y[KN_UNROLL];
	int u;

	for (; i + (KN_UNROLL - 1) * stride < n2; i += KN_UNROLL * stride) {
#pragma unroll
		for (u = 0; u < KN_UNROLL; u++) {
			x[u] = b2[i + u * stride];
			y[u] = c2[i + u * stride];
		}
#pragma unroll
		for (u = 0; u < KN_UNROLL; u++)
			a2[i + u * stride] = make_double2(x[u].x + s * y[u].x,
			    x[u].y + s * y[u].y);
	}
	for (; i < n2; i += stride) {
		double2 p = b2[i], q = c2[i];

		a2[i] = make_double2(p.x + s * q.x, p.y + s * q.y);
	}
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

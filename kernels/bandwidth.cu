/*
 * bandwidth.cu: STREAM's copy and triad over doubles (as BabelStream
 * runs them), an initialiser, and a check of the results, since a fast
 * kernel that computes the wrong thing measures nothing.  The host times
 * them with events and counts bytes read plus bytes written.
 */
#include <cuda_runtime.h>

#include "kernels.h"

__global__ static void
kn_init_k(double *a, size_t n, double v)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		a[i] = v;
}

__global__ static void
kn_copy_k(double *__restrict__ c, const double *__restrict__ a, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		c[i] = a[i];
}

__global__ static void
kn_triad_k(double *__restrict__ a, const double *__restrict__ b,
    const double *__restrict__ c, double s, size_t n)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += stride)
		a[i] = b[i] + s * c[i];
}

__global__ static void
kn_count_ne_k(const double *x, size_t n, double expect,
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

extern "C" int
kn_init(double *a, size_t n, double v, int blocks, void *stream)
{
	kn_init_k<<<blocks, 256, 0, (cudaStream_t)stream>>>(a, n, v);
	return (int)cudaGetLastError();
}

extern "C" int
kn_copy(double *c, const double *a, size_t n, int blocks, void *stream)
{
	kn_copy_k<<<blocks, 256, 0, (cudaStream_t)stream>>>(c, a, n);
	return (int)cudaGetLastError();
}

extern "C" int
kn_triad(double *a, const double *b, const double *c, double scalar, size_t n,
    int blocks, void *stream)
{
	kn_triad_k<<<blocks, 256, 0, (cudaStream_t)stream>>>(a, b, c, scalar,
	    n);
	return (int)cudaGetLastError();
}

extern "C" int
kn_count_ne(const double *x, size_t n, double expect,
    unsigned long long *count, int blocks, void *stream)
{
	kn_count_ne_k<<<blocks, 256, 0, (cudaStream_t)stream>>>(x, n, expect,
	    count);
	return (int)cudaGetLastError();
}

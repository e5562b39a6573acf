/*
 * fill.cu: writes a byte over a buffer, 16 bytes at a time where the
 * buffer allows, so that memory the probes map or allocate is touched for
 * real (a mapping that cannot be written is no mapping).
 */
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

extern "C" __global__ void
kn_fill(unsigned char *p, size_t n, unsigned char v)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t words = n / 16;
	uint4 w;
	unsigned x = v * 0x01010101u;

	w.x = w.y = w.z = w.w = x;
	for (size_t k = i; k < words; k += stride)
		reinterpret_cast<uint4 *>(p)[k] = w;
	for (size_t k = words * 16 + i; k < n; k += stride)
		p[k] = v;
}

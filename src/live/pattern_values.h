/*
 * pattern_values.h: what the memory test writes, shared by the CUDA
 * kernels (kernels/pattern.cu, compiled by nvcc) and the fake device
 * (device_fake.c), so that the fake tests the same patterns the GPU gets.
 *
 * Three kinds of test, in the order they run:
 *
 *   static      six fixed patterns (zeros, ones, 0xaa..., 0x55..., each
 *               word's own address, its complement), each written over
 *               the buffer and read back;
 *   moving      Memtest86's "moving inversions" (memtest86 tests 3 and
 *   inversions  5; Memtest86 Technical Information): write p; ascending,
 *               read each word, check p, write ~p; descending, read, check
 *               ~p, write p; then read p.  A read comes between a word's
 *               neighbours' writes, so a fault where writing one word
 *               disturbs another (a coupling fault) shows, in whichever
 *               direction it couples, where a write-all-then-read-all
 *               test rewrites the victim before reading it.  Two values
 *               of p: 0 (ones and zeros) and 0x5555... (alternate bits);
 *   random      a pseudo-random word at each address, from a 64-bit seed
 *               that the report prints, so the same seed writes the same
 *               values again: the word at address a is xorshift64
 *               (Marsaglia, "Xorshift RNGs", J. Stat. Softw. 8(14), 2003,
 *               shifts 13, 7, 17), two rounds, of the seed mixed with a
 *               times 2^64 / golden ratio.
 */
#ifndef OD_PATTERN_VALUES_H
#define OD_PATTERN_VALUES_H

#include <stdint.h>

#ifdef __CUDACC__
#define PV_FN __host__ __device__ static inline
#else
#define PV_FN static inline
#endif

/* The static patterns, then the random one (written and checked by the
 * same kernels). */
enum {
	KN_ZEROS,               /* 0x0000... */
	KN_ONES,                /* 0xffff... */
	KN_AA,                  /* 0xaaaa...: alternate bits */
	KN_55,                  /* 0x5555... */
	KN_ADDRESS,             /* each word holds its own address */
	KN_NOT_ADDRESS,         /* and then the complement of it */
	KN_PATTERNS,            /* the static ones */
	KN_RANDOM = KN_PATTERNS /* from the seed */
};

/* The moving-inversion values of p. */
#define KN_MI_PATTERNS 2

PV_FN uint64_t
kn_mi_value(int i)
{
	return i == 0 ? 0 : 0x5555555555555555ULL;
}

/* The random pattern's word at address a. */
PV_FN uint64_t
kn_random(uint64_t seed, uint64_t a)
{
	uint64_t x = seed ^ (a * 0x9e3779b97f4a7c15ULL);
	int round;

	if (x == 0)
		x = 0x9e3779b97f4a7c15ULL;  /* xorshift's one fixed point */
	for (round = 0; round < 2; round++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

/* The value pattern puts at address a. */
PV_FN uint64_t
kn_value(int pattern, uint64_t a, uint64_t seed)
{
	switch (pattern) {
	case KN_ZEROS: return 0;
	case KN_ONES: return ~0ULL;
	case KN_AA: return 0xaaaaaaaaaaaaaaaaULL;
	case KN_55: return 0x5555555555555555ULL;
	case KN_ADDRESS: return a;
	case KN_NOT_ADDRESS: return ~a;
	default: return kn_random(seed, a);
	}
}

#endif

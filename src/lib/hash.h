/*
 * hash.h: the one byte hash of the memos (extract.c's rounds, prefix.c's
 * lines, recogniser.c's pattern answers).  Not for anything an attacker
 * could aim at: a collision only costs the memo a miss, since every memo
 * compares the bytes in full before it answers.
 */
#ifndef OOMDOC_HASH_H
#define OOMDOC_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* FNV-1a's offset basis, the seed of every memo's hash. */
#define OD_HASH_SEED 1469598103934665603ULL

/*
 * h mixed with t[0..len): eight bytes a step (a byte a step is a chain
 * of 64 multiplies, and a dense input hashes every text it joins), the
 * tail a byte a step as FNV-1a does.
 */
static inline uint64_t
od_hash_bytes(uint64_t h, const char *t, size_t len)
{
	uint64_t w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, t + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ (unsigned char)t[i]) * 1099511628211ULL;
	return h;
}

#endif

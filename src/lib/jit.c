/*
 * jit.c: whether to compile the patterns to machine code.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

/*
 * Whether to compile the patterns to machine code (PCRE2's JIT).  Only to
 * run under valgrind, which cannot see into JIT code and reports false
 * errors there, does OOMDOC_NO_JIT=1 turn it off: matching is the same,
 * only slower.
 */
bool
od_jit_wanted(void)
{
	const char *v = getenv("OOMDOC_NO_JIT");

	return v == NULL || strcmp(v, "1") != 0;
}

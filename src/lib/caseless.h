/*
 * caseless.h: the one caseless substring search (decide.c's words of a
 * line, extract.c's caseless anchors, recog_check.c's examples), ASCII
 * letters only: a byte outside 'A'..'Z' and 'a'..'z' matches only itself.
 */
#ifndef OOMDOC_CASELESS_H
#define OOMDOC_CASELESS_H

#include <stddef.h>

/* The first place in t[0..len) where w[0..wl) occurs, letters compared
 * caselessly, or NULL; t itself for an empty w. */
static inline const char *
od_caseless_find(const char *t, size_t len, const char *w, size_t wl)
{
	size_t i, k;

	for (i = 0; i + wl <= len; i++) {
		for (k = 0; k < wl; k++) {
			char a = t[i + k], b = w[k];

			if (a >= 'A' && a <= 'Z')
				a = (char)(a - 'A' + 'a');
			if (b >= 'A' && b <= 'Z')
				b = (char)(b - 'A' + 'a');
			if (a != b)
				break;
		}
		if (k == wl)
			return t + i;
	}
	return NULL;
}

#endif

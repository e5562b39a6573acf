/*
 * utf8.c: the one UTF-8 decoder, used by every escaper (reports, live
 * reports) to tell valid text from bytes to show as \xNN.
 */
#include "core.h"

/*
 * The length of the valid UTF-8 sequence at p (at most n bytes), or 0 when
 * it is not one: overlong forms, surrogates and values past U+10FFFF are
 * invalid.  *cp receives the code point.
 */
size_t
od_utf8_decode(const unsigned char *p, size_t n, unsigned *cp)
{
	unsigned c = p[0], v;
	size_t len, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && v < 0x800) || (len == 4 && v < 0x10000) ||
	    v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

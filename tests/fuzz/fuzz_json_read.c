/*
 * fuzz_json_read.c: libFuzzer target for the JSON reader of live mode
 * (json_read.c), which reads reports made elsewhere, perhaps by someone
 * else.
 *
 * Each input is parsed; a failure must come with a message and a line;
 * a document is walked whole (every value, as deep as the reader
 * allows), with every accessor called on every value, and
 * each container's count must be what the walk finds.  Any crash, leak,
 * sanitizer report or broken invariant is a bug.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Calls every accessor on v; checks what can be checked. */
static void
fz_touch(const jr_doc *d, jr_ref v)
{
	size_t n = 0;
	const char *s = jr_str(d, v, &n);
	int64_t i;
	double x;

	if (s != NULL && s[n] != '\0')
		abort();
	(void)jr_int(d, v, &i);
	if (jr_num(d, v, &x) != (jr_type_of(d, v) == JR_NUMBER))
		abort();
	(void)jr_key(d, v, &n);
	(void)jr_get(d, v, "schema");
	(void)jr_get(d, v, "");
}

/* Walks v and what it holds; depth is bounded by the reader's limit. */
static void
fz_walk(const jr_doc *d, jr_ref v, int depth)
{
	size_t count = 0;
	jr_ref c;

	if (depth > JR_DEPTH_MAX)
		abort();
	fz_touch(d, v);
	for (c = jr_first(d, v); c >= 0; c = jr_next(d, c)) {
		count++;
		if (jr_type_of(d, v) == JR_OBJECT && jr_key(d, c, NULL) == NULL)
			abort();
		fz_walk(d, c, depth + 1);
	}
	if (count != jr_count(d, v))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	od_error err;
	jr_doc *d;

	if (size > 1 << 20)
		return 0;
	memset(&err, 0, sizeof err);
	d = jr_parse((const char *)data, size, &err);
	if (d == NULL) {
		if (err.msg[0] == '\0' || err.line == 0)
			abort();
		return 0;
	}
	if (jr_root(d) < 0)
		abort();
	fz_walk(d, jr_root(d), 0);
	jr_free(d);
	return 0;
}

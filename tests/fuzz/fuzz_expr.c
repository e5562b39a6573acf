/*
 * fuzz_expr.c: libFuzzer target for the rule language (expr.c).
 *
 * Each input is parsed as an expression and as a template, against a fact
 * table that knows some names and leaves others unknown; what parses is
 * evaluated, formatted and rendered (into a roomy buffer and into tiny
 * ones, to exercise truncation), and everything is freed.  Any crash,
 * leak, sanitizer report or broken invariant (a render that is not
 * NUL-terminated, an error without a column) is a bug.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
	const char *name;
	xv_type type;
	double num;
	bool bytes;
	const char *str;
} fz_facts[] = {
	{ "requested", XV_NUM, 2147483648.0, true, NULL },
	{ "reserved_unallocated", XV_NUM, 3221225472.0, true, NULL },
	{ "total", XV_NUM, 85899345920.0, true, NULL },
	{ "host.anon_rss", XV_NUM, -1048576.5, true, NULL },
	{ "n", XV_NUM, 3, false, NULL },
	{ "zero", XV_NUM, 0, false, NULL },
	{ "tiny", XV_NUM, 1e-300, false, NULL },
	{ "huge", XV_NUM, 1.7e308, true, NULL },
	{ "name", XV_STR, 0, false, "py\xc3\xa9thon" },
	{ "empty", XV_STR, 0, false, "" },
	{ "reserved", XV_NUM, 4294967296.0, true, NULL },
	{ "limit", XV_NUM, 17179869184.0, true, NULL },
	{ "framework", XV_STR, 0, false, "pytorch" },
	{ "format", XV_STR, 0, false, "capacity" },
	{ "process", XV_STR, 0, false, "it's" },
	{ "t", XV_BOOL, 1, false, NULL },
	{ "f", XV_BOOL, 0, false, NULL },
	/* Exist, but unknown for the event. */
	{ "u", XV_UNKNOWN, 0, false, NULL },
	{ "free", XV_UNKNOWN, 0, false, NULL },
	{ "allowed", XV_UNKNOWN, 0, false, NULL },
};

static int
fz_index(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof fz_facts / sizeof fz_facts[0]; i++)
		if (strlen(fz_facts[i].name) == len &&
		    memcmp(fz_facts[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

static bool
fz_exists(void *ctx, const char *name, size_t len)
{
	(void)ctx;
	return fz_index(name, len) >= 0;
}

static bool
fz_lookup(void *ctx, const char *name, size_t len, xv_value *out)
{
	int i = fz_index(name, len);

	(void)ctx;
	if (i < 0 || fz_facts[i].type == XV_UNKNOWN)
		return false;
	out->type = fz_facts[i].type;
	out->num = fz_facts[i].num;
	out->bytes = fz_facts[i].bytes;
	out->b = fz_facts[i].num != 0;
	out->str = fz_facts[i].str;
	out->len = fz_facts[i].str ? strlen(fz_facts[i].str) : 0;
	return true;
}

/* Checks that out[0..cap) holds a terminated string. */
static void
fz_terminated(const char *out, size_t cap)
{
	if (cap > 0 && memchr(out, '\0', cap) == NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[] = { 1, 2, 7, 4096 };
	const char *src = (const char *)data;
	char out[4096];
	od_error err;
	xp_expr *e;
	xp_template *t;
	xv_value v;
	size_t i;

	if (size > 20000)
		return 0;
	for (i = 0; i < 2; i++) {
		memset(&err, 0, sizeof err);
		e = xp_parse(src, size, i ? NULL : fz_exists, NULL, &err);
		if (e == NULL) {
			if (err.col == 0 || err.msg[0] == '\0')
				abort();
			continue;
		}
		v = xp_eval(e, fz_lookup, NULL);
		(void)xp_true(v);
		xp_format(v, out, sizeof out);
		fz_terminated(out, sizeof out);
		xp_format(v, out, 3);
		fz_terminated(out, 3);
		v = xp_eval(e, NULL, NULL);
		xp_format(v, out, sizeof out);
		xp_free(e);
	}
	memset(&err, 0, sizeof err);
	t = xp_template_parse(src, size, fz_exists, NULL, &err);
	if (t == NULL) {
		if (err.col == 0 || err.msg[0] == '\0')
			abort();
		return 0;
	}
	for (i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		memset(out, 'x', sizeof out);
		(void)xp_template_render(t, fz_lookup, NULL, out, caps[i]);
		fz_terminated(out, caps[i]);
		if (caps[i] < sizeof out && out[caps[i]] != 'x')
			abort();
	}
	(void)xp_template_render(t, NULL, NULL, out, sizeof out);
	xp_template_free(t);
	return 0;
}

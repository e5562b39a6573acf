/*
 * test_json_read.c: the JSON reader of live mode.  Values, escapes and
 * lookups; every kind of malformed input refused with its line and
 * column; the limits; and a report written by od_report_write read back
 * with the figures it holds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_read.h"
#include "core.h"

static jr_doc *
parse(const char *text)
{
	od_error err;
	jr_doc *d;

	memset(&err, 0, sizeof err);
	d = jr_parse(text, strlen(text), &err);
	if (d == NULL)
		fail_msg("%s: %llu:%llu: %s", text,
		    (unsigned long long)err.line, (unsigned long long)err.col,
		    err.msg);
	return d;
}

static void
test_values(void **state)
{
	jr_doc *d = parse(" {\"a\": [1, -2, 3.5e2, true, false, null],\n"
	    " \"s\": \"t\\u00e9\\n\\ud83d\\ude00\\\"\", \"o\": {}, \"e\": [],"
	    " \"big\": 123456789012345678901234567890, \"a\": 2}");
	jr_ref root = jr_root(d), a, v;
	int64_t i;
	double x;
	size_t n;
	const char *s;

	(void)state;
	assert_int_equal(jr_type_of(d, root), JR_OBJECT);
	assert_int_equal(jr_count(d, root), 6);
	/* The first of two equal keys wins. */
	a = jr_get(d, root, "a");
	assert_int_equal(jr_type_of(d, a), JR_ARRAY);
	assert_int_equal(jr_count(d, a), 6);
	v = jr_first(d, a);
	assert_true(jr_int(d, v, &i));
	assert_int_equal(i, 1);
	v = jr_next(d, v);
	assert_true(jr_int(d, v, &i));
	assert_int_equal(i, -2);
	v = jr_next(d, v);
	assert_false(jr_int(d, v, &i));
	assert_true(jr_num(d, v, &x));
	assert_true(x == 350.0);
	v = jr_next(d, v);
	assert_int_equal(jr_type_of(d, v), JR_TRUE);
	v = jr_next(d, jr_next(d, v));
	assert_int_equal(jr_type_of(d, v), JR_NULL);
	assert_int_equal(jr_next(d, v), -1);
	s = jr_str(d, jr_get(d, root, "s"), &n);
	assert_non_null(s);
	assert_int_equal(n, 9);
	assert_memory_equal(s, "t\xc3\xa9\n\xf0\x9f\x98\x80\"", 10);
	assert_int_equal(jr_count(d, jr_get(d, root, "o")), 0);
	assert_int_equal(jr_first(d, jr_get(d, root, "e")), -1);
	/* Too big for int64_t: a number, not an integer. */
	assert_false(jr_int(d, jr_get(d, root, "big"), &i));
	assert_true(jr_num(d, jr_get(d, root, "big"), &x));
	/* Lookups that miss, chained. */
	assert_int_equal(jr_get(d, jr_get(d, root, "nope"), "x"), -1);
	assert_null(jr_str(d, a, NULL));
	assert_int_equal(jr_type_of(d, -1), JR_NULL);
	assert_string_equal(jr_key(d, jr_first(d, root), NULL), "a");
	jr_free(d);
	jr_free(NULL);
}

/* Malformed input: refused, with where. */
static void
test_errors(void **state)
{
	static const struct {
		const char *text;
		unsigned line, col;
		const char *msg;
	} cases[] = {
		{ "", 1, 1, "unexpected end" },
		{ "[1,]", 1, 4, "unexpected character" },
		{ "{\"a\" 1}", 1, 6, "expected ':'" },
		{ "{\"a\":1,}", 1, 8, "expected a string key" },
		{ "[01]", 1, 3, "leading zero" },
		{ "[1.]", 1, 4, "after '.'" },
		{ "[-]", 1, 3, "without digits" },
		{ "\"\\x\"", 1, 2, "unknown escape" },
		{ "\"\\ud800\"", 1, 8, "lone surrogate" },
		{ "\"\\udc00\"", 1, 8, "lone surrogate" },
		{ "\"a\tb\"", 1, 3, "control character" },
		{ "\"\xc3\x28\"", 1, 2, "invalid UTF-8" },
		{ "\"abc", 1, 5, "closing quote" },
		{ "{}\n {}", 2, 2, "more text" },
		{ "tru", 1, 1, "unexpected character" },
		{ "[1 2]", 1, 4, "expected ',' or ']'" },
		{ "{\"a\":1 \"b\":2}", 1, 8, "expected ',' or '}'" },
		{ "// comment\n1", 1, 1, "unexpected character" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		od_error err;
		jr_doc *d;

		memset(&err, 0, sizeof err);
		d = jr_parse(cases[i].text, strlen(cases[i].text), &err);
		if (d != NULL || err.line != cases[i].line ||
		    err.col != cases[i].col ||
		    strstr(err.msg, cases[i].msg) == NULL)
			fail_msg("%s: got %llu:%llu: %s", cases[i].text,
			    (unsigned long long)err.line,
			    (unsigned long long)err.col, err.msg);
	}
}

static void
test_limits(void **state)
{
	char deep[2 * JR_DEPTH_MAX + 8];
	od_error err;
	jr_doc *d;
	size_t k;

	(void)state;
	/* JR_DEPTH_MAX + 1 levels of arrays is the most there may be. */
	for (k = 0; k <= JR_DEPTH_MAX; k++)
		deep[k] = '[';
	for (k = 0; k <= JR_DEPTH_MAX; k++)
		deep[JR_DEPTH_MAX + 1 + k] = ']';
	d = jr_parse(deep, 2 * (JR_DEPTH_MAX + 1), &err);
	assert_non_null(d);
	jr_free(d);
	memmove(deep + 1, deep, 2 * (JR_DEPTH_MAX + 1));
	deep[0] = '[';
	deep[2 * JR_DEPTH_MAX + 3] = ']';
	d = jr_parse(deep, 2 * JR_DEPTH_MAX + 4, &err);
	assert_null(d);
	assert_non_null(strstr(err.msg, "nested too deeply"));
	d = jr_parse("0", (size_t)JR_INPUT_MAX + 1, &err);
	assert_null(d);
	assert_non_null(strstr(err.msg, "more than"));
	/* A NUL inside a string is kept, and counted. */
	d = jr_parse("\"a\\u0000b\"", 10, &err);
	assert_non_null(d);
	{
		size_t n;
		const char *s = jr_str(d, jr_root(d), &n);

		assert_int_equal(n, 3);
		assert_memory_equal(s, "a\0b", 4);
	}
	jr_free(d);
}

/* What oomdoc writes, the reader reads: the figures of a report. */
static void
test_report_round_trip(void **state)
{
	static const char log[] =
	    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
	    "2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 "
	    "GiB is free. Process 48213 has 59.20 GiB memory in use. "
	    "Including non-PyTorch memory, this process has 18.40 GiB memory "
	    "in use. Of the allocated memory 17.50 GiB is allocated by "
	    "PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.\n";
	od_error err;
	od_scanner *sc = od_scanner_new(true, &err);
	od_events *set = od_events_new();
	od_input in;
	od_report_opts o;
	char *out = NULL, name[] = "job.log";
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);
	jr_doc *d;
	jr_ref ev, mem, p;
	int64_t v;

	(void)state;
	memset(&in, 0, sizeof in);
	memset(&o, 0, sizeof o);
	o.format = OD_FORMAT_JSON;
	od_scan_buffer(sc, log, sizeof log - 1, 0, &in, set);
	in.name = name;
	od_report_write(f, &o, &in, 1, set);
	fclose(f);
	d = jr_parse(out, outlen, &err);
	assert_non_null(d);
	assert_string_equal(jr_str(d, jr_get(d, jr_root(d), "schema"), NULL),
	    "oomdoc.report/1");
	ev = jr_first(d, jr_get(d, jr_root(d), "events"));
	assert_string_equal(jr_str(d, jr_get(d, ev, "kind"), NULL),
	    "cuda_caching_allocator");
	mem = jr_get(d, ev, "memory");
	assert_true(jr_int(d, jr_get(d, mem, "requested_bytes"), &v));
	assert_int_equal(v, 2147483648LL);
	assert_int_equal(jr_type_of(d, jr_get(d, mem, "allowed_bytes")),
	    JR_NULL);
	p = jr_first(d, jr_get(d, mem, "other_processes"));
	assert_true(jr_int(d, jr_get(d, p, "pid"), &v));
	assert_int_equal(v, 48213);
	jr_free(d);
	free(out);
	od_events_free(set);
	od_scanner_free(sc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_report_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

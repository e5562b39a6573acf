/*
 * test_structured.c: the structured-line reader (structured.c): the text
 * each record shape gives, its time and labels, the map back to the
 * input's lines, and what goes through as it is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "structured.h"

typedef struct {
	char s[8192];
	size_t n;
} out_buf;

static void
collect(void *arg, const char *p, size_t n)
{
	out_buf *o = arg;

	assert_true(o->n + n < sizeof o->s);
	memcpy(o->s + o->n, p, n);
	o->n += n;
	o->s[o->n] = '\0';
}

/* Reads in in pieces of step bytes (0: one piece) into o. */
static sl_reader *
read_all(const char *in, size_t step, out_buf *o)
{
	sl_reader *r = sl_new();
	size_t n = strlen(in), at = 0;

	assert_non_null(r);
	o->n = 0;
	o->s[0] = '\0';
	sl_begin(r, collect, o);
	while (at < n) {
		size_t k = step == 0 || step > n - at ? n - at : step;

		sl_feed(r, in + at, k);
		at += k;
	}
	sl_finish(r);
	return r;
}

/* The text of in, whatever the pieces. */
static void
assert_text(const char *in, const char *want)
{
	size_t steps[] = { 0, 1, 2, 7, 64 }, i;

	for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
		out_buf o;
		sl_reader *r = read_all(in, steps[i], &o);

		assert_string_equal(o.s, want);
		sl_free(r);
	}
}

/* A record's line as the reader writes it: the time padded, then the
 * text (SL_TS_WIDTH). */
static const char *
rec(const char *ts, const char *text)
{
	static char b[4][512];
	static int k;
	char *s = b[k++ % 4];

	snprintf(s, sizeof b[0], "%-*s %s", SL_TS_WIDTH, ts, text);
	return s;
}

/* Concatenates up to four strings. */
static const char *
cat(const char *a, const char *b, const char *c, const char *d)
{
	static char s[2048];

	snprintf(s, sizeof s, "%s%s%s%s", a, b, c, d);
	return s;
}

static void
test_plain_through(void **state)
{
	(void)state;
	assert_text("a\n{not json\n2024-05-01 10:00:00 x\n\nlast",
	    "a\n{not json\n2024-05-01 10:00:00 x\n\nlast");
	/* A program's own JSON record: no shipper's key, as it is. */
	assert_text("{\"message\":\"m\",\"exc_info\":\"T\\nx\"}\n",
	    "{\"message\":\"m\",\"exc_info\":\"T\\nx\"}\n");
	/* A record cut short, and one that is not an object. */
	assert_text("{\"log\":\"x\",\"time\":\"2024-\n[1,2]\n",
	    "{\"log\":\"x\",\"time\":\"2024-\n[1,2]\n");
}

static void
test_docker_split(void **state)
{
	(void)state;
	/* Three records, one line; CRLF stripped; the time padded. */
	assert_text(
	    "{\"log\":\"ab\",\"stream\":\"stderr\",\"time\":\"2024-05-01T10:00:00.5Z\"}\n"
	    "{\"log\":\"cd\",\"stream\":\"stderr\",\"time\":\"2024-05-01T10:00:00.6Z\"}\n"
	    "{\"log\":\"ef\\r\\n\",\"stream\":\"stderr\",\"time\":\"2024-05-01T10:00:00.7Z\"}\n"
	    "plain\n",
	    cat(rec("2024-05-01T10:00:00.5Z", "abcdef\n"), "plain\n", "", ""));
}

static void
test_times(void **state)
{
	(void)state;
	/* Fluent Bit's seconds, journald's microseconds, Loki's
	 * nanoseconds, milliseconds, an offset kept. */
	assert_text("{\"date\":1714557600.25,\"log\":\"a\\n\"}\n",
	    rec("2024-05-01T10:00:00.250000Z", "a\n"));
	assert_text("{\"MESSAGE\":\"b\",\"__REALTIME_TIMESTAMP\":\"1714557600123456\"}\n",
	    rec("2024-05-01T10:00:00.123456Z", "b\n"));
	assert_text("{\"line\":\"c\",\"timestamp\":\"2024-05-01T12:00:00.1+02:00\"}\n",
	    rec("2024-05-01T12:00:00.1+02:00", "c\n"));
	assert_text("{\"message\":\"d\",\"timestamp\":1714557600123}\n",
	    rec("2024-05-01T10:00:00.123Z", "d\n"));
	/* No time the reader knows: the line alone. */
	assert_text("{\"message\":\"e\",\"timestamp\":\"yesterday\"}\n", "e\n");
}

static void
test_journald_bytes(void **state)
{
	(void)state;
	/* An array of bytes (an escape sequence in it), null, and an array
	 * with a value that is no byte (as it is). */
	assert_text("{\"MESSAGE\":[27,91,51,49,109,120]}\n{\"MESSAGE\":null}\n"
	    "{\"MESSAGE\":[300]}\n", "\x1b[31mx\n\n{\"MESSAGE\":[300]}\n");
}

static void
test_cri(void **state)
{
	(void)state;
	assert_text("2024-05-01T10:00:00.1Z stderr P ab\n"
	    "2024-05-01T10:00:00.2Z stderr P cd\r\n"
	    "2024-05-01T10:00:00.3Z stderr F ef\n"
	    "2024-05-01T10:00:00.4Z stdout F g\n"
	    "2024-05-01T10:00:00.5Z stderr P h\nplain\n",
	    "2024-05-01T10:00:00.1Z stderr P abcdef\n"
	    "2024-05-01T10:00:00.4Z stdout F g\n"
	    "2024-05-01T10:00:00.5Z stderr P h\nplain\n");
}

static void
test_loki_document(void **state)
{
	(void)state;
	/* Entries in the order of their times, across streams. */
	assert_text("{\"streams\":[{\"stream\":{\"pod\":\"a\"},\"values\":"
	    "[[\"1714557600300000000\",\"3\"],[\"1714557600100000000\",\"1\"]]},"
	    "{\"stream\":{\"pod\":\"b\"},\"values\":"
	    "[[\"1714557600200000000\",\"2\"]]}]}\n",
	    cat(rec("2024-05-01T10:00:00.100000000Z", "1\n"),
	    rec("2024-05-01T10:00:00.200000000Z", "2\n"),
	    rec("2024-05-01T10:00:00.300000000Z", "3\n"), ""));
}

static void
test_labels_and_lines(void **state)
{
	out_buf o;
	sl_reader *r;
	const od_labels *l;
	const char *second;

	(void)state;
	r = read_all("plain\n"
	    "{\"log\":\"x\\ny\\n\",\"kubernetes\":{\"pod_name\":\"p\\r\\n1\","
	    "\"namespace_name\":\"ns\",\"host\":\"h\"},\"date\":1714557600}\n"
	    "{\"log\":\"a\",\"stream\":\"stderr\",\"time\":\"2024-05-01T10:00:00Z\"}\n"
	    "{\"log\":\"b\\n\",\"stream\":\"stderr\",\"time\":\"2024-05-01T10:00:00Z\"}\n"
	    "tail\n", 5, &o);
	/* The text: plain, x and y (the record's two lines), ab, tail. */
	assert_non_null(strstr(o.s, "x\ny\n"));
	assert_null(sl_labels_at(r, 0));
	second = strchr(o.s, '\n') + 1;
	l = sl_labels_at(r, (uint64_t)(second - o.s));
	assert_non_null(l);
	assert_string_equal(l->pod, "p1");
	assert_string_equal(l->namespace_, "ns");
	assert_string_equal(l->host, "h");
	assert_string_equal(l->container, "");
	assert_null(sl_labels_at(r, (uint64_t)(strstr(o.s, "ab") - o.s)));
	/* Text lines 0..4 came from input lines 0, 1, 1, 2 (to 3), 4. */
	assert_int_equal(sl_input_line(r, 0), 0);
	assert_int_equal(sl_input_line(r, 1), 1);
	assert_int_equal(sl_input_line(r, 2), 1);
	assert_int_equal(sl_input_line(r, 3), 2);
	assert_int_equal(sl_input_line_end(r, 3), 3);
	assert_int_equal(sl_input_line(r, 4), 4);
	{
		uint64_t bytes, lines;

		sl_input(r, &bytes, &lines);
		assert_int_equal(lines, 5);
	}
	sl_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_through),
		cmocka_unit_test(test_docker_split),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_journald_bytes),
		cmocka_unit_test(test_cri),
		cmocka_unit_test(test_loki_document),
		cmocka_unit_test(test_labels_and_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

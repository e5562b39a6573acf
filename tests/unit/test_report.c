/*
 * test_report.c: what reaches the terminal and the JSON from a log is
 * escaped: no control sequence passes, JSON strings are valid UTF-8, and
 * no tag forms in HTML (src/lib/escape.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core.h"
#include "ut_recognisers.h"

/* Runs a report over text and returns what it wrote (caller frees). */
static char *
report(const char *text, size_t len, od_report_format fmt)
{
	od_error err;
	od_scanner *sc = od_scanner_new(true, ut_recognisers(), &err);
	od_events *set = od_events_new();
	od_input in = { 0 };
	od_report_opts o = { .format = fmt };
	char *out = NULL, name[] = "job\x1b]0;pwned\x07.log";
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);

	od_scan_buffer(sc, text, len, 0, &in, set);
	in.name = name;
	od_report_write(f, &o, &in, 1, set);
	fclose(f);
	od_events_free(set);
	od_scanner_free(sc);
	return out;
}

/* The NVML assert's pattern lets any byte through between its words.  A
 * whole escape sequence is left out of what is read (lines.c); one that a
 * control byte breaks (ESC [31, then 0x01) is not a sequence, and reaches
 * the report. */
static const char hostile[] = "RuntimeError: NVML_SUCCESS == \x1b[31\x01\xff"
    "\xc3\xa9 r INTERNAL ASSERT FAILED at \"../c10/cuda/CUDACachingAllocator"
    ".cpp\":950, please report a bug to PyTorch.\n";

static void
test_text_escapes(void **state)
{
	char *out = report(hostile, sizeof hostile - 1, OD_FORMAT_TEXT);

	(void)state;
	assert_null(strchr(out, '\x1b'));
	assert_null(strchr(out, '\x07'));
	assert_non_null(strstr(out, "\\x1b[31\\x01\\xff\xc3\xa9"));
	assert_non_null(strstr(out, "job\\x1b]0;pwned\\x07.log"));
	free(out);
}

static void
test_json_escapes(void **state)
{
	char *out = report(hostile, sizeof hostile - 1, OD_FORMAT_JSON);

	(void)state;
	assert_null(strchr(out, '\x1b'));
	/* The bad byte is U+FFFD, the controls escaped in lower case. */
	assert_non_null(strstr(out, "\\u001b[31\\u0001\xef\xbf\xbd\xc3\xa9"));
	assert_non_null(strstr(out, "\"requested_bytes\": null"));
	assert_non_null(strstr(out, "\"name\": \"job\\u001b]0;pwned\\u0007.log\""));
	free(out);
}

/* In HTML, log text is shown as in the text report, with the HTML
 * specials as references: a tag in a log is text. */
static void
test_html_escapes(void **state)
{
	static const char tag[] = "terminate called after throwing an "
	    "instance of <script>alert('x')</script> & \xe2\x80\xae \\x41: "
	    "out of memory\n";
	char *out = report(hostile, sizeof hostile - 1, OD_FORMAT_HTML);

	(void)state;
	assert_null(strchr(out, '\x1b'));
	assert_non_null(strstr(out, "\\x1b[31\\x01\\xff\xc3\xa9"));
	assert_non_null(strstr(out, "job\\x1b]0;pwned\\x07.log"));
	assert_non_null(strstr(out, "Content-Security-Policy"));
	free(out);
	out = report(tag, sizeof tag - 1, OD_FORMAT_HTML);
	assert_null(strstr(out, "<script"));
	assert_null(strstr(out, "\xe2\x80\xae"));
	assert_non_null(strstr(out, "&lt;script&gt;alert(&#39;x&#39;)"
	    "&lt;/script&gt; &amp; \\u202e \\\\x41:"));
	free(out);
}

/* What jansson leaves as it is, a terminal or JavaScript could act on:
 * DEL, the C1 controls, U+2028 and U+2029. */
static void
test_json_controls(void **state)
{
	static const char log[] = "RuntimeError: NVML_SUCCESS == \x7f\xc2\x9b"
	    "31m\xe2\x80\xa8\xe2\x80\xa9\x08\x0c\\/ r INTERNAL ASSERT FAILED at "
	    "\"../c10/cuda/CUDACachingAllocator.cpp\":950, please report a bug "
	    "to PyTorch.\n";
	char *out = report(log, sizeof log - 1, OD_FORMAT_JSON);

	(void)state;
	assert_null(strstr(out, "\x7f"));
	assert_null(strstr(out, "\xc2\x9b"));
	assert_null(strstr(out, "\xe2\x80\xa8"));
	assert_non_null(strstr(out, "== \\u007f\\u009b31m\\u2028\\u2029\\b\\f"
	    "\\\\/"));
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_escapes),
		cmocka_unit_test(test_json_escapes),
		cmocka_unit_test(test_json_controls),
		cmocka_unit_test(test_html_escapes),
	};

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}

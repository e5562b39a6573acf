/*
 * fuzz_scan.c: the whole log pipeline, from bytes to events: prefilter,
 * prefixes, every recogniser, context, grouping, the rules and the three
 * report writers.  It checks what must hold for any input: the scan ends,
 * every event has a line within the input, and the JSON report is valid
 * UTF-8, every sequence decoded by od_utf8_decode (the escaping itself is
 * checked by the test suite).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static od_scanner *fz_sc;
static rl_set *fz_rules;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const od_report_format formats[] = {
		OD_FORMAT_TEXT, OD_FORMAT_JSON, OD_FORMAT_MARKDOWN,
	};
	od_events *set = od_events_new();
	od_input in = { 0 };
	char name[] = "fuzz.log";
	size_t i, k;

	if (fz_sc == NULL) {
		/* The source tree's rules: tests/CMakeLists.txt names them. */
		od_error err;
		rl_errors *errs = calloc(1, sizeof *errs);

		fz_sc = od_scanner_new(true, &err);
		fz_rules = rl_new();
		if (fz_sc == NULL || fz_rules == NULL || errs == NULL ||
		    !rl_load(fz_rules, OOMDOC_SOURCE_RULES, errs))
			abort();
		free(errs);
	}
	od_scan_buffer(fz_sc, (const char *)data, size, 0, &in, set);
	in.name = name;
	for (i = 0; i < od_events_count(set); i++) {
		od_event *ev = od_events_get(set, i);

		if (ev->line < 1 || ev->end_line < ev->line ||
		    ev->line > in.lines + 1)
			abort();
		rl_apply(fz_rules, ev, NULL);
	}
	for (k = 0; k < sizeof formats / sizeof formats[0]; k++) {
		od_report_opts o = { .format = formats[k] };
		char *out = NULL;
		size_t n = 0, at, len;
		unsigned cp;
		FILE *f = open_memstream(&out, &n);

		if (f == NULL)
			abort();
		od_report_write(f, &o, &in, 1, set);
		if (fclose(f) != 0)
			abort();
		/* The JSON report is valid UTF-8 whatever the input. */
		for (at = 0; formats[k] == OD_FORMAT_JSON && at < n; at += len)
			if ((len = od_utf8_decode((const unsigned char *)out + at,
			    n - at, &cp)) == 0)
				abort();
		free(out);
	}
	od_events_free(set);
	return 0;
}

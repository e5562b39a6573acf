/*
 * fuzz_scan.c: the whole log pipeline, from bytes to events: prefilter,
 * prefixes, every recogniser, context, grouping, the rules and four
 * report writers.  It checks what must hold for any input, and aborts
 * (a crash for libFuzzer) when it does not:
 *
 *   - the scan ends, and every event has a line within the input;
 *   - the text report is valid UTF-8 (every sequence decoded by
 *     od_utf8_decode) with no control character but the newline: no ESC,
 *     no C1 control, no DEL reaches a terminal from the log;
 *   - the JSON report is valid UTF-8 and parses (jansson's json_loadb,
 *     which also refuses invalid UTF-8; a NUL from the log is a valid
 *     \u0000, hence JSON_ALLOW_NUL) to an object with schema
 *     "oomdoc.report/2" and an array of events;
 *   - the Markdown report is valid UTF-8 and carries no link outside code:
 *     fz_markdown_links below drops fenced blocks and code spans (as
 *     CommonMark delimits them) and then looks, case-insensitively, for
 *     the marks of a link: "](" (an inline link or image), "<http" and
 *     "<www" (autolinks), and the bare "www." and "http://"/"https://"
 *     that GitHub's autolink extension links.  It is a simple check, not
 *     a renderer: the suite renders the fixtures' Markdown with real ones
 *     (tests/markdown_check.py);
 *   - the HTML report is valid UTF-8 and every tag in it is one that
 *     report_html.c writes (fz_html): no tag forms from the log.  The
 *     suite reads the fixtures' pages as Chromium builds them
 *     (tests/check_html.py).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static od_scanner *fz_sc;
static rl_set *fz_rules;

/* Aborts unless out[0..n) is valid UTF-8; with text, also unless its only
 * control character is the newline. */
static void
fz_utf8(const char *out, size_t n, bool text)
{
	size_t at, len;
	unsigned cp;

	for (at = 0; at < n; at += len) {
		len = od_utf8_decode((const unsigned char *)out + at, n - at, &cp);
		if (len == 0)
			abort();
		if (text && cp != '\n' && (cp < 0x20 || cp == 0x7f ||
		    (cp >= 0x80 && cp < 0xa0)))
			abort();
	}
}

/* The length of the run of c at s[0..n). */
static size_t
fz_run(const char *s, size_t n, char c)
{
	size_t k = 0;

	while (k < n && s[k] == c)
		k++;
	return k;
}

/* Where the paragraph around s[at] ends: at a blank line, at a line that
 * starts with a fence of three backticks or tildes, or at n. */
static size_t
fz_paragraph_end(const char *s, size_t n, size_t at)
{
	const char *nl;

	while ((nl = memchr(s + at, '\n', n - at)) != NULL) {
		size_t next = (size_t)(nl - s) + 1, j = next;

		while (j < n && j - next < 3 && s[j] == ' ')
			j++;
		if (j >= n || s[j] == '\n' || ((s[j] == '`' || s[j] == '~') &&
		    fz_run(s + j, n - j, s[j]) >= 3))
			return next;
		at = next;
	}
	return n;
}

/* True when s[0..n), with its code left out, has a link's mark.  A line
 * that starts (after up to three spaces) with three or more backticks or
 * tildes opens a fenced block, which a line of at least as many of the
 * same closes; outside fences, a run of backticks opens a code span that
 * the next run of exactly as many in the same paragraph closes (a run
 * with no match is text).
 * What is left is searched case-insensitively. */
static bool
fz_markdown_links(const char *s, size_t n)
{
	static const char *const marks[] = {
		"](", "<http", "<www", "www.", "http://", "https://",
	};
	char *prose = malloc(n + 1);
	size_t i = 0, m = 0, fence = 0, k;
	char fence_c = 0;
	bool found = false;

	if (prose == NULL)
		abort();
	while (i < n) {
		const char *eol = memchr(s + i, '\n', n - i);
		size_t end = eol != NULL ? (size_t)(eol - s) + 1 : n, j = i, run;

		while (j < end && j - i < 3 && s[j] == ' ')
			j++;
		run = j < end && (s[j] == '`' || s[j] == '~') ?
		    fz_run(s + j, end - j, s[j]) : 0;
		if (fence > 0) {
			if (run >= fence && s[j] == fence_c)
				fence = 0;
			i = end;
			continue;
		}
		if (run >= 3 && (s[j] == '~' ||
		    memchr(s + j + run, '`', end - j - run) == NULL)) {
			fence = run;
			fence_c = s[j];
			i = end;
			prose[m++] = '\n';
			continue;
		}
		/* A code span may go on to the next lines of its paragraph, not
		 * past it: it ends by a blank line or a fence. */
		while (i < end) {
			size_t close, par;

			if (s[i] != '`') {
				prose[m++] = s[i++];
				continue;
			}
			run = fz_run(s + i, n - i, '`');
			par = fz_paragraph_end(s, n, i);
			for (close = i + run; close < par; ) {
				size_t r;

				if (s[close] != '`') {
					close++;
					continue;
				}
				r = fz_run(s + close, par - close, '`');
				if (r == run)
					break;
				close += r;
			}
			if (close >= par) {
				/* No match: the run is literal text. */
				for (k = 0; k < run; k++)
					prose[m++] = '`';
				i += run;
				continue;
			}
			prose[m++] = ' ';
			i = close + run;
			if (i > end) {
				const char *e2 = memchr(s + i, '\n', n - i);

				end = e2 != NULL ? (size_t)(e2 - s) + 1 : n;
			}
		}
	}
	prose[m] = '\0';
	for (k = 0; k < m; k++)
		prose[k] = (char)tolower((unsigned char)prose[k]);
	for (k = 0; k < sizeof marks / sizeof marks[0] && !found; k++)
		found = strstr(prose, marks[k]) != NULL;
	free(prose);
	return found;
}

/* Aborts unless out[0..n) is a JSON report. */
static void
fz_json(const char *out, size_t n)
{
	json_error_t jerr;
	json_t *doc = json_loadb(out, n, JSON_ALLOW_NUL, &jerr);
	const char *schema;

	if (doc == NULL || !json_is_object(doc) ||
	    !json_is_array(json_object_get(doc, "events")) ||
	    (schema = json_string_value(json_object_get(doc, "schema"))) ==
	    NULL || strcmp(schema, "oomdoc.report/2") != 0)
		abort();
	json_decref(doc);
}

/*
 * Aborts unless every tag of out[0..n), an HTML report, is one
 * report_html.c writes: text from the fuzzer's log never forms one.
 */
static void
fz_html(const char *out, size_t n)
{
	static const char *const tags[] = {
		"!DOCTYPE", "html", "head", "meta", "title", "style", "body",
		"h1", "h2", "h3", "section", "dl", "dt", "dd", "span", "pre",
		"code", "table", "tr", "td", "th", "figure", "figcaption", "svg",
		"rect", "line", "polyline", "circle", "text", "g", "p", "ol",
		"ul", "li", "strong", "footer",
	};
	size_t i, k;

	for (i = 0; i < n; i++) {
		size_t at = i + 1, len = 0;
		bool ok = false;

		if (out[i] != '<')
			continue;
		if (at < n && out[at] == '/')
			at++;
		while (at + len < n && (isalnum((unsigned char)out[at + len]) ||
		    out[at + len] == '!'))
			len++;
		for (k = 0; k < sizeof tags / sizeof tags[0] && !ok; k++)
			ok = strlen(tags[k]) == len &&
			    strncmp(out + at, tags[k], len) == 0;
		if (!ok)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const od_report_format formats[] = {
		OD_FORMAT_TEXT, OD_FORMAT_JSON, OD_FORMAT_MARKDOWN,
		OD_FORMAT_HTML,
	};
	od_events *set = od_events_new();
	od_input in = { 0 };
	char name[] = "fuzz.log";
	size_t i, k;

	if (fz_sc == NULL) {
		/* The source tree's rules: tests/CMakeLists.txt names them. */
		od_error err;
		rl_errors *errs = calloc(1, sizeof *errs);

		fz_rules = rl_new();
		if (fz_rules == NULL || errs == NULL ||
		    !rl_load(fz_rules, OOMDOC_SOURCE_RULES, errs))
			abort();
		/* With the rules' recognisers, as the command scans. */
		fz_sc = od_scanner_new(true, fz_rules->recognisers, &err);
		if (fz_sc == NULL)
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
		size_t n = 0;
		FILE *f = open_memstream(&out, &n);

		if (f == NULL)
			abort();
		od_report_write(f, &o, &in, 1, set);
		if (fclose(f) != 0)
			abort();
		fz_utf8(out, n, formats[k] == OD_FORMAT_TEXT);
		if (formats[k] == OD_FORMAT_JSON)
			fz_json(out, n);
		if (formats[k] == OD_FORMAT_MARKDOWN &&
		    fz_markdown_links(out, n))
			abort();
		if (formats[k] == OD_FORMAT_HTML)
			fz_html(out, n);
		free(out);
	}
	od_events_free(set);
	return 0;
}

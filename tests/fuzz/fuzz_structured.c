/*
 * fuzz_structured.c: libFuzzer target for the structured-line reader
 * (src/lib/structured.c): JSON records of log shippers, CRI lines, Docker's
 * split records, Loki's stream documents.  Each input is read twice, in
 * one piece and in pieces whose sizes the input's first byte chooses, and
 * the target aborts (a crash for libFuzzer) unless:
 *
 *   - both readings give the same text, the same lines and the same
 *     labels: where the input's chunks end changes nothing;
 *   - the text is bounded: at most SL_TS_WIDTH + 3 bytes per input
 *     byte (a Loki entry of a few bytes gets a time prefix and a line
 *     break);
 *   - the input's bytes and lines (sl_input) are the input's;
 *   - the map from text lines to input lines never goes backwards, stays
 *     within the input's lines, and a line's last input line is at or
 *     after its first;
 *   - every label (sl_labels_at, at every line start of the text) is
 *     NUL-terminated valid UTF-8 with no control character.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "structured.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The text a reading made: at most FZ_TEXT_MAX bytes kept, all counted. */
#define FZ_TEXT_MAX (4u << 20)

typedef struct {
	char *text;
	size_t len;             /* bytes kept */
	uint64_t total;         /* bytes handed over */
} fz_text;

static void
fz_emit(void *arg, const char *p, size_t n)
{
	fz_text *t = arg;
	size_t k = n;

	if (t->len + k > FZ_TEXT_MAX)
		k = FZ_TEXT_MAX - t->len;
	memcpy(t->text + t->len, p, k);
	t->len += k;
	t->total += n;
}

static void
fz_label_ok(const char *s)
{
	size_t i, n = strnlen(s, OD_LABEL_MAX);
	unsigned cp;

	if (n == OD_LABEL_MAX)
		abort();
	for (i = 0; i < n; ) {
		size_t len = od_utf8_decode((const unsigned char *)s + i, n - i,
		    &cp);

		if (len == 0 || cp < 0x20 || cp == 0x7f)
			abort();
		i += len;
	}
}

static void
fz_labels_ok(const od_labels *l)
{
	if (l == NULL)
		return;
	fz_label_ok(l->pod);
	fz_label_ok(l->container);
	fz_label_ok(l->namespace_);
	fz_label_ok(l->host);
}

/* Reads data with chunk sizes from the step (0: one piece). */
static void
fz_read(sl_reader *r, fz_text *t, const uint8_t *data, size_t size,
    size_t step)
{
	size_t at = 0;

	t->len = 0;
	t->total = 0;
	sl_begin(r, fz_emit, t);
	while (at < size) {
		size_t n = step == 0 ? size - at : step + at % 7;

		if (n > size - at)
			n = size - at;
		sl_feed(r, (const char *)data + at, n);
		at += n;
	}
	sl_finish(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static sl_reader *a, *b;
	static fz_text ta, tb;
	uint64_t bytes, lines, nl = 0, i, t, prev = 0, tlines = 0;
	size_t step;

	if (a == NULL) {
		a = sl_new();
		b = sl_new();
		ta.text = malloc(FZ_TEXT_MAX);
		tb.text = malloc(FZ_TEXT_MAX);
		if (a == NULL || b == NULL || ta.text == NULL || tb.text == NULL)
			abort();
	}
	if (size == 0)
		return 0;
	step = 1 + data[0] % 64;
	fz_read(a, &ta, data, size, 0);
	fz_read(b, &tb, data, size, step);
	if (ta.total != tb.total || ta.len != tb.len ||
	    memcmp(ta.text, tb.text, ta.len) != 0)
		abort();
	if (ta.total > (uint64_t)size * (SL_TS_WIDTH + 3) + 1)
		abort();

	for (i = 0; i < size; i++)
		nl += data[i] == '\n';
	sl_input(a, &bytes, &lines);
	if (bytes != size || lines != nl + (data[size - 1] != '\n'))
		abort();
	sl_input(b, &bytes, &lines);
	if (bytes != size || lines != nl + (data[size - 1] != '\n'))
		abort();

	/* Every line start of the text (as far as it was kept): its input
	 * line, and its labels, the same in both readings. */
	for (i = 0; i <= ta.len; i++) {
		const od_labels *la, *lb;

		if (i > 0 && ta.text[i - 1] != '\n')
			continue;
		t = tlines++;
		if (sl_input_line(a, t) != sl_input_line(b, t) ||
		    sl_input_line_end(a, t) != sl_input_line_end(b, t))
			abort();
		if (sl_input_line(a, t) < prev ||
		    sl_input_line_end(a, t) < sl_input_line(a, t) ||
		    (i < ta.len && sl_input_line_end(a, t) > lines))
			abort();
		prev = sl_input_line(a, t);
		la = sl_labels_at(a, i);
		lb = sl_labels_at(b, i);
		if ((la == NULL) != (lb == NULL) ||
		    (la != NULL && memcmp(la, lb, sizeof *la) != 0))
			abort();
		fz_labels_ok(la);
	}
	return 0;
}

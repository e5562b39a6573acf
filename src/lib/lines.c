/*
 * lines.c: joining the lines around a hit (lines.h).
 *
 * Real messages are wrapped: by the program (one clause a line), by a
 * launcher that prefixes every line ([rank3]:, a timestamp), or by a
 * console that hard-wraps at its width.  The recognisers read one text in
 * which the prefixes of the following lines are stripped and the lines
 * joined by '\n', which their patterns' \s+ gaps match.
 *
 * A coloured log (a logger's levels, Python 3.13's tracebacks, a launcher's
 * coloured rank prefix) has escape sequences between the words: they are
 * left out of the joined text, so that `ESC [31m` before an exception's
 * name does not become part of it, while the window, and so every offset
 * and line number, stays as the log has it.
 */
#include <string.h>

#include "lines.h"

/* Appends s[0..n) to the joined text, as much as fits. */
static void
ln_append(ln_text *j, const char *s, size_t n)
{
	if (n > EX_TEXT_MAX - j->len)
		n = EX_TEXT_MAX - j->len;
	memcpy(j->text + j->len, s, n);
	j->len += n;
}

/* The longest parameter and intermediate part of a CSI, and the longest
 * control string, read as one sequence. */
#define LN_CSI_MAX 64
#define LN_STRING_MAX 4096

size_t
ln_escape(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i;

	if (n < 2 || p[0] != 0x1b)
		return 0;
	if (p[1] == '[') {
		/* Parameter bytes 0x30-0x3f, intermediates 0x20-0x2f, then the
		 * final byte 0x40-0x7e. */
		for (i = 2; i < n && i < LN_CSI_MAX; i++) {
			if (p[i] >= 0x40 && p[i] <= 0x7e)
				return i + 1;
			if (p[i] < 0x20 || p[i] > 0x3f)
				return 0;
		}
		return 0;
	}
	if (p[1] == ']' || p[1] == 'P' || p[1] == 'X' || p[1] == '^' ||
	    p[1] == '_') {
		/* A control string, up to ST (ESC \) or BEL. */
		for (i = 2; i < n && i < LN_STRING_MAX; i++) {
			if (p[i] == 0x07)
				return i + 1;
			if (p[i] == 0x1b)
				return i + 1 < n && p[i + 1] == '\\' ? i + 2 : 0;
			if (p[i] == '\n' || p[i] == '\r')
				return 0;
		}
		return 0;
	}
	/* Intermediates 0x20-0x2f (at most two), then a final 0x30-0x7e. */
	for (i = 1; i < n && i < 3 && p[i] >= 0x20 && p[i] <= 0x2f; i++)
		;
	return i < n && p[i] >= 0x30 && p[i] <= 0x7e ? i + 1 : 0;
}

/*
 * Appends s[0..n), the window's bytes from offset b, to the joined text
 * as line number `line`, leaving its escape sequences out (a gap each).
 * Returns the bytes left out.
 */
static size_t
ln_append_line(ln_text *j, const char *s, size_t n, size_t b, int line)
{
	size_t i = 0, out = 0;

	while (i < n) {
		const char *esc = memchr(s + i, 0x1b, n - i);
		size_t k = esc != NULL ? (size_t)(esc - s) : n, e;

		ln_append(j, s + i, k - i);
		if (k == n)
			break;
		e = ln_escape(s + k, n - k);
		if (e == 0 || j->ngap == LN_GAPS_MAX) {
			ln_append(j, s + k, 1);
			i = k + 1;
			continue;
		}
		j->gap[j->ngap].t = j->len;
		j->gap[j->ngap].b = b + k + e;
		j->gap[j->ngap].line = line;
		j->ngap++;
		out += e;
		i = k + e;
	}
	return out;
}

size_t
ln_eol(const char *buf, size_t p, size_t len)
{
	const char *nl = memchr(buf + p, '\n', len - p);
	const char *cr = memchr(buf + p, '\r', (nl != NULL ? (size_t)(nl -
	    (buf + p)) : len - p));

	if (cr != NULL)
		return (size_t)(cr - buf);
	return nl != NULL ? (size_t)(nl - buf) : len;
}

/* Whether a console that wraps at this width may have cut a word here. */
static bool
ln_console_width(size_t len)
{
	return len == 80 || len == 100 || len == 120 || len == 132 ||
	    len == 160 || len == 200;
}

static bool
ln_digits(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

static bool
ln_word_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || c == '.' || c == '-' || c == '_';
}

/*
 * A line break that a console's hard wrap put inside a word or a number
 * ("2.00 Gi" / "B", "capac" / "ity") is joined without the '\n': the line
 * before is exactly a console's width long and letters or digits meet at
 * the break.
 */
void
ln_join(ln_text *j, px_ctx *px, const ex_window *w, size_t s, int max_lines)
{
	size_t p = s, begin = w->line_start, prev_len = 0;
	uint64_t nl = 0;

	if (max_lines > EX_LINES_MAX)
		max_lines = EX_LINES_MAX;
	j->len = 0;
	j->nseg = 0;
	j->ngap = 0;
	while (j->nseg < max_lines && j->len < EX_TEXT_MAX && p <= w->len) {
		size_t eol = ln_eol(w->buf, p, w->len);

		if (j->nseg > 0) {
			size_t pre = px_strip(px, w->buf + p, eol - p, NULL,
			    NULL);

			/* A line with a prefix, or a date, starts a record of
			 * its own: it is no console's wrap. */
			if (!(ln_console_width(prev_len) && pre == 0 &&
			    j->len > 0 && p + 4 < eol &&
			    ln_word_char(j->text[j->len - 1]) &&
			    j->text[j->len - 1] != '.' &&
			    ln_word_char(w->buf[p]) && !(ln_digits(w->buf + p, 4) &&
			    w->buf[p + 4] == '-')))
				ln_append(j, "\n", 1);
			p += pre;
		}
		j->seg[j->nseg].t = j->len;
		j->seg[j->nseg].b = p;
		j->seg[j->nseg].nl = nl;
		j->nseg++;
		/* The width a console saw: without the escapes. */
		prev_len = eol - begin - ln_append_line(j, w->buf + p, eol - p,
		    p, j->nseg - 1);
		if (eol >= w->len)
			break;
		if (w->buf[eol] == '\r' && eol + 1 < w->len &&
		    w->buf[eol + 1] == '\n')
			eol++;
		if (w->buf[eol] == '\n')
			nl++;
		p = begin = eol + 1;
	}
}

void
ln_map(const ln_text *j, size_t t, size_t *b, uint64_t *nl)
{
	int i = j->nseg - 1, g = j->ngap - 1;

	while (i > 0 && j->seg[i].t > t)
		i--;
	while (g >= 0 && (j->gap[g].line > i || j->gap[g].t > t))
		g--;
	if (g >= 0 && j->gap[g].line == i)
		*b = j->gap[g].b + (t - j->gap[g].t);
	else
		*b = j->seg[i].b + (t - j->seg[i].t);
	*nl = j->seg[i].nl;
}

size_t
ln_unmap(const ln_text *j, size_t b)
{
	int g = -1, k;

	for (k = 0; k < j->ngap && j->gap[k].line == 0 && j->gap[k].b <= b; k++)
		g = k;
	if (g >= 0)
		return j->gap[g].t + (b - j->gap[g].b);
	return j->seg[0].t + (b - j->seg[0].b);
}

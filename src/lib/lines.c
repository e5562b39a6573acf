/*
 * lines.c: joining the lines around a hit (lines.h).
 *
 * Real messages are wrapped: by the program (one clause a line), by a
 * launcher that prefixes every line ([rank3]:, a timestamp), or by a
 * console that hard-wraps at its width.  The recognisers read one text in
 * which the prefixes of the following lines are stripped and the lines
 * joined by '\n', which their patterns' \s+ gaps match.
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
		ln_append(j, w->buf + p, eol - p);
		prev_len = eol - begin;
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
	int i = j->nseg - 1;

	while (i > 0 && j->seg[i].t > t)
		i--;
	*b = j->seg[i].b + (t - j->seg[i].t);
	*nl = j->seg[i].nl;
}

/*
 * wrap.c: the text report's lines wrapped to the terminal's width, with
 * hanging indents (report.h, rp_wrap).
 *
 * The writers of the text report print lines as wide as their content;
 * rp_wrap then breaks each line that is wider than the width between
 * words, never inside one.  A continuation line starts at the line's
 * hanging column: the column of its RP_HANG mark, which a writer puts
 * where the value of a labelled line starts ("    where      " then the
 * mark), or, when a line has no mark, the column of its first word.  A
 * word longer than the room left at that column is written whole and
 * runs past the width: a path or a URL cut in two would no longer be one.
 * A writer joins words that belong together ("step 480") with RP_GLUE,
 * which is written as a space but is never broken at.
 *
 * Columns are counted as a terminal counts them for the text this
 * report holds: one per UTF-8 character (the escapers, escape.c, let
 * through no control character and no invalid byte), none for the
 * report's own SGR colour sequences (ESC [ ... m) and for the RP_HANG
 * mark, which is not written.  East Asian wide characters are counted as
 * one column, as narrow ones are.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The least room a continuation line has after its hanging column. */
#define WR_ROOM 24

/* The columns of s[0..n), as the comment above counts them. */
static int
wr_cols(const char *s, size_t n)
{
	size_t i = 0;
	int cols = 0;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];

		if (c == 0x1b && i + 1 < n && s[i + 1] == '[') {
			/* A CSI sequence ends at its final byte, 0x40 to 0x7e. */
			for (i += 2; i < n; i++)
				if ((unsigned char)s[i] >= 0x40 &&
				    (unsigned char)s[i] <= 0x7e)
					break;
			i++;
			continue;
		}
		if (c != RP_HANG_CHAR && (c & 0xc0) != 0x80)
			cols++;
		i++;
	}
	return cols;
}

/* Writes s[0..n) without its RP_HANG marks, its RP_GLUE as spaces. */
static void
wr_put(FILE *out, const char *s, size_t n)
{
	size_t i, from = 0;

	for (i = 0; i < n; i++) {
		if (s[i] != RP_HANG_CHAR && s[i] != RP_GLUE_CHAR)
			continue;
		fwrite(s + from, 1, i - from, out);
		if (s[i] == RP_GLUE_CHAR)
			fputc(' ', out);
		from = i + 1;
	}
	fwrite(s + from, 1, n - from, out);
}

static void
wr_spaces(FILE *out, int n)
{
	while (n-- > 0)
		fputc(' ', out);
}

/*
 * One line (s[0..n), no newline) wrapped at width.  A break is taken
 * before a word that would end past the width, when a word is already on
 * the output line and the word would start further left after the break;
 * the spaces at a break are dropped.
 */
static void
wr_line(FILE *out, const char *s, size_t n, int width)
{
	const char *mark = memchr(s, RP_HANG_CHAR, n);
	size_t i = 0;
	int lead = 0, hang, col, words = 0;

	while (i < n && s[i] == ' ')
		i++;
	lead = (int)i;
	hang = mark != NULL ? wr_cols(s, (size_t)(mark - s)) : lead;
	/* A hanging column that leaves less than WR_ROOM columns is too
	 * far right. */
	if (hang > width - WR_ROOM)
		hang = lead <= width - WR_ROOM ? lead : 0;
	wr_spaces(out, lead);
	col = lead;
	while (i < n) {
		size_t sp = i, w;
		int spc, wc;

		while (i < n && s[i] == ' ')
			i++;
		spc = (int)(i - sp);
		if (i == n)
			break;          /* trailing spaces are dropped */
		w = i;
		while (i < n && s[i] != ' ')
			i++;
		wc = wr_cols(s + w, i - w);
		if (words > 0 && col + spc + wc > width && hang < col + spc) {
			fputc('\n', out);
			wr_spaces(out, hang);
			col = hang;
		} else {
			wr_spaces(out, spc);
			col += spc;
		}
		wr_put(out, s + w, i - w);
		col += wc;
		words++;
	}
	fputc('\n', out);
}

void
rp_wrap(FILE *out, const char *s, size_t n, int width)
{
	size_t i = 0;

	if (width <= 0)
		width = RP_WIDTH_DEFAULT;
	while (i < n) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t end = nl != NULL ? (size_t)(nl - s) : n;

		wr_line(out, s + i, end - i, width);
		i = end + 1;
	}
}

FILE *
rp_wrap_open(rp_wrapbuf *b, FILE *out, int width)
{
	memset(b, 0, sizeof *b);
	b->out = out;
	b->width = width;
	b->f = open_memstream(&b->buf, &b->len);
	return b->f;
}

void
rp_wrap_close(rp_wrapbuf *b)
{
	if (b->f == NULL)
		return;
	/* What was written before memory ran out is still written. */
	fclose(b->f);
	if (b->buf != NULL)
		rp_wrap(b->out, b->buf, b->len, b->width);
	free(b->buf);
	b->f = NULL;
	b->buf = NULL;
}

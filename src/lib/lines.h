/*
 * lines.h: joining the lines around a hit into one text, and mapping the
 * text's offsets back to the window they came from.
 */
#ifndef OD_LINES_H
#define OD_LINES_H

#include "extract.h"
#include "prefix.h"

/* Where a joined line came from. */
typedef struct {
	size_t t;               /* offset of its first byte in the text */
	size_t b;               /* offset of that byte in the window */
	uint64_t nl;            /* '\n' between the hit's line and this line */
} ln_seg;

/* The joined text: at most EX_TEXT_MAX bytes of at most EX_LINES_MAX
 * lines. */
typedef struct {
	char text[EX_TEXT_MAX];
	size_t len;
	ln_seg seg[EX_LINES_MAX];
	int nseg;
} ln_text;

/*
 * Joins the window's text from offset s (on the hit's line) and the lines
 * after it, at most max_lines (at most EX_LINES_MAX) in all, into j: the
 * prefixes of the following lines stripped (px), lines joined by '\n'.
 */
void ln_join(ln_text *j, px_ctx *px, const ex_window *w, size_t s,
    int max_lines);

/* Maps offset t of the joined text back to the window: *b, and *nl the
 * '\n' between the hit's line and that offset's line. */
void ln_map(const ln_text *j, size_t t, size_t *b, uint64_t *nl);

/* The end of the line that starts at buf[p]: the first '\r' or '\n', or
 * len. */
size_t ln_eol(const char *buf, size_t p, size_t len);

#endif

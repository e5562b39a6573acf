/*
 * lines.h: joining the lines around a hit into one text, and mapping the
 * text's offsets back to the window they came from; the terminal escape
 * sequences of coloured logs are left out of the text.
 */
#ifndef OD_LINES_H
#define OD_LINES_H

#include "extract.h"
#include "prefix.h"

/* Where a joined line came from (ln_line gives it). */
typedef struct {
	size_t t;               /* offset of its first byte in the text */
	size_t b;               /* offset of that byte in the window */
	uint64_t nl;            /* '\n' between the hit's line and this line */
} ln_seg;

/* Where an escape sequence was left out: the text's bytes from offset t
 * on come from offset b of the window on, on joined line `line`. */
typedef struct {
	size_t t;
	size_t b;
	int line;
} ln_gap;

/* Escape sequences left out of one joined text, at most; those after
 * these stay in it. */
#define LN_GAPS_MAX 256

/* The joined text: at most EX_TEXT_MAX bytes of at most EX_LINES_MAX
 * lines. */
typedef struct {
	/*
	 * The text: own, or, for a line longer than the text that has
	 * nothing to leave out (ln_join's plain case), the window's own
	 * bytes from src_at on (src_buf and src_gen the window's buf and
	 * gen; src_buf NULL otherwise), valid while the window's bytes are.
	 */
	const char *text;
	/* An own text is own[off..off+len): a join moved on by a line
	 * (ln_join_shift) moves off, not the bytes, which are moved down
	 * once off passes EX_TEXT_MAX (off stays at most EX_TEXT_MAX, so
	 * that EX_TEXT_MAX bytes fit after it). */
	char own[2 * EX_TEXT_MAX];
	size_t off;
	const char *src_buf;
	uint64_t src_gen;
	size_t src_at;
	size_t len;
	/* The lines, segs[s0..s0+nseg): t an offset in own and nl counted
	 * from an earlier line, nl0 '\n' before the first (ln_line makes
	 * them the text's and the hit line's); moved on the same way, by
	 * s0, and down once s0 passes EX_LINES_MAX. */
	ln_seg segs[2 * EX_LINES_MAX];
	int s0;
	uint64_t nl0;
	int nseg;
	ln_gap gap[LN_GAPS_MAX];
	int ngap;
	/* The prefixes of the lines after the first in the last join: where
	 * each line started and ended in the window and how long its prefix
	 * was, with the window's bytes and generation (ex_window).  The next
	 * join of the same window takes a line's prefix from here instead of
	 * parsing it again: with an anchor on every line, each line's prefix
	 * is so parsed once, not once per hit whose lines it is among.  Zero
	 * it (a fresh ln_text) before the first join. */
	const char *px_buf;
	uint64_t px_gen;
	int px_n, px0;          /* [px0, px0+px_n) of the arrays, as segs */
	size_t px_at[2 * EX_LINES_MAX], px_eol[2 * EX_LINES_MAX];
	size_t px_pre[2 * EX_LINES_MAX];
	/* A run of the window, [pl_lo, pl_hi), known to hold no byte that
	 * ends a line or that ln_join would read (ln_plain), with the
	 * window's bytes and generation: the hits of one long line look at
	 * its bytes once between them. */
	const char *pl_buf;
	uint64_t pl_gen;
	size_t pl_lo, pl_hi;
	/* Whether the last join may be moved on by a line (lines.c,
	 * ln_can_shift), what it was joined from, and where its loop
	 * stopped: the next line's offset, its start, the length of the
	 * line before it, the '\n' so far. */
	bool sh_ok;
	const char *sh_buf;
	uint64_t sh_gen;
	size_t sh_len, sh_wrap;
	int sh_lines;
	size_t sh_p, sh_begin, sh_prev_len;
	uint64_t sh_nl;
	/* Set by ln_join when the text it made is byte for byte the one
	 * before it (a line repeated, ln_join_shift); and a period the text
	 * is known to have (0: none known). */
	bool same;
	size_t period;
	/* How far the joins that made the text read the window's bytes: no
	 * byte at or after this offset changed what it is (ex_extract). */
	size_t end;
} ln_text;

/* The longest part of the first line before the joined text's start that
 * is read to find its quoted strings (lines.c): a join that starts further
 * into its line reads none of it. */
#define LN_BEFORE_MAX (64u * 1024)

/* Line i (0 the hit's, below nseg) of the joined text j. */
static inline ln_seg
ln_line(const ln_text *j, int i)
{
	ln_seg g = j->segs[j->s0 + i];

	g.t -= j->off;
	g.nl -= j->nl0;
	return g;
}

/*
 * Joins the window's text from offset s (on the hit's line) and the lines
 * after it, at most max_lines (at most EX_LINES_MAX) in all, into j: the
 * prefixes of the following lines stripped (px), the escape sequences
 * left out (ln_escape), lines joined by '\n'.  The window itself is not
 * changed: ln_map and ln_unmap translate offsets.
 */
void ln_join(ln_text *j, px_ctx *px, const ex_window *w, size_t s,
    int max_lines);

/* Maps offset t of the joined text back to the window: *b, and *nl the
 * '\n' between the hit's line and that offset's line. */
void ln_map(const ln_text *j, size_t t, size_t *b, uint64_t *nl);

/* The offset in the joined text of the window's byte b, which is on the
 * first joined line, after s, and in no escape sequence. */
size_t ln_unmap(const ln_text *j, size_t b);

/*
 * The length of the terminal escape sequence that starts p[0..n), 0 when
 * none does: a CSI (ESC [, parameters, a final byte: colours, cursor
 * moves), a control string (OSC, DCS, SOS, PM, APC: ESC ] ... up to ST or
 * BEL, as xterm ends an OSC; hyperlinks and window titles) or a two- or
 * three-byte escape (ESC ( B), after ECMA-48 (5th edition, 5.3 to 5.6).
 * A sequence that a line break, the end of p or a length over the bounds
 * in lines.c cuts is none: its bytes stay as they are.
 */
size_t ln_escape(const char *p, size_t n);

/* The end of the line that starts at buf[p]: the first '\r' or '\n', or
 * len. */
size_t ln_eol(const char *buf, size_t p, size_t len);

/* The start of the line that holds buf[p - 1], no earlier than lo: just
 * after the last '\n' of buf[lo..p), or lo when it has none. */
size_t ln_bol(const char *buf, size_t lo, size_t p);

#endif

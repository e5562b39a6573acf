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
 *
 * Text inside text is unwrapped the same way: a message quoted in a JSON
 * string, a Python repr ('...\n...') or a Rust panic string, with its
 * line breaks written as \n, has its escapes decoded (\n, \t, \", \', \\;
 * \r and a written terminal escape \u001b[...m left out), and a
 * notebook's HTML output has its colour spans left out and its entities
 * (&quot;, &gt;, ...) decoded.  Only the contents of a quoted string that
 * holds an escape, and does not start with a Windows drive ("C:\new\..."
 * in a traceback's File line), are decoded, so that a Windows path keeps
 * its backslashes.  A decoded '\n' breaks the text's line, not the
 * log's: line numbers stay the log's.
 */
#define _GNU_SOURCE             /* memrchr */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "lines.h"

/*
 * What a byte is to the joins, one load a byte: LN_END ends a line
 * (ln_eol), LN_READ may start something that ln_append_line reads (an
 * escape sequence, a quoted string's escape, HTML).  A short line is so
 * looked at once a byte, not with two or four compares (an anchor on
 * every short line joins each of them, and ln_eol finds the end of each).
 */
enum { LN_END = 1, LN_READ = 2 };
static const unsigned char ln_class[256] = {
	['\n'] = LN_END, ['\r'] = LN_END,
	['<'] = LN_READ, ['&'] = LN_READ, ['\\'] = LN_READ, [0x1b] = LN_READ,
};

/* Appends s[0..n) to the joined text, as much as fits. */
static void
ln_append(ln_text *j, const char *s, size_t n)
{
	if (n > EX_TEXT_MAX - j->len)
		n = EX_TEXT_MAX - j->len;
	memcpy(j->own + j->off + j->len, s, n);
	j->len += n;
}

/* The longest parameter and intermediate part of a CSI, and the longest
 * control string, read as one sequence. */
#define LN_CSI_MAX 64
/* A line this short is looked at byte by byte (ln_eol, ln_append_line),
 * a longer one with memchr. */
#define LN_SHORT 64
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

/* Quoted strings with escapes decoded on one line, at most; those after
 * them stay as they are. */
#define LN_REGIONS_MAX 64
/* The longest HTML tag left out. */
#define LN_TAG_MAX 256

/* Whether c may come just before a string's opening quote: the line's
 * start, a blank, or the punctuation before a value or an argument. */
static bool
ln_opener(const char *s, size_t i)
{
	char c;

	if (i == 0)
		return true;
	c = s[i - 1];
	/* Python's prefixes: b'...', r"...", u'...', f"...". */
	if (strchr("bBrRuUfF", c) != NULL && c != '\0' && (i == 1 ||
	    strchr(" \t([{,:=", s[i - 2]) != NULL))
		return true;
	return strchr(" \t([{,:=", c) != NULL && c != '\0';
}

/* Whether s[0..n) starts with an escape that ln_decode reads. */
static bool
ln_escaped(const char *s, size_t n)
{
	return n >= 2 && s[0] == '\\' && strchr("nrt\"'\\ux0", s[1]) != NULL &&
	    s[1] != '\0';
}

/* Whether p starts a Windows path: a drive letter, ':' and one
 * backslash not doubled. */
static bool
ln_drive(const char *p)
{
	char c = p[0];

	return ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) &&
	    p[1] == ':' && p[2] == '\\' && p[3] != '\\';
}

/*
 * Finds the quoted strings of the line s[0..n) that hold an escape: a
 * quote (" or ') after ln_opener's characters, up to the same quote not
 * escaped, or the line's end.  Their contents go into r[] as start and
 * end pairs; returns how many.
 */
static int
ln_regions(const char *s, size_t n, size_t r[][2], int max)
{
	size_t i = 0, k, e;
	int nr = 0;
	bool esc;

	while (i < n && nr < max) {
		if ((s[i] != '"' && s[i] != '\'') || !ln_opener(s, i)) {
			i++;
			continue;
		}
		esc = false;
		for (e = i + 1; e < n && s[e] != s[i]; e++)
			if (s[e] == '\\' && e + 1 < n) {
				esc |= ln_escaped(s + e, n - e);
				e++;
			}
		/* A Windows path ("C:\new\train.py" in a traceback's File
		 * line) is no escaped string: a repr doubles its backslashes. */
		if (esc && e - i > 4 && ln_drive(s + i + 1))
			esc = false;
		if (esc) {
			r[nr][0] = i + 1;
			r[nr][1] = e;
			nr++;
		}
		k = e + 1;
		i = k;
	}
	return nr;
}

/*
 * Reads the escape at s[0..n) of a quoted string: \n, \t, \", \', \\ give
 * one byte (*out), \r none; a terminal escape written \u001b, \x1b or
 * \033 and the CSI after it none (a notebook's coloured traceback saved
 * as JSON).  Returns the bytes read, 0 when none is read there; *nout is
 * 0 or 1.
 */
static size_t
ln_decode(const char *s, size_t n, char *out, size_t *nout)
{
	static const char *const esc[] = { "\\u001b", "\\u001B", "\\x1b",
		"\\x1B", "\\033" };
	size_t i, k;

	*nout = 0;
	if (!ln_escaped(s, n))
		return 0;
	for (i = 0; i < sizeof esc / sizeof esc[0]; i++) {
		size_t l = strlen(esc[i]);

		if (n < l + 2 || memcmp(s, esc[i], l) != 0 || s[l] != '[')
			continue;
		/* A CSI: parameters 0x30-0x3f, then a final 0x40-0x7e. */
		for (k = l + 1; k < n && k < l + 1 + 64; k++) {
			unsigned char c = (unsigned char)s[k];

			if (c >= 0x40 && c <= 0x7e)
				return k + 1;
			if (c < 0x20 || c > 0x3f)
				return 0;
		}
		return 0;
	}
	switch (s[1]) {
	case 'n': *out = '\n'; break;
	case 't': *out = '\t'; break;
	case '"': case '\'': case '\\': *out = s[1]; break;
	case 'r': return 2;
	default: return 0;
	}
	*nout = 1;
	return 2;
}

/*
 * Reads the HTML at s[0..n): a colour span's tags (<span ...>, </span>,
 * and <font>, <b>, <pre>, <code> as notebooks' HTML outputs have them)
 * give nothing, the entities &quot; &gt; &lt; &amp; &#39; &#x27; &nbsp;
 * one byte.  Returns the bytes read, 0 when none is read there.
 */
static size_t
ln_html(const char *s, size_t n, char *out, size_t *nout)
{
	static const struct {
		const char *name;
		char c;
	} ent[] = {
		{ "&quot;", '"' }, { "&gt;", '>' }, { "&lt;", '<' },
		{ "&amp;", '&' }, { "&#39;", '\'' }, { "&#x27;", '\'' },
		{ "&nbsp;", ' ' },
	};
	static const char *const tags[] = { "span", "font", "b", "pre", "code" };
	size_t i, k, l;

	*nout = 0;
	if (s[0] == '&') {
		for (i = 0; i < sizeof ent / sizeof ent[0]; i++) {
			l = strlen(ent[i].name);
			if (n >= l && memcmp(s, ent[i].name, l) == 0) {
				*out = ent[i].c;
				*nout = 1;
				return l;
			}
		}
		return 0;
	}
	if (s[0] != '<')
		return 0;
	k = n > 1 && s[1] == '/' ? 2 : 1;
	for (i = 0; i < sizeof tags / sizeof tags[0]; i++) {
		l = strlen(tags[i]);
		if (n < k + l + 1 || strncmp(s + k, tags[i], l) != 0 ||
		    (s[k + l] != '>' && s[k + l] != ' '))
			continue;
		for (k += l; k < n && k < LN_TAG_MAX && s[k] != '>' &&
		    s[k] != '<'; k++)
			;
		return k < n && s[k] == '>' ? k + 1 : 0;
	}
	return 0;
}

/*
 * Appends s[0..n), the window's bytes from offset b, to the joined text
 * as line number `line`, leaving its terminal escape sequences out,
 * decoding the escapes of its quoted strings (ln_decode: a traceback in
 * a JSON string, a Python repr, a Rust panic string) and its HTML
 * (ln_html): a gap each where the text's bytes and the window's part.
 * s[-before..0) is the start of its line, read only to find its quoted
 * strings.  Returns how many fewer bytes the text has than s.
 */
static size_t
ln_append_line(ln_text *j, const char *s, size_t n, size_t b, int line,
    size_t before, bool *whole)
{
	size_t r[LN_REGIONS_MAX][2], i = 0, out = 0;
	int nr = 0, ri = 0;
	bool html, bs;

	*whole = true;

	/* A short line with none of the four bytes goes in whole, seen in
	 * one pass rather than four calls (an anchor on every short line
	 * joins thousands of them). */
	if (n <= LN_SHORT) {
		for (i = 0; i < n; i++)
			if (ln_class[(unsigned char)s[i]] & LN_READ)
				break;
		if (i == n) {
			ln_append(j, s, n);
			return 0;
		}
		i = 0;
	}
	html = memchr(s, '<', n) != NULL || memchr(s, '&', n) != NULL;
	bs = memchr(s, '\\', n) != NULL;
	/* A line with nothing to read goes in whole. */
	if (!html && !bs && memchr(s, 0x1b, n) == NULL) {
		ln_append(j, s, n);
		return 0;
	}
	*whole = false;
	/* The strings are found from the line's start, `before` bytes
	 * before s, so that a hit deep in a long JSON string is known to be
	 * inside it; their bounds are then made relative to s. */
	if (bs)
		nr = ln_regions(s - before, n + before, r, LN_REGIONS_MAX);
	for (ri = 0; ri < nr; ri++) {
		r[ri][0] = r[ri][0] > before ? r[ri][0] - before : 0;
		r[ri][1] = r[ri][1] > before ? r[ri][1] - before : 0;
	}
	ri = 0;

	while (i < n) {
		size_t e = 0, no = 0;
		char c = 0;

		while (ri < nr && r[ri][1] <= i)
			ri++;
		if (j->ngap < LN_GAPS_MAX) {
			if (s[i] == 0x1b)
				e = ln_escape(s + i, n - i);
			else if (s[i] == '\\' && ri < nr && i >= r[ri][0])
				e = ln_decode(s + i, r[ri][1] - i, &c, &no);
			else if (html && (s[i] == '<' || s[i] == '&'))
				e = ln_html(s + i, n - i, &c, &no);
		}
		if (e == 0) {
			/* Up to the next byte that may start something read. */
			size_t k = i + 1;

			while (k < n && s[k] != 0x1b && s[k] != '\\' &&
			    (!html || (s[k] != '<' && s[k] != '&')))
				k++;
			ln_append(j, s + i, k - i);
			i = k;
			continue;
		}
		ln_append(j, &c, no);
		j->gap[j->ngap].t = j->len;
		j->gap[j->ngap].b = b + i + e;
		j->gap[j->ngap].line = line;
		j->ngap++;
		out += e - no;
		i += e;
	}
	return out;
}

size_t
ln_bol(const char *buf, size_t lo, size_t p)
{
	const char *nl = p > lo ? memrchr(buf + lo, '\n', p - lo) : NULL;

	return nl != NULL ? (size_t)(nl - buf) + 1 : lo;
}

size_t
ln_eol(const char *buf, size_t p, size_t len)
{
	size_t i, short_end = len - p > LN_SHORT ? p + LN_SHORT : len;
	const char *nl;
	const char *cr;

	/* Most lines are short: their end is found 16 bytes at a time
	 * (SSE2) and then byte by byte, and only a longer one is searched
	 * with memchr. */
	i = p;
#ifdef __SSE2__
	{
		const __m128i vlf = _mm_set1_epi8('\n');
		const __m128i vcr = _mm_set1_epi8('\r');

		for (; i + 16 <= short_end; i += 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(buf + i));
			int m = _mm_movemask_epi8(_mm_or_si128(
			    _mm_cmpeq_epi8(v, vlf), _mm_cmpeq_epi8(v, vcr)));

			if (m != 0)
				return i + (size_t)__builtin_ctz((unsigned)m);
		}
	}
#endif
	for (; i < short_end; i++)
		if (ln_class[(unsigned char)buf[i]] & LN_END)
			return i;
	if (short_end == len)
		return len;
	nl = memchr(buf + short_end, '\n', len - short_end);
	cr = memchr(buf + short_end, '\r', (nl != NULL ? (size_t)(nl -
	    (buf + short_end)) : len - short_end));

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

/* How many bytes of the first line come before offset p of the window:
 * none when its start is not in the window, or too far back. */
static size_t
ln_before(const ex_window *w, size_t p)
{
	if (!w->line_start_known || w->line_start > p ||
	    p - w->line_start > LN_BEFORE_MAX)
		return 0;
	return p - w->line_start;
}

/*
 * Whether the window's bytes [from, to) hold none of '\n', '\r', ESC,
 * '\\', '<' and '&'.  What was found plain before, in the same bytes (the
 * window's generation), is not looked at again: successive hits on one
 * long line ask about overlapping runs, and its bytes are so read once.
 */
static bool
ln_plain(ln_text *j, const ex_window *w, size_t from, size_t to)
{
	const unsigned char *b = (const unsigned char *)w->buf;
	size_t i;

	if (w->gen == 0 || j->pl_gen != w->gen || j->pl_buf != w->buf ||
	    from < j->pl_lo || from > j->pl_hi) {
		j->pl_buf = w->buf;
		j->pl_gen = w->gen;
		j->pl_lo = j->pl_hi = from;
	}
	for (i = j->pl_hi; i < to; i++)
		if (ln_class[b[i]] != 0)
			break;
	j->pl_hi = i;
	return i >= to;
}

/*
 * Whether the last join of j can be moved on by one line to give the join
 * of w from s (ln_join_shift): it was of the same bytes (the window's
 * buffer, generation, length and wrap width) with as many lines, it ended
 * because it had them all (not at the window's end nor at EX_TEXT_MAX
 * bytes), each of its lines went in whole (no byte of them read as an
 * escape, a quoted string's escape or HTML: ln_append_line's whole) with
 * a '\n' before each but the first (no console's wrap joined), and s is
 * where its second line's text began, that line starting at
 * w->line_start.
 */
static bool
ln_can_shift(const ln_text *j, const ex_window *w, size_t s, int max_lines)
{
	return w->gen != 0 && j->sh_ok && j->sh_buf == w->buf &&
	    j->sh_gen == w->gen && j->sh_len == w->len &&
	    j->sh_wrap == w->wrap_width && j->sh_lines == max_lines &&
	    j->nseg == max_lines && j->nseg >= 2 && j->px_n >= 1 &&
	    j->segs[j->s0 + 1].b == s && j->px_at[j->px0] == w->line_start &&
	    w->line_start_known;
}

/*
 * The join of the next line on (ln_can_shift): the text without its first
 * line and the '\n' after it, every offset moved down.  What ln_join would
 * make of the same lines is this: each of them went in whole, so its text
 * is its bytes whatever came before it (ln_append_line reads the line's
 * start, `before`, only for a line with a backslash, and the first line's
 * prefix is stripped by s as the others' by their prefix); a line is
 * joined to the one before without a '\n' only after a line of a console's
 * width, which each one's length (from its own start: begin) says the
 * same in both joins; and the prefixes of the lines after the first are
 * the ones found.  The caller joins the lines after them.
 */
static void
ln_join_shift(ln_text *j)
{
	size_t cut = ln_line(j, 1).t;
	int i;

	/*
	 * Whether the text without its first line is the text's start: it
	 * is when the text repeats every cut bytes, which a text found equal
	 * to the one before it at the last shift of a line of this length
	 * does (old = R B = A R gives old the period |A|), and so need not
	 * be compared again.  ln_join then compares only the new line.
	 */
	j->same = j->period == cut ||
	    memcmp(j->text + cut, j->text, j->len - cut) == 0;
	j->period = 0;
	/* The first line let go: the text, the lines and the prefixes
	 * start one line on, and the '\n' are counted from the new first
	 * line.  Nothing else moves, but for the room the next lines need
	 * (about once per EX_TEXT_MAX bytes and EX_LINES_MAX lines). */
	j->off += cut;
	j->len -= cut;
	j->nl0 = j->segs[j->s0 + 1].nl;
	j->s0++;
	j->nseg--;
	j->px0++;
	j->px_n--;
	if (j->off > EX_TEXT_MAX) {
		memmove(j->own, j->own + j->off, j->len);
		for (i = 0; i < j->nseg; i++)
			j->segs[j->s0 + i].t -= j->off;
		j->off = 0;
	}
	if (j->s0 > EX_LINES_MAX) {
		memmove(j->segs, j->segs + j->s0,
		    (size_t)j->nseg * sizeof j->segs[0]);
		j->s0 = 0;
	}
	if (j->px0 > EX_LINES_MAX) {
		memmove(j->px_at, j->px_at + j->px0,
		    (size_t)j->px_n * sizeof j->px_at[0]);
		memmove(j->px_eol, j->px_eol + j->px0,
		    (size_t)j->px_n * sizeof j->px_eol[0]);
		memmove(j->px_pre, j->px_pre + j->px0,
		    (size_t)j->px_n * sizeof j->px_pre[0]);
		j->px0 = 0;
	}
	j->text = j->own + j->off;
}

/*
 * A line break that a console's hard wrap put inside a word or a number
 * ("2.00 Gi" / "B", "capac" / "ity") is joined without the '\n': the line
 * before is exactly a console's width long and letters or digits meet at
 * the break.  The width is one of the usual consoles', or the one the
 * scanner saw this log wrapped at (w->wrap_width, scan.c's sc_seams).
 *
 * Successive hits on successive lines (an anchor on every line) join
 * the same lines but one: such a join is the last one moved on by a line
 * (ln_can_shift), and only its new last line is read, so that a line is
 * read about once, not once per join it is in (max_lines).
 */
void
ln_join(ln_text *j, px_ctx *px, const ex_window *w, size_t s, int max_lines)
{
	size_t p = s, begin = w->line_start, prev_len = 0;
	size_t old_at[EX_LINES_MAX], old_eol[EX_LINES_MAX], old_pre[EX_LINES_MAX];
	uint64_t nl = 0;
	int old_n = 0, k = 0;
	bool simple = true, full = false;
	size_t old_len = 0, cut = 0;

	if (max_lines > EX_LINES_MAX)
		max_lines = EX_LINES_MAX;
	if (ln_can_shift(j, w, s, max_lines)) {
		old_len = j->len;
		cut = ln_line(j, 1).t;
		ln_join_shift(j);
		p = j->sh_p;
		begin = j->sh_begin;
		prev_len = j->sh_prev_len;
		nl = j->sh_nl;
		goto lines;
	}
	/* The last join's prefixes, when they are of the same bytes. */
	if (w->gen != 0 && j->px_gen == w->gen && j->px_buf == w->buf) {
		old_n = j->px_n;
		memcpy(old_at, j->px_at + j->px0,
		    (size_t)old_n * sizeof old_at[0]);
		memcpy(old_eol, j->px_eol + j->px0,
		    (size_t)old_n * sizeof old_eol[0]);
		memcpy(old_pre, j->px_pre + j->px0,
		    (size_t)old_n * sizeof old_pre[0]);
	}
	j->px_buf = w->buf;
	j->px_gen = w->gen;
	j->px_n = 0;
	j->px0 = 0;
	j->off = 0;
	j->s0 = 0;
	j->nl0 = 0;
	j->text = j->own;
	j->src_buf = NULL;
	j->same = false;
	j->period = 0;
	j->len = 0;
	j->nseg = 0;
	j->ngap = 0;
	j->end = s;
lines:
	while (j->nseg < max_lines && j->len < EX_TEXT_MAX && p <= w->len) {
		size_t room = EX_TEXT_MAX - j->len, eol;
		bool whole;

		/*
		 * A line longer than the room left in the text (a 300 MB
		 * line, a line of a thousand anchors) is looked at only as
		 * far as the text can take it: when its first `room` bytes
		 * hold no terminator and nothing that ln_append_line would
		 * read (an escape, a backslash, HTML), they fill the text
		 * and nothing after them counts, so that a hit costs the
		 * same whatever the length of its line.  Otherwise its end
		 * is found as before.
		 */
		if (j->nseg > 0 || w->len - p <= room ||
		    !ln_plain(j, w, p, p + room)) {
			eol = ln_eol(w->buf, p, w->len);
		} else {
			/* The text is then the window's bytes themselves:
			 * not copied. */
			j->segs[j->s0 + j->nseg] = (ln_seg){
			    .t = j->off + j->len, .b = p, .nl = nl };
			j->nseg++;
			j->text = w->buf + p;
			j->len = room;
			j->src_buf = w->buf;
			j->src_gen = w->gen;
			j->src_at = p;
			if (p + room > j->end)
				j->end = p + room;
			simple = false;
			break;
		}
		/* The line's bytes, its terminator and the byte after it
		 * (a "\r\n") were read. */
		if ((eol + 2 < w->len ? eol + 2 : w->len) > j->end)
			j->end = eol + 2 < w->len ? eol + 2 : w->len;

		if (j->nseg > 0) {
			size_t pre;

			/* Offsets only grow along both lists. */
			while (k < old_n && old_at[k] < p)
				k++;
			if (k < old_n && old_at[k] == p && old_eol[k] == eol)
				pre = old_pre[k];
			else
				pre = px_strip(px, w->buf + p, eol - p, NULL,
				    NULL);
			if (j->px_n < EX_LINES_MAX) {
				j->px_at[j->px0 + j->px_n] = p;
				j->px_eol[j->px0 + j->px_n] = eol;
				j->px_pre[j->px0 + j->px_n++] = pre;
			}

			/* A line with a prefix, or a date, starts a record of
			 * its own: it is no console's wrap. */
			/* A path or a device name cut at a ':' or a '/'
			 * ("task:" / "0/device:GPU:0") is joined too. */
			if (!((ln_console_width(prev_len) ||
			    (w->wrap_width != 0 && prev_len == w->wrap_width)) &&
			    pre == 0 &&
			    j->len > 0 && p + 4 < eol &&
			    (ln_word_char(j->text[j->len - 1]) ||
			    j->text[j->len - 1] == ':' ||
			    j->text[j->len - 1] == '/') &&
			    j->text[j->len - 1] != '.' &&
			    (ln_word_char(w->buf[p]) || w->buf[p] == '/') &&
			    !(ln_digits(w->buf + p, 4) && w->buf[p + 4] == '-')))
				ln_append(j, "\n", 1);
			else
				simple = false;
			p += pre;
		}
		j->segs[j->s0 + j->nseg] = (ln_seg){ .t = j->off + j->len,
		    .b = p, .nl = nl };
		j->nseg++;
		/* The width a console saw: without the escapes. */
		prev_len = eol - begin - ln_append_line(j, w->buf + p, eol - p,
		    p, j->nseg - 1, j->nseg == 1 ? ln_before(w, p) : 0, &whole);
		if (!whole)
			simple = false;
		if (eol >= w->len)
			break;
		if (w->buf[eol] == '\r' && eol + 1 < w->len &&
		    w->buf[eol + 1] == '\n')
			eol++;
		if (w->buf[eol] == '\n')
			nl++;
		p = begin = eol + 1;
		if (j->nseg == max_lines && j->len < EX_TEXT_MAX && p <= w->len)
			full = true;
	}
	/* A shifted text is the one before when the line it took in is the
	 * one it let go (the text's start is its second line on, and was
	 * compared in ln_join_shift): then it repeats every cut bytes. */
	if (cut != 0) {
		j->same = j->same && j->len == old_len && j->len >= 2 * cut &&
		    memcmp(j->text + j->len - cut, j->text + j->len - 2 * cut,
		    cut) == 0;
		j->period = j->same ? cut : 0;
	}
	/* What ln_join_shift needs to move this join on (ln_can_shift). */
	j->sh_ok = simple && full && j->ngap == 0;
	j->sh_buf = w->buf;
	j->sh_gen = w->gen;
	j->sh_len = w->len;
	j->sh_wrap = w->wrap_width;
	j->sh_lines = max_lines;
	j->sh_p = p;
	j->sh_begin = begin;
	j->sh_prev_len = prev_len;
	j->sh_nl = nl;
}

void
ln_map(const ln_text *j, size_t t, size_t *b, uint64_t *nl)
{
	int i = j->nseg - 1, g = j->ngap - 1;

	while (i > 0 && ln_line(j, i).t > t)
		i--;
	while (g >= 0 && (j->gap[g].line > i || j->gap[g].t > t))
		g--;
	if (g >= 0 && j->gap[g].line == i)
		*b = j->gap[g].b + (t - j->gap[g].t);
	else
		*b = ln_line(j, i).b + (t - ln_line(j, i).t);
	*nl = ln_line(j, i).nl;
}

size_t
ln_unmap(const ln_text *j, size_t b)
{
	int g = -1, k;

	for (k = 0; k < j->ngap && j->gap[k].line == 0 && j->gap[k].b <= b; k++)
		g = k;
	if (g >= 0)
		return j->gap[g].t + (b - j->gap[g].b);
	return ln_line(j, 0).t + (b - ln_line(j, 0).b);
}

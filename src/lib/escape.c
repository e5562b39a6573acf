/*
 * escape.c: text taken from a log (or a rule, or a report read back),
 * made safe for where it goes: a terminal, Markdown, or JSON.
 *
 * The text report never passes a control character or an invalid UTF-8
 * byte to the terminal (an ESC from a log could otherwise recolour it,
 * retitle it or plant an OSC 8 link); Markdown holds text from outside
 * only in code spans and fenced blocks, where no link, tag, mention,
 * reference or emoji can form; and every JSON string is valid UTF-8
 * with its controls escaped, so that a JSON report shown on a terminal is
 * as harmless as the text one.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "report_json.h"

/*
 * Whether cp is a format character that reorders or hides text: the bidi
 * embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069, the
 * Arabic letter mark U+061C, the marks U+200E, U+200F), the zero-width
 * characters (U+200B..U+200D, U+2060..U+2064, U+FEFF), the soft hyphen,
 * the Mongolian vowel separator, the deprecated format characters
 * U+206A..U+206F, the interlinear annotations U+FFF9..U+FFFB and the tag
 * characters U+E0000..U+E007F (Unicode's Cf category, in the planes a log
 * can hold).  A terminal shows them as nothing, or turns the text around
 * them ("Trojan Source", CVE-2021-42574), so they are shown as \uXXXX.
 */
bool
od_escape_invisible(unsigned cp)
{
	return cp == 0xad || cp == 0x61c || cp == 0x180e ||
	    (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x206f) ||
	    cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) ||
	    (cp >= 0xe0000 && cp <= 0xe007f);
}

/*
 * Text for a terminal: controls and bad bytes as \xNN, invisible format
 * characters as \uXXXX, and a backslash as \\, so that the text "\x1b"
 * in a log reads "\\x1b" and never the same as an escaped ESC.  With
 * indent, a newline is written as a newline followed by indent and a tab
 * as a space; with no indent (one line, as a diagnostic is), they are
 * \x0a and \x09.  With html, '&', '<', '>', '"' and '\'' become
 * character references too, so that no tag, attribute, comment or entity
 * forms from a log, in an element or in a quoted attribute.
 */
static void
esc_text(FILE *out, const char *s, size_t n, const char *indent, bool html)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned cp;
		size_t len = od_utf8_decode(p + i, n - i, &cp);

		if (len == 0) {
			fprintf(out, "\\x%02x", p[i]);
			i++;
			continue;
		}
		if (cp == '\n' && indent != NULL)
			fprintf(out, "\n%s", indent);
		else if (cp == '\t' && indent != NULL)
			fputc(' ', out);
		else if (cp == '\\')
			fputs("\\\\", out);
		else if (html && cp == '&')
			fputs("&amp;", out);
		else if (html && cp == '<')
			fputs("&lt;", out);
		else if (html && cp == '>')
			fputs("&gt;", out);
		else if (html && cp == '"')
			fputs("&quot;", out);
		else if (html && cp == '\'')
			fputs("&#39;", out);
		else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			fprintf(out, "\\x%02x", cp);
		else if (od_escape_invisible(cp))
			fprintf(out, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
		else
			fwrite(p + i, 1, len, out);
		i += len;
	}
}

void
od_escape_text(FILE *out, const char *s, size_t n, const char *indent)
{
	esc_text(out, s, n, indent, false);
}

void
od_escape_line(FILE *out, const char *s)
{
	esc_text(out, s, strlen(s), NULL, false);
}

/*
 * Text for HTML (report_html.c): shown as the text report shows it, with
 * the HTML characters as references (esc_text).  With pre (a <pre>
 * block), a newline stays a newline and a tab is a space; without, they
 * are \x0a and \x09, as on one line of the text report.
 */
void
od_escape_html(FILE *out, const char *s, size_t n, bool pre)
{
	esc_text(out, s, n, pre ? "" : NULL, true);
}

/*
 * Markdown for tickets.  Text from outside (a log, a file name, a rule)
 * never reaches Markdown's prose, where a renderer's autolinks
 * (cmark-gfm's www. and e-mail extension, linkify's international
 * domains), mentions, references (#12, GH-12, o/r#5, !12, ~label) and
 * emoji shortcodes form whatever is escaped: it goes into a code span or
 * a fenced block, where nothing is interpreted and the text pastes back
 * as it was.  Within them only what cannot be shown is changed: a control
 * character is written \xNN, as in the text report, a bidi or invisible
 * format character (od_escape_invisible) as its code point ("U+202E"),
 * and a byte that does not start valid UTF-8 as U+FFFD, as the JSON
 * report does.
 */

/* The longest run of backticks in s[0..n). */
static size_t
md_longest_run(const char *s, size_t n)
{
	size_t i, run = 0, longest = 0;

	for (i = 0; i < n; i++) {
		run = s[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	return longest;
}

static void
md_ticks(FILE *out, size_t k)
{
	while (k-- > 0)
		fputc('`', out);
}

static bool
md_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * s[0..n) with what cannot be shown made visible.  In a span (one line),
 * newlines, carriage returns and tabs become spaces, and in a table cell
 * a '|' is written "\|", which GFM's table reads as a '|' inside the
 * span; in a block, newlines and tabs are kept and a carriage return
 * before a newline dropped.
 */
static void
md_clean(FILE *out, const char *s, size_t n, bool span, bool table)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned cp;
		size_t len = od_utf8_decode(p + i, n - i, &cp);

		if (len == 0) {
			fputs("\uFFFD", out);
			i++;
			continue;
		}
		if (span && (cp == '\n' || cp == '\r' || cp == '\t'))
			fputc(' ', out);
		else if (!span && (cp == '\n' || cp == '\t'))
			fputc((int)cp, out);
		else if (!span && cp == '\r' && i + 1 < n && p[i + 1] == '\n')
			;
		else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			fprintf(out, "\\x%02x", cp);
		else if (od_escape_invisible(cp))
			fprintf(out, "U+%04X", cp);
		else if (table && cp == '|')
			fputs("\\|", out);
		else
			fwrite(p + i, 1, len, out);
		i += len;
	}
}

void
od_escape_markdown_code(FILE *out, const char *s, size_t n, bool table)
{
	size_t ticks = md_longest_run(s, n) + 1, i;
	bool blank = true, pad;

	for (i = 0; i < n; i++)
		blank &= md_space(s[i]);
	if (n == 0)
		return;
	/*
	 * CommonMark strips one space from each end of a span whose content
	 * starts and ends with one (and is not all spaces): a space inside
	 * each end is padding when the text starts or ends with a backtick
	 * (which would join the fence) or a space (which would be lost).
	 */
	pad = !blank && (s[0] == '`' || s[n - 1] == '`' || md_space(s[0]) ||
	    md_space(s[n - 1]));
	md_ticks(out, ticks);
	if (pad)
		fputc(' ', out);
	md_clean(out, s, n, true, table);
	if (pad)
		fputc(' ', out);
	md_ticks(out, ticks);
}

/*
 * Prose from a rule (a title, an explanation, a line of evidence), with
 * the values the rule's template put in, as Markdown prose where that is
 * safe and code spans where it is not.  The text is cut into words at
 * white space; a word's leading ( " ' and trailing . , ; : ! ? ) " '
 * are punctuation (a ')' that closes a '(' of the word stays in it).
 * What is left is written as prose only when nothing can form from it: it
 * is made of ASCII letters and digits, with '-' and '\'' inside
 * ("non-PyTorch", "PyTorch's"), a decimal number ("5.96", "10%"), an
 * abbreviation of single letters and dots ("e.g"), one of the operators
 * - + = x / < <= > >= (written as entities), or a run of non-ASCII
 * characters none of which is invisible; and it is not a reference
 * (GH-12).  Any other word (an identifier, a path, a setting, a URL, an
 * address, anything with # @ ! ~ : _ * ` [ < & |) is a code span, the
 * words of a run of them with no punctuation between them one span, so
 * that a setting or a call pastes back as it is.  A number that starts
 * the text is followed by an escaped '.' or ')' (no list starts).
 */
static bool
md_prose_plain(const char *w, size_t n, bool first)
{
	static const char *const ops[] = {
		"-", "+", "=", "x", "/", "<", "<=", ">", ">=", "--",
	};
	size_t i, dots = 0, digits = 0, letters = 0;

	if (n == 0)
		return true;
	for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strlen(ops[i]) == n && memcmp(ops[i], w, n) == 0)
			return !first;
	if ((unsigned char)w[0] >= 0x80) {
		for (i = 0; i < n;) {
			unsigned cp;
			size_t len = od_utf8_decode((const unsigned char *)w + i,
			    n - i, &cp);

			if (len == 0 || cp < 0xa0 || od_escape_invisible(cp))
				return false;
			i += len;
		}
		return true;
	}
	if (n > 3 && w[0] == 'G' && w[1] == 'H' && w[2] == '-')
		return false;
	for (i = 0; i < n; i++) {
		char c = w[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
			letters++;
		else if (c >= '0' && c <= '9')
			digits++;
		else if ((c == '-' || c == '\'') && i > 0 && i + 1 < n &&
		    w[i + 1] != '-' && w[i + 1] != '\'')
			;
		else if (c == '.' && i > 0 && i + 1 < n)
			dots++;
		else if (c == '%' && i + 1 == n && i > 0)
			;
		else
			return false;
	}
	if (dots == 0)
		return true;
	/* A decimal number, or single letters between dots. */
	if (letters == 0)
		return dots == 1 && memchr(w, '-', n) == NULL &&
		    memchr(w, '\'', n) == NULL;
	if (digits > 0)
		return false;
	for (i = 0; i < n; i++)
		if (w[i] != '.' && ((i > 0 && w[i - 1] != '.') ||
		    (i + 1 < n && w[i + 1] != '.')))
			return false;
	return true;
}

/* Writes a plain word of md_prose_plain, the operators < and > as
 * entities. */
static void
md_prose_word(FILE *out, const char *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (w[i] == '<')
			fputs("&lt;", out);
		else if (w[i] == '>')
			fputs("&gt;", out);
		else
			fputc(w[i], out);
	}
}

void
od_escape_markdown_prose(FILE *out, const char *s, size_t n)
{
	size_t i = 0, span = 0, span_end = 0;
	bool in_span = false, first = true, sep = false;

	while (i < n) {
		size_t w, e, a, b, k;

		while (i < n && md_space(s[i]))
			i++;
		if (i == n)
			break;
		w = i;
		while (i < n && !md_space(s[i]))
			i++;
		e = i;
		/* Leading and trailing punctuation. */
		for (a = w; a < e && strchr("(\"'", s[a]) != NULL; a++)
			;
		for (b = e; b > a && strchr(".,;:!?)\"'", s[b - 1]) != NULL; b--) {
			size_t opens = 0, closes = 0;

			/* A ')' that closes a '(' of the word is its own. */
			for (k = a; k < b - 1 && s[b - 1] == ')'; k++) {
				opens += s[k] == '(';
				closes += s[k] == ')';
			}
			if (opens > closes)
				break;
		}
		if (!md_prose_plain(s + a, b - a, first && a == w)) {
			/* A word of code: it joins the span before it when
			 * no punctuation parts them. */
			if (in_span && a == w) {
				span_end = b;
			} else {
				if (in_span)
					od_escape_markdown_code(out, s + span,
					    span_end - span, false);
				if (sep)
					fputc(' ', out);
				md_prose_word(out, s + w, a - w);
				span = a;
				span_end = b;
			}
			in_span = true;
			if (b < e) {
				od_escape_markdown_code(out, s + span,
				    span_end - span, false);
				md_prose_word(out, s + b, e - b);
				in_span = false;
			}
		} else {
			if (in_span)
				od_escape_markdown_code(out, s + span,
				    span_end - span, false);
			in_span = false;
			if (sep)
				fputc(' ', out);
			md_prose_word(out, s + w, b - w);
			/* No list starts with the text's first number. */
			if (first && a == w && b > w && b < e &&
			    s[w] >= '0' && s[w] <= '9' &&
			    (s[b] == '.' || s[b] == ')'))
				fputc('\\', out);
			md_prose_word(out, s + b, e - b);
		}
		sep = true;
		first = false;
	}
	if (in_span)
		od_escape_markdown_code(out, s + span, span_end - span, false);
}

void
od_escape_markdown_fence(FILE *out, const char *info, const char *s, size_t n)
{
	size_t ticks = md_longest_run(s, n) + 1;

	/* A fence of backticks closes only on a run as long, at a line's
	 * start: one longer than any run inside cannot be closed early. */
	md_ticks(out, ticks < 3 ? 3 : ticks);
	fprintf(out, "%s\n", info);
	md_clean(out, s, n, false, false);
	if (n == 0 || s[n - 1] != '\n')
		fputc('\n', out);
	md_ticks(out, ticks < 3 ? 3 : ticks);
	fputs("\n\n", out);
}

/*
 * s[0..n) as a JSON string: each byte that does not start a valid UTF-8
 * sequence (od_utf8_decode) becomes U+FFFD, as jansson takes only valid
 * UTF-8.  NUL bytes are kept (jansson writes them as \u0000).
 */
json_t *
od_escape_json(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, bad = 0, k = 0;
	unsigned cp;
	char *buf;
	json_t *v;

	for (i = 0; i < n; i += k) {
		k = od_utf8_decode(p + i, n - i, &cp);
		if (k == 0) {
			bad++;
			k = 1;
		}
	}
	if (bad == 0)
		return json_stringn_nocheck(s, n);
	buf = malloc(n + 2 * bad);
	if (buf == NULL)
		return NULL;
	for (i = 0, bad = 0; i < n; i += k) {
		k = od_utf8_decode(p + i, n - i, &cp);
		if (k == 0) {
			memcpy(buf + bad, "\xef\xbf\xbd", 3);
			bad += 3;
			k = 1;
		} else {
			memcpy(buf + bad, s + i, k);
			bad += k;
		}
	}
	v = json_stringn_nocheck(buf, bad);
	free(buf);
	return v;
}

/*
 * Writes JSON text made by jansson, which escapes in strings only what RFC
 * 8259 requires (the quote, the backslash, controls below 0x20): DEL, the
 * C1 controls (a terminal may take U+009B for CSI), U+2028 and U+2029
 * (line ends to JavaScript) and the bidi and invisible format characters
 * (od_escape_invisible: the value read back is the same, but a terminal
 * showing the report can no longer hide or reorder its text) are escaped
 * too, and jansson's \uXXXX escapes
 * are written in lower case.  Outside strings jansson writes only ASCII,
 * and a backslash only starts an escape, so the text can be read in one
 * pass.
 */
void
od_escape_json_dump(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;

	while (i < n) {
		unsigned cp;
		size_t len;

		/* A run of ASCII with no backslash and no DEL is written as
		 * it is, at once (a call per byte was most of the cost). */
		for (k = i; k < n && p[k] < 0x7f && p[k] != '\\'; k++)
			;
		if (k > i) {
			fwrite(p + i, 1, k - i, out);
			i = k;
			continue;
		}
		if (p[i] == '\\' && i + 1 < n) {
			fputc('\\', out);
			fputc(p[i + 1], out);
			i += 2;
			if (p[i - 1] == 'u')
				for (k = 0; k < 4 && i < n; k++, i++)
					fputc(p[i] >= 'A' && p[i] <= 'F' ?
					    p[i] - 'A' + 'a' : p[i], out);
			continue;
		}
		len = od_utf8_decode(p + i, n - i, &cp);
		if (len == 0) {
			/* Not from jansson: kept as it is. */
			fputc(p[i], out);
			i++;
			continue;
		}
		if (cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0x2028 ||
		    cp == 0x2029 || (od_escape_invisible(cp) && cp <= 0xffff))
			fprintf(out, "\\u%04x", cp);
		else if (od_escape_invisible(cp))
			/* A tag character, as its UTF-16 surrogate pair. */
			fprintf(out, "\\u%04x\\u%04x",
			    0xd800 + ((cp - 0x10000) >> 10),
			    0xdc00 + ((cp - 0x10000) & 0x3ff));
		else
			fwrite(p + i, 1, len, out);
		i += len;
	}
}

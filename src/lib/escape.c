/*
 * escape.c: text taken from a log (or a rule, or a report read back),
 * made safe for where it goes: a terminal, Markdown, or JSON.
 *
 * The text report never passes a control character or an invalid UTF-8
 * byte to the terminal (an ESC from a log could otherwise recolour it,
 * retitle it or plant an OSC 8 link); no link, tag, mention, emphasis or
 * table break can form in Markdown; and every JSON string is valid UTF-8
 * with its controls escaped, so that a JSON report shown on a terminal is
 * as harmless as the text one.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "report_json.h"

/* Writes log text for a terminal: controls and bad bytes as \xNN, a
 * newline followed by indent. */
void
od_escape_text(FILE *out, const char *s, size_t n, const char *indent)
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
		if (cp == '\n')
			fprintf(out, "\n%s", indent);
		else if (cp == '\t')
			fputc(' ', out);
		else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			fprintf(out, "\\x%02x", cp);
		else
			fwrite(p + i, 1, len, out);
		i += len;
	}
}

/*
 * Markdown for tickets.  Everything that comes from the log or from a rule
 * goes out either escaped (each character that can start emphasis, a
 * link, an HTML tag or a table cell gets a backslash; an '@', a '.' before
 * a letter and a ':' before a letter or '/' get an invisible word joiner,
 * so that no mention or autolink can form) or inside a fenced block longer
 * than any backtick run in it, where nothing is interpreted
 * (report_markdown.c).
 */
static bool
esc_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

void
od_escape_markdown(FILE *out, const char *s, size_t n)
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
		if (cp == '\n' || cp == '\r' || cp == '\t')
			fputc(' ', out);
		else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			fprintf(out, "\\x%02x", cp);
		else if (cp == '@' || (cp == '.' && i + 1 < n &&
		    esc_alpha(p[i + 1])) || (cp == ':' && i + 1 < n &&
		    (esc_alpha(p[i + 1]) || p[i + 1] == '/')))
			/*
			 * A word joiner after it, invisible: no @mention,
			 * autolink (www.host, host.py, http:) or e-mail
			 * address can form, whatever the renderer.
			 */
			fprintf(out, "%c\u2060", (char)cp);
		else if (cp < 0x80 && strchr("\\`*_{}[]()#+-!|<>&~:", (int)cp) !=
		    NULL)
			fprintf(out, "\\%c", (char)cp);
		else
			fwrite(p + i, 1, len, out);
		i += len;
	}
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
 * C1 controls (a terminal may take U+009B for CSI) and U+2028 and U+2029
 * (line ends to JavaScript) are escaped too, and jansson's \uXXXX escapes
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
		    cp == 0x2029)
			fprintf(out, "\\u%04x", cp);
		else
			fwrite(p + i, 1, len, out);
		i += len;
	}
}

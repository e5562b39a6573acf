/*
 * json_read.c: a bounded recursive-descent JSON parser into a table of
 * values (see json_read.h).
 *
 * Each value is one row: its type, its number or the offset of its
 * decoded string in the document's string arena, and for arrays and
 * objects the index of the first child and of the next sibling, so that a
 * document of n values takes n rows and at most len + n bytes of strings,
 * whatever its shape.  Recursion is bounded by JR_DEPTH_MAX.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"

typedef struct {
	jr_type type;
	int first;              /* first child, -1 */
	int next;               /* next sibling, -1 */
	int count;              /* children */
	size_t key;             /* member key: arena offset, or (size_t)-1 */
	size_t keylen;
	size_t str;             /* string: arena offset */
	size_t len;
	double num;
	bool is_int;
	int64_t i;
} jr_row;

struct jr_doc {
	jr_row *rows;
	int nrows, caprows;
	char *arena;            /* decoded strings, each NUL-terminated */
	size_t used, cap;
};

typedef struct {
	const unsigned char *p;
	size_t len, pos;
	jr_doc *doc;
	od_error *err;
	bool failed;
} jr_parser;

static void jr_fail(jr_parser *ps, const char *msg);

/* Sets the error at the current position (line and column, 1-based). */
static void
jr_fail(jr_parser *ps, const char *msg)
{
	uint64_t line = 1, col = 1;
	size_t i;

	if (ps->failed)
		return;
	ps->failed = true;
	for (i = 0; i < ps->pos && i < ps->len; i++) {
		if (ps->p[i] == '\n') {
			line++;
			col = 1;
		} else if ((ps->p[i] & 0xc0) != 0x80) {
			col++;
		}
	}
	od_error_set(ps->err, NULL, line, col, "%s", msg);
}

static void
jr_ws(jr_parser *ps)
{
	while (ps->pos < ps->len && (ps->p[ps->pos] == ' ' ||
	    ps->p[ps->pos] == '\t' || ps->p[ps->pos] == '\n' ||
	    ps->p[ps->pos] == '\r'))
		ps->pos++;
}

static int
jr_row_new(jr_parser *ps, jr_type type)
{
	jr_doc *d = ps->doc;
	jr_row *r;

	if (d->nrows == (int)JR_VALUES_MAX) {
		jr_fail(ps, "too many values");
		return -1;
	}
	if (d->nrows == d->caprows) {
		int cap = d->caprows ? d->caprows * 2 : 64;
		jr_row *rows = realloc(d->rows, (size_t)cap * sizeof *rows);

		if (rows == NULL) {
			jr_fail(ps, "out of memory");
			return -1;
		}
		d->rows = rows;
		d->caprows = cap;
	}
	r = &d->rows[d->nrows];
	memset(r, 0, sizeof *r);
	r->type = type;
	r->first = r->next = -1;
	r->key = (size_t)-1;
	return d->nrows++;
}

/* Appends n bytes to the arena. */
static bool
jr_put(jr_parser *ps, const void *s, size_t n)
{
	jr_doc *d = ps->doc;

	if (d->used + n > d->cap) {
		size_t cap = d->cap ? d->cap : 256;
		char *a;

		while (cap < d->used + n)
			cap *= 2;
		a = realloc(d->arena, cap);
		if (a == NULL) {
			jr_fail(ps, "out of memory");
			return false;
		}
		d->arena = a;
		d->cap = cap;
	}
	memcpy(d->arena + d->used, s, n);
	d->used += n;
	return true;
}

static int
jr_hex(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reads the four hex digits of a \u escape at ps->pos. */
static long
jr_u4(jr_parser *ps)
{
	long v = 0;
	int i;

	if (ps->len - ps->pos < 4) {
		jr_fail(ps, "a \\u escape needs four hex digits");
		return -1;
	}
	for (i = 0; i < 4; i++) {
		int h = jr_hex(ps->p[ps->pos + (size_t)i]);

		if (h < 0) {
			jr_fail(ps, "a \\u escape needs four hex digits");
			return -1;
		}
		v = v * 16 + h;
	}
	ps->pos += 4;
	return v;
}

static bool
jr_put_utf8(jr_parser *ps, unsigned long cp)
{
	unsigned char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | (cp >> 6));
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | (cp >> 12));
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | (cp >> 18));
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return jr_put(ps, b, n);
}

/*
 * Reads a string at ps->pos (at its opening quote) into the arena.  Sets
 * *off and *len to where it is.
 */
static bool
jr_string(jr_parser *ps, size_t *off, size_t *len)
{
	size_t start;

	ps->pos++;
	*off = ps->doc->used;
	while (ps->pos < ps->len) {
		unsigned char c = ps->p[ps->pos];

		if (c == '"') {
			ps->pos++;
			*len = ps->doc->used - *off;
			return jr_put(ps, "", 1);
		}
		if (c < 0x20) {
			jr_fail(ps, "a control character in a string");
			return false;
		}
		if (c == '\\') {
			long cp;

			if (++ps->pos == ps->len)
				break;
			c = ps->p[ps->pos++];
			switch (c) {
			case '"': case '\\': case '/':
				if (!jr_put(ps, &c, 1))
					return false;
				break;
			case 'b': if (!jr_put(ps, "\b", 1)) return false; break;
			case 'f': if (!jr_put(ps, "\f", 1)) return false; break;
			case 'n': if (!jr_put(ps, "\n", 1)) return false; break;
			case 'r': if (!jr_put(ps, "\r", 1)) return false; break;
			case 't': if (!jr_put(ps, "\t", 1)) return false; break;
			case 'u':
				if ((cp = jr_u4(ps)) < 0)
					return false;
				if (cp >= 0xd800 && cp <= 0xdbff) {
					long lo;

					if (ps->len - ps->pos < 2 ||
					    ps->p[ps->pos] != '\\' ||
					    ps->p[ps->pos + 1] != 'u') {
						jr_fail(ps, "a lone surrogate "
						    "escape");
						return false;
					}
					ps->pos += 2;
					if ((lo = jr_u4(ps)) < 0)
						return false;
					if (lo < 0xdc00 || lo > 0xdfff) {
						jr_fail(ps, "a lone surrogate "
						    "escape");
						return false;
					}
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					    (lo - 0xdc00);
				} else if (cp >= 0xdc00 && cp <= 0xdfff) {
					jr_fail(ps, "a lone surrogate escape");
					return false;
				}
				if (!jr_put_utf8(ps, (unsigned long)cp))
					return false;
				break;
			default:
				ps->pos -= 2;
				jr_fail(ps, "an unknown escape in a string");
				return false;
			}
			continue;
		}
		/* A run of plain bytes, checked as UTF-8. */
		start = ps->pos;
		while (ps->pos < ps->len && ps->p[ps->pos] >= 0x20 &&
		    ps->p[ps->pos] != '"' && ps->p[ps->pos] != '\\') {
			if (ps->p[ps->pos] < 0x80) {
				ps->pos++;
			} else {
				unsigned cp;
				size_t n = od_utf8_decode(ps->p + ps->pos,
				    ps->len - ps->pos, &cp);

				if (n == 0) {
					jr_fail(ps, "invalid UTF-8 in a "
					    "string");
					return false;
				}
				ps->pos += n;
			}
		}
		if (!jr_put(ps, ps->p + start, ps->pos - start))
			return false;
	}
	jr_fail(ps, "a string without its closing quote");
	return false;
}

static bool
jr_digit(const jr_parser *ps)
{
	return ps->pos < ps->len && ps->p[ps->pos] >= '0' &&
	    ps->p[ps->pos] <= '9';
}

static int
jr_number(jr_parser *ps)
{
	size_t start = ps->pos;
	bool integral = true, neg = false;
	char buf[64];
	int row;
	jr_row *r;

	if (ps->p[ps->pos] == '-') {
		neg = true;
		ps->pos++;
	}
	if (!jr_digit(ps)) {
		jr_fail(ps, "a number without digits");
		return -1;
	}
	if (ps->p[ps->pos] == '0') {
		ps->pos++;
		if (jr_digit(ps)) {
			jr_fail(ps, "a number with a leading zero");
			return -1;
		}
	} else {
		while (jr_digit(ps))
			ps->pos++;
	}
	if (ps->pos < ps->len && ps->p[ps->pos] == '.') {
		integral = false;
		ps->pos++;
		if (!jr_digit(ps)) {
			jr_fail(ps, "a number without digits after '.'");
			return -1;
		}
		while (jr_digit(ps))
			ps->pos++;
	}
	if (ps->pos < ps->len && (ps->p[ps->pos] == 'e' ||
	    ps->p[ps->pos] == 'E')) {
		integral = false;
		ps->pos++;
		if (ps->pos < ps->len && (ps->p[ps->pos] == '+' ||
		    ps->p[ps->pos] == '-'))
			ps->pos++;
		if (!jr_digit(ps)) {
			jr_fail(ps, "a number without exponent digits");
			return -1;
		}
		while (jr_digit(ps))
			ps->pos++;
	}
	if ((row = jr_row_new(ps, JR_NUMBER)) < 0)
		return -1;
	r = &ps->doc->rows[row];
	if (ps->pos - start < sizeof buf) {
		memcpy(buf, ps->p + start, ps->pos - start);
		buf[ps->pos - start] = '\0';
		errno = 0;
		r->num = strtod(buf, NULL);
		if (integral) {
			long long v;

			errno = 0;
			v = strtoll(buf, NULL, 10);
			r->is_int = errno == 0;
			r->i = v;
		}
	} else {
		/* A number longer than any int64_t or double needs. */
		r->num = neg ? -HUGE_VAL : HUGE_VAL;
	}
	return row;
}

static bool
jr_word(jr_parser *ps, const char *w)
{
	size_t n = strlen(w);

	if (ps->len - ps->pos < n || memcmp(ps->p + ps->pos, w, n) != 0) {
		jr_fail(ps, "an unexpected character");
		return false;
	}
	ps->pos += n;
	return true;
}

static int jr_value_at(jr_parser *ps, int depth);

/* Links child after *last under parent. */
static void
jr_link(jr_doc *d, int parent, int *last, int child)
{
	if (*last < 0)
		d->rows[parent].first = child;
	else
		d->rows[*last].next = child;
	*last = child;
	d->rows[parent].count++;
}

static int
jr_array(jr_parser *ps, int depth)
{
	int row = jr_row_new(ps, JR_ARRAY), last = -1, child;

	if (row < 0)
		return -1;
	ps->pos++;
	jr_ws(ps);
	if (ps->pos < ps->len && ps->p[ps->pos] == ']') {
		ps->pos++;
		return row;
	}
	for (;;) {
		if ((child = jr_value_at(ps, depth + 1)) < 0)
			return -1;
		jr_link(ps->doc, row, &last, child);
		jr_ws(ps);
		if (ps->pos < ps->len && ps->p[ps->pos] == ',') {
			ps->pos++;
			continue;
		}
		if (ps->pos < ps->len && ps->p[ps->pos] == ']') {
			ps->pos++;
			return row;
		}
		jr_fail(ps, "expected ',' or ']' in an array");
		return -1;
	}
}

static int
jr_object(jr_parser *ps, int depth)
{
	int row = jr_row_new(ps, JR_OBJECT), last = -1, child;
	size_t koff, klen;

	if (row < 0)
		return -1;
	ps->pos++;
	jr_ws(ps);
	if (ps->pos < ps->len && ps->p[ps->pos] == '}') {
		ps->pos++;
		return row;
	}
	for (;;) {
		jr_ws(ps);
		if (ps->pos >= ps->len || ps->p[ps->pos] != '"') {
			jr_fail(ps, "expected a string key in an object");
			return -1;
		}
		if (!jr_string(ps, &koff, &klen))
			return -1;
		jr_ws(ps);
		if (ps->pos >= ps->len || ps->p[ps->pos] != ':') {
			jr_fail(ps, "expected ':' after a key");
			return -1;
		}
		ps->pos++;
		if ((child = jr_value_at(ps, depth + 1)) < 0)
			return -1;
		ps->doc->rows[child].key = koff;
		ps->doc->rows[child].keylen = klen;
		jr_link(ps->doc, row, &last, child);
		jr_ws(ps);
		if (ps->pos < ps->len && ps->p[ps->pos] == ',') {
			ps->pos++;
			continue;
		}
		if (ps->pos < ps->len && ps->p[ps->pos] == '}') {
			ps->pos++;
			return row;
		}
		jr_fail(ps, "expected ',' or '}' in an object");
		return -1;
	}
}

/* Parses one value at ps->pos; returns its row or -1. */
static int
jr_value_at(jr_parser *ps, int depth)
{
	int row;
	size_t off, len;

	if (depth > JR_DEPTH_MAX) {
		jr_fail(ps, "nested too deeply");
		return -1;
	}
	jr_ws(ps);
	if (ps->pos >= ps->len) {
		jr_fail(ps, "unexpected end of input");
		return -1;
	}
	switch (ps->p[ps->pos]) {
	case '{':
		return jr_object(ps, depth);
	case '[':
		return jr_array(ps, depth);
	case '"':
		if (!jr_string(ps, &off, &len))
			return -1;
		if ((row = jr_row_new(ps, JR_STRING)) < 0)
			return -1;
		ps->doc->rows[row].str = off;
		ps->doc->rows[row].len = len;
		return row;
	case 't':
		return jr_word(ps, "true") ? jr_row_new(ps, JR_TRUE) : -1;
	case 'f':
		return jr_word(ps, "false") ? jr_row_new(ps, JR_FALSE) : -1;
	case 'n':
		return jr_word(ps, "null") ? jr_row_new(ps, JR_NULL) : -1;
	default:
		if (ps->p[ps->pos] == '-' || jr_digit(ps))
			return jr_number(ps);
		jr_fail(ps, "an unexpected character");
		return -1;
	}
}

jr_doc *
jr_parse(const char *text, size_t len, od_error *err)
{
	jr_parser ps;
	jr_doc *d;

	if (len > JR_INPUT_MAX) {
		od_error_set(err, NULL, 0, 0, "more than %u bytes of JSON",
		    JR_INPUT_MAX);
		return NULL;
	}
	d = calloc(1, sizeof *d);
	if (d == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	memset(&ps, 0, sizeof ps);
	ps.p = (const unsigned char *)text;
	ps.len = len;
	ps.doc = d;
	ps.err = err;
	if (jr_value_at(&ps, 0) == 0) {
		jr_ws(&ps);
		if (ps.pos < ps.len)
			jr_fail(&ps, "more text after the JSON value");
	} else {
		jr_fail(&ps, "not a JSON value");
	}
	if (ps.failed) {
		jr_free(d);
		return NULL;
	}
	return d;
}

void
jr_free(jr_doc *d)
{
	if (d == NULL)
		return;
	free(d->rows);
	free(d->arena);
	free(d);
}

jr_ref
jr_root(const jr_doc *d)
{
	return d != NULL && d->nrows > 0 ? 0 : -1;
}

static const jr_row *
jr_row_of(const jr_doc *d, jr_ref v)
{
	return d != NULL && v >= 0 && v < d->nrows ? &d->rows[v] : NULL;
}

jr_type
jr_type_of(const jr_doc *d, jr_ref v)
{
	const jr_row *r = jr_row_of(d, v);

	return r != NULL ? r->type : JR_NULL;
}

jr_ref
jr_first(const jr_doc *d, jr_ref v)
{
	const jr_row *r = jr_row_of(d, v);

	return r != NULL && (r->type == JR_ARRAY || r->type == JR_OBJECT) ?
	    r->first : -1;
}

jr_ref
jr_next(const jr_doc *d, jr_ref v)
{
	const jr_row *r = jr_row_of(d, v);

	return r != NULL ? r->next : -1;
}

size_t
jr_count(const jr_doc *d, jr_ref v)
{
	const jr_row *r = jr_row_of(d, v);

	return r != NULL && (r->type == JR_ARRAY || r->type == JR_OBJECT) ?
	    (size_t)r->count : 0;
}

const char *
jr_key(const jr_doc *d, jr_ref m, size_t *len)
{
	const jr_row *r = jr_row_of(d, m);

	if (r == NULL || r->key == (size_t)-1)
		return NULL;
	if (len != NULL)
		*len = r->keylen;
	return d->arena + r->key;
}

jr_ref
jr_get(const jr_doc *d, jr_ref obj, const char *key)
{
	size_t n = strlen(key);
	jr_ref m;

	if (jr_type_of(d, obj) != JR_OBJECT)
		return -1;
	for (m = jr_first(d, obj); m >= 0; m = jr_next(d, m))
		if (d->rows[m].keylen == n &&
		    memcmp(d->arena + d->rows[m].key, key, n) == 0)
			return m;
	return -1;
}

const char *
jr_str(const jr_doc *d, jr_ref v, size_t *len)
{
	const jr_row *r = jr_row_of(d, v);

	if (r == NULL || r->type != JR_STRING)
		return NULL;
	if (len != NULL)
		*len = r->len;
	return d->arena + r->str;
}

bool
jr_int(const jr_doc *d, jr_ref v, int64_t *out)
{
	const jr_row *r = jr_row_of(d, v);

	if (r == NULL || r->type != JR_NUMBER || !r->is_int)
		return false;
	*out = r->i;
	return true;
}

bool
jr_num(const jr_doc *d, jr_ref v, double *out)
{
	const jr_row *r = jr_row_of(d, v);

	if (r == NULL || r->type != JR_NUMBER)
		return false;
	*out = r->num;
	return true;
}

/*
 * expr.c: the condition and template language of the rules.
 *
 * The language, by precedence from low to high:
 *
 *     or
 *     and
 *     not                      (prefix)
 *     == != < <= > >=          (non-associative: a < b < c is an error)
 *     + -                      (left-associative)
 *     * /                      (left-associative)
 *     -                        (prefix)
 *     calls, parentheses, literals, facts
 *
 * Literals are numbers (42, 0.9, 1e3), percentages (90% is 0.9), sizes
 * with a unit glued to the number (2GiB, 1.5TiB, 10B are powers of 1024;
 * 2GB, 500MB are powers of 1000; converted exactly by od_size_parse_text),
 * strings in single or double quotes with the escapes \\, \' and \", and
 * true and false.  A fact is a name, [A-Za-z_][A-Za-z0-9_.]*.  The
 * functions are has(fact), min and max of two or more values, ceil,
 * floor, abs, round, and largest_divisor_at_most(n, k): the largest
 * divisor d of the whole number n (1 to XP_DIVISOR_N_MAX) with d <= k, or
 * 0 when k < 1 (no divisor is that small); unknown when n is not such a
 * number.  It finds a smaller batch that divides an effective batch
 * exactly.  value_or(x, d) is x where it is known and d where it is not
 * (a type error counts as unknown), so that a score can use evidence the
 * log may lack without becoming unknown itself.
 *
 * A fact the log does not give is unknown, and unknowns propagate:
 * arithmetic, comparisons and min/max with an unknown operand are unknown,
 * as are type errors (a string plus a number, not 3), a division by zero
 * and a result that is not finite.  and, or and not follow Kleene's
 * three-valued logic (false and unknown is false, true or unknown is
 * true), any operand that is not a boolean counting as unknown.  has() is
 * never unknown.  Strings compare with == and != only, bytewise; booleans
 * with == and != only.
 *
 * Numbers may be byte counts, which print as sizes: a size literal is one,
 * a fact may be one, and the tag follows the arithmetic: bytes +- number
 * and number +- bytes are bytes, bytes * number and number * bytes are
 * bytes, bytes / number is bytes, bytes / bytes is a plain ratio (as are
 * bytes * bytes and number / bytes, which mean nothing as sizes), min and
 * max are bytes if any argument is, and ceil, floor, round and abs keep
 * the tag.  Comparisons ignore it.
 *
 * The parser is a recursive descent that emits a postfix program, and the
 * evaluator runs that program on a fixed array of values.  The parser's
 * recursion is bounded by XP_DEPTH_MAX, the program's stack by
 * XP_STACK_MAX (both checked while parsing), and the evaluator does not
 * recurse at all.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

typedef enum {
	TK_END,
	TK_ERROR,
	TK_NUM,
	TK_STR,
	TK_IDENT,
	TK_TRUE,
	TK_FALSE,
	TK_AND,
	TK_OR,
	TK_NOT,
	TK_LPAREN,
	TK_RPAREN,
	TK_COMMA,
	TK_PLUS,
	TK_MINUS,
	TK_STAR,
	TK_SLASH,
	TK_EQ,
	TK_NE,
	TK_LT,
	TK_LE,
	TK_GT,
	TK_GE,
} xp_tokty;

typedef struct {
	xp_tokty type;
	size_t pos;             /* byte offset in the source */
	size_t len;
	double num;             /* TK_NUM */
	bool bytes;             /* TK_NUM: a size */
	bool unit;              /* TK_NUM: written with a unit or '%' */
} xp_token;

typedef enum {
	OP_NUM,
	OP_STR,
	OP_BOOL,
	OP_FACT,
	OP_HAS,
	OP_NEG,
	OP_NOT,
	OP_ADD,
	OP_SUB,
	OP_MUL,
	OP_DIV,
	OP_EQ,
	OP_NE,
	OP_LT,
	OP_LE,
	OP_GT,
	OP_GE,
	OP_AND,
	OP_OR,
	OP_MIN,
	OP_MAX,
	OP_CEIL,
	OP_FLOOR,
	OP_ABS,
	OP_ROUND,
	OP_DIVISOR,
	OP_VALUE_OR,
} xp_opcode;

/* One instruction of the postfix program. */
typedef struct {
	xp_opcode op;
	bool bytes;             /* OP_NUM */
	bool b;                 /* OP_BOOL */
	unsigned nargs;         /* OP_MIN, OP_MAX, OP_DIVISOR */
	double num;             /* OP_NUM */
	const char *str;        /* OP_STR, OP_FACT, OP_HAS: in the pool */
	size_t len;
} xp_op;

struct xp_expr {
	xp_op *ops;             /* owned */
	size_t nops;
	char *pool;             /* owned: fact names and unescaped strings */
};

typedef struct {
	const char *name;
	xp_opcode op;
	unsigned min, max;      /* arguments */
} xp_func;

static const xp_func xp_funcs[] = {
	{ "has", OP_HAS, 1, 1 },
	{ "min", OP_MIN, 2, XP_ARGS_MAX },
	{ "max", OP_MAX, 2, XP_ARGS_MAX },
	{ "ceil", OP_CEIL, 1, 1 },
	{ "floor", OP_FLOOR, 1, 1 },
	{ "abs", OP_ABS, 1, 1 },
	{ "round", OP_ROUND, 1, 1 },
	{ "largest_divisor_at_most", OP_DIVISOR, 2, 2 },
	{ "value_or", OP_VALUE_OR, 2, 2 },
};

/* The units a size literal may carry, as od_size_parse_text reads them. */
static const char *const xp_units[] = {
	"B", "KiB", "MiB", "GiB", "TiB", "PiB", "KB", "MB", "GB", "TB",
};

/* The state of one parse. */
typedef struct {
	const char *src;        /* borrowed */
	size_t len;
	size_t pos;             /* the lexer's position */
	xp_token tok;           /* the current token */
	xp_token prev;          /* the token before it */
	size_t binop_pos;       /* where the last binary operator consumed was */
	xp_fact_exists exists;
	void *ctx;
	od_error *err;
	bool failed;
	xp_op *ops;
	size_t nops, cap;
	char *pool;
	size_t pool_len;
	size_t sp, sp_max;      /* the program's stack, simulated */
} xp_parser;

static void xp_parse_or(xp_parser *p, unsigned depth);

/* Records the first error of the parse, at byte offset pos. */
static void __attribute__((format(printf, 3, 4)))
xp_fail(xp_parser *p, size_t pos, const char *fmt, ...)
{
	char msg[sizeof p->err->msg];
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	p->tok.type = TK_ERROR;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	od_error_set(p->err, NULL, 0, (uint64_t)pos + 1, "%s", msg);
}

/* Character classes, in ASCII whatever the locale. */
static bool
xp_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
xp_is_alpha(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool
xp_is_name(char c)
{
	return xp_is_alpha(c) || xp_is_digit(c) || c == '.';
}

/* Whether s[0..n) is the word w. */
static bool
xp_word(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* Whether s[0..n) is a unit a size literal may carry. */
static bool
xp_is_unit(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof xp_units / sizeof xp_units[0]; i++)
		if (xp_word(s, n, xp_units[i]))
			return true;
	return false;
}

/* Lexes a number, a percentage or a size starting at i. */
static void
xp_lex_number(xp_parser *p, size_t i)
{
	const char *s = p->src;
	size_t n = p->len, j = i, k, u;
	bool exp = false;
	char buf[72];
	int64_t v;
	double d;

	while (j < n && xp_is_digit(s[j]))
		j++;
	if (j < n && s[j] == '.') {
		if (j + 1 >= n || !xp_is_digit(s[j + 1])) {
			xp_fail(p, j + 1, "expected a digit after the decimal "
			    "point");
			return;
		}
		j++;
		while (j < n && xp_is_digit(s[j]))
			j++;
	}
	if (j < n && (s[j] == 'e' || s[j] == 'E')) {
		k = j + 1;
		if (k < n && (s[k] == '+' || s[k] == '-'))
			k++;
		if (k < n && xp_is_digit(s[k])) {
			while (k < n && xp_is_digit(s[k]))
				k++;
			j = k;
			exp = true;
		}
	}
	if (j - i >= sizeof buf - 8) {
		xp_fail(p, i, "number too long");
		return;
	}
	p->tok.type = TK_NUM;
	p->tok.bytes = false;
	p->tok.unit = false;
	if (j < n && xp_is_alpha(s[j])) {
		u = j;
		while (j < n && xp_is_name(s[j]))
			j++;
		if (!xp_is_unit(s + u, j - u)) {
			xp_fail(p, u, "unknown unit '%.*s' (sizes take B, KiB, "
			    "MiB, GiB, TiB, PiB, KB, MB, GB or TB)",
			    (int)(j - u > 24 ? 24 : j - u), s + u);
			return;
		}
		if (exp) {
			xp_fail(p, i, "a size takes no exponent: write it "
			    "with a larger unit");
			return;
		}
		if (!od_size_parse_text(s + i, j - i, &v)) {
			xp_fail(p, i, "size out of range");
			return;
		}
		p->tok.num = (double)v;
		p->tok.bytes = true;
		p->tok.unit = true;
	} else {
		memcpy(buf, s + i, j - i);
		buf[j - i] = '\0';
		d = strtod(buf, NULL);
		if (j < n && s[j] == '%') {
			d /= 100.0;
			p->tok.unit = true;
			j++;
		}
		if (!isfinite(d)) {
			xp_fail(p, i, "number out of range");
			return;
		}
		p->tok.num = d;
	}
	p->tok.len = j - i;
	p->pos = j;
}

/* Lexes a quoted string starting at i; the token keeps the quotes. */
static void
xp_lex_string(xp_parser *p, size_t i)
{
	const char *s = p->src;
	size_t n = p->len, j = i + 1;
	char q = s[i];

	while (j < n && s[j] != q) {
		if (s[j] != '\\') {
			j++;
			continue;
		}
		if (j + 1 >= n)
			break;
		if (s[j + 1] != '\\' && s[j + 1] != '\'' && s[j + 1] != '"') {
			if (s[j + 1] > ' ' && s[j + 1] < 0x7f)
				xp_fail(p, j, "unknown escape '\\%c' in a string "
				    "(only \\\\, \\' and \\\" are allowed)",
				    s[j + 1]);
			else
				xp_fail(p, j, "unknown escape in a string "
				    "(only \\\\, \\' and \\\" are allowed)");
			return;
		}
		j += 2;
	}
	if (j >= n) {
		xp_fail(p, i, "unterminated string");
		return;
	}
	p->tok.type = TK_STR;
	p->tok.len = j + 1 - i;
	p->pos = j + 1;
}

/* Reads the next token into p->tok. */
static void
xp_next(xp_parser *p)
{
	static const struct {
		const char *text;
		xp_tokty type;
	} ops[] = {
		{ "==", TK_EQ }, { "!=", TK_NE }, { "<=", TK_LE }, { ">=", TK_GE },
		{ "<", TK_LT }, { ">", TK_GT }, { "(", TK_LPAREN },
		{ ")", TK_RPAREN }, { ",", TK_COMMA }, { "+", TK_PLUS },
		{ "-", TK_MINUS }, { "*", TK_STAR }, { "/", TK_SLASH },
	}, words[] = {
		{ "and", TK_AND }, { "or", TK_OR }, { "not", TK_NOT },
		{ "true", TK_TRUE }, { "false", TK_FALSE },
	};
	const char *s = p->src;
	size_t n = p->len, i = p->pos, j, k, l;
	unsigned char c;

	if (p->failed)
		return;
	p->prev = p->tok;
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
	    s[i] == '\r'))
		i++;
	memset(&p->tok, 0, sizeof p->tok);
	p->tok.pos = i;
	p->pos = i;
	if (i >= n) {
		p->tok.type = TK_END;
		return;
	}
	c = (unsigned char)s[i];
	if (xp_is_digit((char)c)) {
		xp_lex_number(p, i);
		return;
	}
	if (c == '"' || c == '\'') {
		xp_lex_string(p, i);
		return;
	}
	if (xp_is_alpha((char)c)) {
		j = i + 1;
		while (j < n && xp_is_name(s[j]))
			j++;
		p->tok.type = TK_IDENT;
		for (k = 0; k < sizeof words / sizeof words[0]; k++)
			if (xp_word(s + i, j - i, words[k].text))
				p->tok.type = words[k].type;
		p->tok.len = j - i;
		p->pos = j;
		return;
	}
	for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		l = strlen(ops[k].text);
		if (l <= n - i && memcmp(s + i, ops[k].text, l) == 0) {
			p->tok.type = ops[k].type;
			p->tok.len = l;
			p->pos = i + l;
			return;
		}
	}
	if (c == '=')
		xp_fail(p, i, "use '==' to compare");
	else if (c == '!')
		xp_fail(p, i, "use 'not' to negate a condition");
	else if (c == '&' && i + 1 < n && s[i + 1] == '&')
		xp_fail(p, i, "use 'and' instead of '&&'");
	else if (c == '|' && i + 1 < n && s[i + 1] == '|')
		xp_fail(p, i, "use 'or' instead of '||'");
	else if (c == '.' && i + 1 < n && xp_is_digit(s[i + 1]))
		xp_fail(p, i, "a number starts with a digit: write 0.5, not .5");
	else if (c > ' ' && c < 0x7f)
		xp_fail(p, i, "unexpected character '%c'", c);
	else
		xp_fail(p, i, "unexpected byte 0x%02x", c);
}

/* Describes the current token for an error message. */
static void
xp_describe(const xp_parser *p, char *buf, size_t cap)
{
	const xp_token *t = &p->tok;

	switch (t->type) {
	case TK_END:
		snprintf(buf, cap, "the end");
		break;
	case TK_STR:
		snprintf(buf, cap, "a string");
		break;
	default:
		if (t->len > 24)
			snprintf(buf, cap, "'%.24s...'", p->src + t->pos);
		else
			snprintf(buf, cap, "'%.*s'", (int)t->len,
			    p->src + t->pos);
		break;
	}
}

/* Whether the current token is a binary operator; what it joins in *what. */
static bool
xp_is_binop(xp_tokty t, const char **what)
{
	switch (t) {
	case TK_AND:
	case TK_OR:
		*what = "condition";
		return true;
	case TK_PLUS:
	case TK_MINUS:
	case TK_STAR:
	case TK_SLASH:
	case TK_EQ:
	case TK_NE:
	case TK_LT:
	case TK_LE:
	case TK_GT:
	case TK_GE:
		*what = "value";
		return true;
	default:
		return false;
	}
}

/*
 * Appends an instruction and follows the stack it will need; effect is
 * what it does to the depth of the stack.
 */
static xp_op *
xp_emit(xp_parser *p, xp_opcode op, size_t pos, int effect)
{
	xp_op *o;

	if (p->failed)
		return NULL;
	if (p->nops == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		xp_op *ops = realloc(p->ops, cap * sizeof *ops);

		if (ops == NULL) {
			xp_fail(p, pos, "out of memory");
			return NULL;
		}
		p->ops = ops;
		p->cap = cap;
	}
	p->sp = (size_t)((long)p->sp + effect);
	if (p->sp > p->sp_max)
		p->sp_max = p->sp;
	if (p->sp > XP_STACK_MAX) {
		xp_fail(p, pos, "expression too complex (more than %d values "
		    "pending at once)", XP_STACK_MAX);
		return NULL;
	}
	o = &p->ops[p->nops++];
	memset(o, 0, sizeof *o);
	o->op = op;
	return o;
}

/* Copies a fact name into the pool, checking that it exists. */
static bool
xp_fact_name(xp_parser *p, const xp_token *t, const char **name)
{
	const char *s = p->src + t->pos;

	if (p->exists != NULL && !p->exists(p->ctx, s, t->len)) {
		xp_fail(p, t->pos, "unknown fact '%.*s'",
		    (int)(t->len > 64 ? 64 : t->len), s);
		return false;
	}
	memcpy(p->pool + p->pool_len, s, t->len);
	*name = p->pool + p->pool_len;
	p->pool_len += t->len;
	return true;
}

/* Parses the arguments of a call; the current token is its '('. */
static void
xp_parse_call(xp_parser *p, const xp_token *name, unsigned depth)
{
	const xp_func *f = NULL;
	const char *fname = p->src + name->pos;
	xp_token arg;
	unsigned nargs = 0;
	xp_op *o;
	size_t i;

	for (i = 0; i < sizeof xp_funcs / sizeof xp_funcs[0]; i++)
		if (xp_word(fname, name->len, xp_funcs[i].name))
			f = &xp_funcs[i];
	if (f == NULL) {
		xp_fail(p, name->pos, "unknown function '%.*s'",
		    (int)(name->len > 64 ? 64 : name->len), fname);
		return;
	}
	xp_next(p);
	if (f->op == OP_HAS) {
		arg = p->tok;
		if (arg.type != TK_IDENT) {
			xp_fail(p, arg.pos, "has() takes a fact name");
			return;
		}
		xp_next(p);
		if (p->failed)
			return;
		if (p->tok.type != TK_RPAREN) {
			xp_fail(p, arg.pos, "has() takes a fact name");
			return;
		}
		if ((o = xp_emit(p, OP_HAS, arg.pos, 1)) == NULL ||
		    !xp_fact_name(p, &arg, &o->str))
			return;
		o->len = arg.len;
		xp_next(p);
		return;
	}
	if (p->tok.type != TK_RPAREN) {
		for (;;) {
			if (nargs == f->max && f->min == f->max) {
				xp_fail(p, name->pos, "%s takes %u argument%s",
				    f->name, f->min, f->min == 1 ? "" : "s");
				return;
			}
			if (nargs == f->max) {
				xp_fail(p, p->tok.pos, "%s takes at most %u "
				    "argument%s", f->name, f->max,
				    f->max == 1 ? "" : "s");
				return;
			}
			xp_parse_or(p, depth + 1);
			nargs++;
			if (p->failed)
				return;
			if (p->tok.type == TK_COMMA) {
				xp_next(p);
				continue;
			}
			if (p->tok.type == TK_RPAREN)
				break;
			xp_fail(p, p->tok.pos, "expected ')' after the "
			    "arguments of %s", f->name);
			return;
		}
	}
	if (nargs < f->min) {
		if (f->min == f->max)
			xp_fail(p, name->pos, "%s takes %u argument%s",
			    f->name, f->min, f->min == 1 ? "" : "s");
		else
			xp_fail(p, name->pos, "%s takes at least %u "
			    "arguments", f->name, f->min);
		return;
	}
	if ((o = xp_emit(p, f->op, name->pos, 1 - (int)nargs)) == NULL)
		return;
	o->nargs = nargs;
	xp_next(p);
}

/* Reports a token that cannot start a value. */
static void
xp_no_value(xp_parser *p)
{
	const char *what;
	char found[48];

	if (p->tok.type == TK_ERROR)
		return;
	if (p->tok.type == TK_NOT) {
		xp_fail(p, p->tok.pos, "'not' applies to a whole condition: "
		    "put it in parentheses here");
		return;
	}
	if (p->binop_pos == p->prev.pos &&
	    xp_is_binop(p->prev.type, &what)) {
		xp_fail(p, p->tok.pos, "'%.*s' needs a %s on both sides",
		    (int)p->prev.len, p->src + p->prev.pos, what);
		return;
	}
	if (xp_is_binop(p->tok.type, &what)) {
		xp_fail(p, p->tok.pos, "'%.*s' needs a %s on both sides",
		    (int)p->tok.len, p->src + p->tok.pos, what);
		return;
	}
	xp_describe(p, found, sizeof found);
	if (p->prev.type == TK_NOT && p->prev.len > 0)
		xp_fail(p, p->tok.pos, "'not' needs a condition after it");
	else if (p->prev.type == TK_MINUS)
		xp_fail(p, p->tok.pos, "'-' needs a value after it");
	else if (p->prev.type == TK_COMMA)
		xp_fail(p, p->tok.pos, "expected an argument after ',', "
		    "found %s", found);
	else if (p->prev.type == TK_LPAREN && p->tok.type == TK_RPAREN)
		xp_fail(p, p->tok.pos, "expected an expression inside the "
		    "parentheses");
	else if (p->tok.type == TK_END && p->nops == 0 &&
	    p->prev.type == TK_END)
		xp_fail(p, p->tok.pos, "expected an expression");
	else
		xp_fail(p, p->tok.pos, "expected a value, found %s", found);
}

/* Parses a literal, a fact, a call or a parenthesised expression. */
static void
xp_parse_primary(xp_parser *p, unsigned depth)
{
	xp_token t = p->tok, open;
	const char *s;
	xp_op *o;
	size_t i;
	char *d;

	switch (t.type) {
	case TK_NUM:
		if ((o = xp_emit(p, OP_NUM, t.pos, 1)) != NULL) {
			o->num = t.num;
			o->bytes = t.bytes;
		}
		xp_next(p);
		break;
	case TK_STR:
		if ((o = xp_emit(p, OP_STR, t.pos, 1)) == NULL)
			return;
		s = p->src + t.pos;
		d = p->pool + p->pool_len;
		o->str = d;
		for (i = 1; i + 1 < t.len; i++) {
			if (s[i] == '\\')
				i++;
			*d++ = s[i];
		}
		o->len = (size_t)(d - o->str);
		p->pool_len += o->len;
		xp_next(p);
		break;
	case TK_TRUE:
	case TK_FALSE:
		if ((o = xp_emit(p, OP_BOOL, t.pos, 1)) != NULL)
			o->b = t.type == TK_TRUE;
		xp_next(p);
		break;
	case TK_IDENT:
		/* Looks ahead for '(' so that errors come in source order. */
		for (i = p->pos; i < p->len && (p->src[i] == ' ' ||
		    p->src[i] == '\t' || p->src[i] == '\n' ||
		    p->src[i] == '\r'); i++)
			;
		if (i < p->len && p->src[i] == '(') {
			if (depth + 1 > XP_DEPTH_MAX) {
				xp_fail(p, i, "nesting deeper than %d levels",
				    XP_DEPTH_MAX);
				return;
			}
			xp_next(p);
			xp_parse_call(p, &t, depth);
			return;
		}
		if ((o = xp_emit(p, OP_FACT, t.pos, 1)) == NULL ||
		    !xp_fact_name(p, &t, &o->str))
			return;
		o->len = t.len;
		xp_next(p);
		break;
	case TK_LPAREN:
		if (depth + 1 > XP_DEPTH_MAX) {
			xp_fail(p, t.pos, "nesting deeper than %d levels",
			    XP_DEPTH_MAX);
			return;
		}
		open = t;
		xp_next(p);
		xp_parse_or(p, depth + 1);
		if (p->failed)
			return;
		if (p->tok.type != TK_RPAREN) {
			char found[48];

			xp_describe(p, found, sizeof found);
			xp_fail(p, p->tok.pos, "expected ')' to close the '(' "
			    "at column %zu, found %s", open.pos + 1, found);
			return;
		}
		xp_next(p);
		break;
	default:
		xp_no_value(p);
		break;
	}
}

/* Parses a run of prefix operators (tokens of type prefix) and what they
 * apply to, which operand parses; each operator is emitted as op after
 * what it applies to. */
static void
xp_parse_prefix(xp_parser *p, unsigned depth, xp_tokty prefix, xp_opcode op,
    void (*operand)(xp_parser *, unsigned))
{
	xp_token t = p->tok;

	if (t.type != prefix) {
		operand(p, depth);
		return;
	}
	if (depth + 1 > XP_DEPTH_MAX) {
		xp_fail(p, t.pos, "nesting deeper than %d levels",
		    XP_DEPTH_MAX);
		return;
	}
	xp_next(p);
	xp_parse_prefix(p, depth + 1, prefix, op, operand);
	xp_emit(p, op, t.pos, 0);
}

/* Parses prefix minus signs and what they apply to. */
static void
xp_parse_unary(xp_parser *p, unsigned depth)
{
	xp_parse_prefix(p, depth, TK_MINUS, OP_NEG, xp_parse_primary);
}

/* Consumes a binary operator, remembering it for error messages. */
static xp_token
xp_take_binop(xp_parser *p)
{
	xp_token t = p->tok;

	p->binop_pos = t.pos;
	xp_next(p);
	return t;
}

/* Parses a chain of '*' and '/', left-associative. */
static void
xp_parse_mul(xp_parser *p, unsigned depth)
{
	xp_token t;

	xp_parse_unary(p, depth);
	while (!p->failed && (p->tok.type == TK_STAR ||
	    p->tok.type == TK_SLASH)) {
		t = xp_take_binop(p);
		xp_parse_unary(p, depth);
		xp_emit(p, t.type == TK_STAR ? OP_MUL : OP_DIV, t.pos, -1);
	}
}

/* Parses a chain of '+' and '-', left-associative. */
static void
xp_parse_add(xp_parser *p, unsigned depth)
{
	xp_token t;

	xp_parse_mul(p, depth);
	while (!p->failed && (p->tok.type == TK_PLUS ||
	    p->tok.type == TK_MINUS)) {
		t = xp_take_binop(p);
		xp_parse_mul(p, depth);
		xp_emit(p, t.type == TK_PLUS ? OP_ADD : OP_SUB, t.pos, -1);
	}
}

/* The instruction of a comparison token, or -1. */
static int
xp_cmp_op(xp_tokty t)
{
	switch (t) {
	case TK_EQ: return OP_EQ;
	case TK_NE: return OP_NE;
	case TK_LT: return OP_LT;
	case TK_LE: return OP_LE;
	case TK_GT: return OP_GT;
	case TK_GE: return OP_GE;
	default: return -1;
	}
}

/* Parses one comparison at most: they do not chain. */
static void
xp_parse_cmp(xp_parser *p, unsigned depth)
{
	xp_token t;
	int op;

	xp_parse_add(p, depth);
	if (p->failed || (op = xp_cmp_op(p->tok.type)) < 0)
		return;
	t = xp_take_binop(p);
	xp_parse_add(p, depth);
	if (!p->failed && xp_cmp_op(p->tok.type) >= 0) {
		xp_fail(p, p->tok.pos, "comparisons do not chain: join them "
		    "with 'and'");
		return;
	}
	xp_emit(p, (xp_opcode)op, t.pos, -1);
}

/* Parses prefix 'not's and the condition they apply to. */
static void
xp_parse_not(xp_parser *p, unsigned depth)
{
	xp_parse_prefix(p, depth, TK_NOT, OP_NOT, xp_parse_cmp);
}

/* Parses a chain of 'and'. */
static void
xp_parse_and(xp_parser *p, unsigned depth)
{
	xp_token t;

	xp_parse_not(p, depth);
	while (!p->failed && p->tok.type == TK_AND) {
		t = xp_take_binop(p);
		xp_parse_not(p, depth);
		xp_emit(p, OP_AND, t.pos, -1);
	}
}

/* Parses a whole expression, a chain of 'or'; depth counts the
 * parentheses, calls and prefixes around it. */
static void
xp_parse_or(xp_parser *p, unsigned depth)
{
	xp_token t;

	xp_parse_and(p, depth);
	while (!p->failed && p->tok.type == TK_OR) {
		t = xp_take_binop(p);
		xp_parse_and(p, depth);
		xp_emit(p, OP_OR, t.pos, -1);
	}
}

/* Reports what follows a complete expression where the end should be. */
static void
xp_trailing(xp_parser *p)
{
	char found[48];

	if (p->tok.type == TK_RPAREN) {
		xp_fail(p, p->tok.pos, "unmatched ')'");
		return;
	}
	if (p->prev.type == TK_NUM && !p->prev.unit &&
	    p->tok.type == TK_IDENT &&
	    xp_is_unit(p->src + p->tok.pos, p->tok.len)) {
		xp_fail(p, p->tok.pos, "write sizes without a space: '%.*s%.*s'",
		    (int)(p->prev.len > 24 ? 24 : p->prev.len),
		    p->src + p->prev.pos, (int)p->tok.len,
		    p->src + p->tok.pos);
		return;
	}
	xp_describe(p, found, sizeof found);
	xp_fail(p, p->tok.pos, "expected an operator or the end, found %s",
	    found);
}

/*
 * Parses an expression into its program.  The pool is sized up front and
 * never moves, so the program may point into it.
 */
xp_expr *
xp_parse(const char *src, size_t len, xp_fact_exists exists, void *ctx,
    od_error *err)
{
	xp_parser p;
	xp_expr *e;

	if (len > XP_LEN_MAX) {
		od_error_set(err, NULL, 0, XP_LEN_MAX + 1, "expression longer "
		    "than %d bytes", XP_LEN_MAX);
		return NULL;
	}
	memset(&p, 0, sizeof p);
	p.src = src;
	p.len = len;
	p.exists = exists;
	p.ctx = ctx;
	p.err = err;
	p.binop_pos = SIZE_MAX;
	p.prev.type = TK_END;
	/* Every pooled byte comes from a distinct byte of the source. */
	p.pool = malloc(len + 1);
	if (p.pool == NULL) {
		od_error_set(err, NULL, 0, 1, "out of memory");
		return NULL;
	}
	p.tok.type = TK_END;
	xp_next(&p);
	p.prev.type = TK_END;
	p.prev.len = 0;
	xp_parse_or(&p, 0);
	if (!p.failed && p.tok.type != TK_END)
		xp_trailing(&p);
	if (!p.failed && p.sp != 1)
		xp_fail(&p, 0, "internal error: unbalanced program");
	e = p.failed ? NULL : malloc(sizeof *e);
	if (e == NULL) {
		if (!p.failed)
			od_error_set(err, NULL, 0, 1, "out of memory");
		free(p.ops);
		free(p.pool);
		return NULL;
	}
	e->ops = p.ops;
	e->nops = p.nops;
	e->pool = p.pool;
	return e;
}

/* Frees an expression; NULL is allowed. */
void
xp_free(xp_expr *e)
{
	if (e == NULL)
		return;
	free(e->ops);
	free(e->pool);
	free(e);
}

/* Evaluation. */

/* Values. */
static xv_value
xv_unknown(void)
{
	xv_value v;

	memset(&v, 0, sizeof v);
	v.type = XV_UNKNOWN;
	return v;
}

static xv_value
xv_bool(bool b)
{
	xv_value v = xv_unknown();

	v.type = XV_BOOL;
	v.b = b;
	return v;
}

/* A number, or unknown when it is not finite. */
static xv_value
xv_num(double d, bool bytes)
{
	xv_value v = xv_unknown();

	if (!isfinite(d))
		return v;
	v.type = XV_NUM;
	v.num = d;
	v.bytes = bytes;
	return v;
}

/* Looks a fact up, treating whatever is not a proper value as unknown. */
static xv_value
xp_fact(const xp_op *o, xp_lookup lookup, void *ctx)
{
	xv_value v = xv_unknown();

	if (lookup == NULL || !lookup(ctx, o->str, o->len, &v))
		return xv_unknown();
	switch (v.type) {
	case XV_BOOL:
		return xv_bool(v.b);
	case XV_NUM:
		return xv_num(v.num, v.bytes);
	case XV_STR:
		if (v.str == NULL && v.len > 0)
			return xv_unknown();
		return v;
	default:
		return xv_unknown();
	}
}

/* A boolean as Kleene's logic sees it: 1, 0, or -1 for unknown. */
static int
xp_tri(xv_value v)
{
	return v.type == XV_BOOL ? (int)v.b : -1;
}

/* A comparison: numbers any way, strings and booleans for equality. */
static xv_value
xp_compare(xp_opcode op, xv_value a, xv_value b)
{
	int c;

	if (a.type == XV_NUM && b.type == XV_NUM) {
		switch (op) {
		case OP_EQ: return xv_bool(a.num == b.num);
		case OP_NE: return xv_bool(a.num != b.num);
		case OP_LT: return xv_bool(a.num < b.num);
		case OP_LE: return xv_bool(a.num <= b.num);
		case OP_GT: return xv_bool(a.num > b.num);
		default: return xv_bool(a.num >= b.num);
		}
	}
	if (op != OP_EQ && op != OP_NE)
		return xv_unknown();
	if (a.type == XV_STR && b.type == XV_STR) {
		c = a.len == b.len && (a.len == 0 ||
		    memcmp(a.str, b.str, a.len) == 0);
		return xv_bool(op == OP_EQ ? c : !c);
	}
	if (a.type == XV_BOOL && b.type == XV_BOOL)
		return xv_bool(op == OP_EQ ? a.b == b.b : a.b != b.b);
	return xv_unknown();
}

/* A binary operator, with Kleene's logic and the bytes tag. */
static xv_value
xp_binary(xp_opcode op, xv_value a, xv_value b)
{
	int x, y;

	switch (op) {
	case OP_AND:
		x = xp_tri(a);
		y = xp_tri(b);
		if (x == 0 || y == 0)
			return xv_bool(false);
		return x == 1 && y == 1 ? xv_bool(true) : xv_unknown();
	case OP_OR:
		x = xp_tri(a);
		y = xp_tri(b);
		if (x == 1 || y == 1)
			return xv_bool(true);
		return x == 0 && y == 0 ? xv_bool(false) : xv_unknown();
	case OP_EQ:
	case OP_NE:
	case OP_LT:
	case OP_LE:
	case OP_GT:
	case OP_GE:
		return xp_compare(op, a, b);
	default:
		break;
	}
	if (a.type != XV_NUM || b.type != XV_NUM)
		return xv_unknown();
	switch (op) {
	case OP_ADD:
		return xv_num(a.num + b.num, a.bytes || b.bytes);
	case OP_SUB:
		return xv_num(a.num - b.num, a.bytes || b.bytes);
	case OP_MUL:
		return xv_num(a.num * b.num, a.bytes != b.bytes);
	case OP_DIV:
		if (b.num == 0)
			return xv_unknown();
		return xv_num(a.num / b.num, a.bytes && !b.bytes);
	default:
		return xv_unknown();
	}
}

/* min or max of the n values at v. */
static xv_value
xp_minmax(xp_opcode op, const xv_value *v, unsigned n)
{
	double r = 0;
	bool bytes = false;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (v[i].type != XV_NUM)
			return xv_unknown();
		if (i == 0 || (op == OP_MIN ? v[i].num < r : v[i].num > r))
			r = v[i].num;
		bytes = bytes || v[i].bytes;
	}
	return xv_num(r, bytes);
}

/*
 * largest_divisor_at_most(n, k): the largest divisor of n that is at most
 * k.  Trial division up to the square root of n, each divisor found giving
 * its pair n / d too; n is bounded by XP_DIVISOR_N_MAX, so at most 2^16
 * steps.  The result keeps n's tag.
 */
static xv_value
xp_divisor(xv_value n, xv_value k)
{
	uint64_t v, d, best = 0;
	double lim;

	if (n.type != XV_NUM || k.type != XV_NUM || n.num < 1 ||
	    n.num > XP_DIVISOR_N_MAX || n.num != floor(n.num))
		return xv_unknown();
	if (k.num < 1)
		return xv_num(0, n.bytes);
	v = (uint64_t)n.num;
	lim = floor(k.num);
	for (d = 1; d * d <= v; d++) {
		if (v % d != 0)
			continue;
		if ((double)d <= lim && d > best)
			best = d;
		if ((double)(v / d) <= lim && v / d > best)
			best = v / d;
	}
	return xv_num((double)best, n.bytes);
}

/* not, prefix minus, and the functions of one argument. */
static xv_value
xp_unary(xp_opcode op, xv_value a)
{
	if (op == OP_NOT)
		return a.type == XV_BOOL ? xv_bool(!a.b) : xv_unknown();
	if (a.type != XV_NUM)
		return xv_unknown();
	switch (op) {
	case OP_NEG: return xv_num(-a.num, a.bytes);
	case OP_CEIL: return xv_num(ceil(a.num), a.bytes);
	case OP_FLOOR: return xv_num(floor(a.num), a.bytes);
	case OP_ABS: return xv_num(fabs(a.num), a.bytes);
	default: return xv_num(round(a.num), a.bytes);
	}
}

/*
 * Runs the program on a fixed array; the parser has checked that it never
 * holds more than XP_STACK_MAX values and ends with exactly one.
 */
xv_value
xp_eval(const xp_expr *e, xp_lookup lookup, void *ctx)
{
	xv_value st[XP_STACK_MAX], v;
	size_t sp = 0, i;
	const xp_op *o;

	if (e == NULL)
		return xv_unknown();
	for (i = 0; i < e->nops; i++) {
		o = &e->ops[i];
		switch (o->op) {
		case OP_NUM:
			st[sp++] = xv_num(o->num, o->bytes);
			break;
		case OP_STR:
			v = xv_unknown();
			v.type = XV_STR;
			v.str = o->str;
			v.len = o->len;
			st[sp++] = v;
			break;
		case OP_BOOL:
			st[sp++] = xv_bool(o->b);
			break;
		case OP_FACT:
			st[sp++] = xp_fact(o, lookup, ctx);
			break;
		case OP_HAS:
			st[sp++] = xv_bool(xp_fact(o, lookup, ctx).type !=
			    XV_UNKNOWN);
			break;
		case OP_NEG:
		case OP_NOT:
		case OP_CEIL:
		case OP_FLOOR:
		case OP_ABS:
		case OP_ROUND:
			st[sp - 1] = xp_unary(o->op, st[sp - 1]);
			break;
		case OP_DIVISOR:
			st[sp - 2] = xp_divisor(st[sp - 2], st[sp - 1]);
			sp--;
			break;
		case OP_VALUE_OR:
			/* The first value where it is known, else the
			 * second (which may be unknown too). */
			if (st[sp - 2].type == XV_UNKNOWN)
				st[sp - 2] = st[sp - 1];
			sp--;
			break;
		case OP_MIN:
		case OP_MAX:
			sp -= o->nargs;
			st[sp] = xp_minmax(o->op, st + sp, o->nargs);
			sp++;
			break;
		default:
			st[sp - 2] = xp_binary(o->op, st[sp - 2], st[sp - 1]);
			sp--;
			break;
		}
	}
	return sp == 1 ? st[0] : xv_unknown();
}

/* Whether a condition fires: only a known true does. */
bool
xp_true(xv_value v)
{
	return v.type == XV_BOOL && v.b;
}

/* Formatting. */

/*
 * Appends s[0..n) to out (cap bytes, *pos used, NUL-terminated), cutting
 * where it must at the start of a UTF-8 sequence rather than inside one.
 */
static void
xp_append(char *out, size_t cap, size_t *pos, const char *s, size_t n)
{
	size_t room;

	if (cap == 0 || *pos >= cap)
		return;
	room = cap - 1 - *pos;
	if (n > room) {
		n = room;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(out + *pos, s, n);
	*pos += n;
	out[*pos] = '\0';
}

/* A plain number: an integer when integral, else two decimals, or two
 * significant digits for small values. */
static void
xp_format_num(double x, char *buf, size_t cap)
{
	double a = fabs(x);
	size_t n;
	int d;

	if (x == floor(x)) {
		snprintf(buf, cap, a < 1e15 ? "%.0f" : "%.6g", x + 0.0);
		return;
	}
	if (a >= 0.1) {
		snprintf(buf, cap, "%.2f", x);
		return;
	}
	d = (int)-floor(log10(a)) + 1;
	if (d > 20)
		d = 20;
	snprintf(buf, cap, "%.*f", d, x);
	/* Trailing zeros beyond the second decimal say nothing. */
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == '0' && strchr(buf, '.') != NULL &&
	    (size_t)(strchr(buf, '.') - buf) + 3 < n)
		buf[--n] = '\0';
}

/* A byte count, rounded to a whole byte, as format_size() prints it. */
static void
xp_format_bytes(double x, char *buf, size_t cap)
{
	double r = round(x), a = fabs(r);
	char size[64];

	if (a < 9.2e18)
		od_size_format((int64_t)a, size, sizeof size);
	else
		snprintf(size, sizeof size, "%.2f GiB", a / 1073741824.0);
	snprintf(buf, cap, "%s%s", r < 0 ? "-" : "", size);
}

/* Formats a value as templates print it. */
void
xp_format(xv_value v, char *out, size_t cap)
{
	char buf[96];
	size_t pos = 0;

	if (cap == 0)
		return;
	out[0] = '\0';
	switch (v.type) {
	case XV_BOOL:
		snprintf(buf, sizeof buf, "%s", v.b ? "true" : "false");
		break;
	case XV_STR:
		if (v.str != NULL)
			xp_append(out, cap, &pos, v.str, v.len);
		return;
	case XV_NUM:
		if (!isfinite(v.num))
			snprintf(buf, sizeof buf, "?");
		else if (v.bytes)
			xp_format_bytes(v.num, buf, sizeof buf);
		else
			xp_format_num(v.num, buf, sizeof buf);
		break;
	default:
		snprintf(buf, sizeof buf, "?");
		break;
	}
	xp_append(out, cap, &pos, buf, strlen(buf));
}

/* Templates. */

typedef struct {
	xp_expr *expr;          /* owned; NULL for literal text */
	const char *text;       /* literal text, in the template's pool */
	size_t len;
} xp_part;

struct xp_template {
	xp_part *parts;         /* owned */
	size_t nparts;
	char *text;             /* owned: the literal text, braces unescaped */
};

/* Adds a part; false when out of memory. */
static bool
xp_template_add(xp_template *t, size_t *cap, xp_expr *e, const char *text,
    size_t len)
{
	if (t->nparts == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		xp_part *parts = realloc(t->parts, ncap * sizeof *parts);

		if (parts == NULL)
			return false;
		t->parts = parts;
		*cap = ncap;
	}
	t->parts[t->nparts].expr = e;
	t->parts[t->nparts].text = text;
	t->parts[t->nparts].len = len;
	t->nparts++;
	return true;
}

/*
 * Finds the '}' that closes the part opened at src[i]: the first one
 * outside a quoted string.  Returns its offset, or len when there is none
 * (*quote is then where an unterminated string began, or len).
 */
static size_t
xp_template_close(const char *src, size_t len, size_t i, size_t *quote)
{
	size_t j = i + 1;
	char q;

	*quote = len;
	while (j < len && src[j] != '}') {
		if (src[j] != '"' && src[j] != '\'') {
			j++;
			continue;
		}
		q = src[j];
		*quote = j++;
		while (j < len && src[j] != q)
			j += src[j] == '\\' && j + 1 < len ? 2 : 1;
		if (j >= len)
			return len;
		*quote = len;
		j++;
	}
	return j;
}

/*
 * Splits a template into literal text and expressions; each expression
 * is parsed on its own and its error column moved to the template's.
 */
xp_template *
xp_template_parse(const char *src, size_t len, xp_fact_exists exists,
    void *ctx, od_error *err)
{
	xp_template *t;
	size_t i = 0, j, quote, cap = 0, start;
	xp_expr *e;

	if (len > XP_TEMPLATE_MAX) {
		od_error_set(err, NULL, 0, XP_TEMPLATE_MAX + 1, "template "
		    "longer than %d bytes", XP_TEMPLATE_MAX);
		return NULL;
	}
	t = calloc(1, sizeof *t);
	if (t == NULL || (t->text = malloc(len + 1)) == NULL)
		goto nomem;
	start = 0;
	j = 0;  /* bytes of literal text so far */
	while (i < len) {
		if (src[i] == '{' && i + 1 < len && src[i + 1] == '{') {
			t->text[j++] = '{';
			i += 2;
		} else if (src[i] == '}' && i + 1 < len && src[i + 1] == '}') {
			t->text[j++] = '}';
			i += 2;
		} else if (src[i] == '}') {
			od_error_set(err, NULL, 0, i + 1, "unmatched '}' in a "
			    "template (write '}}' for a literal brace)");
			goto fail;
		} else if (src[i] == '{') {
			size_t close = xp_template_close(src, len, i, &quote);

			if (quote < len) {
				od_error_set(err, NULL, 0, quote + 1,
				    "unterminated string");
				goto fail;
			}
			if (close >= len) {
				od_error_set(err, NULL, 0, i + 1,
				    "unterminated '{' in a template (write "
				    "'{{' for a literal brace)");
				goto fail;
			}
			if (j > start && !xp_template_add(t, &cap, NULL,
			    t->text + start, j - start))
				goto nomem;
			start = j;
			e = xp_parse(src + i + 1, close - i - 1, exists, ctx,
			    err);
			if (e == NULL) {
				if (err != NULL && err->col > 0)
					err->col += i + 1;
				goto fail;
			}
			if (!xp_template_add(t, &cap, e, NULL, 0)) {
				xp_free(e);
				goto nomem;
			}
			i = close + 1;
		} else {
			t->text[j++] = src[i++];
		}
	}
	if (j > start && !xp_template_add(t, &cap, NULL, t->text + start,
	    j - start))
		goto nomem;
	return t;
nomem:
	od_error_set(err, NULL, 0, 1, "out of memory");
fail:
	xp_template_free(t);
	return NULL;
}

/* Frees a template and its expressions; NULL is allowed. */
void
xp_template_free(xp_template *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nparts; i++)
		xp_free(t->parts[i].expr);
	free(t->parts);
	free(t->text);
	free(t);
}

/* Renders a template, each unknown part as "?"; false when one was. */
bool
xp_template_render(const xp_template *t, xp_lookup lookup, void *ctx,
    char *out, size_t cap)
{
	char buf[96];
	size_t i, pos = 0;
	bool known = true;
	xv_value v;

	if (cap > 0)
		out[0] = '\0';
	if (t == NULL)
		return true;
	for (i = 0; i < t->nparts; i++) {
		const xp_part *part = &t->parts[i];

		if (part->expr == NULL) {
			xp_append(out, cap, &pos, part->text, part->len);
			continue;
		}
		v = xp_eval(part->expr, lookup, ctx);
		if (v.type == XV_UNKNOWN)
			known = false;
		if (v.type == XV_STR) {
			if (v.str != NULL)
				xp_append(out, cap, &pos, v.str, v.len);
			continue;
		}
		xp_format(v, buf, sizeof buf);
		xp_append(out, cap, &pos, buf, strlen(buf));
	}
	return known;
}

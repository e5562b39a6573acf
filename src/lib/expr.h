/*
 * expr.h: the condition and template language of the rules.
 *
 * A rule's condition is a small expression over the facts of an event:
 *
 *     reserved_unallocated >= requested and requested > 0
 *
 * and its explanation and fixes are templates, text with expressions in
 * braces:
 *
 *     "{reserved_unallocated} is reserved but unallocated"
 *
 * An expression is parsed once, when the rules are loaded, into a program
 * that the expression owns; it is then evaluated once per event against a
 * fact source given as a callback.  Evaluation allocates nothing and does
 * not recurse, so its stack use is fixed whatever the expression.
 *
 * Facts the log does not give are unknown, and unknowns propagate: an
 * unknown condition does not fire, and an unknown part of a template
 * prints as "?".  The language reference, with the precedence table and
 * the rules for byte counts, is in expr.c.
 *
 * Ownership: the parse functions copy what they keep from src, and the
 * objects they return belong to the caller (free them with xp_free and
 * xp_template_free; both accept NULL).  A value returned by xp_eval
 * borrows its string from the expression or from the fact source.
 */
#ifndef OOMDOC_EXPR_H
#define OOMDOC_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "core.h"

#define XP_LEN_MAX 4096         /* bytes of one expression */
#define XP_DEPTH_MAX 64         /* parentheses, calls and prefixes nested */
#define XP_ARGS_MAX 32          /* arguments of min() and max() */
#define XP_STACK_MAX 256        /* values pending at once during evaluation */
#define XP_TEMPLATE_MAX 16384   /* bytes of one template */
/* The largest n of largest_divisor_at_most(n, k). */
#define XP_DIVISOR_N_MAX 4294967296.0

typedef enum { XV_UNKNOWN, XV_BOOL, XV_NUM, XV_STR } xv_type;

typedef struct {
	xv_type type;
	bool bytes;             /* an XV_NUM that is a byte count: prints as a size */
	double num;
	bool b;
	const char *str;        /* XV_STR, borrowed from the expression or the fact source */
	size_t len;
} xv_value;

/*
 * Looks a fact up; false when the fact is unknown for this event (the log
 * does not say it).  A fact that comes back as XV_UNKNOWN, or as a number
 * that is not finite, counts as unknown too.
 */
typedef bool (*xp_lookup)(void *ctx, const char *name, size_t len,
    xv_value *out);
/*
 * Whether a fact name exists at all (for the linter: an unknown name is a
 * parse error).  May be NULL: any name is accepted.
 */
typedef bool (*xp_fact_exists)(void *ctx, const char *name, size_t len);

typedef struct xp_expr xp_expr;

/*
 * Parses src[0..len).  Returns NULL with err filled in (the 1-based byte
 * column in src, no file or line: the caller adds them) for the first
 * problem found, or for a failed allocation.
 */
xp_expr *xp_parse(const char *src, size_t len, xp_fact_exists exists,
    void *ctx, od_error *err);
void xp_free(xp_expr *e);
/* Evaluates e; lookup may be NULL (every fact is then unknown). */
xv_value xp_eval(const xp_expr *e, xp_lookup lookup, void *ctx);
/* True only when the value is a known true boolean (an unknown or a
 * non-boolean does not fire). */
bool xp_true(xv_value v);

typedef struct xp_template xp_template;

/* Text with {expression} parts; "{{" and "}}" are literal braces.  Errors
 * as for xp_parse, the column counted in the whole template. */
xp_template *xp_template_parse(const char *src, size_t len,
    xp_fact_exists exists, void *ctx, od_error *err);
void xp_template_free(xp_template *t);
/*
 * Renders into out (cap bytes, always NUL-terminated when cap > 0,
 * truncated without splitting a UTF-8 sequence).  Returns false when some
 * part was unknown (its place shows "?").
 */
bool xp_template_render(const xp_template *t, xp_lookup lookup, void *ctx,
    char *out, size_t cap);
/* Formats one value as templates do. */
void xp_format(xv_value v, char *out, size_t cap);

#endif

/*
 * recog_check.c: `oomdoc rules check` for the recognisers of the table
 * (recog_table.h): each recogniser against its own examples.
 *
 * The recognisers are compiled as the scanner compiles them (sk_recogniser
 * of recogniser.h, with JIT when the scanner would use it), and each
 * example is run through its recogniser alone, as the extractor would run
 * it on a joined text:
 *
 *   1. the hit is the first place in the text where one of the
 *      recogniser's anchors occurs (caseless where the anchor is); there
 *      must be one, or the prefilter would never hand the text over;
 *   2. the recogniser's find must return a message that covers the hit,
 *      and its fill must take it (a required follow must be found);
 *   3. an anchor must occur whole within the message taken (the anchor
 *      is something the pattern requires, as far as the examples show);
 *   4. the fields the event gets must be exactly the example's: each
 *      listed field with its value (sizes in bytes), no field unlisted;
 *      fatal as listed, or else as the recogniser's fatal.
 *
 * Then each anchor must be accounted for: it occurs in the pattern read
 * literally (a backslash before a character that is not a letter or digit
 * dropped), or in the message of one of the examples.  An anchor that does
 * neither is mistyped or dead: the prefilter hands over lines for it that
 * the pattern cannot take.
 *
 * A search that stops at PCRE2's match or depth limit (regex.h) is an
 * error that names the recogniser: its pattern backtracks too much.
 */
#define _GNU_SOURCE             /* memmem */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caseless.h"
#include "recog_table.h"

typedef struct {
	const sk_table *t;
	rl_errors *errs;
	int nerr;
} sk_check_ctx;

static void sk_fail(sk_check_ctx *c, const sk_spec *sp, sk_mark at,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
sk_fail(sk_check_ctx *c, const sk_spec *sp, sk_mark at, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	c->nerr++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	yu_errors_add(c->errs, sp->file, at.line, at.col, "recogniser '%s': %s",
	    sp->id, msg);
}

/* Where anchor a first occurs in t[0..len), or NULL. */
static const char *
sk_anchor_in(const ex_anchor *a, const char *t, size_t len)
{
	size_t n = strlen(a->text);

	if (!a->caseless)
		return memmem(t, len, a->text, n);
	return od_caseless_find(t, len, a->text, n);
}

/* The pattern read literally: a backslash before a character that is not
 * a letter or a digit dropped ("\(2\)" reads "(2)"). */
static void
sk_literal(const char *p, char *out, size_t cap)
{
	size_t n = 0;

	for (; *p != '\0' && n + 1 < cap; p++) {
		if (p[0] == '\\' && p[1] != '\0' && !((p[1] >= 'a' &&
		    p[1] <= 'z') || (p[1] >= 'A' && p[1] <= 'Z') ||
		    (p[1] >= '0' && p[1] <= '9')))
			p++;
		out[n++] = *p;
	}
	out[n] = '\0';
}

/* Compares the event's fields with the example's. */
static void
sk_compare(sk_check_ctx *c, const sk_spec *sp, const sk_example *ex,
    const od_event *ev)
{
	char got[128];
	int f, k;
	bool fatal = sp->fatal, benign = false, head = false;
	sk_mark fatal_at = ex->at, benign_at = ex->at, head_at = ex->at;

	for (f = 0; sk_fields[f].name != NULL; f++) {
		const sk_example_field *want = NULL;
		bool has = sk_field_value(ev, f, got, sizeof got);

		for (k = 0; k < ex->nfields; k++)
			if (strcmp(ex->fields[k].name, sk_fields[f].name) == 0)
				want = &ex->fields[k];
		if (want == NULL && has)
			sk_fail(c, sp, ex->at, "the example yields %s: %s, which "
			    "its fields do not list", sk_fields[f].name, got);
		else if (want != NULL && !has)
			sk_fail(c, sp, want->at, "field %s: the example wants "
			    "'%s', the recogniser gives none", want->name,
			    want->value);
		else if (want != NULL && (sk_fields[f].type == SK_FIELD_TEXT ?
		    strcmp(want->value, got) != 0 :
		    strtoll(want->value, NULL, 10) != strtoll(got, NULL, 10)))
			sk_fail(c, sp, want->at, "field %s: the example wants "
			    "'%s', the recogniser gives '%s'", want->name,
			    want->value, got);
	}
	for (k = 0; k < ex->nfields; k++)
		if (strcmp(ex->fields[k].name, "fatal") == 0) {
			fatal = strcmp(ex->fields[k].value, "true") == 0;
			fatal_at = ex->fields[k].at;
		} else if (strcmp(ex->fields[k].name, "benign") == 0) {
			benign = strcmp(ex->fields[k].value, "true") == 0;
			benign_at = ex->fields[k].at;
		} else if (strcmp(ex->fields[k].name, "head") == 0) {
			head = strcmp(ex->fields[k].value, "true") == 0;
			head_at = ex->fields[k].at;
		}
	if (fatal != ev->fatal)
		sk_fail(c, sp, fatal_at, "the example wants fatal: %s, the "
		    "recogniser gives %s", fatal ? "true" : "false",
		    ev->fatal ? "true" : "false");
	if (benign != ev->benign)
		sk_fail(c, sp, benign_at, "the example wants benign: %s, the "
		    "recogniser gives %s", benign ? "true" : "false",
		    ev->benign ? "true" : "false");
	if (head != ev->dump_head)
		sk_fail(c, sp, head_at, "the example wants head: %s, the "
		    "recogniser gives %s", head ? "true" : "false",
		    ev->dump_head ? "true" : "false");
}

/*
 * Runs example ex of recogniser i alone.  Marks in used[] the anchors
 * that occur whole in the message it takes.
 */
static void
sk_run_example(sk_check_ctx *c, void *self, int i, const sk_example *ex,
    bool *used)
{
	const sk_spec *sp = &c->t->v[i];
	const char *t = ex->text, *hit = NULL, *at;
	size_t len = strlen(t), ms = 0, me = 0;
	uint64_t limits = sk_limit_hits(self, i);
	rg_skip skip;
	od_event ev;
	bool inside = false;
	int k;

	for (k = 0; k < sp->nanchors; k++) {
		at = sk_anchor_in(&sp->anchors[k], t, len);
		if (at != NULL && (hit == NULL || at < hit))
			hit = at;
	}
	if (hit == NULL) {
		sk_fail(c, sp, ex->at, "none of its anchors occurs in this "
		    "example: the prefilter would never hand it over");
		return;
	}
	/* Every candidate but this one left out. */
	memset(&skip, 0xff, sizeof skip);
	skip.w[i / 64] &= ~(UINT64_C(1) << (i % 64));
	od_event_init(&ev);
	k = sk_recogniser.find(self, t, len, (size_t)(hit - t), &skip, &ms);
	if (k == i && !sk_recogniser.fill(self, i, t, len, ms, &me, &ev))
		k = -2;
	if (sk_limit_hits(self, i) > limits) {
		sk_fail(c, sp, ex->at, "its pattern was stopped at PCRE2's "
		    "match limit (%d steps) or depth limit (%d) on this "
		    "example: it backtracks too much", RX_MATCH_LIMIT,
		    RX_DEPTH_LIMIT);
	} else if (k == -1) {
		sk_fail(c, sp, ex->at, "its pattern matches nothing in this "
		    "example that covers the anchor at byte %zu",
		    (size_t)(hit - t));
	} else if (k == -2) {
		sk_fail(c, sp, ex->at, "the follow pattern, which is required, "
		    "finds nothing in the %d lines after the match",
		    sp->follow_lines);
	} else {
		for (k = 0; k < sp->nanchors; k++)
			if (sk_anchor_in(&sp->anchors[k], t + ms, me - ms) !=
			    NULL)
				inside = used[k] = true;
		if (!inside)
			sk_fail(c, sp, ex->at, "none of its anchors occurs in "
			    "the message it takes from this example (bytes %zu "
			    "to %zu): the prefilter could miss such a message",
			    ms, me);
		sk_compare(c, sp, ex, &ev);
	}
	od_event_clear(&ev);
}

bool
sk_table_check(const sk_table *t, bool jit, rl_errors *errs)
{
	sk_check_ctx c = { .t = t, .errs = errs };
	char lit[SK_PATTERN_MAX];
	od_error err;
	void *self;
	int i, e, k;

	if (t == NULL || t->n == 0)
		return true;
	memset(&err, 0, sizeof err);
	self = sk_recogniser.create(jit, t, &err);
	if (self == NULL) {
		od_error *slot = yu_error_slot(errs);

		if (slot != NULL)
			*slot = err;
		return false;
	}
	for (i = 0; i < t->n; i++) {
		const sk_spec *sp = &t->v[i];
		bool used[SK_ANCHORS_MAX] = { false };

		for (e = 0; e < sp->nexamples; e++)
			sk_run_example(&c, self, i, &sp->examples[e], used);
		sk_literal(sp->pattern, lit, sizeof lit);
		for (k = 0; k < sp->nanchors; k++)
			if (!used[k] && sk_anchor_in(&sp->anchors[k], lit,
			    strlen(lit)) == NULL)
				sk_fail(&c, sp, sp->anchor_at[k], "anchor '%s' "
				    "occurs neither in its pattern, read "
				    "literally, nor in the message of any of its "
				    "examples", sp->anchors[k].text);
	}
	sk_recogniser.destroy(self);
	return c.nerr == 0;
}

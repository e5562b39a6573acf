/*
 * extract.h: turning the text around a prefilter hit into an event.
 *
 * The extractor joins the lines around the hit (lines.c, prefix.c), asks
 * its recognisers (recogniser.h) for the earliest message that covers the
 * hit, and gives the winner's event its exception, framework, verbatim
 * message and span.
 */
#ifndef OD_EXTRACT_H
#define OD_EXTRACT_H

#include "core.h"
#include "recogniser.h"

/* How far the extractor looks: bytes before the hit, and the joined text. */
#define EX_BACK_MAX 512
#define EX_TEXT_MAX (16 * 1024)
#define EX_LINES_MAX 32
#define EX_LINES_QUICK 3        /* the first try: most messages fit */

typedef struct ex_ctx ex_ctx;

/* jit: compile the patterns with PCRE2's JIT.  recognisers: the loaded
 * table of recog_table.h (NULL: none, only PyTorch's grammar and the
 * fallback), borrowed; it must outlive x and every event x fills. */
ex_ctx *ex_new(bool jit, const struct sk_table *recognisers, od_error *err);
void ex_free(ex_ctx *x);

/*
 * The fixed strings the prefilter must find for this extractor: the
 * anchors of all its recognisers, each once, in the order of the
 * recognisers.  *n of them; the array and the strings are owned by x.
 */
const ex_anchor *ex_anchors(const ex_ctx *x, size_t *n);

/* The first recogniser of the table (recog_table.h), from index from on,
 * that was stopped at PCRE2's limits (sk_stopped), or -1. */
int ex_stopped(const ex_ctx *x, int from);

/* What the scanner knows about the place of a hit. */
typedef struct {
	const char *buf;        /* the bytes around the hit */
	size_t len;             /* bytes available in buf */
	/* The input offset of buf[0]: the scanner moves its buffer on, and
	 * what the extractor keeps of an earlier hit's place is kept as an
	 * input offset, so that where the buffer was full changes nothing. */
	uint64_t base;
	size_t line_start;      /* where the hit's line starts in buf */
	bool line_start_known;  /* false when the line began before buf */
	size_t hit;             /* where the anchor starts */
	size_t from;            /* nothing before this offset may be used */
	/* Changes whenever the bytes of buf[0..len) may have changed (not
	 * when bytes are appended): the extractor then joins again what it
	 * joined for an earlier hit.  0: unknown, nothing is reused. */
	uint64_t gen;
	/* A width other than the usual consoles' (lines.c) at which this
	 * log's lines have been seen hard-wrapped (scan.c, sc_seams); 0 when
	 * none is known. */
	size_t wrap_width;
} ex_window;

/* The part of the window that a recognised message took. */
typedef struct {
	size_t start;           /* offset in buf of the message's first byte */
	size_t end;             /* offset in buf just past its last byte */
	uint64_t lines;         /* '\n' between the hit's line and the end */
} ex_span;

/*
 * Recognises a message around w->hit.  On success fills ev (everything but
 * input and line numbers) and *span and returns true.  ev need not be
 * initialised: it is made a fresh event (od_event_init) only when there is
 * one to fill, which a dense input's hits mostly do not need; on false it
 * holds nothing to free (and nothing to read).
 */
bool ex_extract(ex_ctx *x, const ex_window *w, od_event *ev, ex_span *span);

/* True when memory ran out since the last call (an event lost its
 * message); clears the flag. */
bool ex_nomem(ex_ctx *x);
/* Forgets the remembered rounds (ex_arbitrate_memo), giving back their
 * texts (at most 512 KiB) and events: called at the end of an input, so
 * that the memory they hold is free for the rules and the report.  What
 * the next rounds answer does not change. */
void ex_forget(ex_ctx *x);

#endif

/*
 * extract.c: arbitration between the recognisers, and what every event
 * gets whichever recogniser read it (extract.h).
 *
 * The scanner hands over a window around a prefilter hit.  The extractor
 * strips the hit line's prefixes (prefix.c), joins it and the lines after
 * it into one text (lines.c), and asks every recogniser for the earliest
 * message of its own that covers the hit.  The earliest message wins, the
 * recogniser first in ex_recognisers a tie; when the winner finds that
 * what starts there is no message after all, it is asked again or left
 * out (its retry), and the others' candidates compete again.  The
 * fallback (recog_fallback.c) competes only when no other has a
 * candidate left, and gives way to another's message later on the line.
 * The event
 * then gets the exception type before the message, its framework, whether
 * the program recovered, the verbatim message and its span in the window.
 */
#define _GNU_SOURCE             /* memmem */
#include <stdlib.h>
#include <string.h>

#include "caseless.h"
#include "hash.h"
#include "extract.h"
#include "recog_table.h"
#include "lines.h"
#include "prefix.h"

/* The recognisers, in the order that breaks a tie: a PyTorch message wins
 * over another stack's that starts at the same byte.  The last is the
 * fallback, which competes only when no other has a candidate. */
static const ex_recogniser *const ex_recognisers[] = {
	&pt_recogniser,
	&sc_recogniser,
	&sk_recogniser,
	&fb_recogniser,
};
#define EX_NRECOG ((int)(sizeof ex_recognisers / sizeof ex_recognisers[0]))
#define EX_FALLBACK (EX_NRECOG - 1)

/* Later anchors that ex_later_message asks every recogniser about before
 * it leaves out what cannot match in the text. */
#define EX_LATER_LOOK 16

/* Failed candidates tried again per text, at most. */
#define EX_TRIES_MAX 8

/* The bytes before an event's end kept to find it again, and how close
 * after an event a fallback's line is part of that failure's output
 * (the exception line after a Ray kill, a wrapper's summary after a
 * ggml message). */
#define EX_TAIL 32
#define EX_AFTER_LINES 24
#define EX_AFTER_BYTES (8u * 1024)

/*
 * Results of ex_arbitrate remembered, at most (EX_MEMO_WAYS slots a hash:
 * a line with a dozen anchors asks a dozen rounds, and the next such
 * line the same dozen), and how a text is told apart from another before it
 * is compared byte for byte: its length and its first and last
 * EX_MEMO_EDGE bytes.
 */
#define EX_MEMO 128
#define EX_MEMO_WAYS 4
#define EX_MEMO_EDGE 32
/*
 * The most bytes of text the slots hold in all: a slot that would grow
 * past it keeps nothing.  For a log of 100 000 PyTorch reports the 128
 * slots held 1.3 MB through the whole run; the anchor-dense inputs of
 * bench/run.sh take no more instructions with the bound (callgrind).
 */
#define EX_MEMO_BYTES (512 * 1024)

/*
 * One remembered round of ex_arbitrate: its inputs (the joined text, the
 * hit's place in it, whether the fallback could compete, the timestamp of
 * the fresh event it filled, and the recognisers' strikes: the same
 * patterns ran, none stopped since) and its outputs (the answer, the
 * message's bounds, whether its recogniser reads on, the event it filled,
 * which holds no heap field then).  The event (3 KiB, 9 KiB then) is kept
 * apart, on the heap, so that the slots a lookup reads lie close
 * together: kept in the slot, a set of four ways spanned 36 KiB and the
 * whole memo 1.1 MiB, and every hit's lookup missed the caches (17% of
 * ex_extract's own time on a line of 14 anchors, perf).
 */
typedef struct {
	bool used;
	uint64_t hash, strikes;
	/* The joined text (ex_ctx.text_gen) last found equal to text. */
	uint64_t vgen;
	/* Where text came from when it was the window's own bytes
	 * (ln_text.src_buf; NULL: it was not). */
	const char *src_buf;
	uint64_t src_gen;
	size_t src_at;
	char *text;             /* cap bytes, owned */
	size_t cap, len, ht;
	bool fallback_ok;
	bool at_end;            /* the text's rg_text.at_end */
	char ts[OD_TIMESTAMP_MAX];
	bool ok, follows;
	bool have_ev;           /* *ev, ms and me kept (ex_arbitrate_memo) */
	size_t ms, me;
	od_event *ev;           /* owned; NULL until an event is kept */
} ex_memo;

/* What a joined text was joined from; gen 0 never matches. */
typedef struct {
	const char *buf;
	uint64_t gen;
	size_t len, line_start, s, wrap_width;
	int lines;
} ex_join_key;

/* Whether key k says the text it keeps was joined from the same bytes as
 * a join of window w from s with that many lines would be. */
static bool
ex_same_join(const ex_join_key *k, const ex_window *w, size_t s, int lines)
{
	return w->gen != 0 && k->gen == w->gen && k->buf == w->buf &&
	    k->len == w->len && k->line_start == w->line_start && k->s == s &&
	    k->lines == lines && k->wrap_width == w->wrap_width;
}

/*
 * A hit that gave no event, with what its answer depended on
 * (ex_repeated): the window (its bytes, generation, length and wrap
 * width), the hit, its line's start and whether that is known, where the
 * joined texts started (s), how far they and the line's prefix read the
 * bytes (end, px_end), whether the fallback could compete, and the
 * table's strikes.  far: the texts started more than LN_BEFORE_MAX bytes
 * into a known line, so that its start was not read but for its prefix.
 */
#define EX_REPEAT 64
typedef struct {
	const char *buf;        /* NULL: unused */
	uint64_t gen, strikes;
	size_t len, wrap_width, hit, line_start, s, end, px_end;
	bool known, fallback_ok, far;
} ex_repeat;

struct ex_ctx {
	void *self[EX_NRECOG];  /* each recogniser's state */
	size_t nspecific;       /* anchors[0..nspecific): not the fallback's */
	/* The last event's end: its window's bytes, its input offset
	 * (ex_window.base, as the scanner moves its buffer on), and the
	 * bytes before it, which say whether the window still holds them
	 * (another input's, or a caller's other text). */
	const char *last_buf;
	uint64_t last_end;
	char last_tail[EX_TAIL];
	size_t last_tail_n;
	px_ctx *px;
	ex_anchor *anchors;     /* pointers into the recognisers' anchors */
	size_t nanchors;
	/*
	 * The joined texts of the two passes (EX_LINES_QUICK and
	 * EX_LINES_MAX lines), text the one being read, each kept with what
	 * it was joined from (ex_join_key), and the hit line's prefix with
	 * what it gave.  Hits close together on the same lines (a line with
	 * a thousand anchors, an anchor on every line) join the same text:
	 * it is joined, and the prefixes of its lines parsed, once.
	 */
	ln_text texts[2];
	ex_join_key keys[2];
	ln_text *text;
	/*
	 * Each join's number (a new one for every ln_join, never 0) and the
	 * hash of its text (ex_memo_hash_text), per pass: the hits that read
	 * one joined text hash it once, and a remembered round found equal
	 * to it is not compared byte for byte again (ex_memo.vgen).
	 */
	uint64_t text_gens, text_gen[2], text_hash[2];
	/* Per pass, whether nothing but blank space follows the join in the
	 * window, which then holds the input's end (rg_text.at_end). */
	bool at_end[2];
	/* What ex_after_event last answered, and for which question: the
	 * line's start in which window (buf, gen) after which event's end
	 * (remembered, ex_remember's count). */
	/*
	 * A stretch of a window's bytes known to repeat with period pr_d:
	 * buf[i] == buf[i + pr_d] for every i in [pr_lo, pr_hi) (a line of
	 * one anchor a thousand times; ex_same_text).
	 */
	const char *pr_buf;
	uint64_t pr_gen;
	size_t pr_lo, pr_hi, pr_d;
	const char *ae_buf;
	uint64_t ae_gen, ae_remembered, remembered;
	size_t ae_line_start;
	/* The '\n' that ex_after_event_look counted from the last event's
	 * end up to ae_line_start (or up to where it stopped, past
	 * EX_AFTER_LINES). */
	size_t ae_lines;
	bool ae_answer;
	ex_join_key px_key;
	size_t px_len;
	int px_rank;
	char px_ts[OD_TIMESTAMP_MAX];
	od_labels px_labels;
	bool nomem;             /* a message could not be kept (ex_nomem) */
	/*
	 * Rounds of arbitration remembered (ex_arbitrate_memo), a set of
	 * EX_MEMO_WAYS slots each by their hash, and the table recogniser's index (its strikes are part of
	 * what a round depends on; -1: none).
	 */
	ex_memo memo[EX_MEMO];
	unsigned char memo_turn[EX_MEMO / EX_MEMO_WAYS];
	size_t memo_bytes;      /* the slots' cap in all, <= EX_MEMO_BYTES */
	int sk;
	/* The prefix's line end read (px_end, ex_repeat), the last hits
	 * that gave no event (a slot each, ex_repeat_slot), and a stretch
	 * of a window's bytes known to repeat with period rq_d:
	 * buf[i] == buf[i + rq_d] for every i in [rq_lo, rq_hi). */
	size_t px_end;
	ex_repeat rp[EX_REPEAT];
	const char *rq_buf;
	uint64_t rq_gen;
	size_t rq_lo, rq_hi, rq_d;
};

/* Collects the recognisers' anchors, each text once, caseless when any
 * recogniser wants it so. */
static bool
ex_collect_anchors(ex_ctx *x, od_error *err)
{
	size_t total = 0, n, i, k;
	int r;

	for (r = 0; r < EX_NRECOG; r++) {
		(void)ex_recognisers[r]->anchors(x->self[r], &n);
		total += n;
	}
	x->anchors = calloc(total > 0 ? total : 1, sizeof *x->anchors);
	if (x->anchors == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return false;
	}
	for (r = 0; r < EX_NRECOG; r++) {
		const ex_anchor *a = ex_recognisers[r]->anchors(x->self[r], &n);

		for (i = 0; i < n; i++) {
			for (k = 0; k < x->nanchors; k++)
				if (strcmp(x->anchors[k].text, a[i].text) == 0)
					break;
			if (k == x->nanchors)
				x->anchors[x->nanchors++] = a[i];
			else if (a[i].caseless)
				/* A caseless anchor finds all the other finds. */
				x->anchors[k].caseless = true;
		}
		if (r == EX_FALLBACK - 1)
			x->nspecific = x->nanchors;
	}
	return true;
}

ex_ctx *
ex_new(bool jit, const struct sk_table *recognisers, od_error *err)
{
	ex_ctx *x = calloc(1, sizeof *x);
	int r;

	if (x == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	x->sk = -1;
	for (r = 0; r < EX_NRECOG; r++) {
		if (ex_recognisers[r] == &sk_recogniser)
			x->sk = r;
		x->self[r] = ex_recognisers[r]->create(jit, recognisers, err);
		if (x->self[r] == NULL) {
			ex_free(x);
			return NULL;
		}
	}
	if ((x->px = px_new(jit, err)) == NULL || !ex_collect_anchors(x, err)) {
		ex_free(x);
		return NULL;
	}
	return x;
}

void
ex_free(ex_ctx *x)
{
	int r;

	if (x == NULL)
		return;
	for (r = 0; r < EX_NRECOG; r++)
		if (x->self[r] != NULL)
			ex_recognisers[r]->destroy(x->self[r]);
	px_free(x->px);
	free(x->anchors);
	for (r = 0; r < EX_MEMO; r++) {
		free(x->memo[r].text);
		free(x->memo[r].ev);
	}
	free(x);
}

int
ex_stopped(const ex_ctx *x, int from)
{
	int r;

	for (r = 0; r < EX_NRECOG; r++)
		if (ex_recognisers[r] == &sk_recogniser)
			return sk_stopped(x->self[r], from);
	return -1;
}

const ex_anchor *
ex_anchors(const ex_ctx *x, size_t *n)
{
	*n = x->nanchors;
	return x->anchors;
}

/*
 * Whether one of the n phrases is in t[0..len): passed over in a few
 * memchr when t has neither the letter key nor both an 'O' and an 'f',
 * one of which each phrase holds (ex_recovered's lists).
 */
static bool
ex_any_phrase(const char *t, size_t len, const char *const *phrase,
    size_t n, char key)
{
	size_t i;

	if (memchr(t, key, len) == NULL && (memchr(t, 'O', len) == NULL ||
	    memchr(t, 'f', len) == NULL))
		return false;
	for (i = 0; i < n; i++)
		if (memmem(t, len, phrase[i], strlen(phrase[i])) != NULL)
			return true;
	return false;
}

/*
 * Whether the program caught the failure and went on: fairseq's
 * "ran out of memory with exception: ..." before it and "attempting to
 * recover from OOM" after it, the retry wrappers' "retrying with a
 * smaller batch".  Such a report is evidence, not the failure.
 */
static bool
ex_recovered(const char *t, size_t tlen, size_t ms, size_t me)
{
	/* Each phrase before has an 'x' ("exception") or both an 'O' and
	 * an 'f' ("from OOM"), each after a 'b' ("batch") or both: text
	 * without them (an input of one message repeated, "OOMKilled" or
	 * "CUDA error: out of memory") costs a few memchr. */
	static const char *const before[] = {
		"an out of memory with exception", "recovering from OOM",
	};
	static const char *const after[] = {
		"attempting to recover from OOM", "recovered from OOM",
		"skipping batch", "retrying with a smaller batch",
		"Decreasing batch size",
	};
	/* Back to the line's start, at most 300 bytes. */
	size_t b = ln_bol(t, ms > 300 ? ms - 300 : 0, ms);
	size_t e = me + 400 < tlen ? me + 400 : tlen;
	return ex_any_phrase(t + b, ms - b, before,
	    sizeof before / sizeof before[0], 'x') ||
	    ex_any_phrase(t + me, e - me, after,
	    sizeof after / sizeof after[0], 'b');
}

/*
 * Whether the prefix stripped from the hit's line, p[0..n), gives an error
 * severity: glog's E or F with the date ("E1201 "), or a logger's ERROR,
 * FATAL or CRITICAL.  The fallback's event is fatal then (its line no
 * longer shows the prefix).
 */
static bool
ex_prefix_failure(const char *p, size_t n)
{
	static const char *const levels[] = { "ERROR", "FATAL", "CRITICAL" };
	size_t i = 0, k;

	while (i < n && (p[i] == ' ' || p[i] == '\t'))
		i++;
	if (n - i >= 6 && (p[i] == 'E' || p[i] == 'F')) {
		for (k = 1; k <= 4 && p[i + k] >= '0' && p[i + k] <= '9'; k++)
			;
		if (k == 5 && p[i + 5] == ' ')
			return true;
	}
	for (k = 0; k < sizeof levels / sizeof levels[0]; k++)
		if (memmem(p, n, levels[k], strlen(levels[k])) != NULL)
			return true;
	return false;
}

/* Starts ev again from a clean event, keeping the prefix's timestamp. */
static void
ex_reset(od_event *ev)
{
	char ts[OD_TIMESTAMP_MAX];

	memcpy(ts, ev->timestamp, sizeof ts);
	od_event_clear(ev);
	memcpy(ev->timestamp, ts, sizeof ts);
}

/* The first place at or after from where anchor a occurs in t[0..tlen),
 * or tlen. */
static size_t
ex_anchor_next(const ex_anchor *a, const char *t, size_t tlen, size_t from)
{
	size_t n = strlen(a->text);
	const char *p;

	if (n == 0 || from >= tlen || tlen - from < n)
		return tlen;
	if (!a->caseless)
		p = memmem(t + from, tlen - from, a->text, n);
	else
		p = od_caseless_find(t + from, tlen - from, a->text, n);
	return p != NULL ? (size_t)(p - t) : tlen;
}

/*
 * Whether a message of another recogniser covers a later hit in the
 * joined text: then the fallback gives way, and the scanner's later hit
 * reads that message (TensorFlow's "ResourceExhaustedError: Graph
 * execution error:" two lines before its "OOM when allocating tensor").
 */
static bool
ex_later_message(ex_ctx *x, size_t ht)
{
	const char *t = x->text->text;
	size_t tlen = x->text->len, at, a, st, tried = 0;
	rg_skip none[EX_FALLBACK];
	bool all[EX_FALLBACK] = { false }, masked = false;
	int r, left = EX_FALLBACK;

	for (a = 0; a < x->nspecific; a++)
		for (at = ex_anchor_next(&x->anchors[a], t, tlen, ht + 1);
		    at < tlen; at = ex_anchor_next(&x->anchors[a], t, tlen,
		    at + 1)) {
			/*
			 * A text with many later anchors (a long line of one
			 * anchor repeated) would ask every recogniser at each:
			 * past EX_LATER_LOOK of them, the candidates that
			 * cannot match anywhere in the text are left out
			 * (ex_recogniser.absent), which changes no answer,
			 * and a recogniser none of whose can is asked no more.
			 */
			if (++tried == EX_LATER_LOOK) {
				masked = true;
				for (r = 0; r < EX_FALLBACK; r++) {
					memset(&none[r], 0, sizeof none[r]);
					if (ex_recognisers[r]->absent != NULL &&
					    ex_recognisers[r]->absent(x->self[r],
					    t, tlen, &none[r])) {
						all[r] = true;
						left--;
					}
				}
				if (left == 0)
					return false;
			}
			for (r = 0; r < EX_FALLBACK; r++)
				if (!all[r] && ex_recognisers[r]->find(x->self[r],
				    t, tlen, at, masked ? &none[r] : NULL,
				    &st) >= 0)
					return true;
		}
	return false;
}

/*
 * One round over the joined text: the earliest candidate of all the
 * recognisers that covers the hit at ht reads the message.  Returns true
 * with *ms and *me set when one did; *follows is set when a candidate
 * tried reads on into the lines after its match.
 */
static bool
ex_arbitrate(ex_ctx *x, size_t ht, bool fallback_ok, od_event *ev, size_t *ms,
    size_t *me, bool *follows)
{
	const char *t = x->text->text;
	size_t tlen = x->text->len, start[EX_NRECOG];
	rg_skip skip[EX_NRECOG];
	int cand[EX_NRECOG], r, tries;
	bool asked = false;

	/* The fallback is asked only when it could win (below). */
	for (r = 0; r < EX_NRECOG; r++) {
		memset(&skip[r], 0, sizeof skip[r]);
		cand[r] = r == EX_FALLBACK ? -1 : ex_recognisers[r]->find(
		    x->self[r], t, tlen, ht, NULL, &start[r]);
	}
	for (tries = 0; tries < EX_TRIES_MAX; tries++) {
		const ex_recogniser *rec;
		int best = -1;

		for (r = 0; r < EX_FALLBACK; r++)
			if (cand[r] >= 0 && (best < 0 || start[r] < start[best]))
				best = r;
		/* The fallback, last: when no other has a candidate, and no
		 * other reads a message later on the line. */
		if (best < 0 && fallback_ok && !asked) {
			asked = true;
			cand[EX_FALLBACK] = ex_recognisers[EX_FALLBACK]->find(
			    x->self[EX_FALLBACK], t, tlen, ht, NULL,
			    &start[EX_FALLBACK]);
			if (cand[EX_FALLBACK] >= 0 && ex_later_message(x, ht))
				cand[EX_FALLBACK] = -1;
		}
		if (best < 0 && cand[EX_FALLBACK] >= 0)
			best = EX_FALLBACK;
		if (best < 0)
			return false;
		rec = ex_recognisers[best];
		*ms = start[best];
		*follows |= rec->follows(x->self[best], cand[best]);
		if (rec->fill(x->self[best], cand[best], t, tlen, *ms, me, ev))
			return true;
		ex_reset(ev);
		if (rec->retry && cand[best] < RG_CANDIDATES_MAX) {
			skip[best].w[cand[best] / 64] |=
			    UINT64_C(1) << (cand[best] % 64);
			cand[best] = rec->find(x->self[best], t, tlen, ht,
			    &skip[best], &start[best]);
		} else {
			cand[best] = -1;
		}
	}
	return false;
}

/* The recognisers' strikes so far (sk_strikes), 0 without the table. */
static uint64_t
ex_strikes(const ex_ctx *x)
{
	return x->sk >= 0 ? sk_strikes(x->self[x->sk]) : 0;
}

/* Tells texts apart cheaply: their length, the hit's place, and their
 * first and last EX_MEMO_EDGE bytes (FNV-1a); equal texts are then
 * compared whole. */
static uint64_t
ex_memo_hash_text(const char *t, size_t len)
{
	size_t n = len < EX_MEMO_EDGE ? len : EX_MEMO_EDGE;
	uint64_t h = od_hash_bytes(OD_HASH_SEED ^ len, t, n);

	return od_hash_bytes(h, t + len - n, n);
}

/* The hash of a round: its text's (above) and the hit's place, the
 * high bits mixed down to the low ones, which pick the slot. */
static uint64_t
ex_memo_hash(uint64_t text_hash, size_t ht)
{
	uint64_t h = text_hash ^ ((uint64_t)ht << 32);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

/*
 * Whether the window's bytes buf[b..b+len) and buf[a..a+len), b < a, are
 * the same: they are when the bytes from b to a + len repeat with a period
 * that divides a - b, which the hits along a long line of one repeated
 * anchor find out a period at a time, each comparing only the bytes that
 * its text has past the last one's (ex_ctx.pr_*), not its whole text.
 */
static bool
ex_period_same(ex_ctx *x, const char *buf, uint64_t gen, size_t b, size_t a,
    size_t len)
{
	size_t need;

	if (x->pr_buf != buf || x->pr_gen != gen || x->pr_d == 0 ||
	    (a - b) % x->pr_d != 0 || b < x->pr_lo || b > x->pr_hi) {
		x->pr_buf = buf;
		x->pr_gen = gen;
		x->pr_d = a - b;
		x->pr_lo = x->pr_hi = b;
	}
	/* Every i in [b, a + len - d) repeats: the i + k d of [b, b + len)
	 * then all hold the same byte up to a + len. */
	need = a + len - x->pr_d;
	if (x->pr_hi < need) {
		if (memcmp(buf + x->pr_hi, buf + x->pr_hi + x->pr_d,
		    need - x->pr_hi) != 0)
			return false;
		x->pr_hi = need;
	}
	return true;
}

/* Whether remembered round m's text is the text being read (of len
 * bytes, as m's): compared byte for byte, but for two stretches of one
 * window's bytes (ex_period_same). */
static bool
ex_same_text(ex_ctx *x, const ex_memo *m, size_t len)
{
	const ln_text *j = x->text;

	if (j->src_buf != NULL && m->src_buf == j->src_buf &&
	    m->src_gen == j->src_gen && j->src_gen != 0) {
		if (m->src_at == j->src_at)
			return true;
		return m->src_at < j->src_at ?
		    ex_period_same(x, j->src_buf, j->src_gen, m->src_at,
		    j->src_at, len) :
		    ex_period_same(x, j->src_buf, j->src_gen, j->src_at,
		    m->src_at, len);
	}
	return memcmp(m->text, j->text, len) == 0;
}

/*
 * Tells the recognisers the number of the text their finds read now
 * (ex_recogniser.text): the join of pass, or none (gen 0).  The first
 * pass's text may go on into the second's: what the searches in it found
 * without looking at its end is kept for that (rg_text.longer); the
 * second's says it begins with the first's when its bytes do (the same
 * hit's lines, three of them and then more).
 */
static void
ex_text_gen(ex_ctx *x, int pass, uint64_t gen)
{
	rg_text tx = { .gen = gen, .longer = gen != 0 && pass == 0,
	    .at_end = gen != 0 && x->at_end[pass] };
	const ln_text *a = &x->texts[0], *b = &x->texts[1];
	int r;

	if (gen != 0 && pass == 1 && x->text_gen[0] != 0 &&
	    b->len > a->len && memcmp(b->text, a->text, a->len) == 0) {
		tx.base = x->text_gen[0];
		tx.base_len = a->len;
	}
	for (r = 0; r < EX_NRECOG; r++)
		if (ex_recognisers[r]->text != NULL)
			ex_recognisers[r]->text(x->self[r], pass, &tx);
}

/*
 * ex_arbitrate, remembered.  A round's answer depends only on its inputs
 * (ex_memo): the recognisers keep no state between rounds but the table's
 * strikes, and the event it starts from is a fresh one with the prefix's
 * timestamp ts (sc_hit, ex_reset).  An input dense with anchors (a line of a
 * thousand "Killed ", a million lines of "out of memory") asks the same
 * round again and again; each is so run once, and the others copy its
 * answer.  A round during which a pattern struck a limit is not kept (it
 * changed the state), and a kept one is used only while the strikes are
 * the same.  So whether a round is found here or run again changes
 * nothing but the time it takes.
 *
 * ev is made a fresh event with timestamp ts (od_event_init) only when
 * the round is run or its remembered event copied, and *fresh then set: a
 * remembered round that found no event, the common case of a dense input,
 * touches ev not at all.  pass: the joined text's pass (ex_extract).
 */
static bool
ex_arbitrate_memo(ex_ctx *x, int pass, size_t ht, bool fallback_ok,
    const char *ts, od_event *ev, bool *fresh, size_t *ms, size_t *me,
    bool *follows)
{
	const char *t = x->text->text;
	size_t len = x->text->len;
	uint64_t h = ex_memo_hash(x->text_hash[pass], ht);
	uint64_t strikes = ex_strikes(x), tg = x->text_gen[pass];
	size_t set = (size_t)(h % (EX_MEMO / EX_MEMO_WAYS)) * EX_MEMO_WAYS;
	ex_memo *m;
	bool ok, f = false, again = false;
	int i;

	for (i = 0; i < EX_MEMO_WAYS; i++) {
		m = &x->memo[set + (size_t)i];
		if (!m->used || m->hash != h || m->len != len || m->ht != ht ||
		    m->fallback_ok != fallback_ok || m->strikes != strikes ||
		    m->at_end != x->at_end[pass] ||
		    memcmp(m->ts, ts, sizeof m->ts) != 0)
			continue;
		/* The text itself, unless found equal to this join before. */
		if (m->vgen != tg) {
			if (!ex_same_text(x, m, len))
				continue;
			/* Its bytes are also these: compared from here on. */
			m->vgen = tg;
			m->src_buf = x->text->src_buf;
			m->src_gen = x->text->src_gen;
			m->src_at = x->text->src_at;
		}
		if (m->ok && !m->have_ev) {
			/* Seen once before, an event: kept in full now. */
			again = true;
			break;
		}
		if (m->ok) {
			*ev = *m->ev;
			*fresh = true;
			*ms = m->ms;
			*me = m->me;
		}
		*follows |= m->follows;
		return m->ok;
	}
	/* A miss takes the set's ways in turn. */
	if (!again) {
		m = &x->memo[set + x->memo_turn[set / EX_MEMO_WAYS]];
		x->memo_turn[set / EX_MEMO_WAYS] =
		    (x->memo_turn[set / EX_MEMO_WAYS] + 1) % EX_MEMO_WAYS;
	}
	if (!*fresh) {
		od_event_init(ev);
		*fresh = true;
	}
	memcpy(ev->timestamp, ts, sizeof ev->timestamp);
	/* The finds of the round read the join of this pass, numbered; none
	 * outside a round does. */
	ex_text_gen(x, pass, tg);
	ok = ex_arbitrate(x, ht, fallback_ok, ev, ms, me, &f);
	ex_text_gen(x, 0, 0);
	*follows |= f;
	if (ex_strikes(x) != strikes || (ok && (ev->message != NULL ||
	    ev->ranks != NULL || ev->seen != NULL || ev->causes != NULL ||
	    ev->per_rank != NULL || ev->frames != NULL ||
	    ev->ctx.readings != NULL)))
		return ok;
	if (m->cap < len) {
		/* Grown to the text's size, at most EX_TEXT_MAX, while the
		 * slots hold at most EX_MEMO_BYTES: a slot that cannot grow
		 * keeps nothing. */
		char *p = x->memo_bytes - m->cap + len <= EX_MEMO_BYTES ?
		    realloc(m->text, len) : NULL;

		m->used = false;
		if (p == NULL)
			return ok;
		x->memo_bytes += len - m->cap;
		m->text = p;
		m->cap = len;
	}
	memcpy(m->text, t, len);
	memcpy(m->ts, ts, sizeof m->ts);
	m->used = true;
	m->hash = h;
	m->vgen = tg;
	m->src_buf = x->text->src_buf;
	m->src_gen = x->text->src_gen;
	m->src_at = x->text->src_at;
	m->strikes = strikes;
	m->len = len;
	m->ht = ht;
	m->fallback_ok = fallback_ok;
	m->at_end = x->at_end[pass];
	m->ok = ok;
	m->follows = f;
	/* An event (3 KiB) is copied only the second time its round
	 * comes: a log of events all different pays for none. */
	if (ok && again && m->ev == NULL)
		m->ev = malloc(sizeof *m->ev);
	m->have_ev = ok && again && m->ev != NULL;
	if (m->have_ev) {
		m->ms = *ms;
		m->me = *me;
		*m->ev = *ev;
	}
	return ok;
}

/*
 * Whether the hit's line is close after the last event (at most
 * EX_AFTER_LINES lines and EX_AFTER_BYTES bytes after its end, in the same
 * window): a fallback's line there is more output of that failure.
 */
static bool
ex_after_event_look(ex_ctx *x, const ex_window *w)
{
	size_t n = x->last_tail_n, end, i, lines = 0;

	/* Where the end is in this window: it moved with the buffer's
	 * bytes, or left it (then it is further back than EX_AFTER_BYTES:
	 * the scanner keeps more history than that). */
	if (x->last_buf != w->buf || x->last_end < w->base + n)
		return false;
	end = (size_t)(x->last_end - w->base);
	if (end > w->line_start || w->line_start - end > EX_AFTER_BYTES ||
	    memcmp(w->buf + end - n, x->last_tail, n) != 0)
		return false;
	/* The lines counted for an earlier line after the same event, in
	 * the same bytes, are not counted again (a dense input asks this of
	 * each of the 24 lines after an event). */
	i = end;
	if (w->gen != 0 && x->ae_buf == w->buf && x->ae_gen == w->gen &&
	    x->ae_remembered == x->remembered &&
	    x->ae_line_start <= w->line_start && x->ae_line_start >= i) {
		i = x->ae_line_start;
		lines = x->ae_lines;
	}
	for (; i < w->line_start; i++)
		if (w->buf[i] == '\n' && ++lines > EX_AFTER_LINES)
			break;
	x->ae_lines = lines;
	return lines <= EX_AFTER_LINES;
}

/*
 * ex_after_event_look, asked once per line: its answer depends only on
 * the window's bytes (the same while buf and gen are), the line's start
 * and the last event's end, so the other hits of the line take it from
 * the first.
 */
static bool
ex_after_event(ex_ctx *x, const ex_window *w)
{
	if (w->gen == 0 || x->ae_buf != w->buf || x->ae_gen != w->gen ||
	    x->ae_line_start != w->line_start ||
	    x->ae_remembered != x->remembered) {
		x->ae_answer = ex_after_event_look(x, w);
		x->ae_buf = w->buf;
		x->ae_gen = w->gen;
		x->ae_line_start = w->line_start;
		x->ae_remembered = x->remembered;
	}
	return x->ae_answer;
}

/* Keeps where the event just read ends (ex_after_event). */
static void
ex_remember(ex_ctx *x, const ex_window *w, size_t end)
{
	size_t n = end < EX_TAIL ? end : EX_TAIL;

	if (end > w->len)
		end = w->len, n = end < EX_TAIL ? end : EX_TAIL;
	x->last_buf = w->buf;
	x->last_end = w->base + end;
	x->remembered++;
	x->last_tail_n = n;
	memcpy(x->last_tail, w->buf + end - n, n);
}

/* Whether buf[i] == buf[i + d] for every i in [lo, hi), the bytes of a
 * window of generation gen: what was compared before, for the same d, is
 * not compared again, so that successive hits along a repeating stretch
 * compare each byte about once. */
static bool
ex_repeat_bytes(ex_ctx *x, const char *buf, uint64_t gen, size_t lo,
    size_t hi, size_t d)
{
	if (x->rq_buf != buf || x->rq_gen != gen || x->rq_d != d ||
	    lo < x->rq_lo || lo > x->rq_hi) {
		x->rq_buf = buf;
		x->rq_gen = gen;
		x->rq_d = d;
		x->rq_lo = x->rq_hi = lo;
	}
	if (x->rq_hi < hi) {
		if (memcmp(buf + x->rq_hi, buf + x->rq_hi + d, hi - x->rq_hi) !=
		    0)
			return false;
		x->rq_hi = hi;
	}
	return true;
}

/* The slot of ex_ctx.rp for a hit of w whose texts start at s: by its
 * place in its line and the texts' start in it (unless far: its place in
 * the texts), which a hit that repeats an earlier one shares with it and
 * the other hits of its line do not. */
static size_t
ex_repeat_slot(const ex_window *w, size_t s, bool far)
{
	if (far)
		return (w->hit - s) % EX_REPEAT;
	return (w->hit - w->line_start + 7 * (s - w->line_start)) % EX_REPEAT;
}

/*
 * Whether the hit of w, its texts starting at s, is one that gave no event
 * d bytes before it, moved on: then it gives none either, and is not read
 * again.  ex_extract's answer depends only on the window's bytes that its
 * joins and the hit line's prefix read, on where they are (the hit, the
 * line's start, s, and whether the first line fills a text: the window's
 * length), on whether the fallback may compete (ex_after_event, asked for
 * each hit) and on the table's strikes (the recognisers keep no other
 * state between rounds, ex_arbitrate_memo); its caches change only what it
 * costs.  So a hit whose place is the earlier one's moved on by d, as its
 * line's start (or the same line, which its texts start more than
 * LN_BEFORE_MAX bytes into: only the line's prefix is read there, and it
 * is the same), with the same other inputs, and whose bytes from where the
 * earlier one read to where it stopped are the bytes d further on, all of
 * them inside the window, has the earlier one's answer.  A line of a
 * thousand anchors, or a million lines of one, is so read once per
 * distinct place, with a compare of the bytes that repeat.
 */
static bool
ex_repeated(ex_ctx *x, const ex_window *w, size_t s, bool fallback_ok,
    uint64_t strikes)
{
	bool far = w->line_start_known && s - w->line_start > LN_BEFORE_MAX;
	size_t d, lo, hi;
	ex_repeat *e;

	if (w->gen == 0)
		return false;
	e = &x->rp[ex_repeat_slot(w, s, far)];
	if (e->buf != w->buf || e->gen != w->gen || e->len != w->len ||
	    e->wrap_width != w->wrap_width || e->known != w->line_start_known ||
	    e->far != far || e->fallback_ok != fallback_ok ||
	    e->strikes != strikes || e->hit >= w->hit ||
	    e->hit - e->s != w->hit - s ||
	    (w->len - e->s > EX_TEXT_MAX) != (w->len - s > EX_TEXT_MAX))
		return false;
	d = w->hit - e->hit;
	if (far && w->line_start == e->line_start) {
		lo = e->s;
		hi = e->end;
	} else if (w->line_start - e->line_start == d) {
		lo = w->line_start_known ? e->line_start : e->s;
		hi = w->line_start_known && e->px_end > e->end ? e->px_end :
		    e->end;
	} else {
		return false;
	}
	if (hi + d > w->len || !ex_repeat_bytes(x, w->buf, w->gen, lo, hi, d))
		return false;
	/* This hit, moved on, for the next one (in the same slot). */
	if (w->line_start_known && w->line_start != e->line_start)
		e->px_end += d;
	e->end += d;
	e->hit = w->hit;
	e->line_start = w->line_start;
	e->s = s;
	return true;
}

/* Keeps a hit that gave no event for ex_repeated: its joins read the
 * window's bytes up to end. */
static void
ex_repeat_note(ex_ctx *x, const ex_window *w, size_t s, bool fallback_ok,
    uint64_t strikes, size_t end)
{
	bool far = w->line_start_known && s - w->line_start > LN_BEFORE_MAX;

	if (w->gen == 0)
		return;
	x->rp[ex_repeat_slot(w, s, far)] = (ex_repeat){ .buf = w->buf,
	    .gen = w->gen, .strikes = strikes, .len = w->len,
	    .wrap_width = w->wrap_width, .hit = w->hit,
	    .line_start = w->line_start, .s = s, .end = end,
	    .px_end = w->line_start_known ? x->px_end : 0,
	    .known = w->line_start_known, .fallback_ok = fallback_ok,
	    .far = far };
}

/*
 * Whether nothing but blank space follows joined text j in window w.
 * The scanner keeps more lookahead after a hit than a join reads
 * (SC_LOOKAHEAD), so that only the input's end leaves none; a text cut
 * inside a line, or before an escape sequence, has bytes after it.  More
 * than EX_AT_END_BLANK bytes after the text are not read: false, as if
 * the input went on (mid-input the lookahead is longer, and a long blank
 * tail would be read again by each join).
 */
#define EX_AT_END_BLANK 4096
static bool
ex_at_end(const ln_text *j, const ex_window *w)
{
	size_t b;
	uint64_t nl;

	if (j->nseg <= 0)
		return false;
	ln_map(j, j->len, &b, &nl);
	if (w->len > b && w->len - b > EX_AT_END_BLANK)
		return false;
	for (; b < w->len; b++)
		if (w->buf[b] != '\n' && w->buf[b] != '\r' &&
		    w->buf[b] != ' ' && w->buf[b] != '\t')
			return false;
	return true;
}

bool
ex_extract(ex_ctx *x, const ex_window *w, od_event *ev, ex_span *span)
{
	size_t content, s, ht, ms = 0, me = 0, b, n, end = 0;
	uint64_t nl, strikes;
	const char *t;
	int rank = -1, pass;
	bool ok = false, fallback_ok, fresh = false;
	/* The prefix's labels and timestamp, all OD_TIMESTAMP_MAX bytes of
	 * it (the rounds remembered compare it whole): the ones parsed for
	 * the hit's line, read in place (a hit copied 300 bytes here), or
	 * none. */
	static const od_labels no_labels;
	static const char no_ts[OD_TIMESTAMP_MAX];
	const od_labels *labels = &no_labels;
	const char *ts = no_ts;

	fallback_ok = !w->line_start_known || !ex_after_event(x, w);
	content = w->line_start;
	if (w->line_start_known) {
		/* The hit line's prefix, parsed once for all its hits (the
		 * key's s and lines are 0: only the line counts). */
		if (!ex_same_join(&x->px_key, w, 0, 0)) {
			size_t eol = ln_eol(w->buf, w->line_start, w->len);

			x->px_rank = -1;
			x->px_ts[0] = '\0';
			x->px_len = px_strip(x->px, w->buf + w->line_start,
			    eol - w->line_start, &x->px_rank, x->px_ts);
			x->px_end = eol < w->len ? eol + 1 : w->len;
			x->px_labels = *px_labels(x->px);
			x->px_key = (ex_join_key){ .buf = w->buf,
			    .wrap_width = w->wrap_width,
			    .gen = w->gen, .len = w->len,
			    .line_start = w->line_start };
		}
		content += x->px_len;
		rank = x->px_rank;
		ts = x->px_ts;
		labels = &x->px_labels;
	}
	s = content;
	if (s < w->from)
		s = w->from;
	if (w->hit > EX_BACK_MAX && s < w->hit - EX_BACK_MAX)
		s = w->hit - EX_BACK_MAX;
	if (s > w->hit)
		s = w->hit;
	strikes = ex_strikes(x);
	if (ex_repeated(x, w, s, fallback_ok, strikes))
		return false;

	/*
	 * First with the hit's line and two more, which is all that most
	 * messages take; again with EX_LINES_MAX lines when the message ran
	 * to the last line joined, or its recogniser reads on after it, and
	 * there are more lines.  A log with an OOM on every line so costs
	 * three lines a hit, not thirty-two.
	 */
	for (pass = 0; pass < 2; pass++) {
		int lines = pass == 0 ? EX_LINES_QUICK : EX_LINES_MAX;
		bool follows = false;

		x->text = &x->texts[pass];
		if (!ex_same_join(&x->keys[pass], w, s, lines)) {
			ln_join(x->text, x->px, w, s, lines);
			x->keys[pass] = (ex_join_key){ .buf = w->buf,
			    .wrap_width = w->wrap_width,
			    .gen = w->gen, .len = w->len,
			    .line_start = w->line_start, .s = s, .lines = lines };
			/* A text the same as the one before keeps its number:
			 * the rounds found equal to it need no compare. */
			if (!x->text->same || x->text_gen[pass] == 0) {
				x->text_gen[pass] = ++x->text_gens;
				x->text_hash[pass] = ex_memo_hash_text(
				    x->text->text, x->text->len);
			}
			x->at_end[pass] = ex_at_end(x->text, w);
		}
		if (x->text->end > end)
			end = x->text->end;
		/* The hit's place in the text, which has no escapes. */
		ht = ln_unmap(x->text, w->hit);
		ok = ex_arbitrate_memo(x, pass, ht, fallback_ok, ts, ev, &fresh,
		    &ms, &me, &follows);
		/* Done unless more lines could change the outcome. */
		if (x->text->nseg < lines || (ok && !follows &&
		    me < ln_line(x->text, x->text->nseg - 1).t))
			break;
		if (ok && pass == 0)
			ex_reset(ev);
	}
	/* A message that says it is no failure (TensorFlow's "The caller
	 * indicates that this is not a failure") is read, so that no other
	 * recogniser or the fallback takes its words, and gives no event. */
	if (!ok || ev->benign) {
		if (fresh)
			od_event_clear(ev);
		/* A round that stopped a pattern changed what the next one
		 * does: not kept. */
		if (ex_strikes(x) == strikes)
			ex_repeat_note(x, w, s, fallback_ok, strikes, end);
		return false;
	}
	t = x->text->text;
	if (rank >= 0 && ev->rank < 0)
		ev->rank = rank;
	/* The line's record or prefix, where the message itself (kubectl's
	 * description of a pod) named none. */
	od_labels_fill(&ev->labels, labels);
	if (ev->kind == OD_KIND_UNRECOGNISED && !ev->fatal &&
	    ex_prefix_failure(w->buf + w->line_start, content - w->line_start))
		ev->fatal = true;
	if (ex_recovered(t, x->text->len, ms, me))
		ev->fatal = false;
	if (ev->exception[0] == '\0')
		rg_exception(t, ms, ev->exception);
	/* Device errors raised through Python come from a framework. */
	if (ev->framework == NULL && ev->exception[0] != '\0' &&
	    (ev->kind == OD_KIND_CUDA_RAW || ev->kind == OD_KIND_CUBLAS ||
	    ev->kind == OD_KIND_CUDNN || ev->kind == OD_KIND_NCCL))
		ev->framework = "pytorch";
	if (ev->framework == NULL)
		ev->framework = od_kind_framework(ev->kind);

	/* The verbatim message, bounded. */
	n = me - ms;
	if (n > OD_MESSAGE_MAX) {
		n = OD_MESSAGE_MAX;
		ev->message_cut = true;
	}
	free(ev->message);
	ev->message = malloc(n + 1);
	if (ev->message != NULL) {
		memcpy(ev->message, t + ms, n);
		ev->message[n] = '\0';
		ev->message_len = n;
	} else {
		x->nomem = true;
	}
	ln_map(x->text, ms, &b, &nl);
	span->start = b;
	ln_map(x->text, me, &b, &nl);
	span->end = b > w->hit ? b : w->hit + 1;
	span->lines = nl;
	ex_remember(x, w, span->end);
	return true;
}

void
ex_forget(ex_ctx *x)
{
	int r;

	for (r = 0; r < EX_MEMO; r++) {
		free(x->memo[r].text);
		free(x->memo[r].ev);
		x->memo[r] = (ex_memo){ .used = false };
	}
	x->memo_bytes = 0;
}

bool
ex_nomem(ex_ctx *x)
{
	bool nomem = x->nomem;

	x->nomem = false;
	return nomem;
}

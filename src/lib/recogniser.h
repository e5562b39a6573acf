/*
 * recogniser.h: the interface every recogniser of out-of-memory messages
 * implements, and what the recognisers share.
 *
 * The extractor (extract.c) joins the lines around a prefilter hit into
 * one text and asks each recogniser, through this interface, for the
 * earliest message of its own that covers the hit (find); the earliest of
 * all wins, the first recogniser in the extractor's list a tie; the winner
 * reads the message into the event (fill).  Two implementations:
 *
 *   pt_recogniser   PyTorch's caching allocator, a clause grammar in C
 *                   (recog_pytorch.c);
 *   sk_recogniser   every other stack, a table of patterns whose named
 *                   groups say which field they fill, loaded from YAML
 *                   (recog_table.h, rules/recognisers.yaml) and compiled
 *                   by recog_stacks.c;
 *   sc_recogniser   the scheduler's own outputs: sacct tables, seff, a
 *                   pod as kubectl prints it (recog_scheduler.c);
 *   fb_recogniser   the fallback: a strong out-of-memory phrase that no
 *                   other recogniser reads, an `unrecognised` event of low
 *                   confidence with no figures (recog_fallback.c), tried
 *                   only when no other recogniser has a candidate.
 *
 * A recogniser names its candidates (the starters of a grammar, the rows
 * of a table) by small integers below RG_CANDIDATES_MAX, so that the
 * extractor can leave out the ones that failed in a mask.
 *
 * Where the line between grammar and table is.  A message belongs in the
 * table, as data, when one pattern reads it: a fixed wording with figures
 * in fixed places, whatever the number of its optional parts.  PyTorch's
 * caching-allocator message stays a grammar in C (recog_pytorch.c): it is
 * a sequence of clauses whose set and order changed release by release
 * (the layouts of core.h), whose figures relate to each other (reserved
 * in total, of which free, this process has), with a per-process list of
 * any length, hints that bound the release, and a head that may stand
 * alone; a pattern for all of that would be unreadable, and the layout it
 * proves could not be told from its groups.  Everything else is a
 * recogniser of the table, which a user extends without recompiling.
 */
#ifndef OD_RECOGNISER_H
#define OD_RECOGNISER_H

#include "core.h"
#include "regex.h"

/* A fixed string for the prefilter: every message that a recogniser
 * finds contains one of its anchors. */
typedef struct {
	const char *text;
	bool caseless;
} ex_anchor;

/* How many candidates a skip mask can name. */
#define RG_CANDIDATES_MAX 256

/* The candidates left out of a search, a bit each. */
typedef struct {
	uint64_t w[RG_CANDIDATES_MAX / 64];
} rg_skip;

/* Whether candidate c is in the mask s (NULL: none is). */
static inline bool
rg_skipped(const rg_skip *s, int c)
{
	return s != NULL && c >= 0 && c < RG_CANDIDATES_MAX &&
	    (s->w[c / 64] >> (c % 64) & 1) != 0;
}

struct sk_table;
struct rg_text;

/* A message covers the hit at text offset ht when it ends at or after ht
 * and starts at most RG_BACK bytes before it and RG_AHEAD after it. */
#define RG_BACK 200
#define RG_AHEAD 8

typedef struct {
	/* Compiles the recogniser's patterns (to machine code when jit).
	 * table: the loaded recognisers (recog_table.h), which only
	 * sk_recogniser reads, NULL for none; it is borrowed and must
	 * outlive what create returns and every event filled by it. */
	void *(*create)(bool jit, const struct sk_table *table, od_error *err);
	void (*destroy)(void *self);
	/* Its prefilter anchors: *n of them, owned by self. */
	const ex_anchor *(*anchors)(const void *self, size_t *n);
	/*
	 * The earliest of its messages in t[0..tlen) that covers the hit at
	 * ht, among the candidates not in the mask skip (NULL: none left
	 * out): returns the candidate with *ms set to the message's start,
	 * or -1.
	 */
	int (*find)(void *self, const char *t, size_t tlen, size_t ht,
	    const rg_skip *skip, size_t *ms);
	/*
	 * Reads the message of candidate c that starts at ms into ev (from
	 * an event fresh from od_event_clear, but for its timestamp), with
	 * *me set to the end of what it took.  False when what starts there
	 * is no message of this recogniser after all (a condition not met).
	 */
	bool (*fill)(void *self, int c, const char *t, size_t tlen, size_t ms,
	    size_t *me, od_event *ev);
	/* Whether candidate c reads on into the lines after its match, so
	 * that more lines joined could change what it fills. */
	bool (*follows)(const void *self, int c);
	/* When fill fails: true, find is asked again without that candidate;
	 * false, the recogniser finds nothing more in this text. */
	bool retry;
	/*
	 * May be NULL.  Adds to *none the candidates that find cannot return
	 * for any hit in t[0..tlen) (a pattern that matches nowhere in it, a
	 * string the candidate needs that it lacks), and returns true when
	 * that is every one: find then returns -1 whatever the hit.  Leaving
	 * them out of find (its skip) changes nothing but the time it takes:
	 * not its answer, nor the state it keeps (a pattern found to match
	 * nowhere, without striking a limit, strikes none at any hit).
	 */
	bool (*absent)(void *self, const char *t, size_t tlen, rg_skip *none);
	/*
	 * May be NULL.  Numbers the text of the finds that follow: slot (0
	 * to RG_TEXTS - 1) names one of the texts the extractor keeps, tx
	 * its number (rg_text).  The finds of one numbered text may then
	 * take what earlier finds in it found (rg_cover_memo).
	 */
	void (*text)(void *self, int slot, const struct rg_text *tx);
} ex_recogniser;

extern const ex_recogniser pt_recogniser;
extern const ex_recogniser sk_recogniser;
extern const ex_recogniser fb_recogniser;
extern const ex_recogniser sc_recogniser;

/*
 * Reads where a Kubernetes kill happened from the text before the event,
 * buf[0..len) (the scanner's history): the pod, its namespace, the
 * container and, for a pod object, its memory limit and exit code
 * (recog_scheduler.c).  Does nothing for other kinds.
 */
void sc_before(const char *buf, size_t len, od_event *ev);

/*
 * Searches t[0..tlen) for the earliest match of re (compiled with
 * RX_OFFSET_LIMIT) that covers the hit at ht (see RG_BACK), passing over
 * matches for which reject (may be NULL) is true of the text, its length
 * and the match's start (its tx is NULL here: no numbered text; see
 * rg_cover_memo).  Sets *start and returns true when there is one; the
 * match stays in m.
 */
bool rg_cover(rx_match *m, rx_code *re, const char *t, size_t tlen,
    size_t ht, bool (*reject)(const struct rg_text *tx, const char *t, size_t tlen,
    size_t start), size_t *start);

/* The texts an extractor keeps numbered at once (ex_recogniser.text). */
#define RG_TEXTS 2

/* Start positions that a search in a numbered text looks at past the
 * last one a hit asks for, to answer the next hits close after it. */
#define RG_LOOK_ON 32

/*
 * What the searches of one pattern in one numbered text found: no match
 * starts in [a, l); when hit, the leftmost match from any place in [a, l]
 * starts at l and ends at e.  gen 0: nothing known.
 */
typedef struct {
	uint64_t gen;
	size_t tlen, a, l, e;
	bool hit;
} rg_memo;

/*
 * A text of the extractor's, numbered: gen stays the same while its bytes
 * do (0: not known, nothing is remembered).  base: the number of a text
 * of base_len bytes that this one begins with (the three lines of the
 * first pass, which the second pass's lines go on from; 0: none).
 * longer: the finds may keep what also holds in any longer text that
 * begins with this one (rg_cover_memo's pre).  at_end: nothing but
 * blank space follows the text in the input, which has ended (its last
 * line is the input's last).
 */
typedef struct rg_text {
	uint64_t gen, base;
	size_t base_len;
	bool longer, at_end;
} rg_text;

/*
 * What one pattern's searches found in the first bytes of earlier texts,
 * whatever their number: a search of a text's first len bytes from from
 * with the offset limit last (rx_find_upto_whole) that no attempt made to
 * reach their end has the same answer in every text that begins with
 * those bytes, since no attempt looked further.  Many reports alike (each
 * a line of its own, all with the same words up to their figures) so
 * cost the searches only while their first bytes differ.  A search is
 * kept for len = last + 1 + RG_PREFIX_MORE bytes, at most RG_PREFIX_MAX,
 * in one of RG_PREFIX_WAYS slots, the older replaced.  After
 * RG_PREFIX_MISSES lookups in a row that found nothing (texts whose first
 * bytes all differ), one in RG_PREFIX_SPARSE is tried, so that such a log
 * pays little for it; the answers are the same either way.
 */
#define RG_PREFIX_MORE 16
#define RG_PREFIX_MAX 128
#define RG_PREFIX_WAYS 2
#define RG_PREFIX_MISSES 64
#define RG_PREFIX_SPARSE 16
typedef struct {
	struct {
		uint64_t hash;  /* of the bytes, from and last */
		size_t len, from, last, ms, me;
		int r;          /* 0: none, 1: a match at [ms, me); -1: unused */
		char bytes[RG_PREFIX_MAX];
	} e[RG_PREFIX_WAYS];
	unsigned turn;
	unsigned misses;        /* lookups in a row that found nothing */
} rg_prefix;

/* Makes p empty. */
void rg_prefix_init(rg_prefix *p);

/*
 * rg_cover in the numbered text tx (gen 0: none, every search is made),
 * taking what earlier searches of re in the same text found from c and
 * keeping what this one finds there.  pre (may be NULL) is what holds in
 * every longer text that begins with one: with tx->longer, searches that
 * can (rx_find_upto_whole) add to it; with tx->base, c starts from it when
 * it was kept for that text.  So the second pass's text, the first's and
 * more lines, needs no search where the first pass's searches did not
 * look at the first's end.  A search looks RG_LOOK_ON start positions
 * further than asked; the match at a position is the same whatever the
 * search's first position (a lookbehind sees the bytes before it), so a
 * later hit in that stretch needs no search of its own.  One that stops
 * at a PCRE2 limit is made again exactly as asked, and *limited is set
 * when that one stopped too (the caller's strike, as rx_limited after
 * rg_cover), so that nothing but the time taken differs from rg_cover.
 * px (may be NULL) is the pattern's rg_prefix: the searches that pre
 * would keep take their answer from it where they can, and keep theirs
 * there.  Unlike rg_cover's, m's match is not kept: only *start is set.
 * reject is asked with tx at every match, never remembered, so that it
 * may read what tx says of the text (at_end) as well as its bytes.
 */
bool rg_cover_memo(rx_match *m, rx_code *re, const rg_text *tx, rg_memo *c,
    rg_memo *pre, rg_prefix *px, const char *t, size_t tlen, size_t ht,
    bool (*reject)(const rg_text *tx, const char *t, size_t tlen,
    size_t start), size_t *start,
    bool *limited);

/*
 * Looks back from a message's start for the exception type that raised
 * it ("torch.OutOfMemoryError: ", "RuntimeError:", "OutOfMemoryError('")
 * and copies it into out (OD_EXCEPTION_MAX bytes), or "" when none.
 */
void rg_exception(const char *t, size_t start, char *out);

/*
 * Whether p[0..n) has a placeholder where a message has a size: "XXXX
 * bytes", "xxx GiB", "N bytes", "%d bytes", "{:,} bytes", "<size> MiB", an elided "... bytes".  A
 * message with one is a template that a document, a pull request or a
 * troubleshooting guide shows, not a failure.
 */
bool rg_placeholder(const char *p, size_t n);

/*
 * Whether the line l[0..n) says that something failed: a failure word
 * (error, failed, killed, cannot, ...) or glog's E or F severity; the
 * fallback's events are fatal on such a line (recog_fallback.c).
 */
bool rg_failure_line(const char *l, size_t n);

/*
 * Whether the phrase at l[p..q) of the line l[0..n) is only talked about:
 * advice or a condition before it, a recovery after it, source code, a
 * search, a usage text, a setting, a heading, a template, a question, a
 * narration ("it runs out of memory") or a glossary ("OOM (Out Of
 * Memory)", "exit code 137 means") (recog_fallback.c lists the cases).
 */
bool rg_mention(const char *l, size_t n, size_t p, size_t q);

#endif

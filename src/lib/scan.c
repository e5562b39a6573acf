/*
 * scan.c: streaming an input through a fixed buffer, finding candidate
 * places with a multi-literal prefilter, and handing them to the extractor.
 *
 * The buffer holds three parts:
 *
 *     [ history | region to scan | lookahead ]
 *
 * The input comes in chunks (od_scan_feed; od_scan_path reads its file
 * into the buffer the same way), each appended to the buffer.  After each
 * chunk, everything that has its lookahead is scanned for the anchor
 * strings with Vectorscan (Hyperscan's portable fork), which looks at each
 * byte once; most of a log never gets further than that.  For each hit the
 * extractor may look back into the history (up to SC_HISTORY bytes: the
 * line's start and its prefix) and forward into the lookahead (at least
 * SC_LOOKAHEAD bytes after the hit's start: the message's continuation
 * lines).  The history reaches further back, up to SC_TRACEBACK bytes,
 * only while a "Traceback (most recent call last)" line is that close
 * (the scanner's own anchor): the traceback of the next event, which
 * cx_before reads, may be that long.  When the buffer is full, the history
 * and the unscanned tail are moved to the front to make room.  At the end
 * of the input there is no lookahead left to keep and the tail is scanned
 * too.  Memory is the buffer (and a copy of what cx_before reads, without
 * its escape sequences, for a coloured log; and a copy of each skipped
 * context line that a move gave up, at most 1 KiB a kind: sc_context_keep)
 * and nothing else, whatever the input size or its line lengths: a line
 * longer than the buffer is simply scanned in pieces.
 *
 * A piece of the region is taken up to the last anchor start that has its
 * lookahead, and hits are handed over in the order of their starts: a hit
 * that starts in one piece and ends in the next is handed over with the
 * first, so where the chunks end does not change what is found.  Once the
 * text after an event can no longer change it (od_events_open), the event
 * is delivered to the caller's function.
 *
 * Where the input's reads end changes nothing (tests/chunking.sh): a
 * piece ends at a line's end when one is near (sc_line_cut), a hard-wrap
 * seam reads the same bytes after its line break and hands its hits over
 * with the piece they start in (sc_seams), the history kept when the
 * buffer is moved is what the next hit may read whatever the moment, and
 * a short pause decides only what the bytes to come cannot change
 * (od_scan_pause).  Nor does where the buffer was full
 * (tests/scan_split.sh): what is kept of an earlier place across a move
 * is an input offset, or a copy of the bytes.
 *
 * Line numbers count '\n' only, as grep -n does; they are counted lazily,
 * up to each hit and at the end of each piece.
 */
#define _GNU_SOURCE             /* memrchr */

#include <ctype.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SC_AVX2 1
#endif

#include <hs/hs.h>

#include "context.h"
#include "decide.h"
#include "extract.h"
#include "hash.h"
#include "input.h"
#include "lines.h"
#include "recogniser.h"
#include "scan_cache.h"
#include "structured.h"
#include "core.h"

/* The buffer's size, and the bounds of the size the tests may set
 * (OOMDOC_SCAN_BUFFER, sc_buf_size).  1 MiB: 0.8 MiB less peak RSS than
 * 2 MiB for 100 000 PyTorch reports, for 0.9 % more instructions on an
 * ordinary 20 MB log (bench/RESULTS.md, speed8). */
#define SC_BUF_SIZE (1u * 1024 * 1024)
#define SC_BUF_MIN (512u * 1024)
#define SC_BUF_MAX (64u * 1024 * 1024)
#define SC_HISTORY (32u * 1024)
/* How far back the last traceback's header may be for an event to get
 * its frames; what cx_before reads is at most this long. */
#define SC_TRACEBACK (256u * 1024)
/* The scanner's own anchor: the header of a Python traceback. */
static const char sc_traceback[] = "Traceback (most recent call last)";
#define SC_LOOKAHEAD (EX_TEXT_MAX + 16u * 1024)
#define SC_HITS_MAX 1024
/* The prefilter's hits of one scan call stop at SC_HITS_SCAN, leaving
 * room for the hits of the hard-wrap seams of the same piece (sc_seams),
 * which stops before a seam when fewer than SC_SEAM_ROOM places are left. */
#define SC_HITS_SCAN (SC_HITS_MAX - 64)
#define SC_SEAM_ROOM 32

/* The ranges of the prefilter's second thread whose line breaks it
 * counted that the scanner keeps at a time (sc_count_to). */
#define SC_PF_LINES 64

/* A context line is read at most this far either side of its anchor
 * (sc_context), so at most twice this long. */
#define SC_CTX_REACH 512u
#define SC_CTX_LINE (2 * SC_CTX_REACH)

/* The prefilter's anchors, at most: the extractor's and the context's
 * (the shipped recognisers alone have come near 256, leaving a user's
 * --rules file no room). */
#define SC_ANCHORS_MAX 512

struct od_scanner {
	struct sc_state *st;            /* the input being scanned */
	od_event_fn *fn;                /* where complete events go */
	void *fn_arg;
	struct sc_db *dbe;              /* the prefilter's database, shared */
	const hs_database_t *db;        /* dbe's */
	hs_scratch_t *scratch;
	ex_ctx *ex;
	cx_ctx *cx;
	char *buf;
	size_t buf_size;                /* buf's, SC_BUF_SIZE but in tests */
	/*
	 * The prefilter's anchors, by id: first the extractor's OOM anchors
	 * (noom of them, also in oom_anchors, NULL-terminated), then the
	 * context anchors (cx_anchors, id - noom).
	 */
	int noom;
	const char *oom_anchors[SC_ANCHORS_MAX + 1];
	size_t anchor_len[SC_ANCHORS_MAX];
	int tb_id;                      /* the traceback anchor's id */
	size_t overlap;                 /* longest anchor - 1 */
	/* Each pair of successive bytes of an OOM anchor, in either case
	 * when it is caseless: a bit per pair (first byte * 256 + second).
	 * Only an anchor with the bytes either side of a seam's line break
	 * as such a pair can be across it (sc_seams). */
	uint8_t seam_pairs[65536 / 8];
	/* What cx_before reads, escape sequences left out, when the log
	 * has them (SC_TRACEBACK bytes). */
	char *clean;
	/* Hits of the current scan call: where, and which anchor. */
	size_t hits[SC_HITS_MAX];
	int hit_ids[SC_HITS_MAX];
	int nhits;
	size_t hit_cut;                 /* ignore hits starting at or after */
	size_t hits_base;               /* offset of the scanned piece */
	size_t last_end;                /* largest hit end of the call */
	/* A seam being scanned (sc_seams): the bytes of its buffer before
	 * the line break, and the break's offset in the piece. */
	size_t seam_before, seam_nl;
	/* Where the hits of a seam may start: the piece's (sc_seams). */
	size_t seam_lo, seam_hi;
	/*
	 * The wrap widths sc_seams confirmed in the region it last scanned,
	 * each with the input offset of the line that confirmed it, and the
	 * width before the first: a hit uses the width as of its own place
	 * (sc_wrap_width_at), so that what the lines after it in the same
	 * region say cannot change it, and where the chunks of the input end
	 * does not change what is found.  A change needs two lines of at
	 * least 60 bytes, so a region has at most wraps_max of them (the
	 * buffer's size / 120 + 1).
	 */
	struct { uint64_t at; size_t width; } *wraps;
	size_t nwraps, wrap_before, wraps_max;
	int zstd_window_log;            /* for od_scan_path's inputs */
	/* The structured-line reader in front of the buffer (structured.c). */
	sl_reader *sl;
	uint64_t gen;           /* the last generation given (ex_window) */
	/* The prefilter's second thread (sc_pf_start; NULL: none yet, or
	 * none to be had), whether it was tried, the ranges' size (0: no
	 * thread), the list sc_prefilter reads from (NULL: none) and the
	 * number of ranges handed to the thread so far. */
	struct sc_pf *pf;
	bool pf_tried;
	size_t pf_range;
	bool pf_fixed;          /* pf_range set for the tests */
	const struct sc_pf_slot *pf_cur;
	uint64_t pf_seq;
	/* The ranges whose line breaks the thread counted, in the order of
	 * their offsets, in generation pf_lines_gen of the buffer; the next
	 * one sc_count_to may take. */
	struct sc_pf_lines { size_t from, cut; uint64_t nl; }
	    pf_lines[SC_PF_LINES];
	size_t pf_nlines, pf_line_i;
	uint64_t pf_lines_gen;
};

/* The state of one input's scan. */
typedef struct sc_state {
	od_scanner *sc;
	const char *buf;
	size_t len;             /* bytes in buf */
	size_t scanned;         /* every hit starting before this is handled */
	uint64_t bytes;         /* bytes of the input so far */
	char last;              /* its last byte, '\n' before the first */
	uint64_t base;          /* absolute offset of buf[0] */
	size_t counted;         /* '\n' counted up to here */
	uint64_t lines;         /* '\n' in the input before buf[counted] */
	size_t consumed;        /* nothing before this may start a message */
	int index;
	od_events *set;
	od_logctx ctx;          /* the settings seen so far */
	/* The room of ctx's series of readings (ctx.readings points here;
	 * each event copies what it holds, cx_attach). */
	od_reading series[OD_READINGS_MAX];
	/* Per kind of setting, absolute offsets: the end of the last line
	 * read (a second anchor on it is skipped) and where it was. */
	uint64_t ctx_done[CX_WHAT_MAX];
	uint64_t ctx_read[CX_WHAT_MAX];
	bool ctx_any[CX_WHAT_MAX];
	/* The last line of a sampled kind that was skipped, read when an
	 * event comes so that the event sees the latest value. */
	uint64_t ctx_skipped[CX_WHAT_MAX];
	int ctx_skipped_id[CX_WHAT_MAX];        /* anchor id + 1, 0: none */
	/* A skipped line whose bytes the buffer's move gave up (sc_room):
	 * kept here, with its text line number, for sc_context_catch_up, so
	 * that what an event reads does not depend on where the buffer was
	 * full.  at is its anchor's input offset (ctx_skipped's value then),
	 * end its end's; copied says whether there is one. */
	struct {
		char text[SC_CTX_LINE];
		size_t len;
		uint64_t at, end, line;
		bool copied;
	} skip_copy[CX_WHAT_MAX];
	/* Absolute offset up to which the lines after an nvidia-smi dmon
	 * header were handed to cx_dmon_row. */
	uint64_t dmon_at;
	uint64_t tb_at;         /* absolute offset of the last traceback */
	bool tb_any;            /* whether one was seen */
	size_t delivered;       /* the first event not handed over yet */
	uint64_t gen;           /* the buffer's generation (ex_window) */
	/* The last hit's sc_line_start: its generation, lo, offset, and the
	 * line start it found at a terminator (0: none after its stop). */
	uint64_t ls_gen;
	size_t ls_lo, ls_p, ls_term;
	/* The input's own wrap width (sc_seams): the length of the last line
	 * that looked cut inside a word, and the width confirmed by two such
	 * lines of one length (0: none). */
	size_t wrap_len, wrap_width;
	/* While od_scan_flush scans: the start of the last complete line
	 * (0: not flushing), and the first hit whose message reached it,
	 * which waits for the next line (SIZE_MAX: none). */
	size_t defer_lim, deferred;
	dc_memo mention_memo;   /* dc_mention's last look back */
} sc_state;

static size_t sc_pf_range(bool *fixed);
static void sc_pf_stop(od_scanner *sc);

const char *const *
od_anchors(const od_scanner *sc)
{
	return sc->oom_anchors;
}

int
od_scanner_stopped(const od_scanner *sc, int from)
{
	return ex_stopped(sc->ex, from);
}

/* Sets the bit of the pair (a, b) in seam_pairs, and those of its other
 * cases when caseless (ASCII letters, as Vectorscan's caseless mode). */
static void
sc_seam_pair(od_scanner *sc, unsigned char a, unsigned char b, bool caseless)
{
	unsigned char as[2] = { a, a }, bs[2] = { b, b };
	int i, j;

	if (caseless) {
		as[0] = (unsigned char)tolower(a);
		as[1] = (unsigned char)toupper(a);
		bs[0] = (unsigned char)tolower(b);
		bs[1] = (unsigned char)toupper(b);
	}
	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++) {
			unsigned k = (unsigned)as[i] * 256u + bs[j];

			sc->seam_pairs[k / 8] |= (uint8_t)(1u << (k % 8));
		}
}

/* The pairs of successive bytes of the OOM anchors (seam_pairs). */
static void
sc_seam_pairs(od_scanner *sc, const ex_anchor *oom, size_t noom)
{
	size_t i, k;

	for (i = 0; i < noom; i++) {
		const unsigned char *t = (const unsigned char *)oom[i].text;

		for (k = 1; t[k - 1] != '\0' && t[k] != '\0'; k++)
			sc_seam_pair(sc, t[k - 1], t[k], oom[i].caseless);
	}
}

/* Whether an OOM anchor holds the pair (a, b) (seam_pairs). */
static bool
sc_seam_pair_in(const od_scanner *sc, unsigned char a, unsigned char b)
{
	unsigned k = (unsigned)a * 256u + b;

	return (sc->seam_pairs[k / 8] >> (k % 8)) & 1u;
}

/*
 * The prefilter's databases, kept after their scanners are gone.  A
 * database depends on its list of anchors alone (their texts and
 * caselessness, in the order of their ids), and compiling one
 * (hs_compile_lit_multi) takes longer than scanning a log of a few
 * megabytes: a fuzz target that builds a scanner for every input spent
 * most of its time there.  So a scanner whose list is that of a database
 * compiled before takes that database instead: every scanner of a
 * process that loads the same recognisers (a library caller's handles,
 * one per log; a fuzz input that changes a recogniser's pattern but not
 * its anchors).  A database is read only once compiled, and scanners in
 * other threads may scan it at once, each with its own scratch
 * (https://intel.github.io/hyperscan/dev-reference/runtime.html, "Scratch
 * Space").  The cache keeps the SC_DB_CACHE databases taken last (a few
 * hundred KB each); one is freed when neither the cache nor a scanner
 * holds it.  The command builds one scanner, so it takes its database
 * once: from the disk cache that earlier runs left (scan_cache.h), or
 * compiled, and then written there.
 */
#define SC_DB_CACHE 4

typedef struct sc_db {
	hs_database_t *db;
	char *list;             /* the anchors' list (sc_db_list), owned */
	size_t list_len;
	uint64_t hash;          /* od_hash_bytes of list */
	int refs;               /* the cache's and the scanners' */
	uint64_t taken;         /* when last taken (sc_db_clock) */
} sc_db;

static pthread_mutex_t sc_db_mu = PTHREAD_MUTEX_INITIALIZER;
static sc_db *sc_db_cache[SC_DB_CACHE];
static uint64_t sc_db_clock;

/*
 * The list that keys a database: for each anchor in id order, a byte
 * for its caselessness and its text with its NUL.  NULL when memory ran
 * out.
 */
static char *
sc_db_list(const char *const *text, const unsigned *flags, const size_t *len,
    int n, size_t *list_len)
{
	size_t total = 0, at = 0;
	char *list;
	int i;

	for (i = 0; i < n; i++)
		total += len[i] + 2;
	if ((list = malloc(total > 0 ? total : 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		list[at++] = (flags[i] & HS_FLAG_CASELESS) != 0 ? 'i' : 's';
		memcpy(list + at, text[i], len[i] + 1);
		at += len[i] + 1;
	}
	*list_len = total;
	return list;
}

/* Gives back a scanner's hold (or the cache's) on e. */
static void
sc_db_drop(sc_db *e)
{
	bool last;

	if (e == NULL)
		return;
	pthread_mutex_lock(&sc_db_mu);
	last = --e->refs == 0;
	pthread_mutex_unlock(&sc_db_mu);
	if (last) {
		hs_free_database(e->db);
		free(e->list);
		free(e);
	}
}

/* The cached database of list[0..len) with a hold on it, or NULL. */
static sc_db *
sc_db_find(const char *list, size_t len, uint64_t hash)
{
	sc_db *found = NULL;
	int i;

	pthread_mutex_lock(&sc_db_mu);
	for (i = 0; i < SC_DB_CACHE && found == NULL; i++) {
		sc_db *e = sc_db_cache[i];

		if (e != NULL && e->hash == hash && e->list_len == len &&
		    memcmp(e->list, list, len) == 0) {
			e->refs++;
			e->taken = ++sc_db_clock;
			found = e;
		}
	}
	pthread_mutex_unlock(&sc_db_mu);
	return found;
}

/* Puts e into the cache in place of the database taken least recently
 * (or an empty place). */
static void
sc_db_keep(sc_db *e)
{
	sc_db *old;
	int i, slot = 0;

	pthread_mutex_lock(&sc_db_mu);
	for (i = 0; i < SC_DB_CACHE; i++) {
		if (sc_db_cache[i] == NULL) {
			slot = i;
			break;
		}
		if (sc_db_cache[i]->taken < sc_db_cache[slot]->taken)
			slot = i;
	}
	old = sc_db_cache[slot];
	e->refs++;
	e->taken = ++sc_db_clock;
	sc_db_cache[slot] = e;
	pthread_mutex_unlock(&sc_db_mu);
	sc_db_drop(old);
}

/*
 * The database of the n anchors (ids 0 to n - 1), from the cache or
 * compiled (and then cached), with a hold on it for the caller
 * (sc_db_drop); NULL with err filled in when it cannot be had.
 */
static sc_db *
sc_db_take(const char *const *text, const unsigned *flags,
    const unsigned *ids, const size_t *len, int n, od_error *err)
{
	hs_compile_error_t *ce = NULL;
	size_t list_len = 0;
	char *list = sc_db_list(text, flags, len, n, &list_len);
	uint64_t hash;
	sc_db *e;

	if (list == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	hash = od_hash_bytes(OD_HASH_SEED, list, list_len);
	if ((e = sc_db_find(list, list_len, hash)) != NULL) {
		free(list);
		return e;
	}
	if ((e = calloc(1, sizeof *e)) == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		free(list);
		return NULL;
	}
	/* From the disk cache of earlier runs (scan_cache.h), else compiled
	 * (and then kept there: the call is the one SCC_FORMAT names). */
	if ((e->db = scc_load(list, list_len)) == NULL) {
		if (hs_compile_lit_multi(text, flags, ids, len, (unsigned)n,
		    HS_MODE_BLOCK, NULL, &e->db, &ce) != HS_SUCCESS) {
			od_error_set(err, NULL, 0, 0, "cannot compile the "
			    "prefilter: %s", ce != NULL ? ce->message :
			    "unknown error");
			hs_free_compile_error(ce);
			free(list);
			free(e);
			return NULL;
		}
		scc_store(list, list_len, e->db);
	}
	e->list = list;
	e->list_len = list_len;
	e->hash = hash;
	e->refs = 1;
	sc_db_keep(e);
	return e;
}

/*
 * The scan buffer's size: SC_BUF_SIZE, or for the tests what
 * OOMDOC_SCAN_BUFFER says (bytes, SC_BUF_MIN to SC_BUF_MAX), so that they
 * can check that where the buffer is full changes no report
 * (tests/scan_split.sh, tests/chunking.sh, tests/dense.sh).
 */
static size_t
sc_buf_size(void)
{
	return od_env_size("OOMDOC_SCAN_BUFFER", SC_BUF_MIN, SC_BUF_MAX,
	    SC_BUF_SIZE);
}

od_scanner *
od_scanner_new(bool jit, const struct sk_table *recognisers, od_error *err)
{
	od_scanner *sc = calloc(1, sizeof *sc);
	const char *text[SC_ANCHORS_MAX];
	unsigned flags[SC_ANCHORS_MAX], ids[SC_ANCHORS_MAX];
	const ex_anchor *oom;
	const cx_anchor *c;
	size_t noom, i;
	int n = 0;

	if (sc != NULL) {
		sc->buf_size = sc_buf_size();
		sc->wraps_max = sc->buf_size / 120 + 1;
	}
	if (sc == NULL || (sc->buf = malloc(sc->buf_size)) == NULL ||
	    (sc->clean = malloc(SC_TRACEBACK)) == NULL ||
	    (sc->wraps = malloc(sc->wraps_max * sizeof *sc->wraps)) == NULL ||
	    (sc->sl = sl_new()) == NULL ||
	    (sc->st = calloc(1, sizeof *sc->st)) == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		od_scanner_free(sc);
		return NULL;
	}
	sc->zstd_window_log = IN_ZSTD_WINDOW_LOG;
	sc->pf_range = sc_pf_range(&sc->pf_fixed);
	sc->ex = ex_new(jit, recognisers, err);
	sc->cx = sc->ex != NULL ? cx_new(jit, err) : NULL;
	if (sc->ex == NULL || sc->cx == NULL) {
		od_scanner_free(sc);
		return NULL;
	}
	/* The prefilter: this extractor's anchors, then the context's. */
	oom = ex_anchors(sc->ex, &noom);
	for (i = 0; i < noom && n < SC_ANCHORS_MAX; i++, n++) {
		text[n] = oom[i].text;
		flags[n] = oom[i].caseless ? HS_FLAG_CASELESS : 0;
		sc->oom_anchors[n] = oom[i].text;
	}
	sc->noom = n;
	sc->oom_anchors[n] = NULL;
	sc_seam_pairs(sc, oom, noom);
	for (c = cx_anchors(); c->text != NULL && n < SC_ANCHORS_MAX; c++, n++) {
		text[n] = c->text;
		flags[n] = 0;
	}
	if (n < SC_ANCHORS_MAX) {
		sc->tb_id = n;
		text[n] = sc_traceback;
		flags[n++] = 0;
	}
	if (i < noom || c->text != NULL || sc->tb_id == 0) {
		od_error_set(err, NULL, 0, 0, "more than %d prefilter anchors",
		    SC_ANCHORS_MAX);
		od_scanner_free(sc);
		return NULL;
	}
	for (i = 0; i < (size_t)n; i++) {
		ids[i] = (unsigned)i;
		sc->anchor_len[i] = strlen(text[i]);
		if (sc->anchor_len[i] - 1 > sc->overlap)
			sc->overlap = sc->anchor_len[i] - 1;
	}
	if ((sc->dbe = sc_db_take(text, flags, ids, sc->anchor_len, n,
	    err)) == NULL) {
		od_scanner_free(sc);
		return NULL;
	}
	sc->db = sc->dbe->db;
	if (hs_alloc_scratch(sc->db, &sc->scratch) != HS_SUCCESS) {
		od_error_set(err, NULL, 0, 0, "cannot allocate prefilter scratch");
		od_scanner_free(sc);
		return NULL;
	}
	return sc;
}

void
od_scanner_free(od_scanner *sc)
{
	if (sc == NULL)
		return;
	sc_pf_stop(sc);
	hs_free_scratch(sc->scratch);
	sc_db_drop(sc->dbe);
	ex_free(sc->ex);
	cx_free(sc->cx);
	free(sc->buf);
	free(sc->clean);
	free(sc->wraps);
	sl_free(sc->sl);
	free(sc->st);
	free(sc);
}

#ifdef SC_AVX2
/*
 * Counts '\n' in the first *n bytes of p, 128 at a time with AVX2 (the
 * caller asks whether the machine has it), and leaves in *n how many it
 * counted.  Four compares go into one set of per-byte counters, which
 * take up to 63 blocks (252 each at most) before they are summed.
 */
__attribute__((target("avx2"))) static uint64_t
sc_count_newlines_avx2(const char *p, size_t *n)
{
	const __m256i nl = _mm256_set1_epi8('\n');
	uint64_t c = 0;
	size_t i = 0;

	while (i + 128 <= *n) {
		__m256i acc = _mm256_setzero_si256(), sum;
		size_t blocks = (*n - i) / 128, k;

		if (blocks > 63)
			blocks = 63;
		for (k = 0; k < blocks; k++, i += 128) {
			const __m256i *v = (const __m256i *)(const void *)(p + i);

			/* An equal byte is 0xff, that is -1: subtracting adds 1. */
			acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(
			    _mm256_loadu_si256(v), nl));
			acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(
			    _mm256_loadu_si256(v + 1), nl));
			acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(
			    _mm256_loadu_si256(v + 2), nl));
			acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(
			    _mm256_loadu_si256(v + 3), nl));
		}
		sum = _mm256_sad_epu8(acc, _mm256_setzero_si256());
		c += (uint64_t)_mm256_extract_epi64(sum, 0) +
		    (uint64_t)_mm256_extract_epi64(sum, 1) +
		    (uint64_t)_mm256_extract_epi64(sum, 2) +
		    (uint64_t)_mm256_extract_epi64(sum, 3);
	}
	*n = i;
	return c;
}
#endif

/*
 * Counts '\n' in p[0..n): 128 bytes at a time with AVX2 where the machine
 * has it, then sixteen at a time with SSE2 where it has that (every x86-64
 * does), eight at a time otherwise.  The SSE2 loop keeps per-byte counters
 * for up to 255 blocks, then sums them.
 */
static uint64_t
sc_count_newlines(const char *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t high = 0x8080808080808080ULL;
	uint64_t c = 0;
	size_t i = 0;

#ifdef SC_AVX2
	if (n >= 128 && __builtin_cpu_supports("avx2")) {
		i = n;
		c = sc_count_newlines_avx2(p, &i);
	}
#endif

#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n');

	while (i + 16 <= n) {
		__m128i acc = _mm_setzero_si128(), sum;
		size_t blocks = (n - i) / 16, k;

		if (blocks > 255)
			blocks = 255;
		for (k = 0; k < blocks; k++, i += 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)
			    (p + i));

			/* An equal byte is 0xff, that is -1: subtracting adds 1. */
			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
		}
		sum = _mm_sad_epu8(acc, _mm_setzero_si128());
		c += (uint64_t)_mm_cvtsi128_si64(sum) +
		    (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(sum, sum));
	}
#endif

	for (; i + 8 <= n; i += 8) {
		uint64_t w, x, t;

		memcpy(&w, p + i, 8);
		x = w ^ (ones * '\n');
		/* A byte of t has its high bit set iff that byte of x is 0;
		 * the multiplication sums those bits into the top byte, with
		 * no need for a popcount instruction. */
		t = ~(((x & ~high) + ~high) | x) & high;
		c += ((t >> 7) * ones) >> 56;
	}
	for (; i < n; i++)
		c += p[i] == '\n';
	return c;
}

/*
 * Brings the line count up to offset to (which must not go backwards).
 * A range whose '\n' the prefilter's second thread counted (pf_lines, of
 * this generation of the buffer: the count is the bytes') is taken
 * whole; the rest is counted here.
 */
static void
sc_count_to(sc_state *st, size_t to)
{
	od_scanner *sc = st->sc;

	while (to > st->counted) {
		size_t stop = to;

		if (sc->pf_lines_gen == st->gen) {
			while (sc->pf_line_i < sc->pf_nlines &&
			    sc->pf_lines[sc->pf_line_i].from < st->counted)
				sc->pf_line_i++;
			if (sc->pf_line_i < sc->pf_nlines) {
				const struct sc_pf_lines *e =
				    &sc->pf_lines[sc->pf_line_i];

				if (e->from == st->counted && e->cut <= to) {
					st->lines += e->nl;
					st->counted = e->cut;
					sc->pf_line_i++;
					continue;
				}
				if (e->from > st->counted && e->from < to)
					stop = e->from;
			}
		}
		st->lines += sc_count_newlines(st->buf + st->counted,
		    stop - st->counted);
		st->counted = stop;
	}
}

static int
sc_on_match(unsigned id, unsigned long long from, unsigned long long to,
    unsigned flags, void *ctx)
{
	od_scanner *sc = ctx;
	size_t end = sc->hits_base + (size_t)to;

	/* Literals: the start is the end less the anchor's length. */
	(void)from;
	(void)flags;
	if (end - sc->anchor_len[id] >= sc->hit_cut)
		return 0;       /* the next piece's */
	if (end > sc->last_end)
		sc->last_end = end;
	sc->hit_ids[sc->nhits] = (int)id;
	sc->hits[sc->nhits++] = end - sc->anchor_len[id];
	return sc->nhits == SC_HITS_SCAN;   /* full: stop, resume later */
}

/*
 * The prefilter's second thread.  A region of two ranges or more is
 * cut into ranges of a quarter of it, between SC_PF_RANGE_MIN and
 * SC_PF_RANGE bytes (a shorter region, as a pipe's 128 KiB chunks give,
 * is scanned by the main thread alone: there the handing over cost more
 * than it saved, measured on 256 MiB), or a little more (sc_region: a range ends at a line's
 * end);
 * the main thread takes them in
 * order, as sc_region_seq always did, while the second thread (sc_pf_main)
 * runs the anchors' scan over the next range, so that two cores share the
 * scan.  Only that byte-level search runs there: what a hit leads to (the
 * extraction, the context, the line numbers, the joins, the events) stays
 * in the main thread, in the order of the hits, exactly as before; the
 * thread also counts each range's line breaks, which sc_count_to then
 * takes whole (the lines are counted as before, by bytes).  The
 * second thread scans each range with the longest anchor's length less
 * one after it (its block, [from, to)), and records every match in it, in
 * the order Vectorscan reports them (of their ends), up to SC_PF_HITS of
 * them: when there are more, the list holds every match that ends before
 * the first one left out, and says so (complete).  The main thread's scan
 * of a stretch inside the block and within complete is then read from the
 * list (sc_prefilter): the same matches, in the same order, as its own
 * hs_scan of that stretch would report, since a literal's match depends
 * only on the bytes it covers.  Any other stretch is scanned as before.
 *
 * The buffer is not written while a region is scanned (sc_text and
 * sc_room write only between two calls of sc_advance), so both threads
 * read it without a lock; a mutex and a condition variable hand the
 * ranges over, two at a time (two slots).  When the thread or its
 * scratch cannot be had, every range is scanned by the main thread: the
 * thread only makes it faster, and the report is the same either way.
 *
 * OOMDOC_PREFILTER_RANGE: the range's size in bytes (a region of twice
 * that or more is shared), "auto" for sc_region's choice, 0 or unset for
 * no second thread (the default: see sc_pf_range); the tests put an
 * anchor across every range boundary and compare the reports.
 */
#define SC_PF_RANGE (256u * 1024)
#define SC_PF_RANGE_MIN (64u * 1024)
#define SC_PF_HITS 8192

enum { SC_PF_FREE, SC_PF_POSTED, SC_PF_DONE };

struct sc_pf_slot {
	int state;
	uint64_t seq;                   /* which range of the region */
	size_t from, to;                /* the block scanned */
	size_t cut;                     /* the range's end (from: its start) */
	uint64_t nl;                    /* '\n' in [from, cut) */
	size_t complete;                /* every match ending by here is listed */
	size_t n;
	bool full;
	size_t end[SC_PF_HITS];         /* match ends, buffer offsets */
	unsigned id[SC_PF_HITS];
};

struct sc_pf {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	hs_scratch_t *scratch;          /* the thread's own */
	const hs_database_t *db;
	const char *buf;
	uint64_t next;                  /* the next range the thread scans */
	pid_t pid;                      /* the process that started it */
	bool quit;
	struct sc_pf_slot slot[2];
};

static int
sc_pf_on_match(unsigned id, unsigned long long from, unsigned long long to,
    unsigned flags, void *ctx)
{
	struct sc_pf_slot *s = ctx;
	size_t end = s->from + (size_t)to;

	(void)from;
	(void)flags;
	if (s->n == SC_PF_HITS) {
		/* Every match that ends before this one is listed; those
		 * that end with it may not all be. */
		s->full = true;
		s->complete = end - 1;
		while (s->n > 0 && s->end[s->n - 1] == end)
			s->n--;
		return 1;
	}
	s->end[s->n] = end;
	s->id[s->n++] = id;
	return 0;
}

static void *
sc_pf_main(void *arg)
{
	struct sc_pf *pf = arg;

	pthread_mutex_lock(&pf->mu);
	for (;;) {
		struct sc_pf_slot *s = &pf->slot[pf->next % 2];

		while (!pf->quit && !(s->state == SC_PF_POSTED &&
		    s->seq == pf->next))
			pthread_cond_wait(&pf->cv, &pf->mu);
		if (pf->quit)
			break;
		pthread_mutex_unlock(&pf->mu);
		s->n = 0;
		s->full = false;
		s->complete = s->to;
		(void)hs_scan(pf->db, pf->buf + s->from,
		    (unsigned)(s->to - s->from), 0, pf->scratch,
		    sc_pf_on_match, s);
		s->nl = sc_count_newlines(pf->buf + s->from, s->cut - s->from);
		pthread_mutex_lock(&pf->mu);
		s->state = SC_PF_DONE;
		pf->next++;
		pthread_cond_broadcast(&pf->cv);
	}
	pthread_mutex_unlock(&pf->mu);
	return NULL;
}

/*
 * The range's size given by OOMDOC_PREFILTER_RANGE (*fixed), or with
 * "auto" the largest one (sc_region chooses).  Unset, there is no second
 * thread: measured on an idle 2-vCPU machine (2026-12-02, a 256 MiB
 * genlog.py log, --format json), the hand-over of the ranges cost more
 * than the second core gave back (0.40 s against 0.33 s of wall time), so
 * the thread stays an option until it pays.
 */
static size_t
sc_pf_range(bool *fixed)
{
	const char *e = getenv("OOMDOC_PREFILTER_RANGE");

	*fixed = e == NULL || strcmp(e, "auto") != 0;
	if (!*fixed)
		return SC_PF_RANGE;
	if (e == NULL || *e == '\0')
		return 0;
	return od_env_size("OOMDOC_PREFILTER_RANGE", 0, SC_BUF_SIZE,
	    SC_PF_RANGE);
}

/* Starts the thread, once; false when it cannot be (or is not to be). */
static bool
sc_pf_start(od_scanner *sc)
{
	struct sc_pf *pf;
	sigset_t all, old;
	int rc;

	if (sc->pf != NULL) {
		/* A child of fork(2) has no thread: its copy is left alone
		 * (its mutex may be held) and it scans alone. */
		if (sc->pf->pid == getpid())
			return true;
		sc->pf = NULL;
		return false;
	}
	if (sc->pf_tried)
		return false;
	sc->pf_tried = true;
	if (sc->pf_range == 0 || (pf = calloc(1, sizeof *pf)) == NULL)
		return false;
	if (hs_clone_scratch(sc->scratch, &pf->scratch) != HS_SUCCESS) {
		free(pf);
		return false;
	}
	pf->db = sc->db;
	pf->buf = sc->buf;
	pf->pid = getpid();
	pthread_mutex_init(&pf->mu, NULL);
	pthread_cond_init(&pf->cv, NULL);
	/* Signals stay the caller's thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&pf->thread, NULL, sc_pf_main, pf);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_mutex_destroy(&pf->mu);
		pthread_cond_destroy(&pf->cv);
		hs_free_scratch(pf->scratch);
		free(pf);
		return false;
	}
	sc->pf = pf;
	return true;
}

static void
sc_pf_stop(od_scanner *sc)
{
	struct sc_pf *pf = sc->pf;

	if (pf == NULL || pf->pid != getpid())
		return;         /* none, or a child's copy (sc_pf_start) */
	pthread_mutex_lock(&pf->mu);
	pf->quit = true;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
	pthread_join(pf->thread, NULL);
	pthread_mutex_destroy(&pf->mu);
	pthread_cond_destroy(&pf->cv);
	hs_free_scratch(pf->scratch);
	free(pf);
	sc->pf = NULL;
}

/* Gives the thread range seq, [from, cut), to scan as the block
 * [from, to). */
static void
sc_pf_post(struct sc_pf *pf, uint64_t seq, size_t from, size_t cut,
    size_t to)
{
	struct sc_pf_slot *s = &pf->slot[seq % 2];

	pthread_mutex_lock(&pf->mu);
	s->seq = seq;
	s->from = from;
	s->cut = cut;
	s->to = to;
	s->state = SC_PF_POSTED;
	pthread_cond_broadcast(&pf->cv);
	pthread_mutex_unlock(&pf->mu);
}

/* Waits for range seq's list. */
static struct sc_pf_slot *
sc_pf_wait(struct sc_pf *pf, uint64_t seq)
{
	struct sc_pf_slot *s = &pf->slot[seq % 2];

	pthread_mutex_lock(&pf->mu);
	while (!(s->state == SC_PF_DONE && s->seq == seq))
		pthread_cond_wait(&pf->cv, &pf->mu);
	pthread_mutex_unlock(&pf->mu);
	return s;
}

/* Hands the slot back (its list read). */
static void
sc_pf_free(struct sc_pf *pf, struct sc_pf_slot *s)
{
	pthread_mutex_lock(&pf->mu);
	s->state = SC_PF_FREE;
	pthread_mutex_unlock(&pf->mu);
}

/*
 * The anchors' matches in buf[from..to), to sc_on_match as hs_scan would
 * report them: from the second thread's list when it covers the stretch,
 * else from a scan here.
 */
static hs_error_t
sc_prefilter(od_scanner *sc, const char *buf, size_t from, size_t to)
{
	const struct sc_pf_slot *s = sc->pf_cur;
	size_t lo, hi, i;

	if (s == NULL || from < s->from || to > s->complete)
		return hs_scan(sc->db, buf + from, (unsigned)(to - from), 0,
		    sc->scratch, sc_on_match, sc);
	/* The first match that may start at from or after ends after it. */
	lo = 0;
	hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->end[mid] <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < s->n && s->end[i] <= to; i++) {
		if (s->end[i] - sc->anchor_len[s->id[i]] < from)
			continue;
		if (sc_on_match(s->id[i], 0, s->end[i] - from, 0, sc) != 0)
			return HS_SCAN_TERMINATED;
	}
	return HS_SUCCESS;
}

/*
 * Finds the start of the line holding offset p, looking back at most
 * SC_HISTORY bytes and never before lo.  *known says whether it is the
 * real start of the line (a line terminator, or the start of the input).
 *
 * Hits come in the order of their offsets, and a line may hold thousands
 * of them: each looks back only as far as the last hit's offset, and
 * takes the rest from what that one found (the last terminator before
 * it, or that there was none after its own stop), so that the bytes of a
 * line are looked at once whatever the number of hits on it.  The answer
 * is the one the whole look back would give.
 */
static size_t
sc_line_start(sc_state *st, size_t lo, size_t p, bool *known)
{
	size_t stop = p > lo + SC_HISTORY ? p - SC_HISTORY : lo;
	size_t floor = stop, i;
	bool memo = st->ls_gen == st->gen && st->ls_lo == lo && p >= st->ls_p;

	if (memo && st->ls_p > floor)
		floor = st->ls_p;
	/* After the last terminator in buf[floor..p): the last '\n', then
	 * a '\r' after it. */
	i = floor;
	if (p > floor) {
		const char *nl = memrchr(st->buf + floor, '\n', p - floor);
		size_t from = nl != NULL ? (size_t)(nl - st->buf) + 1 : floor;
		const char *cr = p > from ?
		    memrchr(st->buf + from, '\r', p - from) : NULL;

		i = cr != NULL ? (size_t)(cr - st->buf) + 1 : from;
	}
	if (i == floor && memo && floor > stop) {
		/* Nothing after the last hit: what it found, if after the
		 * stop; the stop only moves on (lo is the same). */
		i = st->ls_term > stop ? st->ls_term : stop;
	}
	st->ls_gen = st->gen;
	st->ls_lo = lo;
	st->ls_p = p;
	/* 0: no terminator after the stop (a terminator gives i >= 1). */
	st->ls_term = i > stop ? i : 0;
	if (i > stop) {
		*known = true;
		return i;
	}
	*known = i == 0 && st->base == 0;
	return i;
}

/* Sorts the hits by offset, carrying their anchor ids along. */
static void
sc_sort_hits(od_scanner *sc)
{
	int i, j;

	/* Insertion sort: the hits come nearly sorted already. */
	for (i = 1; i < sc->nhits; i++) {
		size_t h = sc->hits[i];
		int id = sc->hit_ids[i];

		for (j = i; j > 0 && sc->hits[j - 1] > h; j--) {
			sc->hits[j] = sc->hits[j - 1];
			sc->hit_ids[j] = sc->hit_ids[j - 1];
		}
		sc->hits[j] = h;
		sc->hit_ids[j] = id;
	}
}

/*
 * The bounds of the line around context anchor hit that sc_context reads
 * (at most SC_CTX_REACH bytes either side, not before lo), and its text
 * line number, 1-based.
 */
static void
sc_context_line(sc_state *st, size_t hit, size_t lo, size_t *bp, size_t *ep,
    uint64_t *lineno)
{
	size_t b = hit, e = hit;

	while (b > lo && hit - b < SC_CTX_REACH && st->buf[b - 1] != '\n' &&
	    st->buf[b - 1] != '\r')
		b--;
	while (e < st->len && e - hit < SC_CTX_REACH && st->buf[e] != '\n' &&
	    st->buf[e] != '\r')
		e++;
	/* The line's number: counted up to it, or back from the count when
	 * that went past it (a skipped line read after an event). */
	if (b >= st->counted) {
		sc_count_to(st, b);
		*lineno = st->lines + 1;
	} else {
		*lineno = st->lines + 1 - sc_count_newlines(st->buf + b,
		    st->counted - b);
	}
	*bp = b;
	*ep = e;
}

/*
 * Reads a context line of kind what (n bytes at line, its anchor at input
 * offset abs, its end at input offset end, text line lineno).
 */
static void
sc_context_read(sc_state *st, int what, const char *line, size_t n,
    uint64_t abs, uint64_t end, uint64_t lineno)
{
	st->ctx_done[what] = end;
	st->ctx_read[what] = abs;
	st->ctx_any[what] = true;
	lineno = sl_input_line(st->sc->sl, lineno - 1) + 1;
	cx_line(st->sc->cx, what, line, n, lineno, &st->ctx);
	/* The rows of a dmon header start after it (sc_dmon). */
	if (cx_dmon_active(&st->ctx) && st->dmon_at < end)
		st->dmon_at = end;
	/* A line about the end of a distributed run goes to the run's first
	 * failure, which it follows. */
	if (st->ctx.after_what != OD_AFTER_NONE) {
		od_events_after(st->set, st->ctx.after_what, st->ctx.after_rank,
		    st->index, lineno);
		st->ctx.after_what = OD_AFTER_NONE;
	}
}

/*
 * Hands the line around context anchor id (the anchor starts at hit) to
 * the context stage, with its line number; a line of a sampled kind is
 * skipped when one was read less than CX_SAMPLE_BYTES before it (and
 * remembered for sc_context_catch_up).
 */
static void
sc_context(sc_state *st, size_t hit, int id, size_t lo, bool force)
{
	const cx_anchor *a = &cx_anchors()[id - st->sc->noom];
	int what = a->what;
	uint64_t abs = st->base + hit, lineno;
	size_t b, e;

	if (what < 0 || what >= CX_WHAT_MAX || abs < st->ctx_done[what])
		return;
	/* A memory reading past the series' stride: skipped, but read if
	 * an event follows it (sc_context_catch_up). */
	if (a->series && !force && !cx_series_take(&st->ctx, what)) {
		const char *nl = memchr(st->buf + hit, '\n',
		    st->len - hit < SC_CTX_REACH ? st->len - hit : SC_CTX_REACH);

		e = nl != NULL ? (size_t)(nl - st->buf) : hit;
		st->ctx_done[what] = st->base + e;
		st->ctx_skipped[what] = abs;
		st->ctx_skipped_id[what] = id + 1;
		return;
	}
	if (a->sampled && st->ctx_any[what] &&
	    abs - st->ctx_read[what] < CX_SAMPLE_BYTES) {
		st->ctx_skipped[what] = abs;
		st->ctx_skipped_id[what] = id + 1;
		return;
	}
	st->ctx_skipped_id[what] = 0;
	sc_context_line(st, hit, lo, &b, &e, &lineno);
	sc_context_read(st, what, st->buf + b, e - b, abs, st->base + e,
	    lineno);
}

/*
 * Before the buffer's first keep bytes are given up (sc_room): each
 * skipped line that reaches into them, or whose start sc_context could
 * look for there, is copied for sc_context_catch_up.  A skipped line is
 * copied at the first move that gives up any of the SC_CTX_REACH bytes
 * before its anchor, so all of them are still in the buffer then.
 */
static void
sc_context_keep(sc_state *st, size_t keep)
{
	int what;

	for (what = 0; what < CX_WHAT_MAX; what++) {
		uint64_t at = st->ctx_skipped[what];
		size_t b, e;

		if (st->ctx_skipped_id[what] == 0 || at < st->base ||
		    at - st->base >= keep + SC_CTX_REACH ||
		    (st->skip_copy[what].copied && st->skip_copy[what].at == at))
			continue;
		sc_context_line(st, (size_t)(at - st->base), 0, &b, &e,
		    &st->skip_copy[what].line);
		memcpy(st->skip_copy[what].text, st->buf + b, e - b);
		st->skip_copy[what].len = e - b;
		st->skip_copy[what].at = at;
		st->skip_copy[what].end = st->base + e;
		st->skip_copy[what].copied = true;
	}
}

/*
 * Hands the lines after an nvidia-smi dmon header that end before upto
 * (at the end of the input, the last one too) to cx_dmon_row: the rows
 * have no anchor.  Called before each hit and at each cut, so that an
 * event sees the rows above it and no row below.
 */
static void
sc_dmon(sc_state *st, size_t upto, bool end)
{
	size_t b, e;

	if (!cx_dmon_active(&st->ctx))
		return;
	b = st->dmon_at > st->base ? (size_t)(st->dmon_at - st->base) : 0;
	for (; b < upto; b = e + 1) {
		const char *nl = memchr(st->buf + b, '\n', upto - b);
		uint64_t lineno;

		if (nl == NULL && !end)
			break;
		e = nl != NULL ? (size_t)(nl - st->buf) : upto;
		st->dmon_at = st->base + e + 1;
		/* A line of text, not a row: not worth counting. */
		if (e - b > 512)
			continue;
		/* Its number, counted back when the count went past it (the
		 * line across the last cut). */
		if (b >= st->counted) {
			sc_count_to(st, b);
			lineno = st->lines + 1;
		} else {
			lineno = st->lines + 1 - sc_count_newlines(st->buf + b,
			    st->counted - b);
		}
		cx_dmon_row(&st->ctx, st->buf + b, e - b, lineno);
		if (!cx_dmon_active(&st->ctx))
			break;
	}
}

/* Reads the latest skipped line of each sampled kind, if still here. */
static void
sc_context_catch_up(sc_state *st, size_t lo)
{
	int what;

	for (what = 0; what < CX_WHAT_MAX; what++) {
		int id = st->ctx_skipped_id[what] - 1;

		if (id < 0)
			continue;
		st->ctx_skipped_id[what] = 0;
		/* Copied when the buffer gave it up (sc_context_keep). */
		if (st->skip_copy[what].copied &&
		    st->skip_copy[what].at == st->ctx_skipped[what]) {
			sc_context_read(st, what, st->skip_copy[what].text,
			    st->skip_copy[what].len, st->skip_copy[what].at,
			    st->skip_copy[what].end, st->skip_copy[what].line);
			continue;
		}
		/* Not reached for a line that left the buffer, which
		 * sc_context_keep copied. */
		if (st->ctx_skipped[what] < st->base + lo)
			continue;
		st->ctx_any[what] = false;      /* read it whatever the gap */
		st->ctx_done[what] = st->ctx_skipped[what];
		sc_context(st, (size_t)(st->ctx_skipped[what] - st->base), id,
		    lo, true);
	}
}

/*
 * Hands one hit to the extractor, the event it gives to the context stage
 * (with the event's place in the input) and then to the event set.
 */
/* The wrap width confirmed before input offset at (see wraps). */
static size_t
sc_wrap_width_at(const od_scanner *sc, uint64_t at)
{
	size_t lo = 0, hi = sc->nwraps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sc->wraps[mid].at <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 ? sc->wraps[lo - 1].width : sc->wrap_before;
}

static void
sc_hit(sc_state *st, size_t hit, size_t lo)
{
	ex_window w;
	ex_span span;
	od_event ev;

	if (hit < st->consumed)
		return;
	w.buf = st->buf;
	w.len = st->len;
	w.base = st->base;
	w.hit = hit;
	w.from = st->consumed > lo ? st->consumed : lo;
	w.gen = st->gen;
	w.wrap_width = sc_wrap_width_at(st->sc, st->base + hit);
	w.line_start = sc_line_start(st, lo, hit, &w.line_start_known);
	/* ev is made fresh by ex_extract, and holds nothing on false. */
	if (!ex_extract(st->sc->ex, &w, &ev, &span))
		return;
	/* A message that reaches the last complete line may go on in the
	 * line after it: it waits for that line (od_scan_flush). */
	if (st->defer_lim != 0 && span.end > st->defer_lim) {
		od_event_clear(&ev);
		st->deferred = hit;
		return;
	}
	/* The labels of the record the event's line came from, over those
	 * of a prefix. */
	{
		const od_labels *lab = sl_labels_at(st->sc->sl,
		    st->base + w.line_start);

		if (lab != NULL)
			ev.labels = *lab;
	}
	/* The skipped lines first: they come before the event's line, and
	 * so their numbers are counted on to it rather than back from it. */
	sc_context_catch_up(st, lo);
	sc_count_to(st, w.line_start);
	ev.input = st->index;
	/* Lines of the input, not of the text the records made. */
	ev.line = sl_input_line(st->sc->sl, st->lines) + 1;
	ev.end_line = sl_input_line_end(st->sc->sl, st->lines + span.lines) + 1;
	/* A mention of a failure, and no failure (decide.c): kept with its
	 * reason, not as an event. */
	{
		size_t from = w.line_start > lo + SC_HISTORY ?
		    w.line_start - SC_HISTORY : lo;
		const char *why = dc_mention(&ev, st->buf + w.line_start,
		    ln_eol(st->buf, w.line_start, st->len) - w.line_start,
		    st->base + w.line_start, st->buf + from,
		    w.line_start - from, &st->mention_memo);

		if (why != NULL) {
			od_events_mention(st->set, &ev, why);
			od_event_clear(&ev);
			st->consumed = span.end;
			return;
		}
	}
	cx_attach(st->sc->cx, &st->ctx, &ev);
	/* The text just before the event, for its traceback and step: at
	 * most SC_HISTORY bytes, and only for an event not seen before (an
	 * echo takes nothing from it). */
	if (!od_events_known(st->set, &ev)) {
		size_t from = w.line_start > lo + SC_HISTORY ?
		    w.line_start - SC_HISTORY : lo, n, i, k;
		const char *text;

		/* Back to the last traceback's header when it is further
		 * back but within SC_TRACEBACK bytes. */
		if (st->tb_any && st->tb_at >= st->base + lo &&
		    st->tb_at < st->base + from &&
		    st->base + w.line_start - st->tb_at <= SC_TRACEBACK)
			from = (size_t)(st->tb_at - st->base);
		n = w.line_start - from;
		text = st->buf + from;
		/* A coloured traceback is read without its escapes. */
		if (memchr(text, 0x1b, n) != NULL) {
			for (i = k = 0; i < n && k < SC_TRACEBACK; ) {
				size_t e = ln_escape(text + i, n - i);

				if (e > 0)
					i += e;
				else
					st->sc->clean[k++] = text[i++];
			}
			text = st->sc->clean;
			n = k;
		}
		cx_before(st->sc->cx, text, n, &ev);
		sc_before(text, n, &ev);
		/* And what the buffer holds after it: a traceback printed
		 * after the message, settings shown later. */
		if (span.end <= st->len)
			cx_after(st->sc->cx, st->buf + span.end,
			    st->len - span.end, &ev);
	}
	st->consumed = span.end;
	od_events_add(st->set, &ev);
}

/* An anchor across a seam's line break: a hit at its start (an
 * hs_match_event_handler). */
static int
sc_on_seam(unsigned id, unsigned long long from, unsigned long long to,
    unsigned flags, void *ctx)
{
	od_scanner *sc = ctx;
	size_t start;

	(void)from;
	(void)flags;
	if ((int)id >= sc->noom || (int)id == sc->tb_id ||
	    sc->nhits == SC_HITS_MAX || (size_t)to <= sc->seam_before ||
	    (size_t)to < sc->anchor_len[id] ||
	    (size_t)to - sc->anchor_len[id] >= sc->seam_before)
		return 0;
	start = sc->seam_nl - (sc->seam_before -
	    ((size_t)to - sc->anchor_len[id]));
	/* Another piece's (sc_seams). */
	if (start < sc->seam_lo || start >= sc->seam_hi)
		return 0;
	sc->hit_ids[sc->nhits] = (int)id;
	sc->hits[sc->nhits++] = start;
	return 0;
}

/* The widths at which consoles hard-wrap (lines.c joins the same). */
static bool
sc_console_width(size_t len)
{
	return len == 80 || len == 100 || len == 120 || len == 132 ||
	    len == 160 || len == 200;
}

/*
 * Whether the break after a line of len bytes at buf[at] looks like a
 * console's hard wrap inside a word: letters or digits either side, and
 * the next line not indented.  Besides the usual widths, a terminal may
 * wrap at whatever width its window has: a width at which two such lines
 * of the same length are seen is taken as the input's own
 * (sc_state.wrap_width), which lines.c then joins at as well.  A hit
 * uses the width confirmed up to its own line (od_scanner.wraps), never
 * one that lines after it confirm: those may or may not be in the same
 * scanned region, which depends on where the input's chunks end.
 */
static bool
sc_cut_in_word(const char *buf, size_t at, size_t to, size_t len)
{
	unsigned char a, b;
	size_t i, n;

	if (len < 60 || len > 400 || at == 0 || at + 1 >= to)
		return false;
	a = (unsigned char)buf[at - 1];
	b = (unsigned char)buf[at + 1];
	if (!(isalnum(a) || a == '_') || !(isalnum(b) || b == '_'))
		return false;
	/*
	 * Lines of one format are often of one length too: a next line that
	 * starts a record of its own, with a date or time ("2019-12-05",
	 * "12:44:30") or a logger's or a function's name and a colon
	 * ("llama_model_load: "), or a setting's name and '='
	 * ("TF_GPU_ALLOCATOR=cuda_malloc_async" after a message of the
	 * same length as the one before it), is no continuation.
	 */
	for (i = at + 1, n = 0; i < to && n < 4 && isdigit((unsigned char)buf[i]);
	    i++, n++)
		;
	if (n >= 2 && i < to && (buf[i] == '-' || buf[i] == ':' ||
	    buf[i] == '/'))
		return false;
	for (i = at + 1; i < to && i - at < 80 &&
	    (isalnum((unsigned char)buf[i]) || buf[i] == '_' || buf[i] == '.');
	    i++)
		;
	return !(i < to && (buf[i] == ':' || buf[i] == '='));
}

/* The longest line a hard-wrap seam looks at as one (sc_cut_in_word's
 * bound), and so how far back sc_seams looks for a line's start. */
#define SC_SEAM_LINE 400u

/*
 * The start of the line that the break at buf[at] ends, looked back for
 * at most SC_SEAM_LINE + 1 bytes; SIZE_MAX when it is further back (a
 * long line) or when the buffer's start is no line's start.
 */
static size_t
sc_seam_line(const sc_state *st, const char *buf, size_t at)
{
	size_t ls = at;

	while (ls > 0 && at - ls <= SC_SEAM_LINE && buf[ls - 1] != '\n')
		ls--;
	if (at - ls > SC_SEAM_LINE || (ls == 0 && st->base > 0))
		return SIZE_MAX;
	return ls;
}

/*
 * The wrap state that the line break at buf[at] leaves (its line starts
 * at ls, SIZE_MAX for a long one): the length of the last line that
 * looked cut inside a word, and the width two such lines of one length
 * confirmed.  Whether the break confirmed a new width is returned.
 */
static bool
sc_wrap_step(const char *buf, size_t ls, size_t at, size_t to,
    size_t *wrap_len, size_t *wrap_width)
{
	bool confirmed = false;

	if (ls != SIZE_MAX && sc_cut_in_word(buf, at, to, at - ls)) {
		if (at - ls == *wrap_len && at - ls != *wrap_width) {
			*wrap_width = at - ls;
			confirmed = true;
		}
		*wrap_len = at - ls;
	}
	return confirmed;
}

/*
 * Scans the seam of the line break at buf[at] (its line starts at ls,
 * SIZE_MAX for a long one; wrap_width is the input's width as of this
 * break) for an anchor across it, when the line is of a console's width
 * or the input's, or ends in a blank before a lower-case letter.  Its
 * hits (sc_on_seam) are those that start in [seam_lo, seam_hi).
 */
static void
sc_seam_at(od_scanner *sc, const char *buf, size_t ls, size_t at, size_t to,
    size_t wrap_width)
{
	char seam[256];
	size_t side = sc->overlap < 127 ? sc->overlap : 127;
	size_t len = ls != SIZE_MAX ? at - ls : SIZE_MAX, before, after = 0;

	/* A paste may also keep the blank before a wrap between words
	 * ("Resource exhausted: Out " / "of memory while ..."): a line of
	 * 20 bytes or more that ends in a blank, and a next line that goes
	 * on in lower case, whatever the width.  Only an anchor across the
	 * break is a hit, so prose whose lines end in blanks (Markdown's
	 * hard breaks) costs a scan of the seam and no more. */
	if (at == 0 || at + 1 >= to || !(sc_console_width(len) ||
	    (wrap_width != 0 && len == wrap_width) || (len >= 20 &&
	    buf[at - 1] == ' ' && islower((unsigned char)buf[at + 1]))))
		return;
	/* An anchor across the break holds the bytes either side of it as
	 * a pair: without such a pair, there is none to scan for (an empty
	 * line has no byte before it). */
	if (len == 0 || !sc_seam_pair_in(sc, (unsigned char)buf[at - 1],
	    (unsigned char)buf[at + 1]))
		return;
	before = len < side ? len : side;
	memcpy(seam, buf + at - before, before);
	while (after < side && at + 1 + after < to &&
	    buf[at + 1 + after] != '\n')
		after++;
	memcpy(seam + before, buf + at + 1, after);
	sc->seam_before = before;
	sc->seam_nl = at;
	(void)hs_scan(sc->db, seam, (unsigned)(before + after), 0, sc->scratch,
	    sc_on_seam, sc);
}

/*
 * Anchors that a console's hard wrap cut in two ("OOM when allocatin" /
 * "g tensor"): after each line of buf[from..cut) exactly a console's width
 * long, the bytes either side of its line break are scanned again without
 * the break, and an anchor across it is a hit at its start, which the
 * extractor then reads with the lines joined (lines.c joins such a break
 * inside a word).  Only the line breaks are looked for, so a log with no
 * such line costs a memchr.  Returns cut, or the start of the line at
 * which it stopped because the hit list was nearly full.
 *
 * Where the pieces end must not change what is found, so a seam's hits
 * are handed over with the piece they start in, as the prefilter's are:
 * the breaks of buf[from..cut) give their hits that start at from or
 * after, and the break that ends the line across cut, when it is less
 * than the longest anchor after cut, gives those that start before cut
 * (an anchor across a break starts at most that far before it), with
 * the wrap state it would leave worked out on a copy (the next piece
 * keeps it).  A line's start is looked back for as far as a seam's line
 * may be long (SC_SEAM_LINE), so that it is the same whether the line
 * is the piece's first or not.  Each decision reads at most 128 bytes
 * after its break, up to to: the caller's buffer has them, or the input
 * ends there.
 */
static size_t
sc_seams(od_scanner *sc, const char *buf, size_t from, size_t cut,
    size_t to)
{
	sc_state *st = sc->st;
	size_t side = sc->overlap < 127 ? sc->overlap : 127;
	size_t ahead = cut + side < to ? cut + side : to;
	size_t wlen, wwidth, at, ls;
	const char *nl = buf + from;
	size_t next_ls = SIZE_MAX;      /* the start of the line after a break */

	sc->nwraps = 0;
	sc->wrap_before = st->wrap_width;
	sc->seam_lo = from;
	sc->seam_hi = cut;

	while ((nl = memchr(nl, '\n', (size_t)(buf + cut - nl))) != NULL) {
		/* The first line's start is looked back for; the others
		 * start after the break before them. */
		size_t start = next_ls;

		at = (size_t)(nl - buf);
		nl++;
		ls = start != SIZE_MAX ? start : sc_seam_line(st, buf, at);
		if (ls != SIZE_MAX && at - ls > SC_SEAM_LINE)
			ls = SIZE_MAX;
		next_ls = at + 1;
		/* The hit list is nearly full: the caller goes on from this
		 * line (never the first: the prefilter leaves room for it). */
		if (sc->nhits > SC_HITS_MAX - SC_SEAM_ROOM && start != SIZE_MAX)
			return start;
		if (sc_wrap_step(buf, ls, at, to, &st->wrap_len,
		    &st->wrap_width) && sc->nwraps < sc->wraps_max) {
			/* The hits of the line that confirmed it use it too:
			 * the place is its start (sc_line_cut keeps a line and
			 * its break in one piece). */
			sc->wraps[sc->nwraps].at = st->base + ls;
			sc->wraps[sc->nwraps++].width = st->wrap_width;
		}
		sc_seam_at(sc, buf, ls, at, to, st->wrap_width);
	}
	/* The line across cut, when it ends soon enough. */
	nl = cut < ahead ? memchr(buf + cut, '\n', ahead - cut) : NULL;
	if (nl == NULL)
		return cut;
	at = (size_t)(nl - buf);
	ls = next_ls != SIZE_MAX ? next_ls : sc_seam_line(st, buf, at);
	if (ls != SIZE_MAX && ls >= cut)
		return cut;
	if (ls != SIZE_MAX && at - ls > SC_SEAM_LINE)
		ls = SIZE_MAX;
	wlen = st->wrap_len;
	wwidth = st->wrap_width;
	(void)sc_wrap_step(buf, ls, at, to, &wlen, &wwidth);
	sc_seam_at(sc, buf, ls, at, to, wwidth);
	return cut;
}

/*
 * Where a piece that would end at cut ends: after the last line break
 * before cut when that is at most SC_SEAM_LINE + 1 bytes back, so that
 * the hits of a line that may confirm a wrap width (sc_seams) are handed
 * over with its line break, after the seams, wherever the input's chunks
 * end; otherwise (a longer line, which confirms none) at cut.  floor: the
 * piece's start; a cut at or before it stays where it was.
 */
static size_t
sc_line_cut(const char *buf, size_t floor, size_t cut)
{
	size_t lo = cut > SC_SEAM_LINE + 1 ? cut - (SC_SEAM_LINE + 1) : 0;
	size_t i = cut;

	while (i > lo && buf[i - 1] != '\n')
		i--;
	if (i == lo && (i == 0 || buf[i - 1] != '\n'))
		return cut;     /* no break that near (or none before) */
	return i > floor ? i : floor;
}

/*
 * Scans buf[from..to) for anchors and handles each hit that starts before
 * cut, in the order of their starts; every anchor that starts before cut
 * ends by to.  lo is the oldest byte that the extractor may look at;
 * seam_to (at least to) the end of what the hard-wrap seams may read
 * after a line break (sc_seams): the end of the bytes in the buffer,
 * whatever range of the region this is, so that a seam reads the same
 * bytes either way.
 */
static void
sc_region_seq(sc_state *st, size_t from, size_t to, size_t cut, size_t lo,
    size_t seam_to)
{
	od_scanner *sc = st->sc;
	int i;

	while (from < cut && st->deferred == SIZE_MAX) {
		size_t next = cut;
		hs_error_t rc;

		sc->nhits = 0;
		sc->hits_base = from;
		sc->hit_cut = cut;
		sc->last_end = from;
		rc = sc_prefilter(sc, st->buf, from, to);
		/*
		 * Matches come in the order of their ends.  When the hit list
		 * was full, every hit that ends before the last one's end was
		 * reported, and so every hit that starts more than an anchor's
		 * length before it: those are handled now, the rest are found
		 * again from there.
		 */
		if (rc == HS_SCAN_TERMINATED && sc->nhits > 0) {
			next = sc->last_end > from + sc->overlap + 1 ?
			    sc->last_end - sc->overlap - 1 : sc->last_end;
			/* At a line's end, when one is near and after from. */
			if (sc_line_cut(st->buf, from, next) > from)
				next = sc_line_cut(st->buf, from, next);
		}
		/* The seams of the same stretch, whose hits join the list; a
		 * stretch cut short is scanned again from where they stopped. */
		next = sc_seams(sc, st->buf, from, next, seam_to);
		/* Take them in the order of their starts. */
		sc_sort_hits(sc);
		for (i = 0; i < sc->nhits && sc->hits[i] < next; i++) {
			sc_dmon(st, sc->hits[i], false);
			if (sc->hit_ids[i] == sc->tb_id) {
				st->tb_at = st->base + sc->hits[i];
				st->tb_any = true;
			} else if (sc->hit_ids[i] >= sc->noom)
				sc_context(st, sc->hits[i], sc->hit_ids[i], lo,
				    false);
			else
				sc_hit(st, sc->hits[i], lo);
			if (st->deferred != SIZE_MAX)
				return;
		}
		from = next;
	}
}

/* Keeps the count of the line breaks of the thread's range s, for
 * sc_count_to. */
static void
sc_pf_lines_add(sc_state *st, const struct sc_pf_slot *s)
{
	od_scanner *sc = st->sc;

	if (sc->pf_lines_gen != st->gen || sc->pf_nlines == SC_PF_LINES ||
	    (sc->pf_nlines > 0 &&
	    sc->pf_lines[sc->pf_nlines - 1].cut > s->from)) {
		sc->pf_lines_gen = st->gen;
		sc->pf_nlines = sc->pf_line_i = 0;
	}
	sc->pf_lines[sc->pf_nlines].from = s->from;
	sc->pf_lines[sc->pf_nlines].cut = s->cut;
	sc->pf_lines[sc->pf_nlines++].nl = s->nl;
}

/* The end of range that starts at a: after the first line break r - 1
 * bytes on or later, or cut. */
static size_t
sc_range_end(const sc_state *st, size_t a, size_t r, size_t cut)
{
	const char *nl;

	if (cut - a <= r)
		return cut;
	nl = memchr(st->buf + a + r - 1, '\n', cut - (a + r - 1));
	return nl != NULL ? (size_t)(nl - st->buf) + 1 : cut;
}

/* Gives the thread the range [a, range_end), its block ending the
 * longest anchor less one after it, or at to. */
static size_t
sc_pf_range_post(sc_state *st, uint64_t seq, size_t a, size_t r, size_t cut,
    size_t to)
{
	od_scanner *sc = st->sc;
	size_t e = sc_range_end(st, a, r, cut);

	sc_pf_post(sc->pf, seq, a, e, e + sc->overlap < to ? e + sc->overlap :
	    to);
	return e;
}

/*
 * sc_region_seq over the ranges of buf[from..cut) in turn, the second
 * thread scanning for the anchors of the next two while the main thread
 * handles the hits of one (see "The prefilter's second thread").  A range
 * is pf_range bytes or more: it ends after a line break (or at cut), so
 * that the hard-wrap seam that ends a hit's line (sc_seams) is in the
 * hit's range, as it is in its region (a pf_range of 1 makes each line a
 * range).  Its block ends the longest anchor
 * less one after it, or at to; seam_to is sc_region_seq's.  A region of
 * less than two ranges, or one
 * with no thread to be had, is scanned here alone.
 */
static void
sc_region(sc_state *st, size_t from, size_t to, size_t cut, size_t lo,
    size_t seam_to)
{
	od_scanner *sc = st->sc;
	size_t r = sc->pf_range, e0, next;
	uint64_t k, posted = 0;

	/* A quarter of the region (the main thread scans the first range
	 * itself), within bounds, unless the tests set it. */
	if (!sc->pf_fixed && cut > from) {
		r = (cut - from) / 4;
		if (r < SC_PF_RANGE_MIN) {
			/* Too short to be worth the handing over (a pipe's
			 * chunks). */
			sc_region_seq(st, from, to, cut, lo, seam_to);
			return;
		}
		r = r > SC_PF_RANGE ? SC_PF_RANGE : r;
	}
	if (r == 0 || cut <= from || cut - from < 2 * r || !sc_pf_start(sc)) {
		sc_region_seq(st, from, to, cut, lo, seam_to);
		return;
	}
	/* The main thread's own range is a third as long: while it scans
	 * it and handles its hits, the thread scans the next one. */
	e0 = sc_range_end(st, from, r / 3 > 0 ? r / 3 : 1, cut);
	for (next = e0; next < cut && posted < 2; posted++)
		next = sc_pf_range_post(st, sc->pf_seq + posted, next, r, cut,
		    to);
	sc_region_seq(st, from, e0 + sc->overlap < to ? e0 + sc->overlap : to,
	    e0, lo, seam_to);
	for (k = 0; k < posted; k++) {
		struct sc_pf_slot *s = sc_pf_wait(sc->pf, sc->pf_seq + k);

		sc_pf_lines_add(st, s);
		sc->pf_cur = s;
		sc_region_seq(st, s->from, s->to, s->cut, lo, seam_to);
		sc->pf_cur = NULL;
		sc_pf_free(sc->pf, s);
		if (next < cut)
			next = sc_pf_range_post(st, sc->pf_seq + posted++, next,
			    r, cut, to);
	}
	sc->pf_seq += posted;
}

/* Hands the complete events over; at the end of the input, all of them. */
static void
sc_deliver(sc_state *st, bool end)
{
	od_scanner *sc = st->sc;
	size_t n = od_events_count(st->set);

	/* A delivered event dropped for a more severe one (event.c) moved
	 * the later ones up. */
	if (sc->fn != NULL && od_events_ndelivered(st->set) < st->delivered)
		st->delivered = od_events_ndelivered(st->set);
	/* An event found later starts at this line or after it. */
	while (sc->fn != NULL && st->delivered < n && (end ||
	    !od_events_open(st->set, st->delivered, st->index,
	    sl_input_line(sc->sl, st->lines) + 1)))
		sc->fn(od_events_get(st->set, st->delivered++), sc->fn_arg);
	if (sc->fn != NULL)
		od_events_delivered(st->set, st->delivered);
}

/*
 * Scans what has its lookahead now (at the end of the input, everything),
 * counts its lines and delivers the events it completed.
 */
static void
sc_advance(sc_state *st, bool end)
{
	size_t cut = st->len, to = st->len;

	if (!end) {
		if (st->len < SC_LOOKAHEAD)
			return;
		/* At a line's end when one is near (sc_line_cut): nothing
		 * more to scan yet when that is where the last scan ended. */
		cut = sc_line_cut(st->buf, st->scanned, st->len - SC_LOOKAHEAD);
		if (cut + st->sc->overlap < to)
			to = cut + st->sc->overlap;
	}
	/* The hard-wrap seams read up to 128 bytes after a line break
	 * before cut, as the whole input would give them (sc_seams): all the
	 * lookahead is theirs to read. */
	if (cut > st->scanned) {
		sc_region(st, st->scanned, to, cut, 0, st->len);
		st->scanned = cut;
	}
	sc_dmon(st, cut, end);
	sc_count_to(st, cut);
	sc_deliver(st, end);
}

/*
 * The free end of the buffer, with at least one byte of room: when the
 * buffer is full, the history before what is left to scan and the tail are
 * moved to the front first.  *room receives its size.
 */
static char *
sc_room(sc_state *st, size_t *room)
{
	if (st->len == st->sc->buf_size) {
		/*
		 * Everything before the lookahead is scanned (sc_advance).  A
		 * hit after it looks back for its line's start at most
		 * SC_HISTORY bytes, and from there at most SC_HISTORY more
		 * (sc_hit): twice that is kept, so that what it reads does
		 * not depend on where the buffer happened to be full.
		 */
		size_t keep = st->scanned > 2 * SC_HISTORY ?
		    st->scanned - 2 * SC_HISTORY : 0;

		/* And the last traceback, while an event may still read it:
		 * within SC_TRACEBACK of a line that starts up to SC_HISTORY
		 * bytes before what is left to scan. */
		if (st->tb_any && st->tb_at >= st->base &&
		    st->tb_at - st->base < keep &&
		    st->base + st->scanned - st->tb_at <= SC_TRACEBACK +
		    SC_HISTORY)
			keep = (size_t)(st->tb_at - st->base);

		sc_context_keep(st, keep);
		memmove(st->sc->buf, st->sc->buf + keep, st->len - keep);
		st->gen = ++st->sc->gen;
		st->len -= keep;
		st->base += keep;
		st->counted -= keep;
		st->scanned -= keep;
		st->consumed = st->consumed > keep ? st->consumed - keep : 0;
	}
	*room = st->sc->buf_size - st->len;
	return st->sc->buf + st->len;
}

/* Takes the n bytes just written at sc_room's pointer, and scans. */
static void
sc_commit(sc_state *st, size_t n)
{
	if (n == 0)
		return;
	st->len += n;
	st->bytes += n;
	st->last = st->sc->buf[st->len - 1];
	sc_advance(st, false);
}

void
od_scanner_set_zstd_window_log(od_scanner *sc, int log)
{
	sc->zstd_window_log = log;
}

void
od_scanner_on_event(od_scanner *sc, od_event_fn *fn, void *arg)
{
	sc->fn = fn;
	sc->fn_arg = arg;
}

static void sc_text(void *arg, const char *data, size_t len);

void
od_scan_begin(od_scanner *sc, int index, od_events *set)
{
	sc_state *st = sc->st;

	memset(st, 0, sizeof *st);
	st->sc = sc;
	st->buf = sc->buf;
	st->last = '\n';
	st->index = index;
	st->set = set;
	st->gen = ++sc->gen;
	st->delivered = od_events_count(set);
	st->deferred = SIZE_MAX;
	if (sc->fn != NULL)
		od_events_delivered(set, st->delivered);
	cx_reset(&st->ctx);
	st->ctx.readings = st->series;
	(void)ex_nomem(sc->ex);
	(void)cx_nomem(sc->cx);
	sl_begin(sc->sl, sc_text, sc);
}

void
od_scan_feed(od_scanner *sc, const char *data, size_t len)
{
	sl_feed(sc->sl, data, len);
}

/* The text of the input (what the structured-line reader makes of it)
 * into the buffer, and scanned. */
static void
sc_text(void *arg, const char *data, size_t len)
{
	od_scanner *sc = arg;

	while (len > 0) {
		size_t room;
		char *p = sc_room(sc->st, &room);

		if (room > len)
			room = len;
		memcpy(p, data, room);
		sc_commit(sc->st, room);
		data += room;
		len -= room;
	}
}

/*
 * What an input that paused has so far (a pipe that is silent, a followed
 * file that stopped growing, for a short while: the command's 500 ms).
 * Only what the bytes still to come cannot change is decided: the lines up to the last complete one, which is left for the
 * next scan as the lookahead of the line before it (a hard wrap's
 * continuation, sc_seams), and of those only the messages that end before
 * it: the first one that reaches it, and everything after that, wait for
 * the line after it (or the input's end).  The wrap state that the
 * lines before that message leave is worked out again, as the next scan
 * would have it.
 */
void
od_scan_pause(od_scanner *sc)
{
	sc_state *st = sc->st;
	size_t cut = st->len, from = st->scanned, wlen, wwidth;

	/* The start of the last complete line. */
	while (cut > from && st->buf[cut - 1] != '\n')
		cut--;
	if (cut > from)
		for (cut--; cut > from && st->buf[cut - 1] != '\n'; cut--)
			;
	if (cut <= from)
		return;
	wlen = st->wrap_len;
	wwidth = st->wrap_width;
	st->defer_lim = cut;
	st->deferred = SIZE_MAX;
	sc_region(st, from, st->len, cut, 0, st->len);
	st->defer_lim = 0;
	if (st->deferred == SIZE_MAX) {
		st->scanned = cut;
		sc_count_to(st, cut);
	} else {
		/* Scanned up to the message that waits; the seams after it
		 * are scanned again, from the state before them. */
		st->scanned = st->deferred;
		st->deferred = SIZE_MAX;
		st->wrap_len = wlen;
		st->wrap_width = wwidth;
		sc->nhits = 0;
		(void)sc_seams(sc, st->buf, from, st->scanned, st->len);
		sc->nhits = 0;
	}
	sc_deliver(st, false);
}

void
od_scan_flush(od_scanner *sc)
{
	sc_state *st = sc->st;
	size_t cut = st->len;

	/* Up to the end of the last complete line: a line that has not
	 * ended may be a message still being written. */
	while (cut > st->scanned && st->buf[cut - 1] != '\n')
		cut--;
	if (cut > st->scanned) {
		sc_region(st, st->scanned, st->len, cut, 0, st->len);
		st->scanned = cut;
	}
	sc_count_to(st, cut);
	sc_deliver(st, false);
}

bool
od_scan_finish(od_scanner *sc, od_input *info)
{
	sc_state *st = sc->st;
	bool lost_message, lost_input, lost_context;

	sl_finish(sc->sl);
	sc_advance(st, true);
	sl_input(sc->sl, &info->bytes, &info->lines);
	ex_forget(sc->ex);
	/* All are read, and so cleared, whatever the first says. */
	lost_message = ex_nomem(sc->ex);
	lost_input = od_events_nomem(st->set);
	lost_context = cx_nomem(sc->cx);
	if (lost_message || lost_input || lost_context) {
		info->failed = true;
		return false;
	}
	return true;
}

void
od_scan_buffer(od_scanner *sc, const char *data, size_t len, int index,
    od_input *info, od_events *set)
{
	od_scan_begin(sc, index, set);
	od_scan_feed(sc, data, len);
	od_scan_finish(sc, info);
	info->compression = "none";
}

in_reader *
od_scan_open(od_scanner *sc, const char *path, int index, od_input *info,
    od_events *set, od_error *err)
{
	in_reader *r;

	info->name = strdup(path);
	info->bytes = 0;
	info->lines = 0;
	info->compression = "none";
	if (info->name == NULL) {
		/* The caller knows it by the name left NULL. */
		od_error_set(err, NULL, 0, 0, "out of memory");
		info->failed = true;
		return NULL;
	}
	r = in_open(path, err);
	if (r == NULL) {
		info->failed = true;
		return NULL;
	}
	in_set_zstd_window_log(r, sc->zstd_window_log);
	od_scan_begin(sc, index, set);
	return r;
}

bool
od_scan_close(od_scanner *sc, in_reader *r, od_input *info, od_error *err)
{
	bool ok = od_scan_finish(sc, info);

	if (!ok)
		od_error_set(err, info->name, 0, 0, "out of memory");
	info->compression = in_compression(r);
	in_close(r);
	return ok;
}

bool
od_scan_path(od_scanner *sc, const char *path, int index, od_input *info,
    od_events *set, od_error *err)
{
	in_reader *r = od_scan_open(sc, path, index, info, set, err);
	bool ok = true;

	if (r == NULL)
		return false;
	for (;;) {
		const char *data;
		ssize_t n = in_next(r, &data, err);

		if (n < 0) {
			ok = false;
			info->failed = true;
		}
		if (n <= 0)
			break;
		od_scan_feed(sc, data, (size_t)n);
	}
	return od_scan_close(sc, r, info, err) && ok;
}

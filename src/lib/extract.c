/*
 * extract.c: recognising out-of-memory messages and reading their numbers.
 *
 * The scanner hands over a window around a prefilter hit.  The extractor
 * joins the hit's line and the lines after it into one text (the prefixes
 * of the following lines stripped, lines joined by '\n'), looks for the
 * start of a known message that covers the hit, and then reads the message
 * clause by clause with anchored PCRE2 patterns.  Clauses are matched one
 * after the other rather than by one big pattern because real messages are
 * cut off after any clause, carry optional clauses (allowed, private pools,
 * any number of process lines) and are wrapped across lines: every gap
 * between words is \s+, which also matches the '\n' of a wrapped line.
 *
 * The formats and their sources are in pytorch-allocator.md, section 1.
 */
#define _GNU_SOURCE             /* memmem */
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "extract.h"
#include "stacks.h"

/* A size as format_size() prints it: two groups, the number and the unit. */
#define SZ "(\\d+(?:\\.\\d+)?)\\s*(bytes|[KMGTP]iB)"
#define GAP "\\s+"

enum {
	RE_PREFIX,
	/* Starters: searched for, the earliest one covering the hit wins. */
	RE_HEAD,
	RE_HEAD_BARE,
	RE_PAREN,
	RE_ASYNC_HEAD,
	RE_WARN,
	RE_NVML,
	/* Clauses: matched anchored, one after the other. */
	RE_OLD_GPU,
	RE_OLD_TOTAL,
	RE_OLD_ALLOC,
	RE_OLD_FREE,
	RE_OLD_RESERVED,
	RE_OLD_CLOSE,
	RE_NEW_GPU,
	RE_NEW_FREE,
	RE_NEW_DOT,
	RE_PROC,
	RE_ALLOWED,
	RE_SPLIT,
	RE_SPLIT_CUT,
	RE_HINT,
	RE_XPU_TAIL,
	RE_ASYNC_ALLOC,
	RE_ASYNC_REQ,
	RE_ASYNC_LIMIT,
	RE_ASYNC_FREE,
	RE_ASYNC_PTLIMIT,
	RE_COUNT
};

static const char *const ex_patterns[RE_COUNT] = {
	[RE_PREFIX] =
	    "(?:(\\d{4}-\\d\\d-\\d\\d[T ]\\d\\d:\\d\\d:\\d\\d(?:[.,]\\d+)?"
	    "(?:Z|[+-]\\d\\d:?\\d\\d)?)(?:\\s+(?:stdout|stderr)\\s+[FP])?"
	    "\\s+(?:-\\s+)?"
	    "|\\[rank(\\d{1,7})\\]:\\s?"
	    "|\\[default(\\d{1,7})\\]:\\s?"
	    "|\\[\\d{1,7},(\\d{1,7})\\]<(?:stdout|stderr)>:\\s?"
	    "|[ \\t]{0,4}(\\d{1,5}):[ \\t]"
	    "|>[ \\t]"
	    "|[A-Za-z0-9_.-]+[ \\t]+\\|[ \\t]"
	    /* vLLM: "(VllmWorkerProcess pid=1234) " and its logger's
	     * "ERROR 04-27 09:07:04 [engine.py:160] " */
	    "|\\([A-Za-z_][\\w.]*[ \\t]+pid=\\d{1,9}\\)[ \\t]"
	    "|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[ \\t]+\\d\\d-\\d\\d[ \\t]+"
	    "\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?[ \\t]+\\[[^\\]\\n]{1,80}\\][ \\t]"
	    /* glog and absl: "E0325 20:57:27.620000 2606 file.py:123] " */
	    "|[IWEF]\\d{4}[ \\t]+\\d\\d:\\d\\d:\\d\\d\\.\\d+[ \\t]+\\d+[ \\t]+"
	    "[^\\]\\n]{1,120}\\][ \\t])",
	[RE_HEAD] =
	    "(?:(CUDA|HIP|XPU)" GAP "out" GAP "of" GAP "memory\\.\\s*)?"
	    "Tried" GAP "to" GAP "allocate" GAP
	    "(?:(more" GAP "than" GAP "1EB" GAP "memory\\.?)|" SZ ")",
	[RE_HEAD_BARE] = "(CUDA|HIP|XPU)" GAP "out" GAP "of" GAP "memory\\.",
	[RE_PAREN] = "\\(GPU\\s+(\\d+);\\s*(?=" SZ GAP "total" GAP "capacity;)",
	[RE_ASYNC_HEAD] =
	    "Allocation" GAP "on" GAP "device" GAP "(\\d+)" GAP "would" GAP
	    "exceed" GAP "allowed" GAP "memory\\.(?:\\s*\\(out" GAP "of" GAP
	    "memory\\))?",
	[RE_WARN] =
	    "memory" GAP "allocation" GAP "failed" GAP "with" GAP "OOM" GAP
	    "on" GAP "device" GAP "(\\d+)" GAP "while" GAP "trying" GAP "to"
	    GAP "allocate" GAP "(\\d+)" GAP "bytes"
	    "(?:\\s*\\(free:\\s*(\\d+),\\s*total:\\s*(\\d+)\\))?",
	[RE_NVML] =
	    "NVML_SUCCESS\\s*==\\s*[^\\n]{0,160}?INTERNAL" GAP "ASSERT" GAP
	    "FAILED" GAP "at" GAP "\"?[^\\n\"]{0,300}?CUDACachingAllocator"
	    "\\.cpp\"?(?::\\d+)?",
	[RE_OLD_GPU] = "\\s*\\(GPU\\s+(\\d+);",
	[RE_OLD_TOTAL] = "\\s*" SZ GAP "total" GAP "capacity;?",
	[RE_OLD_ALLOC] = "\\s*" SZ GAP "already" GAP "allocated;?",
	[RE_OLD_FREE] = "\\s*" SZ GAP "free;?",
	[RE_OLD_RESERVED] =
	    "\\s*" SZ GAP "(reserved" GAP "in" GAP "total" GAP "by" GAP
	    "PyTorch|cached)",
	[RE_OLD_CLOSE] = "\\s*\\)",
	[RE_NEW_GPU] =
	    "\\.?\\s*GPU\\s+(\\d+)" GAP "has" GAP "a" GAP "total" GAP
	    "capac(it|t)y" GAP "of" GAP SZ,
	[RE_NEW_FREE] = GAP "of" GAP "which" GAP SZ GAP "is" GAP "free",
	[RE_NEW_DOT] = "\\.",
	[RE_PROC] =
	    "\\s*(?:Process" GAP "(\\d+)|Including" GAP "non-PyTorch" GAP
	    "memory,\\s*this" GAP "process)" GAP "has" GAP SZ GAP "memory"
	    GAP "in" GAP "use\\.",
	[RE_ALLOWED] = "\\s*" SZ GAP "allowed;",
	[RE_SPLIT] =
	    "\\s*Of" GAP "the" GAP "allocated" GAP "memory" GAP SZ GAP "is"
	    GAP "allocated" GAP "by" GAP "PyTorch,\\s*(?:with" GAP SZ GAP
	    "allocated" GAP "in" GAP "private" GAP "pools" GAP "\\(e\\.g\\.,"
	    "\\s*(?:CUDA|HIP|XPU)" GAP "Graphs\\),\\s*)?and" GAP SZ GAP "is"
	    GAP "reserved" GAP "by" GAP "PyTorch" GAP "but" GAP "unallocated"
	    "\\.?",
	[RE_SPLIT_CUT] =
	    "\\s*Of" GAP "the" GAP "allocated" GAP "memory" GAP SZ GAP "is"
	    GAP "allocated" GAP "by" GAP "PyTorch",
	[RE_HINT] =
	    "\\s*If" GAP "reserved" GAP "(?:but" GAP "unallocated" GAP ")?"
	    "memory" GAP "is" GAP "(?:large|>>\\s*allocated" GAP "memory)"
	    GAP "try" GAP "setting" GAP "(?:(PYTORCH_[A-Z]+_ALLOC_CONF="
	    "expandable_segments:True)|(max_split_size_mb))" GAP "to" GAP
	    "avoid" GAP "fragmentation\\.(?:\\s+See" GAP "documentation" GAP
	    "for" GAP "Memory" GAP "Management(?:" GAP "and" GAP
	    "PYTORCH_[A-Z]+_ALLOC_CONF|\\s*\\(https?://[^\\s)]*\\))?)?",
	[RE_XPU_TAIL] =
	    "\\s*Please" GAP "use" GAP ".empty_cache." GAP "to" GAP "release"
	    GAP "all" GAP "unoccupied" GAP "cached" GAP "memory\\.",
	[RE_ASYNC_ALLOC] = "\\s*Currently" GAP "allocated\\s*:\\s*" SZ,
	[RE_ASYNC_REQ] = "\\s*Requested\\s*:\\s*" SZ,
	[RE_ASYNC_LIMIT] = "\\s*Device" GAP "limit\\s*:\\s*" SZ,
	[RE_ASYNC_FREE] =
	    "\\s*Free" GAP "\\(according" GAP "to" GAP "CUDA\\)\\s*:\\s*" SZ,
	[RE_ASYNC_PTLIMIT] =
	    "\\s*PyTorch" GAP "limit" GAP "\\(set" GAP "by" GAP
	    "user-supplied" GAP "memory" GAP "fraction\\)\\s*:\\s*" SZ,
};

/* The starters, in order of preference when two start at the same byte. */
static const int ex_starters[] = {
	RE_HEAD, RE_ASYNC_HEAD, RE_WARN, RE_NVML, RE_PAREN, RE_HEAD_BARE,
};
#define EX_NSTARTERS ((int)(sizeof ex_starters / sizeof ex_starters[0]))

/* Where a joined line came from. */
typedef struct {
	size_t t;               /* offset of its first byte in the text */
	size_t b;               /* offset of that byte in the window */
	uint64_t nl;            /* '\n' between the hit's line and this line */
} ex_seg;

struct ex_ctx {
	sk_set *st;             /* the other stacks' recognisers */
	pcre2_code *re[RE_COUNT];
	pcre2_match_data *md;
	pcre2_match_context *mc;
	pcre2_match_context *mc_start;  /* with an offset limit: starters */
	int rc;                 /* the last match's count of set pairs */
	char text[EX_TEXT_MAX];
	size_t tlen;
	ex_seg seg[EX_LINES_MAX];
	int nseg;
};

ex_ctx *
ex_new(bool jit, od_error *err)
{
	ex_ctx *x = calloc(1, sizeof *x);
	int i;

	if (x == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	for (i = 0; i < RE_COUNT; i++) {
		int code;
		PCRE2_SIZE off;

		/* Starters are searched for with an offset limit. */
		x->re[i] = pcre2_compile((PCRE2_SPTR)ex_patterns[i],
		    PCRE2_ZERO_TERMINATED, i >= RE_HEAD && i <= RE_NVML ?
		    PCRE2_USE_OFFSET_LIMIT : 0, &code, &off, NULL);
		if (x->re[i] == NULL) {
			PCRE2_UCHAR msg[128];

			pcre2_get_error_message(code, msg, sizeof msg);
			od_error_set(err, "extract.c", (uint64_t)i,
			    (uint64_t)off + 1, "internal pattern: %s", msg);
			ex_free(x);
			return NULL;
		}
		/* JIT is an optimisation: without it matching still works. */
		if (jit)
			(void)pcre2_jit_compile(x->re[i], PCRE2_JIT_COMPLETE);
	}
	x->st = sk_new(jit, err);
	if (x->st == NULL) {
		ex_free(x);
		return NULL;
	}
	x->md = pcre2_match_data_create(32, NULL);
	x->mc = pcre2_match_context_create(NULL);
	x->mc_start = pcre2_match_context_create(NULL);
	if (x->md == NULL || x->mc == NULL || x->mc_start == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		ex_free(x);
		return NULL;
	}
	pcre2_set_match_limit(x->mc, 1000000);
	pcre2_set_match_limit(x->mc_start, 1000000);
	pcre2_set_depth_limit(x->mc_start, 10000);
	pcre2_set_depth_limit(x->mc, 10000);
	return x;
}

void
ex_free(ex_ctx *x)
{
	int i;

	if (x == NULL)
		return;
	for (i = 0; i < RE_COUNT; i++)
		pcre2_code_free(x->re[i]);
	sk_free(x->st);
	pcre2_match_data_free(x->md);
	pcre2_match_context_free(x->mc);
	pcre2_match_context_free(x->mc_start);
	free(x);
}

/*
 * Matches pattern re against s[0..len) at offset at, anchored there or
 * not.  The groups are then read with ex_group and ex_size.
 */
static bool
ex_match(ex_ctx *x, int re, const char *s, size_t len, size_t at,
    bool anchored)
{
	x->rc = pcre2_match(x->re[re], (PCRE2_SPTR)s, len, at,
	    anchored ? PCRE2_ANCHORED : 0, x->md, x->mc);
	return x->rc > 0;
}

static size_t
ex_mstart(ex_ctx *x)
{
	return pcre2_get_ovector_pointer(x->md)[0];
}

static size_t
ex_mend(ex_ctx *x)
{
	return pcre2_get_ovector_pointer(x->md)[1];
}

/* Group g of the last match, or false when it did not take part. */
static bool
ex_group(ex_ctx *x, int g, size_t *start, size_t *len)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(x->md);

	/* Pairs from rc on are not written by the match: stale. */
	if (g >= x->rc || ov[2 * g] == PCRE2_UNSET)
		return false;
	*start = ov[2 * g];
	*len = ov[2 * g + 1] - ov[2 * g];
	return true;
}

/* The size in groups g (number) and g + 1 (unit); OD_UNKNOWN if absent or
 * too large (the NVML sentinel 17179869184.00 GiB lands here). */
static int64_t
ex_size(ex_ctx *x, const char *s, int g)
{
	size_t ns, nl, us, ul;
	int64_t v;

	if (!ex_group(x, g, &ns, &nl) || !ex_group(x, g + 1, &us, &ul))
		return OD_UNKNOWN;
	if (!od_size_parse(s + ns, nl, s + us, ul, &v))
		return OD_UNKNOWN;
	return v;
}

/* A decimal integer in group g, or def when absent or too large. */
static int64_t
ex_int(ex_ctx *x, const char *s, int g, int64_t def)
{
	size_t st, n, i;
	int64_t v = 0;

	if (!ex_group(x, g, &st, &n) || n == 0 || n > 18)
		return def;
	for (i = 0; i < n; i++)
		v = v * 10 + (s[st + i] - '0');
	return v;
}

size_t
ex_prefix(ex_ctx *x, const char *line, size_t len, int *rank, char *ts)
{
	size_t at = 0;
	int layers;
	bool srun_seen = false;

	/* Prefixes stack: a runtime timestamp, then [rank3]:, and so on. */
	for (layers = 0; layers < 6 && at < len; layers++) {
		size_t s, n;
		int g;

		if (!ex_match(x, RE_PREFIX, line, len, at, true) ||
		    ex_mend(x) == at)
			break;
		if (ex_group(x, 1, &s, &n) && ts != NULL && ts[0] == '\0') {
			if (n >= OD_TIMESTAMP_MAX)
				n = OD_TIMESTAMP_MAX - 1;
			memcpy(ts, line + s, n);
			ts[n] = '\0';
		}
		for (g = 2; g <= 5; g++) {
			if (!ex_group(x, g, &s, &n))
				continue;
			/* "12: " is a rank only once, at the outside. */
			if (g == 5 && srun_seen)
				break;
			if (g == 5)
				srun_seen = true;
			if (rank != NULL)
				*rank = (int)ex_int(x, line, g, -1);
		}
		at = ex_mend(x);
	}
	return at;
}

/* Appends s[0..n) to the joined text, as much as fits. */
static void
ex_append(ex_ctx *x, const char *s, size_t n)
{
	if (n > EX_TEXT_MAX - x->tlen)
		n = EX_TEXT_MAX - x->tlen;
	memcpy(x->text + x->tlen, s, n);
	x->tlen += n;
}

/* The end of the line that starts at p: the first '\r' or '\n', or len. */
static size_t
ex_eol(const char *buf, size_t p, size_t len)
{
	const char *nl = memchr(buf + p, '\n', len - p);
	const char *cr = memchr(buf + p, '\r', (nl != NULL ? (size_t)(nl -
	    (buf + p)) : len - p));

	if (cr != NULL)
		return (size_t)(cr - buf);
	return nl != NULL ? (size_t)(nl - buf) : len;
}

/* Whether a console that wraps at this width may have cut a word here. */
static bool
ex_console_width(size_t len)
{
	return len == 80 || len == 100 || len == 120 || len == 132 ||
	    len == 160 || len == 200;
}

static bool
ex_digits(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return true;
}

static bool
ex_word_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || c == '.' || c == '-' || c == '_';
}

/*
 * Joins the text from buffer offset s (on the hit's line) and the lines
 * after it, prefixes stripped, into x->text, lines joined by '\n'.  A line
 * break that a console's hard wrap put inside a word or a number ("2.00
 * Gi" / "B", "capac" / "ity") is joined without it: the line before is
 * exactly a console's width long and letters or digits meet at the break.
 */
static void
ex_join(ex_ctx *x, const ex_window *w, size_t s, int max_lines)
{
	size_t p = s, begin = w->line_start, prev_len = 0;
	uint64_t nl = 0;

	x->tlen = 0;
	x->nseg = 0;
	while (x->nseg < max_lines && x->tlen < EX_TEXT_MAX && p <= w->len) {
		size_t eol = ex_eol(w->buf, p, w->len);

		if (x->nseg > 0) {
			size_t pre = ex_prefix(x, w->buf + p, eol - p, NULL,
			    NULL);

			/* A line with a prefix, or a date, starts a record of
			 * its own: it is no console's wrap. */
			if (!(ex_console_width(prev_len) && pre == 0 &&
			    x->tlen > 0 && p + 4 < eol &&
			    ex_word_char(x->text[x->tlen - 1]) &&
			    x->text[x->tlen - 1] != '.' &&
			    ex_word_char(w->buf[p]) && !(ex_digits(w->buf + p, 4) &&
			    w->buf[p + 4] == '-')))
				ex_append(x, "\n", 1);
			p += pre;
		}
		x->seg[x->nseg].t = x->tlen;
		x->seg[x->nseg].b = p;
		x->seg[x->nseg].nl = nl;
		x->nseg++;
		ex_append(x, w->buf + p, eol - p);
		prev_len = eol - begin;
		if (eol >= w->len)
			break;
		if (w->buf[eol] == '\r' && eol + 1 < w->len &&
		    w->buf[eol + 1] == '\n')
			eol++;
		if (w->buf[eol] == '\n')
			nl++;
		p = begin = eol + 1;
	}
}

/* Maps an offset in the joined text back to the window. */
static void
ex_map(const ex_ctx *x, size_t t, size_t *b, uint64_t *nl)
{
	int i = x->nseg - 1;

	while (i > 0 && x->seg[i].t > t)
		i--;
	*b = x->seg[i].b + (t - x->seg[i].t);
	*nl = x->seg[i].nl;
}

/*
 * Looks back from the message start for the exception type that raised it:
 * "torch.OutOfMemoryError: ", "RuntimeError:", "OutOfMemoryError('".
 */
static void
ex_exception(const char *t, size_t start, char *out)
{
	size_t e = start, b;

	out[0] = '\0';
	while (e > 0 && (t[e - 1] == ' ' || t[e - 1] == '\t'))
		e--;
	if (e >= 2 && (t[e - 1] == '\'' || t[e - 1] == '"') && t[e - 2] == '(')
		e -= 2;
	else if (e >= 1 && t[e - 1] == ':')
		e--;
	else
		return;
	b = e;
	while (b > 0 && (t[b - 1] == '_' || t[b - 1] == '.' ||
	    (t[b - 1] >= 'a' && t[b - 1] <= 'z') ||
	    (t[b - 1] >= 'A' && t[b - 1] <= 'Z') ||
	    (t[b - 1] >= '0' && t[b - 1] <= '9')) && e - b < OD_EXCEPTION_MAX - 1)
		b--;
	/* Only names that end in Error or Exception. */
	if ((e - b >= 5 && memcmp(t + e - 5, "Error", 5) == 0) ||
	    (e - b >= 9 && memcmp(t + e - 9, "Exception", 9) == 0)) {
		/* A name glued to a word ("whyRuntimeError") keeps its tail. */
		memcpy(out, t + b, e - b);
		out[e - b] = '\0';
	}
}

/* Reads any number of per-process clauses from t at *at. */
static void
ex_procs(ex_ctx *x, const char *t, size_t tlen, size_t *at, od_memory *m)
{
	while (ex_match(x, RE_PROC, t, tlen, *at, true)) {
		size_t s, n;
		int64_t v = ex_size(x, t, 2);

		if (ex_group(x, 1, &s, &n)) {
			if (m->nprocs < OD_PROCS_MAX) {
				m->procs[m->nprocs].pid = ex_int(x, t, 1, -1);
				m->procs[m->nprocs].bytes = v;
				m->nprocs++;
			} else {
				m->procs_dropped++;
			}
		} else {
			m->process_in_use = v;
		}
		*at = ex_mend(x);
	}
}

/* The hint and the XPU tail that may follow the body. */
static void
ex_tail(ex_ctx *x, const char *t, size_t tlen, size_t *at, od_event *ev)
{
	size_t s, n;

	if (ex_match(x, RE_HINT, t, tlen, *at, true)) {
		if (ex_group(x, 1, &s, &n))
			ev->hint = OD_HINT_EXPANDABLE;
		else
			ev->hint = OD_HINT_MAX_SPLIT;
		*at = ex_mend(x);
	}
	if (ex_match(x, RE_XPU_TAIL, t, tlen, *at, true))
		*at = ex_mend(x);
}

/* The 1.x body: "(GPU 0; T total capacity; A already allocated; ...)". */
static bool
ex_body_old(ex_ctx *x, const char *t, size_t tlen, size_t *at, od_event *ev)
{
	od_memory *m = &ev->mem;
	size_t s, n;

	if (!ex_match(x, RE_OLD_GPU, t, tlen, *at, true))
		return false;
	ev->device = (int)ex_int(x, t, 1, -1);
	*at = ex_mend(x);
	ev->layout = OD_LAYOUT_RESERVED_TOTAL;
	if (!ex_match(x, RE_OLD_TOTAL, t, tlen, *at, true))
		return true;
	m->total = ex_size(x, t, 1);
	*at = ex_mend(x);
	if (!ex_match(x, RE_OLD_ALLOC, t, tlen, *at, true))
		return true;
	m->allocated = ex_size(x, t, 1);
	*at = ex_mend(x);
	if (ex_match(x, RE_OLD_FREE, t, tlen, *at, true)) {
		m->free = ex_size(x, t, 1);
		*at = ex_mend(x);
	}
	if (ex_match(x, RE_ALLOWED, t, tlen, *at, true)) {
		m->allowed = ex_size(x, t, 1);
		*at = ex_mend(x);
	}
	if (ex_match(x, RE_OLD_RESERVED, t, tlen, *at, true)) {
		if (ex_group(x, 3, &s, &n) && t[s] == 'c') {
			ev->layout = OD_LAYOUT_CACHED;
			m->reserved_unallocated = ex_size(x, t, 1);
		} else {
			m->reserved = ex_size(x, t, 1);
		}
		*at = ex_mend(x);
		if (ex_match(x, RE_OLD_CLOSE, t, tlen, *at, true))
			*at = ex_mend(x);
	}
	ex_tail(x, t, tlen, at, ev);
	return true;
}

/* The 2.x body: ". GPU 0 has a total capacity of T of which F is free. ..." */
static bool
ex_body_new(ex_ctx *x, const char *t, size_t tlen, size_t *at, od_event *ev)
{
	od_memory *m = &ev->mem;
	size_t s, n;

	if (!ex_match(x, RE_NEW_GPU, t, tlen, *at, true))
		return false;
	ev->device = (int)ex_int(x, t, 1, -1);
	ev->layout = ex_group(x, 2, &s, &n) && n == 1 ? OD_LAYOUT_CAPACTY :
	    OD_LAYOUT_CAPACITY;
	m->total = ex_size(x, t, 3);
	*at = ex_mend(x);
	if (ex_match(x, RE_NEW_FREE, t, tlen, *at, true)) {
		m->free = ex_size(x, t, 1);
		*at = ex_mend(x);
	}
	if (!ex_match(x, RE_NEW_DOT, t, tlen, *at, true))
		return true;
	*at = ex_mend(x);
	ex_procs(x, t, tlen, at, m);
	if (ex_match(x, RE_ALLOWED, t, tlen, *at, true)) {
		m->allowed = ex_size(x, t, 1);
		*at = ex_mend(x);
	}
	if (ex_match(x, RE_SPLIT, t, tlen, *at, true)) {
		m->allocated = ex_size(x, t, 1);
		m->private_pools = ex_size(x, t, 3);
		m->reserved_unallocated = ex_size(x, t, 5);
		*at = ex_mend(x);
		ex_tail(x, t, tlen, at, ev);
	} else if (ex_match(x, RE_SPLIT_CUT, t, tlen, *at, true)) {
		m->allocated = ex_size(x, t, 1);
		*at = ex_mend(x);
	}
	return true;
}

/* The cudaMallocAsync block, one field per line (or all on one line). */
static void
ex_body_async(ex_ctx *x, const char *t, size_t tlen, size_t *at, od_event *ev)
{
	static const int fields[] = {
		RE_ASYNC_ALLOC, RE_ASYNC_REQ, RE_ASYNC_LIMIT, RE_ASYNC_FREE,
		RE_ASYNC_PTLIMIT,
	};
	od_memory *m = &ev->mem;
	int64_t *dest[] = {
		&m->allocated, &m->requested, &m->total, &m->free, &m->allowed,
	};
	size_t i;

	for (i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		if (!ex_match(x, fields[i], t, tlen, *at, true))
			break;
		*dest[i] = ex_size(x, t, 1);
		*at = ex_mend(x);
	}
}

/* Fills in what follows from the printed figures (pytorch-allocator.md 6). */
static void
ex_derive(od_event *ev)
{
	od_memory *m = &ev->mem;

	switch (ev->layout) {
	case OD_LAYOUT_CACHED:
		/* "cached" is reserved - allocated in the 1.0 era. */
		if (m->allocated >= 0 && m->reserved_unallocated >= 0)
			m->reserved = m->allocated + m->reserved_unallocated;
		break;
	case OD_LAYOUT_RESERVED_TOTAL:
		if (m->reserved >= 0 && m->allocated >= 0 &&
		    m->reserved >= m->allocated)
			m->reserved_unallocated = m->reserved - m->allocated;
		break;
	case OD_LAYOUT_CAPACTY:
	case OD_LAYOUT_CAPACITY:
		if (m->allocated >= 0 && m->reserved_unallocated >= 0)
			m->reserved = m->allocated + m->reserved_unallocated;
		break;
	default:
		break;
	}
	if (m->process_in_use >= 0 && m->reserved >= 0 &&
	    m->process_in_use >= m->reserved)
		m->non_framework = m->process_in_use - m->reserved;
}

/*
 * Finds the earliest starter that covers the hit at text offset ht: it
 * must end at or after the hit and start no later than just after it.
 * The offset limit stops each search at the last start that could do, so
 * that a hit costs the same whatever the text after it holds.
 */
static int
ex_find_start(ex_ctx *x, size_t ht, size_t *ms)
{
	int best = -1, i;
	size_t from = ht > 200 ? ht - 200 : 0;

	*ms = SIZE_MAX;
	pcre2_set_offset_limit(x->mc_start, ht + 8);
	for (i = 0; i < EX_NSTARTERS; i++) {
		int re = ex_starters[i];
		size_t at = from;

		while ((x->rc = pcre2_match(x->re[re], (PCRE2_SPTR)x->text,
		    x->tlen, at, 0, x->md, x->mc_start)) > 0) {
			if (ex_mend(x) < ht) {
				at = ex_mend(x) > at ? ex_mend(x) : at + 1;
				continue;
			}
			if (ex_mstart(x) <= ht + 8 && ex_mstart(x) < *ms) {
				*ms = ex_mstart(x);
				best = re;
			}
			break;
		}
	}
	return best;
}

/*
 * Reads a PyTorch allocator message that starts at ms with starter re.
 * Returns false when what starts there is no report after all.
 */
static bool
ex_pytorch(ex_ctx *x, int starter, size_t ms, size_t *me, od_event *ev)
{
	const char *t = x->text;
	size_t at, gs, gn;
	bool head, exa;

	/* Put the starter's match back for the group readers. */
	if (!ex_match(x, starter, t, x->tlen, ms, true))
		return false;
	at = ex_mend(x);
	ev->fatal = true;
	switch (starter) {
	case RE_HEAD:
		head = ex_group(x, 1, &gs, &gn);
		if (head && t[gs] == 'H')
			ev->kind = OD_KIND_HIP;
		else if (head && t[gs] == 'X')
			ev->kind = OD_KIND_XPU;
		exa = ex_group(x, 2, &gs, &gn);
		ev->mem.requested = ex_size(x, t, 3);
		ev->layout = OD_LAYOUT_HEAD_ONLY;
		/* "Tried to allocate N" alone is not enough: MPS and others
		 * say it too.  It needs the head or a body. */
		if (!exa && !ex_body_old(x, t, x->tlen, &at, ev) &&
		    !ex_body_new(x, t, x->tlen, &at, ev) && !head)
			return false;
		break;
	case RE_HEAD_BARE:
		ex_exception(t, ms, ev->exception);
		if (ev->exception[0] == '\0')
			return false;
		if (t[ms] == 'H')
			ev->kind = OD_KIND_HIP;
		else if (t[ms] == 'X')
			ev->kind = OD_KIND_XPU;
		ev->layout = OD_LAYOUT_HEAD_ONLY;
		break;
	case RE_PAREN:
		at = ms;
		if (!ex_body_old(x, t, x->tlen, &at, ev) ||
		    ev->mem.allocated == OD_UNKNOWN)
			return false;
		break;
	case RE_ASYNC_HEAD:
		ev->device = (int)ex_int(x, t, 1, -1);
		ev->layout = OD_LAYOUT_ASYNC;
		ex_body_async(x, t, x->tlen, &at, ev);
		break;
	case RE_WARN:
		ev->device = (int)ex_int(x, t, 1, -1);
		ev->mem.requested = ex_int(x, t, 2, OD_UNKNOWN);
		ev->mem.free = ex_int(x, t, 3, OD_UNKNOWN);
		ev->mem.total = ex_int(x, t, 4, OD_UNKNOWN);
		ev->layout = OD_LAYOUT_WARNING;
		ev->fatal = false;
		break;
	case RE_NVML:
		ev->layout = OD_LAYOUT_NVML_ASSERT;
		break;
	default:
		return false;
	}
	ex_derive(ev);
	*me = at;
	return true;
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
	static const char *const before[] = {
		"an out of memory with exception", "recovering from OOM",
	};
	static const char *const after[] = {
		"attempting to recover from OOM", "recovered from OOM",
		"skipping batch", "retrying with a smaller batch",
		"Decreasing batch size",
	};
	size_t b = ms, e = me + 400 < tlen ? me + 400 : tlen, i;

	while (b > 0 && t[b - 1] != '\n' && ms - b < 300)
		b--;
	for (i = 0; i < sizeof before / sizeof before[0]; i++)
		if (memmem(t + b, ms - b, before[i], strlen(before[i])) != NULL)
			return true;
	for (i = 0; i < sizeof after / sizeof after[0]; i++)
		if (memmem(t + me, e - me, after[i], strlen(after[i])) != NULL)
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

bool
ex_extract(ex_ctx *x, const ex_window *w, od_event *ev, ex_span *span)
{
	size_t content, s, ht, ms = 0, me = 0, b, n, ps, ss;
	uint64_t nl, skip = 0;
	const char *t = x->text;
	int rank = -1, pstart, sstart, tries, pass;
	bool ok = false;

	ev->timestamp[0] = '\0';
	content = w->line_start;
	if (w->line_start_known)
		content += ex_prefix(x, w->buf + w->line_start,
		    ex_eol(w->buf, w->line_start, w->len) - w->line_start,
		    &rank, ev->timestamp);
	s = content;
	if (s < w->from)
		s = w->from;
	if (w->hit > EX_BACK_MAX && s < w->hit - EX_BACK_MAX)
		s = w->hit - EX_BACK_MAX;
	if (s > w->hit)
		s = w->hit;
	ht = w->hit - s;

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

		ex_join(x, w, s, lines);
		ok = false;
		skip = 0;
		/*
		 * The earliest message that covers the hit wins; a PyTorch
		 * message wins a tie.  A table recogniser whose condition
		 * fails is left out and the search is made again without it.
		 */
		pstart = ex_find_start(x, ht, &ps);
		for (tries = 0; tries < 8 && !ok; tries++) {
			sstart = sk_find(x->st, t, x->tlen, ht, skip, &ss);
			if (pstart >= 0 && (sstart < 0 || ps <= ss)) {
				ms = ps;
				ok = ex_pytorch(x, pstart, ms, &me, ev);
				if (!ok)
					pstart = -1;
			} else if (sstart >= 0) {
				ms = ss;
				follows |= sk_follows(x->st, sstart);
				ok = sk_fill(x->st, sstart, t, x->tlen, ms, &me, ev);
				if (!ok)
					skip |= UINT64_C(1) << sstart;
			} else {
				break;
			}
			if (!ok)
				ex_reset(ev);
		}
		/* Done unless more lines could change the outcome. */
		if (x->nseg < lines || (ok && !follows &&
		    me < x->seg[x->nseg - 1].t))
			break;
		if (ok && pass == 0)
			ex_reset(ev);
	}
	if (!ok)
		return false;
	if (rank >= 0 && ev->rank < 0)
		ev->rank = rank;
	if (ex_recovered(t, x->tlen, ms, me))
		ev->fatal = false;
	if (ev->exception[0] == '\0')
		ex_exception(t, ms, ev->exception);
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
	}
	ex_map(x, ms, &b, &nl);
	span->start = b;
	ex_map(x, me, &b, &nl);
	span->end = b > w->hit ? b : w->hit + 1;
	span->lines = nl;
	return true;
}

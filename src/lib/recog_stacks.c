/*
 * recog_stacks.c: the recognisers of every stack but PyTorch's caching
 * allocator (the sk_recogniser of recogniser.h), compiled from the table
 * of recog_table.h that the YAML files load (rules/recognisers.yaml).
 *
 * Each recogniser is a candidate: its kind, how sure its message makes
 * us, the fixed strings the prefilter needs for it, and a PCRE2 pattern
 * whose named groups say what they fill (sk_set_field below):
 *
 *   req, total, free, alloc, limit, peak, other   memory figures
 *   vm, anon, file, shmem, hlimit, husage         host figures
 *   device, pid, exit, rank                        integers
 *   comm, signal, error, shape, dtype, allocator   strings
 *   job          a string: the Slurm job id ("StepId=N.M", "Job N")
 *   nonfatal                                       the line is a warning
 *   head         the message heads a report whose kill line may come
 *                many lines later (the kernel's "invoked oom-killer"):
 *                a report of the same failure within EV_DUMP_LINES
 *                lines joins it (event.c)
 *   needed       a size: the request and what the allocator held, in
 *                one figure (CuPy before v7: "total" is size +
 *                pool.total_bytes(), cupy/cuda/memory.pyx _malloc); the
 *                allocated figure is it less the request
 *
 * A size group's suffix gives its unit: none for a number with its unit
 * ("1.17GiB", "4.00G", "27.10GB"), _b for bytes, _kb for KiB, _gib for
 * GiB, _bin for a unit written "GB" that means GiB.  Two groups may share
 * a name; of a base and its _b group, the _b one (an exact byte count)
 * wins, as the names come sorted.
 *
 * A recogniser may read on into the lines after its match (follow): the
 * Stats block after a TensorFlow BFC warning, the "Cuda failure" line
 * after an NCCL wrapper, the exit code after Kubernetes' OOMKilled.  A
 * required follow is a condition: without it the recogniser gives no
 * event; an absent one the reverse (the kernel's oom-kill summary line
 * is an event only where the "Killed process" line after it is gone).
 *
 * In a pattern, a plain space stands for any run of blanks and line
 * breaks (sk_widen), so that wrapped messages still match; a space before
 * a quantifier stands for one optional blank.
 */
#define _GNU_SOURCE             /* memmem */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>             /* strncasecmp */

#include "recog_table.h"

typedef struct {
	const sk_table *table;  /* borrowed */
	int n;
	rx_code **re;           /* n of each; follow[i] NULL without one */
	rx_code **follow;
	rx_match *m;
	/* Per recogniser, the searches stopped at a PCRE2 limit (regex.h). */
	uint64_t *limits;
	/* The sum of limits[]: it changes whenever one does, so that a
	 * result remembered by the extractor (extract.c) is known to have
	 * been found by the same patterns, with no strike since. */
	uint64_t strikes;
	/* Every recogniser's anchors, in the order of the table. */
	ex_anchor *anchors;
	size_t nanchors;
	/* Per numbered text (ex_recogniser.text), n searches remembered,
	 * n of what holds in longer texts (rg_cover_memo's pre), and the
	 * text of the finds now: its slot and number. */
	rg_memo *memo[RG_TEXTS];
	rg_memo *pre;
	rg_prefix *prefix;      /* n of them: each pattern's (rg_prefix) */
	int slot;
	rg_text tx;
	/* Per numbered text, a stretch [a, l) where no pattern's match
	 * starts (each pattern's memo says so): a hit whose searches all
	 * fall in it has none to make (sk_find).  gen 0: none. */
	struct { uint64_t gen; size_t tlen, a, l; } none[RG_TEXTS];
} sk_set;

/*
 * Writes pattern with each plain space outside a character class turned
 * into \s+ (or \s before a quantifier).  False when it does not fit.
 */
bool
sk_widen(const char *p, char *out, size_t cap)
{
	size_t n = 0;
	bool cls = false;

	for (; *p != '\0'; p++) {
		const char *rep = NULL;
		char one[3] = { *p, '\0', '\0' };

		if (*p == '\\' && p[1] != '\0') {
			one[1] = *++p;
			rep = one;
		} else if (*p == '[' && !cls) {
			cls = true;
		} else if (*p == ']' && cls) {
			cls = false;
		} else if (*p == ' ' && !cls) {
			rep = strchr("?*+{", p[1]) != NULL && p[1] != '\0' ?
			    "\\s" : "\\s+";
		}
		if (rep == NULL)
			rep = one;
		if (n + strlen(rep) + 1 > cap)
			return false;
		memcpy(out + n, rep, strlen(rep));
		n += strlen(rep);
	}
	out[n] = '\0';
	return true;
}

static rx_code *
sk_compile(const sk_spec *sp, const char *pattern, unsigned options,
    bool jit, od_error *err)
{
	char wide[SK_PATTERN_MAX];

	if (!sk_widen(pattern, wide, sizeof wide)) {
		od_error_set(err, sp->file, sp->pattern_at.line,
		    sp->pattern_at.col, "recogniser '%s': the pattern is longer "
		    "than %d bytes once widened", sp->id, SK_PATTERN_MAX - 1);
		return NULL;
	}
	return rx_compile(wide, RX_DUPNAMES | options, jit, sp->file,
	    pattern == sp->pattern ? sp->pattern_at.line : sp->follow_at.line,
	    err);
}

static void
sk_destroy(void *self)
{
	sk_set *s = self;
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++) {
		if (s->re != NULL)
			rx_code_free(s->re[i]);
		if (s->follow != NULL)
			rx_code_free(s->follow[i]);
	}
	free(s->re);
	free(s->follow);
	free(s->limits);
	for (i = 0; i < RG_TEXTS; i++)
		free(s->memo[i]);
	free(s->pre);
	free(s->prefix);
	rx_match_free(s->m);
	free(s->anchors);
	free(s);
}

static void *
sk_create(bool jit, const struct sk_table *table, od_error *err)
{
	sk_set *s = calloc(1, sizeof *s);
	size_t count = 0;
	int i, k;

	if (s == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	s->table = table;
	s->n = table != NULL ? table->n : 0;
	for (i = 0; i < s->n; i++)
		count += (size_t)table->v[i].nanchors;
	s->re = calloc((size_t)s->n + 1, sizeof *s->re);
	s->follow = calloc((size_t)s->n + 1, sizeof *s->follow);
	s->anchors = calloc(count + 1, sizeof *s->anchors);
	s->limits = calloc((size_t)s->n + 1, sizeof *s->limits);
	_Static_assert(RG_TEXTS == 2, "the checks below name both memos");
	for (k = 0; k < RG_TEXTS; k++)
		s->memo[k] = calloc((size_t)s->n + 1, sizeof *s->memo[k]);
	s->pre = calloc((size_t)s->n + 1, sizeof *s->pre);
	s->prefix = malloc(((size_t)s->n + 1) * sizeof *s->prefix);
	if (s->re == NULL || s->follow == NULL || s->anchors == NULL ||
	    s->limits == NULL || s->memo[0] == NULL || s->memo[1] == NULL ||
	    s->pre == NULL || s->prefix == NULL ||
	    (s->m = rx_match_new(err)) == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		sk_destroy(s);
		return NULL;
	}
	for (i = 0; i <= s->n; i++)
		rg_prefix_init(&s->prefix[i]);
	for (i = 0; i < s->n; i++) {
		const sk_spec *sp = &table->v[i];

		s->re[i] = sp->pattern_re != NULL ?
		    rx_code_copy(sp->pattern_re, jit, err) :
		    sk_compile(sp, sp->pattern, RX_OFFSET_LIMIT, jit, err);
		if (s->re[i] == NULL || (sp->follow != NULL && (s->follow[i] =
		    sp->follow_re != NULL ? rx_code_copy(sp->follow_re, jit, err) :
		    sk_compile(sp, sp->follow, 0, jit, err)) == NULL)) {
			sk_destroy(s);
			return NULL;
		}
		for (k = 0; k < sp->nanchors; k++)
			s->anchors[s->nanchors++] = sp->anchors[k];
	}
	return s;
}

static const ex_anchor *
sk_anchors(const void *self, size_t *n)
{
	const sk_set *s = self;

	*n = s->nanchors;
	return s->anchors;
}

static bool
sk_follows(const void *self, int i)
{
	const sk_set *s = self;

	return i >= 0 && i < s->n && s->table->v[i].follow != NULL;
}

/* Whether line p[0..n) is blank or goes on with a string of the
 * statement above it: its first other byte a quote or a closing
 * parenthesis, or a string prefix (f, r, b, u) and a quote. */
static bool
sk_string_line(const char *p, size_t n)
{
	size_t i = 0, k;

	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
		i++;
	if (i == n || p[i] == '"' || p[i] == '\'' || p[i] == ')')
		return true;
	for (k = 0; k < 2 && i < n && p[i] != '\0' &&
	    strchr("fFrRbBuU", p[i]) != NULL; k++)
		i++;
	return i < n && (p[i] == '"' || p[i] == '\'');
}

bool
sk_quoted_in_source(const rg_text *tx, const char *t, size_t tlen,
    size_t ms)
{
	size_t b = ms, e;

	if (ms == 0 || (t[ms - 1] != '"' && t[ms - 1] != '\''))
		return false;
	while (b > 0 && t[b - 1] != '\n' && ms - b < 200)
		b--;
	if (memmem(t + b, ms - b, "raise ", 6) == NULL)
		return false;
	if (tx == NULL || !tx->at_end)
		return true;
	/* The input ends with the statement: no line of the exception
	 * follows it, the raise line is all that shows the failure. */
	for (e = ms; e < tlen && t[e] != '\n'; e++)
		;
	while (e < tlen) {
		size_t l = e + 1, n = 0;

		while (l + n < tlen && t[l + n] != '\n')
			n++;
		if (!sk_string_line(t + l, n))
			return true;
		e = l + n;
	}
	return false;
}

/* The earliest recogniser's match that covers the hit, among those not
 * in skip; of two at the same byte, the one first in the table. */
static int
sk_find(void *self, const char *t, size_t tlen, size_t ht,
    const rg_skip *skip, size_t *ms)
{
	sk_set *s = self;
	int best = -1, i;
	size_t at;

	bool limited;
	size_t lo = 0, hi = SIZE_MAX;

	*ms = SIZE_MAX;
	/* No pattern's match starts where rg_cover would look for one:
	 * none covers the hit, and no search would strike a limit. */
	if (s->tx.gen != 0 && s->none[s->slot].gen == s->tx.gen &&
	    s->none[s->slot].tlen == tlen &&
	    s->none[s->slot].a <= (ht > RG_BACK ? ht - RG_BACK : 0) &&
	    ht + RG_AHEAD < s->none[s->slot].l)
		return -1;
	for (i = 0; i < s->n; i++) {
		if (rg_skipped(skip, i) || s->limits[i] >= SK_STRIKES)
			continue;
		if (rg_cover_memo(s->m, s->re[i], &s->tx, &s->memo[s->slot][i],
		    &s->pre[i], &s->prefix[i], t, tlen, ht,
		    sk_quoted_in_source, &at, &limited)) {
			if (at < *ms) {
				*ms = at;
				best = i;
			}
		} else if (limited) {
			s->limits[i]++;
			s->strikes++;
		}
	}
	/* Where every pattern's memo knows no start, all of them. */
	for (i = 0; s->tx.gen != 0 && best < 0 && i < s->n; i++) {
		const rg_memo *c = &s->memo[s->slot][i];

		if (s->limits[i] >= SK_STRIKES)
			continue;
		if (c->gen != s->tx.gen || c->tlen != tlen)
			break;
		lo = c->a > lo ? c->a : lo;
		hi = c->l < hi ? c->l : hi;
	}
	if (s->tx.gen != 0 && best < 0 && i == s->n && lo < hi) {
		s->none[s->slot].gen = s->tx.gen;
		s->none[s->slot].tlen = tlen;
		s->none[s->slot].a = lo;
		s->none[s->slot].l = hi;
	}
	return best;
}

/* The text of the finds that follow (ex_recogniser.text). */
static void
sk_text(void *self, int slot, const rg_text *tx)
{
	sk_set *s = self;
	bool ok = slot >= 0 && slot < RG_TEXTS;

	s->slot = ok ? slot : 0;
	s->tx = ok ? *tx : (rg_text){ 0 };
}

/* The patterns that match nowhere in t (ex_recogniser.absent): one search
 * each from the start, with no offset limit; one stopped at a limit says
 * nothing. */
static bool
sk_absent(void *self, const char *t, size_t tlen, rg_skip *none)
{
	sk_set *s = self;
	bool all = true;
	int i;

	for (i = 0; i < s->n; i++) {
		if (i < RG_CANDIDATES_MAX && (s->limits[i] >= SK_STRIKES ||
		    (!rx_find(s->m, s->re[i], t, tlen, 0) &&
		    rx_nomatch(s->m)))) {
			none->w[i / 64] |= UINT64_C(1) << (i % 64);
			continue;
		}
		all = false;
	}
	return all;
}

/* A decimal integer, maybe negative, maybe with thousands commas. */
static bool
sk_int(const char *p, size_t n, int64_t *out)
{
	int64_t v = 0;
	size_t i = 0;
	bool neg = n > 0 && p[0] == '-', any = false;

	for (i = neg; i < n; i++) {
		if (p[i] == ',')
			continue;
		if (p[i] < '0' || p[i] > '9' || v > (INT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (p[i] - '0');
		any = true;
	}
	*out = neg ? -v : v;
	return any;
}

/* Reads the size in p[0..n) in the unit that the group's suffix names. */
static bool
sk_size(const char *suffix, const char *p, size_t n, int64_t *out)
{
	char buf[64];
	int64_t v;

	if (strcmp(suffix, "b") == 0)
		return sk_int(p, n, out) && *out >= 0;
	if (strcmp(suffix, "kb") == 0) {
		if (!sk_int(p, n, &v) || v < 0 || v > INT64_MAX / 1024)
			return false;
		*out = v * 1024;
		return true;
	}
	if (strcmp(suffix, "bin") == 0) {
		/* A unit written "GB" that means GiB (old MPS messages;
		 * Paddle's HumanReadableSize, which also writes "kB"). */
		if (n + 2 > sizeof buf)
			return false;
		memcpy(buf, p, n);
		if (n >= 2 && buf[n - 1] == 'B' && buf[n - 2] == 'k')
			buf[n - 2] = 'K';
		if (n >= 2 && buf[n - 1] == 'B' && strchr("KMGT", buf[n - 2]) &&
		    buf[n - 2] != '\0') {
			buf[n - 1] = 'i';
			buf[n++] = 'B';
		}
		return od_size_parse_text(buf, n, out);
	}
	if (strcmp(suffix, "gib") == 0) {
		if (n + 4 > sizeof buf)
			return false;
		memcpy(buf, p, n);
		memcpy(buf + n, "GiB", 3);
		return od_size_parse_text(buf, n + 3, out);
	}
	return od_size_parse_text(p, n, out);
}

/* Where each field of sk_fields lives in an event, in the same order. */
static const struct {
	size_t off;
	size_t cap;             /* text fields: the buffer's size */
} sk_places[] = {
	{ offsetof(od_event, mem.requested), 0 },
	{ offsetof(od_event, mem.total), 0 },
	{ offsetof(od_event, mem.free), 0 },
	{ offsetof(od_event, mem.allocated), 0 },
	{ offsetof(od_event, mem.allowed), 0 },
	{ offsetof(od_event, mem.peak), 0 },
	{ offsetof(od_event, mem.non_framework), 0 },
	{ offsetof(od_event, host.total_vm), 0 },
	{ offsetof(od_event, host.anon_rss), 0 },
	{ offsetof(od_event, host.file_rss), 0 },
	{ offsetof(od_event, host.shmem_rss), 0 },
	{ offsetof(od_event, host.limit), 0 },
	{ offsetof(od_event, host.usage), 0 },
	{ offsetof(od_event, device), 0 },
	{ offsetof(od_event, host.pid), 0 },
	{ offsetof(od_event, host.exit_code), 0 },
	{ offsetof(od_event, rank), 0 },
	{ offsetof(od_event, host.process), sizeof ((od_event *)0)->host.process },
	{ offsetof(od_event, host.signal), sizeof ((od_event *)0)->host.signal },
	{ offsetof(od_event, error), sizeof ((od_event *)0)->error },
	{ offsetof(od_event, tensor_shape), sizeof ((od_event *)0)->tensor_shape },
	{ offsetof(od_event, dtype), sizeof ((od_event *)0)->dtype },
	{ offsetof(od_event, allocator), sizeof ((od_event *)0)->allocator },
	{ offsetof(od_event, host.job), sizeof ((od_event *)0)->host.job },
};

const sk_field sk_fields[] = {
	{ "req", SK_FIELD_SIZE }, { "total", SK_FIELD_SIZE },
	{ "free", SK_FIELD_SIZE }, { "alloc", SK_FIELD_SIZE },
	{ "limit", SK_FIELD_SIZE }, { "peak", SK_FIELD_SIZE },
	{ "other", SK_FIELD_SIZE }, { "vm", SK_FIELD_SIZE },
	{ "anon", SK_FIELD_SIZE }, { "file", SK_FIELD_SIZE },
	{ "shmem", SK_FIELD_SIZE }, { "hlimit", SK_FIELD_SIZE },
	{ "husage", SK_FIELD_SIZE },
	{ "device", SK_FIELD_INT }, { "pid", SK_FIELD_INT },
	{ "exit", SK_FIELD_INT }, { "rank", SK_FIELD_INT },
	{ "comm", SK_FIELD_TEXT }, { "signal", SK_FIELD_TEXT },
	{ "error", SK_FIELD_TEXT }, { "shape", SK_FIELD_TEXT },
	{ "dtype", SK_FIELD_TEXT }, { "allocator", SK_FIELD_TEXT },
	{ "job", SK_FIELD_TEXT },
	{ NULL, SK_FIELD_TEXT },
};

_Static_assert(sizeof sk_places / sizeof sk_places[0] ==
    sizeof sk_fields / sizeof sk_fields[0] - 1, "a place for every field");

/* Field f of ev: its size or integer, widened to int64_t. */
static int64_t
sk_field_int(const od_event *ev, int f)
{
	const char *p = (const char *)ev + sk_places[f].off;

	if (sk_places[f].off == offsetof(od_event, device) ||
	    sk_places[f].off == offsetof(od_event, rank))
		return *(const int *)(const void *)p;
	return *(const int64_t *)(const void *)p;
}

bool
sk_field_value(const od_event *ev, int f, char *buf, size_t cap)
{
	const char *p = (const char *)ev + sk_places[f].off;
	int64_t v;

	if (sk_fields[f].type == SK_FIELD_TEXT) {
		if (p[0] == '\0')
			return false;
		snprintf(buf, cap, "%s", p);
		return true;
	}
	v = sk_field_int(ev, f);
	/* A fresh event has -1 in every number but the exit code, which
	 * has_exit says is given. */
	if (sk_places[f].off == offsetof(od_event, host.exit_code) ?
	    !ev->host.has_exit : v == -1)
		return false;
	snprintf(buf, cap, "%lld", (long long)v);
	return true;
}

/* The index in sk_fields of name, or -1. */
static int
sk_field_index(const char *name)
{
	int i;

	for (i = 0; sk_fields[i].name != NULL; i++)
		if (strcmp(sk_fields[i].name, name) == 0)
			return i;
	return -1;
}

/* Fills the field of the event arg that group name names from the text
 * p[0..n) (an rx_name_fn).  A name of no field is left alone: the loader
 * refuses one (recog_load.c). */
void
sk_set_field(void *arg, const char *name, const char *p, size_t n)
{
	od_event *ev = arg;
	char base[32];
	const char *suffix = "";
	const char *us = strrchr(name, '_');
	int64_t v;
	int f;

	rx_copy_text(base, sizeof base, name, strlen(name));
	if (us != NULL && (strcmp(us, "_b") == 0 || strcmp(us, "_kb") == 0 ||
	    strcmp(us, "_gib") == 0 || strcmp(us, "_bin") == 0)) {
		base[us - name] = '\0';
		suffix = us + 1;
	}
	if (strcmp(name, "nonfatal") == 0) {
		ev->fatal = false;
		return;
	}
	if (strcmp(name, "benign") == 0) {
		ev->fatal = false;
		ev->benign = true;
		return;
	}
	if (strcmp(name, "head") == 0) {
		ev->dump_head = true;
		return;
	}
	f = sk_field_index(base);
	if (f < 0 || (suffix[0] != '\0' && sk_fields[f].type != SK_FIELD_SIZE))
		return;
	if (sk_fields[f].type == SK_FIELD_SIZE) {
		/* An exact byte count beats a rounded one ("(rounded to N)",
		 * "4.00G (4294967296 bytes)"): _b groups come later. */
		if (sk_size(suffix, p, n, &v))
			*(int64_t *)(void *)((char *)ev + sk_places[f].off) = v;
		return;
	}
	if (strcmp(name, "device") == 0 && sk_int(p, n, &v) && v < 1 << 20)
		ev->device = (int)v;
	else if (strcmp(name, "rank") == 0 && sk_int(p, n, &v) && v < 1 << 30)
		ev->rank = (int)v;
	else if (strcmp(name, "pid") == 0 && sk_int(p, n, &v))
		ev->host.pid = v;
	else if (strcmp(name, "exit") == 0 && sk_int(p, n, &v)) {
		ev->host.exit_code = v;
		ev->host.has_exit = true;
	} else if (strcmp(name, "signal") == 0)
		rx_copy_text(ev->host.signal, sizeof ev->host.signal,
		    /* "bus error" in any case (the worker's line of
		     * torch/csrc/DataLoader.cpp says it in lower case, a
		     * retyped copy in any) is strsignal(SIGBUS)'s "Bus
		     * error", as the parent's line names it. */
		    n == 9 && strncasecmp(p, "bus error", 9) == 0 ?
		    "Bus error" : p, n);
	else if (sk_fields[f].type == SK_FIELD_TEXT)
		rx_copy_text((char *)ev + sk_places[f].off, sk_places[f].cap, p,
		    n);
}

/* What sk_fill collects: the event, and a "needed" figure (above). */
typedef struct {
	od_event *ev;
	int64_t needed;
} sk_fill_arg;

/* sk_set_field, with the needed figure kept aside (an rx_name_fn). */
static void
sk_set_field_or_needed(void *arg, const char *name, const char *p, size_t n)
{
	sk_fill_arg *a = arg;
	int64_t v;

	if (strncmp(name, "needed", 6) == 0) {
		const char *suffix = name[6] == '_' ? name + 7 : "";

		if (sk_size(suffix, p, n, &v))
			a->needed = v;
		return;
	}
	sk_set_field(a->ev, name, p, n);
}

/* Whether the match t[ms..me) stands on a line that only talks of it
 * (rg_mention), its line's first RG_BACK bytes before it and the rest of
 * its first line. */
static bool
sk_in_prose(const char *t, size_t tlen, size_t ms, size_t me)
{
	size_t ls = ms, le = ms;

	while (ls > 0 && t[ls - 1] != '\n' && ms - ls < RG_BACK)
		ls--;
	while (le < tlen && t[le] != '\n')
		le++;
	if (me > le)
		me = le;
	return rg_mention(t + ls, le - ls, ms - ls, me - ls);
}

/* Fills ev from recogniser i matched at ms, and from the lines after it
 * where it reads on. */
static bool
sk_fill(void *self, int i, const char *t, size_t tlen, size_t ms, size_t *me,
    od_event *ev)
{
	sk_set *s = self;
	const sk_spec *sp;
	bool found = false;
	sk_fill_arg arg = { .ev = ev, .needed = -1 };

	if (i < 0 || i >= s->n)
		return false;
	if (!rx_at(s->m, s->re[i], t, tlen, ms)) {
		s->limits[i] += rx_limited(s->m);
		s->strikes += rx_limited(s->m);
		return false;
	}
	sp = &s->table->v[i];
	if (sp->quiet_in_prose && sk_in_prose(t, tlen, ms, rx_end(s->m)))
		return false;
	ev->kind = sp->kind;
	ev->framework = sp->framework;
	ev->confidence = sp->conf;
	ev->layout = OD_LAYOUT_OTHER_STACK;
	ev->fatal = sp->fatal;
	*me = rx_end(s->m);
	/* The names come sorted: the _b names follow their base, and an
	 * exact byte count so beats a rounded one. */
	rx_names(s->m, s->re[i], t, sk_set_field_or_needed, &arg);
	if (sp->follow != NULL) {
		/* Read on, at most follow_lines lines past the match. */
		size_t end = *me, at = *me;
		int lines = 0;

		while (end < tlen && lines <= sp->follow_lines)
			if (t[end++] == '\n')
				lines++;
		while (at < end && rx_find(s->m, s->follow[i], t, end, at)) {
			rx_names(s->m, s->follow[i], t,
			    sk_set_field_or_needed, &arg);
			found = true;
			*me = rx_end(s->m);
			at = rx_end(s->m) > at ? rx_end(s->m) : at + 1;
		}
		s->limits[i] += rx_limited(s->m);
		s->strikes += rx_limited(s->m);
		if ((sp->follow_required && !found) ||
		    (sp->follow_absent && found))
			return false;
	}
	if (arg.needed >= 0 && ev->mem.requested >= 0 &&
	    arg.needed >= ev->mem.requested && ev->mem.allocated < 0)
		ev->mem.allocated = arg.needed - ev->mem.requested;
	if (ev->confidence == OD_CONF_LOW)
		ev->verify_hint = sp->confirm;
	return true;
}

uint64_t
sk_limit_hits(const void *self, int i)
{
	const sk_set *s = self;

	return i >= 0 && i < s->n ? s->limits[i] : 0;
}

uint64_t
sk_strikes(const void *self)
{
	return ((const sk_set *)self)->strikes;
}

int
sk_stopped(const void *self, int from)
{
	const sk_set *s = self;
	int i;

	for (i = from > 0 ? from : 0; i < s->n; i++)
		if (s->limits[i] >= SK_STRIKES)
			return i;
	return -1;
}

/* A recogniser whose condition fails is left out, and the others
 * searched again (retry). */
const ex_recogniser sk_recogniser = {
	.create = sk_create,
	.destroy = sk_destroy,
	.anchors = sk_anchors,
	.find = sk_find,
	.fill = sk_fill,
	.follows = sk_follows,
	.retry = true,
	.absent = sk_absent,
	.text = sk_text,
};

/*
 * regex.c: compiling and matching PCRE2 patterns under one set of limits
 * (regex.h).
 */
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "regex.h"

struct rx_code {
	pcre2_code *re;
	/*
	 * The same pattern compiled anchored, for rx_at, on its first use
	 * there (NULL before, or when that compile failed).  PCRE2 10.42's
	 * JIT does not take PCRE2_ANCHORED at match time (pcre2jit(3), "The
	 * PCRE2_ANCHORED and PCRE2_ENDANCHORED options are not supported at
	 * match time"): such a match runs in the interpreter, several times
	 * slower, while the option given at compile time is JIT-compiled.
	 * Both mean the same (pcre2_compile(3), PCRE2_ANCHORED), and the
	 * groups and their names are the same.  pattern and opts are kept
	 * for that compile.  It is made only at the RX_ANCHORED_AFTER-th
	 * anchored match (counted in anchored_calls): compiling and
	 * JIT-compiling a pattern costs as much as some hundred interpreted
	 * matches, which a short log (each run of the test suite) never
	 * makes up.
	 */
	pcre2_code *anchored;
	bool anchored_tried;
	uint32_t anchored_calls;
	/* re's machine code for PCRE2_PARTIAL_HARD (rx_find_upto_whole),
	 * added at the RX_WHOLE_AFTER-th call, as the anchored code is. */
	bool whole_tried, whole_ok;
	uint32_t whole_calls;
	bool jit;
	/*
	 * re's machine code is made at its first unanchored match
	 * (rx_jit), not at compile time: a run uses a few of the table's
	 * patterns, and JIT-compiling all of them took about a fifth of the
	 * start-up's instructions (31 M of 150 M, valgrind --tool=callgrind)
	 * and their pages.  What a match answers is the same either way:
	 * the same machine code runs every unanchored match.
	 */
	bool jit_tried;
	bool jitted;            /* re has machine code: pcre2_jit_match runs it */
	uint32_t opts;
	char *pattern;          /* owned */
	/* The name table, read once at compile time. */
	uint32_t names;
	uint32_t name_size;
	PCRE2_SPTR name_table;
};

struct rx_match {
	pcre2_match_data *md;
	pcre2_match_context *mc;
	int rc;                 /* the last match's count of set pairs */
};

rx_code *
rx_compile(const char *pattern, unsigned options, bool jit,
    const char *table, uint64_t row, od_error *err)
{
	rx_code *c = calloc(1, sizeof *c);
	uint32_t opts = 0, groups = 0;
	PCRE2_SIZE off;
	int code;

	if (c == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		return NULL;
	}
	if (options & RX_OFFSET_LIMIT)
		opts |= PCRE2_USE_OFFSET_LIMIT;
	if (options & RX_DUPNAMES)
		opts |= PCRE2_DUPNAMES;
	if (options & RX_CASELESS)
		opts |= PCRE2_CASELESS;
	c->re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts,
	    &code, &off, NULL);
	if (c->re == NULL) {
		PCRE2_UCHAR msg[128];

		pcre2_get_error_message(code, msg, sizeof msg);
		od_error_set(err, table, row, (uint64_t)off + 1,
		    "internal pattern: %s", msg);
		free(c);
		return NULL;
	}
	/* A match with more groups than pairs would give rc 0, which reads
	 * as no match: refuse such a pattern here instead. */
	pcre2_pattern_info(c->re, PCRE2_INFO_CAPTURECOUNT, &groups);
	if (groups >= RX_PAIRS) {
		od_error_set(err, table, row, 0, "internal pattern: %u groups, "
		    "more than %d", (unsigned)groups, RX_PAIRS - 1);
		rx_code_free(c);
		return NULL;
	}
	c->opts = opts;
	pcre2_pattern_info(c->re, PCRE2_INFO_NAMECOUNT, &c->names);
	pcre2_pattern_info(c->re, PCRE2_INFO_NAMEENTRYSIZE, &c->name_size);
	pcre2_pattern_info(c->re, PCRE2_INFO_NAMETABLE, &c->name_table);
	/* JIT is an optimisation: without it matching still works. */
	if (jit) {
		/* Kept for the anchored code (rx_at); without it, an
		 * anchored match runs in the interpreter, as it did. */
		c->jit = true;
		c->pattern = strdup(pattern);
	}
	return c;
}

rx_code *
rx_code_copy(const rx_code *c, bool jit, od_error *err)
{
	rx_code *d;

	if (c == NULL) {
		od_error_set(err, NULL, 0, 0, "internal pattern: no compiled "
		    "pattern to copy");
		return NULL;
	}
	if ((d = calloc(1, sizeof *d)) == NULL ||
	    (d->re = pcre2_code_copy(c->re)) == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		rx_code_free(d);
		return NULL;
	}
	d->opts = c->opts;
	d->jit = jit;
	/* As in rx_compile: without the pattern (c has none, or no memory
	 * for it) there is no anchored code, and the matches are the same. */
	if (jit && c->pattern != NULL)
		d->pattern = strdup(c->pattern);
	/* The name table lies in the copy's own memory. */
	pcre2_pattern_info(d->re, PCRE2_INFO_NAMECOUNT, &d->names);
	pcre2_pattern_info(d->re, PCRE2_INFO_NAMEENTRYSIZE, &d->name_size);
	pcre2_pattern_info(d->re, PCRE2_INFO_NAMETABLE, &d->name_table);
	return d;
}

void
rx_code_free(rx_code *c)
{
	if (c == NULL)
		return;
	pcre2_code_free(c->re);
	pcre2_code_free(c->anchored);
	free(c->pattern);
	free(c);
}

rx_match *
rx_match_new(od_error *err)
{
	rx_match *m = calloc(1, sizeof *m);

	if (m == NULL ||
	    (m->md = pcre2_match_data_create(RX_PAIRS, NULL)) == NULL ||
	    (m->mc = pcre2_match_context_create(NULL)) == NULL) {
		od_error_set(err, NULL, 0, 0, "out of memory");
		rx_match_free(m);
		return NULL;
	}
	pcre2_set_match_limit(m->mc, RX_MATCH_LIMIT);
	pcre2_set_depth_limit(m->mc, RX_DEPTH_LIMIT);
	return m;
}

void
rx_match_free(rx_match *m)
{
	if (m == NULL)
		return;
	pcre2_match_data_free(m->md);
	pcre2_match_context_free(m->mc);
	free(m);
}

/* The errors that pcre2_match gives for its arguments and
 * pcre2_jit_match, which checks none, would not: no text, a start past
 * its end, a limit on a pattern not compiled for one.  True, with the
 * same error in m, for such a call. */
static bool
rx_refused(rx_match *m, const rx_code *re, const char *s, size_t len,
    size_t at, size_t last)
{
	if (s == NULL)
		m->rc = PCRE2_ERROR_NULL;
	else if (at > len)
		m->rc = PCRE2_ERROR_BADOFFSET;
	else if (last != PCRE2_UNSET &&
	    (re->opts & PCRE2_USE_OFFSET_LIMIT) == 0)
		m->rc = PCRE2_ERROR_BADOFFSETLIMIT;
	else
		return false;
	return true;
}

/* Makes re's machine code, once, when JIT was asked (rx_code). */
static void
rx_jit(rx_code *re)
{
	if (!re->jit || re->jit_tried)
		return;
	re->jit_tried = true;
	re->jitted = pcre2_jit_compile(re->re, PCRE2_JIT_COMPLETE) == 0;
}

static bool
rx_run(rx_match *m, rx_code *re, const char *s, size_t len, size_t at,
    uint32_t options, size_t last)
{
	if (options == 0)
		rx_jit(re);
	pcre2_set_offset_limit(m->mc, last);
	/*
	 * Machine code is run directly: pcre2_match would only check the
	 * arguments again before calling it (pcre2api(3), "pcre2_jit_match
	 * ... bypasses the sanity checks"), a cost that a table of sixty
	 * patterns tried at every hit pays sixty times.  The arguments are
	 * ours, and the checks that could fail are made here first
	 * (rx_refused).
	 */
	if (rx_refused(m, re, s, len, at, last))
		return false;
	if (re->jitted && options == 0)
		m->rc = pcre2_jit_match(re->re, (PCRE2_SPTR)s, len, at, 0, m->md,
		    m->mc);
	else
		m->rc = pcre2_match(re->re, (PCRE2_SPTR)s, len, at, options,
		    m->md, m->mc);
	return m->rc > 0;
}

/* Anchored matches of a pattern in the interpreter before its anchored
 * machine code is made (rx_code). */
#define RX_ANCHORED_AFTER 256

/* The anchored code of c, compiled and JIT-compiled at the
 * RX_ANCHORED_AFTER-th call; NULL before, or when there is none (no JIT
 * asked, no memory). */
static pcre2_code *
rx_anchored(rx_code *c)
{
	PCRE2_SIZE off;
	int code;

	if (!c->anchored_tried && c->pattern != NULL &&
	    ++c->anchored_calls >= RX_ANCHORED_AFTER) {
		c->anchored_tried = true;
		c->anchored = pcre2_compile((PCRE2_SPTR)c->pattern,
		    PCRE2_ZERO_TERMINATED, c->opts | PCRE2_ANCHORED, &code, &off,
		    NULL);
		/* Without machine code it would be no faster. */
		if (c->anchored != NULL &&
		    pcre2_jit_compile(c->anchored, PCRE2_JIT_COMPLETE) != 0) {
			pcre2_code_free(c->anchored);
			c->anchored = NULL;
		}
	}
	return c->anchored;
}

bool
rx_at(rx_match *m, rx_code *re, const char *s, size_t len, size_t at)
{
	pcre2_code *a = rx_anchored(re);

	if (a == NULL)
		return rx_run(m, re, s, len, at, PCRE2_ANCHORED, PCRE2_UNSET);
	if (rx_refused(m, re, s, len, at, PCRE2_UNSET))
		return false;
	pcre2_set_offset_limit(m->mc, PCRE2_UNSET);
	m->rc = pcre2_jit_match(a, (PCRE2_SPTR)s, len, at, 0, m->md, m->mc);
	return m->rc > 0;
}

/* Searches for the text's end in re's machine code before that code is
 * made (rx_find_upto_whole): none is made for a log with fewer (some ten
 * milliseconds for the table's patterns, which an anchor-dense input of
 * a few MiB that asks a few thousand rounds never makes up; 100 000
 * reports ask a hundred thousand). */
#define RX_WHOLE_AFTER 4096

int
rx_find_upto_whole(rx_match *m, rx_code *re, const char *s, size_t len,
    size_t at, size_t last)
{
	rx_jit(re);
	if (!re->whole_ok) {
		if (re->whole_tried || !re->jitted ||
		    ++re->whole_calls < RX_WHOLE_AFTER)
			return -1;
		/* A mode added to the same code (pcre2jit(3), "a pattern can
		 * be compiled for more than one mode"): the complete one
		 * stays as it is. */
		re->whole_tried = true;
		re->whole_ok = pcre2_jit_compile(re->re,
		    PCRE2_JIT_PARTIAL_HARD) == 0;
		if (!re->whole_ok)
			return -1;
	}
	if (rx_refused(m, re, s, len, at, last))
		return -1;
	pcre2_set_offset_limit(m->mc, last);
	/*
	 * PCRE2_PARTIAL_HARD: the search gives up with PCRE2_ERROR_PARTIAL
	 * as soon as a match attempt reaches the end of s wanting more
	 * (pcre2partial(3)), before any complete match found later; a
	 * complete match or no match is so found without looking at the end.
	 */
	m->rc = pcre2_jit_match(re->re, (PCRE2_SPTR)s, len, at,
	    PCRE2_PARTIAL_HARD, m->md, m->mc);
	if (m->rc > 0)
		return 1;
	return m->rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

bool
rx_whole_ready(const rx_code *re)
{
	return re->whole_ok;
}

bool
rx_find(rx_match *m, rx_code *re, const char *s, size_t len, size_t at)
{
	return rx_run(m, re, s, len, at, 0, PCRE2_UNSET);
}

bool
rx_find_upto(rx_match *m, rx_code *re, const char *s, size_t len,
    size_t at, size_t last)
{
	/* PCRE2_UNSET means no limit: a limit that large is none anyway. */
	return rx_run(m, re, s, len, at, 0, last);
}

bool
rx_limited(const rx_match *m)
{
	return m->rc == PCRE2_ERROR_MATCHLIMIT ||
	    m->rc == PCRE2_ERROR_DEPTHLIMIT || m->rc == PCRE2_ERROR_HEAPLIMIT ||
	    m->rc == PCRE2_ERROR_JIT_STACKLIMIT;
}

bool
rx_nomatch(const rx_match *m)
{
	return m->rc == PCRE2_ERROR_NOMATCH;
}

size_t
rx_start(const rx_match *m)
{
	return pcre2_get_ovector_pointer(m->md)[0];
}

size_t
rx_end(const rx_match *m)
{
	return pcre2_get_ovector_pointer(m->md)[1];
}

bool
rx_group(const rx_match *m, int g, size_t *start, size_t *len)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);

	/* Pairs from rc on are not written by the match: stale. */
	if (g < 0 || g >= m->rc || ov[2 * g] == PCRE2_UNSET)
		return false;
	*start = ov[2 * g];
	*len = ov[2 * g + 1] - ov[2 * g];
	return true;
}

int64_t
rx_int(const rx_match *m, const char *s, int g, int64_t def)
{
	size_t st, n, i;
	int64_t v = 0;

	if (!rx_group(m, g, &st, &n) || n == 0 || n > 18)
		return def;
	for (i = 0; i < n; i++) {
		if (s[st + i] < '0' || s[st + i] > '9')
			return def;
		v = v * 10 + (s[st + i] - '0');
	}
	return v;
}

void
rx_copy_text(char *dst, size_t cap, const char *p, size_t n)
{
	const char *nul;
	size_t k = 0, run;

	if (cap == 0)
		return;
	/* A NUL byte would end the field there: it becomes U+FFFD, as a
	 * byte that is not UTF-8 does in the reports, and what follows it
	 * is kept. */
	while (n > 0 && k < cap - 1) {
		nul = memchr(p, '\0', n);
		run = nul != NULL ? (size_t)(nul - p) : n;
		if (run > cap - 1 - k)
			run = cap - 1 - k;
		memcpy(dst + k, p, run);
		k += run;
		p += run;
		n -= run;
		if (n == 0 || *p != '\0')
			continue;
		if (cap - 1 - k < 3)
			break;
		memcpy(dst + k, "\xef\xbf\xbd", 3);
		k += 3;
		p++;
		n--;
	}
	dst[k] = '\0';
}

bool
rx_copy(const rx_match *m, const char *s, int g, char *dst, size_t cap)
{
	size_t st, n;

	if (!rx_group(m, g, &st, &n))
		return false;
	rx_copy_text(dst, cap, s + st, n);
	return true;
}

void
rx_names(const rx_match *m, const rx_code *re, const char *s, rx_name_fn *fn,
    void *arg)
{
	uint32_t i;

	/* Each entry: the group number in two bytes, then the name. */
	for (i = 0; i < re->names; i++) {
		PCRE2_SPTR e = re->name_table + (size_t)i * re->name_size;
		int g = (int)(((uint32_t)e[0] << 8) | e[1]);
		size_t st, n;

		if (rx_group(m, g, &st, &n))
			fn(arg, (const char *)(e + 2), s + st, n);
	}
}

const char *
rx_name(const rx_code *re, uint32_t i)
{
	/* Each entry: the group's number in two bytes, then its name. */
	if (i >= re->names)
		return NULL;
	return (const char *)re->name_table + (size_t)i * re->name_size + 2;
}

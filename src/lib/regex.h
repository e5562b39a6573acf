/*
 * regex.h: the one place that talks to PCRE2.
 *
 * Every pattern of the core (the PyTorch grammar, the other stacks' table,
 * the line prefixes, the context lines) is compiled by rx_compile and
 * matched through an rx_match, so that one set of limits bounds every
 * match: a hostile line makes a match fail, never run away.
 */
#ifndef OD_REGEX_H
#define OD_REGEX_H

#include "core.h"

/*
 * The limits of one match: the backtracking steps PCRE2 may take (with or
 * without JIT), and the depth of nested backtracking (the interpreter
 * only; JIT code has its own bounded stack).  A match that reaches a limit
 * fails.
 */
#define RX_MATCH_LIMIT 1000000
#define RX_DEPTH_LIMIT 10000

/* Capture pairs an rx_match holds: a pattern may have at most
 * RX_PAIRS - 1 groups (rx_compile says so when it has more). */
#define RX_PAIRS 64

/* Compile options. */
enum {
	RX_OFFSET_LIMIT = 1u << 0,      /* may be searched with rx_find_upto */
	RX_DUPNAMES = 1u << 1,          /* two groups may share a name */
	RX_CASELESS = 1u << 2,          /* letters match in either case */
};

/* A compiled pattern. */
typedef struct rx_code rx_code;

/*
 * Compiles pattern with the options above, to machine code too when jit
 * says so (only an optimisation: matching is the same without it).  On
 * failure fills err, naming the pattern by table and row (a source file
 * and the pattern's index in its table), and returns NULL.
 */
rx_code *rx_compile(const char *pattern, unsigned options, bool jit,
    const char *table, uint64_t row, od_error *err);
void rx_code_free(rx_code *re);

/*
 * A copy of c that matches as c does, for a user that matches on its own
 * (each copy has its own lazily made machine code, regex.c): copying the
 * compiled pattern (pcre2_code_copy) costs a memcpy, compiling it again
 * about as much as the first time.  With jit, the copy makes machine code
 * as rx_compile's with jit does (its anchored code needs c compiled with
 * jit: the pattern is kept only then).  NULL, with err saying why, when c
 * is NULL or memory runs out.
 */
rx_code *rx_code_copy(const rx_code *c, bool jit, od_error *err);

/* The state of matching: match data and a match context with the limits.
 * One per user; the last match's groups stay readable until the next. */
typedef struct rx_match rx_match;

rx_match *rx_match_new(od_error *err);
void rx_match_free(rx_match *m);

/* Matches re against s[0..len) anchored at offset at.  re is not const:
 * its anchored machine code is compiled on the first call (regex.c). */
bool rx_at(rx_match *m, rx_code *re, const char *s, size_t len,
    size_t at);
/* The first match of re in s[0..len) that starts at or after at. */
bool rx_find(rx_match *m, rx_code *re, const char *s, size_t len,
    size_t at);
/* The same, for a match that starts no later than last: the search stops
 * there, whatever follows.  re must be compiled with RX_OFFSET_LIMIT. */
bool rx_find_upto(rx_match *m, rx_code *re, const char *s, size_t len,
    size_t at, size_t last);

/*
 * rx_find_upto, answered only when the answer cannot depend on what would
 * follow s[0..len): 1, a match (in m) that no attempt before it reached
 * the end of s to find; 0, no match, and no attempt reached the end; -1,
 * not known (an attempt reached the end, a limit struck, or no machine
 * code for it: it is made at a pattern's 4096th call, and re is not const
 * for it).  So a 1 or a 0 holds for any longer text that begins with s,
 * as long as every start looked at is before len.
 */
int rx_find_upto_whole(rx_match *m, rx_code *re, const char *s, size_t len,
    size_t at, size_t last);
/* Whether rx_find_upto_whole can answer for re now (its partial mode is
 * made): a search that could not need not be made twice. */
bool rx_whole_ready(const rx_code *re);

/* Whether the last match failed at one of the limits above (or at the
 * JIT's stack) rather than for want of a match: the pattern backtracks
 * too much for the text. */
bool rx_limited(const rx_match *m);

/* Whether the last search ended for want of a match: no limit, no other
 * error. */
bool rx_nomatch(const rx_match *m);

/* Where the last match starts and ends. */
size_t rx_start(const rx_match *m);
size_t rx_end(const rx_match *m);

/* Group g of the last match: false when it did not take part. */
bool rx_group(const rx_match *m, int g, size_t *start, size_t *len);
/* The decimal digits of group g of the last match in s, or def when the
 * group did not take part, is empty or has more than 18 digits. */
int64_t rx_int(const rx_match *m, const char *s, int g, int64_t def);
/* Copies group g of the last match in s into dst as rx_copy_text does;
 * false, dst untouched, when it did not take part. */
bool rx_copy(const rx_match *m, const char *s, int g, char *dst, size_t cap);
/* Copies p[0..n) into dst (cap bytes, NUL included, cut to fit); a NUL
 * byte in p becomes U+FFFD (three bytes), so that the rest is kept. */
void rx_copy_text(char *dst, size_t cap, const char *p, size_t n);

/* Calls fn for each named group of re that took part in the last match,
 * with its name and its text in s, in the order of the names. */
typedef void rx_name_fn(void *arg, const char *name, const char *p,
    size_t n);
void rx_names(const rx_match *m, const rx_code *re, const char *s,
    rx_name_fn *fn, void *arg);

/* The name of re's i-th named group in the order of the names, or NULL
 * past the last. */
const char *rx_name(const rx_code *re, uint32_t i);

#endif

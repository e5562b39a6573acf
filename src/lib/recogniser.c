/*
 * recogniser.c: what the recognisers share (recogniser.h): the covering
 * search and the exception type before a message.
 */
#include <string.h>

#include "hash.h"
#include "recogniser.h"

bool
rg_cover(rx_match *m, rx_code *re, const char *t, size_t tlen,
    size_t ht, bool (*reject)(const struct rg_text *tx, const char *t,
    size_t tlen, size_t start), size_t *start)
{
	size_t at = ht > RG_BACK ? ht - RG_BACK : 0;

	/*
	 * No start past ht + RG_AHEAD can do: the offset limit stops the
	 * search there, so that a hit costs the same whatever the text after
	 * it holds.  A match that ends before the hit is passed over.
	 */
	while (rx_find_upto(m, re, t, tlen, at, ht + RG_AHEAD)) {
		if (rx_end(m) < ht ||
		    (reject != NULL && reject(NULL, t, tlen, rx_start(m)))) {
			at = rx_end(m) > at ? rx_end(m) : at + 1;
			continue;
		}
		if (rx_start(m) > ht + RG_AHEAD)
			return false;
		*start = rx_start(m);
		return true;
	}
	return false;
}

void
rg_prefix_init(rg_prefix *p)
{
	int i;

	for (i = 0; i < RG_PREFIX_WAYS; i++)
		p->e[i].r = -1;
	p->turn = 0;
	p->misses = 0;
}

/* The hash of a search of t[0..len) from from up to last (rg_prefix). */
static uint64_t
rg_prefix_hash(const char *t, size_t len, size_t from, size_t last)
{
	return od_hash_bytes(OD_HASH_SEED ^ len ^ (uint64_t)from << 20 ^
	    (uint64_t)last << 40, t, len);
}

/*
 * rx_find_upto_whole(m, re, t, tlen, from, last), with *ws and *we set to
 * the match's bounds on a 1: first from px (may be NULL), or by a search
 * of the text's first last + 1 + RG_PREFIX_MORE bytes whose answer, when
 * it has one, holds in this text (it begins with them) and goes to px;
 * else the search of the whole text, as asked.
 */
static int
rg_whole(rx_match *m, rx_code *re, rg_prefix *px, const rg_text *tx,
    const char *t, size_t tlen, size_t from, size_t last, size_t *ws,
    size_t *we)
{
	/* The hash of the last numbered text's bytes, for the other
	 * patterns' searches of them (one per thread: scanners may run in
	 * several); a hash is only a first look, the bytes are compared. */
	static _Thread_local struct {
		uint64_t gen, h;
		size_t len, from, last;
	} hm;
	size_t len = last + 1 + RG_PREFIX_MORE;
	uint64_t h;
	int i, r;

	if (px != NULL && px->misses >= RG_PREFIX_MISSES &&
	    ++px->misses % RG_PREFIX_SPARSE != 0)
		px = NULL;
	if (px != NULL && len < tlen && len <= RG_PREFIX_MAX &&
	    rx_whole_ready(re)) {
		if (hm.gen != tx->gen || hm.len != len || hm.from != from ||
		    hm.last != last) {
			hm.gen = tx->gen;
			hm.len = len;
			hm.from = from;
			hm.last = last;
			hm.h = rg_prefix_hash(t, len, from, last);
		}
		h = hm.h;
		for (i = 0; i < RG_PREFIX_WAYS; i++)
			if (px->e[i].r >= 0 && px->e[i].hash == h &&
			    px->e[i].len == len && px->e[i].from == from &&
			    px->e[i].last == last &&
			    memcmp(px->e[i].bytes, t, len) == 0) {
				px->misses = 0;
				*ws = px->e[i].ms;
				*we = px->e[i].me;
				return px->e[i].r;
			}
		if (px->misses < RG_PREFIX_MISSES)
			px->misses++;
		r = rx_find_upto_whole(m, re, t, len, from, last);
		if (r >= 0) {
			i = (int)(px->turn++ % RG_PREFIX_WAYS);
			px->e[i].hash = h;
			px->e[i].len = len;
			px->e[i].from = from;
			px->e[i].last = last;
			px->e[i].r = r;
			px->e[i].ms = r == 1 ? rx_start(m) : 0;
			px->e[i].me = r == 1 ? rx_end(m) : 0;
			memcpy(px->e[i].bytes, t, len);
			*ws = px->e[i].ms;
			*we = px->e[i].me;
			return r;
		}
	}
	r = rx_find_upto_whole(m, re, t, tlen, from, last);
	if (r == 1) {
		*ws = rx_start(m);
		*we = rx_end(m);
	}
	return r;
}

/*
 * The leftmost match of re that starts in [at, lim] (rx_find_upto), from
 * c where it knows: 1 with *ms and *me set, 0 for none, -1 when the search
 * stopped at a limit (made again as asked, without the look on).  What a
 * search finds that no longer text could change also goes to pre; px (may
 * be NULL) answers those searches where it can (rg_whole).
 */
static int
rg_find_memo(rx_match *m, rx_code *re, const rg_text *tx, rg_memo *c,
    rg_memo *pre, rg_prefix *px, const char *t, size_t tlen, size_t at,
    size_t lim, size_t *ms, size_t *me)
{
	uint64_t gen = tx->gen;
	size_t from = at, last = lim + RG_LOOK_ON, ws = 0, we = 0;
	int r = -1;

	if (gen != 0 && c->gen == gen && c->tlen == tlen && c->a <= at &&
	    at <= c->l) {
		if (c->hit) {
			if (c->l > lim)
				return 0;
			*ms = c->l;
			*me = c->e;
			return 1;
		}
		if (lim < c->l)
			return 0;
		from = c->l;    /* [at, c->l) holds no start */
	} else if (gen != 0) {
		*c = (rg_memo){ .gen = gen, .tlen = tlen, .a = at, .l = at };
	}
	if (gen == 0)
		goto asked;
	/* Every start looked at before the end: the attempts there are
	 * those of a longer text (rx_find_upto_whole). */
	if (tx->longer && pre != NULL && last + 1 < tlen &&
	    (r = rg_whole(m, re, px, tx, t, tlen, from, last, &ws, &we)) >= 0) {
		if (pre->gen != gen || pre->tlen != tlen || pre->hit ||
		    pre->l != from)
			*pre = (rg_memo){ .gen = gen, .tlen = tlen, .a = from,
			    .l = from };
		if (r == 1) {
			pre->l = ws;
			pre->e = we;
			pre->hit = true;
		} else {
			pre->l = last + 1;
		}
	}
	if (r < 0 && rx_find_upto(m, re, t, tlen, from, last)) {
		r = 1;
		ws = rx_start(m);
		we = rx_end(m);
	}
	if (r == 1) {
		c->l = ws;
		c->e = we;
		c->hit = true;
		if (c->l > lim)
			return 0;
		*ms = c->l;
		*me = c->e;
		return 1;
	}
	if (r == 0 || rx_nomatch(m)) {
		c->l = last + 1;
		return 0;
	}
	/* Stopped somewhere up to lim + RG_LOOK_ON, which the search
	 * asked for may not reach: that one is made. */
	c->gen = 0;
asked:
	if (rx_find_upto(m, re, t, tlen, at, lim)) {
		*ms = rx_start(m);
		*me = rx_end(m);
		return 1;
	}
	return rx_limited(m) ? -1 : 0;
}

bool
rg_cover_memo(rx_match *m, rx_code *re, const rg_text *tx, rg_memo *c,
    rg_memo *pre, rg_prefix *px, const char *t, size_t tlen, size_t ht,
    bool (*reject)(const rg_text *tx, const char *t, size_t tlen,
    size_t start), size_t *start,
    bool *limited)
{
	size_t at = ht > RG_BACK ? ht - RG_BACK : 0, ms, me;
	int r;

	/* A text that begins with the one pre was kept for: what holds in
	 * every longer one holds in this. */
	if (tx->gen != 0 && tx->base != 0 && pre != NULL &&
	    (c->gen != tx->gen || c->tlen != tlen) && pre->gen == tx->base &&
	    pre->tlen == tx->base_len && tlen > tx->base_len) {
		*c = *pre;
		c->gen = tx->gen;
		c->tlen = tlen;
	}
	/* rg_cover's loop, each search through rg_find_memo. */
	*limited = false;
	while ((r = rg_find_memo(m, re, tx, c, pre, px, t, tlen, at,
	    ht + RG_AHEAD, &ms, &me)) > 0) {
		if (me < ht || (reject != NULL && reject(tx, t, tlen, ms))) {
			at = me > at ? me : at + 1;
			continue;
		}
		*start = ms;
		return true;
	}
	*limited = r < 0;
	return false;
}

void
rg_exception(const char *t, size_t start, char *out)
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

/* Whether p[0..n) starts with a size unit word: bytes, B, KiB ... PB. */
static bool
rg_unit(const char *p, size_t n)
{
	size_t i = 0;

	if (n >= 5 && strncmp(p, "bytes", 5) == 0)
		i = 5;
	else if (n >= 3 && strchr("KMGTP", p[0]) != NULL && p[1] == 'i' &&
	    p[2] == 'B')
		i = 3;
	else if (n >= 2 && strchr("KMGTP", p[0]) != NULL && p[1] == 'B')
		i = 2;
	else if (n >= 1 && p[0] == 'B')
		i = 1;
	else
		return false;
	return i == n || !((p[i] >= 'a' && p[i] <= 'z') ||
	    (p[i] >= 'A' && p[i] <= 'Z'));
}

bool
rg_placeholder(const char *p, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		char c = p[i];

		if (i > 0 && ((p[i - 1] >= 'a' && p[i - 1] <= 'z') ||
		    (p[i - 1] >= 'A' && p[i - 1] <= 'Z') ||
		    (p[i - 1] >= '0' && p[i - 1] <= '9')))
			continue;
		j = i;
		if (c == 'X' || c == 'Y' || c == 'N' || c == 'x' || c == 'y' ||
		    c == 'n') {
			/* One letter said again: "XXXX", "xxx", "N", "NN". */
			while (j < n && p[j] == c)
				j++;
			if (j - i == 1 && c != 'N' && c != 'X')
				continue;
		} else if (c == '%') {
			j++;
			while (j < n && j - i < 5 && strchr("lzuhd", p[j]) != NULL)
				j++;
			if (j - i < 2 || (p[j - 1] != 'd' && p[j - 1] != 'u'))
				continue;
		} else if (c == '.' && i + 2 < n && p[i + 1] == '.' &&
		    p[i + 2] == '.') {
			/* An elided figure: "failed to allocate ... bytes". */
			j = i + 3;
		} else if (c == '\xe2' && i + 2 < n && p[i + 1] == '\x80' &&
		    p[i + 2] == '\xa6') {
			/* The same as one character, U+2026. */
			j = i + 3;
		} else if (c == '{' || c == '<') {
			char close = c == '{' ? '}' : '>';

			while (j < n && j - i < 24 && p[j] != close && p[j] != '\n')
				j++;
			if (j >= n || p[j] != close)
				continue;
			j++;
		} else
			continue;
		if (j < n && (p[j] >= 'a' && p[j] <= 'z'))
			continue;
		if (j < n && p[j] == ' ')
			j++;
		if (rg_unit(p + j, n - j))
			return true;
	}
	return false;
}

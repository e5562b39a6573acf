/*
 * bench/pfcost.c: what a Vectorscan literal database costs on a log, and
 * whether a two-stage prefilter (a small database of fragments, the full
 * one only around their hits) finds the same matches.  A measuring tool,
 * not part of oomdoc; build it by hand:
 *
 *     cc -O2 -g -Wall -Wextra -o /tmp/pfcost bench/pfcost.c -lhs
 *
 * A LIST file has one literal a line: a first byte 'i' (caseless, as
 * HS_FLAG_CASELESS) or 's' (with case), then the literal, with "\\" for
 * one backslash.  bench/gates.py writes the prefilter's own list so.
 *
 *     pfcost scan LIST FILE [REPS]     matches, CPU s a pass, ns a byte
 *     pfcost count LIST FILE           the matches of each literal, a line each
 *     pfcost two GATES LIST FILE       the two-stage scan against the full one
 *
 * The file is scanned in blocks of 1 MiB, as the scanner's buffer holds
 * it.  In "two", each hit of a gate opens a window from the longest
 * literal of LIST before the gate's start to as far after its end; the
 * windows that touch are joined, and the full database scans each; the
 * matches (end, id) are compared in order with those of the full scan of
 * the block.  With NOFULL=1 in the environment the full scan is left out
 * (to count the two-stage scan's instructions alone under callgrind:
 * valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*hs_scan').
 */
#define _GNU_SOURCE
#include <hs/hs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PF_BLOCK (1u << 20)
#define PF_LINE 4096

/* A list of literals, in the arrays hs_compile_lit_multi takes. */
typedef struct {
	char **text;
	unsigned *flags, *ids;
	size_t *len;
	unsigned n, cap;
	size_t longest;
} pf_list;

/* Matches in the order of their ends, offsets in the file. */
typedef struct {
	unsigned long long *end;
	unsigned *id;
	size_t n, cap;
	size_t base;            /* the file offset of the bytes scanned */
} pf_matches;

static void
pf_die(const char *what)
{
	fprintf(stderr, "pfcost: %s\n", what);
	exit(2);
}

static void *
pf_grow(void *p, size_t n)
{
	if ((p = realloc(p, n)) == NULL)
		pf_die("out of memory");
	return p;
}

static void
pf_load(const char *path, pf_list *l)
{
	FILE *f = fopen(path, "r");
	char line[PF_LINE];

	if (f == NULL)
		pf_die("cannot open a list");
	memset(l, 0, sizeof *l);
	while (fgets(line, sizeof line, f) != NULL) {
		size_t n = strlen(line), o = 0, i;
		char *s;

		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n < 2)
			continue;
		if (l->n == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 256;
			l->text = pf_grow(l->text, l->cap * sizeof *l->text);
			l->flags = pf_grow(l->flags, l->cap * sizeof *l->flags);
			l->ids = pf_grow(l->ids, l->cap * sizeof *l->ids);
			l->len = pf_grow(l->len, l->cap * sizeof *l->len);
		}
		s = pf_grow(NULL, n);
		for (i = 1; i < n; i++) {
			if (line[i] == '\\' && line[i + 1] == '\\')
				i++;
			s[o++] = line[i];
		}
		s[o] = '\0';
		l->text[l->n] = s;
		l->flags[l->n] = line[0] == 'i' ? HS_FLAG_CASELESS : 0;
		l->ids[l->n] = l->n;
		l->len[l->n] = o;
		if (o > l->longest)
			l->longest = o;
		l->n++;
	}
	fclose(f);
}

static hs_database_t *
pf_compile(const pf_list *l)
{
	hs_database_t *db = NULL;
	hs_compile_error_t *ce = NULL;

	if (hs_compile_lit_multi((const char *const *)l->text, l->flags,
	    l->ids, l->len, l->n, HS_MODE_BLOCK, NULL, &db, &ce) != HS_SUCCESS) {
		fprintf(stderr, "pfcost: %s\n", ce != NULL ? ce->message : "?");
		exit(2);
	}
	return db;
}

static char *
pf_read(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long sz;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0)
		pf_die("cannot read the file");
	*n = (size_t)sz;
	b = pf_grow(NULL, *n + 1);
	if (fread(b, 1, *n, f) != *n)
		pf_die("cannot read the file");
	fclose(f);
	return b;
}

static double
pf_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
pf_push(pf_matches *m, unsigned long long end, unsigned id)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 1024;
		m->end = pf_grow(m->end, m->cap * sizeof *m->end);
		m->id = pf_grow(m->id, m->cap * sizeof *m->id);
	}
	m->end[m->n] = end;
	m->id[m->n++] = id;
}

static int
pf_on_count(unsigned id, unsigned long long from, unsigned long long to,
    unsigned flags, void *ctx)
{
	unsigned long long *counts = ctx;

	(void)from;
	(void)to;
	(void)flags;
	counts[id]++;
	return 0;
}

static int
pf_on_list(unsigned id, unsigned long long from, unsigned long long to,
    unsigned flags, void *ctx)
{
	pf_matches *m = ctx;

	(void)from;
	(void)flags;
	pf_push(m, m->base + to, id);
	return 0;
}

static size_t
pf_block(size_t n, size_t o)
{
	return n - o < PF_BLOCK ? n - o : PF_BLOCK;
}

/* scan and count. */
static int
pf_scan(const char *mode, const char *lpath, const char *fpath, int reps)
{
	pf_list l;
	hs_database_t *db;
	hs_scratch_t *s = NULL;
	unsigned long long *counts, total = 0;
	size_t n, o;
	char *buf;
	double t0, t1;
	unsigned i;
	int r;

	pf_load(lpath, &l);
	db = pf_compile(&l);
	if (hs_alloc_scratch(db, &s) != HS_SUCCESS)
		pf_die("no scratch");
	buf = pf_read(fpath, &n);
	counts = calloc(l.n, sizeof *counts);
	t0 = pf_cpu();
	for (r = 0; r < reps; r++)
		for (o = 0; o < n; o += PF_BLOCK)
			(void)hs_scan(db, buf + o, (unsigned)pf_block(n, o), 0, s,
			    pf_on_count, counts);
	t1 = pf_cpu();
	for (i = 0; i < l.n; i++)
		total += counts[i];
	if (strcmp(mode, "count") == 0) {
		for (i = 0; i < l.n; i++)
			printf("%llu\n", counts[i] / (unsigned)reps);
		return 0;
	}
	printf("literals %u matches %llu cpu/pass %.4f s ns/byte %.3f\n", l.n,
	    total / (unsigned)reps, (t1 - t0) / reps,
	    (t1 - t0) / reps / (double)n * 1e9);
	return 0;
}

/* The two-stage scan of one block: gate hits, windows, full scans. */
static void
pf_two_block(const char *b, size_t len, size_t base, hs_database_t *gdb,
    hs_scratch_t *gs, const pf_list *g, hs_database_t *db, hs_scratch_t *s,
    size_t reach, pf_matches *gm, pf_matches *out, unsigned long long *hits,
    unsigned long long *window)
{
	size_t i, ws = 0, we = 0;
	int open = 0;

	gm->n = 0;
	gm->base = 0;
	(void)hs_scan(gdb, b, (unsigned)len, 0, gs, pf_on_list, gm);
	*hits += gm->n;
	for (i = 0; i <= gm->n; i++) {
		size_t a0 = 0, a1 = 0;

		if (i < gm->n) {
			size_t e = (size_t)gm->end[i], st = e - g->len[gm->id[i]];

			a0 = st > reach ? st - reach : 0;
			a1 = e + reach < len ? e + reach : len;
		}
		if (open && (i == gm->n || a0 > we)) {
			out->base = base + ws;
			*window += we - ws;
			(void)hs_scan(db, b + ws, (unsigned)(we - ws), 0, s,
			    pf_on_list, out);
			open = 0;
		}
		if (i < gm->n) {
			if (!open) {
				ws = a0;
				we = a1;
				open = 1;
			} else if (a1 > we) {
				we = a1;
			}
		}
	}
}

static int
pf_two(const char *gpath, const char *lpath, const char *fpath)
{
	pf_list g, l;
	hs_database_t *gdb, *db;
	hs_scratch_t *gs = NULL, *s = NULL;
	pf_matches full = { 0 }, two = { 0 }, gm = { 0 };
	unsigned long long hits = 0, window = 0, bad = 0;
	int nofull = getenv("NOFULL") != NULL;
	size_t n, o, i;
	char *buf;
	double t0, t1, t2;

	pf_load(gpath, &g);
	pf_load(lpath, &l);
	gdb = pf_compile(&g);
	db = pf_compile(&l);
	if (hs_alloc_scratch(gdb, &gs) != HS_SUCCESS ||
	    hs_alloc_scratch(db, &s) != HS_SUCCESS)
		pf_die("no scratch");
	buf = pf_read(fpath, &n);
	t0 = pf_cpu();
	for (o = 0; !nofull && o < n; o += PF_BLOCK) {
		full.base = o;
		(void)hs_scan(db, buf + o, (unsigned)pf_block(n, o), 0, s,
		    pf_on_list, &full);
	}
	t1 = pf_cpu();
	for (o = 0; o < n; o += PF_BLOCK)
		pf_two_block(buf + o, pf_block(n, o), o, gdb, gs, &g, db, s,
		    l.longest, &gm, &two, &hits, &window);
	t2 = pf_cpu();
	if (!nofull) {
		if (two.n != full.n)
			bad = 1;
		for (i = 0; bad == 0 && i < full.n; i++)
			if (full.end[i] != two.end[i] || full.id[i] != two.id[i])
				bad = 1;
	}
	printf("gates %u: gate hits %llu (one per %.0f bytes), windows %llu "
	    "bytes (%.2f %%); matches full %zu, two-stage %zu, %s; CPU full "
	    "%.4f s, two-stage %.4f s\n", g.n, hits,
	    (double)n / (double)(hits ? hits : 1), window,
	    100.0 * (double)window / (double)n, full.n, two.n,
	    nofull ? "not compared" : bad ? "DIFFERENT" : "the same in order",
	    t1 - t0, t2 - t1);
	return bad ? 1 : 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 4 && (strcmp(argv[1], "scan") == 0 ||
	    strcmp(argv[1], "count") == 0))
		return pf_scan(argv[1], argv[2], argv[3],
		    argc > 4 && atoi(argv[4]) > 0 ? atoi(argv[4]) : 1);
	if (argc >= 5 && strcmp(argv[1], "two") == 0)
		return pf_two(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: pfcost scan|count LIST FILE [REPS] | "
	    "pfcost two GATES LIST FILE\n");
	return 2;
}

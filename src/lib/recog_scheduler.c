/*
 * recog_scheduler.c: what the scheduler knows about a job killed for
 * memory, read from the scheduler's own outputs (the sc_recogniser of
 * recogniser.h), and the look-back that finds where a Kubernetes kill
 * happened (sc_before).
 *
 * Candidates, each a reader of one output:
 *
 *   SC_SACCT    a sacct table, plain (the header, then its line of dashes
 *               that gives the columns' widths) or --parsable2/--parsable
 *               ('|' between the fields), from its header on: the rows of
 *               the first job with a row in state OUT_OF_MEMORY (cut to
 *               "OUT_OF_ME+" at the default width).  Slurm's
 *               src/sacct/print.c (22.05) prints ReqMem with a unit and,
 *               before 21.08, a suffix 'n' (per node) or 'c' (per CPU);
 *               MaxRSS in KiB-based units ("62914560K", "60.00G").
 *   SC_SEFF     seff's report (contribs/seff/seff, "seff Version 2.1"):
 *               "Job ID: N", "State: OUT_OF_MEMORY (exit code N)",
 *               "Memory Utilized: 63.88 GB", "Memory Efficiency: 99.81%
 *               of 64.00 GB"; its kbytes2str divides by 1024, so its "GB"
 *               is GiB.
 *   SC_K8S_OBJ  a pod as `kubectl get pod -o yaml` or `-o json` prints it:
 *               a container status's `reason: OOMKilled` (or
 *               "reason": "OOMKilled"), with its exitCode around it and
 *               the container's name after it.
 *
 *   SC_SACCT_JSON  a step of `sacct --json` in Slurm 22.05's shape (the
 *               openapi/dbv0.0.38 plugin: src/plugins/openapi/dbv0.0.38/
 *               parse.c, parse_job, parse_job_step, _foreach_step and
 *               _dump_job_exit_code) whose "state" is "OUT_OF_MEMORY".
 *               Everything is read in the look-back (sc_before), since a
 *               job's document runs to hundreds of lines and a recogniser
 *               sees EX_LINES_MAX of them: _foreach_step writes a step's
 *               "tres" first, so its requested "max" TRES "mem" (MaxRSS,
 *               bytes) and its "allocated" TRES "mem" (MiB granted) come
 *               before its state; the job's "job_id" and "exit_code" are
 *               before its "steps".  The job's own state line ("current":
 *               "OUT_OF_MEMORY") is no event: its figures are in its steps
 *               (rules/recognisers.yaml's slurm-out-of-memory-state row
 *               leaves both lines to this reader).  The job's "required"
 *               "memory" is not used: 22.05 dumps the low 32 bits of
 *               ReqMem there, without saying per node or per CPU.
 *
 * A sacct table is read from its header because the scanner hands a
 * recogniser the hit's line and the lines after it, never the lines
 * before; the table's OUT_OF_MEMORY rows then belong to the event.  A
 * table whose rows are all COMPLETED, FAILED or the like gives nothing.
 *
 * The figures: host.usage is the largest MaxRSS of the job's rows (or
 * seff's Memory Utilized), host.limit the memory Slurm granted (ReqMem
 * per node, or per CPU times AllocCPUS; seff's allocated memory), the
 * exit code Slurm's (the part before ':' of ExitCode), error the state,
 * host.job the job id; for Kubernetes the labels' pod, namespace and
 * container (od_labels, which a record of the log may fill too).
 */
#define _GNU_SOURCE             /* memmem */
#include <stdlib.h>
#include <string.h>


#include "recogniser.h"

enum { SC_SACCT, SC_SEFF, SC_K8S_OBJ, SC_SACCT_JSON, SC_N };

/* Columns of a sacct table read, at most. */
#define SC_COLS_MAX 48
/* Lines of a seff report read after its first line, at most. */
#define SC_SEFF_LINES 16

static const ex_anchor sc_anchors_list[] = {
	{ .text = "MaxRSS" }, { .text = "ReqMem" }, { .text = "JobID" },
	{ .text = "Job ID: " }, { .text = "State: OUT_OF_ME" },
	{ .text = "OOMKilled" }, { .text = "\"state\": \"OUT_OF_MEMORY\"" },
};

static void *
sc_create(bool jit, const struct sk_table *table, od_error *err)
{
	static int dummy;

	(void)jit;
	(void)table;    /* the readers are their own */
	(void)err;
	/* No state: the readers below are plain C over the text. */
	return &dummy;
}

static void
sc_destroy(void *self)
{
	(void)self;
}

static const ex_anchor *
sc_anchors(const void *self, size_t *n)
{
	(void)self;
	*n = sizeof sc_anchors_list / sizeof sc_anchors_list[0];
	return sc_anchors_list;
}

/* The start of the line of t that holds offset at. */
static size_t
sc_bol(const char *t, size_t at)
{
	while (at > 0 && t[at - 1] != '\n')
		at--;
	return at;
}

/* The end of the line that starts at at (its '\n', or tlen). */
static size_t
sc_eol(const char *t, size_t tlen, size_t at)
{
	const char *nl = memchr(t + at, '\n', tlen - at);

	return nl != NULL ? (size_t)(nl - t) : tlen;
}

/* Whether t[a..b), blanks trimmed, is the string s. */
static bool
sc_is(const char *t, size_t a, size_t b, const char *s)
{
	while (a < b && (t[a] == ' ' || t[a] == '\t' || t[a] == '\r'))
		a++;
	while (b > a && (t[b - 1] == ' ' || t[b - 1] == '\t' ||
	    t[b - 1] == '\r'))
		b--;
	return strlen(s) == b - a && memcmp(t + a, s, b - a) == 0;
}

static bool
sc_prefix(const char *t, size_t a, size_t b, const char *s)
{
	size_t n = strlen(s);

	return b - a >= n && memcmp(t + a, s, n) == 0;
}

/* Copies t[a..b), blanks trimmed, into out (size n). */
static void
sc_copy(char *out, size_t n, const char *t, size_t a, size_t b)
{
	while (a < b && (t[a] == ' ' || t[a] == '\t' || t[a] == '"'))
		a++;
	while (b > a && (t[b - 1] == ' ' || t[b - 1] == '\t' ||
	    t[b - 1] == '\r' || t[b - 1] == '"' || t[b - 1] == ','))
		b--;
	if (b - a >= n)
		b = a + n - 1;
	memcpy(out, t + a, b - a);
	out[b - a] = '\0';
}

/*
 * A table's layout: the columns' spans on a plain table's lines (from its
 * line of dashes), or none for a '|'-separated one; which columns hold
 * what (-1: absent).
 */
typedef struct {
	bool bar;
	int ncols;
	size_t col_a[SC_COLS_MAX], col_b[SC_COLS_MAX];
	int jobid, state, exitcode, maxrss, reqmem, cpus;
} sc_table;

/* Field k of the row t[a..b) of table tb, as a span. */
static bool
sc_field(const sc_table *tb, const char *t, size_t a, size_t b, int k,
    size_t *fa, size_t *fb)
{
	int i;

	if (k < 0)
		return false;
	if (!tb->bar) {
		if (a + tb->col_a[k] >= b)
			return false;
		*fa = a + tb->col_a[k];
		*fb = a + tb->col_b[k] < b ? a + tb->col_b[k] : b;
		return true;
	}
	for (i = 0; i < k; i++) {
		const char *p = memchr(t + a, '|', b - a);

		if (p == NULL)
			return false;
		a = (size_t)(p - t) + 1;
	}
	*fa = a;
	*fb = a;
	while (*fb < b && t[*fb] != '|')
		(*fb)++;
	return true;
}

/* The header's column names give the table's columns; false when the
 * line t[a..b) is no sacct header (no State, and none of JobID, MaxRSS,
 * ReqMem). */
static bool
sc_header(sc_table *tb, const char *t, size_t a, size_t b)
{
	size_t i = a;
	int k = 0;

	/* A header names a State column: a line without the word is none,
	 * found without splitting it (a long line is hit by many anchors). */
	if (memmem(t + a, b - a, "State", 5) == NULL)
		return false;
	tb->bar = memchr(t + a, '|', b - a) != NULL;
	tb->jobid = tb->state = tb->exitcode = tb->maxrss = tb->reqmem =
	    tb->cpus = -1;
	while (i < b && k < SC_COLS_MAX) {
		size_t s, e;

		if (tb->bar) {
			s = i;
			while (i < b && t[i] != '|')
				i++;
			e = i++;
		} else {
			while (i < b && (t[i] == ' ' || t[i] == '\t'))
				i++;
			if (i >= b)
				break;
			s = i;
			while (i < b && t[i] != ' ' && t[i] != '\t')
				i++;
			e = i;
		}
		if (sc_is(t, s, e, "JobID"))
			tb->jobid = k;
		else if (sc_is(t, s, e, "State"))
			tb->state = k;
		else if (sc_is(t, s, e, "ExitCode"))
			tb->exitcode = k;
		else if (sc_is(t, s, e, "MaxRSS"))
			tb->maxrss = k;
		else if (sc_is(t, s, e, "ReqMem"))
			tb->reqmem = k;
		else if (sc_is(t, s, e, "AllocCPUS") || sc_is(t, s, e, "NCPUS"))
			tb->cpus = k;
		k++;
	}
	tb->ncols = k;
	return tb->state >= 0 && (tb->jobid >= 0 || tb->maxrss >= 0 ||
	    tb->reqmem >= 0);
}

/* A plain table's line of dashes t[a..b): the columns' spans, as many as
 * the header named. */
static bool
sc_dashes(sc_table *tb, const char *t, size_t a, size_t b)
{
	size_t i = a;
	int k = 0;

	while (i < b && t[i] == ' ')
		i++;
	while (i < b && k < SC_COLS_MAX) {
		if (t[i] != '-')
			return false;
		tb->col_a[k] = i - a;
		while (i < b && t[i] == '-')
			i++;
		tb->col_b[k++] = i - a;
		while (i < b && t[i] == ' ')
			i++;
		if (i < b && t[i] == '\r')
			i++;
	}
	return k == tb->ncols && i >= b;
}

/* The job id of a JobID field ("12345", "12345.batch", "12345_7.0"):
 * its length up to the step's '.'. */
static size_t
sc_job_len(const char *t, size_t a, size_t b)
{
	size_t i;

	while (a < b && t[a] == ' ')
		a++;
	for (i = a; i < b && t[i] != '.' && t[i] != ' ' && t[i] != '+'; i++)
		;
	return i - a;
}

/*
 * A Slurm size: a number, a unit letter (K, M, G, T, P: powers of 1024;
 * none: a bare ReqMem is in MiB as Slurm keeps it) and, before 21.08, a
 * suffix 'n' or 'c' for ReqMem.  *per_cpu says which suffix.
 */
static bool
sc_slurm_size(const char *t, size_t a, size_t b, bool bare_mib, int64_t *out,
    bool *per_cpu)
{
	char buf[40];
	size_t n;

	while (a < b && (t[a] == ' ' || t[a] == '\t'))
		a++;
	while (b > a && (t[b - 1] == ' ' || t[b - 1] == '\t' ||
	    t[b - 1] == '\r'))
		b--;
	*per_cpu = false;
	if (b > a && (t[b - 1] == 'n' || t[b - 1] == 'c')) {
		*per_cpu = t[b - 1] == 'c';
		b--;
	}
	n = b - a;
	if (n == 0 || n + 4 > sizeof buf || t[a] < '0' || t[a] > '9')
		return false;
	memcpy(buf, t + a, n);
	if (buf[n - 1] >= '0' && buf[n - 1] <= '9') {
		if (!bare_mib)
			return false;
		buf[n++] = 'M';
	}
	if (strchr("KMGTP", buf[n - 1]) == NULL)
		return false;
	buf[n++] = 'i';
	buf[n++] = 'B';
	return od_size_parse_text(buf, n, out);
}

/* Whether the field t[a..b) is an out-of-memory state. */
static bool
sc_oom_state(const char *t, size_t a, size_t b)
{
	while (a < b && t[a] == ' ')
		a++;
	return sc_prefix(t, a, b, "OUT_OF_MEMORY") ||
	    sc_prefix(t, a, b, "OUT_OF_ME+");
}

/*
 * Reads the sacct table whose header is the line at hs: the first job
 * with an out-of-memory row.  With ev NULL only says whether there is
 * one; else fills ev and *me (the end of that job's last row).
 */
static bool
sc_sacct(const char *t, size_t tlen, size_t hs, od_event *ev, size_t *me)
{
	sc_table tb;
	size_t he = sc_eol(t, tlen, hs), at, job_a = 0, job_n = 0;
	size_t last_end = he;
	bool oom = false, have_job = false;
	int64_t usage = OD_UNKNOWN, limit = OD_UNKNOWN, cpus = -1, v;
	bool per_cpu_limit = false;

	if (!sc_header(&tb, t, hs, he) || he >= tlen)
		return false;
	at = he + 1;
	if (!tb.bar) {
		size_t de = sc_eol(t, tlen, at);

		if (!sc_dashes(&tb, t, at, de) || de >= tlen)
			return false;
		at = de + 1;
	}
	while (at < tlen) {
		size_t e = sc_eol(t, tlen, at), fa, fb;
		bool per_cpu;

		/* A row has its fields: a blank or short line ends the table. */
		if (e == at || !sc_field(&tb, t, at, e, tb.state, &fa, &fb) ||
		    (tb.bar && memchr(t + at, '|', e - at) == NULL))
			break;
		if (tb.jobid >= 0) {
			size_t ja, jb, n;

			if (!sc_field(&tb, t, at, e, tb.jobid, &ja, &jb))
				break;
			while (ja < jb && t[ja] == ' ')
				ja++;
			n = sc_job_len(t, ja, jb);
			if (n == 0)
				break;
			if (have_job && (n != job_n ||
			    memcmp(t + ja, t + job_a, n) != 0)) {
				/* The next job: the one read is the one. */
				if (oom)
					break;
				usage = limit = OD_UNKNOWN;
				cpus = -1;
				per_cpu_limit = false;
			}
			job_a = ja;
			job_n = n;
			have_job = true;
		}
		if (sc_oom_state(t, fa, fb) && !oom) {
			oom = true;
			if (ev != NULL) {
				/* The default width cuts the state. */
				sc_copy(ev->error, sizeof ev->error, t, fa, fb);
				if (strcmp(ev->error, "OUT_OF_ME+") == 0)
					strcpy(ev->error, "OUT_OF_MEMORY");
				if (sc_field(&tb, t, at, e, tb.exitcode, &fa,
				    &fb)) {
					char *end;
					char num[24];

					sc_copy(num, sizeof num, t, fa, fb);
					v = strtoll(num, &end, 10);
					if (end != num && *end == ':') {
						ev->host.exit_code = v;
						ev->host.has_exit = true;
					}
				}
				if (tb.jobid >= 0)
					sc_copy(ev->host.job, sizeof ev->host.job,
					    t, job_a, job_a + job_n);
			}
		}
		if (sc_field(&tb, t, at, e, tb.maxrss, &fa, &fb) &&
		    sc_slurm_size(t, fa, fb, false, &v, &per_cpu) &&
		    v > usage)
			usage = v;
		if (limit < 0 &&
		    sc_field(&tb, t, at, e, tb.reqmem, &fa, &fb) &&
		    sc_slurm_size(t, fa, fb, true, &v, &per_cpu)) {
			limit = v;
			per_cpu_limit = per_cpu;
		}
		if (cpus < 0 &&
		    sc_field(&tb, t, at, e, tb.cpus, &fa, &fb)) {
			char num[24], *end;

			sc_copy(num, sizeof num, t, fa, fb);
			v = strtoll(num, &end, 10);
			if (end != num && *end == '\0' && v > 0)
				cpus = v;
		}
		last_end = e;
		at = e + 1;
	}
	if (!oom)
		return false;
	if (ev != NULL) {
		ev->host.usage = usage;
		/* A request per CPU is the node's limit only times the CPUs. */
		if (limit >= 0 && per_cpu_limit)
			ev->host.limit = cpus > 0 && limit <= INT64_MAX / cpus ?
			    limit * cpus : OD_UNKNOWN;
		else
			ev->host.limit = limit;
		*me = last_end;
	}
	return true;
}

/* A seff size: "63.88 GB", in seff's 1024-based units. */
static bool
sc_seff_size(const char *t, size_t a, size_t b, int64_t *out)
{
	char buf[40];
	size_t n, i = 0;

	while (a < b && t[a] == ' ')
		a++;
	n = 0;
	while (a + i < b && n + 4 < sizeof buf &&
	    ((t[a + i] >= '0' && t[a + i] <= '9') || t[a + i] == '.'))
		buf[n++] = t[a + i++];
	if (n == 0 || a + i + 3 > b || t[a + i] != ' ')
		return false;
	i++;
	if (strchr("KMGTP", t[a + i]) == NULL || t[a + i + 1] != 'B')
		return false;
	buf[n++] = t[a + i];
	buf[n++] = 'i';
	buf[n++] = 'B';
	return od_size_parse_text(buf, n, out);
}

/*
 * Reads the seff report whose line at ls is "Job ID:" or "State:": an
 * out-of-memory state is the condition.  Fills ev when not NULL.
 */
static bool
sc_seff(const char *t, size_t tlen, size_t ls, od_event *ev, size_t *me)
{
	size_t at = ls, end = ls;
	int lines = 0;
	bool oom = false, mem = false;

	while (at < tlen && lines++ <= SC_SEFF_LINES) {
		size_t e = sc_eol(t, tlen, at);
		const char *colon = memchr(t + at, ':', e - at);

		/* Every seff line is "Key: value". */
		if (colon == NULL || colon == t + at)
			break;
		if (sc_prefix(t, at, e, "Job ID: ")) {
			if (at != ls)
				break;  /* the next report */
			if (ev != NULL)
				sc_copy(ev->host.job, sizeof ev->host.job, t,
				    at + 8, e);
		} else if (sc_prefix(t, at, e, "State: ")) {
			size_t s = at + 7, x;

			if (!sc_prefix(t, s, e, "OUT_OF_MEMORY"))
				return false;
			oom = true;
			x = s + 13;
			if (ev != NULL) {
				sc_copy(ev->error, sizeof ev->error, t, s, x);
				if (sc_prefix(t, x, e, " (exit code ")) {
					char num[24], *q;
					long long v;

					/* A copy: the text is not NUL-ended. */
					sc_copy(num, sizeof num, t, x + 12, e);
					v = strtoll(num, &q, 10);
					if (q != num && strcmp(q, ")") == 0) {
						ev->host.exit_code = v;
						ev->host.has_exit = true;
					}
				}
			}
		} else if (sc_prefix(t, at, e, "Memory Utilized: ")) {
			int64_t v;

			if (ev != NULL && sc_seff_size(t, at + 17, e, &v))
				ev->host.usage = v;
			mem = true;
		} else if (sc_prefix(t, at, e, "Memory Efficiency: ")) {
			const char *of = memmem(t + at, e - at, " of ", 4);
			int64_t v;

			if (ev != NULL && of != NULL &&
			    sc_seff_size(t, (size_t)(of - t) + 4, e, &v))
				ev->host.limit = v;
			end = e;
			break;
		}
		end = e;
		at = e + 1;
	}
	if (!oom || !mem)
		return false;
	*me = end;
	return true;
}

/*
 * A line's key in YAML ("  reason: OOMKilled", "- name: x") or JSON
 * ("  \"reason\": \"OOMKilled\","): its span in *ka..*kb, the value's in
 * *va..*vb, and the key's indentation (a "- " counts as blanks).
 */
static bool
sc_key(const char *t, size_t a, size_t b, size_t *ka, size_t *kb, size_t *va,
    size_t *vb, size_t *indent)
{
	size_t i = a;
	bool quoted;

	while (i < b && (t[i] == ' ' || t[i] == '-'))
		i++;
	*indent = i - a;
	quoted = i < b && t[i] == '"';
	if (quoted)
		i++;
	*ka = i;
	while (i < b && t[i] != ':' && t[i] != '"' && t[i] != ' ')
		i++;
	*kb = i;
	if (quoted) {
		if (i >= b || t[i] != '"')
			return false;
		i++;
	}
	if (i >= b || t[i] != ':' || *kb == *ka)
		return false;
	i++;
	while (i < b && t[i] == ' ')
		i++;
	*va = i;
	*vb = b;
	while (*vb > *va && (t[*vb - 1] == ' ' || t[*vb - 1] == '\r' ||
	    t[*vb - 1] == ','))
		(*vb)--;
	if (*vb > *va && t[*va] == '"' && t[*vb - 1] == '"' && *vb - *va >= 2) {
		(*va)++;
		(*vb)--;
	}
	return true;
}

static bool
sc_key_is(const char *t, size_t ka, size_t kb, const char *s)
{
	return strlen(s) == kb - ka && memcmp(t + ka, s, kb - ka) == 0;
}

/* The pod object's candidate at the hit's line ls: its key is reason,
 * its value OOMKilled. */
static bool
sc_k8s_reason(const char *t, size_t tlen, size_t ls, size_t *ks)
{
	size_t e = sc_eol(t, tlen, ls), ka, kb, va, vb, in;

	if (!sc_key(t, ls, e, &ka, &kb, &va, &vb, &in) ||
	    !sc_key_is(t, ka, kb, "reason") || vb - va != 9 ||
	    memcmp(t + va, "OOMKilled", 9) != 0)
		return false;
	*ks = ka > ls && t[ka - 1] == '"' ? ka - 1 : ka;
	return true;
}

/* Reads the container status after its reason: the exit code and the
 * container's name (the first "name" less indented than the reason). */
static void
sc_k8s_fill(const char *t, size_t tlen, size_t ls, od_event *ev, size_t *me)
{
	size_t e = sc_eol(t, tlen, ls), at = e + 1, ka, kb, va, vb, in,
	    rin = 0;
	int lines = 0;

	(void)sc_key(t, ls, e, &ka, &kb, &va, &vb, &rin);
	*me = e;
	while (at < tlen && lines++ < 12) {
		e = sc_eol(t, tlen, at);
		if (sc_key(t, at, e, &ka, &kb, &va, &vb, &in)) {
			if (in >= rin && sc_key_is(t, ka, kb, "exitCode") &&
			    !ev->host.has_exit) {
				char num[24], *q;

				sc_copy(num, sizeof num, t, va, vb);
				ev->host.exit_code = strtoll(num, &q, 10);
				ev->host.has_exit = q != num && *q == '\0';
			}
			if (in < rin && sc_key_is(t, ka, kb, "name")) {
				sc_copy(ev->labels.container,
				    sizeof ev->labels.container, t, va, vb);
				*me = e;
				break;
			}
		}
		at = e + 1;
	}
}

static int
sc_find(void *self, const char *t, size_t tlen, size_t ht,
    const rg_skip *skip, size_t *ms)
{
	size_t ls = sc_bol(t, ht), me, ks;

	(void)self;
	if (!rg_skipped(skip, SC_SACCT) &&
	    sc_sacct(t, tlen, ls, NULL, &me)) {
		*ms = ls;
		while (*ms < ht && (t[*ms] == ' ' || t[*ms] == '\t'))
			(*ms)++;
		return SC_SACCT;
	}
	if (!rg_skipped(skip, SC_SEFF) &&
	    (sc_prefix(t, ls, tlen, "Job ID: ") ||
	    sc_prefix(t, ls, tlen, "State: OUT_OF_ME")) &&
	    sc_seff(t, tlen, ls, NULL, &me)) {
		*ms = ls;
		return SC_SEFF;
	}
	if (!rg_skipped(skip, SC_K8S_OBJ) &&
	    sc_k8s_reason(t, tlen, ls, &ks) && ks + RG_BACK >= ht) {
		*ms = ks;
		return SC_K8S_OBJ;
	}
	if (!rg_skipped(skip, SC_SACCT_JSON)) {
		size_t e = sc_eol(t, tlen, ls), ka, kb, va, vb, in;

		if (sc_key(t, ls, e, &ka, &kb, &va, &vb, &in) &&
		    ka > ls && t[ka - 1] == '"' &&
		    sc_key_is(t, ka, kb, "state") && va > 0 && t[va - 1] == '"' &&
		    sc_is(t, va, vb, "OUT_OF_MEMORY") && ka - 1 + RG_BACK >= ht) {
			*ms = ka - 1;
			return SC_SACCT_JSON;
		}
	}
	return -1;
}

/*
 * The candidates that cannot match in t (ex_recogniser.absent): each
 * needs a string in the hit's line that t may lack: a sacct header the
 * word State (sc_header), seff's report "Job ID: " or "State: OUT_OF_ME"
 * (sc_find), a pod's reason OOMKilled, sacct's JSON state OUT_OF_MEMORY.
 */
static bool
sc_absent(void *self, const char *t, size_t tlen, rg_skip *none)
{
	static const char *const need[SC_N][2] = {
		[SC_SACCT] = { "State", NULL },
		[SC_SEFF] = { "Job ID: ", "State: OUT_OF_ME" },
		[SC_K8S_OBJ] = { "OOMKilled", NULL },
		[SC_SACCT_JSON] = { "OUT_OF_MEMORY", NULL },
	};
	bool all = true;
	int c, k;

	(void)self;
	for (c = 0; c < SC_N; c++) {
		bool found = false;

		for (k = 0; k < 2 && need[c][k] != NULL; k++)
			found |= memmem(t, tlen, need[c][k],
			    strlen(need[c][k])) != NULL;
		if (found)
			all = false;
		else
			none->w[c / 64] |= UINT64_C(1) << (c % 64);
	}
	return all;
}

static bool
sc_fill(void *self, int c, const char *t, size_t tlen, size_t ms, size_t *me,
    od_event *ev)
{
	size_t ls = sc_bol(t, ms);

	(void)self;
	ev->layout = OD_LAYOUT_OTHER_STACK;
	ev->fatal = true;
	ev->confidence = OD_CONF_HIGH;
	switch (c) {
	case SC_SACCT:
		ev->kind = OD_KIND_SLURM_OOM;
		return sc_sacct(t, tlen, ls, ev, me);
	case SC_SEFF:
		ev->kind = OD_KIND_SLURM_OOM;
		return sc_seff(t, tlen, ls, ev, me);
	case SC_K8S_OBJ:
		ev->kind = OD_KIND_K8S_OOMKILLED;
		sc_k8s_fill(t, tlen, ls, ev, me);
		return true;
	case SC_SACCT_JSON:
		/* The figures come from the look-back (sc_before). */
		ev->kind = OD_KIND_SLURM_OOM;
		strcpy(ev->error, "OUT_OF_MEMORY");
		*me = sc_eol(t, tlen, ms);
		if (*me > ms && t[*me - 1] == ',')
			(*me)--;
		return true;
	default:
		return false;
	}
}

static bool
sc_follows(const void *self, int c)
{
	(void)self;
	(void)c;
	return true;
}

const ex_recogniser sc_recogniser = {
	.create = sc_create,
	.destroy = sc_destroy,
	.anchors = sc_anchors,
	.find = sc_find,
	.fill = sc_fill,
	.follows = sc_follows,
	.absent = sc_absent,
	.retry = true,
};

/*
 * A Kubernetes quantity ("64Gi", "512Mi", "64G", "1e9", "68719476736"):
 * binary suffixes are powers of 1024, decimal ones (k, M, G, T) of 1000,
 * as k8s.io/apimachinery's resource.Quantity reads them.
 */
static bool
sc_quantity(const char *t, size_t a, size_t b, int64_t *out)
{
	static const struct {
		const char *suffix;
		const char *unit;       /* od_size_parse_text's */
	} units[] = {
		{ "Ki", "KiB" }, { "Mi", "MiB" }, { "Gi", "GiB" }, { "Ti", "TiB" },
		{ "k", "KB" }, { "M", "MB" }, { "G", "GB" }, { "T", "TB" },
		{ "", "" },
	};
	char buf[48];
	size_t i = a, n, u;

	while (i < b && ((t[i] >= '0' && t[i] <= '9') || t[i] == '.'))
		i++;
	if (i == a || i - a + 4 > sizeof buf)
		return false;
	for (u = 0; u < sizeof units / sizeof units[0]; u++) {
		if (strlen(units[u].suffix) != b - i ||
		    memcmp(units[u].suffix, t + i, b - i) != 0)
			continue;
		n = i - a;
		memcpy(buf, t + a, n);
		memcpy(buf + n, units[u].unit, strlen(units[u].unit));
		return od_size_parse_text(buf, n + strlen(units[u].unit), out);
	}
	return false;
}

/*
 * The pod object before its status (`kubectl get pod -o yaml/json`, one
 * pod): its name and namespace are keys at the indentation of metadata's
 * first key; the container's memory limit is under the container's entry
 * in spec.containers, its "name" first, then resources.limits.memory, in
 * kubectl's sorted key order; the exit code is the last exitCode in the
 * few lines before the reason.  A "- " counts as indentation (sc_key).
 */
static void
sc_before_object(const char *buf, size_t len, od_event *ev)
{
	size_t at = 0, meta_in = 0, child_in = 0, ctr_in = 0, lim_in = 0;
	size_t exit_at = 0;
	int meta = 0;           /* 0 before metadata, 1 in it, 2 after */
	bool in_ctr = false, in_lim = false, have_exit = false;
	int64_t exit_code = 0;

	while (at < len) {
		size_t e = sc_eol(buf, len, at), ka, kb, va, vb, in;
		bool dash;

		if (!sc_key(buf, at, e, &ka, &kb, &va, &vb, &in)) {
			at = e + 1;
			continue;
		}
		dash = memchr(buf + at, '-', ka - at) != NULL;
		if (meta == 0 && sc_key_is(buf, ka, kb, "metadata")) {
			meta = 1;
			meta_in = in;
			child_in = 0;
		} else if (meta == 1 && in <= meta_in) {
			meta = 2;
		} else if (meta == 1) {
			if (child_in == 0)
				child_in = in;
			if (in == child_in && sc_key_is(buf, ka, kb, "name"))
				sc_copy(ev->labels.pod, sizeof ev->labels.pod, buf,
				    va, vb);
			else if (in == child_in &&
			    sc_key_is(buf, ka, kb, "namespace"))
				sc_copy(ev->labels.namespace_,
				    sizeof ev->labels.namespace_, buf, va, vb);
		}
		/* The container's entry ends at the next entry or a key
		 * less indented. */
		if (in_ctr && (in < ctr_in || (dash && in <= ctr_in) ||
		    (in == ctr_in && sc_key_is(buf, ka, kb, "name"))))
			in_ctr = in_lim = false;
		if (in_lim && in <= lim_in)
			in_lim = false;
		if (meta == 2 && ev->host.limit < 0 && !in_ctr &&
		    sc_key_is(buf, ka, kb, "name")) {
			char v[sizeof ev->labels.container];

			sc_copy(v, sizeof v, buf, va, vb);
			if (strcmp(v, ev->labels.container) == 0) {
				in_ctr = true;
				ctr_in = in;
			}
		} else if (in_ctr && !in_lim && sc_key_is(buf, ka, kb, "limits")) {
			in_lim = true;
			lim_in = in;
		} else if (in_lim && sc_key_is(buf, ka, kb, "memory")) {
			int64_t v;

			if (sc_quantity(buf, va, vb, &v))
				ev->host.limit = v;
			in_ctr = in_lim = false;
		} else if (sc_key_is(buf, ka, kb, "exitCode")) {
			char num[24], *q;

			sc_copy(num, sizeof num, buf, va, vb);
			exit_code = strtoll(num, &q, 10);
			have_exit = q != num && *q == '\0';
			exit_at = e;
		}
		at = e + 1;
	}
	/* The exit code of the terminated state that holds the reason:
	 * at most a few lines before it. */
	if (have_exit && !ev->host.has_exit) {
		int lines = 0;

		for (at = exit_at; at < len; at++)
			lines += buf[at] == '\n';
		if (lines <= 4) {
			ev->host.exit_code = exit_code;
			ev->host.has_exit = true;
		}
	}
}

/*
 * `kubectl describe pod` before the event: "Name:" and "Namespace:" at
 * the start of a line, and the container's name, the last line of two
 * blanks and a name with a colon after "Containers:".
 */
static void
sc_before_describe(const char *buf, size_t len, od_event *ev)
{
	size_t at = 0;
	bool in_ctrs = false;

	while (at < len) {
		size_t e = sc_eol(buf, len, at);

		if (sc_prefix(buf, at, e, "Name:") && e > at + 5)
			sc_copy(ev->labels.pod, sizeof ev->labels.pod, buf, at + 5, e);
		else if (sc_prefix(buf, at, e, "Namespace:") && e > at + 10)
			sc_copy(ev->labels.namespace_, sizeof ev->labels.namespace_,
			    buf, at + 10, e);
		else if (sc_is(buf, at, e, "Containers:") ||
		    sc_is(buf, at, e, "Init Containers:"))
			in_ctrs = buf[at] != ' ';
		else if (in_ctrs && e > at + 3 && buf[at] == ' ' &&
		    buf[at + 1] == ' ' && buf[at + 2] != ' ' &&
		    buf[e - 1 - (buf[e - 1] == '\r')] == ':')
			sc_copy(ev->labels.container, sizeof ev->labels.container,
			    buf, at + 2, e - 1 - (buf[e - 1] == '\r'));
		else if (e > at && buf[at] != ' ')
			in_ctrs = false;
		at = e + 1;
	}
}

/*
 * The container whose status holds the reason when its name came before
 * it (a current state, "state": {"terminated": ...}, sorts after "name"):
 * the last "name" at the indentation of the status entries' first keys.
 */
static void
sc_before_status_name(const char *buf, size_t len, od_event *ev)
{
	size_t at = 0, item_in = 0;
	bool in_status = false;

	while (at < len) {
		size_t e = sc_eol(buf, len, at), ka, kb, va, vb, in;

		if (sc_key(buf, at, e, &ka, &kb, &va, &vb, &in)) {
			if (sc_key_is(buf, ka, kb, "containerStatuses") ||
			    sc_key_is(buf, ka, kb, "initContainerStatuses")) {
				in_status = true;
				item_in = 0;
			} else if (in_status && item_in == 0) {
				item_in = in;
			}
			if (in_status && in == item_in &&
			    sc_key_is(buf, ka, kb, "name"))
				sc_copy(ev->labels.container,
				    sizeof ev->labels.container, buf, va, vb);
		}
		at = e + 1;
	}
}

/* The indentation of the line at at (blanks only). */
static size_t
sc_indent(const char *t, size_t at, size_t e)
{
	size_t i = at;

	while (i < e && (t[i] == ' ' || t[i] == '\t'))
		i++;
	return i - at;
}

/* A JSON integer value t[va..vb), or -1. */
static int64_t
sc_json_int(const char *t, size_t va, size_t vb)
{
	char num[24], *q;
	int64_t v;

	sc_copy(num, sizeof num, t, va, vb);
	v = strtoll(num, &q, 10);
	return q != num && *q == '\0' && v >= 0 ? v : -1;
}

/*
 * The step of a sacct --json state line (SC_SACCT_JSON) and its job,
 * from the text before it, whose last line is that state's.  The step's
 * keys are at the state's indentation (sin): its "tres" object holds
 * "requested" then "max", a list of TRES whose "mem" one's "count" is
 * the MaxRSS in bytes, and "allocated", whose "mem" count is the memory
 * granted in MiB (Slurm's TRES mem).  A line less indented than sin
 * that opens or closes an object is the edge of a step: what was read
 * before is another step's.  The job's keys are at the indentation of
 * the last "steps" key: its "job_id", and its "exit_code", for which
 * 22.05 (_dump_job_exit_code) writes "SIGNALED" with no return code for
 * a signalled job (its exit status part, sacct's ExitCode "0:N", is 0),
 * "SUCCESS" with 0 for every exit status (so nothing), and "ERROR" with
 * the code.
 */
static void
sc_before_sacct_json(const char *buf, size_t len, od_event *ev)
{
	size_t at, le = len, ls, ka, kb, va, vb, in, sin, jin = 0;
	size_t steps_at = 0, ec_in = 0, tres_in = 0, sub_in = 0;
	enum { SJ_NONE, SJ_MAX, SJ_ALLOC } sub = SJ_NONE;
	bool in_ec = false, in_tres = false, mem = false, have_steps = false;
	bool signaled = false, error = false;
	int64_t usage = -1, limit = -1, rc = -1, v;
	char job[sizeof ev->host.job] = "";

	/* buf ends before the state's line: its last line is the key
	 * before "state" in the step ("kill_request_user" in parse_job_step
	 * of 22.05) or the close of that key's object, both at the state's
	 * indentation in json-c's layout. */
	while (le > 0 && (buf[le - 1] == '\n' || buf[le - 1] == '\r'))
		le--;
	ls = sc_bol(buf, le);
	sin = sc_indent(buf, ls, le);
	if (ls + sin >= le || (!sc_key(buf, ls, le, &ka, &kb, &va, &vb, &in) &&
	    buf[ls + sin] != '}' && buf[ls + sin] != ']'))
		return;
	ls = le;
	/* The job's level: its last "steps" key before the step. */
	for (at = 0; at < ls; ) {
		size_t e = sc_eol(buf, len, at);

		if (sc_key(buf, at, e, &ka, &kb, &va, &vb, &in) && in < sin &&
		    sc_key_is(buf, ka, kb, "steps")) {
			jin = in;
			steps_at = at;
			have_steps = true;
		}
		at = e + 1;
	}
	if (!have_steps)
		return;
	for (at = 0; at < ls; ) {
		size_t e = sc_eol(buf, len, at), ind = sc_indent(buf, at, e);
		bool key = sc_key(buf, at, e, &ka, &kb, &va, &vb, &in);

		if (at > steps_at && !key && ind < sin && ind + at < e &&
		    strchr("{}", buf[at + ind]) != NULL) {
			/* Another step begins or ends. */
			usage = limit = -1;
			in_tres = false;
			sub = SJ_NONE;
		}
		if (!key) {
			at = e + 1;
			continue;
		}
		if (at < steps_at && in == jin) {
			in_ec = sc_key_is(buf, ka, kb, "exit_code");
			if (in_ec) {
				ec_in = in;
				signaled = error = false;
				rc = -1;
			}
			if (sc_key_is(buf, ka, kb, "job_id"))
				sc_copy(job, sizeof job, buf, va, vb);
		} else if (at < steps_at && in_ec && in > ec_in) {
			if (sc_key_is(buf, ka, kb, "status")) {
				signaled = sc_is(buf, va, vb, "SIGNALED");
				error = sc_is(buf, va, vb, "ERROR");
			} else if (sc_key_is(buf, ka, kb, "return_code")) {
				rc = sc_json_int(buf, va, vb);
			}
		} else if (at > steps_at && in == sin) {
			in_tres = sc_key_is(buf, ka, kb, "tres");
			tres_in = in;
			sub = SJ_NONE;
		} else if (at > steps_at && in_tres && in > tres_in) {
			if (sc_key_is(buf, ka, kb, "allocated") &&
			    in == tres_in + 2) {
				sub = SJ_ALLOC;
				sub_in = in;
			} else if (sc_key_is(buf, ka, kb, "max") &&
			    in == tres_in + 4 && sub_in == tres_in + 2 &&
			    sub == SJ_NONE) {
				sub = SJ_MAX;
				sub_in = in;
			} else if (in <= tres_in + 2) {
				sub = SJ_NONE;
				sub_in = sc_key_is(buf, ka, kb, "requested") ?
				    in : 0;
			} else if (sub != SJ_NONE && in > sub_in) {
				if (sc_key_is(buf, ka, kb, "type"))
					mem = sc_is(buf, va, vb, "mem");
				else if (sc_key_is(buf, ka, kb, "count") && mem &&
				    (v = sc_json_int(buf, va, vb)) >= 0) {
					if (sub == SJ_MAX)
						usage = v;
					else if (v <= INT64_MAX / (1 << 20))
						limit = v << 20;
					mem = false;
				}
			}
		}
		at = e + 1;
	}
	if (job[0] != '\0' && strspn(job, "0123456789") == strlen(job))
		memcpy(ev->host.job, job, sizeof job);
	if (signaled || (error && rc >= 0)) {
		ev->host.exit_code = signaled ? 0 : rc;
		ev->host.has_exit = true;
	}
	ev->host.usage = usage >= 0 ? usage : OD_UNKNOWN;
	ev->host.limit = limit >= 0 ? limit : OD_UNKNOWN;
}

void
sc_before(const char *buf, size_t len, od_event *ev)
{
	char pod[sizeof ev->labels.pod], ns[sizeof ev->labels.namespace_];
	char ctr[sizeof ev->labels.container];

	if (ev->kind == OD_KIND_SLURM_OOM && ev->message != NULL &&
	    strncmp(ev->message, "\"state\":", 8) == 0) {
		sc_before_sacct_json(buf, len, ev);
		return;
	}
	if (ev->kind != OD_KIND_K8S_OOMKILLED)
		return;
	memcpy(pod, ev->labels.pod, sizeof pod);
	memcpy(ns, ev->labels.namespace_, sizeof ns);
	memcpy(ctr, ev->labels.container, sizeof ctr);
	if (ev->message != NULL && (strncmp(ev->message, "reason:", 7) == 0 ||
	    strncmp(ev->message, "\"reason\":", 9) == 0)) {
		/* A pod object (SC_K8S_OBJ). */
		if (ctr[0] == '\0')
			sc_before_status_name(buf, len, ev);
		sc_before_object(buf, len, ev);
		return;
	}
	sc_before_describe(buf, len, ev);
	/* A container name needs a pod around it, or it is some other
	 * output's indented line. */
	if (ev->labels.pod[0] == '\0') {
		memcpy(ev->labels.container, ctr, sizeof ctr);
		memcpy(ev->labels.namespace_, ns, sizeof ns);
	}
}

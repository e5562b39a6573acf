/*
 * live.c: the input of `oomdoc live`.  A log, scanned and diagnosed with
 * the rules as oomdoc diagnoses it, or a JSON report that oomdoc made
 * earlier, perhaps on another machine, recognised by its first bytes.  A
 * log on standard input, or a report, is read into memory; a log file is
 * scanned from its file.  Errors are printed here (through errors.c), one
 * line each.
 */
#define _GNU_SOURCE             /* memmem */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "facts.h"
#include "input.h"
#include "json_read.h"
#include "live.h"
#include "rules.h"

#define LV_SNIFF 4096                   /* bytes read to tell a report */
#define LV_STDIN_MAX (64u * 1024 * 1024) /* a log on standard input */

/* The input: a log (events of a set) or a report (events of its own). */
struct lv_input {
	const char *names[1];
	int nnames;
	od_input info;
	od_events *set;         /* a log's events */
	rl_set *rules;
	jr_doc *doc;            /* a report, and its events */
	od_event *rev;
	const char **rev_input; /* each report event's input name */
	const char **rev_kind;
	int nrev;
	char *text;             /* a report's text, or a log from stdin */
};

/* The kind named in a report, as od_kind. */
static bool
lv_kind(const char *name, od_kind *out)
{
	int k;

	for (k = 0; k < OD_KIND_COUNT; k++)
		if (strcmp(od_kind_name((od_kind)k), name) == 0) {
			*out = (od_kind)k;
			return true;
		}
	return false;
}

/* A byte figure of the report: an integer, or -1 for null or absent. */
static int64_t
lv_figure(const jr_doc *d, jr_ref obj, const char *key)
{
	int64_t v;

	if (!jr_int(d, jr_get(d, obj, key), &v) || v < 0)
		return OD_UNKNOWN;
	return v;
}

/*
 * Turns the events of a report (schema oomdoc.report/1) into events with
 * their causes; the rule ids, titles and names borrow from the document.
 */
static bool
lv_from_report(lv_input *in, const char *shown, od_error *err)
{
	const jr_doc *d = in->doc;
	jr_ref root = jr_root(d), evs, e;
	const char *schema = jr_str(d, jr_get(d, root, "schema"), NULL);
	size_t n;
	int i = 0;

	if (schema == NULL || strcmp(schema, "oomdoc.report/1") != 0) {
		od_error_set(err, shown, 0, 0, "not an oomdoc report of schema "
		    "oomdoc.report/1");
		return false;
	}
	evs = jr_get(d, root, "events");
	if (jr_type_of(d, evs) != JR_ARRAY) {
		od_error_set(err, shown, 0, 0, "the report has no events "
		    "array");
		return false;
	}
	n = jr_count(d, evs);
	if (n > OD_EVENTS_MAX)
		n = OD_EVENTS_MAX;
	in->rev = calloc(n ? n : 1, sizeof *in->rev);
	in->rev_input = calloc(n ? n : 1, sizeof *in->rev_input);
	in->rev_kind = calloc(n ? n : 1, sizeof *in->rev_kind);
	if (in->rev == NULL || in->rev_input == NULL || in->rev_kind == NULL) {
		od_error_set(err, shown, 0, 0, "out of memory");
		return false;
	}
	for (e = jr_first(d, evs); e >= 0 && (size_t)i < n; e = jr_next(d, e)) {
		od_event *ev = &in->rev[i];
		jr_ref mem = jr_get(d, e, "memory"), p, cs, c;
		const char *kind = jr_str(d, jr_get(d, e, "kind"), NULL);
		int64_t v;
		size_t nc;

		od_event_init(ev);
		in->nrev = ++i;
		if (jr_type_of(d, e) != JR_OBJECT || kind == NULL) {
			od_error_set(err, shown, 0, 0, "event %d of the report "
			    "has no kind", i);
			return false;
		}
		in->rev_kind[i - 1] = kind;
		if (!lv_kind(kind, &ev->kind))
			ev->kind = OD_KIND_CUDA_RAW;
		in->rev_input[i - 1] = jr_str(d, jr_get(d, e, "input"), NULL);
		if (in->rev_input[i - 1] == NULL)
			in->rev_input[i - 1] = shown;
		if (jr_int(d, jr_get(d, e, "line"), &v) && v >= 0)
			ev->line = (uint64_t)v;
		if (jr_int(d, jr_get(d, e, "device"), &v) && v >= 0 &&
		    v < 1 << 20)
			ev->device = (int)v;
		if (jr_int(d, jr_get(d, e, "rank"), &v) && v >= 0 &&
		    v < 1 << 30)
			ev->rank = (int)v;
		ev->fatal = jr_type_of(d, jr_get(d, e, "fatal")) != JR_FALSE;
		ev->mem.requested = lv_figure(d, mem, "requested_bytes");
		ev->mem.total = lv_figure(d, mem, "total_bytes");
		ev->mem.free = lv_figure(d, mem, "free_bytes");
		ev->mem.allocated = lv_figure(d, mem, "allocated_bytes");
		ev->mem.reserved = lv_figure(d, mem, "reserved_bytes");
		ev->mem.reserved_unallocated = lv_figure(d, mem,
		    "reserved_unallocated_bytes");
		ev->mem.process_in_use = lv_figure(d, mem,
		    "process_in_use_bytes");
		ev->mem.non_framework = lv_figure(d, mem, "non_framework_bytes");
		ev->mem.allowed = lv_figure(d, mem, "allowed_bytes");
		ev->mem.private_pools = lv_figure(d, mem, "private_pools_bytes");
		for (p = jr_first(d, jr_get(d, mem, "other_processes"));
		    p >= 0 && ev->mem.nprocs < OD_PROCS_MAX; p = jr_next(d, p)) {
			if (!jr_int(d, jr_get(d, p, "pid"), &v))
				continue;
			ev->mem.procs[ev->mem.nprocs].pid = v;
			ev->mem.procs[ev->mem.nprocs].bytes = lv_figure(d, p,
			    "bytes");
			ev->mem.nprocs++;
		}
		cs = jr_get(d, e, "causes");
		nc = jr_count(d, cs);
		if (nc > OD_CAUSES_MAX)
			nc = OD_CAUSES_MAX;
		if (nc == 0)
			continue;
		ev->causes = calloc(nc, sizeof *ev->causes);
		if (ev->causes == NULL) {
			od_error_set(err, shown, 0, 0, "out of memory");
			return false;
		}
		for (c = jr_first(d, cs); c >= 0 && (size_t)ev->ncauses < nc;
		    c = jr_next(d, c)) {
			od_cause *oc = &ev->causes[ev->ncauses];
			double score = 0;

			oc->rule = jr_str(d, jr_get(d, c, "rule"), NULL);
			if (oc->rule == NULL)
				continue;
			oc->title = jr_str(d, jr_get(d, c, "title"), NULL);
			oc->probe = jr_str(d, jr_get(d, c,
			    "confirm_with"), NULL);
			if (jr_num(d, jr_get(d, c, "score"), &score))
				oc->score = score;
			ev->ncauses++;
		}
	}
	return true;
}

/* Reads from r until buf holds cap bytes or the input ends. */
static ssize_t
lv_read_all(in_reader *r, char *buf, size_t cap, od_error *err)
{
	size_t got = 0;

	while (got < cap) {
		ssize_t n = in_read(r, buf + got, cap - got, err);

		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Whether the first bytes are those of an oomdoc JSON report. */
static bool
lv_is_report(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' ||
	    p[i] == '\t'))
		i++;
	return i < n && p[i] == '{' &&
	    memmem(p, n, "\"schema\"", 8) != NULL &&
	    memmem(p, n, "\"oomdoc.report/", 15) != NULL;
}

/*
 * Reads the input: a JSON report (recognised by its first bytes) or a
 * log.  Returns -1 when it was read, or the status to exit with.
 */
int
lv_input_load(lv_input *in, const char *cmd, const char *path,
    const cli_rules *rules)
{
	const char *shown = strcmp(path, "-") == 0 ? "(standard input)" : path;
	bool stdin_in = strcmp(path, "-") == 0;
	od_scanner *sc;
	in_reader *r;
	od_error err;
	ssize_t n, more;
	size_t cap;
	int st;

	memset(&err, 0, sizeof err);
	in->names[0] = shown;
	in->nnames = 1;
	r = in_open(path, &err);
	if (r == NULL) {
		cli_error(cmd, &err);
		return OD_EXIT_ERROR;
	}
	in->text = malloc(LV_SNIFF);
	if (in->text == NULL || (n = lv_read_all(r, in->text, LV_SNIFF,
	    &err)) < 0) {
		if (in->text == NULL)
			od_error_set(&err, shown, 0, 0, "out of memory");
		cli_error(cmd, &err);
		in_close(r);
		return OD_EXIT_ERROR;
	}
	if (!lv_is_report(in->text, (size_t)n) && !stdin_in) {
		/* A log file: scanned as oomdoc scans it. */
		in_close(r);
		free(in->text);
		in->text = NULL;
	} else {
		/* A report, or a log on standard input: kept in memory. */
		char *big;

		cap = lv_is_report(in->text, (size_t)n) ? JR_INPUT_MAX :
		    LV_STDIN_MAX;
		big = realloc(in->text, cap + 1);
		if (big == NULL) {
			od_error_set(&err, shown, 0, 0, "out of memory");
			cli_error(cmd, &err);
			in_close(r);
			return OD_EXIT_ERROR;
		}
		in->text = big;
		more = lv_read_all(r, in->text + n, cap + 1 - (size_t)n, &err);
		in_close(r);
		if (more < 0) {
			cli_error(cmd, &err);
			return OD_EXIT_ERROR;
		}
		n += more;
		if ((size_t)n > cap) {
			od_error_set(&err, shown, 0, 0, "more than %zu MiB: give "
			    "a log this large as a file, or its JSON report",
			    cap >> 20);
			cli_error(cmd, &err);
			return OD_EXIT_ERROR;
		}
		if (lv_is_report(in->text, (size_t)n)) {
			in->doc = jr_parse(in->text, (size_t)n, &err);
			if (in->doc == NULL) {
				snprintf(err.file, sizeof err.file, "%s", shown);
				cli_error(cmd, &err);
				return OD_EXIT_ERROR;
			}
			if (!lv_from_report(in, shown, &err)) {
				cli_error(cmd, &err);
				return OD_EXIT_ERROR;
			}
			return -1;
		}
	}
	/* A log: diagnosed with the rules, as oomdoc diagnoses it. */
	st = cli_rules_open(cmd, rules, &in->rules);
	if (st >= 0)
		return st;
	in->set = od_events_new();
	sc = od_scanner_new(&err);
	if (in->set == NULL || sc == NULL) {
		if (sc != NULL || err.msg[0] == '\0')
			od_error_set(&err, NULL, 0, 0, "out of memory");
		cli_error(cmd, &err);
		od_scanner_free(sc);
		return OD_EXIT_ERROR;
	}
	if (in->text != NULL) {
		od_scan_buffer(sc, in->text, (size_t)n, 0, &in->info, in->set);
	} else if (!od_scan_path(sc, path, 0, &in->info, in->set, &err)) {
		cli_error(cmd, &err);
		od_scanner_free(sc);
		return OD_EXIT_ERROR;
	}
	od_scanner_free(sc);
	for (cap = 0; cap < od_events_count(in->set); cap++)
		rl_apply(in->rules, od_events_get(in->set, cap), NULL);
	return -1;
}

lv_input *
lv_input_new(void)
{
	return calloc(1, sizeof(lv_input));
}

void
lv_input_free(lv_input *in)
{
	int i;

	if (in == NULL)
		return;
	for (i = 0; i < in->nrev; i++)
		od_event_clear(&in->rev[i]);
	free(in->rev);
	free(in->rev_input);
	free(in->rev_kind);
	jr_free(in->doc);
	od_events_free(in->set);
	rl_free(in->rules);
	free(in->info.name);
	free(in->text);
	free(in);
}

static size_t
lv_nevents(const lv_input *in)
{
	return in->set != NULL ? od_events_count(in->set) : (size_t)in->nrev;
}

static od_event *
lv_event_at(const lv_input *in, size_t i)
{
	return in->set != NULL ? od_events_get(in->set, i) : &in->rev[i];
}

lv_item *
lv_input_items(const lv_input *in, size_t *n)
{
	lv_item *items;
	size_t i;

	*n = lv_nevents(in);
	items = calloc(*n > 0 ? *n : 1, sizeof *items);
	if (items == NULL)
		return NULL;
	for (i = 0; i < *n; i++) {
		items[i].ev = lv_event_at(in, i);
		items[i].input = in->set != NULL ? in->names[0] :
		    in->rev_input[i];
		items[i].kind = in->set != NULL ?
		    od_kind_name(items[i].ev->kind) : in->rev_kind[i];
	}
	return items;
}

const char *const *
lv_input_names(const lv_input *in, int *n)
{
	*n = in->nnames;
	return in->names;
}

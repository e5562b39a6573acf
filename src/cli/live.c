/*
 * live.c: the input of `oomdoc live`.  A log, scanned and diagnosed with
 * the rules as oomdoc diagnoses it, or a JSON report that oomdoc made
 * earlier, perhaps on another machine, recognised by its first bytes.  A
 * log on standard input, or a report, is read into memory; a log file is
 * scanned from its file.  Errors are printed here (through errors.c), one
 * line each.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "facts.h"
#include "input.h"
#include "live.h"
#include "report_read.h"
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
	rr_report *doc;         /* a report, and its events (borrowed from it) */
	od_event *rev;
	const char **rev_input; /* each report event's input name */
	const char **rev_kind;
	int nrev;
	char *text;             /* a report's text, or a log from stdin */
};

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
	if (!rr_is_report(in->text, (size_t)n) && !stdin_in) {
		/* A log file: scanned as oomdoc scans it. */
		in_close(r);
		free(in->text);
		in->text = NULL;
	} else {
		/* A report, or a log on standard input: kept in memory. */
		char *big;

		cap = rr_is_report(in->text, (size_t)n) ? RR_INPUT_MAX :
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
		if (rr_is_report(in->text, (size_t)n)) {
			in->doc = rr_read(in->text, (size_t)n, shown, &err);
			if (in->doc == NULL) {
				cli_error(cmd, &err);
				return OD_EXIT_ERROR;
			}
			in->rev = in->doc->events;
			in->rev_input = in->doc->inputs;
			in->rev_kind = in->doc->kinds;
			in->nrev = in->doc->n;
			return -1;
		}
	}
	/* A log: diagnosed with the rules, as oomdoc diagnoses it. */
	st = cli_rules_open(cmd, rules, &in->rules);
	if (st >= 0)
		return st;
	in->set = od_events_new();
	sc = od_scanner_new(od_options_jit(), in->rules->recognisers, &err);
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
	if (in == NULL)
		return;
	rr_free(in->doc);
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

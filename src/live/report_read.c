/*
 * report_read.c: a JSON report read back with jansson, the events set
 * from it by od_event_from_json (src/lib/report_fields.c), so that live
 * mode probes a report's events as it would the log's.
 */
#define _GNU_SOURCE             /* memmem */
#include <stdlib.h>
#include <string.h>

#include "report_json.h"
#include "report_read.h"

bool
rr_is_report(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' ||
	    p[i] == '\t'))
		i++;
	return i < n && p[i] == '{' &&
	    memmem(p, n, "\"schema\"", 8) != NULL &&
	    memmem(p, n, "\"oomdoc.report/", 15) != NULL;
}

void
rr_free(rr_report *r)
{
	int i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n; i++)
		od_event_clear(&r->events[i]);
	free(r->events);
	free(r->inputs);
	free(r->kinds);
	json_decref(r->doc);
	free(r);
}

static rr_report *
rr_fail(rr_report *r, od_error *err, const char *name, const char *msg)
{
	od_error_set(err, name, 0, 0, "%s", msg);
	rr_free(r);
	return NULL;
}

rr_report *
rr_read(const char *text, size_t len, const char *name, od_error *err)
{
	rr_report *r;
	json_error_t je;
	json_t *evs, *e;
	const char *schema;
	size_t i, n;

	if (len > RR_INPUT_MAX) {
		od_error_set(err, name, 0, 0, "more than %u MiB",
		    RR_INPUT_MAX >> 20);
		return NULL;
	}
	r = calloc(1, sizeof *r);
	if (r == NULL)
		return rr_fail(r, err, name, "out of memory");
	/* NUL is allowed in strings: a log's message may hold one. */
	r->doc = json_loadb(text, len, JSON_ALLOW_NUL, &je);
	if (r->doc == NULL) {
		od_error_set(err, name, je.line > 0 ? (uint64_t)je.line : 0,
		    je.column > 0 ? (uint64_t)je.column : 0, "%s", je.text);
		rr_free(r);
		return NULL;
	}
	schema = json_string_value(json_object_get(r->doc, "schema"));
	/* /2 added the account, the shortfall, explains_bytes and evidence
	 * objects; /1's evidence strings are read as texts. */
	if (schema == NULL || (strcmp(schema, "oomdoc.report/2") != 0 &&
	    strcmp(schema, "oomdoc.report/1") != 0))
		return rr_fail(r, err, name, "not an oomdoc report of schema "
		    "oomdoc.report/2 (or /1)");
	evs = json_object_get(r->doc, "events");
	if (!json_is_array(evs))
		return rr_fail(r, err, name, "the report has no events array");
	n = json_array_size(evs);
	if (n > OD_EVENTS_MAX)
		n = OD_EVENTS_MAX;
	r->events = calloc(n ? n : 1, sizeof *r->events);
	r->inputs = calloc(n ? n : 1, sizeof *r->inputs);
	r->kinds = calloc(n ? n : 1, sizeof *r->kinds);
	if (r->events == NULL || r->inputs == NULL || r->kinds == NULL)
		return rr_fail(r, err, name, "out of memory");
	json_array_foreach(evs, i, e) {
		od_event *ev = &r->events[i];
		od_json_ctx cx = { .input = NULL };

		if (i == n)
			break;
		od_event_init(ev);
		r->n++;
		if (!json_is_string(json_object_get(e, "kind"))) {
			od_error_set(err, name, 0, 0, "event %zu of the report "
			    "has no kind", i + 1);
			rr_free(r);
			return NULL;
		}
		if (!od_event_from_json(ev, e, &cx))
			return rr_fail(r, err, name, "out of memory");
		r->kinds[i] = cx.kind;
		/* An empty name ("" or one that starts with \u0000) is none:
		 * written back as null, it would read as the report's name
		 * (fuzz_report_read's round trip). */
		r->inputs[i] = cx.input != NULL && cx.input[0] != '\0' ?
		    cx.input : name;
	}
	return r;
}

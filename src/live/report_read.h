/*
 * report_read.h: a JSON report (schema oomdoc.report/2, or /1) read back, for
 * `oomdoc live REPORT.json`: its events, as the log's would be, through
 * the table of fields the writer uses (src/lib/report_fields.c).
 *
 * Ownership: the report owns its events and every string they and the
 * arrays below point to, except the name given to rr_read (borrowed, for
 * events that name no input); rr_free releases them all.
 */
#ifndef OD_REPORT_READ_H
#define OD_REPORT_READ_H

#include "core.h"

/* The most of a report that is read. */
#define RR_INPUT_MAX (64u * 1024 * 1024)

typedef struct rr_report {
	od_event *events;       /* at most OD_EVENTS_MAX */
	const char **inputs;    /* each event's input name */
	const char **kinds;     /* each event's kind, as the report spells it */
	int n;
	struct json_t *doc;     /* the parsed text, owner of the strings */
} rr_report;

/* Whether the first n bytes of an input are those of an oomdoc report. */
bool rr_is_report(const char *p, size_t n);
/*
 * Reads text[0..len), the report named name (for errors, and the input
 * of events that name none).  NULL with err filled in (the line and
 * column from jansson) when it is not JSON, not of schema
 * oomdoc.report/2 or /1, has no events array, an event without a kind, or
 * memory ran out.
 */
rr_report *rr_read(const char *text, size_t len, const char *name,
    od_error *err);
void rr_free(rr_report *r);

#endif

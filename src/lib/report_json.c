/*
 * report_json.c: the JSON report, for automation (schema oomdoc.report/2,
 * as man/oomdoc.1 describes it under JSON REPORT), built with jansson: the
 * inputs, each event by the table of report_fields.c, and the summary.
 * Also the helpers of report_json.h that the live report shares: the null
 * rule and the writer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_json.h"

json_t *
od_json_figure(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

json_t *
od_json_text(const char *s)
{
	return s == NULL || s[0] == '\0' ? json_null() :
	    od_escape_json(s, strlen(s));
}

bool
od_json_set(json_t *obj, const char *key, json_t *v)
{
	/* jansson takes v, and releases it when it cannot be set. */
	return v != NULL && json_object_set_new(obj, key, v) == 0;
}

/*
 * The text of a document, as json_dumps would give it, or NULL when it
 * could not be made (out of memory); the caller frees it.
 *
 * Not json_dumps itself: jansson (dump.c, do_dump, release 2.14) ignores
 * what dump_string returns for an object's key, so that when its buffer
 * cannot grow for a key, the key is left out, the dump goes on and
 * json_dumps returns a document with `": true` in it as if all went well.
 * This buffer's failure is sticky instead: once an append has failed,
 * every later one fails too, and the text is refused at the end, whatever
 * jansson made of the first failure.
 */
typedef struct {
	char *p;
	size_t n, cap;
	bool failed;
} rp_json_buf;

/* The flags of a report document's text (od_json_write's). */
#define RP_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | \
	JSON_REAL_PRECISION(15))

static int
rp_json_append(const char *s, size_t n, void *arg)
{
	rp_json_buf *b = arg;

	if (b->failed)
		return -1;
	if (n >= b->cap - b->n) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (n >= cap - b->n) {
			if (cap > SIZE_MAX / 2) {
				b->failed = true;
				return -1;
			}
			cap *= 2;
		}
		if ((p = realloc(b->p, cap)) == NULL) {
			b->failed = true;
			return -1;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
	return 0;
}

static char *
rp_json_dumps(const json_t *root, size_t flags)
{
	rp_json_buf b = { 0 };

	if (root == NULL)
		return NULL;
	if (json_dump_callback(root, rp_json_append, &b, flags) != 0 ||
	    b.failed || b.p == NULL) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* Writes root to out with the flags of json_dumps and a newline; false
 * when memory ran out. */
static bool
rp_json_print(FILE *out, const json_t *root, size_t flags)
{
	char *s = rp_json_dumps(root, flags);

	if (s == NULL)
		return false;
	od_escape_json_dump(out, s, strlen(s));
	fputc('\n', out);
	free(s);
	return true;
}

bool
od_json_write(FILE *out, const json_t *root)
{
	/*
	 * Reals with up to 15 significant digits: the decimal a writer
	 * rounded to (a score's two decimals) comes back as it was.
	 */
	return rp_json_print(out, root, RP_JSON_FLAGS);
}

static json_t *
rp_json_input(const od_input *in)
{
	json_t *o = json_object();

	if (o != NULL && od_json_set(o, "name", od_json_text(rp_input_name(in))) &&
	    od_json_set(o, "bytes", json_integer((json_int_t)in->bytes)) &&
	    od_json_set(o, "lines", json_integer((json_int_t)in->lines)) &&
	    od_json_set(o, "compression", od_json_text(in->compression)) &&
	    od_json_set(o, "complete", json_boolean(!in->failed)))
		return o;
	json_decref(o);
	return NULL;
}

static json_t *
rp_json_summary(const od_report_opts *o, od_events *set)
{
	json_t *s = json_object();

	if (s != NULL && od_json_set(s, "events",
	    json_integer((json_int_t)od_events_count(set))) &&
	    od_json_set(s, "events_omitted",
	    json_integer((json_int_t)od_events_dropped(set))) &&
	    od_json_set(s, "top_cause", od_json_text(rp_top_cause(set))) &&
	    od_json_set(s, "fingerprint", od_json_text(o->fingerprint)))
		return s;
	json_decref(s);
	return NULL;
}

/*
 * The mentions of the set (decide.c): what was read as an out-of-memory
 * message but decided no failure, each with its input, line, kind and
 * reason; NULL when there are none or out of memory.
 */
static json_t *
rp_json_mentions(const od_input *inputs, int ninputs, const od_events *set)
{
	size_t i, n = od_events_mention_count(set);
	json_t *a;

	if (n == 0 || (a = json_array()) == NULL)
		return NULL;
	for (i = 0; i < n && i < OD_MENTIONS_MAX; i++) {
		const od_mention *m = od_events_mention_get(set, i);
		json_t *o = json_object();

		if (o == NULL || json_array_append_new(a, o) != 0 ||
		    !od_json_set(o, "input", od_json_text(m->input >= 0 &&
		    m->input < ninputs ? inputs[m->input].name : NULL)) ||
		    !od_json_set(o, "line", json_integer((json_int_t)m->line)) ||
		    !od_json_set(o, "kind", json_string(od_kind_name(m->kind))) ||
		    !od_json_set(o, "reason", json_string(m->reason))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The report as a document, its events left out (an empty list);
 * NULL when out of memory. */
static json_t *
rp_json_doc(const od_report_opts *o, const od_input *inputs, int ninputs,
    od_events *set)
{
	json_t *root = json_object(), *ins = json_array(), *evs = json_array();
	bool ok = root != NULL && ins != NULL && evs != NULL;
	int k;

	for (k = 0; ok && k < ninputs; k++)
		ok = json_array_append_new(ins, rp_json_input(&inputs[k])) == 0;
	if (ok && od_json_set(root, "schema", json_string("oomdoc.report/2")) &&
	    od_json_set(root, "oomdoc_version", json_string(OD_VERSION)) &&
	    od_json_set(root, "inputs", json_incref(ins)) &&
	    od_json_set(root, "events", json_incref(evs)) &&
	    od_json_set(root, "summary", rp_json_summary(o, set))) {
		/* Only where there are mentions, so that a report without
		 * any reads as before. */
		if (od_events_mention_count(set) > 0)
			ok = od_json_set(root, "mentions", rp_json_mentions(
			    inputs, ninputs, set)) && od_json_set(root,
			    "mentions_omitted", json_integer((json_int_t)(
			    od_events_mention_count(set) > OD_MENTIONS_MAX ?
			    od_events_mention_count(set) - OD_MENTIONS_MAX :
			    0)));
		if (!ok) {
			json_decref(ins);
			json_decref(evs);
			json_decref(root);
			return NULL;
		}
		json_decref(ins);
		json_decref(evs);
		return root;
	}
	json_decref(ins);
	json_decref(evs);
	json_decref(root);
	return NULL;
}

/* Where the document's events go: its one key "events" of the top level,
 * the only one after a line break and two blanks (a line break inside a
 * string is escaped), with the empty list of rp_json_doc. */
static const char rp_json_events[] = "\n  \"events\": []";

/* Writes the text of one event, s, as an element of the events list:
 * every line two levels deeper, as in the whole document. */
static void
rp_json_event_text(FILE *out, const char *s)
{
	const char *nl;

	fputs("\n    ", out);
	while ((nl = strchr(s, '\n')) != NULL) {
		od_escape_json_dump(out, s, (size_t)(nl - s));
		fputs("\n    ", out);
		s = nl + 1;
	}
	od_escape_json_dump(out, s, strlen(s));
}

/*
 * The document as od_json_write would write it whole, made an event at a
 * time: the document without its events (rp_json_doc) is written up to
 * its empty list of events, then each event's text, then the rest.  Only
 * one event's values and text are held at once, not those of every event
 * and the document's text besides (the peak memory of a report of 500
 * events with their rank tables).  Out of memory (false), a document that
 * could not be made is not written at all; an event that could not is
 * where the written text stops, so that what was written does not parse.
 */
bool
rp_json(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set)
{
	json_t *doc = rp_json_doc(o, inputs, ninputs, set);
	char *s = rp_json_dumps(doc, RP_JSON_FLAGS), *at;
	size_t i, n = od_events_count(set), head;
	od_json_ctx cx = { .inputs = inputs };

	json_decref(doc);
	if (s == NULL || (at = strstr(s, rp_json_events)) == NULL) {
		free(s);
		return false;
	}
	/* Up to the list's "[", or all of "[]" when there are no events. */
	head = (size_t)(at - s) + sizeof rp_json_events - 1 - (n > 0);
	od_escape_json_dump(out, s, head);
	for (i = 0; i < n; i++) {
		json_t *ev = od_event_to_json(od_events_get(set, i), &cx);
		char *t = rp_json_dumps(ev, RP_JSON_FLAGS);

		json_decref(ev);
		if (t == NULL) {
			free(s);
			return false;
		}
		if (i > 0)
			fputc(',', out);
		rp_json_event_text(out, t);
		free(t);
	}
	if (n > 0)
		fputs("\n  ]", out);
	od_escape_json_dump(out, s + head + (n > 0), strlen(s + head + (n > 0)));
	fputc('\n', out);
	free(s);
	return true;
}

bool
od_report_jsonl_event(FILE *out, const od_input *inputs, const od_event *ev)
{
	od_json_ctx cx = { .inputs = inputs };
	json_t *o = od_event_to_json(ev, &cx);
	/* One line: jansson escapes every newline inside a string. */
	bool ok = rp_json_print(out, o, JSON_COMPACT | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(15));

	json_decref(o);
	return ok;
}

/* The summary as JSON: one object per input, in the order given. */
static json_t *
rp_json_summary_doc(const od_summary_row *rows, int n)
{
	json_t *root = json_object(), *a = json_array();
	bool ok = root != NULL && a != NULL;
	int i;

	for (i = 0; ok && i < n; i++) {
		const od_summary_row *r = &rows[i];
		json_t *o = json_object();

		ok = o != NULL && json_array_append_new(a, o) == 0 &&
		    od_json_set(o, "input", od_json_text(rp_row_name(r))) &&
		    od_json_set(o, "complete", json_boolean(!r->failed)) &&
		    od_json_set(o, "events", json_integer((json_int_t)r->events)) &&
		    od_json_set(o, "failures",
		    json_integer((json_int_t)r->failures)) &&
		    od_json_set(o, "kind", od_json_text(r->kind)) &&
		    od_json_set(o, "top_cause", od_json_text(r->top_cause)) &&
		    od_json_set(o, "fingerprint", od_json_text(r->fingerprint));
	}
	if (ok && od_json_set(root, "schema", json_string("oomdoc.summary/1")) &&
	    od_json_set(root, "oomdoc_version", json_string(OD_VERSION)) &&
	    od_json_set(root, "inputs", json_incref(a))) {
		json_decref(a);
		return root;
	}
	json_decref(a);
	json_decref(root);
	return NULL;
}

void
od_summary_write(FILE *out, od_report_format format,
    const od_summary_row *rows, int n)
{
	json_t *doc;

	if (format != OD_FORMAT_JSON && format != OD_FORMAT_JSONL) {
		rp_text_summary(out, rows, n);
		return;
	}
	doc = rp_json_summary_doc(rows, n);
	if (!od_json_write(out, doc))
		fputs("oomdoc: out of memory\n", stderr);
	json_decref(doc);
}

/*
 * api.c: the public scanner (include/oomdoc/oomdoc.h) over the core's: it
 * owns an od_scanner, the event set its inputs fill and the descriptions
 * of those inputs, hands each complete event to the caller's function,
 * joins a memory snapshot to its event (snapshot.c), and writes the
 * report.  The events' accessors are in api_event.c, the rules' in
 * api_rules.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "core.h"
#include "rules.h"
#include "snapshot.h"

struct oomdoc_scanner {
	od_scanner *sc;
	od_events *set;
	size_t max_events;
	od_input *inputs;       /* ninputs of them, room for cap */
	int ninputs, cap;
	bool open;              /* the last input is started, not finished */
	bool busy;              /* in the caller's event function */
	oomdoc_event_fn *fn;
	void *arg;
};

int
oomdoc_api_version(void)
{
	return OOMDOC_API_VERSION;
}

const char *
oomdoc_version(void)
{
	return OD_VERSION;
}

void
oomdoc_options_init(oomdoc_options *opts)
{
	memset(opts, 0, sizeof *opts);
	opts->struct_size = sizeof *opts;
	opts->jit = true;
	opts->max_events = OOMDOC_EVENTS_MAX;
}

/* Whether the caller's options reach as far as field f. */
#define API_HAS(o, f) \
	((o)->struct_size >= offsetof(oomdoc_options, f) + sizeof (o)->f)

_Static_assert(sizeof ((oomdoc_error *)0)->file ==
    sizeof ((od_error *)0)->file, "oomdoc_error.file is od_error's");
_Static_assert(sizeof ((oomdoc_error *)0)->message ==
    sizeof ((od_error *)0)->msg, "oomdoc_error.message is od_error's");

void
api_error(oomdoc_error *out, const od_error *e)
{
	if (out == NULL)
		return;
	memcpy(out->file, e->file, sizeof out->file);
	out->file[sizeof out->file - 1] = '\0';
	out->line = e->line;
	out->col = e->col;
	memcpy(out->message, e->msg, sizeof out->message);
	out->message[sizeof out->message - 1] = '\0';
}

/* An error with no place, straight into the public one. */
static void
api_fail(oomdoc_error *out, const char *msg)
{
	od_error e;

	memset(&e, 0, sizeof e);
	od_error_set(&e, NULL, 0, 0, "%s", msg);
	api_error(out, &e);
}

/* Whether h is between two inputs and not in the caller's event
 * function, as a whole file or a snapshot needs; false with err filled
 * in. */
static bool
api_between_inputs(const oomdoc_scanner *h, oomdoc_error *err)
{
	if (h->busy || h->open) {
		api_fail(err, h->busy ? "called from the event function" :
		    "an input is started: finish it first");
		return false;
	}
	return true;
}

/* The core's delivery: on to the caller, who may not call back in. */
static void
api_deliver(od_event *ev, void *arg)
{
	oomdoc_scanner *h = arg;

	if (h->fn == NULL)
		return;
	h->busy = true;
	h->fn(ev, h->arg);
	h->busy = false;
}

oomdoc_scanner *
oomdoc_scanner_new(const oomdoc_options *opts, oomdoc_error *err)
{
	oomdoc_options o;
	oomdoc_scanner *h;
	od_error e;

	oomdoc_options_init(&o);
	if (opts != NULL) {
		if (API_HAS(opts, jit))
			o.jit = opts->jit;
		if (API_HAS(opts, max_events))
			o.max_events = opts->max_events;
		if (API_HAS(opts, recognisers))
			o.recognisers = opts->recognisers;
	}
	if (o.max_events < 1 || o.max_events > OOMDOC_EVENTS_MAX) {
		memset(&e, 0, sizeof e);
		od_error_set(&e, NULL, 0, 0, "max_events is %zu: it must be 1 "
		    "to %d", o.max_events, OOMDOC_EVENTS_MAX);
		api_error(err, &e);
		return NULL;
	}
	h = calloc(1, sizeof *h);
	if (h == NULL) {
		api_fail(err, "out of memory");
		return NULL;
	}
	h->max_events = o.max_events;
	h->set = od_events_new_max(o.max_events);
	memset(&e, 0, sizeof e);
	if (h->set == NULL || (h->sc = od_scanner_new(o.jit,
	    api_recognisers(o.recognisers), &e)) == NULL) {
		if (h->set == NULL)
			api_fail(err, "out of memory");
		else
			api_error(err, &e);
		oomdoc_scanner_free(h);
		return NULL;
	}
	od_scanner_on_event(h->sc, api_deliver, h);
	return h;
}

static void
api_forget_inputs(oomdoc_scanner *h)
{
	int i;

	for (i = 0; i < h->ninputs; i++)
		free(h->inputs[i].name);
	h->ninputs = 0;
}

void
oomdoc_scanner_free(oomdoc_scanner *h)
{
	if (h == NULL)
		return;
	api_forget_inputs(h);
	free(h->inputs);
	od_events_free(h->set);
	od_scanner_free(h->sc);
	free(h);
}

void
oomdoc_scanner_on_event(oomdoc_scanner *h, oomdoc_event_fn *fn, void *arg)
{
	h->fn = fn;
	h->arg = arg;
}

/* A new entry at the end of the inputs, or NULL when memory ran out. */
static od_input *
api_add_input(oomdoc_scanner *h)
{
	od_input *in;

	if (h->ninputs == h->cap) {
		int cap = h->cap > 0 ? 2 * h->cap : 4;

		in = realloc(h->inputs, (size_t)cap * sizeof *in);
		if (in == NULL)
			return NULL;
		h->inputs = in;
		h->cap = cap;
	}
	in = &h->inputs[h->ninputs];
	memset(in, 0, sizeof *in);
	in->compression = "none";
	return in;
}

bool
oomdoc_scanner_begin(oomdoc_scanner *h, const char *name, oomdoc_error *err)
{
	od_input *in;

	if (h->busy || h->open) {
		api_fail(err, h->busy ? "called from the event function" :
		    "an input is already started");
		return false;
	}
	in = api_add_input(h);
	if (in == NULL || (in->name = strdup(name != NULL ? name : "-")) ==
	    NULL) {
		api_fail(err, "out of memory");
		return false;
	}
	od_scan_begin(h->sc, h->ninputs++, h->set);
	h->open = true;
	return true;
}

bool
oomdoc_scanner_feed(oomdoc_scanner *h, const void *chunk, size_t len)
{
	if (h->busy || (!h->open && !oomdoc_scanner_begin(h, "-", NULL)))
		return false;
	od_scan_feed(h->sc, chunk, len);
	return true;
}

bool
oomdoc_scanner_flush(oomdoc_scanner *h)
{
	if (h->busy || !h->open)
		return false;
	od_scan_flush(h->sc);
	return true;
}

bool
oomdoc_scanner_finish(oomdoc_scanner *h)
{
	bool ok;

	if (h->busy || !h->open)
		return false;
	ok = od_scan_finish(h->sc, &h->inputs[h->ninputs - 1]);
	h->open = false;
	return ok;
}

bool
oomdoc_scanner_scan_file(oomdoc_scanner *h, const char *path,
    oomdoc_error *err)
{
	od_input *in;
	od_error e;
	bool ok;

	if (!api_between_inputs(h, err))
		return false;
	in = api_add_input(h);
	if (in == NULL) {
		api_fail(err, "out of memory");
		return false;
	}
	memset(&e, 0, sizeof e);
	ok = od_scan_path(h->sc, path, h->ninputs, in, h->set, &e);
	/* An input left without a name (out of memory) is not kept. */
	if (in->name != NULL)
		h->ninputs++;
	if (!ok)
		api_error(err, &e);
	return ok;
}

size_t
oomdoc_scanner_event_count(const oomdoc_scanner *h)
{
	return od_events_count(h->set);
}

oomdoc_event *
oomdoc_scanner_event(oomdoc_scanner *h, size_t i)
{
	return od_events_get(h->set, i);
}

uint64_t
oomdoc_scanner_events_dropped(const oomdoc_scanner *h)
{
	return od_events_dropped(h->set);
}

int
oomdoc_scanner_input_count(const oomdoc_scanner *h)
{
	return h->ninputs;
}

const char *
oomdoc_scanner_input_name(const oomdoc_scanner *h, int i)
{
	return i >= 0 && i < h->ninputs ? h->inputs[i].name : NULL;
}

uint64_t
oomdoc_scanner_input_bytes(const oomdoc_scanner *h, int i)
{
	return i >= 0 && i < h->ninputs ? h->inputs[i].bytes : 0;
}

uint64_t
oomdoc_scanner_input_lines(const oomdoc_scanner *h, int i)
{
	return i >= 0 && i < h->ninputs ? h->inputs[i].lines : 0;
}

bool
oomdoc_scanner_reset(oomdoc_scanner *h)
{
	od_events *set;

	if (h->busy || h->open)
		return false;
	set = od_events_new_max(h->max_events);
	if (set == NULL)
		return false;
	od_events_free(h->set);
	h->set = set;
	api_forget_inputs(h);
	return true;
}

bool
oomdoc_scanner_report(oomdoc_scanner *h, const oomdoc_rules *rules,
    FILE *out, oomdoc_report_format format, bool color)
{
	static const od_report_format formats[] = {
		[OOMDOC_REPORT_TEXT] = OD_FORMAT_TEXT,
		[OOMDOC_REPORT_JSON] = OD_FORMAT_JSON,
		[OOMDOC_REPORT_MARKDOWN] = OD_FORMAT_MARKDOWN,
		[OOMDOC_REPORT_JSONL] = OD_FORMAT_JSONL,
		[OOMDOC_REPORT_GITHUB] = OD_FORMAT_GITHUB,
		[OOMDOC_REPORT_PROMETHEUS] = OD_FORMAT_PROMETHEUS,
		[OOMDOC_REPORT_HTML] = OD_FORMAT_HTML,
	};
	od_report_opts o;
	size_t i;

	if ((unsigned)format >= sizeof formats / sizeof formats[0])
		return false;
	memset(&o, 0, sizeof o);
	o.format = formats[format];
	o.color = color;
	/* A program's text report is not wrapped and keeps each message
	 * whole, as before the command's wrapping: it is often written into
	 * a log that oomdoc reads again, where the whole message is the
	 * same failure as the traceback's. */
	o.width = OD_WIDTH_NONE;
	o.verbose = true;
	for (i = 0; i < od_events_count(h->set); i++)
		oomdoc_rules_apply(rules, od_events_get(h->set, i));
	rl_report_fingerprint(h->set, o.fingerprint);
	return od_report_write(out, &o, h->inputs, h->ninputs, h->set) &&
	    !ferror(out);
}

/*
 * The report into a memory stream (POSIX open_memstream, which allocates
 * with malloc): what the stream holds once closed is the text, or NULL
 * when writing failed, which a full report never leaves half-written to
 * a caller.
 */
char *
oomdoc_scanner_report_string(oomdoc_scanner *h, const oomdoc_rules *rules,
    oomdoc_report_format format, bool color, size_t *len)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f;
	bool ok;

	if (len != NULL)
		*len = 0;
	f = open_memstream(&text, &n);
	if (f == NULL)
		return NULL;
	ok = oomdoc_scanner_report(h, rules, f, format, color);
	/* fclose writes the last bytes and sets text and n. */
	if (fclose(f) != 0 || !ok) {
		free(text);
		return NULL;
	}
	if (len != NULL)
		*len = n;
	return text;
}

long
oomdoc_scanner_join_snapshot(oomdoc_scanner *h, const char *path,
    oomdoc_error *err)
{
	json_t *root;
	od_error e;
	long i;

	if (!api_between_inputs(h, err))
		return -2;
	memset(&e, 0, sizeof e);
	root = od_snapshot_load(path, NULL, &e);
	if (root == NULL) {
		api_error(err, &e);
		return -2;
	}
	i = od_snapshot_join(root, h->set);
	json_decref(root);
	if (i == -2)
		api_fail(err, "out of memory");
	return i;
}

void
oomdoc_free(void *p)
{
	free(p);
}

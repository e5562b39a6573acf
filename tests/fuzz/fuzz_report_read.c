/*
 * fuzz_report_read.c: libFuzzer target for live mode's report reader
 * (src/live/report_read.c), which reads reports made elsewhere, perhaps
 * by someone else.
 *
 * Each input is read as a report.  A refusal must come with a message and
 * the report's name.  What is read must keep the bounds of od_event (the
 * counts within their arrays, every text NUL-terminated within its
 * buffer, the message within OD_MESSAGE_MAX), every event must have a kind
 * and an input name, and every cause a rule.  Then the events are written
 * as a report again and read back, and that report written once more:
 * the two must be the same bytes, so that the writer and the reader keep
 * to the one table of fields (src/lib/report_fields.c).  Any crash, leak,
 * sanitizer report or broken invariant is a bug.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_json.h"
#include "report_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_TEXT(buf) do { \
	if (memchr((buf), '\0', sizeof (buf)) == NULL) \
		abort(); \
} while (0)

static void
fz_check(const rr_report *r)
{
	int i, k;

	if (r->n < 0 || r->n > OD_EVENTS_MAX)
		abort();
	for (i = 0; i < r->n; i++) {
		const od_event *ev = &r->events[i];

		if (r->kinds[i] == NULL || r->inputs[i] == NULL)
			abort();
		if (ev->ncauses < 0 || ev->ncauses > OD_CAUSES_MAX ||
		    ev->mem.nprocs < 0 || ev->mem.nprocs > OD_PROCS_MAX ||
		    ev->nframes < 0 || ev->nframes > OD_FRAMES_MAX ||
		    ev->nranks < 0 || ev->nranks > OD_RANKS_MAX ||
		    ev->ctx.nreadings < 0)
			abort();
		if (ev->message != NULL && (ev->message_len > OD_MESSAGE_MAX ||
		    ev->message[ev->message_len] != '\0'))
			abort();
		for (k = 0; k < ev->ncauses; k++)
			if (ev->causes[k].rule == NULL)
				abort();
		for (k = 0; k < ev->nframes; k++) {
			FZ_TEXT(ev->frames[k].file);
			FZ_TEXT(ev->frames[k].func);
			FZ_TEXT(ev->frames[k].code);
		}
		FZ_TEXT(ev->timestamp);
		FZ_TEXT(ev->exception);
		FZ_TEXT(ev->phase);
		FZ_TEXT(ev->host.process);
		FZ_TEXT(ev->fingerprint);
	}
}

/*
 * r's events written by the report's table (od_event_to_json), each its
 * own input named as the report names it, in a report of theirs (caller
 * frees).  Not through an event set, which would merge echoes.
 */
static char *
fz_write(const rr_report *r, size_t *len)
{
	od_input *in = calloc((size_t)r->n + 1, sizeof *in);
	json_t *doc = json_pack("{s:s, s:[]}", "schema", "oomdoc.report/1",
	    "events"), *evs = json_object_get(doc, "events");
	char *out = NULL;
	FILE *f = open_memstream(&out, len);
	int i;

	if (in == NULL || doc == NULL || f == NULL)
		abort();
	for (i = 0; i < r->n; i++) {
		od_json_ctx cx = { .inputs = in };
		od_event ev = r->events[i];

		in[i].name = (char *)(uintptr_t)r->inputs[i];
		ev.input = i;
		if (json_array_append_new(evs, od_event_to_json(&ev, &cx)) != 0)
			abort();
	}
	if (!od_json_write(f, doc))
		abort();
	fclose(f);
	json_decref(doc);
	free(in);
	return out;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	od_error err;
	rr_report *r, *again;
	char *first, *second;
	size_t n1 = 0, n2 = 0;

	if (size > 1 << 20)
		return 0;
	memset(&err, 0, sizeof err);
	r = rr_read((const char *)data, size, "fuzz.json", &err);
	if (r == NULL) {
		if (err.msg[0] == '\0' || strcmp(err.file, "fuzz.json") != 0)
			abort();
		return 0;
	}
	fz_check(r);
	first = fz_write(r, &n1);
	rr_free(r);
	again = rr_read(first, n1, "fuzz.json", &err);
	if (again == NULL)
		abort();
	fz_check(again);
	second = fz_write(again, &n2);
	rr_free(again);
	if (n1 != n2 || memcmp(first, second, n1) != 0)
		abort();
	free(first);
	free(second);
	return 0;
}

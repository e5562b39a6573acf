/*
 * report_github.c: --format github, GitHub Actions workflow commands, one
 * annotation per event:
 *
 *   ::error file=INPUT,line=N,endLine=M,title=KIND::MESSAGE
 *
 * "error" for a failure, "warning" for a non-fatal event; the message
 * says what failed with the figures the log gave, the top cause with its
 * explanation, and that cause's first fix.  Without an event, one
 * "::notice" says that none was found.
 *
 * Escaping.  A workflow command is one line that the runner parses; text
 * from a log must neither end it nor start another command.  The values
 * are escaped as the Actions toolkit escapes them (actions/toolkit,
 * packages/core/src/command.ts, escapeData and escapeProperty, as of
 * @actions/core 3.0.1): in the message '%' as %25, CR as %0D and LF as
 * %0A; in a property also ':' as %3A and ',' as %2C.  Before that, log
 * text goes through od_escape_text (escape.c), as the text report's does:
 * controls other than newline and invalid UTF-8 bytes become \xNN and
 * invisible or bidi format characters \uXXXX, so an annotation shows what
 * the log holds and cannot hide any of it.
 */
#define _POSIX_C_SOURCE 200809L  /* open_memstream */
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The workflow-command escaping of s (n bytes) to out; with property, the
 * stricter one of a property's value. */
static void
gh_escape(FILE *out, const char *s, size_t n, bool property)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '%')
			fputs("%25", out);
		else if (c == '\r')
			fputs("%0D", out);
		else if (c == '\n')
			fputs("%0A", out);
		else if (property && c == ':')
			fputs("%3A", out);
		else if (property && c == ',')
			fputs("%2C", out);
		else
			fputc(c, out);
	}
}

/* Log text into the message being built: escaped for a terminal, a
 * newline in it kept (gh_escape makes it %0A), indented by two spaces. */
static void
gh_text(FILE *m, const char *s)
{
	if (s != NULL)
		od_escape_text(m, s, strlen(s), "  ");
}

/* Text from outside (a file name) as a property's value: escaped for a
 * terminal on one line (a newline as \x0a), then as a property. */
static bool
gh_prop_text(FILE *p, const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	bool ok = m != NULL;

	if (ok) {
		od_escape_line(m, s);
		ok = fclose(m) == 0;
	}
	if (ok)
		gh_escape(p, buf, len, true);
	free(buf);
	return ok;
}

/* "what=SIZE" for a figure the log gave; *sep is written before all but
 * the first. */
static void
gh_figure(FILE *m, const char *what, int64_t v, const char **sep)
{
	char sz[48];

	if (v < 0)
		return;
	od_size_format(v, sz, sizeof sz);
	fprintf(m, "%s%s %s", *sep, what, sz);
	*sep = ", ";
}

/* The message of ev's annotation into m. */
static void
gh_message(FILE *m, const od_event *ev)
{
	const char *sep = "";
	const od_cause *c = ev->ncauses > 0 ? &ev->causes[0] : NULL;
	int k;

	gh_text(m, od_event_title(ev));
	if (ev->rank >= 0)
		fprintf(m, " on rank %d", ev->rank);
	if (ev->device >= 0)
		fprintf(m, " (%s %d)", od_device_word(ev), ev->device);
	if (ev->mem.requested >= 0 || ev->mem.free >= 0 || ev->mem.total >= 0) {
		fputs(": ", m);
		gh_figure(m, "requested", ev->mem.requested, &sep);
		gh_figure(m, "free", ev->mem.free, &sep);
		gh_figure(m, "capacity", ev->mem.total, &sep);
	}
	if (ev->secondary != NULL) {
		fputs("\nFollows from the first failure: ", m);
		gh_text(m, ev->secondary);
	}
	if (c == NULL) {
		fputs("\nNo rule matched.", m);
	} else {
		fprintf(m, "\nLikely cause: ");
		gh_text(m, c->title);
		fprintf(m, " (%s, %s confidence)", c->rule,
		    od_confidence_name(c->confidence));
		if (c->explanation != NULL) {
			fputs("\n", m);
			gh_text(m, c->explanation);
		}
		for (k = 0; k < c->nfixes && k < 1; k++) {
			const od_fix *f = &c->fixes[k];

			fputs("\nFix: ", m);
			gh_text(m, f->text);
			if (f->env_name != NULL) {
				fputs("\n  export ", m);
				gh_text(m, f->env_name);
				fputc('=', m);
				gh_text(m, f->env_value);
			}
			if (f->code != NULL && f->code[0] != '\0') {
				fputs("\n  ", m);
				gh_text(m, f->code);
			}
			if (f->config_key != NULL) {
				fputs("\n  ", m);
				gh_text(m, f->config_key);
				fputs(": ", m);
				gh_text(m, f->config_value);
			}
		}
	}
	if (ev->fingerprint[0] != '\0')
		fprintf(m, "\nFingerprint %s", ev->fingerprint);
}

/*
 * One workflow command, ::CMD PROPS::MESSAGE, each part built into a
 * memory stream by its function from arg (props: escaped by it, "" for
 * none, false when out of memory; the message: escaped here).  False
 * when out of memory.
 */
static bool
gh_command(FILE *out, const char *cmd, bool (*props)(FILE *, const void *),
    void (*message)(FILE *, const void *), const void *arg)
{
	char *pb = NULL, *mb = NULL;
	size_t plen = 0, mlen = 0;
	FILE *p = open_memstream(&pb, &plen);
	FILE *m = p != NULL ? open_memstream(&mb, &mlen) : NULL;
	bool ok = m != NULL;

	if (ok) {
		ok = props(p, arg);
		message(m, arg);
	}
	/* Each stream is closed once, whatever happened to the other. */
	ok = (p == NULL || fclose(p) == 0) && ok;
	ok = (m == NULL || fclose(m) == 0) && ok;
	if (ok) {
		fprintf(out, "::%s%s%s::", cmd, plen > 0 ? " " : "", pb);
		gh_escape(out, mb, mlen, false);
		fputc('\n', out);
	}
	free(pb);
	free(mb);
	return ok;
}

/* What an event's annotation is made from. */
typedef struct {
	const od_input *in;
	const od_event *ev;
} gh_item;

/*
 * The properties of an event's annotation: file and line where its input
 * is a named file (standard input has no file to point at), and the
 * title.
 */
static bool
gh_event_props(FILE *p, const void *arg)
{
	const gh_item *it = arg;
	const char *title = od_event_title(it->ev);

	if (it->in->name != NULL && strcmp(it->in->name, "-") != 0) {
		fputs("file=", p);
		if (!gh_prop_text(p, it->in->name))
			return false;
		fprintf(p, ",line=%llu", (unsigned long long)it->ev->line);
		if (it->ev->end_line > it->ev->line)
			fprintf(p, ",endLine=%llu",
			    (unsigned long long)it->ev->end_line);
		fputc(',', p);
	}
	fputs("title=oomdoc: ", p);
	gh_escape(p, title, strlen(title), true);
	return true;
}

static void
gh_event_message(FILE *m, const void *arg)
{
	gh_message(m, ((const gh_item *)arg)->ev);
}

static bool
gh_none_props(FILE *p, const void *arg)
{
	(void)arg;
	fputs("title=oomdoc", p);
	return true;
}

/* The inputs of a run without an event. */
typedef struct {
	const od_input *inputs;
	int n;
} gh_run;

/* Without an event: how many inputs were read to their end, and how many
 * were not (an input that could not be read is not one without a
 * failure). */
static void
gh_none_message(FILE *m, const void *arg)
{
	const gh_run *r = arg;
	int i, bad = 0;

	for (i = 0; i < r->n; i++)
		bad += r->inputs[i].failed;
	fprintf(m, "No out-of-memory failure found in %d input%s read to the "
	    "end", r->n - bad, r->n - bad == 1 ? "" : "s");
	if (bad > 0)
		fprintf(m, "; %d input%s could not be read to the end", bad,
		    bad == 1 ? "" : "s");
	fputc('.', m);
}

bool
rp_github(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set)
{
	size_t i, n = od_events_count(set);
	gh_run run = { .inputs = inputs, .n = ninputs };

	(void)o;
	if (n == 0)
		return gh_command(out, "notice", gh_none_props, gh_none_message,
		    &run);
	for (i = 0; i < n; i++) {
		const od_event *ev = od_events_get(set, i);
		gh_item it = { .in = &inputs[ev->input], .ev = ev };

		if (!gh_command(out, ev->fatal ? "error" : "warning",
		    gh_event_props, gh_event_message, &it))
			return false;
	}
	return true;
}

/*
 * report_markdown.c: the Markdown report, for tickets.  Everything that
 * comes from the log or from a rule goes out either escaped by
 * od_escape_markdown (escape.c), so that no link, tag, mention, emphasis
 * or table break can form, or inside a fenced block longer than any
 * backtick run in it, where nothing is interpreted.
 */
#include <string.h>

#include "context.h"
#include "facts.h"
#include "report.h"

static void
rp_md_cstr(FILE *out, const char *s)
{
	od_escape_markdown(out, s, strlen(s));
}

/* A fenced block holding s verbatim (controls escaped). */
static void
rp_md_fence(FILE *out, const char *info, const char *s, size_t n)
{
	size_t run = 0, longest = 0, i;
	int k, fence;

	for (i = 0; i < n; i++) {
		run = s[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	fence = longest >= 3 ? (int)longest + 1 : 3;
	for (k = 0; k < fence; k++)
		fputc('`', out);
	fprintf(out, "%s\n", info);
	od_escape_text(out, s, n, "");
	fputc('\n', out);
	for (k = 0; k < fence; k++)
		fputc('`', out);
	fputs("\n\n", out);
}

static void
rp_md_size_row(FILE *out, const char *label, int64_t v)
{
	char sz[48];

	if (v < 0)
		return;
	od_size_format(v, sz, sizeof sz);
	fprintf(out, "| %s | %s (%lld bytes) |\n", label, sz, (long long)v);
}

/* The series of memory readings as a row: the sparkline (always in block
 * characters: Markdown is UTF-8) between the least and largest reading. */
static void
rp_md_readings(FILE *out, const od_event *ev)
{
	char line[OD_READINGS_MAX * 3 + 1], lo[32], hi[32];
	cx_series s;

	if (rp_sparkline(&ev->ctx, ev->rank, true, line, sizeof line) == 0)
		return;
	cx_series_of(&ev->ctx, ev->rank, &s);
	od_size_format(s.min, lo, sizeof lo);
	od_size_format(s.max, hi, sizeof hi);
	fprintf(out, "| memory readings | min %s `%s` max %s (%d of %s memory",
	    lo, line, hi, s.n, od_reading_name(s.what));
	if (s.rank >= 0)
		fprintf(out, ", rank %d", s.rank);
	if (s.have_rate)
		fprintf(out, ", steps %lld to %lld", (long long)s.first_step,
		    (long long)s.last_step);
	fputs(") |\n", out);
}

/* A size for a table cell: "\-" (an escaped "-") when unknown. */
static void
rp_md_cell(FILE *out, int64_t v)
{
	char sz[48];

	if (v < 0) {
		fputs(" \\- |", out);
		return;
	}
	od_size_format(v, sz, sizeof sz);
	fprintf(out, " %s |", sz);
}

/* The per-rank table of a failure that ranks reported with different
 * figures (event.c), first failure first. */
static void
rp_md_per_rank(FILE *out, const od_event *ev, const od_input *inputs)
{
	bool inputs_differ = false;
	int i;

	if (ev->nper_rank == 0)
		return;
	for (i = 0; i < ev->nper_rank; i++)
		inputs_differ |= ev->per_rank[i].input != ev->input;
	fprintf(out, "%d ranks reported it with different figures; rank %d "
	    "first:\n\n", ev->nper_rank + ev->per_rank_dropped,
	    ev->per_rank[0].rank);
	fputs("| rank | GPU | line | requested | free | allocated | reserved "
	    "| total |", out);
	fputs(inputs_differ ? " input |\n" : "\n", out);
	fputs("|---|---|---|---|---|---|---|---|", out);
	fputs(inputs_differ ? "---|\n" : "\n", out);
	for (i = 0; i < ev->nper_rank; i++) {
		const od_rank_row *r = &ev->per_rank[i];

		fprintf(out, "| %d |", r->rank);
		if (r->device >= 0)
			fprintf(out, " %d |", r->device);
		else
			fputs(" \\- |", out);
		if (r->line > 0)
			fprintf(out, " %llu |", (unsigned long long)r->line);
		else
			fputs(" \\- |", out);
		rp_md_cell(out, r->requested);
		rp_md_cell(out, r->free);
		rp_md_cell(out, r->allocated);
		rp_md_cell(out, r->reserved);
		rp_md_cell(out, r->total);
		if (inputs_differ) {
			fputc(' ', out);
			rp_md_cstr(out, rp_input_name(&inputs[r->input]));
			fputs(" |", out);
		}
		fputc('\n', out);
	}
	fputc('\n', out);
	if (ev->per_rank_dropped > 0)
		fprintf(out, "%d more ranks are not listed.\n\n",
		    ev->per_rank_dropped);
}

static void
rp_md_event(FILE *out, size_t n, const od_event *ev, const od_input *inputs,
    int ninputs, const od_event *first, size_t nfirst)
{
	const od_memory *m = &ev->mem;
	const char *name = rp_input_name(&inputs[ev->input]);
	int i, k, self = fc_self(ev);

	fprintf(out, "### %zu. ", n);
	rp_md_cstr(out, od_kind_title(ev->kind));
	fputs(ev->fatal ? "\n\n" : " (warning)\n\n", out);
	fputs("| | |\n|---|---|\n| where | ", out);
	rp_md_cstr(out, name);
	fprintf(out, " line %llu", (unsigned long long)ev->line);
	if (ev->end_line > ev->line)
		fprintf(out, "\\-%llu", (unsigned long long)ev->end_line);
	fputs(" |\n", out);
	fprintf(out, "| kind | %s, confidence %s |\n", od_kind_name(ev->kind),
	    od_confidence_name(ev->confidence));
	if (ev->rank >= 0) {
		fprintf(out, "| rank | %d", ev->rank);
		if (ev->nranks > 1) {
			fputs(" (printed by ranks ", out);
			for (i = 0; i < ev->nranks; i++)
				fprintf(out, "%s%d", i ? ", " : "", ev->ranks[i]);
			fputc(')', out);
		}
		fputs(" |\n", out);
	}
	if (ev->device >= 0)
		fprintf(out, "| GPU | %d |\n", ev->device);
	if (ev->first_failure) {
		fprintf(out, "| story | the run's first failure, %s",
		    ninputs > 1 ? "in the order of the inputs" : "in log order");
		if (ev->rank >= 0)
			fprintf(out, ": rank %d (the reports that follow it, "
			    "and torchrun's \"root cause\" table, may name "
			    "other ranks)", ev->rank);
		fputs(" |\n", out);
	}
	if (ev->secondary != NULL && first != NULL) {
		fprintf(out, "| secondary | follows from event %zu (line %llu",
		    nfirst, (unsigned long long)first->line);
		if (first->rank >= 0)
			fprintf(out, ", rank %d", first->rank);
		fputs("): ", out);
		rp_md_cstr(out, ev->secondary);
		fputs(" |\n", out);
	}
	if (ev->exception[0] != '\0') {
		fputs("| exception | ", out);
		rp_md_cstr(out, ev->exception);
		fputs(" |\n", out);
	}
	if (ev->step >= 0)
		fprintf(out, "| step | %lld |\n", (long long)ev->step);
	if (ev->phase[0] != '\0')
		fprintf(out, "| phase | %s |\n", ev->phase);
	rp_md_size_row(out, "requested", m->requested);
	rp_md_size_row(out, "total capacity", m->total);
	rp_md_size_row(out, "free", m->free);
	rp_md_size_row(out, "this process", m->process_in_use);
	rp_md_size_row(out, "reserved by PyTorch", m->reserved);
	rp_md_size_row(out, "allocated", m->allocated);
	rp_md_size_row(out, "reserved, unallocated", m->reserved_unallocated);
	rp_md_size_row(out, "private pools", m->private_pools);
	rp_md_size_row(out, "non\\-framework", m->non_framework);
	rp_md_size_row(out, "allowed / limit", m->allowed);
	rp_md_size_row(out, "peak in use", m->peak);
	for (i = 0; i < m->nprocs; i++) {
		char label[48];

		snprintf(label, sizeof label, "process %lld%s",
		    (long long)m->procs[i].pid, i == self ? " (this one)" : "");
		rp_md_size_row(out, label, m->procs[i].bytes);
	}
	if (ev->host.pid >= 0)
		fprintf(out, "| killed process | %lld |\n",
		    (long long)ev->host.pid);
	rp_md_readings(out, ev);
	rp_md_size_row(out, "host anonymous RSS", ev->host.anon_rss);
	rp_md_size_row(out, "host usage", ev->host.usage);
	rp_md_size_row(out, "host limit", ev->host.limit);
	fputc('\n', out);
	rp_md_per_rank(out, ev, inputs);
	if (m->total > 0) {
		fputs("```text\n", out);
		rp_bar(out, ev, "");
		fputs("```\n\n", out);
	}
	fputs("Message:\n\n", out);
	rp_md_fence(out, "text", ev->message != NULL ? ev->message : "",
	    ev->message_len);
	if (ev->ncauses == 0)
		fputs("No rule matched this event.\n\n", out);
	for (i = 0; i < ev->ncauses; i++) {
		const od_cause *c = &ev->causes[i];

		fprintf(out, "%d\\. **", i + 1);
		rp_md_cstr(out, c->rule);
		fprintf(out, "** (confidence %s, score %.2f): ",
		    od_confidence_name(c->confidence), c->score);
		rp_md_cstr(out, c->title);
		fputs("\n\n", out);
		if (c->explanation != NULL) {
			rp_md_cstr(out, c->explanation);
			fputs("\n\n", out);
		}
		rp_explains(out, "- ", c, ev);
		for (k = 0; k < c->nevidence; k++) {
			fputs("- evidence: ", out);
			rp_md_cstr(out, c->evidence[k].text);
			fputc('\n', out);
		}
		for (k = 0; k < c->nfixes; k++) {
			const od_fix *f = &c->fixes[k];

			fputs("- fix: ", out);
			rp_md_cstr(out, f->text);
			fputc('\n', out);
		}
		if (c->nevidence > 0 || c->nfixes > 0 || c->cause_bytes >= 0)
			fputc('\n', out);
		for (k = 0; k < c->nfixes; k++) {
			const od_fix *f = &c->fixes[k];
			char line[1024];

			if (f->env_name != NULL) {
				snprintf(line, sizeof line, "export %s=%s",
				    f->env_name, f->env_value);
				rp_md_fence(out, "sh", line, strlen(line));
			}
			if (f->code != NULL)
				rp_md_fence(out, "python", f->code,
				    strlen(f->code));
			if (f->config_key != NULL) {
				snprintf(line, sizeof line, "%s: %s",
				    f->config_key, f->config_value);
				rp_md_fence(out, "yaml", line, strlen(line));
			}
		}
	}
	if (ev->fingerprint[0] != '\0')
		fprintf(out, "Fingerprint: `%s`\n\n", ev->fingerprint);
}

void
rp_markdown(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set)
{
	size_t i, n = od_events_count(set), nfirst = 0;
	const char *top = rp_top_cause(set);
	const od_event *first = rp_first_failure(set, &nfirst);
	int k;

	fprintf(out, "## oomdoc: %zu out\\-of\\-memory event%s\n\n", n,
	    n == 1 ? "" : "s");
	fputs("**Summary:** ", out);
	if (n == 0) {
		fputs("no out\\-of\\-memory failure found", out);
	} else {
		od_event *ev = od_events_get(set, 0);

		rp_md_cstr(out, od_kind_title(ev->kind));
		if (ev->device >= 0)
			fprintf(out, " on GPU %d", ev->device);
		if (ev->rank >= 0)
			fprintf(out, ", rank %d", ev->rank);
		fputs(", in ", out);
		rp_md_cstr(out, rp_input_name(&inputs[ev->input]));
		fprintf(out, " line %llu", (unsigned long long)ev->line);
		if (top != NULL) {
			fputs("; likely cause: ", out);
			rp_md_cstr(out, top);
		}
	}
	fputs(".", out);
	if (o->fingerprint[0] != '\0')
		fprintf(out, " Fingerprint `%s`.", o->fingerprint);
	fputs("\n\nInputs: ", out);
	for (k = 0; k < ninputs; k++) {
		if (k)
			fputs(", ", out);
		rp_md_cstr(out, rp_input_name(&inputs[k]));
		fprintf(out, " (%llu lines%s)",
		    (unsigned long long)inputs[k].lines,
		    inputs[k].failed ? ", not read to the end" : "");
	}
	fputs("\n\n", out);
	for (i = 0; i < n; i++)
		rp_md_event(out, i + 1, od_events_get(set, i), inputs, ninputs,
		    first, nfirst + 1);
	if (od_events_dropped(set) > 0)
		fprintf(out, "%llu more events were not kept.\n",
		    (unsigned long long)od_events_dropped(set));
}

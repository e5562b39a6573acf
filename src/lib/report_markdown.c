/*
 * report_markdown.c: the Markdown report, for tickets (GitHub, GitLab).
 * Its prose is oomdoc's own words only: everything that comes from the
 * log, a file name or a rule goes into a code span or a fenced block
 * (od_escape_markdown_code and od_escape_markdown_fence, escape.c), where
 * no link, mention, reference, emoji or HTML can form and the text pastes
 * back as it was.  The only HTML it writes is its own <details> and
 * <summary>, which both sites allow.  Cause and fix come first; a Mermaid
 * pie of the memory account follows; the figures and the verbatim message
 * are folded away.
 */
#include <string.h>

#include "account.h"
#include "context.h"
#include "facts.h"
#include "report.h"
#include "snapshot.h"

/* Text from outside as a code span, in prose or in a table cell. */
static void
rp_md_code(FILE *out, const char *s)
{
	od_escape_markdown_code(out, s, strlen(s), false);
}

static void
rp_md_cell_code(FILE *out, const char *s)
{
	od_escape_markdown_code(out, s, strlen(s), true);
}

/* A rule's prose: plain words as prose, identifiers and anything else in
 * code spans (od_escape_markdown_prose). */
static void
rp_md_prose(FILE *out, const char *s)
{
	od_escape_markdown_prose(out, s, strlen(s));
}

static void
rp_md_fence(FILE *out, const char *info, const char *s, size_t n)
{
	od_escape_markdown_fence(out, info, s, n);
}

/* A folded section: a blank line after <summary> lets the Markdown in it
 * render on GitHub and GitLab. */
static void
rp_md_details(FILE *out, const char *summary)
{
	fprintf(out, "<details>\n<summary>%s</summary>\n\n", summary);
}

static void
rp_md_details_end(FILE *out)
{
	fputs("</details>\n\n", out);
}

/*
 * The memory account as a Mermaid pie, which GitHub and GitLab draw from
 * a "mermaid" fence: one slice per part of od_account_of that holds
 * bytes, labelled with oomdoc's part names and sizes (never log text),
 * valued in bytes.  When the message gives no free figure, what the known
 * parts leave is one slice, as the bar draws it (report.c).  A pie of one
 * slice says nothing and is left out; when the printed figures add up to
 * more than the capacity (a JAX TPU message), the title says so, as the
 * slices are then shares of their sum.
 */
static void
rp_md_pie(FILE *out, const od_event *ev)
{
	const char *label[OD_PART_COUNT];
	int64_t bytes[OD_PART_COUNT], known = 0;
	od_account a;
	char sz[48], sum[48];
	int k, n = 0;

	od_account_of(ev, &a);
	if (!a.valid || !(a.part[OD_PART_ALLOCATED].known ||
	    a.part[OD_PART_FREE].known))
		return;
	for (k = 0; k < OD_PART_COUNT; k++) {
		int64_t v = a.part[k].known ? a.part[k].bytes : 0;

		label[n] = od_part_label((od_part)k);
		if (k == OD_PART_UNACCOUNTED && !a.part[k].known) {
			v = a.total - known;
			label[n] = "free or unaccounted (no free figure)";
		}
		if (v <= 0)
			continue;
		known += v;
		bytes[n++] = v;
	}
	if (n < 2)
		return;
	od_size_format(a.total, sz, sizeof sz);
	fputs("```mermaid\npie\n", out);
	if (known > a.total) {
		od_size_format(known, sum, sizeof sum);
		fprintf(out, "    title Memory account: the figures add up to "
		    "%s, more than the capacity of %s\n", sum, sz);
	} else {
		fprintf(out, "    title Memory account of %s\n", sz);
	}
	for (k = 0; k < n; k++) {
		od_size_format(bytes[k], sz, sizeof sz);
		fprintf(out, "    \"%s, %s\" : %lld\n", label[k], sz,
		    (long long)bytes[k]);
	}
	fputs("```\n\n", out);
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
	if (s.device >= 0)
		fprintf(out, ", GPU %d", s.device);
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
			rp_md_cell_code(out, rp_input_name(&inputs[r->input]));
			fputs(" |", out);
		}
		fputc('\n', out);
	}
	fputc('\n', out);
	if (ev->per_rank_dropped > 0)
		fprintf(out, "%d more ranks are not listed.\n\n",
		    ev->per_rank_dropped);
}

/* The causes: rule, title and explanation, what it accounts for, the
 * evidence, and the fixes, whose text and commands are spans and blocks
 * that paste back as the rule wrote them. */
static void
rp_md_causes(FILE *out, const od_event *ev)
{
	int i, k;

	if (ev->ncauses == 0)
		fputs("No rule matched this event.\n\n", out);
	for (i = 0; i < ev->ncauses; i++) {
		const od_cause *c = &ev->causes[i];

		fprintf(out, "**Cause %d:** ", i + 1);
		rp_md_code(out, c->rule);
		fprintf(out, " (confidence %s, score %.2f): ",
		    od_confidence_name(c->confidence), c->score);
		rp_md_prose(out, c->title);
		fputs("\n\n", out);
		if (c->explanation != NULL) {
			rp_md_prose(out, c->explanation);
			fputs("\n\n", out);
		}
		rp_explains(out, "- ", c, ev);
		for (k = 0; k < c->nevidence; k++) {
			fputs("- evidence: ", out);
			rp_md_prose(out, c->evidence[k].text);
			fputc('\n', out);
		}
		for (k = 0; k < c->nfixes; k++) {
			fputs("- fix: ", out);
			rp_md_code(out, c->fixes[k].text);
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
}

/* The figures as a table under a header row of its own. */
static void
rp_md_figures(FILE *out, const od_event *ev)
{
	const od_memory *m = &ev->mem;
	int i, self = fc_self(ev);

	fputs("| figure | value |\n|---|---|\n", out);
	fputs("| kind | ", out);
	rp_md_cell_code(out, od_kind_name(ev->kind));
	fprintf(out, ", confidence %s |\n", od_confidence_name(ev->confidence));
	if (ev->nranks > 1) {
		fputs("| printed by ranks | ", out);
		for (i = 0; i < ev->nranks; i++)
			fprintf(out, "%s%d", i ? ", " : "", ev->ranks[i]);
		fputs(ev->ranks_dropped ? ", ... |\n" : " |\n", out);
	}
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
	if (ev->snap.present) {
		/* A joined memory snapshot (snapshot.c); the owner's frame is
		 * the file's text, so it goes in a code span. */
		const od_snapshot_facts *sn = &ev->snap;
		const char *v = od_snapshot_verdict_name(sn->verdict);

		fprintf(out, "| snapshot: fragmentation | %s |\n",
		    v != NULL ? v : "not judged");
		rp_md_size_row(out, "snapshot: free blocks", sn->inactive);
		rp_md_size_row(out, "snapshot: in segments in use",
		    sn->split_free);
		rp_md_size_row(out, "snapshot: largest it could take",
		    sn->largest_free);
		rp_md_size_row(out, "snapshot: expandable segments' offer",
		    sn->expandable_offer);
		if (sn->history && sn->owner[0] != '\0') {
			char sz[48];

			od_size_format(sn->owner_bytes, sz, sizeof sz);
			fprintf(out, "| snapshot: most live bytes (%s) | ", sz);
			rp_md_cell_code(out, sn->owner);
			fputs(" |\n", out);
		}
	}
	fputc('\n', out);
}

static void
rp_md_event(FILE *out, size_t n, const od_event *ev, const od_input *inputs,
    int ninputs, const od_event *first, size_t nfirst)
{
	const od_memory *m = &ev->mem;

	fprintf(out, "### %zu. %s%s\n\n", n, od_event_title(ev),
	    ev->fatal ? "" : " (warning)");
	/* Where, in one line: the input, the rank and GPU, the step and
	 * phase, the exception. */
	fputs("In ", out);
	rp_md_code(out, rp_input_name(&inputs[ev->input]));
	if (ev->line > 0)       /* a snapshot's own event has no line */
		fprintf(out, " line %llu", (unsigned long long)ev->line);
	if (ev->end_line > ev->line)
		fprintf(out, " to %llu", (unsigned long long)ev->end_line);
	if (ev->rank >= 0)
		fprintf(out, ", rank %d", ev->rank);
	if (ev->device >= 0)
		fprintf(out, ", %s %d", od_device_word(ev),
		    ev->device);
	if (ev->host.job[0] != '\0') {
		fputs(", job ", out);
		rp_md_code(out, ev->host.job);
	}
	/* Which pod, container and host: the scheduler's or the line's
	 * record's (od_labels), in code spans, as all text from the log. */
	if (ev->labels.pod[0] != '\0') {
		fputs(", pod ", out);
		rp_md_code(out, ev->labels.pod);
	}
	if (ev->labels.namespace_[0] != '\0') {
		fputs(ev->labels.pod[0] != '\0' ? " in namespace " :
		    ", namespace ", out);
		rp_md_code(out, ev->labels.namespace_);
	}
	if (ev->labels.container[0] != '\0') {
		fputs(", container ", out);
		rp_md_code(out, ev->labels.container);
	}
	if (ev->labels.host[0] != '\0') {
		fputs(", host ", out);
		rp_md_code(out, ev->labels.host);
	}
	if (ev->step >= 0)
		fprintf(out, ", step %lld", (long long)ev->step);
	if (ev->phase[0] != '\0')
		fprintf(out, ", in the %s phase", ev->phase);
	if (ev->exception[0] != '\0') {
		fputs(": ", out);
		rp_md_code(out, ev->exception);
	}
	fputs(".\n\n", out);
	if (ev->first_failure) {
		fprintf(out, "The run's first failure, %s",
		    ninputs > 1 ? "in the order of the inputs" : "in log order");
		if (ev->rank >= 0)
			fprintf(out, ": rank %d (the reports that follow it, "
			    "and torchrun's \"root cause\" table, may name "
			    "other ranks)", ev->rank);
		fputs(".\n\n", out);
	}
	if (ev->first_failure) {
		char after[512], root[512];

		rp_aftermath(ev, after, root, sizeof after);
		if (after[0] != '\0')
			fprintf(out, "After it: %s.\n\n", after);
		if (root[0] != '\0')
			fprintf(out, "Root cause: %s.\n\n", root);
	}
	if (ev->secondary != NULL && first != NULL) {
		fprintf(out, "It follows from event %zu (line %llu", nfirst,
		    (unsigned long long)first->line);
		if (first->rank >= 0)
			fprintf(out, ", rank %d", first->rank);
		fprintf(out, "): %s.\n\n", ev->secondary);
	}
	rp_md_causes(out, ev);
	rp_md_pie(out, ev);
	rp_md_details(out, "Figures");
	rp_md_figures(out, ev);
	rp_md_per_rank(out, ev, inputs);
	if (m->total > 0) {
		fputs("```text\n", out);
		rp_bar(out, ev, "", false, RP_BAR_WIDTH);
		fputs("```\n\n", out);
	}
	rp_md_details_end(out);
	rp_md_details(out, "Message");
	rp_md_fence(out, "text", ev->message != NULL ? ev->message : "",
	    ev->message_len);
	rp_md_details_end(out);
	if (ev->fingerprint[0] != '\0')
		fprintf(out, "Fingerprint `%s`.\n\n", ev->fingerprint);
}

/*
 * The report.  One fingerprint per thing: with one event, the event's,
 * under it; with more, each event's under it and the run's in the
 * summary, named as such.
 */
void
rp_markdown(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set)
{
	size_t i, n = od_events_count(set), nfirst = 0;
	const char *top = rp_top_cause(set);
	const od_event *first = rp_first_failure(set, &nfirst);
	int k;

	fprintf(out, "## oomdoc: %zu out\\-of\\-memory %s%s\n\n", n,
	    rp_events_noun(set), n == 1 ? "" : "s");
	fputs("**Summary:** ", out);
	if (n == 0) {
		fputs("no out\\-of\\-memory failure found", out);
	} else {
		od_event *ev = od_events_get(set, 0);

		fputs(od_event_title(ev), out);
		if (ev->device >= 0)
			fprintf(out, " on %s %d", od_device_word(ev),
			    ev->device);
		if (ev->rank >= 0)
			fprintf(out, ", rank %d", ev->rank);
		fputs(", in ", out);
		rp_md_code(out, rp_input_name(&inputs[ev->input]));
		if (ev->line > 0)
			fprintf(out, " line %llu",
			    (unsigned long long)ev->line);
		if (top != NULL) {
			fputs("; likely cause: ", out);
			rp_md_code(out, top);
		}
	}
	fputs(".", out);
	if (n > 1 && o->fingerprint[0] != '\0')
		fprintf(out, " Run fingerprint `%s`.", o->fingerprint);
	fputs("\n\nInputs: ", out);
	for (k = 0; k < ninputs; k++) {
		if (k)
			fputs(", ", out);
		rp_md_code(out, rp_input_name(&inputs[k]));
		fprintf(out, " (%llu lines%s)",
		    (unsigned long long)inputs[k].lines,
		    inputs[k].failed ? ", not read to the end" : "");
	}
	fputs(".\n\n", out);
	if (o->nfacts > 0) {
		fputs("Facts given with `--fact`, which win over the log's: ", out);
		for (k = 0; k < o->nfacts; k++) {
			fputs(k > 0 ? ", " : "", out);
			rp_md_code(out, o->facts[k]);
		}
		fputs(".\n\n", out);
	}
	for (i = 0; i < n; i++)
		rp_md_event(out, i + 1, od_events_get(set, i), inputs, ninputs,
		    first, nfirst + 1);
	if (od_events_dropped(set) > 0)
		fprintf(out, "%llu more events were not kept.\n",
		    (unsigned long long)od_events_dropped(set));
}

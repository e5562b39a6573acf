/*
 * live_report_markdown.c: the live report in Markdown, for tickets.  As in
 * the report of a log (src/lib/report_markdown.c), the prose is oomdoc's
 * own words: text from elsewhere (input names, the device's name, notes
 * from drivers and libraries, a report read back, rule names) goes into
 * code spans (od_escape_markdown_code, src/lib/escape.c), where no link,
 * mention, reference, emoji or HTML can form.
 */
#include <string.h>

#include "live_report.h"

/* Text from elsewhere as a code span, in prose or in a table cell. */
static void
lr_md(FILE *out, const char *s)
{
	od_escape_markdown_code(out, s != NULL ? s : "", s != NULL ?
	    strlen(s) : 0, false);
}

static void
lr_md_cell(FILE *out, const char *s)
{
	od_escape_markdown_code(out, s != NULL ? s : "", s != NULL ?
	    strlen(s) : 0, true);
}

/* A row of the setting's table; the value, from elsewhere, in code. */
static void
lr_md_row(FILE *out, const char *label, const char *value)
{
	fprintf(out, "| %s | ", label);
	lr_md_cell(out, value);
	fputs(" |\n", out);
}

/* A row whose value oomdoc wrote itself (sizes, yes or no, counts). */
static void
lr_md_own_row(FILE *out, const char *label, const char *value)
{
	fprintf(out, "| %s | %s |\n", label, value);
}

static void
lr_md_size_row(FILE *out, const char *label, int64_t v, const char *extra)
{
	char buf[512], sz[32];

	if (v < 0) {
		snprintf(buf, sizeof buf, "unknown%s", extra);
	} else {
		od_size_format(v, sz, sizeof sz);
		snprintf(buf, sizeof buf, "%s (%lld bytes)%s", sz, (long long)v,
		    extra);
	}
	lr_md_own_row(out, label, buf);
}

static void
lr_md_result(FILE *out, const pb_result *res)
{
	char v[256];
	int i;

	for (i = 0; i < res->nm; i++) {
		lr_value(&res->m[i], v, sizeof v);
		fputs("- ", out);
		lr_md(out, res->m[i].key);
		fputs(": ", out);
		lr_md(out, v);
		fputc('\n', out);
	}
	if (res->act.available) {
		char line[160], sz[32];

		od_size_format(res->act.alloc_bytes, sz, sizeof sz);
		snprintf(line, sizeof line, "%lld allocations, %s; %lld "
		    "releases", (long long)res->act.allocs, sz,
		    (long long)res->act.releases);
		/* oomdoc's own words and figures. */
		fprintf(out, "- memory activity (CUPTI): %s\n", line);
	}
	if (res->nm > 0 || res->act.available)
		fputc('\n', out);
}

void
lr_markdown(FILE *out, const lv_report *r)
{
	const dv_info *d = r->info;
	lr_count c = lr_counts(r);
	char buf[256];
	int i, k;

	if (d == NULL) {
		fprintf(out, "## oomdoc %s\n\nNo out\\-of\\-memory failure "
		    "found in ", r->command);
		lr_md(out, r->ninputs > 0 ? r->inputs[0] : "");
		fputs(": nothing to confirm.\n", out);
		return;
	}
	fprintf(out, "## oomdoc %s: GPU %d, ", r->command, d->index);
	lr_md(out, d->name);
	fputs("\n\n", out);
	if (strcmp(r->command, "live") == 0)
		fprintf(out, "**Verdicts:** %d confirmed, %d refuted, %d "
		    "inconclusive, on %d event%s.\n\n", c.confirmed, c.refuted,
		    c.inconclusive, r->nevents, r->nevents == 1 ? "" : "s");
	fputs("| setting | value |\n|---|---|\n", out);
	lr_md_row(out, "backend", r->backend);
	lr_md_row(out, "UUID", d->uuid[0] != '\0' ? d->uuid : "unknown");
	lr_md_row(out, "PCI bus id", d->pci_bus_id[0] != '\0' ?
	    d->pci_bus_id : "unknown");
	if (d->parent_uuid[0] != '\0')
		lr_md_row(out, "MIG instance of", d->parent_uuid);
	if (d->identity[0] != '\0')
		lr_md_row(out, "identity", d->identity);
	lr_md_size_row(out, "capacity", d->total, "");
	lr_md_size_row(out, "context", r->context, r->context >= 0 ?
	    ", measured with NVML" : ", not measured");
	lr_md_size_row(out, "free at the start", r->free_at_start, "");
	snprintf(buf, sizeof buf, ", %s", r->cap_from);
	lr_md_size_row(out, "cap", r->cap, r->cap >= 0 ? buf : "");
	if (dv_image_name(d->kernel_image) != NULL)
		lr_md_row(out, "kernels", d->kernel_detail);
	if (d->kernel_refused[0] != '\0')
		lr_md_row(out, "kernel images refused", d->kernel_refused);
	lr_md_own_row(out, "VMM", d->vmm ? "yes" : "no");
	if (d->nvml)
		lr_md_own_row(out, "NVML", "yes");
	else
		lr_md_row(out, "NVML", d->nvml_note);
	if (d->cupti)
		lr_md_own_row(out, "CUPTI", "yes");
	else
		lr_md_row(out, "CUPTI", d->cupti_note);
	if (!r->procs_known)
		snprintf(buf, sizeof buf, "%s", d->nvml ? "unknown (NVML "
		    "could not list them)" : "unknown (no NVML)");
	else
		snprintf(buf, sizeof buf, "%d", r->nprocs);
	lr_md_own_row(out, "other processes", buf);
	fputc('\n', out);
	if (r->refused[0] != '\0') {
		fputs("**Refused:** ", out);
		lr_md(out, r->refused);
		fputs("\n\n", out);
	}
	if (r->failed[0] != '\0') {
		fputs("**Device error:** ", out);
		lr_md(out, r->failed);
		fputs("\n\n", out);
	}
	for (i = 0; i < r->nprobes; i++) {
		const pb_result *res = r->probes[i];

		char what[640];

		pb_describe(res, what, sizeof what);
		fprintf(out, "### %s: %s\n\n", pb_name(res->probe), res->ran ?
		    "ran" : "not run");
		lr_md(out, what);
		fputs("\n\n", out);
		if (res->ran && res->note[0] != '\0') {
			fputs("Note: ", out);
			lr_md(out, res->note);
			fputs("\n\n", out);
		}
		lr_md_result(out, res);
	}
	for (i = 0; i < r->nevents; i++) {
		const lv_event *le = &r->events[i];

		fprintf(out, "### %d. ", i + 1);
		lr_md(out, le->input);
		fprintf(out, " line %llu, ", (unsigned long long)le->ev->line);
		lr_md(out, le->kind);
		fputs("\n\n", out);
		if (le->nv == 0) {
			fputs("No cause of this event names a live probe.\n\n",
			    out);
			continue;
		}
		fputs("| cause | probe | verdict | measured |\n"
		    "|---|---|---|---|\n", out);
		for (k = 0; k < le->nv; k++) {
			const pb_verdict *v = &le->v[k];

			fputs("| ", out);
			lr_md_cell(out, v->cause);
			fputs(" | ", out);
			lr_md_cell(out, v->probe_name);
			fprintf(out, " | **%s** | ", pb_outcome_name(v->outcome));
			lr_md_cell(out, v->summary);
			fputs(" |\n", out);
		}
		fputc('\n', out);
		for (k = 0; k < le->nv; k++) {
			if (le->v[k].result == NULL || le->v[k].result->nm == 0)
				continue;
			fputs("Measurements of ", out);
			lr_md(out, le->v[k].cause);
			fputs(":\n\n", out);
			lr_md_result(out, le->v[k].result);
		}
	}
}

/*
 * live_report.c: the report of `oomdoc live` and `oomdoc probe`, in text,
 * Markdown or JSON (schema oomdoc.live/1): the device, what the probes
 * took, and for each event the verdict on each cause that names a probe,
 * with the measurements behind it and the memory activity it caused.
 *
 * Strings that come from elsewhere (input names, rule ids, a report read
 * back) are escaped as report.c escapes the log: controls and bad bytes
 * never reach a terminal, Markdown punctuation is backslashed, and JSON
 * strings are valid UTF-8.
 */
#include <string.h>

#include "live.h"

/* Log text for a terminal, Markdown and JSON: report.c's escaping. */
static void
lr_txt(FILE *out, const char *s)
{
	od_escape_text(out, s != NULL ? s : "", s != NULL ? strlen(s) : 0, "");
}

static void
lr_md(FILE *out, const char *s)
{
	od_escape_markdown(out, s != NULL ? s : "", s != NULL ? strlen(s) : 0);
}

/* A JSON string, or null for NULL. */
static void
lr_json(FILE *out, const char *s)
{
	if (s == NULL)
		fputs("null", out);
	else
		od_escape_json(out, s, strlen(s));
}

static void
lr_json_bytes(FILE *out, int64_t v)
{
	if (v < 0)
		fputs("null", out);
	else
		fprintf(out, "%lld", (long long)v);
}

static const char *
lr_note(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : NULL;
}

typedef struct {
	int confirmed, refuted, inconclusive, total;
} lr_count;

static lr_count
lr_counts(const lv_report *r)
{
	lr_count c;
	int i, k;

	memset(&c, 0, sizeof c);
	for (i = 0; i < r->nevents; i++)
		for (k = 0; k < r->events[i].nv; k++) {
			pb_outcome o = r->events[i].v[k].outcome;

			c.total++;
			if (o == PB_CONFIRMED)
				c.confirmed++;
			else if (o == PB_REFUTED)
				c.refuted++;
			else
				c.inconclusive++;
		}
	return c;
}

/* A measurement's value, for text and Markdown. */
static void
lr_value(const pb_meas *m, char *buf, size_t len)
{
	char sz[32];

	switch (m->type) {
	case PM_BYTES:
		if (m->i < 0) {
			snprintf(buf, len, "unknown");
		} else if (m->i <= 1024) {
			snprintf(buf, len, "%lld bytes", (long long)m->i);
		} else {
			od_size_format(m->i, sz, sizeof sz);
			snprintf(buf, len, "%s (%lld bytes)", sz,
			    (long long)m->i);
		}
		break;
	case PM_INT:
		snprintf(buf, len, "%lld", (long long)m->i);
		break;
	case PM_NUM:
		snprintf(buf, len, "%.3g", m->d);
		break;
	case PM_RATE:
		snprintf(buf, len, "%.1f GB/s", m->d / 1e9);
		break;
	case PM_BOOL:
		snprintf(buf, len, "%s", m->b ? "yes" : "no");
		break;
	case PM_STR:
		snprintf(buf, len, "%s", m->s);
		break;
	}
}

static void
lr_activity_text(FILE *out, const dv_activity *a, const char *indent)
{
	char sz[32];
	int i;

	if (!a->available || (a->allocs == 0 && a->releases == 0))
		return;
	od_size_format(a->alloc_bytes, sz, sizeof sz);
	fprintf(out, "%smemory activity (CUPTI): %lld allocation%s, %s", indent,
	    (long long)a->allocs, a->allocs == 1 ? "" : "s", sz);
	od_size_format(a->release_bytes, sz, sizeof sz);
	fprintf(out, "; %lld release%s, %s", (long long)a->releases,
	    a->releases == 1 ? "" : "s", sz);
	for (i = 0; i < a->nsources; i++) {
		fputs(i ? ", " : "; by ", out);
		lr_txt(out, a->sources[i]);
		fprintf(out, " %lld", (long long)a->source_allocs[i]);
	}
	if (a->dropped > 0)
		fprintf(out, "; %lld records dropped", (long long)a->dropped);
	fputc('\n', out);
}

static void
lr_result_text(FILE *out, const pb_result *res, const char *indent)
{
	char v[256];
	int i;

	for (i = 0; i < res->nm; i++) {
		lr_value(&res->m[i], v, sizeof v);
		fprintf(out, "%s%-30s ", indent, res->m[i].key);
		lr_txt(out, v);
		fputc('\n', out);
	}
	lr_activity_text(out, &res->act, indent);
}

static void
lr_size_line(FILE *out, const char *label, int64_t v, const char *extra)
{
	char sz[32];

	fprintf(out, "    %-11s", label);
	if (v < 0) {
		fputs("unknown", out);
	} else if (v <= 1024) {
		fprintf(out, "%lld bytes", (long long)v);
	} else {
		od_size_format(v, sz, sizeof sz);
		fprintf(out, "%s (%lld bytes)", sz, (long long)v);
	}
	fprintf(out, "%s\n", extra);
}

static void
lr_device_text(FILE *out, const lv_report *r)
{
	const dv_info *d = r->info;
	char sz[32], extra[96];
	int i;

	fprintf(out, "oomdoc %s: GPU %d, ", r->command, d->index);
	lr_txt(out, d->name);
	fprintf(out, ", backend %s\n", r->backend);
	snprintf(extra, sizeof extra, "; compute capability %d.%d, %d SMs",
	    d->cc_major, d->cc_minor, d->sm_count);
	lr_size_line(out, "capacity", d->total, extra);
	if (d->driver_cuda > 0)
		fprintf(out, "    driver     supports CUDA %d.%d%s%s; oomdoc's "
		    "runtime is CUDA %d.%d\n", d->driver_cuda / 1000,
		    d->driver_cuda % 1000 / 10, d->driver_release[0] ?
		    ", release " : "", d->driver_release,
		    d->runtime_cuda / 1000, d->runtime_cuda % 1000 / 10);
	if (d->vmm) {
		od_size_format(d->vmm_granularity, sz, sizeof sz);
		fprintf(out, "    VMM        yes, granularity %s\n", sz);
	} else {
		fputs("    VMM        no\n", out);
	}
	fputs("    NVML       ", out);
	lr_txt(out, d->nvml ? "yes" : d->nvml_note);
	fputs("\n    CUPTI      ", out);
	lr_txt(out, d->cupti ? "yes" : d->cupti_note);
	fputc('\n', out);
	lr_size_line(out, "context", r->context, r->context >= 0 ?
	    " (measured with NVML)" : " (not measured)");
	lr_size_line(out, "free", r->free_at_start, " at the start");
	snprintf(extra, sizeof extra, " (%s)", r->cap_from);
	lr_size_line(out, "cap", r->cap, r->cap >= 0 ? extra : "");
	lr_size_line(out, "held", r->peak_held, " at most, by the probes");
	fputs("    others     ", out);
	if (!r->procs_known)
		fputs("unknown (no NVML)", out);
	else if (r->nprocs == 0)
		fputs("none", out);
	for (i = 0; i < r->nprocs; i++) {
		od_size_format(r->procs[i].bytes, sz, sizeof sz);
		fprintf(out, "%spid %lld (%s)", i ? ", " : "",
		    (long long)r->procs[i].pid, sz);
	}
	fprintf(out, "\n    time limit %g s per kernel\n", r->time_limit);
	if (r->refused[0] != '\0') {
		fputs("    refused    ", out);
		lr_txt(out, r->refused);
		fputc('\n', out);
	}
	if (r->failed[0] != '\0') {
		fputs("    error      ", out);
		lr_txt(out, r->failed);
		fputc('\n', out);
	}
	if (r->stopped[0] != '\0')
		fprintf(out, "    stopped    by %s\n", r->stopped);
	fputc('\n', out);
}

static void
lr_text(FILE *out, const lv_report *r)
{
	lr_count c = lr_counts(r);
	int i, k, without;

	if (r->info == NULL) {
		fprintf(out, "oomdoc %s: no out-of-memory failure found in ",
		    r->command);
		lr_txt(out, r->ninputs > 0 ? r->inputs[0] : "");
		fputs(": nothing to confirm\n", out);
		return;
	}
	lr_device_text(out, r);
	for (i = 0; i < r->nprobes; i++) {
		const pb_result *res = r->probes[i];
		char what[640];

		pb_describe(res, what, sizeof what);
		fprintf(out, "%s: %s\n    ", pb_name(res->probe), res->ran ?
		    "ran" : "not run");
		lr_txt(out, what);
		fputc('\n', out);
		if (res->ran && res->note[0] != '\0') {
			fputs("    note: ", out);
			lr_txt(out, res->note);
			fputc('\n', out);
		}
		lr_result_text(out, res, "    ");
		fputc('\n', out);
	}
	for (i = 0; i < r->nevents; i++) {
		const lv_event *le = &r->events[i];

		fprintf(out, "#%d  ", i + 1);
		lr_txt(out, le->input);
		fprintf(out, ":%llu  ", (unsigned long long)le->ev->line);
		lr_txt(out, le->kind);
		if (le->ev->device >= 0)
			fprintf(out, ", GPU %d", le->ev->device);
		if (le->ev->rank >= 0)
			fprintf(out, ", rank %d", le->ev->rank);
		fputc('\n', out);
		if (le->nv == 0)
			fputs("    no cause of this event names a live probe\n",
			    out);
		for (k = 0; k < le->nv; k++) {
			const pb_verdict *v = &le->v[k];

			fprintf(out, "    %d. ", k + 1);
			lr_txt(out, v->cause);
			fprintf(out, ": %s (probe ", pb_outcome_name(v->outcome));
			lr_txt(out, v->probe_name);
			fputs(")\n       ", out);
			lr_txt(out, v->summary);
			fputc('\n', out);
			if (v->result != NULL)
				lr_result_text(out, v->result, "       ");
		}
		for (without = 0, k = 0; k < le->ev->ncauses; k++)
			if (le->ev->causes[k].probe == NULL) {
				fputs(without++ ? ", " : "    no live probe for: ",
				    out);
				lr_txt(out, le->ev->causes[k].rule);
			}
		if (without)
			fputc('\n', out);
		fputc('\n', out);
	}
	if (strcmp(r->command, "live") == 0) {
		fprintf(out, "oomdoc live: %d verdict%s on %d event%s: %d "
		    "confirmed, %d refuted, %d inconclusive\n", c.total,
		    c.total == 1 ? "" : "s", r->nevents, r->nevents == 1 ? "" :
		    "s", c.confirmed, c.refuted, c.inconclusive);
		if (r->nevents < r->nevents_total)
			fprintf(out, "(%d more events were not probed)\n",
			    r->nevents_total - r->nevents);
	}
}

static void
lr_md_row(FILE *out, const char *label, const char *value)
{
	fprintf(out, "| %s | ", label);
	lr_md(out, value);
	fputs(" |\n", out);
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
	lr_md_row(out, label, buf);
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
		fputs("- memory activity (CUPTI): ", out);
		lr_md(out, line);
		fputc('\n', out);
	}
	if (res->nm > 0 || res->act.available)
		fputc('\n', out);
}

static void
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
	fputs("| | |\n|---|---|\n", out);
	lr_md_row(out, "backend", r->backend);
	lr_md_size_row(out, "capacity", d->total, "");
	lr_md_size_row(out, "context", r->context, r->context >= 0 ?
	    ", measured with NVML" : ", not measured");
	lr_md_size_row(out, "free at the start", r->free_at_start, "");
	snprintf(buf, sizeof buf, ", %s", r->cap_from);
	lr_md_size_row(out, "cap", r->cap, r->cap >= 0 ? buf : "");
	lr_md_row(out, "VMM", d->vmm ? "yes" : "no");
	lr_md_row(out, "NVML", d->nvml ? "yes" : d->nvml_note);
	lr_md_row(out, "CUPTI", d->cupti ? "yes" : d->cupti_note);
	if (!r->procs_known)
		snprintf(buf, sizeof buf, "unknown (no NVML)");
	else
		snprintf(buf, sizeof buf, "%d", r->nprocs);
	lr_md_row(out, "other processes", buf);
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
			lr_md(out, v->cause);
			fputs(" | ", out);
			lr_md(out, v->probe_name);
			fprintf(out, " | **%s** | ", pb_outcome_name(v->outcome));
			lr_md(out, v->summary);
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

static void
lr_json_activity(FILE *out, const dv_activity *a)
{
	int i;

	if (!a->available) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"allocations\": %lld, \"releases\": %lld, "
	    "\"allocated_bytes\": %lld, \"released_bytes\": %lld, "
	    "\"device_bytes\": %lld, \"other_bytes\": %lld, "
	    "\"dropped_records\": %lld, \"sources\": [",
	    (long long)a->allocs, (long long)a->releases,
	    (long long)a->alloc_bytes, (long long)a->release_bytes,
	    (long long)a->device_bytes, (long long)a->other_bytes,
	    (long long)a->dropped);
	for (i = 0; i < a->nsources; i++) {
		fputs(i ? ", {\"source\": " : "{\"source\": ", out);
		lr_json(out, a->sources[i]);
		fprintf(out, ", \"allocations\": %lld}",
		    (long long)a->source_allocs[i]);
	}
	fputs("]}", out);
}

static void
lr_json_result(FILE *out, const pb_result *res, const char *indent)
{
	int i;

	fprintf(out, "\"ran\": %s, \"scaled\": %s, \"note\": ",
	    res->ran ? "true" : "false", res->scaled ? "true" : "false");
	lr_json(out, lr_note(res->note));
	fprintf(out, ",\n%s\"measurements\": {", indent);
	for (i = 0; i < res->nm; i++) {
		const pb_meas *m = &res->m[i];

		fputs(i ? ", " : "", out);
		lr_json(out, m->key);
		fputs(": ", out);
		switch (m->type) {
		case PM_BYTES:
			lr_json_bytes(out, m->i);
			break;
		case PM_INT:
			fprintf(out, "%lld", (long long)m->i);
			break;
		case PM_NUM:
			fprintf(out, "%.4g", m->d);
			break;
		case PM_RATE:
			fprintf(out, "%.0f", m->d);
			break;
		case PM_BOOL:
			fputs(m->b ? "true" : "false", out);
			break;
		case PM_STR:
			lr_json(out, m->s);
			break;
		}
	}
	fprintf(out, "},\n%s\"activity\": ", indent);
	lr_json_activity(out, &res->act);
}

static void
lr_json_device(FILE *out, const lv_report *r)
{
	const dv_info *d = r->info;
	double peak = dv_peak_bandwidth(d);

	fprintf(out, "  \"device\": {\"index\": %d, \"name\": ", d->index);
	lr_json(out, d->name);
	fputs(", \"total_bytes\": ", out);
	lr_json_bytes(out, d->total);
	fprintf(out, ", \"compute_capability\": \"%d.%d\", "
	    "\"multiprocessors\": %d,\n             \"memory_clock_khz\": ",
	    d->cc_major, d->cc_minor, d->sm_count);
	lr_json_bytes(out, d->mem_clock_khz);
	fputs(", \"bus_width_bits\": ", out);
	lr_json_bytes(out, d->bus_width_bits);
	fputs(", \"peak_bytes_per_second\": ", out);
	if (peak > 0)
		fprintf(out, "%.0f", peak);
	else
		fputs("null", out);
	fprintf(out, ", \"ecc_enabled\": %s,\n             \"vmm\": %s, "
	    "\"vmm_granularity_bytes\": ", d->ecc_enabled < 0 ? "null" :
	    d->ecc_enabled ? "true" : "false", d->vmm ? "true" : "false");
	lr_json_bytes(out, d->vmm ? d->vmm_granularity : -1);
	fputs(", \"pci_bus_id\": ", out);
	lr_json(out, lr_note(d->pci_bus_id));
	fputs(", \"driver_cuda\": ", out);
	lr_json_bytes(out, d->driver_cuda);
	fputs(", \"runtime_cuda\": ", out);
	lr_json_bytes(out, d->runtime_cuda);
	fputs(", \"driver_release\": ", out);
	lr_json(out, lr_note(d->driver_release));
	fputs("},\n", out);
	fprintf(out, "  \"nvml\": {\"available\": %s, \"note\": ",
	    d->nvml ? "true" : "false");
	lr_json(out, lr_note(d->nvml_note));
	fprintf(out, "},\n  \"cupti\": {\"available\": %s, \"note\": ",
	    d->cupti ? "true" : "false");
	lr_json(out, lr_note(d->cupti_note));
	fputs("},\n", out);
}

static void
lr_json_report(FILE *out, const lv_report *r)
{
	lr_count c = lr_counts(r);
	int i, k;

	fputs("{\n  \"schema\": \"oomdoc.live/1\",\n  \"oomdoc_version\": \""
	    OD_VERSION "\",\n  \"command\": ", out);
	lr_json(out, r->command);
	fputs(",\n  \"backend\": ", out);
	lr_json(out, r->backend);
	fputs(",\n", out);
	if (r->info != NULL)
		lr_json_device(out, r);
	else
		fputs("  \"device\": null,\n", out);
	fputs("  \"context_bytes\": ", out);
	lr_json_bytes(out, r->context);
	fputs(", \"free_bytes_at_start\": ", out);
	lr_json_bytes(out, r->free_at_start);
	fputs(", \"cap_bytes\": ", out);
	lr_json_bytes(out, r->cap);
	fputs(", \"cap_from\": ", out);
	lr_json(out, lr_note(r->cap_from));
	fputs(",\n  \"peak_held_bytes\": ", out);
	lr_json_bytes(out, r->info != NULL ? r->peak_held : -1);
	fprintf(out, ", \"time_limit_seconds\": %g, \"force\": %s,\n",
	    r->time_limit, r->force ? "true" : "false");
	fputs("  \"processes_at_start\": ", out);
	if (!r->procs_known) {
		fputs("null", out);
	} else {
		fputc('[', out);
		for (i = 0; i < r->nprocs; i++) {
			fprintf(out, "%s{\"pid\": %lld, \"bytes\": ", i ? ", " :
			    "", (long long)r->procs[i].pid);
			lr_json_bytes(out, r->procs[i].bytes);
			fputc('}', out);
		}
		fputc(']', out);
	}
	fputs(",\n  \"refused\": ", out);
	lr_json(out, lr_note(r->refused));
	fputs(", \"device_error\": ", out);
	lr_json(out, lr_note(r->failed));
	fputs(", \"stopped\": ", out);
	lr_json(out, lr_note(r->stopped));
	fputs(",\n  \"inputs\": [", out);
	for (i = 0; i < r->ninputs; i++) {
		fputs(i ? ", " : "", out);
		lr_json(out, r->inputs[i]);
	}
	fputs("],\n  \"probes\": [", out);
	for (i = 0; i < r->nprobes; i++) {
		char what[640];

		pb_describe(r->probes[i], what, sizeof what);
		fputs(i ? ",\n    {\"probe\": " : "\n    {\"probe\": ", out);
		lr_json(out, pb_name(r->probes[i]->probe));
		fputs(", \"summary\": ", out);
		lr_json(out, what);
		fputs(",\n     ", out);
		lr_json_result(out, r->probes[i], "     ");
		fputc('}', out);
	}
	fputs(r->nprobes ? "\n  ],\n  \"events\": [" : "],\n  \"events\": [",
	    out);
	for (i = 0; i < r->nevents; i++) {
		const lv_event *le = &r->events[i];

		fputs(i ? ",\n    {\"input\": " : "\n    {\"input\": ", out);
		lr_json(out, le->input);
		fprintf(out, ", \"line\": %llu, \"kind\": ",
		    (unsigned long long)le->ev->line);
		lr_json(out, le->kind);
		fputs(", \"device\": ", out);
		lr_json_bytes(out, le->ev->device);
		fputs(", \"rank\": ", out);
		lr_json_bytes(out, le->ev->rank);
		fputs(",\n     \"verdicts\": [", out);
		for (k = 0; k < le->nv; k++) {
			const pb_verdict *v = &le->v[k];

			fputs(k ? ",\n       {\"probe\": " :
			    "\n       {\"probe\": ", out);
			lr_json(out, v->probe_name);
			fputs(", \"cause\": ", out);
			lr_json(out, v->cause);
			fprintf(out, ", \"verdict\": \"%s\",\n        "
			    "\"summary\": ", pb_outcome_name(v->outcome));
			lr_json(out, v->summary);
			fputs(",\n        ", out);
			if (v->result != NULL)
				lr_json_result(out, v->result, "        ");
			else
				fputs("\"ran\": false, \"scaled\": false, "
				    "\"note\": null, \"measurements\": {}, "
				    "\"activity\": null", out);
			fputc('}', out);
		}
		fputs(le->nv ? "\n     ]}" : "]}", out);
	}
	fputs(r->nevents ? "\n  ],\n" : "],\n", out);
	fprintf(out, "  \"summary\": {\"events\": %d, \"events_not_probed\": "
	    "%d, \"verdicts\": %d, \"confirmed\": %d, \"refuted\": %d, "
	    "\"inconclusive\": %d}\n}\n", r->nevents, r->nevents_total -
	    r->nevents, c.total, c.confirmed, c.refuted, c.inconclusive);
}

void
lv_report_write(FILE *out, const lv_report *r)
{
	if (r->format == OD_FORMAT_JSON)
		lr_json_report(out, r);
	else if (r->format == OD_FORMAT_MARKDOWN)
		lr_markdown(out, r);
	else
		lr_text(out, r);
}

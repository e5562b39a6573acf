/*
 * live_report_text.c: the live report for a terminal.  Text from
 * elsewhere goes out through od_escape_text (src/lib/escape.c): controls
 * and bad bytes never reach the terminal.
 */
#include <string.h>

#include "live_report.h"

/* Text from elsewhere, for a terminal. */
static void
lr_txt(FILE *out, const char *s)
{
	od_escape_text(out, s != NULL ? s : "", s != NULL ? strlen(s) : 0, "");
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
	/* Which GPU was probed, as nvidia-smi -L and lspci name it. */
	fputs("    probed     ", out);
	lr_txt(out, d->uuid[0] != '\0' ? d->uuid : "UUID unknown");
	fputs(", PCI ", out);
	lr_txt(out, d->pci_bus_id[0] != '\0' ? d->pci_bus_id : "unknown");
	if (d->parent_uuid[0] != '\0') {
		fputs(", a MIG instance of ", out);
		lr_txt(out, d->parent_uuid);
	}
	fputc('\n', out);
	if (d->identity[0] != '\0') {
		fputs("    identity   ", out);
		lr_txt(out, d->identity);
		fputc('\n', out);
	}
	if (d->driver_cuda > 0)
		fprintf(out, "    driver     supports CUDA %d.%d%s%s; oomdoc's "
		    "kernels are from CUDA %d.%d\n", d->driver_cuda / 1000,
		    d->driver_cuda % 1000 / 10, d->driver_release[0] ?
		    ", release " : "", d->driver_release,
		    d->runtime_cuda / 1000, d->runtime_cuda % 1000 / 10);
	/* Which kernel image the driver took, and what it refused first. */
	if (dv_image_name(d->kernel_image) != NULL) {
		fputs("    kernels    ", out);
		lr_txt(out, d->kernel_detail);
		fputc('\n', out);
	}
	if (d->kernel_refused[0] != '\0') {
		fputs("    refused    ", out);
		lr_txt(out, d->kernel_refused);
		fputc('\n', out);
	}
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
		fputs(d->nvml ? "unknown (NVML could not list them)" :
		    "unknown (no NVML)", out);
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

void
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

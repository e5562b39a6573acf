/*
 * live_report_json.c: the live report in JSON (schema oomdoc.live/1),
 * built with jansson (json_pack, which releases what it was given when it
 * fails) and written by od_json_write, under the null rule of
 * src/lib/report_json.h: a figure not measured (negative) and a text not
 * given (NULL or empty) are null.  Counts (allocations, verdicts, SMs)
 * and measurements of type PM_INT are written as they are.
 */
#include <math.h>
#include <string.h>

#include "live_report.h"
#include "report_json.h"

static json_t *
lj_activity(const dv_activity *a)
{
	json_t *src;
	int i;

	if (!a->available)
		return json_null();
	src = json_array();
	for (i = 0; src != NULL && i < a->nsources; i++)
		if (json_array_append_new(src, json_pack("{s:o, s:I}", "source",
		    od_json_text(a->sources[i]), "allocations",
		    (json_int_t)a->source_allocs[i])) != 0) {
			json_decref(src);
			return NULL;
		}
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
	    "allocations", (json_int_t)a->allocs,
	    "releases", (json_int_t)a->releases,
	    "allocated_bytes", (json_int_t)a->alloc_bytes,
	    "released_bytes", (json_int_t)a->release_bytes,
	    "device_bytes", (json_int_t)a->device_bytes,
	    "other_bytes", (json_int_t)a->other_bytes,
	    "dropped_records", (json_int_t)a->dropped, "sources", src);
}

/* A measurement's value, by its type. */
/*
 * A rate in bytes per second as a whole number, or null when it is none
 * or does not fit a JSON integer (2^63 B/s, which no device comes near:
 * a fake device's clock of INT64_MAX kHz made its peak about 1.5e26, and
 * llround's result, out of range, came out as -2^63).
 */
static json_t *
lj_rate(double d)
{
	if (!(d >= 0 && d < 9.2e18))
		return json_null();
	return json_integer((json_int_t)llround(d));
}

static json_t *
lj_meas(const pb_meas *m)
{
	char buf[64];

	switch (m->type) {
	case PM_BYTES:
		return od_json_figure(m->i);
	case PM_INT:
		return json_integer(m->i);
	case PM_NUM:
		/* Four significant digits, as the text report shows. */
		snprintf(buf, sizeof buf, "%.4g", m->d);
		return json_real(strtod(buf, NULL));
	case PM_RATE:
		/* Bytes per second: a whole number. */
		return lj_rate(m->d);
	case PM_BOOL:
		return json_boolean(m->b);
	case PM_STR:
		return od_json_text(m->s);
	}
	return NULL;
}

/* The members of a probe's result, added to o; false when out of memory. */
static bool
lj_result(json_t *o, const pb_result *res)
{
	json_t *ms = json_object();
	int i;

	for (i = 0; ms != NULL && i < res->nm; i++)
		if (!od_json_set(ms, res->m[i].key, lj_meas(&res->m[i]))) {
			json_decref(ms);
			return false;
		}
	return od_json_set(o, "ran", json_boolean(res->ran)) &&
	    od_json_set(o, "scaled", json_boolean(res->scaled)) &&
	    od_json_set(o, "note", od_json_text(res->note)) &&
	    od_json_set(o, "measurements", ms) &&
	    od_json_set(o, "activity", lj_activity(&res->act));
}

static json_t *
lj_probe(const pb_result *res)
{
	char what[640];
	json_t *o;

	pb_describe(res, what, sizeof what);
	o = json_pack("{s:o, s:o}", "probe", od_json_text(pb_name(res->probe)),
	    "summary", od_json_text(what));
	if (o != NULL && !lj_result(o, res)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
lj_verdict(const pb_verdict *v)
{
	json_t *o = json_pack("{s:o, s:o, s:s, s:o}", "probe",
	    od_json_text(v->probe_name), "cause", od_json_text(v->cause),
	    "verdict", pb_outcome_name(v->outcome), "summary",
	    od_json_text(v->summary));
	bool ok = o != NULL;

	/* A probe that does not exist ran nothing and measured nothing. */
	if (ok && v->result != NULL)
		ok = lj_result(o, v->result);
	else if (ok)
		ok = od_json_set(o, "ran", json_false()) &&
		    od_json_set(o, "scaled", json_false()) &&
		    od_json_set(o, "note", json_null()) &&
		    od_json_set(o, "measurements", json_object()) &&
		    od_json_set(o, "activity", json_null());
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
lj_event(const lv_event *le)
{
	json_t *vs = json_array();
	int k;

	for (k = 0; vs != NULL && k < le->nv; k++)
		if (json_array_append_new(vs, lj_verdict(&le->v[k])) != 0) {
			json_decref(vs);
			return NULL;
		}
	return json_pack("{s:o, s:I, s:o, s:o, s:o, s:o}",
	    "input", od_json_text(le->input),
	    "line", (json_int_t)le->ev->line,
	    "kind", od_json_text(le->kind),
	    "device", od_json_figure(le->ev->device),
	    "rank", od_json_figure(le->ev->rank), "verdicts", vs);
}

static json_t *
lj_device(const dv_info *d)
{
	double peak = dv_peak_bandwidth(d);
	char cc[32];

	snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
	return json_pack("{s:i, s:o, s:o, s:s, s:i, s:o, s:o, s:o, s:o, s:b, "
	    "s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
	    "index", d->index, "name", od_json_text(d->name),
	    "total_bytes", od_json_figure(d->total),
	    "compute_capability", cc, "multiprocessors", d->sm_count,
	    "memory_clock_khz", od_json_figure(d->mem_clock_khz),
	    "bus_width_bits", od_json_figure(d->bus_width_bits),
	    "peak_bytes_per_second", peak > 0 ? lj_rate(peak) : json_null(),
	    "ecc_enabled", d->ecc_enabled < 0 ? json_null() :
	    json_boolean(d->ecc_enabled),
	    "vmm", d->vmm,
	    "vmm_granularity_bytes", od_json_figure(d->vmm ?
	    d->vmm_granularity : -1),
	    "pci_bus_id", od_json_text(d->pci_bus_id),
	    "driver_cuda", od_json_figure(d->driver_cuda),
	    "runtime_cuda", od_json_figure(d->runtime_cuda),
	    "driver_release", od_json_text(d->driver_release),
	    "uuid", od_json_text(d->uuid),
	    "parent_uuid", od_json_text(d->parent_uuid),
	    "identity", od_json_text(d->identity),
	    "kernel_image", dv_image_name(d->kernel_image) != NULL ?
	    json_string(dv_image_name(d->kernel_image)) : json_null(),
	    "kernel_image_detail", od_json_text(d->kernel_detail),
	    "kernel_images_refused", od_json_text(d->kernel_refused));
}

/* The members of the device, NVML and CUPTI, each null without a device
 * (always there: schema/oomdoc.live-1.schema.json requires them). */
static bool
lj_devices(json_t *root, const dv_info *d)
{
	if (d == NULL)
		return od_json_set(root, "device", json_null()) &&
		    od_json_set(root, "nvml", json_null()) &&
		    od_json_set(root, "cupti", json_null());
	return od_json_set(root, "device", lj_device(d)) &&
	    od_json_set(root, "nvml", json_pack("{s:b, s:o}", "available",
	    d->nvml, "note", od_json_text(d->nvml_note))) &&
	    od_json_set(root, "cupti", json_pack("{s:b, s:o}", "available",
	    d->cupti, "note", od_json_text(d->cupti_note)));
}

static json_t *
lj_array(int n, const void *v, json_t *(*one)(const void *v, int i))
{
	json_t *a = json_array();
	int i;

	for (i = 0; a != NULL && i < n; i++)
		if (json_array_append_new(a, one(v, i)) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
lj_proc_at(const void *v, int i)
{
	const dv_proc *p = &((const dv_proc *)v)[i];

	return json_pack("{s:I, s:o}", "pid", (json_int_t)p->pid, "bytes",
	    od_json_figure(p->bytes));
}

static json_t *
lj_input_at(const void *v, int i)
{
	return od_json_text(((const char *const *)v)[i]);
}

static json_t *
lj_probe_at(const void *v, int i)
{
	return lj_probe(((const pb_result *const *)v)[i]);
}

static json_t *
lj_event_at(const void *v, int i)
{
	return lj_event(&((const lv_event *)v)[i]);
}

/* The time limit as --time-limit gave it: whole seconds as an integer. */
static json_t *
lj_seconds(double s)
{
	return s == floor(s) && fabs(s) < 1e15 ? json_integer((json_int_t)s) :
	    json_real(s);
}

static json_t *
lj_doc(const lv_report *r)
{
	lr_count c = lr_counts(r);
	json_t *root = json_pack("{s:s, s:s, s:o, s:o}", "schema",
	    "oomdoc.live/1", "oomdoc_version", OD_VERSION, "command",
	    od_json_text(r->command), "backend", od_json_text(r->backend));
	bool ok = root != NULL && lj_devices(root, r->info) &&
	    od_json_set(root, "context_bytes", od_json_figure(r->context)) &&
	    od_json_set(root, "free_bytes_at_start",
	    od_json_figure(r->free_at_start)) &&
	    od_json_set(root, "cap_bytes", od_json_figure(r->cap)) &&
	    od_json_set(root, "cap_from", od_json_text(r->cap_from)) &&
	    od_json_set(root, "peak_held_bytes", od_json_figure(r->info != NULL ?
	    r->peak_held : -1)) &&
	    od_json_set(root, "time_limit_seconds", lj_seconds(r->time_limit)) &&
	    od_json_set(root, "force", json_boolean(r->force)) &&
	    od_json_set(root, "processes_at_start", r->procs_known ?
	    lj_array(r->nprocs, r->procs, lj_proc_at) : json_null()) &&
	    od_json_set(root, "refused", od_json_text(r->refused)) &&
	    od_json_set(root, "device_error", od_json_text(r->failed)) &&
	    od_json_set(root, "stopped", od_json_text(r->stopped)) &&
	    od_json_set(root, "inputs", lj_array(r->ninputs, r->inputs,
	    lj_input_at)) &&
	    od_json_set(root, "probes", lj_array(r->nprobes, r->probes,
	    lj_probe_at)) &&
	    od_json_set(root, "events", lj_array(r->nevents, r->events,
	    lj_event_at)) &&
	    od_json_set(root, "summary", json_pack("{s:i, s:i, s:i, s:i, s:i, "
	    "s:i}", "events", r->nevents, "events_not_probed",
	    r->nevents_total - r->nevents, "verdicts", c.total, "confirmed",
	    c.confirmed, "refuted", c.refuted, "inconclusive",
	    c.inconclusive));

	if (!ok) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* Out of memory, nothing is written (see src/lib/report_json.c). */
void
lr_json_report(FILE *out, const lv_report *r)
{
	json_t *doc = lj_doc(r);

	(void)od_json_write(out, doc);
	json_decref(doc);
}

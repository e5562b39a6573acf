/*
 * session.c: one run of live mode (session.h).  It opens the device; lists
 * the other processes on it before any context of ours exists; when
 * there are some and the run is not forced, lets only the read-only
 * probes run (NVML's process list and counters) and says why in the
 * report; runs the probes, `oomdoc probe`'s fixed list or the ones the
 * causes of each event name (probe_plan.c); and fills the report with the
 * device's facts, the context's cost, the cap, the verdicts and what
 * stopped the run early, if anything did.
 *
 * With the fake backend the device is, unless the settings say
 * otherwise, the one the events describe: its capacity and the other
 * processes the log names.
 */
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "session.h"
#include "watchdog.h"

struct lv_session {
	dv_fake_spec spec;      /* the fake device, when that is the backend */
	dv_device *d;
	pb_session *probes;
	lv_event *events;       /* the report's events, with their verdicts */
	lv_report *rep;         /* the report being filled, for lv_session_partial */
	char event_id[96];      /* the UUID the events' GPU maps to, or "" */
};

/* Whether the CUDA backend is built in, as --version says it. */
const char *
od_live_version_line(void)
{
#ifdef OOMDOC_HAVE_CUDA
	return "CUDA live mode: built (kernels from CUDA " OOMDOC_CUDA_VERSION
	    "; the driver, NVML and CUPTI loaded at run time)";
#else
	return "CUDA live mode: not built (live mode has only the fake "
	    "backend)";
#endif
}

lv_session *
lv_session_new(void)
{
	return calloc(1, sizeof(lv_session));
}

void
lv_session_free(lv_session *s)
{
	if (s == NULL)
		return;
	/* The probe session refers to the device, so it goes first; closing
	 * the device releases whatever a probe still held. */
	pb_session_free(s->probes);
	dv_close(s->d);
	free(s->events);
	free(s);
}

static bool lv_event_gpu(const od_event *ev, int *index, char *id,
    size_t len);

void
lv_fake_from_events(const lv_item *items, size_t n, dv_fake_spec *spec)
{
	const od_event *best = NULL;
	size_t i;
	int k, self;

	dv_fake_default(spec);
	for (i = 0; i < n; i++) {
		const od_event *ev = items[i].ev;

		char id[96];
		int index;

		/* The node has every GPU the events name. */
		if (lv_event_gpu(ev, &index, id, sizeof id) && index < 64 &&
		    index >= spec->gpus)
			spec->gpus = index + 1;

		if (ev->mem.total > 0 && (best == NULL || (!best->fatal &&
		    ev->fatal)))
			best = ev;
	}
	if (best == NULL)
		return;
	snprintf(spec->name, sizeof spec->name, "fake GPU as the log "
	    "describes it");
	spec->total = best->mem.total;
	/* The failed process is gone; the others may still be there. */
	self = fc_self(best);
	for (k = 0; k < best->mem.nprocs && spec->nprocs < DV_PROCS_MAX; k++)
		if (k != self && best->mem.procs[k].bytes > 0) {
			spec->procs[spec->nprocs].pid = best->mem.procs[k].pid;
			spec->procs[spec->nprocs].bytes =
			    best->mem.procs[k].bytes;
			spec->procs[spec->nprocs].self = false;
			spec->nprocs++;
		}
}

/* The other processes on the device, before any context of ours. */
static void
lv_others(dv_device *d, lv_report *rep)
{
	dv_proc v[DV_PROCS_MAX];
	int n, i;

	n = dv_processes(d, v, DV_PROCS_MAX, &rep->procs_known);
	for (i = 0; i < n; i++)
		if (!v[i].self)
			rep->procs[rep->nprocs++] = v[i];
}

/* The line that says why only the read-only probes ran. */
static void
lv_refusal(const lv_report *rep, int index, char *out, size_t len)
{
	int64_t sum = 0;
	size_t used;
	int i;
	char total[32];

	/* Unknown is not nobody: without the list, fail closed. */
	if (!rep->procs_known) {
		snprintf(out, len, "the processes on GPU %d cannot be listed "
		    "(%.100s), so others may be using it: only the read-only "
		    "probes ran; use --force to run the others", index,
		    rep->info->nvml_note[0] != '\0' ? rep->info->nvml_note :
		    "NVML could not read the list");
		return;
	}
	for (i = 0; i < rep->nprocs; i++)
		if (rep->procs[i].bytes > 0)
			sum += rep->procs[i].bytes;
	od_size_format(sum, total, sizeof total);
	used = (size_t)snprintf(out, len, "GPU %d is in use by %d other "
	    "process%s (pid", index, rep->nprocs, rep->nprocs == 1 ? "" : "es");
	for (i = 0; i < rep->nprocs && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, "%s %lld",
		    i ? "," : "", (long long)rep->procs[i].pid);
	if (used < len)
		snprintf(out + used, len - used, "; %s): only the read-only "
		    "probes ran; use --force to run the others", total);
}

/*
 * The GPU an event names, on this node: PyTorch's "GPU N" counts the GPUs
 * the job saw, so through the log's CUDA_VISIBLE_DEVICES when it shows
 * it (entry N: an index of the node, or a UUID in *id).  False when the
 * event names none.
 */
static bool
lv_event_gpu(const od_event *ev, int *index, char *id, size_t len)
{
	const char *p = ev->ctx.visible_devices;
	int k;

	id[0] = '\0';
	*index = ev->device;
	if (ev->device < 0)
		return false;
	for (k = 0; *p != '\0' && k < ev->device; k++) {
		p = strchr(p, ',');
		if (p == NULL)
			return true;    /* fewer entries: leave it unmapped */
		p++;
	}
	if (*p == '\0')
		return true;
	if (*p >= '0' && *p <= '9') {
		*index = atoi(p);
	} else {
		size_t n = strcspn(p, ",");

		snprintf(id, len, "%.*s", (int)(n < len ? n : len - 1), p);
	}
	return true;
}

/*
 * Whether ev's verdicts must be withheld: without --device, the event
 * names another GPU than the one probed, or names none on a node with
 * more than one (or an unknown number); why says so.  PyTorch's "GPU N"
 * counts the GPUs the job saw (its CUDA_VISIBLE_DEVICES), which is this
 * run's numbering only when both see the same GPUs: the sentence says so.
 */
static bool
lv_other_gpu(const lv_session_opts *o, const dv_info *info,
    const od_event *ev, char *why, size_t len)
{
	char id[96];
	int index;

	if (o->device_explicit)
		return false;
	if (lv_event_gpu(ev, &index, id, sizeof id) && (id[0] != '\0' ?
	    !dv_id_matches(info, id) : index != info->index)) {
		if (id[0] != '\0')
			snprintf(why, len, "Not probed: this event is on GPU %d "
			    "of the job, %.60s, and another GPU was probed; "
			    "rerun with --device %.60s.", ev->device, id, id);
		else
			snprintf(why, len, "Not probed: this event is on GPU %d "
			    "of the node and GPU %d was probed; rerun with "
			    "--device %d.", index, info->index, index);
		return true;
	}
	if (ev->device < 0 && info->count != 1) {
		snprintf(why, len, "Not probed: the log does not say which GPU "
		    "this event was on, and this node has %s GPUs; give "
		    "--device.", info->count < 0 ? "an unknown number of" :
		    "several");
		return true;
	}
	return false;
}

/* What the report says of the run before any device is opened. */
static void
lv_report_start(const lv_session_opts *o, lv_report *rep)
{
	memset(rep, 0, sizeof *rep);
	rep->command = o->probe_only ? "probe" : "live";
	rep->backend = o->backend;
	rep->context = rep->free_at_start = rep->cap = -1;
	rep->time_limit = o->time_limit;
	rep->inputs = o->inputs;
	rep->ninputs = o->ninputs;
}

/* What the report says once the probes ran, or at any moment of the run
 * (the watchdog's partial report). */
static void
lv_fill_tail(lv_session *s, lv_report *rep, od_error *err)
{
	rep->context = pb_session_context(s->probes);
	rep->free_at_start = pb_session_free_at_start(s->probes);
	if (pb_session_started(s->probes))
		rep->cap = dv_cap(s->d);
	rep->peak_held = dv_peak(s->d);
	switch (pb_session_failed(s->probes, err)) {
	case DV_OK:
		break;
	case DV_TENANT:
		/* Stopped for safety: everything taken was given back. */
		snprintf(rep->refused, sizeof rep->refused, "stopped: %.160s; "
		    "everything this run took was released", err->msg);
		break;
	case DV_DRIVER_OLD:
		/* The driver could not load the kernels (dv_start). */
		rep->driver_old = true;
		snprintf(rep->failed, sizeof rep->failed, "%s", err->msg);
		break;
	case DV_TIMEOUT:
		rep->timed_out = true;
		snprintf(rep->failed, sizeof rep->failed, "%s; nothing was "
		    "freed or unmapped after it", err->msg);
		break;
	default:
		snprintf(rep->failed, sizeof rep->failed, "%s", err->msg);
		break;
	}
	if (dv_stopped())
		snprintf(rep->stopped, sizeof rep->stopped, "signal %d",
		    dv_stop_signal());
}

void
lv_session_partial(lv_session *s, double seconds)
{
	od_error err;

	if (s == NULL || s->rep == NULL)
		return;
	memset(&err, 0, sizeof err);
	if (s->probes != NULL)
		lv_fill_tail(s, s->rep, &err);
	s->rep->timed_out = true;
	snprintf(s->rep->failed, sizeof s->rep->failed, "a device call ran "
	    "%.1f s, past the time limit of %g s and %g s of grace: the "
	    "watchdog ended the run, and nothing was freed or unmapped",
	    seconds, s->rep->time_limit, LV_WATCHDOG_GRACE);
}

lv_run
lv_session_run(lv_session *s, const lv_session_opts *o, const lv_item *items,
    size_t n, lv_report *rep, od_error *err)
{
	static const pb_probe probe_order[] = {
		PB_PROCESSES, PB_CONTEXT_COST, PB_LARGEST_ALLOCATION, PB_HEALTH,
	};
	bool fake = strcmp(o->backend, "fake") == 0;
	char why[320];
	dv_config dcfg;
	dv_status st;
	pb_opts po;
	size_t i;
	int ne = 0;

	if (o->probe_only)
		n = 0;
	lv_report_start(o, rep);
	if (!o->probe_only && n == 0)
		return LV_RUN_NO_EVENTS;
	dv_fake_default(&s->spec);
	if (fake) {
		if (!o->probe_only)
			lv_fake_from_events(items, n, &s->spec);
		if (o->fake != NULL && !dv_fake_parse(&s->spec, o->fake, err))
			return LV_RUN_BAD_SETTINGS;
	}
	memset(&dcfg, 0, sizeof dcfg);
	dcfg.index = o->device;
	dcfg.id = o->device_id;
	/* Without --device, the GPU of the first event that names one,
	 * through the job's CUDA_VISIBLE_DEVICES. */
	for (i = 0; !o->device_explicit && i < n; i++) {
		int index;

		if (lv_event_gpu(items[i].ev, &index, s->event_id,
		    sizeof s->event_id)) {
			dcfg.index = index;
			if (s->event_id[0] != '\0')
				dcfg.id = s->event_id;
			break;
		}
	}
	dcfg.fake = &s->spec;
	dcfg.time_limit = o->time_limit;
	dcfg.nvml_path = o->nvml_path;
	dcfg.cupti_path = o->cupti_path;
	s->d = dv_open(o->backend, &dcfg, &st, err);
	if (s->d == NULL)
		return st == DV_DRIVER_OLD ? LV_RUN_DRIVER_OLD :
		    st == DV_UNSUPPORTED || st == DV_NO_DRIVER ?
		    LV_RUN_NO_DEVICE :
		    LV_RUN_DEVICE_FAILED;
	s->rep = rep;
	rep->info = dv_info_of(s->d);
	rep->force = o->force;
	if (o->probe_only)
		rep->ninputs = 0;
	if (o->force)
		snprintf(rep->cap_from, sizeof rep->cap_from, "min(50%% of the "
		    "free memory, %s)", o->cap >= 0 ? "--max-memory" :
		    o->cap_percent > 0 ? "--max-memory %" : "50%");
	else if (o->cap < 0)
		snprintf(rep->cap_from, sizeof rep->cap_from, "%d%% of the free "
		    "memory", o->cap_percent > 0 ? o->cap_percent : 90);
	else
		snprintf(rep->cap_from, sizeof rep->cap_from, "--max-memory");

	/* The safety refusal: others hold the GPU and the run is not
	 * forced, so no context is made and no memory taken. */
	lv_others(s->d, rep);
	memset(&po, 0, sizeof po);
	po.read_only = (rep->nprocs > 0 || !rep->procs_known) && !o->force;
	po.force = o->force;
	po.cap = o->cap;
	po.cap_percent = o->cap_percent;
	po.seed = o->seed;
	po.torch_python = o->torch_python;
	if (po.read_only)
		lv_refusal(rep, o->device, rep->refused, sizeof rep->refused);
	s->probes = pb_session_new(s->d, &po);
	if (s->probes == NULL)
		return LV_RUN_NO_MEMORY;

	if (o->probe_only) {
		/* Each result counts once it is there, for a partial
		 * report. */
		for (i = 0; i < sizeof probe_order / sizeof probe_order[0];
		    i++) {
			const pb_result *r = pb_run(s->probes, probe_order[i],
			    NULL);

			rep->probes[rep->nprobes++] = r;
		}
	} else {
		s->events = calloc(n < LV_EVENTS_MAX ? n : LV_EVENTS_MAX,
		    sizeof *s->events);
		if (s->events == NULL)
			return LV_RUN_NO_MEMORY;
		for (i = 0; i < n && ne < LV_EVENTS_MAX && !dv_stopped(); i++) {
			lv_event *le = &s->events[ne++];

			le->ev = items[i].ev;
			le->input = items[i].input;
			le->kind = items[i].kind;
			/* So far, for a partial report. */
			rep->events = s->events;
			rep->nevents = ne;
			if (lv_other_gpu(o, rep->info, le->ev, why, sizeof why))
				le->nv = pb_withheld(le->ev, why, le->v,
				    OD_CAUSES_MAX);
			else
				le->nv = pb_verdicts(s->probes, le->ev, le->v,
				    OD_CAUSES_MAX);
		}
	}
	rep->events = s->events;
	rep->nevents = ne;
	rep->nevents_total = (int)n;
	lv_fill_tail(s, rep, err);
	return LV_RUN_DONE;
}

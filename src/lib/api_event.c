/*
 * api_event.c: the accessors of the public interface's events and causes
 * (include/oomdoc/oomdoc.h).  An oomdoc_event is the core's od_event and
 * an oomdoc_cause its od_cause (core.h names their structs so); these
 * functions read them and change nothing.
 */
#include <string.h>

#include "core.h"

const char *
oomdoc_event_kind(const oomdoc_event *ev)
{
	return od_kind_name(ev->kind);
}

const char *
oomdoc_event_title(const oomdoc_event *ev)
{
	return od_event_title(ev);
}

const char *
oomdoc_event_framework(const oomdoc_event *ev)
{
	return ev->framework;
}

const char *
oomdoc_event_confidence(const oomdoc_event *ev)
{
	return od_confidence_name(ev->confidence);
}

bool
oomdoc_event_fatal(const oomdoc_event *ev)
{
	return ev->fatal;
}

int
oomdoc_event_input(const oomdoc_event *ev)
{
	return ev->input;
}

uint64_t
oomdoc_event_line(const oomdoc_event *ev)
{
	return ev->line;
}

uint64_t
oomdoc_event_end_line(const oomdoc_event *ev)
{
	return ev->end_line;
}

int
oomdoc_event_rank(const oomdoc_event *ev)
{
	return ev->rank;
}

int
oomdoc_event_device(const oomdoc_event *ev)
{
	return ev->device;
}

const char *
oomdoc_event_timestamp(const oomdoc_event *ev)
{
	return ev->timestamp;
}

const char *
oomdoc_event_message(const oomdoc_event *ev, size_t *len)
{
	if (len != NULL)
		*len = ev->message != NULL ? ev->message_len : 0;
	return ev->message != NULL ? ev->message : "";
}

uint64_t
oomdoc_event_occurrences(const oomdoc_event *ev)
{
	return ev->occurrences;
}

const char *
oomdoc_event_fingerprint(const oomdoc_event *ev)
{
	return ev->fingerprint;
}

/* Each figure: its name in the JSON report and where the event holds it. */
static const struct {
	const char *name;
	size_t off;
} api_figures[OOMDOC_FIGURE_COUNT] = {
#define API_FIG(e, name, field) [e] = { name, offsetof(od_event, field) }
	API_FIG(OOMDOC_FIG_REQUESTED, "requested_bytes", mem.requested),
	API_FIG(OOMDOC_FIG_TOTAL, "total_bytes", mem.total),
	API_FIG(OOMDOC_FIG_FREE, "free_bytes", mem.free),
	API_FIG(OOMDOC_FIG_ALLOCATED, "allocated_bytes", mem.allocated),
	API_FIG(OOMDOC_FIG_RESERVED, "reserved_bytes", mem.reserved),
	API_FIG(OOMDOC_FIG_RESERVED_UNALLOCATED, "reserved_unallocated_bytes",
	    mem.reserved_unallocated),
	API_FIG(OOMDOC_FIG_PROCESS_IN_USE, "process_in_use_bytes",
	    mem.process_in_use),
	API_FIG(OOMDOC_FIG_NON_FRAMEWORK, "non_framework_bytes",
	    mem.non_framework),
	API_FIG(OOMDOC_FIG_ALLOWED, "allowed_bytes", mem.allowed),
	API_FIG(OOMDOC_FIG_PRIVATE_POOLS, "private_pools_bytes",
	    mem.private_pools),
	API_FIG(OOMDOC_FIG_PEAK, "peak_bytes", mem.peak),
	API_FIG(OOMDOC_FIG_HOST_TOTAL_VM, "total_vm_bytes", host.total_vm),
	API_FIG(OOMDOC_FIG_HOST_ANON_RSS, "anon_rss_bytes", host.anon_rss),
	API_FIG(OOMDOC_FIG_HOST_FILE_RSS, "file_rss_bytes", host.file_rss),
	API_FIG(OOMDOC_FIG_HOST_SHMEM_RSS, "shmem_rss_bytes", host.shmem_rss),
	API_FIG(OOMDOC_FIG_HOST_LIMIT, "limit_bytes", host.limit),
	API_FIG(OOMDOC_FIG_HOST_USAGE, "usage_bytes", host.usage),
#undef API_FIG
};

int64_t
oomdoc_event_figure(const oomdoc_event *ev, oomdoc_figure fig)
{
	int64_t v;

	if ((unsigned)fig >= OOMDOC_FIGURE_COUNT)
		return OD_UNKNOWN;
	memcpy(&v, (const char *)ev + api_figures[fig].off, sizeof v);
	return v;
}

const char *
oomdoc_figure_name(oomdoc_figure fig)
{
	return (unsigned)fig < OOMDOC_FIGURE_COUNT ? api_figures[fig].name :
	    NULL;
}

int
oomdoc_event_cause_count(const oomdoc_event *ev)
{
	return ev->ncauses;
}

const oomdoc_cause *
oomdoc_event_cause(const oomdoc_event *ev, int i)
{
	return i >= 0 && i < ev->ncauses ? &ev->causes[i] : NULL;
}

const char *
oomdoc_cause_rule(const oomdoc_cause *c)
{
	return c->rule;
}

const char *
oomdoc_cause_title(const oomdoc_cause *c)
{
	return c->title;
}

double
oomdoc_cause_score(const oomdoc_cause *c)
{
	return c->score;
}

const char *
oomdoc_cause_confidence(const oomdoc_cause *c)
{
	return od_confidence_name(c->confidence);
}

const char *
oomdoc_cause_explanation(const oomdoc_cause *c)
{
	return c->explanation != NULL ? c->explanation : "";
}

int
oomdoc_cause_fix_count(const oomdoc_cause *c)
{
	return c->nfixes;
}

const char *
oomdoc_cause_fix_text(const oomdoc_cause *c, int i)
{
	return i >= 0 && i < c->nfixes ? c->fixes[i].text : NULL;
}

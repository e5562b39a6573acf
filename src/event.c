/*
 * event.c: the events of a run, with echoes grouped.
 *
 * The same OOM is often printed several times: by every rank of a job, by
 * a launcher that repeats the child's error, by a retry loop.  Two events
 * are the same when their kind and their message, with the whitespace
 * collapsed, are equal; the second is then merged into the first (its rank
 * joins the list of ranks, its count is added).  Distinct events are kept
 * in the order in which they first appeared, at most OD_EVENTS_MAX of
 * them; the ones beyond are counted, not kept, so that a log with a
 * million different OOM lines still runs in bounded memory.
 */
#include <stdlib.h>
#include <string.h>

#include "oomdoc.h"

#define EV_SLOTS 2048           /* hash slots, a power of two > 2 * max */

struct od_events {
	od_event *ev;           /* OD_EVENTS_MAX entries */
	size_t n;
	int slot[EV_SLOTS];     /* index + 1 into ev, 0 when empty */
	uint64_t dropped;
};

void
od_event_init(od_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->rank = -1;
	ev->device = -1;
	ev->occurrences = 1;
	ev->mem.requested = ev->mem.total = ev->mem.free = OD_UNKNOWN;
	ev->mem.allocated = ev->mem.reserved = OD_UNKNOWN;
	ev->mem.reserved_unallocated = ev->mem.process_in_use = OD_UNKNOWN;
	ev->mem.non_framework = ev->mem.allowed = OD_UNKNOWN;
	ev->mem.private_pools = ev->mem.peak = OD_UNKNOWN;
	ev->host.pid = -1;
	ev->host.total_vm = ev->host.anon_rss = ev->host.file_rss = OD_UNKNOWN;
	ev->host.shmem_rss = ev->host.limit = ev->host.usage = OD_UNKNOWN;
	ev->confidence = OD_CONF_HIGH;
	ev->framework = od_kind_framework(ev->kind);
	ev->step = -1;
	ev->ctx.batch_size = ev->ctx.accum_steps = ev->ctx.seq_len = -1;
	ev->ctx.grad_ckpt = -1;
	ev->ctx.mem_first = ev->ctx.mem_last = ev->ctx.mem_max = -1;
	ev->ctx.xid = -1;
}

/*
 * Kills of one process are often reported several times in different
 * words (the kernel's oom-kill line and "Killed process", a launcher's
 * exitcode -9 table and its "Signal 9 received by PID"): such events are
 * one when their kind and process are the same.
 */
static bool
ev_by_pid(const od_event *ev)
{
	return ev->host.pid >= 0 && (ev->kind == OD_KIND_HOST_OOM_KILLER ||
	    ev->kind == OD_KIND_DATALOADER_KILLED);
}

void
od_cause_clear(od_cause *c)
{
	int i;

	free(c->explanation);
	for (i = 0; i < c->nevidence; i++)
		free(c->evidence[i]);
	for (i = 0; i < c->nfixes; i++) {
		free(c->fixes[i].text);
		free(c->fixes[i].env_name);
		free(c->fixes[i].env_value);
		free(c->fixes[i].code);
		free(c->fixes[i].config_key);
		free(c->fixes[i].config_value);
	}
	memset(c, 0, sizeof *c);
}

void
od_event_clear(od_event *ev)
{
	int i;

	free(ev->message);
	free(ev->ranks);
	for (i = 0; i < ev->ncauses; i++)
		od_cause_clear(&ev->causes[i]);
	free(ev->causes);
	od_event_init(ev);
}

/* Adds rank to the sorted list of distinct ranks. */
void
od_event_add_rank(od_event *ev, int rank)
{
	int lo = 0, hi = ev->nranks;

	if (rank < 0)
		return;
	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (ev->ranks[mid] == rank)
			return;
		if (ev->ranks[mid] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (ev->nranks >= OD_RANKS_MAX) {
		ev->ranks_dropped = true;
		return;
	}
	if (ev->nranks == ev->ranks_cap) {
		int cap = ev->ranks_cap ? ev->ranks_cap * 2 : 8;
		int *r = realloc(ev->ranks, (size_t)cap * sizeof *r);

		if (r == NULL) {
			ev->ranks_dropped = true;
			return;
		}
		ev->ranks = r;
		ev->ranks_cap = cap;
	}
	memmove(ev->ranks + lo + 1, ev->ranks + lo,
	    (size_t)(ev->nranks - lo) * sizeof *ev->ranks);
	ev->ranks[lo] = rank;
	ev->nranks++;
}

/* FNV-1a over the kind and the message with whitespace runs collapsed. */
static uint64_t
ev_key(const od_event *ev)
{
	uint64_t h = 1469598103934665603ULL;
	bool space = false;
	size_t i;

	h = (h ^ (uint64_t)ev->kind) * 1099511628211ULL;
	if (ev_by_pid(ev))
		return (h ^ (uint64_t)ev->host.pid) * 1099511628211ULL;
	h = (h ^ (uint64_t)ev->fatal) * 1099511628211ULL;
	for (i = 0; i < ev->message_len; i++) {
		unsigned char c = (unsigned char)ev->message[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			space = true;
			continue;
		}
		if (space)
			h = (h ^ ' ') * 1099511628211ULL;
		space = false;
		h = (h ^ c) * 1099511628211ULL;
	}
	return h;
}

/* Whether two messages are equal with whitespace runs collapsed. */
static bool
ev_same_text(const od_event *a, const od_event *b)
{
	size_t i = 0, j = 0;

	for (;;) {
		bool sa = false, sb = false;

		while (i < a->message_len && strchr(" \t\r\n", a->message[i]))
			i++, sa = true;
		while (j < b->message_len && strchr(" \t\r\n", b->message[j]))
			j++, sb = true;
		if (i == a->message_len || j == b->message_len)
			return i == a->message_len && j == b->message_len;
		if (sa != sb || a->message[i] != b->message[j])
			return false;
		i++;
		j++;
	}
}

/* Moves what ev says into old, keeping old's count and ranks. */
static void
ev_take(od_event *old, od_event *ev)
{
	od_event keep = *old;

	free(old->message);
	*old = *ev;
	old->occurrences = keep.occurrences;
	old->ranks = keep.ranks;
	old->nranks = keep.nranks;
	old->ranks_cap = keep.ranks_cap;
	old->ranks_dropped = keep.ranks_dropped;
	old->key = keep.key;
	if (old->rank < 0)
		old->rank = keep.rank;
	ev->message = NULL;
	ev->ranks = NULL;
}

od_events *
od_events_new(void)
{
	od_events *set = calloc(1, sizeof *set);

	if (set == NULL)
		return NULL;
	set->ev = calloc(OD_EVENTS_MAX, sizeof *set->ev);
	if (set->ev == NULL) {
		free(set);
		return NULL;
	}
	return set;
}

void
od_events_free(od_events *set)
{
	size_t i;

	if (set == NULL)
		return;
	for (i = 0; i < set->n; i++)
		od_event_clear(&set->ev[i]);
	free(set->ev);
	free(set);
}

void
od_events_add(od_events *set, od_event *ev)
{
	size_t i;
	od_event *old;

	ev->key = ev_key(ev);
	for (i = ev->key & (EV_SLOTS - 1); set->slot[i] != 0;
	    i = (i + 1) & (EV_SLOTS - 1)) {
		old = &set->ev[set->slot[i] - 1];
		if (old->key != ev->key || old->kind != ev->kind)
			continue;
		if (ev_by_pid(old) != ev_by_pid(ev) || (ev_by_pid(ev) ?
		    old->host.pid != ev->host.pid :
		    (old->fatal != ev->fatal || !ev_same_text(old, ev))))
			continue;
		/* A surer report of the same kill replaces the weaker one,
		 * keeping the count and the ranks. */
		if (ev->confidence > old->confidence)
			ev_take(old, ev);
		/* An echo: remember who echoed it. */
		old->occurrences += ev->occurrences;
		if (old->rank < 0)
			old->rank = ev->rank;
		od_event_add_rank(old, ev->rank);
		if (old->timestamp[0] == '\0')
			memcpy(old->timestamp, ev->timestamp,
			    sizeof old->timestamp);
		od_event_clear(ev);
		return;
	}
	if (set->n >= OD_EVENTS_MAX) {
		set->dropped += ev->occurrences;
		od_event_clear(ev);
		return;
	}
	old = &set->ev[set->n];
	*old = *ev;
	old->ranks = NULL;
	old->nranks = old->ranks_cap = 0;
	od_event_add_rank(old, ev->rank);
	free(ev->ranks);
	set->slot[i] = (int)++set->n;
	od_event_init(ev);
}

size_t
od_events_count(const od_events *set)
{
	return set->n;
}

od_event *
od_events_get(od_events *set, size_t i)
{
	return i < set->n ? &set->ev[i] : NULL;
}

uint64_t
od_events_dropped(const od_events *set)
{
	return set->dropped;
}

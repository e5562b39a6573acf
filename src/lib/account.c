/*
 * account.c: the memory account of an event.  The device's capacity is
 * split into other processes, this process outside the framework's
 * allocator (CUDA context, libraries, NCCL), allocated by the framework,
 * reserved but unallocated, free, and what the message leaves
 * unexplained; whenever the capacity and the free memory are known, the
 * known parts add up to the capacity exactly (the unaccounted part takes
 * the difference, and with it the parts the message does not give).
 *
 * What each era of PyTorch's message prints (c10/cuda/CUDACachingAllocator.cpp,
 * DeviceCachingAllocator::malloc; recog_pytorch.c reads them):
 *   1.0-1.3  "N cached": reserved - allocated, so reserved is derived;
 *   1.4-2.0  "N reserved in total by PyTorch": the unallocated part is
 *            derived (reserved - allocated);
 *   2.1+     allocated and "reserved by PyTorch but unallocated" printed,
 *            and per process "Process N has X memory in use" or
 *            "Including non-PyTorch memory, this process has X"
 *            (reportProcessMemoryInfo, from NVML).
 * In a container NVML gives host PIDs, so the process can print itself as
 * "Process N" (reportProcessMemoryInfo compares them with getpid()); that
 * line is this process, and is never counted as another's.
 */
#include <string.h>

#include "account.h"

static const char *const part_names[OD_PART_COUNT] = {
	[OD_PART_OTHER_PROCESSES] = "other_processes",
	[OD_PART_NON_FRAMEWORK] = "non_framework",
	[OD_PART_ALLOCATED] = "allocated",
	[OD_PART_RESERVED_UNALLOCATED] = "reserved_unallocated",
	[OD_PART_FREE] = "free",
	[OD_PART_UNACCOUNTED] = "unaccounted",
};

static const char *const part_labels[OD_PART_COUNT] = {
	[OD_PART_OTHER_PROCESSES] = "other processes",
	[OD_PART_NON_FRAMEWORK] = "this process outside the allocator",
	[OD_PART_ALLOCATED] = "allocated by the framework",
	[OD_PART_RESERVED_UNALLOCATED] = "reserved, unallocated",
	[OD_PART_FREE] = "free",
	[OD_PART_UNACCOUNTED] = "unaccounted",
};

const char *
od_part_name(od_part p)
{
	return (unsigned)p < OD_PART_COUNT ? part_names[p] : "unknown";
}

const char *
od_part_label(od_part p)
{
	return (unsigned)p < OD_PART_COUNT ? part_labels[p] : "unknown";
}

static void
ac_note(od_account *a, const char *s)
{
	if (a->nnotes < OD_ACCOUNT_NOTES_MAX)
		a->notes[a->nnotes++] = s;
}

static void
ac_set(od_account *a, od_part p, int64_t v, bool derived)
{
	if (v < 0)
		return;
	a->part[p].bytes = v;
	a->part[p].known = true;
	a->part[p].derived = derived;
}

/*
 * Which "Process N" line is this process, or -1.  With a "this process"
 * clause, a line of exactly its figure is this process listed again;
 * without one, the only line is this process (it holds memory on the
 * device, so NVML lists it), and of several lines the one whose usage
 * covers the framework's reservation with at most a context's worth
 * (2 GiB, or a tenth of a larger device) beyond it, when only one does.
 */
static int
ac_self(const od_memory *m)
{
	int64_t slack;
	int i, self = -1;

	if (m->nprocs == 0)
		return -1;
	if (m->process_in_use >= 0) {
		for (i = 0; i < m->nprocs; i++)
			if (m->procs[i].bytes == m->process_in_use) {
				if (self >= 0)
					return -1;
				self = i;
			}
		return self;
	}
	if (m->nprocs == 1 && m->procs_dropped == 0)
		return 0;
	if (m->reserved < 0)
		return -1;
	slack = m->total > 0 && m->total / 10 > (INT64_C(2) << 30) ?
	    m->total / 10 : INT64_C(2) << 30;
	for (i = 0; i < m->nprocs; i++) {
		int64_t b = m->procs[i].bytes;

		if (b >= m->reserved && b - m->reserved <= slack) {
			if (self >= 0)
				return -1;      /* two candidates: no guess */
			self = i;
		}
	}
	return self;
}

/*
 * The largest figure the account takes: 2^56 bytes (64 PiB), far beyond
 * any device, so that a sum of all the figures of an event (at most
 * 8 + OD_PROCS_MAX of them) cannot overflow an int64_t.  A larger figure
 * is not a measurement of a GPU: the event then has no account.
 */
#define AC_FIGURE_MAX (INT64_C(1) << 56)

/* Whether every figure of m is within AC_FIGURE_MAX. */
static bool
ac_figures_sane(const od_memory *m)
{
	const int64_t v[] = { m->requested, m->total, m->free, m->allocated,
	    m->reserved, m->reserved_unallocated, m->process_in_use,
	    m->non_framework };
	size_t i;
	int k;

	for (i = 0; i < sizeof v / sizeof v[0]; i++)
		if (v[i] > AC_FIGURE_MAX)
			return false;
	for (k = 0; k < m->nprocs; k++)
		if (m->procs[k].bytes > AC_FIGURE_MAX)
			return false;
	return true;
}

void
od_account_of(const od_event *ev, od_account *a)
{
	const od_memory *m = &ev->mem;
	int64_t sum = 0, reserved = m->reserved, self_bytes = OD_UNKNOWN;
	bool others_known = true, others_derived = false;
	int i, k, nothers = 0;

	memset(a, 0, sizeof *a);
	a->self = -1;
	a->self_bytes = OD_UNKNOWN;
	a->others = -1;
	a->shortfall = OD_UNKNOWN;
	a->total = m->total;
	a->valid = m->total > 0;
	if (!ac_figures_sane(m)) {
		a->valid = false;
		ac_note(a, "A figure of the message is larger than 64 PiB, which "
		    "no device holds: the event has no memory account.");
		return;
	}

	/* The framework's two figures, printed or derived by era. */
	ac_set(a, OD_PART_ALLOCATED, m->allocated, false);
	ac_set(a, OD_PART_RESERVED_UNALLOCATED, m->reserved_unallocated,
	    ev->layout == OD_LAYOUT_RESERVED_TOTAL);
	ac_set(a, OD_PART_FREE, m->free, false);
	if (m->allocated >= 0 && m->reserved_unallocated >= 0)
		reserved = m->allocated + m->reserved_unallocated;

	/* This process and the others, from the NVML lines. */
	a->self = ac_self(m);
	if (a->self >= 0)
		self_bytes = m->procs[a->self].bytes;
	else if (m->process_in_use >= 0)
		self_bytes = m->process_in_use;
	if (m->nprocs > 0 || m->process_in_use >= 0) {
		for (i = 0; i < m->nprocs; i++) {
			if (i == a->self)
				continue;
			nothers++;
			if (m->procs[i].bytes < 0)
				others_known = false;
			else
				sum += m->procs[i].bytes;
		}
		if (m->procs_dropped > 0)
			others_known = false;
		if (m->process_in_use < 0 && a->self < 0 && m->nprocs > 1) {
			/* One of them is this process, but which cannot be
			 * told. */
			others_known = false;
			ac_note(a, "One of the process lines is this process "
			    "(no \"this process\" clause), but which cannot be "
			    "told: the other processes' share is unknown.");
		}
		others_derived = nothers != 1;
		if (others_known) {
			a->others = nothers;
			ac_set(a, OD_PART_OTHER_PROCESSES, sum, others_derived);
		}
		if (a->self >= 0 && m->process_in_use < 0)
			ac_note(a, "The message prints this process as a "
			    "\"Process N\" line (in a container NVML gives "
			    "host PIDs): it is counted as this process, not "
			    "as another.");
		else if (a->self >= 0)
			ac_note(a, "A \"Process N\" line has the same figure as "
			    "this process's own: it is taken to be this process "
			    "listed again, not another.");
	}
	if (self_bytes >= 0 && reserved >= 0 && self_bytes < reserved) {
		ac_note(a, "This process's NVML figure is less than what the "
		    "framework reserved (\"0 bytes in use\" in containers): it "
		    "is not a measurement and is not used.");
		self_bytes = OD_UNKNOWN;
	}
	a->self_bytes = self_bytes;
	if (m->non_framework >= 0 && ev->layout == OD_LAYOUT_OTHER_STACK)
		ac_set(a, OD_PART_NON_FRAMEWORK, m->non_framework, false);
	else if (self_bytes >= 0 && reserved >= 0)
		ac_set(a, OD_PART_NON_FRAMEWORK, self_bytes - reserved, true);

	/* What no figure explains: the capacity less every known part, and
	 * so with them the parts the message does not give.  Without the
	 * free figure it would hold free memory too: then it is unknown. */
	if (a->valid && a->part[OD_PART_FREE].known) {
		int64_t x = m->total;

		for (k = 0; k < OD_PART_UNACCOUNTED; k++)
			if (a->part[k].known)
				x -= a->part[k].bytes;
		a->part[OD_PART_UNACCOUNTED].bytes = x;
		a->part[OD_PART_UNACCOUNTED].known = true;
		a->part[OD_PART_UNACCOUNTED].derived = true;
		if (x < 0)
			ac_note(a, "The printed figures add up to more than the "
			    "capacity: each is rounded to two decimals (up to "
			    "5 MiB off in GiB), and on Windows shared memory "
			    "counts as device memory; the unaccounted part is "
			    "negative by that much.");
	} else if (a->valid) {
		int64_t parts = 0;

		for (k = 0; k < OD_PART_UNACCOUNTED; k++)
			if (a->part[k].known)
				parts += a->part[k].bytes;
		if (parts > m->total)
			ac_note(a, "The printed figures add up to more than the "
			    "capacity, so they cannot all be what the device "
			    "held at once.");
	}

	/* The shortfall: what the request lacked. */
	if (m->requested >= 0 && m->free >= 0) {
		if (m->requested > m->free) {
			a->shortfall = m->requested - m->free;
		} else {
			a->shortfall = m->requested;
			/*
			 * The figure and the failure disagree.  Which reason
			 * holds depends on the stack, so the note names the
			 * known ones without choosing: the CUDA driver keeps
			 * some memory back, PyTorch reads the free figure
			 * after releasing its cache, and XLA on TPU can use
			 * only what it prints as "reservable" (its "Attempting
			 * to reserve N at the bottom of memory" message).
			 */
			ac_note(a, "The request was no larger than the free memory "
			    "printed, yet it failed: the free figure is not all "
			    "that the allocation could use (the driver keeps "
			    "some back, PyTorch reads it after releasing its "
			    "cache, XLA on TPU can use only what it prints as "
			    "reservable), "
			    "or it was read at another moment; the whole request "
			    "is counted as the shortfall.");
		}
	}
}

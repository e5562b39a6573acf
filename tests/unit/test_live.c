/*
 * test_live.c: live mode's device layer and probes, through the fake
 * device.  The fake's first-fit allocator and its mapping; the cap; the
 * release of everything on close and on a stop; each probe's verdicts,
 * confirmed, refuted and inconclusive, on devices made to give each; the
 * refusal when other processes hold the GPU; injected failures; NVML and
 * CUPTI missing; a whole live session (session.h) from events to the
 * report it fills; and, where the CUDA backend is built, what it says on
 * a machine without a driver.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "device.h"
#include "nvml_load.h"
#include "core.h"
#include "probe.h"
#include "session.h"
#include "torch_baseline.h"
#ifdef OOMDOC_HAVE_CUDA
#include "cupti_load.h"
#endif

#define MIB (1LL << 20)
#define GIB (1LL << 30)

/* Opens a fake device: the defaults, then settings (or NULL), with a
 * time limit of limit seconds per kernel. */
static dv_device *
fake_limit(const char *settings, dv_fake_spec *spec, double limit)
{
	dv_config cfg;
	od_error err;
	dv_status st;
	dv_device *d;

	memset(&cfg, 0, sizeof cfg);
	memset(&err, 0, sizeof err);
	dv_fake_default(spec);
	if (settings != NULL)
		assert_true(dv_fake_parse(spec, settings, &err));
	cfg.fake = spec;
	cfg.time_limit = limit;
	d = dv_open("fake", &cfg, &st, &err);
	assert_non_null(d);
	assert_int_equal(st, DV_OK);
	return d;
}

static dv_device *
fake(const char *settings, dv_fake_spec *spec)
{
	return fake_limit(settings, spec, 10);
}

/* An event with these figures (OD_UNKNOWN to leave one out). */
static void
event(od_event *ev, int64_t requested, int64_t total, int64_t free_b,
    int64_t allocated, int64_t reserved_unallocated)
{
	od_event_init(ev);
	ev->kind = OD_KIND_CUDA_CACHING_ALLOCATOR;
	ev->fatal = true;
	ev->mem.requested = requested;
	ev->mem.total = total;
	ev->mem.free = free_b;
	ev->mem.allocated = allocated;
	ev->mem.reserved_unallocated = reserved_unallocated;
	if (allocated >= 0 && reserved_unallocated >= 0)
		ev->mem.reserved = allocated + reserved_unallocated;
}

/* Gives ev one cause per rule id, each naming probe. */
static void
causes(od_event *ev, const char *const *rules, const char *const *probes,
    int n)
{
	int i;

	ev->causes = calloc((size_t)n, sizeof *ev->causes);
	assert_non_null(ev->causes);
	for (i = 0; i < n; i++) {
		ev->causes[i].rule = rules[i];
		ev->causes[i].probe = probes[i];
	}
	ev->ncauses = n;
}

static pb_session *
session(dv_device *d, int percent, bool read_only)
{
	pb_opts o;
	pb_session *s;

	memset(&o, 0, sizeof o);
	o.cap = -1;
	o.cap_percent = percent;
	o.read_only = read_only;
	s = pb_session_new(d, &o);
	assert_non_null(s);
	return s;
}

/* The verdict of probe p on cause for ev. */
static pb_verdict
judge(pb_session *s, pb_probe p, const char *cause, const od_event *ev)
{
	pb_verdict v;

	memset(&v, 0, sizeof v);
	pb_judge(cause, ev, pb_run(s, p, ev), &v);
	return v;
}

static int64_t
free_now(dv_device *d)
{
	int64_t f = 0, t = 0;
	od_error err;

	assert_int_equal(dv_mem_info(d, &f, &t, &err), DV_OK);
	return f;
}

/* Pages, as on a GPU: a block freed between two live ones and the free
 * space beyond serve one cudaMalloc together; the `contiguous` control
 * (the one-range model) refuses it, which is what made the old
 * fragmentation replay pass for the wrong reason. */
static void
test_fake_pages(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("total=100MiB,context=0", &spec);
	od_error err;
	int a, b, c, big, m, chunks;

	(void)state;
	assert_int_equal(dv_alloc(d, 20 * MIB, &a, &err), DV_OK);
	assert_int_equal(dv_alloc(d, 30 * MIB, &b, &err), DV_OK);
	assert_int_equal(dv_alloc(d, 20 * MIB, &c, &err), DV_OK);
	dv_free(d, b);
	/* 60 MiB free, in pieces of 30 and 30: 40 MiB fit all the same. */
	assert_int_equal(free_now(d), 60 * MIB);
	assert_int_equal(dv_alloc(d, 40 * MIB, &big, &err), DV_OK);
	assert_int_equal(free_now(d), 20 * MIB);
	/* No more than what is free, contiguous or not. */
	assert_int_equal(dv_alloc(d, 22 * MIB, &m, &err), DV_OOM);
	dv_free(d, big);
	assert_int_equal(dv_vmm_map(d, 40 * MIB, 2 * MIB, &m, &chunks, &err),
	    DV_OK);
	assert_int_equal(chunks, 20);
	assert_int_equal(free_now(d), 20 * MIB);
	dv_free(d, m);
	dv_close(d);

	/* The control: one range per cudaMalloc. */
	d = fake("total=100MiB,context=0,contiguous=yes", &spec);
	assert_int_equal(dv_alloc(d, 20 * MIB, &a, &err), DV_OK);
	assert_int_equal(dv_alloc(d, 30 * MIB, &b, &err), DV_OK);
	assert_int_equal(dv_alloc(d, 20 * MIB, &c, &err), DV_OK);
	dv_free(d, b);
	assert_int_equal(dv_alloc(d, 40 * MIB, &big, &err), DV_OOM);
	assert_int_equal(dv_vmm_map(d, 40 * MIB, 2 * MIB, &m, &chunks, &err),
	    DV_OK);
	dv_free(d, m);
	dv_free(d, c);
	assert_int_equal(dv_alloc(d, 80 * MIB, &big, &err), DV_OK);
	dv_close(d);
}

/* Nothing past the cap is asked of the device; everything is given back
 * by dv_free_from and dv_close. */
static void
test_cap_and_release(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("total=1GiB,context=0", &spec);
	od_error err;
	int id, i;

	(void)state;
	dv_set_cap(d, 100 * MIB);
	assert_int_equal(dv_alloc(d, 60 * MIB, &id, &err), DV_OK);
	assert_int_equal(dv_alloc(d, 60 * MIB, &id, &err), DV_CAP);
	assert_int_equal(id, -1);
	assert_int_equal(dv_held(d), 60 * MIB);
	assert_int_equal(free_now(d), 1 * GIB - 60 * MIB);
	for (i = 0; i < 20; i++)
		assert_int_equal(dv_alloc(d, 2 * MIB, &id, &err), DV_OK);
	assert_int_equal(dv_held(d), 100 * MIB);
	dv_free_from(d, 0);
	assert_int_equal(dv_held(d), 0);
	assert_int_equal(free_now(d), 1 * GIB);
	assert_int_equal(dv_peak(d), 100 * MIB);
	/* A stop refuses new allocations. */
	dv_request_stop(15);
	assert_int_equal(dv_alloc(d, 2 * MIB, &id, &err), DV_STOPPED);
	dv_clear_stop();
	assert_int_equal(dv_alloc(d, 2 * MIB, &id, &err), DV_OK);
	dv_close(d);
}

static void
test_fake_settings(void **state)
{
	dv_fake_spec spec;
	od_error err;

	(void)state;
	dv_fake_default(&spec);
	assert_true(dv_fake_parse(&spec, "total=40GiB,proc=12:10GiB,"
	    "proc=13:1GiB,vmm=no,bandwidth=0.5", &err));
	assert_int_equal(spec.total, 40 * GIB);
	assert_int_equal(spec.nprocs, 2);
	assert_int_equal(spec.procs[1].pid, 13);
	assert_false(spec.vmm);
	assert_false(dv_fake_parse(&spec, "colour=red", &err));
	assert_non_null(strstr(err.msg, "unknown fake-device setting 'colour'"));
	assert_false(dv_fake_parse(&spec, "total=lots", &err));
	assert_non_null(strstr(err.msg, "bad value 'lots'"));
	assert_false(dv_fake_parse(&spec, "bandwidth=2", &err));
	assert_false(dv_fake_parse(&spec, "vmm", &err));
	/* More processes than the device holds do not open. */
	{
		dv_config cfg;
		dv_status st;

		dv_fake_default(&spec);
		assert_true(dv_fake_parse(&spec, "total=1GiB,proc=1:2GiB", &err));
		memset(&cfg, 0, sizeof cfg);
		cfg.fake = &spec;
		assert_null(dv_open("fake", &cfg, &st, &err));
		assert_int_equal(st, DV_ERROR);
		assert_null(dv_open("tpu", &cfg, &st, &err));
		assert_non_null(strstr(err.msg, "unknown backend"));
	}
}

/* The fragmentation probe on a GPU-like device: with the holes held
 * both ways fail (less than the request is free, the log's arithmetic),
 * after the release both fit; never a confirmation, and the sentence
 * sends to --snapshot.  The control, a device that needs contiguous
 * memory, is the one that made the old replay "confirm": now it says so
 * and still confirms nothing. */
static void
test_fragmentation_controls(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("total=80GiB", &spec);
	pb_session *s = session(d, 100, false);
	od_event ev;
	pb_verdict v;
	const pb_result *r;

	(void)state;
	event(&ev, 2 * GIB, 80 * GIB, 1 * GIB, 70 * GIB, 7 * GIB);
	v = judge(s, PB_FRAGMENTATION, "fragmentation", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	r = v.result;
	assert_true(r->ran);
	assert_int_equal(r->malloc_st, DV_OOM);
	assert_int_equal(r->vmm_held_st, DV_OOM);
	assert_int_equal(r->malloc_rel_st, DV_OK);
	assert_int_equal(r->vmm_st, DV_OK);
	assert_int_equal(r->holes, 4);
	assert_true(r->holes_total >= 7 * GIB);
	assert_true(r->free_left <= 1 * GIB);
	assert_true(r->free_released >= r->free_left + r->holes_total);
	assert_non_null(strstr(v.summary, "cannot show fragmentation"));
	assert_non_null(strstr(v.summary, "--snapshot"));
	assert_null(strstr(v.summary, "contiguous"));
	/* The same figures again: the same run. */
	assert_ptr_equal(pb_run(s, PB_FRAGMENTATION, &ev), r);
	assert_int_equal(dv_held(d), 0);
	assert_true(r->act.available);
	assert_int_equal(r->act.allocs, r->act.releases);
	pb_session_free(s);
	dv_close(d);

	/* The control device: cudaMalloc fails after the release where the
	 * mapping fits; still inconclusive. */
	d = fake("total=80GiB,contiguous=yes", &spec);
	s = session(d, 100, false);
	v = judge(s, PB_FRAGMENTATION, "fragmentation", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_int_equal(v.result->malloc_rel_st, DV_OOM);
	assert_int_equal(v.result->vmm_st, DV_OK);
	assert_non_null(strstr(v.summary, "needed contiguous memory"));
	pb_session_free(s);
	dv_close(d);

	/* A snapshot joined to the event: the sentence gives its verdict. */
	d = fake("total=80GiB", &spec);
	s = session(d, 100, false);
	ev.snap.present = true;
	ev.snap.verdict = OD_SNAP_CONFIRMED;
	v = judge(s, PB_FRAGMENTATION, "fragmentation", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_non_null(strstr(v.summary, "snapshot joined to this event "
	    "confirms"));
	pb_session_free(s);
	dv_close(d);
}

/* No VMM, or a cap too low for the replay: inconclusive, saying why. */
static void
test_fragmentation_inconclusive(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("total=80GiB,vmm=no", &spec);
	pb_session *s = session(d, 100, false);
	od_event ev;
	pb_verdict v;

	(void)state;
	event(&ev, 2 * GIB, 80 * GIB, 1 * GIB, 70 * GIB, 7 * GIB);
	v = judge(s, PB_FRAGMENTATION, "fragmentation", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_int_equal(v.result->vmm_st, DV_UNSUPPORTED);
	assert_non_null(strstr(v.summary, "mapped: not supported"));
	pb_session_free(s);
	dv_close(d);

	d = fake("total=80GiB", &spec);
	s = session(d, 90, false);
	v = judge(s, PB_FRAGMENTATION, "fragmentation", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_non_null(strstr(v.summary, "--max-memory"));
	assert_int_equal(dv_peak(d), 0);
	pb_session_free(s);
	dv_close(d);
}

/* Another process holding 60 % of the GPU confirms foreign_process; a
 * GPU with nobody else on it leaves it open. */
static void
test_processes(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("total=80GiB,proc=4242:48GiB", &spec);
	pb_session *s = session(d, 90, false);
	od_event ev;
	pb_verdict v;

	(void)state;
	event(&ev, 2 * GIB, 80 * GIB, 1 * GIB, 30 * GIB, 1 * GIB);
	ev.mem.procs[0].pid = 4242;
	ev.mem.procs[0].bytes = 48 * GIB;
	ev.mem.nprocs = 1;
	v = judge(s, PB_PROCESSES, "foreign_process", &ev);
	assert_int_equal(v.outcome, PB_CONFIRMED);
	assert_non_null(strstr(v.summary, "4242"));
	/* A process the log does not name, holding 60 %, also confirms. */
	ev.mem.nprocs = 0;
	v = judge(s, PB_PROCESSES, "foreign_process", &ev);
	assert_int_equal(v.outcome, PB_CONFIRMED);
	assert_non_null(strstr(v.summary, "60%"));
	/* The capacity verdict does not blame the batch for their memory. */
	v = judge(s, PB_FITS_NOW, "capacity", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_non_null(strstr(v.summary, "other processes hold"));
	pb_session_free(s);
	dv_close(d);

	d = fake("total=80GiB", &spec);
	s = session(d, 90, false);
	ev.mem.nprocs = 1;
	v = judge(s, PB_PROCESSES, "foreign_process", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_non_null(strstr(v.summary, "No other process"));
	pb_session_free(s);
	dv_close(d);

	/* Without NVML nobody can tell. */
	d = fake("total=80GiB,nvml=no", &spec);
	s = session(d, 90, false);
	v = judge(s, PB_PROCESSES, "foreign_process", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_non_null(strstr(v.summary, "NVML"));
	pb_session_free(s);
	dv_close(d);
}

/* Refused: with others on the GPU and no --force, only NVML is read. */
static void
test_read_only(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("total=80GiB,proc=7:10GiB,ecc_uncorrected=2",
	    &spec);
	pb_session *s = session(d, 90, true);
	od_event ev;
	pb_verdict v;

	(void)state;
	event(&ev, 2 * GIB, 80 * GIB, 1 * GIB, 70 * GIB, 7 * GIB);
	v = judge(s, PB_FRAGMENTATION, "fragmentation", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_non_null(strstr(v.summary, "--force"));
	v = judge(s, PB_FITS_NOW, "capacity", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	/* The counters need no context: they still confirm a fault. */
	v = judge(s, PB_HEALTH, "hardware_fault", &ev);
	assert_int_equal(v.outcome, PB_CONFIRMED);
	assert_non_null(strstr(v.summary, "2 uncorrectable ECC"));
	assert_false(v.result->pat_ran);
	assert_false(pb_session_started(s));
	assert_int_equal(dv_peak(d), 0);
	pb_session_free(s);
	dv_close(d);
}

static void
test_fits_now(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("total=80GiB", &spec);
	pb_session *s = session(d, 100, false);
	od_event ev;
	pb_verdict v;

	(void)state;
	/* 78 + 4 GiB on an 80 GiB device: capacity. */
	event(&ev, 4 * GIB, 80 * GIB, 100 * MIB, 78 * GIB, 100 * MIB);
	v = judge(s, PB_FITS_NOW, "capacity", &ev);
	assert_int_equal(v.outcome, PB_CONFIRMED);
	/* 30 + 2 GiB fits: not capacity alone. */
	event(&ev, 2 * GIB, 80 * GIB, 100 * MIB, 30 * GIB, 100 * MIB);
	v = judge(s, PB_FITS_NOW, "capacity", &ev);
	assert_int_equal(v.outcome, PB_REFUTED);
	assert_true(v.result->fit);
	/* ... but on a GPU of another size that says nothing. */
	ev.mem.total = 40 * GIB;
	v = judge(s, PB_FITS_NOW, "capacity", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	/* A fraction of 30 GiB stopped 32 GiB that fits the device. */
	ev.mem.total = 80 * GIB;
	ev.mem.allowed = 30 * GIB;
	v = judge(s, PB_FITS_NOW, "memory_fraction_limit", &ev);
	assert_int_equal(v.outcome, PB_CONFIRMED);
	ev.mem.allowed = 40 * GIB;
	v = judge(s, PB_FITS_NOW, "memory_fraction_limit", &ev);
	assert_int_equal(v.outcome, PB_REFUTED);
	/* Beyond the device, the fraction was not the problem. */
	event(&ev, 4 * GIB, 80 * GIB, 100 * MIB, 78 * GIB, 100 * MIB);
	ev.mem.allowed = 60 * GIB;
	v = judge(s, PB_FITS_NOW, "memory_fraction_limit", &ev);
	assert_int_equal(v.outcome, PB_REFUTED);
	/* No figures: it cannot run. */
	event(&ev, OD_UNKNOWN, OD_UNKNOWN, OD_UNKNOWN, OD_UNKNOWN, OD_UNKNOWN);
	v = judge(s, PB_FITS_NOW, "capacity", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_false(v.result->ran);
	assert_int_equal(dv_held(d), 0);
	pb_session_free(s);
	dv_close(d);
}

/* Scaled to the cap: a target above it is decided by the free memory, or
 * left open, and the verdict says so. */
static void
test_fits_scaled(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("total=80GiB", &spec);
	pb_session *s = session(d, 50, false);
	od_event ev;
	pb_verdict v;

	(void)state;
	event(&ev, 2 * GIB, 80 * GIB, 100 * MIB, 50 * GIB, 100 * MIB);
	v = judge(s, PB_FITS_NOW, "capacity", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_true(v.result->scaled);
	assert_non_null(strstr(v.summary, "--max-memory"));
	assert_true(dv_peak(d) <= dv_cap(d));
	pb_session_free(s);
	dv_close(d);
}

static void
test_largest_allocation(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("total=80GiB", &spec);
	pb_session *s = session(d, 90, false);
	od_event ev;
	pb_verdict v;

	(void)state;
	event(&ev, 3725LL * GIB, 80 * GIB, 60 * GIB, 18 * GIB, 20 * MIB);
	v = judge(s, PB_LARGEST_ALLOCATION, "request_exceeds_device", &ev);
	assert_int_equal(v.outcome, PB_CONFIRMED);
	assert_true(v.result->largest > 60 * GIB);
	assert_true(v.result->largest <= dv_cap(d));
	event(&ev, 10 * GIB, 80 * GIB, 60 * GIB, 18 * GIB, 20 * MIB);
	v = judge(s, PB_LARGEST_ALLOCATION, "request_exceeds_device", &ev);
	assert_int_equal(v.outcome, PB_REFUTED);
	/* Above the cap but within the device: open. */
	event(&ev, 75 * GIB, 80 * GIB, 60 * GIB, 18 * GIB, 20 * MIB);
	v = judge(s, PB_LARGEST_ALLOCATION, "request_exceeds_device", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_true(v.result->largest_at_cap);
	pb_session_free(s);
	dv_close(d);

	/* A split device: the largest block is below the request. */
	d = fake("total=10GiB,context=0,proc=1:3GiB", &spec);
	s = session(d, 100, false);
	event(&ev, 8 * GIB, 8 * GIB, 7 * GIB, 0, 0);
	v = judge(s, PB_LARGEST_ALLOCATION, "request_exceeds_device", &ev);
	assert_int_equal(v.outcome, PB_CONFIRMED);
	assert_int_equal(v.result->largest, 7 * GIB);
	pb_session_free(s);
	dv_close(d);
}

static void
test_context_cost(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("context=500MiB", &spec);
	pb_session *s = session(d, 90, false);
	od_event ev;
	pb_verdict v;

	(void)state;
	/* A shortfall of 1 GiB (2 GiB asked, 1 GiB free). */
	event(&ev, 2 * GIB, 80 * GIB, 1 * GIB, 70 * GIB, 1 * GIB);
	ev.mem.non_framework = 4 * GIB;
	v = judge(s, PB_CONTEXT_COST, "non_framework_memory", &ev);
	assert_int_equal(v.outcome, PB_CONFIRMED);
	assert_int_equal(v.result->context, 500 * MIB);
	assert_non_null(strstr(v.summary, "bare CUDA context with lazy "
	    "loading"));
	assert_non_null(strstr(v.summary, "1024.00 MiB shortfall"));
	/* The control: the same 3.5 GiB beyond the context, against a
	 * shortfall of 6 GiB, does not explain it (no fixed threshold). */
	ev.mem.requested = 7 * GIB;
	v = judge(s, PB_CONTEXT_COST, "non_framework_memory", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_non_null(strstr(v.summary, "6.00 GiB shortfall"));
	ev.mem.requested = 2 * GIB;
	/* The context's own driver allocation is what CUPTI saw. */
	assert_true(v.result->act.available);
	assert_int_equal(v.result->act.allocs, 1);
	ev.mem.non_framework = 560 * MIB;
	v = judge(s, PB_CONTEXT_COST, "non_framework_memory", &ev);
	assert_int_equal(v.outcome, PB_REFUTED);
	ev.mem.non_framework = OD_UNKNOWN;
	v = judge(s, PB_CONTEXT_COST, "non_framework_memory", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	pb_session_free(s);
	dv_close(d);

	d = fake("nvml=no,cupti=no", &spec);
	s = session(d, 90, false);
	ev.mem.non_framework = 4 * GIB;
	v = judge(s, PB_CONTEXT_COST, "non_framework_memory", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_non_null(strstr(v.summary, "NVML"));
	assert_false(v.result->act.available);
	pb_session_free(s);
	dv_close(d);
}

/* A measurement of r by key, or NULL. */
static const pb_meas *
meas(const pb_result *r, const char *key)
{
	int i;

	for (i = 0; i < r->nm; i++)
		if (strcmp(r->m[i].key, key) == 0)
			return &r->m[i];
	return NULL;
}

/* The interpreter's line: a reading, its errors, and what is not one. */
static void
test_torch_parse(void **state)
{
	static const char *const bad[] = {
		"",
		"oomdoc-torch-baseline 2 pid=1 free=1 total=2",
		"pid=1 free=1 total=2",
		"oomdoc-torch-baseline 1 pid=1 free=3 total=2",
		"oomdoc-torch-baseline 1 pid=0 free=1 total=2",
		"oomdoc-torch-baseline 1 pid=1 total=2",
		"oomdoc-torch-baseline 1 pid=1 free=-1 total=2",
		"oomdoc-torch-baseline 1 pid=1 free=1 total=99999999999999999999",
		"oomdoc-torch-baseline 1 pid=1 free=1 total=2 torch=$(rm)",
		"oomdoc-torch-baseline 1 pid=1 free=1 total=2 junk",
		"oomdoc-torch-baseline 1 pid=1 free=1 total=2 torch=" "0123456789"
		    "0123456789012345678901234567890123456789",
	};
	tb_reading t;
	size_t i;

	(void)state;
	assert_true(tb_parse("oomdoc-torch-baseline 1 pid=4242 torch=2.5.1 "
	    "cuda=12.4 free=1000 total=2000 loading=LAZY future=x\n", &t));
	assert_int_equal(t.pid, 4242);
	assert_int_equal(t.free_b, 1000);
	assert_int_equal(t.total, 2000);
	assert_string_equal(t.torch, "2.5.1");
	assert_string_equal(t.cuda, "12.4");
	assert_string_equal(t.loading, "LAZY");
	assert_false(tb_parse("oomdoc-torch-baseline 1 error=no-torch\n", &t));
	assert_non_null(strstr(t.note, "no PyTorch"));
	assert_false(tb_parse("oomdoc-torch-baseline 1 error=no-cuda\n", &t));
	assert_non_null(strstr(t.note, "could not start CUDA"));
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (tb_parse(bad[i], &t) || t.note[0] == '\0')
			fail_msg("accepted: %s", bad[i]);
}

/* The context's verdict against an empty PyTorch process (a stand-in
 * interpreter prints what the real script prints), beside the bare
 * context: memory that a bare context leaves unexplained but PyTorch's
 * own context explains is not confirmed, as it would be against the bare
 * context alone (the control). */
static void
test_torch_baseline(void **state)
{
	static const struct {
		int64_t non_framework, requested;
		pb_outcome bare, torch;
		const char *says;
	} cases[] = {
		/* 1.2 GiB outside, a 1 GiB shortfall: PyTorch's own. */
		{ 1229 * MIB, 2 * GIB, PB_INCONCLUSIVE, PB_REFUTED,
		  "about what an empty PyTorch process" },
		/* 2.3 GiB, a 1.5 GiB shortfall: beyond a bare context it
		 * would cover it, beyond PyTorch's own it does not. */
		{ 2355 * MIB, 2560 * MIB, PB_CONFIRMED, PB_INCONCLUSIVE,
		  "beyond PyTorch's own, less than the 1.50 GiB shortfall" },
		/* 4 GiB, a 1 GiB shortfall: confirmed against both. */
		{ 4 * GIB, 2 * GIB, PB_CONFIRMED, PB_CONFIRMED,
		  "so 3.02 GiB came from" },
	};
	char envout[] = "/tmp/oomdoc-torch-env-XXXXXX", vis[128];
	dv_fake_spec spec;
	od_event ev;
	size_t i;
	int fd;
	FILE *f;

	(void)state;
	fd = mkstemp(envout);
	assert_true(fd >= 0);
	close(fd);
	/* The fake: 80 GiB, a 500 MiB context; the interpreter's context
	 * takes 1000 MiB more. */
	assert_int_equal(setenv("FAKE_TORCH_FREE", "84326481920", 1), 0);
	assert_int_equal(setenv("FAKE_TORCH_TOTAL", "85899345920", 1), 0);
	assert_int_equal(setenv("FAKE_TORCH_ENV_OUT", envout, 1), 0);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int pass;

		for (pass = 0; pass < 2; pass++) {
			dv_device *d = fake(NULL, &spec);
			pb_opts o;
			pb_session *s;
			pb_verdict v;

			memset(&o, 0, sizeof o);
			o.cap = -1;
			o.torch_python = pass ? OOMDOC_TEST_FAKE_TORCH : NULL;
			s = pb_session_new(d, &o);
			event(&ev, cases[i].requested, 80 * GIB, 1 * GIB,
			    70 * GIB, 1 * GIB);
			ev.mem.non_framework = cases[i].non_framework;
			v = judge(s, PB_CONTEXT_COST, "non_framework_memory",
			    &ev);
			if (v.outcome != (pass ? cases[i].torch :
			    cases[i].bare) || (pass && strstr(v.summary,
			    cases[i].says) == NULL))
				fail_msg("case %zu, %s: %s: %s", i, pass ?
				    "torch" : "bare", pb_outcome_name(v.outcome),
				    v.summary);
			if (pass) {
				assert_int_equal(v.result->torch_context,
				    1000 * MIB);
				assert_non_null(strstr(v.summary, "bare CUDA "
				    "context with lazy loading"));
				assert_non_null(strstr(v.result->torch_baseline,
				    "torch 2.5.1, CUDA 12.4"));
			} else {
				assert_int_equal(v.result->torch_context, -1);
			}
			pb_session_free(s);
			dv_close(d);
		}
	}
	/* The interpreter ran on the GPU probed, by its UUID. */
	f = fopen(envout, "r");
	assert_non_null(f);
	assert_non_null(fgets(vis, sizeof vis, f));
	fclose(f);
	assert_string_equal(vis, "GPU-fa4e0000-0000-4000-8000-000000000000\n");
	unlink(envout);
	/* No PyTorch, or an interpreter that says nothing: the bare
	 * baseline alone, with why. */
	assert_int_equal(setenv("FAKE_TORCH_LINE", "error=no-torch", 1), 0);
	{
		dv_device *d = fake(NULL, &spec);
		pb_opts o;
		pb_session *s;
		const pb_result *r;
		const pb_meas *m;

		memset(&o, 0, sizeof o);
		o.cap = -1;
		o.torch_python = OOMDOC_TEST_FAKE_TORCH;
		s = pb_session_new(d, &o);
		r = pb_run(s, PB_CONTEXT_COST, NULL);
		assert_true(r->ran);
		assert_int_equal(r->torch_context, -1);
		m = meas(r, "torch_baseline_note");
		assert_non_null(m);
		assert_non_null(strstr(m->s, "no PyTorch"));
		pb_session_free(s);
		dv_close(d);
	}
	unsetenv("FAKE_TORCH_LINE");
	assert_int_equal(setenv("FAKE_TORCH_SILENT", "1", 1), 0);
	{
		dv_device *d = fake(NULL, &spec);
		pb_opts o;
		pb_session *s;
		const pb_result *r;

		memset(&o, 0, sizeof o);
		o.cap = -1;
		o.torch_python = OOMDOC_TEST_FAKE_TORCH;
		s = pb_session_new(d, &o);
		r = pb_run(s, PB_CONTEXT_COST, NULL);
		assert_int_equal(r->torch_context, -1);
		assert_non_null(strstr(meas(r, "torch_baseline_note")->s,
		    "without a reading"));
		pb_session_free(s);
		dv_close(d);
	}
	unsetenv("FAKE_TORCH_SILENT");
	unsetenv("FAKE_TORCH_FREE");
	unsetenv("FAKE_TORCH_TOTAL");
	unsetenv("FAKE_TORCH_ENV_OUT");
}

/* Health: each fault confirms, a clean device refutes (narrowly), slow
 * memory and missing counters leave it open. */
static void
test_health(void **state)
{
	static const struct {
		const char *settings;
		pb_outcome want;
		const char *says;
	} cases[] = {
		{ "pattern_errors=3", PB_CONFIRMED, "3 wrong word" },
		{ "ecc_uncorrected=1", PB_CONFIRMED, "uncorrectable ECC" },
		{ "remap_pending=yes", PB_CONFIRMED, "pending" },
		{ "remap_failure=yes", PB_CONFIRMED, "failed" },
		{ "coupling=8192:16384:5", PB_CONFIRMED,
		  "static patterns 0, moving inversions 2, random 0" },
		{ "ecc_fault=yes", PB_CONFIRMED,
		  "CUDA_ERROR_ECC_UNCORRECTABLE" },
		{ NULL, PB_REFUTED, "These checks pass now" },
		{ NULL, PB_REFUTED, "dcgmi diag -r 2" },
		{ "name=NVIDIA H100 80GB HBM3,bandwidth=0.5", PB_INCONCLUSIVE,
		  "bandwidth is only 58% of the 2.97 TB/s an NVIDIA H100 80GB "
		  "HBM3 reaches" },
		{ "name=NVIDIA H100 80GB HBM3", PB_REFUTED,
		  "triad bandwidth at 101% of the 2.97 TB/s" },
		/* A part with no published triad: judged against the share
		 * of its data sheet peak, and the verdict says so. */
		{ "name=NVIDIA A100 80GB PCIe,bandwidth=0.3", PB_INCONCLUSIVE,
		  "of the 1.61 TB/s taken for an NVIDIA A100 80GB PCIe (83% "
		  "of its data sheet peak of 1.94 TB/s, no triad being "
		  "published)" },
		{ "name=NVIDIA L4", PB_REFUTED, "of the 0.25 TB/s taken for an "
		  "NVIDIA L4 (83% of its data sheet peak of 0.30 TB/s" },
		/* The fake's default name is no part of the table. */
		{ "bandwidth=0.5", PB_REFUTED, "no reference for this part" },
		{ "nvml=no", PB_INCONCLUSIVE, "counters could not be read" },
		{ "delay_ms=600", PB_INCONCLUSIVE, "time limit" },
	};
	dv_fake_spec spec;
	od_event ev;
	size_t i;

	(void)state;
	event(&ev, OD_UNKNOWN, OD_UNKNOWN, OD_UNKNOWN, OD_UNKNOWN, OD_UNKNOWN);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		dv_device *d = fake_limit(cases[i].settings, &spec,
		    cases[i].settings != NULL && strstr(cases[i].settings,
		    "delay_ms") != NULL ? 0.1 : 10);
		pb_session *s = session(d, 90, false);
		pb_verdict v = judge(s, PB_HEALTH, "hardware_fault", &ev);

		if (v.outcome != cases[i].want ||
		    strstr(v.summary, cases[i].says) == NULL)
			fail_msg("%s: %s: %s", cases[i].settings ?
			    cases[i].settings : "(healthy)",
			    pb_outcome_name(v.outcome), v.summary);
		assert_int_equal(dv_held(d), 0);
		pb_session_free(s);
		dv_close(d);
	}
}

/*
 * The bandwidth table: a measured row is a triad below its peak and at
 * least BW_REF_PEAK_FRACTION of it, the smallest such share being that
 * fraction (so that the peak rows use what a measured part reaches); a
 * peak row is its peak times the fraction; names are whole and unique,
 * and a name from an old driver without "NVIDIA " finds its row.
 */
static void
test_bandwidth_ref(void **state)
{
	size_t n, i, j, npeak = 0;
	const bw_ref *t = bw_ref_table(&n);
	double least = 2;
	char basis[120];

	(void)state;
	assert_true(n >= 12);
	for (i = 0; i < n; i++) {
		assert_true(t[i].triad_bps > 0 && t[i].triad_bps < t[i].peak_bps);
		assert_non_null(t[i].source);
		assert_int_equal(strncmp(t[i].name, "NVIDIA ", 7), 0);
		for (j = 0; j < i; j++)
			assert_string_not_equal(t[i].name, t[j].name);
		assert_ptr_equal(bw_ref_find(t[i].name), &t[i]);
		assert_ptr_equal(bw_ref_find(t[i].name + 7), &t[i]);
		bw_ref_basis(&t[i], basis, sizeof basis);
		if (t[i].measured) {
			double share = t[i].triad_bps / t[i].peak_bps;

			assert_true(share >= BW_REF_PEAK_FRACTION);
			if (share < least)
				least = share;
			assert_string_equal(basis,
			    "what it reaches in BabelStream");
		} else {
			npeak++;
			assert_true(t[i].triad_bps == t[i].peak_bps *
			    BW_REF_PEAK_FRACTION);
			assert_non_null(strstr(t[i].how, "peak times 0.83"));
			assert_non_null(strstr(basis, "83% of its data sheet "
			    "peak"));
		}
	}
	/* The fraction is the least measured share, rounded down. */
	assert_true(least - BW_REF_PEAK_FRACTION < 0.01);
	assert_true(npeak > 0 && npeak < n);
	/* The parts the issue names, as NVML names them. */
	assert_non_null(bw_ref_find("NVIDIA H100 PCIe"));
	assert_non_null(bw_ref_find("NVIDIA H100 NVL"));
	assert_non_null(bw_ref_find("NVIDIA A100-SXM4-40GB"));
	assert_non_null(bw_ref_find("NVIDIA A100-PCIE-40GB"));
	assert_non_null(bw_ref_find("NVIDIA L40S"));
	assert_non_null(bw_ref_find("NVIDIA B200"));
	/* Whole names only: no row for a prefix, a longer name, another
	 * part, or a name that is only the prefix. */
	assert_null(bw_ref_find("NVIDIA H100"));
	assert_null(bw_ref_find("NVIDIA L40"));
	assert_null(bw_ref_find("NVIDIA H200 "));
	assert_null(bw_ref_find("NVIDIA GeForce RTX 4090"));
	assert_null(bw_ref_find("NVIDIA "));
	assert_null(bw_ref_find(""));
	assert_null(bw_ref_find(NULL));
}

/* The identity check: the MIG instance named, CUDA's device and NVML's
 * must be one; what could not be checked is said, never passed over. */
static void
test_identity(void **state)
{
	const char *m0 = "MIG-fa4e0000-0000-4000-8000-000000000100";
	const char *m1 = "MIG-fa4e0000-0000-4000-8000-000000000101";
	const char *g0 = "GPU-fa4e0000-0000-4000-8000-000000000000";
	char note[240];
	od_error err;

	(void)state;
	memset(&err, 0, sizeof err);
	assert_int_equal(dv_check_identity("", g0, g0, note, sizeof note,
	    &err), DV_OK);
	assert_non_null(strstr(note, "agree"));
	/* Case is not identity: nvidia-smi prints lower case. */
	assert_int_equal(dv_check_identity(m0, "MIG-FA4E0000-0000-4000-8000-"
	    "000000000100", m0, note, sizeof note, &err), DV_OK);
	assert_int_equal(dv_check_identity("", g0, m0, note, sizeof note,
	    &err), DV_UNSUPPORTED);
	assert_non_null(strstr(err.msg, "but NVML's is"));
	/* The instance named is checked even without NVML. */
	assert_int_equal(dv_check_identity(m1, m0, "", note, sizeof note,
	    &err), DV_UNSUPPORTED);
	assert_non_null(strstr(err.msg, "not the MIG instance named"));
	assert_int_equal(dv_check_identity(m1, m1, "", note, sizeof note,
	    &err), DV_OK);
	assert_non_null(strstr(note, "not cross-checked with NVML"));
	assert_int_equal(dv_check_identity(m1, "", m1, note, sizeof note,
	    &err), DV_OK);
	assert_non_null(strstr(note, "not cross-checked: the driver gives no "
	    "UUID"));
	assert_non_null(strstr(note, "cuDeviceGetUuid_v2"));
}

/* The memory test of settings over 64 MiB with seed: what it found. */
static dv_pattern
pattern_run(const char *settings, uint64_t seed)
{
	dv_fake_spec spec;
	dv_device *d = fake(settings, &spec);
	dv_pattern out;
	int64_t ctx;
	od_error err;
	int id;

	memset(&err, 0, sizeof err);
	assert_int_equal(dv_start(d, &ctx, &err), DV_OK);
	assert_int_equal(dv_alloc(d, 64LL << 20, &id, &err), DV_OK);
	memset(&out, 0, sizeof out);
	out.seed = seed;
	assert_int_equal(dv_pattern_test(d, id, &out, &err), DV_OK);
	assert_true(out.seed == seed);
	assert_int_equal(out.kind_passes[DV_PT_STATIC], DV_PT_PASSES_STATIC);
	assert_int_equal(out.kind_passes[DV_PT_MOVING], DV_PT_PASSES_MOVING);
	assert_int_equal(out.kind_passes[DV_PT_RANDOM], DV_PT_PASSES_RANDOM);
	assert_int_equal(out.errors, out.kind_errors[DV_PT_STATIC] +
	    out.kind_errors[DV_PT_MOVING] + out.kind_errors[DV_PT_RANDOM]);
	dv_close(d);
	return out;
}

/*
 * Each kind of memory test against the faults the fake injects by what
 * is written: a stuck bit shows to the static patterns and to moving
 * inversions (each writes both values of every bit), and to the random
 * pattern for some seeds and not others; a coupling fault (a write to
 * one word flips a bit of a word above it) only to moving inversions,
 * since the other passes rewrite the victim after the aggressor and
 * before reading it.  A healthy buffer reads back clean.
 */
static void
test_pattern_kinds(void **state)
{
	dv_pattern p;
	int found = 0, missed = 0;
	uint64_t seed;

	(void)state;
	p = pattern_run(NULL, 7);
	assert_int_equal(p.errors, 0);
	assert_int_equal(p.nbad, 0);
	/* Stuck at 1: zeros, 0x55..., the address (bit 3 clear at a 4 KiB
	 * boundary) read it wrong; moving inversions twice per value. */
	p = pattern_run("stuck_bit=4096:3:1", 7);
	assert_int_equal(p.kind_errors[DV_PT_STATIC], 3);
	assert_int_equal(p.kind_errors[DV_PT_MOVING], 4);
	assert_int_equal(p.nbad > 0, 1);
	for (seed = 1; seed <= 16; seed++) {
		p = pattern_run("stuck_bit=4096:3:1", seed);
		if (p.kind_errors[DV_PT_RANDOM] > 0)
			found++;
		else
			missed++;
		/* The same seed, the same values. */
		assert_int_equal(pattern_run("stuck_bit=4096:3:1",
		    seed).kind_errors[DV_PT_RANDOM],
		    p.kind_errors[DV_PT_RANDOM]);
	}
	assert_true(found > 0 && missed > 0);
	p = pattern_run("coupling=8192:16384:5", 7);
	assert_int_equal(p.kind_errors[DV_PT_STATIC], 0);
	assert_int_equal(p.kind_errors[DV_PT_RANDOM], 0);
	assert_true(p.kind_errors[DV_PT_MOVING] > 0);
	/* The victim's address is the one reported. */
	assert_int_equal(p.nbad, (int)p.errors);
	/* Outside the tested buffer, no fault shows. */
	p = pattern_run("coupling=8192:134217728:5", 7);
	assert_int_equal(p.errors, 0);
}

/* The counters read before and after the health test: a rise of the
 * uncorrected count, of the rows remapped for uncorrectable errors or a
 * remap that became pending confirms a fault; a rise of the corrected
 * ones is a warning with its numbers; counters the part lacks are said
 * to be not supported, never 0.  The control: in a read-only session the
 * memory is not exercised, so the injected rise does not come. */
static void
test_health_counters(void **state)
{
	static const struct {
		const char *settings;
		pb_outcome want;
		const char *says;
	} cases[] = {
		{ "ecc_uncorrected_rise=2", PB_CONFIRMED,
		  "uncorrectable ECC count rose from 0 to 2 during" },
		{ "ecc_uncorrected=1,ecc_uncorrected_rise=2", PB_CONFIRMED,
		  "rose from 1 to 3 during" },
		{ "remapped_rise=1", PB_CONFIRMED,
		  "uncorrectable errors rose from 0 to 1" },
		{ "remap_pending_rise=yes", PB_CONFIRMED,
		  "became pending during the health test" },
		{ "ecc_corrected=4,ecc_corrected_rise=5", PB_REFUTED,
		  "Warning: the corrected ECC count rose from 4 to 9" },
		{ "remapped_correctable_rise=2", PB_REFUTED,
		  "correctable errors rose from 0 to 2" },
		{ "ecc=no", PB_REFUTED, "ECC counters not supported, no pending" },
		{ "remap_rows=no", PB_REFUTED,
		  "no uncorrectable ECC errors, remapped-row counters not "
		  "supported" },
		{ "ecc=no,remap_rows=no", PB_INCONCLUSIVE,
		  "counters could not be read" },
	};
	dv_fake_spec spec;
	od_event ev;
	size_t i;

	(void)state;
	event(&ev, OD_UNKNOWN, OD_UNKNOWN, OD_UNKNOWN, OD_UNKNOWN, OD_UNKNOWN);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		dv_device *d = fake(cases[i].settings, &spec);
		pb_session *s = session(d, 90, false);
		pb_verdict v = judge(s, PB_HEALTH, "hardware_fault", &ev);

		if (v.outcome != cases[i].want ||
		    strstr(v.summary, cases[i].says) == NULL)
			fail_msg("%s: %s: %s", cases[i].settings,
			    pb_outcome_name(v.outcome), v.summary);
		assert_true(v.result->health_after_ran);
		pb_session_free(s);
		dv_close(d);
	}
	/* Not supported is said, not 0. */
	{
		dv_device *d = fake("ecc=no,remap_rows=no", &spec);
		pb_session *s = session(d, 90, false);
		const pb_result *r = pb_run(s, PB_HEALTH, &ev);
		const pb_meas *m = meas(r, "ecc_corrected_volatile");

		assert_non_null(m);
		assert_int_equal(m->type, PM_STR);
		assert_string_equal(m->s, "not supported");
		m = meas(r, "remapped_rows_uncorrectable");
		assert_non_null(m);
		assert_string_equal(m->s, "not supported");
		assert_null(meas(r, "ecc_corrected_volatile_after"));
		assert_int_equal(r->health.ecc_corrected, OD_UNKNOWN);
		pb_session_free(s);
		dv_close(d);
	}
	/* The figures before and after, as measurements. */
	{
		dv_device *d = fake("ecc_corrected_rise=5", &spec);
		pb_session *s = session(d, 90, false);
		const pb_result *r = pb_run(s, PB_HEALTH, &ev);

		assert_int_equal(meas(r, "ecc_corrected_volatile")->i, 0);
		assert_int_equal(meas(r, "ecc_corrected_volatile_after")->i, 5);
		pb_session_free(s);
		dv_close(d);
	}
	/* The control: read-only, no test, so no rise and no verdict from
	 * one. */
	{
		dv_device *d = fake("ecc_uncorrected_rise=2,remap_pending_rise="
		    "yes", &spec);
		pb_session *s = session(d, 90, true);
		pb_verdict v = judge(s, PB_HEALTH, "hardware_fault", &ev);

		assert_int_not_equal(v.outcome, PB_CONFIRMED);
		assert_false(v.result->pat_ran);
		assert_null(strstr(v.summary, "rose"));
		pb_session_free(s);
		dv_close(d);
	}
}

/* Opens the fake node's device by id (or index), NULL with *st set. */
static dv_device *
fake_open(const char *settings, const char *id, int index,
    dv_fake_spec *spec, dv_status *st, od_error *err)
{
	dv_config cfg;

	memset(&cfg, 0, sizeof cfg);
	memset(err, 0, sizeof *err);
	dv_fake_default(spec);
	assert_true(dv_fake_parse(spec, settings, err));
	cfg.fake = spec;
	cfg.time_limit = 10;
	cfg.id = id;
	cfg.index = index;
	return dv_open("fake", &cfg, st, err);
}

/*
 * MIG by UUID: the selection (dv_select, what the CUDA backend sets
 * CUDA_VISIBLE_DEVICES to before cuInit) from --device or from the
 * process's CUDA_VISIBLE_DEVICES, and the fake's MIG layout found by it:
 * the instance's memory, its parent's counters.  The controls: a GPU's
 * UUID, a plain index list and the parent's PCI bus id select no
 * instance.
 */
static void
test_mig_selection(void **state)
{
	static const char i0[] = "MIG-fa4e0000-0000-4000-8000-000000000100";
	static const char i1[] = "MIG-fa4e0000-0000-4000-8000-000000000101";
	char vis[128];
	dv_selection sel;
	dv_fake_spec spec;
	od_error err;
	dv_status st;
	dv_device *d;
	const dv_info *info;
	pb_session *s;
	const pb_result *r;

	(void)state;
	dv_select(i1, 3, "0,1", &sel);
	assert_true(sel.mig);
	assert_false(sel.from_env);
	assert_string_equal(sel.uuid, i1);
	assert_int_equal(sel.cuda_index, 0);
	snprintf(vis, sizeof vis, "0, %s,2", i1);
	dv_select(NULL, 1, vis, &sel);
	assert_true(sel.mig);
	assert_true(sel.from_env);
	assert_string_equal(sel.uuid, i1);
	dv_select(NULL, 0, vis, &sel);
	assert_false(sel.mig);
	dv_select(NULL, 5, vis, &sel);
	assert_false(sel.mig);
	dv_select("GPU-fa4e0000-0000-4000-8000-000000000000", 0, vis, &sel);
	assert_false(sel.mig);
	dv_select(NULL, 0, NULL, &sel);
	assert_false(sel.mig);

	/* The second of two instances, by --device. */
	d = fake_open("mig=2,total=70GiB", i1, 0, &spec, &st, &err);
	assert_non_null(d);
	info = dv_info_of(d);
	assert_string_equal(info->uuid, i1);
	assert_string_equal(info->parent_uuid,
	    "GPU-fa4e0000-0000-4000-8000-000000000000");
	assert_int_equal(info->total, 10 * GIB);
	s = session(d, 90, false);
	r = pb_run(s, PB_HEALTH, NULL);
	assert_true(r->health.on_parent);
	assert_non_null(strstr(r->health.note, "parent GPU"));
	pb_session_free(s);
	dv_close(d);

	/* By CUDA_VISIBLE_DEVICES, as a Slurm or Kubernetes job gets it. */
	snprintf(vis, sizeof vis, "%s", i0);
	assert_int_equal(setenv("CUDA_VISIBLE_DEVICES", vis, 1), 0);
	d = fake_open("mig=2,total=70GiB", NULL, 0, &spec, &st, &err);
	assert_non_null(d);
	assert_string_equal(dv_info_of(d)->uuid, i0);
	assert_int_equal(dv_info_of(d)->total, 10 * GIB);
	dv_close(d);
	/* An instance the node lacks is refused, saying where it came
	 * from. */
	assert_int_equal(setenv("CUDA_VISIBLE_DEVICES",
	    "MIG-fa4e0000-0000-4000-8000-000000000105", 1), 0);
	d = fake_open("mig=2", NULL, 0, &spec, &st, &err);
	assert_null(d);
	assert_int_equal(st, DV_UNSUPPORTED);
	assert_non_null(strstr(err.msg, "CUDA_VISIBLE_DEVICES"));
	assert_int_equal(unsetenv("CUDA_VISIBLE_DEVICES"), 0);

	/* Controls: the parent's PCI bus id is the whole GPU. */
	d = fake_open("mig=2,total=70GiB", "00000000:18:00.0", 0, &spec, &st,
	    &err);
	assert_non_null(d);
	assert_string_equal(dv_info_of(d)->parent_uuid, "");
	assert_int_equal(dv_info_of(d)->total, 70 * GIB);
	dv_close(d);
	/* MIG off: no instance. */
	d = fake_open("gpus=1", i0, 0, &spec, &st, &err);
	assert_null(d);
	assert_non_null(strstr(err.msg, "no MIG instance"));
}

/* A kernel that overruns the time limit ends the session: later probes
 * do not run, and the session reports the device error. */
static void
test_timeout_ends_session(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake_limit("delay_ms=3000", &spec, 0.2);
	pb_session *s = session(d, 100, false);
	od_event ev;
	od_error err;
	pb_verdict v;

	(void)state;
	event(&ev, 2 * GIB, 80 * GIB, 1 * GIB, 70 * GIB, 7 * GIB);
	v = judge(s, PB_FRAGMENTATION, "fragmentation", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_int_equal(pb_session_failed(s, &err), DV_TIMEOUT);
	assert_non_null(strstr(err.msg, "time limit"));
	/* Nothing was freed or unmapped after the timeout: the mapping and
	 * the fill the kernel may still use stay taken. */
	assert_true(dv_timed_out(d));
	assert_true(v.result->act.releases < v.result->act.allocs);
	v = judge(s, PB_FITS_NOW, "capacity", &ev);
	assert_non_null(strstr(v.summary, "timed out earlier"));
	pb_session_free(s);
	dv_close(d);

	/* The control: the same probe without the delay releases all. */
	d = fake_limit(NULL, &spec, 0.2);
	s = session(d, 100, false);
	v = judge(s, PB_FRAGMENTATION, "fragmentation", &ev);
	assert_false(dv_timed_out(d));
	assert_int_equal(v.result->act.releases, v.result->act.allocs);
	pb_session_free(s);
	dv_close(d);
}

/* A session with force, and a share of the free memory. */
static pb_session *
session_forced(dv_device *d, int percent)
{
	pb_opts o;
	pb_session *s;

	memset(&o, 0, sizeof o);
	o.cap = -1;
	o.cap_percent = percent;
	o.force = true;
	s = pb_session_new(d, &o);
	assert_non_null(s);
	return s;
}

/* A tenant that comes during the third allocation is seen at the next
 * one: the session stops for safety and everything is released.  The
 * control without it runs the same probe to the end. */
static void
test_tenant_mid_run(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("tenant=777:4GiB@3", &spec);
	pb_session *s = session(d, 100, false);
	od_event ev;
	od_error err;
	pb_verdict v;

	(void)state;
	event(&ev, 2 * GIB, 80 * GIB, 1 * GIB, 20 * GIB, 1 * GIB);
	v = judge(s, PB_FITS_NOW, "capacity", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_int_equal(pb_session_failed(s, &err), DV_TENANT);
	assert_non_null(strstr(err.msg, "process 777 appeared"));
	assert_int_equal(dv_held(d), 0);
	v = judge(s, PB_LARGEST_ALLOCATION, "request_exceeds_device", &ev);
	assert_non_null(strstr(v.summary, "stopped for safety"));
	pb_session_free(s);
	dv_close(d);

	d = fake(NULL, &spec);
	s = session(d, 100, false);
	v = judge(s, PB_FITS_NOW, "capacity", &ev);
	assert_true(v.result->ran);
	assert_int_equal(pb_session_failed(s, &err), DV_OK);
	pb_session_free(s);
	dv_close(d);
}

/* The second signal: 20 GiB used that no listed process holds stops the
 * start; forced, it starts, says how much, and the cap is at most half
 * of the free memory.  The control, nothing hidden: it starts. */
static void
test_unlisted_tenant(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("hidden=20GiB", &spec);
	pb_session *s = session(d, 100, false);
	od_error err;

	(void)state;
	memset(&err, 0, sizeof err);
	assert_false(pb_session_start(s, &err));
	assert_non_null(strstr(err.msg, "a process the list does not show"));
	assert_int_equal(pb_session_failed(s, &err), DV_TENANT);
	pb_session_free(s);
	dv_close(d);

	d = fake("hidden=20GiB", &spec);
	s = session_forced(d, 100);
	assert_true(pb_session_start(s, &err));
	assert_true(pb_session_unlisted(s) >= 20 * GIB - 600 * MIB);
	assert_true(dv_cap(d) <= pb_session_free_at_start(s) / 2);
	pb_session_free(s);
	dv_close(d);

	d = fake(NULL, &spec);
	s = session(d, 100, false);
	assert_true(pb_session_start(s, &err));
	assert_int_equal(dv_cap(d), pb_session_free_at_start(s));
	pb_session_free(s);
	dv_close(d);
}

/* An allocation failing with a device error (not out of memory). */
static void
test_injected_failure(void **state)
{
	dv_fake_spec spec;
	dv_device *d = fake("fail_alloc=2", &spec);
	pb_session *s = session(d, 90, false);
	od_event ev;
	od_error err;
	pb_verdict v;

	(void)state;
	event(&ev, 2 * GIB, 80 * GIB, 1 * GIB, 20 * GIB, 1 * GIB);
	v = judge(s, PB_FITS_NOW, "capacity", &ev);
	assert_int_equal(v.outcome, PB_INCONCLUSIVE);
	assert_non_null(strstr(v.summary, "injected failure"));
	assert_int_equal(pb_session_failed(s, &err), DV_ERROR);
	assert_int_equal(dv_held(d), 0);
	pb_session_free(s);
	dv_close(d);
}

/* The causes of an event get verdicts from the probes they name. */
static void
test_verdicts_of_causes(void **state)
{
	static const char *const rules[] = {
		"fragmentation", "late_spike", "made_up", "capacity",
	};
	static const char *const probes[] = {
		"fragmentation", NULL, "crystal_ball", "fits_now",
	};
	dv_fake_spec spec;
	dv_device *d = fake("total=80GiB", &spec);
	pb_session *s = session(d, 100, false);
	pb_verdict v[OD_CAUSES_MAX];
	od_event ev;
	int n;

	(void)state;
	event(&ev, 2 * GIB, 80 * GIB, 1 * GIB, 70 * GIB, 7 * GIB);
	causes(&ev, rules, probes, 4);
	n = pb_verdicts(s, &ev, v, OD_CAUSES_MAX);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].cause, "fragmentation");
	assert_int_equal(v[0].outcome, PB_INCONCLUSIVE);
	assert_true(v[0].result->ran);
	assert_string_equal(v[1].cause, "made_up");
	assert_int_equal(v[1].probe, PB_COUNT);
	assert_null(v[1].result);
	assert_non_null(strstr(v[1].summary, "crystal_ball"));
	assert_string_equal(v[2].probe_name, "fits_now");
	assert_int_equal(pb_find("health"), PB_HEALTH);
	assert_int_equal(pb_find("nope"), -1);
	od_event_clear(&ev);
	pb_session_free(s);
	dv_close(d);
}

/* A session's options: the fake backend, the whole free memory. */
static lv_session_opts
session_opts(const char *fake_settings, bool force)
{
	static const char *const inputs[] = { "a.log" };
	lv_session_opts o;

	memset(&o, 0, sizeof o);
	o.backend = "fake";
	o.fake = fake_settings;
	o.cap = -1;
	o.cap_percent = 100;
	o.time_limit = 10;
	o.force = force;
	o.inputs = inputs;
	o.ninputs = 1;
	return o;
}

/* A whole session over two events: the fake device is the one the fatal
 * event describes, each event gets the verdicts its causes ask for, and
 * the report has the device, the cap and the context. */
static void
test_session_live(void **state)
{
	static const char *const rules[] = { "fragmentation", "capacity" };
	static const char *const probes[] = { "fragmentation", "fits_now" };
	lv_session_opts o = session_opts(NULL, false);
	lv_session *s = lv_session_new();
	od_event a, b;
	lv_item items[2];
	lv_report rep;
	od_error err;

	(void)state;
	assert_non_null(s);
	memset(&err, 0, sizeof err);
	event(&a, 1 * GIB, 40 * GIB, 1 * GIB, 30 * GIB, 1 * GIB);
	a.fatal = false;
	event(&b, 2 * GIB, 80 * GIB, 1 * GIB, 70 * GIB, 7 * GIB);
	causes(&b, rules, probes, 2);
	items[0] = (lv_item){ .ev = &a, .input = "a.log", .kind = "first" };
	items[1] = (lv_item){ .ev = &b, .input = "a.log", .kind = "second" };
	assert_int_equal(lv_session_run(s, &o, items, 2, &rep, &err),
	    LV_RUN_DONE);
	assert_string_equal(rep.command, "live");
	assert_non_null(rep.info);
	assert_int_equal(rep.info->total, 80 * GIB);
	assert_string_equal(rep.info->name, "fake GPU as the log describes it");
	assert_int_equal(rep.nevents, 2);
	assert_int_equal(rep.nevents_total, 2);
	assert_int_equal(rep.events[0].nv, 0);
	assert_string_equal(rep.events[1].kind, "second");
	assert_int_equal(rep.events[1].nv, 2);
	assert_string_equal(rep.events[1].v[0].cause, "fragmentation");
	assert_int_equal(rep.events[1].v[0].outcome, PB_INCONCLUSIVE);
	assert_true(rep.events[1].v[0].result->ran);
	assert_string_equal(rep.events[1].v[1].probe_name, "fits_now");
	assert_string_equal(rep.refused, "");
	assert_string_equal(rep.failed, "");
	assert_string_equal(rep.stopped, "");
	assert_string_equal(rep.cap_from, "100% of the free memory");
	assert_true(rep.cap > 0 && rep.peak_held > 0);
	assert_true(rep.peak_held <= rep.cap);
	assert_true(rep.context >= 0);
	assert_int_equal(rep.ninputs, 1);
	lv_session_free(s);
	od_event_clear(&b);
}

/* Another process on the GPU: only the read-only probes run, and the
 * report says why; with force, all of them. */
static void
test_session_refusal(void **state)
{
	static const char *const rules[] = { "capacity", "foreign_process" };
	static const char *const probes[] = { "fits_now", "processes" };
	lv_session_opts o = session_opts(NULL, false);
	lv_session *s = lv_session_new();
	od_event ev;
	lv_item item;
	lv_report rep;
	od_error err;

	(void)state;
	memset(&err, 0, sizeof err);
	event(&ev, 4 * GIB, 80 * GIB, 100 * MIB, 60 * GIB, 100 * MIB);
	causes(&ev, rules, probes, 2);
	/* The failed process (about its reserved memory) and another. */
	ev.mem.procs[0].pid = 4242;
	ev.mem.procs[0].bytes = 10 * GIB;
	ev.mem.procs[1].pid = 7;
	ev.mem.procs[1].bytes = 61 * GIB;
	ev.mem.nprocs = 2;
	item = (lv_item){ .ev = &ev, .input = "a.log", .kind = "k" };
	assert_int_equal(lv_session_run(s, &o, &item, 1, &rep, &err),
	    LV_RUN_DONE);
	assert_int_equal(rep.nprocs, 1);
	assert_int_equal(rep.procs[0].pid, 4242);
	assert_non_null(strstr(rep.refused, "GPU 0 is in use by 1 other "
	    "process (pid 4242; 10.00 GiB): only the read-only probes ran"));
	assert_non_null(strstr(rep.refused, "use --force"));
	assert_int_equal(rep.events[0].v[0].outcome, PB_INCONCLUSIVE);
	assert_non_null(strstr(rep.events[0].v[0].summary, "--force"));
	assert_int_equal(rep.events[0].v[1].outcome, PB_CONFIRMED);
	assert_int_equal(rep.cap, -1);
	assert_int_equal(rep.peak_held, 0);
	lv_session_free(s);

	o = session_opts(NULL, true);
	s = lv_session_new();
	assert_int_equal(lv_session_run(s, &o, &item, 1, &rep, &err),
	    LV_RUN_DONE);
	assert_string_equal(rep.refused, "");
	assert_true(rep.force);
	assert_true(rep.events[0].v[0].result->ran);
	assert_true(rep.cap > 0);
	lv_session_free(s);

	/* Fail closed: with the processes unknown (no NVML, or a list NVML
	 * cannot read) nobody is not assumed; forced, the probes run. */
	ev.mem.nprocs = 0;
	o = session_opts("nvml=no", false);
	s = lv_session_new();
	assert_int_equal(lv_session_run(s, &o, &item, 1, &rep, &err),
	    LV_RUN_DONE);
	assert_non_null(strstr(rep.refused, "cannot be listed"));
	assert_int_equal(rep.cap, -1);
	assert_int_equal(rep.peak_held, 0);
	lv_session_free(s);
	o = session_opts("proc_list=no", false);
	s = lv_session_new();
	assert_int_equal(lv_session_run(s, &o, &item, 1, &rep, &err),
	    LV_RUN_DONE);
	assert_non_null(strstr(rep.refused, "cannot be listed"));
	lv_session_free(s);
	o = session_opts("proc_list=no", true);
	s = lv_session_new();
	assert_int_equal(lv_session_run(s, &o, &item, 1, &rep, &err),
	    LV_RUN_DONE);
	assert_string_equal(rep.refused, "");
	assert_true(rep.events[0].v[0].result->ran);
	lv_session_free(s);
	od_event_clear(&ev);
}

/* No events, wrong settings, no GPU, and `oomdoc probe`'s fixed list. */
static void
test_session_outcomes(void **state)
{
	static const pb_probe order[] = {
		PB_PROCESSES, PB_CONTEXT_COST, PB_LARGEST_ALLOCATION, PB_HEALTH,
	};
	lv_session_opts o = session_opts(NULL, false);
	lv_session *s = lv_session_new();
	lv_report rep;
	od_error err;
	int i;

	(void)state;
	memset(&err, 0, sizeof err);
	assert_int_equal(lv_session_run(s, &o, NULL, 0, &rep, &err),
	    LV_RUN_NO_EVENTS);
	assert_null(rep.info);
	assert_int_equal(rep.nevents, 0);
	assert_int_equal(rep.ninputs, 1);
	lv_session_free(s);

	o.probe_only = true;
	o.fake = "colour=red";
	s = lv_session_new();
	assert_int_equal(lv_session_run(s, &o, NULL, 0, &rep, &err),
	    LV_RUN_BAD_SETTINGS);
	assert_non_null(strstr(err.msg, "colour"));
	lv_session_free(s);

	o.fake = "no_gpu=yes";
	s = lv_session_new();
	assert_int_equal(lv_session_run(s, &o, NULL, 0, &rep, &err),
	    LV_RUN_NO_DEVICE);
	assert_null(rep.info);
	lv_session_free(s);

	o.fake = "total=24GiB";
	s = lv_session_new();
	assert_int_equal(lv_session_run(s, &o, NULL, 0, &rep, &err),
	    LV_RUN_DONE);
	assert_string_equal(rep.command, "probe");
	assert_int_equal(rep.info->total, 24 * GIB);
	assert_int_equal(rep.ninputs, 0);
	assert_int_equal(rep.nprobes, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(rep.probes[i]->probe, order[i]);
		assert_true(rep.probes[i]->ran);
	}
	lv_session_free(s);
}

/* NVML (and CUPTI) that cannot be loaded: a note, no crash. */
static void
test_missing_libraries(void **state)
{
	char note[200];
	nv_lib *nv;

	(void)state;
	nv = nv_open("/nonexistent/libnvidia-ml.so.1", "", 0, note,
	    sizeof note);
	assert_null(nv);
	assert_non_null(strstr(note, "NVML not available: cannot load "
	    "/nonexistent/libnvidia-ml.so.1"));
	/* The default name: here there is no driver, elsewhere there may
	 * be; either way a failure says why. */
	nv = nv_open(NULL, "", 0, note, sizeof note);
	if (nv == NULL)
		assert_non_null(strstr(note, "NVML"));
	nv_close(nv);
#ifdef OOMDOC_HAVE_CUDA
	{
		ct_lib *ct = ct_open("/nonexistent/libcupti.so", note,
		    sizeof note);

		assert_null(ct);
		assert_non_null(strstr(note, "CUPTI not available"));
	}
#endif
}

/*
 * nvml_load.c against a stand-in libnvidia-ml with NVML's ABI
 * (fake_nvml.c): the counters asked with nvml.h's enum values (each
 * pair has its own count), a MIG instance found by UUID with its
 * counters read on the parent (NVML gives none on the instance's
 * handle), and counters the part lacks said as not supported, never 0.
 */
static void
test_nvml_abi(void **state)
{
	static const char mig[] = "MIG-fa4e0000-0000-4000-8000-000000000100";
	char note[200], uuid[96], parent[96];
	dv_health h;
	nv_lib *nv;

	(void)state;
	nv = nv_open(OOMDOC_TEST_FAKE_NVML, "00000000:18:00.0", 0, note,
	    sizeof note);
	assert_non_null(nv);
	memset(&h, 0, sizeof h);
	nv_health(nv, &h);
	assert_true(h.ecc_known);
	assert_int_equal(h.ecc_corrected, 7);
	assert_int_equal(h.ecc_uncorrected, 2);
	assert_int_equal(h.ecc_uncorrected_total, 20);
	assert_true(h.remap_known);
	assert_int_equal(h.remapped_correctable, 3);
	assert_int_equal(h.remapped_uncorrectable, 1);
	assert_true(h.remap_pending);
	assert_false(h.remap_failure);
	assert_false(h.on_parent);
	nv_close(nv);

	nv = nv_open_uuid(OOMDOC_TEST_FAKE_NVML, mig, note, sizeof note);
	assert_non_null(nv);
	assert_true(nv_uuids(nv, uuid, parent, sizeof uuid));
	assert_string_equal(uuid, mig);
	assert_string_equal(parent, "GPU-fa4e0000-0000-4000-8000-000000000000");
	memset(&h, 0, sizeof h);
	nv_health(nv, &h);
	assert_true(h.on_parent);
	assert_int_equal(h.ecc_uncorrected, 2);
	assert_int_equal(h.remapped_uncorrectable, 1);
	assert_non_null(strstr(h.note, "parent GPU"));
	nv_close(nv);

	/* ECC off, no row remapper: not supported, never 0. */
	assert_int_equal(setenv("FAKE_NVML_ECC", "off", 1), 0);
	assert_int_equal(setenv("FAKE_NVML_REMAP", "off", 1), 0);
	nv = nv_open_uuid(OOMDOC_TEST_FAKE_NVML,
	    "GPU-fa4e0000-0000-4000-8000-000000000000", note, sizeof note);
	assert_non_null(nv);
	memset(&h, 0, sizeof h);
	nv_health(nv, &h);
	assert_false(h.ecc_known);
	assert_int_equal(h.ecc_corrected, OD_UNKNOWN);
	assert_int_equal(h.ecc_uncorrected, OD_UNKNOWN);
	assert_string_equal(h.ecc_why, "not supported");
	assert_false(h.remap_known);
	assert_int_equal(h.remapped_uncorrectable, OD_UNKNOWN);
	assert_string_equal(h.remap_why, "not supported");
	nv_close(nv);
	unsetenv("FAKE_NVML_ECC");
	unsetenv("FAKE_NVML_REMAP");

	/* No such instance: refused, with why. */
	nv = nv_open_uuid(OOMDOC_TEST_FAKE_NVML,
	    "MIG-fa4e0000-0000-4000-8000-000000000999", note, sizeof note);
	assert_null(nv);
	assert_non_null(strstr(note, "Not Found"));
}

#ifdef OOMDOC_HAVE_CUDA
/* CUPTI's records added up: allocations by kind and source, releases. */
static void
test_cupti_accounting(void **state)
{
	dv_activity a;

	(void)state;
	memset(&a, 0, sizeof a);
	ct_account(&a, 1, 3, 1 << 20, "/usr/bin/oomdoc");
	ct_account(&a, 1, 3, 2 << 20, "/usr/bin/oomdoc");
	ct_account(&a, 1, 2, 4096, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
	ct_account(&a, 2, 3, 1 << 20, NULL);
	ct_account(&a, 0, 3, 99, NULL);
	assert_int_equal(a.allocs, 3);
	assert_int_equal(a.releases, 1);
	assert_int_equal(a.alloc_bytes, (3 << 20) + 4096);
	assert_int_equal(a.device_bytes, 3 << 20);
	assert_int_equal(a.other_bytes, 4096);
	assert_int_equal(a.release_bytes, 1 << 20);
	assert_int_equal(a.nsources, 2);
	assert_string_equal(a.sources[0], "oomdoc");
	assert_int_equal(a.source_allocs[0], 2);
	assert_string_equal(a.sources[1], "libcuda.so.1");
}

/* On a machine without a driver the CUDA backend says so. */
static void
test_cuda_without_driver(void **state)
{
	dv_config cfg;
	od_error err;
	dv_status st;
	dv_device *d;

	(void)state;
	memset(&cfg, 0, sizeof cfg);
	memset(&err, 0, sizeof err);
	cfg.time_limit = 1;
	d = dv_open("cuda", &cfg, &st, &err);
	if (d != NULL) {
		/* A GPU machine: nothing to check here. */
		dv_close(d);
		skip();
	}
	/* No driver (this build machine), or a driver and no GPU. */
	if (st == DV_NO_DRIVER) {
		assert_non_null(strstr(err.msg, "no NVIDIA driver"));
	} else {
		assert_int_equal(st, DV_UNSUPPORTED);
		assert_non_null(strstr(err.msg, "GPU"));
	}
	assert_null(strchr(err.msg, '\n'));
}
#endif

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fake_pages),
		cmocka_unit_test(test_cap_and_release),
		cmocka_unit_test(test_fake_settings),
		cmocka_unit_test(test_fragmentation_controls),
		cmocka_unit_test(test_fragmentation_inconclusive),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_read_only),
		cmocka_unit_test(test_fits_now),
		cmocka_unit_test(test_fits_scaled),
		cmocka_unit_test(test_largest_allocation),
		cmocka_unit_test(test_context_cost),
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_bandwidth_ref),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_pattern_kinds),
		cmocka_unit_test(test_health_counters),
		cmocka_unit_test(test_mig_selection),
		cmocka_unit_test(test_torch_parse),
		cmocka_unit_test(test_torch_baseline),
		cmocka_unit_test(test_timeout_ends_session),
		cmocka_unit_test(test_injected_failure),
		cmocka_unit_test(test_tenant_mid_run),
		cmocka_unit_test(test_unlisted_tenant),
		cmocka_unit_test(test_verdicts_of_causes),
		cmocka_unit_test(test_session_live),
		cmocka_unit_test(test_session_refusal),
		cmocka_unit_test(test_session_outcomes),
		cmocka_unit_test(test_missing_libraries),
		cmocka_unit_test(test_nvml_abi),
#ifdef OOMDOC_HAVE_CUDA
		cmocka_unit_test(test_cupti_accounting),
		cmocka_unit_test(test_cuda_without_driver),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

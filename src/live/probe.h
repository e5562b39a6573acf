/*
 * probe.h: the probes of live mode and their verdicts.
 *
 * A probe measures something on the device (device.h) that can confirm or
 * refute a cause the rules found: each rule names its probe (the cause's
 * `probe`, written confirm_with in the rule files).  The session runs
 * each probe once per distinct set of parameters (the context's cost
 * once, "does allocated + requested fit" once per pair of figures) and
 * keeps the results (probe_run.c); pb_judge turns a result and an event's
 * figures into a verdict on one cause (probe_verdict.c); pb_verdicts does
 * both for each cause of an event that names a probe (probe_plan.c).
 *
 * Ownership: the session owns its results; verdicts borrow them, and the
 * cause's rule id from the event.
 */
#ifndef OD_PROBE_H
#define OD_PROBE_H

#include "bandwidth_ref.h"
#include "device.h"
#include "core.h"

typedef enum {
	PB_CONTEXT_COST,
	PB_FITS_NOW,
	PB_LARGEST_ALLOCATION,
	PB_FRAGMENTATION,
	PB_PROCESSES,
	PB_HEALTH,
	PB_COUNT
} pb_probe;

typedef enum {
	PB_CONFIRMED,
	PB_REFUTED,
	PB_INCONCLUSIVE,
} pb_outcome;

#define PB_MEAS_MAX 48
#define PB_RESULTS_MAX 64       /* distinct probe runs per session */
#define PB_HOLES_MAX 1024       /* holes the fragmentation replay makes */
#define PB_MIB (1LL << 20)      /* a mebibyte, in the probes' sizes */

/* How a measurement is shown. */
typedef enum {
	PM_BYTES,               /* a byte count */
	PM_INT,
	PM_NUM,                 /* a real number */
	PM_RATE,                /* bytes per second */
	PM_BOOL,
	PM_STR,
} pm_type;

typedef struct {
	const char *key;        /* static */
	pm_type type;
	int64_t i;
	double d;
	bool b;
	char s[224];
} pb_meas;

/* What one run of a probe measured. */
typedef struct {
	pb_probe probe;
	bool ran;               /* false: it could not run; note says why */
	char note[320];         /* why not, or what limited it */
	bool scaled;            /* a figure was scaled down to the cap */
	pb_meas m[PB_MEAS_MAX];
	int nm;
	dv_activity act;        /* the memory activity it caused */
	/* The parameters it ran with (the cache's key). */
	int64_t key[3];
	/* The figures the judges read. */
	int64_t context;        /* context_cost; -1 unknown */
	char baseline[96];      /* what context measures: "bare CUDA context
	                         * with lazy loading" */
	/* The second baseline (--torch-baseline): what an empty PyTorch
	 * process costs on this device, -1 when not measured, and what it
	 * was ("empty PyTorch process (torch 2.5.1, CUDA 12.4, ...)"). */
	int64_t torch_context;
	char torch_baseline[160];
	int64_t free_now, total_now;
	int64_t cap;
	int64_t target;         /* fits_now: allocated + requested */
	int64_t got;            /* fits_now: bytes allocated */
	bool fit;               /* fits_now: the target was allocated whole */
	bool beyond_cap;        /* fits_now, largest: the target passes the cap */
	int64_t others;         /* fits_now: other processes hold; -1 unknown */
	int64_t largest;        /* largest single allocation found */
	bool largest_at_cap;    /* the search stopped at the cap */
	int64_t allocatable;    /* all that could be allocated, in chunks */
	int request_fit;        /* largest: -1 not tried, 0 failed, 1 fit */
	int holes;              /* fragmentation */
	int64_t hole_bytes;
	int64_t holes_total;
	int64_t free_left;
	dv_status malloc_st;    /* fragmentation: cudaMalloc, holes held */
	dv_status vmm_held_st;  /* the mapping, holes held */
	dv_status malloc_rel_st;/* cudaMalloc, holes released */
	dv_status vmm_st;       /* the mapping, holes released */
	int64_t free_released;  /* free memory after the release */
	int vmm_chunks;
	dv_proc procs[DV_PROCS_MAX];
	int nprocs;
	bool procs_known;
	bool pat_ran, bw_ran, health_ran;
	dv_pattern pat;
	dv_bandwidth bw;
	dv_health health;       /* the counters before the tests */
	dv_health health_after; /* and after them */
	bool health_after_ran;
	double peak_bps;
	const bw_ref *ref;      /* health: the part's triad reference, or NULL */
} pb_result;

/* A verdict on one cause of one event. */
typedef struct {
	pb_probe probe;         /* PB_COUNT: the rule names no known probe */
	const char *probe_name; /* as the rule names it */
	const char *cause;      /* the rule id */
	pb_outcome outcome;
	char summary[640];      /* one or two sentences, with the figures */
	const pb_result *result;/* NULL when the probe did not exist */
} pb_verdict;

typedef struct {
	bool read_only;         /* others hold the GPU: no context, no memory */
	bool force;             /* --force: others may be there */
	int64_t cap;            /* bytes; < 0: cap_percent of the free memory */
	int cap_percent;        /* 0: 90 %, or 50 % under force */
	uint64_t seed;          /* the random pattern's; 0: from the clock */
	/* --torch-baseline: the Python interpreter that measures an empty
	 * PyTorch process beside the bare context (torch_baseline.h); NULL
	 * for none. */
	const char *torch_python;
} pb_opts;

/* What the tenant checks allow beside what is explained: 1 GiB or 2 % of
 * the device, whichever is more (the driver's own reserve, rounding). */
#define PB_TOLERANCE_MIN (1LL << 30)

typedef struct pb_session pb_session;

pb_session *pb_session_new(dv_device *d, const pb_opts *o);
void pb_session_free(pb_session *s);

/*
 * Creates the context, measures what it cost and sets the cap (once).
 * False with err filled in when the device cannot be used.
 */
bool pb_session_start(pb_session *s, od_error *err);
/* Used memory that neither our context nor the listed processes explain
 * (a tenant NVML cannot list), -1 before the start. */
int64_t pb_session_unlisted(const pb_session *s);
/* The context's cost (-1 unknown) and the free memory when it started. */
int64_t pb_session_context(const pb_session *s);
int64_t pb_session_free_at_start(const pb_session *s);
bool pb_session_started(const pb_session *s);
/* A device error that ended the session early (status DV_OK if none). */
dv_status pb_session_failed(const pb_session *s, od_error *err);

/*
 * Runs probe p with the figures of ev (NULL: the device alone, for
 * `oomdoc probe`), or returns the result of an earlier run with the same
 * figures.  Never NULL.
 */
const pb_result *pb_run(pb_session *s, pb_probe p, const od_event *ev);

/* The verdict of result r (of cause's probe) on cause of ev. */
void pb_judge(const char *cause, const od_event *ev, const pb_result *r,
    pb_verdict *v);

/* Verdicts for each cause of ev that names a probe; returns how many. */
int pb_verdicts(pb_session *s, const od_event *ev, pb_verdict *v, int cap);

/* The same causes, each inconclusive with why (no probe run): the
 * event is on a GPU other than the one probed. */
int pb_withheld(const od_event *ev, const char *why, pb_verdict *v, int cap);

/* One sentence on what a run found, for `oomdoc probe`. */
void pb_describe(const pb_result *r, char *buf, size_t len);

const char *pb_name(pb_probe p);
int pb_find(const char *name);
const char *pb_outcome_name(pb_outcome o);

#endif

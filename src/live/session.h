/*
 * session.h: one run of live mode, without a command line.  The caller
 * (src/cli/cmd_live.c for `oomdoc live` and `oomdoc probe`) gives the
 * options and the events; the session opens the device, refuses to take
 * memory on a GPU that other processes use unless forced, runs the probes
 * that the causes of each event name, and fills a live report
 * (live.h) for lv_report_write.  It prints nothing and picks no exit
 * status: what went wrong comes back as an lv_run value, with an od_error
 * where there is a message, and in the report's refused, failed and
 * stopped fields.
 *
 * Signals are the caller's: a handler that calls dv_request_stop makes
 * the probes stop, and the report then says so.
 *
 * Ownership: lv_session_new returns a session that the caller frees with
 * lv_session_free, which releases everything taken on the device and
 * closes it.  The report that lv_session_run fills borrows from the
 * session (the device's facts, the probes' results, the events'
 * verdicts) and from the caller's options and events: write it before
 * either is freed.
 */
#ifndef OD_SESSION_H
#define OD_SESSION_H

#include "live.h"

#define LV_EVENTS_MAX 256       /* events probed per run */

/* What a run is asked to do. */
typedef struct {
	bool probe_only;        /* `oomdoc probe`: the device alone, no events */
	const char *backend;    /* "cuda" or "fake" */
	int device;             /* the GPU, by CUDA index */
	const char *device_id;  /* or by UUID or PCI bus id; NULL: by index */
	bool device_explicit;   /* --device was given */
	/* The fake device's settings (KEY=VALUE,..., device.h), applied over
	 * the device the events describe (lv_fake_from_events); NULL for
	 * none. */
	const char *fake;
	int64_t cap;            /* bytes; < 0: cap_percent of the free memory */
	int cap_percent;
	double time_limit;      /* seconds a kernel may run */
	bool force;             /* probe even when other processes hold the GPU */
	uint64_t seed;          /* the memory test's random pattern; 0: clock */
	const char *nvml_path;  /* NULL: libnvidia-ml.so.1 */
	const char *cupti_path; /* NULL: the usual names of libcupti.so */
	/* --torch-baseline: the interpreter that measures an empty PyTorch
	 * process (torch_baseline.h), NULL for none. */
	const char *torch_python;
	/* The inputs' names, for the report; borrowed. */
	const char *const *inputs;
	int ninputs;
} lv_session_opts;

/* One event to confirm, as its input gives it; everything borrowed. */
typedef struct {
	const od_event *ev;
	const char *input;      /* the name of its input */
	const char *kind;       /* its kind, as the log or the report names it */
} lv_item;

/* What lv_session_run came to. */
typedef enum {
	/* The report is filled: the probes ran, or some did not and the
	 * report's refused, failed or stopped field says why. */
	LV_RUN_DONE,
	/* No event to confirm: the report is filled and says so; no device
	 * was opened. */
	LV_RUN_NO_EVENTS,
	/* The fake device's settings are wrong (err says which). */
	LV_RUN_BAD_SETTINGS,
	/* The device cannot be used: no driver, no GPU, no such device (err
	 * says why). */
	LV_RUN_NO_DEVICE,
	/* The driver is too old for this build (err says which). */
	LV_RUN_DRIVER_OLD,
	/* Opening the device failed otherwise (err says why). */
	LV_RUN_DEVICE_FAILED,
	/* Out of host memory. */
	LV_RUN_NO_MEMORY,
} lv_run;

typedef struct lv_session lv_session;

lv_session *lv_session_new(void);
void lv_session_free(lv_session *s);

/*
 * Runs live mode once with options o over the n events of items (none
 * for o->probe_only), and fills rep; rep->format is left for the caller
 * to set.  A session runs once.
 */
lv_run lv_session_run(lv_session *s, const lv_session_opts *o,
    const lv_item *items, size_t n, lv_report *rep, od_error *err);

/*
 * Fills what the session's report can say at this moment, and says that
 * the watchdog ended the run after a device call of seconds: called on
 * the watchdog's thread (watchdog.h) while the run is blocked in that
 * call, before the report is written and the process _exit()s.
 */
void lv_session_partial(lv_session *s, double seconds);

/*
 * The fake device as the events describe it: the capacity of the first
 * event that gives one (a fatal one first), and the other processes that
 * event names (the failed process itself is gone).  The defaults when no
 * event gives a capacity.
 */
void lv_fake_from_events(const lv_item *items, size_t n, dv_fake_spec *spec);

#endif

/*
 * live.h: the live mode, `oomdoc live` and `oomdoc probe`.
 *
 *     oomdoc live [OPTION]... [LOG|REPORT.json|-]
 *         confirm or refute, on a GPU, the causes of each out-of-memory
 *         event of a log or of a JSON report made earlier
 *     oomdoc probe [OPTION]...
 *         check a GPU without a log: context cost, headroom, health
 *
 * The command line is src/cli's (cmd_live.c); here are the session that
 * opens the device and runs the probes (session.h, probe.h), the device
 * layer (device.h), and the report of what they found (this header,
 * written by live_report.c).
 */
#ifndef OD_LIVE_H
#define OD_LIVE_H

#include "device.h"
#include "core.h"
#include "probe.h"

/* One event and the verdicts on its causes. */
typedef struct {
	const od_event *ev;     /* borrowed */
	const char *input;      /* its input's name, borrowed */
	const char *kind;       /* as the log or the report names it */
	pb_verdict v[OD_CAUSES_MAX];
	int nv;
} lv_event;

/* Everything a live report shows; the writers only read it. */
typedef struct {
	od_report_format format;
	const char *command;    /* "live" or "probe" */
	const char *backend;
	const dv_info *info;    /* the device */
	int64_t context;        /* -1 unknown or not measured */
	int64_t free_at_start;  /* -1 when no context was made */
	int64_t cap;            /* -1 when no context was made */
	char cap_from[48];      /* "90% of the free memory", "--max-memory" */
	int64_t peak_held;      /* the most the probes held at once */
	double time_limit;
	bool force;
	dv_proc procs[DV_PROCS_MAX];   /* other processes at the start */
	int nprocs;
	bool procs_known;
	char refused[256];      /* why only read-only probes ran, or "" */
	char failed[320];       /* a device error that ended the run, or "" */
	bool timed_out;         /* that error was the time limit */
	bool driver_old;        /* that error was a driver too old for the
	                         * kernels */
	char stopped[64];       /* the signal that stopped it, or "" */
	const char *const *inputs;
	int ninputs;
	const lv_event *events;
	int nevents;
	int nevents_total;      /* events in the input, with or without probes */
	const pb_result *probes[PB_COUNT];  /* `oomdoc probe`'s results */
	int nprobes;
} lv_report;

/* Writes the report in its format (text, markdown or JSON
 * "oomdoc.live/1"). */
void lv_report_write(FILE *out, const lv_report *r);

/* The line --version prints: whether the CUDA backend is built in
 * (session.c). */
const char *od_live_version_line(void);

#endif

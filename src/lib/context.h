/*
 * context.h: what the log says around an event besides the message: the
 * settings the job ran with (allocator configuration, batch size, sequence
 * length, precision, checkpointing), the memory its metric lines reported,
 * the cgroup's usage and limit the kernel printed before a kill, and,
 * from the traceback before the failure, the frames, the phase and the
 * step.
 *
 * The scanner finds the lines (their anchors are in its prefilter) and
 * hands them over; what they mean for an event is decided here.
 */
#ifndef OD_CONTEXT_H
#define OD_CONTEXT_H

#include "core.h"

typedef struct cx_ctx cx_ctx;

/* A fixed string that marks a line worth reading for context. */
typedef struct {
	const char *text;
	int what;               /* which setting it is about (context.c) */
	bool sampled;           /* frequent in logs: read one line in a while */
	bool series;            /* a memory reading: see cx_series_take */
} cx_anchor;

/* Bounds for the scanner: the kinds of setting, and how far apart two
 * lines of a sampled kind must be for the second to be read. */
#define CX_WHAT_MAX 40
#define CX_SAMPLE_BYTES (64 * 1024)

/* jit: compile the patterns with PCRE2's JIT. */
cx_ctx *cx_new(bool jit, od_error *err);
void cx_free(cx_ctx *c);

/* The context anchors, terminated by one whose text is NULL. */
const cx_anchor *cx_anchors(void);

/* Empties a running context (at the start of an input). */
void cx_reset(od_logctx *state);

/*
 * Counts one more line of a series kind what (a memory reading) and says
 * whether to read it: every one until the series fills, then one in the
 * series' stride, which doubles each time the series is thinned.  A line
 * that cannot be a reading (an nvidia-smi row before its header) is not
 * counted, nor read.
 */
bool cx_series_take(od_logctx *state, int what);

/*
 * The series of readings the rules and the reports use: the kept readings
 * of rank's last reading (rank -1, or a rank that gave none: the last
 * reading's), of its figure and rank, with their summary.  Bytes and
 * steps the log does not give are -1.
 */
typedef struct {
	int n;                  /* readings in the series (0: none) */
	int what;               /* an od_reading_what */
	int rank;
	int device;             /* nvidia-smi's GPU index, -1 */
	int64_t first, last, min, max, median;
	int64_t first_step, last_step;  /* of the first and last with a step */
	int64_t first_step_bytes, last_step_bytes;
	int64_t growth;         /* last - first (can be negative) */
	bool have_rate;         /* two readings at different steps */
	double per_step;        /* bytes per step between them */
	/* Across ranks: the last reading of this figure of each rank. */
	int nranks;
	int64_t rank_low, rank_high;
	int high_rank;          /* the rank of rank_high */
} cx_series;

void cx_series_of(const od_logctx *state, int rank, cx_series *s);

/* Whether reading r belongs to series s: the same figure, rank and GPU. */
static inline bool
cx_in_series(const cx_series *s, const od_reading *r)
{
	return r->what == s->what && r->rank == s->rank &&
	    r->device == s->device;
}

/*
 * nvidia-smi dmon's rows carry no fixed string: once a header with an fb
 * column was read (cx_dmon_active), the scanner hands every line after it
 * to cx_dmon_row, which reads the rows laid out as the header says (the
 * frame buffer used, per GPU index, in the rows' order) and passes over
 * any other line.
 */
bool cx_dmon_active(const od_logctx *state);
void cx_dmon_row(od_logctx *state, const char *line, size_t len,
    uint64_t lineno);

/* Reads the line line[0..len), line number lineno (1-based), which holds
 * an anchor about what, into the running context. */
void cx_line(cx_ctx *c, int what, const char *line, size_t len,
    uint64_t lineno, od_logctx *state);

/* How many lines after the cgroup's "memory: usage" line a kill is still
 * the kill it was printed for. */
#define CX_MEMCG_LINES 60

/* How many lines after the last line of a BFC Stats block TensorFlow's
 * error is still the one the dump was printed for: the op's OOM comes a
 * line or two after it, the Python error after a traceback. */
#define CX_BFC_LINES 40

/*
 * Gives ev, whose line is set, the running context: a copy of it, and for
 * a kill by the OOM killer that names no limit, the cgroup's usage and
 * limit of a memcg line at most CX_MEMCG_LINES before it (and the Slurm
 * job of the cgroup the kernel named, within as many lines and for the
 * same pid where its line names one), and for a
 * TensorFlow error with no figures, a BFC Stats block at most
 * CX_BFC_LINES before it.  The event owns its copy of the readings; when
 * memory cannot hold it the event has none, and cx_nomem says so.
 */
void cx_attach(cx_ctx *c, const od_logctx *state, od_event *ev);
/* Whether an event's frames or readings were lost for want of memory
 * since the last call (the scanner reports it at od_scan_finish); clears
 * it. */
bool cx_nomem(cx_ctx *c);

/*
 * Reads the text before an event, buf[0..len) (the event's line starts at
 * len), for the last traceback's frames, the phase they show and the last
 * step a progress bar or a metric line gave.
 */
void cx_before(cx_ctx *c, const char *buf, size_t len, od_event *ev);
/*
 * Reads the text just after an event, buf[0..len) from the end of its
 * message: the frames of a traceback that starts on the next line
 * (logging.exception's layout: the message, then its traceback) when the
 * event has none, and the TensorFlow and XLA settings the log shows
 * after it (ev->ctx.later).
 */
void cx_after(cx_ctx *c, const char *buf, size_t len, od_event *ev);

#endif

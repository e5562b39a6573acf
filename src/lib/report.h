/*
 * report.h: what the report writers share.  od_report_write (report.c)
 * hands the run to the writer of the format asked for: report_text.c,
 * report_markdown.c or report_json.c (schema oomdoc.report/2).  Log text
 * goes out through the escapers of escape.c.
 */
#ifndef OD_REPORT_H
#define OD_REPORT_H

#include "account.h"
#include "core.h"

#define RP_BAR_WIDTH 50

/* The text report's width when none is given (wrap.c). */
#define RP_WIDTH_DEFAULT 80
/* The mark of a line's hanging column, which rp_wrap does not write: a
 * control character, which no text from outside reaches the report as
 * (escape.c writes it \x01). */
#define RP_HANG_CHAR '\001'
#define RP_HANG "\001"
/* A space that rp_wrap never breaks a line at, written as a space. */
#define RP_GLUE_CHAR '\002'
#define RP_GLUE "\002"

/* Writes s[0..n) to out with each line wider than width broken between
 * words, continued at its hanging column (wrap.c). */
void rp_wrap(FILE *out, const char *s, size_t n, int width);

/* A buffer that text is written to and rp_wrap'ed to out when it is
 * closed: rp_wrap_open returns the stream to write to, NULL when memory
 * ran out; rp_wrap_close writes and frees what was written. */
typedef struct {
	FILE *out, *f;
	char *buf;
	size_t len;
	int width;
} rp_wrapbuf;
FILE *rp_wrap_open(rp_wrapbuf *b, FILE *out, int width);
void rp_wrap_close(rp_wrapbuf *b);

/* The text report; false when memory ran out (what was complete before
 * is written). */
bool rp_text(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set);
void rp_markdown(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set);
bool rp_json(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set);
/* --format github and prometheus: false when out of memory. */
bool rp_github(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set);
bool rp_prometheus(FILE *out, const od_report_opts *o,
    const od_input *inputs, int ninputs, od_events *set);
/* --format html: one self-contained page (report_html.c). */
bool rp_html(FILE *out, const od_report_opts *o, const od_input *inputs,
    int ninputs, od_events *set);

/* A summary row's input as the reports show it. */
const char *rp_row_name(const od_summary_row *r);
/* The triage summary as a table, one input a row (report_text.c). */
void rp_text_summary(FILE *out, const od_summary_row *rows, int n);
/* An input's name as the reports show it: "-" is "(standard input)". */
const char *rp_input_name(const od_input *in);
/* The top cause of the report: that of its first fatal event, else of
 * its first event; NULL when no rule matched. */
const char *rp_top_cause(od_events *set);
/* The run's first failure, of several (event.c), or NULL; *index (when
 * not NULL) receives its index. */
const od_event *rp_first_failure(od_events *set, size_t *index);
/* What the reports' headings call the events: "warning" when there are
 * some and none is a failure (a log of allocator warnings alone is a job
 * that did not fail of them, and the exit status is 1), else "event". */
const char *rp_events_noun(od_events *set);
/*
 * What followed ev, the run's first failure (od_aftermath), as two
 * sentences without a final period: the secondary reports that came after
 * it (into after, cap bytes) and what torchrun's ChildFailedError table
 * names as the root cause (into root); each "" when the log has none.
 * They hold only numbers and fixed words, so every report prints them as
 * they are.
 */
void rp_aftermath(const od_event *ev, char *after, char *root, size_t cap);
/*
 * One line of an event's figures at the failure: its label, how deep it
 * sits under the line above (0, or 1 for a part of "reserved by PyTorch"),
 * and its bytes (-1 unknown).  A process line is listed even when its
 * bytes are unknown (always), the others only when known.
 */
typedef struct {
	char label[48];
	int depth;
	int64_t bytes;
	bool always;
} rp_figure;

/* The largest number of figure lines an event has (fixed ones and every
 * process of od_memory). */
#define RP_FIGURES_MAX (24 + OD_PROCS_MAX)

/* The figures of ev in the order the text and HTML reports list them,
 * into rows (RP_FIGURES_MAX of them); returns how many. */
int rp_figures(const od_event *ev, rp_figure *rows);

/* The most figure lines of a memory snapshot. */
#define RP_SNAPSHOT_FIGURES_MAX 10

/* The figures of the memory snapshot joined to ev (snapshot.c), in the
 * order the text and HTML reports list them, into rows
 * (RP_SNAPSHOT_FIGURES_MAX of them), depth 0 to 2; returns how many, 0
 * without a snapshot.  Unknown figures are left out. */
int rp_snapshot_figures(const od_event *ev, rp_figure *rows);
/*
 * The parts of ev's memory account as the bar (text) and the chart (HTML)
 * draw them: part[OD_PART_COUNT] the bytes of each (0 unknown), an
 * unknown unaccounted part as what the others leave of the total, *known
 * their sum and *sum the scale (the total, or the parts' sum where they
 * exceed it).  False when there is nothing to draw.
 */
bool rp_bar_parts(const od_event *ev, od_account *a, int64_t *part,
    int64_t *known, int64_t *sum);
/* The memory account (account.c) as a bar of cells cells (RP_BAR_CELLS_MIN
 * to RP_BAR_WIDTH; others are taken as the nearest), the request below it,
 * and the legend of every part with how it was known, each line after
 * indent; nothing without a capacity.  With color, each part's marks in a
 * colour of their own (SGR sequences). */
#define RP_BAR_CELLS_MIN 10
void rp_bar(FILE *out, const od_event *ev, const char *indent, bool color,
    int cells);

/* The SGR colour of a confidence ("high" green, "medium" yellow, "low"
 * red), for the text report. */
const char *rp_confidence_color(od_confidence c);

/* The line that says how many bytes a cause accounts for and how much of
 * the shortfall they explain; nothing when it accounts for none known. */
void rp_explains(FILE *out, const char *indent, const od_cause *c,
    const od_event *ev);

/*
 * The sparkline of the series of memory readings of an event of rank
 * (context.c, cx_series_of) into buf: one cell per reading, eight heights from the
 * series' least reading to its largest, in Unicode block characters
 * (U+2581 to U+2588) when utf8, else in the ASCII ramp "_.-:=+*#".
 * Returns the number of cells (0: no series).
 */
int rp_sparkline(const od_logctx *c, int rank, bool utf8, char *buf,
    size_t cap);
/* The readings block of an event for a terminal (report_text.c): the
 * sparkline with its least and largest readings, the growth over the
 * steps, the ranks, and the allocator's and vLLM's own figures.  Its
 * lines carry RP_HANG marks: out is a buffer of rp_wrap_open. */
void rp_text_readings(FILE *out, const od_report_opts *o,
    const od_event *ev);

#endif

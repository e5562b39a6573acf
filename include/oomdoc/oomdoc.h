/*
 * oomdoc/oomdoc.h: the public interface of liboomdoc, the embeddable core
 * of oomdoc.  It is the only header an embedding program includes.
 *
 * Bytes of a log go in, a file at a time or in chunks as they arrive; out
 * come events, one per out-of-memory failure (its echoes by other ranks
 * and retries grouped into it), with the figures the log gives; a rule set
 * (YAML files, see rules/ and the RULES section of oomdoc(1)) finds the
 * likely causes of each event; a PyTorch memory snapshot can be joined to
 * the event it belongs to; a report writes them in any of the command's
 * formats (text, Markdown, JSON, ...).  A filter of a log pipeline does this:
 *
 *     rules = oomdoc_rules_new();
 *     if (!oomdoc_rules_load(rules, "/usr/share/oomdoc/rules"))
 *             (read oomdoc_rules_error for each error)
 *     oomdoc_options opts;
 *     oomdoc_options_init(&opts);
 *     opts.recognisers = rules;                     (their recognisers)
 *     sc = oomdoc_scanner_new(&opts, &err);
 *     oomdoc_scanner_on_event(sc, print_event, NULL);
 *     while ((n = read(0, chunk, sizeof chunk)) > 0)
 *             oomdoc_scanner_feed(sc, chunk, n);    (events as they end)
 *     (and when the pipe has been silent a while, as poll() tells:
 *             oomdoc_scanner_flush(sc);             (the events so far))
 *     oomdoc_scanner_finish(sc);                    (the last ones)
 *     oomdoc_scanner_report(sc, rules, stdout, OOMDOC_REPORT_JSON, false);
 *     oomdoc_scanner_free(sc);
 *
 * examples/stream.c is a complete program.
 *
 * Ownership.  Each handle type (oomdoc_scanner, oomdoc_rules) has a _new
 * and a _free, and what a _new returns belongs to the caller.  Everything
 * else a function returns (events, causes, strings) belongs to the handle
 * it came from and lives as long as that handle does, unless its
 * declaration says otherwise.  Pointers handed to a function are borrowed
 * for the duration of the call, unless its declaration says the library
 * keeps them.
 *
 * Threads.  The library keeps no state outside its handles, reads no
 * environment variable and writes to no stream it was not given: two
 * scanners may run in two threads at once.  One handle must not be used by
 * two threads at once.
 *
 * Errors are values: a function that can fail returns false or NULL and
 * fills in an oomdoc_error, with the file, line and column where that
 * makes sense; the library prints nothing.
 *
 * Stability.  Within one OOMDOC_API_VERSION these are stable: the names
 * and signatures declared here and the meaning of what they return; the
 * kind, confidence and figure names (those of the JSON report,
 * oomdoc.report/1); the layout of oomdoc_error; and the fields of
 * oomdoc_options, to which later versions only append (struct_size tells
 * the library which fields the caller knows).  Not stable: the text and
 * Markdown reports (they are for people), which messages are recognised
 * (the list grows), the shipped rules and their scores, and the values of
 * OOMDOC_FIGURE_COUNT and OOMDOC_EVENTS_MAX.
 */
#ifndef OOMDOC_OOMDOC_H
#define OOMDOC_OOMDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this interface; it changes when a stable part does. */
#define OOMDOC_API_VERSION 1

/* The interface version and the release ("0.1.0") of the library that is
 * linked, which may be newer than the header a program was built with. */
int oomdoc_api_version(void);
const char *oomdoc_version(void);

/* A figure the log does not give: never the same thing as 0. */
#define OOMDOC_UNKNOWN ((int64_t)-1)

/* The most distinct events a scanner keeps; the ones beyond are counted
 * (oomdoc_scanner_events_dropped), not kept. */
#define OOMDOC_EVENTS_MAX 500

/* An error and where it is; file is "" and line and col are 0 when there
 * is no place to name. */
typedef struct oomdoc_error {
	char file[256];
	uint64_t line;
	uint64_t col;
	char message[256];
} oomdoc_error;

/*
 * The options of a scanner.  Fill them with oomdoc_options_init, then
 * change what you need; the library reads only the fields that fit in
 * struct_size, so a program built with an older header keeps working.
 */
typedef struct oomdoc_options {
	size_t struct_size;     /* sizeof (oomdoc_options), set by _init */
	/*
	 * Compile the patterns to machine code with PCRE2's JIT (default
	 * true).  Matching is the same without it, only slower; turn it off
	 * to run under valgrind, which cannot see into JIT code.
	 */
	bool jit;
	/* Keep at most this many distinct events, 1 to OOMDOC_EVENTS_MAX
	 * (the default). */
	size_t max_events;
	/*
	 * The rule set whose recognisers the scanner uses (the files with a
	 * "recognisers" key that oomdoc_rules_load read, such as the shipped
	 * recognisers.yaml; RECOGNISERS in oomdoc(1)).  NULL (the default):
	 * none, so that the scanner reads only PyTorch's allocator messages,
	 * which the library knows by itself, and the fallback's
	 * "unrecognised" events; every other stack (CUDA, TensorFlow, the
	 * kernel's OOM killer, ...) comes from these recognisers.  The
	 * scanner keeps the pointer: the rules must not be freed, nor loaded
	 * into, until the scanner is freed.
	 */
	const struct oomdoc_rules *recognisers;
} oomdoc_options;

void oomdoc_options_init(oomdoc_options *opts);

typedef struct oomdoc_scanner oomdoc_scanner;
typedef struct oomdoc_event oomdoc_event;
typedef struct oomdoc_cause oomdoc_cause;
typedef struct oomdoc_rules oomdoc_rules;

/* ------------------------------------------------------------------------
 * The scanner: inputs in, events out.
 *
 * A scanner reads one input after another (the index of each is its place
 * in that order, from 0) and keeps the events of all of them, grouped, in
 * the order in which they first appeared, until oomdoc_scanner_reset or
 * oomdoc_scanner_free.
 */

/* A new scanner; opts NULL means the defaults.  NULL with err filled in
 * when the options are invalid or memory ran out. */
oomdoc_scanner *oomdoc_scanner_new(const oomdoc_options *opts,
    oomdoc_error *err);
void oomdoc_scanner_free(oomdoc_scanner *sc);

/*
 * Called with each event as soon as it is complete: when the text after
 * it can no longer change it (once 32 KiB of text have followed the words
 * that mark the message; for the messages that another part of the stack
 * may report again, such as a kernel OOM kill and the launcher's
 * "Killed", also 20 lines after the message ends), and at the latest by
 * oomdoc_scanner_finish.  The
 * event belongs to the scanner; fn may read it and apply rules to it
 * (oomdoc_rules_apply).  An echo seen after the delivery (the same message
 * again, from another rank or a retry) still adds to its occurrences, and
 * gives it a rank and a timestamp when it had none; when another report of
 * the same failure follows that echo (a log that repeats itself), the
 * event may also take that report's kind and the figures it lacked.  The
 * final values are those of oomdoc_scanner_event after finish.  An event
 * beyond max_events is never delivered.  fn must not call back into this
 * scanner.  arg is handed to fn, untouched; fn NULL stops the calls.
 */
typedef void oomdoc_event_fn(oomdoc_event *ev, void *arg);
void oomdoc_scanner_on_event(oomdoc_scanner *sc, oomdoc_event_fn *fn,
    void *arg);

/*
 * Starts an input named name (a copy is kept; NULL or "-" is shown as
 * "(standard input)" in reports).  Optional: feeding with no input started starts
 * one named "-".  False when an input is already started or when called
 * from the event callback, or with err filled in when memory ran out.
 */
bool oomdoc_scanner_begin(oomdoc_scanner *sc, const char *name,
    oomdoc_error *err);

/*
 * Hands the next len bytes of the input to the scanner.  The bytes are
 * the log's text as it is (decompressed: compressed input is read with
 * oomdoc_scanner_scan_file); a chunk may end anywhere, in the middle of a
 * line or of a UTF-8 sequence.  The scanner copies what it needs, scans
 * what it can and calls the event callback for each event completed.
 * Memory is bounded (a few MiB per scanner) whatever the input's size.
 * False when called from the event callback, or when starting an input
 * failed for want of memory.
 */
bool oomdoc_scanner_feed(oomdoc_scanner *sc, const void *chunk, size_t len);

/*
 * The input paused (a pipe that has been silent a while, as a running
 * job's log is): scans the text up to the end of its last complete line
 * as if the text after it had come, and delivers the events complete
 * then, all but those that the next lines may still join as another
 * report of the same failure (a kill, reported again by a launcher),
 * which wait for their 20 lines or for finish.  No event is delivered
 * twice; a message that its writer split over the pause may be cut there.
 * oomdoc --format jsonl calls it after 500 ms without input.  False when
 * no input is started or when called from the event callback.
 */
bool oomdoc_scanner_flush(oomdoc_scanner *sc);

/* Ends the input: scans what is left and delivers the last events.  False
 * when no input is started, when called from the event callback, or when
 * memory ran out while the input was scanned (an event may be missing). */
bool oomdoc_scanner_finish(oomdoc_scanner *sc);

/*
 * Reads the file at path ("-": standard input) as one input, plain, gzip
 * or zstd (told by its first bytes, never by its name), as begin, feed
 * and finish would.  False with err filled in when it could not be opened
 * or read to the end; the events found up to that point are kept, and the
 * report marks the input incomplete.
 */
bool oomdoc_scanner_scan_file(oomdoc_scanner *sc, const char *path,
    oomdoc_error *err);

/* The events kept so far, in the order in which they first appeared. */
size_t oomdoc_scanner_event_count(const oomdoc_scanner *sc);
/* Event i, or NULL when there is none. */
oomdoc_event *oomdoc_scanner_event(oomdoc_scanner *sc, size_t i);
/* The occurrences of distinct events beyond max_events, not kept. */
uint64_t oomdoc_scanner_events_dropped(const oomdoc_scanner *sc);

/* The inputs read or started: their count, and each one's name, bytes
 * and lines (the counts are final once the input is finished). */
int oomdoc_scanner_input_count(const oomdoc_scanner *sc);
const char *oomdoc_scanner_input_name(const oomdoc_scanner *sc, int i);
uint64_t oomdoc_scanner_input_bytes(const oomdoc_scanner *sc, int i);
uint64_t oomdoc_scanner_input_lines(const oomdoc_scanner *sc, int i);

/* Forgets the events and the inputs (their pointers become invalid), so
 * that a long-running filter can go on within max_events.  False while an
 * input is started (finish it first). */
bool oomdoc_scanner_reset(oomdoc_scanner *sc);

/* ------------------------------------------------------------------------
 * Events.  Unknown numbers are -1 (OOMDOC_UNKNOWN), unknown strings "".
 */

/* The kind's name as in the JSON report ("cuda_caching_allocator",
 * "host_oom_killer", ...) and its title for people ("PyTorch CUDA
 * caching allocator out of memory"). */
const char *oomdoc_event_kind(const oomdoc_event *ev);
const char *oomdoc_event_title(const oomdoc_event *ev);
/* "pytorch", "tensorflow", "linux", ..., or NULL when none is known. */
const char *oomdoc_event_framework(const oomdoc_event *ev);
/* How sure the message makes us that memory ran out: "low", "medium" or
 * "high". */
const char *oomdoc_event_confidence(const oomdoc_event *ev);
/* False for a warning that precedes a failure. */
bool oomdoc_event_fatal(const oomdoc_event *ev);
/* The index of the input it was found in. */
int oomdoc_event_input(const oomdoc_event *ev);
/* The first and last line of the message, from 1, counting '\n' as
 * grep -n does. */
uint64_t oomdoc_event_line(const oomdoc_event *ev);
uint64_t oomdoc_event_end_line(const oomdoc_event *ev);
/* The rank of the first report (-1 without a rank prefix) and the GPU
 * (-1 when not printed). */
int oomdoc_event_rank(const oomdoc_event *ev);
int oomdoc_event_device(const oomdoc_event *ev);
/* The timestamp of the line's prefix, as the log wrote it. */
const char *oomdoc_event_timestamp(const oomdoc_event *ev);
/* The message, verbatim (NUL-terminated; the bytes may be any, not only
 * UTF-8), at most 2048 bytes; *len receives its length when len is not
 * NULL. */
const char *oomdoc_event_message(const oomdoc_event *ev, size_t *len);
/* How often this same message was seen (ranks, retries, echoes). */
uint64_t oomdoc_event_occurrences(const oomdoc_event *ev);
/* 16 hex digits that name the failure across runs, "" before rules were
 * applied to the event. */
const char *oomdoc_event_fingerprint(const oomdoc_event *ev);

/* The memory figures of an event, in bytes.  Values are appended only. */
typedef enum {
	OOMDOC_FIG_REQUESTED,           /* the allocation that failed */
	OOMDOC_FIG_TOTAL,               /* the device's capacity */
	OOMDOC_FIG_FREE,
	OOMDOC_FIG_ALLOCATED,           /* by the framework's tensors */
	OOMDOC_FIG_RESERVED,            /* by the framework's allocator */
	OOMDOC_FIG_RESERVED_UNALLOCATED,
	OOMDOC_FIG_PROCESS_IN_USE,
	OOMDOC_FIG_NON_FRAMEWORK,
	OOMDOC_FIG_ALLOWED,
	OOMDOC_FIG_PRIVATE_POOLS,
	OOMDOC_FIG_PEAK,
	OOMDOC_FIG_HOST_TOTAL_VM,       /* the host side of a kill */
	OOMDOC_FIG_HOST_ANON_RSS,
	OOMDOC_FIG_HOST_FILE_RSS,
	OOMDOC_FIG_HOST_SHMEM_RSS,
	OOMDOC_FIG_HOST_LIMIT,          /* cgroup, Slurm or Ray limit */
	OOMDOC_FIG_HOST_USAGE,          /* usage against that limit */
	OOMDOC_FIGURE_COUNT
} oomdoc_figure;

/* The figure in bytes, or -1 when the log does not give it (or fig is
 * out of range). */
int64_t oomdoc_event_figure(const oomdoc_event *ev, oomdoc_figure fig);
/* Its key in the JSON report ("requested_bytes", ...; the host's are in
 * its "host" object), or NULL out of range. */
const char *oomdoc_figure_name(oomdoc_figure fig);

/* The causes rules found, best first (none before rules were applied).
 * A cause belongs to its event, and lives until the rules are applied to
 * that event again (oomdoc_rules_apply, oomdoc_scanner_report), which
 * replaces its causes, or until the scanner is freed or reset. */
int oomdoc_event_cause_count(const oomdoc_event *ev);
const oomdoc_cause *oomdoc_event_cause(const oomdoc_event *ev, int i);

/* A cause: the id and title of the rule that found it, its score (0 to
 * 1), "low", "medium" or "high", the explanation written for this event,
 * and its fixes' texts. */
const char *oomdoc_cause_rule(const oomdoc_cause *c);
const char *oomdoc_cause_title(const oomdoc_cause *c);
double oomdoc_cause_score(const oomdoc_cause *c);
const char *oomdoc_cause_confidence(const oomdoc_cause *c);
const char *oomdoc_cause_explanation(const oomdoc_cause *c);
int oomdoc_cause_fix_count(const oomdoc_cause *c);
const char *oomdoc_cause_fix_text(const oomdoc_cause *c, int i);

/* ------------------------------------------------------------------------
 * Rules.  Loading reads the files named and nothing else; no rule can run
 * a command or open a file.
 */

oomdoc_rules *oomdoc_rules_new(void);
void oomdoc_rules_free(oomdoc_rules *rules);

/*
 * Loads a rule file, or every *.yaml and *.yml file of a directory in
 * name order; a rule whose id is already loaded replaces the old one.  A
 * file with errors adds no rule.  False when there was an error; the
 * errors of every load so far are read with oomdoc_rules_error.
 */
bool oomdoc_rules_load(oomdoc_rules *rules, const char *path);
/* The same for the text of one file, named name in errors. */
bool oomdoc_rules_load_text(oomdoc_rules *rules, const char *name,
    const char *text, size_t len);

/* The rules loaded. */
int oomdoc_rules_count(const oomdoc_rules *rules);

/* The errors of the loads (at most 64 are kept; the ones beyond are
 * counted by _errors_dropped).  oomdoc_rules_error copies error i into
 * *out, or returns false when there is none. */
int oomdoc_rules_error_count(const oomdoc_rules *rules);
bool oomdoc_rules_error(const oomdoc_rules *rules, int i, oomdoc_error *out);
int oomdoc_rules_errors_dropped(const oomdoc_rules *rules);

/*
 * Gives a fact that the log lacks, as "NAME=VALUE" (batch_size=32,
 * total=80GiB; the names are the facts of oomdoc(1)); it wins over the
 * log's.  False with err filled in for an unknown name, a malformed
 * argument or too many facts.
 */
bool oomdoc_rules_fact(oomdoc_rules *rules, const char *name_value,
    oomdoc_error *err);

/* Finds the causes of ev (replacing, and freeing, any found before) and
 * its fingerprint.  rules NULL finds no cause but the fingerprint. */
void oomdoc_rules_apply(const oomdoc_rules *rules, oomdoc_event *ev);

/* ------------------------------------------------------------------------
 * Reports.
 */

/* The formats of the command's --format (oomdoc(1) has a section on
 * each); later versions only append. */
typedef enum {
	OOMDOC_REPORT_TEXT,
	OOMDOC_REPORT_JSON,             /* oomdoc.report/2, see oomdoc(1) */
	OOMDOC_REPORT_MARKDOWN,
	OOMDOC_REPORT_JSONL,            /* one event object of the JSON
	                                 * report a line (STREAMING) */
	OOMDOC_REPORT_GITHUB,           /* workflow commands (GITHUB
	                                 * ANNOTATIONS) */
	OOMDOC_REPORT_PROMETHEUS,       /* the text exposition format
	                                 * (PROMETHEUS METRICS) */
	OOMDOC_REPORT_HTML              /* one self-contained page (HTML
	                                 * REPORT) */
} oomdoc_report_format;

/*
 * Applies rules (NULL: none) to every event of the scanner, which replaces
 * the causes found before (a cause read earlier is gone), then writes
 * the report of its inputs and events to out in format; color puts
 * terminal colours into the text report.  The text report is that of the
 * command with each message in full and no line wrapped (`oomdoc -v
 * --width 0`).  False when writing failed or memory
 * ran out.
 */
bool oomdoc_scanner_report(oomdoc_scanner *sc, const oomdoc_rules *rules,
    FILE *out, oomdoc_report_format format, bool color);

/*
 * The same report as oomdoc_scanner_report, returned as text rather than
 * written to a stream, for a caller with no FILE * (a binding through
 * ctypes or cffi).  The text is NUL-terminated and *len (when len is not
 * NULL) receives its length without the NUL.  It belongs to the caller,
 * who frees it with oomdoc_free (not free: the library's allocator may not
 * be the caller's).  NULL, and *len 0, when memory ran out or the format
 * is invalid.
 */
char *oomdoc_scanner_report_string(oomdoc_scanner *sc,
    const oomdoc_rules *rules, oomdoc_report_format format, bool color,
    size_t *len);

/*
 * Joins the PyTorch memory snapshot in the file at path (the pickle of
 * torch.cuda.memory._dump_snapshot, or its JSON form; SNAPSHOTS in
 * oomdoc(1), which --snapshot does) to the event of the scanner it
 * belongs to: a fatal event of PyTorch's allocator on the snapshot's
 * device (or one that names none), the last whose request matches the
 * trace's oom entry, else the last one.  Its figures and verdict then go
 * into every report of the scanner, and the rules see them (the
 * snapshot's facts), so join before oomdoc_scanner_report.  Returns the
 * index of that event (oomdoc_scanner_event); -1 when the scanner has no
 * such event (nothing is joined); -2, with err filled in, when the file
 * cannot be read or is not a snapshot, when an input is still open or
 * the call is made from the scanner's event function, or when memory ran
 * out.  A later join to the same event replaces the earlier one.
 */
long oomdoc_scanner_join_snapshot(oomdoc_scanner *sc, const char *path,
    oomdoc_error *err);

/* Frees what oomdoc_scanner_report_string returned; NULL does nothing. */
void oomdoc_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
